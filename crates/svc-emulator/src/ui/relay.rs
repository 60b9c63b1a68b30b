//! The page's way into the API: `/_emulator/ui/api/relay/{project}/{target}` answers as
//! `/{target}` does, called with `{project}`'s API key, through the journal.
//!
//! So the page lists, creates, changes and deletes records, reads the journal, takes snapshots
//! and runs actions through the very routes and flows a client uses: what it shows is what the
//! API answers (a refusal included), and what it changes appears in the journal. The key never
//! reaches the browser, and the answer passes the journal's redaction, so no key, token or
//! password of the emulator's appears on the page.

use axum::body::Body;
use axum::http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderValue, Request, Response, StatusCode, Uri};
use http_body_util::BodyExt;
use hyper::body::Incoming;

use super::guard::json_error;
use serde_json::Value;
use svc_emulator_http::AppState;
use svc_emulator_http::capture::{FromPage, Journaled};
use svc_emulator_http::journal::Redactor;

/// How much of an answer the page reads: 8 MiB (a page of records is far less).
const ANSWER_CAP: usize = 8 * 1024 * 1024;

/// Calls `target` (`{project}/{path}`) for the page.
pub(super) async fn call(
    state: &AppState,
    api: Journaled,
    request: Request<Incoming>,
    target: String,
) -> Response<Body> {
    let Some((project, path)) = target.split_once('/') else {
        return json_error(
            StatusCode::NOT_FOUND,
            "The page's relay takes /_emulator/ui/api/relay/{project}/{path}.",
        );
    };
    let Some(entry) = state.registry().project(project) else {
        return json_error(StatusCode::NOT_FOUND, "Project not found.");
    };
    if path.starts_with("_emulator/ui") {
        return json_error(StatusCode::NOT_FOUND, "The page does not relay to itself.");
    }
    let (parts, body) = request.into_parts();
    let target = match parts.uri.query() {
        Some(query) => format!("/{path}?{query}"),
        None => format!("/{path}"),
    };
    let Ok(uri) = target.parse::<Uri>() else {
        return json_error(StatusCode::BAD_REQUEST, "Not a path the API serves.");
    };
    let Ok(key) = HeaderValue::from_str(&format!("Bearer {}", entry.primary_api_key())) else {
        return json_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The project's key is not text.",
        );
    };
    let mut forwarded = Request::new(body);
    *forwarded.method_mut() = parts.method;
    *forwarded.uri_mut() = uri;
    let headers = forwarded.headers_mut();
    // Only what the API reads: the page's cookie and origin stay with the page.
    for name in [CONTENT_TYPE, ACCEPT] {
        if let Some(value) = parts.headers.get(&name) {
            headers.insert(name, value.clone());
        }
    }
    headers.insert(AUTHORIZATION, key);
    forwarded.extensions_mut().insert(FromPage);
    let answer = api.serve(forwarded).await;
    redacted(state, answer).await
}

/// Masks the emulator's secrets in every string of `value`.
fn hide_in_strings(value: &mut Value, redactor: &Redactor) {
    match value {
        Value::String(text) => {
            if let std::borrow::Cow::Owned(hidden) = redactor.text(text) {
                *text = hidden;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| hide_in_strings(v, redactor)),
        Value::Object(map) => map.values_mut().for_each(|v| hide_in_strings(v, redactor)),
        _ => {}
    }
}

/// `answer` with the emulator's secrets (keys, tokens) masked as the journal masks them.
async fn redacted(state: &AppState, answer: Response<Body>) -> Response<Body> {
    let (mut parts, body) = answer.into_parts();
    let bytes = match http_body_util::Limited::new(body, ANSWER_CAP)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(_) => {
            return json_error(
                StatusCode::BAD_GATEWAY,
                "The answer is too large for the page (over 8 MiB): narrow the query.",
            );
        }
    };
    let redactor = state.journal().redactor();
    let body = match serde_json::from_slice::<Value>(&bytes) {
        // JSON: each string value, so that a short key never rewrites names or numbers.
        Ok(mut value) => {
            hide_in_strings(&mut value, redactor);
            Body::from(value.to_string())
        }
        Err(_) => match std::str::from_utf8(&bytes) {
            Ok(text) => Body::from(redactor.text(text).into_owned()),
            // Not text: nothing the page shows.
            Err(_) => Body::from(bytes),
        },
    };
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    Response::from_parts(parts, body)
}
