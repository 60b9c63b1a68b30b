//! The [`Transport`] trait and its implementations for closures and smart pointers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;

use crate::TransportError;

/// A boxed, `Send` future: what [`Transport::send`] returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Sends one HTTP request and returns its response, with the whole body in memory.
///
/// This is the only thing the SDK needs from an HTTP stack. It is object-safe: the client holds
/// it as `Arc<dyn Transport>`. Pooling, TLS and connect timeouts live in the transport; retries,
/// credentials and pagination live above it.
///
/// The request URI is absolute (`https://host[:port]/path?query`). A response with any status,
/// 4xx and 5xx included, is `Ok`; `Err` means no response was received.
///
/// Closures implement it, so tests and custom stacks need no boilerplate:
///
/// ```
/// use std::sync::Arc;
/// use bytes::Bytes;
/// use svc_transport::{Transport, TransportError};
///
/// let transport: Arc<dyn Transport> = Arc::new(|request: http::Request<Bytes>| async move {
///     let body = Bytes::from(format!("you asked for {}", request.uri().path()));
///     Ok::<_, TransportError>(http::Response::new(body))
/// });
/// # let rt = tokio::runtime::Builder::new_current_thread().build()?;
/// # rt.block_on(async {
/// let request = http::Request::get("http://example.test/things").body(Bytes::new())?;
/// let response = transport.send(request).await?;
/// assert_eq!(response.body(), "you asked for /things");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Transport: Send + Sync + 'static {
    /// Sends `request` and resolves to the complete response, or to the reason there is none.
    ///
    /// The returned future owns everything it needs (`'static`), so it can be spawned.
    fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>>;
}

impl<F, Fut> Transport for F
where
    F: Fn(http::Request<Bytes>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<http::Response<Bytes>, TransportError>> + Send + 'static,
{
    fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>> {
        Box::pin(self(request))
    }
}

impl<T: Transport + ?Sized> Transport for Arc<T> {
    fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>> {
        (**self).send(request)
    }
}

impl Transport for Box<dyn Transport> {
    fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>> {
        (**self).send(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Sent, TransportErrorKind};

    fn echo_path() -> impl Transport {
        |request: http::Request<Bytes>| async move {
            let body = Bytes::from(request.uri().path().to_owned());
            Ok::<_, TransportError>(
                http::Response::builder()
                    .status(201)
                    .header("x-method", request.method().as_str())
                    .body(body)
                    .expect("valid response"),
            )
        }
    }

    fn get(uri: &str) -> http::Request<Bytes> {
        http::Request::get(uri)
            .body(Bytes::new())
            .expect("valid request")
    }

    #[tokio::test]
    async fn closure_transport_and_arc_dyn() {
        let transport: Arc<dyn Transport> = Arc::new(echo_path());
        let response = transport.send(get("http://h.test/a/b")).await.unwrap();
        assert_eq!(response.status(), 201);
        assert_eq!(response.headers()["x-method"], "GET");
        assert_eq!(response.body(), "/a/b");

        // Arc<dyn Transport> is itself a Transport, so it can be wrapped again.
        fn takes_transport(t: impl Transport) -> impl Transport {
            t
        }
        let again = takes_transport(Arc::clone(&transport));
        assert_eq!(
            again.send(get("http://h.test/c")).await.unwrap().body(),
            "/c"
        );
    }

    #[tokio::test]
    async fn boxed_transport_and_spawned_future() {
        let boxed: Box<dyn Transport> = Box::new(echo_path());
        let shared: Arc<dyn Transport> = Arc::new(boxed);
        // The future is 'static + Send: it can run on another task.
        let future = shared.send(get("http://h.test/spawned"));
        let response = tokio::spawn(future).await.unwrap().unwrap();
        assert_eq!(response.body(), "/spawned");
    }

    #[tokio::test]
    async fn closure_errors_pass_through() {
        let transport = |_: http::Request<Bytes>| async {
            Err::<http::Response<Bytes>, _>(TransportError::message(
                TransportErrorKind::Connect,
                "could not connect to h.test:80: connection refused; is the server running?",
            ))
        };
        let err = transport.send(get("http://h.test/")).await.unwrap_err();
        assert!(err.is_connect());
        assert_eq!(err.was_sent(), Sent::No);
    }
}
