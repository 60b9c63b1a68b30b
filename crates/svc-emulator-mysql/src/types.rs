//! How the data engine sees a MySQL column, and how it writes the values it reads.
//!
//! The engine reflects a table with SQLAlchemy 1.4's MySQL dialect, reads values through
//! PyMySQL (MySQL's text protocol), and writes each in a record with the serializer field it
//! picks by `str(type)` (the same table as on the other databases). On MariaDB 10.11 that
//! gives (checked on the running engine):
//!
//! | Column type | Record value | Filter family | `_search` |
//! | --- | --- | --- | --- |
//! | `TINYINT` (`BOOLEAN` too), `SMALLINT`, `INT`, `BIGINT`, signed or not | JSON number (`18446744073709551615` kept whole) | number | text equal |
//! | `MEDIUMINT` | text: `"7"` | number | text equal |
//! | `DECIMAL(p, s)`, `NUMERIC` | text: `str(Decimal)` with the scale, `"20.50"`, `"1.000E-7"` | number | text equal |
//! | `DOUBLE`, `REAL` | text: a `Decimal` of ten places, `"1.5000000000"` | number | text equal |
//! | `FLOAT` | JSON number, from MySQL's six-digit text (`1234570.0`) | number | text equal |
//! | `DATE` | text `"2024-01-05"` | date | no |
//! | `DATETIME`, `TIMESTAMP` | ISO 8601 with the offset of the database's time zone | date-time | no |
//! | `TIME` | a time of day (`"01:00:01"` for `25:00:01`: SQLAlchemy keeps the seconds of the day) | text | no |
//! | `YEAR` | text `"2024"` | text | no |
//! | `CHAR`, `VARCHAR`, `TEXT`s, `ENUM`, MariaDB's `JSON` (a `LONGTEXT`) | text | text | contains |
//! | `SET` | Python's `str(set)`: `"{'x', 'y'}"` (members in this start's set order, `set_members`), `"set()"` | text | contains |
//! | MySQL's `JSON` | JSON | JSON | contains |
//! | `BIT` | JSON number | text | no |
//! | `BINARY`, `VARBINARY` | hex text: `"0102"` | text, only `isnull`/`isempty` | no |
//! | `BLOB`s | Python's `repr(bytes)`: `"b'A'"` | text, only `isnull`/`isempty` | no |
//! | anything else | the server's text | text | no |
//!
//! PyMySQL reads MySQL's text: a `FLOAT` as MySQL prints it (six significant digits), a
//! `DOUBLE` in its shortest exact form; values here come through the binary protocol and are
//! rounded the same way ([`float_text`], [`double_text`]).
//!
//! An aggregate or a group (`flow::aggregate`) reads each value with the Python type PyMySQL
//! gives it, through SQLAlchemy's result processing of the column's type for `sum`, `min` and
//! `max` (a `DOUBLE` becomes a `Decimal` of ten places; `avg` has no type), and writes it as the
//! engine writes it: an aggregate by the y column's serializer field, group rows by the engine's
//! JSON encoder (a `Decimal` as a float, date-times naive).

use std::str::FromStr;

use mysql_async::consts::ColumnType;
use mysql_async::{Row, Value};
use serde_json::Value as Json;

use crate::schema::MyField;
use svc_engine::aggregate::fails;
use svc_engine::field_input::InputField;
use svc_engine::json_text::write_json_str;
use svc_engine::python::floats::py_float_repr;
use svc_engine::python::json::{parse_py_json, write_py_json};
use svc_engine::python::offset_text;
use svc_engine::python::sets::{HashKey, set_order};
use svc_engine::python::text::hexlify;
use svc_engine::python::text::py_bytes_repr;
use svc_engine::python::{Py, set_str as py_set_str, time_of_day};
use svc_engine::table::EngineType;
use svc_engine::types::{Date, FilterFamily, Search, Serializer, decimal_str, write_float};
use svc_engine::{AggregateFunc, EngineError};

