//! Extra SQLite tables in the shapes real databases come in, and the requests over them.
//!
//! The main dataset (`dataset.rs`) has one integer or text primary key per table. Real SQLite
//! files also have composite keys, tables without a declared key, views, `WITHOUT ROWID`
//! tables, columns declared `JSON`, integers past 2^53 and up to 2^63, and names with spaces,
//! quotes, mixed case and non-ASCII letters. The engine reads each of them its own way
//! (SQLAlchemy's automap: the first key column is the lookup key, a table without a key has its
//! first column promoted, its ORM collapses rows that repeat it), so each is here, drawn from
//! the seed: the names, the declared types, the rows and which shapes get a NULL or a repeated
//! key all vary with it.
//!
//! One table (`legacy`) also holds what the engine fails on: a malformed date in one row and
//! bytes that are not UTF-8 in a `BLOB` column. Careful requests leave that row out
//! (`exclude__id`); the caller mistakes (`--mistakes`) reach it, group by the `BLOB` column, or
//! ask for a page whose offset passes 2^63, which strict mode refuses with a `400` and lenient
//! mode fails on as the engine does.
//!
//! The tables are written into the dataset after `dataset::write` (SQLite only), copied on a
//! resync with the main tables, and their requests are mixed into the main stream: a fifth of
//! the requests of a run, at positions drawn from the seed.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::dataset::{self, Backend, Column, Kind, Table, Val};
use super::families;
use super::requests::{self, Op, Request, Rng, Wire};
use super::rounded_keys;

/// What a shape table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `PRIMARY KEY (k1, k2)`, the first key column repeating.
    Composite,
    /// No declared key; its first column repeats and is NULL now and then.
    NoKey,
    /// A view over the composite table (its first column repeats).
    View,
    /// A text `PRIMARY KEY` without `NOT NULL`, NULL in some rows (SQLite allows it).
    NullableKey,
    /// `WITHOUT ROWID` with a composite text and integer key.
    WithoutRowid,
    /// A column declared `JSON`.
    Json,
    /// Integers near 2^53 and 2^63.
    BigInts,
    /// A malformed date and non-UTF-8 bytes (see the module documentation).
    Legacy,
    /// The declared types real schemas spell in many ways (`VARCHAR(255)`, `TINYINT`,
    /// `UNSIGNED BIG INT`, `DOUBLE PRECISION`, `NUMERIC(12,4)`, `BOOLEAN`, `DATETIME`, a
    /// `COLLATE NOCASE` text, `INT PRIMARY KEY`, which is not a rowid alias, ...), each read by
    /// SQLAlchemy's name table or SQLite's affinity rules.
    Declared,
}

/// A column of the declared-types shape: its names, its declared types, its kind and values.
type DeclaredChoice = (
    &'static [&'static str],
    &'static [&'static str],
    Kind,
    fn(&mut Rng) -> Val,
);

/// One shape table (or view), as the request generator sees it.
#[derive(Debug)]
struct Shape {
    form: Form,
    table: &'static Table,
    /// Every column, declared as in the database (`table.columns` leaves out the hidden
    /// `BLOB` column of `legacy`).
    ddl: String,
    /// The values of the model's key column the rows hold.
    keys: Vec<String>,
    /// `legacy`: the id of the row the engine cannot read; `(name of the BLOB column)`.
    unreadable: Option<(String, &'static str)>,
    /// The database does not assign the key (`INT PRIMARY KEY` is no rowid alias): careful
    /// creates give a new one; a create without it is a mistake (the engine stores the row
    /// with a NULL key, then fails).
    key_required: bool,
}

/// The shape tables of one seed.
#[derive(Debug)]
pub struct Shapes {
    shapes: Vec<Shape>,
    /// The script that creates and fills them.
    sql: String,
}

/// Leaks a name: the request generator keeps `&'static` tables, and a run makes one set.
fn leak(s: &str) -> &'static str {
    Box::leak(s.to_owned().into_boxed_str())
}

/// `"name"`, with `"` doubled.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn column(name: &str, decl: &str, kind: Kind, make: fn(&mut Rng) -> Val) -> Column {
    Column {
        name: leak(name),
        decl: leak(decl),
        pg: "",
        kind,
        make,
    }
}

