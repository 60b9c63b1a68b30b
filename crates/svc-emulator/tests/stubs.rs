//! Stubs over real sockets: answers declared in code, in the config and over the route; when
//! they answer (order, `after`, `times`), what they answer (status, headers, bodies, a delay, a
//! dropped or reset connection), that a stubbed request never reaches the data, how the journal
//! shows it, the expectations on a stub, and what a reset does.

mod common;

use std::time::{Duration, Instant};

use common::{Call, send};
use http::Method;
use serde_json::json;
use svc_emulator::{
    Emulator, EmulatorConfig, ProjectsConfig, RequestMatcher, RequestSource, StubConfig, StubError,
    StubResponse, Times,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ORDERS: &str = "/projects/demo/prod/shop/models/orders";

async fn get(emu: &Emulator, path: &str) -> common::Reply {
    send(emu, Call::get(path).bearer(emu.api_key())).await
}

/// The number of orders the data holds.
async fn order_count(emu: &Emulator) -> u64 {
    get(emu, &format!("{ORDERS}?_per_page=1")).await.json()["count"]
        .as_u64()
        .unwrap()
}

#[tokio::test]
async fn a_stub_answers_its_status_headers_and_body_and_the_data_is_untouched() {
    let emu = common::demo().await;
    let before = order_count(&emu).await;
    let stub = emu
        .stub(RequestMatcher::post().model("orders"))
        .respond(
            StubResponse::new(500)
                .header("X-Request-Id", "abc")
                .json(json!({"error": "boom"})),
        )
        .unwrap();
    let r = send(
        &emu,
        Call::new(Method::POST, ORDERS)
            .bearer(emu.api_key())
            .json(&json!({"status": "new"})),
    )
    .await;
    assert_eq!(r.status, 500);
    assert_eq!(r.headers["x-request-id"], "abc");
    assert_eq!(r.headers["content-type"], "application/json");
    assert_eq!(r.json(), json!({"error": "boom"}));
    assert_eq!(order_count(&emu).await, before, "the create never ran");

    let stubbed = emu.requests_matching(RequestMatcher::post());
    assert_eq!(stubbed.len(), 1);
    assert_eq!(stubbed[0].stub, Some(stub));
    assert_eq!(stubbed[0].status, 500);
    assert_eq!(stubbed[0].source, RequestSource::Client);
    // Requests the stub does not match reach the data.
    assert_eq!(get(&emu, ORDERS).await.status, 200);
    emu.assert_stub_answered(stub, 1);
    let info = &emu.stubs()[0];
    assert_eq!((info.matched, info.answered), (1, 1));
}

#[tokio::test]
async fn after_and_times_pick_which_matching_requests_a_stub_answers() {
    let emu = common::demo().await;
    let third = emu
        .stub(RequestMatcher::get().model("orders"))
        .after(2)
        .times(2)
        .respond(StubResponse::new(429).text("slow down"))
        .unwrap();
    let mut statuses = Vec::new();
    for _ in 0..6 {
        statuses.push(get(&emu, ORDERS).await.status.as_u16());
    }
    assert_eq!(statuses, [200, 200, 429, 429, 200, 200]);
    let info = &emu.stubs()[0];
    assert_eq!((info.matched, info.answered), (6, 2));
    let answered = emu.assert_stub_answered(third, 2);
    assert_eq!(answered[0].id + 1, answered[1].id);
    // Too many expected: the near misses are the requests it let pass.
    let unmet = emu.verify_stub(third, 3).unwrap_err();
    assert_eq!(unmet.matched().len(), 2);
    assert_eq!(unmet.near_misses().len(), 4);
    assert!(
        unmet.to_string().contains("not answered by stub"),
        "{unmet}"
    );
}

#[tokio::test]
async fn stubs_are_tried_in_order_of_declaration() {
    let emu = common::demo().await;
    let first = emu
        .stub(RequestMatcher::get().model("orders"))
        .once()
        .respond(StubResponse::new(503))
        .unwrap();
    let second = emu
        .stub(RequestMatcher::get())
        .respond(StubResponse::new(418))
        .unwrap();
    let statuses = [
        get(&emu, ORDERS).await.status.as_u16(),
        get(&emu, ORDERS).await.status.as_u16(),
    ];
    assert_eq!(statuses, [503, 418]);
    emu.assert_stub_answered(first, 1);
    emu.assert_stub_answered(second, 1);
    assert!(emu.remove_stub(second));
    assert!(!emu.remove_stub(second));
    assert_eq!(get(&emu, ORDERS).await.status, 200);
}

#[tokio::test]
async fn a_stub_matches_a_json_body_and_a_query() {
    let emu = common::demo().await;
    let poison = emu
        .stub(
            RequestMatcher::post()
                .model("orders")
                .json_body_includes(json!({"status": "poison"})),
        )
        .respond(StubResponse::new(422).json(json!({"status": ["Not that one."]})))
        .unwrap();
    emu.stub(RequestMatcher::get().query_param("_search", "boom"))
        .respond(StubResponse::new(502))
        .unwrap();
    let create = |status: &str| {
        Call::new(Method::POST, ORDERS)
            .bearer(emu.api_key())
            .json(&json!({"status": status, "customer": 1, "total": "1.00"}))
    };
    assert_eq!(send(&emu, create("poison")).await.status, 422);
    assert_ne!(send(&emu, create("new")).await.status, 422);
    assert_eq!(
        get(&emu, &format!("{ORDERS}?_search=boom")).await.status,
        502
    );
    assert_eq!(
        get(&emu, &format!("{ORDERS}?_search=calm")).await.status,
        200
    );
    // The journal keeps no bodies here, yet the stub's number says which requests it
    // answered; the other create is its near miss.
    emu.assert_stub_answered(poison, 1);
    let unmet = emu.verify_stub(poison, 2).unwrap_err();
    // The other create first: it holds the method and the model.
    assert_eq!(unmet.near_misses()[0].method, "POST", "{unmet}");
    assert!(!unmet.to_string().contains("no body matches"), "{unmet}");
    let checked = send(
        &emu,
        Call::get(format!(
            "/_emulator/projects/demo/stubs/{}/expect?exactly=1",
            poison.0
        ))
        .bearer(emu.api_key()),
    )
    .await
    .json();
    assert_eq!(checked["met"], true, "{checked}");
}

#[tokio::test]
async fn a_delay_holds_the_answer_back() {
    let emu = common::demo().await;
    emu.stub(RequestMatcher::get().model("orders"))
        .respond(
            StubResponse::new(200)
                .text("late")
                .delay(Duration::from_millis(300)),
        )
        .unwrap();
    let started = Instant::now();
    let r = get(&emu, ORDERS).await;
    // A lower bound only: a busy machine may take longer, never shorter.
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(&r.body[..], b"late");
    assert_eq!(r.headers["content-type"], "text/plain; charset=utf-8");
    // A HEAD a stub answers has its status in the journal, and no body.
    emu.stub(RequestMatcher::any().method("HEAD"))
        .respond(StubResponse::new(200).text("not sent"))
        .unwrap();
    let head = send(&emu, Call::new(Method::HEAD, ORDERS).bearer(emu.api_key())).await;
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    let journal = emu.requests_matching(RequestMatcher::any().method("HEAD"));
    assert_eq!(journal[0].status, 200);
    assert!(journal[0].stub.is_some());
}

/// Sends a GET of the orders over a raw socket; what the read of the answer gave.
async fn raw_get(emu: &Emulator) -> std::io::Result<Vec<u8>> {
    let mut stream = tokio::net::TcpStream::connect(emu.local_addr()).await?;
    let request = format!(
        "GET {ORDERS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nConnection: close\r\n\r\n",
        emu.api_key()
    );
    stream.write_all(request.as_bytes()).await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    Ok(answer)
}

#[tokio::test]
async fn a_stub_drops_or_resets_the_connection() {
    let emu = common::demo().await;
    let dropped = emu
        .stub(RequestMatcher::get().model("orders"))
        .once()
        .respond(StubResponse::drop_connection())
        .unwrap();
    let reset = emu
        .stub(RequestMatcher::get().model("orders"))
        .once()
        .respond(StubResponse::reset_connection())
        .unwrap();
    // Dropped: the stream ends with no answer at all.
    assert_eq!(raw_get(&emu).await.unwrap(), b"");
    // Reset: the read fails.
    let error = raw_get(&emu).await.unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset, "{error}");
    // Then the data answers again.
    assert!(raw_get(&emu).await.unwrap().starts_with(b"HTTP/1.1 200"));
    let journal = emu.requests();
    assert_eq!(journal[0].stub, Some(dropped));
    assert_eq!(journal[0].status, 0, "no answer was sent");
    assert_eq!(journal[1].stub, Some(reset));
    assert_eq!(journal[2].stub, None);
}

