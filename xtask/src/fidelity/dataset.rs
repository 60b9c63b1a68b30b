//! The databases both servers read: the schema, the rows (deterministic from the seed) and the
//! small Python script that writes them with the `sqlite3` module.
//!
//! Rust makes the SQL text (so the request generator and the data share one description and
//! one random generator); `python3` runs it into a fresh file, which is then copied once per
//! server. Datetimes are stored in SQLAlchemy's own SQLite format (`YYYY-MM-DD HH:MM:SS`, with
//! or without 6 digits of microseconds): the engine answers 500 on `T`-separated stored values.
//!
//! With `--postgres` the same tables are written as PostgreSQL DDL with PostgreSQL's own types
//! (`serial` and identity keys, `varchar`, `double precision`, `real`, `numeric(10, 2)`,
//! `boolean`, `date`, `timestamp`, `timestamptz`), plus one column only PostgreSQL has
//! (`people.meta jsonb`). Its values come from a second random generator, so every other column
//! holds the same rows as on SQLite. The script is run with `psql` (see `postgres.rs`).
//!
//! Declared types matter to the engine, and both kinds are here on purpose: it answers `FLOAT`
//! columns as JSON numbers but `REAL`, `NUMERIC` and `DECIMAL(10, 2)` ones as strings (`"20.0"`,
//! `"30945.0000000000"`, `"4.50"`: its type table has no match for them, so they fall back to
//! text), and it cannot write a `DATE` column on SQLite (400 "SQLite Date type only accepts
//! Python date objects as input").

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use super::requests::Rng;

/// Which database both servers read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
    /// MySQL or MariaDB: the SQLite columns, in MySQL's types ([`Column::mysql`]).
    Mysql,
}

/// What a column holds; picks the lookups and the values the generator uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Integer,
    Real,
    Numeric,
    Boolean,
    Date,
    DateTime,
    /// A JSON document (PostgreSQL `jsonb` only).
    Json,
}

impl Kind {
    pub fn is_number(self) -> bool {
        matches!(self, Kind::Integer | Kind::Real | Kind::Numeric)
    }

    pub fn is_date(self) -> bool {
        matches!(self, Kind::Date | Kind::DateTime)
    }
}

/// A stored value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Null,
    Text(String),
    Int(i64),
    Real(f64),
}

impl Val {
    /// As an SQL literal for a column of `kind` in `backend`'s dialect.
    fn sql(&self, kind: Kind, backend: Backend) -> String {
        match self {
            // PostgreSQL has no implicit cast from an integer to a boolean.
            Val::Int(n) if kind == Kind::Boolean && backend == Backend::Postgres => {
                (if *n == 0 { "FALSE" } else { "TRUE" }).to_owned()
            }
            Val::Null => "NULL".to_owned(),
            Val::Text(s) => format!("'{}'", s.replace('\'', "''")),
            Val::Int(n) => n.to_string(),
            Val::Real(x) => format!("{x:?}"),
        }
    }

    /// As a query-string value (`None` for NULL).
    pub fn text(&self) -> Option<String> {
        match self {
            Val::Null => None,
            Val::Text(s) => Some(s.clone()),
            Val::Int(n) => Some(n.to_string()),
            Val::Real(x) => Some(format!("{x}")),
        }
    }
}

/// One column: its name, its declarations and how its values are made.
#[derive(Debug)]
pub struct Column {
    pub name: &'static str,
    /// The SQLite declaration; empty for a column only PostgreSQL has.
    pub decl: &'static str,
    /// The PostgreSQL declaration.
    pub pg: &'static str,
    pub kind: Kind,
    pub make: fn(&mut Rng) -> Val,
}

impl Column {
    /// Whether the tables of `backend` have this column.
    pub fn in_backend(&self, backend: Backend) -> bool {
        backend == Backend::Postgres || !self.decl.is_empty()
    }

