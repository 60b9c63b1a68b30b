//! Writing an export into a directory, as a switch of generations ("Whole or not at all" in
//! [`files`](super)' documentation): each project's folder written whole beside the old one,
//! the folders renamed, then the manifest naming the new generation renamed over the old one;
//! what an export killed midway left is settled by the next. And where an export may be
//! written ([`check_export_dir`]).

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::Path;

use serde::Serialize;

use super::export::ProjectExport;
use super::layout::{
    EXPORT_FORMAT, MANIFEST, Manifest, ProjectFile, ResourceFile, file_name, files_error, name_in,
    project_folder, read_manifest,
};
use super::read::{JSON_LIMIT, Reader, Unread, read_export_file};
use crate::snapshot::SnapshotError;
use svc_emulator_core::private::{create_private_dir, create_private_file};

/// Writes `exports` into `dir` (see the module's documentation): a missing or empty directory,
/// or an earlier export, whose folders of those projects are replaced, all at one moment.
/// Blocking.
pub fn write_export(dir: &Path, exports: &[ProjectExport]) -> Result<(), SnapshotError> {
    write_export_until(dir, exports, usize::MAX).map(drop)
}

/// [`write_export`] stopped after its first `steps` steps, as a SIGKILL there would stop it:
/// nothing after them runs and nothing is tidied. Whether it finished. For the tests that
/// check an export killed at any step (svc-emulator's `tests/state_on_disk_safety.rs`).
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
pub(super) struct Steps(pub(super) usize);

impl Steps {
    /// Whether the next step runs (and counts it).
    pub(super) fn next(&mut self) -> bool {
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

/// Whether an export may be written to `dir`: a missing or empty directory, or an earlier
/// export of this format (its folders of the projects written are replaced). What
/// [`write_export`] checks first, for a caller that asks before it exports.
pub fn check_export_dir(dir: &Path) -> Result<(), SnapshotError> {
    earlier_manifest(dir).map(drop)
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

#[cfg(test)]
mod tests {
    use super::*;

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
