//! The Python values a database server's driver hands the engine (psycopg2's, PyMySQL's), after
//! SQLAlchemy's result processing where a column's type has one, and the ways the engine writes
//! them: its JSON encoder (group rows, and aggregates of the fields that write the value
//! itself), the read-only SQL answer's encoder (which also puts a naive date-time in the
//! database's time zone and shows bytes that are not UTF-8 in hex), a serializer field (an
//! aggregate's value), and `str()`.
//!
//! Each backend reads its driver's cells into a [`Py`] (`svc-emulator-postgres/src/types.rs`,
//! `svc-emulator-mysql/src/types.rs`); what the engine writes of one is written once, here.

pub mod codecs;
pub mod floats;
pub mod json;
pub mod numbers;
pub mod sets;
pub mod text;

use serde_json::Value as Json;

use crate::json_text::write_json_str;
use crate::python::floats::py_float_repr;
use crate::python::text::py_bytes_repr;
use crate::python::text::py_repr_str;
use crate::sql_answer::write_encoder_bytes;
use crate::types::{Serializer, decimal_str, write_float};

/// A Python value as a database server's driver gives it.
#[derive(Debug, Clone, PartialEq)]
pub enum Py {
    /// `None`.
    None,
    /// `int`, as its digits.
    Int(String),
    /// `Decimal`, as the database's text of it (`20.50`, `NaN`).
    Decimal(String),
    /// `float`.
    Float(f64),
    /// `bool`.
    Bool(bool),
    /// `date`, in ISO form.
    Date(String),
    /// `datetime`: its `isoformat()` without an offset, and the offset (seconds east of UTC)
    /// of an aware one.
    DateTime(String, Option<i32>),
    /// `time`: its `isoformat()` without an offset, and the offset of an aware one.
    Time(String, Option<i32>),
    /// `timedelta`, in microseconds.
    Timedelta(i128),
    /// `str`.
    Str(String),
    /// `bytes`.
    Bytes(Vec<u8>),
    /// A `set` of strings, in its iteration order (the engine's follows Python's string
    /// hashes, which vary between processes: [`sets::set_order`]).
    Set(Vec<String>),
    /// What a JSON column loads as, from its JSON text.
    Json(String),
    /// A `list` (an array column's value), as JSON.
    List(Json),
}

impl Py {
    /// As the engine's JSON encoder writes it.
    pub fn encoded(&self) -> Json {
        match self {
            Py::None => Json::Null,
            Py::Int(i) => serde_json::from_str(i).unwrap_or(Json::Null),
            Py::Decimal(d) => float_json(d.parse().unwrap_or(f64::NAN)),
            Py::Float(f) => float_json(*f),
            Py::Bool(b) => Json::Bool(*b),
            Py::Date(s) | Py::Str(s) => Json::String(s.clone()),
            Py::DateTime(iso, offset) => Json::String(format!(
                "{iso}{}",
                offset.map(encoder_offset).unwrap_or_default()
            )),
            // An aware time makes the encoder fail: a group refuses it before it runs.
            Py::Time(iso, _) => Json::String(iso.clone()),
            Py::Timedelta(micros) => Json::String(total_seconds(*micros)),
            Py::Bytes(b) => Json::String(String::from_utf8_lossy(b).into_owned()),
            Py::Set(members) => Json::Array(members.iter().cloned().map(Json::String).collect()),
            // `json.loads` of the text: `-0` is the int 0, `1e400` an infinite float (`null`);
            // an integer past 64 bits is a float here (a `serde_json` number holds no more).
            Py::Json(text) => json::parse_py_json(text)
                .map(|v| json::py_json_to_json(&v))
                .unwrap_or(Json::Null),
            Py::List(items) => items.clone(),
        }
    }

    /// As the engine's JSON encoder writes it; `None` where it fails: bytes that are not UTF-8
    /// (`bytes.decode('utf-8')`).
    /// An infinite or NaN `Decimal`: what the engine's encoder writes as `Infinity` or `NaN`,
    /// not JSON (its `clean_obj` writes an infinite or NaN float as `null`, but converts a
    /// `Decimal` to a float only after).
    pub fn is_not_json(&self) -> bool {
        match self {
            // A float's are written `null`: the encoder cleans them out before it writes.
            Py::Decimal(d) => !d.parse::<f64>().is_ok_and(f64::is_finite),
            _ => false,
        }
    }

    /// The value as a JSON value: bytes as their UTF-8 text (`None` when they are not UTF-8),
    /// the rest as the JSON encoder writes them.
    pub fn encodable(&self) -> Option<Json> {
        match self {
            Py::Bytes(b) => std::str::from_utf8(b)
                .ok()
                .map(|s| Json::String(s.to_owned())),
            v => Some(v.encoded()),
        }
    }

