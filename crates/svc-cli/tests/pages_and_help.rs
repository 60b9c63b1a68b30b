//! The `svc` binary: page `params` given and shown as JSON, `--order-by -field`, and the help
//! (global options once, examples that run).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig};

/// Runs `svc` with only `env` (and PATH), in `cwd`.
async fn svc_in(cwd: Option<&Path>, env: &[(&str, String)], args: &[&str]) -> Output {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let cwd = cwd.map(Path::to_owned);
    tokio::task::spawn_blocking(move || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_svc"));
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env)
            .args(&args)
            .stdin(Stdio::null());
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        command.output().expect("svc runs")
    })
    .await
    .unwrap()
}

async fn svc(env: &[(&str, String)], args: &[&str]) -> Output {
    svc_in(None, env, args).await
}

fn env(emulator: &Emulator) -> Vec<(&'static str, String)> {
    vec![
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
        ("SVC_API_KEY", emulator.api_key().to_owned()),
    ]
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

fn json_out(out: &Output) -> Value {
    serde_json::from_str(&ok(out)).expect("JSON on stdout")
}

fn code(out: &Output, expected: i32) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(expected), "{err}");
    err
}

#[tokio::test(flavor = "multi_thread")]
async fn pages_take_params_as_json_and_tables_show_them_parsed() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let env = env(&emulator);

    // As JSON: sent as the JSON text the API stores; JSON output keeps that string.
    let created = json_out(
        &svc(
            &env,
            &[
                "pages",
                "create",
                "--data",
                r#"{"uid": "orders", "name": "Orders", "params": {"elements": [{"type": "table", "n": 1.5}]}}"#,
            ],
        )
        .await,
    );
    assert_eq!(
        created["params"],
        r#"{"elements":[{"type":"table","n":1.5}]}"#
    );
    // As a string, it is sent as it is (spaces and all).
    let text = "{\n  \"elements\": [ ]\n}";
    let created = json_out(
        &svc(
            &env,
            &[
                "pages",
                "create",
                "--data",
                &json!({"uid": "spaced", "params": text}).to_string(),
            ],
        )
        .await,
    );
    assert_eq!(created["params"], text);
    let got = json_out(&svc(&env, &["pages", "get", "spaced", "-o", "ndjson"]).await);
    assert_eq!(got["params"], text);
    // A table shows it parsed, on one line.
    let table = ok(&svc(&env, &["pages", "get", "spaced", "-o", "table"]).await);
    let line = table.lines().find(|l| l.starts_with("params")).unwrap();
    assert!(line.ends_with(r#"{"elements":[]}"#), "{table}");
    let table = ok(&svc(&env, &["pages", "list", "-o", "table"]).await);
    assert!(
        table.contains(r#"{"elements":[{"type":"table","n":1.5}]}"#),
        "{table}"
    );

    // What `pages get` prints can be given back: the whole page to create, `.params` (a JSON
    // string, as `jq .params` prints it) to update.
    let page = json_out(&svc(&env, &["pages", "get", "orders"]).await);
    let mut copy = page.clone();
    copy["uid"] = json!("orders-copy");
    let copied = json_out(&svc(&env, &["pages", "create", "--data", &copy.to_string()]).await);
    assert_eq!(copied["params"], page["params"]);
    let updated = json_out(
        &svc(
            &env,
            &[
                "pages",
                "update",
                "spaced",
                "--data",
                &page["params"].to_string(),
            ],
        )
        .await,
    );
    assert_eq!(updated["params"], page["params"]);

    // Not a structure: stopped before sending, with what to give.
    let err = code(
        &svc(&env, &["pages", "create", "--data", r#"{"params": 3}"#]).await,
        2,
    );
    assert!(err.contains("params") && err.contains("hint:"), "{err}");
}

/// An order's total: a number, or a decimal in a string.
fn total(record: &Value) -> f64 {
    let total = &record["total"];
    total
        .as_f64()
        .or_else(|| total.as_str()?.parse().ok())
        .unwrap_or_else(|| panic!("no total in {record}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn order_by_takes_a_descending_field_after_a_space() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let env = env(&emulator);
    let page = json_out(
        &svc(
            &env,
            &[
                "records",
                "list",
                "shop",
                "orders",
                "--order-by",
                "-total",
                "--per-page",
                "5",
            ],
        )
        .await,
    );
    let totals: Vec<f64> = page["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(total)
        .collect();
    assert_eq!(totals.len(), 5);
    assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{totals:?}");
    let with_equals = json_out(
        &svc(
            &env,
            &[
                "records",
                "list",
                "shop",
                "orders",
                "--order-by=-total",
                "--per-page",
                "5",
            ],
        )
        .await,
    );
    assert_eq!(with_equals["results"], page["results"]);
    // The same for export, users and teams.
    let first = ok(&svc(
        &env,
        &[
            "records",
            "export",
            "shop",
            "orders",
            "--order-by",
            "-total",
        ],
    )
    .await);
    let first: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    assert_eq!(total(&first), totals[0]);
    let mut tools = env.clone();
    tools.push(("SVC_TOOLS_TOKEN", emulator.tools_token().to_owned()));
    ok(&svc(&tools, &["teams", "list", "--order-by", "-name"]).await);

    // A forgotten value is not an option name taken as the ordering.
    let err = code(
        &svc(
            &env,
            &[
                "records",
                "list",
                "shop",
                "orders",
                "--per-page",
                "5",
                "--order-by",
                "--page",
            ],
        )
        .await,
        2,
    );
    assert!(err.contains("--order-by -total"), "{err}");
    code(
        &svc(
            &env,
            &[
                "records",
                "list",
                "shop",
                "orders",
                "--order-by",
                "--per-page",
                "5",
            ],
        )
        .await,
        2,
    );
}

/// `svc ARGS --help`.
async fn help(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.push("--help");
    ok(&svc(&[], &all).await)
}

#[tokio::test(flavor = "multi_thread")]
async fn help_lists_the_global_options_once() {
    let main = help(&[]).await;
    for option in [
        "--profile",
        "--api-base-url",
        "--api-key",
        "--ca-cert",
        "--output",
    ] {
        assert!(main.contains(option), "{option}: {main}");
    }
    for command in [
        &["records", "list"][..],
        &["records", "export"],
        &["pages"],
        &["pages", "create"],
        &["sql"],
        &["login"],
        &["users", "list"],
    ] {
        let text = help(command).await;
        assert!(!text.contains("--api-base-url"), "{command:?}: {text}");
        assert!(text.contains("see `svc --help`"), "{command:?}: {text}");
        assert!(text.lines().count() < 60, "{command:?}: {text}");
    }
    for command in [
        &[][..],
        &["records", "list"],
        &["records", "export"],
        &["pages"],
        &["sql"],
        &["login"],
    ] {
        assert!(help(command).await.contains("Examples:"), "{command:?}");
    }
}

/// The example lines (`  svc ...`) of a help text.
fn examples(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Examples:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_owned())
        .filter(|l| l.starts_with("svc "))
        .collect()
}

/// Splits a command line as a shell would, for the quoting the examples use: '...' and "..."
/// (with \" inside), no expansions. A `#` comment and anything from a `|` on are dropped.
fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                w.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => w.extend(chars.next()),
                        c => w.push(c),
                    }
                }
            }
            '|' | '#' if word.is_none() => break,
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

#[tokio::test(flavor = "multi_thread")]
async fn the_examples_in_the_help_run() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let work = std::env::temp_dir().join(format!("svc-help-examples-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("svc")).unwrap();
    // The main help's example uses a profile called `local`.
    let profile = json!({"profiles": {"local": {
        "api_base_url": emulator.api_base_url(),
        "app_base_url": emulator.app_base_url(),
        "project": emulator.project().to_string(),
        "api_key": emulator.api_key(),
    }}});
    let config: PathBuf = work.join("svc").join("config.json");
    std::fs::write(&config, profile.to_string()).unwrap();
    let mut env = env(&emulator);
    env.push(("SVC_CONFIG", config.to_str().unwrap().to_owned()));

    let mut ran = 0;
    for command in [
        &[][..],
        &["records", "list"],
        &["records", "export"],
        &["pages"],
        &["sql"],
    ] {
        for line in examples(&help(command).await) {
            // Lines that start a server, write through the shell or need an id or a file of
            // the reader's are shown, not run.
            if line.contains(['&', '>', '@']) || line.contains("UID") {
                continue;
            }
            let words = words(&line);
            let args: Vec<&str> = words.iter().skip(1).map(String::as_str).collect();
            let out = svc_in(Some(&work), &env, &args).await;
            assert!(
                out.status.success(),
                "{line}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    assert!(ran >= 10, "only {ran} examples ran");
    assert!(work.join("orders.csv").exists());
    std::fs::remove_dir_all(&work).unwrap();
}

#[tokio::test]
async fn a_table_of_one_page_says_how_many_in_all_and_how_to_get_the_next() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let env = env(&emulator);
    let count = json_out(
        &svc(
            &env,
            &["records", "list", "shop", "orders", "--per-page", "1"],
        )
        .await,
    )["count"]
        .as_u64()
        .unwrap();
    let pages = count.div_ceil(5);
    let table = ok(&svc(
        &env,
        &[
            "records",
            "list",
            "shop",
            "orders",
            "--per-page",
            "5",
            "--page",
            "2",
            "-o",
            "table",
        ],
    )
    .await);
    assert!(
        table.ends_with(&format!(
            "5 of {count} records, page 2 of {pages}; next: --page 3\n"
        )),
        "{table}"
    );
    // The last page has no next; JSON and CSV stay as they were (no footer).
    let last = ok(&svc(
        &env,
        &[
            "records",
            "list",
            "shop",
            "orders",
            "--per-page",
            "5",
            "--page",
            &pages.to_string(),
            "-o",
            "table",
        ],
    )
    .await);
    assert!(
        last.trim_end()
            .ends_with(&format!("page {pages} of {pages}")),
        "{last}"
    );
    let csv = ok(&svc(
        &env,
        &[
            "records",
            "list",
            "shop",
            "orders",
            "--per-page",
            "5",
            "-o",
            "csv",
        ],
    )
    .await);
    assert!(!csv.contains("records, page"), "{csv}");
}

#[tokio::test(flavor = "multi_thread")]
async fn man_pages_for_one_command() {
    let out = ok(&svc(&[], &["man", "records", "export"]).await);
    assert!(out.contains(".TH svc-records-export 1"), "{out}");
    assert!(out.contains("svc records export"), "{out}");
    assert!(out.contains("\\-\\-out"), "{out}");
    let out = ok(&svc(&[], &["man", "users", "update-group"]).await);
    assert!(out.contains(".TH svc-users-update-group 1"), "{out}");
    assert!(ok(&svc(&[], &["man"]).await).contains(".TH svc 1"));
    let wrong = svc(&[], &["man", "records", "nope"]).await;
    assert_eq!(wrong.status.code(), Some(2));
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        err.contains("`svc records` has no command \"nope\"") && err.contains("export"),
        "{err}"
    );
}
