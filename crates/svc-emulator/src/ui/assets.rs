//! The page's files, built into the crate: one HTML page for every address of the page (the
//! script reads the address), its script and its style sheet. Nothing is fetched from elsewhere:
//! the Content-Security-Policy allows this origin only, and no inline script.

use axum::body::Body;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::http::{HeaderValue, Method, Response, StatusCode};

use super::guard::json_error;

const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");
const ICON: &str = include_str!("assets/favicon.svg");

/// Scripts, styles, images and requests from this origin only; no frames of the page.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' \
                      data:; connect-src 'self'; form-action 'self'; base-uri 'none'; \
                      frame-ancestors 'none'";

/// The page, for any address of the page that is not a file or the page's API.
pub(super) fn page(method: &Method) -> Response<Body> {
    if !matches!(*method, Method::GET | Method::HEAD) {
        return json_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "The page's addresses are read with GET.",
        );
    }
    answer(PAGE, "text/html; charset=utf-8")
}

/// A file of the page: `app.js`, `app.css` or `favicon.svg`.
pub(super) fn file(method: &Method, name: &str) -> Response<Body> {
    if !matches!(*method, Method::GET | Method::HEAD) {
        return json_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "The page's files are read with GET.",
        );
    }
    match name {
        "app.js" => answer(SCRIPT, "text/javascript; charset=utf-8"),
        "app.css" => answer(STYLE, "text/css; charset=utf-8"),
        "favicon.svg" => answer(ICON, "image/svg+xml"),
        _ => json_error(StatusCode::NOT_FOUND, "No such file of the page."),
    }
}

fn answer(body: &'static str, content_type: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::from(body));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(POLICY));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    // Each start may be a new version of the emulator: no stale script.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
