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
#[path = "conformance/extra_actions.rs"]
mod extra_actions;

use extra_actions::{
    bulk_create_creates_each_item_on_its_own, get_siblings_are_the_neighbours_in_the_list_order,
    reorder_moves_an_ordering_column_through_the_filters,
    reset_order_numbers_the_selected_records_in_order,
};

use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Call, Reply, send};
use http::Method;
use serde_json::{Value, json};
use svc_emulator::{
    ActionConfig, Emulator, EmulatorConfig, ImportOnRows, ProjectConfig, ProjectsConfig,
    ResourceConfig, WorkflowConfig,
};

const TOKEN: &str = "conformance-token";
const API_KEY: &str = "conformance-key";

/// A query over the typed columns of `events`, run as an action and as read-only SQL.
const EVENTS_QUERY: &str = "SELECT id, day, at, amount, ok FROM events ORDER BY id";

/// The actions every backend's resource has (docs/actions.md): statements every database
/// runs alike (MySQL has no `UPDATE ... RETURNING`, hence an update then a select), a
/// statement the database refuses, and a fixed answer.
fn actions(resource: ResourceConfig) -> ResourceConfig {
    resource
        .action(ActionConfig::statements(
            "move",
            [
                "UPDATE people SET city = :city WHERE id = :id",
                "SELECT id, name, city, age FROM people WHERE id = :id",
            ],
        ))
        .action(ActionConfig::sql(
            "duplicate",
            "INSERT INTO people (id, name) VALUES (1, 'again')",
        ))
        .action(ActionConfig::sql(
            "count",
            "SELECT COUNT(*) AS n FROM people WHERE city = ':city'",
        ))
        .action(ActionConfig::answer(
            "ping",
            json!({"pong": [1, 2.5, null]}),
        ))
        .action(ActionConfig::sql("events", EVENTS_QUERY))
}
const BASE: &str = "/projects/demo/prod/shop";

/// The rows every backend starts with: five people, one without an age and one without a city,
/// two cities that differ only by case. Keys 1 to 5 are given by the database, in this order.
const ROWS: &str = "INSERT INTO people (name, city, age) VALUES
  ('Alice', 'Paris', 30), ('bob', 'Berlin', NULL), ('Carol', 'paris', 45),
  ('Dave', NULL, 18), ('Eve', 'Rome', 30);";

/// The shapes real databases have, beside `people` (the same rows on every backend; each
/// backend's DDL makes the tables): a table without a key (`tags`, two rows sharing the first
/// column and one where it is NULL), a composite key (`pairs`), a view (`adults`) and the types
/// the engine writes in their own forms (`events`).
const SHAPE_ROWS: &str =
    "INSERT INTO tags (label, n) VALUES ('a', 1), ('a', 2), (NULL, 3), ('b', 4), ('c', 5);
INSERT INTO files (id, body, name) VALUES (1, NULL, 'a'), (2, NULL, 'b');
INSERT INTO pairs (a, b, v) VALUES (3, 'x', 10), (1, 'y', 20), (2, 'z', 30), (5, 'q', 50),
  (7, 'm', 70), (7, 'n', 80);
CREATE VIEW adults AS SELECT id, name, age FROM people WHERE age >= 30;
INSERT INTO events (day, at, amount, ok) VALUES
  ('2024-03-05', '2024-03-05 10:11:12', 4.5, TRUE),
  ('2024-02-29', '2024-02-29 23:59:59.250000', 10, FALSE),
  (NULL, NULL, NULL, NULL);";

/// Foreign keys of every kind the engine's ORM treats apart (the same DDL on every database:
/// table-level clauses, which SQLAlchemy's SQLite dialect reads too): nullable and NOT NULL,
/// with and without `ON DELETE`, two levels deep, a self-reference and a key inside the child's
/// primary key.
/// The rows of `docs`: a NULL, a JSON `null`, a list.
/// Two notes, each logged by the `notes` table's trigger (`notes_log`: each backend's DDL
/// makes both, with an `AFTER INSERT` and an `AFTER DELETE` trigger).
const NOTES: &str = "
INSERT INTO notes (body) VALUES ('a'), ('b');
";

const DOCS: &str = "
INSERT INTO docs VALUES (1, NULL), (2, 'null'), (3, '[1]');
";

/// The key and JSON text of the one row of `edges` (each backend's DDL makes the table: a JSON
/// column, a double and a time of day, which SQLite's engine cannot read at `24:00:00`): an
/// integer past every machine type, a negative zero, an exponent and a number past the largest
/// double, kept as written (PostgreSQL's `json`, SQLite's and MariaDB's text).
const EDGE_DOC: &str =
    r#"1, '{"big": 123456789012345678901234567890, "neg": -0, "e": 1e2, "huge": 1e400}'"#;

const REFERENCE_TABLES: &str = "
CREATE TABLE parents (id INTEGER PRIMARY KEY, name VARCHAR(20));
CREATE TABLE loose (id INTEGER PRIMARY KEY, parent_id INTEGER,
  FOREIGN KEY (parent_id) REFERENCES parents (id));
CREATE TABLE owned (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL,
  FOREIGN KEY (parent_id) REFERENCES parents (id));
CREATE TABLE owned_deep (id INTEGER PRIMARY KEY, owned_id INTEGER NOT NULL,
  FOREIGN KEY (owned_id) REFERENCES owned (id));
CREATE TABLE restricted (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL,
  FOREIGN KEY (parent_id) REFERENCES parents (id) ON DELETE RESTRICT);
CREATE TABLE nullable_cascade (id INTEGER PRIMARY KEY, parent_id INTEGER,
  FOREIGN KEY (parent_id) REFERENCES parents (id) ON DELETE CASCADE);
CREATE TABLE db_cascade (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL,
  FOREIGN KEY (parent_id) REFERENCES parents (id) ON DELETE CASCADE);
CREATE TABLE db_set_null (id INTEGER PRIMARY KEY, parent_id INTEGER,
  FOREIGN KEY (parent_id) REFERENCES parents (id) ON DELETE SET NULL);
CREATE TABLE tree (id INTEGER PRIMARY KEY, parent_id INTEGER,
  FOREIGN KEY (parent_id) REFERENCES tree (id));
CREATE TABLE memberships (parent_id INTEGER NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (parent_id, n), FOREIGN KEY (parent_id) REFERENCES parents (id));
INSERT INTO parents VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO loose VALUES (1, 1), (2, 2);
INSERT INTO owned VALUES (1, 1), (2, 2);
INSERT INTO owned_deep VALUES (1, 1), (2, 2);
INSERT INTO restricted VALUES (1, 1);
INSERT INTO nullable_cascade VALUES (1, 1);
INSERT INTO db_cascade VALUES (1, 1);
INSERT INTO db_set_null VALUES (1, 1);
INSERT INTO tree VALUES (1, NULL), (2, 1), (3, 2);
INSERT INTO memberships VALUES (3, 1);
CREATE TABLE hosts (id INTEGER PRIMARY KEY);
CREATE TABLE np_first (host_id INTEGER, v VARCHAR(10),
  FOREIGN KEY (host_id) REFERENCES hosts (id));
CREATE TABLE np_later (v VARCHAR(10), host_id INTEGER,
  FOREIGN KEY (host_id) REFERENCES hosts (id));
CREATE TABLE np_owned (v VARCHAR(10), host_id INTEGER NOT NULL,
  FOREIGN KEY (host_id) REFERENCES hosts (id));
INSERT INTO hosts VALUES (1), (2), (3), (4);
INSERT INTO np_first VALUES (1, 'a');
INSERT INTO np_later VALUES ('x', 2), ('x', 4);
INSERT INTO np_owned VALUES ('y', 3), ('y', 4), ('z', 3);
CREATE TABLE gen (id INTEGER PRIMARY KEY, a INTEGER, g INTEGER GENERATED ALWAYS AS (a * 2) STORED);
INSERT INTO gen (id, a) VALUES (1, 3);
";

/// What the engine does with a list's `tz` on a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeZone {
    /// Nothing (SQLite): the answers are those without it.
    Ignored,
    /// The session's time zone (PostgreSQL): date-times with an offset are shown in it.
    Session,
    /// [decision: stricter] Refused (MySQL keeps it on the connection for later requests).
    Refused,
}

/// How a database reads the text `99-12-31` compared with a `DATE` column.
#[derive(Clone, Copy, PartialEq)]
enum DateText {
    /// As text (SQLite): `'2024-03-05' > '99-12-31'` is false.
    Text,
    /// As a date whose two-digit year is 1970..=2069 (MySQL): 1999-12-31.
    TwoDigitYear,
    /// As month, day, year (PostgreSQL's `MDY`): month 99 is out of range, the engine fails.
    MonthFirst,
}

/// An emulator serving the rows from one backend, as resource `shop`.
/// How SQLAlchemy's dialect of a database writes the text of a query.
#[derive(Clone, Copy)]
struct TextDialect {
    /// The quote of an identifier.
    quote: char,
    /// The always-false condition an empty query folds into.
    never: &'static str,
    /// `user` is a reserved word (PostgreSQL's).
    reserves_user: bool,
}

/// A list as a read-only query's parameter, as the engine's driver writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListParameters {
    /// psycopg2: `ARRAY[...]`.
    Array,
    /// PyMySQL: `(...)`, for `IN`.
    Row,
    /// Python's `sqlite3` cannot bind one.
    Refused,
}

struct Target {
    /// The database enforces foreign keys (the engine runs SQLite without).
    enforces_foreign_keys: bool,
    /// What the engine does with `tz` on this database (svc-engine/src/time_zone.rs).
    time_zone: TimeZone,
    /// A `JSON` column is text to the engine (MariaDB's `JSON` is `LONGTEXT`): its field is a
    /// `CharField`, and `None` is SQL NULL.
    json_is_text: bool,
    /// SQLAlchemy's reflection reads an expression default (`DEFAULT (lower('ABC'))`) as one;
    /// MySQL's reads MariaDB's `lcase('ABC')` as none.
    reads_expression_defaults: bool,
    /// A database error's text has the database's `HINT` line (PostgreSQL's, as psycopg2
    /// writes it).
    error_hints: bool,
    /// How SQLAlchemy's dialect writes the text of a query.
    text_dialect: TextDialect,
    /// `LIMIT 1` over rows that tie answers whichever the planner reads first (a server's):
    /// the engine's row for a key several rows share cannot be known.
    planner_picks_ties: bool,
    /// How the database reads the text the engine compares a date column with (its
    /// `strftime('%Y-%m-%d')`, whose year is not padded: `99-12-31` for the year 99).
    date_text: DateText,
    /// The greatest `OFFSET` the engine's driver passes to the database.
    max_offset: u64,
    /// `BOOLEAN` is an integer type (MySQL's `TINYINT(1)`): its field is an integer field.
    booleans_are_integers: bool,
    /// The engine's driver fails on text holding NUL (psycopg2).
    nul_text_fails: bool,
    /// A `timestamp(0)` key (`stamps.k`) stores fractional seconds as another value
    /// (PostgreSQL rounds them, MariaDB drops them); SQLite stores the text as given.
    stores_keys_otherwise: bool,
    /// A `TIME` column holds the end of the day, `24:00:00`, which the engine's driver reads
    /// as a time of day (PostgreSQL, MariaDB); on SQLite the engine cannot read it.
    holds_end_of_day: bool,
    /// How the engine's driver writes a list given as a read-only query's parameter.
    list_parameters: ListParameters,
    emulator: Emulator,
    /// The config it was started with: another emulator on the same database.
    config: EmulatorConfig,
    /// The number of the database's sessions left inside a transaction (none on SQLite, whose
    /// connections the emulator keeps), asked outside the emulator.
    open_transactions: Option<Box<dyn Fn() -> String + Send + Sync>>,
    /// A database of its own on a shared server, dropped with the target.
    _database: Option<maria_server::Database<'static>>,
}

