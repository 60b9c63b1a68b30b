//! A list's selection (filters and search) and order as SQLite SQL with bound parameters,
//! as the data engine (SQLAlchemy's SQLite dialect) builds them. The grammar itself (which
//! keys name which lookups, how values are read) is the engine's, in
//! [`crate::engine::filter`]; this file writes each condition in SQLite's SQL.
//!
//! No user text is ever spliced into SQL: field names are checked against the schema and
//! written from it, values are always bound. SQLite compares, matches and orders exactly as the
//! engine's SQL makes it: `lower(col) LIKE lower(?)` for the `i...` lookups (`%` and `_` stay
//! wildcards, case folding is ASCII only), `CAST(col AS VARCHAR) = ?` for a number column in
//! `_search`, `NOT (...)` for `exclude__` (so rows where the column is NULL drop out), and
//! values bound with the Python types the engine binds (floats for number filters,
//! `YYYY-MM-DD HH:MM:SS.ffffff` text for date-times).

use rusqlite::types::Value;

use crate::engine::Lookup;
use crate::engine::convert::{InputDateTime, stored_datetime};
use crate::engine::error::EngineError;
use crate::engine::filter::{
    self, Arg, PyNumber, ValueReader, key_is_not_null, selection_conditions, where_clause,
};
use crate::engine::list::Selection;
use crate::engine::related::{Dialect, Related, relation_condition};
use crate::engine::schema::{Field, Model};
use crate::engine::table::Table;
use crate::engine::types::{ColumnType, FilterFamily, Reflected, Search};

/// A number filter's value bound as the engine binds it: a Python int or float.
fn number_value(n: PyNumber) -> Value {
    match n {
        PyNumber::Int(i) => Value::Integer(i),
        PyNumber::Float(f) => Value::Real(f),
    }
}

/// A `WHERE` clause and its values, as rusqlite binds them.
pub(crate) type Where = filter::Where<Vec<Value>>;

/// SQLite's always-false condition.
pub(crate) const NEVER: &str = "0 = 1";

/// Everything needed to build one filter's condition.
struct FilterCtx<'a> {
    key: &'a str,
    field: &'a Field,
    lenient: bool,
}

impl FilterCtx<'_> {
    fn reader(&self) -> ValueReader<'_> {
        ValueReader {
            key: self.key,
            family: self.field.ty.filter,
            lenient: self.lenient,
        }
    }

    fn number(&self, raw: &str) -> Result<PyNumber, EngineError> {
        self.reader().number(raw)
    }

    fn boolean(&self, raw: &str) -> Result<bool, EngineError> {
        self.reader().boolean(raw)
    }

    fn datetime(&self, raw: &str) -> Result<InputDateTime, EngineError> {
        self.reader().datetime(raw)
    }

    /// A value bound for `exact`, `gt`, `gte`, `lt`, `lte` and each `in` item.
    fn compared(&self, raw: &str, in_list: bool) -> Result<Value, EngineError> {
        Ok(match self.field.ty.filter {
            FilterFamily::Number => number_value(self.number(raw)?),
            FilterFamily::Boolean => Value::Integer(i64::from(self.boolean(raw)?)),
            // `in` on a date column compares the raw texts; the other lookups the date.
            FilterFamily::Date if in_list => Value::Text(raw.to_owned()),
            FilterFamily::Date => Value::Text(self.datetime(raw)?.date.iso()),
            FilterFamily::DateTime => Value::Text(stored_datetime(&self.datetime(raw)?)),
            FilterFamily::Text | FilterFamily::Json => Value::Text(raw.to_owned()),
        })
    }

    /// The `%...%` text of `icontains`: `'%{}%'.format(value)` after the engine's field.
    fn contained(&self, raw: &str) -> Result<String, EngineError> {
        Ok(match self.field.ty.filter {
            FilterFamily::Number => self.number(raw)?.text(),
            FilterFamily::DateTime => self.datetime(raw)?.python_str(),
            FilterFamily::Boolean
            | FilterFamily::Date
            | FilterFamily::Text
            | FilterFamily::Json => raw.to_owned(),
        })
    }
}

/// `col.ilike(pattern)` as SQLAlchemy writes it for SQLite; untyped columns are cast first.
fn ilike(ty: ColumnType, col: &str, pattern: String, params: &mut Vec<Value>) -> String {
    params.push(Value::Text(pattern));
    if ty.reflected == Reflected::Untyped {
        format!("lower(CAST({col} AS VARCHAR)) LIKE lower(?)")
    } else {
        format!("lower({col}) LIKE lower(?)")
    }
}

