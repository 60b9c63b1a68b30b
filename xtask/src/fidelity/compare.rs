//! Whether two answers agree, and if not, each difference with a short, stable class name.
//!
//! Rules:
//! - statuses first. Both 2xx and equal: the bodies are compared. Both non-2xx: equal when the
//!   statuses are (the engine's 403/404/500 pages are HTML, the emulator's JSON; 4xx bodies
//!   are not compared). An engine 5xx against an emulator 4xx is "stricter refusal (engine
//!   5xx)". An emulator 500 agrees with an engine 5xx only when it is the emulator's
//!   deliberate lenient-mode failure (`error_code` `engine_failure`); any other emulator 5xx is
//!   "emulator 5xx".
//! - bodies: the engine's extra envelope keys (`num_pages`, `per_page`, `has_more`,
//!   `data_query_time`, `count_query_time`) are dropped; `next`/`previous` compare as null-ness
//!   and the exact text of their query (scheme, host and path ignored; the order of the pairs
//!   and their encoding count, as the engine sorts them and writes a space as `+`); key order
//!   never matters, JSON types do (`"3.0"` vs `3.0` is a "value type" difference, `3` vs `3.0`
//!   a "number form" one).
//!
//! A class reads `{kind}: {what}`, e.g. `list: count`, `list: value type of field people.born`,
//! `group: value of y_func`, `create: status 201 vs 400`. One request may show several classes
//! (each at most once, with the first instance as its detail).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::requests::{Op, Request};
use crate::http::Response;

/// The engine's keys beyond the shared envelope `count, next, previous, results`.
const ENGINE_EXTRA_KEYS: &[&str] = &[
    "num_pages",
    "per_page",
    "has_more",
    "data_query_time",
    "count_query_time",
];

/// One difference: its class and a short description of the first instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub class: String,
    pub detail: String,
}

/// The differences between the engine's and the emulator's answers to `request`.
pub fn compare(request: &Request, engine: &Response, emulator: &Response) -> Vec<Difference> {
    let mut out = Diffs {
        op: request.op.name(),
        list: Vec::new(),
    };
    let (e, m) = (engine.status, emulator.status);
    let ok = |s: u16| (200..300).contains(&s);
    let bodies = || format!("{} vs {}", short(&engine.text()), short(&emulator.text()));
    let engine_failure = m == 500 && emulator.text().contains("\"engine_failure\"");
    if e >= 500 && engine_failure {
        // Agreement: lenient mode fails where the engine fails.
    } else if m >= 500 {
        out.add(format!("emulator {m}"), format!("engine {e}: {}", bodies()));
    } else if ok(e) && ok(m) && e == m {
        out.bodies(request, engine, emulator);
    } else if !ok(e) && !ok(m) && e == m {
        // Agreement: the same refusal (bodies differ in format by design).
    } else if e >= 500 && (400..500).contains(&m) {
        out.add("stricter refusal (engine 5xx)".to_owned(), bodies());
    } else if ok(e) && (400..500).contains(&m) {
        // A refusal where the engine answers: by design only when marked, and named so.
        let marked = serde_json::from_slice::<Value>(&emulator.body)
            .is_ok_and(|b| b["error_decision"] == "stricter");
        let what = if marked {
            format!("stricter refusal (engine {e}, marked)")
        } else {
            format!("status {e} vs {m} (refusal not marked)")
        };
        out.add(what, bodies());
    } else {
        out.add(format!("status {e} vs {m}"), bodies());
    }
    out.list
}

/// The differences of one request, each class once.
struct Diffs {
    op: &'static str,
    list: Vec<Difference>,
}

impl Diffs {
    fn add(&mut self, what: String, detail: String) {
        let class = format!("{}: {what}", self.op);
        if !self.list.iter().any(|d| d.class == class) {
            self.list.push(Difference {
                class,
                detail: truncate(&detail, 300),
            });
        }
    }

