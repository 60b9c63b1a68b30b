//! What the database servers (PostgreSQL, MySQL: each an optional feature) share beside the
//! flows: their pools' limits, the failure of a seed, and where the engine shows a count's
//! estimate.

use std::time::Duration;

use svc_engine::EngineError;

/// The unfiltered count at which the engine shows the database's estimate of a table's rows
/// instead of counting them (jet-bridge's count of a list on PostgreSQL and MySQL).
pub const ESTIMATE_FROM: u64 = 10_000;

/// The most connections a server database's resource opens to it (each pool).
pub const POOL_SIZE: usize = 16;

/// How long a request waits for a connection, and a connection for the server.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The start's error when a resource's seed SQL fails (`url` without its password).
pub fn seed_failed(url: &str, message: &str) -> EngineError {
    EngineError::Internal(format!("the seed SQL failed on {url}: {message}"))
}
