//! The log parser, fed with libtest and cargo output as they print it, and the options.

use super::*;

/// Names as the build's JSON messages would give them.
fn names() -> Names {
    let mut names = Names::default();
    for line in [
        r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/svc-auth#0.1.0","manifest_path":"/w/crates/svc-auth/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"svc_auth","src_path":"/w/crates/svc-auth/src/lib.rs","edition":"2024","doc":true,"doctest":true,"test":true},"profile":{"test":true},"features":[],"filenames":["/w/target/debug/deps/svc_auth-194e5f239690026b"],"executable":"/w/target/debug/deps/svc_auth-194e5f239690026b","fresh":true}"#,
        r#"{"reason":"compiler-artifact","package_id":"path+file:///w/crates/svc-auth#0.1.0","manifest_path":"/w/crates/svc-auth/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"svc_auth","src_path":"/w/crates/svc-auth/src/lib.rs","edition":"2024","doc":true,"doctest":true,"test":true},"profile":{"test":false},"features":[],"filenames":["/w/target/debug/deps/libsvc_auth-0011223344556677.rlib"],"executable":null,"fresh":true}"#,
        r#"{"reason":"compiler-artifact","package_id":"path+file:///w/tests#svc-tests@0.1.0","manifest_path":"/w/tests/Cargo.toml","target":{"kind":["test"],"crate_types":["bin"],"name":"load","src_path":"/w/tests/tests/load.rs","edition":"2024","doc":false,"doctest":false,"test":true},"profile":{"test":true},"features":[],"filenames":["/w/target/debug/deps/load-98b8a02cdc80ab0f"],"executable":"/w/target/debug/deps/load-98b8a02cdc80ab0f","fresh":true}"#,
        r#"{"reason":"build-finished","success":true}"#,
    ] {
        names.add_artifact(line);
    }
    names
}

fn failure(binary: &str, test: &str, message: &str) -> Failure {
    Failure {
        binary: binary.to_owned(),
        test: test.to_owned(),
        message: Some(message.to_owned()),
    }
}

/// A run with a failed unit test, a failed `should_panic` test, a binary that aborted, a
/// binary that passed and a failed doc-test, as `cargo test --no-fail-fast` prints it.
const RUN: &str = r#"   Compiling svc-auth v0.1.0 (/w/crates/svc-auth)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.01s
     Running unittests src/lib.rs (target/debug/deps/svc_auth-194e5f239690026b)

running 4 tests
test store::tests::passes ... ok
test store::tests::should_panic_but_doesnt - should panic ... FAILED
test store::tests::expires ... FAILED
test store::tests::slow has been running for over 60 seconds
test store::tests::slow ... ok

failures:

---- store::tests::should_panic_but_doesnt stdout ----
note: test did not panic as expected at crates/svc-auth/src/store.rs:16:8
---- store::tests::expires stdout ----
some captured output

thread 'store::tests::expires' (14386) panicked at crates/svc-auth/src/store.rs:13:52:
assertion `left == right` failed: token expired too early
  left: 2
 right: 3
stack backtrace:
   0: __rustc::rust_begin_unwind
             at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/panicking.rs:689:5
   4: svc_auth::store::tests::expires
             at ./src/store.rs:13:52
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.


failures:
    store::tests::expires
    store::tests::should_panic_but_doesnt

test result: FAILED. 2 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 61.00s

error: test failed, to rerun pass `-p svc-auth --lib`
     Running tests/load.rs (target/debug/deps/load-98b8a02cdc80ab0f)

running 2 tests
error: test failed, to rerun pass `-p svc-tests --test load`

Caused by:
  process didn't exit successfully: `/w/target/debug/deps/load-98b8a02cdc80ab0f` (signal: 6, SIGABRT: process abort signal)
     Running unittests src/main.rs (target/debug/deps/svc-0291e84474cf06a3)

running 1 test
test tests::ok ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests svc_auth

running 2 tests
test crates/svc-auth/src/lib.rs - (line 5) ... ok
test crates/svc-auth/src/session.rs - session::Session (line 210) ... FAILED

failures:

---- crates/svc-auth/src/session.rs - session::Session (line 210) stdout ----
Test executable failed (exit status: 101).

stderr:

thread 'main' (15432) panicked at crates/svc-auth/src/session.rs:215:1:
session refreshed twice
stack backtrace:
   4: rust_out::main::_doctest_main_crates_svc_auth_src_session_rs_210_0



failures:
    crates/svc-auth/src/session.rs - session::Session (line 210)

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.20s

error: doctest failed, to rerun pass `-p svc-auth --doc`
error: 3 targets failed:
    `-p svc-auth --lib`
    `-p svc-tests --test load`
    `-p svc-auth --doc`
"#;

