//! The HTTP proxy (feature `proxy`): requests that the service sends to a third-party URL on
//! behalf of a signed-in user or a service, with the project's secret tokens.
//!
//! The request goes to `POST {app_base_url}/proxy_request/` with the user session or service
//! token as `Authorization: JWT <token>`. The answer is the upstream's: its status (errors
//! included), its headers and its body, as a [`ProxyResponse`]. Only failures of the proxy
//! itself, marked by the service with [`PROXY_ERROR_HEADER`], are an [`Error::Api`].

use std::fmt;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderMap, HeaderName, Method, Response, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use svc_model::proxy::{
    BodyType, NameValue, PROXY_ERROR_HEADER, ProxyRequest, UPSTREAM_HEADER_PREFIX,
};
use svc_model::routes;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::request::{Call, CallAuth, Operation};

const SEND: Operation = Operation::new("proxy.send", &routes::PROXY_REQUEST);

impl Client {
    /// The HTTP proxy: requests sent to another service by the svc service, with the user
    /// session or service token of this client as `JWT`.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// use http::Method;
    /// use serde_json::json;
    ///
    /// let response = client
    ///     .proxy()
    ///     .request(Method::POST, "https://api.example.com/orders")
    ///     .query("dry_run", "1")
    ///     .header("X-Request-Id", "42")
    ///     .json(&json!({"total": 12.5}))
    ///     .send()
    ///     .await?;
    /// if response.status.is_success() {
    ///     let order: serde_json::Value = response.json()?;
    ///     println!("created {}", order["id"]);
    /// } else {
    ///     // The upstream's own error: not an svc_api::Error.
    ///     eprintln!("upstream answered {}: {}", response.status, response.text_lossy());
    /// }
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "proxy")))]
    pub fn proxy(&self) -> Proxy<'_> {
        Proxy { client: self }
    }
}

/// The HTTP proxy; see [`Client::proxy`].
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// let answer = client
///     .proxy()
///     .get("https://api.example.com/v1/items")
///     .query("limit", "10")
///     .header("X-Api-Key", "{{secret:items_key}}")
///     .secret_token("items_key")
///     .send()
///     .await?;
/// println!("{} ({} bytes)", answer.status, answer.body.len());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Proxy<'c> {
    client: &'c Client,
}

impl<'c> Proxy<'c> {
    /// A request with any method to `url` (`http://` or `https://`).
    pub fn request(&self, method: Method, url: impl Into<String>) -> ProxyRequestBuilder<'c> {
        ProxyRequestBuilder {
            client: self.client,
            request: ProxyRequest::new(method.as_str(), url),
            method,
            error: None,
            options: None,
        }
    }

    /// A `GET` request to `url`.
    pub fn get(&self, url: impl Into<String>) -> ProxyRequestBuilder<'c> {
        self.request(Method::GET, url)
    }

    /// A `POST` request to `url`.
    pub fn post(&self, url: impl Into<String>) -> ProxyRequestBuilder<'c> {
        self.request(Method::POST, url)
    }

    /// A `PUT` request to `url`.
    pub fn put(&self, url: impl Into<String>) -> ProxyRequestBuilder<'c> {
        self.request(Method::PUT, url)
    }

    /// A `PATCH` request to `url`.
    pub fn patch(&self, url: impl Into<String>) -> ProxyRequestBuilder<'c> {
        self.request(Method::PATCH, url)
    }

    /// A `DELETE` request to `url`.
    pub fn delete(&self, url: impl Into<String>) -> ProxyRequestBuilder<'c> {
        self.request(Method::DELETE, url)
    }
}

/// One proxied request, built step by step and sent with [`send`](Self::send).
///
/// The project and environment default to the client's (when it has a project); the body is
/// set by exactly one of [`json`](Self::json), [`graphql`](Self::graphql),
/// [`form`](Self::form), [`multipart`](Self::multipart) and [`raw`](Self::raw) (the last one
/// called wins).
///
/// `Debug` never shows header or parameter values or the body.
#[must_use = "a proxy request does nothing until it is sent"]
pub struct ProxyRequestBuilder<'c> {
    client: &'c Client,
    request: ProxyRequest,
    method: Method,
    /// A body that could not be serialized: reported by `send`, before sending anything.
    error: Option<Error>,
    options: crate::options::HandleOptions,
}

impl fmt::Debug for ProxyRequestBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyRequestBuilder")
            .field("request", &self.request)
            .finish_non_exhaustive()
    }
}

