//! SQLite's side of values. How SQLAlchemy 1.4's SQLite dialect reflects a declared type is
//! the engine's (`svc_engine::types::ColumnType::from_declared`).
//!
//! # Values
//!
//! SQLite's side of values: what SQLite is given for a value (SQLAlchemy's SQLite bind
//! processors, then Python's `sqlite3` adaptation), the driver's values handed to the engine's
//! readings as [`Stored`], rows written as records, and driver errors as engine errors.

use crate::driver::value_ref;
use crate::schema::{Field, FieldKind};
use rusqlite::types::{Value, ValueRef};
use serde_json::Value as Json;
use svc_emulator_core::dialect::bind::Bind;
use svc_engine::base64::{base64_decode, base64_encode_into};
use svc_engine::error::EngineError;
use svc_engine::field_input::{Internal, is_date, is_datetime};
use svc_engine::json_text::{write_i64, write_json_str, write_json_text};
use svc_engine::python::json::{PyJson, parse_py_json, py_json_dumps, write_py_json};
use svc_engine::python::numbers::{parse_bool, py_float};
use svc_engine::python::text::py_repr_str;
use svc_engine::types::Reflected;
use svc_engine::types::{ColumnType, PyValue, Stored, Time, read, write_with};

/// A stored value of a column of type `ty` as the engine's ORM binds it again once it has
/// loaded it (a record's identity, which it names the row by in its writes): SQLAlchemy's
/// result processor, then its bind processor. A `NUMERIC(p, s)` value is rounded to `s` places
/// and bound as a float; a date, a time and a date-time are written in SQLAlchemy's own format
/// (six digits of microseconds); a boolean as 1 or 0; anything else as it is stored. Where
/// that is not the stored value, the row is not found by it (the engine's `400 Query failed`).
pub(crate) fn rebound(ty: ColumnType, cell: &Bind) -> Bind {
    match read(ty, stored(value_ref(cell))) {
        PyValue::Decimal(_, float) => Bind::Float(float),
        PyValue::Bool(b) => Bind::Int(i64::from(b)),
        PyValue::Date(d) => Bind::Text(format!("{:04}-{:02}-{:02}", d.year, d.month, d.day)),
        PyValue::Time(t) => Bind::Text(time_text(t)),
        PyValue::DateTime(d, t) => Bind::Text(format!(
            "{:04}-{:02}-{:02} {}",
            d.year,
            d.month,
            d.day,
            time_text(t)
        )),
        _ => cell.clone(),
    }
}

/// SQLAlchemy's SQLite text of a time: `HH:MM:SS.ffffff`.
fn time_text(t: Time) -> String {
    format!(
        "{:02}:{:02}:{:02}.{:06}",
        t.hour, t.minute, t.second, t.micro
    )
}

/// A value as SQLite stores it, in the engine's terms.
pub(crate) fn stored<'a>(v: impl Into<ValueRef<'a>>) -> Stored<'a> {
    match v.into() {
        ValueRef::Null => Stored::Null,
        ValueRef::Integer(i) => Stored::Integer(i),
        ValueRef::Real(f) => Stored::Real(f),
        ValueRef::Text(t) => Stored::Text(t),
        ValueRef::Blob(b) => Stored::Blob(b),
    }
}

/// A SQLite error the engine answers with its own failure.
pub(crate) fn engine_error(e: rusqlite::Error) -> EngineError {
    EngineError::Internal(format!("database error: {e}"))
}

fn number(raw: &str) -> Option<Value> {
    if let Ok(i) = raw.parse::<i64>() {
        return Some(Value::Integer(i));
    }
    // Rust also parses `inf`, `NaN` and `infinity`: only plain decimal notation counts.
    if !raw
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
    {
        return None;
    }
    raw.parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .map(Value::Real)
}

