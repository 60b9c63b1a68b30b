//! `cargo xtask dist [--release] [--check]`: the emulator's packages for the platform this runs
//! on, in `target/dist/` (docs/release.md):
//!
//! - the Python wheel `svc-emulator`, built by maturin (PyPI `maturin`, installed into
//!   `target/dist/tools/` on first use) from `packages/python/`: the `svc` binary of
//!   `crates/svc-cli` and the module `svc_emulator` with its pytest plugin;
//! - the npm packages `svc-emulator` (`packages/npm/svc-emulator/`: the launcher and the
//!   helper) and `svc-emulator-<os>-<cpu>` (the binary), packed by `npm pack`.
//!
//! Without `--release` the binary is the dev profile's (what CI has built already: seconds,
//! not minutes). The versions are the workspace's: a package file that says another fails the
//! step.
//!
//! `--check` (a step of `cargo xtask ci`) then installs them where a user without a Rust
//! toolchain would, with `cargo` and `rustc` taken off `PATH`: the wheel into a fresh virtual
//! environment, with pytest, to run `packages/python/tests/`; the tarballs into a fresh npm
//! project, with Vitest, to run `packages/npm/tests/` under `node --test` and Vitest.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The maturin that builds the wheel (pinned: its wheel layout is what the tests check).
const MATURIN: &str = "maturin==1.16.0";
/// The pytest the wheel's suite runs under.
const PYTEST: &str = "pytest==9.2.0";
/// The Vitest the npm suite runs under.
const VITEST: &str = "vitest@5.1.2";

/// `cargo xtask dist`: see the module's documentation.
pub fn dist(args: &[String], root: &Path) -> bool {
    let mut release = false;
    let mut check = false;
    for arg in args {
        match arg.as_str() {
            "--release" => release = true,
            "--check" => check = true,
            other => {
                eprintln!(
                    "dist: unknown argument {other:?}; usage: cargo xtask dist [--release] [--check]"
                );
                return false;
            }
        }
    }
    match build(root, release).and_then(|built| {
        if check {
            self::check(root, &built)
        } else {
            Ok(())
        }
    }) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("\ndist: {e}");
            false
        }
    }
}

/// What a build made.
struct Built {
    wheel: PathBuf,
    tarballs: Vec<PathBuf>,
    /// `svc-emulator-<os>-<cpu>`.
    platform: String,
}

