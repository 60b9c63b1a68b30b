//! `--postgres`: the two databases both servers read, in one throwaway PostgreSQL cluster
//! (crate `pg-cluster`), and the copy from the engine's into the emulator's.
//!
//! Both databases are filled by the same script (`dataset::pg_sql` and `pg_shapes::sql`, kept
//! as `target/fidelity/run/dataset.pg.sql`) with `psql`, and get the seed's time zone
//! (`pg_shapes::zone`: `UTC` or `America/New_York`) as a database setting, so both servers'
//! sessions read date-times in the same zone whatever the cluster's default. Every connection goes through the cluster's URL
//! (`postgres://USER@127.0.0.1:PORT/DB`), which `psql` and `pg_dump` take as they are. Both
//! programs are taken where `pg-cluster` takes the server's, so they are of its version:
//! `PG_BIN`, else the directory of the `initdb` on `PATH` (links followed), else the newest
//! `/usr/lib/postgresql/VERSION/bin`, else `PATH`.
//!
//! The copy after a write that left the databases apart: in one transaction on the emulator's
//! database, `TRUNCATE ... RESTART IDENTITY CASCADE` and then `pg_dump --data-only` of the
//! engine's tables, whose `setval` lines also bring the sequences to the engine's values. The
//! emulator keeps its connections open meanwhile (a pool), so the database cannot be recreated;
//! `lock_timeout` turns a connection left inside a transaction into an error, not a hang.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pg_cluster::Cluster;

use super::dataset::{self, TABLES};
use super::engine;
use super::pg_shapes;
use super::rounded_keys;

/// The engine's database (the reference copy).
const ENGINE_DB: &str = "fidelity_engine";
/// The emulator's database.
const EMULATOR_DB: &str = "fidelity_emulator";

/// The cluster (stopped when dropped, after the servers) and its two databases.
#[derive(Debug)]
pub struct Databases {
    cluster: Cluster,
}

/// The parts of `postgres://USER[:PASSWORD]@HOST:PORT/DB` the engine takes as options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts {
    pub user: String,
    pub host: String,
    pub port: u16,
    pub database: String,
}

/// Splits a `postgres://` or `postgresql://` URL (no password, no query).
pub fn parse_url(url: &str) -> Result<UrlParts, String> {
    let bad = |why: &str| format!("unexpected PostgreSQL URL {url:?}: {why}");
    let rest = url
        .strip_prefix("postgres://")
        .or_else(|| url.strip_prefix("postgresql://"))
        .ok_or_else(|| bad("not postgres://"))?;
    let (authority, database) = rest.split_once('/').ok_or_else(|| bad("no database"))?;
    let (user, hostport) = authority.rsplit_once('@').ok_or_else(|| bad("no user"))?;
    if user.contains(':') {
        return Err(bad("a password the harness would not pass on"));
    }
    let (host, port) = hostport.rsplit_once(':').ok_or_else(|| bad("no port"))?;
    let port = port.parse().map_err(|_| bad("port"))?;
    if database.is_empty() || database.contains(['?', '/']) || user.is_empty() {
        return Err(bad("database or user"));
    }
    Ok(UrlParts {
        user: user.to_owned(),
        host: host.to_owned(),
        port,
        database: database.to_owned(),
    })
}

/// Where Debian's packages put each major version (`/usr/lib/postgresql/15/bin`).
const DEBIAN_ROOT: &str = "/usr/lib/postgresql";

/// The path of PostgreSQL's program `name` (`psql`, `pg_dump`), looked up as the module says.
fn program(name: &str) -> PathBuf {
    program_in(
        name,
        std::env::var_os("PG_BIN"),
        std::env::var_os("PATH"),
        Path::new(DEBIAN_ROOT),
    )
}

