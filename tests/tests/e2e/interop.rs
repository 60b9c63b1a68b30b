//! Values of chrono's, time's, jiff's and rust_decimal's types survive a round trip through the
//! emulator on every database it serves: written through one library's `serde` helper, read
//! back through each library's, and found again by each library's filter value. The values come
//! from a small deterministic generator (xorshift), so a failure names a seed that reproduces it.
//!
//! The SQLite test runs in `cargo test`; the PostgreSQL one needs PostgreSQL's programs and the
//! MariaDB one a server, so they are `#[ignore]`d there and run by `cargo xtask postgres` and
//! `cargo xtask mysql` (steps of `.ci/run`), which fail when no server can be had.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use svc_api::Client;
use svc_api::model::Timestamp;
use svc_api::model::records::{ListQuery, Lookup};
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};

/// Records each test writes: generated values, and the edges below.
const GENERATED: usize = 60;
const SEED: u64 = 0x5eed_2026_1127;

#[derive(Debug, Serialize, Deserialize)]
struct WithChrono {
    id: i64,
    #[serde(with = "svc_api::model::interop::chrono::date_time")]
    at: chrono::DateTime<chrono::Utc>,
    #[serde(with = "svc_api::model::interop::rust_decimal::decimal")]
    amount: rust_decimal::Decimal,
}

#[derive(Debug, Serialize, Deserialize)]
struct WithTime {
    id: i64,
    #[serde(with = "svc_api::model::interop::time::date_time")]
    at: time::OffsetDateTime,
    #[serde(with = "svc_api::model::interop::rust_decimal::option_decimal")]
    amount: Option<rust_decimal::Decimal>,
}

#[derive(Debug, Serialize, Deserialize)]
struct WithJiff {
    id: i64,
    #[serde(with = "svc_api::model::interop::jiff::option_date_time")]
    at: Option<jiff::Timestamp>,
    /// svc-model's own decimal, which keeps the text.
    amount: svc_api::model::Decimal,
}

/// The next value of a xorshift generator.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Instants the three databases hold (years 1000 to 9999: MySQL's `DATETIME` range, within
/// jiff's), with nanoseconds the service drops, and amounts of at most 14 significant digits
/// with 4 decimals (a `NUMERIC(15, 4)`; the engine writes numbers through Python's `float`,
/// which keeps 15).
fn values() -> Vec<(Timestamp, rust_decimal::Decimal)> {
    let ts = |text: &str| Timestamp::parse_rfc3339(text).unwrap();
    let mut out = vec![
        (ts("1000-01-01T00:00:00Z"), rust_decimal::Decimal::new(0, 4)),
        (
            ts("9999-12-30T21:59:59.999999999Z"),
            rust_decimal::Decimal::new(-99_999_999_999_999, 4),
        ),
        (
            ts("2024-03-05T10:11:12.5Z"),
            rust_decimal::Decimal::new(5, 1),
        ),
        (
            ts("1970-01-01T00:00:00.000001Z"),
            rust_decimal::Decimal::new(1, 4),
        ),
        (
            ts("2024-02-29T23:59:59.999999Z"),
            rust_decimal::Decimal::new(-1, 4),
        ),
    ];
    let first = Timestamp::parse_rfc3339("1000-01-01T00:00:00Z")
        .unwrap()
        .unix_seconds();
    let last = Timestamp::parse_rfc3339("9999-12-30T00:00:00Z")
        .unwrap()
        .unix_seconds();
    let span = u64::try_from(last - first).unwrap();
    let mut state = SEED;
    while out.len() < GENERATED {
        let secs = first + i64::try_from(next(&mut state) % span).unwrap();
        // Whole seconds, milliseconds, microseconds or nanoseconds, in turn.
        let nanos = match out.len() % 4 {
            0 => 0,
            1 => (next(&mut state) % 1000) as u32 * 1_000_000,
            2 => (next(&mut state) % 1_000_000) as u32 * 1000,
            _ => (next(&mut state) % 1_000_000_000) as u32,
        };
        let mantissa = (next(&mut state) % 100_000_000_000_000) as i64;
        let sign = if next(&mut state).is_multiple_of(2) {
            1
        } else {
            -1
        };
        out.push((
            Timestamp::from_unix(secs, nanos).unwrap(),
            rust_decimal::Decimal::new(sign * mantissa, 4),
        ));
    }
    out
}

/// The instant as the service holds it: to the microsecond.
fn micros(t: Timestamp) -> Timestamp {
    Timestamp::from_unix(t.unix_seconds(), t.subsec_nanos() / 1000 * 1000).unwrap()
}

