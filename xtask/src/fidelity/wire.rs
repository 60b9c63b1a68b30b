//! How a request travels: the routes, methods, headers, content types and body spellings the
//! engine reads besides a plain query and a JSON body.
//!
//! The generators draw *what* a request asks (`requests.rs`, the shapes); [`vary`] then sends
//! about one in seven of them another way the engine reads the same or differently, from a
//! generator of its own so that the others stay those of the seed:
//!
//! - a list as `POST .../get_records/` (the engine's router: a list), its filters moved into the
//!   JSON body with JSON types (numbers, booleans, lists, `null`), which the engine reads before
//!   the query (`filters/filter_class.py`); `page`, `_per_page`, `tz` stay in the query, which is
//!   the only place the engine reads them;
//! - a list with `X-HTTP-Method-Override` (`views/base/api.py`): `POST` (filters read from a JSON
//!   body, as above), `post` (not `POST`: the query only), `PUT`, or `OPTIONS` (the engine then
//!   skips its permission check; the emulator refuses it, marked stricter);
//! - a write's body as a form (`application/x-www-form-urlencoded`), as `multipart/form-data`,
//!   as a form with a `Content-Encoding` header (Tornado then reads no fields), as JSON with a
//!   charset, a byte-order mark, a duplicated key, or a content type the engine does not take
//!   for JSON (`Application/JSON`), or a JSON list (the engine's bulk create);
//! - a parameter the engine reads once given twice (`page`, `_per_page`, `_y_func`: the last
//!   wins);
//! - a create as `POST .../bulk_create/` (a list of records, or an object);
//! - a method the route does not take, and a model that does not exist.

use serde_json::{Map, Value};

use super::requests::{Op, Request, Rng};

/// How a request is sent, beside its op, query and JSON body.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Wire {
    /// Sent as `POST .../{action}/`: `get_records` (a list) or `bulk_create` (a create of a
    /// list of records).
    pub action: Option<&'static str>,
    /// Headers beside `Authorization` and the body's `Content-Type`.
    pub headers: Vec<(String, String)>,
    /// The body as these bytes of this content type, instead of the JSON of `body`.
    pub raw: Option<(String, Vec<u8>)>,
    /// The model's name in the path instead of the table's (a model that does not exist).
    pub model: Option<&'static str>,
    /// Sent with this method instead of the op's (one the route does not take).
    pub method: Option<&'static str>,
}

/// Parameters only the query carries (`get_argument`): never moved into a body.
const QUERY_ONLY: &[&str] = &[
    "page",
    "_per_page",
    "_no_pagination",
    "tz",
    "_y_func",
    "_y_column",
    "_x_column",
    "_x_lookup",
];

/// Sends about one request in seven of `requests` another way (see the module's comment),
/// drawn from `seed`.
pub fn vary(seed: u64, requests: &mut [Request]) {
    let mut rng = Rng::new(seed ^ 0x0000_0517_E000);
    for request in requests.iter_mut() {
        if rng.below(100) >= 14 {
            continue;
        }
        match request.op {
            Op::List => vary_list(&mut rng, request),
            Op::Create | Op::Patch | Op::Put => vary_write(&mut rng, request),
            Op::Aggregate | Op::Group => vary_y(&mut rng, request),
            Op::Retrieve | Op::Delete => match rng.below(10) {
                0..=2 => request.wire.model = Some("no_such_model"),
                // A method the record route does not take: Tornado's own 405.
                3 => request.wire.method = Some("POST"),
                _ => {}
            },
        }
    }
}

/// An aggregate or a group: `_y_func` twice, a `_y_column` the model does not have, or (a
/// group) a second `_x_column`.
fn vary_y(rng: &mut Rng, request: &mut Request) {
    match rng.below(4) {
        0 | 1 => repeat_last(rng, request, &["_y_func"]),
        2 => {
            for (k, v) in request.query.iter_mut() {
                if k == "_y_column" {
                    *v = "no_such_column".to_owned();
                }
            }
            if !request.query.iter().any(|(k, _)| k == "_y_column") {
                request
                    .query
                    .push(("_y_column".to_owned(), "no_such_column".to_owned()));
            }
        }
        3 if request.op == Op::Group && rng.chance(50) => {
            // A date lookup of a part no database's truncation knows.
            request
                .query
                .push(("_x_lookup".to_owned(), "date_fortnight".to_owned()));
        }
        _ if request.op == Op::Group => {
            let columns = request.table.columns;
            let column = columns[rng.below(columns.len() as u64) as usize].name;
            request
                .query
                .push(("_x_column".to_owned(), column.to_owned()));
        }
        _ => {}
    }
}

