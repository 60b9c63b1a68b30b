//! Aggregate and group operations, answered as the platform's data engine answers its
//! `aggregate` and `group` actions (PyPI `jet-bridge` 1.12.13: SQLAlchemy 1.4 over SQLite
//! 3.40.1).
//!
//! # The engine's rules
//!
//! - **Function** (`_y_func`, required): stripped and lower-cased, then one of `count`, `sum`,
//!   `min`, `max`, `avg`. Any other name selects nothing: a group answers `[]`, an aggregate
//!   answers the engine's query object through the y column's serializer field (`{}` for
//!   number and boolean fields, the text of an empty `SELECT` for text fields).
//! - **Column** (`_y_column`, stripped): the primary key when absent.
//! - **SQL**: `SELECT f(y) FROM t WHERE ...` for an aggregate; for a group
//!   `SELECT x1 AS "group", x2 AS group_2, ..., f(y) AS y_func FROM t WHERE ...
//!   GROUP BY "group", group_2 ORDER BY "group", group_2 LIMIT n` (the emulator runs the same
//!   statement, so SQLite groups, orders and feeds rows the same way; a table column named
//!   `group` wins over the alias in `GROUP BY`, as there).
//! - **Arithmetic**: `sum` and `avg` are SQLite 3.40's: integers add exactly (an overflow is an
//!   error), any other value adds as a float, one by one in the order SQLite feeds the rows,
//!   and `avg` is that float sum over the count. Newer SQLite (the emulator's) compensates
//!   rounding errors, so the emulator registers its own two functions
//!   ([`SUM_FN`], [`AVG_FN`]) with the old arithmetic.
//! - **Values**: `count` is an integer; `sum`, `min` and `max` are read through the column's
//!   type (SQLAlchemy's result processing, [`read`]: NUMERIC as `Decimal`, DATE as a date,
//!   BOOLEAN as a boolean); `avg` is the raw float. Over no rows `count`, `sum` and `avg` are
//!   `0` (the integer), `min` and `max` null.
//! - **Aggregate answer** `{"y_func": v}`: `v` written by the y column's serializer field
//!   (`count`: an integer field): numbers, booleans and bare `DECIMAL` as themselves, date-time
//!   fields with `isoformat()`, every other field as `str()` text (so a `REAL` sum is
//!   `"1521.9399999999998"`).
//! - **Group answer**: rows `{"group": k1, "group_2": k2, ..., "y_func": v}` (just `y_func`
//!   without `_x_column`), written by the engine's JSON encoder (`Decimal` as a float, dates in
//!   ISO form), at most `_per_page` rows (1..=100000, 10000 when absent or not an integer).
//! - **Lookups** (`_x_lookup`, by position): split on `_` into a type and a parameter. `date`
//!   (on a column that is not DATE/DATETIME/TIMESTAMP: a `400`) with parameter `year`,
//!   `month`, `day` (also when absent or empty), `hour`, `minute`, `second` or `microseconds`
//!   is `strftime` with the engine's MySQL-style formats, whose `%i` makes SQLite answer NULL
//!   for minutes and finer; `auto` on a date column is `date_day`. Anything else (`plain`,
//!   `date_week`, `date_quarter`, unknown names) groups by the column itself, read through its
//!   type. `strftime` keys are raw text (`"2024-03-05 10:00:00"` for an hour).
//! - **`_order_by`** (a filter of every action): one character makes the selection empty;
//!   names must be fields. Only the `SELECT` text of an unknown function shows the order.
//!
//! # Stricter than the engine
//!
//! Where the engine fails with a `500`, the emulator answers a `400` naming the problem (in
//! lenient mode a `500` like the engine, [`EngineError::EngineFails`]): an
//! unknown `_x_column` or `_y_column` for `count` and groups, a value the engine cannot read
//! or write (a `sum` of a date column, `sum`/`avg` of a date-time column, a stored value its
//! type cannot parse), an integer `sum` overflow, and a repeated or malformed `_order_by`.

