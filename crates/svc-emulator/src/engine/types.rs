//! How the data engine types a column, and how it writes the values it reads.
//!
//! The platform's data engine (PyPI `jet-bridge`) reflects a table with SQLAlchemy 1.4 and
//! then picks, from the reflected type, a serializer field (how a record's value is written), a
//! filter family (which lookups exist and how their values are read) and whether `_search`
//! looks at the column. The emulator answers like the engine, so it reproduces those steps
//! exactly:
//!
//! 1. **Reflection** ([`Reflected`]): the SQLAlchemy type a column reflects as. How a
//!    database's declared types map onto it is that database's dialect (SQLite's:
//!    `sqlite/types.rs`, `ColumnType::from_declared`).
//! 2. **Reading** ([`PyValue`]): SQLAlchemy's result processors turn the stored value into a
//!    Python value: `NUMERIC`/`DECIMAL` into a `Decimal` with the column's scale (10 when it has
//!    none), `DATE` and `DATETIME` text into dates and date-times, booleans by truthiness.
//! 3. **Writing** ([`Serializer`]): the engine matches `str(type)` against its own table. Only
//!    `INTEGER`/`SMALLINT`/`BIGINT`, `BOOLEAN`, `FLOAT` and a bare `DECIMAL` are written as
//!    JSON numbers and booleans; `DATETIME` and `TIMESTAMP` as ISO 8601 (`T`, microseconds
//!    only when not zero); **everything else as text**: `str()` of the Python value. So a
//!    `REAL` column answers `"57.0"` and a `NUMERIC` one `"88378.0000000000"`.
//!
//! Group rows skip step 3: they go straight to the engine's JSON encoder
//! ([`write_encoded`]), which writes `Decimal` as a float and dates in ISO form.

use crate::engine::json_text::{
    digits, put, write_digits, write_i64, write_json_str, write_json_text,
};
use crate::util::base64::base64_encode_into;

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

/// A column's type as SQLAlchemy 1.4 reflects it. The names below are SQLite's declared types
/// (`sqlite/types.rs` maps them); each other backend maps its own types onto these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reflected {
    /// `INTEGER`, `INT`, `BIGINT`, `SMALLINT`, or any name containing `INT`.
    Integer,
    /// `FLOAT` and `DOUBLE` (SQLAlchemy's `FLOAT`), `REAL`, and names containing `REAL`,
    /// `FLOA` or `DOUB`. Read as Python floats.
    Float,
    /// `NUMERIC`, `DECIMAL` and any name no other rule takes (`UUID`, `MONEY`, ...): read as a
    /// `Decimal` rounded to `scale` places.
    Numeric {
        /// The declared scale (`NUMERIC(10, 2)`), 10 when none is declared.
        scale: u8,
    },
    /// `BOOL` and `BOOLEAN`.
    Boolean,
    /// `DATE`: stored as `YYYY-MM-DD` text.
    Date,
    /// `DATETIME` and `TIMESTAMP`: stored as `YYYY-MM-DD HH:MM:SS[.ffffff]` text.
    DateTime,
    /// `TIME`.
    Time,
    /// `VARCHAR`, `CHAR`, `NCHAR`, `NVARCHAR`, `TEXT` and names containing `CHAR`, `CLOB` or
    /// `TEXT`.
    String,
    /// `JSON`.
    Json,
    /// `BLOB`.
    Blob,
    /// No declared type, or a name containing `BLOB` other than `BLOB` itself.
    Untyped,
}

/// How the engine's serializer writes a column's values in records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Serializer {
    /// Integer, float and boolean fields: the Python value as the JSON encoder writes it.
    Value,
    /// Date-time fields: `isoformat()`.
    DateTime,
    /// Every other column: `str()` of the Python value, as a JSON string.
    Text,
}

/// The engine's filter family of a column: which lookups it has and how values are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FilterFamily {
    /// Integer and numeric columns: `exact gt gte lt lte icontains in isnull isempty`, values
    /// read as Python floats.
    Number,
    /// `DATE` columns: the date-time lookups, values compared as `YYYY-MM-DD` text.
    Date,
    /// `DATETIME`/`TIMESTAMP` columns: the date-time lookups, values bound in the stored form.
    DateTime,
    /// Booleans: `exact in isnull isempty`.
    Boolean,
    /// Everything else: `exact icontains in istartswith iendswith isnull isempty`, as text.
    Text,
    /// JSON columns (and arrays on PostgreSQL): `exact in json_icontains isnull isempty`.
    /// PostgreSQL matches `exact` and `in` by containment; SQLite matches all three as a
    /// case-insensitive substring of the stored text.
    Json,
}

