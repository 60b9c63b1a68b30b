//! `multipart/form-data` bodies as the engine reads them: Tornado 5.1's `parse_body_arguments`
//! (the boundary from the content type) and `parse_multipart_form_data` (each part's headers,
//! its `Content-Disposition` read by `_parse_header` with `email.utils`' RFC 2231 decoding).
//! A part with a `filename` is a file, which no records view reads; the others are fields.

use std::collections::HashMap;

use crate::body::form::{Fields, push, unquote_latin1};
use crate::python::codecs::{Codec, codec};
use crate::python::numbers::{py_is_space, py_strip};

/// A double quote, around a quoted boundary.
const QUOTE: u8 = b'"';

/// Tornado's boundary of a `multipart/form-data` content type: the first `;`-separated
/// parameter spelt `boundary=` (in lowercase, no space before `=`) with a value, as UTF-8
/// bytes. `None`: Tornado reads no field ("multipart boundary not found").
pub fn boundary(content_type: &str) -> Option<Vec<u8>> {
    content_type.split(';').find_map(|field| {
        let (k, v) = py_strip(field).split_once('=')?;
        (k == "boundary" && !v.is_empty()).then(|| v.as_bytes().to_vec())
    })
}

/// A part Tornado passed over (with a warning), or where it stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skipped {
    /// The body has no closing `--BOUNDARY--`: no field at all.
    NoFinalBoundary,
    /// A part (the `n`th, from 1) without a blank line after its headers.
    NoHeaders(usize),
    /// A part whose headers are not UTF-8 or not headers (a line without `:`, a first line
    /// folded), or whose `Content-Disposition` parameters Python's `email.utils` fails on:
    /// Tornado stops there, the fields before it kept.
    Stopped(usize),
    /// A part whose disposition is not `form-data` (in lowercase), or that does not end in a
    /// line break before the next boundary.
    NotFormData(usize),
    /// A part without a `name`.
    NoName(usize),
    /// A file (a part with a `filename`), named `name`: not a field.
    File(String),
    /// A part whose `name` is given in RFC 2231 form (`name*=`) in a charset the emulator
    /// does not decode (it knows UTF-8, ASCII and Latin-1): the engine reads some name.
    Charset(usize, String),
}

/// The fields of a multipart body, and what Tornado passed over.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Multipart {
    /// Each field name (first seen first) with its values, as bytes.
    pub fields: Fields,
    /// The parts passed over, in order; the preamble (what comes before the first
    /// boundary) is not one.
    pub skipped: Vec<Skipped>,
}

/// Tornado's `parse_multipart_form_data(boundary, data)`: the body up to the last
/// `--BOUNDARY--`, split at each `--BOUNDARY\r\n`; of each part, its headers up to the first
/// blank line and its value up to the line break before the next boundary.
pub fn read(boundary: &[u8], data: &[u8]) -> Multipart {
    let mut out = Multipart::default();
    // A quoted boundary loses its quotes (no backslash escapes are read).
    let boundary = if boundary.len() > 1
        && boundary.first() == Some(&QUOTE)
        && boundary.last() == Some(&QUOTE)
    {
        &boundary[1..boundary.len() - 1]
    } else if boundary == [QUOTE] {
        &boundary[..0]
    } else {
        boundary
    };
    let closing = [b"--", boundary, b"--"].concat();
    let Some(end) = rfind(data, &closing) else {
        out.skipped.push(Skipped::NoFinalBoundary);
        return out;
    };
    let separator = [b"--", boundary, b"\r\n"].concat();
    let mut index = HashMap::new();
    for (n, part) in split(&data[..end], &separator).into_iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        let Some(eoh) = find(part, b"\r\n\r\n") else {
            // The first piece is the preamble, which carries no field.
            if n > 0 {
                out.skipped.push(Skipped::NoHeaders(n));
            }
            continue;
        };
        let Some(disposition) = std::str::from_utf8(&part[..eoh])
            .ok()
            .and_then(content_disposition)
        else {
            out.skipped.push(Skipped::Stopped(n));
            break;
        };
        let Some((kind, params)) = parse_header(&disposition) else {
            out.skipped.push(Skipped::Stopped(n));
            break;
        };
        if kind != "form-data" || !part.ends_with(b"\r\n") {
            out.skipped.push(Skipped::NotFormData(n));
            continue;
        }
        let value = part.get(eoh + 4..part.len() - 2).unwrap_or_default();
        let param = |name: &str| params.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v);
        let name = match param("name") {
            Some(name) if !name.is_empty() => name,
            _ => {
                out.skipped.push(Skipped::NoName(n));
                continue;
            }
        };
        if param("filename").is_some_and(|f| !f.is_empty()) {
            out.skipped.push(Skipped::File(name.to_string()));
            continue;
        }
        let name = match name {
            Param::Text(name) => name.clone(),
            Param::Undecoded(charset, _) => {
                out.skipped.push(Skipped::Charset(n, charset.clone()));
                continue;
            }
        };
        push(&mut out.fields, &mut index, name, value.to_vec());
    }
    out
}

