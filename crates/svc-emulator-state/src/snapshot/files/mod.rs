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
//!
//! [`Snapshots`]: super::Snapshots

mod export;
mod import;
mod layout;
mod plan;
mod read;
mod warnings;
mod write;

pub use crate::config::import::ImportOnRows;
pub use export::{ProjectExport, ResourceExport};
pub use import::{Imported, check_unfinished_import, import_dir, import_dir_until};
pub use layout::EXPORT_FORMAT;
pub use warnings::export_dir_warning;
pub use write::{check_export_dir, write_export, write_export_until};
