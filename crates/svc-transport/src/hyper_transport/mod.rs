//! [`HyperTransport`]: the default transport, hyper-util's pooled client over rustls.

mod builder;
mod classify;
mod deadline;
mod proxy;
#[cfg(test)]
mod test_server;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Body as _;
use hyper_util::client::legacy::{Client, ResponseFuture};

use crate::{BoxFuture, Sent, Transport, TransportError, TransportErrorKind};

pub use builder::{BuildError, HyperTransportBuilder};
use classify::Target;
use deadline::Deadlines;

/// The default transport: hyper-util's pooled HTTP/1.1 and HTTP/2 client over rustls.
///
/// - TLS by rustls with the *ring* provider (no process-wide provider needs installing),
///   trusting the Mozilla roots of `webpki-roots` and any roots you add; HTTP/2 or HTTP/1.1 is
///   chosen by ALPN. Plain `http://` URIs work too.
/// - Keep-alive connections are pooled per host; `TCP_NODELAY` is set.
/// - HTTP proxies from `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and `NO_PROXY`, as curl reads
///   them, or set on the builder ([`HyperTransportBuilder::proxy`]); loopback is never proxied.
/// - Timeouts: connect (default 10 s) and the whole request including its body (default 30 s).
/// - The response body is read into memory, up to a limit (default 64 MiB).
///
/// Cloning is cheap and clones share the connection pool. `Debug` shows the settings only.
///
/// # Runtime
///
/// Sending needs a [Tokio](https://tokio.rs) runtime with I/O and time enabled (for example
/// `#[tokio::main]`, or a runtime built with `enable_all()`); polled outside one, the future
/// resolves to a [`TransportErrorKind::Other`] error that says so. Pooled connections belong to
/// the runtime that opened them, so share one transport only among tasks of one runtime.
///
/// # Errors
///
/// See [`TransportErrorKind`] for what each kind means; the error's text names the host and
/// port, says what happened and what to try, and never includes the request's path, query,
/// headers or body.
///
/// # Example
///
/// ```no_run
/// use bytes::Bytes;
/// use svc_transport::{HyperTransport, Transport};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let transport = HyperTransport::new();
/// let request = http::Request::get("https://api.example.com/v1/health").body(Bytes::new())?;
/// match transport.send(request).await {
///     Ok(response) => println!("{} ({} bytes)", response.status(), response.body().len()),
///     Err(err) if err.is_retryable() => eprintln!("try again later: {err}"),
///     Err(err) => return Err(err.into()),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct HyperTransport {
    inner: Arc<Inner>,
}

struct Inner {
    client: Client<proxy::SharedConnector, Full<Bytes>>,
    config: Config,
    /// The request timeout's one timer (see `deadline`).
    deadlines: Deadlines,
    /// Which requests go through a proxy (see `proxy`).
    proxies: proxy::Proxies,
}

/// The settings of a transport, as `Debug` shows them.
#[derive(Debug, Clone)]
struct Config {
    connect_timeout: Duration,
    request_timeout: Duration,
    pool_idle_timeout: Duration,
    pool_max_idle_per_host: usize,
    max_response_bytes: usize,
    built_in_roots: bool,
    /// Whether the platform's roots are trusted too (feature `native-roots`).
    #[cfg_attr(not(feature = "native-roots"), allow(dead_code))]
    native_roots: bool,
    /// How many root certificates were added.
    extra_roots: usize,
    /// Where proxies come from (`Debug` shows a proxy's host and port only).
    proxy: proxy::ProxySettings,
}

impl HyperTransport {
    /// A transport with the default settings (see [`HyperTransportBuilder`]).
    ///
    /// # Panics
    ///
    /// Never in practice: the defaults add no certificate that could be invalid, and the
    /// *ring* provider supports the default TLS versions.
    pub fn new() -> Self {
        Self::builder()
            .build()
            .expect("the default HyperTransport settings are valid")
    }

    /// A builder to change the timeouts, the pool, the size limit or the trusted roots.
    pub fn builder() -> HyperTransportBuilder {
        HyperTransportBuilder::new()
    }
}