/// A list: `get_records` (its filters in a JSON, form or multipart body), an override, a
/// repeated or empty paging parameter, a method the route does not take, or a missing model.
fn vary_list(rng: &mut Rng, request: &mut Request) {
    match rng.below(12) {
        0..=2 => {
            request.wire.action = Some("get_records");
            move_filters_to_body(rng, request);
        }
        3 => {
            request.wire.action = Some("get_records");
            move_filters_to_body(rng, request);
            if let Some(Value::Object(fields)) = request.body.take() {
                request.wire.raw = if rng.chance(50) {
                    Some((
                        "application/x-www-form-urlencoded".to_owned(),
                        form(&fields).into_bytes(),
                    ))
                } else {
                    let (bytes, boundary) = multipart(&fields);
                    Some((format!("multipart/form-data; boundary={boundary}"), bytes))
                };
                request.body = Some(Value::Object(fields));
            }
        }
        10 => {
            let (key, value) = *rng.pick(&[("_per_page", "0"), ("page", ""), ("_per_page", "")]);
            request.query.push((key.to_owned(), value.to_owned()));
        }
        11 => request.wire.method = Some("PATCH"),
        4 | 5 => {
            request.wire.headers.push(override_header("POST"));
            move_filters_to_body(rng, request);
        }
        6 => {
            let method = *rng.pick(&["post", "PUT", "GET", "OPTIONS"]);
            request.wire.headers.push(override_header(method));
        }
        7 | 8 => repeat_last(rng, request, &["page", "_per_page"]),
        _ => request.wire.model = Some("no_such_model"),
    }
}

fn override_header(method: &str) -> (String, String) {
    ("X-HTTP-Method-Override".to_owned(), method.to_owned())
}

/// Moves most filters of the query into a JSON body, each value in the JSON type it reads as
/// (or as the string it was); a filter given twice in the query stays there.
fn move_filters_to_body(rng: &mut Rng, request: &mut Request) {
    let mut body = Map::new();
    let mut kept = Vec::new();
    let repeated =
        |key: &str, query: &[(String, String)]| query.iter().filter(|(k, _)| k == key).count() > 1;
    let query = std::mem::take(&mut request.query);
    for (key, value) in &query {
        let movable = !QUERY_ONLY.contains(&key.as_str()) && !repeated(key, &query);
        if movable && is_date_column(request, key) && rng.chance(15) {
            // A number for a date: the engine's `safe_date` passes it on unread.
            body.insert(key.clone(), Value::from(20_240_105));
        } else if movable && rng.chance(80) {
            body.insert(key.clone(), json_of(rng, key, value));
        } else {
            kept.push((key.clone(), value.clone()));
        }
    }
    // Now and then a body filter beside the same one in the query: the body's wins.
    if let Some((key, _)) = kept.iter().find(|(k, _)| !QUERY_ONLY.contains(&k.as_str()))
        && rng.chance(20)
    {
        body.insert(key.clone(), Value::String(String::new()));
    }
    if rng.chance(3) {
        // A declared filter's value as an object: the engine reads it as parameters.
        body.insert(
            "_semantic_search".to_owned(),
            serde_json::json!({"field": request.table.pk(), "embedding": [1, 0]}),
        );
    }
    request.query = kept;
    request.body = Some(Value::Object(body));
}

/// Whether the filter `key` (`[exclude__]field[__lookup]`) is on a date or date-time column.
fn is_date_column(request: &Request, key: &str) -> bool {
    let field = key
        .trim_start_matches("exclude__")
        .split("__")
        .next()
        .unwrap_or("");
    request
        .table
        .columns
        .iter()
        .any(|c| c.name == field && c.kind.is_date())
}

/// A filter value as a JSON value: numbers and booleans as such now and then, `__in` lists as
/// arrays, or the string itself.
fn json_of(rng: &mut Rng, key: &str, value: &str) -> Value {
    if key.ends_with("__in") && rng.chance(50) {
        return Value::Array(
            value
                .split(',')
                .map(|item| Value::String(item.to_owned()))
                .collect(),
        );
    }
    if rng.chance(50) {
        if let Ok(n) = value.parse::<i64>() {
            return Value::from(n);
        }
        if let Ok(f) = value.parse::<f64>()
            && f.is_finite()
        {
            return Value::from(f);
        }
        if let Ok(b) = value.parse::<bool>() {
            return Value::Bool(b);
        }
    }
    if rng.chance(5) {
        return Value::Null;
    }
    if rng.chance(4) {
        // `[null]`: the first item of a list, which `exact` reads as `IS NULL`.
        return Value::Array(vec![Value::Null]);
    }
    Value::String(value.to_owned())
}

