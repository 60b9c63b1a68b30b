//! Keys the column stores as another value, on every database: writes whose key value the
//! column rounds or truncates, and the reads that show what each side stored.
//!
//! Two small tables per database, keyed on a column that does not store every value it is
//! given as given:
//!
//! | Table | SQLite | PostgreSQL | MariaDB |
//! | --- | --- | --- | --- |
//! | `rk_stamps` | `k DATETIME PRIMARY KEY, v TEXT` | `k timestamp(0) PRIMARY KEY, v text` | `k DATETIME(0) PRIMARY KEY, v VARCHAR(20)` |
//! | `rk_numbers` | `k NUMERIC(10,2) PRIMARY KEY, v TEXT` | `k numeric(10,2) PRIMARY KEY, v text` | `k DECIMAL(10,2) PRIMARY KEY, v VARCHAR(20)` |
//!
//! The engine commits a create (or an update that sets the key), then reads the record back by
//! the key values it was given, bound as its driver writes them. Where the column rounded
//! (PostgreSQL's `timestamp(0)` and `numeric`, MariaDB's `DECIMAL`) or truncated (MariaDB's
//! `DATETIME(0)`) the key, nothing matches and the engine answers 500 after its commit. The
//! emulator refuses those writes with a 400 marked `stricter` (nothing stored) in strict mode,
//! and stores them and answers 500 in lenient mode. SQLite stores the values as given (a
//! date-time in SQLAlchemy's text form, a number with `NUMERIC` affinity): the engine should
//! answer 201/200 there.
//!
//! Requests ([`request`], about three in a hundred of the main generator's): creates with fresh
//! keys (date-times `2024-01-0DTHH:MM:SS` with and without fractional seconds, one in ten with
//! an offset as well, which the column stores as another wall time; numbers with two and three
//! decimals, as JSON numbers and as strings; now and then a fraction that rounds onto a key
//! that exists), a `PATCH` setting an existing row's key to such a value, a `PATCH`
//! setting only `v`, retrieves (of a key as stored, as given with its fraction, or unknown) and
//! whole lists in key order, which show the stored state after each write. The writes leave the
//! databases apart in strict mode; the tables are in the resync's copy, and a resync after a
//! write to them copies only them (no foreign key joins them to the others), so that the other
//! tables keep the layout both servers gave them (a copy rewrites a table: PostgreSQL then
//! scans its rows in another order, and a float sum over them rounds otherwise).
//!
//! Fresh date-times are made on even seconds: PostgreSQL's rounding of a fraction moves a key
//! to an odd second, MariaDB's truncation back to its own even one, so no write collides with
//! another key unless it is meant to. Fresh numbers have their own whole part and hundredths
//! below 99, so a third decimal never carries.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::dataset::{Backend, Column, Kind, Table, Val};
use super::requests::{Op, Request, Rng, Wire};

/// Seed rows per table.
const SEED_ROWS: usize = 5;

const fn col(name: &'static str, kind: Kind) -> Column {
    Column {
        name,
        // Declared by [`sql`], per database.
        decl: "",
        pg: "",
        kind,
        make: |_| Val::Null,
    }
}

/// `rk_stamps (k date-time PRIMARY KEY, v text)`: a key without fractional seconds (but on
/// SQLite, which stores the text as given).
pub static STAMPS: Table = Table {
    name: "rk_stamps",
    rows: SEED_ROWS,
    text_pk: false,
    columns: &[col("k", Kind::DateTime), col("v", Kind::Text)],
};

/// `rk_numbers (k numeric(10,2) PRIMARY KEY, v text)`: a key of two decimals.
pub static NUMBERS: Table = Table {
    name: "rk_numbers",
    rows: SEED_ROWS,
    text_pk: false,
    columns: &[col("k", Kind::Numeric), col("v", Kind::Text)],
};

/// The offsets a fresh date-time key is now and then sent with: the column has no zone, and
/// stores another wall time where the database's zone is not the offset's (the engine converts
/// an aware date-time to the database's zone for MariaDB's `DATETIME`; psycopg2 sends it to
/// PostgreSQL as a `timestamptz`, which the `timestamp` column takes in the session's zone).
const OFFSETS: [&str; 3] = ["Z", "+02:00", "-05:00"];

