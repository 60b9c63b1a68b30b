//! The error of every records operation, with its HTTP status and JSON body.

use std::collections::BTreeMap;

use svc_model::ErrorResponse;
use svc_model::error_body::codes;

/// A records operation failed. Each variant maps to an HTTP status ([`status`](Self::status)) and
/// to the JSON body the emulator answers with ([`body`](Self::body)).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RecordsError {
    /// The model or the record does not exist (`404`, `not_found`).
    #[error("{0}")]
    NotFound(String),
    /// The request is malformed or breaks a rule of the database (`400`, `invalid`), with
    /// messages per field (query parameter or body key) when one is at fault.
    #[error("{message}")]
    Invalid {
        /// A human-readable message.
        message: String,
        /// Messages per field; `non_field_errors` for errors not tied to one field.
        fields: BTreeMap<String, Vec<String>>,
    },
    /// The database failed in a way the request did not cause (`500`, `internal`).
    #[error("{0}")]
    Internal(String),
}

impl RecordsError {
    /// The HTTP status code: `404`, `400` or `500`.
    pub fn status(&self) -> u16 {
        match self {
            Self::NotFound(_) => 404,
            Self::Invalid { .. } => 400,
            Self::Internal(_) => 500,
        }
    }

    /// The JSON error body: `error`, `error_code`, and field errors when there are any.
    pub fn body(&self) -> ErrorResponse {
        match self {
            Self::NotFound(m) => ErrorResponse::new(codes::NOT_FOUND, m.clone()),
            Self::Invalid { message, fields } => {
                let mut e = ErrorResponse::new(codes::INVALID, message.clone());
                e.fields = fields.clone();
                e
            }
            Self::Internal(m) => ErrorResponse::new(codes::INTERNAL, m.clone()),
        }
    }

    /// A `400` with a message and no field errors.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid {
            message: message.into(),
            fields: BTreeMap::new(),
        }
    }

    /// A `400` whose message is also attached to `field`.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        let mut fields = BTreeMap::new();
        fields.insert(field.into(), vec![message.clone()]);
        Self::Invalid { message, fields }
    }

    /// A `400` carrying several field errors, with a summary message.
    pub fn fields(message: impl Into<String>, fields: BTreeMap<String, Vec<String>>) -> Self {
        Self::Invalid {
            message: message.into(),
            fields,
        }
    }

    pub(crate) fn model_not_found(model: &str) -> Self {
        Self::NotFound(format!("Model {model:?} not found."))
    }

    pub(crate) fn record_not_found() -> Self {
        Self::NotFound("Not found.".to_owned())
    }
}

impl From<rusqlite::Error> for RecordsError {
    fn from(e: rusqlite::Error) -> Self {
        Self::Internal(format!("database error: {e}"))
    }
}
