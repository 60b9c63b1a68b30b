//! The state every route handler shares: the projects, the meta store and the public URLs.

use std::sync::Arc;

use svc_emulator_core::backend::Backend;
use svc_emulator_state::catalog::Catalog;
use svc_emulator_state::config::registry::Registry;
use svc_emulator_state::sessions::Accounts;
use svc_emulator_state::snapshot::{Parts, Snapshots};
use svc_emulator_state::storage::Store;

/// Shared state of the router; cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState(Arc<Shared>);

#[derive(Debug)]
struct Shared {
    registry: Registry,
    store: Store,
    catalog: Catalog,
    accounts: Accounts,
    snapshots: Snapshots,
    api_base_url: String,
    app_base_url: String,
    lenient: bool,
    limits: svc_emulator_state::config::limits::Limits,
    gates: crate::admission::Gates,
    journal: Arc<crate::journal::Journal>,
    stubs: crate::stubs::Stubs,
}

/// How the emulator is reached and how strictly it reads records requests.
#[derive(Debug)]
pub struct Served {
    /// The data host's base URL.
    pub api_base_url: String,
    /// The application host's base URL, ending in `/api`.
    pub app_base_url: String,
    /// Lenient mode ([`EmulatorConfig::lenient`](../svc_emulator/struct.EmulatorConfig.html#method.lenient)).
    pub lenient: bool,
    /// What one client may take ([`Limits`](../svc_emulator/struct.Limits.html)).
    pub limits: svc_emulator_state::config::limits::Limits,
    /// The request journal.
    pub journal: Arc<crate::journal::Journal>,
    /// The stubs.
    pub stubs: crate::stubs::Stubs,
}

impl AppState {
    /// The state of a starting emulator, over its projects, meta store, served resources and
    /// settings.
    pub fn new(
        registry: Registry,
        store: Store,
        catalog: Catalog,
        accounts: Accounts,
        snapshots: Snapshots,
        served: Served,
    ) -> Self {
        let Served {
            api_base_url,
            app_base_url,
            lenient,
            limits,
            journal,
            stubs,
        } = served;
        Self(Arc::new(Shared {
            registry,
            store,
            catalog,
            accounts,
            snapshots,
            api_base_url,
            app_base_url,
            lenient,
            limits,
            gates: crate::admission::Gates::default(),
            journal,
            stubs,
        }))
    }

    /// Waits for `db`'s turn, or refuses with `503` when the resource is busy.
    pub async fn admit(
        &self,
        db: Arc<dyn Backend>,
    ) -> Result<crate::admission::Admitted, crate::HttpError> {
        self.0.gates.admit(db, &self.0.limits).await
    }

    /// The request journal.
    pub fn journal(&self) -> &Arc<crate::journal::Journal> {
        &self.0.journal
    }

    /// The stubs, every project's.
    pub fn stubs(&self) -> &crate::stubs::Stubs {
        &self.0.stubs
    }

    /// Puts `project` back in its state at start, and its stubs back to the config file's.
    pub async fn reset_project(
        &self,
        project: &str,
    ) -> Result<
        svc_emulator_state::snapshot::SnapshotInfo,
        svc_emulator_state::snapshot::SnapshotError,
    > {
        let done = self
            .snapshots()
            .restore(
                self.snapshot_parts(),
                project,
                svc_emulator_state::snapshot::START,
            )
            .await?;
        if let Some(index) = self.stubs().project_index(project) {
            self.stubs().reset(index);
        }
        Ok(done)
    }

    /// What one client may take.
    pub fn limits(&self) -> &svc_emulator_state::config::limits::Limits {
        &self.0.limits
    }

    /// User sessions: accounts, tokens, codes.
    pub fn accounts(&self) -> &Accounts {
        &self.0.accounts
    }

    /// The served projects and their credentials.
    pub fn registry(&self) -> &Registry {
        &self.0.registry
    }

    /// The meta store (page settings).
    pub fn store(&self) -> &Store {
        &self.0.store
    }

    /// Every project's snapshots, its state at start included.
    pub fn snapshots(&self) -> &Snapshots {
        &self.0.snapshots
    }

    /// What a snapshot saves and restores.
    pub fn snapshot_parts(&self) -> Parts<'_> {
        Parts {
            catalog: &self.0.catalog,
            store: &self.0.store,
            accounts: &self.0.accounts,
        }
    }

    /// The connected resources' databases.
    pub fn catalog(&self) -> &Catalog {
        &self.0.catalog
    }

    /// The data host's base URL, e.g. `http://127.0.0.1:PORT` (for absolute `next` links).
    pub fn api_base_url(&self) -> &str {
        &self.0.api_base_url
    }

    /// Lenient mode: records requests read like the data engine reads them, with no stricter
    /// refusals ([`EmulatorConfig::lenient`](../svc_emulator/struct.EmulatorConfig.html#method.lenient)).
    pub fn lenient(&self) -> bool {
        self.0.lenient
    }

    /// The application host's base URL, ending in `/api`.
    pub fn app_base_url(&self) -> &str {
        &self.0.app_base_url
    }
}
