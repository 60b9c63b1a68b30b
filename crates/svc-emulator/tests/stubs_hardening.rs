//! Stubs against a hostile key holder (issue 83): a stub's answer is data, never a page that
//! runs on the web page's origin (a sandboxing `Content-Security-Policy` and `nosniff` on every
//! answer, whatever the stub's own headers say; no cookie set, no `Refresh` to another page, no
//! `Strict-Transport-Security`, however the stub is declared), and a project holds a bounded
//! number and size of stubs.
//!
//! The browser test is `#[ignore]`d as tests/ui.rs's is (it needs Chromium and ChromeDriver):
//! `cargo test --workspace --all-features --test stubs_hardening -- --ignored`.

mod common;
#[allow(dead_code, reason = "the browser test uses part of the driver")]
mod ui {
    pub mod webdriver;
}

use common::{Call, send};
use http::Method;
use serde_json::json;
use svc_emulator::{
    Emulator, EmulatorConfig, Limits, ProjectsConfig, RequestMatcher, RequestSource, StubError,
    StubResponse,
};

const ORDERS: &str = "/projects/demo/prod/shop/models/orders";

/// The policy every stub's answer carries.
const SANDBOX: &str = "sandbox; default-src 'none'";

/// The stubs route of `project`, with `key`.
fn stubs_call(project: &str, key: &str, method: Method) -> Call {
    Call::new(method, format!("/_emulator/projects/{project}/stubs")).bearer(key)
}

/// Two projects, `one` and `two`, each with a key.
fn two_projects() -> ProjectsConfig {
    ProjectsConfig::from_json(
        r#"{"projects": [
            {"name": "one", "api_keys": ["svc_key_one_0123456789"]},
            {"name": "two", "api_keys": ["svc_key_two_0123456789"]}
        ]}"#,
    )
    .unwrap()
}

