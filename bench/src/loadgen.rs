//! A load generator in a process of its own, and the CPU time of processes from /proc.
//!
//! `svc-bench --load-child URL AUTHORIZATION IN_FLIGHT MS [BODY]` sends `GET URL` (a `POST` of
//! `BODY` when one is given) with `IN_FLIGHT` requests in flight on one thread (a current-thread
//! Tokio runtime and the bare hyper-util client of section 4), first for a warm-up of a fifth
//! of `MS` (connections opened), then for `MS` milliseconds, and prints `N requests in S s`.
//! Sections 9 and 10 run it as a child, so the server measured (the emulator, the engine, or
//! PostgreSQL behind pgbench) does not share a process with the client that loads it, as
//! pgbench does not share one with PostgreSQL.
//!
//! CPU times come from /proc (Linux), in the clock ticks of 1/100 s it reports: this process's
//! own threads, the children it has waited for, and a PostgreSQL cluster's processes.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Uri};

use crate::emulator::LoadClient;
use crate::harness::{client_runtime, load};

/// User and system CPU seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cpu {
    pub user: f64,
    pub system: f64,
}

impl Cpu {
    pub fn total(self) -> f64 {
        self.user + self.system
    }

    pub fn since(self, before: Cpu) -> Cpu {
        Cpu {
            user: self.user - before.user,
            system: self.system - before.system,
        }
    }

    pub fn plus(self, other: Cpu) -> Cpu {
        Cpu {
            user: self.user + other.user,
            system: self.system + other.system,
        }
    }
}

/// The fields of a /proc `stat` file after the command name (which may hold spaces and
/// parentheses): the 3rd field of the file (the state) is the first.
fn stat_fields(path: &Path) -> Option<Vec<u64>> {
    let stat = std::fs::read_to_string(path).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    // The state is a letter; read it as 0 so that field numbers keep their place.
    Some(
        rest.split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect(),
    )
}

/// utime, stime (fields 14 and 15) and cutime, cstime (16 and 17) of a stat file.
fn times(fields: &[u64]) -> (Cpu, Cpu) {
    let tick = |i: usize| fields.get(i - 3).copied().unwrap_or(0) as f64 / 100.0;
    (
        Cpu {
            user: tick(14),
            system: tick(15),
        },
        Cpu {
            user: tick(16),
            system: tick(17),
        },
    )
}

/// This process's own CPU time (every thread of it).
pub fn own() -> Cpu {
    stat_fields(Path::new("/proc/self/stat")).map_or_else(Cpu::default, |f| times(&f).0)
}

/// The CPU time of this process's children that it has waited for.
pub fn children() -> Cpu {
    stat_fields(Path::new("/proc/self/stat")).map_or_else(Cpu::default, |f| times(&f).1)
}

/// The CPU time of a PostgreSQL cluster so far: the postmaster (its pid is the first line of
/// `data_dir/postmaster.pid`), the children it has reaped (backends that have ended) and the
/// children alive now (backends of open connections, background workers). A backend that ends
/// between two readings moves from the third term to the second, so a difference of two
/// readings counts it whole.
pub fn postgres(data_dir: &Path) -> Option<Cpu> {
    let pid: u32 = std::fs::read_to_string(data_dir.join("postmaster.pid"))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()?;
    let (own, reaped) = times(&stat_fields(
        &Path::new("/proc").join(pid.to_string()).join("stat"),
    )?);
    let mut total = own.plus(reaped);
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Some(fields) = stat_fields(&entry.path().join("stat")) else {
            continue;
        };
        // Field 4: the parent's pid.
        if fields.get(1).copied() == Some(u64::from(pid)) {
            total = total.plus(times(&fields).0);
        }
    }
    Some(total)
}

