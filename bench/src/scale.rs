//! 5. The emulator at scale: file-backed tables of 10k, 100k and 1M rows (12 fields, an index
//!    on `status`), one request at a time from a bare hyper-util client, so each figure is one
//!    request's cost on the server.
//!
//! - Page 1 (25 records) of an unfiltered and of an index-filtered list, 1M rows against 10k:
//!   warm (the count is remembered) and cold (right after a write, which makes the emulator
//!   count again).
//! - A walk through every page in order (1000 records a page, as `svc records export` asks):
//!   a late page against page 1, and the whole 1M walk against the whole 100k walk.
//! - A deep page reached directly after a write (nothing remembered): `OFFSET` as it is.
//!
//! The database files are made once under `target/bench/data` (about 200 MB for 1M rows) and
//! reused by later runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, Uri};
use tokio::runtime::Runtime;

use crate::emulator::LoadClient;
use crate::harness::{BenchEmulator, Settings, client_runtime, profile_loop};
use crate::report::{Row, Target, median, seconds};

const SMALL: (&str, usize) = ("rows10k", 10_000);
const MEDIUM: (&str, usize) = ("rows100k", 100_000);
const LARGE: (&str, usize) = ("rows1m", 1_000_000);
/// Records per page of a walk.
const WALK_PAGE: u64 = 1000;

fn data_dir() -> PathBuf {
    PathBuf::from("target/bench/data")
}

/// `v2`: the files made before `created_at` was stored with a space (see `harness::seed_sql`)
/// answer `400` to every list; a new name keeps a later run from reusing one.
fn file(dir: &Path, rows: usize) -> PathBuf {
    dir.join(format!("items-v2-{rows}.sqlite"))
}

struct Scale {
    emulator: BenchEmulator,
    rt: Runtime,
    clients: Vec<(String, LoadClient)>,
}

