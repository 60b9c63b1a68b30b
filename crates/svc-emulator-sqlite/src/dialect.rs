//! SQLite's words (`svc_emulator_core::dialect`): `IS` for an equality that matches NULLs, no lock clause,
//! and how its statements' text reads (quoted names in `"`, `` ` `` or `[...]`).
//!
//! A list's selection (filters and search) and order as SQLite SQL with bound parameters,
//! as the data engine (SQLAlchemy's SQLite dialect) builds them. The grammar itself (which
//! keys name which lookups, how values are read) is the engine's, in
//! [`svc_engine::filter`]; this file writes each condition in SQLite's SQL.
//!
//! No user text is ever spliced into SQL: field names are checked against the schema and
//! written from it, values are always bound. SQLite compares, matches and orders exactly as the
//! engine's SQL makes it: `lower(col) LIKE lower(?)` for the `i...` lookups (`%` and `_` stay
//! wildcards, case folding is ASCII only), `CAST(col AS VARCHAR) = ?` for a number column in
//! `_search`, `NOT (...)` for `exclude__` (so rows where the column is NULL drop out), and
//! values bound with the Python types the engine binds (floats for number filters,
//! `YYYY-MM-DD HH:MM:SS.ffffff` text for date-times).

use rusqlite::types::Value;

use crate::driver::bind_of;
use crate::records::Sqlite;
use crate::schema::{Field, Model};
use svc_emulator_core::dialect::Dialect;
use svc_emulator_core::dialect::bind::Binds;
use svc_emulator_core::dialect::clause::key_is_not_null;
use svc_emulator_core::dialect::lookup::{Filter, lookup_condition};
use svc_emulator_core::dialect::relation::RelationSql;
use svc_emulator_core::dialect::user_statement::EngineDriver;
use svc_engine::Lookup;
use svc_engine::error::EngineError;
use svc_engine::filter::{Arg, PyNumber};
use svc_engine::list::Selection;
use svc_engine::relation::Use;
use svc_engine::sql_params::{block_comment_end, line_end, skip_quoted};
use svc_engine::types::{FilterFamily, Reflected};

/// A number filter's value bound as the engine binds it: a Python int or float.
fn number_value(n: PyNumber) -> Value {
    match n {
        PyNumber::Int(i) => Value::Integer(i),
        PyNumber::Float(f) => Value::Real(f),
    }
}

/// One filter, as its condition is built.
type Ctx<'a> = Filter<'a, Field>;

fn number(ctx: &Ctx<'_>, raw: &str) -> Result<PyNumber, EngineError> {
    ctx.reader().number(raw)
}

/// A value bound for `exact`, `gt`, `gte`, `lt`, `lte` and each `in` item.
fn compared(ctx: &Ctx<'_>, raw: &str, in_list: bool) -> Result<Value, EngineError> {
    Ok(match ctx.field.kind.ty.filter {
        FilterFamily::Number => number_value(number(ctx, raw)?),
        FilterFamily::Boolean => Value::Integer(i64::from(ctx.boolean(raw)?)),
        // `in` on a date column compares the raw texts; the other lookups the date.
        FilterFamily::Date if in_list => Value::Text(raw.to_owned()),
        FilterFamily::Date => Value::Text(ctx.reader().date_text(raw)?),
        FilterFamily::DateTime => Value::Text(ctx.datetime(raw)?.naive_text()),
        FilterFamily::Text | FilterFamily::Json => Value::Text(raw.to_owned()),
    })
}

