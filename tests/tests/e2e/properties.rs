//! Property tests through the emulator: any string as a record's primary key, as a filter value
//! or as a page uid goes out and comes back unchanged. The strings come from a small
//! deterministic generator (xorshift over a pool of characters and pieces that break naive
//! encoders: URL delimiters, percent signs, quotes, control characters and NUL, dot segments,
//! emoji, right-to-left text, combining marks, very long text), so a failure names a seed that
//! reproduces it.
//!
//! Empty, `.` and `..` cannot be one path segment: the client refuses them as a primary key or a
//! page uid before sending anything (they stay fine as filter values). A page uid longer than
//! 1024 bytes is the emulator's `400` at create.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use svc_api::model::PageSettings;
use svc_api::model::records::{ListQuery, Lookup, QueryError};
use svc_api::{Client, Error, Sent};
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};

/// How many generated strings each property checks, on top of the fixed edge cases.
const GENERATED: usize = 400;

/// The longest page uid the emulator stores, in bytes of UTF-8.
const MAX_PAGE_UID_BYTES: usize = 1024;

/// Pieces the generator strings together.
const POOL: &[&str] = &[
    "/",
    "?",
    "#",
    "%",
    "+",
    "&",
    "=",
    " ",
    "\"",
    "'",
    "\\",
    ";",
    ",",
    ":",
    "@",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "|",
    "^",
    "`",
    "*",
    "$",
    "!",
    "(",
    ")",
    "~",
    "-",
    "_",
    ".",
    "..",
    "./",
    "../",
    "%2F",
    "%2f",
    "%25",
    "%00",
    "%2E%2E",
    "%E2%82%AC",
    "%zz",
    "+%20",
    "\0",
    "\t",
    "\n",
    "\r",
    "\u{1}",
    "\u{1b}",
    "\u{7f}",
    "\u{85}",
    "\u{a0}",
    "\u{200b}",
    "\u{feff}",
    "\u{2028}",
    "\u{202e}",
    "\u{fffd}",
    "\u{10ffff}",
    "é",
    "e\u{301}",
    "\u{301}",
    "ß",
    "İ",
    "日本語",
    "한국어",
    "עברית",
    "العربية",
    "😀",
    "👩\u{200d}👩\u{200d}👧",
    "🏳\u{fe0f}\u{200d}🌈",
    "a",
    "Z",
    "0",
    "42",
    "-1",
    "1e9",
    "NaN",
    "null",
    "true",
    "NULL",
    "page",
    "_search",
    "exclude__",
    "__",
    "__in",
    "' OR 1=1 --",
    "<script>",
    "\\u0000",
];

/// A deterministic xorshift64* generator.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A string of 1 to 12 pieces, now and then a long one.
    fn string(&mut self) -> String {
        let mut s = String::new();
        if self.below(40) == 0 {
            // Long: up to 1500 pieces (several KiB; its encoding stays within a URL's limit).
            for _ in 0..500 + self.below(1000) {
                s.push_str(POOL[self.below(POOL.len())]);
            }
            return s;
        }
        for _ in 0..1 + self.below(12) {
            s.push_str(POOL[self.below(POOL.len())]);
        }
        s
    }
}

/// The fixed edge cases, then `GENERATED` strings from `seed`, without repeats.
fn strings(seed: u64) -> Vec<String> {
    let fixed = [
        " ",
        "  ",
        "...",
        ". ",
        " .",
        "./",
        "../",
        "/",
        "//",
        "?",
        "#",
        "%",
        "%2e",
        "%2e%2e",
        "%2E%2E",
        "a/../b",
        "+",
        "a+b",
        "a b",
        "\0",
        "\0\0",
        "x\0y",
        "é",
        "\u{202e}abc",
        "😀",
        "\\",
        "\"",
        "'",
        "&",
        "=",
        "a=b&c=d",
        "?page=2",
        "#frag",
        "-",
        "_",
        "~",
    ];
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for s in fixed.iter().map(|s| (*s).to_owned()) {
        if seen.insert(s.clone()) {
            out.push(s);
        }
    }
    let mut g = Gen(seed);
    while out.len() < fixed.len() + GENERATED {
        let s = g.string();
        // `aggregate` and `group` are routes of the records path (`.../{model}/aggregate`),
        // not primary keys: the API's paths cannot tell them apart.
        if matches!(s.as_str(), "" | "." | ".." | "aggregate" | "group") {
            continue;
        }
        if seen.insert(s.clone()) {
            out.push(s);
        }
    }
    // The generator reaches what it is for.
    for probe in [
        "/", "?", "#", "%", "+", "\0", "..", "😀", "\u{202e}", "\u{301}",
    ] {
        assert!(
            out.iter().any(|s| s.contains(probe)),
            "no {probe:?} for seed {seed:#x}"
        );
    }
    assert!(
        out.iter().any(|s| s.len() > 2000),
        "no long string for seed {seed:#x}"
    );
    out
}