    /// `str()` of the value.
    pub fn text(&self) -> Option<String> {
        let offset = |o: &Option<i32>| o.map(offset_text).unwrap_or_default();
        Some(match self {
            Py::None => return None,
            Py::Int(i) => i.clone(),
            Py::Decimal(d) => decimal_text(d),
            Py::Float(f) => py_float_repr(*f),
            Py::Bool(b) => if *b { "True" } else { "False" }.to_owned(),
            Py::Date(s) | Py::Str(s) | Py::Json(s) => s.clone(),
            // `str(datetime)` has a space where `isoformat()` has a `T`.
            Py::DateTime(iso, o) => format!("{}{}", iso.replacen('T', " ", 1), offset(o)),
            Py::Time(iso, o) => format!("{iso}{}", offset(o)),
            Py::Timedelta(micros) => timedelta_str(*micros),
            Py::Bytes(b) => py_bytes_repr(b),
            Py::Set(members) => set_str(members),
            Py::List(items) => list_str(items),
        })
    }

    /// As the serializer field `serializer` writes it in an aggregate's answer; a naive
    /// date-time in the engine's default time zone `tz`.
    pub fn serialized(&self, serializer: Serializer, tz: i32) -> Json {
        match (serializer, self) {
            (_, Py::None) => Json::Null,
            (Serializer::DateTime, Py::DateTime(iso, o)) => {
                Json::String(format!("{iso}{}", offset_text(o.unwrap_or(tz))))
            }
            (Serializer::Text, v) => v.text().map_or(Json::Null, Json::String),
            (_, v) => v.encoded(),
        }
    }

    /// Writes the value as the read-only SQL answer's encoder does: the JSON encoder's forms,
    /// with a naive date-time in the engine's default time zone `tz` (`Z` for UTC) and bytes
    /// that are not UTF-8 in hex.
    pub fn write_answer(&self, buf: &mut Vec<u8>, tz: i32) {
        match self {
            Py::None => buf.extend_from_slice(b"null"),
            Py::Int(i) if !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit() || b == b'-') => {
                buf.extend_from_slice(i.as_bytes());
            }
            Py::Decimal(d) => match d.trim().parse::<f64>() {
                Ok(f) => write_float(buf, f),
                Err(_) => write_json_str(buf, d),
            },
            Py::Float(f) => write_float(buf, *f),
            Py::Bool(b) => buf.extend_from_slice(if *b { b"true" } else { b"false" }),
            Py::DateTime(iso, o) => {
                write_json_str(buf, &format!("{iso}{}", encoder_offset(o.unwrap_or(tz))));
            }
            Py::Bytes(b) => write_encoder_bytes(buf, b),
            // `json.loads` of the text (an integer of any size exact), then the encoder.
            Py::Json(text) => match json::parse_py_json(text) {
                Ok(v) => json::write_py_json(buf, &v),
                Err(_) => write_json_str(buf, text),
            },
            Py::Int(s) | Py::Date(s) | Py::Time(s, _) | Py::Str(s) => write_json_str(buf, s),
            Py::Timedelta(micros) => write_json_str(buf, &total_seconds(*micros)),
            Py::Set(_) | Py::List(_) => {
                let _ = serde_json::to_writer(&mut *buf, &self.encoded());
            }
        }
    }
}

/// The offset of an aware date-time as the engine's JSON encoder writes it: `Z` for UTC (it
/// rewrites `isoformat()`'s `+00:00`), `+HH:MM` otherwise.
fn encoder_offset(seconds: i32) -> String {
    if seconds == 0 {
        "Z".to_owned()
    } else {
        offset_text(seconds)
    }
}

/// A `timedelta` as the engine's JSON encoder writes it: `str(td.total_seconds())`, Python's
/// float text of the signed microseconds over a million (`"36672.5"`, `"-3600.0"`). Python
/// divides the two integers exactly rounded, as one float division of the exactly represented
/// microseconds does.
fn total_seconds(micros: i128) -> String {
    py_float_repr(micros as f64 / 1e6)
}

/// The most days a `timedelta` holds.
pub const MAX_TIMEDELTA_DAYS: i128 = 999_999_999;

/// A day in microseconds.
const DAY: i128 = 86_400_000_000;

/// Python's `str(timedelta)` (`"-1 day, 23:59:59"`, `"0:00:01.500000"`).
pub fn timedelta_str(micros: i128) -> String {
    let days = micros.div_euclid(DAY);
    let mut out = String::new();
    if days != 0 {
        let plural = if days.abs() == 1 { "" } else { "s" };
        out.push_str(&format!("{days} day{plural}, "));
    }
    out.push_str(&clock(micros, false));
    out
}

