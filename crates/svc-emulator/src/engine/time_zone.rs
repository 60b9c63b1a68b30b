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

use crate::engine::EngineError;
use crate::engine::list::Selection;

/// The parameter's name.
pub(crate) const TZ_PARAM: &str = "tz";

/// The `tz` a request gives: the last value, as Tornado's `get_argument` reads it, empty
/// included (on PostgreSQL the engine fails on an empty one).
pub(crate) fn tz_given(selection: &Selection) -> Option<&str> {
    selection
        .filters
        .iter()
        .rev()
        .find(|(k, _)| k == TZ_PARAM)
        .map(|(_, v)| v.as_str())
}

/// The `tz` a request gives, an empty one being none.
pub(crate) fn tz_of(selection: &Selection) -> Option<&str> {
    tz_given(selection).filter(|v| !v.is_empty())
}

/// The UTC offset, in seconds, that the engine reads from a `tz` value (dateparser's reading of
/// an ISO date-time with the value appended): `UTC`, `GMT` or `Z` (any case) is 0; `+HH:MM` and
/// `+HHMM` (or `-`) up to 14 hours. `None` for anything else, where the engine fails (a zone
/// name, `+02`, a negative offset under an hour).
pub(crate) fn tz_offset(value: &str) -> Option<i32> {
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
    if hours > 14 || minutes > 59 || (sign < 0 && hours == 0 && minutes > 0) {
        return None;
    }
    Some(sign * (hours * 3600 + minutes * 60))
}

/// [decision: stricter] `tz` on a create, an update or a delete where the engine sets it: the
/// engine commits the session's zone with the write, and its pooled connection answers later
/// requests in that zone.
pub(crate) fn tz_on_write() -> EngineError {
    EngineError::field(
        TZ_PARAM,
        "tz on a create, an update or a delete: the data engine keeps that time zone on its \
         database connection, which then answers later requests in it. Send tz with reads only.",
    )
}

/// The engine's failure on a `tz` it cannot read.
pub(crate) fn unreadable_tz(value: &str, lenient: bool) -> EngineError {
    EngineError::engine_fails(
        lenient,
        TZ_PARAM,
        format!(
            "tz={value:?} is no UTC offset the data engine reads (it fails with a 500): give \
             +HH:MM, -HH:MM or UTC."
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
        };
        assert_eq!(tz_of(&selection(&["+01:00", "+02:00"])), Some("+02:00"));
        assert_eq!(tz_of(&selection(&[""])), None);
        assert_eq!(tz_given(&selection(&[""])), Some(""));
        assert_eq!(tz_of(&selection(&[])), None);
    }
}