const WORDS: &[&str] = &[
    "alpha",
    "Beta",
    "gamma",
    "Ünïcode",
    "東京",
    "O'Neil",
    "50% off",
    "under_score",
    "",
    "zeta",
];

fn make_word(r: &mut Rng) -> Val {
    if r.chance(10) {
        Val::Null
    } else {
        Val::Text((*r.pick(WORDS)).to_owned())
    }
}

fn make_small(r: &mut Rng) -> Val {
    if r.chance(10) {
        Val::Null
    } else {
        Val::Int(r.range(-5, 60))
    }
}

fn make_key(r: &mut Rng) -> Val {
    Val::Int(r.range(1, 12))
}

fn make_code(r: &mut Rng) -> Val {
    Val::Text(dataset::code_pk(r.range(1, 6) as usize))
}

fn make_real(r: &mut Rng) -> Val {
    if r.chance(10) {
        Val::Null
    } else {
        Val::Real(r.range(-400, 4000) as f64 / 8.0)
    }
}

/// Integers at the edges of what a float holds exactly (2^53) and of SQLite's integers (2^63).
fn make_big(r: &mut Rng) -> Val {
    const EDGES: &[i64] = &[
        9_007_199_254_740_991,
        9_007_199_254_740_992,
        9_007_199_254_740_993,
        -9_007_199_254_740_993,
        i64::MAX,
        i64::MAX - 1,
        i64::MIN,
        4_611_686_018_427_387_904,
        0,
        42,
    ];
    if r.chance(8) {
        Val::Null
    } else {
        Val::Int(*r.pick(EDGES))
    }
}

/// A JSON document's text; SQLite's NUMERIC affinity (that of `JSON`) stores the plain numbers
/// as numbers.
fn make_json(r: &mut Rng) -> Val {
    let word = |r: &mut Rng| *r.pick(&dataset::JSON_WORDS[..5]);
    let text = match r.below(11) {
        0 => return Val::Null,
        1 => "null".to_owned(),
        2 => format!("\"{}\"", word(r)),
        3 => r.range(-5, 300).to_string(),
        4 => format!("{}.5", r.range(0, 9)),
        5 => (if r.chance(50) { "true" } else { "false" }).to_owned(),
        6 => format!("[\"{}\", {}]", word(r), r.range(0, 9)),
        7 => format!("{{\"k\": \"{}\", \"n\": {}}}", word(r), r.range(0, 9)),
        8 => "[]".to_owned(),
        9 => format!("{{\"nested\": {{\"k\": [\"{}\", 1.5]}}}}", word(r)),
        _ => format!("\"{}\"", word(r).to_uppercase()),
    };
    Val::Text(text)
}

fn make_date(r: &mut Rng) -> Val {
    if r.chance(10) {
        Val::Null
    } else {
        Val::Text(format!("2024-{:02}-{:02}", r.range(1, 12), r.range(1, 28)))
    }
}

/// An SQL literal of a value.
fn literal(v: &Val) -> String {
    match v {
        Val::Null => "NULL".to_owned(),
        Val::Text(s) => format!("'{}'", s.replace('\'', "''")),
        Val::Int(n) => n.to_string(),
        Val::Real(x) => format!("{x:?}"),
    }
}

/// Builds `CREATE TABLE` and the `INSERT`s of `rows`, and the shape.
fn table_shape(
    form: Form,
    name: &str,
    columns: Vec<Column>,
    constraint: &str,
    suffix: &str,
    rows: &[Vec<Val>],
    text_pk: bool,
) -> Shape {
    let columns: &'static [Column] = Box::leak(columns.into_boxed_slice());
    let decls: Vec<String> = columns
        .iter()
        .map(|c| format!("{} {}", quote(c.name), c.decl))
        .collect();
    let mut ddl = format!("CREATE TABLE {} ({}", quote(name), decls.join(", "));
    if !constraint.is_empty() {
        let _ = write!(ddl, ", {constraint}");
    }
    let _ = writeln!(ddl, "){suffix};");
    let names: Vec<String> = columns.iter().map(|c| quote(c.name)).collect();
    for row in rows {
        let values: Vec<String> = row.iter().map(literal).collect();
        let _ = writeln!(
            ddl,
            "INSERT INTO {} ({}) VALUES ({});",
            quote(name),
            names.join(", "),
            values.join(", ")
        );
    }
    let mut keys: Vec<String> = rows.iter().filter_map(|r| r[0].text()).collect();
    keys.sort();
    keys.dedup();
    Shape {
        form,
        table: Box::leak(Box::new(Table {
            name: leak(name),
            columns,
            rows: rows.len(),
            text_pk,
        })),
        ddl,
        keys,
        unreadable: None,
        key_required: false,
    }
}

