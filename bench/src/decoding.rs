//! 2. Decoding: a `_no_pagination` answer of 10000 records of 12 fields, decoded by the SDK
//!    (`records(..).typed::<Item>().all(..)`, answered from memory by a closure transport)
//!    beside `serde_json::from_slice::<Vec<Item>>` on the same bytes. Time and peak memory; and
//!    the peak memory of the same `all()` over real HTTP (loopback, the default transport, a
//!    hyper server answering the same bytes), which holds the response body too while it
//!    decodes: the figure a program fetching 10000 records sees.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Response};
use svc_api::model::records::ListQuery;
use svc_api::transport::TransportError;

use crate::alloc;
use crate::harness::{API_KEY, FixedServer, Item, PROJECT, Settings, client_runtime, items};
use crate::report::{Row, Target, bytes, median, median_secs, seconds};

const RECORDS: usize = 10_000;

/// A client whose transport answers every request with `body`, from memory (a cheap clone of
/// the same `Bytes`: no copy, nothing allocated for the body).
fn replay_client(body: Bytes) -> svc_api::Client {
    let transport = move |_request: http::Request<Bytes>| {
        let body = body.clone();
        async move {
            let mut response = Response::new(body);
            response
                .headers_mut()
                .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            Ok::<_, TransportError>(response)
        }
    };
    svc_api::Client::builder()
        .project(PROJECT)
        .api_key(API_KEY)
        .api_base_url("http://bench.invalid")
        .transport(transport)
        .build()
        .expect("a client")
}

pub fn run(settings: &Settings) -> Vec<Row> {
    let body = Bytes::from(serde_json::to_vec(&items(RECORDS)).expect("serializable"));
    eprintln!(
        "2. decoding: {RECORDS} records of 12 fields, {} of JSON",
        bytes(body.len() as f64)
    );
    let client = replay_client(body.clone());
    let rt = client_runtime();
    let records = client.records("bench", "items").typed::<Item>();
    let query = ListQuery::new();
    let sdk = || {
        let all = rt.block_on(records.all(&query)).expect("SDK decode");
        assert_eq!(all.len(), RECORDS);
        all
    };
    let baseline = || {
        let all: Vec<Item> = serde_json::from_slice(&body).expect("serde_json decode");
        assert_eq!(all.len(), RECORDS);
        all
    };
    // Warm-up, and both must agree.
    assert_eq!(sdk(), baseline());

    let mut sdk_times = Vec::new();
    let mut base_times = Vec::new();
    let mut sdk_peaks = Vec::new();
    let mut base_peaks = Vec::new();
    let timed = |f: &dyn Fn() -> Vec<Item>| -> Duration {
        let start = Instant::now();
        let out = black_box(f());
        let elapsed = start.elapsed();
        drop(out);
        elapsed
    };
    for _ in 0..settings.decode_runs {
        sdk_times.push(timed(&sdk));
        base_times.push(timed(&baseline));
    }
    for _ in 0..3 {
        let (out, peak) = alloc::peak_during(sdk);
        drop(out);
        sdk_peaks.push(peak as f64);
        let (out, peak) = alloc::peak_during(baseline);
        drop(out);
        base_peaks.push(peak as f64);
    }
    // Over HTTP: the body arrives in pieces and is gathered into one buffer before decoding,
    // so the peak holds the body and the records at once. (The server runs in this process:
    // what it allocates to answer is counted too, a few KiB of buffers; its copy of the body
    // was made before the measurement.)
    let server = FixedServer::start(body.clone());
    let http = svc_api::Client::builder()
        .project(PROJECT)
        .api_key(API_KEY)
        .api_base_url(format!("http://{}", server.addr()))
        .build()
        .expect("a client");
    let over_http = || {
        let all = rt
            .block_on(http.records("bench", "items").typed::<Item>().all(&query))
            .expect("SDK decode over HTTP");
        assert_eq!(all.len(), RECORDS);
        all
    };
    drop(over_http());
    let mut http_peaks = Vec::new();
    for _ in 0..3 {
        let (out, peak) = alloc::peak_during(over_http);
        drop(out);
        http_peaks.push(peak as f64);
    }
    drop(server);
    let http_peak = median(&http_peaks);
    let (sdk_time, base_time) = (median_secs(&sdk_times), median_secs(&base_times));
    let (sdk_peak, base_peak) = (median(&sdk_peaks), median(&base_peaks));
    eprintln!(
        "   SDK {} / {}, serde_json {} / {}; SDK over HTTP peak {}",
        seconds(sdk_time),
        bytes(sdk_peak),
        seconds(base_time),
        bytes(base_peak),
        bytes(http_peak)
    );
    vec![
        Row {
            benchmark: "2. decoding 10000 x 12 fields: time".to_owned(),
            figure: format!("SDK all() {}", seconds(sdk_time)),
            baseline: format!("serde_json::from_slice {}", seconds(base_time)),
            ratio: sdk_time / base_time,
            target: Target::AtMost(1.10),
        },
        Row {
            benchmark: "2. decoding 10000 x 12 fields: peak memory".to_owned(),
            figure: format!("SDK all() {}", bytes(sdk_peak)),
            baseline: format!("serde_json::from_slice {}", bytes(base_peak)),
            ratio: sdk_peak / base_peak,
            target: Target::AtMost(1.20),
        },
        Row {
            benchmark: "2. decoding 10000 x 12 fields: peak memory over HTTP vs from memory"
                .to_owned(),
            figure: format!("SDK all() over loopback HTTP {}", bytes(http_peak)),
            baseline: format!("SDK all() from memory {}", bytes(sdk_peak)),
            ratio: http_peak / sdk_peak,
            target: Target::None,
        },
    ]
}
