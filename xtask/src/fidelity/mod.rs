//! `cargo xtask fidelity`: a differential harness between the platform's open-source data
//! engine (PyPI `jet-bridge==1.12.13`) and our emulator.
//!
//! It installs the engine in a venv (`target/fidelity/venv`, reused), generates SQLite databases
//! from the seed (`dataset.rs`: Unicode text, NULLs and empty strings, `%` and `_`, integers,
//! reals, numerics, booleans, dates, datetimes, a foreign key, a text primary key), gives each
//! server its own copy, starts both on loopback (the engine on a free port with a bearer key,
//! the emulator with a config file naming its copy), sends both the same randomized requests
//! in the same order (`requests.rs`: lists with every filter, paging and ordering parameter,
//! aggregates, groups, retrieves, creates, PATCH/PUT updates, deletes) and prints the agreement
//! with every difference classified (`compare.rs`). When a write leaves the databases apart
//! (one side wrote, the other refused), the tables are copied from the engine's database into
//! the emulator's, so that one difference does not spoil every later read. Both servers are
//! stopped at the end, also on error. The run's files (databases, config, both servers' logs)
//! stay in `target/fidelity/run/`.
//!
//! `--postgres` runs the same differential over PostgreSQL (`postgres.rs`): a throwaway cluster
//! (crate `pg-cluster`) with two databases made by the same script (the same tables and rows, in
//! PostgreSQL's own types, plus a `jsonb` column), the engine started with its PostgreSQL options
//! and the PostgreSQL driver (`psycopg2-binary`, added to the venv once), the emulator with the
//! database's `postgres://` URL as its resource's `database`. The resync after a diverging write
//! copies the engine's rows and sequences over the emulator's (`pg_dump --data-only`). The
//! generator then also filters and writes the JSON column, and counts among the caller mistakes
//! what the engine fails on with PostgreSQL only (`icontains` on numbers and dates, a JSON filter
//! value that reads as a number). Needs `psql` and `pg_dump` on `PATH`.
//!
//! `--mysql` runs it over MariaDB (`mysql.rs`): two databases of one server (crate
//! `maria-server`) made by the same script (the SQLite tables and rows in MySQL's types), the
//! engine with PyMySQL (`mysql+pymysql`, added to the venv once), the emulator with the
//! database's `mysql://` URL. The generator is the SQLite run's, without its shape tables; about
//! one request in six is over MySQL's own types and key shapes (`my_shapes.rs`).
//!
//! On every database, about three requests in a hundred write and read two small tables keyed
//! on a column that stores some values as others (`rounded_keys.rs`: a `timestamp(0)` or
//! `DATETIME(0)` key given fractional seconds, a `numeric(10,2)` one given a third decimal),
//! which the engine commits and then fails (500) to read back; the resync copies them.
//!
//! It is a measuring tool, not a gate: it exits 0 whatever the agreement, unless the harness
//! itself failed, or `--min-agreement PCT` is given and the agreement is below it.
//!
//! ```text
//! cargo xtask fidelity [--requests N (1000)] [--seed S (1)] [--mistakes PER_MILLE (3)]
//!                      [--lenient] [--postgres] [--mysql] [--json FILE] [--min-agreement PCT]
//!                      [--emulator-bin PATH]
//! ```
//!
//! `--mistakes` sets how many read requests per thousand carry one caller mistake (an unknown
//! field or lookup, a malformed date, an unknown `_order_by` field, ...): strict mode refuses
//! those with a 400 `[decision: stricter]`, so they are the differences a strict run may show;
//! `--lenient --mistakes 100` checks that lenient mode answers them like the engine.
//! `--lenient` starts the emulator with `--lenient`; `--emulator-bin` uses that binary instead
//! of building one. Needs `python3` (3.9 or later, with `venv`) and, the first time, PyPI.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus};

use serde_json::{Value, json};

mod compare;
pub(crate) mod coverage;
mod dataset;
pub(crate) mod emulator;
mod engine;
mod families;
use crate::http;
mod my_shapes;
mod mysql;
mod pg_shapes;
mod postgres;
mod requests;
mod rounded_keys;
mod shapes;
pub(crate) mod verify;
mod wire;

