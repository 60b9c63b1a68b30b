//! The server's connection limits (crate README, "Under abuse"): silent, unfinished and idle
//! connections are closed, and at the connection cap the server keeps answering.
//!
//! Limits are set far below their defaults so that each case ends in a fraction of a second;
//! the bounds the tests wait within are wide (a busy CI machine), and a protection that does not
//! work fails them by running into the bound.

use std::time::Duration;

use svc_emulator::{Emulator, EmulatorConfig, Limits};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Far longer than any limit set here.
const BOUND: Duration = Duration::from_secs(20);

async fn emulator(limits: Limits) -> Emulator {
    Emulator::start(EmulatorConfig::default().limits(limits))
        .await
        .expect("the emulator starts")
}

/// Reads until the server closes the connection; what it sent meanwhile. Fails past [`BOUND`].
async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let read = tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "the server kept the connection open past {BOUND:?}"
    );
    received
}

fn request(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: emulator\r\n\r\n")
}

/// Sends one keep-alive request and reads its answer's status line.
async fn ask(stream: &mut TcpStream, path: &str) -> String {
    stream.write_all(request(path).as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(BOUND, stream.read(&mut buf))
        .await
        .expect("an answer within the bound")
        .unwrap();
    String::from_utf8_lossy(&buf[..n])
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_connection_that_says_nothing_is_closed() {
    let emulator = emulator(Limits::default().first_byte_timeout(Duration::from_millis(200))).await;
    let mut silent = TcpStream::connect(emulator.local_addr()).await.unwrap();
    let received = read_until_closed(&mut silent).await;
    assert!(received.is_empty(), "{received:?}");
}

#[tokio::test]
async fn headers_that_never_end_and_idle_connections_are_closed() {
    let emulator = emulator(Limits::default().idle_timeout(Duration::from_millis(300))).await;

    let mut unfinished = TcpStream::connect(emulator.local_addr()).await.unwrap();
    unfinished
        .write_all(b"GET /api/ HTTP/1.1\r\nHost: emulator\r\nX-Slow: 1\r\n")
        .await
        .unwrap();
    let received = read_until_closed(&mut unfinished).await;
    // hyper may say `408 Request Timeout` before closing; it never answers the request.
    assert!(
        received.is_empty() || received.starts_with(b"HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&received)
    );

    // A kept-alive connection is answered, then closed once idle.
    let mut kept = TcpStream::connect(emulator.local_addr()).await.unwrap();
    assert!(ask(&mut kept, "/nowhere").await.starts_with("HTTP/1.1 404"));
    read_until_closed(&mut kept).await;
}

/// With the default limits, headers that never end are given 30 s (hyper's own default), not
/// a minute: on paused time, the connection is closed exactly at the default.
#[tokio::test(start_paused = true)]
async fn by_default_unfinished_headers_are_closed_after_30_seconds() {
    assert_eq!(svc_emulator::IDLE_TIMEOUT, Duration::from_secs(30));
    let emulator = emulator(Limits::default()).await;
    let mut unfinished = TcpStream::connect(emulator.local_addr()).await.unwrap();
    unfinished
        .write_all(b"GET /api/ HTTP/1.1\r\nHost: emulator\r\n")
        .await
        .unwrap();
    let started = tokio::time::Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout(Duration::from_secs(120), unfinished.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => break,
            Ok(Ok(_)) => continue, // a `408` before the close
            Err(_) => panic!("the connection was kept past 120 s"),
        }
    }
    let kept = started.elapsed();
    assert!(
        kept >= Duration::from_secs(29) && kept <= Duration::from_secs(31),
        "closed after {kept:?}"
    );
}

#[tokio::test]
async fn at_the_cap_silent_connections_make_room_and_busy_ones_are_kept() {
    let emulator = emulator(Limits::default().max_connections(3)).await;
    let addr = emulator.local_addr();

    // Three silent connections fill the cap; a fourth that asks something is still answered,
    // and the oldest silent one is closed to make room.
    let mut silent = Vec::new();
    for _ in 0..3 {
        silent.push(TcpStream::connect(addr).await.unwrap());
    }
    let mut asking = TcpStream::connect(addr).await.unwrap();
    assert!(
        ask(&mut asking, "/nowhere")
            .await
            .starts_with("HTTP/1.1 404")
    );
    let received = read_until_closed(&mut silent[0]).await;
    assert!(received.is_empty());

    // With every slot taken by a connection that has spoken, a new one is closed at once,
    // and the ones being served keep their answers.
    let mut busy = vec![asking];
    for _ in 0..2 {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        assert!(
            ask(&mut stream, "/nowhere")
                .await
                .starts_with("HTTP/1.1 404")
        );
        busy.push(stream);
    }
    let mut refused = TcpStream::connect(addr).await.unwrap();
    let _ = refused.write_all(request("/nowhere").as_bytes()).await;
    let received = read_until_closed(&mut refused).await;
    assert!(
        received.is_empty(),
        "{}",
        String::from_utf8_lossy(&received)
    );
    for stream in &mut busy {
        assert!(ask(stream, "/nowhere").await.starts_with("HTTP/1.1 404"));
    }
}

/// The status line of the answer to `head` followed by `body`, on a new connection.
async fn answer_to(emulator: &Emulator, head: &str, body: &[u8]) -> String {
    let mut stream = TcpStream::connect(emulator.local_addr()).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    // The server may answer and close before the whole body is written: not an error here.
    let _ = stream.write_all(body).await;
    let received = read_until_closed_or_answered(&mut stream).await;
    String::from_utf8_lossy(&received)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Reads until a whole status line arrived or the connection closed, within [`BOUND`].
async fn read_until_closed_or_answered(stream: &mut TcpStream) -> Vec<u8> {
    let mut received = Vec::new();
    let _ = tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 4096];
        while !received.windows(2).any(|w| w == b"\r\n") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    received
}

#[tokio::test]
async fn account_routes_refuse_large_bodies_without_reading_them() {
    let emulator = emulator(Limits::default()).await;
    // 32 MiB announced, a few bytes sent: refused at once.
    let head = "POST /projects/demo/prod/auth/login HTTP/1.1\r\nHost: emulator\r\n\
                Content-Type: application/json\r\nContent-Length: 33554432\r\n\r\n";
    let status = answer_to(&emulator, head, b"[0,0,0,0").await;
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");

    // Unannounced (chunked): refused once 64 KiB are passed.
    let head = "POST /projects/demo/prod/auth/login HTTP/1.1\r\nHost: emulator\r\n\
                Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    let mut body = Vec::new();
    for _ in 0..80 {
        body.extend_from_slice(b"400\r\n");
        body.extend_from_slice(&[b' '; 1024]);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(b"0\r\n\r\n");
    let status = answer_to(&emulator, head, &body).await;
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");

    // A page structure may be much larger than an account body.
    let key = emulator.api_key().to_owned();
    let params =
        serde_json::to_string(&serde_json::json!({"elements": "x".repeat(1 << 20)})).unwrap();
    let page = serde_json::to_vec(&serde_json::json!({"params": params})).unwrap();
    let head = format!(
        "POST /api/projects/demo/prod/view_settings/ HTTP/1.1\r\nHost: emulator\r\n\
         Authorization: Bearer {key}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        page.len()
    );
    let status = answer_to(&emulator, &head, &page).await;
    assert!(status.starts_with("HTTP/1.1 201"), "{status}");
}

/// A client that sends its whole body before it reads (as most HTTP clients do) reads the
/// `413` of a body over the limit, announced or not, and its connection stays usable: the
/// refused body is read and discarded while the answer goes out.
#[tokio::test]
async fn a_refused_body_is_read_so_that_the_client_reads_the_413() {
    let emulator = emulator(Limits::default()).await;
    let token = emulator.resource_tokens()["shop"].clone();
    // 12 MiB: over the 8 MiB of the records routes.
    let body = vec![b' '; 12 << 20];
    for framing in [
        format!("Content-Length: {}", body.len()),
        "Transfer-Encoding: chunked".to_owned(),
    ] {
        let mut stream = TcpStream::connect(emulator.local_addr()).await.unwrap();
        let head = format!(
            "POST /projects/demo/prod/shop/models/orders HTTP/1.1\r\nHost: emulator\r\n\
             Authorization: {token}\r\nContent-Type: application/json\r\n{framing}\r\n\r\n"
        );
        let mut sent = head.into_bytes();
        if framing.starts_with("Transfer") {
            sent.extend_from_slice(format!("{:x}\r\n", body.len()).as_bytes());
            sent.extend_from_slice(&body);
            sent.extend_from_slice(b"\r\n0\r\n\r\n");
        } else {
            sent.extend_from_slice(&body);
        }
        let write = tokio::time::timeout(BOUND, stream.write_all(&sent)).await;
        assert!(
            matches!(write, Ok(Ok(()))),
            "{framing}: the whole body is taken, not cut off: {write:?}"
        );
        let answer = read_one_answer(&mut stream).await;
        assert!(answer.starts_with("HTTP/1.1 413"), "{framing}: {answer}");
        // The same connection answers the next request.
        assert!(
            ask(&mut stream, "/nowhere")
                .await
                .starts_with("HTTP/1.1 404"),
            "{framing}"
        );
    }
}

/// One whole answer (head and a `content-length` body) from a kept-alive `stream`.
async fn read_one_answer(stream: &mut TcpStream) -> String {
    let mut received = Vec::new();
    let read = tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 4096];
        loop {
            let text = String::from_utf8_lossy(&received);
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|n| n.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                if received.len() >= end + 4 + length {
                    return;
                }
            }
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "no whole answer within {BOUND:?}");
    String::from_utf8_lossy(&received).into_owned()
}

/// `POST .../shop/sql_get_query` with `query`, as raw HTTP/1.1 on `stream`.
async fn send_sql(emulator: &Emulator, stream: &mut TcpStream, query: &str) {
    let body = serde_json::to_vec(&serde_json::json!({ "query": query })).unwrap();
    let token = &emulator.resource_tokens()["shop"];
    let head = format!(
        "POST /projects/demo/prod/shop/sql_get_query HTTP/1.1\r\nHost: emulator\r\n\
         Authorization: {token}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
}

/// The whole answer to `query` (status line, headers and body) as text.
async fn sql(emulator: &Emulator, query: &str) -> String {
    let mut stream = TcpStream::connect(emulator.local_addr()).await.unwrap();
    send_sql(emulator, &mut stream, query).await;
    let mut received = Vec::new();
    let _ = tokio::time::timeout(BOUND, async {
        let mut buf = [0u8; 65536];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    received.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&received);
                    // One answer, whole: its body ends with the JSON object.
                    if let Some((_, body)) = text.split_once("\r\n\r\n")
                        && body.trim_end().ends_with('}')
                    {
                        return;
                    }
                }
            }
        }
    })
    .await;
    String::from_utf8_lossy(&received).into_owned()
}

