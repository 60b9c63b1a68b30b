//! Requests made from a resource's own schema and rows: every model's lists with the lookups
//! its fields' types take (values drawn from its rows, so that filters select something),
//! orders, searches, pages, `_relation` along keys the rows show and `_m2m` (the declared
//! filters also in their `NAME__exact` spelling), retrieves of keys
//! that exist and of one that does not, aggregates, groups, and read-only SQL; with `--writes`
//! also creates and updates. The same seed, schema and rows give the same requests.

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use svc_emulator::{FieldInfo, FilterFamily, ModelInfo};

use crate::url;
use crate::verify::case::{Case, Op};

/// A model and some of its records, as the emulator lists them, with each field's values
/// read once.
#[derive(Debug, Clone)]
pub struct Sampled {
    pub info: ModelInfo,
    pub rows: Vec<Map<String, Value>>,
    /// Each field's distinct values in the rows, as a query writes them (no NULLs), sorted.
    values: HashMap<String, Vec<String>>,
}

impl Sampled {
    pub fn new(info: ModelInfo, rows: Vec<Map<String, Value>>) -> Sampled {
        let values = info
            .fields
            .iter()
            .map(|f| {
                let mut out: Vec<String> = rows
                    .iter()
                    .filter_map(|row| text(row.get(&f.name)?))
                    .collect();
                out.sort();
                out.dedup();
                (f.name.clone(), out)
            })
            .collect();
        Sampled { info, rows, values }
    }
}

/// A small, seeded generator (xorshift64*): the same seed draws the same requests everywhere.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        let s = seed ^ 0x9E37_79B9_7F4A_7C15;
        Rng(if s == 0 { 1 } else { s })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// In `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n as u64).unwrap_or(0)
    }

    /// True with `percent` % probability.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// One of `items`, or `None` when there are none.
    pub fn pick_some<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        (!items.is_empty()).then(|| self.pick(items))
    }
}

/// `n` requests over `models` (at least one), drawn with `seed`; creates and updates only when
/// `writes`.
pub fn generate(models: &[Sampled], seed: u64, n: usize, writes: bool) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    let sql_models: Vec<&Sampled> = models.iter().filter(|m| plain_sql(&m.info)).collect();
    (0..n)
        .map(|_| {
            let model = rng.pick(models);
            let roll = rng.below(100);
            match roll {
                0..10 => from_inventory(&mut rng, model, writes)
                    .unwrap_or_else(|| list(&mut rng, model, models)),
                10..40 => list(&mut rng, model, models),
                40..52 => retrieve(&mut rng, model),
                52..66 => aggregate(&mut rng, model),
                66..80 => group(&mut rng, model),
                80..90 if !sql_models.is_empty() => {
                    let model = *rng.pick(&sql_models);
                    sql(&mut rng, model)
                }
                90..100 if writes => write(&mut rng, model),
                _ => list(&mut rng, model, models),
            }
        })
        .collect()
}

/// A request of the inventory of what the engine reads (`svc_engine::inventory`, the table
/// of docs/contract.md), on `model`: its example with the model's key, a key of its rows, a
/// text and a number column put in; `None` when the model lacks one the example needs, or
/// the example writes and `writes` is off, or is no request a case can hold (`HEAD`).
fn from_inventory(rng: &mut Rng, model: &Sampled, writes: bool) -> Option<Case> {
    use svc_engine::inventory::INVENTORY;
    let examples: Vec<_> = INVENTORY.iter().filter_map(|e| e.example).collect();
    let (method, path, rest) = *rng.pick(&examples);
    let op = match (method, path) {
        ("GET", "") => Op::List,
        ("GET", "{pk}") => Op::Retrieve,
        ("GET", "aggregate") => Op::Aggregate,
        ("GET", "group") => Op::Group,
        ("POST", "") if writes => Op::Create,
        ("PATCH", "{pk}") if writes => Op::Update,
        ("DELETE", "{pk}") if writes => Op::Delete,
        _ => return None,
    };
    let info = &model.info;
    let first = |family: FilterFamily| {
        info.fields
            .iter()
            .find(|f| f.family == family)
            .map(|f| f.name.clone())
    };
    let fill = |s: &str| -> Option<String> {
        let mut out = s.replace("{key}", &info.key);
        for (hole, name) in [
            ("{text}", first(FilterFamily::Text)),
            ("{number}", first(FilterFamily::Number)),
        ] {
            if out.contains(hole) {
                out = out.replace(hole, &name?);
            }
        }
        Some(out)
    };
    let keys = values(model, &info.key);
    let key = if path == "{pk}" || rest.contains("{pk}") {
        Some(rng.pick_some(keys)?.clone())
    } else {
        None
    };
    let rest = fill(rest)?.replace("{pk}", key.as_deref().unwrap_or(""));
    let mut case = Case::read(op, &info.name, Vec::new());
    if matches!(op, Op::Create | Op::Update) {
        case.body = Some(serde_json::from_str(&rest).ok()?);
    } else {
        case.query = rest
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|pair| {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                (url::decode(k), url::decode(v))
            })
            .collect();
    }
    case.key = key.filter(|_| path == "{pk}");
    Some(case)
}

