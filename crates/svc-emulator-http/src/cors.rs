//! The data engine's CORS answers, on both hosts' API routes: every answer carries its
//! `Access-Control-*` headers, and `OPTIONS` on any route is `204` (a browser's preflight),
//! without credentials, as the engine's handlers answer it (jet-bridge 1.12.13,
//! `default_headers` and `options`). So a page in a browser, a Vitest suite in browser mode,
//! reaches the emulator as it reaches the service. The emulator's own routes (`/_emulator/...`:
//! reset, snapshots, the journal, the web page) send none, so no other site's page can drive
//! them from a user's browser.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The engine's headers, in its words (`ALLOW_ORIGIN` is `*` by default). The values are made
/// when compiled: made on each answer, their bytes were checked one by one, some 3.4k
/// instructions of a 25-record page (docs/performance.md, section 6).
const HEADERS: [(header::HeaderName, HeaderValue); 5] = [
    (
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    ),
    (
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("GET, POST, PUT, PATCH, DELETE, OPTIONS"),
    ),
    (
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(
            "Authorization,DNT,User-Agent,X-Requested-With,If-Modified-Since,Cache-Control,\
             Content-Type,Range,X-Application-Warning,X-HTTP-Method-Override,X-Bridge-Settings,\
             X-Stick-Session",
        ),
    ),
    (
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(
            "Content-Length,Content-Range,Content-Disposition,Content-Type,X-Application-Warning",
        ),
    ),
    (
        header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
        HeaderValue::from_static("true"),
    ),
];

/// Adds the engine's headers where the answer has none of its own: the engine sets them as
/// defaults, and an answer's own headers (a proxied service's CORS) win.
fn add_headers(headers: &mut HeaderMap) {
    for (name, value) in HEADERS {
        headers.entry(name).or_insert(value);
    }
}

/// The prefix of the emulator's own routes, which send no CORS headers.
const EMULATOR_ROUTES: &str = "/_emulator";

/// The middleware: `OPTIONS` answered here, every other answer given the headers; the
/// emulator's own routes pass untouched.
pub async fn cors(request: Request, next: Next) -> Response {
    if request.uri().path().starts_with(EMULATOR_ROUTES) {
        return next.run(request).await;
    }
    if request.method() == Method::OPTIONS {
        let mut response = StatusCode::NO_CONTENT.into_response();
        add_headers(response.headers_mut());
        return response;
    }
    let mut response = next.run(request).await;
    add_headers(response.headers_mut());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answers_own_headers_win_over_the_defaults() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("https://app.example"),
        );
        add_headers(&mut headers);
        assert_eq!(
            headers[header::ACCESS_CONTROL_ALLOW_ORIGIN],
            "https://app.example"
        );
        assert_eq!(headers[header::ACCESS_CONTROL_ALLOW_CREDENTIALS], "true");
        assert_eq!(headers.len(), HEADERS.len());
    }
}
