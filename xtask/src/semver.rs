//! `cargo xtask semver`: cargo-semver-checks over the published library crates against the
//! baseline recorded in `.ci/semver-baseline`, a step of `cargo xtask ci`.
//!
//! The crates are not on crates.io, so the baseline is a commit of this repository: the public
//! API as it was last accepted. A change that breaks it fails the step until the crates' version
//! says so (`0.1.x` to `0.2.0`: the workspace's `version`, with a **Changed** entry in
//! CHANGELOG.md) and the baseline file names a commit with the new API.
//!
//! The rustdoc JSON of both sides (the baseline's tree comes out of `git archive`) is built
//! once, in `target/semver/`, and each crate's pair is handed to `cargo semver-checks
//! check-release --baseline-rustdoc ... --current-rustdoc ...`; the versions inside the JSON
//! decide what may change (the same version: no break).
//!
//! The public crates ([`CRATES`]) are checked whole. svc-emulator's API also holds the items it
//! re-exports from its implementation crates ([`REEXPORTED_FROM`]: `EmulatorConfig`, the
//! journal's and the stubs' types, `ModelInfo`, ...), which its own check cannot see: each of
//! those crates is checked on exactly those items, read from svc-emulator's JSON on each side
//! (`semver/reexported.rs`); the rest of an implementation crate may change in any release.
//!
//! Every step fails loudly rather than skip: no baseline file, a baseline commit the clone does
//! not have (after trying to fetch it: a shallow clone is deepened), no cargo-semver-checks
//! (installed here with `cargo install --locked` when missing), or an item svc-emulator
//! re-exports from a crate of the workspace that the check does not build.

mod reexported;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};

use reexported::Item;

/// The file that names the baseline commit (`#` lines are comments).
pub const BASELINE_FILE: &str = ".ci/semver-baseline";

/// The version of cargo-semver-checks installed when there is none.
pub const TOOL_VERSION: &str = "0.51.0";

/// The public crates that have a library (svc-cli is a binary only: it has no API), checked
/// whole.
const CRATES: &[&str] = &[
    "svc-model",
    "svc-transport",
    "svc-auth",
    "svc-api",
    "svc-emulator",
];

/// The implementation crates whose items svc-emulator re-exports: they define nearly every
/// type it exports (`EmulatorConfig` and the settings, the journal's and the stubs' types,
/// `ModelInfo`), and cargo-semver-checks reads no item of another crate, not even one
/// re-exported (obi1kenobi/cargo-semver-checks#638). Each is checked on what svc-emulator
/// re-exports of it, nothing else: its API beyond that may change in any release (its crate
/// doc says so; the workspace requires it with `=`).
const REEXPORTED_FROM: &[&str] = &["svc-engine", "svc-emulator-state", "svc-emulator-http"];

/// The crate whose re-exports say what [`REEXPORTED_FROM`]'s crates are checked on.
const EMULATOR: &str = "svc-emulator";

