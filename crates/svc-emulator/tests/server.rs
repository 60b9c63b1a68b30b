//! The server around the routes: unknown paths and methods, projects, config files, persistence
//! across restarts, TLS and HTTP/2, and stopping.

mod common;

use common::{Call, TempDir, demo, send, send_h1, send_h2, tls_connect};
use http::Method;
use serde_json::json;
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

#[tokio::test]
async fn unknown_paths_are_json_404() {
    let emu = demo().await;
    for path in [
        "/",
        "/nope",
        "/api",
        "/api/",
        "/api/projects/",
        "/api/projects/demo/prod/",
        "/api/projects/demo/prod/view_settings/a/b/",
        "/api/projects/demo/prod/view_settings//",
    ] {
        send(&emu, Call::get(path).bearer(emu.api_key()))
            .await
            .assert_error(404, "not_found");
    }
    // A path segment that does not decode to UTF-8 names nothing.
    send(
        &emu,
        Call::get("/api/projects/demo/prod/view_settings/%FF/").bearer(emu.api_key()),
    )
    .await
    .assert_error(404, "not_found");
    emu.shutdown().await;
}

/// An unknown resource's `404` names the project's resources, for the project's own
/// credentials (an API key, a user session) and on the proxy.
#[tokio::test]
async fn an_unknown_resource_names_the_resources_there_are() {
    let emu = demo().await;
    let body = send(
        &emu,
        Call::get("/projects/demo/prod/shopp/models/orders/").bearer(emu.api_key()),
    )
    .await
    .assert_error(404, "not_found");
    assert_eq!(
        body["error"],
        "Resource \"shopp\" not found. The project's resources: shop."
    );
    emu.shutdown().await;
}

#[tokio::test]
async fn wrong_methods_are_json_405() {
    let emu = demo().await;
    let cases = [
        (Method::PUT, "/api/projects/demo/prod/view_settings/"),
        (Method::DELETE, "/api/projects/demo/prod/view_settings"),
        (Method::POST, "/api/projects/demo/prod/view_settings/x/"),
        (Method::PUT, "/api/projects/demo/prod/view_settings/x"),
        (Method::POST, "/api/projects/demo/"),
        (Method::DELETE, "/api/projects/demo"),
    ];
    for (method, path) in cases {
        let r = send(&emu, Call::new(method, path).bearer(emu.api_key())).await;
        r.assert_error(405, "method_not_allowed");
        assert!(r.headers.contains_key(http::header::ALLOW), "{path}");
    }
    emu.shutdown().await;
}

#[tokio::test]
async fn project_json() {
    let emu = demo().await;
    for path in ["/api/projects/demo/", "/api/projects/demo"] {
        let r = send(&emu, Call::get(path).bearer(emu.api_key())).await;
        assert_eq!(r.status, 200);
        let p = r.json();
        assert_eq!(p["unique_name"], "demo");
        assert_eq!(p["name"], "Demo");
        assert_eq!(p["url"], format!("{}/projects/demo/", emu.app_base_url()));
        assert_eq!(
            p["environments"],
            json!([{"unique_name": "prod", "name": "prod"}, {"unique_name": "staging", "name": "staging"}])
        );
        assert_eq!(p["default_environment"], "prod");
        assert_eq!(
            p["resources"],
            json!([{"unique_name": "shop", "name": "shop", "type": "sqlite"}])
        );
        assert_eq!(p["params"], json!({}));
    }
    send(&emu, Call::get("/api/projects/demo/"))
        .await
        .assert_error(401, "not_authenticated");
    send(&emu, Call::get("/api/projects/demo/").bearer("wrong"))
        .await
        .assert_error(401, "not_authenticated");
    send(
        &emu,
        Call::get("/api/projects/ghost/").bearer(emu.api_key()),
    )
    .await
    .assert_error(403, "permission_denied");
    emu.shutdown().await;
}

fn two_projects() -> ProjectsConfig {
    ProjectsConfig::new(vec![
        ProjectConfig::new("alpha")
            .display_name("Alpha")
            .environments(["prod", "dev"])
            .api_key("key-alpha")
            .resource(
                ResourceConfig::new("shop", "tok-shop")
                    .seed_sql("CREATE TABLE t (id INTEGER PRIMARY KEY);"),
            ),
        ProjectConfig::new("beta").api_key("key-beta"),
    ])
}

