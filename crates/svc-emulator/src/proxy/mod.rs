//! The HTTP proxy: `POST /proxy_request/` (docs/contract.md 4.3).
//!
//! Checks, in order: a valid `JWT` (a user session's access token or a service token) -> `401`;
//! the body (`400`); a `project` other than the token's -> `403`, an unknown `environment` or
//! `resource` of it -> `404`; unknown `secret_tokens` -> `400`; the target on the allow-list ->
//! `403`, before any connection. Then the request is sent, and the answer is the upstream's
//! status, `Content-Type` and body, unchanged, with its other end-to-end headers prefixed with
//! `x-svc-upstream-`. An unreachable upstream is a `502`, and so is one that switches protocols
//! (`101`: the proxy does not do upgrades); a slow one is a `504`. A redirect to another origin
//! carries neither credentials nor any header or body a secret was substituted into.
//!
//! Every error of the proxy itself carries `x-svc-proxy-error: 1`, so that clients can tell it
//! from an upstream answer with the same status. Nothing here logs bodies, headers or tokens.

mod allow;
mod encode;
mod upstream;

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, HOST};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::{Map, Value};
use svc_model::proxy::{BodyType, PROXY_ERROR_HEADER, UPSTREAM_HEADER_PREFIX};

pub(crate) use upstream::Forwarder;

use axum::Router;
use encode::{component, encode_body, scalar_text};
use svc_emulator_http::AppState;
use svc_emulator_http::HttpError;
use svc_emulator_http::app::ProxyCaller;
use svc_emulator_http::extract::{BodyLimit, json_object};
use svc_emulator_http::serve;
use svc_model::routes;
use upstream::{Answer, Outgoing};

/// The proxy route, on the application host (relative to `/api`), forwarding with `forwarder`
/// (built at start from [`ProxyConfig`](crate::ProxyConfig)).
pub(crate) fn routes(router: Router<AppState>, forwarder: Forwarder) -> Router<AppState> {
    let forwarder = Arc::new(forwarder);
    let handler = move |state: State<AppState>, caller: Result<ProxyCaller, HttpError>, body| {
        proxy_request(state, caller, body, Arc::clone(&forwarder))
    };
    serve(router, &routes::PROXY_REQUEST, handler)
}

/// `POST /proxy_request/`. A caller without a valid `JWT` is refused like every other error of
/// the proxy itself, with the marker header.
async fn proxy_request(
    State(state): State<AppState>,
    caller: Result<ProxyCaller, HttpError>,
    body: Body,
    forwarder: Arc<Forwarder>,
) -> Response {
    let answer = match caller {
        Ok(ProxyCaller { project }) => handle(&state, &forwarder, &project, body).await,
        Err(error) => Err(error),
    };
    match answer {
        Ok(answer) => upstream_response(answer),
        Err(error) => {
            let mut response = error.into_response();
            response
                .headers_mut()
                .insert(PROXY_ERROR_HEADER, HeaderValue::from_static("1"));
            response
        }
    }
}

/// The checks after the caller's: the body, then what it names.
async fn handle(
    state: &AppState,
    forwarder: &Forwarder,
    project: &str,
    body: Body,
) -> Result<Answer, HttpError> {
    let fields = json_object(body, BodyLimit::DATA).await?;
    let request = ParsedRequest::parse(&fields)?;
    authorize(state, project, &request)?;
    let request = request.with_secrets(&forwarder.secrets)?;
    let outgoing = request.outgoing()?;
    forwarder.forward(outgoing).await
}

/// `project` must be the token's; `environment` and `resource` must exist in it.
fn authorize(state: &AppState, project: &str, request: &ParsedRequest) -> Result<(), HttpError> {
    if request.project.as_deref().is_some_and(|p| p != project) {
        return Err(HttpError::permission_denied());
    }
    let entry = state
        .registry()
        .project(project)
        .ok_or_else(HttpError::not_authenticated)?;
    if let Some(environment) = &request.environment
        && entry.environment(environment).is_none()
    {
        return Err(HttpError::not_found("Environment not found."));
    }
    if let Some(resource) = &request.resource
        && entry.resource(resource).is_none()
    {
        return Err(HttpError::unknown_resource(entry, resource));
    }
    Ok(())
}

/// Request headers the proxy sets itself or that belong to one connection: never forwarded
/// from `headers` (and never passed back from the upstream).
const HOP_BY_HOP: [&str; 9] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
];

/// The request body, checked.
#[derive(Debug)]
struct ParsedRequest {
    method: Method,
    url: String,
    query: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    body_type: BodyType,
    body: Option<Value>,
    project: Option<String>,
    environment: Option<String>,
    resource: Option<String>,
    secret_tokens: Vec<String>,
    /// The names of the headers a secret was substituted into.
    secret_headers: Vec<String>,
    /// Whether a secret was substituted into the body.
    secret_in_body: bool,
}