use rusqlite::Connection;
use rusqlite::functions::{Aggregate, Context, FunctionFlags, WindowAggregate};
use rusqlite::types::{Value, ValueRef};
use serde_json::Value as Json;

use crate::Resource;
use crate::driver::prepares;
use crate::schema::Field;
use crate::types::json_column_value;
use crate::types::stored;
use svc_emulator_core::backend::operation;

use svc_engine::aggregate::{
    AggregateFunc, AggregateRequest, GroupRequest, date_unit, fails, not_computed,
    not_json_refused, null_is_zero,
};
use svc_engine::error::EngineError;
use svc_engine::list::Selection;
use svc_engine::python::json::py_json_to_json;
use svc_engine::python::text::py_str;
use svc_engine::table::{GroupColumns, Summary, Written};
use svc_engine::types::{PyValue, Reflected, Serializer, plain, read};

/// The name of the emulator's `sum` with SQLite 3.40's arithmetic.
pub const SUM_FN: &str = "svc_sqlite340_sum";

/// The name of the emulator's `avg` with SQLite 3.40's arithmetic.
pub const AVG_FN: &str = "svc_sqlite340_avg";

/// The error text of an integer `sum` overflow (SQLite's own words).
pub(crate) const OVERFLOW: &str = "integer overflow";

// ---------------------------------------------------------------------------------------------
// SQLite 3.40's sum and avg

/// A stored value as SQLite 3.40's `sum` sees it (`sqlite3_value_numeric_type`, then the
/// integer or the float of the value).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Numeric {
    Null,
    Int(i64),
    Real(f64),
}

/// SQLite's white space (`sqlite3Isspace`): space, `\t`, `\n`, `\v`, `\f`, `\r`.
fn is_sqlite_space(b: u8) -> bool {
    b == b' ' || (0x09..=0x0d).contains(&b)
}

fn numeric(v: ValueRef<'_>) -> Numeric {
    match v {
        ValueRef::Null => Numeric::Null,
        ValueRef::Integer(i) => Numeric::Int(i),
        ValueRef::Real(f) => Numeric::Real(f),
        ValueRef::Text(t) => text_numeric(t),
        // A BLOB keeps its type, and `sum` takes its float: the text prefix of its bytes.
        ValueRef::Blob(b) => Numeric::Real(atof_prefix(b)),
    }
}

/// Text: an integer when it is all digits (a sign and surrounding white space allowed) and
/// fits 64 bits; otherwise the float of its longest numeric prefix (0.0 for none), which is
/// also the value of a well-formed real.
fn text_numeric(t: &[u8]) -> Numeric {
    let start = t
        .iter()
        .position(|&b| !is_sqlite_space(b))
        .unwrap_or(t.len());
    let end = t
        .iter()
        .rposition(|&b| !is_sqlite_space(b))
        .map_or(start, |i| i + 1);
    let trimmed = &t[start..end.max(start)];
    let digits = match trimmed.first() {
        Some(b'-' | b'+') => &trimmed[1..],
        _ => trimmed,
    };
    if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) {
        let parsed = std::str::from_utf8(trimmed)
            .ok()
            .and_then(|s| s.parse::<i64>().ok());
        if let Some(i) = parsed {
            return Numeric::Int(i);
        }
    }
    Numeric::Real(atof_prefix(t))
}