/// SQLite's SQL of a selection's parts (`flow::filter`).
impl Dialect for Sqlite<'_> {
    type Model = Model;
    type Field = Field;

    const RESERVED_WORDS: &'static str = include_str!("reserved_words.txt");
    const ENGINE_DRIVER: EngineDriver = EngineDriver::Sqlite3;

    /// The resource's one writer connection is held for the whole flow (`with_writer`), so no
    /// other write can come between the read of the row and its write: a `SELECT` needs no
    /// lock of its own (SQLite has no `FOR UPDATE`).
    const LOCK: &'static str = "";

    /// Rows that share a key are read in the order the emulator reproduces (the index, or
    /// the table's), as the engine's SQLite reads them.
    const PLANNER_PICKS_TIES: bool = false;

    fn same_value(col: &str, value: &str) -> String {
        format!("{col} IS {value}")
    }

    /// Strings, quoted names (in `"`, `` ` `` or `[...]`) and comments.
    fn skip(b: &[u8], i: usize) -> Option<Result<usize, EngineError>> {
        Some(Ok(match b[i] {
            q @ (b'\'' | b'"' | b'`') => skip_quoted(b, i, q, false),
            b'[' => b[i..]
                .iter()
                .position(|c| *c == b']')
                .map_or(b.len(), |n| i + n + 1),
            b'-' if b.get(i + 1) == Some(&b'-') => line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => block_comment_end(b, i),
            _ => return None,
        }))
    }

    const RELATED: RelationSql<Model> = RELATED;

    fn key_present(key: &Field) -> String {
        key_present(key)
    }

    /// A column of no declared type is matched by its text, as the engine does.
    fn likes_as_text(field: &Field) -> bool {
        field.kind.ty.reflected == Reflected::Untyped
    }

    /// `'%{}%'.format(value)` after the engine's field.
    fn contained(ctx: &Ctx<'_>, raw: &str) -> Result<String, EngineError> {
        Ok(match ctx.field.kind.ty.filter {
            FilterFamily::Number => number(ctx, raw)?.text(),
            FilterFamily::DateTime => ctx.datetime(raw)?.python_str(),
            FilterFamily::Boolean
            | FilterFamily::Date
            | FilterFamily::Text
            | FilterFamily::Json => raw.to_owned(),
        })
    }

    fn compared(
        ctx: &Ctx<'_>,
        raw: &str,
        in_list: bool,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        Ok(params.bind::<Self>(bind_of(compared(ctx, raw, in_list)?)))
    }

    /// A `BLOB` column: SQLAlchemy's binary type, which binds no text.
    fn binary(field: &Field) -> bool {
        field.kind.ty.reflected == Reflected::Blob
    }

    /// `tz` changes nothing on SQLite, where the engine sets no time zone.
    fn time_zone(_selection: &Selection, _use: Use) -> Result<(), EngineError> {
        Ok(())
    }

    fn condition(
        ctx: &Ctx<'_>,
        lookup: Lookup,
        arg: Arg<'_>,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        let blob = ctx.field.kind.ty.reflected == Reflected::Blob;
        if blob && !matches!(lookup, Lookup::IsNull | Lookup::IsEmpty) {
            // SQLAlchemy's binary type cannot bind text: the engine fails (500) when the
            // statement runs.
            return Ok(ctx.fails_when_run(format!(
                "Binary field {:?} can only be filtered with isnull and isempty (the data \
                 engine fails on {:?}).",
                ctx.field.name, ctx.key
            )));
        }
        lookup_condition::<Self>(ctx, lookup, arg, params)
    }
}

/// The engine's `key IS NOT NULL` on a promoted key, written as a range where SQLite's
/// affinity makes the two the same, so that the row order of ties matches the engine's.
///
/// **Why:** the order of rows that share every `_order_by` term and the (repeated) promoted key
/// is the order SQLite reads them in, and a list shows the first one of each key. The engine's
/// SQLite (3.40, Python's `sqlite3`) reads `key IS NOT NULL` with a bound `LIMIT` as the range
/// `key > NULL` over an index whose first column is the key (`SEARCH ... (k1>?)`), in index
/// order; the emulator's SQLite (3.5x) scans the table for the same statement, in rowid order.
/// A one-sided range is still read through the index by both. It leaves out exactly the NULLs:
/// SQLite orders NULL < numbers < text < blobs, so every value of a column with numeric affinity
/// (or none) is `>= -9e999` (minus infinity), and every value of a text-affinity column (text
/// or blob) is `>= ''`. A column whose affinity is not certain from its declared type (an empty
/// type: a view's expression may have any) keeps `IS NOT NULL`.
fn key_present(key: &Field) -> String {
    let declared = key.declared_type.to_ascii_uppercase();
    let least = if declared.contains("INT") {
        "-9e999"
    } else if ["CHAR", "CLOB", "TEXT"]
        .iter()
        .any(|t| declared.contains(t))
    {
        "''"
    } else if declared.trim().is_empty() {
        return key_is_not_null(&key.sql);
    } else {
        // REAL, NUMERIC and BLOB affinities: the literal is compared as a number.
        "-9e999"
    };
    format!("{} >= {least}", key.sql)
}

/// The SQL of the tables and columns a `_relation` path names (`dialect::relation`).
const RELATED: RelationSql<Model> = RelationSql {
    table_sql: |m| m.table_sql.clone(),
    column_sql: |f| f.sql.clone(),
    outer_sql: |f| f.sql.clone(),
};
