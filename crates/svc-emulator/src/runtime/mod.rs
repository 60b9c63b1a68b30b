//! Starting an emulator: bind, open the store, settle the projects and keys, set up TLS, serve.

pub(crate) mod faults;
pub(crate) mod handle;
mod router;
pub(crate) mod server;
pub(crate) mod tls;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::TcpListener;

use crate::runtime::handle::{Emulator, StartupInfo};
use crate::ui::{FixturesLoaded, Guard, Ui};
use server::ServerTask;
use svc_emulator_core::blocking::on_blocking_pool;
use svc_emulator_http::AppState;
use svc_emulator_http::journal::{Journal, Redactor};
use svc_emulator_http::stubs::{StubLimits, Stubs};
use svc_emulator_state::catalog::Catalog;
use svc_emulator_state::catalog::fixtures::{self, Loaded};
use svc_emulator_state::config::EmulatorConfig;
use svc_emulator_state::config::fixtures::{FixtureError, Fixtures, FixturesOnRows, by_resource};
use svc_emulator_state::config::projects::{ConfigError, ProjectsConfig};
use svc_emulator_state::config::registry::Registry;
use svc_emulator_state::sessions::Accounts;
use svc_emulator_state::snapshot::{Parts, SnapshotError, Snapshots};
use svc_emulator_state::storage::{Store, StoreError};
use tls::{CaFile, TlsError};

