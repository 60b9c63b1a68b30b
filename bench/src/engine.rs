//! 9. The emulator beside the platform's data engine (PyPI `jet-bridge`), request class by
//!    request class, on SQLite and on PostgreSQL, 16 requests in flight.
//!
//! Both serve copies of the same data: table `items` (section 5's 12 fields, 1000 rows, an
//! index on `status`) and an empty table `events` (key, text, real, boolean) that the creates
//! fill. On SQLite each has its own copy of one file; on PostgreSQL each has its own database
//! in one throwaway cluster (crate `pg-cluster`). The engine runs from the venv `cargo xtask
//! fidelity` installs (`target/fidelity/venv`, with psycopg2), on loopback with a bearer key and
//! nothing outbound (docs/fidelity.md). The load is a child process (loadgen.rs): the same
//! requests, the engine's paths with their trailing slash. The two alternate; the figure is the
//! median of the rounds' ratios, emulator over engine (how many times the engine's requests per
//! second the emulator answers).
//!
//! The classes: page 1 of 25 with its count; one record by key; a create; `_no_pagination`
//! (all 1000 records); a page filtered on the indexed `status` and sorted on `total`; an
//! aggregate (`sum` of `total`); a group (`count` by `status`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use svc_emulator::{ProjectConfig, ResourceConfig};

use crate::harness::{API_KEY, BenchEmulator, PROJECT, Settings};
use crate::loadgen::{self, LoadSpec};
use crate::report::{Row, Target, median, per_second};

const ROWS: usize = 1000;
const IN_FLIGHT: usize = 16;
const ENGINE_KEY: &str = "bench-engine-key";

