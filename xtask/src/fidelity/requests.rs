//! The randomized requests, deterministic from the seed (a tiny xorshift, no rand crate).
//!
//! All of them are made up front, without looking at any answer: the generator keeps its own
//! idea of which primary keys exist (the initial rows, plus the rowid SQLite gives a create,
//! minus deletes), so both servers get the same requests in the same order.
//!
//! On PostgreSQL (`--postgres`) the generator also uses the JSON column, and it leaves out of the
//! careful requests what the engine fails on there but not on SQLite: `icontains` on a number or
//! date column (PostgreSQL has no `ILIKE` for them), `sum`/`avg` of a non-number and `min`/`max`
//! of a boolean or JSON column (no such functions), and a JSON filter value that reads as a
//! number. Those are caller mistakes on PostgreSQL (see [`add_mistake`]). A date `in` key with a
//! comma list is given once there ([`keep_date_lists_whole`]), and half the PUTs carry every NOT
//! NULL column ([`complete_put`]), which the engine requires on PostgreSQL.
//!
//! On every database about three requests in a hundred, drawn from a generator of their own,
//! write and read two small tables whose key column stores some values as others (a date-time
//! or numeric key rounded or truncated: `rounded_keys.rs`).

use serde_json::{Value, json};

use super::dataset::{self, Backend, Column, JSON_WORDS, Kind, TABLES, Table, Val};
pub use super::wire::Wire;

/// xorshift64*: small, fast, and the same on every platform.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let s = seed ^ 0x9E37_79B9_7F4A_7C15;
        Rng(if s == 0 { 1 } else { s })
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// In `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// In `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// True with `percent` % probability.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    List,
    Aggregate,
    Group,
    Retrieve,
    Create,
    Patch,
    Put,
    Delete,
}

/// Asserts that a generator of requests draws unknown aggregate functions (`_y_func=nosuch`,
/// whose answer is the query's text in the database's dialect) now and then.
#[cfg(test)]
pub fn assert_draws_unknown_functions(mut request: impl FnMut(&mut Rng) -> Request) {
    let mut r = Rng::new(7);
    let unknown = (0..3000)
        .map(|_| request(&mut r))
        .filter(|q| q.query.iter().any(|(k, v)| k == "_y_func" && v == "nosuch"))
        .count();
    assert!(unknown > 3, "{unknown}");
}

impl Op {
    /// The name that starts every difference class of this kind of request.
    pub fn name(self) -> &'static str {
        match self {
            Op::List => "list",
            Op::Aggregate => "aggregate",
            Op::Group => "group",
            Op::Retrieve => "retrieve",
            Op::Create => "create",
            Op::Patch => "update (PATCH)",
            Op::Put => "update (PUT)",
            Op::Delete => "delete",
        }
    }

    pub fn method(self) -> &'static str {
        match self {
            Op::List | Op::Aggregate | Op::Group | Op::Retrieve => "GET",
            Op::Create => "POST",
            Op::Patch => "PATCH",
            Op::Put => "PUT",
            Op::Delete => "DELETE",
        }
    }
}

/// One request, in terms both servers understand.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub op: Op,
    pub table: &'static Table,
    pub pk: Option<String>,
    pub query: Vec<(String, String)>,
    pub body: Option<Value>,
    /// How it is sent (`wire.rs`): the route, headers and the body's spelling.
    pub wire: Wire,
}

impl Request {
    /// `?a=1&b=2`, percent-encoded, in the generated order; empty without parameters.
    pub fn query_string(&self) -> String {
        if self.query.is_empty() {
            return String::new();
        }
        let pairs: Vec<String> = self
            .query
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        format!("?{}", pairs.join("&"))
    }

    /// The part of the path after the model: `""`, `/{pk}`, `/aggregate` or `/group`.
    fn tail(&self) -> String {
        if let Some(action) = self.wire.action {
            return format!("/{action}");
        }
        match (self.op, &self.pk) {
            (Op::Aggregate, _) => "/aggregate".to_owned(),
            (Op::Group, _) => "/group".to_owned(),
            (_, Some(pk)) => format!("/{}", encode(pk)),
            (_, None) => String::new(),
        }
    }

    /// The engine's path and query: `/api/models/{m}/...` with its trailing slash.
    pub fn engine_target(&self) -> String {
        // Encoded: the shape tables' names have spaces, quotes and non-ASCII letters.
        format!(
            "/api/models/{}{}/{}",
            encode(self.model()),
            self.tail(),
            self.query_string()
        )
    }

    /// The model the path names: the table's, or the one `wire` sends instead.
    fn model(&self) -> &'static str {
        self.wire.model.unwrap_or(self.table.name)
    }

    /// The method it is sent with.
    pub fn method(&self) -> &'static str {
        if let Some(method) = self.wire.method {
            method
        } else if self.wire.action.is_some() {
            "POST"
        } else {
            self.op.method()
        }
    }

    /// The body as sent: its content type and bytes.
    pub fn body_bytes(&self) -> Option<(String, Vec<u8>)> {
        if let Some(raw) = &self.wire.raw {
            return Some(raw.clone());
        }
        self.body
            .as_ref()
            .map(|b| ("application/json".to_owned(), b.to_string().into_bytes()))
    }

    /// The emulator's path and query under `prefix` (`/projects/{p}/{env}/{resource}`).
    pub fn emulator_target(&self, prefix: &str) -> String {
        format!(
            "{prefix}/models/{}{}{}",
            encode(self.model()),
            self.tail(),
            self.query_string()
        )
    }
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The lookups the engine declares for a column kind and answers without failing on `backend`.
fn lookups(kind: Kind, backend: Backend) -> &'static [&'static str] {
    match kind {
        Kind::Json => &["exact", "in", "json_icontains", "isnull", "isempty"],
        // `icontains` on a number or date column: `operator does not exist: integer ~~* unknown`.
        _ if backend == Backend::Postgres && kind != Kind::Text && kind != Kind::Boolean => {
            &["exact", "gt", "gte", "lt", "lte", "in", "isnull", "isempty"]
        }
        Kind::Text => &[
            "exact",
            "icontains",
            "istartswith",
            "iendswith",
            "in",
            "isnull",
            "isempty",
        ],
        Kind::Boolean => &["exact", "in", "isnull", "isempty"],
        _ => &[
            "exact",
            "gt",
            "gte",
            "lt",
            "lte",
            "icontains",
            "in",
            "isnull",
            "isempty",
        ],
    }
}

