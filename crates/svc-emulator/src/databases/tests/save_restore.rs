//! `Backend::save` and `Backend::restore` on every database: each rule once, as a function of a
//! [`Target`], run by `sqlite::RULE` in `cargo test`, and by `postgres::RULE` (a throwaway
//! cluster, crate `pg-cluster`) and `mysql::RULE` (a MariaDB server, crate `maria-server`),
//! which are `#[ignore]`d there and run by `cargo xtask postgres` and `cargo xtask mysql`.
//!
//! The writes go through the backend as the records routes send them (the engine's ORM rules
//! included: a deleted parent's children are set to NULL or deleted); the rows are compared as
//! the database holds them, read with the backend's read-only SQL.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::databases::Built;
use svc_emulator_core::backend::{Backend, Saved, Update};
use svc_emulator_state::catalog::Databases;
use svc_emulator_state::config::projects::ResourceConfig;
use svc_engine::python::json::PyJson;
use svc_engine::sql_request::SqlRequest;
use svc_engine::{EngineError, Selection, SqlLimits};

/// The tables every database starts with (each in its own DDL): keys the database numbers,
/// foreign keys nullable and NOT NULL, a self-reference, a table without a key, a generated
/// column, a trigger that writes to another table, a view.
const ROWS: &str = "
INSERT INTO people (name, age) VALUES ('Alice', 30), ('Bob', NULL), ('Carol', 45);
INSERT INTO parents (name) VALUES ('a'), ('b');
INSERT INTO loose (parent_id) VALUES (1), (2), (NULL);
INSERT INTO owned (parent_id) VALUES (1), (1), (2);
INSERT INTO tree VALUES (1, NULL), (2, 1), (3, 2);
INSERT INTO tags VALUES ('x', 1), ('x', 2), ('y', 3);
INSERT INTO gen (id, a) VALUES (1, 3), (2, 4);
INSERT INTO audited VALUES (1, 10), (2, 20);
CREATE VIEW adults AS SELECT id, name FROM people WHERE age >= 30;
";

/// Each table, and the order its rows are compared in.
const TABLES: &[(&str, &str)] = &[
    ("people", "id"),
    ("parents", "id"),
    ("loose", "id"),
    ("owned", "id"),
    ("tree", "id"),
    ("tags", "label, n"),
    ("gen", "id"),
    ("audited", "id"),
    ("audit_log", "id"),
];