/// SQLite 3.40's `sqlite3AtoF` value: white space, a sign, digits, a fraction and an exponent
/// as far as they go. At most about 18 significant digits count (later ones only scale), as
/// there; the conversion itself is correctly rounded (3.40 scales in `long double`, which can
/// differ in the last bit for a few inputs of more than 15 digits).
fn atof_prefix(z: &[u8]) -> f64 {
    // 3.40 stops accumulating the significand at (LARGEST_INT64 - 9) / 10.
    const LIMIT: i64 = (i64::MAX - 9) / 10;
    let at = |i: usize| z.get(i).copied().unwrap_or(0);
    let mut i = 0;
    while i < z.len() && is_sqlite_space(z[i]) {
        i += 1;
    }
    let negative = match at(i) {
        b'-' => {
            i += 1;
            true
        }
        b'+' => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut s: i64 = 0;
    let mut d: i64 = 0;
    while at(i).is_ascii_digit() {
        s = s * 10 + i64::from(at(i) - b'0');
        i += 1;
        if s >= LIMIT {
            while at(i).is_ascii_digit() {
                i += 1;
                d += 1;
            }
        }
    }
    if at(i) == b'.' {
        i += 1;
        while at(i).is_ascii_digit() {
            if s < LIMIT {
                s = s * 10 + i64::from(at(i) - b'0');
                d -= 1;
            }
            i += 1;
        }
    }
    let mut e: i64 = 0;
    if matches!(at(i), b'e' | b'E') {
        i += 1;
        let esign = match at(i) {
            b'-' => {
                i += 1;
                -1
            }
            b'+' => {
                i += 1;
                1
            }
            _ => 1,
        };
        while at(i).is_ascii_digit() {
            e = if e < 10_000 {
                e * 10 + i64::from(at(i) - b'0')
            } else {
                10_000
            };
            i += 1;
        }
        e *= esign;
    }
    let value = if s == 0 {
        0.0
    } else {
        format!("{s}e{}", e + d).parse::<f64>().unwrap_or(0.0)
    };
    if negative { -value } else { value }
}

/// SQLite 3.40's `SumCtx`: the float sum, the exact integer sum while every value is an
/// integer, the count, and whether the integer sum overflowed.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct SumCtx {
    r_sum: f64,
    i_sum: i64,
    cnt: i64,
    overflow: bool,
    approx: bool,
}

impl SumCtx {
    /// `sumStep`: naive addition in the order the rows come.
    fn step(&mut self, v: ValueRef<'_>) {
        match numeric(v) {
            Numeric::Null => {}
            Numeric::Int(i) => {
                self.cnt += 1;
                self.r_sum += i as f64;
                if !(self.approx || self.overflow) {
                    match self.i_sum.checked_add(i) {
                        Some(sum) => self.i_sum = sum,
                        None => {
                            self.approx = true;
                            self.overflow = true;
                        }
                    }
                }
            }
            Numeric::Real(f) => {
                self.cnt += 1;
                self.r_sum += f;
                self.approx = true;
            }
        }
    }

    /// `sumFinalize`: NULL over no values, the integer sum, or the float one.
    fn sum(&self) -> Result<Value, &'static str> {
        if self.cnt == 0 {
            Ok(Value::Null)
        } else if self.overflow {
            Err(OVERFLOW)
        } else if self.approx {
            Ok(Value::Real(self.r_sum))
        } else {
            Ok(Value::Integer(self.i_sum))
        }
    }

    /// `avgFinalize`: NULL over no values, else the float sum over the count.
    fn avg(&self) -> Value {
        if self.cnt == 0 {
            Value::Null
        } else {
            Value::Real(self.r_sum / self.cnt as f64)
        }
    }

    /// `totalFinalize`: the float sum, `0.0` over no values.
    fn total(&self) -> Value {
        Value::Real(self.r_sum)
    }

    /// `sumInverse`: a row leaves a window frame. Only an exact integer sum takes the integer
    /// back (SQLite's C wraps where it would overflow).
    fn inverse(&mut self, v: ValueRef<'_>) {
        match numeric(v) {
            Numeric::Null => {}
            Numeric::Int(i) if !self.approx => {
                self.cnt -= 1;
                self.r_sum -= i as f64;
                self.i_sum = self.i_sum.wrapping_sub(i);
            }
            Numeric::Int(i) => {
                self.cnt -= 1;
                self.r_sum -= i as f64;
            }
            Numeric::Real(f) => {
                self.cnt -= 1;
                self.r_sum -= f;
            }
        }
    }
}

