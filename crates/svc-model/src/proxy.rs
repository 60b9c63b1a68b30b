//! The HTTP proxy (docs/contract.md 4.3): the body of `POST {app_base_url}/proxy_request/`, and the
//! header names of the proxy's answer.
//!
//! The service sends the described request to the target URL and answers with the upstream's
//! status code, its `Content-Type` and its body, unchanged. Its own failures (no valid `JWT`, a
//! target off the allow-list, an unreachable or slow upstream, ...) carry the header
//! [`PROXY_ERROR_HEADER`], so a client can tell them from an upstream answer with the same
//! status. Upstream headers other than `Content-Type` come back prefixed with
//! [`UPSTREAM_HEADER_PREFIX`].
//!
//! ```
//! use serde_json::json;
//! use svc_model::proxy::{BodyType, NameValue, ProxyRequest};
//!
//! let mut request = ProxyRequest::new("POST", "http://127.0.0.1:8080/orders");
//! request.query_params.push(NameValue::new("dry_run", "1"));
//! request.headers.push(NameValue::new("X-Request-Id", "42"));
//! request.body_type = Some(BodyType::Json);
//! request.body = Some(json!({"total": 12.5}));
//! assert_eq!(
//!     serde_json::to_value(&request)?,
//!     json!({
//!         "method": "POST",
//!         "url": "http://127.0.0.1:8080/orders",
//!         "query_params": [{"name": "dry_run", "value": "1"}],
//!         "headers": [{"name": "X-Request-Id", "value": "42"}],
//!         "body_type": "JSON",
//!         "body": {"total": 12.5},
//!     }),
//! );
//! // `method` defaults to GET; the lists default to empty.
//! let parsed: ProxyRequest = serde_json::from_str(r#"{"url": "http://localhost/"}"#)?;
//! assert_eq!(parsed.method, "GET");
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The header with which the proxy marks its own error answers (value `1`): a `401` for a
/// missing or invalid `JWT`, a `403` for a target off the allow-list, a `502` for an unreachable
/// upstream, a `504` for a slow one, a `400` for a malformed request. Answers without it are the
/// upstream's.
pub const PROXY_ERROR_HEADER: &str = "x-svc-proxy-error";

/// The prefix of the upstream's response headers other than `Content-Type` in the proxy's
/// answer: the upstream's `ETag` comes back as `x-svc-upstream-etag`. Hop-by-hop and framing
/// headers (`Connection`, `Transfer-Encoding`, `Content-Length`, ...) are not passed on.
pub const UPSTREAM_HEADER_PREFIX: &str = "x-svc-upstream-";

/// How [`ProxyRequest::body`] is encoded for the upstream.
///
/// | Type | `body` | Sent as |
/// | --- | --- | --- |
/// | `JSON` | any JSON value | its JSON text, `application/json` |
/// | `GraphQL` | `{"query", "variables"?, "operationName"?}`, or the query as a string | that object as JSON, `application/json` |
/// | `FormUrlEncoded` | an array of `{"name", "value"}`, or an object | `application/x-www-form-urlencoded` |
/// | `FormData` | an array of `{"name", "value"}`, or an object | `multipart/form-data` with a boundary |
/// | `Raw` | a string | the text as given; the `Content-Type` from `headers`, if any |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum BodyType {
    /// A JSON document.
    #[serde(rename = "JSON")]
    Json,
    /// A GraphQL operation, posted as JSON.
    #[serde(rename = "GraphQL")]
    GraphQl,
    /// An HTML form, URL-encoded.
    FormUrlEncoded,
    /// A multipart form.
    FormData,
    /// Text, sent as given.
    Raw,
}

impl BodyType {
    /// The name on the wire: `JSON`, `GraphQL`, `FormUrlEncoded`, `FormData` or `Raw`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Json => "JSON",
            Self::GraphQl => "GraphQL",
            Self::FormUrlEncoded => "FormUrlEncoded",
            Self::FormData => "FormData",
            Self::Raw => "Raw",
        }
    }
}

impl fmt::Display for BodyType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `{"name", "value"}` pair: a query parameter, a header or a form field.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameValue {
    /// The name.
    pub name: String,
    /// The value.
    pub value: String,
}

