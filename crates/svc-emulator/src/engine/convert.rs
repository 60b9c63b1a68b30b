//! The engine's Python readings of query text and request bodies, and of the JSON a `JSON`
//! column stores. What a database is given for a value (SQLAlchemy's bind processors of its
//! dialect) is that backend's.

use serde_json::Value as Json;

use crate::engine::json_text::{digits, write_json_str};
use crate::engine::types::{ColumnType, Date, PyValue, Reflected, Serializer, Time};

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

// ---------------------------------------------------------------------------------------------
// The write side: request bodies read as the data engine's Python reads them.
//
// The engine (jet-bridge over SQLAlchemy 1.4) parses a body with `json.loads`, gives every
// column a serializer field from `str(type)` (`IntegerField`, `FloatField`, `BooleanField`,
// `DateTimeField`, `JSONField`, else `CharField`), whose `to_internal_value` makes a Python
// value; SQLAlchemy's bind processor of the column type and Python's `sqlite3` then turn that
// value into what SQLite stores. Each step is reproduced here, Python's rules included (`int()`
// and `float()` accept underscores, Unicode digits and white space; `str()` of a list or a
// dict is its `repr`).

/// A request body value as Python's `json.loads` (or the engine's form reader) gives it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PyJson {
    /// `None`.
    None,
    /// `bool`.
    Bool(bool),
    /// `int`, as canonical decimal text (`-12`, `0`): Python ints have no size limit.
    Int(String),
    /// `float` (JSON numbers with a fraction or an exponent, `NaN`, `Infinity`).
    Float(f64),
    /// `str`.
    Str(String),
    /// `list`.
    List(Vec<PyJson>),
    /// `dict`, keys in first-seen order (a repeated key keeps its place and takes the last
    /// value, as a Python dict does).
    Dict(Vec<(String, PyJson)>),
}

impl PyJson {
    /// The value of key `name` of a dict, `None` when absent or when `self` is not a dict.
    pub(crate) fn get(&self, name: &str) -> Option<&PyJson> {
        match self {
            PyJson::Dict(items) => items.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Python's truth value (`bool(value)`).
    pub(crate) fn truthy(&self) -> bool {
        match self {
            PyJson::None => false,
            PyJson::Bool(b) => *b,
            PyJson::Int(i) => i != "0",
            PyJson::Float(f) => *f != 0.0,
            PyJson::Str(s) => !s.is_empty(),
            PyJson::List(l) => !l.is_empty(),
            PyJson::Dict(d) => !d.is_empty(),
        }
    }

    /// Inserts `key` as a Python dict assignment does.
    fn dict_insert(items: &mut Vec<(String, PyJson)>, key: String, value: PyJson) {
        match items.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => items.push((key, value)),
        }
    }
}

impl From<&Json> for PyJson {
    fn from(v: &Json) -> Self {
        match v {
            Json::Null => PyJson::None,
            Json::Bool(b) => PyJson::Bool(*b),
            Json::Number(n) => {
                if let Some(i) = n.as_i64() {
                    PyJson::Int(i.to_string())
                } else if let Some(u) = n.as_u64() {
                    PyJson::Int(u.to_string())
                } else {
                    PyJson::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Json::String(s) => PyJson::Str(s.clone()),
            Json::Array(a) => PyJson::List(a.iter().map(PyJson::from).collect()),
            Json::Object(o) => PyJson::Dict(
                o.iter()
                    .map(|(k, v)| (k.clone(), PyJson::from(v)))
                    .collect(),
            ),
        }
    }
}

/// How deep a body may nest before it is refused (Python's parser would hit its recursion
/// limit, an error, long before a body this deep is useful).
const MAX_JSON_DEPTH: usize = 500;

/// Parses text as Python's `json.loads` does: any JSON value, plus `NaN`, `Infinity` and
/// `-Infinity`; numbers with a fraction or an exponent are floats, the others ints of any size.
/// `Err` holds a message saying where the text stops being JSON.
pub(crate) fn parse_py_json(text: &str) -> Result<PyJson, String> {
    parse_py_json_at(text).map_err(|(what, at)| format!("{what} (char {at})"))
}

/// [`parse_py_json`], whose failure is what is wrong and the byte of `text` where the text
/// stops being JSON (a fixture file names its line).
pub(crate) fn parse_py_json_at(text: &str) -> Result<PyJson, (String, usize)> {
    let mut p = JsonParser {
        s: text.as_bytes(),
        at: 0,
        depth: 0,
    };
    let read = |p: &mut JsonParser<'_>| {
        p.skip_ws();
        let v = p.value()?;
        p.skip_ws();
        if p.at != p.s.len() {
            return Err(p.error("Extra data"));
        }
        Ok(v)
    };
    // Every failure is made where the parser stands, and returned at once.
    read(&mut p).map_err(|what| (what, p.at))
}

struct JsonParser<'a> {
    s: &'a [u8],
    at: usize,
    depth: usize,
}

impl JsonParser<'_> {
    /// What is wrong; [`parse_py_json`] adds where (`self.at`, unchanged on the way out).
    fn error(&self, what: &str) -> String {
        what.to_owned()
    }

