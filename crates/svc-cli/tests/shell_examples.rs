//! Every shell example of README.md, docs/, the crates' README.md and `svc ... --help`, run as
//! written against the demo inside `svc emulator exec`, in the order shown.
//!
//! A markdown file's ```` ```sh ````, ```` ```bash ```` and ```` ```console ```` blocks (in a
//! console block, the `$ ` lines) become one bash script whose line N is the file's line N, run
//! in a directory of its own with the `svc` under test first on `PATH`; a command that fails is
//! reported with its file and line. Each `--help` text's `Examples:` lines are a script of their
//! own. What the runner understands:
//!
//! - **A placeholder** `<name>` (`<file>`, `<pid>`), or a URL on a name kept for
//!   documentation (RFC 2606: `https://api.example.com/...`): the command is not run.
//! - **`on a terminal`** in a command's comment: it waits for a person, and is not run.
//! - **A block marked `<!-- not run: REASON -->`** on the line before its fence is not run, and
//!   the reason is printed (for commands that build, install or run until stopped).
//! - **An exit code the example reads**: a command may fail when its own line or the next one
//!   reads `$?` (`case $? in`); `echo $?   # 6` checks the code is 6, failure or not.
//! - **`until Ctrl-C`** in a command's comment: it runs for a moment, then gets SIGINT.
//! - **`a && b`** runs as `a ; b`, so that a failure of `a` is seen (bash runs no ERR trap
//!   there), and a command sent to the background must not have failed by the end.
//! - **`cargo run -p svc-cli -- ARGS`** runs the `svc` under test (`cargo run -p svc-emulator
//!   --features cli -- ARGS` its `svc emulator`, `cargo run -p svc-api --example NAME` the built
//!   example); any other cargo command fails: such a block is marked.
//! - The inputs a reader brings are set: `PASSWORD`, `SVC_CI_EMAIL`, `SVC_CI_PASSWORD`,
//!   `EDITOR=true`.
//!
//! trycmd and snapbox were the first choice (the issue's): they run one program per `$` line
//! without a shell, and these examples are shell: pipes into jq, `$(...)`, exports, `case $?`.
//!
//! The runs need bash and jq (the examples' own tools), so they are `#[ignore]`d for the README's
//! `cargo test`; `cargo xtask ci` runs them with `--ignored`. The parsing is tested in both.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Numbered lines: (1-based line, text).
type Lines = Vec<(usize, String)>;

/// One fenced shell block of a markdown file.
#[derive(Debug)]
struct Block {
    /// The 1-based line of its opening fence.
    fence: usize,
    /// The commands' lines, as bash reads them.
    lines: Lines,
    /// The reason given by a `<!-- not run: REASON -->` line before the fence.
    not_run: Option<String>,
}

const NOT_RUN: &str = "<!-- not run:";

/// The shell blocks of `markdown`, in order.
fn blocks(markdown: &str) -> Vec<Block> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let indent = lines[i].len() - lines[i].trim_start().len();
        let fence = lines[i].trim();
        let console = fence == "```console";
        if !(console || fence == "```sh" || fence == "```bash") {
            if fence.starts_with("```") {
                // Another language's block: nothing inside it opens a shell block.
                i += 1;
                while i < lines.len() && !lines[i].trim_start().starts_with("```") {
                    i += 1;
                }
            }
            i += 1;
            continue;
        }
        let not_run = i
            .checked_sub(1)
            .map(|before| lines[before].trim())
            .and_then(|before| before.strip_prefix(NOT_RUN))
            .map(|reason| reason.trim_end_matches("-->").trim().to_owned());
        let start = i;
        let mut body = Vec::new();
        let mut continued = false;
        i += 1;
        while i < lines.len() && !lines[i].trim_start().starts_with("```") {
            // The fence's indentation, or as much of it as the line has.
            let own = lines[i].len() - lines[i].trim_start().len();
            let text = &lines[i][own.min(indent)..];
            let command = if !console || continued {
                Some(text)
            } else {
                text.strip_prefix("$ ")
            };
            if let Some(command) = command {
                body.push((i + 1, command.to_owned()));
                continued = command.ends_with('\\');
            }
            i += 1;
        }
        found.push(Block {
            fence: start + 1,
            lines: body,
            not_run,
        });
        i += 1;
    }
    found
}

