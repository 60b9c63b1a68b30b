//! `svc completions SHELL` and `svc man`: generated from the command's own definition, so every
//! command is in them; a closed pipe ends them quietly.

use std::io::{Read, Write};
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

/// The bash script, loaded into bash, completes as a person pressing Tab would see it.
#[cfg(unix)]
#[test]
fn bash_completes_commands_subcommands_and_values() {
    let script = String::from_utf8(svc(&["completions", "bash"]).stdout).unwrap();
    let complete = |line: &str| -> Vec<String> {
        // COMP_WORDS as bash splits the line; the last word is the one being completed.
        let words: Vec<&str> = line.split(' ').collect();
        let program = format!(
            "{script}\nCOMP_WORDS=({words})\nCOMP_CWORD={cword}\nCOMP_LINE='{line}'\nCOMP_POINT=${{#COMP_LINE}}\n_svc svc '{current}' '{previous}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
            words = words
                .iter()
                .map(|w| format!("'{w}'"))
                .collect::<Vec<_>>()
                .join(" "),
            cword = words.len() - 1,
            current = words[words.len() - 1],
            previous = words[words.len() - 2],
        );
        // On stdin: the script is longer than one argument may be.
        let mut bash = Command::new("bash")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .args(["--norc", "--noprofile", "-s"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("bash runs the completion script (install bash)");
        bash.stdin
            .take()
            .unwrap()
            .write_all(program.as_bytes())
            .unwrap();
        let out = bash.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(complete("svc rec"), ["records"]);
    assert_eq!(complete("svc records ex"), ["export"]);
    let formats = complete("svc records export --format ");
    assert!(
        formats.contains(&"csv".to_owned()) && formats.contains(&"ndjson".to_owned()),
        "{formats:?}"
    );
    assert_eq!(complete("svc completions fi"), ["fish"]);
}

/// What the shell gets when it asks svc for the completions of `words` (as the script that
/// `COMPLETE=bash svc` prints asks), with `env` as the settings.
async fn completed(env: &[(&str, String)], words: &[&str]) -> (Vec<String>, String) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_svc"));
    cmd.env_clear()
        .env("COMPLETE", "bash")
        .env("_CLAP_IFS", "\n")
        .env("_CLAP_COMPLETE_INDEX", (words.len() - 1).to_string())
        .env(
            "SVC_CONFIG_DIR",
            std::env::temp_dir().join("svc-completions-no-config"),
        )
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .arg("--")
        .args(words)
        .stdin(Stdio::null());
    let out = cmd.output().await.expect("svc runs");
    let stdout = String::from_utf8(out.stdout).unwrap();
    (
        stdout.lines().map(str::to_owned).collect(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `source <(COMPLETE=bash svc)`: resource names come from the project, model names from the
/// resource's tables; without a reachable project, none, and no error in the shell.
#[tokio::test]
async fn resource_and_model_names_are_completed_from_the_project() {
    let emulator = svc_emulator::Emulator::start(Default::default())
        .await
        .unwrap();
    let env = [
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
        ("SVC_API_KEY", emulator.api_key().to_owned()),
    ];
    let (names, _) = completed(&env, &["svc", "records", "list", "sh"]).await;
    assert_eq!(names, ["shop"]);
    let (names, _) = completed(&env, &["svc", "sql", ""]).await;
    assert!(names.contains(&"shop".to_owned()), "{names:?}");
    let (names, _) = completed(&env, &["svc", "records", "list", "shop", ""]).await;
    for model in ["customers", "orders", "products"] {
        assert!(names.contains(&model.to_owned()), "{names:?}");
    }
    let (names, _) = completed(&env, &["svc", "records", "get", "shop", "or"]).await;
    assert_eq!(names, ["orders"]);
    // The registration script the shell sources names svc as its completer.
    let script = Command::new(env!("CARGO_BIN_EXE_svc"))
        .env_clear()
        .env("COMPLETE", "bash")
        .output()
        .unwrap();
    let script = String::from_utf8(script.stdout).unwrap();
    assert!(script.contains("complete -o nospace"), "{script}");
    emulator.shutdown().await;

    let (names, stderr) = completed(&[], &["svc", "records", "list", "sh"]).await;
    assert!(names.is_empty(), "{names:?}");
    assert!(!stderr.contains("error"), "{stderr}");
}
