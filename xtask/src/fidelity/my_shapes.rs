//! `--mysql` only: the MySQL (MariaDB) types the engine reads through PyMySQL's Python objects,
//! and the key shapes it reflects there.
//!
//! - **Tables**: `my_shapes` (generated from the seed, next to the dataset's tables) has a column
//!   of each type: `ENUM`, `SET`, `BIT(4)`, `YEAR`, `BIGINT UNSIGNED` with values beyond 2^63,
//!   `JSON`, `DECIMAL` with scales 4 and 0, `DATETIME(6)` and `TIMESTAMP(3)` with fractions,
//!   `TINYINT(1)`, `TIME` (negative and beyond a day too), `VARBINARY` and `BLOB`, `CHAR(4)`,
//!   a `utf8mb4_general_ci` (case-insensitive) and a `utf8mb4_bin` (case-sensitive) column,
//!   and columns with odd names (`order`, a reserved word, and `Mixed`).
//! - **`SET`**: the engine's SQLAlchemy turns a `SET` value into a Python `set`, and writes it
//!   in the set's iteration order (`str(set)` in a record or an aggregate, a list in a group),
//!   which follows the string hashes Python randomizes per process. The harness starts the
//!   engine and the emulator with one `PYTHONHASHSEED` (`engine::HASH_SEED`), which the
//!   emulator follows too, so values of several members compare exactly.
//! - **Keys** ([`KEY_SHAPES`]): a table without a declared key whose first column repeats and is
//!   NULL now and then (`my nokey ë`), a composite key (`my-comp`) and a view over it
//!   (`my_comp_view`): the engine keys each on its first key column, or promotes the first
//!   column where none is declared. Lists (paged, ordered, filtered), retrieves, aggregates and
//!   groups read them.
//! - **Requests** ([`request`]): lists filtered by the lookups each type answers, `_search`,
//!   `_order_by` and paging over `my_shapes`; aggregates and groups of its columns; retrieves.
//! - **Mistakes**: with the run's `--mistakes` rate, a request is one the engine fails on (a
//!   `500`): a non-finite number in a filter (PyMySQL writes `inf`/`nan` into the SQL), a
//!   `VARBINARY` filter value that is not hex, `icontains` on a blob, grouping by bytes (not UTF-8), `sum`
//!   of a date-time, a `SET`, a `BIT` or bytes. Strict mode refuses them (`400`), lenient mode
//!   answers `500`.
//!
//! Only reads touch these tables, so they never need the resync.

use super::dataset::{self, Backend, Column, Kind, Table, Val};
use super::families;
use super::requests::{self, Op, Request, Rng, Wire};
use super::rounded_keys;

/// The rows of `my_shapes`.
const ROWS: usize = 40;

/// Rows of `my nokey ë` and `my-comp`.
const KEY_ROWS: usize = 30;

const fn col(name: &'static str, decl: &'static str, make: fn(&mut Rng) -> Val) -> Column {
    Column {
        name,
        decl: "",
        pg: decl,
        // The dataset's generator never sees these columns: the kind only names them.
        kind: Kind::Text,
        make,
    }
}

/// `my nokey ë` (a space and a non-ASCII letter in its name): no declared key; `k` repeats and
/// is NULL in about one row in eight.
pub static NOKEY: Table = Table {
    name: "my nokey ë",
    rows: KEY_ROWS,
    text_pk: false,
    columns: &[
        col("k", "INT", |_| Val::Null),
        col("name", "VARCHAR(20)", |_| Val::Null),
        col("n", "INT", |_| Val::Null),
    ],
};

/// `my-comp`: `PRIMARY KEY (a, b)`, `a` repeating.
pub static COMP: Table = Table {
    name: "my-comp",
    rows: KEY_ROWS,
    text_pk: false,
    columns: &[
        col("a", "INT", |_| Val::Null),
        col("b", "VARCHAR(20)", |_| Val::Null),
        col("v", "INT", |_| Val::Null),
    ],
};

/// `my_comp_view`: the rows of `my-comp` with `v > 15` (a view: no key, `a` promoted).
pub static COMP_VIEW: Table = Table {
    name: "my_comp_view",
    rows: KEY_ROWS,
    text_pk: false,
    columns: COMP.columns,
};

