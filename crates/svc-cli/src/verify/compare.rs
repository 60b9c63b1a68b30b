//! Whether the emulator answered as the reference did, and if not, whether that is one of the
//! emulator's documented decisions or a difference.
//!
//! - **Statuses first.** Both 2xx and equal: the bodies are compared. Both 4xx and equal: they
//!   agree (error bodies differ in form by design: the engine's are its own, the emulator's
//!   always JSON with `error`).
//! - **The reference failed (5xx).** The emulator's `400` for it is a documented decision (a
//!   `[decision: stricter]` of docs/contract.md: it refuses what the engine fails on); its
//!   lenient-mode `500` (`error_code` `engine_failure`) agrees. A 2xx there is a difference: a
//!   test would pass against the emulator and fail against the reference.
//! - **The emulator refused (4xx) where the reference answered.** A refusal whose body says it
//!   is one by design (`"error_decision": "stricter"`: what the engine misreads, in both modes)
//!   is a documented decision. Strict mode also refuses input the engine ignores (an unknown
//!   field): when the emulator in lenient mode answers as the reference did, the refusal is
//!   that documented decision too; otherwise a difference.
//! - **Bodies.** The engine's extra envelope keys (`num_pages`, `per_page`, `has_more`, the
//!   query times) are left out; `next` and `previous` compare by the query they carry (the
//!   host and path are each server's own); key order never matters, JSON types always do (`3`
//!   and `3.0`, `"3"` and `3` differ). SQL answers compare by `columns` and `data`.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::verify::case::{Case, Op};

/// An answer, or why there is none.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The status and the body.
    Http { status: u16, body: Vec<u8> },
    /// No answer: refused connection, timeout.
    Failed(String),
}

impl Answer {
    /// The body as text (lossy).
    pub fn text(&self) -> String {
        match self {
            Answer::Http { body, .. } => String::from_utf8_lossy(body).into_owned(),
            Answer::Failed(why) => why.clone(),
        }
    }

    /// The status, when there was an answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            Answer::Http { status, .. } => Some(*status),
            Answer::Failed(_) => None,
        }
    }
}

/// How one request came out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The same answer.
    Agrees,
    /// A difference the emulator makes on purpose, and where it is written down.
    Decision { what: String, section: String },
    /// A difference: a test could pass against one and fail against the other.
    Difference { class: String, detail: String },
    /// The reference gave no answer: nothing to compare.
    NotCompared { why: String },
}

impl Verdict {
    /// Its name in reports: `agrees`, `decision`, `difference`, `not_compared`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::Decision { .. } => "decision",
            Verdict::Difference { .. } => "difference",
            Verdict::NotCompared { .. } => "not_compared",
        }
    }

    /// Its class: the difference's, the decision's, or the verdict's name.
    pub fn class(&self) -> String {
        match self {
            Verdict::Difference { class, .. } => class.clone(),
            Verdict::Decision { what, .. } => what.clone(),
            Verdict::NotCompared { .. } => "no answer from the reference".to_owned(),
            Verdict::Agrees => "agrees".to_owned(),
        }
    }
}

/// The engine's keys beyond the data host's envelope `count, next, previous, results`.
const ENGINE_EXTRA_KEYS: &[&str] = &[
    "num_pages",
    "per_page",
    "has_more",
    "data_query_time",
    "count_query_time",
];

/// Whether the emulator in lenient mode must be asked to judge this pair: the emulator refused
/// (4xx) a read the reference answered (2xx).
pub fn needs_lenient(case: &Case, reference: &Answer, emulator: &Answer) -> bool {
    let (Some(r), Some(m)) = (reference.status(), emulator.status()) else {
        return false;
    };
    !case.op.writes() && ok(r) && (400..500).contains(&m)
}

fn ok(status: u16) -> bool {
    (200..300).contains(&status)
}

