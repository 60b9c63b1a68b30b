//! Records end to end against the emulator's demo resource `shop` (products, customers, orders).
//!
//! Filtering, ordering, paging, aggregate and group are checked against an oracle computed here
//! from the unfiltered seeded rows.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashSet};

use futures_util::TryStreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use svc_api::model::records::{
    AggregateFunc, AggregateRequest, DateUnit, GroupLookup, GroupRequest, GroupRow, ListQuery,
    Lookup,
};
use svc_api::{Client, Error, Record, Sent};
use svc_tests::{client, demo, raw};

#[derive(Debug, Clone, Deserialize, PartialEq)]
struct Customer {
    id: i64,
    name: String,
    email: String,
    city: Option<String>,
    vip: bool,
    score: Option<i64>,
    birth_date: Option<String>,
    created_at: String,
    notes: Option<String>,
}

async fn customers(c: &Client) -> Vec<Customer> {
    c.records("shop", "customers")
        .typed::<Customer>()
        .all(&ListQuery::new())
        .await
        .unwrap()
}

async fn ids(c: &Client, model: &str, query: ListQuery) -> Vec<i64> {
    c.records("shop", model)
        .all(&query)
        .await
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

fn sorted(mut v: Vec<i64>) -> Vec<i64> {
    v.sort_unstable();
    v
}

/// One lookup case: the query filter and the oracle predicate (None when the value is NULL and
/// the predicate does not apply).
type Case = (
    &'static str,
    Lookup,
    &'static str,
    fn(&Customer) -> Option<bool>,
);

fn cases() -> Vec<Case> {
    vec![
        ("city", Lookup::Exact, "Paris", |c| {
            c.city.as_ref().map(|v| v == "Paris")
        }),
        ("score", Lookup::Gt, "50", |c| c.score.map(|v| v > 50)),
        ("score", Lookup::Gte, "50", |c| c.score.map(|v| v >= 50)),
        ("score", Lookup::Lt, "20", |c| c.score.map(|v| v < 20)),
        ("score", Lookup::Lte, "20", |c| c.score.map(|v| v <= 20)),
        ("name", Lookup::IContains, "AN", |c| {
            Some(c.name.to_lowercase().contains("an"))
        }),
        ("email", Lookup::IStartsWith, "CUSTOMER1", |c| {
            Some(c.email.starts_with("customer1"))
        }),
        ("email", Lookup::IEndsWith, "7@EXAMPLE.COM", |c| {
            Some(c.email.ends_with("7@example.com"))
        }),
        ("city", Lookup::In, "Paris,Tokyo,São Paulo", |c| {
            c.city
                .as_ref()
                .map(|v| ["Paris", "Tokyo", "São Paulo"].contains(&v.as_str()))
        }),
        ("city", Lookup::IsNull, "true", |c| Some(c.city.is_none())),
        ("city", Lookup::IsNull, "false", |c| Some(c.city.is_some())),
        ("notes", Lookup::IsEmpty, "true", |c| {
            Some(c.notes.as_deref().is_none_or(str::is_empty))
        }),
        ("notes", Lookup::IsEmpty, "false", |c| {
            Some(!c.notes.as_deref().is_none_or(str::is_empty))
        }),
        ("vip", Lookup::Exact, "true", |c| Some(c.vip)),
        ("birth_date", Lookup::Gte, "1990-01-01", |c| {
            c.birth_date.as_ref().map(|d| d.as_str() >= "1990-01-01")
        }),
        ("created_at", Lookup::Lt, "2025-01-01T00:00:00", |c| {
            Some(c.created_at.as_str() < "2025-01-01T00:00:00")
        }),
    ]
}

#[tokio::test]
async fn every_lookup_and_its_exclusion_match_the_oracle() {
    let emulator = demo().await;
    let c = client(&emulator);
    let all = customers(&c).await;
    assert_eq!(all.len(), 1000);
    for (field, lookup, value, predicate) in cases() {
        let want: Vec<i64> = all
            .iter()
            .filter(|r| predicate(r) == Some(true))
            .map(|r| r.id)
            .collect();
        let got = ids(
            &c,
            "customers",
            ListQuery::new().filter(field, lookup, value),
        )
        .await;
        assert_eq!(
            sorted(got),
            sorted(want.clone()),
            "{field}__{lookup}={value}"
        );
        assert!(
            !want.is_empty(),
            "the case {field}__{lookup}={value} should match something"
        );

        // A negated filter is SQL `NOT (...)`, as in the data engine: rows whose value is NULL
        // match neither the filter nor its negation.
        let want_excluded: Vec<i64> = all
            .iter()
            .filter(|r| predicate(r) == Some(false))
            .map(|r| r.id)
            .collect();
        let got = ids(
            &c,
            "customers",
            ListQuery::new().exclude(field, lookup, value),
        )
        .await;
        assert_eq!(
            sorted(got),
            sorted(want_excluded),
            "exclude__{field}__{lookup}={value}"
        );
    }
}

#[tokio::test]
async fn search_matches_text_case_insensitively_and_numbers_exactly() {
    let emulator = demo().await;
    let c = client(&emulator);
    let all = customers(&c).await;
    let got = ids(&c, "customers", ListQuery::new().search("BERLIN")).await;
    let want: Vec<i64> = all
        .iter()
        .filter(|r| {
            [
                Some(&r.name),
                Some(&r.email),
                r.city.as_ref(),
                r.notes.as_ref(),
            ]
            .into_iter()
            .flatten()
            .any(|t| t.to_lowercase().contains("berlin"))
                || r.birth_date
                    .as_deref()
                    .is_some_and(|d| d.contains("berlin"))
        })
        .map(|r| r.id)
        .collect();
    assert_eq!(sorted(got), sorted(want));
    let got = ids(&c, "customers", ListQuery::new().search("42")).await;
    assert!(got.contains(&42), "the pk 42 equals the search number");
}

#[tokio::test]
async fn walking_every_page_returns_each_row_once_in_order() {
    let emulator = demo().await;
    let c = client(&emulator);
    let all = customers(&c).await;
    let records = c.records("shop", "customers").typed::<Customer>();

    // Default order: newest primary key first.
    let mut want_default: Vec<i64> = all.iter().map(|r| r.id).collect();
    want_default.sort_by_key(|id| Reverse(*id));
    // By city ascending (NULL first, as SQLite orders), then the pk descending as tie-breaker.
    let mut by_city = all.clone();
    by_city.sort_by(|a, b| a.city.cmp(&b.city).then(b.id.cmp(&a.id)));
    let want_city: Vec<i64> = by_city.iter().map(|r| r.id).collect();
    // By score descending then name ascending.
    let mut by_score = all.clone();
    by_score.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then(a.name.cmp(&b.name))
            .then(b.id.cmp(&a.id))
    });
    let want_score: Vec<i64> = by_score.iter().map(|r| r.id).collect();

    for per_page in [7, 100, 999, 1000, 10_000] {
        for (order, want) in [
            (None, &want_default),
            (Some("city"), &want_city),
            (Some("-score,name"), &want_score),
        ] {
            let mut got = Vec::new();
            let mut page_no = 1;
            loop {
                let mut q = ListQuery::new().per_page(per_page).page(page_no);
                if let Some(o) = order {
                    for f in o.split(',') {
                        q = q.order_by(f);
                    }
                }
                let page = records.list(&q).await.unwrap();
                assert_eq!(page.count, 1000);
                assert!(page.results.len() <= per_page as usize);
                got.extend(page.results.iter().map(|r| r.id));
                match page.next {
                    Some(next) => {
                        assert!(
                            next.starts_with("http://127.0.0.1:"),
                            "absolute next link: {next}"
                        );
                        assert!(next.contains(&format!("page={}", page_no + 1)), "{next}");
                        page_no += 1;
                    }
                    None => break,
                }
                if page_no > 1 {
                    assert!(page.previous.is_some() || page_no == 2);
                }
            }
            assert_eq!(&got, want, "per_page {per_page}, order {order:?}");
        }
    }
}

