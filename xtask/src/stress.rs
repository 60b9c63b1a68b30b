//! `cargo xtask stress`: the README's test command run several times beside CPU hogs, and every
//! test that failed in any run.
//!
//! CI runs on a busy two-core machine, where a test that depends on timing or scheduling flakes.
//! This builds the tests once, then runs `cargo test --workspace --all-features --no-fail-fast`
//! N times while H threads spin on the CPUs. Each run's output goes to `target/stress/run-K.log`;
//! the libtest output in it is parsed (`test NAME ... FAILED`, the `failures:` sections, and
//! cargo's `Running ...` / `Doc-tests ...` headers, which say which binary a failure belongs
//! to). The table of failed tests goes to the terminal and to `target/stress/report.md`.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The test command, as in the README; `--no-fail-fast` so that a failing binary does not stop
/// the binaries after it (one flake would hide every later one in that run).
const TEST_ARGS: &[&str] = &["test", "--workspace", "--all-features", "--no-fail-fast"];

const USAGE: &str = "usage: cargo xtask stress [--runs N] [--hogs H] [--timeout-mins M] \
                     [-- ARGS FOR THE TEST BINARIES]\n\
                     defaults: 5 runs, one hog per CPU, 30 minutes per run";

/// The options of `cargo xtask stress`.
#[derive(Debug, PartialEq)]
struct Options {
    runs: u32,
    hogs: usize,
    timeout: Duration,
    test_args: Vec<String>,
}

/// The options, or None for `--help`.
fn parse_options(args: &[String]) -> Result<Option<Options>, String> {
    let mut options = Options {
        runs: 5,
        hogs: std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
        timeout: Duration::from_secs(30 * 60),
        test_args: Vec::new(),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--help" || arg == "-h" {
            return Ok(None);
        }
        if arg == "--" {
            options.test_args = args.cloned().collect();
            break;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value.to_owned())),
            None => (arg.as_str(), None),
        };
        if !matches!(flag, "--runs" | "--hogs" | "--timeout-mins") {
            return Err(format!("unknown argument {arg:?}"));
        }
        let value = inline
            .or_else(|| args.next().cloned())
            .ok_or_else(|| format!("{flag} needs a value"))?;
        let number: u64 = value
            .parse()
            .map_err(|_| format!("{flag}: {value:?} is not a whole number"))?;
        match flag {
            "--runs" if number == 0 => return Err("--runs must be at least 1".to_owned()),
            "--runs" => {
                options.runs = u32::try_from(number).map_err(|_| "--runs: too many".to_owned())?;
            }
            "--hogs" => {
                options.hogs =
                    usize::try_from(number).map_err(|_| "--hogs: too many".to_owned())?;
            }
            _ if number == 0 => return Err("--timeout-mins must be at least 1".to_owned()),
            _ => options.timeout = Duration::from_secs(number.saturating_mul(60)),
        }
    }
    Ok(Some(options))
}

