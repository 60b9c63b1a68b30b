//! A MariaDB (or MySQL) server for tests and tools.
//!
//! [`Server::shared`] finds or starts one server per process: the one named by
//! `SVC_TEST_MYSQL_URL`, else the machine's own on 127.0.0.1:3306 (user `root`, no password),
//! else a throwaway one that `mariadb-install-db` makes in a temporary directory and that
//! listens only on 127.0.0.1 on a free port. The throwaway server runs under a small `sh`
//! watchdog whose stdin is a pipe this process holds: when the process exits, however it
//! exits, the kernel closes the pipe, and the watchdog stops the server and removes the
//! directory.
//!
//! ```no_run
//! let server = maria_server::Server::shared()?;
//! let db = server.database("shop")?;
//! let rows = server.sql(db.name(), "CREATE TABLE t (x int); INSERT INTO t VALUES (1); SELECT x FROM t")?;
//! assert_eq!(rows, "1\n");
//! println!("{}", db.url());
//! # Ok::<(), maria_server::Error>(())
//! ```
//!
//! Each [`Database`] has a unique name and is dropped with it, so tests on a shared server
//! leave nothing behind.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

// Compile the README's example as a doctest (`no_run`: it needs a server).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// Why no server could be had, or a statement failed: what failed and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// A MariaDB or MySQL server that the tests may make databases on.
#[derive(Debug)]
pub struct Server {
    host: String,
    port: u16,
    user: String,
    password: Option<String>,
    /// The throwaway server's watchdog, whose stdin closing stops it.
    watchdog: Option<Child>,
}

/// The environment variable that names a server: `mysql://USER[:PASSWORD]@HOST[:PORT]`.
pub const URL_VARIABLE: &str = "SVC_TEST_MYSQL_URL";

impl Server {
    /// The process's one shared server, found or started by the first call; later calls
    /// return the same one, or the same error.
    pub fn shared() -> Result<&'static Server, Error> {
        static SHARED: OnceLock<Result<Server, Error>> = OnceLock::new();
        SHARED
            .get_or_init(Server::find)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The server of [`URL_VARIABLE`], the machine's own, or a throwaway one.
    pub fn find() -> Result<Server, Error> {
        if let Ok(url) = std::env::var(URL_VARIABLE)
            && !url.is_empty()
        {
            let server = Server::from_url(&url)?;
            server
                .sql("", "SELECT 1")
                .map_err(|e| Error(format!("the server of {URL_VARIABLE} does not answer: {e}")))?;
            return Ok(server);
        }
        let machine = Server {
            host: "127.0.0.1".to_owned(),
            port: 3306,
            user: "root".to_owned(),
            password: None,
            watchdog: None,
        };
        let addr = SocketAddr::from(([127, 0, 0, 1], 3306));
        if TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
            && machine.sql("", "SELECT 1").is_ok()
        {
            return Ok(machine);
        }
        Server::start()
    }