/// The shifts (in seconds) a key sent with one of [`OFFSETS`] may be stored at, in a database
/// in `UTC` or in `America/New_York` (in January: UTC-5).
const SHIFTS: [i64; 5] = [0, -7_200, 18_000, -18_000, -25_200];

/// The tables' names, for the resync's copy.
pub const TABLE_NAMES: &[&str] = &["rk_stamps", "rk_numbers"];

/// A whole date-time key: `2024-01-0{day} {hour}:{minute}:{second}`, `second` even.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    day: u64,
    hour: u64,
    minute: u64,
    second: u64,
}

impl Stamp {
    fn draw(r: &mut Rng) -> Stamp {
        Stamp {
            day: r.range(1, 9) as u64,
            hour: r.below(24),
            minute: r.below(60),
            second: 2 * r.below(30),
        }
    }

    /// Its seconds since 2023-12-31 00:00 (day 0), shifted by `shift` seconds.
    fn instant(&self, shift: i64) -> i64 {
        let (day, hour) = (self.day as i64, self.hour as i64);
        ((day * 24 + hour) * 60 + self.minute as i64) * 60 + self.second as i64 + shift
    }

    /// `2024-01-0DTHH:MM:SS`, as requests send it.
    fn iso(&self) -> String {
        format!(
            "2024-01-0{}T{:02}:{:02}:{:02}",
            self.day, self.hour, self.minute, self.second
        )
    }
}

/// A whole numeric key: `{whole}.{cents:02}`, `cents` below 99.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Number {
    whole: u64,
    cents: u64,
}

impl Number {
    fn text(&self) -> String {
        format!("{}.{:02}", self.whole, self.cents)
    }
}

/// The seed rows: (stamps, numbers, whether each stamp is stored on SQLite without the
/// fraction SQLAlchemy writes), each with its `v`.
#[allow(clippy::type_complexity)]
fn seed_rows(seed: u64) -> (Vec<(Stamp, bool, String)>, Vec<(Number, String)>) {
    let mut r = Rng::new(seed ^ 0x0052_CE75);
    let mut stamps: Vec<(Stamp, bool, String)> = Vec::new();
    // One row stored on SQLite as other tools write it (no fraction): SQLAlchemy writes six
    // digits, and binds them when it looks the key up (the engine finds no such record).
    let bare_at = r.below(SEED_ROWS as u64) as usize;
    while stamps.len() < SEED_ROWS {
        let stamp = Stamp::draw(&mut r);
        let bare = stamps.len() == bare_at;
        let v = format!("{}{}", r.pick(WORDS), stamps.len());
        if !stamps.iter().any(|(s, _, _)| *s == stamp) {
            stamps.push((stamp, bare, v));
        }
    }
    let mut numbers: Vec<(Number, String)> = Vec::new();
    while numbers.len() < SEED_ROWS {
        let number = Number {
            whole: r.range(1, 9999) as u64,
            cents: r.below(99),
        };
        let v = format!("{}{}", r.pick(WORDS), numbers.len());
        if !numbers.iter().any(|(n, _)| n.whole == number.whole) {
            numbers.push((number, v));
        }
    }
    (stamps, numbers)
}

/// Values of `v`.
const WORDS: &[&str] = &["ash", "Zoë", "b c", "it's", "50%", "oak"];

/// The script that creates and fills both tables for `seed`, in `backend`'s words (inside the
/// caller's transaction).
pub fn sql(seed: u64, backend: Backend) -> String {
    let (stamp, number, text) = match backend {
        Backend::Sqlite => ("DATETIME", "NUMERIC(10,2)", "TEXT"),
        Backend::Postgres => ("timestamp(0)", "numeric(10,2)", "text"),
        Backend::Mysql => ("DATETIME(0)", "DECIMAL(10,2)", "VARCHAR(20)"),
    };
    let mut out = format!(
        "CREATE TABLE rk_stamps (k {stamp} PRIMARY KEY, v {text});\n\
         CREATE TABLE rk_numbers (k {number} PRIMARY KEY, v {text});\n"
    );
    let quote = |s: &str| format!("'{}'", s.replace('\'', "''"));
    let (stamps, numbers) = seed_rows(seed);
    for (s, bare, v) in &stamps {
        let mut k = s.iso().replacen('T', " ", 1);
        if backend == Backend::Sqlite && !bare {
            // SQLAlchemy's SQLite form, as the engine writes it.
            k.push_str(".000000");
        }
        out.push_str(&format!(
            "INSERT INTO rk_stamps (k, v) VALUES ({}, {});\n",
            quote(&k),
            quote(v)
        ));
    }
    for (n, v) in &numbers {
        out.push_str(&format!(
            "INSERT INTO rk_numbers (k, v) VALUES ({}, {});\n",
            n.text(),
            quote(v)
        ));
    }
    out
}