/// A parameter's value as `_parse_header` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Param {
    /// The text.
    Text(String),
    /// RFC 2231 bytes in a charset the emulator does not decode: the charset, the bytes.
    Undecoded(String, Vec<u8>),
}

impl std::fmt::Display for Param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Param::Text(t) => f.write_str(t),
            Param::Undecoded(_, bytes) => f.write_str(&String::from_utf8_lossy(bytes)),
        }
    }
}

impl Param {
    /// Python's falsiness of the value (an empty string).
    fn is_empty(&self) -> bool {
        match self {
            Param::Text(t) => t.is_empty(),
            // Every charset makes some text of some bytes.
            Param::Undecoded(_, bytes) => bytes.is_empty(),
        }
    }
}

/// `HTTPHeaders.parse(text).get("Content-Disposition", "")`: the lines (split at `\n` or
/// `\r\n`), a line starting with whitespace continuing the one before, each header `name:
/// value` (the value stripped, a repeated one joined with `,`). `None` where Tornado raises
/// (a line without `:`, a first line that continues nothing).
fn content_disposition(text: &str) -> Option<String> {
    let mut value: Option<String> = None;
    let mut last_is_it: Option<bool> = None;
    let pieces: Vec<&str> = text.split('\n').collect();
    let count = pieces.len();
    for (i, piece) in pieces.into_iter().enumerate() {
        // `\r?\n` splits: a `\r` before each `\n` goes with it.
        let line = if i + 1 < count {
            piece.strip_suffix('\r').unwrap_or(piece)
        } else {
            piece
        };
        let Some(first) = line.chars().next() else {
            continue;
        };
        if py_is_space(first) {
            let folded = format!(" {}", line.trim_start_matches(py_is_space));
            if last_is_it? {
                value.get_or_insert_with(String::new).push_str(&folded);
            }
            continue;
        }
        let (name, v) = line.split_once(':')?;
        let v = py_strip(v);
        // Tornado's `Http-Header-Case` of the name, for an ASCII name: case does not count.
        let is_it = name.eq_ignore_ascii_case("content-disposition");
        if is_it {
            value = Some(match value {
                Some(before) => format!("{before},{v}"),
                None => v.to_owned(),
            });
        }
        last_is_it = Some(is_it);
    }
    Some(value.unwrap_or_default())
}

/// Tornado's `_parse_header(line)`: the first `;`-separated piece, and the parameters
/// (`name=value`, names lowercased) through `email.utils.decode_params` and
/// `collapse_rfc2231_value`, one pair of surrounding quotes then dropped. `None` where Python
/// fails (RFC 2231 continuations both numbered and not, which `sort()` cannot compare).
fn parse_header(line: &str) -> Option<(String, Vec<(String, Param)>)> {
    let mut pieces = parse_params(line).into_iter();
    let key = pieces.next().unwrap_or_default();
    let params: Vec<(String, String)> = pieces
        .filter_map(|p| {
            let (name, value) = p.split_once('=')?;
            Some((py_strip(name).to_lowercase(), py_strip(value).to_owned()))
        })
        .collect();
    let decoded = decode_params(params)?;
    let values = decoded
        .into_iter()
        .map(|(name, value)| {
            let value = match value {
                Value::Plain(v) => Param::Text(email_unquote(&v).into_owned()),
                Value::Extended(charset, text) => collapse(charset, &text),
            };
            let value = match value {
                Param::Text(t) if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') => {
                    Param::Text(t[1..t.len() - 1].to_owned())
                }
                other => other,
            };
            (name, value)
        })
        .collect();
    Some((key, values))
}

/// Tornado's `_parseparam`: the pieces between `;`s that are not inside quotes (a `\"` does
/// not count), each stripped.
fn parse_params(line: &str) -> Vec<String> {
    let whole = format!(";{line}");
    let mut s: &str = &whole;
    let mut out = Vec::new();
    while let Some(rest) = s.strip_prefix(';') {
        s = rest;
        let inside = |end: usize| {
            let before = &s[..end];
            (before.matches('"').count() - before.matches("\\\"").count()) % 2 == 1
        };
        let mut end = s.find(';');
        while let Some(e) = end {
            if e == 0 || !inside(e) {
                break;
            }
            end = s[e + 1..].find(';').map(|f| f + e + 1);
        }
        let end = end.unwrap_or(s.len());
        out.push(py_strip(&s[..end]).to_owned());
        s = &s[end..];
    }
    out
}

