//! Resets and snapshots over real HTTP (`/_emulator/projects/{project}/...`) and through the
//! Rust handle: records, page settings, users and sessions go back; what is not the
//! emulator's to reset stays.

mod common;

use common::{Call, Reply, TempDir, send};
use http::Method;
use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};

const CUSTOMERS: &str = "/projects/demo/prod/shop/models/customers";
const PAGES: &str = "/api/projects/demo/prod/view_settings/";
const FIXTURE: &str = "/_emulator/projects/demo";

async fn call(emu: &Emulator, method: Method, path: &str, body: Option<Value>) -> Reply {
    let mut c = Call::new(method, path).bearer(emu.api_key());
    if let Some(body) = body {
        c = c.json(&body);
    }
    send(emu, c).await
}

async fn count(emu: &Emulator, path: &str) -> u64 {
    let r = call(emu, Method::GET, path, None).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.json()["count"].as_u64().unwrap()
}

async fn create_customer(emu: &Emulator, email: &str) -> Value {
    let body = json!({"name": "Ada", "email": email, "created_at": "2026-01-02T03:04:05"});
    let r = call(emu, Method::POST, CUSTOMERS, Some(body)).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    r.json()
}

async fn pages(emu: &Emulator) -> usize {
    let r = call(emu, Method::GET, PAGES, None).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.json().as_array().unwrap().len()
}

