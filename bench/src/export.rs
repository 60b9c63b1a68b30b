//! 3. Export: `stream()` over 100000 records in pages of 1000 from the emulator beside a
//!    sequential loop over the same pages through the same transport, with no added latency and
//!    with 5 ms added per response (two figures, each labelled: with 5 ms most of the speed-up
//!    is the stream waiting on several pages at once); the stream's peak memory for 100000
//!    records beside that for 10000; and `svc records export` (the binary, NDJSON to
//!    /dev/null) beside curl fetching the same 100 pages over one keep-alive connection:
//!    records per second, and client CPU per record (user + system time of the child
//!    process). Without curl, the baseline is a bare hyper-util client fetching the same pages
//!    in this process, and the row says so.

use std::hint::black_box;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::TryStreamExt;
use svc_api::model::records::ListQuery;
use svc_api::transport::{BoxFuture, HyperTransport, Transport, TransportError};
use tokio::runtime::Runtime;

use crate::alloc;
use crate::harness::{BenchEmulator, Item, Settings, client_runtime};
use crate::report::{Row, Target, bytes, median, median_secs, per_second, seconds};

/// The added latency per response.
pub const LATENCY: Duration = Duration::from_millis(5);
const PAGE: u32 = 1000;
const BIG: (&str, usize) = ("export", 100_000);
const SMALL: (&str, usize) = ("export_small", 10_000);

/// The default transport, with every response held back `delay` before it is returned: a
/// server (or a network) that takes that much longer per answer.
#[derive(Debug, Clone)]
pub struct Delayed {
    inner: HyperTransport,
    delay: Duration,
}

impl Delayed {
    pub fn new(delay: Duration) -> Self {
        Self {
            inner: HyperTransport::new(),
            delay,
        }
    }
}

impl Transport for Delayed {
    fn send(
        &self,
        request: http::Request<Bytes>,
    ) -> BoxFuture<'static, Result<http::Response<Bytes>, TransportError>> {
        let response = self.inner.send(request);
        let delay = self.delay;
        Box::pin(async move {
            let response = response.await;
            tokio::time::sleep(delay).await;
            response
        })
    }
}

struct Export {
    /// Kept running while the export runs.
    emulator: BenchEmulator,
    /// With [`LATENCY`] added per response.
    delayed: svc_api::Client,
    /// With nothing added.
    direct: svc_api::Client,
    rt: Runtime,
}

impl Export {
    fn start() -> Self {
        let emulator = BenchEmulator::start(&[BIG, SMALL]);
        let delayed = emulator.client(Delayed::new(LATENCY));
        let direct = emulator.client(HyperTransport::new());
        Self {
            emulator,
            delayed,
            direct,
            rt: client_runtime(),
        }
    }

    /// Every record through `stream()`: how long it took, and how many there were.
    fn stream(
        &self,
        client: &svc_api::Client,
        (resource, rows): (&str, usize),
    ) -> (Duration, usize) {
        let records = client.records(resource, "items").typed::<Item>();
        let start = Instant::now();
        let n = self.rt.block_on(async {
            let mut stream = records
                .stream(ListQuery::new().per_page(PAGE))
                .expect("a stream");
            let mut n = 0;
            while let Some(item) = stream.try_next().await.expect("a record") {
                black_box(item);
                n += 1;
            }
            n
        });
        assert_eq!(n, rows);
        (start.elapsed(), n)
    }

    /// Every record through `list()`, one page after the other.
    fn sequential(&self, client: &svc_api::Client, (resource, rows): (&str, usize)) -> Duration {
        let records = client.records(resource, "items").typed::<Item>();
        let start = Instant::now();
        let n = self.rt.block_on(async {
            let mut n = 0;
            let mut page = 1;
            loop {
                let answer = records
                    .list(&ListQuery::new().per_page(PAGE).page(page))
                    .await
                    .expect("a page");
                let last = answer.next.is_none();
                for item in answer.results {
                    black_box(item);
                    n += 1;
                }
                if last {
                    break n;
                }
                page += 1;
            }
        });
        assert_eq!(n, rows);
        start.elapsed()
    }
}

