//! Logic above the transport, against a replay transport: URLs, credentials, retries,
//! idempotency, `Retry-After`, timeouts, decoding, and the record stream's termination.
//! (End-to-end behaviour against the emulator is tested in the `svc-tests` crate.)

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::TryStreamExt;
use serde_json::json;
use svc_api::model::records::{ListQuery, Lookup};
use svc_api::model::{PageSettings, UpdatePageSettings};
use svc_api::transport::replay::ReplayTransport;
use svc_api::transport::{BoxFuture, TransportError, TransportErrorKind};
use svc_api::{Client, Error, RetryPolicy, Sent, Sleep};

/// A timer that does not wait, and remembers what it was asked.
#[derive(Debug, Clone, Default)]
struct NoWait(Arc<Mutex<Vec<Duration>>>);

impl Sleep for NoWait {
    fn sleep(&self, d: Duration) -> BoxFuture<'static, ()> {
        self.0.lock().unwrap().push(d);
        Box::pin(async {})
    }
}

fn client(replay: &ReplayTransport, sleep: &NoWait) -> Client {
    Client::builder()
        .project("acme")
        .api_key("svc_key_secret")
        .api_base_url("http://data.test")
        .allow_insecure_http(true)
        .app_base_url("http://app.test/api/")
        .transport(replay.clone())
        .sleep(sleep.clone())
        .build()
        .unwrap()
}

fn with_header(status: u16, name: &str, value: &str, body: &str) -> http::Response<Bytes> {
    http::Response::builder()
        .status(status)
        .header(name, value)
        .body(Bytes::from(body.to_owned()))
        .unwrap()
}