/// Python's `isoformat()` of the time of day `micros` into a day (`25:00:01` is `01:00:01`,
/// `-01:30:00` is `22:30:00`): the `time` SQLAlchemy's `TIME` makes of a `timedelta`.
pub fn time_of_day(micros: i128) -> String {
    clock(micros, true)
}

/// `H:MM:SS` (`HH` when `padded`) of the time into its day, `.ffffff` when the microseconds are
/// not zero.
fn clock(micros: i128, padded: bool) -> String {
    let rest = micros.rem_euclid(DAY);
    let (seconds, micro) = (rest / 1_000_000, rest % 1_000_000);
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut out = if padded {
        format!("{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h}:{m:02}:{s:02}")
    };
    if micro != 0 {
        out.push_str(&format!(".{micro:06}"));
    }
    out
}

/// `str(Decimal(text))` of a database's decimal text, `Decimal`'s own words kept.
pub fn decimal_text(text: &str) -> String {
    match text {
        "NaN" | "Infinity" | "-Infinity" => text.to_owned(),
        other => decimal_str(other),
    }
}

/// Python's `str()` of a set of strings (`{'x', 'y'}`, `set()`), in the order given.
pub fn set_str(members: &[String]) -> String {
    if members.is_empty() {
        return "set()".to_owned();
    }
    let parts: Vec<String> = members.iter().map(|m| py_repr_str(m)).collect();
    format!("{{{}}}", parts.join(", "))
}

/// `str()` of a Python list of JSON values (`[1, 'a', None]`).
fn list_str(v: &Json) -> String {
    match v {
        Json::Array(items) => {
            let parts: Vec<String> = items.iter().map(list_str).collect();
            format!("[{}]", parts.join(", "))
        }
        Json::String(s) => py_repr_str(s),
        Json::Null => "None".to_owned(),
        Json::Bool(b) => if *b { "True" } else { "False" }.to_owned(),
        Json::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) if !n.is_f64() => i.to_string(),
            (_, Some(f)) => py_float_repr(f),
            _ => n.to_string(),
        },
        Json::Object(_) => v.to_string(),
    }
}

/// A float as the engine's JSON encoder writes it: in Python's form, NaN and the infinities as
/// `null`.
pub fn float_json(f: f64) -> Json {
    if f.is_finite() {
        serde_json::from_str(&py_float_repr(f)).unwrap_or(Json::Null)
    } else {
        Json::Null
    }
}

/// Python's `isoformat()` of a UTC offset: `+HH:MM`, with `:SS` when there are seconds.
pub fn offset_text(seconds: i32) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let s = seconds.unsigned_abs();
    let (h, m, sec) = (s / 3600, s / 60 % 60, s % 60);
    if sec == 0 {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}:{m:02}:{sec:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_the_engine_writes_them() {
        let answer = |v: Py| {
            let mut buf = Vec::new();
            v.write_answer(&mut buf, 0);
            String::from_utf8(buf).unwrap()
        };
        assert_eq!(
            Py::Decimal("20.50".to_owned()).encoded(),
            serde_json::json!(20.5)
        );
        assert_eq!(Py::Decimal("NaN".to_owned()).text().as_deref(), Some("NaN"));
        let naive = Py::DateTime("2024-01-05T10:00:00".to_owned(), None);
        assert_eq!(answer(naive.clone()), "\"2024-01-05T10:00:00Z\"");
        assert_eq!(naive.text().as_deref(), Some("2024-01-05 10:00:00"));
        assert_eq!(
            naive.serialized(Serializer::DateTime, 3600),
            serde_json::json!("2024-01-05T10:00:00+01:00")
        );
        let aware = Py::DateTime("2024-01-05T10:00:00".to_owned(), Some(7200));
        assert_eq!(
            aware.encoded(),
            serde_json::json!("2024-01-05T10:00:00+02:00")
        );
        assert_eq!(answer(Py::Timedelta(-3_600_000_000)), "\"-3600.0\"");
        assert_eq!(answer(Py::Bytes(vec![0xff, 1])), "\"ff01\"");
        assert_eq!(Py::Bytes(vec![0xff]).encodable(), None);
        assert_eq!(timedelta_str(-1_000_000), "-1 day, 23:59:59");
        assert_eq!(timedelta_str(1_500_000), "0:00:01.500000");
        assert_eq!(time_of_day(90_001_000_000), "01:00:01");
        assert_eq!(set_str(&["x".to_owned(), "y".to_owned()]), "{'x', 'y'}");
        assert_eq!(
            Py::List(serde_json::json!([1, "a", null, 1.5]))
                .text()
                .as_deref(),
            Some("[1, 'a', None, 1.5]")
        );
    }

    #[test]
    fn offsets_are_written_as_python_writes_them() {
        assert_eq!(offset_text(0), "+00:00");
        assert_eq!(offset_text(-10_800), "-03:00");
        assert_eq!(offset_text(3208), "+00:53:28");
    }
}
