//! Conversions between query text, JSON and SQLite values, and the JSON writer of records.

use rusqlite::types::{Value, ValueRef};
use serde_json::Value as Json;

use crate::engine::schema::{FieldKind, Model};
use crate::util::base64::{base64_decode, base64_encode_into};

/// Parses `true`/`false`/`1`/`0` (ASCII case-insensitive).
pub(crate) fn parse_bool(raw: &str) -> Option<bool> {
    if raw.eq_ignore_ascii_case("true") || raw == "1" {
        Some(true)
    } else if raw.eq_ignore_ascii_case("false") || raw == "0" {
        Some(false)
    } else {
        None
    }
}

fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0')))
}

/// Whether `s` is a valid `YYYY-MM-DD` date.
pub(crate) fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&b[0..4]), digits(&b[5..7]), digits(&b[8..10]))
    else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// Whether `s` is an ISO 8601 date-time SQLite understands:
/// `YYYY-MM-DD[( |T)HH:MM[:SS[.fff]]][Z|±HH:MM]`. A bare date passes only with `date_only`.
pub(crate) fn is_datetime(s: &str, date_only: bool) -> bool {
    if s.len() < 10 || !s.is_char_boundary(10) || !is_date(&s[..10]) {
        return false;
    }
    let rest = &s.as_bytes()[10..];
    if rest.is_empty() {
        return date_only;
    }
    if !matches!(rest[0], b'T' | b't' | b' ') || rest.len() < 6 || rest[3] != b':' {
        return false;
    }
    let (Some(h), Some(mi)) = (digits(&rest[1..3]), digits(&rest[4..6])) else {
        return false;
    };
    if h > 23 || mi > 59 {
        return false;
    }
    let mut r = &rest[6..];
    if r.first() == Some(&b':') {
        if r.len() < 3 {
            return false;
        }
        match digits(&r[1..3]) {
            Some(sec) if sec <= 59 => {}
            _ => return false,
        }
        r = &r[3..];
        if r.first() == Some(&b'.') {
            let n = r[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if n == 0 {
                return false;
            }
            r = &r[1 + n..];
        }
    }
    match r {
        [] | [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            matches!((digits(&[*h1, *h2]), digits(&[*m1, *m2])), (Some(h), Some(m)) if h <= 23 && m <= 59)
        }
        _ => false,
    }
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

/// Converts a JSON value of a create or update body for a field of `kind`. Strict: numbers for
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

/// Whether `bytes` hold a byte that a JSON string must escape: `"`, `\` or a control byte
/// (below 0x20). Eight bytes at a time, with the usual word tests ("has a byte less than n",
/// "has a zero byte" of the word XOR a repeated byte), which are exact for "is there any".
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let has_byte = |word: u64, byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x & HIGHS != 0
    };
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let mut eight = [0u8; 8];
        eight.copy_from_slice(chunk);
        let word = u64::from_ne_bytes(eight);
        let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS != 0;
        if control || has_byte(word, b'"') || has_byte(word, b'\\') {
            return true;
        }
    }
    words
        .remainder()
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

/// Writes `s` as a JSON string.
pub(crate) fn write_json_str(buf: &mut Vec<u8>, s: &str) {
    write_json_utf8(buf, s.as_bytes());
}