    fn from_url(url: &str) -> Result<Server, Error> {
        let rest = url
            .strip_prefix("mysql://")
            .or_else(|| url.strip_prefix("mariadb://"))
            .ok_or_else(|| Error(format!("{URL_VARIABLE} must start with mysql://")))?;
        let authority = rest.split('/').next().unwrap_or_default();
        let (userinfo, hostport) = authority.rsplit_once('@').unwrap_or(("root", authority));
        let (user, password) = match userinfo.split_once(':') {
            Some((u, p)) => (u.to_owned(), Some(p.to_owned())),
            None => (userinfo.to_owned(), None),
        };
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h.to_owned(),
                p.parse()
                    .map_err(|_| Error(format!("{URL_VARIABLE}: bad port {p:?}")))?,
            ),
            None => (hostport.to_owned(), 3306),
        };
        Ok(Server {
            host,
            port,
            user,
            password,
            watchdog: None,
        })
    }

    /// Starts a throwaway server: `mariadb-install-db` in a new temporary directory, then
    /// `mariadbd` on 127.0.0.1 and a free port; returns once it answers (within 60 s).
    pub fn start() -> Result<Server, Error> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "maria-server-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error(format!("cannot create {}: {e}", dir.display())))?;
        let data = dir.join("data");
        let user = current_user();
        let install = Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--user={user}"))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                let _ = std::fs::remove_dir_all(&dir);
                Error(format!(
                    "no MariaDB server answers on 127.0.0.1:3306 and none can be started: \
                     running mariadb-install-db failed ({e}); install MariaDB (apt-get install \
                     mariadb-server) or set {URL_VARIABLE}"
                ))
            })?;
        if !install.status.success() {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(Error(format!(
                "mariadb-install-db failed ({}):\n{}{}",
                install.status,
                String::from_utf8_lossy(&install.stdout),
                String::from_utf8_lossy(&install.stderr)
            )));
        }
        let port = free_port()?;
        let server = [
            "mariadbd".to_owned(),
            "--no-defaults".to_owned(),
            format!("--datadir={}", data.display()),
            format!("--socket={}", dir.join("sock").display()),
            format!("--pid-file={}", dir.join("pid").display()),
            format!("--port={port}"),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--user={user}"),
            "--skip-log-bin".to_owned(),
            "--innodb-flush-log-at-trx-commit=0".to_owned(),
        ];
        let watchdog = Command::new("sh")
            .arg("-c")
            .arg(WATCHDOG)
            .arg("maria-server-watchdog")
            .arg(&dir)
            .args(server)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Error(format!("cannot start sh for mariadbd: {e}")))?;
        let mut started = Server {
            host: "127.0.0.1".to_owned(),
            port,
            user: "root".to_owned(),
            password: None,
            watchdog: Some(watchdog),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if started.sql("", "SELECT 1").is_ok() {
                return Ok(started);
            }
            if let Some(w) = started.watchdog.as_mut()
                && let Ok(Some(status)) = w.try_wait()
            {
                return Err(Error(format!(
                    "mariadbd exited ({status}) before it answered:\n{}",
                    log_tail(&dir)
                )));
            }
            if Instant::now() > deadline {
                return Err(Error(format!(
                    "mariadbd did not answer in 60 s:\n{}",
                    log_tail(&dir)
                )));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The host and port.
    pub fn address(&self) -> (&str, u16) {
        (&self.host, self.port)
    }

    /// `mysql://USER[:PASSWORD]@HOST:PORT/DATABASE`.
    pub fn url(&self, database: &str) -> String {
        let password = self
            .password
            .as_deref()
            .map_or(String::new(), |p| format!(":{p}"));
        format!(
            "mysql://{}{password}@{}:{}/{database}",
            self.user, self.host, self.port
        )
    }

    /// A new, empty database named `PREFIX_PID_N` (utf8mb4), dropped when the [`Database`]
    /// is dropped.
    pub fn database(&self, prefix: &str) -> Result<Database<'_>, Error> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "{prefix}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(Error(format!(
                "database prefix {prefix:?}: use letters, digits and _"
            )));
        }
        self.sql(
            "",
            &format!(
                "DROP DATABASE IF EXISTS `{name}`; \
                 CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
            ),
        )?;
        Ok(Database { server: self, name })
    }

    /// Runs `sql` with the `mariadb` client in batch mode (`--batch --skip-column-names`) on
    /// `database` (none when empty) and returns what it printed: rows one a line, columns
    /// separated by tabs. The first error stops it and is returned with the client's stderr.
    pub fn sql(&self, database: &str, sql: &str) -> Result<String, Error> {
        let mut cmd = Command::new(client());
        cmd.arg("--no-defaults")
            .arg(format!("--host={}", self.host))
            .arg(format!("--port={}", self.port))
            .arg(format!("--user={}", self.user))
            .args(["--protocol=TCP", "--batch", "--skip-column-names"])
            .arg("--default-character-set=utf8mb4");
        if let Some(password) = &self.password {
            // The client reads it from the environment, never from the command line.
            cmd.env("MYSQL_PWD", password);
        }
        if !database.is_empty() {
            cmd.arg(database);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                Error(format!(
                    "cannot run the mariadb client ({e}): install it (apt-get install \
                     mariadb-client)"
                ))
            })?;
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(sql.as_bytes());
        }
        let mut out = String::new();
        let mut err = String::new();
        if let Some(mut stdout) = child.stdout.take() {
            let _ = stdout.read_to_string(&mut out);
        }
        if let Some(mut stderr) = child.stderr.take() {
            let _ = stderr.read_to_string(&mut err);
        }
        let status = child
            .wait()
            .map_err(|e| Error(format!("the mariadb client: {e}")))?;
        if status.success() {
            Ok(out)
        } else {
            Err(Error(format!(
                "the mariadb client failed ({status}): {err}"
            )))
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut watchdog) = self.watchdog.take() {
            drop(watchdog.stdin.take());
            let _ = watchdog.wait();
        }
    }
}

