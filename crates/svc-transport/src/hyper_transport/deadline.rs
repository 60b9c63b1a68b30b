//! The request timeout, with one timer per transport rather than one per request.
//!
//! A tokio timer per request costs about a thousand instructions (an entry put into the timer
//! wheel under its lock when first polled, taken out again when dropped): as much as the rest of
//! the transport's own work on a small answer. Every request of a transport has the same timeout,
//! so a request's deadline is never earlier than that of any request registered before it. So:
//!
//! - each request puts its deadline and waker in a shared table ([`Deadlines`]) when its
//!   exchange first waits, and takes them out when it ends (a lock held for a few instructions);
//! - one watcher task per transport sleeps until the earliest deadline in the table, marks the
//!   requests past their deadline as expired and wakes them, and ends when the table is empty;
//! - a request that finds itself expired ends with the timeout error. As with
//!   `tokio::time::timeout`, its exchange is polled first, so an answer that is ready wins.
//!
//! A request registered later has a later (or equal) deadline, so the watcher never needs waking
//! to sleep less. The watcher uses tokio's clock, so paused time (`tokio::time::pause`) drives it
//! as it drives any tokio timer. If its runtime shuts down, the next request to wait starts
//! another.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::time::Instant;

/// The shared table of a transport's waiting requests. Cloning shares it.
#[derive(Debug, Clone, Default)]
pub(super) struct Deadlines {
    shared: Arc<Mutex<Table>>,
}

#[derive(Debug, Default)]
struct Table {
    /// Slots by key; a request frees its own slot, so a key is never reused while its request
    /// may still look at it.
    slots: Vec<Slot>,
    /// Free slots, to be reused.
    free: Vec<usize>,
    /// How many slots hold a waiting request (for the watcher: nothing to watch when zero).
    waiting: usize,
    /// Whether a watcher task is running.
    watching: bool,
}

#[derive(Debug)]
enum Slot {
    Free,
    Waiting { deadline: Instant, waker: Waker },
    Expired,
}

impl Deadlines {
    fn lock(&self) -> MutexGuard<'_, Table> {
        // A panic while holding the lock cannot leave the table inconsistent (every change is
        // one assignment), so a poisoned lock is used as it is.
        self.shared
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `future`, ended with `Err(Elapsed)` if it is not ready within `timeout`.
    pub(super) fn within<F: Future>(&self, timeout: Duration, future: F) -> Within<F> {
        Within {
            future,
            deadlines: self.clone(),
            timeout,
            key: None,
        }
    }

    /// Puts a waiting request in the table; starts the watcher if none runs.
    fn register(&self, deadline: Instant, waker: Waker) -> usize {
        let mut table = self.lock();
        let slot = Slot::Waiting { deadline, waker };
        let key = match table.free.pop() {
            Some(key) => {
                table.slots[key] = slot;
                key
            }
            None => {
                table.slots.push(slot);
                table.slots.len() - 1
            }
        };
        table.waiting += 1;
        if !table.watching {
            table.watching = true;
            drop(table);
            tokio::spawn(watch(self.clone()));
        }
        key
    }

    /// Whether the request at `key` is past its deadline; if not, keeps `waker` as the one to
    /// wake.
    fn expired(&self, key: usize, waker: &Waker) -> bool {
        let mut table = self.lock();
        match &mut table.slots[key] {
            Slot::Expired => true,
            Slot::Waiting { waker: kept, .. } => {
                if !kept.will_wake(waker) {
                    kept.clone_from(waker);
                }
                false
            }
            Slot::Free => false,
        }
    }

    /// Takes the request at `key` out of the table.
    fn remove(&self, key: usize) {
        let mut table = self.lock();
        let slot = std::mem::replace(&mut table.slots[key], Slot::Free);
        if matches!(slot, Slot::Waiting { .. }) {
            table.waiting -= 1;
        }
        table.free.push(key);
        drop(table);
        // The waker is dropped here, outside the lock.
        drop(slot);
    }

    /// Marks every request whose deadline is at or before `now` as expired and returns their
    /// wakers, with the earliest deadline still ahead (`None`: no request waits, and the
    /// watcher has been marked as stopped).
    fn expire(&self, now: Instant) -> (Vec<Waker>, Option<Instant>) {
        let mut table = self.lock();
        let mut wakers = Vec::new();
        let mut next: Option<Instant> = None;
        let mut expired = 0;
        for slot in &mut table.slots {
            if let Slot::Waiting { deadline, .. } = slot {
                if *deadline <= now {
                    if let Slot::Waiting { waker, .. } = std::mem::replace(slot, Slot::Expired) {
                        wakers.push(waker);
                    }
                    expired += 1;
                } else {
                    next = Some(next.map_or(*deadline, |n| n.min(*deadline)));
                }
            }
        }
        table.waiting -= expired;
        if next.is_none() {
            table.watching = false;
        }
        (wakers, next)
    }
}

/// The watcher: sleeps until the earliest deadline, expires what is due, and stops when no
/// request waits.
async fn watch(deadlines: Deadlines) {
    // If the runtime drops this task before it ends, the next request starts another.
    struct Stopped(Option<Deadlines>);
    impl Drop for Stopped {
        fn drop(&mut self) {
            if let Some(deadlines) = self.0.take() {
                deadlines.lock().watching = false;
            }
        }
    }
    let mut stopped = Stopped(Some(deadlines.clone()));
    loop {
        let (wakers, next) = deadlines.expire(Instant::now());
        wakers.into_iter().for_each(Waker::wake);
        match next {
            Some(next) => tokio::time::sleep_until(next).await,
            None => {
                // `expire` marked the watcher as stopped, under the lock: a request registered
                // since has started a new one, which this guard must not mark as stopped.
                stopped.0 = None;
                return;
            }
        }
    }
}