/// Parses a filter or primary key value given as text, by field kind.
pub(crate) fn text_to_sql(kind: FieldKind, raw: &str) -> Option<Value> {
    match kind {
        FieldKind::Integer => raw.parse::<i64>().ok().map(Value::Integer),
        FieldKind::Real => number(raw),
        FieldKind::Bool => parse_bool(raw).map(|b| Value::Integer(i64::from(b))),
        FieldKind::Date => is_date(raw).then(|| Value::Text(raw.to_owned())),
        FieldKind::DateTime => is_datetime(raw, true).then(|| Value::Text(raw.to_owned())),
        FieldKind::Blob => None,
        FieldKind::Text => Some(Value::Text(raw.to_owned())),
        FieldKind::Any => Some(number(raw).unwrap_or_else(|| Value::Text(raw.to_owned()))),
    }
}

/// Converts a JSON value of a strict create or update body (the built-in tools resource, not
/// records) for a field of `kind`. Strict: numbers for
/// numeric fields, strings for text, dates and date-times, `true`/`false`/`0`/`1` for booleans,
/// base64 strings for binary fields. `Err` holds the field error message.
pub(crate) fn json_to_sql(kind: FieldKind, v: &Json) -> Result<Value, &'static str> {
    if v.is_null() {
        return Ok(Value::Null);
    }
    match kind {
        FieldKind::Integer => match v {
            Json::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(Value::Integer(i))
                } else {
                    match n.as_f64() {
                        Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => {
                            Ok(Value::Integer(f as i64))
                        }
                        _ => Err("A valid integer is required."),
                    }
                }
            }
            _ => Err("A valid integer is required."),
        },
        FieldKind::Real => match v {
            Json::Number(n) => match n.as_i64() {
                Some(i) => Ok(Value::Integer(i)),
                None => n
                    .as_f64()
                    .map(Value::Real)
                    .ok_or("A valid number is required."),
            },
            _ => Err("A valid number is required."),
        },
        FieldKind::Bool => match v {
            Json::Bool(b) => Ok(Value::Integer(i64::from(*b))),
            Json::Number(n) if n.as_i64() == Some(0) || n.as_i64() == Some(1) => {
                Ok(Value::Integer(n.as_i64().unwrap_or(0)))
            }
            _ => Err("Must be a valid boolean."),
        },
        FieldKind::Text => match v {
            Json::String(s) => Ok(Value::Text(s.clone())),
            _ => Err("Not a valid string."),
        },
        FieldKind::Date => match v {
            Json::String(s) if is_date(s) => Ok(Value::Text(s.clone())),
            _ => Err("Date has wrong format. Use one of these formats instead: YYYY-MM-DD."),
        },
        FieldKind::DateTime => match v {
            Json::String(s) if is_datetime(s, true) => Ok(Value::Text(s.clone())),
            _ => Err(
                "Datetime has wrong format. Use one of these formats instead: \
                 YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].",
            ),
        },
        FieldKind::Blob => match v {
            Json::String(s) => base64_decode(s)
                .map(Value::Blob)
                .ok_or("Invalid base64 data."),
            _ => Err("Expected base64 text."),
        },
        FieldKind::Any => match v {
            Json::String(s) => Ok(Value::Text(s.clone())),
            Json::Bool(b) => Ok(Value::Integer(i64::from(*b))),
            Json::Number(n) => Ok(n
                .as_i64()
                .map(Value::Integer)
                .unwrap_or_else(|| Value::Real(n.as_f64().unwrap_or(0.0)))),
            _ => Err("Expected a string, a number or a boolean."),
        },
    }
}

/// What the engine's refusal of any value written to a column of type `reflected` means, for
/// the answer's `error` (its `non_field_errors` keep the engine's words): SQLAlchemy's SQLite
/// `Date` and `Time` types take only Python `date` and `time` objects, and the engine hands
/// them the JSON's text, so neither the engine nor the service writes such a column.
pub(crate) fn never_written(reflected: Reflected, field: &str) -> Option<String> {
    let kind = match reflected {
        Reflected::Date => "DATE",
        Reflected::Time => "TIME",
        _ => return None,
    };
    Some(format!(
        "The data engine (and so the service) cannot write `{field}`, a SQLite {kind} column: \
         its database layer takes only Python {} objects there, and the engine hands it the \
         request's text (its words are in non_field_errors). Leave the field out (its default \
         or null), or set it with SQL: seed_sql or an action.",
        kind.to_ascii_lowercase()
    ))
}

