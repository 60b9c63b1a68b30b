//! The files of a data path are readable by their owner only: the meta store holds the
//! token-signing key, API keys, resource tokens and password hashes, and the databases beside it
//! the projects' records. Unix only: elsewhere the emulator does nothing special.
#![cfg(unix)]

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::TempDir;
use svc_emulator::{Emulator, EmulatorConfig};

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

async fn start(data: &Path) -> Emulator {
    Emulator::start(EmulatorConfig::default().data_path(data))
        .await
        .expect("the emulator starts")
}

/// Every file of `dir` whose name starts with `prefix`, with its mode.
fn files_of(dir: &Path, prefix: &str) -> Vec<(String, u32)> {
    let mut files: Vec<(String, u32)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                mode(&e.path()),
            )
        })
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn a_new_data_path_is_private_files_and_directory_side_files_included() {
    let temp = TempDir::new();
    let dir = temp.join("state");
    let data = dir.join("emu.sqlite");
    let emulator = start(&data).await;
    assert!(emulator.warnings().is_empty(), "{:?}", emulator.warnings());

    assert_eq!(mode(&dir), 0o700);
    let files = files_of(&dir, "emu.sqlite");
    // While it runs, SQLite's write-ahead logs and shared-memory files are there too: the
    // meta store's and those of the databases beside it (the demo's `shop` and the built-in
    // tools resource).
    for name in [
        "emu.sqlite",
        "emu.sqlite-wal",
        "emu.sqlite-shm",
        "emu.sqlite.demo.shop.sqlite",
        "emu.sqlite.demo.shop.sqlite-wal",
        "emu.sqlite.demo.__svc_app__.sqlite",
    ] {
        assert!(files.iter().any(|(n, _)| n == name), "{name}: {files:?}");
    }
    for (name, file_mode) in &files {
        assert_eq!(*file_mode, 0o600, "{name}: {file_mode:o}");
    }
    emulator.shutdown().await;
}

#[tokio::test]
async fn an_existing_data_path_is_made_private_at_start() {
    let temp = TempDir::new();
    let dir = temp.join("old");
    let data = dir.join("emu.sqlite");
    let first = start(&data).await;
    let key = first.api_key().to_owned();
    first.shutdown().await;
    // As an earlier version left it under a 022 umask.
    set_mode(&dir, 0o755);
    for (name, _) in files_of(&dir, "emu.sqlite") {
        set_mode(&dir.join(name), 0o644);
    }

    let again = start(&data).await;
    assert_eq!(again.api_key(), key, "the same data");
    assert!(again.warnings().is_empty(), "{:?}", again.warnings());
    // The directory holds nothing but this data path's files: it is the emulator's.
    assert_eq!(mode(&dir), 0o700);
    for (name, file_mode) in files_of(&dir, "emu.sqlite") {
        assert_eq!(file_mode, 0o600, "{name}: {file_mode:o}");
    }
    again.shutdown().await;
}

#[tokio::test]
async fn a_shared_directory_is_left_as_it_is_with_a_warning_when_others_can_write() {
    let temp = TempDir::new();
    let dir = temp.join("project");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("README.md"), b"not the emulator's").unwrap();
    set_mode(&dir, 0o777);
    let data = dir.join("emu.sqlite");

    let emulator = start(&data).await;
    let warnings = emulator.warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains(&dir.display().to_string()),
        "{warnings:?}"
    );
    assert!(warnings[0].contains("chmod go-w"), "{warnings:?}");
    assert_eq!(mode(&dir), 0o777, "another directory is not changed");
    for (name, file_mode) in files_of(&dir, "emu.sqlite") {
        assert_eq!(file_mode, 0o600, "{name}: {file_mode:o}");
    }
    emulator.shutdown().await;

    // Only readable by others: the files are private, nothing to warn about.
    set_mode(&dir, 0o755);
    let emulator = start(&data).await;
    assert!(emulator.warnings().is_empty(), "{:?}", emulator.warnings());
    assert_eq!(mode(&dir), 0o755);
    emulator.shutdown().await;
}