/// The values of `field` in the rows, as a query writes them (no NULLs).
fn values<'m>(model: &'m Sampled, field: &str) -> &'m [String] {
    model.values.get(field).map_or(&[], Vec::as_slice)
}

/// A JSON value as a query parameter writes it; `None` for a NULL.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        other => Some(other.to_string()),
    }
}

/// The lookups a field's filter family takes (docs/contract.md 5.1), the common ones more often.
fn lookups(family: FilterFamily) -> &'static [&'static str] {
    match family {
        FilterFamily::Number => &[
            "exact",
            "exact",
            "gt",
            "gte",
            "lt",
            "lte",
            "in",
            "isnull",
            "icontains",
        ],
        FilterFamily::Date | FilterFamily::DateTime => {
            &["exact", "gt", "gte", "lt", "lte", "in", "isnull"]
        }
        FilterFamily::Boolean => &["exact", "exact", "in", "isnull"],
        FilterFamily::Text => &[
            "exact",
            "icontains",
            "icontains",
            "istartswith",
            "iendswith",
            "in",
            "isnull",
            "isempty",
        ],
        FilterFamily::Json => &["exact", "in", "json_icontains", "isnull"],
    }
}

/// A part of `text` (up to four characters, on character boundaries).
fn piece(rng: &mut Rng, text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= 1 {
        return text.to_owned();
    }
    let len = 1 + rng.below(chars.len().min(4));
    let start = rng.below(chars.len() - len + 1);
    chars[start..start + len].iter().collect()
}

/// A value of `field` for `lookup`: mostly one the rows hold, sometimes one they do not.
fn filter_value(rng: &mut Rng, model: &Sampled, field: &FieldInfo, lookup: &str) -> String {
    if matches!(lookup, "isnull" | "isempty") {
        return rng.pick(&["true", "false"]).to_string();
    }
    let seen = values(model, &field.name);
    let one = |rng: &mut Rng| -> String {
        if seen.is_empty() || rng.chance(10) {
            match field.family {
                FilterFamily::Number => rng.pick(&["0", "-1", "1.5", "100000"]).to_string(),
                FilterFamily::Date => "2024-01-15".to_owned(),
                FilterFamily::DateTime => "2024-01-15T10:30:00".to_owned(),
                FilterFamily::Boolean => rng.pick(&["true", "false", "1", "0"]).to_string(),
                FilterFamily::Text | FilterFamily::Json => "zz".to_owned(),
            }
        } else {
            rng.pick(seen).clone()
        }
    };
    match lookup {
        "in" => {
            let n = 1 + rng.below(3);
            let items: Vec<String> = (0..n).map(|_| one(rng)).collect();
            items.join(",")
        }
        "icontains" | "istartswith" | "iendswith" | "json_icontains" => {
            let v = one(rng);
            piece(rng, &v)
        }
        _ => one(rng),
    }
}