pub fn run(settings: &Settings) -> Vec<Row> {
    eprintln!(
        "3. export: {} records in pages of {PAGE}, with 0 and {LATENCY:?} added per response",
        BIG.1
    );
    let export = Export::start();
    let (delayed, direct) = (&export.delayed, &export.direct);
    // Warm-up: connections opened, statements prepared and the database pages in cache.
    export.sequential(delayed, SMALL);
    export.stream(delayed, SMALL);
    export.stream(delayed, BIG);
    export.sequential(direct, SMALL);
    export.stream(direct, BIG);

    let mut sequential = [Vec::new(), Vec::new()];
    let mut streamed = [Vec::new(), Vec::new()];
    let mut big_peaks = Vec::new();
    let mut small_peaks = Vec::new();
    for _ in 0..settings.runs {
        for (n, client) in [direct, delayed].into_iter().enumerate() {
            sequential[n].push(export.sequential(client, BIG));
            streamed[n].push(export.stream(client, BIG).0);
        }
        let (_, peak) = alloc::peak_during(|| export.stream(delayed, BIG));
        big_peaks.push(peak as f64);
        let (_, peak) = alloc::peak_during(|| export.stream(delayed, SMALL));
        small_peaks.push(peak as f64);
    }
    let mut rows = Vec::new();
    for (n, added) in ["0 ms", "5 ms"].into_iter().enumerate() {
        let (sequential, streamed) = (median_secs(&sequential[n]), median_secs(&streamed[n]));
        eprintln!(
            "   {added} added: sequential {}, stream {}",
            seconds(sequential),
            seconds(streamed)
        );
        rows.push(Row {
            benchmark: format!("3. export 100000 records, {added} added per response: speed-up"),
            figure: format!("stream() {}", seconds(streamed)),
            baseline: format!("sequential pages {}", seconds(sequential)),
            ratio: sequential / streamed,
            // The target is for a server that takes time to answer; with none, the figure is
            // what prefetching alone gains on loopback, reported.
            target: if n == 0 {
                Target::None
            } else {
                Target::AtLeast(1.6)
            },
        });
    }
    // A peak is a maximum: the highest of the runs is each export's peak. (A median of per-run
    // peaks would set a short export's typical peak against a long one's worst moment: the
    // moments when every buffer is full at once come more often in 100 pages than in 10.)
    let highest = |peaks: &[f64]| peaks.iter().copied().fold(0.0, f64::max);
    let (big_peak, small_peak) = (highest(&big_peaks), highest(&small_peaks));
    eprintln!(
        "   stream peak {} for {}, {} for {}",
        bytes(big_peak),
        BIG.1,
        bytes(small_peak),
        SMALL.1
    );
    rows.push(Row {
        benchmark: "3. export: stream() peak memory, 100000 vs 10000 records".to_owned(),
        figure: format!("100000: {}", bytes(big_peak)),
        baseline: format!("10000: {}", bytes(small_peak)),
        ratio: big_peak / small_peak,
        target: Target::AtMost(1.3),
    });
    rows.extend(cli_beside_curl(settings, &export));
    drop(export);
    rows
}

/// The `svc` binary: `$SVC_BIN`, else beside this benchmark's binary (`cargo xtask bench`
/// builds both in the same profile).
pub fn svc_binary() -> Option<PathBuf> {
    let path = match std::env::var_os("SVC_BIN") {
        Some(path) => PathBuf::from(path),
        None => std::env::current_exe().ok()?.with_file_name("svc"),
    };
    path.is_file().then_some(path)
}

/// User + system CPU time of the children waited for so far, from /proc (Linux; clock ticks
/// of 1/100 s, the USER_HZ /proc reports in).
fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (in parentheses, which may hold spaces): cutime and
    // cstime are fields 16 and 17, so 14th and 15th after it.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = fields.get(13)?.parse::<u64>().ok()? + fields.get(14)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Runs `cmd` to completion: wall time and CPU time of the child. It must succeed.
fn timed_child(cmd: &mut Command, what: &str) -> (Duration, Option<Duration>) {
    let before = children_cpu();
    let start = Instant::now();
    let status = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let elapsed = start.elapsed();
    assert!(status.success(), "{what} failed: {status}");
    let cpu = before
        .zip(children_cpu())
        .map(|(before, after)| after.saturating_sub(before));
    (elapsed, cpu)
}

