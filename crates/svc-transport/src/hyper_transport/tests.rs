//! `HyperTransport` against in-test servers on 127.0.0.1.

use std::error::Error as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::test_server::{Reply, TestProxy, TestServer};
use super::*;
use crate::TransportErrorKind;

/// A generous upper bound for anything that should fail fast.
const PROMPTLY: Duration = Duration::from_secs(10);

fn get(url: &str) -> http::Request<Bytes> {
    http::Request::get(url).body(Bytes::new()).unwrap()
}

fn transport() -> HyperTransport {
    HyperTransport::builder()
        .request_timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

fn assert_no_secret(err: &TransportError, secret: &str) {
    let mut texts = vec![err.to_string(), format!("{err:?}")];
    let mut source = err.source();
    while let Some(s) = source {
        texts.push(s.to_string());
        source = s.source();
    }
    for text in texts {
        assert!(!text.contains(secret), "{secret:?} leaked into {text:?}");
    }
}

#[test]
fn is_clone_send_sync_debug() {
    fn assert_traits<T: Clone + Send + Sync + std::fmt::Debug + 'static>() {}
    assert_traits::<HyperTransport>();
    assert_traits::<HyperTransportBuilder>();
    let _: Arc<dyn crate::Transport> = Arc::new(HyperTransport::new());

    let debug = format!("{:?}", HyperTransport::default());
    assert!(debug.contains("request_timeout: 30s"), "{debug}");
    assert!(debug.contains("pool_idle_timeout: 20s"), "{debug}");
    assert!(debug.contains("max_response_bytes: 67108864"), "{debug}");
}

#[tokio::test]
async fn get_with_headers_and_query_round_trip() {
    let server = TestServer::start(|req| Reply::Ok {
        status: 203,
        headers: vec![
            ("content-type".into(), "text/plain".into()),
            (
                "x-seen-id".into(),
                req.header("x-request-id").unwrap_or("-").into(),
            ),
        ],
        body: format!(
            "{} {} host={} auth={}",
            req.method,
            req.target,
            req.header("host").unwrap_or("-"),
            req.header("authorization").unwrap_or("-"),
        )
        .into_bytes(),
    })
    .await;
    let request = http::Request::get(server.url("http", "/v1/things?page=2&q=a%20b"))
        .header("x-request-id", "abc-123")
        .header("authorization", "Bearer t0ken")
        .body(Bytes::new())
        .unwrap();

    let response = transport().send(request).await.unwrap();

    assert_eq!(response.status(), 203);
    assert_eq!(response.version(), http::Version::HTTP_11);
    assert_eq!(response.headers()["content-type"], "text/plain");
    assert_eq!(response.headers()["x-seen-id"], "abc-123");
    let expected = format!(
        "GET /v1/things?page=2&q=a%20b host={} auth=Bearer t0ken",
        server.addr()
    );
    assert_eq!(response.body(), expected.as_str());
}

#[tokio::test]
async fn post_body_round_trip() {
    let server = TestServer::start(|req| {
        assert_eq!(req.method, "POST");
        Reply::Ok {
            status: 201,
            headers: vec![(
                "x-content-type".into(),
                req.header("content-type").unwrap_or("-").into(),
            )],
            body: req.body.clone(),
        }
    })
    .await;
    let body: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
    let request = http::Request::post(server.url("http", "/v1/records"))
        .header("content-type", "application/octet-stream")
        .body(Bytes::from(body.clone()))
        .unwrap();

    let response = transport().send(request).await.unwrap();

    assert_eq!(response.status(), 201);
    assert_eq!(
        response.headers()["x-content-type"],
        "application/octet-stream"
    );
    assert_eq!(response.body().as_ref(), body.as_slice());
}

#[tokio::test]
async fn pooled_connection_is_reused() {
    let server = TestServer::start(|req| Reply::ok(format!("{}", req.on_connection))).await;
    let transport = transport();
    for expected in ["1", "2", "3"] {
        let response = transport.send(get(&server.url("http", "/"))).await.unwrap();
        assert_eq!(response.body(), expected);
    }
}

#[tokio::test]
async fn connection_refused_is_connect_not_sent() {
    // A port that was free a moment ago: nothing listens on it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let request = http::Request::post(format!("http://{addr}/v1/login?api_key=s3cr3t-query"))
        .header("authorization", "Bearer s3cr3t-header")
        .body(Bytes::from_static(b"{\"password\":\"s3cr3t-body\"}"))
        .unwrap();

    let started = Instant::now();
    let err = transport().send(request).await.unwrap_err();

    assert!(started.elapsed() < PROMPTLY);
    assert_eq!(err.kind(), TransportErrorKind::Connect, "{err:?}");
    assert!(err.is_connect());
    assert_eq!(err.was_sent(), Sent::No);
    assert!(err.is_retryable());
    assert_eq!(
        err.to_string(),
        format!("could not connect to {addr}: connection refused; is the server running?")
    );
    assert!(err.source().is_some());
    assert_no_secret(&err, "s3cr3t");
}

#[tokio::test]
async fn silent_server_times_out() {
    let server = TestServer::start(|_| Reply::Hang).await;
    let transport = HyperTransport::builder()
        .request_timeout(Duration::from_millis(300))
        .build()
        .unwrap();

    let started = Instant::now();
    let err = transport
        .send(get(&server.url("http", "/slow")))
        .await
        .unwrap_err();

    assert!(started.elapsed() < PROMPTLY);
    assert_eq!(err.kind(), TransportErrorKind::Timeout, "{err:?}");
    assert!(err.is_timeout());
    assert_eq!(err.was_sent(), Sent::Maybe);
    assert!(err.is_retryable());
    let text = err.to_string();
    assert!(text.contains(&server.addr().to_string()), "{text}");
    assert!(text.contains("300ms"), "{text}");
    assert!(!text.contains("/slow"), "{text}");
}

#[tokio::test]
async fn announced_response_over_the_limit_is_too_large() {
    let server = TestServer::start(|_| Reply::Head {
        content_length: 2048,
        body: vec![b'x'; 2048],
    })
    .await;
    let transport = HyperTransport::builder()
        .max_response_bytes(1024)
        .build()
        .unwrap();

    let err = transport
        .send(get(&server.url("http", "/big")))
        .await
        .unwrap_err();

    assert_eq!(err.kind(), TransportErrorKind::ResponseTooLarge, "{err:?}");
    assert!(!err.is_retryable());
    let text = err.to_string();
    assert!(
        text.contains("(2048 bytes)") && text.contains("1 KiB"),
        "{text}"
    );
    assert!(text.contains("max_response_bytes"), "{text}");
}

#[tokio::test]
async fn chunked_response_over_the_limit_is_too_large() {
    let server = TestServer::start(|req| match req.target.as_str() {
        "/small" => Reply::Chunked {
            body: vec![b'y'; 1024],
        },
        _ => Reply::Chunked {
            body: vec![b'x'; 5000],
        },
    })
    .await;
    let transport = HyperTransport::builder()
        .max_response_bytes(1024)
        .build()
        .unwrap();

    let err = transport
        .send(get(&server.url("http", "/big")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), TransportErrorKind::ResponseTooLarge, "{err:?}");

    // Exactly at the limit is fine.
    let response = transport
        .send(get(&server.url("http", "/small")))
        .await
        .unwrap();
    assert_eq!(response.body().len(), 1024);
}

#[tokio::test]
async fn a_body_in_many_frames_is_read_whole_and_in_order() {
    // Chunks of 1000 bytes: hyper hands the body over in several frames, which the transport
    // joins (a body of one frame is handed on as it came).
    let body: Vec<u8> = (0..4321u32).map(|i| (i % 251) as u8).collect();
    let expected = body.clone();
    let server = TestServer::start(move |req| match req.target.as_str() {
        "/one" => Reply::ok("one frame"),
        _ => Reply::Chunked { body: body.clone() },
    })
    .await;
    let transport = transport();
    let response = transport
        .send(get(&server.url("http", "/many")))
        .await
        .unwrap();
    assert_eq!(response.body().as_ref(), expected.as_slice());
    let response = transport
        .send(get(&server.url("http", "/one")))
        .await
        .unwrap();
    assert_eq!(response.body(), "one frame");
}

#[tokio::test]
async fn head_response_with_large_content_length_is_fine() {
    let server = TestServer::start(|_| Reply::Ok {
        status: 200,
        headers: Vec::new(),
        body: vec![b'x'; 4096],
    })
    .await;
    let transport = HyperTransport::builder()
        .max_response_bytes(1024)
        .build()
        .unwrap();
    let request = http::Request::head(server.url("http", "/"))
        .body(Bytes::new())
        .unwrap();

    let response = transport.send(request).await.unwrap();

    assert_eq!(response.headers()["content-length"], "4096");
    assert!(response.body().is_empty());
}

#[tokio::test]
async fn server_closing_a_kept_alive_connection_then_second_request() {
    // The server answers without `Connection: close`, then closes the connection anyway, as a
    // server does when its keep-alive timer fires.
    let server = TestServer::start(|req| Reply::OkThenClose {
        body: format!("request {}", req.number).into_bytes(),
    })
    .await;
    let transport = transport();

    let first = transport
        .send(get(&server.url("http", "/1")))
        .await
        .unwrap();
    assert_eq!(first.body(), "request 1");
    tokio::time::sleep(Duration::from_millis(100)).await;

    match transport.send(get(&server.url("http", "/2"))).await {
        Ok(second) => assert_eq!(second.status(), 200),
        Err(err) => {
            assert_eq!(err.kind(), TransportErrorKind::Io, "{err:?}");
            assert!(err.is_retryable());
        }
    }
}

#[tokio::test]
async fn connection_closed_before_the_response_is_retryable_io() {
    // The second request the server reads is dropped with the connection, unanswered: hyper
    // reports "connection closed before message completed".
    let server = TestServer::start(|req| match req.number {
        2 => Reply::Close,
        n => Reply::ok(format!("request {n}")),
    })
    .await;
    let transport = transport();

    assert_eq!(
        transport
            .send(get(&server.url("http", "/1")))
            .await
            .unwrap()
            .body(),
        "request 1"
    );
    let err = transport
        .send(get(&server.url("http", "/2?token=s3cr3t")))
        .await
        .unwrap_err();

    assert_eq!(err.kind(), TransportErrorKind::Io, "{err:?}");
    assert_eq!(err.was_sent(), Sent::Maybe);
    assert!(err.is_retryable());
    let text = err.to_string();
    assert!(
        text.contains("closed before a response arrived")
            && text.contains("connection closed before message completed")
            && text.contains("retry only if it is idempotent"),
        "{text}"
    );
    assert_no_secret(&err, "s3cr3t");
    let hyper_err = err
        .source()
        .and_then(|s| s.source())
        .and_then(|s| s.downcast_ref::<hyper::Error>())
        .expect("hyper error in the source chain");
    assert!(hyper_err.is_incomplete_message());

    // The retry, on a fresh connection, works.
    assert_eq!(
        transport
            .send(get(&server.url("http", "/2")))
            .await
            .unwrap()
            .body(),
        "request 3"
    );
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn invalid_uris_are_rejected_without_sending() {
    let transport = transport();
    for uri in ["/only/a/path", "ftp://127.0.0.1:21/file"] {
        let err = transport.send(get(uri)).await.unwrap_err();
        assert_eq!(
            err.kind(),
            TransportErrorKind::InvalidRequest,
            "{uri}: {err:?}"
        );
        assert_eq!(err.was_sent(), Sent::No);
        assert!(!err.is_retryable());
    }
}

#[test]
fn without_a_runtime_the_future_fails_cleanly() {
    let transport = HyperTransport::new();
    let mut future = transport.send(get("http://127.0.0.1:9/"));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(Err(err)) => {
            assert_eq!(err.kind(), TransportErrorKind::Other);
            assert_eq!(err.was_sent(), Sent::No);
            assert!(err.to_string().contains("Tokio runtime"), "{err}");
        }
        other => panic!("expected an immediate error, got {other:?}"),
    }
}

/// A transport that sends everything through `proxy` and ignores the environment's proxies.
fn via_proxy(proxy: &str) -> HyperTransportBuilder {
    HyperTransport::builder()
        .proxy_from_environment(false)
        .proxy(proxy)
}

#[tokio::test]
async fn plain_http_asks_the_proxy_in_absolute_form_with_its_credentials() {
    let proxy = TestProxy::start(Vec::new()).await;
    let transport = via_proxy(&proxy.url(Some("ada:s3cret"))).build().unwrap();

    let response = transport
        .send(get("http://svc.test/v1/items?x=1"))
        .await
        .unwrap();

    // base64("ada:s3cret")
    assert_eq!(
        response.body(),
        "GET http://svc.test/v1/items?x=1 HTTP/1.1|Basic YWRhOnMzY3JldA=="
    );
    assert_eq!(proxy.seen(), ["GET http://svc.test/v1/items?x=1 HTTP/1.1"]);
}

#[tokio::test]
async fn loopback_and_no_proxy_hosts_are_reached_directly() {
    let server = TestServer::start(|req| Reply::ok(format!("direct {}", req.target))).await;
    let proxy = TestProxy::start(Vec::new()).await;
    let port = server.addr().port();

    // A loopback address is never proxied.
    let transport = via_proxy(&proxy.url(None)).build().unwrap();
    let direct = transport
        .send(get(&format!("http://127.0.0.1:{port}/a")))
        .await
        .unwrap();
    assert_eq!(direct.body(), "direct /a");
    assert!(proxy.seen().is_empty(), "{:?}", proxy.seen());

    // A loopback *name* goes by the list: proxied unless listed.
    let proxied = transport
        .send(get(&format!("http://localhost:{port}/b")))
        .await
        .unwrap();
    assert_eq!(
        proxied.body(),
        format!("GET http://localhost:{port}/b HTTP/1.1|").as_str()
    );
    let listed = via_proxy(&proxy.url(None))
        .no_proxy("example.org, localhost")
        .build()
        .unwrap();
    let direct = listed
        .send(get(&format!("http://localhost:{port}/c")))
        .await
        .unwrap();
    assert_eq!(direct.body(), "direct /c");
    assert_eq!(proxy.seen().len(), 1, "{:?}", proxy.seen());
}

#[tokio::test]
async fn an_unreachable_proxy_is_a_connect_error_that_names_it() {
    // A port nothing listens on: bound, then closed.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let transport = via_proxy(&format!("http://ada:s3cret@{addr}"))
        .build()
        .unwrap();

    let err = transport
        .send(get("https://svc.test/v1/items"))
        .await
        .unwrap_err();

    assert!(err.is_connect(), "{err:?}");
    assert_eq!(err.was_sent(), Sent::No);
    let text = err.to_string();
    assert!(
        text.contains(&format!("through the proxy {addr}")),
        "{text}"
    );
    assert!(text.contains("HTTPS_PROXY"), "{text}");
    assert_no_secret(&err, "s3cret");
}

#[test]
fn a_proxy_url_that_is_not_http_is_refused_at_build() {
    for url in ["socks5://127.0.0.1:1080", "127.0.0.1:3128", "http://"] {
        let err = via_proxy(url).build().unwrap_err();
        assert!(err.to_string().contains("proxy URL"), "{url}: {err}");
    }
    // Debug shows where the proxy is, never its password.
    let builder = via_proxy("http://ada:s3cret@proxy.example:3128");
    let debug = format!("{builder:?}");
    assert!(
        debug.contains("proxy.example:3128") && !debug.contains("s3cret"),
        "{debug}"
    );
}

/// The platform's roots load on a machine that has them (CI's Debian has `ca-certificates`).
#[cfg(all(feature = "native-roots", target_os = "linux"))]
#[test]
fn native_roots_load_from_the_platform() {
    let built = HyperTransport::builder()
        .tls_built_in_roots(false)
        .tls_native_roots(true)
        .build();
    assert!(
        built.is_ok(),
        "no platform root certificate loaded ({:?}); install ca-certificates",
        built.err()
    );
}

mod tls {
    use std::sync::Arc;

    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    use tokio_rustls::TlsAcceptor;

    use super::*;

    struct SelfSigned {
        pem: String,
        der: CertificateDer<'static>,
        key: Vec<u8>,
    }

    fn self_signed() -> SelfSigned {
        let certified =
            rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()])
                .unwrap();
        SelfSigned {
            pem: certified.cert.pem(),
            der: certified.cert.der().clone(),
            key: certified.signing_key.serialize_der(),
        }
    }

    fn acceptor(cert: &SelfSigned, alpn: &[&[u8]]) -> TlsAcceptor {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.key.clone()));
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.der.clone()], key)
            .unwrap();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        TlsAcceptor::from(Arc::new(config))
    }

    #[tokio::test]
    async fn https_round_trip_with_a_trusted_self_signed_certificate() {
        let cert = self_signed();
        let server = TestServer::start_tls(acceptor(&cert, &[b"http/1.1"]), |req| {
            Reply::ok(format!("secure {} {}", req.method, req.target))
        })
        .await;
        let transport = HyperTransport::builder()
            .tls_built_in_roots(false)
            .add_root_certificate_pem(cert.pem.as_bytes())
            .unwrap()
            .build()
            .unwrap();

        let response = transport
            .send(get(&server.url("https", "/v1/ping?x=1")))
            .await
            .unwrap();

        assert_eq!(response.status(), 200);
        assert_eq!(response.version(), http::Version::HTTP_11);
        assert_eq!(response.body(), "secure GET /v1/ping?x=1");
    }

    #[tokio::test]
    async fn https_goes_through_a_connect_tunnel() {
        let cert = self_signed();
        let server = TestServer::start_tls(acceptor(&cert, &[b"http/1.1"]), |req| {
            Reply::ok(format!("secure {} {}", req.method, req.target))
        })
        .await;
        let target = format!("localhost:{}", server.addr().port());
        let proxy = TestProxy::start(vec![(target.clone(), server.addr())]).await;
        let transport = via_proxy(&proxy.url(Some("ada:s3cret")))
            .tls_built_in_roots(false)
            .add_root_certificate_pem(cert.pem.as_bytes())
            .unwrap()
            .build()
            .unwrap();

        let response = transport
            .send(get(&format!("https://{target}/v1/ping")))
            .await
            .unwrap();

        // The TLS session ran end to end with the server, inside the tunnel.
        assert_eq!(response.body(), "secure GET /v1/ping");
        assert_eq!(proxy.seen(), [format!("CONNECT {target} HTTP/1.1")]);
    }

    #[tokio::test]
    async fn der_roots_work_too() {
        let cert = self_signed();
        let server = TestServer::start_tls(acceptor(&cert, &[]), |_| Reply::ok("der")).await;
        let transport = HyperTransport::builder()
            .add_root_certificate_der(cert.der.to_vec())
            .build()
            .unwrap();
        let response = transport
            .send(get(&server.url("https", "/")))
            .await
            .unwrap();
        assert_eq!(response.body(), "der");
    }

    #[tokio::test]
    async fn untrusted_certificate_is_connect_not_sent() {
        let cert = self_signed();
        let server = TestServer::start_tls(acceptor(&cert, &[b"http/1.1"]), |_| {
            Reply::ok("must not be reached")
        })
        .await;

        let err = transport()
            .send(get(&server.url("https", "/v1/ping")))
            .await
            .unwrap_err();

        assert_eq!(err.kind(), TransportErrorKind::Connect, "{err:?}");
        assert_eq!(err.was_sent(), Sent::No);
        let text = err.to_string();
        assert!(
            text.starts_with(&format!("could not connect to {}", server.addr())),
            "{text}"
        );
        assert!(text.contains("TLS handshake failed"), "{text}");
        assert!(text.contains("UnknownIssuer"), "{text}");
        assert!(text.contains("add_root_certificate_pem"), "{text}");
        assert_eq!(server.request_count(), 0);
    }

    #[tokio::test]
    async fn alpn_negotiates_http2() {
        use hyper::server::conn::http2;
        use hyper_util::rt::{TokioExecutor, TokioIo};

        let cert = self_signed();
        let acceptor = acceptor(&cert, &[b"h2"]);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            // One connection, then the task ends (and is aborted below in any case).
            let (tcp, _) = listener.accept().await.unwrap();
            let tls = acceptor.accept(tcp).await.unwrap();
            let service = hyper::service::service_fn(
                |req: http::Request<hyper::body::Incoming>| async move {
                    let body = format!("h2 {}", req.uri().path());
                    Ok::<_, std::convert::Infallible>(http::Response::new(
                        http_body_util::Full::new(Bytes::from(body)),
                    ))
                },
            );
            let _ = http2::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
        let transport = HyperTransport::builder()
            .add_root_certificate_pem(cert.pem.as_bytes())
            .unwrap()
            .build()
            .unwrap();

        let response = transport
            .send(get(&format!("https://{addr}/over-h2")))
            .await
            .unwrap();
        server.abort();

        assert_eq!(response.version(), http::Version::HTTP_2);
        assert_eq!(response.body(), "h2 /over-h2");
    }

    #[test]
    fn invalid_pem_is_an_error() {
        let err = HyperTransport::builder()
            .add_root_certificate_pem(b"not a certificate")
            .unwrap_err();
        assert!(err.to_string().contains("holds no certificate"), "{err}");

        let broken = b"-----BEGIN CERTIFICATE-----\n!!!not base64!!!\n-----END CERTIFICATE-----\n";
        let err = HyperTransport::builder()
            .add_root_certificate_pem(broken)
            .unwrap_err();
        assert!(err.to_string().contains("certificate #1"), "{err}");
        assert!(err.source().is_some());

        // Valid PEM framing around bytes that are not a certificate.
        let garbage = b"-----BEGIN CERTIFICATE-----\nAAECAwQ=\n-----END CERTIFICATE-----\n";
        let err = HyperTransport::builder()
            .add_root_certificate_pem(garbage)
            .unwrap_err();
        assert!(err.to_string().contains("cannot be trusted"), "{err}");
    }

    #[test]
    fn invalid_der_fails_the_build() {
        let err = HyperTransport::builder()
            .add_root_certificate_der(vec![1, 2, 3])
            .build()
            .unwrap_err();
        assert!(err.to_string().contains("root certificate #1"), "{err}");
    }

    #[test]
    fn pem_bundles_add_every_certificate() {
        let bundle = format!("{}\n{}", self_signed().pem, self_signed().pem);
        let builder = HyperTransport::builder()
            .add_root_certificate_pem(bundle.as_bytes())
            .unwrap();
        let debug = format!("{builder:?}");
        assert!(debug.contains("extra_roots: 2"), "{debug}");
        assert!(!debug.contains("BEGIN"), "{debug}");
    }
}