impl Shapes {
    /// The shape tables of `seed`.
    pub fn new(seed: u64) -> Shapes {
        let mut r = Rng::new(seed ^ 0x0005_A9E5);
        let mut shapes = Vec::new();
        let pick = |r: &mut Rng, names: &[&'static str]| *r.pick(names);

        // A composite key whose first column repeats (and is NULL in one row, now and then).
        let comp_name = pick(
            &mut r,
            &["order_lines", "Order Lines", "línea_pedido", "OrderLines"],
        );
        let k1 = pick(&mut r, &["k1", "Line No", "número"]);
        let k2 = pick(&mut r, &["k2", "Part", "pièce"]);
        let qty = pick(&mut r, &["qty", "Quantity", "say \"hi\""]);
        let label = pick(&mut r, &["label", "it's label", "Label Text", "libellé"]);
        let n = r.range(10, 18) as usize;
        let null_key = r.chance(50);
        let rows: Vec<Vec<Val>> = (1..=n)
            .map(|i| {
                let key = if null_key && i == 3 {
                    Val::Null
                } else {
                    Val::Int(r.range(1, (n / 2) as i64))
                };
                vec![
                    key,
                    Val::Text(format!("p{i}")),
                    make_small(&mut r),
                    make_word(&mut r),
                ]
            })
            .collect();
        let key_order = if r.chance(50) {
            format!("PRIMARY KEY ({}, {})", quote(k1), quote(k2))
        } else {
            // The same key declared inline on the columns' order is not possible for two
            // columns: vary the spelling of the constraint instead.
            format!(
                "CONSTRAINT pk_lines PRIMARY KEY ({}, {})",
                quote(k1),
                quote(k2)
            )
        };
        let comp = table_shape(
            Form::Composite,
            comp_name,
            vec![
                column(k1, "INTEGER", Kind::Integer, make_key),
                column(k2, "TEXT", Kind::Text, make_word),
                column(qty, "INTEGER", Kind::Integer, make_small),
                column(label, "TEXT", Kind::Text, make_word),
            ],
            &key_order,
            "",
            &rows,
            false,
        );

        // A view over it: keyed on its first column, which repeats.
        let view_name = pick(&mut r, &["big_lines", "Big Lines View", "vue_été"]);
        let floor = r.range(0, 20);
        let mut view_ddl = format!(
            "CREATE VIEW {} AS SELECT {}, {}, {} FROM {} WHERE {} >= {floor};\n",
            quote(view_name),
            quote(k1),
            quote(k2),
            quote(qty),
            quote(comp_name),
            quote(qty)
        );
        let view_columns: &'static [Column] = Box::leak(
            vec![
                column(k1, "INTEGER", Kind::Integer, make_key),
                column(k2, "TEXT", Kind::Text, make_word),
                column(qty, "INTEGER", Kind::Integer, make_small),
            ]
            .into_boxed_slice(),
        );
        let view = Shape {
            form: Form::View,
            table: Box::leak(Box::new(Table {
                name: leak(view_name),
                columns: view_columns,
                rows: n,
                text_pk: false,
            })),
            ddl: std::mem::take(&mut view_ddl),
            keys: comp.keys.clone(),
            unreadable: None,
            key_required: false,
        };
        shapes.push(comp);
        shapes.push(view);

        // No declared key: the first column (an integer or a text) repeats and is NULL.
        let nokey_name = pick(&mut r, &["event log", "EventLog", "journal_ñ", "log"]);
        let text_first = r.chance(40);
        let n = r.range(10, 16) as usize;
        let rows: Vec<Vec<Val>> = (1..=n)
            .map(|_| {
                let first = if r.chance(20) {
                    Val::Null
                } else if text_first {
                    Val::Text(dataset::code_pk(r.range(1, (n / 3) as i64) as usize))
                } else {
                    Val::Int(r.range(1, (n / 3) as i64))
                };
                vec![first, make_word(&mut r), make_real(&mut r)]
            })
            .collect();
        let (first_decl, first_kind, first_make): (&str, Kind, fn(&mut Rng) -> Val) = if text_first
        {
            ("TEXT", Kind::Text, make_code)
        } else {
            ("INTEGER", Kind::Integer, make_key)
        };
        shapes.push(table_shape(
            Form::NoKey,
            nokey_name,
            vec![
                column(
                    pick(&mut r, &["grp", "Group", "gruppe"]),
                    first_decl,
                    first_kind,
                    first_make,
                ),
                column(
                    pick(&mut r, &["what", "Event Name", "événement"]),
                    "TEXT",
                    Kind::Text,
                    make_word,
                ),
                column(
                    pick(&mut r, &["amount", "Amount"]),
                    "REAL",
                    Kind::Real,
                    make_real,
                ),
            ],
            "",
            "",
            &rows,
            text_first,
        ));

        // A text key that SQLite lets be NULL: the rows without one are a single `{}` record
        // to the engine.
        let nk_name = pick(&mut r, &["tags", "Tag Codes", "étiquettes"]);
        let n = r.range(6, 10) as usize;
        let nulls = r.range(1, 3) as usize;
        let rows: Vec<Vec<Val>> = (1..=n)
            .map(|i| {
                let key = if i <= nulls {
                    Val::Null
                } else {
                    Val::Text(dataset::code_pk(i))
                };
                vec![key, make_small(&mut r)]
            })
            .collect();
        shapes.push(table_shape(
            Form::NullableKey,
            nk_name,
            vec![
                column(
                    pick(&mut r, &["code", "Code"]),
                    "VARCHAR(16) PRIMARY KEY",
                    Kind::Text,
                    make_code,
                ),
                column(
                    pick(&mut r, &["weight", "Weight"]),
                    "INTEGER",
                    Kind::Integer,
                    make_small,
                ),
            ],
            "",
            "",
            &rows,
            true,
        ));

        // WITHOUT ROWID, keyed on (text, integer).
        let wr_name = pick(&mut r, &["stock", "Stock Levels", "inventário"]);
        let code = pick(&mut r, &["code", "SKU", "código"]);
        let bin = pick(&mut r, &["bin", "Bin"]);
        let n = r.range(8, 14) as usize;
        let rows: Vec<Vec<Val>> = (1..=n)
            .map(|i| {
                vec![
                    Val::Text(dataset::code_pk(r.range(1, 5) as usize)),
                    Val::Int(i as i64),
                    make_small(&mut r),
                ]
            })
            .collect();
        shapes.push(table_shape(
            Form::WithoutRowid,
            wr_name,
            vec![
                column(code, "TEXT NOT NULL", Kind::Text, make_code),
                column(bin, "INTEGER NOT NULL", Kind::Integer, make_key),
                column(
                    pick(&mut r, &["level", "On Hand"]),
                    "INTEGER",
                    Kind::Integer,
                    make_small,
                ),
            ],
            &format!("PRIMARY KEY ({}, {})", quote(code), quote(bin)),
            " WITHOUT ROWID",
            &rows,
            true,
        ));

        // A JSON column (the declared name in either case).
        let json_name = pick(&mut r, &["docs", "Documents", "データ"]);
        let n = r.range(10, 16) as usize;
        let rows: Vec<Vec<Val>> = (1..=n)
            .map(|i| vec![Val::Int(i as i64), make_json(&mut r), make_word(&mut r)])
            .collect();
        shapes.push(table_shape(
            Form::Json,
            json_name,
            vec![
                column("id", "INTEGER PRIMARY KEY", Kind::Integer, |_| Val::Null),
                column(
                    pick(&mut r, &["doc", "Payload", "données"]),
                    pick(&mut r, &["JSON", "json"]),
                    Kind::Json,
                    make_json,
                ),
                column(pick(&mut r, &["tag", "Tag"]), "TEXT", Kind::Text, make_word),
            ],
            "",
            "",
            &rows,
            false,
        ));

        // Integers near 2^53 and 2^63.
        let big_name = pick(&mut r, &["counters", "Big Numbers", "compteurs"]);
        let n = r.range(8, 12) as usize;
        let rows: Vec<Vec<Val>> = (1..=n)
            .map(|i| vec![Val::Int(i as i64), make_big(&mut r), make_word(&mut r)])
            .collect();
        shapes.push(table_shape(
            Form::BigInts,
            big_name,
            vec![
                column("id", "INTEGER PRIMARY KEY", Kind::Integer, |_| Val::Null),
                column(
                    pick(&mut r, &["big", "Big Value"]),
                    pick(&mut r, &["INTEGER", "BIGINT"]),
                    Kind::Integer,
                    make_big,
                ),
                column(
                    pick(&mut r, &["note", "Note"]),
                    "TEXT",
                    Kind::Text,
                    make_word,
                ),
            ],
            "",
            "",
            &rows,
            false,
        ));

        // Declared types in the spellings real schemas use.
        let declared_name = pick(&mut r, &["catalog", "Product Catalog", "catálogo"]);
        let key_decl = pick(
            &mut r,
            &[
                "INTEGER PRIMARY KEY AUTOINCREMENT",
                "INT PRIMARY KEY",
                "INTEGER NOT NULL PRIMARY KEY",
            ],
        );
        let n = r.range(10, 16) as usize;
        let mut declared_columns = vec![column("id", key_decl, Kind::Integer, |_| Val::Null)];
        let choices: [DeclaredChoice; 8] = [
            (
                &["title", "Title"],
                &[
                    "VARCHAR(255)",
                    "NVARCHAR(40)",
                    "CHARACTER(10)",
                    "CLOB",
                    "TEXT COLLATE NOCASE",
                ],
                Kind::Text,
                make_word,
            ),
            (
                &["stock", "Stock"],
                &[
                    "TINYINT",
                    "UNSIGNED BIG INT",
                    "INT8",
                    "MEDIUMINT",
                    "SMALLINT",
                ],
                Kind::Integer,
                make_small,
            ),
            (
                &["weight", "Weight"],
                &["DOUBLE PRECISION", "FLOAT", "DOUBLE", "REAL"],
                Kind::Real,
                make_real,
            ),
            (
                &["price", "Price"],
                &["NUMERIC(12,4)", "DECIMAL(8,3)", "DECIMAL", "NUMERIC"],
                Kind::Numeric,
                dataset::gen_balance,
            ),
            (
                &["listed", "Is Listed"],
                &["BOOLEAN", "BOOL"],
                Kind::Boolean,
                dataset::gen_bool,
            ),
            (
                &["added", "Added At"],
                &["DATETIME", "TIMESTAMP"],
                Kind::DateTime,
                dataset::gen_datetime,
            ),
            (
                &["launch", "Launch Day"],
                &["DATE"],
                Kind::Date,
                dataset::gen_date,
            ),
            (
                &["sku", "SKU"],
                &["VARCHAR(16) COLLATE NOCASE", "TEXT", "NCHAR(16)"],
                Kind::Text,
                make_code,
            ),
        ];
        for (names, decls, kind, make) in choices {
            declared_columns.push(column(pick(&mut r, names), pick(&mut r, decls), kind, make));
        }
        let rows: Vec<Vec<Val>> = (1..=n)
            .map(|i| {
                let mut row = vec![Val::Int(i as i64)];
                row.extend(declared_columns[1..].iter().map(|c| (c.make)(&mut r)));
                row
            })
            .collect();
        let mut declared = table_shape(
            Form::Declared,
            declared_name,
            declared_columns,
            "",
            "",
            &rows,
            false,
        );
        declared.key_required = key_decl == "INT PRIMARY KEY";
        shapes.push(declared);

        // What the engine fails on: one malformed date, and bytes that are not UTF-8.
        let legacy_name = pick(&mut r, &["legacy", "Legacy Import", "ancien"]);
        let raw = pick(&mut r, &["raw", "Raw Bytes"]);
        let n = r.range(8, 12) as usize;
        let bad = r.range(2, n as i64);
        let bad_date = pick(&mut r, &["notadate", "2024-02-30", "2024-13-01"]);
        let rows: Vec<Vec<Val>> = (1..=n)
            .map(|i| {
                let day = if i as i64 == bad {
                    Val::Text(bad_date.to_owned())
                } else {
                    make_date(&mut r)
                };
                vec![Val::Int(i as i64), day, make_word(&mut r)]
            })
            .collect();
        let mut legacy = table_shape(
            Form::Legacy,
            legacy_name,
            vec![
                column("id", "INTEGER PRIMARY KEY", Kind::Integer, |_| Val::Null),
                column(pick(&mut r, &["day", "Day"]), "DATE", Kind::Date, make_date),
                column(
                    pick(&mut r, &["memo", "Memo"]),
                    "TEXT",
                    Kind::Text,
                    make_word,
                ),
            ],
            "",
            "",
            &rows,
            false,
        );
        // The BLOB column is added after the rows, out of the generator's sight: filters on it
        // are where the engine fails, which careful requests avoid.
        let _ = writeln!(
            legacy.ddl,
            "ALTER TABLE {} ADD COLUMN {} BLOB;",
            quote(legacy_name),
            quote(raw)
        );
        for i in 1..=n {
            let bytes = match i % 3 {
                0 => "x'ff00'",
                1 => "x'414243'",
                _ => "NULL",
            };
            let _ = writeln!(
                legacy.ddl,
                "UPDATE {} SET {} = {bytes} WHERE id = {i};",
                quote(legacy_name),
                quote(raw)
            );
        }
        legacy.unreadable = Some((bad.to_string(), leak(raw)));
        shapes.push(legacy);

        let mut sql = String::from("BEGIN;\n");
        // The composite table before its view.
        for shape in &shapes {
            if shape.form != Form::View {
                sql.push_str(&shape.ddl);
            }
        }
        for shape in &shapes {
            if shape.form == Form::View {
                sql.push_str(&shape.ddl);
            }
        }
        sql.push_str(&families::sql(seed, Backend::Sqlite));
        sql.push_str(&rounded_keys::sql(seed, Backend::Sqlite));
        sql.push_str("COMMIT;\n");
        Shapes { shapes, sql }
    }

