//! `svc emulator export DIR` where other users can write (DIR, or the directory it is, or will
//! be, made in): the export is written, with a warning on stderr, as the emulator warns of
//! `--export-on-exit DIR` and `--data FILE` there (issue 83).

mod common;

use common::run::{TempDir, svc};
use svc_emulator::{Emulator, EmulatorConfig};

#[cfg(unix)]
#[tokio::test]
async fn an_export_directory_others_can_write_is_warned_of() {
    use std::os::unix::fs::PermissionsExt;

    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let env = || {
        vec![
            ("SVC_PROJECT", emulator.project().to_string()),
            ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
            ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
            ("SVC_API_KEY", emulator.api_key().to_owned()),
        ]
    };
    let temp = TempDir::new("export-shared");
    std::fs::write(temp.0.join("notes.txt"), "someone else's").unwrap();
    let mode = |mode: u32| {
        std::fs::set_permissions(&temp.0, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    mode(0o777);
    let state = temp.0.join("state");
    let state_arg = state.to_str().unwrap();

    let out = svc(env(), &["emulator", "export", state_arg], None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("svc: warning: ")
            && stderr.contains(temp.path())
            && stderr.contains("can be written by other users"),
        "{stderr}"
    );
    assert!(state.join("svc-emulator-export.json").is_file());

    mode(0o755);
    let out = svc(env(), &["emulator", "export", state_arg], None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");

    // An earlier export, private, in a directory others can write: they could move it aside
    // and put their own in its place. Warned of, as a missing one is.
    mode(0o777);
    let out = svc(env(), &["emulator", "export", state_arg], None).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("svc: warning: the directory {} that", temp.path()))
            && stderr.contains("can be written by other users"),
        "{stderr}"
    );
    mode(0o755);
    emulator.shutdown().await;
}
