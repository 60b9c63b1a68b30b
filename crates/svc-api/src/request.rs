//! Sending a call: credentials, retries, the overall timeout, status checks and decoding.
//!
//! Every operation group builds a [`Call`] and hands it to [`Client::send`] or
//! [`Client::send_json`]; this is the one place where requests meet the transport.

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::future::{Either, select};
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, RETRY_AFTER, USER_AGENT};
use http::{HeaderValue, Method, Request, Response};
use serde::de::DeserializeOwned;
use svc_auth::Credential;
use svc_model::{ErrorBody, Timestamp};
use svc_transport::{TransportError, TransportErrorKind};
use tracing::{Instrument, Span};

use crate::client::Client;
use crate::error::{ApiError, Error, Result, is_retryable_status};
use crate::name::Name;
use crate::options::HandleOptions;
use crate::retry::Jitter;
use crate::spans;
pub(crate) use crate::spans::Operation;

/// Awaits `$future` inside `$span`, or as it is when the span is disabled (no subscriber
/// wants it): wrapping moves the future, whose state is large, into the wrapper, and that
/// copy alone cost 1k instructions per call (`cargo xtask bench --only instructions`).
/// A macro, not a function: a function would move the future too.
macro_rules! in_span {
    ($span:expr, $future:expr) => {
        if $span.is_disabled() {
            $future.await
        } else {
            $future.instrument($span.clone()).await
        }
    };
}

/// Which credential a call carries; resolved when it is sent, so a session is refreshed only
/// when it is the credential that will be used.
#[derive(Debug, Clone)]
pub(crate) enum CallAuth {
    /// No credentials (login, register, refresh, ...).
    None,
    /// This credential (the API key on the application host; on the data host, a credential
    /// that does not depend on the session, chosen when the call is made).
    #[cfg(feature = "_fixed")]
    Fixed(Credential),
    /// A data host route: a token for this call, else the client's token for the resource, else the
    /// API key, else the user session or service token (docs/client-behaviour.md section 2).
    #[cfg(feature = "_data")]
    Data {
        resource: Option<String>,
        per_call: Option<svc_auth::Secret>,
    },
    /// The user session or service token only (account routes, the proxy).
    #[cfg(any(feature = "proxy", feature = "account"))]
    Session,
}

#[cfg(any(
    feature = "records",
    feature = "sql",
    feature = "users",
    feature = "teams",
    feature = "resources"
))]
impl CallAuth {
    /// A data host call on `resource`, with an optional token for this call.
    pub(crate) fn data(resource: &str, per_call: Option<&svc_auth::Secret>) -> Self {
        Self::Data {
            resource: Some(resource.to_owned()),
            per_call: per_call.cloned(),
        }
    }
}

/// One API call, before credentials and retries. `Debug` shows the method, the path and the
/// body's length: the query may hold personal data and the body a password.
pub(crate) struct Call {
    /// Which operation this is, for its spans.
    pub(crate) op: Operation,
    /// The resource it is on, if any (`svc.resource`).
    pub(crate) resource: Option<Name>,
    /// The project it is on, when not the client's (`svc.project`).
    pub(crate) project: Option<Name>,
    pub(crate) method: Method,
    /// Absolute URL, query included.
    pub(crate) url: String,
    pub(crate) auth: CallAuth,
    pub(crate) body: Option<Bytes>,
    /// Whether sending it twice does no harm (reads, deletes, read-only POSTs).
    pub(crate) idempotent: bool,
    /// `Some`: this call's own draft choice (page settings); `None`: the client's.
    pub(crate) draft: Option<bool>,
    /// Which responses are the call's answer; the others are errors. Default: `2xx`.
    pub(crate) is_answer: fn(&Response<Bytes>) -> bool,
    /// The `Accept` header.
    pub(crate) accept: HeaderValue,
    /// The handle's [`CallOptions`](crate::CallOptions), if it has any.
    pub(crate) options: HandleOptions,
    /// Whether the caller may declare the call idempotent (`CallOptions::idempotent(true)`):
    /// updates, and operations whose effect only the caller knows (actions, workflows, the
    /// proxy).
    pub(crate) caller_may_repeat: bool,
}