    /// The MySQL declaration, made from the PostgreSQL one: the same types in MySQL's words
    /// (`serial` and identity are `AUTO_INCREMENT`, `boolean` is `TINYINT(1)`, `timestamp`
    /// is `DATETIME(6)`, `timestamptz` a `TIMESTAMP(6)`, `real` a `FLOAT`).
    pub fn mysql(&self) -> String {
        let pg = self.pg;
        if pg.starts_with("serial") || pg.contains("IDENTITY") {
            return "INT AUTO_INCREMENT PRIMARY KEY".to_owned();
        }
        let (ty, rest) = pg.split_once(' ').unwrap_or((pg, ""));
        let (ty, rest) = match (ty, rest) {
            ("double", r) => ("DOUBLE", r.trim_start_matches("precision").trim_start()),
            (t, r) => (t, r),
        };
        let ty = match ty {
            "text" => "TEXT".to_owned(),
            "integer" => "INT".to_owned(),
            "boolean" => "TINYINT(1)".to_owned(),
            "date" => "DATE".to_owned(),
            "timestamp" => "DATETIME(6)".to_owned(),
            "timestamptz" => "TIMESTAMP(6) NULL".to_owned(),
            "real" => "FLOAT".to_owned(),
            other if other.starts_with("numeric") => other.replace("numeric", "DECIMAL"),
            other => other.to_ascii_uppercase(),
        };
        let ty = if ty.starts_with("DECIMAL(") && !ty.ends_with(')') {
            // `numeric(10, 2)` was split at its space.
            let (scale, after) = rest.split_once(')').unwrap_or((rest, ""));
            return format!("{ty} {scale}){after}");
        } else {
            ty
        };
        if rest.is_empty() {
            ty
        } else {
            format!("{ty} {rest}")
        }
    }

    /// NOT NULL (the same in both declarations).
    pub fn required(&self) -> bool {
        self.decl.contains("NOT NULL") || self.pg.contains("NOT NULL")
    }

    fn declaration(&self, backend: Backend) -> String {
        match backend {
            Backend::Sqlite => self.decl.to_owned(),
            Backend::Postgres => self.pg.to_owned(),
            Backend::Mysql => self.mysql(),
        }
    }
}

/// One table (a model of both servers).
#[derive(Debug)]
pub struct Table {
    pub name: &'static str,
    /// The primary key: the first column.
    pub columns: &'static [Column],
    pub rows: usize,
    /// Whether the primary key is text (given by the client) rather than an integer rowid.
    pub text_pk: bool,
}

/// Tables are known by name.
impl PartialEq for Table {
    fn eq(&self, other: &Table) -> bool {
        self.name == other.name
    }
}

impl Table {
    pub fn pk(&self) -> &'static str {
        self.columns[0].name
    }

    /// The columns of `backend`'s tables, the primary key first.
    pub fn columns_in(&self, backend: Backend) -> Vec<&'static Column> {
        self.columns
            .iter()
            .filter(|c| c.in_backend(backend))
            .collect()
    }

    /// The columns of `backend`'s tables but the primary key.
    pub fn fields_in(&self, backend: Backend) -> Vec<&'static Column> {
        self.columns[1..]
            .iter()
            .filter(|c| c.in_backend(backend))
            .collect()
    }
}

const FIRST: &[&str] = &[
    "Ana",
    "José",
    "Zoë",
    "Ülrich",
    "Chloé",
    "李雷",
    "山田",
    "Mia 😀",
    "O'Brien",
    "Bob",
    "alice",
    "ALICE",
    "Évelyne",
    "naïve",
    "Σωκράτης",
    "Łukasz",
    "Ngọc",
    "50% off",
    "under_score",
    "Émile",
];
const LAST: &[&str] = &[
    "Martin",
    "Dupont",
    "Müller",
    "García",
    "太郎",
    "Smith",
    "Ødegaard",
    "Nguyễn",
    "🚀 Rocket",
    "Brontë",
    "de la Cruz",
    "Ivanov",
];
const CITIES: &[&str] = &[
    "Paris",
    "São Paulo",
    "Zürich",
    "東京",
    "Köln",
    "New York",
    "Kraków",
    "Reykjavík",
    "paris",
    "100%_city",
];
const STATUSES: &[&str] = &["new", "paid", "shipped", "cancelled", "refunded", "on_hold"];
const NOTES: &[&str] = &[
    "Fragile",
    "leave at door",
    "gift 🎁",
    "50% discount applied",
    "ring twice",
    "call_first",
    "Thé vert",
    "配達",
    "ÉTAGE 3",
    "x",
];

