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

use super::{BODY_CAP, Bodies, Captured, Entry, Journal, path};
use crate::http::AppState;
use crate::http::auth::{self, Credential};

/// The router of both hosts with the request journal around it: what the server runs each
/// request through.
#[derive(Clone)]
pub(crate) struct Journaled {
    router: Router,
    state: AppState,
}

impl Journaled {
    /// `router`, journaled in `state`'s journal.
    pub(crate) fn new(router: Router, state: AppState) -> Self {
        Self { router, state }
    }

    /// Answers `request` through the router, and records it.
    pub(crate) async fn serve<B>(self, request: Request<B>) -> Response<Body>
    where
        B: HttpBody<Data = Bytes> + Unpin + Send + 'static,
        B::Error: Into<axum::BoxError>,
    {
        let Self { router, state } = self;
        let journal = state.journal();
        if !journal.enabled() || is_emulator_only(request.uri().path()) {
            return call(router, request).await;
        }
        let started = Instant::now();
        let mut entry = Entry {
            id: journal.next_id(),
            time: SystemTime::now(),
            method: request.method().clone(),
            target: journal.target(target(request.uri())),
            status: axum::http::StatusCode::OK,
            duration: std::time::Duration::ZERO,
            owner: owner(&state, request.uri().path(), request.headers()),
            bodies: None,
        };
        if !journal.keeps_bodies() {
            let response = call(router, request).await;
            entry.status = response.status();
            entry.duration = started.elapsed();
            journal.push(entry);
            return response;
        }
        let request_slot = Arc::new(OnceLock::new());
        let request =
            request.map(|body| Body::new(Tee::new(body, Then::Keep(Arc::clone(&request_slot)))));
        let response = call(router, request).await;
        entry.status = response.status();
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
}

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
