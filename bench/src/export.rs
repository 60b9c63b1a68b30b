//! 3. Export: `stream()` over 100000 records in pages of 1000 from the emulator, with 5 ms of
//!    added latency per response, beside a sequential loop over the same pages through the same
//!    transport; and the stream's peak memory for 100000 records beside that for 10000.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::TryStreamExt;
use svc_api::model::records::ListQuery;
use svc_api::transport::{BoxFuture, HyperTransport, Transport, TransportError};
use tokio::runtime::Runtime;

use crate::alloc;
use crate::harness::{BenchEmulator, Item, Settings, client_runtime};
use crate::report::{Row, Target, bytes, median_secs, seconds};

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
    _emulator: BenchEmulator,
    client: svc_api::Client,
    rt: Runtime,
}

impl Export {
    fn start() -> Self {
        let emulator = BenchEmulator::start(&[BIG, SMALL]);
        let client = emulator.client(Delayed::new(LATENCY));
        Self {
            _emulator: emulator,
            client,
            rt: client_runtime(),
        }
    }

    /// Every record through `stream()`: how long it took, and how many there were.
    fn stream(&self, (resource, rows): (&str, usize)) -> (Duration, usize) {
        let records = self.client.records(resource, "items").typed::<Item>();
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
    fn sequential(&self, (resource, rows): (&str, usize)) -> Duration {
        let records = self.client.records(resource, "items").typed::<Item>();
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
        "3. export: {} records in pages of {PAGE}, {LATENCY:?} added per response",
        BIG.1
    );
    let export = Export::start();
    // Warm-up: connections opened, statements prepared and the database pages in cache.
    export.sequential(SMALL);
    export.stream(SMALL);
    export.stream(BIG);

    let mut sequential = Vec::new();
    let mut streamed = Vec::new();
    let mut big_peaks = Vec::new();
    let mut small_peaks = Vec::new();
    for _ in 0..settings.runs {
        sequential.push(export.sequential(BIG));
        let ((time, _), peak) = alloc::peak_during(|| export.stream(BIG));
        streamed.push(time);
        big_peaks.push(peak as f64);
        let (_, peak) = alloc::peak_during(|| export.stream(SMALL));
        small_peaks.push(peak as f64);
    }
    drop(export);
    let (sequential, streamed) = (median_secs(&sequential), median_secs(&streamed));
    // A peak is a maximum: the highest of the runs is each export's peak. (A median of per-run
    // peaks would set a short export's typical peak against a long one's worst moment: the
    // moments when every buffer is full at once come more often in 100 pages than in 10.)
    let highest = |peaks: &[f64]| peaks.iter().copied().fold(0.0, f64::max);
    let (big_peak, small_peak) = (highest(&big_peaks), highest(&small_peaks));
    eprintln!(
        "   sequential {}, stream {}; stream peak {} for {}, {} for {}",
        seconds(sequential),
        seconds(streamed),
        bytes(big_peak),
        BIG.1,
        bytes(small_peak),
        SMALL.1
    );
    vec![
        Row {
            benchmark: "3. export 100000 records, 5 ms per response: speed-up".to_owned(),
            figure: format!("stream() {}", seconds(streamed)),
            baseline: format!("sequential pages {}", seconds(sequential)),
            ratio: sequential / streamed,
            target: Target::AtLeast(1.6),
        },
        Row {
            benchmark: "3. export: stream() peak memory, 100000 vs 10000 records".to_owned(),
            figure: format!("100000: {}", bytes(big_peak)),
            baseline: format!("10000: {}", bytes(small_peak)),
            ratio: big_peak / small_peak,
            target: Target::AtMost(1.3),
        },
    ]
}