fn build(root: &Path, release: bool) -> Result<Built, String> {
    let version = workspace_version(root)?;
    let dist = root.join("target/dist");
    std::fs::create_dir_all(&dist).map_err(|e| format!("cannot create {}: {e}", dist.display()))?;
    check_npm_versions(root, &version)?;
    for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
        let copy = root.join("packages/python").join(license);
        if std::fs::read(root.join(license)).ok() != std::fs::read(&copy).ok() {
            return Err(format!(
                "{} is not the repository's {license}: copy it again",
                copy.display()
            ));
        }
    }
    let platform = npm_platform()?;

    // The wheel.
    let maturin = tools(&dist)?;
    for old in files_with(&dist, "svc_emulator-", ".whl")? {
        let _ = std::fs::remove_file(old);
    }
    let profile = if release { "release" } else { "dev" };
    let mut build = Command::new(&maturin);
    build
        .current_dir(root.join("packages/python"))
        .args(["build", "--profile", profile, "--out"])
        .arg(&dist);
    if !release {
        // A wheel for this machine's tests: the release's are made manylinux (docs/release.md).
        build.args(["--auditwheel", "skip"]);
    }
    run(&mut build)?;
    let wheel = files_with(&dist, "svc_emulator-", ".whl")?
        .into_iter()
        .next()
        .ok_or("maturin wrote no wheel")?;

    // The npm packages.
    let binary_name = if cfg!(windows) { "svc.exe" } else { "svc" };
    let binary = root
        .join("target")
        .join(if release { "release" } else { "debug" })
        .join(binary_name);
    let staged = dist.join("npm");
    let _ = std::fs::remove_dir_all(&staged);
    let main = staged.join("svc-emulator");
    copy_dir(&root.join("packages/npm/svc-emulator"), &main)?;
    let native = staged.join(&platform);
    std::fs::create_dir_all(native.join("bin")).map_err(|e| e.to_string())?;
    std::fs::copy(&binary, native.join("bin").join(binary_name))
        .map_err(|e| format!("cannot copy {}: {e}", binary.display()))?;
    let (os, cpu) = platform
        .trim_start_matches("svc-emulator-")
        .split_once('-')
        .ok_or("a platform package's name")?;
    let manifest = serde_json::json!({
        "name": platform,
        "version": version,
        "description": format!("The svc binary of svc-emulator for {os} {cpu}"),
        "license": "MIT OR Apache-2.0",
        "repository": {"type": "git", "url": "git+https://github.com/svc-rs/svc-rs.git"},
        "os": [os],
        "cpu": [cpu],
        "files": ["bin/", "LICENSE-MIT", "LICENSE-APACHE"],
        "preferUnplugged": true,
    });
    write(&native.join("package.json"), &format!("{manifest:#}\n"))?;
    write(
        &native.join("README.md"),
        &format!(
            "# {platform}\n\nThe `svc` binary of [svc-emulator](https://www.npmjs.com/package/svc-emulator) \
             for {os} {cpu}: install `svc-emulator`, which depends on it.\n"
        ),
    )?;
    for package in [&main, &native] {
        for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
            std::fs::copy(root.join(license), package.join(license))
                .map_err(|e| format!("cannot copy {license}: {e}"))?;
        }
    }
    for old in files_with(&dist, "svc-emulator-", ".tgz")? {
        let _ = std::fs::remove_file(old);
    }
    let mut tarballs = Vec::new();
    for package in [&main, &native] {
        let packed = output(
            Command::new("npm")
                .current_dir(package)
                .args(["pack", "--silent", "--pack-destination"])
                .arg(&dist),
        )?;
        let name = packed.lines().last().unwrap_or_default().trim().to_owned();
        tarballs.push(dist.join(name));
    }
    eprintln!("\ndist: built in {}:", dist.display());
    for file in std::iter::once(&wheel).chain(&tarballs) {
        eprintln!(
            "  {}",
            file.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    Ok(Built {
        wheel,
        tarballs,
        platform,
    })
}

/// Installs what `build` made where no Rust toolchain is, and runs the packages' suites.
fn check(root: &Path, built: &Built) -> Result<(), String> {
    let dist = root.join("target/dist");
    let path = path_without_rust()?;
    // The wheel, in a fresh virtual environment.
    let venv = dist.join("check-python");
    let _ = std::fs::remove_dir_all(&venv);
    run(Command::new(python()?).args(["-m", "venv"]).arg(&venv))?;
    let bin = venv.join(if cfg!(windows) { "Scripts" } else { "bin" });
    run(Command::new(bin.join("pip"))
        .env("PATH", &path)
        .args(["install", "--quiet", "--disable-pip-version-check", PYTEST])
        .arg(&built.wheel))?;
    let examples = docs_examples(root)?;
    let python_docs = venv.join("docs");
    std::fs::create_dir_all(&python_docs).map_err(|e| e.to_string())?;
    for (name, code) in examples.iter().filter(|(n, _)| n.ends_with(".py")) {
        write(&python_docs.join(name), code)?;
    }
    for (folder, tests) in [
        (root.join("packages/python"), "tests"),
        (python_docs.clone(), "."),
    ] {
        run(Command::new(bin.join("python"))
            .env("PATH", &path)
            .env("SVC_DIST_CHECK", "1")
            .env_remove("SVC_BIN")
            .env_remove("SVC_EMULATOR_STARTUP")
            .current_dir(folder)
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", tests]))?;
    }

    // The tarballs, in a fresh npm project.
    let project = dist.join("check-npm");
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(&project).map_err(|e| e.to_string())?;
    write(
        &project.join("package.json"),
        "{\"name\": \"svc-emulator-check\", \"private\": true, \"type\": \"module\"}\n",
    )?;
    for (name, code) in examples.iter().filter(|(n, _)| n.ends_with(".mjs")) {
        write(&project.join(name), code)?;
    }
    for test in [
        "node-suite.mjs",
        "vitest-suite.test.mjs",
        "vitest.config.mjs",
    ] {
        std::fs::copy(
            root.join("packages/npm/tests").join(test),
            project.join(test),
        )
        .map_err(|e| format!("cannot copy {test}: {e}"))?;
    }
    let npm = |args: &[&str]| {
        let mut cmd = Command::new("npm");
        cmd.current_dir(&project)
            .env("PATH", &path)
            .args(["--no-audit", "--no-fund", "--loglevel=error"])
            .args(args);
        cmd
    };
    // One install, as a user's: the platform package from its tarball; the other platforms'
    // are optional dependencies npm leaves out here (their os and cpu are not this machine's).
    let mut install = npm(&["install", "--save-dev", VITEST]);
    install.args(&built.tarballs);
    run(&mut install)?;
    let installed = project.join("node_modules").join(&built.platform);
    if !installed.is_dir() {
        return Err(format!("npm did not install {}", built.platform));
    }
    let env_free = |cmd: &mut Command| {
        cmd.current_dir(&project)
            .env("PATH", &path)
            .env("SVC_DIST_CHECK", "1")
            .env_remove("SVC_BIN")
            .env_remove("SVC_EMULATOR_STARTUP");
    };
    let mut node = Command::new("node");
    env_free(&mut node);
    node.args(["--test", "node-suite.mjs"]);
    node.args(
        examples
            .iter()
            .map(|(n, _)| n)
            .filter(|n| n.ends_with(".mjs")),
    );
    run(&mut node)?;
    let mut vitest = Command::new(project.join("node_modules/.bin/vitest"));
    env_free(&mut vitest);
    run(vitest.args(["run"]))?;
    eprintln!(
        "\ndist: the wheel's suite (pytest) and the npm packages' (node --test, Vitest) passed without a Rust toolchain on PATH"
    );
    Ok(())
}

/// The examples of docs/testing.md that a `<!-- dist: NAME -->` line names, by file name: the
/// first tests of its Python and JavaScript sections, run here as a user runs them.
fn docs_examples(root: &Path) -> Result<Vec<(String, String)>, String> {
    let guide = std::fs::read_to_string(root.join("docs/testing.md")).map_err(|e| e.to_string())?;
    let mut examples = Vec::new();
    let mut lines = guide.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line
            .trim()
            .strip_prefix("<!-- dist:")
            .and_then(|rest| rest.strip_suffix("-->"))
        else {
            continue;
        };
        if !lines.next().is_some_and(|fence| fence.starts_with("```")) {
            return Err(format!(
                "docs/testing.md: no code block after <!-- dist:{name}-->"
            ));
        }
        let code: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        examples.push((name.trim().to_owned(), code.join("\n") + "\n"));
    }
    for kind in [".py", ".mjs"] {
        if !examples.iter().any(|(n, _)| n.ends_with(kind)) {
            return Err(format!(
                "docs/testing.md has no <!-- dist: NAME{kind} --> example"
            ));
        }
    }
    Ok(examples)
}

/// The workspace's version (`[workspace.package] version` of the root `Cargo.toml`).
fn workspace_version(root: &Path) -> Result<String, String> {
    let toml = std::fs::read_to_string(root.join("Cargo.toml")).map_err(|e| e.to_string())?;
    let section = toml
        .split("[workspace.package]")
        .nth(1)
        .ok_or("no [workspace.package] in Cargo.toml")?;
    section
        .lines()
        .find_map(|line| {
            let value = line
                .trim()
                .strip_prefix("version")?
                .trim()
                .strip_prefix('=')?;
            Some(value.trim().trim_matches('"').to_owned())
        })
        .ok_or_else(|| "no version in [workspace.package]".to_owned())
}

/// `packages/npm/svc-emulator/package.json` names the workspace's version, for itself and its
/// platform packages.
fn check_npm_versions(root: &Path, version: &str) -> Result<(), String> {
    let file = root.join("packages/npm/svc-emulator/package.json");
    let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
    let manifest: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let mut versions = vec![("version".to_owned(), manifest["version"].clone())];
    if let Some(optional) = manifest["optionalDependencies"].as_object() {
        versions.extend(optional.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    for (what, said) in versions {
        if said.as_str() != Some(version) {
            return Err(format!(
                "{} says {what} {said}, and the workspace is at {version}: the packages follow \
                 the workspace's version (change them together)",
                file.display()
            ));
        }
    }
    Ok(())
}

/// The platform package of this machine, named as npm names platforms.
fn npm_platform() -> Result<String, String> {
    let os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "darwin",
        "windows" => "win32",
        other => return Err(format!("no npm platform package for {other}")),
    };
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => return Err(format!("no npm platform package for {other}")),
    };
    Ok(format!("svc-emulator-{os}-{cpu}"))
}

/// maturin, installed into `target/dist/tools/` on first use.
fn tools(dist: &Path) -> Result<PathBuf, String> {
    let venv = dist.join("tools");
    let bin = venv.join(if cfg!(windows) { "Scripts" } else { "bin" });
    let maturin = bin.join("maturin");
    if maturin.is_file() {
        return Ok(maturin);
    }
    run(Command::new(python()?).args(["-m", "venv"]).arg(&venv))?;
    run(Command::new(bin.join("pip")).args([
        "install",
        "--quiet",
        "--disable-pip-version-check",
        MATURIN,
    ]))?;
    Ok(maturin)
}

/// The Python interpreter: `python3` on `PATH`, resolved (a shim would need `PATH` later).
fn python() -> Result<PathBuf, String> {
    let found = output(Command::new("python3").args(["-c", "import sys; print(sys.executable)"]))?;
    Ok(PathBuf::from(found.trim()))
}

/// `PATH` without the folders that hold `cargo` or `rustc`: what a user without a Rust toolchain
/// has.
fn path_without_rust() -> Result<std::ffi::OsString, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| {
            !["cargo", "rustc", "rustup"]
                .iter()
                .any(|tool| dir.join(tool).exists())
        })
        .collect();
    std::env::join_paths(kept).map_err(|e| e.to_string())
}

/// The files of `dir` whose names start with `prefix` and end with `suffix`.
fn files_with(dir: &Path, prefix: &str, suffix: &str) -> Result<Vec<PathBuf>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(suffix))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// Copies the files of `from` (not its subfolders but `bin/`) into `to`.
fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| e.to_string())?;
    for entry in std::fs::read_dir(from).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Runs `cmd`, its output shown; an error naming it when it fails.
fn run(cmd: &mut Command) -> Result<(), String> {
    eprintln!("\n== {cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{:?} failed ({status})", cmd.get_program()))
    }
}

/// Runs `cmd` and hands back its stdout.
fn output(cmd: &mut Command) -> Result<String, String> {
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    if !out.status.success() {
        return Err(format!(
            "{:?} failed ({}): {}",
            cmd.get_program(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
