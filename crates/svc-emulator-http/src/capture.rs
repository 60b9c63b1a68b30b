//! Recording requests as they pass: [`Journaled`], the router with the journal around it, and
//! the body wrapper that copies what passes of a body when the journal keeps bodies.
//!
//! Without bodies, an entry is recorded when the router returns the answer's head. With bodies,
//! when the answer's body has passed (its last frame is handed to the connection: before the
//! client can have read all of it), or at once when the answer has no body. Either way, a
//! client that has read its answer finds its request in the journal.

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime};

use axum::Router;
use axum::body::{Body, HttpBody};
use axum::http::{HeaderMap, Method, Request, Response};
use bytes::Bytes;
use hyper::body::{Frame, SizeHint};

use crate::AppState;
use crate::auth::{self, Credential};
use crate::journal::{
    BODY_CAP, Bodies, BodyContent, Captured, CapturedBody, Entry, Journal, RecordedRequest,
    RequestSource, path,
};
use crate::stubs::CutConnection;

/// The router of both hosts with the request journal around it: what the server runs each
/// request through.
#[derive(Debug, Clone)]
pub struct Journaled {
    router: Router,
    state: AppState,
}

impl Journaled {
    /// `router`, journaled in `state`'s journal.
    pub fn new(router: Router, state: AppState) -> Self {
        Self { router, state }
    }

    /// Answers `request` through a stub or the router, and records it.
    pub async fn serve<B>(self, request: Request<B>) -> Response<Body>
    where
        B: HttpBody<Data = Bytes> + Unpin + Send + 'static,
        B::Error: Into<axum::BoxError>,
    {
        let Self { router, state } = self;
        if is_emulator_only(request.uri().path()) {
            return call(router, request).await;
        }
        let source = match request.extensions().get::<FromPage>() {
            Some(_) => RequestSource::Ui,
            None => RequestSource::Client,
        };
        let stubbed = source == RequestSource::Client && !state.stubs().is_empty();
        if !state.journal().enabled() && !stubbed {
            return call(router, request).await;
        }
        let started = Instant::now();
        let journal = state.journal();
        let entry = Entry {
            id: journal.next_id(),
            time: SystemTime::now(),
            method: request.method().clone(),
            target: journal.target(target(request.uri())),
            status: 200,
            duration: std::time::Duration::ZERO,
            owner: owner(&state, request.uri().path(), request.headers()),
            bodies: None,
            source,
            stub: None,
        };
        match entry.owner {
            // A project without stubs takes no lock of them.
            Some(project) if stubbed && state.stubs().any_of(project) => {
                stub_or_pass(
                    router,
                    state,
                    request.map(Body::new),
                    entry,
                    project,
                    started,
                )
                .await
            }
            _ => pass(router, state, request, entry, started).await,
        }
    }
}

/// Answers `request` of `project` through the first of its stubs that is active for it, else
/// through the router.
async fn stub_or_pass(
    router: Router,
    state: AppState,
    request: Request<Body>,
    mut entry: Entry,
    project: usize,
    started: Instant,
) -> Response<Body> {
    let journal = Arc::clone(state.journal());
    let stubs = state.stubs();
    let read = stubs.read_bodies(project) || journal.keeps_bodies();
    let (request, sent) = match read {
        true => {
            let (parts, body) = request.into_parts();
            let (sent, body) = buffered(body, BODY_CAP).await;
            (Request::from_parts(parts, body), Some(sent))
        }
        false => (request, None),
    };
    // A request whose body failed to arrive meets no stub: the router fails it, as before.
    if sent.as_ref().is_some_and(|s| s.failed) {
        return pass(router, state, request, entry, started).await;
    }
    let whole = sent
        .as_ref()
        .filter(|s| s.captured.complete)
        .map(|s| &s.captured.kept);
    let probe = probe(&journal, &request, project, whole);
    let Some(stub) = stubs.pick(project, &probe) else {
        return pass(router, state, request, entry, started).await;
    };
    if stub.drops() && !sent.as_ref().is_some_and(|s| s.captured.complete) {
        // Closed with unread bytes in the socket, a connection is reset, not closed: read
        // what is left of the body first (within a bound), so that a drop is a drop.
        drain(request.into_body()).await;
    }
    let delay = stub.delay();
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let (response, answer) = stub.answer();
    // A HEAD's answer carries no body (hyper sends none).
    let answer = answer.filter(|_| entry.method != Method::HEAD);
    entry.stub = Some(stub.id());
    // No status when the stub cuts the connection instead of answering.
    let cut = response.extensions().get::<CutConnection>().is_some();
    entry.status = if cut { 0 } else { response.status().as_u16() };
    entry.duration = started.elapsed();
    if journal.keeps_bodies() {
        let kept = |bytes: Bytes| Captured {
            seen: bytes.len() as u64,
            kept: bytes.slice(..bytes.len().min(BODY_CAP)),
            complete: true,
        };
        entry.bodies = Some(Arc::new(Bodies {
            request: sent.map(|s| s.captured),
            response: answer.filter(|a| !a.is_empty()).map(kept),
        }));
    }
    journal.push(entry);
    response
}

