//! How the engine's serializer fields read a value in (Django REST framework's `to_internal_value`):
//! the field a column's type takes ([`InputField`]), the value it reads ([`Internal`]), dates and
//! date-times with their offsets, and the ORM's comparison of a new value with the stored one.

use crate::json_text::digits;
use crate::python::json::PyJson;
use crate::python::json::json_equal;
use crate::python::json::parse_py_json;
use crate::python::numbers::py_float;
use crate::python::numbers::py_int;
use crate::python::numbers::py_strip;
use crate::python::text::py_text;
use crate::python::text::unhexlify;
use crate::types::{ColumnType, Date, PyValue, Reflected, Serializer, Time};

/// Whether `s` is a valid `YYYY-MM-DD` date.
pub fn is_date(s: &str) -> bool {
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
pub fn is_datetime(s: &str, date_only: bool) -> bool {
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

/// The serializer field the engine gives a column: `get_column_data_type`
/// (`jet_bridge_base/serializers/model_serializer.py`) matches `str(column.type).upper()`
/// against its `data_types` table, first rule first ([`InputField::of_type_text`]). The same
/// field reads a written value in (`to_internal_value`) and writes a record's value
/// (`to_representation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputField {
    /// `INTEGER`, `SMALLINT`, `BIGINT`, `TINYINT`: `IntegerField`.
    Integer,
    /// `FLOAT`, a bare `DECIMAL`, `DOUBLE_PRECISION`, `MONEY`, `SMALLMONEY`: `FloatField`.
    Float,
    /// `BOOLEAN`, `BIT`: `BooleanField`.
    Boolean,
    /// `DATETIME...`, `TIMESTAMP...`: `DateTimeField`.
    DateTime,
    /// `JSON...` (`JSONB` too) and `ARRAY`: `JSONField`.
    Json,
    /// `BINARY...`, `VARBINARY...` (MySQL's): `BinaryField`, which reads hex text
    /// (`binascii.unhexlify`); the value is kept as that text ([`Internal::Str`]).
    Binary,
    /// Everything else (`REAL`, `NUMERIC...`, `DECIMAL(p, s)`, `DOUBLE`, `MEDIUMINT`, `DATE`,
    /// `TIME`, `TEXT`, `VARCHAR...`, `UUID`, `BYTEA`, `BLOB`, `NULL`...): `CharField`.
    Char,
}

/// How a rule of the engine's `data_types` table matches the type's text.
#[derive(Clone, Copy)]
enum Match {
    Equals,
    StartsWith,
}

/// The engine's `data_types` table (jet-bridge 1.12.13), in its order: the text, how it
/// matches, and the field (`None`: `ArrayField` and `WKTField`, which no type reflected by
/// SQLAlchemy 1.4 on SQLite, PostgreSQL or MySQL reaches: a PostgreSQL array's text is
/// `ARRAY`, and geometry types need GeoAlchemy2, which the engine does not install).
const DATA_TYPES: [(&str, Match, Option<InputField>); 24] = [
    ("VARCHAR", Match::StartsWith, Some(InputField::Char)),
    ("TEXT", Match::Equals, Some(InputField::Char)),
    ("BIT", Match::Equals, Some(InputField::Boolean)),
    ("TINYINT", Match::Equals, Some(InputField::Integer)),
    ("BOOLEAN", Match::Equals, Some(InputField::Boolean)),
    ("INTEGER[]", Match::StartsWith, None),
    ("INTEGER", Match::Equals, Some(InputField::Integer)),
    ("SMALLINT", Match::Equals, Some(InputField::Integer)),
    ("BIGINT", Match::Equals, Some(InputField::Integer)),
    ("FLOAT", Match::Equals, Some(InputField::Float)),
    ("DECIMAL", Match::Equals, Some(InputField::Float)),
    ("DOUBLE_PRECISION", Match::Equals, Some(InputField::Float)),
    ("MONEY", Match::Equals, Some(InputField::Float)),
    ("SMALLMONEY", Match::Equals, Some(InputField::Float)),
    ("NUMERIC", Match::StartsWith, Some(InputField::Char)),
    ("VARCHAR", Match::StartsWith, Some(InputField::Char)),
    ("TIMESTAMP", Match::StartsWith, Some(InputField::DateTime)),
    ("DATETIME", Match::StartsWith, Some(InputField::DateTime)),
    ("JSON", Match::StartsWith, Some(InputField::Json)),
    ("ARRAY", Match::Equals, Some(InputField::Json)),
    ("BINARY", Match::StartsWith, Some(InputField::Binary)),
    ("VARBINARY", Match::StartsWith, Some(InputField::Binary)),
    ("GEOMETRY", Match::StartsWith, None),
    ("GEOGRAPHY", Match::StartsWith, None),
];

impl InputField {
    /// The field of a column of type `ty` (SQLite's reflection: its serializer is already
    /// the table's answer for the type's text, see `ColumnType::from_declared`).
    pub fn of(ty: ColumnType) -> InputField {
        match (ty.serializer, ty.reflected) {
            (Serializer::Value, Reflected::Integer) => InputField::Integer,
            (Serializer::Value, Reflected::Boolean) => InputField::Boolean,
            (Serializer::Value, _) => InputField::Float,
            (Serializer::DateTime, _) => InputField::DateTime,
            (Serializer::Text, Reflected::Json) => InputField::Json,
            (Serializer::Text, _) => InputField::Char,
        }
    }

    /// `get_column_data_type` of a column whose SQLAlchemy type prints as `text`
    /// (`str(column.type)`; upper-cased here): the first rule of the engine's table that
    /// matches, `CharField` when none does. `None` for the two fields the emulator has no use
    /// for (see `DATA_TYPES`).
    pub fn of_type_text(text: &str) -> Option<InputField> {
        let upper = text.to_uppercase();
        for (query, how, field) in DATA_TYPES {
            let hit = match how {
                Match::Equals => upper == query,
                Match::StartsWith => upper.starts_with(query),
            };
            if hit {
                return field;
            }
        }
        Some(InputField::Char)
    }
}

/// A date-time as the engine's `DateTimeField` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputDateTime {
    /// The date.
    pub date: Date,
    /// The time of day.
    pub time: Time,
    /// The time zone the text named: sign, hours and minutes (`Z` is `+00:00`); SQLAlchemy
    /// drops it when storing.
    pub offset: Option<(char, u32, u32)>,
}

