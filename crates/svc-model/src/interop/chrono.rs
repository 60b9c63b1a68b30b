//! [chrono](https://docs.rs/chrono)'s `DateTime` and `NaiveDate` (feature `chrono`): conversions
//! with [`Timestamp`], filter values, and `serde` helpers in the service's forms (see
//! [`interop`](super)).
//!
//! ```
//! use chrono::{DateTime, NaiveDate, Utc};
//! use svc_model::Timestamp;
//!
//! let t = Timestamp::parse_rfc3339("2024-03-05T10:11:12.25Z")?;
//! let utc: DateTime<Utc> = t.into();
//! assert_eq!(Timestamp::try_from(utc)?, t);
//!
//! #[derive(serde::Deserialize)]
//! struct Order {
//!     #[serde(with = "svc_model::interop::chrono::option_date_time")]
//!     shipped_at: Option<DateTime<Utc>>,
//!     #[serde(with = "svc_model::interop::chrono::date")]
//!     due: NaiveDate,
//! }
//! let order: Order = serde_json::from_str(r#"{"shipped_at": null, "due": "2024-04-01"}"#)?;
//! assert_eq!((order.shipped_at, order.due), (None, NaiveDate::from_ymd_opt(2024, 4, 1).unwrap()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use ::chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc};

use super::{Ymd, date_serde, instant_serde};
use crate::records::FilterValue;
use crate::{InvalidTimestamp, Timestamp};

impl From<Timestamp> for DateTime<Utc> {
    fn from(t: Timestamp) -> Self {
        // Years 0000 to 9999 are well inside chrono's range: the fallback is never taken.
        DateTime::from_timestamp(t.unix_seconds(), t.subsec_nanos()).unwrap_or(DateTime::UNIX_EPOCH)
    }
}

impl<Tz: TimeZone> TryFrom<DateTime<Tz>> for Timestamp {
    type Error = InvalidTimestamp;

    /// The same instant; an error outside years 0000 to 9999 (UTC). A leap second is read as
    /// the first instant of the next second.
    fn try_from(value: DateTime<Tz>) -> Result<Self, InvalidTimestamp> {
        super::instant(value.timestamp(), value.timestamp_subsec_nanos())
    }
}

impl<Tz: TimeZone> FilterValue for DateTime<Tz> {
    /// The instant in UTC with microseconds ([`Timestamp::to_record_text`]). One outside years
    /// 0000 to 9999 is sent in chrono's own form, which the service refuses with a `400`.
    fn to_query_text(&self) -> String {
        super::forms::instant_query_text(Timestamp::try_from(self.clone()), || {
            format!("{:?}", self.with_timezone(&Utc))
        })
    }
}

fn ymd(date: &NaiveDate) -> Ymd {
    // Months and days fit a u8.
    Ymd {
        year: date.year(),
        month: u8::try_from(date.month()).unwrap_or(0),
        day: u8::try_from(date.day()).unwrap_or(0),
    }
}

fn naive_date(date: Ymd) -> Result<NaiveDate, String> {
    NaiveDate::from_ymd_opt(date.year, u32::from(date.month), u32::from(date.day))
        .ok_or_else(|| format!("{} is not a day of the calendar", date.text()))
}

instant_serde!(
    ::chrono::DateTime<::chrono::Utc>,
    "chrono::DateTime<Utc>",
    |value: &::chrono::DateTime<::chrono::Utc>| crate::Timestamp::try_from(*value),
    |instant: crate::Timestamp| Ok::<_, String>(::chrono::DateTime::<::chrono::Utc>::from(instant))
);
date_serde!(
    ::chrono::NaiveDate,
    "chrono::NaiveDate",
    super::ymd,
    super::naive_date
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_convert_both_ways_within_the_services_years() {
        for text in super::super::forms::EDGES {
            let t = Timestamp::parse_rfc3339(text).unwrap();
            let utc = DateTime::<Utc>::from(t);
            assert_eq!(Timestamp::try_from(utc).unwrap(), t, "{text}");
        }
        let far = NaiveDate::from_ymd_opt(10_000, 1, 1)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap()
            .and_utc();
        assert!(Timestamp::try_from(far).is_err());
        let offset = DateTime::parse_from_rfc3339("2024-03-05T12:11:12+02:00").unwrap();
        assert_eq!(offset.to_query_text(), "2024-03-05T10:11:12Z");
    }
}