/// Whether `text` holds a placeholder (`<`, a letter, letters, digits, `.`, `_` or `-`, `>`),
/// a URL on a documentation name (`://` and a host ending in `example.com` or `.example`), or
/// asks for a terminal (`# on a terminal`).
fn has_placeholder(text: &str) -> bool {
    let documentation_host = text.split("://").skip(1).any(|rest| {
        let host = rest
            .split(['/', ':', '?', '\'', '"', ' '])
            .next()
            .unwrap_or("");
        host.ends_with("example.com") || host.ends_with(".example")
    });
    let terminal = text[code_end(text)..]
        .trim_start_matches('#')
        .trim_start()
        .starts_with("on a terminal");
    let bytes = text.as_bytes();
    documentation_host
        || terminal
        || bytes.iter().enumerate().any(|(at, &b)| {
            b == b'<'
                && bytes.get(at + 1).is_some_and(u8::is_ascii_alphabetic)
                && bytes[at + 1..]
                    .iter()
                    .position(|&c| c == b'>')
                    .is_some_and(|end| {
                        bytes[at + 1..at + 1 + end]
                            .iter()
                            .all(|c| c.is_ascii_alphanumeric() || b"._-".contains(c))
                    })
        })
}

/// The commands of `block` as bash runs them, and the lines left out (a logical command, lines
/// joined by a trailing `\`, that holds a placeholder). What the runner changes, each to see a
/// failure bash would not report, never what a command does when it works:
/// - an `until Ctrl-C` command runs under `__interrupted` (SIGINT after a moment);
/// - `echo $?   # N` is `__status_is $? N LINE`: it prints the code, and checks it is N;
/// - `a && b` runs as `a ; b` (bash runs no ERR trap for a failure left of `&&`);
/// - a command sent to the background (`... &`) has its pid kept, checked at the end;
/// - the first kept line reports the block as reached.
fn runnable(block: &Block) -> (Lines, Lines) {
    let mut kept = Vec::new();
    let mut left_out = Vec::new();
    let mut command: Lines = Vec::new();
    let mut flush = |command: Lines, kept: &mut Lines| {
        if command.iter().any(|(_, t)| has_placeholder(t)) {
            left_out.extend(command);
            return;
        }
        let interrupted = command.iter().any(|(_, t)| t.contains("until Ctrl-C"));
        for (at, (line, text)) in command.into_iter().enumerate() {
            let mut text = checked(&text, line);
            if interrupted && at == 0 {
                text = format!("__interrupted {text}");
            }
            kept.push((line, text));
        }
    };
    for (line, text) in &block.lines {
        command.push((*line, text.clone()));
        if !text.ends_with('\\') {
            flush(std::mem::take(&mut command), &mut kept);
        }
    }
    flush(command, &mut kept);
    if let Some((line, text)) = kept.first_mut() {
        *text = format!("__example_block {line}; {text}");
    }
    (kept, left_out)
}

/// The characters of `text` with their byte offsets, each with whether it stands outside
/// quotes (`'...'`, `"..."`; a quote character itself counts as inside).
fn unquoted(text: &str) -> impl Iterator<Item = (usize, char, bool)> + '_ {
    let mut quote = None;
    text.char_indices().map(move |(at, c)| {
        let outside = quote.is_none() && c != '\'' && c != '"';
        match quote {
            None if c == '\'' || c == '"' => quote = Some(c),
            Some(q) if c == q => quote = None,
            _ => {}
        }
        (at, c, outside)
    })
}

/// Where a line's code ends: at a `#` outside quotes that starts a word.
fn code_end(text: &str) -> usize {
    let mut previous = ' ';
    for (at, c, outside) in unquoted(text) {
        if outside && c == '#' && previous.is_whitespace() {
            return at;
        }
        previous = c;
    }
    text.len()
}

