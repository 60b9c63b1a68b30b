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
//! `project.json` and `store.json` up to 16 MiB, each model's records up to 1 GiB, and 1 GiB of
//! all of them together (each file counted each time it is read, a link's target too). A
//! symbolic link is followed, to a regular file only (an export copied with links still
//! imports), and never into `/proc`, `/sys` or `/dev` (whose files may say they are regular and
//! empty, then never end or wait: `/proc/kmsg`). A FIFO, a device, a socket or a directory is
//! refused before it is opened (opening a FIFO to read waits for a writer; opening a device may
//! act), the file is opened without waiting (`O_NONBLOCK`) and checked again as opened, and no
//! more than the limit is read from it, whatever its size said. A warning says when other users
//! could have changed what was read: the export's directory, the directory it is in, or a
//! folder or file of it owned by another user (root aside) or writable by others.
//!
//! **What an import writes.** The records of the resources an export holds only (those a reset
//! puts back): an export that holds records of another (a database given without `reset`,
//! listed under `kept`) stops the start, whatever its `project.json` says. Every project's
//! files are read and checked before anything is written, and a write that fails puts back what
//! the import wrote before it (a copy of each resource and of each project's page settings and
//! accounts is kept first): an import writes all of the export or none of it. The emulator's
//! store holds a mark from before the first write (committed to the disk) until after the last:
//! a start that finds it (an import killed midway: part of the export is written) stops, unless
//! it imports an export with `--import-on-rows replace`, which clears it when it ends.

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io::{Read, Write as _};
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
use crate::storage::{ImportMark, ProjectRows, Store, StoreRows};
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
        .map(|e| file_name(&e.project, "project").map_err(|why| files_error(dir, why)))
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
        let name = name_in(project, "project", &dir.join(MANIFEST))?;
        let folder = dir.join(name);
        let Ok((found, _)) = project_folder(dir, manifest, project, &mut Reader::unwatched())
        else {
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
    reader: &mut Reader,
) -> Result<(PathBuf, ProjectFile), SnapshotError> {
    let name = name_in(project, "project", &dir.join(MANIFEST))?;
    let folder = dir.join(name);
    let expected = manifest.generations.get(project);
    let own = read_json::<ProjectFile>(&folder.join("project.json"), JSON_LIMIT, reader);
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
        if let Ok(file) =
            read_json::<ProjectFile>(&candidate.join("project.json"), JSON_LIMIT, reader)
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

/// A warning when other users can write where an export into `dir` goes: in `dir`, or in the
/// directory it is (or will be) made in, where they could move it aside and put their own in
/// its place (they could replace the export's files before an import reads them). The rule of
/// `--data`'s directory, whose function ([`prepare_data_dir`]) this calls as if the export's
/// manifest were the data file (for `dir`, when it exists) and as if `dir` were (for the
/// directory above it): a missing directory above it is made `0700`; one that is not sticky and
/// holds nothing but entries named like it (or nothing) is tightened to `0700`; any other is
/// left as it is, with this warning when others can write in it. Blocking.
pub fn export_dir_warning(dir: &Path) -> Result<Option<String>, SnapshotError> {
    let parent = match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    let mut open = Vec::new();
    if dir.is_dir() {
        let warned = prepare_data_dir(&dir.join(MANIFEST))
            .map_err(|e| files_error(dir, format!("cannot create it: {e}")))?;
        open.extend(warned.map(|_| dir.to_owned()));
    }
    let warned = prepare_data_dir(dir)
        .map_err(|e| files_error(&parent, format!("cannot create it: {e}")))?;
    open.extend(warned.map(|_| parent));
    if open.is_empty() {
        return Ok(None);
    }
    let modes: Vec<String> = open
        .iter()
        .map(|path| {
            let what = if path == dir {
                format!("the export directory {}", dir.display())
            } else {
                format!(
                    "the directory {} that the export {} is made in",
                    path.display(),
                    dir.display()
                )
            };
            format!("{what}{}", mode_text(path))
        })
        .collect();
    let chmod: Vec<String> = open.iter().map(|p| p.display().to_string()).collect();
    Ok(Some(format!(
        "{} can be written by other users: they could replace the export's files (records, \
         password hashes, refresh tokens) before an import reads them, or put their own in its \
         place. Run `chmod go-w {}`, or export to a directory only you can write.",
        modes.join(", and "),
        chmod.join(" ")
    )))
}

/// ` (mode 0777)`: the mode of `path`, where known.
fn mode_text(path: &Path) -> String {
    match fs::metadata(path) {
        #[cfg(unix)]
        Ok(meta) => {
            use std::os::unix::fs::PermissionsExt;
            format!(" (mode {:04o})", meta.permissions().mode() & 0o7777)
        }
        _ => String::new(),
    }
}

/// The manifest of the export in `dir` (none where `dir` is missing or empty, or holds no more
/// than what a killed export set aside), or why no export may be written there.
fn earlier_manifest(dir: &Path) -> Result<Option<Manifest>, SnapshotError> {
    let manifest_path = dir.join(MANIFEST);
    match read_export_file(&manifest_path, JSON_LIMIT, &mut Reader::unwatched()) {
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
        let records_dir = folder.join("records");
        let resource_dir = records_dir
            .join(file_name(resource, "resource").map_err(|why| files_error(&records_dir, why))?);
        create_private_dir(&resource_dir)
            .map_err(|e| files_error(&resource_dir, format!("cannot create it: {e}")))?;
        for (model, json) in &records.models {
            let name = file_name(model, "model").map_err(|why| files_error(&resource_dir, why))?;
            let path = resource_dir.join(format!("{name}.json"));
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

/// What an import did: one line a project, and its warnings.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Imported {
    /// What it wrote, one line a project.
    pub lines: Vec<String>,
    /// What others could have changed of the export before it was read (see [`import_dir`]).
    pub warnings: Vec<String>,
}

/// Reads the export in `dir` and writes it into the served projects, before the state at
/// start is kept (a reset then puts the imported state back). `on_rows` says what to do where
/// rows are already. All of it or none: every project's files are read and checked first, and
/// a write that fails puts back what was written before it. Only the resources an export holds
/// are written (those a reset puts back): the export's records of any other stop it. The
/// store holds a mark from before the first write to after the last
/// ([`check_unfinished_import`]). A warning says when other users could change the export
/// (`dir`, the directory it is in, or any file or folder read). Blocking (it waits for the
/// databases on the runtime).
pub fn import_dir(
    dir: &Path,
    catalog: &Catalog,
    store: &Store,
    on_rows: ImportOnRows,
) -> Result<Imported, SnapshotError> {
    import_dir_until(dir, catalog, store, on_rows, usize::MAX).map(|done| done.unwrap_or_default())
}

/// [`import_dir`] stopped after its first `writes` writes, as a SIGKILL there would stop it:
/// nothing after them runs (nothing is undone, and the store's mark of an import under way
/// stays). `None` when it stopped so. For the tests of an import killed midway.
#[doc(hidden)]
pub fn import_dir_until(
    dir: &Path,
    catalog: &Catalog,
    store: &Store,
    on_rows: ImportOnRows,
    writes: usize,
) -> Result<Option<Imported>, SnapshotError> {
    let mut reader = Reader::watching();
    reader.note_dir(dir, false);
    let parent = match dir.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    reader.note_dir(&parent, true);
    let manifest_path = dir.join(MANIFEST);
    let bytes = read_export_file(&manifest_path, JSON_LIMIT, &mut reader).map_err(|e| match e {
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
    drop(bytes);
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
            dir,
            &manifest,
            project,
            catalog,
            store,
            on_rows,
            &mut reader,
        )?);
    }
    let warnings = reader.warning(dir).into_iter().collect();
    let mark = ImportMark {
        dir: dir.display().to_string(),
        began_at: format_millis(now_millis()),
    };
    Ok(write_planned(planned, store, &mark, Steps(writes))?
        .map(|lines| Imported { lines, warnings }))
}

/// Whether a start may use its store: not when an import began writing into it and did not
/// end (killed midway, the data holds part of an export), unless this start imports an export
/// with `--import-on-rows replace` (`import`), which writes the whole of it over what is there
/// and removes the mark when it ends. Why not, and what to do. `data` is the `--data` file.
pub fn check_unfinished_import(
    store: &Store,
    data: Option<&Path>,
    import: Option<(&Path, ImportOnRows)>,
) -> Result<(), String> {
    let mark = store.import_mark().map_err(|e| e.to_string())?;
    let Some(mark) = mark else {
        return Ok(());
    };
    if matches!(import, Some((_, ImportOnRows::Replace))) {
        return Ok(());
    }
    let beside = data.map_or_else(String::new, |data| {
        format!(" and the databases beside it ({}.*.sqlite)", data.display())
    });
    Err(format!(
        "an import of {dir} began writing at {began} and did not end (the emulator was killed \
         during it, or its machine stopped): the data holds part of the export and part of what \
         was there before, which no start serves as it is. Run the import again with --import \
         {dir} --import-on-rows replace, which writes the whole export over it and clears this \
         when it completes, or remove the --data file{beside} to start afresh",
        dir = mark.dir,
        began = mark.began_at,
    ))
}

/// Reads and checks `project`'s files, and what it holds already: what its import writes.
fn plan_project(
    dir: &Path,
    manifest: &Manifest,
    project: &str,
    catalog: &Catalog,
    store: &Store,
    on_rows: ImportOnRows,
    reader: &mut Reader,
) -> Result<Planned, SnapshotError> {
    let (folder, file) = project_folder(dir, manifest, project, reader)?;
    reader.note_dir(&folder, false);
    if catalog.tools(project).is_none() {
        return Err(files_error(
            &folder,
            format!(
                "the export holds project {project:?}, which this emulator does not serve: \
                 start it with the config the export was made with"
            ),
        ));
    }
    // Only what an export holds is written: the resources a reset puts back (the emulator's
    // own databases, and those opted in with `reset`). The others are the user's, left as they
    // are whatever the export says (its `project.json` may have been changed by hand, or the
    // config since): decided here, before any database is read or written.
    let reset: Vec<String> = catalog
        .reset_with(project)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let project_json = folder.join("project.json");
    for resource in file.resources.keys() {
        if !reset.contains(resource) && catalog.get(project, resource).is_some() {
            return Err(files_error(
                &project_json,
                format!(
                    "resource {resource:?} is kept (a database you gave without reset); an \
                     import leaves it as it is, and this export holds records of it (its \
                     project.json was changed, or the export is of a config where it had \
                     \"reset\": true): take it out of the export, or give it \"reset\": true \
                     in the config to have an import replace its data"
                ),
            ));
        }
    }
    let records = folder.join("records");
    if !file.resources.is_empty() {
        reader.note_dir(&records, false);
    }
    let mut items = Vec::new();
    for (resource, models) in &file.resources {
        let db = catalog.get(project, resource).ok_or_else(|| {
            files_error(
                &project_json,
                format!(
                    "the export holds resource {resource:?} of project {project:?}, which this \
                     emulator does not serve"
                ),
            )
        })?;
        let records_dir = records.join(name_in(resource, "resource", &project_json)?);
        reader.note_dir(&records_dir, false);
        let within = Within {
            resource,
            records_dir: &records_dir,
            project_json: &project_json,
        };
        items.push(plan_resource(db, &within, models, on_rows, reader)?);
    }
    let store_path = folder.join("store.json");
    let rows: BTreeMap<String, StoreRows> = read_json(&store_path, JSON_LIMIT, reader)?;
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
/// writes before it (and it) wrote, from copies kept before the first. The store holds `mark`
/// from before the first write until after the last (or until what was written is put back).
/// What was written, one line a project; `None` when `steps` ran out first (see
/// [`import_dir_until`]).
fn write_planned(
    planned: Vec<Planned>,
    store: &Store,
    mark: &ImportMark,
    mut steps: Steps,
) -> Result<Option<Vec<String>>, SnapshotError> {
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
    // The mark, on the disk before the first write: a start finds it if this one is killed
    // before the last. An earlier one (an import killed before this one) is put back if this
    // one's writes are undone.
    let earlier = store.import_mark()?;
    let marked = !copies.is_empty();
    if marked {
        store.set_import_mark(Some(mark))?;
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
            if !steps.next() {
                return Ok(None);
            }
            tried.extend(copies.next());
            match run_write(write, &project.project, store) {
                Ok(line) => lines.push(line),
                Err(e) => {
                    let message = match undo(tried, store) {
                        Ok(()) => {
                            // As it was before: no mark, or an earlier import's.
                            store.set_import_mark(earlier.as_ref())?;
                            format!(
                                "project {:?}: {e}; nothing of the export is kept (what the \
                                 import wrote before is undone): mend the export, or export \
                                 again",
                                project.project
                            )
                        }
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
    if marked {
        store.set_import_mark(None)?;
    }
    Ok(Some(done))
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

/// Where a resource's records are in an export.
struct Within<'a> {
    /// The resource.
    resource: &'a str,
    /// Its folder of records, `records/<resource>`.
    records_dir: &'a Path,
    /// The `project.json` that names its models.
    project_json: &'a Path,
}

/// Reads and checks one resource's records from its folder: what its import writes, or the
/// line saying it is left as it is.
fn plan_resource(
    db: Arc<dyn Backend>,
    within: &Within<'_>,
    file: &ResourceFile,
    on_rows: ImportOnRows,
    reader: &mut Reader,
) -> Result<Result<Write, String>, SnapshotError> {
    let Within {
        resource,
        records_dir,
        project_json,
    } = *within;
    let runtime = tokio::runtime::Handle::current();
    let in_resource = |e: FixtureError| SnapshotError::Files {
        path: records_dir.to_owned(),
        message: e.in_resource(resource).to_string(),
    };
    let mut models = Vec::new();
    let mut held = Vec::new();
    for model in &file.models {
        let name = file_name(model, "model").map_err(|why| {
            files_error(
                project_json,
                format!("resource {resource:?}: {why}: {NOT_WRITTEN_BY_AN_EXPORT}"),
            )
        })?;
        let path = records_dir.join(format!("{name}.json"));
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
        let bytes = read_export_file(&path, RECORDS_LIMIT, reader)
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
    reader: &mut Reader,
) -> Result<T, SnapshotError> {
    let bytes =
        read_export_file(path, limit, reader).map_err(|e| files_error(path, e.to_string()))?;
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

/// The most one import reads, of all its files together: each file counts each time it is
/// read, a link's target too (links may name one file many times).
const IMPORT_BUDGET: u64 = 1 << 30;

/// The directories an import never reads from (where a link may lead): the system's, whose
/// files may say they are regular and empty and then never end, or wait (`/proc/kmsg`).
const SYSTEM_DIRS: [&str; 3] = ["/proc", "/sys", "/dev"];

/// What an import has read of an export, in all, and what of it others could change.
#[derive(Debug)]
struct Reader {
    /// The bytes it may still read ([`IMPORT_BUDGET`]).
    left: u64,
    /// Whether it notes what others could change (an import does; an export, which reads the
    /// directory it writes, does not).
    watching: bool,
    /// This process's user, to tell others' files from its own; none when not known.
    me: Option<u32>,
    /// Each file or folder that others could change, with why.
    exposed: Vec<String>,
}

impl Reader {
    /// An import's.
    fn watching() -> Self {
        Self {
            left: IMPORT_BUDGET,
            watching: true,
            me: own_uid(),
            exposed: Vec::new(),
        }
    }

    /// One that keeps no watch: an export's look at what it writes over.
    fn unwatched() -> Self {
        Self {
            left: IMPORT_BUDGET,
            watching: false,
            me: None,
            exposed: Vec::new(),
        }
    }

    /// Notes the directory `dir` (its target, when a link) if others could change it: its
    /// owner is another user (root aside), or others can write in it. `shared` allows a
    /// sticky directory others can write (`/tmp`), where no one may rename or remove what
    /// is not theirs.
    fn note_dir(&mut self, dir: &Path, shared: bool) {
        if let Ok(meta) = fs::metadata(dir) {
            self.note(dir, &meta, shared);
        }
    }

    /// Notes `path`, of `meta`, if others could change it (see [`note_dir`](Self::note_dir)).
    fn note(&mut self, path: &Path, meta: &fs::Metadata, shared: bool) {
        if !self.watching {
            return;
        }
        if let Some(why) = exposure(meta, self.me, shared) {
            let entry = format!("{} ({why})", path.display());
            if !self.exposed.contains(&entry) {
                self.exposed.push(entry);
            }
        }
    }

    /// The warning of what it noted, if anything, for the export in `dir`.
    fn warning(&self, dir: &Path) -> Option<String> {
        const SHOWN: usize = 4;
        if self.exposed.is_empty() {
            return None;
        }
        let mut list = self.exposed[..self.exposed.len().min(SHOWN)].join(", ");
        if self.exposed.len() > SHOWN {
            list.push_str(&format!(" and {} more", self.exposed.len() - SHOWN));
        }
        Some(format!(
            "the export {} can be changed by other users: {list}. They could have replaced \
             what this import read (records, password hashes, refresh tokens), or the whole \
             export with one of their own. Run `chmod go-w` on them (a folder or file of \
             another user's: copy the export to a directory only you own and can write), and \
             export again from a state you trust.",
            dir.display()
        ))
    }
}

/// Why others could change a file or folder of `meta`, if they could: another user's (root
/// aside, who can change anything), or others can write it (group or anyone). `shared`: a
/// sticky directory others can write is not counted (no one may rename or remove in it what is
/// not theirs).
#[cfg(unix)]
fn exposure(meta: &fs::Metadata, me: Option<u32>, shared: bool) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let owner = meta.uid();
    if me.is_some_and(|me| owner != me) && owner != 0 {
        return Some(format!("owned by uid {owner}"));
    }
    let mode = meta.mode() & 0o7777;
    let sticky = mode & 0o1000 != 0;
    (mode & 0o022 != 0 && !(shared && sticky && meta.is_dir()))
        .then(|| format!("mode {mode:04o}, which others can write"))
}

#[cfg(not(unix))]
fn exposure(_meta: &fs::Metadata, _me: Option<u32>, _shared: bool) -> Option<String> {
    None
}

/// This process's (effective) user, read without `unsafe`: on Linux, the owner of
/// `/proc/self`, this process's own folder (root, when the process is not dumpable: then every
/// other user's file is warned of, never fewer); elsewhere, the owner of a file it creates
/// in the temporary directory and removes. None when neither works (no file is then counted as
/// another user's; others' writes still are).
#[cfg(unix)]
fn own_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    if let Ok(meta) = fs::metadata("/proc/self") {
        return Some(meta.uid());
    }
    let probe = std::env::temp_dir().join(format!(
        ".svc-emulator-owner-{}",
        uuid::Uuid::new_v4().simple()
    ));
    let owner = create_private_file(&probe)
        .and_then(|file| file.metadata())
        .map(|meta| meta.uid())
        .ok();
    let _ = fs::remove_file(&probe);
    owner
}

#[cfg(not(unix))]
fn own_uid() -> Option<u32> {
    None
}

/// The file `path` of an export, whole, when it is a regular file (a symbolic link is followed,
/// to a regular file only, and not into `/proc`, `/sys` or `/dev`) of at most `limit` bytes,
/// and no more than `reader` may still read. Anything else is refused before it is opened (a
/// device's open may act), the file is opened without waiting (`O_NONBLOCK`: a FIFO put in its
/// place meanwhile opens at once) and checked again as opened, and no more than the limit is
/// read from it, whatever its size said.
fn read_export_file(path: &Path, limit: Limit, reader: &mut Reader) -> Result<Vec<u8>, Unread> {
    check_file(&fs::metadata(path).map_err(Unread::Io)?, limit)?;
    let real = fs::canonicalize(path).map_err(Unread::Io)?;
    if let Some(system) = SYSTEM_DIRS.iter().find(|d| real.starts_with(d)) {
        return Err(Unread::Refused(format!(
            "it is {}, under {system}: an import reads only the files an export writes, never \
             the system's (/proc, /sys, /dev), which may never end or wait; put the export's \
             own file back, or export again",
            real.display()
        )));
    }
    let file = open_regular(&real, limit)?;
    let opened = file.metadata().map_err(Unread::Io)?;
    reader.note(path, &opened, false);
    if let Some(dir) = real.parent()
        && fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
    {
        // A link: what it leads to is read, and may be changed where it is.
        reader.note_dir(dir, true);
    }
    let bytes = read_within(file, opened.len(), limit, reader.left)?;
    reader.left -= bytes.len() as u64;
    Ok(bytes)
}

/// `path` opened to read, without waiting (`O_NONBLOCK`, and `O_NOCTTY`: a terminal does not
/// become this process's), when what was opened is a regular file within `limit`: a FIFO or a
/// device swapped in after a check of the path is refused here, never waited on.
fn open_regular(path: &Path, limit: Limit) -> Result<fs::File, Unread> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = options.open(path).map_err(Unread::Io)?;
    check_file(&file.metadata().map_err(Unread::Io)?, limit)?;
    Ok(file)
}

/// What `from` holds, of which its size says `len`, when no more than `limit` and no more than
/// `left` of the import's budget: no more than that is read, whatever `len` said.
fn read_within(from: impl Read, len: u64, limit: Limit, left: u64) -> Result<Vec<u8>, Unread> {
    if len > left && len <= limit.bytes {
        return Err(over_budget());
    }
    let most = limit.bytes.min(left);
    let mut bytes = Vec::with_capacity(usize::try_from(len.min(most)).unwrap_or(0));
    from.take(most.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(Unread::Io)?;
    let read = bytes.len() as u64;
    if read > limit.bytes {
        return Err(too_large(limit));
    }
    if read > left {
        return Err(over_budget());
    }
    Ok(bytes)
}

/// The import's files reach past [`IMPORT_BUDGET`] in all.
fn over_budget() -> Unread {
    Unread::Refused(format!(
        "the export's files reach past {}, the most one import reads of all its files together \
         (each counts each time it is read, the target of a link too): an export writes each \
         file once; put the export's own files back, or keep the largest models in a database \
         of your own (a resource's `database`, without `reset`), which an export leaves out",
        size_text(IMPORT_BUDGET)
    ))
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
    Unread::Refused(format!(
        "larger than {}, the most an import reads of {}: {}",
        size_text(limit.bytes),
        limit.of,
        limit.hint
    ))
}

/// `bytes` in words: `1 GiB`, `16 MiB`, `10 bytes`.
fn size_text(bytes: u64) -> String {
    match bytes {
        bytes if bytes > 0 && bytes % (1 << 30) == 0 => format!("{} GiB", bytes >> 30),
        bytes if bytes > 0 && bytes % (1 << 20) == 0 => format!("{} MiB", bytes >> 20),
        bytes => format!("{bytes} bytes"),
    }
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

/// `name` as one path segment, or why it cannot be one (the caller names the file or folder
/// it comes from, or goes to).
fn file_name<'n>(name: &'n str, what: &str) -> Result<&'n str, String> {
    let unsafe_name = name.is_empty()
        || name == "."
        || name == ".."
        || name.starts_with('.')
        || name.contains(['/', '\\', '\0']);
    if unsafe_name {
        return Err(format!(
            "the {what} name {name:?} cannot be a file's name in an export (it is empty, starts \
             with '.', or holds '/', '\\' or NUL)"
        ));
    }
    Ok(name)
}

/// What to do with a name in an export that no export writes.
const NOT_WRITTEN_BY_AN_EXPORT: &str =
    "no export writes it; put the export's own file back, or export again";

/// [`file_name`], for a name read from the export's file `from`: a failure names that file.
fn name_in<'n>(name: &'n str, what: &str, from: &Path) -> Result<&'n str, SnapshotError> {
    file_name(name, what)
        .map_err(|why| files_error(from, format!("{why}: {NOT_WRITTEN_BY_AN_EXPORT}")))
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
    #[test]
    fn a_file_is_read_no_further_than_its_limit_whatever_its_size_says() {
        let small = Limit {
            bytes: 10,
            of: "a test's file",
            hint: "a hint",
        };
        let endless = std::io::repeat(b'x');
        let refused = read_within(endless, 0, small, u64::MAX)
            .unwrap_err()
            .to_string();
        assert_eq!(
            refused,
            "larger than 10 bytes, the most an import reads of a test's file: a hint"
        );
        let read = read_within(std::io::repeat(b'x').take(10), 0, small, u64::MAX).unwrap();
        assert_eq!(read.len(), 10);
    }

    /// A temporary directory of a test, removed at its end.
    struct Temp(PathBuf);

    impl Temp {
        fn new() -> Self {
            let path = std::env::temp_dir()
                .join(format!("svc-files-test-{}", uuid::Uuid::new_v4().simple()));
            fs::create_dir_all(&path).unwrap();
            Self(path)
        }
    }

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// Finding F7: an import reads no more than its budget of all its files together, each
    /// read counted, through links too: two links to one file count it twice.
    #[cfg(unix)]
    #[test]
    fn an_import_reads_no_more_than_its_budget_of_all_its_files() {
        let temp = Temp::new();
        let file = temp.0.join("records.json");
        fs::write(&file, [b' '; 600]).unwrap();
        let (one, two) = (temp.0.join("one.json"), temp.0.join("two.json"));
        std::os::unix::fs::symlink(&file, &one).unwrap();
        std::os::unix::fs::symlink(&file, &two).unwrap();
        let mut reader = Reader::watching();
        reader.left = 1000;
        assert_eq!(
            read_export_file(&one, JSON_LIMIT, &mut reader)
                .unwrap()
                .len(),
            600
        );
        assert_eq!(reader.left, 400);
        let refused = read_export_file(&two, JSON_LIMIT, &mut reader)
            .unwrap_err()
            .to_string();
        assert!(
            refused.starts_with("the export's files reach past 1 GiB, the most one import reads"),
            "{refused}"
        );
        // A file whose size says 0 is counted by what it held.
        let refused = read_within(std::io::repeat(b'x'), 0, JSON_LIMIT, 100)
            .unwrap_err()
            .to_string();
        assert!(refused.contains("reach past 1 GiB"), "{refused}");
    }

    /// Finding F6: what an import opens is opened without waiting and checked as opened: a
    /// FIFO (one swapped in after the path was checked) is refused at once, never waited on
    /// for a writer; and a link into `/proc` (whose files say they are regular and empty, and
    /// may never end: `/proc/kmsg`) is refused before it is opened.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_is_never_waited_on_and_proc_is_never_read() {
        let temp = Temp::new();
        let fifo = temp.0.join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let (sent, opened) = std::sync::mpsc::channel();
        let at = fifo.clone();
        std::thread::spawn(move || {
            let _ = sent.send(
                open_regular(&at, JSON_LIMIT)
                    .map(drop)
                    .map_err(|e| e.to_string()),
            );
        });
        // A generous deadline: an open that waits for a writer never answers.
        let answer = opened
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("opening a FIFO waited for a writer");
        assert!(
            answer
                .unwrap_err()
                .starts_with("a FIFO, not a regular file")
        );

        let link = temp.0.join("status.json");
        std::os::unix::fs::symlink("/proc/self/status", &link).unwrap();
        let refused = read_export_file(&link, JSON_LIMIT, &mut Reader::watching())
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("under /proc: an import reads only the files an export writes"),
            "{refused}"
        );
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
