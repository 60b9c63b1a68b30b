//! The one error type of the SDK.

use std::fmt;

use bytes::Bytes;
use http::{Method, StatusCode};
use svc_model::ErrorBody;
use svc_transport::TransportError;

pub use svc_transport::Sent;

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
    /// The server's answers, each well-formed, cannot be followed, so the operation stopped:
    /// a [`RecordStream`](crate::RecordStream) answered with the same page twice in a row
    /// would otherwise loop forever. Requests were sent ([`sent`](Self::sent) is
    /// [`Sent::Yes`]); the message says what was seen.
    Protocol(String),
    /// A workflow ran and failed: the server answered `200` with `{"success": false, "error":
    /// "..."}` ([`Workflow::run`](crate::Workflow::run)). Its steps may have changed data
    /// before the failing one, so the request is never repeated; [`WorkflowError::message`]
    /// is the server's `error` text.
    Workflow(Box<WorkflowError>),
}

/// A workflow that ran and failed ([`Error::Workflow`]): which workflow, and the server's own
/// account of the failure, kept as it came.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkflowError {
    uid: String,
    message: Option<String>,
}

impl WorkflowError {
    #[cfg(feature = "workflows")]
    pub(crate) fn new(uid: impl Into<String>, message: Option<String>) -> Self {
        Self {
            uid: uid.into(),
            message,
        }
    }

    /// The workflow's uid, as the call named it.
    pub fn uid(&self) -> &str {
        &self.uid
    }

    /// The server's `error` text, e.g. `step 2 (shop.refund): Missing input: id.`; `None` when
    /// the answer had none.
    pub fn message(&self) -> Option<&str> {
        self.message.as_deref()
    }
}

impl fmt::Display for WorkflowError {
    /// `workflow "wf-refund" failed: <the server's error>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "workflow {:?} failed: ", self.uid)?;
        match &self.message {
            Some(message) => f.write_str(message),
            None => f.write_str("the server gave no reason"),
        }
    }
}

impl std::error::Error for WorkflowError {}

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
#[non_exhaustive]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The method of the failed request.
    pub method: Method,
    /// The path of the failed request (no query string, no host).
    pub path: String,
    /// The body, raw and parsed.
    pub body: ErrorBody,
    /// The `Retry-After` the server asked for, in seconds, if any. Both forms of the header
    /// are read: delay-seconds (`120`; a number too large for a `u64` is `u64::MAX`) and an
    /// HTTP-date (`Fri, 01 May 2026 10:00:00 GMT`, or an obsolete form), which becomes the
    /// time from the system clock's now to that date, rounded up to a whole second, and `0`
    /// when the date is past. `None` when the header is absent or is neither form.
    pub retry_after: Option<u64>,
}

/// A success response whose body could not be decoded.
///
/// A success body may hold secrets (the tokens of a login or a refresh), so `Debug` and
/// `Display` show its length and where and why decoding failed, never its text: serde's own
/// message quotes the offending value (``invalid type: string "eyJ..."``), so it is shown only
/// in a form with the input's values left out. The body and serde's error are still here, in
/// the fields, for code that wants them.
#[non_exhaustive]
pub struct DecodeError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body that failed to decode.
    pub body: Bytes,
    /// What serde said. Its message may quote the body: do not log it.
    pub source: serde_json::Error,
}

impl DecodeError {
    /// Why decoding failed, without any value taken from the body: serde's message when it is
    /// made of the expected type's names only (syntax errors, missing or duplicate fields),
    /// otherwise its `expected ...` part. Ends with the line and column.
    pub fn reason(&self) -> String {
        redacted_json_error(&self.source)
    }
}