impl ParsedRequest {
    fn parse(fields: &Map<String, Value>) -> Result<Self, HttpError> {
        let method = match fields.get("method") {
            None | Some(Value::Null) => Method::GET,
            Some(Value::String(m)) => {
                let upper = m.trim().to_ascii_uppercase();
                match Method::from_bytes(upper.as_bytes()) {
                    Ok(Method::CONNECT) => {
                        return Err(HttpError::invalid_field(
                            "method",
                            "CONNECT is not supported.",
                        ));
                    }
                    Ok(method) if !upper.is_empty() => method,
                    _ => {
                        return Err(HttpError::invalid_field(
                            "method",
                            "Must be an HTTP method such as GET or POST.",
                        ));
                    }
                }
            }
            Some(_) => return Err(HttpError::invalid_field("method", "Must be a string.")),
        };
        let url = match fields.get("url") {
            Some(Value::String(url)) if !url.trim().is_empty() => url.trim().to_owned(),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                return Err(HttpError::invalid_field("url", "This field is required."));
            }
            Some(_) => return Err(HttpError::invalid_field("url", "Must be a string.")),
        };
        let body_type = match fields.get("body_type") {
            None | Some(Value::Null) => BodyType::Json,
            Some(Value::String(name)) => serde_json::from_value(Value::String(name.clone()))
                .map_err(|_| {
                    HttpError::invalid_field(
                        "body_type",
                        "Must be one of JSON, GraphQL, FormUrlEncoded, FormData, Raw.",
                    )
                })?,
            Some(_) => {
                return Err(HttpError::invalid_field(
                    "body_type",
                    "Must be one of JSON, GraphQL, FormUrlEncoded, FormData, Raw.",
                ));
            }
        };
        let secret_tokens = match fields.get("secret_tokens") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(names)) => names
                .iter()
                .map(|n| n.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    HttpError::invalid_field("secret_tokens", "Must be an array of names.")
                })?,
            Some(_) => {
                return Err(HttpError::invalid_field(
                    "secret_tokens",
                    "Must be an array of names.",
                ));
            }
        };
        Ok(Self {
            method,
            url,
            query: pairs(fields, "query_params")?,
            headers: pairs(fields, "headers")?,
            body_type,
            body: fields.get("body").filter(|b| !b.is_null()).cloned(),
            project: optional_text(fields, "project")?,
            environment: optional_text(fields, "environment")?,
            resource: optional_text(fields, "resource")?,
            secret_tokens,
            secret_headers: Vec::new(),
            secret_in_body: false,
        })
    }

    /// Replaces `{{secret:NAME}}` with the secret's value, for the names in `secret_tokens`,
    /// in the URL, the query values, the header values and every string of the body.
    fn with_secrets(
        mut self,
        secrets: &std::collections::BTreeMap<String, String>,
    ) -> Result<Self, HttpError> {
        let mut replacements = Vec::new();
        for name in &self.secret_tokens {
            let value = secrets.get(name).ok_or_else(|| {
                HttpError::invalid_field("secret_tokens", format!("Unknown secret token {name:?}."))
            })?;
            replacements.push((format!("{{{{secret:{name}}}}}"), value.as_str()));
        }
        if replacements.is_empty() {
            return Ok(self);
        }
        // Whether the text held a placeholder.
        let substitute = |text: &mut String| {
            let mut substituted = false;
            for (placeholder, value) in &replacements {
                if text.contains(placeholder.as_str()) {
                    *text = text.replace(placeholder.as_str(), value);
                    substituted = true;
                }
            }
            substituted
        };
        substitute(&mut self.url);
        for (_, value) in &mut self.query {
            substitute(value);
        }
        for (name, value) in &mut self.headers {
            if substitute(value) {
                self.secret_headers.push(name.clone());
            }
        }
        if let Some(body) = &mut self.body {
            self.secret_in_body = visit_strings(body, &substitute);
        }
        Ok(self)
    }

    /// The request as it goes to the upstream.
    fn outgoing(self) -> Result<Outgoing, HttpError> {
        let mut url = self.url;
        if !self.query.is_empty() {
            if let Some(fragment) = url.find('#') {
                url.truncate(fragment);
            }
            let mut separator = if url.contains('?') {
                if url.ends_with(['?', '&']) { "" } else { "&" }
            } else {
                "?"
            };
            for (name, value) in &self.query {
                url.push_str(separator);
                url.push_str(&component(name));
                url.push('=');
                url.push_str(&component(value));
                separator = "&";
            }
        }
        let mut headers = HeaderMap::new();
        let mut secret_headers = Vec::new();
        for (name, value) in &self.headers {
            let header = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
                HttpError::invalid_field("headers", format!("{name:?} is not a valid header name."))
            })?;
            if self.secret_headers.contains(name) && !secret_headers.contains(&header) {
                secret_headers.push(header.clone());
            }
            let value = HeaderValue::from_str(value).map_err(|_| {
                HttpError::invalid_field(
                    "headers",
                    format!("The value of {name:?} is not a valid header value."),
                )
            })?;
            if HOP_BY_HOP.contains(&header.as_str()) {
                continue;
            }
            headers.append(header, value);
        }
        let body = match &self.body {
            None => Bytes::new(),
            Some(body) => {
                let encoded = encode_body(self.body_type, body)?;
                if let Some(content_type) = encoded.content_type
                    && (encoded.overrides_header || !headers.contains_key(CONTENT_TYPE))
                {
                    let value = HeaderValue::from_str(&content_type)
                        .map_err(|_| HttpError::internal("bad content type"))?;
                    headers.insert(CONTENT_TYPE, value);
                }
                Bytes::from(encoded.bytes)
            }
        };
        Ok(Outgoing {
            method: self.method,
            url,
            headers,
            body,
            secret_headers,
            secret_in_body: self.secret_in_body,
        })
    }
}