/// `my_zero_dates (id, zd DATETIME)`: date-times, and zero dates (`0000-00-00 00:00:00`,
/// which MariaDB keeps: its default `sql_mode` has no `NO_ZERO_DATE`) that PyMySQL hands over
/// as text, which the engine's date-time field cannot write. A table of their own, so that a
/// zero date fails only the requests that read one.
pub static ZERO_DATES: Table = Table {
    name: "my_zero_dates",
    rows: ZERO_DATE_ROWS.len(),
    text_pk: false,
    columns: &[
        col("id", "INT PRIMARY KEY", |_| Val::Null),
        col("zd", "DATETIME", |_| Val::Null),
    ],
};

/// The rows of [`ZERO_DATES`], by key from 1.
const ZERO_DATE_ROWS: [&str; 6] = [
    "2001-06-15 10:00:00",
    "0000-00-00 00:00:00",
    "1999-12-31 23:59:59",
    "2024-02-29 12:30:00",
    "0000-00-00 00:00:00",
    "2010-01-01 00:00:00",
];

/// A read of [`ZERO_DATES`]: a record, a list from a date on (which leaves the zero dates
/// out, or not), an aggregate of the date-times.
fn zero_date_request(r: &mut Rng) -> Request {
    let (op, pk, query) = match r.below(3) {
        0 => (Op::Retrieve, Some(r.range(1, 6).to_string()), Vec::new()),
        1 => {
            let day = *r.pick(&["1990-01-01", "2005-01-01"]);
            let lookup = *r.pick(&["zd__gte", "zd__lt", "zd__isnull"]);
            let value = if lookup == "zd__isnull" { "false" } else { day };
            let query = vec![
                (lookup.to_owned(), value.to_owned()),
                ("_order_by".to_owned(), "id".to_owned()),
            ];
            (Op::List, None, query)
        }
        _ => {
            let func = *r.pick(&["max", "min", "count"]);
            let query = vec![
                ("_y_func".to_owned(), func.to_owned()),
                ("_y_column".to_owned(), "zd".to_owned()),
            ];
            (Op::Aggregate, None, query)
        }
    };
    Request {
        wire: Wire::default(),
        op,
        table: &ZERO_DATES,
        pk,
        query,
        body: None,
    }
}

/// The relations of the key shapes, as requests name them.
pub static KEY_SHAPES: [&Table; 3] = [&NOKEY, &COMP, &COMP_VIEW];

