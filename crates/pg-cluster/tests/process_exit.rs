//! The shared cluster, never dropped, still stops and is removed when its process ends: by
//! `exit`, by a panic, or killed with SIGKILL. The test runs this same test binary as the child
//! (the role in an environment variable), which starts `Cluster::shared()`, prints where the
//! server is, and ends.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pg_cluster::Cluster;

/// This test's name, for the child's `--exact` filter.
const TEST: &str = "the_shared_cluster_stops_when_its_process_ends";

/// Set in the child: how it ends (`exit`, `panic` or `kill`).
const ROLE: &str = "PG_CLUSTER_TEST_CHILD_ROLE";

/// The line the child prints: `PG_CLUSTER_CHILD <postmaster pid> <dir>`.
const MARK: &str = "PG_CLUSTER_CHILD";

/// How long the watchdog may take to stop the server and remove the directory after its
/// owner ended: generous, for a busy CI box (it takes well under a second).
const CLEANUP_DEADLINE: Duration = Duration::from_secs(60);

#[test]
#[ignore = "needs PostgreSQL binaries: run with --ignored (cargo xtask ci does)"]
fn the_shared_cluster_stops_when_its_process_ends() {
    if let Ok(role) = std::env::var(ROLE) {
        child(&role);
        return;
    }
    for role in ["exit", "panic", "kill"] {
        let (pid, dir) = run_child(role);
        wait_until_gone(role, pid, &dir);
    }
}

/// The child: starts the shared cluster, proves it answers, prints where it is, and ends.
fn child(role: &str) {
    let cluster = Cluster::shared().expect("the shared cluster");
    assert_eq!(cluster.psql("postgres", "SELECT 1").expect("psql"), "1\n");
    let pid_file = std::fs::read_to_string(cluster.dir().join("data").join("postmaster.pid"))
        .expect("postmaster.pid");
    let pid = pid_file.lines().next().expect("a first line").trim();
    println!("{MARK} {pid} {}", cluster.dir().display());
    std::io::stdout().flush().expect("flush");
    match role {
        "exit" => std::process::exit(0),
        "panic" => panic!("the child panics on purpose, with the shared cluster running"),
        // Waits to be killed; ends by itself if the parent goes away (stdin closes).
        _ => {
            let _ = std::io::stdin().read_to_end(&mut Vec::new());
        }
    }
}

/// Runs the child in `role` until it has ended, checking that it ended as the role says;
/// returns the pid of its server and its cluster's directory.
fn run_child(role: &str) -> (u32, PathBuf) {
    let exe = std::env::current_exe().expect("this test binary");
    let mut child = Command::new(exe)
        .args([
            "--exact",
            TEST,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ROLE, role)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the child");
    let mut stderr = child.stderr.take().expect("stderr");
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut found = None;
    let mut lines = stdout.lines();
    for line in lines.by_ref() {
        let line = line.expect("the child's stdout");
        // (The harness may have printed "test NAME ... " on the same line.)
        if let Some((_, rest)) = line.split_once(MARK) {
            let (pid, dir) = rest.trim().split_once(' ').expect("pid and dir");
            found = Some((pid.parse::<u32>().expect("pid"), PathBuf::from(dir)));
            break;
        }
    }
    if role == "kill" && found.is_some() {
        child.kill().expect("kill the child");
    }
    lines.for_each(drop);
    let status = child.wait().expect("wait for the child");
    let stderr = stderr.join().expect("stderr thread");
    let Some((pid, dir)) = found else {
        panic!("the {role} child printed no {MARK} line ({status}); its stderr:\n{stderr}");
    };
    use std::os::unix::process::ExitStatusExt;
    match role {
        "exit" => assert_eq!(status.code(), Some(0), "{stderr}"),
        "panic" => {
            assert_eq!(status.code(), Some(101), "{stderr}");
            assert!(stderr.contains("panics on purpose"), "{stderr}");
        }
        _ => assert_eq!(status.signal(), Some(9), "{stderr}"),
    }
    (pid, dir)
}

/// Waits until the server `pid` has exited, no live process names `dir` on its command line
/// (the watchdog does), and `dir` is gone; fails after [`CLEANUP_DEADLINE`].
fn wait_until_gone(role: &str, pid: u32, dir: &Path) {
    let deadline = Instant::now() + CLEANUP_DEADLINE;
    loop {
        let server = alive(pid);
        let mentioning = processes_mentioning(dir);
        if !server && mentioning.is_empty() && !dir.exists() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} s after the {role} child ended: server {pid} alive: {server}, processes naming \
             {}: {mentioning:?}, directory there: {}",
            CLEANUP_DEADLINE.as_secs(),
            dir.display(),
            dir.exists()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether process `pid` runs (a zombie does not count: it has exited).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit_once(") ")
            .is_some_and(|(_, s)| s.starts_with('Z'))
    })
}

/// The live processes whose command line contains `dir`.
fn processes_mentioning(dir: &Path) -> Vec<u32> {
    let needle = dir.display().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&needle))
                && alive(*pid)
        })
        .collect()
}
