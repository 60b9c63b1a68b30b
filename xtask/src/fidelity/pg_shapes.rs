//! `--postgres` only: the PostgreSQL types the engine reads through psycopg2's Python objects,
//! and the list parameters its links and paging read as Python does.
//!
//! - **Tables**: `shapes` (generated from the seed, next to the dataset's tables) has a column
//!   of each type: `uuid`, `inet`, `bytea`, an enum, `interval`, `time`, `timetz`,
//!   `timestamptz`, `timestamp`, `numeric` without scale, `money`, `char(4)`, `citext`, `json`
//!   and `jsonb`, arrays of `integer`, `text` and `numeric`, a `bigint` with values near
//!   2^53 (whose `sum` must keep every digit), a domain over `integer`, ranges (`int4range`,
//!   `tstzrange`, `daterange`, `numrange`), `bit`, `varbit`, `cidr`, `oid`, `macaddr`, and
//!   `xml` and `point`, which the engine's SQLAlchemy does not know.
//! - **Time zone**: both databases get the zone [`zone`] of the seed as their own setting
//!   (odd seeds `America/New_York`, which has summer time, even seeds `UTC`), so every
//!   date-time of the run, in every table, is shown in that zone.
//! - **Requests** ([`request`]): lists filtered by every lookup each type answers, `_search`,
//!   `_order_by` and paging over `shapes`; aggregates and groups of each column; and lists of
//!   `shapes` and `people` whose query carries unknown `_` parameters, spaces, `+`, `&`, `%`
//!   and non-ASCII text in values, keys out of order, and `page`/`_per_page` written as Python's
//!   `int()` reads them (`٣`, `３`, ` 2 `, `+2`, `1_0`), so that the `next`/`previous` links
//!   (compared as text, [`super::compare`]) show the engine's order and encoding.
//! - **Mistakes**: with the run's `--mistakes` rate, a request is one the engine fails on (a
//!   `bytea` value in a filter, grouping by `bytea` or `timetz`, a `money` filter, an integer
//!   array compared with text): strict mode refuses them (`400`), lenient mode answers `500`.
//!
//! - **Keys** ([`KEY_SHAPES`]): a table without a declared key whose first column repeats and is
//!   NULL now and then (`pg_nokey`), a composite key (`pg_comp`), a view over it (its first
//!   column repeats) and a materialized view: the engine reflects all four (views too) and keys
//!   each on its first key column, or promotes the first column where none is declared, whose
//!   NULL rows it leaves out and whose repeated values its ORM shows once. Lists (paged,
//!   ordered, filtered), retrieves, aggregates and groups read them.
//!
//! Only reads and refused writes touch these tables, so they never need the resync.

use serde_json::json;

use super::dataset::{self, Backend, Column, Kind, TABLES, Table, Val};
use super::families;
use super::requests::{self, Op, Request, Rng, Wire};
use super::rounded_keys;

/// The rows of `shapes`.
const ROWS: usize = 40;

/// The time zones a run's databases are set to, by the seed's parity.
const ZONES: [&str; 2] = ["UTC", "America/New_York"];

/// The time zone of the run's databases for `seed`.
pub fn zone(seed: u64) -> &'static str {
    ZONES[(seed % 2) as usize]
}

/// Sets the current database's own time zone to [`zone`] (the name is only known inside it).
pub fn set_zone_sql(seed: u64) -> String {
    format!(
        "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET timezone TO %L', \
         current_database(), '{}'); END $$;",
        zone(seed)
    )
}

/// The tables this module adds, for the resync's `TRUNCATE` and `pg_dump` (the key shapes
/// are only read, so a resync leaves them alone).
pub const TABLE_NAMES: &[&str] = &[
    "shapes",
    "fam_parent",
    "fam_nullable",
    "fam_strict",
    "fam_grand",
    "fam_guarded",
];

/// Rows of `pg_nokey` and `pg_comp`.
const KEY_ROWS: usize = 30;

/// `pg_nokey`: no declared key; `k` repeats and is NULL in about one row in eight.
pub static NOKEY: Table = Table {
    name: "pg_nokey",
    rows: KEY_ROWS,
    text_pk: false,
    columns: &[
        col("k", "integer", |_| Val::Null),
        col("name", "text", |_| Val::Null),
        col("n", "integer", |_| Val::Null),
    ],
};

