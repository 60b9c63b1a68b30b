//! [`Resource`] as a [`Backend`]: SQLite is synchronous, so an operation runs either on the
//! async worker that polls it, when its cost is known to be small (a repeated list on
//! unchanged data that was fast, a retrieve by an indexed key: `sqlite::handoff` says why), or
//! on tokio's blocking pool. Either way the caller's [`Hold`] is kept until the work has ended
//! (moved into a pool job, it is held while the job runs, even when the client has gone away).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};
use tokio::sync::Notify;

use crate::backend::{Backend, Batch, Hold, Saved, ToolsBackend, Update, Work};
use crate::engine::python::json::PyJson;
use crate::engine::table::describe;
use crate::engine::types::ModelInfo;
use crate::engine::{
    AggregateRequest, EngineError, GroupRequest, ListSpec, Listing, Selection, SqlLimits,
};
use crate::sqlite::Resource;
use crate::sqlite::driver::SqlCancel;
use crate::sqlite::handoff::{Attempt, INLINE_TRIES, LastRun, ListRun, Mode, Route, route_list};
use crate::sqlite::saved::SavedDatabase;

/// Runs `work` on the blocking pool, keeping `hold` until it has ended.
fn on_pool<T: Send + 'static>(
    db: Arc<Resource>,
    hold: Hold,
    work: impl FnOnce(&Resource) -> Result<T, EngineError> + Send + 'static,
) -> Work<T> {
    Box::pin(async move {
        tokio::task::spawn_blocking(move || {
            let _hold = hold;
            work(&db)
        })
        .await
        .map_err(|e| EngineError::Internal(format!("database task failed: {e}")))?
    })
}