/// serde_json's message for `e` without the input's values.
fn redacted_json_error(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    let full = e.to_string();
    // serde_json appends " at line L column C"; the input comes before it.
    let message = match full.rfind(" at line ") {
        Some(at) if e.line() > 0 => &full[..at],
        _ => full.as_str(),
    };
    let what = match e.classify() {
        // Fixed texts: `expected value`, `trailing characters`, `EOF while parsing ...`.
        Category::Syntax | Category::Eof | Category::Io => message.to_owned(),
        // The names come from the type being decoded, not from the body.
        Category::Data
            if message.starts_with("missing field `")
                || message.starts_with("duplicate field `") =>
        {
            message.to_owned()
        }
        // Not read from the body (no position) and not serde's wording about a value: a
        // message the SDK wrote itself, e.g. `the server answered {"success": false}`.
        Category::Data
            if e.line() == 0
                && ![
                    "invalid type",
                    "invalid value",
                    "invalid length",
                    "unknown ",
                ]
                .iter()
                .any(|p| message.starts_with(p)) =>
        {
            message.to_owned()
        }
        // `invalid type: string "...", expected X`, `unknown variant `...`, expected one of
        // ...`: the part before `, expected` comes from the body. The last `, expected` is
        // serde's own (the body's text comes first).
        Category::Data => match message.rfind(", expected ") {
            Some(at) => format!("unexpected value{}", &message[at..]),
            None => "a value is not of the expected type or format".to_owned(),
        },
    };
    if e.line() > 0 {
        format!("{what} at line {} column {}", e.line(), e.column())
    } else {
        what
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodeError")
            .field("status", &self.status)
            .field("body_len", &self.body.len())
            .field("reason", &self.reason())
            .finish_non_exhaustive()
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a {} body of {} bytes could not be decoded: {}",
            self.status,
            self.body.len(),
            self.reason()
        )
    }
}

