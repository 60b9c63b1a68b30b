//! Reading requests without axum's plain-text rejections: JSON bodies, query values and path
//! segments all fail with a JSON [`HttpError`].
//!
//! Handlers take the body as a raw [`Body`] and read it with [`json_object`] only after the
//! credentials were checked, so that an unauthenticated request is a `401` whatever its body.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;

use axum::body::{Body, HttpBody};
use axum::extract::rejection::PathRejection;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::AppState;
use crate::admission::Admitted;
use serde_json::{Map, Value};
use svc_emulator_core::backend::Backend;
use svc_engine::request::decode_component;
use svc_model::error_body::codes;

use crate::HttpError;

/// How large a body a route reads (crate README, "Under abuse"). Past it the answer is `413`,
/// at once when `Content-Length` says so, else as soon as the limit is passed while reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimit(usize);

impl BodyLimit {
    /// Account routes (login, register, passwords, ...): a few fields, open to anyone.
    pub const ACCOUNT: Self = Self(64 * 1024);
    /// Records, SQL, users, teams and proxied requests.
    pub const DATA: Self = Self(8 * 1024 * 1024);
    /// Page settings: page structures can be large.
    pub const PAGES: Self = Self(32 * 1024 * 1024);

    /// The limit in bytes.
    pub(crate) fn bytes(self) -> usize {
        self.0
    }
}

/// The most JSON values (numbers, strings, arrays, objects, ...) a body may hold. Parsed into
/// `serde_json::Value`, each costs tens of bytes: a body of many tiny values (`[0,0,0,...]`)
/// would take 30 to 40 times its size in memory. Real bodies hold few values (page structures
/// travel as one string).
pub const MAX_JSON_VALUES: usize = 250_000;

/// How long a body may go without sending a byte: a client that sends its headers and part of
/// its body, then nothing, is answered `408` and its connection freed.
pub(crate) const BODY_STALL: std::time::Duration = std::time::Duration::from_secs(30);

/// Bodies larger than this are parsed on the blocking pool, not on the async workers.
const PARSE_ON_THREAD: usize = 256 * 1024;

/// Reads the whole body (at most `limit`) and parses it as a JSON object: `400` when it is not
/// JSON, not an object or holds more than [`MAX_JSON_VALUES`] values, `413` past the limit.
pub async fn json_object(body: Body, limit: BodyLimit) -> Result<Map<String, Value>, HttpError> {
    let bytes = read_body(body, limit).await?;
    if bytes.len() > PARSE_ON_THREAD {
        return blocking(move || parse_object(&bytes)).await;
    }
    parse_object(&bytes)
}

fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, HttpError> {
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        None => {
            return Err(HttpError::invalid(
                "The request body is empty; a JSON object is required.",
            ));
        }
        // Anything but an object is refused without parsing it.
        Some(b) if *b != b'{' => {
            return Err(HttpError::invalid(
                "The request body must be a JSON object.",
            ));
        }
        Some(_) => {}
    }
    if json_values_over(bytes, MAX_JSON_VALUES) {
        return Err(HttpError::invalid(format!(
            "The request body holds more than {MAX_JSON_VALUES} JSON values; send fewer (a \
             page structure goes in `params` as one string)."
        )));
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(HttpError::invalid(
            "The request body must be a JSON object.",
        )),
        Err(e) => Err(HttpError::invalid(format!("Malformed JSON: {e}."))),
    }
}

/// Whether JSON text `bytes` holds more than `max` values, counted without parsing: every value
/// but the first follows a `,` or opens an array or object (`[`, `{`), outside strings. An
/// upper bound for malformed text, which the parser refuses anyway.
pub fn json_values_over(bytes: &[u8], max: usize) -> bool {
    let (mut count, mut in_string, mut escaped) = (1usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else {
            match b {
                b'"' => in_string = true,
                b',' | b'[' | b'{' => {
                    count += 1;
                    if count > max {
                        return true;
                    }
                }
                _ => {}
            }
        }
    }
    false
}

/// The most of a refused body (`413`) that is still read and discarded, so that a client that
/// sends its whole body before it reads the answer can read it: without this the connection is
/// closed under the client, which sees a broken pipe instead of the `413`.
pub(crate) const DRAIN_BYTES: u64 = 64 * 1024 * 1024;

/// How long a refused body is read and discarded at most.
pub(crate) const DRAIN_TIME: std::time::Duration = std::time::Duration::from_secs(10);

