//! Durability against a crash: the `svc-emulator` binary is killed (SIGKILL) in the middle of a
//! burst of creates from many tasks, restarted on the same data path, and every create it
//! answered `201` must be there, whole, and nothing else but whole records of creates that were
//! sent.
//!
//! Why it holds: each create is one SQLite transaction in WAL mode, committed before the answer
//! is written. With `synchronous = NORMAL` a commit is in the WAL file (the OS page cache) when
//! it returns, which survives the death of the process, though not a power loss or an OS crash
//! (that needs `synchronous = FULL`). A transaction is atomic, so no record is half-written.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::net::TcpStream;

const CUSTOMERS: &str = "/projects/demo/prod/shop/models/customers";
/// The city every record of this test has, to find them all.
const CITY: &str = "Durability";
/// Concurrent writers.
const TASKS: usize = 32;
/// Creates answered `201` before the kill, per round.
const ANSWERED_BEFORE_KILL: usize = 1000;

/// A running binary, killed if the test fails before stopping it.
struct Running {
    child: Child,
    addr: SocketAddr,
    info: Value,
}

impl Running {
    fn start(data: &Path) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_svc-emulator"));
        cmd.arg("--data")
            .arg(data)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (key, _) in std::env::vars() {
            if key.starts_with("SVC_EMULATOR_") {
                cmd.env_remove(key);
            }
        }
        let mut child = cmd.spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let info: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
            let _ = child.kill();
            panic!("startup line {line:?}: {e}")
        });
        let addr = info["api_base_url"]
            .as_str()
            .unwrap()
            .trim_start_matches("http://")
            .parse()
            .unwrap();
        Self { child, addr, info }
    }

    fn token(&self) -> String {
        self.info["resource_tokens"]["shop"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// SIGKILL: no shutdown code runs.
    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM: a clean stop.
    fn terminate(mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        assert!(self.child.wait().unwrap().success());
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fields of create `n` of `task` in `round`: every kind of column the engine can write, and a long text, so that
/// a half-written record could not pass for a whole one.
fn record(round: usize, task: usize, n: usize) -> Value {
    let marker = format!("dur-{round}-{task}-{n}");
    json!({
        "name": marker,
        "email": format!("{marker}@durability.test"),
        "city": CITY,
        "vip": n.is_multiple_of(2),
        "score": (n * 7) % 101,
        // No `birth_date`: the data engine cannot write a DATE column (a 400), nor can the
        // emulator.
        "created_at": format!("2025-02-03T04:05:{:02}", n % 60),
        "notes": marker.repeat(40),
    })
}

#[derive(Debug, Default)]
struct Log {
    /// Every create sent (or about to be): email -> fields.
    sent: HashMap<String, Value>,
    /// Creates answered `201`: email -> the record answered.
    created: HashMap<String, Value>,
    /// Answers that should not happen (a status other than `201`).
    unexpected: Vec<String>,
}

async fn connect(addr: SocketAddr) -> Option<hyper::client::conn::http1::SendRequest<Full<Bytes>>> {
    let stream = TcpStream::connect(addr).await.ok()?;
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .ok()?;
    tokio::spawn(conn);
    Some(sender)
}

/// Creates records one after the other on a kept-alive connection until the server dies.
async fn writer(
    addr: SocketAddr,
    token: String,
    round: usize,
    task: usize,
    log: Arc<Mutex<Log>>,
    answered: Arc<AtomicUsize>,
    killed: Arc<AtomicBool>,
) {
    let mut n = 0;
    'connections: while !killed.load(Ordering::SeqCst) {
        let Some(mut sender) = connect(addr).await else {
            break;
        };
        loop {
            let fields = record(round, task, n);
            n += 1;
            let email = fields["email"].as_str().unwrap().to_owned();
            log.lock()
                .unwrap()
                .sent
                .insert(email.clone(), fields.clone());
            let request = Request::builder()
                .method(Method::POST)
                .uri(CUSTOMERS)
                .header(http::header::HOST, "127.0.0.1")
                .header(http::header::AUTHORIZATION, token.as_str())
                .header(http::header::CONTENT_TYPE, "application/json")
                .body(Full::new(Bytes::from(serde_json::to_vec(&fields).unwrap())))
                .unwrap();
            if sender.ready().await.is_err() {
                continue 'connections;
            }
            let Ok(response) = sender.send_request(request).await else {
                continue 'connections;
            };
            let status = response.status();
            let Ok(body) = response.into_body().collect().await else {
                continue 'connections;
            };
            let body = body.to_bytes();
            if status == 201 {
                let stored: Value = serde_json::from_slice(&body).unwrap();
                log.lock().unwrap().created.insert(email, stored);
                answered.fetch_add(1, Ordering::SeqCst);
            } else {
                log.lock()
                    .unwrap()
                    .unexpected
                    .push(format!("{status}: {}", String::from_utf8_lossy(&body)));
            }
        }
    }
}

/// Runs a burst of creates from [`TASKS`] tasks and kills the server once
/// [`ANSWERED_BEFORE_KILL`] of them were answered.
async fn burst_then_kill(server: Running, round: usize) -> Log {
    let log = Arc::new(Mutex::new(Log::default()));
    let answered = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..TASKS)
        .map(|task| {
            tokio::spawn(writer(
                server.addr,
                server.token(),
                round,
                task,
                Arc::clone(&log),
                Arc::clone(&answered),
                Arc::clone(&killed),
            ))
        })
        .collect();
    let started = Instant::now();
    while answered.load(Ordering::SeqCst) < ANSWERED_BEFORE_KILL {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "only {} creates answered in 120 s",
            answered.load(Ordering::SeqCst)
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // Mid-burst: every task has a create in flight or about to be.
    killed.store(true, Ordering::SeqCst);
    tokio::task::spawn_blocking(move || server.kill())
        .await
        .unwrap();
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(30), task)
            .await
            .expect("the writers stop once the server is gone")
            .unwrap();
    }
    Arc::try_unwrap(log).unwrap().into_inner().unwrap()
}

