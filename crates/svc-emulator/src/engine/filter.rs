//! A list's selection (filters and search) and order, turned into SQL with bound parameters. No user text is ever spliced into SQL: field names are checked against the
//! schema and written from it, values are always bound.

use rusqlite::types::Value;

use crate::engine::convert::{expectation, parse_bool, text_to_sql};
use crate::engine::error::EngineError;
use crate::engine::list::Selection;
use crate::engine::schema::{Field, FieldKind, Model};

// The records wire grammar (reserved parameters, page sizes, filter keys, lookups) is
// svc-model's, so the SDK and the emulator read it alike.
pub use svc_model::records::wire::{DEFAULT_PER_PAGE, Lookup, MAX_PER_PAGE};
use svc_model::records::wire::{FilterKeyError, ORDER_BY_PARAM, is_filter_param, parse_filter_key};

/// A `WHERE` clause (empty, or starting with ` WHERE `) and its bound values.
#[derive(Debug, Default)]
pub(crate) struct Where {
    pub sql: String,
    pub params: Vec<Value>,
}

fn bad_param(param: &str, message: String) -> EngineError {
    EngineError::field(param, message)
}

/// Escapes `%`, `_` and `\` for a `LIKE ... ESCAPE '\'` pattern.
fn like_escape(raw: &str) -> String {
    let mut s = String::with_capacity(raw.len() + 2);
    for c in raw.chars() {
        if matches!(c, '%' | '_' | '\\') {
            s.push('\\');
        }
        s.push(c);
    }
    s
}

/// Splits a filter parameter into (negated, field, lookup), checking both against the model
/// (svc-model's [`parse_filter_key`]).
fn parse_key<'m>(model: &'m Model, key: &str) -> Result<(bool, &'m Field, Lookup), EngineError> {
    let parsed = parse_filter_key(key, |name| model.field(name).is_some()).map_err(|e| {
        let message = match e {
            FilterKeyError::UnknownLookup { lookup, .. } => {
                format!("Unknown lookup {lookup:?} in filter {key:?}.")
            }
            FilterKeyError::UnknownField { field, .. } => {
                format!("Unknown field {field:?} in filter {key:?}.")
            }
            other => format!("Invalid filter {key:?}: {other}."),
        };
        bad_param(key, message)
    })?;
    let field = model.field(parsed.field).ok_or_else(|| {
        bad_param(
            key,
            format!("Unknown field {:?} in filter {key:?}.", parsed.field),
        )
    })?;
    Ok((parsed.exclude, field, parsed.lookup))
}

/// Builds one condition. Returns SQL that may evaluate to NULL; negation is applied by the caller.
fn condition(
    key: &str,
    field: &Field,
    lookup: Lookup,
    raw: &str,
    params: &mut Vec<Value>,
) -> Result<String, EngineError> {
    let col = &field.sql;
    let flag = |raw: &str| {
        parse_bool(raw).ok_or_else(|| {
            bad_param(
                key,
                format!("Invalid value {raw:?} for filter {key:?}: expected true or false."),
            )
        })
    };
    match lookup {
        Lookup::IsNull => {
            return Ok(if flag(raw)? {
                format!("{col} IS NULL")
            } else {
                format!("{col} IS NOT NULL")
            });
        }
        Lookup::IsEmpty => {
            return Ok(if flag(raw)? {
                format!("({col} IS NULL OR length({col}) = 0)")
            } else {
                format!("({col} IS NOT NULL AND length({col}) <> 0)")
            });
        }
        _ => {}
    }
    if field.kind == FieldKind::Blob {
        return Err(bad_param(
            key,
            format!(
                "Invalid value {raw:?} for filter {key:?}: {}.",
                expectation(FieldKind::Blob)
            ),
        ));
    }
    let like = |pattern: String, params: &mut Vec<Value>| {
        params.push(Value::Text(pattern));
        format!("{col} LIKE ? ESCAPE '\\'")
    };
    match lookup {
        Lookup::IContains => return Ok(like(format!("%{}%", like_escape(raw)), params)),
        Lookup::IStartsWith => return Ok(like(format!("{}%", like_escape(raw)), params)),
        Lookup::IEndsWith => return Ok(like(format!("%{}", like_escape(raw)), params)),
        _ => {}
    }
    let parse = |v: &str| {
        text_to_sql(field.kind, v).ok_or_else(|| {
            bad_param(
                key,
                format!(
                    "Invalid value {v:?} for filter {key:?} on field {:?}: {}.",
                    field.name,
                    expectation(field.kind)
                ),
            )
        })
    };
    // Dates compare as dates, date-times as instants, whatever their text form.
    let (lhs, rhs) = match field.kind {
        FieldKind::Date => (format!("date({col})"), "?"),
        FieldKind::DateTime => (format!("julianday({col})"), "julianday(?)"),
        _ => (col.clone(), "?"),
    };
    let op = match lookup {
        Lookup::Exact => "=",
        Lookup::Gt => ">",
        Lookup::Gte => ">=",
        Lookup::Lt => "<",
        Lookup::Lte => "<=",
        Lookup::In => {
            let mut sql = format!("{lhs} IN (");
            for (i, part) in raw.split(',').enumerate() {
                params.push(parse(part)?);
                if i > 0 {
                    sql.push_str(", ");
                }
                sql.push_str(rhs);
            }
            sql.push(')');
            return Ok(sql);
        }
        _ => unreachable!("handled above"),
    };
    params.push(parse(raw)?);
    Ok(format!("{lhs} {op} {rhs}"))
}

