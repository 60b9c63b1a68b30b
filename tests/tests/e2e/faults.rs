//! The SDK against the emulator's fault mode: reads retried through `503`s and dropped
//! connections; creates and updates never sent twice; `Retry-After` honoured; per-attempt and
//! overall timeouts ending hung requests; stale pooled connections survived.
//!
//! Faults are seeded, and every count below comes from the emulator's own fault counters, so
//! "sent once" is checked at the wire, not inferred.

use std::time::{Duration, Instant};

use futures_util::TryStreamExt;
use serde_json::json;
use svc_api::model::records::{AggregateFunc, AggregateRequest, ListQuery, Lookup};
use svc_api::transport::TransportErrorKind;
use svc_api::{Client, Error, RetryPolicy, Sent};
use svc_emulator::{Emulator, EmulatorConfig, Faults};
use svc_tests::{Recorded, builder};

async fn faulty(faults: Faults) -> Emulator {
    Emulator::start(EmulatorConfig::default().faults(faults))
        .await
        .expect("the emulator starts")
}

/// Quick retries, many attempts: reads must get through.
fn patient() -> RetryPolicy {
    RetryPolicy::default()
        .max_attempts(10)
        .initial_backoff(Duration::from_millis(1))
        .max_backoff(Duration::from_millis(20))
}

fn sku(n: i64) -> String {
    format!("SKU-{n:04}")
}

#[tokio::test]
async fn reads_are_retried_through_503s_and_dropped_connections_and_succeed() {
    let emulator = faulty(
        Faults::new()
            .unavailable(0.1, 0)
            .drop_before(0.1)
            .drop_midway(0.1)
            .seed(2024)
            // Aggregate is a read-only POST: retried like a GET.
            .only_methods(["GET", "POST"]),
    )
    .await;
    let c = builder(&emulator).retry(patient()).build().unwrap();
    let products = c.records("shop", "products");
    let mut calls: u64 = 0;
    for i in 0..150_i64 {
        let id = 1 + i % 50;
        let record = products.retrieve(id).await.unwrap();
        assert_eq!(record["sku"], sku(id).as_str());
        calls += 1;
        if i % 10 == 0 {
            let page = products
                .list(&ListQuery::new().per_page(20).page(2))
                .await
                .unwrap();
            assert_eq!((page.count, page.results.len()), (50, 20));
            let n: u64 = c
                .records("shop", "orders")
                .aggregate(
                    &AggregateRequest::new(AggregateFunc::Count),
                    &ListQuery::new().filter("customer_id", Lookup::Lte, "10"),
                )
                .await
                .unwrap();
            assert!(n > 0);
            calls += 2;
        }
        if i % 50 == 0 {
            let all = c
                .records("shop", "customers")
                .all(&ListQuery::new())
                .await
                .unwrap();
            assert_eq!(all.len(), 1000);
            let streamed: Vec<_> = c
                .records("shop", "customers")
                .stream(ListQuery::new().per_page(100))
                .unwrap()
                .try_collect()
                .await
                .unwrap();
            assert_eq!(streamed.len(), 1000);
            calls += 11;
        }
    }
    let counts = emulator.fault_counts().unwrap();
    println!(
        "faults/reads: {calls} calls took {} attempts; survived {} `503`s, {} connections \
         dropped before and {} midway",
        counts.selected, counts.unavailable, counts.dropped_before, counts.dropped_midway
    );
    assert!(counts.unavailable > 5 && counts.dropped_before > 5 && counts.dropped_midway > 5);
    assert_eq!(
        counts.selected,
        calls + counts.unavailable + counts.dropped_before + counts.dropped_midway,
        "one retry per fault, none more"
    );
}

/// How many products have a SKU starting with `prefix` (reads are not faulty in these tests).
async fn with_prefix(c: &Client, prefix: &str) -> Vec<svc_api::Record> {
    c.records("shop", "products")
        .all(&ListQuery::new().filter("sku", Lookup::IStartsWith, prefix))
        .await
        .unwrap()
}

