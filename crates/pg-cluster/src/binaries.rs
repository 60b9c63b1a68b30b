//! Where PostgreSQL's programs are: the directory named by `PG_BIN`, else the one of the `initdb`
//! found on `PATH`, else the newest `/usr/lib/postgresql/VERSION/bin` (Debian and Ubuntu install
//! there without putting it on `PATH`).

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::Error;

/// The programs a cluster runs. All three come from one directory, so from one version.
const PROGRAMS: &[&str] = &["initdb", "postgres", "psql"];

/// Where Debian's packages put each major version: `/usr/lib/postgresql/15/bin/initdb`.
const DEBIAN_ROOT: &str = "/usr/lib/postgresql";

/// What to do when no PostgreSQL is found.
const INSTALL_HINT: &str =
    "install PostgreSQL (apt-get install postgresql) or put its bin dir on PATH / set PG_BIN";

/// The bin directory of one PostgreSQL installation, with `initdb`, `postgres` and `psql`.
#[derive(Debug, Clone)]
pub(crate) struct Binaries {
    dir: PathBuf,
}

impl Binaries {
    /// Looks in `PG_BIN`, then `PATH`, then `/usr/lib/postgresql/*/bin`.
    pub(crate) fn find() -> Result<Binaries, Error> {
        find_in(
            std::env::var_os("PG_BIN"),
            std::env::var_os("PATH"),
            Path::new(DEBIAN_ROOT),
        )
    }