#[tokio::test]
async fn conditions_that_need_an_answer_and_bad_answers_are_refused() {
    let emu = common::demo().await;
    let refused = emu
        .stub(RequestMatcher::get().status(200))
        .respond(StubResponse::new(500));
    assert_eq!(refused, Err(StubError::NotBeforeAnswer("status")));
    let refused = emu
        .stub(RequestMatcher::get().project("nope"))
        .respond(StubResponse::new(500));
    assert!(matches!(refused, Err(StubError::NoProject(_))));
    for (response, says) in [
        (StubResponse::new(99), "from 200 to 599"),
        (StubResponse::new(204).text("x"), "has no body"),
        (
            StubResponse::new(200).header("Content-Length", "3"),
            "framing",
        ),
        (
            StubResponse::new(200).header("X-A", "line\nbreak"),
            "line break",
        ),
        (
            StubResponse::new(200).header("bad name", "x"),
            "header name",
        ),
        (
            StubResponse::new(200).delay(Duration::from_secs(3600)),
            "at most 600 seconds",
        ),
    ] {
        let error = emu
            .stub(RequestMatcher::get())
            .respond(response)
            .unwrap_err();
        assert!(error.to_string().contains(says), "{error}");
    }
    let error = emu
        .stub(RequestMatcher::get())
        .times(0)
        .respond(StubResponse::new(500))
        .unwrap_err();
    assert!(error.to_string().contains("at least 1"), "{error}");
    assert!(emu.stubs().is_empty(), "nothing was added");
}