const Y_FUNCS: &[&str] = &["count", "sum", "min", "max", "avg"];
const X_LOOKUPS: &[&str] = &[
    "plain",
    "auto",
    "date_day",
    "date_month",
    "date_year",
    "date_week",
    "date_quarter",
    "date_hour",
];

/// The generator's idea of each table's primary keys.
struct Keys {
    /// Per table (as in [`TABLES`]): the keys believed to exist.
    live: Vec<Vec<String>>,
    /// Per table: keys deleted by an earlier request.
    deleted: Vec<Vec<String>>,
    /// Per table: the rowid SQLite gives the next create (max + 1).
    next_id: Vec<i64>,
    created: usize,
}

impl Keys {
    fn new() -> Keys {
        Keys {
            live: TABLES
                .iter()
                .map(|t| {
                    (1..=t.rows)
                        .map(|i| {
                            if t.text_pk {
                                dataset::code_pk(i)
                            } else {
                                i.to_string()
                            }
                        })
                        .collect()
                })
                .collect(),
            deleted: vec![Vec::new(); TABLES.len()],
            next_id: TABLES.iter().map(|t| t.rows as i64 + 1).collect(),
            created: 0,
        }
    }
}

/// The share of read requests, in per mille, that carry one caller mistake by default: a
/// filter on a field the model lacks, a lookup the field's type lacks, an unknown `_order_by`
/// field, a malformed or partial date, a boolean word outside the engine's sets, or `sum` of a
/// text column. The engine ignores, misreads or fails on these; strict mode refuses them with a
/// 400 `[decision: stricter]`, lenient mode answers like the engine.
pub const DEFAULT_MISTAKES_PER_MILLE: u64 = 3;

/// `n` requests for `seed` over `backend`'s tables, with `mistakes` per mille of the read
/// requests carrying one caller mistake ([`DEFAULT_MISTAKES_PER_MILLE`]).
pub fn generate(seed: u64, n: usize, mistakes: u64, backend: Backend) -> Vec<Request> {
    let mut rng = Rng::new(seed);
    let mut keys = Keys::new();
    // On PostgreSQL (MySQL), about one request in six is over the types of `pg_shapes`
    // (`my_shapes`), drawn from a
    // generator of its own so that the others stay those of the seed.
    let mut shapes = Rng::new(seed ^ 0x0005_A9E5);
    // About one list, aggregate or group in thirty-three gets a declared filter (`_m2m`,
    // `_segment`, `_semantic_search`), drawn from a generator of its own too.
    let mut declared = Rng::new(seed ^ 0x0000_0A2A);
    // About three requests in a hundred write or read the tables whose key column stores a
    // value as another (`rounded_keys`), drawn from a generator of their own too.
    let mut keyed = Rng::new(seed ^ 0x0000_4B3D);
    let mut keyed_keys = super::rounded_keys::Keys::new(seed);
    (0..n)
        .map(|_| {
            if keyed.below(100) < 3 {
                return super::rounded_keys::request(&mut keyed, &mut keyed_keys);
            }
            if backend == Backend::Postgres && shapes.below(100) < 16 {
                return super::pg_shapes::request(&mut shapes, seed, mistakes);
            }
            if backend == Backend::Mysql && shapes.below(100) < 16 {
                return super::my_shapes::request(&mut shapes, seed, mistakes);
            }
            let mut request = one(&mut rng, &mut keys, backend);
            if rng.below(1000) < mistakes {
                add_mistake(&mut rng, &mut request, backend);
            }
            if matches!(request.op, Op::List | Op::Aggregate | Op::Group) && declared.below(100) < 3
            {
                request
                    .query
                    .push(declared_filter(&mut declared, request.table));
            }
            request
        })
        .collect()
}

/// One of the engine's declared filters beside `_search`, `_order_by` and `_relation`, with a
/// value of each class it reads: `_m2m` empty (no filter), without a comma (no record), with
/// one (the engine fails on a model with foreign keys, selects nothing on the others) or two
/// (it fails); `_segment` (it fails unless empty); `_semantic_search` as text (no filter) or
/// JSON (it fails).
fn declared_filter(rng: &mut Rng, table: &Table) -> (String, String) {
    let (name, value) = match rng.below(9) {
        0 => ("_m2m", String::new()),
        1 => ("_m2m", table.name.to_owned()),
        2 => ("_m2m", format!("nosuch_table,{}", rng.range(1, 5))),
        3 => ("_m2m", format!(",{}", rng.range(1, 5))),
        4 => ("_m2m", format!("{},1,2", table.name)),
        5 => ("_segment", "recent".to_owned()),
        6 => ("_segment", String::new()),
        7 => ("_semantic_search", "text".to_owned()),
        _ => ("_semantic_search", "{}".to_owned()),
    };
    (name.to_owned(), value)
}

