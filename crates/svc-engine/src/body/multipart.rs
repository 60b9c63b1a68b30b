//! `multipart/form-data` bodies as the engine reads them: Tornado 5.1's `parse_body_arguments`
//! (the boundary from the content type) and `parse_multipart_form_data` (each part's headers,
//! its `Content-Disposition` read by `_parse_header` with `email.utils`' RFC 2231 decoding).
//! A part with a `filename` is a file, which no records view reads; the others are fields.

use std::collections::HashMap;

use crate::body::form::{Fields, push, unquote_latin1};
use crate::python::numbers::{py_is_space, py_strip};

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
    let boundary = if boundary.len() > 1 && boundary.starts_with(b"\"") && boundary.ends_with(b"\"")
    {
        &boundary[1..boundary.len() - 1]
    } else if boundary == b"\"" {
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
            None => out.push((name, Value::Plain(format!("\"{}\"", email_quote(&value))))),
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
                    Value::Extended(Some(charset.to_owned()), format!("\"{text}\"")),
                )),
                _ => out.push((name, Value::Extended(None, format!("\"{value}\"")))),
            }
        } else {
            out.push((name, Value::Plain(format!("\"{value}\""))));
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
                .replace("\\\"", "\"")
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

/// What Python makes of a charset name.
enum Codec {
    Utf8,
    Ascii,
    Latin1,
    /// Another of Python's text codecs, which the emulator does not decode.
    Other,
}

/// Python's codec of a charset name (`codecs.lookup`): ASCII lowercased, normalized as
/// `encodings.normalize_encoding` does (each run of characters other than letters, digits
/// and `.` one `_`, letters beyond ASCII dropped), then an alias or a module of `encodings`.
/// `None`: no text codec (`LookupError`).
fn codec(name: &str) -> Option<Codec> {
    let mut norm = String::new();
    let mut punct = false;
    for c in name.to_ascii_lowercase().chars() {
        if c.is_alphanumeric() || c == '.' {
            if punct && !norm.is_empty() {
                norm.push('_');
            }
            if c.is_ascii() {
                norm.push(c);
            }
            punct = false;
        } else {
            punct = true;
        }
    }
    let alias = |n: &str| {
        PYTHON_ALIASES
            .binary_search_by(|(a, _)| (*a).cmp(n))
            .ok()
            .map(|i| PYTHON_ALIASES[i].1)
    };
    let module = alias(&norm)
        .or_else(|| alias(&norm.replace('.', "_")))
        .or_else(|| {
            (!norm.contains('.') && PYTHON_CODECS.binary_search(&norm.as_str()).is_ok())
                .then_some(norm.as_str())
        })?;
    Some(match module {
        "utf_8" => Codec::Utf8,
        "ascii" => Codec::Ascii,
        "latin_1" => Codec::Latin1,
        _ => Codec::Other,
    })
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

/// Python 3.11's text codecs (`encodings`): each alias (as `encodings.aliases` spells it)
/// and its module.
const PYTHON_ALIASES: [(&str, &str); 312] = [
    ("037", "cp037"),
    ("1026", "cp1026"),
    ("1125", "cp1125"),
    ("1140", "cp1140"),
    ("1250", "cp1250"),
    ("1251", "cp1251"),
    ("1252", "cp1252"),
    ("1253", "cp1253"),
    ("1254", "cp1254"),
    ("1255", "cp1255"),
    ("1256", "cp1256"),
    ("1257", "cp1257"),
    ("1258", "cp1258"),
    ("273", "cp273"),
    ("424", "cp424"),
    ("437", "cp437"),
    ("500", "cp500"),
    ("646", "ascii"),
    ("775", "cp775"),
    ("850", "cp850"),
    ("852", "cp852"),
    ("855", "cp855"),
    ("857", "cp857"),
    ("858", "cp858"),
    ("860", "cp860"),
    ("861", "cp861"),
    ("862", "cp862"),
    ("863", "cp863"),
    ("864", "cp864"),
    ("865", "cp865"),
    ("866", "cp866"),
    ("869", "cp869"),
    ("8859", "latin_1"),
    ("932", "cp932"),
    ("936", "gbk"),
    ("949", "cp949"),
    ("950", "cp950"),
    ("ansi_x3.4_1968", "ascii"),
    ("ansi_x3.4_1986", "ascii"),
    ("ansi_x3_4_1968", "ascii"),
    ("arabic", "iso8859_6"),
    ("asmo_708", "iso8859_6"),
    ("big5_hkscs", "big5hkscs"),
    ("big5_tw", "big5"),
    ("chinese", "gb2312"),
    ("cp1051", "hp_roman8"),
    ("cp1361", "johab"),
    ("cp154", "ptcp154"),
    ("cp367", "ascii"),
    ("cp65001", "utf_8"),
    ("cp819", "latin_1"),
    ("cp866u", "cp1125"),
    ("cp936", "gbk"),
    ("cp_gr", "cp869"),
    ("cp_is", "cp861"),
    ("csascii", "ascii"),
    ("csbig5", "big5"),
    ("csibm037", "cp037"),
    ("csibm1026", "cp1026"),
    ("csibm273", "cp273"),
    ("csibm424", "cp424"),
    ("csibm500", "cp500"),
    ("csibm855", "cp855"),
    ("csibm857", "cp857"),
    ("csibm858", "cp858"),
    ("csibm860", "cp860"),
    ("csibm861", "cp861"),
    ("csibm863", "cp863"),
    ("csibm864", "cp864"),
    ("csibm865", "cp865"),
    ("csibm866", "cp866"),
    ("csibm869", "cp869"),
    ("csiso2022jp", "iso2022_jp"),
    ("csiso2022kr", "iso2022_kr"),
    ("csiso58gb231280", "gb2312"),
    ("csisolatin1", "latin_1"),
    ("csisolatin2", "iso8859_2"),
    ("csisolatin3", "iso8859_3"),
    ("csisolatin4", "iso8859_4"),
    ("csisolatin5", "iso8859_9"),
    ("csisolatin6", "iso8859_10"),
    ("csisolatinarabic", "iso8859_6"),
    ("csisolatincyrillic", "iso8859_5"),
    ("csisolatingreek", "iso8859_7"),
    ("csisolatinhebrew", "iso8859_8"),
    ("cskoi8r", "koi8_r"),
    ("cspc775baltic", "cp775"),
    ("cspc850multilingual", "cp850"),
    ("cspc862latinhebrew", "cp862"),
    ("cspc8codepage437", "cp437"),
    ("cspcp852", "cp852"),
    ("csptcp154", "ptcp154"),
    ("csshiftjis", "shift_jis"),
    ("cyrillic", "iso8859_5"),
    ("cyrillic_asian", "ptcp154"),
    ("ebcdic_cp_be", "cp500"),
    ("ebcdic_cp_ca", "cp037"),
    ("ebcdic_cp_ch", "cp500"),
    ("ebcdic_cp_he", "cp424"),
    ("ebcdic_cp_nl", "cp037"),
    ("ebcdic_cp_us", "cp037"),
    ("ebcdic_cp_wt", "cp037"),
    ("ecma_114", "iso8859_6"),
    ("ecma_118", "iso8859_7"),
    ("elot_928", "iso8859_7"),
    ("euc_cn", "gb2312"),
    ("euc_jis2004", "euc_jis_2004"),
    ("euccn", "gb2312"),
    ("eucgb2312_cn", "gb2312"),
    ("eucjis2004", "euc_jis_2004"),
    ("eucjisx0213", "euc_jisx0213"),
    ("eucjp", "euc_jp"),
    ("euckr", "euc_kr"),
    ("gb18030_2000", "gb18030"),
    ("gb2312_1980", "gb2312"),
    ("gb2312_80", "gb2312"),
    ("greek", "iso8859_7"),
    ("greek8", "iso8859_7"),
    ("hebrew", "iso8859_8"),
    ("hkscs", "big5hkscs"),
    ("hz_gb", "hz"),
    ("hz_gb_2312", "hz"),
    ("hzgb", "hz"),
    ("ibm037", "cp037"),
    ("ibm039", "cp037"),
    ("ibm1026", "cp1026"),
    ("ibm1051", "hp_roman8"),
    ("ibm1125", "cp1125"),
    ("ibm1140", "cp1140"),
    ("ibm273", "cp273"),
    ("ibm367", "ascii"),
    ("ibm424", "cp424"),
    ("ibm437", "cp437"),
    ("ibm500", "cp500"),
    ("ibm775", "cp775"),
    ("ibm819", "latin_1"),
    ("ibm850", "cp850"),
    ("ibm852", "cp852"),
    ("ibm855", "cp855"),
    ("ibm857", "cp857"),
    ("ibm858", "cp858"),
    ("ibm860", "cp860"),
    ("ibm861", "cp861"),
    ("ibm862", "cp862"),
    ("ibm863", "cp863"),
    ("ibm864", "cp864"),
    ("ibm865", "cp865"),
    ("ibm866", "cp866"),
    ("ibm869", "cp869"),
    ("iso2022jp", "iso2022_jp"),
    ("iso2022jp_1", "iso2022_jp_1"),
    ("iso2022jp_2", "iso2022_jp_2"),
    ("iso2022jp_2004", "iso2022_jp_2004"),
    ("iso2022jp_3", "iso2022_jp_3"),
    ("iso2022jp_ext", "iso2022_jp_ext"),
    ("iso2022kr", "iso2022_kr"),
    ("iso646_us", "ascii"),
    ("iso8859", "latin_1"),
    ("iso8859_1", "latin_1"),
    ("iso_2022_jp", "iso2022_jp"),
    ("iso_2022_jp_1", "iso2022_jp_1"),
    ("iso_2022_jp_2", "iso2022_jp_2"),
    ("iso_2022_jp_2004", "iso2022_jp_2004"),
    ("iso_2022_jp_3", "iso2022_jp_3"),
    ("iso_2022_jp_ext", "iso2022_jp_ext"),
    ("iso_2022_kr", "iso2022_kr"),
    ("iso_646.irv_1991", "ascii"),
    ("iso_8859_1", "latin_1"),
    ("iso_8859_10", "iso8859_10"),
    ("iso_8859_10_1992", "iso8859_10"),
    ("iso_8859_11", "iso8859_11"),
    ("iso_8859_11_2001", "iso8859_11"),
    ("iso_8859_13", "iso8859_13"),
    ("iso_8859_14", "iso8859_14"),
    ("iso_8859_14_1998", "iso8859_14"),
    ("iso_8859_15", "iso8859_15"),
    ("iso_8859_16", "iso8859_16"),
    ("iso_8859_16_2001", "iso8859_16"),
    ("iso_8859_1_1987", "latin_1"),
    ("iso_8859_2", "iso8859_2"),
    ("iso_8859_2_1987", "iso8859_2"),
    ("iso_8859_3", "iso8859_3"),
    ("iso_8859_3_1988", "iso8859_3"),
    ("iso_8859_4", "iso8859_4"),
    ("iso_8859_4_1988", "iso8859_4"),
    ("iso_8859_5", "iso8859_5"),
    ("iso_8859_5_1988", "iso8859_5"),
    ("iso_8859_6", "iso8859_6"),
    ("iso_8859_6_1987", "iso8859_6"),
    ("iso_8859_7", "iso8859_7"),
    ("iso_8859_7_1987", "iso8859_7"),
    ("iso_8859_8", "iso8859_8"),
    ("iso_8859_8_1988", "iso8859_8"),
    ("iso_8859_9", "iso8859_9"),
    ("iso_8859_9_1989", "iso8859_9"),
    ("iso_celtic", "iso8859_14"),
    ("iso_ir_100", "latin_1"),
    ("iso_ir_101", "iso8859_2"),
    ("iso_ir_109", "iso8859_3"),
    ("iso_ir_110", "iso8859_4"),
    ("iso_ir_126", "iso8859_7"),
    ("iso_ir_127", "iso8859_6"),
    ("iso_ir_138", "iso8859_8"),
    ("iso_ir_144", "iso8859_5"),
    ("iso_ir_148", "iso8859_9"),
    ("iso_ir_157", "iso8859_10"),
    ("iso_ir_166", "tis_620"),
    ("iso_ir_199", "iso8859_14"),
    ("iso_ir_226", "iso8859_16"),
    ("iso_ir_58", "gb2312"),
    ("iso_ir_6", "ascii"),
    ("jisx0213", "euc_jis_2004"),
    ("korean", "euc_kr"),
    ("ks_c_5601", "euc_kr"),
    ("ks_c_5601_1987", "euc_kr"),
    ("ks_x_1001", "euc_kr"),
    ("ksc5601", "euc_kr"),
    ("ksx1001", "euc_kr"),
    ("kz_1048", "kz1048"),
    ("l1", "latin_1"),
    ("l10", "iso8859_16"),
    ("l2", "iso8859_2"),
    ("l3", "iso8859_3"),
    ("l4", "iso8859_4"),
    ("l5", "iso8859_9"),
    ("l6", "iso8859_10"),
    ("l7", "iso8859_13"),
    ("l8", "iso8859_14"),
    ("l9", "iso8859_15"),
    ("latin", "latin_1"),
    ("latin1", "latin_1"),
    ("latin10", "iso8859_16"),
    ("latin2", "iso8859_2"),
    ("latin3", "iso8859_3"),
    ("latin4", "iso8859_4"),
    ("latin5", "iso8859_9"),
    ("latin6", "iso8859_10"),
    ("latin7", "iso8859_13"),
    ("latin8", "iso8859_14"),
    ("latin9", "iso8859_15"),
    ("mac_centeuro", "mac_latin2"),
    ("maccentraleurope", "mac_latin2"),
    ("maccyrillic", "mac_cyrillic"),
    ("macgreek", "mac_greek"),
    ("maciceland", "mac_iceland"),
    ("macintosh", "mac_roman"),
    ("maclatin2", "mac_latin2"),
    ("macroman", "mac_roman"),
    ("macturkish", "mac_turkish"),
    ("ms1361", "johab"),
    ("ms932", "cp932"),
    ("ms936", "gbk"),
    ("ms949", "cp949"),
    ("ms950", "cp950"),
    ("ms_kanji", "cp932"),
    ("mskanji", "cp932"),
    ("pt154", "ptcp154"),
    ("r8", "hp_roman8"),
    ("rk1048", "kz1048"),
    ("roman8", "hp_roman8"),
    ("ruscii", "cp1125"),
    ("s_jis", "shift_jis"),
    ("s_jis_2004", "shift_jis_2004"),
    ("s_jisx0213", "shift_jisx0213"),
    ("shiftjis", "shift_jis"),
    ("shiftjis2004", "shift_jis_2004"),
    ("shiftjisx0213", "shift_jisx0213"),
    ("sjis", "shift_jis"),
    ("sjis_2004", "shift_jis_2004"),
    ("sjisx0213", "shift_jisx0213"),
    ("strk1048_2002", "kz1048"),
    ("thai", "iso8859_11"),
    ("tis620", "tis_620"),
    ("tis_620_0", "tis_620"),
    ("tis_620_2529_0", "tis_620"),
    ("tis_620_2529_1", "tis_620"),
    ("u16", "utf_16"),
    ("u32", "utf_32"),
    ("u7", "utf_7"),
    ("u8", "utf_8"),
    ("u_jis", "euc_jp"),
    ("uhc", "cp949"),
    ("ujis", "euc_jp"),
    ("unicode_1_1_utf_7", "utf_7"),
    ("unicodebigunmarked", "utf_16_be"),
    ("unicodelittleunmarked", "utf_16_le"),
    ("us", "ascii"),
    ("us_ascii", "ascii"),
    ("utf", "utf_8"),
    ("utf16", "utf_16"),
    ("utf32", "utf_32"),
    ("utf7", "utf_7"),
    ("utf8", "utf_8"),
    ("utf8_ucs2", "utf_8"),
    ("utf8_ucs4", "utf_8"),
    ("utf_16be", "utf_16_be"),
    ("utf_16le", "utf_16_le"),
    ("utf_32be", "utf_32_be"),
    ("utf_32le", "utf_32_le"),
    ("windows_1250", "cp1250"),
    ("windows_1251", "cp1251"),
    ("windows_1252", "cp1252"),
    ("windows_1253", "cp1253"),
    ("windows_1254", "cp1254"),
    ("windows_1255", "cp1255"),
    ("windows_1256", "cp1256"),
    ("windows_1257", "cp1257"),
    ("windows_1258", "cp1258"),
    ("x_mac_japanese", "shift_jis"),
    ("x_mac_korean", "euc_kr"),
    ("x_mac_simp_chinese", "gb2312"),
    ("x_mac_trad_chinese", "big5"),
];

/// The modules of Python 3.11's text codecs.
const PYTHON_CODECS: [&str; 111] = [
    "ascii",
    "big5",
    "big5hkscs",
    "charmap",
    "cp037",
    "cp1006",
    "cp1026",
    "cp1125",
    "cp1140",
    "cp1250",
    "cp1251",
    "cp1252",
    "cp1253",
    "cp1254",
    "cp1255",
    "cp1256",
    "cp1257",
    "cp1258",
    "cp273",
    "cp424",
    "cp437",
    "cp500",
    "cp720",
    "cp737",
    "cp775",
    "cp850",
    "cp852",
    "cp855",
    "cp856",
    "cp857",
    "cp858",
    "cp860",
    "cp861",
    "cp862",
    "cp863",
    "cp864",
    "cp865",
    "cp866",
    "cp869",
    "cp874",
    "cp875",
    "cp932",
    "cp949",
    "cp950",
    "euc_jis_2004",
    "euc_jisx0213",
    "euc_jp",
    "euc_kr",
    "gb18030",
    "gb2312",
    "gbk",
    "hp_roman8",
    "hz",
    "idna",
    "iso2022_jp",
    "iso2022_jp_1",
    "iso2022_jp_2",
    "iso2022_jp_2004",
    "iso2022_jp_3",
    "iso2022_jp_ext",
    "iso2022_kr",
    "iso8859_1",
    "iso8859_10",
    "iso8859_11",
    "iso8859_13",
    "iso8859_14",
    "iso8859_15",
    "iso8859_16",
    "iso8859_2",
    "iso8859_3",
    "iso8859_4",
    "iso8859_5",
    "iso8859_6",
    "iso8859_7",
    "iso8859_8",
    "iso8859_9",
    "johab",
    "koi8_r",
    "koi8_t",
    "koi8_u",
    "kz1048",
    "latin_1",
    "mac_arabic",
    "mac_croatian",
    "mac_cyrillic",
    "mac_farsi",
    "mac_greek",
    "mac_iceland",
    "mac_latin2",
    "mac_roman",
    "mac_romanian",
    "mac_turkish",
    "palmos",
    "ptcp154",
    "punycode",
    "raw_unicode_escape",
    "shift_jis",
    "shift_jis_2004",
    "shift_jisx0213",
    "tis_620",
    "undefined",
    "unicode_escape",
    "utf_16",
    "utf_16_be",
    "utf_16_le",
    "utf_32",
    "utf_32_be",
    "utf_32_le",
    "utf_7",
    "utf_8",
    "utf_8_sig",
];

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
