//! SQL text, pure and synchronous: what every database writes the same way (ANSI SQL), over
//! the engine's rules. A database's own words (its quoting, binds, casts, lookups, date
//! buckets) are its folder's; the flows run the statements.
//!
//! - [`bind`]: the values a statement carries, one type for every database.
//! - [`clause`]: a selection's `WHERE` clause and its bound values, an excluded filter's `NOT`,
//!   a promoted key's `IS NOT NULL`, and the always-false clause of an `_order_by` that selects
//!   nothing.
//! - [`seek`]: the condition that seeks past a page's last row, in a database's NULL order.
//! - [`relation`]: a `_relation` path's nested `IN (SELECT ...)`.
//! - [`lookup`]: one filter's condition, as every database writes the lookups it shares.
//! - [`group`]: the engine's group statement, and SQLAlchemy's text of its query object (for
//!   the engine's message about an unknown aggregate function).
//! - [`user_statement`]: a user's statement (read-only SQL, an action's) with its `:name`s
//!   bound as the engine's database driver writes their values.
//!
//! [`Dialect`] is what a database says in its own words: each item has the ANSI form by
//! default, and a database overrides only what it writes otherwise.

pub mod bind;
pub mod clause;
pub mod group;
pub mod lookup;
pub mod relation;
pub mod seek;
pub mod user_statement;

use crate::dialect::bind::{Bind, Binds};
use crate::dialect::clause::key_is_not_null;
use crate::dialect::lookup::{Cmp, Filter};
use crate::dialect::relation::RelationSql;
use crate::dialect::user_statement::EngineDriver;
use svc_engine::filter::Arg;
use svc_engine::python::json::{PyJson, parse_py_json};
use svc_engine::python::text::py_text;
use svc_engine::relation::Use;
use svc_engine::sql_params::{block_comment_end, line_end, skip_quoted};
use svc_engine::table::{Column, Table};
use svc_engine::time_zone::{TZ_PARAM, tz_of};
use svc_engine::types::{FilterFamily, Search};
use svc_engine::{EngineError, Lookup, Selection};

/// Where what starts at a byte of a statement and holds no `:name` ends ([`Dialect::skip`]).
pub type Skip = fn(&[u8], usize) -> Option<Result<usize, EngineError>>;

/// A database's words in SQL text, pure and synchronous: its quoting and literals, and the SQL
/// of a selection's parts (each lookup's condition, search, a `_relation`'s tables and
/// columns). Each item is written as ANSI SQL by default (the form at least one served
/// database takes as it is); a database overrides what it writes its own way. A value's
/// placeholder is the database's [`Dialect::bind_text`] or `Database::bind`, which add the
/// value to the statement's binds.
pub trait Dialect {
    /// The engine's driver of the database, which writes a user's statement's values
    /// ([`user_statement`]).
    const ENGINE_DRIVER: EngineDriver;

    /// The always-false condition, as SQLAlchemy writes `false()` on the database: `0 = 1`
    /// where the database has no boolean literal the engine's SQLAlchemy uses (PostgreSQL
    /// writes `false`).
    const NEVER: &'static str = "0 = 1";

    /// What a `SELECT` adds to lock the rows it reads until the transaction ends (SQLite,
    /// whose writer holds the database, adds nothing).
    const LOCK: &'static str = " FOR UPDATE";

    /// The statement that begins a transaction (MySQL writes `START TRANSACTION`).
    const BEGIN: &'static str = "BEGIN";

    /// What follows `INSERT INTO table` for a row of nothing but its defaults (MySQL writes
    /// `() VALUES ()`).
    const DEFAULTS_ONLY: &'static str = "DEFAULT VALUES";

    /// The type a column is cast to for its text (`col.cast(Unicode)`: MySQL's `CHAR`).
    const TEXT_TYPE: &'static str = "VARCHAR";

    /// Whether `LIMIT 1` over rows that tie may answer any of them, as the planner chooses
    /// from the table's statistics (a database server's): then which row the engine answers
    /// for a key that several rows share cannot be known, and strict mode refuses the
    /// retrieve (`flow::read::retrieve`). SQLite reads them in an order the emulator
    /// reproduces (docs/contract.md 5.1).
    const PLANNER_PICKS_TIES: bool = true;

    /// The words SQLAlchemy 1.4's dialect quotes in a query's text (its `RESERVED_WORDS`),
    /// lower-case, separated by white space: each database keeps its list in a text file
    /// beside its code.
    const RESERVED_WORDS: &'static str;

