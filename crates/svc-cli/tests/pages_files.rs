//! Page settings as files against the emulator: pull, diff, push (dry run, prune), publish, and
//! pages named by unique_name wherever a uid is taken.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig};

async fn run(emulator: &Emulator, args: &[&str]) -> Output {
    let env = vec![
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
        ("SVC_API_KEY", emulator.api_key().to_owned()),
    ];
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_svc"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .expect("svc runs")
    })
    .await
    .unwrap()
}

fn code(out: &Output, expected: i32) -> (String, String) {
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(
        out.status.code(),
        Some(expected),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    (stdout, stderr)
}

fn json_out(out: &Output) -> Value {
    serde_json::from_str(&code(out, 0).0).expect("JSON on stdout")
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn pull_diff_push_and_names() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let scratch =
        Scratch(std::env::temp_dir().join(format!("svc-pages-files-{}", std::process::id())));
    let dir = scratch.0.join("pages");
    let d = dir.to_str().unwrap();
    for data in [
        r#"{"uid": "u-orders", "unique_name": "orders", "name": "Orders", "params": {"elements": ["table"]}}"#,
        r#"{"uid": "u-home", "name": "Home", "params": {"elements": []}}"#,
    ] {
        json_out(&run(&emulator, &["pages", "create", "--data", data]).await);
    }
    // A second page with an existing unique_name: refused, nothing created.
    let dup = r#"{"unique_name": "orders", "name": "Twin"}"#;
    let (_, err) = code(
        &run(&emulator, &["pages", "create", "--data", dup]).await,
        2,
    );
    assert!(
        err.contains("\"orders\" exists already") && err.contains("u-orders"),
        "{err}"
    );
    assert_eq!(
        json_out(&run(&emulator, &["pages", "list"]).await)
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // By unique_name wherever a uid is taken.
    assert_eq!(
        json_out(&run(&emulator, &["pages", "get", "orders"]).await)["uid"],
        "u-orders"
    );
    let (_, err) = code(&run(&emulator, &["pages", "get", "nosuch"]).await, 3);
    assert!(err.contains("orders (u-orders)"), "{err}");

    // Pull: one readable file per page, params parsed, no server fields.
    code(&run(&emulator, &["pages", "pull", d]).await, 0);
    let orders = read(&dir.join("orders.json"));
    assert_eq!(
        orders,
        json!({"params": {"elements": ["table"]}, "unique_name": "orders", "name": "Orders", "uid": "u-orders"})
    );
    assert_eq!(read(&dir.join("u-home.json"))["name"], "Home");
    let (diff, _) = code(&run(&emulator, &["pages", "diff", d]).await, 0);
    assert_eq!(diff, "");

    // An edit: diff shows it and exits 1; a dry run changes nothing.
    let mut edited = orders.clone();
    edited["params"]["elements"] = json!(["table", "chart"]);
    std::fs::write(
        dir.join("orders.json"),
        serde_json::to_string(&edited).unwrap(),
    )
    .unwrap();
    let (diff, _) = code(&run(&emulator, &["pages", "diff", d]).await, 1);
    assert!(
        diff.starts_with("--- a/orders.json\n+++ b/orders.json\n@@ "),
        "{diff}"
    );
    assert!(
        diff.contains("\n-      \"table\"\n+      \"table\",\n+      \"chart\"\n"),
        "{diff}"
    );
    let (plan, _) = code(&run(&emulator, &["pages", "push", d, "--dry-run"]).await, 0);
    assert_eq!(plan, "would update orders.json (uid u-orders)\n");
    code(&run(&emulator, &["pages", "diff", d]).await, 1);

    // Push: the update and a new page from a new file.
    std::fs::write(
        dir.join("new.json"),
        r#"{"unique_name": "new", "name": "New", "params": {"elements": [1]}}"#,
    )
    .unwrap();
    let (done, _) = code(&run(&emulator, &["pages", "push", d]).await, 0);
    assert!(
        done.contains("updated orders.json (uid u-orders)"),
        "{done}"
    );
    assert!(done.contains("created new.json (uid "), "{done}");
    code(&run(&emulator, &["pages", "diff", d]).await, 0);
    let orders = json_out(&run(&emulator, &["pages", "get", "orders"]).await);
    assert_eq!(orders["params"], r#"{"elements":["table","chart"]}"#);

    // A page without a file: shown by diff, deleted only with --prune, and only with --yes
    // off a terminal.
    std::fs::remove_file(dir.join("u-home.json")).unwrap();
    let (diff, _) = code(&run(&emulator, &["pages", "diff", d]).await, 1);
    assert!(
        diff.starts_with("--- a/u-home.json\n+++ /dev/null\n"),
        "{diff}"
    );
    code(&run(&emulator, &["pages", "push", d]).await, 0);
    let (_, err) = code(&run(&emulator, &["pages", "push", d, "--prune"]).await, 2);
    assert!(err.contains("--yes"), "{err}");
    json_out(&run(&emulator, &["pages", "get", "u-home"]).await);
    let (done, _) = code(
        &run(&emulator, &["pages", "push", d, "--prune", "--yes"]).await,
        0,
    );
    assert_eq!(done, "deleted u-home.json (uid u-home)\n");
    code(&run(&emulator, &["pages", "get", "u-home"]).await, 3);
    code(&run(&emulator, &["pages", "diff", d]).await, 0);

    // Update and delete by name.
    let updated = json_out(
        &run(
            &emulator,
            &["pages", "update", "new", "--data", "{\"elements\": [2]}"],
        )
        .await,
    );
    assert_eq!(updated["params"], r#"{"elements":[2]}"#);
    let (_, err) = code(
        &run(&emulator, &["pages", "delete", "new", "--yes"]).await,
        0,
    );
    assert!(err.contains("deleted page new ("), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn publish_makes_drafts_the_published_pages() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let page = r#"{"uid": "u-live", "unique_name": "live", "params": {"v": 1}}"#;
    json_out(&run(&emulator, &["pages", "create", "--data", page]).await);
    let sketch =
        r#"{"uid": "u-sketch", "unique_name": "sketch", "name": "Sketch", "params": {"v": 0}}"#;
    json_out(&run(&emulator, &["--draft", "pages", "create", "--data", sketch]).await);
    code(&run(&emulator, &["pages", "get", "sketch"]).await, 3);

    // One page, by name: a draft-only page is created in the published set.
    let (out, _) = code(&run(&emulator, &["pages", "publish", "sketch"]).await, 0);
    assert_eq!(out, "published sketch (u-sketch) (new)\n");
    let live = json_out(&run(&emulator, &["pages", "get", "sketch"]).await);
    assert_eq!(live["name"], "Sketch");
    assert_eq!(live["params"], r#"{"v":0}"#);

    // A draft change to a published page, then --all.
    json_out(
        &run(
            &emulator,
            &["--draft", "pages", "update", "live", "--data", "{\"v\": 2}"],
        )
        .await,
    );
    assert_eq!(
        json_out(&run(&emulator, &["pages", "get", "live"]).await)["params"],
        r#"{"v":1}"#
    );
    let (out, err) = code(&run(&emulator, &["pages", "publish", "--all"]).await, 0);
    assert!(out.contains("published live (u-live)\n"), "{out}");
    assert!(out.contains("unchanged sketch (u-sketch)\n"), "{out}");
    assert!(err.contains("1 of 2 page(s) published"), "{err}");
    assert_eq!(
        json_out(&run(&emulator, &["pages", "get", "live"]).await)["params"],
        r#"{"v":2}"#
    );
    // Neither a page nor --all: a usage error.
    code(&run(&emulator, &["pages", "publish"]).await, 2);
}
