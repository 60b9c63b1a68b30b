//! 11. The emulator over MariaDB at scale: tables of 10k, 100k and 1M rows (the 12 fields of section
//!     5 in MySQL's types, indexes on `status` and `quantity`) in a throwaway server (crate
//!     `maria-server`: `mariadb-install-db` in a temporary directory, so that no other client's
//!     writes move InnoDB's transaction counter during the walks), one request at a time from a
//!     bare hyper-util client.
//!
//! - Page 1 (25 records), unfiltered and filtered by equality on the indexed integer column
//!   (`quantity=5`), at 1M rows against 10k: alternating rounds, the median of their ratios.
//! - An export: a walk through every page in order (1000 records a page, as `svc records
//!   export` asks), 1M records against 100k; and a late page of the walk against page 1.
//! - A deep page reached directly (page 1000 of 1000 at 1M rows): `OFFSET` over the keys.
//!
//! The server and its tables are made at each run and removed at its end. Without MariaDB's
//! programs the rows say so.

use std::time::{Duration, Instant};

use http::Uri;
use tokio::runtime::Runtime;

use crate::emulator::LoadClient;
use crate::harness::{BenchEmulator, Settings, client_runtime, growth, growth_row};
use crate::report::{Row, Target, median, seconds};

const SMALL: (&str, usize) = ("my10k", 10_000);
const MEDIUM: (&str, usize) = ("my100k", 100_000);
const LARGE: (&str, usize) = ("my1m", 1_000_000);
/// Records per page of a walk.
const WALK_PAGE: u64 = 1000;

/// The table of section 5's generated items, in MySQL's types, with `n` rows.
pub fn seed_sql(n: usize) -> String {
    format!(
        r#"
CREATE TABLE items (
    id INT PRIMARY KEY,
    name VARCHAR(64) NOT NULL,
    email VARCHAR(128) NOT NULL,
    city VARCHAR(32),
    vip TINYINT(1) NOT NULL,
    score INT,
    total DOUBLE NOT NULL,
    quantity INT NOT NULL,
    status VARCHAR(16) NOT NULL,
    ordered_on DATE NOT NULL,
    created_at DATETIME NOT NULL,
    note TEXT
) ENGINE=InnoDB;
INSERT INTO items
SELECT seq,
    CONCAT('Customer ', seq),
    CONCAT('customer', seq, '@example.com'),
    CASE WHEN seq % 10 = 0 THEN NULL
         ELSE ELT(1 + seq % 6, 'Paris', 'Berlin', 'Kraków', 'São Paulo', 'Zürich', 'Tokyo') END,
    seq % 7 = 0,
    CASE WHEN seq % 9 = 0 THEN NULL ELSE (seq * 37) % 101 END,
    ROUND(((seq * 48271) % 100000) / 100.0 + 1, 2),
    1 + (seq * 13) % 9,
    ELT(1 + (seq * 40507) % 6, 'new', 'paid', 'shipped', 'delivered', 'cancelled', 'refunded'),
    DATE '2024-01-01' + INTERVAL (seq % 730) DAY,
    TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (seq * 631) SECOND,
    CASE seq % 4 WHEN 0 THEN NULL WHEN 1 THEN '' ELSE CONCAT('Note #', seq) END
FROM seq_1_to_{n};
CREATE INDEX items_status ON items (status);
CREATE INDEX items_quantity ON items (quantity);
ANALYZE TABLE items;
"#
    )
}

struct MyScale {
    // Dropped in this order: the emulator before the server it reads.
    emulator: BenchEmulator,
    rt: Runtime,
    clients: Vec<(String, LoadClient)>,
    _databases: Vec<maria_server::Database<'static>>,
}

impl MyScale {
    fn start() -> Result<Self, String> {
        // The server lives as long as the process: its watchdog removes it at exit.
        let server: &'static maria_server::Server = Box::leak(Box::new(
            maria_server::Server::start().map_err(|e| e.to_string())?,
        ));
        let started = Instant::now();
        let mut databases = Vec::new();
        for (_, rows) in [SMALL, MEDIUM, LARGE] {
            let db = server.database("svc_bench").map_err(|e| e.to_string())?;
            db.sql(&seed_sql(rows)).map_err(|e| e.to_string())?;
            databases.push(db);
        }
        eprintln!(
            "   made the MariaDB tables in {}",
            seconds(started.elapsed().as_secs_f64())
        );
        let urls: Vec<String> = databases.iter().map(|d| d.url()).collect();
        let specs: Vec<(&str, &str)> = [SMALL.0, MEDIUM.0, LARGE.0]
            .into_iter()
            .zip(urls.iter().map(String::as_str))
            .collect();
        let emulator = BenchEmulator::start_databases(&specs);
        let clients = [SMALL, MEDIUM, LARGE]
            .into_iter()
            .map(|(name, _)| (name.to_owned(), LoadClient::new(&emulator.token(name))))
            .collect();
        Ok(Self {
            emulator,
            rt: client_runtime(),
            clients,
            _databases: databases,
        })
    }

    fn client(&self, resource: &str) -> &LoadClient {
        &self
            .clients
            .iter()
            .find(|(n, _)| n == resource)
            .expect("a resource of the bench")
            .1
    }

    fn url(&self, resource: &str, query: &str) -> Uri {
        format!("{}?{query}", self.emulator.items_url(resource))
            .parse()
            .expect("a valid URI")
    }

    fn time(&self, resource: &str, uri: &Uri) -> Duration {
        let client = self.client(resource);
        let started = Instant::now();
        self.rt.block_on(client.get(uri.clone()));
        started.elapsed()
    }

    fn median_time(&self, resource: &str, uri: &Uri, n: usize) -> f64 {
        let times: Vec<f64> = (0..n)
            .map(|_| self.time(resource, uri).as_secs_f64())
            .collect();
        median(&times)
    }

    /// `query` at 1M rows against 10k: the medians of each, and of the rounds' ratios.
    fn growth(&self, query: &str, settings: &Settings) -> (f64, f64, f64) {
        let (small, large) = (self.url(SMALL.0, query), self.url(LARGE.0, query));
        let per_round = 10;
        growth(
            settings.runs,
            || self.median_time(SMALL.0, &small, per_round),
            || self.median_time(LARGE.0, &large, per_round),
        )
    }

    /// Walks every page of `resource` in order: the time of each.
    fn walk(&self, resource: &str, rows: usize) -> Vec<f64> {
        let pages = (rows as u64).div_ceil(WALK_PAGE);
        (1..=pages)
            .map(|page| {
                let query = format!("_per_page={WALK_PAGE}&page={page}");
                self.time(resource, &self.url(resource, &query))
                    .as_secs_f64()
            })
            .collect()
    }
}