impl InputDateTime {
    /// The naive date-time as `YYYY-MM-DD HH:MM:SS.ffffff` (always six digits of
    /// microseconds): the form SQLAlchemy stores in a SQLite `DATETIME`, and psycopg2's literal
    /// before its offset.
    pub fn naive_text(&self) -> String {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}",
            self.date.year,
            self.date.month,
            self.date.day,
            self.time.hour,
            self.time.minute,
            self.time.second,
            self.time.micro
        )
    }

    /// Whether the text named a time zone.
    pub fn aware(&self) -> bool {
        self.offset.is_some()
    }

    /// Python's `str(datetime)`: `YYYY-MM-DD HH:MM:SS`, `.ffffff` when the microseconds are
    /// not zero, then the offset of an aware date-time.
    pub fn python_str(&self) -> String {
        let mut s = format!("{} {}", self.date.iso(), self.time.iso());
        if let Some((sign, hours, minutes)) = self.offset {
            s.push_str(&format!("{sign}{hours:02}:{minutes:02}"));
        }
        s
    }

    /// The naive date-time of the same instant in the zone `tz` (seconds east of UTC): Python's
    /// `dt.astimezone(tz).replace(tzinfo=None)`; a naive one as it is.
    pub fn in_zone(&self, tz: i32) -> InputDateTime {
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

/// The Python value a serializer field makes of a body value, which the engine sets on the
/// record.
#[derive(Debug, Clone, PartialEq)]
pub enum Internal {
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
    pub fn truthy(&self) -> bool {
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
pub fn float_field(text: &str) -> Option<Internal> {
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
pub const TRUE_WORDS: [&str; 13] = [
    "t", "T", "y", "Y", "yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "1",
];

/// `BooleanField.FALSE_VALUES` (strings).
pub const FALSE_WORDS: [&str; 13] = [
    "f", "F", "n", "N", "no", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "0",
];

/// A serializer field's `to_internal_value` of a body value (after `get_value`, which joins a
/// list into the text of its non-null items for every field but JSON). `Err` holds the
/// engine's field message.
pub fn to_internal(field: InputField, v: &PyJson) -> Result<Internal, String> {
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
        InputField::Binary => match v {
            // `binascii.unhexlify`: ASCII hex digits in pairs, in either case.
            PyJson::Str(s) if unhexlify(s).is_some() => Ok(Internal::Str(s.clone())),
            // Anything else raises in `unhexlify` (`TypeError` for a value that is not text,
            // `binascii.Error` for other text), which the engine answers with a 500.
            PyJson::Str(_) => Err(
                "not valid hex: the field takes bytes as hex text, two digits a byte (0a1b)"
                    .to_owned(),
            ),
            other => Err(format!(
                "not text: the field takes bytes as hex text, two digits a byte (0a1b), not {}",
                other.kind_name()
            )),
        },
        InputField::Char => match v {
            PyJson::None => Ok(Internal::None),
            other => Ok(Internal::Str(py_text(other))),
        },
    }
}

/// Whether the engine's field fails on `v` with an exception of its own (the engine answers
/// 500) rather than its validation error: a JSON object given to a `BooleanField` (`value in
/// TRUE_VALUES` hashes it), and anything a `BinaryField` cannot unhexlify (`null` among them).
/// The emulator refuses these by design ([decision: stricter]).
pub fn engine_fails(field: InputField, v: &PyJson) -> bool {
    match field {
        InputField::Boolean => matches!(v, PyJson::Dict(_)),
        InputField::Binary => to_internal(field, v).is_err(),
        _ => false,
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
pub fn parse_input_datetime(text: &str) -> Option<InputDateTime> {
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
            // Python writes a zero offset as `+00:00`, whichever sign it was given with.
            let sign = if (h, m) == (0, 0) { b'+' } else { sign };
            offset = Some((char::from(sign), h, m));
        }
    } else {
        // A date alone is midnight.
    }
    Some(InputDateTime { date, time, offset })
}

/// Python's `==` between a value the engine sets and the value it loaded (SQLAlchemy writes
/// only the attributes whose value changed).
pub fn py_equal(new: &Internal, old: &PyValue<'_>, reflected: Reflected) -> bool {
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

#[cfg(test)]
#[path = "field_input_spellings.rs"]
mod spellings;

#[cfg(test)]
mod tests {
    use super::*;

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
}