/// Adds one caller mistake to a list, aggregate or group request (writes are left alone).
fn add_mistake(rng: &mut Rng, request: &mut Request, backend: Backend) {
    let table = request.table;
    let of = |kind: fn(Kind) -> bool| -> Vec<&'static Column> {
        table
            .columns_in(backend)
            .into_iter()
            .filter(|c| kind(c.kind))
            .collect()
    };
    let numbers = of(|k| k.is_number());
    let texts = of(|k| k == Kind::Text);
    let dates = of(|k| k.is_date());
    let booleans = of(|k| k == Kind::Boolean);
    let mut mistakes: Vec<(String, String)> = vec![
        ("nosuch".to_owned(), "1".to_owned()),
        ("nosuch__in".to_owned(), "1,2".to_owned()),
    ];
    if let Some(c) = numbers.first() {
        mistakes.push((format!("{}__istartswith", c.name), "1".to_owned()));
    }
    if let Some(c) = booleans.first() {
        mistakes.push((format!("{}__gt", c.name), "0".to_owned()));
        mistakes.push((c.name.to_owned(), "maybe".to_owned()));
    }
    if let Some(c) = texts.first() {
        mistakes.push((format!("{}__lt", c.name), "m".to_owned()));
    }
    for c in &dates {
        mistakes.push((c.name.to_owned(), "notadate".to_owned()));
        mistakes.push((format!("{}__gte", c.name), "2024-03".to_owned()));
    }
    if backend == Backend::Postgres {
        // The engine answers 500 to these on PostgreSQL only.
        if let Some(c) = numbers.first() {
            mistakes.push((format!("{}__icontains", c.name), "1".to_owned()));
        }
        if let Some(c) = dates.first() {
            mistakes.push((format!("{}__icontains", c.name), "2024".to_owned()));
        }
        if let Some(c) = of(|k| k == Kind::Json).first() {
            mistakes.push((c.name.to_owned(), "1".to_owned()));
        }
    }
    match request.op {
        Op::List => {
            mistakes.push(("_order_by".to_owned(), "nosuch".to_owned()));
            mistakes.push(("_order_by".to_owned(), "-".to_owned()));
        }
        Op::Aggregate | Op::Group => {
            if let Some(c) = dates.first() {
                request
                    .query
                    .retain(|(k, _)| k != "_y_func" && k != "_y_column");
                request.query.push(("_y_func".to_owned(), "sum".to_owned()));
                request
                    .query
                    .push(("_y_column".to_owned(), c.name.to_owned()));
                return;
            }
        }
        _ => return,
    }
    let mistake = rng.pick(&mistakes).clone();
    request.query.push(mistake);
}

fn one(rng: &mut Rng, keys: &mut Keys, backend: Backend) -> Request {
    let t = match rng.below(100) {
        0..45 => 0,
        45..80 => 1,
        _ => 2,
    };
    let table = &TABLES[t];
    let roll = rng.below(100);
    let op = match roll {
        0..60 => Op::List,
        60..68 => Op::Aggregate,
        68..76 => Op::Group,
        76..84 => Op::Retrieve,
        84..91 => Op::Create,
        91..95 => Op::Patch,
        95..97 => Op::Put,
        _ => Op::Delete,
    };
    let mut req = Request {
        wire: Wire::default(),
        op,
        table,
        pk: None,
        query: Vec::new(),
        body: None,
    };
    match op {
        Op::List => req.query = list_query(rng, table, backend),
        Op::Aggregate => {
            req.query = y_params(rng, table, backend);
            filters(rng, table, 2, backend, &mut req.query);
        }
        Op::Group => req.query = group_query(rng, table, backend),
        Op::Retrieve => req.pk = Some(some_pk(rng, keys, t)),
        Op::Create => req.body = Some(create_body(rng, keys, t, backend)),
        Op::Patch | Op::Put => {
            let pk = some_pk(rng, keys, t);
            let mut body = update_body(rng, table, backend);
            if op == Op::Put && backend == Backend::Postgres && rng.chance(50) {
                complete_put(rng, table, &pk, &mut body);
            }
            req.pk = Some(pk);
            req.body = Some(body);
        }
        Op::Delete => {
            let pk = some_pk(rng, keys, t);
            if let Some(at) = keys.live[t].iter().position(|k| *k == pk) {
                keys.deleted[t].push(keys.live[t].swap_remove(at));
            }
            req.pk = Some(pk);
        }
    }
    req
}

/// Mostly a live key; sometimes one never seen, one deleted, or not a number at all.
fn some_pk(rng: &mut Rng, keys: &Keys, t: usize) -> String {
    let table = &TABLES[t];
    match rng.below(100) {
        0..80 if !keys.live[t].is_empty() => rng.pick(&keys.live[t]).clone(),
        80..88 if !keys.deleted[t].is_empty() => rng.pick(&keys.deleted[t]).clone(),
        88..94 if !table.text_pk => "abc".to_owned(),
        _ if table.text_pk => "NOPE-1".to_owned(),
        _ => "99999".to_owned(),
    }
}

/// A value the column holds (never NULL), as text; for a JSON column, one of [`JSON_WORDS`]
/// (whole documents would bring numbers and commas into filters).
fn sample(rng: &mut Rng, table: &Table, column: &Column) -> String {
    if column.kind == Kind::Json {
        return (*rng.pick(JSON_WORDS)).to_owned();
    }
    if column.name == table.pk() {
        let i = rng.range(1, table.rows as i64) as usize;
        return if table.text_pk {
            dataset::code_pk(i)
        } else {
            i.to_string()
        };
    }
    (0..20)
        .find_map(|_| (column.make)(rng).text())
        .unwrap_or_else(|| "1".to_owned())
}