    fn skip_ws(&mut self) {
        while matches!(self.s.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, word: &str) -> bool {
        if self.s[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<PyJson, String> {
        match self.s.get(self.at) {
            Some(b'{') => self.nested(|p| p.object()),
            Some(b'[') => self.nested(|p| p.array()),
            Some(b'"') => self.string().map(PyJson::Str),
            Some(b'n') if self.eat("null") => Ok(PyJson::None),
            Some(b't') if self.eat("true") => Ok(PyJson::Bool(true)),
            Some(b'f') if self.eat("false") => Ok(PyJson::Bool(false)),
            Some(b'N') if self.eat("NaN") => Ok(PyJson::Float(f64::NAN)),
            Some(b'I') if self.eat("Infinity") => Ok(PyJson::Float(f64::INFINITY)),
            Some(b'-') if self.eat("-Infinity") => Ok(PyJson::Float(f64::NEG_INFINITY)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("Expecting value")),
        }
    }

    fn nested(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<PyJson, String>,
    ) -> Result<PyJson, String> {
        self.depth += 1;
        if self.depth > MAX_JSON_DEPTH {
            return Err(self.error("Nested too deeply"));
        }
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn object(&mut self) -> Result<PyJson, String> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.eat("}") {
            return Ok(PyJson::Dict(items));
        }
        loop {
            self.skip_ws();
            if self.s.get(self.at) != Some(&b'"') {
                return Err(self.error("Expecting property name enclosed in double quotes"));
            }
            let key = self.string()?;
            self.skip_ws();
            if !self.eat(":") {
                return Err(self.error("Expecting ':' delimiter"));
            }
            self.skip_ws();
            let value = self.value()?;
            PyJson::dict_insert(&mut items, key, value);
            self.skip_ws();
            if self.eat("}") {
                return Ok(PyJson::Dict(items));
            }
            if !self.eat(",") {
                return Err(self.error("Expecting ',' delimiter"));
            }
        }
    }

    fn array(&mut self) -> Result<PyJson, String> {
        self.at += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.eat("]") {
            return Ok(PyJson::List(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value()?);
            self.skip_ws();
            if self.eat("]") {
                return Ok(PyJson::List(items));
            }
            if !self.eat(",") {
                return Err(self.error("Expecting ',' delimiter"));
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .s
            .get(self.at..self.at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.error("Invalid \\uXXXX escape"))?;
        self.at += 4;
        Ok(digits)
    }

    fn string(&mut self) -> Result<String, String> {
        self.at += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(&b) = self.s.get(self.at) else {
                return Err(self.error("Unterminated string"));
            };
            self.at += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = self.s.get(self.at) else {
                        return Err(self.error("Unterminated string"));
                    };
                    self.at += 1;
                    let c = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let cp = if (0xd800..0xdc00).contains(&hi)
                                && self.s[self.at..].starts_with(b"\\u")
                            {
                                self.at += 2;
                                let lo = self.hex4()?;
                                if (0xdc00..0xe000).contains(&lo) {
                                    0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                                } else {
                                    // Python keeps a lone surrogate, which no Rust string can
                                    // hold (and SQLite could not store it as UTF-8 either).
                                    return Err(self.error("Lone surrogate in \\uXXXX escape"));
                                }
                            } else {
                                hi
                            };
                            char::from_u32(cp)
                                .ok_or_else(|| self.error("Lone surrogate in \\uXXXX escape"))?
                        }
                        _ => return Err(self.error("Invalid \\escape")),
                    };
                    let mut tmp = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                }
                // Python's strict mode refuses control characters inside strings.
                0..=0x1f => return Err(self.error("Invalid control character")),
                _ => out.push(b),
            }
        }
        String::from_utf8(out).map_err(|_| self.error("Invalid UTF-8"))
    }

    fn number(&mut self) -> Result<PyJson, String> {
        let start = self.at;
        let digits = |p: &mut Self| {
            let from = p.at;
            while p.s.get(p.at).is_some_and(u8::is_ascii_digit) {
                p.at += 1;
            }
            p.at - from
        };
        if self.s.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        if self.s.get(self.at) == Some(&b'0') {
            self.at += 1;
        } else if digits(self) == 0 {
            return Err(self.error("Expecting value"));
        }
        let mut float = false;
        if self.s.get(self.at) == Some(&b'.')
            && self.s.get(self.at + 1).is_some_and(u8::is_ascii_digit)
        {
            self.at += 1;
            digits(self);
            float = true;
        }
        if matches!(self.s.get(self.at), Some(b'e' | b'E')) {
            let back = self.at;
            self.at += 1;
            if matches!(self.s.get(self.at), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if digits(self) == 0 {
                self.at = back;
            } else {
                float = true;
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("0");
        if float {
            Ok(PyJson::Float(text.parse().unwrap_or(f64::NAN)))
        } else {
            Ok(PyJson::Int(canonical_int(text)))
        }
    }
}

/// `-007` -> `-7`, `-0` -> `0`: digits (ASCII, no underscores) with an optional sign.
fn canonical_int(text: &str) -> String {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let digits = digits.trim_start_matches('0');
    match (digits.is_empty(), negative) {
        (true, _) => "0".to_owned(),
        (false, true) => format!("-{digits}"),
        (false, false) => digits.to_owned(),
    }
}

/// Python's `str.isspace()` (Python 3.11): what `strip()`, `int()` and `float()` skip.
pub(crate) fn py_is_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\u{1c}'..=' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python's `str.strip()`.
pub(crate) fn py_strip(s: &str) -> &str {
    s.trim_matches(py_is_space)
}

/// The zero of every run of Unicode decimal digits (category Nd, Unicode 14 as in Python
/// 3.11); each run holds the digits 0 to 9 in order.
const DECIMAL_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66,
    0xde6, 0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90,
    0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10,
    0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650,
    0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60, 0x16ac0, 0x16b50,
    0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0,
];

/// The value of a Unicode decimal digit.
fn decimal_digit(c: char) -> Option<u8> {
    let cp = u32::from(c);
    let i = DECIMAL_ZEROS.partition_point(|&z| z <= cp);
    let zero = *DECIMAL_ZEROS.get(i.checked_sub(1)?)?;
    u8::try_from(cp - zero).ok().filter(|d| *d < 10)
}

/// What CPython does before reading a number from text: white space becomes ` `, decimal digits
/// of any script become ASCII digits, and any other non-ASCII character ends the text (as an
/// invalid `?`). Then the ASCII white space around it is dropped.
fn py_number_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() && c != '\u{7f}' {
            out.push(c);
        } else if py_is_space(c) {
            out.push(' ');
        } else if let Some(d) = decimal_digit(c) {
            out.push(char::from(b'0' + d));
        } else {
            out.push('?');
            break;
        }
    }
    out.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r'))
        .to_owned()
}

/// Removes the underscores of Python's number text, which may only stand between two digits.
fn without_underscores(text: &str) -> Option<String> {
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let before = i.checked_sub(1).and_then(|j| b.get(j));
            if !before.is_some_and(u8::is_ascii_digit)
                || !b.get(i + 1).is_some_and(u8::is_ascii_digit)
            {
                return None;
            }
        }
    }
    Some(text.replace('_', ""))
}

