//! Maintenance jobs of the workspace: `cargo xtask ci` (and `cargo xtask ci-beside`, what it runs
//! beside its later steps), `cargo xtask structure`,
//! `cargo xtask features`, `cargo xtask package`, `cargo xtask postgres`, `cargo xtask mysql`,
//! `cargo xtask bench`,
//! `cargo xtask load`, `cargo xtask fuzz`, `cargo xtask stress`, `cargo xtask fidelity`,
//! `cargo xtask contract`, `cargo xtask semver`, `cargo xtask dist`.
//!
//! `.ci/run` calls `cargo xtask ci`, so CI and a developer's machine run the same steps: the
//! structural rules Cargo cannot check (`structure.rs`: module order, SQL, paths, the seam),
//! fmt, clippy, tests, docs, semver (`semver.rs`: cargo-semver-checks against the commit recorded
//! in `.ci/semver-baseline`), the tests that need PostgreSQL and MariaDB, the contract test of
//! the emulator's OpenAPI description (schemathesis), packaging, the Python and npm packages
//! installed and tested without a Rust toolchain (`dist.rs`), each svc-api feature alone.
//!
//! `cargo xtask fidelity` (`fidelity/`) runs the platform's open-source data engine and the
//! emulator side by side over copies of the same databases (SQLite files, or PostgreSQL
//! databases with `--postgres`), sends both the same randomized requests, and prints their
//! agreement with every difference classified.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod abuse;
mod contract;
mod dist;
mod fidelity;
mod http;
mod semver;
mod stress;
mod structure;

/// One step: a description and the command line.
struct Step {
    what: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

const CI: &[Step] = &[
    Step {
        what: "formatting",
        args: &["fmt", "--all", "--", "--check"],
        env: &[],
    },
    Step {
        what: "lints",
        args: &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ],
        env: &[],
    },
    // The emulator as a library user builds it (SQLite only, no server backend): code that
    // only an optional backend reads must say so, not warn there.
    Step {
        what: "lints of the emulator without features",
        args: &[
            "clippy",
            "-p",
            "svc-emulator",
            "-p",
            "svc-emulator-state",
            "-p",
            "svc-emulator-http",
            "--lib",
            "--",
            "-D",
            "warnings",
        ],
        env: &[],
    },
    Step {
        what: "tests",
        args: &["test", "--workspace", "--all-features"],
        env: &[],
    },
    Step {
        what: "docs",
        args: &["doc", "--no-deps", "--workspace", "--all-features"],
        env: &[("RUSTDOCFLAGS", "-D warnings")],
    },
];

/// Every operation group of svc-api, and every optional feature of the SDK's crates, must build
/// alone, without the default features: `(crate, feature)`.
const FEATURES: &[(&str, &str)] = &[
    ("svc-api", "pages"),
    ("svc-api", "projects"),
    ("svc-api", "records"),
    ("svc-api", "sql"),
    ("svc-api", "users"),
    ("svc-api", "teams"),
    ("svc-api", "resources"),
    ("svc-api", "actions"),
    ("svc-api", "workflows"),
    ("svc-api", "proxy"),
    ("svc-api", "account"),
    ("svc-api", "tower"),
    ("svc-transport", "tower"),
    ("svc-model", "chrono"),
    ("svc-model", "time"),
    ("svc-model", "jiff"),
    ("svc-model", "rust_decimal"),
];

fn cargo(args: &[&str], env: &[(&str, &str)]) -> bool {
    let mut cmd = cargo_command(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    match cmd.status() {
        Ok(status) => status.success(),
        Err(e) => {
            eprintln!("could not run cargo: {e}");
            false
        }
    }
}

/// `cargo ARGS` (the cargo that runs xtask), its line announced on stderr.
fn cargo_command(args: &[&str]) -> Command {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    eprintln!("\n== cargo {}", args.join(" "));
    let mut cmd = Command::new(cargo);
    cmd.args(args);
    cmd
}

/// `cargo ARGS` for a selection of tests, its output shown as it comes: true when it passed
/// and ran at least one test. A name filter that matches nothing (a test moved or renamed)
/// would otherwise pass having checked nothing.
fn ran_tests(args: &[&str]) -> bool {
    let child = cargo_command(args)
        .stdout(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            eprintln!("could not run cargo: {e}");
            return false;
        }
    };
    let mut passed = 0usize;
    if let Some(out) = child.stdout.take() {
        use std::io::{BufRead, Write};
        // Read to the end whatever the bytes (a test may print non-UTF-8), so the tests never
        // find their stdout closed; a closed stdout of ours is no reason to stop reading.
        let mut reader = std::io::BufReader::new(out);
        let mut stdout = std::io::stdout();
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            let _ = stdout.write_all(&line);
            passed += passed_count(&String::from_utf8_lossy(&line));
            line.clear();
        }
    }
    let ok = child.wait().is_ok_and(|status| status.success());
    if ok && passed == 0 {
        eprintln!(
            "\nci: `cargo {}` ran no test: its name filter matches none (was a test moved or \
             renamed? update the selection in xtask/src/main.rs)",
            args.join(" ")
        );
        return false;
    }
    ok
}