/// The verdict on one request; `lenient` is the lenient emulator's answer where
/// [`needs_lenient`] asked for it.
pub fn judge(
    case: &Case,
    reference: &Answer,
    emulator: &Answer,
    lenient: Option<&Answer>,
) -> Verdict {
    let op = case.op.name();
    let (r, m) = match (reference, emulator) {
        (Answer::Failed(why), _) => return Verdict::NotCompared { why: why.clone() },
        (_, Answer::Failed(why)) => {
            return difference(op, "no answer from the emulator", why.clone());
        }
        (Answer::Http { status: r, .. }, Answer::Http { status: m, .. }) => (*r, *m),
    };
    let statuses = || format!("reference {r}, emulator {m}");
    let engine_failure = m == 500 && emulator.text().contains("\"engine_failure\"");
    if r >= 500 {
        return if engine_failure {
            Verdict::Agrees
        } else if (400..500).contains(&m) {
            Verdict::Decision {
                what: format!("{op}: the reference failed ({r}); the emulator refuses it ({m})"),
                section: format!("{} [decision: stricter]", case.op.contract_section()),
            }
        } else {
            difference(op, &format!("status {r} vs {m}"), statuses())
        };
    }
    if m >= 500 {
        return difference(op, &format!("emulator {m}"), short(&emulator.text()));
    }
    if ok(r) && ok(m) && r == m {
        return bodies(case, &reference.text(), &emulator.text());
    }
    if !ok(r) && !ok(m) && r == m {
        return Verdict::Agrees;
    }
    if (400..500).contains(&m) && marked_stricter(emulator) {
        return Verdict::Decision {
            what: format!(
                "{op}: the emulator refuses by design ({m}) what the reference answers ({r})"
            ),
            section: format!("{} [decision: stricter]", case.op.contract_section()),
        };
    }
    if ok(r) && (400..500).contains(&m) {
        let lenient_agrees = lenient.is_some_and(|l| {
            matches!(l, Answer::Http { status, .. } if *status == r)
                && bodies(case, &reference.text(), &l.text()) == Verdict::Agrees
        });
        if lenient_agrees {
            return Verdict::Decision {
                what: format!(
                    "{op}: strict mode refuses ({m}) what the reference reads its own way ({r})"
                ),
                section: format!("{} [decision: stricter]", case.op.contract_section()),
            };
        }
    }
    difference(
        op,
        &format!("status {r} vs {m}"),
        format!("{}: {}", statuses(), short(&emulator.text())),
    )
}

/// The emulator's refusal says it is one by design (`"error_decision": "stricter"`).
fn marked_stricter(answer: &Answer) -> bool {
    let Answer::Http { body, .. } = answer else {
        return false;
    };
    serde_json::from_slice::<Value>(body).is_ok_and(|b| b["error_decision"] == "stricter")
}

fn difference(op: &str, what: &str, detail: String) -> Verdict {
    Verdict::Difference {
        class: format!("{op}: {what}"),
        detail,
    }
}

/// Two 2xx bodies.
fn bodies(case: &Case, reference: &str, emulator: &str) -> Verdict {
    let op = case.op.name();
    if case.op == Op::Delete {
        return Verdict::Agrees;
    }
    let (Ok(mut r), Ok(m)) = (
        serde_json::from_str::<Value>(reference),
        serde_json::from_str::<Value>(emulator),
    ) else {
        return difference(
            op,
            "body not JSON",
            format!("{} vs {}", short(reference), short(emulator)),
        );
    };
    let found = match (case.op, &mut r) {
        (Op::List, Value::Object(map)) => {
            for key in ENGINE_EXTRA_KEYS {
                map.remove(*key);
            }
            list(map, &m)
        }
        (Op::Sql, _) => ["columns", "data"]
            .iter()
            .find_map(|k| first_difference(&r[*k], &m[*k], &format!("/{k}"))),
        _ => first_difference(&r, &m, ""),
    };
    match found {
        None => Verdict::Agrees,
        Some((path, what)) => {
            let at = |v: &Value| short(&pointer(v, &path).to_string());
            // The class names the place without its row (`/results/*/price`), so that one
            // changed value is one class however many pages show it; the detail names the row.
            let class = format!("{what} at {}", or_root(&any_row(&path)));
            let detail = format!(
                "at {}: reference {}, emulator {}",
                or_root(&path),
                at(&r),
                at(&m)
            );
            difference(op, &class, detail)
        }
    }
}