fn is_success(response: &Response<Bytes>) -> bool {
    response.status().is_success()
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("op", &self.op.name)
            .field("method", &self.method)
            .field("path", &self.path())
            .field("auth", &self.auth)
            .field("body_len", &self.body.as_ref().map(Bytes::len))
            .field("idempotent", &self.idempotent)
            .finish()
    }
}

impl Call {
    /// A call of operation `op` (see [`Operation`] for adding one), with its route's method
    /// and that method's idempotency: `GET`, `PUT` and `DELETE` are; `POST` and `PATCH` are not
    /// (use [`idempotent`](Self::idempotent) for read-only POSTs).
    #[inline]
    pub(crate) fn new(op: Operation, url: String) -> Self {
        let (method, idempotent, caller_may_repeat) = op.method();
        Self {
            op,
            resource: None,
            project: None,
            method,
            url,
            auth: CallAuth::None,
            body: None,
            idempotent,
            draft: None,
            is_answer: is_success,
            accept: HeaderValue::from_static("application/json"),
            options: None,
            caller_may_repeat,
        }
    }

    /// Applies the handle's options (see [`CallOptions`](crate::CallOptions)), checked when the
    /// call is sent.
    #[inline]
    pub(crate) fn options(mut self, options: &HandleOptions) -> Self {
        self.options.clone_from(options);
        self
    }

    /// Lets the caller declare this call idempotent: its effect is the caller's to know (an
    /// action, a workflow, a proxied request).
    #[cfg(any(feature = "actions", feature = "workflows", feature = "proxy"))]
    pub(crate) fn caller_may_repeat(mut self) -> Self {
        self.caller_may_repeat = true;
        self
    }

    /// Whether sending the call twice does no harm: the caller's word where it may give it,
    /// else the operation's. A `true` the call cannot take was refused by [`Call::check_options`].
    fn is_idempotent(&self) -> bool {
        match self.options.as_ref().and_then(|o| o.idempotent) {
            Some(said) => said,
            None => self.idempotent,
        }
    }

    /// Refuses options this call cannot take, before anything is sent.
    fn check_options(&self) -> Result<()> {
        let Some(options) = &self.options else {
            return Ok(());
        };
        if let Some(why) = &options.invalid {
            return Err(Error::invalid(why.clone()));
        }
        if options.idempotent == Some(true) && !self.idempotent && !self.caller_may_repeat {
            return Err(Error::invalid(format!(
                "{} cannot be declared idempotent: sending it twice is not safe (a second \
                 record, or a one-time token spent); CallOptions::idempotent(true) is taken by \
                 updates, action and workflow runs and proxied requests",
                self.op.name
            )));
        }
        Ok(())
    }

    /// Names the resource the call is on, for its spans.
    #[cfg(any(
        feature = "records",
        feature = "sql",
        feature = "users",
        feature = "teams",
        feature = "resources",
        feature = "actions"
    ))]
    #[inline]
    pub(crate) fn resource(mut self, resource: &str) -> Self {
        self.resource = Some(Name::new(resource));
        self
    }

    /// Names the project the call is on, for its spans, when it is not the client's.
    #[cfg(feature = "projects")]
    pub(crate) fn project(mut self, project: &str) -> Self {
        self.project = Some(Name::new(project));
        self
    }

    /// Sets this call's draft switch, whatever the client's.
    #[cfg(feature = "pages")]
    pub(crate) fn draft(mut self, draft: bool) -> Self {
        self.draft = Some(draft);
        self
    }

    /// Treats the responses `is_answer` accepts as the answer (e.g. every upstream status of a
    /// proxied request), and accepts any media type.
    #[cfg(feature = "proxy")]
    pub(crate) fn answers(mut self, is_answer: fn(&Response<Bytes>) -> bool) -> Self {
        self.is_answer = is_answer;
        self.accept = HeaderValue::from_static("*/*");
        self
    }

    /// Sends exactly this credential.
    #[cfg(any(feature = "pages", feature = "projects"))]
    pub(crate) fn credential(mut self, credential: Credential) -> Self {
        self.auth = CallAuth::Fixed(credential);
        self
    }

    /// Chooses the credential when the call is sent.
    #[cfg(feature = "_session")]
    #[inline]
    pub(crate) fn auth(mut self, auth: CallAuth) -> Self {
        self.auth = auth;
        self
    }

    /// Serializes `body` as JSON. Fails (nothing sent) when it cannot be serialized.
    #[cfg(any(
        feature = "pages",
        feature = "records",
        feature = "sql",
        feature = "users",
        feature = "teams",
        feature = "resources",
        feature = "actions",
        feature = "workflows",
        feature = "proxy",
        feature = "account"
    ))]
    pub(crate) fn json<B: serde::Serialize + ?Sized>(mut self, body: &B) -> Result<Self> {
        let bytes = serde_json::to_vec(body)
            .map_err(|e| Error::invalid_because("the request body could not be serialized", e))?;
        self.body = Some(Bytes::from(bytes));
        Ok(self)
    }

    /// Marks a read-only POST as safe to retry.
    #[cfg(any(
        feature = "records",
        feature = "sql",
        feature = "resources",
        feature = "proxy"
    ))]
    pub(crate) fn idempotent(mut self) -> Self {
        self.idempotent = true;
        self
    }

    fn path(&self) -> &str {
        // For error messages and events: the URL without scheme, host and query. Borrowed, so
        // that a request whose events nobody records pays no allocation for them.
        let url = self.url.as_str();
        let end = url.bytes().position(|b| b == b'?' || b == b'#');
        let without_query = &url[..end.unwrap_or(url.len())];
        let scheme_end = without_query
            .as_bytes()
            .windows(3)
            .position(|w| w == b"://");
        match scheme_end {
            Some(i) => {
                let rest = &without_query[i + 3..];
                rest.find('/').map_or("/", |i| &rest[i..])
            }
            None => without_query,
        }
    }
}