/// Writes every value through one of the libraries in turn, then reads each record back through
/// all three and finds it by each library's filter values.
async fn round_trip(emulator: &Emulator, label: &str) {
    let client = Client::builder()
        .project("interop")
        .api_base_url(emulator.api_base_url())
        .app_base_url(emulator.app_base_url())
        .api_key("key_interop")
        .resource_token("db", "tok_db")
        .build()
        .unwrap();
    let values = values();
    for (i, (at, amount)) in values.iter().enumerate() {
        let id = i64::try_from(i).unwrap() + 1;
        let moments = client.records("db", "moments");
        let created = match i % 3 {
            0 => {
                let record = WithChrono {
                    id,
                    at: (*at).into(),
                    amount: *amount,
                };
                let back: WithChrono = moments.clone().typed().create(&record).await.unwrap();
                back.id
            }
            1 => {
                let record = WithTime {
                    id,
                    at: (*at).into(),
                    amount: Some(*amount),
                };
                let back: WithTime = moments.clone().typed().create(&record).await.unwrap();
                back.id
            }
            _ => {
                let record = WithJiff {
                    id,
                    at: Some(jiff::Timestamp::try_from(*at).unwrap()),
                    amount: svc_api::model::Decimal::from(*amount),
                };
                let back: WithJiff = moments.clone().typed().create(&record).await.unwrap();
                back.id
            }
        };
        assert_eq!(created, id);
        let expected = micros(*at);
        let why = format!("{label}: record {id}, {at:?} and {amount} (seed {SEED:#x})");

        let c: WithChrono = moments.clone().typed().get(id).await.unwrap();
        assert_eq!(Timestamp::try_from(c.at).unwrap(), expected, "{why}");
        assert_eq!(c.amount, *amount, "{why}");
        let t: WithTime = moments.clone().typed().get(id).await.unwrap();
        assert_eq!(Timestamp::try_from(t.at).unwrap(), expected, "{why}");
        assert_eq!(t.amount, Some(*amount), "{why}");
        let j: WithJiff = moments.clone().typed().get(id).await.unwrap();
        assert_eq!(
            Timestamp::try_from(j.at.unwrap()).unwrap(),
            expected,
            "{why}"
        );
        assert_eq!(
            rust_decimal::Decimal::try_from(&j.amount).unwrap(),
            *amount,
            "{why}"
        );

        // Found by each library's value, exactly and as the bounds of a range.
        let found = |query: ListQuery| {
            let moments = moments.clone();
            async move {
                let page = moments.list(&query).await.unwrap();
                page.results
                    .iter()
                    .map(|r| r["id"].as_i64().unwrap())
                    .collect::<Vec<_>>()
            }
        };
        let by_chrono = ListQuery::new().eq("at", c.at).eq("amount", c.amount);
        assert_eq!(found(by_chrono).await, [id], "{why}: chrono, exact");
        let by_time = ListQuery::new()
            .filter("at", Lookup::Gte, t.at)
            .filter("at", Lookup::Lte, t.at)
            .filter("amount", Lookup::Gte, *amount)
            .filter("amount", Lookup::Lte, *amount);
        assert_eq!(found(by_time).await, [id], "{why}: time, range");
        let by_jiff = ListQuery::new()
            .eq("at", j.at.unwrap())
            .eq("amount", &j.amount);
        assert_eq!(found(by_jiff).await, [id], "{why}: jiff, exact");
        let by_own = ListQuery::new().eq("at", expected);
        assert_eq!(found(by_own).await, [id], "{why}: Timestamp, exact");
    }
    let all = client
        .records("db", "moments")
        .list(&ListQuery::new())
        .await
        .unwrap();
    assert_eq!(all.count, GENERATED as u64, "{label}");
}

fn emulator_config(resource: ResourceConfig) -> EmulatorConfig {
    EmulatorConfig::default().projects(ProjectsConfig::new(vec![
        ProjectConfig::new("interop")
            .api_key("key_interop")
            .resource(resource),
    ]))
}

#[tokio::test(flavor = "multi_thread")]
async fn values_survive_a_round_trip_on_sqlite() {
    let resource = ResourceConfig::new("db", "tok_db").seed_sql(
        "CREATE TABLE moments (id INTEGER PRIMARY KEY, at DATETIME NOT NULL, \
         amount NUMERIC(15, 4) NOT NULL);",
    );
    let emulator = Emulator::start(emulator_config(resource)).await.unwrap();
    round_trip(&emulator, "SQLite").await;
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs PostgreSQL's programs: run with --ignored (cargo xtask postgres does)"]
async fn values_survive_a_round_trip_on_postgres() {
    let cluster = pg_cluster::Cluster::shared().unwrap_or_else(|e| panic!("{e}"));
    for (column, label) in [
        ("timestamptz", "PostgreSQL timestamptz"),
        ("timestamp", "PostgreSQL timestamp"),
    ] {
        let name = format!(
            "sdk_interop_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        cluster
            .create_database(&name)
            .unwrap_or_else(|e| panic!("{e}"));
        cluster
            .psql(
                &name,
                &format!(
                    "CREATE TABLE moments (id integer PRIMARY KEY, at {column} NOT NULL, \
                     amount numeric(15, 4) NOT NULL);"
                ),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        let resource = ResourceConfig::new("db", "tok_db").database(cluster.url(&name));
        let emulator = Emulator::start(emulator_config(resource)).await.unwrap();
        round_trip(&emulator, label).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs MariaDB: run with --ignored (cargo xtask mysql does)"]
async fn values_survive_a_round_trip_on_mariadb() {
    let server = maria_server::Server::shared().unwrap_or_else(|e| panic!("{e}"));
    let database = server
        .database("sdk_interop")
        .unwrap_or_else(|e| panic!("{e}"));
    database
        .sql(
            "CREATE TABLE moments (id INT PRIMARY KEY, at DATETIME(6) NOT NULL, \
             amount DECIMAL(15, 4) NOT NULL);",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let resource = ResourceConfig::new("db", "tok_db").database(database.url());
    let emulator = Emulator::start(emulator_config(resource)).await.unwrap();
    round_trip(&emulator, "MariaDB DATETIME(6)").await;
}
