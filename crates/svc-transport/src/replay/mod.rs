//! Transports for tests of the logic above the transport (auth, retries, pagination): no
//! network, no runtime features, always compiled.
//!
//! - [`ReplayTransport`] answers from a queue of canned responses and errors, and records every
//!   request it receives.
//! - [`RecordingTransport`] wraps any transport and records each exchange.
//!
//! ```
//! use svc_transport::replay::ReplayTransport;
//! use svc_transport::{Transport, TransportError, TransportErrorKind};
//! use bytes::Bytes;
//!
//! let replay = ReplayTransport::new()
//!     .push_error(TransportError::message(TransportErrorKind::Io, "connection reset"))
//!     .push(200, r#"{"ok":true}"#);
//! # let rt = tokio::runtime::Builder::new_current_thread().build()?;
//! # rt.block_on(async {
//! let request = || {
//!     http::Request::get("https://api.test/v1/things")
//!         .header("authorization", "Bearer t0ken")
//!         .body(Bytes::new())
//! };
//! assert!(replay.send(request()?).await.unwrap_err().is_retryable());
//! assert_eq!(replay.send(request()?).await?.body(), r#"{"ok":true}"#);
//!
//! let sent = replay.requests();
//! assert_eq!(sent.len(), 2);
//! assert_eq!(sent[1].header("authorization"), Some("Bearer t0ken"));
//! assert!(!format!("{:?}", sent[1]).contains("t0ken")); // Debug redacts it
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod recorded;
mod recording;

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

use crate::{BoxFuture, Transport, TransportError, TransportErrorKind};

pub use recorded::{RecordedExchange, RecordedRequest, RecordedResponse};
pub use recording::RecordingTransport;

/// A transport that answers from a queue of canned responses and records every request.
///
/// Each [`send`](Transport::send) records the request, then takes the next queued answer. When
/// the queue is empty it returns a [`TransportErrorKind::Other`] error that says so (it does not
/// panic), so a test that sends more requests than expected fails with a clear message.
///
/// Clones share the queue and the record: keep one handle for assertions and give another to
/// the code under test (or wrap it in `Arc<dyn Transport>`). The `push*` methods take `&self`
/// and return a handle to the same transport, so they chain.
#[derive(Clone, Default)]
pub struct ReplayTransport {
    state: Arc<Mutex<ReplayState>>,
}

#[derive(Default)]
struct ReplayState {
    answers: VecDeque<Result<http::Response<Bytes>, TransportError>>,
    requests: Vec<RecordedRequest>,
}

impl ReplayTransport {
    /// A transport with no canned answers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a response with `status` and `body` and no headers.
    ///
    /// # Panics
    ///
    /// If `status` is not a valid HTTP status code (100 to 999).
    pub fn push(&self, status: u16, body: impl Into<Bytes>) -> Self {
        let status = http::StatusCode::from_u16(status)
            .unwrap_or_else(|_| panic!("ReplayTransport::push: {status} is not an HTTP status"));
        let mut response = http::Response::new(body.into());
        *response.status_mut() = status;
        self.push_response(response)
    }

    /// Queues `response` as it is (status, headers and body).
    pub fn push_response(&self, response: http::Response<Bytes>) -> Self {
        self.lock().answers.push_back(Ok(response));
        self.clone()
    }

    /// Queues a transport error.
    pub fn push_error(&self, error: TransportError) -> Self {
        self.lock().answers.push_back(Err(error));
        self.clone()
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// The most recent request, if any.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        self.lock().requests.last().cloned()
    }

    /// How many queued answers have not been used yet.
    pub fn remaining(&self) -> usize {
        self.lock().answers.len()
    }

    fn lock(&self) -> MutexGuard<'_, ReplayState> {
        // A test that panicked while holding the lock left consistent data; keep going.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Transport for ReplayTransport {
    fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>> {
        let answer = {
            let mut state = self.lock();
            state.requests.push(RecordedRequest::from_request(&request));
            let number = state.requests.len();
            state.answers.pop_front().unwrap_or_else(|| {
                Err(TransportError::message(
                    TransportErrorKind::Other,
                    format!(
                        "ReplayTransport has no answer left for request #{number} ({} {}); \
                         queue one more with push, push_response or push_error",
                        request.method(),
                        request.uri().path()
                    ),
                ))
            })
        };
        Box::pin(std::future::ready(answer))
    }
}