/// `count` filters on fields of `model`.
fn filters(rng: &mut Rng, model: &Sampled, count: usize, query: &mut Vec<(String, String)>) {
    for _ in 0..count {
        let field = rng.pick(&model.info.fields);
        let lookup = *rng.pick(lookups(field.family));
        let value = filter_value(rng, model, field, lookup);
        let key = if lookup == "exact" && rng.chance(50) {
            field.name.clone()
        } else {
            format!("{}__{lookup}", field.name)
        };
        query.push((key, value));
    }
}

/// A list: filters, an order made total by the key, a search, a page, a relation.
fn list(rng: &mut Rng, model: &Sampled, models: &[Sampled]) -> Case {
    let mut query = Vec::new();
    let n = rng.below(3);
    filters(rng, model, n, &mut query);
    if rng.chance(50) {
        query.push((declared(rng, "_order_by"), order(rng, &model.info)));
    }
    if rng.chance(15) {
        search(rng, model, &mut query);
    }
    if rng.chance(40) {
        query.push(("_per_page".to_owned(), (1 + rng.below(30)).to_string()));
        if rng.chance(60) {
            query.push(("page".to_owned(), (1 + rng.below(3)).to_string()));
        }
    }
    if rng.chance(12) {
        relation(rng, model, models, &mut query);
    }
    if rng.chance(2) {
        let other = rng.pick(models);
        let value = values(other, &other.info.key).first().cloned();
        query.push((
            "_m2m".to_owned(),
            format!(
                "{},{}",
                other.info.name,
                value.unwrap_or_else(|| "1".to_owned())
            ),
        ));
    }
    Case::read(Op::List, &model.info.name, query)
}

/// `_order_by`: one or two fields, each maybe descending, then the key, so that no two rows
/// tie (a tie's order is the database's choice, which two servers need not share).
fn order(rng: &mut Rng, info: &ModelInfo) -> String {
    let mut terms: Vec<String> = Vec::new();
    for _ in 0..1 + rng.below(2) {
        let field = &rng.pick(&info.fields).name;
        if terms.iter().any(|t| t.trim_start_matches('-') == field) {
            continue;
        }
        let sign = if rng.chance(40) { "-" } else { "" };
        terms.push(format!("{sign}{field}"));
    }
    if !terms.iter().any(|t| t.trim_start_matches('-') == info.key) && !info.promoted_key {
        terms.push(info.key.clone());
    }
    terms.join(",")
}

/// `_search`: a part of a text value, or a whole number.
fn search(rng: &mut Rng, model: &Sampled, query: &mut Vec<(String, String)>) {
    let searched: Vec<&FieldInfo> = model
        .info
        .fields
        .iter()
        .filter(|f| matches!(f.family, FilterFamily::Text | FilterFamily::Number))
        .collect();
    let Some(field) = (!searched.is_empty()).then(|| *rng.pick(&searched)) else {
        return;
    };
    let seen = values(model, &field.name);
    let text = match (seen.is_empty(), field.family) {
        (true, _) => "a".to_owned(),
        (false, FilterFamily::Number) => rng.pick(seen).clone(),
        (false, _) => {
            let v = rng.pick(seen).clone();
            piece(rng, &v)
        }
    };
    query.push((declared(rng, "_search"), text));
}

/// The name of one of the engine's declared filters (`_order_by`, `_search`, `_relation`) in
/// one of the spellings its filter machinery reads: `NAME`, or now and then `NAME__exact`.
fn declared(rng: &mut Rng, name: &str) -> String {
    match rng.chance(20) {
        true => format!("{name}__exact"),
        false => name.to_owned(),
    }
}

/// Whether a value can stand in a `_relation` path (which `.`, `,` and `|` cut).
fn path_safe(v: &str) -> bool {
    !v.is_empty() && !v.contains(['.', ',', '|'])
}

