//! The `svc` binary against the emulator: every subcommand at least once, each output format,
//! the exit codes, a missing token, a bad flag.

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use common::run::TempDir;
use serde_json::Value;
use svc_emulator::{Emulator, EmulatorConfig};

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

fn env(emulator: &Emulator) -> Vec<(&'static str, String)> {
    vec![
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
        ("SVC_API_KEY", emulator.api_key().to_owned()),
    ]
}

async fn run(emulator: &Emulator, args: &[&str]) -> Output {
    run_with(emulator, args, None).await
}

async fn run_with(emulator: &Emulator, args: &[&str], stdin: Option<&str>) -> Output {
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
        table.contains("home") && table.ends_with("\n(1 row)\n"),
        "{table}"
    );
    ok(&run(&emulator, &["pages", "delete", "home", "--yes"]).await);
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
    // A page of a longer list says where it stands and how to get the next one.
    let customers = json(&run(&emulator, &["records", "list", "shop", "customers"]).await)["count"]
        .as_u64()
        .unwrap();
    assert!(
        table.ends_with(&format!(
            "\n2 of {customers} records, page 1 of {}; next: --page 2\n",
            customers.div_ceil(2)
        )),
        "{table}"
    );
    let last = customers.div_ceil(2).to_string();
    let table = ok(&run(
        &emulator,
        &[
            "records",
            "list",
            "shop",
            "customers",
            "--per-page",
            "2",
            "--page",
            &last,
            "-o",
            "table",
        ],
    )
    .await);
    assert!(
        table.ends_with(&format!(" of {customers} records, page {last} of {last}\n")),
        "the last page has no next: {table}"
    );

    let record = json(&run(&emulator, &["records", "get", "shop", "orders", "7"]).await);
    assert_eq!(record["id"], 7);
    let created = json(
        &run(
            &emulator,
            &[
                "records",
                "create",
                "shop",
                "products",
                "--data",
                // Not an order: their `ordered_on` DATE column cannot be written (the data
                // engine's 400).
                r#"{"sku": "SKU-CLI", "name": "Cli lamp", "price": 5}"#,
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
                "products",
                &id,
                "--data",
                r#"{"name": "Cli chair"}"#,
            ],
        )
        .await,
    );
    assert_eq!(updated["name"], "Cli chair");
    ok(&run(
        &emulator,
        &["records", "delete", "shop", "products", &id, "--yes"],
    )
    .await);

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
    let vip = agg["y_func"].as_u64().unwrap();
    assert_eq!(csv.lines().count() as u64, 1 + vip);
    // Off a terminal, no progress line: one summary line.
    let summary = stderr(&out);
    let expected = format!("{vip} records exported to {} in ", file.display());
    assert!(
        summary.starts_with(&expected)
            && summary.ends_with(" records/s)\n")
            && summary.lines().count() == 1,
        "{summary:?}"
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

/// The project and both hosts, without any credential.
fn hosts(emulator: &Emulator) -> Vec<(&'static str, String)> {
    vec![
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
    ]
}

/// Runs `svc` with `env` (owned pairs).
async fn svc_env(env: &[(&str, String)], args: &[&str], stdin: Option<&str>) -> Output {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    svc(&env, args, stdin).await
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts the exit code, and that no user error ever shows a panic or a backtrace.
fn code(out: &Output, expected: i32) -> String {
    let err = stderr(out);
    assert_eq!(
        out.status.code(),
        Some(expected),
        "stdout: {}\nstderr: {err}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
    err
}

#[tokio::test(flavor = "multi_thread")]
async fn login_whoami_logout_and_commands_with_only_a_session() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let config = TempDir::new("session");
    let mut env = hosts(&emulator);
    env.push(("SVC_CONFIG_DIR", config.path().to_owned()));

    // Not signed in: whoami says so with its own exit code; commands need a credential.
    let err = code(&svc_env(&env, &["whoami"], None).await, 5);
    assert!(
        err.contains("not signed in") && err.contains("svc login"),
        "{err}"
    );
    let err = code(
        &svc_env(&env, &["records", "list", "shop", "orders"], None).await,
        2,
    );
    assert!(
        err.contains("no credential") && err.contains("svc login"),
        "{err}"
    );

    // Register, then sign in: a wrong password is an API error (3) with a hint, no password at
    // all a usage error (2).
    let registered = json(
        &svc_env(
            &env,
            &[
                "register",
                "--email",
                "ana@example.com",
                "--password-stdin",
                "--first-name",
                "Ana",
            ],
            Some("correct horse battery\n"),
        )
        .await,
    );
    assert_eq!(registered["email"], "ana@example.com");
    let err = code(
        &svc_env(
            &env,
            &["login", "--email", "ana@example.com", "--password-stdin"],
            Some("wrong password\n"),
        )
        .await,
        3,
    );
    assert!(err.contains("401") && err.contains("hint:"), "{err}");
    assert!(!err.contains("wrong password"), "{err}");
    let err = code(
        &svc_env(&env, &["login", "--email", "ana@example.com"], None).await,
        2,
    );
    assert!(
        err.contains("--password-stdin") && err.contains("SVC_PASSWORD"),
        "{err}"
    );
    let session_file = config.0.join("svc").join("session.json");
    assert!(!session_file.exists());

    let mut with_password = env.clone();
    with_password.push(("SVC_PASSWORD", "correct horse battery".to_owned()));
    let out = svc_env(
        &with_password,
        &["login", "--email", "ana@example.com"],
        None,
    )
    .await;
    assert_eq!(json(&out)["email"], "ana@example.com");
    assert!(stderr(&out).contains("signed in as ana@example.com"));
    assert!(session_file.exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&session_file)
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }

    let me = json(&svc_env(&env, &["whoami"], None).await);
    assert_eq!(me["email"], "ana@example.com");
    assert_eq!(me["first_name"], "Ana");
    let table = ok(&svc_env(&env, &["whoami", "-o", "table"], None).await);
    assert!(table.contains("ana@example.com"), "{table}");

    // Later commands use the session: no API key, no token.
    let page = json(
        &svc_env(
            &env,
            &["records", "list", "shop", "orders", "--per-page", "2"],
            None,
        )
        .await,
    );
    assert_eq!(page["results"].as_array().unwrap().len(), 2);
    let rows = json(
        &svc_env(
            &env,
            &["sql", "shop", "select count(*) as n from orders"],
            None,
        )
        .await,
    );
    assert_eq!(rows[0]["n"], 12_000);
    let teams = json(&svc_env(&env, &["teams", "list"], None).await);
    assert_eq!(teams["count"], 3);
    // ... but not pages: the application host takes an API key only.
    let err = code(&svc_env(&env, &["pages", "list"], None).await, 2);
    assert!(err.contains("--api-key"), "{err}");

    // Logout removes the session; twice is fine.
    let out = svc_env(&env, &["logout"], None).await;
    ok(&out);
    assert!(stderr(&out).contains("signed out"));
    ok(&svc_env(&env, &["logout"], None).await);
    code(&svc_env(&env, &["whoami"], None).await, 5);
    code(
        &svc_env(&env, &["records", "get", "shop", "orders", "1"], None).await,
        2,
    );

    // A session file that is not ours any more: a clear error (1) naming the file, and
    // logout clears it.
    std::fs::write(&session_file, "{not json").unwrap();
    let err = code(
        &svc_env(&env, &["records", "get", "shop", "orders", "1"], None).await,
        1,
    );
    assert!(
        err.contains("session.json") && err.contains("svc logout"),
        "{err}"
    );
    ok(&svc_env(&env, &["logout"], None).await);
    assert!(!session_file.exists());
    code(&svc_env(&env, &["whoami"], None).await, 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_needs_a_config_dir() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    // No SVC_CONFIG_DIR, XDG_CONFIG_HOME or HOME.
    let mut env = hosts(&emulator);
    env.push(("SVC_PASSWORD", "x".to_owned()));
    let err = code(
        &svc_env(&env, &["login", "--email", "a@example.com"], None).await,
        2,
    );
    assert!(err.contains("SVC_CONFIG_DIR"), "{err}");
    // XDG_CONFIG_HOME is used when SVC_CONFIG_DIR is not set.
    let xdg = TempDir::new("xdg");
    env.push(("XDG_CONFIG_HOME", xdg.path().to_owned()));
    let err = code(&svc_env(&env, &["whoami"], None).await, 5);
    assert!(
        err.contains(&format!("{}/svc/session.json", xdg.path())),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sql_with_params_in_every_format() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let query =
        "select id, status, total from orders where id <= :n and status <> :not order by id";
    let args = |format: &'static str| -> Vec<&'static str> {
        vec![
            "sql", "shop", query, "--param", "n=5", "-p", "not=nope", "-o", format,
        ]
    };
    let rows = json(&run(&emulator, &args("json")).await);
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0]["id"], 1);
    assert_eq!(
        rows[0].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["id", "status", "total"]
    );
    let ndjson = ok(&run(&emulator, &args("ndjson")).await);
    assert_eq!(ndjson.lines().count(), 5);
    let first: Value = serde_json::from_str(ndjson.lines().next().unwrap()).unwrap();
    assert_eq!(first, rows[0]);
    let csv = ok(&run(&emulator, &args("csv")).await);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "id,status,total");
    assert_eq!(lines.len(), 6);
    assert!(lines[1].starts_with("1,"), "{csv}");
    let table = ok(&run(&emulator, &args("table")).await);
    assert!(
        table.starts_with("id") && table.contains("(5 rows)"),
        "{table}"
    );

    // A string parameter that looks like a number stays a string when quoted as JSON.
    let rows = json(
        &run(
            &emulator,
            &[
                "sql",
                "shop",
                "select :v as v, typeof(:v) as t, :s as s",
                "-p",
                "v=\"007\"",
                "-p",
                "s=Paris",
            ],
        )
        .await,
    );
    assert_eq!(rows[0]["v"], "007");
    assert_eq!(rows[0]["t"], "text");
    assert_eq!(rows[0]["s"], "Paris");

    // The query from stdin; an empty result keeps its header in CSV.
    let csv = ok(&run_with(
        &emulator,
        &["sql", "shop", "-", "-o", "csv"],
        Some("select id from orders where id < 0"),
    )
    .await);
    assert_eq!(csv, "id\n");

    // With a resource token only.
    let token = emulator.resource_tokens()["shop"].clone();
    let mut env = hosts(&emulator);
    env.push(("SVC_TOKEN", token));
    let rows = json(&svc_env(&env, &["sql", "shop", "select 1 as one"], None).await);
    assert_eq!(rows, serde_json::json!([{"one": 1}]));

    // Errors: a malformed parameter (2, nothing sent), a statement that writes (3).
    let err = code(
        &run(&emulator, &["sql", "shop", "select :a", "-p", "a"]).await,
        2,
    );
    assert!(err.contains("name=value"), "{err}");
    let err = code(
        &run(&emulator, &["sql", "shop", "delete from orders"]).await,
        3,
    );
    assert!(err.contains("400"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn users_and_teams_with_the_tools_token() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let mut env = hosts(&emulator);
    env.push(("SVC_TOOLS_TOKEN", emulator.tools_token().to_owned()));
    let tools = |args: &'static [&'static str]| svc_env(&env, args, None);

    let teams = json(&tools(&["teams", "list", "--order-by", "name"]).await);
    let names: Vec<&str> = teams["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Admins", "Editors", "Viewers"]);
    let editors = teams["results"][1]["uid"].as_str().unwrap().to_owned();
    let viewers = teams["results"][2]["uid"].as_str().unwrap().to_owned();
    let csv = ok(&tools(&["teams", "list", "-o", "csv"]).await);
    assert!(csv.starts_with("uid,name\n"), "{csv}");
    let team = json(&svc_env(&env, &["teams", "get", &editors], None).await);
    assert_eq!(team["name"], "Editors");
    let renamed = json(&svc_env(&env, &["teams", "rename", &editors, "Writers"], None).await);
    assert_eq!(renamed["name"], "Writers");

    // A team by name or by uid.
    let ana = json(
        &tools(&[
            "users",
            "create",
            "--email",
            "ana@example.com",
            "--team",
            "Writers",
            "--first-name",
            "Ana",
        ])
        .await,
    );
    assert_eq!(ana["group"], editors.as_str());
    let uid = ana["uid"].as_str().unwrap().to_owned();
    let bo = json(
        &svc_env(
            &env,
            &[
                "users",
                "create",
                "--email",
                "bo@example.com",
                "--team",
                &viewers,
            ],
            None,
        )
        .await,
    );
    assert_eq!(bo["group"], viewers.as_str());
    let err = code(
        &tools(&[
            "users",
            "create",
            "--email",
            "x@example.com",
            "--team",
            "Nope",
        ])
        .await,
        2,
    );
    assert!(err.contains("Writers") && err.contains("Viewers"), "{err}");

    let got = json(&svc_env(&env, &["users", "get", &uid], None).await);
    assert_eq!(got["email"], "ana@example.com");
    let filter = format!("group={editors}");
    let members = json(&svc_env(&env, &["users", "list", "-f", &filter], None).await);
    assert_eq!(members["count"], 1);
    let ndjson = ok(&tools(&["users", "list", "--order-by", "email", "-o", "ndjson"]).await);
    assert_eq!(ndjson.lines().count(), 2);
    let table = ok(&tools(&["users", "list", "-o", "table"]).await);
    assert!(
        table.contains("bo@example.com") && table.ends_with("\n2 of 2 users\n"),
        "{table}"
    );

    let moved = json(
        &svc_env(
            &env,
            &["users", "update-group", &uid, "--team", "Viewers"],
            None,
        )
        .await,
    );
    assert_eq!(moved["group"], viewers.as_str());
    ok(&svc_env(&env, &["users", "delete", &uid, "-y"], None).await);
    code(&svc_env(&env, &["users", "get", &uid], None).await, 3);

    // Without a tools token, the API key serves too; without either, a usage error.
    let out = run(&emulator, &["users", "list"]).await;
    assert_eq!(json(&out)["count"], 1);
    let err = code(
        &svc_env(&hosts(&emulator), &["teams", "list"], None).await,
        2,
    );
    assert!(err.contains("--tools-token"), "{err}");
    // A wrong tools token: 3, with a hint naming the flags.
    let mut wrong = hosts(&emulator);
    wrong.push(("SVC_TOOLS_TOKEN", "svc_tools_wrong".to_owned()));
    let err = code(&svc_env(&wrong, &["teams", "list"], None).await, 3);
    assert!(
        err.contains("hint:") && err.contains("--tools-token"),
        "{err}"
    );
    assert!(!err.contains("svc_tools_wrong"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn resources_reload() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let out = run(&emulator, &["resources", "reload", "shop"]).await;
    ok(&out);
    assert!(stderr(&out).contains("reloaded resource shop"));
    let mut env = hosts(&emulator);
    env.push(("SVC_TOOLS_TOKEN", emulator.tools_token().to_owned()));
    ok(&svc_env(&env, &["resources", "reload", "--tools"], None).await);
    let mut env = hosts(&emulator);
    env.push(("SVC_TOKEN", emulator.resource_tokens()["shop"].clone()));
    ok(&svc_env(&env, &["resources", "reload", "shop"], None).await);
    code(&run(&emulator, &["resources", "reload", "nosuch"]).await, 3);
    code(&run(&emulator, &["resources", "reload"]).await, 2);
    code(
        &run(&emulator, &["resources", "reload", "shop", "--tools"]).await,
        2,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn vite_keys_win_over_svc_keys_and_flags_win_over_both() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let key = emulator.api_key().to_owned();
    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        format!("http://{addr}")
    };
    let env = vec![
        ("SVC_PROJECT", "nope".to_owned()),
        ("VITE_SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", dead.clone()),
        ("VITE_SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", format!("{dead}/api")),
        ("VITE_SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
        ("SVC_ENVIRONMENT", "staging".to_owned()),
        ("VITE_SVC_ENVIRONMENT", "prod".to_owned()),
        ("SVC_DRAFT", "1".to_owned()),
        ("VITE_SVC_DRAFT", " Off ".to_owned()),
        ("SVC_API_KEY", key.clone()),
    ];
    let project = json(&svc_env(&env, &["projects", "get"], None).await);
    assert_eq!(project["unique_name"], "demo");
    ok(&svc_env(&env, &["records", "get", "shop", "orders", "1"], None).await);
    // VITE_SVC_DRAFT=off wins over SVC_DRAFT=1: a published page.
    let page = json(
        &svc_env(
            &env,
            &["pages", "create", "--data", r#"{"uid": "pub"}"#],
            None,
        )
        .await,
    );
    assert_ne!(page["draft"], true);
    // --draft wins over the environment.
    let page = json(
        &svc_env(
            &env,
            &[
                "--draft",
                "pages",
                "create",
                "--data",
                r#"{"uid": "sketch"}"#,
            ],
            None,
        )
        .await,
    );
    assert_eq!(page["draft"], true);
    // A flag wins over VITE_.
    code(
        &svc_env(&env, &["--project", "nope", "projects", "get"], None).await,
        3,
    );
    code(
        &svc_env(
            &env,
            &[
                "--api-base-url",
                &dead,
                "records",
                "get",
                "shop",
                "orders",
                "1",
            ],
            None,
        )
        .await,
        4,
    );
    // An empty VITE_ value is unset: SVC_ applies.
    let mut env2 = hosts(&emulator);
    env2.push(("VITE_SVC_PROJECT", String::new()));
    env2.push(("SVC_API_KEY", key));
    let project = json(&svc_env(&env2, &["projects", "get"], None).await);
    assert_eq!(project["unique_name"], "demo");
}

#[tokio::test(flavor = "multi_thread")]
async fn usage_errors_say_what_to_do() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    // Bad flags and missing arguments: clap's exit code 2.
    for args in [
        &["users", "list", "--no-such-flag"][..],
        &["sql", "shop"],
        &["teams", "rename", "uid-only"],
        &["records", "list", "shop", "orders", "-o", "xml"],
        &["nosuchcommand"],
    ] {
        let err = code(&run(&emulator, args).await, 2);
        assert!(err.contains("error:"), "{args:?}: {err}");
    }
    // No project.
    let err = code(
        &svc(
            &[("SVC_API_KEY", "k")],
            &["records", "list", "shop", "orders"],
            None,
        )
        .await,
        2,
    );
    assert!(
        err.contains("--project") && err.contains("SVC_PROJECT"),
        "{err}"
    );
    // Help and version succeed.
    let help = ok(&svc(&[], &["--help"], None).await);
    assert!(
        help.contains("Exit codes") && help.contains("whoami"),
        "{help}"
    );
    ok(&svc(&[], &["--version"], None).await);
    let help = ok(&svc(&[], &["sql", "--help"], None).await);
    assert!(help.contains("--param"), "{help}");
}

#[tokio::test(flavor = "multi_thread")]
async fn proxy_needs_a_session() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let config = TempDir::new("proxy");
    let mut env = env(&emulator);
    env.push(("SVC_CONFIG_DIR", config.path().to_owned()));
    let err = code(
        &svc_env(&env, &["proxy", "GET", "http://127.0.0.1:9/"], None).await,
        2,
    );
    assert!(err.contains("svc login"), "{err}");
    let err = code(
        &svc_env(&env, &["proxy", "G E T", "http://127.0.0.1:9/"], None).await,
        2,
    );
    assert!(err.contains("HTTP method"), "{err}");
    let err = code(
        &svc_env(
            &env,
            &["proxy", "GET", "http://127.0.0.1:9/", "-H", "no-colon"],
            None,
        )
        .await,
        2,
    );
    assert!(err.contains("Name: value"), "{err}");
    code(
        &svc_env(
            &env,
            &["proxy", "POST", "http://x/", "--json", "{}", "--raw", "x"],
            None,
        )
        .await,
        2,
    );
}

/// A tiny upstream on loopback: answers `{"method", "target", "body"}` as JSON, or `404` for
/// paths starting with `/missing`.
fn upstream() -> std::net::SocketAddr {
    common::serve(|request| {
        if request.target.starts_with("/missing") {
            ("404 Not Found", "{\"error\": \"no such thing\"}".to_owned())
        } else {
            let answer = serde_json::json!({
                "method": request.method,
                "target": request.target,
                "body": String::from_utf8_lossy(&request.body),
            });
            ("200 OK", answer.to_string())
        }
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn proxy_with_a_session() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let config = TempDir::new("proxy-session");
    let mut env = hosts(&emulator);
    env.push(("SVC_CONFIG_DIR", config.path().to_owned()));
    ok(&svc_env(
        &env,
        &["register", "--email", "bo@example.com", "--password-stdin"],
        Some("a long enough password"),
    )
    .await);
    ok(&svc_env(
        &env,
        &["login", "--email", "bo@example.com", "--password-stdin"],
        Some("a long enough password"),
    )
    .await);
    let addr = upstream();

    let url = format!("http://{addr}/orders");
    let out = svc_env(
        &env,
        &[
            "proxy",
            "post",
            &url,
            "-q",
            "dry_run=1",
            "-H",
            "X-Request-Id: 42",
            "--json",
            r#"{"total": 12.5}"#,
        ],
        None,
    )
    .await;
    let echoed = json(&out);
    assert!(
        stderr(&out).contains("upstream answered 200"),
        "{}",
        stderr(&out)
    );
    assert_eq!(echoed["method"], "POST");
    assert_eq!(echoed["target"], "/orders?dry_run=1");
    let body: Value = serde_json::from_str(echoed["body"].as_str().unwrap()).unwrap();
    assert_eq!(body, serde_json::json!({"total": 12.5}));

    // The upstream's error: its body on stdout, exit code 3.
    let out = svc_env(
        &env,
        &["proxy", "GET", &format!("http://{addr}/missing")],
        None,
    )
    .await;
    let err = code(&out, 3);
    assert!(err.contains("404"), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"error\": \"no such thing\"}"
    );

    // A target off the allow-list: the proxy's own refusal, with a hint.
    let err = code(
        &svc_env(&env, &["proxy", "GET", "http://192.0.2.1/"], None).await,
        3,
    );
    assert!(err.contains("allow-list"), "{err}");
}

/// A server whose page settings carry terminal control sequences (clear screen, set the window
/// title, bell), and whose error messages do too.
fn hostile_server() -> std::net::SocketAddr {
    common::serve(|request| {
        if request.target.contains("/view_settings/missing") {
            (
                "400 Bad Request",
                r#"{"error": "no \u001b[2Jsuch\u0007 page", "error_code": "invalid"}"#.to_owned(),
            )
        } else {
            (
                "200 OK",
                r#"[{"uid": "p\u001b]0;pwned\u0007", "name": "\u001b[31mred\u001b[0m"}]"#
                    .to_owned(),
            )
        }
    })
}

/// Regression: control characters from server data reached the terminal as they were, in
/// tables and error messages. They are shown escaped there; JSON stays exact.
#[tokio::test(flavor = "multi_thread")]
async fn control_characters_from_the_server_are_escaped_in_tables_and_errors() {
    let addr = hostile_server();
    let app = format!("http://{addr}/api");
    let env = [
        ("SVC_PROJECT", "demo"),
        ("SVC_APP_BASE_URL", app.as_str()),
        ("SVC_API_KEY", "svc_key_test"),
    ];
    let table = ok(&svc(&env, &["pages", "list", "-o", "table"], None).await);
    assert!(!table.contains(['\u{1b}', '\u{7}']), "{table:?}");
    assert!(table.contains(r"p\u{1b}]0;pwned\u{7}"), "{table}");
    assert!(table.contains(r"\u{1b}[31mred\u{1b}[0m"), "{table}");

    let exact = json(&svc(&env, &["pages", "list", "-o", "json"], None).await);
    assert_eq!(exact[0]["uid"], "p\u{1b}]0;pwned\u{7}");
    assert_eq!(exact[0]["name"], "\u{1b}[31mred\u{1b}[0m");

    let out = svc(&env, &["pages", "get", "missing"], None).await;
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!stderr.contains(['\u{1b}', '\u{7}']), "{stderr:?}");
    assert!(stderr.contains(r"no \u{1b}[2Jsuch\u{7} page"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn deletes_off_a_terminal_need_yes() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    ok(&run(
        &emulator,
        &[
            "pages",
            "create",
            "--data",
            r#"{"uid": "keep", "name": "Keep"}"#,
        ],
    )
    .await);
    let mut tools = hosts(&emulator);
    tools.push(("SVC_TOOLS_TOKEN", emulator.tools_token().to_owned()));
    let user = json(
        &svc_env(
            &tools,
            &[
                "users",
                "create",
                "--email",
                "kept@example.com",
                "--team",
                "Editors",
            ],
            None,
        )
        .await,
    );
    let uid = user["uid"].as_str().unwrap().to_owned();
    for (out, what) in [
        (
            run(&emulator, &["records", "delete", "shop", "orders", "7"]).await,
            "record 7",
        ),
        (
            run(&emulator, &["pages", "delete", "keep"]).await,
            "page keep",
        ),
        (
            svc_env(&tools, &["users", "delete", &uid], None).await,
            "user",
        ),
    ] {
        let err = code(&out, 2);
        assert!(err.contains(&format!("not deleting {what}")), "{err}");
        assert!(err.contains("--yes"), "{err}");
    }
    // Nothing was deleted.
    ok(&run(&emulator, &["records", "get", "shop", "orders", "7"]).await);
    ok(&run(&emulator, &["pages", "get", "keep"]).await);
    ok(&svc_env(&tools, &["users", "get", &uid], None).await);
    // Stdin piped in is no terminal either: a "y" there is not an answer.
    let out = run_with(
        &emulator,
        &["records", "delete", "shop", "orders", "7"],
        Some("y\n"),
    )
    .await;
    code(&out, 2);
    ok(&run(&emulator, &["records", "get", "shop", "orders", "7"]).await);
}

/// `svc emulator export DIR` writes the running emulator's state where an import reads it; a
/// directory of other files is refused before anything is asked.
#[tokio::test]
async fn emulator_export_from_the_command_line_is_what_an_import_starts_from() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    ok(&run(
        &emulator,
        &["records", "delete", "shop", "orders", "5", "--yes"],
    )
    .await);
    let temp = TempDir::new("export");
    let dir = std::path::Path::new(temp.path());
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    let refused = run(&emulator, &["emulator", "export", temp.path()]).await;
    code(&refused, 2);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("not an export"), "{stderr}");
    std::fs::remove_file(dir.join("notes.txt")).unwrap();
    ok(&run(&emulator, &["emulator", "export", temp.path()]).await);
    emulator.shutdown().await;

    let config = EmulatorConfig::default()
        .import(dir)
        .import_on_rows(svc_emulator::ImportOnRows::Replace);
    let again = Emulator::start(config).await.unwrap();
    let gone = run(&again, &["records", "get", "shop", "orders", "5"]).await;
    assert!(
        !gone.status.success(),
        "order 5 was deleted before the export"
    );
    ok(&run(&again, &["records", "get", "shop", "orders", "6"]).await);
    again.shutdown().await;
}

/// `svc emulator snapshot|restore|reset|snapshots` against a running emulator, for the suites
/// of other languages.
#[tokio::test]
async fn emulator_resets_and_snapshots_from_the_command_line() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let count = || async {
        let out = run(
            &emulator,
            &["records", "list", "shop", "products", "-o", "json"],
        )
        .await;
        json(&out)["count"].as_u64().unwrap()
    };
    let before = count().await;
    let saved = json(&run(&emulator, &["emulator", "snapshot", "seeded", "-o", "json"]).await);
    assert_eq!(saved["name"], "seeded");
    assert_eq!(
        saved["resources"],
        serde_json::json!(["__svc_app__", "shop"])
    );
    let create = [
        "records",
        "create",
        "shop",
        "products",
        "--data",
        r#"{"sku": "LAMP-1", "name": "Lamp", "price": 9.5}"#,
    ];
    ok(&run(&emulator, &create).await);
    assert_eq!(count().await, before + 1);
    ok(&run(&emulator, &["emulator", "restore", "seeded"]).await);
    assert_eq!(count().await, before);
    ok(&run(&emulator, &create).await);
    ok(&run(&emulator, &["emulator", "reset"]).await);
    assert_eq!(count().await, before);
    let listed = json(&run(&emulator, &["emulator", "snapshots", "-o", "json"]).await);
    let names: Vec<&str> = listed["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["start", "seeded"]);

    // An unknown snapshot: the emulator's message, and a failing exit.
    let out = run(&emulator, &["emulator", "restore", "nope"]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no snapshot \"nope\"; its snapshots: seeded, start"),
        "{stderr}"
    );
    // No key: nothing sent, and a hint.
    let out = svc(
        &[
            ("SVC_API_BASE_URL", emulator.api_base_url()),
            ("SVC_PROJECT", "demo"),
        ],
        &["emulator", "reset"],
        None,
    )
    .await;
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("nothing was sent"), "{stderr}");
}

/// `svc emulator stub|stubs|unstub` against a running emulator: a stub declared from the
/// command line answers the next matching request, is listed with its counts, and goes.
#[tokio::test]
async fn emulator_stubs_from_the_command_line() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let stub = r#"{"request": {"method": "GET", "model": "products"},
                   "response": {"status": 409, "json": {"error": "Busy."}}, "times": 1}"#;
    let declared = json(&run(&emulator, &["emulator", "stub", stub, "-o", "json"]).await);
    let id = declared["id"].as_u64().unwrap();
    // The next list meets the stub: the emulator's answer, and a failing exit.
    let out = run(&emulator, &["records", "list", "shop", "products"]).await;
    assert!(!out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("409 Conflict: Busy"),
        "{out:?}"
    );
    ok(&run(&emulator, &["records", "list", "shop", "products"]).await);
    let listed = json(&run(&emulator, &["emulator", "stubs", "-o", "json"]).await);
    assert_eq!(listed["stubs"][0]["answered"], 1);
    // From a file.
    let dir = std::env::temp_dir().join(format!("svc-stub-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("stub.json");
    std::fs::write(
        &file,
        r#"{"request": {"method": "DELETE"}, "response": {"status": 403}}"#,
    )
    .unwrap();
    ok(&run(
        &emulator,
        &["emulator", "stub", &format!("@{}", file.display())],
    )
    .await);
    assert_eq!(emulator.stubs().len(), 2);
    ok(&run(&emulator, &["emulator", "unstub", &id.to_string()]).await);
    assert_eq!(emulator.stubs().len(), 1);
    ok(&run(&emulator, &["emulator", "unstub", "--all"]).await);
    assert!(emulator.stubs().is_empty());
    // Bad input: nothing sent, and what a stub is.
    for bad in ["not json", "@/no/such/file.json", "[1]"] {
        let out = run(&emulator, &["emulator", "stub", bad]).await;
        assert_eq!(out.status.code(), Some(2), "{bad}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("nothing was sent"), "{bad}: {stderr}");
        assert!(stderr.contains("\"response\""), "{bad}: {stderr}");
    }
    // A stub the emulator refuses: its rule, in its words.
    let out = run(
        &emulator,
        &["emulator", "stub", r#"{"response": {"status": 700}}"#],
    )
    .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("from 200 to 599"), "{stderr}");
    assert!(emulator.stubs().is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}