/// The generator's idea of the tables' keys.
#[derive(Debug)]
pub struct Keys {
    /// Whole keys believed stored, as requests send them.
    stamps: Vec<String>,
    numbers: Vec<String>,
    /// Keys written with a fraction or a third decimal, as given (stored so on SQLite only).
    given: Vec<(&'static Table, String)>,
    /// Every key drawn so far (as [`Stamp::instant`], at each shift an offset may bring it
    /// to: [`SHIFTS`]), so that a fresh one is fresh.
    used_stamps: BTreeSet<i64>,
    used_wholes: BTreeSet<u64>,
}

impl Keys {
    /// The seed rows' keys for `seed`.
    pub fn new(seed: u64) -> Keys {
        let (stamps, numbers) = seed_rows(seed);
        Keys {
            stamps: stamps.iter().map(|(s, _, _)| s.iso()).collect(),
            numbers: numbers.iter().map(|(n, _)| n.text()).collect(),
            given: Vec::new(),
            used_stamps: stamps.iter().map(|(s, _, _)| s.instant(0)).collect(),
            used_wholes: numbers.iter().map(|(n, _)| n.whole).collect(),
        }
    }

    fn live(&mut self, table: &Table) -> &mut Vec<String> {
        if table == &STAMPS {
            &mut self.stamps
        } else {
            &mut self.numbers
        }
    }

    /// A stamp no key is at, nor (where `shifted`) at any of the shifts an offset brings it
    /// to.
    fn fresh_stamp(&mut self, r: &mut Rng, shifted: bool) -> Stamp {
        let shifts: &[i64] = if shifted { &SHIFTS } else { &[0] };
        loop {
            let stamp = Stamp::draw(r);
            let instants: Vec<i64> = shifts.iter().map(|&s| stamp.instant(s)).collect();
            if instants.iter().all(|i| !self.used_stamps.contains(i)) {
                self.used_stamps.extend(instants);
                return stamp;
            }
        }
    }

    fn fresh_number(&mut self, r: &mut Rng) -> Number {
        loop {
            let number = Number {
                whole: r.range(1, 99_999) as u64,
                cents: r.below(99),
            };
            if self.used_wholes.insert(number.whole) {
                return number;
            }
        }
    }

    /// The body of a create or an update of `table`: a key of [`write_key`](Self::write_key),
    /// remembered as live or only given, and a value `v` `v_chance` times in a hundred.
    fn key_body(&mut self, r: &mut Rng, table: &'static Table, v_chance: u64) -> Value {
        let (key, whole) = self.write_key(r, table);
        let mut body = serde_json::Map::new();
        body.insert("k".to_owned(), key.clone());
        if r.chance(v_chance) {
            body.insert("v".to_owned(), word(r));
        }
        match whole {
            Some(whole) => self.live(table).push(whole),
            None => self.given.push((table, key_text(&key))),
        }
        Value::Object(body)
    }

