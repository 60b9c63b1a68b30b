//! How the data engine sees a PostgreSQL column, and how it writes the values it reads.
//!
//! The engine reflects a table with SQLAlchemy 1.4's PostgreSQL dialect, reads values through
//! psycopg2, and writes each in a record with the serializer field it picks by `str(type)`
//! (the same table as on SQLite, see [`svc_engine::types`]). On PostgreSQL that gives:
//!
//! | Column type | Record value | Filter family | `_search` |
//! | --- | --- | --- | --- |
//! | `smallint`, `integer`, `bigint` | JSON number | number | text equal |
//! | `double precision` | JSON number (Python's float form, NaN as `null`) | number | text equal |
//! | `real` | text: `str(float)`, `"1.5"` | number | text equal |
//! | `numeric`, `numeric(p, s)` | text: `str(Decimal)`, `"20.50"` | number | text equal |
//! | `boolean` | `true` / `false` | boolean | no |
//! | `date` | text `"2024-01-05"` | date | no |
//! | `timestamp`, `timestamptz` | ISO 8601 with the offset of the database's time zone, `"2024-01-05T10:00:00+00:00"` | date-time | no |
//! | `text`, `varchar`, enums | text | text | contains (`ILIKE`) |
//! | `char(n)` | text with its padding (`"ab  "`) | text | contains (`ILIKE`) |
//! | types SQLAlchemy does not know (`NullType`: `citext`, `xml`, `point`, ...) | text | text, cast to text in `ILIKE`, `isempty` is `isnull` | no |
//! | `bit`, `varbit` | text (`"1010"`) | boolean: the engine compares with a Python bool, which PostgreSQL refuses, so only `isnull` and `isempty` work | no |
//! | ranges (`int4range`, `daterange`, `tstzrange`, ...) | psycopg2's `str(Range)`: `"[1, 5)"`, `"(None, 10)"`, `"empty"`; a group by one fails | text | no |
//! | a domain | as its base type (SQLAlchemy reflects a domain as the type it is over) | | |
//! | `json`, `jsonb` | JSON | JSON | contains (the text) |
//! | arrays | JSON array (`numeric`, `real`, `double precision` items as floats: `2.0`) | JSON | no |
//! | `bytea` | Python's `repr(bytes)`: `"b'\\x01'"` | text, every value lookup fails | no |
//! | `interval` | Python's `str(timedelta)`: `"1 day, 2:00:00"` (a month is 30 days, a year 365) | text | no |
//! | `time`, `timetz` | Python's `isoformat()`: `"12:34:56.500000"`, `"12:34:56+02:00"` | text | no |
//! | `inet`, `cidr` | PostgreSQL's output (`"192.168.0.1"`, no `/32`) | text | no |
//! | `money` | PostgreSQL's output (`"$12.34"`); filter values read as floats | text | no |
//! | anything else (`uuid`, ...) | PostgreSQL's text | text | no |
//!
//! Values are read from PostgreSQL as text ([`PgKind::text_of`]: `col::text`, or the type's
//! output function where the cast differs from it, arrays as `to_json(col)`, `bytea` as hex),
//! with the session's `DateStyle` set to ISO and shortest-exact floats, and turned into the
//! engine's forms here; an aggregate's and a group's values are read with their type, as
//! psycopg2 reads them ([`read_held`]).

use svc_engine::EngineError;
use svc_engine::aggregate::fails;
use svc_engine::field_input::InputField;
use svc_engine::json_text::write_json_str;
use svc_engine::python::floats::{py_float_repr, write_py_float_repr};
use svc_engine::python::json::{parse_py_json, write_py_json};
use svc_engine::python::offset_text;
use svc_engine::python::text::py_bytes_repr;
use svc_engine::python::{MAX_TIMEDELTA_DAYS, Py, decimal_text, timedelta_str};
use svc_engine::table::EngineType;
use svc_engine::types::{FilterFamily, Search, Serializer, write_float};

/// What the engine makes of a PostgreSQL column type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PgKind {
    /// `smallint`, `integer`, `bigint`.
    Integer,
    /// `real` (`float4`): a Python float written as text.
    Real,
    /// `double precision` (`float8`).
    Double,
    /// `numeric`: a `Decimal` written as text.
    Numeric,
    /// `boolean`.
    Boolean,
    /// `date`.
    Date,
    /// `timestamp without time zone`.
    Timestamp,
    /// `timestamp with time zone`.
    TimestampTz,
    /// `text`, `varchar`, `name`.
    String,
    /// `char(n)` (`bpchar`): a SQLAlchemy `CHAR`, shown with its padding.
    Char,
    /// A type SQLAlchemy's PostgreSQL dialect does not know (`citext`, `xml`, `point`, a
    /// multirange, ...): a `NullType`, so `_search` skips it, `isempty` is `isnull` and the
    /// `ILIKE` lookups cast it to text. psycopg2 reads its values as text.
    Unknown,
    /// `bit`, `bit varying`: SQLAlchemy's `BIT`, whose filter values the engine reads as
    /// booleans (`bit = boolean` fails in PostgreSQL).
    Bit,
    /// One of the six built-in range types, which psycopg2 reads as its `Range` objects.
    Range,
    /// `bytea`: bytes, whose filters and groups make the engine fail.
    Bytea,
    /// `interval`: a Python `timedelta`.
    Interval,
    /// `time without time zone`: a Python `time`.
    Time,
    /// `time with time zone`: an aware Python `time`.
    TimeTz,
    /// `inet`, `cidr`: PostgreSQL's output form.
    Inet,
    /// `money`: PostgreSQL's output form; the engine reads filter values as floats.
    Money,
    /// An enum type: a SQLAlchemy `String` written as text, cast to text in `ILIKE`.
    Enum,
    /// `json`, `jsonb`.
    Json,
    /// An array of any element type but those of [`PgKind::NumericArray`].
    Array,
    /// An array of `numeric`, `real` or `double precision`: psycopg2 makes its items Python
    /// `Decimal`s or floats, which the engine writes as floats.
    NumericArray,
    /// Any other type: PostgreSQL's text form.
    Other,
}