    /// The script that creates and fills the shape tables.
    #[cfg(test)]
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// Adds the shape tables to the SQLite database `db` (with `python3`; the script and the
    /// SQL are kept in `dir`).
    pub fn write(&self, dir: &Path, db: &Path) -> Result<(), String> {
        let sql_file = dir.join("shapes.sql");
        std::fs::write(&sql_file, &self.sql)
            .map_err(|e| format!("writing {}: {e}", sql_file.display()))?;
        run_python(
            dir,
            "add_shapes.py",
            ADD_SCRIPT,
            &[sql_file.as_path(), db],
            &[],
        )
    }

    /// Copies the shape tables (not the view) from `from` into `to`, as `dataset::copy_tables`
    /// copies the main ones after a write answered differently.
    pub fn copy_tables(&self, dir: &Path, from: &Path, to: &Path) -> Result<(), String> {
        let names: Vec<&str> = self
            .shapes
            .iter()
            .filter(|s| s.form != Form::View)
            .map(|s| s.table.name)
            .chain(families::TABLE_NAMES.iter().copied())
            .chain(rounded_keys::TABLE_NAMES.iter().copied())
            .collect();
        copy_named(dir, from, to, &names)
    }
}

/// Copies the tables `names` from the SQLite database `from` into `to` (the script is kept in
/// `dir`).
pub fn copy_named(dir: &Path, from: &Path, to: &Path, names: &[&str]) -> Result<(), String> {
    run_python(dir, "copy_shapes.py", COPY_SCRIPT, &[from, to], names)
}