/// The whole body, `413` past `limit`. The `413` is answered at once; the rest of the body is
/// read and discarded meanwhile (at most `DRAIN_BYTES` in `DRAIN_TIME`), so that the
/// connection stays usable and the client reads the answer.
pub async fn read_body(mut body: Body, limit: BodyLimit) -> Result<Vec<u8>, HttpError> {
    let max = limit.bytes();
    let too_large = |body: Body| {
        discard(body);
        HttpError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            codes::INVALID,
            format!("The request body is larger than {max} bytes, the limit of this route."),
        )
    };
    // An announced length over the limit is refused before anything is read.
    if body.size_hint().lower() > max as u64 {
        return Err(too_large(body));
    }
    let mut bytes = Vec::new();
    loop {
        let next =
            tokio::time::timeout(BODY_STALL, poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)));
        let Some(frame) = next.await.map_err(|_| {
            HttpError::new(
                StatusCode::REQUEST_TIMEOUT,
                codes::INVALID,
                format!(
                    "The request body stalled: nothing arrived for {} s.",
                    BODY_STALL.as_secs()
                ),
            )
        })?
        else {
            break;
        };
        let frame = frame.map_err(|_| HttpError::invalid("The request body could not be read."))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len().saturating_add(data.len()) > max {
                return Err(too_large(body));
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}

/// Reads `body` to its end and throws it away, in a task of its own (the answer goes out
/// meanwhile), up to [`DRAIN_BYTES`] and [`DRAIN_TIME`]; past either, or when the announced
/// length is larger than that, the body is dropped and the connection closes.
fn discard(mut body: Body) {
    if body.size_hint().lower() > DRAIN_BYTES {
        return;
    }
    tokio::spawn(async move {
        let mut read = 0u64;
        let drain = async {
            while let Some(Ok(frame)) = poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
                if let Ok(data) = frame.into_data() {
                    read += data.len() as u64;
                    if read > DRAIN_BYTES {
                        return;
                    }
                }
            }
        };
        let _ = tokio::time::timeout(DRAIN_TIME, drain).await;
    });
}

/// Every value of query parameter `name`, decoded (`+` is a space, then percent-decoding).
pub fn query_values(query: Option<&str>, name: &str) -> Vec<String> {
    let Some(query) = query else {
        return Vec::new();
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .filter_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode_component(key) == name).then(|| decode_component(value))
        })
        .collect()
}

impl From<PathRejection> for HttpError {
    /// A path segment that does not percent-decode to UTF-8 cannot name anything: `404`.
    fn from(rejection: PathRejection) -> Self {
        match rejection {
            PathRejection::FailedToDeserializePathParams(_) => HttpError::not_found("Not found."),
            other => HttpError::internal(other.body_text()),
        }
    }
}

/// A request on one model (`.../{resource}/models/{model}`): the credentials are checked and
/// the resource's database found before the handler runs.
#[derive(Debug)]
pub struct ModelAccess {
    /// The resource's database, with the request's admission turn.
    pub db: Admitted,
    /// The model's name.
    pub model: String,
}

impl axum::extract::FromRequestParts<AppState> for ModelAccess {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, HttpError> {
        let axum::extract::Path((project, environment, name, model)) =
            axum::extract::Path::<(String, String, String, String)>::from_request_parts(
                parts, state,
            )
            .await?;
        let db = resource(state, &parts.headers, &project, &environment, &name)?;
        let db = state.admit(db).await?;
        Ok(Self { db, model })
    }
}

/// A request on one record (`.../{resource}/models/{model}/{pk}`), checked like [`ModelAccess`].
#[derive(Debug)]
pub struct RecordAccess {
    /// The resource's database, with the request's admission turn.
    pub db: Admitted,
    /// The model's name.
    pub model: String,
    /// The record's primary key, as the path carries it.
    pub pk: String,
}

impl axum::extract::FromRequestParts<AppState> for RecordAccess {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, HttpError> {
        let axum::extract::Path((project, environment, name, model, pk)) =
            axum::extract::Path::<(String, String, String, String, String)>::from_request_parts(
                parts, state,
            )
            .await?;
        let db = resource(state, &parts.headers, &project, &environment, &name)?;
        let db = state.admit(db).await?;
        Ok(Self { db, model, pk })
    }
}

/// Checks the credentials for `resource` (docs/contract.md 3) and finds its database.
pub(crate) fn resource(
    state: &AppState,
    headers: &HeaderMap,
    project: &str,
    environment: &str,
    resource: &str,
) -> Result<Arc<dyn Backend>, HttpError> {
    let access = authorize(state, headers, project, environment, resource)?;
    state
        .catalog()
        .get(access.project.name.as_str(), &access.resource.name)
        .ok_or_else(|| HttpError::not_found("Resource not found."))
}

/// Checks the credentials for `resource` (docs/contract.md 3).
pub fn authorize<'s>(
    state: &'s AppState,
    headers: &HeaderMap,
    project: &str,
    environment: &str,
    resource: &str,
) -> Result<crate::auth::ResourceAccess<'s>, HttpError> {
    crate::auth::authorize_resource(
        state.registry(),
        headers,
        project,
        environment,
        resource,
        |jwt| {
            state
                .accounts()
                .verify_any(jwt)
                .map(|claims| claims.project)
        },
    )
}

