//! Shared helpers of the end-to-end tests: start an emulator on loopback and build clients
//! for it. Every emulator binds `127.0.0.1:0` and stops when dropped.

use svc_api::Client;
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig};

/// An emulator with its default demo project.
pub async fn demo() -> Emulator {
    Emulator::start(EmulatorConfig::default())
        .await
        .expect("the emulator starts")
}

/// An emulator with two projects, `alpha` (environments `prod`, `staging`) and `beta`, with
/// fixed API keys `key_alpha` and `key_beta`.
pub async fn two_projects(tls: bool) -> Emulator {
    let config = ProjectsConfig::new(vec![
        ProjectConfig::new("alpha")
            .environments(["prod", "staging"])
            .api_key("key_alpha"),
        ProjectConfig::new("beta")
            .environments(["prod"])
            .api_key("key_beta"),
    ]);
    Emulator::start(EmulatorConfig::default().projects(config).tls(tls))
        .await
        .expect("the emulator starts")
}

/// A client for the emulator's default project, with its API key and resource tokens, trusting
/// its certificate when TLS is on.
pub fn client(emulator: &Emulator) -> Client {
    builder(emulator).build().expect("the client builds")
}

/// The builder behind [`client`], to adjust before building: the SDK's own way from an
/// emulator to its client (`Client::builder_for`), so every end-to-end test goes through it.
pub fn builder(emulator: &Emulator) -> svc_api::ClientBuilder {
    Client::builder_for(emulator)
}

/// Sends a raw request through the default transport (for what the SDK would refuse to send)
/// and returns status and body.
pub async fn raw(
    emulator: &Emulator,
    method: &str,
    url: &str,
    authorization: Option<&str>,
    body: &str,
) -> (u16, serde_json::Value) {
    use svc_transport::Transport;
    let mut transport = svc_transport::HyperTransport::builder();
    if let Some(pem) = emulator.tls_ca_pem() {
        transport = transport.add_root_certificate_pem(pem).expect("pem");
    }
    let transport = transport.build().expect("transport");
    let mut request = http::Request::builder()
        .method(method)
        .uri(url)
        .header("content-type", "application/json");
    if let Some(auth) = authorization {
        request = request.header("authorization", auth);
    }
    let request = request
        .body(bytes::Bytes::from(body.to_owned()))
        .expect("request");
    let response = transport.send(request).await.expect("an answer");
    let status = response.status().as_u16();
    let json = serde_json::from_slice(response.body()).unwrap_or(serde_json::Value::Null);
    (status, json)
}

/// A fresh directory under the system's temporary directory, removed (with everything in it)
/// when dropped. Stop any emulator using it first.
#[derive(Debug)]
pub struct TempDir(std::path::PathBuf);

impl TempDir {
    /// Creates `svc-tests-<tag>-<pid>-<n>` in the temporary directory.
    pub fn new(tag: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "svc-tests-{tag}-{}-{n}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Self(dir)
    }

    /// A path inside the directory.
    pub fn join(&self, name: &str) -> std::path::PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The guides in `docs/`: their Rust examples compile as doctests of this crate.
#[cfg(doctest)]
pub mod guides {
    #[doc = include_str!("../../README.md")]
    pub struct Readme;
    #[doc = include_str!("../../docs/quickstart.md")]
    pub struct Quickstart;
    #[doc = include_str!("../../docs/custom-transport.md")]
    pub struct CustomTransport;
    #[doc = include_str!("../../docs/pagination.md")]
    pub struct Pagination;
    #[doc = include_str!("../../docs/auth.md")]
    pub struct Auth;
    #[doc = include_str!("../../docs/sql.md")]
    pub struct Sql;
    #[doc = include_str!("../../docs/emulator.md")]
    pub struct Emulator;
    #[doc = include_str!("../../docs/testing.md")]
    pub struct Testing;
    #[doc = include_str!("../../docs/actions.md")]
    pub struct Actions;
    #[doc = include_str!("../../docs/compatibility.md")]
    pub struct Compatibility;
    #[doc = include_str!("../../docs/proxy.md")]
    pub struct Proxy;
    #[doc = include_str!("../../docs/postgres.md")]
    pub struct Postgres;
    #[doc = include_str!("../../docs/tracing.md")]
    pub struct Tracing;
    #[doc = include_str!("../../docs/ui.md")]
    pub struct Ui;
}

/// A timer (`ClientBuilder::sleep`) that does not wait, and records what it was asked to wait:
/// retries and `Retry-After` are checked by the waits asked for, never by the clock.
#[derive(Debug, Clone, Default)]
pub struct Recorded(std::sync::Arc<std::sync::Mutex<Vec<std::time::Duration>>>);

impl Recorded {
    /// Every wait asked for so far, in order.
    pub fn waits(&self) -> Vec<std::time::Duration> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl svc_api::Sleep for Recorded {
    fn sleep(&self, duration: std::time::Duration) -> svc_api::transport::BoxFuture<'static, ()> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(duration);
        Box::pin(async {})
    }
}

/// The Rust examples of docs/actions.md, compiled as doctests here, where the SDK and the
/// emulator are both at hand: the guide cannot drift from either.
#[cfg(doctest)]
#[doc = include_str!("../../docs/actions.md")]
pub struct ActionsGuide;
