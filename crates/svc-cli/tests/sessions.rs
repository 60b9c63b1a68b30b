//! One saved session, many `svc` processes: commands started together in the last 30 s of the
//! access token make one refresh call between them, all succeed, and the session survives.
//!
//! Nothing here depends on how the processes are scheduled: whichever order they run in, the
//! refresh lock beside `session.json` lets exactly one of them refresh, and the others find the
//! rotated tokens in the file.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use svc_api::auth::{FileTokenStore, SVC_AUTH_KEY, TokenStore};
use svc_api::model::account::{AuthState, Timestamp};
use svc_api::transport::{HyperTransport, Transport};
use svc_emulator::{Emulator, EmulatorConfig};

/// A directory under the system temp dir, removed when dropped.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "svc-cli-{label}-{}-{}",
            std::process::id(),
            Timestamp::now().unix_seconds()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Children killed when dropped, so that a failing assertion leaves nothing running.
struct Children(Vec<Child>);

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `svc` with the project, both hosts and the config directory; no API key, no token: the
/// session is the only credential.
fn svc(emulator: &Emulator, config: &TempDir, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_svc"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SVC_PROJECT", emulator.project().to_string())
        .env("SVC_API_BASE_URL", emulator.api_base_url())
        .env("SVC_APP_BASE_URL", emulator.app_base_url())
        .env("SVC_CONFIG_DIR", &config.0)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

async fn run(mut cmd: Command) -> std::process::Output {
    tokio::task::spawn_blocking(move || cmd.output().expect("svc runs"))
        .await
        .unwrap()
}

/// Refresh calls the emulator received for its project (an emulator-only route).
async fn refresh_calls(emulator: &Emulator) -> u64 {
    let url = format!(
        "{}/_emulator/projects/{}/stats",
        emulator.api_base_url(),
        emulator.project()
    );
    let request = http::Request::get(url)
        .header("authorization", format!("Bearer {}", emulator.api_key()))
        .body(bytes::Bytes::new())
        .unwrap();
    let response = HyperTransport::new().send(request).await.unwrap();
    let body: Value = serde_json::from_slice(response.body()).unwrap();
    body["refresh_calls"].as_u64().unwrap()
}

fn saved(store: &FileTokenStore) -> AuthState {
    serde_json::from_str(&store.get(SVC_AUTH_KEY).unwrap().expect("a saved session")).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn eight_commands_in_the_refresh_window_share_one_refresh() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let config = TempDir::new("refresh-window");

    // Register and sign in, as a user would.
    for args in [
        &["register", "--email", "eve@example.com"][..],
        &["login", "--email", "eve@example.com"][..],
    ] {
        let mut cmd = svc(&emulator, &config, args);
        cmd.env("SVC_PASSWORD", "correct horse battery");
        let out = run(cmd).await;
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let store = FileTokenStore::new(config.0.join("svc").join("session.json"));
    let signed_in = saved(&store);

    // The access token is now 20 s from expiry as far as the clients know (the server still
    // accepts it): every command finds a refresh due.
    let in_window = signed_in.clone().with_access_token_expires(
        Timestamp::now()
            .checked_add(Duration::from_secs(20))
            .unwrap(),
    );
    store
        .set(SVC_AUTH_KEY, &serde_json::to_string(&in_window).unwrap())
        .unwrap();
    assert_eq!(refresh_calls(&emulator).await, 0);

    // Eight commands at once, as `xargs -P 8` would start them.
    let children = Children(
        (0..8)
            .map(|i| {
                let id = (i % 3 + 1).to_string();
                svc(
                    &emulator,
                    &config,
                    &["records", "get", "shop", "products", &id, "-o", "json"],
                )
                .spawn()
                .expect("svc starts")
            })
            .collect(),
    );
    let outputs = tokio::task::spawn_blocking(move || {
        let mut children = children;
        children
            .0
            .drain(..)
            .map(|child| child.wait_with_output().unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();

    for out in &outputs {
        assert!(
            out.status.success(),
            "exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        let record: Value = serde_json::from_slice(&out.stdout).expect("a record on stdout");
        assert!(record["id"].is_number(), "{record}");
    }
    assert_eq!(
        refresh_calls(&emulator).await,
        1,
        "one refresh for eight processes"
    );

    // The session survived with the rotated tokens, which the server accepts: a ninth command
    // works without refreshing again.
    let rotated = saved(&store);
    assert_ne!(rotated.refresh_token, signed_in.refresh_token);
    let out = run(svc(&emulator, &config, &["whoami", "-o", "json"])).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let me: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(me["email"], "eve@example.com");
    assert_eq!(refresh_calls(&emulator).await, 1);
    assert_eq!(saved(&store), rotated);
}