/// Runs blocking database work off the async threads.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, HttpError> + Send + 'static,
) -> Result<T, HttpError> {
    svc_emulator_core::blocking::on_blocking_pool(work)
        .await
        .map_err(|e| HttpError::internal(format!("database task failed: {e}")))?
}

/// A request on one resource (`.../{resource}/sql_get_query`, `.../{resource}/reload`), checked
/// like [`ModelAccess`].
#[derive(Debug)]
pub struct ResourceAccess {
    /// The resource's database, with the request's admission turn.
    pub db: Admitted,
}

impl axum::extract::FromRequestParts<AppState> for ResourceAccess {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, HttpError> {
        let axum::extract::Path((project, environment, name)) =
            axum::extract::Path::<(String, String, String)>::from_request_parts(parts, state)
                .await?;
        let db = resource(state, &parts.headers, &project, &environment, &name)?;
        let db = state.admit(db).await?;
        Ok(Self { db })
    }
}

/// A `Response` of JSON bytes written by the records engine.
pub fn json_bytes(status: StatusCode, bytes: Vec<u8>) -> Response {
    let mut response = (status, bytes).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A `Response` of a JSON value.
pub fn json_value(status: StatusCode, value: &Value) -> Result<Response, HttpError> {
    let bytes = serde_json::to_vec(value).map_err(|e| HttpError::internal(e.to_string()))?;
    Ok(json_bytes(status, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bodies() {
        let ok = json_object(Body::from(r#"{"a": 1}"#), BodyLimit::DATA)
            .await
            .unwrap();
        assert_eq!(ok["a"], 1);
        for bad in ["", "  ", "[1]", "null", "{", "\"x\"", "\u{feff}{}"] {
            let err = json_object(Body::from(bad), BodyLimit::DATA)
                .await
                .unwrap_err();
            assert_eq!(err.status(), StatusCode::BAD_REQUEST, "{bad:?}");
        }
        // Each route's limit, whether or not the length was announced.
        for limit in [BodyLimit::ACCOUNT, BodyLimit::DATA] {
            let huge = vec![b' '; limit.bytes() + 1];
            let err = json_object(Body::from(huge), limit).await.unwrap_err();
            assert_eq!(err.status(), StatusCode::PAYLOAD_TOO_LARGE);
        }
        let at_limit = format!(
            "{{\"a\": \"{}\"}}",
            "x".repeat(BodyLimit::ACCOUNT.bytes() - 9)
        );
        assert_eq!(at_limit.len(), BodyLimit::ACCOUNT.bytes());
        assert!(
            json_object(Body::from(at_limit), BodyLimit::ACCOUNT)
                .await
                .is_ok()
        );
    }

    /// A body that never sends anything.
    struct Silent;

    impl HttpBody for Silent {
        type Data = bytes::Bytes;
        type Error = std::io::Error;
        fn poll_frame(
            self: Pin<&mut Self>,
            _cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Result<hyper::body::Frame<bytes::Bytes>, std::io::Error>>>
        {
            std::task::Poll::Pending
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_stalled_body_is_a_408() {
        let started = tokio::time::Instant::now();
        let err = read_body(Body::new(Silent), BodyLimit::DATA)
            .await
            .unwrap_err();
        assert_eq!(err.status(), StatusCode::REQUEST_TIMEOUT);
        assert_eq!(started.elapsed(), BODY_STALL);
    }

    #[tokio::test]
    async fn many_tiny_values_are_refused_before_parsing() {
        let values = |n: usize| format!("{{\"a\": [{}0]}}", "0,".repeat(n - 3));
        // An object, an array and n - 2 numbers: exactly n values.
        let ok = json_object(Body::from(values(MAX_JSON_VALUES)), BodyLimit::DATA).await;
        assert!(ok.is_ok());
        let err = json_object(Body::from(values(MAX_JSON_VALUES + 1)), BodyLimit::DATA)
            .await
            .unwrap_err();
        assert_eq!(err.status(), StatusCode::BAD_REQUEST);
        assert!(format!("{err:?}").contains("JSON values"), "{err:?}");
        // Commas and brackets inside strings are text, not values.
        let text = format!("{{\"a\": \"{}\\\"[{{\"}}", ",[{".repeat(MAX_JSON_VALUES));
        assert!(!json_values_over(text.as_bytes(), 3));
    }

    #[test]
    fn query() {
        assert_eq!(
            query_values(Some("draft=1&x=2&draft="), "draft"),
            vec!["1", ""]
        );
        assert_eq!(query_values(Some("dr%61ft=a+b%21"), "draft"), vec!["a b!"]);
        assert_eq!(query_values(Some("draft"), "draft"), vec![""]);
        assert!(query_values(None, "draft").is_empty());
        assert!(query_values(Some("&&"), "draft").is_empty());
    }
}
