//! The SDK's spans (docs/tracing.md), captured by a subscriber of the test's own while real
//! operations run against the emulator: one `operation` span per call with an `attempt` child
//! per request sent (a read retried through the emulator's `503`s has several), every field's
//! value, path templates instead of paths, and no credential, query value or body value in any
//! span or event.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use svc_api::model::records::ListQuery;
use svc_api::{Error, RetryPolicy};
use svc_emulator::{Emulator, EmulatorConfig, Faults};
use svc_tests::{Recorded, builder};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// What the subscriber saw of one span.
#[derive(Debug, Clone)]
struct SpanSeen {
    id: u64,
    name: &'static str,
    target: String,
    level: tracing::Level,
    parent: Option<u64>,
    fields: BTreeMap<String, String>,
}

#[derive(Default)]
struct Seen {
    spans: BTreeMap<u64, SpanSeen>,
    /// Every event's target and fields, as text.
    events: Vec<String>,
    /// The spans each thread is in, innermost last.
    stacks: HashMap<ThreadId, Vec<u64>>,
}

impl Seen {
    fn current(&self) -> Option<u64> {
        self.stacks
            .get(&std::thread::current().id())
            .and_then(|stack| stack.last().copied())
    }
}

/// A subscriber that keeps every span (its name, parent and fields, as recorded over its life)
/// and every event.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Seen>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::TRACE)
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut seen = self.0.lock().unwrap();
        let id = seen.spans.len() as u64 + 1;
        let parent = match span.parent() {
            Some(parent) => Some(parent.into_u64()),
            None if span.is_contextual() => seen.current(),
            None => None,
        };
        let mut fields = BTreeMap::new();
        span.record(&mut Fields(&mut fields));
        let meta = span.metadata();
        seen.spans.insert(
            id,
            SpanSeen {
                id,
                name: meta.name(),
                target: meta.target().to_owned(),
                level: *meta.level(),
                parent,
                fields,
            },
        );
        Id::from_u64(id)
    }

    fn record(&self, id: &Id, values: &Record<'_>) {
        let mut seen = self.0.lock().unwrap();
        if let Some(span) = seen.spans.get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let line = format!("{} {fields:?}", event.metadata().target());
        self.0.lock().unwrap().events.push(line);
    }

    fn enter(&self, id: &Id) {
        let mut seen = self.0.lock().unwrap();
        let thread = std::thread::current().id();
        seen.stacks.entry(thread).or_default().push(id.into_u64());
    }

    fn exit(&self, id: &Id) {
        let mut seen = self.0.lock().unwrap();
        let thread = std::thread::current().id();
        if let Some(stack) = seen.stacks.get_mut(&thread)
            && let Some(at) = stack.iter().rposition(|s| *s == id.into_u64())
        {
            stack.remove(at);
        }
    }
}

impl Capture {
    /// The SDK's operation spans named `operation`, in the order they were made.
    fn operations(&self, operation: &str) -> Vec<SpanSeen> {
        let seen = self.0.lock().unwrap();
        seen.spans
            .values()
            .filter(|s| s.target == "svc_api" && s.name == "operation")
            .filter(|s| s.fields.get("svc.operation").map(String::as_str) == Some(operation))
            .cloned()
            .collect()
    }

    /// The attempt spans under `operation`, in order.
    fn attempts(&self, operation: &SpanSeen) -> Vec<SpanSeen> {
        let seen = self.0.lock().unwrap();
        seen.spans
            .values()
            .filter(|s| s.parent == Some(operation.id) && s.name == "attempt")
            .cloned()
            .collect()
    }

    /// Every span of the SDK (both targets).
    fn sdk_spans(&self) -> Vec<SpanSeen> {
        let seen = self.0.lock().unwrap();
        seen.spans
            .values()
            .filter(|s| s.target.starts_with("svc_api"))
            .cloned()
            .collect()
    }

    /// Everything captured, spans and events, as one text.
    fn text(&self) -> String {
        let seen = self.0.lock().unwrap();
        let mut text = String::new();
        for span in seen.spans.values() {
            text.push_str(&format!("{span:?}\n"));
        }
        for event in &seen.events {
            text.push_str(event);
            text.push('\n');
        }
        text
    }
}