/// `svc records export` beside curl on the same pages: records per second, and CPU per record.
fn cli_beside_curl(settings: &Settings, export: &Export) -> Vec<Row> {
    let Some(svc) = svc_binary() else {
        eprintln!(
            "   no svc binary beside the benchmark (build it with `cargo build --release -p svc-cli`, or set SVC_BIN): CLI export skipped"
        );
        return Vec::new();
    };
    let (resource, rows) = BIG;
    let api = export.emulator.handle().api_base_url().to_owned();
    let token = export.emulator.token(resource);
    let url = export.emulator.items_url(resource);
    let pages: Vec<String> = (1..=rows.div_ceil(PAGE as usize))
        .map(|page| format!("{url}?page={page}&_per_page={PAGE}"))
        .collect();
    let cli = || {
        let mut cmd = Command::new(&svc);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("SVC_PROJECT", crate::harness::PROJECT)
            .env("SVC_API_BASE_URL", &api)
            .env("SVC_TOKEN", &token)
            .args(["records", "export", resource, "items", "--per-page"])
            .arg(PAGE.to_string());
        timed_child(&mut cmd, "svc records export")
    };
    let curl_found = Command::new("curl")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let curl = || {
        let mut cmd = Command::new("curl");
        cmd.args(["-s", "-S", "--fail", "-H"])
            .arg(format!("Authorization: {token}"));
        for page in &pages {
            cmd.args(["-o", "/dev/null", page]);
        }
        timed_child(&mut cmd, "curl")
    };
    let bare = BareFetch::new(&token);
    let baseline = || -> (Duration, Option<Duration>) {
        if curl_found {
            curl()
        } else {
            (export.rt.block_on(bare.all(&pages)), None)
        }
    };
    let name = if curl_found {
        "curl"
    } else {
        "bare hyper-util fetch"
    };
    eprintln!(
        "   svc records export (NDJSON to /dev/null) beside {name} on the same {} pages",
        pages.len()
    );
    cli();
    baseline();
    let (mut cli_times, mut cli_cpu, mut base_times, mut base_cpu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..settings.runs {
        let (time, cpu) = cli();
        cli_times.push(time);
        cli_cpu.extend(cpu.map(|c| c.as_secs_f64()));
        let (time, cpu) = baseline();
        base_times.push(time);
        base_cpu.extend(cpu.map(|c| c.as_secs_f64()));
    }
    let rows_f = rows as f64;
    let (cli_rate, base_rate) = (
        rows_f / median_secs(&cli_times),
        rows_f / median_secs(&base_times),
    );
    eprintln!(
        "   svc {}, {name} {}",
        per_second(cli_rate, "records"),
        per_second(base_rate, "records")
    );
    let mut out = vec![Row {
        benchmark: format!("3. export: svc records export beside {name}, same 100 pages"),
        figure: format!("svc {}", per_second(cli_rate, "records")),
        baseline: format!("{name} {}", per_second(base_rate, "records")),
        ratio: cli_rate / base_rate,
        target: Target::AtLeast(0.9),
    }];
    if cli_cpu.len() == settings.runs && base_cpu.len() == settings.runs {
        let per_record = |cpu: &[f64]| median(cpu) / rows_f;
        let (cli_per, base_per) = (per_record(&cli_cpu), per_record(&base_cpu));
        eprintln!(
            "   CPU per record: svc {}, {name} {}",
            seconds(cli_per),
            seconds(base_per)
        );
        out.push(Row {
            benchmark: format!("3. export: client CPU per record, svc beside {name}"),
            figure: format!("svc {:.2} us", cli_per * 1e6),
            baseline: format!("{name} {:.2} us", base_per * 1e6),
            ratio: cli_per / base_per.max(1e-9),
            target: Target::None,
        });
    }
    out
}

/// Without curl: the same pages fetched one after the other by a bare hyper-util client.
struct BareFetch {
    client: hyper_util::client::legacy::Client<
        hyper_util::client::legacy::connect::HttpConnector,
        http_body_util::Empty<Bytes>,
    >,
    token: String,
}

impl BareFetch {
    fn new(token: &str) -> Self {
        let mut connector = hyper_util::client::legacy::connect::HttpConnector::new();
        connector.set_nodelay(true);
        Self {
            client: hyper_util::client::legacy::Client::builder(
                hyper_util::rt::TokioExecutor::new(),
            )
            .build(connector),
            token: token.to_owned(),
        }
    }

    async fn all(&self, pages: &[String]) -> Duration {
        use http_body_util::BodyExt;
        let start = Instant::now();
        for page in pages {
            let request = http::Request::get(page.as_str())
                .header(http::header::AUTHORIZATION, self.token.as_str())
                .body(http_body_util::Empty::new())
                .expect("a request");
            let response = self.client.request(request).await.expect("a page");
            assert!(response.status().is_success(), "{}", response.status());
            let body = response.into_body().collect().await.expect("a body");
            black_box(body.to_bytes());
        }
        start.elapsed()
    }
}