/// `pg_comp`: `PRIMARY KEY (a, b)`, `a` repeating.
pub static COMP: Table = Table {
    name: "pg_comp",
    rows: KEY_ROWS,
    text_pk: false,
    columns: &[
        col("a", "integer", |_| Val::Null),
        col("b", "text", |_| Val::Null),
        col("v", "integer", |_| Val::Null),
    ],
};

/// `pg_comp_view`: the rows of `pg_comp` with `v > 15` (a view: no key, `a` promoted).
pub static COMP_VIEW: Table = Table {
    name: "pg_comp_view",
    rows: KEY_ROWS,
    text_pk: false,
    columns: COMP.columns,
};

/// `pg_comp_mat`: a materialized view of `pg_comp`'s `a` and `v`.
pub static COMP_MAT: Table = Table {
    name: "pg_comp_mat",
    rows: KEY_ROWS,
    text_pk: false,
    columns: &[
        col("a", "integer", |_| Val::Null),
        col("v", "integer", |_| Val::Null),
    ],
};

/// The relations of the key shapes, as requests name them.
pub static KEY_SHAPES: [&Table; 4] = [&NOKEY, &COMP, &COMP_VIEW, &COMP_MAT];

/// The rows of `pg_nokey` (`k`, `name`, `n`) and of `pg_comp` (`a`, `b`, `v`) for `seed`.
#[allow(clippy::type_complexity)]
fn key_rows(seed: u64) -> (Vec<(Option<u64>, String, u64)>, Vec<(u64, String, u64)>) {
    let mut r = Rng::new(seed ^ 0x0000_7E75);
    let words = ["ash", "birch", "cedar", "elm", "fir", "oak", "pine", "yew"];
    let nokey = (0..KEY_ROWS)
        .map(|i| {
            let k = (!r.chance(12)).then(|| r.below(9));
            (k, format!("{}{i}", r.pick(&words)), r.below(50))
        })
        .collect();
    let mut comp = Vec::new();
    for i in 0..KEY_ROWS {
        // `b` is unique per row, so `(a, b)` never repeats.
        comp.push((r.below(10), format!("{}{i}", r.pick(&words)), r.below(40)));
    }
    (nokey, comp)
}

/// The script that makes the key shapes.
fn key_sql(seed: u64) -> String {
    let (nokey, comp) = key_rows(seed);
    let mut out = String::from(
        "CREATE TABLE pg_nokey (k integer, name text, n integer);\n\
         CREATE TABLE pg_comp (a integer, b text, v integer, PRIMARY KEY (a, b));\n",
    );
    for (k, name, n) in nokey {
        let k = k.map_or("NULL".to_owned(), |k| k.to_string());
        out.push_str(&format!(
            "INSERT INTO pg_nokey VALUES ({k}, '{name}', {n});\n"
        ));
    }
    for (a, b, v) in comp {
        out.push_str(&format!("INSERT INTO pg_comp VALUES ({a}, '{b}', {v});\n"));
    }
    out.push_str(
        "CREATE VIEW pg_comp_view AS SELECT a, b, v FROM pg_comp WHERE v > 15;\n\
         CREATE MATERIALIZED VIEW pg_comp_mat AS SELECT a, v FROM pg_comp;\n",
    );
    out
}

/// A read of one key shape ([`requests::key_shape_read`]).
fn key_request(r: &mut Rng) -> Request {
    requests::key_shape_read(r, &KEY_SHAPES)
}

const fn col(name: &'static str, pg: &'static str, make: fn(&mut Rng) -> Val) -> Column {
    Column {
        name,
        decl: "",
        pg,
        // The dataset's generator never sees these columns: the kind only names them.
        kind: Kind::Text,
        make,
    }
}

