//! Resources on PostgreSQL: a connected resource whose `database` is a `postgres://` URL is
//! served from that database, the way the platform's data engine serves one (with psycopg2
//! and SQLAlchemy's PostgreSQL dialect).
//!
//! A [`PgResource`] is a pool of connections to one database. Its tables (those of the
//! connection's current schema, usually `public`) are models, read once at start and again on
//! reload. The operations are those of the SQLite backend (`crate::sqlite`), with
//! PostgreSQL's semantics where the engine has them:
//!
//! - **Values** (`types`): `numeric` written as text (`"20.50"`), date-times in ISO form with
//!   the offset of the database's time zone, JSON as JSON, arrays as JSON arrays.
//! - **Filters** (`filter`): `ILIKE` with PostgreSQL's Unicode case folding, JSON `exact`
//!   as containment, values typed as psycopg2 types them; `NULL`s last in ascending order.
//! - **Counts**: an unfiltered list of a table whose catalog estimate (`pg_class.reltuples`)
//!   is at least 10 000 shows the estimate, as the engine does; other counts are exact.
//! - **Group** (`aggregate`): `date_trunc` buckets, `week` and `quarter` included.
//! - **SQL** (`sql`): proved read-only by PostgreSQL itself: one statement, prepared first,
//!   run in a `READ ONLY` transaction with a `statement_timeout`, and cancelled from outside at
//!   the deadline or when the client goes away.
//! - **Writes** (`records`): values read by the engine's serializer fields, then cast to the
//!   column's type by PostgreSQL; database errors are `400`s with PostgreSQL's message.
//!
//! The connection URL may carry a password: it is never logged or shown ([`redacted`]).

pub(crate) mod aggregate;
pub(crate) mod filter;
pub(crate) mod read_only_sql;
pub(crate) mod records;
mod references;
pub(crate) mod schema;
pub(crate) mod types;
pub(crate) mod walks;

use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};

use crate::engine::EngineError;
use crate::engine::server::Models;
use schema::PgModel;
use types::Offset;

/// The most connections a resource opens to its database.
const POOL_SIZE: usize = 16;

/// How long a request waits for a connection, and a connection for the server.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Session settings every connection starts with: ISO dates and shortest-exact floats, so
/// values read as text are unambiguous. The time zone is left as the database sets it, as
/// the engine leaves it.
const SESSION_OPTIONS: &str = "-c DateStyle=ISO -c IntervalStyle=postgres -c extra_float_digits=1";

/// One resource's PostgreSQL database.
pub struct PgResource {
    pool: Pool,
    /// For the second pool of SQL queries: its own connections, reset after each use.
    sql_pool: Pool,
    schema: Models<PgModel>,
    /// The engine's default time zone (the offset of `NOW()`), refreshed every minute as the
    /// engine refreshes it.
    timezone: Mutex<Option<(Instant, Offset)>>,
    /// Where pages ended, so that the next page of a walk starts there (`walks`).
    walks: walks::Walks,
    url: String,
}

// A `Backend`: the operations are async already, each awaited where it is asked for.
crate::backend::awaited_backend!(PgResource);

impl std::fmt::Debug for PgResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgResource")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

/// `url` with its password replaced by `***`, for messages and logs.
pub fn redacted(url: &str) -> String {
    crate::config::projects::shown_location(std::path::Path::new(url))
}

/// Whether `location` names a PostgreSQL database rather than a SQLite file.
pub fn is_postgres_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

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
    /// `seed_sql` when its schema has no table yet, and reads its tables.
    pub async fn open(url: &str, seed_sql: Option<&str>) -> Result<Self, EngineError> {
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
            schema: Models::default(),
            timezone: Mutex::new(None),
            walks: walks::Walks::default(),
            url: shown,
        };
        let client = resource.client().await?;
        if let Some(seed) = seed_sql {
            let tables: i64 = client
                .query_one(
                    "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')",
                    &[],
                )
                .await
                .map_err(|e| resource.unexpected(e))?
                .get(0);
            if tables == 0 {
                client.batch_execute(seed).await.map_err(|e| {
                    EngineError::Internal(format!(
                        "the seed SQL failed on {}: {}",
                        resource.url,
                        message(&e)
                    ))
                })?;
            }
        }
        drop(client);
        resource.reload().await?;
        Ok(resource)
    }

    /// A pooled connection.
    pub(crate) async fn client(&self) -> Result<Object, EngineError> {
        self.pool.get().await.map_err(|e| self.unreachable(e))
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
        EngineError::Internal(format!("PostgreSQL database {}: {}", self.url, message(&e)))
    }

    /// Reads the schema again: tables and columns added since become models and fields.
    pub async fn reload(&self) -> Result<(), EngineError> {
        let client = self.client().await?;
        let schema = schema::load_schema(&client).await?;
        self.schema.replace(schema);
        self.walks.clear();
        // Statements prepared for the old schema: prepared again when next used.
        self.pool.manager().statement_caches.clear();
        Ok(())
    }

    /// The names of the models, sorted.
    pub fn model_names(&self) -> Vec<String> {
        self.schema.names()
    }

    /// Whether the resource has a model of that name.
    pub fn has_model(&self, name: &str) -> bool {
        self.schema.contains(name)
    }

    /// The names of `model`'s fields, in order; `None` when there is no such model.
    pub fn field_names(&self, model: &str) -> Option<Vec<String>> {
        self.schema.field_names(model)
    }

    pub(crate) fn model_or_404(&self, name: &str) -> Result<Arc<PgModel>, EngineError> {
        self.schema.get(name)
    }

    /// The engine's default time zone: the UTC offset of `NOW()` on the database.
    pub(crate) async fn timezone(
        &self,
        client: &tokio_postgres::Client,
    ) -> Result<Offset, EngineError> {
        if let Some((at, offset)) = *self.timezone.lock().unwrap_or_else(|e| e.into_inner())
            && at.elapsed() < Duration::from_secs(60)
        {
            return Ok(offset);
        }
        let offset: i32 = client
            .query_one("SELECT EXTRACT(TIMEZONE FROM now())::int4", &[])
            .await
            .map_err(|e| self.unexpected(e))?
            .get(0);
        *self.timezone.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), offset));
        Ok(offset)
    }
}

/// PostgreSQL's message of an error, with its detail, as psycopg2 shows it; the driver's
/// own text for errors that did not come from the server.
pub(crate) fn message(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{}\nDETAIL:  {detail}\n", db.message()),
            None => format!("{}\n", db.message()),
        },
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(is_postgres_url("postgresql://h/db"));
        assert!(!is_postgres_url("shop.sqlite"));
    }
}
