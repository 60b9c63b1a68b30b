//! Resources on PostgreSQL: a connected resource whose `database` is a `postgres://` URL is
//! served from that database, the way the platform's data engine serves one (with psycopg2
//! and SQLAlchemy's PostgreSQL dialect).
//!
//! A [`PgResource`] is a pool of connections to one database. Its tables (those of the
//! connection's current schema, usually `public`) are models, read once at start and again on
//! reload. The operations are those of the SQLite backend (svc-emulator's `sqlite`), with
//! PostgreSQL's semantics where the engine has them:
//!
//! - **Values** (`types`): `numeric` written as text (`"20.50"`), date-times in ISO form with
//!   the offset of the database's time zone, JSON as JSON, arrays as JSON arrays.
//! - **Filters** (`filter`): `ILIKE` with PostgreSQL's Unicode case folding, JSON `exact`
//!   as containment, values typed as psycopg2 types them; `NULL`s last in ascending order.
//! - **Counts**: an unfiltered list of a table whose catalog estimate (`pg_class.reltuples`)
//!   is at least 10 000 shows the estimate, as the engine does; other counts are exact.
//! - **Group** (`dialect`): `date_trunc` buckets, `week` and `quarter` included.
//! - **SQL** (`sql`): proved read-only by PostgreSQL itself: one statement, prepared first,
//!   run in a `READ ONLY` transaction with a `statement_timeout`, and cancelled from outside at
//!   the deadline or when the client goes away.
//! - **Writes** (`records`): values read by the engine's serializer fields, then cast to the
//!   column's type by PostgreSQL; database errors are `400`s with PostgreSQL's message.
//!
//! The connection URL may carry a password: it is never logged or shown ([`redacted`]).

//!
//! **An implementation crate of [svc-emulator](https://docs.rs/svc-emulator)**: its catalog
//! opens a [`PgResource`] for each resource on PostgreSQL, and nothing else names this crate. Its API
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

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use std::str::FromStr;
use svc_emulator_core::backend::Awaited;
use svc_emulator_core::backend::pooled::{CONNECT_TIMEOUT, POOL_SIZE, seed_failed};
use svc_emulator_core::dialect::bind::Binds;
use svc_emulator_core::flow::driver::Driver;
use svc_engine::EngineError;
use svc_engine::time_zone::tz_offset;
use tokio_postgres::Row;

/// Session settings every connection starts with: ISO dates and shortest-exact floats, so
/// values read as text are unambiguous. The time zone is left as the database sets it, as
/// the engine leaves it.
const SESSION_OPTIONS: &str = "-c DateStyle=ISO -c IntervalStyle=postgres -c extra_float_digits=1";

/// One resource's PostgreSQL database.
pub struct PgResource {
    pool: Pool,
    /// For the second pool of SQL queries: its own connections, reset after each use.
    sql_pool: Pool,
    url: String,
}

impl std::fmt::Debug for PgResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgResource")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// The engine's text of an offset in hours: `'{:+}'.format(hours).replace('.0', '')`.
fn engine_hours(seconds: i32) -> String {
    let hours = f64::from(seconds) / 3600.0;
    let text = svc_engine::python::floats::py_float_repr(hours);
    let signed = if hours >= 0.0 {
        format!("+{text}")
    } else {
        text
    };
    signed.replace(".0", "")
}

pub(crate) use svc_emulator_core::location::redacted;

fn pool(config: &tokio_postgres::Config, recycling: RecyclingMethod) -> Result<Pool, EngineError> {
    let manager = Manager::from_config(
        config.clone(),
        tokio_postgres::NoTls,
        ManagerConfig {
            recycling_method: recycling,
        },
    );
    Pool::builder(manager)
        .max_size(POOL_SIZE)
        .runtime(Runtime::Tokio1)
        .wait_timeout(Some(CONNECT_TIMEOUT))
        .create_timeout(Some(CONNECT_TIMEOUT))
        .recycle_timeout(Some(CONNECT_TIMEOUT))
        .build()
        .map_err(|e| EngineError::Internal(format!("cannot make a connection pool: {e}")))
}

