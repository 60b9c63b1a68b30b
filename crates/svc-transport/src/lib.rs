//! The HTTP transport of the svc SDK.
//!
//! The SDK sends every request through one narrow, object-safe trait, [`Transport`]: it takes an
//! [`http::Request<Bytes>`](http::Request) and returns a boxed future of an
//! [`http::Response<Bytes>`](http::Response) or a [`TransportError`]. The client holds it as
//! `Arc<dyn Transport>`, so any HTTP stack can be plugged in; closures implement it too.
//!
//! - [`HyperTransport`] (feature `hyper`, on by default) is the default transport:
//!   hyper-util's pooled client over rustls, with connect and request timeouts and a response
//!   size limit. With `default-features = false` neither hyper, rustls nor tokio is compiled.
//! - [`replay`] holds transports for tests: [`ReplayTransport`](replay::ReplayTransport)
//!   answers from canned responses and records the requests;
//!   [`RecordingTransport`](replay::RecordingTransport) records what another transport did.
//! - the module `tower` (feature `tower`) makes any `tower::Service` a transport, and transports
//!   services, so that tower's layers (rate limits, concurrency limits, metrics) wrap them.
//! - [`TransportError`] says what went wrong, whether the request may have been sent
//!   ([`Sent`]) and whether trying again can help.
//!
//! ```
//! use std::sync::Arc;
//! use bytes::Bytes;
//! use svc_transport::{Transport, TransportError, TransportErrorKind};
//!
//! // A custom transport is a closure (or any type implementing `Transport`).
//! let transport: Arc<dyn Transport> = Arc::new(|request: http::Request<Bytes>| async move {
//!     if request.uri().host() == Some("down.test") {
//!         return Err(TransportError::message(
//!             TransportErrorKind::Connect,
//!             "could not connect to down.test:443: connection refused; is the server running?",
//!         ));
//!     }
//!     Ok(http::Response::new(Bytes::from_static(b"{\"ok\":true}")))
//! });
//!
//! # let rt = tokio::runtime::Builder::new_current_thread().build()?;
//! # rt.block_on(async {
//! let ok = http::Request::get("https://up.test/v1/health").body(Bytes::new())?;
//! assert_eq!(transport.send(ok).await?.body(), "{\"ok\":true}");
//!
//! let down = http::Request::get("https://down.test/v1/health").body(Bytes::new())?;
//! let err = transport.send(down).await.unwrap_err();
//! assert!(err.is_connect() && err.is_retryable());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! - `hyper` (default): [`HyperTransport`], [`HyperTransportBuilder`] and [`BuildError`].
//!   Sending with it needs a Tokio runtime.
//! - `tower`: the module `tower`, which joins tower's middleware to the transport
//!   (`TowerTransport`, `TransportService`, and `HyperTransport` as a `tower::Service`).
#![cfg_attr(feature = "hyper", doc = "")]
#![cfg_attr(feature = "hyper", doc = "[`HyperTransport`]: crate::HyperTransport")]
#![cfg_attr(
    feature = "hyper",
    doc = "[`HyperTransportBuilder`]: crate::HyperTransportBuilder"
)]
#![cfg_attr(feature = "hyper", doc = "[`BuildError`]: crate::BuildError")]
#![cfg_attr(not(feature = "hyper"), doc = "")]
#![cfg_attr(
    not(feature = "hyper"),
    doc = "[`HyperTransport`]: https://docs.rs/svc-transport/latest/svc_transport/struct.HyperTransport.html"
)]
#![cfg_attr(
    not(feature = "hyper"),
    doc = "[`HyperTransportBuilder`]: https://docs.rs/svc-transport/latest/svc_transport/struct.HyperTransportBuilder.html"
)]
#![cfg_attr(
    not(feature = "hyper"),
    doc = "[`BuildError`]: https://docs.rs/svc-transport/latest/svc_transport/struct.BuildError.html"
)]
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
#[cfg(feature = "hyper")]
mod hyper_transport;
pub mod replay;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub mod tower;
mod transport;

pub use error::{Sent, TransportError, TransportErrorKind};
pub use transport::{BoxFuture, Transport};

#[cfg(feature = "hyper")]
#[cfg_attr(docsrs, doc(cfg(feature = "hyper")))]
pub use hyper_transport::{BuildError, HyperTransport, HyperTransportBuilder};

/// Compiles the README's examples as doctests.
#[cfg(all(doctest, feature = "hyper"))]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
