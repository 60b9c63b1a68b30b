//! A user's statement (a read-only query, an action's) with its `:name`s bound, as the
//! engine's database driver (a Python DB-API module) writes their values: one text and the
//! core's [`Binds`] for every database, which its driver sends as it sends any statement's.
//!
//! The engine's drivers differ, and each database names its own ([`EngineDriver`]):
//! - psycopg2 and PyMySQL write each value into the text, as a literal: a `:name` inside a
//!   string would change the string (refused by design, `svc_engine::sql_params`); a list is
//!   written out, item by item (psycopg2's `ARRAY[1, 2]`, PyMySQL's `(1, 2)`, which `IN :ids`
//!   takes). Here each item is a parameter of its own, typed as its literal would be, so that
//!   the database reads the same values and types.
//! - Python's `sqlite3` binds each value by position (SQLAlchemy's `?`, wherever a `:name`
//!   stands, strings included); it cannot bind a list.
//!
//! None of them writes an object (a `dict`): psycopg2 cannot adapt it, PyMySQL and `sqlite3`
//! fail on it. An action's inputs are not the engine's: a list or an object is bound as its JSON
//! text there, as it always was.

use serde_json::{Map, Value as Json};

use crate::dialect::bind::{Bind, Binds};
use crate::dialect::group::Quoting;
use crate::dialect::{Dialect, Skip};
use svc_engine::EngineError;
use svc_engine::sql_answer::query_error;
use svc_engine::sql_params::{self, Reading};
use svc_engine::sql_request::{SqlPaging, SqlRequest};

/// The engine's driver of a database: how it writes a statement's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineDriver {
    /// psycopg2 (PostgreSQL): literals in the text; a list is `ARRAY[...]` (an empty one the
    /// text `'{}'`); `$n` placeholders.
    Psycopg2,
    /// PyMySQL (MySQL, MariaDB): literals in the text, a boolean as `1` or `0`; a list is
    /// `(...)`; `?` placeholders.
    PyMySql,
    /// Python's `sqlite3`: values bound by position (`?`), a boolean as `1` or `0`; no list,
    /// no integer past 64 bits.
    Sqlite3,
}

/// A user's statement with its values: its text holds the database's placeholders.
#[derive(Debug, Clone, PartialEq)]
pub struct UserStatement {
    /// The text, each `:name` replaced by its placeholders.
    pub text: String,
    /// The values, in the order of the placeholders.
    pub binds: Binds,
    /// What the statement is, which says how it runs ([`Driver::run_user`]): a read-only
    /// query ([`Reading::Engine`]) inside the engine's sub-select, its answer checked for size
    /// as it is read; an action's statement ([`Reading::Action`]) as it is.
    ///
    /// [`Driver::run_user`]: crate::flow::driver::Driver::run_user
    pub reading: Reading,
}

/// `query` with each `:name` bound to `params[name]`, read as `reading` says: its text, with the
/// database's placeholders, and its values ([`EngineDriver`]).
pub fn bind_user_statement<D: Dialect + ?Sized>(
    query: &str,
    params: &Map<String, Json>,
    reading: Reading,
) -> Result<UserStatement, EngineError> {
    let (text, binds) = bind_as(D::ENGINE_DRIVER, D::skip, query, params, reading)?;
    Ok(UserStatement {
        text,
        binds,
        reading,
    })
}