/// The stubs route of the demo project, with its key.
fn stubs_call(emu: &Emulator, method: Method, tail: &str) -> Call {
    Call::new(method, format!("/_emulator/projects/demo/stubs{tail}")).bearer(emu.api_key())
}

#[tokio::test]
async fn the_route_declares_lists_checks_and_removes_stubs() {
    let emu = common::demo().await;
    let declared = send(
        &emu,
        stubs_call(&emu, Method::POST, "").json(&json!({
            "request": {"method": "get", "model": "orders"},
            "response": {"status": 503, "headers": {"Retry-After": "2"}, "json": {"error": "busy"}},
            "times": 1
        })),
    )
    .await;
    assert_eq!(declared.status, 201, "{:?}", declared.body);
    let id = declared.json()["id"].as_u64().unwrap();
    let r = get(&emu, ORDERS).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.headers["retry-after"], "2");

    let listed = send(&emu, stubs_call(&emu, Method::GET, "")).await.json();
    let stub = &listed["stubs"][0];
    assert_eq!(stub["id"], id);
    assert_eq!(stub["request"], json!({"method": "get", "model": "orders"}));
    assert_eq!(
        (stub["matched"].as_u64(), stub["answered"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(stub["from_config"], false);

    let met = send(
        &emu,
        stubs_call(&emu, Method::GET, &format!("/{id}/expect?exactly=1")),
    )
    .await
    .json();
    assert_eq!(met["met"], true, "{met}");
    let unmet = send(
        &emu,
        stubs_call(&emu, Method::GET, &format!("/{id}/expect?exactly=2")),
    )
    .await
    .json();
    assert_eq!(unmet["met"], false);
    assert!(
        unmet["report"]
            .as_str()
            .unwrap()
            .contains("answered by stub")
    );

    // The journal's route shows which stub answered, and filters by it.
    let journal = send(
        &emu,
        Call::get(format!("/_emulator/projects/demo/requests?stub={id}")).bearer(emu.api_key()),
    )
    .await
    .json();
    assert_eq!(journal["requests"].as_array().unwrap().len(), 1);
    assert_eq!(journal["requests"][0]["stub"], id);
    assert_eq!(journal["requests"][0]["source"], "client");

    let removed = send(&emu, stubs_call(&emu, Method::DELETE, &format!("/{id}"))).await;
    assert_eq!(removed.status, 204);
    let again = send(&emu, stubs_call(&emu, Method::DELETE, &format!("/{id}"))).await;
    assert_eq!(again.status, 404);
    let cleared = send(&emu, stubs_call(&emu, Method::DELETE, ""))
        .await
        .json();
    assert_eq!(cleared["removed"], 0);
}

#[tokio::test]
async fn the_route_refuses_what_is_not_a_stub_and_says_its_shape() {
    let emu = common::demo().await;
    for (body, says) in [
        (
            json!({"response": {"status": 500}, "extra": 1}),
            "unknown field",
        ),
        (json!({"request": {}}), "missing field `response`"),
        (
            json!({"response": {"connection": "reset", "status": 500}}),
            "sends no answer",
        ),
        (json!({"response": {"json": {}, "body": "x"}}), "not both"),
        (
            json!({"request": {"path": "projects"}, "response": {}}),
            "starts with `/`",
        ),
    ] {
        let r = send(&emu, stubs_call(&emu, Method::POST, "").json(&body)).await;
        assert_eq!(r.status, 400, "{body}");
        let error = r.json()["error"].as_str().unwrap().to_owned();
        assert!(error.contains(says), "{body}: {error}");
    }
    let unauthorized = send(
        &emu,
        Call::get("/_emulator/projects/demo/stubs").bearer("svc_key_wrong"),
    )
    .await;
    assert_eq!(unauthorized.status, 401);
    assert!(emu.stubs().is_empty());
}

#[tokio::test]
async fn a_reset_removes_declared_stubs_and_keeps_the_configs_with_counts_at_zero() {
    let mut projects = ProjectsConfig::demo();
    let stub: StubConfig = serde_json::from_value(json!({
        "request": {"method": "DELETE"},
        "response": {"status": 403, "json": {"error": "No deletes here."}}
    }))
    .unwrap();
    projects.projects[0].stubs.push(stub);
    let emu = Emulator::start(EmulatorConfig::default().projects(projects))
        .await
        .unwrap();
    let delete = Call::new(Method::DELETE, format!("{ORDERS}/1")).bearer(emu.api_key());
    assert_eq!(send(&emu, delete.clone()).await.status, 403);
    let first = emu.stubs()[0].id;
    emu.stub(RequestMatcher::get())
        .respond(StubResponse::new(500))
        .unwrap();
    assert_eq!(emu.stubs().len(), 2);
    assert_eq!(emu.stubs()[0].answered, 1);
    emu.reset().await.unwrap();
    let left = emu.stubs();
    assert_eq!(left.len(), 1);
    assert!(left[0].from_config);
    assert_eq!(left[0].id, first, "a config stub keeps its number");
    assert_eq!((left[0].matched, left[0].answered), (0, 0));
    assert_eq!(get(&emu, ORDERS).await.status, 200);
    assert_eq!(send(&emu, delete).await.status, 403);
}

#[tokio::test]
async fn a_bad_stub_in_the_config_stops_the_start_and_says_which() {
    let config = r#"{"projects": [{"name": "p", "stubs": [
        {"request": {"method": "GET"}, "response": {"status": 200}},
        {"request": {"method": "G T"}, "response": {"status": 200}}
    ]}]}"#;
    let error = ProjectsConfig::from_json(config).unwrap_err().to_string();
    assert!(error.contains("stub 2"), "{error}");
    assert!(error.contains("letters only"), "{error}");
}

