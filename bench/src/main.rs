//! The svc-rs benchmarks, side by side in one run: `cargo xtask bench` (see
//! docs/performance.md).
//!
//! 1. Client overhead: the SDK beside a bare hyper-util client and reqwest.
//! 2. Decoding: the SDK beside `serde_json::from_slice`.
//! 3. Export: `stream()` beside a sequential loop over pages, and its memory.
//! 4. Emulator: a list page beside a bare axum handler, and records per second; the
//!    `_no_pagination` list beside a bare rusqlite loop writing the same JSON (sink.rs).
//! 5. Emulator at scale: file-backed tables of 10k, 100k and 1M rows; first pages, walks,
//!    exports, deep pages.
//! 7. The emulator over PostgreSQL at scale (pg_scale.rs): 10k, 100k and 1M rows in a
//!    throwaway cluster; first pages, a filtered count beside tokio-postgres, walks, a deep page.
//! 8. Import: `create_many` beside creates one by one; `svc records import` beside a
//!    `svc records create` per record.
//! 9. The emulator beside the data engine (jet-bridge) per request class, on SQLite and on
//!    PostgreSQL, 16 in flight (engine.rs).
//! 10. The emulator over PostgreSQL beside pgbench -M prepared running the statements it sends,
//!     16 connections, with the CPU time per request of every process (pgbench.rs).
//! 11. The emulator over MariaDB at scale (my_scale.rs): 100k and 1M rows in a throwaway server;
//!     an export by page walk, a late page of it, a deep page.
//! 12. The emulator as a test fixture (fixture.rs): a start with a 10k-row seed, a reset and a
//!     snapshot restore, a suite of tests with a clean state each; resets on PostgreSQL and
//!     MariaDB.
//! 6. Instructions per request (callgrind, when valgrind is installed): the SDK beside the
//!    baselines by a count that does not move with the load of the machine.
//!
//! Each figure is a ratio to a baseline measured in the same run, on the same machine: the
//! median of several runs after a warm-up. The table is printed and written as Markdown.
//!
//! ```text
//! svc-bench [--quick] [--out target/bench/report.md] [--only client,decoding,export,emulator,scale,pgscale,myscale,engine,pgbench,instructions,import,fixture]
//!           [--load-ms N]   # how long each throughput run lasts
//! svc-bench [--load-ms N | --requests N] --profile PROFILE   # one loop, for a profiler
//! svc-bench --load-child URL AUTHORIZATION IN_FLIGHT MS [BODY]  # the load of sections 9, 10
//! ```
//!
//! Profiles: `client-[list-|retrieve-]{sdk|bare|reqwest}-{N}`, `emulator-page`,
//! `emulator-{first25|first1000|walk1000}-{10k|1m}` (scale.rs) and `{emulator|bare}-sink`
//! (sink.rs: each request one 10000-record list). With
//! `--requests N` a profile makes exactly N requests (after a warm-up) between two marks that
//! callgrind zeroes and dumps its counters at: see instructions.rs.
// The counting allocator (src/alloc.rs) is the one `unsafe` item, allowed there alone.
#![deny(unsafe_code)]

mod alloc;
mod client_overhead;
mod decoding;
mod emulator;
mod engine;
mod export;
mod fixture;
mod harness;
mod import;
mod instructions;
mod loadgen;
mod my_scale;
mod pg_scale;
mod pgbench;
mod report;
mod scale;
mod sink;
mod sqlite_restore;

use std::path::PathBuf;
use std::process::ExitCode;

use harness::Settings;

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

const BENCHMARKS: [&str; 12] = [
    "client",
    "decoding",
    "export",
    "emulator",
    "scale",
    "pgscale",
    "myscale",
    "engine",
    "pgbench",
    "instructions",
    "import",
    "fixture",
];

#[derive(Debug)]
struct Args {
    quick: bool,
    out: PathBuf,
    only: Vec<String>,
    profile: Option<String>,
    load_ms: Option<u64>,
    requests: Option<u64>,
}