/// The source of [`Error::Decode`] in an error chain: it shows the reason without the body's
/// values; its own source is `None`, so chain printers never reach serde's message.
impl std::error::Error for DecodeError {}

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

    #[cfg(feature = "_sends")]
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
            Self::Transport(e) => e.was_sent(),
            Self::Timeout(_) => Sent::Maybe,
            Self::Api(_) | Self::Decode(_) | Self::Protocol(_) | Self::Workflow(_) => Sent::Yes,
        }
    }

    /// The HTTP status of the server's answer, if there was one (`200` for a failed
    /// [`Workflow`](Self::Workflow): the failure is in the body).
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Self::Api(e) => Some(e.status),
            Self::Decode(e) => Some(e.status),
            Self::Workflow(_) => Some(StatusCode::OK),
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

    /// The failed workflow's details, if a workflow ran and failed.
    pub fn workflow(&self) -> Option<&WorkflowError> {
        match self {
            Self::Workflow(e) => Some(e),
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

/// What to try, from the status and what the body says (empty when nothing useful can be
/// added to the server's own message).
fn hint(status: StatusCode, summary: &str) -> &'static str {
    let lower = summary.to_ascii_lowercase();
    match status.as_u16() {
        // The fields at fault beside the one the summary names are said after it
        // (`other_fields`): the message is one line, with nothing above it to point to.
        400 => "",
        401 => "check the API key or token: it is missing, unknown or expired",
        403 => "the credentials are valid, but not for this project, environment or resource",
        // The records list's answer to a page past the last one.
        404 if lower.contains("invalid page") => {
            "ask for a page within the count (the list's `count` over its page size)"
        }
        404 => "check the project, environment and identifiers in the path",
        405 => "this operation is not available on this path",
        429 => "too many requests: slow down (the client retries idempotent requests)",
        _ if lower.contains("try again") => "",
        500..=599 => "the server failed; try again later",
        _ => "",
    }
}

impl fmt::Display for ApiError {
    /// `GET /path answered 404 Not Found (code): the server's message; what to try`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} answered {}", self.method, self.path, self.status)?;
        if let Some(code) = self.body.error_code() {
            write!(f, " ({code})")?;
        }
        let summary = self.body.summary();
        write!(f, ": {}", summary.trim_end_matches('.'))?;
        for other in other_fields(&self.body, &summary, &self.path) {
            write!(f, "; {}", other.trim_end_matches('.'))?;
        }
        let hint = hint(self.status, &summary);
        if !hint.is_empty() {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

/// The fields at fault that `summary` does not name, each as `field: message`, for a one-line
/// message that says every one. A SQL error's fields are the request's `query` and its
/// parameters, which its message names already.
fn other_fields(body: &ErrorBody, summary: &str, path: &str) -> Vec<String> {
    if path.trim_end_matches('/').ends_with("/sql_get_query") {
        return Vec::new();
    }
    body.field_errors()
        .into_iter()
        .filter(|(field, _)| !summary.starts_with(&format!("{field}: ")))
        .filter(|(_, messages)| messages.iter().all(|m| !summary.contains(m)))
        .map(|(field, messages)| format!("{field}: {}", messages.join(" ")))
        .collect()
}

impl std::error::Error for ApiError {}

impl ApiError {
    /// The HTTP status (also the field [`status`](Self::status)): the same call as
    /// [`Error::status`], so code that moves from one to the other need not change.
    pub fn status(&self) -> StatusCode {
        self.status
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
            Self::Api(e) => fmt::Display::fmt(e, f),
            Self::Auth(e) => write!(
                f,
                "the session has no usable credential, nothing was sent: {e}"
            ),
            Self::Decode(e) => write!(
                f,
                "the server answered {} with a body this operation cannot read ({} bytes): {}",
                e.status,
                e.body.len(),
                e.reason()
            ),
            Self::Protocol(message) => {
                write!(f, "the server's answers cannot be followed: {message}")
            }
            Self::Workflow(e) => fmt::Display::fmt(e, f),
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
            Self::Decode(e) => Some(e.as_ref()),
            Self::Auth(e) => Some(e),
            Self::Timeout(_) | Self::Api(_) | Self::Protocol(_) | Self::Workflow(_) => None,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transport_error_says_whether_it_was_sent_in_the_same_words() {
        use svc_transport::TransportErrorKind::{Connect, Io, ResponseTooLarge};
        let sent = |kind, sent: Option<Sent>| {
            let e = TransportError::new(kind, "x");
            Error::Transport(match sent {
                Some(sent) => e.with_sent(sent),
                None => e,
            })
            .sent()
        };
        assert_eq!(sent(Connect, None), Sent::No);
        assert_eq!(sent(Io, None), Sent::Maybe);
        // A transport that read the answer before failing says so, and the error keeps it.
        assert_eq!(sent(ResponseTooLarge, Some(Sent::Yes)), Sent::Yes);
        assert_eq!(sent(Io, Some(Sent::No)), Sent::No);
    }

    fn decode_error(body: &str) -> Error {
        let source = serde_json::from_str::<svc_model::LoginResponse>(body).unwrap_err();
        Error::decode(StatusCode::OK, Bytes::from(body.to_owned()), source)
    }

    fn api_error(status: u16, body: &str) -> ApiError {
        ApiError {
            status: StatusCode::from_u16(status).unwrap(),
            method: Method::GET,
            path: "/projects/p/prod/shop/models/orders/".to_owned(),
            body: ErrorBody::parse(Bytes::from(body.to_owned())),
            retry_after: None,
        }
    }

    #[test]
    fn hints_follow_what_the_answer_says() {
        // A 400 says every field at fault on its one line, and points nowhere else.
        let fields = api_error(400, r#"{"status": ["Not a valid choice."]}"#).to_string();
        assert!(fields.ends_with(": status: Not a valid choice"), "{fields}");
        // A message written for a person is kept whole: a list of lookups keeps its end.
        let lookups: Vec<String> = (0..60).map(|i| format!("lookup{i}")).collect();
        let long = format!(
            "total__x: Unknown lookup x; the number field total takes: {}.",
            lookups.join(", ")
        );
        let listed = api_error(400, &format!(r#"{{"error": "{long}"}}"#)).to_string();
        assert!(listed.ends_with("lookup58, lookup59"), "{listed}");
        let two = api_error(
            400,
            r#"{"error": "status: Not a valid choice.", "status": ["Not a valid choice."], "total": ["A valid number is required."]}"#,
        )
        .to_string();
        assert!(
            two.ends_with(": status: Not a valid choice; total: A valid number is required"),
            "{two}"
        );
        let plain = api_error(400, r#"{"detail": "Malformed JSON: EOF."}"#).to_string();
        // A SQL syntax error is keyed on the request's `query`: no fields to check.
        let mut sql = api_error(
            400,
            r#"{"error": "near \"fro\": syntax error", "query": ["near \"fro\": syntax error"]}"#,
        );
        sql.path = "/projects/p/prod/shop/sql_get_query".to_owned();
        let sql = sql.to_string();
        assert!(sql.ends_with("syntax error"), "{sql}");
        assert!(plain.ends_with("Malformed JSON: EOF"), "{plain}");
        // A page past the last one is about the page, not the path.
        let page = api_error(404, r#"{"detail": "Invalid page."}"#).to_string();
        assert!(page.contains("ask for a page within the count"), "{page}");
        assert!(!page.contains("identifiers in the path"), "{page}");
        let missing = api_error(404, r#"{"detail": "Not found."}"#).to_string();
        assert!(missing.contains("identifiers in the path"), "{missing}");
        // "try again" is said once, whoever says it.
        let busy = api_error(
            503,
            r#"{"detail": "The resource is busy; try again later."}"#,
        );
        assert_eq!(busy.to_string().matches("try again").count(), 1, "{busy}");
        let failed = api_error(500, r#"{"detail": "Internal error."}"#).to_string();
        assert_eq!(failed.matches("try again").count(), 1, "{failed}");
        // The error shows the same text, and the status reads the same way on both.
        let err = Error::Api(Box::new(api_error(404, r#"{"detail": "Invalid page."}"#)));
        assert_eq!(err.to_string(), page);
        assert_eq!(err.api().map(ApiError::status), err.status());
    }

    /// Every text an error shows: `Display`, `Debug` (plain and pretty), and each source's.
    fn texts(err: &Error) -> Vec<String> {
        let mut texts = vec![err.to_string(), format!("{err:?}"), format!("{err:#?}")];
        let mut source = std::error::Error::source(err);
        while let Some(s) = source {
            texts.push(s.to_string());
            texts.push(format!("{s:?}"));
            source = s.source();
        }
        texts
    }

    /// Regression: a login or refresh answer of an unexpected shape printed its tokens, in
    /// `Debug` (the whole body) and in `Display` (serde's message quotes the value it refused).
    #[test]
    fn decode_errors_never_show_the_body() {
        let secret = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0LXBheWxvYWQ.c2lnbmF0dXJl";
        let bodies = [
            format!(r#"{{"token": "{secret}", "user": {{"uid": "u"}}}}"#),
            format!(
                r#"{{"token": {{"access_token": "{secret}", "refresh_token": 7}}, "user": {{"uid": "u"}}}}"#
            ),
            format!(
                r#"{{"token": {{"access_token": "a", "refresh_token": "r", "access_token_expires": "{secret}"}}, "user": {{"uid": "u"}}}}"#
            ),
            format!(r#"{{"token": {{"access_token": "{secret}"}}}}"#),
            format!(r#"["{secret}"]"#),
            format!(r#"{{"{secret}": 1}}"#),
            secret.to_owned(),
        ];
        for body in bodies {
            let err = decode_error(&body);
            for text in texts(&err) {
                assert!(!text.contains("c2VjcmV0"), "{body}: {text}");
            }
        }
        // Kept: the expected type's names, and where decoding stopped.
        let err = decode_error(r#"{"token": {"access_token": "a"}}"#);
        assert!(
            err.to_string()
                .contains("missing field `refresh_token` at line 1 column 31"),
            "{err}"
        );
        let err = decode_error(r#"{"token": "abc", "user": {}}"#);
        assert!(
            err.to_string()
                .contains("unexpected value, expected struct AuthState at line 1 column 15"),
            "{err}"
        );
        let own = serde::de::Error::custom("the server answered {\"success\": false}");
        let err = Error::decode(StatusCode::OK, Bytes::from_static(b"{}"), own);
        assert!(
            err.to_string()
                .ends_with(": the server answered {\"success\": false}")
        );
        let from_value =
            serde_json::from_value::<u32>(serde_json::json!(format!("x{secret}"))).unwrap_err();
        let err = Error::decode(StatusCode::OK, Bytes::new(), from_value);
        assert!(!err.to_string().contains("c2VjcmV0"), "{err}");
        let err = decode_error("{");
        assert!(err.to_string().contains("EOF while parsing"), "{err}");
        let Error::Decode(decode) = &err else {
            panic!("{err:?}")
        };
        assert_eq!(decode.body.as_ref(), b"{", "the body stays available");
    }
}
