//! A read-only query's body as the engine's `SqlSerializer` reads it (jet-bridge 1.12.13,
//! `serializers/sql.py`, `fields/sql_params.py`), decided once into what runs: the query's text
//! and its `:name` values.
//!
//! - **The format, `v`** (an integer field, 1 when absent). From 2 on, the values are
//!   `params_obj`'s, by name, and the rows are at most 100 unless `limit` says otherwise. Below
//!   2 (the first format), each `%s` of the query, wherever it stands, becomes `:param_0`,
//!   `:param_1`, ... in order, and their values are `params`, a text split at each `,` (a list
//!   is joined with `,` first, its nulls left out), each value a string; `params_obj` is
//!   ignored.
//! - **Paging.** `limit` over 1000 is 1000; a negative one is none given; `0` is no limit at
//!   all. `offset` skips rows. The engine writes them after its sub-select of the query
//!   (`SELECT * FROM (<query>) AS __jet_q2 LIMIT n OFFSET m`).
//! - **A forbidden word.** A query whose lower-case text, between spaces, holds `insert`,
//!   `update`, `delete`, `grant` or `show` (or the word after a `(`) is refused, a string's
//!   words included: `400` naming `query`, as the engine answers.
//! - The body's other keys the engine reads (`order_by`, `count`, `filters`, `columns`,
//!   `aggregate`, `group`, `groups`, `timezone`, `schema`, and `queries`, a batch) change its
//!   answer: the emulator does not run them, and refuses such a body naming the key rather than
//!   answer it as if the key were not there.

use serde_json::{Map, Value as Json};

use crate::EngineError;
use crate::python::floats::py_float_repr;
use crate::python::numbers::py_int;

/// The most rows the engine answers when `limit` asks for more.
pub const MAX_LIMIT: u64 = 1000;

/// The rows the engine answers, from format 2 on, when no `limit` is given.
pub const DEFAULT_LIMIT: u64 = 100;

/// The words the engine refuses in a query (`SqlSerializer.validate`).
const FORBIDDEN: [&str; 5] = ["insert", "update", "delete", "grant", "show"];

/// The keys of the body the engine reads and the emulator does not run.
const NOT_RUN: [&str; 10] = [
    "order_by",
    "count",
    "filters",
    "columns",
    "aggregate",
    "group",
    "groups",
    "timezone",
    "schema",
    "queries",
];

/// What a read-only query's body asks to run.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlRequest {
    /// The query as the engine runs it: its first format's `%s` named, and its paging around
    /// it.
    pub query: String,
    /// The `:name` values.
    pub params: Map<String, Json>,
}

/// Reads `body` (a JSON object) as the engine's serializer does; `Err` is the engine's `400`
/// (or the emulator's refusal of what it does not run, or of what the engine fails on).
pub fn read_sql_request(mut body: Map<String, Json>) -> Result<SqlRequest, EngineError> {
    let query = match body.remove("query") {
        Some(Json::String(q)) if !q.trim().is_empty() => q,
        Some(Json::String(_)) => {
            return Err(EngineError::field("query", "This field may not be blank."));
        }
        None | Some(Json::Null) => {
            return Err(EngineError::field("query", "This field is required."));
        }
        Some(_) => return Err(EngineError::field("query", "Not a valid string.")),
    };
    if let Some(key) = NOT_RUN.iter().find(|k| changes_answer(k, body.get(**k))) {
        return Err(EngineError::field(
            *key,
            format!(
                "The emulator does not run a query with {key:?} (the data engine would change \
                 its answer by it): leave it out, or write it in the query's SQL."
            ),
        ));
    }
    let v = integer_field(&body, "v", true)?.unwrap_or(1);
    let limit = integer_field(&body, "limit", true)?;
    let offset = integer_field(&body, "offset", false)?;
    refuse_forbidden(&query)?;
    let (query, params) = if v >= 2 {
        let params = match body.remove("params_obj") {
            None | Some(Json::Null) => Map::new(),
            Some(Json::Object(params)) => params,
            Some(_) => {
                return Err(EngineError::field(
                    "params_obj",
                    "Expected an object of parameter values by name.",
                ));
            }
        };
        (query, params)
    } else {
        first_format(query, body.get("params"))?
    };
    let limit = match limit {
        // Over the cap: the cap; negative: as if none were given.
        Some(n) if n > i128::from(MAX_LIMIT) => Some(i128::from(MAX_LIMIT)),
        Some(n) if n < 0 => None,
        other => other,
    };
    let limit = match (limit, v >= 2) {
        (Some(0), _) | (None, false) => None,
        (Some(n), _) => Some(n),
        (None, true) => Some(i128::from(DEFAULT_LIMIT)),
    };
    Ok(SqlRequest {
        query: paged(&query, limit, offset),
        params,
    })
}