/// A piece of a text value: a prefix, a suffix or a middle, sometimes in other case.
fn piece(rng: &mut Rng, text: &str, lookup: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return String::new();
    }
    let len = rng.range(1, chars.len().min(4) as i64) as usize;
    let start = match lookup {
        "istartswith" => 0,
        "iendswith" => chars.len() - len,
        _ => rng.below((chars.len() - len + 1) as u64) as usize,
    };
    let s: String = chars[start..start + len].iter().collect();
    match rng.below(4) {
        0 => s.to_uppercase(),
        1 => s.to_lowercase(),
        _ => s,
    }
}

fn filter_value(rng: &mut Rng, table: &Table, column: &Column, lookup: &str) -> String {
    if rng.chance(5) {
        return String::new();
    }
    match lookup {
        "isnull" | "isempty" => rng.pick(&["true", "false", "1", "0"]).to_string(),
        "in" => {
            let n = rng.range(1, 3);
            let items: Vec<String> = (0..n).map(|_| sample(rng, table, column)).collect();
            items.join(",")
        }
        "icontains" | "istartswith" | "iendswith" | "json_icontains"
            if matches!(column.kind, Kind::Text | Kind::Json) =>
        {
            if rng.chance(12) {
                rng.pick(&["%", "_", "50%", "_s", "%_"]).to_string()
            } else {
                let text = sample(rng, table, column);
                piece(rng, &text, lookup)
            }
        }
        _ => match column.kind {
            Kind::Integer | Kind::Real | Kind::Numeric if rng.chance(8) => {
                rng.pick(&["abc", "3.0", "true", "1e2", "-0"]).to_string()
            }
            Kind::Boolean => rng
                .pick(&[
                    "1", "0", "true", "false", "yes", "no", "t", "f", "on", "off",
                ])
                .to_string(),
            Kind::Date | Kind::DateTime if rng.chance(10) => rng
                .pick(&[
                    "2024-03-15T10:00:00",
                    "2024-03-15 10:00",
                    "2024-03-15",
                    "2024-03-15T10:00:00.5Z",
                    " 2024-03-15 ",
                ])
                .to_string(),
            _ if column.kind == Kind::Text && rng.chance(20) => {
                let text = sample(rng, table, column);
                if rng.chance(50) {
                    text.to_uppercase()
                } else {
                    text.to_lowercase()
                }
            }
            _ => sample(rng, table, column),
        },
    }
}

/// One filter parameter: `col`, `col__lookup` with a lookup of the column's type, maybe
/// `exclude__` (mistakes come from [`add_mistake`]).
fn filter(rng: &mut Rng, table: &Table, backend: Backend) -> (String, String) {
    let column = *rng.pick(&table.columns_in(backend));
    let lookup = rng.pick(lookups(column.kind, backend));
    let value = filter_value(rng, table, column, lookup);
    let mut key = if *lookup == "exact" && rng.chance(50) {
        column.name.to_owned()
    } else {
        format!("{}__{lookup}", column.name)
    };
    if rng.chance(15) {
        key = format!("exclude__{key}");
    }
    (key, value)
}

/// Up to `max` filters, with the same key twice and `x__in` twice now and then.
pub(super) fn filters(
    rng: &mut Rng,
    table: &Table,
    max: u64,
    backend: Backend,
    query: &mut Vec<(String, String)>,
) {
    let columns = table.columns_in(backend);
    for _ in 0..rng.below(max + 1) {
        query.push(filter(rng, table, backend));
    }
    if !query.is_empty() && rng.chance(8) {
        let (key, _) = query[rng.below(query.len() as u64) as usize].clone();
        let name = key.trim_start_matches("exclude__").split("__").next();
        if let Some(column) = columns.iter().find(|c| Some(c.name) == name) {
            // A repeated `in` takes its values as they are: a boolean `1,0` would be one
            // misread word (a mistake, see `add_mistake`), and PostgreSQL fails on a date
            // `'2024-01-02,2024-03-04'` (the engine answers 500).
            let whole = column.kind == Kind::Boolean
                || (column.kind == Kind::Date && backend == Backend::Postgres);
            if !(whole && key.ends_with("__in")) {
                let value = sample(rng, table, column);
                query.push((key, value));
            }
        }
    }
    if rng.chance(6) {
        let column = rng.pick(&columns);
        for _ in 0..2 {
            let value = sample(rng, table, column);
            query.push((format!("{}__in", column.name), value));
        }
    }
    if backend == Backend::Postgres {
        keep_date_lists_whole(&columns, query);
    }
}

/// Drops the repeats of a date `in` key that has a comma list: a repeated `in` takes each value
/// whole, and PostgreSQL fails on the date `'2024-01-02,2024-03-04'` (the engine answers 500;
/// SQLite just matches nothing).
fn keep_date_lists_whole(columns: &[&Column], query: &mut Vec<(String, String)>) {
    let is_date_in = |key: &str| {
        let name = key.trim_start_matches("exclude__").split("__").next();
        key.ends_with("__in")
            && columns
                .iter()
                .any(|c| Some(c.name) == name && c.kind == Kind::Date)
    };
    let listed: Vec<String> = query
        .iter()
        .filter(|(k, v)| is_date_in(k) && v.contains(','))
        .map(|(k, _)| k.clone())
        .collect();
    let mut seen: Vec<String> = Vec::new();
    query.retain(|(k, _)| {
        if !listed.contains(k) || seen.contains(k) {
            return !listed.contains(k);
        }
        seen.push(k.clone());
        true
    });
}