    fn bodies(&mut self, request: &Request, engine: &Response, emulator: &Response) {
        if request.op == Op::Delete {
            return;
        }
        let parsed = (
            serde_json::from_slice::<Value>(&engine.body),
            serde_json::from_slice::<Value>(&emulator.body),
        );
        let (Ok(e), Ok(m)) = parsed else {
            self.add(
                "body not JSON".to_owned(),
                format!("{} vs {}", short(&engine.text()), short(&emulator.text())),
            );
            return;
        };
        let table = request.table.name;
        let pk = request.table.pk();
        if request.wire.action == Some("bulk_create") {
            // A list of `{"success": ...}` per record: compared whole, but for the text of an
            // item's `non_field_errors`, the database's message (or an exception's) as its
            // driver writes it, which names the engine's own database and statement
            // (psycopg2's `LINE 1: ...` excerpt, MySQL's `db`.`table`.`column`).
            if bulk_answer(&e) != bulk_answer(&m) {
                self.add(
                    "bulk_create answer".to_owned(),
                    format!("{} vs {}", short(&e.to_string()), short(&m.to_string())),
                );
            }
            return;
        }
        match request.op {
            Op::List => self.list_bodies(table, pk, e, m),
            Op::Aggregate => self.object(&e, &m, ""),
            Op::Group => self.groups(&e, &m),
            _ => self.record(table, &e, &m, ""),
        }
    }

    fn list_bodies(&mut self, table: &str, pk: &str, mut e: Value, m: Value) {
        if let Value::Object(map) = &mut e {
            for key in ENGINE_EXTRA_KEYS {
                map.remove(*key);
            }
        }
        match (&e, &m) {
            (Value::Array(er), Value::Array(mr)) => self.rows(table, pk, er, mr),
            (Value::Object(eo), Value::Object(mo)) => {
                for key in eo.keys().chain(mo.keys()) {
                    let known = ["count", "next", "previous", "results"].contains(&key.as_str());
                    if !known && eo.get(key) != mo.get(key) {
                        self.add(format!("envelope key {key}"), present(eo, mo, key));
                    }
                }
                let (ec, mc) = (eo.get("count"), mo.get("count"));
                if ec != mc {
                    self.add("count".to_owned(), format!("{} vs {}", show(ec), show(mc)));
                }
                for link in ["next", "previous"] {
                    let (el, ml) = (eo.get(link), mo.get(link));
                    if link_query(el) != link_query(ml) {
                        self.add(
                            format!("{link} link"),
                            format!("{} vs {}", show(el), show(ml)),
                        );
                    }
                }
                match (eo.get("results"), mo.get("results")) {
                    (Some(Value::Array(er)), Some(Value::Array(mr))) => {
                        self.rows(table, pk, er, mr);
                    }
                    (er, mr) => self.add(
                        "results".to_owned(),
                        format!("{} vs {}", show(er), show(mr)),
                    ),
                }
            }
            _ => self.add(
                "shape (envelope vs bare array)".to_owned(),
                format!("{} vs {}", kind_of(&e), kind_of(&m)),
            ),
        }
    }

    /// Rows: their number, their primary keys in order, then each field of the rows that both
    /// sides have (matched by primary key).
    fn rows(&mut self, table: &str, pk: &str, e: &[Value], m: &[Value]) {
        let key = |row: &Value| row.get(pk).map(Value::to_string).unwrap_or_default();
        if e.len() != m.len() {
            self.add(
                "number of results".to_owned(),
                format!("{} vs {} rows", e.len(), m.len()),
            );
        } else if let Some(i) = (0..e.len()).find(|&i| key(&e[i]) != key(&m[i])) {
            self.add(
                "rows or order".to_owned(),
                format!("row {i}: {pk} {} vs {}", key(&e[i]), key(&m[i])),
            );
        }
        // Rows in the same key order are compared in place: a composite or promoted key
        // repeats in a list, so a key does not name one row.
        if e.len() == m.len() && (0..e.len()).all(|i| key(&e[i]) == key(&m[i])) {
            for (row, other) in e.iter().zip(m) {
                self.record(table, row, other, &format!("{pk} {}: ", key(row)));
            }
            return;
        }
        let by_key: HashMap<String, &Value> = m.iter().map(|row| (key(row), row)).collect();
        for row in e {
            if let Some(other) = by_key.get(&key(row)) {
                self.record(table, row, other, &format!("{pk} {}: ", key(row)));
            }
        }
    }