/// The emulator's `sum`, `avg` or `total` with SQLite 3.40's arithmetic.
#[derive(Debug, Clone, Copy)]
enum Sum340 {
    Sum,
    Avg,
    Total,
}

impl Sum340 {
    /// The function's answer over `acc` (SQLite's `xFinal`, also its `xValue`).
    fn answer(self, acc: &SumCtx) -> rusqlite::Result<Value> {
        match self {
            Sum340::Sum => acc
                .sum()
                .map_err(|e| rusqlite::Error::UserFunctionError(e.into())),
            Sum340::Avg => Ok(acc.avg()),
            Sum340::Total => Ok(acc.total()),
        }
    }
}

impl Aggregate<SumCtx, Value> for Sum340 {
    fn init(&self, _: &mut Context<'_>) -> rusqlite::Result<SumCtx> {
        Ok(SumCtx::default())
    }

    fn step(&self, ctx: &mut Context<'_>, acc: &mut SumCtx) -> rusqlite::Result<()> {
        // Registered with one argument; a missing one would be NULL.
        if !ctx.is_empty() {
            acc.step(ctx.get_raw(0));
        }
        Ok(())
    }

    fn finalize(&self, _: &mut Context<'_>, acc: Option<SumCtx>) -> rusqlite::Result<Value> {
        self.answer(&acc.unwrap_or_default())
    }
}

impl WindowAggregate<SumCtx, Value> for Sum340 {
    fn value(&self, acc: Option<&mut SumCtx>) -> rusqlite::Result<Value> {
        self.answer(&acc.copied().unwrap_or_default())
    }

    fn inverse(&self, ctx: &mut Context<'_>, acc: &mut SumCtx) -> rusqlite::Result<()> {
        if !ctx.is_empty() {
            acc.inverse(ctx.get_raw(0));
        }
        Ok(())
    }
}

/// Puts SQLite 3.40's `sum`, `avg` and `total` in place of the bundled SQLite's on `conn`, as
/// aggregates and window functions alike. The engine's SQLite (3.40.1, the one Debian's and
/// most Pythons link) adds floats one by one; SQLite 3.44 and later compensate the rounding
/// (`sum` of ten `0.1` is `1.0` there, `0.9999999999999999` in 3.40): every statement the
/// emulator runs for a client (read-only SQL, actions, views) adds as the engine's does.
/// Registered once, when a connection opens.
pub(crate) fn register_sqlite340(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    for (name, function) in [
        ("sum", Sum340::Sum),
        ("avg", Sum340::Avg),
        ("total", Sum340::Total),
    ] {
        conn.create_window_function(name, 1, flags, function)?;
    }
    Ok(())
}

/// Registers [`SUM_FN`] and [`AVG_FN`] on `conn` unless it has them. Connections are opened
/// elsewhere, so this runs before each aggregate; probing is cheap, and registering again
/// would expire every cached statement of the connection.
pub(crate) fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    let probe = format!("SELECT {SUM_FN}(NULL), {AVG_FN}(NULL)");
    if prepares(conn, &probe) {
        return Ok(());
    }
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_aggregate_function(SUM_FN, 1, flags, Sum340::Sum)?;
    conn.create_aggregate_function(AVG_FN, 1, flags, Sum340::Avg)
}

// ---------------------------------------------------------------------------------------------
// Shared steps

/// The SQL of `func` over `col` (a 400 for a function the emulator does not compute).
pub(crate) fn agg_sql(func: AggregateFunc, col: &str) -> Result<String, EngineError> {
    Ok(match func {
        AggregateFunc::Count => format!("count({col})"),
        AggregateFunc::Sum => format!("{SUM_FN}({col})"),
        AggregateFunc::Avg => format!("{AVG_FN}({col})"),
        AggregateFunc::Min => format!("min({col})"),
        AggregateFunc::Max => format!("max({col})"),
        other => return Err(not_computed(other)),
    })
}