impl ProxyRequestBuilder<'_> {
    crate::options::options_method!();

    /// Appends a query parameter (encoded by the proxy; the URL's own query is kept).
    pub fn query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.request.query_params.push(NameValue::new(name, value));
        self
    }

    /// Adds a request header (a name may repeat). A `Content-Type` given here wins over the
    /// body type's, except for [`multipart`](Self::multipart), whose boundary the proxy
    /// chooses. `Host` comes from the URL, and connection headers (`Content-Length`,
    /// `Connection`, `Transfer-Encoding`, ...) are the proxy's: given here, they are dropped.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.request.headers.push(NameValue::new(name, value));
        self
    }

    /// A JSON body (`body_type` `JSON`), sent as `application/json`. A value that cannot be
    /// serialized makes [`send`](Self::send) fail without sending anything.
    pub fn json<T: Serialize + ?Sized>(self, body: &T) -> Self {
        match serde_json::to_value(body) {
            Ok(value) => self.body(BodyType::Json, value),
            Err(e) => self.failed(e),
        }
    }

    /// A GraphQL operation (`body_type` `GraphQL`), posted as `{"query", "variables"}` JSON.
    /// Pass `&()` (or anything that serializes to `null`) for no variables.
    pub fn graphql<V: Serialize + ?Sized>(self, query: impl Into<String>, variables: &V) -> Self {
        let variables = match serde_json::to_value(variables) {
            Ok(v) => v,
            Err(e) => return self.failed(e),
        };
        let mut body = Map::new();
        body.insert("query".into(), Value::String(query.into()));
        if !variables.is_null() {
            body.insert("variables".into(), variables);
        }
        self.body(BodyType::GraphQl, Value::Object(body))
    }

    /// A URL-encoded form (`body_type` `FormUrlEncoded`), fields in order; a name may repeat.
    pub fn form<I, K, V>(self, fields: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let body = pairs(fields);
        self.body(BodyType::FormUrlEncoded, body)
    }

    /// A multipart form (`body_type` `FormData`) of text fields, in order; the proxy chooses
    /// the boundary.
    pub fn multipart<I, K, V>(self, fields: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let body = pairs(fields);
        self.body(BodyType::FormData, body)
    }

    /// A text body sent as given (`body_type` `Raw`), with the `Content-Type` of
    /// [`header`](Self::header), if any.
    pub fn raw(self, text: impl Into<String>) -> Self {
        self.body(BodyType::Raw, Value::String(text.into()))
    }

    /// Names a secret token of the project that the request uses (see the contract for how
    /// the service and the emulator insert secrets).
    pub fn secret_token(mut self, name: impl Into<String>) -> Self {
        self.request.secret_tokens.push(name.into());
        self
    }

    /// The project the request is made for; default the client's.
    pub fn project(mut self, project: impl Into<String>) -> Self {
        self.request.project = Some(project.into());
        self
    }

    /// The environment the request is made for; default the client's.
    pub fn environment(mut self, environment: impl Into<String>) -> Self {
        self.request.environment = Some(environment.into());
        self
    }

    /// The resource the request is made for; default none.
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.request.resource = Some(resource.into());
        self
    }

    /// The request body as it will be posted to the proxy (project and environment are filled
    /// in from the client by [`send`](Self::send) when not set).
    pub fn as_request(&self) -> &ProxyRequest {
        &self.request
    }

    fn body(mut self, body_type: BodyType, body: Value) -> Self {
        self.request.body_type = Some(body_type);
        self.request.body = Some(body);
        self
    }

    fn failed(mut self, e: serde_json::Error) -> Self {
        self.error = Some(Error::invalid_because(
            "the proxied request's body could not be serialized",
            e,
        ));
        self
    }

    /// Sends the request through the proxy.
    ///
    /// - `Ok`: the upstream answered, whatever its status ([`ProxyResponse::status`]).
    /// - [`Error::Api`]: the proxy itself refused or failed (`401` no valid session or service
    ///   token, `403` a target off the allow-list or another project, `502` the upstream is
    ///   unreachable, `504` it is too slow, `400` a malformed request).
    /// - [`Error::InvalidInput`]: nothing was sent (not signed in, a body that could not be
    ///   serialized).
    ///
    /// Failures of the proxy itself and lost connections are retried, as the client's
    /// [`RetryPolicy`](crate::RetryPolicy) allows, only when the proxied method is idempotent
    /// (`GET`, `HEAD`, `PUT`, `DELETE`, `OPTIONS`); a connection that never opened is retried
    /// for every method. Upstream answers are never retried.
    pub async fn send(self) -> Result<ProxyResponse> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let mut request = self.request;
        if request.project.is_none()
            && let Some(project) = self.client.inner.project.clone()
        {
            request.project = Some(project);
            if request.environment.is_none() {
                request.environment = Some(self.client.inner.environment.clone());
            }
        }
        let idempotent = matches!(
            self.method,
            Method::GET | Method::HEAD | Method::PUT | Method::DELETE | Method::OPTIONS
        );
        let url = self.client.app_route(SEND.route, |_| "").build();
        // Not retried as a POST would be: the proxied method decides. Every upstream status is
        // the answer; only the proxy's own failures (marked) are errors.
        let call = Call::new(SEND, url)
            .options(&self.options)
            .caller_may_repeat()
            .auth(CallAuth::Session)
            .json(&request)?
            .answers(is_upstream_answer);
        let call = if idempotent { call.idempotent() } else { call };
        let response = self.client.send(&call).await?;
        Ok(ProxyResponse::from_proxy(response))
    }
}