impl PgKind {
    /// What the engine makes of the type ([`EngineType`]). On PostgreSQL SQLAlchemy reflects
    /// any `NOT NULL` column without a default (nor identity, nor generation) as required;
    /// its `JSON` and `JSONB` evaluate `None`.
    pub(crate) fn engine_type(self) -> EngineType {
        // An array's field writes the query's text.
        let query_object = match self {
            PgKind::Array | PgKind::NumericArray => Serializer::Text,
            kind => kind.serializer(),
        };
        let evaluates_none = self == PgKind::Json;
        EngineType {
            evaluates_none,
            ..EngineType::new(self.family(), self.input(), query_object, self.search())
        }
    }

    /// A `date`, `timestamp` or `timestamptz`: what psycopg2 reads as a Python date.
    pub(crate) fn holds_dates(self) -> bool {
        matches!(self, PgKind::Date | PgKind::Timestamp | PgKind::TimestampTz)
    }

    /// The kind of a column from `pg_type`: its name, its category (`typcategory`) and, for
    /// an array, the name of its element type.
    pub(crate) fn of(type_name: &str, category: char, element: &str) -> PgKind {
        if category == 'A' {
            return match element {
                "numeric" | "float4" | "float8" => PgKind::NumericArray,
                _ => PgKind::Array,
            };
        }
        if category == 'E' {
            return PgKind::Enum;
        }
        match type_name {
            "int2" | "int4" | "int8" => PgKind::Integer,
            "float4" => PgKind::Real,
            "float8" => PgKind::Double,
            "numeric" => PgKind::Numeric,
            "bool" => PgKind::Boolean,
            "date" => PgKind::Date,
            "timestamp" => PgKind::Timestamp,
            "timestamptz" => PgKind::TimestampTz,
            "text" | "varchar" | "name" | "char" => PgKind::String,
            "bpchar" => PgKind::Char,
            "bit" | "varbit" => PgKind::Bit,
            "int4range" | "int8range" | "numrange" | "daterange" | "tsrange" | "tstzrange" => {
                PgKind::Range
            }
            // The other types in SQLAlchemy's `ischema_names`: kept as PostgreSQL's text.
            "uuid" | "macaddr" | "macaddr8" | "oid" | "regclass" | "tsvector" | "hstore" => {
                PgKind::Other
            }
            "bytea" => PgKind::Bytea,
            "interval" => PgKind::Interval,
            "time" => PgKind::Time,
            "timetz" => PgKind::TimeTz,
            "inet" | "cidr" => PgKind::Inet,
            "money" => PgKind::Money,
            "json" | "jsonb" => PgKind::Json,
            _ => PgKind::Unknown,
        }
    }

    /// The engine's filter family of the column.
    pub(crate) fn family(self) -> FilterFamily {
        match self {
            PgKind::Integer | PgKind::Real | PgKind::Double | PgKind::Numeric => {
                FilterFamily::Number
            }
            PgKind::Boolean | PgKind::Bit => FilterFamily::Boolean,
            PgKind::Date => FilterFamily::Date,
            PgKind::Timestamp | PgKind::TimestampTz => FilterFamily::DateTime,
            PgKind::Json | PgKind::Array | PgKind::NumericArray => FilterFamily::Json,
            // Types SQLAlchemy has no filter class for take the text lookups.
            PgKind::String
            | PgKind::Char
            | PgKind::Unknown
            | PgKind::Range
            | PgKind::Bytea
            | PgKind::Interval
            | PgKind::Time
            | PgKind::TimeTz
            | PgKind::Inet
            | PgKind::Money
            | PgKind::Enum
            | PgKind::Other => FilterFamily::Text,
        }
    }

    /// How `_search` looks at the column: a number column's text equals it.
    pub(crate) fn search(self) -> Search {
        // A `NullType` (`citext`, ...) is skipped by `_search`, as are the others.
        let text_like = matches!(
            self,
            PgKind::String | PgKind::Char | PgKind::Enum | PgKind::Json
        );
        Search::of(self.family(), text_like)
    }

