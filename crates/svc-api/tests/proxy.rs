//! The HTTP proxy against a replay transport: the request JSON the builder produces, the
//! `JWT` credential, which answers are upstream answers and which are the proxy's own errors,
//! and when an exchange is retried. (End to end through the emulator: the `svc-tests` crate.)

#![cfg(feature = "proxy")]

mod common;

use bytes::Bytes;
use common::NoWait;
use http::Method;
use serde_json::{Value, json};
use svc_api::model::proxy::{BodyType, PROXY_ERROR_HEADER};
use svc_api::transport::replay::ReplayTransport;
use svc_api::transport::{TransportError, TransportErrorKind};
use svc_api::{Client, Error, RetryPolicy, Sent};

fn client(replay: &ReplayTransport) -> Client {
    Client::builder()
        .project("acme")
        .environment("staging")
        .api_key("svc_key_secret")
        .service_token("header.payload.signature")
        .app_base_url("https://app.test/api/")
        .transport(replay.clone())
        .sleep(NoWait::default())
        .build()
        .unwrap()
}

fn upstream(status: u16, content_type: &str, body: &str) -> http::Response<Bytes> {
    http::Response::builder()
        .status(status)
        .header("content-type", content_type)
        .header("x-svc-upstream-etag", "\"v7\"")
        .body(Bytes::from(body.to_owned()))
        .unwrap()
}

fn proxy_failure(status: u16, code: &str) -> http::Response<Bytes> {
    http::Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .header(PROXY_ERROR_HEADER, "1")
        .body(Bytes::from(
            json!({"error": "from the proxy", "error_code": code}).to_string(),
        ))
        .unwrap()
}

fn sent_json(replay: &ReplayTransport, index: usize) -> Value {
    serde_json::from_slice(&replay.requests()[index].body).unwrap()
}

#[tokio::test]
async fn the_request_json_of_each_body_type() {
    let replay = ReplayTransport::new();
    for _ in 0..7 {
        replay.push_response(upstream(200, "application/json", "{}"));
    }
    let c = client(&replay);
    let p = c.proxy();
    p.post("https://api.example.com/orders?x=1")
        .query("dry run", "yes")
        .header("X-Request-Id", "42")
        .json(&json!({"total": 12.5}))
        .secret_token("PARTNER_KEY")
        .send()
        .await
        .unwrap();
    p.post("https://api.example.com/graphql")
        .graphql("query { me { id } }", &json!({"first": 10}))
        .send()
        .await
        .unwrap();
    p.post("https://api.example.com/graphql")
        .graphql("{ ping }", &())
        .send()
        .await
        .unwrap();
    p.put("https://api.example.com/form")
        .form([("a", "1"), ("a", "2")])
        .send()
        .await
        .unwrap();
    p.patch("https://api.example.com/upload")
        .multipart(vec![("title".to_owned(), "Zoë".to_owned())])
        .send()
        .await
        .unwrap();
    p.request(Method::OPTIONS, "https://api.example.com/raw")
        .header("Content-Type", "text/csv")
        .raw("a,b\n")
        .project("other")
        .resource("shop")
        .send()
        .await
        .unwrap();
    p.get("http://127.0.0.1:9/")
        .environment("prod")
        .send()
        .await
        .unwrap();

    let sent = replay.requests();
    assert!(sent.iter().all(|r| r.method == Method::POST
        && r.uri == "https://app.test/api/proxy_request/"
        && r.header("authorization") == Some("JWT header.payload.signature")
        && r.header("content-type") == Some("application/json")));
    assert_eq!(
        sent_json(&replay, 0),
        json!({
            "method": "POST",
            "url": "https://api.example.com/orders?x=1",
            "query_params": [{"name": "dry run", "value": "yes"}],
            "headers": [{"name": "X-Request-Id", "value": "42"}],
            "body_type": "JSON",
            "body": {"total": 12.5},
            "project": "acme",
            "environment": "staging",
            "secret_tokens": ["PARTNER_KEY"],
        })
    );
    assert_eq!(
        sent_json(&replay, 1)["body"],
        json!({"query": "query { me { id } }", "variables": {"first": 10}})
    );
    assert_eq!(sent_json(&replay, 1)["body_type"], "GraphQL");
    assert_eq!(sent_json(&replay, 2)["body"], json!({"query": "{ ping }"}));
    let form = sent_json(&replay, 3);
    assert_eq!(
        (form["method"].as_str(), form["body_type"].as_str()),
        (Some("PUT"), Some("FormUrlEncoded"))
    );
    assert_eq!(
        form["body"],
        json!([{"name": "a", "value": "1"}, {"name": "a", "value": "2"}])
    );
    let multipart = sent_json(&replay, 4);
    assert_eq!(multipart["body_type"], "FormData");
    assert_eq!(
        multipart["body"],
        json!([{"name": "title", "value": "Zoë"}])
    );
    let raw = sent_json(&replay, 5);
    assert_eq!(
        raw,
        json!({
            "method": "OPTIONS",
            "url": "https://api.example.com/raw",
            "headers": [{"name": "Content-Type", "value": "text/csv"}],
            "body_type": "Raw",
            "body": "a,b\n",
            "project": "other",
            "resource": "shop",
        }),
        "an explicit project is sent without the client's environment"
    );
    assert_eq!(
        sent_json(&replay, 6),
        json!({"method": "GET", "url": "http://127.0.0.1:9/", "project": "acme", "environment": "prod"})
    );
}

