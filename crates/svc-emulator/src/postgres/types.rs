//! How the data engine sees a PostgreSQL column, and how it writes the values it reads.
//!
//! The engine reflects a table with SQLAlchemy 1.4's PostgreSQL dialect, reads values through
//! psycopg2, and writes each in a record with the serializer field it picks by `str(type)`
//! (the same table as on SQLite, see [`crate::engine::types`]). On PostgreSQL that gives:
//!
//! | Column type | Record value | Filter family | `_search` |
//! | --- | --- | --- | --- |
//! | `smallint`, `integer`, `bigint` | JSON number | number | text equal |
//! | `double precision` | JSON number (Python's float form, NaN as `null`) | number | text equal |
//! | `real` | text: `str(float)`, `"1.5"` | number | text equal |
//! | `numeric`, `numeric(p, s)` | text: `str(Decimal)`, `"20.50"` | number | text equal |
//! | `boolean` | `true` / `false` | boolean | no |
//! | `date` | text `"2024-01-05"` | date | no |
//! | `timestamp`, `timestamptz` | ISO 8601 with the offset of the database's time zone, `"2024-01-05T10:00:00+00:00"` | date-time | no |
//! | `text`, `varchar`, `char`, enums | text | text | contains (`ILIKE`) |
//! | `json`, `jsonb` | JSON | JSON | contains (the text) |
//! | arrays | JSON array | JSON | no |
//! | anything else (`uuid`, `time`, `interval`, ...) | PostgreSQL's text | text | no |
//!
//! Values are read from PostgreSQL as text (`col::text`, arrays as `to_json(col)`), with the
//! session's `DateStyle` set to ISO and shortest-exact floats, and turned into the engine's
//! forms here.

use crate::engine::convert::{InputField, write_json_str};
use crate::engine::types::{FilterFamily, Search, decimal_str, py_float_repr, write_float};

/// What the engine makes of a PostgreSQL column type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum PgKind {
    /// `smallint`, `integer`, `bigint`.
    Integer,
    /// `real` (`float4`): a Python float written as text.
    Real,
    /// `double precision` (`float8`).
    Double,
    /// `numeric`: a `Decimal` written as text.
    Numeric,
    /// `boolean`.
    Boolean,
    /// `date`.
    Date,
    /// `timestamp without time zone`.
    Timestamp,
    /// `timestamp with time zone`.
    TimestampTz,
    /// `text`, `varchar`, `char`, `name`, `citext`.
    String,
    /// An enum type: a SQLAlchemy `String` written as text, cast to text in `ILIKE`.
    Enum,
    /// `json`, `jsonb`.
    Json,
    /// An array of any element type.
    Array,
    /// Any other type: PostgreSQL's text form.
    Other,
}

impl PgKind {
    /// The kind of a column from `pg_type`: its name, its category (`typcategory`) and
    /// whether it is an array.
    pub(crate) fn of(type_name: &str, category: char) -> PgKind {
        if category == 'A' {
            return PgKind::Array;
        }
        if category == 'E' {
            return PgKind::Enum;
        }
        match type_name {
            "int2" | "int4" | "int8" => PgKind::Integer,
            "float4" => PgKind::Real,
            "float8" => PgKind::Double,
            "numeric" => PgKind::Numeric,
            "bool" => PgKind::Boolean,
            "date" => PgKind::Date,
            "timestamp" => PgKind::Timestamp,
            "timestamptz" => PgKind::TimestampTz,
            "text" | "varchar" | "bpchar" | "name" | "citext" => PgKind::String,
            "json" | "jsonb" => PgKind::Json,
            _ => PgKind::Other,
        }
    }

    /// The engine's filter family of the column.
    pub(crate) fn family(self) -> FilterFamily {
        match self {
            PgKind::Integer | PgKind::Real | PgKind::Double | PgKind::Numeric => {
                FilterFamily::Number
            }
            PgKind::Boolean => FilterFamily::Boolean,
            PgKind::Date => FilterFamily::Date,
            PgKind::Timestamp | PgKind::TimestampTz => FilterFamily::DateTime,
            PgKind::Json | PgKind::Array => FilterFamily::Json,
            PgKind::String | PgKind::Enum | PgKind::Other => FilterFamily::Text,
        }
    }