/// [`program`] with its inputs given.
fn program_in(
    name: &str,
    pg_bin: Option<OsString>,
    path: Option<OsString>,
    debian_root: &Path,
) -> PathBuf {
    if let Some(dir) = pg_bin.filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join(name);
    }
    let initdb = path.as_ref().and_then(|path| {
        std::env::split_paths(path)
            .map(|dir| dir.join("initdb"))
            .find(|candidate| candidate.is_file())
    });
    let bin_dir = initdb
        .map(|initdb| std::fs::canonicalize(&initdb).unwrap_or(initdb))
        .and_then(|initdb| initdb.parent().map(Path::to_path_buf))
        .or_else(|| newest_versioned(debian_root));
    match bin_dir.map(|dir| dir.join(name)) {
        Some(found) if found.is_file() => found,
        _ => PathBuf::from(name),
    }
}

/// `ROOT/VERSION/bin` of the highest numeric VERSION.
fn newest_versioned(root: &Path) -> Option<PathBuf> {
    std::fs::read_dir(root)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, bin)| bin.is_dir())
        .max_by_key(|(version, _)| *version)
        .map(|(_, bin)| bin)
}

impl Databases {
    /// Starts the cluster and writes both databases for `seed` (the script is kept in `dir`).
    pub fn create(dir: &Path, seed: u64) -> Result<Databases, String> {
        eprintln!("fidelity: starting a PostgreSQL cluster");
        let cluster = Cluster::start().map_err(|e| format!("starting PostgreSQL: {e}"))?;
        let databases = Databases { cluster };
        let script = dir.join("dataset.pg.sql");
        std::fs::write(&script, dataset::pg_sql(seed) + &pg_shapes::sql(seed))
            .map_err(|e| format!("writing {}: {e}", script.display()))?;
        for db in [ENGINE_DB, EMULATOR_DB] {
            databases
                .cluster
                .create_database(db)
                .map_err(|e| format!("creating database {db}: {e}"))?;
            let url = databases.cluster.url(db);
            psql(&url, &["-c", &pg_shapes::set_zone_sql(seed)], None)?;
            psql(&url, &["-f"], Some(&script))?;
        }
        Ok(databases)
    }

    /// The engine's database options ([`engine::postgres_args`]).
    pub fn engine_args(&self) -> Result<Vec<String>, String> {
        let url = parse_url(&self.cluster.url(ENGINE_DB))?;
        Ok(engine::postgres_args(
            &url.host,
            url.port,
            &url.user,
            &url.database,
        ))
    }

    /// The emulator's resource `database`: its database's URL.
    pub fn emulator_url(&self) -> String {
        self.cluster.url(EMULATOR_DB)
    }

    /// Copies every table (rows and sequences) from the engine's database into the emulator's,
    /// or `only` these.
    pub fn copy_tables(&self, only: Option<&[&str]>) -> Result<(), String> {
        let mut dump = Command::new(program("pg_dump"));
        dump.args(["--data-only", "--no-owner", "--no-privileges"]);
        let names: Vec<&str> = match only {
            Some(names) => names.to_vec(),
            None => TABLES
                .iter()
                .map(|t| t.name)
                .chain(pg_shapes::TABLE_NAMES.iter().copied())
                .chain(rounded_keys::TABLE_NAMES.iter().copied())
                .collect(),
        };
        for name in &names {
            dump.arg(format!("--table=public.{name}"));
        }
        let output = dump
            .arg(format!("--dbname={}", self.cluster.url(ENGINE_DB)))
            .output()
            .map_err(|e| format!("running pg_dump: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "pg_dump of the engine's database failed: {}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let mut script = format!(
            "SET lock_timeout = '60s';\nTRUNCATE {} RESTART IDENTITY CASCADE;\n",
            names.join(", ")
        )
        .into_bytes();
        script.extend_from_slice(&output.stdout);
        psql_stdin(&self.cluster.url(EMULATOR_DB), &script)
    }
}

/// `psql` on `url` with `args` (then `file`, when given), stopping at the first error.
fn psql(url: &str, args: &[&str], file: Option<&Path>) -> Result<(), String> {
    let mut cmd = Command::new(program("psql"));
    cmd.args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url])
        .args(args);
    if let Some(file) = file {
        cmd.arg(file);
    }
    let output = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running psql: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "psql {args:?} on {url} failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// `psql` on `url` reading `script` from stdin, in one transaction.