async fn emulator() -> Emulator {
    let config = ProjectsConfig::new(vec![
        ProjectConfig::new("props").api_key("key_props").resource(
            ResourceConfig::new("store", "tok_store").seed_sql(
                "CREATE TABLE things (key TEXT PRIMARY KEY, label TEXT, n INTEGER); \
                 CREATE TABLE awkward (id INTEGER PRIMARY KEY, exclude TEXT, exclude_ TEXT, \
                 gt TEXT, page TEXT);",
            ),
        ),
    ]);
    Emulator::start(EmulatorConfig::default().projects(config))
        .await
        .unwrap()
}

fn client(emulator: &Emulator) -> Client {
    Client::builder()
        .project("props")
        .api_base_url(emulator.api_base_url())
        .app_base_url(emulator.app_base_url())
        .api_key("key_props")
        .resource_token("store", "tok_store")
        .build()
        .unwrap()
}

fn refused_before_sending(err: &Error) -> bool {
    matches!(err, Error::InvalidInput(_)) && err.sent() == Sent::No
}

#[tokio::test]
async fn any_string_is_a_primary_key_and_a_filter_value() {
    let emulator = emulator().await;
    let c = client(&emulator);
    let things = c.records("store", "things");
    let seed = 0x5eed_0001;
    let keys = strings(seed);
    for (i, key) in keys.iter().enumerate() {
        let why = format!("seed {seed:#x}, string {i}: {key:?}");
        let created = things
            .create(&json!({"key": key, "label": key, "n": i}))
            .await
            .unwrap_or_else(|e| panic!("{why}: create: {e}"));
        assert_eq!(created["key"], json!(key), "{why}");
        let got = things
            .retrieve(key.as_str())
            .await
            .unwrap_or_else(|e| panic!("{why}: retrieve: {e}"));
        assert_eq!(got["key"], json!(key), "{why}");
        assert_eq!(got["label"], json!(key), "{why}");
        let patched = things
            .update(key.as_str(), &json!({"n": -1}))
            .await
            .unwrap_or_else(|e| panic!("{why}: update: {e}"));
        assert_eq!(patched["key"], json!(key), "{why}");
        assert_eq!(patched["n"], json!(-1), "{why}");
    }
    // Labels that cannot be keys are fine as values.
    for (i, label) in ["", ".", ".."].into_iter().enumerate() {
        things
            .create(&json!({"key": format!("special-{i}"), "label": label}))
            .await
            .unwrap();
    }
    let count = things
        .list(&ListQuery::new().per_page(1))
        .await
        .unwrap()
        .count;
    assert_eq!(count, keys.len() as u64 + 3);

    // Every label as an exact filter value matches exactly its one record, in a list and in an
    // unpaginated list; as a search and a filter of another lookup it goes out unchanged too.
    for (i, label) in keys.iter().enumerate() {
        let why = format!("seed {seed:#x}, string {i}: {label:?}");
        let page = things
            .list(&ListQuery::new().eq("label", label.as_str()))
            .await
            .unwrap_or_else(|e| panic!("{why}: list: {e}"));
        assert_eq!(page.count, 1, "{why}");
        assert_eq!(page.results[0]["key"], json!(label), "{why}");
        let excluded = things
            .list(&ListQuery::new().exclude("label", Lookup::Exact, label.as_str()))
            .await
            .unwrap_or_else(|e| panic!("{why}: exclude: {e}"));
        assert_eq!(excluded.count, count - 1, "{why}");
        if i % 8 == 0 {
            let all = things
                .all(&ListQuery::new().eq("key", label.as_str()))
                .await
                .unwrap_or_else(|e| panic!("{why}: all: {e}"));
            assert_eq!(all.len(), 1, "{why}");
            assert_eq!(all[0]["label"], json!(label), "{why}");
        }
    }
    for (i, label) in ["", ".", ".."].into_iter().enumerate() {
        let page = things
            .list(&ListQuery::new().eq("label", label))
            .await
            .unwrap();
        if label.is_empty() {
            // As in the data engine, an empty value is no filter at all.
            assert_eq!(page.count, count, "{label:?}");
            continue;
        }
        assert_eq!(page.count, 1, "{label:?}");
        assert_eq!(page.results[0]["key"], json!(format!("special-{i}")));
    }

    // Deletes by any key too, and then it is gone.
    for key in keys.iter().step_by(7) {
        things.delete(key.as_str()).await.unwrap();
        let err = things.retrieve(key.as_str()).await.unwrap_err();
        assert!(err.is_not_found(), "{key:?}: {err}");
    }

    // Empty, `.` and `..` cannot be a path segment: refused before sending.
    for bad in ["", ".", ".."] {
        for err in [
            things.retrieve(bad).await.unwrap_err(),
            things.update(bad, &json!({"n": 1})).await.unwrap_err(),
            things.delete(bad).await.unwrap_err(),
        ] {
            assert!(refused_before_sending(&err), "{bad:?}: {err:?}");
        }
    }
}