/// The tables, in creation order (`orders.person_id` refers to `people.id`). Each column has its
/// SQLite and its PostgreSQL declaration; `people.meta` is PostgreSQL's only.
pub const TABLES: &[Table] = &[
    Table {
        name: "people",
        rows: 300,
        text_pk: false,
        columns: &[
            col(
                "id",
                "INTEGER PRIMARY KEY",
                "serial PRIMARY KEY",
                Kind::Integer,
                |_| Val::Null,
            ),
            col(
                "name",
                "TEXT NOT NULL",
                "text NOT NULL",
                Kind::Text,
                gen_name,
            ),
            col("email", "VARCHAR(80)", "varchar(80)", Kind::Text, gen_email),
            col("city", "TEXT", "text", Kind::Text, gen_city),
            col("age", "INTEGER", "integer", Kind::Integer, |r| {
                maybe_null(r, 10, |r| Val::Int(r.range(18, 90)))
            }),
            col("score", "REAL", "double precision", Kind::Real, gen_score),
            col(
                "balance",
                "NUMERIC",
                "numeric(10, 2)",
                Kind::Numeric,
                gen_balance,
            ),
            col("active", "BOOLEAN", "boolean", Kind::Boolean, gen_bool),
            col("born", "DATE", "date", Kind::Date, |r| {
                maybe_null(r, 10, gen_date)
            }),
            col("created_at", "DATETIME", "timestamp", Kind::DateTime, |r| {
                maybe_null(r, 10, gen_datetime)
            }),
            col("meta", "", "jsonb", Kind::Json, gen_json),
        ],
    },
    Table {
        name: "orders",
        rows: 400,
        text_pk: false,
        columns: &[
            col(
                "id",
                "INTEGER PRIMARY KEY",
                "integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
                Kind::Integer,
                |_| Val::Null,
            ),
            col(
                "person_id",
                "INTEGER REFERENCES people(id)",
                "integer REFERENCES people(id)",
                Kind::Integer,
                |r| maybe_null(r, 5, |r| Val::Int(r.range(1, 300))),
            ),
            col(
                "status",
                "VARCHAR(20) NOT NULL",
                "varchar(20) NOT NULL",
                Kind::Text,
                |r| Val::Text((*r.pick(STATUSES)).to_owned()),
            ),
            col("note", "TEXT", "text", Kind::Text, gen_note),
            col(
                "quantity",
                "INTEGER NOT NULL",
                "integer NOT NULL",
                Kind::Integer,
                |r| Val::Int(r.range(1, 12)),
            ),
            col("amount", "FLOAT", "double precision", Kind::Real, |r| {
                maybe_null(r, 5, |r| Val::Real(r.range(100, 50_000) as f64 / 100.0))
            }),
            col(
                "discount",
                "DECIMAL(10, 2)",
                "numeric(10, 2)",
                Kind::Numeric,
                |r| maybe_null(r, 30, |r| Val::Real(r.range(0, 40) as f64 / 4.0)),
            ),
            col(
                "paid",
                "BOOLEAN NOT NULL",
                "boolean NOT NULL",
                Kind::Boolean,
                |r| Val::Int(r.range(0, 1)),
            ),
            col("ordered_on", "DATE", "date", Kind::Date, |r| {
                maybe_null(r, 5, gen_date_recent)
            }),
            col(
                "shipped_at",
                "DATETIME",
                "timestamptz",
                Kind::DateTime,
                |r| maybe_null(r, 25, gen_datetime),
            ),
        ],
    },
    Table {
        name: "codes",
        rows: 200,
        text_pk: true,
        columns: &[
            col(
                "code",
                "VARCHAR(16) PRIMARY KEY",
                "varchar(16) PRIMARY KEY",
                Kind::Text,
                |_| Val::Null,
            ),
            col("label", "TEXT", "text", Kind::Text, gen_note),
            col("rank", "INTEGER", "integer", Kind::Integer, |r| {
                maybe_null(r, 10, |r| Val::Int(r.range(-50, 50)))
            }),
            // `real` (4 bytes) on PostgreSQL: the other float columns are 8 bytes.
            col("weight", "FLOAT", "real", Kind::Real, gen_score),
            col("enabled", "BOOLEAN", "boolean", Kind::Boolean, gen_bool),
            col("valid_from", "DATE", "date", Kind::Date, |r| {
                maybe_null(r, 15, gen_date_recent)
            }),
        ],
    },
];

