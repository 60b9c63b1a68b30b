//! Per-resource admission: one slow or flooded resource cannot take every blocking thread.
//!
//! Database calls run on tokio's blocking pool, which all routes share (page settings,
//! accounts, every resource), but for the short SQLite reads run on the async worker
//! (`sqlite::backend`), which hold a turn all the same. Without a bound per resource, a slow
//! query on one resource with hundreds of requests queued behind it filled the pool, and
//! unrelated routes waited seconds.
//! So each resource admits a few jobs at a time ([`Limits::resource_jobs`](crate::Limits::resource_jobs)), lets a bounded
//! number wait a bounded time for a turn, and answers the rest `503` with `Retry-After` at once.
//!
//! The permit travels with the database handle ([`Admitted`]) into the blocking job, so it is
//! held while the job runs, even when the client has gone away and its handler was dropped.

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use svc_model::error_body::codes;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::HttpError;
use svc_emulator_core::backend::Backend;
use svc_emulator_state::config::limits::Limits;

/// The `Retry-After` of a busy resource's `503`, in seconds.
const RETRY_AFTER_SECONDS: u64 = 1;

/// The gates of the resources, made on first use.
#[derive(Default, Debug)]
pub(crate) struct Gates {
    by_resource: Mutex<HashMap<usize, Arc<Gate>>>,
}

/// One resource's gate.
#[derive(Debug)]
struct Gate {
    jobs: Arc<Semaphore>,
    waiting: AtomicUsize,
    /// Turns given back so far: the resource's progress, which a waiting request watches.
    finished: AtomicU64,
}

/// A turn: its permit goes back to the gate, counted as progress, when the turn is dropped.
struct Turn {
    _permit: OwnedSemaphorePermit,
    gate: Arc<Gate>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        // Counted before the permit is released (fields drop after this body), so a request
        // woken by the permit always sees the progress.
        self.gate.finished.fetch_add(1, Ordering::Relaxed);
    }
}

/// One place in a gate's queue, given up however the wait ends (the client may leave).
struct Waiting<'g>(&'g Gate);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.waiting.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A resource's database, with its turn: the permit is released when the last clone of this
/// handle is dropped (by the blocking job it was moved into).
#[derive(Clone)]
pub struct Admitted {
    db: Arc<dyn Backend>,
    _turn: Arc<Turn>,
}

impl std::fmt::Debug for Admitted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admitted").finish_non_exhaustive()
    }
}

impl Deref for Admitted {
    type Target = Arc<dyn Backend>;
    fn deref(&self) -> &Arc<dyn Backend> {
        &self.db
    }
}

impl Gates {
    /// Waits for `db`'s turn, or refuses with `503`: at once when too many requests wait
    /// already, or when the resource finishes no request for as long as
    /// [`Limits::resource_wait`] (it is stuck). A resource that is busy but moving keeps its
    /// queue, however long the queue takes.
    pub(crate) async fn admit(
        &self,
        db: Arc<dyn Backend>,
        limits: &Limits,
    ) -> Result<Admitted, HttpError> {
        let gate = {
            let mut gates = self.by_resource.lock().unwrap_or_else(|e| e.into_inner());
            // Keyed by the resource's address: the `Arc` is kept by the registry while the
            // resource is served, and a reloaded resource is a new one with a gate of its own.
            Arc::clone(
                gates
                    .entry(Arc::as_ptr(&db).cast::<()>() as usize)
                    .or_insert_with(|| {
                        Arc::new(Gate {
                            jobs: Arc::new(Semaphore::new(limits.resource_jobs_limit())),
                            waiting: AtomicUsize::new(0),
                            finished: AtomicU64::new(0),
                        })
                    }),
            )
        };
        let turn = |permit| Admitted {
            db: Arc::clone(&db),
            _turn: Arc::new(Turn {
                _permit: permit,
                gate: Arc::clone(&gate),
            }),
        };
        if let Ok(permit) = Arc::clone(&gate.jobs).try_acquire_owned() {
            return Ok(turn(permit));
        }
        if gate.waiting.fetch_add(1, Ordering::Relaxed) >= limits.resource_queue_limit() {
            gate.waiting.fetch_sub(1, Ordering::Relaxed);
            return Err(busy());
        }
        let _waiting = Waiting(&gate);
        // One acquire for the whole wait, so the request keeps its place in the (fair) queue.
        let acquire = Arc::clone(&gate.jobs).acquire_owned();
        let mut acquire = std::pin::pin!(acquire);
        let mut seen = gate.finished.load(Ordering::Relaxed);
        loop {
            match tokio::time::timeout(limits.resource_wait_limit(), &mut acquire).await {
                Ok(Ok(permit)) => return Ok(turn(permit)),
                Ok(Err(_closed)) => return Err(busy()),
                Err(_) => {
                    let now = gate.finished.load(Ordering::Relaxed);
                    if now == seen {
                        return Err(stuck(limits.resource_wait_limit()));
                    }
                    seen = now;
                }
            }
        }
    }
}

