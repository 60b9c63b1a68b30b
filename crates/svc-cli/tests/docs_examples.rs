//! The examples in other languages that docs/ points to, run against the `svc` binary. They need
//! their language's interpreter (python3), so they are `#[ignore]`d for the README's
//! `cargo test`, and `cargo xtask ci` runs them with `--ignored`, where a missing interpreter
//! fails.

use std::path::Path;
use std::process::Command;

/// docs/testing.md's suite in Python: one `svc emulator`, reset before each test.
#[test]
#[ignore = "needs python3: `cargo xtask ci` runs it"]
fn the_python_suite_of_docs_testing_passes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let example = root.join("docs/examples/test_with_emulator.py");
    let out = Command::new("python3")
        .arg(&example)
        .env("SVC_BIN", env!("CARGO_BIN_EXE_svc"))
        .output()
        .expect("python3 runs (install it: the examples of docs/testing.md need it)");
    assert!(
        out.status.success(),
        "{}\nstdout: {}\nstderr: {}",
        example.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Ran 3 tests"), "{stderr}");
}
