//! A custom transport: wrap the default one to add a header to every request and count them.
//!
//! Run it against the emulator (`cargo run -p svc-cli -- emulator` prints the values):
//!
//! ```text
//! SVC_PROJECT=demo SVC_APP_BASE_URL=http://127.0.0.1:PORT/api SVC_API_KEY=svc_key_... \
//!     cargo run -p svc-api --example custom_transport
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http::{HeaderName, HeaderValue};
use svc_api::transport::{BoxFuture, HyperTransport, Transport, TransportError};

/// Adds `x-request-source` to every request and counts the requests, then hands them to the
/// inner transport (the default one unless told otherwise).
#[derive(Debug, Clone)]
pub struct Tagged<T = HyperTransport> {
    inner: T,
    source: HeaderValue,
    sent: Arc<AtomicU64>,
}

impl<T: Transport> Tagged<T> {
    /// Wraps `inner`; requests carry `x-request-source: {source}`.
    pub fn new(inner: T, source: &'static str) -> Self {
        Self {
            inner,
            source: HeaderValue::from_static(source),
            sent: Arc::default(),
        }
    }

    /// A handle on the request counter that stays valid after the transport moves into a client.
    pub fn counter(&self) -> Arc<AtomicU64> {
        self.sent.clone()
    }
}

impl<T: Transport> Transport for Tagged<T> {
    fn send(
        &self,
        mut request: http::Request<Bytes>,
    ) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>> {
        self.sent.fetch_add(1, Ordering::Relaxed);
        request.headers_mut().insert(
            HeaderName::from_static("x-request-source"),
            self.source.clone(),
        );
        self.inner.send(request)
    }
}

/// Lists the pages of the project configured in `builder` through a [`Tagged`] transport;
/// returns how many pages there are and how many requests were sent.
pub async fn count_pages<T: Transport + Clone>(
    builder: svc_api::ClientBuilder,
    inner: T,
) -> Result<(usize, u64), svc_api::Error> {
    let transport = Tagged::new(inner, "nightly-sync");
    let counter = transport.counter();
    let client = builder.transport(transport).build()?;
    let pages = client.pages().list().await?;
    Ok((pages.len(), counter.load(Ordering::Relaxed)))
}

#[allow(dead_code)] // also compiled as a module of the end-to-end tests
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Settings from the process environment, only because this program asks for it.
    let env = svc_api::auth::EnvConfig::from_process_env();
    let key = std::env::var("SVC_API_KEY").map_err(|_| "set SVC_API_KEY")?;
    let builder = svc_api::Client::builder().env_config(env).api_key(key);
    let (pages, requests) = count_pages(builder, HyperTransport::new()).await?;
    println!("{pages} pages, {requests} request(s) sent");
    Ok(())
}
