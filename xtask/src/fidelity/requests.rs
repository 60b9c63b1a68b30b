//! The randomized requests, deterministic from the seed (a tiny xorshift, no rand crate).
//!
//! All of them are made up front, without looking at any answer: the generator keeps its own
//! idea of which primary keys exist (the initial rows, plus the rowid SQLite gives a create,
//! minus deletes), so both servers get the same requests in the same order.

use serde_json::{Value, json};

use super::dataset::{self, Column, Kind, TABLES, Table, Val};

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
        match (self.op, &self.pk) {
            (Op::Aggregate, _) => "/aggregate".to_owned(),
            (Op::Group, _) => "/group".to_owned(),
            (_, Some(pk)) => format!("/{}", encode(pk)),
            (_, None) => String::new(),
        }
    }

    /// The engine's path and query: `/api/models/{m}/...` with its trailing slash.
    pub fn engine_target(&self) -> String {
        format!(
            "/api/models/{}{}/{}",
            self.table.name,
            self.tail(),
            self.query_string()
        )
    }

    /// The emulator's path and query under `prefix` (`/projects/{p}/{env}/{resource}`).
    pub fn emulator_target(&self, prefix: &str) -> String {
        format!(
            "{prefix}/models/{}{}{}",
            self.table.name,
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

/// The lookups the engine declares for a column kind.
fn lookups(kind: Kind) -> &'static [&'static str] {
    match kind {
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

/// `n` requests for `seed`, with `mistakes` per mille of the read requests carrying one
/// caller mistake ([`DEFAULT_MISTAKES_PER_MILLE`]).
pub fn generate(seed: u64, n: usize, mistakes: u64) -> Vec<Request> {
    let mut rng = Rng::new(seed);
    let mut keys = Keys::new();
    (0..n)
        .map(|_| {
            let mut request = one(&mut rng, &mut keys);
            if rng.below(1000) < mistakes {
                add_mistake(&mut rng, &mut request);
            }
            request
        })
        .collect()
}

/// Adds one caller mistake to a list, aggregate or group request (writes are left alone).
fn add_mistake(rng: &mut Rng, request: &mut Request) {
    let table = request.table;
    let of = |kind: fn(Kind) -> bool| -> Vec<&'static Column> {
        table.columns.iter().filter(|c| kind(c.kind)).collect()
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

fn one(rng: &mut Rng, keys: &mut Keys) -> Request {
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
        op,
        table,
        pk: None,
        query: Vec::new(),
        body: None,
    };
    match op {
        Op::List => req.query = list_query(rng, table),
        Op::Aggregate => {
            req.query = y_params(rng, table);
            filters(rng, table, 2, &mut req.query);
        }
        Op::Group => req.query = group_query(rng, table),
        Op::Retrieve => req.pk = Some(some_pk(rng, keys, t)),
        Op::Create => req.body = Some(create_body(rng, keys, t)),
        Op::Patch | Op::Put => {
            req.pk = Some(some_pk(rng, keys, t));
            req.body = Some(update_body(rng, table));
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

/// A value the column holds (never NULL), as text.
fn sample(rng: &mut Rng, table: &Table, column: &Column) -> String {
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
        "icontains" | "istartswith" | "iendswith" if column.kind == Kind::Text => {
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
fn filter(rng: &mut Rng, table: &Table) -> (String, String) {
    let column = rng.pick(table.columns);
    let lookup = rng.pick(lookups(column.kind));
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
fn filters(rng: &mut Rng, table: &Table, max: u64, query: &mut Vec<(String, String)>) {
    for _ in 0..rng.below(max + 1) {
        query.push(filter(rng, table));
    }
    if !query.is_empty() && rng.chance(8) {
        let (key, _) = query[rng.below(query.len() as u64) as usize].clone();
        let name = key.trim_start_matches("exclude__").split("__").next();
        if let Some(column) = table.columns.iter().find(|c| Some(c.name) == name) {
            // A repeated `in` takes its values as they are: a boolean `1,0` would be one
            // misread word (a mistake, see `add_mistake`).
            if !(column.kind == Kind::Boolean && key.ends_with("__in")) {
                let value = sample(rng, table, column);
                query.push((key, value));
            }
        }
    }
    if rng.chance(6) {
        let column = rng.pick(table.columns);
        for _ in 0..2 {
            let value = sample(rng, table, column);
            query.push((format!("{}__in", column.name), value));
        }
    }
}

fn list_query(rng: &mut Rng, table: &Table) -> Vec<(String, String)> {
    let mut q = Vec::new();
    filters(rng, table, 3, &mut q);
    if rng.chance(15) {
        let value = match rng.below(4) {
            0 => rng.range(1, 100).to_string(),
            1 => String::new(),
            _ => {
                let column = rng.pick(table.columns);
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
                    let c = rng.pick(table.columns).name;
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

/// `_y_func` (sometimes in capitals, unknown or missing) and `_y_column` (sometimes absent).
fn y_params(rng: &mut Rng, table: &Table) -> Vec<(String, String)> {
    let mut q = Vec::new();
    match rng.below(100) {
        0..3 => {}
        3..5 => q.push(("_y_func".to_owned(), "median".to_owned())),
        5..10 => q.push(("_y_func".to_owned(), rng.pick(Y_FUNCS).to_uppercase())),
        _ => q.push(("_y_func".to_owned(), rng.pick(Y_FUNCS).to_string())),
    }
    let numbers: Vec<&Column> = table
        .fields()
        .iter()
        .filter(|c| c.kind.is_number())
        .collect();
    match rng.below(100) {
        0..30 => {}
        30..85 if !numbers.is_empty() => {
            q.push(("_y_column".to_owned(), rng.pick(&numbers).name.to_owned()));
        }
        _ => {
            // Any column but a date: `sum`/`avg` of a date fails in the engine (a mistake, see
            // `add_mistake`).
            let column = rng.pick(table.columns);
            if !column.kind.is_date() {
                q.push(("_y_column".to_owned(), column.name.to_owned()));
            }
        }
    }
    q
}

fn group_query(rng: &mut Rng, table: &Table) -> Vec<(String, String)> {
    let mut q = Vec::new();
    let lookup = if rng.chance(20) {
        None
    } else {
        Some(*rng.pick(X_LOOKUPS))
    };
    let dates: Vec<&Column> = table.columns.iter().filter(|c| c.kind.is_date()).collect();
    let column = match lookup {
        Some(l) if l.starts_with("date_") && rng.chance(85) => rng.pick(&dates),
        _ => rng.pick(table.fields()),
    };
    q.push(("_x_column".to_owned(), column.name.to_owned()));
    if let Some(l) = lookup {
        q.push(("_x_lookup".to_owned(), l.to_owned()));
    }
    if rng.chance(10) {
        let second = rng.pick(table.fields());
        q.push(("_x_column".to_owned(), second.name.to_owned()));
        q.push(("_x_lookup".to_owned(), "plain".to_owned()));
    }
    q.extend(y_params(rng, table));
    filters(rng, table, 2, &mut q);
    q
}

/// A column's generated value as JSON, sometimes as the strings a form would send.
fn json_value(rng: &mut Rng, column: &Column) -> Value {
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
        (_, Val::Int(n)) => json!(n),
        (_, Val::Real(x)) => json!(x),
        (_, Val::Text(s)) => json!(s),
    }
}

/// A create body: most fields; the NOT NULL ones nearly always; sometimes a key that exists.
fn create_body(rng: &mut Rng, keys: &mut Keys, t: usize) -> Value {
    let table = &TABLES[t];
    let mut body = serde_json::Map::new();
    let mut complete = true;
    for column in table.fields() {
        let required = column.decl.contains("NOT NULL");
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

/// A partial body of 1 to 3 fields (a NOT NULL one set to null now and then).
fn update_body(rng: &mut Rng, table: &Table) -> Value {
    let mut body = serde_json::Map::new();
    for _ in 0..rng.range(1, 3) {
        let column = rng.pick(table.fields());
        let value = if rng.chance(5) {
            Value::Null
        } else {
            json_value(rng, column)
        };
        body.insert(column.name.to_owned(), value);
    }
    Value::Object(body)
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
        let a = generate(1, 500, DEFAULT_MISTAKES_PER_MILLE);
        assert_eq!(a, generate(1, 500, DEFAULT_MISTAKES_PER_MILLE));
        assert_ne!(a, generate(2, 500, DEFAULT_MISTAKES_PER_MILLE));
        let targets: Vec<String> = a.iter().map(Request::engine_target).collect();
        let again: Vec<String> = generate(1, 500, DEFAULT_MISTAKES_PER_MILLE)
            .iter()
            .map(Request::engine_target)
            .collect();
        assert_eq!(targets, again);
    }

    #[test]
    fn the_mix_has_every_kind_of_request() {
        let requests = generate(1, 1000, 100);
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

    #[test]
    fn targets_have_each_servers_shape() {
        let request = Request {
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
            op: Op::Group,
            pk: None,
            query: Vec::new(),
            ..request
        };
        assert_eq!(group.engine_target(), "/api/models/codes/group/");
        assert_eq!(group.emulator_target(""), "/models/codes/group");
    }
}