    /// One record: missing or extra fields, and each field's value.
    fn record(&mut self, table: &str, e: &Value, m: &Value, at: &str) {
        match (e, m) {
            (Value::Object(eo), Value::Object(mo)) => {
                for key in eo.keys().chain(mo.keys()) {
                    match (eo.get(key), mo.get(key)) {
                        (Some(_), None) => {
                            self.add(format!("missing field {table}.{key}"), format!("{at}{key}"));
                        }
                        (None, Some(_)) => {
                            self.add(format!("extra field {table}.{key}"), format!("{at}{key}"));
                        }
                        (Some(a), Some(b)) => {
                            if let Some(what) = value_difference(a, b) {
                                self.add(
                                    format!("{what} of field {table}.{key}"),
                                    format!("{at}{key}: {a} vs {b}"),
                                );
                            }
                        }
                        (None, None) => {}
                    }
                }
            }
            _ if e != m => self.add(
                "body".to_owned(),
                format!("{} vs {}", short(&e.to_string()), short(&m.to_string())),
            ),
            _ => {}
        }
    }

    /// An object whose keys are compared one by one (aggregate `{"y_func"}`, a group row).
    fn object(&mut self, e: &Value, m: &Value, at: &str) {
        let (Value::Object(eo), Value::Object(mo)) = (e, m) else {
            if e != m {
                self.add("body".to_owned(), format!("{at}{e} vs {m}"));
            }
            return;
        };
        for key in eo.keys().chain(mo.keys()) {
            match (eo.get(key), mo.get(key)) {
                (Some(a), Some(b)) => {
                    if let Some(what) = value_difference(a, b) {
                        self.add(format!("{what} of {key}"), format!("{at}{key}: {a} vs {b}"));
                    }
                }
                _ => self.add(
                    format!("key {key}"),
                    format!("{at}{}", present(eo, mo, key)),
                ),
            }
        }
    }

    fn groups(&mut self, e: &Value, m: &Value) {
        let (Value::Array(er), Value::Array(mr)) = (e, m) else {
            if e != m {
                self.add(
                    "body".to_owned(),
                    format!("{} vs {}", short(&e.to_string()), short(&m.to_string())),
                );
            }
            return;
        };
        if er.len() != mr.len() {
            let first = |rows: &[Value]| rows.first().map_or("-".to_owned(), Value::to_string);
            self.add(
                "number of groups".to_owned(),
                format!(
                    "{} vs {} groups; first {} vs {}",
                    er.len(),
                    mr.len(),
                    first(er),
                    first(mr)
                ),
            );
        }
        for (i, (a, b)) in er.iter().zip(mr).enumerate() {
            self.object(a, b, &format!("[{i}] "));
        }
    }
}

/// How two JSON values differ: `None` when equal, else `value`, `value type` (a string against a
/// number, say), `number form` (`3` vs `3.0`) or `float rounding` (relative error < 1e-9).
pub fn value_difference(a: &Value, b: &Value) -> Option<&'static str> {
    if a == b {
        return None;
    }
    Some(match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (
                x.as_f64().unwrap_or(f64::NAN),
                y.as_f64().unwrap_or(f64::NAN),
            );
            if x == y {
                "number form"
            } else if (x - y).abs() <= 1e-9 * x.abs().max(y.abs()) {
                "float rounding"
            } else {
                "value"
            }
        }
        (Value::Null, _) | (_, Value::Null) => "value",
        _ if std::mem::discriminant(a) == std::mem::discriminant(b) => "value",
        _ => "value type",
    })
}

/// The query text of a `next`/`previous` link, as written (`None` for null or absent; a
/// non-string value as itself).
pub fn link_query(link: Option<&Value>) -> Option<Result<String, Value>> {
    match link? {
        Value::Null => None,
        Value::String(url) => Some(Ok(url.split_once('?').map_or("", |(_, q)| q).to_owned())),
        other => Some(Err(other.clone())),
    }
}

fn present(e: &Map<String, Value>, m: &Map<String, Value>, key: &str) -> String {
    format!("{key}: {} vs {}", show(e.get(key)), show(m.get(key)))
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "(absent)".to_owned(), |v| short(&v.to_string()))
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A `bulk_create` answer with each item's `non_field_errors` text left out (its presence
/// kept): see [`Diffs::bodies`].
fn bulk_answer(answer: &Value) -> Value {
    let mut answer = answer.clone();
    if let Value::Array(items) = &mut answer {
        for item in items {
            if let Some(errors) = item.get_mut("errors").and_then(Value::as_object_mut)
                && let Some(text) = errors.get_mut("non_field_errors")
            {
                *text = Value::Bool(true);
            }
        }
    }
    answer
}

