//! The forms the date-time libraries share: `YYYY-MM-DD` dates and the service's date-time
//! texts, read without copying, and the macros that make each library's `serde` helpers.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serializer};

use crate::Timestamp;

/// Writes an instant in the service's form.
pub(crate) fn write_instant<S: Serializer>(
    instant: Timestamp,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&instant.to_record_text())
}

/// Reads an instant in any of the service's forms, without copying the text.
pub(crate) fn read_instant<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Timestamp, D::Error> {
    deserializer.deserialize_str(TextVisitor {
        expecting: "a date-time text such as 2024-03-05T10:11:12Z",
        read: |text| Timestamp::from_record_text(text).map_err(|e| e.to_string()),
    })
}

/// Reads an optional instant: `null` is `None`.
pub(crate) fn read_option_instant<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Timestamp>, D::Error> {
    Option::<Instant>::deserialize(deserializer).map(|o| o.map(|Instant(t)| t))
}

/// An instant read by [`read_instant`], for `Option`'s deserializer.
struct Instant(Timestamp);

impl<'de> Deserialize<'de> for Instant {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_instant(deserializer).map(Instant)
    }
}

/// A calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ymd {
    pub(crate) year: i32,
    pub(crate) month: u8,
    pub(crate) day: u8,
}

impl Ymd {
    /// `YYYY-MM-DD`, the year padded to four digits (a negative one keeps its sign).
    pub(crate) fn text(self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// Reads `YYYY-MM-DD` (four digits of year, two of month and day; the library that makes
    /// the date checks that the day exists).
    fn parse(text: &str) -> Result<Self, String> {
        let b = text.as_bytes();
        let digits = |range: std::ops::Range<usize>| -> Option<u32> {
            let part = b.get(range)?;
            part.iter()
                .all(u8::is_ascii_digit)
                .then(|| part.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0')))
        };
        let bad = || format!("{text:?} is not a date in the form YYYY-MM-DD");
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return Err(bad());
        }
        let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10))
        else {
            return Err(bad());
        };
        Ok(Self {
            year: i32::try_from(year).map_err(|_| bad())?,
            month: u8::try_from(month).map_err(|_| bad())?,
            day: u8::try_from(day).map_err(|_| bad())?,
        })
    }
}

/// Writes a date as `YYYY-MM-DD`.
pub(crate) fn write_date<S: Serializer>(date: Ymd, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&date.text())
}

/// Reads a `YYYY-MM-DD` date.
pub(crate) fn read_date<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Ymd, D::Error> {
    deserializer.deserialize_str(TextVisitor {
        expecting: "a date text such as 2024-03-05",
        read: Ymd::parse,
    })
}

/// Reads an optional `YYYY-MM-DD` date: `null` is `None`.
pub(crate) fn read_option_date<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Ymd>, D::Error> {
    Option::<DateText>::deserialize(deserializer).map(|o| o.map(|DateText(d)| d))
}

/// A date read by [`read_date`], for `Option`'s deserializer.
struct DateText(Ymd);

impl<'de> Deserialize<'de> for DateText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        read_date(deserializer).map(DateText)
    }
}

/// A visitor of one string, read by `read`.
struct TextVisitor<T> {
    expecting: &'static str,
    read: fn(&str) -> Result<T, String>,
}

impl<T> Visitor<'_> for TextVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
        (self.read)(text).map_err(E::custom)
    }
}

/// The `serde` helper modules of one library's instant type `$ty`, converted to a
/// [`Timestamp`] by `$to` (which may fail: an instant outside years 0000 to 9999) and from one
/// by `$from` (which may fail where the library's range is narrower).
macro_rules! instant_serde {
    ($ty:ty, $name:literal, $to:expr, $from:expr) => {
        /// `#[serde(with = "...")]` on a
        #[doc = concat!("`", $name, "`")]
        /// field: reads the service's date-time forms (with `Z`, an offset, or none for UTC)
        /// and writes `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`.
        pub mod date_time {
            use serde::{Deserializer, Serializer};

            /// Writes the instant in UTC with microseconds.
            pub fn serialize<S: Serializer>(value: &$ty, serializer: S) -> Result<S::Ok, S::Error> {
                let instant = ($to)(value).map_err(serde::ser::Error::custom)?;
                $crate::interop::forms::write_instant(instant, serializer)
            }

            /// Reads any of the service's date-time forms.
            pub fn deserialize<'de, D: Deserializer<'de>>(
                deserializer: D,
            ) -> Result<$ty, D::Error> {
                let instant = $crate::interop::forms::read_instant(deserializer)?;
                ($from)(instant).map_err(serde::de::Error::custom)
            }
        }

        /// [`date_time`] for a nullable column: `null` is `None`.
        pub mod option_date_time {
            use serde::{Deserializer, Serializer};

            /// Writes the instant as [`date_time`](super::date_time) does, `None` as `null`.
            pub fn serialize<S: Serializer>(
                value: &Option<$ty>,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                match value {
                    Some(value) => super::date_time::serialize(value, serializer),
                    None => serializer.serialize_none(),
                }
            }

            /// Reads `null` or a date-time.
            pub fn deserialize<'de, D: Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Option<$ty>, D::Error> {
                match $crate::interop::forms::read_option_instant(deserializer)? {
                    Some(instant) => ($from)(instant).map(Some).map_err(serde::de::Error::custom),
                    None => Ok(None),
                }
            }
        }
    };
}