/// One database's resource, and what differs there.
struct Target {
    backend: Arc<dyn Backend>,
    /// Another resource of the same kind, with the same tables and rows.
    other: Arc<dyn Backend>,
    /// Models whose keys the database numbers, each with the body of a create.
    keyed: Vec<(&'static str, Value)>,
    /// The name of the store a copy lives in (none for SQLite's copy, in memory).
    store_of: fn(&Saved) -> Option<String>,
    /// A query whose one cell counts the stores named `:name`.
    stores_named: &'static str,
    _databases: Vec<maria_server::Database<'static>>,
}

fn hold() -> svc_emulator_core::backend::Hold {
    Box::new(())
}

fn ok<T>(result: Result<T, EngineError>) -> T {
    result.unwrap_or_else(|e| panic!("{e}"))
}

/// The rows of a query, as the backend's read-only SQL answers them.
async fn query(b: &Arc<dyn Backend>, sql: &str, params: Map<String, Value>) -> Vec<Value> {
    let bytes = ok(Arc::clone(b)
        .sql(SqlRequest::new(sql, params), SqlLimits::default(), hold())
        .await);
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    answer["data"].as_array().unwrap().clone()
}

/// Every table's rows, in order.
async fn contents(b: &Arc<dyn Backend>) -> Vec<(String, Vec<Value>)> {
    let mut out = Vec::new();
    for (table, order) in TABLES {
        let sql = format!("SELECT * FROM {table} ORDER BY {order}");
        out.push(((*table).to_owned(), query(b, &sql, Map::new()).await));
    }
    out
}

async fn create(b: &Arc<dyn Backend>, model: &str, body: Value) -> Value {
    let bytes = ok(Arc::clone(b)
        .create(model.to_owned(), PyJson::from(&body), false, hold())
        .await);
    serde_json::from_slice(&bytes).unwrap()
}

async fn update(b: &Arc<dyn Backend>, model: &str, pk: &str, body: Value) {
    let change = Update {
        model: model.to_owned(),
        pk: pk.to_owned(),
        body: PyJson::from(&body),
        selection: Selection::default(),
        partial: true,
    };
    ok(Arc::clone(b).update(change, hold()).await);
}

async fn delete(b: &Arc<dyn Backend>, model: &str, pk: &str) {
    ok(Arc::clone(b)
        .delete(
            model.to_owned(),
            pk.to_owned(),
            Selection::default(),
            hold(),
        )
        .await);
}

async fn save(b: &Arc<dyn Backend>) -> Saved {
    ok(Arc::clone(b).save(hold()).await)
}

async fn restore(b: &Arc<dyn Backend>, saved: &Saved) -> Result<(), EngineError> {
    Arc::clone(b).restore(Arc::clone(saved), hold()).await
}

/// Changes of every kind: a create, an update, a delete, a parent deleted with what the ORM
/// does to its children, a self-reference cut, a row of a table without a key, a generated
/// column's source, a row whose trigger writes elsewhere.
async fn change_everything(b: &Arc<dyn Backend>) {
    create(b, "people", json!({"name": "Zed", "age": 50})).await;
    update(b, "people", "1", json!({"age": 99})).await;
    delete(b, "people", "2").await;
    delete(b, "parents", "1").await;
    update(b, "tree", "2", json!({"parent_id": null})).await;
    create(b, "tags", json!({"label": "z", "n": 9})).await;
    update(b, "gen", "1", json!({"a": 10})).await;
    create(b, "audited", json!({"id": 3, "n": 30})).await;
}

/// A smaller change, another time.
async fn change_again(b: &Arc<dyn Backend>) {
    delete(b, "tree", "3").await;
    delete(b, "tree", "2").await;
    create(b, "parents", json!({"name": "c"})).await;
    delete(b, "owned", "3").await;
}

/// `t`'s tables hold `saved` again, exactly: no trigger acted on the rows going back.
async fn assert_as_saved(t: &Target, saved: &[(String, Vec<Value>)]) {
    assert_eq!(contents(&t.backend).await, saved);
}

/// The error of a restore of `saved` refused after `change_everything`, which it left as it was
/// (the database servers' tests).
#[cfg(any(feature = "postgres", feature = "mysql"))]
async fn refused_restore(b: &Arc<dyn Backend>, saved: &Saved) -> String {
    change_everything(b).await;
    let changed = contents(b).await;
    let e = restore(b, saved).await.unwrap_err().to_string();
    assert_eq!(contents(b).await, changed, "nothing changed");
    e
}

async fn the_rows_are_put_back_as_saved(t: &Target) {
    let before = contents(&t.backend).await;
    let models = t.backend.model_names();
    let saved = save(&t.backend).await;
    assert_eq!(contents(&t.backend).await, before, "a save changes nothing");
    change_everything(&t.backend).await;
    assert_ne!(contents(&t.backend).await, before);
    ok(restore(&t.backend, &saved).await);
    assert_as_saved(t, &before).await;
    assert_eq!(t.backend.model_names(), models, "the view is a model still");
    assert_eq!(
        query(
            &t.backend,
            "SELECT id, name FROM adults ORDER BY id",
            Map::new()
        )
        .await,
        [json!([1, "Alice"]), json!([3, "Carol"])]
    );
    // The trigger is on again.
    let logged = query(&t.backend, "SELECT COUNT(*) FROM audit_log", Map::new()).await;
    create(&t.backend, "audited", json!({"id": 4, "n": 40})).await;
    let now = query(&t.backend, "SELECT COUNT(*) FROM audit_log", Map::new()).await;
    assert_eq!(
        now[0][0].as_i64().unwrap(),
        logged[0][0].as_i64().unwrap() + 1
    );
}

async fn a_create_after_a_restore_gets_the_key_it_would_have_got(t: &Target) {
    let saved = save(&t.backend).await;
    let mut first = Vec::new();
    for (model, body) in &t.keyed {
        let made = create(&t.backend, model, body.clone()).await;
        create(&t.backend, model, body.clone()).await;
        first.push(made["id"].clone());
    }
    ok(restore(&t.backend, &saved).await);
    for ((model, body), expected) in t.keyed.iter().zip(&first) {
        let made = create(&t.backend, model, body.clone()).await;
        assert_eq!(&made["id"], expected, "{model}");
    }
}

async fn a_copy_is_put_back_again_and_again(t: &Target) {
    let before = contents(&t.backend).await;
    let saved = save(&t.backend).await;
    change_again(&t.backend).await;
    ok(restore(&t.backend, &saved).await);
    assert_as_saved(t, &before).await;
    change_again(&t.backend).await;
    create(&t.backend, "people", json!({"name": "Yann"})).await;
    ok(restore(&t.backend, &saved).await);
    assert_as_saved(t, &before).await;
    ok(restore(&t.backend, &saved).await);
    assert_as_saved(t, &before).await;
}

async fn a_copy_goes_back_only_to_the_resource_that_saved_it(t: &Target) {
    let saved = save(&t.backend).await;
    change_again(&t.backend).await;
    let theirs = contents(&t.other).await;
    let e = restore(&t.other, &saved).await.unwrap_err().to_string();
    assert!(e.contains("saved from another resource"), "{e}");
    assert_eq!(contents(&t.other).await, theirs, "nothing changed");
    let foreign: Saved = Arc::new(7_u8);
    let e = restore(&t.backend, &foreign).await.unwrap_err().to_string();
    assert!(e.contains("another kind of database"), "{e}");
}

async fn a_copy_is_out_of_sight_and_goes_with_its_last_handle(t: &Target) {
    let models = t.backend.model_names();
    let saved = save(&t.backend).await;
    ok(Arc::clone(&t.backend).reload(hold()).await);
    assert_eq!(
        t.backend.model_names(),
        models,
        "the store is not reflected"
    );
    let Some(name) = (t.store_of)(&saved) else {
        return;
    };
    #[cfg(any(feature = "postgres", feature = "mysql"))]
    assert!(
        name.starts_with(svc_emulator_core::flow::snapshot::STORE_PREFIX),
        "{name}"
    );
    let second = save(&t.backend).await;
    assert_ne!(
        (t.store_of)(&second),
        Some(name.clone()),
        "each copy its own"
    );
    let params = Map::from_iter([("name".to_owned(), json!(name))]);
    let count = async || query(&t.backend, t.stores_named, params.clone()).await[0][0].clone();
    assert_eq!(count().await, json!(1));
    drop(saved);
    let deadline = Instant::now() + Duration::from_secs(10);
    while count().await != json!(0) {
        assert!(Instant::now() < deadline, "the store {name} is still there");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    ok(restore(&t.backend, &second).await);
}

/// One test per rule and database: `sqlite::RULE`, `postgres::RULE` and `mysql::RULE`.
macro_rules! on_every_database {
    ($($rule:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $rule() {
                    super::$rule(&super::sqlite().await).await;
                }
            )*
        }
        #[cfg(feature = "postgres")]
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[ignore = "needs PostgreSQL: run with --ignored (cargo xtask postgres does)"]
                async fn $rule() {
                    super::$rule(&super::postgres_db::target().await).await;
                }
            )*
        }
        #[cfg(feature = "mysql")]
        mod mysql {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[ignore = "needs MariaDB: run with --ignored (cargo xtask mysql does)"]
                async fn $rule() {
                    super::$rule(&super::mysql_db::target().await).await;
                }
            )*
        }
    };
}