/// A list's envelope: the links by their query, the rest as values.
fn list(reference: &Map<String, Value>, emulator: &Value) -> Option<(String, &'static str)> {
    let Value::Object(emulator) = emulator else {
        return Some((String::new(), "value type"));
    };
    for key in ["next", "previous"] {
        if link_query(reference.get(key)) != link_query(emulator.get(key)) {
            return Some((format!("/{key}"), "link"));
        }
    }
    let mut keys: Vec<&String> = reference.keys().chain(emulator.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !matches!(k.as_str(), "next" | "previous"))
        .find_map(|k| {
            let (r, m) = (reference.get(k), emulator.get(k));
            match (r, m) {
                (Some(r), Some(m)) => first_difference(r, m, &format!("/{}", escape(k))),
                _ => Some((format!("/{}", escape(k)), "key present on one side")),
            }
        })
}

/// A link's query text (after `?`), `None` for no link.
fn link_query(link: Option<&Value>) -> Option<String> {
    match link? {
        Value::String(url) => Some(url.split_once('?').map(|(_, q)| q).unwrap_or("").to_owned()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The JSON pointer and kind of the first difference between two values, in document order.
pub fn first_difference(r: &Value, m: &Value, at: &str) -> Option<(String, &'static str)> {
    match (r, m) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let path = format!("{at}/{}", escape(k));
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => first_difference(x, y, &path),
                    _ => Some((path, "key present on one side")),
                }
            })
        }
        (Value::Array(a), Value::Array(b)) => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, &format!("{at}/{i}")))
            .or_else(|| (a.len() != b.len()).then(|| (at.to_owned(), "length"))),
        (Value::Number(a), Value::Number(b)) if a != b => {
            // `3` against `3.0`: the same number written as another JSON type.
            let same = a.as_f64().is_some_and(|x| b.as_f64() == Some(x));
            Some((at.to_owned(), if same { "number form" } else { "value" }))
        }
        (a, b) if kind(a) != kind(b) => Some((at.to_owned(), "value type")),
        (a, b) if a != b => Some((at.to_owned(), "value")),
        _ => None,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A JSON pointer's token (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// A JSON pointer with each array index written `*`.