#[tokio::test]
async fn a_stub_of_one_project_never_answers_another() {
    let config = ProjectsConfig::from_json(
        r#"{"projects": [
            {"name": "one", "api_keys": ["svc_key_one_0123456789"]},
            {"name": "two", "api_keys": ["svc_key_two_0123456789"]}
        ]}"#,
    )
    .unwrap();
    let emu = Emulator::start(EmulatorConfig::default().projects(config))
        .await
        .unwrap();
    emu.stub(RequestMatcher::get().project("two"))
        .respond(StubResponse::new(418))
        .unwrap();
    let users = |p: &str, key: &str| {
        Call::get(format!("/projects/{p}/prod/__svc_app__/models/users")).auth(key.to_owned())
    };
    let one = send(&emu, users("one", "Bearer svc_key_one_0123456789")).await;
    let two = send(&emu, users("two", "Bearer svc_key_two_0123456789")).await;
    assert_ne!(one.status, 418);
    assert_eq!(two.status, 418);
    assert_eq!(emu.stubs()[0].project, "two");
}

#[tokio::test]
async fn expectations_leave_the_pages_requests_out_unless_asked() {
    // The page's requests are journaled as `ui` (tests/ui.rs drives the page itself); here,
    // what a matcher counts of each source.
    let emu = common::demo().await;
    get(&emu, ORDERS).await;
    emu.assert_received_times(RequestMatcher::get(), Times::exactly(1));
    let any = emu.requests_matching(RequestMatcher::get().any_source());
    assert_eq!(any.len(), 1);
    assert!(
        emu.requests_matching(RequestMatcher::any().source(RequestSource::Ui))
            .is_empty()
    );
    let refused = emu
        .stub(RequestMatcher::get().source(RequestSource::Ui))
        .respond(StubResponse::new(500));
    assert!(matches!(refused, Err(StubError::Invalid(_))));
}