/// Python's `int(text)` in base 10: white space around, an optional sign, digits of any script
/// with single underscores between them. The value as canonical decimal text (any size).
pub(crate) fn py_int(text: &str) -> Option<String> {
    let t = without_underscores(&py_number_text(text))?;
    let digits = t.strip_prefix(['-', '+']).unwrap_or(&t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(canonical_int(&t))
}

/// Python's `float(text)`: white space around, digits of any script with underscores between
/// digits, an optional fraction and exponent, or `inf`, `infinity` and `nan` in any case.
pub(crate) fn py_float(text: &str) -> Option<f64> {
    let t = py_number_text(text);
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, &t[..]),
    };
    let special = match body.to_ascii_lowercase().as_str() {
        "inf" | "infinity" => Some(f64::INFINITY),
        "nan" => Some(f64::NAN),
        _ => None,
    };
    if let Some(f) = special {
        return Some(if negative { -f } else { f });
    }
    let plain = without_underscores(body)?;
    // digits [. digits] | . digits, then [e [sign] digits].
    let b = plain.as_bytes();
    let mut at = 0;
    let int_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    at += int_digits;
    let mut frac_digits = 0;
    if b.get(at) == Some(&b'.') {
        at += 1;
        frac_digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        at += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    if matches!(b.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(b.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let exp_digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp_digits == 0 {
            return None;
        }
        at += exp_digits;
    }
    if at != b.len() {
        return None;
    }
    let f: f64 = plain.parse().ok()?;
    Some(if negative { -f } else { f })
}

/// Python's `repr()` of a string: single quotes unless it holds `'` and no `"`, with
/// backslash escapes for the quote, `\`, control characters and characters Python does not
/// print. Python decides "printable" from the Unicode database; this knows the non-printable
/// characters of Latin-1 and the common format and space characters, and prints the rest.
pub(crate) fn py_repr_str(s: &str) -> String {
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
pub(crate) fn py_repr(v: &PyJson) -> String {
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
pub(crate) fn py_text(v: &PyJson) -> String {
    match v {
        PyJson::None => "None".to_owned(),
        PyJson::Bool(b) => if *b { "True" } else { "False" }.to_owned(),
        PyJson::Int(i) => i.clone(),
        PyJson::Float(f) => crate::engine::types::py_float_repr(*f),
        PyJson::Str(s) => s.clone(),
        PyJson::List(_) | PyJson::Dict(_) => py_repr(v),
    }
}

/// Python's `json.dumps()` with its defaults (`ensure_ascii`, `", "` and `": "` separators,
/// `NaN` and `Infinity` allowed): how SQLAlchemy's JSON type stores a value.
pub(crate) fn py_json_dumps(v: &PyJson) -> String {
    let mut out = String::new();
    dumps_into(&mut out, v);
    out
}

fn dumps_into(out: &mut String, v: &PyJson) {
    match v {
        PyJson::None => out.push_str("null"),
        PyJson::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        PyJson::Int(i) => out.push_str(i),
        PyJson::Float(f) if f.is_nan() => out.push_str("NaN"),
        PyJson::Float(f) if f.is_infinite() => {
            out.push_str(if *f > 0.0 { "Infinity" } else { "-Infinity" });
        }
        PyJson::Float(f) => out.push_str(&crate::engine::types::py_float_repr(*f)),
        PyJson::Str(s) => dumps_str(out, s),
        PyJson::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dumps_into(out, item);
            }
            out.push(']');
        }
        PyJson::Dict(items) => {
            out.push('{');
            for (i, (k, item)) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                dumps_str(out, k);
                out.push_str(": ");
                dumps_into(out, item);
            }
            out.push('}');
        }
    }
}