/// What the engine makes of a MySQL column type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MyKind {
    /// `TINYINT`, `SMALLINT`, `INT`, `BIGINT`: JSON numbers.
    Integer,
    /// `MEDIUMINT`: an int written as text (`str(type)` is not in the engine's table).
    MediumInt,
    /// `DECIMAL`, `NUMERIC`: a `Decimal` written as text.
    Decimal,
    /// `DOUBLE`, `REAL`: SQLAlchemy's MySQL `DOUBLE` is a `Decimal` of ten places, as text.
    Double,
    /// `FLOAT`: a Python float.
    Float,
    /// `DATE`.
    Date,
    /// `DATETIME`, `TIMESTAMP`.
    DateTime,
    /// `TIME`: a `time` of day.
    Time,
    /// `YEAR`: an int written as text.
    Year,
    /// `CHAR`, `VARCHAR`, the `TEXT`s (MariaDB's `JSON` among them).
    String,
    /// `ENUM`.
    Enum,
    /// `SET`: a Python set, written with `str()`.
    Set,
    /// MySQL's `JSON`.
    Json,
    /// `BIT`: an int.
    Bit,
    /// `BINARY`, `VARBINARY`: hex.
    Binary,
    /// The `BLOB`s: `repr(bytes)`.
    Blob,
    /// Anything else: the server's text.
    Other,
}

impl MyKind {
    /// What the engine makes of the type ([`EngineType`]).
    ///
    /// SQLAlchemy's MySQL reflection marks only integer columns as not autoincrement, and the
    /// serializer requires a column that is not autoincrement, has no default and is
    /// `NOT NULL`; every other column's `autoincrement` is SQLAlchemy's truthy `"auto"`.
    ///
    /// MySQL 8's `JSON` reflects as SQLAlchemy's `mysql.JSON`, which evaluates `None` (it is
    /// among the mapper's `_insert_cols_evaluating_none`, SQLAlchemy 1.4.54). MariaDB's `JSON`
    /// is a `LONGTEXT` and reflects as text.
    pub(crate) fn engine_type(self) -> EngineType {
        let plain = EngineType::new(
            self.family(),
            self.input(),
            self.serializer(),
            self.search(),
        );
        EngineType {
            may_be_required: matches!(self, MyKind::Integer | MyKind::MediumInt),
            evaluates_none: self == MyKind::Json,
            ..plain
        }
    }

    /// The kind of a column from `information_schema.COLUMNS`: `DATA_TYPE` and `COLUMN_TYPE`.
    pub(crate) fn of(data_type: &str, _column_type: &str) -> MyKind {
        match data_type.to_ascii_lowercase().as_str() {
            "tinyint" | "smallint" | "int" | "integer" | "bigint" => MyKind::Integer,
            "mediumint" => MyKind::MediumInt,
            "decimal" | "numeric" => MyKind::Decimal,
            "double" | "real" | "double precision" => MyKind::Double,
            "float" => MyKind::Float,
            "date" => MyKind::Date,
            "datetime" | "timestamp" => MyKind::DateTime,
            "time" => MyKind::Time,
            "year" => MyKind::Year,
            "char" | "varchar" | "tinytext" | "text" | "mediumtext" | "longtext" => MyKind::String,
            "enum" => MyKind::Enum,
            "set" => MyKind::Set,
            "json" => MyKind::Json,
            "bit" => MyKind::Bit,
            "binary" | "varbinary" => MyKind::Binary,
            "tinyblob" | "blob" | "mediumblob" | "longblob" => MyKind::Blob,
            _ => MyKind::Other,
        }
    }

    /// The engine's filter family of the column.
    pub(crate) fn family(self) -> FilterFamily {
        match self {
            MyKind::Integer
            | MyKind::MediumInt
            | MyKind::Decimal
            | MyKind::Double
            | MyKind::Float => FilterFamily::Number,
            MyKind::Date => FilterFamily::Date,
            MyKind::DateTime => FilterFamily::DateTime,
            MyKind::Json => FilterFamily::Json,
            MyKind::Time
            | MyKind::Year
            | MyKind::String
            | MyKind::Enum
            | MyKind::Set
            | MyKind::Bit
            | MyKind::Binary
            | MyKind::Blob
            | MyKind::Other => FilterFamily::Text,
        }
    }

    /// How `_search` looks at the column: a number column's text equals it.
    pub(crate) fn search(self) -> Search {
        let text_like = matches!(
            self,
            MyKind::String | MyKind::Enum | MyKind::Set | MyKind::Json
        );
        Search::of(self.family(), text_like)
    }

