//! `cargo xtask contract`: an outside contract tester, schemathesis (PyPI), against the emulator,
//! from the emulator's own OpenAPI description (`GET /_emulator/openapi.json`).
//!
//! It installs schemathesis into a venv (`target/contract/venv`, reused), starts the emulator
//! (the demo project, in memory, on loopback), mints a service token (a `JWT` session) with the
//! project's API key, and runs every phase (examples, coverage, fuzzing, stateful) with every
//! check but the two that judge acceptance by the schema alone (see `run`), each security scheme
//! of the description given its credential: the API key as
//! `Bearer`, the resource's and the tools resource's raw static tokens, the session as
//! `JWT <token>`. Path parameters are pinned to the demo project, environment, resource and its
//! `customers` model, so that requests reach the handlers instead of stopping at `404`.
//! Then the resource routes (records, SQL, reload) run twice more, with the API key and with the
//! session, so that every credential kind each route takes is exercised.
//!
//! It fails when schemathesis finds a failure (a `5xx`, a status code or a body the description
//! does not list, a crash) or cannot run. The run's files (config, report, the emulator's log)
//! stay in `target/contract/run/`.
//!
//! ```text
//! cargo xtask contract [--max-examples N (25)] [--phases LIST] [--emulator-bin PATH]
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::fidelity::emulator;
use crate::http;

/// The data host's routes of a connected resource (records, SQL, reload), which take the API
/// key and sessions as well as the resource's token.
/// The routes that put a project's state back (its reset, a snapshot's restore) or forget a
/// snapshot: a stateful scenario that met one between a create and a use of what it created
/// would find it gone, as it should. And the stubs' routes: a stub declared with a generated
/// body answers the API's requests in its place (a status the operation does not list, a
/// dropped connection), so it must not meet the other passes' requests. They run in a pass of
/// their own, the last one, without the stateful phase, and are left out of the others; stubs
/// never answer the emulator's own routes, which that pass alone sends.
const STATE_ROUTES: &str = "^/_emulator/projects/[^/]+/(reset|snapshots|stubs)";

/// The phases a pass runs: all those asked for, but the stateful one for [`STATE_ROUTES`].
fn phases_of(options: &Options, only: &Option<&str>) -> String {
    let phases = options.phases.split(',').map(str::trim);
    if *only == Some(STATE_ROUTES) {
        phases
            .filter(|p| *p != "stateful")
            .collect::<Vec<_>>()
            .join(",")
    } else {
        phases.collect::<Vec<_>>().join(",")
    }
}

const RESOURCE_ROUTES: &str = "^/projects/\\{project\\}/\\{environment\\}/\\{resource\\}/";

/// The schemathesis release the runs use (pinned: its checks change between releases).
pub const SCHEMATHESIS: &str = "4.32.5";

const USAGE: &str = "usage: cargo xtask contract [--max-examples N (25)] [--phases LIST \
                     (examples,coverage,fuzzing,stateful)] [--emulator-bin PATH]";

/// The options of `cargo xtask contract`.
#[derive(Debug, Clone, PartialEq)]
struct Options {
    max_examples: u32,
    phases: String,
    emulator_bin: Option<PathBuf>,
}

fn parse_options(args: &[String]) -> Result<Option<Options>, String> {
    let mut options = Options {
        max_examples: 25,
        phases: "examples,coverage,fuzzing,stateful".to_owned(),
        emulator_bin: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--max-examples" => {
                let v = value(arg)?;
                options.max_examples = v
                    .parse()
                    .map_err(|_| format!("--max-examples: {v:?} is not a number\n{USAGE}"))?;
            }
            "--phases" => options.phases = value(arg)?,
            "--emulator-bin" => options.emulator_bin = Some(PathBuf::from(value(arg)?)),
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(Some(options))
}

/// Runs the contract test; false when it failed or could not run.
pub fn contract(args: &[String], root: &Path) -> bool {
    let options = match parse_options(args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            eprintln!("{USAGE}");
            return true;
        }
        Err(e) => {
            eprintln!("contract: {e}");
            return false;
        }
    };
    match run(&options, root) {
        Ok(ok) => ok,
        Err(e) => {
            eprintln!("contract: {e}");
            false
        }
    }
}

