//! The client and its builder.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use svc_auth::config::{
    DEFAULT_API_BASE_URL, DEFAULT_APP_BASE_URL, DEFAULT_ENVIRONMENT, trim_base_url,
};
use svc_auth::{EnvConfig, Secret};
use svc_model::{EnvironmentName, ProjectName};
use svc_transport::Transport;

use crate::error::{Error, Result};
use crate::retry::RetryPolicy;
use crate::sleep::{Sleep, TokioSleep};

/// A client of the svc API. Cheap to clone (one `Arc`), `Send + Sync + 'static`, and immutable
/// once built: share one per process, or build one per request when each request carries its
/// own credentials.
///
/// Each operation group is a method returning a handle: [`pages`](Self::pages),
/// [`projects`](Self::projects), ... (one Cargo feature each).
///
/// ```no_run
/// # async fn run() -> Result<(), svc_api::Error> {
/// let client = svc_api::Client::builder()
///     .project("acme")
///     .api_key("svc_key_...")
///     .app_base_url("https://app.example.com/api")
///     .build()?;
/// for page in client.pages().list().await? {
///     println!("{:?} {:?}", page.uid(), page.name());
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    /// What sends the calls; not kept without an operation group, as nothing is ever sent.
    #[cfg(feature = "_sends")]
    pub(crate) sender: Sender,
    pub(crate) project: Option<String>,
    pub(crate) environment: String,
    pub(crate) api_base_url: String,
    pub(crate) app_base_url: String,
    pub(crate) draft: bool,
    pub(crate) api_key: Option<Secret>,
    pub(crate) resource_tokens: HashMap<String, Secret>,
    /// The user session (tokens, refresh); its own token store or memory. Kept only with the
    /// operation groups whose calls may carry it.
    #[cfg(feature = "_session")]
    pub(crate) session: svc_auth::Session,
    /// A service token loaded into the client, sent as `JWT`.
    pub(crate) service_token: std::sync::RwLock<Option<Secret>>,
    pub(crate) retry: RetryPolicy,
    pub(crate) timeout: Option<Duration>,
}

/// What sends a call: the transport, the timer, the client's own attempt timeout and the
/// `User-Agent`.
#[cfg(feature = "_sends")]
pub(crate) struct Sender {
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) sleep: Arc<dyn Sleep>,
    /// The limit on one attempt that the client enforces itself: set only with a custom
    /// transport (the default transport enforces [`ClientBuilder::attempt_timeout`] itself).
    pub(crate) attempt_timeout: Option<Duration>,
    pub(crate) user_agent: http::HeaderValue,
    /// URL prefixes, parsed hosts and header values made once from the settings.
    pub(crate) prepared: crate::prepared::Prepared,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = &self.inner;
        f.debug_struct("Client")
            .field("project", &i.project)
            .field("environment", &i.environment)
            .field("api_base_url", &i.api_base_url)
            .field("app_base_url", &i.app_base_url)
            .field("draft", &i.draft)
            .field("api_key", &i.api_key)
            .field(
                "resources_with_tokens",
                &i.resource_tokens.keys().collect::<Vec<_>>(),
            )
            .field("retry", &i.retry)
            .field("timeout", &i.timeout)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Starts a builder.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// Starts a builder with everything a client of one deployment needs already set: both
    /// base URLs, the project and environment, the API key, every resource token, and the CA
    /// to trust ([`ClientBuilder::connection`]). The way from an emulator to its client, in one
    /// line: `Client::builder_for(&emulator).build()?` (`svc-emulator` gives its
    /// [`ConnectionInfo`](svc_model::ConnectionInfo); neither crate depends on the other).
    ///
    /// ```
    /// use svc_api::Client;
    /// use svc_api::model::ConnectionInfo;
    ///
    /// let info = ConnectionInfo::new("http://127.0.0.1:8787", "demo").api_key("svc_key_1");
    /// let client = Client::builder_for(info).build()?;
    /// assert_eq!(client.project()?.as_str(), "demo");
    /// # Ok::<(), svc_api::Error>(())
    /// ```
    pub fn builder_for(connection: impl Into<svc_model::ConnectionInfo>) -> ClientBuilder {
        ClientBuilder::default().connection(connection.into())
    }

    /// The project, checked as a path segment. An operation that needs a project and has none
    /// fails with [`Error::InvalidInput`] before sending anything.
    pub fn project(&self) -> Result<ProjectName> {
        match &self.inner.project {
            Some(p) => Ok(ProjectName::new(p.as_str())?),
            None => Err(Error::invalid(
                "no project is set: call ClientBuilder::project, or set SVC_PROJECT in the env map",
            )),
        }
    }

    /// The environment (default `prod`), checked as a path segment.
    pub fn environment(&self) -> Result<EnvironmentName> {
        Ok(EnvironmentName::new(self.inner.environment.as_str())?)
    }

    /// Whether requests carry `draft=1`.
    pub fn draft(&self) -> bool {
        self.inner.draft
    }

    /// The data host base URL, without a trailing slash.
    pub fn api_base_url(&self) -> &str {
        &self.inner.api_base_url
    }

    /// The application host base URL, without a trailing slash.
    pub fn app_base_url(&self) -> &str {
        &self.inner.app_base_url
    }

    /// Loads a service token: from now on, calls that a session would serve carry
    /// `Authorization: JWT <token>` (an API key or resource token still wins where it applies).
    ///
    /// ```
    /// let client = svc_api::Client::builder().project("p").build().unwrap();
    /// client.load_service_token("header.payload.signature");
    /// ```
    pub fn load_service_token(&self, token: impl Into<Secret>) {
        *self
            .inner
            .service_token
            .write()
            .unwrap_or_else(|e| e.into_inner()) = Some(token.into());
    }

    #[cfg(any(feature = "pages", feature = "projects"))]
    pub(crate) fn api_key(&self) -> Option<&Secret> {
        self.inner.api_key.as_ref()
    }
}