fn fields(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The port of a base URL.
fn port(base_url: &str) -> String {
    let uri: http::Uri = base_url.parse().unwrap();
    uri.port_u16().unwrap().to_string()
}

const RECORDS_PATH: &str = "/projects/{project}/{environment}/{resource}/models/{model}";
const QUERY_VALUE: &str = "Query-Value-Kx3Wq";
const PARAM_VALUE: &str = "Param-Value-Hq5Rz";

#[tokio::test]
async fn operations_and_attempts_carry_their_fields_and_no_secret() {
    // As in the secrets test: a second live dispatcher, so that the callsites' interest is
    // asked of both and stays on for this thread whatever other tests' threads did first.
    let _second = tracing::Dispatch::new(Capture::default());
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(capture.clone());

    // Half of the orders requests answered `503` (seeded: the same ones every run), nothing
    // else faulty; retries without waiting.
    let emulator = Emulator::start(
        EmulatorConfig::default().faults(
            Faults::new()
                .unavailable(0.5, 0)
                .seed(41)
                .only_paths_containing("/models/orders"),
        ),
    )
    .await
    .expect("the emulator starts");
    let waits = Recorded::default();
    let client = builder(&emulator)
        .retry(RetryPolicy::default().max_attempts(20))
        .sleep(waits.clone())
        .build()
        .unwrap();
    let project = emulator.project().as_str().to_owned();
    let data_port = port(emulator.api_base_url());

    // Reads retried through the 503s.
    let orders = client.records("shop", "orders");
    let calls = 12;
    for _ in 0..calls {
        let page = orders
            .list(&ListQuery::new().eq("status", QUERY_VALUE).per_page(5))
            .await
            .unwrap();
        assert_eq!(page.count, 0);
    }
    let lists = capture.operations("records.list");
    assert_eq!(lists.len(), calls, "one operation span per call");
    let mut unavailable = 0;
    let mut retried = 0;
    for list in &lists {
        assert_eq!(list.level, tracing::Level::INFO);
        assert_eq!(list.parent, None, "the test opened no span of its own");
        assert_eq!(
            list.fields,
            fields(&[
                ("otel.name", "records.list"),
                ("otel.kind", "client"),
                ("svc.operation", "records.list"),
                ("svc.project", &project),
                ("svc.resource", "shop"),
                ("http.request.method", "GET"),
                ("url.path", RECORDS_PATH),
                ("server.address", "127.0.0.1"),
                ("server.port", &data_port),
                ("http.response.status_code", "200"),
            ])
        );
        let attempts = capture.attempts(list);
        let (last, failed) = attempts.split_last().expect("at least one attempt");
        for (n, attempt) in failed.iter().enumerate() {
            let mut expected = fields(&[
                ("otel.name", &format!("GET {RECORDS_PATH}")),
                ("otel.kind", "client"),
                ("otel.status_code", "error"),
                ("svc.operation", "records.list"),
                ("http.request.method", "GET"),
                ("url.path", RECORDS_PATH),
                ("server.address", "127.0.0.1"),
                ("server.port", &data_port),
                ("http.response.status_code", "503"),
                ("error.type", "503"),
            ]);
            if n > 0 {
                expected.insert("http.request.resend_count".into(), n.to_string());
            }
            assert_eq!(attempt.fields, expected, "attempt {}", n + 1);
            assert_eq!(attempt.target, "svc_api::attempt");
            assert_eq!(attempt.level, tracing::Level::INFO);
        }
        let mut expected = fields(&[
            ("otel.name", &format!("GET {RECORDS_PATH}")),
            ("otel.kind", "client"),
            ("svc.operation", "records.list"),
            ("http.request.method", "GET"),
            ("url.path", RECORDS_PATH),
            ("server.address", "127.0.0.1"),
            ("server.port", &data_port),
            ("http.response.status_code", "200"),
        ]);
        if !failed.is_empty() {
            expected.insert("http.request.resend_count".into(), failed.len().to_string());
            retried += 1;
        }
        assert_eq!(last.fields, expected, "the last attempt");
        unavailable += failed.len() as u64;
    }
    let counts = emulator.fault_counts().unwrap();
    println!(
        "spans: {calls} lists, {retried} of them retried, {unavailable} failed attempts in all"
    );
    assert_eq!(
        unavailable, counts.unavailable,
        "one failed attempt span per 503 the emulator sent"
    );
    assert!(retried > 0, "some call was retried");
    assert_eq!(
        waits.waits().len() as u64,
        unavailable,
        "one wait per retry"
    );

    // An error answer: not retried, and the operation fails with its status.
    let err = client
        .records("shop", "customers")
        .get(987_654_321)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let [get] = capture.operations("records.get").try_into().unwrap();
    let get_path = format!("{RECORDS_PATH}/{{pk}}");
    assert_eq!(
        get.fields,
        fields(&[
            ("otel.name", "records.get"),
            ("otel.kind", "client"),
            ("otel.status_code", "error"),
            ("svc.operation", "records.get"),
            ("svc.project", &project),
            ("svc.resource", "shop"),
            ("http.request.method", "GET"),
            ("url.path", &get_path),
            ("server.address", "127.0.0.1"),
            ("server.port", &data_port),
            ("http.response.status_code", "404"),
            ("error.type", "404"),
        ])
    );
    let [attempt] = capture.attempts(&get).try_into().unwrap();
    assert_eq!(attempt.fields["http.response.status_code"], "404");
    assert_eq!(attempt.fields["error.type"], "404");
    assert_eq!(attempt.fields["otel.name"], format!("GET {get_path}"));

    // A read-only POST with a body; its parameter value is in the request and the answer.
    let rows: Vec<String> = client
        .sql("shop")
        .query("select :v as v")
        .bind("v", PARAM_VALUE)
        .rows()
        .await
        .unwrap();
    assert_eq!(rows, [PARAM_VALUE]);
    let [sql] = capture.operations("sql.query").try_into().unwrap();
    assert_eq!(
        sql.fields,
        fields(&[
            ("otel.name", "sql.query"),
            ("otel.kind", "client"),
            ("svc.operation", "sql.query"),
            ("svc.project", &project),
            ("svc.resource", "shop"),
            ("http.request.method", "POST"),
            (
                "url.path",
                "/projects/{project}/{environment}/{resource}/sql_get_query"
            ),
            ("server.address", "127.0.0.1"),
            ("server.port", &data_port),
            ("http.response.status_code", "200"),
        ])
    );
    assert_eq!(capture.attempts(&sql).len(), 1);

    // Users are named as users, on the built-in tools resource.
    client.users().list(&ListQuery::new()).await.unwrap();
    let [users] = capture.operations("users.list").try_into().unwrap();
    assert_eq!(users.fields["svc.resource"], "__svc_app__");
    assert_eq!(
        users.fields["url.path"],
        "/projects/{project}/{environment}/__svc_app__/models/users"
    );

    // The application host: no resource, and the template is relative to its base URL.
    client.pages().list().await.unwrap();
    let [pages] = capture.operations("pages.list").try_into().unwrap();
    assert_eq!(
        pages.fields,
        fields(&[
            ("otel.name", "pages.list"),
            ("otel.kind", "client"),
            ("svc.operation", "pages.list"),
            ("svc.project", &project),
            ("http.request.method", "GET"),
            (
                "url.path",
                "/projects/{project}/{environment}/view_settings/"
            ),
            ("server.address", "127.0.0.1"),
            ("server.port", &port(emulator.app_base_url())),
            ("http.response.status_code", "200"),
        ])
    );

    // No answer at all: a port nothing listens on. The connection never opened, so the read is
    // retried; the operation and each attempt fail with the transport's kind, and no status.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let unreachable = builder(&emulator)
        .api_base_url(format!("http://127.0.0.1:{closed}"))
        .retry(RetryPolicy::default().max_attempts(2))
        .sleep(Recorded::default())
        .build()
        .unwrap();
    let err = unreachable
        .records("shop", "orders")
        .get(1)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err}");
    let gets = capture.operations("records.get");
    let failed = gets.last().unwrap();
    assert_eq!(failed.fields["error.type"], "connect");
    assert_eq!(failed.fields["otel.status_code"], "error");
    assert_eq!(failed.fields["server.port"], closed.to_string());
    assert!(!failed.fields.contains_key("http.response.status_code"));
    let attempts = capture.attempts(failed);
    assert_eq!(attempts.len(), 2);
    for attempt in &attempts {
        assert_eq!(attempt.fields["error.type"], "connect");
        assert!(!attempt.fields.contains_key("http.response.status_code"));
    }

    // Every SDK span is an operation at the top or an attempt right under one.
    for span in capture.sdk_spans() {
        match span.name {
            "operation" => assert_eq!(span.parent, None, "{span:?}"),
            "attempt" => {
                let parent = span.parent.expect("an attempt has a parent");
                let seen = capture.0.lock().unwrap();
                assert_eq!(seen.spans[&parent].name, "operation", "{span:?}");
            }
            other => panic!("an SDK span named {other}"),
        }
        // Templates only: no id, project name or query text in a path.
        let path = &span.fields["url.path"];
        assert!(!path.contains("987654321") && !path.contains('?'), "{path}");
        assert!(!path.contains(&format!("/{project}/")), "{path}");
    }

    // No credential, query value or body value in any span or event (the SDK's, the
    // transport's and the emulator's).
    let text = capture.text();
    assert!(text.contains("records.list"), "the capture saw the SDK");
    let mut secrets = vec![
        emulator.api_key().to_owned(),
        QUERY_VALUE.to_owned(),
        PARAM_VALUE.to_owned(),
    ];
    secrets.extend(emulator.resource_tokens().values().cloned());
    for secret in secrets {
        assert!(!text.contains(&secret), "{secret:?} was captured");
    }
}