pub(super) fn list_query(rng: &mut Rng, table: &Table, backend: Backend) -> Vec<(String, String)> {
    let columns = table.columns_in(backend);
    let mut q = Vec::new();
    filters(rng, table, 3, backend, &mut q);
    if rng.chance(15) {
        let value = match rng.below(4) {
            0 => rng.range(1, 100).to_string(),
            1 => String::new(),
            _ => {
                let column = rng.pick(&columns);
                let text = sample(rng, table, column);
                piece(rng, &text, "icontains")
            }
        };
        q.push(("_search".to_owned(), value));
    }
    if rng.chance(35) {
        let value = if rng.chance(3) {
            // One character: the engine then lists nothing.
            rng.pick(&["a", "-", ""]).to_string()
        } else {
            let n = rng.range(1, 2);
            let parts: Vec<String> = (0..n)
                .map(|_| {
                    let c = rng.pick(&columns).name;
                    if rng.chance(50) {
                        format!("-{c}")
                    } else {
                        c.to_owned()
                    }
                })
                .collect();
            parts.join(",")
        };
        q.push(("_order_by".to_owned(), value));
    }
    if rng.chance(40) {
        let page = match rng.below(10) {
            0..4 => rng.range(1, 4).to_string(),
            4 => rng.range(5, 40).to_string(),
            5 => "1000".to_owned(),
            6 => "0".to_owned(),
            7 => "-1".to_owned(),
            8 => "abc".to_owned(),
            _ => "last".to_owned(),
        };
        q.push(("page".to_owned(), page));
    }
    if rng.chance(45) {
        let per_page = match rng.below(10) {
            0..7 => rng.range(1, 30).to_string(),
            7 => "0".to_owned(),
            8 => "20000".to_owned(),
            _ => "abc".to_owned(),
        };
        q.push(("_per_page".to_owned(), per_page));
    }
    if rng.chance(8) {
        let v = rng.pick(&["1", "0", "true", ""]).to_string();
        q.push(("_no_pagination".to_owned(), v));
    }
    q
}

/// Whether PostgreSQL has `func` (any case) for a column of `kind`: `sum`/`avg` only of numbers,
/// `min`/`max` not of booleans or JSON. Unknown functions never reach the database.
fn pg_has(func: &str, kind: Kind) -> bool {
    match func.to_ascii_lowercase().as_str() {
        "sum" | "avg" => kind.is_number(),
        "min" | "max" => !matches!(kind, Kind::Boolean | Kind::Json),
        _ => true,
    }
}

/// `_y_func` (sometimes in capitals, unknown or missing) and `_y_column` (sometimes absent).
pub(super) fn y_params(rng: &mut Rng, table: &Table, backend: Backend) -> Vec<(String, String)> {
    let mut q = Vec::new();
    match rng.below(100) {
        0..3 => {}
        3..5 => q.push(("_y_func".to_owned(), "median".to_owned())),
        5..10 => q.push(("_y_func".to_owned(), rng.pick(Y_FUNCS).to_uppercase())),
        _ => q.push(("_y_func".to_owned(), rng.pick(Y_FUNCS).to_string())),
    }
    let numbers: Vec<&Column> = table
        .fields_in(backend)
        .into_iter()
        .filter(|c| c.kind.is_number())
        .collect();
    let func = q.first().map(|(_, f)| f.clone()).unwrap_or_default();
    let postgres = backend == Backend::Postgres;
    match rng.below(100) {
        0..30 => {}
        30..85 if !numbers.is_empty() => {
            q.push(("_y_column".to_owned(), rng.pick(&numbers).name.to_owned()));
        }
        _ => {
            // Any column but a date: `sum`/`avg` of a date fails in the engine (a mistake, see
            // `add_mistake`). On PostgreSQL, only a column the function exists for.
            let column = *rng.pick(&table.columns_in(backend));
            if !column.kind.is_date() && (!postgres || pg_has(&func, column.kind)) {
                q.push(("_y_column".to_owned(), column.name.to_owned()));
            }
        }
    }
    // Without `_y_column` the engine takes the primary key: PostgreSQL has no `sum` of text.
    let pk_kind = table.columns[0].kind;
    let defaulted = !q.iter().any(|(k, _)| k == "_y_column");
    if postgres
        && defaulted
        && !pg_has(&func, pk_kind)
        && let Some(column) = numbers.first()
    {
        q.push(("_y_column".to_owned(), column.name.to_owned()));
    }
    q
}

pub(super) fn group_query(rng: &mut Rng, table: &Table, backend: Backend) -> Vec<(String, String)> {
    let columns = table.columns_in(backend);
    let fields = table.fields_in(backend);
    let mut q = Vec::new();
    let lookup = if rng.chance(20) {
        None
    } else {
        Some(*rng.pick(X_LOOKUPS))
    };
    let dates: Vec<&Column> = columns.into_iter().filter(|c| c.kind.is_date()).collect();
    let column = match lookup {
        // A table without dates (the shapes') groups a field: a date lookup on it is a 400.
        Some(l) if l.starts_with("date_") && !dates.is_empty() && rng.chance(85) => {
            rng.pick(&dates)
        }
        _ => rng.pick(&fields),
    };
    q.push(("_x_column".to_owned(), column.name.to_owned()));
    if let Some(l) = lookup {
        q.push(("_x_lookup".to_owned(), l.to_owned()));
    }
    if rng.chance(10) {
        let second = rng.pick(&fields);
        q.push(("_x_column".to_owned(), second.name.to_owned()));
        q.push(("_x_lookup".to_owned(), "plain".to_owned()));
    }
    q.extend(y_params(rng, table, backend));
    filters(rng, table, 2, backend, &mut q);
    q
}

