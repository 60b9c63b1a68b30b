//! Actions and workflows against a replay transport: the exact request (method, path, body,
//! credential), typed results, a failed workflow as an error, inputs refused before sending,
//! and no retry once a request may have been sent. (End to end against the emulator: the
//! `svc-tests` crate, tests/tests/e2e/actions.rs.)

mod common;

use common::NoWait;
use serde_json::{Value, json};
use svc_api::transport::replay::ReplayTransport;
use svc_api::transport::{TransportError, TransportErrorKind};
use svc_api::{Client, ClientBuilder, Error, Sent};

fn builder(replay: &ReplayTransport) -> ClientBuilder {
    Client::builder()
        .project("acme")
        .api_base_url("http://data.test/")
        .allow_insecure_http(true)
        .transport(replay.clone())
        .sleep(NoWait::default())
}

/// An API key and the `shop` resource's token.
fn client(replay: &ReplayTransport) -> Client {
    builder(replay)
        .api_key("svc_key_secret")
        .resource_token("shop", "tok_shop")
        .build()
        .unwrap()
}

fn body(replay: &ReplayTransport, i: usize) -> Value {
    serde_json::from_str(replay.requests()[i].body_text().unwrap()).unwrap()
}

fn io_error() -> TransportError {
    // The connection was lost after the request went out: it may have reached the server.
    TransportError::message(TransportErrorKind::Io, "connection reset")
}

#[tokio::test]
async fn an_action_posts_its_inputs_wrapped_in_data_with_the_resource_token() {
    let answer = r#"{"data": [{"id": 7, "status": "refunded"}]}"#;
    let replay = ReplayTransport::new().push(200, answer).push(200, answer);
    let c = client(&replay);

    let result = c
        .action("shop", "refund")
        .execute(json!({"id": 7, "note": "late"}))
        .await
        .unwrap();
    assert_eq!(result, json!([{"id": 7, "status": "refunded"}]));

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Order {
        id: i64,
        status: String,
    }
    let orders: Vec<Order> = c
        .action("shop", "refund")
        .typed()
        .execute(json!({"id": 7}))
        .await
        .unwrap();
    assert_eq!(
        orders,
        [Order {
            id: 7,
            status: "refunded".into()
        }]
    );

    let sent = replay.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].method, http::Method::POST);
    assert_eq!(
        sent[0].uri,
        "http://data.test/projects/acme/prod/shop/actions/refund"
    );
    assert_eq!(body(&replay, 0), json!({"data": {"id": 7, "note": "late"}}));
    assert_eq!(sent[0].header("authorization"), Some("tok_shop"));
    assert_eq!(sent[0].header("content-type"), Some("application/json"));
    assert_eq!(body(&replay, 1), json!({"data": {"id": 7}}));
}