/// Every value the answer carries under `name`.
fn values(reply: &common::Reply, name: &str) -> Vec<String> {
    reply
        .headers
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn every_stub_answer_is_sandboxed_and_not_sniffed_whatever_its_own_headers_say() {
    let emu = common::demo().await;
    // A page that would run on the emulator's origin, and tries to undo the sandbox.
    emu.stub(RequestMatcher::get().path(ORDERS))
        .respond(
            StubResponse::new(200)
                .header("Content-Type", "text/html")
                .header(
                    "Content-Security-Policy",
                    "script-src 'unsafe-inline' 'self'",
                )
                .header("X-Content-Type-Options", "sniff")
                .text("<script>fetch('/_emulator/ui/api/overview')</script>"),
        )
        .unwrap();
    // And the plainest stub: a status, no body, no header.
    emu.stub(RequestMatcher::delete())
        .respond(StubResponse::new(503))
        .unwrap();
    // Over the route too.
    let declared = send(
        &emu,
        stubs_call("demo", emu.api_key(), Method::POST).json(&json!({
            "request": {"method": "POST"},
            "response": {"status": 500, "json": {"error": "boom"},
                         "headers": {"content-security-policy": "sandbox allow-scripts allow-same-origin"}}
        })),
    )
    .await;
    assert_eq!(declared.status, 201, "{:?}", declared.body);

    let page = send(&emu, Call::get(ORDERS)).await;
    let plain = send(
        &emu,
        Call::new(Method::DELETE, format!("{ORDERS}/1")).bearer(emu.api_key()),
    )
    .await;
    let routed = send(
        &emu,
        Call::new(Method::POST, ORDERS)
            .bearer(emu.api_key())
            .json(&json!({})),
    )
    .await;
    for (what, reply, status) in [
        ("page", &page, 200),
        ("plain", &plain, 503),
        ("routed", &routed, 500),
    ] {
        assert_eq!(reply.status, status, "{what}");
        let policies = values(reply, "content-security-policy");
        assert_eq!(
            policies.first().map(String::as_str),
            Some(SANDBOX),
            "{what}: the sandbox comes first, whatever the stub set: {policies:?}"
        );
        // A stub's own policy may stand beside it (a browser enforces every policy, so it
        // can only narrow the sandbox), never in its place.
        assert!(policies.len() <= 2, "{what}: {policies:?}");
        assert_eq!(
            values(reply, "x-content-type-options"),
            ["nosniff"],
            "{what}"
        );
    }
    assert_eq!(
        page.headers["content-type"], "text/html",
        "the stub's type is kept"
    );
}

/// Declares a stub answering with the header `name: value` in Rust, over the route and in a
/// config file, and returns the three refusals' messages: each must be one.
async fn refusals(emu: &Emulator, name: &str, value: &str) -> [String; 3] {
    // In Rust.
    let rust = match emu
        .stub(RequestMatcher::get())
        .respond(StubResponse::new(200).header(name, value))
    {
        Err(StubError::Invalid(message)) => message,
        other => panic!("{name}: {value}: declared in Rust: {other:?}"),
    };
    // Over the route: a 400.
    let r = send(
        emu,
        stubs_call("demo", emu.api_key(), Method::POST).json(&json!({
            "response": {"status": 200, "headers": {name: value}}
        })),
    )
    .await;
    assert_eq!(r.status, 400, "{name}: {value}: {:?}", r.body);
    let route = r.json()["error"].as_str().unwrap().to_owned();
    // In the config file: the start stops.
    let file = json!({"projects": [{"name": "p", "stubs": [
        {"response": {"status": 200, "headers": {name: value}}}
    ]}]});
    let config = match ProjectsConfig::from_json(&file.to_string()) {
        Err(error) => error.to_string(),
        Ok(_) => panic!("{name}: {value}: accepted in a config file"),
    };
    assert!(config.contains("stub 1"), "{config}");
    [rust, route, config]
}

#[tokio::test]
async fn no_way_of_declaring_a_stub_sets_the_emulator_s_own_cookie() {
    let emu = common::demo().await;
    let port = emu.local_addr().port();
    let own = format!("svc_emulator_ui_{port}=forged; Path=/_emulator/ui");
    let cases = [
        ("Set-Cookie", own.clone()),
        ("set-cookie", format!("SVC_EMULATOR_UI_{port}=x")),
        (
            "Set-Cookie",
            format!(" svc_emulator_ui_{port} = x; Max-Age=0"),
        ),
        // A cookie without a name whose value reads as the page's in a Cookie header.
        ("Set-Cookie", format!("=svc_emulator_ui_{port}=x; Path=/")),
        (
            "Set-Cookie2",
            format!("svc_emulator_ui_{port}=x; Version=1"),
        ),
    ];
    for (name, value) in &cases {
        // Refused as any cookie is: the emulator's own are no exception to look for.
        for said in refusals(&emu, name, value).await {
            assert!(
                said.contains(*name) && said.contains("a stub sets no cookie"),
                "{name}: {value}: {said}"
            );
        }
    }
    // Not a cookie, but it signs the page out all the same.
    for said in refusals(&emu, "Clear-Site-Data", "\"cookies\"").await {
        assert!(said.contains("Clear-Site-Data"), "{said}");
    }
    assert!(emu.stubs().is_empty(), "nothing was declared");
}

#[tokio::test]
async fn no_way_of_declaring_a_stub_sets_any_cookie_or_makes_the_browser_navigate() {
    let emu = common::demo().await;
    let next = "0; url=/projects/demo/prod/shop/models/c1";
    let cases = [
        // A cookie of any name: the chain of stubs that filled the browser's jar (and evicted
        // the page's cookie) or made the page's requests too big to answer (431).
        ("Set-Cookie", "k=x", "a stub sets no cookie"),
        (
            "set-cookie",
            "k0=x; Path=/_emulator/ui; Max-Age=31536000",
            "a stub sets no cookie",
        ),
        ("Set-Cookie2", "k=x; Version=1", "a stub sets no cookie"),
        ("SET-COOKIE2", "k=x", "a stub sets no cookie"),
        // What drove the browser from one stub to the next, with no click.
        ("Refresh", next, "never makes a browser navigate"),
        ("refresh", "5", "never makes a browser navigate"),
        // Kept by a browser for the host name, every port included, for max-age.
        (
            "Strict-Transport-Security",
            "max-age=31536000; includeSubDomains",
            "Strict-Transport-Security",
        ),
    ];
    for (name, value, why) in cases {
        for said in refusals(&emu, name, value).await {
            assert!(
                said.contains(name) && said.contains(why),
                "{name}: {value}: {said}"
            );
            // And what to do instead.
            let instead = if why.contains("cookie") {
                "a server of your own"
            } else if why.contains("navigate") {
                "Location"
            } else {
                "the API sends none"
            };
            assert!(said.contains(instead), "{name}: {value}: {said}");
        }
    }
    assert!(emu.stubs().is_empty(), "nothing was declared");

    // A redirect the request itself follows (a 3xx's Location) and headers a browser keeps
    // nothing of are still a stub's to send.
    emu.stub(RequestMatcher::get().path(ORDERS))
        .respond(
            StubResponse::new(302)
                .header("Location", "/projects/demo/prod/shop/models/elsewhere")
                .header("Link", "</x.css>; rel=preload; as=style")
                .header("Retry-After", "2")
                .header("Cache-Control", "no-store"),
        )
        .unwrap();
    let r = send(&emu, Call::get(ORDERS).bearer(emu.api_key())).await;
    assert_eq!(r.status, 302);
    assert_eq!(
        r.headers["location"],
        "/projects/demo/prod/shop/models/elsewhere"
    );
    for never in ["set-cookie", "set-cookie2", "refresh"] {
        assert!(r.headers.get(never).is_none(), "{never}: {:?}", r.headers);
    }
}

#[tokio::test]
async fn a_project_holds_at_most_500_stubs_by_default_and_the_refusal_says_how_to_raise_it() {
    let emu = Emulator::start(EmulatorConfig::default().projects(two_projects()))
        .await
        .unwrap();
    let one = RequestMatcher::get().project("one");
    for i in 0..500 {
        emu.stub(one.clone())
            .respond(StubResponse::new(500 + i % 99))
            .unwrap_or_else(|e| panic!("stub {i}: {e}"));
    }
    let error = emu
        .stub(one.clone())
        .respond(StubResponse::new(500))
        .unwrap_err();
    let said = error.to_string();
    for part in [
        "\"one\"",
        "500 stubs",
        "max_stubs",
        "config file",
        "Limits::max_stubs",
    ] {
        assert!(said.contains(part), "{part}: {said}");
    }
    // Over the route: a 413 that says the same.
    let r = send(
        &emu,
        stubs_call("one", "svc_key_one_0123456789", Method::POST)
            .json(&json!({"response": {"status": 500}})),
    )
    .await;
    assert_eq!(r.status, 413, "{:?}", r.body);
    let said = r.json()["error"].as_str().unwrap().to_owned();
    assert!(said.contains("max_stubs") && said.contains("500"), "{said}");
    assert_eq!(emu.stubs().len(), 500);

    // The other project's room is its own.
    emu.stub(RequestMatcher::get().project("two"))
        .respond(StubResponse::new(418))
        .unwrap();
    // Room comes back as stubs go.
    let cleared = send(
        &emu,
        stubs_call("one", "svc_key_one_0123456789", Method::DELETE),
    )
    .await;
    assert_eq!(cleared.json()["removed"], 500);
    emu.stub(one).respond(StubResponse::new(500)).unwrap();
}

#[tokio::test]
async fn a_project_s_stubs_hold_at_most_4_mib_by_default() {
    let emu = common::demo().await;
    let body = "x".repeat(60_000);
    let mut accepted = 0;
    let refused = loop {
        let r = send(
            &emu,
            stubs_call("demo", emu.api_key(), Method::POST).json(&json!({
                "request": {"path": format!("/stub/{accepted}")},
                "response": {"status": 200, "body": body}
            })),
        )
        .await;
        if r.status != 201 {
            break r;
        }
        accepted += 1;
        assert!(accepted <= 100, "100 stubs of 60 KB were accepted");
    };
    assert_eq!(refused.status, 413, "{:?}", refused.body);
    let said = refused.json()["error"].as_str().unwrap().to_owned();
    for part in [
        "max_stub_bytes",
        "4194304",
        "config file",
        "Limits::max_stub_bytes",
    ] {
        assert!(said.contains(part), "{part}: {said}");
    }
    assert!(
        (60..=69).contains(&accepted),
        "4 MiB holds 69 stubs of 60 KB, not {accepted}"
    );
    // A small stub still fits, since the limit is in bytes.
    let small = send(
        &emu,
        stubs_call("demo", emu.api_key(), Method::POST).json(&json!({"response": {"status": 503}})),
    )
    .await;
    assert_eq!(small.status, 201, "{:?}", small.body);
}

#[tokio::test]
async fn the_limits_are_set_in_rust_and_per_project_in_the_config_file() {
    // In Rust: every project's.
    let emu = Emulator::start(
        EmulatorConfig::default().limits(Limits::default().max_stubs(2).max_stub_bytes(1_000)),
    )
    .await
    .unwrap();
    for _ in 0..2 {
        emu.stub(RequestMatcher::get())
            .respond(StubResponse::new(500))
            .unwrap();
    }
    let error = emu
        .stub(RequestMatcher::get())
        .respond(StubResponse::new(500))
        .unwrap_err();
    assert!(error.to_string().contains("2 stubs"), "{error}");
    emu.reset().await.unwrap();
    let error = emu
        .stub(RequestMatcher::get())
        .respond(StubResponse::new(500).text("y".repeat(1_000)))
        .unwrap_err();
    assert!(error.to_string().contains("max_stub_bytes"), "{error}");

    // In the config file: a project's own, over the default.
    let stub = json!({"response": {"status": 500}});
    let file = |max: u64| {
        json!({"projects": [
            {"name": "p", "max_stubs": max, "max_stub_bytes": 10_000_000, "stubs": [stub, stub, stub]},
            {"name": "q"}
        ]})
        .to_string()
    };
    let over = ProjectsConfig::from_json(&file(2)).unwrap();
    let Err(error) = Emulator::start(EmulatorConfig::default().projects(over)).await else {
        panic!("3 stubs past a limit of 2 stop the start");
    };
    let error = error.to_string();
    assert!(
        error.contains("\"p\"") && error.contains("max_stubs"),
        "{error}"
    );
    let raised = ProjectsConfig::from_json(&file(600)).unwrap();
    let emu = Emulator::start(
        EmulatorConfig::default()
            .projects(raised)
            .limits(Limits::default().max_stubs(1)),
    )
    .await
    .unwrap();
    for _ in 3..600 {
        emu.stub(RequestMatcher::get().project("p"))
            .respond(StubResponse::new(500))
            .unwrap();
    }
    assert!(
        emu.stub(RequestMatcher::get().project("p"))
            .respond(StubResponse::new(500))
            .is_err()
    );
    // The other project keeps the limit in Rust.
    emu.stub(RequestMatcher::get().project("q"))
        .respond(StubResponse::new(500))
        .unwrap();
    assert!(
        emu.stub(RequestMatcher::get().project("q"))
            .respond(StubResponse::new(500))
            .is_err()
    );
    assert_eq!(Limits::default().stub_count_limit(), 500);
    assert_eq!(Limits::default().stub_bytes_limit(), 4 * 1024 * 1024);
}

/// Signs `browser` in to the page of `emu`.
async fn signed_in_browser(browser: &ui::webdriver::Session<'_>, emu: &Emulator) {
    browser.open(emu.ui_url()).await;
    browser.find("a[href$=\"/models/orders\"]").await;
}

#[tokio::test]
#[ignore = "needs Chromium and ChromeDriver (see tests/ui.rs's doc)"]
async fn in_a_browser_a_stubbed_page_cannot_act_as_the_signed_in_page() {
    let emu = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let base = emu.api_base_url().to_owned();
    let driver = ui::webdriver::Driver::start().await;
    let browser = driver.session(&[]).await;
    signed_in_browser(&browser, &emu).await;
    emu.clear_requests();
    // Its script, run to the end before the page's load completes (synchronous requests):
    // read the data through the page's relay, and declare a stub there.
    let script = r#"<!doctype html><title>stub</title><script>
        var read = new XMLHttpRequest();
        read.open('GET', '/_emulator/ui/api/relay/demo/projects/demo/prod/shop/models/orders', false);
        read.send();
        var declare = new XMLHttpRequest();
        declare.open('POST', '/_emulator/ui/api/relay/demo/_emulator/projects/demo/stubs', false);
        declare.setRequestHeader('Content-Type', 'application/json');
        declare.send('{"response": {"status": 418}}');
        document.title = 'ran ' + read.status + ' ' + declare.status;
    </script>"#;
    emu.stub(RequestMatcher::get().path("/projects/demo/prod/shop/models/orders"))
        .respond(
            StubResponse::new(200)
                .header("Content-Type", "text/html; charset=utf-8")
                .text(script),
        )
        .unwrap();
    browser
        .open(&format!("{base}/projects/demo/prod/shop/models/orders"))
        .await;
    let source = browser.source().await;
    assert!(
        source.contains("XMLHttpRequest"),
        "the stub's page opened: {source}"
    );
    let relayed = emu.requests_matching(RequestMatcher::any().source(RequestSource::Ui));
    assert!(
        relayed.is_empty(),
        "the stub's script reached the page's relay: {relayed:?}"
    );
    assert_eq!(
        emu.stubs().len(),
        1,
        "no stub was declared through the page"
    );
    // The page itself still works after it.
    browser.open(&format!("{base}/_emulator/ui/")).await;
    browser.find("a[href$=\"/models/orders\"]").await;
    browser.quit().await;
}
