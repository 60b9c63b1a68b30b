//! 12, last row: why SQLite puts a saved copy back its own way. The database servers put one
//! back through the shared flow (`flow/snapshot.rs`): in one transaction, the foreign keys' checks
//! and the triggers off, every table emptied, the rows copied back from a store on the server
//! by `INSERT ... SELECT`. SQLite cannot turn a trigger off, but its schema changes are
//! transactional, so the same flow would drop the tables' triggers and make them again inside
//! the restore's transaction, with `PRAGMA defer_foreign_keys` for the checks and `TEMP` tables
//! as the store. SQLite's own way (`svc-emulator-sqlite/src/lib.rs`) is its online backup, which copies the
//! database's pages.
//!
//! Both ways run here on the same 10k rows (the fixture rows of [`seed_sql`] and `notes`, with a
//! trigger), each after the same 5 writes, straight on rusqlite: the figure is the flow's
//! statements, the baseline the page copy.

use std::time::Instant;

use rusqlite::Connection;
use rusqlite::backup::{Backup, StepResult};

use crate::harness::seed_sql;
use crate::report::{Row, Target, median, seconds};

/// The fixture's rows, `notes`, and a trigger on `items` (a trigger is why the flow would
/// drop and make again what it cannot turn off).
fn seed(rows: usize) -> String {
    format!(
        "{}\nCREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, status TEXT NOT NULL);
         CREATE TRIGGER items_noted AFTER UPDATE ON items
         BEGIN INSERT INTO notes (body, status) VALUES ('changed', 'new'); END;",
        seed_sql(rows)
    )
}

/// A test's 5 writes: 4 creates and an update that fires the trigger.
fn writes(conn: &Connection) -> rusqlite::Result<()> {
    for i in 0..4 {
        conn.execute(
            "INSERT INTO notes (body, status) VALUES (?1, 'new')",
            [format!("Test {i}")],
        )?;
    }
    conn.execute("UPDATE items SET score = 1 WHERE id = 5", [])?;
    Ok(())
}

/// The whole of `from` copied into `to` (SQLite's way, `svc-emulator-sqlite/src/lib.rs`).
fn page_copy(from: &Connection, to: &mut Connection) -> rusqlite::Result<()> {
    let backup = Backup::new(from, to)?;
    while backup.step(-1)? != StepResult::Done {}
    Ok(())
}

/// The columns of `table`, comma-separated (none of the seed's is generated).
fn columns(conn: &Connection, table: &str) -> rusqlite::Result<String> {
    let mut statement = conn.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?;
    let names = statement.query_map([table], |row| row.get::<_, String>(0))?;
    Ok(names.collect::<rusqlite::Result<Vec<_>>>()?.join(", "))
}

/// The statements of the servers' flow on SQLite: the store made and filled once (as at a
/// save), then what each restore runs.
fn flow_statements(conn: &Connection) -> rusqlite::Result<(String, String)> {
    let mut save = String::new();
    let mut restore = String::from("BEGIN; PRAGMA defer_foreign_keys = ON;");
    let mut triggers =
        conn.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")?;
    let triggers: Vec<(String, String)> = triggers
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (name, _) in &triggers {
        restore.push_str(&format!("DROP TRIGGER \"{name}\";"));
    }
    for (i, table) in ["items", "notes"].iter().enumerate() {
        let cols = columns(conn, table)?;
        save.push_str(&format!(
            "CREATE TEMP TABLE t{i} AS SELECT {cols} FROM main.\"{table}\";"
        ));
        restore.push_str(&format!(
            "DELETE FROM main.\"{table}\"; \
             INSERT INTO main.\"{table}\" ({cols}) SELECT {cols} FROM temp.t{i};"
        ));
    }
    for (_, sql) in &triggers {
        restore.push_str(&format!("{sql};"));
    }
    restore.push_str("COMMIT;");
    Ok((save, restore))
}

/// The times of `runs` restores each way (after a warm-up of each), each after the test's
/// writes; each restore is checked to have put back the saved data.
fn measure(rows: usize, runs: usize) -> Result<(Vec<f64>, Vec<f64>), Box<dyn std::error::Error>> {
    let mut db = Connection::open_in_memory()?;
    db.execute_batch(&seed(rows))?;
    let mut saved = Connection::open_in_memory()?;
    page_copy(&db, &mut saved)?;
    let (save, restore) = flow_statements(&db)?;
    db.execute_batch(&save)?;
    let mut by_flow = Vec::new();
    let mut by_pages = Vec::new();
    for i in 0..=runs {
        writes(&db)?;
        let started = Instant::now();
        db.execute_batch(&restore)?;
        let flow = started.elapsed().as_secs_f64();
        as_saved(&db)?;
        writes(&db)?;
        let started = Instant::now();
        page_copy(&saved, &mut db)?;
        let pages = started.elapsed().as_secs_f64();
        as_saved(&db)?;
        // The first of each is a warm-up.
        if i > 0 {
            by_flow.push(flow);
            by_pages.push(pages);
        }
    }
    Ok((by_flow, by_pages))
}

/// Whether `db` holds the saved data again: no note (the test's 4 and the trigger's are gone),
/// item 5's score as seeded, and the trigger there (made again by the flow).
fn as_saved(db: &Connection) -> Result<(), Box<dyn std::error::Error>> {
    let found: (i64, Option<i64>, i64) = db.query_row(
        "SELECT (SELECT count(*) FROM notes), (SELECT score FROM items WHERE id = 5), \
         (SELECT count(*) FROM sqlite_master WHERE type = 'trigger')",
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let saved = (0, Some(5 * 37 % 101), 1);
    if found == saved {
        Ok(())
    } else {
        Err(format!(
            "a restore did not put the saved data back: (notes, item 5's score, triggers) are \
             {found:?}, not {saved:?}"
        )
        .into())
    }
}

/// The row: the flow's restore against SQLite's page copy, on `rows` rows.
pub fn row(rows: usize, runs: usize) -> Option<Row> {
    match measure(rows, runs) {
        Ok((by_flow, by_pages)) => Some(Row {
            benchmark: "12. SQLite restore after 5 writes (10k rows): the servers' INSERT ... \
                        SELECT (triggers dropped and made again) vs SQLite's page copy"
                .to_owned(),
            figure: seconds(median(&by_flow)),
            baseline: seconds(median(&by_pages)),
            ratio: median(&by_flow) / median(&by_pages),
            target: Target::None,
        }),
        Err(e) => {
            eprintln!("   SQLite's two ways of a restore not measured: {e}");
            None
        }
    }
}
