//! `svc emulator verify` as a user runs it: the real binary, its emulator started from a config
//! file, against a reference that speaks the data host's paths (`--reference-kind service`):
//! here another emulator over its own copy of the same data, over loopback. (Against the data
//! engine, on SQLite, PostgreSQL and MariaDB, it runs in `cargo xtask verify`, a step of CI.)

mod common;

use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};

use common::run::{TempDir, svc};

const KEY: &str = "svc_key_verify_reference_0001";
const TOKEN: &str = "tok_verify_books_0001";
const SEED: &str = "\
CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL, born DATE);
CREATE TABLE books (id INTEGER PRIMARY KEY, author_id INTEGER REFERENCES authors(id),
  title TEXT, price REAL, pages INTEGER, out DATE, kept BOOLEAN);
INSERT INTO authors VALUES (1, 'Ann Leckie', '1966-03-02'), (2, 'Bo Ito', NULL), (3, 'Cy Ruiz', '1980-11-30');
INSERT INTO books VALUES
  (1, 1, 'Ancillary Justice', 9.5, 386, '2013-10-01', 1),
  (2, 1, 'Ancillary Sword', 10.25, 356, '2014-10-07', 0),
  (3, 2, 'Night Trains', NULL, 120, NULL, 1),
  (4, 3, 'Rivers', 12.0, 200, '2020-05-05', NULL),
  (5, NULL, 'Untitled', 3.0, NULL, '2021-01-01', 0),
  (6, 2, 'Ten % Off', 7.75, 99, '2019-07-14', 1);
CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, n INTEGER);
INSERT INTO notes VALUES (1, 'first', 1), (2, 'second', 2), (3, NULL, 3);";

/// The reference: an emulator over `database`, keyed by [`KEY`].
async fn reference(database: &str) -> Emulator {
    let project = ProjectConfig::new("shop").api_key(KEY).resource(
        ResourceConfig::new("books", TOKEN)
            .database(database)
            .seed_sql(SEED),
    );
    let config = EmulatorConfig::default().projects(ProjectsConfig::new(vec![project]));
    Emulator::start(config).await.expect("the reference starts")
}

/// The user's config: the same resource over its own copy of the data.
fn config(dir: &TempDir) -> String {
    let path = format!("{}/emulator.json", dir.path());
    let text = json!({"projects": [{"name": "shop", "resources": [{
        "name": "books", "token": TOKEN, "database": format!("{}/mine.sqlite3", dir.path()),
        "seed_sql": SEED,
    }]}]});
    std::fs::write(&path, text.to_string()).expect("the config is written");
    path
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    report: Value,
}

async fn verify(dir: &TempDir, reference: &Emulator, extra: &[&str]) -> Ran {
    let config = config(dir);
    let report = format!("{}/report.json", dir.path());
    let _ = std::fs::remove_file(&report);
    let cases = format!("{}/cases.json", dir.path());
    let junit = format!("{}/report.xml", dir.path());
    let html = format!("{}/report.html", dir.path());
    let mut args = vec![
        "emulator",
        "verify",
        "--config",
        &config,
        "--resource",
        "books",
        "--reference",
        reference.api_base_url(),
        "--reference-kind",
        "service",
        "--rate",
        "1000",
        "--json",
        &report,
        "--cases",
        &cases,
        "--junit",
        &junit,
        "--html",
        &html,
    ];
    args.extend_from_slice(extra);
    let out = svc(
        vec![("SVC_VERIFY_REFERENCE_TOKEN", KEY.to_owned())],
        &args,
        None,
    )
    .await;
    let text = std::fs::read_to_string(&report).unwrap_or_else(|_| "null".to_owned());
    Ran {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        report: serde_json::from_str(&text).expect("the report is JSON"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_data_agrees_and_one_changed_row_is_found_named_and_replayed() {
    let dir = TempDir::new("verify-same");
    let theirs = reference(&format!("{}/theirs.sqlite3", dir.path())).await;

    let ran = verify(&dir, &theirs, &["--requests", "150"]).await;
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert_eq!(ran.report["sent"], 150, "{}", ran.stderr);
    assert_eq!(
        ran.report["totals"],
        json!({"agrees": 150, "decision": 0, "difference": 0, "not_compared": 0}),
        "{}",
        ran.stderr
    );
    assert!(
        ran.stdout
            .starts_with("verify: 150 requests against http://127.0.0.1:"),
        "{}",
        ran.stdout
    );
    let ops: Vec<&str> = ran.report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["request"]["op"].as_str())
        .collect();
    for op in ["list", "retrieve", "aggregate", "group", "sql"] {
        assert!(ops.contains(&op), "no {op} among {ops:?}");
    }

    // One row changed on the reference's side: the answers that show it differ, naming it.
    let status = patch(&theirs, "books", "2", json!({"title": "Changed Title"})).await;
    assert_eq!(status, 200);
    let ran = verify(&dir, &theirs, &["--requests", "150"]).await;
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    let differences: Vec<&Value> = ran.report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["verdict"]["verdict"] == "difference")
        .collect();
    assert!(!differences.is_empty());
    assert!(
        differences.iter().any(
            |o| o["verdict"]["class"].as_str().unwrap().ends_with("/title")
                && o["verdict"]["detail"]
                    .as_str()
                    .unwrap()
                    .contains("Changed Title")
        ),
        "{differences:?}"
    );
    assert!(
        ran.stdout.contains("differences saved to"),
        "{}",
        ran.stdout
    );
    let junit = std::fs::read_to_string(format!("{}/report.xml", dir.path())).unwrap();
    assert!(junit.contains("<failure message=\""), "{junit}");
    let html = std::fs::read_to_string(format!("{}/report.html", dir.path())).unwrap();
    assert!(html.contains("Changed Title") && html.contains("data-verdict=\"difference\""));
    // No report, nor the terminal, shows the reference's key or the resource's token.
    let json = std::fs::read_to_string(format!("{}/report.json", dir.path())).unwrap();
    for text in [&json, &junit, &html, &ran.stdout, &ran.stderr] {
        assert!(!text.contains(KEY) && !text.contains(TOKEN));
    }

    // The saved cases, sent again: the same differences, and only those.
    let cases = format!("{}/cases.json", dir.path());
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&cases).unwrap()).unwrap();
    let ran = verify(&dir, &theirs, &["--replay", &cases]).await;
    assert_eq!(ran.code, Some(1), "{}", ran.stderr);
    assert_eq!(ran.report["sent"], saved["cases"].as_array().unwrap().len());
    assert_eq!(ran.report["totals"]["difference"], ran.report["sent"]);
    theirs.shutdown().await;
}