/// The emulator could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmulatorError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The projects config was refused.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The data store could not be opened or written.
    #[error("data store {}: {message}", path.as_ref().map_or("(in memory)".to_owned(), |p| p.display().to_string()))]
    Store {
        /// The data path, when there is one.
        path: Option<PathBuf>,
        /// What failed.
        message: String,
    },
    /// A resource's database could not be opened: the message names the resource and its
    /// project, and says what to do.
    #[error("cannot open {0}")]
    Resource(String),
    /// A fixture could not be loaded: the error names its file, and where known the line and
    /// the field.
    #[error(transparent)]
    Fixture(#[from] FixtureError),
    /// TLS could not be set up.
    #[error("TLS: {0}")]
    Tls(String),
    /// The export given to `--import` could not be read or written into the projects.
    #[error("importing {}: {message}", dir.display())]
    Import {
        /// The export's directory.
        dir: PathBuf,
        /// What went wrong, and what to do.
        message: String,
    },
    /// Any other I/O failure (e.g. writing the startup line).
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// What the blocking part of the start-up produces.
struct Prepared {
    registry: Registry,
    store: Store,
    catalog: Catalog,
    accounts: Accounts,
    snapshots: Snapshots,
    tls: Option<(tokio_rustls::TlsAcceptor, CaFile)>,
    warnings: Vec<String>,
    /// What each resource's fixtures load did, for the web page.
    fixtures: Vec<FixturesLoaded>,
    /// Each project's stubs of the config, in the registry's order.
    stubs: Vec<Vec<svc_emulator_state::config::stubs::StubConfig>>,
    /// Each project's limits on its stubs: its own in the config, else `Limits`'.
    stub_limits: Vec<StubLimits>,
    /// What the import wrote, one line a project.
    imported: Vec<String>,
}

impl Emulator {
    /// Starts an emulator and returns once it accepts connections.
    ///
    /// Projects come from, in order: the config given in `config` (file or code); else the
    /// projects saved in the data path by the last start; else the demo project. The config in
    /// force is saved in the data path.
    pub async fn start(config: EmulatorConfig) -> Result<Emulator, EmulatorError> {
        let started = Self::start_serving(config).await;
        if started.is_err() {
            // The copies of the data it kept (the state at start, an import's) are let go of
            // by now: their stores are dropped before the failure is answered.
            handle::saved_copies_dropped().await;
        }
        started
    }

    /// [`start`](Self::start)'s work.
    async fn start_serving(config: EmulatorConfig) -> Result<Emulator, EmulatorError> {
        let addr = config.listen_addr();
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| EmulatorError::Bind { addr, source })?;
        let local_addr = listener.local_addr()?;
        let proxy =
            crate::proxy::Forwarder::new(config.proxy_settings()).map_err(ConfigError::Invalid)?;
        let faults = config.fault_settings().cloned();
        let limits = config.limit_settings();
        let lenient = config.lenient_enabled();
        let journal_settings = (
            config.journal_capacity_setting(),
            config.journal_bodies_enabled(),
        );
        let proxy_secrets: Vec<String> = config
            .proxy_settings()
            .secrets()
            .values()
            .cloned()
            .collect();
        let ui_hosts = config.ui_host_names().to_vec();
        let export_on_exit = config.export_on_exit_dir().map(ToOwned::to_owned);
        let prepared = on_blocking_pool(move || prepare(&config, local_addr, usize::MAX))
            .await
            .map_err(|e| EmulatorError::Io(std::io::Error::other(e)))??
            .ok_or_else(|| EmulatorError::Io(std::io::Error::other("the import stopped")))?;

        let scheme = if prepared.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let api_base_url = format!("{scheme}://{}", reachable(local_addr));
        let listen_host = match reachable(local_addr).ip() {
            IpAddr::V6(ip) => format!("[{ip}]"),
            ip => ip.to_string(),
        };
        let guard = Guard::new(
            &listen_host,
            local_addr.port(),
            &ui_hosts,
            prepared.tls.is_some(),
        )
        .map_err(ConfigError::Invalid)?;
        let ui_url = format!(
            "{api_base_url}{}/?token={}",
            crate::ui::PREFIX,
            guard.token()
        );
        let app_base_url = format!("{api_base_url}/api");
        let default_project = prepared
            .registry
            .default_project()
            .ok_or_else(|| ConfigError::Invalid("at least one project is required".into()))?;
        let project = default_project.name.clone();
        let environment = default_project
            .default_environment()
            .cloned()
            .ok_or_else(|| ConfigError::Invalid("a project has no environment".into()))?;
        let info = StartupInfo {
            api_base_url: api_base_url.clone(),
            app_base_url: app_base_url.clone(),
            project: project.as_str().to_owned(),
            environment: environment.as_str().to_owned(),
            api_key: default_project.primary_api_key().to_owned(),
            tls_ca_pem: prepared.tls.as_ref().map(|(_, ca)| ca.path().to_owned()),
            // Every token of the default project, the built-in tools token (`__svc_app__`)
            // included, so a script can use any route from the startup line alone.
            resource_tokens: default_project
                .all_resources()
                .map(|r| (r.name.clone(), r.token.clone()))
                .collect(),
            ui_url,
        };

        let (acceptor, ca_file) = prepared.tls.unzip();
        let journal = journal(&prepared.registry, journal_settings, &proxy_secrets);
        let stubs = Stubs::with_limits(
            prepared
                .registry
                .projects()
                .iter()
                .map(|p| p.name.as_str().to_owned())
                .collect(),
            prepared.stubs,
            prepared.stub_limits,
        )
        .map_err(|e| ConfigError::Invalid(format!("the config's stubs: {e}")))?;
        let state = AppState::new(
            prepared.registry,
            prepared.store,
            prepared.catalog,
            prepared.accounts,
            prepared.snapshots,
            svc_emulator_http::state::Served {
                api_base_url,
                app_base_url,
                lenient,
                limits,
                journal: Arc::new(journal),
                stubs,
            },
        );
        let ui = Arc::new(Ui::new(guard, state.clone(), prepared.fixtures));
        let server = ServerTask::spawn(
            listener,
            router::router(state.clone(), proxy, ui),
            acceptor,
            faults,
            limits,
        );
        Ok(Emulator {
            local_addr,
            info,
            project,
            environment,
            ca_file,
            server,
            warnings: prepared.warnings,
            state,
            export_on_exit,
            imported: prepared.imported,
        })
    }
}

