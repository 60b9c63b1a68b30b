//! The web page (`/_emulator/ui/`): its routes over HTTP (sign-in, sessions, host names,
//! origins, the relay, the overview), and the page itself in a real browser.
//!
//! The browser test is `#[ignore]`d so that `cargo test --workspace --all-features` needs nothing
//! but the Rust toolchain; `cargo xtask ci` (and so `.ci/run`, which installs Debian's
//! `chromium` and `chromium-driver` when missing) runs it with `--ignored`, and without Chromium
//! it fails naming what to install. With `SVC_UI_SCREENSHOTS=DIR` it writes its screenshots there
//! (docs/ui/ holds the ones docs/ui.md shows).

mod common;
mod ui {
    pub mod webdriver;
}

use std::net::SocketAddr;

use http::Method;
use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig, RequestMatcher, RequestSource, StubResponse};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use common::{Call, Reply, send};
use ui::webdriver::{Driver, Session};

/// A request as a browser at the emulator's address sends it (`Host` with the port), with
/// extra headers (a cookie, an origin, another host).
async fn send_with(emulator: &Emulator, call: Call, headers: &[(&str, &str)]) -> Reply {
    let mut call = call.header("host", &emulator.local_addr().to_string());
    for (name, value) in headers {
        call = call.header(name, value);
    }
    send(emulator, call).await
}

/// The path and query of the emulator's `ui_url`.
fn sign_in_path(emulator: &Emulator) -> String {
    let url = emulator.ui_url();
    let at = url.find("/_emulator/ui/").expect("ui_url names the page");
    url[at..].to_owned()
}

/// Signs in as a browser would: the session cookie (`name=value`).
async fn signed_in(emulator: &Emulator) -> String {
    let reply = send_with(emulator, Call::get(sign_in_path(emulator)), &[]).await;
    assert_eq!(reply.status, 303);
    let cookie = reply.headers["set-cookie"].to_str().unwrap();
    cookie.split(';').next().unwrap().to_owned()
}

/// Every credential of the demo emulator, and the page's sign-in token.
fn secrets(emulator: &Emulator) -> Vec<String> {
    let mut all = vec![emulator.api_key().to_owned()];
    all.extend(emulator.resource_tokens().values().cloned());
    let token = emulator
        .ui_url()
        .rsplit("token=")
        .next()
        .unwrap()
        .to_owned();
    all.push(token);
    all
}

#[tokio::test]
async fn the_start_line_carries_the_page_s_address_and_debug_hides_its_token() {
    let emulator = common::demo().await;
    let url = emulator.ui_url();
    assert!(
        url.starts_with(&format!("{}/_emulator/ui/?token=", emulator.api_base_url())),
        "{url}"
    );
    let line = serde_json::to_value(emulator.startup_info()).unwrap();
    assert_eq!(line["ui_url"], url);
    let token = url.rsplit("token=").next().unwrap();
    assert_eq!(token.len(), 64);
    assert!(!format!("{:?}", emulator.startup_info()).contains(token));
    // Each start makes its own.
    let other = common::demo().await;
    assert_ne!(other.ui_url().rsplit("token=").next().unwrap(), token);
}