on_every_database!(
    the_rows_are_put_back_as_saved,
    a_create_after_a_restore_gets_the_key_it_would_have_got,
    a_copy_is_put_back_again_and_again,
    a_copy_goes_back_only_to_the_resource_that_saved_it,
    a_copy_is_out_of_sight_and_goes_with_its_last_handle,
);

async fn open(resource: ResourceConfig) -> Arc<dyn Backend> {
    Built
        .open("saved", &resource, None)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn sqlite() -> Target {
    let seed = format!(
        "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER);
CREATE TABLE parents (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE loose (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parents (id));
CREATE TABLE owned (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL REFERENCES parents (id));
CREATE TABLE tree (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES tree (id));
CREATE TABLE tags (label TEXT, n INTEGER);
CREATE TABLE gen (id INTEGER PRIMARY KEY, a INTEGER, g INTEGER GENERATED ALWAYS AS (a * 2) STORED);
CREATE TABLE audited (id INTEGER PRIMARY KEY, n INTEGER);
CREATE TABLE audit_log (id INTEGER PRIMARY KEY, audited_id INTEGER);
CREATE TRIGGER audit AFTER INSERT ON audited
BEGIN INSERT INTO audit_log (audited_id) VALUES (NEW.id); END;
{ROWS}"
    );
    let resource = || ResourceConfig::new("shop", "t").seed_sql(seed.clone());
    Target {
        backend: open(resource()).await,
        other: open(resource()).await,
        keyed: vec![("people", json!({"name": "New"}))],
        store_of: |_| None,
        stores_named: "",
        _databases: Vec::new(),
    }
}

#[cfg(feature = "postgres")]
mod postgres_db {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use svc_emulator_core::flow::snapshot::SavedOf;
    use svc_emulator_postgres::PgResource;

    /// Beside the shared tables: keys numbered by identity and by a sequence of its own, and a
    /// partitioned table (its rows saved once, through it) and a materialized view (not saved).
    const SCHEMA: &str = "
CREATE TABLE people (id serial PRIMARY KEY, name text NOT NULL, age integer);
CREATE TABLE parents (id serial PRIMARY KEY, name text);
CREATE TABLE loose (id serial PRIMARY KEY, parent_id integer REFERENCES parents (id));
CREATE TABLE owned (id serial PRIMARY KEY, parent_id integer NOT NULL REFERENCES parents (id));
CREATE TABLE tree (id integer PRIMARY KEY, parent_id integer REFERENCES tree (id));
CREATE TABLE tags (label text, n integer);
CREATE TABLE gen (id integer PRIMARY KEY, a integer, g integer GENERATED ALWAYS AS (a * 2) STORED);
CREATE TABLE audited (id integer PRIMARY KEY, n integer);
CREATE TABLE audit_log (id serial PRIMARY KEY, audited_id integer);
CREATE FUNCTION audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO audit_log (audited_id) VALUES (NEW.id); RETURN NEW; END $$;
CREATE TRIGGER audit AFTER INSERT ON audited FOR EACH ROW EXECUTE FUNCTION audit();
CREATE TABLE ident (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text);
CREATE SEQUENCE numbers START 100;
CREATE TABLE numbered (id integer PRIMARY KEY DEFAULT nextval('numbers'), v text);
INSERT INTO ident (v) VALUES ('a'), ('b');
INSERT INTO numbered (v) VALUES ('a');
CREATE TABLE events (id integer, y integer, PRIMARY KEY (id, y)) PARTITION BY LIST (y);
CREATE TABLE events_2024 PARTITION OF events FOR VALUES IN (2024);
INSERT INTO events VALUES (1, 2024), (2, 2024);
CREATE MATERIALIZED VIEW event_count AS SELECT count(*) AS n FROM events;
";

    /// A new database of the shared cluster with `sql` run in it (as `owner`, when given).
    pub(super) fn database(sql: &str, owner: Option<&str>) -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let cluster = pg_cluster::Cluster::shared().unwrap_or_else(|e| panic!("{e}"));
        let name = format!(
            "saved{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        ok_pg(cluster.create_database(&name));
        let (prefix, url) = match owner {
            Some(role) => {
                ok_pg(cluster.psql(
                    "postgres",
                    &format!("ALTER DATABASE {name} OWNER TO {role}"),
                ));
                let url = cluster.url(&name).replacen(
                    &format!("{}@", cluster.user()),
                    &format!("{role}@"),
                    1,
                );
                (format!("SET ROLE {role};\n"), url)
            }
            None => (String::new(), cluster.url(&name)),
        };
        ok_pg(cluster.psql(&name, &format!("{prefix}{sql}")));
        url
    }

    /// A role of its own that logs in, neither a superuser nor allowed to set
    /// `session_replication_role`.
    pub(super) fn role() -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let cluster = pg_cluster::Cluster::shared().unwrap_or_else(|e| panic!("{e}"));
        let role = format!(
            "saver{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        ok_pg(cluster.psql("postgres", &format!("CREATE ROLE {role} LOGIN")));
        role
    }

    fn ok_pg<T>(result: Result<T, pg_cluster::Error>) -> T {
        result.unwrap_or_else(|e| panic!("{e}"))
    }

    pub(super) fn store_of(saved: &Saved) -> Option<String> {
        let copy = saved.downcast_ref::<SavedOf<PgResource>>()?;
        Some(copy.store_name().to_owned())
    }

    pub(super) async fn target() -> Target {
        let sql = format!("{SCHEMA}{ROWS}");
        Target {
            backend: open(ResourceConfig::new("shop", "t").database(database(&sql, None))).await,
            other: open(ResourceConfig::new("shop", "t").database(database(&sql, None))).await,
            keyed: vec![
                ("people", json!({"name": "New"})),
                ("ident", json!({"v": "new"})),
                ("numbered", json!({"v": "new"})),
            ],
            store_of,
            stores_named: "SELECT count(*) FROM pg_namespace WHERE nspname = :name",
            _databases: Vec::new(),
        }
    }

    /// The driver runs one statement per call (`Driver::execute_one`): a text that holds a second
    /// one is refused by the server, and neither runs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: run with --ignored (cargo xtask postgres does)"]
    async fn a_statement_run_is_one_statement_only() {
        use svc_emulator_core::flow::database::Database;
        use svc_emulator_core::flow::driver::Driver;
        let url = database(&format!("{SCHEMA}{ROWS}"), None);
        let db = ok(PgResource::open(&url, None).await);
        let mut conn = ok(db.db().connect(None).await);
        let two = "UPDATE people SET age = 1; DROP TABLE tags";
        let refused = PgResource::execute_one(&mut conn, two).await;
        assert!(refused.is_err(), "two statements ran");
        ok(
            PgResource::execute_one(&mut conn, "UPDATE people SET age = age")
                .await
                .map_err(|e| EngineError::Internal(e.to_string())),
        );
        let people = "SELECT count(*) FROM people WHERE age = 1";
        let tags = "SELECT count(*) FROM tags";
        let backend = open(ResourceConfig::new("shop", "t").database(url)).await;
        assert_eq!(query(&backend, people, Map::new()).await, [json!([0])]);
        assert_eq!(query(&backend, tags, Map::new()).await, [json!([3])]);
    }

    /// A partitioned table's rows are saved once, through it (its partition holds no rows of
    /// its own), and a materialized view is left as it is.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: run with --ignored (cargo xtask postgres does)"]
    async fn a_partitioned_table_goes_back_once_through_itself() {
        let t = target().await;
        let events = "SELECT id, y FROM events ORDER BY id";
        let before = query(&t.backend, events, Map::new()).await;
        let saved = save(&t.backend).await;
        create(&t.backend, "events", json!({"id": 3, "y": 2024})).await;
        create(&t.backend, "events_2024", json!({"id": 4, "y": 2024})).await;
        ok(restore(&t.backend, &saved).await);
        assert_eq!(query(&t.backend, events, Map::new()).await, before);
        let counted = "SELECT n FROM event_count";
        assert_eq!(query(&t.backend, counted, Map::new()).await, [json!([2])]);
    }

    /// Tables that refer to each other, by keys checked at each statement; one has a trigger
    /// (whose table, once the key is deferred, has checks pending until they are made).
    const CYCLE: &str = "
CREATE TABLE cycle_a (id integer PRIMARY KEY, b_id integer);
CREATE TABLE cycle_b (id integer PRIMARY KEY, a_id integer REFERENCES cycle_a (id));
ALTER TABLE cycle_a ADD CONSTRAINT a_to_b FOREIGN KEY (b_id) REFERENCES cycle_b (id);
CREATE TRIGGER cycle_audit AFTER INSERT ON cycle_a FOR EACH ROW EXECUTE FUNCTION audit();
INSERT INTO cycle_a VALUES (1, NULL);
INSERT INTO cycle_b VALUES (1, 1);
UPDATE cycle_a SET b_id = 1;
";

    /// A role that owns its tables but may not turn the checks off: the parents go back
    /// first, its triggers are turned off by name and on again, a cycle of keys checked at
    /// each statement is refused before anything changes, and a deferrable one is deferred.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: run with --ignored (cargo xtask postgres does)"]
    async fn a_role_that_cannot_turn_the_checks_off_puts_parents_first() {
        let role = role();
        let url = database(&format!("{SCHEMA}{ROWS}{CYCLE}"), Some(&role));
        let backend = open(ResourceConfig::new("shop", "t").database(url)).await;
        let target = Target {
            backend: Arc::clone(&backend),
            other: Arc::clone(&backend),
            keyed: Vec::new(),
            store_of,
            stores_named: "",
            _databases: Vec::new(),
        };
        let before = contents(&backend).await;
        let saved = save(&backend).await;
        let e = refused_restore(&backend, &saved).await;
        assert!(
            e.contains("cycle_a, cycle_b refer to each other") && e.contains("DEFERRABLE"),
            "{e}"
        );
        let cluster = pg_cluster::Cluster::shared().unwrap_or_else(|e| panic!("{e}"));
        let name = url_database(&backend).await;
        ok_pg(cluster.psql(
            &name,
            "ALTER TABLE cycle_a ALTER CONSTRAINT a_to_b DEFERRABLE",
        ));
        ok(restore(&backend, &saved).await);
        assert_eq!(contents(&backend).await, before);
        let cycle = "SELECT a.id, a.b_id, b.a_id FROM cycle_a a JOIN cycle_b b ON b.id = a.b_id";
        assert_eq!(query(&backend, cycle, Map::new()).await, [json!([1, 1, 1])]);
        a_copy_is_put_back_again_and_again(&target).await;
        let enabled = query(
            &backend,
            "SELECT tgenabled::text FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname",
            Map::new(),
        )
        .await;
        assert_eq!(
            enabled,
            [json!(["O"]), json!(["O"])],
            "the triggers are enabled as they were"
        );
    }

    async fn url_database(backend: &Arc<dyn Backend>) -> String {
        let rows = query(backend, "SELECT current_database()", Map::new()).await;
        rows[0][0].as_str().unwrap().to_owned()
    }

    /// A role that may not create a schema is told which privilege a copy needs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs PostgreSQL: run with --ignored (cargo xtask postgres does)"]
    async fn a_role_without_create_is_told_the_privilege() {
        let role = role();
        let url = database(&format!("{SCHEMA}{ROWS}"), None);
        let as_role = url.replacen(
            &format!(
                "{}@",
                pg_cluster::Cluster::shared()
                    .unwrap_or_else(|e| panic!("{e}"))
                    .user()
            ),
            &format!("{role}@"),
            1,
        );
        let backend = open(ResourceConfig::new("shop", "t").database(as_role)).await;
        let e = Arc::clone(&backend)
            .save(hold())
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("role {role} may not create one"))
                && e.contains("GRANT CREATE ON DATABASE"),
            "{e}"
        );
    }
}