/// `text` (line `line` of the script) with the checks [`runnable`] lists.
fn checked(text: &str, line: usize) -> String {
    let end = code_end(text);
    let (code, comment) = text.split_at(end);
    // `echo $?   # N`: the code N the example says.
    let said = comment
        .strip_prefix('#')
        .map(str::trim_start)
        .map(|c| {
            c.split(|ch: char| !ch.is_ascii_digit())
                .next()
                .unwrap_or("")
        })
        .filter(|n| !n.is_empty());
    let mut code = code.to_owned();
    if let Some(n) = said
        && code.trim_end().ends_with("echo $?")
    {
        let at = code.rfind("echo $?").expect("found above");
        code.replace_range(
            at..at + "echo $?".len(),
            &format!("__status_is $? {n} {line}"),
        );
    }
    // `&&` outside quotes: `;`.
    let mut out = String::with_capacity(code.len());
    let mut chars = unquoted(&code).peekable();
    while let Some((_, c, outside)) = chars.next() {
        if outside && c == '&' && chars.peek().is_some_and(|&(_, next, _)| next == '&') {
            chars.next();
            out.push(';');
        } else {
            out.push(c);
        }
    }
    let trimmed = out.trim_end();
    if trimmed.ends_with('&') && !trimmed.ends_with("&&") {
        out = format!("{trimmed} __bg+=(\"$!:{line}\"); ");
    }
    out + comment
}

/// What the script runs before the examples: the failure trap, the cargo stand-in, the
/// background jobs' end.
const PRELUDE: &str = r#"
set -o pipefail
__bg=()
__example_block() { echo "$1" >> "$EXAMPLES_REACHED"; }
# A command that runs until Ctrl-C: SIGINT after a moment (killed 5 s later if it keeps on).
# Interrupted before it set its handler (a busy machine), it ends by the signal: 130 is as
# good an end as 0.
__interrupted() {
    timeout -k 5 --preserve-status -s INT 3 "$@"
    local s=$?
    [ "$s" = 130 ] && return 0
    return "$s"
}
# `echo $?   # N`: prints the code, and records it when it is not N.
__status_is() {
    echo "$1"
    [ "$1" = "$2" ] || echo "$3 status $2 $1" >> "$EXAMPLES_FAILED"
}
trap '__s=$?; [ "${BASH_SOURCE[0]}" = .examples-script ] && echo "$LINENO $__s" >> "$EXAMPLES_FAILED"' ERR
# At the end: a background command that ended before it failed, unless it ended well; those
# still running are stopped.
__end() {
    trap - ERR
    local job pid line
    for job in "${__bg[@]}"; do
        pid=${job%%:*} line=${job##*:}
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null
        else
            wait "$pid" || echo "$line background $?" >> "$EXAMPLES_FAILED"
        fi
    done
    kill $(jobs -p) 2>/dev/null
    wait
}
trap __end EXIT
"#;

/// `cargo` for the examples, first on `PATH` (so that `svc emulator exec -- cargo ...` finds it
/// too): the programs a `cargo run` in the docs builds, already built.
const CARGO: &str = r#"#!/usr/bin/env bash
case "$*" in
    "run -p svc-cli -- "*) shift 4; exec svc "$@" ;;
    "run -p svc-emulator --features cli -- "*) shift 6; exec svc emulator "$@" ;;
    "run -p svc-api --example "*)
        name=$5; shift 5; [ "$1" = -- ] && shift
        [ -x "$EXAMPLES_DIR/$name" ] || { echo "no $EXAMPLES_DIR/$name: build svc-api's examples first (cargo build -p svc-api --examples --all-features; cargo xtask ci does, before this test)" >&2; exit 127; }
        exec "$EXAMPLES_DIR/$name" "$@" ;;
    *) echo "the examples' runner does not run \`cargo $*\`: mark its block <!-- not run: REASON -->" >&2; exit 127 ;;
esac
"#;

/// The outcome of one script: the failures not explained by the example, and the blocks reached.
struct Outcome {
    failures: Vec<String>,
    reached: BTreeSet<usize>,
    output: String,
}