/// Runs the check from the workspace root `root`.
pub fn semver(root: &Path) -> bool {
    eprintln!("\n== semver (cargo-semver-checks against {BASELINE_FILE})");
    let rev = match baseline(root) {
        Ok(rev) => rev,
        Err(e) => {
            eprintln!("semver: {e}");
            return false;
        }
    };
    if !has_commit(root, &rev) && !fetch(root, &rev) {
        eprintln!(
            "semver: the baseline commit {rev} (named in {BASELINE_FILE}) is not in this clone, \
             and fetching it from `origin` failed. Clone with the history (not --depth), or \
             fetch the commit; if history was rewritten, record a commit that exists."
        );
        return false;
    }
    if !installed() && !install() {
        return false;
    }
    // The rustdoc JSON of both sides, built here rather than by cargo-semver-checks, which
    // builds each crate's dependencies again in a target dir per crate and side (ten builds):
    // one target dir, one build of the dependencies for both sides (the workspace's own crates
    // are built again for each side: `clean_members`).
    let work = root.join("target").join("semver");
    let baseline_root = work.join("baseline");
    let current_json = work.join("current-json");
    let baseline_json = work.join("baseline-json");
    let ok = extract(root, &rev, &baseline_root)
        && rustdoc_json(root, &work, &current_json, "the current tree")
        && rustdoc_json(
            &baseline_root,
            &work,
            &baseline_json,
            &format!("the baseline {rev}"),
        );
    if !ok {
        return false;
    }
    for (json, side) in [(&current_json, "current"), (&baseline_json, "baseline")] {
        if let Err(e) = cut_to_reexports(json) {
            eprintln!("semver: svc-emulator's re-exports ({side} tree): {e}");
            return false;
        }
    }
    let mut broken = Vec::new();
    for c in CRATES.iter().chain(REEXPORTED_FROM) {
        let file = format!("{}.json", c.replace('-', "_"));
        eprintln!("\n== {c}: cargo semver-checks check-release (baseline {rev})");
        let ok = Command::new(cargo())
            .args(["semver-checks", "check-release", "--baseline-rustdoc"])
            .arg(baseline_json.join(&file))
            .arg("--current-rustdoc")
            .arg(current_json.join(&file))
            .current_dir(root)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            broken.push(*c);
        }
    }
    if broken.is_empty() {
        eprintln!("\nsemver: no crate breaks the API of {rev}");
        true
    } else {
        eprintln!(
            "\nsemver: {} break(s) the public API of {rev} (see above). If the break is meant, \
             raise the workspace's version in Cargo.toml, say what to do under **Changed** in \
             CHANGELOG.md, and once it is committed record that commit in {BASELINE_FILE}.",
            broken.join(", ")
        );
        false
    }
}

/// Writes the tree of commit `rev` into `dir` (emptied first), with `git archive`: nothing in
/// the repository changes (no worktree, no checkout).
fn extract(root: &Path, rev: &str, dir: &Path) -> bool {
    let _ = std::fs::remove_dir_all(dir);
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("semver: cannot create {}: {e}", dir.display());
        return false;
    }
    let archive = Command::new("git")
        .args(["archive", "--format=tar", rev])
        .current_dir(root)
        .stdout(Stdio::piped())
        .spawn();
    let mut archive = match archive {
        Ok(child) => child,
        Err(e) => {
            eprintln!("semver: cannot run git archive: {e}");
            return false;
        }
    };
    let Some(tar_in) = archive.stdout.take() else {
        return false;
    };
    let untar = Command::new("tar")
        .args(["-x", "-f", "-", "-C"])
        .arg(dir)
        .stdin(tar_in)
        .status()
        .is_ok_and(|s| s.success());
    let archived = archive.wait().is_ok_and(|s| s.success());
    if !(untar && archived) {
        eprintln!(
            "semver: could not write the tree of {rev} into {} (git archive | tar)",
            dir.display()
        );
    }
    untar && archived
}

/// The rustdoc JSON of each of [`CRATES`] and [`REEXPORTED_FROM`] in the workspace at
/// `workspace` (all features, as docs.rs documents them), copied into `out`. Built in `target_dir` with the current
/// toolchain: rustdoc's JSON output is unstable, so `RUSTC_BOOTSTRAP=1` unlocks it, in a target
/// dir of its own so that the other steps' builds are not touched.
fn rustdoc_json(workspace: &Path, target_dir: &Path, out: &Path, what: &str) -> bool {
    if let Err(e) = clean_members(workspace, target_dir) {
        eprintln!("semver: cannot clean the crates of {what} out of the target dir: {e}");
        return false;
    }
    let mut args = vec!["doc", "--no-deps", "--lib", "--all-features", "--quiet"];
    for c in CRATES.iter().chain(REEXPORTED_FROM) {
        args.extend(["--package", c]);
    }
    eprintln!("\n== rustdoc JSON of {what}: cargo {}", args.join(" "));
    let ok = Command::new(cargo())
        .args(&args)
        .current_dir(workspace)
        .env("CARGO_TARGET_DIR", target_dir)
        .env("RUSTC_BOOTSTRAP", "1")
        .env(
            "RUSTDOCFLAGS",
            "-Z unstable-options --output-format json --document-hidden-items --cap-lints allow",
        )
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("semver: the rustdoc JSON of {what} did not build (see above)");
        return false;
    }
    let _ = std::fs::remove_dir_all(out);
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("semver: cannot create {}: {e}", out.display());
        return false;
    }
    for c in CRATES.iter().chain(REEXPORTED_FROM) {
        let file = format!("{}.json", c.replace('-', "_"));
        let from = target_dir.join("doc").join(&file);
        if let Err(e) = std::fs::copy(&from, out.join(&file)) {
            eprintln!("semver: no rustdoc JSON at {}: {e}", from.display());
            return false;
        }
    }
    true
}