impl Scale {
    fn start() -> Self {
        let dir = data_dir();
        std::fs::create_dir_all(&dir).expect("create target/bench/data");
        let files: Vec<(&str, usize, PathBuf)> = [SMALL, MEDIUM, LARGE]
            .into_iter()
            .map(|(name, rows)| (name, rows, file(&dir, rows)))
            .collect();
        let fresh = files.iter().any(|(_, _, f)| !f.exists());
        let started = Instant::now();
        let specs: Vec<(&str, usize, &Path)> = files
            .iter()
            .map(|(n, r, f)| (*n, *r, f.as_path()))
            .collect();
        let emulator = BenchEmulator::start_files(&specs);
        if fresh {
            eprintln!(
                "   made the database files in {}",
                seconds(started.elapsed().as_secs_f64())
            );
        }
        let clients = [SMALL, MEDIUM, LARGE]
            .into_iter()
            .map(|(name, _)| (name.to_owned(), LoadClient::new(&emulator.token(name))))
            .collect();
        Self {
            emulator,
            rt: client_runtime(),
            clients,
        }
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

    /// The time of one GET.
    fn time(&self, resource: &str, uri: &Uri) -> Duration {
        let client = self.client(resource);
        let started = Instant::now();
        self.rt.block_on(client.get(uri.clone()));
        started.elapsed()
    }

    /// The median time of `n` GETs of `uri`.
    fn median_time(&self, resource: &str, uri: &Uri, n: usize) -> f64 {
        let times: Vec<f64> = (0..n)
            .map(|_| self.time(resource, uri).as_secs_f64())
            .collect();
        median(&times)
    }

    /// A write that changes nothing a list shows but is a commit: the emulator must count again.
    fn touch(&self, resource: &str) {
        let uri: Uri = format!("{}/1", self.emulator.items_url(resource))
            .parse()
            .expect("a valid URI");
        let request = Request::builder().method(Method::PATCH).uri(uri);
        self.rt.block_on(
            self.client(resource)
                .send(request, Bytes::from_static(br#"{"quantity": 1}"#)),
        );
    }

    /// Page 1 at 1M rows against page 1 at 10k, `query` alike: warm, the median of the
    /// rounds' ratios (each round times both, neighbours in time); cold, each request right
    /// after a write.
    fn first_pages(&self, query: &str, settings: &Settings) -> ((f64, f64, f64), (f64, f64, f64)) {
        let (small, large) = (self.url(SMALL.0, query), self.url(LARGE.0, query));
        let per_round = 20;
        self.median_time(SMALL.0, &small, per_round);
        self.median_time(LARGE.0, &large, per_round);
        let (mut s, mut l, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..settings.runs {
            let a = self.median_time(SMALL.0, &small, per_round);
            let b = self.median_time(LARGE.0, &large, per_round);
            s.push(a);
            l.push(b);
            ratios.push(b / a);
        }
        let warm = (median(&s), median(&l), median(&ratios));
        let (mut s, mut l, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..settings.runs {
            self.touch(SMALL.0);
            let a = self.time(SMALL.0, &small).as_secs_f64();
            self.touch(LARGE.0);
            let b = self.time(LARGE.0, &large).as_secs_f64();
            s.push(a);
            l.push(b);
            ratios.push(b / a);
        }
        (warm, (median(&s), median(&l), median(&ratios)))
    }

    /// Walks every page of `resource` in order, `WALK_PAGE` records a page: the time of each.
    fn walk(&self, resource: &str, rows: usize) -> Vec<f64> {
        let pages = (rows as u64).div_ceil(WALK_PAGE);
        (1..=pages)
            .map(|page| {
                let query = if page == 1 {
                    format!("_per_page={WALK_PAGE}")
                } else {
                    format!("_per_page={WALK_PAGE}&page={page}")
                };
                self.time(resource, &self.url(resource, &query))
                    .as_secs_f64()
            })
            .collect()
    }
}

/// One loop over a table of this benchmark, for a profiler (section 6 counts the emulator's
/// instructions with these): `first25` asks for page 1 of 25 records again and again,
/// `first1000` page 1 of 1000, `walk1000` every page of 1000 in order (from page 1 again at
/// the end). `size` is `10k` or `1m`. The table's file must exist (`--only scale` makes it):
/// seeding a million rows under a profiler would take minutes.
pub fn profile(settings: &Settings, kind: &str, size: &str) -> Result<(), String> {
    let (name, rows) = match size {
        "10k" => SMALL,
        "1m" => LARGE,
        _ => return Err(format!("unknown table size {size:?}: 10k or 1m")),
    };
    let per_page: u64 = match kind {
        "first25" => 25,
        "first1000" | "walk1000" => WALK_PAGE,
        _ => return Err(format!("unknown emulator profile {kind:?}")),
    };
    let path = file(&data_dir(), rows);
    if !path.exists() {
        return Err(format!(
            "{} is missing: run `svc-bench --only scale` once to make it",
            path.display()
        ));
    }
    let emulator = BenchEmulator::start_files(&[(name, rows, &path)]);
    let client = LoadClient::new(&emulator.token(name));
    let base = emulator.items_url(name);
    let pages = (rows as u64).div_ceil(per_page);
    let walk = kind == "walk1000";
    let next = Arc::new(AtomicU64::new(0));
    let rt = client_runtime();
    profile_loop(
        &rt,
        settings,
        &format!("emulator {kind} at {size} rows"),
        1,
        move || {
            let page = if walk {
                next.fetch_add(1, Ordering::Relaxed) % pages + 1
            } else {
                1
            };
            let uri: Uri = format!("{base}?_per_page={per_page}&page={page}")
                .parse()
                .expect("a valid URI");
            let client = client.clone();
            async move {
                std::hint::black_box(client.get(uri).await);
            }
        },
    );
    Ok(())
}

pub fn run(settings: &Settings) -> Vec<Row> {
    eprintln!(
        "5. emulator at scale: file-backed tables of {}, {} and {} rows",
        SMALL.1, MEDIUM.1, LARGE.1
    );
    let scale = Scale::start();
    let mut rows = Vec::new();
    let first_page_row = |what: &str, (small, large, ratio): (f64, f64, f64), target| Row {
        benchmark: format!("5. emulator, page 1 of 25, {what}: 1M rows vs 10k"),
        figure: format!("1M: {}", seconds(large)),
        baseline: format!("10k: {}", seconds(small)),
        ratio,
        target,
    };
    for (what, query) in [
        ("unfiltered", ""),
        ("filtered on an indexed column", "status=paid"),
    ] {
        let (warm, cold) = scale.first_pages(query, settings);
        eprintln!(
            "   page 1, {what}: warm 10k {} / 1M {}; cold 10k {} / 1M {}",
            seconds(warm.0),
            seconds(warm.1),
            seconds(cold.0),
            seconds(cold.1)
        );
        rows.push(first_page_row(what, warm, Target::AtMost(2.0)));
        rows.push(first_page_row(
            &format!("{what}, right after a write (counted again)"),
            cold,
            Target::None,
        ));
    }

    // Walks: a few of each, alternating; the figures are medians over the walks.
    let walks = settings.runs.clamp(1, 3);
    let (mut medium, mut large, mut first, mut late) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..walks {
        let m = scale.walk(MEDIUM.0, MEDIUM.1);
        medium.push(m.iter().sum::<f64>());
        let l = scale.walk(LARGE.0, LARGE.1);
        large.push(l.iter().sum::<f64>());
        first.push(l[0]);
        // The last tenth of the walk: pages 901 to 1000.
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
        benchmark: format!(
            "5. emulator, walk of {WALK_PAGE}-record pages in order at 1M rows: a late page vs page 1"
        ),
        figure: format!("pages 901-1000: {}", seconds(late)),
        baseline: format!("page 1: {}", seconds(first)),
        ratio: late / first,
        target: Target::AtMost(2.0),
    });
    rows.push(Row {
        benchmark: format!("5. emulator, export by {WALK_PAGE}-record pages: 1M records vs 100k"),
        figure: format!("1M: {}", seconds(large)),
        baseline: format!("100k: {}", seconds(medium)),
        ratio: large / medium,
        target: Target::AtMost(12.0),
    });

    // A deep page reached directly, with nothing remembered: OFFSET 999000 as it is.
    let deep_uri = scale.url(LARGE.0, &format!("_per_page={WALK_PAGE}&page=1000"));
    let first_uri = scale.url(LARGE.0, &format!("_per_page={WALK_PAGE}"));
    let (mut deep, mut top) = (Vec::new(), Vec::new());
    for _ in 0..walks {
        scale.touch(LARGE.0);
        deep.push(scale.time(LARGE.0, &deep_uri).as_secs_f64());
        scale.touch(LARGE.0);
        top.push(scale.time(LARGE.0, &first_uri).as_secs_f64());
    }
    let (deep, top) = (median(&deep), median(&top));
    rows.push(Row {
        benchmark: format!(
            "5. emulator, page 1000 of {WALK_PAGE} at 1M rows reached directly after a write (OFFSET)"
        ),
        figure: format!("page 1000: {}", seconds(deep)),
        baseline: format!("page 1: {}", seconds(top)),
        ratio: deep / top,
        target: Target::None,
    });
    rows
}