/// The request journal of the served projects, hiding their credentials and the proxy's
/// secrets.
fn journal(
    registry: &Registry,
    (capacity, bodies): (usize, bool),
    proxy_secrets: &[String],
) -> Journal {
    let redactor = Redactor::new(
        registry
            .secrets()
            .chain(proxy_secrets.iter().map(String::as_str)),
    );
    let projects = registry
        .projects()
        .iter()
        .map(|p| p.name.as_str().to_owned())
        .collect();
    Journal::new(capacity, bodies, redactor, projects)
}

#[cfg(test)]
impl Emulator {
    /// [`start`](Self::start)'s work as far as the config's import, whose writes stop after
    /// the first `writes` as a SIGKILL there would stop them: nothing after them runs (nothing
    /// is undone, and the mark of an import under way stays in the `--data` file). Nothing is
    /// served. Whether the import ran to its end (and the rest of the start with it). For the
    /// tests of an import killed midway (`tests/import_stopped.rs`).
    pub(crate) async fn import_until(
        config: EmulatorConfig,
        writes: usize,
    ) -> Result<bool, EmulatorError> {
        let local_addr = config.listen_addr();
        let prepared = on_blocking_pool(move || prepare(&config, local_addr, writes))
            .await
            .map_err(|e| EmulatorError::Io(std::io::Error::other(e)))??;
        Ok(prepared.is_some())
    }
}

