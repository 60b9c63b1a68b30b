//! The error of every engine operation: what went wrong, in the engine's own terms, and the
//! status the engine answers it with ([`EngineError::status`]). Its error body is written by
//! the http layer (svc-emulator's `http::error::EngineReply`). Not `#[non_exhaustive]`: the
//! emulator, its one user, matches every variant, so a new one is a compile error there.

use std::collections::BTreeMap;

/// A records, aggregate, group or SQL operation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EngineError {
    /// The resource has no model of that name.
    #[error("Model {0:?} not found.")]
    ModelNotFound(String),
    /// No record has that primary key (including a key that cannot be of the key's kind).
    #[error("Not found.")]
    RecordNotFound,
    /// The request is malformed or breaks a rule of the database, with messages per input (a
    /// query parameter or body key, named as on the wire) when one is at fault.
    #[error("{message}")]
    Invalid {
        /// A human-readable message.
        message: String,
        /// Messages per input; `non_field_errors` for errors not tied to one input.
        fields: BTreeMap<String, Vec<String>>,
        /// A refusal by design of what the data engine fails on or misreads (a `[decision:
        /// stricter]` of docs/contract.md): its body says so (`"error_decision":
        /// "stricter"`), so that a comparison with the engine can tell it from a difference.
        stricter: bool,
    },
    /// The data engine fails (HTTP 500) on this request, and the emulator was asked to answer
    /// like it (lenient mode); in strict mode the same request is an [`Invalid`](Self::Invalid).
    #[error("{message}")]
    EngineFails {
        /// The input at fault (named in strict mode's field error).
        param: String,
        /// What fails, and why.
        message: String,
    },
    /// The database failed in a way the request did not cause.
    #[error("{0}")]
    Internal(String),
}

impl EngineError {
    /// The HTTP status the engine answers with: `404` for a missing model or record, `400` for
    /// an invalid request, `500` for a database failure or where the engine fails.
    pub fn status(&self) -> u16 {
        match self {
            EngineError::ModelNotFound(_) | EngineError::RecordNotFound => 404,
            EngineError::Invalid { .. } => 400,
            EngineError::Internal(_) | EngineError::EngineFails { .. } => 500,
        }
    }

    /// The `error_code` of its answer (svc-model's `error_body::codes`).
    pub fn code(&self) -> &'static str {
        use svc_model::error_body::codes;
        match self {
            EngineError::ModelNotFound(_) | EngineError::RecordNotFound => codes::NOT_FOUND,
            EngineError::Invalid { .. } => codes::INVALID,
            EngineError::Internal(_) => codes::INTERNAL,
            EngineError::EngineFails { .. } => codes::ENGINE_FAILURE,
        }
    }

    /// An invalid request, with a message and no input named.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::Invalid {
            message: message.into(),
            fields: BTreeMap::new(),
            stricter: false,
        }
    }

    /// An invalid request whose message is also attached to the input `field`.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        let mut fields = BTreeMap::new();
        fields.insert(field.into(), vec![message.clone()]);
        Self::Invalid {
            message,
            fields,
            stricter: false,
        }
    }

    /// A refusal by design, naming `field`, of a request the data engine fails on or misreads
    /// (a `[decision: stricter]` of docs/contract.md).
    pub fn stricter(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::field(field, message).by_design()
    }

    /// The same refusal, its `error` saying `message` (what the engine's words in `fields`
    /// mean, and what to do); other errors stay as they are.
    pub fn explained(self, explanation: String) -> Self {
        match self {
            Self::Invalid {
                fields, stricter, ..
            } => Self::Invalid {
                message: explanation,
                fields,
                stricter,
            },
            other => other,
        }
    }

    /// The same refusal, marked as one by design (`"error_decision": "stricter"`): for a
    /// refusal the engine shares on some values and not on others the emulator cannot tell
    /// apart. Other errors stay as they are.
    pub fn by_design(self) -> Self {
        match self {
            Self::Invalid {
                message, fields, ..
            } => Self::Invalid {
                message,
                fields,
                stricter: true,
            },
            other => other,
        }
    }

    /// A request the data engine fails on (500): in strict mode an invalid request naming
    /// `field` (`[decision: stricter]`), in lenient mode [`EngineFails`](Self::EngineFails), as
    /// the engine answers.
    pub fn engine_fails(lenient: bool, field: &str, message: impl Into<String>) -> Self {
        let failure = Self::EngineFails {
            param: field.to_owned(),
            message: message.into(),
        };
        if lenient { failure } else { failure.strict() }
    }

    /// In strict mode an [`EngineFails`](Self::EngineFails) is an invalid request naming its
    /// input (`[decision: stricter]`); every other error stays as it is.
    pub fn strict(self) -> Self {
        match self {
            Self::EngineFails { param, message } => Self::stricter(param, message),
            other => other,
        }
    }

    /// [`strict`](Self::strict) unless the request is `lenient` (where the engine's failure
    /// is answered as the engine answers it).
    pub fn unless_lenient(self, lenient: bool) -> Self {
        if lenient { self } else { self.strict() }
    }

    /// The engine's answer to a write that broke a unique key on `column` (its pattern finds
    /// the column in the database's `message`): the column's error, after the database's
    /// message.
    pub fn duplicate_value(message: &str, column: &str) -> Self {
        Self::Invalid {
            message: format!(
                "{message}: a record with the same {column} already exists; send another value."
            ),
            fields: BTreeMap::from([(
                column.to_owned(),
                vec!["record with the same value already exists".to_owned()],
            )]),
            stricter: false,
        }
    }

    /// An invalid request naming several inputs, with a summary message.
    pub fn fields(message: impl Into<String>, fields: BTreeMap<String, Vec<String>>) -> Self {
        Self::Invalid {
            message: message.into(),
            fields,
            stricter: false,
        }
    }
}
