//! A running emulator: its URLs and credentials, and how to stop it.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use svc_model::{EnvironmentName, ProjectName};

use crate::runtime::server::ServerTask;
use crate::runtime::tls::CaFile;
use svc_emulator_http::AppState;
use svc_emulator_http::journal::{
    self, RecordedRequest, RequestMatcher, RequestSource, Scope, Times, UnmetExpectation,
};
use svc_emulator_http::stubs::{StubBuilder, StubId, StubInfo};
use svc_emulator_state::snapshot::{SnapshotError, SnapshotInfo};
use svc_engine::types::ModelInfo;

/// A running emulator; [`start`](Self::start) runs one. Dropping it stops the server (the
/// listener closes, open connections finish their request and close);
/// [`shutdown`](Self::shutdown) also waits for that.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use svc_emulator::{Emulator, EmulatorConfig};
///
/// let emulator = Emulator::start(EmulatorConfig::default()).await?;
/// assert_eq!(emulator.app_base_url(), format!("{}/api", emulator.api_base_url()));
/// assert_eq!(emulator.project().as_str(), "demo");
/// emulator.shutdown().await;
/// # Ok(())
/// # }
/// ```
pub struct Emulator {
    pub(super) local_addr: SocketAddr,
    pub(super) info: StartupInfo,
    pub(super) project: ProjectName,
    pub(super) environment: EnvironmentName,
    pub(super) ca_file: Option<CaFile>,
    pub(super) server: ServerTask,
    pub(super) warnings: Vec<String>,
    /// What the routes share: the projects, their resources and snapshots.
    pub(super) state: AppState,
    /// Where [`stop`](Self::stop) exports to.
    pub(super) export_on_exit: Option<std::path::PathBuf>,
    /// What the import wrote.
    pub(super) imported: Vec<String>,
}

/// An emulator's [`Emulator::connection`]: what lets `svc_api::Client::builder_for(&emulator)`
/// take the emulator itself.
impl From<&Emulator> for svc_model::ConnectionInfo {
    fn from(emulator: &Emulator) -> Self {
        emulator.connection()
    }
}

/// What a started emulator reports: the one JSON line the binary prints on stdout when ready.
///
/// It carries credentials (that is its purpose), so its `Debug` output redacts them; serialize it
/// only to hand it to a client.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let emulator = svc_emulator::Emulator::start(Default::default()).await?;
/// let line = serde_json::to_string(emulator.startup_info())?;
/// let back: svc_emulator::StartupInfo = serde_json::from_str(&line)?;
/// assert_eq!(back.api_key, emulator.api_key());
/// assert!(!format!("{back:?}").contains(emulator.api_key()));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StartupInfo {
    /// The data host's base URL, e.g. `http://127.0.0.1:PORT`.
    pub api_base_url: String,
    /// The application host's base URL: `{api_base_url}/api`.
    pub app_base_url: String,
    /// The default project.
    pub project: String,
    /// The default project's default environment.
    pub environment: String,
    /// An API key of the default project.
    pub api_key: String,
    /// Path of the PEM file of the CA to trust, when TLS is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_ca_pem: Option<PathBuf>,
    /// Resource name -> static token of every resource of the default project, the built-in
    /// tools resource `__svc_app__` (users and teams) included.
    #[serde(default)]
    pub resource_tokens: BTreeMap<String, String>,
    /// The web page's address with this run's sign-in token
    /// (`{api_base_url}/_emulator/ui/?token=...`): opening it in a browser signs in (a session
    /// cookie) and shows the emulator's projects, records, requests and state (docs/ui.md).
    #[serde(default)]
    pub ui_url: String,
}

impl Emulator {
    /// The data host's base URL (records, SQL, users, teams), e.g. `http://127.0.0.1:PORT`, or
    /// `https://` with TLS. No trailing slash.
    pub fn api_base_url(&self) -> &str {
        &self.info.api_base_url
    }

    /// The application host's base URL (projects, pages): the same listener under `/api`.
    pub fn app_base_url(&self) -> &str {
        &self.info.app_base_url
    }

    /// The web page's address, with this run's sign-in token: see [`StartupInfo::ui_url`].
    /// It is a credential of the page: show it to the person at the machine only.
    pub fn ui_url(&self) -> &str {
        &self.info.ui_url
    }

