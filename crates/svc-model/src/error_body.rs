//! Error bodies: whatever a server answers with on failure.
//!
//! The service has no universal error envelope, so [`ErrorBody`] accepts any bytes at all (a JSON
//! object, a JSON array, plain text, HTML, nothing), keeps them, and exposes the common fields
//! when they are there: `error`, `error_code`, field errors (`{"field": ["message"]}`) and
//! `non_field_errors`. [`ErrorResponse`] is the shape the emulator writes.

use std::collections::BTreeMap;
use std::fmt;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Keys of an error object that are not field errors.
/// Keys of the envelope, not fields: `error_decision` marks the emulator's refusals by design
/// (docs/contract.md section 7).
const RESERVED: [&str; 5] = [
    "error",
    "error_code",
    "error_decision",
    "non_field_errors",
    "detail",
];

/// An error response body, kept whole, with the common fields parsed out when present.
///
/// ```
/// use svc_model::ErrorBody;
/// let body = ErrorBody::parse(r#"{"email": ["This field is required."], "non_field_errors": ["No."]}"#);
/// assert_eq!(body.field_errors()["email"], vec!["This field is required."]);
/// assert_eq!(body.non_field_errors(), vec!["No."]);
///
/// let html = ErrorBody::parse("<html>Bad Gateway</html>");
/// assert!(html.json().is_none());
/// assert_eq!(html.text(), Some("<html>Bad Gateway</html>"));
/// ```
#[derive(Clone, PartialEq)]
pub struct ErrorBody {
    raw: Bytes,
    json: Option<Value>,
}

impl ErrorBody {
    /// Parses any body. Never fails: a body that is not JSON is kept as raw bytes.
    pub fn parse(raw: impl Into<Bytes>) -> Self {
        let raw = raw.into();
        let json = serde_json::from_slice::<Value>(&raw).ok();
        Self { raw, json }
    }

    /// The body exactly as received.
    pub fn raw(&self) -> &Bytes {
        &self.raw
    }

    /// The body as text, if it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.raw).ok()
    }

    /// The body as JSON, if it is JSON.
    pub fn json(&self) -> Option<&Value> {
        self.json.as_ref()
    }

    fn object(&self) -> Option<&Map<String, Value>> {
        self.json.as_ref()?.as_object()
    }

    /// The `error` message (or a `detail` message, the other common spelling).
    pub fn error(&self) -> Option<&str> {
        let obj = self.object()?;
        obj.get("error")
            .and_then(Value::as_str)
            .or_else(|| obj.get("detail").and_then(Value::as_str))
    }

    /// The machine-readable `error_code`, e.g. `not_found`.
    pub fn error_code(&self) -> Option<&str> {
        self.object()?.get("error_code")?.as_str()
    }

    /// Errors attached to fields: every key other than `error`, `error_code`, `detail` and
    /// `non_field_errors` whose value is a message or a list of messages.
    pub fn field_errors(&self) -> BTreeMap<&str, Vec<&str>> {
        let Some(obj) = self.object() else {
            return BTreeMap::new();
        };
        obj.iter()
            .filter(|(k, _)| !RESERVED.contains(&k.as_str()))
            .filter_map(|(k, v)| messages(v).map(|m| (k.as_str(), m)))
            .collect()
    }

    /// Errors not attached to a field: `non_field_errors` of an object, or the messages of a
    /// body that is a bare JSON array.
    pub fn non_field_errors(&self) -> Vec<&str> {
        match &self.json {
            Some(Value::Object(obj)) => obj
                .get("non_field_errors")
                .and_then(messages)
                .unwrap_or_default(),
            Some(v @ Value::Array(_)) => messages(v).unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// A one-line summary for messages: the `error`, else the first field or non-field error,
    /// else the start of the text. A message of a JSON body is kept whole up to about 1,000
    /// characters (it was written for a person: a list of what is allowed must not lose its
    /// end); any other body is cut at about 200.
    pub fn summary(&self) -> String {
        if let Some(e) = self.error() {
            return clip(e, MESSAGE_MAX);
        }
        if let Some((field, msgs)) = self.field_errors().into_iter().next() {
            return clip(&format!("{field}: {}", msgs.join(" ")), MESSAGE_MAX);
        }
        if let Some(m) = self.non_field_errors().first() {
            return clip(m, MESSAGE_MAX);
        }
        match self.text() {
            Some(t) if t.trim().is_empty() => "(empty body)".to_owned(),
            Some(t) => clip(t.trim(), TEXT_MAX),
            None => format!("({} bytes of binary body)", self.raw.len()),
        }
    }
}

fn messages(v: &Value) -> Option<Vec<&str>> {
    match v {
        Value::String(s) => Some(vec![s.as_str()]),
        Value::Array(items) => {
            let msgs: Vec<&str> = items.iter().filter_map(Value::as_str).collect();
            (!msgs.is_empty() || items.is_empty()).then_some(msgs)
        }
        _ => None,
    }
}

/// The longest message of a JSON error body a summary keeps whole, in characters.
const MESSAGE_MAX: usize = 1000;

/// The longest start of another body (an HTML page, a proxy's text) a summary keeps.
const TEXT_MAX: usize = 200;

/// `s` on one line, cut after `max` characters.
fn clip(s: &str, max: usize) -> String {
    let one_line: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max).collect();
        format!("{cut}…")
    }
}

impl fmt::Debug for ErrorBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ErrorBody")
            .field("len", &self.raw.len())
            .field("summary", &self.summary())
            .finish()
    }
}

impl fmt::Display for ErrorBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.summary())
    }
}