impl Client {
    /// Sends a call and returns the response when its status is a success.
    #[cfg(any(
        feature = "pages",
        feature = "records",
        feature = "users",
        feature = "teams",
        feature = "resources",
        feature = "proxy"
    ))]
    // `send` and `send_json` return `operation`'s future itself, not one of their own around
    // it: an `async fn` wrapper would be one more future that holds and copies the whole call
    // state (a kilobyte) once per call.
    pub(crate) fn send<'a>(
        &'a self,
        call: &'a Call,
    ) -> impl Future<Output = Result<Response<Bytes>>> {
        self.operation(call, Ok)
    }

    /// Sends a call and decodes the success body as `T`, straight from the bytes.
    #[cfg(any(
        feature = "pages",
        feature = "projects",
        feature = "records",
        feature = "sql",
        feature = "users",
        feature = "teams",
        feature = "account"
    ))]
    pub(crate) fn send_json<'a, T: DeserializeOwned>(
        &'a self,
        call: &'a Call,
    ) -> impl Future<Output = Result<T>> {
        self.operation(call, decode)
    }

    /// One operation in its span: the call sent, its answer read by `read` (so that a body that
    /// does not decode, or a workflow run that failed, fails the span too).
    pub(crate) async fn operation<T>(
        &self,
        call: &Call,
        read: impl FnOnce(Response<Bytes>) -> Result<T>,
    ) -> Result<T> {
        let span = self.operation_span(call);
        let result = in_span!(span, self.send_timed(call, &span)).and_then(read);
        spans::finish(&span, &result);
        result
    }

    /// The span of one operation (see [`spans`]).
    pub(crate) fn operation_span(&self, call: &Call) -> Span {
        spans::operation(call, self.inner.project.as_deref())
    }

    /// Sends a call within the overall timeout: the call's own, else the client's.
    async fn send_timed(&self, call: &Call, span: &Span) -> Result<Response<Bytes>> {
        call.check_options()?;
        let own = call.options.as_ref().and_then(|o| o.timeout);
        // One future, pinned here and awaited in place with or without the timeout: awaiting
        // it in one branch and moving it into `within` in the other kept room for two copies
        // of its state (a kilobyte each) in this future, which every call carries and copies.
        let work = std::pin::pin!(self.send_authorized(call, span));
        let Some(limit) = own.or(self.inner.timeout) else {
            return work.await;
        };
        self.within(limit, work).await.unwrap_or_else(|| {
            tracing::debug!(
                timeout_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
                "svc-api: the overall timeout ran out"
            );
            Err(Error::Timeout(limit))
        })
    }

    /// Resolves the call's credential (refreshing the session if that is what is sent), then
    /// sends with retries.
    async fn send_authorized(&self, call: &Call, span: &Span) -> Result<Response<Bytes>> {
        let authorization = match &call.auth {
            // Chosen when the call was made (an API key, a resource token): read in place,
            // where `resolve` would hand back a clone of it.
            #[cfg(feature = "_fixed")]
            CallAuth::Fixed(credential) => Some(self.authorization(credential)?),
            auth => match self.resolve(auth).await? {
                Some(credential) => Some(self.authorization(&credential)?),
                None => None,
            },
        };
        self.send_with_retries(call, authorization, span).await
    }

    /// The `Authorization` value of `credential`: made once for the client's own API key or
    /// resource token, else now.
    fn authorization(&self, credential: &Credential) -> Result<HeaderValue> {
        match self.inner.sender.prepared.authorization(credential) {
            Some(value) => Ok(value),
            None => credential
                .header_value()
                .map_err(|e| Error::invalid_because(e.to_string(), e)),
        }
    }

    /// The credential `auth` stands for, refreshing the session first if that is what will be
    /// sent and a refresh is due.
    pub(crate) async fn resolve(&self, auth: &CallAuth) -> Result<Option<Credential>> {
        match auth {
            CallAuth::None => Ok(None),
            #[cfg(feature = "_fixed")]
            CallAuth::Fixed(credential) => Ok(Some(credential.clone())),
            #[cfg(feature = "_data")]
            CallAuth::Data { resource, per_call } => self
                .data_credential(resource.as_deref(), per_call.as_ref())
                .await
                .map(Some),
            #[cfg(any(feature = "proxy", feature = "account"))]
            CallAuth::Session => self.signed_in_credential().await.map(Some),
        }
    }

    /// The retry loop, with the `Authorization` value already chosen, each attempt in a span
    /// under the operation's `span`. The session's refresh call comes straight here: it must not
    /// resolve credentials, which is what asked for it.
    pub(crate) async fn send_with_retries(
        &self,
        call: &Call,
        authorization: Option<HeaderValue>,
        span: &Span,
    ) -> Result<Response<Bytes>> {
        let url = self.with_draft(call);
        // Made before the first attempt (an invalid URL fails here, nothing sent) and moved into
        // its request; a retry makes it again rather than every attempt cloning it.
        let mut uri = Some(self.uri(call, &url)?);
        if let Some((uri, _)) = &uri {
            spans::record_server(span, uri);
        }
        // Seeded only when a retry needs a backoff: most calls succeed at once.
        let mut jitter: Option<Jitter> = None;
        let mut attempt = 1;
        // Events carry the method, the path (no query), the status, the attempt and the time:
        // never a header or a body, which hold credentials and personal data. Their fields are
        // worked out only when an event is recorded, and the clock is read only when the
        // events that show the time would be.
        loop {
            let (uri, host) = match uri.take() {
                Some(uri) => uri,
                None => self.uri(call, &url)?,
            };
            let attempt_span = spans::attempt(span, call, &uri, attempt);
            let request = self.build_request(call, uri, host, authorization.as_ref());
            tracing::trace!(method = %call.method, path = %call.path(), attempt, "svc-api: sending");
            let started = tracing::enabled!(tracing::Level::DEBUG).then(Instant::now);
            // The transport is handed the request now (see `attempt`), inside the attempt's
            // span as it is when the span is entered by polling.
            let exchange = if attempt_span.is_disabled() {
                self.attempt(request)
            } else {
                let _entered = attempt_span.enter();
                self.attempt(request)
            };
            let answer = in_span!(attempt_span, exchange);
            let elapsed_ms = started.map_or(0, |started| {
                u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
            });
            match &answer {
                Ok(response) => {
                    let failed = !(call.is_answer)(response);
                    spans::record_status(&attempt_span, response.status(), failed);
                    spans::record_status(span, response.status(), false);
                }
                Err(e) => spans::record_transport_error(&attempt_span, e),
            }
            drop(attempt_span);
            match &answer {
                Ok(response) => tracing::debug!(
                    method = %call.method,
                    path = %call.path(),
                    status = response.status().as_u16(),
                    attempt,
                    elapsed_ms,
                    "svc-api: answered"
                ),
                Err(e) => tracing::debug!(
                    method = %call.method,
                    path = %call.path(),
                    attempt,
                    elapsed_ms,
                    error = %e,
                    "svc-api: no answer"
                ),
            }
            let (error, retry_after) = match answer {
                Ok(response) if (call.is_answer)(&response) => return Ok(response),
                Ok(response) => {
                    let error = api_error(call, response);
                    let retry = call.is_idempotent() && is_retryable_status(error.status);
                    let after = error.retry_after.map(Duration::from_secs);
                    if !retry {
                        return Err(Error::Api(Box::new(error)));
                    }
                    (Error::Api(Box::new(error)), after)
                }
                Err(e) => {
                    // A request that certainly was not sent (the connection never opened, or its
                    // connect timed out) is safe to retry whatever it is; one that may have
                    // reached the server only when it is idempotent.
                    let not_sent = e.was_sent() == svc_transport::Sent::No;
                    let retry = e.is_retryable() && (not_sent || call.is_idempotent());
                    if !retry {
                        return Err(Error::Transport(e));
                    }
                    (Error::Transport(e), None)
                }
            };
            let jitter = jitter.get_or_insert_with(Jitter::new);
            let policy = call.options.as_ref().and_then(|o| o.retry.as_ref());
            match policy
                .unwrap_or(&self.inner.retry)
                .delay(attempt, retry_after, jitter)
            {
                Some(wait) => {
                    tracing::debug!(
                        method = %call.method,
                        path = %call.path(),
                        attempt,
                        wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                        "svc-api: retrying"
                    );
                    self.inner.sender.sleep.sleep(wait).await;
                    attempt += 1;
                }
                None => return Err(error),
            }
        }
    }

    /// The call's URL (`url`, the draft switch applied) as a URI. Only the path and query are
    /// parsed when the URL is on one of the client's hosts; then the `Host` header may be
    /// ready-made too.
    fn uri(&self, call: &Call, url: &str) -> Result<(http::Uri, Option<HeaderValue>)> {
        match self.inner.sender.prepared.uri(url) {
            Some(prepared) => Ok(prepared),
            None => url
                .parse::<http::Uri>()
                .map(|uri| (uri, None))
                .map_err(|e| {
                    Error::invalid_because(format!("{:?} is not a valid URL", call.url), e)
                }),
        }
    }

    /// One attempt through the transport. With a custom transport and
    /// [`attempt_timeout`](crate::ClientBuilder::attempt_timeout), the client bounds it itself;
    /// the default transport bounds its attempts on its own.
    ///
    /// The request goes to the transport when this is called (its future owns what it needs),
    /// not when the attempt is first polled: the attempt's future then holds the transport's
    /// boxed future rather than the request (256 bytes), and every future around it is that
    /// much smaller, each of which is copied whole once per call.
    ///
    /// Without a limit of the client's (the default transport bounds its own attempts), the
    /// attempt is the transport's future itself, polled with no state machine around it.
    fn attempt(
        &self,
        request: Request<Bytes>,
    ) -> impl Future<Output = std::result::Result<Response<Bytes>, TransportError>> {
        let exchange = self.inner.sender.transport.send(request);
        match self.inner.sender.attempt_timeout {
            None => Either::Left(exchange),
            // Boxed: only custom transports with an attempt timeout take this way (which
            // allocates the timer's future already), and unboxed its state would take room in
            // every call's future.
            Some(limit) => Either::Right(Box::pin(self.bounded_attempt(limit, exchange))),
        }
    }

    /// `exchange` (an attempt's transport future) within the client's attempt timeout.
    async fn bounded_attempt(
        &self,
        limit: Duration,
        exchange: svc_transport::BoxFuture<
            'static,
            std::result::Result<Response<Bytes>, TransportError>,
        >,
    ) -> std::result::Result<Response<Bytes>, TransportError> {
        self.within(limit, exchange).await.unwrap_or_else(|| {
            Err(TransportError::message(
                TransportErrorKind::Timeout,
                format!(
                    "no complete response within {limit:?} (the attempt timeout); the server \
                     may be slow or unreachable, and may have received the request: retry only \
                     if it is idempotent, or raise the timeout"
                ),
            ))
        })
    }

    /// `work`'s output, or `None` when the client's timer reaches `limit` first. `work` is polled
    /// first, so an answer that is ready wins over a timer that is too.
    async fn within<T>(&self, limit: Duration, work: impl Future<Output = T>) -> Option<T> {
        match select(std::pin::pin!(work), self.inner.sender.sleep.sleep(limit)).await {
            Either::Left((output, _)) => Some(output),
            Either::Right(((), _)) => None,
        }
    }

    /// The call's URL with `draft=1` added when draft is on (the call's choice, else the
    /// client's), as the JavaScript client adds it to every request.
    fn with_draft<'a>(&self, call: &'a Call) -> std::borrow::Cow<'a, str> {
        let on = call.draft.unwrap_or(self.inner.draft);
        if !on || call.url.contains("?draft=") || call.url.contains("&draft=") {
            return std::borrow::Cow::Borrowed(&call.url);
        }
        let separator = if call.url.contains('?') { '&' } else { '?' };
        std::borrow::Cow::Owned(format!("{}{separator}draft=1", call.url))
    }

    fn build_request(
        &self,
        call: &Call,
        uri: http::Uri,
        host: Option<HeaderValue>,
        authorization: Option<&HeaderValue>,
    ) -> Request<Bytes> {
        // Built in place rather than through `Request::builder()`, whose every step moves the
        // whole request: the method, URI and header values are already checked, so nothing
        // here can fail.
        let mut request = Request::new(call.body.clone().unwrap_or_default());
        *request.method_mut() = call.method.clone();
        *request.uri_mut() = uri;
        // Appended to: the names are distinct, and `append` does not look for a value to
        // replace.
        let headers = request.headers_mut();
        if let Some(host) = host {
            headers.append(HOST, host);
        }
        headers.append(USER_AGENT, self.inner.sender.user_agent.clone());
        headers.append(ACCEPT, call.accept.clone());
        if let Some(auth) = authorization {
            headers.append(AUTHORIZATION, auth.clone());
        }
        if call.body.is_some() {
            headers.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        if let Some(options) = &call.options {
            // Replaces the client's value of each name, and keeps a name given twice twice.
            for name in options.headers.keys() {
                headers.remove(name);
            }
            for (name, value) in &options.headers {
                headers.append(name, value.clone());
            }
        }
        request
    }
}

