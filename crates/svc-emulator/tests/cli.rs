//! The `svc-emulator` binary: one JSON line on stdout when ready, flags and environment
//! variables, a clean exit on SIGTERM.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};

use common::TempDir;
use serde_json::Value;

fn spawn(args: &[&str], envs: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_svc-emulator"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in [
        "SVC_EMULATOR_LISTEN",
        "SVC_EMULATOR_DATA",
        "SVC_EMULATOR_CONFIG",
        "SVC_EMULATOR_TLS",
        "SVC_EMULATOR_FIXTURES",
        "SVC_EMULATOR_FIXTURES_ON_ROWS",
        "SVC_EMULATOR_IMPORT",
        "SVC_EMULATOR_IMPORT_ON_ROWS",
        "SVC_EMULATOR_EXPORT_ON_EXIT",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(envs.iter().copied());
    cmd.spawn().unwrap()
}

/// Reads the startup line, sends SIGTERM, and returns the line and whatever else came on stdout.
fn run_until_ready_then_stop(mut child: Child) -> (Value, String) {
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let info: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        panic!("startup line {line:?} is not JSON ({e}); stderr: {err}")
    });
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    let exit = child.wait().unwrap();
    assert!(exit.success(), "exit status {exit}");
    (info, rest)
}

#[test]
fn prints_one_json_line_and_stops_on_sigterm() {
    let dir = TempDir::new();
    let data = dir.join("meta.sqlite");
    let child = spawn(&["--data", data.to_str().unwrap()], &[]);
    let (info, rest) = run_until_ready_then_stop(child);
    assert!(rest.is_empty(), "nothing after the startup line: {rest:?}");
    let api = info["api_base_url"].as_str().unwrap();
    assert!(api.starts_with("http://127.0.0.1:"), "{info}");
    assert_eq!(info["app_base_url"], format!("{api}/api"));
    assert_eq!(info["project"], "demo");
    assert_eq!(info["environment"], "prod");
    assert!(info["api_key"].as_str().unwrap().starts_with("svc_key_"));
    let shop_token = info["resource_tokens"]["shop"].as_str().unwrap().to_owned();
    assert!(shop_token.starts_with("svc_tok_"), "{info}");
    let tools_token = info["resource_tokens"]["__svc_app__"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(tools_token.starts_with("svc_tools_"), "{info}");
    assert!(info.get("tls_ca_pem").is_none());
    assert!(data.exists());

    // Same data path, same key; TLS switched on through the environment.
    let child = spawn(
        &[],
        &[
            ("SVC_EMULATOR_DATA", data.to_str().unwrap()),
            ("SVC_EMULATOR_TLS", "true"),
        ],
    );
    let (again, _) = run_until_ready_then_stop(child);
    assert_eq!(again["api_key"], info["api_key"]);
    assert_eq!(again["resource_tokens"]["shop"], shop_token.as_str());
    assert_eq!(
        again["resource_tokens"]["__svc_app__"],
        tools_token.as_str()
    );
    assert!(
        again["api_base_url"]
            .as_str()
            .unwrap()
            .starts_with("https://127.0.0.1:")
    );
    let pem = again["tls_ca_pem"].as_str().unwrap();
    assert!(
        std::fs::read_to_string(pem)
            .unwrap()
            .contains("BEGIN CERTIFICATE")
    );
}

#[test]
fn bad_config_fails_with_a_message_on_stderr() {
    let dir = TempDir::new();
    let config = dir.join("bad.json");
    std::fs::write(&config, r#"{"projects": []}"#).unwrap();
    let output = spawn(&["--config", config.to_str().unwrap()], &[])
        .wait_with_output()
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("at least one project"), "{stderr}");
}

/// A data directory that other users can write in is used as it is, with a warning on stderr
/// (stdout keeps only the startup line); the data files themselves are private.
#[cfg(unix)]
#[test]
fn a_data_directory_others_can_write_is_a_warning_on_stderr() {
    use std::os::unix::fs::PermissionsExt;

    let dir = TempDir::new();
    std::fs::write(dir.join("notes.txt"), b"someone else's").unwrap();
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o777)).unwrap();
    let data = dir.join("meta.sqlite");
    let mut child = spawn(&["--data", data.to_str().unwrap()], &[]);
    let stderr = child.stderr.take().unwrap();
    let (_, rest) = run_until_ready_then_stop(child);
    assert!(rest.is_empty(), "{rest:?}");
    let mut err = String::new();
    BufReader::new(stderr).read_to_string(&mut err).unwrap();
    assert!(
        err.contains("svc-emulator: warning: the data directory")
            && err.contains("can be written by other users"),
        "{err}"
    );
    let mode = std::fs::metadata(&data).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");
}

