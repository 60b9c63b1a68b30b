//! The binary's "die with the parent" options: `--exit-with-stdin` stops the emulator cleanly
//! when its stdin ends (the parent that held the pipe is gone), and `--remove-on-exit FILE`
//! removes the start line's copy however it stops.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::TempDir;
use serde_json::Value;

/// The binary with `args` and `envs` only (no `SVC_EMULATOR_*` of the caller's), stdin `stdin`.
fn spawn(args: &[&str], envs: &[(&str, &str)], stdin: Stdio) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_svc-emulator"));
    cmd.args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("SVC_EMULATOR_") {
            cmd.env_remove(name);
        }
    }
    cmd.envs(envs.iter().copied());
    cmd.spawn().unwrap()
}

/// The start line, as JSON.
fn startup_line(child: &mut Child) -> (String, Value) {
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let info = serde_json::from_str(&line).unwrap_or_else(|e| {
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        panic!("startup line {line:?} is not JSON ({e}); stderr: {err}")
    });
    (line, info)
}

/// The exit status, waiting for it with a generous deadline (a bound, not a timing): a process
/// that outlives it is killed and the test fails.
fn exit_within_a_minute(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the emulator did not stop within a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The status line of a request to the emulator at `api_base_url`: it serves.
fn serves(api_base_url: &str) -> String {
    let addr = api_base_url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /api/projects HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer.lines().next().unwrap_or_default().to_owned()
}

/// Writes the start line to `file`, as a helper does (the emulator only removes it).
fn copy_of_the_line(file: &Path, line: &str) {
    std::fs::write(file, line).unwrap();
    assert!(file.exists());
}

#[test]
fn the_end_of_stdin_stops_the_emulator_cleanly_and_removes_the_file() {
    let dir = TempDir::new();
    let file = dir.join("startup.json");
    let mut child = spawn(
        &[
            "--exit-with-stdin",
            "--remove-on-exit",
            file.to_str().unwrap(),
        ],
        &[],
        Stdio::piped(),
    );
    let (line, info) = startup_line(&mut child);
    copy_of_the_line(&file, &line);
    // What comes on stdin is no stop: only its end is.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"anything\n").unwrap();
    stdin.flush().unwrap();
    assert!(
        serves(info["api_base_url"].as_str().unwrap()).starts_with("HTTP/1.1 "),
        "{info}"
    );
    // The parent's end: the pipe's only write end closes.
    drop(stdin);
    let status = exit_within_a_minute(&mut child);
    assert!(status.success(), "a clean stop, as on SIGTERM: {status}");
    assert!(!file.exists(), "the start line's copy is removed");
}

#[test]
fn the_environment_sets_both_options_and_an_export_on_exit_is_written() {
    let dir = TempDir::new();
    let file = dir.join("startup.json");
    let export = dir.join("export");
    let mut child = spawn(
        &["--export-on-exit", export.to_str().unwrap()],
        &[
            ("SVC_EMULATOR_EXIT_WITH_STDIN", "true"),
            ("SVC_EMULATOR_REMOVE_ON_EXIT", file.to_str().unwrap()),
        ],
        Stdio::piped(),
    );
    let (line, _) = startup_line(&mut child);
    copy_of_the_line(&file, &line);
    drop(child.stdin.take());
    let status = exit_within_a_minute(&mut child);
    assert!(status.success(), "{status}");
    assert!(!file.exists());
    // Stopped as on SIGTERM: the export on exit ran.
    assert!(
        std::fs::read_dir(&export).unwrap().next().is_some(),
        "the export on exit is written"
    );
}

#[cfg(unix)]
#[test]
fn without_the_option_stdin_is_not_watched_and_sigterm_removes_the_file() {
    let dir = TempDir::new();
    let file = dir.join("startup.json");
    // Stdin at its end from the start (/dev/null): no stop without --exit-with-stdin.
    let mut child = spawn(
        &["--remove-on-exit", file.to_str().unwrap()],
        &[],
        Stdio::null(),
    );
    let (line, info) = startup_line(&mut child);
    copy_of_the_line(&file, &line);
    assert!(serves(info["api_base_url"].as_str().unwrap()).starts_with("HTTP/1.1 "));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = exit_within_a_minute(&mut child);
    assert!(status.success(), "{status}");
    assert!(!file.exists());
}

#[test]
fn a_start_that_fails_removes_the_file_too() {
    let dir = TempDir::new();
    let file = dir.join("startup.json");
    std::fs::write(&file, "").unwrap();
    let missing = dir.join("no-such-config.json");
    let mut child = spawn(
        &[
            "--config",
            missing.to_str().unwrap(),
            "--remove-on-exit",
            file.to_str().unwrap(),
            "--exit-with-stdin",
        ],
        &[],
        Stdio::piped(),
    );
    let status = exit_within_a_minute(&mut child);
    assert!(!status.success());
    assert!(!file.exists());
}

#[test]
fn the_help_documents_both_options() {
    let out = Command::new(env!("CARGO_BIN_EXE_svc-emulator"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    for option in [
        "--exit-with-stdin",
        "SVC_EMULATOR_EXIT_WITH_STDIN",
        "--remove-on-exit <FILE>",
        "SVC_EMULATOR_REMOVE_ON_EXIT",
    ] {
        assert!(help.contains(option), "{option} in:\n{help}");
    }
}

/// A parent gone while the emulator is still starting (here a PostgreSQL resource whose server
/// accepts the connection and never answers) ends the start there: the emulator exits at once,
/// without a start line and saying why (exit 1), instead of waiting out its connection's
/// timeout.
#[test]
fn the_end_of_stdin_during_the_start_ends_the_start() {
    let dir = TempDir::new();
    // A server that takes connections and says nothing: the gate is its first connection.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let (accepted, first) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in silent.incoming().flatten() {
            held.push(stream);
            let _ = accepted.send(());
        }
    });
    let config = dir.join("config.json");
    std::fs::write(
        &config,
        serde_json::json!({"projects": [{
            "name": "slow",
            "api_keys": ["svc_key_slow"],
            "resources": [{
                "name": "db",
                "token": "svc_tok_slow",
                "database": format!("postgres://nobody@127.0.0.1:{port}/db"),
            }],
        }]})
        .to_string(),
    )
    .unwrap();
    let mut child = spawn(
        &["--exit-with-stdin", "--config", config.to_str().unwrap()],
        &[],
        Stdio::piped(),
    );
    first
        .recv_timeout(Duration::from_secs(60))
        .expect("the emulator connects to the resource's server while it starts");
    drop(child.stdin.take());
    let status = exit_within_a_minute(&mut child);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(1), "{status}: {err}");
    assert!(
        err.contains("stdin ended while the emulator was starting") && !err.contains("Timeout"),
        "{err}"
    );
    assert_eq!(out, "", "no start line: it never served");
}