/// A parameter after `decode_params`.
enum Value {
    /// `'"%s"' % quote(value)`.
    Plain(String),
    /// RFC 2231 extended: the charset (`None` when the value has no two `'`), and the text
    /// `'"%s"' % value`.
    Extended(Option<String>, String),
}

/// An RFC 2231 segment of a parameter: its number (digits, leading zeros dropped; `None` for
/// `name*`), its text, whether it is %-encoded.
type Segment = (Option<String>, String, bool);

/// `email.utils.decode_params` (Python 3.11), without its first (dummy) pair.
fn decode_params(params: Vec<(String, String)>) -> Option<Vec<(String, Value)>> {
    let mut out: Vec<(String, Value)> = Vec::new();
    // The segments of each RFC 2231 name, first seen first.
    let mut continued: Vec<(String, Vec<Segment>)> = Vec::new();
    for (name, value) in params {
        let encoded = name.ends_with('*');
        let value = email_unquote(&value).into_owned();
        match rfc2231_continuation(&name) {
            Some((base, number)) => match continued.iter_mut().find(|(n, _)| *n == base) {
                Some((_, parts)) => parts.push((number, value, encoded)),
                None => continued.push((base, vec![(number, value, encoded)])),
            },
            None => out.push((name, Value::Plain(quoted(&email_quote(&value))))),
        }
    }
    for (name, mut parts) in continued {
        // `sort()` compares `None` with an int: a `TypeError`.
        if parts.len() > 1
            && parts.iter().any(|p| p.0.is_none())
            && parts.iter().any(|p| p.0.is_some())
        {
            return None;
        }
        parts.sort_by(|a, b| {
            let number = |n: &Option<String>| n.as_ref().map(|d| (d.len(), d.clone()));
            number(&a.0)
                .cmp(&number(&b.0))
                .then_with(|| a.1.cmp(&b.1))
                .then_with(|| a.2.cmp(&b.2))
        });
        let mut value = String::new();
        let mut extended = false;
        for (_, text, encoded) in parts {
            if encoded {
                value.push_str(&unquote_latin1(&text));
                extended = true;
            } else {
                value.push_str(&text);
            }
        }
        let value = email_quote(&value);
        if extended {
            // `decode_rfc2231`: `charset'language'text`, else no charset.
            let mut pieces = value.splitn(3, '\'');
            match (pieces.next(), pieces.next(), pieces.next()) {
                (Some(charset), Some(_), Some(text)) => out.push((
                    name,
                    Value::Extended(Some(charset.to_owned()), quoted(text)),
                )),
                _ => out.push((name, Value::Extended(None, quoted(&value)))),
            }
        } else {
            out.push((name, Value::Plain(quoted(&value))));
        }
    }
    Some(out)
}

/// `email.utils.rfc2231_continuation` (`^(?P<name>\w+)\*((?P<num>[0-9]+)\*?)?$`, ASCII): the
/// name and its number (digits, leading zeros dropped).
fn rfc2231_continuation(name: &str) -> Option<(String, Option<String>)> {
    let star = name.find('*')?;
    let (base, rest) = (&name[..star], &name[star + 1..]);
    if base.is_empty() || !base.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return None;
    }
    if rest.is_empty() {
        return Some((base.to_owned(), None));
    }
    let digits = rest.strip_suffix('*').unwrap_or(rest);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number = digits.trim_start_matches('0');
    Some((base.to_owned(), Some(number.to_owned())))
}

/// `email.utils.unquote`: one pair of surrounding `"` (with `\\` and `\"` unescaped) or `<>`
/// dropped.
fn email_unquote(s: &str) -> std::borrow::Cow<'_, str> {
    if s.len() > 1 {
        if s.starts_with('"') && s.ends_with('"') {
            return s[1..s.len() - 1]
                .replace("\\\\", "\\")
                .replace("\\\"", &'"'.to_string())
                .into();
        }
        if s.starts_with('<') && s.ends_with('>') {
            return s[1..s.len() - 1].into();
        }
    }
    s.into()
}

