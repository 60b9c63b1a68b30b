//! What the benchmarks share: run settings, runtimes, a load generator, in-process servers that
//! answer fixed bytes, the emulator with generated records, and the record type.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Response};
use http_body_util::Full;
use serde::{Deserialize, Serialize};
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};
use tokio::net::TcpListener;
use tokio::runtime::Runtime;

use crate::report::{Row, Target};

/// How long and how often to measure.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Measured runs per figure; the figure is their median. One warm-up run comes first.
    pub runs: usize,
    /// How long one throughput run lasts.
    pub load_time: Duration,
    /// Runs of the short, single-shot measurements (decoding).
    pub decode_runs: usize,
    /// Profile mode: how many requests a profile loop makes (`--requests N`), instead of
    /// running for `load_time`.
    pub profile_requests: Option<u64>,
}

impl Settings {
    pub fn full() -> Self {
        Self {
            runs: 9,
            load_time: Duration::from_millis(500),
            decode_runs: 15,
            profile_requests: None,
        }
    }

    pub fn quick() -> Self {
        Self {
            runs: 5,
            load_time: Duration::from_millis(200),
            decode_runs: 5,
            profile_requests: None,
        }
    }
}

/// The runtime the clients run on: one thread (the bench's main thread), so a client's cost is
/// not spread over threads that also serve.
pub fn client_runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime")
}

/// A runtime for a server, with its own worker threads.
pub fn server_runtime(name: &str, workers: usize) -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name(name)
        .enable_all()
        .build()
        .expect("a multi-thread runtime")
}

/// What a load run did.
#[derive(Debug, Clone, Copy)]
pub struct Done {
    /// Requests completed.
    pub requests: u64,
    /// From the start to the last completion.
    pub elapsed: Duration,
}

impl Done {
    /// Requests per second.
    pub fn per_second(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }
}

/// Runs `request` with `concurrency` in flight for `duration`. Each request must succeed: a
/// failing benchmark is a broken benchmark.
pub fn load<F, Fut>(rt: &Runtime, concurrency: usize, duration: Duration, request: F) -> Done
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    workers(rt, concurrency, request, move |start| {
        start.elapsed() < duration
    })
}

/// Runs `request` exactly `total` times with `concurrency` in flight: for profiles, whose
/// instruction counts must not depend on how fast the machine happens to be.
pub fn load_count<F, Fut>(rt: &Runtime, concurrency: usize, total: u64, request: F) -> Done
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    let started = Arc::new(AtomicU64::new(0));
    workers(rt, concurrency, request, move |_| {
        started.fetch_add(1, Ordering::Relaxed) < total
    })
}

/// `concurrency` workers, each making one request after another while `more(start)` says so.
fn workers<F, Fut, M>(rt: &Runtime, concurrency: usize, request: F, more: M) -> Done
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
    M: Fn(Instant) -> bool + Clone + Send + 'static,
{
    rt.block_on(async move {
        let start = Instant::now();
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..concurrency {
            let request = request.clone();
            let more = more.clone();
            workers.spawn(async move {
                let mut done = 0u64;
                while more(start) {
                    request().await;
                    done += 1;
                }
                done
            });
        }
        let mut requests = 0u64;
        while let Some(done) = workers.join_next().await {
            requests += done.expect("a load worker panicked");
        }
        Done {
            requests,
            elapsed: start.elapsed(),
        }
    })
}

/// Marks the start of a profile's measured window, for callgrind: `svc-bench` zeroes its
/// counters on entering [`profile_window_start`] (`--zero-before`) and writes them out on
/// entering [`profile_window_end`] (`--dump-before`), so start-up, warm-up and shut-down are
/// not counted. Each passes its own value through `black_box`, so that the compiler can
/// neither drop them nor fold them into one.
#[inline(never)]
pub fn profile_window_start() {
    std::hint::black_box(1u64);
}

/// Marks the end of a profile's measured window (see [`profile_window_start`]).
#[inline(never)]
pub fn profile_window_end() {
    std::hint::black_box(2u64);
}

/// One profile loop: `requests` requests (after a warm-up of a tenth as many, at least 20)
/// between the window marks when a count is given, else requests for `settings.load_time`.
/// Prints what it did, in the form the instruction counter reads: `N requests`.
pub fn profile_loop<F, Fut>(
    rt: &Runtime,
    settings: &Settings,
    what: &str,
    concurrency: usize,
    request: F,
) -> Done
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let done = match settings.profile_requests {
        Some(total) => {
            load_count(rt, concurrency, (total / 10).max(20), request.clone());
            profile_window_start();
            let done = load_count(rt, concurrency, total, request);
            profile_window_end();
            done
        }
        None => load(rt, concurrency, settings.load_time, request),
    };
    eprintln!(
        "{what}, {concurrency} in flight: {} requests, {:.0} req/s",
        done.requests,
        done.per_second()
    );
    done
}

