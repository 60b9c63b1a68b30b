//! [jiff](https://docs.rs/jiff)'s `Timestamp` and `civil::Date` (feature `jiff`): conversions
//! with this crate's [`Timestamp`], filter values, and `serde` helpers in the service's forms
//! (see [`interop`](super)).
//!
//! ```
//! use svc_model::Timestamp;
//!
//! let t = Timestamp::parse_rfc3339("2024-03-05T10:11:12.25Z")?;
//! let j = jiff::Timestamp::try_from(t)?;
//! assert_eq!(j.as_second(), t.unix_seconds());
//! assert_eq!(Timestamp::try_from(j)?, t);
//!
//! #[derive(serde::Deserialize)]
//! struct Order {
//!     #[serde(with = "svc_model::interop::jiff::date_time")]
//!     placed_at: jiff::Timestamp,
//! }
//! let order: Order = serde_json::from_str(r#"{"placed_at": "2024-03-05T12:11:12.25+02:00"}"#)?;
//! assert_eq!(order.placed_at, j);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ::jiff::civil::Date;

use super::{Ymd, date_serde, instant_serde};
use crate::records::FilterValue;
use crate::{InvalidTimestamp, Timestamp};

impl TryFrom<Timestamp> for ::jiff::Timestamp {
    type Error = ::jiff::Error;

    /// The same instant. jiff's range ends a day short of this crate's at either end
    /// (`-009999-01-02T01:59:59Z` to `9999-12-30T22:00:00.999999999Z`): an instant of the last
    /// day of year 9999 after that is an error.
    fn try_from(t: Timestamp) -> Result<Self, Self::Error> {
        let nanos = i128::from(t.unix_seconds()) * 1_000_000_000 + i128::from(t.subsec_nanos());
        ::jiff::Timestamp::from_nanosecond(nanos)
    }
}

impl TryFrom<::jiff::Timestamp> for Timestamp {
    type Error = InvalidTimestamp;

    /// The same instant; an error outside years 0000 to 9999 (UTC).
    fn try_from(value: ::jiff::Timestamp) -> Result<Self, InvalidTimestamp> {
        let nanos = value.as_nanosecond();
        let secs = i64::try_from(nanos.div_euclid(1_000_000_000))
            .map_err(|_| InvalidTimestamp::out_of_range())?;
        // In 0..1e9.
        let subsec = u32::try_from(nanos.rem_euclid(1_000_000_000)).unwrap_or(0);
        super::instant(secs, subsec)
    }
}

impl FilterValue for ::jiff::Timestamp {
    /// The instant in UTC with microseconds ([`Timestamp::to_record_text`]). One outside years
    /// 0000 to 9999 is sent in jiff's own form, which the service refuses with a `400`.
    fn to_query_text(&self) -> String {
        super::forms::instant_query_text(Timestamp::try_from(*self), || self.to_string())
    }
}

fn ymd(date: &Date) -> Ymd {
    // A civil date's month and day are positive.
    Ymd {
        year: i32::from(date.year()),
        month: u8::try_from(date.month()).unwrap_or(0),
        day: u8::try_from(date.day()).unwrap_or(0),
    }
}

fn date(date: Ymd) -> Result<Date, String> {
    let bad = || format!("{} is not a day of the calendar", date.text());
    let year = i16::try_from(date.year).map_err(|_| bad())?;
    let month = i8::try_from(date.month).map_err(|_| bad())?;
    let day = i8::try_from(date.day).map_err(|_| bad())?;
    Date::new(year, month, day).map_err(|_| bad())
}

instant_serde!(
    ::jiff::Timestamp,
    "jiff::Timestamp",
    |value: &::jiff::Timestamp| crate::Timestamp::try_from(*value),
    |instant: crate::Timestamp| ::jiff::Timestamp::try_from(instant)
        .map_err(|e: ::jiff::Error| e.to_string())
);
date_serde!(
    ::jiff::civil::Date,
    "jiff::civil::Date",
    super::ymd,
    super::date
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_convert_both_ways_within_the_services_years() {
        for text in [
            "0000-01-01T00:00:00Z",
            "1969-12-31T23:59:59.999999999Z",
            "9999-12-30T22:00:00.999999999Z",
        ] {
            let t = Timestamp::parse_rfc3339(text).unwrap();
            let j = ::jiff::Timestamp::try_from(t).unwrap();
            assert_eq!(Timestamp::try_from(j).unwrap(), t, "{text}");
        }
        // The last hours of year 9999 are beyond jiff.
        assert!(::jiff::Timestamp::try_from(Timestamp::MAX).is_err());
        assert!(Timestamp::try_from(::jiff::Timestamp::MIN).is_err());
        assert_eq!(
            Date::new(2024, 2, 29).unwrap().to_query_text(),
            "2024-02-29"
        );
        assert!(
            date(Ymd {
                year: 2023,
                month: 2,
                day: 29
            })
            .is_err()
        );
    }
}