fn api_error(call: &Call, response: Response<Bytes>) -> ApiError {
    let retry_after = response
        .headers()
        .get(RETRY_AFTER)
        .and_then(|v| retry_after_seconds(v, Timestamp::now()));
    let status = response.status();
    ApiError {
        status,
        method: call.method.clone(),
        path: call.path().to_owned(),
        body: ErrorBody::parse(response.into_body()),
        retry_after,
    }
}

/// The wait a `Retry-After` value asks for, in whole seconds (RFC 9110 section 10.2.3), or
/// `None` when it is neither form:
/// - delay-seconds (`120`): that number; one too large for a `u64` is `u64::MAX`, longer than
///   any retry policy waits;
/// - an HTTP-date (`Fri, 01 May 2026 10:00:00 GMT`, or an obsolete form): the time from `now`
///   to that date, rounded up to a whole second so that the retry never comes before it, and
///   `0` when the date is not in the future.
fn retry_after_seconds(value: &HeaderValue, now: Timestamp) -> Option<u64> {
    let text = value.to_str().ok()?.trim_matches([' ', '\t']);
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        // Only digits: a number, or one past u64::MAX.
        return Some(text.parse().unwrap_or(u64::MAX));
    }
    let date = Timestamp::parse_http_date_at(text, now).ok()?;
    let nanos =
        |t: Timestamp| i128::from(t.unix_seconds()) * 1_000_000_000 + i128::from(t.subsec_nanos());
    let wait = nanos(date) - nanos(now);
    if wait <= 0 {
        return Some(0);
    }
    // Positive, and below 10^4 years in seconds: fits a u64.
    u64::try_from((wait + 999_999_999) / 1_000_000_000).ok()
}

