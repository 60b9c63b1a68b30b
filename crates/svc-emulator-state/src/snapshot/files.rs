//! A project's state on disk: an export written to a directory (`svc emulator export DIR`,
//! `--export-on-exit DIR`, `Emulator::export`) and read back when an
//! emulator starts (`--import DIR`, `EmulatorConfig::import`).
//!
//! What an export holds is what a reset puts back ([`Snapshots`]' resources): every record of
//! the resources whose data the emulator keeps (the built-in users and teams, `__svc_app__`,
//! the databases it owns, and those opted in with `ResourceConfig::reset`), what numbers their
//! next generated keys, and the project's page settings (draft and published) and accounts.
//! Each resource is read in one transaction of its database and the page settings and
//! accounts in one of the emulator's store, while no reset, snapshot or restore of the project
//! runs: each is one moment's.
//!
//! ```text
//! DIR/svc-emulator-export.json                  the format and the projects it holds
//! DIR/<project>/project.json                    when, the resources, their next keys
//! DIR/<project>/store.json                      page settings and accounts (0600)
//! DIR/<project>/records/<resource>/<model>.json each model's records, the fixtures format
//! ```
//!
//! Every file is created `0600` and every folder `0700`: records, password hashes and refresh
//! tokens are not for other local users. A project's folder is written beside the old one and
//! renamed over it when whole: an export that fails leaves the one before it.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::catalog::Catalog;
use crate::catalog::fixtures::{check_fields, has_records};
use crate::config::fixtures::read::read;
use crate::config::fixtures::{FixtureError, FixtureFile, Format};
use crate::snapshot::{Parts, SnapshotError, Snapshots, no_hold};
use crate::storage::tools::SEEDED_TEAMS;
use crate::storage::{Store, StoreRows};
use crate::util::timestamp::{format_millis, now_millis};
use svc_emulator_core::backend::{Backend, Import};
use svc_emulator_core::private::{create_private_dir, create_private_file};
use svc_engine::{ListSpec, Listing, Selection};
use svc_model::users::{TEAMS_MODEL, TOOLS_RESOURCE};

pub use crate::config::import::ImportOnRows;

/// The version of the layout an export writes; an import reads this one only.
pub const EXPORT_FORMAT: u32 = 1;

/// The file that marks a directory as an export, at its top.
const MANIFEST: &str = "svc-emulator-export.json";

/// One project's state as an export holds it: what `GET /_emulator/projects/{project}/export`
/// answers, and what [`write_export`] writes in a directory.
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

/// `project.json`: a project's export without its records and store, which have files of
/// their own.
#[derive(Debug, Serialize, Deserialize)]
struct ProjectFile {
    format: u32,
    project: String,
    exported_at: String,
    kept: Vec<String>,
    resources: BTreeMap<String, ResourceFile>,
}

/// A resource in `project.json`: its models (each a file of `records/<resource>/`) and keys.
#[derive(Debug, Serialize, Deserialize)]
struct ResourceFile {
    models: Vec<String>,
    keys: Value,
}

/// `svc-emulator-export.json`.
#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    /// The emulator that wrote it, `svc-emulator <version>`.
    written_by: String,
    /// The projects it holds, each a folder.
    projects: Vec<String>,
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
        let store = parts.store.export_project(project.to_owned()).await?;
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

/// Writes `exports` into `dir` (see the module's documentation): a missing or empty directory,
/// or an earlier export, whose folders of those projects are replaced. Blocking.
pub fn write_export(dir: &Path, exports: &[ProjectExport]) -> Result<(), SnapshotError> {
    let manifest_path = dir.join(MANIFEST);
    let mut projects = exported_projects(dir)?;
    if !dir.exists() {
        create_private_dir(dir).map_err(|e| files_error(dir, format!("cannot create it: {e}")))?;
    }
    for export in exports {
        let name = file_name(&export.project, "project")?;
        let partial = dir.join(format!(".{name}.partial-{}", std::process::id()));
        // A partial folder of a failed export before this one is not kept.
        let _ = fs::remove_dir_all(&partial);
        let written = write_project(&partial, export);
        if let Err(e) = written {
            let _ = fs::remove_dir_all(&partial);
            return Err(e);
        }
        let folder = dir.join(name);
        if folder.exists() {
            fs::remove_dir_all(&folder).map_err(|e| {
                files_error(&folder, format!("cannot replace the earlier export: {e}"))
            })?;
        }
        fs::rename(&partial, &folder)
            .map_err(|e| files_error(&folder, format!("cannot write it: {e}")))?;
        if !projects.contains(&export.project) {
            projects.push(export.project.clone());
        }
    }
    projects.sort();
    let manifest = Manifest {
        format: EXPORT_FORMAT,
        written_by: format!("svc-emulator {}", env!("CARGO_PKG_VERSION")),
        projects,
    };
    let partial = dir.join(format!(".{MANIFEST}.partial-{}", std::process::id()));
    let _ = fs::remove_file(&partial);
    write_private(&partial, &pretty(&manifest)?)?;
    fs::rename(&partial, &manifest_path)
        .map_err(|e| files_error(&manifest_path, format!("cannot write it: {e}")))
}

