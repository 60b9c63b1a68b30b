//! Work run on tokio's blocking pool: SQLite's statements, the meta store's, a body's parse.
//!
//! Every caller goes through [`on_blocking_pool`] rather than `tokio::task::spawn_blocking`:
//! that function is generic over its closure, so each call site compiled tokio's task machinery
//! again (about a thousand lines of LLVM IR each, some sixty sites in the emulator's crates),
//! which a downstream crate paid for in its clean build. Here the work is boxed, and the pool's
//! side is compiled once; a call costs one more allocation and a channel.

use tokio::sync::oneshot;

/// Runs `work` on the blocking pool and returns what it returned, or why it did not end: it
/// panicked, or the runtime is shutting down (the text of tokio's `JoinError`).
pub async fn on_blocking_pool<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (answer, answered) = oneshot::channel();
    let job: Box<dyn FnOnce() + Send> = Box::new(move || {
        // The receiver is only gone if the caller stopped waiting: nobody wants the value.
        let _ = answer.send(work());
    });
    run_boxed(job).await?;
    answered
        .await
        .map_err(|_| "the blocking task ended without an answer".to_owned())
}

/// The one instantiation of `spawn_blocking`.
async fn run_boxed(job: Box<dyn FnOnce() + Send>) -> Result<(), String> {
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_work_s_value_comes_back() {
        let thread = std::thread::current().id();
        let (value, ran_on) = on_blocking_pool(move || (21 * 2, std::thread::current().id()))
            .await
            .unwrap();
        assert_eq!(value, 42);
        assert_ne!(ran_on, thread, "the work ran on the caller's thread");
    }

    #[tokio::test]
    async fn a_panic_is_an_error_with_its_message() {
        let err = on_blocking_pool(|| -> u8 { panic!("boom in the pool") })
            .await
            .unwrap_err();
        assert!(err.contains("panicked"), "{err}");
    }
}
