//! Resources on MySQL and MariaDB: a connected resource whose `database` is a `mysql://` or
//! `mariadb://` URL is served from that database, the way the platform's data engine serves
//! one (with PyMySQL and SQLAlchemy's MySQL dialect).
//!
//! A [`MyResource`] is a pool of connections to one database. Its tables (the base tables of
//! the URL's database) are models, read once at start and again on reload. The operations are
//! those of the other backends, with MySQL's semantics where the engine has them:
//!
//! - **Values** (`types`): `DECIMAL` written as text with its scale (`"20.50"`), `DOUBLE` as
//!   text with ten places (SQLAlchemy's MySQL `DOUBLE` is a `Decimal`), `FLOAT` as a number,
//!   `MEDIUMINT` as text, `TINYINT(1)` as the numbers `0`/`1`, unsigned `BIGINT` beyond 2^63
//!   as a number, date-times in ISO form with the offset of the database's time zone, `TIME`
//!   as a time of day, `YEAR` as text, MariaDB's `JSON` (a `LONGTEXT`) as its text, `SET` as
//!   Python's `str()` of a set (members in the order of a Python set, keyed anew at each start
//!   as the engine's are: `types::set_members`), `BIT` as a number, `BINARY`/`VARBINARY` as
//!   hex, blobs as Python's `repr(bytes)`.
//! - **Filters** (`filter`): `lower(col) LIKE lower(?)`, so matching is the column's
//!   collation's (case-insensitive for the usual `_ci` ones); numbers written as PyMySQL writes
//!   them; `NULL`s first in ascending order, as MySQL sorts them.
//! - **Counts**: an unfiltered list of a table whose `EXPLAIN` estimate is at least 10 000
//!   shows the estimate, as the engine does; other counts are exact.
//! - **Group** (`dialect`): `DATE_FORMAT` buckets (the engine's MySQL formats; `week` and
//!   `quarter` group by the column itself).
//! - **SQL** (`read_only_sql`): proved read-only by the server itself: one prepared statement
//!   (never several), run inside a sub-select in a `READ ONLY` transaction, with MariaDB's
//!   `max_statement_time` (MySQL: `MAX_EXECUTION_TIME`), killed from a second connection at
//!   the deadline or when the client goes away, and the session reset after.
//! - **Writes** (`records`): values read by the engine's serializer fields, then assigned by
//!   MySQL; database errors are `400`s with MySQL's message.
//!
//! The connection URL may carry a password: it is never logged or shown ([`redacted`]).

//!
//! **An implementation crate of [svc-emulator](https://docs.rs/svc-emulator)**: its catalog
//! opens a [`MyResource`] for each resource on MySQL and MariaDB, and nothing else names this crate. Its API
//! follows the emulator's and may change in any release. It reaches no HTTP layer: Cargo holds
//! that, since it depends on none.
//!
//! ```compile_fail
//! use axum::Router;
//! ```
//!
//! ```compile_fail
//! use svc_emulator::Emulator;
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub(crate) mod dialect;
pub(crate) mod driver;
pub(crate) mod records;
pub(crate) mod schema;
pub(crate) mod types;

use svc_emulator_core::backend::Awaited;
use svc_emulator_core::backend::pooled::{CONNECT_TIMEOUT, POOL_SIZE, seed_failed};

use mysql_async::{Conn, Opts, OptsBuilder, Pool, PoolConstraints, PoolOpts};

use driver::text_rows;
use svc_engine::EngineError;
use svc_engine::sql_params::line_end;
use types::{cell_number, cell_text};

/// One resource's MySQL or MariaDB database.
pub struct MyResource {
    pool: Pool,
    /// For SQL queries: connections of their own, reset after each use.
    sql_pool: Pool,
    /// Whether the server is MariaDB (its statement time limit is `max_statement_time`).
    mariadb: bool,
    url: String,
}

impl std::fmt::Debug for MyResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MyResource")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

pub(crate) use svc_emulator_core::location::redacted;

/// The URL as the driver reads it: `mariadb://` is `mysql://`.
fn driver_url(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("mariadb") => {
            format!("mysql://{rest}")
        }
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("mysql") => format!("mysql://{rest}"),
        _ => url.to_owned(),
    }
}

fn pool(opts: &Opts) -> Result<Pool, EngineError> {
    let constraints = PoolConstraints::new(0, POOL_SIZE)
        .ok_or_else(|| EngineError::Internal("bad pool constraints".to_owned()))?;
    let builder = OptsBuilder::from_opts(opts.clone())
        .pool_opts(
            PoolOpts::default()
                .with_constraints(constraints)
                // Every connection goes back to the pool reset: no transaction, no session
                // variables, no user locks, no temporary tables, no prepared statements.
                .with_reset_connection(true),
        )
        // PyMySQL's `charset=utf8mb4`: the server's default collation of utf8mb4.
        .init(vec!["SET NAMES utf8mb4"])
        .wait_timeout(Some(28_800));
    Ok(Pool::new(builder))
}

