//! The request journal over real sockets: what `GET /_emulator/projects/{project}/requests` and
//! `Emulator::requests` list, their filters, clearing, the capacity, bodies, the assertions,
//! and that no credential or secret token ever appears in it.

mod common;

use common::{Call, Reply, send};
use http::Method;
use serde_json::{Value, json};
use svc_emulator::{
    ActionConfig, BodyContent, Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig,
    ProxyConfig, RecordedRequest, RequestMatcher, ResourceConfig, Times, WorkflowConfig,
};

const ORDERS: &str = "/projects/demo/prod/shop/models/orders";

/// The project's journal through the route (`query` without `?`), as JSON.
async fn journal(emu: &Emulator, project: &str, key: &str, query: &str) -> Value {
    let path = format!("/_emulator/projects/{project}/requests?{query}");
    let r = send(emu, Call::get(path).bearer(key)).await;
    assert_eq!(r.status, 200, "{:?}", String::from_utf8_lossy(&r.body));
    r.json()
}

/// The listed requests' `method path` and status.
fn listed(journal: &Value) -> Vec<(String, u16)> {
    journal["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .map(|r| {
            (
                format!(
                    "{} {}",
                    r["method"].as_str().unwrap(),
                    r["path"].as_str().unwrap()
                ),
                u16::try_from(r["status"].as_u64().unwrap()).unwrap(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, u16)]) -> Vec<(String, u16)> {
    list.iter().map(|(p, s)| ((*p).to_owned(), *s)).collect()
}

#[tokio::test]
async fn the_route_and_the_rust_api_list_what_was_answered() {
    let emu = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let key = emu.api_key().to_owned();
    send(
        &emu,
        Call::get(format!("{ORDERS}?_per_page=2&status=paid")).bearer(&key),
    )
    .await;
    let created = send(
        &emu,
        Call::new(Method::POST, "/projects/demo/prod/shop/models/customers").bearer(&key).json(
            &json!({"name": "Ada", "email": "ada@example.com", "created_at": "2026-01-01T10:00:00"}),
        ),
    )
    .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    send(&emu, Call::get("/api/projects/demo/").bearer(&key)).await;
    // An unknown path belongs to the project of its key; without a credential, to none.
    send(&emu, Call::get("/nope").bearer(&key))
        .await
        .assert_error(404, "not_found");
    send(&emu, Call::get("/nope/anonymous"))
        .await
        .assert_error(404, "not_found");
    // A path naming a project that is not served, with the key: the key's project.
    send(
        &emu,
        Call::get("/projects/dmeo/prod/shop/models/orders").bearer(&key),
    )
    .await;
    // The emulator-only routes are not recorded.
    send(&emu, Call::get("/_emulator/openapi.json")).await;

    let all = journal(&emu, "demo", &key, "").await;
    assert_eq!(
        listed(&all),
        pairs(&[
            ("GET /projects/demo/prod/shop/models/orders", 200),
            ("POST /projects/demo/prod/shop/models/customers", 201),
            ("GET /api/projects/demo/", 200),
            ("GET /nope", 404),
            ("GET /projects/dmeo/prod/shop/models/orders", 403),
        ])
    );
    assert_eq!(all["dropped"], 0);
    let first = &all["requests"][0];
    assert_eq!(first["query"], "_per_page=2&status=paid");
    assert_eq!(first["project"], "demo");
    assert_eq!(first["environment"], "prod");
    assert_eq!(first["resource"], "shop");
    assert_eq!(first["model"], "orders");
    assert!(first["duration_ms"].as_f64().unwrap() >= 0.0);
    assert!(first["id"].as_u64().unwrap() >= 1);
    let time = first["time"].as_str().unwrap();
    assert!(time.len() == 24 && time.ends_with('Z'), "{time}");
    assert!(
        first.get("request_body").is_none(),
        "no bodies unless asked"
    );
    assert_eq!(all["requests"][2]["project"], "demo");
    assert_eq!(all["requests"][2]["environment"], Value::Null);
    assert_eq!(all["requests"][3]["project"], "demo");
    assert_eq!(all["requests"][4]["project"], "dmeo");
    // Reading the journal did not add to it.
    assert_eq!(listed(&journal(&emu, "demo", &key, "").await).len(), 5);

    // Filters.
    assert_eq!(
        listed(&journal(&emu, "demo", &key, "method=post").await),
        pairs(&[("POST /projects/demo/prod/shop/models/customers", 201)])
    );
    assert_eq!(
        listed(&journal(&emu, "demo", &key, "status=4xx").await).len(),
        2
    );
    assert_eq!(
        listed(&journal(&emu, "demo", &key, "status=201").await).len(),
        1
    );
    assert_eq!(
        listed(&journal(&emu, "demo", &key, "path_prefix=%2Fapi%2F").await),
        pairs(&[("GET /api/projects/demo/", 200)])
    );
    let since = all["requests"][3]["time"].as_str().unwrap().to_owned();
    let later = journal(&emu, "demo", &key, &format!("since={since}")).await;
    let later = later["requests"].as_array().unwrap().clone();
    assert!(later.iter().any(|r| r["path"] == "/nope"));
    assert!(
        later
            .iter()
            .all(|r| r["time"].as_str().unwrap() >= since.as_str())
    );
    // Bodies are not kept by default: asking for them is a 400 that says how.
    let r = send(
        &emu,
        Call::get("/_emulator/projects/demo/requests?bodies=true").bearer(&key),
    )
    .await;
    let error = r.assert_error(400, "invalid");
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("--journal-bodies"),
        "{error}"
    );
    send(
        &emu,
        Call::get("/_emulator/projects/demo/requests?status=abc").bearer(&key),
    )
    .await
    .assert_error(400, "invalid");

    // The Rust API lists every project's requests and those of none.
    let requests = emu.requests();
    assert_eq!(requests.len(), 6);
    let anonymous = &requests[4];
    assert_eq!(
        (anonymous.path.as_str(), anonymous.project.as_deref()),
        ("/nope/anonymous", None)
    );
    assert!(requests.windows(2).all(|w| w[0].id < w[1].id));
    assert_eq!(requests[0].method, "GET");
    assert_eq!(
        requests[0].query.as_deref(),
        Some("_per_page=2&status=paid")
    );
    assert!(requests[0].response_body.is_none());
    let same: Vec<Value> = requests
        .iter()
        .filter(|r| r.project.is_some())
        .map(|r| {
            let mut v = serde_json::to_value(r).unwrap();
            let map = v.as_object_mut().unwrap();
            map.remove("request_body");
            map.remove("response_body");
            v
        })
        .collect();
    assert_eq!(
        Value::Array(same),
        all["requests"],
        "the route lists the same fields"
    );
    let created = emu.assert_received(
        RequestMatcher::post()
            .resource("shop")
            .model("customers")
            .status(201),
    );
    assert_eq!(created.len(), 1);
    emu.assert_received_times(RequestMatcher::get().model("orders"), 2);
    emu.assert_received_times(RequestMatcher::any().status_range(400..=499), 3..=3);
    emu.assert_not_received(RequestMatcher::delete());
    assert_eq!(
        emu.requests_matching(RequestMatcher::get().query_param("status", "paid"))
            .len(),
        1
    );
    // `since` as a request's own time (to the millisecond) keeps that request and the later
    // ones, as `matches` does one by one.
    let every = emu.requests();
    let middle = &every[every.len() / 2];
    let since: Vec<u64> = emu
        .requests_matching(RequestMatcher::any().since(middle.time))
        .iter()
        .map(|r| r.id)
        .collect();
    let one_by_one: Vec<u64> = every
        .iter()
        .filter(|r| RequestMatcher::any().since(middle.time).matches(r))
        .map(|r| r.id)
        .collect();
    assert!(since.contains(&middle.id));
    assert_eq!(since, one_by_one);

    // DELETE clears the project's requests; the ones of no project stay.
    let r = send(
        &emu,
        Call::new(Method::DELETE, "/_emulator/projects/demo/requests").bearer(&key),
    )
    .await;
    assert_eq!(r.status, 204);
    assert!(r.body.is_empty());
    assert!(listed(&journal(&emu, "demo", &key, "").await).is_empty());
    assert_eq!(emu.requests().len(), 1);
    emu.clear_requests();
    assert!(emu.requests().is_empty());
    emu.shutdown().await;
}