/// Removes the workspace at `workspace`'s own crates from `target_dir`, keeping their
/// dependencies' builds. Both sides build there, and each crate has the same path relative to
/// its workspace on both: Cargo names the two sides' artifacts alike, and after one side's
/// build it takes them as fresh for the other (their dep-info names the first side's sources,
/// which are older than them), so a crate would be documented against the other side's
/// dependencies.
fn clean_members(workspace: &Path, target_dir: &Path) -> Result<(), String> {
    let metadata = Command::new(cargo())
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .current_dir(workspace)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !metadata.status.success() {
        return Err(String::from_utf8_lossy(&metadata.stderr).into_owned());
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&metadata.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let packages = metadata["packages"].as_array().into_iter().flatten();
    let mut args = vec!["clean".to_owned(), "--quiet".to_owned()];
    for name in packages.filter_map(|p| p["name"].as_str()) {
        args.extend(["--package".to_owned(), name.to_owned()]);
    }
    let cleaned = Command::new(cargo())
        .args(&args)
        .current_dir(workspace)
        .env("CARGO_TARGET_DIR", target_dir)
        .status()
        .map_err(|e| format!("cargo clean: {e}"))?;
    match cleaned.success() {
        true => Ok(()),
        false => Err("cargo clean failed (see above)".to_owned()),
    }
}

/// The rustdoc JSON file of crate `name` in `dir`.
fn json_file(dir: &Path, name: &str) -> std::path::PathBuf {
    dir.join(format!("{}.json", name.replace('-', "_")))
}

fn read_json(path: &Path) -> Result<serde_json::Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Cuts the JSON of each of [`REEXPORTED_FROM`]'s crates in `dir` down to the items that
/// svc-emulator's JSON in `dir` re-exports ([`reexported::prune`]), and says how many. Fails
/// on a re-export from another crate of the workspace that is neither public ([`CRATES`]) nor
/// built here.
fn cut_to_reexports(dir: &Path) -> Result<(), String> {
    let emulator = read_json(&json_file(dir, EMULATOR))?;
    let mut by_crate: BTreeMap<String, BTreeSet<Item>> = reexported::reexported(&emulator)?;
    let named = |list: &[&str], krate: &str| list.iter().any(|c| c.replace('-', "_") == krate);
    for krate in by_crate.keys() {
        if krate.starts_with("svc_") && !named(CRATES, krate) && !named(REEXPORTED_FROM, krate) {
            return Err(format!(
                "svc-emulator re-exports items of {krate}, which the check does not build: add \
                 it to REEXPORTED_FROM in xtask/src/semver.rs"
            ));
        }
    }
    for c in REEXPORTED_FROM {
        let wanted = by_crate.remove(&c.replace('-', "_")).unwrap_or_default();
        let path = json_file(dir, c);
        let mut doc = read_json(&path)?;
        reexported::prune(&mut doc, &wanted).map_err(|e| format!("{c}: {e}"))?;
        let text = serde_json::to_string(&doc).map_err(|e| format!("{c}: {e}"))?;
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        eprintln!(
            "semver: {c} is checked on the {} item(s) svc-emulator re-exports",
            wanted.len()
        );
    }
    Ok(())
}

/// The commit named in the baseline file, as a full hash.
fn baseline(root: &Path) -> Result<String, String> {
    let path = root.join(BASELINE_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read the baseline file {}: {e}", path.display()))?;
    parse_baseline(&text).ok_or_else(|| {
        format!(
            "{BASELINE_FILE} names no commit: it needs one line with a full 40-hex-digit commit \
             hash (`#` lines are comments)"
        )
    })
}

/// The one commit hash of the baseline file's text: its first line that is not empty or a
/// `#` comment, which must be 40 hex digits.
fn parse_baseline(text: &str) -> Option<String> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))?;
    (line.len() == 40 && line.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| line.to_ascii_lowercase())
}

