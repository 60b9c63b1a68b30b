//! 1. Client overhead: the SDK's page settings list against an in-process hyper server that
//!    answers a fixed 2 KiB JSON array, beside a bare hyper-util client and reqwest doing the
//!    identical request (same URL, same headers, body read whole and decoded into the same type),
//!    at 1 and 32 requests in flight.

use std::hint::black_box;

use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, USER_AGENT};
use http::{HeaderValue, Request, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use svc_api::model::PageSettings;
use tokio::runtime::Runtime;

use crate::harness::{API_KEY, Done, FixedServer, PROJECT, Settings, client_runtime, load};
use crate::report::{Row, Target, median, per_second};

/// The request levels measured.
const IN_FLIGHT: [usize; 2] = [1, 32];

/// The SDK's `User-Agent`, sent by the baselines too so that the requests are identical.
const SDK_USER_AGENT: &str = concat!("svc-rs/", env!("CARGO_PKG_VERSION"));

/// A JSON array of page settings objects of about 2 KiB.
pub fn page_list_body() -> Bytes {
    let mut pages = Vec::new();
    let mut i = 0;
    loop {
        i += 1;
        let page = serde_json::json!({
            "uid": format!("7f3c2a{i:02}-5b1e-4c8d-9a0f-{i:012}"),
            "unique_name": format!("orders-{i}"),
            "name": format!("Orders {i}"),
            "date_add": format!("2024-03-{i:02}T10:15:00Z"),
            "params": {"elements": [
                {"type": "table", "resource": "shop", "model": "orders", "columns": ["id", "status", "total"]},
                {"type": "filter", "field": "status", "value": "paid"}
            ]},
        });
        pages.push(page);
        let len = serde_json::to_vec(&pages).expect("serializable").len();
        if len >= 2048 - 100 {
            return Bytes::from(serde_json::to_vec(&pages).expect("serializable"));
        }
    }
}

/// One way of making the request.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Contender {
    Sdk,
    Bare,
    Reqwest,
}

/// Everything the three contenders need, built once.
struct Clients {
    sdk: svc_api::Client,
    bare: HyperClient<HttpConnector, Full<Bytes>>,
    reqwest: reqwest::Client,
    uri: Uri,
    url: reqwest::Url,
    authorization: HeaderValue,
}

impl Clients {
    fn new(server: &FixedServer) -> Self {
        let app_base_url = format!("http://{}/api", server.addr());
        let sdk = svc_api::Client::builder()
            .project(PROJECT)
            .api_key(API_KEY)
            .app_base_url(&app_base_url)
            .build()
            .expect("an SDK client");
        let mut connector = HttpConnector::new();
        connector.set_nodelay(true);
        let bare = HyperClient::builder(TokioExecutor::new()).build(connector);
        let reqwest = reqwest::Client::builder()
            .tcp_nodelay(true)
            .build()
            .expect("a reqwest client");
        let url = format!("{app_base_url}/projects/{PROJECT}/prod/view_settings/");
        Self {
            sdk,
            bare,
            reqwest,
            uri: url.parse().expect("a valid URI"),
            url: url.parse().expect("a valid URL"),
            authorization: HeaderValue::from_str(&format!("Bearer {API_KEY}"))
                .expect("a valid header"),
        }
    }

    fn requests_per_second(
        &self,
        rt: &Runtime,
        who: Contender,
        in_flight: usize,
        settings: &Settings,
    ) -> f64 {
        self.run(rt, who, in_flight, settings).per_second()
    }