impl MyResource {
    /// Connects to the database at `url` (`mysql://user:password@host:port/name`), runs
    /// `seed_sql` when it has no table yet, and reads its tables: the resource as the core
    /// serves it.
    pub async fn open(url: &str, seed_sql: Option<&str>) -> Result<Awaited<Self>, EngineError> {
        let shown = redacted(url);
        let opts = Opts::from_url(&driver_url(url)).map_err(|e| {
            EngineError::Internal(format!(
                "{shown} is not a MySQL URL ({}); write mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
                redacted(&e.to_string())
            ))
        })?;
        if opts.db_name().is_none_or(str::is_empty) {
            return Err(EngineError::Internal(format!(
                "{shown} names no database: write mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
            )));
        }
        let mut resource = MyResource {
            pool: pool(&opts)?,
            sql_pool: pool(&opts)?,
            mariadb: false,
            url: shown,
        };
        let mut conn = resource.conn().await?;
        let version = text_rows(&mut conn, "SELECT VERSION()")
            .await
            .map_err(|e| resource.unexpected(e))?;
        let version = version.first().and_then(|row| cell_text(row, 0));
        resource.mariadb = version.is_some_and(|v| v.to_ascii_lowercase().contains("mariadb"));
        if let Some(seed) = seed_sql {
            let tables = text_rows(
                &mut conn,
                "SELECT COUNT(*) FROM information_schema.TABLES \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'",
            )
            .await
            .map_err(|e| resource.unexpected(e))?;
            let tables: Option<i64> = tables.first().and_then(|row| cell_number(row, 0));
            if tables == Some(0) {
                // Statement by statement: the driver sends one at a time.
                for statement in split_statements(seed) {
                    text_rows(&mut conn, statement)
                        .await
                        .map_err(|e| seed_failed(&resource.url, &message(&e)))?;
                }
            }
        }
        drop(conn);
        Awaited::new(resource).await
    }

    /// A pooled connection.
    pub(crate) async fn conn(&self) -> Result<Conn, EngineError> {
        self.conn_of(&self.pool).await
    }

    /// A connection for an SQL query.
    pub(crate) async fn sql_conn(&self) -> Result<Conn, EngineError> {
        self.conn_of(&self.sql_pool).await
    }

    async fn conn_of(&self, pool: &Pool) -> Result<Conn, EngineError> {
        tokio::time::timeout(CONNECT_TIMEOUT, pool.get_conn())
            .await
            .map_err(|_| {
                EngineError::Internal(format!(
                    "cannot reach the MySQL database {}: no connection in {} s",
                    self.url,
                    CONNECT_TIMEOUT.as_secs()
                ))
            })?
            .map_err(|e| self.unreachable(e))
    }

    fn unreachable(&self, e: mysql_async::Error) -> EngineError {
        EngineError::Internal(format!(
            "cannot reach the MySQL database {}: {}",
            self.url,
            redacted(&e.to_string())
        ))
    }

    /// A database error that the request did not cause.
    pub(crate) fn unexpected(&self, e: mysql_async::Error) -> EngineError {
        EngineError::Internal(format!("MySQL database {}: {}", self.url, message(&e)))
    }
}

/// The server's message of an error, as PyMySQL shows it (`args[1]`); the driver's own text
/// for errors that did not come from the server.
pub(crate) fn message(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Server(server) => server.message.clone(),
        other => redacted(&other.to_string()),
    }
}

/// The server's error code of an error, if it came from the server.
pub(crate) fn server_code(e: &mysql_async::Error) -> Option<u16> {
    match e {
        mysql_async::Error::Server(server) => Some(server.code),
        _ => None,
    }
}

/// The statements of a seed script, split on `;` outside quotes and comments.
fn split_statements(sql: &str) -> Vec<&str> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => i = driver::skip_quoted(b, i, q),
            b'-' if b.get(i + 1) == Some(&b'-') => i = line_end(b, i),
            b'#' => i = line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = b[i + 2..]
                    .windows(2)
                    .position(|w| w == b"*/")
                    .map_or(b.len(), |p| i + 2 + p + 2);
            }
            b';' => {
                out.push(&sql[start..i]);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    out.push(&sql[start..]);
    out.into_iter().filter(|s| !s.trim().is_empty()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redacted("mysql://app:s3cret@db.local:3306/shop"),
            "mysql://app:***@db.local:3306/shop"
        );
        assert_eq!(
            redacted("mariadb://app@127.0.0.1/shop"),
            "mariadb://app@127.0.0.1/shop"
        );
        assert_eq!(driver_url("MariaDB://a@h/db"), "mysql://a@h/db");
    }

    #[test]
    fn seeds_split_into_statements() {
        assert_eq!(
            split_statements(
                "CREATE TABLE a (x TEXT DEFAULT ';'); -- c;\nINSERT INTO a VALUES ('1;2');"
            ),
            [
                "CREATE TABLE a (x TEXT DEFAULT ';')",
                " -- c;\nINSERT INTO a VALUES ('1;2')"
            ]
        );
    }

    #[tokio::test]
    async fn a_url_without_a_database_is_refused_with_its_password_hidden() {
        let e = MyResource::open("mysql://u:Secret4pw@127.0.0.1:1", None)
            .await
            .unwrap_err()
            .to_string();
        assert!(e.contains("names no database"), "{e}");
        assert!(!e.contains("Secret4pw"), "{e}");
    }
}