fn git(root: &Path, args: &[&str]) -> bool {
    Command::new("git")
        .args(args)
        .current_dir(root)
        .status()
        .is_ok_and(|s| s.success())
}

fn has_commit(root: &Path, rev: &str) -> bool {
    Command::new("git")
        .args(["cat-file", "-e", &format!("{rev}^{{commit}}")])
        .current_dir(root)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Fetches `rev` from `origin`: the commit itself, else the whole history of a shallow clone.
fn fetch(root: &Path, rev: &str) -> bool {
    eprintln!("semver: the baseline commit {rev} is not in this clone: fetching it from origin");
    if git(root, &["fetch", "--no-tags", "origin", rev]) && has_commit(root, rev) {
        return true;
    }
    let shallow = Command::new("git")
        .args(["rev-parse", "--is-shallow-repository"])
        .current_dir(root)
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "true");
    shallow && git(root, &["fetch", "--unshallow", "--no-tags", "origin"]) && has_commit(root, rev)
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

/// Whether `cargo semver-checks` runs (any version; [`TOOL_VERSION`] is what gets installed).
fn installed() -> bool {
    match Command::new(cargo())
        .args(["semver-checks", "--version"])
        .output()
    {
        Ok(o) if o.status.success() => {
            eprintln!("semver: {}", String::from_utf8_lossy(&o.stdout).trim());
            true
        }
        _ => false,
    }
}

fn install() -> bool {
    eprintln!(
        "semver: cargo-semver-checks is not installed: installing version {TOOL_VERSION} \
         (cargo install --locked; several minutes on two cores)"
    );
    let started = std::time::Instant::now();
    let ok = Command::new(cargo())
        .args([
            "install",
            "--locked",
            "cargo-semver-checks",
            "--version",
            TOOL_VERSION,
        ])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        eprintln!(
            "semver: cargo-semver-checks {TOOL_VERSION} installed in {:.0} s",
            started.elapsed().as_secs_f64()
        );
        ok
    } else {
        eprintln!(
            "semver: could not install cargo-semver-checks (see above); install it with\n\n    \
             cargo install --locked cargo-semver-checks --version {TOOL_VERSION}"
        );
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_baseline_is_the_first_line_that_is_not_a_comment() {
        let hash = "a9413f0c1b2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f";
        let text = format!(
            "# the API of issue 30\n\n  {}  \n# later\n",
            hash.to_uppercase()
        );
        assert_eq!(parse_baseline(&text).as_deref(), Some(hash));
        assert_eq!(parse_baseline("# nothing\n\n"), None);
        // A short or mistyped hash is refused, not looked up.
        assert_eq!(parse_baseline("a9413f0\n"), None);
        assert_eq!(parse_baseline(&format!("{}z\n", &hash[..39])), None);
    }

    /// The recorded baseline parses (the step would fail on every run otherwise).
    #[test]
    fn the_recorded_baseline_parses() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = std::fs::read_to_string(root.join(BASELINE_FILE)).expect("the baseline file");
        assert!(parse_baseline(&text).is_some(), "{text}");
    }
}