/// `request` as the journal would show it before its answer, for the stubs' matchers: its
/// `body` when it was read whole.
fn probe(
    journal: &Journal,
    request: &Request<Body>,
    project: usize,
    body: Option<&Bytes>,
) -> RecordedRequest {
    let raw_path = request.uri().path();
    let named = path::names(raw_path);
    let decoded = |segment: Option<&str>| segment.map(|s| path::decode(s).into_owned());
    let request_body = body.and_then(|b| {
        let json = serde_json::from_slice(b).ok()?;
        Some(CapturedBody {
            content: BodyContent::Json(json),
            bytes: b.len() as u64,
            truncated: false,
        })
    });
    RecordedRequest {
        id: 0,
        time: svc_model::Timestamp::now(),
        method: request.method().as_str().to_owned(),
        path: raw_path.to_owned(),
        query: request.uri().query().map(str::to_owned),
        project: decoded(named.project)
            .or_else(|| journal.project_name(project).map(str::to_owned)),
        environment: decoded(named.environment),
        resource: decoded(named.resource),
        model: decoded(named.model),
        status: 0,
        duration_ms: 0.0,
        request_body,
        response_body: None,
        source: RequestSource::Client,
        stub: None,
    }
}

/// What [`buffered`] read of a body.
struct Read {
    /// Its first bytes (all of it when `captured.complete`).
    captured: Captured,
    /// The body failed before its end (the client left, a broken frame).
    failed: bool,
}

impl Read {
    /// What was read, `kept` (its first `cap` bytes kept), ending the body or not, and how.
    fn of(kept: &Bytes, cap: usize, complete: bool, failed: bool) -> Self {
        let captured = Captured {
            seen: kept.len() as u64,
            kept: kept.slice(..kept.len().min(cap)),
            complete,
        };
        Self { captured, failed }
    }
}

/// Reads `body` up to `cap` bytes: what was read (whole, or its first part), and a body that
/// gives the router all of it again (the rest still streamed, a failure still failed).
async fn buffered(mut body: Body, cap: usize) -> (Read, Body) {
    use http_body_util::BodyExt;
    let mut kept = bytes::BytesMut::new();
    loop {
        let (rest, failed) = match body.frame().await {
            None => {
                let kept = kept.freeze();
                return (Read::of(&kept, cap, true, false), Body::from(kept));
            }
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    kept.extend_from_slice(data);
                }
                if kept.len() <= cap {
                    continue;
                }
                (Some(body), None)
            }
            Some(Err(e)) => (None, Some(e)),
        };
        let kept = kept.freeze();
        let read = Read::of(&kept, cap, false, failed.is_some());
        let replay = Replay {
            first: Some(kept),
            rest,
            failed,
        };
        return (read, Body::new(replay));
    }
}

/// The most of a body [`drain`] reads: past it, the connection may close with bytes unread.
const DRAIN_CAP: u64 = 8 * 1024 * 1024;

/// Reads and forgets what is left of `body`, up to [`DRAIN_CAP`] bytes, until it ends or
/// fails.
async fn drain(mut body: Body) {
    use http_body_util::BodyExt;
    let mut seen = 0u64;
    while let Some(Ok(frame)) = body.frame().await {
        seen += frame.data_ref().map_or(0, |d| d.len() as u64);
        if seen > DRAIN_CAP {
            return;
        }
    }
}

