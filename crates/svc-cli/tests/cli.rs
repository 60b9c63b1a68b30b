//! The `svc` binary against the emulator: every subcommand at least once, each output format,
//! the exit codes, a missing token, a bad flag.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use svc_emulator::{Emulator, EmulatorConfig, EmulatorHandle};

/// Runs `svc` with only the environment given (nothing inherited but PATH).
async fn svc(env: &[(&str, &str)], args: &[&str], stdin: Option<&str>) -> Output {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let stdin = stdin.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_svc"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env)
            .args(&args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("svc runs");
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

fn env(emulator: &EmulatorHandle) -> Vec<(&'static str, String)> {
    vec![
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
        ("SVC_API_KEY", emulator.api_key().to_owned()),
    ]
}

async fn run(emulator: &EmulatorHandle, args: &[&str]) -> Output {
    run_with(emulator, args, None).await
}

async fn run_with(emulator: &EmulatorHandle, args: &[&str], stdin: Option<&str>) -> Output {
    let env = env(emulator);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    svc(&env, args, stdin).await
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_str(&ok(out)).expect("JSON on stdout")
}

#[tokio::test(flavor = "multi_thread")]
async fn projects_and_pages() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let project = json(&run(&emulator, &["projects", "get"]).await);
    assert_eq!(project["unique_name"], "demo");

    assert_eq!(
        json(&run(&emulator, &["pages", "list"]).await),
        serde_json::json!([])
    );
    let dir = std::env::temp_dir().join(format!("svc-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("page.json");
    std::fs::write(&file, r#"{"uid": "home", "name": "Home"}"#).unwrap();
    let created = json(
        &run(
            &emulator,
            &["pages", "create", "--data", &format!("@{}", file.display())],
        )
        .await,
    );
    assert_eq!(created["uid"], "home");
    let created = json(
        &run_with(
            &emulator,
            &["--draft", "pages", "create", "--data", "-"],
            Some(r#"{"uid": "sketch"}"#),
        )
        .await,
    );
    assert_eq!(created["draft"], true);
    let updated = json(
        &run(
            &emulator,
            &["pages", "update", "home", "--data", r#"{"elements": []}"#],
        )
        .await,
    );
    assert_eq!(updated["params"], r#"{"elements":[]}"#);
    assert_eq!(
        json(&run(&emulator, &["pages", "get", "home"]).await)["name"],
        "Home"
    );
    let ndjson = ok(&run(&emulator, &["--draft", "pages", "list", "-o", "ndjson"]).await);
    assert_eq!(ndjson.lines().count(), 2);
    let table = ok(&run(&emulator, &["pages", "list", "-o", "table"]).await);
    assert!(
        table.contains("home") && table.contains("(1 rows)"),
        "{table}"
    );
    ok(&run(&emulator, &["pages", "delete", "home"]).await);
    assert_eq!(
        run(&emulator, &["pages", "get", "home"])
            .await
            .status
            .code(),
        Some(3)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn records_in_every_format() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let page = json(
        &run(
            &emulator,
            &[
                "records",
                "list",
                "shop",
                "orders",
                "-f",
                "status=paid",
                "-f",
                "total__gte=990",
                "--order-by=-total",
                "--per-page",
                "5",
            ],
        )
        .await,
    );
    let count = page["count"].as_u64().unwrap();
    assert!(count > 5);
    assert_eq!(page["results"].as_array().unwrap().len(), 5);

    let ndjson = ok(&run(
        &emulator,
        &[
            "records",
            "list",
            "shop",
            "orders",
            "-f",
            "status=paid",
            "--per-page",
            "3",
            "-o",
            "ndjson",
        ],
    )
    .await);
    for line in ndjson.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        assert_eq!(r["status"], "paid");
    }
    let csv = ok(&run(
        &emulator,
        &[
            "records",
            "list",
            "shop",
            "customers",
            "--order-by",
            "id",
            "--per-page",
            "2",
            "-o",
            "csv",
        ],
    )
    .await);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("id,name,email"), "{csv}");
    assert_eq!(lines.len(), 3);
    let table = ok(&run(
        &emulator,
        &[
            "records",
            "list",
            "shop",
            "customers",
            "--per-page",
            "2",
            "-o",
            "table",
        ],
    )
    .await);
    assert!(table.contains("(2 rows)"), "{table}");

    let record = json(&run(&emulator, &["records", "get", "shop", "orders", "7"]).await);
    assert_eq!(record["id"], 7);
    let created = json(
        &run(
            &emulator,
            &[
                "records",
                "create",
                "shop",
                "orders",
                "--data",
                r#"{"customer_id": 3, "total": 5, "quantity": 1, "ordered_on": "2026-01-02"}"#,
            ],
        )
        .await,
    );
    let id = created["id"].to_string();
    let updated = json(
        &run(
            &emulator,
            &[
                "records",
                "update",
                "shop",
                "orders",
                &id,
                "--data",
                r#"{"status": "paid"}"#,
            ],
        )
        .await,
    );
    assert_eq!(updated["status"], "paid");
    ok(&run(&emulator, &["records", "delete", "shop", "orders", &id]).await);

    let agg = json(
        &run(
            &emulator,
            &[
                "records",
                "aggregate",
                "shop",
                "orders",
                "--func",
                "count",
                "-f",
                "status=paid",
                "-f",
                "total__gte=990",
            ],
        )
        .await,
    );
    assert_eq!(agg["y_func"].as_u64(), Some(count));
    let groups = json(
        &run(
            &emulator,
            &[
                "records",
                "group",
                "shop",
                "orders",
                "--x-column",
                "status",
                "--func",
                "count",
            ],
        )
        .await,
    );
    assert_eq!(groups.as_array().unwrap().len(), 6);
    let by_year = json(
        &run(
            &emulator,
            &[
                "records",
                "group",
                "shop",
                "orders",
                "--x-column",
                "ordered_on",
                "--x-lookup",
                "date_year",
                "--func",
                "sum",
                "--y-column",
                "total",
            ],
        )
        .await,
    );
    assert!(by_year.as_array().unwrap().len() >= 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn export_streams_every_record() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let ndjson = ok(&run(
        &emulator,
        &["records", "export", "shop", "orders", "--per-page", "700"],
    )
    .await);
    let ids: std::collections::HashSet<i64> = ndjson
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(ids.len(), 12_000);

    let dir = std::env::temp_dir().join(format!("svc-cli-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("customers.csv");
    let out = run(
        &emulator,
        &[
            "records",
            "export",
            "shop",
            "customers",
            "--format",
            "csv",
            "-f",
            "vip=true",
            "--out",
            file.to_str().unwrap(),
        ],
    )
    .await;
    assert!(ok(&out).is_empty(), "the export went to the file");
    assert!(
        out.stderr.is_empty(),
        "no progress bar when stderr is not a terminal"
    );
    let csv = std::fs::read_to_string(&file).unwrap();
    let agg = json(
        &run(
            &emulator,
            &[
                "records",
                "aggregate",
                "shop",
                "customers",
                "--func",
                "count",
                "-f",
                "vip=true",
            ],
        )
        .await,
    );
    assert_eq!(
        csv.lines().count() as u64,
        1 + agg["y_func"].as_u64().unwrap()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_codes_and_messages() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    // A bad flag: usage error, 2, clap's message.
    let out = run(&emulator, &["pages", "list", "--no-such-flag"]).await;
    assert_eq!(out.status.code(), Some(2));
    // Bad input: 2, nothing sent.
    let out = run(
        &emulator,
        &["records", "list", "shop", "orders", "--per-page", "0"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("per_page"));
    let out = run(&emulator, &["pages", "create", "--data", "{not json"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not valid JSON"));
    let out = run(
        &emulator,
        &["records", "list", "shop", "orders", "-f", "total__near=3"],
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    // A missing token: no API key, no resource token.
    let out = svc(
        &[
            ("SVC_PROJECT", "demo"),
            ("SVC_API_BASE_URL", emulator.api_base_url()),
        ],
        &["records", "list", "shop", "orders"],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no credential"), "{stderr}");
    // A resource token alone is enough for records.
    let token = emulator.resource_tokens()["shop"].clone();
    let out = svc(
        &[
            ("SVC_PROJECT", "demo"),
            ("SVC_API_BASE_URL", emulator.api_base_url()),
            ("SVC_TOKEN", &token),
        ],
        &["records", "get", "shop", "orders", "1"],
        None,
    )
    .await;
    ok(&out);
    // A wrong key: API error, 3, with a hint and without the key.
    let out = svc(
        &[
            ("SVC_PROJECT", "demo"),
            ("SVC_APP_BASE_URL", emulator.app_base_url()),
            ("SVC_API_KEY", "svc_key_wrong"),
        ],
        &["pages", "list"],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("401") && stderr.contains("hint:"),
        "{stderr}"
    );
    assert!(!stderr.contains("svc_key_wrong"), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );
    // Nobody listening: network error, 4.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let out = svc(
        &[
            ("SVC_PROJECT", "demo"),
            ("SVC_APP_BASE_URL", &format!("http://{addr}/api")),
            ("SVC_API_KEY", "k"),
        ],
        &["pages", "list"],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(4));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_emulator_subcommand_prints_one_json_line() {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(env!("CARGO_BIN_EXE_svc"))
        .args(["emulator", "--listen", "127.0.0.1:0"])
        .env_clear()
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        line
    })
    .await
    .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    let info: Value = serde_json::from_str(&line).unwrap();
    assert!(
        info["api_base_url"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );
    assert!(info["resource_tokens"]["shop"].is_string());
}
