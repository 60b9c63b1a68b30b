//! 4. Emulator: requests per second for a 25-record list page at 16 in flight, beside a bare
//!    axum handler that answers the same bytes from memory, served the same way (hyper-util's
//!    auto HTTP/1 + HTTP/2 connection builder, `TCP_NODELAY`, a two-thread runtime); and records
//!    per second for a 10000-record `_no_pagination` list.

use std::hint::black_box;
use std::net::SocketAddr;

use axum::Router;
use axum::routing::get;
use bytes::Bytes;
use http::header::{AUTHORIZATION, CONTENT_TYPE};
use http::{HeaderValue, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;

use crate::harness::{BenchEmulator, Settings, client_runtime, load, profile_loop, server_runtime};
use crate::report::{Row, Target, median, per_second};

const RESOURCE: &str = "records";
const ROWS: usize = 10_000;
const PAGE_IN_FLIGHT: usize = 16;
const ALL_IN_FLIGHT: usize = 1;

/// A bare axum router (`/page`, `/all`) answering fixed bytes, served like the emulator serves.
struct BareAxum {
    rt: Option<Runtime>,
    addr: SocketAddr,
}

impl BareAxum {
    fn start(page: Bytes, all: Bytes) -> Self {
        let json = |body: Bytes| {
            move || {
                let body = body.clone();
                async move {
                    (
                        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                        body,
                    )
                }
            }
        };
        let router = Router::new()
            .route("/page", get(json(page)))
            .route("/all", get(json(all)));
        let rt = server_runtime("bare-axum", 2);
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
                let service = TowerToHyperService::new(router.clone());
                tokio::spawn(async move {
                    let _ = auto::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { rt: Some(rt), addr }
    }
}

impl Drop for BareAxum {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// The load generator: a bare hyper-util client, so the figures are about the servers.
#[derive(Clone)]
pub struct LoadClient {
    client: HyperClient<HttpConnector, Full<Bytes>>,
    authorization: HeaderValue,
}

impl LoadClient {
    pub fn new(token: &str) -> Self {
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        Self {
            client: HyperClient::builder(TokioExecutor::new()).build(connector),
            authorization: HeaderValue::from_str(token).expect("a valid header"),
        }
    }

    pub async fn get(&self, uri: Uri) -> Bytes {
        self.send(Request::get(uri), Bytes::new()).await
    }

    /// Sends a request with this client's credentials; the answer must be a success.
    pub async fn send(&self, request: http::request::Builder, body: Bytes) -> Bytes {
        let request = request
            .header(AUTHORIZATION, self.authorization.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(body))
            .expect("a valid request");
        let response = self.client.request(request).await.expect("a response");
        assert!(response.status().is_success(), "{}", response.status());
        response
            .into_body()
            .collect()
            .await
            .expect("a body")
            .to_bytes()
    }

    fn requests_per_second(
        &self,
        rt: &Runtime,
        uri: &Uri,
        in_flight: usize,
        settings: &Settings,
    ) -> f64 {
        let (client, uri) = (self.clone(), uri.clone());
        load(rt, in_flight, settings.load_time, move || {
            let (client, uri) = (client.clone(), uri.clone());
            async move {
                black_box(client.get(uri).await);
            }
        })
        .per_second()
    }
}

/// Requests per second of the emulator and of the bare handler, measured in turns: the
/// median of each, and the median of the rounds' ratios (neighbours in time, under the same
/// load).
fn compare(
    rt: &Runtime,
    client: &LoadClient,
    (emulator, bare): (&Uri, &Uri),
    in_flight: usize,
    settings: &Settings,
) -> (f64, f64, f64) {
    client.requests_per_second(rt, emulator, in_flight, settings);
    client.requests_per_second(rt, bare, in_flight, settings);
    let (mut emulator_rps, mut bare_rps, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..settings.runs {
        let e = client.requests_per_second(rt, emulator, in_flight, settings);
        let b = client.requests_per_second(rt, bare, in_flight, settings);
        emulator_rps.push(e);
        bare_rps.push(b);
        ratios.push(e / b);
    }
    (median(&emulator_rps), median(&bare_rps), median(&ratios))
}

/// Only the emulator's list page, 16 in flight, for a profiler: through
/// [`profile_loop`], so that `--requests N` makes exactly N requests between the window marks
/// callgrind counts in (section 6).
pub fn profile_page(settings: &Settings) {
    let emulator = BenchEmulator::start(&[(RESOURCE, ROWS)]);
    let client = LoadClient::new(&emulator.token(RESOURCE));
    let rt = client_runtime();
    let uri: Uri = emulator.items_url(RESOURCE).parse().expect("a valid URI");
    profile_loop(
        &rt,
        settings,
        "emulator page of 25",
        PAGE_IN_FLIGHT,
        move || {
            let (client, uri) = (client.clone(), uri.clone());
            async move {
                black_box(client.get(uri).await);
            }
        },
    );
}

pub fn run(settings: &Settings) -> Vec<Row> {
    eprintln!("4. emulator: a 25-record page and a {ROWS}-record list of a {ROWS}-row model");
    let emulator = BenchEmulator::start(&[(RESOURCE, ROWS)]);
    let client = LoadClient::new(&emulator.token(RESOURCE));
    let rt = client_runtime();
    let page_uri: Uri = emulator.items_url(RESOURCE).parse().expect("a valid URI");
    let all_uri: Uri = format!("{}?_no_pagination=1", emulator.items_url(RESOURCE))
        .parse()
        .expect("a valid URI");
    let page = rt.block_on(client.get(page_uri.clone()));
    let all = rt.block_on(client.get(all_uri.clone()));
    let bare = BareAxum::start(page, all);
    let bare_page: Uri = format!("http://{}/page", bare.addr).parse().expect("a URI");
    let bare_page_uri = bare_page.clone();
    let bare_all: Uri = format!("http://{}/all", bare.addr).parse().expect("a URI");

    let (emu_page, bare_page, page_ratio) = compare(
        &rt,
        &client,
        (&page_uri, &bare_page),
        PAGE_IN_FLIGHT,
        settings,
    );
    let (emu_all, bare_all, all_ratio) =
        compare(&rt, &client, (&all_uri, &bare_all), ALL_IN_FLIGHT, settings);
    // Where the emulator's threads spend a page under load: user and kernel time and context
    // switches (workers and blocking pool; the client runs on the main thread), over as many
    // pages as the measured runs served.
    // The bare handler's threads likewise: their kernel time is what serving HTTP over loopback
    // costs (sockets, epoll, waking a worker), the part of the emulator's that is not its own.
    let threads_per_page = |threads: &str, uri: &Uri| {
        let (cpu_before, switches_before) = crate::loadgen::threads_named(threads);
        let pages = (0..settings.runs)
            .map(|_| {
                let (client, uri) = (client.clone(), uri.clone());
                load(&rt, PAGE_IN_FLIGHT, settings.load_time, move || {
                    let (client, uri) = (client.clone(), uri.clone());
                    async move {
                        black_box(client.get(uri).await);
                    }
                })
                .requests
            })
            .sum::<u64>() as f64;
        let (cpu_after, switches_after) = crate::loadgen::threads_named(threads);
        let cpu = cpu_after.since(cpu_before);
        (
            cpu.system / pages * 1e6,
            cpu.user / pages * 1e6,
            (switches_after - switches_before) as f64 / pages,
        )
    };
    let (emu_kernel, emu_user, emu_switches) = threads_per_page("emulator", &page_uri);
    let (bare_kernel, bare_user, bare_switches) = threads_per_page("bare-axum", &bare_page_uri);
    let records = ROWS as f64;
    eprintln!(
        "   page: emulator {}, bare {}; list of {ROWS}: emulator {}, bare {}",
        per_second(emu_page, "req"),
        per_second(bare_page, "req"),
        per_second(emu_all * records, "record"),
        per_second(bare_all * records, "record"),
    );
    vec![
        Row {
            benchmark: format!("4. emulator, 25-record page, {PAGE_IN_FLIGHT} in flight"),
            figure: format!("emulator {}", per_second(emu_page, "req")),
            baseline: format!("bare axum {}", per_second(bare_page, "req")),
            ratio: page_ratio,
            target: Target::AtLeast(0.25),
        },
        Row {
            benchmark: format!(
                "4. emulator, {ROWS}-record _no_pagination list, {ALL_IN_FLIGHT} in flight"
            ),
            figure: format!("emulator {}", per_second(emu_all * records, "record")),
            baseline: format!("bare axum {}", per_second(bare_all * records, "record")),
            ratio: all_ratio,
            target: Target::None,
        },
        Row {
            benchmark: format!(
                "4. emulator, 25-record page, {PAGE_IN_FLIGHT} in flight: its threads' CPU per page, kernel vs user (and context switches per page)"
            ),
            figure: format!("kernel {emu_kernel:.1} us ({emu_switches:.1} switches)"),
            baseline: format!("user {emu_user:.1} us"),
            ratio: emu_kernel / emu_user,
            target: Target::None,
        },
        Row {
            benchmark: format!(
                "4. emulator, 25-record page, {PAGE_IN_FLIGHT} in flight: kernel time per page, emulator vs bare axum (the same HTTP over loopback; the rest is the emulator's own, hand-offs to the blocking pool first)"
            ),
            figure: format!("emulator {emu_kernel:.1} us ({emu_switches:.1} switches)"),
            baseline: format!(
                "bare {bare_kernel:.1} us ({bare_switches:.1} switches; user {bare_user:.1} us)"
            ),
            ratio: emu_kernel / bare_kernel,
            target: Target::None,
        },
    ]
}