/// `cargo xtask stress [--runs N] [--hogs H] [--timeout-mins M] [-- ARGS]`; false when a run
/// failed (a failed test, a cargo failure, a timeout) or the stress itself could not run.
pub(crate) fn stress(args: &[String]) -> bool {
    let options = match parse_options(args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            eprintln!("{USAGE}");
            return true;
        }
        Err(e) => {
            eprintln!("stress: {e}\n{USAGE}");
            return false;
        }
    };
    let root = crate::workspace_root();
    let target_dir =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let target_dir = if target_dir.is_relative() {
        root.join(target_dir)
    } else {
        target_dir
    };
    let out_dir = target_dir.join("stress");
    if let Err(e) = clean(&out_dir) {
        eprintln!("stress: cannot prepare {}: {e}", out_dir.display());
        return false;
    }
    let started = Instant::now();

    // Build every test binary once, without hogs, so the runs time the tests and not the build.
    // The JSON messages of that build say which package each test binary belongs to.
    eprintln!("\n== cargo {} --no-run", TEST_ARGS.join(" "));
    let Some(names) = build(&root) else {
        eprintln!("\nstress: the tests do not build; nothing was run");
        return false;
    };
    let build_time = started.elapsed();

    eprintln!(
        "\nstress: {} run(s) of `cargo {}{}` beside {} CPU hog(s), {} min at most each; \
         logs in {}",
        options.runs,
        TEST_ARGS.join(" "),
        if options.test_args.is_empty() {
            String::new()
        } else {
            format!(" -- {}", options.test_args.join(" "))
        },
        options.hogs,
        options.timeout.as_secs() / 60,
        out_dir.display()
    );
    let hogs = Hogs::start(options.hogs);
    let mut runs = Vec::new();
    for k in 1..=options.runs {
        let log = out_dir.join(format!("run-{k}.log"));
        eprint!("stress: run {k}/{} ... ", options.runs);
        let _ = std::io::stderr().flush();
        let run = run_once(k, &root, &options, &log, &names);
        eprintln!("{} in {}", run.outcome(), duration(run.time));
        runs.push(run);
    }
    drop(hogs);

    let report = Report {
        options: &options,
        runs: &runs,
        build_time,
        total_time: started.elapsed(),
        root: &root,
    }
    .render();
    eprintln!();
    print!("{report}");
    let report_path = out_dir.join("report.md");
    if let Err(e) = std::fs::write(&report_path, &report) {
        eprintln!("stress: cannot write {}: {e}", report_path.display());
        return false;
    }
    eprintln!("(also in {})", report_path.display());
    runs.iter().all(Run::passed)
}

/// Removes the logs and report of an earlier stress, so that none is mistaken for this one's.
fn clean(out_dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(out_dir)?;
    for entry in std::fs::read_dir(out_dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let ours = name == "report.md" || (name.starts_with("run-") && name.ends_with(".log"));
        if ours {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

fn cargo_command() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()))
}

/// `cargo test ... --no-run`, its progress and diagnostics on the terminal; the package of each
/// test binary from its JSON messages. None when the build fails.
fn build(root: &Path) -> Option<Names> {
    let mut child = cargo_command()
        .args(TEST_ARGS)
        .args(["--no-run", "--message-format=json-render-diagnostics"])
        .current_dir(root)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| eprintln!("stress: cannot run cargo: {e}"))
        .ok()?;
    let mut names = Names::default();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            names.add_artifact(&line);
        }
    }
    child.wait().is_ok_and(|s| s.success()).then_some(names)
}

