//! The databases both servers read: the schema, the rows (deterministic from the seed) and the
//! small Python script that writes them with the `sqlite3` module.
//!
//! Rust makes the SQL text (so the request generator and the data share one description and
//! one random generator); `python3` runs it into a fresh file, which is then copied once per
//! server. Datetimes are stored in SQLAlchemy's own SQLite format (`YYYY-MM-DD HH:MM:SS`, with
//! or without 6 digits of microseconds): the engine answers 500 on `T`-separated stored values.
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
    /// As an SQL literal.
    fn sql(&self) -> String {
        match self {
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

/// One column: its name, its declaration and how its values are made.
#[derive(Debug)]
pub struct Column {
    pub name: &'static str,
    pub decl: &'static str,
    pub kind: Kind,
    pub make: fn(&mut Rng) -> Val,
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

    /// The columns but the primary key.
    pub fn fields(&self) -> &'static [Column] {
        &self.columns[1..]
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

/// The tables, in creation order (`orders.person_id` refers to `people.id`).
pub const TABLES: &[Table] = &[
    Table {
        name: "people",
        rows: 300,
        text_pk: false,
        columns: &[
            col("id", "INTEGER PRIMARY KEY", Kind::Integer, |_| Val::Null),
            col("name", "TEXT NOT NULL", Kind::Text, gen_name),
            col("email", "VARCHAR(80)", Kind::Text, gen_email),
            col("city", "TEXT", Kind::Text, gen_city),
            col("age", "INTEGER", Kind::Integer, |r| {
                maybe_null(r, 10, |r| Val::Int(r.range(18, 90)))
            }),
            col("score", "REAL", Kind::Real, gen_score),
            col("balance", "NUMERIC", Kind::Numeric, gen_balance),
            col("active", "BOOLEAN", Kind::Boolean, gen_bool),
            col("born", "DATE", Kind::Date, |r| maybe_null(r, 10, gen_date)),
            col("created_at", "DATETIME", Kind::DateTime, |r| {
                maybe_null(r, 10, gen_datetime)
            }),
        ],
    },
    Table {
        name: "orders",
        rows: 400,
        text_pk: false,
        columns: &[
            col("id", "INTEGER PRIMARY KEY", Kind::Integer, |_| Val::Null),
            col(
                "person_id",
                "INTEGER REFERENCES people(id)",
                Kind::Integer,
                |r| maybe_null(r, 5, |r| Val::Int(r.range(1, 300))),
            ),
            col("status", "VARCHAR(20) NOT NULL", Kind::Text, |r| {
                Val::Text((*r.pick(STATUSES)).to_owned())
            }),
            col("note", "TEXT", Kind::Text, gen_note),
            col("quantity", "INTEGER NOT NULL", Kind::Integer, |r| {
                Val::Int(r.range(1, 12))
            }),
            col("amount", "FLOAT", Kind::Real, |r| {
                maybe_null(r, 5, |r| Val::Real(r.range(100, 50_000) as f64 / 100.0))
            }),
            col("discount", "DECIMAL(10, 2)", Kind::Numeric, |r| {
                maybe_null(r, 30, |r| Val::Real(r.range(0, 40) as f64 / 4.0))
            }),
            col("paid", "BOOLEAN NOT NULL", Kind::Boolean, |r| {
                Val::Int(r.range(0, 1))
            }),
            col("ordered_on", "DATE", Kind::Date, |r| {
                maybe_null(r, 5, gen_date_recent)
            }),
            col("shipped_at", "DATETIME", Kind::DateTime, |r| {
                maybe_null(r, 25, gen_datetime)
            }),
        ],
    },
    Table {
        name: "codes",
        rows: 200,
        text_pk: true,
        columns: &[
            col("code", "VARCHAR(16) PRIMARY KEY", Kind::Text, |_| Val::Null),
            col("label", "TEXT", Kind::Text, gen_note),
            col("rank", "INTEGER", Kind::Integer, |r| {
                maybe_null(r, 10, |r| Val::Int(r.range(-50, 50)))
            }),
            col("weight", "FLOAT", Kind::Real, gen_score),
            col("enabled", "BOOLEAN", Kind::Boolean, gen_bool),
            col("valid_from", "DATE", Kind::Date, |r| {
                maybe_null(r, 15, gen_date_recent)
            }),
        ],
    },
];

const fn col(
    name: &'static str,
    decl: &'static str,
    kind: Kind,
    make: fn(&mut Rng) -> Val,
) -> Column {
    Column {
        name,
        decl,
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

fn gen_balance(r: &mut Rng) -> Val {
    match r.below(10) {
        0 => Val::Null,
        1..=3 => Val::Int(r.range(-1000, 100_000)),
        _ => Val::Real(r.range(-100_000, 10_000_000) as f64 / 100.0),
    }
}

fn gen_bool(r: &mut Rng) -> Val {
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

/// The text primary key of row `i` of `codes` (a few non-ASCII ones).
pub fn code_pk(i: usize) -> String {
    match i % 25 {
        7 => format!("É-{i:03}"),
        13 => format!("コード{i}"),
        _ => format!("C-{i:03}"),
    }
}

/// The SQL script that creates and fills every table.
pub fn sql(seed: u64) -> String {
    let mut rng = Rng::new(seed ^ 0xDA7A);
    let mut out = String::from("BEGIN;\n");
    for table in TABLES {
        let decls: Vec<String> = table
            .columns
            .iter()
            .map(|c| format!("{} {}", c.name, c.decl))
            .collect();
        let _ = writeln!(out, "CREATE TABLE {} ({});", table.name, decls.join(", "));
        let names: Vec<&str> = table.columns.iter().map(|c| c.name).collect();
        for i in 1..=table.rows {
            let pk = if table.text_pk {
                Val::Text(code_pk(i))
            } else {
                Val::Int(i as i64)
            };
            let values: Vec<String> = std::iter::once(pk.sql())
                .chain(table.fields().iter().map(|c| (c.make)(&mut rng).sql()))
                .collect();
            let _ = writeln!(
                out,
                "INSERT INTO {} ({}) VALUES ({});",
                table.name,
                names.join(", "),
                values.join(", ")
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
