//! Retries: when a failed request is tried again, and how long to wait.

use std::time::Duration;

/// How the client retries failed requests.
///
/// A request is retried only when trying again cannot do harm:
/// - a connection that never opened is retried for every request (nothing was sent);
/// - timeouts, lost connections and `429`, `502`, `503`, `504` answers are retried only for
///   idempotent requests: `GET`, `PUT`, `DELETE` and read-only `POST`s (aggregate, group, SQL),
///   never for a create or an update;
/// - a `Retry-After` header sets the wait, up to [`max_retry_after`](Self::max_retry_after);
///   longer asks are not waited for and the error is returned. Both of its forms count:
///   delay-seconds (`Retry-After: 120`) and an HTTP-date (`Retry-After: Fri, 01 May 2026
///   10:00:00 GMT`), whose wait is the time until that date by the system clock, rounded up to
///   a whole second (none when the date is past);
/// - otherwise the wait grows exponentially from [`initial_backoff`](Self::initial_backoff) up to
///   [`max_backoff`](Self::max_backoff), with full jitter.
///
/// ```
/// use std::time::Duration;
/// use svc_api::RetryPolicy;
/// let patient = RetryPolicy::default().max_attempts(5).max_backoff(Duration::from_secs(10));
/// let never = RetryPolicy::none();
/// assert_eq!(never.attempts(), 1);
/// # let _ = patient;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// 3 attempts, 100 ms initial backoff, 5 s maximum backoff, `Retry-After` honoured up to 60 s.
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries: every request is tried once.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// Total attempts, the first included (at least 1).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The wait before the first retry; later waits double.
    pub fn initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }

    /// The longest wait between two attempts (before jitter).
    pub fn max_backoff(mut self, backoff: Duration) -> Self {
        self.max_backoff = backoff;
        self
    }

    /// The longest `Retry-After` the client waits for; a longer one ends the retries.
    pub fn max_retry_after(mut self, limit: Duration) -> Self {
        self.max_retry_after = limit;
        self
    }

    /// Total attempts, the first included.
    pub fn attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The wait before attempt `attempt + 1` (`attempt` counts from 1), or `None` when the
    /// policy allows no more attempts or the server asks for a longer wait than allowed.
    #[cfg(feature = "_sends")]
    pub(crate) fn delay(
        &self,
        attempt: u32,
        retry_after: Option<Duration>,
        jitter: &mut Jitter,
    ) -> Option<Duration> {
        if attempt >= self.max_attempts {
            return None;
        }
        if let Some(asked) = retry_after {
            return (asked <= self.max_retry_after).then_some(asked);
        }
        let exp = self
            .initial_backoff
            .saturating_mul(1u32.checked_shl(attempt - 1).unwrap_or(u32::MAX));
        let capped = exp.min(self.max_backoff);
        Some(jitter.scale(capped))
    }
}

/// A small xorshift generator for backoff jitter: no need for a cryptographic RNG dependency.
#[cfg(feature = "_sends")]
#[derive(Debug)]
pub(crate) struct Jitter(u64);

#[cfg(feature = "_sends")]
impl Jitter {
    pub(crate) fn new() -> Self {
        use std::hash::{BuildHasher, Hasher};
        // RandomState is seeded per process from the OS; good enough to decorrelate clients.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(0x9E37_79B9_7F4A_7C15);
        Self(h.finish() | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// "Full jitter": a uniform wait between half of `d` and `d`.
    fn scale(&mut self, d: Duration) -> Duration {
        let frac = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        d.mul_f64(0.5 + frac / 2.0)
    }
}

#[cfg(all(test, feature = "_sends"))]
mod tests {
    use super::*;

    #[test]
    fn stops_after_max_attempts() {
        let p = RetryPolicy::default().max_attempts(3);
        let mut j = Jitter::new();
        assert!(p.delay(1, None, &mut j).is_some());
        assert!(p.delay(2, None, &mut j).is_some());
        assert!(p.delay(3, None, &mut j).is_none());
        assert!(RetryPolicy::none().delay(1, None, &mut j).is_none());
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy::default()
            .max_attempts(20)
            .initial_backoff(Duration::from_millis(100))
            .max_backoff(Duration::from_secs(1));
        let mut j = Jitter::new();
        for attempt in 1..20 {
            let d = p.delay(attempt, None, &mut j).unwrap();
            let base = Duration::from_millis(100 * (1u64 << (attempt - 1).min(20)))
                .min(Duration::from_secs(1));
            assert!(
                d >= base / 2 && d <= base,
                "attempt {attempt}: {d:?} vs {base:?}"
            );
        }
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_limit() {
        let p = RetryPolicy::default().max_retry_after(Duration::from_secs(10));
        let mut j = Jitter::new();
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(7)), &mut j),
            Some(Duration::from_secs(7))
        );
        assert_eq!(p.delay(1, Some(Duration::from_secs(11)), &mut j), None);
        // The largest ask (a huge delay-seconds value) ends the retries without overflowing.
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(u64::MAX)), &mut j),
            None
        );
        // A date in the past asks for no wait at all.
        assert_eq!(
            p.delay(1, Some(Duration::ZERO), &mut j),
            Some(Duration::ZERO)
        );
    }
}
