//! How to start an emulator: where it listens, where it keeps its data, which projects it
//! serves, and whether it speaks TLS.

pub mod actions;
pub mod faults;
pub mod fixtures;
pub mod import;
pub mod lifetimes;
pub mod limits;
pub mod projects;
pub mod proxy;
pub mod registry;
pub mod stubs;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use crate::config::projects::ProjectsConfig;

/// How many requests the request journal keeps by default; past it the oldest are dropped.
pub(crate) const DEFAULT_JOURNAL_CAPACITY: usize = 10_000;

/// Options of [`Emulator::start`](../svc_emulator/struct.Emulator.html#method.start), builder style.
///
/// The defaults are what a test wants: a random loopback port, everything in memory, the demo
/// project, plain HTTP.
///
/// ```
/// use svc_emulator::EmulatorConfig;
///
/// let config = EmulatorConfig::default()
///     .listen(([127, 0, 0, 1], 0).into())
///     .data_path("/tmp/svc-emulator-example/meta.sqlite")
///     .tls(true);
/// assert!(config.tls_enabled());
/// assert_eq!(config.listen_addr().port(), 0);
/// ```
#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    listen: SocketAddr,
    data_path: Option<PathBuf>,
    projects: ProjectsSource,
    tls: bool,
    lenient: bool,
    lifetimes: lifetimes::TokenLifetimes,
    faults: Option<faults::Faults>,
    proxy: proxy::ProxyConfig,
    limits: limits::Limits,
    journal_capacity: usize,
    journal_bodies: bool,
    fixtures: Option<PathBuf>,
    fixtures_on_rows: Option<fixtures::FixturesOnRows>,
    import: Option<PathBuf>,
    import_on_rows: import::ImportOnRows,
    export_on_exit: Option<PathBuf>,
    ui_hosts: Vec<String>,
}

/// Where the projects come from. Setting one source replaces the other.
#[derive(Debug, Clone)]
enum ProjectsSource {
    /// The projects persisted in the data path, else the demo project.
    Default,
    /// A JSON config file, read at start.
    File(PathBuf),
    /// A config given in code.
    Inline(ProjectsConfig),
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
            data_path: None,
            projects: ProjectsSource::Default,
            tls: false,
            lenient: false,
            lifetimes: lifetimes::TokenLifetimes::default(),
            faults: None,
            proxy: proxy::ProxyConfig::default(),
            limits: limits::Limits::default(),
            journal_capacity: DEFAULT_JOURNAL_CAPACITY,
            journal_bodies: false,
            ui_hosts: Vec::new(),
            fixtures: None,
            fixtures_on_rows: None,
            import: None,
            import_on_rows: import::ImportOnRows::Stop,
            export_on_exit: None,
        }
    }
}

impl EmulatorConfig {
    /// The address to listen on; default `127.0.0.1:0` (a free port on loopback).
    pub fn listen(mut self, addr: SocketAddr) -> Self {
        self.listen = addr;
        self
    }

