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
//! tokens are not for other local users.
//!
//! **Whole or not at all.** An export is written so that a process killed at any instant (a
//! SIGKILL, a power cut after the files reached the disk) leaves a directory that reads as the
//! whole earlier export or the whole new one, every project from the same export. Each export
//! has a generation (random), written in each of its projects' `project.json` and, for each
//! project, in the manifest. The new projects' folders are written whole beside the old ones
//! (`.<project>.partial-<generation>`); then each old folder is renamed aside
//! (`.<project>.old-<generation>`) and the new one into its place; then the manifest naming
//! the new generation is renamed over the old one: the export's one moment. Then the old
//! folders are removed. An import reads, for each project of the manifest, the folder of the
//! manifest's generation: its own, or, after a kill between the renames, the old one set
//! aside. The next export puts such a folder back and removes what a killed export left.
//! Into a directory with no export yet, the manifest of no project is written first: what a
//! killed first export leaves is refused by an import (there was no export) and written over
//! by the next export. One writer at a time: two exports into one directory at once may leave
//! one whose folders an import refuses, naming them.
//!
//! **What an import reads.** Regular files only, each within a limit: the manifest,
//! `project.json` and `store.json` up to 16 MiB, each model's records up to 1 GiB. A symbolic
//! link is followed, to a regular file only (an export copied with links still imports). A
//! FIFO, a device, a socket or a directory is refused before it is opened (opening a FIFO to
//! read waits for a writer), the file opened is checked again, and no more than the limit is
//! read from it, whatever its size said. Every project's files are read and checked before
//! anything is written, and a write that fails puts back what the import wrote before it (a
//! copy of each resource and of each project's page settings and accounts is kept first): an
//! import writes all of the export or none of it.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::catalog::Catalog;
use crate::catalog::fixtures::{check_fields, has_records};
use crate::config::fixtures::read::parse;
use crate::config::fixtures::{FixtureError, FixtureFile, Format};
use crate::snapshot::{Parts, SnapshotError, Snapshots, no_hold};
use crate::storage::tools::SEEDED_TEAMS;
use crate::storage::{ProjectRows, Store, StoreRows};
use crate::util::timestamp::{format_millis, now_millis};
use svc_emulator_core::backend::{Backend, Import, Saved};
use svc_emulator_core::private::{create_private_dir, create_private_file, prepare_data_dir};
use svc_engine::{ListSpec, Listing, Selection};
use svc_model::users::{TEAMS_MODEL, TOOLS_RESOURCE};

pub use crate::config::import::ImportOnRows;

/// The version of the layout an export writes; an import reads this one only.
pub const EXPORT_FORMAT: u32 = 1;

/// The file that marks a directory as an export, at its top.
const MANIFEST: &str = "svc-emulator-export.json";

/// The most an import reads of one file, and of what.
#[derive(Debug, Clone, Copy)]
struct Limit {
    bytes: u64,
    of: &'static str,
    /// What to do with a file this large.
    hint: &'static str,
}

/// The manifest, a `project.json` or a `store.json`: 16 MiB.
const JSON_LIMIT: Limit = Limit {
    bytes: 16 << 20,
    of: "an export's manifest, project.json or store.json",
    hint: "an export writes none this large: put the export's own file back, or export again",
};

/// One model's records: 1 GiB.
const RECORDS_LIMIT: Limit = Limit {
    bytes: 1 << 30,
    of: "one model's records file",
    hint: "keep a model this large in a database of your own (a resource's `database`, \
           without `reset`), which an export leaves out and an import leaves as it is",
};

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
    /// The export that wrote it, as the manifest names it (none in an export written before
    /// generations, whose manifest names none either).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    generation: Option<String>,
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
    /// Each project's generation: the export whose folder of it is the one to read.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    generations: BTreeMap<String, String>,
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
/// or an earlier export, whose folders of those projects are replaced, all at one moment.
/// Blocking.
pub fn write_export(dir: &Path, exports: &[ProjectExport]) -> Result<(), SnapshotError> {
    write_export_until(dir, exports, usize::MAX).map(drop)
}

