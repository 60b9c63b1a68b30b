//! The meta store: a SQLite database that keeps what must survive a restart on the same data
//! path (the last projects config, generated API keys, page settings).
//!
//! One connection behind a mutex: the emulator's write rate is a person's or a test's, and one
//! connection makes every operation a simple serial transaction. The lock is only ever taken on a
//! blocking thread (`Store::run` uses the blocking pool), never across an `.await`.

pub(crate) mod accounts;
mod import_mark;
mod pages;
mod project_state;
mod settings;
pub mod tools;

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use crate::util::timestamp::MonotonicClock;

pub(crate) use import_mark::ImportMark;
pub use pages::{Created, EnvScope, PageSet, StoredPage};
pub(crate) use project_state::ProjectRows;
pub use project_state::StoreRows;

/// The schema version written to `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS generated_keys (
    project TEXT PRIMARY KEY,
    api_key TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pages (
    project TEXT NOT NULL,
    environment TEXT NOT NULL,
    draft INTEGER NOT NULL CHECK (draft IN (0, 1)),
    uid TEXT NOT NULL,
    date_add TEXT NOT NULL,
    fields TEXT NOT NULL,
    PRIMARY KEY (project, environment, draft, uid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pages_by_date ON pages (project, environment, draft, date_add, uid);
";

/// A handle on the meta store; cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
    clock: Arc<MonotonicClock>,
}

/// The meta store failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite refused an operation.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// Stored data does not have the shape this version writes.
    #[error("stored data is not readable: {0}")]
    Corrupt(String),
    /// A data file could not be created or made private.
    #[error("{0}")]
    File(String),
    /// The blocking task running the operation failed.
    #[error("database task failed: {0}")]
    Task(String),
}

impl Store {
    /// Opens (creating if needed) the store at `path`, or an in-memory one. Blocking.
    pub fn open(path: Option<&Path>) -> Result<Self, StoreError> {
        let conn = match path {
            None => Connection::open_in_memory()?,
            Some(path) => {
                // The directory was made ready by `private::prepare_data_dir` at start.
                svc_emulator_core::private::private_database(path)
                    .map_err(|e| StoreError::File(e.to_string()))?;
                let conn = Connection::open(path)?;
                // WAL lets readers (another emulator, a person with the sqlite3 shell) look in
                // while we write; NORMAL sync is safe with WAL and much faster.
                let _mode: String =
                    conn.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
                conn.pragma_update(None, "synchronous", "NORMAL")?;
                conn
            }
        };
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrate(&conn)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
            clock: Arc::new(MonotonicClock::default()),
        })
    }

    /// Runs `f` with the connection on a blocking thread.
    pub(crate) async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &MonotonicClock) -> Result<T, StoreError> + Send + 'static,
    {
        let store = self.clone();
        svc_emulator_core::blocking::on_blocking_pool(move || store.run_blocking(f))
            .await
            .map_err(StoreError::Task)?
    }

    /// Runs `f` with the connection on the current thread; for start-up code already on a
    /// blocking thread.
    pub fn run_blocking<T>(
        &self,
        f: impl FnOnce(&mut Connection, &MonotonicClock) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        // A panic while holding the lock cannot leave a half-done change behind (transactions roll
        // back on drop), so a poisoned lock is still a good connection.
        let mut conn = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut conn, &self.clock)
    }
}

fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::Corrupt(format!(
            "the data file has schema version {version}, newer than this emulator's \
             {SCHEMA_VERSION}"
        )));
    }
    conn.execute_batch(SCHEMA)?;
    conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    Ok(())
}
