//! What the core keeps of a resource between its requests ([`State`]): its models as last read,
//! where its walks' pages ended (with their counts), and the engine's default time zone. A
//! database holds one and lends it ([`Database::state`]);
//! the flows read and keep what is in it, so that no database writes its own memo.

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::flow::database::Database;
use svc_engine::EngineError;
use svc_engine::records::Models;
use svc_engine::walks::Walks;

/// Reads the schema of `db` again ([`Database::reflect`]): its models as they are now, and no
/// walk of the models as they were (a walk's statements name their columns).
pub async fn reload<D: Database>(db: &D) -> Result<(), EngineError> {
    let mut conn = db.connect(None).await?;
    let models = db.reflect(&mut conn).await?;
    db.state().models().replace(models);
    db.state().walks().clear();
    Ok(())
}

/// What the core keeps of one resource between its requests: `M` its model, `K` a sort key's
/// value as its driver reads it.
#[derive(Debug)]
pub struct State<M, K> {
    models: Models<M>,
    walks: Walks<K>,
    time_zone: ForAMinute<i32>,
}

impl<M, K> Default for State<M, K> {
    fn default() -> Self {
        State {
            models: Models::default(),
            walks: Walks::default(),
            time_zone: ForAMinute::default(),
        }
    }
}

impl<M, K> State<M, K> {
    /// The models, as last read (start or reload).
    pub fn models(&self) -> &Models<M> {
        &self.models
    }

    /// Where the walks of the resource's pages ended, and their filtered counts.
    pub fn walks(&self) -> &Walks<K> {
        &self.walks
    }

    /// The engine's default time zone (the UTC offset in seconds of the database's `NOW()`),
    /// trusted for a minute as the engine trusts it.
    pub fn time_zone(&self) -> &ForAMinute<i32> {
        &self.time_zone
    }
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