/// Builds a [`Client`]. Explicit settings win over the env map, which wins over defaults.
///
/// ```
/// use std::collections::HashMap;
/// let env = HashMap::from([("SVC_PROJECT", "shop"), ("SVC_ENVIRONMENT", "staging")]);
/// let client = svc_api::Client::builder()
///     .env(&env)
///     .environment("prod") // explicit wins over the map
///     .build()
///     .unwrap();
/// assert_eq!(client.project().unwrap().as_str(), "shop");
/// assert_eq!(client.environment().unwrap().as_str(), "prod");
/// ```
#[derive(Default)]
#[must_use]
pub struct ClientBuilder {
    project: Option<String>,
    environment: Option<String>,
    api_base_url: Option<String>,
    app_base_url: Option<String>,
    draft: Option<bool>,
    api_key: Option<Secret>,
    resource_tokens: HashMap<String, Secret>,
    token_store: Option<Arc<dyn svc_auth::TokenStore>>,
    service_token: Option<Secret>,
    env: EnvConfig,
    retry: Option<RetryPolicy>,
    timeout: Option<Duration>,
    connect_timeout: Option<Duration>,
    attempt_timeout: Option<Duration>,
    pool_idle_timeout: Option<Duration>,
    root_certificates: Vec<Vec<u8>>,
    proxy: Option<String>,
    no_proxy: Option<String>,
    native_roots: bool,
    transport: Option<Arc<dyn Transport>>,
    sleep: Option<Arc<dyn Sleep>>,
    allow_insecure_http: bool,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("project", &self.project)
            .field("environment", &self.environment)
            .field("api_base_url", &self.api_base_url)
            .field("app_base_url", &self.app_base_url)
            .field("draft", &self.draft)
            .field("api_key", &self.api_key)
            .field("env", &self.env)
            .field("allow_insecure_http", &self.allow_insecure_http)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// The project's unique name. Not checked here: operations that need it check it.
    pub fn project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
        self
    }

    /// The environment; default `prod`.
    pub fn environment(mut self, environment: impl Into<String>) -> Self {
        self.environment = Some(environment.into());
        self
    }

    /// The data host base URL (records, SQL, users, teams, resources, sessions). A trailing
    /// slash is removed.
    pub fn api_base_url(mut self, url: impl Into<String>) -> Self {
        self.api_base_url = Some(url.into());
        self
    }

    /// The application host base URL (projects, page settings, proxy), ending in `/api`. A
    /// trailing slash is removed.
    pub fn app_base_url(mut self, url: impl Into<String>) -> Self {
        self.app_base_url = Some(url.into());
        self
    }

    /// Work on drafts: every request carries `draft=1`.
    pub fn draft(mut self, draft: bool) -> Self {
        self.draft = Some(draft);
        self
    }

    /// The API key, given without the `Bearer` prefix. Sent as `Authorization: Bearer <key>`;
    /// it wins over a user session on every request it can serve.
    pub fn api_key(mut self, key: impl Into<Secret>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The static token of a resource, given without prefix and sent raw in `Authorization`
    /// for that resource's records, SQL and reload. For the built-in tools resource (users and
    /// teams), name it `__svc_app__`. A token given for one call wins over this one.
    pub fn resource_token(mut self, resource: impl Into<String>, token: impl Into<Secret>) -> Self {
        self.resource_tokens.insert(resource.into(), token.into());
        self
    }

    /// Sets both base URLs, the project and environment, the API key and every resource token
    /// of `info`, and trusts its CA ([`add_root_certificate_pem`](Self::add_root_certificate_pem)).
    /// Settings given after this one win.
    pub fn connection(mut self, info: svc_model::ConnectionInfo) -> Self {
        self = self
            .api_base_url(info.api_base_url)
            .app_base_url(info.app_base_url)
            .project(info.project)
            .environment(info.environment);
        if let Some(key) = info.api_key {
            self = self.api_key(key);
        }
        for (resource, token) in info.resource_tokens {
            self = self.resource_token(resource, token);
        }
        if let Some(pem) = info.tls_ca_pem {
            self = self.add_root_certificate_pem(pem);
        }
        self
    }

    /// The static token of the built-in tools resource (`__svc_app__`), used by users and teams
    /// (and its reload): the same as `resource_token("__svc_app__", token)`.
    pub fn tools_token(self, token: impl Into<Secret>) -> Self {
        self.resource_token(svc_model::users::TOOLS_RESOURCE, token)
    }

    /// Keeps the user session in `store` under the key `svc_auth`: tokens saved there by an
    /// earlier login are restored when the client is built, and clients sharing one store share
    /// the entry (the equivalent of one browser origin). Without it, each client keeps its
    /// session in memory, so one process can serve many users at once.
    pub fn token_store(mut self, store: impl svc_auth::TokenStore + 'static) -> Self {
        self.token_store = Some(Arc::new(store));
        self
    }

    /// Like [`token_store`](Self::token_store), with a store shared as an `Arc`.
    pub fn shared_token_store(mut self, store: Arc<dyn svc_auth::TokenStore>) -> Self {
        self.token_store = Some(store);
        self
    }

    /// A service token, sent as `Authorization: JWT <token>` where a session would be.
    pub fn service_token(mut self, token: impl Into<Secret>) -> Self {
        self.service_token = Some(token.into());
        self
    }

    /// A builder for a request-scoped client, from the headers of an incoming service request:
    /// `X-Svc-Project`, `X-Svc-Environment` and `X-Svc-Service-Token` are required (an error
    /// names the missing one); `X-Svc-API-Base-Url` and `X-Svc-Draft` are optional.
    ///
    /// As in the JavaScript client, `X-Svc-Draft` is not parsed as a boolean: any non-empty
    /// value, even `false`, turns draft on.
    ///
    /// ```
    /// let mut headers = http::HeaderMap::new();
    /// headers.insert("x-svc-project", "shop".parse().unwrap());
    /// headers.insert("x-svc-environment", "prod".parse().unwrap());
    /// headers.insert("x-svc-service-token", "a.b.c".parse().unwrap());
    /// headers.insert("x-svc-draft", "false".parse().unwrap());
    /// let client = svc_api::ClientBuilder::from_service_request(&headers).unwrap().build().unwrap();
    /// assert_eq!(client.project().unwrap().as_str(), "shop");
    /// assert!(client.draft()); // "false" is a present value
    /// ```
    pub fn from_service_request(headers: &http::HeaderMap) -> Result<Self> {
        let request = svc_auth::ServiceRequest::from_headers(headers)
            .map_err(|e| Error::invalid_because(e.to_string(), e))?;
        let mut builder = Client::builder()
            .project(request.project.clone())
            .environment(request.environment.clone())
            .service_token(request.service_token.clone());
        if let Some(url) = &request.api_base_url {
            builder = builder.api_base_url(url.clone());
        }
        if request.draft {
            builder = builder.draft(true);
        }
        Ok(builder)
    }

    /// Reads project, environment, draft and both base URLs from an explicit env map (keys
    /// `VITE_SVC_*` or `SVC_*`; see [`EnvConfig`]). Explicit settings still win.
    pub fn env<K, V, S>(mut self, env: &HashMap<K, V, S>) -> Self
    where
        K: std::borrow::Borrow<str> + std::hash::Hash + Eq,
        V: AsRef<str>,
        S: std::hash::BuildHasher,
    {
        self.env = EnvConfig::from_map(env);
        self
    }

    /// Uses settings already read into an [`EnvConfig`] (e.g. [`EnvConfig::from_process_env`]).
    pub fn env_config(mut self, env: EnvConfig) -> Self {
        self.env = env;
        self
    }

    /// The retry policy; default [`RetryPolicy::default`]. [`RetryPolicy::none`] turns retries off.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// A limit on a whole call, all attempts and waits included. Default: none (each attempt is
    /// still bounded by the transport's request timeout).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The default transport's connect timeout (default 10 s).
    ///
    /// Only for the default transport: with a custom one ([`transport`](Self::transport),
    /// [`shared_transport`](Self::shared_transport)), [`build`](Self::build) fails with
    /// [`Error::InvalidInput`] naming this setting. Set it on your transport instead (e.g.
    /// `HyperTransport::builder().connect_timeout(..)`).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// A limit on one attempt, from sending to the last byte of the answer (default 30 s with
    /// the default transport, none with a custom one). An attempt that runs out fails with a
    /// [`Timeout`](svc_transport::TransportErrorKind::Timeout) transport error that may have
    /// reached the server, so it is retried only for idempotent requests.
    ///
    /// The default transport enforces it (its `request_timeout`). With a custom transport
    /// ([`transport`](Self::transport), [`shared_transport`](Self::shared_transport)) the
    /// client enforces it around each call of [`Transport::send`], with its
    /// [`sleep`](Self::sleep) timer; any timeout of your transport's own still applies.
    pub fn attempt_timeout(mut self, timeout: Duration) -> Self {
        self.attempt_timeout = Some(timeout);
        self
    }

    /// How long the default transport keeps an idle keep-alive connection for reuse (default
    /// 20 s). Keep it below the server's own idle timeout: a request sent on a connection that
    /// the server is closing at that moment fails, and a create or an update cannot be retried
    /// (it may have reached the server).
    ///
    /// Only for the default transport: with a custom one ([`transport`](Self::transport),
    /// [`shared_transport`](Self::shared_transport)), [`build`](Self::build) fails with
    /// [`Error::InvalidInput`] naming this setting. Set it on your transport instead (e.g.
    /// `HyperTransport::builder().pool_idle_timeout(..)`).
    pub fn pool_idle_timeout(mut self, timeout: Duration) -> Self {
        self.pool_idle_timeout = Some(timeout);
        self
    }

    /// Trusts one more root certificate (PEM), e.g. the emulator's self-signed certificate or a
    /// private CA.
    ///
    /// Only for the default transport: with a custom one ([`transport`](Self::transport),
    /// [`shared_transport`](Self::shared_transport)), [`build`](Self::build) fails with
    /// [`Error::InvalidInput`] naming this setting. Trust the certificate in your transport
    /// instead (e.g. `HyperTransport::builder().add_root_certificate_pem(..)`).
    pub fn add_root_certificate_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.root_certificates.push(pem.into());
        self
    }

    /// Sends every request through the HTTP proxy at `url` (`http://[user:password@]host:port`),
    /// in place of the environment's `HTTPS_PROXY`, `HTTP_PROXY` and `ALL_PROXY`, which the
    /// default transport otherwise reads (with `NO_PROXY`) as curl does. Loopback addresses are
    /// never proxied. See `HyperTransportBuilder::proxy`.
    ///
    /// Only for the default transport, as [`add_root_certificate_pem`](Self::add_root_certificate_pem).
    pub fn proxy(mut self, url: impl Into<String>) -> Self {
        self.proxy = Some(url.into());
        self
    }

    /// Hosts reached without the proxy, in place of the environment's `NO_PROXY`
    /// (comma-separated domains, IP addresses or networks, `*` for all).
    ///
    /// Only for the default transport, as [`add_root_certificate_pem`](Self::add_root_certificate_pem).
    pub fn no_proxy(mut self, hosts: impl Into<String>) -> Self {
        self.no_proxy = Some(hosts.into());
        self
    }

    /// Trusts the platform's root certificates too (the system store), beside the built-in
    /// Mozilla roots: for networks whose TLS is inspected with a company CA installed on the
    /// machine. Feature `native-roots`.
    ///
    /// Only for the default transport, as [`add_root_certificate_pem`](Self::add_root_certificate_pem).
    #[cfg(feature = "native-roots")]
    #[cfg_attr(docsrs, doc(cfg(feature = "native-roots")))]
    pub fn tls_native_roots(mut self, enabled: bool) -> Self {
        self.native_roots = enabled;
        self
    }

    /// Sends requests through your own [`Transport`] instead of the default one.
    ///
    /// The settings of the default transport ([`connect_timeout`](Self::connect_timeout),
    /// [`pool_idle_timeout`](Self::pool_idle_timeout),
    /// [`add_root_certificate_pem`](Self::add_root_certificate_pem)) cannot reach your
    /// transport: [`build`](Self::build) refuses them, so that none is silently ignored.
    /// Configure your transport with them instead. [`attempt_timeout`](Self::attempt_timeout)
    /// still applies: the client enforces it around each attempt.
    ///
    /// ```
    /// use bytes::Bytes;
    /// use std::time::Duration;
    /// use svc_api::transport::TransportError;
    ///
    /// let offline = |_request: http::Request<Bytes>| async {
    ///     Ok::<_, TransportError>(http::Response::new(Bytes::from_static(b"[]")))
    /// };
    /// let refused = svc_api::Client::builder()
    ///     .connect_timeout(Duration::from_secs(2))
    ///     .transport(offline)
    ///     .build();
    /// assert!(refused.unwrap_err().to_string().contains("connect_timeout"));
    /// let honoured = svc_api::Client::builder()
    ///     .attempt_timeout(Duration::from_secs(2))
    ///     .transport(offline)
    ///     .build();
    /// assert!(honoured.is_ok());
    /// ```
    pub fn transport(mut self, transport: impl Transport) -> Self {
        self.transport = Some(Arc::new(transport));
        self
    }

    /// Sends requests through a shared [`Transport`]. The default transport's settings are
    /// refused or honoured as with [`transport`](Self::transport).
    pub fn shared_transport(mut self, transport: Arc<dyn Transport>) -> Self {
        self.transport = Some(transport);
        self
    }

    /// The timer used between retries and for [`timeout`](Self::timeout); default tokio's.
    pub fn sleep(mut self, sleep: impl Sleep) -> Self {
        self.sleep = Some(Arc::new(sleep));
        self
    }

    /// Allows a plain `http://` base URL to a host that is not loopback (default `false`).
    ///
    /// Every request carries a credential (API key, resource token, session or service token)
    /// or a password, so by default [`build`](Self::build) refuses a base URL that would send
    /// them across a network unencrypted. `http://` to loopback (`127.0.0.0/8`, `::1`,
    /// `localhost`, `*.localhost`), e.g. the local emulator, is always allowed, and so are
    /// `*.invalid` hosts, which never resolve (RFC 6761). Turn this on only for a network you
    /// trust, e.g. a TLS-terminating sidecar reached over plain HTTP.
    ///
    /// ```
    /// let refused = svc_api::Client::builder().api_base_url("http://10.0.0.5:8787").build();
    /// assert!(refused.unwrap_err().to_string().contains("allow_insecure_http"));
    /// let client = svc_api::Client::builder()
    ///     .api_base_url("http://10.0.0.5:8787")
    ///     .allow_insecure_http(true)
    ///     .build()
    ///     .unwrap();
    /// # drop(client);
    /// ```
    pub fn allow_insecure_http(mut self, allow: bool) -> Self {
        self.allow_insecure_http = allow;
        self
    }

    /// Builds the client. Fails only on settings that can never work or are unsafe: a base URL
    /// that is not `http(s)://`, plain `http://` to a host that is not loopback (unless
    /// [`allow_insecure_http`](Self::allow_insecure_http)), a certificate that does not parse,
    /// a setting of the default transport given with a custom transport (see
    /// [`transport`](Self::transport)), no transport at all.
    pub fn build(self) -> Result<Client> {
        let session = match &self.token_store {
            Some(store) => svc_auth::Session::restore(Arc::clone(store)).map_err(Error::Auth)?,
            None => svc_auth::Session::new(),
        };
        let api_base_url = base_url(
            "api_base_url",
            self.api_base_url.or(self.env.api_base_url.clone()),
            DEFAULT_API_BASE_URL,
        )?;
        let app_base_url = base_url(
            "app_base_url",
            self.app_base_url.or(self.env.app_base_url.clone()),
            DEFAULT_APP_BASE_URL,
        )?;
        if !self.allow_insecure_http {
            refuse_insecure("api_base_url", &api_base_url)?;
            refuse_insecure("app_base_url", &app_base_url)?;
        }
        let (transport, attempt_timeout) = match self.transport {
            Some(t) => {
                refuse_default_transport_settings(DefaultTransportSettings {
                    connect_timeout: self.connect_timeout.is_some(),
                    pool_idle_timeout: self.pool_idle_timeout.is_some(),
                    root_certificates: !self.root_certificates.is_empty(),
                    proxy: self.proxy.is_some(),
                    no_proxy: self.no_proxy.is_some(),
                    native_roots: self.native_roots,
                })?;
                // The client bounds each attempt itself: a custom transport has no setting
                // it could pass this to.
                (t, self.attempt_timeout)
            }
            #[cfg(feature = "default-transport")]
            None => {
                let transport = default_transport(
                    TransportSettings {
                        connect_timeout: self.connect_timeout,
                        attempt_timeout: self.attempt_timeout,
                        pool_idle_timeout: self.pool_idle_timeout,
                        proxy: self.proxy,
                        no_proxy: self.no_proxy,
                        native_roots: self.native_roots,
                    },
                    &self.root_certificates,
                )?;
                (transport, None)
            }
            #[cfg(not(feature = "default-transport"))]
            None => {
                return Err(Error::invalid(
                    "no transport: give ClientBuilder::transport one, or enable the `default-transport` feature",
                ));
            }
        };
        let sleep = self.sleep.unwrap_or_else(|| Arc::new(TokioSleep));
        // Without an operation group nothing is ever sent: the transport, the timer and the
        // session were still made (so that `build` fails the same way in every build), and are
        // dropped here.
        #[cfg(not(feature = "_sends"))]
        let _ = (transport, sleep, attempt_timeout);
        #[cfg(not(feature = "_session"))]
        let _ = session;
        let project = self.project.or(self.env.project);
        let environment = self
            .environment
            .or(self.env.environment)
            .unwrap_or_else(|| DEFAULT_ENVIRONMENT.to_owned());
        #[cfg(feature = "_sends")]
        let prepared = crate::prepared::Prepared::new(&crate::prepared::Settings {
            api_base_url: &api_base_url,
            app_base_url: &app_base_url,
            project: project.as_deref(),
            environment: &environment,
            api_key: self.api_key.as_ref(),
            resource_tokens: &self.resource_tokens,
        });
        Ok(Client {
            inner: Arc::new(Inner {
                #[cfg(feature = "_sends")]
                sender: Sender {
                    transport,
                    sleep,
                    attempt_timeout,
                    user_agent: http::HeaderValue::from_static(concat!(
                        "svc-rs/",
                        env!("CARGO_PKG_VERSION")
                    )),
                    prepared,
                },
                project,
                environment,
                api_base_url,
                app_base_url,
                draft: self.draft.or(self.env.draft).unwrap_or(false),
                api_key: self.api_key,
                resource_tokens: self.resource_tokens,
                #[cfg(feature = "_session")]
                session,
                service_token: std::sync::RwLock::new(self.service_token),
                retry: self.retry.unwrap_or_default(),
                timeout: self.timeout,
            }),
        })
    }
}

