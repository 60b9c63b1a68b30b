//! Our emulator: built with cargo (`--workspace --all-features --bin svc-emulator`), run with
//! a config file of one project whose one resource is the emulator's copy of the database (an
//! SQLite path, or a `postgres://USER@HOST:PORT/DB` URL), and known by its one JSON startup line.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::Server;

/// The resource's name in the config.
const RESOURCE: &str = "db";
/// Its static token, sent raw in `Authorization` (the hosted service's form).
const TOKEN: &str = "tok_fidelity_db_0123456789";

/// Builds the binary (in release mode when `release`) and returns its path (from cargo's JSON
/// messages). With the workspace's features: `-p svc-emulator` alone resolves other features,
/// and in the dev profile the tests step of `cargo xtask ci` has built it with these (the
/// examples turn on the dev-dependencies' features, as tests do), so nothing compiles again.
pub fn build(root: &Path, release: bool) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let profile = if release { "release" } else { "dev" };
    let mut args = vec![
        "build",
        "--quiet",
        "--profile",
        profile,
        "--workspace",
        "--all-features",
        "--bin",
        "svc-emulator",
        "--message-format=json-render-diagnostics",
    ];
    if !release {
        args.push("--examples");
    }
    eprintln!("building the emulator (cargo {})", args.join(" "));
    let output = Command::new(cargo)
        .args(&args)
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !output.status.success() {
        return Err("the emulator did not build".to_owned());
    }
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|m| m["target"]["name"] == "svc-emulator")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| "cargo named no svc-emulator executable".to_owned())
}

/// A running emulator: where it listens, the path prefix of the resource and its credential.
#[derive(Debug)]
pub struct Emulator {
    pub server: Server,
    pub addr: SocketAddr,
    /// `/projects/{project}/{environment}/{resource}`.
    pub prefix: String,
    pub authorization: String,
}

/// Runs `binary --listen 127.0.0.1:0 ARGS` in `dir` (its stderr in `dir/emulator.log`) and
/// waits for its JSON startup line: the server and that line.
pub fn launch(binary: &Path, dir: &Path, args: &[String]) -> Result<(Server, Value), String> {
    let log_path = dir.join("emulator.log");
    let log = std::fs::File::create(&log_path)
        .map_err(|e| format!("creating {}: {e}", log_path.display()))?;
    let mut child = Command::new(binary)
        // The engine's string hashes' seed (`engine::HASH_SEED`): a MySQL `SET`'s members come
        // out in the same order from both.
        .env("PYTHONHASHSEED", super::engine::HASH_SEED)
        .arg("--listen")
        .arg("127.0.0.1:0")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("starting {}: {e}", binary.display()))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut server = Server::new("emulator", child, log_path);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let read = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(read.map(|_| line));
    });
    let line = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(line)) if !line.trim().is_empty() => line,
        _ => {
            std::thread::sleep(Duration::from_millis(300));
            let status = server
                .exited()
                .map_or_else(|| "still running".to_owned(), |s| s.to_string());
            return Err(format!(
                "the emulator printed no startup line ({status}):\n{}",
                server.log_tail()
            ));
        }
    };
    let info: Value = serde_json::from_str(line.trim())
        .map_err(|e| format!("the emulator's startup line is not JSON ({e}): {line}"))?;
    Ok((server, info))
}

/// Starts `binary` over `database` (an SQLite path or a PostgreSQL URL; config and log in `dir`),
/// `--lenient` when asked.
pub fn start(binary: &Path, dir: &Path, database: &str, lenient: bool) -> Result<Emulator, String> {
    let config = json!({"projects": [{
        "name": "fidelity",
        "environments": ["prod"],
        "resources": [{"name": RESOURCE, "token": TOKEN, "database": database}],
    }]});
    let config_path = dir.join("emulator.json");
    std::fs::write(&config_path, config.to_string())
        .map_err(|e| format!("writing {}: {e}", config_path.display()))?;
    let mut args = vec![
        "--config".to_owned(),
        config_path.to_string_lossy().into_owned(),
    ];
    if lenient {
        args.push("--lenient".to_owned());
    }
    let (server, info) = launch(binary, dir, &args)?;
    let base = info["api_base_url"].as_str().unwrap_or_default();
    let rest = base
        .strip_prefix("http://")
        .ok_or_else(|| format!("unexpected api_base_url {base:?}"))?;
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let addr: SocketAddr = host
        .parse()
        .map_err(|e| format!("api_base_url {base:?}: {e}"))?;
    let project = info["project"].as_str().unwrap_or("fidelity");
    let environment = info["environment"].as_str().unwrap_or("prod");
    let token = info["resource_tokens"][RESOURCE].as_str().unwrap_or(TOKEN);
    let path = if path.is_empty() {
        String::new()
    } else {
        format!("/{}", path.trim_end_matches('/'))
    };
    Ok(Emulator {
        server,
        addr,
        prefix: format!("{path}/projects/{project}/{environment}/{RESOURCE}"),
        authorization: token.to_owned(),
    })
}
