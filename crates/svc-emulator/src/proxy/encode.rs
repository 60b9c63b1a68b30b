//! Encoding a proxied request: the query appended to the URL, and the body of each body type.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};
use svc_model::proxy::BodyType;
use svc_model::records::wire::encode_component;

use svc_emulator_http::HttpError;

/// The `application/x-www-form-urlencoded` set (WHATWG URL): everything but `* - . _`
/// alphanumerics; a space becomes `+` afterwards.
const FORM: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'*')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b' ');

/// A query component: everything but RFC 3986's unreserved characters percent-encoded, `%20`
/// for a space (svc-model's [`encode_component`]).
pub(crate) fn component(text: &str) -> String {
    encode_component(text).into_owned()
}

fn form_component(text: &str) -> String {
    utf8_percent_encode(text, FORM)
        .to_string()
        .replace(' ', "+")
}

/// The bytes to send and the `Content-Type` that goes with them (`None`: the caller's, if any).
#[derive(Debug)]
pub(crate) struct EncodedBody {
    pub(crate) bytes: Vec<u8>,
    pub(crate) content_type: Option<String>,
    /// Whether this content type replaces one given in the headers (multipart: the boundary
    /// must be the proxy's).
    pub(crate) overrides_header: bool,
}

/// Encodes `body` as `body_type` says (see [`BodyType`] for the shapes accepted).
pub(crate) fn encode_body(body_type: BodyType, body: &Value) -> Result<EncodedBody, HttpError> {
    let plain = |bytes: Vec<u8>, content_type: &str| EncodedBody {
        bytes,
        content_type: Some(content_type.to_owned()),
        overrides_header: false,
    };
    match body_type {
        BodyType::Json => Ok(plain(json_bytes(body)?, "application/json")),
        BodyType::GraphQl => {
            let operation = match body {
                Value::String(query) => {
                    let mut op = Map::new();
                    op.insert("query".into(), Value::String(query.clone()));
                    Value::Object(op)
                }
                Value::Object(op) if op.get("query").is_some_and(Value::is_string) => {
                    if op
                        .get("variables")
                        .is_some_and(|v| !v.is_object() && !v.is_null())
                    {
                        return Err(body_error("GraphQL `variables` must be an object or null."));
                    }
                    body.clone()
                }
                _ => {
                    return Err(body_error(
                        "A GraphQL body is {\"query\": \"...\", \"variables\": {...}} or the query as a string.",
                    ));
                }
            };
            Ok(plain(json_bytes(&operation)?, "application/json"))
        }
        BodyType::FormUrlEncoded => {
            let text = form_fields(body)?
                .iter()
                .map(|(name, value)| format!("{}={}", form_component(name), form_component(value)))
                .collect::<Vec<_>>()
                .join("&");
            Ok(plain(
                text.into_bytes(),
                "application/x-www-form-urlencoded",
            ))
        }
        BodyType::FormData => {
            let fields = form_fields(body)?;
            let (bytes, boundary) = multipart(&fields);
            Ok(EncodedBody {
                bytes,
                content_type: Some(format!("multipart/form-data; boundary={boundary}")),
                overrides_header: true,
            })
        }
        BodyType::Raw => match body {
            Value::String(text) => Ok(plain(
                text.clone().into_bytes(),
                "text/plain; charset=utf-8",
            )),
            _ => Err(body_error("A Raw body must be a string.")),
        },
        // `BodyType` may grow (it is `#[non_exhaustive]`): a type this emulator does not know
        // yet is refused, never sent in some other shape.
        _ => Err(body_error(
            "This body_type is not supported by the emulator: use JSON, GraphQL, FormUrlEncoded, FormData or Raw.",
        )),
    }
}

fn json_bytes(value: &Value) -> Result<Vec<u8>, HttpError> {
    serde_json::to_vec(value).map_err(|e| HttpError::internal(format!("JSON encoding failed: {e}")))
}

fn body_error(message: &str) -> HttpError {
    HttpError::invalid_field("body", message)
}

/// Form fields from `[{"name", "value"}, ...]` or `{"name": value, ...}`, in order. Values may
/// be strings, numbers, booleans or `null` (empty); in the object form an array value repeats
/// the field.
pub(crate) fn form_fields(body: &Value) -> Result<Vec<(String, String)>, HttpError> {
    let shape = "A form body is an array of {\"name\", \"value\"} or an object of fields.";
    let mut fields = Vec::new();
    match body {
        Value::Array(items) => {
            for item in items {
                let Value::Object(pair) = item else {
                    return Err(body_error(shape));
                };
                let name = pair.get("name").and_then(Value::as_str);
                let value = pair.get("value").map_or(Some(String::new()), scalar_text);
                let (Some(name), Some(value)) = (name, value) else {
                    return Err(body_error(shape));
                };
                fields.push((name.to_owned(), value));
            }
        }
        Value::Object(map) => {
            for (name, value) in map {
                let values = match value {
                    Value::Array(values) => values.iter().collect(),
                    single => vec![single],
                };
                for value in values {
                    let text = scalar_text(value).ok_or_else(|| body_error(shape))?;
                    fields.push((name.clone(), text));
                }
            }
        }
        _ => return Err(body_error(shape)),
    }
    Ok(fields)
}

