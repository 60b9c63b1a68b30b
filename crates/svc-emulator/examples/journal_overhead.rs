//! The request journal's cost on a list request: requests per second for a 25-record page of
//! `GET /projects/demo/prod/shop/models/orders`, 16 in flight over keep-alive HTTP/1.1
//! connections, against three emulators started side by side: the journal off
//! (`journal_capacity(0)`), on (the default: 10,000 entries, no bodies), and on with bodies.
//! Runs alternate (off, on, bodies; off, on, bodies; ...) so that each round compares
//! neighbours in time, and the figure is the median of the rounds' ratios.
//!
//! ```sh
//! cargo run --release -p svc-emulator --example journal_overhead [ROUNDS] [MILLIS_PER_RUN]
//! ```
//!
//! The emulators run on a two-thread runtime (as the binary would on a two-core machine), the
//! client on the main thread.
//!
//! Instructions instead of seconds (the same on a busy machine): one emulator (`off`, `on` or
//! `bodies`), one request at a time, N requests after N/10 of warm-up, between two marker
//! functions at which callgrind zeroes and dumps its counters (`--separate-threads=yes`: the
//! client is thread 1, the server the others):
//!
//! ```sh
//! cargo build --release -p svc-emulator --example journal_overhead
//! valgrind --tool=callgrind --separate-threads=yes \
//!     --zero-before='*profile_window_start*' --dump-before='*profile_window_end*' \
//!     target/release/examples/journal_overhead --profile on 2000
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use svc_emulator::{Emulator, EmulatorConfig};

const IN_FLIGHT: usize = 16;
const PATH: &str = "/projects/demo/prod/shop/models/orders";

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--profile") {
        let which = args.nth(1).unwrap_or_default();
        let requests = args.next().and_then(|a| a.parse().ok()).unwrap_or(2000);
        return profile(&which, requests);
    }
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(9);
    let millis: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(500);
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a server runtime");
    let configs = [
        ("journal off", EmulatorConfig::default().journal_capacity(0)),
        ("journal on", EmulatorConfig::default()),
        (
            "journal on, bodies",
            EmulatorConfig::default().journal_bodies(true),
        ),
    ];
    let emulators: Vec<(&str, Emulator)> = configs
        .into_iter()
        .map(|(name, config)| {
            (
                name,
                server.block_on(Emulator::start(config)).expect("start"),
            )
        })
        .collect();
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a client runtime");
    let run = Duration::from_millis(millis);
    // One warm-up run each.
    for (_, emulator) in &emulators {
        client.block_on(load(emulator, run));
    }
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); emulators.len()];
    for _ in 0..rounds {
        for (i, (_, emulator)) in emulators.iter().enumerate() {
            rates[i].push(client.block_on(load(emulator, run)));
        }
    }
    println!("{rounds} rounds of {millis} ms, {IN_FLIGHT} in flight, GET {PATH} (25 records)");
    for (i, (name, emulator)) in emulators.iter().enumerate() {
        let ratios: Vec<f64> = rates[i]
            .iter()
            .zip(&rates[0])
            .map(|(r, off)| r / off)
            .collect();
        println!(
            "{name:<20} {:>9.0} req/s (median)   ratio to off {:.3} (median of rounds)   journal holds {}",
            median(&rates[i]),
            median(&ratios),
            emulator.requests().len(),
        );
    }
}

/// One emulator, `requests` sequential list requests between the two markers.
fn profile(which: &str, requests: usize) {
    let config = match which {
        "off" => EmulatorConfig::default().journal_capacity(0),
        "on" => EmulatorConfig::default(),
        "bodies" => EmulatorConfig::default().journal_bodies(true),
        other => panic!("--profile off|on|bodies, not {other:?}"),
    };
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a server runtime");
    let emulator = server.block_on(Emulator::start(config)).expect("start");
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a client runtime");
    client.block_on(async {
        let mut sender = connect(&emulator).await;
        let auth = format!("Bearer {}", emulator.api_key());
        for _ in 0..requests / 10 {
            list(&mut sender, &auth).await;
        }
        profile_window_start();
        for _ in 0..requests {
            list(&mut sender, &auth).await;
        }
        profile_window_end();
    });
    println!(
        "{which}: {requests} requests; journal holds {}",
        emulator.requests().len()
    );
}

// Different bodies, so that the linker does not fold the two markers into one.
#[inline(never)]
fn profile_window_start() {
    std::hint::black_box(1_u64);
}

#[inline(never)]
fn profile_window_end() {
    std::hint::black_box(2_u64);
}

async fn connect(emulator: &Emulator) -> hyper::client::conn::http1::SendRequest<Empty<Bytes>> {
    let stream = tokio::net::TcpStream::connect(emulator.local_addr())
        .await
        .expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(connection);
    sender
}

/// One list request, its answer read whole.
async fn list(sender: &mut hyper::client::conn::http1::SendRequest<Empty<Bytes>>, auth: &str) {
    let request = http::Request::get(PATH)
        .header(http::header::HOST, "127.0.0.1")
        .header(http::header::AUTHORIZATION, auth)
        .body(Empty::<Bytes>::new())
        .expect("a request");
    let response = sender.send_request(request).await.expect("an answer");
    assert_eq!(response.status(), 200);
    response.into_body().collect().await.expect("a body");
}

/// Requests per second of `IN_FLIGHT` connections, each sending the list request in a loop.
async fn load(emulator: &Emulator, run: Duration) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let auth = format!("Bearer {}", emulator.api_key());
    let mut senders = Vec::with_capacity(IN_FLIGHT);
    for _ in 0..IN_FLIGHT {
        senders.push(connect(emulator).await);
    }
    let started = Instant::now();
    let deadline = started + run;
    let mut tasks = tokio::task::JoinSet::new();
    for mut sender in senders {
        let auth = auth.clone();
        let done = Arc::clone(&done);
        tasks.spawn(async move {
            while Instant::now() < deadline {
                list(&mut sender, &auth).await;
                done.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    while tasks.join_next().await.is_some() {}
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}
