//! A record's value written as the engine's serializer writes it: straight from the stored
//! value where that gives the same JSON, else through its Python value; and the JSON encoder's
//! forms (group rows, aggregates).

use crate::base64::base64_encode_into;
use crate::json_text::{digits, put, write_i64, write_json_str, write_json_text};
use crate::python::floats::write_py_float_repr;
use crate::python::text::py_str;
use crate::types::ColumnType;
use crate::types::PyValue;
use crate::types::Serializer;
use crate::types::Stored;
use crate::types::ValueWriter;
use crate::types::dates::write_iso_json;
use crate::types::plain;
use crate::types::{Date, Time, read};

/// Writes a Python value as the engine's JSON encoder does: floats in Python's form (`NaN`
/// and infinities as `null`), `Decimal` as a float, dates and date-times with `isoformat()`,
/// bytes as UTF-8 text.
pub fn write_encoded(buf: &mut Vec<u8>, v: &PyValue<'_>) {
    match v {
        PyValue::None => buf.extend_from_slice(b"null"),
        PyValue::Bool(b) => buf.extend_from_slice(if *b { b"true" } else { b"false" }),
        PyValue::Int(i) => write_i64(buf, *i),
        PyValue::Float(f) | PyValue::Decimal(_, f) => write_float(buf, *f),
        PyValue::Str(t) | PyValue::Bytes(t) => {
            write_json_str(buf, &String::from_utf8_lossy(t));
        }
        PyValue::Date(d) => write_iso_json(buf, Some(*d), None),
        PyValue::DateTime(d, t) => write_iso_json(buf, Some(*d), Some(*t)),
        PyValue::Time(t) => write_iso_json(buf, None, Some(*t)),
        PyValue::Unreadable(v) => write_unreadable(buf, *v),
    }
}

/// A float as Python's JSON encoder writes it; the engine's encoder turns NaN and the
/// infinities into `null`.
pub fn write_float(buf: &mut Vec<u8>, f: f64) {
    if f.is_finite() {
        write_py_float_repr(buf, f);
    } else {
        buf.extend_from_slice(b"null");
    }
}

/// A value the engine could not read (it answers 500 on such a row): written as stored, so
/// the emulator still shows the data (binary as base64).
fn write_unreadable(buf: &mut Vec<u8>, v: Stored<'_>) {
    match v {
        Stored::Blob(b) => {
            buf.push(b'"');
            base64_encode_into(buf, b);
            buf.push(b'"');
        }
        other => write_encoded(buf, &plain(other)),
    }
}

/// Writes a stored value of a column the way the engine's serializer writes it in a record;
/// `false` when the engine cannot read the value (it fails on the record), which is then
/// written as stored.
pub fn write_field(buf: &mut Vec<u8>, ty: ColumnType, v: Stored<'_>) -> bool {
    write_with(buf, ty.value_writer(), ty, v)
}

/// [`write_field`] with the column's writer decided beforehand (`writer` is
/// `ty.value_writer()`).
#[inline]
pub fn write_with(buf: &mut Vec<u8>, writer: ValueWriter, ty: ColumnType, v: Stored<'_>) -> bool {
    write_direct(buf, writer, v) || write_through_python(buf, ty, v)
}

/// The common values of a page, written straight from what is stored, without making the
/// engine's Python value first: `true` when `v` was one of them (and is written), `false` when
/// it is left to [`write_through_python`] (and nothing is written).
#[inline(always)]
pub fn write_direct(buf: &mut Vec<u8>, writer: ValueWriter, v: Stored<'_>) -> bool {
    match (writer, v) {
        (_, Stored::Null) => buf.extend_from_slice(b"null"),
        (ValueWriter::Plain, Stored::Integer(i)) => write_i64(buf, i),
        (ValueWriter::Plain, Stored::Real(f)) => write_float(buf, f),
        (ValueWriter::Plain | ValueWriter::PlainText, Stored::Text(t)) => write_json_text(buf, t),
        (ValueWriter::PlainText, Stored::Integer(i)) => {
            buf.push(b'"');
            write_i64(buf, i);
            buf.push(b'"');
        }
        (ValueWriter::PlainText, Stored::Real(f)) => {
            // `str(float)`: no character of it needs escaping.
            buf.push(b'"');
            write_py_float_repr(buf, f);
            buf.push(b'"');
        }
        (ValueWriter::Bool, Stored::Integer(i)) => {
            buf.extend_from_slice(if i != 0 { b"true" } else { b"false" });
        }
        // `YYYY-MM-DD` reads as the date whose `isoformat()` it is.
        (ValueWriter::Date, Stored::Text(t)) if canonical_date(t) => {
            buf.push(b'"');
            put(buf, t);
            buf.push(b'"');
        }
        (ValueWriter::DateTime { iso }, Stored::Text(t)) => {
            // `YYYY-MM-DD HH:MM:SS[.ffffff]`: `isoformat()` puts a `T` for the space (`str()`
            // keeps it) and leaves out microseconds of zero.
            let Some(kept) = canonical_datetime(t).and_then(|len| t.get(..len)) else {
                return false;
            };
            let (date, time) = kept.split_at(10);
            buf.push(b'"');
            put(buf, date);
            buf.push(if iso { b'T' } else { b' ' });
            put(buf, time.get(1..).unwrap_or_default());
            buf.push(b'"');
        }
        _ => return false,
    }
    true
}

