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
//! - **Paging** ([`SqlPaging`]). `limit` over 1000 is 1000; a negative one is none given; `0`
//!   is no limit at all. `offset` skips rows. The engine writes them after its sub-select of
//!   the query, as values its SQLAlchemy names `param_1` and `param_2`: a query's own
//!   parameter of one of those names then fails (the core checks it, knowing the database).
//! - **A forbidden word.** A query whose lower-case text, between spaces, holds `insert`,
//!   `update`, `delete`, `grant` or `show` (or the word after a `(`) is refused, a string's
//!   words included: `400` naming `query`, as the engine answers.
//! - **Order** (`order_by`, a list of the answer's column names, `-` before one for a
//!   descending order): the engine orders its sub-select by each, named as its SQLAlchemy
//!   writes a column (quoted where the database's dialect must); a text is read as the list of
//!   its characters, as the engine's list field iterates it.
//! - The body's other keys the engine reads (`count`, `filters`, `columns`, `aggregate`,
//!   `group`, `groups`, `timezone`, `schema`, and `queries`, a batch) change its answer, or
//!   make it fail: the emulator does not run them, and refuses such a body naming the key
//!   rather than answer it as if the key were not there. What changes nothing passes: an
//!   empty `filters` or `columns`, a false `count`, a `null` `timezone` or `schema`.

use serde_json::{Map, Value as Json};

use crate::EngineError;
use crate::python::json::PyJson;
use crate::python::text::py_text;
use crate::request::python_int_wide;

/// The most rows the engine answers when `limit` asks for more.
pub const MAX_LIMIT: u64 = svc_model::sql::MAX_SQL_LIMIT;

/// The rows the engine answers, from format 2 on, when no `limit` is given.
pub const DEFAULT_LIMIT: u64 = 100;

/// The words the engine refuses in a query (`SqlSerializer.validate`).
const FORBIDDEN: [&str; 5] = ["insert", "update", "delete", "grant", "show"];

/// The keys of the body the engine reads and the emulator does not run.
const NOT_RUN: [&str; 9] = [
    "queries",
    "count",
    "filters",
    "columns",
    "aggregate",
    "group",
    "groups",
    "timezone",
    "schema",
];

/// What a read-only query's body asks to run.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlRequest {
    /// The query: its first format's `%s` named.
    pub query: String,
    /// The `:name` values.
    pub params: Map<String, Json>,
    /// The rows of its answer.
    pub paging: SqlPaging,
    /// The answer's order: column names, each descending where `true`.
    pub order_by: Vec<(String, bool)>,
}

impl SqlRequest {
    /// `query` with `params`, every row of its answer (no paging), in its own order.
    pub fn new(query: impl Into<String>, params: Map<String, Json>) -> Self {
        SqlRequest {
            query: query.into(),
            params,
            paging: SqlPaging::default(),
            order_by: Vec::new(),
        }
    }
}

/// The rows of a query's answer the engine pages out of it: at most `limit` (none: every row)
/// after the first `offset`. Values past 128 bits saturate (a database refuses them alike).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SqlPaging {
    /// The most rows.
    pub limit: Option<i128>,
    /// The rows skipped.
    pub offset: Option<i128>,
}

impl SqlPaging {
    /// The names the engine's SQLAlchemy gives the paging's bound values, which a query's own
    /// parameter may not take: `param_1` for the first written, `param_2` for the second; on
    /// a database whose dialect writes both whenever it pages (`both_always`: SQLite's
    /// `LIMIT ? OFFSET ?`), both.
    pub fn engine_binds(&self, both_always: bool) -> &'static [&'static str] {
        let written = usize::from(self.limit.is_some()) + usize::from(self.offset.is_some());
        match (written, both_always) {
            (0, _) => &[],
            (_, true) | (2, false) => &["param_1", "param_2"],
            (_, false) => &["param_1"],
        }
    }
}

