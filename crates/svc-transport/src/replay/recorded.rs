//! What the test transports record: requests, responses and exchanges, with `Debug` output that
//! never shows credentials or bodies.

use std::fmt;

use bytes::Bytes;
use http::header::{AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION, SET_COOKIE};
use http::{HeaderMap, HeaderName, Method, StatusCode, Uri, Version};

use crate::TransportError;

/// A request as a test transport received it.
///
/// Its `Debug` output shows the method, URI and headers, with the values of `Authorization`,
/// `Proxy-Authorization`, `Cookie` and headers marked sensitive replaced by `<redacted>`, and
/// the body's length instead of the body. Read the fields to assert on the real values.
#[non_exhaustive]
#[derive(Clone)]
pub struct RecordedRequest {
    /// The request method.
    pub method: Method,
    /// The full request URI.
    pub uri: Uri,
    /// The HTTP version the request asked for.
    pub version: Version,
    /// The request headers, unredacted.
    pub headers: HeaderMap,
    /// The request body.
    pub body: Bytes,
}

impl RecordedRequest {
    /// Records `request` (the body is reference-counted, not copied).
    pub fn from_request(request: &http::Request<Bytes>) -> Self {
        Self {
            method: request.method().clone(),
            uri: request.uri().clone(),
            version: request.version(),
            headers: request.headers().clone(),
            body: request.body().clone(),
        }
    }

    /// The first value of header `name` if it is present and visible ASCII.
    pub fn header(&self, name: impl AsRef<str>) -> Option<&str> {
        header_str(&self.headers, name.as_ref())
    }

    /// The body as UTF-8 text, if it is.
    pub fn body_text(&self) -> Option<&str> {
        std::str::from_utf8(&self.body).ok()
    }
}

impl fmt::Debug for RecordedRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordedRequest")
            .field("method", &self.method)
            .field("uri", &self.uri)
            .field("version", &self.version)
            .field("headers", &RedactedHeaders(&self.headers))
            .field("body", &BodyLen(self.body.len()))
            .finish()
    }
}

/// A response as a [`RecordingTransport`](super::RecordingTransport) saw it.
///
/// Its `Debug` output redacts `Set-Cookie` and sensitive header values and shows the body's
/// length instead of the body.
#[non_exhaustive]
#[derive(Clone)]
pub struct RecordedResponse {
    /// The response status.
    pub status: StatusCode,
    /// The HTTP version of the response.
    pub version: Version,
    /// The response headers, unredacted.
    pub headers: HeaderMap,
    /// The response body.
    pub body: Bytes,
}

impl RecordedResponse {
    /// Records `response` (the body is reference-counted, not copied).
    pub fn from_response(response: &http::Response<Bytes>) -> Self {
        Self {
            status: response.status(),
            version: response.version(),
            headers: response.headers().clone(),
            body: response.body().clone(),
        }
    }

    /// The first value of header `name` if it is present and visible ASCII.
    pub fn header(&self, name: impl AsRef<str>) -> Option<&str> {
        header_str(&self.headers, name.as_ref())
    }

    /// The body as UTF-8 text, if it is.
    pub fn body_text(&self) -> Option<&str> {
        std::str::from_utf8(&self.body).ok()
    }
}

impl fmt::Debug for RecordedResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordedResponse")
            .field("status", &self.status)
            .field("version", &self.version)
            .field("headers", &RedactedHeaders(&self.headers))
            .field("body", &BodyLen(self.body.len()))
            .finish()
    }
}

/// One request and what came back: a response or a transport error.
#[non_exhaustive]
#[derive(Debug, Clone)]
pub struct RecordedExchange {
    /// The request as it was handed to the transport.
    pub request: RecordedRequest,
    /// The response, or the error the transport returned.
    pub response: Result<RecordedResponse, TransportError>,
}

fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let name = HeaderName::from_bytes(name.as_bytes()).ok()?;
    headers.get(name)?.to_str().ok()
}

/// Whether the value of header `name` must not be shown.
fn is_secret(name: &HeaderName, value: &http::HeaderValue) -> bool {
    value.is_sensitive()
        || name == AUTHORIZATION
        || name == PROXY_AUTHORIZATION
        || name == COOKIE
        || name == SET_COOKIE
}

/// Shows a header map with secret values replaced by `<redacted>`.
struct RedactedHeaders<'a>(&'a HeaderMap);

impl fmt::Debug for RedactedHeaders<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (name, value) in self.0 {
            if is_secret(name, value) {
                map.entry(name, &format_args!("<redacted>"));
            } else {
                map.entry(name, value);
            }
        }
        map.finish()
    }
}

/// Shows a body as its length.
struct BodyLen(usize);

impl fmt::Debug for BodyLen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{} bytes>", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_redacts_credentials_and_bodies() {
        let mut secret = http::HeaderValue::from_static("s3cr3t-sensitive");
        secret.set_sensitive(true);
        let request = http::Request::post("https://h.test/v1/things?page=2")
            .header("authorization", "Bearer s3cr3t-token")
            .header("proxy-authorization", "Basic s3cr3t-proxy")
            .header("cookie", "session=s3cr3t-cookie")
            .header("x-api-key", secret)
            .header("content-type", "application/json")
            .body(Bytes::from_static(b"{\"password\":\"s3cr3t-body\"}"))
            .unwrap();
        let recorded = RecordedRequest::from_request(&request);
        let debug = format!("{recorded:?}");
        assert!(!debug.contains("s3cr3t"), "{debug}");
        assert!(debug.contains("<redacted>"), "{debug}");
        assert!(debug.contains("application/json"), "{debug}");
        assert!(debug.contains("<26 bytes>"), "{debug}");
        assert!(debug.contains("/v1/things?page=2"), "{debug}");
        // The fields keep the real values for assertions.
        assert_eq!(
            recorded.header("authorization"),
            Some("Bearer s3cr3t-token")
        );
        assert_eq!(recorded.header("Content-Type"), Some("application/json"));
        assert_eq!(recorded.header("x-missing"), None);
        assert_eq!(recorded.body_text(), Some("{\"password\":\"s3cr3t-body\"}"));
    }

    #[test]
    fn response_debug_redacts_set_cookie_and_body() {
        let response = http::Response::builder()
            .status(200)
            .header("set-cookie", "session=s3cr3t")
            .header("etag", "\"v1\"")
            .body(Bytes::from_static(b"s3cr3t body"))
            .unwrap();
        let recorded = RecordedResponse::from_response(&response);
        let debug = format!("{recorded:?}");
        assert!(!debug.contains("s3cr3t"), "{debug}");
        assert!(debug.contains("etag"), "{debug}");
        assert_eq!(recorded.body_text(), Some("s3cr3t body"));
        assert_eq!(recorded.header("etag"), Some("\"v1\""));
    }
}