fn base_url(name: &str, given: Option<String>, default: &str) -> Result<String> {
    let url = given.unwrap_or_else(|| default.to_owned());
    let trimmed = trim_base_url(url.trim()).to_owned();
    let ok = (trimmed.starts_with("http://") || trimmed.starts_with("https://"))
        && trimmed.parse::<http::Uri>().is_ok()
        && !trimmed.contains(['?', '#']);
    if ok {
        Ok(trimmed)
    } else {
        Err(Error::invalid(format!(
            "{name} {url:?} is not a base URL: expected http://host[:port][/path] or https://..., without query or fragment"
        )))
    }
}

/// Fails when `url` is plain `http://` to a host that is not loopback (nor `*.invalid`).
fn refuse_insecure(name: &str, url: &str) -> Result<()> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Ok(());
    };
    let authority = rest.split('/').next().unwrap_or("");
    let host = authority
        .parse::<http::uri::Authority>()
        .map(|a| a.host().to_owned())
        .unwrap_or_default();
    if is_local_host(&host) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "{name} {url:?} is plain http:// to a host that is not loopback: the API key, tokens and passwords would cross the network unencrypted; use https://, or opt in with ClientBuilder::allow_insecure_http(true) on a network you trust"
    )))
}

/// Loopback addresses and names (`127.0.0.0/8`, `::1`, `localhost`, `*.localhost`), and
/// `*.invalid` names, which never resolve.
fn is_local_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        return match ip {
            std::net::IpAddr::V4(v4) => v4.is_loopback(),
            std::net::IpAddr::V6(v6) => {
                v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
            }
        };
    }
    let is_or_under = |name: &str| host == name || host.ends_with(&format!(".{name}"));
    !host.is_empty() && (is_or_under("localhost") || is_or_under("invalid"))
}

