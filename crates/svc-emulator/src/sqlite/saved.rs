//! A copy of a SQLite resource's database kept in memory, and putting it back: SQLite's online
//! backup, page by page, both ways (a 10k-row table takes well under a millisecond; see
//! docs/performance.md). The copy holds the whole database: every table, `sqlite_sequence`
//! (the next `AUTOINCREMENT` keys) and the schema. Only the resource that saved a copy puts it
//! back.

use std::sync::Mutex;
use std::time::Duration;

use rusqlite::Connection;
use rusqlite::backup::{Backup, StepResult};

use crate::engine::EngineError;
use crate::flow::saved::Origin;
use crate::sqlite::Resource;

/// A SQLite database copied into memory by [`Resource::save`], and the mark of the resource
/// that saved it.
#[derive(Debug)]
pub(crate) struct SavedDatabase(Mutex<Connection>, Origin);

/// How many times a step that found the database locked is tried again, a millisecond apart.
const LOCKED_TRIES: u32 = 1000;

/// Copies the whole of `from` into `to`, in one step.
fn copy(from: &Connection, to: &mut Connection) -> Result<(), EngineError> {
    let backup = Backup::new(from, to)?;
    // All pages in one step (-1, which `run_to_completion` refuses): the copy is taken (or put
    // back) as one consistent state.
    for _ in 0..LOCKED_TRIES {
        match backup.step(-1)? {
            StepResult::Done => return Ok(()),
            // Busy or locked by another connection: tried again.
            _ => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    Err(EngineError::Internal(
        "the SQLite database stayed locked for a second: try again".to_owned(),
    ))
}

impl Resource {
    /// A copy of the database as it is now, in memory.
    pub(crate) fn save(&self) -> Result<SavedDatabase, EngineError> {
        let mut copied = Connection::open_in_memory()?;
        self.with_read(|conn| copy(conn, &mut copied))?;
        Ok(SavedDatabase(Mutex::new(copied), self.origin))
    }

    /// Puts `saved` back: the database is again what it was when saved, for every connection.
    /// The schema is read again (a saved database may have other tables).
    pub(crate) fn restore(&self, saved: &SavedDatabase) -> Result<(), EngineError> {
        if saved.1 != self.origin {
            return Err(EngineError::Internal(
                "this copy of the data was saved from another resource: restore it on the \
                 resource that saved it"
                    .to_owned(),
            ));
        }
        // The copy is only read; a panic elsewhere while it was held left it whole.
        let from = saved.0.lock().unwrap_or_else(|e| e.into_inner());
        self.with_writer(|conn| copy(&from, conn))?;
        self.reload()
    }
}
