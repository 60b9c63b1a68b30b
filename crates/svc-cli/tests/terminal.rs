//! `svc` on a terminal: the export's progress line, and passwords typed at a prompt without
//! echo. Each command runs on a pseudo-terminal driven by tests/pty/drive.py (python3's `pty`
//! module), which types a password only once the terminal's echo is off: nothing here depends
//! on timing.

use std::process::{Command, Output, Stdio};

use serde_json::Value;
use svc_emulator::{Emulator, EmulatorConfig};

/// The longest a command on the terminal may take, prompts included.
const DEADLINE_S: &str = "60";

/// What a command on the terminal did.
#[derive(Debug)]
struct OnTerminal {
    code: i64,
    /// Everything it wrote (stdout and stderr are the terminal), `\r\n` line ends.
    output: String,
    /// The terminal's echo was on again after it ended.
    echo_after: bool,
}

/// Runs `svc ARGS` on a pseudo-terminal with only `env` (and PATH); at each step, waits for the
/// text and for the echo to be off, then types.
async fn on_terminal(env: &[(&str, String)], args: &[&str], steps: &[(&str, &str)]) -> OnTerminal {
    on_terminal_steps(env, args, serde_json::to_string(steps).unwrap()).await
}

/// [`on_terminal`] with the driver's steps as JSON (`[expected, typed, "echo"]` types whatever
/// the echo: an answer to a question, not a password).
async fn on_terminal_steps(env: &[(&str, String)], args: &[&str], steps: String) -> OnTerminal {
    let driver = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pty/drive.py");
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("python3")
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env)
            .arg(driver)
            .arg(steps)
            .arg(DEADLINE_S)
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_svc"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect(
                "python3 runs the terminal tests (tests/pty/drive.py drives a pseudo-terminal): install python3",
            )
    })
    .await
    .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the driver reports in JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        out.status.success(),
        "the driver failed: {report}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    OnTerminal {
        code: report["code"].as_i64().unwrap(),
        output: report["output"].as_str().unwrap().to_owned(),
        echo_after: report["echo_after"].as_bool().unwrap(),
    }
}

/// Runs `svc ARGS` with pipes (no terminal anywhere).
fn piped(env: &[(&str, String)], args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_svc"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn hosts(emulator: &Emulator) -> Vec<(&'static str, String)> {
    vec![
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
    ]
}