impl Shapes {
    /// `n` requests for `seed`: the main generator's and, at positions drawn from the seed, a
    /// fifth of them over the shape tables.
    pub fn generate(&self, seed: u64, n: usize, mistakes: u64) -> Vec<Request> {
        let extra = n / 5;
        let mut out = requests::generate(seed, n - extra, mistakes, Backend::Sqlite);
        let mut r = Rng::new(seed ^ 0x005E_A9E5);
        for _ in 0..extra {
            if r.chance(12) {
                let at = r.below(out.len() as u64 + 1) as usize;
                out.insert(at, families::request(&mut r));
                continue;
            }
            let shape = &self.shapes[r.below(self.shapes.len() as u64) as usize];
            let mut request = self.one(&mut r, shape);
            if r.below(1000) < mistakes {
                self.add_mistake(&mut r, shape, &mut request);
            }
            let at = r.below(out.len() as u64 + 1) as usize;
            out.insert(at, request);
        }
        out
    }

    /// A careful request over `shape`.
    fn one(&self, r: &mut Rng, shape: &Shape) -> Request {
        let table = shape.table;
        let writable = shape.form != Form::View || r.chance(10);
        let op = match r.below(100) {
            0..50 => Op::List,
            50..58 => Op::Aggregate,
            58..68 => Op::Group,
            68..80 => Op::Retrieve,
            80..87 if writable => Op::Create,
            87..94 if writable => Op::Patch,
            94..96 if writable => Op::Put,
            96..100 if writable => Op::Delete,
            _ => Op::List,
        };
        let mut request = Request {
            wire: Wire::default(),
            op,
            table,
            pk: None,
            query: Vec::new(),
            body: None,
        };
        match op {
            Op::List => request.query = requests::list_query(r, table, Backend::Sqlite),
            Op::Aggregate => {
                request.query = requests::y_params(r, table, Backend::Sqlite);
                requests::filters(r, table, 2, Backend::Sqlite, &mut request.query);
            }
            Op::Group => request.query = requests::group_query(r, table, Backend::Sqlite),
            Op::Retrieve | Op::Patch | Op::Put | Op::Delete => {
                request.pk = Some(self.key(r, shape));
                if matches!(op, Op::Patch | Op::Put) {
                    let mut body = requests::update_body(r, table, Backend::Sqlite);
                    // Now and then the key column too: the record moves (or, where the key
                    // repeats, the ORM's flush fails).
                    if r.chance(15)
                        && let Value::Object(map) = &mut body
                    {
                        let first = &table.columns[0];
                        map.insert(first.name.to_owned(), requests::json_value(r, first));
                    }
                    request.body = Some(body);
                }
            }
            Op::Create => {
                let mut body = create_body(r, table);
                if shape.key_required
                    && let Value::Object(map) = &mut body
                {
                    map.insert(table.pk().to_owned(), r.range(1000, 1_000_000).into());
                }
                request.body = Some(body);
            }
        }
        if let Some((bad, _)) = &shape.unreadable {
            // Careful requests leave the row the engine cannot read out.
            request.query.push(("exclude__id".to_owned(), bad.clone()));
            if request.pk.as_deref() == Some(bad.as_str()) {
                request.pk = Some("1".to_owned());
            }
        }
        request
    }

