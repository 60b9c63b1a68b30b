//! Fixtures from files: records of JSON, NDJSON and CSV files loaded into a resource's models
//! at start, typed by the model's fields as a create's body is; a bad fixture stops the start
//! naming its file, line and field; a reset puts the fixtures back.

mod common;

use std::path::Path;

use common::{Call, TempDir, send};
use http::Method;
use serde_json::{Value, json};
use svc_emulator::{
    Emulator, EmulatorConfig, EmulatorError, FixtureError, Fixtures, FixturesOnRows, ProjectConfig,
    ProjectsConfig, ResourceConfig,
};

const SCHEMA: &str = "
    CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL,
        vip BOOLEAN NOT NULL DEFAULT 0, joined DATETIME);
    CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
        total NUMERIC(10, 2), quantity INTEGER NOT NULL DEFAULT 1, note TEXT);
    CREATE TABLE products (sku TEXT PRIMARY KEY, price REAL, stock INTEGER DEFAULT 7,
        tags JSON);
";

const CUSTOMERS_JSON: &str = r#"[
  {"id": 1, "name": "Ada", "vip": true, "joined": "2026-01-02T03:04:05"},
  {"id": 2, "name": "Grace",
   "vip": false}
]
"#;

const ORDERS_CSV: &str = "id,customer_id,total,quantity,note\n\
    10,1,12.50,3,\"first, with a comma\"\n\
    11,2,7,,\n\
    12,1,0.10,2,\"two\nlines\"\n";

const PRODUCTS_NDJSON: &str = r#"{"sku": "A-1", "price": 9.5, "tags": ["red", "big"]}

{"sku": "B-2", "price": 3, "stock": 0, "tags": {"k": null}}
"#;

fn write(dir: &TempDir, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn shop(fixtures: Option<Fixtures>) -> ProjectsConfig {
    let mut shop = ResourceConfig::new("shop", "tok_shop").seed_sql(SCHEMA);
    if let Some(fixtures) = fixtures {
        shop = shop.fixtures(fixtures);
    }
    ProjectsConfig::new(vec![
        ProjectConfig::new("demo")
            .api_key("key_demo")
            .resource(shop),
    ])
}

async fn start(config: ProjectsConfig) -> Result<Emulator, EmulatorError> {
    Emulator::start(EmulatorConfig::default().projects(config)).await
}

async fn call(emu: &Emulator, method: Method, path: &str, body: Option<Value>) -> Value {
    let mut c = Call::new(method.clone(), path).bearer(emu.api_key());
    if let Some(body) = body {
        c = c.json(&body);
    }
    let r = send(emu, c).await;
    assert!(r.status.is_success(), "{method} {path}: {r:?}");
    if r.body.is_empty() {
        Value::Null
    } else {
        r.json()
    }
}

/// Every record of `model`, by key ascending.
async fn all(emu: &Emulator, model: &str) -> Value {
    let path = format!("/projects/demo/prod/shop/models/{model}?_no_pagination=1");
    let mut records = call(emu, Method::GET, &path, None).await;
    let list = records.as_array_mut().unwrap();
    list.reverse();
    records
}

fn fixture_error(result: Result<Emulator, EmulatorError>) -> FixtureError {
    match result {
        Err(EmulatorError::Fixture(e)) => e,
        Err(other) => panic!("not a fixture error: {other}"),
        Ok(_) => panic!("the emulator started"),
    }
}

fn the_files(dir: &TempDir) -> Fixtures {
    Fixtures::files([
        ("customers", write(dir, "customers.json", CUSTOMERS_JSON)),
        ("orders", write(dir, "orders.csv", ORDERS_CSV)),
        ("products", write(dir, "products.ndjson", PRODUCTS_NDJSON)),
    ])
}

#[tokio::test]
async fn json_ndjson_and_csv_records_are_typed_by_the_model_fields() {
    let dir = TempDir::new();
    let emu = start(shop(Some(the_files(&dir)))).await.unwrap();
    assert!(emu.warnings().is_empty(), "{:?}", emu.warnings());

    let customers = all(&emu, "customers").await;
    assert_eq!(
        customers,
        json!([
            {"id": 1, "name": "Ada", "vip": true, "joined": "2026-01-02T03:04:05"},
            {"id": 2, "name": "Grace", "vip": false, "joined": null},
        ])
    );
    // JSON values as given: the records are those a POST of the same body makes.
    let products = all(&emu, "products").await;
    assert_eq!(products.as_array().unwrap().len(), 2);
    assert_eq!(products[0]["stock"], 7);
    assert_eq!(products[0]["tags"], json!(["red", "big"]));
    assert_eq!(products[1]["stock"], 0);
    let path = "/projects/demo/prod/shop/models/products";
    for (i, line) in PRODUCTS_NDJSON
        .lines()
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        let mut body: Value = serde_json::from_str(line).unwrap();
        body["sku"] = json!(format!("posted-{i}"));
        let mut posted = call(&emu, Method::POST, path, Some(body)).await;
        posted["sku"] = products[i]["sku"].clone();
        assert_eq!(posted, products[i], "line {i}");
    }

    // A CSV cell is text the field reads, as a create's JSON string; an empty cell is left
    // out (the default applies): the records are those a POST of the same text makes.
    let orders = all(&emu, "orders").await;
    assert_eq!(orders.as_array().unwrap().len(), 3);
    assert_eq!(orders[0]["note"], "first, with a comma");
    assert_eq!(orders[1]["quantity"], 1);
    assert_eq!(orders[1]["note"], Value::Null);
    assert_eq!(orders[2]["note"], "two\nlines");
    let rows = [
        json!({"id": "20", "customer_id": "1", "total": "12.50", "quantity": "3", "note": "first, with a comma"}),
        json!({"id": "21", "customer_id": "2", "total": "7"}),
        json!({"id": "22", "customer_id": "1", "total": "0.10", "quantity": "2", "note": "two\nlines"}),
    ];
    for (i, body) in rows.into_iter().enumerate() {
        let mut posted = call(
            &emu,
            Method::POST,
            "/projects/demo/prod/shop/models/orders",
            Some(body),
        )
        .await;
        posted["id"] = orders[i]["id"].clone();
        assert_eq!(posted, orders[i], "row {i}");
    }
}

