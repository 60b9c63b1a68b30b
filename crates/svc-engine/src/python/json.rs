//! Python's JSON as the engine reads and writes it: `json.loads` (which takes `NaN`,
//! `Infinity` and big integers), `json.dumps` with its default separators, and a Python value's
//! JSON.

use std::collections::HashMap;

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

    /// Inserts `key` as a Python dict assignment does; where it stands among the items.
    fn dict_insert(items: &mut Vec<(String, PyJson)>, key: String, value: PyJson) -> usize {
        match items.iter().position(|(k, _)| *k == key) {
            Some(at) => {
                items[at].1 = value;
                at
            }
            None => {
                items.push((key, value));
                items.len() - 1
            }
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

/// How deep [`parse_py_json`] nests before it refuses a text (the engine's own readings of
/// JSON text, a stored value or a column's, never come near it).
const MAX_JSON_DEPTH: usize = 500;

/// Python 3.11's limit on the digits of an `int` read from text (`sys.get_int_max_str_digits()`):
/// `json.loads` fails (`ValueError`) on a longer integer.
const MAX_INT_DIGITS: usize = 4300;

/// Parses text as Python's `json.loads` does: any JSON value, plus `NaN`, `Infinity` and
/// `-Infinity`; numbers with a fraction or an exponent are floats, the others ints of up to
/// 4300 digits. A lone surrogate (`"\ud800"`), which no Rust string holds, is refused. `Err`
/// holds a message saying where the text stops being JSON.
pub fn parse_py_json(text: &str) -> Result<PyJson, String> {
    parse_py_json_at(text).map_err(|(what, at)| format!("{what} (char {at})"))
}

/// [`parse_py_json`], whose failure is what is wrong and the byte of `text` where the text
/// stops being JSON (a fixture file names its line).
pub fn parse_py_json_at(text: &str) -> Result<PyJson, (String, usize)> {
    let mut p = JsonParser::new(text.as_bytes(), &[], false);
    match p.document(MAX_JSON_DEPTH) {
        Ok(v) => Ok(v),
        Err(Failure::Syntax(what, at)) => Err((what, at)),
        Err(Failure::TooDeep(at)) => Err(("Nested too deeply".to_owned(), at)),
    }
}

/// A JSON text as Python's `json.loads` reads it, lone surrogates kept apart: Python keeps
/// them in its strings, a Rust string cannot, so each is `U+FFFD` here and the reading says
/// where there were some.
#[derive(Debug, Clone, PartialEq)]
pub struct PyJsonRead {
    /// The value (each lone surrogate a `U+FFFD`).
    pub value: PyJson,
    /// Some string (or key) held a lone surrogate.
    pub surrogates: bool,
    /// When the value is an object: its keys whose key or (last) value held one, in order.
    pub surrogate_keys: Vec<String>,
}

/// Why `json.loads` refuses a text (or the bytes the engine decodes into one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PyJsonError {
    /// The bytes are not UTF-8, surrogates aside (`decode('utf-8', 'surrogatepass')` fails
    /// at this byte): a `UnicodeDecodeError`.
    NotUtf8(usize),
    /// The text nests deeper than the reader was allowed: Python's parser exceeds its
    /// recursion limit (a `RecursionError`).
    TooDeep,
    /// Not JSON: the text of Python's `ValueError` (`Expecting value: line 1 column 1 (char
    /// 0)`).
    Invalid(String),
}

/// `json.loads(text)` (Python 3.11), nesting at most `max_depth` arrays and objects: a text
/// starting with a byte order mark is refused as Python refuses it, and lone surrogates are
/// kept apart ([`PyJsonRead`]).
pub fn read_py_json(text: &str, max_depth: usize) -> Result<PyJsonRead, PyJsonError> {
    read_text(text, &[], max_depth)
}

/// `json.loads(body.decode('utf-8', 'surrogatepass'))`, the engine's reading of a JSON body:
/// [`read_py_json`] of the bytes, where UTF-8-encoded surrogates (`ED A0 80`), which that
/// decoding accepts, are lone surrogates.
pub fn read_py_json_bytes(body: &[u8], max_depth: usize) -> Result<PyJsonRead, PyJsonError> {
    let (text, raw) = decode_surrogatepass(body).map_err(PyJsonError::NotUtf8)?;
    read_text(&text, &raw, max_depth)
}

fn read_text(text: &str, raw: &[usize], max_depth: usize) -> Result<PyJsonRead, PyJsonError> {
    if text.starts_with('\u{feff}') {
        return Err(PyJsonError::Invalid(python_error(
            text,
            "Unexpected UTF-8 BOM (decode using utf-8-sig)",
            0,
        )));
    }
    let mut p = JsonParser::new(text.as_bytes(), raw, true);
    match p.document(max_depth) {
        Ok(value) => Ok(PyJsonRead {
            value,
            surrogates: p.lone,
            surrogate_keys: std::mem::take(&mut p.flawed_keys),
        }),
        Err(Failure::TooDeep(_)) => Err(PyJsonError::TooDeep),
        Err(Failure::Syntax(what, _)) if what.starts_with("Exceeds the limit") => {
            Err(PyJsonError::Invalid(what))
        }
        Err(Failure::Syntax(what, at)) => Err(PyJsonError::Invalid(python_error(text, &what, at))),
    }
}

/// `JSONDecodeError`'s text: `what: line L column C (char N)`, counted in characters.
fn python_error(text: &str, what: &str, at: usize) -> String {
    let before = text.get(..at).unwrap_or(text);
    let pos = before.chars().count();
    let line = before.matches('\n').count() + 1;
    let column = match before.rfind('\n') {
        Some(nl) => before[nl + 1..].chars().count() + 1,
        None => pos + 1,
    };
    format!("{what}: line {line} column {column} (char {pos})")
}

/// Python's `bytes.decode('utf-8', 'surrogatepass')`: the text, each encoded surrogate a
/// `U+FFFD`, and where those stand in the text (byte offsets, in order); `Err` at the first
/// byte that is not UTF-8.
pub fn decode_surrogatepass(bytes: &[u8]) -> Result<(String, Vec<usize>), usize> {
    let mut text = String::with_capacity(bytes.len());
    let mut raw = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        match std::str::from_utf8(&bytes[at..]) {
            Ok(rest) => {
                text.push_str(rest);
                break;
            }
            Err(e) => {
                let good = at + e.valid_up_to();
                text.push_str(std::str::from_utf8(&bytes[at..good]).unwrap_or_default());
                match bytes.get(good..good + 3) {
                    Some([0xed, 0xa0..=0xbf, 0x80..=0xbf]) => {
                        raw.push(text.len());
                        text.push('\u{fffd}');
                        at = good + 3;
                    }
                    _ => return Err(good),
                }
            }
        }
    }
    Ok((text, raw))
}

