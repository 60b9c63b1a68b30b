//! Load: many concurrent clients doing mixed operations against one emulator (a data file in
//! WAL mode), with every answer checked, exact final row counts, and memory that stays flat.
//!
//! Each client owns its own records (column `owner`), so it knows at every moment what the
//! database must say about them: a retrieve returns the quantity it last wrote, a filtered list
//! and an aggregate count what it created minus what it deleted, a sum adds its quantities. The
//! only expected errors are `404`s for reads of *other* clients' records, which they may have
//! deleted concurrently.
//!
//! Size: `SVC_LOAD_CLIENTS` clients (default 64) x `SVC_LOAD_OPS` operations each (default 100,
//! which runs in a few seconds in a debug build). `cargo xtask load` runs the full 64 x 2000
//! (128 000 requests) in release mode. This is its own test binary, so that the memory figures
//! are this test's alone.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svc_api::model::records::{AggregateFunc, AggregateRequest, GroupRequest, GroupRow, ListQuery};
use svc_api::{Client, RetryPolicy};
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};
use svc_tests::TempDir;
use tokio::sync::Barrier;

const RESOURCE: &str = "load";
const MODEL: &str = "items";
const SEED: &str = "
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    owner INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    label TEXT NOT NULL,
    qty INTEGER NOT NULL,
    UNIQUE (owner, seq)
);
CREATE INDEX items_owner ON items (owner);
";

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// `VmRSS` and `VmHWM` (peak) of this process in KiB, from `/proc/self/status` (Linux).
fn memory_kib() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// A small xorshift generator: each client's sequence of operations is fixed by its number.
struct Dice(u64);

impl Dice {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn below(&mut self, n: u64) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x % n
    }
}

/// What one client did and saw.
#[derive(Debug, Default)]
struct Tally {
    requests: u64,
    creates: u64,
    deletes: u64,
    /// Reads of another client's record answered `404` (it was deleted): expected.
    expected_404: u64,
    /// Its records at the end: (id, qty).
    mine: Vec<(i64, i64)>,
}

