//! Paging through the list memo (remembered counts, pages that seek past the previous page's
//! last sort key) answers exactly what `LIMIT ? OFFSET ?` answers, and forgets what it knew as
//! soon as the database changes, whoever changes it.

use std::path::Path;

use super::*;
use svc_engine::{ListSpec, Listing};

/// NULLs, duplicates, mixed storage classes, a NOCASE collation, `-0.0` beside `0.0`, an
/// index: everything that decides where a row sorts.
const WALK: &str = r#"
CREATE TABLE walk (
    id INTEGER PRIMARY KEY,
    grp TEXT,
    name TEXT COLLATE NOCASE,
    score REAL,
    misc,
    day DATE
);
CREATE INDEX walk_grp ON walk (grp);
WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 97)
INSERT INTO walk SELECT n,
    CASE WHEN n % 7 = 0 THEN NULL ELSE char(65 + n % 4) END,
    CASE n % 3 WHEN 0 THEN 'alpha' WHEN 1 THEN 'ALPHA' ELSE 'Beta' || (n % 5) END,
    CASE WHEN n % 5 = 0 THEN NULL WHEN n % 11 = 0 THEN -0.0 WHEN n % 13 = 0 THEN 0.0
         ELSE (n % 9) * 0.5 END,
    CASE n % 5 WHEN 0 THEN NULL WHEN 1 THEN n % 4 WHEN 2 THEN 'm' || (n % 3)
         WHEN 3 THEN CAST(char(65 + n % 3) AS BLOB) ELSE (n % 4) + 0.5 END,
    CASE WHEN n % 6 = 0 THEN NULL ELSE date('2025-01-01', '+' || (n % 10) || ' days') END
FROM s;

CREATE TABLE tcodes (code TEXT PRIMARY KEY NOT NULL, v INTEGER);
WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 40)
INSERT INTO tcodes SELECT 'c' || (n * 7 % 40), n % 3 FROM s;

-- A key that may be NULL (no NOT NULL): pages by OFFSET. Rows whose key is NULL are one
-- record to the engine's ORM, so a page is no slice of the whole list there (see
-- `tests/shapes.rs`): these keys are all given.
CREATE TABLE ncodes (code TEXT PRIMARY KEY, v INTEGER);
INSERT INTO ncodes VALUES ('n1', 1), ('n2', 2), ('a', 3), ('b', 1), ('n3', 3), ('c', 2);

CREATE TABLE nokey (a TEXT, b INTEGER);
WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 30)
INSERT INTO nokey SELECT 'x' || n, n % 5 FROM s;
"#;

fn spec(order: &str, filters: &[(&str, &str)], page: u64, per_page: u64) -> ListSpec {
    let mut pairs = q(filters);
    if !order.is_empty() {
        pairs.push(("_order_by".to_owned(), order.to_owned()));
    }
    let mut spec = list_spec(&pairs, false);
    spec.page = page;
    spec.per_page = per_page;
    spec
}

fn page_of(r: &Resource, model: &str, spec: &ListSpec) -> (u64, Vec<Json>) {
    match r.list(model, spec).unwrap() {
        Listing::Page { count, records, .. } => {
            (count, parse(&records.0).as_array().unwrap().clone())
        }
        Listing::All(_) => panic!("a page"),
    }
}

/// Every record the list selects, in order, from a resource opened afresh (nothing remembered):
/// the pages must be slices of this.
fn truth(path: &Path, model: &str, order: &str, filters: &[(&str, &str)]) -> Vec<Json> {
    let fresh = Resource::open(path).unwrap();
    let mut spec = spec(order, filters, 1, 1);
    spec.no_pagination = true;
    match fresh.list(model, &spec).unwrap() {
        Listing::All(records) => parse(&records.0).as_array().unwrap().clone(),
        Listing::Page { .. } => panic!("a bare list"),
    }
}

fn check_walk(
    r: &Resource,
    path: &Path,
    model: &str,
    order: &str,
    filters: &[(&str, &str)],
    per_page: u64,
    pages: &[u64],
) {
    let all = truth(path, model, order, filters);
    for &page in pages {
        let (count, got) = page_of(r, model, &spec(order, filters, page, per_page));
        let from = ((page - 1) * per_page) as usize;
        let want: Vec<Json> = all
            .iter()
            .skip(from)
            .take(per_page as usize)
            .cloned()
            .collect();
        assert_eq!(
            count as usize,
            all.len(),
            "{model} {order:?} {filters:?} count"
        );
        assert_eq!(
            got, want,
            "{model} _order_by={order:?} {filters:?} page {page} of {per_page}"
        );
    }
}