/// Why the parser stopped.
enum Failure {
    /// Not JSON: what is wrong, and the byte where (Python's position).
    Syntax(String, usize),
    /// Nested deeper than allowed, at this byte.
    TooDeep(usize),
}

/// An array or object being read.
enum Open {
    List(Vec<PyJson>),
    /// The items so far, the key whose value is being read, and (past a few keys) where each
    /// key stands, so that a body of many keys is read in linear time.
    Dict(
        Vec<(String, PyJson)>,
        String,
        Option<HashMap<String, usize>>,
    ),
}

/// Keys past which an object being read keeps an index of them.
const INDEXED_KEYS: usize = 16;

/// [`PyJson::dict_insert`] with the index of an object being read; where the key stands.
fn insert_indexed(
    items: &mut Vec<(String, PyJson)>,
    index: &mut Option<HashMap<String, usize>>,
    key: String,
    value: PyJson,
) -> usize {
    if index.is_none() && items.len() >= INDEXED_KEYS {
        *index = Some(
            items
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect(),
        );
    }
    let Some(index) = index else {
        return PyJson::dict_insert(items, key, value);
    };
    match index.get(&key) {
        Some(&at) => {
            items[at].1 = value;
            at
        }
        None => {
            index.insert(key.clone(), items.len());
            items.push((key, value));
            items.len() - 1
        }
    }
}

/// A JSON reader without recursion (a body may nest hundreds deep: no stack to overflow).
struct JsonParser<'a> {
    s: &'a [u8],
    at: usize,
    /// Byte offsets of the `U+FFFD`s in `s` that stand for raw surrogates (in order).
    raw: &'a [usize],
    /// Lone surrogates are read as `U+FFFD` (else refused).
    lossy: bool,
    /// A lone surrogate was read.
    lone: bool,
    /// A lone surrogate was read since the outer object's current key began.
    lone_here: bool,
    /// Whether each key of the outer object held a lone surrogate (in its items' order).
    flags: Vec<bool>,
    /// The outer object's keys that held one (set when the document ends).
    flawed_keys: Vec<String>,
}

