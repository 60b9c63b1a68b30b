//! What the replay tests share.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use svc_api::Sleep;
use svc_api::transport::BoxFuture;

/// A timer that does not wait, and remembers what it was asked: retries' backoffs without
/// the time they would take.
#[derive(Debug, Clone, Default)]
pub struct NoWait(pub Arc<Mutex<Vec<Duration>>>);

impl Sleep for NoWait {
    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()> {
        self.0.lock().unwrap().push(d);
        Box::pin(async {})
    }
}