    /// A key: mostly one the rows hold, sometimes one they do not.
    fn key(&self, r: &mut Rng, shape: &Shape) -> String {
        match r.below(100) {
            0..85 if !shape.keys.is_empty() => r.pick(&shape.keys).clone(),
            85..93 if shape.table.text_pk => "NOPE-1".to_owned(),
            85..93 => "99999".to_owned(),
            _ if shape.table.text_pk => "C-001".to_owned(),
            _ => "1".to_owned(),
        }
    }

    /// A request the engine fails on (500): strict mode refuses it with a 400.
    fn add_mistake(&self, r: &mut Rng, shape: &Shape, request: &mut Request) {
        if shape.key_required
            && request.op == Op::Create
            && let Some(Value::Object(map)) = &mut request.body
        {
            map.remove(shape.table.pk());
            return;
        }
        if let Some((bad, raw)) = &shape.unreadable {
            request.query.retain(|(k, _)| k != "exclude__id");
            match (request.op, r.below(2)) {
                (Op::Group, _) => {
                    request
                        .query
                        .retain(|(k, _)| k != "_x_column" && k != "_x_lookup");
                    request
                        .query
                        .insert(0, ("_x_column".to_owned(), (*raw).to_owned()));
                }
                (Op::Retrieve, _) => request.pk = Some(bad.clone()),
                _ => {}
            }
            return;
        }
        if request.op == Op::List {
            request
                .query
                .retain(|(k, _)| k != "page" && k != "_no_pagination");
            let (page, per_page) = *r.pick(&[
                ("9223372036854775809", "1"),
                ("368934881474191034", "25"),
                ("99999999999999999999999", "3"),
            ]);
            request.query.retain(|(k, _)| k != "_per_page");
            request.query.push(("page".to_owned(), page.to_owned()));
            request
                .query
                .push(("_per_page".to_owned(), per_page.to_owned()));
        }
    }
}