/// Runs `script` (line N of it is the example's line N) in `dir` inside `svc emulator exec`.
fn run_script(label: &str, script: &str, dir: &Path) -> Outcome {
    let svc = Path::new(env!("CARGO_BIN_EXE_svc"));
    let bin = svc.parent().expect("the binary's directory");
    let examples = bin.join("examples");
    let reached = dir.join(".examples-reached");
    let failed = dir.join(".examples-failed");
    let script_file = dir.join(".examples-script");
    std::fs::write(&script_file, script).expect("the script is written");
    std::fs::write(dir.join(".examples-prelude"), PRELUDE).expect("the prelude is written");
    let stand_ins = dir.join(".bin");
    std::fs::create_dir_all(&stand_ins).expect("a directory");
    std::fs::write(stand_ins.join("cargo"), CARGO).expect("the cargo stand-in is written");
    std::fs::set_permissions(
        stand_ins.join("cargo"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("the stand-in is made executable");
    let out = Command::new("timeout")
        .args(["-k", "10", "600"])
        .arg(svc)
        .args([
            "emulator",
            "exec",
            "--",
            "bash",
            "--noprofile",
            "--norc",
            "-c",
        ])
        .arg("source .examples-prelude; source .examples-script")
        .current_dir(dir)
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}:{}:{}",
                stand_ins.display(),
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("HOME", dir)
        .env("LANG", "C.UTF-8")
        .env("EXAMPLES_REACHED", &reached)
        .env("EXAMPLES_FAILED", &failed)
        .env("EXAMPLES_DIR", &examples)
        .env("PASSWORD", "correct horse battery staple")
        .env("SVC_CI_EMAIL", "ci@example.com")
        .env("SVC_CI_PASSWORD", "correct horse battery staple")
        .env("EDITOR", "true")
        .output()
        .expect("timeout and svc run (timeout is coreutils')");
    let output = format!(
        "{label}: exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default();
    let script_lines: Vec<&str> = script.lines().collect();
    let mut failures = Vec::new();
    let text = |n: usize| script_lines.get(n.wrapping_sub(1)).copied().unwrap_or("");
    for record in read(&failed).lines() {
        let fields: Vec<&str> = record.split(' ').collect();
        let line: usize = fields[0].parse().expect("a line number");
        match fields[1..] {
            ["status", wanted, got] => failures.push(format!(
                "{label}:{line}: exit {got}, where the example says {wanted}: {}",
                text(line.saturating_sub(1)).trim()
            )),
            ["background", status] => failures.push(format!(
                "{label}:{line}: sent to the background, it ended with {status}: {}",
                text(line).trim()
            )),
            [status] => {
                // A failure the example reads, on its own line or the next: `echo $?`,
                // `case $? in`, `[ $? -eq N ]` (`__status_is` checks a code it names).
                let explained = text(line).contains("$?") || text(line + 1).contains("$?");
                if !explained {
                    failures.push(format!(
                        "{label}:{line}: exit {status}: {}",
                        text(line).trim()
                    ));
                }
            }
            _ => panic!("an unknown record {record:?}"),
        }
    }
    if out.status.code() != Some(0) && failures.is_empty() {
        failures.push(format!(
            "{label}: the script ended with {:?}",
            out.status.code()
        ));
    }
    let reached = read(&reached)
        .lines()
        .filter_map(|l| l.parse().ok())
        .collect();
    Outcome {
        failures,
        reached,
        output,
    }
}

/// A directory under the system temp dir with a copy of docs/examples (examples name the
/// checkout's files), removed when dropped.
struct WorkDir(PathBuf);

impl WorkDir {
    fn new(label: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "svc-shell-examples-{}-{}",
            std::process::id(),
            label.replace(['/', ' ', '.'], "-")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        copy_dir(&root().join("docs/examples"), &dir.join("docs/examples"));
        Self(dir)
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a directory");
    for entry in std::fs::read_dir(from).expect("a readable directory") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("a copy");
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md, docs/*.md and the crates' README.md (their crates.io pages), relative to the
/// checkout, in name order.
fn markdown_files() -> Vec<String> {
    let mut files = vec!["README.md".to_owned()];
    let mut crates: Vec<String> = std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .map(|name| format!("crates/{name}/README.md"))
        .filter(|readme| root().join(readme).is_file())
        .collect();
    crates.sort();
    files.extend(crates);
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// The script of a markdown file (line N is the file's line N), the blocks it runs, and what it
/// leaves out (each with its reason).
fn markdown_script(file: &str, markdown: &str) -> (String, Vec<usize>, Vec<String>) {
    let total = markdown.lines().count();
    let mut script = vec![String::new(); total];
    let mut run = Vec::new();
    let mut left_out = Vec::new();
    for block in blocks(markdown) {
        if let Some(reason) = &block.not_run {
            left_out.push(format!("{file}:{}: not run: {reason}", block.fence));
            continue;
        }
        let (kept, placeholders) = runnable(&block);
        for (line, text) in placeholders {
            left_out.push(format!("{file}:{line}: a placeholder: {}", text.trim()));
        }
        if kept.is_empty() {
            continue;
        }
        run.push(kept[0].0);
        for (line, text) in kept {
            script[line - 1] = text;
        }
    }
    (script.join("\n") + "\n", run, left_out)
}

fn check(label: &str, script: &str, blocks: &[usize], dir: &Path) -> Vec<String> {
    let outcome = run_script(label, script, dir);
    let mut failures = outcome.failures;
    for block in blocks {
        if !outcome.reached.contains(block) {
            failures.push(format!(
                "{label}:{block}: never reached (an earlier line ended the script?)"
            ));
        }
    }
    if !failures.is_empty() {
        failures.push(outcome.output);
    }
    failures
}

/// Every shell example of README.md, docs/ and the crates' README.md runs as written against
/// the demo, in the order shown, each file in an emulator of its own.
#[test]
#[ignore = "needs bash and jq, as the examples do: `cargo xtask ci` runs it"]
fn the_shell_examples_of_the_docs_run_as_written() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for file in markdown_files() {
        let markdown = std::fs::read_to_string(root().join(&file)).expect("a readable doc");
        let (script, run, left_out) = markdown_script(&file, &markdown);
        for line in &left_out {
            eprintln!("{line}");
        }
        if run.is_empty() {
            continue;
        }
        ran += run.len();
        let dir = WorkDir::new(&file);
        failures.extend(check(&file, &script, &run, &dir.0));
    }
    eprintln!("{ran} blocks run");
    assert!(ran >= 20, "only {ran} shell blocks ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The `svc` commands, as paths (`["records", "list"]`), from each help's `Commands:` list.
fn commands(path: &[String]) -> Vec<Vec<String>> {
    let help = help(path);
    let mut found = vec![path.to_vec()];
    let Some(list) = help.split("\nCommands:\n").nth(1) else {
        return found;
    };
    for line in list.lines().take_while(|l| l.starts_with("  ")) {
        let name = line.split_whitespace().next().expect("a command's name");
        if name != "help" {
            let mut sub = path.to_vec();
            sub.push(name.to_owned());
            found.extend(commands(&sub));
        }
    }
    found
}

fn help(path: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .args(path)
        .arg("--help")
        .env_clear()
        .output()
        .expect("svc runs");
    assert!(out.status.success(), "svc {path:?} --help: {out:?}");
    String::from_utf8(out.stdout).expect("UTF-8 help")
}

/// The `Examples:` lines of a help text, as a block (line N of the help is line N).
fn help_examples(help: &str) -> Option<Block> {
    let lines: Vec<&str> = help.lines().collect();
    let heading = lines.iter().position(|l| *l == "Examples:")?;
    let body = lines[heading + 1..]
        .iter()
        .enumerate()
        .take_while(|(_, l)| l.starts_with("  "))
        .map(|(at, l)| (heading + at + 2, l.trim().to_owned()))
        .collect();
    Some(Block {
        fence: heading + 1,
        lines: body,
        not_run: None,
    })
}

/// Every `--help` example runs as written against the demo, in the order shown, each help's
/// examples in an emulator of their own.
#[test]
#[ignore = "needs bash and jq, as the examples do: `cargo xtask ci` runs it"]
fn the_examples_of_every_help_run_as_written() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for path in commands(&[]) {
        let help = help(&path);
        let Some(block) = help_examples(&help) else {
            continue;
        };
        let label = format!("svc {} --help", path.join(" "));
        let (kept, placeholders) = runnable(&block);
        for (line, text) in placeholders {
            eprintln!("{label}:{line}: a placeholder: {text}");
        }
        let mut script = vec![String::new(); help.lines().count()];
        for (line, text) in &kept {
            script[line - 1] = text.clone();
        }
        let Some(first) = kept.first() else {
            continue;
        };
        ran += 1;
        let dir = WorkDir::new(&label);
        failures.extend(check(
            &label,
            &(script.join("\n") + "\n"),
            &[first.0],
            &dir.0,
        ));
    }
    eprintln!("{ran} helps' examples run");
    assert!(ran >= 10, "only {ran} helps have examples");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The parsing, on a text of each kind.
#[test]
fn blocks_placeholders_and_marks_are_read() {
    let doc = "text\n```sh\nsvc pages list\nsvc records get shop orders <id>\ncurl a \\\n  <url>\n```\n\n\
               <!-- not run: it builds -->\n```sh\ncargo build\n```\n```console\n$ svc sql shop \"select 1\"\n\
               [{\"1\": 1}]\n```\n```text\nsvc no\n```\n";
    let found = blocks(doc);
    assert_eq!(found.len(), 3, "{found:?}");
    let (kept, left_out) = runnable(&found[0]);
    assert_eq!(
        kept,
        vec![(3, "__example_block 3; svc pages list".to_owned())]
    );
    assert_eq!(left_out.len(), 3, "{left_out:?}");
    assert_eq!(found[1].not_run.as_deref(), Some("it builds"));
    assert_eq!(
        found[2].lines,
        vec![(14, "svc sql shop \"select 1\"".to_owned())]
    );
    assert!(has_placeholder("cat callgrind.out.<pid>.1"));
    assert!(!has_placeholder("sort < in.txt > out.txt 2>&1"));
    assert!(!has_placeholder("cat <<EOF"));
    assert!(has_placeholder(
        "svc proxy GET https://api.example.com/orders -q page=2"
    ));
    assert!(has_placeholder("curl 'http://partner.example:8080/x'"));
    assert!(!has_placeholder(
        "svc login --email ana@example.com --password-stdin"
    ));
    assert!(has_placeholder(
        "svc login --email ana@example.com   # on a terminal: asks"
    ));
}

/// Every shell block of the docs runs at least one command, or says why it runs none.
#[test]
fn every_shell_block_of_the_docs_runs_a_command_or_says_why_not() {
    let mut run = 0;
    for file in markdown_files() {
        let markdown = std::fs::read_to_string(root().join(&file)).expect("a readable doc");
        for block in blocks(&markdown) {
            match &block.not_run {
                Some(reason) => assert!(
                    reason.len() > 10,
                    "{file}:{}: `{NOT_RUN}` needs a reason",
                    block.fence
                ),
                None => {
                    assert!(
                        !runnable(&block).0.is_empty(),
                        "{file}:{}: every command of this block is a placeholder: mark it \
                         `{NOT_RUN} REASON -->`",
                        block.fence
                    );
                    run += 1;
                }
            }
        }
    }
    assert!(run >= 20, "only {run} blocks run");
}

/// The runner itself: a failing command is reported with its line, one whose code the example
/// reads is not, a code other than the one `echo $?   # N` names is (failure or not), and so
/// are a failure left of `&&` and a background command that failed.
#[test]
#[ignore = "needs bash: `cargo xtask ci` runs it"]
fn the_runner_reports_the_lines_that_fail() {
    let dir = WorkDir::new("runner");
    let example = "```sh\ntrue\nfalse\n(exit 6)\necho $?   # 6\n(exit 5)\necho $?   # 6\n\
                   svc records get shop orders 999999 > /dev/null; case $? in 3) ;; esac\n\
                   true\necho $?   # 6: it failed\nfalse && true\n(exit 7) &\nsleep 30 &\n\
                   sleep 0.5\n```\n";
    let (script, blocks_run, _) = markdown_script("t.md", example);
    let outcome = run_script("t.md", &script, &dir.0);
    assert_eq!(
        outcome.failures,
        vec![
            "t.md:3: exit 1: false".to_owned(),
            "t.md:7: exit 5, where the example says 6: (exit 5)".to_owned(),
            "t.md:10: exit 0, where the example says 6: true".to_owned(),
            "t.md:11: exit 1: false ; true".to_owned(),
            "t.md:12: sent to the background, it ended with 7: (exit 7) & __bg+=(\"$!:12\");"
                .to_owned(),
        ],
        "{}",
        outcome.output
    );
    assert_eq!(
        outcome.reached,
        blocks_run.into_iter().collect::<BTreeSet<_>>()
    );
}