/// `shapes`: one column per type, each value made by its column's generator (SQL literal
/// text, cast by PostgreSQL to the column's type; `None` is NULL).
pub static SHAPES: Table = Table {
    name: "shapes",
    rows: ROWS,
    text_pk: false,
    columns: &[
        col("id", "serial PRIMARY KEY", |_| Val::Null),
        col("u", "uuid", |r| {
            maybe(r, |r| {
                format!(
                    "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
                    r.below(1 << 32),
                    r.below(1 << 16),
                    r.below(1 << 12),
                    r.below(1 << 12),
                    r.below(1 << 48)
                )
            })
        }),
        col("ip", "inet", |r| {
            maybe(r, |r| {
                (*r.pick(&[
                    "192.168.0.1",
                    "10.0.0.0/8",
                    "10.1.2.3/24",
                    "::1",
                    "2001:db8::/32",
                    "172.16.5.4/32",
                ]))
                .to_owned()
            })
        }),
        col("b", "bytea", |r| {
            maybe(r, |r| {
                let n = r.below(6);
                let bytes: String = (0..n)
                    .map(|_| {
                        let b =
                            *r.pick(&[0x00u8, 0x01, b'\'', b'"', b'\\', b'\n', b'A', 0x7f, 0xff]);
                        format!("{b:02x}")
                    })
                    .collect();
                format!("\\x{bytes}")
            })
        }),
        col("md", "mood", |r| {
            maybe(r, |r| (*r.pick(&["sad", "ok", "happy"])).to_owned())
        }),
        col("iv", "interval", |r| {
            maybe(r, |r| {
                let mut parts = Vec::new();
                if r.chance(30) {
                    parts.push(format!("{} years", r.range(-2, 3)));
                }
                if r.chance(40) {
                    parts.push(format!("{} mons", r.range(-13, 13)));
                }
                if r.chance(60) {
                    parts.push(format!("{} days", r.range(-40, 40)));
                }
                if r.chance(60) || parts.is_empty() {
                    let sign = if r.chance(20) { "-" } else { "" };
                    let fraction = if r.chance(30) {
                        format!(".{}", r.range(1, 999_999))
                    } else {
                        String::new()
                    };
                    parts.push(format!(
                        "{sign}{:02}:{:02}:{:02}{fraction}",
                        r.range(0, 30),
                        r.range(0, 59),
                        r.range(0, 59)
                    ));
                }
                parts.join(" ")
            })
        }),
        col("t", "time", |r| maybe(r, time)),
        col("ttz", "timetz", |r| {
            maybe(r, |r| {
                let offset = *r.pick(&["+00", "+02", "-05", "+05:30", "-03:30"]);
                format!("{}{offset}", time(r))
            })
        }),
        col("ts", "timestamptz", |r| {
            maybe(r, |r| {
                let offset = *r.pick(&["+00", "+02", "-05", "+05:30"]);
                format!("{} {}{offset}", date(r), time(r))
            })
        }),
        col("tsn", "timestamp", |r| {
            maybe(r, |r| format!("{} {}", date(r), time(r)))
        }),
        col("n", "numeric", |r| {
            maybe(r, |r| {
                let scale = r.below(4) as usize;
                let whole = r.range(-500, 500);
                if scale == 0 {
                    whole.to_string()
                } else {
                    format!("{whole}.{:0scale$}", r.below(10u64.pow(scale as u32)))
                }
            })
        }),
        col("m", "money", |r| {
            maybe(r, |r| {
                format!("{}.{:02}", r.range(-200, 2000), r.below(100))
            })
        }),
        col("c", "char(4)", |r| {
            maybe(r, |r| {
                let n = r.below(5) as usize;
                (0..n).map(|_| *r.pick(&['a', 'b', 'Z', ' '])).collect()
            })
        }),
        col("ci", "citext", |r| {
            maybe(r, |r| (*r.pick(&WORDS)).to_owned())
        }),
        col("j", "json", |r| maybe(r, json_text)),
        col("jb", "jsonb", |r| maybe(r, json_text)),
        col("arr", "integer[]", |r| {
            maybe(r, |r| {
                let n = r.below(4);
                let items: Vec<String> = (0..n).map(|_| r.range(-2, 9).to_string()).collect();
                format!("{{{}}}", items.join(","))
            })
        }),
        col("tarr", "text[]", |r| {
            maybe(r, |r| {
                let n = r.below(4);
                let items: Vec<String> = (0..n)
                    .map(|_| {
                        let w = *r.pick(&WORDS);
                        format!("\"{}\"", w.replace('\\', "\\\\").replace('"', "\\\""))
                    })
                    .collect();
                format!("{{{}}}", items.join(","))
            })
        }),
        col("narr", "numeric[]", |r| {
            maybe(r, |r| {
                let n = r.below(3);
                let items: Vec<String> = (0..n)
                    .map(|_| format!("{}.{}", r.range(-5, 5), r.below(100)))
                    .collect();
                format!("{{{}}}", items.join(","))
            })
        }),
        col("big", "bigint", |r| {
            if r.chance(10) {
                return Val::Null;
            }
            Val::Int(*r.pick(&[
                9_007_199_254_740_991,
                9_007_199_254_740_993,
                -9_007_199_254_740_991,
                1,
                0,
                4_611_686_018_427_387_904,
            ]))
        }),
        // Types the engine reads otherwise than text, or that its SQLAlchemy does not know.
        col("dom", "posint", |r| {
            maybe(r, |r| r.range(1, 120).to_string())
        }),
        col("rng", "int4range", |r| {
            maybe(r, |r| {
                let lo = r.range(-3, 9);
                match r.below(6) {
                    0 => "empty".to_owned(),
                    1 => format!("(,{lo}]"),
                    2 => format!("[{lo},)"),
                    3 => format!("[{lo},{lo}]"),
                    _ => format!("[{lo},{})", lo + r.range(1, 9)),
                }
            })
        }),
        col("tzr", "tstzrange", |r| {
            maybe(r, |r| {
                let offset = *r.pick(&["+00", "+02", "-05:30"]);
                let lo = format!("{} {}{offset}", date(r), time(r));
                match r.below(4) {
                    0 => "empty".to_owned(),
                    1 => format!("[\"{lo}\",)"),
                    _ => format!("[\"{lo}\",\"2030-01-01 00:00:00.25+00\")"),
                }
            })
        }),
        col("dr", "daterange", |r| {
            maybe(r, |r| {
                let lo = date(r);
                if r.chance(30) {
                    format!("(,{lo}]")
                } else {
                    format!("[{lo},2030-01-01)")
                }
            })
        }),
        col("nr", "numrange", |r| {
            maybe(r, |r| {
                format!(
                    "[{}.{},{}.50)",
                    r.range(-9, 9),
                    r.below(100),
                    r.range(10, 20)
                )
            })
        }),
        col("bt", "bit(4)", |r| {
            maybe(r, |r| (0..4).map(|_| *r.pick(&['0', '1'])).collect())
        }),
        col("vb", "varbit(8)", |r| {
            maybe(r, |r| {
                let n = r.below(9);
                (0..n).map(|_| *r.pick(&['0', '1'])).collect()
            })
        }),
        col("net", "cidr", |r| {
            maybe(r, |r| {
                (*r.pick(&[
                    "10.0.0.0/8",
                    "192.168.0.0/16",
                    "192.168.1.0/24",
                    "::1/128",
                    "2001:db8::/32",
                ]))
                .to_owned()
            })
        }),
        col("x", "xml", |r| {
            maybe(r, |r| {
                format!("<w>{}</w>", r.pick(&["alpha", "Beta", "zoë", "b c"]))
            })
        }),
        col("o", "oid", |r| {
            maybe(r, |r| {
                (*r.pick(&["0", "12", "4294967295", "700"])).to_owned()
            })
        }),
        col("pt", "point", |r| {
            maybe(r, |r| format!("({},{}.5)", r.range(-5, 5), r.range(0, 9)))
        }),
        col("mac", "macaddr", |r| {
            maybe(r, |r| {
                (*r.pick(&[
                    "08:00:2b:01:02:03",
                    "00:00:00:00:00:00",
                    "ff:ff:ff:ff:ff:ff",
                ]))
                .to_owned()
            })
        }),
        // A name PostgreSQL reserves and SQLite does not: quoted in the query text of an
        // unknown aggregate function.
        col("user", "text", |r| {
            maybe(r, |r| (*r.pick(&WORDS)).to_owned())
        }),
    ],
};

