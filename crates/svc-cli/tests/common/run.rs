//! Running the `svc` binary from a test, and a directory of the test's own.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs `svc` with only `env` (nothing inherited but `PATH`: no profile, no saved session),
/// `stdin` given as its input, on a blocking thread so that an emulator served by the test's
/// runtime keeps answering meanwhile.
pub async fn svc(env: Vec<(&'static str, String)>, args: &[&str], stdin: Option<&str>) -> Output {
    let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
    let stdin = stdin.map(str::to_owned);
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_svc"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env)
            .args(&args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("svc runs");
        if let Some(text) = stdin {
            let mut input = child.stdin.take().expect("a piped stdin");
            input
                .write_all(text.as_bytes())
                .expect("svc reads its stdin");
        }
        child.wait_with_output().expect("svc ends")
    })
    .await
    .expect("the svc command's thread")
}

/// A directory under the system temp dir, removed when dropped.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    /// A new, empty directory whose name holds `label`.
    pub fn new(label: &str) -> Self {
        static N: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "svc-cli-{label}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("a temp dir");
        Self(path)
    }

    /// The directory as text.
    pub fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temp dir")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