/// CPU hogs: threads that spin until dropped.
///
/// Threads rather than child processes: a thread cannot outlive xtask, whatever ends it (the
/// end of the runs, an error, a panic, Ctrl-C, even SIGKILL), whereas a child process would keep
/// spinning if xtask were killed before it could stop it. To the scheduler a spinning thread
/// weighs as much as a spinning process, so the load is the same.
struct Hogs {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Hogs {
    fn start(count: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = (0..count)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    let mut counter = 0_u64;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..1_000_000 {
                            counter = std::hint::black_box(counter.wrapping_add(1));
                        }
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// One run of the tests.
struct Run {
    index: u32,
    time: Duration,
    log: PathBuf,
    /// Cargo's exit status; None when it could not start or was killed on timeout.
    status: Option<ExitStatus>,
    timed_out: bool,
    /// Why cargo could not start or the log could not be read.
    error: Option<String>,
    parsed: Parsed,
}

impl Run {
    fn passed(&self) -> bool {
        self.status.is_some_and(|s| s.success())
            && !self.timed_out
            && self.error.is_none()
            && self.parsed.failures.is_empty()
    }

    /// What happened, in a few words.
    fn outcome(&self) -> String {
        if let Some(error) = &self.error {
            return error.clone();
        }
        let failures = self.parsed.failures.len();
        let mut words = Vec::new();
        if self.timed_out {
            words.push("timed out, killed".to_owned());
        }
        if failures > 0 {
            words.push(format!(
                "{failures} failure{}",
                if failures == 1 { "" } else { "s" }
            ));
        }
        match self.status {
            Some(status) if !status.success() && failures == 0 => {
                words.push(format!(
                    "cargo failed ({status}) without a failed test: see the log"
                ));
            }
            Some(status) if status.success() && failures > 0 => {
                words.push("although cargo succeeded".to_owned());
            }
            _ => {}
        }
        if words.is_empty() {
            "ok".to_owned()
        } else {
            words.join(", ")
        }
    }
}

/// Runs the tests once, their output (cargo's and the binaries') to `log`, and parses it.
fn run_once(index: u32, root: &Path, options: &Options, log: &Path, names: &Names) -> Run {
    let started = Instant::now();
    let mut run = Run {
        index,
        time: Duration::ZERO,
        log: log.to_path_buf(),
        status: None,
        timed_out: false,
        error: None,
        parsed: Parsed::default(),
    };
    match run_cargo(root, options, log) {
        Ok((status, timed_out)) => {
            run.status = status;
            run.timed_out = timed_out;
        }
        Err(e) => run.error = Some(format!("cannot run cargo: {e}")),
    }
    run.time = started.elapsed();
    match std::fs::read(log) {
        Ok(bytes) => run.parsed = parse_log(&String::from_utf8_lossy(&bytes), names),
        Err(e) if run.error.is_none() => run.error = Some(format!("cannot read the log: {e}")),
        Err(_) => {}
    }
    run
}

/// Cargo's exit status (None if killed on timeout) and whether it timed out.
fn run_cargo(
    root: &Path,
    options: &Options,
    log: &Path,
) -> std::io::Result<(Option<ExitStatus>, bool)> {
    let file = File::create(log)?;
    let mut cmd = cargo_command();
    cmd.args(TEST_ARGS);
    if !options.test_args.is_empty() {
        cmd.arg("--").args(&options.test_args);
    }
    // Both streams into one file through one shared offset: cargo's headers (stderr) stay in
    // order with the binaries' output (stdout).
    cmd.current_dir(root)
        .env("CARGO_TERM_COLOR", "never")
        .stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file);
    // Cargo and the test binaries it starts in a process group of their own, which a timeout
    // kills whole (killing cargo alone would leave a hung test binary running). Out of the
    // terminal's foreground group, they miss the SIGINT of a Ctrl-C: the watchdog kills them
    // when xtask goes.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = cmd.spawn()?;
    let watchdog = Watchdog::start(child.id());
    let started = Instant::now();
    let result = loop {
        if let Some(status) = child.try_wait()? {
            break (Some(status), false);
        }
        if started.elapsed() >= options.timeout {
            kill_tree(&mut child);
            let mut file = std::fs::OpenOptions::new().append(true).open(log)?;
            writeln!(
                file,
                "\nxtask stress: timed out after {} min; killed cargo and the test binaries",
                options.timeout.as_secs() / 60
            )?;
            break (None, true);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    watchdog.disarm();
    Ok(result)
}

/// Kills cargo and every process it started (its process group on Unix, its tree on Windows).
fn kill_tree(child: &mut Child) {
    let pid = child.id().to_string();
    #[cfg(unix)]
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{pid}")])
        .status();
    #[cfg(windows)]
    let _ = Command::new("taskkill")
        .args(["/T", "/F", "/PID", &pid])
        .stdout(Stdio::null())
        .status();
    #[cfg(not(any(unix, windows)))]
    let _ = pid;
    let _ = child.kill();
    let _ = child.wait();
}

/// On Unix, a `sh` that kills cargo's process group when xtask ends before the run does
/// (Ctrl-C, a panic, any signal): it reads its stdin, a pipe from xtask, which reaches its end
/// when xtask goes. `disarm` tells it the run is over. In a process group of its own, so that
/// the Ctrl-C which ends xtask does not end it too. (Catching SIGINT in xtask would take
/// `unsafe` or a dependency; this takes neither.)
struct Watchdog {
    #[cfg(unix)]
    sh: Option<(Child, std::process::ChildStdin)>,
}

impl Watchdog {
    #[cfg(unix)]
    fn start(pgid: u32) -> Self {
        use std::os::unix::process::CommandExt as _;
        let sh = Command::new("sh")
            .args([
                "-c",
                r#"read -r line; [ "$line" = done ] || kill -s KILL -- "-$1" 2>/dev/null"#,
                "xtask-stress-watchdog",
                &pgid.to_string(),
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| eprintln!("stress: no watchdog ({e}); Ctrl-C may leave tests running"))
            .ok()
            .and_then(|mut child| child.stdin.take().map(|stdin| (child, stdin)));
        Self { sh }
    }

    #[cfg(not(unix))]
    fn start(_pid: u32) -> Self {
        // Elsewhere Ctrl-C reaches every process of the console: nothing to watch.
        Self {}
    }

    fn disarm(self) {
        #[cfg(unix)]
        if let Some((mut child, mut stdin)) = self.sh {
            let _ = stdin.write_all(b"done\n");
            drop(stdin);
            let _ = child.wait();
        }
    }
}

/// Which package each test binary belongs to, from the JSON messages of the build.
#[derive(Debug, Default)]
pub(crate) struct Names {
    /// Executable file name (`load-0123456789abcdef`) to package (`svc-tests`).
    by_executable: HashMap<String, String>,
    /// Library crate name (`svc_auth`, as in `Doc-tests svc_auth`) to package (`svc-auth`).
    by_lib: HashMap<String, String>,
}

impl Names {
    fn add_artifact(&mut self, line: &str) {
        if !line.contains(r#""reason":"compiler-artifact""#) {
            return;
        }
        let Some(package) = json_string(line, "package_id").map(|id| package_name(&id)) else {
            return;
        };
        if let Some(exe) = json_string(line, "executable") {
            self.by_executable
                .insert(binary_file_name(&exe).to_owned(), package.clone());
        }
        let target = line.find(r#""target":{"#).map(|i| &line[i..]);
        if let Some(target) = target
            && target.contains(r#""kind":["lib""#)
            && let Some(name) = json_string(target, "name")
        {
            self.by_lib.insert(name, package);
        }
    }
}

/// The value of the first string field `key` in a line of JSON (escapes undone, enough for
/// cargo's messages).
fn json_string(json: &str, key: &str) -> Option<String> {
    let start = json.find(&format!("\"{key}\":\""))? + key.len() + 4;
    let mut value = String::new();
    let mut chars = json[start..].chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(value),
            '\\' => match chars.next()? {
                'n' => value.push('\n'),
                't' => value.push('\t'),
                other => value.push(other),
            },
            c => value.push(c),
        }
    }
    None
}

/// The package name in a cargo package id: `path+file:///w/tests#svc-tests@0.1.0`,
/// `path+file:///w/crates/svc-model#0.1.0` (the directory's name is the package's) or the old
/// `svc-model 0.1.0 (path+file:///w/crates/svc-model)`.
fn package_name(id: &str) -> String {
    match id.split_once('#') {
        Some((_, fragment)) if fragment.contains('@') => {
            fragment.split('@').next().unwrap_or(fragment).to_owned()
        }
        Some((url, _)) => url.rsplit('/').next().unwrap_or(url).to_owned(),
        None => id.split(' ').next().unwrap_or(id).to_owned(),
    }
}

/// `target/debug/deps/load-0123456789abcdef(.exe)` to `load-0123456789abcdef`.
fn binary_file_name(path: &str) -> &str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.strip_suffix(".exe").unwrap_or(name)
}

/// A test binary's file name without its hash, if it has one: `load-0123456789abcdef` to `load`.
fn strip_hash(file_name: &str) -> Option<&str> {
    let (name, hash) = file_name.rsplit_once('-')?;
    (hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit())).then_some(name)
}

/// The test name given for a binary that printed no `test result:` line.
pub(crate) const NO_RESULT: &str = "(the binary ended without a test result)";

/// The test name given for a binary whose result is FAILED but which named no failed test.
pub(crate) const NO_NAME: &str = "(test result FAILED, no failed test named)";

/// One failed test in one run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    /// The test binary: `svc-auth src/lib.rs`, `svc-tests tests/load.rs`, `svc-auth doc-tests`.
    pub(crate) binary: String,
    /// The test's name as libtest prints it, or [`NO_RESULT`] or [`NO_NAME`].
    pub(crate) test: String,
    /// The panic message and its place, or the first line of the test's output.
    pub(crate) message: Option<String>,
}

/// What a run's log says.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Parsed {
    pub(crate) failures: Vec<Failure>,
    /// How many test binaries started.
    pub(crate) binaries: usize,
    /// The workspace crates cargo compiled before running the tests: the sources changed after
    /// the build (an edit during the stress), so this run did not test the same code.
    pub(crate) rebuilt: Vec<String>,
}

/// Where the parser is in a binary's output.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Section {
    Tests,
    /// After a `failures:` line: the `---- NAME stdout ----` blocks or the list of names.
    Failures,
    /// After a `successes:` line (`--show-output`).
    Successes,
}