#[test]
fn every_failure_with_its_binary_and_message() {
    let parsed = parse_log(RUN, &names());
    assert_eq!(parsed.binaries, 4);
    assert_eq!(parsed.rebuilt, ["svc-auth"]);
    assert_eq!(
        parsed.failures,
        vec![
            failure(
                "svc-auth src/lib.rs",
                "store::tests::should_panic_but_doesnt",
                "note: test did not panic as expected at crates/svc-auth/src/store.rs:16:8",
            ),
            failure(
                "svc-auth src/lib.rs",
                "store::tests::expires",
                "assertion `left == right` failed: token expired too early \
                 (at crates/svc-auth/src/store.rs:13:52)",
            ),
            failure(
                "svc-tests tests/load.rs",
                NO_RESULT,
                "signal: 6, SIGABRT: process abort signal",
            ),
            failure(
                "svc-auth doc-tests",
                "crates/svc-auth/src/session.rs - session::Session (line 210)",
                "session refreshed twice (at crates/svc-auth/src/session.rs:215:1)",
            ),
        ]
    );
}

#[test]
fn without_names_the_binary_file_name_stands_in() {
    let parsed = parse_log(RUN, &Names::default());
    let binaries: Vec<&str> = parsed.failures.iter().map(|f| f.binary.as_str()).collect();
    assert_eq!(
        binaries,
        [
            "svc_auth src/lib.rs",
            "svc_auth src/lib.rs",
            "load tests/load.rs",
            "svc_auth doc-tests"
        ]
    );
}

#[test]
fn a_passing_run_has_no_failure() {
    let log = "    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.2s
     Running unittests src/lib.rs (target/debug/deps/svc_model-0a1b2c3d4e5f6071)

running 2 tests
test ids::tests::parse ... ok
test ids::tests::slow ... ignored, needs a network

test result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

   Doc-tests svc_model

running 0 tests

test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

";
    let parsed = parse_log(log, &Names::default());
    assert_eq!(parsed.binaries, 2);
    assert!(parsed.failures.is_empty(), "{parsed:?}");
}

#[test]
fn a_build_error_is_no_test_failure() {
    let log = "   Compiling svc-auth v0.1.0 (/w/crates/svc-auth)
   Compiling rustls v0.23.46
error[E0425]: cannot find value `x` in this scope
 --> crates/svc-auth/src/store.rs:3:5
  |
3 |     x
  |     ^ not found in this scope

error: could not compile `svc-auth` (lib) due to 1 previous error
";
    let parsed = parse_log(log, &Names::default());
    assert_eq!(
        (parsed.binaries, parsed.rebuilt),
        (0, vec!["svc-auth".to_owned()])
    );
    assert!(parsed.failures.is_empty());
}

/// A run killed on timeout while `--test-threads 1` ran a test that hung: the test is named.
#[test]
fn a_hung_binary_names_the_tests_still_running() {
    let log = "     Running tests/e2e/main.rs (target/debug/deps/e2e-00112233aabbccdd)

running 3 tests
test pages::draft ... ok
test sessions::refresh_race ... \ntest sessions::refresh_race has been running for over 60 seconds

xtask stress: timed out after 30 min; killed cargo and the test binaries
";
    let parsed = parse_log(log, &Names::default());
    assert_eq!(
        parsed.failures,
        vec![failure(
            "e2e tests/e2e/main.rs",
            NO_RESULT,
            "no exit status in the log; still running: sessions::refresh_race",
        )]
    );
}

/// `--show-output` prints the passed tests' output under `successes:`: not failures.
#[test]
fn successes_are_not_failures() {
    let log = "     Running unittests src/lib.rs (target/debug/deps/svc_model-0a1b2c3d4e5f6071)

running 2 tests
test a ... ok
test b ... FAILED

successes:

---- a stdout ----
    indented output of a passing test

successes:
    a

failures:

---- b stdout ----
thread 'b' panicked at 'old style message', src/lib.rs:4:5

failures:
    b

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
    let parsed = parse_log(log, &Names::default());
    assert_eq!(
        parsed.failures,
        vec![failure(
            "svc_model src/lib.rs",
            "b",
            "'old style message', src/lib.rs:4:5"
        )]
    );
}

/// A failed test with no output has no `---- NAME stdout ----` block, only the list; a result
/// FAILED with no name at all is still a failure.
#[test]
fn failures_named_only_in_the_list_or_not_at_all() {
    let log = "     Running unittests src/lib.rs (target/debug/deps/svc_model-0a1b2c3d4e5f6071)

running 1 test

failures:
    quiet::fails

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/odd.rs (target/debug/deps/odd-0a1b2c3d4e5f6071)

test result: FAILED. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
";
    let parsed = parse_log(log, &Names::default());
    assert_eq!(
        parsed.failures,
        vec![
            Failure {
                binary: "svc_model src/lib.rs".to_owned(),
                test: "quiet::fails".to_owned(),
                message: None,
            },
            failure("odd tests/odd.rs", NO_NAME, "no exit status in the log"),
        ]
    );
}