#[tokio::test]
async fn the_page_needs_a_sign_in_and_then_a_session() {
    let emulator = common::demo().await;
    // Not signed in: a page in words, the API a JSON 401.
    let page = send_with(&emulator, Call::get("/_emulator/ui/"), &[]).await;
    assert_eq!(page.status, 401);
    assert!(String::from_utf8_lossy(&page.body).contains("open the ui_url"));
    let api = send_with(&emulator, Call::get("/_emulator/ui/api/overview"), &[]).await;
    api.assert_error(401, "not_authenticated");
    // The API's key is not the page's credential.
    let keyed = send_with(
        &emulator,
        Call::get("/_emulator/ui/api/overview"),
        &[("authorization", &format!("Bearer {}", emulator.api_key()))],
    )
    .await;
    assert_eq!(keyed.status, 401);
    // A token of another run.
    let other_run = format!("/_emulator/ui/?token={}", "0".repeat(64));
    let wrong = send_with(&emulator, Call::get(other_run), &[]).await;
    assert_eq!(wrong.status, 401);
    assert!(String::from_utf8_lossy(&wrong.body).contains("not this run's"));
    // The right one, on any address of the page: back to it without the token.
    let deep = format!(
        "/_emulator/ui/projects/demo/resources/shop/models/orders?status=paid&token={}",
        emulator.ui_url().rsplit("token=").next().unwrap()
    );
    let reply = send_with(&emulator, Call::get(deep), &[]).await;
    assert_eq!(reply.status, 303);
    assert_eq!(
        reply.headers["location"],
        "/_emulator/ui/projects/demo/resources/shop/models/orders?status=paid"
    );
    let set = reply.headers["set-cookie"].to_str().unwrap();
    for part in ["HttpOnly", "SameSite=Strict", "Path=/_emulator/ui"] {
        assert!(set.contains(part), "{set}");
    }
    let cookie = set.split(';').next().unwrap();
    let page = send_with(
        &emulator,
        Call::get("/_emulator/ui/"),
        &[("cookie", cookie)],
    )
    .await;
    assert_eq!(page.status, 200);
    let html = String::from_utf8_lossy(&page.body);
    assert!(html.contains("/_emulator/ui/assets/app.js"));
    let policy = page.headers["content-security-policy"].to_str().unwrap();
    assert!(policy.contains("script-src 'self'"), "{policy}");
    // The files need no session, and are what the crate ships.
    for (file, kind) in [("app.js", "text/javascript"), ("app.css", "text/css")] {
        let reply = send_with(
            &emulator,
            Call::get(format!("/_emulator/ui/assets/{file}")),
            &[],
        )
        .await;
        assert_eq!(reply.status, 200, "{file}");
        assert!(
            reply.headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with(kind)
        );
    }
    let missing = send_with(&emulator, Call::get("/_emulator/ui/assets/x.js"), &[]).await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn the_page_answers_only_under_the_names_it_serves() {
    let emulator = Emulator::start(EmulatorConfig::default().ui_host("emulator.internal"))
        .await
        .unwrap();
    let cookie = signed_in(&emulator).await;
    let port = emulator.local_addr().port();
    for host in [
        format!("localhost:{port}"),
        format!("emulator.internal:{port}"),
    ] {
        let reply = send_with(
            &emulator,
            Call::get("/_emulator/ui/api/overview"),
            &[("host", &host), ("cookie", &cookie)],
        )
        .await;
        assert_eq!(reply.status, 200, "{host}");
    }
    let rebound = send_with(
        &emulator,
        Call::get("/_emulator/ui/api/overview"),
        &[
            ("host", &format!("attacker.example:{port}")),
            ("cookie", &cookie),
        ],
    )
    .await;
    assert_eq!(rebound.status, 403);
    let words = String::from_utf8_lossy(&rebound.body);
    assert!(words.contains("--ui-host"), "{words}");
    // The API itself is not the page: other names reach it as before.
    let api = send_with(
        &emulator,
        Call::get("/projects/demo/prod/shop/models/orders").bearer(emulator.api_key()),
        &[("host", "attacker.example")],
    )
    .await;
    assert_eq!(api.status, 200);
}

#[tokio::test]
async fn the_relay_answers_as_the_api_and_changes_come_from_the_page_s_origin_only() {
    let emulator = Emulator::start(EmulatorConfig::default().journal_bodies(true))
        .await
        .unwrap();
    let cookie = signed_in(&emulator).await;
    let own = format!("http://{}", emulator.local_addr());
    let orders = "/_emulator/ui/api/relay/demo/projects/demo/prod/shop/models/orders";
    // A read: the API's answer, its refusals included.
    let page = send_with(
        &emulator,
        Call::get(format!("{orders}?status=paid&_per_page=2")),
        &[("cookie", &cookie)],
    )
    .await;
    let direct = send(
        &emulator,
        Call::get("/projects/demo/prod/shop/models/orders?status=paid&_per_page=2")
            .bearer(emulator.api_key()),
    )
    .await;
    assert_eq!(page.status, 200);
    assert_eq!(page.json()["results"], direct.json()["results"]);
    assert_eq!(page.json()["count"], direct.json()["count"]);
    let refused = send_with(
        &emulator,
        Call::get(format!("{orders}?total__foo=1")),
        &[("cookie", &cookie)],
    )
    .await;
    let error = refused.assert_error(400, "invalid");
    assert!(
        error["error"].as_str().unwrap().contains("Unknown lookup"),
        "{error}"
    );
    // A change from the page's origin goes through, and the journal has it.
    let products = "/_emulator/ui/api/relay/demo/projects/demo/prod/shop/models/products";
    let made = send_with(
        &emulator,
        Call::new(Method::POST, products)
            .json(&json!({"sku": "SKU-UI", "name": "Lamp", "price": 9.5})),
        &[("cookie", &cookie), ("origin", &own)],
    )
    .await;
    assert_eq!(made.status, 201, "{:?}", made.body);
    // Journaled as the page's: left out of what a test's expectations count.
    let journal = emulator.requests_matching(RequestMatcher::any().any_source());
    let last = journal.last().unwrap();
    assert_eq!(
        (last.method.as_str(), last.path.as_str(), last.status),
        ("POST", "/projects/demo/prod/shop/models/products", 201)
    );
    assert_eq!(last.source, RequestSource::Ui);
    assert!(
        emulator
            .requests()
            .iter()
            .all(|r| r.source == RequestSource::Client)
    );
    emulator.assert_not_received(RequestMatcher::post());
    emulator.assert_received_times(RequestMatcher::post().source(RequestSource::Ui), 1);
    emulator.assert_received(RequestMatcher::post().any_source());
    // From another origin, or with none: refused, nothing done.
    let count = journal.len();
    for headers in [
        vec![
            ("cookie", cookie.as_str()),
            ("origin", "http://127.0.0.1:1"),
        ],
        vec![("cookie", cookie.as_str())],
    ] {
        let reply = send_with(
            &emulator,
            Call::new(Method::POST, products)
                .json(&json!({"sku": "SKU-X", "name": "X", "price": 1})),
            &headers,
        )
        .await;
        let body = reply.assert_error(403, "permission_denied");
        assert!(
            body["error"].as_str().unwrap().starts_with("Refused"),
            "{body}"
        );
    }
    assert_eq!(
        emulator
            .requests_matching(RequestMatcher::any().any_source())
            .len(),
        count,
        "a refused change reached the API"
    );
    // The relay never answers a key, a token or the sign-in token.
    let minted = send_with(
        &emulator,
        Call::get("/_emulator/ui/api/relay/demo/_emulator/projects/demo/requests?bodies=true"),
        &[("cookie", &cookie)],
    )
    .await;
    assert_eq!(minted.status, 200);
    let overview = send_with(
        &emulator,
        Call::get("/_emulator/ui/api/overview"),
        &[("cookie", &cookie)],
    )
    .await;
    let tokens = send_with(
        &emulator,
        Call::get("/_emulator/ui/api/relay/demo/projects/demo/prod/__svc_app__/models/users"),
        &[("cookie", &cookie)],
    )
    .await;
    for reply in [&page, &minted, &overview, &tokens] {
        let text = String::from_utf8_lossy(&reply.body);
        for secret in secrets(&emulator) {
            assert!(!text.contains(&secret), "a secret in {text}");
        }
    }
    // Unknown projects and the page itself are not relayed.
    let nowhere = send_with(
        &emulator,
        Call::get("/_emulator/ui/api/relay/nope/projects/nope/prod/shop/models/orders"),
        &[("cookie", &cookie)],
    )
    .await;
    nowhere.assert_error(404, "not_found");
    let itself = send_with(
        &emulator,
        Call::get("/_emulator/ui/api/relay/demo/_emulator/ui/api/overview"),
        &[("cookie", &cookie)],
    )
    .await;
    itself.assert_error(404, "not_found");
}

/// Every answer of the page that a signed-in browser reads (the overview, the relay's records
/// and journal, the sign-in, a refusal) is kept out of caches and never sniffed; the page's
/// static files are revalidated instead.
#[tokio::test]
async fn signed_in_answers_are_not_stored_or_sniffed() {
    let emulator = common::demo().await;
    let sign_in = send_with(&emulator, Call::get(sign_in_path(&emulator)), &[]).await;
    let cookie = signed_in(&emulator).await;
    let with = [("cookie", cookie.as_str())];
    let mut replies = vec![("the sign-in", sign_in)];
    for path in [
        "/_emulator/ui/api/overview",
        "/_emulator/ui/api/relay/demo/projects/demo/prod/shop/models/orders?_per_page=1",
        "/_emulator/ui/api/relay/demo/_emulator/projects/demo/requests",
        "/_emulator/ui/api/nope",
        "/_emulator/ui/",
    ] {
        replies.push((path, send_with(&emulator, Call::get(path), &with).await));
    }
    let refused = send_with(&emulator, Call::get("/_emulator/ui/api/overview"), &[]).await;
    replies.push(("a refusal", refused));
    for (what, reply) in &replies {
        assert_eq!(reply.headers["cache-control"], "no-store", "{what}");
        assert_eq!(reply.headers["x-content-type-options"], "nosniff", "{what}");
    }
    assert_eq!(replies[2].1.status, 200, "{:?}", replies[2].1.body);
    let script = send_with(&emulator, Call::get("/_emulator/ui/assets/app.js"), &[]).await;
    assert_eq!(script.headers["cache-control"], "no-cache");
    assert_eq!(script.headers["x-content-type-options"], "nosniff");
}

#[tokio::test]
async fn the_overview_names_models_fields_actions_and_no_secret() {
    let emulator = common::demo().await;
    let cookie = signed_in(&emulator).await;
    let reply = send_with(
        &emulator,
        Call::get("/_emulator/ui/api/overview"),
        &[("cookie", &cookie)],
    )
    .await;
    assert_eq!(reply.status, 200);
    let overview = reply.json();
    let demo = &overview["projects"][0];
    assert_eq!(demo["name"], "demo");
    assert_eq!(demo["environments"][0], "prod");
    let shop = &demo["resources"][0];
    assert_eq!(shop["name"], "shop");
    let orders = shop["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "orders")
        .expect("orders");
    assert_eq!(orders["key"], "id");
    let total = orders["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "total")
        .unwrap();
    assert_eq!(total["family"], "number");
    assert!(total["lookups"].as_array().unwrap().contains(&json!("gte")));
    let refund = shop["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "refund")
        .unwrap();
    assert_eq!(refund["inputs"], json!(["id"]));
    assert_eq!(demo["workflows"][0]["uid"], "wf-refund");
    let text = reply.body.escape_ascii().to_string();
    for secret in secrets(&emulator) {
        assert!(!text.contains(&secret));
    }
}

#[tokio::test]
async fn the_overview_says_what_each_fixtures_load_did() {
    let dir = common::TempDir::new();
    std::fs::create_dir_all(dir.0.join("shop")).unwrap();
    std::fs::write(
        dir.0.join("shop/products.json"),
        r#"[{"sku": "FX-1", "name": "Fixture lamp", "price": 1.5},
            {"sku": "FX-2", "name": "Fixture desk", "price": 2.5}]"#,
    )
    .unwrap();
    let emulator = Emulator::start(
        EmulatorConfig::default()
            .fixtures_dir(&dir.0)
            .fixtures_on_rows(svc_emulator::FixturesOnRows::Add),
    )
    .await
    .unwrap();
    let cookie = signed_in(&emulator).await;
    let reply = send_with(
        &emulator,
        Call::get("/_emulator/ui/api/overview"),
        &[("cookie", &cookie)],
    )
    .await;
    let overview = reply.json();
    let fixtures = &overview["projects"][0]["resources"][0]["fixtures"];
    assert_eq!(
        fixtures[0]["outcome"], "loaded 2 record(s) into 1 model(s)",
        "{overview}"
    );
    let source = fixtures[0]["source"].as_str().unwrap();
    assert!(
        source.starts_with("directory ") && source.ends_with("shop"),
        "{source}"
    );
}

#[tokio::test]
async fn an_expectation_answers_its_near_misses() {
    let emulator = common::demo().await;
    let key = emulator.api_key().to_owned();
    send(
        &emulator,
        Call::get("/projects/demo/prod/shop/models/orders?status=paid").bearer(&key),
    )
    .await;
    send(
        &emulator,
        Call::get("/projects/demo/prod/shop/models/order").bearer(&key),
    )
    .await;
    let expect = |query: &str| {
        Call::get(format!("/_emulator/projects/demo/requests/expect?{query}")).bearer(&key)
    };
    let met = send(
        &emulator,
        expect("method=GET&path=/projects/demo/prod/shop/models/orders"),
    )
    .await;
    assert_eq!(met.status, 200);
    let met = met.json();
    assert_eq!(met["met"], true, "{met}");
    assert_eq!(met["matched"].as_array().unwrap().len(), 1);
    let unmet = send(
        &emulator,
        expect("method=POST&path=/projects/demo/prod/shop/models/orders&exactly=1"),
    )
    .await
    .json();
    assert_eq!(unmet["met"], false);
    assert_eq!(unmet["near_misses"][0]["method"], "GET", "{unmet}");
    assert!(
        unmet["report"].as_str().unwrap().contains("near misses"),
        "{unmet}"
    );
    assert_eq!(
        unmet["expected"],
        "exactly 1 matching POST /projects/demo/prod/shop/models/orders"
    );
    for (query, field) in [("at_least=x", "at_least"), ("status=99", "status")] {
        let reply = send(&emulator, expect(query)).await;
        let body = reply.assert_error(400, "invalid");
        assert!(body["error"].as_str().unwrap().starts_with(field), "{body}");
    }
    let both = send(&emulator, expect("at_least=1&exactly=2")).await;
    both.assert_error(400, "invalid");
}

// ------------------------------------------------------------------------------------------------
// In a real browser

/// Where screenshots go: `SVC_UI_SCREENSHOTS`, or nowhere.
async fn screenshot(session: &Session<'_>, name: &str) {
    session
        .script("window.scrollTo(0, 0); return null;", json!([]))
        .await;
    let png = session.screenshot().await;
    assert!(png.starts_with(b"\x89PNG"), "a screenshot is a PNG");
    if let Some(dir) = std::env::var_os("SVC_UI_SCREENSHOTS") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }
}

/// Asserts the page shows no key, token or sign-in token.
async fn no_secret(session: &Session<'_>, emulator: &Emulator, where_: &str) {
    let source = session.source().await;
    for secret in secrets(emulator) {
        assert!(!source.contains(&secret), "a secret on the page ({where_})");
    }
}

/// Asserts every control has a name a screen reader reads: a label or an `aria-label`, or for
/// a button or a link its text (a select's options and a textarea's text are no name).
async fn labelled(session: &Session<'_>, where_: &str) {
    let unnamed = session
        .script(
            "return [...document.querySelectorAll('button,input,select,textarea,a[href]')]
               .filter(e => !(e.closest('[hidden]') || e.closest('dialog:not([open])')))
               .filter(e => !((e.labels && e.labels.length) || e.getAttribute('aria-label')
                 || (['BUTTON', 'A'].includes(e.tagName) && e.textContent.trim())))
               .map(e => e.outerHTML);",
            json!([]),
        )
        .await;
    assert_eq!(unnamed, json!([]), "controls without a name on {where_}");
}

/// The Rust example of docs/ui.md, as a reader sees it (without the doctest's hidden lines).
fn rust_example_of_the_docs() -> String {
    let guide = include_str!("../../../docs/ui.md");
    let start = guide
        .find("```rust,no_run\n")
        .expect("docs/ui.md has a Rust example")
        + 15;
    let end = start + guide[start..].find("```").unwrap();
    guide[start..end]
        .lines()
        .filter(|line| !line.starts_with("# "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A page of another origin on this machine that posts a form to `target` when opened.
async fn other_origin(target: String) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let html = format!(
        "<!doctype html><form id=f method=post action=\"{target}\"></form>\
         <script>document.getElementById('f').submit()</script>"
    );
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let mut buffer = [0u8; 4096];
            let _ = stream.read(&mut buffer).await;
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{html}",
                html.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
        }
    });
    (addr, task)
}

/// The API's answer, with the project's key.
async fn api(emulator: &Emulator, call: Call) -> Value {
    let reply = send(emulator, call.bearer(emulator.api_key())).await;
    assert!(reply.status.is_success(), "{:?}", reply);
    if reply.body.is_empty() {
        Value::Null
    } else {
        reply.json()
    }
}

#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver (cargo xtask ci runs it; see the file's doc)"]
async fn in_a_browser() {
    let emulator = Emulator::start(EmulatorConfig::default().journal_bodies(true))
        .await
        .unwrap();
    let base = emulator.api_base_url().to_owned();
    let driver = Driver::start().await;
    let browser = driver.session(&["rebound.test"]).await;

    // Not signed in: the page says how.
    browser.open(&format!("{base}/_emulator/ui/")).await;
    browser
        .wait_text("the sign-in hint", |t| t.contains("open the ui_url"))
        .await;

    // Signed in by ui_url: the overview, the token gone from the address.
    browser.open(emulator.ui_url()).await;
    browser.find("a[href$=\"/models/orders\"]").await;
    assert_eq!(browser.url().await, format!("{base}/_emulator/ui/"));
    labelled(&browser, "the overview").await;
    no_secret(&browser, &emulator, "the overview").await;
    screenshot(&browser, "overview").await;

    // The grid, driven by the address: the API's own query string.
    let grid = format!("{base}/_emulator/ui/projects/demo/resources/shop/models/orders");
    browser
        .open(&format!("{grid}?status=paid&_order_by=-total"))
        .await;
    browser.find("#records tbody tr[data-pk]").await;
    let expected = api(
        &emulator,
        Call::get("/projects/demo/prod/shop/models/orders?status=paid&_order_by=-total"),
    )
    .await;
    let shown = browser
        .script(
            "return [...document.querySelectorAll('#records tbody tr[data-pk]')].map(r => r.dataset.pk);",
            json!([]),
        )
        .await;
    let ids: Vec<Value> = expected["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| json!(r["id"].to_string()))
        .collect();
    assert_eq!(
        shown,
        json!(ids),
        "the grid shows the API's page, in its order"
    );
    browser.find("#count").await;
    browser
        .wait_text("the count", |t| {
            t.contains(&format!("{} records", expected["count"]))
        })
        .await;
    labelled(&browser, "the grid").await;
    screenshot(&browser, "grid").await;

    // Copy as Rust writes the code docs/ui.md shows, which its doctests compile.
    browser
        .open(&format!(
            "{grid}?status=paid&total__gte=100&_order_by=-total"
        ))
        .await;
    browser.find("#records tbody tr[data-pk]").await;
    browser.click(&browser.find("#copy-rust").await).await;
    browser.find("#snippet").await;
    let written = browser
        .script(
            "return document.getElementById('snippet').textContent;",
            json!([]),
        )
        .await;
    assert_eq!(written.as_str().unwrap(), rust_example_of_the_docs());

    // Copy as curl writes a command that runs as written, whatever the query holds: the
    // shell reads nothing of it.
    let marker = std::env::temp_dir().join(format!("svc-ui-curl-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    browser
        .open(&format!(
            "{grid}?note__icontains=$(touch${{IFS}}{})&_per_page=2",
            marker.display()
        ))
        .await;
    browser.find("#records").await;
    browser.click(&browser.find("#copy-curl").await).await;
    browser.find("#snippet").await;
    let command = browser
        .script(
            "return document.getElementById('snippet').textContent;",
            json!([]),
        )
        .await;
    let command = command.as_str().unwrap().to_owned();
    assert!(command.starts_with("curl -fsS -H \"Authorization: Bearer $SVC_API_KEY\" \"$SVC_API_BASE_URL\"'/projects/demo/prod/shop/models/orders?"), "{command}");
    // On a thread of its own: the emulator answers curl on this test's runtime.
    let (base_url, key, run) = (
        emulator.api_base_url().to_owned(),
        emulator.api_key().to_owned(),
        command.clone(),
    );
    let ran = tokio::task::spawn_blocking(move || {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(&run)
            .env("SVC_API_BASE_URL", base_url)
            .env("SVC_API_KEY", key)
            .output()
    })
    .await
    .unwrap()
    .expect("sh runs");
    assert!(
        ran.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let answer: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(answer["count"], 0, "{answer}");
    assert!(!marker.exists(), "the shell ran a part of the query");

    // Filtered by its controls: the address follows.
    browser.open(&grid).await;
    browser.find("#records tbody tr[data-pk]").await;
    browser.choose("#filter-field", "total").await;
    browser.choose("#filter-lookup", "gte").await;
    let value = browser.find("#filter-value").await;
    browser.type_into(&value, "900").await;
    browser
        .click(&browser.find("#filter-form button[type=submit]").await)
        .await;
    browser
        .wait_script(
            "the address to carry the filter",
            "return location.search === '?total__gte=900';",
        )
        .await;
    browser.find("#records tbody tr[data-pk]").await;
    let totals = browser
        .script(
            "const i = [...document.querySelectorAll('#records thead th')].findIndex(th => th.textContent.startsWith('total'));
             return [...document.querySelectorAll('#records tbody tr[data-pk]')].map(r => Number(r.children[i].textContent));",
            json!([]),
        )
        .await;
    let totals = totals.as_array().unwrap();
    assert!(!totals.is_empty());
    assert!(
        totals.iter().all(|t| t.as_f64().unwrap() >= 900.0),
        "{totals:?}"
    );

    // A query the engine would misread: the API's refusal, in its words.
    browser.open(&format!("{grid}?total__foo=1")).await;
    browser
        .wait_text("the refusal", |t| t.contains("Unknown lookup \"foo\""))
        .await;
    browser
        .wait_text("the summaries not run", |t| {
            t.contains("Not run: the filters were refused")
        })
        .await;
    let shown = browser
        .script(
            "return [...document.querySelectorAll('.error, [role=alert]')].filter(e => e.textContent.includes('Unknown lookup')).length;",
            json!([]),
        )
        .await;
    assert_eq!(shown, json!(1), "the refusal is shown once");
    // A grid is none of the header's views: none is marked current, and the icon is served.
    let marked = browser
        .script(
            "return [document.querySelectorAll('#nav a[aria-current]').length, \
             document.querySelector('link[rel=icon]').href];",
            json!([]),
        )
        .await;
    assert_eq!(marked[0], json!(0), "{marked}");
    let icon = marked[1].as_str().unwrap().to_owned();
    assert!(icon.ends_with("/_emulator/ui/assets/favicon.svg"), "{icon}");

    // Edit a record: its request is in the journal.
    browser.open(&format!("{grid}?status=paid")).await;
    browser.find("#records tbody tr[data-pk]").await;
    let pk = browser
        .script(
            "return document.querySelector('#records tbody tr[data-pk]').dataset.pk;",
            json!([]),
        )
        .await;
    let pk = pk.as_str().unwrap().to_owned();
    browser
        .click(
            &browser
                .find(&format!("button[aria-label=\"Edit record {pk}\"]"))
                .await,
        )
        .await;
    let editor = browser.find("#record-json").await;
    let mut record: Value = serde_json::from_str(&browser.value(&editor).await).unwrap();
    record["status"] = json!("refunded");
    browser
        .type_into(&editor, &serde_json::to_string(&record).unwrap())
        .await;
    browser.click(&browser.find("#save-record").await).await;
    browser
        .wait_text("the save", |t| t.contains(&format!("Saved record {pk}")))
        .await;
    let stored = api(
        &emulator,
        Call::get(format!("/projects/demo/prod/shop/models/orders/{pk}")),
    )
    .await;
    assert_eq!(stored["status"], "refunded");

    browser
        .open(&format!("{base}/_emulator/ui/projects/demo/requests"))
        .await;
    browser.find("#journal tbody tr[data-id]").await;
    browser
        .wait_text("the PATCH in the journal", |t| {
            t.contains(&format!(
                "PATCH\t/projects/demo/prod/shop/models/orders/{pk}"
            ))
        })
        .await;
    let row_id = browser
        .script(
            &format!(
                "const r = [...document.querySelectorAll('#journal tbody tr')].find(r => r.textContent.includes('PATCH/projects/demo/prod/shop/models/orders/{pk}'));
                 return r ? r.dataset.id : null;"
            ),
            json!([]),
        )
        .await;
    let row_id = row_id.as_str().expect("the PATCH row").to_owned();
    browser
        .click(
            &browser
                .find(&format!(
                    "button[aria-label=\"Details of request {row_id}\"]"
                ))
                .await,
        )
        .await;
    browser
        .wait_text("the request's body", |t| {
            t.contains("\"status\": \"refunded\"")
        })
        .await;
    // Live: a request made elsewhere appears without a reload.
    api(
        &emulator,
        Call::get("/projects/demo/prod/shop/models/orders?note__icontains=live"),
    )
    .await;
    browser
        .wait_text("the new request", |t| t.contains("note__icontains=live"))
        .await;
    // The page's own requests are dimmed; a stubbed one says which stub answered, and the
    // stubs are listed with their counts.
    let dimmed = browser
        .script(
            "return [...document.querySelectorAll('#journal tbody tr.from-ui')].some(r => r.textContent.includes('PATCH'));",
            json!([]),
        )
        .await;
    assert_eq!(dimmed, json!(true), "the page's PATCH is dimmed");
    let stub = emulator
        .stub(RequestMatcher::get().query_param("note__icontains", "stubbed"))
        .respond(StubResponse::new(503))
        .unwrap();
    let stubbed = send(
        &emulator,
        Call::get("/projects/demo/prod/shop/models/orders?note__icontains=stubbed")
            .bearer(emulator.api_key()),
    )
    .await;
    assert_eq!(stubbed.status, 503);
    browser
        .wait_text("the stubbed request", |t| {
            t.contains(&format!("503 (stub {})", stub.0))
        })
        .await;
    browser
        .find(&format!("#stub-list tr[data-stub=\"{}\"]", stub.0))
        .await;
    // An expectation that is not met shows its near misses.
    let path = browser.find("#expect-path").await;
    browser
        .type_into(&path, "/projects/demo/prod/shop/models/orders")
        .await;
    browser.choose("#expect-method", "POST").await;
    browser
        .click(&browser.find("#expect-form button[type=submit]").await)
        .await;
    browser
        .wait_text("the near misses", |t| {
            t.contains("Not met") && t.contains("near misses, best first")
        })
        .await;
    labelled(&browser, "the journal").await;
    no_secret(&browser, &emulator, "the journal").await;
    screenshot(&browser, "requests").await;

    // A snapshot taken, a record deleted from the grid, the snapshot restored.
    browser
        .open(&format!("{base}/_emulator/ui/projects/demo/state"))
        .await;
    let name = browser.find("#snapshot-name").await;
    browser.type_into(&name, "before-delete").await;
    browser
        .click(&browser.find("#snapshot-form button[type=submit]").await)
        .await;
    browser
        .find("#snapshots tr[data-name=\"before-delete\"]")
        .await;
    labelled(&browser, "the state").await;
    screenshot(&browser, "state").await;

    browser.open(&format!("{grid}?id={pk}")).await;
    let delete = browser
        .find(&format!("button[aria-label=\"Delete record {pk}\"]"))
        .await;
    browser.click(&delete).await;
    browser
        .wait_text("the confirmation", |t| t.contains("Confirm delete"))
        .await;
    browser.click(&delete).await;
    browser
        .wait_text("the deletion", |t| {
            t.contains(&format!("Deleted record {pk}")) && t.contains("No records match")
        })
        .await;
    let gone = send(
        &emulator,
        Call::get(format!("/projects/demo/prod/shop/models/orders/{pk}"))
            .bearer(emulator.api_key()),
    )
    .await;
    assert_eq!(gone.status, 404);

    browser
        .open(&format!("{base}/_emulator/ui/projects/demo/state"))
        .await;
    browser
        .click(
            &browser
                .find("button[aria-label=\"Restore snapshot before-delete\"]")
                .await,
        )
        .await;
    browser
        .wait_text("the restore", |t| {
            t.contains("Snapshot before-delete restored")
        })
        .await;
    let back = api(
        &emulator,
        Call::get(format!("/projects/demo/prod/shop/models/orders/{pk}")),
    )
    .await;
    assert_eq!(back["status"], "refunded", "the snapshot's state is back");

    // A change from another origin of this machine (a form on another port): refused, and
    // nothing is reset.
    let reset = format!("{base}/_emulator/ui/api/relay/demo/_emulator/projects/demo/reset");
    let (other, server) = other_origin(reset).await;
    browser.open(&format!("http://{other}/")).await;
    let refusal = browser
        .wait_text("the refusal of another origin", |t| t.contains("Refused"))
        .await;
    assert!(
        refusal.contains(&format!("another origin (http://{other})")),
        "{refusal}"
    );
    server.abort();
    let still = api(
        &emulator,
        Call::get(format!("/projects/demo/prod/shop/models/orders/{pk}")),
    )
    .await;
    assert_eq!(still["status"], "refunded", "the reset did not happen");

    // Another name made to point at this machine (DNS rebinding): refused.
    let port = emulator.local_addr().port();
    browser
        .open(&format!("http://rebound.test:{port}/_emulator/ui/"))
        .await;
    browser
        .wait_text("the refusal of another name", |t| {
            t.contains("answers only under the names it serves")
        })
        .await;

    // Page settings, draft and published side by side.
    let pages = "/api/projects/demo/prod/view_settings/";
    api(
        &emulator,
        Call::new(Method::POST, format!("{pages}?draft=0")).json(
            &json!({"unique_name": "orders", "name": "Orders", "params": "{\"elements\": []}"}),
        ),
    )
    .await;
    let listed = api(&emulator, Call::get(format!("{pages}?draft=1"))).await;
    let uid = listed[0]["uid"].as_str().unwrap().to_owned();
    api(
        &emulator,
        Call::new(Method::PATCH, format!("{pages}{uid}/?draft=1"))
            .json(&json!({"params": "{\"elements\": [\"table\"]}"})),
    )
    .await;
    browser
        .open(&format!("{base}/_emulator/ui/projects/demo/pages"))
        .await;
    browser.find("#pages tbody tr").await;
    browser
        .wait_text("both sets", |t| t.contains(&uid) && t.contains("\"table\""))
        .await;
    labelled(&browser, "the pages").await;
    screenshot(&browser, "pages").await;

    // An action run from its form.
    browser
        .open(&format!("{base}/_emulator/ui/projects/demo/actions"))
        .await;
    let data = browser.find("#action-shop-refund-data").await;
    browser.type_into(&data, "{\"id\": 12}").await;
    browser
        .click(&browser.find("#action-shop-refund-run").await)
        .await;
    browser
        .wait_text("the action's answer", |t| t.contains("\"refunded\""))
        .await;
    labelled(&browser, "the actions").await;
    no_secret(&browser, &emulator, "the actions").await;
    screenshot(&browser, "actions").await;

    // A reset, confirmed: the state at start is back.
    browser
        .open(&format!("{base}/_emulator/ui/projects/demo/state"))
        .await;
    let reset = browser.find("#reset").await;
    browser.click(&reset).await;
    browser
        .wait_text("the reset's confirmation", |t| t.contains("Confirm reset"))
        .await;
    browser.click(&reset).await;
    browser
        .wait_text("the reset", |t| t.contains("Reset to the state at start."))
        .await;
    let first = api(
        &emulator,
        Call::get(format!("/projects/demo/prod/shop/models/orders/{pk}")),
    )
    .await;
    assert_eq!(
        first["status"], "paid",
        "the reset put the state at start back"
    );

    // A phone's width: nothing wider than the screen but the tables' own scroll.
    browser.resize(390, 844).await;
    browser.open(&format!("{grid}?status=paid")).await;
    browser.find("#records tbody tr[data-pk]").await;
    let fits = browser
        .script(
            "return document.documentElement.scrollWidth <= window.innerWidth + 1;",
            json!([]),
        )
        .await;
    assert_eq!(fits, true, "the grid fits a phone's width");
    screenshot(&browser, "grid-phone").await;

    browser.quit().await;
}
