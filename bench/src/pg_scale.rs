//! 7. The emulator over PostgreSQL at scale: tables of 10k, 100k and 1M rows (the 12 fields of
//!    section 5 in PostgreSQL's types, indexes on `status` and `quantity`) in a throwaway
//!    cluster (crate `pg-cluster`), one request at a time from a bare hyper-util client.
//!
//! - Page 1 (25 records), unfiltered and filtered by equality on the indexed integer column
//!   `quantity`: 1M rows against 10k.
//! - A filtered count (`quantity=5`, the count of page 2 of one record) at 1M rows, each right
//!   after a write (so it is counted, not remembered), against the same count by
//!   tokio-postgres with an integer comparison, prepared.
//! - An export: a walk through every page in order (1000 records a page, as `svc records
//!   export` asks), 1M records against 100k; and a late page of the walk against page 1.
//! - A deep page reached directly (page 1000 of 1000 at 1M rows): `OFFSET` over the keys.
//!
//! The cluster and its tables are made at each run (about a minute for 1M rows) and removed at
//! its end. Without PostgreSQL's programs the rows say so.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Uri};
use tokio::runtime::Runtime;

use crate::emulator::LoadClient;
use crate::harness::{BenchEmulator, Settings, client_runtime, growth, growth_row};
use crate::report::{Row, Target, median, seconds};

const SMALL: (&str, usize) = ("pg10k", 10_000);
const MEDIUM: (&str, usize) = ("pg100k", 100_000);
const LARGE: (&str, usize) = ("pg1m", 1_000_000);
/// Records per page of a walk.
const WALK_PAGE: u64 = 1000;

/// The table of section 5's generated items, in PostgreSQL's types, with `n` rows.
pub fn seed_sql(n: usize) -> String {
    format!(
        r#"
CREATE TABLE items (
    id integer PRIMARY KEY,
    name text NOT NULL,
    email text NOT NULL,
    city text,
    vip boolean NOT NULL,
    score integer,
    total double precision NOT NULL,
    quantity integer NOT NULL,
    status text NOT NULL,
    ordered_on date NOT NULL,
    created_at timestamp NOT NULL,
    note text
);
INSERT INTO items
SELECT n,
    'Customer ' || n,
    'customer' || n || '@example.com',
    CASE WHEN n % 10 = 0 THEN NULL
         ELSE (ARRAY['Paris','Berlin','Kraków','São Paulo','Zürich','Tokyo'])[1 + n % 6] END,
    n % 7 = 0,
    CASE WHEN n % 9 = 0 THEN NULL ELSE (n * 37) % 101 END,
    round((((n::bigint * 48271) % 100000) / 100.0 + 1)::numeric, 2)::double precision,
    1 + (n * 13) % 9,
    (ARRAY['new','paid','shipped','delivered','cancelled','refunded'])[1 + (n::bigint * 40507) % 6],
    date '2024-01-01' + (n % 730),
    timestamp '2024-01-01' + (n::bigint * 631) * interval '1 second',
    CASE n % 4 WHEN 0 THEN NULL WHEN 1 THEN '' ELSE 'Note #' || n END
FROM generate_series(1, {n}) n;
CREATE INDEX items_status ON items (status);
CREATE INDEX items_quantity ON items (quantity);
VACUUM ANALYZE items;
"#
    )
}

struct PgScale {
    // Dropped in this order: the emulator before the cluster it reads.
    emulator: BenchEmulator,
    rt: Runtime,
    clients: Vec<(String, LoadClient)>,
    direct: tokio_postgres::Client,
    _cluster: pg_cluster::Cluster,
}

