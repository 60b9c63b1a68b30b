//! RFC 3339 timestamps for `date_add`, strictly increasing within one emulator.
//!
//! Pages are listed by `date_add`, then `uid`. Real clocks hand out equal milliseconds to pages
//! created in a burst, which would order them by their random uids; a clock that never repeats a
//! value keeps listings in creation order, which is what people expect from the real service.

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use svc_model::Timestamp;

/// Hands out UTC timestamps with millisecond precision, each later than the one before.
#[derive(Debug, Default)]
pub struct MonotonicClock {
    last_millis: Mutex<i64>,
}

impl MonotonicClock {
    /// The current time, or one millisecond after the last value if the clock has not moved on.
    pub fn next(&self) -> String {
        let now = now_millis();
        // A poisoned lock still holds a valid integer.
        let mut last = self.last_millis.lock().unwrap_or_else(|e| e.into_inner());
        let millis = now.max(last.saturating_add(1));
        *last = millis;
        format_millis(millis)
    }
}

/// Milliseconds since the Unix epoch, now (0 for a clock set before it).
pub(crate) fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Formats milliseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`: the date and time
/// of [`svc_model::Timestamp`] (which leaves out a zero fraction), always with three digits of
/// milliseconds. Outside `Timestamp`'s years 0000 to 9999 it is clamped to them.
pub fn format_millis(millis: i64) -> String {
    let secs = millis.div_euclid(1000);
    let ms = millis.rem_euclid(1000);
    let (stamp, ms) = match Timestamp::from_unix(secs, 0) {
        Some(stamp) => (stamp, ms),
        None if secs < 0 => (Timestamp::MIN, 0),
        None => (Timestamp::MAX, 999),
    };
    let text = stamp.to_rfc3339();
    // `YYYY-MM-DDTHH:MM:SS`, then the fraction (if any) and `Z`.
    format!("{}.{ms:03}Z", &text[..19])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(format_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_millis(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(format_millis(1_709_251_199_999), "2024-02-29T23:59:59.999Z");
        assert_eq!(format_millis(-1000), "1969-12-31T23:59:59.000Z");
        assert_eq!(
            format_millis(253_402_300_799_000),
            "9999-12-31T23:59:59.000Z"
        );
    }

    #[test]
    fn never_repeats() {
        let clock = MonotonicClock::default();
        let stamps: Vec<String> = (0..200).map(|_| clock.next()).collect();
        assert!(stamps.windows(2).all(|w| w[0] < w[1]));
    }
}