const fn col(
    name: &'static str,
    decl: &'static str,
    pg: &'static str,
    kind: Kind,
    make: fn(&mut Rng) -> Val,
) -> Column {
    Column {
        name,
        decl,
        pg,
        kind,
        make,
    }
}

/// `None` (NULL) with `percent` % probability, else `f`.
fn maybe_null(r: &mut Rng, percent: u64, f: fn(&mut Rng) -> Val) -> Val {
    if r.below(100) < percent {
        Val::Null
    } else {
        f(r)
    }
}

fn gen_name(r: &mut Rng) -> Val {
    match r.below(20) {
        0 => Val::Text(String::new()),
        1..=6 => Val::Text((*r.pick(FIRST)).to_owned()),
        _ => Val::Text(format!("{} {}", r.pick(FIRST), r.pick(LAST))),
    }
}

fn gen_email(r: &mut Rng) -> Val {
    match r.below(10) {
        0 => Val::Null,
        1 => Val::Text(String::new()),
        _ => Val::Text(format!(
            "{}{}@{}",
            ["ana", "bob", "zoe", "li", "mia", "o_brien", "x%y"][r.below(7) as usize],
            r.below(500),
            ["example.com", "mail.test", "EXAMPLE.org"][r.below(3) as usize]
        )),
    }
}

fn gen_city(r: &mut Rng) -> Val {
    match r.below(12) {
        0 => Val::Null,
        1 => Val::Text(String::new()),
        _ => Val::Text((*r.pick(CITIES)).to_owned()),
    }
}

fn gen_note(r: &mut Rng) -> Val {
    match r.below(8) {
        0 => Val::Null,
        1 => Val::Text(String::new()),
        _ => Val::Text((*r.pick(NOTES)).to_owned()),
    }
}

fn gen_score(r: &mut Rng) -> Val {
    match r.below(10) {
        0 => Val::Null,
        1 => Val::Real(r.range(0, 100) as f64), // integral REAL values: 42.0
        _ => Val::Real(r.range(0, 10_000) as f64 / 100.0),
    }
}

pub fn gen_balance(r: &mut Rng) -> Val {
    match r.below(10) {
        0 => Val::Null,
        1..=3 => Val::Int(r.range(-1000, 100_000)),
        _ => Val::Real(r.range(-100_000, 10_000_000) as f64 / 100.0),
    }
}

pub fn gen_bool(r: &mut Rng) -> Val {
    match r.below(10) {
        0 => Val::Null,
        n => Val::Int(i64::from(n % 2 == 0)),
    }
}

pub fn gen_date(r: &mut Rng) -> Val {
    Val::Text(format!(
        "{:04}-{:02}-{:02}",
        r.range(1950, 2005),
        r.range(1, 12),
        r.range(1, 28)
    ))
}

pub fn gen_date_recent(r: &mut Rng) -> Val {
    Val::Text(format!(
        "{:04}-{:02}-{:02}",
        r.range(2023, 2025),
        r.range(1, 12),
        r.range(1, 28)
    ))
}

