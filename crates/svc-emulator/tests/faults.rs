//! Fault mode on the wire: `503` with `Retry-After` (nothing run), connections dropped before a
//! request runs or midway through its answer (the request ran), latency, idle keep-alive
//! connections closed, seeded determinism, and the binary's `--fault-*` flags and
//! `SVC_EMULATOR_FAULT_*` variables. (The SDK against fault mode: `tests/tests/e2e/faults.rs`.)

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig, Faults};
use tokio::net::TcpStream;

const PRODUCTS: &str = "/projects/demo/prod/shop/models/products";

async fn faulty(faults: Faults) -> Emulator {
    Emulator::start(EmulatorConfig::default().faults(faults))
        .await
        .unwrap()
}

fn token(emulator: &Emulator) -> String {
    emulator.resource_tokens()["shop"].clone()
}

/// What came back: the head, and the body bytes read before the end or a failure.
#[derive(Debug)]
struct Outcome {
    status: StatusCode,
    headers: http::HeaderMap,
    body: Vec<u8>,
    body_failed: bool,
}

impl Outcome {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

fn request(method: Method, path: &str, token: &str, body: Option<&Value>) -> Request<Full<Bytes>> {
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::HOST, "127.0.0.1")
        .header(http::header::AUTHORIZATION, token);
    if body.is_some() {
        builder = builder.header(http::header::CONTENT_TYPE, "application/json");
    }
    let bytes = body
        .map(|b| serde_json::to_vec(b).unwrap())
        .unwrap_or_default();
    builder.body(Full::new(Bytes::from(bytes))).unwrap()
}

/// Sends one request on a new HTTP/1.1 connection; `Err` when no response head arrived.
async fn exchange(addr: SocketAddr, req: Request<Full<Bytes>>) -> Result<Outcome, hyper::Error> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let response = sender.send_request(req).await?;
    let (parts, mut body) = response.into_parts();
    let mut bytes = Vec::new();
    let mut body_failed = false;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    bytes.extend_from_slice(&data);
                }
            }
            Err(_) => {
                body_failed = true;
                break;
            }
        }
    }
    Ok(Outcome {
        status: parts.status,
        headers: parts.headers,
        body: bytes,
        body_failed,
    })
}

fn product(sku: &str) -> Value {
    json!({"sku": sku, "name": format!("fault test {sku}"), "price": 9.5})
}

/// How many products have this SKU (a GET, which the faults of these tests leave alone).
async fn products_with_sku(emulator: &Emulator, sku: &str) -> u64 {
    let path = format!("{PRODUCTS}?sku={sku}");
    let out = exchange(
        emulator.local_addr(),
        request(Method::GET, &path, &token(emulator), None),
    )
    .await
    .unwrap();
    assert_eq!(out.status, 200);
    out.json()["count"].as_u64().unwrap()
}

