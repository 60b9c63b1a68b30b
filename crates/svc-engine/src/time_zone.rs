//! The `tz` parameter, as the engine reads it: a time zone its view sets on the database
//! session before it runs any request (`apply_timezone`). Each database does something else
//! with it, so each backend decides (`docs/contract.md`):
//!
//! - SQLite: nothing (the engine sets no time zone there): the parameter changes no answer;
//! - PostgreSQL: `SET TIME ZONE` with the offset in hours that dateparser reads from it; a
//!   zone it cannot read (`Europe/Paris`, `nonsense`) makes the engine fail (500);
//! - MySQL: `SET time_zone`, which MySQL keeps on the pooled connection for later requests
//!   (silently answering them in that zone), and which relabels values the engine then writes
//!   with the database's own offset.

use crate::EngineError;
use crate::list::Selection;

/// The parameter's name.
pub const TZ_PARAM: &str = "tz";

/// The `tz` a request gives: the last value, stripped (Python's `str.strip()`), as the
/// engine's `get_argument` reads it, empty included (on PostgreSQL the engine fails on an
/// empty one). Read from the query only, whatever the method.
pub fn tz_given(selection: &Selection) -> Option<&str> {
    selection
        .filters
        .iter()
        .rev()
        .find(|(k, _)| k == TZ_PARAM)
        .map(|(_, v)| crate::python::numbers::py_strip(v))
}

/// The `tz` a request gives, an empty one being none.
pub fn tz_of(selection: &Selection) -> Option<&str> {
    tz_given(selection).filter(|v| !v.is_empty())
}

/// The UTC offsets, in minutes, that dateparser (1.1, the engine's) reads at the end of a
/// date-time: the offsets of its time zone table, no others (`-05:30`, `+00:30` and `+01:30`
/// are none of them, and the engine fails on them). Read from the engine's venv by parsing
/// `2026-01-05T10:00:00` followed by every offset from -15:00 to +15:00, minute by minute, in
/// both forms (`+HH:MM`, `+HHMM`): both forms give the same set, and each value is the offset.
pub const DATEPARSER_OFFSETS: [i32; 41] = [
    -720, -660, -600, -570, -540, -480, -420, -360, -300, -270, -240, -210, -180, -150, -120, -60,
    0, 60, 120, 180, 210, 240, 270, 300, 330, 345, 360, 390, 420, 480, 525, 540, 570, 600, 630,
    660, 690, 720, 765, 780, 840,
];

/// The UTC offset, in seconds, that the engine reads from a `tz` value (dateparser's reading of
/// an ISO date-time with the value appended): `UTC`, `GMT` or `Z` (any case) is 0; `+HH:MM` and
/// `+HHMM` (or `-`) where dateparser knows the offset ([`DATEPARSER_OFFSETS`]). `None` for
/// anything else, where the engine fails (a zone name, `+02`, `-05:30`).
pub fn tz_offset(value: &str) -> Option<i32> {
    if ["utc", "gmt", "z"].contains(&value.to_ascii_lowercase().as_str()) {
        return Some(0);
    }
    let (sign, rest) = match value.as_bytes().first()? {
        b'+' => (1, &value[1..]),
        b'-' => (-1, &value[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|&c| c != ':').collect();
    let well_formed = digits.len() == 4
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (rest.len() == 4 || (rest.len() == 5 && rest.as_bytes()[2] == b':'));
    if !well_formed {
        return None;
    }
    let hours: i32 = digits[..2].parse().ok()?;
    let minutes: i32 = digits[2..].parse().ok()?;
    let offset = sign * (hours * 60 + minutes);
    DATEPARSER_OFFSETS.contains(&offset).then_some(offset * 60)
}

/// [decision: stricter] `tz` on a create, an update or a delete where the engine sets it: the
/// engine commits the session's zone with the write, and its pooled connection answers later
/// requests in that zone.
pub fn tz_on_write() -> EngineError {
    EngineError::stricter(
        TZ_PARAM,
        "tz on a create, an update or a delete: the data engine keeps that time zone on its \
         database connection, which then answers later requests in it. Send tz with reads only.",
    )
}

/// The engine's failure on a `tz` it cannot read.
pub fn unreadable_tz(value: &str, lenient: bool) -> EngineError {
    EngineError::engine_fails(
        lenient,
        TZ_PARAM,
        format!(
            "tz={value:?} is no UTC offset the data engine reads (it fails with a 500): give \
             UTC, or +HH:MM or -HH:MM of a real time zone (dateparser does not read -05:30)."
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_read_as_the_engine_reads_them() {
        // As the engine answered on PostgreSQL 15.
        assert_eq!(tz_offset("+02:00"), Some(7200));
        assert_eq!(tz_offset("+0200"), Some(7200));
        assert_eq!(tz_offset("+05:30"), Some(19800));
        assert_eq!(tz_offset("-05:00"), Some(-18000));
        assert_eq!(tz_offset("+14:00"), Some(50400));
        assert_eq!(tz_offset("-03:30"), Some(-12600));
        assert_eq!(tz_offset("+1245"), Some(45900));
        assert_eq!(tz_offset("-00:00"), Some(0));
        assert_eq!(tz_offset("UTC"), Some(0));
        assert_eq!(tz_offset("utc"), Some(0));
        assert_eq!(tz_offset("GMT"), Some(0));
        assert_eq!(tz_offset("Z"), Some(0));
        for failing in [
            "+02",
            "-00:30",
            "Europe/Berlin",
            "nonsense",
            "+2:00",
            "02:00",
            // Offsets dateparser's time zone table does not have.
            "-05:30",
            "+00:30",
            "+01:30",
            "-12:30",
            "+14:15",
            "+15:00",
            "+02:07",
        ] {
            assert_eq!(tz_offset(failing), None, "{failing}");
        }
    }

    #[test]
    fn the_last_non_empty_tz_counts() {
        let selection = |values: &[&str]| Selection {
            filters: values
                .iter()
                .map(|v| (TZ_PARAM.to_owned(), (*v).to_owned()))
                .collect(),
            search: Vec::new(),
            lenient: false,
            body: Vec::new(),
        };
        assert_eq!(tz_of(&selection(&["+01:00", "+02:00"])), Some("+02:00"));
        assert_eq!(tz_of(&selection(&[" +02:00\u{3000}"])), Some("+02:00"));
        assert_eq!(tz_given(&selection(&[" "])), Some(""));
        assert_eq!(tz_of(&selection(&[""])), None);
        assert_eq!(tz_given(&selection(&[""])), Some(""));
        assert_eq!(tz_of(&selection(&[])), None);
    }
}