impl Target {
    async fn serving(resource: ResourceConfig) -> Self {
        // A database of the test's own: a project's reset puts it back too.
        let resource = actions(resource.reset(true));
        let projects = ProjectsConfig::new(vec![
            ProjectConfig::new("demo")
                .api_key(API_KEY)
                .resource(resource)
                .workflow(
                    WorkflowConfig::new("wf-move")
                        .step("shop", "ping")
                        .step("shop", "move"),
                )
                .workflow(
                    WorkflowConfig::new("wf-broken")
                        .step("shop", "move")
                        .step("shop", "duplicate"),
                ),
        ]);
        let config = EmulatorConfig::default().projects(projects);
        let emulator = Emulator::start(config.clone())
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        Self {
            enforces_foreign_keys: true,
            time_zone: TimeZone::Session,
            json_is_text: false,
            reads_expression_defaults: true,
            error_hints: false,
            text_dialect: TextDialect {
                quote: '"',
                never: "0 = 1",
                reserves_user: false,
            },
            planner_picks_ties: true,
            date_text: DateText::MonthFirst,
            max_offset: i64::MAX as u64,
            booleans_are_integers: false,
            nul_text_fails: true,
            holds_end_of_day: true,
            list_parameters: ListParameters::Array,
            stores_keys_otherwise: true,
            emulator,
            config,
            open_transactions: None,
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

    /// A `POST` of `body` to a path of the project (not of the resource), with its API key.
    async fn post_project(&self, path: &str, body: Value) -> Reply {
        let call = Call::new(Method::POST, format!("/projects/demo/prod/{path}"))
            .auth(format!("Bearer {API_KEY}"))
            .json(&body);
        send(&self.emulator, call).await
    }

    async fn get(&self, path: &str) -> Reply {
        self.call(Method::GET, path, None).await
    }

    /// Sends `call` as it is to the target's emulator.
    async fn emulator_call(&self, call: Call) -> Reply {
        send(&self.emulator, call).await
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
        "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, age INTEGER);\n{ROWS}
CREATE TABLE tags (label TEXT, n INTEGER);
CREATE TABLE pairs (a INTEGER, b TEXT, v INTEGER, PRIMARY KEY (a, b));
CREATE TABLE events (id INTEGER PRIMARY KEY, day DATE, at DATETIME, amount NUMERIC(10, 2), ok BOOLEAN);
CREATE TABLE docs (id INTEGER PRIMARY KEY, doc JSON);
CREATE TABLE defaults (id INTEGER PRIMARY KEY, lit INTEGER DEFAULT 7, expr TEXT DEFAULT (lower('ABC')), typed INTEGER NOT NULL DEFAULT 7);
CREATE TABLE gen_docs (id INTEGER PRIMARY KEY, doc JSON, copy JSON GENERATED ALWAYS AS (doc) STORED);
CREATE TABLE guarded (id INTEGER PRIMARY KEY, amount INTEGER);
CREATE TABLE words (id INTEGER PRIMARY KEY, \"order\" TEXT, \"user\" TEXT, \"Mixed\" TEXT);
CREATE TABLE files (id INTEGER PRIMARY KEY, body BLOB, name TEXT);
CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB);
INSERT INTO blobs VALUES (1, X'00FF275C');
CREATE TABLE typed (id INTEGER PRIMARY KEY, f FLOAT(53), r REAL, n NUMERIC(10, 2), i INTEGER, b BOOLEAN, d52 DOUBLE(5, 2));
CREATE TABLE edges (id INTEGER PRIMARY KEY, doc JSON, d REAL, t TIME);
INSERT INTO edges VALUES ({EDGE_DOC}, NULL, NULL);
CREATE TABLE stamps (k DATETIME PRIMARY KEY, v TEXT);
CREATE TABLE nums (k NUMERIC(10, 2) PRIMARY KEY, v TEXT);
INSERT INTO nums VALUES (20420.328, 'a');
CREATE TABLE codes_null (code TEXT PRIMARY KEY, v TEXT);
INSERT INTO codes_null VALUES ('c1', 'a');
CREATE TRIGGER guard BEFORE INSERT ON guarded WHEN NEW.amount < 0
BEGIN SELECT RAISE(ABORT, 'amount is negative'); END;
CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
CREATE TABLE notes_log (id INTEGER PRIMARY KEY, note_id INTEGER, what TEXT);
CREATE TRIGGER noted AFTER INSERT ON notes
BEGIN INSERT INTO notes_log (note_id, what) VALUES (NEW.id, 'created'); END;
CREATE TRIGGER unnoted AFTER DELETE ON notes
BEGIN INSERT INTO notes_log (note_id, what) VALUES (OLD.id, 'deleted'); END;
{NOTES}{SHAPE_ROWS}{REFERENCE_TABLES}{DOCS}"
    );
    let mut target = Target::serving(ResourceConfig::new("shop", TOKEN).seed_sql(seed)).await;
    target.enforces_foreign_keys = false;
    target.time_zone = TimeZone::Ignored;
    target.planner_picks_ties = false;
    target.date_text = DateText::Text;
    target.nul_text_fails = false;
    target.holds_end_of_day = false;
    target.list_parameters = ListParameters::Refused;
    target.stores_keys_otherwise = false;
    target
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
                "CREATE TABLE people (id serial PRIMARY KEY, name text NOT NULL, city text, age integer);\n{ROWS}
CREATE TABLE tags (label text, n integer);
CREATE TABLE pairs (a integer, b text, v integer, PRIMARY KEY (a, b));
CREATE TABLE events (id serial PRIMARY KEY, day date, at timestamp, amount numeric(10, 2), ok boolean);
CREATE TABLE docs (id integer PRIMARY KEY, doc jsonb);
CREATE DOMAIN seven AS integer DEFAULT 7;
CREATE TABLE defaults (id integer PRIMARY KEY, lit integer DEFAULT 7, expr text DEFAULT lower('ABC'), typed seven NOT NULL);
CREATE TABLE gen_docs (id integer PRIMARY KEY, doc jsonb, copy jsonb GENERATED ALWAYS AS (doc) STORED);
CREATE TABLE guarded (id integer PRIMARY KEY, amount integer);
CREATE TABLE words (id integer PRIMARY KEY, \"order\" text, \"user\" text, \"Mixed\" text);
CREATE TABLE files (id integer PRIMARY KEY, body bytea, name text);
CREATE TABLE blobs (id integer PRIMARY KEY, body bytea);
INSERT INTO blobs VALUES (1, decode('00ff275c', 'hex'));
CREATE TABLE typed (id serial PRIMARY KEY, f float(53), r real, n numeric(10, 2), i integer, b boolean, u uuid, bits bit(3));
CREATE TABLE edges (id integer PRIMARY KEY, doc json, d double precision, t time);
INSERT INTO edges VALUES ({EDGE_DOC}, NULL, '24:00:00');
CREATE TABLE stamps (k timestamp(0) PRIMARY KEY, v text);
CREATE TABLE nums (k numeric(10, 2) PRIMARY KEY, v text);
INSERT INTO nums VALUES (20420.328, 'a');
CREATE TABLE codes_null (code text PRIMARY KEY, v text);
INSERT INTO codes_null VALUES ('c1', 'a');
CREATE FUNCTION guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.amount < 0 THEN
    RAISE EXCEPTION 'amount is negative' USING HINT = 'Send zero or more.';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER guard BEFORE INSERT ON guarded FOR EACH ROW EXECUTE FUNCTION guard();
CREATE TABLE notes (id serial PRIMARY KEY, body text);
CREATE TABLE notes_log (id serial PRIMARY KEY, note_id integer, what text);
CREATE FUNCTION log_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO notes_log (note_id, what) VALUES (NEW.id, 'created');
    RETURN NEW;
  END IF;
  INSERT INTO notes_log (note_id, what) VALUES (OLD.id, 'deleted');
  RETURN OLD;
END $$;
CREATE TRIGGER noted AFTER INSERT OR DELETE ON notes FOR EACH ROW EXECUTE FUNCTION log_note();
{NOTES}{SHAPE_ROWS}{REFERENCE_TABLES}{DOCS}"
            ),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let mut target =
        Target::serving(ResourceConfig::new("shop", TOKEN).database(cluster.url(&name))).await;
    target.error_hints = true;
    target.text_dialect = TextDialect {
        quote: '"',
        never: "false",
        reserves_user: true,
    };
    target.open_transactions = Some(Box::new(move || {
        cluster
            .psql(
                &name,
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND state LIKE 'idle in transaction%'",
            )
            .unwrap_or_else(|e| panic!("{e}"))
    }));
    target
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
             city VARCHAR(50) COLLATE utf8mb4_bin, age INT);\n{ROWS}\n\
             CREATE TABLE tags (label VARCHAR(20), n INT);\n\
             CREATE TABLE pairs (a INT, b VARCHAR(20), v INT, PRIMARY KEY (a, b));\n\
             CREATE TABLE events (id INT AUTO_INCREMENT PRIMARY KEY, day DATE, at DATETIME(6), \
             amount DECIMAL(10, 2), ok BOOLEAN);\n\
             CREATE TABLE docs (id INT PRIMARY KEY, doc JSON);\n\
             CREATE TABLE defaults (id INT PRIMARY KEY, lit INT DEFAULT 7, \
             expr VARCHAR(10) DEFAULT (lower('ABC')), typed INT NOT NULL DEFAULT 7);\n\
             CREATE TABLE gen_docs (id INT PRIMARY KEY, doc JSON, \
             copy LONGTEXT GENERATED ALWAYS AS (doc) STORED);\n\
             CREATE TABLE guarded (id INT PRIMARY KEY, amount INT);\n\
             CREATE TABLE words (id INT PRIMARY KEY, `order` TEXT, `user` TEXT, `Mixed` TEXT);\n\
             CREATE TABLE files (id INT PRIMARY KEY, body BLOB, name TEXT);\n\
             CREATE TABLE blobs (id INT PRIMARY KEY, body BLOB);\n\
             INSERT INTO blobs VALUES (1, X'00FF275C');\n\
             CREATE TABLE typed (id INT AUTO_INCREMENT PRIMARY KEY, f FLOAT, r DOUBLE, \
             n DECIMAL(10, 2), i INT, b BOOLEAN, bin VARBINARY(4));\n\
             CREATE TABLE edges (id INT PRIMARY KEY, doc JSON, d DOUBLE, t TIME);\n\
             INSERT INTO edges VALUES ({EDGE_DOC}, NULL, '24:00:00');\n\
             CREATE TABLE stamps (k DATETIME(0) PRIMARY KEY, v VARCHAR(10));\n\
             CREATE TABLE nums (k DECIMAL(10, 2) PRIMARY KEY, v VARCHAR(10));\n\
             INSERT INTO nums VALUES (20420.328, 'a');\n\
             CREATE TABLE codes_null (code VARCHAR(10) PRIMARY KEY, v VARCHAR(10));\n\
             INSERT INTO codes_null VALUES ('c1', 'a');\n\
             DELIMITER //\n\
             CREATE TRIGGER guard BEFORE INSERT ON guarded FOR EACH ROW IF NEW.amount < 0 THEN \
             SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'amount is negative'; END IF//\n\
             DELIMITER ;\n\
             CREATE TABLE notes (id INT AUTO_INCREMENT PRIMARY KEY, body TEXT);\n\
             CREATE TABLE notes_log (id INT AUTO_INCREMENT PRIMARY KEY, note_id INT, \
             what VARCHAR(20));\n\
             CREATE TRIGGER noted AFTER INSERT ON notes FOR EACH ROW \
             INSERT INTO notes_log (note_id, what) VALUES (NEW.id, 'created');\n\
             CREATE TRIGGER unnoted AFTER DELETE ON notes FOR EACH ROW \
             INSERT INTO notes_log (note_id, what) VALUES (OLD.id, 'deleted');\n\
             {NOTES}{SHAPE_ROWS}{REFERENCE_TABLES}{DOCS}"
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut target =
        Target::serving(ResourceConfig::new("shop", TOKEN).database(database.url())).await;
    let name = database.name().to_owned();
    target.open_transactions = Some(Box::new(move || {
        server
            .sql(
                &name,
                "SELECT COUNT(*) FROM information_schema.INNODB_TRX t JOIN \
                 information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id \
                 WHERE p.DB = DATABASE() AND p.ID <> CONNECTION_ID()",
            )
            .unwrap_or_else(|e| panic!("{e}"))
    }));
    target._database = Some(database);
    target.time_zone = TimeZone::Refused;
    target.json_is_text = true;
    target.date_text = DateText::TwoDigitYear;
    target.max_offset = u64::MAX;
    target.booleans_are_integers = true;
    target.list_parameters = ListParameters::Row;
    target.nul_text_fails = false;
    target.reads_expression_defaults = false;
    target.text_dialect = TextDialect {
        quote: '`',
        never: "false = 1",
        reserves_user: false,
    };
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
    a_key_stored_as_another_value_is_not_read_back,
    a_write_answers_the_record_of_its_whole_key,
    a_write_names_the_record_by_its_key_as_loaded,
    a_refused_write_leaves_no_change_and_no_lock,
    a_json_column_given_null_keeps_what_loads_as_none,
    a_create_leaves_to_the_database_the_defaults_the_engine_reads,
    a_default_of_a_columns_type_is_the_columns,
    a_generated_json_column_given_null_is_written,
    a_trigger_that_refuses_a_write_is_a_400_with_the_databases_message,
    an_unknown_function_answers_the_query_text_in_the_databases_dialect,
    aggregates,
    groups_sorted_by_key,
    sql_answers_columns_and_rows,
    reload_reads_the_schema_again,
    a_reset_puts_every_tables_rows_and_next_key_back,
    a_reset_and_an_import_write_each_row_once_whatever_the_triggers,
    an_export_imported_by_another_emulator_answers_as_it_did,
    an_exports_counters_name_only_the_imported_tables,
    links_keep_the_query_sorted_and_encoded_as_python_does,
    paging_numbers_are_read_as_pythons_int,
    repeated_keys_take_the_first_value_and_in_takes_them_all,
    mistakes_are_refused_with_what_to_fix,
    a_missing_record_is_404_for_every_verb,
    counts_follow_the_filters,
    a_filtered_count_follows_every_write,
    a_table_without_a_key_is_keyed_on_its_first_column,
    a_composite_key_is_keyed_on_its_first_column,
    a_key_several_rows_share_is_refused_where_the_planner_picks_the_row,
    a_relation_ending_on_a_binary_column_is_refused,
    a_selection_of_nothing_sends_no_condition_that_would_fail,
    a_view_is_a_model,
    values_are_written_in_the_engines_forms,
    sql_parameters_are_values_never_sql,
    sql_lists_are_written_as_the_engines_driver_writes_them,
    sql_bodies_are_read_as_the_engine_reads_them,
    write_bodies_are_read_as_the_engines_fields_read_them,
    values_are_read_by_the_field_the_types_text_picks,
    a_delete_does_what_the_orm_does_to_the_rows_that_refer_to_it,
    a_generated_column_is_written_only_when_its_value_changes,
    a_relation_path_selects_through_its_joins,
    the_declared_filters_are_read_as_the_engine_reads_them,
    reserved_parameters_with_exact_are_read_in_every_view,
    a_patch_of_something_else_than_an_object_is_refused,
    a_date_filter_reaches_the_database_as_the_engines_text,
    a_page_beyond_the_databases_offset_is_refused,
    every_refusal_by_design_is_marked,
    the_inventorys_examples_are_answered_as_decided,
    get_records_is_a_list_whose_filters_are_read_from_the_body_first,
    a_body_filter_is_read_as_its_field_reads_it,
    a_body_filter_the_engine_fails_on_or_misreads_is_refused,
    the_method_override_changes_only_where_filters_are_read,
    get_records_answers_post_only,
    a_method_a_path_does_not_map_is_answered_as_the_engine_answers_it,
    an_update_looks_its_record_up_before_its_body_is_refused,
    parameters_read_by_get_argument_take_their_last_value_stripped,
    a_json_filter_reads_its_value_as_the_engines_json_field,
    values_at_the_edges_are_read_as_the_engines_drivers_read_them,
    tz_is_read_as_the_engine_reads_it_on_each_database,
    actions_run_in_a_transaction_with_their_inputs_bound,
    a_workflow_runs_its_steps_in_order_until_one_fails,
    bulk_create_creates_each_item_on_its_own,
    reorder_moves_an_ordering_column_through_the_filters,
    reset_order_numbers_the_selected_records_in_order,
    get_siblings_are_the_neighbours_in_the_list_order,
);

/// The engine's update parses the body with the request (a body that is not JSON is its
/// `400` first), then looks the record up (`get_object`: the request's filters, then the key)
/// before its serializer reads a field: what the emulator refuses of a body by design (a form
/// the engine reads no field of, a key that names no field) is refused only where the record
/// is found; elsewhere the engine's `404`, in both modes (MariaDB seed 1 #368 of
/// `cargo xtask fidelity`).
async fn an_update_looks_its_record_up_before_its_body_is_refused(t: &Target) {
    let lenient = Emulator::start(t.config.clone().lenient(true))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let form = |path: &str| {
        Call::new(Method::PATCH, format!("{BASE}/{path}"))
            .auth(TOKEN)
            .raw_body("name=Zed")
            .header("content-type", "application/x-www-form-urlencoded")
            .header("content-encoding", "identity")
    };
    let unknown = |path: &str| {
        Call::new(Method::PATCH, format!("{BASE}/{path}"))
            .auth(TOKEN)
            .json(&json!({"nosuch": 1}))
    };
    for path in ["models/people/999", "models/people/1?city=Nowhere"] {
        for call in [form(path), unknown(path)] {
            t.emulator_call(call.clone())
                .await
                .assert_error(404, "not_found");
            send(&lenient, call).await.assert_error(404, "not_found");
        }
    }
    // Where the update finds its record, the refusals stand, marked.
    t.emulator_call(form("models/people/1"))
        .await
        .assert_stricter("a form under Content-Encoding");
    t.emulator_call(unknown("models/people/1"))
        .await
        .assert_stricter("a key that names no field");
    // A body that is not JSON is the engine's `400` before any lookup.
    let bad = Call::new(Method::PATCH, format!("{BASE}/models/people/999"))
        .auth(TOKEN)
        .raw_body("{bad");
    t.emulator_call(bad).await.assert_error(400, "invalid");
    assert_eq!(t.ids("").await, [5, 4, 3, 2, 1], "nothing was written");
}

/// A JSON column's `exact` reads its value through the engine's `JSONField` (`json.loads`
/// where it can) and compares Python's `str()` of it: `null` is `None`, which no stored text
/// holds (SQLite's substring, PostgreSQL's containment of the JSON string `"None"`); where
/// JSON is text (MariaDB), it is the text `null`.
async fn a_json_filter_reads_its_value_as_the_engines_json_field(t: &Target) {
    let ids = |page: Value| -> Vec<i64> {
        page["results"]
            .as_array()
            .unwrap_or_else(|| panic!("not a page: {page}"))
            .iter()
            .filter_map(|r| r["id"].as_i64())
            .collect()
    };
    let null = ids(t.ok("models/docs?doc=null").await);
    if t.json_is_text {
        assert_eq!(null, [2]);
    } else {
        assert_eq!(null, Vec::<i64>::new());
    }
    // `json_icontains` takes the text as it is (a lookup of the JSON family only).
    if !t.json_is_text {
        assert_eq!(ids(t.ok("models/docs?doc__json_icontains=nul").await), [2]);
    }
}

/// Values at the edges of what the engine's drivers read, as they read them. A JSON value is
/// Python's `json.loads` of its text (psycopg2's, SQLAlchemy's on SQLite): an integer of any
/// size exact, `-0` the integer 0, `1e2` the float 100.0, `1e400` an infinite float the encoder
/// writes `null` (MariaDB's `JSON` is text, answered as stored). A time of `24:00:00` (which
/// PostgreSQL and MariaDB hold) is `00:00:00`, in records, groups and aggregates. A float
/// written as `-0.0` is stored without its sign: psycopg2 writes it as a numeric literal
/// (PostgreSQL's `numeric` has no negative zero), and SQLite and MariaDB keep none.
async fn values_at_the_edges_are_read_as_the_engines_drivers_read_them(t: &Target) {
    let reply = t.get("models/edges/1").await;
    let record = success(&reply);
    let raw = String::from_utf8_lossy(&reply.body).into_owned();
    if t.json_is_text {
        assert_eq!(
            record["doc"],
            json!(r#"{"big": 123456789012345678901234567890, "neg": -0, "e": 1e2, "huge": 1e400}"#),
            "{raw}"
        );
    } else {
        // Compared in the answer's bytes: a parsed JSON number would lose the digits.
        assert!(
            raw.contains(
                r#""doc":{"big":123456789012345678901234567890,"neg":0,"e":100.0,"huge":null}"#
            ),
            "{raw}"
        );
    }
    if t.holds_end_of_day {
        // psycopg2 reads the hour 24 as 0; on MySQL SQLAlchemy keeps the seconds of the day.
        assert_eq!(record["t"], json!("00:00:00"), "{raw}");
        let group = t.ok("models/edges/group?_x_column=t&_y_func=count").await;
        assert_eq!(group, json!([{"group": "00:00:00", "y_func": 1}]));
        let max = t.ok("models/edges/aggregate?_y_func=max&_y_column=t").await;
        assert_eq!(max, json!({"y_func": "00:00:00"}));
    } else {
        assert_eq!(record["t"], Value::Null, "{raw}");
    }
    for body in [json!({"id": 2, "d": -0.0}), json!({"id": 3, "d": "-0"})] {
        let created = t.call(Method::POST, "models/edges", Some(body)).await;
        let record = success(&created);
        let d = &record["d"];
        let value = d
            .as_f64()
            .or_else(|| d.as_str().and_then(|s| s.parse().ok()))
            .unwrap_or_else(|| panic!("not a number: {record}"));
        assert_eq!(value, 0.0, "{record}");
        assert!(value.is_sign_positive(), "a negative zero: {record}");
        // MariaDB's `DOUBLE` is a `Decimal` of ten places: `"0E-10"`.
        let text = d.as_str().map_or_else(|| d.to_string(), str::to_owned);
        assert!(!text.starts_with('-'), "a negative zero: {record}");
    }
}

/// The keys of a page of `events` (whose `day` is 2024-03-05, 2024-02-29 and NULL), or the
/// answer's status when it is not a success.
async fn event_ids(t: &Target, query: &str) -> Result<Vec<i64>, Reply> {
    let reply = t.get(&format!("models/events?{query}")).await;
    if !reply.status.is_success() {
        return Err(reply);
    }
    Ok(reply.json()["results"]
        .as_array()
        .unwrap_or_else(|| panic!("not a page"))
        .iter()
        .filter_map(|r| r["id"].as_i64())
        .collect())
}

/// The engine compares a date column with `strftime('%Y-%m-%d')` of dateparser's reading,
/// whose year is not padded (`0099-12-31` is sent as `99-12-31`); each database reads that
/// text its own way. Years from 1000 on are the same text either way.
async fn a_date_filter_reaches_the_database_as_the_engines_text(t: &Target) {
    assert_eq!(event_ids(t, "day__gt=2024-03-01").await.ok(), Some(vec![1]));
    assert_eq!(
        event_ids(t, "day__gt=1000-01-01").await.ok(),
        Some(vec![2, 1])
    );
    let early = event_ids(t, "day__gt=0099-12-31").await;
    match t.date_text {
        DateText::Text => assert_eq!(early.ok(), Some(vec![])),
        DateText::TwoDigitYear => assert_eq!(early.ok(), Some(vec![2, 1])),
        DateText::MonthFirst => {
            let refused = early.expect_err("month 99");
            assert_eq!(refused.status, 400);
            assert_eq!(refused.json()["error_decision"], "stricter");
        }
    }
    // `999-12-31`: before 2024 as a date, after it as text.
    let before = event_ids(t, "day__lt=0999-12-31").await.ok();
    match t.date_text {
        DateText::Text => assert_eq!(before, Some(vec![2, 1])),
        DateText::TwoDigitYear | DateText::MonthFirst => assert_eq!(before, Some(vec![])),
    }
    // `in` compares the texts as given (the column's field is a `CharField`); the date-time
    // column is compared with a date-time.
    assert_eq!(event_ids(t, "day__in=2024-03-05").await.ok(), Some(vec![1]));
    // A date-time item is read by the database: PostgreSQL's date input drops the time, MySQL
    // compares the date's midnight with it, SQLite compares texts.
    let at_ten = event_ids(t, "day__in=2024-03-05T10:11:12").await.ok();
    let at_midnight = event_ids(t, "day__in=2024-03-05T00:00:00,x").await;
    match t.date_text {
        DateText::Text => {
            assert_eq!(at_ten, Some(vec![]));
            assert_eq!(at_midnight.ok(), Some(vec![]));
        }
        DateText::TwoDigitYear => {
            assert_eq!(at_ten, Some(vec![]));
            assert_eq!(at_midnight.ok(), Some(vec![1]));
        }
        DateText::MonthFirst => {
            assert_eq!(at_ten, Some(vec![1]));
            // `x` is no date to PostgreSQL: the engine fails.
            let refused = at_midnight.expect_err("x is no date");
            assert_eq!(refused.status, 400);
            assert_eq!(refused.json()["error_decision"], "stricter");
            assert_eq!(
                event_ids(t, "day__in=2024-03-05T00:00:00%2B05:00")
                    .await
                    .ok(),
                Some(vec![1])
            );
        }
    }
    assert_eq!(
        event_ids(t, "at__gt=0099-12-31").await.ok(),
        Some(vec![2, 1])
    );
}

/// The engine's `OFFSET` is `(page - 1) * _per_page`; past what the database's driver passes
/// (2^63 - 1, or 2^64 - 1 on MySQL) the engine fails: a refusal by design.
async fn a_page_beyond_the_databases_offset_is_refused(t: &Target) {
    let refused = t.get("models/people?page=9223372036854775807").await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.json()["error_decision"], "stricter");
    // The offset 2^63 - 1 is the last every database takes.
    let last = t
        .ok("models/people?page=9223372036854775808&_per_page=1")
        .await;
    assert_eq!(last["count"], 5);
    let past = t
        .get("models/people?page=9223372036854775809&_per_page=1")
        .await;
    if t.max_offset > i64::MAX as u64 {
        assert_eq!(success(&past)["results"], json!([]));
    } else {
        assert_eq!(past.status, 400);
        assert_eq!(past.json()["error_decision"], "stricter");
    }
    // Without pages, any page number is fine.
    assert_eq!(
        t.ok("models/people?page=9223372036854775807&_no_pagination=1")
            .await
            .as_array()
            .map(Vec::len),
        Some(5)
    );
}

/// What the engine would ignore, misread or fail on is refused with `"error_decision":
/// "stricter"`; what the engine refuses itself is not marked.
async fn every_refusal_by_design_is_marked(t: &Target) {
    let marked = |reply: &Reply| {
        assert_eq!(
            reply.status,
            400,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        assert_eq!(
            reply.json()["error_decision"],
            "stricter",
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
    };
    marked(&t.get("models/people?nosuch=1").await);
    marked(&t.get("models/people?name__gt=a").await);
    marked(&t.get("models/people?age__isnull=maybe").await);
    marked(&t.get("models/events?at=5%20March%202024%2010:11").await);
    let unknown_key = t
        .call(
            Method::POST,
            "models/people",
            Some(json!({"name": "Zed", "nosuch": 1})),
        )
        .await;
    marked(&unknown_key);
    let object_as_boolean = t
        .call(Method::POST, "models/events", Some(json!({"ok": {}})))
        .await;
    if t.booleans_are_integers {
        // An integer field refuses it: the engine's own `400`.
        assert_eq!(object_as_boolean.status, 400);
        assert!(object_as_boolean.json().get("error_decision").is_none());
    } else {
        // A boolean field hashes the value: the engine fails on a dict.
        marked(&object_as_boolean);
    }
    // The engine's own refusal: a number field given a word.
    let word = t
        .call(
            Method::POST,
            "models/people",
            Some(json!({"name": "Zed", "age": "old"})),
        )
        .await;
    assert_eq!(word.status, 400);
    assert!(word.json().get("error_decision").is_none());
    assert_eq!(t.ids("").await, [5, 4, 3, 2, 1], "nothing was written");
    // The engine's views have no `HEAD` (500); the marker is in a header, as there is no body.
    for path in [
        "models/people",
        "models/people/1",
        "models/people/aggregate?_y_func=count",
    ] {
        let head = t.call(Method::HEAD, path, None).await;
        assert_eq!(head.status, 405, "{path}");
        assert_eq!(head.headers["svc-error-decision"], "stricter", "{path}");
    }
    let nul = t
        .call(
            Method::POST,
            "models/people",
            Some(json!({"name": "a\u{0}b"})),
        )
        .await;
    if t.nul_text_fails {
        marked(&nul);
    } else {
        let id = success(&nul)["id"].as_i64().unwrap_or_default();
        assert_eq!(
            t.ok(&format!("models/people/{id}")).await["name"],
            "a\u{0}b"
        );
        let deleted = t
            .call(Method::DELETE, &format!("models/people/{id}"), None)
            .await;
        assert_eq!(deleted.status, 204);
    }
}

/// Each example of the inventory (docs/contract.md, "What the engine reads"), sent to
/// `people`: what is served is answered without a refusal by design, what is stricter is
/// refused with the marker.
async fn the_inventorys_examples_are_answered_as_decided(t: &Target) {
    use svc_engine::inventory::{Decision, INVENTORY};
    let fill = |s: &str| {
        s.replace("{pk}", "3")
            .replace("{key}", "id")
            .replace("{text}", "city")
            .replace("{number}", "age")
    };
    for entry in INVENTORY {
        let Some((method, path, rest)) = entry.example else {
            continue;
        };
        let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::GET);
        let path = fill(path);
        let target = if path.is_empty() {
            "models/people".to_owned()
        } else {
            format!("models/people/{path}")
        };
        let writes = [Method::POST, Method::PATCH, Method::PUT].contains(&method);
        let (target, body) = if writes {
            let body: Value = serde_json::from_str(&fill(rest)).unwrap_or_else(|e| panic!("{e}"));
            (target, Some(body))
        } else if rest.is_empty() {
            (target, None)
        } else {
            (format!("{target}?{}", fill(rest)), None)
        };
        let reply = t.call(method.clone(), &target, body).await;
        let marked = reply
            .headers
            .get("svc-error-decision")
            .is_some_and(|v| v == "stricter");
        match entry.decision {
            Decision::Served => {
                assert!(
                    reply.status.as_u16() < 500 && !marked,
                    "{} ({method} {target}): {} {}",
                    entry.name,
                    reply.status,
                    String::from_utf8_lossy(&reply.body)
                );
            }
            Decision::Stricter(_) => {
                assert!(
                    reply.status.is_client_error() && marked,
                    "{} ({method} {target}): {} {}",
                    entry.name,
                    reply.status,
                    String::from_utf8_lossy(&reply.body)
                );
            }
            Decision::Departure(_) => {}
        }
    }
    assert_eq!(t.ids("").await, [5, 4, 3, 2, 1], "no example wrote");
}

/// `POST .../get_records` of `body`, the query `query` (the data engine's list whose filters are
/// in the body).
async fn get_records(t: &Target, query: &str, body: Value) -> Reply {
    t.call(
        Method::POST,
        &format!("models/people/get_records?{query}"),
        Some(body),
    )
    .await
}

/// The keys of a page, or of a bare list.
fn keys(answer: &Value) -> Vec<i64> {
    answer
        .get("results")
        .unwrap_or(answer)
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {answer}"))
        .iter()
        .filter_map(|r| r["id"].as_i64())
        .collect()
}

/// `POST .../get_records` is the engine's list: the envelope, paging and links of the list,
/// to its own URL; its filters are read from the body first, then the query (jet-bridge's
/// `get_filter_value`); paging from the query only.
async fn get_records_is_a_list_whose_filters_are_read_from_the_body_first(t: &Target) {
    let page = success(
        &get_records(
            t,
            "_per_page=2&page=2",
            json!({"city__in": ["Paris", "paris", "Rome"]}),
        )
        .await,
    );
    assert_eq!(page["count"], 3);
    assert_eq!(keys(&page), [1]);
    assert_eq!(page["next"], Value::Null);
    let previous = page["previous"].as_str().unwrap_or_default();
    assert!(
        previous.ends_with("/models/people/get_records?_per_page=2"),
        "{previous}"
    );
    let first = success(&get_records(t, "_per_page=2", json!({"age": 30})).await);
    assert_eq!(keys(&first), [5, 1]);
    let next = first["next"].as_str().unwrap_or_default();
    assert!(
        next.ends_with("/models/people/get_records?_per_page=2&page=2"),
        "{next}"
    );
    // The body's value wins; a `null` one is none; the query's `__exact` comes before the
    // body's bare name.
    let ids = |query: &'static str, body: Value| async move {
        keys(&success(&get_records(t, query, body).await))
    };
    assert_eq!(ids("age=18", json!({"age": 30})).await, [5, 1]);
    assert_eq!(ids("age=18", json!({"age": null})).await, [4]);
    assert_eq!(ids("age=18", json!({"age": ""})).await, [5, 4, 3, 2, 1]);
    assert_eq!(ids("age__exact=18", json!({"age": 30})).await, [4]);
    assert_eq!(ids("", json!({})).await, [5, 4, 3, 2, 1]);
    // The declared filters too, `NAME__exact` first.
    assert_eq!(ids("", json!({"_order_by": "id"})).await, [1, 2, 3, 4, 5]);
    assert_eq!(
        ids("_order_by=-id", json!({"_order_by__exact": "id"})).await,
        [1, 2, 3, 4, 5]
    );
    assert_eq!(
        ids("", json!({"_order_by": ["id"]})).await,
        Vec::<i64>::new()
    );
    assert_eq!(ids("", json!({"_search": "Rome"})).await, [5]);
    assert_eq!(
        ids("_search=Rome", json!({"_search": ""})).await,
        [5, 4, 3, 2, 1]
    );
    assert_eq!(
        ids("_search=Rome", json!({"_search": []})).await,
        [5, 4, 3, 2, 1]
    );
    // `_no_pagination` from the query: the bare list.
    let all = success(&get_records(t, "_no_pagination=1", json!({"age": 30})).await);
    assert!(all.is_array(), "{all}");
    assert_eq!(keys(&all), [5, 1]);
    // A form body, as the engine reads one (a repeated key is a list: its first value).
    let form = t
        .emulator_call(
            Call::new(Method::POST, format!("{BASE}/models/people/get_records"))
                .auth(TOKEN)
                .raw_body("city=Rome&city=Paris")
                .header("content-type", "application/x-www-form-urlencoded"),
        )
        .await;
    assert_eq!(keys(&success(&form)), [5]);
    // Another content type carries no filters.
    let plain = t
        .emulator_call(
            Call::new(Method::POST, format!("{BASE}/models/people/get_records"))
                .auth(TOKEN)
                .raw_body(r#"{"city": "Rome"}"#)
                .header("content-type", "text/plain"),
        )
        .await;
    assert_eq!(keys(&success(&plain)), [5, 4, 3, 2, 1]);
    assert_eq!(t.ids("").await, [5, 4, 3, 2, 1], "nothing was written");
}

/// A body's value of any JSON type, read as the filter's field reads it (as the running
/// engine read each on SQLite and PostgreSQL).
async fn a_body_filter_is_read_as_its_field_reads_it(t: &Target) {
    let ids = |body: Value| async move { keys(&success(&get_records(t, "", body).await)) };
    let all = [5, 4, 3, 2, 1];
    assert_eq!(ids(json!({"age": 30})).await, [5, 1]);
    assert_eq!(ids(json!({"age": 30.0})).await, [5, 1]);
    assert_eq!(ids(json!({"age": "30"})).await, [5, 1]);
    // `true` is `True`, which a number field reads as 1.
    assert_eq!(ids(json!({"age": true})).await, Vec::<i64>::new());
    assert_eq!(ids(json!({"age": [18, 30]})).await, [4]);
    assert_eq!(ids(json!({"age": []})).await, all);
    assert_eq!(ids(json!({"age": {}})).await, all);
    assert_eq!(ids(json!({"age__in": 30})).await, [5, 1]);
    assert_eq!(ids(json!({"age__in": [30, 18]})).await, [5, 4, 1]);
    assert_eq!(ids(json!({"age__in": "30,18"})).await, [5, 4, 1]);
    assert_eq!(ids(json!({"age__gt": 20})).await, [5, 3, 1]);
    assert_eq!(ids(json!({"exclude__age": 30})).await, [4, 3]);
    // `[null]`: `exact` is `IS NULL`; `isnull` reads it as false.
    assert_eq!(ids(json!({"age": [null]})).await, [2]);
    assert_eq!(ids(json!({"exclude__age": [null]})).await, [5, 4, 3, 1]);
    assert_eq!(ids(json!({"age__isnull": [null]})).await, [5, 4, 3, 1]);
    for (value, nulls) in [
        (json!(true), true),
        (json!(1), true),
        (json!(2), true),
        (json!(1.0), true),
        (json!(false), false),
        (json!(0), false),
        (json!(0.0), false),
        (json!([true]), true),
    ] {
        let expected: &[i64] = if nulls { &[2] } else { &[5, 4, 3, 1] };
        assert_eq!(
            ids(json!({"age__isnull": value})).await,
            expected,
            "{value}"
        );
    }
    // Text fields read Python's `str()` of the value.
    assert_eq!(ids(json!({"city": ["Rome", "Paris"]})).await, [5]);
    assert_eq!(ids(json!({"city": [null]})).await, [4]);
    assert_eq!(ids(json!({"city": 5})).await, Vec::<i64>::new());
    assert_eq!(ids(json!({"city__in": ["Rome", 5]})).await, [5]);
    assert_eq!(
        ids(json!({"city__in": ["Rome,Berlin"]})).await,
        Vec::<i64>::new()
    );
    assert_eq!(ids(json!({"city__icontains": ["om"]})).await, [5]);
    assert_eq!(ids(json!({"name__in": [1, 2]})).await, Vec::<i64>::new());
    // The engine's own refusal: an object is no float.
    let object = get_records(t, "", json!({"age": {"a": 1}})).await;
    assert_eq!(object.status, 400);
    assert!(object.json().get("error_decision").is_none());
    let first_empty = get_records(t, "", json!({"age": [""]})).await;
    assert_eq!(first_empty.status, 400);
    // Dates and booleans (`events`: 2024-03-05 true, 2024-02-29 false, NULLs).
    let events = |body: Value| async move {
        keys(&success(
            &t.call(Method::POST, "models/events/get_records", Some(body))
                .await,
        ))
    };
    assert_eq!(events(json!({"day": ["2024-03-05"]})).await, [1]);
    assert_eq!(events(json!({"day": [null]})).await, [3]);
    assert_eq!(events(json!({"day__in": ["2024-03-05"]})).await, [1]);
    assert_eq!(events(json!({"ok__isnull": false})).await, [2, 1]);
    if !t.booleans_are_integers {
        assert_eq!(events(json!({"ok": true})).await, [1]);
        assert_eq!(events(json!({"ok": 0})).await, [2]);
        assert_eq!(events(json!({"ok": 0.0})).await, [2]);
        assert_eq!(events(json!({"ok": [false, true]})).await, [2]);
        assert_eq!(events(json!({"ok__in": [true, false]})).await, [2, 1]);
        // A boolean's `in` reads `null` as false.
        assert_eq!(events(json!({"ok__in": [null]})).await, [2]);
    }
}

/// What the engine fails on (500) or misreads, given in a body: refused and marked; lenient
/// mode answers the engine's 500 where it fails, and refuses a misreading too.
async fn a_body_filter_the_engine_fails_on_or_misreads_is_refused(t: &Target) {
    let lenient = Emulator::start(t.config.clone().lenient(true))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    async fn send_to(emulator: &Emulator, path: &str, body: Value) -> Reply {
        let call = Call::new(Method::POST, format!("{BASE}/{path}"))
            .auth(TOKEN)
            .json(&body);
        send(emulator, call).await
    }
    // (path, body, lenient mode's answer: the engine's 500 where it fails, its keys where it
    // misreads and the emulator can answer as it does, else a refusal in both modes)
    let fails: Result<Vec<i64>, u16> = Err(500);
    let refused: Result<Vec<i64>, u16> = Err(400);
    let cases = [
        (
            "models/people/get_records",
            json!({"age__gt": [null]}),
            fails.clone(),
        ),
        (
            "models/people/get_records",
            json!({"age__isnull": {"a": 1}}),
            fails.clone(),
        ),
        (
            "models/people/get_records",
            json!({"age__isnull": [[1]]}),
            fails.clone(),
        ),
        (
            "models/people/get_records",
            json!({"_order_by": 5}),
            fails.clone(),
        ),
        (
            "models/people/get_records",
            json!({"_order_by": ["id", "age"]}),
            fails.clone(),
        ),
        (
            "models/people/get_records",
            json!({"_search": 30}),
            refused.clone(),
        ),
        (
            "models/people/get_records",
            json!({"_m2m": ["tags"]}),
            fails.clone(),
        ),
        (
            "models/people/get_records",
            json!({"_relation": 5}),
            fails.clone(),
        ),
        (
            "models/people/get_records",
            json!({"_semantic_search": {"field": "age"}}),
            fails.clone(),
        ),
        ("models/people/get_records", json!([1]), fails.clone()),
        (
            "models/people/get_records",
            json!({"age__in": [null, 30]}),
            Ok(vec![5, 1]),
        ),
        (
            "models/people/get_records",
            json!({"city__in": [null]}),
            Ok(vec![]),
        ),
        (
            "models/people/get_records",
            json!({"exclude__age__in": [null, 30]}),
            refused.clone(),
        ),
        (
            "models/people/get_records",
            json!({"city__icontains": [null]}),
            Ok(vec![]),
        ),
        (
            "models/people/get_records",
            json!({"age__icontains": [null]}),
            refused.clone(),
        ),
        (
            "models/events/get_records",
            json!({"day": 20240305}),
            refused.clone(),
        ),
        (
            "models/events/get_records",
            json!({"day__gt": 2024}),
            refused,
        ),
    ];
    for (path, body, in_lenient) in cases {
        let what = format!("{path} {body}");
        send_to(&t.emulator, path, body.clone())
            .await
            .assert_stricter(&what);
        let answer = send_to(&lenient, path, body).await;
        match in_lenient {
            Err(500) => drop(answer.assert_error(500, "engine_failure")),
            Err(_) => drop(answer.assert_stricter(&what)),
            Ok(ids) => assert_eq!(keys(&success(&answer)), ids, "{what}"),
        }
    }
    if !t.booleans_are_integers {
        send_to(
            &t.emulator,
            "models/events/get_records",
            json!({"ok": {"a": 1}}),
        )
        .await
        .assert_stricter("an object for a boolean");
    }
    // What the engine ignores in a body: strict mode refuses it, lenient mode ignores it.
    for body in [
        json!({"page": 2}),
        json!({"_per_page": 1}),
        json!({"tz": "UTC"}),
        json!({"nosuch": 1}),
        json!({"city__gt": "a"}),
    ] {
        send_to(&t.emulator, "models/people/get_records", body.clone())
            .await
            .assert_stricter(&body.to_string());
        let ignored = send_to(&lenient, "models/people/get_records", body).await;
        assert_eq!(keys(&success(&ignored)), [5, 4, 3, 2, 1]);
    }
    assert_eq!(t.ids("").await, [5, 4, 3, 2, 1], "nothing was written");
}

/// `X-HTTP-Method-Override` replaces the method the engine's views see, after routing: `POST`
/// makes any view read its filters from the body; other values change nothing. `OPTIONS`
/// (which skips the engine's credential check) and `POST` on an update are refused.
async fn the_method_override_changes_only_where_filters_are_read(t: &Target) {
    let call = |method: Method, path: &str, seen: &str, body: Value| {
        Call::new(method, format!("{BASE}/{path}"))
            .auth(TOKEN)
            .header("x-http-method-override", seen)
            .json(&body)
    };
    let rome = json!({"age": 30});
    let list = t
        .emulator_call(call(
            Method::GET,
            "models/people?_per_page=1",
            "POST",
            rome.clone(),
        ))
        .await;
    let list = success(&list);
    assert_eq!((list["count"].clone(), keys(&list)), (json!(2), vec![5]));
    for seen in ["post", "GET", "FOO", "POST,POST", ""] {
        let unread = t
            .emulator_call(call(Method::GET, "models/people", seen, rome.clone()))
            .await;
        assert_eq!(keys(&success(&unread)), [5, 4, 3, 2, 1], "{seen:?}");
    }
    let unread = t
        .emulator_call(call(
            Method::POST,
            "models/people/get_records",
            "GET",
            rome.clone(),
        ))
        .await;
    assert_eq!(keys(&success(&unread)), [5, 4, 3, 2, 1]);
    // Tornado's spelling of the name with `_` is read too.
    let underscored = t
        .emulator_call(
            Call::new(Method::GET, format!("{BASE}/models/people"))
                .auth(TOKEN)
                .header("x_http_method_override", "POST")
                .json(&rome),
        )
        .await;
    assert_eq!(keys(&success(&underscored)), [5, 1]);
    // A retrieve, a delete, an aggregate and a group run the same filters.
    let retrieved = t
        .emulator_call(call(Method::GET, "models/people/5", "POST", rome.clone()))
        .await;
    assert_eq!(success(&retrieved)["id"], 5);
    let missing = t
        .emulator_call(call(Method::GET, "models/people/3", "POST", rome.clone()))
        .await;
    assert_eq!(missing.status, 404);
    let kept = t
        .emulator_call(call(
            Method::DELETE,
            "models/people/3",
            "POST",
            rome.clone(),
        ))
        .await;
    assert_eq!(kept.status, 404);
    let count = t
        .emulator_call(call(
            Method::GET,
            "models/people/aggregate?_y_func=count",
            "POST",
            rome.clone(),
        ))
        .await;
    assert_eq!(success(&count), json!({"y_func": 2}));
    let groups = t
        .emulator_call(call(
            Method::GET,
            "models/people/get_records/group?_x_column=age&_y_func=count",
            "POST",
            rome.clone(),
        ))
        .await;
    assert_eq!(success(&groups), json!([{"group": 30, "y_func": 2}]));
    // `OPTIONS`: refused before credentials are read, in lenient mode too.
    let lenient = Emulator::start(t.config.clone().lenient(true))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    for emulator in [&t.emulator, &lenient] {
        for auth in [Some(TOKEN), None] {
            let mut c = Call::new(Method::GET, format!("{BASE}/models/people"))
                .header("x-http-method-override", "OPTIONS");
            if let Some(auth) = auth {
                c = c.auth(auth);
            }
            send(emulator, c).await.assert_stricter("OPTIONS override");
        }
        let create = Call::new(Method::POST, format!("{BASE}/models/people"))
            .header("x-http-method-override", "OPTIONS")
            .json(&json!({"name": "intruder"}));
        send(emulator, create)
            .await
            .assert_stricter("OPTIONS override");
    }
    // `POST` on an update: strict mode refuses; lenient mode reads the body's fields as filters.
    t.emulator_call(call(
        Method::PATCH,
        "models/people/5",
        "POST",
        json!({"name": "Zed"}),
    ))
    .await
    .assert_stricter("POST override of an update");
    let filtered = send(
        &lenient,
        call(
            Method::PATCH,
            "models/people/5",
            "POST",
            json!({"name": "Zed"}),
        ),
    )
    .await;
    assert_eq!(filtered.status, 404);
    let same = send(
        &lenient,
        call(
            Method::PATCH,
            "models/people/5",
            "POST",
            json!({"name": "Eve"}),
        ),
    )
    .await;
    assert_eq!(success(&same)["name"], "Eve");
    // Every view parses a JSON body, whatever its method.
    let bad = t
        .emulator_call(
            Call::new(Method::GET, format!("{BASE}/models/people"))
                .auth(TOKEN)
                .raw_body("{bad"),
        )
        .await;
    let bad = bad.assert_error(400, "invalid");
    assert!(bad.get("error_decision").is_none(), "{bad}");
    assert_eq!(t.ids("").await, [5, 4, 3, 2, 1], "nothing was written");
    assert_eq!(t.ok("models/people/5").await["name"], "Eve");
}

/// `get_records` answers `POST` only: the engine's view set has no `GET` or `DELETE` action
/// there (404), fails on `PUT` and `PATCH` (refused, marked), and serves the GET forms of
/// aggregate and group under it.
async fn get_records_answers_post_only(t: &Target) {
    for method in [Method::GET, Method::DELETE] {
        let answer = t
            .call(method.clone(), "models/people/get_records", None)
            .await;
        answer.assert_error(404, "not_found");
    }
    for method in [Method::PUT, Method::PATCH] {
        let answer = t
            .call(method.clone(), "models/people/get_records", Some(json!({})))
            .await;
        assert_eq!(answer.status, 405, "{method}");
        assert_eq!(answer.json()["error_decision"], "stricter", "{method}");
    }
    let head = t
        .call(Method::HEAD, "models/people/get_records", None)
        .await;
    assert_eq!(head.status, 405);
    assert_eq!(head.headers["svc-error-decision"], "stricter");
    assert_eq!(
        t.ok("models/people/get_records/aggregate?_y_func=count&age=30")
            .await,
        json!({"y_func": 2})
    );
    assert_eq!(
        t.ok("models/people/get_records/group/?_x_column=age&_y_func=count&age__gte=30")
            .await,
        json!([{"group": 30, "y_func": 2}, {"group": 45, "y_func": 1}])
    );
    assert_eq!(t.ids("").await, [5, 4, 3, 2, 1], "nothing was written");
}

/// What a path of the engine's model routes does not map is answered as the engine answers it
/// (docs/contract.md 5.1, "Methods"): `GET`, `POST` and `DELETE` are no action of its view set
/// (`404`, after the body is read and the credentials checked); `PUT` and `PATCH` fail without
/// a record key, and write then fail on a record's `get_siblings` (refused, marked); `HEAD` and
/// the methods Tornado does not take fail whatever the credentials (refused, marked, with
/// `Allow`); lenient mode answers the engine's `500`s. `OPTIONS`, a preflight too, is `204`.
async fn a_method_a_path_does_not_map_is_answered_as_the_engine_answers_it(t: &Target) {
    let lenient = Emulator::start(t.config.clone().lenient(true))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let marked = |reply: &Reply, what: &str| {
        assert_eq!(
            reply.status,
            405,
            "{what}: {}",
            String::from_utf8_lossy(&reply.body)
        );
        assert_eq!(reply.headers["svc-error-decision"], "stricter", "{what}");
        assert!(reply.headers.contains_key(http::header::ALLOW), "{what}");
    };
    let no_action = [
        (Method::POST, "models/people/3"),
        (Method::DELETE, "models/people"),
        (Method::DELETE, "models/people/aggregate"),
        (Method::DELETE, "models/people/group"),
        (Method::GET, "models/people/get_records"),
        (Method::DELETE, "models/people/get_records"),
        (Method::POST, "models/people/get_records/aggregate"),
        (Method::DELETE, "models/people/get_records/group"),
        (Method::POST, "models/nosuch/3"),
    ];
    for (method, path) in no_action {
        let body = (method == Method::POST).then(|| json!({"name": "Zed"}));
        t.call(method.clone(), path, body)
            .await
            .assert_error(404, "not_found");
        // The credentials are checked first, as the engine checks them.
        t.emulator_call(Call::new(method.clone(), format!("{BASE}/{path}")))
            .await
            .assert_error(401, "not_authenticated");
    }
    // And the body read before: one that is not JSON is the engine's `400`.
    let bad = Call::new(Method::DELETE, format!("{BASE}/models/people"))
        .auth(TOKEN)
        .raw_body("{bad");
    t.emulator_call(bad).await.assert_error(400, "invalid");
    for path in [
        "models/people",
        "models/people/get_records",
        "models/people/aggregate",
        "models/people/group",
        "models/people/get_records/aggregate",
        "models/people/get_records/group",
    ] {
        for method in [Method::PUT, Method::PATCH] {
            let call = Call::new(method.clone(), format!("{BASE}/{path}"))
                .auth(TOKEN)
                .json(&json!({"name": "Zed"}));
            marked(
                &t.emulator_call(call.clone()).await,
                &format!("{method} {path}"),
            );
            let failed = send(&lenient, call).await;
            assert_eq!(failed.status, 500, "lenient {method} {path}");
        }
    }
    // The update looks the model up first.
    t.call(Method::PUT, "models/nosuch", Some(json!({})))
        .await
        .assert_error(404, "not_found");
    // Then reads the request's filters as a list does (its `get_object`), before it misses the
    // key: a filter the engine refuses is its answer, in both modes.
    let refused = t
        .call(Method::GET, "models/people/?age__gte=abc", None)
        .await;
    assert_eq!(
        refused.status,
        400,
        "{}",
        String::from_utf8_lossy(&refused.body)
    );
    for method in [Method::PUT, Method::PATCH] {
        let call = Call::new(
            method.clone(),
            format!("{BASE}/models/people/?age__gte=abc"),
        )
        .auth(TOKEN)
        .json(&json!({"name": "Zed"}));
        for reply in [
            t.emulator_call(call.clone()).await,
            send(&lenient, call).await,
        ] {
            assert_eq!(reply.status, 400, "{method}");
            assert_eq!(reply.json(), refused.json(), "{method}");
        }
    }
    t.emulator_call(Call::new(Method::PUT, format!("{BASE}/models/people")))
        .await
        .assert_error(401, "not_authenticated");
    let siblings = t
        .call(
            Method::PATCH,
            "models/people/3/get_siblings",
            Some(json!({"name": "Zed"})),
        )
        .await;
    assert_eq!(siblings.status, 405);
    assert_eq!(siblings.json()["error_decision"], "stricter");
    for path in [
        "models/people",
        "models/people/3",
        "models/people/get_records",
        "models/people/aggregate",
        "models/people/get_records/group",
    ] {
        for method in ["HEAD", "TRACE", "FOO"] {
            let method = Method::from_bytes(method.as_bytes()).unwrap_or(Method::HEAD);
            for auth in [Some(TOKEN), None] {
                let mut call = Call::new(method.clone(), format!("{BASE}/{path}"));
                if let Some(auth) = auth {
                    call = call.auth(auth);
                }
                let reply = t.emulator_call(call.clone()).await;
                if method == Method::HEAD {
                    assert_eq!(reply.status, 405, "HEAD {path}");
                    assert_eq!(reply.headers["svc-error-decision"], "stricter");
                } else {
                    marked(&reply, &format!("{method} {path}"));
                }
                assert_eq!(
                    send(&lenient, call).await.status,
                    500,
                    "lenient {method} {path}"
                );
            }
        }
    }
    // `OPTIONS`, a browser's preflight too: `204` without credentials, the same headers.
    let preflight = Call::new(
        Method::OPTIONS,
        format!("{BASE}/models/people/3/get_siblings"),
    )
    .header("origin", "https://app.example")
    .header("access-control-request-method", "PUT")
    .header(
        "access-control-request-headers",
        "authorization,content-type",
    );
    let preflight = t.emulator_call(preflight).await;
    assert_eq!(preflight.status, 204);
    assert_eq!(
        preflight.headers["access-control-allow-methods"],
        "GET, POST, PUT, PATCH, DELETE, OPTIONS"
    );
    assert_eq!(preflight.headers["access-control-allow-origin"], "*");
    assert_eq!(t.ids("").await, [5, 4, 3, 2, 1], "nothing was written");
    assert_eq!(t.ok("models/people/3").await["name"], "Carol");
}

/// `page`, `_per_page`, `_no_pagination` and `tz` are read by `get_argument`: the last value,
/// stripped.
async fn parameters_read_by_get_argument_take_their_last_value_stripped(t: &Target) {
    assert_eq!(t.ids("_per_page=9&_per_page=1").await, [5]);
    assert_eq!(t.ids("_per_page=1&page=9&page=%202%20").await, [4]);
    // White space alone is an empty value: the list pages.
    let paged = t.ok("models/people?_no_pagination=%20").await;
    assert_eq!(paged["count"], 5);
    let bare = t.ok("models/people?_no_pagination=&_no_pagination=1").await;
    assert!(bare.is_array(), "{bare}");
    let zoned = t.get("models/events?_order_by=id&tz=%2B02:00").await;
    let spaced = t
        .get("models/events?_order_by=id&tz=UTC&tz=%20%2B02:00%09")
        .await;
    assert_eq!(spaced.status, zoned.status);
    if spaced.status.is_success() {
        assert_eq!(spaced.json(), zoned.json());
    }
    if t.time_zone == TimeZone::Session {
        // Stripped to nothing: the engine fails on an empty zone.
        assert_eq!(t.get("models/events?tz=%20").await.status, 400);
    }
}

async fn actions_run_in_a_transaction_with_their_inputs_bound(t: &Target) {
    let moved = t
        .call(
            Method::POST,
            "actions/move",
            Some(json!({"data": {"id": 2, "city": "O'Brien; DROP TABLE people"}})),
        )
        .await;
    assert_eq!(
        success(&moved),
        json!({"data": [{"id": 2, "name": "bob", "city": "O'Brien; DROP TABLE people", "age": null}]})
    );
    assert_eq!(
        t.ok("models/people/2").await["city"],
        "O'Brien; DROP TABLE people"
    );
    // A `:name` inside a string is text, not an input: the action takes none.
    let count = t
        .call(Method::POST, "actions/count", Some(json!({"data": {}})))
        .await;
    assert_eq!(success(&count), json!({"data": [{"n": 0}]}));
    let fixed = t
        .call(
            Method::POST,
            "actions/ping",
            Some(json!({"data": {"any": 1}})),
        )
        .await;
    assert_eq!(success(&fixed), json!({"data": {"pong": [1, 2.5, null]}}));
    // An action's rows are the values read-only SQL answers, as objects.
    let events = success(
        &t.call(Method::POST, "actions/events", Some(json!({"data": {}})))
            .await,
    );
    let sql = success(
        &t.call(
            Method::POST,
            "sql_get_query",
            Some(json!({"query": EVENTS_QUERY})),
        )
        .await,
    );
    let columns = sql["columns"].as_array().cloned().unwrap_or_default();
    let as_objects: Vec<Value> = sql["data"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|row| {
            let row = row.as_array().cloned().unwrap_or_default();
            let pairs = columns
                .iter()
                .zip(row)
                .map(|(c, v)| (c.as_str().unwrap_or_default().to_owned(), v));
            Value::Object(pairs.collect())
        })
        .collect();
    assert_eq!(as_objects.len(), 3, "{sql}");
    assert_eq!(events["data"], Value::Array(as_objects));
    // Inputs missing or unknown: named, nothing run.
    let missing = t
        .call(
            Method::POST,
            "actions/move",
            Some(json!({"data": {"id": 1}})),
        )
        .await;
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["data"], json!(["Missing input: city."]));
    let unknown = t
        .call(
            Method::POST,
            "actions/move",
            Some(json!({"data": {"id": 1, "city": "x", "citty": "y"}})),
        )
        .await;
    assert_eq!(unknown.status, 400);
    assert_eq!(
        unknown.json()["data"],
        json!(["Unknown input: citty. The action takes: city, id."])
    );
    let unwrapped = t
        .call(Method::POST, "actions/move", Some(json!({"id": 1})))
        .await;
    assert_eq!(unwrapped.status, 400);
    assert!(unwrapped.json()["data"].is_array(), "{:?}", unwrapped.body);
    assert_eq!(t.ok("models/people/1").await["city"], "Paris");
    // An unknown action: 404 naming the resource's actions.
    let nothing = t
        .call(Method::POST, "actions/refund", Some(json!({"data": {}})))
        .await;
    assert_eq!(nothing.status, 404);
    let message = nothing.json()["error"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("move, duplicate, count, ping"),
        "{message}"
    );
    // A statement the database refuses: 400 with its message, nothing kept, no transaction
    // left open.
    let refused = t
        .call(Method::POST, "actions/duplicate", Some(json!({"data": {}})))
        .await;
    assert_eq!(refused.status, 400, "{:?}", refused.body);
    assert_eq!(refused.json()["error_code"], "invalid");
    assert_eq!(t.ok("models/people").await["count"], 5);
    if let Some(open_transactions) = &t.open_transactions {
        let mut open = open_transactions();
        // Only a transaction left open reaches the bound: a rollback takes milliseconds.
        for _ in 0..600 {
            if open.trim() == "0" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            open = open_transactions();
        }
        assert_eq!(open.trim(), "0", "sessions left inside a transaction");
    }
}

async fn a_workflow_runs_its_steps_in_order_until_one_fails(t: &Target) {
    let run = t
        .post_project(
            "workflows/wf-move/run",
            json!({"data": {"id": 4, "city": "Oslo"}}),
        )
        .await;
    assert_eq!(
        success(&run),
        json!({"success": true, "result": [{"id": 4, "name": "Dave", "city": "Oslo", "age": 18}]})
    );
    // The second step fails: the run answers 200 with its error, and the first step's change
    // stays (each step is a transaction of its own).
    let broken = t
        .post_project(
            "workflows/wf-broken/run",
            json!({"data": {"id": 5, "city": "Lima"}}),
        )
        .await;
    let body = success(&broken);
    assert_eq!(body["success"], false, "{body}");
    let error = body["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("step 2 (shop.duplicate): "), "{error}");
    assert_eq!(t.ok("models/people/5").await["city"], "Lima");
    // Inputs are checked before any step runs: a missing one, or one no step takes.
    let missing = t
        .post_project("workflows/wf-broken/run", json!({"data": {"id": 3}}))
        .await;
    assert_eq!(missing.status, 400, "{:?}", missing.body);
    // The message names the first step that takes the input.
    assert_eq!(
        missing.json()["data"],
        json!(["Missing input: city (step 1, shop.move)."])
    );
    let unknown = t
        .post_project(
            "workflows/wf-broken/run",
            json!({"data": {"id": 3, "city": "x", "zip": 1}}),
        )
        .await;
    assert_eq!(unknown.status, 400, "{:?}", unknown.body);
    assert_eq!(
        unknown.json()["data"],
        json!(["Unknown input: zip. The workflow's steps take: city, id."])
    );
    assert_eq!(t.ok("models/people/3").await["city"], "paris");
    // A workflow with a fixed answer among its steps takes any input.
    let any = t
        .post_project(
            "workflows/wf-move/run",
            json!({"data": {"id": 3, "city": "Nice", "zip": 1}}),
        )
        .await;
    assert_eq!(success(&any)["success"], true);
    assert_eq!(t.ok("models/people/3").await["city"], "Nice");
    // An unknown workflow, and the resource's own token, which opens no workflow.
    let unknown = t
        .post_project("workflows/wf-none/run", json!({"data": {}}))
        .await;
    assert_eq!(unknown.status, 404);
    assert!(
        unknown.json()["error"]
            .as_str()
            .unwrap_or_default()
            .contains("wf-move, wf-broken"),
        "{:?}",
        unknown.body
    );
    let call = Call::new(Method::POST, "/projects/demo/prod/workflows/wf-move/run")
        .auth(TOKEN)
        .json(&json!({"data": {"id": 4, "city": "x"}}));
    assert_eq!(send(&t.emulator, call).await.status, 403);
}

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
    // An unknown model: the engine's 404 (`not_found`); the message names the models there are.
    let nobody = t.get("models/nobody").await;
    assert_eq!(nobody.status, 404);
    let body = nobody.json();
    assert_eq!(body["error_code"], "not_found", "{body}");
    let message = body["error"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"nobody\"") && message.contains("people") && message.contains("pairs"),
        "{body}"
    );
    // The same for a record of it, and for a write to it.
    let record = t.get("models/nobody/1").await;
    assert_eq!(record.status, 404);
    assert!(
        record.json()["error"]
            .as_str()
            .unwrap_or_default()
            .contains("people")
    );
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

/// A write refused after its record was locked (the body is read after the lock, as the engine
/// reads it) changes nothing, and its transaction ends with it: no session is left inside a
/// transaction (its rollback runs before the connection serves anyone else, so it is awaited
/// here, for as long as the bound), and a write to the same record, which would wait on a
/// lock left behind, goes through.
/// The engine reads a written record back by the key values it was given. Where the column
/// stores a key value as another value (a `timestamp(0)` key given fractional seconds:
/// PostgreSQL rounds them, MariaDB drops them), nothing has the key given: the engine fails
/// (500) after its commit, on a create and on an update that sets the key. Strict mode refuses
/// both, marked, with nothing stored; lenient mode stores the write and answers 500, as the
/// engine does. SQLite stores the text as given, and finds it.
async fn a_key_stored_as_another_value_is_not_read_back(t: &Target) {
    async fn send_to(emulator: &Emulator, method: Method, path: &str, body: Value) -> Reply {
        let call = Call::new(method, format!("{BASE}/{path}"))
            .auth(TOKEN)
            .json(&body);
        send(emulator, call).await
    }
    let first = json!({"k": "2024-01-01T10:00:00", "v": "a"});
    let created = t.call(Method::POST, "models/stamps", Some(first)).await;
    let key = success(&created)["k"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let at = format!("models/stamps/{key}");
    let rounded = json!({"k": "2024-02-01T10:00:00.6", "v": "b"});
    let created = t
        .call(Method::POST, "models/stamps", Some(rounded.clone()))
        .await;
    let moved = json!({"k": "2024-01-01T10:00:00.6"});
    let patched = t.call(Method::PATCH, &at, Some(moved.clone())).await;
    let stored = |page: Value| -> Vec<String> {
        let rows = page["results"].as_array().cloned().unwrap_or_default();
        let mut values: Vec<String> = rows.iter().map(|r| r["v"].to_string()).collect();
        values.sort();
        values
    };
    if !t.stores_keys_otherwise {
        assert_eq!(created.status, 201, "{:?}", created.body);
        assert_eq!(patched.status, 200, "{:?}", patched.body);
        return;
    }
    for refused in [&created, &patched] {
        assert_eq!(refused.status, 400, "{:?}", refused.body);
        assert_eq!(refused.json()["error_decision"], "stricter");
        assert!(
            refused.json()["k"][0]
                .as_str()
                .is_some_and(|m| m.contains("Send the key"))
        );
    }
    assert_eq!(stored(t.ok("models/stamps").await), ["\"a\""]);
    assert_eq!(t.ok(&at).await["v"], "a");
    let lenient = Emulator::start(t.config.clone().lenient(true))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let created = send_to(&lenient, Method::POST, "models/stamps", rounded).await;
    assert_eq!(created.status, 500, "{:?}", created.body);
    let patched = send_to(&lenient, Method::PATCH, &at, moved).await;
    assert_eq!(patched.status, 500, "{:?}", patched.body);
    // Both were stored (the update as the column stores it: the key rounded on PostgreSQL,
    // the same key on MariaDB).
    assert_eq!(stored(t.ok("models/stamps").await), ["\"a\"", "\"b\""]);
}

/// A create or an update in a table with a composite key answers the record it wrote, found
/// by its whole key, as the engine's ORM reads it back: not another row that shares the key's
/// first column (`pairs` holds `(7, 'm')` and `(7, 'n')`).
async fn a_write_answers_the_record_of_its_whole_key(t: &Target) {
    let body = json!({"a": 7, "b": "new", "v": 90});
    let created = t.call(Method::POST, "models/pairs", Some(body)).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    assert_eq!(created.json(), json!({"a": 7, "b": "new", "v": 90}));
}

/// The engine's ORM names a record in its writes by its key as it loaded it, bound again, and
/// expects its `UPDATE` to match one row. SQLite keeps a `NUMERIC(10, 2)` key's third decimal,
/// which the ORM loads rounded (`20420.33`): its `UPDATE` matches nothing, `400 Query failed`,
/// nothing written (the servers rounded the key when it was stored: nothing has the key given,
/// `404`). A key set to NULL is written where the database lets it (SQLite's text key), and
/// the ORM cannot name the record after: `400 Query failed` too, nothing written (the servers
/// refuse the NULL: `400` with their message).
async fn a_write_names_the_record_by_its_key_as_loaded(t: &Target) {
    let patched = t
        .call(
            Method::PATCH,
            "models/nums/20420.328",
            Some(json!({"v": "b"})),
        )
        .await;
    let nulled = t
        .call(
            Method::PATCH,
            "models/codes_null/c1",
            Some(json!({"code": null})),
        )
        .await;
    assert_eq!(nulled.status, 400, "{:?}", nulled.body);
    if t.stores_keys_otherwise {
        assert_eq!(patched.status, 404, "{:?}", patched.body);
    } else {
        for refused in [&patched, &nulled] {
            assert_eq!(refused.status, 400, "{:?}", refused.body);
            assert_eq!(refused.json()["non_field_errors"][0], "Query failed");
        }
        assert_eq!(t.ok("models/nums/20420.328").await["v"], "a");
    }
    assert_eq!(t.ok("models/codes_null/c1").await["v"], "a");
}

async fn a_refused_write_leaves_no_change_and_no_lock(t: &Target) {
    let before = t.ok("models/people/1").await;
    for _ in 0..40 {
        let refused = t
            .call(
                Method::PATCH,
                "models/people/1",
                Some(json!({"name": "Changed", "age": "not a number"})),
            )
            .await;
        assert_eq!(refused.status, 400, "{:?}", refused.body);
        let missing = t.call(Method::DELETE, "models/people/999", None).await;
        assert_eq!(missing.status, 404, "{:?}", missing.body);
    }
    assert_eq!(t.ok("models/people/1").await, before);
    if let Some(open_transactions) = &t.open_transactions {
        let mut open = open_transactions();
        // Only a transaction left open reaches the bound: a rollback takes milliseconds.
        for _ in 0..600 {
            if open.trim() == "0" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            open = open_transactions();
        }
        assert_eq!(open.trim(), "0", "sessions left inside a transaction");
    }
    let patch = t.call(
        Method::PATCH,
        "models/people/1",
        Some(json!({"city": "Bergen"})),
    );
    // A bound that only a lock left behind reaches: the write itself takes milliseconds.
    let patched = tokio::time::timeout(std::time::Duration::from_secs(120), patch)
        .await
        .unwrap_or_else(|_| panic!("the write waited on a lock a refused write left behind"));
    assert_eq!(success(&patched)["city"], "Bergen");
}

/// A JSON column given `null` (or the text `"null"`) where it holds NULL or JSON `null` is left
/// as stored: the ORM writes only what changed, and both load as `None` (the running engine
/// kept a NULL on SQLite and PostgreSQL). Where it holds a value, `null` is written as JSON
/// `null`, which `isnull` tells from NULL. On MariaDB a `JSON` column is text to the engine:
/// `null` is SQL NULL, and `"null"` the text.
async fn a_json_column_given_null_keeps_what_loads_as_none(t: &Target) {
    for (id, body) in [
        (1, json!({"doc": "null"})),
        (2, json!({"doc": null})),
        (3, json!({"doc": null})),
    ] {
        let patched = t
            .call(Method::PATCH, &format!("models/docs/{id}"), Some(body))
            .await;
        assert_eq!(success(&patched)["id"], id);
    }
    let nulls = t.ok("models/docs?doc__isnull=true&_order_by=id").await;
    let ids: Vec<&Value> = nulls["results"]
        .as_array()
        .unwrap_or_else(|| panic!("not a page: {nulls}"))
        .iter()
        .map(|r| &r["id"])
        .collect();
    if t.json_is_text {
        assert_eq!(ids, [&json!(2), &json!(3)]);
    } else {
        assert_eq!(ids, [&json!(1)]);
    }
}

/// A create that leaves out a column with a default leaves it to the database when the engine's
/// reflection reads the default: a literal one always, an expression one where the dialect's
/// reflection reads it. Where it does not (MariaDB's `lcase('ABC')`), the ORM sends NULL, and
/// NULL is stored and answered.
async fn a_create_leaves_to_the_database_the_defaults_the_engine_reads(t: &Target) {
    let created = t
        .call(Method::POST, "models/defaults", Some(json!({"id": 1})))
        .await;
    let created = success(&created);
    assert_eq!(created["lit"], 7, "{created}");
    let expr = if t.reads_expression_defaults {
        json!("abc")
    } else {
        Value::Null
    };
    assert_eq!(created["expr"], expr, "{created}");
    assert_eq!(t.ok("models/defaults/1").await["expr"], expr);
}

/// A default the database keeps with a column's type (PostgreSQL's domain; elsewhere the
/// column's own) is one SQLAlchemy's reflection reads as the column's: the serializer does not
/// require the column, even `NOT NULL`, and the ORM leaves it to the database.
async fn a_default_of_a_columns_type_is_the_columns(t: &Target) {
    let created = t
        .call(Method::POST, "models/defaults", Some(json!({"id": 2})))
        .await;
    assert_eq!(success(&created)["typed"], 7);
}

/// A project's reset (`POST /_emulator/projects/{project}/reset`) puts back the rows of every
/// table of a resource opted in, as they were at start, and its next generated key: after a
/// create, an update and deletes (a row another table refers to, with the ORM's rules), the
/// tables list as before and a create gets the key the first one got.
async fn a_reset_puts_every_tables_rows_and_next_key_back(t: &Target) {
    let tables = ["people", "parents", "loose", "owned", "db_set_null"];
    let mut before = Vec::new();
    for table in tables {
        before.push(t.ok(&format!("models/{table}?_per_page=100")).await);
    }
    let zed = json!({"name": "Zed", "city": "Oslo"});
    let first = success(
        &t.call(Method::POST, "models/people", Some(zed.clone()))
            .await,
    );
    success(
        &t.call(Method::PATCH, "models/people/1", Some(json!({"age": 99})))
            .await,
    );
    let deleted = t.call(Method::DELETE, "models/people/2", None).await;
    assert_eq!(deleted.status.as_u16(), 204, "{:?}", deleted.body);
    let orphan = t.call(Method::DELETE, "models/loose/1", None).await;
    assert_eq!(orphan.status.as_u16(), 204, "{:?}", orphan.body);

    let reset =
        Call::new(Method::POST, "/_emulator/projects/demo/reset").bearer(t.emulator.api_key());
    let done = success(&send(&t.emulator, reset).await);
    assert_eq!(done["resources"], json!(["__svc_app__", "shop"]), "{done}");
    for (table, was) in tables.iter().zip(&before) {
        let now = t.ok(&format!("models/{table}?_per_page=100")).await;
        assert_eq!(&now, was, "{table} after the reset");
    }
    let again = success(&t.call(Method::POST, "models/people", Some(zed)).await);
    assert_eq!(again["id"], first["id"]);
}

/// A reset, and an import of an export, put each row back once: no table's trigger acts on the
/// rows going back (PostgreSQL turns them off for the transaction, SQLite drops them inside it,
/// MySQL drops them before it), and every trigger acts again after.
async fn a_reset_and_an_import_write_each_row_once_whatever_the_triggers(t: &Target) {
    let seeded = (t.ok(&log("notes")).await, t.ok(&log("notes_log")).await);
    assert_eq!(seeded.1["count"], 2, "{}", seeded.1);
    success(
        &t.call(Method::POST, "models/notes", Some(json!({"body": "c"})))
            .await,
    );
    let deleted = t.call(Method::DELETE, "models/notes/1", None).await;
    assert_eq!(deleted.status.as_u16(), 204, "{:?}", deleted.body);
    let written = (t.ok(&log("notes")).await, t.ok(&log("notes_log")).await);
    assert_eq!(written.1["count"], 4, "created and deleted: {}", written.1);

    let (_dir, export) = exported(t).await;
    let reset =
        Call::new(Method::POST, "/_emulator/projects/demo/reset").bearer(t.emulator.api_key());
    success(&send(&t.emulator, reset).await);
    let now = (t.ok(&log("notes")).await, t.ok(&log("notes_log")).await);
    assert_eq!(now, seeded, "after the reset");
    let logged = note_logged(t, "d", 3, "after the reset").await;

    // An import that fails half-way (its keys are taken) writes nothing, and every trigger acts
    // after it.
    let add = t
        .config
        .clone()
        .import(&export)
        .import_on_rows(ImportOnRows::Add);
    let failed = Emulator::start(add).await.expect_err("the keys are taken");
    assert!(failed.to_string().contains("record 1"), "{failed}");
    assert_eq!(t.ok(&log("notes_log")).await, logged, "nothing written");
    note_logged(t, "f", 4, "after a failed import").await;

    let second = imported(t, &export).await;
    let list =
        |table: &'static str| Call::new(Method::GET, format!("{BASE}/{}", log(table))).auth(TOKEN);
    let imported = (
        send(&second, list("notes")).await.json(),
        send(&second, list("notes_log")).await.json(),
    );
    let results = |page: &(Value, Value)| (page.0["results"].clone(), page.1["results"].clone());
    assert_eq!(results(&imported), results(&written), "after the import");
    let created = send(
        &second,
        Call::new(Method::POST, format!("{BASE}/models/notes"))
            .auth(TOKEN)
            .json(&json!({"body": "e"})),
    )
    .await;
    success(&created);
    let logged = send(&second, list("notes_log")).await.json();
    assert_eq!(
        logged["count"], 5,
        "the trigger acts after the import: {logged}"
    );
    second.shutdown().await;
}

/// The path of `table`'s records, all on one page, by key.
fn log(table: &str) -> String {
    format!("models/{table}?_per_page=100&_order_by=id")
}

/// Creates a note on `t` and checks that its trigger logged it: `count` log rows `when`. The
/// log's page.
async fn note_logged(t: &Target, body: &str, count: u64, when: &str) -> Value {
    success(
        &t.call(Method::POST, "models/notes", Some(json!({"body": body})))
            .await,
    );
    let logged = t.ok(&log("notes_log")).await;
    assert_eq!(logged["count"], count, "the trigger acts {when}: {logged}");
    logged
}

/// An export of `t`'s emulator, in a directory that goes with the first value.
async fn exported(t: &Target) -> (common::TempDir, std::path::PathBuf) {
    let dir = common::TempDir::new();
    let export = dir.join("export");
    t.emulator
        .export(&export)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (dir, export)
}

/// Another emulator on `t`'s database, started from the export in `export`, replacing the rows.
async fn imported(t: &Target, export: &std::path::Path) -> Emulator {
    let config = t
        .config
        .clone()
        .import(export)
        .import_on_rows(ImportOnRows::Replace);
    Emulator::start(config)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Every model's records as the list answers them (count and results, not the links, which
/// name the emulator's port), the project's page settings and the built-in users.
async fn state_of(emu: &Emulator) -> Vec<(String, u16, Value)> {
    let mut paths: Vec<String> = emu
        .models("demo", "shop")
        .expect("the resource")
        .iter()
        .map(|m| format!("{BASE}/models/{}?_per_page=1000", m.name))
        .collect();
    paths.push("/projects/demo/prod/__svc_app__/models/users?_per_page=1000".to_owned());
    let mut state = Vec::new();
    for path in paths {
        let token = if path.contains("__svc_app__") {
            emu.startup_info().resource_tokens["__svc_app__"].clone()
        } else {
            TOKEN.to_owned()
        };
        let reply = send(emu, Call::new(Method::GET, path.clone()).auth(token)).await;
        let body = reply.json();
        let answer =
            json!({"count": body["count"], "results": body["results"], "error": body["error"]});
        state.push((path, reply.status.as_u16(), answer));
    }
    let pages = Call::get("/api/projects/demo/prod/view_settings/").bearer(API_KEY);
    let reply = send(emu, pages).await;
    state.push(("pages".to_owned(), reply.status.as_u16(), reply.json()));
    state
}

/// An export of the emulator's state (`Emulator::export`, as `svc emulator export` writes it),
/// imported by another emulator on the same database (`--import DIR --import-on-rows
/// replace`), answers as the exported one did: every model's count and records in order, the
/// page settings, the users, and the next generated key; without `--import-on-rows` the rows
/// there stop the start.
async fn an_export_imported_by_another_emulator_answers_as_it_did(t: &Target) {
    let zed = json!({"name": "Zed", "city": "Oslo"});
    success(
        &t.call(Method::POST, "models/people", Some(zed.clone()))
            .await,
    );
    success(
        &t.call(Method::PATCH, "models/people/1", Some(json!({"age": 99})))
            .await,
    );
    let deleted = t.call(Method::DELETE, "models/loose/1", None).await;
    assert_eq!(deleted.status.as_u16(), 204, "{:?}", deleted.body);
    let page = Call::new(Method::POST, "/api/projects/demo/prod/view_settings/")
        .bearer(API_KEY)
        .json(&json!({"name": "Orders"}));
    assert_eq!(send(&t.emulator, page).await.status.as_u16(), 201);
    let before = state_of(&t.emulator).await;
    let (_dir, export) = exported(t).await;
    // What the next create got when the export was made; then a change the import undoes.
    let next = success(
        &t.call(Method::POST, "models/people", Some(zed.clone()))
            .await,
    );

    let refused = Emulator::start(t.config.clone().import(&export))
        .await
        .expect_err("rows there stop the start");
    assert!(
        refused.to_string().contains("--import-on-rows"),
        "{refused}"
    );
    let second = imported(t, &export).await;
    let after = state_of(&second).await;

    for (was, now) in before.iter().zip(&after) {
        assert_eq!(now, was, "{} after the import", was.0);
    }
    assert_eq!(after.len(), before.len());
    let created = send(
        &second,
        Call::new(Method::POST, format!("{BASE}/models/people"))
            .auth(TOKEN)
            .json(&zed),
    )
    .await;
    assert_eq!(success(&created)["id"], next["id"], "the next key");
    second.shutdown().await;
}

/// An export's `project.json` is a file anyone who commits an export to a repository can change: the
/// names of its next generated keys (a table's `AUTO_INCREMENT`, a sequence, a row of
/// `sqlite_sequence`) are compared with the imported tables' counters and never written into a
/// statement. A name that is none of them, here one that would append statements of its own,
/// stops the start with a message that says so, before anything is written: the database keeps
/// its tables and rows.
async fn an_exports_counters_name_only_the_imported_tables(t: &Target) {
    let (_dir, export) = exported(t).await;
    let project_json = export.join("demo").join("project.json");
    let mut project: Value =
        serde_json::from_slice(&std::fs::read(&project_json).expect("project.json")).expect("JSON");
    let keys = project["resources"]["shop"]["keys"]
        .as_array_mut()
        .expect("the shop's keys");
    if keys.is_empty() {
        // SQLite numbers a table without AUTOINCREMENT past its largest key: no counter.
        keys.push(json!(["people", 1]));
    }
    for key in keys.iter_mut() {
        let name = key[0].as_str().expect("a counter's name").to_owned();
        key[0] = json!(format!(
            "{name} AUTO_INCREMENT = 1; DROP TABLE tags; ALTER TABLE {name}"
        ));
    }
    std::fs::write(&project_json, serde_json::to_vec(&project).expect("JSON"))
        .expect("project.json written");
    let before = state_of(&t.emulator).await;
    let count_tags = json!({"query": "select count(*) from tags"});
    let tags = success(
        &t.call(Method::POST, "sql_get_query", Some(count_tags.clone()))
            .await,
    );

    let refused = Emulator::start(
        t.config
            .clone()
            .import(&export)
            .import_on_rows(ImportOnRows::Replace),
    )
    .await
    .expect_err("a counter of no imported table stops the import");
    let message = refused.to_string();
    assert!(
        message.contains("next generated keys name") && message.contains("DROP TABLE tags"),
        "{message}"
    );
    assert_eq!(state_of(&t.emulator).await, before, "nothing was written");
    let tags_now = t
        .call(Method::POST, "sql_get_query", Some(count_tags))
        .await;
    assert_eq!(success(&tags_now), tags, "tags is still there");
}

/// A JSON column given `null` on a create is written as JSON's `null` (SQLAlchemy's JSON
/// evaluates `None`), a generated one too, which the database refuses (`400`); where JSON is
/// text to the engine (MariaDB), `null` is left out like any other.
async fn a_generated_json_column_given_null_is_written(t: &Target) {
    let created = t
        .call(
            Method::POST,
            "models/gen_docs",
            Some(json!({"id": 1, "copy": null})),
        )
        .await;
    if t.json_is_text {
        assert_eq!(success(&created)["copy"], Value::Null);
    } else {
        assert_eq!(created.status.as_u16(), 400, "{:?}", created.body);
        assert!(
            created.json()["non_field_errors"][0].is_string(),
            "{created:?}"
        );
    }
}

/// A trigger that raises refuses the write with the database's message, as the engine answers
/// a database error of a write: `400` under `non_field_errors` (PostgreSQL's `HINT` line kept,
/// as psycopg2's text of the error has it), and nothing is stored.
async fn a_trigger_that_refuses_a_write_is_a_400_with_the_databases_message(t: &Target) {
    let refused = t
        .call(
            Method::POST,
            "models/guarded",
            Some(json!({"id": 1, "amount": -1})),
        )
        .await;
    assert_eq!(refused.status.as_u16(), 400, "{:?}", refused.body);
    let message = refused.json()["non_field_errors"][0].clone();
    let message = message.as_str().unwrap_or_default().to_owned();
    assert!(message.contains("amount is negative"), "{message}");
    let hint = message.contains("HINT:  Send zero or more.");
    assert_eq!(hint, t.error_hints, "{message}");
    let kept = t.ok("models/guarded?_no_pagination=1").await;
    assert_eq!(kept, json!([]));
    let created = t
        .call(
            Method::POST,
            "models/guarded",
            Some(json!({"id": 1, "amount": 0})),
        )
        .await;
    assert_eq!(success(&created)["amount"], 0);
}

/// An unknown aggregate function on a text column answers the text of the engine's empty
/// query, as SQLAlchemy writes it in the database's dialect: its quote, its reserved words
/// (`user` is PostgreSQL's alone), its always-false condition.
async fn an_unknown_function_answers_the_query_text_in_the_databases_dialect(t: &Target) {
    let answer = t
        .ok("models/words/aggregate?_y_func=nosuch&_y_column=order")
        .await;
    let TextDialect {
        quote: q,
        never,
        reserves_user,
    } = t.text_dialect;
    let user = if reserves_user { "\"user\"" } else { "user" };
    let want = format!(
        "SELECT words.id AS words_id, words.{q}order{q} AS words_order, words.{user} AS \
         words_user, words.{q}Mixed{q} AS {q}words_Mixed{q} \nFROM words \nWHERE {never}"
    );
    assert_eq!(answer["y_func"], json!(want), "{answer}");
}

/// Deleting a row does what SQLAlchemy automap's relationships do (flow/delete.rs): nullable
/// references become NULL, NOT NULL ones are deleted (and what refers to those), and a key
/// whose `ON DELETE` automap leaves to the database is the database's: done where it enforces
/// foreign keys, left dangling on SQLite, which the engine runs without them.
async fn a_delete_does_what_the_orm_does_to_the_rows_that_refer_to_it(t: &Target) {
    async fn rows(t: &Target, model: &str) -> Vec<Value> {
        let all = t
            .ok(&format!("models/{model}?_no_pagination=1&_order_by=id"))
            .await;
        all.as_array()
            .unwrap_or_else(|| panic!("not a list: {all}"))
            .iter()
            .map(|r| r["parent_id"].clone())
            .collect()
    }
    let deleted = t.call(Method::DELETE, "models/parents/1", None).await;
    assert_eq!(
        deleted.status,
        204,
        "{}",
        String::from_utf8_lossy(&deleted.body)
    );
    assert_eq!(rows(t, "loose").await, [Value::Null, json!(2)]);
    assert_eq!(rows(t, "owned").await, [json!(2)]);
    let deep = t.ok("models/owned_deep?_no_pagination=1").await;
    assert_eq!(column(&deep, "id"), [json!(2)]);
    assert!(rows(t, "restricted").await.is_empty());
    assert_eq!(rows(t, "nullable_cascade").await, [Value::Null]);
    if t.enforces_foreign_keys {
        assert!(rows(t, "db_cascade").await.is_empty());
        assert_eq!(rows(t, "db_set_null").await, [Value::Null]);
    } else {
        assert_eq!(rows(t, "db_cascade").await, [json!(1)]);
        assert_eq!(rows(t, "db_set_null").await, [json!(1)]);
    }
    assert_eq!(t.get("models/parents/1").await.status, 404);
    // A self-reference: the children's reference becomes NULL, the grandchild keeps its own.
    let deleted = t.call(Method::DELETE, "models/tree/1", None).await;
    assert_eq!(
        deleted.status,
        204,
        "{}",
        String::from_utf8_lossy(&deleted.body)
    );
    assert_eq!(rows(t, "tree").await, [Value::Null, json!(2)]);
    // A NOT NULL key inside the child's primary key: the child is deleted.
    let deleted = t.call(Method::DELETE, "models/parents/3", None).await;
    assert_eq!(
        deleted.status,
        204,
        "{}",
        String::from_utf8_lossy(&deleted.body)
    );
    assert_eq!(t.ok("models/memberships").await["count"], 0);
    assert_eq!(t.ok("models/parents").await["count"], 1);
    // Children without a primary key: the engine promotes their first column to the key, and
    // its ORM reaches them by it. Setting that column NULL is refused (the engine fails); a
    // repeated key makes setting NULL fail (`Query failed`); a delete takes every row that
    // shares a key, rows of other parents too.
    let refused = t.call(Method::DELETE, "models/hosts/1", None).await;
    assert_eq!(refused.status, 400);
    let failed = t.call(Method::DELETE, "models/hosts/2", None).await;
    assert_eq!(failed.status, 400);
    assert_eq!(failed.json()["non_field_errors"][0], "Query failed");
    let deleted = t.call(Method::DELETE, "models/hosts/3", None).await;
    assert_eq!(
        deleted.status,
        204,
        "{}",
        String::from_utf8_lossy(&deleted.body)
    );
    assert_eq!(t.ok("models/np_owned").await["count"], 0);
    // `np_later` keeps both its rows (one record to the ORM: their `v` is its promoted key).
    let later = t.ok("models/np_later/aggregate?_y_func=count").await;
    assert_eq!(later["y_func"], 2, "{later}");
    assert_eq!(
        column(&t.ok("models/hosts").await, "id"),
        [json!(4), json!(2), json!(1)]
    );
}

/// SQLAlchemy writes a generated column like any other attribute: a value given on a create,
/// or a changed one on an update, reaches the database, which refuses it (`400` with its
/// message); `null` on a create, and the stored value on an update, are left out.
async fn a_generated_column_is_written_only_when_its_value_changes(t: &Target) {
    let refused = |reply: Reply| {
        assert_eq!(
            reply.status,
            400,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        assert!(reply.json()["non_field_errors"][0].is_string(), "{reply:?}");
    };
    refused(
        t.call(
            Method::POST,
            "models/gen",
            Some(json!({"id": 2, "a": 1, "g": 5})),
        )
        .await,
    );
    let created = t
        .call(
            Method::POST,
            "models/gen",
            Some(json!({"id": 2, "a": 1, "g": null})),
        )
        .await;
    assert_eq!(success(&created), json!({"id": 2, "a": 1, "g": 2}));
    refused(
        t.call(Method::PATCH, "models/gen/1", Some(json!({"g": 5})))
            .await,
    );
    for same in [json!({"g": 6}), json!({"g": "6"}), json!({"a": 3, "g": 6})] {
        let patched = t.call(Method::PATCH, "models/gen/1", Some(same)).await;
        assert_eq!(success(&patched), json!({"id": 1, "a": 3, "g": 6}));
    }
    let patched = t
        .call(Method::PATCH, "models/gen/1", Some(json!({"a": 4})))
        .await;
    assert_eq!(success(&patched), json!({"id": 1, "a": 4, "g": 8}));
    // Nothing refused was written.
    assert_eq!(t.ok("models/gen").await["count"], 2);
}

/// `_relation` joins from the model through keys to a column that must hold one of the values
/// (svc-engine/src/relation.rs); what the engine fails on or misreads is refused.
async fn a_relation_path_selects_through_its_joins(t: &Target) {
    let ids = |query: &'static str| async move {
        let page = t.ok(&format!("models/{query}")).await;
        column(&page, "id")
    };
    assert_eq!(
        ids("owned?_relation=parent_id.parents.id|name.a,b").await,
        [json!(2), json!(1)]
    );
    assert_eq!(
        ids("owned?_relation=parent_id.parents.id|name.b").await,
        [json!(2)]
    );
    assert_eq!(
        ids("owned_deep?_relation=owned_id.owned.id|parent_id.parents.id|name.a").await,
        [json!(1)]
    );
    // A path of no joins filters the model's own column; an empty value matches only ''.
    assert_eq!(ids("owned?_relation=parent_id.2").await, [json!(2)]);
    assert!(
        ids("owned?_relation=parent_id.parents.id|name.")
            .await
            .is_empty()
    );
    assert_eq!(ids("owned?_relation=").await.len(), 2);
    // `_relation__exact` is read first; a path without joins counts in an aggregate too.
    assert_eq!(
        ids("owned?_relation__exact=parent_id.parents.id|name.b&_relation=parent_id.1").await,
        [json!(2)]
    );
    assert_eq!(
        t.ok("models/owned/aggregate?_y_func=count&_relation=parent_id.2")
            .await,
        json!({"y_func": 1})
    );
    // With the other filters, and on one record.
    assert_eq!(
        ids("owned?_relation=parent_id.parents.id|name.a,b&id__gt=1").await,
        [json!(2)]
    );
    assert_eq!(
        t.get("models/owned/1?_relation=parent_id.parents.id|name.b")
            .await
            .status,
        404
    );
    assert_eq!(
        t.ok("models/owned/1?_relation=parent_id.parents.id|name.a")
            .await["id"],
        1
    );
    // The engine fails (a name it lacks, a repeated path) or misreads (a join on a column that
    // is not a key, an aggregate): refused.
    for refused in [
        "owned?_relation=parent_id.nosuch.id|name.a",
        "owned?_relation=parent_id.parents.id|nosuch.a",
        "owned?_relation=parent_id.parents|name.a",
        "owned?_relation=parent_id.parents.id|name.a&_relation=parent_id.2",
        "parents?_relation=id.owned.parent_id|id.1",
        "owned/aggregate?_y_func=count&_relation=parent_id.parents.id|name.a",
        "owned?_relation=parent_id.owned.id|id.1",
    ] {
        assert_refused(t, refused).await;
    }
}

/// `_m2m` (svc-engine/src/declared.rs): no comma selects no record, in lists, counts, aggregates and on
/// one record; a value with a comma (the engine fails on a model with foreign keys, and selects
/// nothing on the others) and a repeated `_m2m` are refused.
async fn the_declared_filters_are_read_as_the_engine_reads_them(t: &Target) {
    for nothing in ["owned?_m2m=parents", "owned?_m2m__exact=x&_m2m=y,1"] {
        let page = t.ok(&format!("models/{nothing}")).await;
        assert_eq!(
            (page["count"].clone(), column(&page, "id")),
            (json!(0), vec![]),
            "{nothing}"
        );
    }
    assert_eq!(
        t.ok("models/owned/aggregate?_y_func=count&_m2m=parents")
            .await,
        json!({"y_func": 0})
    );
    assert_eq!(t.get("models/owned/1?_m2m=parents").await.status, 404);
    assert_eq!(column(&t.ok("models/owned?_m2m=").await, "id").len(), 2);
    // `_segment` and a JSON `_semantic_search` make the engine fail; other text is ignored.
    assert_eq!(column(&t.ok("models/owned?_segment=").await, "id").len(), 2);
    assert_eq!(
        column(&t.ok("models/owned?_semantic_search=text").await, "id").len(),
        2
    );
    for refused in [
        "owned?_m2m=parents,1",
        "parents?_m2m=nosuch,1",
        "owned?_m2m=parents,1,2",
        "owned?_m2m=a&_m2m=b",
        "owned?_segment=recent",
        "owned/aggregate?_y_func=count&_segment=recent",
        "owned?_semantic_search=%7B%7D",
        "owned?_semantic_search=1",
    ] {
        assert_refused(t, refused).await;
    }
}

/// `_search` and `_order_by` are declared filters of the engine, read by its one filter
/// pipeline for every view: `NAME__exact` first (an empty one then filters nothing), else
/// `NAME`. So a retrieve, update or delete takes a record only where the list would show it.
async fn reserved_parameters_with_exact_are_read_in_every_view(t: &Target) {
    assert_eq!(t.ids("_search__exact=ri").await, [3, 1]);
    assert_eq!(t.ids("_search__exact=ri&_search=30").await, [3, 1]);
    assert_eq!(t.ids("_search__exact=&_search=30").await, [5, 4, 3, 2, 1]);
    assert_eq!(t.ids("_order_by__exact=id").await, [1, 2, 3, 4, 5]);
    assert_eq!(
        t.ids("_order_by__exact=id&_order_by=-age").await,
        [1, 2, 3, 4, 5]
    );
    // Other suffixes are no parameter the engine reads: ignored.
    assert_eq!(t.ids("_search__icontains=zzz").await, [5, 4, 3, 2, 1]);
    assert_eq!(
        t.ok("models/people/aggregate?_y_func=count&_search__exact=ri")
            .await,
        json!({"y_func": 2})
    );
    assert_eq!(
        t.get("models/people/3?_search__exact=zzz").await.status,
        404
    );
    assert_eq!(t.get("models/people/3?_search__exact=ri").await.status, 200);
    let patched = t
        .call(
            Method::PATCH,
            "models/people/3?_search__exact=zzz",
            Some(json!({"name": "Changed"})),
        )
        .await;
    assert_eq!(patched.status, 404);
    let deleted = t
        .call(Method::DELETE, "models/people/3?_search__exact=zzz", None)
        .await;
    assert_eq!(deleted.status, 404);
    // `_order_by` is one of them: one character selects nothing, in every view; an unknown
    // name makes the engine fail in every view; a good one changes nothing for one record.
    for path in [
        "models/people/3?_order_by=a",
        "models/people/3?_order_by__exact=a",
    ] {
        assert_eq!(t.get(path).await.status, 404, "{path}");
    }
    let patched = t
        .call(
            Method::PATCH,
            "models/people/3?_order_by=a",
            Some(json!({"name": "Changed"})),
        )
        .await;
    assert_eq!(patched.status, 404);
    let deleted = t
        .call(Method::DELETE, "models/people/3?_order_by=a", None)
        .await;
    assert_eq!(deleted.status, 404);
    let unknown = t.get("models/people/3?_order_by=nosuch").await;
    assert_eq!(unknown.status, 400);
    assert_eq!(unknown.json()["error_decision"], "stricter");
    assert_eq!(
        t.get("models/people/3?_order_by=-name,id").await.status,
        200
    );
    assert_eq!(
        t.ok("models/people/3").await["name"],
        "Carol",
        "nothing changed or deleted"
    );
}

/// A `PATCH` whose body is not a JSON object makes the engine fail (500) on every model, one
/// with required columns too (where nothing would change): refused by design, after the
/// record's `404`.
async fn a_patch_of_something_else_than_an_object_is_refused(t: &Target) {
    for (path, body) in [
        ("models/owned/1", json!([1])),
        ("models/owned/1", json!("x")),
        ("models/owned/1", json!(null)),
        ("models/people/1", json!([{"name": "x"}])),
        ("models/people/1", json!(7)),
    ] {
        let reply = t.call(Method::PATCH, path, Some(body.clone())).await;
        assert_eq!(reply.status, 400, "{path} {body}");
        assert_eq!(reply.json()["error_decision"], "stricter", "{path} {body}");
    }
    let missing = t
        .call(Method::PATCH, "models/owned/99", Some(json!([1])))
        .await;
    assert_eq!(missing.status, 404);
    assert_eq!(
        t.ok("models/owned/1").await,
        json!({"id": 1, "parent_id": 1})
    );
}

/// `models/{path}` is refused with a `400`.
async fn assert_refused(t: &Target, path: &str) {
    let reply = t.get(&format!("models/{path}")).await;
    let body = String::from_utf8_lossy(&reply.body);
    assert_eq!(reply.status, 400, "{path}: {body}");
}

/// `tz` (svc-engine/src/time_zone.rs): nothing on SQLite, the session's time zone on PostgreSQL (the
/// `events` table's `at` has no offset, so its values do not move), refused on MySQL; a zone the
/// engine cannot read, and `tz` on a write, are refused where the engine reads it.
async fn tz_is_read_as_the_engine_reads_it_on_each_database(t: &Target) {
    let plain = t.ok("models/events?_order_by=id").await;
    let zoned = t.get("models/events?_order_by=id&tz=%2B02:00").await;
    match t.time_zone {
        TimeZone::Refused => {
            assert_eq!(zoned.status, 400);
            assert_eq!(zoned.json()["error_decision"], "stricter");
        }
        TimeZone::Ignored | TimeZone::Session => assert_eq!(success(&zoned), plain),
    }
    if t.time_zone == TimeZone::Session {
        assert_eq!(t.get("models/events?tz=Europe/Paris").await.status, 400);
        assert_eq!(t.get("models/events?tz=%2B02").await.status, 400);
        // An offset no time zone has: dateparser does not read it.
        assert_eq!(t.get("models/events?tz=-05:30").await.status, 400);
        let deleted = t
            .call(Method::DELETE, "models/events/3?tz=%2B02:00", None)
            .await;
        assert_eq!(deleted.status, 400);
    }
    // A create with tz: the engine would keep the zone on its connection where it sets one.
    let created = t
        .call(
            Method::POST,
            "models/events?tz=%2B02:00",
            Some(json!({"ok": true})),
        )
        .await;
    let expected = if t.time_zone == TimeZone::Ignored {
        201
    } else {
        400
    };
    assert_eq!(
        created.status,
        expected,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    // An empty tz: nothing where the engine sets no zone or its database refuses it (MySQL);
    // the engine fails on PostgreSQL.
    let empty = t.get("models/events?_order_by=id&tz=&id__lte=3").await;
    if t.time_zone == TimeZone::Session {
        assert_eq!(empty.status, 400);
    } else {
        assert_eq!(success(&empty), plain);
    }
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
        "v": 2, "params_obj": {"a": 30},
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
    // What the engine answers 200 to but misreads (ignores the filter, or reads the text as
    // true) is refused by design, and says so; what the engine refuses too is not marked.
    for (query, marked) in [
        ("nosuch=1", true),
        ("age__nolookup=1", true),
        ("exclude___search=ri", true),
        ("age__isnull=maybe", true),
        ("_order_by=nosuch", true),
        ("age__gt=abc", false),
    ] {
        let reply = t.get(&format!("models/people?{query}")).await;
        assert_eq!(reply.status, 400, "{query}");
        let decision = &reply.json()["error_decision"];
        assert_eq!(decision == "stricter", marked, "{query}: {decision}");
    }
    // A date-time in a form the engine's date parser reads and the emulator does not.
    let reply = t
        .get("models/events?at__gte=5%20March%202024%2010:11")
        .await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json()["error_decision"], "stricter");
    // And in a write, which then changes nothing.
    let before = t.ok("models/events/1").await;
    for at in ["now", "5 March 2024 10:11"] {
        let reply = t
            .call(Method::PATCH, "models/events/1", Some(json!({"at": at})))
            .await;
        assert_eq!(reply.status, 400, "{at}");
        assert_eq!(reply.json()["error_decision"], "stricter", "{at}");
    }
    assert_eq!(t.ok("models/events/1").await, before);
}

async fn a_missing_record_is_404_for_every_verb(t: &Target) {
    assert_eq!(t.get("models/people/99").await.status, 404);
    // A key past a 32-bit `INTEGER` column's range is compared, not stored: no record.
    for verb in [Method::GET, Method::DELETE] {
        let past = t.call(verb.clone(), "models/people/2147483648", None).await;
        assert_eq!(past.status, 404, "{verb}");
    }
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

/// A filtered count, asked again and again (each database may keep it: SQLite's memo, a
/// PostgreSQL snapshot, InnoDB's transaction counter), is the count of the data as it is after
/// each write: through the records API, and through an action's SQL, on page 1 and on a page of
/// a walk.
async fn a_filtered_count_follows_every_write(t: &Target) {
    let count = |page: u32| async move {
        let query = format!("models/people?city__isnull=false&_per_page=1&page={page}");
        t.ok(&query).await["count"].clone()
    };
    for page in [1, 2, 1, 2] {
        assert_eq!(count(page).await, 4, "page {page}");
    }
    // Dave (key 4) has no city: an action gives him one.
    let moved = t
        .call(
            Method::POST,
            "actions/move",
            Some(json!({"data": {"id": 4, "city": "Oslo"}})),
        )
        .await;
    success(&moved);
    for page in [1, 2, 1] {
        assert_eq!(count(page).await, 5, "page {page} after an action");
    }
    let created = t
        .call(
            Method::POST,
            "models/people",
            Some(json!({"name": "Frank", "city": "Lima"})),
        )
        .await;
    let id = success(&created)["id"].clone();
    for page in [2, 1, 2] {
        assert_eq!(count(page).await, 6, "page {page} after a create");
    }
    let deleted = t
        .call(Method::DELETE, &format!("models/people/{id}"), None)
        .await;
    assert!(deleted.status.is_success(), "{}", deleted.status);
    for page in [1, 2] {
        assert_eq!(count(page).await, 5, "page {page} after a delete");
    }
}

/// The keys (`field`) of a list answer, in order.
fn column(page: &Value, field: &str) -> Vec<Value> {
    let rows = page.get("results").unwrap_or(page);
    rows.as_array()
        .unwrap_or_else(|| panic!("not a list: {page}"))
        .iter()
        .map(|r| r[field].clone())
        .collect()
}

async fn a_table_without_a_key_is_keyed_on_its_first_column(t: &Target) {
    // The engine's ORM keys `tags` on `label`: the NULL label is no record, and the two rows
    // of `a` are one record (the first read). A page that is not full counts what it shows.
    // Where the planner picks which of the two it reads first, strict mode refuses the page
    // that holds them ([decision: stricter]: their `n` differ).
    let reply = t.get("models/tags").await;
    if t.planner_picks_ties {
        let body = reply.json();
        assert_eq!(reply.status, 400, "{body}");
        assert_eq!(body["error_decision"], "stricter", "{body}");
        assert!(
            body["label"][0]
                .as_str()
                .is_some_and(|m| m.contains("Rows of tags share")),
            "{body}"
        );
    } else {
        let page = success(&reply);
        assert_eq!(page["count"], 3);
        assert_eq!(column(&page, "label"), [json!("c"), json!("b"), json!("a")]);
    }
    // A full page counts the rows with a key (four).
    let page = t.ok("models/tags?_per_page=2").await;
    assert_eq!(page["count"], 4);
    assert_eq!(column(&page, "label"), [json!("c"), json!("b")]);
    assert_eq!(t.ok("models/tags/b").await, json!({"label": "b", "n": 4}));
    assert_eq!(t.get("models/tags/zz").await.status, 404);
    // Aggregates count rows (the NULL key left out).
    let count = t.ok("models/tags/aggregate?_y_func=count").await;
    assert_eq!(count["y_func"], 4);
    let sum = t.ok("models/tags/aggregate?_y_func=sum&_y_column=n").await;
    assert_eq!(sum["y_func"].as_f64(), Some(12.0), "{sum}");
    // An update of `b` changes its one row; `a` is two rows, which the ORM refuses to update.
    let patched = t
        .call(Method::PATCH, "models/tags/b", Some(json!({"n": 40})))
        .await;
    assert_eq!(success(&patched), json!({"label": "b", "n": 40}));
    let refused = t
        .call(Method::PATCH, "models/tags/a", Some(json!({"n": 9})))
        .await;
    assert_eq!(
        refused.status,
        400,
        "{}",
        String::from_utf8_lossy(&refused.body)
    );
    // A delete of `a` takes both its rows.
    let deleted = t.call(Method::DELETE, "models/tags/a", None).await;
    assert_eq!(deleted.status, 204);
    let rest = t.ok("models/tags?_no_pagination=1").await;
    assert_eq!(column(&rest, "label"), [json!("c"), json!("b")]);
    let count = t.ok("models/tags/aggregate?_y_func=count").await;
    assert_eq!(count["y_func"], 2);
}

async fn a_composite_key_is_keyed_on_its_first_column(t: &Target) {
    // Every row is a record (the identity is the whole key); the first key column orders them.
    let page = t.ok("models/pairs").await;
    assert_eq!(page["count"], 6);
    assert_eq!(
        column(&page, "a"),
        [json!(7), json!(7), json!(5), json!(3), json!(2), json!(1)]
    );
    assert_eq!(
        page["results"].as_array().map(|r| r[2..].to_vec()),
        json!([{"a": 5, "b": "q", "v": 50}, {"a": 3, "b": "x", "v": 10},
               {"a": 2, "b": "z", "v": 30}, {"a": 1, "b": "y", "v": 20}])
        .as_array()
        .cloned()
    );
    // `pairs/2` is the row whose first key column is 2.
    assert_eq!(
        t.ok("models/pairs/2").await,
        json!({"a": 2, "b": "z", "v": 30})
    );
    // The default aggregate column is the key `a`: 3 + 1 + 2 + 5 + 7 + 7 (MySQL's sum of an
    // integer column is a decimal, which the engine writes as a float).
    let sum = t.ok("models/pairs/aggregate?_y_func=sum").await;
    assert_eq!(sum["y_func"].as_f64(), Some(25.0), "{sum}");
    let patched = t
        .call(Method::PATCH, "models/pairs/3", Some(json!({"v": 11})))
        .await;
    assert_eq!(success(&patched), json!({"a": 3, "b": "x", "v": 11}));
    assert_eq!(t.ok("models/pairs/3").await["v"], 11);
    assert_eq!(t.ok("models/pairs/1").await["v"], 20);
    // `pairs/7` names one of two rows; a write reaches that row alone, by its whole key.
    let patched = success(
        &t.call(Method::PATCH, "models/pairs/7", Some(json!({"v": 1})))
            .await,
    );
    assert_eq!(patched["v"], 1);
    let sevens = t.ok("models/pairs?a=7&_order_by=-v").await;
    let b = patched["b"].clone();
    let other = if b == json!("m") {
        json!({"a": 7, "b": "n", "v": 80})
    } else {
        json!({"a": 7, "b": "m", "v": 70})
    };
    assert_eq!(sevens["results"], json!([other, {"a": 7, "b": b, "v": 1}]));
    let deleted = t.call(Method::DELETE, "models/pairs/7", None).await;
    assert_eq!(
        deleted.status,
        204,
        "{:?}",
        String::from_utf8_lossy(&deleted.body)
    );
    assert_eq!(t.ok("models/pairs?a=7").await["count"], 1);
    assert_eq!(t.ok("models/pairs").await["count"], 5);
}

async fn a_key_several_rows_share_is_refused_where_the_planner_picks_the_row(t: &Target) {
    // Two rows have `a` 7: the engine answers the first the database reads. SQLite reads them
    // in key order, as the emulator does; a server's planner chooses by its statistics, so
    // strict mode refuses ([decision: stricter]; lenient mode answers one of them).
    let reply = t.get("models/pairs/7").await;
    if t.planner_picks_ties {
        let body = reply.json();
        assert_eq!(reply.status, 400, "{body}");
        assert_eq!(body["error_decision"], "stricter", "{body}");
        assert!(
            body["a"][0]
                .as_str()
                .is_some_and(|m| m.contains("More than one row of pairs")),
            "{body}"
        );
    } else {
        assert_eq!(success(&reply), json!({"a": 7, "b": "m", "v": 70}));
    }
    // A key one row has is answered everywhere.
    assert_eq!(
        t.ok("models/pairs/5").await,
        json!({"a": 5, "b": "q", "v": 50})
    );
}

async fn a_relation_ending_on_a_binary_column_is_refused(t: &Target) {
    // SQLAlchemy's binary types bind bytes only: the engine fails (500) on any text value for
    // `body`, on each database; strict mode refuses it by design, naming `_relation`.
    for path in [
        "models/files?_relation=body.x",
        "models/files?_relation=id.people.id%7Cname.x",
    ] {
        let reply = t.get(path).await;
        let body = reply.json();
        if path.contains("body") {
            assert_eq!(reply.status, 400, "{body}");
            assert_eq!(body["error_decision"], "stricter", "{body}");
            assert!(
                body["_relation"][0]
                    .as_str()
                    .is_some_and(|m| m.contains("binary field \"body\""))
            );
        } else {
            assert_eq!(reply.status, 200, "{body}");
        }
    }
    assert_eq!(t.ok("models/files?_relation=name.b").await["count"], 1);
}

/// SQLAlchemy writes a selection whose declared filters select nothing (`_order_by` of one
/// character, `_m2m` without a comma) as `WHERE false` alone: a condition the database (or the
/// driver's binding) would refuse when the statement runs is never sent, and the engine
/// answers. A value the engine's filter field refuses as it reads the request is still its
/// `400`.
async fn a_selection_of_nothing_sends_no_condition_that_would_fail(t: &Target) {
    for path in ["models/files?body=x", "models/files?_relation=body.x"] {
        let reply = t.get(path).await;
        let body = reply.json();
        assert_eq!(reply.status, 400, "{path}: {body}");
        assert_eq!(body["error_decision"], "stricter", "{path}: {body}");
        let nothing = t.ok(&format!("{path}&_order_by=-")).await;
        assert_eq!(nothing["count"], 0, "{path}: {nothing}");
        assert_eq!(nothing["results"], json!([]), "{path}: {nothing}");
        let one = t
            .get(&format!(
                "{}&_order_by=-",
                path.replacen("files", "files/1", 1)
            ))
            .await;
        assert_eq!(one.status, 404, "{path}: {}", one.json());
    }
    let misread = t.get("models/files?id=abc&_order_by=-").await;
    assert_eq!(misread.status, 400, "{}", misread.json());
    assert!(
        misread.json().get("error_decision").is_none(),
        "{}",
        misread.json()
    );
}

async fn a_view_is_a_model(t: &Target) {
    // Keyed on its first column, newest first, filtered and counted like a table.
    let page = t.ok("models/adults").await;
    assert_eq!(page["count"], 3);
    assert_eq!(column(&page, "id"), [json!(5), json!(3), json!(1)]);
    assert_eq!(
        t.ok("models/adults/3").await,
        json!({"id": 3, "name": "Carol", "age": 45})
    );
    assert_eq!(t.get("models/adults/2").await.status, 404);
    let page = t.ok("models/adults?age=30&_order_by=name").await;
    assert_eq!(column(&page, "name"), [json!("Alice"), json!("Eve")]);
    let max = t
        .ok("models/adults/aggregate?_y_func=max&_y_column=age")
        .await;
    assert_eq!(max["y_func"], 45);
}

async fn values_are_written_in_the_engines_forms(t: &Target) {
    // A date as text, a date-time in ISO form (microseconds only when not zero; PostgreSQL's
    // with the offset of the database's time zone, as the engine writes it there), a decimal
    // as text with its scale, a boolean as a boolean (MySQL's `BOOLEAN` is `TINYINT(1)`, which
    // the engine writes as the number it is).
    // The database's time zone is read before a request's `tz` sets the session's: a first
    // request in another zone (PostgreSQL's `SET TIME ZONE`) changes no offset written after it.
    let _ = t.get("models/events?_order_by=id&tz=%2B02:00").await;
    let mut page = t.ok("models/events?_order_by=id").await;
    let mut at = Vec::new();
    let mut ok = Vec::new();
    for record in page["results"].as_array_mut().into_iter().flatten() {
        at.push(record["at"].take());
        ok.push(record["ok"].take());
    }
    assert_eq!(
        page["results"],
        json!([
            {"id": 1, "day": "2024-03-05", "at": null, "amount": "4.50", "ok": null},
            {"id": 2, "day": "2024-02-29", "at": null, "amount": "10.00", "ok": null},
            {"id": 3, "day": null, "at": null, "amount": null, "ok": null},
        ])
    );
    assert!(
        ok == [json!(true), json!(false), Value::Null] || ok == [json!(1), json!(0), Value::Null],
        "{ok:?}"
    );
    let at: Vec<&str> = at.iter().map(|v| v.as_str().unwrap_or("null")).collect();
    assert!(
        at[0] == "2024-03-05T10:11:12" || at[0] == "2024-03-05T10:11:12+00:00",
        "{at:?}"
    );
    assert!(at[1].starts_with("2024-02-29T23:59:59.250000"), "{at:?}");
    assert_eq!(at[2], "null");
    // Filters read each value by the column's family.
    let ids = |page: Value| column(&page, "id");
    assert_eq!(
        ids(t.ok("models/events?day__gte=2024-03-01").await),
        [json!(1)]
    );
    assert_eq!(
        ids(t.ok("models/events?at__lt=2024-03-01T00:00:00").await),
        [json!(2)]
    );
    assert_eq!(ids(t.ok("models/events?amount__gt=5").await), [json!(2)]);
    assert_eq!(ids(t.ok("models/events?ok=true").await), [json!(1)]);
    assert_eq!(ids(t.ok("models/events?ok__isnull=true").await), [json!(3)]);
    // The sum of a decimal column is a decimal, written as text with the column's scale.
    let sum = t
        .ok("models/events/aggregate?_y_func=sum&_y_column=amount")
        .await;
    assert_eq!(sum["y_func"], json!("14.50"));
}

async fn sql_parameters_are_values_never_sql(t: &Target) {
    let body = json!({
        "query": "select count(*) as n from people where name = :name",
        "v": 2, "params_obj": {"name": "x' or '1'='1"},
    });
    let answer = success(&t.call(Method::POST, "sql_get_query", Some(body)).await);
    assert_eq!(answer["data"], json!([[0]]));
    let body = json!({
        "query": "select name from people where name = :name",
        "v": 2, "params_obj": {"name": "Eve"},
    });
    let answer = success(&t.call(Method::POST, "sql_get_query", Some(body)).await);
    assert_eq!(answer["data"], json!([["Eve"]]));
    // The engine's SQLAlchemy takes a `:name` in a string for a parameter too: its driver
    // writes the value there (PostgreSQL, MySQL: refused by design) or counts one parameter
    // fewer than it is given (SQLite: its `400`). Either way a `400` naming `query`.
    let body = json!({
        "query": "select count(*) as n from people where name <> ':name'",
        "v": 2, "params_obj": {"name": "Eve"},
    });
    let in_string = t.call(Method::POST, "sql_get_query", Some(body)).await;
    assert_eq!(
        in_string.status,
        400,
        "{}",
        String::from_utf8_lossy(&in_string.body)
    );
    assert!(in_string.json()["query"].is_array(), "{}", in_string.json());
    // A parameter the query does not give is refused, naming it.
    let body =
        json!({"query": "select name from people where name = :who", "v": 2, "params_obj": {}});
    let refused = t.call(Method::POST, "sql_get_query", Some(body)).await;
    assert_eq!(
        refused.status,
        400,
        "{}",
        String::from_utf8_lossy(&refused.body)
    );
}

/// A list given as a read-only query's parameter is what the engine's driver makes of it: an
/// array on PostgreSQL (psycopg2's `ARRAY[...]`), a row for `IN` on MySQL (PyMySQL's `(...)`), a
/// refusal on SQLite (Python's `sqlite3` cannot bind it). No driver writes an object.
async fn sql_lists_are_written_as_the_engines_driver_writes_them(t: &Target) {
    let sql = |query: &str, params: Value| {
        let body = json!({"query": query, "v": 2, "params_obj": params});
        t.call(Method::POST, "sql_get_query", Some(body))
    };
    let refused = |reply: &Reply| {
        let body = String::from_utf8_lossy(&reply.body).into_owned();
        assert_eq!(reply.status, 400, "{body}");
        assert!(reply.json()["query"].is_array(), "{body}");
    };
    let ids = json!({"ids": [1, 3]});
    match t.list_parameters {
        ListParameters::Array => {
            let answer = success(&sql("select :ids as ids", ids.clone()).await);
            assert_eq!(answer["data"], json!([[[1, 3]]]));
            let query = "select name from people where id = any(:ids) order by id";
            let answer = success(&sql(query, ids).await);
            assert_eq!(answer["data"].as_array().map(Vec::len), Some(2), "{answer}");
            // Text items are untyped literals: PostgreSQL reads them as the array's context asks.
            let texts = json!({"v": ["a", "b"]});
            let answer = success(&sql("select array_length(:v, 1) as n", texts).await);
            assert_eq!(answer["data"], json!([[2]]));
        }
        ListParameters::Row => {
            let query = "select name from people where id in :ids order by id";
            let answer = success(&sql(query, ids).await);
            assert_eq!(answer["data"].as_array().map(Vec::len), Some(2), "{answer}");
            // `()` is no row: MySQL refuses it, as it does the engine's.
            refused(&sql(query, json!({"ids": []})).await);
        }
        ListParameters::Refused => refused(&sql("select :ids as ids", ids).await),
    }
    refused(&sql("select :o as o", json!({"o": {"a": 1}})).await);
}

/// A read-only query's body, as the engine's serializer reads it (checked against the engine
/// on each database): from format 2 on, at most 100 rows unless `limit` says otherwise (1000
/// at most, `0` none), `offset` skipping; without `v`, the first format (`%s` and `params`,
/// `params_obj` ignored); a forbidden word between spaces refused; a key the emulator does not
/// run refused, named.
async fn sql_bodies_are_read_as_the_engine_reads_them(t: &Target) {
    let rows = |body: Value| async move {
        let reply = t.call(Method::POST, "sql_get_query", Some(body)).await;
        success(&reply)["data"].as_array().map_or(0, Vec::len)
    };
    let refused = |body: Value, field: &'static str| async move {
        let reply = t.call(Method::POST, "sql_get_query", Some(body)).await;
        let text = String::from_utf8_lossy(&reply.body).into_owned();
        assert_eq!(reply.status, 400, "{text}");
        assert!(reply.json()[field].is_array(), "{field}: {text}");
    };
    let many = "with recursive n(i) as (select 1 union all select i + 1 from n where i < 150) \
                select i from n";
    assert_eq!(rows(json!({"query": many, "v": 2})).await, 100);
    assert_eq!(rows(json!({"query": many})).await, 150);
    assert_eq!(rows(json!({"query": many, "v": 2, "limit": 0})).await, 150);
    assert_eq!(
        rows(json!({"query": many, "v": 2, "limit": 5000})).await,
        150
    );
    assert_eq!(rows(json!({"query": many, "v": 2, "limit": "7"})).await, 7);
    assert_eq!(rows(json!({"query": many, "v": 2, "limit": -1})).await, 100);
    let skipped = json!({"query": many, "v": 2, "limit": 1000, "offset": 140});
    assert_eq!(rows(skipped).await, 10);
    assert_eq!(rows(json!({"query": many, "offset": 145})).await, 5);
    // The first format: `%s` in order, `params` split at `,`, each value a string.
    let first = json!({"query": "select %s as a, %s as b", "params": "x,y"});
    let reply = t.call(Method::POST, "sql_get_query", Some(first)).await;
    assert_eq!(success(&reply)["data"], json!([["x", "y"]]));
    refused(
        json!({"query": "select :a as a", "params_obj": {"a": 1}}),
        "params_obj",
    )
    .await;
    refused(
        json!({"query": "select 'an update here' as a", "v": 2}),
        "query",
    )
    .await;
    refused(
        json!({"query": "select 1 as a", "v": 2, "count": true}),
        "count",
    )
    .await;
    refused(json!({"query": "select 1 as a", "v": "two"}), "v").await;
    // `order_by`: the answer's columns, `-` for a descending order, after the query's own.
    let data = |body: Value| async move {
        let reply = t.call(Method::POST, "sql_get_query", Some(body)).await;
        success(&reply)["data"].clone()
    };
    // (The query's own `ORDER BY` may not reach the answer: MariaDB drops it in the engine's
    // sub-select, on the engine too.)
    let ordered = json!({"query": "select id from people", "v": 2, "order_by": ["-id"]});
    assert_eq!(data(ordered).await, json!([[5], [4], [3], [2], [1]]));
    let first = json!({"query": "select id from people", "v": 2, "order_by": ["id"], "limit": 2});
    assert_eq!(data(first).await, json!([[1], [2]]));
    refused(
        json!({"query": "select 1 as a", "order_by": null}),
        "order_by",
    )
    .await;
    // The engine's SQLAlchemy names the limit's value `param_1`: a parameter of that name fails.
    let clash = json!({"query": "select :param_1 as x", "v": 2, "params_obj": {"param_1": 5}});
    refused(clash, "query").await;
    let unpaged = json!({"query": "select :param_1 as x", "v": 2, "limit": 0,
                         "params_obj": {"param_1": 5}});
    let reply = t.call(Method::POST, "sql_get_query", Some(unpaged)).await;
    assert_eq!(success(&reply)["data"], json!([[5]]));
}

/// A written value is read by the serializer field the engine picks by the text of the
/// column's SQLAlchemy type (`get_column_data_type`), then by the database. `typed` has on every
/// database a `FloatField` column (`f`: SQLite's `FLOAT(53)` prints `FLOAT`, PostgreSQL's
/// `float(53)` `DOUBLE_PRECISION`, MariaDB's `FLOAT`), `CharField` number columns (`r`:
/// `REAL`, `REAL`, `DOUBLE`; `n`: `NUMERIC(10, 2)` / `DECIMAL(10, 2)`), an integer and a
/// boolean (an integer on MariaDB); and one database's own: SQLite's `DOUBLE(5, 2)` (a
/// `FloatField` reading `Decimal`s), PostgreSQL's `uuid` (read by Python's `uuid.UUID`) and
/// `bit(3)` (`BIT`: a `BooleanField`, whose bool PostgreSQL refuses), MariaDB's `VARBINARY`
/// (a `BinaryField` of hex text). Checked against the running engine on each database.
async fn values_are_read_by_the_field_the_types_text_picks(t: &Target) {
    let create = |body: Value| t.call(Method::POST, "models/typed", Some(body));
    let refused = |reply: &Reply, stricter: bool| {
        let body = String::from_utf8_lossy(&reply.body).into_owned();
        assert_eq!(reply.status, 400, "{body}");
        let marked = reply
            .headers
            .get("svc-error-decision")
            .is_some_and(|v| v == "stricter");
        assert_eq!(marked, stricter, "{body}");
    };
    // `FloatField` and `IntegerField` read the text as Python's `float()` and `int()`; the
    // float is written as a JSON number. `NUMERIC(10, 2)` is a `CharField`: the database reads
    // the text.
    let made = success(&create(json!({"f": " 2 ", "i": "1_000", "n": " 7 "})).await);
    assert!(made["f"].is_f64() && made["f"] == json!(2.0), "{made}");
    assert_eq!((&made["i"], &made["n"]), (&json!(1000), &json!("7.00")));
    let made = success(&create(json!({"f": true, "i": true})).await);
    assert_eq!((&made["f"], &made["i"]), (&json!(1.0), &json!(1)));
    // A `CharField` hands the database Python's `True`, which no number column reads.
    refused(&create(json!({"r": true})).await, false);
    refused(&create(json!({"n": true})).await, false);
    refused(&create(json!({"i": "3.0"})).await, false);
    refused(&create(json!({"f": "1,5"})).await, false);
    if t.booleans_are_integers {
        // MariaDB's `BOOLEAN` prints `TINYINT`: an `IntegerField`.
        refused(&create(json!({"b": "yes"})).await, false);
        refused(&create(json!({"b": {}})).await, false);
    } else {
        let made = success(&create(json!({"b": "yes"})).await);
        assert_eq!(made["b"], json!(true));
        // Not one of the field's words: Python's truth of the text.
        let made = success(&create(json!({"b": "FaLsE"})).await);
        assert_eq!(made["b"], json!(true));
        // `value in TRUE_VALUES` hashes a dict: the engine fails (500).
        refused(&create(json!({"b": {}})).await, true);
    }
    let columns = made.as_object().cloned().unwrap_or_default();
    let mut count = if t.booleans_are_integers { 2 } else { 4 };
    if columns.contains_key("d52") {
        let made = success(&create(json!({"d52": 0.30000000000000004})).await);
        assert_eq!(made["d52"], json!(0.3));
        count += 1;
    }
    if columns.contains_key("u") {
        let made =
            success(&create(json!({"u": "urn:uuid:{12345678123456781234567812345678}"})).await);
        assert_eq!(made["u"], json!("12345678-1234-5678-1234-567812345678"));
        count += 1;
        refused(&create(json!({"u": "12345678-1234"})).await, false);
        // Any value, `null` too (the field's `False`), is a Python bool.
        refused(&create(json!({"bits": "101"})).await, false);
        refused(&create(json!({"bits": null})).await, false);
    }
    if columns.contains_key("bin") {
        let made = success(&create(json!({"bin": "0A0b"})).await);
        assert_eq!(made["bin"], json!("0a0b"));
        count += 1;
        // `binascii.unhexlify` raises on anything else: the engine fails (500).
        for bad in [json!(null), json!("zz"), json!("abc"), json!(12)] {
            refused(&create(json!({"bin": bad})).await, true);
        }
    }
    assert_eq!(t.ok("models/typed").await["count"], count);
}

async fn write_bodies_are_read_as_the_engines_fields_read_them(t: &Target) {
    // `IntegerField` reads text as Python's `int()` does; `CharField` makes text of a number.
    let created = t
        .call(
            Method::POST,
            "models/people",
            Some(json!({"name": 12, "age": " 42 "})),
        )
        .await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    assert_eq!(
        created.json(),
        json!({"id": 6, "name": "12", "city": null, "age": 42})
    );
    // Text that is no integer is the field's error; nothing is written.
    let refused = t
        .call(
            Method::POST,
            "models/people",
            Some(json!({"name": "Gus", "age": "4x"})),
        )
        .await;
    assert_eq!(refused.status, 400);
    let body = String::from_utf8_lossy(&refused.body).into_owned();
    assert!(body.contains("age"), "{body}");
    assert_eq!(t.ok("models/people").await["count"], 6);
}