/// Which settings that only the default transport can take were given to the builder.
struct DefaultTransportSettings {
    connect_timeout: bool,
    pool_idle_timeout: bool,
    root_certificates: bool,
    proxy: bool,
    no_proxy: bool,
    native_roots: bool,
}

/// Fails when a custom transport comes with settings that only the default transport takes:
/// they would be ignored without a word. The message names each one and where it belongs.
fn refuse_default_transport_settings(given: DefaultTransportSettings) -> Result<()> {
    let refused: Vec<String> = [
        (given.connect_timeout, "connect_timeout"),
        (given.pool_idle_timeout, "pool_idle_timeout"),
        (given.root_certificates, "add_root_certificate_pem"),
        (given.proxy, "proxy"),
        (given.no_proxy, "no_proxy"),
        (given.native_roots, "tls_native_roots"),
    ]
    .into_iter()
    .filter(|(set, _)| *set)
    .map(|(_, setting)| {
        // `HyperTransport::builder()` has a method of the same name.
        format!(
            "ClientBuilder::{setting} configures only the default transport, and a custom transport \
             was given (ClientBuilder::transport or shared_transport), so it would be ignored: \
             configure your transport with it instead (e.g. HyperTransport::builder().{setting}(..)) \
             and remove it from the ClientBuilder"
        )
    })
    .collect();
    if refused.is_empty() {
        Ok(())
    } else {
        Err(Error::invalid(refused.join("; ")))
    }
}

