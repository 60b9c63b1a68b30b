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
    assert!(stderr.contains("Ran 4 tests"), "{stderr}");
}

/// docs/testing.md's suite in Python inside `svc emulator exec`: the suite reads the emulator
/// from `SVC_EMULATOR_STARTUP`, and svc's exit code is the suite's.
#[test]
#[ignore = "needs python3: `cargo xtask ci` runs it"]
fn the_python_suite_of_docs_testing_passes_inside_svc_emulator_exec() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_svc"))
        .args(["emulator", "exec", "--", "python3"])
        .arg(root.join("docs/examples/test_with_emulator.py"))
        .current_dir(&root)
        .env_remove("SVC_BIN")
        .output()
        .expect("svc runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("Ran 4 tests"), "{stderr}");
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

/// The first ```toml block of a markdown text and the first ```rust block after it, without
/// the lines rustdoc hides (`# ...`).
fn first_crate_blocks(markdown: &str) -> (String, String) {
    let block = |from: usize, fence: &str| -> (String, usize) {
        let start = markdown[from..]
            .find(fence)
            .map(|i| from + i + fence.len())
            .unwrap_or_else(|| panic!("no {fence} block in docs/testing.md"));
        let body_start = start + markdown[start..].find('\n').unwrap_or(0) + 1;
        let end = body_start
            + markdown[body_start..]
                .find("\n```")
                .unwrap_or_else(|| panic!("an unclosed {fence} block in docs/testing.md"));
        (markdown[body_start..end].to_owned(), end)
    };
    let (toml, after) = block(0, "```toml");
    let (rust, _) = block(after, "```rust");
    let rust: Vec<&str> = rust
        .lines()
        .filter(|l| !(l.trim_start() == "#" || l.trim_start().starts_with("# ")))
        .collect();
    (toml, rust.join("\n") + "\n")
}

/// docs/testing.md opens with the lines a new user pastes: its `[dev-dependencies]` block and
/// its first test, made into a crate of its own exactly as written (the SDK and the emulator
/// taken from this checkout by `[patch.crates-io]`, versions pinned by this workspace's
/// lockfile) whose `cargo test` must pass.
#[test]
#[ignore = "builds a crate of its own (minutes): `cargo xtask ci` runs it"]
fn the_first_test_of_docs_testing_builds_and_passes_in_a_crate_of_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root");
    let guide = std::fs::read_to_string(root.join("docs/testing.md")).expect("docs/testing.md");
    let (dev_dependencies, test) = first_crate_blocks(&guide);
    assert!(
        dev_dependencies.contains("[dev-dependencies]"),
        "{dev_dependencies}"
    );
    let dir = root.join("target/docs-crate");
    std::fs::create_dir_all(dir.join("src")).expect("target/docs-crate/src");
    std::fs::create_dir_all(dir.join("tests")).expect("target/docs-crate/tests");
    let crates = root.join("crates");
    let manifest = format!(
        "[package]\nname = \"docs-testing-md\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\
         publish = false\n\n[workspace]\n\n{dev_dependencies}\n\n[patch.crates-io]\n\
         svc-api = {{ path = {api:?} }}\nsvc-emulator = {{ path = {emulator:?} }}\n",
        api = crates.join("svc-api"),
        emulator = crates.join("svc-emulator"),
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("Cargo.toml");
    std::fs::write(dir.join("src/lib.rs"), "").expect("src/lib.rs");
    let test_file = dir.join("tests").join("guide").with_extension("rs");
    std::fs::write(test_file, test).expect("the test file");
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).expect("Cargo.lock");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(["test", "--quiet"])
        .current_dir(&dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(
        stdout.contains("1 passed"),
        "the guide's test did not run: {stdout}"
    );
}

#[test]
fn the_guides_first_blocks_are_found_without_rustdocs_hidden_lines() {
    let markdown = "# T\n\n```toml\n[dev-dependencies]\na = \"1\"\n```\n\ntext\n\n```rust\nuse a;\n# fn main() {}\n#[tokio::test]\nasync fn t() {}\n```\n";
    let (toml, rust) = first_crate_blocks(markdown);
    assert_eq!(toml, "[dev-dependencies]\na = \"1\"");
    assert_eq!(rust, "use a;\n#[tokio::test]\nasync fn t() {}\n");
}
