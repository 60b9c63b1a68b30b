//! Bulk writes against the emulator: `create_many` and keyed `upsert_many`, one outcome per
//! item, a bad item failing on its own, and a keyed run that can be repeated.

use futures_util::StreamExt;
use serde_json::{Value, json};
use svc_api::model::records::ListQuery;
use svc_api::{Bulk, Existing, Outcome, Record, Written};
use svc_tests::{client, demo};

fn product(sku: &str, name: &str, price: f64) -> Record {
    let Value::Object(map) = json!({"sku": sku, "name": name, "price": price}) else {
        unreachable!()
    };
    map
}

/// The outcomes, ordered by item.
async fn sorted(
    outcomes: impl futures_util::Stream<Item = Outcome<Record>>,
) -> Vec<Outcome<Record>> {
    let mut all: Vec<Outcome<Record>> = outcomes.collect().await;
    all.sort_by_key(|o| o.index);
    all
}

fn kind(o: &Outcome<Record>) -> &'static str {
    match &o.result {
        Ok(Written::Created(_)) => "created",
        Ok(Written::Updated(_)) => "updated",
        Ok(Written::Skipped) => "skipped",
        Ok(_) => "other",
        Err(_) => "failed",
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn create_many_creates_each_item_and_reports_each_failure() {
    let emulator = demo().await;
    let c = client(&emulator);
    let products = c.records("shop", "products");
    let before = products.list(&ListQuery::new()).await.unwrap().count;
    let mut items: Vec<Record> = (0..40)
        .map(|n| product(&format!("BULK-{n}"), &format!("Bulk {n}"), n as f64 + 0.5))
        .collect();
    // Item 7 lacks the NOT NULL name: it fails, the others do not.
    items[7].remove("name");
    let outcomes = sorted(products.create_many(
        futures_util::stream::iter(items),
        &Bulk::new().concurrency(5),
    ))
    .await;
    assert_eq!(outcomes.len(), 40);
    for (i, o) in outcomes.iter().enumerate() {
        assert_eq!(o.index, i);
        let want = if i == 7 { "failed" } else { "created" };
        assert_eq!(kind(o), want, "item {i}: {:?}", o.result);
    }
    let error = outcomes[7].result.as_ref().unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(400), "{error}");
    let after = products.list(&ListQuery::new()).await.unwrap().count;
    assert_eq!(after, before + 39);
    let Ok(Written::Created(stored)) = &outcomes[3].result else {
        panic!("item 3 was created")
    };
    assert_eq!(stored["sku"], "BULK-3");
}

#[tokio::test(flavor = "multi_thread")]
async fn keyed_upserts_update_existing_keys_and_can_run_again() {
    let emulator = demo().await;
    let c = client(&emulator);
    let products = c.records("shop", "products");
    let existing = products
        .list(&ListQuery::new().order_by("id").per_page(1))
        .await
        .unwrap()
        .results
        .remove(0);
    let old_sku = existing["sku"].as_str().unwrap().to_owned();
    let before = products.list(&ListQuery::new()).await.unwrap().count;
    let items = vec![
        product("UP-1", "First", 1.0),
        product(&old_sku, "Renamed", 9.25),
        product("UP-2", "Second", 2.0),
        Record::new(),
    ];
    let keyed = Bulk::keyed("sku").concurrency(3);
    let first =
        sorted(products.upsert_many(futures_util::stream::iter(items.clone()), &keyed)).await;
    let kinds: Vec<&str> = first.iter().map(kind).collect();
    assert_eq!(kinds, ["created", "updated", "created", "failed"]);
    let e = first[3].result.as_ref().unwrap_err().to_string();
    assert!(e.contains("\"sku\""), "{e}");
    let Ok(Written::Updated(updated)) = &first[1].result else {
        panic!("updated")
    };
    assert_eq!(updated["id"], existing["id"]);
    assert_eq!(updated["name"], "Renamed");
    assert_eq!(
        products.list(&ListQuery::new()).await.unwrap().count,
        before + 2
    );

    // Again: nothing new is created.
    let again =
        sorted(products.upsert_many(futures_util::stream::iter(items.clone()), &keyed)).await;
    let kinds: Vec<&str> = again.iter().map(kind).collect();
    assert_eq!(kinds, ["updated", "updated", "updated", "failed"]);
    let skip = keyed.clone().existing(Existing::Skip);
    let skipped = sorted(products.upsert_many(futures_util::stream::iter(items), &skip)).await;
    let kinds: Vec<&str> = skipped.iter().map(kind).collect();
    assert_eq!(kinds, ["skipped", "skipped", "skipped", "failed"]);
    assert_eq!(
        products.list(&ListQuery::new()).await.unwrap().count,
        before + 2
    );
}