/// (class, the path after the models prefix, the query, a body to POST).
const CLASSES: [(&str, &str, &str, Option<&str>); 7] = [
    ("list", "items", "", None),
    ("retrieve", "items/500", "", None),
    (
        "create",
        "events",
        "",
        Some(r#"{"title": "bench", "amount": 2.5, "done": true}"#),
    ),
    ("_no_pagination", "items", "_no_pagination=1", None),
    (
        "filtered+sorted",
        "items",
        "status=paid&_order_by=-total",
        None,
    ),
    (
        "aggregate",
        "items/aggregate",
        "_y_func=sum&_y_column=total",
        None,
    ),
    (
        "group",
        "items/group",
        "_x_column=status&_y_func=count",
        None,
    ),
];

const DATABASES: [&str; 2] = ["SQLite", "PostgreSQL"];

fn what(database: &str, class: &str) -> String {
    format!("9. {database}, {class}, {IN_FLIGHT} in flight: emulator vs the engine (jet-bridge)")
}

fn not_measured(database: &str, why: &str) -> Vec<Row> {
    CLASSES
        .iter()
        .map(|(class, ..)| Row {
            benchmark: what(database, class),
            figure: format!("not measured: {why}"),
            baseline: "-".to_owned(),
            ratio: f64::NAN,
            target: Target::None,
        })
        .collect()
}

/// The SQLite schema of both copies.
fn sqlite_seed() -> String {
    format!(
        "{}\nCREATE INDEX items_status ON items (status);\n\
         CREATE TABLE events (id INTEGER PRIMARY KEY, title TEXT NOT NULL, amount REAL, \
         done BOOLEAN NOT NULL DEFAULT 0);",
        crate::harness::seed_sql(ROWS)
    )
}

/// The PostgreSQL schema of both databases (section 7's table, which has an index on
/// `status`).
fn postgres_seed() -> String {
    format!(
        "{}\nCREATE TABLE events (id serial PRIMARY KEY, title text NOT NULL, \
         amount double precision, done boolean NOT NULL DEFAULT false);",
        crate::pg_scale::seed_sql(ROWS)
    )
}

/// The engine's process, stopped when dropped.
struct Engine {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The engine's launcher: Tornado 5.1 needs the ABCs on `collections` (Python >= 3.10); the
/// same as `cargo xtask fidelity` writes.
const LAUNCHER: &str = "\
import collections, collections.abc
for name in ('MutableMapping', 'Mapping', 'Sequence', 'Iterable', 'Callable', 'MutableSet',
             'MutableSequence'):
    setattr(collections, name, getattr(collections.abc, name))
from jet_bridge.__main__ import main
main()
";

fn python() -> Result<PathBuf, String> {
    let venv = PathBuf::from("target/fidelity/venv");
    let python = venv.join("bin").join("python");
    if !venv.join("jet-bridge-1.12.13.installed").exists() || !python.exists() {
        return Err(
            "the engine is not installed: run `cargo xtask fidelity --postgres` once".to_owned(),
        );
    }
    Ok(python)
}

fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// Whether `GET /api/` answers 200.
fn answers(addr: SocketAddr) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    if stream
        .write_all(b"GET /api/ HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).is_ok() && head.ends_with(b" 200")
}

/// Starts the engine in `dir` (it writes its store file there) over `database_args`.
fn start_engine(python: &Path, dir: &Path, database_args: &[String]) -> Result<Engine, String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    // Absolute: the engine runs in `dir`.
    let dir = &std::path::absolute(dir).map_err(|e| e.to_string())?;
    let launcher = dir.join("launch.py");
    std::fs::write(&launcher, LAUNCHER).map_err(|e| e.to_string())?;
    let port = free_port()?;
    let log = std::fs::File::create(dir.join("engine.log")).map_err(|e| e.to_string())?;
    let err = log.try_clone().map_err(|e| e.to_string())?;
    let child = Command::new(std::path::absolute(python).map_err(|e| e.to_string())?)
        .arg(&launcher)
        .args(["--address=127.0.0.1".to_owned(), format!("--port={port}")])
        .args(database_args)
        .args([
            format!("--bearer_auth_key={ENGINE_KEY}"),
            "--auto_open_register=false".to_owned(),
            "--api_base_url=http://127.0.0.1:9/api".to_owned(),
            "--web_base_url=http://127.0.0.1:9".to_owned(),
        ])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("starting the engine: {e}"))?;
    let mut engine = Engine {
        child,
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
    };
    let deadline = Instant::now() + Duration::from_secs(90);
    while !answers(engine.addr) {
        if let Ok(Some(status)) = engine.child.try_wait() {
            return Err(format!(
                "the engine exited ({status}); see {}",
                dir.join("engine.log").display()
            ));
        }
        if Instant::now() > deadline {
            return Err("the engine did not answer GET /api/ in 90 s".to_owned());
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    Ok(engine)
}

/// The seven classes, emulator (`resource`) against `engine`, alternating.
fn compare(
    settings: &Settings,
    database: &str,
    emulator: &BenchEmulator,
    resource: &str,
    engine: &Engine,
) -> Result<Vec<Row>, String> {
    let base = format!(
        "{}/projects/{PROJECT}/prod/{resource}/models",
        emulator.handle().api_base_url()
    );
    // The engine answers tens of times fewer requests: longer runs, fewer rounds.
    let time = settings.load_time.max(Duration::from_millis(1000));
    let rounds = settings.runs.min(3);
    let mut rows = Vec::new();
    for (class, path, query, body) in CLASSES {
        let query = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        let ours = LoadSpec {
            url: format!("{base}/{path}{query}"),
            authorization: emulator.token(resource),
            in_flight: IN_FLIGHT,
            time,
            body: body.map(str::to_owned),
        };
        let theirs = LoadSpec {
            url: format!("http://{}/api/models/{path}/{query}", engine.addr),
            authorization: format!("Bearer {ENGINE_KEY}"),
            ..ours.clone()
        };
        let (mut e, mut g, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..=rounds {
            let a = loadgen::run_child(&ours)
                .map_err(|err| format!("{class} on the emulator: {err}"))?
                .per_second();
            let b = loadgen::run_child(&theirs)
                .map_err(|err| format!("{class} on the engine: {err}"))?
                .per_second();
            // Round 0 is the warm-up.
            if round > 0 {
                e.push(a);
                g.push(b);
                ratios.push(a / b);
            }
        }
        let (e, g) = (median(&e), median(&g));
        eprintln!(
            "   {database} {class}: emulator {}, engine {}",
            per_second(e, "req"),
            per_second(g, "req")
        );
        rows.push(Row {
            benchmark: what(database, class),
            figure: format!("emulator {}", per_second(e, "req")),
            baseline: format!("engine {}", per_second(g, "req")),
            ratio: median(&ratios),
            target: Target::None,
        });
    }
    Ok(rows)
}

fn sqlite(settings: &Settings, python: &Path, work: &Path) -> Result<Vec<Row>, String> {
    let ours = work.join("emulator.sqlite");
    let theirs_dir = work.join("engine-sqlite");
    std::fs::create_dir_all(&theirs_dir).map_err(|e| e.to_string())?;
    let theirs = theirs_dir.join("items.sqlite");
    let project = |file: &Path| {
        ProjectConfig::new(PROJECT).api_key(API_KEY).resource(
            ResourceConfig::new("lite", "tok_lite_0123456789")
                .database(file)
                .seed_sql(sqlite_seed()),
        )
    };
    // Made by an emulator and closed (checkpointed), then copied: the same bytes for both.
    drop(BenchEmulator::with_project(project(&ours)));
    std::fs::copy(&ours, &theirs).map_err(|e| e.to_string())?;
    let emulator = BenchEmulator::with_project(project(&ours));
    let engine = start_engine(
        python,
        &theirs_dir,
        &[
            "--database_engine=sqlite".to_owned(),
            format!(
                "--database_name={}",
                std::path::absolute(&theirs)
                    .map_err(|e| e.to_string())?
                    .display()
            ),
            "--database_extra=check_same_thread=false".to_owned(),
        ],
    )?;
    compare(settings, "SQLite", &emulator, "lite", &engine)
}

fn postgres(settings: &Settings, python: &Path, work: &Path) -> Result<Vec<Row>, String> {
    let cluster = pg_cluster::Cluster::start().map_err(|e| e.to_string())?;
    for name in ["emu", "eng"] {
        cluster.create_database(name).map_err(|e| e.to_string())?;
        cluster
            .psql(name, &postgres_seed())
            .map_err(|e| e.to_string())?;
    }
    let emulator = BenchEmulator::start_databases(&[("pg", &cluster.url("emu"))]);
    let engine = start_engine(
        python,
        &work.join("engine-postgres"),
        &[
            "--database_engine=postgresql".to_owned(),
            "--database_host=127.0.0.1".to_owned(),
            format!("--database_port={}", cluster.port()),
            format!("--database_user={}", cluster.user()),
            "--database_name=eng".to_owned(),
        ],
    )?;
    let rows = compare(settings, "PostgreSQL", &emulator, "pg", &engine);
    drop(engine);
    drop(emulator);
    rows
}

pub fn run(settings: &Settings) -> Vec<Row> {
    eprintln!(
        "9. emulator vs the data engine per request class, {IN_FLIGHT} in flight, {ROWS} rows"
    );
    let python = match python() {
        Ok(python) => python,
        Err(e) => {
            eprintln!("   not measured: {e}");
            return DATABASES.iter().flat_map(|d| not_measured(d, &e)).collect();
        }
    };
    let work = PathBuf::from("target/bench/engine");
    let _ = std::fs::remove_dir_all(&work);
    let mut rows = Vec::new();
    for (database, result) in [
        ("SQLite", sqlite(settings, &python, &work)),
        ("PostgreSQL", postgres(settings, &python, &work)),
    ] {
        match result {
            Ok(r) => rows.extend(r),
            Err(e) => {
                eprintln!("   {database}: not measured: {e}");
                rows.extend(not_measured(database, &e));
            }
        }
    }
    rows
}
