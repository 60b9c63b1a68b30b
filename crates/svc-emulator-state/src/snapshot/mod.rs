//! A project's state kept under a name and put back: the rows of its resources (those its
//! resets put back: the built-in tools resource's users and teams, every resource whose
//! database the emulator keeps, and those opted in with `ResourceConfig::reset`), its page
//! settings and accounts in the meta store, and its sessions, which a restore ends.
//!
//! Every project's state at start is kept as the snapshot [`START`]: a reset is its restore.
//! Saving or restoring one project waits for any other save or restore of it; requests served
//! meanwhile see the state before or after, table by table (reset between tests, not during).

pub mod files;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::catalog::Catalog;
use crate::sessions::Accounts;
use crate::storage::{ProjectRows, Store, StoreError};
use crate::util::timestamp::format_millis;
use svc_emulator_core::backend::{Hold, Saved};
use svc_engine::EngineError;

/// The name of every project's state at start: its restore is a reset.
pub const START: &str = "start";

/// A snapshot name: 1 to 64 letters, digits, `.`, `_` or `-`.
const MAX_NAME: usize = 64;

/// What a reset, a snapshot or a restore could not do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SnapshotError {
    /// No served project has that name.
    #[error("no project {0:?}")]
    NoProject(String),
    /// The project has no snapshot of that name.
    #[error("project {project:?} has no snapshot {name:?}; its snapshots: {known}")]
    NoSnapshot {
        /// The project.
        project: String,
        /// The name asked for.
        name: String,
        /// The names it has, comma-separated.
        known: String,
    },
    /// The name cannot be a snapshot's.
    #[error("{0}")]
    BadName(String),
    /// A resource's database failed.
    #[error("resource {resource:?}: {error}")]
    Resource {
        /// The resource.
        resource: String,
        /// Its database's failure.
        error: EngineError,
    },
    /// The emulator's own store (page settings, accounts) failed.
    #[error("the emulator's own store: {0}")]
    Store(String),
    /// A file or folder of an export could not be written or read.
    #[error("{}: {message}", path.display())]
    Files {
        /// The file or folder.
        path: std::path::PathBuf,
        /// What went wrong, and what to do.
        message: String,
    },
}

impl SnapshotError {
    /// The store's failure, as the variant that says so (the store's error type stays this
    /// crate's own).
    pub(crate) fn store(e: StoreError) -> Self {
        Self::Store(e.to_string())
    }
}

/// One project's state as a save found it.
#[derive(Debug)]
struct ProjectState {
    /// Each resource put back, by name, with its database's copy.
    resources: Vec<(String, Saved)>,
    /// Its rows of the meta store.
    rows: ProjectRows,
    /// When it was saved (RFC 3339, milliseconds).
    saved_at: String,
}

/// What a save or a restore did, as the routes answer it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SnapshotInfo {
    /// The project.
    pub project: String,
    /// The snapshot's name (`start` for the state at start).
    pub name: String,
    /// When the snapshot was taken (RFC 3339, UTC, milliseconds).
    pub saved_at: String,
    /// The resources whose rows it holds, sorted (`__svc_app__` is the built-in users and
    /// teams).
    pub resources: Vec<String>,
    /// The project's resources it leaves as they are: databases the emulator does not own,
    /// not opted in with `ResourceConfig::reset`.
    pub kept: Vec<String>,
}

/// Every project's snapshots, the state at start included.
#[derive(Debug, Default)]
pub struct Snapshots {
    /// By project, then name.
    saved: Mutex<HashMap<String, BTreeMap<String, Arc<ProjectState>>>>,
    /// One turn per project: a save or restore waits for the one before it.
    turns: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// What a snapshot works on: the resources, the meta store, the sessions.
#[derive(Debug, Clone, Copy)]
pub struct Parts<'a> {
    /// The served resources.
    pub catalog: &'a Catalog,
    /// The meta store.
    pub store: &'a Store,
    /// The sessions service.
    pub accounts: &'a Accounts,
}

/// The caller holds no admission turn: a snapshot is the emulator's own work.
pub(crate) fn no_hold() -> Hold {
    Box::new(())
}

impl Snapshots {
    /// Keeps every project's state as it is now as its [`START`].
    pub async fn at_start(
        parts: Parts<'_>,
        projects: impl IntoIterator<Item = String>,
    ) -> Result<Self, SnapshotError> {
        let snapshots = Self::default();
        for project in projects {
            let state = save(parts, &project).await?;
            snapshots.keep(&project, START, state);
        }
        Ok(snapshots)
    }

    /// Keeps `project`'s state as it is now under `name`, replacing a snapshot of that name.
    pub async fn save(
        &self,
        parts: Parts<'_>,
        project: &str,
        name: &str,
    ) -> Result<SnapshotInfo, SnapshotError> {
        check_name(name)?;
        self.known(parts, project)?;
        let turn = self.turn(project);
        let _turn = turn.lock().await;
        let state = save(parts, project).await?;
        Ok(self.keep(project, name, state).info(parts, project, name))
    }