/// One test binary's output, as far as parsed.
#[derive(Debug, Default)]
struct Binary {
    label: String,
    /// `test result:` seen; true if it said FAILED.
    result: Option<bool>,
    failed: Vec<String>,
    messages: HashMap<String, String>,
    /// Tests started (`test NAME ... ` with no result yet) or reported as running for long.
    running: Vec<String>,
    /// Cargo's `process didn't exit successfully: ...` for this binary.
    exit: Option<String>,
}

impl Binary {
    fn fail(&mut self, name: &str) {
        if !self.failed.iter().any(|n| n == name) {
            self.failed.push(name.to_owned());
        }
        self.running.retain(|n| n != name);
    }

    fn finish(mut self, into: &mut Vec<Failure>) {
        for test in &self.failed {
            into.push(Failure {
                binary: self.label.clone(),
                test: test.clone(),
                message: self.messages.remove(test),
            });
        }
        let problem = match self.result {
            None => Some(NO_RESULT),
            Some(true) if self.failed.is_empty() => Some(NO_NAME),
            _ => None,
        };
        if let Some(problem) = problem {
            let mut message = self
                .exit
                .unwrap_or_else(|| "no exit status in the log".to_owned());
            if !self.running.is_empty() {
                let _ = write!(message, "; still running: {}", self.running.join(", "));
            }
            into.push(Failure {
                binary: self.label,
                test: problem.to_owned(),
                message: Some(message),
            });
        }
    }
}