/// `my_shapes`: one column per type. Each value is the column's raw text (`Val::Text`), made
/// into a literal by [`literal`].
pub static SHAPES: Table = Table {
    name: "my_shapes",
    rows: ROWS,
    text_pk: false,
    columns: &[
        col("id", "INT AUTO_INCREMENT PRIMARY KEY", |_| Val::Null),
        col("md", "ENUM('sad', 'ok', 'happy')", |r| {
            maybe(r, |r| (*r.pick(&["sad", "ok", "happy"])).to_owned())
        }),
        // Several members: one hash seed for both servers (see the module's notes).
        col("st", "SET('red', 'green', 'blue')", |r| {
            maybe(r, |r| {
                (*r.pick(&[
                    "red",
                    "green",
                    "blue",
                    "",
                    "red,blue",
                    "green,blue",
                    "red,green,blue",
                ]))
                .to_owned()
            })
        }),
        col("bt", "BIT(4)", |r| maybe(r, |r| r.below(16).to_string())),
        col("yr", "YEAR", |r| {
            maybe(r, |r| {
                (*r.pick(&["1999", "2000", "2024", "2155", "1901"])).to_owned()
            })
        }),
        col("ub", "BIGINT UNSIGNED", |r| {
            maybe(r, |r| {
                (*r.pick(&[
                    "18446744073709551615",
                    "9223372036854775808",
                    "9223372036854775807",
                    "12345678901234567890",
                    "0",
                    "1",
                ]))
                .to_owned()
            })
        }),
        col("j", "JSON", |r| maybe(r, json_text)),
        col("d4", "DECIMAL(12, 4)", |r| {
            maybe(r, |r| {
                format!("{}.{:04}", r.range(-5000, 5000), r.below(10_000))
            })
        }),
        col("d0", "DECIMAL(20, 0)", |r| {
            maybe(r, |r| {
                (*r.pick(&["0", "-7", "99999999999999999999", "123456789012345", "42"])).to_owned()
            })
        }),
        col("dt", "DATETIME(6)", |r| {
            maybe(r, |r| format!("{} {}", date(r), time_of_day(r)))
        }),
        col("ts", "TIMESTAMP(3) NULL", |r| {
            maybe(r, |r| {
                format!(
                    "{} {:02}:{:02}:{:02}.{:03}",
                    date(r),
                    r.range(0, 23),
                    r.range(0, 59),
                    r.range(0, 59),
                    r.below(1000)
                )
            })
        }),
        col("flag", "TINYINT(1)", |r| {
            maybe(r, |r| (*r.pick(&["0", "1"])).to_owned())
        }),
        col("tm", "TIME", |r| {
            maybe(r, |r| {
                let sign = if r.chance(15) { "-" } else { "" };
                format!(
                    "{sign}{:02}:{:02}:{:02}",
                    r.range(0, 40),
                    r.range(0, 59),
                    r.range(0, 59)
                )
            })
        }),
        col("vb", "VARBINARY(16)", |r| maybe(r, bytes_hex)),
        col("bl", "BLOB", |r| maybe(r, bytes_hex)),
        col("c", "CHAR(4)", |r| {
            maybe(r, |r| {
                let n = r.below(5) as usize;
                (0..n).map(|_| *r.pick(&['a', 'b', 'Z', ' '])).collect()
            })
        }),
        col(
            "ci",
            "VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
            |r| maybe(r, |r| (*r.pick(&WORDS)).to_owned()),
        ),
        col(
            "cs",
            "VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
            |r| maybe(r, |r| (*r.pick(&WORDS)).to_owned()),
        ),
        col("order", "INT", |r| {
            maybe(r, |r| r.range(-5, 50).to_string())
        }),
        col("Mixed", "VARCHAR(20)", |r| {
            maybe(r, |r| (*r.pick(&["alpha", "Beta", "GAMMA"])).to_owned())
        }),
        // One bit: its filter values go through a boolean field (`b1=true` is `b1 = 1`).
        col("b1", "BIT(1)", |r| maybe(r, |r| r.below(2).to_string())),
    ],
};

/// Text values of `ci` and `cs`: case, Unicode, spaces, quotes.
const WORDS: [&str; 8] = ["Hello", "hello", "WORLD", "Zoë", "zoe", "b c", "it's", "%_"];

/// A value made by `make`, or NULL one time in eight.
fn maybe(r: &mut Rng, make: impl FnOnce(&mut Rng) -> String) -> Val {
    if r.chance(12) {
        Val::Null
    } else {
        Val::Text(make(r))
    }
}

fn date(r: &mut Rng) -> String {
    format!(
        "{}-{:02}-{:02}",
        r.range(2020, 2025),
        r.range(1, 12),
        r.range(1, 28)
    )
}

