//! The HTTP proxy end to end: the SDK's builder through the emulator to an upstream echo server
//! on loopback. Every body type, headers and query, upstream errors passed through, large
//! bodies both ways, redirects, secrets, https upstreams, and every refusal.
//!
//! Nothing leaves loopback: every server binds `127.0.0.x:0` and stops when dropped, and the
//! non-loopback targets (TEST-NET addresses, names pinned to them) are refused by the
//! allow-list before any connection is attempted.

use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use svc_api::model::account::RegisterRequest;
use svc_api::model::proxy::PROXY_ERROR_HEADER;
use svc_api::{Client, ClientBuilder, Error, RetryPolicy};
use svc_emulator::{Emulator, EmulatorConfig, ProxyConfig};
use svc_transport::Transport;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

// ---------------------------------------------------------------------------------------------
// The upstream: a small hyper server.

/// An upstream server on loopback; stops (with every open connection) when dropped.
struct Upstream {
    addr: SocketAddr,
    /// Connections accepted so far.
    connections: Arc<AtomicUsize>,
    task: tokio::task::AbortHandle,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Upstream {
    async fn start() -> Self {
        Self::start_on(IpAddr::V4(Ipv4Addr::LOCALHOST))
            .await
            .expect("an upstream on 127.0.0.1")
    }

    async fn start_on(ip: IpAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind((ip, 0)).await?;
        let addr = listener.local_addr()?;
        let connections = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&connections);
        let task = tokio::spawn(async move {
            // Dropping the set (when the task is aborted) aborts every connection.
            let mut open = JoinSet::new();
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                counter.fetch_add(1, Ordering::SeqCst);
                open.spawn(async move {
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service_fn(answer))
                        .await;
                });
                while open.try_join_next().is_some() {}
            }
        });
        Ok(Self {
            addr,
            connections,
            task: task.abort_handle(),
        })
    }

    /// `http://127.0.0.1:PORT{path}`.
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// The upstream's routes:
/// - `/echo...`: `200` JSON of the method, path, query, headers and body received;
/// - `/mirror`: the body sent back as is, with the request's `Content-Type`;
/// - `/status/{code}`: that status with a `application/problem+json` body;
/// - `/sleep/{ms}`: waits, then `200`;
/// - `/redirect/{code}?to={url}`: that status with `Location: {url}` (verbatim);
/// - `/loop`: redirects to itself;
/// - `/bytes/{n}`: `n` bytes.
async fn answer(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    let path = parts.uri.path().to_owned();
    let query = parts.uri.query().unwrap_or_default().to_owned();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let response = Response::builder();
    let response = match segments.as_slice() {
        ["echo", ..] => {
            let mut headers = serde_json::Map::new();
            for name in parts.headers.keys() {
                let values: Vec<Value> = parts
                    .headers
                    .get_all(name)
                    .iter()
                    .map(|v| Value::String(String::from_utf8_lossy(v.as_bytes()).into_owned()))
                    .collect();
                headers.insert(name.as_str().to_owned(), Value::Array(values));
            }
            let echo = json!({
                "method": parts.method.as_str(),
                "path": path,
                "query": query,
                "headers": headers,
                "body": String::from_utf8_lossy(&body),
                "body_len": body.len(),
            });
            response
                .header("content-type", "application/json")
                .header("x-echo", "yes")
                .header("etag", "\"e1\"")
                .header("set-cookie", "a=1")
                .header("set-cookie", "b=2")
                .body(Full::new(Bytes::from(echo.to_string())))
        }
        ["mirror"] => {
            let content_type = parts
                .headers
                .get("content-type")
                .cloned()
                .unwrap_or_else(|| "application/octet-stream".parse().unwrap());
            response
                .header("content-type", content_type)
                .body(Full::new(body))
        }
        ["status", code] => response
            .status(code.parse::<u16>().unwrap_or(500))
            .header("content-type", "application/problem+json")
            .body(Full::new(Bytes::from(format!(
                r#"{{"upstream_status": {code}, "detail": "from the upstream"}}"#
            )))),
        ["sleep", ms] => {
            tokio::time::sleep(Duration::from_millis(ms.parse().unwrap_or(0))).await;
            response.body(Full::new(Bytes::from_static(b"slept")))
        }
        ["redirect", code] => response
            .status(code.parse::<u16>().unwrap_or(302))
            .header("location", query.strip_prefix("to=").unwrap_or("/"))
            .body(Full::new(Bytes::new())),
        ["loop"] => response
            .status(302)
            .header("location", "/loop")
            .body(Full::new(Bytes::new())),
        ["bytes", n] => {
            let n: usize = n.parse().unwrap_or(0);
            let bytes: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            response
                .header("content-type", "application/octet-stream")
                .body(Full::new(Bytes::from(bytes)))
        }
        _ => response.status(404).body(Full::new(Bytes::new())),
    };
    Ok(response.unwrap())
}

