//! `cargo xtask abuse`: the hostile cases of the hardening issue, run against a release build of
//! the emulator on loopback, with the figures that show whether each protection holds: status
//! codes, time to the SQL deadline, the emulator's peak memory, and how long an unrelated route
//! (the page settings list) waits meanwhile.
//!
//! The emulator runs as a child process under an open-files limit of 1024 (`ulimit -n`), with a
//! `--data` file in a fresh directory, so that its memory (`/proc/PID/status`: `VmHWM`, reset
//! before each case through `/proc/PID/clear_refs`) and its files can be read. Each row says
//! whether the case held; the command fails when one did not. Linux only.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::http;

mod databases;
mod mariadb;

/// The open-files limit the emulator runs under (as in the report that asked for this).
const OPEN_FILES: u32 = 1024;
/// Idle connections opened against it: more than the limit.
const IDLE_CONNECTIONS: usize = 1100;
/// Never-ending queries sent at once to one resource.
const QUEUED: usize = 600;
/// An unrelated request waiting longer than this means the abuse stalled the server.
const STALL_LIMIT: Duration = Duration::from_secs(1);
/// A query without end: only the SQL deadline stops it.
const NEVER_ENDS: &str =
    "with recursive c(x) as (select 1 union all select x + 1 from c) select count(*) from c";
/// A `503` for a busy resource later than this (its wait for a turn is 2 s) came too late.
const BUSY_LIMIT: Duration = Duration::from_secs(5);
/// Peak memory above this means an answer or a body was held whole.
const MEMORY_LIMIT_MIB: u64 = 512;

/// A running emulator.
struct Emulator {
    child: Child,
    addr: SocketAddr,
    api_key: String,
    shop_token: String,
    data_dir: PathBuf,
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Emulator {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `(VmRSS, VmHWM)` in MiB.
    fn memory(&self) -> (u64, u64) {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map_or(0, |kb| kb / 1024)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }

    /// Makes `VmHWM` start again from the current RSS.
    fn reset_peak(&self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.pid()), "5");
    }

    fn sql(&self, query: &str) -> Result<u16, String> {
        sql_at(self.addr, &self.shop_token, query)
    }

    /// The unrelated route: the page settings list on the application host.
    fn probe(&self) -> Result<u16, String> {
        probe_at(self.addr, &self.api_key)
    }
}

/// Runs `query` on the demo's `shop` resource; the answer's status.
fn sql_at(addr: SocketAddr, token: &str, query: &str) -> Result<u16, String> {
    let body = json!({ "query": query }).to_string();
    http::send(
        addr,
        "POST",
        "/projects/demo/prod/shop/sql_get_query",
        Some(token),
        Some(body.as_bytes()),
    )
    .map(|r| r.status)
}

/// Lists the page settings (the application host, the API key); the answer's status.
fn probe_at(addr: SocketAddr, api_key: &str) -> Result<u16, String> {
    let key = format!("Bearer {api_key}");
    http::send(
        addr,
        "GET",
        "/api/projects/demo/prod/view_settings/",
        Some(&key),
        None,
    )
    .map(|r| r.status)
}