#[test]
fn a_config_that_does_not_parse_says_what_a_config_holds() {
    let error = ProjectsConfig::from_json(r#"{"projects": [{"name": "p", "resources": {}}]}"#)
        .unwrap_err()
        .to_string();
    assert!(error.contains("line 1"), "{error}");
    assert!(
        error.contains(r#"the file is {"projects": [{"name""#),
        "{error}"
    );
}

#[tokio::test]
async fn a_drop_reads_the_body_it_was_sent_first_so_the_client_sees_a_close() {
    let emu = common::demo().await;
    emu.stub(RequestMatcher::post().model("orders"))
        .respond(StubResponse::drop_connection())
        .unwrap();
    let body = vec![b' '; 1024 * 1024];
    let mut stream = tokio::net::TcpStream::connect(emu.local_addr())
        .await
        .unwrap();
    let head = format!(
        "POST {ORDERS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        emu.api_key(),
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&body).await.unwrap();
    let mut answer = Vec::new();
    // A close (FIN), not a reset: the unread megabyte was read before it.
    stream.read_to_end(&mut answer).await.unwrap();
    assert!(answer.is_empty());
}

#[tokio::test]
async fn over_http2_a_cut_resets_the_stream_and_the_connection_serves_on() {
    let emu = common::demo().await;
    emu.stub(RequestMatcher::get().model("orders"))
        .once()
        .respond(StubResponse::reset_connection())
        .unwrap();
    let stream = tokio::net::TcpStream::connect(emu.local_addr())
        .await
        .unwrap();
    let (mut sender, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(stream),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let request = || {
        http::Request::get(format!("http://{}{ORDERS}", emu.local_addr()))
            .header("authorization", format!("Bearer {}", emu.api_key()))
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .unwrap()
    };
    assert!(
        sender.send_request(request()).await.is_err(),
        "the stream was reset"
    );
    let answer = sender.send_request(request()).await.unwrap();
    assert_eq!(
        answer.status(),
        200,
        "the same connection serves the next request"
    );
}

#[tokio::test]
async fn a_body_past_what_a_stub_reads_reaches_the_data_whole() {
    let emu = common::demo().await;
    // A stub that reads bodies: each create's body is read (its first 64 KiB) to match it.
    emu.stub(RequestMatcher::post().json_body_includes(json!({"status": "poison"})))
        .respond(StubResponse::new(422))
        .unwrap();
    let note = "n".repeat(200 * 1024);
    let created = send(
        &emu,
        Call::new(Method::POST, "/projects/demo/prod/shop/models/customers")
            .bearer(emu.api_key())
            .json(&json!({
                "name": "Big note",
                "email": "big@example.com",
                "created_at": "2026-05-01T10:00:00",
                "notes": note,
            })),
    )
    .await;
    assert_eq!(
        created.status,
        201,
        "{:?}",
        String::from_utf8_lossy(&created.body)
    );
    assert_eq!(
        created.json()["notes"].as_str().map(str::len),
        Some(note.len())
    );
    assert_eq!(
        emu.stubs()[0].matched,
        0,
        "a body it could not read whole never matches"
    );
}