/// A PATCH on the reference's data host, through the transport the CLI uses.
async fn patch(reference: &Emulator, model: &str, key: &str, body: Value) -> u16 {
    use svc_api::transport::{HyperTransport, Transport};
    let url = format!(
        "{}/projects/shop/prod/books/models/{model}/{key}",
        reference.api_base_url()
    );
    let request = http::Request::patch(url)
        .header("authorization", format!("Bearer {KEY}"))
        .header("content-type", "application/json")
        .body(bytes::Bytes::from(body.to_string()))
        .expect("a request");
    let response = HyperTransport::new()
        .send(request)
        .await
        .expect("an answer");
    response.status().as_u16()
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_exits_2_and_sends_nothing() {
    let dir = TempDir::new("verify-bad");
    let theirs = reference(&format!("{}/theirs.sqlite3", dir.path())).await;
    let config = config(&dir);
    let base = theirs.api_base_url().to_owned();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--resource", "nope", "--reference", &base],
            "has no resource \"nope\"; its resources: books",
        ),
        (
            &["--resource", "books", "--reference", "data.example.com"],
            "is not an http:// or https:// URL",
        ),
        (
            &["--resource", "books", "--reference", &base, "--rate", "0"],
            "--rate 0 is not",
        ),
        (
            &[
                "--resource",
                "books",
                "--reference",
                &base,
                "--project",
                "other",
            ],
            "the config has no project \"other\"",
        ),
        (
            &[
                "--resource",
                "books",
                "--reference",
                &base,
                "--replay",
                "/nonexistent/cases.json",
            ],
            "cannot read /nonexistent/cases.json",
        ),
        (
            &[
                "--resource",
                "books",
                "--reference",
                &base,
                "--json",
                "/nonexistent/r.json",
            ],
            "the folder /nonexistent does not exist",
        ),
    ];
    for (extra, message) in cases {
        let mut args = vec![
            "emulator",
            "verify",
            "--config",
            &config,
            "--reference-kind",
            "service",
        ];
        args.extend_from_slice(extra);
        let out = svc(vec![], &args, None).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {stderr}");
        assert!(stderr.contains(message), "{extra:?}: {stderr}");
    }
    assert!(
        theirs.requests().is_empty(),
        "nothing reached the reference"
    );

    // A key the reference does not know: the first answer stops the run.
    let out = svc(
        vec![],
        &[
            "emulator",
            "verify",
            "--config",
            &config,
            "--resource",
            "books",
            "--reference",
            &base,
            "--reference-kind",
            "service",
            "--reference-token",
            "svc_key_wrong",
        ],
        None,
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("refused the credentials (401)"), "{stderr}");
    assert!(!stderr.contains("svc_key_wrong"), "{stderr}");
    assert_eq!(theirs.requests().len(), 1);
    theirs.shutdown().await;
}

