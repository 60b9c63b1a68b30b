//! What the core keeps of a resource between its requests ([`State`]): its models as last read,
//! where its walks' pages ended (with their counts), and the engine's default time zone. No
//! database holds or lends it: a flow serves a database with its state beside it ([`Served`]),
//! and reads and keeps what is in it, so that no database writes its own memo.

use std::future::Future;
use std::ops::Deref;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::dialect::bind::{Bind, Binds};
use crate::dialect::clause::Where;
use crate::dialect::relation::Related;
use crate::flow::database::Database;
use crate::flow::driver::Failure;
use crate::flow::filter::build_where;
use svc_engine::records::Models;
use svc_engine::relation::Use;
use svc_engine::walks::Walks;
use svc_engine::{EngineError, Selection};

/// Reads the schema of `db` again ([`Database::reflect`]): its models as they are now, and no
/// walk of the models as they were (a walk's statements name their columns).
pub async fn reload<D: Database>(db: &Served<'_, D>) -> Result<(), EngineError> {
    let mut conn = db.connect().await?;
    let models = db.reflect(&mut conn).await?;
    db.state.models().replace(models);
    db.state.walks().clear();
    Ok(())
}

/// A database as a flow serves it: its side of the flows ([`Database`], which it derefs to) and
/// what the core keeps of its resource between requests ([`State`]).
pub struct Served<'r, D: Database> {
    db: &'r D,
    state: &'r State<D::Model, Bind>,
}

impl<D: Database> Clone for Served<'_, D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<D: Database> Copy for Served<'_, D> {}

impl<D: Database> std::fmt::Debug for Served<'_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Served").finish_non_exhaustive()
    }
}

impl<D: Database> Deref for Served<'_, D> {
    type Target = D;

    fn deref(&self) -> &D {
        self.db
    }
}

impl<'r, D: Database> Served<'r, D> {
    /// `db`, with what the core keeps of its resource.
    pub fn new(db: &'r D, state: &'r State<D::Model, Bind>) -> Self {
        Served { db, state }
    }

    /// The database's side of the flows.
    pub fn db(&self) -> &'r D {
        self.db
    }

    /// The models, as last read (start or reload).
    pub fn models(&self) -> &'r Models<D::Model> {
        self.state.models()
    }

    /// The model named `name`, else the engine's `404`.
    pub fn model(&self, name: &str) -> Result<Arc<D::Model>, EngineError> {
        self.models().get(name)
    }

    /// Where the walks of the resource's pages ended, and their filtered counts.
    pub fn walks(&self) -> &'r Walks<Bind> {
        self.state.walks()
    }

    /// The models a selection's `_relation` may join, for an operation that uses it as `use_`
    /// says.
    pub fn related(&self, use_: Use) -> Related<'r, D::Model> {
        let models = self.models();
        Related {
            find: Box::new(move |name| models.get(name).ok()),
            use_,
        }
    }

    /// The `WHERE` clause of a selection, for an operation that uses it as `use_` says.
    pub fn filters(
        &self,
        model: &D::Model,
        selection: &Selection,
        use_: Use,
    ) -> Result<Where<Binds>, EngineError> {
        build_where::<D>(model, selection, &self.related(use_))
    }

    /// A connection as the database's pool gives it ([`Database::connect`], no time zone of
    /// its own).
    pub async fn connect(&self) -> Result<D::Conn, EngineError> {
        self.db.connect(None).await
    }

    /// A connection for a read, in the time zone a request's `tz` asks for
    /// ([`Database::connect`]), and the engine's default time zone, which the read's values are
    /// written in. The default is the database's: read before a session sets its own zone
    /// (on a connection of its own when it is not known), and never again on that session, so
    /// that the zone a request asks for is never kept as the database's.
    pub async fn reading(&self, tz: Option<&str>) -> Result<(D::Conn, i32), EngineError> {
        if tz.is_none() {
            let mut conn = self.db.connect(None).await?;
            let zone = self.time_zone(&mut conn).await?;
            return Ok((conn, zone));
        }
        let zone = self.default_time_zone().await?;
        Ok((self.db.connect(tz).await?, zone))
    }

    /// The engine's default time zone ([`time_zone`](Self::time_zone)), read on a connection
    /// of its own when it is not known.
    async fn default_time_zone(&self) -> Result<i32, EngineError> {
        match self.state.time_zone().get() {
            Some(tz) => Ok(tz),
            // Before any connection: SQLite's view connects once per operation.
            None if D::TIME_ZONE.is_none() => Ok(0),
            None => self.time_zone(&mut self.db.connect(None).await?).await,
        }
    }

    /// The engine's default time zone, as the UTC offset in seconds the values are read in:
    /// [`Database::TIME_ZONE`]'s answer on `conn`, read again after a minute as the engine reads
    /// it (a NULL answer is offset 0).
    pub async fn time_zone(&self, conn: &mut D::Conn) -> Result<i32, EngineError> {
        let Some(sql) = D::TIME_ZONE else {
            return Ok(0);
        };
        let read = async {
            let text_of = |row: &D::Row<'_>| D::text(row, 0);
            let first = D::first_row(conn, sql, &Binds::default(), text_of).await;
            let first = first.map_err(|e| self.fault(e, Failure::Unexpected))?;
            let Some(text) = first.flatten() else {
                return Ok(0);
            };
            text.parse().map_err(|_| {
                EngineError::Internal(format!("the time zone's offset {text:?} is no number"))
            })
        };
        self.state.time_zone().get_or_read(read, |e| e).await
    }
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