fn psql_stdin(url: &str, script: &[u8]) -> Result<(), String> {
    let mut child = Command::new(program("psql"))
        .args([
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "--single-transaction",
            "-d",
            url,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running psql: {e}"))?;
    let written = child
        .stdin
        .take()
        .ok_or("no stdin")
        .and_then(|mut stdin| stdin.write_all(script).map_err(|_| "writing to psql"));
    let output = child
        .wait_with_output()
        .map_err(|e| format!("waiting for psql: {e}"))?;
    if output.status.success() && written.is_ok() {
        Ok(())
    } else {
        Err(format!(
            "copying the tables into the emulator's database failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_the_engine_options() {
        assert_eq!(
            parse_url("postgres://fid@127.0.0.1:54321/fidelity_engine"),
            Ok(UrlParts {
                user: "fid".to_owned(),
                host: "127.0.0.1".to_owned(),
                port: 54321,
                database: "fidelity_engine".to_owned(),
            })
        );
        assert_eq!(
            parse_url("postgresql://u@localhost:5/d").map(|u| u.port),
            Ok(5)
        );
        for bad in [
            "sqlite:///x",
            "postgres://127.0.0.1:5432/db",
            "postgres://u:secret@127.0.0.1:5432/db",
            "postgres://u@127.0.0.1/db",
            "postgres://u@127.0.0.1:x/db",
            "postgres://u@127.0.0.1:5432/",
            "postgres://u@127.0.0.1:5432/db?sslmode=disable",
        ] {
            assert!(parse_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn programs_are_found_where_the_cluster_finds_its_own() {
        let scratch = std::env::temp_dir().join(format!("fidelity-pgbin-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        let (v9, v15, v16) = (
            scratch.join("lib/9/bin"),
            scratch.join("lib/15/bin"),
            scratch.join("lib/16/bin"),
        );
        let on_path = scratch.join("path");
        for dir in [&v9, &v15, &v16, &on_path] {
            std::fs::create_dir_all(dir).unwrap();
        }
        for file in [
            v9.join("pg_dump"),
            v15.join("pg_dump"),
            v15.join("initdb"),
            on_path.join("unrelated"),
        ] {
            std::fs::write(file, "").unwrap();
        }
        let lib = scratch.join("lib");
        let path = |dirs: &[&PathBuf]| Some(std::env::join_paths(dirs).unwrap());
        // PG_BIN wins, as given.
        assert_eq!(
            program_in("pg_dump", Some("/opt/pg/bin".into()), None, &lib),
            PathBuf::from("/opt/pg/bin/pg_dump")
        );
        // The initdb on PATH names the directory.
        assert_eq!(
            program_in("pg_dump", None, path(&[&on_path, &v15]), &lib),
            std::fs::canonicalize(&v15).unwrap().join("pg_dump")
        );
        // Else the highest version: 16 has no pg_dump, so the bare name (PATH) is left.
        assert_eq!(
            program_in("pg_dump", None, path(&[&on_path]), &lib),
            PathBuf::from("pg_dump")
        );
        std::fs::write(v16.join("pg_dump"), "").unwrap();
        assert_eq!(
            program_in("pg_dump", Some("".into()), None, &lib),
            v16.join("pg_dump")
        );
        assert_eq!(
            program_in("psql", None, None, &scratch.join("none")),
            PathBuf::from("psql")
        );
        let _ = std::fs::remove_dir_all(&scratch);
    }

    #[test]
    fn the_engine_gets_host_port_user_and_name() {
        let url = parse_url("postgres://fid@127.0.0.1:54321/fidelity_engine").unwrap();
        assert_eq!(
            engine::postgres_args(&url.host, url.port, &url.user, &url.database),
            [
                "--database_engine=postgresql",
                "--database_host=127.0.0.1",
                "--database_port=54321",
                "--database_user=fid",
                "--database_name=fidelity_engine",
            ]
        );
    }
}
