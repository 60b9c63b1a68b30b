//! tower middleware around the SDK's transport (feature `tower`).
//!
//! Rate limits, concurrency limits, circuit breakers and metrics usually live in
//! [tower](https://docs.rs/tower) layers in a Rust service. Two adapters join them to the SDK:
//!
//! - [`TowerTransport`] makes any [`tower_service::Service`] over `http` types a [`Transport`]:
//!   give it to `ClientBuilder::transport`.
//! - [`HyperTransport`](crate::HyperTransport) (with feature `hyper`) and [`TransportService`]
//!   (any [`Transport`], a closure included) are such services, so layers can wrap the default
//!   transport or your own.
//!
//! ```
//! # #[cfg(feature = "hyper")]
//! # tokio::runtime::Builder::new_current_thread().enable_time().build()?.block_on(async {
//! use std::time::Duration;
//! use svc_transport::HyperTransport;
//! use svc_transport::tower::TowerTransport;
//! use tower::ServiceBuilder;
//!
//! // At most 50 requests a second, through the default transport. (tower's rate limit starts
//! // a Tokio timer when it is made: make it inside the runtime.)
//! let layered = ServiceBuilder::new()
//!     .rate_limit(50, Duration::from_secs(1))
//!     .service(HyperTransport::new());
//! let transport = TowerTransport::new(layered);
//! # let _ = transport;
//! # });
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! The service is shared by every request of the client: each request waits its turn for the
//! service to be ready, then is sent, and the wait for its answer is its own. So a rate limit
//! or a concurrency limit counts every request of the client, without `tower::buffer`.
//!
//! A layer's own error (one that is not the [`TransportError`] of the transport below it) comes
//! back as a [`TransportError`] of kind [`Other`](crate::TransportErrorKind::Other) that may
//! have been sent, so that a create is never sent twice on a guess. A layer that refuses a
//! request before sending it (a load shedder, an open circuit) can return a
//! `TransportError` saying so (`with_sent(Sent::No)`, kind `Connect`) to have the SDK retry it.

use std::fmt;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::sync::Mutex;
use tower_service::Service;

use crate::{BoxFuture, Transport, TransportError, TransportErrorKind};

/// The error type tower's layers use.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A [`tower_service::Service`] over `http` types, used as the SDK's [`Transport`].
///
/// The service takes an `http::Request<Bytes>` and answers an `http::Response<Bytes>` (any
/// status is an answer); its error is anything tower's layers return (see the [module
/// docs](self) for how it becomes a [`TransportError`]). It needs no `Clone`: one service is
/// shared by every request, so that stateful layers see them all.
pub struct TowerTransport<S> {
    service: Arc<Mutex<S>>,
}

impl<S> TowerTransport<S> {
    /// Uses `service` to send the SDK's requests.
    pub fn new(service: S) -> Self {
        Self {
            service: Arc::new(Mutex::new(service)),
        }
    }
}

impl<S> Clone for TowerTransport<S> {
    /// Another handle on the same service.
    fn clone(&self) -> Self {
        Self {
            service: Arc::clone(&self.service),
        }
    }
}

impl<S> fmt::Debug for TowerTransport<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TowerTransport")
            .field("service", &std::any::type_name::<S>())
            .finish()
    }
}

impl<S> Transport for TowerTransport<S>
where
    S: Service<http::Request<Bytes>, Response = http::Response<Bytes>> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>> {
        let service = Arc::clone(&self.service);
        Box::pin(async move {
            // Ready, then called, under the lock (tower's contract: `call` after a ready
            // `poll_ready` of the same service); the answer is awaited without it.
            let answer = {
                let mut service = service.lock().await;
                std::future::poll_fn(|cx| service.poll_ready(cx))
                    .await
                    .map_err(from_layer)?;
                service.call(request)
            };
            answer.await.map_err(from_layer)
        })
    }
}

/// A layer's error as a [`TransportError`]: the transport's own error as it was, anything else
/// as a failure that may have been sent.
fn from_layer(error: impl Into<BoxError>) -> TransportError {
    match error.into().downcast::<TransportError>() {
        Ok(own) => *own,
        Err(other) => TransportError::new(TransportErrorKind::Other, other),
    }
}

/// Any [`Transport`] (a closure, a [`ReplayTransport`](crate::replay::ReplayTransport), an
/// `Arc<dyn Transport>`) as a [`tower_service::Service`], to wrap in layers. Always ready;
/// clones share the transport.
pub struct TransportService<T: ?Sized> {
    transport: Arc<T>,
}

