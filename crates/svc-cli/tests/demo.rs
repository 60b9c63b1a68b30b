//! `svc demo`, the README's first command, as a new user runs it: no profile, no saved session,
//! no emulator of their own. The tour must end well and show each part (the lines checked here
//! do not depend on time or on the machine).

mod common;

use common::run::{TempDir, svc};

#[tokio::test(flavor = "multi_thread")]
async fn the_tour_runs_to_its_end() {
    let home = TempDir::new("demo-home");
    let out = svc(vec![("HOME", home.path().to_owned())], &["demo"], None).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    for expected in [
        "Start the emulator",
        "Records: typed, with your own struct",
        "SQL: anything that could write is refused by the engine",
        r#"refunded               [{"id":7,"status":"refunded","total":379.97}]"#,
        r#"wf-refund              [{"id":8,"status":"refunded","note":"damaged in transit"}]"#,
        "wf-reopen failed       step 2 (shop.set_status): The database refused the statement: NOT NULL constraint failed: orders.status.",
        "Next steps",
        // What svc is, first; where to go next, last, with the lines to paste.
        "svc is the REST API of a low-code administration platform",
        "Test your own code against the emulator (docs/testing.md)",
        "let client = svc_api::Client::builder_for(&emulator).build()?;",
    ] {
        assert!(stdout.contains(expected), "{expected:?} not in:\n{stdout}");
    }
    // The dependency line names this release's `major.minor`.
    let version: Vec<&str> = env!("CARGO_PKG_VERSION").splitn(3, '.').take(2).collect();
    let line = format!("   svc-emulator = \"{}\"", version.join("."));
    assert!(stdout.contains(&line), "{line:?} not in:\n{stdout}");
    // The lines to paste are docs/testing.md's, as that guide has them today.
    let guide = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join("docs/testing.md"),
    )
    .expect("docs/testing.md");
    let block = guide
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a toml block in docs/testing.md");
    for line in block.lines() {
        assert!(
            stdout.contains(&format!("   {line}\n")),
            "docs/testing.md's {line:?} not in:\n{stdout}"
        );
    }
}

/// `svc demo | head`: a reader that goes away is not a panic. Here stdout is a pipe whose
/// reading end is closed before the command starts, so its very first line fails: the tour
/// stops there and the command ends quietly with success, as every other command does.
#[test]
fn a_closed_stdout_ends_the_tour_quietly() {
    let home = TempDir::new("demo-closed-stdout");
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_svc"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .arg("demo")
        .stdin(std::process::Stdio::null())
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .output()
        .expect("svc runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.is_empty(),
        "nothing to say on a closed pipe: {stderr}"
    );
}