    fn run(&self, rt: &Runtime, who: Contender, in_flight: usize, settings: &Settings) -> Done {
        let time = settings.load_time;
        match who {
            Contender::Sdk => {
                let client = self.sdk.clone();
                load(rt, in_flight, time, move || {
                    let client = client.clone();
                    async move {
                        let pages = client.pages().list().await.expect("SDK list");
                        black_box(pages);
                    }
                })
            }
            Contender::Bare => {
                let client = self.bare.clone();
                let uri = self.uri.clone();
                let authorization = self.authorization.clone();
                load(rt, in_flight, time, move || {
                    let request = Request::get(uri.clone())
                        .header(USER_AGENT, HeaderValue::from_static(SDK_USER_AGENT))
                        .header(ACCEPT, HeaderValue::from_static("application/json"))
                        .header(AUTHORIZATION, authorization.clone())
                        .body(Full::new(Bytes::new()))
                        .expect("a valid request");
                    let response = client.request(request);
                    async move {
                        let response = response.await.expect("bare request");
                        assert!(response.status().is_success());
                        let body = response
                            .into_body()
                            .collect()
                            .await
                            .expect("bare body")
                            .to_bytes();
                        let pages: Vec<PageSettings> =
                            serde_json::from_slice(&body).expect("bare decode");
                        black_box(pages);
                    }
                })
            }
            Contender::Reqwest => {
                let client = self.reqwest.clone();
                let url = self.url.clone();
                let authorization = self.authorization.clone();
                load(rt, in_flight, time, move || {
                    let request = client
                        .get(url.clone())
                        .header(USER_AGENT, HeaderValue::from_static(SDK_USER_AGENT))
                        .header(ACCEPT, HeaderValue::from_static("application/json"))
                        .header(AUTHORIZATION, authorization.clone())
                        .send();
                    async move {
                        let response = request
                            .await
                            .expect("reqwest request")
                            .error_for_status()
                            .expect("reqwest status");
                        let body = response.bytes().await.expect("reqwest body");
                        let pages: Vec<PageSettings> =
                            serde_json::from_slice(&body).expect("reqwest decode");
                        black_box(pages);
                    }
                })
            }
        }
    }
}

/// One contender alone, for a profiler: `who` is `sdk`, `bare` or `reqwest`, `in_flight`
/// requests at a time for `settings.load_time`.
pub fn profile(settings: &Settings, who: &str, in_flight: usize) -> Result<(), String> {
    let who = match who {
        "sdk" => Contender::Sdk,
        "bare" => Contender::Bare,
        "reqwest" => Contender::Reqwest,
        other => return Err(format!("unknown client {other:?}")),
    };
    let server = FixedServer::start(page_list_body());
    let clients = Clients::new(&server);
    let rt = client_runtime();
    let done = clients.run(&rt, who, in_flight, settings);
    eprintln!(
        "{who:?} alone, {in_flight} in flight: {} requests, {}",
        done.requests,
        per_second(done.per_second(), "req")
    );
    Ok(())
}

pub fn run(settings: &Settings) -> Vec<Row> {
    let body = page_list_body();
    eprintln!(
        "1. client overhead: page settings list, {} byte JSON array",
        body.len()
    );
    let server = FixedServer::start(body);
    let clients = Clients::new(&server);
    let rt = client_runtime();
    let contenders = [Contender::Sdk, Contender::Bare, Contender::Reqwest];
    let mut rows = Vec::new();
    for in_flight in IN_FLIGHT {
        // Warm-up: connections opened, caches filled.
        for who in contenders {
            clients.requests_per_second(&rt, who, in_flight, settings);
        }
        // Interleaved rounds, so a slow spell of the machine hits every contender alike; each
        // ratio is the median of the rounds' ratios (neighbours in time, under the same load).
        let mut samples: [Vec<f64>; 3] = Default::default();
        for _ in 0..settings.runs {
            for (i, who) in contenders.into_iter().enumerate() {
                samples[i].push(clients.requests_per_second(&rt, who, in_flight, settings));
            }
        }
        let ratio_to = |baseline: &[f64]| {
            let ratios: Vec<f64> = samples[0]
                .iter()
                .zip(baseline)
                .map(|(s, b)| s / b)
                .collect();
            median(&ratios)
        };
        let (to_bare, to_reqwest) = (ratio_to(&samples[1]), ratio_to(&samples[2]));
        let [sdk, bare, reqwest] = samples.each_ref().map(|s| median(s));
        eprintln!(
            "   {in_flight} in flight: SDK {}, hyper-util {}, reqwest {}",
            per_second(sdk, "req"),
            per_second(bare, "req"),
            per_second(reqwest, "req")
        );
        rows.push(Row {
            benchmark: format!("1. client overhead, {in_flight} in flight: SDK vs bare hyper-util"),
            figure: format!("SDK {}", per_second(sdk, "req")),
            baseline: format!("hyper-util {}", per_second(bare, "req")),
            ratio: to_bare,
            target: Target::AtLeast(0.90),
        });
        rows.push(Row {
            benchmark: format!("1. client overhead, {in_flight} in flight: SDK vs reqwest"),
            figure: format!("SDK {}", per_second(sdk, "req")),
            baseline: format!("reqwest {}", per_second(reqwest, "req")),
            ratio: to_reqwest,
            target: Target::AtLeast(1.30),
        });
    }
    rows
}
