//! Per-call options (`CallOptions`) against the emulator: a handle's timeout, retry policy,
//! idempotency and headers replace the client's for its calls only, and options a call cannot
//! take fail before anything is sent. Attempts are counted by the emulator's fault counters,
//! headers by a recording of what the real transport sent.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use serde_json::json;
use svc_api::model::records::ListQuery;
use svc_api::transport::replay::RecordingTransport;
use svc_api::transport::{BoxFuture, HyperTransport};
use svc_api::{CallOptions, Error, RetryPolicy, Sent};
use svc_emulator::{Emulator, EmulatorConfig, Faults};
use svc_tests::{Recorded, builder};

async fn faulty(faults: Faults) -> Emulator {
    Emulator::start(EmulatorConfig::default().faults(faults))
        .await
        .expect("the emulator starts")
}

/// A timer that records each wait asked for and never ends it: the overall timeout a call arms
/// shows in the record, and never fires.
#[derive(Debug, Clone, Default)]
struct Armed(Arc<Mutex<Vec<Duration>>>);

impl svc_api::Sleep for Armed {
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        self.0.lock().unwrap().push(duration);
        Box::pin(std::future::pending())
    }
}

#[tokio::test]
async fn a_handles_timeout_replaces_the_clients_for_its_calls_only() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let timer = Armed::default();
    let c = builder(&emulator)
        .timeout(Duration::from_secs(5))
        .sleep(timer.clone())
        .build()
        .unwrap();
    let slow = CallOptions::new().timeout(Duration::from_secs(120));
    let products = c.records("shop", "products");
    products.retrieve(1).await.unwrap();
    products
        .clone()
        .options(slow.clone())
        .retrieve(1)
        .await
        .unwrap();
    let streamed: Vec<_> = products
        .options(slow)
        .stream(ListQuery::new().per_page(20))
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(streamed.len(), 50);
    // The client's 5 s, then the handle's 120 s, for each of the stream's three pages too.
    let armed = timer.0.lock().unwrap().clone();
    let s = Duration::from_secs;
    assert_eq!(armed, [s(5), s(120), s(120), s(120), s(120)]);
}

#[tokio::test]
async fn a_handles_timeout_ends_a_hung_call_of_a_client_without_one() {
    let emulator = faulty(
        Faults::new()
            .latency(Duration::from_secs(60))
            .only_paths_containing("/models/products"),
    )
    .await;
    let c = builder(&emulator).build().unwrap();
    let started = Instant::now();
    let err = c
        .records("shop", "products")
        .options(CallOptions::new().timeout(Duration::from_millis(300)))
        .retrieve(1)
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Timeout(d) if d == Duration::from_millis(300)),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    // The client itself has no timeout: its other calls are as they were.
    let customer = c.records("shop", "customers").retrieve(7).await.unwrap();
    assert_eq!(customer["id"], 7);
}

#[tokio::test]
async fn a_handles_retry_policy_replaces_the_clients() {
    // Every read answered 503: the attempts made are the policy's.
    let emulator = faulty(Faults::new().unavailable(1.0, 0).only_methods(["GET"])).await;
    let timer = Recorded::default();
    let c = builder(&emulator).sleep(timer.clone()).build().unwrap();
    let attempts = || emulator.fault_counts().unwrap().selected;
    let products = c.records("shop", "products");

    let err = products.retrieve(1).await.unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(attempts(), 3, "the client's default policy");

    let once = CallOptions::new().retry(RetryPolicy::none());
    products
        .clone()
        .options(once)
        .retrieve(1)
        .await
        .unwrap_err();
    assert_eq!(attempts(), 4, "one attempt");

    let patient = CallOptions::new().retry(
        RetryPolicy::default()
            .max_attempts(6)
            .initial_backoff(Duration::from_millis(1)),
    );
    let err = products.options(patient).list(&ListQuery::new()).await;
    assert!(err.is_err());
    assert_eq!(attempts(), 10, "six attempts");
    assert_eq!(timer.waits().len(), 2 + 5, "a wait between attempts");
}