/// `[{"name", "value"}, ...]` under `key` (absent or `null`: none); values may be strings,
/// numbers or booleans.
fn pairs(fields: &Map<String, Value>, key: &str) -> Result<Vec<(String, String)>, HttpError> {
    let error = || HttpError::invalid_field(key, "Must be an array of {\"name\", \"value\"}.");
    match fields.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                let name = item.get("name").and_then(Value::as_str).ok_or_else(error)?;
                let value = match item.get("value") {
                    None => String::new(),
                    Some(v) => scalar_text(v).ok_or_else(error)?,
                };
                Ok((name.to_owned(), value))
            })
            .collect(),
        Some(_) => Err(error()),
    }
}

fn optional_text(fields: &Map<String, Value>, key: &str) -> Result<Option<String>, HttpError> {
    match fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(HttpError::invalid_field(key, "Must be a string.")),
    }
}

/// Calls `f` on every string of `value`; whether any call returned `true`.
fn visit_strings(value: &mut Value, f: &impl Fn(&mut String) -> bool) -> bool {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |any, v| visit_strings(v, f) | any),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |any, v| visit_strings(v, f) | any),
        _ => false,
    }
}

/// The upstream's status, `Content-Type` and body, unchanged; its other end-to-end headers
/// prefixed.
fn upstream_response(answer: Answer) -> Response {
    let mut response = Response::new(Body::from(answer.body));
    *response.status_mut() = answer.status;
    let headers = response.headers_mut();
    for (name, value) in &answer.headers {
        if name == CONTENT_TYPE {
            headers.append(CONTENT_TYPE, value.clone());
        } else if name == CONTENT_LENGTH || name == HOST || HOP_BY_HOP.contains(&name.as_str()) {
            continue;
        } else if let Ok(prefixed) =
            HeaderName::from_bytes(format!("{UPSTREAM_HEADER_PREFIX}{name}").as_bytes())
        {
            headers.append(prefixed, value.clone());
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<ParsedRequest, HttpError> {
        ParsedRequest::parse(body.as_object().unwrap())
    }

    #[tokio::test]
    async fn defaults_and_field_errors() {
        let r = parse(json!({"url": " http://localhost/ "})).unwrap();
        assert_eq!(r.method, Method::GET);
        assert_eq!(r.url, "http://localhost/");
        assert_eq!(r.body_type, BodyType::Json);
        assert!(r.body.is_none());
        assert_eq!(
            parse(json!({"url": "x", "method": "patch"}))
                .unwrap()
                .method,
            Method::PATCH
        );
        for (bad, field) in [
            (json!({}), "url"),
            (json!({"url": ""}), "url"),
            (json!({"url": 1}), "url"),
            (json!({"url": "x", "method": "GE T"}), "method"),
            (json!({"url": "x", "method": "CONNECT"}), "method"),
            (json!({"url": "x", "method": 1}), "method"),
            (json!({"url": "x", "body_type": "json"}), "body_type"),
            (json!({"url": "x", "headers": {"a": "b"}}), "headers"),
            (
                json!({"url": "x", "query_params": [{"value": "b"}]}),
                "query_params",
            ),
            (
                json!({"url": "x", "query_params": [{"name": "a", "value": [1]}]}),
                "query_params",
            ),
            (json!({"url": "x", "secret_tokens": "A"}), "secret_tokens"),
            (json!({"url": "x", "project": 1}), "project"),
        ] {
            let e = parse(bad.clone()).unwrap_err();
            assert_eq!(e.status().as_u16(), 400, "{bad}");
            let body = axum::body::to_bytes(e.into_response().into_body(), usize::MAX)
                .await
                .unwrap();
            let body: Value = serde_json::from_slice(&body).unwrap();
            assert!(body.get(field).is_some(), "{bad}: {body}");
        }
    }

    #[test]
    fn query_is_appended_and_headers_filtered() {
        let r = parse(json!({
            "url": "http://h/p?x=1#frag",
            "query_params": [{"name": "a b", "value": "c&d"}, {"name": "n", "value": 5}],
            "headers": [
                {"name": "X-One", "value": "1"},
                {"name": "Host", "value": "evil"},
                {"name": "Connection", "value": "close"},
                {"name": "Content-Type", "value": "application/vnd.x+json"},
            ],
            "body": {"a": 1},
        }))
        .unwrap();
        let out = r.outgoing().unwrap();
        assert_eq!(out.url, "http://h/p?x=1&a%20b=c%26d&n=5");
        assert_eq!(out.headers["x-one"], "1");
        assert!(out.headers.get("host").is_none() && out.headers.get("connection").is_none());
        assert_eq!(out.headers["content-type"], "application/vnd.x+json");
        assert_eq!(&out.body[..], br#"{"a":1}"#);

        let bad = parse(json!({"url": "http://h/", "headers": [{"name": "a b", "value": "x"}]}));
        assert_eq!(bad.unwrap().outgoing().unwrap_err().status().as_u16(), 400);
        let bad = parse(json!({"url": "http://h/", "headers": [{"name": "a", "value": "x\ny"}]}));
        assert_eq!(bad.unwrap().outgoing().unwrap_err().status().as_u16(), 400);
    }

    #[test]
    fn secrets_are_substituted_only_when_named() {
        let secrets = std::collections::BTreeMap::from([("KEY".to_owned(), "s3cr3t".to_owned())]);
        let body = json!({
            "url": "http://h/{{secret:KEY}}",
            "headers": [{"name": "Authorization", "value": "Bearer {{secret:KEY}}"}],
            "query_params": [{"name": "k", "value": "{{secret:KEY}}"}],
            "body": {"nested": ["{{secret:KEY}}", "{{secret:OTHER}}"]},
            "secret_tokens": ["KEY"],
        });
        let r = parse(body).unwrap().with_secrets(&secrets).unwrap();
        assert_eq!(r.secret_headers, ["Authorization"]);
        assert!(r.secret_in_body);
        assert_eq!(r.url, "http://h/s3cr3t");
        assert_eq!(r.headers[0].1, "Bearer s3cr3t");
        assert_eq!(r.query[0].1, "s3cr3t");
        assert_eq!(
            r.body.unwrap(),
            json!({"nested": ["s3cr3t", "{{secret:OTHER}}"]})
        );

        let unnamed = parse(json!({"url": "http://h/{{secret:KEY}}"}))
            .unwrap()
            .with_secrets(&secrets)
            .unwrap();
        assert_eq!(unnamed.url, "http://h/{{secret:KEY}}");
        assert!(unnamed.secret_headers.is_empty() && !unnamed.secret_in_body);
        let unknown = parse(json!({"url": "http://h/", "secret_tokens": ["NOPE"]}))
            .unwrap()
            .with_secrets(&secrets)
            .unwrap_err();
        assert_eq!(unknown.status().as_u16(), 400);
    }

    #[test]
    fn upstream_headers_are_prefixed() {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("text/csv"));
        headers.insert("content-length", HeaderValue::from_static("3"));
        headers.insert("transfer-encoding", HeaderValue::from_static("chunked"));
        headers.insert("x-svc-proxy-error", HeaderValue::from_static("1"));
        headers.append("set-cookie", HeaderValue::from_static("a=1"));
        headers.append("set-cookie", HeaderValue::from_static("b=2"));
        let response = upstream_response(Answer {
            status: axum::http::StatusCode::IM_A_TEAPOT,
            headers,
            body: Bytes::from_static(b"a,b"),
        });
        assert_eq!(response.status().as_u16(), 418);
        let h = response.headers();
        assert_eq!(h["content-type"], "text/csv");
        assert!(
            h.get("x-svc-proxy-error").is_none(),
            "an upstream's marker is not ours"
        );
        assert_eq!(h["x-svc-upstream-x-svc-proxy-error"], "1");
        assert_eq!(h.get_all("x-svc-upstream-set-cookie").iter().count(), 2);
        assert!(h.get("x-svc-upstream-transfer-encoding").is_none());
        assert!(h.get("x-svc-upstream-content-length").is_none());
    }
}