/// `_relation`: a join along a column whose values are another model's keys, as the rows
/// show them; else the model's own column.
fn relation(rng: &mut Rng, model: &Sampled, models: &[Sampled], query: &mut Vec<(String, String)>) {
    let mut joins: Vec<(&FieldInfo, &Sampled)> = Vec::new();
    for field in &model.info.fields {
        let ours = values(model, &field.name);
        for other in models {
            let theirs = values(other, &other.info.key);
            if field.name != model.info.key && ours.iter().any(|v| theirs.contains(v)) {
                joins.push((field, other));
            }
        }
    }
    let end = |rng: &mut Rng, target: &Sampled| -> Option<String> {
        let field = rng.pick(&target.info.fields);
        let seen: Vec<String> = values(target, &field.name)
            .iter()
            .filter(|v| path_safe(v))
            .cloned()
            .collect();
        if seen.is_empty() {
            return None;
        }
        let n = 1 + rng.below(2);
        let picked: Vec<String> = (0..n).map(|_| rng.pick(&seen).clone()).collect();
        Some(format!("{}.{}", field.name, picked.join(",")))
    };
    let path = if !joins.is_empty() && rng.chance(70) {
        let (field, other) = *rng.pick(&joins);
        end(rng, other).map(|last| {
            format!(
                "{}.{}.{}|{last}",
                field.name, other.info.name, other.info.key
            )
        })
    } else {
        end(rng, model)
    };
    if let Some(path) = path {
        query.push((declared(rng, "_relation"), path));
    }
}

/// A retrieve: a key the rows show, or one that is not there; now and then with a list's
/// filter or search, which the engine applies to the one record too (a `404` where the list
/// would not show it).
fn retrieve(rng: &mut Rng, model: &Sampled) -> Case {
    let mut query = Vec::new();
    if rng.chance(25) {
        match rng.chance(50) {
            true => filters(rng, model, 1, &mut query),
            false => search(rng, model, &mut query),
        }
    }
    let keys = values(model, &model.info.key);
    let numeric = model
        .info
        .fields
        .iter()
        .any(|f| f.name == model.info.key && f.family == FilterFamily::Number);
    let key = if keys.is_empty() || rng.chance(15) {
        if numeric { "987654321" } else { "no-such-key" }.to_owned()
    } else {
        rng.pick(keys).clone()
    };
    Case {
        key: Some(key),
        ..Case::read(Op::Retrieve, &model.info.name, query)
    }
}

/// The model's number fields.
fn numbers(model: &Sampled) -> Vec<&FieldInfo> {
    let fields = model.info.fields.iter();
    fields
        .filter(|f| f.family == FilterFamily::Number)
        .collect()
}

const Y_FUNCS: &[&str] = &["count", "count", "sum", "avg", "min", "max"];

/// `_y_func` and, mostly, `_y_column`: a number column for the arithmetic ones.
fn y_params(rng: &mut Rng, model: &Sampled, query: &mut Vec<(String, String)>) {
    let func = *rng.pick(Y_FUNCS);
    query.push(("_y_func".to_owned(), func.to_owned()));
    let numbers = numbers(model);
    let column = match func {
        "sum" | "avg" if !numbers.is_empty() && rng.chance(85) => Some(*rng.pick(&numbers)),
        _ if rng.chance(75) => Some(rng.pick(&model.info.fields)),
        _ => None,
    };
    if let Some(column) = column {
        query.push(("_y_column".to_owned(), column.name.clone()));
    }
}

fn aggregate(rng: &mut Rng, model: &Sampled) -> Case {
    let mut query = Vec::new();
    y_params(rng, model, &mut query);
    let n = rng.below(2);
    filters(rng, model, n, &mut query);
    Case::read(Op::Aggregate, &model.info.name, query)
}

fn group(rng: &mut Rng, model: &Sampled) -> Case {
    let mut query = Vec::new();
    let field = rng.pick(&model.info.fields);
    query.push(("_x_column".to_owned(), field.name.clone()));
    let dated = matches!(field.family, FilterFamily::Date | FilterFamily::DateTime);
    let lookup = match (dated, rng.below(4)) {
        (true, 0) => Some("date_year"),
        (true, 1) => Some("date_month"),
        (true, 2) => Some("date_day"),
        (_, 3) => None,
        _ => Some("plain"),
    };
    if let Some(lookup) = lookup {
        query.push(("_x_lookup".to_owned(), lookup.to_owned()));
    }
    y_params(rng, model, &mut query);
    let n = rng.below(2);
    filters(rng, model, n, &mut query);
    Case::read(Op::Group, &model.info.name, query)
}