#[tokio::test]
async fn any_string_up_to_1024_bytes_is_a_page_uid() {
    let emulator = emulator().await;
    let c = client(&emulator);
    let seed = 0x5eed_0002;
    let (uids, too_long): (Vec<String>, Vec<String>) = strings(seed)
        .into_iter()
        .partition(|uid| uid.len() <= MAX_PAGE_UID_BYTES);
    // A uid longer than the emulator's cap is refused at create, naming the field, and nothing
    // is stored (its path would be too long to read or delete it again).
    assert!(
        !too_long.is_empty(),
        "no uid over the cap for seed {seed:#x}"
    );
    for uid in &too_long {
        let page = PageSettings::new().with("uid", uid.as_str());
        let err = c.pages().create(&page).await.unwrap_err();
        let api = err.api().unwrap_or_else(|| panic!("{uid:?}: {err}"));
        assert_eq!(api.status, 400, "{uid:?}");
        assert!(api.body.field_errors().contains_key("uid"), "{err}");
    }
    for (i, uid) in uids.iter().enumerate() {
        let why = format!("seed {seed:#x}, string {i}: {uid:?}");
        let page = PageSettings::new()
            .with("uid", uid.as_str())
            .with("name", uid.as_str())
            .with("params", "{}");
        let created = c
            .pages()
            .create(&page)
            .await
            .unwrap_or_else(|e| panic!("{why}: create: {e}"));
        assert_eq!(created.uid(), Some(uid.as_str()), "{why}");
        let got = c
            .pages()
            .get(uid)
            .await
            .unwrap_or_else(|e| panic!("{why}: get: {e}"));
        assert_eq!(got.uid(), Some(uid.as_str()), "{why}");
        assert_eq!(got.name(), Some(uid.as_str()), "{why}");
    }
    let listed: BTreeSet<String> = c
        .pages()
        .list()
        .await
        .unwrap()
        .iter()
        .filter_map(|p| p.uid().map(str::to_owned))
        .collect();
    assert_eq!(listed, uids.iter().cloned().collect::<BTreeSet<_>>());
    for uid in uids.iter().step_by(5) {
        c.pages().delete(uid).await.unwrap();
        assert!(
            c.pages().get(uid).await.unwrap_err().is_not_found(),
            "{uid:?}"
        );
    }

    for bad in ["", ".", ".."] {
        for err in [
            c.pages().get(bad).await.unwrap_err(),
            c.pages().delete(bad).await.unwrap_err(),
        ] {
            assert!(refused_before_sending(&err), "{bad:?}: {err:?}");
        }
    }
}

/// Field names that look like the query syntax (`exclude`, `exclude_`, `gt`, `page`) filter
/// the right field (found by the `list_query` fuzz target: `exclude` was sent as
/// `exclude__exact`, which the service reads as an exclusion on a field `exact`).
#[tokio::test]
async fn awkward_field_names_filter_the_right_field() {
    let emulator = emulator().await;
    let c = client(&emulator);
    let awkward = c.records("store", "awkward").typed::<Value>();
    for row in [
        json!({"id": 1, "exclude": "e1", "exclude_": "u1", "gt": "g1", "page": "p1"}),
        json!({"id": 2, "exclude": "e2", "exclude_": "u2", "gt": "g2", "page": "p2"}),
        json!({"id": 3, "exclude": "e3", "exclude_": "u3", "gt": "g3", "page": "p3"}),
    ] {
        awkward.create(&row).await.unwrap();
    }
    let ids = |rows: Vec<Value>| -> Vec<i64> {
        let mut ids: Vec<i64> = rows.iter().map(|r| r["id"].as_i64().unwrap()).collect();
        ids.sort_unstable();
        ids
    };
    for (field, value, want) in [
        ("exclude", "e2", vec![2]),
        ("exclude_", "u3", vec![3]),
        ("gt", "g1", vec![1]),
        ("page", "p2", vec![2]),
    ] {
        let got = awkward
            .all(&ListQuery::new().eq(field, value))
            .await
            .unwrap();
        assert_eq!(ids(got), want, "{field} = {value}");
        let got = awkward
            .all(&ListQuery::new().exclude(field, Lookup::Exact, value))
            .await
            .unwrap();
        assert_eq!(ids(got).len(), 2, "exclude {field} = {value}");
        // Values are a letter and the row's id: `exclude field iendswith id` keeps the others.
        let id: i64 = value[1..].parse().unwrap();
        let got = awkward
            .all(&ListQuery::new().exclude(field, Lookup::IEndsWith, &value[1..]))
            .await
            .unwrap();
        let others: Vec<i64> = (1..=3).filter(|&i| i != id).collect();
        assert_eq!(ids(got), others, "exclude {field} iendswith {id}");
    }
    let got = awkward
        .all(&ListQuery::new().filter("gt", Lookup::IStartsWith, "G"))
        .await
        .unwrap();
    assert_eq!(ids(got), vec![1, 2, 3]);
    // `exclude__gt` would be an exclusion on `gt`: refused before sending.
    for field in ["exclude", "exclude_"] {
        let err = awkward
            .all(&ListQuery::new().filter(field, Lookup::Gt, "e1"))
            .await
            .unwrap_err();
        assert!(refused_before_sending(&err), "{err:?}");
        assert!(
            ListQuery::new()
                .filter(field, Lookup::Gt, "e1")
                .validate()
                .is_err_and(|e| matches!(e, QueryError::ReadsAsExclude { .. })),
        );
    }
}