// ---------------------------------------------------------------------------------------------
// Emulator and clients.

async fn emulator_with(proxy: ProxyConfig) -> Emulator {
    Emulator::start(EmulatorConfig::default().proxy(proxy))
        .await
        .expect("the emulator starts")
}

/// A service token of the demo project, minted through the emulator-only route.
async fn service_token(emulator: &Emulator) -> String {
    let url = format!(
        "{}/_emulator/projects/demo/service_token",
        emulator.api_base_url()
    );
    let (status, _, body) = post(
        &url,
        Some(&format!("Bearer {}", emulator.api_key())),
        Bytes::new(),
    )
    .await;
    assert_eq!(status, 200);
    let body: Value = serde_json::from_slice(&body).unwrap();
    body["token"].as_str().unwrap().to_owned()
}

/// A client of the demo project with no API key: the proxy takes `JWT` only.
fn anonymous(emulator: &Emulator) -> ClientBuilder {
    Client::builder()
        .project(emulator.project().as_str())
        .api_base_url(emulator.api_base_url())
        .app_base_url(emulator.app_base_url())
        .retry(RetryPolicy::none())
}

async fn service_client(emulator: &Emulator) -> Client {
    let token = service_token(emulator).await;
    anonymous(emulator).service_token(token).build().unwrap()
}

/// A raw POST: status, headers and body.
async fn post(
    url: &str,
    authorization: Option<&str>,
    body: Bytes,
) -> (u16, http::HeaderMap, Bytes) {
    let transport = svc_transport::HyperTransport::new();
    let mut request = http::Request::builder()
        .method("POST")
        .uri(url)
        .header("content-type", "application/json");
    if let Some(auth) = authorization {
        request = request.header("authorization", auth);
    }
    let response = transport
        .send(request.body(body).unwrap())
        .await
        .expect("an answer");
    let (parts, body) = response.into_parts();
    (parts.status.as_u16(), parts.headers, body)
}

fn proxy_url(emulator: &Emulator) -> String {
    format!("{}/proxy_request/", emulator.app_base_url())
}

/// The proxy's own error: status and `error_code`.
fn proxy_error(result: Result<svc_api::ProxyResponse, Error>) -> (u16, String, String) {
    let error = result.expect_err("a proxy error");
    let api = error
        .api()
        .unwrap_or_else(|| panic!("an API error: {error}"));
    (
        api.status.as_u16(),
        api.body.error_code().unwrap_or_default().to_owned(),
        api.body.error().unwrap_or_default().to_owned(),
    )
}

fn echo(response: &svc_api::ProxyResponse) -> Value {
    assert_eq!(response.status, 200, "{}", response.text_lossy());
    response.json().unwrap()
}

// ---------------------------------------------------------------------------------------------
// Forwarding.