    /// The default project (the first one configured; `demo` without a config).
    pub fn project(&self) -> &ProjectName {
        &self.project
    }

    /// The default project's first environment (`prod` for the demo project).
    pub fn environment(&self) -> &EnvironmentName {
        &self.environment
    }

    /// An API key of the default project, for `Authorization: Bearer <key>`.
    pub fn api_key(&self) -> &str {
        &self.info.api_key
    }

    /// Resource name -> static token of the default project's served resources, the built-in
    /// tools resource `__svc_app__` included.
    pub fn resource_tokens(&self) -> &BTreeMap<String, String> {
        &self.info.resource_tokens
    }

    /// The default project's built-in tools token: the static token of `__svc_app__`, for
    /// users, teams and that resource's reload.
    pub fn tools_token(&self) -> &str {
        self.info
            .resource_tokens
            .get(svc_model::users::TOOLS_RESOURCE)
            .map(String::as_str)
            .unwrap_or_default()
    }

    /// The PEM file of the CA that signed the server certificate, when TLS is on.
    pub fn tls_ca_pem_path(&self) -> Option<&Path> {
        self.ca_file.as_ref().map(CaFile::path)
    }

    /// The PEM text of that CA, when TLS is on: add it to a client's trust roots.
    pub fn tls_ca_pem(&self) -> Option<&[u8]> {
        self.ca_file.as_ref().map(CaFile::pem)
    }

    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Everything a client of this emulator's default project needs: both base URLs, the
    /// project and environment, the API key, every resource token (the tools resource's
    /// included) and the CA to trust when TLS is on. The SDK takes it whole, and `&Emulator`
    /// converts into it, so a test's client is one line:
    /// `svc_api::Client::builder_for(&emulator).build()?`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let emulator = svc_emulator::Emulator::start(Default::default()).await?;
    /// let info = emulator.connection();
    /// assert_eq!(info.api_base_url, emulator.api_base_url());
    /// assert_eq!(info.resource_tokens["shop"], emulator.resource_tokens()["shop"]);
    /// assert!(!format!("{info:?}").contains(emulator.api_key()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn connection(&self) -> svc_model::ConnectionInfo {
        let mut info = svc_model::ConnectionInfo::new(self.api_base_url(), self.project.as_str())
            .app_base_url(self.app_base_url())
            .environment(self.environment.as_str())
            .api_key(self.api_key());
        for (resource, token) in self.resource_tokens() {
            info = info.resource_token(resource, token);
        }
        if let Some(pem) = self.tls_ca_pem() {
            info = info.tls_ca_pem(pem);
        }
        info
    }

    /// In fault mode, how many requests met each fault so far; `None` without faults.
    pub fn fault_counts(&self) -> Option<crate::FaultCounts> {
        self.server.fault_counts()
    }

    /// What the start found worth telling the person who runs the emulator, e.g. that other
    /// users can write in the data directory. The `svc-emulator` binary prints each on stderr;
    /// empty when all is well.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Every request of the clients in the request journal, oldest first: what the emulator
    /// answered, of every project (and of none: a path that names no served project, without
    /// a valid credential), the emulator-only `/_emulator/...` routes and the web page's own
    /// requests left out (those are in [`requests_matching`](Self::requests_matching) with
    /// [`RequestMatcher::any_source`]). Credentials and secret
    /// tokens are `***`. The journal keeps the newest
    /// [`journal_capacity`](crate::EmulatorConfig::journal_capacity) requests (10,000 by
    /// default), and their bodies with
    /// [`journal_bodies`](crate::EmulatorConfig::journal_bodies). A request is in it once its
    /// client can have read the answer.
    ///
    /// See [`RecordedRequest`] for an example, and [`assert_received`](Self::assert_received)
    /// to assert on it.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        let mut requests = self.state.journal().records(Scope::All, true);
        requests.retain(|r| r.source == RequestSource::Client);
        requests
    }

    /// The requests of the journal that `matcher` matches, oldest first.
    pub fn requests_matching(&self, matcher: impl Borrow<RequestMatcher>) -> Vec<RecordedRequest> {
        let matcher = matcher.borrow();
        let journal = self.state.journal();
        let mut requests = journal.records_for(Scope::All, true, matcher);
        requests.retain(|r| matcher.matches(r));
        requests
    }

    /// How many requests the journal dropped (the oldest, past its capacity) since it was
    /// last cleared.
    pub fn dropped_requests(&self) -> u64 {
        self.state.journal().dropped(Scope::All)
    }

    /// Empties the request journal, of every project, and resets the dropped count.
    pub fn clear_requests(&self) {
        self.state.journal().clear(Scope::All);
    }

    /// Checks that the journal holds `times` requests matching `matcher`: the matching
    /// requests, or an [`UnmetExpectation`] that lists what was received instead (near misses
    /// first), for a test that returns a `Result`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use svc_emulator::{Emulator, EmulatorConfig, RequestMatcher, Times};
    ///
    /// let emulator = Emulator::start(EmulatorConfig::default()).await?;
    /// // ... the code under test runs here, and makes no request ...
    /// let unmet = emulator
    ///     .verify(RequestMatcher::post().model("orders"), Times::exactly(1))
    ///     .unwrap_err();
    /// assert!(unmet.matched().is_empty());
    /// assert!(unmet.to_string().starts_with(
    ///     "expected exactly 1 request matching POST model orders; received 0 (of 0 recorded)"
    /// ));
    /// assert!(emulator.verify(RequestMatcher::any(), 0).is_ok());
    /// # Ok(())
    /// # }
    /// ```
    pub fn verify(
        &self,
        matcher: impl Borrow<RequestMatcher>,
        times: impl Into<Times>,
    ) -> Result<Vec<RecordedRequest>, UnmetExpectation> {
        let matcher = matcher.borrow();
        let journal = self.state.journal();
        // Every source: the matcher says which it counts (the clients' unless told).
        let recorded = journal.records_for(Scope::All, true, matcher);
        journal::verify(
            matcher,
            times.into(),
            recorded,
            self.dropped_requests(),
            journal.keeps_bodies(),
        )
    }

    /// Asserts that the journal holds at least one request matching `matcher`, and returns the
    /// matching requests.
    ///
    /// # Panics
    ///
    /// When none matches, with the [`UnmetExpectation`]'s report: the near misses, best first.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use svc_emulator::{Emulator, EmulatorConfig, RequestMatcher};
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// let emulator = Emulator::start(EmulatorConfig::default()).await?;
    /// // The code under test lists orders; any HTTP client will do.
    /// let mut stream = tokio::net::TcpStream::connect(emulator.local_addr()).await?;
    /// let request = format!(
    ///     "GET /projects/demo/prod/shop/models/orders?status=paid HTTP/1.1\r\nHost: x\r\n\
    ///      Authorization: Bearer {}\r\nConnection: close\r\n\r\n",
    ///     emulator.api_key()
    /// );
    /// stream.write_all(request.as_bytes()).await?;
    /// stream.read_to_end(&mut Vec::new()).await?;
    ///
    /// let listed = emulator.assert_received(
    ///     RequestMatcher::get()
    ///         .resource("shop")
    ///         .model("orders")
    ///         .query_param("status", "paid")
    ///         .status(200),
    /// );
    /// assert_eq!(listed.len(), 1);
    /// emulator.assert_not_received(RequestMatcher::delete());
    /// # Ok(())
    /// # }
    /// ```
    #[track_caller]
    pub fn assert_received(&self, matcher: impl Borrow<RequestMatcher>) -> Vec<RecordedRequest> {
        self.assert_received_times(matcher, Times::at_least(1))
    }

    /// Asserts that the journal holds `times` requests matching `matcher` (a number is
    /// exactly that many; see [`Times`]), and returns them.
    ///
    /// # Panics
    ///
    /// When it does not, with the [`UnmetExpectation`]'s report: the near misses (too few) or
    /// the matches (too many).
    #[track_caller]
    pub fn assert_received_times(
        &self,
        matcher: impl Borrow<RequestMatcher>,
        times: impl Into<Times>,
    ) -> Vec<RecordedRequest> {
        match self.verify(matcher, times) {
            Ok(matched) => matched,
            Err(unmet) => panic!("{unmet}"),
        }
    }

    /// Asserts that the journal holds no request matching `matcher`.
    ///
    /// # Panics
    ///
    /// When one does, listing the matches.
    #[track_caller]
    pub fn assert_not_received(&self, matcher: impl Borrow<RequestMatcher>) {
        self.assert_received_times(matcher, Times::exactly(0));
    }

    /// Everything above as the startup JSON line's struct.
    pub fn startup_info(&self) -> &StartupInfo {
        &self.info
    }

    /// Puts every project back in its state at start: the rows of its resources that resets
    /// put back (the built-in users and teams, every database the emulator keeps itself, and
    /// those opted in with [`ResourceConfig::reset`](crate::ResourceConfig::reset)), its page
    /// settings and accounts; every user session ends. What each project's reset did, in
    /// config order. The same as `POST /_emulator/projects/{project}/reset` for each project.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let emulator = svc_emulator::Emulator::start(Default::default()).await?;
    /// // ... a test changes records, pages, users ...
    /// let done = emulator.reset().await?;
    /// assert_eq!(done[0].name, "start");
    /// assert!(done[0].resources.contains(&"shop".to_owned()));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn reset(&self) -> Result<Vec<SnapshotInfo>, SnapshotError> {
        let mut done = Vec::new();
        for project in self.state.registry().project_names() {
            done.push(self.state.reset_project(&project).await?);
        }
        Ok(done)
    }

    /// Everything back to the start, in one call: what [`reset`](Self::reset) puts back, and an
    /// empty request journal ([`clear_requests`](Self::clear_requests)). What a test on an
    /// emulator it shares calls first, so that neither the data nor the journal shows an earlier
    /// test's requests.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use svc_emulator::RequestMatcher;
    ///
    /// let emulator = svc_emulator::Emulator::start(Default::default()).await?;
    /// // ... an earlier test's requests ...
    /// emulator.start_over().await?;
    /// assert!(emulator.requests().is_empty());
    /// emulator.assert_not_received(RequestMatcher::any());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn start_over(&self) -> Result<Vec<SnapshotInfo>, SnapshotError> {
        let done = self.reset().await?;
        self.clear_requests();
        Ok(done)
    }

    /// Declares a stub: requests that `matcher` matches get the answer given to
    /// [`respond`](StubBuilder::respond) instead of the data's, in the manner of wiremock's
    /// `Mock::given(..).respond_with(..)`. Stubs are tried in order of declaration; a stubbed
    /// request never reaches the data, and the journal shows it with the stub's number. The
    /// matcher's conditions that need an answer (`status`, `since`) are refused.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use serde_json::json;
    /// use svc_emulator::{Emulator, EmulatorConfig, RequestMatcher, StubResponse};
    /// use tokio::io::{AsyncReadExt, AsyncWriteExt};
    ///
    /// let emulator = Emulator::start(EmulatorConfig::default()).await?;
    /// let stub = emulator
    ///     .stub(RequestMatcher::get().model("orders"))
    ///     .once()
    ///     .respond(
    ///         StubResponse::new(503)
    ///             .header("Retry-After", "1")
    ///             .json(json!({"error": "Try again."})),
    ///     )?;
    ///
    /// // The code under test lists orders twice; any HTTP client will do.
    /// for _ in 0..2 {
    ///     let mut stream = tokio::net::TcpStream::connect(emulator.local_addr()).await?;
    ///     let request = format!(
    ///         "GET /projects/demo/prod/shop/models/orders HTTP/1.1\r\nHost: x\r\n\
    ///          Authorization: Bearer {}\r\nConnection: close\r\n\r\n",
    ///         emulator.api_key()
    ///     );
    ///     stream.write_all(request.as_bytes()).await?;
    ///     stream.read_to_end(&mut Vec::new()).await?;
    /// }
    ///
    /// let statuses: Vec<u16> = emulator.requests().iter().map(|r| r.status).collect();
    /// assert_eq!(statuses, [503, 200]);
    /// assert_eq!(emulator.requests()[0].stub, Some(stub));
    /// emulator.assert_stub_answered(stub, 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn stub(&self, matcher: RequestMatcher) -> StubBuilder<'_> {
        self.state.stubs().declare(0, matcher)
    }

    /// Every project's stubs, in order of declaration, with how many requests each matched
    /// and answered.
    pub fn stubs(&self) -> Vec<StubInfo> {
        self.state.stubs().list(None)
    }

    /// Removes stub `id`; whether it was declared.
    pub fn remove_stub(&self, id: StubId) -> bool {
        self.state.stubs().remove(id.0, None)
    }

    /// Checks that stub `id` answered `times` requests (a number is exactly that many), from
    /// the journal: those requests, or an [`UnmetExpectation`] whose near misses are the
    /// requests like the stub's that it did not answer (another stub's, those it let pass).
    pub fn verify_stub(
        &self,
        id: StubId,
        times: impl Into<Times>,
    ) -> Result<Vec<RecordedRequest>, UnmetExpectation> {
        self.verify(self.state.stubs().answered_matcher(id.0, None), times)
    }

    /// Asserts that stub `id` answered `times` requests, and returns them.
    ///
    /// # Panics
    ///
    /// When it did not, with the [`UnmetExpectation`]'s report.
    #[track_caller]
    pub fn assert_stub_answered(
        &self,
        id: StubId,
        times: impl Into<Times>,
    ) -> Vec<RecordedRequest> {
        match self.verify_stub(id, times) {
            Ok(matched) => matched,
            Err(unmet) => panic!("{unmet}"),
        }
    }

    /// Keeps every project's state as it is now under `name` (1 to 64 letters, digits, `.`,
    /// `_` or `-`; not `start`), for [`restore`](Self::restore); a snapshot of that name is
    /// replaced. Snapshots live in memory: they end with the emulator.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let emulator = svc_emulator::Emulator::start(Default::default()).await?;
    /// emulator.snapshot("seeded").await?;
    /// // ... a test changes records ...
    /// emulator.restore("seeded").await?;
    /// assert!(emulator.restore("no-such").await.is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn snapshot(&self, name: &str) -> Result<Vec<SnapshotInfo>, SnapshotError> {
        let mut done = Vec::new();
        for project in self.state.registry().project_names() {
            let parts = self.state.snapshot_parts();
            done.push(self.state.snapshots().save(parts, &project, name).await?);
        }
        Ok(done)
    }

    /// Puts every project back in its state of snapshot `name` (see
    /// [`snapshot`](Self::snapshot); `start` is the state at start, as [`reset`](Self::reset)).
    pub async fn restore(&self, name: &str) -> Result<Vec<SnapshotInfo>, SnapshotError> {
        let mut done = Vec::new();
        for project in self.state.registry().project_names() {
            let parts = self.state.snapshot_parts();
            done.push(
                self.state
                    .snapshots()
                    .restore(parts, &project, name)
                    .await?,
            );
        }
        Ok(done)
    }

    /// The models of `project`'s resource `resource` as the emulator serves them (as last
    /// read: start or reload), sorted by name: each one's key and fields with their filter
    /// families. `None` when the project has no such resource. For tools that generate
    /// requests from a schema, as `svc emulator verify` does.
    ///
    /// ```no_run
    /// # async fn demo(emulator: &svc_emulator::Emulator) {
    /// let models = emulator.models("demo", "shop").unwrap_or_default();
    /// for model in &models {
    ///     println!("{} (key {}): {} fields", model.name, model.key, model.fields.len());
    /// }
    /// # }
    /// ```
    pub fn models(&self, project: &str, resource: &str) -> Option<Vec<ModelInfo>> {
        let backend = self.state.catalog().get(project, resource)?;
        let names = backend.model_names();
        Some(names.iter().filter_map(|n| backend.describe(n)).collect())
    }

    /// Puts one project back in its state at start (see [`reset`](Self::reset)).
    pub async fn reset_project(&self, project: &str) -> Result<SnapshotInfo, SnapshotError> {
        self.state.reset_project(project).await
    }

    /// Writes every project's state to `dir` (see the emulator guide, "State on disk"): each
    /// project's records of the resources a reset puts back, their next generated keys, its
    /// page settings and accounts, in the layout an [`import`](crate::EmulatorConfig::import)
    /// reads. `dir` is a new or empty directory, or an earlier export, whose folders of these
    /// projects are replaced. Each project is read as of one moment (each resource in one
    /// transaction); files are `0600`, folders `0700`.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use svc_emulator::{Emulator, EmulatorConfig, ImportOnRows};
    ///
    /// let dir = std::env::temp_dir().join(format!("svc-export-doc-{}", std::process::id()));
    /// # let _ = std::fs::remove_dir_all(&dir);
    /// let first = Emulator::start(EmulatorConfig::default()).await?;
    /// first.export(&dir).await?;
    /// first.shutdown().await;
    ///
    /// // The demo seeds its rows at start: the export's state replaces them.
    /// let config = EmulatorConfig::default()
    ///     .import(&dir)
    ///     .import_on_rows(ImportOnRows::Replace);
    /// let second = Emulator::start(config).await?;
    /// second.shutdown().await;
    /// # std::fs::remove_dir_all(&dir)?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn export(&self, dir: impl AsRef<std::path::Path>) -> Result<(), SnapshotError> {
        let mut exports = Vec::new();
        for project in self.state.registry().project_names() {
            exports.push(
                self.state
                    .snapshots()
                    .export(self.state.snapshot_parts(), &project)
                    .await?,
            );
        }
        let dir = dir.as_ref().to_owned();
        svc_emulator_core::blocking::on_blocking_pool(move || crate::write_export(&dir, &exports))
            .await
            .map_err(|e| SnapshotError::Store(format!("the export's task failed: {e}")))?
    }

    /// What the config's [`import`](crate::EmulatorConfig::import) wrote at start, one line a
    /// project (`project "demo": __svc_app__: 3 record(s); shop: 13050 record(s); 0 page
    /// setting and account row(s)` for the demo as it starts); empty without an import.
    pub fn imported(&self) -> &[String] {
        &self.imported
    }

    /// Exports every project's state where the config's
    /// [`export_on_exit`](crate::EmulatorConfig::export_on_exit) says (nothing when it says
    /// nothing), then shuts down as [`shutdown`](Self::shutdown) does, whether the export
    /// worked or not; the export's failure is the answer.
    pub async fn stop(self) -> Result<(), SnapshotError> {
        let exported = match &self.export_on_exit {
            Some(dir) => self.export(dir).await,
            None => Ok(()),
        };
        self.shutdown().await;
        exported
    }

    /// Stops the server and waits until the listener and every connection are closed, so that
    /// another emulator can open the same data path. A temporary CA file is removed. The
    /// snapshots end, the state at start included: the copies kept in your PostgreSQL or MySQL
    /// database (the `svc_emulator_saved_*` schemas or databases of resources opted in with
    /// [`ResourceConfig::reset`](crate::ResourceConfig::reset)) are dropped before this returns
    /// (waiting at most 10 s; a warning on stderr says how many were left). Exports nothing:
    /// [`stop`](Self::stop) does the config's export on exit first.
    pub async fn shutdown(self) {
        let Self {
            server,
            ca_file,
            state,
            ..
        } = self;
        server.stop().await;
        drop(ca_file);
        state.snapshots().end();
        drop(state);
        saved_copies_dropped().await;
    }
}