/// Whether an export may be written to `dir`: a missing or empty directory, or an earlier
/// export of this format (its folders of the projects written are replaced). What
/// [`write_export`] checks first, for a caller that asks before it exports.
pub fn check_export_dir(dir: &Path) -> Result<(), SnapshotError> {
    exported_projects(dir).map(drop)
}

/// The projects of the export in `dir` (none where it is missing or empty), or why no export
/// may be written there.
fn exported_projects(dir: &Path) -> Result<Vec<String>, SnapshotError> {
    let manifest_path = dir.join(MANIFEST);
    match fs::read(&manifest_path) {
        Ok(bytes) => Ok(read_manifest(&manifest_path, &bytes)?.projects),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if dir.exists() && !dir.is_dir() {
                return Err(files_error(dir, "not a directory"));
            }
            let holds_files = fs::read_dir(dir)
                .map(|mut entries| entries.next().is_some())
                .unwrap_or(false);
            if holds_files {
                return Err(files_error(
                    dir,
                    "the directory holds files and is not an export (it has no \
                     svc-emulator-export.json): give a new or empty directory, or an earlier \
                     export's",
                ));
            }
            Ok(Vec::new())
        }
        Err(e) => Err(files_error(&manifest_path, format!("cannot read it: {e}"))),
    }
}

/// Writes one project's folder, `folder` (new).
fn write_project(folder: &Path, export: &ProjectExport) -> Result<(), SnapshotError> {
    create_private_dir(folder)
        .map_err(|e| files_error(folder, format!("cannot create it: {e}")))?;
    let mut resources = BTreeMap::new();
    for (resource, records) in &export.resources {
        let resource_dir = folder
            .join("records")
            .join(file_name(resource, "resource")?);
        create_private_dir(&resource_dir)
            .map_err(|e| files_error(&resource_dir, format!("cannot create it: {e}")))?;
        for (model, json) in &records.models {
            let path = resource_dir.join(format!("{}.json", file_name(model, "model")?));
            write_private(&path, json.get().as_bytes())?;
        }
        resources.insert(
            resource.clone(),
            ResourceFile {
                models: records.models.keys().cloned().collect(),
                keys: records.keys.clone(),
            },
        );
    }
    let project = ProjectFile {
        format: export.format,
        project: export.project.clone(),
        exported_at: export.exported_at.clone(),
        kept: export.kept.clone(),
        resources,
    };
    write_private(&folder.join("project.json"), &pretty(&project)?)?;
    write_private(&folder.join("store.json"), &pretty(&export.store)?)
}

/// Reads the export in `dir` and writes it into the served projects, before the state at
/// start is kept (a reset then puts the imported state back). `on_rows` says what to do where
/// rows are already. Blocking (it waits for the databases on the runtime). What it wrote, one
/// line a project.
pub fn import_dir(
    dir: &Path,
    catalog: &Catalog,
    store: &Store,
    on_rows: ImportOnRows,
) -> Result<Vec<String>, SnapshotError> {
    let manifest_path = dir.join(MANIFEST);
    let bytes = fs::read(&manifest_path).map_err(|e| {
        files_error(
            &manifest_path,
            format!(
                "cannot read it ({e}): --import takes a directory that an export wrote \
                 (svc emulator export DIR, --export-on-exit DIR)"
            ),
        )
    })?;
    let manifest = read_manifest(&manifest_path, &bytes)?;
    let mut done = Vec::new();
    for project in &manifest.projects {
        let folder = dir.join(file_name(project, "project")?);
        let file: ProjectFile = read_json(&folder.join("project.json"))?;
        if catalog.tools(project).is_none() {
            return Err(files_error(
                &folder,
                format!(
                    "the export holds project {project:?}, which this emulator does not serve: \
                     start it with the config the export was made with"
                ),
            ));
        }
        let mut lines = Vec::new();
        for (resource, models) in &file.resources {
            let db = catalog.get(project, resource).ok_or_else(|| {
                files_error(
                    &folder,
                    format!(
                        "the export holds resource {resource:?} of project {project:?}, which \
                         this emulator does not serve"
                    ),
                )
            })?;
            let records_dir = folder
                .join("records")
                .join(file_name(resource, "resource")?);
            lines.push(import_resource(
                &db,
                resource,
                &records_dir,
                models,
                on_rows,
            )?);
        }
        let store_rows: BTreeMap<String, StoreRows> = read_json(&folder.join("store.json"))?;
        lines.push(import_store(store, project, &store_rows, on_rows)?);
        done.push(format!("project {project:?}: {}", lines.join("; ")));
    }
    Ok(done)
}