/// The default transport's settings given to the builder.
#[cfg(feature = "default-transport")]
struct TransportSettings {
    connect_timeout: Option<Duration>,
    attempt_timeout: Option<Duration>,
    pool_idle_timeout: Option<Duration>,
    proxy: Option<String>,
    no_proxy: Option<String>,
    native_roots: bool,
}

#[cfg(feature = "default-transport")]
fn default_transport(settings: TransportSettings, roots: &[Vec<u8>]) -> Result<Arc<dyn Transport>> {
    let mut builder = svc_transport::HyperTransport::builder();
    if let Some(t) = settings.connect_timeout {
        builder = builder.connect_timeout(t);
    }
    if let Some(t) = settings.attempt_timeout {
        builder = builder.request_timeout(t);
    }
    if let Some(t) = settings.pool_idle_timeout {
        builder = builder.pool_idle_timeout(t);
    }
    if let Some(url) = settings.proxy {
        builder = builder.proxy(url);
    }
    if let Some(hosts) = settings.no_proxy {
        builder = builder.no_proxy(hosts);
    }
    #[cfg(feature = "native-roots")]
    {
        builder = builder.tls_native_roots(settings.native_roots);
    }
    #[cfg(not(feature = "native-roots"))]
    let _ = settings.native_roots;
    for pem in roots {
        builder = builder
            .add_root_certificate_pem(pem)
            .map_err(|e| Error::invalid_because("a root certificate could not be read", e))?;
    }
    let transport = builder.build().map_err(|e| {
        Error::invalid_because(format!("the default transport could not be built: {e}"), e)
    })?;
    Ok(Arc::new(transport))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync_static<T: Clone + Send + Sync + 'static>() {}

    #[test]
    fn client_is_clone_send_sync_static() {
        assert_send_sync_static::<Client>();
    }

    fn never() -> impl Transport {
        |_req: http::Request<bytes::Bytes>| async {
            Err::<http::Response<bytes::Bytes>, _>(svc_transport::TransportError::message(
                svc_transport::TransportErrorKind::Other,
                "no calls expected",
            ))
        }
    }

    #[test]
    fn proxy_settings_go_to_the_default_transport_only() {
        let refused = Client::builder()
            .proxy("http://proxy.example:3128")
            .no_proxy("internal.example")
            .transport(never())
            .build()
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("ClientBuilder::proxy") && refused.contains("ClientBuilder::no_proxy"),
            "{refused}"
        );
        let invalid = Client::builder()
            .proxy("socks5://proxy.example:1080")
            .build()
            .unwrap_err()
            .to_string();
        assert!(invalid.contains("proxy URL"), "{invalid}");
        assert!(
            Client::builder()
                .proxy("http://proxy.example:3128")
                .no_proxy("*")
                .build()
                .is_ok()
        );
    }

    #[test]
    fn precedence_explicit_env_default() {
        let env = HashMap::from([
            ("SVC_PROJECT", "from-env"),
            ("VITE_SVC_API_BASE_URL", "http://env.local/"),
            ("SVC_DRAFT", "1"),
        ]);
        let c = Client::builder()
            .env(&env)
            .allow_insecure_http(true)
            .transport(never())
            .build()
            .unwrap();
        assert_eq!(c.project().unwrap().as_str(), "from-env");
        assert_eq!(c.api_base_url(), "http://env.local");
        assert_eq!(c.app_base_url(), DEFAULT_APP_BASE_URL);
        assert_eq!(c.environment().unwrap().as_str(), "prod");
        assert!(c.draft());

        let c = Client::builder()
            .env(&env)
            .project("explicit")
            .draft(false)
            .allow_insecure_http(true)
            .transport(never())
            .build()
            .unwrap();
        assert_eq!(c.project().unwrap().as_str(), "explicit");
        assert!(!c.draft());
    }

    #[test]
    fn missing_project_is_a_clear_error_at_use() {
        let c = Client::builder().transport(never()).build().unwrap();
        let err = c.project().unwrap_err();
        assert!(err.to_string().contains("no project is set"), "{err}");
    }

    #[test]
    fn bad_base_urls_are_refused() {
        for bad in ["ftp://x", "localhost:8080", "http://h/?q=1", ""] {
            let r = Client::builder()
                .api_base_url(bad)
                .transport(never())
                .build();
            assert!(r.is_err(), "{bad}");
        }
    }

    #[test]
    fn plain_http_is_refused_off_loopback_unless_allowed() {
        for local in [
            "http://127.0.0.1:8787",
            "http://127.8.9.10/api",
            "http://[::1]:80",
            "http://[::ffff:127.0.0.1]:80",
            "http://localhost:3000/api",
            "http://LOCALHOST./",
            "http://emu.localhost:8080",
            "http://bench.invalid",
            "https://10.0.0.5",
            "https://api.example.com",
        ] {
            let built = Client::builder()
                .api_base_url(local)
                .app_base_url(local)
                .api_key("svc_key_x")
                .transport(never())
                .build();
            assert!(built.is_ok(), "{local}: {:?}", built.err());
        }
        for remote in [
            "http://10.0.0.5:8787",
            "http://api.example.com",
            "http://localhost.example.com",
            "http://[2001:db8::1]:80",
            "http://0.0.0.0:8787",
            "http://user@example.com",
            "http://128.0.0.1",
        ] {
            for (api, app) in [(remote, "https://ok.test/api"), ("https://ok.test", remote)] {
                let err = Client::builder()
                    .api_base_url(api)
                    .app_base_url(app)
                    .transport(never())
                    .build()
                    .unwrap_err();
                let text = err.to_string();
                assert!(
                    text.contains(remote)
                        && text.contains("allow_insecure_http(true)")
                        && text.contains("not loopback"),
                    "{text}"
                );
                assert_eq!(err.sent(), crate::Sent::No);
            }
            let allowed = Client::builder()
                .api_base_url(remote)
                .app_base_url(remote)
                .allow_insecure_http(true)
                .transport(never())
                .build();
            assert!(allowed.is_ok(), "{remote}");
        }
        // The env map is checked the same way.
        let env = HashMap::from([("SVC_API_BASE_URL", "http://10.1.2.3")]);
        assert!(
            Client::builder()
                .env(&env)
                .transport(never())
                .build()
                .is_err()
        );
    }

    #[test]
    fn debug_never_shows_the_key() {
        let c = Client::builder()
            .api_key("svc_key_supersecret")
            .transport(never())
            .build()
            .unwrap();
        let dbg = format!("{c:?}");
        assert!(!dbg.contains("supersecret"), "{dbg}");
    }
}