fn dumps_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 || u32::from(c) > 0x7e => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes a Python value as the engine's JSON encoder writes it (NaN and infinities as
/// `null`).
pub(crate) fn write_py_json(buf: &mut Vec<u8>, v: &PyJson) {
    match v {
        PyJson::None => buf.extend_from_slice(b"null"),
        PyJson::Bool(b) => buf.extend_from_slice(if *b { b"true" } else { b"false" }),
        PyJson::Int(i) => buf.extend_from_slice(i.as_bytes()),
        PyJson::Float(f) => crate::engine::types::write_float(buf, *f),
        PyJson::Str(s) => write_json_str(buf, s),
        PyJson::List(items) => {
            buf.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                write_py_json(buf, item);
            }
            buf.push(b']');
        }
        PyJson::Dict(items) => {
            buf.push(b'{');
            for (i, (k, item)) in items.iter().enumerate() {
                if i > 0 {
                    buf.push(b',');
                }
                write_json_str(buf, k);
                buf.push(b':');
                write_py_json(buf, item);
            }
            buf.push(b'}');
        }
    }
}

/// A Python JSON value as the engine's encoder writes it, as a `serde_json` value: NaN and
/// the infinities are `null`, an integer beyond 64 bits a float.
pub(crate) fn py_json_to_json(v: &PyJson) -> Json {
    match v {
        PyJson::None => Json::Null,
        PyJson::Bool(b) => Json::Bool(*b),
        PyJson::Int(text) => text
            .parse::<i64>()
            .map(Json::from)
            .or_else(|_| text.parse::<u64>().map(Json::from))
            .unwrap_or_else(|_| text.parse::<f64>().map_or(Json::Null, Json::from)),
        PyJson::Float(f) => Json::from(*f),
        PyJson::Str(s) => Json::String(s.clone()),
        PyJson::List(items) => Json::Array(items.iter().map(py_json_to_json).collect()),
        PyJson::Dict(items) => Json::Object(
            items
                .iter()
                .map(|(k, v)| (k.clone(), py_json_to_json(v)))
                .collect(),
        ),
    }
}

/// Parses an `application/x-www-form-urlencoded` body as the engine reads a form: one value
/// is a string, a repeated key a list of strings, `+` is a space. Keys are read as Latin-1
/// (Tornado's quirk), values as UTF-8. `None` when a value is not UTF-8 (the engine fails).
pub(crate) fn parse_form(body: &[u8]) -> Option<PyJson> {
    let mut items: Vec<(String, Vec<String>)> = Vec::new();
    // Python 3.11's parse_qs: `&` only separates, a pair without `=` is a blank value.
    for pair in body.split(|&b| b == b'&') {
        if pair.is_empty() {
            continue;
        }
        let (k, v) = match pair.iter().position(|&b| b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &pair[pair.len()..]),
        };
        let key: String = form_decode(k).iter().map(|&b| char::from(b)).collect();
        let value = String::from_utf8(form_decode(v)).ok()?;
        match items.iter_mut().find(|(existing, _)| *existing == key) {
            Some((_, values)) => values.push(value),
            None => items.push((key, vec![value])),
        }
    }
    Some(PyJson::Dict(
        items
            .into_iter()
            .map(|(k, mut values)| {
                let v = if values.len() == 1 {
                    PyJson::Str(values.remove(0))
                } else {
                    PyJson::List(values.into_iter().map(PyJson::Str).collect())
                };
                (k, v)
            })
            .collect(),
    ))
}