/// The value of `func` as the engine holds it: `count` and `avg` raw, the others read through
/// the column's type; NULL is 0 for `count`, `sum` and `avg`.
pub(crate) fn result_value<'a>(
    func: AggregateFunc,
    field: &Field,
    raw: ValueRef<'a>,
) -> PyValue<'a> {
    let value = match func {
        AggregateFunc::Count | AggregateFunc::Avg => plain(stored(raw)),
        // `sum`, `min` and `max`: no other function gets here (`agg_sql` refuses it first).
        _ => read(field.kind.ty, stored(raw)),
    };
    match value {
        PyValue::None if null_is_zero(func) => PyValue::Int(0),
        v => v,
    }
}

/// The value of `func` over a JSON column as the engine writes it: `sum`, `min` and `max` keep
/// the column's type, so SQLAlchemy's JSON type reads them (`json.loads` of text, numbers as
/// they are) and the JSON field writes the value; `count` and `avg` are numbers. `None` where
/// the engine fails (stored text that is not JSON). Not a JSON column: `None` too, see
/// [`encoded`].
pub(crate) fn json_result(
    func: AggregateFunc,
    field: &Field,
    raw: ValueRef<'_>,
) -> Option<Option<Json>> {
    if field.kind.ty.reflected != Reflected::Json
        || !matches!(
            func,
            AggregateFunc::Sum | AggregateFunc::Min | AggregateFunc::Max
        )
        || raw == ValueRef::Null
    {
        return None;
    }
    Some(json_column_value(stored(raw)).map(|v| py_json_to_json(&v)))
}

/// A float the engine's JSON encoder writes as `Infinity`, `-Infinity` or `NaN`: Python's
/// `json.dumps` allows them, but they are not JSON, and no JSON reader but Python's takes them.
pub(crate) fn not_json(v: &PyValue<'_>) -> bool {
    // A float's are `null` (see `Py::is_not_json`).
    matches!(v, PyValue::Decimal(_, f) if !f.is_finite())
}

/// A Python value as the engine's JSON encoder writes it (`None` for a value it cannot hold).
pub(crate) fn encoded(v: &PyValue<'_>) -> Option<Json> {
    Some(match v {
        PyValue::None => Json::Null,
        PyValue::Bool(b) => Json::Bool(*b),
        PyValue::Int(i) => Json::from(*i),
        // NaN and the infinities: a float's are `null` (`Json::from`), a `Decimal`'s refused
        // before (`not_json`) in a group.
        PyValue::Float(f) | PyValue::Decimal(_, f) => Json::from(*f),
        PyValue::Str(t) => Json::String(String::from_utf8_lossy(t).into_owned()),
        // The encoder decodes bytes as UTF-8, and fails (500) on other bytes.
        PyValue::Bytes(t) => Json::String(String::from_utf8(t.to_vec()).ok()?),
        PyValue::Date(d) => Json::String(d.iso()),
        PyValue::DateTime(d, t) => Json::String(format!("{}T{}", d.iso(), t.iso())),
        PyValue::Time(t) => Json::String(t.iso()),
        PyValue::Unreadable(_) => return None,
    })
}

/// A value through a serializer field (`None` where the engine fails).
pub(crate) fn serialized(serializer: Serializer, v: &PyValue<'_>) -> Option<Json> {
    match (serializer, v) {
        (_, PyValue::Unreadable(_)) => None,
        (_, PyValue::None) => Some(Json::Null),
        (Serializer::Value, v) => encoded(v),
        (Serializer::DateTime, PyValue::DateTime(d, t)) => {
            Some(Json::String(format!("{}T{}", d.iso(), t.iso())))
        }
        // `isoformat()` of a number or a text.
        (Serializer::DateTime, _) => None,
        (Serializer::Text, v) => py_str(v).map(Json::String),
    }
}

pub(crate) fn cannot_write(func: AggregateFunc, field: &Field) -> EngineError {
    fails(
        "_y_column",
        format!(
            "Cannot compute {func} of field {:?}: the data engine fails on its value.",
            field.name
        ),
    )
}

// ---------------------------------------------------------------------------------------------
// Group keys