async fn register_and_login(emu: &Emulator) -> String {
    let auth = |name: &str| format!("/projects/demo/prod/auth/{name}");
    let user = json!({"email": "grace@example.com", "password": "a long password"});
    let r = send(emu, Call::new(Method::POST, auth("register")).json(&user)).await;
    assert_eq!(r.json()["result"], true, "{:?}", r.body);
    let r = send(emu, Call::new(Method::POST, auth("login")).json(&user)).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    r.json()["token"]["access_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn session_status(emu: &Emulator, token: &str) -> u16 {
    let user = Call::get("/projects/demo/prod/auth/user").auth(format!("JWT {token}"));
    send(emu, user).await.status.as_u16()
}

#[tokio::test]
async fn a_reset_puts_records_pages_users_and_sessions_back_as_they_were_at_start() {
    let emu = common::demo().await;
    let customers = count(&emu, CUSTOMERS).await;
    let users = count(&emu, "/projects/demo/prod/__svc_app__/models/users").await;
    let created = create_customer(&emu, "ada@example.com").await;
    let r = call(&emu, Method::POST, PAGES, Some(json!({"name": "Orders"}))).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let token = register_and_login(&emu).await;
    assert_eq!(session_status(&emu, &token).await, 200);
    assert_eq!(count(&emu, CUSTOMERS).await, customers + 1);

    let r = call(&emu, Method::POST, &format!("{FIXTURE}/reset"), None).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let done = r.json();
    assert_eq!(done["name"], "start");
    assert_eq!(done["resources"], json!(["__svc_app__", "shop"]));
    assert_eq!(done["kept"], json!([]));

    assert_eq!(count(&emu, CUSTOMERS).await, customers);
    let id = created["id"].as_i64().unwrap();
    let gone = call(&emu, Method::GET, &format!("{CUSTOMERS}/{id}"), None).await;
    assert_eq!(gone.status, 404);
    assert_eq!(pages(&emu).await, 0);
    assert_eq!(
        count(&emu, "/projects/demo/prod/__svc_app__/models/users").await,
        users
    );
    // The session ended, and the account is gone: signing up again works.
    assert_eq!(session_status(&emu, &token).await, 401);
    let again = register_and_login(&emu).await;
    assert_eq!(session_status(&emu, &again).await, 200);
    // The next generated key is the one the first create got.
    let recreated = create_customer(&emu, "ada@example.com").await;
    assert_eq!(recreated["id"], created["id"]);
}

/// A reset keeps the journal (a test may assert on what led to it); `start_over` empties it
/// too, so a test on a shared emulator sees neither an earlier test's rows nor its requests.
#[tokio::test]
async fn start_over_puts_the_state_back_and_empties_the_journal() {
    let emu = common::demo().await;
    let customers = count(&emu, CUSTOMERS).await;
    create_customer(&emu, "earlier@example.com").await;
    emu.reset().await.expect("a reset");
    assert!(!emu.requests().is_empty(), "a reset keeps the journal");
    create_customer(&emu, "earlier-again@example.com").await;
    let done = emu.start_over().await.expect("start over");
    assert_eq!(done[0].name, "start");
    assert!(emu.requests().is_empty(), "{:?}", emu.requests());
    assert_eq!(emu.dropped_requests(), 0);
    emu.assert_not_received(svc_emulator::RequestMatcher::post());
    assert_eq!(count(&emu, CUSTOMERS).await, customers);
    emu.shutdown().await;
}

#[tokio::test]
async fn a_snapshot_is_restored_as_often_as_asked_and_forgotten_on_delete() {
    let emu = common::demo().await;
    create_customer(&emu, "before@example.com").await;
    let r = call(
        &emu,
        Method::POST,
        &format!("{FIXTURE}/snapshots"),
        Some(json!({"name": "before"})),
    )
    .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.json()["name"], "before");
    let at_snapshot = count(&emu, CUSTOMERS).await;
    for round in 0..2 {
        create_customer(&emu, &format!("after{round}@example.com")).await;
        let restore = format!("{FIXTURE}/snapshots/before/restore");
        let r = call(&emu, Method::POST, &restore, None).await;
        assert_eq!(r.status, 200, "{:?}", r.body);
        assert_eq!(count(&emu, CUSTOMERS).await, at_snapshot);
    }
    let filter = format!("{CUSTOMERS}?email=before@example.com");
    assert_eq!(count(&emu, &filter).await, 1);

    let r = call(&emu, Method::GET, &format!("{FIXTURE}/snapshots"), None).await;
    let names: Vec<Value> = r.json()["snapshots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].clone())
        .collect();
    assert_eq!(names, [json!("start"), json!("before")]);

    let r = call(
        &emu,
        Method::DELETE,
        &format!("{FIXTURE}/snapshots/before"),
        None,
    )
    .await;
    assert_eq!(r.status, 204);
    let restore = format!("{FIXTURE}/snapshots/before/restore");
    let r = call(&emu, Method::POST, &restore, None).await;
    let body = r.assert_error(404, "not_found");
    assert!(body.to_string().contains("its snapshots: start"), "{body}");
}

#[tokio::test]
async fn snapshot_routes_refuse_bad_names_and_other_credentials() {
    let emu = common::demo().await;
    let snapshots = format!("{FIXTURE}/snapshots");
    for (body, field) in [
        (json!({"name": "start"}), "name"),
        (json!({"name": "a/b"}), "name"),
        (json!({"name": ""}), "name"),
        (json!({"name": 7}), "name"),
        (json!({}), "name"),
        (json!({"name": "ok", "extra": 1}), "extra"),
    ] {
        let r = call(&emu, Method::POST, &snapshots, Some(body.clone())).await;
        let err = r.assert_error(400, "invalid");
        assert!(err.to_string().contains(field), "{body}: {err}");
    }
    // Without the project's API key: nothing is reset.
    create_customer(&emu, "kept@example.com").await;
    let before = count(&emu, CUSTOMERS).await;
    let r = send(&emu, reset_call(None)).await;
    assert_eq!(r.status, 401);
    let r = send(&emu, reset_call(Some("Bearer not-a-key"))).await;
    assert_eq!(r.status, 401);
    let r = send(&emu, reset_call(Some(emu.tools_token()))).await;
    assert!(r.status == 401 || r.status == 403, "{:?}", r.status);
    assert_eq!(count(&emu, CUSTOMERS).await, before);
    let r = call(&emu, Method::POST, "/_emulator/projects/nope/reset", None).await;
    assert!(r.status == 403 || r.status == 404, "{:?}", r.status);
}

fn reset_call(auth: Option<&str>) -> Call {
    let c = Call::new(Method::POST, format!("{FIXTURE}/reset"));
    match auth {
        Some(auth) => c.auth(auth),
        None => c,
    }
}

/// A database file of the user's is theirs: kept unless opted in.
#[tokio::test]
async fn a_database_the_emulator_does_not_own_is_reset_only_when_opted_in() {
    let dir = TempDir::new();
    let seed = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);\
                INSERT INTO notes (body) VALUES ('one');";
    let project = ProjectConfig::new("demo")
        .api_key("svc_key_snapshot_test")
        .resource(
            ResourceConfig::new("mine", "tok_mine")
                .database(dir.join("mine.sqlite"))
                .seed_sql(seed),
        )
        .resource(
            ResourceConfig::new("test_db", "tok_test_db")
                .database(dir.join("test_db.sqlite"))
                .seed_sql(seed)
                .reset(true),
        )
        .resource(ResourceConfig::new("owned", "tok_owned").seed_sql(seed));
    let config = EmulatorConfig::default()
        .data_path(dir.join("emu.sqlite"))
        .projects(ProjectsConfig::new(vec![project]));
    let emu = Emulator::start(config).await.unwrap();
    for resource in ["mine", "test_db", "owned"] {
        let path = format!("/projects/demo/prod/{resource}/models/notes");
        let r = call(&emu, Method::POST, &path, Some(json!({"body": "two"}))).await;
        assert_eq!(r.status, 201, "{resource}: {:?}", r.body);
    }
    let done = emu.reset().await.unwrap();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].resources, ["__svc_app__", "owned", "test_db"]);
    assert_eq!(done[0].kept, ["mine"]);
    for (resource, rows) in [("mine", 2), ("test_db", 1), ("owned", 1)] {
        let path = format!("/projects/demo/prod/{resource}/models/notes");
        assert_eq!(count(&emu, &path).await, rows, "{resource}");
    }
    emu.shutdown().await;
}

#[tokio::test]
async fn the_rust_handle_snapshots_and_restores_every_project() {
    let emu = common::demo().await;
    let customers = count(&emu, CUSTOMERS).await;
    emu.snapshot("clean").await.unwrap();
    create_customer(&emu, "x@example.com").await;
    let done = emu.restore("clean").await.unwrap();
    assert_eq!(done[0].name, "clean");
    assert_eq!(count(&emu, CUSTOMERS).await, customers);
    let err = emu.restore("missing").await.unwrap_err();
    assert!(err.to_string().contains("no snapshot \"missing\""), "{err}");
    let err = emu.snapshot("start").await.unwrap_err();
    assert!(err.to_string().contains("state at start"), "{err}");
    let one = emu.reset_project("demo").await.unwrap();
    assert_eq!(one.name, "start");
    assert!(emu.reset_project("nope").await.is_err());
}