/// A `---- NAME stdout ----` block under `failures:`, boiled down to one line.
#[derive(Debug, Default)]
struct Block {
    name: String,
    first_line: Option<String>,
    /// `src/x.rs:1:2` from `thread 'NAME' panicked at src/x.rs:1:2:`.
    panic_at: Option<String>,
    panic_message: Option<String>,
}

impl Block {
    fn line(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() || self.panic_message.is_some() {
            return;
        }
        if self.panic_at.is_some() {
            self.panic_message = Some(line.to_owned());
        } else if let Some((_, at)) = line.split_once(" panicked at ") {
            match at.strip_suffix(':') {
                // Since Rust 1.73: the place, then the message on the next line.
                Some(place) => self.panic_at = Some(place.to_owned()),
                // Before: `panicked at 'message', src/x.rs:1:2`.
                None => self.panic_message = Some(at.to_owned()),
            }
        } else if self.first_line.is_none() {
            self.first_line = Some(line.to_owned());
        }
    }

    fn summary(self) -> Option<(String, String)> {
        let summary = match (self.panic_message, self.panic_at) {
            // A long message (a `Debug` dump) cut, so that the place stays in sight.
            (Some(message), Some(place)) => format!("{} (at {place})", shorten(&message, 200)),
            (Some(message), None) => message,
            (None, Some(place)) => format!("panicked at {place}"),
            (None, None) => self.first_line?,
        };
        Some((self.name, summary))
    }
}