/// The blocking part of the start: store, projects, keys, TLS material. `None` when the
/// import stopped after its first `import_writes` writes (the tests' `Emulator::import_until`).
fn prepare(
    config: &EmulatorConfig,
    local_addr: SocketAddr,
    import_writes: usize,
) -> Result<Option<Prepared>, EmulatorError> {
    let data_path = config.data_location();
    let store_err = |e: StoreError| EmulatorError::Store {
        path: data_path.map(ToOwned::to_owned),
        message: e.to_string(),
    };
    let mut warnings = Vec::new();
    if !local_addr.ip().is_loopback() {
        warnings.push(listening_beyond_loopback(local_addr, config.tls_enabled()));
    }
    if let Some(data) = data_path {
        let dir_warning = svc_emulator_core::private::prepare_data_dir(data).map_err(|e| {
            EmulatorError::Store {
                path: Some(data.to_owned()),
                message: format!("cannot create its directory: {e}"),
            }
        })?;
        warnings.extend(dir_warning);
    }
    // Where the export on exit goes is checked at start, before anything is served: a
    // directory an export may not be written to stops the start (not the exit, which would
    // lose the session's state), and one others can write is warned of as --data's is.
    if let Some(dir) = config.export_on_exit_dir() {
        let export_err = |e: SnapshotError| {
            EmulatorError::Io(std::io::Error::other(format!("--export-on-exit: {e}")))
        };
        svc_emulator_state::snapshot::files::check_export_dir(dir).map_err(export_err)?;
        let dir_warning =
            svc_emulator_state::snapshot::files::export_dir_warning(dir).map_err(export_err)?;
        warnings.extend(dir_warning);
    }
    let store = Store::open(data_path).map_err(store_err)?;
    // A --data file that an import was killed in holds part of it: served only once an import
    // of the whole export over it (`--import-on-rows replace`) has ended.
    svc_emulator_state::snapshot::files::check_unfinished_import(
        &store,
        data_path,
        config.import_from(),
    )
    .map_err(|message| EmulatorError::Store {
        path: data_path.map(ToOwned::to_owned),
        message,
    })?;
    let mut projects = match (config.config_file_path(), config.projects_given()) {
        (Some(path), _) => ProjectsConfig::load(path)?,
        (None, Some(projects)) => projects.clone(),
        (None, None) => store
            .saved_projects()
            .map_err(store_err)?
            .unwrap_or_else(ProjectsConfig::demo),
    };
    for project in &mut projects.projects {
        if project.tools_token.is_none() {
            project.tools_token = Some(
                store
                    .generated_tools_token(&project.name)
                    .map_err(store_err)?,
            );
        }
    }
    let registry = Registry::new(&projects, |name| {
        store.generated_key(name).map_err(store_err)
    })?;
    store.save_projects(&projects).map_err(store_err)?;
    // Backends may connect asynchronously (a database server); this runs on a blocking thread of the
    // runtime, which may wait for them.
    let catalog = tokio::runtime::Handle::current()
        .block_on(Catalog::open(
            &projects,
            data_path,
            &crate::databases::Built,
        ))
        .map_err(EmulatorError::Resource)?;
    // Before the state at start is kept (below): a reset puts the fixtures back.
    let mut loaded = Vec::new();
    for (project, resource, fixtures, on_rows) in fixture_plan(&projects, config)? {
        let db = catalog.get(&project, &resource).ok_or_else(|| {
            ConfigError::Invalid(format!("no resource {resource:?} in project {project:?}"))
        })?;
        // Skipped only when the config says so: nothing to warn of.
        let outcome = match tokio::runtime::Handle::current()
            .block_on(fixtures::load(&db, &resource, &fixtures, on_rows))?
        {
            Loaded::Created { records, models } => {
                format!("loaded {records} record(s) into {models} model(s)")
            }
            Loaded::Skipped(models) => format!(
                "skipped, as fixtures_on_rows says: {} already held records",
                models.join(", ")
            ),
        };
        loaded.push(FixturesLoaded::new(&project, &resource, &fixtures, outcome));
    }

    let tls = if config.tls_enabled() {
        let generated = tls::generate(local_addr.ip()).map_err(tls_err)?;
        let ca = CaFile::write(generated.ca_pem, data_path).map_err(tls_err)?;
        Some((generated.acceptor, ca))
    } else {
        None
    };
    let accounts = Accounts::open(&store, config.lifetimes()).map_err(store_err)?;
    // After the fixtures (an import over them needs --import-on-rows) and the accounts'
    // tables, before the state at start is kept: a reset puts the imported state back.
    let mut imported = Vec::new();
    if let Some((dir, on_rows)) = config.import_from() {
        let done = svc_emulator_state::snapshot::files::import_dir_until(
            dir,
            &catalog,
            &store,
            on_rows,
            import_writes,
        )
        .map_err(|e| EmulatorError::Import {
            dir: dir.to_owned(),
            message: e.to_string(),
        })?;
        let Some(done) = done else {
            return Ok(None);
        };
        imported = done.lines;
        // Others who can change the export could have changed what was imported.
        warnings.extend(done.warnings);
    }

    // Every project's state at start, which its resets put back.
    let parts = Parts {
        catalog: &catalog,
        store: &store,
        accounts: &accounts,
    };
    let names = projects.projects.iter().map(|p| p.name.clone());
    let snapshots = tokio::runtime::Handle::current()
        .block_on(Snapshots::at_start(parts, names))
        .map_err(|e| EmulatorError::Store {
            path: data_path.map(ToOwned::to_owned),
            message: format!("keeping the state at start for resets: {e}"),
        })?;
    Ok(Some(Prepared {
        registry,
        store,
        catalog,
        accounts,
        snapshots,
        tls,
        warnings,
        fixtures: loaded,
        stubs: projects.projects.iter().map(|p| p.stubs.clone()).collect(),
        stub_limits: projects
            .projects
            .iter()
            .map(|p| {
                let limits = config.limit_settings();
                StubLimits::new(
                    p.max_stubs.unwrap_or(limits.stub_count_limit()),
                    p.max_stub_bytes.unwrap_or(limits.stub_bytes_limit()),
                )
            })
            .collect(),
        imported,
    }))
}