impl<'a> JsonParser<'a> {
    fn new(s: &'a [u8], raw: &'a [usize], lossy: bool) -> Self {
        JsonParser {
            s,
            at: 0,
            raw,
            lossy,
            lone: false,
            lone_here: false,
            flags: Vec::new(),
            flawed_keys: Vec::new(),
        }
    }

    fn syntax(&self, what: &str) -> Failure {
        Failure::Syntax(what.to_owned(), self.at)
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

    fn saw_lone(&mut self) {
        self.lone = true;
        self.lone_here = true;
    }

    /// The whole text: one value between optional whitespace.
    fn document(&mut self, max_depth: usize) -> Result<PyJson, Failure> {
        self.skip_ws();
        let v = self.value(max_depth)?;
        self.skip_ws();
        if self.at != self.s.len() {
            return Err(self.syntax("Extra data"));
        }
        if let PyJson::Dict(items) = &v {
            self.flawed_keys = items
                .iter()
                .zip(&self.flags)
                .filter(|(_, flawed)| **flawed)
                .map(|((k, _), _)| k.clone())
                .collect();
        }
        Ok(v)
    }

    /// A key and its `:`, at a `"` (else Python's error), leaving the parser at the value.
    fn key(&mut self) -> Result<String, Failure> {
        if self.s.get(self.at) != Some(&b'"') {
            return Err(self.syntax("Expecting property name enclosed in double quotes"));
        }
        let key = self.string()?;
        self.skip_ws();
        if !self.eat(":") {
            return Err(self.syntax("Expecting ':' delimiter"));
        }
        self.skip_ws();
        Ok(key)
    }

    /// One value (at its first byte) and everything nested in it, without recursion: open
    /// arrays and objects wait on `stack`.
    fn value(&mut self, max_depth: usize) -> Result<PyJson, Failure> {
        let mut stack: Vec<Open> = Vec::new();
        'value: loop {
            let mut done = match self.s.get(self.at) {
                Some(b'{' | b'[') if stack.len() >= max_depth => {
                    return Err(Failure::TooDeep(self.at));
                }
                Some(b'{') => {
                    self.at += 1;
                    self.skip_ws();
                    if self.eat("}") {
                        PyJson::Dict(Vec::new())
                    } else {
                        if stack.is_empty() {
                            self.lone_here = false;
                        }
                        let key = self.key()?;
                        stack.push(Open::Dict(Vec::new(), key, None));
                        continue 'value;
                    }
                }
                Some(b'[') => {
                    self.at += 1;
                    self.skip_ws();
                    if self.eat("]") {
                        PyJson::List(Vec::new())
                    } else {
                        stack.push(Open::List(Vec::new()));
                        continue 'value;
                    }
                }
                _ => self.scalar()?,
            };
            // A value is complete: it goes into the array or object it is in, which may
            // complete in turn.
            loop {
                let outer = stack.len() == 1;
                match stack.last_mut() {
                    None => return Ok(done),
                    Some(Open::List(items)) => {
                        items.push(done);
                        self.skip_ws();
                        if self.eat(",") {
                            self.skip_ws();
                            continue 'value;
                        }
                        if !self.eat("]") {
                            return Err(self.syntax("Expecting ',' delimiter"));
                        }
                        let Some(Open::List(items)) = stack.pop() else {
                            return Err(self.syntax("Expecting value"));
                        };
                        done = PyJson::List(items);
                    }
                    Some(Open::Dict(items, key, index)) => {
                        let at = insert_indexed(items, index, std::mem::take(key), done);
                        if outer {
                            // A repeated key takes the last value, and its flag.
                            if at == self.flags.len() {
                                self.flags.push(self.lone_here);
                            } else {
                                self.flags[at] = self.lone_here;
                            }
                        }
                        self.skip_ws();
                        if self.eat(",") {
                            self.skip_ws();
                            if outer {
                                self.lone_here = false;
                            }
                            let next = self.key()?;
                            *key = next;
                            continue 'value;
                        }
                        if !self.eat("}") {
                            return Err(self.syntax("Expecting ',' delimiter"));
                        }
                        let Some(Open::Dict(items, _, _)) = stack.pop() else {
                            return Err(self.syntax("Expecting value"));
                        };
                        done = PyJson::Dict(items);
                    }
                }
            }
        }
    }

