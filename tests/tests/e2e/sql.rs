//! Read-only SQL end to end against the demo resource `shop`, in memory and in a database file
//! (the two ways the emulator keeps a resource read-only).
//!
//! A corpus of hostile statements must each be refused with a `400` naming `query`, with the
//! database unchanged afterwards (a checksum of every table and the schema). A corpus of
//! harmless statements that only look dangerous must each run and return the right rows.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};
use svc_api::model::records::{AggregateFunc, AggregateRequest, ListQuery, Lookup};
use svc_api::model::sql::SqlRows;
use svc_api::{Client, Error, Sent};
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};
use svc_tests::{TempDir, client, demo, raw};

/// Everything a write could change: counts and sums of every table, their text columns in
/// order, and the schema. Read through SQL and, for the counts, through the records API too.
async fn checksum(c: &Client) -> Value {
    let rows = c
        .sql("shop")
        .query(
            "select
               (select count(*) || ':' || total(id) || ':' || total(total) || ':' || total(quantity)
                       || ':' || total(customer_id) || ':' || total(product_id) from orders) as orders,
               (select group_concat(status || coalesce(note, '~') || ordered_on || coalesce(shipped_at, '~'), ',')
                  from (select * from orders order by id)) as orders_text,
               (select count(*) || ':' || total(id) || ':' || total(score) || ':' || total(vip) from customers) as customers,
               (select group_concat(name || email || coalesce(city, '~') || coalesce(notes, '~'), ',')
                  from (select * from customers order by id)) as customers_text,
               (select count(*) || ':' || total(price) || ':' || group_concat(sku || name, ',') from products) as products,
               (select group_concat(type || ':' || name || ':' || coalesce(sql, ''), ';')
                  from (select * from sqlite_master order by type, name)) as schema",
        )
        .send()
        .await
        .expect("the checksum query runs");
    let mut sum = json!(rows.maps()[0]);
    for model in ["orders", "customers", "products"] {
        let n: u64 = c
            .records("shop", model)
            .aggregate(
                &AggregateRequest::new(AggregateFunc::Count),
                &ListQuery::new(),
            )
            .await
            .unwrap();
        sum[format!("records_{model}")] = json!(n);
    }
    sum
}

