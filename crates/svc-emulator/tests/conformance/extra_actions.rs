//! The rules of the data engine's extra actions (`bulk_create`, `reorder`, `reset_order`,
//! `get_siblings`; docs/contract.md 5.1, "Extra actions"), on every backend: each answer was
//! checked against the running engine on SQLite, PostgreSQL and MariaDB.

use super::*;

/// `(id, age)` of every person, in key order.
async fn ages(t: &Target) -> Vec<(i64, Value)> {
    let all = t.ok("models/people?_no_pagination=1&_order_by=id").await;
    all.as_array()
        .unwrap_or_else(|| panic!("not a list: {all}"))
        .iter()
        .map(|r| (r["id"].as_i64().unwrap_or_default(), r["age"].clone()))
        .collect()
}

/// A `400` marked as a refusal by design.
fn marked(reply: &Reply) {
    let body = String::from_utf8_lossy(&reply.body);
    assert_eq!(reply.status, 400, "{body}");
    assert_eq!(reply.json()["error_decision"], "stricter", "{body}");
}

/// `bulk_create`: an array, each item created as a create is and committed on its own; the
/// engine's refusal of an item answers that item, and the others are created.
pub async fn bulk_create_creates_each_item_on_its_own(t: &Target) {
    let post = |path: &'static str, body: Value| t.call(Method::POST, path, Some(body));
    let not_an_array = post("models/people/bulk_create", json!({"name": "Zed"})).await;
    assert_eq!(not_an_array.status, 400);
    assert_eq!(
        not_an_array.json()["error"],
        "Request body should be an array"
    );
    // An empty array: nothing to look the model up for.
    for path in ["models/people/bulk_create", "models/nosuch/bulk_create"] {
        assert_eq!(success(&post(path, json!([])).await), json!([]), "{path}");
    }
    assert_eq!(
        post("models/nosuch/bulk_create", json!([{}])).await.status,
        404
    );
    let answer = success(
        &post(
            "models/people/get_records/bulk_create",
            json!([
                {"name": "Zed", "age": 20},
                {"name": "Old", "age": "old"},
                {"name": "Yan", "id": 1},
                {"name": "Xi"},
            ]),
        )
        .await,
    );
    let items = answer.as_array().unwrap_or_else(|| panic!("{answer}"));
    let flags: Vec<&Value> = items.iter().map(|i| &i["success"]).collect();
    assert_eq!(
        flags,
        [&json!(true), &json!(false), &json!(false), &json!(true)]
    );
    assert_eq!(items[0], json!({"success": true}));
    assert_eq!(items[1]["errors"]["age"], json!(["not a valid integer"]));
    // The key taken: the database's refusal, as a create's `400` names it.
    assert!(
        items[2]["errors"]
            .as_object()
            .is_some_and(|e| !e.is_empty())
    );
    assert_eq!(t.ids("").await, [7, 6, 5, 4, 3, 2, 1]);
    assert_eq!(t.ok("models/people/7").await["name"], "Xi");
    // [decision: stricter] An item a create refuses by design refuses the whole request first.
    let refused = post(
        "models/people/bulk_create",
        json!([{"name": "Wu"}, {"name": "Vi", "no_such_field": 1}]),
    )
    .await;
    marked(&refused);
    assert!(
        refused.json()["error"]
            .as_str()
            .is_some_and(|e| e.contains("Item 1")),
        "{}",
        refused.json()
    );
    assert_eq!(
        t.ids("").await,
        [7, 6, 5, 4, 3, 2, 1],
        "nothing was written"
    );
}

/// `reorder`: the ordering column's values between the segment's ends move by one, and the item
/// takes the end's value, through the filters (the body's other members too).
pub async fn reorder_moves_an_ordering_column_through_the_filters(t: &Target) {
    let reorder = |body: Value| t.call(Method::POST, "models/people/reorder", Some(body));
    // The ends by key: from person 4 (18) to person 1 (30).
    let body = json!({"ordering_field": "age", "forward": true, "segment_from": 4,
                      "segment_to": 1, "item": 4});
    let answer = success(&reorder(body).await);
    assert_eq!(
        answer,
        json!({"ordering_field": "age", "forward": true, "segment_from": 4, "segment_to": 1,
               "item": 4, "segment_by_ordering_field": false})
    );
    assert_eq!(
        ages(t).await,
        [
            (1, json!(29)),
            (2, Value::Null),
            (3, json!(45)),
            (4, json!(30)),
            (5, json!(29))
        ]
    );
    // The ends as values, the records filtered by the body's `city`, read as the serializer
    // reads its fields (`"no"` is false, `"0"` an integer).
    let body = json!({"ordering_field": "age", "forward": "no", "segment_from": "0",
                      "segment_to": 100, "item": 5, "segment_by_ordering_field": "yes",
                      "city": "Rome"});
    success(&reorder(body).await);
    assert_eq!(ages(t).await[4], (5, json!(100)));
    assert_eq!(ages(t).await[0], (1, json!(29)), "only Rome moved");
    let missing = reorder(json!({"ordering_field": "age"})).await;
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["item"], json!(["this field is required"]));
    assert!(missing.json().get("error_decision").is_none());
    // [decision: stricter] Where the engine fails or misreads: nothing written.
    let before = ages(t).await;
    let valid = json!({"ordering_field": "age", "forward": true, "segment_from": 1,
                       "segment_to": 100, "item": 1, "segment_by_ordering_field": true});
    let with = |key: &str, value: Value| {
        let mut body = valid.clone();
        body[key] = value;
        body
    };
    for body in [
        with("city__icontains", json!("a")),
        with("ordering_field", json!("city")),
        with("ordering_field", json!("no_such_field")),
        with("segment_from", Value::Null),
        with("segment_by_ordering_field", json!(false)),
    ] {
        marked(&reorder(body).await);
    }
    let ordered = t
        .call(
            Method::POST,
            "models/people/reorder?_order_by=-age",
            Some(valid.clone()),
        )
        .await;
    marked(&ordered);
    assert_eq!(ages(t).await, before, "nothing was written");
}