#[tokio::test]
async fn unavailable_answers_503_with_retry_after_and_runs_nothing() {
    let emulator = faulty(Faults::new().unavailable(1.0, 4).only_methods(["POST"])).await;
    let out = exchange(
        emulator.local_addr(),
        request(
            Method::POST,
            PRODUCTS,
            &token(&emulator),
            Some(&product("U-1")),
        ),
    )
    .await
    .unwrap();
    assert_eq!(out.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(out.headers[http::header::RETRY_AFTER], "4");
    assert_eq!(out.headers[http::header::CONTENT_TYPE], "application/json");
    let body = out.json();
    assert_eq!(body["error_code"], "unavailable", "{body}");
    assert!(body["error"].is_string(), "{body}");
    assert_eq!(products_with_sku(&emulator, "U-1").await, 0);
    let counts = emulator.fault_counts().unwrap();
    assert_eq!((counts.requests, counts.selected), (2, 1));
    assert_eq!(counts.unavailable, 1);
}

#[tokio::test]
async fn drop_before_closes_the_connection_unanswered_and_runs_nothing() {
    let emulator = faulty(Faults::new().drop_before(1.0).only_methods(["POST"])).await;
    let err = exchange(
        emulator.local_addr(),
        request(
            Method::POST,
            PRODUCTS,
            &token(&emulator),
            Some(&product("B-1")),
        ),
    )
    .await
    .unwrap_err();
    assert!(
        err.is_incomplete_message() || err.is_closed() || err.to_string().contains("reset"),
        "{err:?}"
    );
    assert_eq!(products_with_sku(&emulator, "B-1").await, 0);
    assert_eq!(emulator.fault_counts().unwrap().dropped_before, 1);
}

#[tokio::test]
async fn drop_midway_runs_the_request_then_cuts_its_answer() {
    let emulator = faulty(
        Faults::new()
            .drop_midway(1.0)
            .only_methods(["POST", "PATCH", "DELETE"]),
    )
    .await;
    let out = exchange(
        emulator.local_addr(),
        request(
            Method::POST,
            PRODUCTS,
            &token(&emulator),
            Some(&product("M-1")),
        ),
    )
    .await
    .expect("the head arrives");
    assert_eq!(out.status, StatusCode::CREATED);
    let announced: usize = out.headers[http::header::CONTENT_LENGTH]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(out.body_failed, "the body is cut off");
    assert!(
        !out.body.is_empty() && out.body.len() < announced,
        "part of the body: {} of {announced} bytes",
        out.body.len()
    );
    assert_eq!(products_with_sku(&emulator, "M-1").await, 1, "it ran");

    // An answer without a body (a delete's 204) is not sent at all; the delete still ran.
    let list = exchange(
        emulator.local_addr(),
        request(
            Method::GET,
            &format!("{PRODUCTS}?sku=M-1"),
            &token(&emulator),
            None,
        ),
    )
    .await
    .unwrap()
    .json();
    let id = list["results"][0]["id"].as_i64().unwrap();
    let err = exchange(
        emulator.local_addr(),
        request(
            Method::DELETE,
            &format!("{PRODUCTS}/{id}"),
            &token(&emulator),
            None,
        ),
    )
    .await
    .unwrap_err();
    assert!(err.is_incomplete_message() || err.is_closed(), "{err:?}");
    assert_eq!(products_with_sku(&emulator, "M-1").await, 0, "it ran");
    assert_eq!(emulator.fault_counts().unwrap().dropped_midway, 2);
}

#[tokio::test]
async fn latency_delays_only_the_selected_requests() {
    let latency = Duration::from_millis(300);
    let emulator = faulty(
        Faults::new()
            .latency(latency)
            .only_paths_containing("/models/products"),
    )
    .await;
    let token = token(&emulator);
    let started = Instant::now();
    let out = exchange(
        emulator.local_addr(),
        request(Method::GET, &format!("{PRODUCTS}/1"), &token, None),
    )
    .await
    .unwrap();
    assert_eq!(out.status, 200);
    assert!(started.elapsed() >= latency, "{:?}", started.elapsed());
    let out = exchange(
        emulator.local_addr(),
        request(
            Method::GET,
            "/projects/demo/prod/shop/models/customers/1",
            &token,
            None,
        ),
    )
    .await
    .unwrap();
    assert_eq!(out.status, 200);
    let counts = emulator.fault_counts().unwrap();
    assert_eq!((counts.requests, counts.selected), (2, 1));
}

#[tokio::test]
async fn idle_keep_alive_connections_are_closed() {
    let emulator = faulty(Faults::new().idle_close(Duration::from_millis(100))).await;
    let stream = TcpStream::connect(emulator.local_addr()).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    for _ in 0..2 {
        let response = sender
            .send_request(request(
                Method::GET,
                &format!("{PRODUCTS}/1"),
                &token(&emulator),
                None,
            ))
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        response.into_body().collect().await.unwrap();
    }
    // Kept alive between the two requests; closed by the server once idle.
    tokio::time::timeout(Duration::from_secs(10), conn)
        .await
        .expect("the server closes the idle connection")
        .unwrap()
        .unwrap();
    assert!(sender.is_closed());
    let counts = emulator.fault_counts().unwrap();
    assert_eq!((counts.connections, counts.requests), (1, 2));
}

#[tokio::test]
async fn a_seed_makes_the_faults_repeatable() {
    async fn statuses(seed: u64) -> Vec<u16> {
        let emulator = faulty(Faults::new().unavailable(0.5, 0).seed(seed)).await;
        let mut out = Vec::new();
        for _ in 0..40 {
            let reply = exchange(
                emulator.local_addr(),
                request(
                    Method::GET,
                    &format!("{PRODUCTS}/1"),
                    &token(&emulator),
                    None,
                ),
            )
            .await
            .unwrap();
            out.push(reply.status.as_u16());
        }
        out
    }
    let first = statuses(11).await;
    assert_eq!(first, statuses(11).await);
    assert!(first.contains(&503) && first.contains(&200), "{first:?}");
    assert_ne!(first, statuses(12).await);
}

/// Starts the binary with `args` and `envs` (no other `SVC_EMULATOR_*` variable) and reads its
/// startup line.
fn spawn_binary(args: &[&str], envs: &[(&str, &str)]) -> (Child, Value) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_svc-emulator"));
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (key, _) in std::env::vars() {
        if key.starts_with("SVC_EMULATOR_") {
            cmd.env_remove(key);
        }
    }
    cmd.envs(envs.iter().copied());
    let mut child = cmd.spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let info = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    (child, info)
}

#[tokio::test]
async fn the_binary_takes_fault_flags_and_environment_variables() {
    let (mut child, info) = spawn_binary(
        &["--fault-503-share", "1", "--fault-retry-after", "9"],
        &[("SVC_EMULATOR_FAULT_METHODS", "POST,PATCH")],
    );
    let addr: SocketAddr = info["api_base_url"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://")
        .parse()
        .unwrap();
    let token = info["resource_tokens"]["shop"].as_str().unwrap();
    let get = exchange(
        addr,
        request(Method::GET, &format!("{PRODUCTS}/1"), token, None),
    )
    .await
    .unwrap();
    let post = exchange(
        addr,
        request(Method::POST, PRODUCTS, token, Some(&product("CLI-1"))),
    )
    .await
    .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(get.status, 200);
    assert_eq!(post.status, 503);
    assert_eq!(post.headers[http::header::RETRY_AFTER], "9");

    // Out-of-range shares are refused with a message.
    let output = Command::new(env!("CARGO_BIN_EXE_svc-emulator"))
        .args(["--fault-drop-share", "1.5"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("between 0 and 1"), "{stderr}");
}