impl NameValue {
    /// A pair.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
        }
    }
}

impl fmt::Debug for NameValue {
    /// Values may be credentials (an `Authorization` header, an `api_key` parameter): only the
    /// name is shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: <{} bytes>", self.name, self.value.len())
    }
}

/// The body of `POST {app_base_url}/proxy_request/`.
///
/// `Debug` shows the method, the URL without its query, and the names of parameters and
/// headers, never their values or the body.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProxyRequest {
    /// The HTTP method, upper case; default `GET`.
    #[serde(default = "default_method")]
    pub method: String,
    /// The target URL, `http://` or `https://`; it may carry a query already.
    pub url: String,
    /// Query parameters appended to the URL's query, encoded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub query_params: Vec<NameValue>,
    /// Request headers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<NameValue>,
    /// How `body` is encoded; `JSON` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_type: Option<BodyType>,
    /// The body (see [`BodyType`]); no body when absent or `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// The project the request is made for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The environment the request is made for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// The resource the request is made for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// Names of the project's secret tokens the request uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_tokens: Vec<String>,
}

fn default_method() -> String {
    "GET".to_owned()
}

impl ProxyRequest {
    /// A request with a method and a target URL, and nothing else.
    pub fn new(method: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            method: method.into(),
            url: url.into(),
            query_params: Vec::new(),
            headers: Vec::new(),
            body_type: None,
            body: None,
            project: None,
            environment: None,
            resource: None,
            secret_tokens: Vec::new(),
        }
    }
}

impl fmt::Debug for ProxyRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let url = self.url.split(['?', '#']).next().unwrap_or_default();
        let names = |pairs: &[NameValue]| pairs.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        f.debug_struct("ProxyRequest")
            .field("method", &self.method)
            .field("url", &url)
            .field("query_params", &names(&self.query_params))
            .field("headers", &names(&self.headers))
            .field("body_type", &self.body_type)
            .field("body", &self.body.as_ref().map(|_| "<hidden>"))
            .field("project", &self.project)
            .field("environment", &self.environment)
            .field("resource", &self.resource)
            .field("secret_tokens", &self.secret_tokens)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn body_types_on_the_wire() {
        for (t, name) in [
            (BodyType::Json, "JSON"),
            (BodyType::GraphQl, "GraphQL"),
            (BodyType::FormUrlEncoded, "FormUrlEncoded"),
            (BodyType::FormData, "FormData"),
            (BodyType::Raw, "Raw"),
        ] {
            assert_eq!(serde_json::to_value(t).unwrap(), json!(name));
            assert_eq!(t.to_string(), name);
            assert_eq!(serde_json::from_value::<BodyType>(json!(name)).unwrap(), t);
        }
        assert!(serde_json::from_value::<BodyType>(json!("json")).is_err());
    }

    #[test]
    fn minimal_request_and_round_trip() {
        let r = ProxyRequest::new("GET", "http://localhost/");
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"method":"GET","url":"http://localhost/"}"#
        );
        let mut full = ProxyRequest::new("PUT", "http://localhost/x?a=1");
        full.body_type = Some(BodyType::FormData);
        full.body = Some(json!([{"name": "a", "value": "b"}]));
        full.project = Some("demo".into());
        full.environment = Some("prod".into());
        full.resource = Some("shop".into());
        full.secret_tokens = vec!["STRIPE".into()];
        let text = serde_json::to_string(&full).unwrap();
        assert_eq!(serde_json::from_str::<ProxyRequest>(&text).unwrap(), full);
    }

    #[test]
    fn debug_hides_values_and_bodies() {
        let mut r = ProxyRequest::new("POST", "http://h/p?token=supersecret");
        r.headers
            .push(NameValue::new("Authorization", "Bearer hush-hush"));
        r.query_params.push(NameValue::new("key", "quiet-value"));
        r.body = Some(json!({"password": "p4ss"}));
        let dbg = format!("{r:?}");
        for secret in ["supersecret", "hush-hush", "quiet-value", "p4ss"] {
            assert!(!dbg.contains(secret), "{dbg}");
        }
        assert!(dbg.contains("Authorization"), "{dbg}");
    }
}