    /// A key value for a write to `table` and whether every database stores it as given (then
    /// it is live afterwards, under the text of [`Stamp::iso`] or [`Number::text`]): a fresh
    /// key, whole or not, or (one time in ten) an existing key with a fraction that rounds and
    /// truncates onto it.
    fn write_key(&mut self, r: &mut Rng, table: &Table) -> (Value, Option<String>) {
        let existing = (!self.live(table).is_empty() && r.chance(10))
            .then(|| r.pick(self.live(table)).clone());
        if table == &STAMPS {
            // One fresh key in ten with an offset (see [`OFFSETS`]).
            let offset = existing.is_none() && r.chance(10);
            let (base, fresh) = match existing {
                Some(key) => (key, false),
                None => (self.fresh_stamp(r, offset).iso(), true),
            };
            let fraction = match (fresh, r.below(100)) {
                // Below half a second: rounded and truncated onto the key itself.
                (false, _) => format!(".{}", r.range(1, 4)),
                (true, 0..40) => String::new(),
                (true, 40..50) => (*r.pick(&[".0", ".000", ".000000"])).to_owned(),
                (true, _) => {
                    let digits = r.range(1, 6) as usize;
                    let mut f = r.range(1, 10_i64.pow(digits as u32) - 1).to_string();
                    while f.len() < digits {
                        f.insert(0, '0');
                    }
                    format!(".{f}")
                }
            };
            let whole = fresh
                && !offset
                && fraction
                    .trim_start_matches('.')
                    .trim_matches('0')
                    .is_empty();
            let zone = if offset { *r.pick(&OFFSETS) } else { "" };
            let key = format!("{base}{fraction}{zone}");
            (json!(key), whole.then_some(base))
        } else {
            let (base, fresh) = match existing {
                Some(key) => (key, false),
                None => (self.fresh_number(r).text(), true),
            };
            let (text, whole) = match (fresh, r.below(100)) {
                // A third decimal below 5: rounded onto the key itself.
                (false, _) => (format!("{base}{}", r.range(1, 4)), false),
                (true, 0..40) => (base.clone(), true),
                (true, 40..50) => (format!("{base}0"), true),
                (true, _) => (format!("{base}{}", r.range(1, 9)), false),
            };
            // As a JSON number or a string (a number keeps its digits: no binary noise in
            // `{whole}.{cents}{third}` below 2^53).
            let value = if r.chance(50) {
                text.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or_else(|| json!(text), Value::Number)
            } else {
                json!(text)
            };
            (value, whole.then_some(base))
        }
    }
}

/// A key value sent in a body, as a path names it.
fn key_text(key: &Value) -> String {
    key.as_str().map_or_else(|| key.to_string(), str::to_owned)
}

/// A value of `v`.
fn word(r: &mut Rng) -> Value {
    json!(format!("{}{}", r.pick(WORDS), r.below(100)))
}

/// A key of `table` for a path: mostly a live one (a date-time now and then with a space for
/// the `T`), sometimes one written with a fraction (as given), sometimes one never stored.
fn path_key(r: &mut Rng, keys: &mut Keys, table: &'static Table) -> String {
    let given: Vec<String> = keys
        .given
        .iter()
        .filter(|(t, _)| *t == table)
        .map(|(_, k)| k.clone())
        .collect();
    let roll = r.below(100);
    let key = match roll {
        0..75 if !keys.live(table).is_empty() => r.pick(keys.live(table)).clone(),
        75..90 if !given.is_empty() => r.pick(&given).clone(),
        _ if table == &STAMPS => "2024-01-09T23:59:59".to_owned(),
        _ => "0.01".to_owned(),
    };
    if table == &STAMPS && r.chance(20) {
        key.replacen('T', " ", 1)
    } else {
        key
    }
}

/// One request over the tables (see the module's documentation).
pub fn request(r: &mut Rng, keys: &mut Keys) -> Request {
    let table: &'static Table = if r.chance(50) { &STAMPS } else { &NUMBERS };
    let mut request = Request {
        wire: Wire::default(),
        op: Op::List,
        table,
        pk: None,
        query: Vec::new(),
        body: None,
    };
    let roll = r.below(100);
    let has_live = !keys.live(table).is_empty();
    match roll {
        0..35 => {
            request.op = Op::Create;
            request.body = Some(keys.key_body(r, table, 85));
        }
        35..55 if has_live => {
            // The row moves: its old key is gone on every database.
            let at = r.below(keys.live(table).len() as u64) as usize;
            let old = keys.live(table).swap_remove(at);
            request.op = Op::Patch;
            request.pk = Some(old);
            request.body = Some(keys.key_body(r, table, 30));
        }
        55..70 => {
            request.op = Op::Patch;
            request.pk = Some(path_key(r, keys, table));
            request.body = Some(json!({"v": word(r)}));
        }
        70..85 => {
            request.op = Op::Retrieve;
            request.pk = Some(path_key(r, keys, table));
        }
        _ => {
            // In the engine's order (the key's, descending), or by `-k`; now and then by `k`,
            // a one-character `_order_by`, with which the engine lists nothing.
            request.query = vec![("_per_page".to_owned(), "100".to_owned())];
            match r.below(10) {
                0..6 => {}
                6..9 => request
                    .query
                    .push(("_order_by".to_owned(), "-k".to_owned())),
                _ => request.query.push(("_order_by".to_owned(), "k".to_owned())),
            }
        }
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_follow_the_seed_in_each_databases_types() {
        assert_eq!(sql(3, Backend::Postgres), sql(3, Backend::Postgres));
        assert_ne!(sql(3, Backend::Postgres), sql(4, Backend::Postgres));
        let pg = sql(3, Backend::Postgres);
        assert!(pg.contains("rk_stamps (k timestamp(0) PRIMARY KEY, v text)"));
        assert!(pg.contains("rk_numbers (k numeric(10,2) PRIMARY KEY, v text)"));
        let my = sql(3, Backend::Mysql);
        assert!(my.contains("rk_stamps (k DATETIME(0) PRIMARY KEY, v VARCHAR(20))"));
        assert!(my.contains("rk_numbers (k DECIMAL(10,2) PRIMARY KEY, v VARCHAR(20))"));
        let lite = sql(3, Backend::Sqlite);
        assert!(lite.contains("rk_stamps (k DATETIME PRIMARY KEY, v TEXT)"));
        assert!(lite.contains("rk_numbers (k NUMERIC(10,2) PRIMARY KEY, v TEXT)"));
        for script in [&pg, &my, &lite] {
            assert_eq!(script.matches("INSERT INTO rk_stamps").count(), SEED_ROWS);
            assert_eq!(script.matches("INSERT INTO rk_numbers").count(), SEED_ROWS);
        }
        // One seed date-time stored on SQLite without SQLAlchemy's six digits.
        assert_eq!(lite.matches(".000000'").count(), SEED_ROWS - 1);
        assert!(!pg.contains(".000000'"));
    }

    #[test]
    fn requests_write_each_kind_of_key_and_read_the_tables() {
        let make = || {
            let mut r = Rng::new(11);
            let mut keys = Keys::new(11);
            (0..400)
                .map(|_| request(&mut r, &mut keys))
                .collect::<Vec<_>>()
        };
        let requests = make();
        assert_eq!(requests, make());
        let keys_sent: Vec<&Value> = requests
            .iter()
            .filter_map(|q| q.body.as_ref()?.get("k"))
            .collect();
        let text = key_text;
        // Date-times with and without a fraction.
        assert!(keys_sent.iter().any(|k| text(k).len() == 19));
        assert!(
            keys_sent
                .iter()
                .any(|k| text(k).contains('T') && text(k).contains('.'))
        );
        // Now and then with an offset.
        assert!(keys_sent.iter().any(|k| {
            let k = text(k);
            k.ends_with('Z') || k.ends_with("+02:00") || k.ends_with("-05:00")
        }));
        // Numbers with two and three decimals, as JSON numbers and as strings.
        let decimals = |k: &Value| text(k).split_once('.').map_or(0, |(_, d)| d.len());
        for places in [2, 3] {
            assert!(
                keys_sent
                    .iter()
                    .any(|k| k.is_number() && decimals(k) == places)
            );
            assert!(
                keys_sent
                    .iter()
                    .any(|k| k.is_string() && !text(k).contains('T') && decimals(k) == places)
            );
        }
        for op in [Op::Create, Op::Patch, Op::Retrieve, Op::List] {
            for table in [&STAMPS, &NUMBERS] {
                assert!(
                    requests.iter().any(|q| q.op == op && q.table == table),
                    "{op:?} {}",
                    table.name
                );
            }
        }
        // A PATCH that sets only `v`, and one that sets the key.
        assert!(requests.iter().any(|q| q.op == Op::Patch
            && q.body.as_ref().is_some_and(|b| b.get("k").is_none())));
        assert!(requests.iter().any(|q| q.op == Op::Patch
            && q.body.as_ref().is_some_and(|b| b.get("k").is_some())));
        // Fresh keys are fresh: no create repeats a whole key but on purpose (a fraction onto
        // an existing key).
        let whole_creates: Vec<String> = requests
            .iter()
            .filter(|q| q.op == Op::Create)
            .filter_map(|q| q.body.as_ref()?.get("k").map(text))
            .filter(|k| k.len() == 19)
            .collect();
        let unique: BTreeSet<&String> = whole_creates.iter().collect();
        assert_eq!(unique.len(), whole_creates.len());
    }
}