fn any_row(path: &str) -> String {
    path.split('/')
        .map(|t| {
            if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                "*"
            } else {
                t
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn or_root(path: &str) -> &str {
    if path.is_empty() { "the body" } else { path }
}

/// The value at a JSON pointer, or `null`.
fn pointer<'v>(v: &'v Value, path: &str) -> &'v Value {
    v.pointer(path).unwrap_or(&Value::Null)
}

/// At most 300 characters of a text, on a character boundary.
pub fn short(s: &str) -> String {
    const MAX: usize = 300;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn http(status: u16, body: Value) -> Answer {
        Answer::Http {
            status,
            body: body.to_string().into_bytes(),
        }
    }

    fn list_case() -> Case {
        Case::read(Op::List, "books", Vec::new())
    }

    #[test]
    fn the_same_page_agrees_whatever_the_hosts_and_the_engine_extras() {
        let r = http(
            200,
            json!({"count": 3, "next": "http://e:1/api/models/books/?page=2", "previous": null,
                   "results": [{"id": 1, "t": "a"}], "num_pages": 3, "per_page": 1}),
        );
        let m = http(
            200,
            json!({"count": 3, "next": "http://m:2/projects/p/prod/r/models/books?page=2",
                   "previous": null, "results": [{"t": "a", "id": 1}]}),
        );
        assert_eq!(judge(&list_case(), &r, &m, None), Verdict::Agrees);
    }

    #[test]
    fn a_changed_value_is_named_with_its_place() {
        let r = http(
            200,
            json!({"count": 1, "next": null, "previous": null, "results": [{"id": 1, "p": "3.0"}]}),
        );
        let m = http(
            200,
            json!({"count": 1, "next": null, "previous": null, "results": [{"id": 1, "p": 3.0}]}),
        );
        let Verdict::Difference { class, detail } = judge(&list_case(), &r, &m, None) else {
            panic!("not a difference");
        };
        assert_eq!(class, "list: value type at /results/*/p");
        assert_eq!(detail, "at /results/0/p: reference \"3.0\", emulator 3.0");
        let m = http(
            200,
            json!({"count": 1, "next": null, "previous": null, "results": [{"id": 1, "p": 3}]}),
        );
        let r = http(
            200,
            json!({"count": 1, "next": null, "previous": null, "results": [{"id": 1, "p": 3.0}]}),
        );
        assert!(matches!(judge(&list_case(), &r, &m, None),
            Verdict::Difference { class, .. } if class == "list: number form at /results/*/p"));
    }

    #[test]
    fn the_references_failure_is_its_own_and_a_refusal_of_it_a_decision() {
        let r = Answer::Http {
            status: 500,
            body: b"<html>".to_vec(),
        };
        let refused = http(400, json!({"error": "x", "error_code": "invalid"}));
        assert!(
            matches!(judge(&list_case(), &r, &refused, None), Verdict::Decision { section, .. }
            if section == "docs/contract.md 5.1 Records [decision: stricter]")
        );
        let lenient = http(500, json!({"error": "x", "error_code": "engine_failure"}));
        assert_eq!(judge(&list_case(), &r, &lenient, None), Verdict::Agrees);
        let answered = http(200, json!({"count": 0}));
        assert!(matches!(judge(&list_case(), &r, &answered, None),
            Verdict::Difference { class, .. } if class == "list: status 500 vs 200"));
    }

    #[test]
    fn a_strict_refusal_is_a_decision_only_when_lenient_mode_answers_as_the_reference() {
        let body = json!({"count": 0, "next": null, "previous": null, "results": []});
        let r = http(200, body.clone());
        let m = http(
            400,
            json!({"error": "unknown field", "error_code": "invalid"}),
        );
        let case = list_case();
        assert!(needs_lenient(&case, &r, &m));
        assert!(matches!(
            judge(&case, &r, &m, Some(&http(200, body))),
            Verdict::Decision { .. }
        ));
        let other = json!({"count": 1, "next": null, "previous": null, "results": [{"id": 1}]});
        assert!(matches!(
            judge(&case, &r, &m, Some(&http(200, other))),
            Verdict::Difference { .. }
        ));
        assert!(matches!(
            judge(&case, &r, &m, None),
            Verdict::Difference { .. }
        ));
        let by_design = http(
            400,
            json!({"error": "x", "error_code": "invalid", "error_decision": "stricter"}),
        );
        assert!(
            matches!(judge(&case, &r, &by_design, None), Verdict::Decision { what, .. }
            if what == "list: the emulator refuses by design (400) what the reference answers (200)")
        );
    }

    #[test]
    fn no_answer_from_the_reference_is_not_compared_and_from_the_emulator_differs() {
        let failed = Answer::Failed("connection refused".to_owned());
        let fine = http(200, json!({}));
        assert!(matches!(
            judge(&list_case(), &failed, &fine, None),
            Verdict::NotCompared { .. }
        ));
        assert!(matches!(
            judge(&list_case(), &fine, &failed, None),
            Verdict::Difference { .. }
        ));
    }

    #[test]
    fn sql_answers_compare_by_columns_and_rows() {
        let case = Case::sql("select 1 as a");
        let r = http(
            200,
            json!({"columns": ["a"], "data": [[1]], "data_query_time": 0.1}),
        );
        let m = http(
            200,
            json!({"columns": ["a"], "data": [[1]], "row_count": 1}),
        );
        assert_eq!(judge(&case, &r, &m, None), Verdict::Agrees);
        let m = http(
            200,
            json!({"columns": ["a"], "data": [["1"]], "row_count": 1}),
        );
        assert!(matches!(judge(&case, &r, &m, None),
            Verdict::Difference { class, .. } if class == "sql: value type at /data/*/*"));
    }
}