fn run(options: &Options, root: &Path) -> Result<bool, String> {
    let cache = root.join("target").join("contract");
    let run_dir = cache.join("run");
    let _ = std::fs::remove_dir_all(&run_dir);
    std::fs::create_dir_all(&run_dir)
        .map_err(|e| format!("creating {}: {e}", run_dir.display()))?;
    let st = install(&cache)?;
    let binary = match &options.emulator_bin {
        Some(bin) => bin.clone(),
        None => emulator::build(root, false)?,
    };
    let (server, info) = emulator::launch(&binary, &run_dir, &[])?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let base = text(&info["api_base_url"]);
    let project = text(&info["project"]);
    let environment = text(&info["environment"]);
    let api_key = text(&info["api_key"]);
    let resource_token = text(&info["resource_tokens"]["shop"]);
    let tools_token = text(&info["resource_tokens"]["__svc_app__"]);
    let addr = base
        .strip_prefix("http://")
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("unexpected api_base_url {base:?}"))?;
    let minted = http::send(
        addr,
        "POST",
        &format!("/_emulator/projects/{project}/service_token"),
        Some(&format!("Bearer {api_key}")),
        None,
    )?;
    let session: Value = serde_json::from_slice(&minted.body)
        .map_err(|e| format!("service token answer ({}): {e}", minted.status))?;
    let jwt = text(&session["token"]);
    if jwt.is_empty() {
        return Err(format!("no service token: {}", minted.text()));
    }
    let config = run_dir.join("schemathesis.toml");
    std::fs::write(
        &config,
        config_text(
            &project,
            &environment,
            &Credentials {
                api_key: &api_key,
                resource_token: &resource_token,
                tools_token: &tools_token,
                jwt: &jwt,
            },
        ),
    )
    .map_err(|e| format!("writing {}: {e}", config.display()))?;
    // Pass 1: every operation, each with the first scheme it lists (the resource's token on
    // records, the tools token on users and teams, the session on the account routes). Passes
    // 2 and 3: the data host's resource routes again with the other credentials they take, the
    // API key and a `JWT` session.
    let passes: [(&str, Option<String>, Option<&str>); 4] = [
        ("every operation, each with its first scheme", None, None),
        (
            "the data host's resource routes with the API key",
            Some(format!("Authorization: Bearer {api_key}")),
            Some(RESOURCE_ROUTES),
        ),
        (
            "the data host's resource routes with a JWT session",
            Some(format!("Authorization: JWT {jwt}")),
            Some(RESOURCE_ROUTES),
        ),
        (
            "the project's resets, snapshots and stubs, without the stateful phase",
            None,
            Some(STATE_ROUTES),
        ),
    ];
    let mut failed = Vec::new();
    for (i, (what, header, only)) in passes.iter().enumerate() {
        if phases_of(options, only).is_empty() {
            continue;
        }
        let report = run_dir.join(format!("junit-{}.xml", i + 1));
        eprintln!(
            "contract: pass {}: {what}: schemathesis {SCHEMATHESIS} against {base} ({} examples \
             per operation, phases {})",
            i + 1,
            options.max_examples,
            phases_of(options, only)
        );
        let mut cmd = Command::new(&st);
        cmd.arg("--config-file")
            .arg(&config)
            .arg("run")
            .arg(format!("{base}/_emulator/openapi.json"))
            .args(["--url", &base])
            // Every check (the config's default, which its per-operation settings can then
            // turn off: `--checks all` on the command line would override them).
            // Whether a request the description allows is accepted, or one it forbids refused,
            // depends on more than a schema can say: the SQL text, a team that exists, a target
            // on the proxy's allow-list, and the data engine's lenient readings (`page=0` is page
            // 1). The emulator answers those with 4xx, each listed in the description.
            .args([
                "--exclude-checks",
                "positive_data_acceptance,negative_data_rejection",
            ])
            .args(["--phases", &phases_of(options, only)])
            .args(["--max-examples", &options.max_examples.to_string()])
            // One worker: CPython 3.11 compiles hypothesis strategies with `ast`, whose
            // recursion check is not thread-safe (a "recursion depth mismatch" crashes a worker
            // at random).
            .args(["--workers", "1"])
            .args(["--seed", "1"])
            // A busy CI machine: a generous timeout, and a connection that breaks is tried
            // again (an answer that never comes is still a failure, after the timeout).
            .args(["--request-timeout", "30", "--request-retries", "2"])
            .args(["--report", "junit", "--report-junit-path"])
            .arg(&report);
        if let Some(header) = header {
            cmd.args(["--header", header]);
        }
        if let Some(regex) = only {
            cmd.args(["--include-path-regex", regex]);
        }
        if *only != Some(STATE_ROUTES) {
            cmd.args(["--exclude-path-regex", STATE_ROUTES]);
        }
        // The proxy's targets are URLs: a fuzzed host name would be looked up in DNS, beyond
        // loopback. Its own answers are pinned by the emulator's proxy tests.
        cmd.args(["--exclude-path", "/api/proxy_request"]);
        let status = cmd
            .current_dir(&run_dir)
            .status()
            .map_err(|e| format!("running {}: {e}", st.display()))?;
        if !status.success() {
            failed.push(format!("pass {} ({what}): {}", i + 1, report.display()));
        }
    }
    drop(server);
    if failed.is_empty() {
        eprintln!(
            "contract: no failure in {} passes (reports in {})",
            passes.len(),
            run_dir.display()
        );
        Ok(true)
    } else {
        eprintln!(
            "contract: schemathesis found failures in {}; emulator log {}",
            failed.join(", "),
            run_dir.join("emulator.log").display()
        );
        Ok(false)
    }
}

