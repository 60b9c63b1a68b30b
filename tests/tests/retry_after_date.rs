//! The SDK against the emulator's fault mode with `Retry-After` as an HTTP-date
//! (`Faults::retry_after_as_http_date`): `503`s are retried after the time until that date and
//! the reads succeed; a date further away than the policy's `max_retry_after` ends the retries
//! with the `503`.
//!
//! The client's timer records the waits it is asked for and returns at once, so nothing here
//! depends on how fast this machine is; the windows are wide because an HTTP-date has whole
//! seconds and the emulator and the client read the clock at different moments.

use std::time::Duration;

use svc_api::RetryPolicy;
use svc_emulator::{Emulator, EmulatorConfig, Faults};
use svc_tests::{Recorded, builder};

async fn faulty(faults: Faults) -> Emulator {
    Emulator::start(EmulatorConfig::default().faults(faults))
        .await
        .expect("the emulator starts")
}

/// How far ahead the emulator dates its `Retry-After`.
const AHEAD: u64 = 3;

#[tokio::test]
async fn a_503_with_an_http_date_is_retried_after_that_date_and_succeeds() {
    // Half the reads answered 503 with `Retry-After: <now + 3 s as an HTTP-date>` (seeded, so
    // the same reads fail on every run); enough attempts that every read gets through.
    let emulator = faulty(
        Faults::new()
            .unavailable(0.5, AHEAD)
            .retry_after_as_http_date(true)
            .seed(3)
            .only_methods(["GET"]),
    )
    .await;
    let timer = Recorded::default();
    let c = builder(&emulator)
        .sleep(timer.clone())
        .retry(
            RetryPolicy::default()
                .max_attempts(10)
                .initial_backoff(Duration::from_millis(1))
                .max_backoff(Duration::from_millis(20)),
        )
        .build()
        .unwrap();
    for id in 1..=20 {
        let record = c.records("shop", "products").retrieve(id).await.unwrap();
        assert_eq!(record["sku"], format!("SKU-{id:04}").as_str());
    }
    let counts = emulator.fault_counts().unwrap();
    let waits = timer.waits();
    assert!(counts.unavailable > 0, "{counts:?}");
    assert_eq!(waits.len() as u64, counts.unavailable, "one wait per 503");
    // The date is at least 3 s after the emulator's clock (rounded up to a whole second) and
    // the client rounds its wait up: 3 or 4 s here, unless the machine stalled between the
    // answer and its reading. At least 1 s proves the date was honoured: the policy's own
    // backoff, used when there is no Retry-After it can read, is at most 20 ms.
    println!(
        "retry_after_date: {} answers 503 with a date {AHEAD} s ahead; waits {waits:?}",
        counts.unavailable
    );
    for wait in &waits {
        assert!(
            *wait >= Duration::from_secs(1) && *wait <= Duration::from_secs(AHEAD + 2),
            "{waits:?}"
        );
        assert_eq!(wait.subsec_nanos(), 0, "whole seconds: {waits:?}");
    }
}

#[tokio::test]
async fn a_date_further_away_than_max_retry_after_ends_the_retries_with_the_503() {
    let emulator = faulty(
        Faults::new()
            .unavailable(1.0, 30)
            .retry_after_as_http_date(true),
    )
    .await;
    let timer = Recorded::default();
    let c = builder(&emulator)
        .sleep(timer.clone())
        .retry(RetryPolicy::default().max_retry_after(Duration::from_secs(10)))
        .build()
        .unwrap();
    let err = c.records("shop", "products").retrieve(1).await.unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(err.body().and_then(|b| b.error_code()), Some("unavailable"));
    // About 30 s: the date is read into seconds like the other form.
    let asked = err.api().unwrap().retry_after.unwrap();
    assert!((11..=31).contains(&asked), "{asked}");
    assert!(timer.waits().is_empty(), "{:?}", timer.waits());
    assert_eq!(emulator.fault_counts().unwrap().selected, 1, "sent once");
}