#[cfg(feature = "mysql")]
mod mysql_db {
    use super::*;
    use svc_emulator_core::flow::snapshot::SavedOf;
    use svc_emulator_mysql::MyResource;

    const SCHEMA: &str = "
CREATE TABLE people (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL, age INT);
CREATE TABLE parents (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20));
CREATE TABLE loose (id INT AUTO_INCREMENT PRIMARY KEY, parent_id INT,
  FOREIGN KEY (parent_id) REFERENCES parents (id));
CREATE TABLE owned (id INT AUTO_INCREMENT PRIMARY KEY, parent_id INT NOT NULL,
  FOREIGN KEY (parent_id) REFERENCES parents (id));
CREATE TABLE tree (id INT PRIMARY KEY, parent_id INT, FOREIGN KEY (parent_id) REFERENCES tree (id));
CREATE TABLE tags (label VARCHAR(10), n INT);
CREATE TABLE gen (id INT PRIMARY KEY, a INT, g INT GENERATED ALWAYS AS (a * 2) STORED);
CREATE TABLE audited (id INT PRIMARY KEY, n INT);
CREATE TABLE audit_log (id INT AUTO_INCREMENT PRIMARY KEY, audited_id INT);
CREATE TRIGGER audit AFTER INSERT ON audited FOR EACH ROW
  INSERT INTO audit_log (audited_id) VALUES (NEW.id);