/// Parses the output of `cargo test`: cargo's headers and libtest's output of each binary.
pub(crate) fn parse_log(text: &str, names: &Names) -> Parsed {
    let mut parsed = Parsed::default();
    let mut binary: Option<Binary> = None;
    let mut section = Section::Tests;
    let mut block: Option<Block> = None;
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(label) = header(line, names) {
            if let Some(mut done) = binary.take() {
                finish_block(&mut block, &mut done.messages);
                done.finish(&mut parsed.failures);
            }
            parsed.binaries += 1;
            binary = Some(Binary {
                label,
                ..Binary::default()
            });
            section = Section::Tests;
            continue;
        }
        let Some(current) = binary.as_mut() else {
            // Before the first binary: the build. `Compiling NAME vX.Y.Z (PATH)` is a crate of
            // the workspace (a registry crate has no path).
            if let Some(compiling) = line.trim_start().strip_prefix("Compiling ")
                && compiling.ends_with(')')
                && let Some(name) = compiling.split(' ').next()
                && !parsed.rebuilt.iter().any(|n| n == name)
            {
                parsed.rebuilt.push(name.to_owned());
            }
            continue;
        };
        if let Some(rest) = line.strip_prefix("test result: ") {
            finish_block(&mut block, &mut current.messages);
            current.result = Some(rest.starts_with("FAILED"));
            section = Section::Tests;
            continue;
        }
        if line == "failures:" || line == "successes:" {
            finish_block(&mut block, &mut current.messages);
            section = if line == "failures:" {
                Section::Failures
            } else {
                Section::Successes
            };
            continue;
        }
        if section != Section::Tests {
            if let Some(name) = line
                .strip_prefix("---- ")
                .and_then(|l| l.strip_suffix(" stdout ----"))
            {
                finish_block(&mut block, &mut current.messages);
                if section == Section::Failures {
                    block = Some(Block {
                        name: name.to_owned(),
                        ..Block::default()
                    });
                }
                continue;
            }
            if let Some(block) = block.as_mut() {
                block.line(line);
                continue;
            }
            if section == Section::Failures
                && let Some(name) = line.strip_prefix("    ")
                && !name.trim().is_empty()
            {
                current.fail(name.trim());
            }
            continue;
        }
        if let Some(exit) = line
            .trim_start()
            .strip_prefix("process didn't exit successfully: ")
        {
            // `/path/to/binary` (signal: 6, SIGABRT: process abort signal): the part in brackets.
            let cause = exit
                .rsplit_once("` (")
                .map_or(exit, |(_, cause)| cause.strip_suffix(')').unwrap_or(cause));
            current.exit = Some(cause.to_owned());
            continue;
        }
        if let Some(test) = line.strip_prefix("test ") {
            if let Some((name, _)) = test.split_once(" has been running for over ") {
                if !current.running.iter().any(|n| n == name) {
                    current.running.push(name.to_owned());
                }
            } else if let Some((name, result)) = test.split_once(" ... ") {
                let name = test_name(name);
                if result.starts_with("FAILED") {
                    current.fail(name);
                } else if result.trim().is_empty() {
                    // `--test-threads 1` prints the name when the test starts.
                    if !current.running.iter().any(|n| n == name) {
                        current.running.push(name.to_owned());
                    }
                } else if result.starts_with("ok") || result.starts_with("ignored") {
                    current.running.retain(|n| n != name);
                }
            }
        }
    }
    if let Some(mut done) = binary.take() {
        finish_block(&mut block, &mut done.messages);
        done.finish(&mut parsed.failures);
    }
    parsed
}