use compare::Difference;
use dataset::Backend;
use http::Response;
use requests::Request;

const USAGE: &str = "usage: cargo xtask fidelity [--requests N (1000)] [--seed S (1)] \
                     [--mistakes PER_MILLE (3)] [--lenient] [--postgres] [--mysql] [--json FILE] \
                     [--min-agreement PCT] [--emulator-bin PATH] \
                     [--coverage [--min-coverage PCT]] [--coverage-report]";

/// The engine's bearer key (loopback only).
const ENGINE_KEY: &str = "fidelity-key";

/// Examples printed per class.
const EXAMPLES: usize = 2;

/// The options of `cargo xtask fidelity`.
#[derive(Debug, Clone, PartialEq)]
struct Options {
    requests: usize,
    seed: u64,
    mistakes: u64,
    lenient: bool,
    /// Both servers read PostgreSQL databases instead of SQLite files.
    postgres: bool,
    /// Both servers read MariaDB (MySQL) databases instead of SQLite files.
    mysql: bool,
    json: Option<PathBuf>,
    min_agreement: Option<f64>,
    emulator_bin: Option<PathBuf>,
    /// Every differential run under the engine's coverage ([`coverage`]).
    coverage: bool,
    /// The report of the last `--coverage` runs' data, without running anything.
    coverage_report: bool,
    /// With `coverage`: fail below this figure (%) as well as below the recorded one.
    min_coverage: Option<f64>,
}

impl Options {
    fn backend(&self) -> Backend {
        if self.postgres {
            Backend::Postgres
        } else if self.mysql {
            Backend::Mysql
        } else {
            Backend::Sqlite
        }
    }
}

