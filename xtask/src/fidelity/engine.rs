//! The platform's open-source data engine (PyPI `jet-bridge`): its venv, its launcher and its
//! process.
//!
//! The venv lives in `target/fidelity/venv` and is reused once installed. Tornado 5.1 (pinned by
//! the engine) imports ABCs from `collections`, gone since Python 3.10: the launcher
//! `target/fidelity/launch.py` puts them back, then calls the engine's `main()`.
//!
//! PostgreSQL (`--postgres`) needs a driver the engine does not depend on: `psycopg2-binary` is
//! installed into the same venv the first time a run asks for it, with its own marker file, so a
//! venv made before is upgraded rather than rebuilt.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::Server;
use super::http;

pub const VERSION: &str = "1.12.13";

/// `PYTHONHASHSEED` for the engine and the emulator: a Python `set` (a MySQL `SET` value) is
/// written in an order that follows the string hashes, random per process unless seeded; with
/// one seed for both, the emulator writes the engine's order (docs/mysql.md).
pub const HASH_SEED: &str = "0";

/// The PostgreSQL driver SQLAlchemy 1.4 loads for `postgresql://` URLs (binary wheels: no
/// compiler or libpq headers needed).
const PSYCOPG2: &str = "psycopg2-binary>=2.9,<3";

const LAUNCHER: &str = "\
# Written by `cargo xtask fidelity`: Tornado 5.1 needs the ABCs on `collections` (Python >= 3.10).
import collections, collections.abc
for name in ('MutableMapping', 'Mapping', 'Sequence', 'Iterable', 'Callable', 'MutableSet',
             'MutableSequence'):
    setattr(collections, name, getattr(collections.abc, name))
from jet_bridge.__main__ import main
main()
";

/// The MySQL driver the engine is run with over MariaDB (`mysql+pymysql`: pure Python, no
/// client headers needed; the plain `mysql` engine name wants `mysqlclient`).
const PYMYSQL: &str = "pymysql>=1,<2";

/// Makes the venv when it is not there yet (with the PostgreSQL driver when `postgres`, the
/// MySQL one when `mysql`) and writes the launcher; returns (python, launcher).
pub fn install(cache: &Path, postgres: bool, mysql: bool) -> Result<(PathBuf, PathBuf), String> {
    let venv = cache.join("venv");
    let python = venv.join("bin").join("python");
    let marker = venv.join(format!("jet-bridge-{VERSION}.installed"));
    if !marker.exists() {
        eprintln!(
            "fidelity: installing jet-bridge=={VERSION} into {}",
            venv.display()
        );
        let _ = std::fs::remove_dir_all(&venv);
        run(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
        run(Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            &format!("jet-bridge=={VERSION}"),
        ]))?;
        std::fs::write(&marker, "").map_err(|e| format!("writing {}: {e}", marker.display()))?;
    }
    let driver_marker = venv.join("psycopg2-binary.installed");
    if postgres && !driver_marker.exists() {
        eprintln!("fidelity: installing {PSYCOPG2} into {}", venv.display());
        run(Command::new(&python).args(["-m", "pip", "install", "--quiet", PSYCOPG2]))?;
        std::fs::write(&driver_marker, PSYCOPG2)
            .map_err(|e| format!("writing {}: {e}", driver_marker.display()))?;
    }
    let mysql_marker = venv.join("pymysql.installed");
    if mysql && !mysql_marker.exists() {
        eprintln!("fidelity: installing {PYMYSQL} into {}", venv.display());
        run(Command::new(&python).args(["-m", "pip", "install", "--quiet", PYMYSQL]))?;
        std::fs::write(&mysql_marker, PYMYSQL)
            .map_err(|e| format!("writing {}: {e}", mysql_marker.display()))?;
    }
    let launcher = cache.join("launch.py");
    std::fs::write(&launcher, LAUNCHER)
        .map_err(|e| format!("writing {}: {e}", launcher.display()))?;
    Ok((python, launcher))
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let status = cmd.status().map_err(|e| format!("running {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed: {status}"))
    }
}

/// A free loopback port (there is a small window before the engine binds it).
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("binding: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// The engine's options for an SQLite database file.
pub fn sqlite_args(database: &Path) -> Vec<String> {
    vec![
        "--database_engine=sqlite".to_owned(),
        format!("--database_name={}", database.display()),
        "--database_extra=check_same_thread=false".to_owned(),
    ]
}

/// The engine's options for a PostgreSQL database: it builds
/// `postgresql://USER[:PASSWORD]@HOST:PORT/NAME` from them (`sql_build_engine_url`), leaving out
/// an empty password.
pub fn postgres_args(host: &str, port: u16, user: &str, name: &str) -> Vec<String> {
    vec![
        "--database_engine=postgresql".to_owned(),
        format!("--database_host={host}"),
        format!("--database_port={port}"),
        format!("--database_user={user}"),
        format!("--database_name={name}"),
    ]
}

/// The engine's options for a MySQL or MariaDB database, through PyMySQL, in utf8mb4.
pub fn mysql_args(host: &str, port: u16, user: &str, name: &str) -> Vec<String> {
    vec![
        "--database_engine=mysql+pymysql".to_owned(),
        format!("--database_host={host}"),
        format!("--database_port={port}"),
        format!("--database_user={user}"),
        format!("--database_name={name}"),
        "--database_extra=charset=utf8mb4".to_owned(),
    ]
}

/// Starts the engine over the database named by `database_args` ([`sqlite_args`],
/// [`postgres_args`]) in the working directory `dir` (it writes its store file there) and waits
/// until `GET /api/` answers 200.
pub fn start(
    python: &Path,
    launcher: &Path,
    dir: &Path,
    database_args: &[String],
    key: &str,
) -> Result<(Server, SocketAddr), String> {
    let port = free_port()?;
    let log_path = dir.join("engine.log");
    let log = std::fs::File::create(&log_path)
        .map_err(|e| format!("creating {}: {e}", log_path.display()))?;
    let err = log.try_clone().map_err(|e| e.to_string())?;
    // Under coverage.py when `--coverage` asked for it (its data saved at the SIGTERM the
    // server is stopped with).
    let mut command = Command::new(python);
    match super::coverage::dir() {
        Some(coverage) => command.args(super::coverage::run_args(coverage, launcher)),
        None => command.arg(launcher),
    };
    let child = command
        .env("PYTHONHASHSEED", HASH_SEED)
        .args(["--address=127.0.0.1".to_owned(), format!("--port={port}")])
        .args(database_args)
        .args([
            format!("--bearer_auth_key={key}"),
            "--auto_open_register=false".to_owned(),
            "--api_base_url=http://127.0.0.1:9/api".to_owned(),
            "--web_base_url=http://127.0.0.1:9".to_owned(),
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("starting the engine: {e}"))?;
    let mut server = Server::new("engine", child, log_path);
    server.stop_with_sigterm = super::coverage::dir().is_some();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(status) = server.exited() {
            return Err(format!(
                "the engine exited ({status}) before answering:\n{}",
                server.log_tail()
            ));
        }
        if http::send(addr, "GET", "/api/", None, None).is_ok_and(|r| r.status == 200) {
            return Ok((server, addr));
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the engine did not answer GET /api/ in 90 s:\n{}",
                server.log_tail()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