#[tokio::test]
async fn json_body_headers_and_query_are_forwarded() {
    let upstream = Upstream::start().await;
    let emulator = emulator_with(ProxyConfig::new()).await;
    let client = service_client(&emulator).await;

    let response = client
        .proxy()
        .post(upstream.url("/echo/orders?x=1"))
        .query("a b", "c&d=é")
        .query("x", "2")
        .header("X-Custom", "one")
        .header("x-custom", "two")
        .header("Accept", "application/json")
        .header("Host", "ignored.example")
        .json(&json!({"total": 12.5, "items": [1, 2]}))
        .send()
        .await
        .unwrap();
    let echo = echo(&response);
    assert_eq!(echo["method"], "POST");
    assert_eq!(echo["path"], "/echo/orders");
    assert_eq!(echo["query"], "x=1&a%20b=c%26d%3D%C3%A9&x=2");
    assert_eq!(echo["headers"]["x-custom"], json!(["one", "two"]));
    assert_eq!(echo["headers"]["accept"], json!(["application/json"]));
    assert_eq!(echo["headers"]["content-type"], json!(["application/json"]));
    assert_eq!(
        echo["headers"]["host"],
        json!([upstream.addr.to_string()]),
        "Host comes from the URL"
    );
    assert!(
        echo["headers"].get("authorization").is_none(),
        "the JWT is not forwarded"
    );
    let sent: Value = serde_json::from_str(echo["body"].as_str().unwrap()).unwrap();
    assert_eq!(sent, json!({"total": 12.5, "items": [1, 2]}));

    // The upstream's headers: Content-Type as is, the others under their own names in the SDK.
    assert_eq!(response.content_type(), Some("application/json"));
    assert_eq!(response.headers["x-echo"], "yes");
    assert_eq!(response.headers["etag"], "\"e1\"");
    assert_eq!(response.headers.get_all("set-cookie").iter().count(), 2);

    // On the wire they carry the `x-svc-upstream-` prefix, and no proxy error marker.
    let token = service_token(&emulator).await;
    let body = json!({"url": upstream.url("/echo")}).to_string();
    let (status, headers, _) = post(
        &proxy_url(&emulator),
        Some(&format!("JWT {token}")),
        body.into(),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(headers["x-svc-upstream-x-echo"], "yes");
    assert_eq!(headers["content-type"], "application/json");
    assert!(headers.get("x-echo").is_none() && headers.get("set-cookie").is_none());
    assert!(headers.get(PROXY_ERROR_HEADER).is_none());
}

#[tokio::test]
async fn every_body_type_and_method() {
    let upstream = Upstream::start().await;
    let emulator = emulator_with(ProxyConfig::new()).await;
    let client = service_client(&emulator).await;
    let proxy = client.proxy();

    // GraphQL: {query, variables} as JSON; without variables, the query alone.
    let e = echo(
        &proxy
            .post(upstream.url("/echo/graphql"))
            .graphql(
                "query Order($id: ID!) { order(id: $id) { total } }",
                &json!({"id": "7"}),
            )
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["headers"]["content-type"], json!(["application/json"]));
    let sent: Value = serde_json::from_str(e["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        sent,
        json!({"query": "query Order($id: ID!) { order(id: $id) { total } }", "variables": {"id": "7"}})
    );
    let e = echo(
        &proxy
            .post(upstream.url("/echo"))
            .graphql("{ me { id } }", &())
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["body"], r#"{"query":"{ me { id } }"}"#);

    // URL-encoded form, fields in order, names repeated.
    let e = echo(
        &proxy
            .post(upstream.url("/echo"))
            .form([("name", "Zoë & co"), ("tag", "a"), ("tag", "b+c")])
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(
        e["headers"]["content-type"],
        json!(["application/x-www-form-urlencoded"])
    );
    assert_eq!(e["body"], "name=Zo%C3%AB+%26+co&tag=a&tag=b%2Bc");

    // Multipart form: the proxy's boundary wins over a Content-Type given in the headers.
    let e = echo(
        &proxy
            .put(upstream.url("/echo"))
            .header("Content-Type", "text/plain")
            .multipart([("title", "Line 1\r\nLine 2"), ("n", "2")])
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["method"], "PUT");
    let content_type = e["headers"]["content-type"][0].as_str().unwrap();
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .unwrap_or_else(|| panic!("{content_type}"));
    assert_eq!(
        e["body"],
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nLine 1\r\nLine 2\r\n\
             --{boundary}\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\n2\r\n--{boundary}--\r\n"
        )
    );

    // Raw: the text as given, with the caller's Content-Type, else text/plain.
    let e = echo(
        &proxy
            .patch(upstream.url("/echo"))
            .header("content-type", "text/csv")
            .raw("id,total\n1,12.5\n")
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["method"], "PATCH");
    assert_eq!(e["headers"]["content-type"], json!(["text/csv"]));
    assert_eq!(e["body"], "id,total\n1,12.5\n");
    let e = echo(
        &proxy
            .post(upstream.url("/echo"))
            .raw("<x/>")
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(
        e["headers"]["content-type"],
        json!(["text/plain; charset=utf-8"])
    );

    // JSON with the caller's Content-Type.
    let e = echo(
        &proxy
            .post(upstream.url("/echo"))
            .header("Content-Type", "application/vnd.api+json")
            .json(&json!([null, true]))
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(
        e["headers"]["content-type"],
        json!(["application/vnd.api+json"])
    );
    assert_eq!(e["body"], "[null,true]");

    // No body: GET and DELETE send none; HEAD answers without a body.
    let e = echo(&proxy.get(upstream.url("/echo")).send().await.unwrap());
    assert_eq!(
        (e["method"].as_str(), e["body_len"].as_u64()),
        (Some("GET"), Some(0))
    );
    assert!(e["headers"].get("content-type").is_none());
    let e = echo(&proxy.delete(upstream.url("/echo")).send().await.unwrap());
    assert_eq!(e["method"], "DELETE");
    let head = proxy
        .request(http::Method::HEAD, upstream.url("/echo"))
        .send()
        .await
        .unwrap();
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    assert_eq!(head.headers["x-echo"], "yes");
}

#[tokio::test]
async fn upstream_error_statuses_pass_through_unchanged() {
    let upstream = Upstream::start().await;
    let emulator = emulator_with(ProxyConfig::new()).await;
    let token = service_token(&emulator).await;
    // The default retry policy: upstream answers are never retried, whatever their status.
    let client = anonymous(&emulator)
        .retry(RetryPolicy::default())
        .service_token(token)
        .build()
        .unwrap();
    for code in [400u16, 401, 403, 404, 409, 429, 500, 502, 503, 504] {
        let before = upstream.connections();
        let response = client
            .proxy()
            .get(upstream.url(&format!("/status/{code}")))
            .send()
            .await
            .unwrap_or_else(|e| panic!("{code}: the upstream's answer, not an error: {e}"));
        assert_eq!(response.status.as_u16(), code);
        assert_eq!(response.content_type(), Some("application/problem+json"));
        assert_eq!(
            response.text(),
            Some(
                format!(r#"{{"upstream_status": {code}, "detail": "from the upstream"}}"#).as_str()
            )
        );
        assert!(response.headers.get(PROXY_ERROR_HEADER).is_none());
        assert_eq!(upstream.connections(), before + 1, "{code}: sent once");
    }
    let missing = client
        .proxy()
        .get(upstream.url("/nothing-here"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status, 404);
    assert!(missing.body.is_empty());
}

#[tokio::test]
async fn large_bodies_both_ways() {
    const SIZE: usize = 5 * 1024 * 1024;
    let upstream = Upstream::start().await;
    let emulator = emulator_with(ProxyConfig::new()).await;
    let client = service_client(&emulator).await;

    let text: String = (0..SIZE).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    let mirrored = client
        .proxy()
        .post(upstream.url("/mirror"))
        .header("Content-Type", "text/plain")
        .raw(text.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(mirrored.status, 200);
    assert_eq!(mirrored.body.len(), SIZE);
    assert!(mirrored.body == text.as_bytes());
    assert_eq!(mirrored.content_type(), Some("text/plain"));

    let downloaded = client
        .proxy()
        .get(upstream.url(&format!("/bytes/{SIZE}")))
        .send()
        .await
        .unwrap();
    assert_eq!(downloaded.body.len(), SIZE);
    assert!(downloaded.body == text.as_bytes());

    // Over the proxy's limit of 32 MiB: a 502 from the proxy, not a truncated answer.
    let (status, code, message) = proxy_error(
        client
            .proxy()
            .get(upstream.url(&format!("/bytes/{}", 32 * 1024 * 1024 + 1)))
            .send()
            .await,
    );
    assert_eq!((status, code.as_str()), (502, "bad_gateway"), "{message}");

    // A JSON body of the same size.
    let big = json!({"blob": text});
    let e = echo(
        &client
            .proxy()
            .post(upstream.url("/echo"))
            .json(&big)
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["body_len"], SIZE + r#"{"blob":""}"#.len());
}

#[tokio::test]
async fn a_user_session_works_like_a_service_token() {
    let upstream = Upstream::start().await;
    let emulator = emulator_with(ProxyConfig::new()).await;
    let client = anonymous(&emulator).build().unwrap();
    // Not signed in: refused before sending.
    let err = client
        .proxy()
        .get(upstream.url("/echo"))
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    assert_eq!(upstream.connections(), 0);

    let registered = client
        .account()
        .register(&RegisterRequest::new("ana@example.com", "correct horse"))
        .await
        .unwrap();
    assert!(registered.result);
    let signed_in = client
        .account()
        .login("ana@example.com", "correct horse")
        .await
        .unwrap();
    let e = echo(
        &client
            .proxy()
            .get(upstream.url("/echo"))
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["method"], "GET");

    // The refresh token is not an access token: 401.
    let refresh = anonymous(&emulator)
        .service_token(signed_in.token.refresh_token.clone())
        .build()
        .unwrap();
    let (status, code, _) = proxy_error(refresh.proxy().get(upstream.url("/echo")).send().await);
    assert_eq!((status, code.as_str()), (401, "not_authenticated"));
}

#[tokio::test]
async fn secret_tokens_are_inserted_by_name() {
    let upstream = Upstream::start().await;
    let emulator = emulator_with(ProxyConfig::new().secret("PARTNER_KEY", "pk_s3cr3t")).await;
    let client = service_client(&emulator).await;
    let e = echo(
        &client
            .proxy()
            .post(upstream.url("/echo"))
            .secret_token("PARTNER_KEY")
            .header("Authorization", "Bearer {{secret:PARTNER_KEY}}")
            .query("key", "{{secret:PARTNER_KEY}}")
            .json(&json!({"key": "{{secret:PARTNER_KEY}}", "other": "{{secret:NOT_NAMED}}"}))
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["headers"]["authorization"], json!(["Bearer pk_s3cr3t"]));
    assert_eq!(e["query"], "key=pk_s3cr3t");
    assert_eq!(
        e["body"],
        r#"{"key":"pk_s3cr3t","other":"{{secret:NOT_NAMED}}"}"#
    );
    // Without naming it, the placeholder is sent as written.
    let e = echo(
        &client
            .proxy()
            .get(upstream.url("/echo"))
            .header("X-Key", "{{secret:PARTNER_KEY}}")
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["headers"]["x-key"], json!(["{{secret:PARTNER_KEY}}"]));
    // An unknown name is a 400, before anything is sent.
    let before = upstream.connections();
    let (status, _, message) = proxy_error(
        client
            .proxy()
            .get(upstream.url("/echo"))
            .secret_token("NOPE")
            .send()
            .await,
    );
    assert_eq!(status, 400, "{message}");
    assert_eq!(upstream.connections(), before);
}

// ---------------------------------------------------------------------------------------------
// Refusals.

#[tokio::test]
async fn requests_without_a_valid_jwt_are_401() {
    let upstream = Upstream::start().await;
    let emulator = emulator_with(ProxyConfig::new()).await;
    let token = service_token(&emulator).await;
    let body = || Bytes::from(json!({"url": upstream.url("/echo")}).to_string());
    let api_key = format!("Bearer {}", emulator.api_key());
    let tampered = format!("JWT {token}x");
    let raw_token = token.clone();
    for authorization in [
        None,
        Some(api_key.as_str()),
        Some(tampered.as_str()),
        Some(raw_token.as_str()),
        Some("JWT not.a.jwt"),
        Some("JWT "),
    ] {
        let (status, headers, answer) = post(&proxy_url(&emulator), authorization, body()).await;
        assert_eq!(status, 401, "{authorization:?}");
        assert_eq!(headers[PROXY_ERROR_HEADER], "1");
        let answer: Value = serde_json::from_slice(&answer).unwrap();
        assert_eq!(answer["error_code"], "not_authenticated");
    }
    // Through the SDK: an Error::Api, not an upstream answer.
    let client = anonymous(&emulator)
        .service_token(format!("{token}x"))
        .build()
        .unwrap();
    let result = client.proxy().get(upstream.url("/echo")).send().await;
    let (status, code, _) = proxy_error(result);
    assert_eq!((status, code.as_str()), (401, "not_authenticated"));
    assert_eq!(upstream.connections(), 0, "nothing was forwarded");
}

#[tokio::test]
async fn another_project_environment_or_resource_is_refused() {
    let upstream = Upstream::start().await;
    let emulator = emulator_with(ProxyConfig::new()).await;
    let client = service_client(&emulator).await;
    let url = upstream.url("/echo");
    let (status, code, _) = proxy_error(client.proxy().get(&url).project("other").send().await);
    assert_eq!((status, code.as_str()), (403, "permission_denied"));
    let (status, _, _) = proxy_error(client.proxy().get(&url).environment("qa").send().await);
    assert_eq!(status, 404);
    let (status, _, _) = proxy_error(client.proxy().get(&url).resource("ghost").send().await);
    assert_eq!(status, 404);
    assert_eq!(upstream.connections(), 0);
    // The project's own environment and resource are fine.
    let e = echo(
        &client
            .proxy()
            .get(&url)
            .project("demo")
            .environment("staging")
            .resource("shop")
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["method"], "GET");
    // A malformed request is a 400.
    let (status, _, _) = proxy_error(client.proxy().get("ftp://127.0.0.1/").send().await);
    assert_eq!(status, 400);
    let (status, _, _) = proxy_error(client.proxy().get("http://u:p@127.0.0.1/").send().await);
    assert_eq!(status, 400);
}

/// Asserts a `403` from the allow-list check (its own error code), quickly: no connection was
/// even tried.
async fn assert_not_allowed(client: &Client, url: &str) -> String {
    let started = Instant::now();
    let (status, code, message) = proxy_error(client.proxy().get(url).send().await);
    assert_eq!(
        (status, code.as_str()),
        (403, "target_not_allowed"),
        "{url}: {message}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{url}: refused before connecting"
    );
    message
}

#[tokio::test]
async fn targets_off_the_allow_list_are_403_before_any_connection() {
    let upstream = Upstream::start().await;
    let emulator = emulator_with(
        ProxyConfig::new()
            // Names pinned to addresses: no DNS query leaves the machine.
            .resolve("partner.test", ["192.0.2.10".parse().unwrap()])
            .resolve(
                "mixed.test",
                ["127.0.0.1".parse().unwrap(), "192.0.2.11".parse().unwrap()],
            )
            .resolve("local.test", ["127.0.0.1".parse().unwrap()]),
    )
    .await;
    let client = service_client(&emulator).await;
    // Literal addresses outside loopback (TEST-NET, private, link-local, unspecified).
    for url in [
        "http://192.0.2.1/",
        "http://10.255.255.1:8080/x",
        "https://198.51.100.7/",
        "http://169.254.169.254/latest/meta-data/",
        "http://0.0.0.0/",
        "http://[::ffff:192.0.2.1]/",
        "http://[fe80::1]/",
    ] {
        assert_not_allowed(&client, url).await;
    }
    // Names resolving to other addresses; one bad address among good ones is enough.
    let m = assert_not_allowed(&client, "http://partner.test/").await;
    assert!(m.contains("192.0.2.10"), "{m}");
    let m = assert_not_allowed(
        &client,
        &format!("http://mixed.test:{}/echo", upstream.addr.port()),
    )
    .await;
    assert!(m.contains("192.0.2.11"), "{m}");
    assert_eq!(upstream.connections(), 0);

    // Names resolving to loopback only are allowed: `localhost` (the system's resolver, from
    // the hosts file) and a pinned name.
    let port = upstream.addr.port();
    let e = echo(
        &client
            .proxy()
            .get(format!("http://localhost:{port}/echo"))
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["headers"]["host"], json!([format!("localhost:{port}")]));
    let e = echo(
        &client
            .proxy()
            .get(format!("http://local.test:{port}/echo"))
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["headers"]["host"], json!([format!("local.test:{port}")]));
}

#[tokio::test]
async fn the_allow_list_is_checked_before_connecting() {
    // An upstream on 127.0.0.2 (loopback, but not on this emulator's list): the refusal
    // happens before any connection, which the upstream would have counted.
    let Ok(upstream) = Upstream::start_on("127.0.0.2".parse().unwrap()).await else {
        eprintln!("127.0.0.2 is not available here; skipped");
        return;
    };
    let allowed = Upstream::start().await;
    let emulator = emulator_with(ProxyConfig::new().allow(["127.0.0.1"])).await;
    let client = service_client(&emulator).await;
    assert_not_allowed(&client, &upstream.url("/echo")).await;
    assert_eq!(upstream.connections(), 0);
    echo(
        &client
            .proxy()
            .get(allowed.url("/echo"))
            .send()
            .await
            .unwrap(),
    );

    // The same upstream once its address is on the list.
    let open = emulator_with(ProxyConfig::new().allow(["127.0.0.2", "loopback"])).await;
    let client = service_client(&open).await;
    echo(
        &client
            .proxy()
            .get(upstream.url("/echo"))
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(upstream.connections(), 1);

    // An empty list refuses everything.
    let closed = emulator_with(ProxyConfig::new().allow(Vec::<String>::new())).await;
    let client = service_client(&closed).await;
    assert_not_allowed(&client, &allowed.url("/echo")).await;
}

#[tokio::test]
async fn redirects_are_followed_only_on_the_allow_list() {
    let upstream = Upstream::start().await;
    let emulator =
        emulator_with(ProxyConfig::new().resolve("partner.test", ["192.0.2.10".parse().unwrap()]))
            .await;
    let client = service_client(&emulator).await;
    let proxy = client.proxy();

    // 302 after a POST: a GET without body; 307: the same method and body.
    let e = echo(
        &proxy
            .post(upstream.url("/redirect/302?to=/echo/after"))
            .json(&json!({"a": 1}))
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(
        (e["method"].as_str(), e["path"].as_str()),
        (Some("GET"), Some("/echo/after"))
    );
    assert_eq!(e["body_len"], 0);
    let e = echo(
        &proxy
            .post(upstream.url("/redirect/307?to=/echo/kept"))
            .json(&json!({"a": 1}))
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(
        (e["method"].as_str(), e["body"].as_str()),
        (Some("POST"), Some(r#"{"a":1}"#))
    );

    // To another origin on the list: credentials are not carried over.
    let other_origin = format!("http://localhost:{}/echo/moved", upstream.addr.port());
    let e = echo(
        &proxy
            .get(upstream.url(&format!("/redirect/301?to={other_origin}")))
            .header("Authorization", "Bearer partner-token")
            .header("Cookie", "session=1")
            .header("X-Kept", "yes")
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["path"], "/echo/moved");
    assert!(e["headers"].get("authorization").is_none());
    assert!(e["headers"].get("cookie").is_none());
    assert_eq!(e["headers"]["x-kept"], json!(["yes"]));

    // Off the list: 403, and the redirect's target is never contacted.
    for target in [
        "http://192.0.2.1/steal",
        "http://partner.test/",
        "//10.0.0.1/x",
    ] {
        let m = assert_not_allowed(
            &client,
            &upstream.url(&format!("/redirect/302?to={target}")),
        )
        .await;
        assert!(m.contains("redirected"), "{m}");
    }

    // Too many redirects: 502.
    let (status, code, _) = proxy_error(proxy.get(upstream.url("/loop")).send().await);
    assert_eq!((status, code.as_str()), (502, "bad_gateway"));
    // A redirect the proxy cannot follow is the upstream's answer.
    let answer = proxy
        .get(upstream.url("/redirect/302?to=ftp://127.0.0.1/file"))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status, 302);
    assert_eq!(answer.headers["location"], "ftp://127.0.0.1/file");
}

/// Regression: a redirect to another origin dropped `Authorization` and `Cookie` but carried
/// on the custom headers a secret had been substituted into.
#[tokio::test]
async fn a_redirect_to_another_origin_carries_no_substituted_secret() {
    let upstream = Upstream::start().await;
    let emulator = emulator_with(ProxyConfig::new().secret("PARTNER_KEY", "pk_s3cr3t")).await;
    let client = service_client(&emulator).await;
    let proxy = client.proxy();
    let other_origin = format!("http://localhost:{}/echo/moved", upstream.addr.port());
    let with_secret_header = |path: &str| {
        proxy
            .get(upstream.url(path))
            .secret_token("PARTNER_KEY")
            .header("X-Api-Key", "{{secret:PARTNER_KEY}}")
            .header("X-Plain", "kept")
    };

    // On the same origin the header follows the redirect, secret and all.
    let e = echo(
        &with_secret_header("/redirect/302?to=/echo/same")
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["path"], "/echo/same");
    assert_eq!(e["headers"]["x-api-key"], json!(["pk_s3cr3t"]));
    // To another origin it does not; a header without a secret still does.
    let e = echo(
        &with_secret_header(&format!("/redirect/302?to={other_origin}"))
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(e["path"], "/echo/moved");
    assert!(e["headers"].get("x-api-key").is_none(), "{e}");
    assert_eq!(e["headers"]["x-plain"], json!(["kept"]));
    assert!(!e.to_string().contains("pk_s3cr3t"), "{e}");

    // A `307` keeps the body: one with a secret in it is not sent to another origin, and the
    // redirect is the answer.
    let before = upstream.connections();
    let answer = proxy
        .post(upstream.url(&format!("/redirect/307?to={other_origin}")))
        .secret_token("PARTNER_KEY")
        .json(&json!({"key": "{{secret:PARTNER_KEY}}"}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status, 307);
    assert_eq!(answer.headers["location"], other_origin.as_str());
    assert_eq!(
        upstream.connections(),
        before + 1,
        "the other origin is not contacted"
    );
    // A body without a secret follows the `307` as before.
    let e = echo(
        &proxy
            .post(upstream.url(&format!("/redirect/307?to={other_origin}")))
            .json(&json!({"a": 1}))
            .send()
            .await
            .unwrap(),
    );
    assert_eq!(
        (e["path"].as_str(), e["body"].as_str()),
        (Some("/echo/moved"), Some(r#"{"a":1}"#))
    );
}

/// Regression: an upstream's `101 Switching Protocols` was passed on to the caller, whose
/// connection then waited for a protocol that never came.
#[tokio::test]
async fn an_upstream_that_switches_protocols_is_502() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let upstream = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 1024];
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        let _ = stream
            .write_all(
                b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n",
            )
            .await;
        // Stay open, as an upgraded connection would, until the proxy lets go.
        let _ = stream.read(&mut buf).await;
    });
    let emulator = emulator_with(ProxyConfig::new()).await;
    let client = service_client(&emulator).await;
    let (status, code, message) = proxy_error(
        client
            .proxy()
            .get(format!("http://{addr}/socket"))
            .send()
            .await,
    );
    assert_eq!((status, code.as_str()), (502, "bad_gateway"), "{message}");
    assert!(
        message.contains("101") && message.contains("upgrade"),
        "{message}"
    );
    upstream.abort();
}

#[tokio::test]
async fn an_unreachable_upstream_is_502() {
    // A port that was just free: nothing listens on it.
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let emulator = emulator_with(ProxyConfig::new()).await;
    let client = service_client(&emulator).await;
    let (status, code, message) = proxy_error(
        client
            .proxy()
            .get(format!("http://127.0.0.1:{port}/"))
            .send()
            .await,
    );
    assert_eq!((status, code.as_str()), (502, "bad_gateway"), "{message}");
    let err = client
        .proxy()
        .get(format!("http://127.0.0.1:{port}/"))
        .send()
        .await
        .unwrap_err();
    assert!(err.is_retryable());
}

#[tokio::test]
async fn a_slow_upstream_is_a_timeout() {
    let upstream = Upstream::start().await;
    let emulator = emulator_with(ProxyConfig::new().timeout(Duration::from_millis(300))).await;
    let client = service_client(&emulator).await;
    let started = Instant::now();
    let (status, code, _) =
        proxy_error(client.proxy().get(upstream.url("/sleep/5000")).send().await);
    assert_eq!((status, code.as_str()), (504, "gateway_timeout"));
    assert!(started.elapsed() < Duration::from_secs(3));
    // A quick answer within the limit is fine.
    let quick = client
        .proxy()
        .get(upstream.url("/sleep/10"))
        .send()
        .await
        .unwrap();
    assert_eq!(quick.text(), Some("slept"));
}

#[tokio::test]
async fn https_upstreams_with_a_trusted_root() {
    // The upstream: another emulator, over TLS, answering its project with an API key.
    let upstream = Emulator::start(EmulatorConfig::default().tls(true))
        .await
        .unwrap();
    let ca = upstream.tls_ca_pem().unwrap().to_vec();
    let url = format!("{}/projects/demo/", upstream.app_base_url());
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let authorization = format!("Bearer {}", upstream.api_key());

    let trusting = emulator_with(ProxyConfig::new().root_certificate_pem(ca)).await;
    let client = service_client(&trusting).await;
    let project: Value = client
        .proxy()
        .get(&url)
        .header("Authorization", &authorization)
        .send()
        .await
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(project["unique_name"], "demo");

    // Without the root, the handshake fails: 502.
    let other = emulator_with(ProxyConfig::new()).await;
    let client = service_client(&other).await;
    let (status, _, message) = proxy_error(
        client
            .proxy()
            .get(&url)
            .header("Authorization", &authorization)
            .send()
            .await,
    );
    assert_eq!(status, 502, "{message}");
}