    /// The path of one of the programs (`initdb`, `postgres`, `psql`).
    pub(crate) fn program(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// [`Binaries::find`] with its inputs given, for the tests.
fn find_in(
    pg_bin: Option<OsString>,
    path: Option<OsString>,
    debian_root: &Path,
) -> Result<Binaries, Error> {
    let dir = if let Some(pg_bin) = pg_bin.filter(|v| !v.is_empty()) {
        let dir = PathBuf::from(pg_bin);
        if !is_executable(&dir.join("initdb")) {
            return Err(Error::new(format!(
                "initdb not found in PG_BIN ({}): set PG_BIN to the bin dir of a PostgreSQL \
                 installation (the one holding initdb, postgres and psql), or unset it to search \
                 PATH and {DEBIAN_ROOT}/*/bin",
                dir.display()
            )));
        }
        dir
    } else if let Some(initdb) = on_path(path, "initdb") {
        // A link (/usr/local/bin/initdb -> /usr/lib/postgresql/15/bin/initdb) leads to the real
        // bin dir: postgres and psql are taken from there, so they are of initdb's version
        // (Debian's /usr/bin/psql is a wrapper that picks a version by itself).
        let real = fs::canonicalize(&initdb).unwrap_or(initdb);
        match real.parent() {
            Some(dir) => dir.to_path_buf(),
            None => return Err(Error::new(format!("initdb not found: {INSTALL_HINT}"))),
        }
    } else if let Some(dir) = newest_versioned(debian_root) {
        dir
    } else {
        return Err(Error::new(format!("initdb not found: {INSTALL_HINT}")));
    };
    for program in PROGRAMS {
        if !is_executable(&dir.join(program)) {
            return Err(Error::new(format!(
                "{program} not found beside initdb in {}: install PostgreSQL's server and client \
                 (apt-get install postgresql), or set PG_BIN to a bin dir holding initdb, \
                 postgres and psql",
                dir.display()
            )));
        }
    }
    Ok(Binaries { dir })
}

/// The first `name` on `PATH` that is an executable file.
fn on_path(path: Option<OsString>, name: &str) -> Option<PathBuf> {
    std::env::split_paths(&path?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// `ROOT/VERSION/bin` with the highest VERSION (`16` over `15` over `9.6`) that has an initdb.
fn newest_versioned(root: &Path) -> Option<PathBuf> {
    fs::read_dir(root)
        .ok()?
        .flatten()
        .filter_map(|entry| {
            let version = version(&entry.file_name().to_string_lossy())?;
            let bin = entry.path().join("bin");
            is_executable(&bin.join("initdb")).then_some((version, bin))
        })
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, bin)| bin)
}

/// `"9.6"` as `[9, 6]`, so that versions compare as numbers; `None` for anything else.
fn version(name: &str) -> Option<Vec<u32>> {
    name.split('.').map(|part| part.parse().ok()).collect()
}

/// A regular file (after links) with an execute bit.
fn is_executable(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh directory under the system's temp dir, removed on drop.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new() -> Scratch {
            static NEXT: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "pg-cluster-binaries-test-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).expect("create the scratch dir");
            Scratch(dir)
        }

        /// A bin dir at `relative` with the given programs (executable files).
        fn bin(&self, relative: &str, programs: &[&str]) -> PathBuf {
            let dir = self.0.join(relative);
            fs::create_dir_all(&dir).expect("create a bin dir");
            for program in programs {
                let path = dir.join(program);
                fs::write(&path, "#!/bin/sh\n").expect("write a program");
                fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).expect("chmod");
            }
            dir
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn pg_bin_comes_first() {
        let s = Scratch::new();
        let chosen = s.bin("chosen", PROGRAMS);
        let on_path = s.bin("path", PROGRAMS);
        s.bin("debian/15/bin", PROGRAMS);
        let found = find_in(
            Some(chosen.clone().into_os_string()),
            Some(on_path.into_os_string()),
            &s.0.join("debian"),
        )
        .expect("found");
        assert_eq!(found.program("psql"), chosen.join("psql"));
    }

    #[test]
    fn a_pg_bin_without_initdb_is_an_error_that_names_it() {
        let s = Scratch::new();
        let empty = s.bin("empty", &[]);
        let on_path = s.bin("path", PROGRAMS);
        let err = find_in(
            Some(empty.clone().into_os_string()),
            Some(on_path.into_os_string()),
            &s.0,
        )
        .expect_err("PG_BIN is wrong");
        let message = err.to_string();
        assert!(message.contains("PG_BIN"), "{message}");
        assert!(message.contains(&empty.display().to_string()), "{message}");
    }

    #[test]
    fn path_is_followed_through_links_to_the_real_bin_dir() {
        let s = Scratch::new();
        let real = s.bin("real/bin", PROGRAMS);
        let links = s.bin("links", &[]);
        // Only initdb is linked (as /usr/local/bin/initdb may be): psql comes from its real dir.
        std::os::unix::fs::symlink(real.join("initdb"), links.join("initdb")).expect("symlink");
        let path = std::env::join_paths([s.0.join("missing"), links]).expect("join");
        let found = find_in(None, Some(path), &s.0.join("none")).expect("found");
        let real = fs::canonicalize(real).expect("canonical");
        assert_eq!(found.program("psql"), real.join("psql"));
    }

    #[test]
    fn without_pg_bin_or_path_the_newest_debian_version_wins() {
        let s = Scratch::new();
        s.bin("debian/9.6/bin", PROGRAMS);
        let v15 = s.bin("debian/15/bin", PROGRAMS);
        s.bin("debian/16/bin", &[]); // no initdb: not an installation
        s.bin("debian/notes/bin", PROGRAMS); // not a version
        let found = find_in(None, None, &s.0.join("debian")).expect("found");
        assert_eq!(found.program("initdb"), v15.join("initdb"));
    }

    #[test]
    fn nothing_found_says_how_to_install() {
        let s = Scratch::new();
        let err = find_in(Some(OsString::new()), Some(OsString::new()), &s.0).expect_err("none");
        assert_eq!(
            err.to_string(),
            "initdb not found: install PostgreSQL (apt-get install postgresql) or put its bin \
             dir on PATH / set PG_BIN"
        );
    }

    #[test]
    fn initdb_without_psql_beside_it_is_an_error() {
        let s = Scratch::new();
        let partial = s.bin("partial", &["initdb", "postgres"]);
        let err = find_in(Some(partial.into_os_string()), None, &s.0).expect_err("no psql");
        assert!(
            err.to_string().starts_with("psql not found beside initdb"),
            "{err}"
        );
    }

    #[test]
    fn a_file_without_execute_bits_is_not_a_program() {
        let s = Scratch::new();
        let dir = s.bin("bin", &[]);
        fs::write(dir.join("initdb"), "").expect("write");
        assert!(!is_executable(&dir.join("initdb")));
        assert!(!is_executable(&dir));
    }
}
