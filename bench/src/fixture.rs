//! 12. The emulator as a test fixture (docs/emulator.md, "Resets and snapshots"): what a clean
//!     state costs between tests, with one in-memory SQLite resource of 10k generated rows.
//!
//! - `Emulator::start` to its first answered request (a page of the 10k rows), median and p95;
//!   the baseline is wiremock's `MockServer::start` with one mock mounted and its first answer,
//!   on the same runtime: the HTTP fixture a Rust test would otherwise start.
//! - A reset after a test's writes (5 creates), and a snapshot's restore after the same writes,
//!   median and p95, against the start: what a suite saves by resetting one emulator instead of
//!   starting one per test.
//! - A suite of small tests, each with a clean state (a create, a retrieve and a filtered page
//!   after it), end to end: one emulator reset before each test against a new emulator per test.
//! - SQLite's restore (its page copy) against the servers' flow run on SQLite
//!   (`sqlite_restore.rs`): why SQLite keeps a way of its own.
//! - The same reset of a resource on PostgreSQL and on MariaDB (throwaway servers, the 10k rows
//!   opted in with `reset`), against that emulator's start (its reflection and the copy of the
//!   rows it keeps for the resets).

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Uri};
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};
use tokio::runtime::Runtime;

use crate::emulator::LoadClient;
use crate::harness::{API_KEY, PROJECT, Settings, seed_sql, server_runtime};
use crate::report::{Row, Target, median, seconds};

const ROWS: usize = 10_000;
const RESOURCE: &str = "shop";
const TOKEN: &str = "tok_shop_0123456789";

/// What the small tests write: the generated `items` have a `DATE` column, which the data
/// engine cannot write on SQLite (its ORM's `Date` type takes no text), as the emulator answers.
const NOTES: &str =
    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, status TEXT NOT NULL);";

fn config() -> EmulatorConfig {
    let project = ProjectConfig::new(PROJECT).api_key(API_KEY).resource(
        ResourceConfig::new(RESOURCE, TOKEN).seed_sql(format!("{}\n{NOTES}", seed_sql(ROWS))),
    );
    EmulatorConfig::default().projects(ProjectsConfig::new(vec![project]))
}

fn model(emulator: &Emulator, model: &str) -> String {
    format!(
        "{}/projects/{PROJECT}/prod/{RESOURCE}/models/{model}",
        emulator.api_base_url()
    )
}

/// The sample at the 95th percentile.
fn p95(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[((sorted.len() as f64 * 0.95).ceil() as usize).clamp(1, sorted.len()) - 1]
}

fn both(samples: &[f64]) -> String {
    format!(
        "{} (p95 {})",
        seconds(median(samples)),
        seconds(p95(samples))
    )
}

/// One small test against `emulator`: a create, its retrieve, a filtered page of the 10k rows.
async fn small_test(client: &LoadClient, emulator: &Emulator, n: usize) {
    let base = model(emulator, "notes");
    let body = format!(r#"{{"body": "Test {n}", "status": "new"}}"#);
    let created = client
        .send(Request::post(base.as_str()), Bytes::from(body))
        .await;
    let id = serde_json::from_slice::<serde_json::Value>(&created).expect("JSON")["id"]
        .as_i64()
        .expect("an id");
    client
        .get(format!("{base}/{id}").parse::<Uri>().expect("a URI"))
        .await;
    let items = model(emulator, "items");
    client
        .get(
            format!("{items}?status=new&_per_page=5")
                .parse::<Uri>()
                .expect("a URI"),
        )
        .await;
}

async fn start_and_first_page(client: &LoadClient) -> (Emulator, Duration) {
    let started = Instant::now();
    let emulator = Emulator::start(config())
        .await
        .expect("the emulator starts");
    let first = format!("{}?_per_page=25", model(&emulator, "items"));
    client.get(first.parse().expect("a URI")).await;
    (emulator, started.elapsed())
}

/// wiremock's `MockServer::start`, one mocked answer mounted, and its first answer: the HTTP
/// fixture a Rust test would otherwise start.
async fn wiremock_start(client: &LoadClient) -> Duration {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};

    let started = Instant::now();
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_string("[]"))
        .mount(&server)
        .await;
    // `uri()` is `http://127.0.0.1:PORT` of the server just bound: always a valid URI.
    client
        .get(format!("{}/", server.uri()).parse().expect("a URI"))
        .await;
    started.elapsed()
}

/// `notes` in a database server's dialect (a generated key).
fn notes_on(server: &str) -> &'static str {
    if server == "PostgreSQL" {
        "CREATE TABLE notes (id SERIAL PRIMARY KEY, body TEXT NOT NULL, status TEXT NOT NULL);"
    } else {
        "CREATE TABLE notes (id INT AUTO_INCREMENT PRIMARY KEY, body TEXT NOT NULL, status TEXT NOT NULL);"
    }
}

/// A reset after a test's writes of a resource on a database server at `url` (seeded), against
/// the emulator's start with it.
fn server_reset(rt: &Runtime, client: &LoadClient, server: &str, url: &str, runs: usize) -> Row {
    let project = ProjectConfig::new(PROJECT).api_key(API_KEY).resource(
        ResourceConfig::new(RESOURCE, TOKEN)
            .database(url)
            .reset(true),
    );
    let config = EmulatorConfig::default().projects(ProjectsConfig::new(vec![project]));
    let (start, resets) = rt.block_on(async {
        let started = Instant::now();
        let emulator = Emulator::start(config).await.expect("the emulator starts");
        let start = started.elapsed().as_secs_f64();
        let mut resets = Vec::new();
        for i in 0..=runs {
            for n in 0..5 {
                small_test(client, &emulator, n).await;
            }
            let started = Instant::now();
            emulator.reset().await.expect("a reset");
            if i > 0 {
                resets.push(started.elapsed().as_secs_f64());
            }
        }
        emulator.shutdown().await;
        (start, resets)
    });
    Row {
        benchmark: format!(
            "12. reset after 5 writes (10k rows) on {server} vs its Emulator::start"
        ),
        figure: both(&resets),
        baseline: seconds(start),
        ratio: median(&resets) / start,
        target: Target::None,
    }
}