#[tokio::test]
async fn a_project_reads_only_its_own_requests() {
    let emu = Emulator::start(EmulatorConfig::default().projects(ProjectsConfig::new(vec![
        ProjectConfig::new("one").api_key("key-one"),
        ProjectConfig::new("two").api_key("key-two"),
    ])))
    .await
    .unwrap();
    send(&emu, Call::get("/api/projects/one").bearer("key-one")).await;
    send(&emu, Call::get("/api/projects/two").bearer("key-two")).await;
    send(&emu, Call::get("/api/projects/two/").bearer("key-two")).await;
    assert_eq!(
        listed(&journal(&emu, "one", "key-one", "").await),
        pairs(&[("GET /api/projects/one", 200)])
    );
    assert_eq!(listed(&journal(&emu, "two", "key-two", "").await).len(), 2);
    // Another project's key, or none: 403 and 401, as on the other emulator-only routes.
    let r = send(
        &emu,
        Call::get("/_emulator/projects/two/requests").bearer("key-one"),
    )
    .await;
    r.assert_error(403, "permission_denied");
    let r = send(
        &emu,
        Call::new(Method::DELETE, "/_emulator/projects/two/requests"),
    )
    .await;
    r.assert_error(401, "not_authenticated");
    // Clearing one project leaves the other's.
    let r = send(
        &emu,
        Call::new(Method::DELETE, "/_emulator/projects/one/requests/").bearer("key-one"),
    )
    .await;
    assert_eq!(r.status, 204);
    assert!(listed(&journal(&emu, "one", "key-one", "").await).is_empty());
    assert_eq!(listed(&journal(&emu, "two", "key-two", "").await).len(), 2);
    emu.shutdown().await;
}