impl PgScale {
    fn start() -> Result<Self, String> {
        let cluster = pg_cluster::Cluster::start().map_err(|e| e.to_string())?;
        let started = Instant::now();
        let mut urls = Vec::new();
        for (name, rows) in [SMALL, MEDIUM, LARGE] {
            cluster.create_database(name).map_err(|e| e.to_string())?;
            cluster
                .psql(name, &seed_sql(rows))
                .map_err(|e| e.to_string())?;
            urls.push((name, cluster.url(name)));
        }
        eprintln!(
            "   made the PostgreSQL tables in {}",
            seconds(started.elapsed().as_secs_f64())
        );
        let specs: Vec<(&str, &str)> = urls.iter().map(|(n, u)| (*n, u.as_str())).collect();
        let emulator = BenchEmulator::start_databases(&specs);
        let clients = [SMALL, MEDIUM, LARGE]
            .into_iter()
            .map(|(name, _)| (name.to_owned(), LoadClient::new(&emulator.token(name))))
            .collect();
        let rt = client_runtime();
        let direct = rt
            .block_on(async {
                let (client, connection) =
                    tokio_postgres::connect(&cluster.url(LARGE.0), tokio_postgres::NoTls).await?;
                tokio::spawn(connection);
                Ok::<_, tokio_postgres::Error>(client)
            })
            .map_err(|e| e.to_string())?;
        Ok(Self {
            emulator,
            rt,
            clients,
            direct,
            _cluster: cluster,
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

    /// A write that changes no value but is a commit: a new snapshot, so the emulator counts
    /// again (item 1 has quantity 5 already).
    fn touch(&self, resource: &str) {
        let uri: Uri = format!("{}/1", self.emulator.items_url(resource))
            .parse()
            .expect("a valid URI");
        let request = Request::builder().method(Method::PATCH).uri(uri);
        self.rt.block_on(
            self.client(resource)
                .send(request, Bytes::from_static(br#"{"quantity": 5}"#)),
        );
    }

    /// The median time of `n` GETs of `uri`, each right after a write.
    fn median_time_after_writes(&self, resource: &str, uri: &Uri, n: usize) -> f64 {
        let times: Vec<f64> = (0..n)
            .map(|_| {
                self.touch(resource);
                self.time(resource, uri).as_secs_f64()
            })
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

    /// The median time of `sql` run by tokio-postgres, prepared once, at 1M rows.
    fn direct_time(&self, sql: &str, n: usize) -> f64 {
        let statement = self
            .rt
            .block_on(self.direct.prepare(sql))
            .expect("the statement prepares");
        let times: Vec<f64> = (0..n)
            .map(|_| {
                let started = Instant::now();
                self.rt
                    .block_on(self.direct.query(&statement, &[]))
                    .expect("the statement runs");
                started.elapsed().as_secs_f64()
            })
            .collect();
        median(&times)
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

const WHAT: [&str; 6] = [
    "7. PostgreSQL, page 1 of 25, unfiltered: 1M rows vs 10k",
    "7. PostgreSQL, page 1 of 25, filtered on an indexed integer column: 1M rows vs 10k",
    "7. PostgreSQL, filtered count at 1M rows, right after a write (counted again): emulator vs tokio-postgres (integer comparison, prepared)",
    "7. PostgreSQL, walk of 1000-record pages in order at 1M rows: a late page vs page 1",
    "7. PostgreSQL, export by 1000-record pages: 1M records vs 100k",
    "7. PostgreSQL, page 1000 of 1000 at 1M rows reached directly (OFFSET over the keys)",
];

pub fn run(settings: &Settings) -> Vec<Row> {
    eprintln!(
        "7. emulator over PostgreSQL at scale: tables of {}, {} and {} rows",
        SMALL.1, MEDIUM.1, LARGE.1
    );
    let scale = match PgScale::start() {
        Ok(scale) => scale,
        Err(e) => {
            eprintln!("   PostgreSQL: not measured: {e}");
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
    let mut rows = Vec::new();
    let unfiltered = scale.growth("_per_page=25", settings);
    rows.push(growth_row(WHAT[0], unfiltered, Target::AtMost(2.0)));
    let filtered = scale.growth("_per_page=25&quantity=5", settings);
    rows.push(growth_row(WHAT[1], filtered, Target::AtMost(4.0)));
    eprintln!(
        "   page 1: unfiltered 10k {} / 1M {}; filtered 10k {} / 1M {}",
        seconds(unfiltered.0),
        seconds(unfiltered.1),
        seconds(filtered.0),
        seconds(filtered.1)
    );

    let count_uri = scale.url(LARGE.0, "_per_page=1&page=2&quantity=5");
    let count_sql = "SELECT count(*) FROM items WHERE quantity = 5";
    let n = settings.runs * 3;
    scale.median_time_after_writes(LARGE.0, &count_uri, 3);
    scale.direct_time(count_sql, 3);
    let (mut emu, mut direct, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..settings.runs {
        let a = scale.median_time_after_writes(LARGE.0, &count_uri, n / settings.runs);
        let b = scale.direct_time(count_sql, n / settings.runs);
        emu.push(a);
        direct.push(b);
        ratios.push(a / b);
    }
    rows.push(Row {
        benchmark: WHAT[2].to_owned(),
        figure: format!("emulator: {}", seconds(median(&emu))),
        baseline: format!("tokio-postgres: {}", seconds(median(&direct))),
        ratio: median(&ratios),
        target: Target::AtMost(1.5),
    });

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
    rows.push(Row {
        benchmark: WHAT[3].to_owned(),
        figure: format!("pages 901-1000: {}", seconds(late)),
        baseline: format!("page 1: {}", seconds(first)),
        ratio: late / first,
        target: Target::AtMost(2.0),
    });
    rows.push(Row {
        benchmark: WHAT[4].to_owned(),
        figure: format!("1M: {}", seconds(large)),
        baseline: format!("100k: {}", seconds(medium)),
        ratio: large / medium,
        target: Target::AtMost(12.0),
    });

    // A deep page with no anchor to start from: a filter no walk used selects every row.
    let deep_uri = scale.url(
        LARGE.0,
        &format!("_per_page={WALK_PAGE}&page=1000&quantity__gte=0"),
    );
    let first_uri = scale.url(LARGE.0, &format!("_per_page={WALK_PAGE}&quantity__gte=0"));
    let deep = scale.median_time(LARGE.0, &deep_uri, walks * 2 + 1);
    let top = scale.median_time(LARGE.0, &first_uri, walks * 2 + 1);
    rows.push(Row {
        benchmark: WHAT[5].to_owned(),
        figure: format!("page 1000: {}", seconds(deep)),
        baseline: format!("page 1: {}", seconds(top)),
        ratio: deep / top,
        target: Target::None,
    });
    rows
}