/// Builds the release emulator and starts it over a data file in `dir`.
fn start(root: &Path, dir: &Path) -> Result<Emulator, String> {
    let binary = crate::fidelity::emulator::build(root, true)?;
    let data_dir = dir.join("data");
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -n {OPEN_FILES} && exec \"$0\" \"$@\""))
        .arg(&binary)
        .args(["--listen", "127.0.0.1:0", "--data"])
        .arg(data_dir.join("emulator.sqlite"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", binary.display()))?;
    let mut line = String::new();
    let stdout = child.stdout.take().ok_or("no stdout")?;
    BufReader::new(stdout)
        .read_line(&mut line)
        .map_err(|e| format!("reading the startup line: {e}"))?;
    let info: Value = serde_json::from_str(line.trim())
        .map_err(|e| format!("the startup line is not JSON ({e}): {line:?}"))?;
    let base = info["api_base_url"].as_str().unwrap_or_default();
    let addr = base
        .strip_prefix("http://")
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("unexpected api_base_url {base:?}"))?;
    Ok(Emulator {
        child,
        addr,
        api_key: info["api_key"].as_str().unwrap_or_default().to_owned(),
        shop_token: info["resource_tokens"]["shop"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        data_dir,
    })
}

/// One abuse case: runs against the emulator, returns its row.
type Case = fn(&Emulator) -> Row;

/// One row of the report.
struct Row {
    case: &'static str,
    figures: String,
    held: bool,
}

/// Runs `work` while the unrelated route is asked every 50 ms on another thread; returns
/// `work`'s output and the longest wait of the unrelated route (a failed probe counts as
/// waiting the whole time).
fn with_probe<T>(emulator: &Emulator, work: impl FnOnce() -> T) -> (T, Duration) {
    let done = Arc::new(AtomicBool::new(false));
    let prober = {
        let done = Arc::clone(&done);
        let (addr, api_key) = (emulator.addr, emulator.api_key.clone());
        std::thread::spawn(move || {
            let mut longest = Duration::ZERO;
            while !done.load(Ordering::Relaxed) {
                let started = Instant::now();
                let ok = probe_at(addr, &api_key) == Ok(200);
                let waited = started.elapsed();
                longest = longest.max(if ok {
                    waited
                } else {
                    waited.max(STALL_LIMIT * 2)
                });
                std::thread::sleep(Duration::from_millis(50));
            }
            longest
        })
    };
    let out = work();
    done.store(true, Ordering::Relaxed);
    let longest = prober.join().unwrap_or(Duration::MAX);
    (out, longest)
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// Statuses as `400 x4, 503 x2` (or the first error).
fn statuses(results: &[Result<u16, String>]) -> String {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for r in results {
        let key = match r {
            Ok(status) => status.to_string(),
            Err(_) => "no answer".to_owned(),
        };
        *counts.entry(key).or_default() += 1;
    }
    counts
        .iter()
        .map(|(k, n)| format!("{k} x{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Runs `n` copies of `job` at once, each on its own thread.
fn at_once<T: Send + 'static>(n: usize, job: impl Fn() -> T + Send + Sync + 'static) -> Vec<T> {
    let job = Arc::new(job);
    let threads: Vec<_> = (0..n)
        .map(|_| {
            let job = Arc::clone(&job);
            std::thread::spawn(move || job())
        })
        .collect();
    threads.into_iter().filter_map(|t| t.join().ok()).collect()
}

fn sql_deadline(emulator: &Emulator) -> Row {
    let blobs = ["length(randomblob(999999999))"; 5].join(", ");
    let started = Instant::now();
    let status = emulator.sql(&format!("select {blobs}"));
    let took = started.elapsed();
    Row {
        case: "SQL: five 1 GB blobs in one select",
        figures: format!(
            "{} after {}",
            statuses(std::slice::from_ref(&status)),
            secs(took)
        ),
        held: matches!(status, Ok(400..=499)) && took < Duration::from_secs(15),
    }
}

fn sql_long(emulator: &Emulator) -> Row {
    let started = Instant::now();
    let status = emulator.sql(NEVER_ENDS);
    let took = started.elapsed();
    Row {
        case: "SQL: a query that never ends (time to the deadline)",
        figures: format!(
            "{} after {}",
            statuses(std::slice::from_ref(&status)),
            secs(took)
        ),
        held: matches!(status, Ok(400..=499)) && took < Duration::from_secs(15),
    }
}

fn sql_large(emulator: &Emulator) -> Row {
    // 20 000 rows of 64 KB each, about 1.7 GB of JSON once base64-encoded.
    let query = "with recursive c(x) as (select 1 union all select x + 1 from c limit 20000) \
                 select x, randomblob(65536) from c";
    emulator.reset_peak();
    let before = emulator.memory().0;
    let started = Instant::now();
    let (results, stall) = with_probe(emulator, || {
        let (addr, token) = (emulator.addr, emulator.shop_token.clone());
        at_once(4, move || sql_at(addr, &token, query))
    });
    let took = started.elapsed();
    let peak = emulator.memory().1;
    Row {
        case: "SQL: four 1.7 GB answers at once",
        figures: format!(
            "{} after {}; peak {peak} MiB (from {before}); page list waited {}",
            statuses(&results),
            secs(took),
            secs(stall)
        ),
        held: results.iter().all(|r| matches!(r, Ok(400..=499)))
            && peak < MEMORY_LIMIT_MIB
            && stall < STALL_LIMIT,
    }
}

fn saturation(emulator: &Emulator) -> Row {
    let (addr, token) = (emulator.addr, emulator.shop_token.clone());
    let started = Instant::now();
    let (queued, stall) = with_probe(emulator, || {
        at_once(QUEUED, move || {
            let started = Instant::now();
            (sql_at(addr, &token, NEVER_ENDS), started.elapsed())
        })
    });
    let took = started.elapsed();
    let statuses_of: Vec<_> = queued.iter().map(|(s, _)| s.clone()).collect();
    let slowest_503 = queued
        .iter()
        .filter(|(s, _)| *s == Ok(503))
        .map(|(_, d)| *d)
        .max();
    Row {
        case: "One resource saturated: 600 never-ending queries at once",
        figures: format!(
            "{}; slowest 503 after {}; page list waited {} (all {})",
            statuses(&statuses_of),
            slowest_503.map_or("-".to_owned(), secs),
            secs(stall),
            secs(took)
        ),
        held: stall < STALL_LIMIT
            && queued.iter().any(|(s, _)| *s == Ok(503))
            && slowest_503.is_some_and(|d| d < BUSY_LIMIT),
    }
}

fn big_bodies(emulator: &Emulator) -> Row {
    // Just under the 32 MiB that every route accepted before per-route limits.
    let mut body = Vec::with_capacity(31 << 20);
    body.push(b'[');
    while body.len() < (31 << 20) - 2 {
        body.extend_from_slice(b"0,");
    }
    body.extend_from_slice(b"0]");
    let body = Arc::new(body);
    emulator.reset_peak();
    let before = emulator.memory().0;
    let addr = emulator.addr;
    let (results, stall) = with_probe(emulator, || {
        at_once(8, move || {
            http::send(
                addr,
                "POST",
                "/projects/demo/prod/auth/login",
                None,
                Some(&body),
            )
            .map(|r| r.status)
        })
    });
    let peak = emulator.memory().1;
    Row {
        case: "Eight 31 MiB JSON bodies to auth/login at once, no credentials",
        figures: format!(
            "{}; peak {peak} MiB (from {before}); page list waited {}",
            statuses(&results),
            secs(stall)
        ),
        held: results
            .iter()
            .all(|r| matches!(r, Ok(400..=499)) || r.is_err())
            && peak.saturating_sub(before) < 100
            && stall < STALL_LIMIT,
    }
}

fn idle_connections(emulator: &Emulator) -> Row {
    let mut open = Vec::new();
    let mut refused = 0;
    for _ in 0..IDLE_CONNECTIONS {
        match TcpStream::connect_timeout(&emulator.addr, Duration::from_secs(2)) {
            Ok(stream) => open.push(stream),
            Err(_) => refused += 1,
        }
    }
    // Give the server a moment to accept (or shed) them, then ask something.
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let answer = emulator.probe();
    let waited = started.elapsed();
    // How many the server has already closed.
    let mut closed = 0;
    for stream in &mut open {
        stream.set_nonblocking(true).ok();
        let mut byte = [0u8; 1];
        if matches!(stream.read(&mut byte), Ok(0)) {
            closed += 1;
        }
    }
    drop(open);
    Row {
        case: "1100 idle connections under a 1024 open-files limit",
        figures: format!(
            "connected {}, refused {refused}, closed at once by the server {closed}; \
             a new request: {} after {}",
            IDLE_CONNECTIONS - refused,
            statuses(std::slice::from_ref(&answer)),
            secs(waited)
        ),
        held: answer == Ok(200) && waited < STALL_LIMIT * 2,
    }
}

fn unfinished_headers(emulator: &Emulator) -> Row {
    let started = Instant::now();
    let outcome = TcpStream::connect(emulator.addr).and_then(|mut stream| {
        stream.write_all(b"GET /api/ HTTP/1.1\r\nHost: x\r\n")?;
        stream.set_read_timeout(Some(Duration::from_secs(90)))?;
        let mut rest = Vec::new();
        stream.read_to_end(&mut rest).map(|_| rest)
    });
    let took = started.elapsed();
    let text = match &outcome {
        Ok(rest) if rest.is_empty() => format!("closed after {}", secs(took)),
        Ok(rest) => format!(
            "answered {:?} and closed after {}",
            String::from_utf8_lossy(&rest[..rest.len().min(12)]),
            secs(took)
        ),
        Err(e) => format!("still open after {} ({e})", secs(took)),
    };
    Row {
        case: "A connection that never finishes its headers",
        figures: text,
        // The idle timeout is 30 s (hyper's own): closed then, not held open for good.
        held: outcome.is_ok() && took < Duration::from_secs(40),
    }
}

fn data_files(emulator: &Emulator) -> Row {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0)
    };
    let dir_mode = mode(&emulator.data_dir);
    let mut files: Vec<(String, u32)> = std::fs::read_dir(&emulator.data_dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        mode(&e.path()),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let listed = files
        .iter()
        .map(|(name, m)| format!("{name} {m:o}"))
        .collect::<Vec<_>>()
        .join(", ");
    Row {
        case: "Data files (keys, tokens, password hashes)",
        figures: format!("directory {dir_mode:o}; {listed}"),
        held: dir_mode & 0o077 == 0
            && !files.is_empty()
            && files.iter().all(|(_, m)| m & 0o077 == 0),
    }
}

/// `cargo xtask abuse [--mariadb]`: every case (only those on MariaDB with `--mariadb`), a
/// table, and failure when one did not hold.
pub fn abuse(args: &[String], root: &Path) -> bool {
    let only_mariadb = match args {
        [] => false,
        [flag] if flag == "--mariadb" => true,
        _ => {
            eprintln!("usage: cargo xtask abuse [--mariadb]");
            return false;
        }
    };
    let dir = std::env::temp_dir().join(format!("svc-abuse-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("abuse: cannot create {}: {e}", dir.display());
        return false;
    }
    let mut rows = Vec::new();
    let report = |name: &str, row: Row, rows: &mut Vec<Row>| {
        eprintln!("abuse: {name} ...");
        eprintln!(
            "   {} {}",
            if row.held { "held:" } else { "DID NOT HOLD:" },
            row.figures
        );
        rows.push(row);
    };
    let emulator = if only_mariadb {
        None
    } else {
        let emulator = match start(root, &dir) {
            Ok(emulator) => emulator,
            Err(e) => {
                eprintln!("abuse: {e}");
                return false;
            }
        };
        eprintln!(
            "abuse: emulator {} (pid {}), open files limited to {OPEN_FILES}",
            emulator.addr,
            emulator.pid()
        );
        let cases: [(&str, Case); 8] = [
            ("data files", data_files),
            ("SQL deadline", sql_deadline),
            ("SQL long", sql_long),
            ("SQL large", sql_large),
            ("saturation", saturation),
            ("big bodies", big_bodies),
            ("unfinished headers", unfinished_headers),
            ("idle connections", idle_connections),
        ];
        for (name, case) in cases {
            report(name, case(&emulator), &mut rows);
        }
        match crate::fidelity::emulator::build(root, true)
            .and_then(|binary| databases::Databases::start(&binary, &dir))
        {
            Ok(db) => {
                for (name, case) in databases::CASES {
                    report(name, case(&db), &mut rows);
                }
            }
            Err(e) => rows.push(Row {
                case: "The cases on their own databases (PostgreSQL, a big SQLite resource)",
                figures: format!("could not start: {e}"),
                held: false,
            }),
        }
        Some(emulator)
    };
    match crate::fidelity::emulator::build(root, true)
        .and_then(|binary| mariadb::Maria::start(&binary, &dir))
    {
        Ok(my) => {
            for (name, case) in mariadb::CASES {
                report(name, case(&my), &mut rows);
            }
        }
        Err(e) => rows.push(Row {
            case: "The cases on MariaDB",
            figures: format!("could not start: {e}"),
            held: false,
        }),
    }
    drop(emulator);
    let _ = std::fs::remove_dir_all(&dir);
    println!("\n| case | figures | held |\n| --- | --- | --- |");
    for row in &rows {
        println!(
            "| {} | {} | {} |",
            row.case,
            row.figures,
            if row.held { "yes" } else { "NO" }
        );
    }
    rows.iter().all(|r| r.held)
}