/// Imports one resource's records from `records_dir`.
fn import_resource(
    db: &Arc<dyn Backend>,
    resource: &str,
    records_dir: &Path,
    file: &ResourceFile,
    on_rows: ImportOnRows,
) -> Result<String, SnapshotError> {
    let runtime = tokio::runtime::Handle::current();
    let in_resource = |e: FixtureError| SnapshotError::Files {
        path: records_dir.to_owned(),
        message: e.in_resource(resource).to_string(),
    };
    let mut models = Vec::new();
    let mut held = Vec::new();
    for model in &file.models {
        let path = records_dir.join(format!("{}.json", file_name(model, "model")?));
        let fixture = FixtureFile {
            model: model.clone(),
            path: path.clone(),
            format: Format::Json,
        };
        if !db.has_model(model) {
            return Err(in_resource(
                FixtureError::new(&path, format!("the resource has no model {model:?}")).hint(
                    format!(
                        "its models: {}; import into the schema the export was made from",
                        db.model_names().join(", ")
                    ),
                ),
            ));
        }
        let records = read(&fixture).map_err(in_resource)?;
        check_fields(db.as_ref(), &fixture, &records).map_err(in_resource)?;
        let rows =
            runtime
                .block_on(has_records(db, model))
                .map_err(|error| SnapshotError::Resource {
                    resource: resource.to_owned(),
                    error,
                })?;
        if rows && !(resource == TOOLS_RESOURCE && only_seeded_teams(db, model)?) {
            held.push(model.clone());
        }
        models.push((
            model.clone(),
            records.records.into_iter().map(|r| r.body).collect(),
        ));
    }
    // The built-in teams every start seeds are the emulator's, and the export's too: written
    // over, not counted as rows there.
    let seeded = resource == TOOLS_RESOURCE;
    let replace = match (held.is_empty(), on_rows) {
        (true, _) => seeded,
        (false, ImportOnRows::Stop) => {
            return Err(SnapshotError::Files {
                path: records_dir.to_owned(),
                message: format!(
                    "resource {resource:?}: {} already {} records (rows of seed_sql or \
                     fixtures, or a database kept from an earlier start), and an import \
                     writes into empty models only; say what to do with --import-on-rows: \
                     replace (the export's state), add, or skip",
                    held.join(", "),
                    if held.len() == 1 { "holds" } else { "hold" }
                ),
            });
        }
        (false, ImportOnRows::Skip) => {
            return Ok(format!(
                "{resource}: skipped, as --import-on-rows says ({} held records)",
                held.join(", ")
            ));
        }
        (false, ImportOnRows::Replace) => true,
        (false, _) => false,
    };
    // The export's next keys are right when the models hold its rows only.
    let keys = (held.is_empty() || replace).then(|| file.keys.clone());
    let import = Import {
        models,
        replace,
        keys,
    };
    let written = runtime
        .block_on(Arc::clone(db).import(import, no_hold()))
        .map_err(|error| SnapshotError::Resource {
            resource: resource.to_owned(),
            error,
        })?;
    Ok(format!("{resource}: {written} record(s)"))
}

