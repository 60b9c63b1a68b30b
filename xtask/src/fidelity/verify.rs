//! `cargo xtask verify`: `svc emulator verify` as a user runs it, against the data engine run
//! here, on SQLite, PostgreSQL and MariaDB (a step of `cargo xtask ci`).
//!
//! For each database it makes the fidelity run's two copies of the same data (the engine's and
//! the emulator's), starts the engine on its copy, writes an emulator config naming the other,
//! and runs the `svc` binary three times:
//!
//! 1. **Identical data**: 200 drawn requests; it must exit 0 with no difference and every
//!    request compared.
//! 2. **The engine's own failure**: `--replay` of a list the engine fails on (`_segment`, its
//!    500); it must exit 0, the request reported as the reference's failure, a documented
//!    decision.
//! 3. **One changed row**: a city changed on the engine's copy (through the engine's API);
//!    the same 200 requests must exit 1 and name the changed field, and `--replay` of the saved
//!    cases must find it again.
//!
//! The reports (JSON, JUnit, HTML) of each run stay in `target/fidelity/verify-{database}/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::dataset::Backend;
use super::requests::encode;
use super::{ENGINE_KEY, Store, engine};
use crate::http;

/// The resource's name and token in the config.
const RESOURCE: &str = "db";
const TOKEN: &str = "tok_verify_db_0123456789";
/// The changed value (of a text field).
const CHANGED: &str = "Zzyzx Verified";

/// The options: `--seeds N` also runs identical data with seeds 2 to N, `--requests R` each
/// (1000), `--only sqlite|postgres|mysql` one database.
struct Options {
    seeds: u64,
    requests: usize,
    only: Option<String>,
}

fn options(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        seeds: 1,
        requests: 1000,
        only: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let value = args.next().ok_or_else(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--seeds" => options.seeds = value.parse().map_err(|_| format!("--seeds {value}"))?,
            "--requests" => {
                options.requests = value.parse().map_err(|_| format!("--requests {value}"))?
            }
            "--only" => options.only = Some(value.clone()),
            other => {
                return Err(format!(
                    "unknown argument {other:?}; usage: cargo xtask verify [--seeds N] \
                     [--requests R] [--only sqlite|postgres|mysql]"
                ));
            }
        }
    }
    Ok(options)
}

/// Runs the three checks on every database; false at the first that fails.
pub(crate) fn verify(args: &[String], root: &Path) -> bool {
    let result = options(args).and_then(|options| {
        let svc = build(root)?;
        let cache = root.join("target").join("fidelity");
        let (python, launcher) = engine::install(&cache, true, true)?;
        for backend in [Backend::Sqlite, Backend::Postgres, Backend::Mysql] {
            if options.only.as_deref().is_some_and(|o| o != name(backend)) {
                continue;
            }
            check(&svc, &cache, &python, &launcher, backend, &options)?;
        }
        Ok(())
    });
    match result {
        Ok(()) => true,
        Err(e) => {
            eprintln!("verify: {e}");
            false
        }
    }
}

/// Builds `svc` and returns its path. With the features the tests step of `cargo xtask ci`
/// builds it with, so that nothing is compiled again: `-p svc-cli` alone resolves other
/// features, and so does a build without the examples, which turn on the dev-dependencies'
/// features (tokio's `test-util`).
fn build(root: &Path) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let ok = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "--workspace",
            "--all-features",
            "--examples",
            "--bin",
            "svc",
        ])
        .current_dir(root)
        .status()
        .map_err(|e| format!("running cargo: {e}"))?
        .success();
    if !ok {
        return Err("svc did not build".to_owned());
    }
    Ok(root.join("target").join("debug").join("svc"))
}

fn name(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
        Backend::Mysql => "mysql",
    }
}

