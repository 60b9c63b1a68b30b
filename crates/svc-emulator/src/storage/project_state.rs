//! A project's rows of the meta store, kept and put back: its page settings and its accounts
//! (users, refresh tokens, one-time codes, the outbox). Generated API keys and the settings are
//! the emulator's, not the project's state: a reset leaves them.

use rusqlite::types::Value;
use rusqlite::{Connection, params, params_from_iter};

use crate::storage::{Store, StoreError};

/// The meta store's tables that hold a project's state, each with a `project` column.
const PROJECT_TABLES: &[&str] = &[
    "pages",
    "account_users",
    "account_refresh_tokens",
    "account_codes",
    "account_outbox",
];

/// A project's rows of every table of [`PROJECT_TABLES`], in its order.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProjectRows(Vec<Vec<Vec<Value>>>);

impl Store {
    /// The rows of `project`, as they are now.
    pub(crate) async fn save_project(&self, project: String) -> Result<ProjectRows, StoreError> {
        self.run(move |conn, _| {
            let tx = conn.transaction()?;
            let rows = PROJECT_TABLES
                .iter()
                .map(|table| rows_of(&tx, table, &project))
                .collect::<Result<_, _>>()?;
            tx.commit()?;
            Ok(ProjectRows(rows))
        })
        .await
    }

    /// Makes the rows of `project` those of `saved` again, in one transaction.
    pub(crate) async fn restore_project(
        &self,
        project: String,
        saved: ProjectRows,
    ) -> Result<(), StoreError> {
        self.run(move |conn, _| {
            let tx = conn.transaction()?;
            for (table, rows) in PROJECT_TABLES.iter().zip(&saved.0) {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE project = ?1"),
                    params![project],
                )?;
                let Some(width) = rows.first().map(Vec::len) else {
                    continue;
                };
                let marks = vec!["?"; width].join(", ");
                let mut insert = tx.prepare(&format!("INSERT INTO {table} VALUES ({marks})"))?;
                for row in rows {
                    insert.execute(params_from_iter(row))?;
                }
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }
}

/// Every row of `table` whose `project` is `project`, all columns in table order.
fn rows_of(conn: &Connection, table: &str, project: &str) -> Result<Vec<Vec<Value>>, StoreError> {
    let mut stmt = conn.prepare(&format!("SELECT * FROM {table} WHERE project = ?1"))?;
    let width = stmt.column_count();
    let rows = stmt.query_map(params![project], |row| {
        (0..width).map(|i| row.get::<_, Value>(i)).collect()
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