/// How long a stop waits for the stores of its saved copies to drop.
const STORE_DROPS: std::time::Duration = std::time::Duration::from_secs(10);

/// Waits (at most [`STORE_DROPS`]) until the stores of the saved copies let go of so far are
/// dropped: what a stop, or a start that fails, does last, before the runtime that runs the
/// drops may end. A warning on stderr says what was left.
pub(crate) async fn saved_copies_dropped() {
    let left = svc_emulator_core::flow::export::stores_dropped(STORE_DROPS).await;
    if left > 0 {
        eprintln!(
            "svc-emulator: warning: {left} saved cop{} of a database's data (a schema or \
             database named svc_emulator_saved_...) not dropped within {} s: drop {} yourself \
             once no emulator runs on that database",
            if left == 1 { "y" } else { "ies" },
            STORE_DROPS.as_secs(),
            if left == 1 { "it" } else { "them" },
        );
    }
}

impl fmt::Debug for Emulator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Emulator")
            .field("local_addr", &self.local_addr)
            .field("info", &self.info)
            .field("ca_file", &self.ca_file)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for StartupInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tokens: BTreeMap<&str, &str> = self
            .resource_tokens
            .keys()
            .map(|name| (name.as_str(), "<redacted>"))
            .collect();
        f.debug_struct("StartupInfo")
            .field("api_base_url", &self.api_base_url)
            .field("app_base_url", &self.app_base_url)
            .field("project", &self.project)
            .field("environment", &self.environment)
            .field("api_key", &"<redacted>")
            .field("tls_ca_pem", &self.tls_ca_pem)
            .field("resource_tokens", &tokens)
            .field("ui_url", &"<redacted>")
            .finish()
    }
}