impl<T: Transport> TransportService<T> {
    /// The service that sends with `transport`.
    pub fn new(transport: T) -> Self {
        Self {
            transport: Arc::new(transport),
        }
    }
}

impl<T: Transport + ?Sized> TransportService<T> {
    /// The service that sends with a shared transport.
    pub fn shared(transport: Arc<T>) -> Self {
        Self { transport }
    }
}

impl<T: ?Sized> Clone for TransportService<T> {
    fn clone(&self) -> Self {
        Self {
            transport: Arc::clone(&self.transport),
        }
    }
}

impl<T: ?Sized> fmt::Debug for TransportService<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransportService").finish_non_exhaustive()
    }
}

impl<T: Transport + ?Sized> Service<http::Request<Bytes>> for TransportService<T> {
    type Response = http::Response<Bytes>;
    type Error = TransportError;
    type Future = BoxFuture<'static, Result<http::Response<Bytes>, TransportError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Bytes>) -> Self::Future {
        self.transport.send(request)
    }
}

/// The default transport is a service too: layers wrap it directly. Always ready (its pool
/// waits for a connection inside the call); clones share the pool.
#[cfg(feature = "hyper")]
#[cfg_attr(docsrs, doc(cfg(feature = "hyper")))]
impl Service<http::Request<Bytes>> for crate::HyperTransport {
    type Response = http::Response<Bytes>;
    type Error = TransportError;
    type Future = BoxFuture<'static, Result<http::Response<Bytes>, TransportError>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), TransportError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Bytes>) -> Self::Future {
        Transport::send(self, request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sent;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A service that is ready every other poll, to check that `poll_ready` is driven.
    struct Flaky {
        polls: usize,
        calls: Arc<AtomicUsize>,
    }

    impl Service<http::Request<Bytes>> for Flaky {
        type Response = http::Response<Bytes>;
        type Error = BoxError;
        type Future = std::future::Ready<Result<http::Response<Bytes>, BoxError>>;

        fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
            self.polls += 1;
            if self.polls % 2 == 1 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, request: http::Request<Bytes>) -> Self::Future {
            self.calls.fetch_add(1, Ordering::Relaxed);
            let answer = match request.uri().path() {
                "/own" => Err(Box::new(TransportError::message(
                    TransportErrorKind::Connect,
                    "refused before sending",
                )) as BoxError),
                "/layer" => Err("the circuit is open".into()),
                path => Ok(http::Response::new(Bytes::from(path.to_owned()))),
            };
            std::future::ready(answer)
        }
    }

    fn get(path: &str) -> http::Request<Bytes> {
        http::Request::get(format!("http://h.test{path}"))
            .body(Bytes::new())
            .expect("valid request")
    }

    #[tokio::test]
    async fn a_service_is_a_transport_and_its_errors_keep_what_is_known() {
        let calls = Arc::new(AtomicUsize::new(0));
        let transport = TowerTransport::new(Flaky {
            polls: 0,
            calls: Arc::clone(&calls),
        });
        let answer = transport.send(get("/a")).await.unwrap();
        assert_eq!(answer.body(), "/a");
        let own = transport.send(get("/own")).await.unwrap_err();
        assert!(own.is_connect() && own.was_sent() == Sent::No, "{own}");
        let layer = transport.send(get("/layer")).await.unwrap_err();
        assert_eq!(layer.kind(), TransportErrorKind::Other);
        assert_eq!(layer.was_sent(), Sent::Maybe);
        assert!(layer.to_string().contains("the circuit is open"), "{layer}");
        assert_eq!(calls.load(Ordering::Relaxed), 3);
    }

    #[tokio::test]
    async fn a_transport_is_a_service() {
        let closure = |request: http::Request<Bytes>| async move {
            Ok::<_, TransportError>(http::Response::new(Bytes::from(
                request.uri().path().to_owned(),
            )))
        };
        let mut service = TransportService::new(closure);
        let answer = std::future::poll_fn(|cx| service.poll_ready(cx))
            .await
            .map(|()| service.call(get("/b")))
            .unwrap()
            .await
            .unwrap();
        assert_eq!(answer.body(), "/b");
        // And back: a service of a transport is a transport again.
        let again = TowerTransport::new(service.clone());
        assert_eq!(again.send(get("/c")).await.unwrap().body(), "/c");
    }
}