/// `GET path` with a bearer key over a plain HTTP/1.1 connection that closes after the answer:
/// the status line and the body.
fn get(api_base_url: &str, path: &str, key: &str) -> (String, String) {
    request(api_base_url, "GET", path, &format!("Bearer {key}"), "")
}

/// `method path` with `authorization` and a JSON `body` (none when empty), as [`get`].
fn request(
    api_base_url: &str,
    method: &str,
    path: &str,
    authorization: &str,
    body: &str,
) -> (String, String) {
    use std::io::Write;
    let addr = api_base_url.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {authorization}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_owned(), body.to_owned())
}

#[test]
fn the_fixtures_flag_loads_a_folder_per_resource_and_a_bad_fixture_fails_on_stderr() {
    let dir = TempDir::new();
    let config = dir.join("config.json");
    std::fs::write(
        &config,
        r#"{"projects": [{"name": "p", "api_keys": ["key_p"], "resources": [{
            "name": "shop", "token": "tok_shop",
            "seed_sql": "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, vip BOOLEAN);"
        }]}]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("fixtures/shop")).unwrap();
    let csv = dir.join("fixtures/shop/customers.csv");
    std::fs::write(&csv, "id,name,vip\n1,Ada,true\n2,Grace,false\n").unwrap();
    let fixtures = dir.join("fixtures");
    let args = [
        "--config",
        config.to_str().unwrap(),
        "--fixtures",
        fixtures.to_str().unwrap(),
    ];
    let mut child = spawn(&args, &[]);
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let info: Value = serde_json::from_str(&line).unwrap();
    let api = info["api_base_url"].as_str().unwrap();
    let (status, body) = get(api, "/projects/p/prod/shop/models/customers?id=1", "key_p");
    let _ = child.kill();
    let _ = child.wait();
    assert!(status.contains("200"), "{status}: {body}");
    let page: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(page["count"], 1, "{body}");
    assert_eq!(page["results"][0]["vip"], true, "{body}");

    // The same through the environment, with a value the field refuses: exit 1, and stderr
    // names the file, the line and the field.
    std::fs::write(&csv, "id,name,vip\n1,Ada,true\n2,Grace,false\nx,Linus,\n").unwrap();
    let output = spawn(
        &["--config", config.to_str().unwrap()],
        &[("SVC_EMULATOR_FIXTURES", fixtures.to_str().unwrap())],
    )
    .wait_with_output()
    .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("customers.csv") && stderr.contains("line 4"),
        "{stderr}"
    );
}

/// A run with `--export-on-exit DIR` writes its state on SIGTERM (and says so on stderr); a run
/// with `--import DIR` starts from it, once told what to do with the demo's seeded rows.
#[test]
fn a_run_exported_on_exit_is_where_the_next_run_starts() {
    let dir = TempDir::new();
    let state = dir.join("state");
    let child = spawn(&["--export-on-exit", state.to_str().unwrap()], &[]);
    let mut child = child;
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let info: Value = serde_json::from_str(&line).unwrap();
    let api = info["api_base_url"].as_str().unwrap().to_owned();
    let token = info["resource_tokens"]["shop"].as_str().unwrap().to_owned();
    let orders = "/projects/demo/prod/shop/models/orders";
    let (status, body) = request(&api, "DELETE", &format!("{orders}/7"), &token, "");
    assert!(status.contains("204"), "{status}: {body}");
    let key = info["api_key"].as_str().unwrap();
    let (status, _) = get(&api, &format!("{orders}/7"), key);
    assert!(status.contains("404"), "{status}");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let exit = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(exit.success(), "{exit}: {err}");
    assert!(err.contains("exported the state to"), "{err}");
    assert!(state.join("demo/records/shop/orders.json").is_file());

    // Without --import-on-rows the demo's seed stops the start, saying what to do.
    let output = spawn(&["--import", state.to_str().unwrap()], &[])
        .wait_with_output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--import-on-rows"), "{stderr}");

    let state_dir = state.to_str().unwrap();
    let mut child = spawn(
        &["--import", state_dir],
        &[("SVC_EMULATOR_IMPORT_ON_ROWS", "replace")],
    );
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let info: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    let api = info["api_base_url"].as_str().unwrap();
    let key = info["api_key"].as_str().unwrap();
    let (deleted, _) = get(api, &format!("{orders}/7"), key);
    let (kept, _) = get(api, &format!("{orders}/8"), key);
    let _ = child.kill();
    let _ = child.wait();
    assert!(deleted.contains("404"), "{deleted}");
    assert!(kept.contains("200"), "{kept}");
}