/// An in-process HTTP/1.1 server (hyper, one worker thread) that answers every request with the
/// same JSON bytes, from memory.
pub struct FixedServer {
    rt: Option<Runtime>,
    addr: SocketAddr,
}

impl std::fmt::Debug for FixedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixedServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl FixedServer {
    pub fn start(body: Bytes) -> Self {
        use hyper::server::conn::http1;
        use hyper_util::rt::TokioIo;

        let rt = server_runtime("fixed-server", 1);
        let listener = rt
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .expect("bind a loopback port");
        let addr = listener.local_addr().expect("a local address");
        rt.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let body = body.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |_request| {
                        let body = body.clone();
                        async move { Ok::<_, Infallible>(json_response(body)) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { rt: Some(rt), addr }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for FixedServer {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

fn json_response(body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// One generated record: 12 fields of the usual kinds (integers, text, nullable text and
/// integers, a boolean, a real, a date and a date-time), as the emulator answers them and as a
/// user would declare them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub id: i64,
    pub name: String,
    pub email: String,
    pub city: Option<String>,
    pub vip: bool,
    pub score: Option<i64>,
    /// The emulator sends REAL values as numeric strings ("83.89"), as the platform does.
    #[serde(with = "svc_api::model::number::f64_or_string")]
    pub total: f64,
    pub quantity: i64,
    pub status: String,
    pub ordered_on: String,
    pub created_at: String,
    pub note: Option<String>,
}

const CITIES: [&str; 6] = ["Paris", "Berlin", "Kraków", "São Paulo", "Zürich", "Tokyo"];
const STATUSES: [&str; 6] = [
    "new",
    "paid",
    "shipped",
    "delivered",
    "cancelled",
    "refunded",
];

/// `n` records of the shape [`seed_sql`] makes, built in Rust (for the decoding benchmark, which
/// needs no server).
pub fn items(n: usize) -> Vec<Item> {
    (1..=n as i64)
        .map(|n| Item {
            id: n,
            name: format!("Customer {n}"),
            email: format!("customer{n}@example.com"),
            city: (n % 10 != 0).then(|| CITIES[(n % 6) as usize].to_owned()),
            vip: n % 7 == 0,
            score: (n % 9 != 0).then_some((n * 37) % 101),
            total: (((n * 48271) % 100_000) as f64 / 100.0 + 1.0),
            quantity: 1 + (n * 13) % 9,
            status: STATUSES[((n * 40507) % 6) as usize].to_owned(),
            ordered_on: format!("2024-{:02}-{:02}", 1 + n % 12, 1 + n % 28),
            created_at: format!(
                "2024-{:02}-{:02}T{:02}:{:02}:{:02}",
                1 + n % 12,
                1 + n % 28,
                n % 24,
                n % 60,
                (n * 7) % 60
            ),
            note: match n % 4 {
                0 => None,
                1 => Some(String::new()),
                _ => Some(format!("Note #{n}")),
            },
        })
        .collect()
}

/// SQL that creates table `items` with `n` rows of the 12 fields of [`Item`], with a recursive
/// CTE (the style of the emulator's demo seed). `created_at` is stored as SQLAlchemy stores a
/// `DATETIME` on SQLite (`2024-01-01 00:10:31`, a space, not ISO's `T`): the engine, and the
/// emulator after it (`engine::types::parse_datetime`), refuse to read a `T` there, and every
/// list of the table would answer `400`.
pub fn seed_sql(n: usize) -> String {
    format!(
        r#"
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    city TEXT,
    vip BOOLEAN NOT NULL,
    score INTEGER,
    total REAL NOT NULL,
    quantity INTEGER NOT NULL,
    status TEXT NOT NULL,
    ordered_on DATE NOT NULL,
    created_at DATETIME NOT NULL,
    note TEXT
);
BEGIN;
WITH RECURSIVE seq(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < {n})
INSERT INTO items (id, name, email, city, vip, score, total, quantity, status, ordered_on, created_at, note)
SELECT n,
    'Customer ' || n,
    'customer' || n || '@example.com',
    CASE WHEN n % 10 = 0 THEN NULL
         ELSE json_extract('["Paris","Berlin","Kraków","São Paulo","Zürich","Tokyo"]', '$[' || (n % 6) || ']') END,
    n % 7 = 0,
    CASE WHEN n % 9 = 0 THEN NULL ELSE (n * 37) % 101 END,
    round(((n * 48271) % 100000) / 100.0 + 1, 2),
    1 + (n * 13) % 9,
    json_extract('["new","paid","shipped","delivered","cancelled","refunded"]', '$[' || ((n * 40507) % 6) || ']'),
    date('2024-01-01', '+' || (n % 730) || ' days'),
    strftime('%Y-%m-%d %H:%M:%S', '2024-01-01 00:00:00', '+' || (n * 631) || ' seconds'),
    CASE n % 4 WHEN 0 THEN NULL WHEN 1 THEN '' ELSE 'Note #' || n END
FROM seq;
COMMIT;
"#
    )
}

/// A page's growth with its table: `small` and `large` each time one round of the same request
/// (a median of several) on the small and the large table. After a round of each as warm-up,
/// `runs` rounds alternate; the medians of each, and of the rounds' ratios (large / small).
pub fn growth(
    runs: usize,
    mut small: impl FnMut() -> f64,
    mut large: impl FnMut() -> f64,
) -> (f64, f64, f64) {
    small();
    large();
    let (mut s, mut l, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let (a, b) = (small(), large());
        s.push(a);
        l.push(b);
        ratios.push(b / a);
    }
    (
        crate::report::median(&s),
        crate::report::median(&l),
        crate::report::median(&ratios),
    )
}

/// The row of a [`growth`] at 1M rows against 10k.
pub fn growth_row(what: &str, (small, large, ratio): (f64, f64, f64), target: Target) -> Row {
    Row {
        benchmark: what.to_owned(),
        figure: format!("1M: {}", crate::report::seconds(large)),
        baseline: format!("10k: {}", crate::report::seconds(small)),
        ratio,
        target,
    }
}

/// The project every benchmark talks to.
pub const PROJECT: &str = "bench";
/// Its API key.
pub const API_KEY: &str = "svc_key_bench_0123456789";

/// An emulator on its own runtime (two worker threads, as on a two-core machine), serving
/// project [`PROJECT`] with one in-memory resource per `(name, rows)`, each holding model
/// `items` with that many generated rows.
pub struct BenchEmulator {
    rt: Option<Runtime>,
    handle: Option<Emulator>,
}

impl std::fmt::Debug for BenchEmulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BenchEmulator")
            .field("api_base_url", &self.handle().api_base_url())
            .finish()
    }
}

impl BenchEmulator {
    /// The emulator with in-memory resources of `rows` generated items each.
    pub fn start(resources: &[(&str, usize)]) -> Self {
        let mut project = ProjectConfig::new(PROJECT).api_key(API_KEY);
        for (name, rows) in resources {
            project = project.resource(
                ResourceConfig::new(*name, format!("tok_{name}_0123456789"))
                    .seed_sql(seed_sql(*rows)),
            );
        }
        Self::with_project(project)
    }

    /// The emulator with file-backed resources: `(name, rows, file)`, each file seeded with
    /// `rows` generated items and an index on `status` when it has no table yet (a file made
    /// by an earlier run is used as it is).
    pub fn start_files(resources: &[(&str, usize, &std::path::Path)]) -> Self {
        let mut project = ProjectConfig::new(PROJECT).api_key(API_KEY);
        for (name, rows, file) in resources {
            let seed = format!(
                "{}\nCREATE INDEX items_status ON items (status);",
                seed_sql(*rows)
            );
            project = project.resource(
                ResourceConfig::new(*name, format!("tok_{name}_0123456789"))
                    .database(*file)
                    .seed_sql(seed),
            );
        }
        Self::with_project(project)
    }

    /// The emulator with resources on PostgreSQL databases: `(name, url)`, used as they are.
    pub fn start_databases(resources: &[(&str, &str)]) -> Self {
        let mut project = ProjectConfig::new(PROJECT).api_key(API_KEY);
        for (name, url) in resources {
            project = project.resource(
                ResourceConfig::new(*name, format!("tok_{name}_0123456789")).database(*url),
            );
        }
        Self::with_project(project)
    }

    pub fn with_project(project: ProjectConfig) -> Self {
        let config = EmulatorConfig::default().projects(ProjectsConfig::new(vec![project]));
        let rt = server_runtime("emulator", 2);
        let handle = rt
            .block_on(Emulator::start(config))
            .expect("the emulator starts");
        Self {
            rt: Some(rt),
            handle: Some(handle),
        }
    }

    pub fn handle(&self) -> &Emulator {
        self.handle.as_ref().expect("running")
    }

    /// The static token of a resource.
    pub fn token(&self, resource: &str) -> String {
        self.handle().resource_tokens()[resource].clone()
    }

    /// A client of this emulator over `transport`, with every resource's token.
    pub fn client(&self, transport: impl svc_api::transport::Transport) -> svc_api::Client {
        let handle = self.handle();
        let mut builder = svc_api::Client::builder()
            .project(PROJECT)
            .api_key(API_KEY)
            .api_base_url(handle.api_base_url())
            .app_base_url(handle.app_base_url())
            .transport(transport);
        for (name, token) in handle.resource_tokens() {
            builder = builder.resource_token(name, token.as_str());
        }
        builder.build().expect("a client")
    }

    /// `{api_base_url}/projects/bench/prod/{resource}/models/items`.
    pub fn items_url(&self, resource: &str) -> String {
        format!(
            "{}/projects/{PROJECT}/prod/{resource}/models/items",
            self.handle().api_base_url()
        )
    }
}

impl Drop for BenchEmulator {
    fn drop(&mut self) {
        if let (Some(rt), Some(handle)) = (self.rt.take(), self.handle.take()) {
            rt.block_on(handle.shutdown());
            rt.shutdown_background();
        }
    }
}