/// SQLAlchemy's SQLite format: a space, and either no fraction or exactly 6 digits.
pub fn gen_datetime(r: &mut Rng) -> Val {
    let base = format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        r.range(2023, 2025),
        r.range(1, 12),
        r.range(1, 28),
        r.range(0, 23),
        r.range(0, 59),
        r.range(0, 59)
    );
    if r.below(3) == 0 {
        Val::Text(format!("{base}.{:06}", r.range(0, 999_999)))
    } else {
        Val::Text(base)
    }
}

/// Words the JSON documents hold (in arrays, as values, alone), and the values the generator
/// filters a JSON column with: none reads as a JSON number, boolean or `null`, because the engine
/// answers 500 to those (`jsonb @> integer` does not exist).
pub const JSON_WORDS: &[&str] = &[
    "red",
    "blue",
    "Zoë",
    "naïve",
    "50%_off",
    "\"red\"",
    "[\"blue\"]",
    "{\"k\": \"red\"}",
];

/// A JSON document as text: objects, arrays, strings, numbers, booleans, JSON `null`, and SQL
/// NULL now and then.
fn gen_json(r: &mut Rng) -> Val {
    let word = |r: &mut Rng| *r.pick(&JSON_WORDS[..5]);
    let text = match r.below(12) {
        0 => return Val::Null,
        1 => "null".to_owned(),
        2 => "{}".to_owned(),
        3 => "[]".to_owned(),
        4 => format!("\"{}\"", word(r)),
        5 => r.range(-5, 500).to_string(),
        6 => (if r.chance(50) { "true" } else { "false" }).to_owned(),
        7 => format!("[\"{}\", \"{}\"]", word(r), word(r)),
        8 => format!("{{\"k\": \"{}\", \"n\": {}}}", word(r), r.range(0, 9)),
        9 => format!("{{\"nested\": {{\"k\": [\"{}\", 1.5]}}}}", word(r)),
        _ => format!(
            "{{\"tags\": [\"{}\", \"{}\"], \"score\": {}}}",
            word(r),
            word(r),
            r.range(0, 100)
        ),
    };
    Val::Text(text)
}

/// The text primary key of row `i` of `codes` (a few non-ASCII ones).
pub fn code_pk(i: usize) -> String {
    match i % 25 {
        7 => format!("É-{i:03}"),
        13 => format!("コード{i}"),
        _ => format!("C-{i:03}"),
    }
}

/// The SQLite script that creates and fills every table.
pub fn sql(seed: u64) -> String {
    script(seed, Backend::Sqlite)
}

/// The PostgreSQL script: the same tables and rows (plus `people.meta`), in UTC, with every
/// sequence moved past the rows' keys.
pub fn pg_sql(seed: u64) -> String {
    script(seed, Backend::Postgres)
}

/// The dataset as MySQL statements (the SQLite tables and rows, in MySQL's types).
pub fn mysql_sql(seed: u64) -> String {
    script(seed, Backend::Mysql)
}

fn script(seed: u64, backend: Backend) -> String {
    let mut rng = Rng::new(seed ^ 0xDA7A);
    // The columns only PostgreSQL has draw from their own generator, so the shared columns get
    // the same values on both backends.
    let mut extra = Rng::new(seed ^ 0x9E_5A);
    let mut out = String::from("BEGIN;\n");
    if backend == Backend::Postgres {
        // `timestamptz` literals without an offset are read in the session's zone.
        out.push_str("SET TIME ZONE 'UTC';\n");
    }
    for table in TABLES {
        let columns = table.columns_in(backend);
        let decls: Vec<String> = columns
            .iter()
            .map(|c| format!("{} {}", c.name, c.declaration(backend)))
            .collect();
        let _ = writeln!(out, "CREATE TABLE {} ({});", table.name, decls.join(", "));
        let names: Vec<&str> = columns.iter().map(|c| c.name).collect();
        for i in 1..=table.rows {
            let pk = if table.text_pk {
                Val::Text(code_pk(i))
            } else {
                Val::Int(i as i64)
            };
            let mut values = vec![pk.sql(table.columns[0].kind, backend)];
            for c in &table.columns[1..] {
                if !c.in_backend(backend) {
                    continue;
                }
                let value = if c.decl.is_empty() {
                    (c.make)(&mut extra)
                } else {
                    (c.make)(&mut rng)
                };
                values.push(value.sql(c.kind, backend));
            }
            let _ = writeln!(
                out,
                "INSERT INTO {} ({}) VALUES ({});",
                table.name,
                names.join(", "),
                values.join(", ")
            );
        }
        if backend == Backend::Postgres && !table.text_pk {
            // The rows were inserted with their keys: the next create gets rows + 1, as on
            // SQLite.
            let _ = writeln!(
                out,
                "SELECT setval(pg_get_serial_sequence('{}', '{}'), {});",
                table.name,
                table.pk(),
                table.rows
            );
        }
    }
    out.push_str("COMMIT;\n");
    out
}