#[tokio::test]
async fn creates_and_updates_are_never_sent_twice() {
    let emulator = faulty(
        Faults::new()
            .unavailable(0.2, 0)
            .drop_before(0.2)
            .drop_midway(0.3)
            .seed(7)
            .only_methods(["POST", "PATCH"]),
    )
    .await;
    // Retries on: the SDK must still send each create and update once.
    let c = builder(&emulator).retry(patient()).build().unwrap();
    let products = c.records("shop", "products");

    let creates: u64 = 80;
    let (mut ok, mut unavailable, mut ambiguous) = (0, 0, 0);
    for i in 0..creates {
        let sku = format!("ONCE-{i:03}");
        let result = products
            .create(&json!({"sku": sku, "name": "fault test", "price": 1.5}))
            .await;
        let present = with_prefix(&c, &sku).await.len();
        match result {
            Ok(record) => {
                assert_eq!(record["sku"], sku.as_str());
                assert_eq!(present, 1, "{sku}: answered, stored once");
                ok += 1;
            }
            Err(e) if e.status() == Some(http::StatusCode::SERVICE_UNAVAILABLE) => {
                assert_eq!(e.sent(), Sent::Yes);
                assert_eq!(present, 0, "{sku}: a 503 ran nothing");
                unavailable += 1;
            }
            Err(e) => {
                // Dropped before (nothing stored) or midway (stored): the SDK cannot know,
                // says so, and does not retry.
                assert!(matches!(e, Error::Transport(_)), "{e:?}");
                assert_eq!(e.sent(), Sent::Maybe, "{e}");
                assert!(present <= 1, "{sku}: at most once");
                ambiguous += 1;
            }
        }
    }
    let counts = emulator.fault_counts().unwrap();
    assert_eq!(
        counts.selected, creates,
        "one request per create, at the wire"
    );
    assert_eq!(unavailable, counts.unavailable);
    assert_eq!(ambiguous, counts.dropped_before + counts.dropped_midway);
    let stored = with_prefix(&c, "ONCE-").await.len() as u64;
    assert_eq!(
        stored,
        ok + counts.dropped_midway,
        "answered + cut off midway"
    );

    // Updates: the same rules.
    let before = emulator.fault_counts().unwrap();
    let updates: i64 = 40;
    let (mut updated_ok, mut changed) = (0, 0);
    for id in 1..=updates {
        let name = format!("updated once {id}");
        let result = products.update(id, &json!({"name": name})).await;
        let now = products.retrieve(id).await.unwrap();
        let applied = now["name"] == name.as_str();
        match result {
            Ok(record) => {
                assert_eq!(record["name"], name.as_str());
                assert!(applied);
                updated_ok += 1;
            }
            Err(e) if e.status() == Some(http::StatusCode::SERVICE_UNAVAILABLE) => {
                assert!(!applied, "a 503 ran nothing");
            }
            Err(e) => assert_eq!(e.sent(), Sent::Maybe, "{e}"),
        }
        changed += u64::from(applied);
    }
    let after = emulator.fault_counts().unwrap();
    assert_eq!(after.selected - before.selected, updates as u64);
    assert_eq!(
        changed,
        updated_ok + (after.dropped_midway - before.dropped_midway)
    );
    println!(
        "faults/writes: {creates} creates and {updates} updates, each sent exactly once; \
         {} answered 503, {} dropped before, {} dropped midway (applied, unanswered)",
        after.unavailable, after.dropped_before, after.dropped_midway
    );
}

#[tokio::test]
async fn retry_after_is_honoured() {
    // Every read answered 503 with Retry-After: 7: the SDK waits 7 s between its attempts.
    let emulator = faulty(Faults::new().unavailable(1.0, 7).only_methods(["GET"])).await;
    let timer = Recorded::default();
    let c = builder(&emulator).sleep(timer.clone()).build().unwrap();
    let err = c.records("shop", "products").retrieve(1).await.unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::SERVICE_UNAVAILABLE));
    assert_eq!(err.api().unwrap().retry_after, Some(7));
    assert_eq!(err.body().and_then(|b| b.error_code()), Some("unavailable"));
    assert_eq!(timer.waits(), [Duration::from_secs(7); 2]);
    assert_eq!(emulator.fault_counts().unwrap().unavailable, 3);

    // Half the reads answered 503 with Retry-After: 3: every wait is exactly 3 s (no backoff of
    // its own), one per 503, and every read gets through.
    let emulator = faulty(Faults::new().unavailable(0.5, 3).seed(3)).await;
    let timer = Recorded::default();
    let c = builder(&emulator)
        .sleep(timer.clone())
        .retry(patient())
        .build()
        .unwrap();
    for id in 1..=30 {
        c.records("shop", "products").retrieve(id).await.unwrap();
    }
    let counts = emulator.fault_counts().unwrap();
    let waits = timer.waits();
    assert!(counts.unavailable > 5);
    assert_eq!(waits.len() as u64, counts.unavailable);
    assert!(
        waits.iter().all(|&w| w == Duration::from_secs(3)),
        "{waits:?}"
    );

    // A Retry-After longer than the policy's limit is not waited for: the 503 comes back at once.
    let emulator = faulty(Faults::new().unavailable(1.0, 3600)).await;
    let timer = Recorded::default();
    let c = builder(&emulator).sleep(timer.clone()).build().unwrap();
    let err = c.records("shop", "products").retrieve(1).await.unwrap_err();
    assert_eq!(err.api().unwrap().retry_after, Some(3600));
    assert!(timer.waits().is_empty());
    assert_eq!(emulator.fault_counts().unwrap().selected, 1);
}