#[tokio::test]
async fn an_action_takes_structs_maps_and_no_inputs() {
    let replay = ReplayTransport::new()
        .push(200, r#"{"data": {"pong": true}}"#)
        .push(200, r#"{"data": null}"#)
        .push(200, r#"{"data": 3}"#);
    let c = client(&replay);
    #[derive(serde::Serialize)]
    struct Refund<'a> {
        id: i64,
        reason: &'a str,
    }
    let pong = c.action("shop", "ping").execute(json!({})).await.unwrap();
    assert_eq!(pong, json!({"pong": true}));
    let none = c
        .action("shop", "refund")
        .execute(&Refund {
            id: 8,
            reason: "damaged",
        })
        .await
        .unwrap();
    assert_eq!(none, Value::Null);
    let map = std::collections::BTreeMap::from([("limit", 3)]);
    let n: u32 = c
        .action("shop", "count")
        .typed()
        .execute(map)
        .await
        .unwrap();
    assert_eq!(n, 3);
    assert_eq!(body(&replay, 0), json!({"data": {}}));
    assert_eq!(
        body(&replay, 1),
        json!({"data": {"id": 8, "reason": "damaged"}})
    );
    assert_eq!(body(&replay, 2), json!({"data": {"limit": 3}}));
}

#[tokio::test]
async fn an_action_uses_the_credential_chain_of_records() {
    let answer = r#"{"data": []}"#;
    let replay = ReplayTransport::new()
        .push(200, answer)
        .push(200, answer)
        .push(200, answer)
        .push(200, answer);
    // A token for these calls wins over the client's token for the resource.
    let c = client(&replay);
    c.action("shop", "refund")
        .token("tok_per_call")
        .execute(json!({}))
        .await
        .unwrap();
    // No token for this resource: the API key.
    c.action("crm", "merge").execute(json!({})).await.unwrap();
    // Neither: the service token (or the session).
    let service = builder(&replay)
        .service_token("header.payload.signature")
        .build()
        .unwrap();
    service
        .action("shop", "refund")
        .execute(json!({}))
        .await
        .unwrap();
    // Draft mode and the environment reach the path, as for every call.
    let draft = builder(&replay)
        .api_key("svc_key_secret")
        .environment("staging")
        .draft(true)
        .build()
        .unwrap();
    draft
        .action("shop", "refund")
        .execute(json!({}))
        .await
        .unwrap();

    let sent = replay.requests();
    assert_eq!(sent[0].header("authorization"), Some("tok_per_call"));
    assert_eq!(
        sent[1].header("authorization"),
        Some("Bearer svc_key_secret")
    );
    assert_eq!(
        sent[1].uri,
        "http://data.test/projects/acme/prod/crm/actions/merge"
    );
    assert_eq!(
        sent[2].header("authorization"),
        Some("JWT header.payload.signature")
    );
    assert_eq!(
        sent[3].uri,
        "http://data.test/projects/acme/staging/shop/actions/refund?draft=1"
    );

    // No credential at all: refused, nothing sent.
    let before = replay.requests().len();
    let none = builder(&replay).build().unwrap();
    let err = none
        .action("shop", "refund")
        .execute(json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    assert!(err.to_string().contains("no credential"), "{err}");
    assert_eq!(replay.requests().len(), before);
}

#[tokio::test]
async fn names_are_one_encoded_path_segment_and_bad_ones_are_refused() {
    let replay = ReplayTransport::new()
        .push(200, r#"{"data": 1}"#)
        .push(200, r#"{"success": true, "result": 1}"#);
    let c = client(&replay);
    c.action("my shop", "re/fund?x#y")
        .execute(json!({}))
        .await
        .unwrap();
    c.workflow("wf/1 é").run(json!({})).await.unwrap();
    let sent = replay.requests();
    assert_eq!(
        sent[0].uri,
        "http://data.test/projects/acme/prod/my%20shop/actions/re%2Ffund%3Fx%23y"
    );
    assert_eq!(
        sent[1].uri,
        "http://data.test/projects/acme/prod/workflows/wf%2F1%20%C3%A9/run"
    );

    for (resource, action, named) in [
        ("", "refund", "resource name"),
        ("..", "refund", "resource name"),
        ("shop", "", "action name"),
        ("shop", ".", "action name"),
    ] {
        let err = c
            .action(resource, action)
            .execute(json!({}))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)), "{err}");
        assert!(err.to_string().contains(named), "{err}");
    }
    for uid in ["", ".."] {
        let err = c.workflow(uid).run(json!({})).await.unwrap_err();
        assert!(err.to_string().contains("workflow uid"), "{err}");
        assert_eq!(err.sent(), Sent::No);
    }
    assert_eq!(replay.requests().len(), 2, "nothing more was sent");
}

#[tokio::test]
async fn inputs_that_are_not_an_object_are_refused_before_sending() {
    let replay = ReplayTransport::new();
    let c = client(&replay);
    for inputs in [json!(null), json!(7), json!("id=7"), json!([7])] {
        let err = c
            .action("shop", "refund")
            .execute(&inputs)
            .await
            .unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)), "{err}");
        assert!(err.to_string().contains("must be a JSON object"), "{err}");
        let err = c.workflow("wf-refund").run(&inputs).await.unwrap_err();
        assert!(err.to_string().contains("must be a JSON object"), "{err}");
        assert_eq!(err.sent(), Sent::No);
    }
    let err = c.workflow("wf-refund").run(()).await.unwrap_err();
    assert!(err.to_string().contains("json!({})"), "{err}");
    assert!(replay.requests().is_empty());
}