/// The credential of each security scheme.
struct Credentials<'a> {
    api_key: &'a str,
    resource_token: &'a str,
    tools_token: &'a str,
    jwt: &'a str,
}

/// schemathesis' config: a credential per security scheme of the description, and the path
/// parameters pinned to the served project.
fn config_text(project: &str, environment: &str, c: &Credentials<'_>) -> String {
    let quoted = |s: &str| Value::from(s).to_string();
    format!(
        "# Written by `cargo xtask contract`.\n\
         [auth.openapi.ApiKey]\nbearer = {}\n\n\
         [auth.openapi.ResourceToken]\napi_key = {}\n\n\
         [auth.openapi.ToolsToken]\napi_key = {}\n\n\
         [auth.openapi.UserJwt]\napi_key = {}\n\n\
         [parameters]\n\"path.project\" = {}\n\"path.environment\" = {}\n\
         \"path.resource\" = {}\n\"path.model\" = {}\n\
         # A page lives in two sets, draft and published: deleted from one, it is still in the\n\
         # other, which the use-after-free check cannot know. Every request uses the published\n\
         # set (whose writes reach the draft set too); the emulator's own tests cover drafts.\n\
         \"query.draft\" = \"0\"\n\n\
         # Long enough sequences to reach reads, updates and deletes of what a create made.\n\
         [phases.stateful]\nmax-steps = 40\n\n\
         # A method a records path does not map is answered as the data engine answers it: 404\n\
         # (docs/contract.md 5.1, \"Methods\"). Schemathesis takes a 404 for its 405 only where a\n\
         # path parameter is drawn; on the model's own paths all of them are pinned above.\n\
         [[operations]]\ninclude-path-regex = '/models/\\{{model\\}}(/[a-z_]+)?$'\n\
         checks.unsupported_method.enabled = false\n",
        quoted(c.api_key),
        quoted(c.resource_token),
        quoted(c.tools_token),
        quoted(&format!("JWT {}", c.jwt)),
        quoted(project),
        quoted(environment),
        quoted("shop"),
        quoted("customers"),
    )
}

/// Makes the venv when it is not there yet; returns the `st` program.
fn install(cache: &Path) -> Result<PathBuf, String> {
    let venv = cache.join("venv");
    let st = venv.join("bin").join("st");
    let marker = venv.join(format!("schemathesis-{SCHEMATHESIS}.installed"));
    if !marker.exists() {
        eprintln!(
            "contract: installing schemathesis=={SCHEMATHESIS} into {}",
            venv.display()
        );
        let _ = std::fs::remove_dir_all(&venv);
        let ok = |cmd: &mut Command| -> Result<(), String> {
            let status = cmd.status().map_err(|e| format!("running {cmd:?}: {e}"))?;
            if status.success() {
                Ok(())
            } else {
                Err(format!(
                    "{cmd:?} failed ({status}): schemathesis needs python3 (3.9 or later, with \
                     venv) and, the first time, PyPI"
                ))
            }
        };
        ok(Command::new("python3").arg("-m").arg("venv").arg(&venv))?;
        ok(Command::new(venv.join("bin").join("python")).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            &format!("schemathesis=={SCHEMATHESIS}"),
        ]))?;
        std::fs::write(&marker, "").map_err(|e| format!("writing {}: {e}", marker.display()))?;
    }
    Ok(st)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse() {
        let o = parse_options(&[]).unwrap().unwrap();
        assert_eq!(o.max_examples, 25);
        assert!(o.phases.contains("stateful"));
        let o = parse_options(&["--max-examples".into(), "3".into()])
            .unwrap()
            .unwrap();
        assert_eq!(o.max_examples, 3);
        assert!(parse_options(&["--max-examples".into(), "x".into()]).is_err());
        assert!(parse_options(&["--nope".into()]).is_err());
        assert_eq!(parse_options(&["--help".into()]).unwrap(), None);
    }

    #[test]
    fn the_config_gives_each_scheme_its_credential() {
        let text = config_text(
            "demo",
            "prod",
            &Credentials {
                api_key: "k\"1",
                resource_token: "tok",
                tools_token: "tools",
                jwt: "a.b.c",
            },
        );
        assert!(
            text.contains("[auth.openapi.ApiKey]\nbearer = \"k\\\"1\""),
            "{text}"
        );
        assert!(text.contains("api_key = \"JWT a.b.c\""), "{text}");
        assert!(text.contains("\"path.project\" = \"demo\""), "{text}");
    }
}
