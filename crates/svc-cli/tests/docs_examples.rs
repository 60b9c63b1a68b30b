//! The examples in other languages that docs/ points to, run against the `svc` binary. They need
//! their language's interpreter (python3), so they are `#[ignore]`d for the README's
//! `cargo test`, and `cargo xtask ci` runs them with `--ignored`, where a missing interpreter
//! fails.

use std::path::Path;
use std::process::Command;

/// docs/testing.md's suite in Python, with `env` set: its output, checked to pass.
fn run_the_python_suite(env: &[(&str, String)]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let example = root.join("docs/examples/test_with_emulator.py");
    let out = Command::new("python3")
        .arg(&example)
        .current_dir(&root)
        .env("SVC_BIN", env!("CARGO_BIN_EXE_svc"))
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
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

/// docs/testing.md's suite in Python: one `svc emulator` (the demo project), reset before each
/// test.
#[test]
#[ignore = "needs python3: `cargo xtask ci` runs it"]
fn the_python_suite_of_docs_testing_passes() {
    run_the_python_suite(&[]);
}

/// docs/testing.md's CI recipe: the same suite against a resource on a PostgreSQL database of
/// its own (docs/examples/ci/emulator.json: seeded, opted in to resets), as the recipe's job
/// runs it beside its PostgreSQL service.
#[test]
#[ignore = "needs python3 and PostgreSQL's programs: `cargo xtask ci` runs it"]
fn the_ci_recipe_of_docs_testing_passes_on_postgresql() {
    let cluster = pg_cluster::Cluster::shared().unwrap_or_else(|e| panic!("{e}"));
    let name = format!("docs_ci_{}", std::process::id());
    cluster
        .create_database(&name)
        .unwrap_or_else(|e| panic!("{e}"));
    run_the_python_suite(&[
        ("SHOP_DATABASE_URL", cluster.url(&name)),
        (
            "SVC_EMULATOR_ARGS",
            "--config docs/examples/ci/emulator.json".to_owned(),
        ),
    ]);
}