/// What SQLite is given for a Python value written to a column of type `reflected`:
/// SQLAlchemy's bind processor of the type, then Python's `sqlite3` adaptation. `Err` holds
/// the message the engine answers (`400`), or says why the emulator refuses a value the engine
/// fails on (`500` there).
pub(crate) fn bind(reflected: Reflected, v: &Internal) -> Result<Value, String> {
    let out_of_range = |i: &str| {
        format!(
            "{i} is out of SQLite's integer range (-9223372036854775808 to \
             9223372036854775807); send a smaller number"
        )
    };
    if let Internal::None = v {
        // SQLAlchemy's JSON type stores None as JSON `null`.
        return Ok(if reflected == Reflected::Json {
            Value::Text("null".to_owned())
        } else {
            Value::Null
        });
    }
    match reflected {
        // Numeric and Float: `float(value)`.
        Reflected::Float | Reflected::Numeric { .. } => match v {
            Internal::Bool(b) => Ok(Value::Real(if *b { 1.0 } else { 0.0 })),
            Internal::Int(i) => match i.parse::<f64>() {
                Ok(f) if f.is_finite() => Ok(Value::Real(f)),
                _ => Err("int too large to convert to float".to_owned()),
            },
            Internal::Float(f) => Ok(Value::Real(*f)),
            Internal::Str(s) => py_float(s)
                .map(Value::Real)
                .ok_or_else(|| format!("could not convert string to float: {}", py_repr_str(s))),
            Internal::DateTime(_) | Internal::Json(_) | Internal::None => {
                Err("float() argument must be a string or a real number".to_owned())
            }
        },
        Reflected::Date => {
            Err("SQLite Date type only accepts Python date objects as input.".to_owned())
        }
        Reflected::Time => {
            Err("SQLite Time type only accepts Python time objects as input.".to_owned())
        }
        Reflected::DateTime => match v {
            Internal::DateTime(dt) => Ok(Value::Text(dt.naive_text())),
            _ => Err(
                "SQLite DateTime type only accepts Python datetime and datetime.date \
                      objects as input."
                    .to_owned(),
            ),
        },
        Reflected::Boolean => match v {
            Internal::Bool(b) => Ok(Value::Integer(i64::from(*b))),
            _ => Err("Not a boolean value".to_owned()),
        },
        Reflected::Json => match v {
            Internal::Json(j) => Ok(Value::Text(py_json_dumps(j))),
            Internal::Str(s) => Ok(Value::Text(py_json_dumps(&PyJson::Str(s.clone())))),
            _ => Err("not a valid JSON value".to_owned()),
        },
        Reflected::Blob => {
            let name = match v {
                Internal::Bool(_) => "bool",
                Internal::Int(_) => "int",
                Internal::Float(_) => "float",
                Internal::DateTime(_) => "datetime.datetime",
                Internal::Json(_) => "dict",
                Internal::Str(_) | Internal::None => "str",
            };
            Err(format!(
                "memoryview: a bytes-like object is required, not '{name}'"
            ))
        }
        Reflected::Integer | Reflected::String | Reflected::Untyped => match v {
            Internal::Bool(b) => Ok(Value::Integer(i64::from(*b))),
            Internal::Int(i) => i.parse().map(Value::Integer).map_err(|_| out_of_range(i)),
            Internal::Float(f) => Ok(Value::Real(*f)),
            Internal::Str(s) => Ok(Value::Text(s.clone())),
            Internal::DateTime(dt) => Ok(Value::Text(dt.naive_text())),
            Internal::Json(j) => Ok(Value::Text(py_json_dumps(j))),
            Internal::None => Ok(Value::Null),
        },
    }
}