#[tokio::test]
async fn a_directory_from_the_config_file_and_the_fixtures_flag() {
    let dir = TempDir::new();
    write(&dir, "fixtures/customers.json", CUSTOMERS_JSON);
    write(&dir, "fixtures/orders.csv", ORDERS_CSV);
    let config = json!({"projects": [{
        "name": "demo",
        "api_keys": ["key_demo"],
        "resources": [{
            "name": "shop", "token": "tok_shop", "seed_sql": SCHEMA, "fixtures": "fixtures/"
        }]
    }]});
    let file = write(&dir, "config.json", &config.to_string());
    let emu = Emulator::start(EmulatorConfig::default().config_file(&file))
        .await
        .unwrap();
    assert_eq!(all(&emu, "customers").await.as_array().unwrap().len(), 2);
    assert_eq!(all(&emu, "orders").await.as_array().unwrap().len(), 3);
    assert_eq!(all(&emu, "products").await, json!([]));
    drop(emu);

    // `--fixtures DIR`: DIR/<resource>/, which replaces the config's fixtures.
    write(&dir, "flag/shop/products.ndjson", PRODUCTS_NDJSON);
    let config = EmulatorConfig::default()
        .config_file(&file)
        .fixtures_dir(dir.join("flag"));
    let emu = Emulator::start(config).await.unwrap();
    assert_eq!(all(&emu, "customers").await, json!([]));
    assert_eq!(all(&emu, "products").await.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_reset_puts_the_fixtures_back() {
    let dir = TempDir::new();
    let emu = start(shop(Some(the_files(&dir)))).await.unwrap();
    let before = (all(&emu, "customers").await, all(&emu, "orders").await);
    let orders = "/projects/demo/prod/shop/models/orders";
    call(&emu, Method::DELETE, &format!("{orders}/10"), None).await;
    call(
        &emu,
        Method::PATCH,
        &format!("{orders}/11"),
        Some(json!({"note": "changed"})),
    )
    .await;
    call(&emu, Method::POST, orders, Some(json!({"total": 1}))).await;
    let customers = "/projects/demo/prod/shop/models/customers";
    call(&emu, Method::DELETE, &format!("{customers}/2"), None).await;
    assert_ne!(
        (all(&emu, "customers").await, all(&emu, "orders").await),
        before
    );

    emu.reset().await.unwrap();
    assert_eq!(
        (all(&emu, "customers").await, all(&emu, "orders").await),
        before
    );
    // The next key is the one the first create after start got.
    let created = call(&emu, Method::POST, orders, Some(json!({"total": 1}))).await;
    assert_eq!(created["id"], 13);
}

/// A resource whose `orders` holds a row of seed_sql (id 99), with the three fixture files and
/// `on_rows`.
fn seeded(dir: &TempDir, on_rows: FixturesOnRows) -> ProjectsConfig {
    let seeded = ResourceConfig::new("shop", "tok_shop")
        .seed_sql(format!(
            "{SCHEMA} INSERT INTO orders (id, total) VALUES (99, 1);"
        ))
        .fixtures(the_files(dir))
        .fixtures_on_rows(on_rows);
    ProjectsConfig::new(vec![
        ProjectConfig::new("demo")
            .api_key("key_demo")
            .resource(seeded),
    ])
}

#[tokio::test]
async fn a_model_that_already_has_records_stops_the_start_unless_told_to_skip_or_add() {
    // By default: the start stops, naming the model and the two ways on.
    let dir = TempDir::new();
    let e = fixture_error(start(seeded(&dir, FixturesOnRows::default())).await);
    assert_eq!(e.model(), Some("orders"));
    let message = e.to_string();
    for part in [
        "model \"orders\" already holds records",
        "resource \"shop\"",
        "\"fixtures_on_rows\": \"skip\"",
        "\"add\"",
        "--fixtures-on-rows",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }

    // Skip: none of the resource's fixtures, the seeded row kept, nothing to warn of.
    let emu = start(seeded(&dir, FixturesOnRows::Skip)).await.unwrap();
    assert_eq!(all(&emu, "customers").await, json!([]));
    assert_eq!(all(&emu, "orders").await.as_array().unwrap().len(), 1);
    assert!(emu.warnings().is_empty(), "{:?}", emu.warnings());
    drop(emu);

    // Add: every fixture beside the seeded row (three orders in the file, and id 99).
    let emu = start(seeded(&dir, FixturesOnRows::Add)).await.unwrap();
    assert_eq!(all(&emu, "customers").await.as_array().unwrap().len(), 2);
    assert_eq!(all(&emu, "orders").await.as_array().unwrap().len(), 4);
    drop(emu);

    // The emulator's setting (--fixtures-on-rows) replaces the resource's.
    let config = EmulatorConfig::default()
        .projects(seeded(&dir, FixturesOnRows::Stop))
        .fixtures_on_rows(FixturesOnRows::Skip);
    let emu = Emulator::start(config).await.unwrap();
    assert_eq!(all(&emu, "orders").await.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_data_path_kept_across_starts_skips_the_fixtures_when_told_to() {
    // Loaded at the first start; the second finds them (or what became of them): it stops
    // by default, and with skip keeps what the first start left.
    let dir = TempDir::new();
    let data = dir.join("data/meta.sqlite");
    let config = |on_rows: FixturesOnRows| {
        EmulatorConfig::default()
            .data_path(&data)
            .projects(ProjectsConfig::new(vec![
                ProjectConfig::new("demo").api_key("key_demo").resource(
                    ResourceConfig::new("shop", "tok_shop")
                        .seed_sql(SCHEMA)
                        .fixtures(the_files(&dir))
                        .fixtures_on_rows(on_rows),
                ),
            ]))
    };
    let emu = Emulator::start(config(FixturesOnRows::Stop)).await.unwrap();
    assert!(emu.warnings().is_empty(), "{:?}", emu.warnings());
    call(
        &emu,
        Method::DELETE,
        "/projects/demo/prod/shop/models/orders/10",
        None,
    )
    .await;
    emu.shutdown().await;
    let e = fixture_error(Emulator::start(config(FixturesOnRows::Stop)).await);
    assert!(e.to_string().contains("already hold"), "{e}");
    let emu = Emulator::start(config(FixturesOnRows::Skip)).await.unwrap();
    assert_eq!(all(&emu, "orders").await.as_array().unwrap().len(), 2);
    assert_eq!(all(&emu, "customers").await.as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn a_refused_record_leaves_nothing_in_a_kept_database() {
    // SQLite loads a file's records in one transaction: the start that failed at line 3
    // wrote nothing, so the next start (the file fixed) finds the models empty and loads.
    let dir = TempDir::new();
    let csv = write(&dir, "orders.csv", "id,quantity\n1,2\n2,many\n");
    let config = || {
        EmulatorConfig::default()
            .data_path(dir.join("data/meta.sqlite"))
            .projects(shop(Some(Fixtures::files([("orders", &csv)]))))
    };
    let e = fixture_error(Emulator::start(config()).await);
    assert_eq!(e.line(), Some(3));
    std::fs::write(&csv, "id,quantity\n1,2\n2,3\n").unwrap();
    let emu = Emulator::start(config()).await.unwrap();
    assert!(emu.warnings().is_empty(), "{:?}", emu.warnings());
    assert_eq!(all(&emu, "orders").await.as_array().unwrap().len(), 2);
}

/// Starts with one fixture file `name` holding `text` (the model is the file's stem) and
/// returns the start's error.
async fn refused(name: &str, text: &str) -> FixtureError {
    let dir = TempDir::new();
    let path = write(&dir, name, text);
    let model = Path::new(name).file_stem().unwrap().to_str().unwrap();
    fixture_error(start(shop(Some(Fixtures::files([(model, &path)])))).await)
}

fn assert_names(
    e: &FixtureError,
    file: &str,
    line: Option<usize>,
    field: Option<&str>,
    says: &str,
) {
    let text = e.to_string();
    assert!(e.file().ends_with(file), "{text}");
    assert!(text.contains(file), "{text}");
    assert_eq!(e.line(), line, "{text}");
    assert_eq!(e.field(), field, "{text}");
    assert!(text.contains(says), "{text}");
}

#[tokio::test]
async fn a_bad_fixture_stops_the_start_naming_file_line_and_field() {
    // A field the model lacks: a CSV header's column, a JSON record's key.
    let e = refused("orders.csv", "id,totl\n1,2\n").await;
    assert_names(&e, "orders.csv", Some(1), Some("totl"), "has no such field");
    assert!(
        e.to_string().contains("its fields: id, customer_id, total"),
        "{e}"
    );
    let e = refused(
        "customers.json",
        "[\n{\"id\": 1, \"name\": \"a\"},\n{\"id\": 2,\n \"name\": \"b\", \"vipp\": true}]",
    )
    .await;
    assert_names(
        &e,
        "customers.json",
        Some(3),
        Some("vipp"),
        "has no such field",
    );
    let e = refused(
        "customers.ndjson",
        "{\"name\": \"a\"}\n\n{\"nme\": \"b\"}\n",
    )
    .await;
    assert_names(
        &e,
        "customers.ndjson",
        Some(3),
        Some("nme"),
        "has no such field",
    );

    // A value the field refuses: the create's own 400 message.
    let e = refused("orders.csv", "id,quantity\n1,2\n2,many\n").await;
    assert_names(
        &e,
        "orders.csv",
        Some(3),
        Some("quantity"),
        "the record was refused",
    );
    let e = refused(
        "customers.json",
        "[{\"id\": 1, \"name\": \"a\"},\n {\"id\": 2, \"name\": \"b\", \"joined\": \"soon\"}]",
    )
    .await;
    assert_names(
        &e,
        "customers.json",
        Some(2),
        Some("joined"),
        "date has wrong format",
    );
    // Where the database's answer names no field, the field its message is about.
    let e = refused("customers.ndjson", "{\"id\": 1}\n").await;
    assert_names(
        &e,
        "customers.ndjson",
        Some(1),
        Some("name"),
        "NOT NULL constraint failed: customers.name",
    );
    let e = refused("products.csv", "sku,price\nA,1\nB,abc\n").await;
    assert_names(
        &e,
        "products.csv",
        Some(3),
        Some("price"),
        "convert string to float: 'abc'",
    );

    // Text that is no fixture.
    let e = refused("orders.csv", "id,note\n1,\"open\n2,x\n").await;
    assert_names(&e, "orders.csv", Some(2), None, "not closed");
    let e = refused("orders.csv", "id,note\n1,a\n2,b,c\n").await;
    assert_names(
        &e,
        "orders.csv",
        Some(3),
        None,
        "3 cells where the header names 2",
    );
    let e = refused("orders.json", "[{\"id\": 1},\n{\"id\": 2,}]").await;
    assert_names(&e, "orders.json", Some(2), None, "element 2 is not JSON");
    let e = refused("orders.ndjson", "{\"id\": 1}\n[2]\n").await;
    assert_names(&e, "orders.ndjson", Some(2), None, "not a JSON object");

    // A model the resource lacks, a file that is not there, a name of no format.
    let e = refused("ordres.csv", "id\n1\n").await;
    assert_names(&e, "ordres.csv", None, None, "no model \"ordres\"");
    assert!(e.to_string().contains("customers, orders, products"), "{e}");
    let dir = TempDir::new();
    let missing = dir.join("orders.csv");
    let e = fixture_error(start(shop(Some(Fixtures::files([("orders", &missing)])))).await);
    assert_names(&e, "orders.csv", None, None, "cannot read it");
    let e = refused("orders.txt", "id\n1\n").await;
    assert_names(&e, "orders.txt", None, None, "cannot tell its format");
    let e = fixture_error(start(shop(Some(Fixtures::dir(dir.join("none"))))).await);
    assert_names(&e, "none", None, None, "cannot read the fixtures directory");
}

/// The start's cost of 10,000 CSV fixture rows on SQLite, beside the same start without them,
/// in memory and with a data file (a new one each start):
/// `cargo test --release -p svc-emulator --test fixtures -- --ignored --nocapture`. Prints
/// the medians; asserts nothing about time.
#[tokio::test(flavor = "multi_thread")]
#[ignore = "a measurement: run it in release, by hand"]
async fn start_time_with_10k_csv_rows() {
    let dir = TempDir::new();
    let mut csv = String::from("id,customer_id,total,quantity,note\n");
    for i in 1..=10_000 {
        let (total, cents, quantity) = (i % 977, i % 100, i % 9 + 1);
        csv.push_str(&format!(
            "{i},{},{total}.{cents:02},{quantity},note {i}\n",
            i % 50
        ));
    }
    let orders = write(&dir, "orders.csv", &csv);
    for on_disk in [false, true] {
        let mut with = Vec::new();
        let mut without = Vec::new();
        for round in 0..12 {
            for (fixtures, times) in [(true, &mut with), (false, &mut without)] {
                let files = fixtures.then(|| Fixtures::files([("orders", &orders)]));
                let mut config = EmulatorConfig::default().projects(shop(files));
                if on_disk {
                    config =
                        config.data_path(dir.join(&format!("data-{round}-{fixtures}/meta.sqlite")));
                }
                let started = std::time::Instant::now();
                let emu = Emulator::start(config).await.unwrap();
                let took = started.elapsed();
                if round > 1 {
                    times.push(took);
                }
                if fixtures && round == 0 {
                    let path = "/projects/demo/prod/shop/models/orders";
                    let r = send(&emu, Call::get(path).bearer(emu.api_key())).await;
                    assert_eq!(r.json()["count"], 10_000);
                }
                emu.shutdown().await;
            }
        }
        with.sort();
        without.sort();
        println!(
            "Emulator::start, SQLite {}: with 10k CSV fixture rows {:?} (median of {}), \
             without {:?}",
            if on_disk {
                "with a new data file"
            } else {
                "in memory"
            },
            with[with.len() / 2],
            with.len(),
            without[without.len() / 2]
        );
    }
}
