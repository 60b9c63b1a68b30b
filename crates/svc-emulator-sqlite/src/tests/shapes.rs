//! How the engine maps SQLite tables that are not one integer key per table, pinned case by
//! case: composite keys, tables without a key, views, `WITHOUT ROWID` tables, `JSON` columns,
//! values the engine cannot read and pages past 2^63.
//!
//! Every expected answer below is the engine's own (PyPI `jet-bridge` 1.12.13 with SQLAlchemy
//! 1.4.54 over SQLite 3.40.1, asked over HTTP on a database holding [`FIXTURE`]): its body when
//! it answers 2xx, otherwise its status. Where it answers 5xx the emulator refuses with a 400
//! in strict mode and answers 500 in lenient mode.

use serde_json::{Value as Json, json};

use super::Reply;
use crate::Resource;
use svc_engine::forms::RequestForm;
use svc_engine::python::json::{PyJson, parse_py_json};
use svc_engine::request::{list_spec, selection};
use svc_engine::{AggregateRequest, EngineError, GroupRequest, Listing, Selection};

const FIXTURE: &str = r#"
CREATE TABLE comp (a INTEGER, b TEXT, v INTEGER, PRIMARY KEY (a, b));
INSERT INTO comp VALUES (3,'x',10),(1,'y',20),(2,'z',30),(2,'w',40),(5,'q',50);
CREATE TABLE rev (x TEXT, a INTEGER, b INTEGER, PRIMARY KEY (b, a));
INSERT INTO rev VALUES ('p',1,9),('q',2,8),('r',3,8);
CREATE TABLE nokey (k INTEGER, name TEXT, n INTEGER);
INSERT INTO nokey VALUES (1,'a',1),(1,'b',2),(NULL,'c',3),(2,'d',4),(NULL,'e',5),(3,'f',6);
CREATE TABLE nokeyt (name TEXT, n INTEGER);
INSERT INTO nokeyt VALUES ('a',1),('a',2),(NULL,3),('b',4);
CREATE VIEW v_comp AS SELECT a, b, v FROM comp WHERE v > 15;
CREATE TABLE wr (a TEXT, b INTEGER, c REAL, PRIMARY KEY (a, b)) WITHOUT ROWID;
INSERT INTO wr VALUES ('p',1,1.5),('p',2,2.5),('q',1,3.5);
CREATE TABLE js (id INTEGER PRIMARY KEY, j JSON, t TEXT);
INSERT INTO js VALUES (1,'"text"','a'),(2,'{"a": 1, "b": "text"}','b'),(3,'[1, 2, 3]','c'),
    (4,'1','d'),(5,'2','e'),(6,NULL,'f'),(7,'null','g'),(8,'"Texty"','h'),(10,'true','j'),
    (11,'2.5','k');
CREATE TABLE js_bad (id INTEGER PRIMARY KEY, j JSON);
INSERT INTO js_bad VALUES (1, '[1]'), (2, 'not json'), (3, '{"x": 2}');
CREATE TABLE bad (id INTEGER PRIMARY KEY, n INTEGER, d DATE);
INSERT INTO bad VALUES (1, 5, '2024-01-02'), (2, 'abc', '2024-01-03'), (3, 7, 'notadate');
CREATE TABLE bl (id INTEGER PRIMARY KEY, b BLOB);
INSERT INTO bl VALUES (1, x'01'), (2, x'0203'), (3, NULL), (4, x'ff');
CREATE TABLE tp (code TEXT PRIMARY KEY, v INTEGER);
INSERT INTO tp VALUES (NULL,1),(NULL,2),('a',3),('b',1);
CREATE TABLE cn (a INTEGER, b TEXT, v INTEGER, PRIMARY KEY (a, b));
INSERT INTO cn VALUES (NULL,'x',1),(NULL,'x',2),(1,NULL,3),(1,NULL,4),(2,'y',5);
CREATE TABLE bl2 (id INTEGER PRIMARY KEY, b BLOB);
INSERT INTO bl2 VALUES (1, x'41'), (2, x'4243');
CREATE TABLE tie (a INTEGER, b TEXT, qty INTEGER, PRIMARY KEY (a, b));
INSERT INTO tie VALUES (7,'p5',54),(1,'a',3),(7,'p13',54),(4,'zz',54),(4,'m',54);
CREATE VIEW v_tie AS SELECT a, b, qty FROM tie;
CREATE TABLE tiet (a TEXT, b TEXT, qty INTEGER, PRIMARY KEY (a, b));
INSERT INTO tiet VALUES ('k','p5',54),('c','a',3),('k','p13',54);
CREATE VIEW v_tiet AS SELECT a, b, qty FROM tiet;
"#;

