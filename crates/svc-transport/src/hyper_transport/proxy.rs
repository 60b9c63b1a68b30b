//! HTTP proxies: which requests go through one (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`,
//! `NO_PROXY`, as curl reads them, or the builder's settings), and the connector that takes
//! them there.
//!
//! - An `https` destination is reached through a `CONNECT` tunnel: the TLS handshake then runs
//!   end to end with the destination, so the proxy sees neither the request nor the answer.
//! - An `http` destination is asked of the proxy itself, in absolute form
//!   (`GET http://host/path HTTP/1.1`), with `Proxy-Authorization` when the proxy URL carries
//!   credentials (added by the transport to each such request, see [`Proxies::authorization`]).
//! - Loopback addresses (`127.0.0.0/8`, `::1`) are never proxied: a local emulator or test
//!   server is reached directly whatever the environment says. Host names go by `NO_PROXY`.
//!
//! Errors name the proxy by host and port only, never by its credentials.

use std::error::Error as StdError;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use http::{HeaderValue, Uri};
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::proxy::Tunnel;
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::client::proxy::matcher::{Intercept, Matcher};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tower_service::Service;

type BoxError = Box<dyn StdError + Send + Sync>;

/// Where proxies come from; see [`HyperTransportBuilder::proxy`](super::HyperTransportBuilder::proxy).
#[derive(Clone, Default, PartialEq, Eq)]
pub(super) struct ProxySettings {
    /// A proxy for every scheme, in place of the environment's.
    pub(super) url: Option<String>,
    /// Hosts reached directly, in place of the environment's `NO_PROXY`.
    pub(super) no_proxy: Option<String>,
    /// Whether to ignore the environment.
    pub(super) ignore_environment: bool,
}

impl std::fmt::Debug for ProxySettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL may hold a password: only its host and port are shown.
        let url = self.url.as_ref().map(|url| {
            url.parse::<Uri>()
                .map_or_else(|_| "(invalid)".to_owned(), |uri| name(&uri))
        });
        f.debug_struct("ProxySettings")
            .field("url", &url)
            .field("no_proxy", &self.no_proxy)
            .field("ignore_environment", &self.ignore_environment)
            .finish()
    }
}

/// The proxies of one transport.
#[derive(Clone)]
pub(super) struct Proxies {
    /// `None` when no request goes through a proxy: nothing to look up per request.
    matcher: Option<Arc<Matcher>>,
}

impl Proxies {
    /// Reads `settings`, with `var` giving environment variables.
    pub(super) fn new(settings: &ProxySettings, var: impl Fn(&str) -> Option<String>) -> Self {
        let env = |names: [&str; 2]| {
            if settings.ignore_environment {
                return String::new();
            }
            names.into_iter().find_map(&var).unwrap_or_default()
        };
        let (all, http, https) = match &settings.url {
            Some(url) => (url.clone(), String::new(), String::new()),
            None => (
                env(["ALL_PROXY", "all_proxy"]),
                env(["HTTP_PROXY", "http_proxy"]),
                env(["HTTPS_PROXY", "https_proxy"]),
            ),
        };
        if [&all, &http, &https].iter().all(|v| v.trim().is_empty()) {
            return Self { matcher: None };
        }
        let no = settings
            .no_proxy
            .clone()
            .unwrap_or_else(|| env(["NO_PROXY", "no_proxy"]));
        let matcher = Matcher::builder()
            .all(all)
            .http(http)
            .https(https)
            .no(no)
            .build();
        Self {
            matcher: Some(Arc::new(matcher)),
        }
    }

    /// The proxy that `dst` goes through, if any.
    fn intercept(&self, dst: &Uri) -> Option<Intercept> {
        let matcher = self.matcher.as_ref()?;
        let host = dst.host()?;
        let ip = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>();
        if ip.is_ok_and(|ip| ip.is_loopback()) {
            return None;
        }
        matcher.intercept(dst)
    }

    /// The `Proxy-Authorization` a plain `http` request to `dst` carries: the credentials of
    /// the proxy it goes through. (`https` requests carry theirs in the tunnel's `CONNECT`.)
    pub(super) fn authorization(&self, dst: &Uri) -> Option<HeaderValue> {
        if dst.scheme_str() != Some("http") {
            return None;
        }
        self.intercept(dst)?.basic_auth().cloned()
    }

    /// Whether any request may go through a proxy.
    #[cfg(test)]
    pub(super) fn any(&self) -> bool {
        self.matcher.is_some()
    }
}

