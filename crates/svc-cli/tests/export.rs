//! `svc records export` end to end, against `svc emulator` run as a child process over loopback:
//! a complete export to `--out`, and exports cut short by SIGINT or by the server going away.
//!
//! Nothing here depends on timing. The emulator adds latency to every request (fault mode), so an
//! export of the 12000 demo orders 10 at a time takes at least 1200 / 3 pages in flight x 100 ms
//! = 40 s; a test acts only once the export has demonstrably started (its temporary file, or
//! stdout, holds data), and every wait has a wide deadline. Child processes are killed on the way
//! out, panics included.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The longest any one wait may take.
const DEADLINE: Duration = Duration::from_secs(60);
/// Every request waits this long in the emulator (fault mode) in the slow tests.
const SLOW_MS: &str = "100";
const ORDERS: usize = 12_000;

/// A child process that is killed (and reaped) when dropped.
struct Kid {
    child: Child,
    what: &'static str,
}

impl Kid {
    fn spawn(what: &'static str, cmd: &mut Command) -> Self {
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        Self { child, what }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the exit, at most [`DEADLINE`].
    fn wait(&mut self) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "{} did not exit within {DEADLINE:?}",
                self.what
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("svc-cli-export-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("out")).unwrap();
        Self(dir)
    }

    /// Where exports go: nothing else is written there.
    fn out(&self) -> PathBuf {
        self.0.join("out")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn svc() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_svc"));
    // Only PATH is inherited: no session, no SVC_* from the developer's shell.
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd
}

/// `svc emulator` with `args`, and its startup line.
fn emulator(args: &[&str]) -> (Kid, Value) {
    let mut kid = Kid::spawn(
        "svc emulator",
        svc()
            .arg("emulator")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let stdout = kid.child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(DEADLINE)
        .expect("the emulator prints its startup line");
    let info: Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("the startup line is JSON ({e}): {line:?}"));
    (kid, info)
}

/// `svc records export shop orders ARGS` against the emulator; stdout and stderr go to files.
fn export(info: &Value, args: &[&str], stdout: &Path, stderr: &Path) -> Kid {
    let field = |k: &str| info[k].as_str().unwrap().to_owned();
    Kid::spawn(
        "svc records export",
        svc()
            .env("SVC_PROJECT", field("project"))
            .env("SVC_API_BASE_URL", field("api_base_url"))
            .env("SVC_APP_BASE_URL", field("app_base_url"))
            .env("SVC_API_KEY", field("api_key"))
            .args(["records", "export", "shop", "orders"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(fs::File::create(stdout).unwrap())
            .stderr(fs::File::create(stderr).unwrap()),
    )
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Waits until `ready` says the export has started writing, at most [`DEADLINE`]; fails early
/// if it exits first.
fn until_started(kid: &mut Kid, stderr: &Path, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(
            kid.running(),
            "the export ended before the test could act: {}",
            fs::read_to_string(stderr).unwrap_or_default()
        );
        assert!(
            start.elapsed() < DEADLINE,
            "the export wrote nothing within {DEADLINE:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The export's temporary file in `dir` holds data.
fn temp_file_has_data(dir: &Path, name: &str) -> bool {
    let prefix = format!(".{name}.");
    fs::read_dir(dir).unwrap().any(|e| {
        let e = e.unwrap();
        let n = e.file_name().to_string_lossy().into_owned();
        n.starts_with(&prefix) && n.ends_with(".tmp") && e.metadata().is_ok_and(|m| m.len() > 0)
    })
}

/// N in "N records written before".
fn count_in(stderr: &str) -> usize {
    let (before, _) = stderr
        .split_once(" records written")
        .or_else(|| stderr.split_once(" record written"))
        .unwrap_or_else(|| panic!("stderr says how many records were written: {stderr}"));
    before
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a count before \"records written\": {stderr}"))
}

fn complete_lines(text: &str) -> usize {
    assert!(text.is_empty() || text.ends_with('\n'), "no record is cut");
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).expect("each line is a whole record");
        assert!(record["id"].is_i64());
    }
    text.lines().count()
}

#[test]
fn an_export_to_a_file_replaces_it_whole() {
    let scratch = Scratch::new("ok");
    let (_emulator, info) = emulator(&[]);
    let out = scratch.out();
    let path = out.join("orders.ndjson");
    fs::write(&path, "the previous export\n").unwrap();
    let (stdout, stderr) = (scratch.0.join("stdout"), scratch.0.join("stderr"));

    let mut kid = export(
        &info,
        &["--per-page", "1000", "--out", path.to_str().unwrap()],
        &stdout,
        &stderr,
    );
    let status = kid.wait();
    let errors = fs::read_to_string(&stderr).unwrap();
    assert!(status.success(), "{status:?}: {errors}");
    // Off a terminal, no progress line: one summary line.
    let expected = format!("{ORDERS} records exported to {} in ", path.display());
    assert!(
        errors.starts_with(&expected) && errors.lines().count() == 1,
        "{errors:?}"
    );
    assert!(fs::read(&stdout).unwrap().is_empty());
    assert_eq!(names(&out), ["orders.ndjson"], "no temporary file is left");
    assert_eq!(complete_lines(&fs::read_to_string(&path).unwrap()), ORDERS);
}

#[cfg(unix)]
fn kill(signal: &str, pid: u32) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill {signal} {pid}: {status:?}");
}

#[cfg(unix)]
#[test]
fn sigint_leaves_the_previous_file_untouched() {
    use std::os::unix::process::ExitStatusExt;

    let scratch = Scratch::new("sigint");
    let (_emulator, info) = emulator(&["--fault-latency-ms", SLOW_MS]);
    let out = scratch.out();
    let path = out.join("orders.ndjson");
    let previous: Vec<u8> =
        b"{\"id\": 1}\n{\"id\": 2, \"note\": \"the previous export\"}\n".to_vec();
    fs::write(&path, &previous).unwrap();
    let (stdout, stderr) = (scratch.0.join("stdout"), scratch.0.join("stderr"));

    let mut kid = export(
        &info,
        &["--per-page", "10", "--out", path.to_str().unwrap()],
        &stdout,
        &stderr,
    );
    until_started(&mut kid, &stderr, || {
        temp_file_has_data(&out, "orders.ndjson")
    });
    assert_eq!(
        fs::read(&path).unwrap(),
        previous,
        "untouched while running"
    );
    kill("-INT", kid.pid());
    let status = kid.wait();
    let errors = fs::read_to_string(&stderr).unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "{status:?} (signal {:?}): {errors}",
        status.signal()
    );
    assert_eq!(fs::read(&path).unwrap(), previous, "byte for byte");
    assert_eq!(names(&out), ["orders.ndjson"], "the temporary file is gone");
    let n = count_in(&errors);
    assert!(n > 0 && n < ORDERS, "{errors}");
    assert!(errors.contains("SIGINT"), "{errors}");
    assert!(errors.contains("orders.ndjson was not changed"), "{errors}");
    assert!(errors.contains("was removed"), "{errors}");
}

#[cfg(unix)]
#[test]
fn sigint_on_stdout_says_how_many_records_went_out() {
    let scratch = Scratch::new("stdout");
    let (_emulator, info) = emulator(&["--fault-latency-ms", SLOW_MS]);
    let (stdout, stderr) = (scratch.0.join("stdout"), scratch.0.join("stderr"));

    let mut kid = export(&info, &["--per-page", "10"], &stdout, &stderr);
    until_started(&mut kid, &stderr, || {
        fs::metadata(&stdout).is_ok_and(|m| m.len() > 0)
    });
    kill("-INT", kid.pid());
    let status = kid.wait();
    let errors = fs::read_to_string(&stderr).unwrap();
    assert_eq!(status.code(), Some(130), "{errors}");
    let lines = complete_lines(&fs::read_to_string(&stdout).unwrap());
    assert_eq!(count_in(&errors), lines, "{errors}");
    assert!(lines < ORDERS);
}

#[cfg(unix)]
#[test]
fn a_server_gone_midway_leaves_no_partial_file() {
    let scratch = Scratch::new("gone");
    let (mut emulator, info) = emulator(&["--fault-latency-ms", SLOW_MS]);
    let out = scratch.out();
    let path = out.join("orders.csv");
    let previous = b"id,total\n1,10\n".to_vec();
    fs::write(&path, &previous).unwrap();
    let fresh = out.join("fresh.csv");
    let (stdout, stderr) = (scratch.0.join("stdout"), scratch.0.join("stderr"));
    let (stdout2, stderr2) = (scratch.0.join("stdout2"), scratch.0.join("stderr2"));

    let args = |p: &Path| {
        vec![
            "--per-page".to_owned(),
            "10".to_owned(),
            "--format".to_owned(),
            "csv".to_owned(),
            "--out".to_owned(),
            p.to_str().unwrap().to_owned(),
        ]
    };
    let over = args(&path);
    let mut kid = export(
        &info,
        &over.iter().map(String::as_str).collect::<Vec<_>>(),
        &stdout,
        &stderr,
    );
    let new = args(&fresh);
    let mut kid2 = export(
        &info,
        &new.iter().map(String::as_str).collect::<Vec<_>>(),
        &stdout2,
        &stderr2,
    );
    until_started(&mut kid, &stderr, || temp_file_has_data(&out, "orders.csv"));
    until_started(&mut kid2, &stderr2, || {
        temp_file_has_data(&out, "fresh.csv")
    });
    // SIGKILL: the server vanishes without a word.
    emulator.child.kill().unwrap();
    emulator.wait();

    for (kid, stderr, file, what) in [
        (&mut kid, &stderr, "orders.csv", "was not changed"),
        (&mut kid2, &stderr2, "fresh.csv", "was not created"),
    ] {
        let status = kid.wait();
        let errors = fs::read_to_string(stderr).unwrap();
        assert_eq!(status.code(), Some(4), "a network error: {errors}");
        let n = count_in(&errors);
        assert!(n > 0 && n < ORDERS, "{errors}");
        assert!(errors.contains(&format!("{file} {what}")), "{errors}");
        assert!(errors.contains("was removed"), "{errors}");
        assert!(errors.contains("hint: "), "{errors}");
    }
    assert_eq!(fs::read(&path).unwrap(), previous, "byte for byte");
    assert_eq!(names(&out), ["orders.csv"], "no temporary or new file");
}
