//! Reading requests without axum's plain-text rejections: JSON bodies, query values and path
//! segments all fail with a JSON [`HttpError`].
//!
//! Handlers take the body as a raw [`Body`] and read it with [`json_object`] only after the
//! credentials were checked, so that an unauthenticated request is a `401` whatever its body.

use std::future::poll_fn;
use std::pin::Pin;

use axum::body::{Body, HttpBody};
use axum::extract::rejection::PathRejection;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::engine::Resource;
use crate::http::AppState;
use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};
use svc_model::error_body::codes;

use crate::http::HttpError;

/// The largest request body read, in bytes. Page structures can be large; this is far above any
/// real one and still bounds memory.
pub(crate) const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Reads the whole body and parses it as a JSON object: `400` when it is not JSON or not an
/// object, `413` when it is larger than [`MAX_BODY_BYTES`].
pub(crate) async fn json_object(body: Body) -> Result<Map<String, Value>, HttpError> {
    let bytes = read_body(body).await?;
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(HttpError::invalid(
            "The request body must be a JSON object.",
        )),
        Err(e) if bytes.iter().all(u8::is_ascii_whitespace) => {
            drop(e);
            Err(HttpError::invalid(
                "The request body is empty; a JSON object is required.",
            ))
        }
        Err(e) => Err(HttpError::invalid(format!("Malformed JSON: {e}."))),
    }
}

/// The whole body, `413` past [`MAX_BODY_BYTES`].
pub(crate) async fn read_body(mut body: Body) -> Result<Vec<u8>, HttpError> {
    let mut bytes = Vec::new();
    while let Some(frame) = poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|_| HttpError::invalid("The request body could not be read."))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len().saturating_add(data.len()) > MAX_BODY_BYTES {
                return Err(HttpError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    codes::INVALID,
                    format!("The request body is larger than {MAX_BODY_BYTES} bytes."),
                ));
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}

/// Every value of query parameter `name`, decoded (`+` is a space, then percent-decoding).
pub(crate) fn query_values(query: Option<&str>, name: &str) -> Vec<String> {
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

/// Every `key=value` pair of a raw query, decoded (`+` is a space, as in HTML forms).
pub(crate) fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    let Some(query) = query else {
        return Vec::new();
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode_component(key), decode_component(value))
        })
        .collect()
}

fn decode_component(raw: &str) -> String {
    let spaced = raw.replace('+', " ");
    percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
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
pub(crate) struct ModelAccess {
    pub(crate) db: Arc<Resource>,
    pub(crate) model: String,
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
        Ok(Self { db, model })
    }
}

/// A request on one record (`.../{resource}/models/{model}/{pk}`), checked like [`ModelAccess`].
pub(crate) struct RecordAccess {
    pub(crate) db: Arc<Resource>,
    pub(crate) model: String,
    pub(crate) pk: String,
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
) -> Result<Arc<Resource>, HttpError> {
    let access = crate::http::auth::authorize_resource(
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
    )?;
    state
        .resources()
        .get(access.project.name.as_str(), &access.resource.name)
        .ok_or_else(|| HttpError::not_found("Resource not found."))
}

/// Runs blocking database work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, HttpError> + Send + 'static,
) -> Result<T, HttpError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| HttpError::internal(format!("database task failed: {e}")))?
}

/// A request on one resource (`.../{resource}/sql_get_query`, `.../{resource}/reload`), checked
/// like [`ModelAccess`].
pub(crate) struct ResourceAccess {
    pub(crate) db: Arc<Resource>,
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
        Ok(Self { db })
    }
}

/// A `Response` of JSON bytes written by the records engine.
pub(crate) fn json_bytes(status: StatusCode, bytes: Vec<u8>) -> Response {
    let mut response = (status, bytes).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A `Response` of a JSON value.
pub(crate) fn json_value(status: StatusCode, value: &Value) -> Result<Response, HttpError> {
    let bytes = serde_json::to_vec(value).map_err(|e| HttpError::internal(e.to_string()))?;
    Ok(json_bytes(status, bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bodies() {
        let ok = json_object(Body::from(r#"{"a": 1}"#)).await.unwrap();
        assert_eq!(ok["a"], 1);
        for bad in ["", "  ", "[1]", "null", "{", "\"x\"", "\u{feff}{}"] {
            let err = json_object(Body::from(bad)).await.unwrap_err();
            assert_eq!(err.status(), StatusCode::BAD_REQUEST, "{bad:?}");
        }
        let huge = vec![b' '; MAX_BODY_BYTES + 1];
        let err = json_object(Body::from(huge)).await.unwrap_err();
        assert_eq!(err.status(), StatusCode::PAYLOAD_TOO_LARGE);
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