/// `+` to space, then `%XX` to bytes (a malformed escape stays as it is).
fn form_decode(raw: &[u8]) -> Vec<u8> {
    let spaced: Vec<u8> = raw
        .iter()
        .map(|&b| if b == b'+' { b' ' } else { b })
        .collect();
    percent_encoding::percent_decode(&spaced).collect()
}

/// The serializer field the engine gives a column (`get_column_data_type`, matched on
/// `str(type)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputField {
    /// `INTEGER`, `SMALLINT`, `BIGINT`: `IntegerField`.
    Integer,
    /// `FLOAT` and a bare `DECIMAL`: `FloatField`.
    Float,
    /// `BOOLEAN`: `BooleanField`.
    Boolean,
    /// `DATETIME...`, `TIMESTAMP...`: `DateTimeField`.
    DateTime,
    /// `JSON`: `JSONField`.
    Json,
    /// Everything else (`REAL`, `NUMERIC`, `DATE`, `TEXT`, `BLOB`, untyped...): `CharField`.
    Char,
}

impl InputField {
    /// The field of a column of type `ty`.
    pub(crate) fn of(ty: ColumnType) -> InputField {
        match (ty.serializer, ty.reflected) {
            (Serializer::Value, Reflected::Integer) => InputField::Integer,
            (Serializer::Value, Reflected::Boolean) => InputField::Boolean,
            (Serializer::Value, _) => InputField::Float,
            (Serializer::DateTime, _) => InputField::DateTime,
            (Serializer::Text, Reflected::Json) => InputField::Json,
            (Serializer::Text, _) => InputField::Char,
        }
    }
}

/// A date-time as the engine's `DateTimeField` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InputDateTime {
    /// The date.
    pub date: Date,
    /// The time of day.
    pub time: Time,
    /// The time zone the text named: sign, hours and minutes (`Z` is `+00:00`); SQLAlchemy
    /// drops it when storing.
    pub offset: Option<(char, u32, u32)>,
}

impl InputDateTime {
    /// Whether the text named a time zone.
    pub(crate) fn aware(&self) -> bool {
        self.offset.is_some()
    }

    /// Python's `str(datetime)`: `YYYY-MM-DD HH:MM:SS`, `.ffffff` when the microseconds are
    /// not zero, then the offset of an aware date-time.
    pub(crate) fn python_str(&self) -> String {
        let mut s = format!("{} {}", self.date.iso(), self.time.iso());
        if let Some((sign, hours, minutes)) = self.offset {
            s.push_str(&format!("{sign}{hours:02}:{minutes:02}"));
        }
        s
    }

    /// The naive date-time of the same instant in the zone `tz` (seconds east of UTC): Python's
    /// `dt.astimezone(tz).replace(tzinfo=None)`; a naive one as it is.
    // Read only by the database servers' backends, each an optional feature.
    #[allow(dead_code)]
    pub(crate) fn in_zone(&self, tz: i32) -> InputDateTime {
        let Some((sign, hours, minutes)) = self.offset else {
            return *self;
        };
        let offset = i64::from(hours * 3600 + minutes * 60) * if sign == '-' { -1 } else { 1 };
        let t = self.time;
        let seconds = self.date.days() * 86_400
            + i64::from(t.hour * 3600 + t.minute * 60 + t.second)
            - offset
            + i64::from(tz);
        let rest = seconds.rem_euclid(86_400);
        InputDateTime {
            date: Date::from_days(seconds.div_euclid(86_400)),
            time: Time {
                hour: (rest / 3600) as u32,
                minute: (rest / 60 % 60) as u32,
                second: (rest % 60) as u32,
                micro: t.micro,
            },
            offset: None,
        }
    }
}