/// Whether `key`'s `value` would change the engine's answer (an empty list, `false` or `null`
/// does not).
fn changes_answer(key: &str, value: Option<&Json>) -> bool {
    match value {
        None | Some(Json::Null) => false,
        Some(Json::Bool(b)) => *b,
        Some(Json::Array(items)) => !items.is_empty(),
        Some(Json::String(s)) if key == "count" => {
            !matches!(s.trim().to_lowercase().as_str(), "" | "false" | "0")
        }
        Some(Json::Number(n)) if key == "count" => n.as_f64() != Some(0.0),
        Some(_) => true,
    }
}

/// An integer field of the engine's serializer: `int()` of the value's text (`true` is 1,
/// `false` 0; a list's items joined with `,`), `None` when absent (or `null`, where `null_fails`
/// is false); `Err` for what is no integer (`400`), or `null` where the engine then fails
/// comparing it (`500`: refused by design).
fn integer_field(
    body: &Map<String, Json>,
    key: &str,
    null_fails: bool,
) -> Result<Option<i128>, EngineError> {
    let text = match body.get(key) {
        None => return Ok(None),
        Some(Json::Null) if !null_fails => return Ok(None),
        Some(Json::Null) => {
            return Err(EngineError::stricter(
                key,
                format!(
                    "{key:?} is null, which the data engine fails on (500): leave it out, or \
                     give an integer."
                ),
            ));
        }
        Some(Json::Bool(b)) => return Ok(Some(i128::from(*b))),
        Some(value) => field_text(value),
    };
    let number = text.as_deref().and_then(py_int);
    let number = number.map(|n| n.parse::<i128>());
    match number {
        Some(Ok(n)) => Ok(Some(n)),
        _ => Err(EngineError::field(key, "not a valid integer")),
    }
}

/// The engine's refusal of a query that holds a forbidden word between spaces.
fn refuse_forbidden(query: &str) -> Result<(), EngineError> {
    let padded = format!(" {} ", query.to_lowercase());
    let found = FORBIDDEN
        .iter()
        .find(|w| padded.contains(&format!(" {w} ")) || padded.contains(&format!(" ({w} ")));
    match found {
        Some(word) => Err(EngineError::field(
            "query",
            format!(
                "forbidden query: the data engine refuses a query in which {word:?} stands \
                 between spaces (or after \"(\"), inside a string too; write it another way \
                 (another spacing, or a parameter for a string's text)."
            ),
        )),
        None => Ok(()),
    }
}

/// The first format's query (each `%s` named `:param_N` in order) and values (`params`, a text
/// split at each `,`, each value a string).
fn first_format(
    query: String,
    params: Option<&Json>,
) -> Result<(String, Map<String, Json>), EngineError> {
    let mut named = String::with_capacity(query.len());
    let mut rest = query.as_str();
    let mut n = 0;
    while let Some(at) = rest.find("%s") {
        named.push_str(&rest[..at]);
        named.push_str(&format!(":param_{n}"));
        n += 1;
        rest = &rest[at + 2..];
    }
    named.push_str(rest);
    let text = match params {
        None | Some(Json::Null) => None,
        Some(value) => Some(field_text(value).ok_or_else(unreadable_params)?),
    };
    let values = text
        .iter()
        .flat_map(|text| text.split(','))
        .enumerate()
        .map(|(i, value)| (format!("param_{i}"), Json::String(value.to_owned())))
        .collect();
    Ok((named, values))
}

/// `params` holding an object, or a list inside its list.
fn unreadable_params() -> EngineError {
    EngineError::stricter(
        "params",
        "params is a text of values separated by \",\" (or a list of them): the data engine \
         reads an object there as its Python text. Give the values as text, or use format 2 \
         (\"v\": 2) with params_obj.",
    )
}

/// A field's value as the engine's fields read it: a scalar's Python `str()`, a list's items'
/// joined with `,` (its nulls left out); `None` for an object, or a list inside a list.
fn field_text(value: &Json) -> Option<String> {
    match value {
        Json::Array(items) => {
            let items = items.iter().filter(|item| !item.is_null());
            let items: Option<Vec<String>> = items.map(python_text).collect();
            Some(items?.join(","))
        }
        scalar => python_text(scalar),
    }
}

/// Python's `str()` of a JSON scalar: `None` for an object or a list.
fn python_text(value: &Json) -> Option<String> {
    match value {
        Json::String(s) => Some(s.clone()),
        Json::Bool(true) => Some("True".to_owned()),
        Json::Bool(false) => Some("False".to_owned()),
        Json::Number(n) if n.is_f64() => n.as_f64().map(py_float_repr),
        Json::Number(n) => Some(n.to_string()),
        Json::Null => Some("None".to_owned()),
        Json::Array(_) | Json::Object(_) => None,
    }
}