#[tokio::test]
async fn an_action_or_a_run_that_may_have_been_sent_is_never_retried() {
    // Each failure is followed by a success the client would get if it tried again.
    /// A replay whose first answer is a failure after the request went out.
    type Failing = fn() -> ReplayTransport;
    let failures: [(&str, Failing); 3] = [
        ("a lost connection", || {
            ReplayTransport::new().push_error(io_error())
        }),
        ("a timeout", || {
            ReplayTransport::new().push_error(TransportError::message(
                TransportErrorKind::Timeout,
                "no answer in time",
            ))
        }),
        ("a 503", || {
            ReplayTransport::new().push(503, r#"{"error": "busy"}"#)
        }),
    ];
    for (what, failing) in failures {
        let replay = failing().push(200, r#"{"data": "twice"}"#);
        let err = client(&replay)
            .action("shop", "refund")
            .execute(json!({"id": 7}))
            .await
            .unwrap_err();
        assert_ne!(err.sent(), Sent::No, "{what}: {err}");
        assert_eq!(replay.requests().len(), 1, "{what}: the action was retried");
        assert_eq!(replay.remaining(), 1, "{what}");

        let replay = failing().push(200, r#"{"success": true, "result": "twice"}"#);
        let err = client(&replay)
            .workflow("wf-refund")
            .run(json!({"id": 7}))
            .await
            .unwrap_err();
        assert_ne!(err.sent(), Sent::No, "{what}: {err}");
        assert_eq!(replay.requests().len(), 1, "{what}: the run was retried");
        let replay = failing().push(200, r#"{"success": true, "result": "twice"}"#);
        let err = client(&replay)
            .workflow("wf-refund")
            .run_response(json!({"id": 7}))
            .await
            .unwrap_err();
        assert_ne!(err.sent(), Sent::No, "{what}: {err}");
        assert_eq!(replay.requests().len(), 1, "{what}: the run was retried");
    }
}

#[tokio::test]
async fn a_connection_that_never_opened_is_retried() {
    let refused = || TransportError::message(TransportErrorKind::Connect, "refused");
    let replay = ReplayTransport::new()
        .push_error(refused())
        .push(200, r#"{"data": "once"}"#)
        .push_error(refused())
        .push(200, r#"{"success": true, "result": "once"}"#);
    let c = client(&replay);
    let result = c.action("shop", "refund").execute(json!({})).await.unwrap();
    assert_eq!(result, "once");
    let result = c.workflow("wf-refund").run(json!({})).await.unwrap();
    assert_eq!(result, "once");
    assert_eq!(replay.requests().len(), 4);
}

#[tokio::test]
async fn a_workflow_posts_its_inputs_with_the_api_key_and_returns_its_result() {
    let replay = ReplayTransport::new()
        .push(
            200,
            r#"{"success": true, "result": [{"id": 7, "status": "refunded"}]}"#,
        )
        .push(200, r#"{"success": true, "result": {"refunded": 2}}"#)
        .push(200, r#"{"success": true}"#);
    let c = client(&replay);
    let result = c.workflow("wf-refund").run(json!({"id": 7})).await.unwrap();
    assert_eq!(result, json!([{"id": 7, "status": "refunded"}]));

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Summary {
        refunded: u32,
    }
    let summary: Summary = c
        .workflow("wf-close-day")
        .typed()
        .run(json!({}))
        .await
        .unwrap();
    assert_eq!(summary, Summary { refunded: 2 });
    // A success without a result: null, as the JSON default reads it.
    let nothing = c.workflow("wf-noop").run(json!({})).await.unwrap();
    assert_eq!(nothing, Value::Null);

    let sent = replay.requests();
    assert_eq!(sent[0].method, http::Method::POST);
    assert_eq!(
        sent[0].uri,
        "http://data.test/projects/acme/prod/workflows/wf-refund/run"
    );
    assert_eq!(body(&replay, 0), json!({"data": {"id": 7}}));
    // The project's route: the API key, though the client has a resource token.
    assert_eq!(
        sent[0].header("authorization"),
        Some("Bearer svc_key_secret")
    );
    assert_eq!(body(&replay, 1), json!({"data": {}}));
}

#[tokio::test]
async fn a_workflow_takes_a_session_or_service_token_but_not_a_resource_token() {
    let replay = ReplayTransport::new().push(200, r#"{"success": true, "result": 1}"#);
    let service = builder(&replay)
        .resource_token("shop", "tok_shop")
        .service_token("header.payload.signature")
        .build()
        .unwrap();
    service.workflow("wf-refund").run(json!({})).await.unwrap();
    assert_eq!(
        replay.requests()[0].header("authorization"),
        Some("JWT header.payload.signature")
    );

    let only_a_token = builder(&replay)
        .resource_token("shop", "tok_shop")
        .build()
        .unwrap();
    let err = only_a_token
        .workflow("wf-refund")
        .run(json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    assert!(err.to_string().contains("no credential"), "{err}");
    assert_eq!(replay.requests().len(), 1, "nothing more was sent");
}

#[tokio::test]
async fn a_failed_run_is_an_error_that_keeps_the_servers_text() {
    let failed = r#"{"success": false, "error": "step 2 (shop.notify): Missing input: email."}"#;
    let replay = ReplayTransport::new()
        .push(200, failed)
        .push(200, failed)
        .push(200, r#"{"success": false}"#)
        .push(
            200,
            r#"{"success": false, "error": {"step": 1, "message": "boom"}}"#,
        );
    let c = client(&replay);

    // `run`: never an `Ok`, whatever the result type.
    let err = c
        .workflow("wf-refund")
        .typed::<Vec<u8>>()
        .run(json!({"id": 7}))
        .await
        .unwrap_err();
    let Error::Workflow(details) = &err else {
        panic!("not a workflow error: {err:?}");
    };
    assert_eq!(details.uid(), "wf-refund");
    assert_eq!(
        details.message(),
        Some("step 2 (shop.notify): Missing input: email.")
    );
    assert_eq!(
        err.to_string(),
        "workflow \"wf-refund\" failed: step 2 (shop.notify): Missing input: email."
    );
    assert_eq!(err.sent(), Sent::Yes);
    assert!(!err.is_retryable());
    assert_eq!(replay.requests().len(), 1, "a failed run is not retried");

    // `run_response`: the answer as data, which still becomes the same error.
    let answer = c
        .workflow("wf-refund")
        .run_response(json!({"id": 7}))
        .await
        .unwrap();
    assert!(!answer.is_success());
    assert_eq!(
        answer.error(),
        Some("step 2 (shop.notify): Missing input: email.")
    );
    assert_eq!(answer.result(), None);
    let err = answer.into_result().unwrap_err();
    assert_eq!(
        err.workflow().and_then(|w| w.message()),
        Some("step 2 (shop.notify): Missing input: email.")
    );

    // No reason given, and a reason that is not text: still errors, the text kept as JSON.
    let err = c.workflow("wf-a").run(json!({})).await.unwrap_err();
    assert_eq!(err.workflow().map(|w| w.message()), Some(None));
    let err = c.workflow("wf-b").run(json!({})).await.unwrap_err();
    let message = err.workflow().and_then(|w| w.message()).unwrap();
    assert!(
        message.contains("\"message\"") && message.contains("boom"),
        "{message}"
    );
}

#[tokio::test]
async fn error_answers_and_unreadable_bodies_are_errors() {
    let replay = ReplayTransport::new()
        .push(404, r#"{"detail": "Not found."}"#)
        .push(400, r#"{"data": ["Missing input: id."]}"#)
        .push(
            400,
            r#"{"error": "no such column: sttus", "error_code": "invalid"}"#,
        )
        .push(200, r#"{"result": 1}"#)
        .push(404, r#"{"detail": "Not found."}"#)
        .push(200, r#"{"success": true, "result": "seven"}"#)
        .push(200, r#"{"rows": []}"#);
    let c = client(&replay);

    let err = c
        .action("shop", "nosuch")
        .execute(json!({}))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let err = c
        .action("shop", "refund")
        .execute(json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::BAD_REQUEST));
    assert_eq!(
        err.body().unwrap().field_errors().get("data").cloned(),
        Some(vec!["Missing input: id."])
    );
    let err = c
        .action("shop", "refund")
        .execute(json!({"id": 7}))
        .await
        .unwrap_err();
    assert_eq!(err.body().unwrap().error_code(), Some("invalid"));
    assert!(err.to_string().contains("no such column: sttus"), "{err}");
    // An action's answer without `data`, a workflow's without `success`: unreadable.
    let err = c
        .action("shop", "refund")
        .execute(json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Decode(_)), "{err}");

    let err = c.workflow("nosuch").run(json!({})).await.unwrap_err();
    assert!(err.is_not_found() && err.workflow().is_none(), "{err}");
    // A result that is not the type asked for.
    let err = c
        .workflow("wf-refund")
        .typed::<u32>()
        .run(json!({}))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Decode(_)), "{err}");
    let err = c.workflow("wf-refund").run(json!({})).await.unwrap_err();
    assert!(err.to_string().contains("missing field `success`"), "{err}");
}