/// Bytes as lowercase hex text (`bytes.hex()`, `binascii.hexlify`).
pub(crate) fn hexlify(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of hex text, as `binascii.unhexlify` reads it (the engine's binary fields).
// Read only by the database servers' backends, each an optional feature.
#[allow(dead_code)]
pub(crate) fn unhexlify(text: &str) -> Option<Vec<u8>> {
    let b = text.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// The Python value a serializer field makes of a body value, which the engine sets on the
/// record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Internal {
    /// `None`.
    None,
    /// `bool`.
    Bool(bool),
    /// `int`, canonical decimal text.
    Int(String),
    /// `float`.
    Float(f64),
    /// `str`.
    Str(String),
    /// `datetime.datetime`.
    DateTime(InputDateTime),
    /// A JSON field's value.
    Json(PyJson),
}

impl Internal {
    /// Python's truth value.
    pub(crate) fn truthy(&self) -> bool {
        match self {
            Internal::None => false,
            Internal::Bool(b) => *b,
            Internal::Int(i) => i != "0",
            Internal::Float(f) => *f != 0.0,
            Internal::Str(s) => !s.is_empty(),
            Internal::DateTime(_) => true,
            Internal::Json(j) => j.truthy(),
        }
    }
}

/// The engine's `FloatField` of text (body values and number filters alike): stripped,
/// `true`/`false` in any case as the ints 1 and 0, else Python's `float()`.
pub(crate) fn float_field(text: &str) -> Option<Internal> {
    let text = py_strip(text);
    if text.eq_ignore_ascii_case("true") {
        Some(Internal::Int("1".to_owned()))
    } else if text.eq_ignore_ascii_case("false") {
        Some(Internal::Int("0".to_owned()))
    } else {
        py_float(text).map(Internal::Float)
    }
}

/// `BooleanField.TRUE_VALUES` and `FALSE_VALUES` (strings; the numbers are compared apart).
pub(crate) const TRUE_WORDS: [&str; 13] = [
    "t", "T", "y", "Y", "yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "1",
];
pub(crate) const FALSE_WORDS: [&str; 13] = [
    "f", "F", "n", "N", "no", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "0",
];

/// A serializer field's `to_internal_value` of a body value (after `get_value`, which joins a
/// list into the text of its non-null items for every field but JSON). `Err` holds the
/// engine's field message.
pub(crate) fn to_internal(field: InputField, v: &PyJson) -> Result<Internal, String> {
    let joined;
    let v = match v {
        PyJson::List(items) if field != InputField::Json => {
            let parts: Vec<String> = items
                .iter()
                .filter(|i| **i != PyJson::None)
                .map(py_text)
                .collect();
            joined = PyJson::Str(parts.join(","));
            &joined
        }
        other => other,
    };
    match field {
        InputField::Integer => match v {
            PyJson::None => Ok(Internal::None),
            PyJson::Bool(b) => Ok(Internal::Int(if *b { "1" } else { "0" }.to_owned())),
            other => py_int(py_strip(&py_text(other)))
                .map(Internal::Int)
                .ok_or_else(|| "not a valid integer".to_owned()),
        },
        InputField::Float => match v {
            PyJson::None => Ok(Internal::None),
            other => float_field(&py_text(other)).ok_or_else(|| "not a valid float".to_owned()),
        },
        InputField::Boolean => match v {
            PyJson::Str(s) if TRUE_WORDS.contains(&s.as_str()) => Ok(Internal::Bool(true)),
            PyJson::Str(s) if FALSE_WORDS.contains(&s.as_str()) => Ok(Internal::Bool(false)),
            // `value in TRUE_VALUES` hashes the value: the engine fails on a dict.
            PyJson::Dict(_) => Err(
                "not a valid boolean: send true or false (a JSON object cannot be read as one)"
                    .to_owned(),
            ),
            // 1, 1.0 and True are equal in Python, as are 0, 0.0 and False; anything else
            // goes by its truth value (so `null` and `""` are false, `"no!"` true).
            other => Ok(Internal::Bool(other.truthy())),
        },
        InputField::DateTime => match v {
            PyJson::None => Ok(Internal::None),
            other => parse_input_datetime(py_strip(&py_text(other)))
                .map(Internal::DateTime)
                .ok_or_else(|| "date has wrong format".to_owned()),
        },
        InputField::Json => match v {
            PyJson::Str(s) => Ok(Internal::Json(
                parse_py_json(s).unwrap_or_else(|_| v.clone()),
            )),
            other => Ok(Internal::Json(other.clone())),
        },
        InputField::Char => match v {
            PyJson::None => Ok(Internal::None),
            other => Ok(Internal::Str(py_text(other))),
        },
    }
}

/// The UTC offsets the engine's date parser (dateparser 1.5) knows: `(sign, hours, minutes)`.
const KNOWN_OFFSETS: [(u8, u32, u32); 42] = [
    (b'+', 0, 0),
    (b'+', 1, 0),
    (b'+', 2, 0),
    (b'+', 3, 0),
    (b'+', 3, 30),
    (b'+', 4, 0),
    (b'+', 4, 30),
    (b'+', 5, 0),
    (b'+', 5, 30),
    (b'+', 5, 45),
    (b'+', 6, 0),
    (b'+', 6, 30),
    (b'+', 7, 0),
    (b'+', 8, 0),
    (b'+', 8, 45),
    (b'+', 9, 0),
    (b'+', 9, 30),
    (b'+', 10, 0),
    (b'+', 10, 30),
    (b'+', 11, 0),
    (b'+', 11, 30),
    (b'+', 12, 0),
    (b'+', 12, 45),
    (b'+', 13, 0),
    (b'+', 14, 0),
    (b'-', 0, 0),
    (b'-', 1, 0),
    (b'-', 2, 0),
    (b'-', 2, 30),
    (b'-', 3, 0),
    (b'-', 3, 30),
    (b'-', 4, 0),
    (b'-', 4, 30),
    (b'-', 5, 0),
    (b'-', 6, 0),
    (b'-', 7, 0),
    (b'-', 8, 0),
    (b'-', 9, 0),
    (b'-', 9, 30),
    (b'-', 10, 0),
    (b'-', 11, 0),
    (b'-', 12, 0),
];

/// The date-times the emulator reads as the engine's `DateTimeField` (`dateparser.parse`)
/// does, checked against dateparser 1.5:
///
/// `YYYY-M[M]-D[D]`, optionally followed by `T`, `t` or spaces and `H[H]:M[M]`,
/// `[:S[S]]`, `[.fraction]` (any number of digits, cut to microseconds), then optionally
/// (only after a time) spaces and `Z`, `z`, `UTC`, `GMT`, `+HH:MM` or `+HHMM` (an offset
/// dateparser knows). The time zone is kept as Python prints it; SQLAlchemy drops it when
/// storing. Filters and writes both read date-times here (the engine's one `DateTimeField`).
///
/// dateparser reads much more (other orders, month names, relative dates such as
/// "yesterday", a date followed by an offset read as a time, an impossible month swapped
/// with the day); those depend on the clock or on heuristics, and are refused here
/// ([decision: stricter]).
pub(crate) fn parse_input_datetime(text: &str) -> Option<InputDateTime> {
    let b = text.as_bytes();
    let mut at = 0;
    let num = |at: &mut usize, min: usize, max: usize| -> Option<u32> {
        let start = *at;
        while *at < b.len() && *at - start < max && b[*at].is_ascii_digit() {
            *at += 1;
        }
        if *at - start < min {
            return None;
        }
        std::str::from_utf8(&b[start..*at]).ok()?.parse().ok()
    };
    let lit = |at: &mut usize, c: u8| -> Option<()> { (b.get(*at) == Some(&c)).then(|| *at += 1) };
    let year = num(&mut at, 4, 4)?;
    lit(&mut at, b'-')?;
    let month = num(&mut at, 1, 2)?;
    lit(&mut at, b'-')?;
    let day = num(&mut at, 1, 2)?;
    let date = Date { year, month, day };
    if !date.valid() {
        return None;
    }
    let mut time = Time {
        hour: 0,
        minute: 0,
        second: 0,
        micro: 0,
    };
    let mut offset = None;
    if at < b.len() {
        match b[at] {
            b'T' | b't' => at += 1,
            b' ' => {
                while b.get(at) == Some(&b' ') {
                    at += 1;
                }
            }
            _ => return None,
        }
        time.hour = num(&mut at, 1, 2)?;
        lit(&mut at, b':')?;
        time.minute = num(&mut at, 1, 2)?;
        if lit(&mut at, b':').is_some() {
            time.second = num(&mut at, 1, 2)?;
            if lit(&mut at, b'.').is_some() {
                let start = at;
                while b.get(at).is_some_and(u8::is_ascii_digit) {
                    at += 1;
                }
                let mut micro = 0;
                for (i, d) in b[start..at].iter().take(6).enumerate() {
                    micro += u32::from(d - b'0') * 10u32.pow(5 - i as u32);
                }
                time.micro = micro;
            }
        }
        if time.hour > 23 || time.minute > 59 || time.second > 59 {
            return None;
        }
        while b.get(at) == Some(&b' ') {
            at += 1;
        }
        let zone = &text[at..];
        if !zone.is_ascii() {
            return None;
        }
        if !zone.is_empty() {
            let known = match zone {
                "Z" | "z" | "UTC" | "GMT" => Some((b'+', 0, 0)),
                _ => {
                    let z = zone.as_bytes();
                    let (sign, rest) = (z[0], &zone[1..]);
                    let digits: String = rest.chars().filter(|&c| c != ':').collect();
                    let shape_ok = matches!(sign, b'+' | b'-')
                        && (rest.len() == 4 || (rest.len() == 5 && rest.as_bytes()[2] == b':'))
                        && digits.len() == 4
                        && digits.bytes().all(|c| c.is_ascii_digit());
                    if shape_ok {
                        let h = digits[..2].parse().unwrap_or(99);
                        let m = digits[2..].parse().unwrap_or(99);
                        KNOWN_OFFSETS
                            .contains(&(sign, h, m))
                            .then_some((sign, h, m))
                    } else {
                        None
                    }
                }
            };
            let (sign, h, m) = known?;
            offset = Some((char::from(sign), h, m));
        }
    } else {
        // A date alone is midnight.
    }
    Some(InputDateTime { date, time, offset })
}

/// SQLAlchemy's SQLite `DATETIME` storage format: always six digits of microseconds.
pub(crate) fn stored_datetime(dt: &InputDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}",
        dt.date.year,
        dt.date.month,
        dt.date.day,
        dt.time.hour,
        dt.time.minute,
        dt.time.second,
        dt.time.micro
    )
}