/// Statements that write, or could, or are more than one statement. Each must be refused.
fn hostile(dir: &TempDir) -> Vec<String> {
    let evil_db = dir.join("evil.sqlite");
    let evil_copy = dir.join("copy.sqlite");
    let e = evil_db.display();
    let c = evil_copy.display();
    let mut corpus: Vec<String> = [
        // Plain writes.
        "delete from orders",
        "DELETE FROM orders WHERE id = 1",
        "update orders set total = 0",
        "UPDATE customers SET email = 'x@y.z' WHERE id = 1",
        "insert into customers (name, email, created_at) values ('x', 'x@example.com', '2024-01-01T00:00:00')",
        "replace into products (id, sku, name, price) values (1, 'SKU-X', 'x', 1)",
        "insert into products (id, sku, name, price) values (1, 'SKU-0001', 'n', 1) on conflict(id) do update set price = 0",
        "insert into orders select * from orders where 0",
        "delete from orders returning *",
        "update orders set note = 'x' where id = 1 returning id",
        "insert into customers (name, email, created_at) values ('r', 'r@example.com', '2024-01-01') returning id",
        // Schema changes.
        "create table evil (x)",
        "create temp table evil (x)",
        "create table if not exists orders (x)",
        "create view evil as select 1",
        "create index evil on orders(total)",
        "create trigger evil after insert on orders begin delete from orders; end",
        "create virtual table evil using fts5(a)",
        "drop table orders",
        "drop table if exists nothing_here",
        "drop index orders_customer_id",
        "drop view if exists evil",
        "alter table orders add column evil text",
        "alter table orders rename to o2",
        "update sqlite_master set sql = 'x'",
        // Other databases, pragmas, maintenance.
        "attach database ':memory:' as x",
        "detach database main",
        "pragma writable_schema = 1",
        "pragma main.writable_schema = on",
        "pragma journal_mode = delete",
        "pragma foreign_keys = off",
        "pragma query_only = 0",
        "pragma user_version = 7",
        "pragma table_info(orders)",
        "vacuum",
        "reindex",
        "analyze",
        // Transactions.
        "savepoint a",
        "release a",
        "begin",
        "begin; delete from orders; commit",
        "commit",
        "rollback",
        // Several statements, writes behind comments and CTEs.
        "select 1; delete from orders",
        "select 1;delete from orders;",
        "SeLeCt 1 ; DeLeTe FrOm orders",
        "select * from orders; select 1",
        "select 1 /* ; */; drop table orders",
        "select 'a;b'; drop table orders",
        "/* harmless */ delete from orders",
        "-- just a comment\ndelete from orders",
        "with x as (select 1) delete from orders",
        "with x as (delete from orders returning *) select * from x",
        "with x as (select id from orders) update orders set total = 0 where id in (select id from x)",
        "delete from orders where 'update' = 'update'",
        // Extensions, files, plans.
        "select load_extension('/tmp/svc-evil.so')",
        "select writefile('/tmp/svc-evil.txt', 'x')",
        "explain delete from orders",
        "explain query plan select * from orders",
        // Nothing to run.
        "-- only a comment",
        "/* only a comment */",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    corpus.push(format!("attach database '{e}' as evil"));
    corpus.push(format!("vacuum into '{c}'"));
    corpus.push(format!(
        "select 1; attach database '{e}' as evil; create table evil.t (x)"
    ));
    corpus
}

/// Runs the hostile corpus against the `shop` resource of `emulator`.
async fn assert_every_hostile_statement_is_refused(emulator: &Emulator, dir: &TempDir) {
    let c = client(emulator);
    let before = checksum(&c).await;
    let corpus = hostile(dir);
    assert!(corpus.len() >= 40, "{} statements", corpus.len());
    for statement in &corpus {
        let err = c
            .sql("shop")
            .query(statement.as_str())
            .send()
            .await
            .expect_err(statement);
        assert_eq!(
            err.status().map(|s| s.as_u16()),
            Some(400),
            "{statement}: {err}"
        );
        let body = err.body().expect("an error body");
        assert!(
            body.field_errors().contains_key("query"),
            "{statement}: {}",
            body.summary()
        );
    }
    assert_eq!(checksum(&c).await, before, "the database changed");
    assert!(!dir.join("evil.sqlite").exists(), "ATTACH created a file");
    assert!(
        !dir.join("copy.sqlite").exists(),
        "VACUUM INTO wrote a copy"
    );
    // The connection is back to normal for the records engine: writes still work (on
    // products: an order's DATE column cannot be written, as on the data engine).
    let products = c.records("shop", "products");
    let created = products
        .create(&json!({"sku": "SKU-SQL-CHECK", "name": "Check", "price": 1.0}))
        .await
        .unwrap();
    products
        .delete(created["id"].as_i64().unwrap())
        .await
        .unwrap();
    assert_eq!(checksum(&c).await, before);
}

#[tokio::test]
async fn hostile_statements_are_refused_in_memory() {
    let emulator = demo().await;
    let dir = TempDir::new("sql-hostile-mem");
    assert_every_hostile_statement_is_refused(&emulator, &dir).await;
}

/// The demo project with `shop` kept in a database file (read-only reader connections).
async fn demo_on_file(dir: &TempDir) -> Emulator {
    let config = ProjectsConfig::new(vec![
        ProjectConfig::new("demo").api_key("key_demo").resource(
            ResourceConfig::new("shop", "tok_shop")
                .database(dir.join("shop.sqlite"))
                .seed_sql(svc_emulator::demo_seed_sql()),
        ),
    ]);
    Emulator::start(EmulatorConfig::default().projects(config))
        .await
        .expect("the emulator starts")
}

#[tokio::test]
async fn hostile_statements_are_refused_on_a_database_file() {
    let dir = TempDir::new("sql-hostile-file");
    let emulator = demo_on_file(&dir).await;
    assert_every_hostile_statement_is_refused(&emulator, &dir).await;
    emulator.shutdown().await;
}

#[tokio::test]
async fn harmless_statements_that_look_dangerous_run() {
    let emulator = demo().await;
    let c = client(&emulator);
    let before = checksum(&c).await;
    let paid: u64 = c
        .records("shop", "orders")
        .aggregate(
            &AggregateRequest::new(AggregateFunc::Count),
            &ListQuery::new().eq("status", "paid"),
        )
        .await
        .unwrap();
    let customer_1 = c.records("shop", "customers").retrieve(1).await.unwrap();
    let like_update = c
        .records("shop", "customers")
        .all(&ListQuery::new().filter("name", Lookup::IContains, "an"))
        .await
        .unwrap()
        .len();

    let cases: Vec<(&str, Vec<&str>, Value)> = vec![
        ("select 'update' as word", vec!["word"], json!([["update"]])),
        (
            "select 'delete from orders; drop table orders' as text",
            vec!["text"],
            json!([["delete from orders; drop table orders"]]),
        ),
        (
            "select count(*) as n from orders where note = 'x; drop table orders'",
            vec!["n"],
            json!([[0]]),
        ),
        (
            "select id, name as \"drop\" from customers where id = 1",
            vec!["id", "drop"],
            json!([[1, customer_1["name"]]]),
        ),
        (
            "select \"delete\".id as \"insert\" from customers as \"delete\" where \"delete\".id <= 3 order by 1",
            vec!["insert"],
            json!([[1], [2], [3]]),
        ),
        (
            "with updated as (select id from orders where status = 'paid') select count(*) as n from updated",
            vec!["n"],
            json!([[paid]]),
        ),
        (
            "select count(*) as n from customers where name like '%an%'",
            vec!["n"],
            json!([[like_update]]),
        ),
        (
            "values (1, 'insert'), (2, 'drop')",
            vec!["column1", "column2"],
            json!([[1, "insert"], [2, "drop"]]),
        ),
        (
            "select 1 as one /* ; drop table orders */",
            vec!["one"],
            json!([[1]]),
        ),
        (
            "/* drop table orders; */ select 2 as two",
            vec!["two"],
            json!([[2]]),
        ),
        (
            "select replace('update me', 'update', 'read') as r",
            vec!["r"],
            json!([["read me"]]),
        ),
        (
            "select name from sqlite_master where type = 'table' order by name",
            vec!["name"],
            json!([["customers"], ["orders"], ["products"]]),
        ),
        (
            "select name, pk from pragma_table_info('orders') where pk = 1",
            vec!["name", "pk"],
            json!([["id", 1]]),
        ),
        (
            "with recursive n(x) as (select 1 union all select x + 1 from n where x < 5) select x from n",
            vec!["x"],
            json!([[1], [2], [3], [4], [5]]),
        ),
        (
            "select x'00ff' as b, null as nil, 2.5 as half, 'it''s; --' as t",
            vec!["b", "nil", "half", "t"],
            json!([["00ff", null, 2.5, "it's; --"]]),
        ),
    ];
    assert!(cases.len() >= 10);
    // The query runs inside the engine's sub-select, as the engine runs it: a `;` or a line
    // comment at its end breaks it there (the engine's SQLite answers "near \";\"" and
    // "incomplete input"), a `400` naming `query`.
    for query in [
        "select 3 as three;",
        "select 1 as one -- ; delete from orders",
    ] {
        let err = c.sql("shop").query(query).send().await.expect_err(query);
        assert_eq!(
            err.status().map(|s| s.as_u16()),
            Some(400),
            "{query}: {err}"
        );
        let body = err.body().expect("an error body");
        assert!(body.field_errors().contains_key("query"), "{query}");
    }
    for (query, columns, data) in cases {
        let response = c
            .sql("shop")
            .query(query)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{query}: {e}"));
        assert_eq!(response.columns, columns, "{query}");
        assert_eq!(json!(response.data), data, "{query}");
        assert_eq!(response.row_count as usize, response.data.len(), "{query}");
    }
    // Grouping agrees with the records API.
    let by_status: BTreeMap<String, u64> = c
        .sql("shop")
        .query("select status, count(*) from orders group by status order by status")
        .rows::<(String, u64)>()
        .await
        .unwrap()
        .into_iter()
        .collect();
    let mut total = 0;
    for (status, n) in &by_status {
        let want: u64 = c
            .records("shop", "orders")
            .aggregate(
                &AggregateRequest::new(AggregateFunc::Count),
                &ListQuery::new().eq("status", status),
            )
            .await
            .unwrap();
        assert_eq!(*n, want, "{status}");
        total += n;
    }
    assert_eq!(total, 12_000);
    assert_eq!(checksum(&c).await, before);
}

#[derive(Debug, Deserialize, PartialEq)]
struct Customer {
    id: i64,
    name: String,
    city: Option<String>,
    vip: i64,
}

#[tokio::test]
async fn parameters_round_trip_and_rows_decode() {
    let emulator = demo().await;
    let c = client(&emulator);

    // Quotes, semicolons, comment markers and non-ASCII text come back exactly.
    for text in [
        "O'Brien",
        "\"double\" and 'single' quotes",
        "'; DROP TABLE orders; --",
        "Zoë, Łukasz, Ἀλέξανδρος, 李, 日本語, 🎉",
        "back\\slash and \u{0} nul",
        "",
    ] {
        let rows: Vec<(String, i64)> = c
            .sql("shop")
            .query("select :text as t, length(:text) as n")
            .bind("text", text)
            .rows()
            .await
            .unwrap();
        // SQLite's length() counts characters up to the first NUL.
        let chars = text.chars().take_while(|c| *c != '\0').count() as i64;
        assert_eq!(rows, vec![(text.to_owned(), chars)], "{text:?}");
    }

    // A name with a quote, looked up by parameter, finds the same customers as the records API.
    let obriens = c
        .records("shop", "customers")
        .all(&ListQuery::new().filter("name", Lookup::IContains, "O'Brien"))
        .await
        .unwrap();
    assert!(!obriens.is_empty());
    let name = obriens[0]["name"].as_str().unwrap().to_owned();
    let want: Vec<i64> = obriens
        .iter()
        .filter(|r| r["name"] == name.as_str())
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    let mut got: Vec<i64> = c
        .sql("shop")
        .query("select id from customers where name = :name")
        .bind(":name", &name)
        .rows()
        .await
        .unwrap();
    got.sort_unstable();
    let mut want_sorted = want.clone();
    want_sorted.sort_unstable();
    assert_eq!(got, want_sorted);

    // Rows decode into structs by column name, whatever the column order; maps by name.
    let customers: Vec<Customer> = c
        .sql("shop")
        .query("select vip, city, name, id from customers where id in (select value from json_each(:ids)) order by id")
        .bind("ids", serde_json::json!([1, 2, 3]).to_string())
        .rows()
        .await
        .unwrap();
    assert_eq!(customers.len(), 3);
    for customer in &customers {
        let record = c
            .records("shop", "customers")
            .retrieve(customer.id)
            .await
            .unwrap();
        assert_eq!(record["name"], customer.name.as_str());
        assert_eq!(record["city"].as_str(), customer.city.as_deref());
        assert_eq!(record["vip"].as_bool(), Some(customer.vip != 0));
    }
    let response = c
        .sql("shop")
        .query("select id, email from customers where id = :id")
        .bind("id", 7)
        .send()
        .await
        .unwrap();
    assert_eq!(response.maps()[0]["email"], "customer7@example.com");
    let fetched: SqlRows<Value> = c
        .sql("shop")
        .query("select id, email from customers where id <= :n order by id")
        .bind("n", 2)
        .fetch()
        .await
        .unwrap();
    assert_eq!(fetched.columns, ["id", "email"]);
    assert_eq!(fetched.row_count, 2);
    assert_eq!(
        fetched.rows[1],
        json!({"id": 2, "email": "customer2@example.com"})
    );

    // NULL, booleans and reals as parameters.
    let rows: Vec<(Option<i64>, i64, f64)> = c
        .sql("shop")
        .query("select :none, :yes, :half")
        .bind("none", None::<i64>)
        .bind("yes", true)
        .bind("half", 0.5)
        .rows()
        .await
        .unwrap();
    assert_eq!(rows, vec![(None, 1, 0.5)]);

    // At most 100 rows: the engine's page of a query in format 2 without a `limit`; a limit
    // up to 1000 and an offset page it; `limit(0)` is every row, the emulator's 10000 at most.
    let ids = |limit: Option<u64>, offset: Option<u64>| {
        let mut query = c.sql("shop").query("select id from orders order by id");
        if let Some(limit) = limit {
            query = query.limit(limit);
        }
        if let Some(offset) = offset {
            query = query.offset(offset);
        }
        query.rows::<i64>()
    };
    assert_eq!(ids(None, None).await.unwrap().len(), 100);
    assert_eq!(ids(Some(1000), None).await.unwrap().len(), 1000);
    assert_eq!(ids(Some(0), None).await.unwrap().len(), 10_000);
    let page = ids(Some(3), Some(2)).await.unwrap();
    let first = ids(Some(5), None).await.unwrap();
    assert_eq!(page, first[2..5]);
    let err = ids(Some(1001), None).await.unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    assert_eq!(err.sent(), Sent::No, "{err}");
}

#[tokio::test]
async fn bad_input() {
    let emulator = demo().await;
    let c = client(&emulator);
    let url = format!(
        "{}/projects/demo/prod/shop/sql_get_query",
        emulator.api_base_url()
    );
    let token = emulator.resource_tokens()["shop"].clone();

    // Refused before sending.
    for err in [
        c.sql("shop")
            .query("select 1")
            .bind("a b", 1)
            .send()
            .await
            .unwrap_err(),
        c.sql("shop")
            .query("select 1")
            .bind("1x", 1)
            .send()
            .await
            .unwrap_err(),
        c.sql("shop")
            .query("select 1")
            .bind("", 1)
            .send()
            .await
            .unwrap_err(),
        c.sql("shop")
            .query("select :x")
            .bind("x;", 1)
            .send()
            .await
            .unwrap_err(),
        c.sql("shop").query("  ").send().await.unwrap_err(),
        c.sql("").query("select 1").send().await.unwrap_err(),
        c.sql("..").query("select 1").send().await.unwrap_err(),
    ] {
        assert_eq!(err.sent(), Sent::No, "{err}");
        assert!(matches!(err, Error::InvalidInput(_)), "{err}");
    }

    // A parameter without a value names it; positional parameters are refused.
    let err = c
        .sql("shop")
        .query("select :missing")
        .send()
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(400));
    assert!(
        err.body()
            .unwrap()
            .field_errors()
            .contains_key("params_obj"),
        "{err}"
    );
    assert!(err.to_string().contains(":missing"), "{err}");
    let err = c.sql("shop").query("select ?").send().await.unwrap_err();
    assert!(
        err.body().unwrap().field_errors().contains_key("query"),
        "{err}"
    );
    // An engine error is a field error too.
    let err = c
        .sql("shop")
        .query("select * from nowhere")
        .send()
        .await
        .unwrap_err();
    assert!(err.to_string().contains("nowhere"), "{err}");

    // Malformed bodies, sent raw.
    for (body, field) in [
        (json!({}), "query"),
        (json!({"query": ""}), "query"),
        (json!({"query": 1}), "query"),
        (json!({"query": null}), "query"),
        (json!({"query": "select 1", "v": "two"}), "v"),
        (
            json!({"query": "select 1", "v": 2, "params_obj": [1]}),
            "params_obj",
        ),
        (
            json!({"query": "select 1", "v": 2, "params_obj": "x"}),
            "params_obj",
        ),
        (
            json!({"query": "select 1", "filters": [{"name": "a"}]}),
            "filters",
        ),
        (json!({"query": "select 1", "order_by": null}), "order_by"),
        (json!({"query": "select 'an update here'"}), "query"),
    ] {
        let (status, reply) = raw(&emulator, "POST", &url, Some(&token), &body.to_string()).await;
        assert_eq!(status, 400, "{body}: {reply}");
        assert!(reply[field].is_array(), "{body}: {reply}");
        assert_eq!(reply["error_code"], "invalid");
    }
    let (status, _) = raw(&emulator, "POST", &url, Some(&token), "not json").await;
    assert_eq!(status, 400);
    // Without params_obj and v, with extra keys: fine.
    let (status, reply) = raw(
        &emulator,
        "POST",
        &url,
        Some(&token),
        r#"{"query": "select 1 as a", "extra": true}"#,
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(
        reply,
        json!({"columns": ["a"], "data": [[1]], "row_count": 1})
    );

    // Credentials: none 401; the tools token is not a resource token (403); unknown resource 404.
    let (status, _) = raw(&emulator, "POST", &url, None, r#"{"query":"select 1"}"#).await;
    assert_eq!(status, 401);
    let (status, _) = raw(
        &emulator,
        "POST",
        &url,
        Some(emulator.tools_token()),
        r#"{"query":"select 1"}"#,
    )
    .await;
    assert_eq!(status, 403);
    let err = c
        .sql("shop")
        .token(emulator.tools_token())
        .query("select 1")
        .send()
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(403));
    let err = c.sql("nope").query("select 1").send().await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    // The API key serves SQL too.
    let key_only = svc_api::Client::builder()
        .project("demo")
        .api_key(emulator.api_key())
        .api_base_url(emulator.api_base_url())
        .build()
        .unwrap();
    let n: Vec<i64> = key_only
        .sql("shop")
        .query("select count(*) from products")
        .rows()
        .await
        .unwrap();
    assert_eq!(n, vec![50]);
}
