//! Errors answered over HTTP: a status code and an [`ErrorResponse`] JSON object.
//!
//! Every route of both hosts fails through [`HttpError`], so every error body has the same shape:
//! `error`, `error_code`, and field errors when a field is at fault (docs/contract.md section 7).

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use svc_model::ErrorResponse;
use svc_model::error_body::codes;

use svc_emulator_state::config::registry::ProjectEntry;
use svc_emulator_state::storage::StoreError;
use svc_engine::EngineError;

/// An error response of the emulator.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpError {
    status: StatusCode,
    body: ErrorResponse,
    /// `Retry-After`, in seconds (a busy resource's `503`).
    retry_after: Option<u64>,
    /// `error_decision`: `stricter` for a refusal by design of what the data engine fails on or
    /// misreads (docs/contract.md section 7).
    decision: Option<&'static str>,
}

/// Keys that [`ErrorResponse`] writes itself or that clients read as non-field errors; a field
/// error under one of these names would clash with them, so it becomes a non-field error.
const RESERVED_KEYS: [&str; 5] = [
    "error",
    "error_code",
    "error_decision",
    "non_field_errors",
    "detail",
];

impl HttpError {
    /// An error with any status, code and message.
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            body: ErrorResponse::new(code, message),
            retry_after: None,
            decision: None,
        }
    }

    /// Asks the client to wait `seconds` before trying again (`Retry-After`).
    pub(crate) fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds);
        self
    }

    /// `401`: no credentials, or unknown ones.
    pub fn not_authenticated() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            codes::NOT_AUTHENTICATED,
            "Authentication credentials were not provided or are not valid.",
        )
    }

    /// `403`: valid credentials, but not for this project or resource.
    pub fn permission_denied() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            codes::PERMISSION_DENIED,
            "You do not have permission to perform this action.",
        )
    }

    /// `404` with a message saying what was not found.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, codes::NOT_FOUND, message)
    }

    /// `404` for a resource `name` that `project` does not have, naming the resources it has
    /// (the caller's credentials are the project's: its resources are no secret to it). The
    /// built-in tools resource is not listed: it is reached through users and teams.
    pub fn unknown_resource(project: &ProjectEntry, name: &str) -> Self {
        let names: Vec<&str> = project.resources.iter().map(|r| r.name.as_str()).collect();
        let listed = match names.as_slice() {
            [] => "The project has no resources.".to_owned(),
            names => format!("The project's resources: {}.", names.join(", ")),
        };
        Self::not_found(format!("Resource {name:?} not found. {listed}"))
    }

    /// `400` without a field at fault.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, codes::INVALID, message)
    }

    /// `400` naming the field at fault.
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::invalid(format!("{field}: {message}")).with_field(field, message)
    }

    /// `405`.
    pub fn method_not_allowed() -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            codes::METHOD_NOT_ALLOWED,
            "Method not allowed.",
        )
    }

    /// The same refusal, marked as one by design (`"error_decision": "stricter"`): the data
    /// engine fails on the request or misreads it.
    pub fn stricter(mut self) -> Self {
        self.decision = Some("stricter");
        self
    }

    /// `500`: the emulator itself failed.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, codes::INTERNAL, message)
    }

    /// Adds a field error; a field named like one of the envelope's own keys is recorded as a
    /// non-field error instead, so that the JSON object never has a key twice.
    pub fn with_field(mut self, field: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        self.body = if RESERVED_KEYS.contains(&field) {
            self.body
                .field("non_field_errors", format!("{field}: {message}"))
        } else {
            self.body.field(field, message)
        };
        self
    }

    /// The status code.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The error body (a workflow's failed step answers with its message).
    pub fn body(&self) -> &ErrorResponse {
        &self.body
    }
}

/// The header that repeats a refusal's `error_decision` (an answer to `HEAD` has no body).
pub(crate) const DECISION_HEADER: &str = "svc-error-decision";

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let mut response = match self.decision {
            Some(decision) => {
                let mut body = serde_json::to_value(&self.body).unwrap_or_default();
                body["error_decision"] = decision.into();
                // In a header too: the answer to a `HEAD` has no body.
                let mut response = (self.status, Json(body)).into_response();
                response
                    .headers_mut()
                    .insert(DECISION_HEADER, HeaderValue::from_static(decision));
                response
            }
            None => (self.status, Json(self.body)).into_response(),
        };
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"api\""),
            );
        }
        response
    }
}

/// The error body of each [`EngineError`] (its status is the engine's, `EngineError::status`):
/// the one place where engine failures become HTTP answers.
pub(crate) trait EngineReply {
    /// `error`, `error_code`, and the field errors of an invalid request.
    fn body(&self) -> ErrorResponse;
}