fn res() -> Resource {
    Resource::in_memory(FIXTURE).unwrap()
}

fn pairs(query: &[(&str, &str)]) -> Vec<(String, String)> {
    query
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// A list: `(count, records)` of a page, `(len, records)` of a bare list.
fn list_as(
    r: &Resource,
    model: &str,
    query: &[(&str, &str)],
    lenient: bool,
) -> Result<(u64, Json), EngineError> {
    match r.list(model, &list_spec(&pairs(query), lenient))? {
        Listing::Page { count, records, .. } => {
            Ok((count, serde_json::from_slice(&records.0).unwrap()))
        }
        Listing::All(records) => {
            let v: Json = serde_json::from_slice(&records.0).unwrap();
            Ok((v.as_array().unwrap().len() as u64, v))
        }
    }
}

fn list(r: &Resource, model: &str, query: &[(&str, &str)]) -> (u64, Json) {
    list_as(r, model, query, false).unwrap_or_else(|e| panic!("{model} {query:?}: {e:?}"))
}

/// The values of `field` in a list's records, in order.
fn column(records: &Json, field: &str) -> Vec<Json> {
    records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[field].clone())
        .collect()
}

fn body(text: &str) -> PyJson {
    parse_py_json(text).unwrap()
}

fn get(r: &Resource, model: &str, pk: &str) -> Result<Json, EngineError> {
    r.retrieve(model, pk)
        .map(|b| serde_json::from_slice(&b).unwrap())
}

fn post(r: &Resource, model: &str, text: &str) -> Result<Json, EngineError> {
    r.create_body(model, &body(text), false)
        .map(|b| serde_json::from_slice(&b).unwrap())
}

fn patch(r: &Resource, model: &str, pk: &str, text: &str) -> Result<Json, EngineError> {
    r.update_body(model, pk, &body(text), &Selection::default())
        .map(|b| serde_json::from_slice(&b).unwrap())
}

fn del(r: &Resource, model: &str, pk: &str) -> Result<(), EngineError> {
    r.delete_selected(model, pk, &Selection::default())
}

/// The rows of `table` as SQLite holds them, by rowid (or key) order.
fn rows(r: &Resource, sql: &str) -> Vec<Vec<Json>> {
    r.with_reader(|c| {
        let mut stmt = c.prepare(sql).unwrap();
        let n = stmt.column_count();
        stmt.query_map([], |row| {
            Ok((0..n)
                .map(|i| match row.get_ref(i).unwrap() {
                    rusqlite::types::ValueRef::Null => Json::Null,
                    rusqlite::types::ValueRef::Integer(v) => json!(v),
                    rusqlite::types::ValueRef::Real(v) => json!(v),
                    rusqlite::types::ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                    rusqlite::types::ValueRef::Blob(_) => json!("blob"),
                })
                .collect())
        })
        .unwrap()
        .collect::<rusqlite::Result<Vec<_>>>()
        .unwrap()
    })
}

fn status(e: &EngineError) -> u16 {
    e.status()
}

fn aggregate(
    r: &Resource,
    model: &str,
    query: &[(&str, &str)],
    lenient: bool,
) -> Result<Json, EngineError> {
    let q = pairs(query);
    let req = AggregateRequest::from_query(&q)?;
    r.aggregate(model, &req, &selection(&q, lenient))
}

fn group(
    r: &Resource,
    model: &str,
    query: &[(&str, &str)],
    lenient: bool,
) -> Result<Json, EngineError> {
    let q = pairs(query);
    let req = GroupRequest::from_query(&q)?;
    r.group(model, &req, &selection(&q, lenient))
}

