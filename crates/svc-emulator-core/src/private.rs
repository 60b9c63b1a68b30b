//! Data files only their owner can read or write.
//!
//! The meta store holds the token-signing key, generated API keys, resource tokens and password
//! hashes, and the databases beside it hold the projects' records: under the usual umask SQLite
//! would create them `0644`, readable by every local user, and a token signed with a key read
//! from the file is a valid token. So, on Unix:
//!
//! - a missing data directory is created `0700`;
//! - an existing one that holds nothing but this data path's files (one an earlier start
//!   created) is tightened to `0700`; any other directory is left as it is, with a warning when
//!   other users can write in it (they could replace or add files beside the data);
//! - every database file of the data path is created `0600` before SQLite opens it, and an
//!   existing one (with any `-wal`, `-shm` or `-journal` file left beside it) is set to `0600`.
//!   SQLite creates those side files with the mode of their database file, so they are private
//!   too.
//!
//! Elsewhere the files are created as before and nothing else happens.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The files SQLite keeps beside a database file while it is open, or after a crash.
const SIDE_FILE_SUFFIXES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Makes the directory of the data file `data` exist and as private as it can be made
/// without touching a directory that is not the emulator's. Returns a warning when the
/// directory stays open to other users' writes.
pub fn prepare_data_dir(data: &Path) -> io::Result<Option<String>> {
    let dir = match data.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_owned(),
        _ => PathBuf::from("."),
    };
    if !dir.exists() {
        create_private_dir(&dir)?;
        return Ok(None);
    }
    Ok(tighten_or_warn(&dir, data))
}

/// Creates `dir` and its missing parents, `0700` on Unix.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

#[cfg(unix)]
fn tighten_or_warn(dir: &Path, data: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;

    let mode = fs::metadata(dir).ok()?.permissions().mode();
    if mode & 0o077 == 0 {
        return None;
    }
    // A sticky directory (`/tmp`) is shared by design, even when it happens to be empty.
    let sticky = mode & 0o1000 != 0;
    if !sticky && holds_only_files_of(dir, data) {
        // Ours (created by an earlier start, before directories were made private): tighten
        // it. When that fails (another user's directory), the warning below still applies.
        if fs::set_permissions(dir, fs::Permissions::from_mode(mode & 0o700)).is_ok() {
            return None;
        }
    }
    (mode & 0o022 != 0).then(|| {
        format!(
            "the data directory {} can be written by other users (mode {:04o}): they could \
             replace or add files beside the emulator's data, which holds its signing key, API \
             keys and password hashes. Run `chmod go-w {}`, or keep --data in a directory only \
             you can write.",
            dir.display(),
            mode & 0o7777,
            dir.display(),
        )
    })
}

#[cfg(not(unix))]
fn tighten_or_warn(_dir: &Path, _data: &Path) -> Option<String> {
    None
}

/// Whether every entry of `dir` is one of the data path's files: the data file itself, its
/// SQLite side files, `<data>.<project>.<resource>.sqlite` and `<data>.ca.pem`, all of which
/// start with the data file's name.
#[cfg(unix)]
fn holds_only_files_of(dir: &Path, data: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;

    let Some(name) = data.file_name().map(|n| n.as_bytes().to_owned()) else {
        return false;
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    entries
        .map(|entry| entry.map(|e| e.file_name().as_bytes().starts_with(&name)))
        .all(|ours| ours.unwrap_or(false))
}

/// Makes sure the database file `path` exists and only its owner can read it, before SQLite
/// opens it: a missing file is created empty (SQLite reads an empty file as an empty database)
/// with mode `0600`; an existing one, and any side file beside it, loses every group and other
/// permission. Fails when that cannot be done (a file of another user); the error names the
/// file.
pub fn private_database(path: &Path) -> io::Result<()> {
    let cannot_open = |e: io::Error| {
        io::Error::new(
            e.kind(),
            format!("cannot create or open {}: {e}", path.display()),
        )
    };
    let file = match create_private_file(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            fs::File::open(path).map_err(cannot_open)?
        }
        Err(e) => return Err(cannot_open(e)),
    };
    if !file.metadata().map_err(cannot_open)?.is_file() {
        // Not a database file (a directory, a device): SQLite says what is wrong with it.
        return Ok(());
    }
    restrict(&file).map_err(|e| not_private(path, e))?;
    for suffix in SIDE_FILE_SUFFIXES {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        match fs::File::open(&side) {
            Ok(file) => restrict(&file).map_err(|e| not_private(Path::new(&side), e))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(not_private(Path::new(&side), e)),
        }
    }
    Ok(())
}