/// `email.utils.quote`: `\` and `"` escaped with a backslash.
fn email_quote(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// `collapse_rfc2231_value` of an extended value: its text as `raw-unicode-escape` bytes
/// decoded in its charset (`us-ascii` when none), `errors='replace'`.
fn collapse(charset: Option<String>, text: &str) -> Param {
    let mut bytes = Vec::with_capacity(text.len());
    for c in text.chars() {
        match u8::try_from(u32::from(c)) {
            Ok(b) => bytes.push(b),
            Err(_) if u32::from(c) <= 0xffff => {
                bytes.extend_from_slice(format!("\\u{:04x}", u32::from(c)).as_bytes());
            }
            Err(_) => bytes.extend_from_slice(format!("\\U{:08x}", u32::from(c)).as_bytes()),
        }
    }
    let name = charset.unwrap_or_else(|| "us-ascii".to_owned());
    let Some(codec) = codec(&name) else {
        // Not a codec (`LookupError`): `unquote(text)`.
        return Param::Text(email_unquote(text).into_owned());
    };
    match codec {
        Codec::Utf8 => Param::Text(String::from_utf8_lossy(&bytes).into_owned()),
        Codec::Ascii => Param::Text(
            bytes
                .iter()
                .map(|&b| if b.is_ascii() { b as char } else { '\u{fffd}' })
                .collect(),
        ),
        Codec::Latin1 => Param::Text(bytes.iter().map(|&b| char::from(b)).collect()),
        // Its text is `"..."`: what the charset makes of the bytes between the quotes.
        Codec::Other => Param::Undecoded(
            name,
            bytes
                .get(1..bytes.len().saturating_sub(1))
                .unwrap_or_default()
                .to_vec(),
        ),
    }
}

/// `s` in double quotes (as `email.utils` writes a parameter's value).
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    out.push_str(s);
    out.push('"');
    out
}

/// The last place of `needle` in `hay`.
fn rfind(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.len() > hay.len() {
        return None;
    }
    (0..=hay.len() - needle.len())
        .rev()
        .find(|&i| hay[i..].starts_with(needle))
}