#[tokio::test]
async fn several_projects_from_code() {
    let emu = Emulator::start(EmulatorConfig::default().projects(two_projects()))
        .await
        .unwrap();
    assert_eq!(emu.project().as_str(), "alpha");
    assert_eq!(emu.environment().as_str(), "prod");
    assert_eq!(emu.api_key(), "key-alpha");
    // The connected resource and the built-in tools resource (users and teams).
    assert_eq!(emu.resource_tokens().len(), 2);
    assert_eq!(emu.resource_tokens()["shop"], "tok-shop");
    assert_eq!(emu.resource_tokens()["__svc_app__"], emu.tools_token());
    assert!(emu.tools_token().starts_with("svc_tools_"));

    let alpha = send(&emu, Call::get("/api/projects/alpha/").bearer("key-alpha"))
        .await
        .json();
    assert_eq!(
        alpha["resources"],
        json!([{"unique_name": "shop", "name": "shop", "type": "sqlite"}])
    );
    let r = send(&emu, Call::get("/api/projects/beta/").bearer("key-beta")).await;
    assert_eq!(r.json()["default_environment"], "prod");
    // A key of another, existing project.
    send(&emu, Call::get("/api/projects/beta/").bearer("key-alpha"))
        .await
        .assert_error(403, "permission_denied");
    send(
        &emu,
        Call::get("/api/projects/alpha/dev/view_settings/").bearer("key-beta"),
    )
    .await
    .assert_error(403, "permission_denied");
    // A resource token is not an API key on the application host.
    send(&emu, Call::get("/api/projects/alpha/").bearer("tok-shop"))
        .await
        .assert_error(401, "not_authenticated");
    emu.shutdown().await;
}

#[tokio::test]
async fn config_file_and_restart_without_it() {
    let dir = TempDir::new();
    let config = dir.join("emulator.json");
    std::fs::write(&config, serde_json::to_vec(&two_projects()).unwrap()).unwrap();
    let data = dir.join("data/meta.sqlite");

    let emu = Emulator::start(
        EmulatorConfig::default()
            .config_file(&config)
            .data_path(&data),
    )
    .await
    .unwrap();
    assert_eq!(emu.project().as_str(), "alpha");
    emu.shutdown().await;

    // Without a config, the same data path serves the projects it saved.
    let emu = Emulator::start(EmulatorConfig::default().data_path(&data))
        .await
        .unwrap();
    assert_eq!(emu.project().as_str(), "alpha");
    assert_eq!(emu.api_key(), "key-alpha");
    emu.shutdown().await;

    // A bad config file is an error at start, never a panic, and names no secret.
    std::fs::write(
        &config,
        r#"{"projects":[{"name":"x","api_keys":"secret-value"}]}"#,
    )
    .unwrap();
    let err = Emulator::start(EmulatorConfig::default().config_file(&config))
        .await
        .unwrap_err();
    assert!(!err.to_string().contains("secret-value"), "{err}");
    let err = Emulator::start(EmulatorConfig::default().config_file(dir.join("missing.json")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("missing.json"), "{err}");
}

#[tokio::test]
async fn state_survives_a_restart_on_the_same_data_path() {
    let dir = TempDir::new();
    let data = dir.join("meta.sqlite");
    let config = || EmulatorConfig::default().data_path(&data);

    let emu = Emulator::start(config()).await.unwrap();
    let key = emu.api_key().to_owned();
    assert!(key.starts_with("svc_key_") && key.len() == 40, "{key}");
    let path = "/api/projects/demo/prod/view_settings/";
    let created = send(
        &emu,
        Call::new(Method::POST, path)
            .bearer(&key)
            .json(&json!({"uid": "kept", "params": "{}"})),
    )
    .await;
    assert_eq!(created.status, 201);
    let created = created.json();
    let drafted = send(
        &emu,
        Call::new(Method::POST, format!("{path}?draft=1"))
            .bearer(&key)
            .json(&json!({"uid": "draft-only"})),
    )
    .await;
    assert_eq!(drafted.status, 201);
    emu.shutdown().await;

    let emu = Emulator::start(config()).await.unwrap();
    assert_eq!(emu.api_key(), key, "the generated key is stable");
    let got = send(&emu, Call::get(format!("{path}kept/")).bearer(&key)).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json(), created);
    let drafts = send(&emu, Call::get(format!("{path}?draft=1")).bearer(&key))
        .await
        .json();
    assert_eq!(drafts.as_array().map(Vec::len), Some(2));
    emu.shutdown().await;

    // Another data path is another world, with another key.
    let other = Emulator::start(EmulatorConfig::default().data_path(dir.join("other.sqlite")))
        .await
        .unwrap();
    assert_ne!(other.api_key(), key);
    other.shutdown().await;
    // In memory, every start has a fresh random key.
    let (a, b) = (demo().await, demo().await);
    assert_ne!(a.api_key(), b.api_key());
}

