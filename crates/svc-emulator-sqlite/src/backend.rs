//! [`Resource`]'s [`Schedule`] (the core writes its `Backend` over it): SQLite is synchronous, so
//! an operation runs either on the
//! async worker that polls it, when its cost is known to be small (a repeated list on
//! unchanged data that was fast, a retrieve by an indexed key: "Where an operation runs" below
//! says why), or on tokio's blocking pool. Either way the caller's [`Hold`] is kept until the work has ended
//! (moved into a pool job, it is held while the job runs, even when the client has gone away).
//!
//! # Where an operation runs
//!
//! Where a SQLite operation runs: on the async worker that polls its future (*inline*), or on
//! tokio's blocking pool (*handed off*).
//!
//! A move to the blocking pool is not free: on a 2-core machine each one is two futex wake-ups and about four
//! context switches, some 45 us of kernel time for a 25-record page, more than SQLite's own
//! part of that page (CHANGELOG.md, "Performance history", issue 29, item 5; the page's figures
//! now: docs/performance.md, section 4). What it buys is that no SQLite call, however long,
//! stalls an async worker (there are as many workers as cores, and every connection a worker
//! serves waits while it runs SQLite). So an operation runs inline only when its cost is known
//! to be small before it starts:
//!
//! - **A list repeated on unchanged data** costs what it cost last time: SQLite runs the same
//!   statement, with the same bound values, over the same rows. Each resource remembers, for
//!   recently seen list requests, the database generation of their last run (see `walks`) and
//!   how long it took. The same request in the same generation whose last run took under
//!   [`INLINE_BOUND`] runs inline ([`route_list`]); a first request, one after a write, or one
//!   that was slow goes to the pool, which times it. The inline run also refuses to do more
//!   work than the run it was timed by could have done: it gives up (and the request goes to
//!   the pool) when its count is no longer remembered, when its page would step over more
//!   rows than before (an anchor was forgotten), or when its snapshot shows that another
//!   connection committed since (`PRAGMA data_version`: another process wrote the file).
//! - **A retrieve by a key SQLite finds in one b-tree lookup** runs inline
//!   ([`route_retrieve`]): a table's single declared primary key is the rowid (an `INTEGER
//!   PRIMARY KEY`), the clustered key of a `WITHOUT ROWID` table, or has its own unique
//!   auto-index, and the list filters of the query are evaluated on the one row it finds.
//!   A view, a table without a declared key (its promoted first column has no index) and a
//!   composite key (its first column may match many rows) go to the pool.
//! - **Inline work never waits**: it takes a connection only if one is free (`try_lock`); when
//!   the writer or every reader is busy, it goes to the pool, which waits there instead.
//!
//! Writes, aggregates, groups, reloads and SQL always go to the pool: a write waits for the
//! writer and may cascade, an aggregate or group reads every selected row, and SQL runs until
//! its time limit.
//!
//! # The built-in tools' strict writes
//!
//! The strict writes of the built-in tools resource (users and teams, docs/contract.md 5.3):
//! the emulator's own contract, not the data engine's, so they are no records flow of
//! `flow/write.rs` (`cargo xtask structure` lets this file, and only it in the backends, write
//! its `INSERT`, `UPDATE` and `DELETE`): strict JSON types, required NOT NULL fields, foreign
//! keys enforced (a user's team must exist), errors as field errors.

use crate::Resource;
use crate::aggregate::register_functions;
use crate::driver::{SqlCancel, changed, each_row, first_row, script};
use crate::records::Sqlite;
use crate::schema::{Field, Model, strictly_required};
use crate::types::{engine_error, json_to_sql, text_to_sql};
use rusqlite::types::Value;
use rusqlite::{Connection, ErrorCode, params_from_iter};
use serde_json::Value as Json;
use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use svc_emulator_core::backend::operation::{Kind, Operation};
use svc_emulator_core::backend::{Batch, Hold, Schedule, Work};
use svc_emulator_core::blocking::on_blocking_pool;
use svc_emulator_core::dialect::{Dialect, Skip, quote_ident};
use svc_emulator_core::flow::driver::DriverRow;
use svc_emulator_core::flow::references::run_now;
use svc_engine::body::{non_field, summary};
use svc_engine::python::json::PyJson;
use svc_engine::records::{Models, record_json};
use svc_engine::table::Table;
use svc_engine::{EngineError, ListSpec};
use tokio::sync::Notify;