    /// The serializer field that reads a body value for the column.
    pub(crate) fn input(self) -> InputField {
        match self {
            PgKind::Integer => InputField::Integer,
            // `MONEY` is a `FloatField` in the engine's type table.
            PgKind::Double | PgKind::Money => InputField::Float,
            // `str(type)` is `BIT` for `bit` and `varbit` alike: the engine's table gives it a
            // `BooleanField`, whose Python bool PostgreSQL refuses for the column (`400`).
            PgKind::Boolean | PgKind::Bit => InputField::Boolean,
            PgKind::Timestamp | PgKind::TimestampTz => InputField::DateTime,
            PgKind::Json | PgKind::Array | PgKind::NumericArray => InputField::Json,
            _ => InputField::Char,
        }
    }

    /// Whether PostgreSQL reads a literal of the kind while it parses a statement (its input
    /// function is immutable): text, booleans and numbers. Dates and times depend on the
    /// session's settings and are read when the row is made.
    pub(crate) fn read_when_parsed(self) -> bool {
        matches!(
            self,
            PgKind::String
                | PgKind::Char
                | PgKind::Boolean
                | PgKind::Numeric
                | PgKind::Integer
                | PgKind::Real
                | PgKind::Double
        )
    }

    /// The serializer field that writes the column's values.
    pub(crate) fn serializer(self) -> Serializer {
        match self {
            PgKind::Integer
            | PgKind::Double
            | PgKind::Boolean
            | PgKind::Json
            | PgKind::Array
            | PgKind::NumericArray => Serializer::Value,
            PgKind::Timestamp | PgKind::TimestampTz => Serializer::DateTime,
            _ => Serializer::Text,
        }
    }

    /// Whether the column is an array.
    pub(crate) fn is_array(self) -> bool {
        matches!(self, PgKind::Array | PgKind::NumericArray)
    }

    /// The select expression that reads the column `col` (quoted) as text.
    pub(crate) fn select(self, col: &str) -> String {
        self.text_of(col)
    }

    /// An expression of this kind's type read as the text [`write_value`] takes: arrays as
    /// JSON; `bytea` as hex (whatever the server's `bytea_output`); `char(n)`, `inet` and
    /// `cidr` through their output function, which psycopg2 reads (a cast to text drops the
    /// padding of `char(n)` and adds `/32` to an `inet` host); everything else cast to text.
    pub(crate) fn text_of(self, expr: &str) -> String {
        match self {
            PgKind::Array | PgKind::NumericArray => format!("to_json({expr})::text"),
            PgKind::Bytea => format!("encode({expr}, 'hex')"),
            // `concat` writes each argument with its type's output function.
            PgKind::Char | PgKind::Inet => {
                format!("CASE WHEN ({expr}) IS NULL THEN NULL ELSE concat({expr}) END")
            }
            _ => format!("({expr})::text"),
        }
    }
}

/// A UTC offset in seconds, east positive: the engine's default time zone, which it takes
/// from `SELECT NOW()` on the database, and attaches to every date-time it writes.
pub(crate) type Offset = i32;

/// Writes a value read as PostgreSQL text (`None`: NULL) as the engine writes it in a record.
pub(crate) fn write_value(buf: &mut Vec<u8>, kind: PgKind, text: Option<&str>, tz: Offset) {
    let Some(text) = text else {
        buf.extend_from_slice(b"null");
        return;
    };
    match kind {
        PgKind::Integer => buf.extend_from_slice(text.as_bytes()),
        // `bool::text` is `true`; the output function (simple queries) says `t`.
        PgKind::Boolean => buf.extend_from_slice(if matches!(text, "t" | "true") {
            b"true"
        } else {
            b"false"
        }),
        PgKind::Double => write_float(buf, parse_float(text)),
        // Python's float text needs no JSON escape.
        PgKind::Real => {
            buf.push(b'"');
            write_py_float_repr(buf, parse_float(text));
            buf.push(b'"');
        }
        PgKind::Numeric => write_json_str(buf, &decimal_text(text)),
        PgKind::Timestamp => write_json_str(buf, &iso_timestamp(finite(kind, text), Some(tz))),
        PgKind::TimestampTz => write_json_str(buf, &iso_timestamp(finite(kind, text), None)),
        PgKind::Json | PgKind::Array => write_json_text(buf, text),
        PgKind::NumericArray => write_json_str_or_value(buf, &float_items(text)),
        PgKind::Bytea => write_json_str(buf, &bytea_repr(text)),
        PgKind::Interval => write_json_str(buf, &interval_str(text)),
        PgKind::Time => write_json_str(buf, &iso_time(text)),
        PgKind::TimeTz => write_json_str(buf, &iso_timetz(text)),
        PgKind::Range => write_json_str(buf, &range_str(text)),
        // A date's text, or psycopg2's largest or smallest for an infinite one.
        PgKind::Date
        | PgKind::String
        | PgKind::Char
        | PgKind::Unknown
        | PgKind::Bit
        | PgKind::Inet
        | PgKind::Money
        | PgKind::Enum
        | PgKind::Other => write_json_str(buf, finite(kind, text)),
    }
}