/// Gives one of `names` the query has a second time, with another value first: the engine
/// reads the last.
fn repeat_last(rng: &mut Rng, request: &mut Request, names: &[&str]) {
    let Some(i) = request
        .query
        .iter()
        .position(|(k, _)| names.contains(&k.as_str()))
    else {
        return;
    };
    let (key, value) = request.query[i].clone();
    let first = match key.as_str() {
        "_y_func" => (*rng.pick(&["count", "sum", "max"])).to_owned(),
        _ => rng.range(1, 3).to_string(),
    };
    request.query.insert(i, (key.clone(), first));
    request.query[i + 1] = (key, value);
}

/// A write: the same fields as a form or multipart body, JSON spelled otherwise, or a list.
fn vary_write(rng: &mut Rng, request: &mut Request) {
    let Some(Value::Object(fields)) = request.body.clone() else {
        return;
    };
    let json = Value::Object(fields.clone()).to_string();
    let raw = |content_type: &str, bytes: Vec<u8>| Some((content_type.to_owned(), bytes));
    request.wire.raw = match rng.below(13) {
        0 => raw(
            "application/x-www-form-urlencoded",
            form(&fields).into_bytes(),
        ),
        1 => {
            // A field given twice in a form: the engine reads a list, which a field that takes
            // one value joins with commas.
            let mut text = form(&fields);
            if let Some((key, value)) = fields.iter().find_map(|(k, v)| Some((k, field_text(v)?))) {
                let key = super::requests::encode(key);
                let value = super::requests::encode(&value);
                text = format!("{key}={value}&{text}");
            }
            raw("application/x-www-form-urlencoded", text.into_bytes())
        }
        10 => {
            // A form value that is not UTF-8: the engine keeps its bytes.
            let mut text = form(&fields);
            if let Some(key) = fields.keys().next() {
                text = format!("{}=%FF%FEx&{text}", super::requests::encode(key));
            }
            raw("application/x-www-form-urlencoded", text.into_bytes())
        }
        11 => {
            // A JSON list as a field's value: a field of one value joins it with commas.
            let mut fields = fields.clone();
            if let Some((_, value)) = fields.iter_mut().find(|(_, v)| v.is_string()) {
                *value = Value::Array(vec![value.clone(), Value::Null, Value::from(7)]);
            }
            raw(
                "application/json",
                Value::Object(fields).to_string().into_bytes(),
            )
        }
        2 | 3 => {
            let (bytes, boundary) = multipart(&fields);
            raw(&format!("multipart/form-data; boundary={boundary}"), bytes)
        }
        4 => {
            request
                .wire
                .headers
                .push(("Content-Encoding".to_owned(), "identity".to_owned()));
            raw(
                "application/x-www-form-urlencoded",
                form(&fields).into_bytes(),
            )
        }
        5 => raw("application/json; charset=utf-8", json.into_bytes()),
        6 => {
            let mut bytes = "\u{feff}".as_bytes().to_vec();
            bytes.extend_from_slice(json.as_bytes());
            raw("application/json", bytes)
        }
        7 => {
            // The first field given twice, first with another value: Python keeps the last.
            let text = match fields.iter().next() {
                Some((key, _)) => {
                    let inner = json.trim_start_matches('{');
                    let key = Value::String(key.clone()).to_string();
                    if inner.starts_with('}') {
                        json.clone()
                    } else {
                        format!("{{{key}: null, {inner}")
                    }
                }
                None => json.clone(),
            };
            raw("application/json", text.into_bytes())
        }
        8 => raw("Application/JSON", json.into_bytes()),
        12 if request.op == Op::Create => {
            // The engine's bulk create: a list of records (one of them empty now and then), or
            // an object, which it refuses.
            request.wire.action = Some("bulk_create");
            let body = match rng.below(3) {
                0 => format!("[{json}]"),
                1 => format!("[{json}, {{}}]"),
                _ => json.clone(),
            };
            raw("application/json", body.into_bytes())
        }
        9 => {
            // Date-times with an offset: the engine writes them in the database's time zone
            // where the column has none.
            let mut fields = fields.clone();
            for value in fields.values_mut() {
                if let Value::String(text) = value
                    && text.len() >= 16
                    && text.as_bytes()[4] == b'-'
                    && matches!(text.as_bytes()[10], b' ' | b'T')
                {
                    text.push_str("+02:00");
                }
            }
            raw(
                "application/json",
                Value::Object(fields).to_string().into_bytes(),
            )
        }
        _ if request.op == Op::Create => raw("application/json", format!("[{json}]").into_bytes()),
        _ => raw("application/json", json.into_bytes()),
    };
}