/// Writes UTF-8 `bytes` as a JSON string. Escapes are all ASCII, and no byte of a multi-byte
/// UTF-8 sequence is ASCII, so the bytes can be scanned one by one.
fn write_json_utf8(buf: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.push(b'"');
    if !needs_escape(bytes) {
        // The common case: copied as it is.
        buf.extend_from_slice(bytes);
        buf.push(b'"');
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => {
                buf.extend_from_slice(&bytes[start..i]);
                buf.extend_from_slice(b"\\u00");
                buf.push(HEX[usize::from(b >> 4)]);
                buf.push(HEX[usize::from(b & 15)]);
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        buf.extend_from_slice(&bytes[start..i]);
        buf.extend_from_slice(esc);
        start = i + 1;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// Writes an integer in decimal, without going through `fmt`.
fn write_i64(buf: &mut Vec<u8>, i: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = i.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        buf.push(b'-');
    }
    buf.extend_from_slice(&digits[at..]);
}

/// Writes one SQLite value as JSON: integers and reals as numbers, text as strings, blobs as
/// base64 strings, NULL as null; numbers of boolean fields as `true`/`false`.
pub(crate) fn write_value(buf: &mut Vec<u8>, kind: FieldKind, v: ValueRef<'_>) {
    match v {
        ValueRef::Null => buf.extend_from_slice(b"null"),
        ValueRef::Integer(i) if kind == FieldKind::Bool => {
            buf.extend_from_slice(if i != 0 { b"true" } else { b"false" });
        }
        ValueRef::Real(f) if kind == FieldKind::Bool => {
            buf.extend_from_slice(if f != 0.0 { b"true" } else { b"false" });
        }
        ValueRef::Integer(i) => write_i64(buf, i),
        ValueRef::Real(f) => {
            let _ = serde_json::to_writer(&mut *buf, &f);
        }
        // ASCII is UTF-8: only other text needs the full check.
        ValueRef::Text(t) if t.is_ascii() => write_json_utf8(buf, t),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(s) => write_json_str(buf, s),
            Err(_) => write_json_str(buf, &String::from_utf8_lossy(t)),
        },
        ValueRef::Blob(b) => {
            buf.push(b'"');
            base64_encode_into(buf, b);
            buf.push(b'"');
        }
    }
}

/// Writes the current row (selected with [`Model::select_list`]) as a JSON object.
pub(crate) fn write_row(
    buf: &mut Vec<u8>,
    model: &Model,
    row: &rusqlite::Row<'_>,
) -> rusqlite::Result<()> {
    buf.push(b'{');
    for (i, f) in model.fields.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        buf.extend_from_slice(f.json_key.as_bytes());
        crate::engine::types::write_field(buf, f.ty, row.get_ref(i)?);
    }
    buf.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_str(s: &str) -> String {
        let mut buf = Vec::new();
        write_json_str(&mut buf, s);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn escape_detection_matches_a_byte_by_byte_check() {
        let slow = |b: &[u8]| b.iter().any(|&c| c < 0x20 || c == b'"' || c == b'\\');
        // Every byte value at every position of words and remainders.
        for len in [1, 7, 8, 9, 16, 17] {
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = byte;
                    assert_eq!(needs_escape(&bytes), slow(&bytes), "{bytes:?}");
                    bytes[0] = 0xc3;
                    assert_eq!(needs_escape(&bytes), slow(&bytes), "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn strings_are_json_strings() {
        for s in [
            "",
            "plain ascii text",
            "Kraków, São Paulo, 李",
            "quote \" backslash \\ newline \n tab \t cr \r bell \u{7} end",
            "Gift wrap: \"yes\", 100% please",
            "\u{1f}\u{0}",
        ] {
            let written = json_str(s);
            assert_eq!(written, serde_json::to_string(s).unwrap(), "{s:?}");
            assert_eq!(serde_json::from_str::<String>(&written).unwrap(), s);
        }
    }

    #[test]
    fn values_are_json() {
        let write = |kind, v| {
            let mut buf = Vec::new();
            write_value(&mut buf, kind, v);
            String::from_utf8(buf).unwrap()
        };
        for i in [0, 7, -7, 10, 1_000_000, i64::MAX, i64::MIN] {
            assert_eq!(
                write(FieldKind::Integer, ValueRef::Integer(i)),
                i.to_string()
            );
        }
        assert_eq!(write(FieldKind::Bool, ValueRef::Integer(2)), "true");
        assert_eq!(write(FieldKind::Real, ValueRef::Real(1.5)), "1.5");
        assert_eq!(write(FieldKind::Text, ValueRef::Text(b"a\"b")), r#""a\"b""#);
        assert_eq!(
            write(FieldKind::Text, ValueRef::Text("é".as_bytes())),
            "\"é\""
        );
        assert_eq!(
            write(FieldKind::Text, ValueRef::Text(b"ok \xff")),
            "\"ok \u{fffd}\""
        );
        assert_eq!(write(FieldKind::Any, ValueRef::Null), "null");
    }
}