/// How `_search` looks at a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Search {
    /// Integer and numeric columns: their text equals the search text.
    Equal,
    /// Text columns: their text contains the search text (SQLite: `LIKE`, ASCII case folding;
    /// PostgreSQL: `ILIKE` on text, enum and JSON columns, folding as the database's locale does).
    Contains,
    /// Not searched (dates, booleans, untyped and binary columns).
    Skip,
}

/// Everything the engine derives from a column's declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColumnType {
    /// The reflected type.
    pub reflected: Reflected,
    /// How records write its values.
    pub serializer: Serializer,
    /// Its filter family.
    pub filter: FilterFamily,
    /// How `_search` treats it.
    pub search: Search,
}

/// How records write a column's values: the engine's reading and serializer of its type,
/// decided once per column so that a page's values are not sorted out again one by one. Each
/// writer writes the common stored forms directly and leaves the rest to the general path
/// through the engine's Python value (the same bytes: the tests compare the two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueWriter {
    /// Read as stored (`sqlite3`'s own values), written as the JSON encoder writes them.
    Plain,
    /// Read as stored, written as `str()` of the value.
    PlainText,
    /// A boolean written as the JSON encoder writes it.
    Bool,
    /// A date, written in ISO form.
    Date,
    /// A date-time: `isoformat()` (with `T`) or, as text, `str()` (with a space).
    DateTime {
        /// `isoformat()`, not `str()`.
        iso: bool,
    },
    /// Every value through the engine's Python value.
    Python,
}

impl ColumnType {
    /// How records write this type's values.
    pub fn value_writer(self) -> ValueWriter {
        let text = self.serializer == Serializer::Text;
        match self.reflected {
            Reflected::Integer
            | Reflected::Float
            | Reflected::String
            | Reflected::Json
            | Reflected::Untyped => {
                if text {
                    ValueWriter::PlainText
                } else {
                    ValueWriter::Plain
                }
            }
            Reflected::Boolean if !text => ValueWriter::Bool,
            Reflected::Date => ValueWriter::Date,
            Reflected::DateTime => ValueWriter::DateTime { iso: !text },
            _ => ValueWriter::Python,
        }
    }

    /// Whether the column is a SQLAlchemy `String` (`isempty` also matches `''` there).
    pub fn is_string(self) -> bool {
        self.reflected == Reflected::String
    }

    /// Whether values are read back as Python floats (`REAL`, `FLOAT`, ...).
    pub fn is_float(self) -> bool {
        self.reflected == Reflected::Float
    }
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

/// A calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Date {
    /// Year.
    pub year: u32,
    /// Month, 1..=12.
    pub month: u32,
    /// Day, 1..=31.
    pub day: u32,
}

/// A time of day with microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Time {
    /// Hour.
    pub hour: u32,
    /// Minute.
    pub minute: u32,
    /// Second.
    pub second: u32,
    /// Microsecond.
    pub micro: u32,
}

impl Date {
    /// Whether the date exists (years 1 to 9999, as Python's `date`).
    pub(crate) fn valid(self) -> bool {
        let leap = || {
            (self.year.is_multiple_of(4) && !self.year.is_multiple_of(100))
                || self.year.is_multiple_of(400)
        };
        let days = match self.month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap() => 29,
            2 => 28,
            _ => return false,
        };
        (1..=9999).contains(&self.year) && (1..=days).contains(&self.day)
    }

    /// Days since 1970-01-01 of the proleptic Gregorian date (Howard Hinnant's algorithm).
    // Read only by the database servers' backends, each an optional feature.
    #[allow(dead_code)]
    pub(crate) fn days(self) -> i64 {
        let (m, d) = (i64::from(self.month), i64::from(self.day));
        let y = i64::from(self.year) - i64::from(m <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
        era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
    }

    /// The proleptic Gregorian date `days` days after 1970-01-01 (a year before 1 as 0).
    pub(crate) fn from_days(days: i64) -> Date {
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        Date {
            year: u32::try_from(yoe + era * 400 + i64::from(month <= 2)).unwrap_or(0),
            month,
            day: (doy - (153 * mp + 2) / 5 + 1) as u32,
        }
    }

    /// `isoformat()`: `YYYY-MM-DD`.
    pub fn iso(self) -> String {
        let mut buf = Vec::with_capacity(10);
        self.write_iso(&mut buf);
        String::from_utf8(buf).unwrap_or_default()
    }

    /// Writes [`iso`](Self::iso) into `buf`, without `fmt` (records write one per row).
    pub(crate) fn write_iso(self, buf: &mut Vec<u8>) {
        write_padded(buf, self.year, 4);
        buf.push(b'-');
        write_padded(buf, self.month, 2);
        buf.push(b'-');
        write_padded(buf, self.day, 2);
    }
}

