//! Running an import: the export's files read and planned first (`plan`), then written all or
//! nothing (what a failed write follows is put back from copies kept first), with a mark in the
//! store from before the first write to after the last; and the check at start for an import
//! that did not end.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::layout::{MANIFEST, files_error, read_manifest};
use super::plan::{Planned, Write, plan_project};
use super::read::{JSON_LIMIT, Reader, Unread, read_export_file};
use super::write::Steps;
use crate::catalog::Catalog;
use crate::config::import::ImportOnRows;
use crate::snapshot::{SnapshotError, no_hold};
use crate::storage::{ImportMark, ProjectRows, Store};
use crate::util::timestamp::{format_millis, now_millis};
use svc_emulator_core::backend::{Backend, Saved};

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
/// stays). `None` when it stopped so. svc-emulator's start runs it with no stop
/// (`usize::MAX`); its tests, with a stop after each write in turn.
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
                    rows: runtime
                        .block_on(store.save_project(project.project.clone()))
                        .map_err(SnapshotError::store)?,
                },
            });
        }
    }
    // The mark, on the disk before the first write: a start finds it if this one is killed
    // before the last. An earlier one (an import killed before this one) is put back if this
    // one's writes are undone.
    let earlier = store.import_mark().map_err(SnapshotError::store)?;
    let marked = !copies.is_empty();
    if marked {
        store
            .set_import_mark(Some(mark))
            .map_err(SnapshotError::store)?;
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
                            store
                                .set_import_mark(earlier.as_ref())
                                .map_err(SnapshotError::store)?;
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
        store.set_import_mark(None).map_err(SnapshotError::store)?;
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
            let written = store
                .import_project(project, &rows, replace)
                .map_err(SnapshotError::store)?;
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
                runtime
                    .block_on(store.restore_project(project, rows))
                    .map_err(SnapshotError::store)?;
            }
        }
    }
    Ok(())
}
