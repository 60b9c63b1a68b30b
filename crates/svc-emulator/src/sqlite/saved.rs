//! A copy of a SQLite resource's database kept in memory, and putting it back: SQLite's online
//! backup, both ways, which copies the database's pages as they are (no SQL runs). The copy
//! holds the whole database: every table, `sqlite_sequence` (the next `AUTOINCREMENT` keys)
//! and the schema.

use std::sync::Mutex;
use std::time::Duration;

use rusqlite::Connection;
use rusqlite::backup::{Backup, StepResult};

use crate::engine::EngineError;
use crate::sqlite::Resource;

/// A SQLite database copied into memory by [`Resource::save`].
#[derive(Debug)]
pub(crate) struct SavedDatabase(Mutex<Connection>);

/// How long a copy waits for a lock another connection holds (as the resource's connections'
/// busy timeout does).
const WAIT: Duration = Duration::from_secs(5);

/// Copies the whole of `from` into `to`, all pages in one step: the copy is taken (or put
/// back) as one consistent state. A step that finds a database locked is tried again.
fn copy(from: &Connection, to: &mut Connection) -> Result<(), EngineError> {
    let backup = Backup::new(from, to)?;
    let start = std::time::Instant::now();
    loop {
        match backup.step(-1)? {
            StepResult::Done => return Ok(()),
            StepResult::Busy | StepResult::Locked if start.elapsed() < WAIT => {
                std::thread::sleep(Duration::from_millis(1));
            }
            StepResult::More => {}
            _ => {
                return Err(EngineError::Internal(format!(
                    "the database stayed locked for {}s while copying it",
                    WAIT.as_secs()
                )));
            }
        }
    }
}

impl Resource {
    /// A copy of the database as it is now, in memory.
    pub(crate) fn save(&self) -> Result<SavedDatabase, EngineError> {
        let mut copied = Connection::open_in_memory()?;
        self.with_read(|conn| copy(conn, &mut copied))?;
        Ok(SavedDatabase(Mutex::new(copied)))
    }

    /// Puts `saved` back: the database is again what it was when saved, for every connection.
    /// The schema is read again (a saved database may have other tables).
    pub(crate) fn restore(&self, saved: &SavedDatabase) -> Result<(), EngineError> {
        // The copy is only read; a panic elsewhere while it was held left it whole.
        let from = saved.0.lock().unwrap_or_else(|e| e.into_inner());
        self.with_writer(|conn| copy(&from, conn))?;
        self.reload()
    }
}