/// [`write_export`] stopped after its first `steps` steps, as a SIGKILL there would stop it:
/// nothing after them runs and nothing is tidied. Whether it finished. For the tests that
/// check an export killed at any step.
#[doc(hidden)]
pub fn write_export_until(
    dir: &Path,
    exports: &[ProjectExport],
    steps: usize,
) -> Result<bool, SnapshotError> {
    let mut steps = Steps(steps);
    let names = exports
        .iter()
        .map(|e| file_name(&e.project, "project"))
        .collect::<Result<Vec<_>, _>>()?;
    let generation = uuid::Uuid::new_v4().simple().to_string();
    let mut manifest = match earlier_manifest(dir)? {
        Some(manifest) => manifest,
        None => {
            // An export of no project, first: what a kill leaves from here on is an export's
            // directory, which the next export writes over, not a stranger's.
            let empty = Manifest {
                format: EXPORT_FORMAT,
                written_by: written_by(),
                projects: Vec::new(),
                generations: BTreeMap::new(),
            };
            if !dir.exists() {
                create_private_dir(dir)
                    .map_err(|e| files_error(dir, format!("cannot create it: {e}")))?;
            }
            if !commit_manifest(dir, &empty, &mut steps)? {
                return Ok(false);
            }
            empty
        }
    };
    if !settle(dir, &manifest, &mut steps)? {
        return Ok(false);
    }
    // Each new folder, whole, beside the old one: nothing reads it yet.
    for (export, name) in exports.iter().zip(&names) {
        if !steps.next() {
            return Ok(false);
        }
        let partial = dir.join(format!(".{name}.partial-{generation}"));
        if let Err(e) = write_project(&partial, export, &generation) {
            let _ = fs::remove_dir_all(&partial);
            return Err(e);
        }
    }
    // Each old folder aside, where an import still finds it (it is what the manifest names),
    // and the new one into its place.
    for name in &names {
        let folder = dir.join(name);
        if fs::symlink_metadata(&folder).is_ok() {
            if !steps.next() {
                return Ok(false);
            }
            let aside = dir.join(format!(".{name}.old-{generation}"));
            fs::rename(&folder, &aside).map_err(|e| {
                files_error(&folder, format!("cannot set the earlier export aside: {e}"))
            })?;
        }
        if !steps.next() {
            return Ok(false);
        }
        let partial = dir.join(format!(".{name}.partial-{generation}"));
        fs::rename(&partial, &folder)
            .map_err(|e| files_error(&folder, format!("cannot write it: {e}")))?;
    }
    // The manifest naming the new generation: the export's one moment.
    for export in exports {
        if !manifest.projects.contains(&export.project) {
            manifest.projects.push(export.project.clone());
        }
        manifest
            .generations
            .insert(export.project.clone(), generation.clone());
    }
    manifest.projects.sort();
    manifest.written_by = written_by();
    if !commit_manifest(dir, &manifest, &mut steps)? {
        return Ok(false);
    }
    // The old folders, which nothing reads any more. One left (a failure here) is removed by
    // the next export.
    for name in &names {
        let aside = dir.join(format!(".{name}.old-{generation}"));
        if fs::symlink_metadata(&aside).is_ok() {
            if !steps.next() {
                return Ok(false);
            }
            let _ = fs::remove_dir_all(&aside);
        }
    }
    Ok(true)
}

/// The steps an export may still take ([`write_export_until`]).
struct Steps(usize);

impl Steps {
    /// Whether the next step runs (and counts it).
    fn next(&mut self) -> bool {
        let runs = self.0 > 0;
        self.0 = self.0.saturating_sub(1);
        runs
    }
}

/// `svc-emulator <version>`, the writer a manifest names.
fn written_by() -> String {
    format!("svc-emulator {}", env!("CARGO_PKG_VERSION"))
}

/// Writes `manifest` beside the one in `dir` and renames it over it (two steps); whether it
/// got that far.
fn commit_manifest(
    dir: &Path,
    manifest: &Manifest,
    steps: &mut Steps,
) -> Result<bool, SnapshotError> {
    let path = dir.join(MANIFEST);
    let partial = dir.join(format!(
        ".{MANIFEST}.partial-{}",
        uuid::Uuid::new_v4().simple()
    ));
    if !steps.next() {
        return Ok(false);
    }
    write_private(&partial, &pretty(manifest)?)?;
    if !steps.next() {
        return Ok(false);
    }
    fs::rename(&partial, &path).map_err(|e| files_error(&path, format!("cannot write it: {e}")))?;
    // The rename itself on the disk, where the system allows a directory to be synced.
    if let Ok(folder) = fs::File::open(dir) {
        let _ = folder.sync_all();
    }
    Ok(true)
}