/// The `serde` helper modules of one library's date type `$ty`, made from a [`Ymd`] by `$from`
/// (which fails for a day the month lacks) and read into one by `$to`.
macro_rules! date_serde {
    ($ty:ty, $name:literal, $to:expr, $from:expr) => {
        /// `#[serde(with = "...")]` on a
        #[doc = concat!("`", $name, "`")]
        /// field: reads and writes `YYYY-MM-DD`, the service's form for `DATE` columns.
        pub mod date {
            use serde::{Deserializer, Serializer};

            /// Writes `YYYY-MM-DD`.
            pub fn serialize<S: Serializer>(value: &$ty, serializer: S) -> Result<S::Ok, S::Error> {
                $crate::interop::forms::write_date(($to)(value), serializer)
            }

            // The date as a filter value: here, where `$to` names the library's function.
            impl $crate::records::FilterValue for $ty {
                /// `YYYY-MM-DD`.
                fn to_query_text(&self) -> String {
                    ($to)(self).text()
                }
            }

            /// Reads `YYYY-MM-DD`.
            pub fn deserialize<'de, D: Deserializer<'de>>(
                deserializer: D,
            ) -> Result<$ty, D::Error> {
                let ymd = $crate::interop::forms::read_date(deserializer)?;
                ($from)(ymd).map_err(serde::de::Error::custom)
            }
        }

        /// [`date`] for a nullable column: `null` is `None`.
        pub mod option_date {
            use serde::{Deserializer, Serializer};

            /// Writes the date as [`date`](super::date) does, `None` as `null`.
            pub fn serialize<S: Serializer>(
                value: &Option<$ty>,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                match value {
                    Some(value) => super::date::serialize(value, serializer),
                    None => serializer.serialize_none(),
                }
            }

            /// Reads `null` or a date.
            pub fn deserialize<'de, D: Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Option<$ty>, D::Error> {
                match $crate::interop::forms::read_option_date(deserializer)? {
                    Some(ymd) => ($from)(ymd).map(Some).map_err(serde::de::Error::custom),
                    None => Ok(None),
                }
            }
        }
    };
}

pub(crate) use {date_serde, instant_serde};

/// An instant's filter text: the service's form, or, for an instant outside years 0000 to 9999
/// (which the service refuses with a `400`), the library's own text from `own`.
pub(crate) fn instant_query_text<E>(
    instant: Result<Timestamp, E>,
    own: impl FnOnce() -> String,
) -> String {
    match instant {
        Ok(t) => t.to_record_text(),
        Err(_) => own(),
    }
}

/// Instants at the ends of the service's years and around the epoch, for the libraries' tests.
#[cfg(all(test, any(feature = "chrono", feature = "time")))]
pub(crate) const EDGES: [&str; 3] = [
    "0000-01-01T00:00:00Z",
    "1969-12-31T23:59:59.999999999Z",
    "9999-12-31T23:59:59.999999999Z",
];

/// The instant `secs` seconds and `nanos` nanoseconds after the Unix epoch, a leap second's
/// `nanos` of a second or more read as the next second (as RFC 3339's `:60`); an error outside
/// years 0000 to 9999, which the service cannot hold.
pub(crate) fn instant(secs: i64, nanos: u32) -> Result<Timestamp, crate::InvalidTimestamp> {
    let (secs, nanos) = match nanos.checked_sub(1_000_000_000) {
        Some(past) => (secs.checked_add(1), past),
        None => (Some(secs), nanos),
    };
    secs.and_then(|secs| Timestamp::from_unix(secs, nanos))
        .ok_or_else(crate::InvalidTimestamp::out_of_range)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_only_their_form() {
        assert_eq!(
            Ymd::parse("2024-03-05"),
            Ok(Ymd {
                year: 2024,
                month: 3,
                day: 5
            })
        );
        for bad in [
            "2024-3-05",
            "24-03-05",
            "2024/03/05",
            "2024-03-05T00:00:00",
            "２０２４-03-05",
            "",
        ] {
            assert!(Ymd::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            Ymd {
                year: 99,
                month: 1,
                day: 2
            }
            .text(),
            "0099-01-02"
        );
    }

    #[test]
    fn record_text_is_utc_with_microseconds() {
        let t = Timestamp::from_unix(1_709_633_472, 123_456_789).unwrap();
        assert_eq!(t.to_record_text(), "2024-03-05T10:11:12.123456Z");
        let t = Timestamp::from_unix(1_709_633_472, 500_000_000).unwrap();
        assert_eq!(t.to_record_text(), "2024-03-05T10:11:12.500000Z");
        let t = Timestamp::from_unix(1_709_633_472, 999).unwrap();
        assert_eq!(t.to_record_text(), "2024-03-05T10:11:12Z");
        for (text, utc) in [
            ("2024-03-05T10:11:12", "2024-03-05T10:11:12Z"),
            ("2024-03-05 10:11:12.000005", "2024-03-05T10:11:12.000005Z"),
            ("2024-03-05T12:11:12+02:00", "2024-03-05T10:11:12Z"),
            ("2024-03-05T10:11:12Z", "2024-03-05T10:11:12Z"),
        ] {
            let t = Timestamp::from_record_text(text).unwrap();
            assert_eq!(t.to_record_text(), utc, "{text}");
        }
        for bad in [
            "2024-03-05",
            "2024-03-05T10:11:12+2",
            "2024-03-05T10:11:12 x",
            "now",
        ] {
            assert!(Timestamp::from_record_text(bad).is_err(), "{bad:?}");
        }
    }
}