/// A column's generated value as JSON, sometimes as the strings a form would send.
pub(super) fn json_value(rng: &mut Rng, column: &Column) -> Value {
    let value = (column.make)(rng);
    match (column.kind, value) {
        (_, Val::Null) => Value::Null,
        (Kind::Boolean, Val::Int(n)) => {
            if rng.chance(15) {
                json!(if n == 0 { "no" } else { "yes" })
            } else {
                json!(n != 0)
            }
        }
        (Kind::Integer, Val::Int(n)) if rng.chance(15) => json!(n.to_string()),
        (Kind::DateTime, Val::Text(s)) if rng.chance(20) => json!(s.replacen(' ', "T", 1)),
        // A JSON column takes the document, or now and then its text (which the engine parses).
        (Kind::Json, Val::Text(s)) => {
            if rng.chance(15) {
                json!(s)
            } else {
                serde_json::from_str(&s).unwrap_or(Value::String(s))
            }
        }
        (_, Val::Int(n)) => json!(n),
        (_, Val::Real(x)) => json!(x),
        (_, Val::Text(s)) => json!(s),
    }
}

/// A create body: most fields; the NOT NULL ones nearly always; sometimes a key that exists.
fn create_body(rng: &mut Rng, keys: &mut Keys, t: usize, backend: Backend) -> Value {
    let table = &TABLES[t];
    let mut body = serde_json::Map::new();
    let mut complete = true;
    for column in table.fields_in(backend) {
        let required = column.required();
        let keep = if required {
            rng.chance(92)
        } else {
            rng.chance(70)
        };
        if keep {
            let mut value = json_value(rng, column);
            while required && value.is_null() {
                value = json_value(rng, column);
            }
            body.insert(column.name.to_owned(), value);
        } else if required {
            complete = false;
        }
    }
    if table.text_pk {
        let code = if rng.chance(10) && !keys.live[t].is_empty() {
            rng.pick(&keys.live[t]).clone()
        } else {
            keys.created += 1;
            format!("N-{}", keys.created)
        };
        body.insert(table.pk().to_owned(), json!(code));
        if complete && !keys.live[t].contains(&code) {
            keys.live[t].push(code);
        }
    } else if rng.chance(5) && !keys.live[t].is_empty() {
        let existing: i64 = rng.pick(&keys.live[t]).parse().unwrap_or(1);
        body.insert(table.pk().to_owned(), json!(existing));
    } else if complete {
        keys.live[t].push(keys.next_id[t].to_string());
        keys.next_id[t] += 1;
    }
    Value::Object(body)
}

/// Makes a PUT body one PostgreSQL's engine takes: it requires every NOT NULL column there,
/// the primary key of a text-keyed table included (sent as the key of the path, unchanged).
fn complete_put(rng: &mut Rng, table: &Table, pk: &str, body: &mut Value) {
    let Value::Object(map) = body else { return };
    for column in table.fields_in(Backend::Postgres) {
        if column.required() && map.get(column.name).is_none_or(Value::is_null) {
            let mut value = json_value(rng, column);
            while value.is_null() {
                value = json_value(rng, column);
            }
            map.insert(column.name.to_owned(), value);
        }
    }
    if table.text_pk {
        map.insert(table.pk().to_owned(), json!(pk));
    }
}

/// A partial body of 1 to 3 fields (a NOT NULL one set to null now and then).
pub(super) fn update_body(rng: &mut Rng, table: &Table, backend: Backend) -> Value {
    let fields = table.fields_in(backend);
    let mut body = serde_json::Map::new();
    for _ in 0..rng.range(1, 3) {
        let column = rng.pick(&fields);
        let value = if rng.chance(5) {
            Value::Null
        } else {
            json_value(rng, column)
        };
        body.insert(column.name.to_owned(), value);
    }
    Value::Object(body)
}

