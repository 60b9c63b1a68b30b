//! Talking to the upstream: resolve the target, check every address against the allow-list,
//! connect to a checked address (TLS for `https://`), send, follow redirects that stay on the
//! list, and read the answer up to a size limit, all within one timeout.

use std::collections::BTreeMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::http::header::{
    AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, COOKIE, HOST, LOCATION, PROXY_AUTHORIZATION,
};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, Request, StatusCode, Uri};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use svc_model::error_body::codes;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

use super::allow::AllowList;
use svc_emulator_http::HttpError;
use svc_emulator_state::config::proxy::ProxyConfig;

/// The largest upstream answer passed on, in bytes; a larger one is a `502`.
pub(crate) const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// How many redirects are followed before giving up with a `502`.
pub(crate) const MAX_REDIRECTS: usize = 10;

/// The proxy's machinery, built once at start from a [`ProxyConfig`].
pub(crate) struct Forwarder {
    allow: AllowList,
    timeout: Duration,
    pub(super) secrets: BTreeMap<String, String>,
    resolve: BTreeMap<String, Vec<IpAddr>>,
    tls: Arc<rustls::ClientConfig>,
}

impl fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Forwarder")
            .field("allow", &self.allow)
            .field("timeout", &self.timeout)
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .field("resolve", &self.resolve)
            .finish_non_exhaustive()
    }
}

/// The request to send, already encoded.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    pub(crate) method: Method,
    /// Absolute `http(s)://` URL with the query parameters appended.
    pub(crate) url: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    /// The headers that carry a substituted secret: never sent to another origin.
    pub(crate) secret_headers: Vec<HeaderName>,
    /// Whether the body carries a substituted secret: never sent to another origin.
    pub(crate) secret_in_body: bool,
}

/// The upstream's answer.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
}

/// Where a URL points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    https: bool,
    /// Lower case, without IPv6 brackets.
    host: String,
    port: u16,
    /// `host[:port]` as written, for the `Host` header.
    authority: String,
    /// Origin form: `/path?query`.
    path_and_query: String,
}

impl Target {
    /// Parses an absolute `http://` or `https://` URL; the message says what is wrong. A
    /// fragment is dropped (it is never sent).
    pub(crate) fn parse(url: &str) -> Result<Self, String> {
        let url = url.split('#').next().unwrap_or_default();
        let uri: Uri = url
            .parse()
            // The URL is not echoed: secrets may have been substituted into it.
            .map_err(|_| {
                "Not a valid absolute URL (characters such as spaces must be percent-encoded)."
                    .to_owned()
            })?;
        let https = match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
            Some("http") => false,
            Some("https") => true,
            _ => return Err("The URL must start with http:// or https://.".to_owned()),
        };
        let authority = uri
            .authority()
            .ok_or_else(|| "The URL has no host.".to_owned())?;
        if authority.as_str().contains('@') {
            return Err(
                "The URL must not carry credentials (user:password@); send an Authorization header instead."
                    .to_owned(),
            );
        }
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        if host.is_empty() {
            return Err("The URL has no host.".to_owned());
        }
        let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
        let path_and_query = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
        let path_and_query = if path_and_query.starts_with('/') {
            path_and_query
        } else {
            format!("/{path_and_query}")
        };
        Ok(Self {
            https,
            host,
            port,
            authority: authority.as_str().to_owned(),
            path_and_query,
        })
    }

    fn same_origin(&self, other: &Self) -> bool {
        self.https == other.https && self.host == other.host && self.port == other.port
    }
}

/// Why a target was not reached.
fn bad_gateway(message: impl Into<String>) -> HttpError {
    HttpError::new(StatusCode::BAD_GATEWAY, codes::BAD_GATEWAY, message)
}

fn not_allowed(message: impl Into<String>) -> HttpError {
    HttpError::new(StatusCode::FORBIDDEN, codes::TARGET_NOT_ALLOWED, message)
}

trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