/// Whether `t` is exactly `YYYY-MM-DD` naming a date that exists: what [`parse_date`](super::parse_date) reads
/// and [`Date::iso`] writes back unchanged.
#[inline]
fn canonical_date(t: &[u8]) -> bool {
    let [y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1] = *t else {
        return false;
    };
    let digit = |c: u8| u32::from(c.wrapping_sub(b'0'));
    if [y0, y1, y2, y3, m0, m1, d0, d1]
        .iter()
        .any(|&c| digit(c) > 9)
    {
        return false;
    }
    Date {
        year: digit(y0) * 1000 + digit(y1) * 100 + digit(y2) * 10 + digit(y3),
        month: digit(m0) * 10 + digit(m1),
        day: digit(d0) * 10 + digit(d1),
    }
    .valid()
}

/// The length of what `isoformat()` keeps of `t` when `t` is `YYYY-MM-DD HH:MM:SS` or
/// `YYYY-MM-DD HH:MM:SS.ffffff` naming a date and time that exist (19 when the microseconds
/// are zero, else 26); `None` for any other text, which the general path reads.
#[inline]
fn canonical_datetime(t: &[u8]) -> Option<usize> {
    let (date, rest) = t.split_at_checked(10)?;
    if !canonical_date(date) {
        return None;
    }
    let [b' ', h0, h1, b':', n0, n1, b':', s0, s1, ref micro @ ..] = *rest else {
        return None;
    };
    let time = Time {
        hour: digits(&[h0, h1])?,
        minute: digits(&[n0, n1])?,
        second: digits(&[s0, s1])?,
        micro: 0,
    };
    if !time.valid() {
        return None;
    }
    match micro {
        [] => Some(19),
        [b'.', micros @ ..] if micros.len() == 6 => match digits(micros)? {
            0 => Some(19),
            _ => Some(26),
        },
        _ => None,
    }
}

/// [`write_field`] by way of the engine's Python value: every value [`write_direct`] leaves.
pub fn write_through_python(buf: &mut Vec<u8>, ty: ColumnType, v: Stored<'_>) -> bool {
    let value = read(ty, v);
    match (&value, ty.serializer) {
        (PyValue::None, _) => buf.extend_from_slice(b"null"),
        (PyValue::Unreadable(v), _) => {
            write_unreadable(buf, *v);
            return false;
        }
        (_, Serializer::Value) => write_encoded(buf, &value),
        (PyValue::DateTime(d, t), Serializer::DateTime) => {
            write_iso_json(buf, Some(*d), Some(*t));
        }
        (_, Serializer::DateTime) => write_encoded(buf, &value),
        // What `py_str` would make, written without the `String` (digits, `-` and `:` need
        // no escaping; valid UTF-8 text is borrowed, not copied).
        (PyValue::Str(t), Serializer::Text) => write_json_str(buf, &String::from_utf8_lossy(t)),
        (PyValue::Int(i), Serializer::Text) => {
            buf.push(b'"');
            write_i64(buf, *i);
            buf.push(b'"');
        }
        (PyValue::Date(d), Serializer::Text) => write_iso_json(buf, Some(*d), None),
        (_, Serializer::Text) => match py_str(&value) {
            Some(s) => write_json_str(buf, &s),
            None => buf.extend_from_slice(b"null"),
        },
    }
    true
}
