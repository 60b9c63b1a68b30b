//! [`RecordingTransport`]: any transport, with a record of each exchange.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

use super::{RecordedExchange, RecordedRequest, RecordedResponse};
use crate::{BoxFuture, Transport, TransportError};

/// Wraps a transport and records each exchange: the request, and the response or error.
///
/// An exchange is recorded when its response (or error) arrives, so concurrent requests appear
/// in the order they completed. Clones share the inner transport and the record.
///
/// ```
/// use bytes::Bytes;
/// use svc_transport::replay::{RecordingTransport, ReplayTransport};
/// use svc_transport::Transport;
///
/// let recording = RecordingTransport::new(ReplayTransport::new().push(404, "no such page"));
/// # let rt = tokio::runtime::Builder::new_current_thread().build()?;
/// # rt.block_on(async {
/// let request = http::Request::get("https://api.test/pages/p1").body(Bytes::new())?;
/// recording.send(request).await?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// let exchanges = recording.exchanges();
/// assert_eq!(exchanges[0].request.uri.path(), "/pages/p1");
/// assert_eq!(exchanges[0].response.as_ref().unwrap().status, 404);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RecordingTransport<T> {
    inner: Arc<T>,
    exchanges: Arc<Mutex<Vec<RecordedExchange>>>,
}

impl<T: Transport> RecordingTransport<T> {
    /// Records the exchanges of `inner`.
    pub fn new(inner: T) -> Self {
        Self {
            inner: Arc::new(inner),
            exchanges: Arc::default(),
        }
    }

    /// The wrapped transport.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// Every exchange completed so far, in the order they completed.
    pub fn exchanges(&self) -> Vec<RecordedExchange> {
        self.lock().clone()
    }

    /// The requests of the completed exchanges, in the order they completed.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().iter().map(|e| e.request.clone()).collect()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<RecordedExchange>> {
        lock(&self.exchanges)
    }
}

fn lock(exchanges: &Mutex<Vec<RecordedExchange>>) -> MutexGuard<'_, Vec<RecordedExchange>> {
    exchanges.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<T: Transport> Transport for RecordingTransport<T> {
    fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>> {
        let recorded = RecordedRequest::from_request(&request);
        let response = self.inner.send(request);
        let exchanges = Arc::clone(&self.exchanges);
        Box::pin(async move {
            let result = response.await;
            let outcome = match &result {
                Ok(response) => Ok(RecordedResponse::from_response(response)),
                Err(error) => Err(error.clone()),
            };
            // The lock is taken after the await and released at the end of this statement.
            lock(&exchanges).push(RecordedExchange {
                request: recorded,
                response: outcome,
            });
            result
        })
    }
}

impl<T> Clone for RecordingTransport<T> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            exchanges: Arc::clone(&self.exchanges),
        }
    }
}

impl<T> fmt::Debug for RecordingTransport<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = lock(&self.exchanges).len();
        f.debug_struct("RecordingTransport")
            .field("inner", &std::any::type_name::<T>())
            .field("exchanges", &count)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TransportErrorKind;
    use crate::replay::ReplayTransport;

    #[tokio::test]
    async fn records_responses_and_errors() {
        let replay = ReplayTransport::new()
            .push(200, "first")
            .push_error(TransportError::message(TransportErrorKind::Io, "reset"));
        let recording = RecordingTransport::new(replay.clone());
        let shared: Arc<dyn Transport> = Arc::new(recording.clone());

        let request = |path: &str| {
            http::Request::put(format!("https://h.test{path}"))
                .header("authorization", "Bearer s3cr3t")
                .body(Bytes::from_static(b"{\"s3cr3t\":1}"))
                .unwrap()
        };
        assert_eq!(shared.send(request("/one")).await.unwrap().body(), "first");
        assert_eq!(
            shared.send(request("/two")).await.unwrap_err().kind(),
            TransportErrorKind::Io
        );

        let exchanges = recording.exchanges();
        assert_eq!(exchanges.len(), 2);
        let first = exchanges[0].response.as_ref().unwrap();
        assert_eq!(first.status, 200);
        assert_eq!(first.body, "first");
        assert_eq!(exchanges[0].request.method, http::Method::PUT);
        assert_eq!(exchanges[1].request.uri.path(), "/two");
        assert_eq!(
            exchanges[1].response.as_ref().unwrap_err().kind(),
            TransportErrorKind::Io
        );
        assert_eq!(recording.requests().len(), 2);
        assert_eq!(recording.inner().requests().len(), 2);

        let debug = format!("{recording:?} {exchanges:?}");
        assert!(!debug.contains("s3cr3t"), "{debug}");
        assert!(debug.contains("ReplayTransport"), "{debug}");
    }

    #[tokio::test]
    async fn wraps_closures() {
        let recording = RecordingTransport::new(|request: http::Request<Bytes>| async move {
            Ok::<_, TransportError>(http::Response::new(request.into_body()))
        });
        let request = http::Request::post("http://h.test/echo")
            .body(Bytes::from_static(b"ping"))
            .unwrap();
        assert_eq!(recording.send(request).await.unwrap().body(), "ping");
        let exchanges = recording.exchanges();
        assert_eq!(exchanges[0].request.body, "ping");
        assert_eq!(exchanges[0].response.as_ref().unwrap().body, "ping");
    }
}