#[tokio::test]
async fn tls_with_http1_and_http2() {
    let emu = Emulator::start(EmulatorConfig::default().tls(true))
        .await
        .unwrap();
    let port = emu.local_addr().port();
    assert_eq!(emu.api_base_url(), format!("https://127.0.0.1:{port}"));
    assert_eq!(emu.app_base_url(), format!("https://127.0.0.1:{port}/api"));
    let pem_path = emu.tls_ca_pem_path().unwrap().to_owned();
    assert_eq!(std::fs::read(&pem_path).unwrap(), emu.tls_ca_pem().unwrap());
    assert!(
        emu.tls_ca_pem()
            .unwrap()
            .starts_with(b"-----BEGIN CERTIFICATE-----")
    );
    assert_eq!(emu.startup_info().tls_ca_pem.as_deref(), Some(&*pem_path));

    let call = Call::get("/api/projects/demo/").bearer(emu.api_key());
    for name in ["127.0.0.1", "localhost"] {
        let stream = tls_connect(&emu, name, &[b"http/1.1"]).await;
        let r = send_h1(stream, &call).await;
        assert_eq!(r.status, 200, "via {name}");
        assert_eq!(r.version, http::Version::HTTP_11);
    }
    let stream = tls_connect(&emu, "127.0.0.1", &[b"h2"]).await;
    assert_eq!(stream.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let r = send_h2(stream, &call, &format!("127.0.0.1:{port}"), "https").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.version, http::Version::HTTP_2);
    assert_eq!(r.json()["unique_name"], "demo");

    emu.shutdown().await;
    assert!(!pem_path.exists(), "the temporary CA file is removed");
}

#[tokio::test]
async fn tls_ca_file_lives_beside_the_data() {
    let dir = TempDir::new();
    let data = dir.join("meta.sqlite");
    let emu = Emulator::start(EmulatorConfig::default().tls(true).data_path(&data))
        .await
        .unwrap();
    assert_eq!(
        emu.tls_ca_pem_path(),
        Some(&*dir.join("meta.sqlite.ca.pem"))
    );
    emu.shutdown().await;
    assert!(dir.join("meta.sqlite.ca.pem").exists());
}

#[tokio::test]
async fn plain_http2_prior_knowledge() {
    let emu = demo().await;
    let stream = TcpStream::connect(emu.local_addr()).await.unwrap();
    let authority = emu.local_addr().to_string();
    let r = send_h2(
        stream,
        &Call::get("/api/projects/demo/").bearer(emu.api_key()),
        &authority,
        "http",
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.version, http::Version::HTTP_2);
    emu.shutdown().await;
}

#[tokio::test]
async fn shutdown_closes_listener_and_idle_connections() {
    let emu = demo().await;
    let addr = emu.local_addr();
    // An idle keep-alive connection that has served one request.
    let mut idle = TcpStream::connect(addr).await.unwrap();
    use tokio::io::AsyncWriteExt;
    idle.write_all(b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = vec![0u8; 4096];
    let n = idle.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 404"));

    emu.shutdown().await;
    let mut rest = Vec::new();
    idle.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty(), "closed without another response");
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
}

