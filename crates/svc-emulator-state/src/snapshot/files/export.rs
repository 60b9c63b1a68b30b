//! One project's state as an export holds it ([`ProjectExport`]), taken from its resources'
//! databases and the emulator's store while no reset, snapshot or restore of it runs
//! ([`Snapshots::export`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::layout::EXPORT_FORMAT;
use crate::snapshot::{Parts, SnapshotError, Snapshots, no_hold};
use crate::storage::StoreRows;
use crate::util::timestamp::{format_millis, now_millis};

/// One project's state as an export holds it: what `GET /_emulator/projects/{project}/export`
/// answers, and what [`write_export`](super::write_export) writes in a directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProjectExport {
    /// The layout's version, [`EXPORT_FORMAT`].
    pub format: u32,
    /// The project.
    pub project: String,
    /// When it was exported (RFC 3339, UTC, milliseconds).
    pub exported_at: String,
    /// The resources whose records it holds, by name (`__svc_app__`: the built-in users and
    /// teams).
    pub resources: BTreeMap<String, ResourceExport>,
    /// The project's resources it leaves out: databases the emulator does not own, not opted
    /// in with `ResourceConfig::reset` (their data stays in them).
    pub kept: Vec<String>,
    /// Its rows of the emulator's own store, by table: page settings (`pages`, draft and
    /// published) and accounts (`account_*`).
    pub store: BTreeMap<String, StoreRows>,
}

/// One resource's records in an export.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceExport {
    /// Each model's records, by model name: a JSON array in key order, as the records routes
    /// answer them (the fixtures format).
    pub models: BTreeMap<String, Box<RawValue>>,
    /// What numbers the next generated keys, in the database's own terms (sequences,
    /// `AUTO_INCREMENT`s, SQLite's `sqlite_sequence`).
    pub keys: Value,
}

impl Snapshots {
    /// `project`'s state as it is now, as an export holds it (see the module's
    /// documentation): no reset, snapshot or restore of it runs meanwhile.
    pub async fn export(
        &self,
        parts: Parts<'_>,
        project: &str,
    ) -> Result<ProjectExport, SnapshotError> {
        self.known(parts, project)?;
        let turn = self.turn(project);
        let _turn = turn.lock().await;
        let exported_at = format_millis(now_millis());
        let mut resources = BTreeMap::new();
        for (name, db) in parts.catalog.reset_with(project) {
            let failed = |error| SnapshotError::Resource {
                resource: name.clone(),
                error,
            };
            let exported = db.export(no_hold()).await.map_err(failed)?;
            let mut models = BTreeMap::new();
            for (model, records) in exported.models {
                let raw = String::from_utf8(records)
                    .ok()
                    .and_then(|text| RawValue::from_string(text).ok())
                    .ok_or_else(|| {
                        SnapshotError::Store(format!(
                            "the records of model {model:?} of resource {name:?} are not JSON"
                        ))
                    })?;
                models.insert(model, raw);
            }
            let keys = exported.keys;
            resources.insert(name, ResourceExport { models, keys });
        }
        let store = parts
            .store
            .export_project(project.to_owned())
            .await
            .map_err(SnapshotError::store)?;
        Ok(ProjectExport {
            format: EXPORT_FORMAT,
            project: project.to_owned(),
            exported_at,
            resources,
            kept: parts.catalog.kept_by_reset(project),
            store,
        })
    }
}