/// An action and a workflow run are operations like the others; a run that failed (`200` with
/// `"success": false`) fails its operation span, with `error.type` `workflow_failed`, while its
/// attempt, answered `200`, does not. The inputs are never in a span.
#[tokio::test]
async fn actions_and_workflow_runs_are_operations_and_a_failed_run_fails_its_span() {
    let _second = tracing::Dispatch::new(Capture::default());
    let capture = Capture::default();
    let _default = tracing::subscriber::set_default(capture.clone());
    // The demo's shop has the action `refund` and the workflow `wf-reopen` (note, then
    // set_status), whose second step fails on a null status (docs/actions.md).
    let emulator = Emulator::start(EmulatorConfig::default())
        .await
        .expect("the emulator starts");
    let client = builder(&emulator).build().unwrap();
    let project = emulator.project().as_str().to_owned();
    let data_port = port(emulator.api_base_url());
    let note = "Note-Value-Zt4Pm";

    client
        .action("shop", "refund")
        .execute(svc_api::serde_json::json!({"id": 7}))
        .await
        .unwrap();
    let [execute] = capture.operations("actions.execute").try_into().unwrap();
    let action_path = "/projects/{project}/{environment}/{resource}/actions/{action}";
    assert_eq!(
        execute.fields,
        fields(&[
            ("otel.name", "actions.execute"),
            ("otel.kind", "client"),
            ("svc.operation", "actions.execute"),
            ("svc.project", &project),
            ("svc.resource", "shop"),
            ("http.request.method", "POST"),
            ("url.path", action_path),
            ("server.address", "127.0.0.1"),
            ("server.port", &data_port),
            ("http.response.status_code", "200"),
        ])
    );
    assert_eq!(capture.attempts(&execute).len(), 1);

    let err = client
        .workflow("wf-reopen")
        .run(svc_api::serde_json::json!({"id": 8, "note": note, "status": null}))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Workflow(_)), "{err}");
    let [run] = capture.operations("workflows.run").try_into().unwrap();
    let run_path = "/projects/{project}/{environment}/workflows/{uid}/run";
    assert_eq!(
        run.fields,
        fields(&[
            ("otel.name", "workflows.run"),
            ("otel.kind", "client"),
            ("otel.status_code", "error"),
            ("svc.operation", "workflows.run"),
            ("svc.project", &project),
            ("http.request.method", "POST"),
            ("url.path", run_path),
            ("server.address", "127.0.0.1"),
            ("server.port", &data_port),
            ("http.response.status_code", "200"),
            ("error.type", "workflow_failed"),
        ])
    );
    let [attempt] = capture.attempts(&run).try_into().unwrap();
    assert_eq!(attempt.fields.get("otel.status_code"), None, "{attempt:?}");
    assert_eq!(attempt.fields["http.response.status_code"], "200");

    // `run_response` returns the failed run as an answer: its span does not fail.
    let answer = client
        .workflow("wf-reopen")
        .run_response(svc_api::serde_json::json!({"id": 8, "note": note, "status": null}))
        .await
        .unwrap();
    assert!(!answer.is_success());
    let runs = capture.operations("workflows.run");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[1].fields.get("error.type"), None, "{:?}", runs[1]);

    let text = capture.text();
    assert!(!text.contains(note), "an input was captured");
    assert!(!text.contains(emulator.api_key()), "the key was captured");
}