/// Decodes a success body as `T` with no intermediate `serde_json::Value`.
pub(crate) fn decode<T: DeserializeOwned>(response: Response<Bytes>) -> Result<T> {
    let status = response.status();
    let body = response.into_body();
    serde_json::from_slice(&body).map_err(|e| Error::decode(status, body, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> HeaderValue {
        HeaderValue::from_str(text).unwrap()
    }

    fn at(rfc3339: &str) -> Timestamp {
        Timestamp::parse_rfc3339(rfc3339).unwrap()
    }

    #[test]
    fn retry_after_reads_delay_seconds() {
        let now = at("2026-05-01T10:00:00Z");
        for (text, seconds) in [
            ("0", 0),
            ("7", 7),
            ("  120\t", 120),
            ("007", 7),
            ("18446744073709551615", u64::MAX),
            // Too large for a u64: the longest wait, not an overflow nor an ignored header.
            ("18446744073709551616", u64::MAX),
            ("99999999999999999999999999999999999999999999", u64::MAX),
        ] {
            assert_eq!(
                retry_after_seconds(&header(text), now),
                Some(seconds),
                "{text:?}"
            );
        }
    }

    #[test]
    fn retry_after_reads_http_dates() {
        let now = at("2026-05-01T10:00:00Z");
        for (text, seconds) in [
            ("Fri, 01 May 2026 10:00:03 GMT", 3),
            ("Friday, 01-May-26 10:01:00 GMT", 60),
            ("Fri May  1 11:00:00 2026", 3600),
            (" Fri, 01 May 2026 10:00:03 GMT ", 3),
            // Now, or in the past: retry at once.
            ("Fri, 01 May 2026 10:00:00 GMT", 0),
            ("Fri, 01 May 2026 09:59:59 GMT", 0),
            ("Sun, 06 Nov 1994 08:49:37 GMT", 0),
            ("Sat, 01 Jan 0000 00:00:00 GMT", 0),
            // The far future fits a u64.
            (
                "Fri, 31 Dec 9999 23:59:59 GMT",
                253_402_300_799 - 1_777_629_600,
            ),
        ] {
            assert_eq!(
                retry_after_seconds(&header(text), now),
                Some(seconds),
                "{text:?}"
            );
        }
        // A fractional wait is rounded up: the retry never comes before the date.
        let just_after = at("2026-05-01T10:00:00.001Z");
        let three = header("Fri, 01 May 2026 10:00:03 GMT");
        assert_eq!(retry_after_seconds(&three, just_after), Some(3));
        let just_before = at("2026-05-01T10:00:02.999Z");
        assert_eq!(retry_after_seconds(&three, just_before), Some(1));
        let at_the_date = at("2026-05-01T10:00:03.000000001Z");
        assert_eq!(retry_after_seconds(&three, at_the_date), Some(0));
        // The extreme clocks do not overflow.
        assert_eq!(retry_after_seconds(&three, Timestamp::MAX), Some(0));
        assert_eq!(
            retry_after_seconds(&header("Fri, 31 Dec 9999 23:59:59 GMT"), Timestamp::MIN),
            Some(253_402_300_799 + 62_167_219_200)
        );
    }

    #[test]
    fn retry_after_ignores_anything_else() {
        let now = at("2026-05-01T10:00:00Z");
        for text in [
            "",
            "   ",
            "-1",
            "+5",
            "1.5",
            "5s",
            "1 2",
            "soon",
            "2026-05-01T10:00:03Z",
            "Fri, 01 May 2026 10:00:03 UTC",
            "Fri, 30 Feb 2026 10:00:03 GMT",
            "Fri, 01 May 2026 24:00:00 GMT",
        ] {
            assert_eq!(retry_after_seconds(&header(text), now), None, "{text:?}");
        }
        let not_text = HeaderValue::from_bytes(b"Fri, 01 May 2026 10:00:03 GMT\xff").unwrap();
        assert_eq!(retry_after_seconds(&not_text, now), None);
    }

    const TEST_ROUTE: svc_model::routes::Route = svc_model::routes::Route::new(
        "test",
        svc_model::routes::Method::Get,
        svc_model::routes::Host::Data,
        "/{anything}",
    );
    const TEST: Operation = Operation::new("test.get", &TEST_ROUTE);

    #[test]
    fn path_for_messages_has_no_host_or_query() {
        let c = Call::new(TEST, "https://h:1/api/projects/p/?draft=1".into());
        assert_eq!(c.path(), "/api/projects/p/");
        let c = Call::new(TEST, "http://h".into());
        assert_eq!(c.path(), "/");
        for (url, path) in [
            ("http://h?q=1", "/"),
            ("https://h/a/b#x", "/a/b"),
            ("https://h/a?next=http://x/y", "/a"),
            ("relative/path?x=1", "relative/path"),
        ] {
            assert_eq!(Call::new(TEST, url.into()).path(), path, "{url}");
        }
    }
}
