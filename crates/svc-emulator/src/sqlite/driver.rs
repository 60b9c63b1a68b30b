//! SQLite's driver (`flow::driver`): rusqlite on the one connection an operation holds, each
//! step done when it is called (`flow::references::run_now`).

use rusqlite::types::Value;
use rusqlite::{Connection, params_from_iter};

use crate::flow::driver::Driver;
use crate::sqlite::flows::Sqlite;
use crate::sqlite::schema::prepare;

/// SQLite's driver: rusqlite on the connection the operation holds, each step done when
/// called.
impl<'c> Driver for Sqlite<'c> {
    type Conn = &'c mut Connection;
    type Row = Vec<Value>;
    type Binds = Vec<Value>;
    type Fault = rusqlite::Error;

    async fn batch(conn: &mut &'c mut Connection, sql: &str) -> rusqlite::Result<()> {
        conn.execute_batch(sql)
    }

    /// Each value as stored.
    async fn rows(
        conn: &mut &'c mut Connection,
        sql: &str,
        binds: &Vec<Value>,
    ) -> rusqlite::Result<Vec<Vec<Value>>> {
        let mut stmt = prepare(conn, sql)?;
        let width = stmt.column_count();
        let mut rows = stmt.query(params_from_iter(binds.iter()))?;
        let mut all = Vec::new();
        while let Some(row) = rows.next()? {
            all.push((0..width).map(|i| row.get(i)).collect::<Result<_, _>>()?);
        }
        Ok(all)
    }

    fn text(row: &Vec<Value>, i: usize) -> Option<String> {
        match row.get(i)? {
            Value::Integer(n) => Some(n.to_string()),
            Value::Text(t) => Some(t.clone()),
            _ => None,
        }
    }

    /// Rolled back at once: the connection is the operation's, and stays open for it.
    fn close(conn: &'c mut Connection) {
        if !conn.is_autocommit() {
            // Nothing to answer: a connection that cannot roll back fails its next statement.
            let _ = conn.execute_batch("ROLLBACK");
        }
    }
}
