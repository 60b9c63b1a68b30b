//! An action and a workflow end to end on every database the emulator serves: `svc` (through
//! the SDK) against an emulator whose resource is a SQLite file, a PostgreSQL database or a
//! MariaDB database, each seeded with the same table. The statements are ones all three run
//! alike (MySQL has no `UPDATE ... RETURNING`: an update, then a select).
//!
//! The SQLite test runs in `cargo test`; the PostgreSQL one needs PostgreSQL's programs and the
//! MariaDB one a server, so they are `#[ignore]`d there and run by `cargo xtask postgres` and
//! `cargo xtask mysql` (steps of `.ci/run`), which fail when no server can be had.

mod common;

use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig};

const KEY: &str = "svc_key_actions_databases";
const ROWS: &str = "INSERT INTO orders (id, status, note) VALUES (1, 'paid', NULL), (2, 'paid', NULL), (3, 'paid', NULL);";

/// The config file of a project whose resource `shop` is `database` (none: the emulator's own
/// SQLite database, seeded with `seed`).
fn config(database: Option<String>, seed: &str) -> Value {
    let mut shop = json!({
        "name": "shop",
        "token": "tok_shop_actions_databases",
        "actions": [
            {"name": "refund", "sql": [
                "UPDATE orders SET status = 'refunded' WHERE id = :id",
                "SELECT id, status, note FROM orders WHERE id = :id"
            ]},
            {"name": "note", "sql": [
                "UPDATE orders SET note = :note WHERE id = :id",
                "SELECT id, status, note FROM orders WHERE id = :id"
            ]},
            {"name": "duplicate", "sql": "INSERT INTO orders (id, status) VALUES (:id, 'copy')"}
        ]
    });
    match database {
        Some(url) => shop["database"] = json!(url),
        None => shop["seed_sql"] = json!(seed),
    }
    json!({"projects": [{
        "name": "acts",
        "api_keys": [KEY],
        "resources": [shop],
        "workflows": [
            {"uid": "wf-refund", "steps": [
                {"resource": "shop", "action": "refund"},
                {"resource": "shop", "action": "note"}
            ]},
            {"uid": "wf-refund-twice", "steps": [
                {"resource": "shop", "action": "refund"},
                {"resource": "shop", "action": "duplicate"}
            ]}
        ]
    }]})
}

/// Runs `svc` against the emulator at `url` with the project's API key and nothing else.
async fn svc(url: &str, args: &[&str]) -> Output {
    let env = vec![
        ("SVC_PROJECT", "acts".to_owned()),
        ("SVC_API_BASE_URL", url.to_owned()),
        ("SVC_API_KEY", KEY.to_owned()),
    ];
    common::run::svc(env, args, None).await
}

/// Stdout as JSON, after checking the exit code.
fn json_out(out: &Output, code: i32) -> Value {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    if out.stdout.is_empty() {
        return Value::Null;
    }
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"))
}

/// The whole story on one database: an action, a workflow that succeeds, one that fails half
/// way (its first step's change kept), and one refused before any step runs.
async fn end_to_end(database: Option<String>, seed: &str) {
    let dir = common::run::TempDir::new("actions-db");
    let path = dir.0.join("emulator.json");
    std::fs::write(&path, config(database, seed).to_string()).unwrap();
    let emulator = Emulator::start(EmulatorConfig::default().config_file(&path))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let url = emulator.api_base_url().to_owned();
    let url = url.as_str();

    let out = svc(
        url,
        &["actions", "run", "shop", "refund", "--data", r#"{"id": 1}"#],
    )
    .await;
    assert_eq!(
        json_out(&out, 0),
        json!([{"id": 1, "status": "refunded", "note": null}])
    );

    let out = svc(
        url,
        &[
            "workflows",
            "run",
            "wf-refund",
            "--data",
            r#"{"id": 2, "note": "damaged"}"#,
        ],
    )
    .await;
    assert_eq!(
        json_out(&out, 0),
        json!([{"id": 2, "status": "refunded", "note": "damaged"}])
    );

    // Step 2 inserts a key that exists: the run fails (exit 6) naming it; step 1 stays.
    let out = svc(
        url,
        &[
            "workflows",
            "run",
            "wf-refund-twice",
            "--data",
            r#"{"id": 3}"#,
        ],
    )
    .await;
    assert_eq!(json_out(&out, 6), Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("step 2 (shop.duplicate): "), "{stderr}");
    let out = svc(url, &["records", "get", "shop", "orders", "3"]).await;
    assert_eq!(json_out(&out, 0)["status"], "refunded");

    // An input missing: refused before any step runs (exit 3), nothing changed.
    let out = svc(
        url,
        &["workflows", "run", "wf-refund", "--data", r#"{"id": 1}"#],
    )
    .await;
    assert_eq!(json_out(&out, 3), Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Missing input: note"), "{stderr}");
    let out = svc(url, &["records", "get", "shop", "orders", "1"]).await;
    assert_eq!(json_out(&out, 0)["note"], Value::Null);

    emulator.shutdown().await;
}

static NEXT: AtomicUsize = AtomicUsize::new(0);

#[tokio::test(flavor = "multi_thread")]
async fn on_sqlite() {
    end_to_end(
        None,
        &format!(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL, note TEXT);\n{ROWS}"
        ),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs PostgreSQL's programs: run with --ignored (cargo xtask postgres does)"]
async fn on_postgres() {
    let cluster = pg_cluster::Cluster::shared().unwrap_or_else(|e| panic!("{e}"));
    let name = format!(
        "cli_actions_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    cluster
        .create_database(&name)
        .unwrap_or_else(|e| panic!("{e}"));
    cluster
        .psql(
            &name,
            &format!("CREATE TABLE orders (id integer PRIMARY KEY, status text NOT NULL, note text);\n{ROWS}"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    end_to_end(Some(cluster.url(&name)), "").await;
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs MariaDB: run with --ignored (cargo xtask mysql does)"]
async fn on_mariadb() {
    let server = maria_server::Server::shared().unwrap_or_else(|e| panic!("{e}"));
    let database = server
        .database("cli_actions")
        .unwrap_or_else(|e| panic!("{e}"));
    database
        .sql(&format!(
            "CREATE TABLE orders (id INT PRIMARY KEY, status VARCHAR(20) NOT NULL, note TEXT);\n{ROWS}"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    end_to_end(Some(database.url()), "").await;
}
