//! A copy of a SQLite resource's database kept in memory, and putting it back: SQLite's online
//! backup, both ways, which copies the database's pages as they are (no SQL runs). The copy
//! holds the whole database: every table, `sqlite_sequence` (the next `AUTOINCREMENT` keys)
//! and the schema. Only the resource that saved a copy puts it back.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::Connection;
use rusqlite::backup::{Backup, StepResult};

use crate::engine::EngineError;
use crate::engine::records::Origin;
use crate::sqlite::Resource;

/// A SQLite database copied into memory by [`Resource::save`], and the mark of the resource
/// that saved it.
#[derive(Debug)]
pub(crate) struct SavedDatabase(Mutex<Connection>, Origin);

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

/// In-memory databases seeded in this process, by their seed, the most recent last: a test
/// suite that starts an emulator per test runs each seed once, and every later start copies
/// the database the first one made (a 10k-row seed: the copy instead of the seed's 20 ms; see
/// docs/performance.md, section 12).
static SEEDED: Mutex<Vec<(String, Arc<Mutex<Connection>>)>> = Mutex::new(Vec::new());

/// How many seeds [`SEEDED`] keeps.
const SEEDS_KEPT: usize = 8;

/// Words of a seed that a copy would not repeat: a result that may differ from one run to the
/// next (`random()`, `datetime('now')`, `CURRENT_TIMESTAMP`, ...), or a setting of the
/// connection rather than the database (`PRAGMA`, `ATTACH`). Such a seed runs at every start.
const UNREPEATABLE: &[&str] = &[
    "random",
    "now",
    "current_",
    "changes",
    "last_insert_rowid",
    "pragma",
    "attach",
];

/// Runs `seed_sql` on the new in-memory database `conn`, or copies the database an earlier
/// run of the same seed made in this process.
pub(crate) fn seed_in_memory(conn: &mut Connection, seed_sql: &str) -> Result<(), EngineError> {
    let lower = seed_sql.to_ascii_lowercase();
    if seed_sql.trim().is_empty() || UNREPEATABLE.iter().any(|w| lower.contains(w)) {
        conn.execute_batch(seed_sql)?;
        return Ok(());
    }
    let kept = {
        let seeded = SEEDED.lock().unwrap_or_else(|e| e.into_inner());
        seeded
            .iter()
            .find(|(seed, _)| seed == seed_sql)
            .map(|(_, db)| Arc::clone(db))
    };
    if let Some(db) = kept {
        let from = db.lock().unwrap_or_else(|e| e.into_inner());
        return copy(&from, conn);
    }
    conn.execute_batch(seed_sql)?;
    let mut copied = Connection::open_in_memory()?;
    copy(conn, &mut copied)?;
    let mut seeded = SEEDED.lock().unwrap_or_else(|e| e.into_inner());
    if !seeded.iter().any(|(seed, _)| seed == seed_sql) {
        if seeded.len() == SEEDS_KEPT {
            seeded.remove(0);
        }
        let db = Arc::new(Mutex::new(copied));
        seeded.push((seed_sql.to_owned(), db));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    /// A seed run again copies the first run's database: same rows, and each copy its own.
    #[test]
    fn a_seed_run_again_is_a_copy_of_its_first_run_of_its_own() {
        let seed = "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);\
                    INSERT INTO t (v) VALUES ('a'), ('b'); -- seed_in_memory test";
        let mut first = Connection::open_in_memory().unwrap();
        seed_in_memory(&mut first, seed).unwrap();
        first.execute("INSERT INTO t (v) VALUES ('c')", []).unwrap();
        let mut second = Connection::open_in_memory().unwrap();
        seed_in_memory(&mut second, seed).unwrap();
        assert_eq!((count(&first), count(&second)), (3, 2));
        let kept = SEEDED.lock().unwrap();
        assert!(kept.iter().any(|(s, _)| s == seed));
    }

    /// A seed whose result may change from run to run runs every time, and is not kept.
    #[test]
    fn a_seed_with_random_or_now_runs_every_time() {
        let seed = "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER);\
                    INSERT INTO t (v) VALUES (random());";
        let mut conn = Connection::open_in_memory().unwrap();
        seed_in_memory(&mut conn, seed).unwrap();
        assert_eq!(count(&conn), 1);
        let kept = SEEDED.lock().unwrap();
        assert!(!kept.iter().any(|(s, _)| s == seed));
    }
}