/// The deadline passed before the future was ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Elapsed;

/// The future of [`Deadlines::within`].
#[derive(Debug)]
pub(super) struct Within<F> {
    future: F,
    deadlines: Deadlines,
    timeout: Duration,
    /// The slot in the table, once registered.
    key: Option<usize>,
}

impl<F: Future + Unpin> Future for Within<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Poll::Ready(output) = Pin::new(&mut this.future).poll(cx) {
            if let Some(key) = this.key.take() {
                this.deadlines.remove(key);
            }
            return Poll::Ready(Ok(output));
        }
        match this.key {
            Some(key) => {
                if this.deadlines.expired(key, cx.waker()) {
                    this.key = None;
                    this.deadlines.remove(key);
                    return Poll::Ready(Err(Elapsed));
                }
            }
            None => {
                // A timeout too long to add to the clock never ends (as tokio's own).
                if let Some(deadline) = Instant::now().checked_add(this.timeout) {
                    this.key = Some(this.deadlines.register(deadline, cx.waker().clone()));
                }
            }
        }
        Poll::Pending
    }
}

impl<F> Drop for Within<F> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.deadlines.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table_len(deadlines: &Deadlines) -> (usize, bool) {
        let table = deadlines.lock();
        (table.waiting, table.watching)
    }

    #[tokio::test(start_paused = true)]
    async fn a_ready_future_wins_and_leaves_nothing_behind() {
        let deadlines = Deadlines::default();
        let out = deadlines
            .within(Duration::from_secs(1), std::future::ready(7))
            .await;
        assert_eq!(out, Ok(7));
        // Ready at once: never registered, no watcher.
        assert_eq!(table_len(&deadlines), (0, false));
    }

    #[tokio::test(start_paused = true)]
    async fn a_pending_future_expires_at_its_deadline() {
        let deadlines = Deadlines::default();
        let started = Instant::now();
        let out = deadlines
            .within(
                Duration::from_millis(300),
                std::pin::pin!(std::future::pending::<()>()),
            )
            .await;
        assert_eq!(out, Err(Elapsed));
        assert_eq!(started.elapsed(), Duration::from_millis(300));
        assert_eq!(table_len(&deadlines).0, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn answers_before_the_deadline_are_kept_and_the_watcher_stops() {
        let deadlines = Deadlines::default();
        let sleepy = |ms| {
            let deadlines = deadlines.clone();
            async move {
                deadlines
                    .within(
                        Duration::from_millis(100),
                        Box::pin(tokio::time::sleep(Duration::from_millis(ms))),
                    )
                    .await
            }
        };
        // Three at once: two answer in time, one does not; each gets its own outcome.
        let (a, b, c) = tokio::join!(sleepy(10), sleepy(250), sleepy(99));
        assert_eq!((a, b, c), (Ok(()), Err(Elapsed), Ok(())));
        // Let the watcher see the empty table and stop.
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(table_len(&deadlines), (0, false));
        // A later request starts a new watcher, which still expires it on time.
        let started = Instant::now();
        assert_eq!(sleepy(500).await, Err(Elapsed));
        assert_eq!(started.elapsed(), Duration::from_millis(100));
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_request_frees_its_slot() {
        let deadlines = Deadlines::default();
        let mut waiting = Box::pin(deadlines.within(
            Duration::from_secs(5),
            Box::pin(std::future::pending::<()>()),
        ));
        assert!(futures_poll(&mut waiting).is_pending());
        assert_eq!(table_len(&deadlines), (1, true));
        drop(waiting);
        assert_eq!(table_len(&deadlines).0, 0);
        // The slot is reused.
        let mut again = Box::pin(deadlines.within(
            Duration::from_secs(5),
            Box::pin(std::future::pending::<()>()),
        ));
        assert!(futures_poll(&mut again).is_pending());
        assert_eq!(deadlines.lock().slots.len(), 1);
    }

    #[test]
    fn a_watcher_dropped_with_its_runtime_is_replaced() {
        let deadlines = Deadlines::default();
        let runtime = || {
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap()
        };
        // The first runtime starts a watcher, then shuts down with it (and the request).
        runtime().block_on(async {
            let mut waiting = Box::pin(deadlines.within(
                Duration::from_secs(5),
                Box::pin(std::future::pending::<()>()),
            ));
            assert!(futures_poll(&mut waiting).is_pending());
            tokio::task::yield_now().await;
        });
        assert_eq!(table_len(&deadlines), (0, false));
        // Another runtime's request still times out.
        let out = runtime().block_on(deadlines.within(
            Duration::from_secs(5),
            Box::pin(std::future::pending::<()>()),
        ));
        assert_eq!(out, Err(Elapsed));
    }

    fn futures_poll<F: Future + ?Sized>(future: &mut Pin<Box<F>>) -> Poll<F::Output> {
        let waker = Waker::noop();
        future.as_mut().poll(&mut Context::from_waker(waker))
    }
}
