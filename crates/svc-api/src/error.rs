//! The one error type of the SDK.

use std::fmt;

use bytes::Bytes;
use http::{Method, StatusCode};
use svc_model::ErrorBody;
use svc_transport::TransportError;

/// Whether a failed request reached the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// Nothing was sent: the input was refused, or the connection never opened.
    No,
    /// The request may have reached the server (a timeout or a connection lost mid-way).
    Maybe,
    /// The server answered.
    Yes,
}

/// Everything that can go wrong with a call. Every variant says whether the request was sent
/// ([`Error::sent`]); [`Error::status`] and [`Error::api`] give the server's answer when there
/// was one.
///
/// ```
/// # async fn demo(client: svc_api::Client) {
/// match client.pages().get("home").await {
///     Ok(page) => println!("{:?}", page.name()),
///     Err(e) if e.is_not_found() => println!("no such page"),
///     Err(e) => eprintln!("{e}"), // says what went wrong and what to try
/// }
/// # }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The input was refused before anything was sent (an empty identifier, a missing project,
    /// an out-of-range page size, ...).
    InvalidInput(InvalidInput),
    /// The request could not be sent or its answer could not be read.
    Transport(TransportError),
    /// The overall timeout ran out, across all attempts.
    Timeout(std::time::Duration),
    /// The server answered with an error status.
    Api(Box<ApiError>),
    /// The server answered with a success status, but the body is not what the operation
    /// returns.
    Decode(Box<DecodeError>),
    /// The user session could not provide a credential: its refresh failed or was rejected
    /// (then the session is cleared: sign in again), or its token store failed. The request
    /// itself was not sent.
    Auth(svc_auth::SessionError),
}

/// Input refused before anything was sent.
#[derive(Debug)]
pub struct InvalidInput {
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl InvalidInput {
    /// What was wrong and what to do about it.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// An error status from the server, with the body kept whole.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The method of the failed request.
    pub method: Method,
    /// The path of the failed request (no query string, no host).
    pub path: String,
    /// The body, raw and parsed.
    pub body: ErrorBody,
    /// The `Retry-After` the server asked for, in seconds, if any.
    pub retry_after: Option<u64>,
}

/// A success response whose body could not be decoded.
#[derive(Debug)]
pub struct DecodeError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body that failed to decode.
    pub body: Bytes,
    /// What serde said.
    pub source: serde_json::Error,
}

impl Error {
    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::InvalidInput(InvalidInput {
            message: message.into(),
            source: None,
        })
    }

    pub(crate) fn invalid_because(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::InvalidInput(InvalidInput {
            message: message.into(),
            source: Some(Box::new(source)),
        })
    }

    pub(crate) fn decode(status: StatusCode, body: Bytes, source: serde_json::Error) -> Self {
        Self::Decode(Box::new(DecodeError {
            status,
            body,
            source,
        }))
    }

    /// Whether the request reached the server.
    pub fn sent(&self) -> Sent {
        match self {
            Self::InvalidInput(_) | Self::Auth(_) => Sent::No,
            Self::Transport(e) => match e.was_sent() {
                svc_transport::Sent::No => Sent::No,
                _ => Sent::Maybe,
            },
            Self::Timeout(_) => Sent::Maybe,
            Self::Api(_) | Self::Decode(_) => Sent::Yes,
        }
    }

    /// The HTTP status of the server's answer, if there was one.
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Self::Api(e) => Some(e.status),
            Self::Decode(e) => Some(e.status),
            _ => None,
        }
    }

    /// The server's error answer, if there was one.
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Self::Api(e) => Some(e),
            _ => None,
        }
    }

    /// The error body, if the server answered with an error status.
    pub fn body(&self) -> Option<&ErrorBody> {
        self.api().map(|e| &e.body)
    }

    /// `404 Not Found`.
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(StatusCode::NOT_FOUND)
    }

    /// `401` or `403`: the credentials are missing, unknown, or not for this project or resource.
    pub fn is_auth(&self) -> bool {
        matches!(self, Self::Auth(e) if e.is_auth())
            || matches!(
                self.status(),
                Some(StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
            )
    }

    /// Whether the same request could succeed if tried again: connection failures, timeouts,
    /// `429`, `502`, `503`, `504`. (The client retries these itself for idempotent requests,
    /// as its [`RetryPolicy`](crate::RetryPolicy) allows.)
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Transport(e) => e.is_retryable(),
            Self::Timeout(_) => true,
            Self::Api(e) => is_retryable_status(e.status),
            _ => false,
        }
    }
}

pub(crate) fn is_retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 502 | 503 | 504)
}

fn hint(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "check the fields named above",
        401 => "check the API key or token: it is missing, unknown or expired",
        403 => "the credentials are valid, but not for this project, environment or resource",
        404 => "check the project, environment and identifiers in the path",
        405 => "this operation is not available on this path",
        429 => "too many requests: slow down (the client retries idempotent requests)",
        500..=599 => "the server failed; try again later",
        _ => "",
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidInput(e) => write!(f, "invalid input, nothing was sent: {}", e.message),
            Self::Transport(e) => write!(f, "request failed: {e}"),
            Self::Timeout(d) => write!(
                f,
                "no answer within the overall timeout of {d:?} (all attempts); the request may have reached the server"
            ),
            Self::Api(e) => {
                write!(f, "{} {} answered {}", e.method, e.path, e.status)?;
                if let Some(code) = e.body.error_code() {
                    write!(f, " ({code})")?;
                }
                let summary = e.body.summary();
                write!(f, ": {}", summary.trim_end_matches('.'))?;
                let hint = hint(e.status);
                if !hint.is_empty() {
                    write!(f, "; {hint}")?;
                }
                Ok(())
            }
            Self::Auth(e) => write!(
                f,
                "the session has no usable credential, nothing was sent: {e}"
            ),
            Self::Decode(e) => write!(
                f,
                "the server answered {} with a body this operation cannot read ({} bytes): {}",
                e.status,
                e.body.len(),
                e.source
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::InvalidInput(e) => e
                .source
                .as_deref()
                .map(|s| s as &(dyn std::error::Error + 'static)),
            Self::Transport(e) => Some(e),
            Self::Decode(e) => Some(&e.source),
            Self::Auth(e) => Some(e),
            Self::Timeout(_) | Self::Api(_) => None,
        }
    }
}

impl From<svc_model::InvalidIdentifier> for Error {
    fn from(e: svc_model::InvalidIdentifier) -> Self {
        Self::invalid_because(e.to_string(), e)
    }
}

/// The SDK's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