fn write_json_str_or_value(buf: &mut Vec<u8>, v: &serde_json::Value) {
    let _ = serde_json::to_writer(&mut *buf, v);
}

/// A JSON array from PostgreSQL's `to_json` with every number a float, as the engine's encoder
/// writes the `Decimal`s and floats psycopg2 makes of `numeric[]` and `float8[]` items
/// (`[1.5, 2.0]`; NaN and infinities, which `to_json` writes as strings, are `null`).
pub(crate) fn float_items(text: &str) -> serde_json::Value {
    fn floats(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Number(n) => match n.as_f64() {
                Some(f) => float_value(f),
                None => serde_json::Value::Number(n),
            },
            serde_json::Value::String(s)
                if matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity") =>
            {
                serde_json::Value::Null
            }
            serde_json::Value::Array(items) => {
                serde_json::Value::Array(items.into_iter().map(floats).collect())
            }
            other => other,
        }
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => floats(v),
        Err(_) => serde_json::Value::String(text.to_owned()),
    }
}

/// A finite float as a JSON number in Python's form (`2.0`, not `2`).
pub(crate) fn float_value(f: f64) -> serde_json::Value {
    if f.is_finite() {
        serde_json::from_str(&py_float_repr(f)).unwrap_or(serde_json::Value::Null)
    } else {
        serde_json::Value::Null
    }
}

/// psycopg2's `str()` of the `Range` it reads from a range's PostgreSQL text: `"empty"`, or
/// the bounds' brackets around `str(lower), str(upper)`, an infinite bound `None`
/// (`[1,5)` -> `"[1, 5)"`, `(,10)` -> `"(None, 10)"`). A bound is PostgreSQL's text of a number
/// or date, which `str()` gives back as it is, or of a date-time, whose `str(datetime)` has six
/// fraction digits (when it has any) and an offset `+HH:MM`.
pub(crate) fn range_str(text: &str) -> String {
    let (Some(open), Some(close)) = (text.chars().next(), text.chars().last()) else {
        return text.to_owned();
    };
    if !matches!(open, '[' | '(') || !matches!(close, ']' | ')') || text.len() < 2 {
        return text.to_owned();
    }
    let inner = &text[1..text.len() - 1];
    let mut bounds = Vec::with_capacity(2);
    let mut bound = String::new();
    let mut quoted = false;
    let mut chars = inner.chars();
    let mut any = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            '\\' => bound.extend(chars.next()),
            ',' if !quoted => {
                bounds.push((!bound.is_empty() || any).then(|| std::mem::take(&mut bound)));
                any = false;
            }
            c => bound.push(c),
        }
    }
    bounds.push((!bound.is_empty() || any).then_some(bound));
    let [lower, upper] = bounds.as_slice() else {
        return text.to_owned();
    };
    let show = |b: &Option<String>| b.as_deref().map_or_else(|| "None".to_owned(), py_bound_str);
    format!("{open}{}, {}{close}", show(lower), show(upper))
}

/// `str()` of a range bound psycopg2 reads: a date-time's fraction to six digits and its
/// offset to `+HH:MM`; anything else as PostgreSQL wrote it.
fn py_bound_str(text: &str) -> String {
    let bytes = text.as_bytes();
    let is_datetime = bytes.len() >= 19
        && bytes[4] == b'-'
        && bytes[10] == b' '
        && bytes[13] == b':'
        && bytes[16] == b':';
    if !is_datetime {
        return text.to_owned();
    }
    let (main, offset) = match text[19..].find(['+', '-']) {
        Some(at) => text.split_at(19 + at),
        None => (text, ""),
    };
    let (seconds, fraction) = main.split_at(19);
    let fraction = fraction.trim_start_matches('.');
    let mut out = seconds.to_owned();
    if !fraction.is_empty() {
        out.push('.');
        out.push_str(&micro_digits(fraction));
    }
    if !offset.is_empty() {
        let (sign, hm) = offset.split_at(1);
        let mut parts = hm.split(':');
        let hours = parts.next().unwrap_or("00");
        let minutes = parts.next().unwrap_or("00");
        out.push_str(&format!("{sign}{hours}:{minutes}"));
    }
    out
}

/// Python's `repr()` of the bytes of PostgreSQL's hex text (`encode(col, 'hex')`).
pub(crate) fn bytea_repr(hex: &str) -> String {
    py_bytes_repr(&hex_bytes(hex))
}