/// The `_search` condition: case-insensitive substring of text-like fields, equality of numeric
/// fields when the text is a number; OR-ed. `None` when the search text is empty.
fn search(model: &Model, text: &str, params: &mut Vec<Value>) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    let pattern = format!("%{}%", like_escape(text));
    let mut parts = Vec::new();
    for f in &model.fields {
        match f.kind {
            FieldKind::Text | FieldKind::Date | FieldKind::DateTime | FieldKind::Any => {
                params.push(Value::Text(pattern.clone()));
                parts.push(format!("{} LIKE ? ESCAPE '\\'", f.sql));
            }
            k if k.is_numeric() => {
                if let Some(v) = text_to_sql(k, text) {
                    params.push(v);
                    parts.push(format!("{} = ?", f.sql));
                }
            }
            _ => {}
        }
    }
    Some(if parts.is_empty() {
        "0".to_owned()
    } else {
        format!("({})", parts.join(" OR "))
    })
}

/// Whether a query parameter is a filter (svc-model's [`is_filter_param`]): never one of the
/// reserved parameters (`page`, `_per_page`, `_no_pagination`, `_order_by`, `_search`,
/// `draft`), even when the model has a field of that name (it is filtered as `draft__exact`);
/// other `_`-prefixed parameters only when the model has a field of that name.
fn is_filter(model: &Model, key: &str) -> bool {
    is_filter_param(key, |name| model.field(name).is_some())
}

/// Builds the `WHERE` clause of a selection: its filters, then its searches, AND-ed.
pub(crate) fn build_where(model: &Model, selection: &Selection) -> Result<Where, EngineError> {
    let mut conds = Vec::new();
    let mut values = Vec::new();
    for (key, raw) in &selection.filters {
        if !is_filter(model, key) {
            continue;
        }
        let (negated, field, lookup) = parse_key(model, key)?;
        let c = condition(key, field, lookup, raw, &mut values)?;
        conds.push(if negated {
            // A NULL comparison counts as false before negation: NULL rows stay.
            format!("NOT coalesce({c}, 0)")
        } else {
            c
        });
    }
    for text in &selection.search {
        if let Some(c) = search(model, text, &mut values) {
            conds.push(c);
        }
    }
    let sql = if conds.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.join(" AND "))
    };
    Ok(Where {
        sql,
        params: values,
    })
}

/// ` ORDER BY ...` from `_order_by=a,-b` (`None`: the default order), with the primary key
/// descending as the last tie-breaker.
pub(crate) fn order_by(model: &Model, raw: Option<&str>) -> Result<String, EngineError> {
    let raw = raw.unwrap_or("");
    let pk = model.pk_field();
    let mut terms = Vec::new();
    let mut has_pk = false;
    for part in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (desc, name) = match part.strip_prefix('-') {
            Some(n) => (true, n),
            None => (false, part.strip_prefix('+').unwrap_or(part)),
        };
        let f = model.field(name).ok_or_else(|| {
            bad_param(
                ORDER_BY_PARAM,
                format!("Unknown field {name:?} in _order_by."),
            )
        })?;
        if f.name == pk.name {
            if has_pk {
                continue;
            }
            has_pk = true;
        }
        terms.push(format!("{}{}", f.sql, if desc { " DESC" } else { " ASC" }));
    }
    if !has_pk {
        terms.push(format!("{} DESC", pk.sql));
    }
    Ok(format!(" ORDER BY {}", terms.join(", ")))
}