/// Text values of `ci` and `tarr`: case, Unicode, spaces, quotes, the empty string.
const WORDS: [&str; 9] = [
    "Hello", "hello", "WORLD", "Zoë", "b c", "", "it's", "a\"q", "%_",
];

/// A value made by `make`, or NULL one time in eight.
fn maybe(r: &mut Rng, make: impl FnOnce(&mut Rng) -> String) -> Val {
    if r.chance(12) {
        Val::Null
    } else {
        Val::Text(make(r))
    }
}

fn time(r: &mut Rng) -> String {
    let fraction = if r.chance(30) {
        format!(".{:06}", r.below(1_000_000))
    } else {
        String::new()
    };
    format!(
        "{:02}:{:02}:{:02}{fraction}",
        r.range(0, 23),
        r.range(0, 59),
        r.range(0, 59)
    )
}

fn date(r: &mut Rng) -> String {
    format!(
        "{}-{:02}-{:02}",
        r.range(2020, 2025),
        r.range(1, 12),
        r.range(1, 28)
    )
}

fn json_text(r: &mut Rng) -> String {
    (*r.pick(&[
        r#"{"a": 1}"#,
        r#"{"color": "blue", "n": [1, 2]}"#,
        r#""text""#,
        "[1, 2, 3]",
        r#"["x", "y z"]"#,
        "null",
    ]))
    .to_owned()
}