fn walk_resource() -> (Resource, PathBuf) {
    let path = temp_path("walk.sqlite");
    let r = Resource::seeded(Some(&path), WALK).unwrap();
    (r, path)
}

#[test]
fn walks_in_any_order_answer_what_offset_paging_answers() {
    let (r, path) = walk_resource();
    let orders = [
        "",
        "grp",
        "-grp",
        "name",
        "-name",
        "score",
        "-score,grp",
        "misc",
        "-misc",
        "day,-score",
        "grp,id",
        "-id",
        "id,grp",
        "-day,-misc,name",
    ];
    let filters: [&[(&str, &str)]; 3] = [&[], &[("grp__isnull", "false")], &[("score__gte", "1")]];
    let mut walked = 0;
    for order in orders {
        for filter in filters {
            for per_page in [1, 7, 25] {
                let last = 97 / per_page + 2;
                let in_order: Vec<u64> = (1..=last).collect();
                check_walk(&r, &path, "walk", order, filter, per_page, &in_order);
                // As a client that fetches pages ahead sees them: out of order, with jumps
                // forwards and back, and repeats.
                let shuffled: Vec<u64> = [1, 3, 2, 5, 4, 4, 9, 6, 2, 8, 7]
                    .into_iter()
                    .filter(|&p| p <= last)
                    .collect();
                check_walk(&r, &path, "walk", order, filter, per_page, &shuffled);
                walked += 1;
            }
        }
    }
    let (counts, anchors) = r.memo_hits();
    assert!(
        counts > 0,
        "no count came from the memo after {walked} walks"
    );
    assert!(
        anchors > 0,
        "no page began at an anchor after {walked} walks"
    );
}

#[test]
fn text_keys_keys_that_may_be_null_and_rowid_tables_walk_too() {
    let (r, path) = walk_resource();
    for (model, orders) in [
        ("tcodes", &["", "v", "-v,code", "code"][..]),
        ("ncodes", &["", "v", "-code"][..]),
        ("nokey", &["", "a", "-b,a"][..]),
    ] {
        for order in orders {
            for per_page in [1, 2, 5] {
                let pages: Vec<u64> = (1..=45 / per_page + 2).collect();
                check_walk(&r, &path, model, order, &[], per_page, &pages);
            }
        }
    }
}

#[test]
fn the_memo_forgets_on_every_write_the_emulators_and_other_connections() {
    let (r, path) = walk_resource();
    let walk_two = |r: &Resource| {
        check_walk(r, &path, "walk", "", &[], 10, &[1, 2, 3]);
        check_walk(r, &path, "walk", "-score", &[("grp", "A")], 4, &[1, 2, 3]);
    };
    walk_two(&r);
    walk_two(&r);
    // The emulator's own writes.
    r.create("walk", &json!({"id": 500, "grp": "A", "score": 9.5}))
        .unwrap();
    walk_two(&r);
    r.update("walk", "96", &json!({"grp": "A", "score": 8.0}))
        .unwrap();
    walk_two(&r);
    r.delete("walk", "95").unwrap();
    walk_two(&r);
    // Another connection, as another process would write the file.
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch(
            "INSERT INTO walk (id, grp, score) VALUES (600, 'A', 7.25);
             DELETE FROM walk WHERE id = 94;
             UPDATE walk SET score = 100 WHERE id = 93;",
        )
        .unwrap();
    walk_two(&r);
    other
        .execute_batch("DELETE FROM walk WHERE id > 80")
        .unwrap();
    walk_two(&r);
    let (count, _) = page_of(&r, "walk", &spec("", &[], 1, 10));
    assert_eq!(count, 80);
}

