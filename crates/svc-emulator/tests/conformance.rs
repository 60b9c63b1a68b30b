//! The conformance suite: each rule of the records, aggregate, group, SQL and reload routes is
//! written once, as a function of a [`Target`], and runs against every backend the emulator
//! serves. The tables are the same on each (made by each database's own DDL); the answers must
//! be the same, because the data engine gives the same answers over each for these requests.
//!
//! The SQLite half runs in `cargo test`; the PostgreSQL half needs a server (a throwaway
//! cluster from crate `pg-cluster`), so it is `#[ignore]`d there and run by `cargo xtask
//! postgres`, a step of `.ci/run`, which fails when no server can be had. The MySQL half
//! likewise needs MariaDB (crate `maria-server`) and is run by `cargo xtask mysql`. A new backend adds
//! its `Target` maker and one line in [`conformance!`].

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Call, Reply, send};
use http::Method;
use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};

const TOKEN: &str = "conformance-token";
const BASE: &str = "/projects/demo/prod/shop";

/// The rows every backend starts with: five people, one without an age and one without a city,
/// two cities that differ only by case. Keys 1 to 5 are given by the database, in this order.
const ROWS: &str = "INSERT INTO people (name, city, age) VALUES
  ('Alice', 'Paris', 30), ('bob', 'Berlin', NULL), ('Carol', 'paris', 45),
  ('Dave', NULL, 18), ('Eve', 'Rome', 30);";

/// An emulator serving the rows from one backend, as resource `shop`.
struct Target {
    emulator: Emulator,
    /// A database of its own on a shared server, dropped with the target.
    _database: Option<maria_server::Database<'static>>,
}

impl Target {
    async fn serving(resource: ResourceConfig) -> Self {
        let projects = ProjectsConfig::new(vec![ProjectConfig::new("demo").resource(resource)]);
        let emulator = Emulator::start(EmulatorConfig::default().projects(projects))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        Self {
            emulator,
            _database: None,
        }
    }

    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> Reply {
        let mut call = Call::new(method, format!("{BASE}/{path}")).auth(TOKEN);
        if let Some(body) = body {
            call = call.json(&body);
        }
        send(&self.emulator, call).await
    }

    async fn get(&self, path: &str) -> Reply {
        self.call(Method::GET, path, None).await
    }

    /// The JSON of a successful answer.
    async fn ok(&self, path: &str) -> Value {
        let reply = self.get(path).await;
        success(&reply)
    }

    /// The keys of a page, in order.
    async fn ids(&self, query: &str) -> Vec<i64> {
        let page = self.ok(&format!("models/people?{query}")).await;
        page["results"]
            .as_array()
            .unwrap_or_else(|| panic!("not a page: {page}"))
            .iter()
            .map(|r| r["id"].as_i64().unwrap_or_else(|| panic!("no id: {r}")))
            .collect()
    }
}