/// The rows of `shapes` for `seed`: each column's value (`None`: NULL), the key left out.
fn rows(seed: u64) -> Vec<Vec<Option<String>>> {
    dataset::raw_rows(&SHAPES, seed ^ 0x005E_A9E5, ROWS)
}

/// The script that makes `shapes` and its rows (run after the dataset's script).
pub fn sql(seed: u64) -> String {
    let mut out = String::from(
        "BEGIN;\nCREATE EXTENSION IF NOT EXISTS citext;\n\
         CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');\n\
         CREATE DOMAIN posint AS integer CHECK (VALUE > 0);\n",
    );
    let decls: Vec<String> = SHAPES
        .columns
        .iter()
        .map(|c| format!("\"{}\" {}", c.name, c.pg))
        .collect();
    out.push_str(&format!("CREATE TABLE shapes ({});\n", decls.join(", ")));
    let names: Vec<String> = SHAPES.columns[1..]
        .iter()
        .map(|c| format!("\"{}\"", c.name))
        .collect();
    for row in rows(seed) {
        let values: Vec<String> = row
            .iter()
            .map(|v| match v {
                // Standard strings: a backslash is itself (`'\x01'` is bytea's hex input).
                Some(text) => format!("'{}'", text.replace('\'', "''")),
                None => "NULL".to_owned(),
            })
            .collect();
        out.push_str(&format!(
            "INSERT INTO shapes ({}) VALUES ({});\n",
            names.join(", "),
            values.join(", ")
        ));
    }
    out.push_str(&key_sql(seed));
    out.push_str(&families::sql(seed, Backend::Postgres));
    out.push_str(&rounded_keys::sql(seed, Backend::Postgres));
    out.push_str("COMMIT;\n");
    out
}

/// A stored value of `column` for a filter, or the column's typical value when the sample is
/// NULL.
fn sample(r: &mut Rng, data: &[Vec<Option<String>>], column: usize) -> Option<String> {
    data[r.below(data.len() as u64) as usize][column - 1].clone()
}

/// Columns by index in [`SHAPES`].
fn index(name: &str) -> usize {
    SHAPES
        .columns
        .iter()
        .position(|c| c.name == name)
        .unwrap_or(0)
}