/// A name every SQL dialect reads unquoted, the same: lower-case ASCII letters, digits and `_`.
fn plain_name(name: &str) -> bool {
    name.chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !matches!(
            name,
            "select" | "from" | "order" | "group" | "where" | "user" | "table"
        )
}

/// Whether a model's SQL can be written the same on every database: plain names only.
fn plain_sql(info: &ModelInfo) -> bool {
    plain_name(&info.name) && info.fields.iter().all(|f| plain_name(&f.name))
}

/// A read-only query over one model, ordered so that the answer has one order.
fn sql(rng: &mut Rng, model: &Sampled) -> Case {
    let table = &model.info.name;
    let key = &model.info.key;
    // Another column than the key, where there is one: `select id, id` names a column twice.
    let others: Vec<&FieldInfo> = model
        .info
        .fields
        .iter()
        .filter(|f| &f.name != key)
        .collect();
    let field = match others.is_empty() {
        true => key,
        false => &rng.pick(&others).name,
    };
    let numbers = numbers(model);
    if rng.chance(50) {
        return sql_with_params(rng, model, field);
    }
    let text = match rng.below(4) {
        0 => format!("select count(*) as n from {table}"),
        1 if field != key => format!("select {key}, {field} from {table} order by {key} limit 10"),
        1 => format!("select {key} from {table} order by {key} limit 10"),
        2 => format!(
            "select {field}, count(*) as n from {table} group by {field} order by count(*) desc, {field} limit 10"
        ),
        _ => match numbers.first() {
            Some(n) => format!("select min({0}) as lo, max({0}) as hi from {table}", n.name),
            None => format!("select {key} from {table} order by {key} desc limit 5"),
        },
    };
    Case::sql(&text)
}

/// A read-only query over one model with values, each written as the reference's database
/// driver writes it (format 2, `:name` and `params_obj`, as the SDK sends them): a value of
/// the rows compared with a column; values of each JSON type, whose answer's types are the
/// driver's; a list (`IN :keys`: a row on MySQL, an array on PostgreSQL, refused on SQLite); a
/// name inside a string (which the engine's SQLAlchemy replaces there too). Or the body's
/// paging (at most 100 rows in format 2 unless `limit` says otherwise), or the first format
/// (`%s` and `params`, a text of values split at `,`).
fn sql_with_params(rng: &mut Rng, model: &Sampled, field: &str) -> Case {
    let table = &model.info.name;
    let key = &model.info.key;
    let key_values = || -> Vec<Value> {
        let rows = model.rows.iter().filter_map(|row| row.get(key.as_str()));
        rows.filter(|v| !v.is_null()).take(3).cloned().collect()
    };
    let none = json!({});
    match rng.below(6) {
        0 => {
            let value = model.rows.iter().find_map(|row| {
                let value = row.get(field)?;
                (value.is_number() || value.is_string()).then(|| value.clone())
            });
            let value = value.unwrap_or(Value::from(1));
            Case::sql_with(
                &format!("select {key} from {table} where {field} = :v order by {key} limit 10"),
                json!({ "v": value }),
                none,
            )
        }
        1 => Case::sql_with(
            &format!(
                "select :t as t, :n as n, :big as big, :f as f, :b as b, :z as z, \
                 count(*) as rows_counted from {table}"
            ),
            json!({"t": "it's", "n": 7, "big": 1_u64 << 40, "f": 1.5, "b": true, "z": null}),
            none,
        ),
        2 => Case::sql_with(
            &format!("select count(*) as n from {table} where {key} in :keys"),
            json!({ "keys": key_values() }),
            none,
        ),
        3 => Case::sql_with(
            &format!("select ':k' as s, count(*) as n from {table} where {key} <> :k"),
            json!({ "k": key_values().first().cloned().unwrap_or(Value::from(0)) }),
            none,
        ),
        4 => {
            let (order, extra) = match rng.below(4) {
                0 => (format!(" order by {key}"), json!({})),
                1 => (
                    format!(" order by {key}"),
                    json!({ "limit": rng.below(12) }),
                ),
                2 => (
                    format!(" order by {key}"),
                    json!({ "limit": 5, "offset": rng.below(8) }),
                ),
                // The engine orders its sub-select of the query by the answer's columns.
                _ => (
                    String::new(),
                    json!({ "order_by": [format!("-{key}")], "limit": 7 }),
                ),
            };
            Case::sql_with(
                &format!("select {key} from {table}{order}"),
                json!({}),
                extra,
            )
        }
        _ => {
            let first = key_values().first().map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            Case {
                body: Some(json!({
                    "query": format!("select {key} from {table} where {key} <> %s order by {key} limit 10"),
                    "params": first.unwrap_or_default(),
                })),
                ..Case::sql("")
            }
        }
    }
}