fn success(reply: &Reply) -> Value {
    assert!(
        reply.status.is_success(),
        "status {}: {}",
        reply.status,
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()
}

/// A SQLite file database (the default backend).
async fn sqlite() -> Target {
    let seed = format!(
        "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, age INTEGER);\n{ROWS}"
    );
    Target::serving(ResourceConfig::new("shop", TOKEN).seed_sql(seed)).await
}

/// A database of its own on the shared throwaway PostgreSQL cluster.
async fn postgres() -> Target {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let cluster = pg_cluster::Cluster::shared().unwrap_or_else(|e| panic!("{e}"));
    let name = format!(
        "conf{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    cluster
        .create_database(&name)
        .unwrap_or_else(|e| panic!("{e}"));
    cluster
        .psql(
            &name,
            &format!(
                "CREATE TABLE people (id serial PRIMARY KEY, name text NOT NULL, city text, age integer);\n{ROWS}"
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    Target::serving(ResourceConfig::new("shop", TOKEN).database(cluster.url(&name))).await
}

/// A database of its own on the shared MariaDB server (crate `maria-server`), dropped with the
/// target. `city` has a binary collation: with MySQL's default `_ci` ones `exact` folds case,
/// for the engine too (tests/mysql.rs), and the rules here compare case-sensitively.
async fn mysql() -> Target {
    let server = maria_server::Server::shared().unwrap_or_else(|e| panic!("{e}"));
    let database = server.database("conf").unwrap_or_else(|e| panic!("{e}"));
    database
        .sql(&format!(
            "CREATE TABLE people (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL, \
             city VARCHAR(50) COLLATE utf8mb4_bin, age INT);\n{ROWS}"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut target =
        Target::serving(ResourceConfig::new("shop", TOKEN).database(database.url())).await;
    target._database = Some(database);
    target
}

/// One test per rule and backend: `sqlite::RULE`, `postgres::RULE` and `mysql::RULE`.
macro_rules! conformance {
    ($($rule:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $rule() {
                    super::$rule(&super::sqlite().await).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                #[ignore = "needs PostgreSQL: run with --ignored (cargo xtask ci does)"]
                async fn $rule() {
                    super::$rule(&super::postgres().await).await;
                }
            )*
        }
        mod mysql {
            $(
                #[tokio::test]
                #[ignore = "needs MariaDB: run with --ignored (cargo xtask ci does)"]
                async fn $rule() {
                    super::$rule(&super::mysql().await).await;
                }
            )*
        }
    };
}

conformance!(
    a_list_is_newest_key_first_in_the_envelope,
    pages_link_to_their_neighbours,
    a_page_past_the_end_lists_nothing_with_the_count,
    filters_read_as_the_engine_reads_them,
    order_by_then_key_descending,
    search_matches_numbers_whole_and_text_in_part,
    a_record_is_retrieved_by_key_or_404,
    create_patch_delete,
    aggregates,
    groups_sorted_by_key,
    sql_answers_columns_and_rows,
    reload_reads_the_schema_again,
    links_keep_the_query_sorted_and_encoded_as_python_does,
    paging_numbers_are_read_as_pythons_int,
    repeated_keys_take_the_first_value_and_in_takes_them_all,
    mistakes_are_refused_with_what_to_fix,
    a_missing_record_is_404_for_every_verb,
    counts_follow_the_filters,
);

async fn a_list_is_newest_key_first_in_the_envelope(t: &Target) {
    let page = t.ok("models/people").await;
    assert_eq!(page["count"], 5);
    assert_eq!(page["next"], Value::Null);
    assert_eq!(page["previous"], Value::Null);
    assert_eq!(t.ids("").await, [5, 4, 3, 2, 1]);
    let first = &page["results"][0];
    assert_eq!(
        first,
        &json!({"id": 5, "name": "Eve", "city": "Rome", "age": 30})
    );
    assert_eq!(t.get("models/nobody").await.status, 404);
}

async fn pages_link_to_their_neighbours(t: &Target) {
    let page = t.ok("models/people?_per_page=2&page=2").await;
    assert_eq!(t.ids("_per_page=2&page=2").await, [3, 2]);
    let next = page["next"].as_str().unwrap_or_else(|| panic!("{page}"));
    let previous = page["previous"]
        .as_str()
        .unwrap_or_else(|| panic!("{page}"));
    assert!(
        next.ends_with("/models/people?_per_page=2&page=3"),
        "{next}"
    );
    // The first page's link has no `page`.
    assert!(
        previous.ends_with("/models/people?_per_page=2"),
        "{previous}"
    );
    // `_per_page` is clamped to 1..=10000.
    assert_eq!(t.ids("_per_page=0").await, [5]);
}

async fn a_page_past_the_end_lists_nothing_with_the_count(t: &Target) {
    let page = t.ok("models/people?page=9").await;
    assert_eq!(page["count"], 5);
    assert_eq!(page["results"], json!([]));
    assert_eq!(page["next"], Value::Null);
}

async fn filters_read_as_the_engine_reads_them(t: &Target) {
    assert_eq!(t.ids("age__gte=30").await, [5, 3, 1]);
    assert_eq!(t.ids("age=30").await, [5, 1]);
    // Numbers are read as floats.
    assert_eq!(t.ids("age=30.0").await, [5, 1]);
    assert_eq!(t.ids("age__in=18,45").await, [4, 3]);
    assert_eq!(t.ids("age__isnull=true").await, [2]);
    // `NOT (...)` drops the NULL age too.
    assert_eq!(t.ids("exclude__age__gte=30").await, [4]);
    assert_eq!(t.ids("name__icontains=AL").await, [1]);
    assert_eq!(t.ids("name__istartswith=b").await, [2]);
    // `exact` on text is case-sensitive.
    assert_eq!(t.ids("city=paris").await, [3]);
    // An empty value is no filter.
    assert_eq!(t.ids("city=").await, [5, 4, 3, 2, 1]);
    let count = t.ok("models/people?city__isnull=false&age__lt=40").await;
    assert_eq!(count["count"], 2);
}

async fn order_by_then_key_descending(t: &Target) {
    // Ties (the two aged 30) are broken by the key, descending.
    assert_eq!(t.ids("_order_by=age&age__isnull=false").await, [4, 5, 1, 3]);
    assert_eq!(
        t.ids("_order_by=-age&age__isnull=false").await,
        [3, 5, 1, 4]
    );
    assert_eq!(t.ids("_order_by=id").await, [1, 2, 3, 4, 5]);
}

async fn search_matches_numbers_whole_and_text_in_part(t: &Target) {
    assert_eq!(t.ids("_search=30").await, [5, 1]);
    assert_eq!(t.ids("_search=ri").await, [3, 1]);
    // The key is a number column too; no age is 3, and `30` is not matched in part.
    assert_eq!(t.ids("_search=3").await, [3]);
    assert_eq!(t.ids("_search=4").await, [4]);
}

async fn a_record_is_retrieved_by_key_or_404(t: &Target) {
    assert_eq!(
        t.ok("models/people/3").await,
        json!({"id": 3, "name": "Carol", "city": "paris", "age": 45})
    );
    assert_eq!(t.get("models/people/99").await.status, 404);
    // The list's filters apply to the one record.
    assert_eq!(t.get("models/people/3?age__lt=40").await.status, 404);
}

async fn create_patch_delete(t: &Target) {
    let created = t
        .call(
            Method::POST,
            "models/people",
            Some(json!({"name": "Finn", "age": 7})),
        )
        .await;
    assert_eq!(created.status, 201);
    assert_eq!(
        created.json(),
        json!({"id": 6, "name": "Finn", "city": null, "age": 7})
    );
    let patched = t
        .call(
            Method::PATCH,
            "models/people/6",
            Some(json!({"city": "Oslo"})),
        )
        .await;
    assert_eq!(
        success(&patched),
        json!({"id": 6, "name": "Finn", "city": "Oslo", "age": 7})
    );
    let deleted = t.call(Method::DELETE, "models/people/6", None).await;
    assert_eq!(deleted.status, 204);
    assert!(deleted.body.is_empty());
    assert_eq!(t.get("models/people/6").await.status, 404);
    assert_eq!(t.ok("models/people").await["count"], 5);
}

async fn aggregates(t: &Target) {
    let y = |q: &'static str| async move {
        t.ok(&format!("models/people/aggregate?{q}")).await["y_func"].clone()
    };
    assert_eq!(y("_y_func=count").await, json!(5));
    assert_eq!(y("_y_func=count&age__gte=30").await, json!(3));
    assert_eq!(y("_y_func=max&_y_column=age").await, json!(45));
    assert_eq!(y("_y_func=min&_y_column=age").await, json!(18));
    assert_eq!(y("_y_func=max&_y_column=age&age__gt=99").await, Value::Null);
}

async fn groups_sorted_by_key(t: &Target) {
    assert_eq!(
        t.ok("models/people/group?_x_column=age&_y_func=count&age__isnull=false")
            .await,
        json!([
            {"group": 18, "y_func": 1},
            {"group": 30, "y_func": 2},
            {"group": 45, "y_func": 1},
        ])
    );
}

async fn sql_answers_columns_and_rows(t: &Target) {
    let body = json!({
        "query": "select name from people where age >= :a order by id",
        "params_obj": {"a": 30},
    });
    let answer = success(&t.call(Method::POST, "sql_get_query", Some(body)).await);
    assert_eq!(answer["columns"], json!(["name"]));
    assert_eq!(answer["data"], json!([["Alice"], ["Carol"], ["Eve"]]));
    // Read-only: a write is refused, and nothing changed.
    let write = json!({"query": "delete from people"});
    let refused = t.call(Method::POST, "sql_get_query", Some(write)).await;
    assert_eq!(
        refused.status,
        400,
        "{}",
        String::from_utf8_lossy(&refused.body)
    );
    assert_eq!(t.ok("models/people").await["count"], 5);
}

async fn reload_reads_the_schema_again(t: &Target) {
    let reply = t.call(Method::POST, "reload", None).await;
    assert!(reply.status.is_success(), "{}", reply.status);
    assert_eq!(t.ids("").await, [5, 4, 3, 2, 1]);
}

async fn links_keep_the_query_sorted_and_encoded_as_python_does(t: &Target) {
    // Keys sorted, a space as `+`, `page` last in its sorted place and absent from page 1.
    let page = t
        .ok("models/people?page=2&name__icontains=e&_per_page=1&city__isnull=false")
        .await;
    let next = page["next"].as_str().unwrap_or_else(|| panic!("{page}"));
    assert!(
        next.ends_with("/models/people?_per_page=1&city__isnull=false&name__icontains=e&page=3"),
        "{next}"
    );
    let previous = page["previous"]
        .as_str()
        .unwrap_or_else(|| panic!("{page}"));
    assert!(
        previous.ends_with("/models/people?_per_page=1&city__isnull=false&name__icontains=e"),
        "{previous}"
    );
    let spaced = t.ok("models/people?_per_page=1&_search=a%20b").await;
    assert_eq!(spaced["count"], 0);
    let page = t.ok("models/people?_per_page=1&city=Rome%20x").await;
    assert_eq!(page["next"], Value::Null);
    let page = t.ok("models/people?_per_page=2&name__icontains=%20").await;
    assert_eq!(page["count"], 0);
    let page = t.ok("models/people?_per_page=2&exclude__name=a%20b").await;
    let next = page["next"].as_str().unwrap_or_else(|| panic!("{page}"));
    assert!(
        next.ends_with("?_per_page=2&exclude__name=a+b&page=2"),
        "{next}"
    );
}

async fn paging_numbers_are_read_as_pythons_int(t: &Target) {
    // Digits of any script, white space around, underscores between digits.
    assert_eq!(t.ids("_per_page=%D9%A2").await, [5, 4], "Arabic-Indic two");
    assert_eq!(
        t.ids("_per_page=%EF%BC%93").await,
        [5, 4, 3],
        "fullwidth three"
    );
    assert_eq!(t.ids("_per_page=2&page=%20%2B2%20").await, [3, 2]);
    assert_eq!(t.ids("_per_page=1_0").await, [5, 4, 3, 2, 1]);
    // Anything else reads as the default.
    assert_eq!(t.ids("_per_page=two").await, [5, 4, 3, 2, 1]);
    assert_eq!(t.ids("_per_page=2&page=last").await, [5, 4]);
    // Out of range: clamped.
    assert_eq!(t.ids("_per_page=2&page=-3").await, [5, 4]);
    assert_eq!(t.ids("_per_page=20000").await, [5, 4, 3, 2, 1]);
}

async fn repeated_keys_take_the_first_value_and_in_takes_them_all(t: &Target) {
    assert_eq!(t.ids("age=30&age=45").await, [5, 1]);
    // A repeated `in` key gives one item each, taken whole (no comma list).
    assert_eq!(t.ids("age__in=18&age__in=45").await, [4, 3]);
    assert_eq!(
        t.get("models/people?age__in=18&age__in=45,30").await.status,
        400
    );
    // The last `_per_page` and `page` count.
    assert_eq!(t.ids("_per_page=5&_per_page=1").await, [5]);
}

async fn mistakes_are_refused_with_what_to_fix(t: &Target) {
    for (query, names) in [
        ("nosuch=1", "nosuch"),
        ("age__nolookup=1", "nolookup"),
        ("age__gt=abc", "age__gt"),
        ("_order_by=nosuch", "nosuch"),
    ] {
        let reply = t.get(&format!("models/people?{query}")).await;
        assert_eq!(reply.status, 400, "{query}");
        let body = String::from_utf8_lossy(&reply.body).into_owned();
        assert!(body.contains(names), "{query}: {body}");
    }
}

async fn a_missing_record_is_404_for_every_verb(t: &Target) {
    assert_eq!(t.get("models/people/99").await.status, 404);
    let patch = t
        .call(
            Method::PATCH,
            "models/people/99",
            Some(json!({"city": "x"})),
        )
        .await;
    assert_eq!(patch.status, 404);
    assert_eq!(
        t.call(Method::DELETE, "models/people/99", None)
            .await
            .status,
        404
    );
    assert_eq!(t.ok("models/people").await["count"], 5);
}

async fn counts_follow_the_filters(t: &Target) {
    let page = t.ok("models/people?_per_page=1&age__gte=30").await;
    assert_eq!(page["count"], 3);
    assert_eq!(page["results"].as_array().map(Vec::len), Some(1));
    let all = t.ok("models/people?_no_pagination=1&age__gte=30").await;
    assert_eq!(all.as_array().map(Vec::len), Some(3), "a bare array: {all}");
    let none = t.ok("models/people?_no_pagination=1&age__gt=99").await;
    assert_eq!(none, json!([]));
}