#[tokio::test]
async fn stream_reads_more_than_ten_thousand_rows_once_each() {
    let emulator = demo().await;
    let c = client(&emulator);
    let ids: Vec<i64> = c
        .records("shop", "orders")
        .stream(ListQuery::new().order_by("id"))
        .unwrap()
        .map_ok(|r: Record| r["id"].as_i64().unwrap())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(ids.len(), 12_000);
    assert_eq!(ids, (1..=12_000).collect::<Vec<i64>>());
    // Small pages and a filter, too.
    let paid: Vec<Record> = c
        .records("shop", "orders")
        .prefetch(5)
        .stream(ListQuery::new().eq("status", "paid").per_page(250))
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let count: u64 = c
        .records("shop", "orders")
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Count),
            &ListQuery::new().eq("status", "paid"),
        )
        .await
        .unwrap();
    assert_eq!(paid.len() as u64, count);
    assert!(paid.iter().all(|r| r["status"] == "paid"));
}

#[tokio::test]
async fn stream_text_hands_out_the_records_raw_streams_give() {
    let emulator = demo().await;
    let c = client(&emulator);
    let query = || ListQuery::new().order_by("-id").per_page(1500);
    let texts: Vec<svc_api::RecordText> = c
        .records("shop", "orders")
        .stream_text(query())
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let raws: Vec<svc_api::RawRecord> = c
        .records("shop", "orders")
        .raw()
        .stream(query())
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert!(texts.len() > 1500, "more than one page: {}", texts.len());
    let texts: Vec<&str> = texts.iter().map(svc_api::RecordText::as_str).collect();
    let raws: Vec<&str> = raws.iter().map(|r| r.get()).collect();
    assert_eq!(texts, raws);
    // Each decodes to what the decoding stream gives.
    let typed: Vec<Record> = c
        .records("shop", "orders")
        .stream(query())
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let decoded: Vec<Record> = texts
        .iter()
        .map(|t| serde_json::from_str(t).unwrap())
        .collect();
    assert_eq!(decoded, typed);
}

