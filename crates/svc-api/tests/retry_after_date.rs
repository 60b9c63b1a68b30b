//! `Retry-After` as an HTTP-date, against a replay transport: the wait is the time until the
//! date, the policy's `max_retry_after` still applies, and a past date means no wait. A
//! recording timer keeps the tests free of real waits and of scheduling luck. (The same
//! against the emulator's fault mode over loopback: `tests/tests/retry_after_date.rs` in the
//! `svc-tests` crate.)

#![cfg(feature = "pages")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use svc_api::model::Timestamp;
use svc_api::transport::BoxFuture;
use svc_api::transport::replay::ReplayTransport;
use svc_api::{Client, RetryPolicy, Sleep};

/// A timer that does not wait, and records what it was asked to wait.
#[derive(Debug, Clone, Default)]
struct Recorded(Arc<Mutex<Vec<Duration>>>);

impl Recorded {
    fn waits(&self) -> Vec<Duration> {
        self.0.lock().unwrap().clone()
    }
}

impl Sleep for Recorded {
    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()> {
        self.0.lock().unwrap().push(d);
        Box::pin(async {})
    }
}

fn client(replay: &ReplayTransport, timer: &Recorded, retry: RetryPolicy) -> Client {
    Client::builder()
        .project("acme")
        .api_key("svc_key_secret")
        .app_base_url("http://app.test/api/")
        .allow_insecure_http(true)
        .transport(replay.clone())
        .sleep(timer.clone())
        .retry(retry)
        .build()
        .unwrap()
}

fn busy_until(retry_after: &str) -> http::Response<Bytes> {
    http::Response::builder()
        .status(503)
        .header("retry-after", retry_after)
        .body(Bytes::from_static(br#"{"error":"busy"}"#))
        .unwrap()
}

/// The system clock `seconds` from now, as an HTTP-date (whole seconds, the fraction dropped).
fn in_seconds(seconds: u64) -> Timestamp {
    Timestamp::now()
        .checked_add(Duration::from_secs(seconds))
        .unwrap()
}

#[tokio::test]
async fn a_date_a_few_seconds_ahead_is_waited_for_then_retried() {
    let date = in_seconds(4);
    let replay = ReplayTransport::new()
        .push_response(busy_until(&date.to_http_date()))
        .push(200, "[]");
    let timer = Recorded::default();
    let c = client(&replay, &timer, RetryPolicy::default());
    assert!(c.pages().list().await.unwrap().is_empty());
    assert_eq!(replay.requests().len(), 2);
    let waits = timer.waits();
    assert_eq!(waits.len(), 1, "{waits:?}");
    // The date has whole seconds and the wait is rounded up, so it is 3 or 4 s unless this
    // machine stalled: a wide window keeps the test free of timing.
    assert!(
        waits[0] >= Duration::from_secs(1) && waits[0] <= Duration::from_secs(6),
        "{waits:?}"
    );
    assert_eq!(waits[0].subsec_nanos(), 0, "{waits:?}");
}

#[tokio::test]
async fn the_obsolete_date_forms_count_too() {
    // Past dates: retry at once. Both obsolete forms, then IMF-fixdate. (An RFC 850 year is
    // the one with those digits at most 50 years ahead: `25` is 2025 until 2075.)
    let replay = ReplayTransport::new()
        .push_response(busy_until("Wednesday, 01-Jan-25 00:00:00 GMT"))
        .push_response(busy_until("Sun Nov  6 08:49:37 1994"))
        .push_response(busy_until("Sun, 06 Nov 1994 08:49:37 GMT"))
        .push(200, "[]");
    let timer = Recorded::default();
    let c = client(&replay, &timer, RetryPolicy::default().max_attempts(4));
    assert!(c.pages().list().await.unwrap().is_empty());
    assert_eq!(timer.waits(), [Duration::ZERO; 3]);
}

#[tokio::test]
async fn a_date_past_max_retry_after_ends_the_retries_with_the_503() {
    let date = in_seconds(30);
    let replay = ReplayTransport::new()
        .push_response(busy_until(&date.to_http_date()))
        .push(200, "[]");
    let timer = Recorded::default();
    let policy = RetryPolicy::default().max_retry_after(Duration::from_secs(10));
    let c = client(&replay, &timer, policy);
    let err = c.pages().list().await.unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::SERVICE_UNAVAILABLE));
    let asked = err.api().unwrap().retry_after.unwrap();
    assert!((10..=31).contains(&asked), "{asked}");
    assert!(timer.waits().is_empty());
    assert_eq!(replay.requests().len(), 1, "not retried");
}

#[tokio::test]
async fn a_malformed_retry_after_falls_back_to_backoff() {
    let replay = ReplayTransport::new()
        .push_response(busy_until("Sun, 30 Feb 2026 08:49:37 GMT"))
        .push(200, "[]");
    let timer = Recorded::default();
    let policy = RetryPolicy::default()
        .initial_backoff(Duration::from_millis(100))
        .max_backoff(Duration::from_millis(100));
    let c = client(&replay, &timer, policy);
    assert!(c.pages().list().await.unwrap().is_empty());
    let waits = timer.waits();
    assert_eq!(waits.len(), 1);
    assert!(waits[0] <= Duration::from_millis(100), "{waits:?}");
}