/// A body read in part: that part, then the rest (or the failure that ended it).
struct Replay {
    first: Option<Bytes>,
    rest: Option<Body>,
    failed: Option<axum::Error>,
}

impl HttpBody for Replay {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if let Some(first) = this.first.take().filter(|f| !f.is_empty()) {
            return Poll::Ready(Some(Ok(Frame::data(first))));
        }
        if let Some(e) = this.failed.take() {
            return Poll::Ready(Some(Err(e)));
        }
        match this.rest.as_mut() {
            Some(rest) => Pin::new(rest).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }
}

/// Answers `request` through the router, and records it as `entry`.
async fn pass<B>(
    router: Router,
    state: AppState,
    request: Request<B>,
    mut entry: Entry,
    started: Instant,
) -> Response<Body>
where
    B: HttpBody<Data = Bytes> + Unpin + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    let journal = state.journal();
    if !journal.enabled() {
        return call(router, request).await;
    }
    if !journal.keeps_bodies() {
        let response = call(router, request).await;
        entry.status = response.status().as_u16();
        entry.duration = started.elapsed();
        journal.push(entry);
        return response;
    }
    let request_slot = Arc::new(OnceLock::new());
    let request =
        request.map(|body| Body::new(Tee::new(body, Then::Keep(Arc::clone(&request_slot)))));
    let response = call(router, request).await;
    entry.status = response.status().as_u16();
    entry.duration = started.elapsed();
    let pending = Pending {
        journal: Arc::clone(journal),
        entry,
        request: request_slot,
    };
    if response.body().is_end_stream() || pending.entry.method == Method::HEAD {
        // Nothing will pass (hyper may not even poll the body): record now.
        pending.record(None);
        return response;
    }
    response.map(|body| Body::new(Tee::new(body, Then::Record(Box::new(pending)))))
}

/// Marks a request the web page sends through the API (svc-emulator's `ui::relay`): journaled as the
/// page's, and never answered by a stub.
#[derive(Debug, Clone, Copy)]
pub struct FromPage;

