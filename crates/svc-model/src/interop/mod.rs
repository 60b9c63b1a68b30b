//! The date, time and decimal types of other crates, each behind a feature of the same name:
//! conversions with [`Timestamp`](crate::Timestamp) and [`Decimal`](crate::Decimal), filter values
//! ([`FilterValue`](crate::records::FilterValue)), and `serde` helpers that read and write the
//! forms the service uses in records.
//!
//! | Feature | Module | Types |
//! | --- | --- | --- |
//! | `chrono` | `interop::chrono` | `DateTime<Tz>` (written in UTC), `DateTime<Utc>`, `NaiveDate` |
//! | `time` | `interop::time` | `OffsetDateTime`, `Date` |
//! | `jiff` | `interop::jiff` | `jiff::Timestamp`, `civil::Date` |
//! | `rust_decimal` | `interop::rust_decimal` | `rust_decimal::Decimal` |
//!
//! The forms, for every library alike:
//!
//! - **Date-times** are read as the service writes them: RFC 3339 with `Z` or an offset, or
//!   without an offset (SQLite's `DATETIME`, PostgreSQL's `timestamp`), read as UTC
//!   ([`Timestamp::from_record_text`](crate::Timestamp::from_record_text)). They are written in UTC with microseconds, the
//!   service's precision: `2024-03-05T10:11:12.123456Z` ([`Timestamp::to_record_text`](crate::Timestamp::to_record_text)).
//!   Digits beyond the microsecond are dropped.
//! - **Dates** are `YYYY-MM-DD`, read and written.
//! - **Decimals** are read from a JSON string (`"88378.0000000000"`, the service's form for
//!   `NUMERIC` and `REAL` columns) or a JSON number, and written as a JSON string of the
//!   exact text.
//!
//! Each serde helper has an `option_` twin for nullable columns (`null` is `None`).
#![cfg_attr(
    feature = "chrono",
    doc = r##"
```
use chrono::{DateTime, Utc};
use svc_model::records::ListQuery;

#[derive(serde::Serialize, serde::Deserialize)]
struct Order {
    id: i64,
    #[serde(with = "svc_model::interop::chrono::date_time")]
    placed_at: DateTime<Utc>,
}

// SQLite's form, no offset: read as UTC.
let order: Order = serde_json::from_str(r#"{"id": 1, "placed_at": "2024-03-05T10:11:12.5"}"#)?;
assert_eq!(order.placed_at.to_rfc3339(), "2024-03-05T10:11:12.500+00:00");
assert_eq!(
    serde_json::to_string(&order)?,
    r#"{"id":1,"placed_at":"2024-03-05T10:11:12.500000Z"}"#
);
// As a filter value too.
let recent = ListQuery::new().filter("placed_at", svc_model::records::Lookup::Gte, order.placed_at);
assert_eq!(recent.to_pairs()[0].1, "2024-03-05T10:11:12.500000Z");
# Ok::<(), serde_json::Error>(())
```
"##
)]

#[cfg(feature = "chrono")]
#[cfg_attr(docsrs, doc(cfg(feature = "chrono")))]
pub mod chrono;
#[cfg(feature = "jiff")]
#[cfg_attr(docsrs, doc(cfg(feature = "jiff")))]
pub mod jiff;
#[cfg(feature = "rust_decimal")]
#[cfg_attr(docsrs, doc(cfg(feature = "rust_decimal")))]
pub mod rust_decimal;
#[cfg(feature = "time")]
#[cfg_attr(docsrs, doc(cfg(feature = "time")))]
pub mod time;

// The date and instant forms the three date-time libraries share.
#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
mod forms;
#[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
use forms::{Ymd, date_serde, instant, instant_serde};