#[tokio::test]
async fn the_oldest_requests_are_dropped_past_the_capacity() {
    let emu = Emulator::start(EmulatorConfig::default().journal_capacity(3))
        .await
        .unwrap();
    let key = emu.api_key().to_owned();
    for i in 0..5 {
        send(&emu, Call::get(format!("/nope/{i}")).bearer(&key)).await;
    }
    let j = journal(&emu, "demo", &key, "").await;
    assert_eq!(
        listed(&j),
        pairs(&[
            ("GET /nope/2", 404),
            ("GET /nope/3", 404),
            ("GET /nope/4", 404)
        ])
    );
    assert_eq!(j["dropped"], 2);
    assert_eq!(emu.dropped_requests(), 2);
    let unmet = emu
        .verify(RequestMatcher::get().path("/nope/0"), 1)
        .unwrap_err();
    assert!(
        unmet
            .to_string()
            .contains("and 2 older ones dropped from the journal"),
        "{unmet}"
    );
    emu.shutdown().await;

    let off = Emulator::start(EmulatorConfig::default().journal_capacity(0))
        .await
        .unwrap();
    let key = off.api_key().to_owned();
    send(&off, Call::get(ORDERS).bearer(&key)).await;
    assert!(off.requests().is_empty());
    assert!(listed(&journal(&off, "demo", &key, "").await).is_empty());
    off.shutdown().await;
}

