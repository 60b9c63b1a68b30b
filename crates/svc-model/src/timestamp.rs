//! `Timestamp`: an instant in UTC, read from and written as RFC 3339 or an HTTP-date.
//!
//! Re-exported as [`svc_model::Timestamp`](crate::Timestamp) and
//! [`svc_model::account::Timestamp`](crate::account::Timestamp).

use std::fmt;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

const SECONDS_PER_DAY: i64 = 86_400;
const NANOS_PER_SECOND: u32 = 1_000_000_000;
/// `0000-01-01T00:00:00Z` in Unix seconds.
const MIN_UNIX_SECONDS: i64 = -62_167_219_200;
/// `9999-12-31T23:59:59Z` in Unix seconds.
const MAX_UNIX_SECONDS: i64 = 253_402_300_799;

/// An instant in UTC with nanosecond precision, between years 0000 and 9999 (the range of RFC
/// 3339). On the wire it is an RFC 3339 string.
///
/// - Parsing ([`parse_rfc3339`](Self::parse_rfc3339), [`FromStr`], `Deserialize`) accepts any
///   RFC 3339 `date-time`: `T`, `t` or a space between date and time, any number of fractional
///   digits (nanoseconds are kept, further digits are dropped), `Z`, `z` or a `±HH:MM` offset,
///   and a leap second `:60` (read as the first second of the next minute).
/// - Formatting ([`to_rfc3339`](Self::to_rfc3339), `Display`, `Serialize`) always writes UTC with
///   `Z`, and fractional seconds only when there are some, in groups of 3, 6 or 9 digits.
/// - `Deserialize` also accepts a JSON number of Unix seconds (a JWT `exp` value).
/// - HTTP headers such as `Retry-After` carry an HTTP-date instead:
///   [`parse_http_date`](Self::parse_http_date) reads the three forms of RFC 9110 and
///   [`to_http_date`](Self::to_http_date) writes the preferred one.
///
/// ```
/// use svc_model::Timestamp;
///
/// let t: Timestamp = "2026-03-01T01:30:00.25+01:30".parse()?;
/// assert_eq!(t.to_rfc3339(), "2026-03-01T00:00:00.250Z");
/// assert_eq!(t.unix_seconds(), 1_772_323_200);
/// assert_eq!(t.subsec_nanos(), 250_000_000);
/// assert!("2026-02-29T00:00:00Z".parse::<Timestamp>().is_err()); // not a leap year
/// # Ok::<(), svc_model::InvalidTimestamp>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    secs: i64,
    nanos: u32,
}

/// A string that is not an RFC 3339 date-time (or, from
/// [`Timestamp::parse_http_date`], not an HTTP-date), or an instant outside years 0000 to 9999.
///
/// The message says what is wrong and which syntax was expected; it does not repeat the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {}: {reason} (expected e.g. {})", .syntax.name(), .syntax.example())]
pub struct InvalidTimestamp {
    reason: &'static str,
    syntax: Syntax,
}

/// The text form a timestamp was parsed from, for error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    Rfc3339,
    HttpDate,
}

impl Syntax {
    fn name(self) -> &'static str {
        match self {
            Self::Rfc3339 => "RFC 3339 timestamp",
            Self::HttpDate => "HTTP date",
        }
    }

    fn example(self) -> &'static str {
        match self {
            Self::Rfc3339 => "2026-05-01T12:00:00Z",
            Self::HttpDate => "Fri, 01 May 2026 12:00:00 GMT",
        }
    }
}

impl InvalidTimestamp {
    /// An instant outside years 0000 to 9999 (from another library's type).
    #[cfg(any(feature = "chrono", feature = "time", feature = "jiff"))]
    pub(crate) fn out_of_range() -> Self {
        Self::new("instant outside years 0000 to 9999 in UTC")
    }

    fn new(reason: &'static str) -> Self {
        Self {
            reason,
            syntax: Syntax::Rfc3339,
        }
    }

    /// The same error, about an HTTP-date.
    fn in_http_date(self) -> Self {
        Self {
            syntax: Syntax::HttpDate,
            ..self
        }
    }

    /// What is wrong, e.g. `"month out of range"`.
    pub fn reason(&self) -> &'static str {
        self.reason
    }
}

impl Timestamp {
    /// The earliest instant: `0000-01-01T00:00:00Z`.
    pub const MIN: Self = Self {
        secs: MIN_UNIX_SECONDS,
        nanos: 0,
    };
    /// The latest instant: `9999-12-31T23:59:59.999999999Z`.
    pub const MAX: Self = Self {
        secs: MAX_UNIX_SECONDS,
        nanos: NANOS_PER_SECOND - 1,
    };
    /// The Unix epoch, `1970-01-01T00:00:00Z`.
    pub const UNIX_EPOCH: Self = Self { secs: 0, nanos: 0 };

    /// The instant `secs` seconds and `nanos` nanoseconds after the Unix epoch (`secs` may be
    /// negative). `None` when `nanos` is one second or more, or the instant is outside years
    /// 0000 to 9999.
    pub fn from_unix(secs: i64, nanos: u32) -> Option<Self> {
        if nanos >= NANOS_PER_SECOND || !(MIN_UNIX_SECONDS..=MAX_UNIX_SECONDS).contains(&secs) {
            return None;
        }
        Some(Self { secs, nanos })
    }

    /// The instant `secs` whole seconds after the Unix epoch; `None` outside years 0000 to 9999.
    pub fn from_unix_seconds(secs: i64) -> Option<Self> {
        Self::from_unix(secs, 0)
    }

    /// The current time of the system clock.
    pub fn now() -> Self {
        Self::from_system_time(SystemTime::now())
    }