#[test]
fn a_composite_key_is_keyed_on_its_first_column() {
    let r = res();
    let (count, records) = list(&r, "comp", &[]);
    assert_eq!(count, 5);
    // `a` descending; the two rows of `a = 2` in SQLite's order for the key's index.
    assert_eq!(
        records,
        json!([{"a": 5, "b": "q", "v": 50}, {"a": 3, "b": "x", "v": 10},
               {"a": 2, "b": "z", "v": 30}, {"a": 2, "b": "w", "v": 40},
               {"a": 1, "b": "y", "v": 20}])
    );
    // `GET comp/2/`: the first row whose `a` is 2 (not the row whose rowid is 2).
    assert_eq!(
        get(&r, "comp", "2").unwrap(),
        json!({"a": 2, "b": "w", "v": 40})
    );
    // The aggregate's default column is the key `a`: 3 + 1 + 2 + 2 + 5.
    assert_eq!(
        aggregate(&r, "comp", &[("_y_func", "sum")], false).unwrap(),
        json!({"y_func": 13})
    );
    assert_eq!(
        group(
            &r,
            "comp",
            &[("_x_column", "a"), ("_y_func", "count")],
            false
        )
        .unwrap(),
        json!([{"group": 1, "y_func": 1}, {"group": 2, "y_func": 2},
               {"group": 3, "y_func": 1}, {"group": 5, "y_func": 1}])
    );
    // `PRIMARY KEY (b, a)`: keyed on `b`, the first column in key order.
    assert_eq!(
        list(&r, "rev", &[]).1,
        json!([{"x": "p", "a": 1, "b": 9}, {"x": "r", "a": 3, "b": 8}, {"x": "q", "a": 2, "b": 8}])
    );
    assert_eq!(
        get(&r, "rev", "8").unwrap(),
        json!({"x": "q", "a": 2, "b": 8})
    );
}