/// The schema and teams of a new built-in tools database (the teams are svc-emulator's
/// `SEEDED_TEAMS`, which its tests check against this).
pub const TOOLS_SEED_SQL: &str = r#"
CREATE TABLE groups (
    uid TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL
);
CREATE TABLE users (
    uid TEXT PRIMARY KEY NOT NULL,
    email TEXT NOT NULL UNIQUE COLLATE NOCASE,
    "group" TEXT NOT NULL REFERENCES groups(uid),
    date_add DATETIME NOT NULL,
    first_name TEXT,
    last_name TEXT
);
CREATE INDEX users_group ON users("group");
INSERT INTO groups (uid, name) VALUES
    ('00000000-0000-4000-8000-000000000001', 'Admins'),
    ('00000000-0000-4000-8000-000000000002', 'Editors'),
    ('00000000-0000-4000-8000-000000000003', 'Viewers');
"#;

/// Runs `work` on the blocking pool, keeping `hold` until it has ended.
fn on_pool<T: Send + 'static>(
    db: Arc<Resource>,
    hold: Hold,
    work: impl FnOnce(&Resource) -> Result<T, EngineError> + Send + 'static,
) -> Work<T> {
    Box::pin(async move {
        on_blocking_pool(move || {
            let _hold = hold;
            work(&db)
        })
        .await
        .map_err(|e| EngineError::Internal(format!("database task failed: {e}")))?
    })
}

/// Runs a list operation as `mode` says and remembers how long it took (when it ran), tagged
/// with the `generation` read before it was routed: what the next identical request is routed
/// by.
fn timed_list<O: Operation>(
    db: &Resource,
    key: u64,
    generation: u64,
    op: &O,
    mode: Mode,
) -> Result<Attempt<ListRun<O::Out>>, EngineError> {
    let start = Instant::now();
    let ran = db.list_attempt(op, mode)?;
    if let Attempt::Done(run) = &ran {
        let took = db.runs().took(start);
        db.runs().keep(
            key,
            LastRun {
                generation,
                took,
                skipped: run.skipped,
            },
        );
    }
    Ok(ran)
}

/// Runs `attempt` on this worker: its answer (or error), or `None` when it is the pool's work
/// ([`Attempt::GaveUp`], or no connection came free in [`INLINE_TRIES`] waits). A busy
/// connection is waited for without blocking the worker: the wait for the next release is
/// taken before each attempt, so a release between the attempt and the wait is not missed.
async fn inline<T>(
    freed: &Notify,
    mut attempt: impl FnMut() -> Result<Attempt<T>, EngineError>,
) -> Option<Result<T, EngineError>> {
    for _ in 0..INLINE_TRIES {
        let freed = freed.notified();
        match attempt() {
            Ok(Attempt::Done(t)) => return Some(Ok(t)),
            Err(e) => return Some(Err(e)),
            Ok(Attempt::GaveUp) => return None,
            Ok(Attempt::Busy) => freed.await,
        }
    }
    None
}

/// Runs `work` on the blocking pool with a cancel that dropping the returned future sets: a
/// client that leaves interrupts its statement at once (a read-only query's, or an action's,
/// whose transaction is then rolled back), so the connection and the thread are freed.
fn cancellable<T: Send + 'static>(
    db: Arc<Resource>,
    hold: Hold,
    work: impl FnOnce(&Resource, &SqlCancel) -> Result<T, EngineError> + Send + 'static,
) -> Work<T> {
    let cancel = Arc::new(SqlCancel::default());
    let on_drop = CancelOnDrop(Arc::clone(&cancel));
    let run = on_pool(db, hold, move |db| work(db, &cancel));
    Box::pin(async move {
        let _on_drop = on_drop;
        run.await
    })
}