/// `reset_order`: the selected records numbered 1, 2, ... in the order the body names.
pub async fn reset_order_numbers_the_selected_records_in_order(t: &Target) {
    let reset = |body: Value| t.call(Method::POST, "models/people/reset_order", Some(body));
    let answer = success(&reset(json!({"ordering_field": "age", "ordering": "-id"})).await);
    assert_eq!(answer, json!({"ordering_field": "age", "ordering": "-id"}));
    let numbered = |pairs: [(i64, i64); 5]| pairs.map(|(id, n)| (id, json!(n))).to_vec();
    assert_eq!(
        ages(t).await,
        numbered([(1, 5), (2, 4), (3, 3), (4, 2), (5, 1)])
    );
    // `value_ordering`'s values first, in their order, then `ordering`.
    let body = json!({"ordering_field": "age", "value_ordering": "city-Rome,Berlin",
                      "ordering": "id"});
    success(&reset(body).await);
    assert_eq!(
        ages(t).await,
        numbered([(1, 3), (2, 2), (3, 4), (4, 5), (5, 1)])
    );
    // The body's other members filter, as every POST's do.
    let answer = success(&reset(json!({"ordering_field": "age", "city": "Paris"})).await);
    assert_eq!(answer, json!({"ordering_field": "age"}));
    assert_eq!(ages(t).await[0], (1, json!(1)));
    assert_eq!(ages(t).await[2], (3, json!(4)), "paris is not Paris");
    // [decision: stricter] Where the engine fails: nothing written.
    let before = ages(t).await;
    for body in [
        json!({"ordering_field": "no_such_field"}),
        json!({"ordering_field": "age", "value_ordering": "city"}),
        json!({"ordering_field": "age", "value_ordering": "no_such_field-a"}),
        json!({"ordering_field": "age", "ordering": "no_such_field"}),
        json!({"ordering_field": "name"}),
    ] {
        marked(&reset(body).await);
    }
    let missing = reset(json!({"ordering": "id"})).await;
    assert_eq!(missing.status, 400);
    assert_eq!(
        missing.json()["ordering_field"],
        json!(["this field is required"])
    );
    assert_eq!(ages(t).await, before, "nothing was written");
}

/// `get_siblings`: the keys before and after a record in the list's order, through its filters.
pub async fn get_siblings_are_the_neighbours_in_the_list_order(t: &Target) {
    let siblings = |path: &str| {
        let path = format!("models/people/{path}");
        async move { t.get(&path).await }
    };
    let ok = |path: &'static str| async move { success(&siblings(path).await) };
    // The default order: the key descending.
    assert_eq!(
        ok("3/get_siblings").await,
        json!({"prev": {"id": 4}, "next": {"id": 2}})
    );
    assert_eq!(
        ok("5/get_siblings").await,
        json!({"prev": null, "next": {"id": 4}})
    );
    assert_eq!(
        ok("1/get_siblings").await,
        json!({"prev": {"id": 2}, "next": null})
    );
    // `_order_by`, then the key descending: 4 (18), 5 (30), 1 (30), 3 (45).
    assert_eq!(
        ok("1/get_siblings?age__isnull=false&_order_by=age").await,
        json!({"prev": {"id": 5}, "next": {"id": 3}})
    );
    assert_eq!(siblings("3/get_siblings?city=Rome").await.status, 404);
    assert_eq!(siblings("99/get_siblings").await.status, 404);
    assert_eq!(siblings("x/get_siblings").await.status, 400);
    // [decision: stricter] A key several rows share: the engine fails numbering it.
    marked(&t.get("models/pairs/7/get_siblings").await);
    assert_eq!(
        success(&t.get("models/pairs/3/get_siblings").await),
        json!({"prev": {"a": 5}, "next": {"a": 2}})
    );
}
