//! SQL, users, teams and reload against a replay transport: paths, bodies, credentials,
//! retries, decoding, and input refused before sending.

mod common;

use common::NoWait;
use serde_json::{Value, json};
use svc_api::model::records::ListQuery;
use svc_api::model::users::NewUser;
use svc_api::transport::replay::ReplayTransport;
use svc_api::{Client, Error, Sent};

fn client(replay: &ReplayTransport) -> Client {
    Client::builder()
        .project("acme")
        .api_key("svc_key_secret")
        .resource_token("shop", "tok_shop")
        .tools_token("tok_tools")
        .api_base_url("http://data.test")
        .allow_insecure_http(true)
        .transport(replay.clone())
        .sleep(NoWait::default())
        .build()
        .unwrap()
}

fn body(replay: &ReplayTransport, i: usize) -> Value {
    serde_json::from_str(replay.requests()[i].body_text().unwrap()).unwrap()
}

#[tokio::test]
async fn sql_sends_one_read_only_post_and_retries_it() {
    let answer = r#"{"columns":["id","name"],"data":[[7,"Zoë"]],"row_count":1}"#;
    let replay = ReplayTransport::new().push(503, "").push(200, answer);
    let c = client(&replay);
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Row {
        name: String,
        id: i64,
    }
    let rows: Vec<Row> = c
        .sql("shop")
        .query("select id, name from customers where id = :id and name <> :name")
        .bind("id", 7)
        .bind(":name", "O'Brien")
        .rows()
        .await
        .unwrap();
    assert_eq!(
        rows,
        vec![Row {
            id: 7,
            name: "Zoë".into()
        }]
    );
    let sent = replay.requests();
    assert_eq!(sent.len(), 2, "a read-only POST is retried");
    assert_eq!(sent[1].method, http::Method::POST);
    assert_eq!(
        sent[1].uri,
        "http://data.test/projects/acme/prod/shop/sql_get_query"
    );
    assert_eq!(sent[1].header("authorization"), Some("tok_shop"));
    assert_eq!(
        body(&replay, 1),
        json!({"query": "select id, name from customers where id = :id and name <> :name", "v": 2, "params_obj": {"id": 7, "name": "O'Brien"}})
    );

    // Without parameters there is no params_obj; a per-query token wins.
    let replay = ReplayTransport::new().push(200, answer);
    let c = client(&replay);
    let response = c
        .sql("shop")
        .token("tok_other")
        .query("select 1")
        .send()
        .await
        .unwrap();
    assert_eq!(response.maps()[0]["name"], "Zoë");
    assert_eq!(body(&replay, 0), json!({"query": "select 1", "v": 2}));
    assert_eq!(
        replay.requests()[0].header("authorization"),
        Some("tok_other")
    );
}

#[tokio::test]
async fn sql_input_is_checked_before_sending() {
    let replay = ReplayTransport::new();
    let c = client(&replay);
    let q = || c.sql("shop").query("select :a");
    for err in [
        q().bind("a-b", 1).send().await.unwrap_err(),
        q().bind("9", 1).send().await.unwrap_err(),
        q().bind("", 1).send().await.unwrap_err(),
        q().bind("::a", 1).send().await.unwrap_err(),
        // A map with non-string keys cannot be JSON.
        q().bind("a", std::collections::HashMap::from([((1, 2), 3)]))
            .send()
            .await
            .unwrap_err(),
        c.sql("shop").query("\n ").send().await.unwrap_err(),
        c.sql("").query("select 1").send().await.unwrap_err(),
    ] {
        assert_eq!(err.sent(), Sent::No, "{err}");
        assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    }
    // The first bad bind is the one reported.
    let err = q()
        .bind("bad name", 1)
        .bind("a", 1)
        .send()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("bad name"), "{err}");
    // The debug output shows parameter names, never their values.
    let debug = format!("{:?}", q().bind("a", "secret-value"));
    assert!(
        debug.contains("\"a\"") && !debug.contains("secret-value"),
        "{debug}"
    );
    assert!(replay.requests().is_empty());
}

