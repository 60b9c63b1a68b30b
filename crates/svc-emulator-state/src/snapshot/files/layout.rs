//! An export's files and folders: the layout's version, the manifest and each project's
//! `project.json`, the folder of a project that the manifest's generation names, and the names
//! an export gives what it writes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::read::{JSON_LIMIT, Reader, read_json};
use crate::snapshot::SnapshotError;

/// The version of the layout an export writes; an import reads this one only.
pub const EXPORT_FORMAT: u32 = 1;

/// The file that marks a directory as an export, at its top.
pub(super) const MANIFEST: &str = "svc-emulator-export.json";

/// `project.json`: a project's export without its records and store, which have files of
/// their own.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct ProjectFile {
    pub(super) format: u32,
    pub(super) project: String,
    pub(super) exported_at: String,
    /// The export that wrote it, as the manifest names it (none in an export written before
    /// generations, whose manifest names none either).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) generation: Option<String>,
    pub(super) kept: Vec<String>,
    pub(super) resources: BTreeMap<String, ResourceFile>,
}

/// A resource in `project.json`: its models (each a file of `records/<resource>/`) and keys.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct ResourceFile {
    pub(super) models: Vec<String>,
    pub(super) keys: Value,
}

/// `svc-emulator-export.json`.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Manifest {
    pub(super) format: u32,
    /// The emulator that wrote it, `svc-emulator <version>`.
    pub(super) written_by: String,
    /// The projects it holds, each a folder.
    pub(super) projects: Vec<String>,
    /// Each project's generation: the export whose folder of it is the one to read.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) generations: BTreeMap<String, String>,
}

/// The folder of `project` that the export in `dir` holds, with its `project.json`: the
/// folder named after it, or, where an export was killed between its renames, the folder
/// set aside that is of the manifest's generation.
pub(super) fn project_folder(
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

/// The manifest, checked.
pub(super) fn read_manifest(path: &Path, bytes: &[u8]) -> Result<Manifest, SnapshotError> {
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

/// `name` as one path segment, or why it cannot be one (the caller names the file or folder
/// it comes from, or goes to).
pub(super) fn file_name<'n>(name: &'n str, what: &str) -> Result<&'n str, String> {
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
pub(super) const NOT_WRITTEN_BY_AN_EXPORT: &str =
    "no export writes it; put the export's own file back, or export again";

/// [`file_name`], for a name read from the export's file `from`: a failure names that file.
pub(super) fn name_in<'n>(
    name: &'n str,
    what: &str,
    from: &Path,
) -> Result<&'n str, SnapshotError> {
    file_name(name, what)
        .map_err(|why| files_error(from, format!("{why}: {NOT_WRITTEN_BY_AN_EXPORT}")))
}

/// A failure of an export's file or folder `path`.
pub(super) fn files_error(path: &Path, message: impl Into<String>) -> SnapshotError {
    SnapshotError::Files {
        path: path.to_owned(),
        message: message.into(),
    }
}