/// A read of one of `tables`, shapes keyed on their first column (a composite key, no declared
/// key, a view): a list (paged, ordered by and filtered on the last column), a retrieve, an
/// aggregate or a group. The `--postgres` and `--mysql` runs both read their key shapes so.
pub fn key_shape_read(r: &mut Rng, tables: &[&'static Table]) -> Request {
    let table: &'static Table = tables[r.below(tables.len() as u64) as usize];
    let key = table.columns[0].name;
    let last = table.columns[table.columns.len() - 1].name;
    let mut query: Vec<(String, String)> = Vec::new();
    let mut pk = None;
    let op = match r.below(100) {
        0..55 => {
            query.push(("_per_page".to_owned(), r.range(2, 12).to_string()));
            if r.chance(60) {
                query.push(("page".to_owned(), r.range(1, 5).to_string()));
            }
            if r.chance(40) {
                let dir = if r.chance(50) { "-" } else { "" };
                query.push(("_order_by".to_owned(), format!("{dir}{last}")));
            }
            if r.chance(40) {
                query.push((format!("{last}__gte"), r.below(40).to_string()));
            }
            if r.chance(10) {
                query.push(("_no_pagination".to_owned(), "1".to_owned()));
            }
            Op::List
        }
        55..75 => {
            pk = Some(r.below(11).to_string());
            if r.chance(30) {
                query.push((format!("{last}__lt"), r.below(40).to_string()));
            }
            Op::Retrieve
        }
        75..88 => {
            let (func, column) = *r.pick(&[("count", key), ("sum", last), ("max", key)]);
            query.push(("_y_func".to_owned(), func.to_owned()));
            query.push(("_y_column".to_owned(), column.to_owned()));
            Op::Aggregate
        }
        _ => {
            query.push(("_x_column".to_owned(), key.to_owned()));
            let (func, column) = *r.pick(&[("count", key), ("sum", last)]);
            query.push(("_y_func".to_owned(), func.to_owned()));
            query.push(("_y_column".to_owned(), column.to_owned()));
            Op::Group
        }
    };
    Request {
        wire: Wire::default(),
        op,
        table,
        pk,
        query,
        body: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL_LOOKUPS: &[&str] = &[
        "exact",
        "gt",
        "gte",
        "lt",
        "lte",
        "icontains",
        "istartswith",
        "iendswith",
        "in",
        "isnull",
        "isempty",
    ];

    #[test]
    fn the_rng_is_deterministic_and_in_range() {
        let mut a = Rng::new(42);
        let mut b = Rng::new(42);
        let xs: Vec<u64> = (0..100).map(|_| a.next_u64()).collect();
        let ys: Vec<u64> = (0..100).map(|_| b.next_u64()).collect();
        assert_eq!(xs, ys);
        assert_ne!(Rng::new(43).next_u64(), xs[0]);
        for _ in 0..1000 {
            let r = a.range(-3, 3);
            assert!((-3..=3).contains(&r));
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_requests() {
        let a = generate(1, 500, DEFAULT_MISTAKES_PER_MILLE, Backend::Sqlite);
        assert_eq!(
            a,
            generate(1, 500, DEFAULT_MISTAKES_PER_MILLE, Backend::Sqlite)
        );
        assert_ne!(
            a,
            generate(2, 500, DEFAULT_MISTAKES_PER_MILLE, Backend::Sqlite)
        );
        let targets: Vec<String> = a.iter().map(Request::engine_target).collect();
        let again: Vec<String> = generate(1, 500, DEFAULT_MISTAKES_PER_MILLE, Backend::Sqlite)
            .iter()
            .map(Request::engine_target)
            .collect();
        assert_eq!(targets, again);
    }

    #[test]
    fn the_mix_has_every_kind_of_request() {
        let requests = generate(1, 1000, 100, Backend::Sqlite);
        for op in [
            Op::List,
            Op::Aggregate,
            Op::Group,
            Op::Retrieve,
            Op::Create,
            Op::Patch,
            Op::Put,
            Op::Delete,
        ] {
            assert!(requests.iter().any(|r| r.op == op), "{op:?}");
        }
        let lists = requests.iter().filter(|r| r.op == Op::List).count();
        assert!((500..700).contains(&lists), "{lists}");
        let keys: Vec<&str> = requests
            .iter()
            .flat_map(|r| r.query.iter().map(|(k, _)| k.as_str()))
            .collect();
        for lookup in ALL_LOOKUPS {
            assert!(
                keys.iter().any(|k| k.ends_with(&format!("__{lookup}"))),
                "{lookup}"
            );
        }
        for key in [
            "_order_by",
            "page",
            "_per_page",
            "_no_pagination",
            "_search",
        ] {
            assert!(keys.contains(&key), "{key}");
        }
        assert!(keys.iter().any(|k| k.starts_with("exclude__")));
    }

    /// A JSON text with every object's keys sorted: the same whether or not serde_json keeps
    /// insertion order (its `preserve_order` feature, which `--all-features` builds may turn on).
    fn canonical(v: &Value) -> String {
        match v {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let items: Vec<String> = keys
                    .iter()
                    .map(|k| format!("{}:{}", Value::from(k.as_str()), canonical(&map[*k])))
                    .collect();
                format!("{{{}}}", items.join(","))
            }
            Value::Array(items) => {
                let items: Vec<String> = items.iter().map(canonical).collect();
                format!("[{}]", items.join(","))
            }
            other => other.to_string(),
        }
    }

    /// FNV-1a of the generated requests (method, engine target, body).
    fn digest(requests: &[Request]) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for r in requests {
            let line = format!(
                "{} {} {:?}",
                r.op.method(),
                r.engine_target(),
                r.body.as_ref().map(canonical)
            );
            for b in line.bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x100_0000_01b3);
            }
        }
        h
    }

    #[test]
    fn the_sqlite_requests_are_those_of_before_the_postgres_mode() {
        // Pins seed 1's SQLite stream, so that runs before and after compare like with like. A
        // deliberate change to the generator updates it: last, the requests over the tables whose
        // key stores a value as another (`rounded_keys`, drawn apart: the others are those of
        // before, in their order, with these among them).
        assert_eq!(
            digest(&generate(1, 2000, 100, Backend::Sqlite)),
            0x91d6_5faf_06ce_4701
        );
    }

    #[test]
    fn postgres_requests_use_the_json_column_and_avoid_what_fails_there() {
        for seed in 1..=6 {
            let requests = generate(seed, 3000, 0, Backend::Postgres);
            assert_eq!(requests, generate(seed, 3000, 0, Backend::Postgres));
            let mut meta_filters = 0;
            // The requests over `pg_shapes`'s tables are that module's (and its tests').
            let requests: Vec<&Request> = requests
                .iter()
                .filter(|r| !super::super::pg_shapes::TABLE_NAMES.contains(&r.table.name))
                .filter(|r| {
                    !super::super::pg_shapes::KEY_SHAPES
                        .iter()
                        .any(|t| t.name == r.table.name)
                })
                .collect();
            for r in &requests {
                let columns = r.table.columns_in(Backend::Postgres);
                let kind_of = |name: &str| columns.iter().find(|c| c.name == name).map(|c| c.kind);
                for (key, value) in &r.query {
                    let key = key.trim_start_matches("exclude__");
                    let (name, lookup) = key.split_once("__").unwrap_or((key, "exact"));
                    match kind_of(name) {
                        Some(Kind::Json) => {
                            meta_filters += 1;
                            assert!(
                                ["exact", "in", "json_icontains", "isnull", "isempty"]
                                    .contains(&lookup),
                                "{key}"
                            );
                            if lookup == "exact" || lookup == "in" {
                                for item in value.split(',').filter(|i| !i.is_empty()) {
                                    let parsed = serde_json::from_str::<Value>(item);
                                    assert!(
                                        !matches!(
                                            parsed,
                                            Ok(Value::Number(_) | Value::Bool(_) | Value::Null)
                                        ),
                                        "{key}={value}"
                                    );
                                }
                            }
                        }
                        Some(kind) if kind != Kind::Text => {
                            assert_ne!(lookup, "icontains", "{key} on {}", r.table.name);
                        }
                        _ => {}
                    }
                }
                let func = r.query.iter().find(|(k, _)| k == "_y_func");
                if let Some((_, func)) = func {
                    let column = r
                        .query
                        .iter()
                        .find(|(k, _)| k == "_y_column")
                        .map_or(r.table.pk(), |(_, c)| c.as_str());
                    let kind = kind_of(column).unwrap_or(Kind::Text);
                    assert!(pg_has(func, kind), "{func} of {column}");
                }
            }
            assert!(meta_filters > 20, "{meta_filters}");
            // No date `in` with a comma list given twice (PostgreSQL cannot read the whole list as
            // a date).
            for r in &requests {
                for (key, value) in &r.query {
                    let name = key.trim_start_matches("exclude__").split("__").next();
                    let date = r
                        .table
                        .columns
                        .iter()
                        .any(|c| Some(c.name) == name && c.kind == Kind::Date);
                    let repeated = r.query.iter().filter(|(k, _)| k == key).count() > 1;
                    assert!(
                        !(date && key.ends_with("__in") && repeated && value.contains(',')),
                        "{}",
                        r.engine_target()
                    );
                }
            }
            let bodies_with_meta = requests
                .iter()
                .filter_map(|r| r.body.as_ref())
                .filter(|b| b.get("meta").is_some())
                .count();
            assert!(bodies_with_meta > 10, "{bodies_with_meta}");
            // Half the PUTs carry every NOT NULL column (and a text key), which PostgreSQL's engine
            // requires.
            let complete = requests
                .iter()
                .filter(|r| r.op == Op::Put)
                .filter(|r| {
                    let body = r.body.as_ref().and_then(Value::as_object);
                    r.table.columns_in(Backend::Postgres).iter().all(|c| {
                        !(c.required() || (r.table.text_pk && c.name == r.table.pk()))
                            || body
                                .and_then(|b| b.get(c.name))
                                .is_some_and(|v| !v.is_null())
                    })
                })
                .count();
            let puts = requests.iter().filter(|r| r.op == Op::Put).count();
            assert!(
                complete * 4 > puts && complete < puts,
                "{complete} of {puts}"
            );
        }
        // Mistakes on PostgreSQL include the lookups it fails on.
        let with_mistakes = generate(3, 3000, 1000, Backend::Postgres);
        assert!(with_mistakes.iter().any(|r| {
            r.query
                .iter()
                .any(|(k, _)| k == "age__icontains" || k == "born__icontains" || k == "meta")
        }));
    }

    #[test]
    fn a_date_in_with_a_list_is_given_once() {
        let columns = TABLES[0].columns_in(Backend::Postgres);
        let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
            list.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let mut query = pairs(&[
            ("born__in", "2000-01-02"),
            ("age__in", "1,2"),
            ("born__in", "2001-01-01,2002-02-02"),
            ("age__in", "3"),
            ("exclude__born__in", "2003-03-03"),
            ("born__in", "2004-04-04"),
        ]);
        keep_date_lists_whole(&columns, &mut query);
        assert_eq!(
            query,
            pairs(&[
                ("born__in", "2000-01-02"),
                ("age__in", "1,2"),
                ("age__in", "3"),
                ("exclude__born__in", "2003-03-03"),
            ])
        );
    }

    #[test]
    fn targets_have_each_servers_shape() {
        let request = Request {
            wire: Wire::default(),
            op: Op::Retrieve,
            table: &TABLES[2],
            pk: Some("É-007".to_owned()),
            query: vec![("name__icontains".to_owned(), "50% a&b".to_owned())],
            body: None,
        };
        assert_eq!(
            request.engine_target(),
            "/api/models/codes/%C3%89-007/?name__icontains=50%25%20a%26b"
        );
        assert_eq!(
            request.emulator_target("/projects/p/prod/db"),
            "/projects/p/prod/db/models/codes/%C3%89-007?name__icontains=50%25%20a%26b"
        );
        let group = Request {
            wire: Wire::default(),
            op: Op::Group,
            pk: None,
            query: Vec::new(),
            ..request
        };
        assert_eq!(group.engine_target(), "/api/models/codes/group/");
        assert_eq!(group.emulator_target(""), "/models/codes/group");
    }
}