    /// The always-false condition as SQLAlchemy writes `false()` in a query's text
    /// (`str(query)`, `group::query_text`); by default as the flows write it (MySQL's text
    /// says `false = 1`).
    const QUERY_NEVER: &'static str = Self::NEVER;

    /// An identifier, quoted (MySQL's backticks).
    fn quote(name: &str) -> String {
        quote_ident(name)
    }

    /// `col` holds `value` already, NULL included (MySQL's `<=>`, SQLite's `IS`).
    fn same_value(col: &str, value: &str) -> String {
        format!("{col} IS NOT DISTINCT FROM {value}")
    }

    /// A JSON column `col` holds what the ORM loads as `None`: NULL, or JSON's `null` (the
    /// text `null` where the column holds its text, as SQLite's does).
    fn loads_none(col: &str) -> String {
        format!("({col} IS NULL OR {col} = 'null')")
    }

    /// `text` matches `pattern` whatever the case of either (PostgreSQL's `ILIKE`).
    fn like_any_case(text: &str, pattern: &str) -> String {
        format!("lower({text}) LIKE lower({pattern})")
    }

    /// `col`'s text: `CAST(col AS <TEXT_TYPE>)`.
    fn text_of(col: &str) -> String {
        format!("CAST({col} AS {})", Self::TEXT_TYPE)
    }

    /// Where what starts at byte `i` of a statement and holds no `:name` ends (a string, a
    /// quoted name, a comment), for a statement's `:name`s (`svc_engine::sql_params::bind_names`);
    /// `None` where nothing is skipped at `i`, `Err` for what the database's text allows and
    /// the binding cannot read. ANSI: `'...'` strings, `"..."` names, `--` and `/* */` comments.
    fn skip(b: &[u8], i: usize) -> Option<Result<usize, EngineError>> {
        Some(Ok(match b[i] {
            q @ (b'\'' | b'"') => skip_quoted(b, i, q, false),
            b'-' if b.get(i + 1) == Some(&b'-') => line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => block_comment_end(b, i),
            _ => return None,
        }))
    }

    /// A table.
    type Model: Table<Column = Self::Field>;
    /// A column.
    type Field: Column;

    /// The SQL of the tables and columns a `_relation` path names.
    const RELATED: RelationSql<Self::Model>;

    /// The column as the selection's conditions write it: by default its quoted name (MySQL
    /// qualifies it with its table).
    fn column(field: &Self::Field) -> &str {
        field.sql()
    }

    /// The engine's `key IS NOT NULL` on a promoted key.
    fn key_present(key: &Self::Field) -> String {
        key_is_not_null(Self::column(key))
    }

    /// `tz`, read before the filters (`svc_engine::time_zone`): `Ok` where the database serves it
    /// for an operation that uses the selection as `use_` says. By default it is refused
    /// ([decision: stricter], docs/contract.md): the engine sets it as its session's time zone,
    /// which stays on its pooled connection for later requests (MySQL's case).
    fn time_zone(selection: &Selection, _use: Use) -> Result<(), EngineError> {
        match tz_of(selection) {
            Some(_) => Err(EngineError::stricter(
                TZ_PARAM,
                "tz on this database: the data engine sets it as the session's time zone, which \
                 stays on its pooled connection (later requests answer in that zone). Convert \
                 date-times in your code instead.",
            )),
            None => Ok(()),
        }
    }

    /// The column is SQLAlchemy's `String` (its `Enum` too): `isempty` matches `''` as well as
    /// NULL. These are the columns `_search` matches by their text ([`Column::search`]) but
    /// JSON's, which SQLAlchemy does not type as a `String`.
    fn is_text(field: &Self::Field) -> bool {
        field.search() == Search::Contains && field.family() != FilterFamily::Json
    }

    /// The placeholder of the `n`th value of a statement (from 1), `value`: by default `?`
    /// (PostgreSQL's is `$n` with the type its driver sends the value as).
    fn placeholder(_n: usize, _value: &Bind) -> String {
        "?".to_owned()
    }

    /// `text` bound as a string, and its placeholder.
    fn bind_text(text: String, params: &mut Binds) -> String {
        params.bind::<Self>(Bind::Text(text))
    }

    /// The column is matched by its text where the engine's `ILIKE` reaches it (a type the
    /// database's `LIKE` does not take); by default, as it is.
    fn likes_as_text(_field: &Self::Field) -> bool {
        false
    }

    /// `col ILIKE pattern`, as the engine's SQLAlchemy writes it on the database.
    fn ilike(field: &Self::Field, pattern: String, params: &mut Binds) -> String {
        if Self::likes_as_text(field) {
            return Self::text_ilike(field, pattern, params);
        }
        let pattern = Self::bind_text(pattern, params);
        Self::like_any_case(Self::column(field), &pattern)
    }