/// The connector under TLS: straight to the destination, through a `CONNECT` tunnel, or to an
/// `http` proxy that is asked in absolute form.
#[derive(Clone)]
pub(super) struct ProxyConnector {
    direct: HttpConnector,
    proxies: Proxies,
}

impl ProxyConnector {
    pub(super) fn new(direct: HttpConnector, proxies: Proxies) -> Self {
        Self { direct, proxies }
    }
}

impl Service<Uri> for ProxyConnector {
    type Response = ProxyStream;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ProxyStream, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.direct.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let Some(intercept) = self.proxies.intercept(&dst) else {
            let connecting = self.direct.call(dst);
            return Box::pin(async move {
                let io = connecting.await?;
                Ok(ProxyStream {
                    io,
                    absolute_form: false,
                })
            });
        };
        let proxy = intercept.uri().clone();
        let named = name(&proxy);
        if dst.scheme_str() == Some("https") {
            let mut tunnel = Tunnel::new(proxy, self.direct.clone());
            if let Some(auth) = intercept.basic_auth() {
                tunnel = tunnel.with_auth(auth.clone());
            }
            let connecting = tunnel.call(dst);
            Box::pin(async move {
                let io = connecting.await.map_err(|e| via(&named, e))?;
                Ok(ProxyStream {
                    io,
                    absolute_form: false,
                })
            })
        } else {
            let connecting = self.direct.call(proxy);
            Box::pin(async move {
                let io = connecting.await.map_err(|e| via(&named, e))?;
                Ok(ProxyStream {
                    io,
                    absolute_form: true,
                })
            })
        }
    }
}

/// The transport's connector (TLS over [`ProxyConnector`]), shared.
///
/// hyper-util's client clones its connector for every request, in case the pool has no
/// connection to give it, and drops the clone unused when it has one; this connector holds
/// four `Arc`s (TLS settings, server name resolver, TCP settings, proxies), each counted up
/// and down per request. Shared, it is one `Arc`; a connector of its own is cloned from it
/// only when a connection is made.
pub(super) struct SharedConnector {
    shared: Arc<HttpsConnector<ProxyConnector>>,
    /// The connector `poll_ready` readied, for the `call` that follows it.
    ready: Option<HttpsConnector<ProxyConnector>>,
}

impl SharedConnector {
    pub(super) fn new(connector: HttpsConnector<ProxyConnector>) -> Self {
        Self {
            shared: Arc::new(connector),
            ready: None,
        }
    }
}

impl Clone for SharedConnector {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            ready: None,
        }
    }
}

impl Service<Uri> for SharedConnector {
    type Response = <HttpsConnector<ProxyConnector> as Service<Uri>>::Response;
    type Error = <HttpsConnector<ProxyConnector> as Service<Uri>>::Error;
    type Future = <HttpsConnector<ProxyConnector> as Service<Uri>>::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        let shared = &self.shared;
        self.ready
            .get_or_insert_with(|| HttpsConnector::clone(shared))
            .poll_ready(cx)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let mut connector = self
            .ready
            .take()
            .unwrap_or_else(|| HttpsConnector::clone(&self.shared));
        connector.call(dst)
    }
}

/// `host:port` of a proxy URI, without any credentials it holds.
fn name(proxy: &Uri) -> String {
    let host = proxy.host().unwrap_or("?");
    let port = proxy
        .port_u16()
        .unwrap_or(if proxy.scheme_str() == Some("https") {
            443
        } else {
            80
        });
    format!("{host}:{port}")
}

/// A failure on the way through the proxy `named`, kept as an `io::Error` of the same kind so
/// that the transport classifies it as it would a direct one, its text naming the proxy.
fn via(named: &str, error: impl Into<BoxError>) -> BoxError {
    let error: BoxError = error.into();
    let mut kind = io::ErrorKind::Other;
    let mut next: Option<&(dyn StdError + 'static)> = Some(&*error);
    while let Some(e) = next {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            kind = io.kind();
            break;
        }
        next = e.source();
    }
    Box::new(io::Error::new(
        kind,
        ProxyFailure {
            proxy: named.to_owned(),
            source: error,
        },
    ))
}

/// What went wrong through a proxy.
#[derive(Debug)]
pub(super) struct ProxyFailure {
    /// The proxy's `host:port`.
    pub(super) proxy: String,
    source: BoxError,
}

impl std::fmt::Display for ProxyFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "through the proxy {}: {}", self.proxy, self.source)
    }
}

impl StdError for ProxyFailure {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        Some(&*self.source)
    }
}

