//! Where lists and retrieves run (`sqlite::backend`): inline on the async worker only when
//! their cost is known to be small, never waiting for a connection there, and with the same
//! answer either way. No test here reads a clock: the runs' durations are fixed.

use std::sync::mpsc;
use std::time::Duration;

use super::*;
use crate::backend::{Mode, Route, route_list, route_retrieve};
use svc_emulator_core::backend::{Backend, Hold};
use svc_engine::{ListSpec, Listing};

const KEYS: &str = r#"
CREATE TABLE byrowid (id INTEGER PRIMARY KEY, v TEXT);
CREATE TABLE bytext (code TEXT PRIMARY KEY, v TEXT);
CREATE TABLE byunique (code TEXT UNIQUE PRIMARY KEY NOT NULL, v TEXT);
CREATE TABLE clustered (code TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID;
CREATE TABLE keyless (a TEXT, v TEXT);
CREATE TABLE composite (a INT, b INT, v TEXT, PRIMARY KEY (a, b));
CREATE VIEW byview AS SELECT id, v FROM byrowid;
WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 60)
INSERT INTO byrowid SELECT n, 'v' || (n % 7) FROM s;
INSERT INTO bytext SELECT 'c' || id, v FROM byrowid;
INSERT INTO byunique SELECT 'c' || id, v FROM byrowid;
INSERT INTO clustered SELECT 'c' || id, v FROM byrowid;
INSERT INTO keyless SELECT 'c' || id, v FROM byrowid;
INSERT INTO composite SELECT id % 5, id, v FROM byrowid;
"#;

const FAST: Duration = Duration::from_micros(50);
const SLOW: Duration = Duration::from_millis(5);

fn page_spec(pairs: &[(&str, &str)], page: u64, per_page: u64) -> ListSpec {
    let mut spec = list_spec(&q(pairs), false);
    spec.page = page;
    spec.per_page = per_page;
    spec
}

/// Where the next `spec` on `model` would run.
fn route(r: &Resource, model: &str, spec: &ListSpec) -> Route {
    let last = r.runs().last(r.runs().key(model, spec));
    route_list(last, r.generation())
}

