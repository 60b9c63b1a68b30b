//! tower middleware around the SDK's transport: tower's rate limit and a layer of your own
//! that adds a header, wrapped around the default transport.
//!
//! Run it against the emulator (`cargo run -p svc-cli -- emulator` prints the values):
//!
//! ```text
//! SVC_PROJECT=demo SVC_APP_BASE_URL=http://127.0.0.1:PORT/api SVC_API_KEY=svc_key_... \
//!     cargo run -p svc-api --features tower --example tower_layers
//! ```

use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Request, Response};
use svc_api::transport::HyperTransport;
use svc_api::transport::tower::{BoxError, TowerTransport};
use tower::{Layer, Service, ServiceBuilder};

/// A layer of your own: adds `x-request-source` to every request.
#[derive(Debug, Clone)]
pub struct RequestSourceLayer(pub HeaderValue);

impl<S> Layer<S> for RequestSourceLayer {
    type Service = RequestSource<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RequestSource {
            inner,
            source: self.0.clone(),
        }
    }
}

/// The service [`RequestSourceLayer`] makes.
#[derive(Debug, Clone)]
pub struct RequestSource<S> {
    inner: S,
    source: HeaderValue,
}

impl<S: Service<Request<Bytes>>> Service<Request<Bytes>> for RequestSource<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<Bytes>) -> S::Future {
        request.headers_mut().insert(
            HeaderName::from_static("x-request-source"),
            self.source.clone(),
        );
        self.inner.call(request)
    }
}

/// A client from `builder` whose requests pass a rate limit of `requests` per `per` and then
/// [`RequestSourceLayer`], and are sent by `inner` (the default transport, or any service).
pub fn client<S>(
    builder: svc_api::ClientBuilder,
    inner: S,
    requests: u64,
    per: Duration,
) -> Result<svc_api::Client, svc_api::Error>
where
    S: Service<Request<Bytes>, Response = Response<Bytes>> + Send + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send + 'static,
{
    let layered = ServiceBuilder::new()
        .rate_limit(requests, per)
        .layer(RequestSourceLayer(HeaderValue::from_static("nightly-sync")))
        .service(inner);
    builder.transport(TowerTransport::new(layered)).build()
}

#[allow(dead_code)] // also compiled as a module of the end-to-end tests
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Settings from the process environment, only because this program asks for it.
    let env = svc_api::auth::EnvConfig::from_process_env();
    let key = std::env::var("SVC_API_KEY").map_err(|_| "set SVC_API_KEY")?;
    let builder = svc_api::Client::builder().env_config(env).api_key(key);
    // Two requests a second: the five lists take about two seconds.
    let client = client(builder, HyperTransport::new(), 2, Duration::from_secs(1))?;
    let started = std::time::Instant::now();
    for _ in 0..5 {
        let pages = client.pages().list().await?;
        println!(
            "{} pages at {:.1} s",
            pages.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