impl EngineReply for EngineError {
    fn body(&self) -> ErrorResponse {
        match self {
            EngineError::Invalid {
                message, fields, ..
            } => {
                let mut e = ErrorResponse::new(self.code(), message.clone());
                for (field, messages) in fields {
                    // A field named like a key of the body itself (a filter `error=1`, a column
                    // `error_code`) goes under `non_field_errors`, as `with_field` does: the
                    // body never repeats a key.
                    if field != "non_field_errors" && RESERVED_KEYS.contains(&field.as_str()) {
                        let list = e.fields.entry("non_field_errors".to_owned()).or_default();
                        list.extend(messages.iter().map(|m| format!("{field}: {m}")));
                    } else {
                        e.fields
                            .entry(field.clone())
                            .or_default()
                            .extend(messages.iter().cloned());
                    }
                }
                e
            }
            EngineError::Internal(m) => ErrorResponse::new(self.code(), m.clone()),
            EngineError::EngineFails { message: m, .. } => ErrorResponse::new(
                self.code(),
                format!("{m} (lenient mode answers 500, as the data engine does)"),
            ),
            not_found => ErrorResponse::new(not_found.code(), not_found.to_string()),
        }
    }
}

impl From<EngineError> for HttpError {
    fn from(error: EngineError) -> Self {
        Self {
            status: StatusCode::from_u16(error.status())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            body: error.body(),
            retry_after: None,
            decision: matches!(error, EngineError::Invalid { stricter: true, .. })
                .then_some("stricter"),
        }
    }
}

impl From<StoreError> for HttpError {
    fn from(error: StoreError) -> Self {
        Self::internal(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn errors_map_to_status_and_body() {
        let e = EngineError::RecordNotFound;
        assert_eq!(
            (e.status(), e.body().error_code.as_str()),
            (404, "not_found")
        );
        let e = EngineError::field("email", "Taken.");
        let body = serde_json::to_value(e.body()).unwrap();
        assert_eq!(
            body,
            json!({"error": "Taken.", "error_code": "invalid", "email": ["Taken."]})
        );
        let e = EngineError::Internal("boom".into());
        assert_eq!(
            (e.status(), e.body().error_code.as_str()),
            (500, "internal")
        );
        assert_eq!(EngineError::invalid("x").status(), 400);
    }

    #[test]
    fn reserved_field_names_become_non_field_errors() {
        let e = HttpError::invalid("bad")
            .with_field("error", "x")
            .with_field("name", "y");
        let json = serde_json::to_value(&e.body).unwrap();
        assert_eq!(json["error"], "bad");
        assert_eq!(json["non_field_errors"][0], "error: x");
        assert_eq!(json["name"][0], "y");
    }

    #[test]
    fn a_field_named_like_a_body_key_never_repeats_the_key() {
        let mut fields = std::collections::BTreeMap::new();
        fields.insert("error".to_owned(), vec!["Unknown field".to_owned()]);
        fields.insert("non_field_errors".to_owned(), vec!["other".to_owned()]);
        fields.insert("age".to_owned(), vec!["not a valid integer".to_owned()]);
        let body = svc_engine::EngineError::fields("Invalid", fields).body();
        let json = serde_json::to_string(&body).unwrap();
        assert_eq!(json.matches("\"error\":").count(), 1, "{json}");
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["error"], "Invalid");
        assert_eq!(
            value["non_field_errors"],
            serde_json::json!(["error: Unknown field", "other"])
        );
        assert_eq!(value["age"][0], "not a valid integer");
    }

    /// A refusal by design says so in its body (`error_decision`), and a field named like that
    /// key is a non-field error; other refusals carry no such key.
    #[tokio::test]
    async fn a_refusal_by_design_is_marked_stricter() {
        async fn body(e: EngineError) -> serde_json::Value {
            let response = HttpError::from(e).into_response();
            assert_eq!(response.status(), StatusCode::BAD_REQUEST);
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
                .await
                .unwrap();
            serde_json::from_slice(&bytes).unwrap()
        }
        let refused = body(EngineError::stricter("_relation", "joins on a column")).await;
        assert_eq!(
            refused,
            json!({"error": "joins on a column", "error_code": "invalid",
                   "_relation": ["joins on a column"], "error_decision": "stricter"})
        );
        let strict = body(EngineError::engine_fails(false, "tz", "fails")).await;
        assert_eq!(strict["error_decision"], "stricter");
        let plain = body(EngineError::field("error_decision", "no such field")).await;
        assert!(plain.get("error_decision").is_none(), "{plain}");
        assert_eq!(
            plain["non_field_errors"][0],
            "error_decision: no such field"
        );
    }
}