/// The `strftime` format of a date lookup parameter on SQLite (the engine's MySQL-style
/// table, `%i` included), `None` when the engine has none (the column itself).
fn strftime_format(param: &str) -> Option<&'static str> {
    Some(match param {
        "microseconds" => "%Y-%m-%d %H:%i:%s.%f",
        "second" => "%Y-%m-%d %H:%i:%s",
        "minute" => "%Y-%m-%d %H:%i:00",
        "hour" => "%Y-%m-%d %H:00:00",
        "day" => "%Y-%m-%d",
        "month" => "%Y-%m-01",
        "year" => "%Y-01-01",
        _ => return None,
    })
}

fn is_date_column(field: &Field) -> bool {
    matches!(
        field.kind.ty.reflected,
        Reflected::Date | Reflected::DateTime
    )
}

/// One group key: a `strftime` of the column (raw text), or the column itself (read through
/// its type).
pub(crate) enum GroupKey<'m> {
    Strftime(&'static str, &'m Field),
    Column(&'m Field),
}

/// The engine's `get_sql_group_func_lookup` on SQLite for the lookup `raw` of `field`.
fn group_key<'m>(field: &'m Field, raw: Option<&str>) -> Result<GroupKey<'m>, EngineError> {
    Ok(
        match date_unit(&field.name, is_date_column(field), raw)?.and_then(strftime_format) {
            Some(format) => GroupKey::Strftime(format, field),
            None => GroupKey::Column(field),
        },
    )
}

/// The group keys of `summary`, by the request's lookups (none for an aggregate).
pub(crate) fn group_keys<'m>(
    summary: &Summary<'m, Field>,
) -> Result<Vec<GroupKey<'m>>, EngineError> {
    summary
        .columns
        .xs
        .iter()
        .enumerate()
        .map(|(i, x)| group_key(x, summary.lookup(i)))
        .collect()
}

/// A summary's value (not a JSON column's [`json_result`]) as its plan writes it: an
/// aggregate's by the value column's serializer field (`count`'s by an integer field, a JSON
/// field's `avg` as the number it is), a group's by the engine's JSON encoder, which refuses
/// what is not JSON. `Ok(None)` where the engine fails on the value.
pub(crate) fn y_value(
    summary: &Summary<'_, Field>,
    v: PyValue<'_>,
) -> Result<Option<Json>, EngineError> {
    let GroupColumns { y, func, .. } = summary.columns;
    Ok(match summary.written {
        Written::Serialized
            if y.kind.ty.reflected == Reflected::Json && func == AggregateFunc::Avg =>
        {
            encoded(&v)
        }
        Written::Serialized => {
            let serializer = match func {
                AggregateFunc::Count => Serializer::Value,
                _ => y.kind.ty.serializer,
            };
            serialized(serializer, &v)
        }
        Written::Encoded if not_json(&v) => return Err(not_json_refused("_y_column", &y.name)),
        Written::Encoded => encoded(&v),
    })
}

// ---------------------------------------------------------------------------------------------
// The operations

impl Resource {
    /// Computes `{"y_func": value}` over the records of `model` in `selection`, as the engine
    /// does (see the module documentation).
    pub fn aggregate(
        &self,
        model: &str,
        req: &AggregateRequest,
        selection: &Selection,
    ) -> Result<Json, EngineError> {
        let aggregate = operation::Aggregate {
            model: model.to_owned(),
            request: req.clone(),
            selection: selection.clone(),
        };
        self.run_here(&aggregate)
    }

    /// Computes `[{"group": x, ..., "y_func": value}, ...]` over the records of `model` in
    /// `selection`, as the engine does (see the module documentation).
    pub fn group(
        &self,
        model: &str,
        req: &GroupRequest,
        selection: &Selection,
    ) -> Result<Json, EngineError> {
        let group = operation::Group {
            model: model.to_owned(),
            request: req.clone(),
            selection: selection.clone(),
        };
        self.run_here(&group)
    }
}