/// Writes one stored value as JSON: integers and reals as numbers, text as strings, blobs as
/// base64 strings, NULL as null; numbers of boolean fields as `true`/`false`.
pub(crate) fn write_value(buf: &mut Vec<u8>, kind: FieldKind, v: Stored<'_>) {
    match v {
        Stored::Null => buf.extend_from_slice(b"null"),
        Stored::Integer(i) if kind == FieldKind::Bool => {
            buf.extend_from_slice(if i != 0 { b"true" } else { b"false" });
        }
        Stored::Real(f) if kind == FieldKind::Bool => {
            buf.extend_from_slice(if f != 0.0 { b"true" } else { b"false" });
        }
        Stored::Integer(i) => write_i64(buf, i),
        Stored::Real(f) => {
            let _ = serde_json::to_writer(&mut *buf, &f);
        }
        Stored::Text(t) => write_json_text(buf, t),
        Stored::Blob(b) => {
            buf.push(b'"');
            base64_encode_into(buf, b);
            buf.push(b'"');
        }
    }
}

/// Writes a stored value of a field as the engine's serializer writes it in a record (a
/// `JSON` column as the JSON value its text holds); `false` when the engine cannot read it.
#[inline(always)]
pub(crate) fn write_field_value(buf: &mut Vec<u8>, f: &Field, v: Stored<'_>) -> bool {
    if f.kind.ty.reflected == Reflected::Json {
        write_json_column(buf, v)
    } else {
        write_with(buf, f.kind.writer, f.kind.ty, v)
    }
}

/// Writes the stored value of a `JSON` column as the engine answers it: SQLAlchemy's SQLite
/// JSON type reads text (and bytes) with `json.loads` and passes numbers through, and the
/// encoder writes the value. Text that is not JSON (the engine fails on it: `false`) is
/// written as the stored text.
pub(crate) fn write_json_column(buf: &mut Vec<u8>, v: Stored<'_>) -> bool {
    match json_column_value(v) {
        Some(parsed) => {
            write_py_json(buf, &parsed);
            true
        }
        None => {
            match v {
                Stored::Text(t) | Stored::Blob(t) => {
                    write_json_str(buf, &String::from_utf8_lossy(t));
                }
                other => write_value(buf, FieldKind::Any, other),
            }
            false
        }
    }
}

/// The Python value SQLAlchemy's SQLite JSON type reads from a stored value: NULL is `None`,
/// integers and reals pass through, text and bytes go through `json.loads`; `None` when that
/// fails (the engine answers 500).
pub(crate) fn json_column_value(v: Stored<'_>) -> Option<PyJson> {
    match v {
        Stored::Null => Some(PyJson::None),
        Stored::Integer(i) => Some(PyJson::Int(i.to_string())),
        Stored::Real(f) => Some(PyJson::Float(f)),
        Stored::Text(t) | Stored::Blob(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|text| parse_py_json(text).ok()),
    }
}

#[cfg(test)]
mod values_tests {
    use super::*;

    #[test]
    fn values_are_json() {
        let write = |kind, v| {
            let mut buf = Vec::new();
            write_value(&mut buf, kind, v);
            String::from_utf8(buf).unwrap()
        };
        for i in [0, 7, -7, 10, 1_000_000, i64::MAX, i64::MIN] {
            assert_eq!(write(FieldKind::Integer, Stored::Integer(i)), i.to_string());
        }
        assert_eq!(write(FieldKind::Bool, Stored::Integer(2)), "true");
        assert_eq!(write(FieldKind::Real, Stored::Real(1.5)), "1.5");
        assert_eq!(write(FieldKind::Text, Stored::Text(b"a\"b")), r#""a\"b""#);
        assert_eq!(
            write(FieldKind::Text, Stored::Text("é".as_bytes())),
            "\"é\""
        );
        assert_eq!(
            write(FieldKind::Text, Stored::Text(b"ok \xff")),
            "\"ok \u{fffd}\""
        );
        assert_eq!(write(FieldKind::Any, Stored::Null), "null");
    }
}