/// Cancels a query when dropped (the future that waits for it was dropped: the client went
/// away); harmless once the query has ended.
struct CancelOnDrop(Arc<SqlCancel>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl Resource {
    /// A list (`op`, of [`Kind::List`]): inline when the same request ran fast on the same
    /// data ("Where an operation runs"), else on the pool, which times it.
    fn list_work<O: Operation>(self: Arc<Self>, op: O, hold: Hold) -> Work<O::Out> {
        Box::pin(async move {
            // Read before the run: what the run is remembered under (a write during it makes
            // the next request miss, and time it again on the pool).
            let generation = self.generation();
            let key = match op.listed() {
                Some((model, spec)) => self.runs().key(model, spec),
                None => 0,
            };
            let last = self.runs().last(key);
            if let (Route::Inline, Some(last)) = (route_list(last, generation), last) {
                let mode = Mode::Inline {
                    max_skip: last.skipped,
                };
                // `hold` lives until this returns, or goes with the job to the pool.
                let ran = inline(self.freed(), || {
                    timed_list(&self, key, generation, &op, mode)
                })
                .await;
                self.runs().count_inline(ran.is_some());
                if let Some(run) = ran {
                    return run.map(|run| run.listing);
                }
            }
            on_pool(self, hold, move |db| {
                timed_list(db, key, generation, &op, Mode::Pool)?
                    .done()
                    .map(|run| run.listing)
                    .ok_or_else(|| EngineError::Internal("a list on the pool gave up".to_owned()))
            })
            .await
        })
    }

    /// A retrieve (`op`, of [`Kind::Retrieve`]): inline when SQLite finds its key in one
    /// lookup and a connection is free, else on the pool.
    fn retrieve_work<O: Operation>(self: Arc<Self>, op: O, hold: Hold) -> Work<O::Out> {
        Box::pin(async move {
            // `hold` lives until this returns, or goes with the job to the pool.
            let mode = Mode::Inline { max_skip: 0 };
            if let Some(out) = inline(self.freed(), || self.retrieve_attempt(&op, mode)).await {
                return out;
            }
            on_pool(self, hold, move |db| db.run_here(&op)).await
        })
    }

    /// Runs `op` on this thread (one that may block), on the connection its kind takes: a
    /// list or a retrieve on a reader, waiting for one; the other reads on a reader (an
    /// aggregate's or a group's with SQLite's functions for the engine's); a write on the
    /// writer; a query or an action as [`stoppable`](Self::stoppable) runs it, never
    /// cancelled.
    pub(crate) fn run_here<O: Operation>(&self, op: &O) -> Result<O::Out, EngineError> {
        let gave_up = || EngineError::Internal("an operation that may wait gave up".to_owned());
        match O::KIND {
            Kind::List => self
                .list_attempt(op, Mode::Pool)?
                .done()
                .map(|run| run.listing),
            Kind::Retrieve => self.retrieve_attempt(op, Mode::Pool)?.done(),
            Kind::Read => {
                return self.with_read(|conn| run_now(op.run(&Sqlite::new(self, conn).served())));
            }
            Kind::Summary => {
                return self.with_read(|conn| {
                    register_functions(conn).map_err(engine_error)?;
                    run_now(op.run(&Sqlite::new(self, conn).served()))
                });
            }
            Kind::Write => {
                return self.with_writer(|conn| run_now(op.run(&Sqlite::new(self, conn).served())));
            }
            Kind::Query | Kind::Action => return self.stoppable(op, &SqlCancel::default()),
        }
        .ok_or_else(gave_up)
    }
}

impl Schedule for Resource {
    type Model = Model;

    const SKIP: Skip = <Sqlite<'static> as Dialect>::skip;

    fn models(&self) -> &Models<Model> {
        self.state().models()
    }

    /// A list or a retrieve as "Where an operation runs" says; the rest on the pool
    /// (`Resource::run_here`), a query or an action stopped when its caller goes away.
    fn run<O: Operation>(self: Arc<Self>, op: O, hold: Hold) -> Work<O::Out> {
        match O::KIND {
            Kind::List => self.list_work(op, hold),
            Kind::Retrieve => self.retrieve_work(op, hold),
            Kind::Read | Kind::Summary | Kind::Write => {
                on_pool(self, hold, move |db| db.run_here(&op))
            }
            Kind::Query | Kind::Action => {
                cancellable(self, hold, move |db, cancel| db.stoppable(&op, cancel))
            }
        }
    }

    /// On the blocking pool, in one transaction of the writer connection.
    fn create_all(self: Arc<Self>, model: String, bodies: Vec<PyJson>, hold: Hold) -> Batch {
        Box::pin(async move {
            on_blocking_pool(move || {
                let _hold = hold;
                self.create_bodies(&model, &bodies)
            })
            .await
            .map_err(|e| {
                (
                    0,
                    EngineError::Internal(format!("database task failed: {e}")),
                )
            })?
        })
    }
}

#[cfg(test)]
mod backend_tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    #[test]
    fn inline_attempts_end_at_an_answer_a_give_up_or_the_last_try() {
        let rt = runtime();
        let freed = Arc::new(Notify::new());
        // Done at once, an error at once, given up at once: one attempt each.
        for (first, want) in [
            (Ok(Attempt::Done(7)), Some(Ok(7))),
            (Err(EngineError::RecordNotFound), Some(Err(()))),
            (Ok(Attempt::GaveUp), None),
        ] {
            let mut first = Some(first);
            let mut calls = 0;
            let got = rt.block_on(inline(&freed, || {
                calls += 1;
                first.take().unwrap_or(Ok(Attempt::Busy))
            }));
            assert_eq!(got.map(|r| r.map_err(|_| ())), want);
            assert_eq!(calls, 1);
        }
        // Busy: waits for each release (another task lets go), then tries again; busy at every
        // try, the pool's after the last one; free at the third, done inline.
        for (free_at, want) in [(usize::MAX, None), (3, Some(Ok(3)))] {
            let calls = Arc::new(AtomicUsize::new(0));
            let stop = Arc::new(AtomicBool::new(false));
            let (got, tries) = rt.block_on(async {
                let releases = {
                    let (freed, stop) = (Arc::clone(&freed), Arc::clone(&stop));
                    tokio::spawn(async move {
                        while !stop.load(Ordering::SeqCst) {
                            tokio::task::yield_now().await;
                            freed.notify_waiters();
                        }
                    })
                };
                let got = inline(&freed, || {
                    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
                    Ok(if n >= free_at {
                        Attempt::Done(n)
                    } else {
                        Attempt::Busy
                    })
                })
                .await;
                stop.store(true, Ordering::SeqCst);
                releases.await.unwrap();
                (got, calls.load(Ordering::SeqCst))
            });
            assert_eq!(got.map(|r| r.map_err(|_| ())), want);
            assert_eq!(tries, free_at.min(INLINE_TRIES));
        }
    }
}