/// Python's `==` between a value the engine sets and the value it loaded (SQLAlchemy writes
/// only the attributes whose value changed).
pub(crate) fn py_equal(new: &Internal, old: &PyValue<'_>, reflected: Reflected) -> bool {
    let number = |v: &PyValue<'_>| -> Option<f64> {
        match v {
            PyValue::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
            PyValue::Int(i) => Some(*i as f64),
            PyValue::Float(f) | PyValue::Decimal(_, f) => Some(*f),
            _ => None,
        }
    };
    // A JSON column loads SQL NULL and JSON `null` alike as `None`, which equals a new `None`
    // however it was given (`null`, or the text `"null"` the field parses): the ORM leaves the
    // column as it is stored (the running engine kept a NULL where `"null"` was given).
    if matches!(reflected, Reflected::Json) {
        let loaded_none = match old {
            PyValue::None => true,
            PyValue::Str(t) => {
                std::str::from_utf8(t)
                    .ok()
                    .and_then(|t| parse_py_json(t).ok())
                    == Some(PyJson::None)
            }
            _ => false,
        };
        if loaded_none && matches!(new, Internal::None | Internal::Json(PyJson::None)) {
            return true;
        }
    }
    match new {
        Internal::None => matches!(old, PyValue::None),
        Internal::Bool(_) | Internal::Int(_) | Internal::Float(_) => {
            let n = match new {
                Internal::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
                Internal::Int(i) => {
                    // Exact for integers both sides.
                    if let (Ok(a), PyValue::Int(b)) = (i.parse::<i64>(), old) {
                        return a == *b;
                    }
                    i.parse::<f64>().ok()
                }
                Internal::Float(f) => Some(*f),
                _ => None,
            };
            matches!((n, number(old)), (Some(a), Some(b)) if a == b)
        }
        Internal::Str(s) => matches!(old, PyValue::Str(t) if *t == s.as_bytes()),
        Internal::DateTime(dt) => {
            !dt.aware() && matches!(old, PyValue::DateTime(d, t) if *d == dt.date && *t == dt.time)
        }
        Internal::Json(j) => match (reflected, old) {
            (Reflected::Json, PyValue::Str(t)) => std::str::from_utf8(t)
                .ok()
                .and_then(|t| parse_py_json(t).ok())
                .is_some_and(|loaded| json_equal(j, &loaded)),
            _ => false,
        },
    }
}