impl Time {
    fn valid(self) -> bool {
        self.hour < 24 && self.minute < 60 && self.second < 60 && self.micro < 1_000_000
    }

    /// `isoformat()`: `HH:MM:SS`, then `.ffffff` when the microseconds are not zero.
    pub fn iso(self) -> String {
        let mut buf = Vec::with_capacity(15);
        self.write_iso(&mut buf);
        String::from_utf8(buf).unwrap_or_default()
    }

    /// Writes [`iso`](Self::iso) into `buf`, without `fmt`.
    pub(crate) fn write_iso(self, buf: &mut Vec<u8>) {
        write_padded(buf, self.hour, 2);
        buf.push(b':');
        write_padded(buf, self.minute, 2);
        buf.push(b':');
        write_padded(buf, self.second, 2);
        if self.micro != 0 {
            buf.push(b'.');
            write_padded(buf, self.micro, 6);
        }
    }
}

/// [`write_digits`] of a date or time part.
fn write_padded(buf: &mut Vec<u8>, n: u32, width: usize) {
    write_digits(buf, u64::from(n), width);
}

/// Writes `date` (and `time`, after a `T`) as a JSON string.
fn write_iso_json(buf: &mut Vec<u8>, date: Option<Date>, time: Option<Time>) {
    buf.push(b'"');
    if let Some(d) = date {
        d.write_iso(buf);
    }
    if let Some(t) = time {
        if date.is_some() {
            buf.push(b'T');
        }
        t.write_iso(buf);
    }
    buf.push(b'"');
}

/// Reads leading digits like C's `%Nu`: at most `max` of them, at least one.
fn scan_digits(s: &[u8], at: &mut usize, max: usize) -> Option<u32> {
    let start = *at;
    while *at < s.len() && *at - start < max && s[*at].is_ascii_digit() {
        *at += 1;
    }
    if *at == start {
        return None;
    }
    std::str::from_utf8(&s[start..*at]).ok()?.parse().ok()
}

fn expect(s: &[u8], at: &mut usize, c: u8) -> Option<()> {
    (s.get(*at) == Some(&c)).then(|| *at += 1)
}

/// SQLAlchemy's date parser: `(\d+)-(\d+)-(\d+)` at the start of the text.
pub fn parse_date(text: &[u8]) -> Option<Date> {
    let mut at = 0;
    let year = scan_digits(text, &mut at, usize::MAX)?;
    expect(text, &mut at, b'-')?;
    let month = scan_digits(text, &mut at, usize::MAX)?;
    expect(text, &mut at, b'-')?;
    let day = scan_digits(text, &mut at, usize::MAX)?;
    let d = Date { year, month, day };
    d.valid().then_some(d)
}

/// SQLAlchemy's C date-time parser: `sscanf("%4u-%2u-%2u %2u:%2u:%2u.%6u")` with at least the
/// seconds matched; microseconds are the digits as a number (`.25` is 25 µs).
pub fn parse_datetime(text: &[u8]) -> Option<(Date, Time)> {
    let mut at = 0;
    let year = scan_digits(text, &mut at, 4)?;
    expect(text, &mut at, b'-')?;
    let month = scan_digits(text, &mut at, 2)?;
    expect(text, &mut at, b'-')?;
    let day = scan_digits(text, &mut at, 2)?;
    // A blank in a scanf format matches any run of white space, including none.
    while text.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    let hour = scan_digits(text, &mut at, 2)?;
    expect(text, &mut at, b':')?;
    let minute = scan_digits(text, &mut at, 2)?;
    expect(text, &mut at, b':')?;
    let second = scan_digits(text, &mut at, 2)?;
    let micro = if expect(text, &mut at, b'.').is_some() {
        scan_digits(text, &mut at, 6).unwrap_or(0)
    } else {
        0
    };
    let d = Date { year, month, day };
    let t = Time {
        hour,
        minute,
        second,
        micro,
    };
    (d.valid() && t.valid()).then_some((d, t))
}