#[tokio::test]
async fn idempotency_is_overridden_only_where_it_is_safe() {
    // Every update answered 503: not retried, unless the caller says it is idempotent.
    let emulator = faulty(Faults::new().unavailable(1.0, 0).only_methods(["PATCH"])).await;
    let timer = Recorded::default();
    let c = builder(&emulator).sleep(timer.clone()).build().unwrap();
    let attempts = || emulator.fault_counts().unwrap().selected;
    let products = c.records("shop", "products");
    let patch = json!({"name": "renamed"});

    let err = products.update(1, &patch).await.unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(attempts(), 1);
    let repeatable = products
        .clone()
        .options(CallOptions::new().idempotent(true));
    repeatable.update(1, &patch).await.unwrap_err();
    assert_eq!(attempts(), 1 + 3, "retried as a read is");

    // A create is never safe to send twice: refused, nothing sent.
    let err = repeatable
        .create(&json!({"sku": "TWICE-1", "name": "twice", "price": 1.0}))
        .await
        .unwrap_err();
    let Error::InvalidInput(why) = &err else {
        panic!("{err:?}")
    };
    assert!(
        why.message()
            .contains("records.create cannot be declared idempotent"),
        "{err}"
    );
    assert_eq!(err.sent(), Sent::No);
    let login = c
        .account()
        .options(CallOptions::new().idempotent(true))
        .login("ana@example.com", "x")
        .await;
    assert!(matches!(login, Err(Error::InvalidInput(_))), "{login:?}");
    assert_eq!(emulator.fault_counts().unwrap().requests, 4);

    // `false` is taken by every call: a read whose answer was lost is not sent again.
    let emulator = faulty(Faults::new().drop_midway(1.0).only_methods(["GET"])).await;
    let c = builder(&emulator)
        .sleep(Recorded::default())
        .build()
        .unwrap();
    let err = c
        .records("shop", "products")
        .options(CallOptions::new().idempotent(false))
        .retrieve(1)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    assert_eq!(err.sent(), Sent::Maybe);
    assert_eq!(emulator.fault_counts().unwrap().selected, 1);
    c.records("shop", "products").retrieve(1).await.unwrap_err();
    assert_eq!(emulator.fault_counts().unwrap().selected, 1 + 3);
}

#[tokio::test]
async fn a_handles_headers_are_sent_and_the_clients_own_are_refused() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let recording = RecordingTransport::new(HyperTransport::new());
    let c = builder(&emulator)
        .transport(recording.clone())
        .build()
        .unwrap();
    let tagged = CallOptions::new()
        .header("x-request-id", "req-42")
        .header("x-tag", "a")
        .header("x-tag", "b")
        .header(http::header::USER_AGENT, "nightly-sync/1.0");
    let page = c.pages().options(tagged.clone()).list().await.unwrap();
    c.sql("shop")
        .options(tagged)
        .query("select 1 as one")
        .send()
        .await
        .unwrap();
    c.pages().list().await.unwrap();
    let sent = recording.requests();
    assert_eq!(sent.len(), 3);
    for tagged in &sent[..2] {
        assert_eq!(tagged.headers["x-request-id"], "req-42");
        let tags: Vec<_> = tagged.headers.get_all("x-tag").iter().collect();
        assert_eq!(tags, ["a", "b"]);
        let agents: Vec<_> = tagged.headers.get_all("user-agent").iter().collect();
        assert_eq!(agents, ["nightly-sync/1.0"], "replaces the client's");
        assert!(tagged.headers.contains_key("authorization"));
    }
    assert!(!sent[2].headers.contains_key("x-request-id"));
    assert!(
        sent[2].headers["user-agent"]
            .to_str()
            .unwrap()
            .starts_with("svc-rs/")
    );
    let _ = page;

    // The client's own headers, and invalid ones, fail before anything is sent; the message
    // never shows the value.
    for options in [
        CallOptions::new().header("authorization", "Bearer stolen-secret"),
        CallOptions::new().header("content-type", "text/plain"),
        CallOptions::new().header("x-ok", "line\nbreak-secret"),
        CallOptions::new().header("not a name", "v"),
    ] {
        let err = c.pages().options(options).list().await.unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
        assert!(!err.to_string().contains("secret"), "{err}");
    }
    assert_eq!(recording.requests().len(), 3, "nothing more was sent");
}