#[tokio::test]
async fn bodies_are_kept_when_the_journal_keeps_them() {
    let emu = Emulator::start(EmulatorConfig::default().journal_bodies(true))
        .await
        .unwrap();
    let key = emu.api_key().to_owned();
    let body =
        json!({"name": "Ada", "email": "ada@example.com", "created_at": "2026-01-01T10:00:00"});
    let created = send(
        &emu,
        Call::new(Method::POST, "/projects/demo/prod/shop/models/customers")
            .bearer(&key)
            .json(&body),
    )
    .await;
    assert_eq!(created.status, 201);
    // A large answer: only its first 64 KiB are kept.
    let big = send(
        &emu,
        Call::get(format!("{ORDERS}?_per_page=1000")).bearer(&key),
    )
    .await;
    assert!(big.body.len() > 64 * 1024, "{}", big.body.len());
    // Not JSON.
    let text = send(
        &emu,
        Call::new(Method::POST, "/projects/demo/prod/shop/models/customers")
            .bearer(&key)
            .raw_body("name=Ada"),
    )
    .await;
    assert_eq!(text.status, 400);
    // Refused before the body was read: no request body.
    send(
        &emu,
        Call::new(Method::POST, "/projects/demo/prod/shop/models/customers").json(&body),
    )
    .await
    .assert_error(401, "not_authenticated");

    let j = journal(&emu, "demo", &key, "bodies=true").await;
    let requests = j["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 4);
    let sent = serde_json::to_vec(&body).unwrap();
    assert_eq!(
        requests[0]["request_body"],
        json!({"json": body, "bytes": sent.len(), "truncated": false})
    );
    assert_eq!(
        requests[0]["response_body"]["json"],
        created.json(),
        "the answer as sent"
    );
    assert_eq!(requests[0]["response_body"]["bytes"], created.body.len());
    assert_eq!(
        requests[1]["request_body"],
        Value::Null,
        "a GET has no body"
    );
    let cut = &requests[1]["response_body"];
    assert_eq!(cut["truncated"], true);
    assert_eq!(cut["bytes"], big.body.len());
    assert_eq!(cut["text"].as_str().unwrap().len(), 64 * 1024);
    assert!(
        big.body
            .starts_with(cut["text"].as_str().unwrap().as_bytes())
    );
    assert_eq!(requests[2]["request_body"]["text"], "name=Ada");
    assert!(requests[2]["response_body"]["json"]["error"].is_string());
    assert_eq!(requests[3]["request_body"], Value::Null);
    assert_eq!(
        requests[3]["response_body"]["json"]["error_code"],
        "not_authenticated"
    );
    // Without `bodies=true`, no bodies.
    let plain = journal(&emu, "demo", &key, "").await;
    assert!(plain["requests"][0].get("request_body").is_none());

    // The same in Rust, and a matcher on the request's JSON.
    let requests = emu.requests();
    let kept = requests[0].request_body.as_ref().unwrap();
    assert_eq!(kept.json(), Some(&body));
    assert!(!kept.truncated);
    emu.assert_received(
        RequestMatcher::post().json_body_includes(json!({"email": "ada@example.com"})),
    );
    emu.assert_received_times(
        RequestMatcher::post().json_body_includes(json!({"email": "someone@else"})),
        0,
    );
    emu.shutdown().await;
}

#[tokio::test]
async fn a_failed_expectation_lists_the_near_misses_best_first() {
    let emu = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let key = emu.api_key().to_owned();
    send(&emu, Call::get(ORDERS).bearer(&key)).await;
    send(
        &emu,
        Call::new(Method::POST, ORDERS)
            .bearer(&key)
            .json(&json!({"total": "x"})),
    )
    .await;
    send(
        &emu,
        Call::get("/projects/demo/prod/shop/models/customers").bearer(&key),
    )
    .await;
    let unmet = emu
        .verify(
            RequestMatcher::post().path(ORDERS).status(201),
            Times::exactly(1),
        )
        .unwrap_err();
    let near: Vec<(&str, u16)> = unmet
        .near_misses()
        .iter()
        .map(|r| (r.method.as_str(), r.status))
        .collect();
    // The POST to the path (wrong status), then the GET of the path; the customers list holds
    // none of the conditions.
    assert_eq!(near, [("POST", 400), ("GET", 200)]);
    let text = unmet.to_string();
    assert!(
        text.starts_with(&format!(
            "expected exactly 1 request matching POST {ORDERS} status 201; received 0 (of 3 recorded)\n\
             near misses, best first:\n  #2 POST {ORDERS} -> 400 at "
        )),
        "{text}"
    );
    assert!(text.contains(": status 400, not 201\n  #1 GET "), "{text}");
    assert!(
        text.ends_with(": method GET, not POST; status 200, not 201"),
        "{text}"
    );
    emu.shutdown().await;
}

#[tokio::test]
#[should_panic(
    expected = "near misses, best first:\n  #1 GET /projects/demo/prod/shop/models/orders"
)]
async fn assert_received_panics_with_the_near_misses() {
    let emu = Emulator::start(EmulatorConfig::default()).await.unwrap();
    send(&emu, Call::get(ORDERS).bearer(emu.api_key())).await;
    emu.assert_received(RequestMatcher::delete().model("orders"));
}

// --- Secrets -------------------------------------------------------------------------------

