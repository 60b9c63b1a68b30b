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
    // The same line in the file asked for.
    let file = std::fs::read_to_string(&startup).expect("the start line's file");
    assert_eq!(file.trim_end(), lines[6]);
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
    let elsewhere = vec![
        ("VITE_SVC_API_BASE_URL", "http://127.0.0.1:9".to_owned()),
        ("VITE_SVC_PROJECT", "elsewhere".to_owned()),
        ("SVC_TOKEN", "a-token-of-elsewhere".to_owned()),
    ];
    let stdout = succeeds(
        elsewhere,
        &[
            "emulator",
            "exec",
            "--",
            SVC,
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
    let startup = format!("{}/startup.json", dir.path());
    // An emulator whose command waits on its stdin: it lives until the test closes it.
    let mut host = Command::new(SVC)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .args(["emulator", "exec", "--startup-file", &startup, "--", "cat"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("svc runs");
    // The start line is written before the command runs; `cat` then waits.
    let line = loop {
        match std::fs::read_to_string(&startup) {
            Ok(text) if text.ends_with('\n') => break text,
            _ => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    };
    let line: serde_json::Value = serde_json::from_str(&line).expect("the start line");
    let env = [
        (
            "SVC_API_BASE_URL",
            line["api_base_url"].as_str().unwrap_or_default(),
        ),
        ("SVC_PROJECT", line["project"].as_str().unwrap_or_default()),
        ("SVC_API_KEY", line["api_key"].as_str().unwrap_or_default()),
    ];
    let mut follow = Command::new(SVC)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env)
        .args(["emulator", "requests", "--follow", "--method", "GET"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("svc runs");
    let made = Command::new(SVC)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env)
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