#[tokio::test]
async fn an_attempt_timeout_ends_a_hung_request_and_the_pool_stays_usable() {
    let emulator = faulty(
        Faults::new()
            .latency(Duration::from_secs(60))
            .only_paths_containing("/models/products"),
    )
    .await;
    let c = builder(&emulator)
        .attempt_timeout(Duration::from_millis(250))
        .retry(
            RetryPolicy::default()
                .max_attempts(3)
                .initial_backoff(Duration::from_millis(5)),
        )
        .build()
        .unwrap();

    let started = Instant::now();
    let err = c.records("shop", "products").retrieve(1).await.unwrap_err();
    let Error::Transport(transport) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(transport.kind(), TransportErrorKind::Timeout, "{err}");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(
        emulator.fault_counts().unwrap().selected,
        3,
        "a read is retried"
    );

    let err = c
        .records("shop", "products")
        .create(&json!({"sku": "HUNG-1", "name": "hung", "price": 1.0}))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::Transport(t) if t.is_timeout()),
        "{err:?}"
    );
    assert_eq!(err.sent(), Sent::Maybe);
    assert_eq!(
        emulator.fault_counts().unwrap().selected,
        4,
        "a create is not retried"
    );

    // The timed-out exchanges left nothing behind in the pool: the next answer is the right one.
    let customer = c.records("shop", "customers").retrieve(7).await.unwrap();
    assert_eq!(customer["id"], 7);
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[tokio::test]
async fn the_overall_timeout_ends_a_hung_request_across_attempts() {
    let emulator = faulty(Faults::new().latency(Duration::from_secs(60))).await;

    // Attempts of 150 ms, retried, within an overall 600 ms.
    let c = builder(&emulator)
        .timeout(Duration::from_millis(600))
        .attempt_timeout(Duration::from_millis(150))
        .retry(
            RetryPolicy::default()
                .max_attempts(1000)
                .initial_backoff(Duration::from_millis(5))
                .max_backoff(Duration::from_millis(5)),
        )
        .build()
        .unwrap();
    let started = Instant::now();
    let err = c.records("shop", "products").retrieve(1).await.unwrap_err();
    assert!(
        matches!(err, Error::Timeout(d) if d == Duration::from_millis(600)),
        "{err:?}"
    );
    assert!(err.is_retryable() && err.sent() == Sent::Maybe);
    assert!(started.elapsed() < Duration::from_secs(20));
    let attempts = emulator.fault_counts().unwrap().selected;
    assert!(attempts >= 2, "several attempts fit: {attempts}");

    // The default attempt timeout (30 s) alone would wait; the overall one does not.
    let c = builder(&emulator)
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = c
        .records("shop", "products")
        .create(&json!({"sku": "HUNG-2", "name": "hung", "price": 1.0}))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(emulator.fault_counts().unwrap().selected, attempts + 1);
}