pub fn run(settings: &Settings) -> Vec<Row> {
    // The emulator and the tests share one runtime, as in a `#[tokio::test]` suite with a
    // multi-thread runtime on two cores.
    let rt: Runtime = server_runtime("fixture", 2);
    let starts = if settings.runs >= 9 { 200 } else { 40 };
    let suite = if settings.runs >= 9 { 1000 } else { 100 };
    let client = LoadClient::new(TOKEN);
    eprintln!("12. the emulator as a test fixture ({starts} starts, a suite of {suite} tests)");

    let (start_samples, peer_samples) = rt.block_on(async {
        let mut start = Vec::new();
        let mut peer = Vec::new();
        for i in 0..=starts {
            let (emulator, took) = start_and_first_page(&client).await;
            emulator.shutdown().await;
            let peer_took = wiremock_start(&client).await;
            // The first of each is a warm-up.
            if i > 0 {
                start.push(took.as_secs_f64());
                peer.push(peer_took.as_secs_f64());
            }
        }
        (start, peer)
    });

    let (reset_samples, restore_samples, shared_suite) = rt.block_on(async {
        let emulator = Emulator::start(config())
            .await
            .expect("the emulator starts");
        emulator.snapshot("seeded").await.expect("a snapshot");
        let mut reset = Vec::new();
        let mut restore = Vec::new();
        for i in 0..=starts {
            for n in 0..5 {
                small_test(&client, &emulator, n).await;
            }
            let started = Instant::now();
            emulator.reset().await.expect("a reset");
            let took = started.elapsed().as_secs_f64();
            for n in 0..5 {
                small_test(&client, &emulator, n).await;
            }
            let started = Instant::now();
            emulator.restore("seeded").await.expect("a restore");
            let restored = started.elapsed().as_secs_f64();
            if i > 0 {
                reset.push(took);
                restore.push(restored);
            }
        }
        let started = Instant::now();
        for n in 0..suite {
            emulator.reset().await.expect("a reset");
            small_test(&client, &emulator, n).await;
        }
        let shared = started.elapsed().as_secs_f64();
        emulator.shutdown().await;
        (reset, restore, shared)
    });

    let fresh_suite = rt.block_on(async {
        let started = Instant::now();
        for n in 0..suite {
            let emulator = Emulator::start(config())
                .await
                .expect("the emulator starts");
            small_test(&client, &emulator, n).await;
            emulator.shutdown().await;
        }
        started.elapsed().as_secs_f64()
    });

    let server_runs = if settings.runs >= 9 { 50 } else { 10 };
    let mut servers = Vec::new();
    match pg_cluster::Cluster::start() {
        Ok(cluster) => {
            let made = cluster.create_database("fixture").and_then(|()| {
                cluster.psql(
                    "fixture",
                    &format!(
                        "{}\n{}",
                        crate::pg_scale::seed_sql(ROWS),
                        notes_on("PostgreSQL")
                    ),
                )
            });
            match made {
                Ok(_) => servers.push(server_reset(
                    &rt,
                    &client,
                    "PostgreSQL",
                    &cluster.url("fixture"),
                    server_runs,
                )),
                Err(e) => eprintln!("   PostgreSQL's reset not measured: {e}"),
            }
        }
        Err(e) => eprintln!("   PostgreSQL's reset not measured: {e}"),
    }
    match maria_server::Server::start() {
        Ok(server) => {
            let made = server.database("svc_fixture").and_then(|db| {
                db.sql(&format!(
                    "{}\n{}",
                    crate::my_scale::seed_sql(ROWS),
                    notes_on("MariaDB")
                ))?;
                Ok(db)
            });
            match made {
                Ok(db) => servers.push(server_reset(
                    &rt,
                    &client,
                    "MariaDB",
                    &db.url(),
                    server_runs,
                )),
                Err(e) => eprintln!("   MariaDB's reset not measured: {e}"),
            }
        }
        Err(e) => eprintln!("   MariaDB's reset not measured: {e}"),
    }

    let start = median(&start_samples);
    let mut rows = vec![
        Row {
            benchmark:
                "12. Emulator::start, 10k-row SQLite seed, to the first page vs wiremock's start"
                    .to_owned(),
            figure: both(&start_samples),
            baseline: both(&peer_samples),
            ratio: start / median(&peer_samples),
            target: Target::None,
        },
        Row {
            benchmark: "12. reset of a project after 5 writes (10k rows) vs Emulator::start"
                .to_owned(),
            figure: both(&reset_samples),
            baseline: seconds(start),
            ratio: median(&reset_samples) / start,
            target: Target::AtMost(1.0),
        },
        Row {
            benchmark: "12. snapshot restore after 5 writes (10k rows) vs Emulator::start"
                .to_owned(),
            figure: both(&restore_samples),
            baseline: seconds(start),
            ratio: median(&restore_samples) / start,
            target: Target::AtMost(1.0),
        },
        Row {
            benchmark: format!(
                "12. a suite of {suite} small tests: reset before each vs a new emulator each"
            ),
            figure: seconds(shared_suite),
            baseline: seconds(fresh_suite),
            ratio: shared_suite / fresh_suite,
            target: Target::AtMost(1.0),
        },
    ];
    rows.extend(crate::sqlite_restore::row(ROWS, starts));
    rows.extend(servers);
    rows
}