/// A scratch directory, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(label: &str) -> Self {
        let path = std::env::temp_dir().join(format!("svc-cli-tty-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn path(&self) -> String {
        self.0.to_str().unwrap().to_owned()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a terminal shows of each line: the text after the last carriage return (a redrawn line
/// shows its last drawing).
fn shown_lines(output: &str) -> Vec<&str> {
    output
        .split("\r\n")
        .map(|line| line.rsplit('\r').next().unwrap_or(line))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn export_progress_on_a_terminal_gives_the_total_and_ends_with_a_summary() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let mut env = hosts(&emulator);
    env.push(("SVC_API_KEY", emulator.api_key().to_owned()));
    let scratch = Scratch::new("progress");
    let file = format!("{}/orders.ndjson", scratch.path());
    let filter = ["-f", "id__lte=3000", "--per-page", "500"];

    let mut args = vec!["records", "export", "shop", "orders", "--out", &file];
    args.extend(filter);
    let run = on_terminal(&env, &args, &[]).await;
    assert_eq!(run.code, 0, "{}", run.output);
    // The first record draws the line at once: the total comes from the first page.
    assert!(
        run.output.contains("\r1 of 3000 records (0%)"),
        "{:?}",
        run.output
    );
    // Then the summary takes the line's place, and ends it.
    let summary = format!("\r3000 records exported to {file} in ");
    assert!(run.output.contains(&summary), "{:?}", run.output);
    assert!(run.output.ends_with(" records/s)\r\n"), "{:?}", run.output);
    // What stays on the screen is that one line.
    assert_eq!(shown_lines(&run.output).len(), 2, "{:?}", run.output);
    assert!(shown_lines(&run.output)[0].starts_with(&summary[1..]));

    // The file holds exactly what an export off the terminal writes.
    let mut args = vec!["records", "export", "shop", "orders"];
    args.extend(filter);
    let off = piped(&env, &args, "");
    assert!(off.status.success());
    assert_eq!(std::fs::read(&file).unwrap(), off.stdout);
    // Off a terminal: one summary line, no redrawing.
    let err = String::from_utf8(off.stderr).unwrap();
    assert!(
        err.starts_with("3000 records exported in ") && err.ends_with(" records/s)\n"),
        "{err:?}"
    );
    assert_eq!(err.lines().count(), 1, "{err:?}");
    assert!(!err.contains('\r'), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn records_on_a_terminal_stdout_are_not_mixed_with_the_progress_line() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let mut env = hosts(&emulator);
    env.push(("SVC_API_KEY", emulator.api_key().to_owned()));
    let args = [
        "records",
        "export",
        "shop",
        "orders",
        "-f",
        "id__lte=2000",
        "--per-page",
        "100",
    ];
    let run = on_terminal(&env, &args, &[]).await;
    assert_eq!(run.code, 0, "{}", run.output);
    let lines = shown_lines(&run.output);
    let records = lines.iter().filter(|l| l.starts_with('{')).count();
    assert_eq!(records, 2000);
    for line in &lines {
        if line.starts_with('{') {
            let record: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("a whole record on its own line ({e}): {line:?}"));
            assert!(record["id"].is_i64());
        } else {
            assert!(
                line.is_empty() || line.contains(" records"),
                "only records and progress: {line:?}"
            );
        }
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("2000 records exported in ")),
        "{lines:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn passwords_typed_on_a_terminal_are_not_echoed() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let config = Scratch::new("login");
    let mut env = hosts(&emulator);
    env.push(("SVC_CONFIG_DIR", config.path()));
    const PASSWORD: &str = "correct horse battery";

    // Register asks twice; two different passwords are refused before anything is sent.
    let run = on_terminal(
        &env,
        &["register", "--email", "ana@example.com"],
        &[
            ("new password for ana@example.com: ", "one password\n"),
            ("the same password again: ", "another password\n"),
        ],
    )
    .await;
    assert_eq!(run.code, 2, "{}", run.output);
    assert!(
        run.output.contains("the two passwords typed differ"),
        "{}",
        run.output
    );
    assert!(!run.output.contains("one password"), "{}", run.output);
    assert!(run.echo_after, "the terminal gets its echo back");

    let run = on_terminal(
        &env,
        &["register", "--email", "ana@example.com", "-o", "json"],
        &[
            (
                "new password for ana@example.com: ",
                &format!("{PASSWORD}\n"),
            ),
            ("the same password again: ", &format!("{PASSWORD}\n")),
        ],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.output);
    assert!(
        run.output.contains("registered ana@example.com"),
        "{}",
        run.output
    );
    assert!(!run.output.contains(PASSWORD), "{}", run.output);

    // No password given: asked for, not shown; the session is saved.
    let session = config.0.join("svc").join("session.json");
    let run = on_terminal(
        &env,
        &["login", "--email", "ana@example.com", "-o", "json"],
        &[("password for ana@example.com: ", &format!("{PASSWORD}\n"))],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.output);
    assert!(
        run.output.contains("signed in as ana@example.com"),
        "{}",
        run.output
    );
    assert!(!run.output.contains(PASSWORD), "{}", run.output);
    assert!(run.echo_after);
    assert!(session.exists());
    std::fs::remove_file(&session).unwrap();

    // --password-stdin on a terminal: the same, not shown either.
    let run = on_terminal(
        &env,
        &[
            "login",
            "--email",
            "ana@example.com",
            "--password-stdin",
            "-o",
            "json",
        ],
        &[("password for ana@example.com: ", &format!("{PASSWORD}\n"))],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.output);
    assert!(!run.output.contains(PASSWORD), "{}", run.output);
    assert!(session.exists());
    std::fs::remove_file(&session).unwrap();

    // Ctrl-C at the prompt: exit 130, echo back on, no session.
    let run = on_terminal(
        &env,
        &["login", "--email", "ana@example.com"],
        &[("password for ana@example.com: ", "half typ\u{3}")],
    )
    .await;
    assert_eq!(run.code, 130, "{}", run.output);
    assert!(run.echo_after, "Ctrl-C at the prompt leaves the echo on");
    assert!(!run.output.contains("half typ"), "{}", run.output);
    assert!(!session.exists());

    // With pipes, --password-stdin still reads the first line of stdin.
    let out = piped(
        &env,
        &["login", "--email", "ana@example.com", "--password-stdin"],
        &format!("{PASSWORD}\n"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(session.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_delete_on_a_terminal_asks_first() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let mut env = hosts(&emulator);
    env.push(("SVC_API_KEY", emulator.api_key().to_owned()));
    let exists = |pk: &'static str| {
        let out = piped(&env, &["records", "get", "shop", "orders", pk], "");
        out.status.code()
    };
    let no = serde_json::json!([["delete record 5 of shop/orders? [y/N] ", "n\n", "echo"]]);
    let run = on_terminal_steps(
        &env,
        &["records", "delete", "shop", "orders", "5"],
        no.to_string(),
    )
    .await;
    assert_eq!(run.code, 2, "{}", run.output);
    assert!(
        run.output.contains("not deleting record 5"),
        "{}",
        run.output
    );
    assert_eq!(exists("5"), Some(0));

    let yes = serde_json::json!([["delete record 5 of shop/orders? [y/N] ", "y\n", "echo"]]);
    let run = on_terminal_steps(
        &env,
        &["records", "delete", "shop", "orders", "5"],
        yes.to_string(),
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.output);
    assert!(run.output.contains("deleted record 5"), "{}", run.output);
    assert_eq!(exists("5"), Some(3));

    // --yes: no question.
    let run = on_terminal(
        &env,
        &["records", "delete", "shop", "orders", "6", "--yes"],
        &[],
    )
    .await;
    assert_eq!(run.code, 0, "{}", run.output);
    assert!(!run.output.contains("[y/N]"), "{}", run.output);
    assert_eq!(exists("6"), Some(3));
}

#[tokio::test(flavor = "multi_thread")]
async fn no_color_turns_the_colours_of_the_verbose_log_off() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let mut env = hosts(&emulator);
    env.push(("SVC_API_KEY", emulator.api_key().to_owned()));
    let args = [
        "-v", "records", "get", "shop", "orders", "1", "-o", "ndjson",
    ];
    let coloured = on_terminal(&env, &args, &[]).await;
    assert_eq!(coloured.code, 0, "{}", coloured.output);
    assert!(
        coloured.output.contains("svc-api: answered"),
        "{}",
        coloured.output
    );
    assert!(coloured.output.contains('\u{1b}'), "{:?}", coloured.output);
    env.push(("NO_COLOR", "1".to_owned()));
    let plain = on_terminal(&env, &args, &[]).await;
    assert_eq!(plain.code, 0, "{}", plain.output);
    assert!(
        plain.output.contains("svc-api: answered"),
        "{}",
        plain.output
    );
    assert!(!plain.output.contains('\u{1b}'), "{:?}", plain.output);
}

#[tokio::test(flavor = "multi_thread")]
async fn import_progress_on_a_terminal_ends_with_the_summary() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let mut env = hosts(&emulator);
    env.push(("SVC_API_KEY", emulator.api_key().to_owned()));
    let scratch = Scratch::new("import");
    let file = format!("{}/products.ndjson", scratch.path());
    let rows: String = (0..40)
        .map(|n| format!("{{\"sku\": \"TTY-{n}\", \"name\": \"Item {n}\", \"price\": 1.5}}\n"))
        .collect();
    std::fs::write(&file, rows).unwrap();
    let run = on_terminal(&env, &["records", "import", "shop", "products", &file], &[]).await;
    assert_eq!(run.code, 0, "{}", run.output);
    // The first outcome draws the line at once, in place (a carriage return, no line break).
    assert!(
        run.output.contains("\r1 of 40 rows (2%): "),
        "{:?}",
        run.output
    );
    let summary = format!("\r40 rows from {file} in ");
    assert!(run.output.contains(&summary), "{:?}", run.output);
    assert!(
        run.output
            .contains("40 created, 0 updated, 0 skipped, 0 failed\r\n"),
        "{:?}",
        run.output
    );
    // stdout is the terminal too: the counts as a table.
    let lines = shown_lines(&run.output);
    assert!(
        lines.iter().any(|l| l.trim_end() == "created  40"),
        "{lines:?}"
    );
}