#[tokio::test]
async fn aggregate_and_group_match_the_oracle() {
    let emulator = demo().await;
    let c = client(&emulator);
    let all = customers(&c).await;
    let records = c.records("shop", "customers");
    let vip = ListQuery::new().eq("vip", true);
    let vips: Vec<&Customer> = all.iter().filter(|r| r.vip).collect();
    let scores: Vec<i64> = vips.iter().filter_map(|r| r.score).collect();

    let count: u64 = records
        .aggregate(&AggregateRequest::new(AggregateFunc::Count), &vip)
        .await
        .unwrap();
    assert_eq!(count, vips.len() as u64);
    let sum: i64 = records
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Sum).column("score"),
            &vip,
        )
        .await
        .unwrap();
    assert_eq!(sum, scores.iter().sum::<i64>());
    let min: Option<i64> = records
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Min).column("score"),
            &vip,
        )
        .await
        .unwrap();
    assert_eq!(min, scores.iter().min().copied());
    let max: Option<i64> = records
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Max).column("score"),
            &vip,
        )
        .await
        .unwrap();
    assert_eq!(max, scores.iter().max().copied());
    let avg: f64 = records
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Avg).column("score"),
            &vip,
        )
        .await
        .unwrap();
    let want_avg = scores.iter().sum::<i64>() as f64 / scores.len() as f64;
    assert!((avg - want_avg).abs() < 1e-9, "{avg} vs {want_avg}");

    // Over no rows: count, sum, avg give 0; min and max give null.
    let none = ListQuery::new().eq("city", "Atlantis");
    let zero: Value = records
        .aggregate(&AggregateRequest::new(AggregateFunc::Count), &none)
        .await
        .unwrap();
    assert_eq!(zero, json!(0));
    let zero: Value = records
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Sum).column("score"),
            &none,
        )
        .await
        .unwrap();
    assert_eq!(zero.as_f64(), Some(0.0));
    let zero: Value = records
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Avg).column("score"),
            &none,
        )
        .await
        .unwrap();
    assert_eq!(zero.as_f64(), Some(0.0));
    let null: Value = records
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Min).column("score"),
            &none,
        )
        .await
        .unwrap();
    assert_eq!(null, Value::Null);

    // Group by city, plain: rows ordered by key, NULL included as its own group.
    let rows: Vec<GroupRow<Option<String>, u64>> = records
        .group(
            &GroupRequest::new("city", AggregateFunc::Count),
            &ListQuery::new(),
        )
        .await
        .unwrap();
    let mut want: BTreeMap<Option<String>, u64> = BTreeMap::new();
    for r in &all {
        *want.entry(r.city.clone()).or_default() += 1;
    }
    let got: Vec<(Option<String>, u64)> = rows.into_iter().map(|r| (r.group, r.y_func)).collect();
    assert_eq!(got, want.into_iter().collect::<Vec<_>>());

    // Group by month of created_at, summing scores of VIPs.
    let rows: Vec<GroupRow<String, Value>> = records
        .group(
            &GroupRequest::new("created_at", AggregateFunc::Count)
                .x_lookup(GroupLookup::Date(DateUnit::Month)),
            &vip,
        )
        .await
        .unwrap();
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for r in &vips {
        *want.entry(r.created_at[..7].to_owned()).or_default() += 1;
    }
    assert_eq!(rows.len(), want.len());
    for (row, (month, n)) in rows.iter().zip(&want) {
        assert!(
            row.group.starts_with(month.as_str()),
            "{} vs {month}",
            row.group
        );
        assert_eq!(row.y_func.as_u64(), Some(*n));
    }

    // Empty group result.
    let rows: Vec<GroupRow> = records
        .group(&GroupRequest::new("city", AggregateFunc::Count), &none)
        .await
        .unwrap();
    assert!(rows.is_empty());

    // A date lookup on a column that is not a date is refused.
    let err = records
        .group::<Value, Value>(
            &GroupRequest::new("name", AggregateFunc::Count)
                .x_lookup(GroupLookup::Date(DateUnit::Year)),
            &ListQuery::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(400));
}