const WHAT: [&str; 5] = [
    "11. MariaDB, page 1 of 25, unfiltered: 1M rows vs 10k",
    "11. MariaDB, page 1 of 25, filtered on an indexed integer column: 1M rows vs 10k",
    "11. MariaDB, walk of 1000-record pages in order at 1M rows: a late page vs page 1",
    "11. MariaDB, export by 1000-record pages: 1M records vs 100k",
    "11. MariaDB, page 1000 of 1000 at 1M rows reached directly (OFFSET over the keys)",
];

pub fn run(settings: &Settings) -> Vec<Row> {
    eprintln!(
        "11. emulator over MariaDB at scale: tables of {}, {} and {} rows",
        SMALL.1, MEDIUM.1, LARGE.1
    );
    let scale = match MyScale::start() {
        Ok(scale) => scale,
        Err(e) => {
            eprintln!("   MariaDB: not measured: {e}");
            return WHAT
                .iter()
                .map(|what| Row {
                    benchmark: (*what).to_owned(),
                    figure: format!("not measured: {e}"),
                    baseline: "-".to_owned(),
                    ratio: f64::NAN,
                    target: Target::None,
                })
                .collect();
        }
    };
    let unfiltered = scale.growth("_per_page=25", settings);
    let filtered = scale.growth("_per_page=25&quantity=5", settings);
    eprintln!(
        "   page 1: unfiltered 10k {} / 1M {}; filtered 10k {} / 1M {}",
        seconds(unfiltered.0),
        seconds(unfiltered.1),
        seconds(filtered.0),
        seconds(filtered.1)
    );
    let mut rows = vec![
        growth_row(WHAT[0], unfiltered, Target::AtMost(2.0)),
        growth_row(WHAT[1], filtered, Target::AtMost(4.0)),
    ];
    // Walks: one of each (a second when the run is not quick), alternating.
    let walks = settings.runs.clamp(1, 2);
    let (mut medium, mut large, mut first, mut late) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..walks {
        let m = scale.walk(MEDIUM.0, MEDIUM.1);
        medium.push(m.iter().sum::<f64>());
        let l = scale.walk(LARGE.0, LARGE.1);
        large.push(l.iter().sum::<f64>());
        first.push(l[0]);
        late.push(median(&l[l.len() - l.len() / 10..]));
    }
    let (first, late) = (median(&first), median(&late));
    let (medium, large) = (median(&medium), median(&large));
    eprintln!(
        "   walk of {WALK_PAGE}-record pages: 100k in {}, 1M in {}; page 1 {}, pages 901-1000 {}",
        seconds(medium),
        seconds(large),
        seconds(first),
        seconds(late)
    );
    rows.extend([
        Row {
            benchmark: WHAT[2].to_owned(),
            figure: format!("pages 901-1000: {}", seconds(late)),
            baseline: format!("page 1: {}", seconds(first)),
            ratio: late / first,
            target: Target::AtMost(2.0),
        },
        Row {
            benchmark: WHAT[3].to_owned(),
            figure: format!("1M: {}", seconds(large)),
            baseline: format!("100k: {}", seconds(medium)),
            ratio: large / medium,
            target: Target::AtMost(12.0),
        },
    ]);
    // A deep page with no anchor to start from: a filter no walk used selects every row.
    let deep_uri = scale.url(
        LARGE.0,
        &format!("_per_page={WALK_PAGE}&page=1000&quantity__gte=0"),
    );
    let first_uri = scale.url(LARGE.0, &format!("_per_page={WALK_PAGE}&quantity__gte=0"));
    let deep = scale.median_time(LARGE.0, &deep_uri, walks * 2 + 1);
    let top = scale.median_time(LARGE.0, &first_uri, walks * 2 + 1);
    rows.push(Row {
        benchmark: WHAT[4].to_owned(),
        figure: format!("page 1000: {}", seconds(deep)),
        baseline: format!("page 1: {}", seconds(top)),
        ratio: deep / top,
        target: Target::None,
    });
    rows
}