#[tokio::test]
async fn users_and_teams_use_the_tools_resource_and_token() {
    let user = r#"{"uid":"u1","email":"a@example.com","group":"t1","date_add":"2026-01-01T00:00:00.000Z","first_name":null,"last_name":null}"#;
    let replay = ReplayTransport::new()
        .push(
            200,
            format!(r#"{{"count":1,"next":null,"previous":null,"results":[{user}]}}"#),
        )
        .push(201, user)
        .push(200, user)
        .push(204, "")
        .push(200, r#"{"uid":"t1","name":"Ops"}"#)
        .push(200, format!("[{user}]"));
    let c = client(&replay);
    let page = c
        .users()
        .list(&ListQuery::new().eq("group", "t1"))
        .await
        .unwrap();
    assert_eq!(page.results[0].email, "a@example.com");
    c.users()
        .create(&NewUser::new("a@example.com", "t1").last_name("Ö"))
        .await
        .unwrap();
    c.users().update_group("u/1", "t2").await.unwrap();
    c.users().delete("u1").await.unwrap();
    assert_eq!(c.teams().rename("t1", "Ops").await.unwrap().name, "Ops");
    assert_eq!(c.users().all(&ListQuery::new()).await.unwrap().len(), 1);

    let sent = replay.requests();
    let base = "http://data.test/projects/acme/prod/__svc_app__/models";
    assert_eq!(sent[0].uri, format!("{base}/users?group=t1").as_str());
    assert_eq!(sent[1].method, http::Method::POST);
    assert_eq!(
        body(&replay, 1),
        json!({"email": "a@example.com", "group": "t1", "last_name": "Ö"})
    );
    assert_eq!(sent[2].method, http::Method::PATCH);
    assert_eq!(sent[2].uri, format!("{base}/users/u%2F1").as_str());
    assert_eq!(body(&replay, 2), json!({"group": "t2"}));
    assert_eq!(sent[3].method, http::Method::DELETE);
    assert_eq!(sent[4].uri, format!("{base}/groups/t1").as_str());
    assert_eq!(body(&replay, 4), json!({"name": "Ops"}));
    assert_eq!(
        sent[5].uri,
        format!("{base}/users?_no_pagination=1").as_str()
    );
    for r in &sent {
        assert_eq!(r.header("authorization"), Some("tok_tools"));
    }
}

#[tokio::test]
async fn user_creates_are_never_sent_twice() {
    let replay = ReplayTransport::new().push(503, "").push(503, "");
    let c = client(&replay);
    let err = c
        .users()
        .create(&NewUser::new("a@example.com", "t1"))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::SERVICE_UNAVAILABLE));
    let err = c.users().update_group("u1", "t2").await.unwrap_err();
    assert_eq!(err.sent(), Sent::Yes);
    assert_eq!(replay.requests().len(), 2, "one attempt each");
}

#[tokio::test]
async fn reload_paths_retries_and_answers() {
    let replay = ReplayTransport::new()
        .push(502, "")
        .push(200, r#"{"success": true}"#)
        .push(200, r#"{"success": true}"#)
        .push(200, r#"{"success": false}"#)
        .push(200, "<html>");
    let c = client(&replay);
    c.resources().reload("shop").await.unwrap();
    c.resources().reload_tools().await.unwrap();
    let err = c.resources().reload("shop").await.unwrap_err();
    assert!(matches!(err, Error::Decode(_)), "{err}");
    assert!(err.to_string().contains("success"), "{err}");
    assert!(matches!(
        c.resources().reload("shop").await.unwrap_err(),
        Error::Decode(_)
    ));
    let sent = replay.requests();
    assert_eq!(sent.len(), 5, "the 502 was retried");
    assert_eq!(
        sent[1].uri,
        "http://data.test/projects/acme/prod/shop/reload"
    );
    assert_eq!(sent[1].header("authorization"), Some("tok_shop"));
    assert_eq!(
        sent[2].uri,
        "http://data.test/projects/acme/prod/__svc_app__/reload"
    );
    assert_eq!(sent[2].header("authorization"), Some("tok_tools"));
    // Without a token for the resource, the API key goes as Bearer.
    let replay = ReplayTransport::new().push(200, r#"{"success": true}"#);
    client(&replay).resources().reload("crm").await.unwrap();
    assert_eq!(
        replay.requests()[0].header("authorization"),
        Some("Bearer svc_key_secret")
    );
}