#[tokio::test]
async fn aggregate_and_group_get_forms() {
    let emulator = demo().await;
    let token = emulator.resource_tokens()["shop"].clone();
    let base = format!(
        "{}/projects/demo/prod/shop/models/customers",
        emulator.api_base_url()
    );
    let (status, body) = raw(
        &emulator,
        "GET",
        &format!("{base}/aggregate?_y_func=count&vip=true"),
        Some(&token),
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let c = client(&emulator);
    let count: u64 = c
        .records("shop", "customers")
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Count),
            &ListQuery::new().eq("vip", true),
        )
        .await
        .unwrap();
    assert_eq!(body["y_func"], json!(count));
    let (status, body) = raw(
        &emulator,
        "GET",
        &format!("{base}/group?_x_column=vip&_y_func=count"),
        Some(&token),
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body.as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn create_retrieve_update_delete() {
    let emulator = demo().await;
    let c = client(&emulator);
    let customers = c.records("shop", "customers").typed::<Customer>();
    // A key that names no field: strict mode refuses it, naming it (the engine would ignore it).
    let refused = customers
        .create(&json!({"name": "Zoë O'Brien", "email": "zoe@example.com", "created_at": "2026-11-22T10:00:00", "unknown_key": 1}))
        .await
        .unwrap_err();
    assert_eq!(refused.status().map(|s| s.as_u16()), Some(400), "{refused}");
    assert!(
        refused
            .body()
            .is_some_and(|b| b.field_errors().contains_key("unknown_key")),
        "{refused}"
    );
    let created = customers
        .create(&json!({"name": "Zoë O'Brien", "email": "zoe@example.com", "created_at": "2026-11-22T10:00:00"}))
        .await
        .unwrap();
    assert_eq!(created.name, "Zoë O'Brien");
    assert!(!created.vip, "the column default applies");
    assert_eq!(customers.retrieve(created.id).await.unwrap(), created);

    let updated = customers
        .update(created.id, &json!({"city": "Oslo", "score": 77}))
        .await
        .unwrap();
    assert_eq!(updated.city.as_deref(), Some("Oslo"));
    assert_eq!(updated.score, Some(77));
    assert_eq!(
        updated.email, "zoe@example.com",
        "the whole record comes back"
    );

    customers.delete(created.id).await.unwrap();
    assert!(
        customers
            .retrieve(created.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        customers
            .delete(created.id)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        customers
            .update(created.id, &json!({"city": "x"}))
            .await
            .unwrap_err()
            .is_not_found()
    );
}

#[tokio::test]
async fn field_errors_for_not_null_unique_and_types() {
    let emulator = demo().await;
    let c = client(&emulator);
    let customers = c.records("shop", "customers");
    let field_error = |e: Error, field: &str| {
        assert_eq!(e.status().map(|s| s.as_u16()), Some(400), "{e}");
        assert!(
            e.body().unwrap().field_errors().contains_key(field),
            "{field}: {e}"
        );
    };
    // A NOT NULL column missing or null is SQLite's error, as on the data engine (whose
    // serializer requires no field): a non-field error naming the column.
    let not_null = |e: Error, column: &str| {
        assert_eq!(e.status().map(|s| s.as_u16()), Some(400), "{e}");
        assert_eq!(
            e.body().unwrap().non_field_errors(),
            vec![format!("NOT NULL constraint failed: customers.{column}")]
        );
    };
    not_null(
        customers
            .create(&json!({"name": "No Email", "created_at": "2026-01-01T00:00:00"}))
            .await
            .unwrap_err(),
        "email",
    );
    field_error(
        customers
            .create(&json!({"name": "Dup", "email": "customer1@example.com", "created_at": "2026-01-01T00:00:00"}))
            .await
            .unwrap_err(),
        "email",
    );
    field_error(
        customers
            .update(1, &json!({"score": "lots"}))
            .await
            .unwrap_err(),
        "score",
    );
    not_null(
        customers
            .update(1, &json!({"name": null}))
            .await
            .unwrap_err(),
        "name",
    );
}

#[tokio::test]
async fn bad_input() {
    let emulator = demo().await;
    let c = client(&emulator);
    let status = |e: Error| e.status().map(|s| s.as_u16());

    // Unknown model.
    assert_eq!(
        status(
            c.records("shop", "nope")
                .list(&ListQuery::new())
                .await
                .unwrap_err()
        ),
        Some(404)
    );
    // Unknown field in a filter and in the ordering: 400 naming it.
    let err = c
        .records("shop", "orders")
        .list(&ListQuery::new().eq("colour", "red"))
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(400));
    assert!(err.to_string().contains("colour"), "{err}");
    let err = c
        .records("shop", "orders")
        .list(&ListQuery::new().order_by("-colour"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("colour"), "{err}");
    // Malformed numbers and dates.
    let err = c
        .records("shop", "orders")
        .list(&ListQuery::new().filter("total", Lookup::Gt, "ten"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("total"), "{err}");
    let err = c
        .records("shop", "orders")
        .list(&ListQuery::new().filter("ordered_on", Lookup::Gte, "2024-13-45"))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("ordered_on"), "{err}");
    // Page size out of range: refused before sending.
    let err = c
        .records("shop", "orders")
        .list(&ListQuery::new().per_page(10_001))
        .await
        .unwrap_err();
    assert_eq!(err.sent(), Sent::No);
    // A pk with a slash reaches the server as one segment: not an integer, which the data
    // engine's key field refuses (400).
    assert_eq!(
        status(
            c.records("shop", "orders")
                .retrieve("1/2")
                .await
                .unwrap_err()
        ),
        Some(400)
    );
    // SQL in a value is just text: it matches nothing.
    for nasty in [
        "' OR 1=1 --",
        "1 OR 1=1",
        "\"; DROP TABLE orders; --",
        "%",
        "_",
    ] {
        let page = c
            .records("shop", "customers")
            .list(&ListQuery::new().eq("name", nasty))
            .await
            .unwrap();
        assert_eq!(page.count, 0, "{nasty}");
    }
    let still: u64 = c
        .records("shop", "orders")
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Count),
            &ListQuery::new(),
        )
        .await
        .unwrap();
    assert_eq!(still, 12_000);
    // LIKE wildcards in icontains stay wildcards, as in the data engine: `1_0` also matches
    // `100`.
    let literal = c
        .records("shop", "orders")
        .list(&ListQuery::new().filter("note", Lookup::IContains, "100"))
        .await
        .unwrap();
    assert!(literal.count > 0);
    let page = c
        .records("shop", "orders")
        .list(&ListQuery::new().filter("note", Lookup::IContains, "1_0"))
        .await
        .unwrap();
    assert!(page.count >= literal.count);
}