/// A create body over every generated column, the key columns included (a composite or
/// promoted key is given by the caller; a missing part is stored NULL).
fn create_body(r: &mut Rng, table: &Table) -> Value {
    let mut body = serde_json::Map::new();
    for (i, column) in table.columns.iter().enumerate() {
        let keep = if i == 0 { r.chance(90) } else { r.chance(75) };
        if keep {
            let value = if column.kind == Kind::Date {
                // The engine cannot write a DATE column on SQLite (a 400 on both sides): keep
                // it mostly out.
                if r.chance(80) {
                    continue;
                }
                requests::json_value(r, column)
            } else {
                requests::json_value(r, column)
            };
            body.insert(column.name.to_owned(), value);
        }
    }
    if table.columns.len() > 1 && table.columns[1].decl.contains("NOT NULL") {
        let second = &table.columns[1];
        body.entry(second.name.to_owned())
            .or_insert_with(|| json!(r.range(100, 999)));
    }
    Value::Object(body)
}

/// Runs `script` (written to `dir/name`) with `paths` and then `names` as its arguments.
fn run_python(
    dir: &Path,
    name: &str,
    script: &str,
    paths: &[&Path],
    names: &[&str],
) -> Result<(), String> {
    let file = dir.join(name);
    std::fs::write(&file, script).map_err(|e| format!("writing {}: {e}", file.display()))?;
    let output = Command::new("python3")
        .arg(&file)
        .args(paths)
        .args(names)
        .output()
        .map_err(|e| format!("running python3: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "python3 {} failed: {}",
            file.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(())
}

/// Runs an SQL file into an existing SQLite database.
const ADD_SCRIPT: &str = "import sqlite3, sys\n\
con = sqlite3.connect(sys.argv[2])\n\
with open(sys.argv[1], encoding='utf-8') as f:\n    con.executescript(f.read())\n\
con.close()\n";

/// Copies tables (names quoted, `\"` doubled) from a database into another.
const COPY_SCRIPT: &str = "import sqlite3, sys\n\
con = sqlite3.connect(sys.argv[2], timeout=30)\n\
con.execute('ATTACH DATABASE ? AS src', (sys.argv[1],))\n\
for table in sys.argv[3:]:\n    \
q = '\"' + table.replace('\"', '\"\"') + '\"'\n    \
con.execute(f'DELETE FROM main.{q}')\n    \
con.execute(f'INSERT INTO main.{q} SELECT * FROM src.{q}')\n\
con.commit()\n\
con.close()\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shapes_are_deterministic_and_vary_with_the_seed() {
        let a = Shapes::new(3);
        assert_eq!(a.sql(), Shapes::new(3).sql());
        let differ = (4..12).any(|seed| Shapes::new(seed).sql() != a.sql());
        assert!(differ);
        assert!(a.sql().contains("WITHOUT ROWID"));
        assert!(a.sql().contains("CREATE VIEW"));
        assert!(a.sql().contains("PRIMARY KEY ("));
    }

    #[test]
    fn a_fifth_of_the_requests_are_over_the_shapes_and_every_form_is_asked() {
        let shapes = Shapes::new(1);
        let requests = shapes.generate(1, 1000, 3);
        assert_eq!(requests.len(), 1000);
        let names: Vec<&str> = shapes
            .shapes
            .iter()
            .map(|s| s.table.name)
            .chain(families::TABLE_NAMES.iter().copied())
            .collect();
        let over: Vec<&Request> = requests
            .iter()
            .filter(|r| names.contains(&r.table.name))
            .collect();
        assert_eq!(over.len(), 200);
        assert!(
            over.iter()
                .any(|r| r.op == Op::Delete && r.table.name == "fam_parent")
        );
        for shape in &shapes.shapes {
            assert!(
                over.iter().any(|r| r.table.name == shape.table.name),
                "{:?}",
                shape.form
            );
        }
        assert_eq!(requests, shapes.generate(1, 1000, 3));
    }

    #[test]
    fn the_script_runs_in_sqlite() {
        let dir = std::env::temp_dir().join(format!("shapes-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("shapes.sqlite3");
        let _ = std::fs::remove_file(&db);
        let shapes = Shapes::new(2);
        // Needs python3, as the harness itself does.
        if Command::new("python3").arg("--version").output().is_err() {
            return;
        }
        shapes.write(&dir, &db).unwrap();
        let copy = dir.join("copy.sqlite3");
        std::fs::copy(&db, &copy).unwrap();
        shapes.copy_tables(&dir, &db, &copy).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