/// Every record of this test in the database, by email.
async fn stored(server: &Running) -> HashMap<String, Value> {
    let mut sender = connect(server.addr).await.unwrap();
    let request = Request::builder()
        .method(Method::GET)
        .uri(format!("{CUSTOMERS}?city={CITY}&_no_pagination=1"))
        .header(http::header::HOST, "127.0.0.1")
        .header(http::header::AUTHORIZATION, server.token())
        .body(Full::new(Bytes::new()))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let records: Vec<Value> = serde_json::from_slice(&body).unwrap();
    assert!(records.len() < 10_000, "the list is not truncated");
    records
        .into_iter()
        .map(|r| (r["email"].as_str().unwrap().to_owned(), r))
        .collect()
}

/// Checks the database against what was sent and answered; returns how many records are there.
fn check(stored: &HashMap<String, Value>, logs: &[Log]) -> usize {
    let sent: HashMap<&String, &Value> = logs.iter().flat_map(|l| &l.sent).collect();
    for log in logs {
        assert!(log.unexpected.is_empty(), "{:?}", log.unexpected);
        for (email, answered) in &log.created {
            let found = stored
                .get(email)
                .unwrap_or_else(|| panic!("{email} was answered 201 but is gone"));
            assert_eq!(found, answered, "{email} is stored as it was answered");
        }
    }
    for (email, found) in stored {
        let fields = sent
            .get(email)
            .unwrap_or_else(|| panic!("{email} is stored but was never sent"));
        for (key, value) in fields.as_object().unwrap() {
            assert_eq!(&found[key], value, "{email}: field {key} is whole");
        }
    }
    stored.len()
}

fn integrity(path: &Path) -> (String, i64) {
    let conn = rusqlite::Connection::open(path).unwrap();
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    let journal: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(journal, "wal");
    let count = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    (ok, count)
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn creates_answered_201_survive_a_sigkill_mid_burst_and_none_is_half_written() {
    let dir = TempDir(std::env::temp_dir().join(format!(
        "svc-emulator-durability-{}",
        uuid::Uuid::new_v4().simple()
    )));
    std::fs::create_dir_all(&dir.0).unwrap();
    let data = dir.0.join("meta.sqlite");

    let first = Running::start(&data);
    let key = first.info["api_key"].clone();
    let token = first.token();
    let mut logs = Vec::new();
    let mut server = first;
    for round in 1..=2 {
        let log = burst_then_kill(server, round).await;
        // Same data path: a new port, the same key and tokens.
        server = Running::start(&data);
        assert_eq!(server.info["api_key"], key);
        assert_eq!(server.token(), token);
        let (sent, answered) = (log.sent.len(), log.created.len());
        logs.push(log);
        let present = check(&stored(&server).await, &logs);
        let round_present = stored(&server)
            .await
            .keys()
            .filter(|e| e.starts_with(&format!("dur-{round}-")))
            .count();
        println!(
            "durability round {round}: {TASKS} tasks, {sent} creates attempted, {answered} answered \
             201 before the SIGKILL, {round_present} present after the restart \
             ({present} in all rounds)"
        );
        assert!(round_present >= answered && round_present <= sent);
    }
    server.terminate();

    // The files themselves are sound.
    let resource = PathBuf::from(format!("{}.demo.shop.sqlite", data.display()));
    for path in [&data, &resource] {
        let (ok, tables) = integrity(path);
        assert_eq!(ok, "ok", "{}", path.display());
        assert!(tables > 0);
    }
}