    /// The serializer field that reads a body value for the column.
    pub(crate) fn input(self) -> InputField {
        match self {
            MyKind::Integer => InputField::Integer,
            MyKind::Float => InputField::Float,
            MyKind::Bit => InputField::Boolean,
            MyKind::DateTime => InputField::DateTime,
            MyKind::Json => InputField::Json,
            // `str(type)` is `BINARY(n)` / `VARBINARY(n)`: the engine's `BinaryField`.
            MyKind::Binary => InputField::Binary,
            _ => InputField::Char,
        }
    }

    /// Whether the column holds bytes (SQLAlchemy's binary types, which cannot bind text).
    pub(crate) fn is_bytes(self) -> bool {
        matches!(self, MyKind::Binary | MyKind::Blob)
    }

    /// Whether the serializer writes the value itself (a JSON number, boolean or JSON).
    pub(crate) fn writes_value(self) -> bool {
        matches!(
            self,
            MyKind::Integer | MyKind::Float | MyKind::Bit | MyKind::Json
        )
    }

    /// The serializer field that writes the column's values.
    pub(crate) fn serializer(self) -> Serializer {
        match self {
            kind if kind.writes_value() => Serializer::Value,
            MyKind::DateTime => Serializer::DateTime,
            _ => Serializer::Text,
        }
    }

    /// The select expression that reads the column `col` (qualified and quoted).
    pub(crate) fn select(self, col: &str) -> String {
        col.to_owned()
    }
}

/// A UTC offset in seconds, east positive: the engine's default time zone, which it takes
/// from `TIMEDIFF(NOW(), UTC_TIMESTAMP)` on the database, and attaches to every date-time.
pub(crate) type Offset = i32;

/// The float PyMySQL reads from MySQL's text of a `FLOAT`: six significant digits.
pub(crate) fn float_text(f: f32) -> f64 {
    if !f.is_finite() {
        return 0.0;
    }
    format!("{f:.5e}").parse().unwrap_or(f64::from(f))
}

/// The float PyMySQL reads from MySQL's text of a `DOUBLE`: the shortest text that reads
/// back as the same double (`0.30000000000000004`), so the double itself. An infinite one (a
/// `SUM` or `AVG` past the largest double, which MariaDB computes without an error) is `0` in
/// MariaDB's text, where the binary protocol the emulator reads gives the infinity.
pub(crate) fn double_text(f: f64) -> f64 {
    if f.is_finite() { f } else { 0.0 }
}

/// `str(Decimal("%.10f" % value))`: SQLAlchemy's MySQL `DOUBLE` value.
pub(crate) fn double_decimal(f: f64) -> String {
    decimal_str(&format!("{f:.10}"))
}

/// The `i`th cell of a row, as the driver read it (NULL past the row's end): every cell the
/// crate reads is read here, or through the helpers below.
pub(crate) fn cell(row: &Row, i: usize) -> &Value {
    row.as_ref(i).unwrap_or(&Value::NULL)
}

/// The `i`th cell as text ([`value_text`]); `None` for NULL.
pub(crate) fn cell_text(row: &Row, i: usize) -> Option<String> {
    value_text(cell(row, i))
}

/// The `i`th cell as a number (an integer, or its digits as the text protocol sends them);
/// `None` for NULL or for another value.
pub(crate) fn cell_number<N: FromStr>(row: &Row, i: usize) -> Option<N> {
    cell_text(row, i)?.parse().ok()
}

/// The `i`th cell as a truth (MySQL's `1` and `0`): a number other than `0`.
pub(crate) fn cell_truth(row: &Row, i: usize) -> bool {
    cell_number::<i64>(row, i).is_some_and(|n| n != 0)
}

/// A value as text: the server's text for strings and decimals, numbers as digits.
pub(crate) fn value_text(v: &Value) -> Option<String> {
    Some(match v {
        Value::NULL => return None,
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => py_float_repr(float_text(*f)),
        Value::Double(f) => py_float_repr(double_text(*f)),
        Value::Date(..) => datetime_text(v).unwrap_or_default(),
        Value::Time(..) => time_text(v).unwrap_or_default(),
    })
}