impl Forwarder {
    /// Checks the allow-list and the extra root certificates.
    pub(crate) fn new(config: &ProxyConfig) -> Result<Self, String> {
        let allow = AllowList::parse(config.allow_list())?;
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for (index, pem) in config.root_certificates_pem().iter().enumerate() {
            let mut found = false;
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| {
                    format!(
                        "proxy root certificate #{} is not valid PEM: {e}",
                        index + 1
                    )
                })?;
                roots.add(cert).map_err(|e| {
                    format!("proxy root certificate #{} was refused: {e}", index + 1)
                })?;
                found = true;
            }
            if !found {
                return Err(format!(
                    "proxy root certificate #{} holds no certificate",
                    index + 1
                ));
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("proxy TLS configuration: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Self {
            allow,
            timeout: config.timeout_limit(),
            secrets: config.secrets().clone(),
            resolve: config.pinned_names().clone(),
            tls: Arc::new(tls),
        })
    }

    /// Sends `out` and returns the upstream's answer, following redirects; `504` past the
    /// timeout.
    pub(crate) async fn forward(&self, out: Outgoing) -> Result<Answer, HttpError> {
        match tokio::time::timeout(self.timeout, self.forward_within(out)).await {
            Ok(result) => result,
            Err(_) => Err(HttpError::new(
                StatusCode::GATEWAY_TIMEOUT,
                codes::GATEWAY_TIMEOUT,
                format!(
                    "The upstream did not answer within the proxy timeout of {:?}.",
                    self.timeout
                ),
            )),
        }
    }

    async fn forward_within(&self, mut out: Outgoing) -> Result<Answer, HttpError> {
        let mut target =
            Target::parse(&out.url).map_err(|message| HttpError::invalid_field("url", message))?;
        let mut redirects = 0;
        loop {
            let addrs = self.checked_addresses(&target, redirects > 0).await?;
            let answer = self.exchange(&target, &addrs, &out).await?;
            let Some(next_url) = redirect_location(&answer, &out.url) else {
                return Ok(answer);
            };
            // A redirect the proxy cannot follow (another scheme, a malformed URL) is the
            // upstream's answer.
            let Ok(next) = Target::parse(&next_url) else {
                return Ok(answer);
            };
            if redirects == MAX_REDIRECTS {
                return Err(bad_gateway(format!(
                    "The upstream redirected more than {MAX_REDIRECTS} times."
                )));
            }
            redirects += 1;
            let status = answer.status.as_u16();
            // As browsers do: `303` turns any method but HEAD into a GET without body, `301`
            // and `302` turn a POST into one; `307` and `308` keep method and body.
            let to_get = (status == 303 && out.method != Method::HEAD)
                || (matches!(status, 301 | 302) && out.method == Method::POST);
            let cross_origin = !target.same_origin(&next);
            // A `307` or `308` to another origin would carry the body there as it is: one
            // holding a secret stops here, and the redirect is the upstream's answer.
            if cross_origin && !to_get && out.secret_in_body && !out.body.is_empty() {
                return Ok(answer);
            }
            if to_get {
                out.method = Method::GET;
                out.body = Bytes::new();
                out.secret_in_body = false;
                out.headers.remove(CONTENT_TYPE);
                out.headers.remove(CONTENT_LENGTH);
            }
            if cross_origin {
                // Credentials, and every header a secret went into, are for the origin the
                // caller named.
                for name in [AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION]
                    .into_iter()
                    .chain(std::mem::take(&mut out.secret_headers))
                {
                    out.headers.remove(name);
                }
            }
            out.url = next_url;
            target = next;
        }
    }

    /// The addresses of `target`, every one of them allowed; `403` otherwise, before any
    /// connection is attempted.
    async fn checked_addresses(
        &self,
        target: &Target,
        redirected: bool,
    ) -> Result<Vec<SocketAddr>, HttpError> {
        let what = if redirected {
            "The upstream redirected to"
        } else {
            "The target"
        };
        let host = &target.host;
        let ips: Vec<IpAddr> = if let Ok(ip) = host.parse::<IpAddr>() {
            vec![ip]
        } else if let Some(pinned) = self.resolve.get(host.trim_end_matches('.')) {
            pinned.clone()
        } else {
            // A name not on the list is looked up to learn its addresses, which are then all
            // checked below; the connection goes to one of them, never to a second lookup.
            tokio::net::lookup_host((host.as_str(), target.port))
                .await
                .map_err(|e| bad_gateway(format!("Could not resolve {host}: {e}.")))?
                .map(|a| a.ip())
                .collect()
        };
        if ips.is_empty() {
            return Err(bad_gateway(format!("{host} has no address.")));
        }
        let trusted_name = self.allow.allows_any() || self.allow.allows_name(host);
        if !trusted_name && let Some(refused) = ips.iter().find(|ip| !self.allow.allows_addr(**ip))
        {
            let how = if host.parse::<IpAddr>().is_ok() {
                String::new()
            } else {
                format!(", which resolves to {refused},")
            };
            return Err(not_allowed(format!(
                "{what} {host}{how} is not on the proxy's allow-list."
            )));
        }
        Ok(ips
            .into_iter()
            .map(|ip| SocketAddr::new(ip, target.port))
            .collect())
    }

    /// One request on a new connection to one of `addrs`.
    async fn exchange(
        &self,
        target: &Target,
        addrs: &[SocketAddr],
        out: &Outgoing,
    ) -> Result<Answer, HttpError> {
        let tcp = connect(target, addrs).await?;
        let io: Box<dyn Io> = if target.https {
            let name = ServerName::try_from(target.host.clone())
                .map_err(|_| bad_gateway(format!("{} is not a valid TLS name.", target.host)))?;
            let tls = tokio_rustls::TlsConnector::from(Arc::clone(&self.tls))
                .connect(name, tcp)
                .await
                .map_err(|e| {
                    bad_gateway(format!("TLS handshake with {} failed: {e}.", target.host))
                })?;
            Box::new(tls)
        } else {
            Box::new(tcp)
        };
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
            .await
            .map_err(|e| {
                bad_gateway(format!("HTTP handshake with {} failed: {e}.", target.host))
            })?;

        let mut request = Request::new(Full::new(out.body.clone()));
        *request.method_mut() = out.method.clone();
        *request.uri_mut() = target
            .path_and_query
            .parse()
            .map_err(|_| HttpError::invalid_field("url", "The URL's path is not valid."))?;
        *request.headers_mut() = out.headers.clone();
        let host = HeaderValue::from_str(&target.authority)
            .map_err(|_| HttpError::invalid_field("url", "The URL's host is not valid."))?;
        request.headers_mut().insert(HOST, host);
        if !out.body.is_empty() || matches!(out.method, Method::POST | Method::PUT | Method::PATCH)
        {
            request
                .headers_mut()
                .insert(CONTENT_LENGTH, HeaderValue::from(out.body.len()));
        }

        let host = target.host.clone();
        let exchange = async move {
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| bad_gateway(format!("{host} did not answer: {e}.")))?;
            let (parts, body) = response.into_parts();
            if parts.status == StatusCode::SWITCHING_PROTOCOLS {
                // Passed on, it would leave the caller's connection waiting for a protocol
                // that never comes.
                return Err(bad_gateway(format!(
                    "{host} switched protocols (101 Switching Protocols); the proxy does not \
                     support upgrades such as WebSocket."
                )));
            }
            let declared = parts
                .headers
                .get(CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok());
            if declared.is_some_and(|n| n > MAX_RESPONSE_BYTES as u64) {
                return Err(too_large());
            }
            let body = read_capped(body, &host).await?;
            Ok(Answer {
                status: parts.status,
                headers: parts.headers,
                body,
            })
        };
        let mut exchange = std::pin::pin!(exchange);
        let mut connection = std::pin::pin!(connection);
        tokio::select! {
            answer = &mut exchange => answer,
            // The connection closed (or failed): what it delivered is still read, and a
            // failure shows up as the exchange's error.
            _ = &mut connection => exchange.await,
        }
    }
}