/// Machine-readable error codes written by the emulator in `error_code`.
pub mod codes {
    /// The request carried no credentials, or unknown ones (`401`).
    pub const NOT_AUTHENTICATED: &str = "not_authenticated";
    /// The credentials are valid but not for this project or resource (`403`).
    pub const PERMISSION_DENIED: &str = "permission_denied";
    /// The path names nothing that exists (`404`).
    pub const NOT_FOUND: &str = "not_found";
    /// The request is malformed or breaks a rule (`400`).
    pub const INVALID: &str = "invalid";
    /// The method is not allowed on this path (`405`).
    pub const METHOD_NOT_ALLOWED: &str = "method_not_allowed";
    /// The server failed (`500`).
    pub const INTERNAL: &str = "internal";
    /// The emulator in lenient mode fails (`500`) where the platform's data engine fails on the
    /// same request (an unknown `_order_by` field, say); strict mode answers `400` there.
    pub const ENGINE_FAILURE: &str = "engine_failure";
    /// The upstream of the HTTP proxy could not be reached (`502`).
    pub const BAD_GATEWAY: &str = "bad_gateway";
    /// The upstream of the HTTP proxy did not answer in time (`504`).
    pub const GATEWAY_TIMEOUT: &str = "gateway_timeout";
    /// The HTTP proxy's target is not on the allow-list (`403`).
    pub const TARGET_NOT_ALLOWED: &str = "target_not_allowed";
    /// The server is unavailable for now (`503`).
    pub const UNAVAILABLE: &str = "unavailable";
}

/// The error object the emulator answers with: `error`, `error_code`, and field errors
/// (`{"field": ["message"]}`) when a field is at fault.
///
/// ```
/// use svc_model::ErrorResponse;
/// let e = ErrorResponse::new("invalid", "Invalid input.").field("email", "This field is required.");
/// let text = serde_json::to_string(&e).unwrap();
/// assert_eq!(text, r#"{"error":"Invalid input.","error_code":"invalid","email":["This field is required."]}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorResponse {
    /// A human-readable message.
    pub error: String,
    /// A machine-readable code from [`codes`].
    pub error_code: String,
    /// Messages per field (`non_field_errors` included, when set).
    #[serde(flatten)]
    pub fields: BTreeMap<String, Vec<String>>,
}

impl ErrorResponse {
    /// An error with a code and a message, and no field errors.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            error: message.into(),
            error_code: code.into(),
            fields: BTreeMap::new(),
        }
    }

    /// Adds a message for `field`.
    pub fn field(mut self, field: impl Into<String>, message: impl Into<String>) -> Self {
        self.fields
            .entry(field.into())
            .or_default()
            .push(message.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn any_body_parses() {
        for raw in [
            &b""[..],
            b"null",
            b"[]",
            b"{}",
            b"<html><body>502</body></html>",
            b"\xff\xfe\x00",
            b"{\"error\": 3}",
            b"\"just a string\"",
        ] {
            let body = ErrorBody::parse(Bytes::copy_from_slice(raw));
            assert_eq!(body.raw().as_ref(), raw);
            let _ = body.summary();
            let _ = body.field_errors();
            let _ = body.non_field_errors();
            assert!(body.error().is_none());
        }
    }

    #[test]
    fn the_emulators_decision_mark_is_not_a_field_error() {
        let body = ErrorBody::parse(Bytes::from_static(
            br#"{"error":"x","error_code":"invalid","_relation":["x"],"error_decision":"stricter"}"#,
        ));
        assert_eq!(
            body.field_errors().keys().copied().collect::<Vec<_>>(),
            ["_relation"]
        );
    }

    #[test]
    fn common_fields() {
        let body = ErrorBody::parse(
            r#"{"error":"Not found.","error_code":"not_found","name":"too long","n":[1]}"#,
        );
        assert_eq!(body.error(), Some("Not found."));
        assert_eq!(body.error_code(), Some("not_found"));
        let fields = body.field_errors();
        assert_eq!(fields["name"], vec!["too long"]);
        assert!(!fields.contains_key("n"));
        assert_eq!(body.summary(), "Not found.");
    }

    #[test]
    fn array_body_is_non_field_errors() {
        let body = ErrorBody::parse(r#"["a", "b"]"#);
        assert_eq!(body.non_field_errors(), vec!["a", "b"]);
        assert_eq!(body.summary(), "a");
    }

    #[test]
    fn summary_is_clipped_and_one_line() {
        let long = "x\n".repeat(500);
        let s = ErrorBody::parse(long).summary();
        assert!(s.chars().count() <= 201);
        assert!(!s.contains('\n'));
        assert_eq!(ErrorBody::parse("").summary(), "(empty body)");
        // A JSON message is written for a person: kept whole up to 1,000 characters.
        let listed = format!("use one of: {}.", vec!["lookup"; 80].join(", "));
        let body = ErrorBody::parse(serde_json::to_vec(&json!({ "error": listed })).unwrap());
        assert_eq!(body.summary(), listed);
        let huge = "y ".repeat(2000);
        let body = ErrorBody::parse(serde_json::to_vec(&json!({ "error": huge })).unwrap());
        assert_eq!(body.summary().chars().count(), 1001);
    }

    #[test]
    fn error_response_round_trips_through_error_body() {
        let e = ErrorResponse::new(codes::INVALID, "Bad.").field("uid", "Taken.");
        let body = ErrorBody::parse(serde_json::to_vec(&e).unwrap());
        assert_eq!(body.error_code(), Some("invalid"));
        assert_eq!(body.field_errors()["uid"], vec!["Taken."]);
    }
}
