//! Dates and times as the engine reads and writes them: ISO text parsed as Python's
//! `fromisoformat` and SQLite's stored forms read it, and written in ISO 8601 form.

use crate::json_text::write_digits;

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
    pub fn valid(self) -> bool {
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
    pub fn days(self) -> i64 {
        let (m, d) = (i64::from(self.month), i64::from(self.day));
        let y = i64::from(self.year) - i64::from(m <= 2);
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
        era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
    }

    /// The proleptic Gregorian date `days` days after 1970-01-01 (a year before 1 as 0).
    pub fn from_days(days: i64) -> Date {
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

    /// Python's `strftime('%Y-%m-%d')` on Linux (glibc): the year is **not** padded, so year
    /// 99 is `99-12-31` and year 1 `1-01-01` (`isoformat()` pads: `0099-12-31`).
    pub fn strftime_ymd(self) -> String {
        format!("{}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// `isoformat()`: `YYYY-MM-DD`.
    pub fn iso(self) -> String {
        let mut buf = Vec::with_capacity(10);
        self.write_iso(&mut buf);
        String::from_utf8(buf).unwrap_or_default()
    }

    /// Writes [`iso`](Self::iso) into `buf`, without `fmt` (records write one per row).
    pub fn write_iso(self, buf: &mut Vec<u8>) {
        write_padded(buf, self.year, 4);
        buf.push(b'-');
        write_padded(buf, self.month, 2);
        buf.push(b'-');
        write_padded(buf, self.day, 2);
    }
}

impl Time {
    /// Whether each part is in its range (a time of day, microseconds below a second).
    pub fn valid(self) -> bool {
        self.hour < 24 && self.minute < 60 && self.second < 60 && self.micro < 1_000_000
    }

    /// `isoformat()`: `HH:MM:SS`, then `.ffffff` when the microseconds are not zero.
    pub fn iso(self) -> String {
        let mut buf = Vec::with_capacity(15);
        self.write_iso(&mut buf);
        String::from_utf8(buf).unwrap_or_default()
    }

    /// Writes [`iso`](Self::iso) into `buf`, without `fmt`.
    pub fn write_iso(self, buf: &mut Vec<u8>) {
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
pub fn write_iso_json(buf: &mut Vec<u8>, date: Option<Date>, time: Option<Time>) {
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

/// Reads a number like C's `sscanf` conversion `%Nu`: white space skipped, then at most `max`
/// characters of an optional sign and at least one digit. A negative number wraps as C's
/// `unsigned` does (past any valid date or time part, but `-0` is 0).
fn scan_digits(s: &[u8], at: &mut usize, max: usize) -> Option<u32> {
    while s
        .get(*at)
        .is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
    {
        *at += 1;
    }
    let start = *at;
    let sign = s
        .get(*at)
        .copied()
        .filter(|c| matches!(c, b'-' | b'+') && max > 1);
    if sign.is_some() {
        *at += 1;
    }
    let negative = sign == Some(b'-');
    let digits = *at;
    while *at < s.len() && *at - start < max && s[*at].is_ascii_digit() {
        *at += 1;
    }
    if *at == digits {
        *at = start;
        return None;
    }
    let n: u32 = std::str::from_utf8(&s[digits..*at]).ok()?.parse().ok()?;
    Some(if negative && n != 0 { u32::MAX } else { n })
}

fn expect(s: &[u8], at: &mut usize, c: u8) -> Option<()> {
    (s.get(*at) == Some(&c)).then(|| *at += 1)
}

/// SQLAlchemy's C date parser (`cprocessors.str_to_date`, which the engine runs):
/// `sscanf("%4u-%2u-%2u")` with all three matched (`2024-3-5x` is a date, `02024-03-05` is not).
pub fn parse_date(text: &[u8]) -> Option<Date> {
    let mut at = 0;
    let year = scan_digits(text, &mut at, 4)?;
    expect(text, &mut at, b'-')?;
    let month = scan_digits(text, &mut at, 2)?;
    expect(text, &mut at, b'-')?;
    let day = scan_digits(text, &mut at, 2)?;
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

/// SQLAlchemy's C time parser (`cprocessors.str_to_time`, which the engine runs):
/// `sscanf("%2u:%2u:%2u.%6u")` with at least the seconds matched; microseconds are the digits as
/// a number (`10:11:12.5` is 5 µs past 12 s, as the engine reads it).
pub fn parse_time(text: &[u8]) -> Option<Time> {
    let mut at = 0;
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
    let t = Time {
        hour,
        minute,
        second,
        micro,
    };
    t.valid().then_some(t)
}