CREATE TABLE zero (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10));
SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO');
INSERT INTO zero VALUES (0, 'zero'), (5, 'five');
";

    pub(super) fn database(sql: &str) -> maria_server::Database<'static> {
        let server = maria_server::Server::shared().unwrap_or_else(|e| panic!("{e}"));
        let database = server.database("saved").unwrap_or_else(|e| panic!("{e}"));
        database.sql(sql).unwrap_or_else(|e| panic!("{e}"));
        database
    }

    pub(super) async fn target() -> Target {
        let sql = format!("{SCHEMA}{ROWS}");
        let (mine, theirs) = (database(&sql), database(&sql));
        Target {
            backend: open(ResourceConfig::new("shop", "t").database(mine.url())).await,
            other: open(ResourceConfig::new("shop", "t").database(theirs.url())).await,
            keyed: vec![
                ("people", json!({"name": "New"})),
                ("zero", json!({"v": "new"})),
            ],
            store_of: |saved| {
                let copy = saved.downcast_ref::<SavedOf<MyResource>>()?;
                Some(copy.store_name().to_owned())
            },
            stores_named: "SELECT COUNT(*) FROM information_schema.SCHEMATA \
                           WHERE SCHEMA_NAME = :name",
            _databases: vec![mine, theirs],
        }
    }

    /// The driver runs one statement per call (`Driver::execute_one`, a prepared statement): a
    /// text that holds a second one is refused by the server, and neither runs, where the text
    /// protocol (which mysql_async opens with multi-statements on) would run both.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs MariaDB: run with --ignored (cargo xtask mysql does)"]
    async fn a_statement_run_is_one_statement_only() {
        use svc_emulator_core::flow::database::Database;
        use svc_emulator_core::flow::driver::Driver;
        let database = database(&format!("{SCHEMA}{ROWS}"));
        let db = ok(MyResource::open(&database.url(), None).await);
        let mut conn = ok(db.db().connect(None).await);
        let two = "UPDATE people SET age = 1; DROP TABLE tags";
        let refused = MyResource::execute_one(&mut conn, two).await;
        assert!(refused.is_err(), "two statements ran");
        let one = MyResource::execute_one(&mut conn, "UPDATE people SET age = age").await;
        ok(one.map_err(|e| EngineError::Internal(e.to_string())));
        drop(conn);
        let people = "SELECT COUNT(*) FROM people WHERE age = 1";
        let tags = "SELECT COUNT(*) FROM tags";
        let backend = open(ResourceConfig::new("shop", "t").database(database.url())).await;
        assert_eq!(query(&backend, people, Map::new()).await, [json!([0])]);
        assert_eq!(query(&backend, tags, Map::new()).await, [json!([3])]);
    }

    /// A user of its own on the server, with every privilege on one database only; dropped
    /// with this value.
    struct User(String);

    impl Drop for User {
        fn drop(&mut self) {
            if let Ok(server) = maria_server::Server::shared() {
                let _ = server.sql("", &format!("DROP USER IF EXISTS '{}'@'127.0.0.1'", self.0));
            }
        }
    }

    /// A user of its own, `{prefix}_{database}`, with `privileges` on `database` only, and a
    /// resource on that database as that user.
    async fn as_user(
        database: &maria_server::Database<'static>,
        prefix: &str,
        privileges: &str,
    ) -> (User, Arc<dyn Backend>) {
        let server = maria_server::Server::shared().unwrap_or_else(|e| panic!("{e}"));
        let user = User(format!("{prefix}_{}", database.name()));
        let grant = format!(
            "CREATE USER '{0}'@'127.0.0.1'; GRANT {privileges} ON `{1}`.* TO '{0}'@'127.0.0.1'",
            user.0,
            database.name()
        );
        server.sql("", &grant).unwrap_or_else(|e| panic!("{e}"));
        let (_, port) = server.address();
        let url = format!("mysql://{}@127.0.0.1:{port}/{}", user.0, database.name());
        let backend = open(ResourceConfig::new("shop", "t").database(url)).await;
        (user, backend)
    }

    /// A user who may not create a database is told which privileges a copy needs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs MariaDB: run with --ignored (cargo xtask mysql does)"]
    async fn a_user_without_create_is_told_the_privileges() {
        let database = database(&format!("{SCHEMA}{ROWS}"));
        let (user, backend) = as_user(&database, "saver", "ALL").await;
        let e = Arc::clone(&backend)
            .save(hold())
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("user {}@127.0.0.1 may not create one", user.0))
                && e.contains("GRANT ALL ON `svc\\_emulator\\_saved\\_%`.*"),
            "{e}"
        );
    }

    /// A user without the `TRIGGER` privilege cannot set a table's triggers aside: the restore
    /// says which privilege it needs, and changes nothing.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs MariaDB: run with --ignored (cargo xtask mysql does)"]
    async fn a_user_without_the_trigger_privilege_is_told_it_and_nothing_changes() {
        let database = database(&format!("{SCHEMA}{ROWS}"));
        let privileges = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, CREATE VIEW, \
                          SHOW VIEW, REFERENCES";
        let (_user, backend) = as_user(&database, "untriggered", privileges).await;
        let server = maria_server::Server::shared().unwrap_or_else(|e| panic!("{e}"));
        let granted = format!(
            "GRANT ALL ON `svc\\_emulator\\_saved\\_%`.* TO 'untriggered_{}'@'127.0.0.1'",
            database.name()
        );
        server.sql("", &granted).unwrap_or_else(|e| panic!("{e}"));
        let saved = save(&backend).await;
        let e = refused_restore(&backend, &saved).await;
        assert!(
            e.contains("the table audited has the trigger audit") && e.contains("GRANT TRIGGER"),
            "{e}"
        );
        let logged = "SELECT COUNT(*) FROM audit_log";
        let count = query(&backend, logged, Map::new()).await;
        create(&backend, "audited", json!({"id": 9, "n": 90})).await;
        assert_ne!(
            query(&backend, logged, Map::new()).await,
            count,
            "the trigger is there"
        );
    }

    /// Two triggers on one event, the second made to act first (`PRECEDES`), that one made
    /// under `PIPES_AS_CONCAT` (its `||` joins text), and a row they logged.
    const ORDERED: &str = "
