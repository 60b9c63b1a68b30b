//! `svc records import` against the emulator: CSV typed by the model's fields, NDJSON from
//! stdin, a keyed import run again, the error report and the exit codes.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use svc_emulator::{Emulator, EmulatorConfig};

async fn run(emulator: &Emulator, args: &[&str], stdin: Option<&str>) -> Output {
    let env = vec![
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
        ("SVC_API_KEY", emulator.api_key().to_owned()),
    ];
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let stdin = stdin.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_svc"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env)
            .args(&args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("svc runs");
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "JSON on stdout ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

async fn customer(emulator: &Emulator, email: &str) -> Vec<Value> {
    let out = run(
        emulator,
        &[
            "records",
            "list",
            "shop",
            "customers",
            "-f",
            &format!("email={email}"),
        ],
        None,
    )
    .await;
    stdout_json(&out)["results"].as_array().unwrap().clone()
}

struct Scratch(std::path::PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_csv_import_is_typed_by_the_model_reported_and_can_run_again() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let dir = Scratch(std::env::temp_dir().join(format!("svc-cli-import-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).unwrap();
    let csv = dir.0.join("customers.csv");
    let report = dir.0.join("failed.ndjson");
    std::fs::write(
        &csv,
        "name,email,city,vip,score,created_at\n\
         Ana,ana@import.test,\"Porto, PT\",true,7,2026-01-02T03:04:05\n\
         Ben,ben@import.test,,false,,2026-01-02T03:04:05\n\
         Cy,cy@import.test,Lyon,0,not a number,2026-01-02T03:04:05\n\
         Di,di@import.test,Oslo,1,3,2026-01-02T03:04:05\n",
    )
    .unwrap();
    let (csv, report) = (csv.to_str().unwrap(), report.to_str().unwrap());
    let first = run(
        &emulator,
        &[
            "records",
            "import",
            "shop",
            "customers",
            csv,
            "--key",
            "email",
            "--errors",
            report,
        ],
        None,
    )
    .await;
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    assert_eq!(
        stdout_json(&first),
        serde_json::json!({"created": 3, "updated": 0, "skipped": 0, "failed": 1})
    );
    let err = stderr(&first);
    assert!(
        err.contains("1 of 4 rows failed") && err.contains("line 4"),
        "{err}"
    );
    assert!(
        err.contains("4 rows from") && err.contains("3 created"),
        "{err}"
    );
    let failed: Value =
        serde_json::from_str(std::fs::read_to_string(report).unwrap().trim()).unwrap();
    assert_eq!(failed["line"], 4);
    assert_eq!(failed["row"]["email"], "cy@import.test");
    assert!(
        failed["error"].as_str().unwrap().contains("score"),
        "{failed}"
    );

    // Typed by the model's fields: an integer, a boolean; the empty cell left out.
    let ana = customer(&emulator, "ana@import.test").await;
    assert_eq!(ana.len(), 1);
    assert_eq!(ana[0]["score"], 7);
    assert_eq!(ana[0]["vip"], true);
    assert_eq!(ana[0]["city"], "Porto, PT");
    let ben = customer(&emulator, "ben@import.test").await;
    assert_eq!(ben[0]["score"], Value::Null);
    assert_eq!(ben[0]["city"], Value::Null);

    // The same file again, fixed: the three are updated, the fourth created; none twice.
    let fixed = std::fs::read_to_string(csv)
        .unwrap()
        .replace("not a number", "5")
        .replace("Ana,", "Anna,");
    std::fs::write(csv, fixed).unwrap();
    let again = run(
        &emulator,
        &[
            "records",
            "import",
            "shop",
            "customers",
            csv,
            "--key",
            "email",
        ],
        None,
    )
    .await;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(
        stdout_json(&again),
        serde_json::json!({"created": 1, "updated": 3, "skipped": 0, "failed": 0})
    );
    let ana = customer(&emulator, "ana@import.test").await;
    assert_eq!(ana.len(), 1);
    assert_eq!(ana[0]["name"], "Anna");
    let skip = run(
        &emulator,
        &[
            "records",
            "import",
            "shop",
            "customers",
            csv,
            "--key",
            "email",
            "--skip-existing",
        ],
        None,
    )
    .await;
    assert_eq!(
        stdout_json(&skip),
        serde_json::json!({"created": 0, "updated": 0, "skipped": 4, "failed": 0})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ndjson_from_stdin_and_usage_errors() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let count = |out: &Output| stdout_json(out)["count"].as_u64().unwrap();
    let before = count(&run(&emulator, &["records", "list", "shop", "products"], None).await);
    let rows: String = (0..30)
        .map(|n| format!("{{\"sku\": \"ND-{n}\", \"name\": \"Item {n}\", \"price\": {n}.5}}\n"))
        .collect();
    let out = run(
        &emulator,
        &[
            "records",
            "import",
            "shop",
            "products",
            "-",
            "--format",
            "ndjson",
            "--concurrency",
            "4",
        ],
        Some(&rows),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["created"], 30);
    let after = count(&run(&emulator, &["records", "list", "shop", "products"], None).await);
    assert_eq!(after, before + 30);

    // stdin without --format: which format is unknown; nothing is sent.
    let out = run(
        &emulator,
        &["records", "import", "shop", "products", "-"],
        Some(&rows),
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--format"), "{}", stderr(&out));
    // --skip-existing needs --key.
    let out = run(
        &emulator,
        &[
            "records",
            "import",
            "shop",
            "products",
            "x.csv",
            "--skip-existing",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let after_errors = count(&run(&emulator, &["records", "list", "shop", "products"], None).await);
    assert_eq!(after_errors, after);
}

/// docs/cli.md's round trip: what `records export` writes, `records import --key id` takes back
/// (every record updated, none failed); a model with a `DATE` column goes back without it, as
/// the docs say (the engine refuses any value for one on SQLite).
#[tokio::test(flavor = "multi_thread")]
async fn an_export_is_imported_back_as_the_docs_say() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let dir = std::env::temp_dir().join(format!("svc-import-back-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let _scratch = Scratch(dir.clone());

    let products = dir.join("products.ndjson");
    let products = products.to_str().unwrap();
    let out = run(
        &emulator,
        &["records", "export", "shop", "products", "--out", products],
        None,
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let exported = std::fs::read_to_string(products).unwrap().lines().count();
    assert!(exported > 10, "{exported}");
    let out = run(
        &emulator,
        &[
            "records", "import", "shop", "products", products, "--key", "id", "-o", "json",
        ],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let counts = stdout_json(&out);
    assert_eq!(counts["updated"], exported, "{counts}");
    assert_eq!(counts["failed"], 0, "{counts}");

    // orders: its DATE column refuses every value, so the rows go back without it.
    let out = run(
        &emulator,
        &[
            "records",
            "export",
            "shop",
            "orders",
            "-f",
            "id__lte=20",
            "--format",
            "ndjson",
        ],
        None,
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let rows: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 20);
    let with_date: String = rows.iter().map(|r| format!("{r}\n")).collect();
    let without_date: String = rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove("ordered_on");
            format!("{r}\n")
        })
        .collect();
    let import = [
        "records", "import", "shop", "orders", "-", "--format", "ndjson", "--key", "id", "-o",
        "json",
    ];
    let out = run(&emulator, &import, Some(&with_date)).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("SQLite Date type only accepts"),
        "{}",
        stderr(&out)
    );
    let out = run(&emulator, &import, Some(&without_date)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["updated"], 20);
}