/// A read-only query as the engine runs it (`svc_engine::sql_request`): where the request
/// orders or pages its answer, inside the engine's sub-select, with its `ORDER BY` (each column
/// named as `quoting`, the database's SQLAlchemy dialect, writes a name) then its `LIMIT` and
/// `OFFSET`, each on a line of its own as SQLAlchemy writes them (a comment at the query's end
/// stops at its line; an offset without a limit takes the greatest limit every database reads).
pub fn engine_query(request: &SqlRequest, quoting: Quoting) -> String {
    let SqlPaging { limit, offset } = request.paging;
    if limit.is_none() && offset.is_none() && request.order_by.is_empty() {
        return request.query.clone();
    }
    let mut sql = format!("SELECT * \nFROM ({}) AS __jet_q2", request.query);
    if !request.order_by.is_empty() {
        let terms: Vec<String> = request
            .order_by
            .iter()
            .map(|(name, desc)| match desc {
                true => format!("{} DESC", quoting.ident(name)),
                false => quoting.ident(name),
            })
            .collect();
        sql.push_str(&format!(" ORDER BY {}", terms.join(", ")));
    }
    if limit.is_some() || offset.is_some() {
        let limit = limit.unwrap_or(i128::from(i64::MAX));
        sql.push_str(&format!("\n LIMIT {limit}"));
    }
    if let Some(offset) = offset {
        sql.push_str(&format!(" OFFSET {offset}"));
    }
    sql
}

/// [`bind_user_statement`] for `driver`, whose database's text `skip` reads.
fn bind_as(
    driver: EngineDriver,
    skip: Skip,
    query: &str,
    params: &Map<String, Json>,
    reading: Reading,
) -> Result<(String, Binds), EngineError> {
    let bind = |name: &str, value: &Json, values: &mut Vec<Bind>| {
        bind_value(driver, reading, name, value, values)
    };
    let (text, values) = match (driver, reading) {
        // SQLAlchemy's `text()` compiled for pysqlite: a `?` wherever a `:name` stands, each
        // value by position; the database counts the `?`s it reads (a string's are text).
        (EngineDriver::Sqlite3, Reading::Engine) => {
            sql_params::bind_everywhere(query, params, bind)?
        }
        _ => sql_params::bind_names(query, params, reading, skip, bind)?,
    };
    Ok((text, Binds(values)))
}

/// Binds `value` of `:name`, as `driver` writes it: the text that takes the name's place.
fn bind_value(
    driver: EngineDriver,
    reading: Reading,
    name: &str,
    value: &Json,
    values: &mut Vec<Bind>,
) -> Result<String, EngineError> {
    let bind = match value {
        Json::Array(_) | Json::Object(_) if reading == Reading::Action => {
            Bind::Text(value.to_string())
        }
        Json::Object(_) => return Err(unwritable(driver, name, "an object")),
        Json::Array(items) => {
            return match driver {
                EngineDriver::Sqlite3 => Err(unwritable(driver, name, "a list")),
                EngineDriver::Psycopg2 => psycopg2_list(
                    items,
                    json_item,
                    values,
                    &mut |item, values| bind_value(driver, reading, name, item, values),
                    &mut |text, values| placeholder(driver, values, Bind::Text(text)),
                ),
                EngineDriver::PyMySql => {
                    let mut text = String::from("(");
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            text.push_str(", ");
                        }
                        text.push_str(&bind_value(driver, reading, name, item, values)?);
                    }
                    text.push(')');
                    Ok(text)
                }
            };
        }
        Json::Null => Bind::Null,
        Json::Bool(b) if driver == EngineDriver::Psycopg2 => Bind::Bool(*b),
        Json::Bool(b) => Bind::Int(i64::from(*b)),
        Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Bind::Int(i),
            (_, Some(_), _) if driver == EngineDriver::Sqlite3 => {
                return Err(unwritable(driver, name, "an integer beyond 64 bits"));
            }
            (_, Some(u), _) => Bind::UInt(u),
            (_, _, Some(f)) => Bind::Float(f),
            _ => Bind::Text(n.to_string()),
        },
        Json::String(s) => Bind::Text(s.clone()),
    };
    Ok(placeholder(driver, values, bind))
}

/// What psycopg2's list rule ([`psycopg2_list`]) sees in an item.
#[derive(Debug)]
pub enum ListItem<'a, T> {
    /// `None`.
    Null,
    /// A list.
    List(&'a [T]),
    /// Any other value.
    Value,
}

