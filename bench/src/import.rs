//! 8. Import: records created by `create_many` (8 requests in flight) beside the same records
//!    created one after the other with `create` (the emulator's own one-by-one create rate),
//!    and `svc records import` of an NDJSON file beside one `svc records create` process per
//!    record (what a shell loop does). Records per second; the ratios are reported, with no
//!    target.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{Value, json};
use svc_api::transport::HyperTransport;
use svc_api::{Bulk, Written};

use crate::harness::{BenchEmulator, PROJECT, Settings, client_runtime};
use crate::report::{Row, Target, median_secs, per_second};

const RESOURCE: &str = "import";
/// Records per SDK run.
const SDK_ROWS: usize = 2000;
/// Records per `svc records import` run.
const CLI_ROWS: usize = 2000;
/// `svc records create` processes per run (each is a whole process: fewer are enough).
const LOOP_ROWS: usize = 50;

/// A new record; `tag` keeps the emails of different runs apart.
fn record(tag: &str, n: usize) -> Value {
    json!({
        "name": format!("Imported {n}"),
        "email": format!("{tag}-{n}@import.test"),
        "city": "Paris",
        "vip": n.is_multiple_of(7),
        "score": n % 101,
        "total": (n % 1000) as f64 / 10.0 + 1.0,
        "quantity": 1 + n % 9,
        "status": "new",
        "ordered_on": "2026-01-02",
        "created_at": "2026-01-02T03:04:05",
    })
}

pub fn run(settings: &Settings) -> Vec<Row> {
    eprintln!(
        "8. import: {SDK_ROWS} creates through create_many (8 in flight) beside one by one; svc records import beside svc records create per record"
    );
    // The items of the other benchmarks, with `ordered_on` as text: the data engine refuses a
    // value for a `DATE` column on writes (docs/contract.md 5.1), so those cannot be created.
    let seed = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, \
                city TEXT, vip BOOLEAN NOT NULL, score INTEGER, total REAL NOT NULL, \
                quantity INTEGER NOT NULL, status TEXT NOT NULL, ordered_on TEXT NOT NULL, \
                created_at DATETIME NOT NULL, note TEXT);";
    let emulator = BenchEmulator::with_project(
        svc_emulator::ProjectConfig::new(crate::harness::PROJECT)
            .api_key(crate::harness::API_KEY)
            .resource(
                svc_emulator::ResourceConfig::new(RESOURCE, "tok_import_0123456789").seed_sql(seed),
            ),
    );
    let client = emulator.client(HyperTransport::new());
    let rt = client_runtime();
    let records = client.records(RESOURCE, "items");
    let mut run_no = 0;
    let mut tag = || {
        run_no += 1;
        format!("r{run_no}")
    };
    let bulk = |tag: String| {
        let start = Instant::now();
        rt.block_on(async {
            let items = futures_util::stream::iter((0..SDK_ROWS).map(|n| record(&tag, n)));
            let mut outcomes = records.create_many(items, &Bulk::new());
            while let Some(o) = outcomes.next().await {
                assert!(
                    matches!(o.result, Ok(Written::Created(_))),
                    "{:?}",
                    o.result
                );
            }
        });
        start.elapsed()
    };
    let one_by_one = |tag: String| {
        let start = Instant::now();
        rt.block_on(async {
            for n in 0..SDK_ROWS {
                records.create(&record(&tag, n)).await.expect("created");
            }
        });
        start.elapsed()
    };
    bulk(tag());
    one_by_one(tag());
    let (mut bulk_times, mut single_times) = (Vec::new(), Vec::new());
    for _ in 0..settings.runs {
        bulk_times.push(bulk(tag()));
        single_times.push(one_by_one(tag()));
    }
    let rows_f = SDK_ROWS as f64;
    let (bulk_rate, single_rate) = (
        rows_f / median_secs(&bulk_times),
        rows_f / median_secs(&single_times),
    );
    eprintln!(
        "   create_many {}, one by one {}",
        per_second(bulk_rate, "records"),
        per_second(single_rate, "records")
    );
    let mut out = vec![Row {
        benchmark: format!("8. import: create_many beside create one by one, {SDK_ROWS} records"),
        figure: format!("create_many {}", per_second(bulk_rate, "records")),
        baseline: format!("one by one {}", per_second(single_rate, "records")),
        ratio: bulk_rate / single_rate,
        target: Target::None,
    }];
    out.extend(cli(settings, &emulator, &mut tag));
    out
}

/// `svc records import` beside `svc records create` run once per record.
fn cli(
    settings: &Settings,
    emulator: &BenchEmulator,
    tag: &mut impl FnMut() -> String,
) -> Vec<Row> {
    let Some(svc) = crate::export::svc_binary() else {
        eprintln!("   no svc binary beside the benchmark: CLI import skipped");
        return Vec::new();
    };
    let api = emulator.handle().api_base_url().to_owned();
    let token = emulator.token(RESOURCE);
    let svc_cmd = || {
        let mut cmd = Command::new(&svc);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("SVC_PROJECT", PROJECT)
            .env("SVC_API_BASE_URL", &api)
            .env("SVC_TOKEN", &token)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        cmd
    };
    let file = std::env::temp_dir().join(format!("svc-bench-import-{}.ndjson", std::process::id()));
    let import = |tag: String| -> Duration {
        let mut text = Vec::new();
        for n in 0..CLI_ROWS {
            writeln!(text, "{}", record(&tag, n)).expect("in memory");
        }
        std::fs::write(&file, text).expect("the import file is written");
        let start = Instant::now();
        let status = svc_cmd()
            .args(["records", "import", RESOURCE, "items"])
            .arg(&file)
            .status()
            .expect("svc runs");
        let elapsed = start.elapsed();
        assert!(status.success(), "svc records import failed: {status}");
        elapsed
    };
    let each = |tag: String| -> Duration {
        let start = Instant::now();
        for n in 0..LOOP_ROWS {
            let status = svc_cmd()
                .args(["records", "create", RESOURCE, "items", "--data"])
                .arg(record(&tag, n).to_string())
                .status()
                .expect("svc runs");
            assert!(status.success(), "svc records create failed: {status}");
        }
        start.elapsed()
    };
    import(tag());
    each(tag());
    let (mut imports, mut loops) = (Vec::new(), Vec::new());
    for _ in 0..settings.runs {
        imports.push(import(tag()));
        loops.push(each(tag()));
    }
    let _ = std::fs::remove_file(&file);
    let (import_rate, loop_rate) = (
        CLI_ROWS as f64 / median_secs(&imports),
        LOOP_ROWS as f64 / median_secs(&loops),
    );
    eprintln!(
        "   svc records import {}, svc records create per record {}",
        per_second(import_rate, "records"),
        per_second(loop_rate, "records")
    );
    vec![Row {
        benchmark: format!(
            "8. import: svc records import ({CLI_ROWS} NDJSON rows) beside svc records create per record"
        ),
        figure: format!("import {}", per_second(import_rate, "records")),
        baseline: format!("create loop {}", per_second(loop_rate, "records")),
        ratio: import_rate / loop_rate,
        target: Target::None,
    }]
}