fn check(
    svc: &Path,
    cache: &Path,
    python: &Path,
    launcher: &Path,
    backend: Backend,
    options: &Options,
) -> Result<(), String> {
    let db = name(backend);
    let dir = cache.join(format!("verify-{db}"));
    let _ = std::fs::remove_dir_all(&dir);
    let engine_dir = dir.join("engine");
    std::fs::create_dir_all(&engine_dir)
        .map_err(|e| format!("creating {}: {e}", engine_dir.display()))?;
    // Declared before the engine, so dropped after it (a cluster stops last).
    let store = Store::create(backend, &dir, 1)?;
    let (_engine, addr) = engine::start(
        python,
        launcher,
        &engine_dir,
        &store.engine_args()?,
        ENGINE_KEY,
    )?;
    let config = dir.join("emulator.json");
    let text = json!({"projects": [{
        "name": "verify",
        "resources": [{"name": RESOURCE, "token": TOKEN, "database": store.emulator_database()}],
    }]});
    std::fs::write(&config, text.to_string())
        .map_err(|e| format!("writing {}: {e}", config.display()))?;
    let reference = format!("http://{addr}");
    let run = |label: &str, extra: &[&str]| -> Result<(i32, Value), String> {
        let report = dir.join(format!("{label}.json"));
        let mut command = Command::new(svc);
        command
            .env("PYTHONHASHSEED", engine::HASH_SEED)
            .args(["emulator", "verify", "--config"])
            .arg(&config)
            .args([
                "--resource",
                RESOURCE,
                "--reference",
                &reference,
                "--reference-kind",
                "engine",
            ])
            .args(["--reference-token", ENGINE_KEY, "--rate", "1000", "--json"])
            .arg(&report)
            .arg("--junit")
            .arg(dir.join(format!("{label}.xml")))
            .arg("--html")
            .arg(dir.join(format!("{label}.html")))
            .arg("--cases")
            .arg(dir.join(format!("{label}-cases.json")))
            .args(extra);
        let status = command
            .status()
            .map_err(|e| format!("running {}: {e}", svc.display()))?;
        let text = std::fs::read_to_string(&report)
            .map_err(|e| format!("{label}: no report {}: {e}", report.display()))?;
        let report: Value = serde_json::from_str(&text)
            .map_err(|e| format!("{label}: the report is not JSON: {e}"))?;
        Ok((status.code().unwrap_or(-1), report))
    };
    let fail = |what: String| Err(format!("{db}: {what} (reports in {})", dir.display()));

    // 1. Identical data.
    let (code, identical) = run("identical", &["--requests", "200"])?;
    let totals = &identical["totals"];
    if code != 0
        || identical["sent"] != 200
        || totals["difference"] != 0
        || totals["not_compared"] != 0
    {
        return fail(format!("identical data: exit {code}, totals {totals}"));
    }
    eprintln!("verify: {db}: identical data, 200 requests: {totals}");
    let requests = options.requests.to_string();
    for seed in 2..=options.seeds {
        let seed = seed.to_string();
        let (code, report) = run(
            &format!("seed-{seed}"),
            &["--requests", &requests, "--seed", &seed],
        )?;
        let totals = &report["totals"];
        eprintln!("verify: {db}: identical data, seed {seed}, {requests} requests: {totals}");
        if code != 0 || totals["difference"] != 0 || totals["not_compared"] != 0 {
            return fail(format!(
                "identical data, seed {seed}: exit {code}, totals {totals}"
            ));
        }
    }

    // 2. The engine's own failure.
    let cases = dir.join("engine-failure-cases.json");
    let failing =
        json!({"cases": [{"op": "list", "model": "people", "query": [["_segment", "vip"]]}]});
    std::fs::write(&cases, failing.to_string())
        .map_err(|e| format!("writing {}: {e}", cases.display()))?;
    let cases = cases.to_string_lossy().into_owned();
    let (code, report) = run("engine-failure", &["--replay", &cases])?;
    let outcome = &report["outcomes"][0];
    let what = outcome["verdict"]["what"].as_str().unwrap_or_default();
    if code != 0
        || outcome["reference"]["status"] != 500
        || !what.contains("the reference failed (500)")
    {
        return fail(format!(
            "the engine's failure: exit {code}, outcome {outcome}"
        ));
    }
    eprintln!("verify: {db}: the engine's 500 is reported as the reference's: {what}");

    // 3. One changed row, on the reference's side: a text field of a record the identical
    // run retrieved, both answering alike (the same seed over the same rows draws the same requests again).
    let (field, target) = change_a_retrieved_record(addr, &identical)?;
    let (code, report) = run("changed", &["--requests", "200"])?;
    let named = report["outcomes"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|o| {
            let v = &o["verdict"];
            v["verdict"] == "difference"
                && (v["class"].as_str().unwrap_or_default().contains("/city")
                    || v["detail"].as_str().unwrap_or_default().contains(CHANGED))
        });
    if code != 1 || !named {
        return fail(format!(
            "one changed row: exit {code}, totals {}, the field named: {named}",
            report["totals"]
        ));
    }
    let saved = dir
        .join("changed-cases.json")
        .to_string_lossy()
        .into_owned();
    let (code, again) = run("replayed", &["--replay", &saved])?;
    if code != 1 || again["totals"]["difference"] == 0 {
        return fail(format!(
            "replaying the differences: exit {code}, totals {}",
            again["totals"]
        ));
    }
    eprintln!(
        "verify: {db}: one changed row ({target}, field {field:?}) found: {} differences, \
         found again by --replay",
        report["totals"]["difference"]
    );
    Ok(())
}

/// Changes, on the engine's copy, a text field of the first record the run `report` retrieved
/// with a 200: the field's name and the record's path.
fn change_a_retrieved_record(
    addr: std::net::SocketAddr,
    report: &Value,
) -> Result<(String, String), String> {
    let auth = format!("Bearer {ENGINE_KEY}");
    let retrieved = report["outcomes"]
        .as_array()
        .into_iter()
        .flatten()
        // One the emulator answered alike: a retrieve it refuses by design (a documented
        // decision) would never show the change.
        .filter(|o| {
            o["request"]["op"] == "retrieve"
                && o["status"]["reference"] == 200
                && o["verdict"]["verdict"] == "agrees"
        });
    for outcome in retrieved {
        let request = &outcome["request"];
        let path = format!(
            "/api/models/{}/{}/",
            encode(request["model"].as_str().unwrap_or_default()),
            encode(request["key"].as_str().unwrap_or_default())
        );
        let record = http::send(addr, "GET", &path, Some(&auth), None)?;
        let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(&record.body) else {
            continue;
        };
        for (field, value) in &record {
            if !value.is_string() || request["key"] == *value {
                continue;
            }
            let body = json!({ field: CHANGED }).to_string();
            let changed = http::send(addr, "PATCH", &path, Some(&auth), Some(body.as_bytes()))?;
            if changed.status == 200 {
                return Ok((field.clone(), path));
            }
        }
    }
    Err("no record the identical run retrieved could be changed on the engine".to_owned())
}