/// What exports killed midway left in `dir`, mended: each project of `manifest` whose folder
/// of its generation was set aside is put back in its place, and every other folder or file an
/// export sets aside is removed. Every step leaves what an import reads as it was.
fn settle(dir: &Path, manifest: &Manifest, steps: &mut Steps) -> Result<bool, SnapshotError> {
    for project in &manifest.projects {
        let name = file_name(project, "project")?;
        let folder = dir.join(name);
        let Ok((found, _)) = project_folder(dir, manifest, project) else {
            // None to read (an import says so): the next export of it replaces it.
            continue;
        };
        if found == folder {
            continue;
        }
        if fs::symlink_metadata(&folder).is_ok() {
            // A newer folder that no manifest names: set aside too, to be removed below.
            if !steps.next() {
                return Ok(false);
            }
            let stale = dir.join(format!(".{name}.partial-{}", uuid::Uuid::new_v4().simple()));
            fs::rename(&folder, &stale)
                .map_err(|e| files_error(&folder, format!("cannot set it aside: {e}")))?;
        }
        if !steps.next() {
            return Ok(false);
        }
        fs::rename(&found, &folder).map_err(|e| {
            files_error(
                &found,
                format!("cannot put it back as {}: {e}", folder.display()),
            )
        })?;
    }
    let entries =
        fs::read_dir(dir).map_err(|e| files_error(dir, format!("cannot list it: {e}")))?;
    for entry in entries.flatten() {
        if !set_aside(&entry.file_name().to_string_lossy()) {
            continue;
        }
        if !steps.next() {
            return Ok(false);
        }
        let path = entry.path();
        let _ = match entry.file_type() {
            Ok(kind) if kind.is_dir() => fs::remove_dir_all(&path),
            _ => fs::remove_file(&path),
        };
    }
    Ok(true)
}

/// Whether `name` is a folder or file an export sets aside: `.<name>.partial-<id>` (being
/// written) or `.<name>.old-<id>` (replaced).
fn set_aside(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    [".partial-", ".old-"].iter().any(|mark| {
        rest.rsplit_once(mark)
            .is_some_and(|(of, id)| !of.is_empty() && !id.is_empty())
    })
}

/// The folder of `project` that the export in `dir` holds, with its `project.json`: the
/// folder named after it, or, where an export was killed between its renames, the folder
/// set aside that is of the manifest's generation.
fn project_folder(
    dir: &Path,
    manifest: &Manifest,
    project: &str,
) -> Result<(PathBuf, ProjectFile), SnapshotError> {
    let name = file_name(project, "project")?;
    let folder = dir.join(name);
    let expected = manifest.generations.get(project);
    let own = read_json::<ProjectFile>(&folder.join("project.json"), JSON_LIMIT);
    let why = match own {
        Ok(file) if file.generation.as_ref() == expected => return Ok((folder, file)),
        Ok(_) => None,
        Err(e) => Some(e),
    };
    let prefix = format!(".{name}.old-");
    let mut aside: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| files_error(dir, format!("cannot list it: {e}")))?
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(&prefix))
        .map(|entry| entry.path())
        .collect();
    aside.sort();
    for candidate in aside {
        if let Ok(file) = read_json::<ProjectFile>(&candidate.join("project.json"), JSON_LIMIT)
            && file.generation.as_ref() == expected
            && file.project == project
        {
            return Ok((candidate, file));
        }
    }
    if fs::symlink_metadata(&folder).is_err() {
        return Err(files_error(
            &folder,
            format!(
                "missing, and {MANIFEST} names project {project:?}: the export is not whole \
                 (a folder was moved or deleted): export again, or give another export"
            ),
        ));
    }
    Err(why.unwrap_or_else(|| {
        files_error(
            &folder,
            format!(
                "not the folder of the export that {MANIFEST} names (an export into {} was \
                 interrupted, or its files were changed since): export again, or give another \
                 export",
                dir.display()
            ),
        )
    }))
}

/// Whether an export may be written to `dir`: a missing or empty directory, or an earlier
/// export of this format (its folders of the projects written are replaced). What
/// [`write_export`] checks first, for a caller that asks before it exports.
pub fn check_export_dir(dir: &Path) -> Result<(), SnapshotError> {
    earlier_manifest(dir).map(drop)
}