impl PgResource {
    /// Connects to the database at `url` (`postgres://user:password@host:port/name`), runs
    /// `seed_sql` when its schema has no table yet, and reads its tables: the resource as the
    /// core serves it.
    pub async fn open(url: &str, seed_sql: Option<&str>) -> Result<Awaited<Self>, EngineError> {
        let shown = redacted(url);
        let mut config = tokio_postgres::Config::from_str(url).map_err(|e| {
            EngineError::Internal(format!(
                "{shown} is not a PostgreSQL URL ({e}); write postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
            ))
        })?;
        let options = match config.get_options() {
            Some(given) => format!("{given} {SESSION_OPTIONS}"),
            None => SESSION_OPTIONS.to_owned(),
        };
        config
            .options(&options)
            .application_name("svc-emulator")
            .connect_timeout(CONNECT_TIMEOUT);
        let resource = PgResource {
            pool: pool(&config, RecyclingMethod::Fast)?,
            // SQL queries may leave session state behind (advisory locks, prepared
            // statements): their connections are cleaned before each reuse.
            sql_pool: pool(&config, RecyclingMethod::Clean)?,
            url: shown,
        };
        let client = resource.client().await?;
        if let Some(seed) = seed_sql {
            // Prepared for this run alone: the seed may drop what the session keeps prepared.
            let count = driver::run(
                &client,
                None,
                "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')",
                &Binds::default(),
            )
            .await;
            let count = count.map_err(|e| resource.unexpected(e))?;
            let tables: i64 = resource.one_row(count)?.get(0);
            if tables == 0 {
                driver::run_script(&client, seed)
                    .await
                    .map_err(|e| seed_failed(&resource.url, &message(&e)))?;
            }
        }
        drop(client);
        Awaited::new(resource).await
    }

    /// A pooled connection.
    pub(crate) async fn client(&self) -> Result<Object, EngineError> {
        self.pool.get().await.map_err(|e| self.unreachable(e))
    }

    /// A connection for a read in the time zone `tz` asks for (`svc_engine::time_zone`; checked by
    /// the filters): the engine's `SET TIME ZONE` with its offset in hours, on a connection of
    /// the pool that is cleaned before each reuse (`RESET ALL`), so the zone never reaches
    /// another request. Without `tz`, a pooled connection as it is.
    pub(crate) async fn client_in(&self, tz: Option<&str>) -> Result<Object, EngineError> {
        let Some(seconds) = tz.and_then(tz_offset) else {
            return self.client().await;
        };
        // The engine's default time zone was read before (`Served::connect`).
        let mut client = self.sql_client().await?;
        let set = format!("SET TIME ZONE '{}'", engine_hours(seconds));
        let set = PgResource::execute_one(&mut client, &set).await;
        set.map_err(|e| self.unexpected(e))?;
        Ok(client)
    }

    /// A connection for an SQL query.
    pub(crate) async fn sql_client(&self) -> Result<Object, EngineError> {
        self.sql_pool.get().await.map_err(|e| self.unreachable(e))
    }

    fn unreachable(&self, e: deadpool_postgres::PoolError) -> EngineError {
        EngineError::Internal(format!(
            "cannot reach the PostgreSQL database {}: {e}",
            self.url
        ))
    }

    /// A database error that the request did not cause.
    pub(crate) fn unexpected(&self, e: tokio_postgres::Error) -> EngineError {
        self.unexpected_text(&message(&e))
    }

    fn unexpected_text(&self, text: &str) -> EngineError {
        EngineError::Internal(format!("PostgreSQL database {}: {text}", self.url))
    }

    /// The one row of a statement that answers one (a `count(*)`, an `INSERT ... RETURNING`):
    /// any other number of rows is unexpected, in the driver's words.
    pub(crate) fn one_row(&self, mut rows: Vec<Row>) -> Result<Row, EngineError> {
        match rows.pop() {
            Some(row) if rows.is_empty() => Ok(row),
            _ => Err(self.unexpected_text("query returned an unexpected number of rows")),
        }
    }
}

/// PostgreSQL's message of an error, with its detail, as psycopg2 shows it; the driver's
/// own text for errors that did not come from the server.
pub(crate) fn message(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => libpq_message(db),
        None => e.to_string(),
    }
}

/// The text psycopg2 shows of a server error (libpq's, at its default verbosity, without the
/// `ERROR:  ` prefix): the message, the cursor display of an internal query (a function's
/// statement), then the `DETAIL`, `HINT`, `QUERY` and `CONTEXT` lines. The cursor display of a
/// position in the statement itself is left out: it would show the emulator's SQL, never the
/// engine's.
fn libpq_message(db: &tokio_postgres::error::DbError) -> String {
    use tokio_postgres::error::ErrorPosition;
    let mut out = format!("{}\n", db.message());
    if let Some(ErrorPosition::Internal { position, query }) = db.position() {
        out.push_str(&cursor_display(query, *position as usize));
    }
    let lines = [
        ("DETAIL", db.detail()),
        ("HINT", db.hint()),
        (
            "QUERY",
            match db.position() {
                Some(ErrorPosition::Internal { query, .. }) => Some(query.as_str()),
                _ => None,
            },
        ),
        ("CONTEXT", db.where_()),
    ];
    for (label, text) in lines {
        if let Some(text) = text {
            out.push_str(&format!("{label}:  {text}\n"));
        }
    }
    out
}