/// Whether `model` of the built-in tools resource is its teams, holding only the teams every
/// start seeds ([`SEEDED_TEAMS`]).
fn only_seeded_teams(db: &Arc<dyn Backend>, model: &str) -> Result<bool, SnapshotError> {
    if model != TEAMS_MODEL {
        return Ok(false);
    }
    let spec = ListSpec {
        selection: Selection::default(),
        order_by: Vec::new(),
        page: 1,
        per_page: SEEDED_TEAMS.len() as u64 + 1,
        no_pagination: false,
    };
    let listing = tokio::runtime::Handle::current()
        .block_on(Arc::clone(db).list(model.to_owned(), spec, no_hold()))
        .map_err(|error| SnapshotError::Resource {
            resource: TOOLS_RESOURCE.to_owned(),
            error,
        })?;
    let Listing::Page { records, .. } = listing else {
        return Ok(false);
    };
    let teams: Vec<Value> = serde_json::from_slice(&records.0).unwrap_or_default();
    let mut uids: Vec<&str> = teams.iter().filter_map(|t| t["uid"].as_str()).collect();
    uids.sort_unstable();
    let mut seeded: Vec<&str> = SEEDED_TEAMS.iter().map(|(uid, _)| *uid).collect();
    seeded.sort_unstable();
    Ok(uids == seeded && teams.len() == SEEDED_TEAMS.len())
}

/// Imports a project's page settings and accounts.
fn import_store(
    store: &Store,
    project: &str,
    rows: &BTreeMap<String, StoreRows>,
    on_rows: ImportOnRows,
) -> Result<String, SnapshotError> {
    let held = store.project_tables_with_rows(project)?;
    let replace = match (held.is_empty(), on_rows) {
        (true, _) => false,
        (false, ImportOnRows::Stop) => {
            return Err(SnapshotError::Store(format!(
                "project {project:?} already has {} in the emulator's store (a data path kept \
                 from an earlier start), and an import writes into an empty project only; say \
                 what to do with --import-on-rows: replace (the export's state), add, or skip",
                held.join(", ")
            )));
        }
        (false, ImportOnRows::Skip) => {
            return Ok("page settings and accounts: skipped, as --import-on-rows says".to_owned());
        }
        (false, ImportOnRows::Replace) => true,
        (false, _) => false,
    };
    let written = store.import_project(project, rows, replace)?;
    Ok(format!("{written} page setting and account row(s)"))
}

/// The manifest, checked.
fn read_manifest(path: &Path, bytes: &[u8]) -> Result<Manifest, SnapshotError> {
    let manifest: Manifest = serde_json::from_slice(bytes)
        .map_err(|e| files_error(path, format!("not an export's manifest: {e}")))?;
    if manifest.format != EXPORT_FORMAT {
        return Err(files_error(
            path,
            format!(
                "an export of format {} ({}), and this emulator reads format {EXPORT_FORMAT}: \
                 export again with this version",
                manifest.format, manifest.written_by
            ),
        ));
    }
    Ok(manifest)
}

/// A JSON file of an export.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, SnapshotError> {
    let bytes = fs::read(path).map_err(|e| files_error(path, format!("cannot read it: {e}")))?;
    serde_json::from_slice(&bytes).map_err(|e| files_error(path, format!("not readable: {e}")))
}

/// `value` as indented JSON, ending with a newline.
fn pretty<T: Serialize>(value: &T) -> Result<Vec<u8>, SnapshotError> {
    let mut bytes = serde_json::to_vec_pretty(value)
        .map_err(|e| SnapshotError::Store(format!("cannot write the export: {e}")))?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Writes `bytes` to the new file `path`, `0600`.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), SnapshotError> {
    let mut file = create_private_file(path)
        .map_err(|e| files_error(path, format!("cannot create it: {e}")))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| files_error(path, format!("cannot write it: {e}")))
}

/// `name` as one path segment, or why it cannot be one.
fn file_name<'n>(name: &'n str, what: &str) -> Result<&'n str, SnapshotError> {
    let unsafe_name = name.is_empty()
        || name == "."
        || name == ".."
        || name.starts_with('.')
        || name.contains(['/', '\\', '\0']);
    if unsafe_name {
        return Err(SnapshotError::Store(format!(
            "the {what} name {name:?} cannot be a file's name in an export (it is empty, starts \
             with '.', or holds '/', '\\' or NUL)"
        )));
    }
    Ok(name)
}

/// A failure of an export's file or folder `path`.
fn files_error(path: &Path, message: impl Into<String>) -> SnapshotError {
    SnapshotError::Files {
        path: path.to_owned(),
        message: message.into(),
    }
}