/// A JSON value as a form field's text: strings as they are, `null` left out, the rest as JSON.
fn field_text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(if *b { "true" } else { "false" }.to_owned()),
        other => Some(other.to_string()),
    }
}

/// `application/x-www-form-urlencoded` of the fields.
fn form(fields: &Map<String, Value>) -> String {
    fields
        .iter()
        .filter_map(|(k, v)| {
            Some(format!(
                "{}={}",
                super::requests::encode(k),
                super::requests::encode(&field_text(v)?)
            ))
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// `multipart/form-data` of the fields and its boundary.
fn multipart(fields: &Map<String, Value>) -> (Vec<u8>, String) {
    let boundary = "svcfidelity7MA4YWxkTrZu0gW".to_owned();
    let mut out = Vec::new();
    for (key, value) in fields {
        let Some(text) = field_text(value) else {
            continue;
        };
        out.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{key}\"\r\n\r\n{text}\r\n"
            )
            .as_bytes(),
        );
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (out, boundary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fidelity::dataset::{Backend, TABLES};

    fn list(query: &[(&str, &str)]) -> Request {
        Request {
            op: Op::List,
            table: &TABLES[0],
            pk: None,
            query: query
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            body: None,
            wire: Wire::default(),
        }
    }

    #[test]
    fn body_filters_leave_the_query_only_parameters_in_the_query() {
        let mut r = Rng::new(3);
        for _ in 0..50 {
            let mut request = list(&[("page", "2"), ("_per_page", "5"), ("id__in", "1,2")]);
            move_filters_to_body(&mut r, &mut request);
            let keys: Vec<&str> = request.query.iter().map(|(k, _)| k.as_str()).collect();
            assert!(
                keys.contains(&"page") && keys.contains(&"_per_page"),
                "{keys:?}"
            );
            assert!(request.body.is_some());
        }
    }

    #[test]
    fn a_repeated_parameter_keeps_its_value_last() {
        let mut r = Rng::new(1);
        let mut request = list(&[("name", "x"), ("page", "7")]);
        repeat_last(&mut r, &mut request, &["page"]);
        assert_eq!(request.query.len(), 3);
        assert_eq!(request.query[2], ("page".to_owned(), "7".to_owned()));
        assert_eq!(request.query[1].0, "page");
    }

    #[test]
    fn vary_draws_every_way_of_sending() {
        let mut requests: Vec<Request> =
            super::super::requests::generate(5, 8000, 3, Backend::Sqlite);
        vary(5, &mut requests);
        let count = |f: &dyn Fn(&Request) -> bool| requests.iter().filter(|r| f(r)).count();
        assert!(count(&|r| r.wire.action == Some("get_records")) > 20);
        assert!(
            count(&|r| r
                .wire
                .headers
                .iter()
                .any(|(k, _)| k == "X-HTTP-Method-Override"))
                > 20
        );
        for kind in [
            "x-www-form-urlencoded",
            "multipart",
            "Application/JSON",
            "charset",
        ] {
            let n = count(&|r| r.wire.raw.as_ref().is_some_and(|(t, _)| t.contains(kind)));
            assert!(n > 0, "{kind}: {n}");
        }
        assert!(count(&|r| r.wire.model.is_some()) > 5);
    }

    #[test]
    fn multipart_bodies_name_each_field() {
        let mut fields = Map::new();
        fields.insert("name".to_owned(), Value::String("Zoë".to_owned()));
        fields.insert("n".to_owned(), Value::from(3));
        fields.insert("gone".to_owned(), Value::Null);
        let (bytes, boundary) = multipart(&fields);
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.contains("name=\"name\"\r\n\r\nZoë\r\n"));
        assert!(text.contains("name=\"n\"\r\n\r\n3\r\n"));
        assert!(!text.contains("gone"));
        assert!(text.ends_with(&format!("--{boundary}--\r\n")));
        // In the map's order, which serde_json's `preserve_order` (on in some builds of the
        // workspace, off in xtask's own) decides.
        let sent = form(&fields);
        let mut pairs: Vec<&str> = sent.split('&').collect();
        pairs.sort_unstable();
        assert_eq!(pairs, ["n=3", "name=Zo%C3%AB"]);
    }
}
