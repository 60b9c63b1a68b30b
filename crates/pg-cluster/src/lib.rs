//! A throwaway PostgreSQL server for tests and tools.
//!
//! [`Cluster::start`] runs `initdb` in a fresh temporary directory and starts a server that
//! listens only on 127.0.0.1, on a free port, with its Unix socket in that directory, trust
//! authentication and no fsync. Dropping the [`Cluster`] stops the server and removes the
//! directory. [`Cluster::shared`] starts one per process and leaves it running until the
//! process exits, however it exits: the server runs under a small `sh` watchdog whose stdin is
//! a pipe this process holds, and the kernel closes that pipe when the process ends.
//!
//! ```no_run
//! let cluster = pg_cluster::Cluster::start()?;
//! cluster.create_database("shop")?;
//! let count = cluster.psql(
//!     "shop",
//!     "CREATE TABLE item (name text); INSERT INTO item VALUES ('é'), ('ü'); \
//!      SELECT count(*) FROM item",
//! )?;
//! assert_eq!(count, "2\n");
//! println!("{}", cluster.url("shop")); // postgres://postgres@127.0.0.1:PORT/shop
//! # Ok::<(), pg_cluster::Error>(())
//! ```
//!
//! The programs come from `PG_BIN` if set, else from `PATH`, else from the newest
//! `/usr/lib/postgresql/VERSION/bin`. PostgreSQL refuses to run as root: as root, `initdb`,
//! the server and its watchdog run as the `postgres` account (which the distributions'
//! packages create), and the directory belongs to it. Every failure is an [`Error`] that says
//! what failed and what to do.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod account;
mod binaries;
mod error;
mod psql;
mod start;

use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::OnceLock;

pub use error::Error;

use binaries::Binaries;

// Compile the README's example as a doctest (`no_run`: it needs PostgreSQL).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// A running PostgreSQL server in a directory of its own. Dropping it stops the server (fast
/// shutdown) and removes the directory, and returns when both are done.
#[derive(Debug)]
pub struct Cluster {
    port: u16,
    dir: PathBuf,
    binaries: Binaries,
    /// The `sh` watchdog, with the server as its child; its stdin (the writing end kept here)
    /// closing is the order to stop.
    watchdog: Child,
}

impl Cluster {
    /// Starts a new cluster: `initdb` in a fresh temporary directory (UTF8, locale C.UTF-8 or
    /// C), then the server on 127.0.0.1 and a free port; returns once it accepts connections
    /// (within 60 s, else an error with the end of its log).
    pub fn start() -> Result<Cluster, Error> {
        start::start()
    }

    /// The process's one shared cluster, started by the first call; later calls (from any
    /// thread) return the same one, or the same error. It is never dropped, yet stops and is
    /// removed when the process exits, even by a panic or a signal.
    pub fn shared() -> Result<&'static Cluster, Error> {
        static SHARED: OnceLock<Result<Cluster, Error>> = OnceLock::new();
        SHARED
            .get_or_init(Cluster::start)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The superuser role's name; it logs in without a password (trust authentication).
    pub fn user(&self) -> &str {
        start::SUPERUSER
    }

    /// `postgres://USER@127.0.0.1:PORT/DATABASE`, the database name percent-encoded.
    pub fn url(&self, database: &str) -> String {
        format!(
            "postgres://{}@127.0.0.1:{}/{}",
            self.user(),
            self.port,
            psql::url_segment(database)
        )
    }

    /// Creates a new, empty database (from `template0`); an error if it exists already.
    pub fn create_database(&self, name: &str) -> Result<(), Error> {
        let sql = psql::create_database_sql(name)?;
        self.psql("postgres", &sql).map(drop)
    }

    /// Runs `sql` with `psql -X -q -v ON_ERROR_STOP=1 -At` on `database` and returns what it
    /// printed: the rows of every query, one a line, columns separated by `|`, each line ending
    /// with a newline (`"1\n"`). The statements run one by one, each in its own transaction
    /// unless the script says `BEGIN`; the first error stops the script and is returned, with
    /// psql's stderr.
    pub fn psql(&self, database: &str, sql: &str) -> Result<String, Error> {
        psql::run(&self.binaries, self.port, database, sql)
    }

    /// The cluster's directory: data/ (the data directory), the Unix socket, and
    /// `server.log`. It is removed when the cluster stops.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Closing the watchdog's stdin is the order to stop: it interrupts the server (fast
        // shutdown), waits for it and removes the directory.
        drop(self.watchdog.stdin.take());
        let _ = self.watchdog.wait();
        // In case the watchdog could not finish (it was killed): remove what is left.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