#[tokio::test]
async fn a_stale_pooled_connection_closed_by_the_server_is_survived() {
    // The server closes keep-alive connections idle for 150 ms; the client's pool keeps them
    // for 20 s. Every round starts on a connection the server has closed: a create, which is
    // never retried, only succeeds if the pool does not hand out that dead connection.
    let emulator = faulty(Faults::new().idle_close(Duration::from_millis(150))).await;
    let c = builder(&emulator).build().unwrap();
    let rounds = 6;
    for round in 0..rounds {
        let record = c
            .records("shop", "products")
            .create(&json!({"sku": format!("STALE-{round}"), "name": "stale", "price": 2.0}))
            .await
            .unwrap();
        let id = record["id"].as_i64().unwrap();
        let again = c.records("shop", "products").retrieve(id).await.unwrap();
        assert_eq!(again["sku"], format!("STALE-{round}").as_str());
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let counts = emulator.fault_counts().unwrap();
    assert_eq!(counts.requests, 2 * rounds);
    assert!(
        counts.connections >= rounds,
        "the server closed the idle connections: {counts:?}"
    );
    println!(
        "faults/stale: {rounds} rounds after an idle close, {} connections, no error",
        counts.connections
    );
}

#[tokio::test]
async fn at_the_edge_of_an_idle_close_reads_are_retried_and_creates_fail_safely() {
    // The client reuses its pooled connection just as the server closes it for idleness: the
    // request goes out on a connection that is already closing. A read is retried and succeeds;
    // a create fails with `Sent::Maybe` and is not retried, so it is never stored twice.
    let idle = Duration::from_millis(60);
    let emulator = faulty(Faults::new().idle_close(idle).only_methods(["POST"])).await;
    let c = builder(&emulator).retry(patient()).build().unwrap();
    let products = c.records("shop", "products");
    let (mut created, mut failed) = (0_u64, 0_u64);
    for i in 0..40_u64 {
        // Around the server's idle limit, a little before or after.
        tokio::time::sleep(idle - Duration::from_millis(3) + Duration::from_micros(i % 8 * 750))
            .await;
        match products
            .create(&json!({"sku": format!("EDGE-{i:02}"), "name": "edge", "price": 3.0}))
            .await
        {
            Ok(_) => created += 1,
            Err(e) => {
                assert_eq!(e.sent(), Sent::Maybe, "{e}");
                assert!(matches!(e, Error::Transport(_)), "{e:?}");
                failed += 1;
            }
        }
        tokio::time::sleep(idle - Duration::from_millis(3) + Duration::from_micros(i % 8 * 750))
            .await;
        let again = products.retrieve(1 + (i % 50) as i64).await.unwrap();
        assert_eq!(again["sku"], sku(1 + (i % 50) as i64).as_str());
    }
    let stored = with_prefix(&c, "EDGE-").await;
    let mut skus: Vec<_> = stored.iter().map(|r| r["sku"].to_string()).collect();
    skus.sort();
    skus.dedup();
    assert_eq!(skus.len(), stored.len(), "no create stored twice");
    // Every create that reached the server was answered: those that failed never arrived.
    let counts = emulator.fault_counts().unwrap();
    assert_eq!(stored.len() as u64, created);
    assert_eq!(counts.selected, created);
    println!(
        "faults/edge: 40 creates racing an idle close: {created} stored, {failed} failed safely \
         (never reached the server, not retried); 40 reads all succeeded"
    );

    // The cure: a pool that lets connections go before the server does. Every create then
    // starts on a fresh connection, and none fails.
    let c = builder(&emulator)
        .pool_idle_timeout(idle / 2)
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    for i in 0..20_u64 {
        tokio::time::sleep(idle - Duration::from_millis(3) + Duration::from_micros(i % 8 * 750))
            .await;
        c.records("shop", "products")
            .create(&json!({"sku": format!("CURED-{i:02}"), "name": "edge", "price": 3.0}))
            .await
            .unwrap();
    }
    assert_eq!(with_prefix(&c, "CURED-").await.len(), 20);
}

#[tokio::test]
async fn over_https_and_http2_reads_are_retried_too() {
    // With TLS, client and emulator speak HTTP/2 (ALPN): a dropped request is a reset stream,
    // not a closed connection, and the other streams of the connection carry on.
    let emulator = Emulator::start(
        EmulatorConfig::default().tls(true).faults(
            Faults::new()
                .unavailable(0.1, 0)
                .drop_before(0.1)
                .drop_midway(0.1)
                .seed(99),
        ),
    )
    .await
    .unwrap();
    assert!(emulator.api_base_url().starts_with("https://"));
    let c = builder(&emulator).retry(patient()).build().unwrap();
    let reads = (1..=60_i64).map(|id| {
        let c = c.clone();
        async move {
            let record = c.records("shop", "products").retrieve(1 + id % 50).await?;
            assert_eq!(record["sku"], sku(1 + id % 50).as_str());
            Ok::<_, Error>(())
        }
    });
    // Concurrent, so that they share the HTTP/2 connection.
    futures_util::future::try_join_all(reads).await.unwrap();
    let counts = emulator.fault_counts().unwrap();
    assert!(counts.dropped_before + counts.dropped_midway + counts.unavailable > 0);
    assert_eq!(
        counts.selected,
        60 + counts.unavailable + counts.dropped_before + counts.dropped_midway
    );
}