const API_KEY: &str = "svc_key_journal_apikey_7f3a";
const OTHER_KEY: &str = "second/key+with%chars";
const RESOURCE_TOKEN: &str = "svc_tok_journal_resource_91bc";
const TOOLS_TOKEN: &str = "svc_tools_journal_tools_44de";
const PROXY_SECRET: &str = "sk_live_journal_proxy_0d5e";
const PASSWORD: &str = "correct horse journal 1";
const NEW_PASSWORD: &str = "battery staple journal 2";
const THIRD_PASSWORD: &str = "third journal password 3";
const EMAIL: &str = "ada@example.com";

async fn auth(emu: &Emulator, name: &str, jwt: Option<&str>, body: Value) -> Reply {
    let mut call = Call::new(Method::POST, format!("/projects/demo/prod/auth/{name}")).json(&body);
    if let Some(token) = jwt {
        call = call.auth(format!("JWT {token}"));
    }
    send(emu, call).await
}

fn text(value: &Value, key: &str) -> String {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} in {value}"))
        .to_owned()
}

/// A user signs up, signs in, refreshes, changes and resets a password; API keys, resource
/// tokens, the tools token, JWTs and the proxy's secret travel in headers, query strings, paths
/// and bodies. None of them, nor the passwords and codes, appears anywhere in the journal: its
/// route with bodies, the Rust API's values, their JSON or their `Debug` text.
#[tokio::test]
async fn secrets_never_appear_in_the_journal() {
    let config = EmulatorConfig::default()
        .journal_bodies(true)
        .projects(ProjectsConfig::new(vec![
            ProjectConfig::new("demo")
                .api_key(API_KEY)
                .api_key(OTHER_KEY)
                .tools_token(TOOLS_TOKEN)
                .resource(ResourceConfig::new("notes", RESOURCE_TOKEN).seed_sql(
                    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, api_key TEXT);",
                )),
        ]))
        .proxy(ProxyConfig::new().secret("STRIPE", PROXY_SECRET));
    let emu = Emulator::start(config).await.unwrap();
    let mut secrets: Vec<String> = [
        API_KEY,
        OTHER_KEY,
        RESOURCE_TOKEN,
        TOOLS_TOKEN,
        PROXY_SECRET,
        PASSWORD,
        NEW_PASSWORD,
        THIRD_PASSWORD,
    ]
    .map(str::to_owned)
    .into();
    secrets.push(utf8_encoded(OTHER_KEY));

    // Sign up and in.
    let r = auth(
        &emu,
        "register",
        None,
        json!({"email": EMAIL, "password": PASSWORD}),
    )
    .await;
    assert_eq!(r.json()["result"], true, "{:?}", r.body);
    let r = auth(
        &emu,
        "login",
        None,
        json!({"email": EMAIL, "password": PASSWORD}),
    )
    .await;
    assert_eq!(r.status, 200);
    let state = r.json()["token"].clone();
    let access = text(&state, "access_token");
    let refresh = text(&state, "refresh_token");
    let r = auth(&emu, "refresh", None, json!({"refresh_token": refresh})).await;
    assert_eq!(r.status, 200);
    let refreshed = r.json();
    let access2 = text(&refreshed, "access_token");
    let refresh2 = text(&refreshed, "refresh_token");
    secrets.extend([access.clone(), refresh, access2.clone(), refresh2]);

    // JWTs in headers, a query string and a body.
    let user = send(
        &emu,
        Call::get("/projects/demo/prod/auth/user").auth(format!("JWT {access2}")),
    )
    .await;
    assert_eq!(user.status, 200);
    let notes = "/projects/demo/prod/notes/models/notes";
    let r = send(
        &emu,
        Call::get(format!("{notes}?jwt={access2}&note={access}")).auth(format!("JWT {access2}")),
    )
    .await;
    // Strict mode refuses the unknown fields: a 400 that names them, and not their values.
    assert_eq!(r.status, 400, "{:?}", r.body);

    // Keys and tokens in headers, query strings, paths and bodies.
    let r = send(&emu, Call::get(notes).auth(RESOURCE_TOKEN)).await;
    assert_eq!(r.status, 200);
    let query = format!(
        "{notes}?api_key={API_KEY}&token={RESOURCE_TOKEN}&body__icontains={TOOLS_TOKEN}&x={}",
        utf8_encoded(OTHER_KEY)
    );
    send(&emu, Call::get(query).bearer(API_KEY)).await;
    send(
        &emu,
        Call::get(format!("{notes}/{API_KEY}")).bearer(API_KEY),
    )
    .await;
    send(
        &emu,
        Call::get(format!(
            "/projects/demo/prod/notes/models/{}",
            utf8_encoded(OTHER_KEY)
        ))
        .bearer(OTHER_KEY),
    )
    .await;
    let created = send(
        &emu,
        Call::new(Method::POST, notes).auth(RESOURCE_TOKEN).json(&json!({
            "body": format!("keys {API_KEY} {OTHER_KEY}, token {RESOURCE_TOKEN}, jwt {access}, proxy {PROXY_SECRET}"),
            "api_key": "plain-looking value",
        })),
    )
    .await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    secrets.push("plain-looking value".to_owned());
    // A body longer than the 64 KiB the journal keeps, cut inside the API key: the part of the
    // key before the cut must not show either.
    let head = r#"{"api_key":"plain-looking value","body":""#;
    let filler = "x".repeat(64 * 1024 - head.len() - 12);
    let long = json!({"api_key": "plain-looking value", "body": format!("{filler}{API_KEY} end")});
    assert!(serde_json::to_string(&long).unwrap().starts_with(head));
    let r = send(
        &emu,
        Call::new(Method::POST, notes)
            .auth(RESOURCE_TOKEN)
            .json(&long),
    )
    .await;
    assert_eq!(r.status, 201, "{:?}", r.status);
    secrets.push(API_KEY[..12].to_owned());
    let users = send(
        &emu,
        Call::get("/projects/demo/prod/__svc_app__/models/users").auth(TOOLS_TOKEN),
    )
    .await;
    assert_eq!(users.status, 200);

    // A service token (the route that makes it is not recorded), used as a credential.
    let r = send(
        &emu,
        Call::new(Method::POST, "/_emulator/projects/demo/service_token").bearer(API_KEY),
    )
    .await;
    let service = text(&r.json(), "token");
    secrets.push(service.clone());
    let r = send(&emu, Call::get(notes).auth(format!("JWT {service}"))).await;
    assert_eq!(r.status, 200);
    // A project-less path with a JWT: the proxy (no upstream needed: a bad body is a 400).
    let r = send(
        &emu,
        Call::new(Method::POST, "/api/proxy_request/")
            .auth(format!("JWT {access2}"))
            .json(&json!({"url": format!("http://127.0.0.1:1/?k={{{{secret:STRIPE}}}}"), "secret_tokens": ["STRIPE"], "note": PROXY_SECRET})),
    )
    .await;
    assert!(
        r.status.is_client_error() || r.status.is_server_error(),
        "{}",
        r.status
    );

    // Passwords change; a reset code travels.
    let r = auth(
        &emu,
        "change_password",
        Some(&access2),
        json!({"current_password": PASSWORD, "new_password": NEW_PASSWORD}),
    )
    .await;
    assert_eq!(r.json()["result"], true, "{:?}", r.body);
    secrets.push(text(&r.json()["new_state"], "access_token"));
    secrets.push(text(&r.json()["new_state"], "refresh_token"));
    let r = auth(&emu, "reset_password", None, json!({"email": EMAIL})).await;
    assert_eq!(r.json()["result"], true);
    let outbox = send(
        &emu,
        Call::get("/_emulator/projects/demo/outbox").bearer(API_KEY),
    )
    .await;
    let code = text(outbox.json().as_array().unwrap().last().unwrap(), "code");
    let r = auth(
        &emu,
        "reset_password_complete",
        None,
        json!({"code": code, "new_password": THIRD_PASSWORD}),
    )
    .await;
    assert_eq!(r.json()["result"], true, "{:?}", r.body);
    secrets.push(code);
    secrets.push(text(&r.json()["new_state"], "access_token"));

    // Everything the journal shows.
    let route = send(
        &emu,
        Call::get("/_emulator/projects/demo/requests?bodies=true").bearer(API_KEY),
    )
    .await;
    assert_eq!(route.status, 200);
    let route_text = String::from_utf8(route.body.to_vec()).unwrap();
    let requests: Vec<RecordedRequest> = emu.requests();
    let shown = [
        route_text.clone(),
        serde_json::to_string(&requests).unwrap(),
        format!("{requests:?}"),
        emu.verify(RequestMatcher::delete(), 1)
            .unwrap_err()
            .to_string(),
        emu.verify(RequestMatcher::any(), 0)
            .unwrap_err()
            .to_string(),
    ];
    for secret in &secrets {
        for text in &shown {
            assert!(
                !text.contains(secret.as_str()),
                "{secret:?} appears in the journal: {text}"
            );
        }
    }
    // The journal still says what happened: the bodies are there, with `***` for secrets.
    let journal: Value = serde_json::from_str(&route_text).unwrap();
    let entries = journal["requests"].as_array().unwrap();
    assert_eq!(
        entries.len(),
        17,
        "the emulator-only routes are not recorded"
    );
    let cut = entries
        .iter()
        .find(|e| e["request_body"]["truncated"] == true)
        .unwrap();
    assert!(
        cut["request_body"]["text"]
            .as_str()
            .unwrap()
            .starts_with(r#"{"api_key":"***","body":"xxx"#),
        "a cut JSON body still hides its secret keys' values"
    );
    let login = entries
        .iter()
        .find(|e| e["path"] == "/projects/demo/prod/auth/login")
        .unwrap();
    assert_eq!(
        login["request_body"]["json"],
        json!({"email": EMAIL, "password": "***"})
    );
    assert_eq!(
        login["response_body"]["json"]["token"]["access_token"],
        "***"
    );
    assert_eq!(login["response_body"]["json"]["user"]["email"], EMAIL);
    let listed_with_query = entries
        .iter()
        .find(|e| {
            e["query"]
                .as_str()
                .is_some_and(|q| q.starts_with("api_key="))
        })
        .unwrap();
    assert_eq!(
        listed_with_query["query"],
        "api_key=***&token=***&body__icontains=***&x=***"
    );
    let proxied = entries
        .iter()
        .find(|e| e["path"] == "/api/proxy_request/")
        .unwrap();
    assert_eq!(
        proxied["project"], "demo",
        "the proxy's JWT names the project"
    );
    assert!(
        route_text.contains(r#""path":"/projects/demo/prod/notes/models/notes/***""#),
        "{route_text}"
    );
    emu.shutdown().await;
}

/// What a client gets wrong still hides its secrets: a body that is not valid JSON (no closing
/// brace, a trailing comma, single quotes) and secrets written with `%XX` escapes the
/// emulator's own encoder would not use (`%5F` for `_`, lowercase hex, `%2E` for a JWT's dots).
#[tokio::test]
async fn malformed_bodies_and_percent_encoded_secrets_stay_hidden() {
    let config = EmulatorConfig::default()
        .journal_bodies(true)
        .projects(ProjectsConfig::new(vec![
            ProjectConfig::new("demo").api_key(API_KEY).resource(
                ResourceConfig::new("notes", RESOURCE_TOKEN).seed_sql(
                    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, api_key TEXT, secret_n INTEGER);",
                ),
            ),
        ]));
    let emu = Emulator::start(config).await.unwrap();
    let login = "/projects/demo/prod/auth/login";
    let secret = "hunter4secretpw";
    for body in [
        format!(r#"{{"email":"a@b.c","password":"{secret}""#),
        format!(r#"{{"email":"a@b.c","password":"{secret}",}}"#),
        format!("{{'email':'a@b.c','password':'{secret}'}}"),
    ] {
        let r = send(
            &emu,
            Call::new(Method::POST, login)
                .header("content-type", "application/json")
                .raw_body(body),
        )
        .await;
        assert!(r.status.is_client_error(), "{}", r.status);
    }
    let notes = "/projects/demo/prod/notes/models/notes";
    let r = send(
        &emu,
        Call::new(Method::POST, notes)
            .auth(RESOURCE_TOKEN)
            .header("content-type", "application/json")
            .raw_body(r#"{"body": "x", "api_key": "k3y-in-a-bad-body",}"#),
    )
    .await;
    assert!(r.status.is_client_error(), "{}", r.status);
    let escaped = |text: &str, lower: bool| -> String {
        text.chars()
            .map(|c| match c {
                '_' if lower => "%5f".to_owned(),
                '_' => "%5F".to_owned(),
                c => c.to_string(),
            })
            .collect()
    };
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJlX3g";
    let query = format!(
        "{notes}?q={}&r={}&t={}",
        escaped(API_KEY, false),
        escaped(RESOURCE_TOKEN, true),
        jwt.replace('.', "%2E")
    );
    send(&emu, Call::get(query).auth(RESOURCE_TOKEN)).await;
    send(
        &emu,
        Call::get(format!("{notes}/{}", escaped(API_KEY, true))).auth(RESOURCE_TOKEN),
    )
    .await;

    // An answer that quotes a value the request sent under a secret name.
    let quoted = send(
        &emu,
        Call::get(format!("{notes}?secret_n=quotedsecret99")).auth(RESOURCE_TOKEN),
    )
    .await;
    assert_eq!(quoted.status, 400);
    assert!(String::from_utf8_lossy(&quoted.body).contains("quotedsecret99"));

    let route = send(
        &emu,
        Call::get("/_emulator/projects/demo/requests?bodies=true").bearer(API_KEY),
    )
    .await;
    let route_text = String::from_utf8(route.body.to_vec()).unwrap();
    let shown = [
        route_text.clone(),
        serde_json::to_string(&emu.requests()).unwrap(),
    ];
    for hidden in [
        secret,
        "k3y-in-a-bad-body",
        &escaped(API_KEY, false),
        &escaped(API_KEY, true),
        &escaped(RESOURCE_TOKEN, true),
        "c2lnbmF0dXJlX3g",
        "eyJzdWIiOiJ1MSJ9",
        "quotedsecret99",
    ] {
        for text in &shown {
            assert!(!text.contains(hidden), "{hidden:?} appears: {text}");
        }
    }
    let journal: Value = serde_json::from_str(&route_text).unwrap();
    let entries = journal["requests"].as_array().unwrap();
    assert_eq!(entries.len(), 7, "{route_text}");
    assert_eq!(
        entries[0]["request_body"]["text"],
        r#"{"email":"a@b.c","password":"***""#
    );
    assert_eq!(entries[4]["query"], "q=***&r=***&t=***");
    emu.shutdown().await;
}

/// `text` percent-encoded as a path segment or query value.
fn utf8_encoded(text: &str) -> String {
    svc_model::records::wire::encode_component(text).into_owned()
}

#[tokio::test]
async fn action_and_workflow_runs_are_listed_with_what_they_name() {
    let config = ProjectsConfig::new(vec![
        ProjectConfig::new("demo")
            .api_key("key-demo")
            .resource(
                ResourceConfig::new("shop", "tok-shop")
                    .seed_sql("CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT); INSERT INTO orders VALUES (1, 'paid');")
                    .action(ActionConfig::sql(
                        "refund",
                        "UPDATE orders SET status = 'refunded' WHERE id = :id RETURNING *",
                    )),
            )
            .workflow(WorkflowConfig::new("wf-refund").step("shop", "refund")),
    ]);
    let emu = Emulator::start(
        EmulatorConfig::default()
            .projects(config)
            .journal_bodies(true),
    )
    .await
    .unwrap();
    let action = Call::new(Method::POST, "/projects/demo/prod/shop/actions/refund")
        .bearer("key-demo")
        .json(&json!({"data": {"id": 1}}));
    assert_eq!(send(&emu, action).await.status, 200);
    let run = Call::new(Method::POST, "/projects/demo/prod/workflows/wf-refund/run")
        .bearer("key-demo")
        .json(&json!({"data": {"id": 2}}));
    let reply = send(&emu, run).await;
    assert_eq!(reply.json(), json!({"success": true, "result": []}));
    let actions = emu.assert_received(
        RequestMatcher::post()
            .resource("shop")
            .path("/projects/demo/prod/shop/actions/refund")
            .json_body_includes(json!({"data": {"id": 1}})),
    );
    assert_eq!(actions.len(), 1);
    let response = actions[0].response_body.as_ref().map(|b| &b.content);
    assert_eq!(
        response,
        Some(&BodyContent::Json(
            json!({"data": [{"id": 1, "status": "refunded"}]})
        ))
    );
    let runs = emu.assert_received(
        RequestMatcher::post()
            .project("demo")
            .path_prefix("/projects/demo/prod/workflows/"),
    );
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].resource, None);
    emu.shutdown().await;
}
