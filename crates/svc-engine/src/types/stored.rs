//! A stored value ([`Stored`], one of SQL's five storage classes) and the Python value
//! SQLAlchemy's result processors make of it ([`PyValue`]): decimals with their scale, dates
//! and date-times from text, booleans by truthiness.

use crate::types::ColumnType;
use crate::types::Date;
use crate::types::Reflected;
use crate::types::Time;
use crate::types::parse_date;
use crate::types::parse_datetime;
use crate::types::parse_time;

/// A stored value as a database driver hands it over, in SQL's five storage classes: what the
/// engine's readings ([`read`], [`plain`]) start from, whatever the database. Each backend
/// turns its driver's values into these (the SQLite backend's are the same five classes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stored<'a> {
    /// SQL `NULL`.
    Null,
    /// An integer.
    Integer(i64),
    /// A floating-point number.
    Real(f64),
    /// Text, as stored (normally UTF-8; the readings cope when it is not).
    Text(&'a [u8]),
    /// Bytes.
    Blob(&'a [u8]),
}

/// A stored value as the engine holds it after SQLAlchemy's result processing.
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue<'a> {
    /// `None`.
    None,
    /// `bool`.
    Bool(bool),
    /// `int`.
    Int(i64),
    /// `float`.
    Float(f64),
    /// `Decimal`, as its `str()` text, and the float the JSON encoder would write.
    Decimal(String, f64),
    /// `str`.
    Str(&'a [u8]),
    /// `bytes`.
    Bytes(&'a [u8]),
    /// `datetime.date`.
    Date(Date),
    /// `datetime.datetime` (naive).
    DateTime(Date, Time),
    /// `datetime.time`.
    Time(Time),
    /// A value the engine cannot read (it answers 500): written as it is stored.
    Unreadable(Stored<'a>),
}

/// The Python value SQLAlchemy gives for a stored value of a column of type `ty`.
pub fn read(ty: ColumnType, v: Stored<'_>) -> PyValue<'_> {
    if let Stored::Null = v {
        return PyValue::None;
    }
    match ty.reflected {
        Reflected::Boolean => match v {
            Stored::Integer(i) => PyValue::Bool(i != 0),
            Stored::Real(f) => PyValue::Bool(f != 0.0),
            Stored::Text(t) | Stored::Blob(t) => PyValue::Bool(!t.is_empty()),
            Stored::Null => PyValue::None,
        },
        Reflected::Numeric { scale } => match v {
            Stored::Integer(i) => decimal(i as f64, scale),
            Stored::Real(f) => decimal(f, scale),
            other => PyValue::Unreadable(other),
        },
        Reflected::Date => match v {
            Stored::Text(t) => parse_date(t).map_or(PyValue::Unreadable(v), PyValue::Date),
            other => PyValue::Unreadable(other),
        },
        Reflected::DateTime => match v {
            Stored::Text(t) => {
                parse_datetime(t).map_or(PyValue::Unreadable(v), |(d, t)| PyValue::DateTime(d, t))
            }
            other => PyValue::Unreadable(other),
        },
        Reflected::Time => match v {
            Stored::Text(t) => parse_time(t).map_or(PyValue::Unreadable(v), PyValue::Time),
            other => PyValue::Unreadable(other),
        },
        Reflected::Blob => match v {
            Stored::Blob(b) => PyValue::Bytes(b),
            other => PyValue::Unreadable(other),
        },
        Reflected::Integer
        | Reflected::Float
        | Reflected::String
        | Reflected::Json
        | Reflected::Untyped => plain(v),
    }
}

/// A stored value as Python's `sqlite3` module gives it.
pub fn plain(v: Stored<'_>) -> PyValue<'_> {
    match v {
        Stored::Null => PyValue::None,
        Stored::Integer(i) => PyValue::Int(i),
        Stored::Real(f) => PyValue::Float(f),
        Stored::Text(t) => PyValue::Str(t),
        Stored::Blob(b) => PyValue::Bytes(b),
    }
}

/// `Decimal("%.{scale}f" % value)`.
fn decimal(value: f64, scale: u8) -> PyValue<'static> {
    let fixed = format!("{value:.prec$}", prec = usize::from(scale));
    let text = decimal_str(&fixed);
    let float = text.parse::<f64>().unwrap_or(value);
    PyValue::Decimal(text, float)
}

/// `str(Decimal(text))` for fixed-point text such as `-12.3400`, or scientific text such as
/// `1.000E-7` (what this function writes: it is its own inverse, so a value written once
/// reads back the same). Python's to-scientific-string: plain when the exponent is at most 0
/// and the adjusted exponent at least -6, else `d.dddE-n`.
pub fn decimal_str(text: &str) -> String {
    if matches!(text, "Infinity" | "-Infinity" | "NaN") {
        return text.to_owned();
    }
    let (fixed, shift) = match text.split_once(['E', 'e']) {
        Some((mantissa, exp)) => match exp.parse::<i64>() {
            Ok(exp) => (mantissa, exp),
            Err(_) => (text, 0),
        },
        None => (text, 0),
    };
    if fixed.is_empty()
        || !fixed
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
    {
        // inf or nan: Decimal's own words.
        return match fixed.trim_start_matches('-') {
            "inf" => format!("{}Infinity", if fixed.starts_with('-') { "-" } else { "" }),
            _ => "NaN".to_owned(),
        };
    }
    let (negative, unsigned) = match fixed.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, fixed),
    };
    let (int_part, frac_part) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let exponent = shift - frac_part.len() as i64;
    let all: String = format!("{int_part}{frac_part}");
    let trimmed = all.trim_start_matches('0');
    let coefficient = if trimmed.is_empty() { "0" } else { trimmed };
    let adjusted = exponent + coefficient.len() as i64 - 1;
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    if exponent <= 0 && adjusted >= -6 {
        if exponent == 0 {
            out.push_str(coefficient);
        } else {
            let places = (-exponent) as usize;
            if coefficient.len() > places {
                let (a, b) = coefficient.split_at(coefficient.len() - places);
                out.push_str(a);
                out.push('.');
                out.push_str(b);
            } else {
                out.push_str("0.");
                out.push_str(&"0".repeat(places - coefficient.len()));
                out.push_str(coefficient);
            }
        }
    } else {
        out.push_str(&coefficient[..1]);
        if coefficient.len() > 1 {
            out.push('.');
            out.push_str(&coefficient[1..]);
        }
        out.push('E');
        out.push(if adjusted < 0 { '-' } else { '+' });
        out.push_str(&adjusted.unsigned_abs().to_string());
    }
    out
}