impl Default for HyperTransport {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for HyperTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HyperTransport")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl Transport for HyperTransport {
    fn send(
        &self,
        mut request: http::Request<Bytes>,
    ) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>> {
        if let Some(auth) = self.inner.proxies.authorization(request.uri()) {
            request
                .headers_mut()
                .insert(http::header::PROXY_AUTHORIZATION, auth);
        }
        // The request goes to hyper-util here, so that the boxed future holds hyper-util's
        // (itself boxed) response future rather than the request: a box of a few hundred
        // bytes, not of two copies of the request. Nothing is sent before it is polled.
        let sending = Target::of(request.uri())
            .map(|target| (target, self.inner.client.request(request.map(Full::new))));
        let inner = Arc::clone(&self.inner);
        Box::pin(async move {
            let (target, response) = sending?;
            inner.send(response, &target).await
        })
    }
}

impl Inner {
    /// Waits for `response` (hyper-util's future for the request to `target`) and its whole
    /// body, within the request timeout.
    async fn send(
        &self,
        response: ResponseFuture,
        target: &Target,
    ) -> Result<http::Response<Bytes>, TransportError> {
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(TransportError::message(
                TransportErrorKind::Other,
                "HyperTransport needs a Tokio runtime: send requests from within one \
                 (for example #[tokio::main]), or use a transport of your own",
            )
            .with_sent(Sent::No));
        }
        let timeout = self.config.request_timeout;
        let exchange = std::pin::pin!(self.exchange(response, target));
        match self.deadlines.within(timeout, exchange).await {
            Ok(result) => result,
            Err(_elapsed) => Err(TransportError::message(
                TransportErrorKind::Timeout,
                format!(
                    "no complete response from {target} within {timeout:?} (the request \
                     timeout); the server may be slow or unreachable, and may have received \
                     the request: retry only if it is idempotent, or raise the timeout"
                ),
            )),
        }
    }

    /// Waits for the response and reads it whole, without the request timeout.
    async fn exchange(
        &self,
        response: ResponseFuture,
        target: &Target,
    ) -> Result<http::Response<Bytes>, TransportError> {
        let response = response
            .await
            .map_err(|e| classify::client_error(e, target, self.config.connect_timeout))?;

        let (parts, body) = response.into_parts();
        let max = self.config.max_response_bytes;
        // hyper knows the length a `Content-Length` announces (the body's exact size hint; none
        // for a chunked body, and 0 for the answer to a HEAD): refused before reading any of it.
        let announced = body.size_hint().lower();
        if announced > max as u64 {
            return Err(classify::too_large(target, max, Some(announced)));
        }
        // `announced` is at most `max`, a `usize`.
        let expected = usize::try_from(announced).unwrap_or(0);
        let body = read_whole(body, max, expected).await.map_err(|e| match e {
            ReadError::TooLarge => classify::too_large(target, max, None),
            ReadError::Body(e) => classify::body_error(e.into(), target),
        })?;
        Ok(http::Response::from_parts(parts, body))
    }
}

/// Why a body could not be read whole.
#[derive(Debug)]
enum ReadError<E> {
    /// More than the transport's `max_response_bytes`.
    TooLarge,
    /// The body's own error.
    Body(E),
}

/// `body`'s data read whole, as `Limited::new(body, max).collect().await?.to_bytes()` reads it
/// (every data frame in order, trailers left out, and no more than `max` bytes), `expected`
/// bytes or so.
///
/// Without the list of frames that `collect` keeps: a small answer arrives as one frame, which
/// is then the body itself, with nothing allocated or copied, where `collect` put it in a
/// `VecDeque` it allocated and took it out again (about 500 instructions of a one-record
/// retrieve, `cargo xtask bench --only instructions`). The frames of a larger answer are
/// copied into one buffer, as `to_bytes` copies them. The bytes are counted here, as `Limited`
/// counted them, without a layer polled around every frame.
async fn read_whole<B>(
    mut body: B,
    max: usize,
    expected: usize,
) -> Result<Bytes, ReadError<B::Error>>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
{
    let mut first = Bytes::new();
    let mut joined: Vec<u8> = Vec::new();
    let mut total = 0usize;
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(ReadError::Body)?.into_data() else {
            // Trailers: not part of the body.
            continue;
        };
        if data.is_empty() {
            continue;
        }
        total = total.saturating_add(data.len());
        if total > max {
            return Err(ReadError::TooLarge);
        }
        if first.is_empty() {
            first = data;
            continue;
        }
        if joined.is_empty() {
            joined.reserve(expected.max(first.len() + data.len()));
            joined.extend_from_slice(&first);
        }
        joined.extend_from_slice(&data);
    }
    Ok(if joined.is_empty() {
        first
    } else {
        Bytes::from(joined)
    })
}