/// The number of tests a libtest summary line says passed (`test result: ok. 5 passed; ...`).
fn passed_count(line: &str) -> usize {
    line.trim_end()
        .strip_prefix("test result: ")
        .and_then(|rest| rest.split_once(". "))
        .and_then(|(_, counts)| counts.split_once(" passed"))
        .and_then(|(n, _)| n.trim().parse().ok())
        .unwrap_or(0)
}

fn ci() -> bool {
    disk_report(&workspace_root());
    let mut times = StepTimes::default();
    // The structural rules first: they read the sources and take well under a second.
    if !times.run("structure", structure) {
        eprintln!("\nci: the structure step failed");
        return times.report(false);
    }
    for step in CI {
        if !times.run(step.what, || cargo(step.args, step.env)) {
            eprintln!("\nci: the {} step failed", step.what);
            return times.report(false);
        }
    }
    let root = workspace_root();
    // From here on the main line spends most of its time waiting on PostgreSQL, MariaDB,
    // Python, npm and a browser, while semver and packaging compile in target dirs of their
    // own: run those two beside it, in a process of their own, instead of one after another.
    let started = std::time::Instant::now();
    let beside = match Beside::start(&root) {
        Ok(beside) => beside,
        Err(e) => {
            eprintln!("\nci: {e}");
            return times.report(false);
        }
    };
    let ok = times.run("docs' examples", docs_examples)
        && times.run("packages", || dist::dist(&["--check".to_owned()], &root))
        && times.run("PostgreSQL tests", postgres)
        && times.run("MySQL tests", mysql)
        && times.run("browser", browser)
        // `cargo xtask verify`'s checks and the fidelity runs on the three databases, the
        // engine under coverage.py: fails when its branches reached fall below the recorded
        // figure (docs/fidelity.md, "The engine's own coverage").
        && times.run("verify and fidelity, with the engine's coverage", || {
            fidelity::fidelity(&["--coverage".to_owned()], &root)
        })
        && times.run("contract", || contract::contract(&[], &root));
    let beside_ok = beside.finish(ok);
    times.0.push((Beside::WHAT, started.elapsed()));
    let ok = ok && beside_ok && times.run("features", features);
    times.report(ok)
}

/// The steps of [`ci_beside`] (`cargo xtask ci-beside`), run by `cargo xtask ci` as a child
/// process beside its own steps, their output kept in a file until those end: lines of two
/// steps interleaved would say nothing.
struct Beside {
    child: std::process::Child,
    log: PathBuf,
}

impl Beside {
    /// How the step-time table names it.
    const WHAT: &'static str = "semver and package (beside docs' examples to contract)";

    fn start(root: &Path) -> Result<Beside, String> {
        let dir = root.join("target").join("ci");
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let log = dir.join("beside.log");
        let file = std::fs::File::create(&log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = file
            .try_clone()
            .map_err(|e| format!("cannot share {}: {e}", log.display()))?;
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find xtask's own binary to run ci-beside: {e}"))?;
        eprintln!(
            "\n== semver and cargo package, beside the steps that follow (their output: {})",
            log.display()
        );
        let child = Command::new(exe)
            .arg("ci-beside")
            .current_dir(root)
            .stdin(std::process::Stdio::null())
            .stdout(file)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start `xtask ci-beside`: {e}"))?;
        Ok(Beside { child, log })
    }

    /// Waits for the steps (or, when the main line failed, stops them: their result would
    /// change nothing), prints their output, and says whether they passed.
    fn finish(mut self, wait: bool) -> bool {
        if !wait {
            stop_tree(&mut self.child);
        }
        let status = self.child.wait();
        eprintln!(
            "\n== semver and cargo package (run beside; {})",
            self.log.display()
        );
        match std::fs::read(&self.log) {
            Ok(text) => eprintln!("{}", String::from_utf8_lossy(&text)),
            Err(e) => eprintln!("ci: cannot read {}: {e}", self.log.display()),
        }
        let ok = status.is_ok_and(|status| status.success());
        if wait && !ok {
            eprintln!("\nci: semver or packaging failed (above)");
        }
        ok
    }
}

