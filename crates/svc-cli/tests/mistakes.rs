//! The mistakes that used to pass silently with exit 0 (issue 30, section 3), each refused with
//! a message that says what to do, against the emulator (strict, its default).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use svc_emulator::{Emulator, EmulatorConfig};

async fn run(emulator: &Emulator, args: &[&str]) -> Output {
    let env = vec![
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
        ("SVC_API_KEY", emulator.api_key().to_owned()),
        ("SVC_TOOLS_TOKEN", emulator.tools_token().to_owned()),
    ];
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_svc"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("svc runs");
        drop(child.stdin.take().map(|mut s| s.flush()));
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

/// Asserts the exit code; returns stderr.
fn code(out: &Output, expected: i32) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(expected),
        "stdout: {}\nstderr: {err}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn json(out: &Output) -> Value {
    code(out, 0);
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[tokio::test(flavor = "multi_thread")]
async fn records_mistakes_are_refused() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let before = json(&run(&emulator, &["records", "get", "shop", "orders", "7"]).await);

    // A misspelt model: the 404 names the models there are (exit 3, an API error).
    let out = run(&emulator, &["records", "list", "shop", "ordrs"]).await;
    let err = code(&out, 3);
    assert!(
        err.contains("\"ordrs\"") && err.contains("orders") && err.contains("products"),
        "{err}"
    );

    // A misspelt field: the strict emulator refuses it, naming it; nothing changes.
    let out = run(
        &emulator,
        &[
            "records",
            "update",
            "shop",
            "orders",
            "7",
            "--data",
            r#"{"stauts": "paid"}"#,
        ],
    )
    .await;
    let err = code(&out, 3);
    assert!(err.contains("stauts") && err.contains("status"), "{err}");
    assert_eq!(
        json(&run(&emulator, &["records", "get", "shop", "orders", "7"]).await),
        before
    );

    // An array for create: one object is expected, and import is named.
    let out = run(
        &emulator,
        &[
            "records",
            "create",
            "shop",
            "products",
            "--data",
            r#"[{"sku": "A"}, {"sku": "B"}]"#,
        ],
    )
    .await;
    let err = code(&out, 2);
    assert!(
        err.contains("one record") && err.contains("svc records import"),
        "{err}"
    );
    let out = run(
        &emulator,
        &["records", "update", "shop", "orders", "7", "--data", "null"],
    )
    .await;
    code(&out, 2);

    // avg and sum of a text column: refused, not "0.0".
    let out = run(
        &emulator,
        &[
            "records",
            "aggregate",
            "shop",
            "orders",
            "--func",
            "avg",
            "--column",
            "status",
        ],
    )
    .await;
    let err = code(&out, 2);
    assert!(
        err.contains("numeric column") && err.contains("\"status\""),
        "{err}"
    );
    // A decimal column (sent as text) and an integer one are numbers.
    let avg = json(
        &run(
            &emulator,
            &[
                "records",
                "aggregate",
                "shop",
                "orders",
                "--func",
                "avg",
                "--column",
                "total",
            ],
        )
        .await,
    );
    let avg: f64 = avg["y_func"].as_str().unwrap().parse().unwrap();
    assert!(avg > 1.0, "{avg}");
    json(
        &run(
            &emulator,
            &[
                "records",
                "aggregate",
                "shop",
                "orders",
                "--func",
                "sum",
                "--column",
                "quantity",
            ],
        )
        .await,
    );
    // min and max of text are fine.
    json(
        &run(
            &emulator,
            &[
                "records",
                "aggregate",
                "shop",
                "orders",
                "--func",
                "max",
                "--column",
                "status",
            ],
        )
        .await,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn page_updates_take_a_structure() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let data =
        r#"{"uid": "p1", "unique_name": "orders", "name": "Orders", "params": {"elements": [1]}}"#;
    json(&run(&emulator, &["pages", "create", "--data", data]).await);
    for (bad, says) in [
        (r#"{"name": "Renamed"}"#, "page fields (name)"),
        (r#"{"params": {"elements": []}}"#, "jq .params"),
        ("null", "not null"),
        ("7", "not a number"),
    ] {
        let out = run(&emulator, &["pages", "update", "p1", "--data", bad]).await;
        let err = code(&out, 2);
        assert!(err.contains(says), "{bad}: {err}");
    }
    let page = json(&run(&emulator, &["pages", "get", "p1"]).await);
    assert_eq!(page["params"], r#"{"elements":[1]}"#);
    assert_eq!(page["name"], "Orders");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_export_format_is_never_a_silent_surprise() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let dir = std::env::temp_dir().join(format!("svc-cli-mistakes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("x.csv");
    let path = file.to_str().unwrap();
    let filter = ["-f", "id__lte=3"];
    // -o csv with --out: CSV.
    let mut args = vec![
        "records", "export", "shop", "orders", "-o", "csv", "--out", path,
    ];
    args.extend(filter);
    code(&run(&emulator, &args).await, 0);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.starts_with("id,"), "{text}");
    assert_eq!(text.lines().count(), 4, "{text}");
    // The extension alone: CSV too.
    std::fs::remove_file(&file).unwrap();
    let mut args = vec!["records", "export", "shop", "orders", "--out", path];
    args.extend(filter);
    code(&run(&emulator, &args).await, 0);
    assert!(std::fs::read_to_string(&file).unwrap().starts_with("id,"));
    // Formats that disagree, or one an export cannot write: usage errors, the file untouched.
    let before = std::fs::read(&file).unwrap();
    for wrong in [
        vec!["--format", "ndjson", "--out", path],
        vec!["-o", "ndjson", "--out", path],
        vec!["-o", "table"],
        vec!["-o", "csv", "--format", "ndjson"],
    ] {
        let mut args = vec!["records", "export", "shop", "orders"];
        args.extend(wrong.iter().copied());
        let err = code(&run(&emulator, &args).await, 2);
        assert!(err.contains("--format"), "{wrong:?}: {err}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // The help's example compares decimals as numbers: they are sent as strings.
    let help = run(&emulator, &["records", "export", "--help"]).await;
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(help.contains("select((.total | tonumber) > 900)"), "{help}");
    assert!(!help.contains("select(.total > 900)"), "{help}");
    let mut args = vec!["records", "export", "shop", "orders", "-o", "ndjson"];
    args.extend(filter);
    let out = run(&emulator, &args).await;
    code(&out, 0);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let total = record["total"].as_str().expect("total is a string");
        total.parse::<f64>().expect("that parses as a number");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn smaller_items() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    // A team by name, for get and rename as for --team elsewhere.
    let renamed = json(&run(&emulator, &["teams", "rename", "Editors", "Writers"]).await);
    assert_eq!(renamed["name"], "Writers");
    let team = json(&run(&emulator, &["teams", "get", "Writers"]).await);
    assert_eq!(team["uid"], renamed["uid"]);
    // users list: a table names each user's team; JSON keeps the record as it is.
    json(
        &run(
            &emulator,
            &[
                "users",
                "create",
                "--email",
                "ana@example.com",
                "--team",
                "Writers",
            ],
        )
        .await,
    );
    let out = run(&emulator, &["users", "list", "-o", "table"]).await;
    code(&out, 0);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    let header = table.lines().next().unwrap_or_default().to_owned();
    assert!(
        header.contains("group") && header.contains("team"),
        "{table}"
    );
    assert!(table.contains("Writers"), "{table}");
    let listed = json(&run(&emulator, &["users", "list"]).await);
    assert!(listed["results"][0].get("team").is_none(), "{listed}");
    // A SQL syntax error is not about "the fields named above".
    let out = run(&emulator, &["sql", "shop", "select * fro orders"]).await;
    let err = code(&out, 3);
    assert!(err.contains("syntax error"), "{err}");
    assert!(!err.contains("fields named above"), "{err}");
    // A record field error still says it.
    let out = run(
        &emulator,
        &[
            "records",
            "update",
            "shop",
            "customers",
            "1",
            "--data",
            r#"{"score": "many"}"#,
        ],
    )
    .await;
    let err = code(&out, 3);
    // A record field error names its field on its one line, pointing nowhere else.
    assert!(
        err.contains("score") && !err.contains("fields named above"),
        "{err}"
    );
}

/// Another tool's name of a flag (`--limit`, `--bind`) gets the tip of svc's own, where the
/// subcommand has it; an unknown flag with no such name keeps clap's own tips.
#[tokio::test]
async fn another_tools_flag_names_svcs() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    for (args, tip) in [
        (
            &["records", "list", "shop", "orders", "--limit", "5"][..],
            "a similar argument exists: '--per-page'",
        ),
        (
            &["records", "list", "shop", "orders", "--limit=5"][..],
            "a similar argument exists: '--per-page'",
        ),
        (
            &["sql", "shop", "select 1", "--bind", "a=1"][..],
            "a similar argument exists: '--param'",
        ),
    ] {
        let out = run(&emulator, args).await;
        code(&out, 2);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(tip), "{args:?}: {stderr}");
        assert!(!stderr.contains("as a value"), "{args:?}: {stderr}");
    }
    // `projects get` has no --per-page: no tip naming one.
    let out = run(&emulator, &["projects", "get", "--limit", "5"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("--per-page"), "{stderr}");
}