/// At most 140 characters, on one line.
fn short(s: &str) -> String {
    truncate(&s.replace(['\n', '\r'], " "), 140)
}

pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::dataset::TABLES;
    use super::*;

    fn request(op: Op) -> Request {
        Request {
            wire: super::super::wire::Wire::default(),
            op,
            table: &TABLES[0],
            pk: None,
            query: Vec::new(),
            body: None,
        }
    }

    fn answer(status: u16, body: &str) -> Response {
        Response {
            status,
            content_type: String::new(),
            body: body.as_bytes().to_vec(),
        }
    }

    fn classes(op: Op, e: (u16, &str), m: (u16, &str)) -> Vec<String> {
        compare(&request(op), &answer(e.0, e.1), &answer(m.0, m.1))
            .into_iter()
            .map(|d| d.class)
            .collect()
    }

    /// A `bulk_create` answer: each item's success and field errors count, the text of its
    /// `non_field_errors` (the database's) does not.
    #[test]
    fn a_bulk_create_answer_is_compared_but_for_the_databases_texts() {
        let mut bulk = request(Op::Create);
        bulk.wire.action = Some("bulk_create");
        let compared = |e: &str, m: &str| -> Vec<String> {
            compare(&bulk, &answer(200, e), &answer(200, m))
                .into_iter()
                .map(|d| d.class)
                .collect()
        };
        let engine = r#"[{"success": true}, {"success": false, "errors": {"non_field_errors": ["invalid input syntax\nLINE 1: ..."]}}]"#;
        let emulator = r#"[{"success": true}, {"success": false, "errors": {"non_field_errors": ["invalid input syntax\n"]}}]"#;
        assert!(compared(engine, emulator).is_empty());
        let other_field = r#"[{"success": true}, {"success": false, "errors": {"age": ["not a valid integer"]}}]"#;
        assert_eq!(
            compared(engine, other_field),
            ["create: bulk_create answer"]
        );
        let created = r#"[{"success": true}, {"success": true}]"#;
        assert_eq!(compared(engine, created), ["create: bulk_create answer"]);
    }

    #[test]
    fn an_envelope_agrees_without_the_engine_extras_and_with_links_on_another_path() {
        let engine = r#"{"count": 3, "next": "http://127.0.0.1:1/api/models/people/?_per_page=1&a=%C3%A9+x&page=2",
            "previous": null, "results": [{"id": 3, "name": "Zoë"}], "num_pages": 3, "per_page": 1,
            "has_more": true, "data_query_time": 0.01, "count_query_time": 0.0}"#;
        let emulator = r#"{"results": [{"name": "Zoë", "id": 3}], "previous": null, "count": 3,
            "next": "http://127.0.0.1:2/projects/p/prod/db/models/people?_per_page=1&a=%C3%A9+x&page=2"}"#;
        assert!(classes(Op::List, (200, engine), (200, emulator)).is_empty());
        // The order of the pairs and the encoding of a space count.
        for other in [
            "?page=2&a=%C3%A9+x&_per_page=1",
            "?_per_page=1&a=%C3%A9%20x&page=2",
        ] {
            let emulator = format!(
                r#"{{"results": [{{"name": "Zoë", "id": 3}}], "previous": null, "count": 3,
                "next": "http://127.0.0.1:2/m{other}"}}"#
            );
            assert_eq!(
                classes(Op::List, (200, engine), (200, &emulator)),
                ["list: next link"]
            );
        }
    }

    #[test]
    fn list_differences_are_classified() {
        let engine = r#"{"count": 2, "next": null, "previous": null,
            "results": [{"id": 2, "price": 3.0, "born": "2024-01-01", "n": 1}, {"id": 1, "price": 1, "born": null, "n": 2}]}"#;
        let emulator = r#"{"count": 3, "next": "http://x/?page=2", "previous": null,
            "results": [{"id": 1, "price": "1", "born": null, "n": 2}, {"id": 2, "price": 3, "born": "2024-01-01", "n": 5}]}"#;
        let mut found = classes(Op::List, (200, engine), (200, emulator));
        found.sort();
        assert_eq!(
            found,
            [
                "list: count",
                "list: next link",
                "list: number form of field people.price",
                "list: rows or order",
                "list: value of field people.n",
                "list: value type of field people.price",
            ]
        );
        assert_eq!(
            classes(Op::List, (200, "[]"), (200, r#"{"count":0,"results":[]}"#)),
            ["list: shape (envelope vs bare array)"]
        );
        assert_eq!(
            classes(Op::List, (200, "[{\"id\": 1}]"), (200, "[]")),
            ["list: number of results"]
        );
    }

    #[test]
    fn statuses_are_classified() {
        let html = "<h1>Not Found</h1>";
        assert!(classes(Op::Retrieve, (404, html), (404, r#"{"detail":"x"}"#)).is_empty());
        assert!(classes(Op::List, (400, r#"{"a":1}"#), (400, r#"{"b":2}"#)).is_empty());
        assert_eq!(
            classes(Op::List, (500, "<h1>Server Error (500)</h1>"), (400, "{}")),
            ["list: stricter refusal (engine 5xx)"]
        );
        assert_eq!(
            classes(Op::Create, (201, "{}"), (400, "{}")),
            ["create: status 201 vs 400 (refusal not marked)"]
        );
        assert_eq!(
            classes(
                Op::Create,
                (201, "{}"),
                (400, r#"{"error":"x","error_decision":"stricter"}"#)
            ),
            ["create: stricter refusal (engine 201, marked)"]
        );
        assert_eq!(
            classes(Op::List, (400, "{}"), (500, "")),
            ["list: emulator 500"]
        );
        assert_eq!(
            classes(Op::Put, (200, "{}"), (405, "")),
            ["update (PUT): status 200 vs 405 (refusal not marked)"]
        );
        assert!(classes(Op::Delete, (204, ""), (204, "")).is_empty());
    }

    #[test]
    fn aggregate_and_group_bodies_are_compared_by_key() {
        assert!(
            classes(
                Op::Aggregate,
                (200, r#"{"y_func": 2}"#),
                (200, r#"{"y_func": 2}"#)
            )
            .is_empty()
        );
        assert_eq!(
            classes(
                Op::Aggregate,
                (200, r#"{"y_func": 2}"#),
                (200, r#"{"y_func": "2"}"#)
            ),
            ["aggregate: value type of y_func"]
        );
        assert_eq!(
            classes(
                Op::Group,
                (
                    200,
                    r#"[{"group": null, "y_func": 1}, {"group": "2024-01-01", "y_func": 0.30000000000000004}]"#
                ),
                (
                    200,
                    r#"[{"group": null, "y_func": 1}, {"group": "2024-01-01", "y_func": 0.3}]"#
                )
            ),
            ["group: float rounding of y_func"]
        );
        assert_eq!(
            classes(
                Op::Group,
                (200, r#"[{"group": 1, "y_func": 1}]"#),
                (200, "[]")
            ),
            ["group: number of groups"]
        );
    }

    #[test]
    fn record_fields_are_compared_by_name() {
        assert_eq!(
            classes(
                Op::Retrieve,
                (200, r#"{"id": 1, "at": "2024-01-01T10:00:00", "old": 1}"#),
                (200, r#"{"id": 1, "at": "2024-01-01 10:00:00", "new": 1}"#)
            ),
            [
                "retrieve: value of field people.at",
                "retrieve: missing field people.old",
                "retrieve: extra field people.new",
            ]
        );
    }

    #[test]
    fn decoding_and_links() {
        assert_eq!(link_query(Some(&Value::Null)), None);
        assert_eq!(link_query(None), None);
        assert_eq!(
            link_query(Some(&json!("http://h/p/?b=2&a=1"))),
            Some(Ok("b=2&a=1".to_owned()))
        );
        assert_eq!(
            value_difference(&json!(1), &json!(1.0)),
            Some("number form")
        );
        assert_eq!(value_difference(&json!("1"), &json!(1)), Some("value type"));
        assert_eq!(value_difference(&json!(null), &json!(1)), Some("value"));
        assert_eq!(
            value_difference(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})),
            None
        );
    }
}