#[tokio::test]
async fn wrong_tokens() {
    let emulator = demo().await;
    let c = svc_tests::builder(&emulator)
        .resource_token("shop", "wrong")
        .build()
        .unwrap();
    let err = c
        .records("shop", "orders")
        .list(&ListQuery::new())
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(401));
    // The API key (Bearer) serves every data host route of its project.
    let key_only = svc_api::Client::builder()
        .project("demo")
        .api_key(emulator.api_key())
        .api_base_url(emulator.api_base_url())
        .build()
        .unwrap();
    assert_eq!(
        key_only
            .records("shop", "orders")
            .list(&ListQuery::new())
            .await
            .unwrap()
            .count,
        12_000
    );
}

#[tokio::test]
async fn both_path_forms_and_no_pagination_cap() {
    let emulator = demo().await;
    let token = emulator.resource_tokens()["shop"].clone();
    let base = format!(
        "{}/projects/demo/prod/shop/models/orders",
        emulator.api_base_url()
    );
    let (status, with) = raw(
        &emulator,
        "GET",
        &format!("{base}/?_per_page=2"),
        Some(&token),
        "",
    )
    .await;
    assert_eq!(status, 200);
    let (_, without) = raw(
        &emulator,
        "GET",
        &format!("{base}?_per_page=2"),
        Some(&token),
        "",
    )
    .await;
    assert_eq!(with["results"], without["results"]);
    let (_, retrieved) = raw(
        &emulator,
        "GET",
        &format!("{base}/5/"),
        Some(&format!("Bearer {token}")),
        "",
    )
    .await;
    assert_eq!(retrieved["id"], 5);
    let (_, all) = raw(
        &emulator,
        "GET",
        &format!("{base}?_no_pagination=1"),
        Some(&token),
        "",
    )
    .await;
    assert_eq!(
        all.as_array().map(Vec::len),
        Some(10_000),
        "capped at 10000"
    );
}