/// SQLAlchemy's time parser: `(\d+):(\d+):(\d+)(?:\.(\d{6}))?` at the start of the text.
pub fn parse_time(text: &[u8]) -> Option<Time> {
    let mut at = 0;
    let hour = scan_digits(text, &mut at, usize::MAX)?;
    expect(text, &mut at, b':')?;
    let minute = scan_digits(text, &mut at, usize::MAX)?;
    expect(text, &mut at, b':')?;
    let second = scan_digits(text, &mut at, usize::MAX)?;
    let mut micro = 0;
    if text.get(at) == Some(&b'.')
        && text.len() >= at + 7
        && text[at + 1..at + 7].iter().all(u8::is_ascii_digit)
    {
        micro = std::str::from_utf8(&text[at + 1..at + 7])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
    }
    let t = Time {
        hour,
        minute,
        second,
        micro,
    };
    t.valid().then_some(t)
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

/// `str(Decimal(fixed))` for fixed-point text such as `-12.3400` (Python's
/// to-scientific-string: plain when the exponent is at most 0 and the adjusted exponent at
/// least -6, else `d.dddE-n`).
pub fn decimal_str(fixed: &str) -> String {
    if !fixed
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
    let exponent = -(frac_part.len() as i64);
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

/// Python's `repr(float)`: the shortest text that reads back as the same float, in fixed
/// notation for exponents -4 to 15 (`57.0`, `0.0001`) and scientific otherwise (`1e+16`,
/// `1.5e-05`).
pub fn py_float_repr(f: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write_py_float_repr(&mut out, f);
    // Only ASCII is ever written.
    String::from_utf8(out).unwrap_or_default()
}

/// Writes Python's `repr(float)` (see [`py_float_repr`]) into `buf`, with no allocation but
/// `buf`'s own growth. Both Python and [`ryu`] give the shortest digits that read back as the
/// same float (the nearest such when there are several), so only the layout differs: ryu's
/// text is read back as significant digits and an exponent, then laid out as Python lays them
/// out. A page of records writes one per float value, so this is on the list path.
pub fn write_py_float_repr(buf: &mut Vec<u8>, f: f64) {
    if f.is_nan() {
        buf.extend_from_slice(b"nan");
        return;
    }
    if f.is_infinite() {
        let text: &[u8] = if f > 0.0 { b"inf" } else { b"-inf" };
        buf.extend_from_slice(text);
        return;
    }
    if f.is_sign_negative() {
        buf.push(b'-');
    }
    let f = f.abs();
    if let Some((n, places)) = short_decimal(f) {
        write_short_decimal(buf, n, places);
        return;
    }
    let mut shortest = ryu::Buffer::new();
    let text = shortest.format_finite(f).as_bytes();
    let (digits, exp) = match ShortestDigits::read(text) {
        Some(read) => read,
        None => {
            // Zero (ryu writes `0.0`; the sign is written above).
            buf.extend_from_slice(b"0.0");
            return;
        }
    };
    let digits = digits.as_slice();
    if (-4..16).contains(&exp) {
        if exp < 0 {
            buf.extend_from_slice(b"0.");
            buf.resize(buf.len() + (-exp - 1) as usize, b'0');
            buf.extend_from_slice(digits);
        } else {
            let int_len = exp as usize + 1;
            match (digits.get(..int_len), digits.get(int_len..)) {
                (Some(int), Some(frac)) if !frac.is_empty() => {
                    buf.extend_from_slice(int);
                    buf.push(b'.');
                    buf.extend_from_slice(frac);
                }
                _ => {
                    buf.extend_from_slice(digits);
                    buf.resize(buf.len() + int_len.saturating_sub(digits.len()), b'0');
                    buf.extend_from_slice(b".0");
                }
            }
        }
    } else {
        let (first, rest) = digits.split_at(digits.len().min(1));
        buf.extend_from_slice(first);
        if !rest.is_empty() {
            buf.push(b'.');
            buf.extend_from_slice(rest);
        }
        buf.push(b'e');
        buf.push(if exp < 0 { b'-' } else { b'+' });
        // Python writes at least two exponent digits: `1e-05`, `1e+16`, `1e+100`.
        write_digits(buf, u64::from(exp.unsigned_abs()), 2);
    }
}

/// Powers of ten that are exact floats, for [`short_decimal`].
const POWERS_OF_TEN: [f64; 7] = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6];

/// `(n, places)` when `f` (finite, not negative) is the float nearest to `n / 10^places` for
/// an `n` below 10^15 and at most six places, the fewest places that do: the values a database
/// mostly holds (`57.0`, `88378.12`). Every decimal of at most 15 significant digits reads as
/// a float of its own (`DBL_DIG`), so no shorter text reads as `f`: this is the shortest text
/// Python's `repr` writes, found without the general algorithm. `n / 10^places` is exact
/// division of two exact floats, rounded as reading the decimal text rounds it.
#[inline]
fn short_decimal(f: f64) -> Option<(u64, usize)> {
    if !(1e-4..1e15).contains(&f) {
        // Outside, Python writes an exponent, or the digits may pass 15.
        return None;
    }
    for (places, &scale) in POWERS_OF_TEN.iter().enumerate() {
        let scaled = f * scale;
        if scaled >= 1e15 {
            return None;
        }
        // A candidate only (the test below is exact): `as` truncates, so add a half.
        let n = (scaled + 0.5) as u64;
        if n as f64 / scale == f {
            return Some((n, places));
        }
    }
    None
}

/// Writes `n / 10^places` in fixed notation, as Python's `repr` lays out a float below 10^16:
/// `57.0`, `0.05`, `88378.12`.
fn write_short_decimal(buf: &mut Vec<u8>, n: u64, places: usize) {
    let mut text = itoa::Buffer::new();
    let digits = text.format(n).as_bytes();
    match digits.len().checked_sub(places) {
        _ if places == 0 => {
            buf.extend_from_slice(digits);
            buf.extend_from_slice(b".0");
        }
        Some(int_len) if int_len > 0 => {
            let (int, frac) = digits.split_at(int_len);
            buf.extend_from_slice(int);
            buf.push(b'.');
            buf.extend_from_slice(frac);
        }
        _ => {
            buf.extend_from_slice(b"0.");
            buf.resize(buf.len() + places - digits.len(), b'0');
            buf.extend_from_slice(digits);
        }
    }
}

/// The significant digits of a float's shortest text (at most 17, no leading or trailing
/// zeros), read from ryu's `123.45`, `0.00012`, `1.5e-7` or `1e16` forms.
struct ShortestDigits {
    digits: [u8; 24],
    len: usize,
}

impl ShortestDigits {
    /// The digits and the decimal exponent of the first one (`123.45`: `12345` and 2); `None`
    /// for zero.
    fn read(text: &[u8]) -> Option<(Self, i32)> {
        let e_at = text.iter().position(|&c| c == b'e').unwrap_or(text.len());
        let (mantissa, exp_text) = text.split_at(e_at);
        let exp_text = exp_text.get(1..).unwrap_or_default();
        let (exp_negative, exp_digits) = match exp_text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, exp_text),
        };
        let magnitude = exp_digits
            .iter()
            .fold(0i32, |n, &d| n * 10 + i32::from(d.wrapping_sub(b'0')));
        let written_exp = if exp_negative { -magnitude } else { magnitude };
        let mut out = ShortestDigits {
            digits: [0; 24],
            len: 0,
        };
        // How many mantissa digits stand before its point, and where the first non-zero one is.
        let mut before_point = 0i32;
        let mut point_seen = false;
        let mut position = 0i32;
        let mut first_nonzero = None;
        for &c in mantissa {
            if c == b'.' {
                point_seen = true;
                continue;
            }
            if !point_seen {
                before_point += 1;
            }
            if first_nonzero.is_none() && c != b'0' {
                first_nonzero = Some(position);
            }
            if first_nonzero.is_some()
                && let Some(slot) = out.digits.get_mut(out.len)
            {
                *slot = c;
                out.len += 1;
            }
            position += 1;
        }
        let first_nonzero = first_nonzero?;
        while out.len > 1 && out.digits.get(out.len - 1) == Some(&b'0') {
            out.len -= 1;
        }
        Some((out, before_point - 1 - first_nonzero + written_exp))
    }

    fn as_slice(&self) -> &[u8] {
        self.digits.get(..self.len).unwrap_or_default()
    }
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
pub(crate) fn write_with(
    buf: &mut Vec<u8>,
    writer: ValueWriter,
    ty: ColumnType,
    v: Stored<'_>,
) -> bool {
    write_direct(buf, writer, v) || write_through_python(buf, ty, v)
}