/// A repeated list runs inline when its last run on the same data took less than this. One
/// millisecond is about ten warm 25-record pages: the most an inline run delays the other
/// connections of its worker, while a move to the blocking pool costs every request tens of microseconds of
/// kernel time and a few context switches (two wake-ups on a busy 2-core machine). The long
/// calls the pool is for are much longer: a count after a write at a million rows takes 4 ms, a
/// 10000-record `_no_pagination` list 21 ms.
pub(crate) const INLINE_BOUND: Duration = Duration::from_millis(1);

/// List requests whose last run is remembered per resource; past this the memory starts afresh
/// (every request then goes to the pool once more, which times it again).
const MAX_RUNS: usize = 256;

/// How many times an inline list or retrieve that finds no free connection waits for the next
/// one to be let go and tries again, before it goes to the pool. The wait does not block the
/// worker (the request is an async task woken by the release, `Resource::freed`): it is what
/// the pool would do on a thread of its own, without the two wake-ups and the context switches
/// of a move to the blocking pool. The connection is most often busy with the other worker's inline page, tens
/// of microseconds (an in-memory database has one connection for both workers). A few tries,
/// not one: a release wakes every waiter, and another may take the connection first.
pub(crate) const INLINE_TRIES: usize = 8;

/// What an attempt to run inline came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Attempt<T> {
    /// It ran: the answer.
    Done(T),
    /// No connection was free: worth another try once other tasks have run.
    Busy,
    /// It would do more than it may inline (see [`Mode::Inline`]): the pool's work.
    GaveUp,
}

impl<T> Attempt<T> {
    /// The answer, if it ran.
    pub(crate) fn done(self) -> Option<T> {
        match self {
            Attempt::Done(t) => Some(t),
            Attempt::Busy | Attempt::GaveUp => None,
        }
    }
}

/// Where an operation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// On the async worker, now.
    Inline,
    /// On the blocking pool.
    Pool,
}

/// The last run of one list request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LastRun {
    /// The database generation it ran in (read before it began).
    pub(crate) generation: u64,
    /// How long it took.
    pub(crate) took: Duration,
    /// The rows its page stepped over before the first record (`OFFSET`, less the remembered
    /// anchor it started from): an inline run may step over no more.
    pub(crate) skipped: u64,
}

/// Where a list request runs, given its last run and the current generation: inline only when
/// it ran in this generation and took under [`INLINE_BOUND`].
pub(crate) fn route_list(last: Option<LastRun>, generation: u64) -> Route {
    match last {
        Some(run) if run.generation == generation && run.took < INLINE_BOUND => Route::Inline,
        _ => Route::Pool,
    }
}

/// Where a retrieve of `model` runs: inline when SQLite finds a key in one b-tree lookup (see
/// the module's documentation).
pub(crate) fn route_retrieve(model: &Model) -> Route {
    if !model.extra.view && !model.promoted_key && model.identity.len() == 1 {
        Route::Inline
    } else {
        Route::Pool
    }
}

/// The last runs of one resource's list requests, by a hash of the request.
#[derive(Debug, Default)]
pub(crate) struct RunMemory {
    /// Keyed per process, so that requests cannot be chosen to collide (a collision only
    /// misplaces where a request runs: an inline run still refuses extra work).
    hasher: RandomState,
    runs: Mutex<HashMap<u64, LastRun>>,
    /// Runs done inline, and inline attempts that went to the pool (a busy connection, or more
    /// work than last time).
    inline: AtomicU64,
    handed_off: AtomicU64,
    /// Every run takes this long, when set (tests: the decision without a clock).
    #[cfg(test)]
    fixed: Mutex<Option<Duration>>,
}

