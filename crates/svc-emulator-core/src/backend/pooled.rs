//! What the database servers (PostgreSQL, MySQL: each an optional feature) share beside the
//! flows: their pools' limits, the failure of a seed, a value read from the database and
//! trusted for a minute, and where the engine shows a count's estimate.

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

/// A value read from the database and trusted for a minute: the engine's default time zone,
/// which a read needs and the database changes only when told to.
#[derive(Debug)]
pub struct ForAMinute<T>(Mutex<Option<(Instant, T)>>);

impl<T> Default for ForAMinute<T> {
    fn default() -> Self {
        ForAMinute(Mutex::new(None))
    }
}

impl<T: Copy> ForAMinute<T> {
    /// The value, when it was kept less than a minute ago.
    pub fn get(&self) -> Option<T> {
        let kept = *self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.filter(|(at, _)| at.elapsed() < Duration::from_secs(60))
            .map(|(_, v)| v)
    }

    /// Keeps `value`, read now.
    pub fn keep(&self, value: T) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), value));
    }

    /// The value when it was kept less than a minute ago, else what `read` reads, kept; a
    /// failed read is `failed`'s error.
    pub async fn get_or_read<E>(
        &self,
        read: impl Future<Output = Result<T, E>>,
        failed: impl FnOnce(E) -> EngineError,
    ) -> Result<T, EngineError> {
        if let Some(value) = self.get() {
            return Ok(value);
        }
        let value = read.await.map_err(failed)?;
        self.keep(value);
        Ok(value)
    }
}
