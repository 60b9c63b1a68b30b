//! [`HyperTransportBuilder`]: timeouts, pool, size limit and trusted roots of a
//! [`HyperTransport`].

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::proxy::{Proxies, ProxyConnector, ProxySettings, SharedConnector};
use super::{Config, HyperTransport, Inner};

/// Configures and builds a [`HyperTransport`]; from [`HyperTransport::builder`].
///
/// ```
/// use std::time::Duration;
/// use svc_transport::HyperTransport;
///
/// # fn main() -> Result<(), svc_transport::BuildError> {
/// let transport = HyperTransport::builder()
///     .connect_timeout(Duration::from_secs(5))
///     .request_timeout(Duration::from_secs(60))
///     .max_response_bytes(16 * 1024 * 1024)
///     .build()?;
/// # drop(transport);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct HyperTransportBuilder {
    config: Config,
    extra_roots: Vec<CertificateDer<'static>>,
}

impl Default for HyperTransportBuilder {
    fn default() -> Self {
        Self {
            config: Config {
                connect_timeout: Duration::from_secs(10),
                request_timeout: Duration::from_secs(30),
                pool_idle_timeout: Duration::from_secs(20),
                pool_max_idle_per_host: usize::MAX,
                max_response_bytes: 64 * 1024 * 1024,
                built_in_roots: true,
                native_roots: false,
                extra_roots: 0,
                proxy: ProxySettings::default(),
            },
            extra_roots: Vec::new(),
        }
    }
}

impl HyperTransportBuilder {
    /// A builder with the defaults (see each method).
    pub fn new() -> Self {
        Self::default()
    }