    /// How `_search` looks at the column.
    pub(crate) fn search(self) -> Search {
        match self {
            PgKind::Integer | PgKind::Real | PgKind::Double | PgKind::Numeric => Search::Equal,
            PgKind::String | PgKind::Enum | PgKind::Json => Search::Contains,
            _ => Search::Skip,
        }
    }

    /// The serializer field that reads a body value for the column.
    pub(crate) fn input(self) -> InputField {
        match self {
            PgKind::Integer => InputField::Integer,
            PgKind::Double => InputField::Float,
            PgKind::Boolean => InputField::Boolean,
            PgKind::Timestamp | PgKind::TimestampTz => InputField::DateTime,
            PgKind::Json | PgKind::Array => InputField::Json,
            _ => InputField::Char,
        }
    }

    /// Whether SQLAlchemy types the column as a `String` (`isempty` also matches `''`).
    pub(crate) fn is_string(self) -> bool {
        matches!(self, PgKind::String | PgKind::Enum)
    }

    /// The select expression that reads the column `col` (quoted) as text.
    pub(crate) fn select(self, col: &str) -> String {
        match self {
            PgKind::Array => format!("to_json({col})::text"),
            _ => format!("{col}::text"),
        }
    }
}

/// A UTC offset in seconds, east positive: the engine's default time zone, which it takes
/// from `SELECT NOW()` on the database, and attaches to every date-time it writes.
pub(crate) type Offset = i32;

/// Writes a value read as PostgreSQL text (`None`: NULL) as the engine writes it in a record.
pub(crate) fn write_value(buf: &mut Vec<u8>, kind: PgKind, text: Option<&str>, tz: Offset) {
    let Some(text) = text else {
        buf.extend_from_slice(b"null");
        return;
    };
    match kind {
        PgKind::Integer => buf.extend_from_slice(text.as_bytes()),
        // `bool::text` is `true`; the output function (simple queries) says `t`.
        PgKind::Boolean => buf.extend_from_slice(if matches!(text, "t" | "true") {
            b"true"
        } else {
            b"false"
        }),
        PgKind::Double => write_float(buf, parse_float(text)),
        PgKind::Real => write_json_str(buf, &py_float_repr(parse_float(text))),
        PgKind::Numeric => write_json_str(buf, &numeric_str(text)),
        PgKind::Timestamp => write_json_str(buf, &iso_timestamp(text, Some(tz))),
        PgKind::TimestampTz => write_json_str(buf, &iso_timestamp(text, None)),
        PgKind::Json | PgKind::Array => write_json_text(buf, text),
        PgKind::Date | PgKind::String | PgKind::Enum | PgKind::Other => write_json_str(buf, text),
    }
}

/// PostgreSQL's float text (`1.5`, `NaN`, `-Infinity`, `1e+20`).
pub(crate) fn parse_float(text: &str) -> f64 {
    match text {
        "NaN" => f64::NAN,
        "Infinity" => f64::INFINITY,
        "-Infinity" => f64::NEG_INFINITY,
        other => other.parse().unwrap_or(f64::NAN),
    }
}

/// `str(Decimal(text))` of PostgreSQL's numeric text.
pub(crate) fn numeric_str(text: &str) -> String {
    match text {
        "NaN" => "NaN".to_owned(),
        "Infinity" => "Infinity".to_owned(),
        "-Infinity" => "-Infinity".to_owned(),
        other => decimal_str(other),
    }
}

/// JSON text from PostgreSQL, written again (psycopg2 parses it, the engine encodes it).
fn write_json_text(buf: &mut Vec<u8>, text: &str) {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => {
            let _ = serde_json::to_writer(&mut *buf, &v);
        }
        Err(_) => write_json_str(buf, text),
    }
}

/// A date-time from PostgreSQL's ISO text (`2024-01-05 10:00:00.5`, with `+05:30` for
/// `timestamptz`) as Python's `isoformat()`: `T`, six digits of microseconds when not zero,
/// and the offset (`tz` for a naive value, the engine's default time zone).
pub(crate) fn iso_timestamp(text: &str, tz: Option<Offset>) -> String {
    let (date, rest) = text.split_once(' ').unwrap_or((text, "00:00:00"));
    // The time runs to the first sign after its digits: `10:00:00.5+05:30`.
    let sign_at = rest.find(['+', '-']).unwrap_or(rest.len());
    let (time, offset) = rest.split_at(sign_at);
    let mut out = String::with_capacity(32);
    out.push_str(date);
    out.push('T');
    out.push_str(&iso_time(time));
    let seconds = if offset.is_empty() {
        tz
    } else {
        parse_offset(offset)
    };
    if let Some(seconds) = seconds {
        out.push_str(&offset_text(seconds));
    }
    out
}