    /// The column's text `ILIKE pattern` (`col.cast(Unicode).ilike(...)`).
    fn text_ilike(field: &Self::Field, pattern: String, params: &mut Binds) -> String {
        let pattern = Self::bind_text(pattern, params);
        Self::like_any_case(&Self::text_of(Self::column(field)), &pattern)
    }

    /// The text inside `%...%` of `icontains`: `'%{}%'.format(value)` of the filter field's
    /// value.
    fn contained(filter: &Filter<'_, Self::Field>, raw: &str) -> Result<String, EngineError>;

    /// The filter's value `raw` read as the column's (an `in` item where `in_list`: the engine
    /// reads some whole), bound: its placeholder.
    fn compared(
        filter: &Filter<'_, Self::Field>,
        raw: &str,
        in_list: bool,
        params: &mut Binds,
    ) -> Result<String, EngineError>;

    /// An `in` item, bound for the column's list.
    fn in_item(
        filter: &Filter<'_, Self::Field>,
        raw: &str,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        Self::compared(filter, raw, true, params)
    }

    /// `col op value` of `exact`, `gt`, `gte`, `lt` and `lte`.
    fn compare(
        filter: &Filter<'_, Self::Field>,
        op: Cmp,
        raw: &str,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        let value = Self::compared(filter, raw, false, params)?;
        Ok(format!(
            "{} {} {value}",
            Self::column(filter.field),
            op.sql()
        ))
    }

    /// A JSON column's `exact`, or one of its `in` items: by default, its text contains the
    /// value's as the engine writes it, `'%{}%'.format(value)` of what its `JSONField` read
    /// (`json.loads` where the text is JSON): `{"a": 1}` looks for `{'a': 1}`, `null` for
    /// `None`, `[1,2]` for `[1, 2]`; other text as it is.
    fn json_match(
        filter: &Filter<'_, Self::Field>,
        raw: &str,
        _in_list: bool,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        let value = parse_py_json(raw).unwrap_or_else(|_| PyJson::Str(raw.to_owned()));
        let text = py_text(&value);
        Ok(Self::text_ilike(filter.field, format!("%{text}%"), params))
    }

    /// One filter's condition (before `exclude__` negation): the database's own cases, then
    /// `lookup_condition`.
    fn condition(
        filter: &Filter<'_, Self::Field>,
        lookup: Lookup,
        arg: Arg<'_>,
        params: &mut Binds,
    ) -> Result<String, EngineError>;

    /// The column's text equals `text` (`_search` of a number column).
    fn text_equals(field: &Self::Field, text: &str, params: &mut Binds) -> String {
        let text = Self::bind_text(text.to_owned(), params);
        format!("{} = {text}", Self::text_of(Self::column(field)))
    }

    /// The `_search` condition over the model's columns, OR-ed in column order, if any column
    /// is searched.
    fn search(model: &Self::Model, text: &str, params: &mut Binds) -> Option<String> {
        let mut parts = Vec::new();
        for f in model.columns() {
            match f.search() {
                Search::Equal => parts.push(Self::text_equals(f, text, params)),
                Search::Contains => parts.push(Self::text_ilike(f, format!("%{text}%"), params)),
                Search::Skip => {}
            }
        }
        (!parts.is_empty()).then(|| format!("({})", parts.join(" OR ")))
    }

    /// A `_relation` path's value, bound for a comparison with `field` (by default, as text).
    fn relation_value(_field: &Self::Field, raw: &str, params: &mut Binds) -> String {
        Self::bind_text(raw.to_owned(), params)
    }

    /// How a row's identity reads the column `col` (bound as `ty`), and the condition that
    /// finds it again as the `n`th value (from 1): by default as it is, at a `?`
    /// (`flow::references::Locator`).
    fn identity_sql(col: &str, _ty: &str, _n: usize) -> (String, String) {
        (col.to_owned(), format!("{col} = ?"))
    }

    /// A binary column (SQLAlchemy's `LargeBinary` and its `BINARY`/`VARBINARY`): its bind
    /// processor takes bytes only, so a value given as text fails in the engine (500). By
    /// default none.
    fn binary(_field: &Self::Field) -> bool {
        false
    }
}

/// Quotes an identifier as ANSI SQL does: `"` + the name with `"` doubled + `"`.
pub fn quote_ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('"');
    for c in name.chars() {
        if c == '"' {
            s.push('"');
        }
        s.push(c);
    }
    s.push('"');
    s
}
