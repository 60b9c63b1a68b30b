//! A project's rows of the meta store, kept and put back: its page settings and its accounts
//! (users, refresh tokens, one-time codes, the outbox). Generated API keys and the settings are
//! the emulator's, not the project's state: a reset leaves them.

use std::collections::BTreeMap;

use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use crate::storage::{Store, StoreError};
use svc_emulator_core::dialect::quote_ident;
use svc_engine::base64::{base64_decode, base64_encode_into};

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

/// A project's rows of one table of the meta store as an export writes them: the table's
/// column names, and each row's values in that order (integers and reals as numbers, text as
/// strings, bytes as `{"base64": "..."}`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoreRows {
    /// The columns, in the order of each row's values.
    pub columns: Vec<String>,
    /// The rows.
    pub rows: Vec<Vec<serde_json::Value>>,
}

impl Store {
    /// The rows of `project` of every table of its state, by table, in one transaction.
    pub(crate) async fn export_project(
        &self,
        project: String,
    ) -> Result<BTreeMap<String, StoreRows>, StoreError> {
        self.run(move |conn, _| {
            let tx = conn.transaction()?;
            let mut tables = BTreeMap::new();
            for table in PROJECT_TABLES {
                let columns = columns_of(&tx, table)?;
                let rows = rows_of(&tx, table, &project)?
                    .into_iter()
                    .map(|row| row.into_iter().map(to_json).collect())
                    .collect();
                tables.insert((*table).to_owned(), StoreRows { columns, rows });
            }
            tx.commit()?;
            Ok(tables)
        })
        .await
    }

    /// The tables of `project`'s state that hold rows of it.
    pub fn project_tables_with_rows(&self, project: &str) -> Result<Vec<String>, StoreError> {
        self.run_blocking(|conn, _| {
            let mut held = Vec::new();
            for table in PROJECT_TABLES {
                let any: Option<i64> = conn
                    .query_row(
                        &format!("SELECT 1 FROM {table} WHERE project = ?1 LIMIT 1"),
                        params![project],
                        |r| r.get(0),
                    )
                    .optional()?;
                if any.is_some() {
                    held.push((*table).to_owned());
                }
            }
            Ok(held)
        })
    }

    /// Whether `tables` (an export's `store.json`) can be written as a project's rows: tables
    /// and columns this store keeps, rows as wide as their columns, values it can hold. What
    /// [`import_project`](Self::import_project) checks first, for an import that checks
    /// everything before it writes anything. Blocking: for the start.
    pub(crate) fn check_import(
        &self,
        tables: &BTreeMap<String, StoreRows>,
    ) -> Result<(), StoreError> {
        self.run_blocking(|conn, _| check_rows(conn, tables))
    }

    /// Writes an export's rows as `project`'s, in one transaction: `replace` removes its rows
    /// of those tables first; else a row whose key is taken is left out. The number written.
    /// Blocking: for the start.
    pub(crate) fn import_project(
        &self,
        project: &str,
        tables: &BTreeMap<String, StoreRows>,
        replace: bool,
    ) -> Result<usize, StoreError> {
        self.run_blocking(|conn, _| {
            let tx = conn.transaction()?;
            check_rows(&tx, tables)?;
            let mut written = 0;
            for (named, rows) in tables {
                // The names written into the statements are the store's own (checked above),
                // quoted; the file's text is only compared with them.
                let Some(table) = PROJECT_TABLES.iter().find(|t| **t == named.as_str()) else {
                    continue;
                };
                let known = columns_of(&tx, table)?;
                let columns: Vec<String> = rows
                    .columns
                    .iter()
                    .filter_map(|c| known.iter().find(|k| *k == c).map(|k| quote_ident(k)))
                    .collect();
                if replace {
                    tx.execute(
                        &format!("DELETE FROM {table} WHERE project = ?1"),
                        params![project],
                    )?;
                }
                let at_project = rows.columns.iter().position(|c| c == "project");
                let marks = vec!["?"; columns.len()].join(", ");
                let verb = if replace {
                    "INSERT"
                } else {
                    "INSERT OR IGNORE"
                };
                let mut insert = tx.prepare(&format!(
                    "{verb} INTO {table} ({}) VALUES ({marks})",
                    columns.join(", ")
                ))?;
                for row in &rows.rows {
                    let mut values = row.iter().map(from_json).collect::<Result<Vec<_>, _>>()?;
                    if let Some(at) = at_project {
                        values[at] = Value::Text(project.to_owned());
                    }
                    written += insert.execute(params_from_iter(values))?;
                }
            }
            tx.commit()?;
            Ok(written)
        })
    }
}