#[tokio::test]
async fn the_builder_shows_its_request_and_hides_values() {
    let replay = ReplayTransport::new();
    let c = client(&replay);
    let builder = c
        .proxy()
        .get("http://h/p?token=hush")
        .header("Authorization", "Bearer very-secret")
        .json(&json!({"password": "p4ss"}));
    assert_eq!(builder.as_request().body_type, Some(BodyType::Json));
    assert_eq!(builder.as_request().headers[0].value, "Bearer very-secret");
    let dbg = format!("{builder:?}");
    for secret in ["hush", "very-secret", "p4ss"] {
        assert!(!dbg.contains(secret), "{dbg}");
    }
}

#[tokio::test]
async fn upstream_answers_are_responses_whatever_their_status() {
    let replay = ReplayTransport::new()
        .push_response(upstream(404, "text/html", "<h1>gone</h1>"))
        .push_response(upstream(503, "application/json", r#"{"busy": true}"#))
        .push_response(upstream(200, "application/json", r#"{"id": 7}"#));
    let c = client(&replay);
    let gone = c.proxy().get("http://h/a").send().await.unwrap();
    assert_eq!(gone.status, 404);
    assert_eq!(gone.content_type(), Some("text/html"));
    assert_eq!(gone.text(), Some("<h1>gone</h1>"));
    assert_eq!(gone.headers["etag"], "\"v7\"");
    assert!(gone.json::<Value>().is_err());
    // An upstream 503 on a GET is the answer: not retried.
    let busy = c.proxy().get("http://h/b").send().await.unwrap();
    assert_eq!(busy.status, 503);
    assert_eq!(replay.requests().len(), 2);

    #[derive(serde::Deserialize)]
    struct Created {
        id: u32,
    }
    let ok = c.proxy().post("http://h/c").send().await.unwrap();
    assert_eq!(ok.json::<Created>().unwrap().id, 7);
}

#[tokio::test]
async fn proxy_failures_are_errors_retried_only_for_idempotent_methods() {
    let replay = ReplayTransport::new()
        .push_response(proxy_failure(502, "bad_gateway"))
        .push_response(proxy_failure(504, "gateway_timeout"))
        .push_response(upstream(200, "text/plain", "ok"))
        .push_response(proxy_failure(502, "bad_gateway"))
        .push_response(proxy_failure(403, "target_not_allowed"));
    let c = client(&replay);
    // GET: two proxy failures retried, then the upstream's answer.
    let ok = c.proxy().get("http://h/").send().await.unwrap();
    assert_eq!(ok.text(), Some("ok"));
    assert_eq!(replay.requests().len(), 3);
    // POST: not retried.
    let err = c.proxy().post("http://h/").send().await.unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(502));
    assert_eq!(err.sent(), Sent::Yes);
    assert_eq!(err.body().unwrap().error_code(), Some("bad_gateway"));
    assert_eq!(err.api().unwrap().path, "/api/proxy_request/");
    assert!(err.to_string().contains("502"), "{err}");
    // A refusal is never retried.
    let err = c.proxy().put("http://192.0.2.1/").send().await.unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(403));
    assert!(err.is_auth());
    assert_eq!(replay.requests().len(), 5);
    assert_eq!(replay.remaining(), 0);
}

#[tokio::test]
async fn lost_connections_are_retried_only_for_idempotent_methods() {
    let lost = || TransportError::message(TransportErrorKind::Io, "connection reset mid-way");
    let replay = ReplayTransport::new()
        .push_error(lost())
        .push_response(upstream(200, "text/plain", "ok"))
        .push_error(lost());
    let c = client(&replay);
    assert_eq!(
        c.proxy().delete("http://h/").send().await.unwrap().text(),
        Some("ok")
    );
    let err = c.proxy().post("http://h/").send().await.unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err}");
    assert_eq!(replay.requests().len(), 3);
}

#[tokio::test]
async fn nothing_is_sent_without_a_jwt_or_with_a_bad_body() {
    let replay = ReplayTransport::new();
    let no_session = Client::builder()
        .project("acme")
        .api_key("svc_key_secret")
        .app_base_url("https://app.test/api")
        .transport(replay.clone())
        .retry(RetryPolicy::none())
        .build()
        .unwrap();
    let err = no_session
        .proxy()
        .get("http://h/")
        .send()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    assert!(err.to_string().contains("not signed in"), "{err}");

    struct Unserializable;
    impl serde::Serialize for Unserializable {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("no"))
        }
    }
    let err = client(&replay)
        .proxy()
        .post("http://h/")
        .json(&Unserializable)
        .send()
        .await
        .unwrap_err();
    assert_eq!(err.sent(), Sent::No);
    assert!(replay.requests().is_empty());
}
