//! Unit tests of the records engine.

// The engine's aggregate and group answers, and its writes, each with their own fixture.
mod aggregate;
mod paging;
mod routes;
mod shapes;
mod writes;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde_json::{Value as Json, json};

use crate::schema::strictly_required;
use crate::{FieldKind, Resource, demo_resource};
use svc_engine::field_input::{is_date, is_datetime};
use svc_engine::table::Table;
use svc_engine::*;
// The wire side, as the slices use it: lists read from query pairs and written with their links,
// aggregate and group forms, and the status and body of each error.
use svc_engine::base64::base64_decode;
use svc_engine::forms::RequestForm;
use svc_engine::request::{list_body, list_spec, selection};

const FIXTURE: &str = r#"
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    code TEXT UNIQUE,
    qty INTEGER,
    price REAL,
    active BOOLEAN,
    day DATE,
    at DATETIME,
    data BLOB,
    misc
);
INSERT INTO items VALUES
    (1, 'Apple', 'A1', 10, 1.5, 1, '2025-01-01', '2025-01-01 10:00:00', x'0102', 'x'),
    (2, 'banana', 'B2', 5, 0.25, 0, '2025-01-15', '2025-01-15 23:59:59', NULL, 5),
    (3, 'Cherry pie', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    (4, 'Ørsted ÉCLAIR', 'C3', 20, 3.0, 1, '2025-02-01', '2025-02-01 00:00:00', x'', ''),
    (5, 'it''s 100% _odd_, & = ok', 'D,4', 0, -2.5, 0, '2024-12-31', '2025-01-01 01:00:00', NULL, NULL),
    (6, '', '', 7, 7.0, 1, '2025-03-10', '2025-03-10 08:30:00.250', NULL, NULL);

CREATE TABLE tags (label TEXT, weight INTEGER);
INSERT INTO tags VALUES ('red', 1), ('green', NULL), ('blue', 3);

CREATE TABLE parents (id INTEGER PRIMARY KEY, name TEXT);
INSERT INTO parents VALUES (1, 'p1'), (2, 'p2');
CREATE TABLE children (
    id INTEGER PRIMARY KEY,
    parent_id INTEGER REFERENCES parents(id),
    title TEXT NOT NULL DEFAULT 'untitled'
);
INSERT INTO children VALUES (1, 1, 'c1');

CREATE TABLE codes (code TEXT PRIMARY KEY, label TEXT);
INSERT INTO codes VALUES ('a/b', 'slash'), ('x y', 'space');

CREATE TABLE pairs (a INT, b INT, PRIMARY KEY (a, b)) WITHOUT ROWID;
CREATE TABLE links (a INT, b INT, rowid TEXT, PRIMARY KEY (a, b));
INSERT INTO links VALUES (1, 2, 'r');
CREATE TABLE gen (id INTEGER PRIMARY KEY, x INTEGER, y INTEGER GENERATED ALWAYS AS (x * 2) VIRTUAL);
CREATE TABLE seqs (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT);
CREATE VIEW item_names AS SELECT name FROM items;
"#;

/// What svc-emulator's HTTP layer answers an engine error with, as far as these tests look: its
/// `error_code` (the engine's, `EngineError::code`) and its field errors (`EngineReply::body`
/// there also moves a field named like a body key under `non_field_errors`; no test here names
/// one).
pub(crate) trait Reply {
    /// The answer's code and field errors.
    fn body(&self) -> Body;
}

/// See [`Reply`].
pub(crate) struct Body {
    pub(crate) error_code: &'static str,
    pub(crate) fields: std::collections::BTreeMap<String, Vec<String>>,
}

impl Reply for EngineError {
    fn body(&self) -> Body {
        let fields = match self {
            EngineError::Invalid { fields, .. } => fields.clone(),
            _ => Default::default(),
        };
        Body {
            error_code: self.code(),
            fields,
        }
    }
}

fn res() -> Resource {
    Resource::in_memory(FIXTURE).unwrap()
}

fn q(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn parse(bytes: &[u8]) -> Json {
    serde_json::from_slice(bytes).unwrap()
}

const BASE: &str = "http://h/projects/p/prod/r/models/items";

/// Decoded query pairs as a selection (filters and `_search`).
fn sel(pairs: &[(&str, &str)]) -> Selection {
    selection(&q(pairs), false)
}

/// A list of everything `pairs` selects, read leniently.
fn lenient_spec(pairs: &[(&str, &str)]) -> svc_engine::ListSpec {
    let mut all = vec![("_no_pagination", "1")];
    all.extend_from_slice(pairs);
    list_spec(&q(&all), true)
}

/// Ids of the items a lenient list selects, sorted ascending.
fn lenient_ids(r: &Resource, pairs: &[(&str, &str)]) -> Vec<i64> {
    let listing = r.list("items", &lenient_spec(pairs)).unwrap();
    let svc_engine::Listing::All(records) = listing else {
        panic!("a bare list");
    };
    let mut ids: Vec<i64> = parse(&records.0)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    ids.sort_unstable();
    ids
}

/// A list as the records slice answers it: the envelope with its links (based on [`BASE`]), or
/// the bare array of `_no_pagination`.
fn list_json(
    r: &Resource,
    model: &str,
    pairs: &[(String, String)],
) -> Result<Vec<u8>, EngineError> {
    let spec = list_spec(pairs, false);
    Ok(list_body(r.list(model, &spec)?, BASE, pairs))
}

fn list(r: &Resource, model: &str, pairs: &[(&str, &str)]) -> Result<Json, EngineError> {
    list_json(r, model, &q(pairs)).map(|b| parse(&b))
}

/// Ids of the matching items, sorted ascending.
fn ids(r: &Resource, pairs: &[(&str, &str)]) -> Vec<i64> {
    let mut all = vec![("_no_pagination", "1")];
    all.extend_from_slice(pairs);
    let v = list(r, "items", &all).unwrap_or_else(|e| panic!("{pairs:?}: {e:?}"));
    let mut ids: Vec<i64> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    ids.sort_unstable();
    ids
}

/// Ids in the order the list gives them.
fn ordered(r: &Resource, pairs: &[(&str, &str)]) -> Vec<i64> {
    let v = list(r, "items", pairs).unwrap();
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

fn bad(r: Result<impl std::fmt::Debug, EngineError>) -> EngineError {
    let e = r.unwrap_err();
    assert_eq!(e.status(), 400, "{e:?}");
    assert_eq!(e.body().error_code, "invalid");
    e
}

fn missing(r: Result<impl std::fmt::Debug, EngineError>) -> EngineError {
    let e = r.unwrap_err();
    assert_eq!(e.status(), 404, "{e:?}");
    assert_eq!(e.body().error_code, "not_found");
    e
}

fn field_msgs(e: &EngineError, field: &str) -> Vec<String> {
    e.body()
        .fields
        .get(field)
        .cloned()
        .unwrap_or_else(|| panic!("no field error {field:?} in {e:?}"))
}

fn temp_path(name: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "svc-records-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

// ---------------------------------------------------------------------------------------------
// Schema

#[test]
fn field_kinds_from_declared_types() {
    use FieldKind::*;
    let cases = [
        ("INTEGER", Integer),
        ("int", Integer),
        ("BIGINT", Integer),
        ("TINYINT(1)", Integer),
        ("REAL", Real),
        ("FLOAT", Real),
        ("DOUBLE PRECISION", Real),
        ("NUMERIC(10,2)", Real),
        ("DECIMAL", Real),
        ("TEXT", Text),
        ("VARCHAR(20)", Text),
        ("CLOB", Text),
        ("UUID", Text),
        ("BOOLEAN", Bool),
        ("bool", Bool),
        ("DATE", Date),
        ("DATETIME", DateTime),
        ("TIMESTAMP", DateTime),
        ("BLOB", Blob),
        ("", Any),
    ];
    for (t, k) in cases {
        assert_eq!(FieldKind::from_declared(t), k, "{t}");
    }
}

#[test]
fn schema_introspection() {
    let r = res();
    assert_eq!(
        r.model_names(),
        [
            "children",
            "codes",
            "gen",
            "item_names",
            "items",
            "links",
            "pairs",
            "parents",
            "seqs",
            "sqlite_sequence",
            "tags"
        ]
    );
    let items = r.model("items").unwrap();
    assert_eq!(items.pk_field().name, "id");
    assert!(items.pk_field().auto);
    let kinds: Vec<FieldKind> = items.fields.iter().map(|f| f.value_kind).collect();
    assert_eq!(
        kinds,
        [
            FieldKind::Integer,
            FieldKind::Text,
            FieldKind::Text,
            FieldKind::Integer,
            FieldKind::Real,
            FieldKind::Bool,
            FieldKind::Date,
            FieldKind::DateTime,
            FieldKind::Blob,
            FieldKind::Any
        ]
    );
    assert!(strictly_required(items.field("name").unwrap()));
    assert!(!strictly_required(items.field("code").unwrap()));

    // No declared key: the engine promotes the first column (its reflection's warning "Table
    // "tags" is missing PK: "label" column was set as PK", seen on the running engine).
    let tags = r.model("tags").unwrap();
    assert_eq!(tags.pk_field().name, "label");
    assert!(tags.promoted_key);
    assert_eq!(tags.identity, [0]);
    // A composite key: the model is keyed on its first column, the identity is the whole key;
    // `rowid` is an ordinary column.
    let links = r.model("links").unwrap();
    assert_eq!(links.pk_field().name, "a");
    assert_eq!(links.identity, [0, 1]);
    assert!(!links.promoted_key);
    assert_eq!(links.field("rowid").unwrap().value_kind, FieldKind::Text);
    // A WITHOUT ROWID table with a composite key and a view are models too.
    assert_eq!(r.model("pairs").unwrap().pk_field().name, "a");
    let view = r.model("item_names").unwrap();
    assert!(view.extra.view && view.promoted_key);
    assert_eq!(view.pk_field().name, "name");

    let codes = r.model("codes").unwrap();
    assert_eq!(codes.pk_field().name, "code");
    assert!(strictly_required(codes.pk_field()));

    let gen_model = r.model("gen").unwrap();
    assert!(gen_model.field("y").unwrap().generated);
    let children = r.model("children").unwrap();
    assert_eq!(children.extra.foreign_keys.len(), 1);
    assert_eq!(children.extra.foreign_keys[0].parent_table, "parents");
}

#[test]
fn unknown_model_is_404() {
    let r = res();
    missing(list_json(&r, "nope", &[]));
    missing(list_json(&r, "sqlite_schema", &[]));
    // Views, WITHOUT ROWID tables with a composite key and SQLite's own tables are models, as
    // on the engine.
    list_json(&r, "sqlite_sequence", &[]).unwrap();
    list_json(&r, "item_names", &[]).unwrap();
    list_json(&r, "pairs", &[]).unwrap();
    missing(r.retrieve("nope", "1"));
    missing(r.create("nope", &json!({})));
    missing(r.update("nope", "1", &json!({})));
    missing(r.delete("nope", "1"));
}

// ---------------------------------------------------------------------------------------------
// Filters

#[test]
fn exact_filters_are_type_aware() {
    let r = res();
    assert_eq!(ids(&r, &[("name", "Apple")]), [1]);
    assert_eq!(ids(&r, &[("name__exact", "Apple")]), [1]);
    assert_eq!(ids(&r, &[("name", "apple")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("name", "")]), [1, 2, 3, 4, 5, 6]);
    assert_eq!(ids(&r, &[("qty", "5")]), [2]);
    assert_eq!(ids(&r, &[("price", "3")]), [4]);
    assert_eq!(ids(&r, &[("price", "0.25")]), [2]);
    assert_eq!(ids(&r, &[("active", "true")]), [1, 4, 6]);
    assert_eq!(ids(&r, &[("active", "True")]), [1, 4, 6]);
    assert_eq!(ids(&r, &[("active", "0")]), [2, 5]);
    assert_eq!(ids(&r, &[("day", "2025-01-15")]), [2]);
    // Stored with a space, asked with a `T`: same instant.
    assert_eq!(ids(&r, &[("at", "2025-01-15T23:59:59")]), [] as [i64; 0]);
    // Stored with an offset of -02:00.
    assert_eq!(ids(&r, &[("at", "2025-01-01T01:00:00Z")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("at", "2025-03-10T08:30:00.25")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("misc", "5")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("misc", "x")]), [1]);
    assert_eq!(ids(&r, &[("id", "3")]), [3]);
    assert_eq!(ids(&r, &[("code", "D,4")]), [5]);
}

#[test]
fn comparison_filters() {
    let r = res();
    assert_eq!(ids(&r, &[("qty__gt", "5")]), [1, 4, 6]);
    assert_eq!(ids(&r, &[("qty__gte", "5")]), [1, 2, 4, 6]);
    assert_eq!(ids(&r, &[("qty__lt", "7")]), [2, 5]);
    assert_eq!(ids(&r, &[("qty__lte", "7")]), [2, 5, 6]);
    assert_eq!(ids(&r, &[("price__lt", "0")]), [5]);
    assert_eq!(ids(&r, &[("price__gte", "1.5")]), [1, 4, 6]);
    assert_eq!(ids(&r, &[("day__gte", "2025-01-15")]), [2, 4, 6]);
    assert_eq!(ids(&r, &[("day__lt", "2025-01-01")]), [5]);
    assert_eq!(ids(&r, &[("at__lt", "2025-01-01T05:00:00")]), [5]);
    // A bare date on a date-time field means midnight.
    assert_eq!(ids(&r, &[("at__gte", "2025-02-01")]), [6]);
    assert_eq!(ids(&r, &[("at__gt", "2025-01-01 10:00")]), [2, 4, 6]);
    // Text compares by code points.
    // Text has no `gt`: the engine ignores the filter, strict mode refuses it.
    bad(list_json(&r, "items", &q(&[("name__gt", "b")])));
    assert_eq!(lenient_ids(&r, &[("name__gt", "b")]), [1, 2, 3, 4, 5, 6]);
    // Several filters are AND-ed.
    assert_eq!(ids(&r, &[("qty__gt", "1"), ("qty__lt", "10")]), [2, 6]);
    assert_eq!(ids(&r, &[("qty__gt", "1"), ("active", "false")]), [2]);
}

#[test]
fn text_lookups_match_literally() {
    let r = res();
    assert_eq!(ids(&r, &[("name__icontains", "APP")]), [1]);
    assert_eq!(ids(&r, &[("name__icontains", "%")]), [1, 2, 3, 4, 5, 6]);
    assert_eq!(ids(&r, &[("name__icontains", "_")]), [1, 2, 3, 4, 5]);
    assert_eq!(ids(&r, &[("name__icontains", "_odd_")]), [5]);
    assert_eq!(ids(&r, &[("name__icontains", "'")]), [5]);
    assert_eq!(ids(&r, &[("name__icontains", ", & = ")]), [5]);
    assert_eq!(ids(&r, &[("name__icontains", "\\")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("name__icontains", "")]), [1, 2, 3, 4, 5, 6]);
    assert_eq!(ids(&r, &[("name__istartswith", "ch")]), [3]);
    assert_eq!(ids(&r, &[("name__istartswith", "IT'S 100%")]), [5]);
    assert_eq!(ids(&r, &[("name__iendswith", "PIE")]), [3]);
    assert_eq!(ids(&r, &[("name__iendswith", "% _odd_, & = ok")]), [5]);
    assert_eq!(ids(&r, &[("name__icontains", "Ørsted")]), [4]);
    assert_eq!(ids(&r, &[("name__icontains", "rsted éc")]), [] as [i64; 0]);
    // Case folding is ASCII only (documented): `ø` does not match `Ø`, but `CLAIR` does match.
    assert_eq!(ids(&r, &[("name__icontains", "ørsted")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("name__icontains", "clair")]), [4]);
    // On numbers and dates, lookups see the text form.
    assert_eq!(ids(&r, &[("qty__icontains", "0")]), [] as [i64; 0]);
    assert_eq!(
        lenient_ids(&r, &[("day__istartswith", "2025-01")]),
        [1, 2, 3, 4, 5, 6]
    );
    bad(list_json(
        &r,
        "items",
        &q(&[("day__istartswith", "2025-01")]),
    ));
}

#[test]
fn in_filters() {
    let r = res();
    assert_eq!(ids(&r, &[("qty__in", "5,20")]), [2, 4]);
    assert_eq!(ids(&r, &[("code__in", "A1,C3")]), [1, 4]);
    assert_eq!(ids(&r, &[("code__in", "D,4")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("day__in", "2025-01-01,2025-03-10")]), [1, 6]);
    assert_eq!(
        ids(
            &r,
            &[("at__in", "2025-01-01T10:00:00,2025-02-01T00:00:00Z")]
        ),
        [] as [i64; 0]
    );
    assert_eq!(ids(&r, &[("active__in", "true")]), [1, 4, 6]);
    let e = bad(list_json(&r, "items", &q(&[("qty__in", "5,x")])));
    assert!(e.to_string().contains("\"x\""), "{e}");
}

#[test]
fn null_and_empty_filters() {
    let r = res();
    assert_eq!(ids(&r, &[("qty__isnull", "true")]), [3]);
    assert_eq!(ids(&r, &[("qty__isnull", "false")]), [1, 2, 4, 5, 6]);
    assert_eq!(ids(&r, &[("code__isempty", "true")]), [3, 6]);
    assert_eq!(ids(&r, &[("code__isempty", "false")]), [1, 2, 4, 5]);
    assert_eq!(ids(&r, &[("data__isempty", "true")]), [2, 3, 5, 6]);
    assert_eq!(ids(&r, &[("data__isnull", "false")]), [1, 4]);
    assert_eq!(ids(&r, &[("misc__isempty", "1")]), [3, 5, 6]);
    // `maybe` is no boolean word: the engine reads any such text as true, strict mode refuses.
    bad(list_json(&r, "items", &q(&[("qty__isnull", "maybe")])));
    assert_eq!(lenient_ids(&r, &[("qty__isnull", "maybe")]), [3]);
    // An empty value is no filter.
    assert_eq!(ids(&r, &[("code__isempty", "")]), [1, 2, 3, 4, 5, 6]);
}

/// Values the running data engine gave for the same requests over the same rows.
#[test]
fn repeated_keys_and_lookup_values_read_as_the_engine_reads_them() {
    let r = res();
    // A repeated key is a list: its first value counts, `in` takes the list as it is.
    assert_eq!(ids(&r, &[("name", "Apple"), ("name", "banana")]), [1]);
    assert_eq!(ids(&r, &[("qty__in", "5"), ("qty__in", "20")]), [2, 4]);
    assert_eq!(ids(&r, &[("code__in", "D,4"), ("code__in", "A1")]), [1, 5]);
    bad(list_json(
        &r,
        "items",
        &q(&[("qty__in", "5,20"), ("qty__in", "10")]),
    ));
    // An empty first value of a boolean lookup is false, as Python reads it.
    assert_eq!(
        ids(&r, &[("qty__isnull", ""), ("qty__isnull", "true")]),
        [1, 2, 4, 5, 6]
    );
    // `__exact` wins over the bare field.
    assert_eq!(ids(&r, &[("qty", "5"), ("qty__exact", "10")]), [1]);
    // Number patterns are the float's text; date-time patterns Python's str(datetime).
    assert_eq!(ids(&r, &[("price__icontains", "2.5")]), [5]);
    assert_eq!(ids(&r, &[("qty__icontains", "1")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("at__icontains", "2025-01-01T10:00")]), [1]);
    assert_eq!(ids(&r, &[("misc__icontains", "5")]), [2]);
    // Search: numbers by their text, text by substring; untyped columns are not searched.
    assert_eq!(ids(&r, &[("_search", "1.5")]), [1]);
    assert_eq!(ids(&r, &[("_search", "5")]), [2, 5]);
    assert_eq!(ids(&r, &[("_search", "x")]), [] as [i64; 0]);
}

#[test]
fn exclude_keeps_nulls() {
    let r = res();
    assert_eq!(ids(&r, &[("exclude__qty", "5")]), [1, 4, 5, 6]);
    assert_eq!(ids(&r, &[("exclude__qty__exact", "5")]), [1, 4, 5, 6]);
    assert_eq!(ids(&r, &[("exclude__qty__gt", "5")]), [2, 5]);
    assert_eq!(ids(&r, &[("exclude__qty__gte", "5")]), [5]);
    assert_eq!(ids(&r, &[("exclude__qty__lt", "7")]), [1, 4, 6]);
    assert_eq!(ids(&r, &[("exclude__qty__lte", "7")]), [1, 4]);
    assert_eq!(ids(&r, &[("exclude__name__icontains", "a")]), [3, 5, 6]);
    assert_eq!(
        ids(&r, &[("exclude__name__istartswith", "b")]),
        [1, 3, 4, 5, 6]
    );
    assert_eq!(ids(&r, &[("exclude__name__iendswith", "e")]), [2, 4, 5, 6]);
    assert_eq!(ids(&r, &[("exclude__code__in", "A1,C3")]), [2, 5, 6]);
    assert_eq!(
        ids(&r, &[("exclude__qty__isnull", "true")]),
        [1, 2, 4, 5, 6]
    );
    assert_eq!(ids(&r, &[("exclude__qty__isnull", "false")]), [3]);
    assert_eq!(ids(&r, &[("exclude__code__isempty", "true")]), [1, 2, 4, 5]);
    assert_eq!(ids(&r, &[("exclude__day__lt", "2025-01-10")]), [2, 4, 6]);
    assert_eq!(ids(&r, &[("exclude__at__gte", "2025-02-01")]), [1, 2, 4, 5]);
    assert_eq!(ids(&r, &[("exclude__active", "true")]), [2, 5]);
    assert_eq!(ids(&r, &[("exclude__misc", "x")]), [2, 4]);
    // Filter and exclude together.
    assert_eq!(
        ids(&r, &[("qty__gte", "0"), ("exclude__qty", "0")]),
        [1, 2, 4, 6]
    );
}

#[test]
fn malformed_filter_values_are_400_naming_field_and_value() {
    let r = res();
    // The engine answers 400 too, under `non_field_errors`: numbers go through Python's
    // float(), date-times through dateparser. The message names the filter and the value.
    for (key, value) in [
        ("qty", "abc"),
        ("qty", "1 OR 1=1"),
        ("price__gt", "1,5"),
        ("id", "x"),
        ("exclude__qty__gt", "many"),
        ("at", "2025-01-01T25:00:00"),
    ] {
        let e = bad(list_json(&r, "items", &q(&[(key, value)])));
        assert!(
            e.to_string().contains(&format!("{value:?}")),
            "{key}={value}: {e}"
        );
        assert!(e.to_string().contains(&format!("{key:?}")), "{key}: {e}");
        assert!(
            e.body().fields.contains_key("non_field_errors"),
            "{key}: {e:?}"
        );
    }
    // The engine fails (500) on these: strict mode answers 400 naming the filter, lenient mode
    // 500 like the engine.
    for (key, value) in [("day", "2025-02-30"), ("day", "notadate"), ("data", "AQI=")] {
        let e = bad(list_json(&r, "items", &q(&[(key, value)])));
        assert!(e.body().fields.contains_key(key), "{key}: {e:?}");
        let e = r.list("items", &lenient_spec(&[(key, value)])).unwrap_err();
        assert_eq!(e.status(), 500, "{key}={value}: {e:?}");
        assert_eq!(e.body().error_code, "engine_failure");
    }
    // Read as the engine reads them.
    assert_eq!(ids(&r, &[("qty", "")]), [1, 2, 3, 4, 5, 6]);
    assert_eq!(ids(&r, &[("qty", "1.5")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("price", "NaN")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("price", "inf")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("active", "yes")]), [1, 4, 6]);
    assert_eq!(ids(&r, &[("day", "2025-1-1")]), [1]);
    // A date-time filter on a date column compares its date.
    assert_eq!(ids(&r, &[("day__lt", "2025-01-01T10:00:00")]), [5]);
    assert_eq!(
        ids(&r, &[("at", "2025-01-01T10:00:00+0200")]),
        [] as [i64; 0]
    );
    // Leap day exists in 2024.
    assert_eq!(ids(&r, &[("day", "2024-02-29")]), [] as [i64; 0]);
}

#[test]
fn unknown_fields_and_lookups_are_400() {
    let r = res();
    for (key, named) in [
        ("foo", "foo"),
        ("foo__gt", "foo"),
        ("exclude__foo", "foo"),
        ("exclude__foo__in", "foo"),
        ("name__bar", "bar"),
        ("qty__contains", "contains"),
        ("exclude__qty__regex", "regex"),
        ("Name", "Name"),
    ] {
        let e = bad(list_json(&r, "items", &q(&[(key, "1")])));
        assert!(e.to_string().contains(&format!("{named:?}")), "{key}: {e}");
        assert!(e.body().fields.contains_key(key));
    }
    // The same rules apply to aggregate and group filters.
    let req = AggregateRequest::from_json(&json!({"func": "count"})).unwrap();
    bad(r.aggregate("items", &req, &sel(&[("foo", "1")])));
}

#[test]
fn reserved_and_underscore_params_are_not_filters() {
    let r = res();
    assert_eq!(
        ids(
            &r,
            &[
                ("_", "123"),
                ("_whatever", "x"),
                ("draft", "1"),
                ("_order_by", "")
            ]
        ),
        [1, 2, 3, 4, 5, 6]
    );
}

/// `draft` is the client's draft switch (the SDK sends `draft=1` on every request when drafts are
/// on), never a filter, even on a model with a `draft` column; `draft__exact` filters that column.
#[test]
fn draft_is_never_a_filter_even_on_a_model_with_a_draft_column() {
    let r = Resource::in_memory(
        "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT, draft BOOLEAN NOT NULL);
         INSERT INTO posts VALUES (1, 'a', 1), (2, 'b', 0), (3, 'c', 0);",
    )
    .unwrap();
    for value in ["1", "0", "true", "x"] {
        assert_eq!(
            ids_of(&r, "posts", &[("draft", value)]),
            [1, 2, 3],
            "draft={value}"
        );
    }
    assert_eq!(ids_of(&r, "posts", &[("draft__exact", "1")]), [1]);
    assert_eq!(ids_of(&r, "posts", &[("draft__exact", "false")]), [2, 3]);
    assert_eq!(ids_of(&r, "posts", &[("exclude__draft", "1")]), [2, 3]);
    assert_eq!(
        ids_of(&r, "posts", &[("draft", "1"), ("title", "b")]),
        [2],
        "other filters still apply"
    );
}

/// A field whose name starts with `_` is filtered with a lookup too (`_secret__gt`,
/// `_search__exact`), as the contract says of reserved names; other `_` parameters are ignored.
#[test]
fn lookups_on_fields_that_start_with_an_underscore_filter() {
    let r = Resource::in_memory(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, _secret INTEGER, _search TEXT);
         INSERT INTO notes VALUES (1, 1, 'a'), (2, 5, 'b'), (3, 9, 'c');",
    )
    .unwrap();
    assert_eq!(ids_of(&r, "notes", &[("_secret", "5")]), [2]);
    assert_eq!(ids_of(&r, "notes", &[("_secret__gt", "1")]), [2, 3]);
    assert_eq!(ids_of(&r, "notes", &[("exclude___secret", "5")]), [1, 3]);
    assert_eq!(ids_of(&r, "notes", &[("_search__exact", "c")]), [3]);
    assert_eq!(ids_of(&r, "notes", &[("_nope__gt", "1")]), [1, 2, 3]);
}

#[test]
fn injection_looking_values_match_nothing() {
    let r = res();
    for v in [
        "' OR 1=1 --",
        "\" OR \"\"=\"",
        "'); DROP TABLE items; --",
        "%' OR '1'='1",
    ] {
        assert_eq!(ids(&r, &[("name", v)]), [] as [i64; 0], "{v}");
        assert_eq!(ids(&r, &[("name__icontains", v)]), [] as [i64; 0], "{v}");
        assert_eq!(ids(&r, &[("name__in", v)]), [] as [i64; 0], "{v}");
        assert_eq!(ids(&r, &[("_search", v)]), [] as [i64; 0], "{v}");
        assert_eq!(ids(&r, &[("exclude__name", v)]).len(), 6, "{v}");
        // Not an integer: the engine's IntegerField refuses the key.
        bad(r.retrieve("items", v));
        missing(r.retrieve("codes", v));
    }
    bad(list_json(
        &r,
        "items",
        &q(&[("_order_by", "name; DROP TABLE items")]),
    ));
    bad(list_json(&r, "items", &q(&[("name\" OR 1=1 --", "x")])));
    assert_eq!(ids(&r, &[]).len(), 6);
}

#[test]
fn search() {
    let r = res();
    assert_eq!(ids(&r, &[("_search", "an")]), [2]);
    assert_eq!(ids(&r, &[("_search", "CHERRY")]), [3]);
    assert_eq!(ids(&r, &[("_search", "%")]), [1, 2, 3, 4, 5, 6]);
    // Numbers: equality on numeric fields (qty 7 and price 7.0 of item 6), substrings of text.
    assert_eq!(ids(&r, &[("_search", "7")]), [6]);
    assert_eq!(ids(&r, &[("_search", "-2.5")]), [5]);
    // `0.25` is item 2's price and a substring of item 6's date-time.
    assert_eq!(ids(&r, &[("_search", "0.25")]), [2]);
    assert_eq!(ids(&r, &[("_search", "2024-12")]), [] as [i64; 0]);
    assert_eq!(ids(&r, &[("_search", "")]), [1, 2, 3, 4, 5, 6]);
    assert_eq!(ids(&r, &[("_search", "a"), ("qty__gt", "5")]), [1, 4]);
    assert_eq!(ids(&r, &[("_search", "zzz")]), [] as [i64; 0]);
}

// ---------------------------------------------------------------------------------------------
// Ordering and pagination

#[test]
fn ordering_with_pk_tie_breaker() {
    let r = res();
    assert_eq!(ordered(&r, &[]), [6, 5, 4, 3, 2, 1]);
    assert_eq!(ordered(&r, &[("_order_by", "id")]), [1, 2, 3, 4, 5, 6]);
    assert_eq!(ordered(&r, &[("_order_by", "active")]), [3, 5, 2, 6, 4, 1]);
    assert_eq!(ordered(&r, &[("_order_by", "-active")]), [6, 4, 1, 5, 2, 3]);
    assert_eq!(
        ordered(&r, &[("_order_by", "active,-qty")]),
        [3, 2, 5, 4, 1, 6]
    );
    // Names are not trimmed: the engine fails on " active " (500), strict mode answers 400.
    bad(list_json(
        &r,
        "items",
        &q(&[("_order_by", " active , qty ")]),
    ));
    // A value of one character lists nothing.
    assert_eq!(ordered(&r, &[("_order_by", "a")]), [] as [i64; 0]);
    assert_eq!(ordered(&r, &[("_order_by", "-")]), [] as [i64; 0]);
    // Given twice: the engine fails (500); strict 400, lenient 500.
    let twice = [("_order_by", "id"), ("_order_by", "qty")];
    bad(list_json(&r, "items", &q(&twice)));
    let e = r.list("items", &lenient_spec(&twice)).unwrap_err();
    assert_eq!(e.status(), 500);
    assert_eq!(ordered(&r, &[("_order_by", "-id,qty")]), [6, 5, 4, 3, 2, 1]);
    assert_eq!(ordered(&r, &[("_order_by", "price")]), [3, 5, 2, 1, 4, 6]);
    let e = bad(list_json(&r, "items", &q(&[("_order_by", "name,-nope")])));
    assert!(e.to_string().contains("\"nope\""));
    assert!(e.body().fields.contains_key("_order_by"));
    // A promoted key ends the order too (weight descending, then label descending).
    let tags = list(&r, "tags", &[("_order_by", "-weight")]).unwrap();
    let labels: Vec<&str> = tags["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["blue", "red", "green"]);
}

#[test]
fn pagination_envelope_and_links() {
    let r = demo_resource().unwrap();
    let v = list(&r, "orders", &[]).unwrap();
    assert_eq!(v["count"], 12000);
    assert_eq!(v["results"].as_array().unwrap().len(), 25);
    assert_eq!(v["results"][0]["id"], 12000);
    assert_eq!(v["previous"], Json::Null);
    assert_eq!(v["next"], format!("{BASE}?page=2"));

    let v = list(
        &r,
        "orders",
        &[
            ("status", "paid"),
            ("note__icontains", "100% please"),
            ("page", "2"),
            ("_per_page", "10"),
        ],
    )
    .unwrap();
    let count = v["count"].as_u64().unwrap();
    assert!(count > 20, "{count}");
    assert_eq!(
        v["next"],
        // Sorted by key, a space as `+`: the engine's `urlencode(sorted(...))`.
        format!("{BASE}?_per_page=10&note__icontains=100%25+please&page=3&status=paid")
    );
    assert_eq!(
        v["previous"],
        format!("{BASE}?_per_page=10&note__icontains=100%25+please&status=paid")
    );
    assert_eq!(v["results"].as_array().unwrap().len(), 10);

    // Non-ASCII and reserved characters in the query survive the links.
    let v = list(&r, "customers", &[("city__in", "Kraków,São Paulo&x=1")]).unwrap();
    assert_eq!(
        v["next"],
        format!("{BASE}?city__in=Krak%C3%B3w%2CS%C3%A3o+Paulo%26x%3D1&page=2")
    );

    // Last page. It is full, so `next` links to the page after it, as the engine's does
    // ("count may be inaccurate"), and that page lists nothing.
    let v = list(&r, "orders", &[("page", "480")]).unwrap();
    assert_eq!(v["next"], format!("{BASE}?page=481"));
    assert_eq!(v["previous"], format!("{BASE}?page=479"));
    assert_eq!(v["results"].as_array().unwrap().len(), 25);
    assert_eq!(v["results"][24]["id"], 1);

    // One page holds everything, and is not full: no next page.
    let v = list(
        &r,
        "orders",
        &[("_per_page", "10000"), ("customer_id", "1")],
    )
    .unwrap();
    assert_eq!(v["next"], Json::Null);
    assert_eq!(
        v["results"].as_array().unwrap().len() as u64,
        v["count"].as_u64().unwrap()
    );

    // Past the end: 200 with the real count, no records, no next page, and the page before it
    // as `previous` (the engine's answer). Page 1 of nothing: an empty page.
    let v = list(&r, "orders", &[("page", "481")]).unwrap();
    assert_eq!(v["count"], 12000);
    assert_eq!(v["results"], json!([]));
    assert_eq!(v["next"], Json::Null);
    assert_eq!(v["previous"], format!("{BASE}?page=480"));
    let v = list(&r, "orders", &[("status", "nope")]).unwrap();
    assert_eq!(
        v,
        json!({"count": 0, "next": null, "previous": null, "results": []})
    );
    let v = list(&r, "orders", &[("status", "nope"), ("page", "2")]).unwrap();
    assert_eq!(
        v,
        json!({"count": 0, "next": null, "previous": format!("{BASE}?status=nope"), "results": []})
    );

    // Out of range numbers are clamped as the engine clamps them: a page below 1 is page 1,
    // `_per_page` goes into 1..=10000.
    let first = list(&r, "orders", &[]).unwrap();
    for page in ["0", "-1", " 1 ", "+1"] {
        let v = list(&r, "orders", &[("page", page)]).unwrap();
        assert_eq!(v["results"], first["results"], "page={page}");
        assert_eq!(v["previous"], Json::Null, "page={page}");
    }
    let v = list(&r, "orders", &[("_per_page", "0")]).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
    let v = list(&r, "orders", &[("_per_page", "20000")]).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 10000);
    // [decision: stricter] Text that is not an integer is a 400 naming the parameter (the
    // engine reads it as the default), `last` included.
    // Text that is not an integer reads as the default, as in the engine: page 1, 25 per page.
    for (k, v) in [
        ("page", "x"),
        ("page", ""),
        ("page", "last"),
        ("page", "1.5"),
        ("_per_page", "ten"),
    ] {
        let spec = svc_engine::request::list_spec(&q(&[(k, v)]), false);
        assert_eq!((spec.page, spec.per_page), (1, 25), "{k}={v}");
    }
    // The last value of a repeated parameter counts.
    let v = list(&r, "orders", &[("_per_page", "3"), ("_per_page", "2")]).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
}

#[test]
fn no_pagination_is_a_bare_capped_array() {
    let r = demo_resource().unwrap();
    let v = list(&r, "orders", &[("_no_pagination", "1")]).unwrap();
    let arr = v.as_array().unwrap();
    assert_eq!(arr.len(), 10000);
    assert_eq!(arr[0]["id"], 12000);
    assert_eq!(arr[9999]["id"], 2001);
    let v = list(
        &r,
        "orders",
        &[
            ("_no_pagination", "true"),
            ("_order_by", "id"),
            ("_per_page", "5"),
        ],
    )
    .unwrap();
    assert_eq!(v.as_array().unwrap().len(), 10000);
    assert_eq!(v[0]["id"], 1);
    let v = list(
        &r,
        "customers",
        &[("_no_pagination", "TRUE"), ("vip", "true")],
    )
    .unwrap();
    assert_eq!(v.as_array().unwrap().len(), 142);
    // Any non-empty `_no_pagination` turns paging off, `0` and `false` included (the engine's
    // rule); an empty one does not.
    for off in ["0", "false", "maybe"] {
        let v = list(&r, "customers", &[("_no_pagination", off)]).unwrap();
        assert_eq!(
            v.as_array().map(Vec::len),
            Some(1000),
            "_no_pagination={off}"
        );
    }
    let v = list(&r, "customers", &[("_no_pagination", "")]).unwrap();
    assert_eq!(v["count"], 1000);
}

// ---------------------------------------------------------------------------------------------
// Retrieve, create, update, delete

#[test]
fn retrieve_writes_json_types() {
    let r = res();
    let v = parse(&r.retrieve("items", "1").unwrap());
    assert_eq!(
        v,
        json!({
            "id": 1, "name": "Apple", "code": "A1", "qty": 10, "price": "1.5", "active": true,
            "day": "2025-01-01", "at": "2025-01-01T10:00:00", "data": "b'\\x01\\x02'",
            "misc": "x"
        })
    );
    // Keys come in table order.
    let raw = String::from_utf8(r.retrieve("items", "3").unwrap()).unwrap();
    assert_eq!(
        raw,
        r#"{"id":3,"name":"Cherry pie","code":null,"qty":null,"price":null,"active":null,"day":null,"at":null,"data":null,"misc":null}"#
    );
    let v = parse(&r.retrieve("items", "4").unwrap());
    assert_eq!(v["price"], "3.0");
    assert_eq!(v["data"], "b''");
    assert_eq!(v["name"], "Ørsted ÉCLAIR");
    let v = parse(&r.retrieve("items", "2").unwrap());
    // Untyped columns are text: str() of the stored value.
    assert_eq!(v["misc"], "5");
    assert_eq!(v["active"], false);

    missing(r.retrieve("items", "999"));
    // The engine reads an integer key with its IntegerField: other text is a 400.
    bad(r.retrieve("items", "abc"));
    bad(r.retrieve("items", "1.5"));
    bad(r.retrieve("items", ""));
    // Text keys are any text.
    assert_eq!(
        parse(&r.retrieve("codes", "a/b").unwrap())["label"],
        "slash"
    );
    assert_eq!(
        parse(&r.retrieve("codes", "x y").unwrap())["label"],
        "space"
    );
    missing(r.retrieve("codes", "a"));
    // A promoted key, and the first column of a composite key.
    let v = parse(&r.retrieve("tags", "green").unwrap());
    assert_eq!(v, json!({"label": "green", "weight": null}));
    let v = parse(&r.retrieve("links", "1").unwrap());
    assert_eq!(v, json!({"a": 1, "b": 2, "rowid": "r"}));
}

#[test]
fn json_escaping_of_text() {
    let r = Resource::in_memory(
        "CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT); \
         INSERT INTO t VALUES (1, 'quote \" backslash \\ tab \t nl ' || char(10) || ' ctl ' || char(1) || ' é 日本 😀');",
    )
    .unwrap();
    let raw = r.retrieve("t", "1").unwrap();
    let v = parse(&raw);
    assert_eq!(
        v["s"],
        "quote \" backslash \\ tab \t nl \n ctl \u{1} é 日本 😀"
    );
}

#[test]
fn create_returns_the_stored_record() {
    // The strict writes store a date-time as given (with its offset), which the data engine
    // could not read back: read as the tools resource reads its own records.
    let r = res().showing_stored_values();
    let v = parse(
        &r.create(
            "items",
            &json!({
                "name": "Date", "code": "E5", "qty": 3, "price": 2, "active": true,
                "day": "2025-04-01", "at": "2025-04-01T12:00:00+02:00",
                "data": "AAEC", "misc": 1.25, "unknown": "ignored"
            }),
        )
        .unwrap(),
    );
    assert_eq!(
        v,
        json!({
            "id": 7, "name": "Date", "code": "E5", "qty": 3, "price": "2.0", "active": true,
            "day": "2025-04-01", "at": "2025-04-01T12:00:00+02:00",
            "data": "b'\\x00\\x01\\x02'", "misc": "1.25"
        })
    );
    assert_eq!(parse(&r.retrieve("items", "7").unwrap()), v);
    // Defaults and NULLs.
    let v = parse(&r.create("children", &json!({"parent_id": 2})).unwrap());
    assert_eq!(v, json!({"id": 2, "parent_id": 2, "title": "untitled"}));
    let v = parse(
        &r.create("children", &json!({"parent_id": null, "title": "orphan"}))
            .unwrap(),
    );
    assert_eq!(v["parent_id"], Json::Null);
    // Booleans from 0/1, integers from integral floats, explicit auto keys.
    let v = parse(
        &r.create(
            "items",
            &json!({"id": 100, "name": "n", "active": 0, "qty": 4.0}),
        )
        .unwrap(),
    );
    assert_eq!(v["id"], 100);
    assert_eq!(v["active"], false);
    assert_eq!(v["qty"], 4);
    let v = parse(
        &r.create("items", &json!({"id": null, "name": "auto"}))
            .unwrap(),
    );
    assert_eq!(v["id"], 101);
    // A promoted key is required (no database assigns it); unknown keys are ignored.
    bad(r.create("tags", &json!({})));
    let v = parse(
        &r.create("tags", &json!({"rowid": 50, "label": "x"}))
            .unwrap(),
    );
    assert_eq!(v, json!({"label": "x", "weight": null}));
    // Generated columns are read-only.
    let v = parse(&r.create("gen", &json!({"x": 21, "y": 1})).unwrap());
    assert_eq!(v, json!({"id": 1, "x": 21, "y": 42}));
    // Text primary keys.
    let v = parse(
        &r.create("codes", &json!({"code": "new/key", "label": "l"}))
            .unwrap(),
    );
    assert_eq!(v["code"], "new/key");
    assert_eq!(
        parse(&r.retrieve("codes", "new/key").unwrap())["label"],
        "l"
    );
    // Values with quotes and SQL are stored literally.
    let evil = "'); DROP TABLE items; --";
    let v = parse(&r.create("items", &json!({"name": evil})).unwrap());
    assert_eq!(v["name"], evil);
    assert_eq!(ids(&r, &[("name", evil)]).len(), 1);
}

#[test]
fn create_validation_errors() {
    let r = res();
    let e = bad(r.create("items", &json!({"code": "Z"})));
    assert_eq!(field_msgs(&e, "name"), ["This field is required."]);
    let e = bad(r.create("items", &json!({"name": null})));
    assert_eq!(field_msgs(&e, "name"), ["This field may not be null."]);
    let e = bad(r.create("codes", &json!({"label": "no key"})));
    assert_eq!(field_msgs(&e, "code"), ["This field is required."]);
    let e = bad(r.create("codes", &json!({"code": null})));
    assert_eq!(field_msgs(&e, "code"), ["This field may not be null."]);

    // Strict types, all errors at once.
    let e = bad(r.create(
        "items",
        &json!({
            "name": 5, "qty": "5", "price": "1.5", "active": "true", "day": "2025-02-30",
            "at": "noon", "data": "not base64!", "misc": [1], "code": {"a": 1}
        }),
    ));
    let fields = e.body().fields;
    for f in [
        "name", "qty", "price", "active", "day", "at", "data", "misc", "code",
    ] {
        assert!(fields.contains_key(f), "{f}: {fields:?}");
    }
    assert_eq!(fields["qty"], ["A valid integer is required."]);
    assert_eq!(fields["active"], ["Must be a valid boolean."]);
    bad(r.create("items", &json!({"name": "x", "qty": 1.5})));
    bad(r.create("items", &json!({"name": "x", "active": 2})));
    bad(r.create(
        "items",
        &json!({"name": "x", "at": "2025-01-01T10:00:00+0200"}),
    ));

    // Unique violations name the column.
    let e = bad(r.create("items", &json!({"name": "dup", "code": "A1"})));
    assert_eq!(
        field_msgs(&e, "code"),
        ["items with this code already exists."]
    );
    let e = bad(r.create("items", &json!({"id": 1, "name": "dup"})));
    assert!(e.body().fields.contains_key("id"), "{e:?}");
    let e = bad(r.create("codes", &json!({"code": "a/b"})));
    assert!(e.body().fields.contains_key("code"), "{e:?}");

    // Foreign keys.
    let e = bad(r.create("children", &json!({"parent_id": 999})));
    assert_eq!(
        field_msgs(&e, "parent_id"),
        ["Invalid pk \"999\" - object does not exist."]
    );

    // Not an object.
    for body in [json!([]), json!("x"), json!(null), json!(1)] {
        let e = bad(r.create("items", &body));
        assert!(e.body().fields.contains_key("non_field_errors"));
    }
    // Nothing was stored.
    assert_eq!(ids(&r, &[]).len(), 6);
    assert_eq!(list(&r, "children", &[]).unwrap()["count"], 1);
}

#[test]
fn update_returns_the_whole_record() {
    let r = res();
    let v = parse(
        &r.update(
            "items",
            "2",
            &json!({"qty": 6, "active": true, "misc": null, "unknown": 1, "id": 9}),
        )
        .unwrap(),
    );
    assert_eq!(v["id"], 2);
    assert_eq!(v["name"], "banana");
    assert_eq!(v["qty"], 6);
    assert_eq!(v["active"], true);
    assert_eq!(v["misc"], Json::Null);
    assert_eq!(parse(&r.retrieve("items", "2").unwrap()), v);
    missing(r.retrieve("items", "9"));
    // Nothing to change.
    let same = parse(&r.update("items", "2", &json!({})).unwrap());
    assert_eq!(same, v);
    let same = parse(&r.update("items", "2", &json!({"nope": 1})).unwrap());
    assert_eq!(same, v);

    missing(r.update("items", "999", &json!({"qty": 1})));
    missing(r.update("items", "999", &json!({})));
    missing(r.update("items", "x", &json!({"qty": 1})));
    let e = bad(r.update("items", "2", &json!({"name": null})));
    assert_eq!(field_msgs(&e, "name"), ["This field may not be null."]);
    let e = bad(r.update("items", "2", &json!({"qty": "many"})));
    assert_eq!(field_msgs(&e, "qty"), ["A valid integer is required."]);
    let e = bad(r.update("items", "2", &json!({"code": "A1"})));
    assert_eq!(
        field_msgs(&e, "code"),
        ["items with this code already exists."]
    );
    let e = bad(r.update("children", "1", &json!({"parent_id": 7})));
    assert!(e.body().fields.contains_key("parent_id"));
    bad(r.update("items", "2", &json!([1])));
    // Text and promoted keys.
    let v = parse(
        &r.update("codes", "a/b", &json!({"label": "changed"}))
            .unwrap(),
    );
    assert_eq!(v, json!({"code": "a/b", "label": "changed"}));
    let v = parse(&r.update("tags", "green", &json!({"weight": 2})).unwrap());
    assert_eq!(v, json!({"label": "green", "weight": 2}));
    // Generated column follows.
    r.create("gen", &json!({"x": 1})).unwrap();
    let v = parse(&r.update("gen", "1", &json!({"x": 5})).unwrap());
    assert_eq!(v["y"], 10);
}

#[test]
fn delete_records() {
    let r = res();
    r.delete("items", "3").unwrap();
    missing(r.retrieve("items", "3"));
    missing(r.delete("items", "3"));
    missing(r.delete("items", "abc"));
    r.delete("codes", "a/b").unwrap();
    missing(r.retrieve("codes", "a/b"));
    r.delete("tags", "red").unwrap();
    assert_eq!(list(&r, "tags", &[]).unwrap()["count"], 2);
    // A referenced parent cannot go.
    let e = bad(r.delete("parents", "1"));
    assert!(e.body().fields.contains_key("non_field_errors"));
    r.delete("children", "1").unwrap();
    r.delete("parents", "1").unwrap();
}

// ---------------------------------------------------------------------------------------------
// Aggregate and group

fn agg(r: &Resource, body: Json, params: &[(&str, &str)]) -> Result<Json, EngineError> {
    let req = AggregateRequest::from_json(&body)?;
    r.aggregate("items", &req, &sel(params))
}

#[test]
fn aggregates() {
    let r = res();
    assert_eq!(
        agg(&r, json!({"func": "count"}), &[]).unwrap(),
        json!({"y_func": 6})
    );
    assert_eq!(
        agg(&r, json!({"func": "COUNT", "column": "qty"}), &[]).unwrap()["y_func"],
        5
    );
    assert_eq!(
        agg(&r, json!({"func": "sum", "column": "qty"}), &[]).unwrap()["y_func"],
        42
    );
    assert_eq!(
        agg(&r, json!({"func": "Sum", "column": "price"}), &[]).unwrap()["y_func"],
        "9.25"
    );
    assert_eq!(
        agg(&r, json!({"func": "avg", "column": "qty"}), &[]).unwrap()["y_func"],
        8.4
    );
    assert_eq!(
        agg(&r, json!({"func": "min", "column": "price"}), &[]).unwrap()["y_func"],
        "-2.5"
    );
    assert_eq!(
        agg(&r, json!({"func": "max", "column": "day"}), &[]).unwrap()["y_func"],
        "2025-03-10"
    );
    assert_eq!(
        agg(&r, json!({"func": "min", "column": "name"}), &[]).unwrap()["y_func"],
        ""
    );
    assert_eq!(
        agg(&r, json!({"func": "max", "column": "active"}), &[]).unwrap()["y_func"],
        true
    );
    assert_eq!(
        agg(&r, json!({"func": "sum", "column": "active"}), &[]).unwrap()["y_func"],
        true
    );
    assert_eq!(
        agg(&r, json!({"func": "max", "column": null}), &[]).unwrap()["y_func"],
        6
    );
    // Filters apply.
    assert_eq!(
        agg(
            &r,
            json!({"func": "sum", "column": "qty"}),
            &[("qty__gt", "5"), ("exclude__id", "6")]
        )
        .unwrap()["y_func"],
        30
    );
    assert_eq!(
        agg(
            &r,
            json!({"func": "count"}),
            &[("_search", "an"), ("page", "9")]
        )
        .unwrap()["y_func"],
        1
    );
    // Over no rows.
    let none = [("qty__gt", "1000")];
    assert_eq!(
        agg(&r, json!({"func": "count"}), &none).unwrap()["y_func"],
        0
    );
    assert_eq!(
        agg(&r, json!({"func": "sum", "column": "qty"}), &none).unwrap()["y_func"],
        0
    );
    assert_eq!(
        agg(&r, json!({"func": "avg", "column": "price"}), &none).unwrap()["y_func"],
        "0"
    );
    assert_eq!(
        agg(&r, json!({"func": "min", "column": "qty"}), &none).unwrap()["y_func"],
        Json::Null
    );
    assert_eq!(
        agg(&r, json!({"func": "max", "column": "day"}), &none).unwrap()["y_func"],
        Json::Null
    );
    // Errors.
    let e = bad(agg(&r, json!({"func": "median"}), &[]));
    assert!(e.body().fields.contains_key("func"));
    let e = bad(agg(&r, json!({}), &[]));
    assert_eq!(field_msgs(&e, "func"), ["This field is required."]);
    bad(agg(&r, json!({"func": 3}), &[]));
    bad(agg(&r, json!([]), &[]));
    let e = bad(agg(&r, json!({"func": "sum", "column": "nope"}), &[]));
    assert!(e.to_string().contains("\"nope\""));
    // The engine sums text and dates as SQLite does (the REAL, DATE and TEXT serializers write
    // text).
    assert_eq!(
        agg(&r, json!({"func": "sum", "column": "name"}), &[]).unwrap()["y_func"],
        "0.0"
    );
    assert_eq!(
        agg(&r, json!({"func": "avg", "column": "day"}), &[]).unwrap()["y_func"],
        "2024.8"
    );
    bad(agg(&r, json!({"func": "count"}), &[("qty", "x")]));
    let req = AggregateRequest::from_json(&json!({"func": "count"})).unwrap();
    missing(r.aggregate("nope", &req, &Selection::default()));
}

#[test]
fn aggregate_and_group_query_forms() {
    let r = res();
    let params = q(&[("_y_func", "sum"), ("_y_column", "qty"), ("active", "true")]);
    let req = AggregateRequest::from_query(&params).unwrap();
    assert_eq!(req, AggregateRequest::new(AggregateFunc::Sum).column("qty"));
    assert_eq!(
        r.aggregate("items", &req, &selection(&params, false))
            .unwrap(),
        json!({"y_func": 37})
    );
    // An empty `_y_column` names no column; an unknown `_y_func` is the engine's business.
    let req = AggregateRequest::from_query(&q(&[("_y_func", "count"), ("_y_column", "")])).unwrap();
    assert_eq!(req.column.as_deref(), Some(""));
    bad(AggregateRequest::from_query(&q(&[("_y_column", "qty")])));
    assert_eq!(
        AggregateRequest::from_query(&q(&[("_y_func", "Nope")]))
            .unwrap()
            .func,
        "nope"
    );

    let params = q(&[
        ("_x_column", "active"),
        ("_y_func", "count"),
        ("qty__gte", "5"),
    ]);
    let req = GroupRequest::from_query(&params).unwrap();
    assert!(req.x_lookups.is_empty());
    assert_eq!(
        r.group("items", &req, &selection(&params, false)).unwrap(),
        json!([{"group": false, "y_func": 1}, {"group": true, "y_func": 3}])
    );
    let req = GroupRequest::from_query(&q(&[
        ("_x_column", "day"),
        ("_x_lookup", "date_month"),
        ("_y_func", "sum"),
        ("_y_column", "qty"),
    ]))
    .unwrap();
    assert_eq!(req.x_lookups, ["date_month"]);
    assert_eq!(req.y_column.as_deref(), Some("qty"));
    // No `_x_column` is one row; an unknown lookup groups by the column itself (the engine's
    // rules); `_y_func` is required.
    let req = GroupRequest::from_query(&q(&[("_y_func", "count")])).unwrap();
    assert!(req.x_columns.is_empty());
    let req = GroupRequest::from_query(&q(&[
        ("_x_column", "a"),
        ("_y_func", "count"),
        ("_x_lookup", "date_decade"),
    ]))
    .unwrap();
    assert_eq!(req.x_lookups, ["date_decade"]);
    bad(GroupRequest::from_query(&q(&[("_x_column", "a")])));
    bad(GroupRequest::from_json(&json!({"x_column": "a"})));
    bad(GroupRequest::from_json(&json!({"y_func": "count"})));
    bad(GroupRequest::from_json(
        &json!({"x_column": 1, "y_func": "count"}),
    ));
}

fn grp(r: &Resource, body: Json, params: &[(&str, &str)]) -> Result<Json, EngineError> {
    let req = GroupRequest::from_json(&body)?;
    r.group("items", &req, &sel(params))
}

#[test]
fn groups() {
    let r = res();
    assert_eq!(
        grp(&r, json!({"x_column": "active", "y_func": "count"}), &[]).unwrap(),
        json!([
            {"group": null, "y_func": 1},
            {"group": false, "y_func": 2},
            {"group": true, "y_func": 3}
        ])
    );
    assert_eq!(
        grp(
            &r,
            json!({"x_column": "active", "x_lookup": "plain", "y_func": "sum", "y_column": "qty"}),
            &[]
        )
        .unwrap(),
        json!([
            {"group": null, "y_func": 0},
            {"group": false, "y_func": 5},
            {"group": true, "y_func": 37}
        ])
    );
    assert_eq!(
        grp(
            &r,
            json!({"x_column": "day", "x_lookup": "date_month", "y_func": "count"}),
            &[]
        )
        .unwrap(),
        json!([
            {"group": null, "y_func": 1},
            {"group": "2024-12-01", "y_func": 1},
            {"group": "2025-01-01", "y_func": 2},
            {"group": "2025-02-01", "y_func": 1},
            {"group": "2025-03-01", "y_func": 1}
        ])
    );
    assert_eq!(
        grp(
            &r,
            json!({"x_column": "day", "x_lookup": "date_year", "y_func": "max", "y_column": "qty"}),
            &[("day__isnull", "false")]
        )
        .unwrap(),
        json!([{"group": "2024-01-01", "y_func": 0}, {"group": "2025-01-01", "y_func": 20}])
    );
    // On SQLite the engine has no week or quarter: the date itself.
    let days = json!([
        {"group": "2024-12-31", "y_func": 1},
        {"group": "2025-01-01", "y_func": 1},
        {"group": "2025-01-15", "y_func": 1},
        {"group": "2025-02-01", "y_func": 1},
        {"group": "2025-03-10", "y_func": 1}
    ]);
    for lookup in ["date_week", "date_quarter"] {
        assert_eq!(
            grp(
                &r,
                json!({"x_column": "day", "x_lookup": lookup, "y_func": "count"}),
                &[("day__isnull", "false")]
            )
            .unwrap(),
            days
        );
    }
    // Date-times: offsets are converted to UTC.
    assert_eq!(
        grp(
            &r,
            json!({"x_column": "at", "x_lookup": "date_day", "y_func": "count"}),
            &[("at__isnull", "false")]
        )
        .unwrap(),
        json!([
            {"group": "2025-01-01", "y_func": 2},
            {"group": "2025-01-15", "y_func": 1},
            {"group": "2025-02-01", "y_func": 1},
            {"group": "2025-03-10", "y_func": 1}
        ])
    );
    let hours = grp(
        &r,
        json!({"x_column": "at", "x_lookup": "date_hour", "y_func": "count"}),
        &[("at__isnull", "false")],
    )
    .unwrap();
    assert_eq!(
        hours[0],
        json!({"group": "2025-01-01 01:00:00", "y_func": 1})
    );
    let minutes = grp(
        &r,
        json!({"x_column": "at", "x_lookup": "date_minute", "y_func": "count"}),
        &[("id", "6")],
    )
    .unwrap();
    // The engine's format has MySQL's `%i`, which SQLite answers with NULL.
    assert_eq!(minutes, json!([{"group": null, "y_func": 1}]));
    let seconds = grp(
        &r,
        json!({"x_column": "at", "x_lookup": "date_second", "y_func": "count"}),
        &[("id", "2")],
    )
    .unwrap();
    assert_eq!(seconds, json!([{"group": null, "y_func": 1}]));
    // auto: day on dates, plain otherwise.
    assert_eq!(
        grp(
            &r,
            json!({"x_column": "day", "x_lookup": "auto", "y_func": "count"}),
            &[("id", "1")]
        )
        .unwrap(),
        json!([{"group": "2025-01-01", "y_func": 1}])
    );
    assert_eq!(
        grp(
            &r,
            json!({"x_column": "qty", "x_lookup": "auto", "y_func": "count"}),
            &[("id__in", "1,2")]
        )
        .unwrap(),
        json!([{"group": 5, "y_func": 1}, {"group": 10, "y_func": 1}])
    );
    // Empty.
    assert_eq!(
        grp(
            &r,
            json!({"x_column": "qty", "y_func": "count"}),
            &[("qty__gt", "99")]
        )
        .unwrap(),
        json!([])
    );
    // Errors.
    let e = bad(grp(
        &r,
        json!({"x_column": "name", "x_lookup": "date_day", "y_func": "count"}),
        &[],
    ));
    assert_eq!(
        field_msgs(&e, "non_field_errors"),
        ["Can't apply date functions to non-date field: name"]
    );
    bad(grp(&r, json!({"x_column": "nope", "y_func": "count"}), &[]));
    bad(grp(
        &r,
        json!({"x_column": "qty", "y_func": "count", "y_column": "nope"}),
        &[],
    ));
    // SQLite averages text as 0.0.
    assert_eq!(
        grp(
            &r,
            json!({"x_column": "qty", "y_func": "avg", "y_column": "name"}),
            &[("qty__gte", "10")]
        )
        .unwrap(),
        json!([{"group": 10, "y_func": 0.0}, {"group": 20, "y_func": 0.0}])
    );
    bad(grp(&r, json!({"x_column": "qty", "y_func": "mode"}), &[]));
    bad(grp(
        &r,
        json!({"x_column": "qty", "x_lookup": "date", "y_func": "count"}),
        &[],
    ));
}

// ---------------------------------------------------------------------------------------------
// Files, reload, registry, demo

#[test]
fn open_existing_database_file_and_reload() {
    let path = temp_path("existing.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL, done BOOLEAN DEFAULT 0);
             INSERT INTO notes (body) VALUES ('one'), ('two');",
        )
        .unwrap();
    }
    let r = Resource::open(&path).unwrap();
    assert_eq!(r.path(), Some(path.as_path()));
    assert_eq!(r.model_names(), ["notes"]);
    let v = list(&r, "notes", &[]).unwrap();
    assert_eq!(v["count"], 2);
    assert_eq!(
        v["results"][0],
        json!({"id": 2, "body": "two", "done": false})
    );
    // Writes are visible to the next read (reader connections).
    r.create("notes", &json!({"body": "three"})).unwrap();
    assert_eq!(list(&r, "notes", &[]).unwrap()["count"], 3);
    r.update("notes", "1", &json!({"done": true})).unwrap();
    assert_eq!(ids_of(&r, "notes", &[("done", "true")]), [1]);

    // Another connection adds a table and a column: models change only after reload.
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(
            "CREATE TABLE later (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO later (v) VALUES ('x');
             ALTER TABLE notes ADD COLUMN tag TEXT;",
        )
        .unwrap();
    }
    missing(list_json(&r, "later", &[]));
    bad(list_json(&r, "notes", &q(&[("tag", "x")])));
    r.reload().unwrap();
    assert_eq!(r.model_names(), ["later", "notes"]);
    assert_eq!(list(&r, "later", &[]).unwrap()["results"][0]["v"], "x");
    assert_eq!(
        list(&r, "notes", &[("tag__isnull", "true")]).unwrap()["count"],
        3
    );

    // Missing files and files that are not databases.
    assert_eq!(
        Resource::open(temp_path("missing.db"))
            .unwrap_err()
            .status(),
        500
    );
    let junk = temp_path("junk.db");
    std::fs::write(&junk, b"this is not a database, not at all, no header here").unwrap();
    assert!(Resource::open(&junk).is_err());
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

fn ids_of(r: &Resource, model: &str, pairs: &[(&str, &str)]) -> Vec<i64> {
    let mut all = vec![("_no_pagination", "1")];
    all.extend_from_slice(pairs);
    let mut v: Vec<i64> = list(r, model, &all)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["id"].as_i64().unwrap())
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn read_only_connections_refuse_writes() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Resource>();

    let r = res();
    let e = r.with_read_only(|c| c.execute("DELETE FROM items", []));
    assert!(e.is_err());
    let n: i64 = r.with_read_only(|c| {
        c.query_row("SELECT count(*) FROM items", [], |x| x.get(0))
            .unwrap()
    });
    assert_eq!(n, 6);
    // The writer works again afterwards.
    r.delete("items", "1").unwrap();

    let path = temp_path("ro.db");
    let r = Resource::seeded(Some(&path), "CREATE TABLE t (id INTEGER PRIMARY KEY);").unwrap();
    assert!(
        r.with_read_only(|c| c.execute("INSERT INTO t DEFAULT VALUES", []))
            .is_err()
    );
    r.create("t", &json!({})).unwrap();
    drop(r);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn a_column_named_page_is_not_a_filter() {
    let r = Resource::in_memory(
        "CREATE TABLE book (id INTEGER PRIMARY KEY, page INTEGER, _private TEXT, draft BOOLEAN);
         INSERT INTO book VALUES (1, 1, 'a', 0), (2, 2, 'b', 1);",
    )
    .unwrap();
    let v = list(
        &r,
        "book",
        &[("page", "1"), ("_private", "b"), ("draft", "true")],
    )
    .unwrap();
    assert_eq!(v["count"], 1);
    assert_eq!(v["results"][0]["id"], 2);
    assert_eq!(list(&r, "book", &[("page__gt", "1")]).unwrap()["count"], 1);
}

#[test]
fn reload_in_memory_through_writer() {
    let r = res();
    r.with_writer(|c| c.execute_batch("CREATE TABLE fresh (id INTEGER PRIMARY KEY);"))
        .unwrap();
    missing(list_json(&r, "fresh", &[]));
    r.reload().unwrap();
    assert_eq!(list(&r, "fresh", &[]).unwrap()["count"], 0);
}

#[test]
fn seeded_file_keeps_its_data() {
    let path = temp_path("seeded.db");
    let seed = "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); INSERT INTO t (v) VALUES ('a');";
    {
        let r = Resource::seeded(Some(&path), seed).unwrap();
        r.create("t", &json!({"v": "b"})).unwrap();
    }
    let r = Resource::seeded(Some(&path), seed).unwrap();
    assert_eq!(list(&r, "t", &[]).unwrap()["count"], 2);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn concurrent_reads_and_writes_on_a_file() {
    let path = temp_path("concurrent.db");
    let r = Arc::new(
        Resource::seeded(
            Some(&path),
            "CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);",
        )
        .unwrap(),
    );
    let mut handles = Vec::new();
    for w in 0..4 {
        let r = r.clone();
        handles.push(std::thread::spawn(move || {
            for i in 0..50 {
                if w % 2 == 0 {
                    r.create("t", &json!({"n": i})).unwrap();
                } else {
                    let v = parse(&list_json(&r, "t", &q(&[("n__gte", "0")])).unwrap());
                    assert!(v["count"].as_u64().unwrap() <= 100);
                    r.aggregate(
                        "t",
                        &AggregateRequest::new(AggregateFunc::Count),
                        &Selection::default(),
                    )
                    .unwrap();
                }
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(list(&r, "t", &[]).unwrap()["count"], 100);
    drop(r);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[test]
fn demo_seed_is_fast_deterministic_and_consistent() {
    let start = Instant::now();
    let r = demo_resource().unwrap();
    let elapsed = start.elapsed();
    assert!(elapsed.as_millis() < 1000, "seeding took {elapsed:?}");
    // The demo's tables and their rows (`demo/shop.sql`).
    for (model, rows) in [("products", 50), ("customers", 1000), ("orders", 12000)] {
        assert_eq!(
            list(&r, model, &[]).unwrap()["count"],
            rows as u64,
            "{model}"
        );
    }
    let problems: i64 = r.with_reader(|c| {
        c.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |row| {
            row.get(0)
        })
        .unwrap()
    });
    assert_eq!(problems, 0);
    let again = demo_resource().unwrap();
    assert_eq!(
        r.retrieve("orders", "777").unwrap(),
        again.retrieve("orders", "777").unwrap()
    );

    let count = |model: &str, pairs: &[(&str, &str)]| {
        list(&r, model, pairs).unwrap()["count"].as_u64().unwrap()
    };
    assert!(count("customers", &[("city__isnull", "true")]) > 0);
    assert!(count("customers", &[("notes__isempty", "true")]) > 0);
    assert!(count("customers", &[("name__icontains", "ø")]) > 0);
    assert!(count("customers", &[("name__icontains", "O'Brien")]) > 0);
    assert!(count("orders", &[("note__isnull", "true")]) > 0);
    assert!(count("orders", &[("product_id__isnull", "true")]) > 0);
    assert!(count("orders", &[("ordered_on__lt", "2025-01-01")]) > 4000);
    assert!(count("orders", &[("ordered_on__gte", "2025-01-01")]) > 4000);
    assert!(count("orders", &[("shipped_at__isnull", "false")]) > 0);
    assert_eq!(count("orders", &[("customer_id__gt", "1000")]), 0);
    let statuses = r
        .group(
            "orders",
            &GroupRequest::from_json(&json!({"x_column": "status", "y_func": "count"})).unwrap(),
            &Selection::default(),
        )
        .unwrap();
    assert_eq!(statuses.as_array().unwrap().len(), 6);
    let years = r
        .group(
            "orders",
            &GroupRequest::from_json(
                &json!({"x_column": "ordered_on", "x_lookup": "date_year", "y_func": "count"}),
            )
            .unwrap(),
            &Selection::default(),
        )
        .unwrap();
    let total: u64 = years
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["y_func"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 12000);
    assert!(crate::DEMO_SEED_SQL.contains("CREATE TABLE orders"));
    // A record of every table parses with the expected types.
    let c = parse(&r.retrieve("customers", "14").unwrap());
    assert_eq!(c["vip"], true);
    assert!(c["created_at"].as_str().unwrap().contains('T'));
    let o = parse(&r.retrieve("orders", "1").unwrap());
    // REAL columns come as text, as the data engine sends them.
    assert!(o["total"].as_str().unwrap().parse::<f64>().is_ok());
}

// ---------------------------------------------------------------------------------------------
// Helpers

#[test]
fn date_and_datetime_validation() {
    assert!(is_date("2024-02-29"));
    assert!(!is_date("2023-02-29"));
    assert!(!is_date("2025-04-31"));
    assert!(!is_date("2025-00-10"));
    assert!(!is_date("25-01-01"));
    assert!(!is_date("2025-01-01 "));
    for ok in [
        "2025-01-01T10:00",
        "2025-01-01 10:00:59",
        "2025-01-01T10:00:00.123456",
        "2025-01-01T10:00:00Z",
        "2025-01-01T10:00:00+05:30",
        "2025-01-01t10:00-01:00",
    ] {
        assert!(is_datetime(ok, false), "{ok}");
    }
    for no in [
        "2025-01-01",
        "2025-01-01T",
        "2025-01-01T24:00",
        "2025-01-01T10:60",
        "2025-01-01T10:00:61",
        "2025-01-01T10:00:00.",
        "2025-01-01T10:00:00+0530",
        "2025-01-01T10:00:00 UTC",
        "2025-01-01é",
    ] {
        assert!(!is_datetime(no, false), "{no}");
    }
    assert!(is_datetime("2025-01-01", true));
}

#[test]
fn base64_round_trip() {
    for data in [
        &b""[..],
        b"\x00",
        b"\x01\x02",
        b"abc",
        b"\xff\xfe\xfd\xfc",
        b"hello world!!",
    ] {
        let mut enc = Vec::new();
        svc_engine::base64::base64_encode_into(&mut enc, data);
        let enc = String::from_utf8(enc).unwrap();
        assert_eq!(base64_decode(&enc).unwrap(), data, "{enc}");
        assert_eq!(base64_decode(enc.trim_end_matches('=')).unwrap(), data);
    }
    assert!(base64_decode("A").is_none());
    assert!(base64_decode("@@@@").is_none());
}

#[test]
fn an_integer_sum_that_overflows_is_refused_naming_the_column() {
    let r = Resource::in_memory(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, n INTEGER, k TEXT);
         INSERT INTO items (n, k) VALUES (9223372036854775807, 'a'), (1, 'a'), (2, 'b');",
    )
    .unwrap();
    let overflow = |e: EngineError| {
        assert_eq!(e.status(), 400, "{e:?}");
        let text = format!("{e:?}");
        assert!(
            text.contains("_y_column") && text.contains("integer overflow"),
            "{text}"
        );
    };
    let req = AggregateRequest::from_query(&q(&[("_y_func", "sum"), ("_y_column", "n")])).unwrap();
    overflow(r.aggregate("items", &req, &sel(&[])).unwrap_err());
    let req = GroupRequest::from_json(&json!({"x_column": "k", "y_func": "sum", "y_column": "n"}))
        .unwrap();
    overflow(r.group("items", &req, &sel(&[])).unwrap_err());
    // Without the row that overflows, the same sums are answered.
    assert_eq!(
        r.group("items", &req, &sel(&[("n__lt", "100")])).unwrap(),
        json!([{"group": "a", "y_func": 1}, {"group": "b", "y_func": 2}])
    );
}

/// The driver runs one statement per call (`Driver::execute_one`): a text that holds a second one
/// is refused before any of it runs, where `execute_batch` would run both.
#[test]
fn a_statement_run_is_one_statement_only() {
    use crate::records::Sqlite;
    use svc_emulator_core::flow::driver::Driver;
    use svc_emulator_core::flow::references::run_now;
    let r = res();
    let run = |sql: &str| {
        r.with_writer(|c| {
            let mut conn = c;
            let done = Sqlite::execute_one(&mut conn, sql);
            run_now(async { done.await.map_err(|e| EngineError::Internal(e.to_string())) })
        })
    };
    let refused = run("UPDATE seqs SET v = 'x'; DROP TABLE codes").unwrap_err();
    assert!(
        refused.to_string().contains("Multiple statements"),
        "{refused}"
    );
    run("INSERT INTO seqs (v) VALUES ('one')").unwrap();
    // A statement that answers a row is run through, its row dropped.
    run("PRAGMA foreign_keys").unwrap();
    assert_eq!(list(&r, "codes", &[]).unwrap()["count"], 2);
    assert_eq!(list(&r, "seqs", &[]).unwrap()["count"], 1);
}