    /// A string, number or word.
    fn scalar(&mut self) -> Result<PyJson, Failure> {
        match self.s.get(self.at) {
            Some(b'"') => self.string().map(PyJson::Str),
            Some(b'n') if self.eat("null") => Ok(PyJson::None),
            Some(b't') if self.eat("true") => Ok(PyJson::Bool(true)),
            Some(b'f') if self.eat("false") => Ok(PyJson::Bool(false)),
            Some(b'N') if self.eat("NaN") => Ok(PyJson::Float(f64::NAN)),
            Some(b'I') if self.eat("Infinity") => Ok(PyJson::Float(f64::INFINITY)),
            Some(b'-') if self.eat("-Infinity") => Ok(PyJson::Float(f64::NEG_INFINITY)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.syntax("Expecting value")),
        }
    }

    /// Four hex digits after a `\u` at `u` (Python's error names the `u`).
    fn hex4(&mut self, u: usize) -> Result<u32, Failure> {
        let digits = self
            .s
            .get(self.at..self.at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or(Failure::Syntax("Invalid \\uXXXX escape".to_owned(), u))?;
        self.at += 4;
        Ok(digits)
    }

    /// A `\u` escape, the parser just past its `u` (at `u`): one character, a surrogate pair,
    /// or a lone surrogate (`U+FFFD` when lossy).
    fn unicode_escape(&mut self, u: usize) -> Result<char, Failure> {
        // Python wants a character after the four digits (`end >= len` fails).
        if self.s.len() < self.at + 5 {
            return Err(Failure::Syntax("Invalid \\uXXXX escape".to_owned(), u));
        }
        let hi = self.hex4(u)?;
        let mut cp = hi;
        // A high surrogate takes a low one from the next escape (Python looks when seven more
        // characters follow: counted in bytes here, which changes only which of two errors
        // at the same place is named).
        if (0xd800..0xdc00).contains(&hi)
            && self.s.len() > self.at + 6
            && self.s[self.at..].starts_with(b"\\u")
        {
            let back = self.at;
            self.at += 2;
            let lo = self.hex4(back + 1)?;
            if (0xdc00..0xe000).contains(&lo) {
                cp = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
            } else {
                // Not a pair: the high one is lone, and the next escape is read on its own.
                self.at = back;
            }
        }
        match char::from_u32(cp) {
            Some(c) => Ok(c),
            None if self.lossy => {
                self.saw_lone();
                Ok('\u{fffd}')
            }
            // Python keeps a lone surrogate, which no Rust string can hold (and SQLite could not
            // store it as UTF-8 either).
            None => Err(Failure::Syntax(
                "Lone surrogate in \\uXXXX escape".to_owned(),
                u,
            )),
        }
    }

    fn string(&mut self) -> Result<String, Failure> {
        let begin = self.at;
        self.at += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let Some(&b) = self.s.get(self.at) else {
                return Err(Failure::Syntax(
                    "Unterminated string starting at".to_owned(),
                    begin,
                ));
            };
            match b {
                b'"' => {
                    self.at += 1;
                    break;
                }
                b'\\' => {
                    let backslash = self.at;
                    self.at += 1;
                    let Some(&e) = self.s.get(self.at) else {
                        return Err(Failure::Syntax(
                            "Unterminated string starting at".to_owned(),
                            begin,
                        ));
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
                        b'u' => self.unicode_escape(self.at - 1)?,
                        _ => {
                            return Err(Failure::Syntax("Invalid \\escape".to_owned(), backslash));
                        }
                    };
                    let mut tmp = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                }
                // Python's strict mode refuses control characters inside strings.
                0..=0x1f => return Err(self.syntax("Invalid control character at")),
                _ => {
                    if b == 0xef && self.raw.binary_search(&self.at).is_ok() {
                        self.saw_lone();
                    }
                    out.push(b);
                    self.at += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| self.syntax("Invalid UTF-8"))
    }

    fn number(&mut self) -> Result<PyJson, Failure> {
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
            self.at = start;
            return Err(self.syntax("Expecting value"));
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
            return Ok(PyJson::Float(text.parse().unwrap_or(f64::NAN)));
        }
        let count = text.trim_start_matches('-').len();
        if count > MAX_INT_DIGITS {
            // `int()`'s own `ValueError`, which names no place.
            return Err(Failure::Syntax(
                format!(
                    "Exceeds the limit ({MAX_INT_DIGITS} digits) for integer string conversion: \
                     value has {count} digits; use sys.set_int_max_str_digits() to increase the \
                     limit"
                ),
                start,
            ));
        }
        Ok(PyJson::Int(canonical_int(text)))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> PyJson {
        PyJson::Str(v.to_owned())
    }

    /// Python 3.11's `str()` of `json.loads`' error, for each text (run under the engine's
    /// Python).
    #[test]
    fn errors_are_pythons() {
        let cases: [(&str, &str); 36] = [
            (
                "\"\\u12x4\"",
                "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
            ),
            (
                "\"\\u12",
                "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
            ),
            (
                "\"\\u0041",
                "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
            ),
            (
                "\"abc",
                "Unterminated string starting at: line 1 column 1 (char 0)",
            ),
            (
                "\"a\\",
                "Unterminated string starting at: line 1 column 1 (char 0)",
            ),
            ("\"a\\q\"", "Invalid \\escape: line 1 column 3 (char 2)"),
            (
                "\"a\u{1}\"",
                "Invalid control character at: line 1 column 3 (char 2)",
            ),
            (
                "\"\\ud800\\u12x4\"",
                "Invalid \\uXXXX escape: line 1 column 9 (char 8)",
            ),
            ("[1,]", "Expecting value: line 1 column 4 (char 3)"),
            (
                "{\"a\":1,}",
                "Expecting property name enclosed in double quotes: line 1 column 8 (char 7)",
            ),
            (
                "{\"a\" 1}",
                "Expecting ':' delimiter: line 1 column 6 (char 5)",
            ),
            (
                "{1:1}",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
            ("  ", "Expecting value: line 1 column 3 (char 2)"),
            ("[1 2]", "Expecting ',' delimiter: line 1 column 4 (char 3)"),
            (
                "{\"a\":1 \"b\"}",
                "Expecting ',' delimiter: line 1 column 8 (char 7)",
            ),
            (
                "\u{feff}[]",
                "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
            ),
            ("[1]x", "Extra data: line 1 column 4 (char 3)"),
            ("\n\n  x", "Expecting value: line 3 column 3 (char 4)"),
            ("-", "Expecting value: line 1 column 1 (char 0)"),
            ("-x", "Expecting value: line 1 column 1 (char 0)"),
            ("01", "Extra data: line 1 column 2 (char 1)"),
            ("1.", "Extra data: line 1 column 2 (char 1)"),
            ("1e", "Extra data: line 1 column 2 (char 1)"),
            ("1e+", "Extra data: line 1 column 2 (char 1)"),
            ("nul", "Expecting value: line 1 column 1 (char 0)"),
            ("NaN1", "Extra data: line 1 column 4 (char 3)"),
            (
                "\"\\ud800\\udc00",
                "Invalid \\uXXXX escape: line 1 column 9 (char 8)",
            ),
            (
                "{\"é\": \"€\", \"x\": 1 y",
                "Expecting ',' delimiter: line 1 column 19 (char 18)",
            ),
            (
                "[\"é€😀\", nul]",
                "Expecting value: line 1 column 9 (char 8)",
            ),
            (
                "{",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
            ("[", "Expecting value: line 1 column 2 (char 1)"),
            (
                "{\"a\"",
                "Expecting ':' delimiter: line 1 column 5 (char 4)",
            ),
            ("{\"a\":", "Expecting value: line 1 column 6 (char 5)"),
            ("[1,", "Expecting value: line 1 column 4 (char 3)"),
            ("", "Expecting value: line 1 column 1 (char 0)"),
            (
                "\"\\ud800\\\"",
                "Unterminated string starting at: line 1 column 1 (char 0)",
            ),
        ];
        for (text, python) in cases {
            assert_eq!(
                read_py_json(text, 964),
                Err(PyJsonError::Invalid(python.to_owned())),
                "{text:?}"
            );
        }
        let limit = "Exceeds the limit (4300 digits) for integer string conversion: value has \
                     4301 digits; use sys.set_int_max_str_digits() to increase the limit";
        for text in ["1".repeat(4301), format!("-{}", "1".repeat(4301))] {
            assert_eq!(
                read_py_json(&text, 964),
                Err(PyJsonError::Invalid(limit.to_owned()))
            );
        }
        assert!(read_py_json(&"1".repeat(4300), 964).is_ok());
        assert!(parse_py_json(&"9".repeat(4301)).is_err());
    }

    /// Lone surrogates, escaped or encoded, are read as `U+FFFD` and said where.
    #[test]
    fn lone_surrogates_are_kept_apart() {
        let read = read_py_json_bytes(
            b"{\"a\": \"\\ud800x\", \"b\": [\"\xed\xa0\x80\"], \"c\": \"\\ud83d\\ude00\", \"\\udc00\": 1, \"d\": \"\xef\xbf\xbd\"}",
            964,
        )
        .unwrap();
        assert!(read.surrogates);
        assert_eq!(read.surrogate_keys, ["a", "b", "\u{fffd}"]);
        assert_eq!(read.value.get("a"), Some(&s("\u{fffd}x")));
        assert_eq!(read.value.get("c"), Some(&s("\u{1f600}")));
        // A real U+FFFD is no surrogate.
        assert_eq!(read.value.get("d"), Some(&s("\u{fffd}")));
        // A repeated key takes the last value, and whether it held one.
        let read = read_py_json(r#"{"a": "\ud800", "a": "ok", "b": 1, "b": "\udfff"}"#, 9).unwrap();
        assert_eq!(read.surrogate_keys, ["b"]);
        // A high surrogate before an escape that is not a low one stays lone; the escape is read.
        let read = read_py_json(r#"["\ud800\u0041"]"#, 9).unwrap();
        assert_eq!(read.value, PyJson::List(vec![s("\u{fffd}A")]));
        assert!(read.surrogate_keys.is_empty() && read.surrogates);
        // `parse_py_json` refuses them.
        assert!(parse_py_json(r#""\ud800""#).is_err());
        // Bytes that are not UTF-8, surrogates aside.
        assert_eq!(
            read_py_json_bytes(b"[\"\xff\"]", 9),
            Err(PyJsonError::NotUtf8(2))
        );
        assert_eq!(
            read_py_json_bytes(b"\xed\xa0", 9),
            Err(PyJsonError::NotUtf8(0))
        );
    }

    /// Depth counts arrays and objects, empty ones too; nothing recurses (a deep body needs
    /// no stack).
    #[test]
    fn depth_is_bounded_without_recursion() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(read_py_json(&nest(964), 964).is_ok());
        assert_eq!(read_py_json(&nest(965), 964), Err(PyJsonError::TooDeep));
        assert!(read_py_json(&format!("{{\"a\": {}}}", nest(963)), 964).is_ok());
        assert_eq!(
            read_py_json(&format!("{{\"a\": {}}}", nest(964)), 964),
            Err(PyJsonError::TooDeep)
        );
        let deep = read_py_json(&nest(100_000), 200_000).unwrap().value;
        // Dropped one level at a time (the drop glue recurses: keep the test's own stack safe).
        let mut v = deep;
        while let PyJson::List(mut items) = v {
            v = items.pop().unwrap_or(PyJson::None);
        }
        assert!(parse_py_json(&"[".repeat(10_000)).is_err());
    }

    /// Python's values: big ints, floats, the words, a repeated key's last value in its first
    /// place.
    #[test]
    fn values_are_pythons() {
        let v = read_py_json(
            r#" {"i": -0, "b": 123456789012345678901234567890, "f": 1e2, "n": NaN, "x": -Infinity, "a": 1, "t": [true, false, null], "a": 2} "#,
            9,
        )
        .unwrap()
        .value;
        let PyJson::Dict(items) = &v else {
            panic!("{v:?}")
        };
        let keys: Vec<&str> = items.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["i", "b", "f", "n", "x", "a", "t"]);
        assert_eq!(v.get("i"), Some(&PyJson::Int("0".to_owned())));
        assert_eq!(
            v.get("b"),
            Some(&PyJson::Int("123456789012345678901234567890".to_owned()))
        );
        assert_eq!(v.get("f"), Some(&PyJson::Float(100.0)));
        assert!(matches!(v.get("n"), Some(PyJson::Float(f)) if f.is_nan()));
        assert_eq!(v.get("a"), Some(&PyJson::Int("2".to_owned())));
    }
}