/// An answer of the upstream, as opposed to an error of the proxy itself (marked with
/// [`PROXY_ERROR_HEADER`]).
fn is_upstream_answer(response: &Response<Bytes>) -> bool {
    !response.headers().contains_key(PROXY_ERROR_HEADER)
}

fn pairs<I, K, V>(fields: I) -> Value
where
    I: IntoIterator<Item = (K, V)>,
    K: Into<String>,
    V: Into<String>,
{
    Value::Array(
        fields
            .into_iter()
            .map(|(name, value)| {
                let mut pair = Map::new();
                pair.insert("name".into(), Value::String(name.into()));
                pair.insert("value".into(), Value::String(value.into()));
                Value::Object(pair)
            })
            .collect(),
    )
}

/// The upstream's answer to a proxied request: its status (success or not), its headers and
/// its body, unchanged.
///
/// `headers` holds the upstream's `Content-Type` and, when the proxy passes them on (the
/// emulator does, with the prefix [`UPSTREAM_HEADER_PREFIX`]), its other end-to-end headers
/// under their own names. `Debug` shows the header names and the body's size only.
#[derive(Clone)]
#[non_exhaustive]
pub struct ProxyResponse {
    /// The upstream's status code.
    pub status: StatusCode,
    /// The upstream's headers.
    pub headers: HeaderMap,
    /// The upstream's body.
    pub body: Bytes,
}

impl ProxyResponse {
    fn from_proxy(response: Response<Bytes>) -> Self {
        let (parts, body) = response.into_parts();
        let mut headers = HeaderMap::new();
        for (name, value) in &parts.headers {
            if name == CONTENT_TYPE {
                headers.append(CONTENT_TYPE, value.clone());
            } else if let Some(original) = name.as_str().strip_prefix(UPSTREAM_HEADER_PREFIX)
                && let Ok(original) = HeaderName::from_bytes(original.as_bytes())
            {
                headers.append(original, value.clone());
            }
        }
        Self {
            status: parts.status,
            headers,
            body,
        }
    }

    /// The upstream's `Content-Type`, if it sent one that is visible ASCII.
    pub fn content_type(&self) -> Option<&str> {
        self.headers.get(CONTENT_TYPE)?.to_str().ok()
    }

    /// Decodes the body as JSON into `T`; [`Error::Decode`] when it is not that JSON.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T> {
        serde_json::from_slice(&self.body)
            .map_err(|e| Error::decode(self.status, self.body.clone(), e))
    }

    /// The body as text; `None` when it is not UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.body).ok()
    }

    /// The body as text, with invalid UTF-8 replaced by `�`.
    pub fn text_lossy(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

impl fmt::Debug for ProxyResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProxyResponse")
            .field("status", &self.status)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("body", &format_args!("<{} bytes>", self.body.len()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_headers_are_unprefixed_and_others_dropped() {
        let response = Response::builder()
            .status(418)
            .header("content-type", "text/plain")
            .header("x-svc-upstream-etag", "\"v1\"")
            .header("x-svc-upstream-set-cookie", "a=1")
            .header("x-svc-upstream-set-cookie", "b=2")
            .header("date", "Mon, 01 Jan 2026 00:00:00 GMT")
            .header("content-length", "5")
            .body(Bytes::from_static(b"hello"))
            .unwrap();
        let r = ProxyResponse::from_proxy(response);
        assert_eq!(r.status.as_u16(), 418);
        assert_eq!(r.content_type(), Some("text/plain"));
        assert_eq!(r.headers["etag"], "\"v1\"");
        assert_eq!(r.headers.get_all("set-cookie").iter().count(), 2);
        assert!(r.headers.get("date").is_none());
        assert!(r.headers.get("content-length").is_none());
        assert_eq!(r.text(), Some("hello"));
        let dbg = format!("{r:?}");
        assert!(!dbg.contains("hello") && !dbg.contains("a=1"), "{dbg}");
    }
}