/// Ctrl-C stops the run and writes what it has: the report says it was interrupted, with the
/// requests sent so far. Driven by what the reference received, not by time.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_writes_what_it_has() {
    let dir = TempDir::new("verify-interrupt");
    let theirs = reference(&format!("{}/theirs.sqlite3", dir.path())).await;
    let config = config(&dir);
    let report = format!("{}/report.json", dir.path());
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_svc"))
        .args([
            "emulator",
            "verify",
            "--config",
            &config,
            "--resource",
            "books",
        ])
        .args([
            "--reference",
            theirs.api_base_url(),
            "--reference-kind",
            "service",
        ])
        .args([
            "--reference-token",
            KEY,
            "--requests",
            "1000",
            "--rate",
            "20",
        ])
        .args(["--json", &report])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("svc starts");
    // Three requests reached the reference: the run is under way.
    while theirs.requests().len() < 3 {
        tokio::task::yield_now().await;
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let interrupted = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupted.success());
    let out = child.wait_with_output().expect("svc ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(report["interrupted"], true);
    // Each request the reference answered was recorded, but the last one when the signal came
    // between its two answers.
    let sent = report["sent"].as_u64().unwrap();
    assert!((2..1000).contains(&sent), "{sent}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("(interrupted: "), "{stdout}");
    theirs.shutdown().await;
}

/// `--writes` also sends creates and updates: the reference's data changes (it is scratch), the
/// emulator's copy is put back after the run. (The engine's SQLite cannot create a record with
/// a `DATE`, which the emulator answers as it does: `notes` takes the creates.)
#[tokio::test(flavor = "multi_thread")]
async fn writes_are_sent_only_when_asked_and_the_emulators_copy_is_put_back() {
    let dir = TempDir::new("verify-writes");
    let theirs = reference(&format!("{}/theirs.sqlite3", dir.path())).await;
    let count = |emulator: &Emulator| {
        let url = format!(
            "{}/projects/shop/prod/books/models/notes?_per_page=1",
            emulator.api_base_url()
        );
        async move {
            use svc_api::transport::{HyperTransport, Transport};
            let request = http::Request::get(url)
                .header("authorization", TOKEN)
                .body(bytes::Bytes::new())
                .expect("a request");
            let answer = HyperTransport::new()
                .send(request)
                .await
                .expect("an answer");
            let page: Value = serde_json::from_slice(answer.body()).expect("JSON");
            page["count"].as_u64().expect("a count")
        }
    };

    let ran = verify(&dir, &theirs, &["--requests", "150"]).await;
    assert_eq!(ran.code, Some(0), "{}", ran.stdout);
    let ops = |report: &Value| -> Vec<String> {
        report["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["request"]["op"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(
        !ops(&ran.report)
            .iter()
            .any(|op| op == "create" || op == "update")
    );
    assert_eq!(count(&theirs).await, 3, "reads only");

    // Enough requests that each model takes creates (a write is one request in ten).
    let ran = verify(&dir, &theirs, &["--requests", "400", "--writes"]).await;
    assert_eq!(ran.code, Some(0), "{}{}", ran.stdout, ran.stderr);
    let sent = ops(&ran.report);
    let creates = sent.iter().filter(|op| *op == "create").count() as u64;
    assert!(
        creates > 0 && sent.iter().any(|op| op == "update"),
        "{sent:?}"
    );
    let created: Vec<&Value> = ran.report["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["request"]["op"] == "create")
        .collect();
    let now = count(&theirs).await;
    assert!(
        now > 3,
        "the reference took the creates ({now}): {created:?}"
    );
    // The emulator's copy, read by an emulator of its own after the run: as before it.
    let config = ProjectsConfig::load(std::path::Path::new(&config(&dir))).expect("the config");
    let mine = Emulator::start(EmulatorConfig::default().projects(config))
        .await
        .expect("an emulator over the copy");
    assert_eq!(count(&mine).await, 3);
    mine.shutdown().await;
    theirs.shutdown().await;
}

/// A replay file is held to the same promise as drawn requests: without `--writes`, a file that
/// holds a write (or SQL that is not a plain SELECT) is refused whole, naming the cases, and the
/// reference receives nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_replay_file_with_writes_is_refused_without_writes() {
    let dir = TempDir::new("verify-replay-writes");
    let theirs = reference(&format!("{}/theirs.sqlite3", dir.path())).await;
    let file = format!("{}/replay.json", dir.path());
    let cases = json!({"cases": [
        {"op": "list", "model": "books"},
        {"op": "update", "model": "books", "key": "2", "body": {"title": "x"}},
        {"op": "delete", "model": "books", "key": "3"},
        {"op": "create", "model": "notes", "body": {"body": "y"}},
        {"op": "sql", "body": {"query": "delete from books"}},
        {"op": "sql", "body": {"query": "select count(*) from books; drop table books"}},
        {"op": "sql", "body": {"query": "select count(*) as n from books"}},
    ]});
    std::fs::write(&file, cases.to_string()).expect("the cases are written");
    let ran = verify(&dir, &theirs, &["--replay", &file]).await;
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr
            .contains("5 of the 7 cases may change the reference's data"),
        "{}",
        ran.stderr
    );
    for named in [
        "#2 PATCH books/2",
        "#3 DELETE books/3",
        "#4 POST notes",
        "#5 SQL delete from books",
        "#6 SQL select count(*) from books; drop table books",
    ] {
        assert!(ran.stderr.contains(named), "{named}: {}", ran.stderr);
    }
    assert!(!ran.stderr.contains("#1 "), "{}", ran.stderr);
    assert!(!ran.stderr.contains("#7 "), "{}", ran.stderr);
    assert!(
        theirs.requests().is_empty(),
        "nothing reached the reference"
    );

    // A case whose model would be read as another route is refused too.
    let dots = json!({"cases": [{"op": "list", "model": ".."}]});
    std::fs::write(&file, dots.to_string()).expect("the cases are written");
    let ran = verify(&dir, &theirs, &["--replay", &file]).await;
    assert_eq!(ran.code, Some(2), "{}", ran.stderr);
    assert!(
        ran.stderr.contains("is not a path segment"),
        "{}",
        ran.stderr
    );
    assert!(
        theirs.requests().is_empty(),
        "nothing reached the reference"
    );

    // With --writes, the same file is sent: the reference takes the update.
    std::fs::write(&file, cases.to_string()).expect("the cases are written");
    let ran = verify(&dir, &theirs, &["--replay", &file, "--writes"]).await;
    assert!(
        theirs
            .requests()
            .iter()
            .any(|r| r.method == "PATCH" && r.path.ends_with("/models/books/2")),
        "{}",
        ran.stderr
    );
    theirs.shutdown().await;
}

/// A reference that answers every request with what it received (its `Authorization` header
/// and Host among it), under a JSON key holding terminal escapes and values XML 1.0 cannot
/// hold. Closes each connection after its answer.
async fn echoing_reference() -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&seen).into_owned();
                let body = json!({
                    "count": 1,
                    "results": [],
                    "echo": head,
                    "k\u{1b}]0;owned\u{7}\u{1b}[2J": "v\u{fffe}\u{ffff}",
                })
                .to_string();
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (address, task)
}