/// Runs a list as `mode` says and remembers how long it took (when it ran), tagged with the
/// `generation` read before it was routed: what the next identical request is routed by.
fn timed_list(
    db: &Resource,
    key: u64,
    generation: u64,
    model: &str,
    spec: &ListSpec,
    mode: Mode,
) -> Result<Attempt<ListRun>, EngineError> {
    let start = Instant::now();
    let ran = db.list_attempt(model, spec, mode)?;
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

impl Backend for Resource {
    fn has_model(&self, name: &str) -> bool {
        self.model(name).is_some()
    }

    fn model_names(&self) -> Vec<String> {
        Resource::model_names(self)
    }

    fn describe(&self, model: &str) -> Option<ModelInfo> {
        Some(describe(&*self.model(model)?))
    }

    fn list(self: Arc<Self>, model: String, spec: ListSpec, hold: Hold) -> Work<Listing> {
        Box::pin(async move {
            // Read before the run: what the run is remembered under (a write during it makes
            // the next request miss, and time it again on the pool).
            let generation = self.generation();
            let key = self.runs().key(&model, &spec);
            let last = self.runs().last(key);
            if let (Route::Inline, Some(last)) = (route_list(last, generation), last) {
                let mode = Mode::Inline {
                    max_skip: last.skipped,
                };
                // `hold` lives until this returns, or goes with the job to the pool.
                let ran = inline(self.freed(), || {
                    timed_list(&self, key, generation, &model, &spec, mode)
                })
                .await;
                self.runs().count_inline(ran.is_some());
                if let Some(run) = ran {
                    return run.map(|run| run.listing);
                }
            }
            on_pool(self, hold, move |db| {
                timed_list(db, key, generation, &model, &spec, Mode::Pool)?
                    .done()
                    .map(|run| run.listing)
                    .ok_or_else(|| EngineError::Internal("a list on the pool gave up".to_owned()))
            })
            .await
        })
    }

    fn retrieve(
        self: Arc<Self>,
        model: String,
        pk: String,
        selection: Selection,
        hold: Hold,
    ) -> Work<Vec<u8>> {
        Box::pin(async move {
            // `hold` lives until this returns, or goes with the job to the pool.
            let mode = Mode::Inline { max_skip: 0 };
            if let Some(bytes) = inline(self.freed(), || {
                self.retrieve_attempt(&model, &pk, &selection, mode)
            })
            .await
            {
                return bytes;
            }
            on_pool(self, hold, move |db| {
                db.retrieve_selected(&model, &pk, &selection)
            })
            .await
        })
    }

    fn create(
        self: Arc<Self>,
        model: String,
        body: PyJson,
        lenient: bool,
        hold: Hold,
    ) -> Work<Vec<u8>> {
        on_pool(self, hold, move |db| db.create_body(&model, &body, lenient))
    }

    /// On the blocking pool, in one transaction of the writer connection.
    fn create_all(self: Arc<Self>, model: String, bodies: Vec<PyJson>, hold: Hold) -> Batch {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
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

    fn update(self: Arc<Self>, change: Update, hold: Hold) -> Work<Vec<u8>> {
        let Update {
            model,
            pk,
            body,
            selection,
            partial,
        } = change;
        // `PUT` is partial like `PATCH` on SQLite, as the engine has it (its serializer requires
        // no column there): both update the same way.
        let _ = partial;
        on_pool(self, hold, move |db| {
            db.update_body(&model, &pk, &body, &selection)
        })
    }

    fn delete(
        self: Arc<Self>,
        model: String,
        pk: String,
        selection: Selection,
        hold: Hold,
    ) -> Work<()> {
        on_pool(self, hold, move |db| {
            db.delete_selected(&model, &pk, &selection)
        })
    }

    fn aggregate(
        self: Arc<Self>,
        model: String,
        request: AggregateRequest,
        selection: Selection,
        hold: Hold,
    ) -> Work<Value> {
        on_pool(self, hold, move |db| {
            db.aggregate(&model, &request, &selection)
        })
    }

    fn group(
        self: Arc<Self>,
        model: String,
        request: GroupRequest,
        selection: Selection,
        hold: Hold,
    ) -> Work<Value> {
        on_pool(self, hold, move |db| db.group(&model, &request, &selection))
    }

    fn reload(self: Arc<Self>, hold: Hold) -> Work<()> {
        on_pool(self, hold, |db| db.reload())
    }

    fn save(self: Arc<Self>, hold: Hold) -> Work<Saved> {
        on_pool(self, hold, |db| Ok(Arc::new(db.save()?) as Saved))
    }

    fn restore(self: Arc<Self>, saved: Saved, hold: Hold) -> Work<()> {
        on_pool(self, hold, move |db| {
            match saved.downcast_ref::<SavedDatabase>() {
                Some(saved) => db.restore(saved),
                None => Err(EngineError::Internal(
                    "this copy of the data was saved from a resource of another kind of \
                     database: restore it on the resource that saved it"
                        .to_owned(),
                )),
            }
        })
    }

    fn sql(
        self: Arc<Self>,
        query: String,
        params: Map<String, Value>,
        limits: SqlLimits,
        hold: Hold,
    ) -> Work<Vec<u8>> {
        cancellable(self, hold, move |db, cancel| {
            db.sql_with(&query, &params, limits, cancel)
        })
    }

    fn inputs(&self, statements: &[String]) -> Result<BTreeSet<String>, EngineError> {
        Resource::action_inputs(statements)
    }

    fn execute(
        self: Arc<Self>,
        statements: Vec<String>,
        inputs: Map<String, Value>,
        limits: SqlLimits,
        hold: Hold,
    ) -> Work<Vec<u8>> {
        cancellable(self, hold, move |db, cancel| {
            db.execute_action(&statements, &inputs, limits, cancel)
        })
    }
}

impl ToolsBackend for Resource {
    fn list_now(&self, model: &str, spec: &ListSpec) -> Result<Listing, EngineError> {
        self.list(model, spec)
    }

    fn retrieve_now(&self, model: &str, pk: &str) -> Result<Vec<u8>, EngineError> {
        self.retrieve(model, pk)
    }

    fn create_strict(&self, model: &str, body: &Value) -> Result<Vec<u8>, EngineError> {
        self.create(model, body)
    }

    fn update_strict(&self, model: &str, pk: &str, body: &Value) -> Result<Vec<u8>, EngineError> {
        self.update(model, pk, body)
    }

    fn delete_strict(&self, model: &str, pk: &str) -> Result<(), EngineError> {
        self.delete(model, pk)
    }
}

#[cfg(test)]
mod tests {
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
