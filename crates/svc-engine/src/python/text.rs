//! Python's `repr()` and `str()` of strings and values, and `bytes.hex()` and back.

use crate::python::floats::py_float_repr;
use crate::python::json::PyJson;
use crate::types::PyValue;
use crate::types::plain;

/// Python's `repr()` of a string: single quotes unless it holds `'` and no `"`, with
/// backslash escapes for the quote, `\`, control characters and characters Python does not
/// print. Python decides "printable" from the Unicode database; this knows the non-printable
/// characters of Latin-1 and the common format and space characters, and prints the rest.
pub fn py_repr_str(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if py_printable(c) => out.push(c),
            c if u32::from(c) <= 0xff => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c if u32::from(c) <= 0xffff => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08x}", u32::from(c))),
        }
    }
    out.push(quote);
    out
}

/// Python's `str.isprintable()` for one character, for the characters [`py_repr_str`] knows.
fn py_printable(c: char) -> bool {
    !matches!(
        c,
        '\0'..='\u{1f}'
            | '\u{7f}'..='\u{a0}'
            | '\u{ad}'
            | '\u{600}'..='\u{605}'
            | '\u{61c}'
            | '\u{6dd}'
            | '\u{70f}'
            | '\u{180e}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200f}'
            | '\u{2028}'..='\u{202f}'
            | '\u{205f}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{3000}'
            | '\u{e000}'..='\u{f8ff}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{fffe}'
            | '\u{ffff}'
            | '\u{e0000}'..='\u{10ffff}'
    )
}

/// Python's `repr()` of a value.
pub fn py_repr(v: &PyJson) -> String {
    match v {
        PyJson::Str(s) => py_repr_str(s),
        PyJson::List(items) => {
            let parts: Vec<String> = items.iter().map(py_repr).collect();
            format!("[{}]", parts.join(", "))
        }
        PyJson::Dict(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|(k, v)| format!("{}: {}", py_repr_str(k), py_repr(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        other => py_text(other),
    }
}

/// Python's `str()` of a value.
pub fn py_text(v: &PyJson) -> String {
    match v {
        PyJson::None => "None".to_owned(),
        PyJson::Bool(b) => if *b { "True" } else { "False" }.to_owned(),
        PyJson::Int(i) => i.clone(),
        PyJson::Float(f) => crate::python::floats::py_float_repr(*f),
        PyJson::Str(s) => s.clone(),
        PyJson::List(_) | PyJson::Dict(_) => py_repr(v),
    }
}

/// Bytes as lowercase hex text (`bytes.hex()`, `binascii.hexlify`).
pub fn hexlify(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of hex text, as `binascii.unhexlify` reads it (the engine's binary fields).
pub fn unhexlify(text: &str) -> Option<Vec<u8>> {
    let b = text.as_bytes();
    // `from_str_radix` would also take a sign (`+f`), which `unhexlify` refuses.
    if !b.len().is_multiple_of(2) || !b.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    b.chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// Python's `str(uuid.UUID(text))`: what SQLAlchemy's PostgreSQL `UUID` type (psycopg2,
/// `as_uuid=False`) makes of the text a column is given, before PostgreSQL sees it. `urn:`
/// and `uuid:` anywhere are dropped, then braces around and every `-`; the 32 characters
/// left are read by `int(hex, 16)` (so `0x`, underscores, white space and digits of any script
/// pass) and written back lowercase, `8-4-4-4-12`. `Err` holds Python's message.
pub fn py_uuid(text: &str) -> Result<String, String> {
    let hex = text.replace("urn:", "").replace("uuid:", "");
    let hex = hex.trim_matches(['{', '}']).replace('-', "");
    if hex.chars().count() != 32 {
        return Err("badly formed hexadecimal UUID string".to_owned());
    }
    let Some((negative, value)) = crate::python::numbers::py_int_hex(&hex) else {
        return Err(format!(
            "invalid literal for int() with base 16: {}",
            py_repr_str(&hex)
        ));
    };
    if negative && value != 0 {
        return Err("int is out of range (need a 128-bit value)".to_owned());
    }
    let h = format!("{value:032x}");
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    ))
}

/// Python's `repr(bytes)`: `b'...'` with `\x..` escapes (double quotes when the bytes hold a
/// `'` and no `"`).
pub fn py_bytes_repr(b: &[u8]) -> String {
    let quote = if b.contains(&b'\'') && !b.contains(&b'"') {
        '"'
    } else {
        '\''
    };
    let mut s = String::with_capacity(b.len() + 3);
    s.push('b');
    s.push(quote);
    for &c in b {
        match c {
            b'\\' => s.push_str("\\\\"),
            b'\t' => s.push_str("\\t"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            c if c as char == quote => {
                s.push('\\');
                s.push(quote);
            }
            0x20..=0x7e => s.push(c as char),
            c => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push(quote);
    s
}

/// The bytes of a Python `bytes` literal as [`py_bytes_repr`] writes it (`b'\\x00ab'`, or
/// `b"..."`): what a record shows of a binary column, read back by an import. `None` for text
/// that is no such literal.
pub fn py_bytes_literal(text: &str) -> Option<Vec<u8>> {
    let quote = match text.as_bytes() {
        [b'b', q @ (b'\'' | b'"'), .., last] if last == q && text.len() >= 3 => *q,
        _ => return None,
    };
    let inner = &text.as_bytes()[2..text.len() - 1];
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let c = inner[i];
        if c == quote || !(0x20..=0x7e).contains(&c) {
            return None;
        }
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let (byte, len) = match inner.get(i + 1)? {
            b'\\' => (b'\\', 2),
            b't' => (b'\t', 2),
            b'n' => (b'\n', 2),
            b'r' => (b'\r', 2),
            b'\'' => (b'\'', 2),
            b'"' => (b'"', 2),
            b'x' => {
                let hex = inner.get(i + 2..i + 4)?;
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                (
                    u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?,
                    4,
                )
            }
            _ => return None,
        };
        out.push(byte);
        i += len;
    }
    Some(out)
}

/// `str()` of a Python value, as the engine's text fields write it.
pub fn py_str(v: &PyValue<'_>) -> Option<String> {
    Some(match v {
        PyValue::None => return None,
        PyValue::Bool(b) => if *b { "True" } else { "False" }.to_owned(),
        PyValue::Int(i) => i.to_string(),
        PyValue::Float(f) => py_float_repr(*f),
        PyValue::Decimal(text, _) => text.clone(),
        PyValue::Str(t) => String::from_utf8_lossy(t).into_owned(),
        PyValue::Bytes(b) => py_bytes_repr(b),
        PyValue::Date(d) => d.iso(),
        PyValue::DateTime(d, t) => format!("{} {}", d.iso(), t.iso()),
        PyValue::Time(t) => t.iso(),
        PyValue::Unreadable(v) => match plain(*v) {
            PyValue::Unreadable(_) => return None,
            other => return py_str(&other),
        },
    })
}

#[cfg(test)]
mod bytes_tests {
    #[test]
    fn a_bytes_literal_reads_back_what_its_repr_wrote() {
        for bytes in [
            &b""[..],
            b"\x00\xff\x10",
            b"it's",
            b"say \"hi\" it's",
            b"\\\t\n\r~ ",
        ] {
            let repr = super::py_bytes_repr(bytes);
            assert_eq!(
                super::py_bytes_literal(&repr).as_deref(),
                Some(bytes),
                "{repr}"
            );
        }
        for text in ["abc", "b'", "b'\\q'", "b'\\x0'", "b'a'b'", "'a'"] {
            assert_eq!(super::py_bytes_literal(text), None, "{text}");
        }
    }
}