/// Files a finished block's summary under its test's name.
fn finish_block(block: &mut Option<Block>, messages: &mut HashMap<String, String>) {
    if let Some((name, summary)) = block.take().and_then(Block::summary) {
        messages.entry(name).or_insert(summary);
    }
}

/// A test's name from `test NAME ... RESULT`: without the mode libtest adds
/// (`tests::x - should panic`, `src/lib.rs - f (line 3) - compile fail`), as in the list of
/// failures.
fn test_name(name: &str) -> &str {
    let name = name.trim_end();
    [" - should panic", " - compile fail", " - compile"]
        .iter()
        .find_map(|mode| name.strip_suffix(mode))
        .unwrap_or(name)
}

/// A cargo header, as the label of the binary it starts: `     Running unittests src/lib.rs
/// (target/debug/deps/svc_auth-0123456789abcdef)` is `svc-auth src/lib.rs`, `   Doc-tests
/// svc_auth` is `svc-auth doc-tests`.
fn header(line: &str, names: &Names) -> Option<String> {
    if !line.starts_with(' ') {
        return None;
    }
    let line = line.trim();
    if let Some(krate) = line.strip_prefix("Doc-tests ") {
        if krate.is_empty() || krate.contains(' ') {
            return None;
        }
        let package = names.by_lib.get(krate).map_or(krate, String::as_str);
        return Some(format!("{package} doc-tests"));
    }
    let rest = line.strip_prefix("Running ")?;
    // `unittests src/lib.rs (target/debug/deps/x-hash)`, or just the path (older cargo).
    let (source, path) = match rest.strip_suffix(')').and_then(|r| r.rsplit_once(" (")) {
        Some((source, path)) => (Some(source), path),
        None => (None, rest),
    };
    let file = binary_file_name(path);
    let stem = strip_hash(file)?;
    let package = names.by_executable.get(file).map_or(stem, String::as_str);
    Some(match source {
        Some(source) => {
            let source = source.strip_prefix("unittests ").unwrap_or(source);
            format!("{package} {source}")
        }
        None => package.to_owned(),
    })
}

/// The runs a test failed in, each with its message.
type FailedIn<'a> = Vec<(u32, Option<&'a str>)>;

/// The summary of every run: the failed tests, the runs, and the one-line summary.
struct Report<'a> {
    options: &'a Options,
    runs: &'a [Run],
    build_time: Duration,
    total_time: Duration,
    root: &'a Path,
}

