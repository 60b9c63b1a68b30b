//! `svc records import` against the emulator: CSV typed by the model's fields, NDJSON from
//! stdin, a keyed import run again, the error report and the exit codes.

mod common;

use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use svc_emulator::{Emulator, EmulatorConfig};

async fn run(emulator: &Emulator, args: &[&str], stdin: Option<&str>) -> Output {
    let env = vec![
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
        ("SVC_API_KEY", emulator.api_key().to_owned()),
    ];
    common::run::svc(env, args, stdin).await
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
/// (every record updated, none failed); a model with a `DATE` column is refused before any row
/// is sent, and goes back with `--skip-columns` (the engine refuses any value for one on
/// SQLite), while `null` there is no value and goes.
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
    let import = [
        "records", "import", "shop", "orders", "-", "--format", "ndjson", "--key", "id", "-o",
        "json",
    ];
    emulator.clear_requests();
    let out = run(&emulator, &import, Some(&with_date)).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "\"ordered_on\", a DATE column, has one in 20 of 20 rows (the first on line 1)"
        ) && err.contains("--skip-columns ordered_on"),
        "{err}"
    );
    assert!(writes(&emulator).is_empty(), "{:?}", writes(&emulator));
    let skipping: Vec<&str> = import
        .iter()
        .copied()
        .chain(["--skip-columns", "ordered_on"])
        .collect();
    let out = run(&emulator, &skipping, Some(&with_date)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["updated"], 20);
}

/// The writes (to records) in the emulator's request journal: what an import refused before
/// sending must not have made.
fn writes(emulator: &Emulator) -> Vec<String> {
    emulator
        .requests()
        .into_iter()
        .filter(|r| r.model.is_some() && r.method != "GET")
        .map(|r| format!("{} {} {}", r.method, r.path, r.status))
        .collect()
}

fn export_csv(dir: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// The issue's round trip on the demo's data: `customers` exported to CSV and imported back
/// with `--key email`. Its `birth_date` (`DATE`) is named before any row is sent (the journal
/// shows the SQL that read the columns and no write; the records are as they were); with
/// `--skip-columns birth_date` every row goes back, and a second export is the first byte for
/// byte.
#[tokio::test(flavor = "multi_thread")]
async fn the_demo_round_trip_names_the_date_column_first_and_goes_through_without_it() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let dir = Scratch(std::env::temp_dir().join(format!("svc-round-trip-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let path = |name: &str| dir.0.join(name).to_str().unwrap().to_owned();
    let export = |name: &'static str| {
        let out = path(name);
        let emulator = &emulator;
        async move {
            let done = run(
                emulator,
                &["records", "export", "shop", "customers", "--out", &out],
                None,
            )
            .await;
            assert!(done.status.success(), "{}", stderr(&done));
        }
    };
    export("customers.csv").await;
    let before = export_csv(&dir.0, "customers.csv");
    assert_eq!(before.lines().count(), 1001);
    assert!(
        before.starts_with("id,name,email,city,vip,score,birth_date,created_at,notes\n"),
        "{before}"
    );

    emulator.clear_requests();
    let (csv, report) = (path("customers.csv"), path("failed.ndjson"));
    let import = [
        "records",
        "import",
        "shop",
        "customers",
        &csv,
        "--key",
        "email",
        "--errors",
        &report,
    ];
    let out = run(&emulator, &import, None).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("shop/customers is on SQLite")
            && err.contains("\"birth_date\", a DATE column, has one in 800 of 1000 rows")
            && err.contains("nothing was sent")
            && err.contains("hint: leave it out with --skip-columns birth_date"),
        "{err}"
    );
    let journal = emulator.requests();
    assert!(
        journal
            .iter()
            .any(|r| r.path.ends_with("/shop/sql_get_query") && r.status == 200),
        "the columns are read through SQL: {journal:?}"
    );
    assert!(writes(&emulator).is_empty(), "{:?}", writes(&emulator));
    // The report is made only once rows go out.
    assert!(!dir.0.join("failed.ndjson").exists());
    export("again.csv").await;
    assert_eq!(export_csv(&dir.0, "again.csv"), before);

    let skipping: Vec<&str> = import
        .iter()
        .copied()
        .chain(["--skip-columns", "birth_date"])
        .collect();
    let out = run(&emulator, &skipping, None).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout_json(&out),
        serde_json::json!({"created": 0, "updated": 1000, "skipped": 0, "failed": 0})
    );
    assert_eq!(writes(&emulator).len(), 1000);
    export("after.csv").await;
    assert_eq!(export_csv(&dir.0, "after.csv"), before);
}