/// The bytes of PostgreSQL's hex text (`encode(col, 'hex')`, with or without its `\\x`).
pub(crate) fn hex_bytes(hex: &str) -> Vec<u8> {
    let hex = hex.strip_prefix("\\x").unwrap_or(hex).as_bytes();
    hex.chunks(2)
        .filter_map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// The microseconds of an `interval` in PostgreSQL's `postgres` style (`1 year 2 mons
/// -3 days -04:05:06.5`), counted as psycopg2 counts them: a year is 365 days, a month 30.
pub(crate) fn interval_micros(text: &str) -> Option<i128> {
    const DAY: i128 = 86_400_000_000;
    let mut micros: i128 = 0;
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        if word.contains(':') {
            let (negative, time) = match word.strip_prefix('-') {
                Some(t) => (true, t),
                None => (false, word.strip_prefix('+').unwrap_or(word)),
            };
            let mut parts = time.split(':');
            let hours: i128 = parts.next()?.parse().ok()?;
            let minutes: i128 = parts.next()?.parse().ok()?;
            let (seconds, fraction) = match parts.next() {
                Some(sec) => sec.split_once('.').unwrap_or((sec, "")),
                None => ("0", ""),
            };
            let seconds: i128 = seconds.parse().ok()?;
            let fraction: i128 = micro_digits(fraction).parse().ok()?;
            let value = ((hours * 60 + minutes) * 60 + seconds) * 1_000_000 + fraction;
            micros += if negative { -value } else { value };
        } else {
            let n: i128 = word.parse().ok()?;
            let unit = words.next()?;
            let days = match unit.trim_end_matches('s') {
                "year" => 365,
                "mon" => 30,
                "day" => 1,
                _ => return None,
            };
            micros += n * days * DAY;
        }
    }
    Some(micros)
}

/// Python's `str(timedelta)` of an `interval` (`"-1 day, 23:59:59"`, `"0:00:01.500000"`);
/// PostgreSQL's text when it is not an interval it reads.
pub(crate) fn interval_str(text: &str) -> String {
    match interval_micros(text) {
        // Beyond a `timedelta` (999999999 days) psycopg2 fails and so does the engine on every
        // read of the row (500); the emulator shows PostgreSQL's text, as it shows other values
        // the engine cannot read.
        Some(micros) if micros.div_euclid(86_400_000_000).abs() <= MAX_TIMEDELTA_DAYS => {
            timedelta_str(micros)
        }
        _ => text.to_owned(),
    }
}

/// The `timedelta` psycopg2 makes of an `interval`; PostgreSQL's text when it is not one it
/// reads.
pub(crate) fn interval(text: &str) -> Py {
    match interval_micros(text) {
        Some(micros) => Py::Timedelta(micros),
        None => Py::Str(text.to_owned()),
    }
}

/// Python's `isoformat()` of a `timetz` (`01:02:03+05:30`, `12:00:00+00:00`).
pub(crate) fn iso_timetz(text: &str) -> String {
    timetz(text).text().unwrap_or_default()
}

/// The aware `time` psycopg2 makes of a `timetz`.
pub(crate) fn timetz(text: &str) -> Py {
    let sign_at = text.find(['+', '-']).unwrap_or(text.len());
    let (time, offset) = text.split_at(sign_at);
    Py::Time(iso_time(time), parse_offset(offset))
}

/// PostgreSQL's float text (`1.5`, `NaN`, `-Infinity`, `1e+20`).
pub(crate) fn parse_float(text: &str) -> f64 {
    match text {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        other => other.parse().unwrap_or(f64::NAN),
    }
}

/// JSON text from PostgreSQL, written again as the engine does: psycopg2 reads it with
/// Python's `json.loads` (an integer of any size stays exact, `123456789012345678901234567890`;
/// a number with a fraction or an exponent is a float, `1e400` an infinite one, which the
/// encoder writes `null`; `-0` is the int `0`; a repeated key keeps its place and takes the
/// last value), and the engine's encoder writes it.
fn write_json_text(buf: &mut Vec<u8>, text: &str) {
    match parse_py_json(text) {
        Ok(v) => write_py_json(buf, &v),
        Err(_) => write_json_str(buf, text),
    }
}

/// PostgreSQL's text of the value psycopg2 reads for an infinite date or date-time of `kind`:
/// Python's largest or smallest (`date.max`, `datetime.min`, ...; of a `timestamptz`, aware in
/// UTC whatever the session's time zone); `text` itself for any other value or kind.
pub(crate) fn finite(kind: PgKind, text: &str) -> &str {
    match (kind, text) {
        (PgKind::Date, "infinity") => "9999-12-31",
        (PgKind::Date, "-infinity") => "0001-01-01",
        (PgKind::Timestamp, "infinity") => "9999-12-31 23:59:59.999999",
        (PgKind::Timestamp, "-infinity") => "0001-01-01 00:00:00",
        (PgKind::TimestampTz, "infinity") => "9999-12-31 23:59:59.999999+00",
        (PgKind::TimestampTz, "-infinity") => "0001-01-01 00:00:00+00",
        _ => text,
    }
}

/// Whether psycopg2 fails reading PostgreSQL's text of a date or date-time: a year Python's
/// `date` cannot hold, before year 1 (`0044-03-15 BC`) or past 9999 (`10000-01-01`). The engine
/// fails then (`500`) on every read that returns the value.
pub(crate) fn python_cannot_hold(text: &str) -> bool {
    let year = text.split('-').next().unwrap_or_default();
    text.ends_with(" BC") || (year.len() > 4 && year.bytes().all(|b| b.is_ascii_digit()))
}