const NEVER_ENDS: &str =
    "with recursive c(x) as (select 1 union all select x + 1 from c) select count(*) from c";

#[tokio::test]
async fn sql_stops_at_its_deadline_and_at_its_answer_cap() {
    let emulator = emulator(
        Limits::default()
            .sql_timeout(Duration::from_millis(200))
            .sql_answer_bytes(64 * 1024),
    )
    .await;
    let answer = sql(&emulator, NEVER_ENDS).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("ran longer than 0.2 s"), "{answer}");

    let answer = sql(
        &emulator,
        "with recursive c(x) as (select 1 union all select x + 1 from c limit 5000) \
         select x, hex(zeroblob(100)) from c",
    )
    .await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        answer.contains("larger than 0 MiB") || answer.contains("larger than"),
        "{answer}"
    );

    let answer = sql(&emulator, "select length(randomblob(999999999))").await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(sql(&emulator, "select 1").await.starts_with("HTTP/1.1 200"));
}

#[tokio::test]
async fn a_query_whose_client_went_away_frees_the_resource() {
    // In memory the resource has one connection: a query left running would hold it for the
    // whole limit (60 s, three times the bound, so that a broken protection fails the test
    // rather than hanging it), and the next query would wait as long.
    let emulator = emulator(Limits::default().sql_timeout(Duration::from_secs(60))).await;
    let mut gone = TcpStream::connect(emulator.local_addr()).await.unwrap();
    send_sql(&emulator, &mut gone, NEVER_ENDS).await;
    // Whether the query has started or not when the client leaves, it must not hold on (the
    // pause only makes it likely that the running query is the one interrupted).
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(gone);
    let answer = sql(&emulator, "select 1 as one").await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains(r#""data":[[1]]"#), "{answer}");
}

#[tokio::test]
async fn a_saturated_resource_answers_503_at_once_and_other_routes_keep_answering() {
    let emulator = emulator(
        Limits::default()
            .sql_timeout(Duration::from_secs(60))
            .resource_jobs(1)
            .resource_queue(0),
    )
    .await;
    // A query that holds the resource's one turn until its client goes away.
    let mut holder = TcpStream::connect(emulator.local_addr()).await.unwrap();
    send_sql(&emulator, &mut holder, NEVER_ENDS).await;

    // Once it runs, every other query on the resource is a 503 with Retry-After, at once.
    let busy = tokio::time::timeout(BOUND, async {
        loop {
            let answer = sql(&emulator, "select 1").await;
            if answer.starts_with("HTTP/1.1 503") {
                return answer;
            }
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        }
    })
    .await
    .expect("the resource gets busy");
    assert!(
        busy.to_ascii_lowercase().contains("retry-after: 1"),
        "{busy}"
    );
    assert!(busy.contains("busy"), "{busy}");

    // Other routes: the page settings list and the built-in tools resource.
    let key = emulator.api_key().to_owned();
    let mut pages = TcpStream::connect(emulator.local_addr()).await.unwrap();
    let head = format!(
        "GET /api/projects/demo/prod/view_settings/ HTTP/1.1\r\nHost: emulator\r\n\
         Authorization: Bearer {key}\r\n\r\n"
    );
    pages.write_all(head.as_bytes()).await.unwrap();
    let answer = read_until_closed_or_answered(&mut pages).await;
    assert!(
        answer.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&answer)
    );

    // The holder leaves: the resource answers again.
    drop(holder);
    let freed = tokio::time::timeout(BOUND, async {
        loop {
            if sql(&emulator, "select 1").await.starts_with("HTTP/1.1 200") {
                return;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert!(
        freed.is_ok(),
        "the resource stayed busy after its query's client left"
    );
}