/// A list as psycopg2 writes it (its `list_quote`), the one rule for a read-only query's list
/// parameter and a PostgreSQL filter's list: `ARRAY[...]` of its items, each as `item` writes
/// it (`kind` tells a list, a `None` and a value apart); an empty list is the text `{}` and one
/// of nothing but NULLs (or of such lists) the text `{NULL,...}`, which the `ARRAY`
/// constructor could not type, each as `text` writes a text (a quoted literal, or a bound
/// value); an empty list inside another is `ARRAY[]`. `state` is what `item` and `text` write
/// to (a statement's values).
pub fn psycopg2_list<T, S>(
    items: &[T],
    kind: fn(&T) -> ListItem<'_, T>,
    state: &mut S,
    item: &mut impl FnMut(&T, &mut S) -> Result<String, EngineError>,
    text: &mut impl FnMut(String, &mut S) -> String,
) -> Result<String, EngineError> {
    if items.is_empty() {
        return Ok(text("{}".to_owned(), state));
    }
    if let Some(nulls) = nulls_text(items, kind) {
        return Ok(text(nulls, state));
    }
    let mut out = String::from("ARRAY[");
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match kind(it) {
            ListItem::List([]) => out.push_str("ARRAY[]"),
            ListItem::List(inner) => {
                out.push_str(&psycopg2_list(inner, kind, state, item, text)?);
            }
            ListItem::Null | ListItem::Value => out.push_str(&item(it, state)?),
        }
    }
    out.push(']');
    Ok(out)
}

/// psycopg2's text of a list of nothing but NULLs and such lists (`{NULL,{NULL}}`); `None` for
/// any other list.
fn nulls_text<T>(items: &[T], kind: fn(&T) -> ListItem<'_, T>) -> Option<String> {
    let mut parts = Vec::with_capacity(items.len());
    for item in items {
        parts.push(match kind(item) {
            ListItem::Null => "NULL".to_owned(),
            ListItem::List(inner) if !inner.is_empty() => nulls_text(inner, kind)?,
            _ => return None,
        });
    }
    Some(format!("{{{}}}", parts.join(",")))
}

/// A JSON value as [`psycopg2_list`] sees it.
fn json_item(item: &Json) -> ListItem<'_, Json> {
    match item {
        Json::Null => ListItem::Null,
        Json::Array(inner) => ListItem::List(inner),
        _ => ListItem::Value,
    }
}

/// Binds `value`: its placeholder as `driver`'s database writes it.
fn placeholder(driver: EngineDriver, values: &mut Vec<Bind>, value: Bind) -> String {
    values.push(value);
    match driver {
        EngineDriver::Psycopg2 => format!("${}", values.len()),
        EngineDriver::PyMySql | EngineDriver::Sqlite3 => "?".to_owned(),
    }
}

