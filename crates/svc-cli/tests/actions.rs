//! `svc actions run` and `svc workflows run` against an emulator started with a config file
//! that declares actions and workflows (docs/contract.md 5.6) on a SQLite resource: results in
//! each format, `--data` inline, from a file and from stdin, the data changed, and the exit
//! codes that tell a failed run (6) from a refused request (3), no answer (4) and bad input (2).

mod common;

use std::process::Output;

use common::run::{TempDir, svc};

use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig};

const KEY: &str = "svc_key_cli_actions";
const TOKEN: &str = "tok_shop_cli_actions";

/// The emulator's config file, as a user would write it.
fn config() -> Value {
    json!({
        "projects": [{
            "name": "acts",
            "api_keys": [KEY],
            "resources": [{
                "name": "shop",
                "token": TOKEN,
                "seed_sql": "CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL); INSERT INTO orders (id, status) VALUES (7, 'paid'), (8, 'paid'), (9, 'paid'), (10, 'paid');",
                "actions": [
                    {"name": "refund", "sql": "UPDATE orders SET status = 'refunded' WHERE id = :id RETURNING id, status"},
                    {"name": "ping", "answer": {"pong": true}},
                    {"name": "refund_and_break", "sql": [
                        "UPDATE orders SET status = 'refunded' WHERE id = :id",
                        "UPDATE orders SET no_such_column = 1 WHERE id = :id"
                    ]}
                ]
            }],
            "workflows": [
                {"uid": "wf-refund", "steps": [{"resource": "shop", "action": "refund"}]},
                {"uid": "wf-refund-then-break", "steps": [
                    {"resource": "shop", "action": "refund"},
                    {"resource": "shop", "action": "refund_and_break"}
                ]}
            ]
        }]
    })
}

/// The emulator, and the directory of its config file (kept until the test ends).
async fn emulator() -> (Emulator, TempDir) {
    let dir = TempDir::new("actions");
    let path = dir.0.join("emulator.json");
    std::fs::write(&path, config().to_string()).unwrap();
    let emulator = Emulator::start(EmulatorConfig::default().config_file(path))
        .await
        .expect("the emulator starts with actions and workflows in its config");
    (emulator, dir)
}