/// A warning when other users can write where an export into `dir` goes: in `dir`, or, while
/// it does not exist, in the directory it will be made in (they could replace the export's
/// files before an import reads them, or put a folder of their own in its place). The rule of
/// `--data`'s directory, whose function ([`prepare_data_dir`]) this calls as if the export's
/// manifest (or, while `dir` is missing, `dir` itself) were the data file: a missing directory
/// above it is made `0700`; one that is not sticky and holds nothing but entries named like
/// it (or nothing) is tightened to `0700`; any other is left as it is, with this warning when
/// others can write in it. Blocking.
pub fn export_dir_warning(dir: &Path) -> Result<Option<String>, SnapshotError> {
    let (checked, within) = if dir.is_dir() {
        (dir.to_owned(), dir.join(MANIFEST))
    } else {
        let parent = match dir.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => PathBuf::from("."),
        };
        (parent, dir.to_owned())
    };
    let warned = prepare_data_dir(&within)
        .map_err(|e| files_error(&checked, format!("cannot create it: {e}")))?;
    let mode = match fs::metadata(&checked) {
        #[cfg(unix)]
        Ok(meta) => {
            use std::os::unix::fs::PermissionsExt;
            format!(" (mode {:04o})", meta.permissions().mode() & 0o7777)
        }
        _ => String::new(),
    };
    let what = if checked == dir {
        format!("the export directory {}", dir.display())
    } else {
        format!(
            "the directory {} that the export {} will be made in",
            checked.display(),
            dir.display()
        )
    };
    Ok(warned.map(|_| {
        format!(
            "{what} can be written by other users{mode}: they could replace the export's files \
             (records, password hashes, refresh tokens) before an import reads them, or put \
             their own in its place. Run `chmod go-w {}`, or export to a directory only you \
             can write.",
            checked.display()
        )
    }))
}

/// The manifest of the export in `dir` (none where `dir` is missing or empty, or holds no more
/// than what a killed export set aside), or why no export may be written there.
fn earlier_manifest(dir: &Path) -> Result<Option<Manifest>, SnapshotError> {
    let manifest_path = dir.join(MANIFEST);
    match read_export_file(&manifest_path, JSON_LIMIT) {
        Ok(bytes) => read_manifest(&manifest_path, &bytes).map(Some),
        Err(Unread::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            if dir.exists() && !dir.is_dir() {
                return Err(files_error(dir, "not a directory"));
            }
            let holds_files = fs::read_dir(dir)
                .map(|entries| {
                    entries
                        .flatten()
                        .any(|e| !set_aside(&e.file_name().to_string_lossy()))
                })
                .unwrap_or(false);
            if holds_files {
                return Err(files_error(
                    dir,
                    "the directory holds files and is not an export (it has no \
                     svc-emulator-export.json): give a new or empty directory, or an earlier \
                     export's",
                ));
            }
            Ok(None)
        }
        Err(e) => Err(files_error(&manifest_path, e.to_string())),
    }
}

/// Writes one project's folder, `folder` (new), as of export `generation`.
fn write_project(
    folder: &Path,
    export: &ProjectExport,
    generation: &str,
) -> Result<(), SnapshotError> {
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
        generation: Some(generation.to_owned()),
        kept: export.kept.clone(),
        resources,
    };
    write_private(&folder.join("store.json"), &pretty(&export.store)?)?;
    write_private(&folder.join("project.json"), &pretty(&project)?)
}

/// What an import writes, read and checked whole before anything is written.
enum Write {
    /// A resource's records.
    Resource {
        resource: String,
        db: Arc<dyn Backend>,
        import: Import,
    },
    /// A project's page settings and accounts.
    Store {
        rows: BTreeMap<String, StoreRows>,
        replace: bool,
    },
}

/// One project of an import: what it writes, and what it leaves as `--import-on-rows` says.
struct Planned {
    project: String,
    folder: PathBuf,
    /// Each write, or the line of what was left.
    items: Vec<Result<Write, String>>,
}

/// The copy kept to undo one write of an import.
enum Undo {
    Resource {
        resource: String,
        db: Arc<dyn Backend>,
        saved: Saved,
    },
    Store {
        project: String,
        rows: ProjectRows,
    },
}