/// One filter the engine answers (`2xx`) for a column of `shapes`.
fn filter(r: &mut Rng, data: &[Vec<Option<String>>]) -> (String, String) {
    let name = *r.pick(&[
        "u", "ip", "b", "md", "iv", "t", "ts", "tsn", "n", "c", "ci", "j", "jb", "arr", "tarr",
        "narr", "big", "m", "ttz", "dom", "rng", "tzr", "dr", "nr", "bt", "vb", "net", "x", "o",
        "pt", "mac",
    ]);
    let i = index(name);
    // `isempty` compares an enum with `''`, which PostgreSQL cannot read as the enum (the
    // engine fails): a mistake there.
    let null_lookup = if name == "md" {
        "isnull"
    } else {
        *r.pick(&["isnull", "isempty"])
    };
    let flag = (*r.pick(&["1", "0", "true", "false"])).to_owned();
    let negate = if r.chance(15) { "exclude__" } else { "" };
    let value = sample(r, data, i);
    let (lookup, value) = match (name, value) {
        // The engine fails on any value of these: only isnull/isempty are careful requests.
        ("b" | "m" | "bt" | "vb" | "pt", _) | (_, None) => (null_lookup.to_owned(), flag),
        // A type SQLAlchemy does not know: `ILIKE` on its text.
        ("x", Some(_)) => {
            let word = *r.pick(&["alpha", "BETA", "w>", "zoë", "b c"]);
            (
                (*r.pick(&["icontains", "istartswith"])).to_owned(),
                word.to_owned(),
            )
        }
        // A range literal holds a comma: compared whole, never split by `in`.
        ("rng" | "tzr" | "dr" | "nr", Some(v)) => ("exact".to_owned(), v),
        ("dom", Some(v)) => (
            (*r.pick(&["exact", "gt", "lte", "in"])).to_owned(),
            v.clone(),
        ),
        ("arr" | "narr", Some(v)) => {
            let items: Vec<&str> = v
                .trim_matches(['{', '}'])
                .split(',')
                .filter(|s| !s.is_empty())
                .collect();
            match (items.first(), r.below(3)) {
                (Some(first), 0) => ("exact".to_owned(), (*first).to_owned()),
                (Some(_), 1) => ("in".to_owned(), items.join(",")),
                _ => ("exact".to_owned(), format!("[{}]", items.join(","))),
            }
        }
        ("tarr", Some(_)) => {
            let word = *r.pick(&WORDS);
            match r.below(3) {
                // A word that reads as JSON would be compared as a number: a mistake.
                0 => ("exact".to_owned(), word.to_owned()),
                1 => ("json_icontains".to_owned(), word.to_owned()),
                _ => ("in".to_owned(), format!("{word},x")),
            }
        }
        ("j" | "jb", Some(_)) => {
            let word = *r.pick(&["text", "blue", "y z", "x"]);
            (
                (*r.pick(&["exact", "json_icontains", "in"])).to_owned(),
                word.to_owned(),
            )
        }
        ("n" | "big", Some(v)) => (
            (*r.pick(&["exact", "gt", "lte", "in"])).to_owned(),
            v.clone(),
        ),
        ("ts" | "tsn", Some(v)) => {
            let day = v.get(..10).unwrap_or(&v).to_owned();
            ((*r.pick(&["gte", "lt"])).to_owned(), day)
        }
        ("md" | "c" | "ci", Some(v)) => {
            let lookup = *r.pick(&["exact", "icontains", "istartswith", "iendswith", "in"]);
            (lookup.to_owned(), v.trim_end().to_owned())
        }
        // uuid, inet, interval, time, timetz: PostgreSQL reads the text as the type; ILIKE
        // is not theirs (a mistake).
        (_, Some(v)) => ((*r.pick(&["exact", "in"])).to_owned(), v),
    };
    let value = if value.is_empty() {
        "x".to_owned()
    } else {
        value
    };
    (format!("{negate}{name}__{lookup}"), value)
}

/// One request the engine fails on (`500`), for the run's mistakes.
fn mistake(r: &mut Rng) -> Request {
    let (op, query): (Op, Vec<(&str, &str)>) = match r.below(10) {
        6 => (Op::List, vec![("bt", "1")]),
        7 => (Op::List, vec![("net", "1")]),
        8 => (Op::Group, vec![("_x_column", "rng"), ("_y_func", "count")]),
        9 => (Op::Aggregate, vec![("_y_func", "min"), ("_y_column", "pt")]),
        0 => (Op::List, vec![("b", "x")]),
        1 => (Op::List, vec![("m__gt", "1"), ("m", "12.34")]),
        2 => (Op::List, vec![("arr", "abc")]),
        3 => (Op::Group, vec![("_x_column", "b"), ("_y_func", "count")]),
        4 => (Op::Group, vec![("_x_column", "ttz"), ("_y_func", "count")]),
        _ => (Op::Aggregate, vec![("_y_func", "min"), ("_y_column", "u")]),
    };
    Request {
        wire: Wire::default(),
        op,
        table: &SHAPES,
        pk: None,
        query: query
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        body: None,
    }
}