fn hold() -> Hold {
    Box::new(())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

/// A list as the records slice runs it, through the backend.
fn backend_list(rt: &tokio::runtime::Runtime, r: &Arc<Resource>, spec: &ListSpec) -> Listing {
    rt.block_on(Backend::list(
        Arc::clone(r),
        "byrowid".to_owned(),
        spec.clone(),
        hold(),
    ))
    .unwrap()
}

/// An in-memory resource of [`KEYS`] whose runs take `took`, its connection past its first
/// list (which finds every database new: see `memo`'s tickets).
fn warm(took: Duration) -> Arc<Resource> {
    let r = Arc::new(Resource::in_memory(KEYS).unwrap());
    r.runs().fix_duration(Some(took));
    Resource::list(&r, "byrowid", &page_spec(&[], 1, 1)).unwrap();
    r
}

#[test]
fn a_repeated_fast_list_runs_inline_until_the_data_changes() {
    let r = warm(FAST);
    let rt = runtime();
    let spec = page_spec(&[("v", "v3")], 1, 5);
    // Never seen: the pool, which times it.
    assert_eq!(route(&r, "byrowid", &spec), Route::Pool);
    let first = backend_list(&rt, &r, &spec);
    assert_eq!(r.runs().inline_counts(), (0, 0));
    // The same request on the same data, fast last time: inline, the same answer.
    assert_eq!(route(&r, "byrowid", &spec), Route::Inline);
    assert_eq!(backend_list(&rt, &r, &spec), first);
    assert_eq!(r.runs().inline_counts(), (1, 0));
    // Another request is not this one.
    assert_eq!(
        route(&r, "byrowid", &page_spec(&[("v", "v4")], 1, 5)),
        Route::Pool
    );
    // A write: every request goes to the pool once more, and is timed there again.
    Resource::create(&r, "byrowid", &json!({"id": 1000, "v": "v3"})).unwrap();
    assert_eq!(route(&r, "byrowid", &spec), Route::Pool);
    let after = backend_list(&rt, &r, &spec);
    assert_ne!(after, first);
    assert_eq!(r.runs().inline_counts(), (1, 0));
    assert_eq!(route(&r, "byrowid", &spec), Route::Inline);
}

#[test]
fn a_slow_list_stays_on_the_pool() {
    let r = warm(SLOW);
    let rt = runtime();
    let spec = page_spec(&[("_no_pagination", "1")], 1, 25);
    for _ in 0..3 {
        backend_list(&rt, &r, &spec);
        assert_eq!(route(&r, "byrowid", &spec), Route::Pool);
    }
    assert_eq!(r.runs().inline_counts(), (0, 0));
    // Fast again (the same data, a warmer cache): inline from then on.
    r.runs().fix_duration(Some(FAST));
    backend_list(&rt, &r, &spec);
    assert_eq!(route(&r, "byrowid", &spec), Route::Inline);
}

#[test]
fn retrieves_run_inline_only_by_a_key_sqlite_looks_up_once() {
    let r = Resource::in_memory(KEYS).unwrap();
    let route_of = |model: &str| route_retrieve(&r.model(model).unwrap());
    // The rowid, a key's auto-index, a WITHOUT ROWID table's clustered key.
    assert_eq!(route_of("byrowid"), Route::Inline);
    assert_eq!(route_of("bytext"), Route::Inline);
    assert_eq!(route_of("byunique"), Route::Inline);
    assert_eq!(route_of("clustered"), Route::Inline);
    // No index on the key (a view, a promoted first column), or one that names many rows.
    assert_eq!(route_of("byview"), Route::Pool);
    assert_eq!(route_of("keyless"), Route::Pool);
    assert_eq!(route_of("composite"), Route::Pool);
    let inline = Mode::Inline { max_skip: 0 };
    let none = Selection::default();
    for model in ["byview", "keyless", "composite"] {
        assert_eq!(r.retrieve_as(model, "c3", &none, inline).unwrap(), None);
    }
    // Inline and on the pool, the same answers and the same errors.
    for (model, pk) in [
        ("byrowid", "7"),
        ("byrowid", "70"),
        ("byrowid", "x"),
        ("bytext", "c7"),
        ("byunique", "c8"),
        ("clustered", "c9"),
        ("clustered", "nope"),
    ] {
        for selection in [none.clone(), sel(&[("v", "v0")]), sel(&[("v", "v1")])] {
            let pooled = r.retrieve_as(model, pk, &selection, Mode::Pool);
            let inline = r.retrieve_as(model, pk, &selection, inline);
            match (pooled, inline) {
                (Ok(Some(a)), Ok(Some(b))) => assert_eq!(a, b, "{model} {pk}"),
                (Err(a), Err(b)) => assert_eq!(format!("{a:?}"), format!("{b:?}"), "{model} {pk}"),
                other => panic!("{model} {pk}: {other:?}"),
            }
        }
    }
    assert_eq!(
        r.retrieve_as("nosuch", "1", &none, inline)
            .unwrap_err()
            .status(),
        404
    );
}

/// The same list inline and on the pool, on an in-memory database and on a file with readers:
/// the same answer, byte for byte.
#[test]
fn inline_and_pooled_lists_answer_the_same() {
    let path = temp_path("routes.db");
    let file = Resource::seeded(Some(&path), KEYS).unwrap();
    let memory = Resource::in_memory(KEYS).unwrap();
    let specs = [
        page_spec(&[], 1, 25),
        page_spec(&[], 2, 25),
        page_spec(&[], 3, 25),
        page_spec(&[("v", "v2"), ("_order_by", "-v")], 1, 3),
        page_spec(&[("_search", "c1")], 2, 4),
        page_spec(&[("_no_pagination", "1")], 1, 25),
        page_spec(&[("_no_pagination", "1"), ("v__in", "v1,v2")], 1, 25),
    ];
    for r in [&file, &memory] {
        for model in [
            "byrowid",
            "bytext",
            "clustered",
            "keyless",
            "composite",
            "byview",
        ] {
            for spec in &specs {
                // Every reader sees the database once, so that none finds it new.
                let mut pooled = None;
                for _ in 0..5 {
                    pooled = r.list_as(model, spec, Mode::Pool).unwrap();
                }
                let pooled = pooled.unwrap();
                let max_skip = pooled.skipped;
                let inline = r
                    .list_as(model, spec, Mode::Inline { max_skip })
                    .unwrap()
                    .unwrap_or_else(|| panic!("{model} {spec:?}: gave up"));
                assert_eq!(inline.listing, pooled.listing, "{model} {spec:?}");
                assert_eq!(inline.skipped, pooled.skipped);
                let bytes = |l: Listing| list_body(l, BASE, &[]);
                assert_eq!(bytes(inline.listing), bytes(pooled.listing));
            }
        }
    }
}

#[test]
fn an_inline_list_gives_up_rather_than_do_more_than_its_timed_run() {
    let r = Resource::in_memory(KEYS).unwrap();
    // A page reached directly steps over the rows before it.
    let deep = page_spec(&[], 3, 10);
    let run = r.list_as("byrowid", &deep, Mode::Pool).unwrap().unwrap();
    assert_eq!(run.skipped, 20);
    let run = r.list_as("byrowid", &deep, Mode::Pool).unwrap().unwrap();
    assert_eq!(run.skipped, 20);
    assert!(
        r.list_as("byrowid", &deep, Mode::Inline { max_skip: 19 })
            .unwrap()
            .is_none()
    );
    // Page 2 leaves an anchor where page 3 begins: from then on, page 3 steps over nothing.
    r.list_as("byrowid", &page_spec(&[], 2, 10), Mode::Pool)
        .unwrap();
    let run = r
        .list_as("byrowid", &deep, Mode::Inline { max_skip: 0 })
        .unwrap()
        .unwrap();
    assert_eq!(run.skipped, 0);
    // A count the memo no longer holds (the data changed): not counted inline.
    let page_1 = |mode| {
        r.list_as("byrowid", &page_spec(&[], 1, 10), mode)
            .unwrap()
            .is_some()
    };
    r.with_writer(|_| ());
    assert!(!page_1(Mode::Inline { max_skip: 0 }));
    // Counted on the pool, then remembered: inline again.
    assert!(page_1(Mode::Pool));
    assert!(page_1(Mode::Inline { max_skip: 0 }));
}

#[test]
fn an_inline_list_gives_up_when_another_connection_committed() {
    let path = temp_path("routes.db");
    let r = Resource::seeded(Some(&path), KEYS).unwrap();
    let specs = [
        page_spec(&[], 1, 10),
        page_spec(&[("_no_pagination", "1")], 1, 25),
    ];
    for spec in &specs {
        for _ in 0..5 {
            r.list_as("byrowid", spec, Mode::Pool).unwrap();
        }
        assert!(
            r.list_as("byrowid", spec, Mode::Inline { max_skip: 0 })
                .unwrap()
                .is_some()
        );
    }
    // Another process writes the file.
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute("INSERT INTO byrowid VALUES (1000, 'other')", [])
        .unwrap();
    for spec in &specs {
        assert!(
            r.list_as("byrowid", spec, Mode::Inline { max_skip: 0 })
                .unwrap()
                .is_none(),
            "{spec:?}"
        );
    }
}

/// Inline work takes a connection only if one is free: with the single connection of an
/// in-memory database held by another thread, the request waits for its release as an async
/// task (the worker is not blocked meanwhile), then runs inline.
#[test]
fn inline_work_does_not_wait_for_a_busy_connection() {
    let r = warm(FAST);
    let rt = runtime();
    let spec = page_spec(&[], 1, 5);
    let expected = backend_list(&rt, &r, &spec);
    let expected_record = Resource::retrieve(&r, "byrowid", "9").unwrap();
    assert_eq!(route(&r, "byrowid", &spec), Route::Inline);

    let (held_tx, held_rx) = mpsc::channel();
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let holder = {
        let r = Arc::clone(&r);
        std::thread::spawn(move || {
            r.with_writer(|_| {
                held_tx.send(()).unwrap();
                // Held until released; a worker that waited for it would wait this long
                // and then find the answers below wrong, not hang the test.
                let _ = release_rx.recv_timeout(Duration::from_secs(60));
            });
        })
    };
    held_rx.recv().unwrap();
    // Directly: inline gives up at once.
    let inline = Mode::Inline { max_skip: 0 };
    assert!(r.list_as("byrowid", &spec, inline).unwrap().is_none());
    let none = Selection::default();
    assert!(
        r.retrieve_as("byrowid", "9", &none, inline)
            .unwrap()
            .is_none()
    );
    // Through the backend, on a single-threaded runtime: both requests wait for the connection
    // without blocking the worker, which goes on (here: to this task, which releases the
    // connection); then they run inline.
    let (listing, record) = rt.block_on(async {
        let list = tokio::spawn(Backend::list(
            Arc::clone(&r),
            "byrowid".to_owned(),
            spec.clone(),
            hold(),
        ));
        let retrieve = tokio::spawn(Backend::retrieve(
            Arc::clone(&r),
            "byrowid".to_owned(),
            "9".to_owned(),
            Selection::default(),
            hold(),
        ));
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        // Neither done nor handed off: waiting for the connection.
        assert_eq!(r.runs().inline_counts(), (0, 0));
        assert!(!list.is_finished() && !retrieve.is_finished());
        release_tx.send(()).unwrap();
        (list.await.unwrap(), retrieve.await.unwrap())
    });
    holder.join().unwrap();
    assert_eq!(listing.unwrap(), expected);
    assert_eq!(record.unwrap(), expected_record);
    // The holder was the writer, which may have written (`with_writer` moves the generation
    // on): the list's timed run no longer tells its cost, so it went to the pool after all.
    assert_eq!(r.runs().inline_counts(), (0, 1));
}