/// Runs `request` through the router.
async fn call<B>(mut router: Router, request: Request<B>) -> Response<Body>
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<axum::BoxError>,
{
    // The router is always ready and never fails.
    match tower::Service::call(&mut router, request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// The path and query of `uri`.
fn target(uri: &axum::http::Uri) -> &str {
    match uri.path_and_query() {
        Some(target) => target.as_str(),
        None => uri.path(),
    }
}

/// The emulator-only routes, which the journal leaves out.
fn is_emulator_only(path: &str) -> bool {
    path == "/_emulator" || path.starts_with("/_emulator/")
}

/// The served project a request belongs to: the one its path names, else its credential's.
fn owner(state: &AppState, path: &str, headers: &HeaderMap) -> Option<usize> {
    let journal = state.journal();
    if let Some(project) = path::project(path)
        && let Some(index) = journal.project_index(&path::decode(project))
    {
        return Some(index);
    }
    match auth::credential(headers)? {
        Credential::Bearer(token) | Credential::Raw(token) => {
            let registry = state.registry();
            let project = registry
                .project_for_api_key(token)
                .or_else(|| registry.resource_for_token(token).map(|(p, _)| p))?;
            journal.project_index(project.name.as_str())
        }
        Credential::Jwt(token) => {
            let claims = state.accounts().verify_any(token)?;
            journal.project_index(&claims.project)
        }
    }
}

/// An entry waiting for its answer's body to pass.
struct Pending {
    journal: Arc<Journal>,
    entry: Entry,
    request: Arc<OnceLock<Captured>>,
}

impl Pending {
    fn record(self, response: Option<Captured>) {
        let Self {
            journal,
            mut entry,
            request,
        } = self;
        entry.bodies = Some(Arc::new(Bodies {
            request: request.get().cloned(),
            response,
        }));
        journal.push(entry);
    }
}

/// What to do with a body once it has passed.
enum Then {
    /// Keep it for the entry (a request's body).
    Keep(Arc<OnceLock<Captured>>),
    /// Record the entry with it (an answer's body).
    Record(Box<Pending>),
}

/// What has passed of a body so far.
struct Capture {
    kept: Vec<u8>,
    seen: u64,
    /// The body's length, when known in advance.
    expected: Option<u64>,
    then: Then,
}

impl Capture {
    fn take(&mut self, data: &[u8]) {
        self.seen = self.seen.saturating_add(data.len() as u64);
        let room = BODY_CAP.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&data[..room.min(data.len())]);
    }

    fn finish(self, complete: bool) {
        let captured = Captured {
            kept: Bytes::from(self.kept),
            seen: self.seen,
            complete,
        };
        match self.then {
            Then::Keep(slot) => {
                // Set once: a body finishes once.
                let _ = slot.set(captured);
            }
            Then::Record(pending) => pending.record(Some(captured)),
        }
    }
}

/// A body that copies the first [`BODY_CAP`] bytes of what passes through it.
struct Tee<B> {
    inner: B,
    capture: Option<Capture>,
}

impl<B: HttpBody> Tee<B> {
    fn new(inner: B, then: Then) -> Self {
        let expected = inner.size_hint().exact();
        Self {
            inner,
            capture: Some(Capture {
                kept: Vec::new(),
                seen: 0,
                expected,
                then,
            }),
        }
    }

    fn finish(&mut self, complete: bool) {
        if let Some(capture) = self.capture.take() {
            capture.finish(complete);
        }
    }
}

impl<B> HttpBody for Tee<B>
where
    B: HttpBody<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(capture) = this.capture.as_mut() {
                    if let Some(data) = frame.data_ref() {
                        capture.take(data);
                    }
                    let all_passed = capture.expected.is_some_and(|n| capture.seen >= n);
                    if all_passed || this.inner.is_end_stream() {
                        this.finish(true);
                    }
                }
            }
            Poll::Ready(None) => this.finish(true),
            Poll::Ready(Some(Err(_))) => this.finish(false),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for Tee<B> {
    fn drop(&mut self) {
        // A body dropped before its end (the client left, or the handler stopped reading).
        if let Some(capture) = self.capture.take() {
            capture.finish(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::BodyExt;

    use super::*;

    #[tokio::test]
    async fn a_tee_keeps_the_first_bytes_and_counts_the_rest() {
        let slot = Arc::new(OnceLock::new());
        let big = vec![b'a'; BODY_CAP + 10];
        let body = Body::from(big.clone());
        let tee = Tee::new(body, Then::Keep(Arc::clone(&slot)));
        let read = Body::new(tee).collect().await.unwrap().to_bytes();
        assert_eq!(read.len(), big.len(), "the body passes whole");
        let captured = slot.get().unwrap();
        assert_eq!(captured.kept.len(), BODY_CAP);
        assert_eq!(captured.seen, big.len() as u64);
        assert!(captured.complete);
    }

    #[tokio::test]
    async fn a_tee_dropped_early_is_incomplete() {
        let slot = Arc::new(OnceLock::new());
        let body = OneThenWait(Some(Bytes::from_static(b"part")));
        let mut tee = Tee::new(body, Then::Keep(Arc::clone(&slot)));
        let frame = std::future::poll_fn(|cx| Pin::new(&mut tee).poll_frame(cx)).await;
        assert!(frame.is_some());
        drop(tee);
        let captured = slot.get().unwrap();
        assert_eq!(&captured.kept[..], b"part");
        assert!(!captured.complete);
    }

    /// A body that sends one frame, then waits forever.
    struct OneThenWait(Option<Bytes>);

    impl HttpBody for OneThenWait {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            match self.get_mut().0.take() {
                Some(data) => Poll::Ready(Some(Ok(Frame::data(data)))),
                None => Poll::Pending,
            }
        }
    }

    #[test]
    fn emulator_only_paths() {
        assert!(is_emulator_only("/_emulator/projects/demo/requests"));
        assert!(is_emulator_only("/_emulator"));
        assert!(!is_emulator_only("/_emulatorx"));
        assert!(!is_emulator_only("/api/_emulator/x"));
    }
}
