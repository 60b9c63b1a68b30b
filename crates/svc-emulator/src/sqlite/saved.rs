//! A copy of a SQLite resource's database kept in memory, and putting it back: SQLite's online
//! backup, page by page, both ways (a 10k-row table takes well under a millisecond; see
//! docs/performance.md). The copy holds the whole database: every table, `sqlite_sequence`
//! (the next `AUTOINCREMENT` keys) and the schema.

use std::sync::Mutex;
use std::time::Duration;

use rusqlite::Connection;
use rusqlite::backup::Backup;

use crate::engine::EngineError;
use crate::sqlite::Resource;

/// A SQLite database copied into memory by [`Resource::save`].
#[derive(Debug)]
pub(crate) struct SavedDatabase(Mutex<Connection>);

/// Copies the whole of `from` into `to`, in one step.
fn copy(from: &Connection, to: &mut Connection) -> Result<(), EngineError> {
    let backup = Backup::new(from, to)?;
    // All pages in one step: the copy is taken (or put back) as one consistent state.
    backup.run_to_completion(-1, Duration::ZERO, None)?;
    Ok(())
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