/// The Python script: runs an SQL file into a new SQLite database.
const SCRIPT: &str = "import sqlite3, sys\n\
con = sqlite3.connect(sys.argv[2])\n\
with open(sys.argv[1], encoding='utf-8') as f:\n    con.executescript(f.read())\n\
con.close()\n";

/// The Python script that copies tables from a database into another (the same schema).
const COPY_SCRIPT: &str = "import sqlite3, sys\n\
con = sqlite3.connect(sys.argv[2], timeout=30)\n\
con.execute('ATTACH DATABASE ? AS src', (sys.argv[1],))\n\
for table in sys.argv[3:]:\n    \
con.execute(f'DELETE FROM main.\"{table}\"')\n    \
con.execute(f'INSERT INTO main.\"{table}\" SELECT * FROM src.\"{table}\"')\n\
con.commit()\n\
con.close()\n";

/// Copies every table from the database `from` into `to` (with `python3`; the script is kept
/// in `dir`). Every table, not only the one written: the engine's delete also nulls the foreign
/// keys that pointed at the deleted row.
pub fn copy_tables(dir: &Path, from: &Path, to: &Path) -> Result<(), String> {
    let script = dir.join("copy_tables.py");
    if !script.exists() {
        std::fs::write(&script, COPY_SCRIPT)
            .map_err(|e| format!("writing {}: {e}", script.display()))?;
    }
    let output = Command::new("python3")
        .arg(&script)
        .arg(from)
        .arg(to)
        .args(TABLES.iter().map(|t| t.name))
        .output()
        .map_err(|e| format!("running python3: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "copying the tables failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

/// Writes the database `out` (removed first) for `seed`, with `python3`; the SQL and the script
/// are kept beside it in `dir`.
pub fn write(dir: &Path, seed: u64, out: &Path) -> Result<(), String> {
    let script = dir.join("make_db.py");
    let sql_file = dir.join("dataset.sql");
    std::fs::write(&script, SCRIPT).map_err(|e| format!("writing {}: {e}", script.display()))?;
    std::fs::write(&sql_file, sql(seed))
        .map_err(|e| format!("writing {}: {e}", sql_file.display()))?;
    let _ = std::fs::remove_file(out);
    let output = Command::new("python3")
        .arg(&script)
        .arg(&sql_file)
        .arg(out)
        .output()
        .map_err(|e| format!("running python3: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "python3 {} failed: {}",
            script.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

/// `n` rows of `table` from a generator seeded with `seed`: each column's value but the key's
/// (the first column), as SQL literal text (`None`: NULL). The shape tables of the
/// `--postgres` and `--mysql` runs are made so.
pub fn raw_rows(table: &Table, seed: u64, n: usize) -> Vec<Vec<Option<String>>> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|_| {
            table.columns[1..]
                .iter()
                .map(|c| match (c.make)(&mut r) {
                    Val::Null => None,
                    Val::Text(s) => Some(s),
                    Val::Int(n) => Some(n.to_string()),
                    Val::Real(x) => Some(format!("{x:?}")),
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sql_is_deterministic() {
        let a = sql(7);
        assert_eq!(a, sql(7));
        assert_ne!(a, sql(8));
        assert!(a.contains("CREATE TABLE codes (code VARCHAR(16) PRIMARY KEY"));
        assert_eq!(a.matches("INSERT INTO orders ").count(), 400);
    }

    /// FNV-1a of a text.
    fn digest(text: &str) -> u64 {
        text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
    }

    #[test]
    fn the_sqlite_script_is_that_of_before_the_postgres_mode() {
        // Pins seed 1's SQLite data as it was before `--postgres` existed; a deliberate change
        // updates it.
        assert_eq!(digest(&sql(1)), 0x5ecc_f259_37e0_6c2e);
    }

    #[test]
    fn the_postgres_script_has_the_same_rows_in_postgres_types() {
        let pg = pg_sql(7);
        assert_eq!(pg, pg_sql(7));
        assert!(pg.starts_with("BEGIN;\nSET TIME ZONE 'UTC';\n"));
        assert!(pg.contains("CREATE TABLE people (id serial PRIMARY KEY, name text NOT NULL"));
        assert!(pg.contains("created_at timestamp, meta jsonb);"));
        assert!(pg.contains("id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"));
        assert!(pg.contains("shipped_at timestamptz);"));
        assert!(pg.contains("SELECT setval(pg_get_serial_sequence('people', 'id'), 300);"));
        assert!(pg.contains("SELECT setval(pg_get_serial_sequence('orders', 'id'), 400);"));
        assert!(!pg.contains("pg_get_serial_sequence('codes'"));
        // Every shared value is the SQLite one: drop `meta` and spell booleans as integers.
        let sqlite = sql(7);
        let inserts = |text: &str| -> Vec<String> {
            text.lines()
                .filter(|l| l.starts_with("INSERT INTO "))
                .map(str::to_owned)
                .collect()
        };
        let (pg_rows, sqlite_rows) = (inserts(&pg), inserts(&sqlite));
        assert_eq!(pg_rows.len(), 900);
        assert_eq!(pg_rows.len(), sqlite_rows.len());
        for (p, s) in pg_rows.iter().zip(&sqlite_rows) {
            let p = p.replace("TRUE", "1").replace("FALSE", "0");
            if p.starts_with("INSERT INTO people (") {
                // `meta` is the last column: keep the 10 values before it (no shared text value
                // holds ", ").
                let (head, values) = p.split_once(" VALUES (").unwrap();
                let shared: Vec<&str> = values.split(", ").take(10).collect();
                let head = head.replacen(", meta)", ")", 1);
                assert_eq!(format!("{head} VALUES ({});", shared.join(", ")), *s);
            } else {
                assert_eq!(p, *s);
            }
        }
        let people: Vec<&String> = pg_rows
            .iter()
            .filter(|l| l.starts_with("INSERT INTO people"))
            .collect();
        assert!(people.iter().any(|l| l.contains(", '{\"tags\": [")));
        assert!(people.iter().any(|l| l.ends_with(", NULL);")));
        assert!(people.iter().any(|l| l.ends_with(", 'null');")));
    }

    #[test]
    fn json_documents_are_json() {
        let mut rng = Rng::new(5);
        for _ in 0..500 {
            if let Val::Text(doc) = gen_json(&mut rng) {
                assert!(
                    serde_json::from_str::<serde_json::Value>(&doc).is_ok(),
                    "{doc}"
                );
            }
        }
        for word in JSON_WORDS {
            let parsed = serde_json::from_str::<serde_json::Value>(word);
            assert!(
                !matches!(
                    parsed,
                    Ok(serde_json::Value::Number(_)
                        | serde_json::Value::Bool(_)
                        | serde_json::Value::Null)
                ),
                "{word}"
            );
            assert!(!word.contains(','), "{word}");
        }
    }

    #[test]
    fn datetimes_are_in_sqlalchemy_format() {
        let mut rng = Rng::new(1);
        for _ in 0..1000 {
            let Val::Text(s) = gen_datetime(&mut rng) else {
                panic!("not text")
            };
            assert_eq!(s.as_bytes()[10], b' ', "{s}");
            assert!(s.len() == 19 || s.len() == 26, "{s}");
        }
    }
}