/// The options, or `None` for `--help`.
fn parse_options(args: &[String]) -> Result<Option<Options>, String> {
    let mut options = Options {
        requests: 1000,
        seed: 1,
        mistakes: requests::DEFAULT_MISTAKES_PER_MILLE,
        lenient: false,
        postgres: false,
        mysql: false,
        json: None,
        min_agreement: None,
        emulator_bin: None,
        coverage: false,
        coverage_report: false,
        min_coverage: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        let number = |name: &str, v: String| -> Result<u64, String> {
            v.parse()
                .map_err(|_| format!("{name}: {v:?} is not a number\n{USAGE}"))
        };
        match arg.as_str() {
            "--requests" => options.requests = number(arg, value(arg)?)? as usize,
            "--seed" => options.seed = number(arg, value(arg)?)?,
            "--mistakes" => options.mistakes = number(arg, value(arg)?)?,
            "--lenient" => options.lenient = true,
            "--postgres" => options.postgres = true,
            "--mysql" => options.mysql = true,
            "--json" => options.json = Some(PathBuf::from(value(arg)?)),
            // Absolute: the emulator runs in the run's directory, where a relative path (the
            // documented `target/debug/svc-emulator`) names nothing.
            "--emulator-bin" => {
                let path = PathBuf::from(value(arg)?);
                let path = std::path::absolute(&path)
                    .map_err(|e| format!("--emulator-bin {}: {e}", path.display()))?;
                options.emulator_bin = Some(path);
            }
            "--min-agreement" => {
                let v = value(arg)?;
                let pct = v
                    .parse::<f64>()
                    .map_err(|_| format!("--min-agreement: {v:?} is not a percentage\n{USAGE}"))?;
                options.min_agreement = Some(pct);
            }
            "--coverage" => options.coverage = true,
            "--coverage-report" => options.coverage_report = true,
            "--min-coverage" => {
                let v = value(arg)?;
                let pct = v
                    .parse::<f64>()
                    .map_err(|_| format!("--min-coverage: {v:?} is not a percentage\n{USAGE}"))?;
                options.min_coverage = Some(pct);
            }
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(Some(options))
}

/// A server process, killed when dropped (also when the harness fails half-way).
#[derive(Debug)]
pub struct Server {
    name: &'static str,
    child: Child,
    log: PathBuf,
    /// Stopped with `SIGTERM` (waiting for it to exit) rather than killed: an engine under
    /// coverage.py saves its data then.
    stop_with_sigterm: bool,
}

impl Server {
    fn new(name: &'static str, child: Child, log: PathBuf) -> Server {
        Server {
            name,
            child,
            log,
            stop_with_sigterm: false,
        }
    }

    /// Sends `SIGTERM` and waits up to a minute for the process to exit (coverage.py writes
    /// its data file, which takes a few seconds on a loaded machine).
    fn terminate(&mut self) {
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        if !sent {
            return;
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            if self.exited().is_some() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        eprintln!(
            "fidelity: the {} did not stop in 60 s after SIGTERM; killing it",
            self.name
        );
    }

    /// The process id (for its memory figures in `/proc`).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The exit status, when the process has exited.
    fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The last lines of its log.
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(30)..].join("\n");
        format!("--- {} ({}) ---\n{tail}", self.name, self.log.display())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.stop_with_sigterm && self.exited().is_none() {
            self.terminate();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One request's outcome.
#[derive(Debug)]
struct Outcome {
    request: Request,
    emulator_target: String,
    engine: Result<Response, String>,
    emulator: Result<Response, String>,
    differences: Vec<Difference>,
    /// Whether the tables were copied from the engine's database after this request.
    resynced: bool,
}

/// Whether a write left the two databases apart: one side wrote and the other refused, the
/// engine failed (a `5xx` may come after its database wrote: a create into an `INT PRIMARY
/// KEY` table without the key stores the row, then fails to read it back), or both created
/// but under different keys. The harness then copies the tables from the engine's
/// database into the emulator's, so that later reads compare like with like (the difference of
/// the write itself is still counted).
fn needs_resync(
    request: &Request,
    engine: &Result<Response, String>,
    emulator: &Result<Response, String>,
) -> bool {
    use requests::Op;
    if matches!(
        request.op,
        Op::List | Op::Aggregate | Op::Group | Op::Retrieve
    ) {
        return false;
    }
    let ok =
        |r: &Result<Response, String>| r.as_ref().is_ok_and(|r| (200..300).contains(&r.status));
    let failed = |r: &Result<Response, String>| r.as_ref().map_or(true, |r| r.status >= 500);
    if ok(engine) != ok(emulator) || failed(engine) {
        return true;
    }
    let key = |r: &Result<Response, String>| {
        r.as_ref()
            .ok()
            .and_then(|r| serde_json::from_slice::<Value>(&r.body).ok())
            .map(|body| body[request.table.pk()].clone())
    };
    request.op == Op::Create && ok(engine) && key(engine) != key(emulator)
}

/// The databases of a run: two SQLite files, or two PostgreSQL databases of one cluster.
#[derive(Debug)]
enum Store {
    Sqlite {
        engine_db: PathBuf,
        emulator_db: PathBuf,
        /// The extra tables in the shapes of real SQLite files (`shapes.rs`).
        shapes: shapes::Shapes,
    },
    Postgres(postgres::Databases),
    Mysql(mysql::Databases),
}

impl Store {
    /// Writes the databases for `seed` into `dir` (SQLite) or a new cluster (PostgreSQL).
    fn create(backend: Backend, dir: &Path, seed: u64) -> Result<Store, String> {
        match backend {
            Backend::Sqlite => {
                let dataset = dir.join("dataset.sqlite3");
                dataset::write(dir, seed, &dataset)?;
                let shapes = shapes::Shapes::new(seed);
                shapes.write(dir, &dataset)?;
                let engine_db = dir.join("engine.sqlite3");
                let emulator_db = dir.join("emulator.sqlite3");
                for copy in [&engine_db, &emulator_db] {
                    std::fs::copy(&dataset, copy)
                        .map_err(|e| format!("copying the database: {e}"))?;
                }
                Ok(Store::Sqlite {
                    engine_db,
                    emulator_db,
                    shapes,
                })
            }
            Backend::Postgres => postgres::Databases::create(dir, seed).map(Store::Postgres),
            Backend::Mysql => mysql::Databases::create(dir, seed).map(Store::Mysql),
        }
    }

    /// The engine's database options.
    fn engine_args(&self) -> Result<Vec<String>, String> {
        match self {
            Store::Sqlite { engine_db, .. } => Ok(engine::sqlite_args(engine_db)),
            Store::Postgres(databases) => databases.engine_args(),
            Store::Mysql(databases) => databases.engine_args(),
        }
    }

    /// The emulator resource's `database`: a path or a URL.
    fn emulator_database(&self) -> String {
        match self {
            Store::Sqlite { emulator_db, .. } => emulator_db.display().to_string(),
            Store::Postgres(databases) => databases.emulator_url(),
            Store::Mysql(databases) => databases.emulator_url(),
        }
    }

    /// Copies the engine's tables over the emulator's (scripts kept in `dir`): every table, or
    /// `only` these (tables no foreign key refers to).
    fn copy_tables(&self, dir: &Path, only: Option<&[&str]>) -> Result<(), String> {
        match self {
            Store::Sqlite {
                engine_db,
                emulator_db,
                shapes,
            } => match only {
                Some(names) => shapes::copy_named(dir, engine_db, emulator_db, names),
                None => {
                    dataset::copy_tables(dir, engine_db, emulator_db)?;
                    shapes.copy_tables(dir, engine_db, emulator_db)
                }
            },
            Store::Postgres(databases) => databases.copy_tables(only),
            Store::Mysql(databases) => databases.copy_tables(only),
        }
    }
}

/// The database both servers read, as the report names it.
fn database_name(options: &Options) -> &'static str {
    match options.backend() {
        Backend::Sqlite => "SQLite",
        Backend::Postgres => "PostgreSQL",
        Backend::Mysql => "MariaDB",
    }
}

/// Runs the harness; false when it failed or the agreement is below `--min-agreement`.
pub(crate) fn fidelity(args: &[String], root: &Path) -> bool {
    let options = match parse_options(args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            eprintln!("{USAGE}");
            return true;
        }
        Err(e) => {
            eprintln!("fidelity: {e}");
            return false;
        }
    };
    if options.coverage_report {
        // The last `--coverage` runs' data again (after a change to the exclusions or the
        // modules, say), without running anything.
        let cache = root.join("target").join("fidelity");
        let python = cache.join("venv").join("bin").join("python");
        return coverage_report(&python, &cache.join("coverage"), &options, root).unwrap_or_else(
            |e| {
                eprintln!("fidelity: {e}");
                false
            },
        );
    }
    if options.coverage {
        return match coverage_runs(&options, root) {
            Ok(ok) => ok,
            Err(e) => {
                eprintln!("fidelity: {e}");
                false
            }
        };
    }
    match run(&options, root) {
        Ok(agreement) => match options.min_agreement {
            Some(min) if agreement < min => {
                eprintln!("fidelity: agreement {agreement:.1}% is below --min-agreement {min}%");
                false
            }
            _ => true,
        },
        Err(e) => {
            eprintln!("fidelity: {e}");
            false
        }
    }
}

/// `--coverage`: every differential run of the project with the engine under coverage.py
/// (the fidelity runs on SQLite, PostgreSQL and MariaDB, strict and `--lenient --mistakes
/// 100`, then `cargo xtask verify`'s checks), combined; prints the branches of the engine's
/// records request path reached, each one not reached with its reason, and fails when the
/// figure is below the recorded one ([`coverage::RECORDED_PER_MILLE`]) or `--min-coverage`.
fn coverage_runs(options: &Options, root: &Path) -> Result<bool, String> {
    let cache = root.join("target").join("fidelity");
    let data = cache.join("coverage");
    coverage::enable(&data)?;
    let (python, _) = engine::install(&cache, true, true)?;
    coverage::install(&python)?;
    let binary = match &options.emulator_bin {
        Some(path) => path.clone(),
        None => emulator::build(root, false)?,
    };
    for backend in [Backend::Sqlite, Backend::Postgres, Backend::Mysql] {
        for lenient in [false, true] {
            let run_options = Options {
                postgres: backend == Backend::Postgres,
                mysql: backend == Backend::Mysql,
                lenient,
                mistakes: if lenient { 100 } else { options.mistakes },
                emulator_bin: Some(binary.clone()),
                json: None,
                min_agreement: None,
                coverage: false,
                ..options.clone()
            };
            run(&run_options, root)?;
        }
    }
    if !verify::verify(&[], root) {
        return Err("`cargo xtask verify` under coverage failed".to_owned());
    }
    coverage_report(&python, &data, options, root)
}

/// Combines the runs' coverage data in `data` and prints the report; false below the
/// recorded figure or `--min-coverage`.
fn coverage_report(
    python: &Path,
    data: &Path,
    options: &Options,
    root: &Path,
) -> Result<bool, String> {
    let (json, raw_json) = coverage::combine(python, data)?;
    let report = coverage::Report::read(&json)?;
    let (raw_covered, raw_branches) = coverage::Report::read(&raw_json)?.totals();
    println!(
        "every branch of these modules, none left out: {raw_covered} of {raw_branches} reached"
    );
    let docs = std::fs::read_to_string(root.join("docs").join("fidelity.md"))
        .map_err(|e| format!("reading docs/fidelity.md: {e}"))?;
    print!("{}", report.render(&coverage::reasons(&docs)));
    let figure = report.per_mille();
    let recorded = coverage::RECORDED_PER_MILLE;
    if figure < recorded {
        eprintln!(
            "fidelity: the engine's branches reached fell to {}.{}%, below the recorded {}.{}% \
             (xtask/src/fidelity/coverage.rs): a request class is no longer sent",
            figure / 10,
            figure % 10,
            recorded / 10,
            recorded % 10
        );
        return Ok(false);
    }
    if let Some(min) = options.min_coverage
        && f64::from(figure) / 10.0 < min
    {
        eprintln!("fidelity: the engine's branches reached are below --min-coverage {min}%");
        return Ok(false);
    }
    Ok(true)
}

/// Sets everything up, sends the requests, prints the report; returns the agreement in %.
fn run(options: &Options, root: &Path) -> Result<f64, String> {
    let cache = root.join("target").join("fidelity");
    let dir = cache.join("run");
    let _ = std::fs::remove_dir_all(&dir);
    let engine_dir = dir.join("engine");
    std::fs::create_dir_all(&engine_dir)
        .map_err(|e| format!("creating {}: {e}", engine_dir.display()))?;

    let backend = options.backend();
    let (python, launcher) = engine::install(
        &cache,
        backend == Backend::Postgres,
        backend == Backend::Mysql,
    )?;
    let binary = match &options.emulator_bin {
        Some(path) => path.clone(),
        None => emulator::build(root, false)?,
    };
    // Declared before the servers, so dropped after them (the cluster stops last).
    let store = Store::create(backend, &dir, options.seed)?;

    let (mut engine_server, engine_addr) = engine::start(
        &python,
        &launcher,
        &engine_dir,
        &store.engine_args()?,
        ENGINE_KEY,
    )?;
    let mut emu = emulator::start(&binary, &dir, &store.emulator_database(), options.lenient)?;
    eprintln!(
        "fidelity: engine on {engine_addr}, emulator on {}{}, over {}; {} requests (seed {}, \
         {} mistakes per mille)",
        emu.addr,
        if options.lenient { " (--lenient)" } else { "" },
        database_name(options),
        options.requests,
        options.seed,
        options.mistakes
    );

    let engine_auth = format!("Bearer {ENGINE_KEY}");
    let mut outcomes = Vec::with_capacity(options.requests);
    let requests = match &store {
        Store::Sqlite { shapes, .. } => {
            shapes.generate(options.seed, options.requests, options.mistakes)
        }
        Store::Postgres(_) | Store::Mysql(_) => {
            requests::generate(options.seed, options.requests, options.mistakes, backend)
        }
    };
    let mut requests = requests;
    wire::vary(options.seed, &mut requests);
    for (i, request) in requests.into_iter().enumerate() {
        let body = request.body_bytes();
        let body = body.as_ref().map(|(t, b)| (t.as_str(), b.as_slice()));
        let method = request.method();
        let headers = &request.wire.headers;
        let engine = http::send_with(
            engine_addr,
            method,
            &request.engine_target(),
            Some(&engine_auth),
            headers,
            body,
        );
        let emulator_target = request.emulator_target(&emu.prefix);
        let emulator = http::send_with(
            emu.addr,
            method,
            &emulator_target,
            Some(&emu.authorization),
            headers,
            body,
        );
        for server in [&mut engine_server, &mut emu.server] {
            if let Some(status) = server.exited() {
                return Err(format!(
                    "the {} exited ({status}) at request {i}:\n{}",
                    server.name,
                    server.log_tail()
                ));
            }
        }
        let differences = match (&engine, &emulator) {
            (Ok(e), Ok(m)) => compare::compare(&request, e, m),
            (e, m) => {
                let side = if e.is_err() { "engine" } else { "emulator" };
                let error = e.as_ref().err().or(m.as_ref().err()).cloned();
                vec![Difference {
                    class: format!("{}: transport error ({side})", request.op.name()),
                    detail: error.unwrap_or_default(),
                }]
            }
        };
        let resynced = needs_resync(&request, &engine, &emulator);
        if resynced {
            // A write to the tables whose key stores a value as another changes only them: the
            // others are left as they are (a copy rewrites a table, which changes the order a
            // scan reads its rows in, and with it a float sum's last digits on PostgreSQL).
            let only = rounded_keys::TABLE_NAMES
                .contains(&request.table.name)
                .then_some(rounded_keys::TABLE_NAMES);
            store.copy_tables(&dir, only)?;
        }
        if (i + 1) % 250 == 0 {
            eprintln!("fidelity: {} requests sent", i + 1);
        }
        outcomes.push(Outcome {
            request,
            emulator_target,
            engine,
            emulator,
            differences,
            resynced,
        });
    }
    drop(emu);
    drop(engine_server);
    drop(store);

    let report = Report::new(&outcomes);
    print!("{}", report.render(&outcomes, options));
    if let Some(path) = &options.json {
        let json = report.json(&outcomes, options);
        let text = serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
        eprintln!("fidelity: full report in {}", path.display());
    }
    Ok(report.agreement())
}

/// The counts: agreement overall and per kind, and the requests of each class.
#[derive(Debug)]
struct Report {
    agreed: usize,
    total: usize,
    /// Writes after which the tables were copied from the engine's database to the emulator's.
    resyncs: usize,
    /// Per kind of request: (agreed, total).
    kinds: BTreeMap<&'static str, (usize, usize)>,
    /// Per class: the indices of the requests that show it.
    classes: BTreeMap<String, Vec<usize>>,
}

impl Report {
    fn new(outcomes: &[Outcome]) -> Report {
        let mut report = Report {
            agreed: 0,
            total: outcomes.len(),
            resyncs: outcomes.iter().filter(|o| o.resynced).count(),
            kinds: BTreeMap::new(),
            classes: BTreeMap::new(),
        };
        for (i, outcome) in outcomes.iter().enumerate() {
            let agreed = outcome.differences.is_empty();
            let kind = report.kinds.entry(outcome.request.op.name()).or_default();
            kind.1 += 1;
            if agreed {
                kind.0 += 1;
                report.agreed += 1;
            }
            for d in &outcome.differences {
                report.classes.entry(d.class.clone()).or_default().push(i);
            }
        }
        report
    }

    fn agreement(&self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            self.agreed as f64 * 100.0 / self.total as f64
        }
    }

    /// The classes, most frequent first.
    fn sorted_classes(&self) -> Vec<(&String, &Vec<usize>)> {
        let mut classes: Vec<_> = self.classes.iter().collect();
        classes.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(b.0)));
        classes
    }

    fn render(&self, outcomes: &[Outcome], options: &Options) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\nfidelity: jet-bridge {} vs svc-emulator{}, over {}, seed {}, {} mistakes per mille",
            engine::VERSION,
            if options.lenient { " --lenient" } else { "" },
            database_name(options),
            options.seed,
            options.mistakes
        );
        let _ = writeln!(
            out,
            "requests: {}, agreed: {} ({:.1}%)",
            self.total,
            self.agreed,
            self.agreement()
        );
        let kinds: Vec<String> = self
            .kinds
            .iter()
            .map(|(kind, (agreed, total))| format!("{kind} {agreed}/{total}"))
            .collect();
        let _ = writeln!(out, "by kind: {}", kinds.join(", "));
        let _ = writeln!(
            out,
            "resyncs: {} (writes answered differently, after which the tables were copied \
             from the engine's database to the emulator's)",
            self.resyncs
        );
        if self.classes.is_empty() {
            let _ = writeln!(out, "no difference");
            return out;
        }
        let _ = writeln!(
            out,
            "\ndifferences by class ({} classes; a request may show several):",
            self.classes.len()
        );
        for (class, indices) in self.sorted_classes() {
            let _ = writeln!(out, "\n{:>5}  {class}", indices.len());
            for &i in indices.iter().take(EXAMPLES) {
                let o = &outcomes[i];
                let detail = o
                    .differences
                    .iter()
                    .find(|d| d.class == *class)
                    .map_or("", |d| d.detail.as_str());
                let body = o
                    .request
                    .body_bytes()
                    .map(|(content_type, bytes)| {
                        let text = String::from_utf8_lossy(&bytes);
                        let kind = if content_type == "application/json" {
                            String::new()
                        } else {
                            format!(" [{content_type}]")
                        };
                        format!("{kind} {}", compare::truncate(&text, 120))
                    })
                    .unwrap_or_default();
                let headers: String = o
                    .request
                    .wire
                    .headers
                    .iter()
                    .map(|(k, v)| format!(" [{k}: {v}]"))
                    .collect();
                let _ = writeln!(
                    out,
                    "       #{i} {} {}{headers}{body}\n         engine {}, emulator {}: {}",
                    o.request.method(),
                    o.request.engine_target(),
                    status(&o.engine),
                    status(&o.emulator),
                    compare::truncate(detail, 300)
                );
            }
        }
        out
    }

    fn json(&self, outcomes: &[Outcome], options: &Options) -> Value {
        let answer = |r: &Result<Response, String>| match r {
            Ok(r) => json!({
                "status": r.status,
                "content_type": r.content_type,
                "body": serde_json::from_slice::<Value>(&r.body).unwrap_or_else(|_| json!(r.text())),
            }),
            Err(e) => json!({"error": e}),
        };
        json!({
            "engine": format!("jet-bridge {}", engine::VERSION),
            "seed": options.seed,
            "mistakes_per_mille": options.mistakes,
            "lenient": options.lenient,
            "database": database_name(options),
            "requests": self.total,
            "agreed": self.agreed,
            "agreement_percent": self.agreement(),
            "resyncs": self.resyncs,
            "by_kind": self.kinds.iter().map(|(k, (a, t))| (k.to_string(), json!({"agreed": a, "total": t}))).collect::<serde_json::Map<_, _>>(),
            "classes": self.sorted_classes().iter().map(|(class, indices)| json!({
                "class": class, "count": indices.len(), "requests": indices,
            })).collect::<Vec<_>>(),
            "results": outcomes.iter().enumerate().map(|(i, o)| json!({
                "index": i,
                "kind": o.request.op.name(),
                "method": o.request.method(),
                "headers": o.request.wire.headers,
                "content_type": o.request.body_bytes().map(|(t, _)| t),
                "engine_target": o.request.engine_target(),
                "emulator_target": o.emulator_target,
                "body": o.request.body,
                "engine": answer(&o.engine),
                "emulator": answer(&o.emulator),
                "resynced": o.resynced,
                "differences": o.differences.iter().map(|d| json!({"class": d.class, "detail": d.detail})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }
}

fn status(r: &Result<Response, String>) -> String {
    r.as_ref()
        .map_or_else(|_| "error".to_owned(), |r| r.status.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn options_parse() {
        let o = parse_options(&args(&[])).unwrap().unwrap();
        assert_eq!((o.requests, o.seed, o.lenient), (1000, 1, false));
        assert_eq!(o.backend(), Backend::Sqlite);
        let o = parse_options(&args(&["--postgres", "--seed", "4"]))
            .unwrap()
            .unwrap();
        assert_eq!((o.seed, o.backend()), (4, Backend::Postgres));
        let o = parse_options(&args(&[
            "--requests",
            "50",
            "--seed",
            "9",
            "--lenient",
            "--json",
            "r.json",
            "--min-agreement",
            "90.5",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((o.requests, o.seed, o.lenient), (50, 9, true));
        assert_eq!(o.json, Some(PathBuf::from("r.json")));
        assert_eq!(o.min_agreement, Some(90.5));
        assert!(parse_options(&args(&["--help"])).unwrap().is_none());
        assert!(parse_options(&args(&["--requests"])).is_err());
        assert!(parse_options(&args(&["--nope"])).is_err());
    }
}
