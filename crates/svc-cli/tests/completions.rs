//! `svc completions SHELL` and `svc man`: generated from the command's own definition, so every
//! command is in them; a closed pipe ends them quietly.

use std::io::Read;
use std::process::{Command, Stdio};

fn svc(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_svc"))
        .env_clear()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("svc runs")
}

const COMMANDS: [&str; 8] = [
    "records",
    "pages",
    "sql",
    "login",
    "config",
    "emulator",
    "completions",
    "man",
];

#[test]
fn completion_scripts_know_every_command() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = svc(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {out:?}");
        let script = String::from_utf8(out.stdout).unwrap();
        for command in COMMANDS {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
        // Subcommands and options are completed too.
        assert!(
            script.contains("export") && script.contains("order-by"),
            "{shell}"
        );
    }
    let unknown = svc(&["completions", "cmd.exe"]);
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn the_man_page_is_roff_with_every_command() {
    let out = svc(&["man"]);
    assert!(out.status.success(), "{out:?}");
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH svc 1"), "{page}");
    for command in COMMANDS {
        assert!(page.contains(command), "the man page lacks {command}");
    }
}

#[test]
fn a_closed_pipe_is_not_a_panic() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_svc"))
        .env_clear()
        .args(["completions", "zsh"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read nothing and close: the script is larger than a pipe's buffer.
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(status.success(), "{status:?} {stderr}");
}