/// `page` or `_per_page` as Python's `int()` reads it: digits of other scripts, white space,
/// a sign, underscores.
fn python_int_text(r: &mut Rng, n: u64) -> String {
    let ascii = n.to_string();
    match r.below(7) {
        0 => ascii
            .chars()
            .map(|c| char::from_u32(0x660 + c.to_digit(10).unwrap_or(0)).unwrap_or(c))
            .collect(),
        1 => ascii
            .chars()
            .map(|c| char::from_u32(0xFF10 + c.to_digit(10).unwrap_or(0)).unwrap_or(c))
            .collect(),
        2 => format!(" {ascii}\u{3000}"),
        3 => format!("+{ascii}"),
        4 if ascii.len() > 1 => format!("{}_{}", &ascii[..1], &ascii[1..]),
        _ => ascii,
    }
}

/// A list whose links carry odd text: unknown `_` parameters (both servers ignore them),
/// spaces, `+`, `&`, `%`, non-ASCII text, keys out of order, and paging numbers in Python's
/// `int()` forms.
fn link_list(r: &mut Rng, table: &'static Table) -> Request {
    let mut query: Vec<(String, String)> = Vec::new();
    let odd = [
        "a b",
        "x+y",
        "Zoë & co",
        "100% off",
        "日本 語",
        "~-._*!()'",
        "",
        "a=b?c#d",
    ];
    for _ in 0..r.range(1, 3) {
        let key = *r.pick(&["_extra", "_note", "_é", "_Z", "_a b"]);
        query.push((key.to_owned(), (*r.pick(&odd)).to_owned()));
    }
    let per_page = r.range(1, 4) as u64;
    query.push(("_per_page".to_owned(), python_int_text(r, per_page)));
    if r.chance(70) {
        let page = r.range(1, 6) as u64;
        query.push(("page".to_owned(), python_int_text(r, page)));
    }
    if r.chance(30) {
        query.push(("_order_by".to_owned(), "-id".to_owned()));
    }
    // Keys in a shuffled order: the engine sorts them in its links.
    for i in (1..query.len()).rev() {
        let j = r.below(i as u64 + 1) as usize;
        query.swap(i, j);
    }
    Request {
        wire: Wire::default(),
        op: Op::List,
        table,
        pk: None,
        query,
        body: None,
    }
}

