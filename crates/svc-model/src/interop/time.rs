//! [time](https://docs.rs/time)'s `OffsetDateTime` and `Date` (feature `time`): conversions with
//! [`Timestamp`], filter values, and `serde` helpers in the service's forms (see
//! [`interop`](super)).
//!
//! ```
//! use svc_model::Timestamp;
//! use time::OffsetDateTime;
//!
//! let t = Timestamp::parse_rfc3339("2024-03-05T10:11:12.25Z")?;
//! let odt: OffsetDateTime = t.into();
//! assert_eq!(odt.unix_timestamp(), t.unix_seconds());
//! assert_eq!(Timestamp::try_from(odt)?, t);
//!
//! #[derive(serde::Deserialize)]
//! struct Order {
//!     #[serde(with = "svc_model::interop::time::date_time")]
//!     placed_at: OffsetDateTime,
//! }
//! let order: Order = serde_json::from_str(r#"{"placed_at": "2024-03-05T10:11:12.250"}"#)?;
//! assert_eq!(order.placed_at, odt);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ::time::{Date, Month, OffsetDateTime};

use super::{Ymd, date_serde, instant_serde};
use crate::records::FilterValue;
use crate::{InvalidTimestamp, Timestamp};

impl From<Timestamp> for OffsetDateTime {
    /// The same instant, at offset UTC.
    fn from(t: Timestamp) -> Self {
        let nanos = i128::from(t.unix_seconds()) * 1_000_000_000 + i128::from(t.subsec_nanos());
        // Years 0000 to 9999 are inside time's range: the fallback is never taken.
        OffsetDateTime::from_unix_timestamp_nanos(nanos).unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }
}

impl TryFrom<OffsetDateTime> for Timestamp {
    type Error = InvalidTimestamp;

    /// The same instant; an error outside years 0000 to 9999 (UTC).
    fn try_from(value: OffsetDateTime) -> Result<Self, InvalidTimestamp> {
        super::instant(value.unix_timestamp(), value.nanosecond())
    }
}

impl FilterValue for OffsetDateTime {
    /// The instant in UTC with microseconds ([`Timestamp::to_record_text`]). One outside years
    /// 0000 to 9999 is sent in time's own form, which the service refuses with a `400`.
    fn to_query_text(&self) -> String {
        super::forms::instant_query_text(Timestamp::try_from(*self), || self.to_string())
    }
}

fn ymd(date: &Date) -> Ymd {
    Ymd {
        year: date.year(),
        month: u8::from(date.month()),
        day: date.day(),
    }
}

fn date(date: Ymd) -> Result<Date, String> {
    Month::try_from(date.month)
        .and_then(|month| Date::from_calendar_date(date.year, month, date.day))
        .map_err(|_| format!("{} is not a day of the calendar", date.text()))
}

instant_serde!(
    ::time::OffsetDateTime,
    "time::OffsetDateTime",
    |value: &::time::OffsetDateTime| crate::Timestamp::try_from(*value),
    |instant: crate::Timestamp| Ok::<_, String>(::time::OffsetDateTime::from(instant))
);
date_serde!(::time::Date, "time::Date", super::ymd, super::date);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_convert_both_ways_within_the_services_years() {
        for text in super::super::forms::EDGES {
            let t = Timestamp::parse_rfc3339(text).unwrap();
            assert_eq!(
                Timestamp::try_from(OffsetDateTime::from(t)).unwrap(),
                t,
                "{text}"
            );
        }
        let before = OffsetDateTime::from(Timestamp::MIN) - ::time::Duration::nanoseconds(1);
        assert!(Timestamp::try_from(before).is_err());
        let date = Date::from_calendar_date(812, Month::May, 9).unwrap();
        assert_eq!(date.to_query_text(), "0812-05-09");
    }
}