/// libpq's `reportErrorPosition`: the line of `query` that holds the 1-based character
/// `position`, cut to 60 screen columns around it, and a caret under it.
fn cursor_display(query: &str, position: usize) -> String {
    const DISPLAY_SIZE: usize = 60;
    const MIN_RIGHT_CUT: usize = 10;
    let Some(loc) = position.checked_sub(1) else {
        return String::new();
    };
    let chars: Vec<char> = query
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    // The screen column each character starts at, up to the end of the line that holds `loc`.
    let mut columns = Vec::with_capacity(chars.len() + 1);
    let (mut column, mut line, mut begin, mut end) = (0, 1, 0, None);
    for (at, &c) in chars.iter().enumerate() {
        columns.push(column);
        if c == '\r' || c == '\n' {
            if at < loc {
                if c == '\r' || at == 0 || chars[at - 1] != '\r' {
                    line += 1;
                }
                begin = at + 1;
            } else {
                end = Some(at);
                break;
            }
        }
        column += screen_width(c);
    }
    let end_of_scan = columns.len();
    let mut end = end.unwrap_or_else(|| {
        columns.push(column);
        end_of_scan
    });
    if loc > end_of_scan {
        return String::new();
    }
    let (mut begin_cut, mut end_cut) = (false, false);
    if columns[end] - columns[begin] > DISPLAY_SIZE {
        if columns[begin] + DISPLAY_SIZE >= columns[loc] + MIN_RIGHT_CUT {
            while columns[end] - columns[begin] > DISPLAY_SIZE {
                end -= 1;
            }
            end_cut = true;
        } else {
            while columns[loc] + MIN_RIGHT_CUT < columns[end] {
                end -= 1;
                end_cut = true;
            }
            while columns[end] - columns[begin] > DISPLAY_SIZE {
                begin += 1;
                begin_cut = true;
            }
        }
    }
    let mut prefix = format!("LINE {line}: ");
    if begin_cut {
        prefix.push_str("...");
    }
    let indent = prefix.chars().count() + columns[loc] - columns[begin];
    let text: String = chars[begin..end].iter().collect();
    let cut = if end_cut { "..." } else { "" };
    format!("{prefix}{text}{cut}\n{}^\n", " ".repeat(indent))
}

/// The screen columns a character takes, as libpq counts them: two for East Asian wide
/// characters, one for every other (control and combining characters included).
fn screen_width(c: char) -> usize {
    let wide = matches!(u32::from(c),
        0x1100..=0x115F | 0x2E80..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x20000..=0x2FFFD
        | 0x30000..=0x3FFFD);
    if wide { 2 } else { 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_set_in_the_engines_hours() {
        assert_eq!(engine_hours(7200), "+2");
        assert_eq!(engine_hours(0), "+0");
        assert_eq!(engine_hours(-18000), "-5");
        assert_eq!(engine_hours(19800), "+5.5");
        assert_eq!(engine_hours(20700), "+5.75");
        assert_eq!(engine_hours(36000), "+10");
    }

    #[test]
    fn the_cursor_display_is_libpqs() {
        assert_eq!(
            cursor_display("select nosuch from trig", 8),
            "LINE 1: select nosuch from trig\n               ^\n"
        );
        assert_eq!(
            cursor_display("select 1,\n\tnosuch from t", 12),
            "LINE 2:  nosuch from t\n         ^\n"
        );
        let long = format!("select {} from t", "x".repeat(100));
        assert_eq!(
            cursor_display(&long, 110),
            format!(
                "LINE 1: ...{} from t\n{}^\n",
                "x".repeat(53),
                " ".repeat(66)
            )
        );
        assert_eq!(
            cursor_display(&long, 3),
            format!("LINE 1: select {}...\n          ^\n", "x".repeat(53))
        );
        assert_eq!(cursor_display("select 1", 0), "");
        assert_eq!(cursor_display("select 1", 30), "");
    }

    #[test]
    fn passwords_never_show() {
        assert_eq!(
            redacted("postgres://app:s3cret@db.local:5432/shop"),
            "postgres://app:***@db.local:5432/shop"
        );
        assert_eq!(
            redacted("postgresql://app@127.0.0.1/shop"),
            "postgresql://app@127.0.0.1/shop"
        );
        assert_eq!(
            redacted("postgres://a:p@ss@h/db"),
            "postgres://a:***@h/db",
            "the host is after the last @"
        );
    }
}