#[tokio::test]
async fn dropping_the_emulator_stops_the_server() {
    let emu = demo().await;
    let mut idle = TcpStream::connect(emu.local_addr()).await.unwrap();
    // Make sure the connection was accepted and is being served.
    use tokio::io::AsyncWriteExt;
    idle.write_all(b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut buf = vec![0u8; 4096];
    let n = idle.read(&mut buf).await.unwrap();
    assert!(n > 0);
    drop(emu);
    // The server closes the connection on its own; the timeout only guards against a hang.
    let mut rest = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        idle.read_to_end(&mut rest),
    )
    .await
    .expect("the connection was closed")
    .unwrap();
}

#[tokio::test]
async fn malformed_requests_do_not_break_the_server() {
    let emu = demo().await;
    let mut raw = TcpStream::connect(emu.local_addr()).await.unwrap();
    use tokio::io::AsyncWriteExt;
    raw.write_all(b"\x00\x01garbage\r\n\r\n").await.unwrap();
    let mut rest = Vec::new();
    let _ = raw.read_to_end(&mut rest).await;
    // Still serving.
    let r = send(&emu, Call::get("/api/projects/demo/").bearer(emu.api_key())).await;
    assert_eq!(r.status, 200);
    emu.shutdown().await;
}

#[tokio::test]
async fn startup_info_and_debug_output() {
    let emu = demo().await;
    let info = serde_json::to_value(emu.startup_info()).unwrap();
    assert_eq!(info["api_base_url"], emu.api_base_url());
    assert_eq!(info["app_base_url"], emu.app_base_url());
    assert_eq!(info["project"], "demo");
    assert_eq!(info["environment"], "prod");
    assert_eq!(info["api_key"], emu.api_key());
    let token = emu.resource_tokens()["shop"].clone();
    let tools = emu.tools_token().to_owned();
    assert_eq!(
        info["resource_tokens"],
        json!({"shop": token, "__svc_app__": tools})
    );
    assert!(info.get("tls_ca_pem").is_none());
    let debug = format!("{emu:?}");
    assert!(!debug.contains(emu.api_key()), "{debug}");
    assert!(!debug.contains(&token), "{debug}");
    assert!(!debug.contains(&tools), "{debug}");
    emu.shutdown().await;
}

/// Paging text that is not an integer: a `400` naming the parameter by default
/// ([decision: stricter]), read as the data engine reads it (page 1, 25 per page) with
/// `lenient`.
#[tokio::test]
async fn strict_mode_refuses_what_the_engine_ignores_and_lenient_mode_follows_it() {
    let orders = "/projects/demo/prod/shop/models/orders";
    let strict = demo().await;
    let lenient = Emulator::start(EmulatorConfig::default().lenient(true))
        .await
        .unwrap();
    let get = |emulator: &Emulator, query: &str| {
        Call::get(format!("{orders}?{query}")).bearer(emulator.api_key())
    };
    let first = send(&strict, Call::get(orders).bearer(strict.api_key()))
        .await
        .json();
    // Paging text that is not an integer reads as the default in both modes, as in the engine.
    for emulator in [&strict, &lenient] {
        for query in ["page=abc", "_per_page=ten&page=x", "page=last"] {
            let reply = send(emulator, get(emulator, query)).await;
            assert_eq!(reply.status, 200, "{query}");
            let body = reply.json();
            assert_eq!(body["results"], first["results"], "{query}");
            assert_eq!(body["count"], first["count"], "{query}");
        }
    }
    // A filter the engine silently ignores: strict 400 naming it, lenient ignores it too.
    for query in ["nosuch=1", "status__gt=a", "quantity__istartswith=1"] {
        let key = query.split('=').next().unwrap_or_default();
        let body = send(&strict, get(&strict, query))
            .await
            .assert_error(400, "invalid");
        assert!(body.get(key).is_some(), "{query}: {body}");
        let reply = send(&lenient, get(&lenient, query)).await;
        assert_eq!(reply.status, 200, "{query}");
        assert_eq!(reply.json()["count"], first["count"], "{query}");
    }
    // Where the engine fails (an unknown `_order_by` field): strict 400, lenient 500.
    send(&strict, get(&strict, "_order_by=nosuch"))
        .await
        .assert_error(400, "invalid");
    send(&lenient, get(&lenient, "_order_by=nosuch"))
        .await
        .assert_error(500, "engine_failure");
    strict.shutdown().await;
    lenient.shutdown().await;
}