/// Whatever a reference sends back, verify writes no credential of its own (the reference
/// token, the URL's password), no terminal escape to the terminal, and JUnit a CI system can
/// read: every character valid XML 1.0.
#[tokio::test(flavor = "multi_thread")]
async fn what_a_reference_echoes_is_masked_and_made_inert() {
    let dir = TempDir::new("verify-echo");
    let (address, server) = echoing_reference().await;
    let config = config(&dir);
    let files = ["report.json", "report.xml", "report.html", "cases.json"]
        .map(|name| format!("{}/{name}", dir.path()));
    let reference = format!("http://ref-user:pw4ref%21secret@{address}");
    let token = "reftoken_4f9e_echoed";
    let out = svc(
        vec![],
        &[
            "emulator",
            "verify",
            "--config",
            &config,
            "--resource",
            "books",
            "--reference",
            &reference,
            "--reference-kind",
            "service",
            "--reference-token",
            token,
            "--requests",
            "20",
            "--rate",
            "1000",
            "--json",
            &files[0],
            "--junit",
            &files[1],
            "--html",
            &files[2],
            "--cases",
            &files[3],
        ],
        None,
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let mut shown = vec![("stdout", stdout.clone()), ("stderr", stderr)];
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a report");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{file}: {mode:o}");
        }
        shown.push((file.as_str(), text));
    }
    for (what, text) in &shown {
        for secret in [token, "pw4ref", "ref-user", TOKEN] {
            assert!(!text.contains(secret), "{secret} in {what}: {text}");
        }
    }
    // The echo is there, masked: the reports still show what the reference answered.
    assert!(shown[2].1.contains("Bearer ***"), "{}", shown[2].1);
    assert!(stdout.contains("http://***@127.0.0.1:"), "{stdout}");
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "{stdout:?}"
    );
    let junit = &shown[3].1;
    let invalid = |c: char| {
        matches!(c, '\u{fffe}' | '\u{ffff}') || (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    };
    assert!(!junit.chars().any(invalid), "{junit:?}");
    assert!(junit.contains("<failure "), "{junit}");
    server.abort();
}