fn hosts(emulator: &Emulator) -> Vec<(&'static str, String)> {
    vec![
        ("SVC_PROJECT", "acts".to_owned()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
    ]
}

/// The project and the data host, with the API key.
fn with_key(emulator: &Emulator) -> Vec<(&'static str, String)> {
    let mut env = hosts(emulator);
    env.push(("SVC_API_KEY", KEY.to_owned()));
    env
}

/// Asserts the exit code and that no error shows a panic; returns stderr.
fn code(out: &Output, expected: i32) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(expected),
        "stdout: {}\nstderr: {stderr}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

fn stdout(out: &Output) -> String {
    code(out, 0);
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json_out(out: &Output) -> Value {
    serde_json::from_str(&stdout(out)).expect("JSON on stdout")
}

/// An order's status, read with `svc sql`.
async fn status(emulator: &Emulator, id: i64) -> String {
    let out = svc(
        with_key(emulator),
        &[
            "sql",
            "shop",
            "select status from orders where id = :id",
            "-p",
            &format!("id={id}"),
        ],
        None,
    )
    .await;
    json_out(&out)[0]["status"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn actions_run_print_their_result_and_change_data() {
    let (emulator, dir) = emulator().await;
    let env = || with_key(&emulator);

    let out = svc(
        env(),
        &["actions", "run", "shop", "refund", "--data", r#"{"id": 7}"#],
        None,
    )
    .await;
    assert_eq!(json_out(&out), json!([{"id": 7, "status": "refunded"}]));
    assert_eq!(status(&emulator, 7).await, "refunded");
    assert_eq!(status(&emulator, 8).await, "paid");

    // From a file, one row a line; from stdin, as CSV; with the resource's token only.
    let file = dir.0.join("refund.json");
    std::fs::write(&file, r#"{"id": 8}"#).unwrap();
    let data = format!("@{}", file.display());
    let out = svc(
        env(),
        &[
            "actions", "run", "shop", "refund", "--data", &data, "-o", "ndjson",
        ],
        None,
    )
    .await;
    assert_eq!(stdout(&out), "{\"id\":8,\"status\":\"refunded\"}\n");
    let mut token_only = hosts(&emulator);
    token_only.push(("SVC_TOKEN", TOKEN.to_owned()));
    let out = svc(
        token_only,
        &[
            "actions", "run", "shop", "refund", "--data", "-", "-o", "csv",
        ],
        Some(r#"{"id": 9}"#),
    )
    .await;
    assert_eq!(stdout(&out), "id,status\n9,refunded\n");
    assert_eq!(status(&emulator, 9).await, "refunded");

    // No --data: no inputs; a fixed answer prints as one value.
    let out = svc(env(), &["actions", "run", "shop", "ping"], None).await;
    assert_eq!(json_out(&out), json!({"pong": true}));
}

#[tokio::test(flavor = "multi_thread")]
async fn actions_exit_codes() {
    let (emulator, _dir) = emulator().await;
    let env = || with_key(&emulator);

    // The server refuses: a missing input, a failing statement (rolled back), unknown names.
    let out = svc(env(), &["actions", "run", "shop", "refund"], None).await;
    let stderr = code(&out, 3);
    assert!(stderr.contains("Missing input: id"), "{stderr}");
    let out = svc(
        env(),
        &[
            "actions",
            "run",
            "shop",
            "refund_and_break",
            "--data",
            r#"{"id": 10}"#,
        ],
        None,
    )
    .await;
    let stderr = code(&out, 3);
    assert!(stderr.contains("no_such_column"), "{stderr}");
    assert_eq!(status(&emulator, 10).await, "paid", "rolled back");
    for (resource, action) in [("shop", "nosuch"), ("nosuch", "refund")] {
        let out = svc(
            env(),
            &[
                "actions",
                "run",
                resource,
                action,
                "--data",
                r#"{"id": 10}"#,
            ],
            None,
        )
        .await;
        code(&out, 3);
    }

    // Bad input: nothing sent.
    for data in ["[10]", "{not json", "7"] {
        let out = svc(
            env(),
            &["actions", "run", "shop", "refund", "--data", data],
            None,
        )
        .await;
        code(&out, 2);
    }
    let out = svc(
        hosts(&emulator),
        &["actions", "run", "shop", "refund"],
        None,
    )
    .await;
    let stderr = code(&out, 2);
    assert!(stderr.contains("no credential"), "{stderr}");
    assert_eq!(status(&emulator, 10).await, "paid");
}

#[tokio::test(flavor = "multi_thread")]
async fn workflows_run_and_a_failed_run_exits_with_6() {
    let (emulator, _dir) = emulator().await;
    let env = || with_key(&emulator);

    let out = svc(
        env(),
        &["workflows", "run", "wf-refund", "--data", r#"{"id": 7}"#],
        None,
    )
    .await;
    assert_eq!(json_out(&out), json!([{"id": 7, "status": "refunded"}]));
    assert_eq!(status(&emulator, 7).await, "refunded");

    // The run fails at step 2: exit 6, the server's reason on stderr, nothing on stdout;
    // step 1's write stays.
    let out = svc(
        env(),
        &[
            "workflows",
            "run",
            "wf-refund-then-break",
            "--data",
            r#"{"id": 8}"#,
        ],
        None,
    )
    .await;
    let stderr = code(&out, 6);
    assert!(
        stderr.contains(
            "error: workflow \"wf-refund-then-break\" failed: step 2 (shop.refund_and_break): "
        ) && stderr.contains("no_such_column"),
        "{stderr}"
    );
    assert!(stderr.contains("hint: the workflow ran"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(
        status(&emulator, 8).await,
        "refunded",
        "step 1's write stays"
    );

    // Refused requests, nothing run: 3. A missing or an unknown input is checked against
    // every step before the first runs; an unknown workflow.
    let out = svc(env(), &["workflows", "run", "wf-refund"], None).await;
    let stderr = code(&out, 3);
    assert!(stderr.contains("Missing input: id"), "{stderr}");
    let out = svc(
        env(),
        &[
            "workflows",
            "run",
            "wf-refund",
            "--data",
            r#"{"id": 9, "x": 1}"#,
        ],
        None,
    )
    .await;
    let stderr = code(&out, 3);
    assert!(stderr.contains("Unknown input: x"), "{stderr}");
    let out = svc(env(), &["workflows", "run", "wf-nosuch"], None).await;
    code(&out, 3);

    // A resource's token does not serve workflows: 2, nothing sent.
    let mut token_only = hosts(&emulator);
    token_only.push(("SVC_TOKEN", TOKEN.to_owned()));
    let out = svc(
        token_only,
        &["workflows", "run", "wf-refund", "--data", r#"{"id": 9}"#],
        None,
    )
    .await;
    let stderr = code(&out, 2);
    assert!(stderr.contains("--api-key"), "{stderr}");
    assert_eq!(status(&emulator, 9).await, "paid");

    // Nobody listening: 4.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let out = svc(
        vec![
            ("SVC_PROJECT", "acts".to_owned()),
            ("SVC_API_BASE_URL", format!("http://{addr}")),
            ("SVC_API_KEY", KEY.to_owned()),
        ],
        &["workflows", "run", "wf-refund", "--data", r#"{"id": 9}"#],
        None,
    )
    .await;
    code(&out, 4);
}