/// Each resource's fixtures, in config order: its config's, or its folder of `--fixtures DIR`
/// (the default project's resources only), which replaces them.
fn fixture_plan(
    projects: &ProjectsConfig,
    config: &EmulatorConfig,
) -> Result<Vec<(String, String, Fixtures, FixturesOnRows)>, FixtureError> {
    let mut flagged = match (config.fixtures_location(), projects.default_project()) {
        (Some(dir), Some(default)) => {
            let names: Vec<String> = default.resources.iter().map(|r| r.name.clone()).collect();
            by_resource(dir, &names)?
        }
        _ => Vec::new(),
    };
    let mut plan = Vec::new();
    for (i, project) in projects.projects.iter().enumerate() {
        for resource in &project.resources {
            let from_flag = match flagged.iter().position(|(r, _)| *r == resource.name) {
                Some(at) if i == 0 => Some(flagged.swap_remove(at).1),
                _ => None,
            };
            if let Some(fixtures) = from_flag.or_else(|| resource.fixtures.clone()) {
                let on_rows = config
                    .fixtures_on_rows_given()
                    .unwrap_or(resource.fixtures_on_rows);
                plan.push((
                    project.name.clone(),
                    resource.name.clone(),
                    fixtures,
                    on_rows,
                ));
            }
        }
    }
    Ok(plan)
}

fn tls_err(e: TlsError) -> EmulatorError {
    EmulatorError::Tls(e.to_string())
}

/// The warning for a listen address other hosts (or, on a shared address, other users' network
/// namespaces) can reach: the default, `127.0.0.1`, reaches this machine only.
fn listening_beyond_loopback(addr: SocketAddr, tls: bool) -> String {
    let clear = match tls {
        true => "",
        false => ", and its keys, tokens and passwords cross the network unencrypted (add --tls)",
    };
    format!(
        "listening on {addr}, which is not loopback: other hosts can reach the API{clear}. \
         Listen on 127.0.0.1 unless they must."
    )
}

/// The address clients use: a wildcard listen address is reached on loopback.
fn reachable(addr: SocketAddr) -> SocketAddr {
    let ip = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, addr.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    mod import_stopped;

    #[test]
    fn a_listen_address_beyond_loopback_is_warned_of() {
        let any: SocketAddr = "0.0.0.0:8787".parse().unwrap();
        let text = listening_beyond_loopback(any, false);
        assert!(
            text.contains("0.0.0.0:8787, which is not loopback"),
            "{text}"
        );
        assert!(text.contains("add --tls"), "{text}");
        assert!(!listening_beyond_loopback(any, true).contains("--tls"));
    }

    #[tokio::test]
    async fn a_start_beyond_loopback_warns_and_on_loopback_does_not() {
        let any: SocketAddr = "0.0.0.0:0".parse().unwrap();
        let open = crate::Emulator::start(crate::EmulatorConfig::default().listen(any))
            .await
            .unwrap();
        assert!(
            open.warnings()
                .iter()
                .any(|w| w.contains("which is not loopback")),
            "{:?}",
            open.warnings()
        );
        open.shutdown().await;
        let local = crate::Emulator::start(crate::EmulatorConfig::default())
            .await
            .unwrap();
        assert!(local.warnings().is_empty(), "{:?}", local.warnings());
        local.shutdown().await;
    }

    #[test]
    fn wildcard_addresses_are_reached_on_loopback() {
        let v4: SocketAddr = "0.0.0.0:80".parse().unwrap();
        assert_eq!(reachable(v4).to_string(), "127.0.0.1:80");
        let v6: SocketAddr = "[::]:80".parse().unwrap();
        assert_eq!(reachable(v6).to_string(), "[::1]:80");
        let specific: SocketAddr = "127.0.0.2:81".parse().unwrap();
        assert_eq!(reachable(specific), specific);
    }

    #[test]
    fn emulator_is_send_and_sync() {
        fn check<T: Send + Sync + 'static>() {}
        check::<Emulator>();
        check::<EmulatorError>();
    }

    #[tokio::test]
    async fn a_busy_address_is_a_bind_error() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = taken.local_addr().unwrap();
        let err = Emulator::start(EmulatorConfig::default().listen(addr))
            .await
            .unwrap_err();
        assert!(matches!(err, EmulatorError::Bind { .. }), "{err}");
    }
}