impl fmt::Debug for ReplayTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("ReplayTransport")
            .field("remaining", &state.answers.len())
            .field("requests", &state.requests.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sent;

    fn post(uri: &str, body: &'static str) -> http::Request<Bytes> {
        http::Request::post(uri)
            .header("content-type", "application/json")
            .header("authorization", "Bearer s3cr3t")
            .body(Bytes::from_static(body.as_bytes()))
            .unwrap()
    }

    #[tokio::test]
    async fn answers_in_order_and_records_requests() {
        let replay = ReplayTransport::new().push(201, "created").push_response(
            http::Response::builder()
                .status(200)
                .header("x-next", "cursor-2")
                .body(Bytes::from_static(b"page"))
                .unwrap(),
        );
        replay.push_error(TransportError::message(TransportErrorKind::Timeout, "slow"));
        assert_eq!(replay.remaining(), 3);

        let transport: Arc<dyn Transport> = Arc::new(replay.clone());
        let first = transport
            .send(post("https://h.test/a", "{\"n\":1}"))
            .await
            .unwrap();
        assert_eq!(first.status(), 201);
        assert_eq!(first.body(), "created");
        let second = transport
            .send(post("https://h.test/b?x=1", "{}"))
            .await
            .unwrap();
        assert_eq!(second.headers()["x-next"], "cursor-2");
        let third = transport
            .send(post("https://h.test/c", ""))
            .await
            .unwrap_err();
        assert!(third.is_timeout());

        let requests = replay.requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(requests[0].method, http::Method::POST);
        assert_eq!(requests[0].uri, "https://h.test/a");
        assert_eq!(requests[0].body_text(), Some("{\"n\":1}"));
        assert_eq!(requests[1].uri.query(), Some("x=1"));
        assert_eq!(requests[1].header("authorization"), Some("Bearer s3cr3t"));
        assert_eq!(replay.last_request().unwrap().uri.path(), "/c");
        assert_eq!(replay.remaining(), 0);
        let debug = format!("{replay:?} {requests:?}");
        assert!(!debug.contains("s3cr3t"), "{debug}");
    }

    #[tokio::test]
    async fn running_out_is_an_error_not_a_panic() {
        let replay = ReplayTransport::new();
        let err = replay
            .send(post("https://h.test/v1/items?token=s3cr3t", "{}"))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), TransportErrorKind::Other);
        assert_eq!(err.was_sent(), Sent::Maybe);
        let text = err.to_string();
        assert!(
            text.contains("no answer left for request #1 (POST /v1/items)"),
            "{text}"
        );
        assert!(!text.contains("s3cr3t"), "{text}");
        assert_eq!(replay.requests().len(), 1);
    }

    #[test]
    #[should_panic(expected = "not an HTTP status")]
    fn invalid_status_panics_with_a_message() {
        let _ = ReplayTransport::new().push(42, "");
    }

    #[tokio::test]
    async fn shared_between_tasks() {
        let replay = ReplayTransport::new();
        for i in 0..20 {
            replay.push(200, format!("{i}"));
        }
        let mut tasks = Vec::new();
        for _ in 0..20 {
            let transport = replay.clone();
            tasks.push(tokio::spawn(async move {
                transport
                    .send(
                        http::Request::get("http://h.test/")
                            .body(Bytes::new())
                            .unwrap(),
                    )
                    .await
                    .unwrap()
            }));
        }
        let mut bodies = Vec::new();
        for task in tasks {
            bodies.push(String::from_utf8(task.await.unwrap().body().to_vec()).unwrap());
        }
        bodies.sort_by_key(|b| b.parse::<u32>().unwrap());
        assert_eq!(bodies, (0..20).map(|i| i.to_string()).collect::<Vec<_>>());
        assert_eq!(replay.requests().len(), 20);
    }
}