/// Reads the export in `dir` and writes it into the served projects, before the state at
/// start is kept (a reset then puts the imported state back). `on_rows` says what to do where
/// rows are already. All of it or none: every project's files are read and checked first, and
/// a write that fails puts back what was written before it. Blocking (it waits for the
/// databases on the runtime). What it wrote, one line a project.
pub fn import_dir(
    dir: &Path,
    catalog: &Catalog,
    store: &Store,
    on_rows: ImportOnRows,
) -> Result<Vec<String>, SnapshotError> {
    let manifest_path = dir.join(MANIFEST);
    let bytes = read_export_file(&manifest_path, JSON_LIMIT).map_err(|e| match e {
        Unread::Io(e) => files_error(
            &manifest_path,
            format!(
                "cannot read it ({e}): --import takes a directory that an export wrote \
                 (svc emulator export DIR, --export-on-exit DIR)"
            ),
        ),
        refused => files_error(&manifest_path, refused.to_string()),
    })?;
    let manifest = read_manifest(&manifest_path, &bytes)?;
    if manifest.projects.is_empty() {
        return Err(files_error(
            &manifest_path,
            "the export holds no project (an export into this directory was interrupted \
             before its first project was in): export again",
        ));
    }
    let mut planned = Vec::new();
    for project in &manifest.projects {
        planned.push(plan_project(
            dir, &manifest, project, catalog, store, on_rows,
        )?);
    }
    write_planned(planned, store)
}

/// Reads and checks `project`'s files, and what it holds already: what its import writes.
fn plan_project(
    dir: &Path,
    manifest: &Manifest,
    project: &str,
    catalog: &Catalog,
    store: &Store,
    on_rows: ImportOnRows,
) -> Result<Planned, SnapshotError> {
    let (folder, file) = project_folder(dir, manifest, project)?;
    if catalog.tools(project).is_none() {
        return Err(files_error(
            &folder,
            format!(
                "the export holds project {project:?}, which this emulator does not serve: \
                 start it with the config the export was made with"
            ),
        ));
    }
    let mut items = Vec::new();
    for (resource, models) in &file.resources {
        let db = catalog.get(project, resource).ok_or_else(|| {
            files_error(
                &folder,
                format!(
                    "the export holds resource {resource:?} of project {project:?}, which this \
                     emulator does not serve"
                ),
            )
        })?;
        let records_dir = folder
            .join("records")
            .join(file_name(resource, "resource")?);
        items.push(plan_resource(db, resource, &records_dir, models, on_rows)?);
    }
    let store_path = folder.join("store.json");
    let rows: BTreeMap<String, StoreRows> = read_json(&store_path, JSON_LIMIT)?;
    store
        .check_import(&rows)
        .map_err(|e| files_error(&store_path, e.to_string()))?;
    items.push(plan_store(store, project, rows, on_rows)?);
    Ok(Planned {
        project: project.to_owned(),
        folder,
        items,
    })
}

/// Writes what was planned, each project in turn; where a write fails, puts back what the
/// writes before it (and it) wrote, from copies kept before the first.
fn write_planned(planned: Vec<Planned>, store: &Store) -> Result<Vec<String>, SnapshotError> {
    let runtime = tokio::runtime::Handle::current();
    let mut copies = Vec::new();
    for project in &planned {
        for write in project.items.iter().flatten() {
            copies.push(match write {
                Write::Resource { resource, db, .. } => Undo::Resource {
                    resource: resource.clone(),
                    db: Arc::clone(db),
                    saved: runtime
                        .block_on(Arc::clone(db).save(no_hold()))
                        .map_err(|error| {
                            files_error(
                                &project.folder,
                                format!(
                                    "project {:?}: resource {resource:?}: an import keeps a \
                                     copy of what it writes over first, to put it back if it \
                                     fails, and that copy failed: {error}. Nothing was written \
                                     (the copy needs what a reset needs: on PostgreSQL, CREATE \
                                     on the database; on MySQL, the right to create \
                                     svc_emulator_saved_% databases)",
                                    project.project
                                ),
                            )
                        })?,
                },
                Write::Store { .. } => Undo::Store {
                    project: project.project.clone(),
                    rows: runtime.block_on(store.save_project(project.project.clone()))?,
                },
            });
        }
    }
    let mut copies = copies.into_iter();
    let mut tried = Vec::new();
    let mut done = Vec::new();
    for project in planned {
        let mut lines = Vec::new();
        for item in project.items {
            let write = match item {
                Ok(write) => write,
                Err(line) => {
                    lines.push(line);
                    continue;
                }
            };
            tried.extend(copies.next());
            match run_write(write, &project.project, store) {
                Ok(line) => lines.push(line),
                Err(e) => {
                    let message = match undo(tried, store) {
                        Ok(()) => format!(
                            "project {:?}: {e}; nothing of the export is kept (what the import \
                             wrote before is undone): mend the export, or export again",
                            project.project
                        ),
                        Err(undone) => format!(
                            "project {:?}: {e}; and putting back what the import wrote before \
                             failed ({undone}): the data may hold part of the export; start \
                             from a new --data file (or your databases as they were), then \
                             import again",
                            project.project
                        ),
                    };
                    return Err(files_error(&project.folder, message));
                }
            }
        }
        done.push(format!(
            "project {:?}: {}",
            project.project,
            lines.join("; ")
        ));
    }
    Ok(done)
}