/// One client: `ops` operations (at least 1), pausing before operation `ops / 2` for the memory
/// sample.
async fn client_run(
    c: Client,
    owner: i64,
    ops: usize,
    half: Arc<(Barrier, Barrier)>,
    ids_seen: Arc<std::sync::Mutex<Vec<i64>>>,
) -> Tally {
    let items = c.records(RESOURCE, MODEL);
    let mut dice = Dice::new(owner as u64 + 1);
    let mut t = Tally::default();
    let mut seq = 0_i64;
    for op in 0..ops {
        if op == ops / 2 {
            half.0.wait().await;
            half.1.wait().await;
        }
        let roll = dice.below(100);
        let pick = |dice: &mut Dice, n: usize| dice.below(n as u64) as usize;
        match roll {
            // Create (also whenever there is nothing of ours to work on).
            _ if roll < 25 || t.mine.is_empty() => {
                let qty = dice.below(1000) as i64;
                let record = items
                    .create(&json!({"owner": owner, "seq": seq, "label": format!("item {owner}/{seq}"), "qty": qty}))
                    .await
                    .unwrap_or_else(|e| panic!("client {owner}: create: {e}"));
                assert_eq!(record["qty"], qty);
                let id = record["id"].as_i64().unwrap();
                t.mine.push((id, qty));
                ids_seen.lock().unwrap().push(id);
                seq += 1;
                t.creates += 1;
            }
            // Retrieve one of ours: the quantity we last wrote.
            0..45 => {
                let (id, qty) = t.mine[pick(&mut dice, t.mine.len())];
                let record = items
                    .retrieve(id)
                    .await
                    .unwrap_or_else(|e| panic!("client {owner}: retrieve {id}: {e}"));
                assert_eq!(
                    (record["owner"].as_i64(), record["qty"].as_i64()),
                    (Some(owner), Some(qty))
                );
            }
            // Update one of ours.
            45..60 => {
                let i = pick(&mut dice, t.mine.len());
                let qty = dice.below(1000) as i64;
                let record = items
                    .update(t.mine[i].0, &json!({"qty": qty}))
                    .await
                    .unwrap_or_else(|e| panic!("client {owner}: update: {e}"));
                assert_eq!(record["qty"], qty);
                t.mine[i].1 = qty;
            }
            // Delete one of ours.
            60..70 => {
                let i = pick(&mut dice, t.mine.len());
                let (id, _) = t.mine.swap_remove(i);
                items
                    .delete(id)
                    .await
                    .unwrap_or_else(|e| panic!("client {owner}: delete {id}: {e}"));
                t.deletes += 1;
            }
            // List ours, one page: the count is exact.
            70..82 => {
                let page = items
                    .list(&ListQuery::new().eq("owner", owner).per_page(10))
                    .await
                    .unwrap_or_else(|e| panic!("client {owner}: list: {e}"));
                assert_eq!(page.count, t.mine.len() as u64);
                assert_eq!(page.results.len(), t.mine.len().min(10));
                assert!(page.results.iter().all(|r| r["owner"] == owner));
            }
            // Aggregate ours: count, or sum of quantities.
            82..90 => {
                let filter = ListQuery::new().eq("owner", owner);
                if roll.is_multiple_of(2) {
                    let n: u64 = items
                        .aggregate(&AggregateRequest::new(AggregateFunc::Count), &filter)
                        .await
                        .unwrap_or_else(|e| panic!("client {owner}: count: {e}"));
                    assert_eq!(n, t.mine.len() as u64);
                } else {
                    let sum: Value = items
                        .aggregate(
                            &AggregateRequest::new(AggregateFunc::Sum).column("qty"),
                            &filter,
                        )
                        .await
                        .unwrap_or_else(|e| panic!("client {owner}: sum: {e}"));
                    let want: i64 = t.mine.iter().map(|(_, q)| q).sum();
                    assert_eq!(sum.as_f64().unwrap_or(0.0), want as f64);
                }
            }
            // Read a record some client created, maybe deleted since: 404 is expected then.
            _ => {
                let id = {
                    let seen = ids_seen.lock().unwrap();
                    seen[pick(&mut dice, seen.len())]
                };
                match items.retrieve(id).await {
                    Ok(record) => assert_eq!(record["id"], id),
                    Err(e) if e.is_not_found() => t.expected_404 += 1,
                    Err(e) => panic!("client {owner}: retrieve another's {id}: {e}"),
                }
            }
        }
        t.requests += 1;
    }
    t
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_clients_doing_mixed_operations() {
    let clients = env_or("SVC_LOAD_CLIENTS", 64).max(1);
    let ops = env_or("SVC_LOAD_OPS", 100).max(1);

    let dir = TempDir::new("load");
    let token = "svc_tok_load";
    let config = ProjectsConfig::new(vec![
        ProjectConfig::new("load")
            .api_key("svc_key_load")
            .resource(ResourceConfig::new(RESOURCE, token).seed_sql(SEED)),
    ]);
    let emulator = Emulator::start(
        EmulatorConfig::default()
            .projects(config)
            .data_path(dir.join("meta.sqlite")),
    )
    .await
    .expect("the emulator starts");
    // A client each (its own connection pool). No retries: nothing here should need one, and
    // a retry would hide an error.
    let new_client = || {
        svc_tests::builder(&emulator)
            .retry(RetryPolicy::none())
            .timeout(Duration::from_secs(60))
            .build()
            .expect("the client builds")
    };

    let (rss_start, _) = memory_kib().unwrap_or_default();
    let half = Arc::new((Barrier::new(clients + 1), Barrier::new(clients + 1)));
    let ids_seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let started = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|owner| {
            tokio::spawn(client_run(
                new_client(),
                owner as i64,
                ops,
                Arc::clone(&half),
                Arc::clone(&ids_seen),
            ))
        })
        .collect();
    half.0.wait().await;
    let (rss_half, _) = memory_kib().unwrap_or_default();
    half.1.wait().await;
    let mut tallies = Vec::new();
    for task in tasks {
        tallies.push(task.await.expect("a client panicked"));
    }
    let elapsed = started.elapsed();
    let (rss_end, peak) = memory_kib().unwrap_or_default();

    // Exact final counts: in all, and per client (one `group` by owner).
    let c = new_client();
    let items = c.records(RESOURCE, MODEL);
    let expected: u64 = tallies.iter().map(|t| t.mine.len() as u64).sum();
    let total: u64 = items
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Count),
            &ListQuery::new(),
        )
        .await
        .unwrap();
    assert_eq!(total, expected);
    let created: u64 = tallies.iter().map(|t| t.creates).sum();
    let deleted: u64 = tallies.iter().map(|t| t.deletes).sum();
    assert_eq!(total, created - deleted);
    let groups: Vec<GroupRow<i64, u64>> = items
        .group(
            &GroupRequest::new("owner", AggregateFunc::Count),
            &ListQuery::new(),
        )
        .await
        .unwrap();
    for (owner, tally) in tallies.iter().enumerate() {
        let found = groups
            .iter()
            .find(|g| g.group == owner as i64)
            .map_or(0, |g| g.y_func);
        assert_eq!(found, tally.mine.len() as u64, "client {owner}");
    }

    let requests: u64 = tallies.iter().map(|t| t.requests).sum();
    let expected_404: u64 = tallies.iter().map(|t| t.expected_404).sum();
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "load: {clients} clients x {ops} operations = {requests} requests in {:.1} s \
         ({:.0}/s); {created} creates, {deleted} deletes, {total} rows at the end; \
         {expected_404} expected 404s; RSS {:.1} MiB at start, {:.1} MiB at half time, \
         {:.1} MiB at the end, peak {:.1} MiB",
        elapsed.as_secs_f64(),
        requests as f64 / elapsed.as_secs_f64(),
        mib(rss_start),
        mib(rss_half),
        mib(rss_end),
        mib(peak),
    );
    assert_eq!(requests, (clients * ops) as u64);
    // Memory is stable: the second half (as many requests as the first) adds little. The rows
    // it adds and SQLite's page cache are a few MiB; a leak per request would be far more.
    if rss_half > 0 {
        assert!(
            rss_end <= rss_half + 64 * 1024,
            "RSS grew from {:.1} MiB at half time to {:.1} MiB",
            mib(rss_half),
            mib(rss_end)
        );
    }
    emulator.shutdown().await;
}