impl RunMemory {
    /// The key of a list request on `model`.
    pub(crate) fn key(&self, model: &str, spec: &ListSpec) -> u64 {
        let mut h = self.hasher.build_hasher();
        model.hash(&mut h);
        spec.selection.filters.hash(&mut h);
        spec.selection.search.hash(&mut h);
        spec.selection.lenient.hash(&mut h);
        spec.order_by.hash(&mut h);
        spec.page.hash(&mut h);
        spec.per_page.hash(&mut h);
        spec.no_pagination.hash(&mut h);
        h.finish()
    }

    /// The last run of request `key`, if remembered.
    pub(crate) fn last(&self, key: u64) -> Option<LastRun> {
        self.lock().get(&key).copied()
    }

    /// Remembers a run of request `key`.
    pub(crate) fn keep(&self, key: u64, run: LastRun) {
        let mut runs = self.lock();
        if runs.len() >= MAX_RUNS && !runs.contains_key(&key) {
            runs.clear();
        }
        runs.insert(key, run);
    }

    /// How long a run that started at `start` took.
    pub(crate) fn took(&self, start: Instant) -> Duration {
        #[cfg(test)]
        if let Some(d) = *self.fixed.lock().unwrap_or_else(|e| e.into_inner()) {
            return d;
        }
        start.elapsed()
    }