/// Runs one write of an import: what it wrote, as a line.
fn run_write(write: Write, project: &str, store: &Store) -> Result<String, SnapshotError> {
    match write {
        Write::Resource {
            resource,
            db,
            import,
        } => {
            let written = tokio::runtime::Handle::current()
                .block_on(db.import(import, no_hold()))
                .map_err(|error| SnapshotError::Resource {
                    resource: resource.clone(),
                    error,
                })?;
            Ok(format!("{resource}: {written} record(s)"))
        }
        Write::Store { rows, replace } => {
            let written = store.import_project(project, &rows, replace)?;
            Ok(format!("{written} page setting and account row(s)"))
        }
    }
}

/// Puts back the copies of what an import wrote, the last first.
fn undo(copies: Vec<Undo>, store: &Store) -> Result<(), SnapshotError> {
    let runtime = tokio::runtime::Handle::current();
    for copy in copies.into_iter().rev() {
        match copy {
            Undo::Resource {
                resource,
                db,
                saved,
            } => runtime
                .block_on(db.restore(saved, no_hold()))
                .map_err(|error| SnapshotError::Resource { resource, error })?,
            Undo::Store { project, rows } => {
                runtime.block_on(store.restore_project(project, rows))?;
            }
        }
    }
    Ok(())
}

/// Reads and checks one resource's records from `records_dir`: what its import writes, or the
/// line saying it is left as it is.
fn plan_resource(
    db: Arc<dyn Backend>,
    resource: &str,
    records_dir: &Path,
    file: &ResourceFile,
    on_rows: ImportOnRows,
) -> Result<Result<Write, String>, SnapshotError> {
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
        let bytes = read_export_file(&path, RECORDS_LIMIT)
            .map_err(|e| in_resource(FixtureError::new(&path, e.to_string()).for_model(model)))?;
        let records = parse(&fixture, bytes).map_err(in_resource)?;
        check_fields(db.as_ref(), &fixture, &records).map_err(in_resource)?;
        let rows =
            runtime
                .block_on(has_records(&db, model))
                .map_err(|error| SnapshotError::Resource {
                    resource: resource.to_owned(),
                    error,
                })?;
        if rows && !(resource == TOOLS_RESOURCE && only_seeded_teams(&db, model)?) {
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
            return Ok(Err(format!(
                "{resource}: skipped, as --import-on-rows says ({} held records)",
                held.join(", ")
            )));
        }
        (false, ImportOnRows::Replace) => true,
        (false, _) => false,
    };
    // The export's next keys are right when the models hold its rows only.
    let keys = (held.is_empty() || replace).then(|| file.keys.clone());
    Ok(Ok(Write::Resource {
        resource: resource.to_owned(),
        db,
        import: Import {
            models,
            replace,
            keys,
        },
    }))
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