CREATE TABLE ordered (id INT PRIMARY KEY);
CREATE TABLE ordered_log (id INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(10));
CREATE TRIGGER second AFTER INSERT ON ordered FOR EACH ROW
  INSERT INTO ordered_log (what) VALUES ('second');
SET SESSION sql_mode = CONCAT(@@sql_mode, ',PIPES_AS_CONCAT');
CREATE TRIGGER first AFTER INSERT ON ordered FOR EACH ROW PRECEDES second
  INSERT INTO ordered_log (what) VALUES ('fi' || 'rst');
SET SESSION sql_mode = DEFAULT;
INSERT INTO ordered VALUES (1);
";

    /// A restore makes MySQL's triggers again as they were: in the order they act, and each
    /// in the `sql_mode` it was made in.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs MariaDB: run with --ignored (cargo xtask mysql does)"]
    async fn triggers_are_made_again_in_their_order_and_sql_mode() {
        let database = database(ORDERED);
        let backend = open(ResourceConfig::new("shop", "t").database(database.url())).await;
        let log = "SELECT what FROM ordered_log ORDER BY id";
        let logged = [json!(["first"]), json!(["second"])];
        assert_eq!(query(&backend, log, Map::new()).await, logged);
        let saved = save(&backend).await;
        create(&backend, "ordered", json!({"id": 2})).await;
        ok(restore(&backend, &saved).await);
        assert_eq!(query(&backend, log, Map::new()).await, logged);
        create(&backend, "ordered", json!({"id": 3})).await;
        assert_eq!(
            query(&backend, log, Map::new()).await,
            [logged.clone(), logged].concat()
        );
    }

    /// A row whose `AUTO_INCREMENT` key is 0 goes back as 0, not as a new key.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs MariaDB: run with --ignored (cargo xtask mysql does)"]
    async fn a_key_of_zero_goes_back_as_zero() {
        let t = target().await;
        let zero = "SELECT id, v FROM zero ORDER BY id";
        let before = query(&t.backend, zero, Map::new()).await;
        assert_eq!(before[0], json!([0, "zero"]));
        let saved = save(&t.backend).await;
        delete(&t.backend, "zero", "0").await;
        ok(restore(&t.backend, &saved).await);
        assert_eq!(query(&t.backend, zero, Map::new()).await, before);
        // The restore's session checks foreign keys again, as every session of the pool does.
        for _ in 0..3 {
            let orphan = Arc::clone(&t.backend)
                .create(
                    "owned".to_owned(),
                    PyJson::from(&json!({"parent_id": 999})),
                    false,
                    hold(),
                )
                .await;
            assert!(orphan.is_err(), "{orphan:?}");
        }
    }
}

