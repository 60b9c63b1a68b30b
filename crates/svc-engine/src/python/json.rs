//! Python's JSON as the engine reads and writes it: `json.loads` (which takes `NaN`,
//! `Infinity` and big integers), `json.dumps` with its default separators, and a Python value's
//! JSON.

use serde_json::Value as Json;

use crate::json_text::write_json_str;
use crate::python::numbers::canonical_int;

/// A request body value as Python's `json.loads` (or the engine's form reader) gives it.
#[derive(Debug, Clone, PartialEq)]
pub enum PyJson {
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
    /// What the value is, for a message: `null`, `a boolean`, `a number`, `a string`, `an
    /// array`, `an object`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            PyJson::None => "null",
            PyJson::Bool(_) => "a boolean",
            PyJson::Int(_) | PyJson::Float(_) => "a number",
            PyJson::Str(_) => "a string",
            PyJson::List(_) => "an array",
            PyJson::Dict(_) => "an object",
        }
    }

    /// The value of key `name` of a dict, `None` when absent or when `self` is not a dict.
    pub fn get(&self, name: &str) -> Option<&PyJson> {
        match self {
            PyJson::Dict(items) => items.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Python's truth value (`bool(value)`).
    pub fn truthy(&self) -> bool {
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
pub fn parse_py_json(text: &str) -> Result<PyJson, String> {
    parse_py_json_at(text).map_err(|(what, at)| format!("{what} (char {at})"))
}

/// [`parse_py_json`], whose failure is what is wrong and the byte of `text` where the text
/// stops being JSON (a fixture file names its line).
pub fn parse_py_json_at(text: &str) -> Result<PyJson, (String, usize)> {
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

/// Python's `json.dumps()` with its defaults (`ensure_ascii`, `", "` and `": "` separators,
/// `NaN` and `Infinity` allowed): how SQLAlchemy's JSON type stores a value.
pub fn py_json_dumps(v: &PyJson) -> String {
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
        PyJson::Float(f) => out.push_str(&crate::python::floats::py_float_repr(*f)),
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
pub fn write_py_json(buf: &mut Vec<u8>, v: &PyJson) {
    match v {
        PyJson::None => buf.extend_from_slice(b"null"),
        PyJson::Bool(b) => buf.extend_from_slice(if *b { b"true" } else { b"false" }),
        PyJson::Int(i) => buf.extend_from_slice(i.as_bytes()),
        PyJson::Float(f) => crate::types::write_float(buf, *f),
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
pub fn py_json_to_json(v: &PyJson) -> Json {
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

/// Python's `==` between two JSON values (`1 == 1.0 == True`).
pub fn json_equal(a: &PyJson, b: &PyJson) -> bool {
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