/// Python's `==` between two JSON values (`1 == 1.0 == True`).
fn json_equal(a: &PyJson, b: &PyJson) -> bool {
    let num = |v: &PyJson| match v {
        PyJson::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        PyJson::Int(i) => i.parse::<f64>().ok(),
        PyJson::Float(f) => Some(*f),
        _ => None,
    };
    match (a, b) {
        (PyJson::Int(x), PyJson::Int(y)) => x == y,
        (PyJson::List(x), PyJson::List(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (PyJson::Dict(x), PyJson::Dict(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.iter().any(|(k2, v2)| k == k2 && json_equal(v, v2)))
        }
        (PyJson::Str(x), PyJson::Str(y)) => x == y,
        (PyJson::None, PyJson::None) => true,
        _ => matches!((num(a), num(b)), (Some(x), Some(y)) if x == y),
    }
}

#[cfg(test)]
mod tests {

    /// What the running engine stored (SQLite, a `JSON` column): `"null"` and `null` left a
    /// NULL and a JSON `null` as they were, and replaced `[1]` with `null`.
    #[test]
    fn a_json_none_equals_what_loads_as_none() {
        let none = Internal::Json(PyJson::None);
        assert!(py_equal(&none, &PyValue::None, Reflected::Json));
        assert!(py_equal(&Internal::None, &PyValue::None, Reflected::Json));
        assert!(py_equal(
            &Internal::None,
            &PyValue::Str(b"null"),
            Reflected::Json
        ));
        assert!(py_equal(&none, &PyValue::Str(b" null "), Reflected::Json));
        assert!(!py_equal(&none, &PyValue::Str(b"[1]"), Reflected::Json));
        assert!(!py_equal(
            &Internal::None,
            &PyValue::Str(b"null"),
            Reflected::String
        ));
    }
    use super::*;
}