/// The common values of a page, written straight from what is stored, without making the
/// engine's Python value first: `true` when `v` was one of them (and is written), `false` when
/// it is left to [`write_through_python`] (and nothing is written).
#[inline(always)]
fn write_direct(buf: &mut Vec<u8>, writer: ValueWriter, v: Stored<'_>) -> bool {
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

/// Whether `t` is exactly `YYYY-MM-DD` naming a date that exists: what [`parse_date`] reads
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
fn write_through_python(buf: &mut Vec<u8>, ty: ColumnType, v: Stored<'_>) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ty(decl: &str) -> ColumnType {
        ColumnType::from_declared(decl)
    }

    #[test]
    fn the_engine_writes_most_types_as_text() {
        for (decl, want) in [
            ("INTEGER", Serializer::Value),
            ("BIGINT", Serializer::Value),
            ("BOOLEAN", Serializer::Value),
            ("FLOAT", Serializer::Value),
            ("DOUBLE", Serializer::Value),
            ("DECIMAL", Serializer::Value),
            ("DATETIME", Serializer::DateTime),
            ("TIMESTAMP", Serializer::DateTime),
            ("REAL", Serializer::Text),
            ("FLOAT(53)", Serializer::Text),
            ("NUMERIC", Serializer::Text),
            ("DECIMAL(10, 2)", Serializer::Text),
            ("DATE", Serializer::Text),
            ("TEXT", Serializer::Text),
            ("", Serializer::Text),
        ] {
            assert_eq!(ty(decl).serializer, want, "{decl:?}");
        }
    }

    #[test]
    fn iso_forms_are_what_fmt_writes() {
        for (year, month, day) in [
            (1, 1, 1),
            (999, 12, 31),
            (2024, 2, 29),
            (9999, 9, 9),
            (12345, 1, 2),
        ] {
            let d = Date { year, month, day };
            assert_eq!(d.iso(), format!("{year:04}-{month:02}-{day:02}"));
        }
        for (hour, minute, second, micro) in [
            (0, 0, 0, 0),
            (9, 5, 7, 1),
            (23, 59, 59, 999_999),
            (12, 0, 0, 250_000),
        ] {
            let t = Time {
                hour,
                minute,
                second,
                micro,
            };
            let mut want = format!("{hour:02}:{minute:02}:{second:02}");
            if micro != 0 {
                want.push_str(&format!(".{micro:06}"));
            }
            assert_eq!(t.iso(), want);
        }
    }

    fn field(decl: &str, v: Stored<'_>) -> String {
        let mut buf = Vec::new();
        write_field(&mut buf, ty(decl), v);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn record_values_are_written_like_the_engine() {
        assert_eq!(field("REAL", Stored::Real(57.0)), r#""57.0""#);
        assert_eq!(field("REAL", Stored::Real(0.1)), r#""0.1""#);
        assert_eq!(field("FLOAT", Stored::Real(57.0)), "57.0");
        assert_eq!(
            field("NUMERIC", Stored::Integer(88378)),
            r#""88378.0000000000""#
        );
        assert_eq!(field("NUMERIC", Stored::Integer(0)), r#""0E-10""#);
        assert_eq!(field("DECIMAL(10, 2)", Stored::Real(4.5)), r#""4.50""#);
        assert_eq!(field("DECIMAL", Stored::Real(4.5)), "4.5");
        assert_eq!(
            field("DATE", Stored::Text(b"2024-03-05")),
            r#""2024-03-05""#
        );
        assert_eq!(
            field("DATETIME", Stored::Text(b"2024-03-05 10:11:12")),
            r#""2024-03-05T10:11:12""#
        );
        assert_eq!(
            field("DATETIME", Stored::Text(b"2024-03-05 10:11:12.250")),
            r#""2024-03-05T10:11:12.000250""#
        );
        assert_eq!(field("BOOLEAN", Stored::Integer(2)), "true");
        assert_eq!(field("", Stored::Integer(5)), r#""5""#);
        assert_eq!(field("", Stored::Blob(b"a'\x00")), r#""b\"a'\\x00\"""#);
        assert_eq!(field("INTEGER", Stored::Integer(-7)), "-7");
        assert_eq!(field("TEXT", Stored::Null), "null");
    }

    #[test]
    fn floats_print_as_python_prints_them() {
        for (f, want) in [
            (57.0, "57.0"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (123456789012345.6, "123456789012345.6"),
            (1234567890123456.7, "1234567890123456.8"),
            (1e22, "1e+22"),
            (2.5e-300, "2.5e-300"),
            (1521.9399999999998, "1521.9399999999998"),
            // The edges of fixed notation, and the extremes (what CPython 3 prints).
            (9999999999999998.0, "9999999999999998.0"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (0.00012, "0.00012"),
            (1.5e300, "1.5e+300"),
            (-1.5e300, "-1.5e+300"),
            (5e-324, "5e-324"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (-f64::MAX, "-1.7976931348623157e+308"),
            (1e100, "1e+100"),
            (0.0, "0.0"),
            (-12.5, "-12.5"),
            // Exactly halfway between two shortest texts: Python takes the even last digit
            // (Rust's `{:e}` writes ...562.3, ...796.13 and ...277.313).
            (f64::from_bits(0x4317_9085_685d_83c9), "1658206780088562.2"),
            (f64::from_bits(0x42ea_8090_bb0f_6d84), "233115890514796.12"),
            (f64::from_bits(0xc2b8_66ca_ca40_ad50), "-26829767983277.312"),
            (f64::NAN, "nan"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(py_float_repr(f), want, "{f:?}");
            // Written into a buffer that already holds text: appended, nothing else touched.
            let mut buf = b"[1,".to_vec();
            write_py_float_repr(&mut buf, f);
            assert_eq!(buf, format!("[1,{want}").into_bytes(), "{f:?}");
        }
    }

    #[test]
    fn json_floats_are_python_floats_and_null_for_nan_and_infinities() {
        let mut buf = Vec::new();
        for f in [
            1e16,
            1e-5,
            0.0001,
            -0.0,
            1.5e300,
            5e-324,
            f64::NAN,
            f64::NEG_INFINITY,
        ] {
            write_float(&mut buf, f);
            buf.push(b' ');
        }
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "1e+16 1e-05 0.0001 -0.0 1.5e+300 5e-324 null null "
        );
    }

    #[test]
    fn decimals_print_as_python_prints_them() {
        for (fixed, want) in [
            ("0.0000000000", "0E-10"),
            ("-0.0000000000", "-0E-10"),
            ("4.1250000000", "4.1250000000"),
            ("0.0000001234", "1.234E-7"),
            ("0.0000012340", "0.0000012340"),
            ("12", "12"),
            ("0.50", "0.50"),
        ] {
            assert_eq!(decimal_str(fixed), want, "{fixed}");
        }
    }

    #[test]
    fn stored_date_times_parse_like_sqlalchemy() {
        assert!(parse_datetime(b"2024-03-05T10:11:12").is_none());
        assert!(parse_datetime(b"2024-03-05").is_none());
        assert!(parse_datetime(b"2024-03-05 10:11").is_none());
        let (_, t) = parse_datetime(b"2024-03-05 10:11:12.5").unwrap();
        assert_eq!(t.micro, 5);
        assert!(parse_date(b"2024-02-30").is_none());
        assert_eq!(parse_date(b"2024-3-5x").unwrap().iso(), "2024-03-05");
    }

    /// Python's `repr(float)` as it was first written here, from Rust's `{:e}` (also shortest
    /// round-trip): the reference the ryu-based writer is held to.
    fn repr_from_fmt(f: f64) -> String {
        if !f.is_finite() {
            return py_float_repr(f);
        }
        let sci = format!("{:e}", f.abs());
        let (mantissa, exp) = sci.split_once('e').unwrap();
        let exp: i32 = exp.parse().unwrap();
        let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
        let sign = if f.is_sign_negative() { "-" } else { "" };
        let body = if (-4..16).contains(&exp) {
            if exp < 0 {
                format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
            } else {
                let int_len = exp as usize + 1;
                if digits.len() > int_len {
                    format!("{}.{}", &digits[..int_len], &digits[int_len..])
                } else {
                    format!("{digits}{}.0", "0".repeat(int_len - digits.len()))
                }
            }
        } else {
            let rest = if digits.len() > 1 {
                format!(".{}", &digits[1..])
            } else {
                String::new()
            };
            format!(
                "{}{rest}e{}{:02}",
                &digits[..1],
                if exp < 0 { '-' } else { '+' },
                exp.unsigned_abs()
            )
        };
        format!("{sign}{body}")
    }

    #[test]
    fn the_float_writer_agrees_with_fmt_on_every_kind_of_float() {
        // A fixed xorshift walk over bit patterns (every exponent and mantissa shape), plus
        // each power of ten and its neighbours, and short decimals as a database stores them.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut floats = Vec::new();
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            floats.push(f64::from_bits(x));
        }
        for e in -325..=308 {
            let p: f64 = format!("1e{e}").parse().unwrap();
            floats.extend([
                p,
                f64::from_bits(p.to_bits() + 1),
                f64::from_bits(p.to_bits().saturating_sub(1)),
            ]);
        }
        // Short decimals as a database holds them (the direct path of `short_decimal`), of every
        // length up to 17 digits and 9 places, with the floats either side (which are not).
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = x % 10u64.pow(1 + (x >> 60) as u32 % 17);
            let places = (x >> 40) % 10;
            let f = n as f64 / 10f64.powi(places as i32);
            floats.extend([
                f,
                f64::from_bits(f.to_bits() + 1),
                f64::from_bits(f.to_bits().saturating_sub(1)),
            ]);
        }
        for cents in 0..20_000u32 {
            floats.push(f64::from(cents) / 100.0 + 1.0);
            floats.push(-f64::from(cents) / 1000.0);
        }
        let mut ties = 0;
        for f in floats.into_iter().filter(|f| f.is_finite()) {
            let (ours, fmt) = (py_float_repr(f), repr_from_fmt(f));
            if ours == fmt {
                continue;
            }
            // Where the float lies exactly halfway between two shortest texts, Python (and ryu)
            // take the one whose last digit is even, and `{:e}` may take the other: same
            // length, one unit apart in the last digit, both reading back as the float.
            ties += 1;
            let last = |s: &str| {
                s.trim_end_matches(|c: char| !c.is_ascii_digit())
                    .bytes()
                    .last()
            };
            assert_eq!(ours.len(), fmt.len(), "{f:?}: {ours} vs {fmt}");
            assert_eq!(ours.parse::<f64>().unwrap(), f, "{ours}");
            assert_eq!(fmt.parse::<f64>().unwrap(), f, "{fmt}");
            let (a, b) = (last(&ours).unwrap(), last(&fmt).unwrap());
            assert!(a % 2 == 0 && a.abs_diff(b) == 1, "{f:?}: {ours} vs {fmt}");
        }
        // Ties are rare: a fraction of a percent of these floats.
        assert!(ties < 1000, "{ties} ties");
    }

    /// Every reflected type with every serializer (the combinations the engine makes and the
    /// ones it does not), so the direct writer is held to the general path everywhere.
    fn every_column_type() -> Vec<ColumnType> {
        let reflected = [
            Reflected::Integer,
            Reflected::Float,
            Reflected::Numeric { scale: 2 },
            Reflected::Numeric { scale: 10 },
            Reflected::Boolean,
            Reflected::Date,
            Reflected::DateTime,
            Reflected::Time,
            Reflected::String,
            Reflected::Json,
            Reflected::Blob,
            Reflected::Untyped,
        ];
        let serializers = [Serializer::Value, Serializer::DateTime, Serializer::Text];
        reflected
            .iter()
            .flat_map(|&reflected| {
                serializers.iter().map(move |&serializer| ColumnType {
                    reflected,
                    serializer,
                    filter: FilterFamily::Text,
                    search: Search::Skip,
                })
            })
            .collect()
    }

    #[test]
    fn direct_writes_are_the_general_paths_bytes() {
        let texts: Vec<&[u8]> = vec![
            b"",
            b"plain",
            b"Krak\xc3\xb3w",
            b"bad \xff utf-8",
            b"quote \" and \\ and \n",
            b"2024-02-29",
            b"2023-02-29",
            b"0000-01-01",
            b"9999-12-31",
            b"2024-1-05",
            b"2024-01-05 ",
            b"2024-01-01 00:10:31",
            b"2024-01-01T00:10:31",
            b"2024-01-01  00:10:31",
            b"2024-01-01 24:00:00",
            b"2024-01-01 23:59:60",
            b"2024-01-01 23:59:59.000000",
            b"2024-01-01 23:59:59.000250",
            b"2024-01-01 23:59:59.25",
            b"2024-01-01 23:59:59.1234567",
            b"2024-01-01 23:59:59.",
            b"2024-01-01 23:59:59x",
            b"2024-13-01 00:00:00",
            b"12:30:00",
            b"57.5",
        ];
        let mut values: Vec<Stored<'_>> = vec![
            Stored::Null,
            Stored::Integer(0),
            Stored::Integer(-7),
            Stored::Integer(i64::MAX),
            Stored::Integer(i64::MIN),
            Stored::Real(57.0),
            Stored::Real(-0.0),
            Stored::Real(1e16),
            Stored::Real(1.5e-5),
            Stored::Real(88378.12),
            Stored::Real(f64::NAN),
            Stored::Real(f64::INFINITY),
            Stored::Blob(b"\x00\x01bytes"),
        ];
        values.extend(texts.iter().map(|t| Stored::Text(t)));
        values.extend(texts.iter().map(|t| Stored::Blob(t)));
        let mut direct_cases = 0;
        for ty in every_column_type() {
            for &v in &values {
                let mut general = b"[".to_vec();
                let general_ok = write_through_python(&mut general, ty, v);
                let mut direct = b"[".to_vec();
                if write_direct(&mut direct, ty.value_writer(), v) {
                    direct_cases += 1;
                    assert_eq!(
                        String::from_utf8_lossy(&direct),
                        String::from_utf8_lossy(&general),
                        "{ty:?} {v:?}"
                    );
                    assert!(general_ok, "{ty:?} {v:?}: the engine cannot read it");
                } else {
                    assert_eq!(direct, b"[", "{ty:?} {v:?}: nothing written when left");
                }
                let mut both = b"[".to_vec();
                assert_eq!(write_field(&mut both, ty, v), general_ok, "{ty:?} {v:?}");
                assert_eq!(both, general, "{ty:?} {v:?}");
            }
        }
        // The direct path is taken for the common cases, not left to the general one.
        assert!(direct_cases > 200, "{direct_cases}");
    }
}