/// Stops `child` and every process under it (cargo, rustc, cargo-semver-checks): killing the
/// child alone would leave them compiling for minutes. Linux lists the processes in /proc;
/// elsewhere only the child is stopped.
fn stop_tree(child: &mut std::process::Child) {
    let mut pids = descendants(child.id(), &parents());
    pids.push(child.id());
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    // `kill` (procps), since std sends a signal only to a child of its own.
    if let Err(e) = Command::new("kill")
        .arg("-TERM")
        .args(&pids)
        .stderr(std::process::Stdio::null())
        .status()
    {
        eprintln!(
            "ci: could not run `kill` ({e}): processes under pid {} may still run",
            child.id()
        );
    }
    let _ = child.kill();
}

/// Every process's id and its parent's, from /proc (empty where there is none).
fn parents() -> Vec<(u32, u32)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let ppid = stat_fields(&stat)?.nth(1)?.parse::<u32>().ok()?;
            Some((pid, ppid))
        })
        .collect()
}

/// The fields of a /proc/PID/stat line after the command, from the state on: the line is `PID
/// (COMMAND) STATE PPID ...`, where COMMAND may hold spaces and parentheses.
fn stat_fields(stat: &str) -> Option<std::str::SplitWhitespace<'_>> {
    Some(stat[stat.rfind(')')? + 1..].split_whitespace())
}

/// The processes under `root`, at any depth, given each process's parent.
fn descendants(root: u32, parents: &[(u32, u32)]) -> Vec<u32> {
    let mut found = Vec::new();
    let mut next = vec![root];
    while let Some(parent) = next.pop() {
        for &(pid, ppid) in parents {
            if ppid == parent && pid != root && !found.contains(&pid) {
                found.push(pid);
                next.push(pid);
            }
        }
    }
    found
}

/// `cargo xtask ci-beside`: the steps of `cargo xtask ci` that build in target dirs of their
/// own, semver (`target/semver`) then packaging (`target/package-verify`), with their times.
fn ci_beside() -> bool {
    let root = workspace_root();
    let mut times = StepTimes::default();
    let ok = times.run("semver", || semver::semver(&root)) && times.run("package", package);
    times.report(ok)
}

/// About what a full `cargo xtask ci` run writes, in GB: target/ (the debug build and its test
/// binaries, the packaging check's and semver's own builds, the engine's venv) held 10.1 GB at
/// its largest in `.ci/run` on d081141, with `CARGO_INCREMENTAL=0` as `.ci/run` sets it (16.0
/// GB with incremental caches), plus the downloaded crates and the throwaway database servers.
const CI_DISK_GB: u64 = 12;

/// Says how much disk is free where the build goes, and warns when a full run may not fit: a
/// full disk otherwise shows as a linker's bus error or "No space left on device" in
/// whichever step it happens to hit.
fn disk_report(root: &Path) {
    let free_kb = Command::new("df")
        .arg("-Pk")
        .arg(root)
        .output()
        .ok()
        .and_then(|out| {
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let line = text.lines().nth(1)?.to_owned();
            line.split_whitespace().nth(3)?.parse::<u64>().ok()
        });
    let Some(free_kb) = free_kb else {
        eprintln!("ci: could not read the free disk space (df -Pk); going on");
        return;
    };
    let free_gb = free_kb / (1024 * 1024);
    eprintln!("ci: {free_gb} GB free on the disk of {}", root.display());
    if free_gb < CI_DISK_GB {
        eprintln!(
            "ci: warning: a full run writes about {CI_DISK_GB} GB there; with {free_gb} GB free a \
             step may fail with \"No space left on device\": free some first"
        );
    }
}