/// What an import does with a project's page settings and accounts, `rows`: the write, or the
/// line saying they are left as they are.
fn plan_store(
    store: &Store,
    project: &str,
    rows: BTreeMap<String, StoreRows>,
    on_rows: ImportOnRows,
) -> Result<Result<Write, String>, SnapshotError> {
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
            return Ok(Err(
                "page settings and accounts: skipped, as --import-on-rows says".to_owned(),
            ));
        }
        (false, ImportOnRows::Replace) => true,
        (false, _) => false,
    };
    Ok(Ok(Write::Store { rows, replace }))
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
fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    limit: Limit,
) -> Result<T, SnapshotError> {
    let bytes = read_export_file(path, limit).map_err(|e| files_error(path, e.to_string()))?;
    serde_json::from_slice(&bytes).map_err(|e| files_error(path, format!("not readable: {e}")))
}

/// Why a file of an export was not read.
#[derive(Debug)]
enum Unread {
    /// It could not be opened or read: missing, not allowed.
    Io(std::io::Error),
    /// It is not a file an export writes: what it is, and what to do.
    Refused(String),
}

impl fmt::Display for Unread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unread::Io(e) => write!(f, "cannot read it: {e}"),
            Unread::Refused(why) => f.write_str(why),
        }
    }
}

/// The file `path` of an export, whole, when it is a regular file (a symbolic link is followed,
/// to a regular file only) of at most `limit` bytes. Anything else is refused before it is
/// opened (opening a FIFO to read waits for a writer; a device may never end), the file opened
/// is checked again (it may have been replaced meanwhile), and no more than `limit` bytes are
/// read from it, whatever its size said.
fn read_export_file(path: &Path, limit: Limit) -> Result<Vec<u8>, Unread> {
    check_file(&fs::metadata(path).map_err(Unread::Io)?, limit)?;
    let file = fs::File::open(path).map_err(Unread::Io)?;
    let opened = file.metadata().map_err(Unread::Io)?;
    check_file(&opened, limit)?;
    let mut bytes = Vec::with_capacity(usize::try_from(opened.len()).unwrap_or(0));
    file.take(limit.bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Unread::Io)?;
    if bytes.len() as u64 > limit.bytes {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// Why a file of `meta` is not read within `limit`, if it is not.
fn check_file(meta: &fs::Metadata, limit: Limit) -> Result<(), Unread> {
    if !meta.is_file() {
        return Err(Unread::Refused(format!(
            "{}, not a regular file: an import reads only the regular files an export writes \
             (a symbolic link is followed to one); put the export's own file back, or export \
             again",
            file_kind(meta)
        )));
    }
    if meta.len() > limit.bytes {
        return Err(too_large(limit));
    }
    Ok(())
}

/// A file larger than `limit`, refused.
fn too_large(limit: Limit) -> Unread {
    let size = match limit.bytes {
        bytes if bytes % (1 << 30) == 0 => format!("{} GiB", bytes >> 30),
        bytes if bytes % (1 << 20) == 0 => format!("{} MiB", bytes >> 20),
        bytes => format!("{bytes} bytes"),
    };
    Unread::Refused(format!(
        "larger than {size}, the most an import reads of {}: {}",
        limit.of, limit.hint
    ))
}

/// What a file that is not a regular one is, in words.
fn file_kind(meta: &fs::Metadata) -> &'static str {
    let kind = meta.file_type();
    if kind.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    "not a file"
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A file whose size says less than it holds (as `/proc`'s files say 0) is read no further
    /// than the limit: the limit holds whatever the size said.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_is_read_no_further_than_its_limit_whatever_its_size_says() {
        let path = Path::new("/proc/self/status");
        assert_eq!(fs::metadata(path).unwrap().len(), 0);
        let small = Limit {
            bytes: 10,
            of: "a test's file",
            hint: "a hint",
        };
        let refused = read_export_file(path, small).unwrap_err().to_string();
        assert_eq!(
            refused,
            "larger than 10 bytes, the most an import reads of a test's file: a hint"
        );
        assert!(read_export_file(path, JSON_LIMIT).unwrap().len() > 10);
    }

    #[test]
    fn what_an_export_sets_aside_is_known_by_its_name() {
        for name in [
            ".demo.partial-0123abcd",
            ".demo.old-0123abcd",
            ".my.project.old-1",
            ".svc-emulator-export.json.partial-0123abcd",
        ] {
            assert!(set_aside(name), "{name}");
        }
        for name in [
            "demo",
            ".DS_Store",
            ".old-1",
            ".demo.old-",
            "svc-emulator-export.json",
        ] {
            assert!(!set_aside(name), "{name}");
        }
    }
}