/// A database of its own on a [`Server`], dropped with this value.
#[derive(Debug)]
pub struct Database<'s> {
    server: &'s Server,
    name: String,
}

impl Database<'_> {
    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its URL, `mysql://USER@HOST:PORT/NAME`.
    pub fn url(&self) -> String {
        self.server.url(&self.name)
    }

    /// Runs `sql` on it (see [`Server::sql`]).
    pub fn sql(&self, sql: &str) -> Result<String, Error> {
        self.server.sql(&self.name, sql)
    }
}

impl Drop for Database<'_> {
    fn drop(&mut self) {
        let _ = self
            .server
            .sql("", &format!("DROP DATABASE IF EXISTS `{}`", self.name));
    }
}

/// The watchdog, run by `sh -c`: `$1` is the server's directory, the rest the server's
/// command line. It starts the server, waits until its stdin closes (this process ended or
/// dropped the [`Server`]), then stops the server, waits for it and removes the directory.
const WATCHDOG: &str = r#"dir=$1; shift
"$@" >"$dir/server.log" 2>&1 </dev/null &
pid=$!
cat >/dev/null
kill "$pid" 2>/dev/null
wait "$pid"
rm -rf "$dir"
"#;

fn client() -> &'static str {
    if which("mariadb") { "mariadb" } else { "mysql" }
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join(program).is_file()))
}

fn current_user() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| {
            Command::new("id")
                .arg("-un")
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        })
        .unwrap_or_else(|| "root".to_owned())
}

fn free_port() -> Result<u16, Error> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| Error(format!("binding a port: {e}")))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| Error(e.to_string()))
}

fn log_tail(dir: &std::path::Path) -> String {
    let log: PathBuf = dir.join("server.log");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_the_server() {
        let s = Server::from_url("mysql://app:pw@db.local:3307").unwrap();
        assert_eq!(s.url("shop"), "mysql://app:pw@db.local:3307/shop");
        let s = Server::from_url("mariadb://root@127.0.0.1").unwrap();
        assert_eq!(s.address(), ("127.0.0.1", 3306));
        assert!(Server::from_url("postgres://x").is_err());
    }

    /// A throwaway server starts, takes a database, and is gone when dropped.
    #[test]
    #[ignore = "needs MariaDB: run with --ignored (cargo xtask ci does)"]
    fn a_throwaway_server_starts_and_stops() {
        let server = Server::start().unwrap_or_else(|e| panic!("{e}"));
        let (_, port) = server.address();
        {
            let db = server.database("probe").unwrap();
            let rows = db
                .sql("CREATE TABLE t (x varchar(5)); INSERT INTO t VALUES ('é'); SELECT x FROM t")
                .unwrap();
            assert_eq!(rows, "é\n");
        }
        drop(server);
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        assert!(TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_err());
    }
}
