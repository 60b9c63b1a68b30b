//! An import stopped midway (issue 83, F3: a SIGKILL between two of its writes: no undo)
//! leaves a `--data` file that no later start serves as it is: a start with `--data` alone
//! stops, saying what happened and what to do (the command line's too); the import run again
//! with `--import-on-rows replace` writes the whole export and clears that, and a start with
//! `--data` alone serves it from then on. Here, beside the runtime, because the stop after
//! `writes` writes (`Emulator::import_until`) is the runtime's, not its users'.

use std::path::PathBuf;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{Emulator, EmulatorConfig, ImportOnRows};

/// Two projects, each with a resource of notes whose bodies are unique.
const CONFIG: &str = r#"{"projects": [
    {"name": "p", "api_keys": ["key_p"], "resources": [{"name": "own", "token": "tok_p",
        "seed_sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT UNIQUE);"}]},
    {"name": "q", "api_keys": ["key_q"], "resources": [{"name": "own", "token": "tok_q",
        "seed_sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT UNIQUE);"}]}
]}"#;

/// A directory of its own under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        let name = format!(
            "svc-emulator-import-stopped-{}",
            uuid::Uuid::new_v4().simple()
        );
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The status and body of `method path` sent to `emu` with the resource token `token`, over
/// one HTTP/1.1 connection.
async fn send(emu: &Emulator, method: &str, path: &str, token: &str, body: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(emu.local_addr())
        .await
        .unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: emulator\r\nAuthorization: {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok());
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned());
    (status.unwrap_or(0), body.unwrap_or_default())
}

/// Creates a note `body` in `project`'s resource.
async fn note(emu: &Emulator, project: &str, body: &str) {
    let path = format!("/projects/{project}/prod/own/models/notes");
    let json = serde_json::json!({ "body": body }).to_string();
    let (status, answer) = send(emu, "POST", &path, &format!("tok_{project}"), &json).await;
    assert_eq!(status, 201, "{answer}");
}

/// The number of notes of `project`.
async fn notes(emu: &Emulator, project: &str) -> u64 {
    let path = format!("/projects/{project}/prod/own/models/notes");
    let (status, answer) = send(emu, "GET", &path, &format!("tok_{project}"), "").await;
    assert_eq!(status, 200, "{answer}");
    let page: serde_json::Value = serde_json::from_str(&answer).unwrap();
    page["count"].as_u64().unwrap_or_else(|| panic!("{page}"))
}

/// The numbers of notes of `p` and of `q`.
async fn both(emu: &Emulator) -> (u64, u64) {
    (notes(emu, "p").await, notes(emu, "q").await)
}

/// What the command line (`svc-emulator --config CONFIG --data DATA`) answers: the error the
/// binary prints before it exits 1, or a panic when it starts (within 30 s).
#[cfg(feature = "cli")]
async fn command_line_refusal(config: &std::path::Path, data: &std::path::Path) -> String {
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        emulator: crate::cli::EmulatorArgs,
    }
    let (config, data) = (config.as_os_str(), data.as_os_str());
    let args = ["svc-emulator".as_ref(), "--config".as_ref(), config];
    let args = args.into_iter().chain(["--data".as_ref(), data]);
    let cli = Cli::try_parse_from(args).unwrap();
    let run = crate::cli::run(cli.emulator);
    match tokio::time::timeout(std::time::Duration::from_secs(30), run).await {
        Ok(Err(e)) => e.to_string(),
        Ok(Ok(())) => panic!("the command line served and stopped"),
        Err(_) => panic!("the command line served a --data file an import stopped in"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_import_stopped_midway_is_refused_until_it_is_run_again() {
    let dir = TempDir::new();
    let config = dir.0.join("config.json");
    std::fs::write(&config, CONFIG).unwrap();
    let source = Emulator::start(EmulatorConfig::default().config_file(&config))
        .await
        .unwrap();
    for body in ["a", "b"] {
        note(&source, "p", body).await;
        note(&source, "q", body).await;
    }
    let export = dir.0.join("export");
    source.export(&export).await.unwrap();
    source.shutdown().await;

    let mut writes = 0;
    loop {
        let data = dir.0.join(format!("data-{writes}.sqlite"));
        let started = || {
            EmulatorConfig::default()
                .config_file(&config)
                .data_path(&data)
        };
        let done = Emulator::import_until(started().import(&export), writes)
            .await
            .unwrap();
        if done {
            let emu = Emulator::start(started()).await.unwrap();
            assert_eq!(both(&emu).await, (2, 2));
            emu.shutdown().await;
            break;
        }
        let refused = Emulator::start(started()).await.unwrap_err().to_string();
        assert!(
            refused.contains("did not end")
                && refused.contains(&format!(
                    "--import {} --import-on-rows replace",
                    export.display()
                ))
                && refused.contains("remove the --data file"),
            "stopped after {writes} write(s): {refused}"
        );
        #[cfg(feature = "cli")]
        if writes == 1 {
            let refused = command_line_refusal(&config, &data).await;
            assert!(refused.contains("did not end"), "{refused}");
        }
        // Nor another import over it than the whole export's.
        let added = Emulator::start(started().import(&export).import_on_rows(ImportOnRows::Add))
            .await
            .unwrap_err()
            .to_string();
        assert!(added.contains("did not end"), "{added}");

        let again = Emulator::start(
            started()
                .import(&export)
                .import_on_rows(ImportOnRows::Replace),
        )
        .await
        .unwrap();
        assert_eq!(both(&again).await, (2, 2));
        again.shutdown().await;
        let emu = Emulator::start(started()).await.unwrap();
        assert_eq!(both(&emu).await, (2, 2));
        emu.shutdown().await;
        writes += 1;
    }
    assert!(writes >= 4, "{writes} writes");
}