/// The kind of a date or date-time by its type's name as `pg_typeof` writes it.
pub(crate) fn date_kind(ty: &str) -> Option<PgKind> {
    Some(match ty {
        "date" => PgKind::Date,
        "timestamp without time zone" => PgKind::Timestamp,
        "timestamp with time zone" => PgKind::TimestampTz,
        _ => return None,
    })
}

/// A date-time from PostgreSQL's ISO text (`2024-01-05 10:00:00.5`, with `+05:30` for
/// `timestamptz`) as Python's `isoformat()`: `T`, six digits of microseconds when not zero,
/// and the offset (`tz` for a naive value, the engine's default time zone).
pub(crate) fn iso_timestamp(text: &str, tz: Option<Offset>) -> String {
    let (date, time, offset) = timestamp_parts(text);
    let mut out = String::with_capacity(32);
    out.push_str(date);
    out.push('T');
    out.push_str(&iso_time(time));
    let seconds = if offset.is_empty() {
        tz
    } else {
        parse_offset(offset)
    };
    if let Some(seconds) = seconds {
        out.push_str(&offset_text(seconds));
    }
    out
}

/// The `datetime` psycopg2 makes of a `timestamp` or `timestamptz` text (aware with its offset).
pub(crate) fn timestamp(text: &str) -> Py {
    let (date, time, offset) = timestamp_parts(text);
    Py::DateTime(format!("{date}T{}", iso_time(time)), parse_offset(offset))
}

/// The date, the time and the offset (empty for a `timestamp`) of PostgreSQL's text of a
/// date-time.
fn timestamp_parts(text: &str) -> (&str, &str, &str) {
    let (date, rest) = text.split_once(' ').unwrap_or((text, "00:00:00"));
    // The time runs to the first sign after its digits: `10:00:00.5+05:30`.
    let sign_at = rest.find(['+', '-']).unwrap_or(rest.len());
    let (time, offset) = rest.split_at(sign_at);
    (date, time, offset)
}

/// The six digits of the microseconds of a second's `fraction` (the digits after its `.`),
/// padded with zeros or cut.
fn micro_digits(fraction: &str) -> String {
    fraction
        .chars()
        .chain(std::iter::repeat('0'))
        .take(6)
        .collect()
}

/// `HH:MM:SS[.ffffff]`: PostgreSQL drops trailing zeros of the fraction, Python keeps six
/// digits (and none when the microseconds are zero). PostgreSQL's end of the day, `24:00:00`
/// (a `time` or `timetz` may hold it), is Python's `00:00:00`: psycopg2 reads the hour modulo
/// 24 (checked on the running engine: `'24:00:00'::time` is `"00:00:00"`, `'24:00:00+05'::timetz`
/// `"00:00:00+05:00"`).
pub(crate) fn iso_time(time: &str) -> String {
    if let Some(rest) = time.strip_prefix("24:") {
        return iso_time(&format!("00:{rest}"));
    }
    match time.split_once('.') {
        Some((whole, fraction)) => {
            let digits = micro_digits(fraction);
            if digits == "000000" {
                whole.to_owned()
            } else {
                format!("{whole}.{digits}")
            }
        }
        None => time.to_owned(),
    }
}

/// `+05:30`, `-03`, `+00:53:28` as seconds east of UTC.
fn parse_offset(text: &str) -> Option<Offset> {
    let (sign, digits) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let mut seconds = 0;
    for (i, part) in digits.split(':').enumerate() {
        let n: i32 = part.parse().ok()?;
        seconds += n * [3600, 60, 1].get(i)?;
    }
    Some(sign * seconds)
}

// The values of aggregates and groups, read with their PostgreSQL type as psycopg2 reads them.

/// [`read_typed`], or the engine's failure (`500`) where psycopg2 cannot read the value: a date
/// or date-time whose year Python cannot hold (`param` and `column` name where it came from).
pub(crate) fn read_held(
    ty: &str,
    text: Option<String>,
    param: &str,
    column: &str,
) -> Result<Py, EngineError> {
    if !(date_kind(ty).is_some() && text.as_deref().is_some_and(python_cannot_hold)) {
        return Ok(read_typed(ty, text));
    }
    let why = format!(
        "A value of {column:?} here is a date whose year Python cannot hold (before 1, or past \
         9999): psycopg2 fails reading it, and the data engine with a 500. Filter such rows out."
    );
    Err(fails(param, why))
}