    /// Converts a [`SystemTime`], saturating at [`MIN`](Self::MIN) and [`MAX`](Self::MAX).
    pub fn from_system_time(time: SystemTime) -> Self {
        match time.duration_since(UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_secs())
                .ok()
                .and_then(|secs| Self::from_unix(secs, after.subsec_nanos()))
                .unwrap_or(Self::MAX),
            Err(before) => {
                let before = before.duration();
                // `before` earlier than the epoch: -(s + n) = -(s + 1) + (1e9 - n).
                let (secs, nanos) = match before.subsec_nanos() {
                    0 => (i64::try_from(before.as_secs()).ok().map(|s| -s), 0),
                    n => (
                        i64::try_from(before.as_secs())
                            .ok()
                            .and_then(|s| s.checked_add(1))
                            .map(|s| -s),
                        NANOS_PER_SECOND - n,
                    ),
                };
                secs.and_then(|s| Self::from_unix(s, nanos))
                    .unwrap_or(Self::MIN)
            }
        }
    }

    /// The same instant as a [`SystemTime`], or `None` when the platform's `SystemTime` cannot
    /// hold it (on Windows it starts in 1601).
    pub fn to_system_time(self) -> Option<SystemTime> {
        if self.secs >= 0 {
            UNIX_EPOCH.checked_add(Duration::new(self.secs.unsigned_abs(), self.nanos))
        } else {
            UNIX_EPOCH
                .checked_sub(Duration::from_secs(self.secs.unsigned_abs()))?
                .checked_add(Duration::from_nanos(u64::from(self.nanos)))
        }
    }

    /// Whole seconds since the Unix epoch (negative before 1970); the fraction is
    /// [`subsec_nanos`](Self::subsec_nanos), always added.
    pub fn unix_seconds(self) -> i64 {
        self.secs
    }

    /// Nanoseconds past [`unix_seconds`](Self::unix_seconds), below one second.
    pub fn subsec_nanos(self) -> u32 {
        self.nanos
    }

    /// `self + duration`, or `None` past [`MAX`](Self::MAX).
    pub fn checked_add(self, duration: Duration) -> Option<Self> {
        let secs = i64::try_from(duration.as_secs()).ok()?;
        let mut secs = self.secs.checked_add(secs)?;
        let mut nanos = self.nanos + duration.subsec_nanos();
        if nanos >= NANOS_PER_SECOND {
            nanos -= NANOS_PER_SECOND;
            secs = secs.checked_add(1)?;
        }
        Self::from_unix(secs, nanos)
    }

    /// `self - duration`, or `None` before [`MIN`](Self::MIN).
    pub fn checked_sub(self, duration: Duration) -> Option<Self> {
        let secs = i64::try_from(duration.as_secs()).ok()?;
        let secs = self.secs.checked_sub(secs)?;
        let (secs, nanos) = match self.nanos.checked_sub(duration.subsec_nanos()) {
            Some(nanos) => (secs, nanos),
            None => (
                secs.checked_sub(1)?,
                self.nanos + NANOS_PER_SECOND - duration.subsec_nanos(),
            ),
        };
        Self::from_unix(secs, nanos)
    }

    /// Parses an RFC 3339 `date-time` (see the type's documentation for what is accepted).
    pub fn parse_rfc3339(text: &str) -> Result<Self, InvalidTimestamp> {
        parse_rfc3339(text.as_bytes(), Offset::Required)
    }

    /// Formats as RFC 3339 in UTC, e.g. `2026-05-01T10:00:00Z` or `2026-05-01T10:00:00.250Z`.
    pub fn to_rfc3339(self) -> String {
        self.to_string()
    }

    /// Reads a date-time as the service writes it in a record: RFC 3339 with `Z` or an offset
    /// (PostgreSQL's `timestamptz`, MySQL's columns), or without an offset (SQLite's
    /// `DATETIME`, PostgreSQL's `timestamp`), which is read as UTC, the time zone the service
    /// stores in. `T` or a space between date and time.
    ///
    /// ```
    /// use svc_model::Timestamp;
    ///
    /// let naive = Timestamp::from_record_text("2024-03-05T10:11:12.5")?;
    /// assert_eq!(naive, Timestamp::from_record_text("2024-03-05T11:11:12.500+01:00")?);
    /// assert_eq!(naive.to_record_text(), "2024-03-05T10:11:12.500000Z");
    /// # Ok::<(), svc_model::InvalidTimestamp>(())
    /// ```
    pub fn from_record_text(text: &str) -> Result<Self, InvalidTimestamp> {
        parse_rfc3339(text.as_bytes(), Offset::UtcWhenMissing)
    }

    /// Writes the instant as the service reads a date-time in a write or a filter:
    /// `YYYY-MM-DDTHH:MM:SS[.ffffff]Z`, in UTC, with microseconds when there are some. The
    /// service holds microseconds (Python's `datetime`): digits beyond them are dropped, not
    /// rounded. This is the text of a `Timestamp` filter value and of the `serde` helpers of
    /// [`interop`](crate::interop).
    pub fn to_record_text(self) -> String {
        let micros = Self {
            secs: self.secs,
            nanos: self.nanos - self.nanos % 1_000,
        };
        let mut text = micros.to_string();
        // Display writes 3 digits for whole milliseconds: the service's form has 6.
        if micros.nanos != 0 && micros.nanos.is_multiple_of(1_000_000) {
            text.insert_str(text.len() - 1, "000");
        }
        text
    }

    /// Parses an HTTP-date (RFC 9110 section 5.6.7), the form of `Retry-After`, `Date`,
    /// `Expires` and `Last-Modified`, in any of its three forms:
    ///
    /// | Form | Example |
    /// | --- | --- |
    /// | IMF-fixdate (the preferred one) | `Sun, 06 Nov 1994 08:49:37 GMT` |
    /// | RFC 850 (obsolete) | `Sunday, 06-Nov-94 08:49:37 GMT` |
    /// | asctime (obsolete) | `Sun Nov  6 08:49:37 1994` (or `Nov 06`) |
    ///
    /// What is accepted, beyond the grammar's letter:
    /// - Spaces and tabs around the date are ignored; inside it, the separators must be exactly
    ///   those of its form (one space, except the padding of an asctime day).
    /// - Weekday names, month names and `GMT` are matched ignoring ASCII case. The weekday must
    ///   be a valid name of the form's kind (`Sun` in IMF-fixdate and asctime, `Sunday` in
    ///   RFC 850), but it is **not** checked against the date: the date fields decide the
    ///   instant, as in most HTTP implementations, and a sender's wrong weekday does not make
    ///   its date unreadable.
    /// - Fields are range-checked: a day that its month does not have (`30 Feb`, `29 Feb` of a
    ///   common year, `00`), hour `24`, minute `60` or second `61` is an error. Second `60` (a
    ///   leap second, which RFC 9110 allows) is read as the first second of the next minute.
    /// - An RFC 850 two-digit year is the year with those last two digits that is at most 50
    ///   years after the current year (judged by calendar year), as RFC 9110 requires: in 2026,
    ///   `76` is 2076 and `77` is 1977. The current time comes from the system clock; see
    ///   [`parse_http_date_at`](Self::parse_http_date_at) to give it.
    /// - The date is in years 0000 to 9999 like every `Timestamp`; there is no time zone but
    ///   `GMT` and no fraction of a second.
    ///
    /// Any other input, including text around the date, is an error; none panics.
    ///
    /// ```
    /// use svc_model::Timestamp;
    ///
    /// let imf = Timestamp::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT")?;
    /// assert_eq!(imf.to_rfc3339(), "1994-11-06T08:49:37Z");
    /// assert_eq!(Timestamp::parse_http_date(" Sun Nov  6 08:49:37 1994\t")?, imf);
    /// assert_eq!(imf.to_http_date(), "Sun, 06 Nov 1994 08:49:37 GMT");
    ///
    /// // The weekday is not checked against the date (6 Nov 1994 was a Sunday).
    /// assert_eq!(Timestamp::parse_http_date("Mon, 06 Nov 1994 08:49:37 GMT")?, imf);
    /// let err = Timestamp::parse_http_date("Sun, 30 Feb 1994 08:49:37 GMT").unwrap_err();
    /// assert_eq!(err.reason(), "day out of range for the month");
    /// assert!(Timestamp::parse_http_date("2026-05-01T12:00:00Z").is_err());
    /// # Ok::<(), svc_model::InvalidTimestamp>(())
    /// ```
    pub fn parse_http_date(text: &str) -> Result<Self, InvalidTimestamp> {
        Self::parse_http_date_at(text, Self::now())
    }

    /// [`parse_http_date`](Self::parse_http_date) with `now` as the current time, which only
    /// decides the century of an RFC 850 two-digit year. For repeatable results and tests.
    ///
    /// ```
    /// use svc_model::Timestamp;
    ///
    /// let in_2026 = Timestamp::parse_rfc3339("2026-05-01T00:00:00Z")?;
    /// let date = Timestamp::parse_http_date_at("Sunday, 06-Nov-94 08:49:37 GMT", in_2026)?;
    /// assert_eq!(date.to_rfc3339(), "1994-11-06T08:49:37Z");
    /// let date = Timestamp::parse_http_date_at("Monday, 02-Jan-30 00:00:00 GMT", in_2026)?;
    /// assert_eq!(date.to_rfc3339(), "2030-01-02T00:00:00Z");
    /// # Ok::<(), svc_model::InvalidTimestamp>(())
    /// ```
    pub fn parse_http_date_at(text: &str, now: Self) -> Result<Self, InvalidTimestamp> {
        let text = text.trim_matches([' ', '\t']);
        parse_http_date(text.as_bytes(), now).map_err(InvalidTimestamp::in_http_date)
    }

    /// Formats as an HTTP-date in its preferred form, IMF-fixdate (RFC 9110 section 5.6.7),
    /// e.g. `Sun, 06 Nov 1994 08:49:37 GMT`. The fraction of a second is dropped (the text is
    /// the whole second at or before the instant).
    ///
    /// ```
    /// use svc_model::Timestamp;
    ///
    /// let t = Timestamp::parse_rfc3339("2026-05-01T10:00:00.75Z")?;
    /// assert_eq!(t.to_http_date(), "Fri, 01 May 2026 10:00:00 GMT");
    /// # Ok::<(), svc_model::InvalidTimestamp>(())
    /// ```
    pub fn to_http_date(self) -> String {
        let days = self.secs.div_euclid(SECONDS_PER_DAY);
        let second_of_day = self.secs.rem_euclid(SECONDS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        // 1970-01-01 was a Thursday; `WEEKDAYS` starts on Sunday.
        let weekday = WEEKDAYS[(days + 4).rem_euclid(7) as usize];
        let month = MONTHS[month as usize - 1];
        format!(
            "{weekday}, {day:02} {month} {year:04} {:02}:{:02}:{:02} GMT",
            second_of_day / 3600,
            second_of_day / 60 % 60,
            second_of_day % 60
        )
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let days = self.secs.div_euclid(SECONDS_PER_DAY);
        let second_of_day = self.secs.rem_euclid(SECONDS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
            second_of_day / 3600,
            second_of_day / 60 % 60,
            second_of_day % 60
        )?;
        match self.nanos {
            0 => {}
            n if n.is_multiple_of(1_000_000) => write!(f, ".{:03}", n / 1_000_000)?,
            n if n.is_multiple_of(1_000) => write!(f, ".{:06}", n / 1_000)?,
            n => write!(f, ".{n:09}")?,
        }
        f.write_str("Z")
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Timestamp {
    type Err = InvalidTimestamp;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse_rfc3339(s)
    }
}

impl From<SystemTime> for Timestamp {
    /// Saturates at [`Timestamp::MIN`] and [`Timestamp::MAX`].
    fn from(time: SystemTime) -> Self {
        Self::from_system_time(time)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TimestampVisitor;

        impl Visitor<'_> for TimestampVisitor {
            type Value = Timestamp;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 timestamp string or a number of Unix seconds")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Timestamp, E> {
                Timestamp::parse_rfc3339(v).map_err(E::custom)
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Timestamp, E> {
                Timestamp::from_unix_seconds(v)
                    .ok_or_else(|| E::custom("Unix seconds outside years 0000 to 9999"))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Timestamp, E> {
                i64::try_from(v)
                    .ok()
                    .and_then(Timestamp::from_unix_seconds)
                    .ok_or_else(|| E::custom("Unix seconds outside years 0000 to 9999"))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Timestamp, E> {
                let out_of_range = || E::custom("Unix seconds outside years 0000 to 9999");
                if !v.is_finite()
                    || v < MIN_UNIX_SECONDS as f64
                    || v >= (MAX_UNIX_SECONDS + 1) as f64
                {
                    return Err(out_of_range());
                }
                let secs = v.floor();
                // Both casts are in range: checked just above.
                let nanos =
                    (((v - secs) * f64::from(NANOS_PER_SECOND)) as u32).min(NANOS_PER_SECOND - 1);
                Timestamp::from_unix(secs as i64, nanos).ok_or_else(out_of_range)
            }
        }

        deserializer.deserialize_any(TimestampVisitor)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = i64::from((month + 9) % 12);
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    // Both are small and positive by construction.
    (year, month as u32, day as u32)
}

fn is_leap_year(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Reads `len` ASCII digits at `at`.
fn digits(bytes: &[u8], at: usize, len: usize) -> Result<u32, InvalidTimestamp> {
    let slice = bytes
        .get(at..at + len)
        .ok_or(InvalidTimestamp::new("too short"))?;
    slice.iter().try_fold(0u32, |acc, &b| {
        if b.is_ascii_digit() {
            Ok(acc * 10 + u32::from(b - b'0'))
        } else {
            Err(InvalidTimestamp::new("expected a digit"))
        }
    })
}

fn expect(
    bytes: &[u8],
    at: usize,
    allowed: &[u8],
    reason: &'static str,
) -> Result<(), InvalidTimestamp> {
    match bytes.get(at) {
        Some(b) if allowed.contains(b) => Ok(()),
        _ => Err(InvalidTimestamp::new(reason)),
    }
}

/// Whether a date-time must end with `Z` or an offset (RFC 3339), or may end after its time,
/// in UTC ([`Timestamp::from_record_text`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Offset {
    Required,
    UtcWhenMissing,
}

fn parse_rfc3339(b: &[u8], offset: Offset) -> Result<Timestamp, InvalidTimestamp> {
    let year = digits(b, 0, 4)?;
    expect(b, 4, b"-", "expected '-' after the year")?;
    let month = digits(b, 5, 2)?;
    expect(b, 7, b"-", "expected '-' after the month")?;
    let day = digits(b, 8, 2)?;
    expect(b, 10, b"Tt ", "expected 'T' between date and time")?;
    let hour = digits(b, 11, 2)?;
    expect(b, 13, b":", "expected ':' after the hour")?;
    let minute = digits(b, 14, 2)?;
    expect(b, 16, b":", "expected ':' after the minutes")?;
    let second = digits(b, 17, 2)?;

    let mut at = 19;
    let mut nanos = 0u32;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            if at - start < 9 {
                nanos = nanos * 10 + u32::from(b[at] - b'0');
            }
            at += 1;
        }
        if at == start {
            return Err(InvalidTimestamp::new("expected digits after '.'"));
        }
        for _ in (at - start)..9 {
            nanos *= 10;
        }
    }

    let offset_seconds: i64 = match b.get(at) {
        Some(b'Z' | b'z') => {
            at += 1;
            0
        }
        Some(&sign @ (b'+' | b'-')) => {
            let hours = digits(b, at + 1, 2)?;
            expect(b, at + 3, b":", "expected ':' in the UTC offset")?;
            let minutes = digits(b, at + 4, 2)?;
            if hours > 23 || minutes > 59 {
                return Err(InvalidTimestamp::new("UTC offset out of range"));
            }
            at += 6;
            let magnitude = i64::from(hours * 3600 + minutes * 60);
            if sign == b'-' { -magnitude } else { magnitude }
        }
        // The text ends after the time: UTC where that is allowed (text after the time is
        // never an offset, and still fails).
        None if offset == Offset::UtcWhenMissing => 0,
        _ => {
            return Err(InvalidTimestamp::new(
                "expected 'Z' or a UTC offset like +02:00",
            ));
        }
    };
    if at != b.len() {
        return Err(InvalidTimestamp::new("unexpected text after the timestamp"));
    }

    if !(1..=12).contains(&month) {
        return Err(InvalidTimestamp::new("month out of range"));
    }
    if day < 1 || day > days_in_month(i64::from(year), month) {
        return Err(InvalidTimestamp::new("day out of range for the month"));
    }
    if hour > 23 || minute > 59 || second > 60 {
        return Err(InvalidTimestamp::new("time of day out of range"));
    }

    let secs = days_from_civil(i64::from(year), month, day) * SECONDS_PER_DAY
        + i64::from(hour * 3600 + minute * 60 + second)
        - offset_seconds;
    Timestamp::from_unix(secs, nanos).ok_or(InvalidTimestamp::new(
        "instant outside years 0000 to 9999 in UTC",
    ))
}

/// Weekday names, Sunday first: the short ones of IMF-fixdate and asctime.
const WEEKDAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
/// Weekday names, Sunday first: the long ones of RFC 850 dates.
const WEEKDAYS_LONG: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Whether `name` is one of `names`, ignoring ASCII case.
fn is_one_of(name: &[u8], names: &[&str]) -> bool {
    names
        .iter()
        .any(|n| n.as_bytes().eq_ignore_ascii_case(name))
}

/// The month (1 to 12) whose three-letter name is at `at`.
fn month_at(b: &[u8], at: usize) -> Result<u32, InvalidTimestamp> {
    let name = b
        .get(at..at + 3)
        .ok_or(InvalidTimestamp::new("too short"))?;
    MONTHS
        .iter()
        .position(|m| m.as_bytes().eq_ignore_ascii_case(name))
        // At most 12.
        .map(|i| i as u32 + 1)
        .ok_or(InvalidTimestamp::new("expected a month name like 'Nov'"))
}

/// `HH:MM:SS` at `at`, not yet range-checked.
fn time_of_day_at(b: &[u8], at: usize) -> Result<(u32, u32, u32), InvalidTimestamp> {
    let hour = digits(b, at, 2)?;
    expect(b, at + 2, b":", "expected ':' after the hour")?;
    let minute = digits(b, at + 3, 2)?;
    expect(b, at + 5, b":", "expected ':' after the minutes")?;
    let second = digits(b, at + 6, 2)?;
    Ok((hour, minute, second))
}

fn gmt_at(b: &[u8], at: usize) -> Result<(), InvalidTimestamp> {
    match b.get(at..at + 3) {
        Some(zone) if zone.eq_ignore_ascii_case(b"GMT") => Ok(()),
        _ => Err(InvalidTimestamp::new("expected 'GMT'")),
    }
}

/// Parses the three forms of HTTP-date (see [`Timestamp::parse_http_date`]) from `b`, already
/// trimmed. `now` decides the century of an RFC 850 year.
fn parse_http_date(b: &[u8], now: Timestamp) -> Result<Timestamp, InvalidTimestamp> {
    // Every form starts with a weekday name, then ',' (IMF-fixdate, RFC 850) or ' ' (asctime).
    let name_end = b
        .iter()
        .position(|c| !c.is_ascii_alphabetic())
        .unwrap_or(b.len());
    let weekday = &b[..name_end];
    let short_weekday = || {
        if is_one_of(weekday, &WEEKDAYS) {
            Ok(())
        } else {
            Err(InvalidTimestamp::new("expected a weekday name like 'Sun'"))
        }
    };
    let (year, month, day, (hour, minute, second), end) = match b.get(name_end) {
        Some(b',') => {
            expect(b, name_end + 1, b" ", "expected ' ' after the weekday")?;
            let at = name_end + 2;
            match b.get(at + 2) {
                // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
                Some(b' ') => {
                    short_weekday()?;
                    let day = digits(b, at, 2)?;
                    let month = month_at(b, at + 3)?;
                    expect(b, at + 6, b" ", "expected ' ' after the month")?;
                    let year = i64::from(digits(b, at + 7, 4)?);
                    expect(b, at + 11, b" ", "expected ' ' after the year")?;
                    let time = time_of_day_at(b, at + 12)?;
                    expect(b, at + 20, b" ", "expected ' ' before 'GMT'")?;
                    gmt_at(b, at + 21)?;
                    (year, month, day, time, at + 24)
                }
                // RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`.
                Some(b'-') => {
                    if !is_one_of(weekday, &WEEKDAYS_LONG) {
                        return Err(InvalidTimestamp::new(
                            "expected a weekday name like 'Sunday'",
                        ));
                    }
                    let day = digits(b, at, 2)?;
                    let month = month_at(b, at + 3)?;
                    expect(b, at + 6, b"-", "expected '-' after the month")?;
                    let year = two_digit_year(digits(b, at + 7, 2)?, now);
                    expect(b, at + 9, b" ", "expected ' ' after the year")?;
                    let time = time_of_day_at(b, at + 10)?;
                    expect(b, at + 18, b" ", "expected ' ' before 'GMT'")?;
                    gmt_at(b, at + 19)?;
                    (year, month, day, time, at + 22)
                }
                _ => {
                    return Err(InvalidTimestamp::new(
                        "expected a date like '06 Nov 1994' or '06-Nov-94'",
                    ));
                }
            }
        }
        // asctime: `Sun Nov  6 08:49:37 1994`, the day padded with a space or a zero.
        Some(b' ') => {
            short_weekday()?;
            let at = name_end + 1;
            let month = month_at(b, at)?;
            expect(b, at + 3, b" ", "expected ' ' after the month")?;
            let day = if b.get(at + 4) == Some(&b' ') {
                digits(b, at + 5, 1)?
            } else {
                digits(b, at + 4, 2)?
            };
            expect(b, at + 6, b" ", "expected ' ' after the day")?;
            let time = time_of_day_at(b, at + 7)?;
            expect(b, at + 15, b" ", "expected ' ' before the year")?;
            let year = i64::from(digits(b, at + 16, 4)?);
            (year, month, day, time, at + 20)
        }
        _ => {
            return Err(InvalidTimestamp::new(
                "expected a weekday name followed by ',' or ' '",
            ));
        }
    };
    if end != b.len() {
        return Err(InvalidTimestamp::new("unexpected text after the date"));
    }
    if day < 1 || day > days_in_month(year, month) {
        return Err(InvalidTimestamp::new("day out of range for the month"));
    }
    if hour > 23 || minute > 59 || second > 60 {
        return Err(InvalidTimestamp::new("time of day out of range"));
    }
    let secs = days_from_civil(year, month, day) * SECONDS_PER_DAY
        + i64::from(hour * 3600 + minute * 60 + second);
    Timestamp::from_unix_seconds(secs)
        .ok_or(InvalidTimestamp::new("instant outside years 0000 to 9999"))
}

/// The year ending in `two_digits` that is at most 50 years after `now`'s year and less than
/// 50 years before it (RFC 9110 section 5.6.7, judged by calendar year).
fn two_digit_year(two_digits: u32, now: Timestamp) -> i64 {
    let (this_year, _, _) = civil_from_days(now.secs.div_euclid(SECONDS_PER_DAY));
    let year = this_year - this_year.rem_euclid(100) + i64::from(two_digits);
    if year > this_year + 50 {
        year - 100
    } else if year <= this_year - 50 {
        year + 100
    } else {
        year
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    #[test]
    fn rfc3339_known_instants() {
        let cases: &[(&str, i64, u32)] = &[
            ("1970-01-01T00:00:00Z", 0, 0),
            ("1970-01-01T00:00:01.5Z", 1, 500_000_000),
            ("1969-12-31T23:59:59Z", -1, 0),
            ("1969-12-31T23:59:59.999999999Z", -1, 999_999_999),
            ("2000-02-29T12:00:00Z", 951_825_600, 0),
            ("2026-05-01T12:00:00+02:00", 1_777_629_600, 0),
            ("2026-05-01T10:00:00z", 1_777_629_600, 0),
            ("2026-05-01t10:00:00Z", 1_777_629_600, 0),
            ("2026-05-01 10:00:00Z", 1_777_629_600, 0),
            ("2026-05-01T05:30:00-04:30", 1_777_629_600, 0),
            (
                "2026-05-01T10:00:00.123456789123Z",
                1_777_629_600,
                123_456_789,
            ),
            ("2026-05-01T10:00:00.000001Z", 1_777_629_600, 1_000),
            ("2026-12-31T23:59:60Z", 1_798_761_600, 0), // leap second: next minute
            ("0000-01-01T00:00:00Z", MIN_UNIX_SECONDS, 0),
            (
                "9999-12-31T23:59:59.999999999Z",
                MAX_UNIX_SECONDS,
                999_999_999,
            ),
            ("2100-03-01T00:00:00Z", 4_107_542_400, 0),
        ];
        for &(text, secs, nanos) in cases {
            let t = ts(text);
            assert_eq!(
                (t.unix_seconds(), t.subsec_nanos()),
                (secs, nanos),
                "{text}"
            );
        }
    }

    #[test]
    fn rfc3339_formatting_round_trips() {
        for (text, formatted) in [
            ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z"),
            ("2026-05-01T12:00:00+02:00", "2026-05-01T10:00:00Z"),
            ("2026-05-01T10:00:00.5Z", "2026-05-01T10:00:00.500Z"),
            ("2026-05-01T10:00:00.0005Z", "2026-05-01T10:00:00.000500Z"),
            (
                "2026-05-01T10:00:00.000000005Z",
                "2026-05-01T10:00:00.000000005Z",
            ),
            ("1969-12-31T23:59:59.25Z", "1969-12-31T23:59:59.250Z"),
            ("0000-01-01T00:00:00Z", "0000-01-01T00:00:00Z"),
            ("9999-12-31T23:59:59Z", "9999-12-31T23:59:59Z"),
            ("2024-02-29T00:00:00-00:00", "2024-02-29T00:00:00Z"),
        ] {
            assert_eq!(ts(text).to_rfc3339(), formatted, "{text}");
            assert_eq!(ts(formatted), ts(text));
        }
        // Every day over a few centuries formats and parses back to itself.
        let mut secs = -2_208_988_800; // 1900-01-01
        while secs < 4_102_444_800 {
            // 2100-01-01
            let t = Timestamp::from_unix_seconds(secs + 3_723).unwrap();
            assert_eq!(ts(&t.to_rfc3339()), t);
            secs += SECONDS_PER_DAY;
        }
    }

    #[test]
    fn rfc3339_rejects_bad_input_without_panicking() {
        for bad in [
            "",
            "2026",
            "2026-05-01",
            "2026-05-01T10:00:00",
            "2026-05-01T10:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-05-01T24:00:00Z",
            "2026-05-01T10:60:00Z",
            "2026-05-01T10:00:61Z",
            "2026-05-01T10:00:00.Z",
            "2026-05-01T10:00:00+2:00",
            "2026-05-01T10:00:00+24:00",
            "2026-05-01T10:00:00+02:60",
            "2026-05-01T10:00:00+0200",
            "2026-05-01T10:00:00Z ",
            "2026-05-01X10:00:00Z",
            "+2026-05-01T10:00:00Z",
            "２０２６-05-01T10:00:00Z",
            "2026-05-01T10:00:00\u{e9}",
            "0000-01-01T00:00:00+00:01",
            "9999-12-31T23:59:59-00:01",
        ] {
            assert!(Timestamp::parse_rfc3339(bad).is_err(), "{bad:?}");
        }
        let err = Timestamp::parse_rfc3339("2026-13-01T00:00:00Z").unwrap_err();
        assert_eq!(err.reason(), "month out of range");
        assert!(err.to_string().contains("month out of range"));
    }

    #[test]
    fn system_time_conversions() {
        let t = ts("2026-05-01T10:00:00.75Z");
        assert_eq!(Timestamp::from(t.to_system_time().unwrap()), t);
        let before = ts("1960-06-15T08:00:00.125Z");
        assert_eq!(
            Timestamp::from_system_time(before.to_system_time().unwrap()),
            before
        );
        assert_eq!(
            Timestamp::from_system_time(UNIX_EPOCH - Duration::from_nanos(1)),
            ts("1969-12-31T23:59:59.999999999Z")
        );
        let far = UNIX_EPOCH + Duration::from_secs(400_000_000_000);
        assert_eq!(Timestamp::from_system_time(far), Timestamp::MAX);
        let now = Timestamp::now();
        assert!(now > ts("2020-01-01T00:00:00Z"));
    }

    /// A fixed "now" for HTTP-date tests, so that RFC 850 years do not drift with the clock.
    fn in_2026() -> Timestamp {
        ts("2026-05-01T12:00:00Z")
    }

    fn http(text: &str) -> Timestamp {
        Timestamp::parse_http_date_at(text, in_2026()).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    #[test]
    fn http_date_reads_all_three_forms() {
        let expected = ts("1994-11-06T08:49:37Z");
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT",  // IMF-fixdate
            "Sunday, 06-Nov-94 08:49:37 GMT", // RFC 850
            "Sun Nov  6 08:49:37 1994",       // asctime
            "Sun Nov 06 08:49:37 1994",       // asctime, day padded with a zero
            "sun, 06 nov 1994 08:49:37 gmt",  // names ignore ASCII case
            "SUNDAY, 06-NOV-94 08:49:37 GMT",
            "sUN nOV  6 08:49:37 1994",
        ] {
            assert_eq!(http(text), expected, "{text}");
        }
        for (text, rfc3339) in [
            ("Fri, 01 May 2026 10:00:00 GMT", "2026-05-01T10:00:00Z"),
            ("Thu, 01 Jan 1970 00:00:00 GMT", "1970-01-01T00:00:00Z"),
            ("Wed, 31 Dec 1969 23:59:59 GMT", "1969-12-31T23:59:59Z"),
            ("Thu, 29 Feb 2024 23:59:59 GMT", "2024-02-29T23:59:59Z"),
            ("Tue, 29 Feb 2000 12:00:00 GMT", "2000-02-29T12:00:00Z"),
            ("Sat, 01 Jan 0000 00:00:00 GMT", "0000-01-01T00:00:00Z"),
            ("Fri, 31 Dec 9999 23:59:59 GMT", "9999-12-31T23:59:59Z"),
            // A leap second is the first second of the next minute.
            ("Wed, 31 Dec 2025 23:59:60 GMT", "2026-01-01T00:00:00Z"),
            ("Wednesday, 31-Dec-25 23:59:60 GMT", "2026-01-01T00:00:00Z"),
            ("Wed Dec 31 23:59:60 2025", "2026-01-01T00:00:00Z"),
            ("Friday, 01-May-26 10:00:00 GMT", "2026-05-01T10:00:00Z"),
            ("Fri May  1 10:00:00 2026", "2026-05-01T10:00:00Z"),
            ("Sat Dec 31 23:59:59 2033", "2033-12-31T23:59:59Z"),
        ] {
            assert_eq!(http(text), ts(rfc3339), "{text}");
        }
        // Without `_at`, the system clock decides only RFC 850 centuries.
        assert_eq!(
            Timestamp::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Ok(expected)
        );
    }

    #[test]
    fn http_date_two_digit_years_are_at_most_50_years_ahead() {
        let year_of = |two_digits: &str, now: &str| {
            let text = format!("Monday, 01-Mar-{two_digits} 00:00:00 GMT");
            let t = Timestamp::parse_http_date_at(&text, ts(now)).unwrap();
            civil_from_days(t.unix_seconds().div_euclid(SECONDS_PER_DAY)).0
        };
        let now = "2026-05-01T12:00:00Z";
        assert_eq!(year_of("26", now), 2026);
        assert_eq!(year_of("00", now), 2000);
        assert_eq!(year_of("76", now), 2076); // 50 years ahead: kept
        assert_eq!(year_of("77", now), 1977); // 51 years ahead: the past century
        assert_eq!(year_of("94", now), 1994);
        assert_eq!(year_of("99", now), 1999);
        let now = "2080-01-01T00:00:00Z";
        assert_eq!(year_of("30", now), 2130);
        assert_eq!(year_of("31", now), 2031);
        assert_eq!(year_of("80", now), 2080);
        let now = "1999-12-31T23:59:59Z";
        assert_eq!(year_of("49", now), 2049);
        assert_eq!(year_of("50", now), 1950);
        // At the ends of the range, a year past 9999 or before 0000 is an error, not a panic.
        let late = Timestamp::parse_http_date_at("Monday, 01-Mar-00 00:00:00 GMT", Timestamp::MAX);
        assert_eq!(
            late.unwrap_err().reason(),
            "instant outside years 0000 to 9999"
        );
        let early = Timestamp::parse_http_date_at("Monday, 01-Mar-99 00:00:00 GMT", Timestamp::MIN);
        assert!(early.is_err());
        assert_eq!(year_of("99", "9999-01-01T00:00:00Z"), 9999);
    }

    #[test]
    fn http_date_formatting_round_trips() {
        assert_eq!(
            ts("1994-11-06T08:49:37.999Z").to_http_date(),
            "Sun, 06 Nov 1994 08:49:37 GMT"
        );
        assert_eq!(
            Timestamp::UNIX_EPOCH.to_http_date(),
            "Thu, 01 Jan 1970 00:00:00 GMT"
        );
        assert_eq!(
            ts("1969-12-31T23:59:59.5Z").to_http_date(),
            "Wed, 31 Dec 1969 23:59:59 GMT"
        );
        assert_eq!(
            Timestamp::MIN.to_http_date(),
            "Sat, 01 Jan 0000 00:00:00 GMT"
        );
        assert_eq!(
            Timestamp::MAX.to_http_date(),
            "Fri, 31 Dec 9999 23:59:59 GMT"
        );
        // Every day over a few centuries, in all three forms; consecutive days cycle through
        // the weekdays.
        let mut secs = -2_208_988_800; // 1900-01-01, a Monday
        let mut weekday = 1;
        while secs < 4_102_444_800 {
            // 2100-01-01
            let t = Timestamp::from_unix_seconds(secs + 45_296).unwrap(); // 12:34:56
            let imf = t.to_http_date();
            assert_eq!(http(&imf), t, "{imf}");
            assert!(imf.starts_with(WEEKDAYS[weekday]), "{imf}");
            // Sun, 06 Nov 1994 08:49:37 GMT -> the fields of the other forms.
            let (day, month, year, time) = (&imf[5..7], &imf[8..11], &imf[12..16], &imf[17..25]);
            let rfc850 = format!(
                "{}, {day}-{month}-{} {time} GMT",
                WEEKDAYS_LONG[weekday],
                &year[2..]
            );
            let now = Timestamp::from_unix_seconds(secs).unwrap();
            assert_eq!(
                Timestamp::parse_http_date_at(&rfc850, now),
                Ok(t),
                "{rfc850}"
            );
            let asctime_day = day
                .strip_prefix('0')
                .map_or(day.to_owned(), |d| format!(" {d}"));
            let asctime = format!("{} {month} {asctime_day} {time} {year}", WEEKDAYS[weekday]);
            assert_eq!(http(&asctime), t, "{asctime}");
            secs += SECONDS_PER_DAY;
            weekday = (weekday + 1) % 7;
        }
    }

    #[test]
    fn http_date_does_not_check_the_weekday_but_checks_its_name() {
        let expected = ts("1994-11-06T08:49:37Z");
        // A valid name of the wrong day: the date decides.
        assert_eq!(http("Mon, 06 Nov 1994 08:49:37 GMT"), expected);
        assert_eq!(http("Friday, 06-Nov-94 08:49:37 GMT"), expected);
        assert_eq!(http("Sat Nov  6 08:49:37 1994"), expected);
        // A name that is no weekday, or of the other form's kind, is an error.
        for (bad, reason) in [
            (
                "Sux, 06 Nov 1994 08:49:37 GMT",
                "expected a weekday name like 'Sun'",
            ),
            (
                "Sunday, 06 Nov 1994 08:49:37 GMT",
                "expected a weekday name like 'Sun'",
            ),
            (
                "Su, 06 Nov 1994 08:49:37 GMT",
                "expected a weekday name like 'Sun'",
            ),
            (
                "Sun, 06-Nov-94 08:49:37 GMT",
                "expected a weekday name like 'Sunday'",
            ),
            (
                "Sundae, 06-Nov-94 08:49:37 GMT",
                "expected a weekday name like 'Sunday'",
            ),
            (
                "Sunday Nov  6 08:49:37 1994",
                "expected a weekday name like 'Sun'",
            ),
            (
                "Xyz Nov  6 08:49:37 1994",
                "expected a weekday name like 'Sun'",
            ),
            (
                ", 06 Nov 1994 08:49:37 GMT",
                "expected a weekday name like 'Sun'",
            ),
            (
                "06 Nov 1994 08:49:37 GMT",
                "expected a weekday name followed by ',' or ' '",
            ),
            (
                "Sun; 06 Nov 1994 08:49:37 GMT",
                "expected a weekday name followed by ',' or ' '",
            ),
            (
                "Sun, 06 Noe 1994 08:49:37 GMT",
                "expected a month name like 'Nov'",
            ),
            (
                "Sun, 06 November 1994 08:49:37 GMT",
                "expected ' ' after the month",
            ),
            (
                "Sunday, 06-Xxx-94 08:49:37 GMT",
                "expected a month name like 'Nov'",
            ),
            (
                "Sun Nox  6 08:49:37 1994",
                "expected a month name like 'Nov'",
            ),
        ] {
            let err = Timestamp::parse_http_date_at(bad, in_2026()).unwrap_err();
            assert_eq!(err.reason(), reason, "{bad}");
        }
    }

    #[test]
    fn http_date_range_checks_every_field() {
        for (bad, reason) in [
            ("Sun, 06 Nov 1994 24:00:00 GMT", "time of day out of range"),
            ("Sun, 06 Nov 1994 23:60:00 GMT", "time of day out of range"),
            ("Sun, 06 Nov 1994 23:59:61 GMT", "time of day out of range"),
            ("Sun, 06 Nov 1994 99:99:99 GMT", "time of day out of range"),
            (
                "Wed, 30 Feb 2000 00:00:00 GMT",
                "day out of range for the month",
            ),
            (
                "Sun, 29 Feb 2026 00:00:00 GMT",
                "day out of range for the month",
            ),
            (
                "Sun, 29 Feb 1900 00:00:00 GMT",
                "day out of range for the month",
            ),
            (
                "Sun, 31 Apr 2026 00:00:00 GMT",
                "day out of range for the month",
            ),
            (
                "Sun, 00 Nov 1994 08:49:37 GMT",
                "day out of range for the month",
            ),
            (
                "Sun, 32 Jan 1994 08:49:37 GMT",
                "day out of range for the month",
            ),
            (
                "Sunday, 30-Feb-94 08:49:37 GMT",
                "day out of range for the month",
            ),
            ("Sunday, 06-Nov-94 24:49:37 GMT", "time of day out of range"),
            ("Sun Feb 30 08:49:37 1994", "day out of range for the month"),
            ("Sun Nov  0 08:49:37 1994", "day out of range for the month"),
            ("Sun Nov  6 08:49:61 1994", "time of day out of range"),
            (
                "Fri, 31 Dec 9999 23:59:60 GMT",
                "instant outside years 0000 to 9999",
            ),
        ] {
            let err = Timestamp::parse_http_date_at(bad, in_2026()).unwrap_err();
            assert_eq!(err.reason(), reason, "{bad}");
        }
    }

    #[test]
    fn http_date_rejects_malformed_input() {
        for bad in [
            "",
            " ",
            "\t\t",
            "0",
            "120",
            "-1",
            "garbage",
            "Sun",
            "Sun,",
            "Sun, ",
            "Sun, 06 Nov 1994",
            "Sun, 06 Nov 1994 08:49:37",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Nov 1994 08:49:37 GMT+1",
            "Sun, 06 Nov 1994 08:49:37 GMTx",
            "Sun, 06 Nov 1994 08:49:37 +0000",
            "Sun, 06 Nov 1994 08:49:37.5 GMT",
            "Sun, 6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 06 Nov 19940 08:49:37 GMT",
            "Sun, 06 Nov 1994 8:49:37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun,  06 Nov 1994 08:49:37 GMT",
            "Sun,06 Nov 1994 08:49:37 GMT",
            "Sun, 06  Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37  GMT",
            "Sun, 06 Nov 1994 08-49-37 GMT",
            "Sun, 06 Nov -994 08:49:37 GMT",
            "Sun, +6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT x",
            "Sun, 06 Nov 1994 08:49:37 GMT,",
            "Sun, ０6 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT\u{e9}",
            "Sun, 06 Nov 1994 08:49:37 GMT\n",
            "\nSun, 06 Nov 1994 08:49:37 GMT",
            "\u{a0}Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sunday, 6-Nov-94 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37",
            "Sunday, 06 Nov-94 08:49:37 GMT",
            "Sun Nov 6 08:49:37 1994",
            "Sun Nov   6 08:49:37 1994",
            "Sun Nov  6 08:49:37 94",
            "Sun Nov  6 08:49:37 1994 GMT",
            "Sun  Nov  6 08:49:37 1994",
            "Sun Nov  6 08:49:37",
            "1994-11-06T08:49:37Z",
        ] {
            let result = Timestamp::parse_http_date_at(bad, in_2026());
            assert!(result.is_err(), "{bad:?}: {result:?}");
        }
        // The message names the syntax and never repeats the input.
        let err = Timestamp::parse_http_date("Sun, 06 Nov 1994 08:49:37 UTC").unwrap_err();
        assert_eq!(err.reason(), "expected 'GMT'");
        let message = err.to_string();
        assert!(
            message.starts_with("invalid HTTP date: expected 'GMT'"),
            "{message}"
        );
        assert!(!message.contains("UTC"), "{message}");
        assert!(
            Timestamp::parse_rfc3339("x")
                .unwrap_err()
                .to_string()
                .starts_with("invalid RFC 3339 timestamp:")
        );
    }

    #[test]
    fn http_date_ignores_spaces_and_tabs_around_it() {
        let expected = ts("1994-11-06T08:49:37Z");
        for text in [
            " Sun, 06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT ",
            " \t Sunday, 06-Nov-94 08:49:37 GMT\t \t",
            "\tSun Nov  6 08:49:37 1994  ",
        ] {
            assert_eq!(http(text), expected, "{text:?}");
        }
    }

    #[test]
    fn http_date_survives_very_long_input() {
        let valid = "Sun, 06 Nov 1994 08:49:37 GMT";
        for long in [
            format!("{valid}{}", "x".repeat(1 << 20)),
            format!("{valid}{}", " ".repeat(1 << 20)),
            format!("{}{valid}{}", " ".repeat(1 << 20), "\t".repeat(1 << 20)),
            "S".repeat(1 << 20),
            "9".repeat(1 << 20),
            ",".repeat(1 << 20),
            format!("Sun,{}", " ".repeat(1 << 20)),
            format!("Sun, 06 Nov {} 08:49:37 GMT", "1".repeat(1 << 20)),
        ] {
            let result = Timestamp::parse_http_date_at(&long, in_2026());
            if long.trim_matches([' ', '\t']) == valid {
                assert_eq!(result, Ok(ts("1994-11-06T08:49:37Z")));
            } else {
                assert!(result.is_err(), "{} bytes", long.len());
            }
        }
    }

    /// Property-style: random byte strings, and every single-byte edit of valid dates, never
    /// panic; whatever parses formats back to itself.
    #[test]
    fn http_date_never_panics_on_arbitrary_input() {
        let mut state: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        const ALPHABET: &[u8] = b"SunMoTeWdhFriaJbpyJlgOcNvDG TM,-:0123456789 \t\xc3\xa9\xff\0";
        let nows = [
            in_2026(),
            Timestamp::MIN,
            Timestamp::MAX,
            Timestamp::UNIX_EPOCH,
        ];
        let check = |bytes: &[u8], now: Timestamp| {
            let text = String::from_utf8_lossy(bytes);
            if let Ok(t) = Timestamp::parse_http_date_at(&text, now) {
                // Whole seconds, and the canonical form reads back the same.
                assert_eq!(t.subsec_nanos(), 0, "{text:?}");
                assert_eq!(Timestamp::parse_http_date_at(&t.to_http_date(), now), Ok(t));
            }
        };
        for i in 0..50_000 {
            let len = (next() % 40) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    if r % 8 == 0 {
                        (r >> 8) as u8
                    } else {
                        ALPHABET[(r >> 8) as usize % ALPHABET.len()]
                    }
                })
                .collect();
            check(&bytes, nows[i % nows.len()]);
        }
        for valid in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "Fri, 31 Dec 9999 23:59:59 GMT",
            "Sat, 01 Jan 0000 00:00:00 GMT",
        ] {
            let valid = valid.as_bytes();
            for at in 0..=valid.len() {
                for &b in b" \t,-:09AZaz\xff" {
                    for edit in 0..3 {
                        let mut bytes = valid.to_vec();
                        match edit {
                            0 if at < bytes.len() => bytes[at] = b,
                            1 => bytes.insert(at, b),
                            2 if at < bytes.len() => {
                                bytes.remove(at);
                            }
                            _ => continue,
                        }
                        for now in nows {
                            check(&bytes, now);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn arithmetic() {
        let t = ts("2026-05-01T10:00:00.9Z");
        assert_eq!(
            t.checked_add(Duration::from_millis(200)).unwrap(),
            ts("2026-05-01T10:00:01.1Z")
        );
        assert_eq!(
            t.checked_sub(Duration::from_millis(950)).unwrap(),
            ts("2026-05-01T09:59:59.95Z")
        );
        assert_eq!(
            t.checked_sub(Duration::from_secs(30)).unwrap(),
            ts("2026-05-01T09:59:30.9Z")
        );
        assert!(
            Timestamp::MAX
                .checked_add(Duration::from_nanos(1))
                .is_none()
        );
        assert!(
            Timestamp::MIN
                .checked_sub(Duration::from_nanos(1))
                .is_none()
        );
        assert!(t.checked_add(Duration::MAX).is_none());
        assert!(Timestamp::from_unix(0, 1_000_000_000).is_none());
        assert!(Timestamp::from_unix_seconds(MAX_UNIX_SECONDS + 1).is_none());
    }

    #[test]
    fn timestamp_serde() {
        let t: Timestamp = serde_json::from_value(json!("2026-05-01T12:00:00+02:00")).unwrap();
        assert_eq!(
            serde_json::to_value(t).unwrap(),
            json!("2026-05-01T10:00:00Z")
        );
        let from_number: Timestamp = serde_json::from_value(json!(1_777_629_600)).unwrap();
        assert_eq!(from_number, t);
        let from_float: Timestamp = serde_json::from_value(json!(1_777_629_600.5)).unwrap();
        assert_eq!(from_float.subsec_nanos(), 500_000_000);
        for bad in [
            json!("soon"),
            json!(true),
            json!([]),
            json!({}),
            json!(1e300),
            json!(-1e300),
            json!(u64::MAX),
            json!(i64::MIN),
        ] {
            assert!(
                serde_json::from_value::<Timestamp>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }
}