/// A write (`--writes`): an update of one field to the value it holds (the answer is the whole
/// record), or a create copying a record under a new key (or none).
fn write(rng: &mut Rng, model: &Sampled) -> Case {
    let Some(row) = (!model.rows.is_empty()).then(|| rng.pick(&model.rows)) else {
        return retrieve(rng, model);
    };
    let key = row.get(&model.info.key).and_then(text);
    let others: Vec<&FieldInfo> = model
        .info
        .fields
        .iter()
        .filter(|f| f.name != model.info.key)
        .collect();
    match key {
        Some(key) if !model.info.promoted_key && !others.is_empty() && rng.chance(60) => {
            let field = rng.pick(&others);
            let mut body = Map::new();
            let value = row.get(&field.name).cloned().unwrap_or(Value::Null);
            body.insert(field.name.clone(), value);
            Case {
                op: Op::Update,
                model: Some(model.info.name.clone()),
                key: Some(key),
                query: Vec::new(),
                body: Some(Value::Object(body)),
            }
        }
        _ => {
            let mut body = row.clone();
            // A key of its own (past the rows' for a number), or none where the database may
            // give one: the two servers hold the same rows, so they make the same record.
            let key = &model.info.key;
            let numeric = numbers(model).iter().any(|f| &f.name == key);
            let top = values(model, key)
                .iter()
                .filter_map(|v| v.parse::<i64>().ok())
                .max()
                .unwrap_or(0);
            let fresh = 1000 + rng.below(1_000_000) as i64;
            match rng.below(10) {
                0..3 => body.remove(key),
                _ if numeric => body.insert(key.clone(), Value::from(top.saturating_add(fresh))),
                _ => body.insert(key.clone(), Value::from(format!("verify-{fresh}"))),
            };
            Case {
                op: Op::Create,
                model: Some(model.info.name.clone()),
                key: None,
                query: Vec::new(),
                body: Some(Value::Object(body)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn model(name: &str, key: &str, fields: &[(&str, FilterFamily)], rows: Value) -> Sampled {
        let mut info = ModelInfo::new(name, key);
        for (field, family) in fields {
            info.fields.push(FieldInfo::new(*field, *family));
        }
        let rows = rows
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_object().unwrap().clone())
            .collect();
        Sampled::new(info, rows)
    }

    fn shop() -> Vec<Sampled> {
        vec![
            model(
                "authors",
                "id",
                &[("id", FilterFamily::Number), ("name", FilterFamily::Text)],
                json!([{"id": 1, "name": "Ann"}, {"id": 2, "name": "Bo"}]),
            ),
            model(
                "books",
                "id",
                &[
                    ("id", FilterFamily::Number),
                    ("author_id", FilterFamily::Number),
                    ("title", FilterFamily::Text),
                    ("out", FilterFamily::Date),
                ],
                json!([
                    {"id": 1, "author_id": 1, "title": "Dune", "out": "1965-08-01"},
                    {"id": 2, "author_id": 2, "title": null, "out": null}
                ]),
            ),
        ]
    }

    #[test]
    fn the_same_seed_draws_the_same_requests_and_another_seed_others() {
        let models = shop();
        let a = generate(&models, 7, 200, false);
        assert_eq!(a, generate(&models, 7, 200, false));
        assert_ne!(a, generate(&models, 8, 200, false));
        assert!(a.iter().all(|c| !c.op.writes()));
    }

    #[test]
    fn every_kind_of_read_is_drawn_from_the_schema() {
        let models = shop();
        let cases = generate(&models, 1, 800, false);
        // What verify may send without --writes, SQL included.
        for case in &cases {
            assert_eq!(crate::verify::reads::write_reason(case), None, "{case:?}");
            assert_eq!(case.check(), Ok(()), "{case:?}");
        }
        for op in [Op::List, Op::Retrieve, Op::Aggregate, Op::Group, Op::Sql] {
            assert!(cases.iter().any(|c| c.op == op), "no {op:?}");
        }
        let params: Vec<&str> = cases
            .iter()
            .flat_map(|c| c.query.iter().map(|(k, _)| k.as_str()))
            .collect();
        for expected in [
            "_order_by",
            "_search",
            "_per_page",
            "_relation",
            "title__icontains",
            "_x_column",
            "_y_func",
        ] {
            assert!(params.contains(&expected), "no {expected}");
        }
        // A join along the key the rows show: books.author_id holds authors' ids.
        assert!(cases.iter().any(|c| {
            c.query
                .iter()
                .any(|(k, v)| k == "_relation" && v.starts_with("author_id.authors.id|"))
        }));
        // Declared filters are drawn in both of the engine's spellings.
        for name in ["_order_by__exact", "_search__exact"] {
            assert!(params.contains(&name), "no {name}");
        }
        // A retrieve now and then carries a list's filter.
        assert!(
            cases
                .iter()
                .any(|c| c.op == Op::Retrieve && !c.query.is_empty())
        );
        // An order always ends at the key: no ties (but the inventory's refusal of an unknown
        // name, drawn as it is).
        for case in &cases {
            for (k, v) in &case.query {
                if k.starts_with("_order_by") && v != "no_such_field" {
                    assert!(
                        v.split(',').any(|t| t.trim_start_matches('-') == "id"),
                        "{v}"
                    );
                }
            }
        }
    }

    #[test]
    fn writes_are_drawn_only_when_asked() {
        let models = shop();
        let cases = generate(&models, 3, 300, true);
        assert!(cases.iter().any(|c| c.op == Op::Update));
        assert!(cases.iter().any(|c| c.op == Op::Create));
        let keys: Vec<Option<&Value>> = cases
            .iter()
            .filter(|c| c.op == Op::Create)
            .map(|c| c.body.as_ref().unwrap().get("id"))
            .collect();
        assert!(
            keys.contains(&None),
            "some creates leave the key to the database"
        );
        assert!(
            keys.iter()
                .flatten()
                .all(|k| k.as_i64().is_some_and(|k| k > 1000))
        );
    }

    #[test]
    fn the_inventory_of_what_the_engine_reads_is_drawn() {
        let models = shop();
        let reads = generate(&models, 11, 2000, false);
        let has =
            |cases: &[Case], key: &str| cases.iter().any(|c| c.query.iter().any(|(k, _)| k == key));
        for key in [
            "no_such_field",
            "exclude___search",
            "_segment",
            "_search__icontains",
        ] {
            assert!(has(&reads, key), "{key}");
        }
        // `%2B2` travels decoded: the sender encodes it again.
        assert!(
            reads
                .iter()
                .any(|c| c.query.contains(&("page".to_owned(), "+2".to_owned())))
        );
        assert!(
            reads
                .iter()
                .all(|c| !matches!(c.op, Op::Create | Op::Update | Op::Delete))
        );
        let writes = generate(&models, 11, 2000, true);
        assert!(writes.iter().any(|c| {
            c.op == Op::Delete
                && c.query
                    .contains(&("_search__exact".to_owned(), "zzz-no-such-text".to_owned()))
        }));
    }

    #[test]
    fn sql_is_written_only_over_plain_names() {
        let mut models = shop();
        models[1]
            .info
            .fields
            .push(FieldInfo::new("Odd Name", FilterFamily::Text));
        let cases = generate(&models, 5, 300, false);
        let texts: Vec<String> = cases
            .iter()
            .filter(|c| c.op == Op::Sql)
            .map(Case::describe)
            .collect();
        assert!(!texts.is_empty());
        assert!(
            texts.iter().all(|t| t.contains("from authors")),
            "{texts:?}"
        );
    }
}