/// The value of PostgreSQL text `text` of type `ty` (`pg_typeof`) as psycopg2 gives it.
fn read_typed(ty: &str, text: Option<String>) -> Py {
    let Some(text) = text else {
        return Py::None;
    };
    match ty {
        // psycopg2 reads an `oid` as a Python int.
        "smallint" | "integer" | "bigint" | "oid" => Py::Int(text),
        "numeric" => Py::Decimal(text),
        "real" | "double precision" => Py::Float(parse_float(&text)),
        "boolean" => Py::Bool(matches!(text.as_str(), "t" | "true")),
        "date" => Py::Date(finite(PgKind::Date, &text).to_owned()),
        "timestamp without time zone" => timestamp(finite(PgKind::Timestamp, &text)),
        "timestamp with time zone" => timestamp(finite(PgKind::TimestampTz, &text)),
        "json" | "jsonb" => Py::Json(text),
        // `bytea`, from its hex text: bytes, which the engine's encoder decodes as UTF-8.
        "bytea" => Py::Bytes(hex_bytes(&text)),
        "interval" => interval(&text),
        "time without time zone" => Py::Time(iso_time(&text), None),
        "time with time zone" => timetz(&text),
        // An array, from `to_json`: its `Decimal`s and floats as floats.
        array if array.ends_with("[]") => Py::List(
            if array.starts_with("numeric")
                || array.starts_with("real")
                || array.starts_with("double precision")
            {
                float_items(&text)
            } else {
                serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
            },
        ),
        _ => Py::Str(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(kind: PgKind, text: Option<&str>) -> String {
        let mut buf = Vec::new();
        write_value(&mut buf, kind, text, 0);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn values_are_written_as_the_engine_writes_them() {
        assert_eq!(written(PgKind::Integer, Some("42")), "42");
        assert_eq!(written(PgKind::Integer, None), "null");
        assert_eq!(written(PgKind::Double, Some("3")), "3.0");
        assert_eq!(written(PgKind::Double, Some("1e+20")), "1e+20");
        assert_eq!(written(PgKind::Double, Some("NaN")), "null");
        assert_eq!(written(PgKind::Real, Some("1.5")), "\"1.5\"");
        assert_eq!(written(PgKind::Numeric, Some("20.50")), "\"20.50\"");
        assert_eq!(written(PgKind::Numeric, Some("0.0000001")), "\"1E-7\"");
        assert_eq!(written(PgKind::Boolean, Some("t")), "true");
        assert_eq!(written(PgKind::Date, Some("2024-01-05")), "\"2024-01-05\"");
        assert_eq!(
            written(PgKind::Timestamp, Some("2024-01-05 10:00:00.5")),
            "\"2024-01-05T10:00:00.500000+00:00\""
        );
        assert_eq!(
            written(PgKind::TimestampTz, Some("2024-01-05 10:00:00+05:30")),
            "\"2024-01-05T10:00:00+05:30\""
        );
        assert_eq!(
            written(PgKind::Json, Some("{\"a\": [1, 2.5]}")),
            "{\"a\":[1,2.5]}"
        );
        assert_eq!(
            written(PgKind::String, Some("Zoë \"q\"")),
            "\"Zoë \\\"q\\\"\""
        );
    }

    /// Values as the running engine (jet-bridge 1.12.13, psycopg2 2.9, PostgreSQL 15) wrote
    /// them in records.
    #[test]
    fn other_types_are_written_from_the_python_objects_psycopg2_makes() {
        assert_eq!(written(PgKind::Bytea, Some("0102")), r#""b'\\x01\\x02'""#);
        assert_eq!(written(PgKind::Bytea, Some("27")), r#""b\"'\"""#);
        assert_eq!(written(PgKind::Bytea, Some("")), r#""b''""#);
        assert_eq!(
            written(PgKind::Bytea, Some("5c0a0d097f80ff41")),
            r#""b'\\\\\\n\\r\\t\\x7f\\x80\\xffA'""#
        );
        for (pg, python) in [
            ("1 day 02:00:00", "1 day, 2:00:00"),
            ("3 mons 4 days", "94 days, 0:00:00"),
            (
                "1 year 2 mons -3 days -04:05:06.5",
                "421 days, 19:54:53.500000",
            ),
            ("-1 days +02:00:00", "-1 day, 2:00:00"),
            ("-00:00:01", "-1 day, 23:59:59"),
            ("100 years", "36500 days, 0:00:00"),
            ("00:00:01.5", "0:00:01.500000"),
            ("-1 years", "-365 days, 0:00:00"),
        ] {
            assert_eq!(interval_str(pg), python, "{pg}");
        }
        assert_eq!(interval_str("100000000 years"), "100000000 years");
        let seconds = |pg: &str| interval(pg).encoded();
        assert_eq!(seconds("1 day 02:00:00"), "93600.0");
        assert_eq!(seconds("1 year 2 mons -3 days -04:05:06.5"), "36446093.5");
        assert_eq!(seconds("-1 years"), "-31536000.0");
        assert_eq!(
            written(PgKind::Time, Some("12:34:56.5")),
            r#""12:34:56.500000""#
        );
        assert_eq!(written(PgKind::Time, Some("00:00:00")), r#""00:00:00""#);
        assert_eq!(
            written(PgKind::TimeTz, Some("12:34:56+02")),
            r#""12:34:56+02:00""#
        );
        assert_eq!(
            written(PgKind::TimeTz, Some("01:02:03-00:00:10")),
            r#""01:02:03-00:00:10""#
        );
        assert_eq!(
            written(PgKind::TimeTz, Some("23:00:00-05")),
            r#""23:00:00-05:00""#
        );
        assert_eq!(written(PgKind::NumericArray, Some("[1.5,2]")), "[1.5,2.0]");
        assert_eq!(
            written(PgKind::Array, Some("[[1,2],[3,4]]")),
            "[[1,2],[3,4]]"
        );
        assert_eq!(written(PgKind::Char, Some("ab  ")), r#""ab  ""#);
    }

    /// psycopg2's readings, as the running engine wrote them: JSON through Python's
    /// `json.loads` (integers of any size exact, `-0` the int 0, `1e400` an infinite float the
    /// encoder writes `null`), the end of the day `24:00:00` as `00:00:00`.
    #[test]
    fn json_numbers_and_the_end_of_the_day_are_read_as_psycopg2_reads_them() {
        assert_eq!(
            written(
                PgKind::Json,
                Some(
                    r#"{"a": 123456789012345678901234567890, "b": -0, "c": 1e2, "d": [1e400, -0.0]}"#
                )
            ),
            r#"{"a":123456789012345678901234567890,"b":0,"c":100.0,"d":[null,-0.0]}"#
        );
        assert_eq!(
            written(PgKind::Json, Some("18446744073709551616")),
            "18446744073709551616"
        );
        assert_eq!(written(PgKind::Time, Some("24:00:00")), r#""00:00:00""#);
        assert_eq!(
            written(PgKind::TimeTz, Some("24:00:00+05")),
            r#""00:00:00+05:00""#
        );
        assert_eq!(
            written(PgKind::Time, Some("23:59:59.5")),
            r#""23:59:59.500000""#
        );
    }

    #[test]
    fn offsets_read_and_print_like_python() {
        assert_eq!(parse_offset("+05:30"), Some(19_800));
        assert_eq!(parse_offset("-03"), Some(-10_800));
        assert_eq!(parse_offset("+00:53:28"), Some(3208));
        assert_eq!(
            iso_timestamp("2024-01-05 10:00:00", Some(3600)),
            "2024-01-05T10:00:00+01:00"
        );
    }

    #[test]
    fn kinds_follow_the_type_names() {
        assert_eq!(PgKind::of("int8", 'N', ""), PgKind::Integer);
        assert_eq!(PgKind::of("_int4", 'A', "int4"), PgKind::Array);
        assert_eq!(PgKind::of("_numeric", 'A', "numeric"), PgKind::NumericArray);
        assert_eq!(PgKind::of("mood", 'E', ""), PgKind::Enum);
        assert_eq!(PgKind::of("uuid", 'U', ""), PgKind::Other);
        assert_eq!(PgKind::of("citext", 'S', ""), PgKind::Unknown);
        assert_eq!(PgKind::of("xml", 'U', ""), PgKind::Unknown);
        assert_eq!(PgKind::of("point", 'G', ""), PgKind::Unknown);
        assert_eq!(PgKind::Unknown.search(), Search::Skip);
        assert_eq!(PgKind::of("varbit", 'V', ""), PgKind::Bit);
        assert_eq!(PgKind::Bit.family(), FilterFamily::Boolean);
        assert_eq!(PgKind::of("tstzrange", 'R', ""), PgKind::Range);
        assert_eq!(PgKind::of("oid", 'N', ""), PgKind::Other);
        assert_eq!(PgKind::Numeric.family(), FilterFamily::Number);
        assert_eq!(PgKind::Json.search(), Search::Contains);
    }

    #[test]
    fn values_are_encoded_as_the_engine_encodes_them() {
        let v = read_typed("numeric", Some("151.48".to_owned()));
        assert_eq!(v.encoded(), serde_json::json!(151.48));
        assert_eq!(v.text().as_deref(), Some("151.48"));
        let v = read_typed("bigint", Some("12".to_owned()));
        assert_eq!(v.encoded(), serde_json::json!(12));
        let v = read_typed(
            "timestamp with time zone",
            Some("2024-01-01 00:00:00+00".to_owned()),
        );
        assert_eq!(v.encoded(), serde_json::json!("2024-01-01T00:00:00Z"));
        let v = read_typed(
            "timestamp without time zone",
            Some("2024-01-01 10:00:00".to_owned()),
        );
        assert_eq!(v.encoded(), serde_json::json!("2024-01-01T10:00:00"));
        assert_eq!(v.text().as_deref(), Some("2024-01-01 10:00:00"));
        assert_eq!(
            read_typed("double precision", Some("NaN".to_owned())).encoded(),
            serde_json::Value::Null
        );
        assert_eq!(
            Py::Decimal("2.50".to_owned()).text().as_deref(),
            Some("2.50")
        );
    }

    /// `sum` of a `bigint` column is a `numeric`, which the engine writes as a float: the
    /// running engine answered `9007199254740991.0` for the one value 9007199254740991.
    #[test]
    fn big_sums_keep_every_digit() {
        let v = read_typed("numeric", Some("9007199254740991".to_owned())).encoded();
        assert_eq!(v.to_string(), "9007199254740991.0");
        let v = read_typed("numeric", Some("9007199254740993".to_owned())).encoded();
        assert_eq!(v.to_string(), "9007199254740992.0");
    }
}
