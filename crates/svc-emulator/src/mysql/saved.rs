//! MySQL's side of a saved copy (`flow::saved`): the copy lives in a database of its own on the
//! same server (the user needs the privilege to create it); the next generated keys are each
//! table's `AUTO_INCREMENT`.
//!
//! A restore turns the foreign keys' checks off for its session (`FOREIGN_KEY_CHECKS = 0`, no
//! privilege needed) and writes keys of 0 as given (`NO_AUTO_VALUE_ON_ZERO`), both set back as
//! they were before the commit; a restore that fails gives its connection back to the pool,
//! which resets it (`mysql/driver.rs`), so neither setting outlives it. The tables are emptied with `DELETE` rather than
//! `TRUNCATE`, which commits: the rows go back in one transaction (of InnoDB tables; a table of
//! another engine, MyISAM, keeps what was done before a failure). MySQL cannot turn a table's
//! triggers off: a trigger on `DELETE` or `INSERT` of a saved table fires as its rows go back.
//! Setting an `AUTO_INCREMENT` commits too, so the keys are set after the commit, and only
//! where they moved.

use mysql_async::Conn;
use mysql_async::prelude::Queryable;

use crate::engine::EngineError;
use crate::flow::driver::Session;
use crate::flow::saved::{SavedTable, Saves, Store, Suspended};
use crate::mysql::schema::quote_ident;
use crate::mysql::{MyResource, message, server_code};

/// Each saved table with an `AUTO_INCREMENT` column (by its SQL name), and its next value.
pub(crate) type MyKeys = Vec<(String, u64)>;

/// The next `AUTO_INCREMENT` value of each table of the database that has one.
const AUTO_INCREMENTS: &str = "SELECT TABLE_NAME, AUTO_INCREMENT FROM information_schema.TABLES \
     WHERE TABLE_SCHEMA = DATABASE() AND AUTO_INCREMENT IS NOT NULL";

/// The server's errors of a privilege refused: to a database, to an action, to a table.
const ACCESS_DENIED: [u16; 3] = [1044, 1227, 1142];

impl MyResource {
    /// The next `AUTO_INCREMENT` of each of `tables` that has one, as the server has it now.
    async fn auto_increments(
        &self,
        conn: &mut Conn,
        tables: &[SavedTable],
    ) -> Result<MyKeys, EngineError> {
        if !self.mariadb {
            // MySQL 8 shows the catalog's statistics as cached for a day by default.
            conn.query_drop("SET SESSION information_schema_stats_expiry = 0")
                .await
                .map_err(|e| self.unexpected(e))?;
        }
        let rows: Vec<(String, u64)> = conn
            .query(AUTO_INCREMENTS)
            .await
            .map_err(|e| self.unexpected(e))?;
        Ok(tables
            .iter()
            .filter_map(|t| {
                let (_, next) = rows.iter().find(|(name, _)| *name == t.name)?;
                Some((t.sql.clone(), *next))
            })
            .collect())
    }
}

impl Saves for MyResource {
    type Keys = MyKeys;

    const KEYS_AFTER_COMMIT: bool = true;

    // InnoDB reads the rows an `INSERT ... SELECT` copies with shared locks, held to the
    // commit: the tables are copied as of one moment all the same.
    const BEGIN_SNAPSHOT: &'static str = "START TRANSACTION WITH CONSISTENT SNAPSHOT";

    async fn make_store(&self, conn: &mut Session<Self>, name: &str) -> Result<Store, EngineError> {
        let database = quote_ident(name);
        let conn = conn.conn();
        if let Err(e) = conn.query_drop(format!("CREATE DATABASE {database}")).await {
            if !server_code(&e).is_some_and(|code| ACCESS_DENIED.contains(&code)) {
                return Err(self.unexpected(e));
            }
            let user: Option<String> = conn
                .query_first("SELECT CURRENT_USER()")
                .await
                .map_err(|e| self.unexpected(e))?;
            let user = user.unwrap_or_default();
            let (name, host) = user.rsplit_once('@').unwrap_or((&user, "%"));
            return Err(EngineError::Internal(format!(
                "the copy is kept in a database of its own, named {}..., and user {user} may \
                 not create one: grant it the privileges \
                 (GRANT ALL ON `svc\\_emulator\\_saved\\_%`.* TO '{name}'@'{host}') ({})",
                crate::flow::saved::STORE_PREFIX,
                message(&e)
            )));
        }
        let drop = format!("DROP DATABASE IF EXISTS {database}");
        let pool = self.pool.clone();
        Ok(Store::dropped_by(async move {
            if let Ok(mut conn) = pool.get_conn().await {
                let _ = conn.query_drop(drop).await;
            }
        }))
    }

    async fn read_keys(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> Result<MyKeys, EngineError> {
        self.auto_increments(conn.conn(), tables).await
    }

    async fn put_keys(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
        keys: &MyKeys,
    ) -> Result<(), EngineError> {
        let now = self.auto_increments(conn.conn(), tables).await?;
        for (table, next) in keys {
            // Each `ALTER TABLE` commits and takes its time: only the counters that moved.
            if now.iter().any(|(t, n)| t == table && n == next) {
                continue;
            }
            self.run(
                conn,
                &format!("ALTER TABLE {table} AUTO_INCREMENT = {next}"),
            )
            .await?;
        }
        Ok(())
    }

    async fn suspend_checks(
        &self,
        conn: &mut Session<Self>,
        _tables: &[SavedTable],
    ) -> Result<Suspended, EngineError> {
        self.run(
            conn,
            "SET @svc_emulator_checks = @@SESSION.foreign_key_checks, \
             @svc_emulator_mode = @@SESSION.sql_mode",
        )
        .await?;
        self.run(
            conn,
            "SET SESSION foreign_key_checks = 0, SESSION sql_mode = \
             CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'NO_AUTO_VALUE_ON_ZERO')",
        )
        .await?;
        Ok(Suspended {
            still_checked: Vec::new(),
            undo: vec![
                "SET SESSION foreign_key_checks = @svc_emulator_checks, \
                 SESSION sql_mode = @svc_emulator_mode"
                    .to_owned(),
            ],
        })
    }
}