/// The engine's failure to write `what`, the value of `:name`: its driver's error, the query's.
fn unwritable(driver: EngineDriver, name: &str, what: &str) -> EngineError {
    let (module, fix) = match driver {
        EngineDriver::Psycopg2 => ("psycopg2", "a list is an ARRAY"),
        EngineDriver::PyMySql => ("PyMySQL", "a list is written (1, 2), for IN :name"),
        EngineDriver::Sqlite3 => (
            "sqlite3",
            "for SQLite's JSON functions, give the JSON text as a string",
        ),
    };
    query_error(format!(
        "The parameter :{name} is {what}, which the data engine's driver ({module}) cannot \
         write: give a number, text, a boolean or null ({fix})."
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_ordered_or_paged_query_runs_inside_the_engines_sub_select_on_lines_of_its_own() {
        use super::*;
        let request = |limit, offset, order_by: &[(&str, bool)]| SqlRequest {
            paging: SqlPaging { limit, offset },
            order_by: order_by
                .iter()
                .map(|(n, d)| ((*n).to_owned(), *d))
                .collect(),
            ..SqlRequest::new("select 1 -- c", Map::new())
        };
        let quoting = Quoting {
            quote: '"',
            reserved: "order",
        };
        let query = |r: &SqlRequest| engine_query(r, quoting);
        assert_eq!(query(&request(None, None, &[])), "select 1 -- c");
        assert_eq!(
            query(&request(Some(5), Some(2), &[])),
            "SELECT * \nFROM (select 1 -- c) AS __jet_q2\n LIMIT 5 OFFSET 2"
        );
        assert_eq!(
            query(&request(
                None,
                None,
                &[("a", false), ("B", true), ("order", false)]
            )),
            "SELECT * \nFROM (select 1 -- c) AS __jet_q2 ORDER BY a, \"B\" DESC, \"order\""
        );
        let offset_only = query(&request(None, Some(3), &[]));
        assert!(offset_only.ends_with(&format!(" LIMIT {} OFFSET 3", i64::MAX)));
    }

    use super::*;
    use serde_json::json;

    fn bound(
        driver: EngineDriver,
        reading: Reading,
        query: &str,
        params: Json,
    ) -> Result<(String, Vec<Bind>), EngineError> {
        let params = params.as_object().cloned().unwrap_or_default();
        let (text, values) = bind_as(driver, |_, _| None, query, &params, reading)?;
        Ok((text, values.0))
    }

    #[test]
    fn lists_are_written_out_as_the_engines_driver_writes_them() {
        let ids = json!({"ids": [1, "a", null, true], "e": []});
        let (text, values) = bound(
            EngineDriver::Psycopg2,
            Reading::Engine,
            "SELECT :ids, :e",
            ids.clone(),
        )
        .unwrap();
        assert_eq!(text, "SELECT ARRAY[$1,$2,$3,$4], $5");
        assert_eq!(
            values,
            [
                Bind::Int(1),
                Bind::Text("a".into()),
                Bind::Null,
                Bind::Bool(true),
                Bind::Text("{}".into())
            ]
        );
        let (text, values) =
            bound(EngineDriver::PyMySql, Reading::Engine, "x IN :ids", ids).unwrap();
        assert_eq!(text, "x IN (?, ?, ?, ?)");
        assert_eq!(values[3], Bind::Int(1));
        let nested = json!({"m": [[1, 2], [], [null]], "n": [null, [null]]});
        let (text, values) =
            bound(EngineDriver::Psycopg2, Reading::Engine, ":m, :n", nested).unwrap();
        assert_eq!(text, "ARRAY[ARRAY[$1,$2],ARRAY[],$3], $4");
        assert_eq!(values[2], Bind::Text("{NULL}".into()));
        assert_eq!(values[3], Bind::Text("{NULL,{NULL}}".into()));
    }

    #[test]
    fn what_no_engine_driver_writes_is_refused() {
        let object = json!({"o": {"a": 1}});
        for driver in [
            EngineDriver::Psycopg2,
            EngineDriver::PyMySql,
            EngineDriver::Sqlite3,
        ] {
            let refused = bound(driver, Reading::Engine, "SELECT :o", object.clone());
            assert!(refused.unwrap_err().to_string().contains("an object"));
        }
        let sqlite = |params| bound(EngineDriver::Sqlite3, Reading::Engine, "SELECT :v", params);
        assert!(sqlite(json!({"v": [1]})).is_err());
        assert!(sqlite(json!({"v": u64::MAX})).is_err());
        assert_eq!(
            sqlite(json!({"v": true})).unwrap(),
            ("SELECT ?".to_owned(), vec![Bind::Int(1)])
        );
        // An action's inputs: a list or an object is its JSON text.
        let action = bound(
            EngineDriver::Sqlite3,
            Reading::Action,
            "SELECT :v",
            json!({"v": {"a": [1]}}),
        );
        assert_eq!(
            action.unwrap(),
            (
                "SELECT ?".to_owned(),
                vec![Bind::Text("{\"a\":[1]}".into())]
            )
        );
    }
}