/// Why `tables`, an export's `store.json`, cannot be written into this store, if it cannot.
fn check_rows(conn: &Connection, tables: &BTreeMap<String, StoreRows>) -> Result<(), StoreError> {
    for (table, rows) in tables {
        if !PROJECT_TABLES.contains(&table.as_str()) {
            return Err(StoreError::Corrupt(format!(
                "the export's store.json has a table {table:?}, which this emulator does not \
                 keep (its tables: {})",
                PROJECT_TABLES.join(", ")
            )));
        }
        let known = columns_of(conn, table)?;
        if let Some(unknown) = rows.columns.iter().find(|c| !known.contains(c)) {
            return Err(StoreError::Corrupt(format!(
                "the export's store.json names a column {unknown:?} of {table}, which this \
                 emulator's store does not have: was it exported by a newer version?"
            )));
        }
        // Each row is written as the importing project's: its `project` column is set, never
        // read from the file.
        let twice = |c: &String| rows.columns.iter().filter(|d| *d == c).count() > 1;
        let no_project = !rows.columns.iter().any(|c| c == "project");
        if !rows.rows.is_empty() && (no_project || rows.columns.iter().any(twice)) {
            return Err(StoreError::Corrupt(format!(
                "the export's store.json lists the columns of {table} without \"project\", or \
                 one of them twice: export the data again"
            )));
        }
        for row in &rows.rows {
            if row.len() != rows.columns.len() {
                return Err(StoreError::Corrupt(format!(
                    "a row of {table} in the export's store.json has {} values for {} columns",
                    row.len(),
                    rows.columns.len()
                )));
            }
            for value in row {
                from_json(value)?;
            }
        }
    }
    Ok(())
}

/// The column names of `table`, in table order.
fn columns_of(conn: &Connection, table: &str) -> Result<Vec<String>, StoreError> {
    let stmt = conn.prepare(&format!("SELECT * FROM {table} LIMIT 0"))?;
    Ok(stmt.column_names().map(str::to_owned).collect())
}

/// A stored value as an export writes it.
fn to_json(value: Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Integer(i) => i.into(),
        Value::Real(f) => {
            serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, Into::into)
        }
        Value::Text(t) => t.into(),
        Value::Blob(b) => {
            let mut text = Vec::new();
            base64_encode_into(&mut text, &b);
            serde_json::json!({ "base64": String::from_utf8_lossy(&text) })
        }
    }
}

/// A value an export wrote, stored again.
fn from_json(value: &serde_json::Value) -> Result<Value, StoreError> {
    Ok(match value {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Integer(i64::from(*b)),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Real(n.as_f64().unwrap_or_default()),
        },
        serde_json::Value::String(s) => Value::Text(s.clone()),
        serde_json::Value::Object(o) => match o.get("base64").and_then(|b| b.as_str()) {
            Some(text) => Value::Blob(base64_decode(text).ok_or_else(|| {
                StoreError::Corrupt("a value of the export's store.json is not base64".to_owned())
            })?),
            None => {
                return Err(StoreError::Corrupt(
                    "a value of the export's store.json is an object without \"base64\"".to_owned(),
                ));
            }
        },
        serde_json::Value::Array(_) => {
            return Err(StoreError::Corrupt(
                "a value of the export's store.json is a list".to_owned(),
            ));
        }
    })
}