/// `HH:MM:SS[.ffffff]`: PostgreSQL drops trailing zeros of the fraction, Python keeps six
/// digits (and none when the microseconds are zero).
pub(crate) fn iso_time(time: &str) -> String {
    match time.split_once('.') {
        Some((whole, fraction)) => {
            let digits: String = fraction
                .chars()
                .chain(std::iter::repeat('0'))
                .take(6)
                .collect();
            if digits == "000000" {
                whole.to_owned()
            } else {
                format!("{whole}.{digits}")
            }
        }
        None => time.to_owned(),
    }
}

/// `+05:30`, `-03`, `+00:53:28` as seconds east of UTC.
fn parse_offset(text: &str) -> Option<Offset> {
    let (sign, digits) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let mut seconds = 0;
    for (i, part) in digits.split(':').enumerate() {
        let n: i32 = part.parse().ok()?;
        seconds += n * [3600, 60, 1].get(i)?;
    }
    Some(sign * seconds)
}

/// Python's `isoformat()` of a UTC offset: `+HH:MM`, with `:SS` when there are seconds.
pub(crate) fn offset_text(seconds: Offset) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let s = seconds.unsigned_abs();
    let (h, m, sec) = (s / 3600, s / 60 % 60, s % 60);
    if sec == 0 {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}:{m:02}:{sec:02}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(kind: PgKind, text: Option<&str>) -> String {
        let mut buf = Vec::new();
        write_value(&mut buf, kind, text, 0);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn values_are_written_as_the_engine_writes_them() {
        assert_eq!(written(PgKind::Integer, Some("42")), "42");
        assert_eq!(written(PgKind::Integer, None), "null");
        assert_eq!(written(PgKind::Double, Some("3")), "3.0");
        assert_eq!(written(PgKind::Double, Some("1e+20")), "1e+20");
        assert_eq!(written(PgKind::Double, Some("NaN")), "null");
        assert_eq!(written(PgKind::Real, Some("1.5")), "\"1.5\"");
        assert_eq!(written(PgKind::Numeric, Some("20.50")), "\"20.50\"");
        assert_eq!(written(PgKind::Numeric, Some("0.0000001")), "\"1E-7\"");
        assert_eq!(written(PgKind::Boolean, Some("t")), "true");
        assert_eq!(written(PgKind::Date, Some("2024-01-05")), "\"2024-01-05\"");
        assert_eq!(
            written(PgKind::Timestamp, Some("2024-01-05 10:00:00.5")),
            "\"2024-01-05T10:00:00.500000+00:00\""
        );
        assert_eq!(
            written(PgKind::TimestampTz, Some("2024-01-05 10:00:00+05:30")),
            "\"2024-01-05T10:00:00+05:30\""
        );
        assert_eq!(
            written(PgKind::Json, Some("{\"a\": [1, 2.5]}")),
            "{\"a\":[1,2.5]}"
        );
        assert_eq!(
            written(PgKind::String, Some("Zoë \"q\"")),
            "\"Zoë \\\"q\\\"\""
        );
    }

    #[test]
    fn offsets_read_and_print_like_python() {
        assert_eq!(parse_offset("+05:30"), Some(19_800));
        assert_eq!(parse_offset("-03"), Some(-10_800));
        assert_eq!(parse_offset("+00:53:28"), Some(3208));
        assert_eq!(offset_text(0), "+00:00");
        assert_eq!(offset_text(-10_800), "-03:00");
        assert_eq!(offset_text(3208), "+00:53:28");
        assert_eq!(
            iso_timestamp("2024-01-05 10:00:00", Some(3600)),
            "2024-01-05T10:00:00+01:00"
        );
    }

    #[test]
    fn kinds_follow_the_type_names() {
        assert_eq!(PgKind::of("int8", 'N'), PgKind::Integer);
        assert_eq!(PgKind::of("_int4", 'A'), PgKind::Array);
        assert_eq!(PgKind::of("mood", 'E'), PgKind::Enum);
        assert_eq!(PgKind::of("uuid", 'U'), PgKind::Other);
        assert_eq!(PgKind::Numeric.family(), FilterFamily::Number);
        assert_eq!(PgKind::Json.search(), Search::Contains);
    }
}