/// The text of a string, number, boolean or `null` (empty); `None` for arrays and objects.
pub(crate) fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some(String::new()),
        Value::Array(_) | Value::Object(_) => None,
    }
}

/// A `multipart/form-data` body of text fields and its boundary (one that occurs in no value).
fn multipart(fields: &[(String, String)]) -> (Vec<u8>, String) {
    let boundary = loop {
        let candidate = format!("svc-emulator-{}", uuid::Uuid::new_v4().simple());
        if !fields
            .iter()
            .any(|(n, v)| n.contains(&candidate) || v.contains(&candidate))
        {
            break candidate;
        }
    };
    let mut out = Vec::new();
    for (name, value) in fields {
        out.extend_from_slice(b"--");
        out.extend_from_slice(boundary.as_bytes());
        out.extend_from_slice(b"\r\nContent-Disposition: form-data; name=\"");
        out.extend_from_slice(escape_name(name).as_bytes());
        out.extend_from_slice(b"\"\r\n\r\n");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"--");
    out.extend_from_slice(boundary.as_bytes());
    out.extend_from_slice(b"--\r\n");
    (out, boundary)
}

/// A field name in a quoted `Content-Disposition` parameter, escaped as HTML forms do.
fn escape_name(name: &str) -> String {
    name.replace('"', "%22")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(body_type: BodyType, body: Value) -> (String, Option<String>) {
        let e = encode_body(body_type, &body).unwrap();
        (String::from_utf8(e.bytes).unwrap(), e.content_type)
    }

    #[test]
    fn json_and_graphql() {
        let (t, ct) = text(BodyType::Json, json!([1, "a"]));
        assert_eq!(
            (t.as_str(), ct.as_deref()),
            (r#"[1,"a"]"#, Some("application/json"))
        );
        let (t, _) = text(BodyType::GraphQl, json!("{ me { id } }"));
        assert_eq!(t, r#"{"query":"{ me { id } }"}"#);
        let (t, _) = text(
            BodyType::GraphQl,
            json!({"query": "query Q($id: ID)", "variables": {"id": 1}, "operationName": "Q"}),
        );
        let back: Value = serde_json::from_str(&t).unwrap();
        assert_eq!(back["variables"]["id"], 1);
        assert_eq!(back["operationName"], "Q");
        for bad in [
            json!(1),
            json!({"variables": {}}),
            json!({"query": "q", "variables": 3}),
        ] {
            let e = encode_body(BodyType::GraphQl, &bad).unwrap_err();
            assert_eq!(e.status().as_u16(), 400);
        }
    }

    #[test]
    fn url_encoded_forms() {
        let (t, ct) = text(
            BodyType::FormUrlEncoded,
            json!([{"name": "a b", "value": "x&y=z é"}, {"name": "a b", "value": 2}, {"name": "n"}]),
        );
        assert_eq!(t, "a+b=x%26y%3Dz+%C3%A9&a+b=2&n=");
        assert_eq!(ct.as_deref(), Some("application/x-www-form-urlencoded"));
        let (t, _) = text(
            BodyType::FormUrlEncoded,
            json!({"tag": ["x", "y"], "ok": true, "none": null, "*-._~": "~"}),
        );
        // serde_json's map keeps keys sorted without `preserve_order`.
        assert!(t.contains("tag=x&tag=y"), "{t}");
        assert!(
            t.contains("ok=true") && t.contains("none=") && t.contains("*-._%7E=%7E"),
            "{t}"
        );
        for bad in [
            json!("a=b"),
            json!([1]),
            json!({"a": {"b": 1}}),
            json!([{"value": "x"}]),
        ] {
            assert!(
                encode_body(BodyType::FormUrlEncoded, &bad).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn multipart_forms() {
        let e = encode_body(
            BodyType::FormData,
            &json!([{"name": "a\"b", "value": "line 1\r\nline 2"}, {"name": "c", "value": ""}]),
        )
        .unwrap();
        let ct = e.content_type.unwrap();
        let boundary = ct.strip_prefix("multipart/form-data; boundary=").unwrap();
        let body = String::from_utf8(e.bytes).unwrap();
        assert_eq!(
            body,
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"a%22b\"\r\n\r\nline 1\r\nline 2\r\n\
                 --{boundary}\r\nContent-Disposition: form-data; name=\"c\"\r\n\r\n\r\n--{boundary}--\r\n"
            )
        );
        assert!(e.overrides_header);
    }

    #[test]
    fn raw_is_text() {
        let (t, ct) = text(BodyType::Raw, json!("<x/>"));
        assert_eq!(t, "<x/>");
        assert_eq!(ct.as_deref(), Some("text/plain; charset=utf-8"));
        assert!(encode_body(BodyType::Raw, &json!({"a": 1})).is_err());
    }

    #[test]
    fn components() {
        assert_eq!(component("a b&c=d/é~"), "a%20b%26c%3Dd%2F%C3%A9~");
    }
}
