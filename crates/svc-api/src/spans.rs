//! The `tracing` spans of a call: one `operation` span per SDK operation, and an `attempt` span
//! per HTTP request it sends, so that retries show as several children (docs/tracing.md).
//!
//! Fields use OpenTelemetry's HTTP client names, so that `tracing-opentelemetry` exports them as
//! the attributes a tracing backend knows; `otel.name` and `otel.kind` are that layer's special
//! fields. A span carries names, the method, the path *template*, the host, statuses and error
//! kinds: never a credential, a header, a body, an id or a query, which hold secrets and
//! personal data. Numbers are recorded as `i64`: `tracing-opentelemetry` exports an `i64` as an
//! integer attribute, as the conventions ask, but a `u64` as text. Without a subscriber that wants them, `info_span!` makes a disabled span
//! without evaluating any field, and recording into it does nothing: nothing here is formatted
//! or allocated unless a span is recorded.

use std::fmt;

use http::{Method, StatusCode, Uri};
use svc_model::routes::{self, Route};
use tracing::Span;
use tracing::field::Empty;

use crate::error::Error;
use crate::name::Name;
use crate::request::Call;

/// What an operation is called and where it goes: its spans' `svc.operation` and `otel.name`,
/// and its route in svc-model's table ([`svc_model::routes`]), which gives the method, the
/// spans' `url.path` and the template the URL is built from.
///
/// **Adding an operation:** add its route to `svc_model::routes` (and the emulator's
/// `openapi.json`), declare one constant next to the code that builds its URL, and pass it to
/// [`Call::new`]; when the call is on a resource, name it with [`Call::resource`]. The spans
/// and every field come from there, nothing else is needed. For example:
///
/// ```text
/// const RUN: Operation = Operation::new("actions.run", &routes::RUN_ACTION);
/// let url = client.data_route(&routes::RUN_ACTION, |name| ...)?.build();
/// let call = Call::new(RUN, url).resource(resource).auth(...);
/// ```
///
/// The name is `group.verb`, lower case, stable across releases (dashboards and alerts key on
/// it). The template is relative to the base URL, with each value the caller chooses
/// (project, environment, resource, model, key, uid, ...) written as `{name}` and no query: a
/// template has few values, where real paths have one per record and may hold personal data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Operation {
    /// `svc.operation` and the operation span's `otel.name`, e.g. `records.list`.
    pub(crate) name: &'static str,
    /// The route: the method, and `url.path`, the path template, e.g.
    /// `/projects/{project}/{environment}/{resource}/models/{model}`.
    pub(crate) route: &'static Route,
}

impl Operation {
    pub(crate) const fn new(name: &'static str, route: &'static Route) -> Self {
        Self { name, route }
    }

    /// The path template: the spans' `url.path`.
    pub(crate) const fn path(&self) -> &'static str {
        self.route.path()
    }

    /// The route's method, whether it is idempotent, and whether the caller may declare it
    /// so (`PATCH`): one match, where comparing `http::Method`s would take several.
    pub(crate) fn method(&self) -> (Method, bool, bool) {
        match self.route.method() {
            routes::Method::Get => (Method::GET, true, false),
            routes::Method::Post => (Method::POST, false, false),
            routes::Method::Put => (Method::PUT, true, false),
            routes::Method::Patch => (Method::PATCH, false, true),
            routes::Method::Delete => (Method::DELETE, true, false),
        }
    }
}

/// The span of one operation, child of the caller's current span.
///
/// `server.address`, `server.port` and `http.response.status_code` are recorded by the retry
/// loop when they are known; `error.type` and `otel.status_code` by [`finish`].
pub(crate) fn operation(call: &Call, client_project: Option<&str>) -> Span {
    tracing::info_span!(
        target: "svc_api",
        "operation",
        otel.name = call.op.name,
        otel.kind = "client",
        otel.status_code = Empty,
        svc.operation = call.op.name,
        svc.project = call.project.as_ref().map(Name::as_str).or(client_project),
        svc.resource = call.resource.as_ref().map(Name::as_str),
        http.request.method = call.method.as_str(),
        url.path = call.op.path(),
        server.address = Empty,
        server.port = Empty,
        http.response.status_code = Empty,
        "error.type" = Empty,
    )
}