impl Report<'_> {
    fn render(&self) -> String {
        let n = self.runs.len();
        // (binary, test) to the runs it failed in, with the message of each.
        let mut failed: BTreeMap<(&str, &str), FailedIn<'_>> = BTreeMap::new();
        for run in self.runs {
            for f in &run.parsed.failures {
                failed
                    .entry((&f.binary, &f.test))
                    .or_default()
                    .push((run.index, f.message.as_deref()));
            }
        }
        let mut failed: Vec<_> = failed.into_iter().collect();
        failed.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
        let every_run = failed.iter().filter(|(_, r)| r.len() == n && n > 1).count();
        let flaky = failed.len() - every_run;

        let cpus = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
        let mut out = String::from("# cargo xtask stress\n\n");
        let _ = writeln!(
            out,
            "`cargo {}{}`, {n} time{}, beside {} CPU hog{} on {} CPU{}.\n",
            TEST_ARGS.join(" "),
            if self.options.test_args.is_empty() {
                String::new()
            } else {
                format!(" -- {}", self.options.test_args.join(" "))
            },
            if n == 1 { "" } else { "s" },
            self.options.hogs,
            if self.options.hogs == 1 { "" } else { "s" },
            cpus,
            if cpus == 1 { "" } else { "s" },
        );
        out.push_str("## Failed tests\n\n");
        if failed.is_empty() {
            out.push_str("No test failed.\n\n");
        } else {
            let mut rows = vec![vec![
                "Test".to_owned(),
                "Binary".to_owned(),
                "Failed".to_owned(),
                "Runs".to_owned(),
                "Message (first failure)".to_owned(),
            ]];
            for ((binary, test), runs) in &failed {
                let which: Vec<String> = runs.iter().map(|(k, _)| k.to_string()).collect();
                let message = runs.iter().find_map(|(_, m)| *m).unwrap_or("");
                rows.push(vec![
                    format!("`{test}`"),
                    (*binary).to_owned(),
                    format!("{}/{n}", runs.len()),
                    which.join(", "),
                    shorten(message, 120),
                ]);
            }
            table(&mut out, &rows);
            out.push('\n');
        }

        out.push_str("## Runs\n\n");
        let mut rows = vec![vec![
            "Run".to_owned(),
            "Time".to_owned(),
            "Binaries".to_owned(),
            "Result".to_owned(),
            "Log".to_owned(),
        ]];
        for run in self.runs {
            let log = run.log.strip_prefix(self.root).unwrap_or(&run.log);
            rows.push(vec![
                run.index.to_string(),
                duration(run.time),
                run.parsed.binaries.to_string(),
                run.outcome(),
                log.display().to_string(),
            ]);
        }
        table(&mut out, &rows);
        for run in self.runs.iter().filter(|r| !r.parsed.rebuilt.is_empty()) {
            let _ = writeln!(
                out,
                "\nRun {} compiled {} again: the sources changed during the stress{}",
                run.index,
                run.parsed.rebuilt.join(", "),
                if run.passed() {
                    "."
                } else {
                    ", so its failures may come from an edit rather than a flake."
                }
            );
        }

        // Each test's distinct messages, with the runs that printed them.
        let mut details = String::new();
        for ((binary, test), runs) in &failed {
            let mut messages: Vec<(&str, Vec<String>)> = Vec::new();
            for (k, message) in runs {
                let Some(message) = message else { continue };
                match messages.iter_mut().find(|(m, _)| m == message) {
                    Some((_, ks)) => ks.push(k.to_string()),
                    None => messages.push((message, vec![k.to_string()])),
                }
            }
            if messages.is_empty() {
                continue;
            }
            let _ = writeln!(details, "- `{test}` ({binary}):");
            for (message, ks) in messages {
                let runs = if ks.len() == 1 { "run" } else { "runs" };
                let _ = writeln!(
                    details,
                    "  - {runs} {}: {}",
                    ks.join(", "),
                    shorten(message, 400)
                );
            }
        }
        if !details.is_empty() {
            out.push_str("\n## Messages\n\n");
            out.push_str(&details);
        }

        let _ = writeln!(
            out,
            "\n{n} run{}, {} hog{}, {} in all (build {}, runs {}), {flaky} flaky test{}{}{}",
            if n == 1 { "" } else { "s" },
            self.options.hogs,
            if self.options.hogs == 1 { "" } else { "s" },
            duration(self.total_time),
            duration(self.build_time),
            duration(self.runs.iter().map(|r| r.time).sum()),
            if flaky == 1 { "" } else { "s" },
            if every_run > 0 {
                format!(", {every_run} failing in every run")
            } else {
                String::new()
            },
            match self.runs.iter().filter(|r| !r.passed()).count() {
                0 => String::new(),
                bad => format!(", {bad} of {n} runs failed"),
            },
        );
        out
    }
}

/// A Markdown table, its columns padded so that it also reads well in a terminal.
fn table(out: &mut String, rows: &[Vec<String>]) {
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w.max(&3))).collect();
            let _ = writeln!(out, "| {} |", rule.join(" | "));
        }
    }
}

/// One line of at most `max` characters, safe in a Markdown table cell.
fn shorten(text: &str, max: usize) -> String {
    let text = text.replace('|', "\\|");
    if text.chars().count() <= max {
        text
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

/// `4m07s`, `12.3s`, `1h02m`.
fn duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 3600 {
        format!("{}h{:02}m", secs / 3600, secs % 3600 / 60)
    } else if secs >= 60 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests;