#[test]
fn headers_and_lines_that_only_look_like_them() {
    let names = names();
    assert_eq!(
        header(
            "     Running unittests src/lib.rs (target/debug/deps/svc_auth-194e5f239690026b)",
            &names
        )
        .as_deref(),
        Some("svc-auth src/lib.rs")
    );
    assert_eq!(
        header(
            r"     Running tests\load.rs (target\debug\deps\load-98b8a02cdc80ab0f.exe)",
            &names
        )
        .as_deref(),
        Some(r"svc-tests tests\load.rs")
    );
    assert_eq!(
        header(
            "     Running target/debug/deps/svc_cli-0123456789abcdef",
            &names
        )
        .as_deref(),
        Some("svc_cli")
    );
    assert_eq!(
        header("   Doc-tests svc_auth", &names).as_deref(),
        Some("svc-auth doc-tests")
    );
    for line in [
        "Running unittests src/lib.rs (target/debug/deps/svc_auth-194e5f239690026b)",
        "  Running migrations (3 of them)",
        "     Running tests/x.rs (target/debug/deps/x-nothex0123456789)",
        "  Doc-tests are slow today",
    ] {
        assert_eq!(header(line, &names), None, "{line}");
    }
}

#[test]
fn package_names_from_ids_and_json() {
    assert_eq!(
        package_name("path+file:///w/tests#svc-tests@0.1.0"),
        "svc-tests"
    );
    assert_eq!(
        package_name("path+file:///w/crates/svc-model#0.1.0"),
        "svc-model"
    );
    assert_eq!(
        package_name("svc-model 0.1.0 (path+file:///w/crates/svc-model)"),
        "svc-model"
    );
    assert_eq!(
        json_string(r#"{"a":null,"b":"x\"y\\z"}"#, "b").as_deref(),
        Some(r#"x"y\z"#)
    );
    assert_eq!(json_string(r#"{"a":null}"#, "a"), None);
    let names = names();
    assert_eq!(
        names
            .by_executable
            .get("load-98b8a02cdc80ab0f")
            .map(String::as_str),
        Some("svc-tests")
    );
    assert_eq!(
        names.by_lib.get("svc_auth").map(String::as_str),
        Some("svc-auth")
    );
    assert_eq!(names.by_lib.get("load"), None);
}

#[test]
fn options() {
    let args = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let o = parse_options(&args(
        "--runs 2 --hogs=0 --timeout-mins 5 -- --test-threads 1",
    ))
    .unwrap()
    .unwrap();
    assert_eq!(
        (o.runs, o.hogs, o.timeout, o.test_args),
        (2, 0, Duration::from_secs(300), args("--test-threads 1"))
    );
    let o = parse_options(&[]).unwrap().unwrap();
    assert_eq!(o.runs, 5);
    assert_eq!(o.timeout, Duration::from_secs(30 * 60));
    assert_eq!(o.hogs, std::thread::available_parallelism().unwrap().get());
    assert_eq!(parse_options(&args("--runs 3 --help")), Ok(None));
    for bad in [
        "--runs 0",
        "--runs",
        "--hogs x",
        "--timeout-mins 0",
        "--quick",
    ] {
        assert!(parse_options(&args(bad)).is_err(), "{bad}");
    }
}

#[test]
fn report_counts_each_test_over_the_runs() {
    let options = parse_options(&["--hogs".to_owned(), "2".to_owned()])
        .unwrap()
        .unwrap();
    let names = names();
    let run = |index: u32, log: &str, code: i32| Run {
        index,
        time: Duration::from_secs(250),
        log: PathBuf::from(format!("/w/target/stress/run-{index}.log")),
        status: Some(exit_status(code)),
        timed_out: false,
        error: None,
        parsed: parse_log(log, &names),
    };
    let runs = [run(1, RUN, 101), run(2, "", 0), run(3, RUN, 101)];
    let report = Report {
        options: &options,
        runs: &runs,
        build_time: Duration::from_secs(61),
        total_time: Duration::from_secs(811),
        root: Path::new("/w"),
    }
    .render();
    assert!(
        report.contains("| `store::tests::expires` ") && report.contains(" | 2/3    | 1, 3 "),
        "{report}"
    );
    assert!(
        report.contains("| 2   | 4m10s | 0        | ok "),
        "{report}"
    );
    assert!(report.contains("target/stress/run-3.log"), "{report}");
    assert!(
        report.contains("\nRun 3 compiled svc-auth again: the sources changed"),
        "{report}"
    );
    assert!(
        report.ends_with(
            "3 runs, 2 hogs, 13m31s in all (build 1m01s, runs 12m30s), 4 flaky tests, \
             2 of 3 runs failed\n"
        ),
        "{report}"
    );
}

#[cfg(unix)]
fn exit_status(code: i32) -> ExitStatus {
    std::os::unix::process::ExitStatusExt::from_raw(code << 8)
}

#[cfg(windows)]
fn exit_status(code: i32) -> ExitStatus {
    std::os::windows::process::ExitStatusExt::from_raw(code as u32)
}

#[test]
fn durations() {
    assert_eq!(duration(Duration::from_millis(12_340)), "12.3s");
    assert_eq!(duration(Duration::from_secs(247)), "4m07s");
    assert_eq!(duration(Duration::from_secs(3720)), "1h02m");
}