fn time_of_day(r: &mut Rng) -> String {
    let fraction = if r.chance(50) {
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

/// Bytes as hex digits (the literal is `X'..'`).
fn bytes_hex(r: &mut Rng) -> String {
    let n = r.below(6);
    (0..n)
        .map(|_| {
            let b = *r.pick(&[0x00u8, 0x01, b'\'', b'"', b'\\', b'\n', b'A', 0x7f, 0xff]);
            format!("{b:02x}")
        })
        .collect()
}

fn json_text(r: &mut Rng) -> String {
    (*r.pick(&[
        r#"{"a": 1}"#,
        r#"{"color": "blue", "n": [1, 2]}"#,
        r#""text""#,
        "[1, 2, 3]",
        r#"["x", "y z"]"#,
        "null",
        "12.5",
    ]))
    .to_owned()
}

/// The rows of `my_shapes` for `seed`: each column's raw value (`None`: NULL), the key left out.
fn rows(seed: u64) -> Vec<Vec<Option<String>>> {
    dataset::raw_rows(&SHAPES, seed ^ 0x0035_A9E5, ROWS)
}

/// A MySQL string literal of `text` (quotes and backslashes escaped).
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// The SQL literal of `column`'s raw `value`.
fn literal(column: &str, value: &Option<String>) -> String {
    match (column, value) {
        (_, None) => "NULL".to_owned(),
        ("vb" | "bl", Some(hex)) => format!("X'{hex}'"),
        ("bt" | "b1" | "ub" | "d0" | "flag" | "order", Some(n)) => n.clone(),
        (_, Some(text)) => quote(text),
    }
}

/// The rows of `my nokey ë` (`k`, `name`, `n`) and of `my-comp` (`a`, `b`, `v`) for `seed`.
#[allow(clippy::type_complexity)]
fn key_rows(seed: u64) -> (Vec<(Option<u64>, String, u64)>, Vec<(u64, String, u64)>) {
    let mut r = Rng::new(seed ^ 0x0035_7E75);
    let words = ["ash", "birch", "cedar", "elm", "fir", "oak", "pine", "yew"];
    let nokey = (0..KEY_ROWS)
        .map(|i| {
            let k = (!r.chance(12)).then(|| r.below(9));
            (k, format!("{}{i}", r.pick(&words)), r.below(50))
        })
        .collect();
    let comp = (0..KEY_ROWS)
        .map(|i| (r.below(10), format!("{}{i}", r.pick(&words)), r.below(40)))
        .collect();
    (nokey, comp)
}

/// The script that makes `my_shapes`, the key shapes and their rows (run after the dataset's).
pub fn sql(seed: u64) -> String {
    let mut out = String::from("BEGIN;\n");
    let decls: Vec<String> = SHAPES
        .columns
        .iter()
        .map(|c| format!("`{}` {}", c.name, c.pg))
        .collect();
    out.push_str(&format!(
        "CREATE TABLE my_shapes ({}) DEFAULT CHARSET = utf8mb4;\n",
        decls.join(", ")
    ));
    let names: Vec<String> = SHAPES.columns[1..]
        .iter()
        .map(|c| format!("`{}`", c.name))
        .collect();
    for row in rows(seed) {
        let values: Vec<String> = SHAPES.columns[1..]
            .iter()
            .zip(&row)
            .map(|(c, v)| literal(c.name, v))
            .collect();
        out.push_str(&format!(
            "INSERT INTO my_shapes ({}) VALUES ({});\n",
            names.join(", "),
            values.join(", ")
        ));
    }
    let (nokey, comp) = key_rows(seed);
    out.push_str(
        "CREATE TABLE `my nokey ë` (k INT, name VARCHAR(20), n INT);\n\
         CREATE TABLE `my-comp` (a INT, b VARCHAR(20), v INT, PRIMARY KEY (a, b));\n",
    );
    for (k, name, n) in nokey {
        let k = k.map_or("NULL".to_owned(), |k| k.to_string());
        out.push_str(&format!(
            "INSERT INTO `my nokey ë` VALUES ({k}, '{name}', {n});\n"
        ));
    }
    for (a, b, v) in comp {
        out.push_str(&format!(
            "INSERT INTO `my-comp` VALUES ({a}, '{b}', {v});\n"
        ));
    }
    out.push_str("CREATE VIEW my_comp_view AS SELECT a, b, v FROM `my-comp` WHERE v > 15;\n");
    out.push_str("CREATE TABLE my_zero_dates (id INT PRIMARY KEY, zd DATETIME);\n");
    for (i, zd) in ZERO_DATE_ROWS.iter().enumerate() {
        out.push_str(&format!(
            "INSERT INTO my_zero_dates VALUES ({}, '{zd}');\n",
            i + 1
        ));
    }
    out.push_str(&families::sql(seed, Backend::Mysql));
    out.push_str(&rounded_keys::sql(seed, Backend::Mysql));
    out.push_str("COMMIT;\n");
    out
}

/// A read of one key shape ([`requests::key_shape_read`]).
fn key_request(r: &mut Rng) -> Request {
    requests::key_shape_read(r, &KEY_SHAPES)
}

/// Columns by index in [`SHAPES`].
fn index(name: &str) -> usize {
    SHAPES
        .columns
        .iter()
        .position(|c| c.name == name)
        .unwrap_or(0)
}

/// The columns filters name.
const FILTERED: [&str; 20] = [
    "md", "st", "bt", "yr", "ub", "j", "d4", "d0", "dt", "ts", "flag", "tm", "vb", "bl", "c", "ci",
    "cs", "order", "Mixed", "b1",
];

/// One filter the engine answers (`2xx`) for a column of `my_shapes`.
fn filter(r: &mut Rng, data: &[Vec<Option<String>>]) -> (String, String) {
    let name = *r.pick(&FILTERED);
    let i = index(name);
    let negate = if r.chance(15) { "exclude__" } else { "" };
    let value = data[r.below(data.len() as u64) as usize][i - 1].clone();
    let flag = (*r.pick(&["1", "0", "true", "false"])).to_owned();
    let (lookup, value) = match (name, value) {
        (_, None) | ("vb" | "bl" | "bt", _) => ("isnull".to_owned(), flag),
        ("st", Some(v)) if v.is_empty() => ("isnull".to_owned(), flag),
        ("st" | "md", Some(v)) => ((*r.pick(&["exact", "in"])).to_owned(), v),
        // The engine reads `JSON`, `YEAR` and `TIME` as text fields: comparisons and
        // `json_icontains` are lookups it ignores (the emulator refuses them), so only
        // `exact` and `in` are careful requests.
        ("j", Some(_)) => {
            let word = *r.pick(&["text", "blue", "y z", "x"]);
            ((*r.pick(&["exact", "in"])).to_owned(), word.to_owned())
        }
        ("yr" | "tm", Some(v)) => ((*r.pick(&["exact", "in"])).to_owned(), v),
        ("ub" | "d4" | "d0" | "order", Some(v)) => {
            ((*r.pick(&["exact", "gt", "lte", "in"])).to_owned(), v)
        }
        ("flag", Some(v)) => ("exact".to_owned(), v),
        ("b1", Some(_)) => ("exact".to_owned(), flag),
        ("dt" | "ts", Some(v)) => {
            let day = v.get(..10).unwrap_or(&v).to_owned();
            ((*r.pick(&["gte", "lt"])).to_owned(), day)
        }
        (_, Some(v)) => {
            let lookup = *r.pick(&["exact", "icontains", "istartswith", "iendswith", "in"]);
            (lookup.to_owned(), v.trim_end().to_owned())
        }
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
    let (op, query): (Op, Vec<(&str, &str)>) = match r.below(11) {
        0 => (Op::List, vec![("d4", "nan")]),
        1 => (Op::List, vec![("ub__gt", "inf")]),
        2 => (Op::List, vec![("vb", "x")]),
        3 => (Op::List, vec![("bl__icontains", "A")]),
        4 => (Op::Group, vec![("_x_column", "bl"), ("_y_func", "count")]),
        5 => (Op::Group, vec![("_x_column", "vb"), ("_y_func", "count")]),
        6 => (Op::Aggregate, vec![("_y_func", "sum"), ("_y_column", "dt")]),
        7 => (Op::Aggregate, vec![("_y_func", "sum"), ("_y_column", "st")]),
        8 => (Op::Aggregate, vec![("_y_func", "sum"), ("_y_column", "bt")]),
        9 => (Op::Aggregate, vec![("_y_func", "sum"), ("_y_column", "vb")]),
        _ => (
            Op::Group,
            vec![("_x_column", "md"), ("_y_func", "sum"), ("_y_column", "st")],
        ),
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

/// One request over `my_shapes` or a key shape for the generator's `seed`, a mistake
/// `mistakes` times per thousand.
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
    if r.chance(4) {
        return zero_date_request(r);
    }
    let data = rows(seed);
    let data = data.as_slice();
    let mut query: Vec<(String, String)> = Vec::new();
    let mut pk = None;
    let op = match r.below(100) {
        0..35 => {
            for _ in 0..r.below(3) {
                query.push(filter(r, data));
            }
            if r.chance(25) {
                let word = *r.pick(&["hello", "zoë", "b c", "12", "happy", "blue", "1"]);
                query.push(("_search".to_owned(), word.to_owned()));
            }
            if r.chance(50) {
                let name = *r.pick(&[
                    "id", "md", "yr", "ub", "d4", "d0", "dt", "ts", "flag", "tm", "c", "ci", "cs",
                    "order", "Mixed",
                ]);
                let dir = if r.chance(50) { "-" } else { "" };
                query.push(("_order_by".to_owned(), format!("{dir}{name}")));
            }
            query.push(("_per_page".to_owned(), r.range(3, 15).to_string()));
            if r.chance(40) {
                query.push(("page".to_owned(), r.range(1, 4).to_string()));
            }
            Op::List
        }
        35..45 => {
            query.push(("_no_pagination".to_owned(), "1".to_owned()));
            query.push(filter(r, data));
            Op::List
        }
        45..55 => {
            pk = Some(r.range(1, ROWS as i64 + 2).to_string());
            Op::Retrieve
        }
        55..75 => {
            let (func, column) = *r.pick(&[
                ("count", "id"),
                ("nosuch", "c"),
                ("sum", "ub"),
                ("avg", "ub"),
                ("max", "ub"),
                ("sum", "d4"),
                ("avg", "d4"),
                ("min", "d4"),
                ("sum", "d0"),
                ("max", "d0"),
                ("min", "yr"),
                ("max", "dt"),
                ("min", "ts"),
                ("sum", "flag"),
                ("max", "tm"),
                ("min", "c"),
                ("max", "ci"),
                ("min", "cs"),
                ("min", "md"),
                ("sum", "order"),
                ("max", "Mixed"),
                ("count", "st"),
                ("max", "st"),
                ("min", "st"),
                ("avg", "st"),
                ("max", "bt"),
                ("min", "bt"),
                ("count", "b1"),
                ("avg", "bt"),
                ("max", "vb"),
                ("min", "bl"),
                ("max", "bl"),
                ("avg", "vb"),
                ("sum", "md"),
                ("avg", "md"),
            ]);
            query.push(("_y_func".to_owned(), func.to_owned()));
            query.push(("_y_column".to_owned(), column.to_owned()));
            if r.chance(50) {
                query.push(filter(r, data));
            }
            Op::Aggregate
        }
        _ => {
            let (x, lookup) = *r.pick(&[
                ("md", ""),
                ("yr", ""),
                ("ub", ""),
                ("d4", ""),
                ("d0", ""),
                ("flag", ""),
                ("tm", ""),
                ("c", ""),
                ("ci", ""),
                ("cs", ""),
                ("order", ""),
                ("Mixed", ""),
                ("dt", "date_day"),
                ("dt", "date_month"),
                ("ts", "date_week"),
                ("ts", "date_year"),
                ("dt", ""),
                ("st", ""),
                ("bt", ""),
                ("j", ""),
                ("tm", ""),
            ]);
            query.push(("_x_column".to_owned(), x.to_owned()));
            if !lookup.is_empty() {
                query.push(("_x_lookup".to_owned(), lookup.to_owned()));
            }
            let (func, y) = *r.pick(&[
                ("count", "id"),
                ("sum", "ub"),
                ("max", "c"),
                ("avg", "d4"),
                ("sum", "order"),
                ("max", "st"),
                ("max", "bt"),
                ("avg", "st"),
                ("sum", "md"),
            ]);
            query.push(("_y_func".to_owned(), func.to_owned()));
            query.push(("_y_column".to_owned(), y.to_owned()));
            Op::Group
        }
    };
    Request {
        wire: Wire::default(),
        op,
        table: &SHAPES,
        pk,
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
            "ENUM(",
            "SET(",
            "BIT(4)",
            "YEAR",
            "BIGINT UNSIGNED",
            "JSON",
            "DECIMAL(12, 4)",
            "DATETIME(6)",
            "TIMESTAMP(3)",
            "TINYINT(1)",
            "TIME",
            "VARBINARY",
            "BLOB",
            "CHAR(4)",
            "utf8mb4_general_ci",
            "PRIMARY KEY (a, b)",
            "CREATE VIEW",
        ] {
            assert!(script.contains(ty), "{ty}");
        }
        assert_eq!(script.matches("INSERT INTO my_shapes").count(), ROWS);
    }

    #[test]
    fn set_values_of_several_members_are_stored() {
        let st = index("st") - 1;
        let several = (1..=5)
            .flat_map(rows)
            .filter(|row| row[st].as_deref().unwrap_or("").contains(','))
            .count();
        assert!(several > 5, "{several}");
    }

    #[test]
    fn requests_are_deterministic_and_name_the_tables_columns() {
        let make = || {
            let mut r = Rng::new(7);
            (0..300).map(|_| request(&mut r, 7, 30)).collect::<Vec<_>>()
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