#[tokio::test]
async fn pages_paths_draft_and_bearer_key() {
    let replay = ReplayTransport::new()
        .push(200, "[]")
        .push(200, r#"{"uid": "a/b ?#%é"}"#)
        .push(200, r#"{"uid": "x"}"#)
        .push(204, "");
    let c = client(&replay, &NoWait::default());
    assert!(c.pages().list().await.unwrap().is_empty());
    c.pages().draft(true).get("a/b ?#%é").await.unwrap();
    c.pages()
        .environment("staging")
        .update("x", &UpdatePageSettings::from_params_json("{}").unwrap())
        .await
        .unwrap();
    c.pages().delete("x").await.unwrap();

    let sent = replay.requests();
    assert_eq!(
        sent[0].uri,
        "http://app.test/api/projects/acme/prod/view_settings/"
    );
    assert_eq!(
        sent[1].uri,
        "http://app.test/api/projects/acme/prod/view_settings/a%2Fb%20%3F%23%25%C3%A9/?draft=1"
    );
    assert_eq!(sent[2].method, http::Method::PATCH);
    assert_eq!(
        sent[2].uri,
        "http://app.test/api/projects/acme/staging/view_settings/x/"
    );
    assert_eq!(sent[2].body_text(), Some(r#"{"params":"{}"}"#));
    assert_eq!(sent[2].header("content-type"), Some("application/json"));
    assert_eq!(sent[3].method, http::Method::DELETE);
    for r in &sent {
        assert_eq!(r.header("authorization"), Some("Bearer svc_key_secret"));
    }
}

#[tokio::test]
async fn client_draft_is_the_default_and_can_be_overridden() {
    let replay = ReplayTransport::new().push(200, "[]").push(200, "[]");
    let c = Client::builder()
        .project("p")
        .api_key("k")
        .app_base_url("http://app.test/api")
        .allow_insecure_http(true)
        .draft(true)
        .transport(replay.clone())
        .build()
        .unwrap();
    c.pages().list().await.unwrap();
    c.pages().draft(false).list().await.unwrap();
    let sent = replay.requests();
    assert!(sent[0].uri.to_string().ends_with("?draft=1"));
    assert!(sent[1].uri.query().is_none());
}

#[tokio::test]
async fn bad_input_sends_nothing() {
    let replay = ReplayTransport::new();
    let c = client(&replay, &NoWait::default());
    for result in [
        c.pages().get("").await.map(drop),
        c.pages().get("..").await.map(drop),
        c.pages().environment(".").list().await.map(drop),
        c.records("shop", "orders")
            .list(&ListQuery::new().per_page(0))
            .await
            .map(drop),
        c.records("shop", "orders")
            .list(&ListQuery::new().per_page(10_001))
            .await
            .map(drop),
        c.records("shop", "orders")
            .list(&ListQuery::new().page(0))
            .await
            .map(drop),
        c.records("shop", "").retrieve(1).await.map(drop),
        c.records("shop", "orders").retrieve("").await.map(drop),
    ] {
        let err = result.unwrap_err();
        assert_eq!(err.sent(), Sent::No, "{err}");
        assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
    }
    let no_project = Client::builder()
        .transport(replay.clone())
        .api_key("k")
        .build()
        .unwrap();
    let err = no_project.pages().list().await.unwrap_err();
    assert!(err.to_string().contains("no project is set"), "{err}");
    let no_key = Client::builder()
        .project("p")
        .transport(replay.clone())
        .build()
        .unwrap();
    let err = no_key.pages().list().await.unwrap_err();
    assert!(err.to_string().contains("API key"), "{err}");
    assert!(replay.requests().is_empty());
}

#[tokio::test]
async fn reads_are_retried_and_retry_after_is_honoured() {
    let replay = ReplayTransport::new()
        .push_response(with_header(503, "retry-after", "7", r#"{"error":"busy"}"#))
        .push_error(TransportError::message(
            TransportErrorKind::Io,
            "connection reset",
        ))
        .push(200, "[]");
    let sleep = NoWait::default();
    let c = client(&replay, &sleep);
    assert!(c.pages().list().await.unwrap().is_empty());
    assert_eq!(replay.requests().len(), 3);
    let waits = sleep.0.lock().unwrap().clone();
    assert_eq!(waits[0], Duration::from_secs(7));
    assert_eq!(waits.len(), 2);
}

#[tokio::test]
async fn creates_and_updates_are_never_sent_twice() {
    let replay = ReplayTransport::new()
        .push(503, r#"{"error":"busy"}"#)
        .push_error(TransportError::message(
            TransportErrorKind::Timeout,
            "timed out",
        ))
        .push_error(TransportError::message(TransportErrorKind::Io, "reset"));
    let c = client(&replay, &NoWait::default());
    let err = c.pages().create(&PageSettings::new()).await.unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::SERVICE_UNAVAILABLE));
    let err = c
        .records("shop", "orders")
        .create(&json!({"a": 1}))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Transport(_)));
    assert_eq!(err.sent(), Sent::Maybe);
    let err = c
        .records("shop", "orders")
        .update(1, &json!({"a": 1}))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Transport(_)));
    assert_eq!(replay.requests().len(), 3, "one attempt each");
}

#[tokio::test]
async fn a_connection_that_never_opened_is_retried_even_for_creates() {
    let replay = ReplayTransport::new()
        .push_error(TransportError::message(
            TransportErrorKind::Connect,
            "refused",
        ))
        .push(201, r#"{"id": 1}"#);
    let c = client(&replay, &NoWait::default());
    let rec: serde_json::Value = c
        .records("shop", "orders")
        .typed()
        .create(&json!({"a": 1}))
        .await
        .unwrap();
    assert_eq!(rec["id"], 1);
    assert_eq!(replay.requests().len(), 2);
}

#[tokio::test]
async fn a_connect_timeout_is_retried_even_for_creates_but_a_request_timeout_is_not() {
    // A connect that timed out sent nothing (the transport says `Sent::No`): retrying a create
    // is safe. A request timeout may have reached the server: a create is not retried.
    let replay = ReplayTransport::new()
        .push_error(
            TransportError::message(TransportErrorKind::Timeout, "connect timed out")
                .with_sent(svc_api::transport::Sent::No),
        )
        .push(201, r#"{"id": 1}"#)
        .push_error(TransportError::message(
            TransportErrorKind::Timeout,
            "no answer in time",
        ));
    let c = client(&replay, &NoWait::default());
    let records = c.records("shop", "orders");
    let rec = records.create(&json!({"a": 1})).await.unwrap();
    assert_eq!(rec["id"], 1);
    assert_eq!(replay.requests().len(), 2);
    let err = records.create(&json!({"a": 2})).await.unwrap_err();
    assert_eq!(err.sent(), Sent::Maybe, "{err}");
    assert_eq!(
        replay.requests().len(),
        3,
        "the timed-out create is not retried"
    );
}

#[tokio::test]
async fn read_only_posts_are_retried() {
    let replay = ReplayTransport::new()
        .push(502, "<html>bad gateway</html>")
        .push(200, r#"{"y_func": 12}"#);
    let c = client(&replay, &NoWait::default());
    let n: u64 = c
        .records("shop", "orders")
        .aggregate(
            &svc_api::model::records::AggregateRequest::new(
                svc_api::model::records::AggregateFunc::Count,
            ),
            &ListQuery::new().eq("status", "paid").page(3),
        )
        .await
        .unwrap();
    assert_eq!(n, 12);
    let sent = replay.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(
        sent[1].uri,
        "http://data.test/projects/acme/prod/shop/models/orders/aggregate?status=paid"
    );
}

#[tokio::test]
async fn retries_can_be_turned_off_and_are_bounded() {
    let replay = ReplayTransport::new()
        .push(503, "")
        .push(503, "")
        .push(503, "")
        .push(503, "");
    let c = Client::builder()
        .project("p")
        .api_key("k")
        .transport(replay.clone())
        .sleep(NoWait::default())
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    assert!(c.pages().list().await.unwrap_err().is_retryable());
    assert_eq!(replay.requests().len(), 1);
    let c = client(&replay, &NoWait::default()); // default: 3 attempts
    c.pages().list().await.unwrap_err();
    assert_eq!(replay.requests().len(), 4);
}

#[tokio::test]
async fn a_retry_after_longer_than_allowed_is_not_waited_for() {
    let replay = ReplayTransport::new().push_response(with_header(429, "retry-after", "3600", ""));
    let sleep = NoWait::default();
    let c = client(&replay, &sleep);
    let err = c.pages().list().await.unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::TOO_MANY_REQUESTS));
    assert_eq!(err.api().unwrap().retry_after, Some(3600));
    assert!(sleep.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_overall_timeout_ends_a_hung_call() {
    let hang = |_req: http::Request<Bytes>| async {
        std::future::pending::<Result<http::Response<Bytes>, TransportError>>().await
    };
    let c = Client::builder()
        .project("p")
        .api_key("k")
        .transport(hang)
        .timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let err = c.pages().list().await.unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");
    assert_eq!(err.sent(), Sent::Maybe);
}

#[tokio::test]
async fn malformed_success_bodies_are_decode_errors_not_panics() {
    let bodies: [&[u8]; 6] = [
        b"",
        b"<html>ok</html>",
        b"{\"uid\":",
        b"{}",
        b"[1, 2]",
        b"\xff\xfe",
    ];
    for body in bodies {
        let replay = ReplayTransport::new().push(200, Bytes::copy_from_slice(body));
        let c = client(&replay, &NoWait::default());
        let err = c.pages().list().await.unwrap_err();
        assert!(matches!(err, Error::Decode(_)), "{body:?}: {err:?}");
        assert_eq!(err.sent(), Sent::Yes);
    }
}

#[tokio::test]
async fn api_errors_keep_the_body_and_say_what_to_do() {
    let replay = ReplayTransport::new().push(
        401,
        r#"{"error": "Invalid API key.", "error_code": "not_authenticated"}"#,
    );
    let c = client(&replay, &NoWait::default());
    let err = c.pages().list().await.unwrap_err();
    assert!(err.is_auth());
    let text = err.to_string();
    assert!(text.contains("401"), "{text}");
    assert!(text.contains("not_authenticated"), "{text}");
    assert!(text.contains("check the API key"), "{text}");
    assert!(!text.contains("svc_key_secret"));
    assert!(!format!("{err:?}").contains("svc_key_secret"));
    assert_eq!(err.body().unwrap().error(), Some("Invalid API key."));
}

#[tokio::test]
async fn record_credentials_per_call_then_client_then_api_key() {
    let replay = ReplayTransport::new()
        .push(200, "{}")
        .push(200, "{}")
        .push(200, "{}");
    let c = Client::builder()
        .project("acme")
        .api_key("the_key")
        .resource_token("shop", "shop_token")
        .transport(replay.clone())
        .build()
        .unwrap();
    c.records("shop", "orders").retrieve(1).await.unwrap();
    c.records("shop", "orders")
        .token("call_token")
        .retrieve(1)
        .await
        .unwrap();
    c.records("crm", "people").retrieve("a/b").await.unwrap();
    let sent = replay.requests();
    assert_eq!(sent[0].header("authorization"), Some("shop_token"));
    assert_eq!(sent[1].header("authorization"), Some("call_token"));
    assert_eq!(sent[2].header("authorization"), Some("Bearer the_key"));
    assert_eq!(
        sent[2].uri,
        "https://api.svc.example/projects/acme/prod/crm/models/people/a%2Fb"
    );
}

#[tokio::test]
async fn list_query_reaches_the_wire_encoded() {
    let replay = ReplayTransport::new().push(
        200,
        r#"{"count":0,"next":null,"previous":null,"results":[]}"#,
    );
    let c = client(&replay, &NoWait::default());
    c.records("shop", "orders")
        .list(
            &ListQuery::new()
                .eq("name", "O'Brien & co=1")
                .filter("note", Lookup::IContains, "50%")
                .order_by("-total")
                .per_page(10),
        )
        .await
        .unwrap();
    assert_eq!(
        replay.requests()[0].uri,
        "http://data.test/projects/acme/prod/shop/models/orders?name=O%27Brien%20%26%20co%3D1&note__icontains=50%25&_order_by=-total&_per_page=10"
    );
}

#[tokio::test]
async fn all_accepts_a_bare_array_or_an_envelope() {
    let replay = ReplayTransport::new()
        .push(200, r#"[{"id": 1}, {"id": 2}]"#)
        .push(
            200,
            r#"{"count": 1, "next": null, "previous": null, "results": [{"id": 3}]}"#,
        );
    let c = client(&replay, &NoWait::default());
    let records = c.records("shop", "orders");
    assert_eq!(
        records.all(&ListQuery::new().page(4)).await.unwrap().len(),
        2
    );
    assert_eq!(records.all(&ListQuery::new()).await.unwrap()[0]["id"], 3);
    assert!(
        replay.requests()[0]
            .uri
            .to_string()
            .ends_with("?_no_pagination=1")
    );
}

fn page_body(
    count: u64,
    page: u32,
    per_page: u32,
    ids: std::ops::Range<u32>,
    last: bool,
) -> String {
    let results: Vec<_> = ids.map(|i| json!({"id": i})).collect();
    let next = if last {
        json!(null)
    } else {
        json!(format!(
            "http://data.test/x?page={}&_per_page={per_page}",
            page + 1
        ))
    };
    json!({"count": count, "next": next, "previous": null, "results": results}).to_string()
}

#[tokio::test]
async fn stream_reads_every_page_in_order_and_stops_at_the_last() {
    let replay = ReplayTransport::new()
        .push(200, page_body(7, 1, 3, 0..3, false))
        .push(200, page_body(7, 2, 3, 3..6, false))
        .push(200, page_body(7, 3, 3, 6..7, true));
    let c = client(&replay, &NoWait::default());
    let ids: Vec<u64> = c
        .records("shop", "orders")
        .stream(ListQuery::new().per_page(3))
        .unwrap()
        .map_ok(|r| r["id"].as_u64().unwrap())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(ids, (0..7).collect::<Vec<_>>());
    let pages: Vec<String> = replay
        .requests()
        .iter()
        .map(|r| r.uri.query().unwrap().to_owned())
        .collect();
    assert_eq!(
        pages,
        [
            "page=1&_per_page=3",
            "page=2&_per_page=3",
            "page=3&_per_page=3"
        ]
    );
}

#[tokio::test]
async fn stream_total_is_the_first_pages_count() {
    let replay = ReplayTransport::new()
        .push(200, page_body(5, 1, 3, 0..3, false))
        .push(200, page_body(5, 2, 3, 3..5, true));
    let c = client(&replay, &NoWait::default());
    let mut stream = c
        .records("shop", "orders")
        .stream(ListQuery::new().per_page(3))
        .unwrap();
    assert_eq!(stream.total(), None, "nothing read yet");
    let mut seen = 0;
    while let Some(record) = stream.try_next().await.unwrap() {
        // Known from the first record on, and it stays.
        assert_eq!(stream.total(), Some(5), "at record {record:?}");
        seen += 1;
    }
    assert_eq!((seen, stream.total()), (5, Some(5)));
}

#[tokio::test]
async fn stream_stops_on_a_server_that_repeats_itself() {
    let same = page_body(1_000_000, 1, 2, 0..2, false);
    let replay = ReplayTransport::new();
    for _ in 0..10 {
        replay.push(200, same.clone());
    }
    let c = client(&replay, &NoWait::default());
    let results: Vec<_> = c
        .records("shop", "orders")
        .prefetch(1)
        .stream(ListQuery::new().per_page(2))
        .unwrap()
        .collect::<Vec<_>>()
        .await;
    assert_eq!(results.len(), 3, "two records, then the error");
    let err = results[2].as_ref().unwrap_err();
    assert!(err.to_string().contains("same body"), "{err}");
    // Requests went out: the error must not say that nothing was sent.
    assert!(matches!(err, svc_api::Error::Protocol(_)), "{err:?}");
    assert_eq!(err.sent(), svc_api::Sent::Yes);
    assert!(!err.to_string().contains("nothing was sent"), "{err}");
    assert!(replay.requests().len() <= 3);
}

#[tokio::test]
async fn stream_ends_with_the_error_of_a_failed_page() {
    let replay = ReplayTransport::new()
        .push(200, page_body(4, 1, 2, 0..2, false))
        .push(404, r#"{"error":"Invalid page."}"#);
    let c = client(&replay, &NoWait::default());
    let results: Vec<_> = c
        .records("shop", "orders")
        .stream(ListQuery::new().per_page(2))
        .unwrap()
        .collect::<Vec<_>>()
        .await;
    assert_eq!(results.len(), 3);
    assert!(results[2].as_ref().unwrap_err().is_not_found());
}

use futures_util::StreamExt;

#[tokio::test]
async fn is_authenticated_makes_no_call_without_headers() {
    let fail_on_any_call = |_req: http::Request<Bytes>| async {
        Err::<http::Response<Bytes>, _>(TransportError::message(
            TransportErrorKind::Other,
            "no call expected",
        ))
    };
    let c = Client::builder()
        .project("p")
        .transport(fail_on_any_call)
        .build()
        .unwrap();
    let status = c.account().is_authenticated().await.unwrap();
    assert!(!status.authenticated);
    assert!(status.user.is_none());
    assert!(c.account().get_headers().await.unwrap().is_none());
}

#[tokio::test]
async fn a_session_goes_out_as_jwt_and_an_api_key_wins() {
    let replay = ReplayTransport::new()
        .push(200, r#"{"token": {"access_token": "acc.ess.tok", "refresh_token": "ref", "access_token_expires": null, "refresh_token_expires": null}, "user": {"uid": "u1"}}"#)
        .push(200, "{}")
        .push(200, "{}");
    let c = Client::builder()
        .project("p")
        .api_base_url("http://data.test")
        .allow_insecure_http(true)
        .transport(replay.clone())
        .build()
        .unwrap();
    c.account().login("a@b.co", "pw").await.unwrap();
    c.records("shop", "orders").retrieve(1).await.unwrap();
    let keyed = Client::builder()
        .project("p")
        .api_key("k")
        .api_base_url("http://data.test")
        .allow_insecure_http(true)
        .transport(replay.clone())
        .build()
        .unwrap();
    keyed.records("shop", "orders").retrieve(1).await.unwrap();
    let sent = replay.requests();
    assert_eq!(sent[0].uri, "http://data.test/projects/p/prod/auth/login");
    assert_eq!(sent[0].header("authorization"), None);
    assert!(!format!("{:?}", sent[0]).contains("\"pw\""));
    assert_eq!(sent[1].header("authorization"), Some("JWT acc.ess.tok"));
    assert_eq!(sent[2].header("authorization"), Some("Bearer k"));
}

#[tokio::test]
async fn draft_goes_on_every_request_as_in_the_js_client() {
    let replay = ReplayTransport::new()
        .push(200, "{}")
        .push(200, "{}")
        .push(200, "[]");
    let c = Client::builder()
        .project("p")
        .api_key("k")
        .api_base_url("http://data.test")
        .allow_insecure_http(true)
        .draft(true)
        .transport(replay.clone())
        .build()
        .unwrap();
    c.records("shop", "orders").retrieve(1).await.unwrap();
    c.records("shop", "orders")
        .list(&ListQuery::new().per_page(2))
        .await
        .unwrap_err();
    c.pages().draft(false).list().await.unwrap();
    let sent = replay.requests();
    assert_eq!(
        sent[0].uri,
        "http://data.test/projects/p/prod/shop/models/orders/1?draft=1"
    );
    assert_eq!(sent[1].uri.query(), Some("_per_page=2&draft=1"));
    assert_eq!(
        sent[2].uri.query(),
        None,
        "a handle's own draft(false) wins"
    );
}