fn busy() -> HttpError {
    HttpError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        codes::UNAVAILABLE,
        "The resource is busy with other requests; try again in a moment.",
    )
    .retry_after(RETRY_AFTER_SECONDS)
}

/// The resource finished no request while this one waited `wait`: something holds every turn.
fn stuck(wait: std::time::Duration) -> HttpError {
    HttpError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        codes::UNAVAILABLE,
        format!(
            "The resource has not finished any request for {:.1} s: every turn is held by a \
             request that is not moving (a long or stuck query?); try again in a moment.",
            wait.as_secs_f64()
        ),
    )
    .retry_after(RETRY_AFTER_SECONDS)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn resource() -> Arc<dyn Backend> {
        Arc::new(
            svc_emulator_sqlite::Resource::in_memory("CREATE TABLE t (id INTEGER PRIMARY KEY);")
                .unwrap(),
        )
    }

    #[tokio::test(start_paused = true)]
    async fn a_busy_resource_queues_a_few_then_refuses_at_once() {
        let limits = Limits::default()
            .resource_jobs(2)
            .resource_queue(1)
            .resource_wait(Duration::from_secs(3));
        let gates = Gates::default();
        let (db, other) = (resource(), resource());
        let first = gates.admit(db.clone(), &limits).await.unwrap();
        let second = gates.admit(db.clone(), &limits).await.unwrap();
        // Both turns taken: one request may wait...
        let waiting = {
            let gates = &gates;
            let db = db.clone();
            async move { gates.admit(db, &limits).await }
        };
        let mut waiting = Box::pin(waiting);
        assert!(futures_poll(&mut waiting).is_pending());
        // ...and the next is refused at once, with a Retry-After.
        let refused = gates.admit(db.clone(), &limits).await.err().unwrap();
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
        // Another resource is not affected.
        assert!(gates.admit(other, &limits).await.is_ok());
        // A turn given back goes to the one waiting.
        drop(first);
        assert!(waiting.await.is_ok());
        // A wait longer than the limit is a 503 too.
        let clone = second.clone();
        drop(second);
        let _third = gates.admit(db.clone(), &limits).await.unwrap();
        let late = gates.admit(db.clone(), &limits).await.err().unwrap();
        assert_eq!(late.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            format!("{late:?}").contains("has not finished any request for 3.0 s"),
            "{late:?}"
        );
        drop(clone);
    }

    /// A queue that moves is never shed: six requests on one turn, each holding it 1.5 s,
    /// all get it although the last waits 7.5 s, far past the 2 s wait limit.
    #[tokio::test(start_paused = true)]
    async fn a_busy_but_moving_resource_keeps_its_queue() {
        let limits = Limits::default()
            .resource_jobs(1)
            .resource_queue(16)
            .resource_wait(Duration::from_secs(2));
        let gates = Arc::new(Gates::default());
        let db = resource();
        let started = tokio::time::Instant::now();
        let mut requests = Vec::new();
        for _ in 0..6 {
            let (gates, db) = (Arc::clone(&gates), Arc::clone(&db));
            requests.push(tokio::spawn(async move {
                let turn = gates.admit(db, &limits).await?;
                tokio::time::sleep(Duration::from_millis(1500)).await;
                drop(turn);
                Ok::<_, HttpError>(())
            }));
        }
        for request in requests {
            request.await.unwrap().unwrap();
        }
        assert_eq!(started.elapsed(), Duration::from_millis(9000));
    }

    /// A request whose client leaves while it waits gives its place in the queue back.
    #[tokio::test(start_paused = true)]
    async fn a_request_that_leaves_the_queue_frees_its_place() {
        let limits = Limits::default()
            .resource_jobs(1)
            .resource_queue(1)
            .resource_wait(Duration::from_secs(2));
        let gates = Gates::default();
        let db = resource();
        let first = gates.admit(db.clone(), &limits).await.unwrap();
        for _ in 0..3 {
            let mut left = Box::pin(gates.admit(db.clone(), &limits));
            assert!(futures_poll(&mut left).is_pending());
            drop(left);
        }
        let mut waiting = Box::pin(gates.admit(db.clone(), &limits));
        assert!(
            futures_poll(&mut waiting).is_pending(),
            "queued, not refused"
        );
        drop(first);
        assert!(waiting.await.is_ok());
    }

    fn futures_poll<F: std::future::Future>(
        future: &mut std::pin::Pin<Box<F>>,
    ) -> std::task::Poll<F::Output> {
        let waker = std::task::Waker::noop();
        future
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker))
    }
}