    /// Puts `project`'s state of snapshot `name` back ([`START`]: a reset).
    pub async fn restore(
        &self,
        parts: Parts<'_>,
        project: &str,
        name: &str,
    ) -> Result<SnapshotInfo, SnapshotError> {
        self.known(parts, project)?;
        let state = self.get(project, name)?;
        let turn = self.turn(project);
        let _turn = turn.lock().await;
        for (resource, saved) in &state.resources {
            let db = parts.catalog.get(project, resource).ok_or_else(|| {
                SnapshotError::NoProject(format!("{project} (resource {resource})"))
            })?;
            db.restore(Arc::clone(saved), no_hold())
                .await
                .map_err(|error| SnapshotError::Resource {
                    resource: resource.clone(),
                    error,
                })?;
        }
        parts
            .store
            .restore_project(project.to_owned(), state.rows.clone())
            .await
            .map_err(SnapshotError::store)?;
        parts
            .accounts
            .restored(project.to_owned())
            .await
            .map_err(SnapshotError::store)?;
        Ok(state.info(parts, project, name))
    }

    /// The snapshots of `project`, by name.
    pub fn list(
        &self,
        parts: Parts<'_>,
        project: &str,
    ) -> Result<Vec<SnapshotInfo>, SnapshotError> {
        self.known(parts, project)?;
        let saved = self.saved.lock().unwrap_or_else(|e| e.into_inner());
        Ok(saved
            .get(project)
            .into_iter()
            .flatten()
            .map(|(name, state)| state.info(parts, project, name))
            .collect())
    }

    /// Forgets `project`'s snapshot `name` (not [`START`]).
    pub fn delete(&self, parts: Parts<'_>, project: &str, name: &str) -> Result<(), SnapshotError> {
        check_name(name)?;
        self.known(parts, project)?;
        self.get(project, name)?;
        let mut saved = self.saved.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(names) = saved.get_mut(project) {
            names.remove(name);
        }
        Ok(())
    }

    /// Forgets every project's snapshots, the state at start included: what an emulator's stop
    /// does once it serves no more. The copies a database server keeps in a store of its own
    /// drop it as they go ([`stores_dropped`](svc_emulator_core::flow::export::stores_dropped)
    /// waits for that); a reset or restore after it finds no snapshot.
    pub fn end(&self) {
        let saved = std::mem::take(&mut *self.saved.lock().unwrap_or_else(|e| e.into_inner()));
        // Out of the lock: a copy's drop may take its time.
        drop(saved);
    }

    fn known(&self, parts: Parts<'_>, project: &str) -> Result<(), SnapshotError> {
        if parts.catalog.tools(project).is_none() {
            return Err(SnapshotError::NoProject(project.to_owned()));
        }
        Ok(())
    }

    fn get(&self, project: &str, name: &str) -> Result<Arc<ProjectState>, SnapshotError> {
        let saved = self.saved.lock().unwrap_or_else(|e| e.into_inner());
        let names = saved.get(project);
        names
            .and_then(|n| n.get(name))
            .cloned()
            .ok_or_else(|| SnapshotError::NoSnapshot {
                project: project.to_owned(),
                name: name.to_owned(),
                known: names
                    .map(|n| n.keys().cloned().collect::<Vec<_>>().join(", "))
                    .unwrap_or_default(),
            })
    }

    fn keep(&self, project: &str, name: &str, state: ProjectState) -> Arc<ProjectState> {
        let state = Arc::new(state);
        let mut saved = self.saved.lock().unwrap_or_else(|e| e.into_inner());
        saved
            .entry(project.to_owned())
            .or_default()
            .insert(name.to_owned(), Arc::clone(&state));
        state
    }

    fn turn(&self, project: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut turns = self.turns.lock().unwrap_or_else(|e| e.into_inner());
        Arc::clone(turns.entry(project.to_owned()).or_default())
    }
}

impl ProjectState {
    fn info(&self, parts: Parts<'_>, project: &str, name: &str) -> SnapshotInfo {
        SnapshotInfo {
            project: project.to_owned(),
            name: name.to_owned(),
            saved_at: self.saved_at.clone(),
            resources: self.resources.iter().map(|(r, _)| r.clone()).collect(),
            kept: parts.catalog.kept_by_reset(project),
        }
    }
}

/// `project`'s state as it is now.
async fn save(parts: Parts<'_>, project: &str) -> Result<ProjectState, SnapshotError> {
    let saved_at = format_millis(crate::util::timestamp::now_millis());
    let mut resources = Vec::new();
    for (name, db) in parts.catalog.reset_with(project) {
        let saved = db
            .save(no_hold())
            .await
            .map_err(|error| SnapshotError::Resource {
                resource: name.clone(),
                error,
            })?;
        resources.push((name, saved));
    }
    let rows = parts
        .store
        .save_project(project.to_owned())
        .await
        .map_err(SnapshotError::store)?;
    Ok(ProjectState {
        resources,
        rows,
        saved_at,
    })
}

/// A snapshot's name must be one path segment a person can type, and not [`START`]'s.
fn check_name(name: &str) -> Result<(), SnapshotError> {
    if name == START {
        return Err(SnapshotError::BadName(format!(
            "{START:?} is every project's state at start, kept by the emulator: restore it with \
             a reset, and give your snapshot another name"
        )));
    }
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    if name.is_empty()
        || name.len() > MAX_NAME
        || !name.chars().all(fits)
        || name == "."
        || name == ".."
    {
        return Err(SnapshotError::BadName(format!(
            "a snapshot name is 1 to {MAX_NAME} letters, digits, '.', '_' or '-' (not {name:?})"
        )));
    }
    Ok(())
}