/// A connection made by [`ProxyConnector`]: the TCP stream, and whether requests on it must be
/// in absolute form (it goes to an `http` proxy).
pub(super) struct ProxyStream {
    io: TokioIo<TcpStream>,
    absolute_form: bool,
}

impl Connection for ProxyStream {
    fn connected(&self) -> Connected {
        // Not `self.io.connected()`: that attaches hyper-util's `HttpInfo` (the two socket
        // addresses), which the client then copies into every response's extensions, a map
        // made for each answer (about 450 instructions of a one-record retrieve). Nothing in
        // the workspace reads it (CHANGELOG, 0.7.0's Changed, says how to get it back).
        Connected::new().proxy(self.absolute_form)
    }
}

impl Read for ProxyStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl Write for ProxyStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(text: &str) -> Uri {
        text.parse().unwrap()
    }

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
    }

    fn proxied(proxies: &Proxies, dst: &str) -> Option<String> {
        proxies.intercept(&uri(dst)).map(|i| name(i.uri()))
    }

    #[test]
    fn the_environment_is_read_as_curl_reads_it() {
        let from_env = ProxySettings::default();
        let proxies = Proxies::new(
            &from_env,
            env(&[
                ("HTTPS_PROXY", "http://secure.proxy:3128"),
                ("http_proxy", "http://plain.proxy:8080"),
                ("NO_PROXY", "internal.example, 10.0.0.0/8"),
            ]),
        );
        assert_eq!(
            proxied(&proxies, "https://api.example.com/v1").as_deref(),
            Some("secure.proxy:3128")
        );
        assert_eq!(
            proxied(&proxies, "http://api.example.com/").as_deref(),
            Some("plain.proxy:8080")
        );
        // NO_PROXY: the domain and its subdomains, and the network.
        assert_eq!(proxied(&proxies, "https://internal.example/"), None);
        assert_eq!(proxied(&proxies, "https://db.internal.example/"), None);
        assert_eq!(proxied(&proxies, "http://10.1.2.3/"), None);
        // Loopback is never proxied; a loopback *name* goes by NO_PROXY.
        assert_eq!(proxied(&proxies, "http://127.0.0.1:8080/"), None);
        assert_eq!(proxied(&proxies, "http://[::1]:8080/"), None);
        assert!(proxied(&proxies, "http://localhost:8080/").is_some());

        let all = Proxies::new(&from_env, env(&[("ALL_PROXY", "http://every.proxy:1080")]));
        assert_eq!(
            proxied(&all, "https://api.example.com/").as_deref(),
            Some("every.proxy:1080")
        );
        let none = Proxies::new(&from_env, env(&[("NO_PROXY", "x.example")]));
        assert!(!none.any());
        let off = Proxies::new(
            &ProxySettings {
                ignore_environment: true,
                ..ProxySettings::default()
            },
            env(&[("HTTPS_PROXY", "http://secure.proxy:3128")]),
        );
        assert!(!off.any());
        // The builder's proxy and list replace the environment's.
        let given = Proxies::new(
            &ProxySettings {
                url: Some("http://given.proxy:9000".to_owned()),
                no_proxy: Some("skip.example".to_owned()),
                ignore_environment: false,
            },
            env(&[
                ("HTTPS_PROXY", "http://secure.proxy:3128"),
                ("NO_PROXY", ""),
            ]),
        );
        assert_eq!(
            proxied(&given, "https://api.example.com/").as_deref(),
            Some("given.proxy:9000")
        );
        assert_eq!(proxied(&given, "https://skip.example/"), None);
    }

    #[test]
    fn credentials_go_to_plain_http_requests_only_and_never_into_names() {
        let settings = ProxySettings {
            url: Some("http://ada:s3cret@proxy.example:3128".to_owned()),
            ..ProxySettings::default()
        };
        assert!(!format!("{settings:?}").contains("s3cret"));
        let proxies = Proxies::new(&settings, env(&[]));
        let auth = proxies.authorization(&uri("http://api.example.com/"));
        // base64("ada:s3cret")
        assert_eq!(
            auth.as_ref().map(|v| v.to_str().unwrap()),
            Some("Basic YWRhOnMzY3JldA==")
        );
        assert_eq!(
            proxies.authorization(&uri("https://api.example.com/")),
            None
        );
        assert_eq!(
            proxied(&proxies, "https://api.example.com/").as_deref(),
            Some("proxy.example:3128")
        );
        let failure = via("proxy.example:3128", io::Error::other("refused"));
        assert_eq!(
            failure.to_string(),
            "through the proxy proxy.example:3128: refused"
        );
    }
}
