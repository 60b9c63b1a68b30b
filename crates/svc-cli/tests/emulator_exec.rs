//! `svc emulator exec -- CMD`: an emulator around one command, which gets the environment `svc`
//! reads; and `svc emulator requests`, the journal from the command line. Each test runs the
//! real binary, whose emulator serves real sockets on loopback.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::run::{TempDir, svc};

const SVC: &str = env!("CARGO_BIN_EXE_svc");

/// Runs `svc` with `args` and `env`; its stdout, once it has ended with success.
async fn succeeds(env: Vec<(&'static str, String)>, args: &[&str]) -> String {
    let out = svc(env, args, None).await;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test(flavor = "multi_thread")]
async fn the_command_gets_the_environment_and_its_exit_code_is_svcs() {
    let dir = TempDir::new("exec-env");
    let startup = format!("{}/startup.json", dir.path());
    // The variables, one a line, then exit 7.
    let script = "for v in SVC_API_BASE_URL SVC_APP_BASE_URL SVC_PROJECT SVC_ENVIRONMENT \
                  SVC_API_KEY SVC_TOOLS_TOKEN; do printenv $v; done; \
                  printf '%s\\n' \"$SVC_EMULATOR_STARTUP\"; exit 7";
    let out = svc(
        vec![],
        &[
            "emulator",
            "exec",
            "--startup-file",
            &startup,
            "--",
            "sh",
            "-c",
            script,
        ],
        None,
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{stdout}\n{stderr}");
    assert!(
        stderr.is_empty(),
        "svc adds nothing to a failed command's: {stderr}"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 7, "{stdout}");
    let line: serde_json::Value = serde_json::from_str(lines[6]).expect("the start line");
    assert_eq!(lines[0], line["api_base_url"]);
    assert_eq!(lines[1], line["app_base_url"]);
    assert_eq!(lines[2], "demo");
    assert_eq!(lines[3], "prod");
    assert_eq!(lines[4], line["api_key"]);
    assert_eq!(lines[5], line["resource_tokens"]["__svc_app__"]);
    assert!(line["resource_tokens"]["shop"].is_string(), "{line}");
    // The same line in the file asked for, which only its owner can read.
    let file = std::fs::read_to_string(&startup).expect("the start line's file");
    assert_eq!(file.trim_end(), lines[6]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&startup).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
    // The emulator stopped with the command: its port answers no more.
    let address = line["api_base_url"]
        .as_str()
        .and_then(|u| u.strip_prefix("http://"))
        .expect("an http:// URL");
    assert!(std::net::TcpStream::connect(address).is_err(), "{address}");
}

#[tokio::test(flavor = "multi_thread")]
async fn svc_itself_runs_against_the_emulator_it_is_given() {
    // A caller's own settings for another service would win in svc: exec keeps them out.
    // And `svc` runs though none is on PATH (a checkout's `cargo run`): exec is svc.
    let elsewhere = vec![
        ("VITE_SVC_API_BASE_URL", "http://127.0.0.1:9".to_owned()),
        ("VITE_SVC_PROJECT", "elsewhere".to_owned()),
        ("SVC_TOKEN", "a-token-of-elsewhere".to_owned()),
        ("PATH", "/usr/bin:/bin".to_owned()),
    ];
    let stdout = succeeds(
        elsewhere,
        &[
            "emulator",
            "exec",
            "--",
            "svc",
            "records",
            "list",
            "shop",
            "orders",
            "-f",
            "status=paid",
            "--per-page",
            "1",
            "-o",
            "json",
        ],
    )
    .await;
    let page: serde_json::Value = serde_json::from_str(&stdout).expect("a page");
    assert!(page["count"].as_u64().is_some_and(|n| n > 0), "{page}");
    assert_eq!(page["results"][0]["status"], "paid");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_that_cannot_run_is_a_usage_error() {
    let out = svc(
        vec![],
        &["emulator", "exec", "--", "no-such-program-here"],
        None,
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot run no-such-program-here"),
        "{stderr}"
    );
    let out = svc(vec![], &["emulator", "exec"], None).await;
    assert_eq!(out.status.code(), Some(2));
}

/// The two flags of a helper that starts `svc emulator` and may be killed (`--exit-with-stdin`,
/// `--remove-on-exit`) are refused by `exec`, whose emulator ends with its command: nothing runs.
#[tokio::test(flavor = "multi_thread")]
async fn the_flags_of_a_starter_that_may_be_killed_are_refused() {
    for flags in [
        &["--exit-with-stdin"][..],
        &["--remove-on-exit", "start-line.json"][..],
    ] {
        let mut args = vec!["emulator", "exec"];
        args.extend(flags);
        args.extend(["--", "sh", "-c", "echo ran"]);
        let out = svc(vec![], &args, None).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("not for `svc emulator exec`"), "{stderr}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("ran"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn requests_lists_the_journal_with_the_routes_filters() {
    // Two requests, one refused; then the journal three ways, from inside the same exec.
    let script = format!(
        "{SVC} records list shop orders --per-page 1 >/dev/null; \
         {SVC} records get shop orders 99999 >/dev/null 2>&1; \
         {SVC} emulator requests -o ndjson; echo ---; \
         {SVC} emulator requests --status 4xx -o ndjson; echo ---; \
         {SVC} emulator requests --method POST -o json"
    );
    let stdout = succeeds(vec![], &["emulator", "exec", "--", "sh", "-c", &script]).await;
    let parts: Vec<&str> = stdout.split("---\n").collect();
    let all: Vec<serde_json::Value> = parts[0]
        .lines()
        .map(|l| serde_json::from_str(l).expect("a request"))
        .collect();
    assert_eq!(all.len(), 2, "{stdout}");
    assert_eq!(all[0]["path"], "/projects/demo/prod/shop/models/orders");
    assert_eq!(all[1]["status"], 404);
    let refused: Vec<&str> = parts[1].lines().collect();
    assert_eq!(refused.len(), 1, "{stdout}");
    assert!(refused[0].contains("\"status\":404"), "{stdout}");
    assert_eq!(parts[2].trim(), "[]");
}

/// `--follow` prints each new request as it comes, and ends on Ctrl-C (SIGINT). Driven by what
/// it prints, never by the clock: a request is made, its line is awaited, then the signal.
#[test]
fn requests_follow_prints_new_requests_until_interrupted() {
    let dir = TempDir::new("exec-follow");
    let (mut host, env) = host(&dir, &[]);
    let mut follow = Command::new(SVC)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.clone())
        .args(["emulator", "requests", "--follow", "--method", "GET"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("svc runs");
    let made = Command::new(SVC)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.clone())
        .args([
            "records",
            "list",
            "shop",
            "customers",
            "--per-page",
            "1",
            "-o",
            "json",
        ])
        .output()
        .expect("svc runs");
    assert!(made.status.success(), "{made:?}");
    let mut lines = BufReader::new(follow.stdout.take().expect("piped")).lines();
    let first = lines.next().expect("a line").expect("text");
    let request: serde_json::Value = serde_json::from_str(&first).expect("a request");
    assert_eq!(request["model"], "customers", "{first}");
    let interrupted = Command::new("kill")
        .args(["-INT", &follow.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupted.success());
    let status = follow.wait().expect("follow ends");
    assert_eq!(status.code(), Some(0), "Ctrl-C ends --follow quietly");
    drop(host.stdin.take());
    assert_eq!(host.wait().expect("exec ends").code(), Some(0));
}

/// A start-line file that is a symbolic link is refused before anything starts: the link's
/// target (another user's file, or one of the caller's) is not written.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_startup_file_that_is_a_link_is_refused() {
    let dir = TempDir::new("exec-link");
    let target = format!("{}/victim", dir.path());
    std::fs::write(&target, "keep me").unwrap();
    let link = format!("{}/startup.json", dir.path());
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = svc(
        vec![],
        &["emulator", "exec", "--startup-file", &link, "--", "true"],
        None,
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is a symbolic link"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
}

/// The caller's profile, config file and saved session do not reach the command's `svc`: a
/// default profile whose token for `shop` would win over the emulator's key is not read.
#[tokio::test(flavor = "multi_thread")]
async fn the_callers_profile_does_not_reach_the_command() {
    let dir = TempDir::new("exec-profile");
    std::fs::create_dir_all(format!("{}/svc", dir.path())).unwrap();
    let config = serde_json::json!({
        "default_profile": "mine",
        "profiles": {"mine": {
            "project": "elsewhere",
            "api_key": "svc_key_of_the_callers_own",
            "resource_tokens": {"shop": "the-callers-shop-token"},
        }},
    });
    let file = format!("{}/svc/config.json", dir.path());
    std::fs::write(&file, config.to_string()).unwrap();
    let env = vec![
        ("SVC_CONFIG_DIR", dir.path().to_owned()),
        ("SVC_CONFIG", file.clone()),
        ("SVC_PROFILE", "mine".to_owned()),
        ("SVC_DRAFT", "1".to_owned()),
        // A variable of the caller's own that svc does not read passes.
        ("SVC_CI_EMAIL", "ada@example.com".to_owned()),
    ];
    let script = format!(
        "printenv SVC_CONFIG SVC_PROFILE SVC_DRAFT; printenv SVC_CI_EMAIL; \
         {SVC} records list shop orders --per-page 1 -o json"
    );
    let stdout = succeeds(env, &["emulator", "exec", "--", "sh", "-c", &script]).await;
    let (own, page) = stdout.split_once('\n').expect("two parts");
    assert_eq!(own, "ada@example.com");
    let page: serde_json::Value = serde_json::from_str(page).expect("only the page");
    assert!(page["count"].as_u64().is_some_and(|n| n > 0), "{page}");
}

/// SIGTERM to `svc emulator exec` (a CI timeout) is passed to the command's process group at
/// once: the command's trap still reaches the emulator (it stops after the command), its own
/// background child stops too, and svc ends with the command's code. Driven by files the
/// command writes, never by the clock.
#[cfg(target_os = "linux")]
#[test]
fn sigterm_is_passed_to_the_commands_group_and_the_emulator_stops_after() {
    let dir = TempDir::new("exec-term");
    let (ready, pid, answer) = (
        format!("{}/ready", dir.path()),
        format!("{}/pid", dir.path()),
        format!("{}/answer.json", dir.path()),
    );
    let script = format!(
        "trap '{SVC} records list shop orders --per-page 1 -o json > {answer}; exit 3' TERM; \
         sleep 300 & echo $! > {pid}; echo > {ready}; wait"
    );
    let mut exec = Command::new(SVC)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .args(["emulator", "exec", "--", "sh", "-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("svc runs");
    wait_until(
        || std::path::Path::new(&ready).exists(),
        "the command is ready",
    );
    let sleeper = std::fs::read_to_string(&pid)
        .expect("the pid")
        .trim()
        .to_owned();
    // The shell writes `ready` once it has forked the child, which may still be the shell
    // (dash) until it runs `sleep`: a TERM caught there is dash's, lost at the exec, and the
    // sleeper would live on. So the signal goes once the child is `sleep`.
    let cmdline = format!("/proc/{sleeper}/cmdline");
    wait_until(
        || std::fs::read(&cmdline).is_ok_and(|c| c.starts_with(b"sleep\0")),
        "the command's own child runs sleep",
    );
    let sent = Command::new("kill")
        .args(["-TERM", &exec.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success());
    let status = exec.wait().expect("exec ends");
    assert_eq!(
        status.code(),
        Some(3),
        "the command's trap ran and set the code"
    );
    let page: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&answer).expect("the trap's answer"))
            .expect("a page: the emulator still served the command's trap");
    assert!(page["count"].as_u64().is_some_and(|n| n > 0), "{page}");
    // The background child got the signal too (gone, a zombie until init reaps it, or its
    // number already another process's).
    wait_until(
        || {
            std::fs::read(&cmdline).map_or(true, |c| !c.starts_with(b"sleep\0"))
                || std::fs::read_to_string(format!("/proc/{sleeper}/stat"))
                    .is_ok_and(|stat| stat.split_whitespace().nth(2) == Some("Z"))
        },
        "the command's own child ended",
    );
}

/// Waits for `done`, checking every 20 ms; fails after a minute (a deadline far past any
/// machine's pace, never a measure of it).
#[cfg(target_os = "linux")]
fn wait_until(done: impl Fn() -> bool, what: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !done() {
        assert!(std::time::Instant::now() < deadline, "never: {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `--follow` says when the journal dropped requests it had not printed: the follower is
/// frozen (SIGSTOP) while more requests arrive than the journal holds, then thawed; its next
/// look names the drop. A gate, not a race: it cannot look while frozen.
#[cfg(unix)]
#[test]
fn requests_follow_says_when_it_missed_requests() {
    let dir = TempDir::new("exec-follow-missed");
    let (mut host, env) = host(&dir, &["--journal-capacity", "3"]);
    let list = |model: &str| {
        let made = Command::new(SVC)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env.clone())
            .args([
                "records",
                "list",
                "shop",
                model,
                "--per-page",
                "1",
                "-o",
                "json",
            ])
            .output()
            .expect("svc runs");
        assert!(made.status.success(), "{made:?}");
    };
    let mut follow = Command::new(SVC)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.clone())
        .args(["emulator", "requests", "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("svc runs");
    list("customers");
    let mut lines = BufReader::new(follow.stdout.take().expect("piped")).lines();
    let first = lines.next().expect("a line").expect("text");
    assert!(first.contains("customers"), "{first}");
    let signal = |name: &str, pid: u32| {
        let sent = Command::new("kill")
            .args([name, &pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success());
    };
    signal("-STOP", follow.id());
    for _ in 0..6 {
        list("orders");
    }
    signal("-CONT", follow.id());
    let mut notes = BufReader::new(follow.stderr.take().expect("piped")).lines();
    let note = notes.next().expect("a note").expect("text");
    assert!(
        note.starts_with("note: the journal dropped ") && note.contains("some may be missing"),
        "{note}"
    );
    signal("-INT", follow.id());
    assert_eq!(follow.wait().expect("follow ends").code(), Some(0));
    drop(host.stdin.take());
    assert_eq!(host.wait().expect("exec ends").code(), Some(0));
}

/// An emulator around `cat` (it lives until the test closes its stdin), started with `flags`;
/// the variables that reach it, read from its start line.
fn host(dir: &TempDir, flags: &[&str]) -> (std::process::Child, Vec<(&'static str, String)>) {
    let startup = format!("{}/startup.json", dir.path());
    let host = Command::new(SVC)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .args(["emulator", "exec"])
        .args(flags)
        .args(["--startup-file", &startup, "--", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("svc runs");
    // The start line is written (whole, then renamed) before the command runs.
    let line = loop {
        match std::fs::read_to_string(&startup) {
            Ok(text) if text.ends_with('\n') => break text,
            _ => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    };
    let line: serde_json::Value = serde_json::from_str(&line).expect("the start line");
    let env = ["api_base_url", "project", "api_key"]
        .iter()
        .zip(["SVC_API_BASE_URL", "SVC_PROJECT", "SVC_API_KEY"])
        .map(|(key, name)| (name, line[*key].as_str().unwrap_or_default().to_owned()))
        .collect();
    (host, env)
}

/// `exec --export-on-exit DIR` writes the state the command left, and `exec --import DIR`
/// starts the next command's emulator from it: a suite run, then run again where it stopped.
#[tokio::test(flavor = "multi_thread")]
async fn a_suite_run_exported_on_exit_is_where_the_next_run_starts() {
    let dir = TempDir::new("exec-state");
    let state = format!("{}/state", dir.path());
    // The first run deletes order 3, through the very svc that exec is.
    let out = svc(
        vec![],
        &[
            "emulator",
            "exec",
            "--export-on-exit",
            &state,
            "--",
            SVC,
            "records",
            "delete",
            "shop",
            "orders",
            "3",
            "--yes",
        ],
        None,
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("exported the state to"), "{stderr}");
    // The second starts where it stopped: order 3 is gone, order 4 is there.
    let out = svc(
        vec![],
        &[
            "emulator",
            "exec",
            "--import",
            &state,
            "--import-on-rows",
            "replace",
            "--",
            "sh",
            "-c",
            &format!("{SVC} records get shop orders 4 && ! {SVC} records get shop orders 3"),
        ],
        None,
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("imported project \"demo\""), "{stderr}");
}