async fn connect(target: &Target, addrs: &[SocketAddr]) -> Result<TcpStream, HttpError> {
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(e) => last = Some(e),
        }
    }
    let why = last.map_or_else(|| "no address".to_owned(), |e| e.to_string());
    Err(bad_gateway(format!(
        "Could not connect to {}:{}: {why}.",
        target.host, target.port
    )))
}

fn too_large() -> HttpError {
    bad_gateway(format!(
        "The upstream's answer is larger than the proxy's limit of {MAX_RESPONSE_BYTES} bytes."
    ))
}

async fn read_capped(mut body: hyper::body::Incoming, host: &str) -> Result<Bytes, HttpError> {
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| bad_gateway(format!("{host} broke off its answer: {e}.")))?;
        if let Ok(data) = frame.into_data() {
            if bytes.len().saturating_add(data.len()) > MAX_RESPONSE_BYTES {
                return Err(too_large());
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(bytes))
}

/// The absolute URL a redirect answer points to, if it is one with a `Location`.
fn redirect_location(answer: &Answer, current: &str) -> Option<String> {
    if !matches!(answer.status.as_u16(), 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let location = answer.headers.get(LOCATION)?.to_str().ok()?.trim();
    (!location.is_empty()).then(|| join(current, location))
}

/// Resolves a `Location` against the URL it came from: absolute, scheme-relative (`//h/p`),
/// absolute-path (`/p`), query-only (`?q`) or relative-path (`p`) references.
fn join(base: &str, reference: &str) -> String {
    let base = base.split('#').next().unwrap_or_default();
    if let Some((scheme, _)) = reference.split_once(':')
        && !scheme.is_empty()
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
        && !scheme.contains('/')
    {
        return reference.to_owned();
    }
    let (scheme, rest) = base.split_once("://").unwrap_or(("http", base));
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path_and_query) = rest.split_at(authority_end);
    if let Some(scheme_relative) = reference.strip_prefix("//") {
        return format!("{scheme}://{scheme_relative}");
    }
    if reference.starts_with('/') {
        return format!("{scheme}://{authority}{reference}");
    }
    let path = path_and_query.split('?').next().unwrap_or_default();
    if reference.starts_with('?') {
        let path = if path.is_empty() { "/" } else { path };
        return format!("{scheme}://{authority}{path}{reference}");
    }
    let dir = path.rfind('/').map_or("/", |i| &path[..=i]);
    format!("{scheme}://{authority}{dir}{reference}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let t = Target::parse("http://LocalHost:8080/a/b?x=1#frag").unwrap();
        assert_eq!(
            (t.https, t.host.as_str(), t.port, t.authority.as_str()),
            (false, "localhost", 8080, "LocalHost:8080")
        );
        assert_eq!(t.path_and_query, "/a/b?x=1");
        let t = Target::parse("https://[::1]/").unwrap();
        assert_eq!((t.https, t.host.as_str(), t.port), (true, "::1", 443));
        let t = Target::parse("http://127.0.0.1").unwrap();
        assert_eq!((t.port, t.path_and_query.as_str()), (80, "/"));
        for bad in [
            "ftp://h/",
            "localhost:80",
            "/relative",
            "http://user:pw@h/",
            "http:///x",
            "not a url",
            "",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
        let a = Target::parse("http://h:80/x").unwrap();
        assert!(a.same_origin(&Target::parse("http://H/y").unwrap()));
        assert!(!a.same_origin(&Target::parse("https://h/").unwrap()));
    }

    #[test]
    fn joins() {
        let base = "http://h:1/a/b?q=1#f";
        assert_eq!(join(base, "https://x/y"), "https://x/y");
        assert_eq!(join(base, "//x:2/y"), "http://x:2/y");
        assert_eq!(join(base, "/c"), "http://h:1/c");
        assert_eq!(join(base, "?z=2"), "http://h:1/a/b?z=2");
        assert_eq!(join(base, "c/d"), "http://h:1/a/c/d");
        assert_eq!(join("http://h", "c"), "http://h/c");
        assert_eq!(join("http://h", "?c"), "http://h/?c");
    }

    fn forwarder(allow: &[&str]) -> Forwarder {
        let config = ProxyConfig::new()
            .allow(allow.iter().copied())
            .resolve("pinned.test", ["192.0.2.1".parse().unwrap()])
            .resolve(
                "mixed.test",
                ["127.0.0.1".parse().unwrap(), "192.0.2.1".parse().unwrap()],
            )
            .resolve("loop.test", ["127.0.0.5".parse().unwrap()]);
        Forwarder::new(&config).unwrap()
    }

    async fn check(f: &Forwarder, url: &str) -> Result<Vec<SocketAddr>, StatusCode> {
        f.checked_addresses(&Target::parse(url).unwrap(), false)
            .await
            .map_err(|e| e.status())
    }

    #[tokio::test]
    async fn every_address_is_checked_before_connecting() {
        let f = forwarder(&["loopback"]);
        assert_eq!(
            check(&f, "http://127.0.0.1:9/").await.unwrap(),
            vec!["127.0.0.1:9".parse().unwrap()]
        );
        assert!(check(&f, "http://[::1]/").await.is_ok());
        assert!(check(&f, "http://loop.test/").await.is_ok());
        for refused in [
            "http://192.0.2.1/",
            "http://10.255.255.1/",
            "http://[::ffff:192.0.2.1]/",
            "http://pinned.test/",
            "http://mixed.test/",
            "http://0.0.0.0/",
        ] {
            assert_eq!(
                check(&f, refused).await,
                Err(StatusCode::FORBIDDEN),
                "{refused}"
            );
        }
        // A name on the list is trusted whatever it resolves to; `*` allows everything.
        let f = forwarder(&["pinned.test"]);
        assert!(check(&f, "http://pinned.test/").await.is_ok());
        assert_eq!(
            check(&f, "http://127.0.0.1/").await,
            Err(StatusCode::FORBIDDEN)
        );
        let f = forwarder(&["*"]);
        assert!(check(&f, "http://mixed.test/").await.is_ok());
    }

    #[test]
    fn bad_config_is_refused() {
        let e = Forwarder::new(&ProxyConfig::new().allow(["10.0.0.0/99"])).unwrap_err();
        assert!(e.contains("10.0.0.0/99"), "{e}");
        let e = Forwarder::new(&ProxyConfig::new().root_certificate_pem("nope")).unwrap_err();
        assert!(e.contains("no certificate"), "{e}");
    }
}