/// `--columns` sends only the columns named (the others keep their values); a name of
/// `--columns` or `--skip-columns` the file lacks, a `--key` left out, and a column the model
/// lacks are refused with nothing sent; a `DATE` column whose values are all `null` goes (the
/// engine takes `null` there).
#[tokio::test(flavor = "multi_thread")]
async fn columns_and_skip_columns_are_checked_against_the_file_and_the_model() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let dir = Scratch(std::env::temp_dir().join(format!("svc-columns-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let csv = dir.0.join("people.csv");
    std::fs::write(
        &csv,
        "email,name,city,birth_date,nickname\n\
         customer1@example.com,Renamed One,Lima,2001-02-03,Uno\n\
         customer2@example.com,Renamed Two,Quito,,Dos\n",
    )
    .unwrap();
    let csv = csv.to_str().unwrap();
    let one_before = customer(&emulator, "customer1@example.com").await.remove(0);
    let import = |extra: &[&str]| -> Vec<String> {
        [
            "records",
            "import",
            "shop",
            "customers",
            csv,
            "--key",
            "email",
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };
    let refused = |args: Vec<String>, wants: &'static [&'static str]| {
        let emulator = &emulator;
        async move {
            emulator.clear_requests();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = run(emulator, &args, None).await;
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
            for want in wants {
                assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
            }
            assert!(writes(emulator).is_empty(), "{:?}", writes(emulator));
        }
    };
    // `nickname` is no field of the model: named, with the model's fields.
    refused(
        import(&[]),
        &[
            "shop/customers has no field \"nickname\", which",
            "--skip-columns nickname",
            "the model's fields: id, name, email",
        ],
    )
    .await;
    // Unknown names in either flag, and the key left out.
    refused(
        import(&["--columns", "email,citty"]),
        &["--columns names a column \"citty\" that", "the columns of"],
    )
    .await;
    refused(
        import(&["--skip-columns", "nickname,bday"]),
        &["--skip-columns names a column \"bday\" that"],
    )
    .await;
    refused(
        import(&["--columns", "name,city"]),
        &["--key \"email\" is not among the --columns"],
    )
    .await;
    refused(
        import(&["--skip-columns", "email,nickname"]),
        &["--key \"email\" is left out by --skip-columns"],
    )
    .await;
    // Skipping the unknown field still leaves the DATE column, which one row has a value in.
    refused(
        import(&["--skip-columns", "nickname"]),
        &["\"birth_date\", a DATE column, has one in 1 of 2 rows (the first on line 2)"],
    )
    .await;
    let out = run(
        &emulator,
        &["records", "get", "shop", "customers", "1"],
        None,
    )
    .await;
    assert_eq!(stdout_json(&out), one_before);

    // --columns: only the city goes; the name and the birth date stay as they were.
    let args = import(&["--columns", "email,city"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = run(&emulator, &args, None).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["updated"], 2);
    let one = customer(&emulator, "customer1@example.com").await.remove(0);
    assert_eq!(one["city"], "Lima");
    assert_eq!(one["name"], one_before["name"]);
    assert_eq!(one["birth_date"], one_before["birth_date"]);
    assert_eq!(
        customer(&emulator, "customer2@example.com").await[0]["city"],
        "Quito"
    );

    // `null` in the DATE column is no value: the rows go, and the date is blanked out.
    assert_ne!(one["birth_date"], Value::Null);
    let out = run(
        &emulator,
        &[
            "records",
            "import",
            "shop",
            "customers",
            "-",
            "--format",
            "ndjson",
            "--key",
            "email",
        ],
        Some("{\"email\": \"customer1@example.com\", \"birth_date\": null}\n"),
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let one = customer(&emulator, "customer1@example.com").await.remove(0);
    assert_eq!(one["birth_date"], Value::Null);
}

/// Records written to the scripted server of the test below (its only user).
static SCRIPTED_WRITES: AtomicUsize = AtomicUsize::new(0);

/// A data host whose resource `locked` refuses SQL (`403`) and whose resource `pg` is not
/// SQLite (`pragma_table_xinfo` refused, `version()` answered); each model has one record
/// `{id, email, born}`, and a create answers `201`.
fn scripted_data_host() -> std::net::SocketAddr {
    common::serve(|request| {
        let body = String::from_utf8_lossy(&request.body);
        let path = request.target.split('?').next().unwrap_or_default();
        if path.ends_with("/locked/sql_get_query") {
            return (
                "403 Forbidden",
                r#"{"detail": "no SQL for this token"}"#.to_owned(),
            );
        }
        if path.ends_with("/pg/sql_get_query") {
            return if body.contains("pragma_table_xinfo") {
                (
                    "400 Bad Request",
                    r#"{"query": ["function pragma_table_xinfo(unknown) does not exist"]}"#
                        .to_owned(),
                )
            } else if body.contains("version()") {
                (
                    "200 OK",
                    r#"{"columns": ["v"], "data": [["PostgreSQL 15"]], "row_count": 1}"#.to_owned(),
                )
            } else {
                ("400 Bad Request", r#"{"query": ["unexpected"]}"#.to_owned())
            };
        }
        match request.method.as_str() {
            "GET" => (
                "200 OK",
                r#"{"count": 1, "next": null, "previous": null, "results": [{"id": 1, "email": "a@x.test", "born": "2000-01-02"}]}"#
                    .to_owned(),
            ),
            "POST" => {
                SCRIPTED_WRITES.fetch_add(1, Ordering::SeqCst);
                ("201 Created", format!("{{\"id\": 2, \"sent\": {body}}}"))
            }
            _ => ("405 Method Not Allowed", "{}".to_owned()),
        }
    })
}

/// When the database cannot be learnt (the SQL route refused), the import stops before any
/// row, says why and points at `--no-check`, which sends them; off SQLite a `DATE`-like column
/// goes, while a column the model lacks (its fields read from one record) is still refused.
#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_database_stops_the_import_unless_no_check_and_other_databases_take_dates() {
    let addr = scripted_data_host();
    let dir = Scratch(std::env::temp_dir().join(format!("svc-scripted-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    std::fs::create_dir_all(&dir.0).unwrap();
    let csv = dir.0.join("people.csv");
    std::fs::write(
        &csv,
        "email,born\nb@x.test,2001-02-03\nc@x.test,2002-03-04\n",
    )
    .unwrap();
    let odd = dir.0.join("odd.csv");
    std::fs::write(&odd, "email,nick\nd@x.test,Dee\n").unwrap();
    let (csv, odd) = (csv.to_str().unwrap(), odd.to_str().unwrap());
    let base = format!("http://{addr}");
    let svc = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_svc"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("SVC_PROJECT", "demo")
            .env("SVC_API_BASE_URL", &base)
            .env("SVC_APP_BASE_URL", format!("{base}/api"))
            .env("SVC_TOKEN", "scripted_token")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("svc runs")
    };
    let writes = || SCRIPTED_WRITES.load(Ordering::SeqCst);

    let out = svc(&["records", "import", "locked", "people", csv]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("cannot check the columns of locked/people before importing")
            && err.contains("403")
            && err.contains("note: nothing was imported")
            && err.contains("--no-check sends the rows without it"),
        "{err}"
    );
    assert_eq!(writes(), 0);
    let out = svc(&["records", "import", "locked", "people", csv, "--no-check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["created"], 2);
    assert_eq!(writes(), 2);

    let out = svc(&["records", "import", "pg", "people", csv]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["created"], 2);
    assert_eq!(writes(), 4);
    let out = svc(&["records", "import", "pg", "people", odd]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("pg/people has no field \"nick\"")
            && err.contains("the model's fields: id, email, born"),
        "{err}"
    );
    assert_eq!(writes(), 4);
}