/// The CPU time and context switches (voluntary and not) of this process's threads named
/// `name` (a Tokio runtime names its workers and its blocking pool's threads alike).
pub fn threads_named(name: &str) -> (Cpu, u64) {
    let mut cpu = Cpu::default();
    let mut switches = 0;
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return (cpu, switches);
    };
    for task in tasks.flatten() {
        let dir = task.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        if let Some(fields) = stat_fields(&dir.join("stat")) {
            cpu = cpu.plus(times(&fields).0);
        }
        let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
        switches += status
            .lines()
            .filter(|l| l.contains("ctxt_switches:"))
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
            .sum::<u64>();
    }
    (cpu, switches)
}

/// What one child load run did.
#[derive(Debug, Clone, Copy)]
pub struct ChildRun {
    pub requests: u64,
    pub elapsed: Duration,
    /// The child's own CPU time (warm-up included).
    pub cpu: Cpu,
}

impl ChildRun {
    pub fn per_second(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }
}

/// One load: where, with what, how hard, how long.
#[derive(Debug, Clone)]
pub struct LoadSpec {
    pub url: String,
    pub authorization: String,
    pub in_flight: usize,
    pub time: Duration,
    /// A `POST` of this body when given, else a `GET`.
    pub body: Option<String>,
}

/// Runs `spec` in a child process (this binary with `--load-child`) and waits for it.
pub fn run_child(spec: &LoadSpec) -> Result<ChildRun, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find svc-bench: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.arg("--load-child")
        .arg(&spec.url)
        .arg(&spec.authorization)
        .arg(spec.in_flight.to_string())
        .arg(spec.time.as_millis().to_string());
    if let Some(body) = &spec.body {
        cmd.arg(body);
    }
    let before = children();
    let output = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run the load child: {e}"))?;
    let cpu = children().since(before);
    if !output.status.success() {
        return Err(format!("the load child failed: {}", output.status));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    parse_line(&text)
        .map(|(requests, elapsed)| ChildRun {
            requests,
            elapsed,
            cpu,
        })
        .ok_or_else(|| format!("the load child said {text:?}"))
}

/// `N requests in S s`.
fn parse_line(text: &str) -> Option<(u64, Duration)> {
    let line = text.lines().find(|l| l.contains(" requests in "))?;
    let (n, rest) = line.split_once(" requests in ")?;
    let secs: f64 = rest.trim().strip_suffix(" s")?.parse().ok()?;
    Some((n.trim().parse().ok()?, Duration::from_secs_f64(secs)))
}

/// The child's side: `args` are what follows `--load-child`.
pub fn child_main(args: &[String]) -> Result<(), String> {
    let [url, authorization, in_flight, ms, body @ ..] = args else {
        return Err("--load-child URL AUTHORIZATION IN_FLIGHT MS [BODY]".to_owned());
    };
    let uri: Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let in_flight: usize = in_flight.parse().map_err(|_| "IN_FLIGHT: a number")?;
    let time = Duration::from_millis(ms.parse().map_err(|_| "MS: a number")?);
    let body = body.first().map(|b| Bytes::from(b.clone()));
    let client = LoadClient::new(authorization);
    let rt = client_runtime();
    let request = move || {
        let (client, uri, body) = (client.clone(), uri.clone(), body.clone());
        async move {
            let answer = match body {
                Some(body) => {
                    client
                        .send(Request::builder().method(Method::POST).uri(uri), body)
                        .await
                }
                None => client.get(uri).await,
            };
            std::hint::black_box(answer);
        }
    };
    load(&rt, in_flight, time / 5, request.clone());
    let done = load(&rt, in_flight, time, request);
    println!(
        "{} requests in {:.6} s",
        done.requests,
        done.elapsed.as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_child_line_and_stat_fields() {
        let (n, t) = parse_line("warming\n1234 requests in 0.500000 s\n").expect("a line");
        assert_eq!(n, 1234);
        assert_eq!(t, Duration::from_millis(500));
        assert_eq!(parse_line("nothing"), None);
        let fields: Vec<u64> = (3..=17).collect();
        let (own, reaped) = times(&fields);
        assert_eq!(own.user, 0.14);
        assert_eq!(reaped.system, 0.17);
    }
}