/// The span of one HTTP request of `operation` (attempt 1, 2, ...), to `uri`.
pub(crate) fn attempt(operation: &Span, call: &Call, uri: &Uri, attempt: u32) -> Span {
    let span = tracing::info_span!(
        target: "svc_api::attempt",
        parent: operation,
        "attempt",
        // OpenTelemetry's HTTP client span name: `{method} {url.template}`.
        otel.name = %AttemptName { method: &call.method, path: call.op.path() },
        otel.kind = "client",
        otel.status_code = Empty,
        svc.operation = call.op.name,
        http.request.method = call.method.as_str(),
        url.path = call.op.path(),
        server.address = Empty,
        server.port = Empty,
        // Set on retries only, as the conventions ask: 1 on the second attempt.
        http.request.resend_count = attempt.checked_sub(1).filter(|n| *n > 0).map(i64::from),
        http.response.status_code = Empty,
        "error.type" = Empty,
    );
    record_server(&span, uri);
    span
}

struct AttemptName<'a> {
    method: &'a Method,
    path: &'static str,
}

impl fmt::Display for AttemptName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

/// `server.address` and `server.port` of `uri`: its host (an IPv6 address without brackets)
/// and its port, else the scheme's.
pub(crate) fn record_server(span: &Span, uri: &Uri) {
    if span.is_disabled() {
        return;
    }
    if let Some(host) = uri.host() {
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        span.record("server.address", host);
    }
    let default_port = match uri.scheme_str() {
        Some("https") => Some(443),
        Some("http") => Some(80),
        _ => None,
    };
    if let Some(port) = uri.port_u16().or(default_port) {
        span.record("server.port", i64::from(port));
    }
}

/// An answer's status; `failed`: the call does not take it as its answer.
pub(crate) fn record_status(span: &Span, status: StatusCode, failed: bool) {
    // A disabled span keeps its fields' names: recording would still look each one up.
    if span.is_disabled() {
        return;
    }
    span.record("http.response.status_code", i64::from(status.as_u16()));
    if failed {
        span.record("error.type", status.as_str());
        span.record("otel.status_code", "error");
    }
}

/// A request that got no answer (attempt spans).
pub(crate) fn record_transport_error(span: &Span, error: &svc_transport::TransportError) {
    if span.is_disabled() {
        return;
    }
    span.record("error.type", transport_error_type(error.kind()));
    span.record("otel.status_code", "error");
}

/// The outcome of an operation: on failure, `error.type` (the status code as text for an
/// error answer, else the kind of error) and an error status.
pub(crate) fn finish<T>(span: &Span, result: &Result<T, Error>) {
    if span.is_disabled() {
        return;
    }
    if let Err(error) = result {
        span.record("error.type", error_type(error));
        span.record("otel.status_code", "error");
    }
}

/// `error.type` of an operation's error: low-cardinality, never the error's message.
fn error_type(error: &Error) -> &str {
    match error {
        Error::Api(api) => api.status.as_str(),
        Error::Transport(e) => transport_error_type(e.kind()),
        Error::Timeout(_) => "timeout",
        Error::Decode(_) => "decode",
        Error::Auth(_) => "auth",
        Error::Protocol(_) => "protocol",
        Error::InvalidInput(_) => "invalid_input",
        Error::Workflow(_) => "workflow_failed",
    }
}

fn transport_error_type(kind: svc_transport::TransportErrorKind) -> &'static str {
    use svc_transport::TransportErrorKind as Kind;
    match kind {
        Kind::Connect => "connect",
        Kind::Timeout => "timeout",
        Kind::Io => "io",
        Kind::ResponseTooLarge => "response_too_large",
        Kind::InvalidRequest => "invalid_request",
        // `Other`, and kinds added later: OpenTelemetry's fallback value.
        _ => "_OTHER",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempt_names_are_method_and_template() {
        let name = AttemptName {
            method: &Method::GET,
            path: "/projects/{project}/",
        };
        assert_eq!(name.to_string(), "GET /projects/{project}/");
    }

    #[test]
    fn error_types_are_statuses_or_kinds() {
        use svc_transport::{TransportError, TransportErrorKind};
        assert_eq!(
            error_type(&Error::Timeout(std::time::Duration::ZERO)),
            "timeout"
        );
        assert_eq!(error_type(&Error::invalid("no")), "invalid_input");
        assert_eq!(error_type(&Error::Protocol("loop".into())), "protocol");
        for (kind, text) in [
            (TransportErrorKind::Connect, "connect"),
            (TransportErrorKind::Timeout, "timeout"),
            (TransportErrorKind::Io, "io"),
            (TransportErrorKind::ResponseTooLarge, "response_too_large"),
            (TransportErrorKind::InvalidRequest, "invalid_request"),
            (TransportErrorKind::Other, "_OTHER"),
        ] {
            let e = Error::Transport(TransportError::message(kind, "x"));
            assert_eq!(error_type(&e), text);
        }
    }
}
