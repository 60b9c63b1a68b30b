//! Warnings of what other users could change: where an export goes (the export's directory and
//! the one it is made in), and what an import read of one (the export's directory, the directory
//! it is in, and each of its folders and files).

use std::fs;
use std::path::{Path, PathBuf};

use super::layout::{MANIFEST, files_error};
use super::read::Reader;
use crate::snapshot::SnapshotError;
use svc_emulator_core::private::{create_private_file, prepare_data_dir};

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

impl Reader {
    /// Notes the directory `dir` (its target, when a link) if others could change it: its
    /// owner is another user (root aside), or others can write in it. `shared` allows a
    /// sticky directory others can write (`/tmp`), where no one may rename or remove what
    /// is not theirs.
    pub(super) fn note_dir(&mut self, dir: &Path, shared: bool) {
        if let Ok(meta) = fs::metadata(dir) {
            self.note(dir, &meta, shared);
        }
    }

    /// Notes `path`, of `meta`, if others could change it (see [`note_dir`](Self::note_dir)).
    pub(super) fn note(&mut self, path: &Path, meta: &fs::Metadata, shared: bool) {
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
    pub(super) fn warning(&self, dir: &Path) -> Option<String> {
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
pub(super) fn own_uid() -> Option<u32> {
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
pub(super) fn own_uid() -> Option<u32> {
    None
}