/// A write's unknown fields: the engine ignores them (`201`/`200`, nothing changed, a misspelt
/// field lost without a word); strict mode refuses them with a `400` that names them and lists
/// the model's fields ([decision: stricter]); lenient mode ignores them as the engine does.
#[tokio::test]
async fn strict_mode_refuses_unknown_fields_on_writes_and_lenient_mode_ignores_them() {
    let orders = "/projects/demo/prod/shop/models/orders";
    let strict = demo().await;
    let lenient = Emulator::start(EmulatorConfig::default().lenient(true))
        .await
        .unwrap();
    let patch = |emulator: &Emulator, body: &str| {
        Call::new(Method::PATCH, format!("{orders}/7"))
            .bearer(emulator.api_key())
            .json(&serde_json::from_str(body).unwrap())
    };
    let before = send(
        &strict,
        Call::get(format!("{orders}/7")).bearer(strict.api_key()),
    )
    .await
    .json();
    let body = send(&strict, patch(&strict, r#"{"stauts": "paid"}"#))
        .await
        .assert_error(400, "invalid");
    assert!(body.get("stauts").is_some(), "{body}");
    let message = body.to_string();
    assert!(
        message.contains("status, total"),
        "the fields are listed: {message}"
    );
    let after = send(
        &strict,
        Call::get(format!("{orders}/7")).bearer(strict.api_key()),
    )
    .await
    .json();
    assert_eq!(after, before);
    // A known field beside an unknown one: nothing is written either.
    send(&strict, patch(&strict, r#"{"note": "x", "colour": 1}"#))
        .await
        .assert_error(400, "invalid");
    let create = |emulator: &Emulator| {
        Call::new(Method::POST, "/projects/demo/prod/shop/models/customers")
            .bearer(emulator.api_key())
            .json(&json!({"name": "Zoë", "email": "zoe@example.com", "created_at": "2026-01-02T03:04:05", "extra": true}))
    };
    let body = send(&strict, create(&strict))
        .await
        .assert_error(400, "invalid");
    assert!(body.get("extra").is_some(), "{body}");

    // Lenient: as the engine, ignored.
    let reply = send(
        &lenient,
        patch(&lenient, r#"{"stauts": "paid", "note": "kept"}"#),
    )
    .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["note"], "kept");
    assert!(reply.json().get("stauts").is_none());
    let created = send(&lenient, create(&lenient)).await;
    assert_eq!(created.status, 201, "{:?}", created.json());
    strict.shutdown().await;
    lenient.shutdown().await;
}

/// A primary key in the path is read as the engine reads it: its IntegerField does
/// `int(str(value).strip())`, so `+1`, ` 1` and `01` name record 1 on the engine too (a `200`,
/// and a `204` for a delete), while `1.0` is its `400` "not a valid integer". Pinned because
/// treating `+1` as a missing record would refuse what the engine answers with 2xx.
#[tokio::test]
async fn record_keys_in_the_path_are_read_as_the_engine_reads_them() {
    let orders = "/projects/demo/prod/shop/models/orders";
    let emulator = demo().await;
    let get = |key: &str| Call::get(format!("{orders}/{key}")).bearer(emulator.api_key());
    let first = send(&emulator, get("1")).await.json();
    assert_eq!(first["id"], 1);
    // `+` is a plus sign in a path (not a space); `%20` is a space; `%2B` a plus.
    for key in ["+1", "%2B1", "%201", "01", "%201%20", "0001"] {
        let reply = send(&emulator, get(key)).await;
        assert_eq!(reply.status, 200, "{key}");
        assert_eq!(reply.json(), first, "{key}");
    }
    for key in ["1.0", "1e0", "0x1", "1%2B", "+-1", "%2B%201"] {
        let body = send(&emulator, get(key)).await.assert_error(400, "invalid");
        assert_eq!(
            body["non_field_errors"],
            json!(["not a valid integer"]),
            "{key}"
        );
    }
    let deleted = send(
        &emulator,
        Call::new(Method::DELETE, format!("{orders}/+1")).bearer(emulator.api_key()),
    )
    .await;
    assert_eq!(deleted.status, 204);
    send(&emulator, get("1"))
        .await
        .assert_error(404, "not_found");
    emulator.shutdown().await;
}

/// The API routes answer CORS as the data engine does: `OPTIONS` is `204` without
/// credentials, every answer carries the engine's `Access-Control-*` headers; the emulator's
/// own routes send none.
#[tokio::test]
async fn api_routes_answer_cors_as_the_engine_does() {
    let emu = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let key = emu.api_key().to_owned();
    let orders = "/projects/demo/prod/shop/models/orders";
    let preflight = send(&emu, Call::new(Method::OPTIONS, format!("{orders}/1"))).await;
    assert_eq!(preflight.status, 204);
    assert_eq!(preflight.headers["access-control-allow-origin"], "*");
    assert!(
        preflight.headers["access-control-allow-headers"]
            .to_str()
            .unwrap()
            .contains("Authorization")
    );
    let list = send(
        &emu,
        Call::get(format!("{orders}?_per_page=1")).bearer(&key),
    )
    .await;
    assert_eq!(list.status, 200);
    assert_eq!(list.headers["access-control-allow-origin"], "*");
    assert_eq!(list.headers["access-control-allow-credentials"], "true");
    let app = send(&emu, Call::new(Method::OPTIONS, "/api/projects/demo/")).await;
    assert_eq!(app.status, 204);
    let own = send(
        &emu,
        Call::get("/_emulator/projects/demo/requests").bearer(&key),
    )
    .await;
    assert_eq!(own.status, 200);
    assert!(own.headers.get("access-control-allow-origin").is_none());
    let own_preflight = send(
        &emu,
        Call::new(Method::OPTIONS, "/_emulator/projects/demo/reset"),
    )
    .await;
    assert_ne!(own_preflight.status, 204);
}

/// `HEAD` on a records route: refused by design (`405`, the marker in a header: the answer
/// has no body); lenient mode answers the engine's `500`.
#[tokio::test]
async fn head_on_records_is_refused_or_the_engines_failure() {
    let orders = "/projects/demo/prod/shop/models/orders";
    let strict = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let key = strict.api_key().to_owned();
    let head = send(&strict, Call::new(Method::HEAD, orders).bearer(&key)).await;
    assert_eq!(head.status, 405);
    assert_eq!(head.headers["svc-error-decision"], "stricter");
    let lenient = Emulator::start(EmulatorConfig::default().lenient(true))
        .await
        .unwrap();
    let key = lenient.api_key().to_owned();
    let head = send(&lenient, Call::new(Method::HEAD, orders).bearer(&key)).await;
    assert_eq!(head.status, 500);
    // GET is answered as ever.
    let get = send(
        &lenient,
        Call::get(format!("{orders}?_per_page=1")).bearer(&key),
    )
    .await;
    assert_eq!(get.status, 200);
}

#[tokio::test]
async fn a_database_file_that_does_not_exist_is_named_with_the_ways_out() {
    let config =
        svc_emulator::ProjectsConfig::new(vec![svc_emulator::ProjectConfig::new("p").resource(
            svc_emulator::ResourceConfig::new("shop", "tok_shop_1").database("nothere.sqlite"),
        )]);
    let error = Emulator::start(EmulatorConfig::default().projects(config))
        .await
        .unwrap_err()
        .to_string();
    let absolute = std::env::current_dir().unwrap().join("nothere.sqlite");
    for says in [
        "cannot open resource \"shop\" of project \"p\"",
        &format!("its database file {} does not exist", absolute.display()),
        "give `seed_sql` to create it",
    ] {
        assert!(error.contains(says), "{says:?} not in {error}");
    }
    assert!(!absolute.exists(), "nothing was created");
}