/// One filter's SQL condition (before `exclude__` negation).
fn condition(
    ctx: &FilterCtx<'_>,
    lookup: Lookup,
    arg: Arg<'_>,
    params: &mut Vec<Value>,
) -> Result<String, EngineError> {
    let col = &ctx.field.sql;
    let ty = ctx.field.ty;
    if ty.reflected == Reflected::Blob && !matches!(lookup, Lookup::IsNull | Lookup::IsEmpty) {
        // SQLAlchemy's binary type cannot bind text: the engine fails (500).
        return Err(EngineError::engine_fails(
            ctx.lenient,
            ctx.key,
            format!(
                "Binary field {:?} can only be filtered with isnull and isempty (the data engine \
                 fails on {:?}).",
                ctx.field.name, ctx.key
            ),
        ));
    }
    if ty.filter == FilterFamily::Json
        && matches!(lookup, Lookup::Exact | Lookup::In | Lookup::JsonIContains)
    {
        // On SQLite the engine's `safe_equals`, `safe_in` and `json_icontains` of a JSON
        // column are all `col.cast(Unicode).ilike('%value%')` (OR-ed for `in`): the stored
        // text contains the value, ASCII case folded, `%` and `_` wildcards.
        let items = match lookup {
            Lookup::In => arg.items(),
            _ => vec![arg.first()],
        };
        let parts: Vec<String> = items
            .into_iter()
            .map(|item| {
                params.push(Value::Text(format!("%{item}%")));
                format!("lower(CAST({col} AS VARCHAR)) LIKE lower(?)")
            })
            .collect();
        return Ok(format!("({})", parts.join(" OR ")));
    }
    let op = match lookup {
        Lookup::IsNull => {
            let null = ctx.boolean(arg.first())?;
            return Ok(format!("{col} IS {}NULL", if null { "" } else { "NOT " }));
        }
        Lookup::IsEmpty => {
            let empty = ctx.boolean(arg.first())?;
            return Ok(match (ty.is_string(), empty) {
                (true, true) => format!("({col} IS NULL OR {col} = '')"),
                (true, false) => format!("({col} IS NOT NULL AND {col} != '')"),
                (false, true) => format!("{col} IS NULL"),
                (false, false) => format!("{col} IS NOT NULL"),
            });
        }
        Lookup::IContains => {
            let text = ctx.contained(arg.first())?;
            return Ok(ilike(ty, col, format!("%{text}%"), params));
        }
        Lookup::IStartsWith => return Ok(ilike(ty, col, format!("{}%", arg.first()), params)),
        Lookup::IEndsWith => return Ok(ilike(ty, col, format!("%{}", arg.first()), params)),
        Lookup::In => {
            let mut sql = format!("{col} IN (");
            for (i, item) in arg.items().into_iter().enumerate() {
                params.push(ctx.compared(item, true)?);
                sql.push_str(if i == 0 { "?" } else { ", ?" });
            }
            sql.push(')');
            return Ok(sql);
        }
        Lookup::Exact => "=",
        Lookup::Gt => ">",
        Lookup::Gte => ">=",
        Lookup::Lt => "<",
        Lookup::Lte => "<=",
        _ => {
            return Err(EngineError::field(
                ctx.key,
                format!("Unsupported lookup in filter {:?}.", ctx.key),
            ));
        }
    };
    params.push(ctx.compared(arg.first(), false)?);
    Ok(format!("{col} {op} ?"))
}

/// The `_search` condition: number columns whose text equals the search text, text columns
/// whose text contains it; OR-ed, in field order. `None` when nothing is searched.
fn search(model: &Model, text: &str, params: &mut Vec<Value>) -> Option<String> {
    let mut parts = Vec::new();
    for f in &model.fields {
        match f.ty.search {
            Search::Equal => {
                params.push(Value::Text(text.to_owned()));
                parts.push(format!("CAST({} AS VARCHAR) = ?", f.sql));
            }
            Search::Contains => {
                params.push(Value::Text(format!("%{text}%")));
                parts.push(format!("lower(CAST({} AS VARCHAR)) LIKE lower(?)", f.sql));
            }
            Search::Skip => {}
        }
    }
    (!parts.is_empty()).then(|| format!("({})", parts.join(" OR ")))
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

/// The SQL of the tables and columns a `_relation` path names (`engine::related`).
const RELATED: Dialect<Model> = Dialect {
    table_sql: |m| m.table_sql.clone(),
    column_sql: |f| f.sql.clone(),
    outer_sql: |f| f.sql.clone(),
};

/// Builds the `WHERE` clause of a selection as the engine does: the filters
/// ([`selection_conditions`]), then the search. All AND-ed.
pub(crate) fn build_where(
    model: &Model,
    selection: &Selection,
    related: &Related<'_, Model>,
) -> Result<Where, EngineError> {
    let mut params = Vec::new();
    let fields = model.filter_fields();
    let conds = selection_conditions(
        &model.name,
        &fields,
        selection,
        model.promoted_key.then(|| key_present(model.pk_field())),
        &mut params,
        |params, index, key, lookup, arg| {
            let ctx = FilterCtx {
                key,
                field: &model.fields[index],
                lenient: selection.lenient,
            };
            condition(&ctx, lookup, arg, params)
        },
        |params, text| search(model, text, params),
        |params, path| {
            relation_condition(
                model,
                path,
                related,
                selection.lenient,
                &RELATED,
                |_, raw| {
                    params.push(Value::Text(raw.to_owned()));
                    "?".to_owned()
                },
            )
        },
    )?;
    Ok(Where {
        sql: where_clause(&conds),
        params,
    })
}

/// The order of a list: its ` ORDER BY ...` clause and the fields it sorts by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Order {
    /// ` ORDER BY ...`, with a leading space.
    pub sql: String,
    /// `(index in Model::fields, descending)` of every term, in order. The primary key is
    /// always among them.
    pub terms: Vec<(usize, bool)>,
}

/// The order of `_order_by=a,-b` as the engine reads it: the value split on commas, each part a
/// field name with an optional `-`, then the primary key descending unless it is already there.
/// An unknown name, an empty part or a repeated `_order_by` make the engine fail (500): the
/// emulator answers 400 `[decision: stricter]`.
pub(crate) fn order_by(model: &Model, raw: &[String], lenient: bool) -> Result<Order, EngineError> {
    let terms = model.order_terms(raw, lenient)?;
    let sql_terms: Vec<String> = terms
        .iter()
        .map(|&(i, desc)| format!("{}{}", model.fields[i].sql, if desc { " DESC" } else { "" }))
        .collect();
    Ok(Order {
        sql: format!(" ORDER BY {}", sql_terms.join(", ")),
        terms,
    })
}
