//! Maintenance jobs of the workspace: `cargo xtask ci`, `cargo xtask features`.
//!
//! `.ci/run` calls `cargo xtask ci`, so CI and a developer's machine run the same steps.

use std::process::{Command, ExitCode};

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
    Step {
        what: "packaging",
        args: &["package", "--workspace", "--allow-dirty", "--quiet"],
        env: &[],
    },
];

/// Every operation group of svc-api must build alone, without the default transport.
const FEATURES: &[&str] = &[
    "pages",
    "projects",
    "records",
    "sql",
    "users",
    "teams",
    "resources",
    "proxy",
    "account",
];

fn cargo(args: &[&str], env: &[(&str, &str)]) -> bool {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    eprintln!("\n== cargo {}", args.join(" "));
    let mut cmd = Command::new(cargo);
    cmd.args(args);
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

fn ci() -> bool {
    for step in CI {
        if !cargo(step.args, step.env) {
            eprintln!("\nci: the {} step failed", step.what);
            return false;
        }
    }
    features()
}

fn features() -> bool {
    for feature in FEATURES {
        let ok = cargo(
            &[
                "check",
                "--quiet",
                "-p",
                "svc-api",
                "--no-default-features",
                "--features",
                feature,
            ],
            &[],
        );
        if !ok {
            eprintln!("\nci: svc-api does not build with only the `{feature}` feature");
            return false;
        }
    }
    eprintln!("\nci: every feature of svc-api builds alone");
    true
}

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    let ok = match task.as_deref() {
        Some("ci") => ci(),
        Some("features") => features(),
        _ => {
            eprintln!(
                "usage: cargo xtask <task>\n\n\
                 tasks:\n  ci        fmt, clippy, tests, docs, packaging, each svc-api feature alone (.ci/run)\n  \
                 features  build svc-api with each feature alone"
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