    /// How long to wait for the TCP connection to be established (default 10 s).
    ///
    /// A connect that takes longer fails with [`Timeout`](crate::TransportErrorKind::Timeout)
    /// and [`Sent::No`](crate::Sent::No). The TLS handshake that follows is bounded by the
    /// request timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.config.connect_timeout = timeout;
        self
    }

    /// How long one request may take in all (default 30 s): connecting, the TLS handshake,
    /// sending, waiting for the response and reading its whole body.
    ///
    /// It applies to each call of [`send`](crate::Transport::send), so to each attempt of a
    /// retried request. A request that takes longer fails with
    /// [`Timeout`](crate::TransportErrorKind::Timeout) and [`Sent::Maybe`](crate::Sent::Maybe).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.config.request_timeout = timeout;
        self
    }

    /// How long an idle keep-alive connection stays in the pool (default 20 s).
    ///
    /// The default is shorter than the 60 to 75 s keep-alive timeouts that servers and load
    /// balancers commonly use, so the pool drops a connection before the server is about to
    /// close it, rather than sending a request on a connection that the server closes at the
    /// same moment (which fails with a retryable [`Io`](crate::TransportErrorKind::Io) error).
    /// Lower it if the server closes idle connections sooner than that.
    pub fn pool_idle_timeout(mut self, timeout: Duration) -> Self {
        self.config.pool_idle_timeout = timeout;
        self
    }

    /// How many idle connections to keep per host (default: no limit). `0` disables pooling.
    pub fn pool_max_idle_per_host(mut self, max: usize) -> Self {
        self.config.pool_max_idle_per_host = max;
        self
    }

    /// The largest response body to read, in bytes (default 64 MiB).
    ///
    /// A larger response fails with
    /// [`ResponseTooLarge`](crate::TransportErrorKind::ResponseTooLarge): at once when its
    /// `Content-Length` says so, otherwise as soon as the limit is passed while reading.
    pub fn max_response_bytes(mut self, max: usize) -> Self {
        self.config.max_response_bytes = max;
        self
    }

    /// Whether to trust the built-in Mozilla root certificates of `webpki-roots` (default
    /// `true`). With `false`, only the roots added with
    /// [`add_root_certificate_pem`](Self::add_root_certificate_pem) or
    /// [`add_root_certificate_der`](Self::add_root_certificate_der) are trusted.
    pub fn tls_built_in_roots(mut self, enabled: bool) -> Self {
        self.config.built_in_roots = enabled;
        self
    }

    /// Whether to trust the platform's root certificates too (default `false`): the system
    /// store (on Linux the files of `SSL_CERT_FILE`/`SSL_CERT_DIR` or the distribution's
    /// bundle, on macOS the keychain, on Windows the certificate store). Needed behind a proxy
    /// that inspects TLS with a company CA installed on the machine.
    ///
    /// [`build`](Self::build) fails when none of them can be loaded.
    #[cfg(feature = "native-roots")]
    #[cfg_attr(docsrs, doc(cfg(feature = "native-roots")))]
    pub fn tls_native_roots(mut self, enabled: bool) -> Self {
        self.config.native_roots = enabled;
        self
    }

    /// Sends every request through the HTTP proxy at `url` (`http://[user:password@]host:port`),
    /// in place of the environment's `HTTPS_PROXY`, `HTTP_PROXY` and `ALL_PROXY`.
    ///
    /// By default the transport reads those variables (and `NO_PROXY`, or their lower-case
    /// forms) when it is built, as curl does. `https` requests go through a `CONNECT` tunnel
    /// (TLS runs end to end); `http` requests are asked of the proxy, with
    /// `Proxy-Authorization` when the URL holds credentials. Loopback addresses (`127.0.0.0/8`,
    /// `::1`) are never proxied. [`build`](Self::build) fails on a URL that is not
    /// `http://` or `https://` with a host.
    pub fn proxy(mut self, url: impl Into<String>) -> Self {
        self.config.proxy.url = Some(url.into());
        self
    }

    /// Hosts reached without the proxy, in place of the environment's `NO_PROXY`:
    /// comma-separated domains (each with its subdomains), IP addresses and networks
    /// (`10.0.0.0/8`), or `*` for every host.
    pub fn no_proxy(mut self, hosts: impl Into<String>) -> Self {
        self.config.proxy.no_proxy = Some(hosts.into());
        self
    }

    /// Whether to read the proxy variables of the environment (default `true`); with `false`
    /// only [`proxy`](Self::proxy) sends requests through a proxy.
    pub fn proxy_from_environment(mut self, enabled: bool) -> Self {
        self.config.proxy.ignore_environment = !enabled;
        self
    }

    /// Trusts the certificates in `pem` (one or more `-----BEGIN CERTIFICATE-----` sections),
    /// for example a private CA or the self-signed certificate of a local server.
    ///
    /// # Errors
    ///
    /// If `pem` holds no certificate, a section cannot be decoded, or a certificate cannot be
    /// used as a trust anchor.
    pub fn add_root_certificate_pem(mut self, pem: &[u8]) -> Result<Self, BuildError> {
        let mut found = 0;
        for (index, cert) in CertificateDer::pem_slice_iter(pem).enumerate() {
            let number = index + 1;
            let cert = cert.map_err(|e| {
                BuildError::with_source(
                    format!("could not read certificate #{number} of the PEM data: {e}"),
                    e,
                )
            })?;
            check_trust_anchor(&cert, || format!("certificate #{number} of the PEM data"))?;
            self.extra_roots.push(cert);
            found += 1;
        }
        if found == 0 {
            return Err(BuildError::new(
                "the PEM data holds no certificate: expected a \
                 '-----BEGIN CERTIFICATE-----' section",
            ));
        }
        self.config.extra_roots = self.extra_roots.len();
        Ok(self)
    }

    /// Trusts one DER-encoded certificate. It is checked by [`build`](Self::build).
    pub fn add_root_certificate_der(mut self, der: Vec<u8>) -> Self {
        self.extra_roots.push(CertificateDer::from(der));
        self.config.extra_roots = self.extra_roots.len();
        self
    }

    /// Builds the transport. It needs no runtime; sending does (see [`HyperTransport`]).
    ///
    /// # Errors
    ///
    /// If a certificate added with [`add_root_certificate_der`](Self::add_root_certificate_der)
    /// is not a valid certificate.
    pub fn build(self) -> Result<HyperTransport, BuildError> {
        let mut roots = RootCertStore::empty();
        if self.config.built_in_roots {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        #[cfg(feature = "native-roots")]
        if self.config.native_roots {
            let found = rustls_native_certs::load_native_certs();
            let (added, _unusable) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found
                    .errors
                    .first()
                    .map_or_else(|| "none was found".to_owned(), ToString::to_string);
                return Err(BuildError::new(format!(
                    "no root certificate of the platform could be loaded ({why}); set \
                     SSL_CERT_FILE or SSL_CERT_DIR, or add the roots with \
                     add_root_certificate_pem"
                )));
            }
        }
        for (index, cert) in self.extra_roots.into_iter().enumerate() {
            let number = index + 1;
            roots.add(cert).map_err(|e| {
                BuildError::with_source(
                    format!("added root certificate #{number} cannot be trusted: {e}"),
                    e,
                )
            })?;
        }

        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| {
                BuildError::with_source(format!("the TLS configuration is invalid: {e}"), e)
            })?
            .with_root_certificates(roots)
            .with_no_client_auth();

        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(self.config.connect_timeout));
        if let Some(url) = &self.config.proxy.url {
            let valid = url.parse::<http::Uri>().is_ok_and(|uri| {
                matches!(uri.scheme_str(), Some("http" | "https")) && uri.host().is_some()
            });
            if !valid {
                return Err(BuildError::new(
                    "the proxy URL must be http://[user:password@]host:port (or https://)",
                ));
            }
        }
        let proxies = Proxies::new(&self.config.proxy, |name| std::env::var(name).ok());
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_all_versions()
            .wrap_connector(ProxyConnector::new(http, proxies.clone()));

        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(self.config.pool_idle_timeout)
            .pool_max_idle_per_host(self.config.pool_max_idle_per_host)
            .pool_timer(TokioTimer::new())
            .timer(TokioTimer::new())
            .build::<_, Full<bytes::Bytes>>(SharedConnector::new(https));

        Ok(HyperTransport {
            inner: Arc::new(Inner {
                client,
                config: self.config,
                deadlines: Default::default(),
                proxies,
            }),
        })
    }
}

/// Checks that `cert` can be a trust anchor, so a bad certificate is reported where it is added.
fn check_trust_anchor(
    cert: &CertificateDer<'static>,
    what: impl FnOnce() -> String,
) -> Result<(), BuildError> {
    RootCertStore::empty()
        .add(cert.clone())
        .map_err(|e| BuildError::with_source(format!("{} cannot be trusted: {e}", what()), e))
}

impl fmt::Debug for HyperTransportBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HyperTransportBuilder")
            .field("config", &self.config)
            .finish()
    }
}

/// Why a [`HyperTransport`] could not be built: a root certificate that cannot be read or
/// trusted.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct BuildError {
    message: String,
    #[source]
    source: Option<Box<dyn StdError + Send + Sync + 'static>>,
}

impl BuildError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    fn with_source(
        message: impl Into<String>,
        source: impl StdError + Send + Sync + 'static,
    ) -> Self {
        Self {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }
}
