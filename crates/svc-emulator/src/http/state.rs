//! The state every route handler shares: the projects, the meta store and the public URLs.

use std::sync::Arc;

use crate::catalog::Catalog;
use crate::config::registry::Registry;
use crate::sessions::Accounts;
use crate::snapshot::{Parts, Snapshots};
use crate::storage::Store;
use svc_emulator_core::backend::Backend;

/// Shared state of the router; cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct AppState(Arc<Shared>);

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
    limits: crate::config::limits::Limits,
    gates: crate::http::admission::Gates,
    journal: Arc<crate::http::journal::Journal>,
    stubs: crate::http::stubs::Stubs,
}

/// How the emulator is reached and how strictly it reads records requests.
#[derive(Debug)]
pub(crate) struct Served {
    /// The data host's base URL.
    pub(crate) api_base_url: String,
    /// The application host's base URL, ending in `/api`.
    pub(crate) app_base_url: String,
    /// Lenient mode ([`EmulatorConfig::lenient`](crate::EmulatorConfig::lenient)).
    pub(crate) lenient: bool,
    /// What one client may take ([`Limits`](crate::Limits)).
    pub(crate) limits: crate::config::limits::Limits,
    /// The request journal.
    pub(crate) journal: Arc<crate::http::journal::Journal>,
    /// The stubs.
    pub(crate) stubs: crate::http::stubs::Stubs,
}

impl AppState {
    pub(crate) fn new(
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
            gates: crate::http::admission::Gates::default(),
            journal,
            stubs,
        }))
    }

    /// Waits for `db`'s turn, or refuses with `503` when the resource is busy.
    pub(crate) async fn admit(
        &self,
        db: Arc<dyn Backend>,
    ) -> Result<crate::http::admission::Admitted, crate::http::HttpError> {
        self.0.gates.admit(db, &self.0.limits).await
    }

    /// The request journal.
    pub(crate) fn journal(&self) -> &Arc<crate::http::journal::Journal> {
        &self.0.journal
    }

    /// The stubs, every project's.
    pub(crate) fn stubs(&self) -> &crate::http::stubs::Stubs {
        &self.0.stubs
    }

    /// Puts `project` back in its state at start, and its stubs back to the config file's.
    pub(crate) async fn reset_project(
        &self,
        project: &str,
    ) -> Result<crate::snapshot::SnapshotInfo, crate::snapshot::SnapshotError> {
        let done = self
            .snapshots()
            .restore(self.snapshot_parts(), project, crate::snapshot::START)
            .await?;
        if let Some(index) = self.stubs().project_index(project) {
            self.stubs().reset(index);
        }
        Ok(done)
    }

    /// What one client may take.
    pub(crate) fn limits(&self) -> &crate::config::limits::Limits {
        &self.0.limits
    }

    /// User sessions: accounts, tokens, codes.
    pub(crate) fn accounts(&self) -> &Accounts {
        &self.0.accounts
    }

    /// The served projects and their credentials.
    pub(crate) fn registry(&self) -> &Registry {
        &self.0.registry
    }

    /// The meta store (page settings).
    pub(crate) fn store(&self) -> &Store {
        &self.0.store
    }

    /// Every project's snapshots, its state at start included.
    pub(crate) fn snapshots(&self) -> &Snapshots {
        &self.0.snapshots
    }

    /// What a snapshot saves and restores.
    pub(crate) fn snapshot_parts(&self) -> Parts<'_> {
        Parts {
            catalog: &self.0.catalog,
            store: &self.0.store,
            accounts: &self.0.accounts,
        }
    }

    /// The connected resources' databases.
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.0.catalog
    }

    /// The data host's base URL, e.g. `http://127.0.0.1:PORT` (for absolute `next` links).
    pub(crate) fn api_base_url(&self) -> &str {
        &self.0.api_base_url
    }

    /// Lenient mode: records requests read like the data engine reads them, with no stricter
    /// refusals ([`EmulatorConfig::lenient`](crate::EmulatorConfig::lenient)).
    pub(crate) fn lenient(&self) -> bool {
        self.0.lenient
    }

    /// The application host's base URL, ending in `/api`.
    pub(crate) fn app_base_url(&self) -> &str {
        &self.0.app_base_url
    }
}