    /// The SQLite file that keeps projects, keys and page settings across restarts (created with
    /// its parent directories if missing). Without it, everything lives in memory.
    pub fn data_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.data_path = Some(path.into());
        self
    }

    /// A JSON config file of projects (format in the crate README). Replaces
    /// [`projects`](Self::projects).
    pub fn config_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.projects = ProjectsSource::File(path.into());
        self
    }

    /// The projects to serve, given in code. Replaces [`config_file`](Self::config_file).
    pub fn projects(mut self, config: ProjectsConfig) -> Self {
        self.projects = ProjectsSource::Inline(config);
        self
    }

    /// Fixtures for the default project's resources (`--fixtures DIR`): a folder per resource,
    /// `DIR/<resource>/`, holding one file per model, `<model>.json` (an array of objects),
    /// `<model>.ndjson` or `.jsonl` (an object a line) or `<model>.csv` (a header row naming
    /// the fields). A resource's folder replaces the `fixtures` of its config
    /// ([`ResourceConfig::fixtures`](../svc_emulator/struct.ResourceConfig.html#method.fixtures)).
    pub fn fixtures_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.fixtures = Some(dir.into());
        self
    }

    /// The fixtures directory of [`fixtures_dir`](Self::fixtures_dir) (`--fixtures`), if any.
    pub fn fixtures_location(&self) -> Option<&Path> {
        self.fixtures.as_deref()
    }

    /// What the start does when a model that fixtures name already holds records, for every
    /// resource (`--fixtures-on-rows`): replaces each resource's own
    /// ([`ResourceConfig::fixtures_on_rows`](../svc_emulator/struct.ResourceConfig.html#method.fixtures_on_rows)).
    pub fn fixtures_on_rows(mut self, on_rows: fixtures::FixturesOnRows) -> Self {
        self.fixtures_on_rows = Some(on_rows);
        self
    }

    /// An export to start from (`--import DIR`): a directory that
    /// [`Emulator::export`](../svc_emulator/struct.Emulator.html#method.export), `svc emulator export DIR` or
    /// [`export_on_exit`](Self::export_on_exit) wrote. Its records, page settings and accounts
    /// are written into the served projects after their fixtures, before the state at start
    /// is kept (a reset puts the imported state back). A model or project that already holds
    /// rows stops the start, unless [`import_on_rows`](Self::import_on_rows) says otherwise.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use svc_emulator::{Emulator, EmulatorConfig, ImportOnRows};
    ///
    /// let config = EmulatorConfig::default()
    ///     .import("state/")
    ///     .import_on_rows(ImportOnRows::Replace)
    ///     .export_on_exit("state/");
    /// let emulator = Emulator::start(config).await?;
    /// // ... the suite ...
    /// emulator.stop().await?; // exports to state/, then shuts down
    /// # Ok(())
    /// # }
    /// ```
    pub fn import(mut self, dir: impl Into<PathBuf>) -> Self {
        self.import = Some(dir.into());
        self
    }

    /// What an [`import`](Self::import) does where rows are already (`--import-on-rows`):
    /// stop the start (the default), skip, add, or replace them.
    pub fn import_on_rows(mut self, on_rows: import::ImportOnRows) -> Self {
        self.import_on_rows = on_rows;
        self
    }

    /// Where [`Emulator::stop`](../svc_emulator/struct.Emulator.html#method.stop) (and `svc emulator`, on Ctrl-C or
    /// SIGTERM) exports every project's state before it shuts down (`--export-on-exit DIR`):
    /// a new or empty directory, or an earlier export, whose projects are replaced.
    pub fn export_on_exit(mut self, dir: impl Into<PathBuf>) -> Self {
        self.export_on_exit = Some(dir.into());
        self
    }

    /// The export of [`import`](Self::import) (`--import`), if any, and what the import
    /// does where rows are ([`import_on_rows`](Self::import_on_rows)).
    pub fn import_from(&self) -> Option<(&Path, import::ImportOnRows)> {
        self.import.as_deref().map(|dir| (dir, self.import_on_rows))
    }

    /// The directory of [`export_on_exit`](Self::export_on_exit) (`--export-on-exit`), if
    /// any.
    pub fn export_on_exit_dir(&self) -> Option<&Path> {
        self.export_on_exit.as_deref()
    }

    /// The choice of [`fixtures_on_rows`](Self::fixtures_on_rows) (`--fixtures-on-rows`) for
    /// every resource, if one was given (else each resource's own applies).
    pub fn fixtures_on_rows_given(&self) -> Option<fixtures::FixturesOnRows> {
        self.fixtures_on_rows
    }

    /// Serve HTTPS with a certificate generated at start (default off).
    pub fn tls(mut self, enabled: bool) -> Self {
        self.tls = enabled;
        self
    }

    /// Lenient mode (default off): records requests are answered exactly like the platform's data
    /// engine, with none of the emulator's stricter refusals. By default the emulator refuses
    /// with a `400` what the engine silently misreads (an unknown field or lookup in a filter, a
    /// page number that is not a number, a boolean that is neither true nor false, ...); each
    /// such rule is a `[decision: stricter]` of docs/contract.md. Lenient mode reads them as the
    /// engine does.
    pub fn lenient(mut self, enabled: bool) -> Self {
        self.lenient = enabled;
        self
    }

    /// Whether lenient mode is on.
    pub fn lenient_enabled(&self) -> bool {
        self.lenient
    }

    /// Lifetimes of the session and service tokens the emulator issues (default: access 5 min,
    /// refresh 7 days, service 1 day). Tests use a few seconds to see refreshes happen.
    pub fn token_lifetimes(mut self, lifetimes: lifetimes::TokenLifetimes) -> Self {
        self.lifetimes = lifetimes;
        self
    }

    /// Fault mode: inject latency, `503`s and dropped connections (see [`Faults`](../svc_emulator/struct.Faults.html)).
    /// Off by default; a `Faults` with nothing set turns it off.
    pub fn faults(mut self, faults: faults::Faults) -> Self {
        self.faults = faults.is_active().then_some(faults);
        self
    }

    /// The faults in force, if fault mode is on.
    pub fn fault_settings(&self) -> Option<&faults::Faults> {
        self.faults.as_ref()
    }

    /// The HTTP proxy's settings: allow-list (default: loopback only), timeout (default 30 s),
    /// secrets, pinned names, extra TLS roots. See [`ProxyConfig`](../svc_emulator/struct.ProxyConfig.html).
    pub fn proxy(mut self, proxy: proxy::ProxyConfig) -> Self {
        self.proxy = proxy;
        self
    }

    /// Replaces the HTTP proxy's allow-list (see [`ProxyConfig::allow`](../svc_emulator/struct.ProxyConfig.html#method.allow)):
    /// IP addresses, CIDR ranges, host names, `loopback` or `*`.
    pub fn proxy_allow<I, S>(mut self, entries: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.proxy = self.proxy.allow(entries);
        self
    }

    /// The HTTP proxy's settings in force.
    pub fn proxy_settings(&self) -> &proxy::ProxyConfig {
        &self.proxy
    }

    /// The server's connection limits: timeouts for silent and idle connections, and the
    /// connection cap (see [`Limits`](../svc_emulator/struct.Limits.html)).
    pub fn limits(mut self, limits: limits::Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The connection limits in force.
    pub fn limit_settings(&self) -> limits::Limits {
        self.limits
    }

    /// How many requests the request journal keeps (default 10,000): the newest ones, the
    /// oldest dropped and counted (also past 64 MiB of paths, queries and bodies). `0` turns
    /// the journal off: nothing is recorded and `GET /_emulator/projects/{project}/requests`
    /// lists nothing. See [`Emulator::requests`](../svc_emulator/struct.Emulator.html#method.requests).
    pub fn journal_capacity(mut self, entries: usize) -> Self {
        self.journal_capacity = entries;
        self
    }

    /// The request journal's capacity in force.
    pub fn journal_capacity_setting(&self) -> usize {
        self.journal_capacity
    }

    /// Whether the request journal keeps request and response bodies (default off): the first
    /// 64 KiB of each, with secrets redacted, shown by `?bodies=true` and
    /// [`RecordedRequest::request_body`](../svc_emulator/struct.RecordedRequest.html#structfield.request_body). Off, a request
    /// costs the journal no copy of its bodies.
    pub fn journal_bodies(mut self, enabled: bool) -> Self {
        self.journal_bodies = enabled;
        self
    }

    /// Whether the request journal keeps bodies.
    pub fn journal_bodies_enabled(&self) -> bool {
        self.journal_bodies
    }

    /// Adds a host name the web page (`/_emulator/ui/`) answers under, beside the loopback
    /// names (`localhost`, `127.0.0.1`, `[::1]`) and the listen address: e.g. the name of a
    /// container or a machine that reaches the emulator through a network. The page refuses
    /// other names (a page of another site made to point at this machine: DNS rebinding).
    ///
    /// ```
    /// let config = svc_emulator::EmulatorConfig::default().ui_host("emulator.internal");
    /// assert_eq!(config.ui_host_names(), ["emulator.internal"]);
    /// ```
    pub fn ui_host(mut self, name: impl Into<String>) -> Self {
        self.ui_hosts.push(name.into());
        self
    }

    /// The host names added with [`ui_host`](Self::ui_host).
    pub fn ui_host_names(&self) -> &[String] {
        &self.ui_hosts
    }

    /// The token lifetimes in force.
    pub fn lifetimes(&self) -> lifetimes::TokenLifetimes {
        self.lifetimes
    }

    /// The address to listen on.
    pub fn listen_addr(&self) -> SocketAddr {
        self.listen
    }

    /// The data path, if any.
    pub fn data_location(&self) -> Option<&Path> {
        self.data_path.as_deref()
    }

    /// Whether TLS is on.
    pub fn tls_enabled(&self) -> bool {
        self.tls
    }

    /// The projects' config file of [`config_file`](Self::config_file), if it is their
    /// source.
    pub fn config_file_path(&self) -> Option<&Path> {
        match &self.projects {
            ProjectsSource::File(path) => Some(path),
            ProjectsSource::Default | ProjectsSource::Inline(_) => None,
        }
    }

    /// The projects of [`projects`](Self::projects), if they are given in code. With neither
    /// this nor a [`config_file_path`](Self::config_file_path), the emulator serves the
    /// projects saved in its data path, else the demo project.
    pub fn projects_given(&self) -> Option<&ProjectsConfig> {
        match &self.projects {
            ProjectsSource::Inline(projects) => Some(projects),
            ProjectsSource::Default | ProjectsSource::File(_) => None,
        }
    }
}