#[test]
fn writes_to_a_composite_key_name_the_whole_key() {
    let r = res();
    // Key columns left out are stored NULL and read back with `IS NULL` there; a falsy first
    // key column counts as not given.
    assert_eq!(
        post(&r, "comp", r#"{"b": "n", "v": 1}"#).unwrap(),
        json!({"a": null, "b": "n", "v": 1})
    );
    assert_eq!(
        post(&r, "comp", r#"{"a": 0, "b": "n0", "v": 1}"#).unwrap(),
        json!({"a": null, "b": "n0", "v": 1})
    );
    assert_eq!(
        post(&r, "comp", r#"{"a": 7, "b": "n7", "v": 1}"#).unwrap(),
        json!({"a": 7, "b": "n7", "v": 1})
    );
    assert_eq!(
        post(&r, "comp", r#"{"a": 7, "v": 1}"#).unwrap(),
        json!({"a": 7, "b": null, "v": 1})
    );
    // An update changes the one row the record is, a new key moves it.
    assert_eq!(
        patch(&r, "comp", "2", r#"{"v": 41}"#).unwrap(),
        json!({"a": 2, "b": "w", "v": 41})
    );
    assert_eq!(
        patch(&r, "comp", "2", r#"{"a": 4}"#).unwrap(),
        json!({"a": 4, "b": "w", "v": 41})
    );
    del(&r, "comp", "2").unwrap();
    assert_eq!(
        rows(&r, "SELECT rowid, a, b, v FROM comp ORDER BY rowid"),
        [
            vec![json!(1), json!(3), json!("x"), json!(10)],
            vec![json!(2), json!(1), json!("y"), json!(20)],
            vec![json!(4), json!(4), json!("w"), json!(41)],
            vec![json!(5), json!(5), json!("q"), json!(50)],
            vec![json!(6), Json::Null, json!("n"), json!(1)],
            vec![json!(7), Json::Null, json!("n0"), json!(1)],
            vec![json!(8), json!(7), json!("n7"), json!(1)],
            vec![json!(9), json!(7), Json::Null, json!(1)],
        ]
    );
    // `comp/7` is the row whose `b` is NULL: the ORM cannot name it in a write.
    assert_eq!(
        get(&r, "comp", "7").unwrap(),
        json!({"a": 7, "b": null, "v": 1})
    );
    for e in [
        patch(&r, "comp", "7", r#"{"v": 5}"#).unwrap_err(),
        del(&r, "comp", "7").unwrap_err(),
    ] {
        assert_eq!(status(&e), 400);
        assert_eq!(e.to_string(), "Query failed");
    }
    assert_eq!(
        get(&r, "comp", "7").unwrap(),
        json!({"a": 7, "b": null, "v": 1})
    );
}

#[test]
fn a_table_without_a_key_is_keyed_on_its_first_column_as_the_orm_sees_it() {
    let r = res();
    // NULL keys are hidden, repeated keys show their first row: 3 records, counted as shown.
    let (count, records) = list(&r, "nokey", &[]);
    assert_eq!(count, 3);
    assert_eq!(
        records,
        json!([{"k": 3, "name": "f", "n": 6}, {"k": 2, "name": "d", "n": 4}, {"k": 1, "name": "a", "n": 1}])
    );
    // A full page counts rows (4, the NULL keys left out); page 2 holds one record.
    let (count, records) = list(&r, "nokey", &[("_per_page", "2")]);
    assert_eq!(
        (count, column(&records, "k")),
        (4, vec![json!(3), json!(2)])
    );
    let (count, records) = list(&r, "nokey", &[("_per_page", "2"), ("page", "2")]);
    assert_eq!(
        (count, records),
        (4, json!([{"k": 1, "name": "a", "n": 1}]))
    );
    let (_, records) = list(&r, "nokey", &[("_no_pagination", "1")]);
    assert_eq!(
        column(&records, "name"),
        [json!("f"), json!("d"), json!("a")]
    );
    // The first row read for `k = 1` in this order is `b`.
    let (_, records) = list(&r, "nokey", &[("_order_by", "-name")]);
    assert_eq!(
        column(&records, "name"),
        [json!("f"), json!("d"), json!("b")]
    );
    assert_eq!(
        get(&r, "nokey", "1").unwrap(),
        json!({"k": 1, "name": "a", "n": 1})
    );
    // Aggregates and groups count rows (NULL keys left out).
    assert_eq!(
        aggregate(&r, "nokey", &[("_y_func", "count")], false).unwrap(),
        json!({"y_func": 4})
    );
    assert_eq!(
        aggregate(
            &r,
            "nokey",
            &[("_y_func", "sum"), ("_y_column", "n")],
            false
        )
        .unwrap(),
        json!({"y_func": 13})
    );
    assert_eq!(
        group(
            &r,
            "nokey",
            &[
                ("_x_column", "name"),
                ("_y_func", "sum"),
                ("_y_column", "n")
            ],
            false
        )
        .unwrap(),
        json!([{"group": "a", "y_func": 1}, {"group": "b", "y_func": 2},
               {"group": "d", "y_func": 4}, {"group": "f", "y_func": 6}])
    );
}

#[test]
fn writes_without_a_key_reach_every_row_that_shares_it() {
    let r = res();
    // Two rows share `k = 1`: the ORM's flush refuses the update, nothing changes.
    let e = patch(&r, "nokey", "1", r#"{"n": 100}"#).unwrap_err();
    assert_eq!(
        (status(&e), e.to_string()),
        (400, "Query failed".to_owned())
    );
    assert_eq!(
        patch(&r, "nokey", "2", r#"{"n": 100}"#).unwrap(),
        json!({"k": 2, "name": "d", "n": 100})
    );
    assert_eq!(
        patch(&r, "nokey", "2", r#"{"k": 7}"#).unwrap(),
        json!({"k": 7, "name": "d", "n": 100})
    );
    // A delete takes both rows of `k = 1`.
    del(&r, "nokey", "1").unwrap();
    // No key given: read back by SQLite's last rowid (7), which is the row moved to `k = 7`.
    assert_eq!(
        post(&r, "nokey", r#"{"name": "z"}"#).unwrap(),
        json!({"k": 7, "name": "d", "n": 100})
    );
    // A repeated key: the record read back is the first row with it.
    assert_eq!(
        post(&r, "nokey", r#"{"k": 3, "name": "dup3"}"#).unwrap(),
        json!({"k": 3, "name": "f", "n": 6})
    );
    let e = patch(&r, "nokey", "3", r#"{"n": 1}"#).unwrap_err();
    assert_eq!(status(&e), 400);
    assert_eq!(
        rows(&r, "SELECT rowid, k, name, n FROM nokey ORDER BY rowid"),
        [
            vec![json!(3), Json::Null, json!("c"), json!(3)],
            vec![json!(4), json!(7), json!("d"), json!(100)],
            vec![json!(5), Json::Null, json!("e"), json!(5)],
            vec![json!(6), json!(3), json!("f"), json!(6)],
            vec![json!(7), Json::Null, json!("z"), Json::Null],
            vec![json!(8), json!(3), json!("dup3"), Json::Null],
        ]
    );
    // A text key the database does not assign must be given.
    assert_eq!(status(&post(&r, "nokeyt", r#"{"n": 5}"#).unwrap_err()), 400);
    assert_eq!(
        post(&r, "nokeyt", r#"{"name": "a", "n": 5}"#).unwrap(),
        json!({"name": "a", "n": 1})
    );
    del(&r, "nokeyt", "a").unwrap();
    assert_eq!(
        list(&r, "nokeyt", &[("_no_pagination", "1")]).1,
        json!([{"name": "b", "n": 4}])
    );
}

#[test]
fn views_and_without_rowid_tables_are_models() {
    let r = res();
    // A view: keyed on its first column, which repeats (`a = 2` twice).
    let (count, records) = list(&r, "v_comp", &[]);
    assert_eq!(count, 3);
    assert_eq!(
        records,
        json!([{"a": 5, "b": "q", "v": 50}, {"a": 2, "b": "z", "v": 30}, {"a": 1, "b": "y", "v": 20}])
    );
    assert_eq!(
        get(&r, "v_comp", "2").unwrap(),
        json!({"a": 2, "b": "w", "v": 40})
    );
    // Writes reach SQLite, which refuses them.
    assert_eq!(
        status(&patch(&r, "v_comp", "3", r#"{"v": 1}"#).unwrap_err()),
        404
    );
    for e in [
        patch(&r, "v_comp", "5", r#"{"v": 1}"#).unwrap_err(),
        post(&r, "v_comp", r#"{"a": 8, "b": "n", "v": 1}"#).unwrap_err(),
        del(&r, "v_comp", "5").unwrap_err(),
    ] {
        assert_eq!(status(&e), 400);
        assert_eq!(e.to_string(), "cannot modify v_comp because it is a view");
    }
    // WITHOUT ROWID with a composite key: keyed on `a`.
    assert_eq!(
        list(&r, "wr", &[]).1,
        json!([{"a": "q", "b": 1, "c": "3.5"}, {"a": "p", "b": 2, "c": "2.5"}, {"a": "p", "b": 1, "c": "1.5"}])
    );
    assert_eq!(
        get(&r, "wr", "p").unwrap(),
        json!({"a": "p", "b": 1, "c": "1.5"})
    );
    assert_eq!(
        patch(&r, "wr", "p", r#"{"c": 9}"#).unwrap(),
        json!({"a": "p", "b": 1, "c": "9.0"})
    );
    assert_eq!(
        post(&r, "wr", r#"{"a": "r", "b": 3, "c": 1}"#).unwrap(),
        json!({"a": "r", "b": 3, "c": "1.0"})
    );
    assert_eq!(
        status(&post(&r, "wr", r#"{"b": 3, "c": 1}"#).unwrap_err()),
        400
    );
    del(&r, "wr", "q").unwrap();
    assert_eq!(
        column(&list(&r, "wr", &[]).1, "a"),
        [json!("r"), json!("p"), json!("p")]
    );
}

#[test]
fn a_view_shows_the_row_the_engine_reads_first_of_a_repeated_key() {
    let r = res();
    // Rows that share the view's key (`a`) and every order term: the engine's SQLite reads its
    // `a IS NOT NULL` through the base table's key index, so the first in index order shows
    // (`p13` before `p5`, `m` before `zz`), not the first inserted.
    let (count, records) = list(&r, "v_tie", &[("_order_by", "qty")]);
    assert_eq!(count, 3);
    assert_eq!(
        records,
        json!([{"a": 1, "b": "a", "qty": 3}, {"a": 7, "b": "p13", "qty": 54}, {"a": 4, "b": "m", "qty": 54}])
    );
    assert_eq!(
        list(&r, "v_tie", &[("_order_by", "-qty")]).1,
        json!([{"a": 7, "b": "p13", "qty": 54}, {"a": 4, "b": "m", "qty": 54}, {"a": 1, "b": "a", "qty": 3}])
    );
    // Without an order the key descends, through the index backwards.
    assert_eq!(
        list(&r, "v_tie", &[]).1,
        json!([{"a": 7, "b": "p5", "qty": 54}, {"a": 4, "b": "zz", "qty": 54}, {"a": 1, "b": "a", "qty": 3}])
    );
    // A full page counts the rows, not the records.
    assert_eq!(
        list(
            &r,
            "v_tie",
            &[("_order_by", "qty"), ("_per_page", "1"), ("page", "2")]
        ),
        (5, json!([{"a": 7, "b": "p13", "qty": 54}]))
    );
    // A text key: the same.
    assert_eq!(
        list(&r, "v_tiet", &[("_order_by", "qty,-qty")]),
        (
            2,
            json!([{"a": "c", "b": "a", "qty": 3}, {"a": "k", "b": "p13", "qty": 54}])
        )
    );
}

#[test]
fn json_columns_are_read_and_filtered_as_json() {
    let r = res();
    let ids = |query: &[(&str, &str)]| {
        let mut all = vec![("_no_pagination", "1")];
        all.extend_from_slice(query);
        column(&list(&r, "js", &all).1, "id")
    };
    let (count, records) = list(&r, "js", &[("_per_page", "20")]);
    assert_eq!(count, 10);
    assert_eq!(
        column(&records, "j"),
        [
            json!(2.5),
            json!(true),
            json!("Texty"),
            json!(null),
            json!(null),
            json!(2),
            json!(1),
            json!([1, 2, 3]),
            json!({"a": 1, "b": "text"}),
            json!("text")
        ]
    );
    // `exact`, `in` and `json_icontains`: a case-insensitive substring of the stored text.
    assert_eq!(ids(&[("j", "text")]), [json!(8), json!(2), json!(1)]);
    assert_eq!(
        ids(&[("j__in", "1,2")]),
        [json!(11), json!(5), json!(4), json!(3), json!(2)]
    );
    assert_eq!(
        ids(&[("j__json_icontains", "TEXT")]),
        [json!(8), json!(2), json!(1)]
    );
    assert_eq!(ids(&[("j__isnull", "1")]), [json!(6)]);
    assert_eq!(
        ids(&[("exclude__j", "text")]),
        [json!(11), json!(10), json!(7), json!(5), json!(4), json!(3)]
    );
    assert_eq!(ids(&[("_search", "tex")]), [json!(8), json!(2), json!(1)]);
    // `icontains` is not a JSON lookup: the engine ignores it (strict mode refuses it).
    assert_eq!(
        status(&list_as(&r, "js", &[("j__icontains", "text")], false).unwrap_err()),
        400
    );
    assert_eq!(
        list_as(&r, "js", &[("j__icontains", "text")], true)
            .unwrap()
            .0,
        10
    );
    // Group keys and `sum`/`min`/`max` are JSON; `count` and `avg` numbers.
    assert_eq!(
        group(&r, "js", &[("_x_column", "j"), ("_y_func", "count")], false).unwrap(),
        json!([{"group": null, "y_func": 1}, {"group": 1, "y_func": 1}, {"group": 2, "y_func": 1},
               {"group": 2.5, "y_func": 1}, {"group": "Texty", "y_func": 1},
               {"group": "text", "y_func": 1}, {"group": [1, 2, 3], "y_func": 1},
               {"group": null, "y_func": 1}, {"group": true, "y_func": 1},
               {"group": {"a": 1, "b": "text"}, "y_func": 1}])
    );
    let agg =
        |func: &str| aggregate(&r, "js", &[("_y_func", func), ("_y_column", "j")], false).unwrap();
    assert_eq!(agg("max"), json!({"y_func": {"a": 1, "b": "text"}}));
    assert_eq!(agg("min"), json!({"y_func": 1}));
    assert_eq!(agg("sum"), json!({"y_func": 5.5}));
    assert_eq!(agg("avg"), json!({"y_func": 0.6111111111111112}));
    assert_eq!(agg("count"), json!({"y_func": 9}));
    // An unknown function: the JSON field keeps the engine's query object, which its encoder
    // writes as `dict(query)` (fidelity seed 5).
    assert_eq!(agg("median"), json!({"y_func": {}}));
    let by_t = group(
        &r,
        "js",
        &[("_x_column", "t"), ("_y_func", "max"), ("_y_column", "j")],
        false,
    )
    .unwrap();
    assert_eq!(
        by_t[1],
        json!({"group": "b", "y_func": {"a": 1, "b": "text"}})
    );
    assert_eq!(by_t[5], json!({"group": "f", "y_func": null}));
}

#[test]
fn values_the_engine_cannot_read_fail_as_it_fails() {
    let r = res();
    let refused = |e: EngineError, lenient: bool| {
        assert_eq!(status(&e), if lenient { 500 } else { 400 }, "{e:?}");
        if lenient {
            assert_eq!(e.body().error_code, "engine_failure");
        }
    };
    for lenient in [false, true] {
        // Text that is not JSON, a malformed date: every read of the record fails.
        refused(list_as(&r, "js_bad", &[], lenient).unwrap_err(), lenient);
        refused(list_as(&r, "bad", &[], lenient).unwrap_err(), lenient);
        refused(
            aggregate(
                &r,
                "bad",
                &[("_y_func", "max"), ("_y_column", "d")],
                lenient,
            )
            .unwrap_err(),
            lenient,
        );
        // Bytes that are not UTF-8 as a group key.
        refused(
            group(
                &r,
                "bl",
                &[("_x_column", "b"), ("_y_func", "count")],
                lenient,
            )
            .unwrap_err(),
            lenient,
        );
        // A page whose offset passes 2^63 - 1.
        for (page, per_page) in [
            ("368934881474191034", "25"),
            ("9223372036854775809", "1"),
            ("99999999999999999999999", "3"),
        ] {
            refused(
                list_as(
                    &r,
                    "bl",
                    &[("page", page), ("_per_page", per_page)],
                    lenient,
                )
                .unwrap_err(),
                lenient,
            );
        }
    }
    assert_eq!(status(&get(&r, "js_bad", "2").unwrap_err()), 400);
    assert_eq!(status(&get(&r, "bad", "3").unwrap_err()), 400);
    // The other records read.
    assert_eq!(get(&r, "js_bad", "1").unwrap(), json!({"id": 1, "j": [1]}));
    assert_eq!(
        list(&r, "js_bad", &[("id", "1")]).1,
        json!([{"id": 1, "j": [1]}])
    );
    // Text in an INTEGER column is written as text.
    assert_eq!(
        get(&r, "bad", "2").unwrap(),
        json!({"id": 2, "n": "abc", "d": "2024-01-03"})
    );
    assert_eq!(
        group(
            &r,
            "bad",
            &[("_x_column", "n"), ("_y_func", "count")],
            false
        )
        .unwrap(),
        json!([{"group": 5, "y_func": 1}, {"group": 7, "y_func": 1}, {"group": "abc", "y_func": 1}])
    );
    // UTF-8 bytes are text keys; `max` of bytes is their repr.
    assert_eq!(
        group(
            &r,
            "bl2",
            &[("_x_column", "b"), ("_y_func", "count")],
            false
        )
        .unwrap(),
        json!([{"group": "A", "y_func": 1}, {"group": "BC", "y_func": 1}])
    );
    assert_eq!(
        aggregate(&r, "bl", &[("_y_func", "max"), ("_y_column", "b")], false).unwrap(),
        json!({"y_func": "b'\\xff'"})
    );
    // The last pages the engine reaches, and any page without paging.
    assert_eq!(
        list(&r, "bl", &[("page", "368934881474191033")]),
        (4, json!([]))
    );
    assert_eq!(
        list(
            &r,
            "bl",
            &[("page", "9223372036854775808"), ("_per_page", "1")]
        ),
        (4, json!([]))
    );
    assert_eq!(
        list(
            &r,
            "bl",
            &[("page", "99999999999999999999999"), ("_no_pagination", "1")]
        )
        .0,
        4
    );
}

#[test]
fn rows_that_share_an_identity_or_have_none_are_one_record() {
    let r = res();
    // A text key SQLite lets be NULL: the rows without a key are one `None` to the ORM, which
    // the engine's serializer writes as `{}`.
    assert_eq!(
        list(&r, "tp", &[]),
        (3, json!([{"code": "b", "v": 1}, {"code": "a", "v": 3}, {}]))
    );
    assert_eq!(
        list(&r, "tp", &[("_per_page", "2"), ("page", "2")]),
        (4, json!([{}]))
    );
    // A composite key with NULLs: SQLite's uniqueness lets `(1, NULL)` and `(NULL, 'x')`
    // repeat, the ORM's identity map does not.
    assert_eq!(
        list(&r, "cn", &[]),
        (
            3,
            json!([{"a": 2, "b": "y", "v": 5}, {"a": 1, "b": null, "v": 4}, {"a": null, "b": "x", "v": 2}])
        )
    );
    assert_eq!(
        list(&r, "cn", &[("_per_page", "2"), ("page", "2")]),
        (
            5,
            json!([{"a": 1, "b": null, "v": 3}, {"a": null, "b": "x", "v": 2}])
        )
    );
    assert_eq!(
        get(&r, "cn", "1").unwrap(),
        json!({"a": 1, "b": null, "v": 3})
    );
}