/// A restore's figures (not timed tests): a seeded 10k-row table, three rows changed (and one
/// created), put back; the median of 21 each. In release, by hand:
/// `cargo test --release -p svc-emulator --all-features --lib figures -- --ignored --nocapture
/// --test-threads 1`.
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod figures {
    use super::*;

    #[cfg(feature = "postgres")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "figures: run by hand, in release"]
    async fn postgres() {
        let url = super::postgres_db::database(
            "CREATE TABLE items (id serial PRIMARY KEY, name text NOT NULL, n integer, note text);
INSERT INTO items (name, n, note)
SELECT 'item ' || g, g % 100, repeat('x', 40) FROM generate_series(1, 10000) AS g;
ANALYZE items;",
            None,
        );
        let backend = open(ResourceConfig::new("shop", "t").database(url)).await;
        restores("PostgreSQL", &backend).await;
    }

    #[cfg(feature = "mysql")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "figures: run by hand, in release"]
    async fn mysql() {
        let database = super::mysql_db::database(
            "CREATE TABLE items (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL,
  n INT, note TEXT);
INSERT INTO items (name, n, note)
SELECT CONCAT('item ', seq), seq % 100, REPEAT('x', 40) FROM seq_1_to_10000;",
        );
        let backend = open(ResourceConfig::new("shop", "t").database(database.url())).await;
        restores("MariaDB", &backend).await;
    }

    /// Prints the median, 95th percentile and extremes of 5 saves of `backend`'s `items`, and of
    /// 21 restores after three rows changed and 21 after three changed and one created.
    async fn restores(database: &str, backend: &Arc<dyn Backend>) {
        let mut saves = Vec::new();
        let mut saved = None;
        for _ in 0..5 {
            let start = Instant::now();
            saved = Some(save(backend).await);
            saves.push(start.elapsed());
        }
        let saved = saved.unwrap();
        // Rows changed only; then a row created too, whose key's counter moved.
        let (mut changed, mut created) = (Vec::new(), Vec::new());
        for round in 0..42 {
            for pk in ["1", "5000", "9999"] {
                update(backend, "items", pk, json!({"n": round})).await;
            }
            if round % 2 == 1 {
                create(backend, "items", json!({"name": "new"})).await;
            }
            let start = Instant::now();
            ok(restore(backend, &saved).await);
            let times = if round % 2 == 1 {
                &mut created
            } else {
                &mut changed
            };
            times.push(start.elapsed());
        }
        let count = query(backend, "SELECT COUNT(*) FROM items", Map::new()).await;
        assert_eq!(count[0][0], json!(10000));
        let show = |what: &str, mut times: Vec<Duration>| {
            times.sort();
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            println!(
                "{database} {what} of 10k rows, {} runs: median {:.1} ms, p95 {:.1} ms, min {:.1} \
                 ms, max {:.1} ms",
                times.len(),
                ms(times[times.len() / 2]),
                ms(times[(times.len() * 95).div_ceil(100) - 1]),
                ms(times[0]),
                ms(times[times.len() - 1]),
            );
        };
        show("save", saves);
        show("restore (3 rows changed)", changed);
        show("restore (3 rows changed, 1 created)", created);
    }
}