/// A float value (of a `FLOAT` or `DOUBLE` column, or its text).
pub(crate) fn value_float(v: &Value) -> Option<f64> {
    match v {
        Value::Float(f) => Some(float_text(*f)),
        Value::Double(f) => Some(double_text(*f)),
        Value::Int(i) => Some(*i as f64),
        Value::UInt(u) => Some(*u as f64),
        Value::Bytes(b) => std::str::from_utf8(b).ok()?.trim().parse().ok(),
        _ => None,
    }
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]` of a date-time value (Python's `str(datetime)`), or
/// `YYYY-MM-DD` of a date.
pub(crate) fn datetime_text(v: &Value) -> Option<String> {
    match v {
        Value::Date(y, mo, d, h, mi, s, us) => Some(format!(
            "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}{}",
            if *us == 0 {
                String::new()
            } else {
                format!(".{us:06}")
            }
        )),
        _ => bytes_text(v),
    }
}

/// `YYYY-MM-DD` of a date value.
pub(crate) fn date_text(v: &Value) -> Option<String> {
    match v {
        Value::Date(y, mo, d, ..) => Some(format!("{y:04}-{mo:02}-{d:02}")),
        _ => bytes_text(v),
    }
}

/// The text of a value the server sent as text (the text protocol's), else nothing.
fn bytes_text(v: &Value) -> Option<String> {
    match v {
        Value::Bytes(b) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

/// Python's `isoformat()` of the `time` SQLAlchemy makes of a `TIME` value: the seconds of
/// the day (`25:00:01` is `01:00:01`, `-01:30:00` is `22:30:00`), microseconds when not zero.
pub(crate) fn time_text(v: &Value) -> Option<String> {
    time_micros(v).map(|micros| time_of_day(micros.into()))
}

/// The microseconds of a `TIME` value (the `timedelta` PyMySQL makes of it), signed
/// (`-01:00:00` is `-3600000000`).
pub(crate) fn time_micros(v: &Value) -> Option<i64> {
    let micros: i64 = match v {
        Value::Time(negative, days, h, m, s, us) => {
            let total =
                ((i64::from(*days) * 24 + i64::from(*h)) * 60 + i64::from(*m)) * 60 + i64::from(*s);
            let micros = total * 1_000_000 + i64::from(*us);
            if *negative { -micros } else { micros }
        }
        Value::Bytes(b) => parse_time(std::str::from_utf8(b).ok()?)?,
        _ => return None,
    };
    Some(micros)
}

/// MySQL's `[-]HHH:MM:SS[.ffffff]` as microseconds.
fn parse_time(text: &str) -> Option<i64> {
    let (negative, text) = match text.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, text),
    };
    let mut parts = text.split(':');
    let h: i64 = parts.next()?.parse().ok()?;
    let m: i64 = parts.next()?.parse().ok()?;
    let seconds = parts.next()?;
    let (s, frac) = seconds.split_once('.').unwrap_or((seconds, ""));
    let s: i64 = s.parse().ok()?;
    let frac: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
    let us: i64 = frac.parse().ok()?;
    let micros = ((h * 60 + m) * 60 + s) * 1_000_000 + us;
    Some(if negative { -micros } else { micros })
}

/// Whether a date or date-time value is a date Python has (PyMySQL keeps MySQL's text of any
/// other, `0000-00-00` among them).
pub(crate) fn python_date(v: &Value) -> bool {
    matches!(v, Value::Date(y, mo, d, ..) if Date {
        year: u32::from(*y),
        month: u32::from(*mo),
        day: u32::from(*d),
    }
    .valid())
}

/// A value of a result column of MySQL's type `ty` as PyMySQL gives it: bytes where the
/// column's character set is `binary` (`bytes`), a `TIME` as a `timedelta`, a date Python has
/// none for as MySQL's text (a date-time's with `decimals` fractional digits).
pub(crate) fn py_value(ty: ColumnType, bytes: bool, decimals: u8, v: &Value) -> Py {
    let text = || value_text(v).unwrap_or_default();
    match (ty, v) {
        (_, Value::NULL) => Py::None,
        (ColumnType::MYSQL_TYPE_NEWDECIMAL | ColumnType::MYSQL_TYPE_DECIMAL, _) => {
            Py::Decimal(text())
        }
        (
            ColumnType::MYSQL_TYPE_TINY
            | ColumnType::MYSQL_TYPE_SHORT
            | ColumnType::MYSQL_TYPE_LONG
            | ColumnType::MYSQL_TYPE_LONGLONG
            | ColumnType::MYSQL_TYPE_INT24
            | ColumnType::MYSQL_TYPE_YEAR,
            _,
        ) => Py::Int(text()),
        (ColumnType::MYSQL_TYPE_FLOAT | ColumnType::MYSQL_TYPE_DOUBLE, _) => {
            Py::Float(value_float(v).unwrap_or(f64::NAN))
        }
        (ColumnType::MYSQL_TYPE_DATE | ColumnType::MYSQL_TYPE_NEWDATE, _) => {
            Py::Date(date_text(v).unwrap_or_default())
        }
        (
            ColumnType::MYSQL_TYPE_DATETIME
            | ColumnType::MYSQL_TYPE_DATETIME2
            | ColumnType::MYSQL_TYPE_TIMESTAMP
            | ColumnType::MYSQL_TYPE_TIMESTAMP2,
            _,
        ) => match v {
            Value::Date(y, mo, d, h, mi, s, us) if !python_date(v) => {
                let mut text = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
                if decimals > 0 && decimals <= 6 {
                    text.push('.');
                    text.push_str(&format!("{us:06}")[..usize::from(decimals)]);
                }
                Py::Str(text)
            }
            _ => Py::DateTime(iso_datetime(v, None).unwrap_or_default(), None),
        },
        (ColumnType::MYSQL_TYPE_TIME | ColumnType::MYSQL_TYPE_TIME2, _) => match time_micros(v) {
            Some(micros) => Py::Timedelta(micros.into()),
            None => Py::Str(text()),
        },
        (ColumnType::MYSQL_TYPE_JSON, _) => Py::Json(text()),
        (_, Value::Bytes(b)) if bytes => Py::Bytes(b.clone()),
        _ => Py::Str(text()),
    }
}

/// Python's `isoformat()` of a date-time value, with `tz` attached when given.
pub(crate) fn iso_datetime(v: &Value, tz: Option<Offset>) -> Option<String> {
    let text = datetime_text(v)?;
    let mut iso = text.replacen(' ', "T", 1);
    if !iso.contains('T') {
        iso.push_str("T00:00:00");
    }
    if let Some(tz) = tz {
        iso.push_str(&offset_text(tz));
    }
    Some(iso)
}

/// Python's `str()` of the set SQLAlchemy makes of a `SET` value (`"{'a', 'c'}"`, `"set()"`),
/// members in the order of this start's Python set ([`set_members`]).
pub(crate) fn set_str(text: &str) -> String {
    py_set_str(&set_members(text))
}

/// The members of a `SET` value's text as the engine's set holds them: SQLAlchemy's MySQL
/// `SET` reads the text into a Python set (`set(re.findall(r"[^,]+", value))`, no empty member;
/// `sqlalchemy/dialects/mysql/enumerated.py`, `SET.result_processor`), and the engine writes
/// its members in the set's iteration order: a record's `CharField` with `str()`
/// (`"{'a', 'c'}"`), a group key or value through its JSON encoder's `clean_obj` as a list. That
/// order follows Python's string hashes, keyed anew at each start of the engine, so a test that
/// depends on it fails there now and then; the emulator keys its own at its start
/// ([`set_order`], [`HashKey::of_process`]).
pub(crate) fn set_members(text: &str) -> Vec<String> {
    let items = text
        .split(',')
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect();
    set_order(HashKey::of_process(), items)
}

/// A `BIT` value's bytes as the int SQLAlchemy folds them into.
pub(crate) fn bit_value(v: &Value) -> u128 {
    value_bytes(v)
        .iter()
        .fold(0u128, |n, b| (n << 8) | u128::from(*b))
}

/// The bytes of a value (`BIT`, `BINARY`, blobs).
pub(crate) fn value_bytes(v: &Value) -> Vec<u8> {
    match v {
        Value::Bytes(b) => b.clone(),
        other => value_text(other).unwrap_or_default().into_bytes(),
    }
}

/// A result cell as PyMySQL gives it, and SQLAlchemy's `TIME` a time of day of its
/// `timedelta` (a JSON value stays its text).
pub(crate) fn read_cell(row: &Row, i: usize) -> Py {
    let ty = row
        .columns_ref()
        .get(i)
        .map_or(ColumnType::MYSQL_TYPE_VAR_STRING, |c| c.column_type());
    match py_value(ty, false, 0, cell(row, i)) {
        Py::Timedelta(micros) => Py::Time(time_of_day(micros), None),
        Py::Json(text) => Py::Str(text),
        v => v,
    }
}

/// SQLAlchemy's result processing of a value typed as the column `kind` (`sum`, `min`,
/// `max` and plain group keys): a `DOUBLE` is a `Decimal` of ten places.
pub(crate) fn typed(v: Py, kind: MyKind) -> Py {
    match (kind, v) {
        (MyKind::Double, Py::Float(f)) => Py::Decimal(double_decimal(f)),
        (MyKind::Double, Py::Decimal(d)) => match d.parse::<f64>() {
            Ok(f) => Py::Decimal(double_decimal(f)),
            Err(_) => Py::Decimal(d),
        },
        (_, v) => v,
    }
}

/// A `sum`, `min`, `max` or plain group key of the column `field`, read through SQLAlchemy's
/// result processing of the column's type: a `BIT` folds the bytes PyMySQL gives (the column's
/// own bytes, or the digits of the text MySQL gives `max`) into an int, a `SET` splits its
/// text into a set, bytes stay bytes.
/// A set's members are in the order of this start's Python set ([`set_members`]).
pub(crate) fn typed_cell(row: &Row, i: usize, field: &MyField) -> Py {
    let raw = cell(row, i);
    if *raw == Value::NULL {
        return Py::None;
    }
    match field.kind {
        MyKind::Bit => Py::Int(bit_value(raw).to_string()),
        MyKind::Set => Py::Set(set_members(&value_text(raw).unwrap_or_default())),
        MyKind::Binary | MyKind::Blob => Py::Bytes(value_bytes(raw)),
        kind => typed(read_cell(row, i), kind),
    }
}

/// The aggregate's value written by the y column's serializer field (an integer field for
/// `count`).
pub(crate) fn serialized(func: AggregateFunc, field: &MyField, v: &Py, tz: Offset) -> Json {
    match (field.kind, v) {
        _ if func == AggregateFunc::Count => v.encoded(),
        // `BINARY`/`VARBINARY` are written as hex, blobs as `repr(bytes)` (as in a record);
        // the engine's `BinaryField` writes anything but bytes (an `avg`) as `None`.
        (MyKind::Binary, Py::Bytes(b)) => Json::String(hexlify(b)),
        (MyKind::Binary, _) => Json::Null,
        (kind, v) => v.serialized(kind.serializer(), tz),
    }
}

/// A group value as the engine's JSON encoder writes it: bytes are decoded as UTF-8, and bytes
/// that are not UTF-8 make it fail (`500`). (It writes a set as a list.)
pub(crate) fn encodable(v: &Py, param: &str, field: &MyField) -> Result<Json, EngineError> {
    v.encodable().ok_or_else(|| {
        fails(
            param,
            format!(
                "Cannot group by or show the field {:?}: a value's bytes are not UTF-8, which \
                 the data engine's JSON encoder fails on (500).",
                field.name
            ),
        )
    })
}

/// `sum` of an `ENUM`, `SET`, `BIT`, `BINARY`/`VARBINARY`, blob or `TIME` that MySQL made a
/// number of: SQLAlchemy's result processing of the column's type cannot read it (an enum's
/// member is looked up, a set split from text, a bit folded from bytes, a time read as a
/// `timedelta`; the engine fails, `500`). A sum over no row is NULL, which every processor
/// passes: the engine answers its `0`.
pub(crate) fn unreadable_sum(
    field: &MyField,
    func: AggregateFunc,
    value: &Py,
) -> Result<(), EngineError> {
    if func == AggregateFunc::Sum
        && *value != Py::None
        && matches!(
            field.kind,
            MyKind::Enum | MyKind::Set | MyKind::Bit | MyKind::Binary | MyKind::Blob | MyKind::Time
        )
    {
        return Err(fails(
            "_y_func",
            format!(
                "sum of the field {:?} is a number, which the data engine's type for the column \
                 cannot read back (it fails with a 500).",
                field.name
            ),
        ));
    }
    Ok(())
}

/// `func` of the date-time `field` is `what` the engine's date-time field cannot write (it
/// fails, `500`): a number, or a date Python has none for.
pub(crate) fn unwritable_date_time(
    param: &str,
    func: AggregateFunc,
    field: &MyField,
    what: &str,
) -> EngineError {
    fails(
        param,
        format!(
            "{} of the date-time field {:?} is {what} the data engine's date-time field cannot \
             write (it fails with a 500).",
            func.as_str(),
            field.name
        ),
    )
}

/// Writes a value read from MySQL as the engine writes it in a record.
pub(crate) fn write_value(buf: &mut Vec<u8>, kind: MyKind, v: &Value, tz: Offset) {
    if *v == Value::NULL {
        buf.extend_from_slice(b"null");
        return;
    }
    match kind {
        MyKind::Integer => match v {
            Value::Int(i) => buf.extend_from_slice(i.to_string().as_bytes()),
            Value::UInt(u) => buf.extend_from_slice(u.to_string().as_bytes()),
            other => {
                let text = value_text(other).unwrap_or_default();
                if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
                    buf.extend_from_slice(text.as_bytes());
                } else {
                    write_json_str(buf, &text);
                }
            }
        },
        MyKind::Float => write_float(buf, value_float(v).unwrap_or(f64::NAN)),
        MyKind::Double => match value_float(v) {
            Some(f) => write_json_str(buf, &double_decimal(f)),
            None => write_json_str(buf, &value_text(v).unwrap_or_default()),
        },
        MyKind::Decimal => write_json_str(buf, &decimal_str(&value_text(v).unwrap_or_default())),
        MyKind::Date => write_json_str(buf, &date_text(v).unwrap_or_default()),
        MyKind::DateTime => match v {
            Value::Date(..) => write_json_str(buf, &iso_datetime(v, Some(tz)).unwrap_or_default()),
            // Zero dates (`0000-00-00 00:00:00`) are not Python date-times: their text.
            other => write_json_str(buf, &value_text(other).unwrap_or_default()),
        },
        MyKind::Time => write_json_str(buf, &time_text(v).unwrap_or_default()),
        MyKind::Set => write_json_str(buf, &set_str(&value_text(v).unwrap_or_default())),
        // SQLAlchemy's MySQL `JSON` reads the text with Python's `json.loads` (an integer of
        // any size stays exact, `-0` is the int 0), and the encoder writes it.
        MyKind::Json => {
            let text = value_text(v).unwrap_or_default();
            match parse_py_json(&text) {
                Ok(j) => write_py_json(buf, &j),
                Err(_) => write_json_str(buf, &text),
            }
        }
        MyKind::Bit => buf.extend_from_slice(bit_value(v).to_string().as_bytes()),
        MyKind::Binary => write_json_str(buf, &hexlify(&value_bytes(v))),
        MyKind::Blob => write_json_str(buf, &py_bytes_repr(&value_bytes(v))),
        MyKind::MediumInt | MyKind::Year | MyKind::String | MyKind::Enum | MyKind::Other => {
            write_json_str(buf, &value_text(v).unwrap_or_default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(kind: MyKind, v: Value) -> String {
        let mut buf = Vec::new();
        write_value(&mut buf, kind, &v, 0);
        String::from_utf8(buf).unwrap()
    }

    /// What the running engine (jet-bridge 1.12.13, PyMySQL, MariaDB 10.11) wrote.
    #[test]
    fn values_are_written_as_the_engine_writes_them() {
        assert_eq!(
            written(MyKind::Integer, Value::UInt(u64::MAX)),
            "18446744073709551615"
        );
        assert_eq!(written(MyKind::Integer, Value::Int(-3)), "-3");
        assert_eq!(written(MyKind::MediumInt, Value::Int(7)), "\"7\"");
        assert_eq!(
            written(MyKind::Decimal, Value::Bytes(b"20.50".to_vec())),
            "\"20.50\""
        );
        assert_eq!(
            written(MyKind::Decimal, Value::Bytes(b"0.0000001000".to_vec())),
            "\"1.000E-7\""
        );
        assert_eq!(
            written(MyKind::Double, Value::Double(1.5)),
            "\"1.5000000000\""
        );
        assert_eq!(
            written(MyKind::Double, Value::Double(1e20)),
            "\"100000000000000000000.0000000000\""
        );
        assert_eq!(
            written(MyKind::Double, Value::Double(0.1 + 0.2)),
            "\"0.3000000000\""
        );
        assert_eq!(written(MyKind::Float, Value::Float(0.1)), "0.1");
        assert_eq!(
            written(MyKind::Float, Value::Float(1_234_567.0)),
            "1234570.0"
        );
        assert_eq!(written(MyKind::Float, Value::Float(2.25)), "2.25");
        assert_eq!(
            written(MyKind::DateTime, Value::Date(2024, 1, 5, 10, 0, 0, 500_000)),
            "\"2024-01-05T10:00:00.500000+00:00\""
        );
        assert_eq!(
            written(MyKind::Date, Value::Date(2024, 1, 5, 0, 0, 0, 0)),
            "\"2024-01-05\""
        );
        assert_eq!(
            written(MyKind::Time, Value::Time(false, 1, 1, 0, 1, 0)),
            "\"01:00:01\""
        );
        assert_eq!(
            written(MyKind::Time, Value::Time(true, 0, 1, 30, 0, 0)),
            "\"22:30:00\""
        );
        assert_eq!(written(MyKind::Year, Value::Int(2024)), "\"2024\"");
        // The members in the order of this start's Python set (`set_members`).
        let set = written(MyKind::Set, Value::Bytes(b"x,y".to_vec()));
        assert!(
            ["\"{'x', 'y'}\"", "\"{'y', 'x'}\""].contains(&set.as_str()),
            "{set}"
        );
        assert_eq!(
            written(MyKind::Set, Value::Bytes(b"y".to_vec())),
            "\"{'y'}\""
        );
        assert_eq!(written(MyKind::Set, Value::Bytes(Vec::new())), "\"set()\"");
        assert_eq!(written(MyKind::Bit, Value::Bytes(vec![5])), "5");
        // MySQL 8's `JSON`, through Python's `json.loads`: integers of any size exact.
        assert_eq!(
            written(
                MyKind::Json,
                Value::Bytes(br#"[123456789012345678901234567890, -0, 1e2]"#.to_vec())
            ),
            "[123456789012345678901234567890,0,100.0]"
        );
        assert_eq!(
            written(MyKind::Binary, Value::Bytes(vec![1, 2])),
            "\"0102\""
        );
        assert_eq!(
            written(MyKind::Blob, Value::Bytes(b"A".to_vec())),
            "\"b'A'\""
        );
        assert_eq!(written(MyKind::String, Value::NULL), "null");
    }

    #[test]
    fn kinds_follow_the_type_names() {
        assert_eq!(MyKind::of("tinyint", "tinyint(1)"), MyKind::Integer);
        assert_eq!(MyKind::of("longtext", "longtext"), MyKind::String);
        assert_eq!(MyKind::MediumInt.family(), FilterFamily::Number);
        assert_eq!(MyKind::Time.family(), FilterFamily::Text);
        assert_eq!(MyKind::Year.search(), Search::Skip);
        assert_eq!(MyKind::Set.search(), Search::Contains);
        assert_eq!(MyKind::Decimal.input(), InputField::Char);
    }

    #[test]
    fn values_are_encoded_as_the_engine_encodes_them() {
        let v = py_value(
            ColumnType::MYSQL_TYPE_NEWDECIMAL,
            false,
            0,
            &Value::Bytes(b"20.500000".to_vec()),
        );
        assert_eq!(v.encoded(), serde_json::json!(20.5));
        assert_eq!(v.text().as_deref(), Some("20.500000"));
        let v = typed(
            py_value(
                ColumnType::MYSQL_TYPE_DOUBLE,
                false,
                0,
                &Value::Double(0.1 + 0.2),
            ),
            MyKind::Double,
        );
        assert_eq!(v.text().as_deref(), Some("0.3000000000"));
        let v = py_value(
            ColumnType::MYSQL_TYPE_DATETIME,
            false,
            0,
            &Value::Date(2024, 3, 4, 5, 6, 7, 120_000),
        );
        assert_eq!(v.encoded(), serde_json::json!("2024-03-04T05:06:07.120000"));
    }
}
