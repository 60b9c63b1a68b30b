//! The timer behind retries and the overall timeout.

use std::time::Duration;

use svc_transport::BoxFuture;

/// Waits for a while. The client needs a timer for retry backoff and its overall timeout; the
/// default is tokio's, which needs a tokio runtime with the time driver enabled (the default
/// for `#[tokio::main]`). Give the builder your own for other runtimes.
///
/// ```
/// use std::time::Duration;
/// use svc_api::Sleep;
/// use svc_transport::BoxFuture;
///
/// #[derive(Debug)]
/// struct NoWait; // e.g. for tests that should not wait between retries
/// impl Sleep for NoWait {
///     fn sleep(&self, _: Duration) -> BoxFuture<'static, ()> {
///         Box::pin(async {})
///     }
/// }
/// ```
pub trait Sleep: Send + Sync + std::fmt::Debug + 'static {
    /// A future that completes after `duration`.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

/// tokio's timer.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioSleep;

impl Sleep for TokioSleep {
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}