/// Creates the database file `path` with mode `0600` when it is missing; an existing file is
/// left as it is (a database the configuration names belongs to its user).
pub fn create_database_if_missing(path: &Path) -> io::Result<()> {
    match create_private_file(path) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// A new, empty file, `0600` on Unix; `AlreadyExists` when there is one.
pub fn create_private_file(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Removes every group and other permission of an open file.
#[cfg(unix)]
fn restrict(file: &fs::File) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;

    let mode = file.metadata()?.permissions().mode();
    if mode & 0o077 != 0 {
        file.set_permissions(fs::Permissions::from_mode(mode & 0o700))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict(_file: &fs::File) -> io::Result<()> {
    Ok(())
}

fn not_private(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!(
            "cannot make {} readable by its owner only: {e}. The emulator's data files hold its \
             signing key, API keys and password hashes: use a data path you own",
            path.display()
        ),
    )
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> Self {
            let path = std::env::temp_dir().join(format!(
                "svc-emulator-private-{}",
                uuid::Uuid::new_v4().simple()
            ));
            fs::create_dir(&path).unwrap();
            Self(path)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    fn set_mode(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_new_database_file_is_0600_and_an_old_one_with_its_side_files_becomes_so() {
        let dir = TempDir::new();
        let new = dir.0.join("new.sqlite");
        private_database(&new).unwrap();
        assert_eq!(mode(&new), 0o600);
        assert_eq!(fs::metadata(&new).unwrap().len(), 0);

        let old = dir.0.join("old.sqlite");
        fs::write(&old, b"kept").unwrap();
        set_mode(&old, 0o644);
        for suffix in ["-wal", "-shm"] {
            let side = dir.0.join(format!("old.sqlite{suffix}"));
            fs::write(&side, b"").unwrap();
            set_mode(&side, 0o666);
        }
        private_database(&old).unwrap();
        assert_eq!(mode(&old), 0o600);
        assert_eq!(fs::read(&old).unwrap(), b"kept");
        assert_eq!(mode(&dir.0.join("old.sqlite-wal")), 0o600);
        assert_eq!(mode(&dir.0.join("old.sqlite-shm")), 0o600);
        assert!(!dir.0.join("old.sqlite-journal").exists());
    }

    #[test]
    fn a_configured_database_is_created_private_but_an_existing_one_is_left_alone() {
        let dir = TempDir::new();
        let path = dir.0.join("mine.sqlite");
        create_database_if_missing(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
        set_mode(&path, 0o644);
        create_database_if_missing(&path).unwrap();
        assert_eq!(mode(&path), 0o644);
    }

    #[test]
    fn directories_are_created_0700_and_ours_are_tightened() {
        let dir = TempDir::new();
        let nested = dir.0.join("a/b/emu.sqlite");
        assert_eq!(prepare_data_dir(&nested).unwrap(), None);
        assert_eq!(mode(&dir.0.join("a/b")), 0o700);
        assert_eq!(mode(&dir.0.join("a")), 0o700);

        // A directory holding only this data path's files is the emulator's.
        let ours = dir.0.join("ours");
        fs::create_dir(&ours).unwrap();
        for name in [
            "emu.sqlite",
            "emu.sqlite-wal",
            "emu.sqlite.demo.shop.sqlite",
        ] {
            fs::write(ours.join(name), b"").unwrap();
        }
        set_mode(&ours, 0o775);
        assert_eq!(prepare_data_dir(&ours.join("emu.sqlite")).unwrap(), None);
        assert_eq!(mode(&ours), 0o700);
    }

    #[test]
    fn a_shared_directory_is_left_alone_with_a_warning_when_others_can_write() {
        let dir = TempDir::new();
        let shared = dir.0.join("project");
        fs::create_dir(&shared).unwrap();
        fs::write(shared.join("Cargo.toml"), b"").unwrap();
        set_mode(&shared, 0o775);
        let warning = prepare_data_dir(&shared.join("emu.sqlite"))
            .unwrap()
            .expect("a warning");
        assert!(warning.contains("0775"), "{warning}");
        assert!(warning.contains("chmod go-w"), "{warning}");
        assert_eq!(mode(&shared), 0o775);

        // Readable but not writable by others: the files are private, the names are not
        // secret; nothing to say.
        set_mode(&shared, 0o755);
        assert_eq!(prepare_data_dir(&shared.join("emu.sqlite")).unwrap(), None);
        assert_eq!(mode(&shared), 0o755);

        // A sticky directory (like /tmp) is never tightened, even when empty.
        let sticky = dir.0.join("sticky");
        fs::create_dir(&sticky).unwrap();
        set_mode(&sticky, 0o1777);
        assert!(
            prepare_data_dir(&sticky.join("emu.sqlite"))
                .unwrap()
                .is_some()
        );
        assert_eq!(
            fs::metadata(&sticky).unwrap().permissions().mode() & 0o7777,
            0o1777
        );
    }
}