/// One request over `shapes` (or a link list over `people`) for the generator's `seed`, a
/// mistake `mistakes` times per thousand.
pub fn request(r: &mut Rng, seed: u64, mistakes: u64) -> Request {
    if r.below(1000) < mistakes {
        return mistake(r);
    }
    if r.chance(25) {
        return key_request(r);
    }
    if r.chance(15) {
        return families::request(r);
    }
    let data = rows(seed);
    let data = data.as_slice();
    let mut query: Vec<(String, String)> = Vec::new();
    let op = match r.below(100) {
        0..25 => {
            for _ in 0..r.below(3) {
                query.push(filter(r, data));
            }
            if r.chance(25) {
                let word = *r.pick(&["hello", "zoë", "b c", "12", "happy", "blue", "1"]);
                query.push(("_search".to_owned(), word.to_owned()));
            }
            if r.chance(50) {
                let name = *r.pick(&[
                    "u", "ip", "b", "md", "iv", "t", "ttz", "ts", "tsn", "n", "m", "c", "ci", "jb",
                    "arr", "tarr", "narr", "big", "dom", "rng", "tzr", "dr", "nr", "bt", "vb",
                    "net", "o", "mac",
                ]);
                let dir = if r.chance(50) { "-" } else { "" };
                query.push(("_order_by".to_owned(), format!("{dir}{name}")));
            }
            query.push(("_per_page".to_owned(), r.range(3, 15).to_string()));
            Op::List
        }
        25..45 => {
            let table = if r.chance(50) { &SHAPES } else { &TABLES[0] };
            return link_list(r, table);
        }
        45..55 => {
            query.push(("_no_pagination".to_owned(), "1".to_owned()));
            query.push(filter(r, data));
            Op::List
        }
        55..75 => {
            let (func, column) = *r.pick(&[
                ("count", "arr"),
                ("sum", "big"),
                ("avg", "big"),
                ("sum", "n"),
                ("avg", "n"),
                ("sum", "iv"),
                ("avg", "iv"),
                ("sum", "m"),
                ("min", "m"),
                ("min", "iv"),
                ("max", "t"),
                ("max", "ttz"),
                ("min", "c"),
                ("max", "ci"),
                ("min", "md"),
                ("max", "ip"),
                ("min", "arr"),
                ("max", "tarr"),
                ("min", "narr"),
                ("max", "ts"),
                ("min", "tsn"),
                ("sum", "dom"),
                ("min", "dom"),
                ("avg", "dom"),
                ("max", "o"),
                ("min", "net"),
                ("count", "rng"),
            ]);
            query.push(("_y_func".to_owned(), func.to_owned()));
            query.push(("_y_column".to_owned(), column.to_owned()));
            if r.chance(50) {
                query.push(filter(r, data));
            }
            Op::Aggregate
        }
        75..95 => {
            let (x, lookup) = *r.pick(&[
                ("u", ""),
                ("ip", ""),
                ("md", ""),
                ("iv", ""),
                ("t", ""),
                ("n", ""),
                ("m", ""),
                ("c", ""),
                ("ci", ""),
                ("arr", ""),
                ("tarr", ""),
                ("narr", ""),
                ("big", ""),
                ("jb", ""),
                ("ts", "date_day"),
                ("ts", "date_month"),
                ("tsn", "date_week"),
                ("ts", ""),
                ("dom", ""),
                ("o", ""),
                ("bt", ""),
                ("vb", ""),
                ("net", ""),
                ("mac", ""),
            ]);
            query.push(("_x_column".to_owned(), x.to_owned()));
            if !lookup.is_empty() {
                query.push(("_x_lookup".to_owned(), lookup.to_owned()));
            }
            let (func, y) = *r.pick(&[
                ("count", "id"),
                ("nosuch", "c"),
                ("sum", "big"),
                ("min", "iv"),
                ("max", "c"),
                ("min", "narr"),
                ("avg", "n"),
            ]);
            query.push(("_y_func".to_owned(), func.to_owned()));
            query.push(("_y_column".to_owned(), y.to_owned()));
            Op::Group
        }
        _ => {
            // Writes the engine refuses (400) the same way: nothing is stored.
            let bodies = [
                json!({"arr": "{1,2}"}),
                json!({"arr": 5}),
                json!({"narr": true}),
                json!({"m": "$4.00"}),
                json!({"c": "toolong"}),
            ];
            let body = r.pick(&bodies).clone();
            return Request {
                wire: Wire::default(),
                op: Op::Create,
                table: &SHAPES,
                pk: None,
                query: Vec::new(),
                body: Some(body),
            };
        }
    };
    Request {
        wire: Wire::default(),
        op,
        table: &SHAPES,
        pk: None,
        query,
        body: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_is_the_same_for_a_seed_and_declares_every_type() {
        let script = sql(3);
        assert_eq!(script, sql(3));
        for ty in [
            "uuid", "inet", "bytea", "interval", "timetz", "money", "char(4)", "citext",
        ] {
            assert!(script.contains(ty), "{ty}");
        }
        assert_eq!(script.matches("INSERT INTO shapes").count(), ROWS);
        assert_eq!(zone(1), "America/New_York");
        assert_eq!(zone(2), "UTC");
    }

    #[test]
    fn requests_are_deterministic_and_name_shapes_columns() {
        let make = || {
            let mut r = Rng::new(7);
            (0..200).map(|_| request(&mut r, 7, 30)).collect::<Vec<_>>()
        };
        let requests = make();
        assert_eq!(requests, make());
        for request in &requests {
            for (key, _) in &request.query {
                let name = key.trim_start_matches("exclude__");
                let name = name.split("__").next().unwrap_or(name);
                let known = name.starts_with('_')
                    || name == "page"
                    || request.table.columns.iter().any(|c| c.name == name);
                assert!(known, "{key}");
            }
        }
        assert!(requests.iter().any(|r| r.table.name == "people"));
        for shape in KEY_SHAPES {
            assert!(
                requests.iter().any(|r| r.table.name == shape.name),
                "{}",
                shape.name
            );
        }
        // An unknown aggregate function, whose answer is the query's text in the dialect.
        requests::assert_draws_unknown_functions(|r| request(r, 7, 0));
    }
}