/// `query` inside the engine's sub-select with its `LIMIT` and `OFFSET`, where it has either
/// (an offset without a limit takes the greatest limit every database reads).
fn paged(query: &str, limit: Option<i128>, offset: Option<i128>) -> String {
    if limit.is_none() && offset.is_none() {
        return query.to_owned();
    }
    let limit = limit.unwrap_or(i128::from(i64::MAX));
    let mut paged = format!("SELECT * FROM ({query}) AS __jet_q2 LIMIT {limit}");
    if let Some(offset) = offset {
        paged.push_str(&format!(" OFFSET {offset}"));
    }
    paged
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(body: Json) -> Result<SqlRequest, EngineError> {
        read_sql_request(body.as_object().cloned().unwrap_or_default())
    }

    fn field_of(e: &EngineError) -> String {
        match e {
            EngineError::Invalid { fields, .. } => fields.keys().next().cloned().unwrap(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn format_two_reads_params_obj_and_pages_by_100_unless_told() {
        let r = read(json!({"query": "select :a", "v": 2, "params_obj": {"a": 1}})).unwrap();
        assert_eq!(r.query, "SELECT * FROM (select :a) AS __jet_q2 LIMIT 100");
        assert_eq!(r.params, *json!({"a": 1}).as_object().unwrap());
        for (limit, want) in [
            (json!(5), " LIMIT 5"),
            (json!("7"), " LIMIT 7"),
            (json!(5000), " LIMIT 1000"),
            (json!(-3), " LIMIT 100"),
        ] {
            let r = read(json!({"query": "q", "v": "2", "limit": limit})).unwrap();
            assert!(r.query.ends_with(want), "{limit}: {}", r.query);
        }
        let unlimited = read(json!({"query": "q", "v": 3, "limit": 0})).unwrap();
        assert_eq!(unlimited.query, "q");
        let skipped = read(json!({"query": "q", "v": 2, "offset": 4})).unwrap();
        assert!(
            skipped.query.ends_with(" LIMIT 100 OFFSET 4"),
            "{}",
            skipped.query
        );
    }

    #[test]
    fn the_first_format_names_each_percent_s_and_splits_params() {
        let r = read(json!({"query": "select %s, '%s'", "params": "a,b", "params_obj": {"x": 1}}))
            .unwrap();
        assert_eq!(r.query, "select :param_0, ':param_1'");
        assert_eq!(
            r.params,
            *json!({"param_0": "a", "param_1": "b"}).as_object().unwrap()
        );
        let listed = read(json!({"query": "q", "v": 1, "params": [1, null, true, 1.5]})).unwrap();
        let want = json!({"param_0": "1", "param_1": "True", "param_2": "1.5"});
        assert_eq!(listed.params, *want.as_object().unwrap());
        // No `params`: no values, so a named parameter fails when the query runs.
        let none = read(json!({"query": "select :a", "params_obj": {"a": 1}})).unwrap();
        assert!(none.params.is_empty());
        assert_eq!(none.query, "select :a");
        let paged = read(json!({"query": "q", "offset": 2})).unwrap();
        assert_eq!(
            paged.query,
            format!("SELECT * FROM (q) AS __jet_q2 LIMIT {} OFFSET 2", i64::MAX)
        );
    }

    #[test]
    fn forbidden_words_between_spaces_are_refused_as_the_engine_does() {
        for query in [
            "select 'an update here'",
            "SELECT * FROM t WHERE a = 'please SHOW me'",
            "with x as (delete from t) select 1",
        ] {
            let e = read(json!({"query": query})).unwrap_err();
            assert_eq!(field_of(&e), "query", "{query}");
        }
        for query in [
            "select updated from t",
            "select 'update'",
            "select 'show me'",
            "select\tupdate\tx",
        ] {
            assert!(read(json!({"query": query})).is_ok(), "{query}");
        }
    }

    #[test]
    fn keys_the_emulator_does_not_run_are_named_and_others_read_as_the_engine_does() {
        for key in ["order_by", "filters", "aggregate", "timezone", "queries"] {
            let body = json!({"query": "q", key: ["x"]});
            assert_eq!(field_of(&read(body).unwrap_err()), key);
        }
        assert_eq!(
            field_of(&read(json!({"query": "q", "count": true})).unwrap_err()),
            "count"
        );
        for quiet in [
            json!({"count": false}),
            json!({"order_by": []}),
            json!({"count": "0"}),
        ] {
            let mut body = quiet.as_object().cloned().unwrap();
            body.insert("query".into(), json!("q"));
            assert!(read_sql_request(body).is_ok(), "{quiet}");
        }
        assert_eq!(
            field_of(&read(json!({"query": "q", "v": "two"})).unwrap_err()),
            "v"
        );
        assert_eq!(
            field_of(&read(json!({"query": "q", "v": null})).unwrap_err()),
            "v"
        );
        assert_eq!(
            field_of(&read(json!({"query": "q", "limit": 1.5})).unwrap_err()),
            "limit"
        );
        assert_eq!(
            field_of(&read(json!({"query": "q", "limit": null})).unwrap_err()),
            "limit"
        );
        let listed = read(json!({"query": "q", "v": ["2"], "offset": null})).unwrap();
        assert_eq!(listed.query, "SELECT * FROM (q) AS __jet_q2 LIMIT 100");
        assert_eq!(field_of(&read(json!({"query": " "})).unwrap_err()), "query");
        assert_eq!(
            field_of(&read(json!({"query": "q", "params": {}})).unwrap_err()),
            "params"
        );
    }
}