/// Reads `body` (a JSON object) as the engine's serializer does; `Err` is the engine's `400`
/// (or the emulator's refusal of what it does not run, or of what the engine fails on).
pub fn read_sql_request(mut body: Map<String, Json>) -> Result<SqlRequest, EngineError> {
    // A text field: a number's or a list's text is the query, as the engine reads it.
    let query = match body.remove("query") {
        None => return Err(EngineError::field("query", "This field is required.")),
        Some(Json::Null) => {
            return Err(EngineError::stricter(
                "query",
                "The query is null, which the data engine fails on (500): give its text.",
            ));
        }
        Some(Json::String(q)) => q,
        Some(value) => {
            field_text(&value).ok_or_else(|| EngineError::field("query", "Not a valid string."))?
        }
    };
    if query.trim().is_empty() {
        return Err(EngineError::field("query", "This field may not be blank."));
    }
    for key in NOT_RUN {
        let Some(value) = body.get(key) else { continue };
        if let Some(fails) = not_run(key, value) {
            let what = format!(
                "The emulator does not run a query with {key:?}: leave it out, or write it in \
                 the query's SQL"
            );
            return Err(match fails {
                true => EngineError::stricter(
                    key,
                    format!("{what} (as given, the data engine fails on it, 500)."),
                ),
                false => EngineError::field(
                    key,
                    format!("{what} (the data engine would change its answer by it)."),
                ),
            });
        }
    }
    let v = integer_field(&body, "v", true)?.unwrap_or(1);
    let limit = integer_field(&body, "limit", true)?;
    let offset = integer_field(&body, "offset", false)?;
    refuse_forbidden(&query)?;
    let (query, params) = if v >= 2 {
        // A JSON field: a text holding JSON is read as that JSON.
        let params = match body.remove("params_obj") {
            Some(Json::String(text)) => serde_json::from_str(&text).unwrap_or(Json::String(text)),
            Some(other) => other,
            None => Json::Null,
        };
        let params = match params {
            Json::Null => Map::new(),
            Json::Array(items) if items.is_empty() => Map::new(),
            Json::Object(params) => params,
            _ => {
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
        query,
        params,
        paging: SqlPaging { limit, offset },
        order_by: order_by(body.get("order_by"))?,
    })
}

/// The order terms of `order_by`, as the engine's list field reads them: each item's text
/// (a text is the list of its characters), `-` first for a descending order; `Err` where the
/// engine fails (not a list, an item `null`: `500`, refused by design) or reads an item's
/// Python text (a list or an object in the list).
fn order_by(value: Option<&Json>) -> Result<Vec<(String, bool)>, EngineError> {
    let fails = |what: &str| {
        EngineError::stricter(
            "order_by",
            format!(
                "order_by is {what}, which the data engine fails on (500): give a list of the \
                 answer's column names, \"-name\" for a descending order."
            ),
        )
    };
    let items: Vec<String> = match value {
        None => return Ok(Vec::new()),
        Some(Json::String(text)) => text.chars().map(String::from).collect(),
        Some(Json::Array(items)) => items
            .iter()
            .map(|item| match item {
                Json::Null => Err(fails("a list holding null")),
                Json::Array(_) | Json::Object(_) => Err(EngineError::stricter(
                    "order_by",
                    "order_by holds a list or an object, which the data engine reads as its \
                     Python text: give column names.",
                )),
                scalar => Ok(python_text(scalar).unwrap_or_default()),
            })
            .collect::<Result<_, _>>()?,
        Some(Json::Object(_)) => {
            return Err(EngineError::stricter(
                "order_by",
                "order_by is an object, whose keys the data engine would read as column names: \
                 give a list of the answer's column names.",
            ));
        }
        Some(Json::Null) => return Err(fails("null")),
        Some(_) => return Err(fails("no list")),
    };
    Ok(items
        .into_iter()
        .map(|item| match item.strip_prefix('-') {
            Some(name) => (name.to_owned(), true),
            None => (item, false),
        })
        .collect())
}

/// Whether the engine answers a body with `key`'s `value` otherwise than without the key:
/// `None` when it does not (an empty list of order terms, filters or columns, a false `count`,
/// a `null` `timezone` or `schema`), else whether the engine then fails (`Some(true)`: a
/// `null` or `false` where it iterates a list, a `null` or `false` batch) or answers
/// otherwise (`Some(false)`).
fn not_run(key: &str, value: &Json) -> Option<bool> {
    match (key, value) {
        ("count", value) => python_truth(value).then_some(false),
        ("filters" | "columns", Json::Array(items)) if items.is_empty() => None,
        ("filters" | "columns" | "queries", Json::Null | Json::Bool(false)) => Some(true),
        ("timezone" | "schema", Json::Null) => None,
        _ => Some(false),
    }
}

/// Whether the engine's boolean field reads `value` as true: its words (`t`, `yes`, `on`, `1`,
/// ... and their false ones, case as listed), else Python's truth of the value (a list's items
/// joined with `,` first).
fn python_truth(value: &Json) -> bool {
    const TRUE: [&str; 13] = [
        "t", "T", "y", "Y", "yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "1",
    ];
    const FALSE: [&str; 13] = [
        "f", "F", "n", "N", "no", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "0",
    ];
    match value {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Json::String(s) if TRUE.contains(&s.as_str()) => true,
        Json::String(s) if FALSE.contains(&s.as_str()) => false,
        Json::String(s) => !s.is_empty(),
        Json::Array(_) => field_text(value).is_some_and(|t| python_truth(&Json::String(t))),
        Json::Object(o) => !o.is_empty(),
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
    // Python's integers have no bound: past 128 bits the value saturates, which every use
    // here reads alike (a limit over 1000, an offset no database takes).
    let number = text.as_deref().and_then(python_int_wide);
    number
        .map(Some)
        .ok_or_else(|| EngineError::field(key, "not a valid integer"))
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
        Json::Array(_) | Json::Object(_) => None,
        // An integer past 64 bits reaches here as a float (Python's JSON reads it exactly):
        // written as the integer it was.
        Json::Number(n)
            if n.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 1e19) =>
        {
            n.as_f64().map(|f| format!("{f:.0}"))
        }
        scalar => Some(py_text(&PyJson::from(scalar))),
    }
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

    fn paging(limit: Option<i128>, offset: Option<i128>) -> SqlPaging {
        SqlPaging { limit, offset }
    }

    #[test]
    fn format_two_reads_params_obj_and_pages_by_100_unless_told() {
        let r = read(json!({"query": "select :a", "v": 2, "params_obj": {"a": 1}})).unwrap();
        assert_eq!(r.query, "select :a");
        assert_eq!(r.paging, paging(Some(100), None));
        assert_eq!(r.params, *json!({"a": 1}).as_object().unwrap());
        for (limit, want) in [
            (json!(5), 5),
            (json!("7"), 7),
            (json!(5000), 1000),
            (json!(-3), 100),
            (json!(100_000_000_000_000_000_000.0), 1000),
            (json!(format!("1{}", "0".repeat(43))), 1000),
        ] {
            let r = read(json!({"query": "q", "v": "2", "limit": limit})).unwrap();
            assert_eq!(r.paging.limit, Some(want), "{limit}");
        }
        let unlimited = read(json!({"query": "q", "v": 3, "limit": 0})).unwrap();
        assert_eq!(unlimited.paging, SqlPaging::default());
        let skipped = read(json!({"query": "q", "v": 2, "offset": 4})).unwrap();
        assert_eq!(skipped.paging, paging(Some(100), Some(4)));
    }

    #[test]
    fn the_paging_values_take_the_names_sqlalchemy_gives_them() {
        // SQLAlchemy's names for the paging's values: SQLite writes both whenever it pages.
        assert_eq!(paging(Some(1), None).engine_binds(false), ["param_1"]);
        assert_eq!(paging(None, Some(1)).engine_binds(false), ["param_1"]);
        assert_eq!(
            paging(Some(1), Some(1)).engine_binds(false),
            ["param_1", "param_2"]
        );
        assert_eq!(
            paging(Some(1), None).engine_binds(true),
            ["param_1", "param_2"]
        );
        assert!(SqlPaging::default().engine_binds(true).is_empty());
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
        assert_eq!(r.paging, SqlPaging::default());
        let listed = read(json!({"query": "q", "v": 1, "params": [1, null, true, 1.5]})).unwrap();
        let want = json!({"param_0": "1", "param_1": "True", "param_2": "1.5"});
        assert_eq!(listed.params, *want.as_object().unwrap());
        // No `params`: no values, so a named parameter fails when the query runs.
        let none = read(json!({"query": "select :a", "params_obj": {"a": 1}})).unwrap();
        assert!(none.params.is_empty());
        assert_eq!(none.query, "select :a");
        let paged = read(json!({"query": "q", "offset": 2})).unwrap();
        assert_eq!(paged.paging, paging(None, Some(2)));
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
        for (key, value) in [
            ("order_by", json!(null)),
            ("order_by", json!([null])),
            ("order_by", json!(5)),
            ("filters", json!(false)),
            ("aggregate", json!(null)),
            ("group", json!([])),
            ("timezone", json!("+02:00")),
            ("schema", json!("other")),
            ("queries", json!([])),
            ("count", json!(true)),
            ("count", json!(" 0")),
            ("count", json!("fAlse")),
            ("count", json!(2)),
        ] {
            let body = json!({"query": "q", key: value});
            assert_eq!(field_of(&read(body).unwrap_err()), key, "{key}: {value}");
        }
        for (key, value) in [
            ("count", json!(false)),
            ("count", json!("no")),
            ("count", json!("OFF")),
            ("count", json!(["0"])),
            ("count", json!(0.0)),
            ("count", json!(null)),
            ("order_by", json!([])),
            ("filters", json!([])),
            ("timezone", json!(null)),
            ("schema", json!(null)),
        ] {
            let body = json!({"query": "q", key: value});
            assert!(read(body).is_ok(), "{key}: {value}");
        }
        for (body, field) in [
            (json!({"query": "q", "v": "two"}), "v"),
            (json!({"query": "q", "v": null}), "v"),
            (json!({"query": "q", "limit": 1.5}), "limit"),
            (json!({"query": "q", "limit": null}), "limit"),
            (json!({"query": " "}), "query"),
            (json!({"query": "q", "params": {}}), "params"),
            (json!({"query": null}), "query"),
            (
                json!({"query": "q", "v": 2, "params_obj": "[1]"}),
                "params_obj",
            ),
        ] {
            assert_eq!(field_of(&read(body.clone()).unwrap_err()), field, "{body}");
        }
        let joined = read(json!({"query": ["select a", "1 from t"], "v": 2})).unwrap();
        assert_eq!(joined.query, "select a,1 from t");
        let text = read(json!({"query": "q", "v": 2, "params_obj": "{\"a\": 1}"})).unwrap();
        assert_eq!(text.params, *json!({"a": 1}).as_object().unwrap());
        assert!(read(json!({"query": "q", "v": 2, "params_obj": []})).is_ok());
        let ordered = read(json!({"query": "q", "order_by": ["-b", "a", 5]})).unwrap();
        let want = [
            ("b".to_owned(), true),
            ("a".to_owned(), false),
            ("5".to_owned(), false),
        ];
        assert_eq!(ordered.order_by, want);
        let chars = read(json!({"query": "q", "order_by": "-a"})).unwrap();
        assert_eq!(
            chars.order_by,
            [(String::new(), true), ("a".to_owned(), false)]
        );
        let listed = read(json!({"query": "q", "v": ["2"], "offset": null})).unwrap();
        assert_eq!(listed.paging, paging(Some(100), None));
    }
}