#[tokio::test]
async fn concurrent_creates_lose_nothing() {
    let emulator = demo().await;
    let c = client(&emulator);
    let tasks: Vec<_> = (0..40)
        .map(|t| {
            let c = c.clone();
            tokio::spawn(async move {
                let mut ids = Vec::new();
                for i in 0..25 {
                    // Customers, not orders: an order's DATE column cannot be written (the data
                    // engine's 400).
                    let r = c
                        .records("shop", "customers")
                        .create(&json!({"name": format!("task {t} #{i}"), "email": format!("task{t}-{i}@concurrent.test"), "created_at": "2026-11-22T00:00:00"}))
                        .await
                        .unwrap();
                    ids.push(r["id"].as_i64().unwrap());
                }
                ids
            })
        })
        .collect();
    let mut ids = HashSet::new();
    for t in tasks {
        for id in t.await.unwrap() {
            assert!(ids.insert(id), "duplicate id {id}");
        }
    }
    assert_eq!(ids.len(), 1000);
    let count: u64 = c
        .records("shop", "customers")
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Count),
            &ListQuery::new(),
        )
        .await
        .unwrap();
    assert_eq!(count, 2_000);
    let notes = c
        .records("shop", "customers")
        .list(
            &ListQuery::new()
                .filter("name", Lookup::IStartsWith, "task ")
                .per_page(1),
        )
        .await
        .unwrap();
    assert_eq!(notes.count, 1000);
}