/// How long each step of `cargo xtask ci` took, printed at its end (pass or fail), so that a
/// slow run says where its time went; and the run's own time, which is less than their sum
/// where a step ran beside others.
struct StepTimes(Vec<(&'static str, std::time::Duration)>, std::time::Instant);

impl Default for StepTimes {
    fn default() -> Self {
        StepTimes(Vec::new(), std::time::Instant::now())
    }
}

impl StepTimes {
    fn run(&mut self, what: &'static str, step: impl FnOnce() -> bool) -> bool {
        let start = std::time::Instant::now();
        let ok = step();
        self.0.push((what, start.elapsed()));
        ok
    }

    fn report(&self, ok: bool) -> bool {
        eprintln!("\nci: time per step");
        for (what, t) in &self.0 {
            eprintln!("  {:>7.1} s  {what}", t.as_secs_f64());
        }
        eprintln!("  {:>7.1} s  in all", self.1.elapsed().as_secs_f64());
        ok
    }
}

/// The docs' examples, run against the `svc` binary: those in other languages that docs/ points
/// to (docs/testing.md's Python suite, and its CI recipe against a throwaway PostgreSQL server),
/// and every shell example of README.md, docs/ and `svc ... --help` (crates/svc-cli/tests's
/// shell_examples target; docs/actions.md's `cargo run -p svc-api --example actions` runs the
/// example built first). `#[ignore]`d in `cargo test`, since they need python3 (as the contract
/// step's schemathesis does), bash, jq and PostgreSQL's programs, which this step requires.
fn docs_examples() -> bool {
    // `--workspace --all-features`, as the tests step builds: the same features, so the same
    // artifacts (`-p svc-cli` alone resolves other features and rebuilds for a minute).
    let ok = cargo(
        &["build", "--workspace", "--examples", "--all-features"],
        &[],
    ) && cargo(
        &[
            "test",
            "--workspace",
            "--all-features",
            "--test",
            "docs_examples",
            "--test",
            "shell_examples",
            "--",
            "--ignored",
        ],
        &[],
    );
    if !ok {
        eprintln!(
            "\nci: the docs' examples failed; they need python3, bash, jq and PostgreSQL's programs"
        );
    }
    ok
}

/// The test targets that need PostgreSQL's programs (they start throwaway servers with the
/// pg-cluster crate), each the targets of a `cargo test --workspace --all-features` and the
/// names of the tests to run in them (all when empty). Their tests are `#[ignore]`d, so that
/// the README's `cargo test --workspace --all-features` needs no PostgreSQL; [`postgres`] runs
/// exactly these with `-- --ignored`. A new test target that uses pg-cluster goes here.
///
/// Targets, not packages (`-p`): the features of a build follow the packages it selects, so
/// `-p svc-emulator` alone would build every crate of ours again with other features (minutes
/// on two cores), where `--workspace --all-features` reuses what the tests step built. Every
/// target name here is one package's.
const POSTGRES_TESTS: &[(&[&str], &str)] = &[
    // pg-cluster's own (its library's tests need no server and run in `cargo test`).
    (&["--test", "cluster", "--test", "process_exit"], ""),
    // svc-emulator's.
    (&["--test", "postgres"], ""),
    // `svc actions run` and `svc workflows run` end to end on a PostgreSQL resource.
    (&["--test", "actions_databases"], "on_postgres"),
    // chrono's, time's, jiff's and rust_decimal's values through the SDK and the emulator.
    (
        &["--test", "e2e"],
        "interop::values_survive_a_round_trip_on_postgres",
    ),
    // The conformance suite's PostgreSQL half (its SQLite half runs in `cargo test`).
    (&["--test", "conformance"], "postgres::"),
    // Create and update bodies read as the engine reads them (forms, multipart, JSON).
    (&["--test", "write_bodies"], "bodies_on_postgres"),
    // Saved copies of a resource's data, through the crate's own backend interface
    // (svc-emulator's library; SQLite's run in `cargo test`).
    (&["--lib"], "databases::tests::save_restore::postgres"),
];

/// `cargo test --workspace --all-features TARGETS -- --ignored NAMES` for each of
/// [`POSTGRES_TESTS`]. A missing PostgreSQL is a failure, not a skip: the tests fail with the
/// crate's message (what to install, or `PG_BIN`). `.ci/run` installs PostgreSQL first when
/// there is none.
fn postgres() -> bool {
    ran_selections(POSTGRES_TESTS, |args| {
        format!(
            "the PostgreSQL tests failed (cargo {args}); they need PostgreSQL's programs \
             (initdb, postgres, psql): see crates/pg-cluster/README.md"
        )
    })
}

/// The test targets that need a MariaDB (or MySQL) server (the maria-server crate: the
/// machine's own on 127.0.0.1:3306, `SVC_TEST_MYSQL_URL`, or a throwaway one it starts), each
/// the targets and the names of the tests to run in them, as [`POSTGRES_TESTS`]. Their tests
/// are `#[ignore]`d like the PostgreSQL ones; [`mysql`] runs exactly these with `-- --ignored`.
const MYSQL_TESTS: &[(&[&str], &str)] = &[
    // maria-server's own.
    (&["--lib"], "tests::a_throwaway_server_starts_and_stops"),
    // svc-emulator's.
    (&["--test", "mysql"], ""),
    // `svc actions run` and `svc workflows run` end to end on a MariaDB resource.
    (&["--test", "actions_databases"], "on_mariadb"),
    // chrono's, time's, jiff's and rust_decimal's values through the SDK and the emulator.
    (
        &["--test", "e2e"],
        "interop::values_survive_a_round_trip_on_mariadb",
    ),
    // The conformance suite's MySQL half.
    (&["--test", "conformance"], "mysql::"),
    // Create and update bodies read as the engine reads them.
    (&["--test", "write_bodies"], "bodies_on_mysql"),
    // Saved copies of a resource's data.
    (&["--lib"], "databases::tests::save_restore::mysql"),
];

/// `cargo test --workspace --all-features TARGETS -- --ignored NAMES` for each of
/// [`MYSQL_TESTS`]. No server is a failure, not a skip: the tests fail with maria-server's
/// message (what to install).
fn mysql() -> bool {
    ran_selections(MYSQL_TESTS, |args| {
        format!(
            "the MySQL tests failed (cargo {args}); they need a MariaDB server on \
             127.0.0.1:3306 (root, no password), SVC_TEST_MYSQL_URL, or MariaDB's programs \
             (mariadb-install-db, mariadbd, mariadb): see crates/maria-server/README.md"
        )
    })
}

/// Runs each selection's ignored tests (see [`POSTGRES_TESTS`]), stopping at the first that
/// fails or runs none, with the message `failed` makes of its command line.
fn ran_selections(selections: &[(&[&str], &str)], failed: impl Fn(&str) -> String) -> bool {
    for (targets, names) in selections {
        let mut args = vec!["test", "--workspace", "--all-features"];
        args.extend_from_slice(targets);
        args.extend(["--", "--ignored"]);
        if !names.is_empty() {
            args.push(names);
        }
        if !ran_tests(&args) {
            eprintln!("\nci: {}", failed(&args.join(" ")));
            return false;
        }
    }
    true
}

/// The web page in a real browser (crates/svc-emulator/tests/ui.rs, `in_a_browser`, and
/// tests/stubs_hardening.rs's stubbed page): Debian's
/// headless Chromium driven through ChromeDriver. `#[ignore]`d in `cargo test` like the
/// database tests; no Chromium is a failure, not a skip (the test names what to install).
/// `.ci/run` installs `chromium` and `chromium-driver` first when they are missing.
fn browser() -> bool {
    let args = [
        "test",
        "--workspace",
        "--all-features",
        "--test",
        "ui",
        // A stub's page opened by the signed-in browser (issue 83's sandbox).
        "--test",
        "stubs_hardening",
        "--",
        "--ignored",
    ];
    if !ran_tests(&args) {
        eprintln!(
            "\nci: the browser tests failed (cargo {}); it needs Chromium and ChromeDriver: \
             apt-get install chromium chromium-driver, or SVC_TEST_CHROMIUM and \
             SVC_TEST_CHROMEDRIVER",
            args.join(" ")
        );
        return false;
    }
    true
}

/// The crates this workspace publishes (their packaged copies are verified against each other).
const PUBLISHED: &[&str] = &[
    "svc-model",
    "svc-transport",
    "svc-auth",
    "svc-api",
    "svc-engine",
    "svc-emulator-core",
    "svc-emulator-sqlite",
    "svc-emulator-postgres",
    "svc-emulator-mysql",
    "svc-emulator-state",
    "svc-emulator-http",
    "svc-emulator",
    "svc-cli",
];

/// `cargo package --workspace`, verifying that every published crate builds from its tarball.
///
/// Cargo verifies a crate against the packaged copies of its sibling crates, which it unpacks
/// into `$CARGO_HOME/registry/src` and compiles as registry crates. Both are keyed by name and
/// version only (registry crates never change), so a copy left by an earlier run of the same
/// version would be reused, stale. Remove them first, and verify in a target dir of its own.
fn package() -> bool {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo")));
    if let Some(src) = cargo_home.map(|h| h.join("registry").join("src"))
        && let Ok(registries) = std::fs::read_dir(&src)
    {
        for registry in registries.flatten() {
            let Ok(entries) = std::fs::read_dir(registry.path()) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                let ours = PUBLISHED.iter().any(|c| {
                    name.strip_prefix(c)
                        .is_some_and(|v| v.starts_with("-0.") || v.starts_with("-1."))
                });
                if ours {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
    }
    let target = std::path::Path::new("target").join("package-verify");
    let _ = std::fs::remove_dir_all(&target);
    let target = target.to_string_lossy().into_owned();
    let args = [
        "package",
        "--workspace",
        // xtask and svc-bench are never published, and they depend on pg-cluster
        // (unpublished, so without a version), which packaging refuses in a normal
        // dependency.
        "--exclude",
        "xtask",
        "--exclude",
        "svc-bench",
        "--allow-dirty",
        "--quiet",
        "--target-dir",
        &target,
    ];
    let ok = cargo(&args, &[]);
    if !ok {
        eprintln!("\nci: the packaging step failed");
    }
    ok
}

fn features() -> bool {
    for (krate, feature) in FEATURES {
        let ok = cargo(
            &[
                "check",
                "--quiet",
                "-p",
                krate,
                "--no-default-features",
                "--features",
                feature,
            ],
            &[],
        );
        if !ok {
            eprintln!("\nci: {krate} does not build with only the `{feature}` feature");
            return false;
        }
    }
    eprintln!("\nci: every optional feature of the SDK's crates builds alone");
    true
}

/// What Cargo cannot check: module order, where SQL goes, the seam, paths named (`structure.rs`).
fn structure() -> bool {
    eprintln!("\n== structure");
    structure::structure(&workspace_root())
}

/// The workspace root: the parent of this crate's directory.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Builds the benchmarks in release mode and runs them all in one process; the table goes to
/// the terminal and to `target/bench/report.md` (see docs/performance.md). `--quick` makes a
/// shorter run; other arguments go to the bench binary (`--out PATH`, `--only client,...`).
/// When valgrind is installed, the table ends with instructions per request from callgrind
/// beside the requests per second (benchmark `instructions`, bench/src/instructions.rs); when
/// it is not, those rows say so.
/// The `svc` binary is built first, in the same profile: the export benchmark runs it.
fn bench(args: &[String]) -> bool {
    let root = workspace_root();
    let mut bench_args: Vec<String> = Vec::new();
    if !args.iter().any(|a| a == "--out") {
        let out = root.join("target").join("bench").join("report.md");
        bench_args.push("--out".to_owned());
        bench_args.push(out.display().to_string());
    }
    bench_args.extend(args.iter().cloned());
    let mut cargo_args = vec!["run", "--release", "-p", "svc-bench", "--"];
    cargo_args.extend(bench_args.iter().map(String::as_str));
    if let Err(e) = std::env::set_current_dir(&root) {
        eprintln!("cannot enter the workspace root {}: {e}", root.display());
        return false;
    }
    cargo(
        &["build", "--release", "-p", "svc-cli", "--bin", "svc"],
        &[],
    ) && cargo(&cargo_args, &[])
}

/// The full load test (tests/tests/load.rs) in release mode: 64 clients x 2000 mixed operations
/// (128 000 requests) against one emulator; prints the figures, peak RSS included. The default
/// test run does 64 x 100.
fn load() -> bool {
    if let Err(e) = std::env::set_current_dir(workspace_root()) {
        eprintln!("cannot enter the workspace root: {e}");
        return false;
    }
    cargo(
        &[
            "test",
            "--release",
            "-p",
            "svc-tests",
            "--test",
            "load",
            "--",
            "--nocapture",
        ],
        &[("SVC_LOAD_CLIENTS", "64"), ("SVC_LOAD_OPS", "2000")],
    )
}

/// The cargo-fuzz targets in `fuzz/fuzz_targets/` (a project of its own, outside the workspace).
const FUZZ_TARGETS: &[&str] = &[
    "parse_page",
    "parse_array_or_page",
    "parse_error_body",
    "parse_auth_state",
    "parse_user_info",
    "env_map",
    "identifier_encoding",
    "list_query",
];

/// Seconds per fuzz target when none are given.
const FUZZ_DEFAULT_SECONDS: u64 = 60;

/// Runs every fuzz target (or the ones named) for `SECONDS` each: `cargo xtask fuzz [SECONDS]
/// [TARGET...]`. Uses `cargo +nightly fuzz` when a nightly toolchain is installed, else the
/// current toolchain with `RUSTC_BOOTSTRAP=1`. Without sanitizer (the code under test forbids
/// `unsafe`), with debug assertions (overflow checks). Each target's libFuzzer output goes to
/// `target/fuzz/TARGET.log`; a failure stops the run, its input is in `fuzz/artifacts/TARGET/`.
fn fuzz(args: &[String]) -> bool {
    let mut seconds = FUZZ_DEFAULT_SECONDS;
    let mut targets: Vec<&str> = Vec::new();
    for arg in args {
        if let Ok(n) = arg.parse::<u64>() {
            seconds = n.max(1);
        } else if let Some(t) = FUZZ_TARGETS.iter().find(|t| **t == arg.as_str()) {
            targets.push(t);
        } else {
            eprintln!(
                "fuzz: {arg:?} is neither a number of seconds nor a target ({})",
                FUZZ_TARGETS.join(", ")
            );
            return false;
        }
    }
    if targets.is_empty() {
        targets = FUZZ_TARGETS.to_vec();
    }
    let root = workspace_root();
    let has_cargo_fuzz = Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_cargo_fuzz {
        eprintln!(
            "fuzz: cargo-fuzz is not installed. Install it with\n\n    cargo install cargo-fuzz\n\n\
             and, for the best results, a nightly toolchain:\n\n    rustup toolchain install nightly\n\n\
             (without nightly, the current toolchain is used with RUSTC_BOOTSTRAP=1)"
        );
        return false;
    }
    let nightly = Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    let target_dir =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let logs = target_dir.join("fuzz");
    if let Err(e) = std::fs::create_dir_all(&logs) {
        eprintln!("fuzz: cannot create {}: {e}", logs.display());
        return false;
    }
    eprintln!(
        "fuzz: {} target(s), {seconds} s each, {}",
        targets.len(),
        if nightly {
            "nightly toolchain"
        } else {
            "no nightly toolchain: the current one with RUSTC_BOOTSTRAP=1"
        }
    );
    let max_time = format!("-max_total_time={seconds}");
    let mut results = Vec::new();
    for target in targets {
        let log_path = logs.join(format!("{target}.log"));
        let (out, err) =
            match std::fs::File::create(&log_path).and_then(|f| Ok((f.try_clone()?, f))) {
                Ok(files) => files,
                Err(e) => {
                    eprintln!("fuzz: cannot create {}: {e}", log_path.display());
                    return false;
                }
            };
        let mut cmd = Command::new("cargo");
        if nightly {
            cmd.arg("+nightly");
        } else {
            cmd.env("RUSTC_BOOTSTRAP", "1");
        }
        cmd.args([
            "fuzz",
            "run",
            "--fuzz-dir",
            "fuzz",
            "--sanitizer",
            "none",
            "--debug-assertions",
            target,
            "--",
            &max_time,
            "-print_final_stats=1",
        ])
        .current_dir(&root)
        .stdout(out)
        .stderr(err);
        eprintln!(
            "\n== cargo fuzz run {target} ({seconds} s, log {})",
            log_path.display()
        );
        let ok = cmd.status().is_ok_and(|s| s.success());
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let executions = text
            .lines()
            .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
            .map_or_else(|| "?".to_owned(), |n| n.trim().to_owned());
        if !ok {
            let lines: Vec<&str> = text.lines().collect();
            for line in &lines[lines.len().saturating_sub(40)..] {
                eprintln!("{line}");
            }
            eprintln!(
                "\nfuzz: {target} failed after {executions} executions. The failing input is in \
                 fuzz/artifacts/{target}/ (replay: cargo fuzz run --fuzz-dir fuzz {target} FILE); \
                 the whole log is {}",
                log_path.display()
            );
            return false;
        }
        eprintln!("   {target}: {executions} executions, no failure");
        results.push((target, executions));
    }
    eprintln!("\nfuzz: every target ran {seconds} s without a failure:");
    for (target, executions) in results {
        eprintln!("  {target:<22} {executions:>12} executions");
    }
    true
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ok = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("ci-beside") => ci_beside(),
        Some("structure") => structure(),
        Some("features") => features(),
        Some("package") => package(),
        Some("postgres") => postgres(),
        Some("browser") => browser(),
        Some("mysql") => mysql(),
        Some("bench") => bench(&args[1..]),
        Some("fuzz") => fuzz(&args[1..]),
        Some("load") => load(),
        Some("stress") => stress::stress(&args[1..]),
        Some("fidelity") => fidelity::fidelity(&args[1..], &workspace_root()),
        Some("verify") => fidelity::verify::verify(&args[1..], &workspace_root()),
        Some("abuse") => abuse::abuse(&args[1..], &workspace_root()),
        Some("contract") => contract::contract(&args[1..], &workspace_root()),
        Some("semver") => semver::semver(&workspace_root()),
        Some("dist") => dist::dist(&args[1..], &workspace_root()),
        _ => {
            eprintln!(
                "usage: cargo xtask <task>\n\n\
                 tasks:\n  ci        structure, fmt, clippy, tests, docs, semver, PostgreSQL and MariaDB tests, `svc emulator verify` and the fidelity runs against the data engine under its coverage, contract, \
                 packaging, each svc-api feature alone (.ci/run)\n  \
                 ci-beside semver then package, with their times: what ci runs beside its \
                 steps from the docs' examples to contract\n  \
                 dist      the Python wheel and the npm packages of this platform into \
                 target/dist/ ([--release] [--check]: installed and tested without a Rust \
                 toolchain; docs/release.md)\n  \
                 semver    cargo-semver-checks of the library crates against the commit in \
                 .ci/semver-baseline\n            \
                 (installs cargo-semver-checks when missing)\n  \
                 structure the emulator's layering and no reference to a missing file \
                 (xtask/src/structure.rs)\n  \
                 features  build svc-api with each feature alone\n  \
                 package   cargo package --workspace, each crate verified from its tarball\n  \
                 postgres  the tests that need PostgreSQL's programs (ignored by cargo test), \
                 with --ignored\n  \
                 mysql     the tests that need a MariaDB server (ignored by cargo test), \
                 with --ignored\n  \
                 browser   the web page's test in headless Chromium (ignored by cargo test), \
                 with --ignored\n  \
                 bench     run every benchmark in release mode, print the table and write \
                 target/bench/report.md\n            \
                 (--quick for a shorter run; instructions per request when valgrind is \
                 installed;\n            see docs/performance.md)\n  \
                 load      the load test at full size (64 clients x 2000 operations) in release mode\n  \
                 fuzz      run every cargo-fuzz target for SECONDS each (default 60): \
                 fuzz [SECONDS] [TARGET...]\n  \
                 stress    the tests N times beside CPU hogs, every failed test in a table and \
                 target/stress/report.md:\n            \
                 stress [--runs N (5)] [--hogs H (one per CPU)] [--timeout-mins M (30)] \
                 [-- TEST BINARY ARGS]\n  \
                 contract  schemathesis (PyPI) against the emulator from its OpenAPI description, \
                 every phase and check:\n            \
                 contract [--max-examples N (25)] [--phases LIST] [--emulator-bin PATH]\n  \
                 abuse     the hostile cases of the hardening issue against a release emulator, \
                 with figures\n            \
                 (memory peak, stall of other routes, time to the SQL deadline; Linux);\n            \
                 abuse [--mariadb] (only the cases on MariaDB)\n  \
                 fidelity  the data engine (jet-bridge) and the emulator on the same requests, \
                 their agreement by class:\n            \
                 fidelity [--requests N (1000)] [--seed S (1)] [--mistakes PER_MILLE (3)] \
                 [--lenient] [--postgres]\n            \
                 [--json FILE] [--min-agreement PCT] [--emulator-bin PATH]\n            \
                 fidelity --coverage [--min-coverage PCT]: every run (three databases, strict and \
                 lenient, and verify) with the engine under coverage.py (a step of ci)\n  \
                 verify    `svc emulator verify` against the data engine on SQLite, PostgreSQL and \
                 MariaDB: no difference on identical data,\n            \
                 the engine's failure reported as its own, one changed row found (a step of ci)"
            );
            return ExitCode::from(2);
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::{descendants, passed_count};

    #[test]
    fn the_descendants_of_a_process_are_found_at_every_depth() {
        // 10 -> 11 -> 13 -> 14, 10 -> 12; 20 and 21 are another tree.
        let parents = [
            (11, 10),
            (12, 10),
            (13, 11),
            (14, 13),
            (20, 1),
            (21, 20),
            (10, 1),
        ];
        let mut found = descendants(10, &parents);
        found.sort_unstable();
        assert_eq!(found, [11, 12, 13, 14]);
        assert_eq!(descendants(14, &parents), Vec::<u32>::new());
    }

    /// A child and the processes it started are all stopped: none is left running.
    #[cfg(target_os = "linux")]
    #[test]
    fn stopping_a_tree_leaves_no_process_of_it_running() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 600 & sleep 600 & echo started; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh runs");
        // Gate: `started` is printed once both sleeps were spawned.
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().expect("piped")),
            &mut line,
        )
        .expect("sh prints");
        assert_eq!(line.trim(), "started");
        let under = descendants(child.id(), &super::parents());
        assert_eq!(under.len(), 2, "the two sleeps: {under:?}");
        super::stop_tree(&mut child);
        let _ = child.wait();
        // A stopped process may stay a zombie until its new parent reaps it: running means
        // neither gone nor a zombie. Poll, with a deadline far above the time it takes.
        let running = |pid: &u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|stat| super::stat_fields(&stat).and_then(|mut f| f.next()) != Some("Z"))
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while under.iter().any(running) {
            assert!(
                std::time::Instant::now() < deadline,
                "still running after 60 s: {under:?}"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    #[test]
    fn a_summary_line_tells_how_many_passed() {
        assert_eq!(
            passed_count("test result: ok. 38 passed; 0 failed; 0 ignored; 0 measured"),
            38
        );
        let none = "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 339 filtered out";
        assert_eq!(passed_count(none), 0);
        assert_eq!(passed_count("test result: FAILED. 2 passed; 1 failed"), 2);
        assert_eq!(passed_count("running 3 tests"), 0);
    }
}