/// The first place of `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Python's `bytes.split(separator)` (a non-empty separator).
fn split<'a>(hay: &'a [u8], separator: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = hay;
    while let Some(at) = find(rest, separator) {
        out.push(&rest[..at]);
        rest = &rest[at + separator.len()..];
    }
    out.push(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each case's fields and files as Tornado 5.1 reads them (`parse_body_arguments` run on the
    /// same content type and body under Python 3.11).
    #[test]
    fn multipart_bodies_are_read_as_tornado_reads_them() {
        #[allow(clippy::type_complexity)]
        let cases: Vec<(&str, &[u8], Vec<(&str, Vec<Vec<u8>>)>, Vec<&str>)> = vec![
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22a\x22\x0d\x0a\x0d\x0a1\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22a\x22\x0d\x0a\x0d\x0a2\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=b\x0d\x0a\x0d\x0a\x0d\x0a--B--\x0d\x0a", vec![("a", vec![b"1".to_vec(), b"2".to_vec()]), ("b", vec![b"".to_vec()])], vec![]),
        ("multipart/form-data; boundary=\"B\"", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22q\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("q", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; Boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22q\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![], vec![]),
        ("multipart/form-data;boundary=B;charset=x", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22q\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("q", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary = B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22q\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22f\x22; filename=\x22x.txt\x22\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22g\x22; filename=\x22\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("g", vec![b"v".to_vec()])], vec!["f"]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22q\x22\x0d\x0a\x0d\x0av\x0d\x0a", vec![], vec![]),
        ("multipart/form-data; boundary=B", b"preamble\x0d\x0a--B\x0d\x0agarbage\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22q\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("q", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: FORM-DATA; name=\x22q\x22\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; NAME=\x22r\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("r", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22a\x22\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22\xff\x22\x0d\x0a\x0d\x0ax\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22c\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("a", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22a\x22\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aNo colon here\x0d\x0a\x0d\x0ax\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22c\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("a", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22a\x22\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0a folded first\x0d\x0a\x0d\x0ax\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22c\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("a", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data;\x0d\x0a name=\x22folded\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("folded", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0acontent-disposition: form-data; name=\x22lower\x22\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition : form-data; name=\x22spaced\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("lower", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22x\x22\x0d\x0aContent-Disposition: form-data; name=\x22y\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("y", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name*=utf-8''%C3%A9t%C3%A9\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name*=utf-8''a%22b\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name*=x''abc\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name*=abc\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("été", vec![b"v".to_vec()]), ("a\\\"b", vec![b"v".to_vec()]), ("abc", vec![b"v".to_vec(), b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name*0=a; name*1=b\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name*1*=%41; name*0=z\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("ab", vec![b"v".to_vec()]), ("zA", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name*=a; name*0=b\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22after\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=<ang>\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22a\x5c\x22b\x22\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22a;b\x22\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22\x5c\x22q\x5c\x22\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("ang", vec![b"v".to_vec()]), ("a\"b", vec![b"v".to_vec()]), ("a;b", vec![b"v".to_vec()]), ("q", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22plain\x22; name*=latin-1''%E9\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name*=us-ascii''%E9x\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("é", vec![b"v".to_vec()]), ("�x", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data;; name=\x22dbl\x22\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22\x22\x0d\x0a\x0d\x0av\x0d\x0a--B\x0d\x0aContent-Disposition: form-data\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("dbl", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22nocrlf\x22\x0d\x0a\x0d\x0av--B--", vec![], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22x\x22\x0d\x0a\x0d\x0a\x0d\x0a--B--", vec![("x", vec![b"".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22x\x22\x0d\x0a\x0d\x0aa\x0d\x0a--B--\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22y\x22\x0d\x0a\x0d\x0ab\x0d\x0a--B--", vec![("x", vec![b"a\x0d\x0a--B--".to_vec()]), ("y", vec![b"b".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22\xc3\xa9\x22\x0d\x0a\x0d\x0a\xff\xfe\x0d\x0a--B\x0d\x0aContent-Disposition: form-data; name=\x22k\x22\x0d\x0a\x0d\x0aa\x0d\x0a\x0d\x0ab\x0d\x0a--B--\x0d\x0a", vec![("é", vec![b"\xff\xfe".to_vec()]), ("k", vec![b"a\x0d\x0a\x0d\x0ab".to_vec()])], vec![]),
        ("multipart/form-data; boundary=é", b"--\xc3\xa9\x0d\x0aContent-Disposition: form-data; name=\x22u\x22\x0d\x0a\x0d\x0av\x0d\x0a--\xc3\xa9--", vec![("u", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=\"", b"----\x0d\x0aContent-Disposition: form-data; name=\x22e\x22\x0d\x0a\x0d\x0av\x0d\x0a----", vec![("e", vec![b"v".to_vec()])], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aContent-Disposition: form-data; name=\x22lf\x22\x0a\x0av\x0d\x0a--B--\x0d\x0a", vec![], vec![]),
        ("multipart/form-data; boundary=B", b"--B\x0d\x0aX: 1\x0aContent-Disposition: form-data; name=\x22lfhead\x22\x0d\x0a\x0d\x0av\x0d\x0a--B--\x0d\x0a", vec![("lfhead", vec![b"v".to_vec()])], vec![]),
        ];
        for (content_type, body, fields, files) in cases {
            let read = boundary(content_type)
                .map(|b| super::read(&b, body))
                .unwrap_or_default();
            let got: Vec<(&str, Vec<Vec<u8>>)> = read
                .fields
                .iter()
                .map(|(k, v)| (k.as_str(), v.clone()))
                .collect();
            assert_eq!(
                got,
                fields,
                "{content_type} {:?}",
                String::from_utf8_lossy(body)
            );
            let got_files: Vec<&str> = read
                .skipped
                .iter()
                .filter_map(|s| match s {
                    Skipped::File(name) => Some(name.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(
                got_files,
                files,
                "{content_type} {:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    /// What Tornado passes over is told apart (strict mode names it).
    #[test]
    fn the_parts_passed_over_are_named() {
        let skipped = |body: &[u8]| super::read(b"B", body).skipped;
        assert_eq!(skipped(b"--B\r\nx"), [Skipped::NoFinalBoundary]);
        assert_eq!(skipped(b"pre\r\n--B\r\n--B--"), []);
        assert_eq!(skipped(b"--B\r\nx\r\n--B--"), [Skipped::NoHeaders(1)]);
        assert_eq!(
            skipped(b"--B\r\nA: 1\r\n\r\nx\r\n--B--"),
            [Skipped::NotFormData(1)]
        );
        assert_eq!(
            skipped(b"--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--"),
            [Skipped::NoName(1)]
        );
        assert_eq!(
            skipped(b"--B\r\nA\r\n\r\nx\r\n--B\r\nContent-Disposition: form-data; name=a\r\n\r\nx\r\n--B--"),
            [Skipped::Stopped(1)]
        );
        assert_eq!(
            skipped(b"--B\r\nContent-Disposition: form-data; name*=cp1252''%80\r\n\r\nx\r\n--B--"),
            [Skipped::Charset(1, "cp1252".to_owned())]
        );
        // A file is not a field, whatever its name's charset.
        assert_eq!(
            skipped(b"--B\r\nContent-Disposition: form-data; name*=cp1252''%80; filename=f\r\n\r\nx\r\n--B--"),
            [Skipped::File("\u{fffd}".to_owned())]
        );
    }
}