#[tokio::test]
async fn an_existing_database_file_is_served_and_records_survive_a_restart() {
    use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};
    let dir = std::env::temp_dir().join(format!("svc-e2e-{}-{}", std::process::id(), line!()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("inventory.sqlite");
    let config = |seed: bool| {
        let mut resource = ResourceConfig::new("inv", "tok_inv").database(&db);
        if seed {
            resource = resource.seed_sql(
                "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, qty INTEGER DEFAULT 0);",
            );
        }
        EmulatorConfig::default()
            .data_path(dir.join("meta.sqlite"))
            .projects(ProjectsConfig::new(vec![
                ProjectConfig::new("files")
                    .api_key("key_files")
                    .resource(resource),
            ]))
    };

    // First start: the file is created from the seed SQL.
    let emulator = Emulator::start(config(true)).await.unwrap();
    let c = client(&emulator);
    let created = c
        .records("inv", "items")
        .create(&json!({"name": "bolt ø6", "qty": 40}))
        .await
        .unwrap();
    assert_eq!(created["qty"], 40);
    emulator.shutdown().await;

    // Second start, no seed: the existing file is opened as it is.
    let emulator = Emulator::start(config(false)).await.unwrap();
    let c = client(&emulator);
    let items = c
        .records("inv", "items")
        .all(&ListQuery::new())
        .await
        .unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["name"], "bolt ø6");
    emulator.shutdown().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A client with drafts on sends `draft=1` on every request. On the data host that is the draft
/// switch, never a filter: a model with a `draft` column lists every row, and `eq("draft", ..)`
/// (sent as `draft__exact`) filters the column.
#[tokio::test]
async fn drafts_on_never_filter_a_model_with_a_draft_column() {
    use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};
    let config = ProjectsConfig::new(vec![ProjectConfig::new("p").api_key("key_p").resource(
        ResourceConfig::new("blog", "tok_blog").seed_sql(
            "CREATE TABLE posts (id INTEGER PRIMARY KEY, title TEXT, draft BOOLEAN NOT NULL);
             INSERT INTO posts VALUES (1, 'a', 1), (2, 'b', 0), (3, 'c', 0);",
        ),
    )]);
    let emulator = Emulator::start(EmulatorConfig::default().projects(config))
        .await
        .unwrap();
    for draft in [false, true] {
        let c = svc_api::Client::builder()
            .project("p")
            .api_base_url(emulator.api_base_url())
            .resource_token("blog", "tok_blog")
            .draft(draft)
            .build()
            .unwrap();
        let posts = c.records("blog", "posts");
        let all = posts.list(&ListQuery::new()).await.unwrap();
        assert_eq!(all.count, 3, "drafts {draft}: every post");
        let drafts = posts
            .list(&ListQuery::new().eq("draft", true))
            .await
            .unwrap();
        assert_eq!(drafts.count, 1, "drafts {draft}: the draft column filtered");
        assert_eq!(drafts.results[0]["id"], 1);
    }
}