#[test]
fn an_in_memory_resource_forgets_on_writes_through_its_one_connection() {
    let r = Resource::in_memory(WALK).unwrap();
    let ids = |r: &Resource, page: u64| -> (u64, Vec<i64>) {
        let (count, records) = page_of(r, "walk", &spec("", &[], page, 10));
        (
            count,
            records.iter().map(|v| v["id"].as_i64().unwrap()).collect(),
        )
    };
    assert_eq!(ids(&r, 1), (97, (88..=97).rev().collect()));
    assert_eq!(ids(&r, 2), (97, (78..=87).rev().collect()));
    r.create("walk", &json!({"id": 1000})).unwrap();
    assert_eq!(ids(&r, 2), (98, (79..=88).rev().collect()));
    r.with_writer(|c| c.execute_batch("DELETE FROM walk WHERE id >= 90"))
        .unwrap();
    assert_eq!(ids(&r, 2), (89, (70..=79).rev().collect()));
    r.with_reader(|c| c.execute_batch("DELETE FROM walk WHERE id >= 85"))
        .unwrap();
    assert_eq!(ids(&r, 2), (84, (65..=74).rev().collect()));
}

/// Lists on every reader while the emulator's writer and another connection insert: each
/// answer must be one snapshot (ids are 1..=count, so page `p` starts at `count - (p-1)*5`),
/// which a count or an anchor kept from an older state would break.
#[test]
fn concurrent_writes_never_leak_a_stale_count_or_anchor() {
    let path = temp_path("concurrent.sqlite");
    let r = Arc::new(
        Resource::seeded(
            Some(&path),
            "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);
             WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 20)
             INSERT INTO t SELECT n, 'v' FROM s;",
        )
        .unwrap(),
    );
    let writer = {
        let (r, path) = (r.clone(), path.clone());
        std::thread::spawn(move || {
            let other = rusqlite::Connection::open(&path).unwrap();
            other
                .busy_timeout(std::time::Duration::from_secs(30))
                .unwrap();
            for i in 0..150 {
                if i % 2 == 0 {
                    r.create("t", &json!({"v": "w"})).unwrap();
                } else {
                    other.execute("INSERT INTO t (v) VALUES ('o')", []).unwrap();
                }
            }
        })
    };
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let r = r.clone();
            std::thread::spawn(move || {
                for _ in 0..150 {
                    for page in 1..=3u64 {
                        let (count, records) = page_of(&r, "t", &spec("", &[], page, 5));
                        let first = records[0]["id"].as_i64().unwrap() as u64;
                        assert_eq!(first, count - (page - 1) * 5, "page {page}");
                        assert_eq!(records.len(), 5);
                    }
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for reader in readers {
        reader.join().unwrap();
    }
    let (count, _) = page_of(&r, "t", &spec("", &[], 1, 5));
    assert_eq!(count, 170);
}

/// A file-backed table `t` of ids 1 to `rows`, whose reader connections have each listed once
/// (a connection's first list keeps nothing: it has not seen the database before).
fn numbered(rows: u32) -> Resource {
    let path = temp_path("numbered.sqlite");
    let r = Resource::seeded(
        Some(&path),
        &format!(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);
             WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < {rows})
             INSERT INTO t SELECT n, 'v' || n FROM s;"
        ),
    )
    .unwrap();
    for _ in 0..8 {
        page_of(&r, "t", &spec("", &[], 1, 10));
    }
    r
}

/// A walk in order starts every page after the first at the anchor the page before it left,
/// and counts once: what keeps an export's cost linear in its size.
#[test]
fn a_walk_in_order_seeks_from_the_page_before_and_counts_once() {
    let r = numbered(3000);
    let (counts_before, anchors_before) = r.memo_hits();
    for page in 1..=30 {
        let (count, records) = page_of(&r, "t", &spec("", &[], page, 100));
        assert_eq!(count, 3000);
        assert_eq!(records[0]["id"], 3000 - (page as i64 - 1) * 100);
    }
    let (counts, anchors) = r.memo_hits();
    assert_eq!(counts - counts_before, 30, "every count came from the memo");
    assert_eq!(
        anchors - anchors_before,
        29,
        "pages 2 to 30 began at an anchor"
    );
}

/// A second walk of the same list, longer than the anchors kept per walk, seeks like the
/// first: what the first walk left at its end does not crowd out what the second one keeps.
#[test]
fn a_second_long_walk_seeks_like_the_first() {
    let r = numbered(1000);
    for walk in 0..2 {
        let (_, anchors_before) = r.memo_hits();
        for page in 1..=100 {
            let (_, records) = page_of(&r, "t", &spec("", &[], page, 10));
            assert_eq!(records[0]["id"], 1000 - (page as i64 - 1) * 10);
        }
        let (_, anchors) = r.memo_hits();
        assert_eq!(
            anchors - anchors_before,
            99,
            "walk {walk}: pages 2 to 100 from anchors"
        );
    }
}