    /// Counts an inline attempt: done inline, or handed to the pool.
    pub(crate) fn count_inline(&self, done: bool) {
        let counter = if done { &self.inline } else { &self.handed_off };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Inline runs done, and inline attempts handed to the pool.
    #[cfg(test)]
    pub(crate) fn inline_counts(&self) -> (u64, u64) {
        (
            self.inline.load(Ordering::Relaxed),
            self.handed_off.load(Ordering::Relaxed),
        )
    }

    /// Makes every run take `took` (tests).
    #[cfg(test)]
    pub(crate) fn fix_duration(&self, took: Option<Duration>) {
        *self.fixed.lock().unwrap_or_else(|e| e.into_inner()) = took;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, LastRun>> {
        self.runs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A list's answer and the rows its page stepped over (see [`LastRun::skipped`]).
#[derive(Debug)]
pub(crate) struct ListRun<T> {
    /// The answer.
    pub(crate) listing: T,
    /// Rows stepped over before the page's first record (0 for `_no_pagination`).
    pub(crate) skipped: u64,
}

/// How a list or a retrieve gets its connection and how much work it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// On the pool: waits for a connection, does whatever the request needs.
    Pool,
    /// On an async worker: takes a connection only if one is free, and gives up (`None`)
    /// rather than count, step over more than `max_skip` rows, or read a snapshot that another
    /// connection changed (see the module's documentation).
    Inline {
        /// Rows the page may step over.
        max_skip: u64,
    },
}

#[cfg(test)]
mod route_tests {
    use super::*;

    fn run(generation: u64, micros: u64) -> Option<LastRun> {
        Some(LastRun {
            generation,
            took: Duration::from_micros(micros),
            skipped: 0,
        })
    }

    #[test]
    fn a_list_runs_inline_only_when_repeated_fast_on_the_same_data() {
        // Never seen: timed on the pool first.
        assert_eq!(route_list(None, 3), Route::Pool);
        // Seen in this generation, fast: inline.
        assert_eq!(route_list(run(3, 80), 3), Route::Inline);
        assert_eq!(route_list(run(3, 999), 3), Route::Inline);
        // Slow last time (a count after a write, a long list): the pool.
        assert_eq!(route_list(run(3, 1000), 3), Route::Pool);
        assert_eq!(route_list(run(3, 21_000), 3), Route::Pool);
        // The data changed since (a write bumped the generation): the pool.
        assert_eq!(route_list(run(2, 80), 3), Route::Pool);
    }

    #[test]
    fn the_memory_is_bounded_and_keys_tell_requests_apart() {
        let memory = RunMemory::default();
        let spec = ListSpec {
            selection: Default::default(),
            order_by: Vec::new(),
            page: 1,
            per_page: 25,
            no_pagination: false,
        };
        let page_2 = ListSpec {
            page: 2,
            ..spec.clone()
        };
        let key = memory.key("items", &spec);
        assert_eq!(key, memory.key("items", &spec.clone()));
        assert_ne!(key, memory.key("items", &page_2));
        assert_ne!(key, memory.key("tags", &spec));
        memory.keep(key, run(1, 10).unwrap());
        assert_eq!(memory.last(key), run(1, 10));
        for i in 0..MAX_RUNS as u64 {
            memory.keep(
                i.wrapping_mul(7919).wrapping_add(key ^ 1),
                run(1, 10).unwrap(),
            );
        }
        assert!(memory.lock().len() <= MAX_RUNS);
    }
}

/// Strict writes, for the built-in tools resource (users and teams, docs/contract.md 5.3),
/// whose contract is the emulator's own: strict JSON types, required NOT NULL fields, and
/// foreign keys enforced (a user's team must exist). Records use the data engine's writes
/// (`Resource::create_body`, `update_body`, `delete_selected`).
impl Resource {
    /// Creates a record from a JSON object and returns the stored record as JSON bytes (`201`),
    /// strictly (see above).
    ///
    /// Unknown keys and generated columns are ignored. Values must have the
    /// field's JSON type. A missing required field, a NULL in a NOT NULL field, a unique or
    /// foreign key violation are `400` field errors.
    pub fn create(&self, model: &str, body: &Json) -> Result<Vec<u8>, EngineError> {
        let model = self.model_or_404(model)?;
        let obj = as_object(body)?;
        let mut errors = BTreeMap::new();
        let mut values: Vec<(&Field, Value)> = Vec::new();
        for f in model.fields.iter().filter(|f| !f.generated) {
            match obj.get(&f.name) {
                None => {
                    if strictly_required(f) {
                        add(&mut errors, &f.name, "This field is required.");
                    }
                }
                Some(v) => match json_to_sql(f.value_kind, v) {
                    Ok(Value::Null) if f.auto => {}
                    Ok(Value::Null) if f.not_null || f.primary_key => {
                        add(&mut errors, &f.name, "This field may not be null.");
                    }
                    Ok(val) => values.push((f, val)),
                    Err(m) => add(&mut errors, &f.name, m),
                },
            }
        }
        check(errors)?;
        let sql = if values.is_empty() {
            format!(
                "INSERT INTO {} DEFAULT VALUES RETURNING {}",
                model.table_sql, model.select_list
            )
        } else {
            let cols: Vec<&str> = values.iter().map(|(f, _)| f.sql.as_str()).collect();
            let marks = vec!["?"; values.len()].join(", ");
            format!(
                "INSERT INTO {} ({}) VALUES ({marks}) RETURNING {}",
                model.table_sql,
                cols.join(", "),
                model.select_list
            )
        };
        self.with_writer(|conn| {
            let run = || -> rusqlite::Result<Vec<u8>> {
                // Run to its end (`each_row`): in autocommit mode that is when SQLite commits,
                // and a commit that fails (a deferred foreign key, an I/O error) must fail the
                // create, not be lost in the statement's reset after a `201`.
                let mut buf = Vec::new();
                let binds = params_from_iter(values.iter().map(|(_, v)| v));
                each_row(conn, &sql, binds, |row| {
                    buf = record_json(&*model, &DriverRow::<Sqlite<'_>>(row), 0);
                    Ok::<(), rusqlite::Error>(())
                })?;
                Ok(buf)
            };
            with_foreign_keys(conn, || {
                run().map_err(|e| self.write_error(conn, &model, e, &values, false))
            })
        })
    }

    /// Updates the fields given in a partial JSON object and returns the whole record as JSON
    /// bytes. Unknown keys, the primary key and generated columns are
    /// ignored; an object with nothing to change returns the record as it is. `404` when the
    /// record does not exist.
    pub fn update(&self, model: &str, pk: &str, body: &Json) -> Result<Vec<u8>, EngineError> {
        let model = self.model_or_404(model)?;
        let pk = pk_value(&model, pk)?;
        let obj = as_object(body)?;
        let mut errors = BTreeMap::new();
        let mut values: Vec<(&Field, Value)> = Vec::new();
        for (key, v) in obj {
            let Some(f) = model.field(key) else { continue };
            if f.generated || f.primary_key {
                continue;
            }
            match json_to_sql(f.value_kind, v) {
                Ok(Value::Null) if f.not_null => {
                    add(&mut errors, &f.name, "This field may not be null.");
                }
                Ok(val) => values.push((f, val)),
                Err(m) => add(&mut errors, &f.name, m),
            }
        }
        check(errors)?;
        if values.is_empty() {
            return self.with_writer(|conn| fetch_one(conn, &model, &pk));
        }
        let sets: Vec<String> = values
            .iter()
            .map(|(f, _)| format!("{} = ?", f.sql))
            .collect();
        let sql = format!(
            "UPDATE {} SET {} WHERE {} = ? RETURNING {}",
            model.table_sql,
            sets.join(", "),
            model.pk_field().sql,
            model.select_list
        );
        self.with_writer(|conn| {
            let run = || -> rusqlite::Result<Option<Vec<u8>>> {
                // As in `create`: the commit happens (and can fail) at the end of the statement.
                let mut buf = None;
                let binds = values.iter().map(|(_, v)| v).chain(std::iter::once(&pk));
                each_row(conn, &sql, params_from_iter(binds), |row| {
                    buf = Some(record_json(&*model, &DriverRow::<Sqlite<'_>>(row), 0));
                    Ok::<(), rusqlite::Error>(())
                })?;
                Ok(buf)
            };
            with_foreign_keys(conn, || match run() {
                Ok(Some(buf)) => Ok(buf),
                Ok(None) => Err(EngineError::RecordNotFound),
                Err(e) => Err(self.write_error(conn, &model, e, &values, false)),
            })
        })
    }

    /// Deletes a record (`204`). `404` when it does not exist; `400` when other records still
    /// reference it through a foreign key.
    pub fn delete(&self, model: &str, pk: &str) -> Result<(), EngineError> {
        let model = self.model_or_404(model)?;
        let pk = pk_value(&model, pk)?;
        let sql = format!(
            "DELETE FROM {} WHERE {} = ?",
            model.table_sql,
            model.pk_field().sql
        );
        self.with_writer(|conn| {
            let run = || -> rusqlite::Result<usize> { changed(conn, &sql, [&pk]) };
            with_foreign_keys(conn, || match run() {
                Ok(0) => Err(EngineError::RecordNotFound),
                Ok(_) => Ok(()),
                Err(e) => Err(self.write_error(conn, &model, e, &[], true)),
            })
        })
    }

    /// Maps a failed write to a `400` with field errors when the database refused the data.
    fn write_error(
        &self,
        conn: &Connection,
        model: &Model,
        e: rusqlite::Error,
        values: &[(&Field, Value)],
        deleting: bool,
    ) -> EngineError {
        let rusqlite::Error::SqliteFailure(err, msg) = &e else {
            return engine_error(e);
        };
        let msg = msg.clone().unwrap_or_else(|| err.to_string());
        let columns = || -> Vec<String> {
            let list = msg.split_once(": ").map(|(_, l)| l).unwrap_or("");
            list.split(", ")
                .filter(|s| !s.is_empty())
                .map(|c| {
                    c.strip_prefix(&format!("{}.", model.name))
                        .unwrap_or(c)
                        .to_owned()
                })
                .collect()
        };
        match err.code {
            ErrorCode::ConstraintViolation => {}
            ErrorCode::TypeMismatch => {
                return non_field(format!("Invalid data: {msg}."));
            }
            _ => return engine_error(e),
        }
        match err.extended_code {
            rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
            | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                let cols = columns();
                match cols.as_slice() {
                    [one] => EngineError::field(
                        one.clone(),
                        format!("{} with this {one} already exists.", model.name),
                    ),
                    _ => non_field(format!(
                        "The fields {} must make a unique set.",
                        cols.join(", ")
                    )),
                }
            }
            rusqlite::ffi::SQLITE_CONSTRAINT_NOTNULL => match columns().as_slice() {
                [one] => EngineError::field(one.clone(), "This field may not be null."),
                _ => non_field(msg),
            },
            rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY if deleting => non_field(
                "This record is referenced by other records and cannot be deleted.".to_owned(),
            ),
            rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => {
                let mut errors = BTreeMap::new();
                for fk in &model.extra.foreign_keys {
                    let Some((_, v)) = values.iter().find(|(f, _)| f.name == fk.column) else {
                        continue;
                    };
                    if matches!(v, Value::Null) {
                        continue;
                    }
                    let parent_col = match &fk.parent_column {
                        Some(c) => quote_ident(c),
                        None => self
                            .model(&fk.parent_table)
                            .map(|m| m.pk_field().sql.clone())
                            .unwrap_or_else(|| "rowid".to_owned()),
                    };
                    let sql = format!(
                        "SELECT 1 FROM {} WHERE {parent_col} = ? LIMIT 1",
                        quote_ident(&fk.parent_table)
                    );
                    let exists =
                        first_row(conn, &sql, [v], |_| Ok(())).map_or(true, |row| row.is_some());
                    if !exists {
                        let shown = match v {
                            Value::Integer(i) => i.to_string(),
                            Value::Real(f) => f.to_string(),
                            Value::Text(t) => t.clone(),
                            _ => String::new(),
                        };
                        add(
                            &mut errors,
                            &fk.column,
                            &format!("Invalid pk \"{shown}\" - object does not exist."),
                        );
                    }
                }
                if errors.is_empty() {
                    non_field("FOREIGN KEY constraint failed.".to_owned())
                } else {
                    EngineError::fields(summary(&errors), errors)
                }
            }
            rusqlite::ffi::SQLITE_CONSTRAINT_DATATYPE => {
                // "cannot store TEXT value in INTEGER column t.c"
                let col = msg
                    .rsplit_once(' ')
                    .map(|(_, c)| c.strip_prefix(&format!("{}.", model.name)).unwrap_or(c))
                    .unwrap_or("");
                if model.field(col).is_some() {
                    EngineError::field(col.to_owned(), format!("Invalid value: {msg}."))
                } else {
                    non_field(msg)
                }
            }
            _ => non_field(msg),
        }
    }
}

/// Runs a strict write with foreign keys enforced, then turns them off again (the data
/// engine's records never enforce them). Statements run in autocommit mode, where the pragma
/// takes effect.
fn with_foreign_keys<R>(
    conn: &Connection,
    f: impl FnOnce() -> Result<R, EngineError>,
) -> Result<R, EngineError> {
    script(conn, "PRAGMA foreign_keys = ON;").map_err(engine_error)?;
    let out = f();
    let off = script(conn, "PRAGMA foreign_keys = OFF;");
    let out = out?;
    off.map_err(engine_error)?;
    Ok(out)
}

fn add(errors: &mut BTreeMap<String, Vec<String>>, field: &str, message: &str) {
    errors
        .entry(field.to_owned())
        .or_default()
        .push(message.to_owned());
}

fn check(errors: BTreeMap<String, Vec<String>>) -> Result<(), EngineError> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(EngineError::fields(summary(&errors), errors))
    }
}

fn as_object(body: &Json) -> Result<&serde_json::Map<String, Json>, EngineError> {
    body.as_object().ok_or_else(|| {
        let got = match body {
            Json::Null => "null",
            Json::Bool(_) => "bool",
            Json::Number(_) => "number",
            Json::String(_) => "str",
            Json::Array(_) => "list",
            Json::Object(_) => "dict",
        };
        non_field(format!(
            "Invalid data. Expected a dictionary, but got {got}."
        ))
    })
}

/// The primary key given as text, parsed by the key's kind; `404` when it cannot be one.
fn pk_value(model: &Model, raw: &str) -> Result<Value, EngineError> {
    text_to_sql(model.pk_field().value_kind, raw).ok_or(EngineError::RecordNotFound)
}

fn fetch_one(conn: &Connection, model: &Model, pk: &Value) -> Result<Vec<u8>, EngineError> {
    let sql = format!(
        "SELECT {} FROM {} WHERE {} = ?",
        model.select_list,
        model.table_sql,
        model.pk_field().sql
    );
    let record = first_row(conn, &sql, [pk], |row| {
        Ok(record_json(model, &DriverRow::<Sqlite<'_>>(row), 0))
    });
    record
        .map_err(engine_error)?
        .ok_or(EngineError::RecordNotFound)
}

#[cfg(test)]
mod tools_tests {
    use super::*;
    use serde_json::json;

    /// A foreign key checked at commit: the `RETURNING` row is produced, then the commit fails.
    const DEFERRED: &str = "
        CREATE TABLE parent (id INTEGER PRIMARY KEY);
        CREATE TABLE child (
            id INTEGER PRIMARY KEY,
            parent_id INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED
        );
        INSERT INTO parent (id) VALUES (1);
        INSERT INTO child (id, parent_id) VALUES (1, 1);
    ";

    fn count(db: &Resource) -> i64 {
        db.with_reader(|c| c.query_row("SELECT count(*) FROM child", [], |r| r.get(0)))
            .unwrap()
    }

    #[test]
    fn a_write_whose_commit_fails_is_an_error_not_a_lost_success() {
        for file in [false, true] {
            let dir = std::env::temp_dir().join(format!(
                "svc-emulator-commit-{}-{}",
                std::process::id(),
                uuid::Uuid::new_v4().simple()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("deferred.sqlite");
            let db = Resource::seeded(file.then_some(path.as_path()), DEFERRED).unwrap();

            let err = db
                .create("child", &json!({"parent_id": 9}))
                .expect_err("the commit fails on the deferred foreign key");
            assert_eq!(err.status(), 400, "{err:?}");
            assert_eq!(count(&db), 1, "nothing was stored");

            let err = db
                .update("child", "1", &json!({"parent_id": 9}))
                .expect_err("the commit fails on the deferred foreign key");
            assert_eq!(err.status(), 400, "{err:?}");
            let kept: Json = serde_json::from_slice(&db.retrieve("child", "1").unwrap()).unwrap();
            assert_eq!(kept["parent_id"], 1, "the update was rolled back");

            // A good write still works, and the writer is usable after the failures.
            let ok: Json =
                serde_json::from_slice(&db.create("child", &json!({"parent_id": 1})).unwrap())
                    .unwrap();
            assert_eq!(ok["parent_id"], 1);
            assert_eq!(count(&db), 2);
            drop(db);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