fn usage() -> String {
    "usage: svc-bench [--quick] [--out PATH] [--only client,decoding,export,emulator,scale,pgscale,myscale,engine,pgbench,instructions,import,fixture] [--load-ms N]\n       \
     svc-bench [--load-ms N | --requests N] --profile client-[list-|retrieve-]{sdk|bare|reqwest}-{N}|emulator-page|emulator-sink|bare-sink"
        .to_owned()
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        quick: false,
        out: PathBuf::from("target/bench/report.md"),
        only: BENCHMARKS.map(str::to_owned).to_vec(),
        profile: None,
        load_ms: None,
        requests: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--quick" => args.quick = true,
            "--out" => args.out = it.next().ok_or_else(usage)?.into(),
            "--only" => {
                let list = it.next().ok_or_else(usage)?;
                args.only = list.split(',').map(str::to_owned).collect();
                if let Some(bad) = args.only.iter().find(|b| !BENCHMARKS.contains(&b.as_str())) {
                    return Err(format!("unknown benchmark {bad:?}\n{}", usage()));
                }
            }
            "--profile" => args.profile = Some(it.next().ok_or_else(usage)?),
            "--load-ms" => {
                let ms = it.next().ok_or_else(usage)?;
                args.load_ms = Some(ms.parse().map_err(|_| usage())?);
            }
            "--requests" => {
                let n = it.next().ok_or_else(usage)?;
                args.requests = Some(n.parse().map_err(|_| usage())?);
            }
            "-h" | "--help" => return Err(usage()),
            other => return Err(format!("unknown argument {other:?}\n{}", usage())),
        }
    }
    Ok(args)
}

/// The machine and the settings, for the report.
fn setup(settings: &Settings, quick: bool) -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, name)| name.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    format!(
        "Machine: {cores} cores ({cpu}), {} {}. Run: {}, median of {} runs after a warm-up \
         ({} ms per throughput run, {} runs of each decode).",
        std::env::consts::OS,
        std::env::consts::ARCH,
        if quick { "--quick" } else { "full" },
        settings.runs,
        settings.load_time.as_millis(),
        settings.decode_runs,
    )
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().map(String::as_str) == Some("--load-child") {
        return match loadgen::child_main(&raw[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("{message}");
                ExitCode::from(2)
            }
        };
    }
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let mut settings = if args.quick {
        Settings::quick()
    } else {
        Settings::full()
    };
    if let Some(ms) = args.load_ms {
        settings.load_time = std::time::Duration::from_millis(ms);
    }
    settings.profile_requests = args.requests;
    if let Some(what) = args.profile.as_deref() {
        let done = match what.split('-').collect::<Vec<_>>().as_slice() {
            ["client", spec @ ..] => client_overhead::profile(&settings, spec),
            ["emulator", "page"] => {
                emulator::profile_page(&settings);
                Ok(())
            }
            ["emulator", "sink"] => sink::profile_emulator(&settings),
            ["bare", "sink"] => sink::profile_bare(&settings),
            ["emulator", kind, size] => scale::profile(&settings, kind, size),
            _ => Err(format!("unknown profile {what:?}\n{}", usage())),
        };
        // The message alone as the last line (the instructions' report quotes that line): the
        // usage only where the profile's name is wrong.
        if let Err(message) = done {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
        return ExitCode::SUCCESS;
    }

    let setup = setup(&settings, args.quick);
    eprintln!("{setup}\n");
    let mut rows = Vec::new();
    let wanted = |name: &str| args.only.iter().any(|o| o == name);
    if wanted("client") {
        rows.extend(client_overhead::run(&settings));
    }
    if wanted("decoding") {
        rows.extend(decoding::run(&settings));
    }
    if wanted("export") {
        rows.extend(export::run(&settings));
    }
    if wanted("emulator") {
        rows.extend(emulator::run(&settings));
        rows.extend(sink::run(&settings));
    }
    if wanted("scale") {
        rows.extend(scale::run(&settings));
    }
    if wanted("pgscale") {
        rows.extend(pg_scale::run(&settings));
    }
    if wanted("myscale") {
        rows.extend(my_scale::run(&settings));
    }
    if wanted("engine") {
        rows.extend(engine::run(&settings));
    }
    if wanted("pgbench") {
        rows.extend(pgbench::run(&settings));
    }
    if wanted("import") {
        rows.extend(import::run(&settings));
    }
    if wanted("fixture") {
        rows.extend(fixture::run(&settings));
    }
    if wanted("instructions") {
        rows.extend(instructions::run(if args.quick { 200 } else { 1000 }));
    }

    println!("\n{}", report::text_table(&rows));
    let missed = rows.iter().filter(|r| r.met() == Some(false)).count();
    if missed > 0 {
        println!("{missed} target(s) missed.");
    }
    if let Err(e) = report::write_markdown(&args.out, &rows, &setup) {
        eprintln!("could not write {}: {e}", args.out.display());
        return ExitCode::FAILURE;
    }
    println!("Report written to {}", args.out.display());
    ExitCode::SUCCESS
}
