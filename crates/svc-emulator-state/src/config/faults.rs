//! Which faults an emulator injects (fault mode): the settings. The runtime injects them
//! (svc-emulator's `runtime::faults`).

use std::time::Duration;

/// The faults an emulator injects; see the crate README's fault mode section. Off by default: a `Faults` with
/// nothing set changes nothing.
///
/// The shares are probabilities per request, each in `0..=1`; together they are drawn from one
/// number, so `unavailable(0.2, 1).drop_before(0.1)` answers 20% of requests `503` and drops
/// another 10% (their sum is capped at 1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Faults {
    // Read by svc-emulator's runtime; users set them with the methods below, so the fields
    // stay out of the docs.
    #[doc(hidden)]
    pub latency: Duration,
    #[doc(hidden)]
    pub unavailable_share: f64,
    #[doc(hidden)]
    pub retry_after: u64,
    #[doc(hidden)]
    pub retry_after_date: bool,
    #[doc(hidden)]
    pub drop_before_share: f64,
    #[doc(hidden)]
    pub drop_midway_share: f64,
    pub(crate) idle_close: Option<Duration>,
    #[doc(hidden)]
    pub seed: Option<u64>,
    /// Upper-case method names.
    #[doc(hidden)]
    pub methods: Option<Vec<String>>,
    #[doc(hidden)]
    pub path_contains: Option<String>,
}

impl Faults {
    /// No faults; add some with the other methods.
    pub fn new() -> Self {
        Self::default()
    }

    /// Waits this long before handling each (selected) request.
    pub fn latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// Answers this share of requests `503 Service Unavailable` with `Retry-After:
    /// retry_after_secs`, without running them.
    pub fn unavailable(mut self, share: f64, retry_after_secs: u64) -> Self {
        self.unavailable_share = clamp_share(share);
        self.retry_after = retry_after_secs;
        self
    }

    /// Writes the `Retry-After` of [`unavailable`](Self::unavailable) answers as an HTTP-date
    /// (`Retry-After: Fri, 01 May 2026 10:00:03 GMT`) instead of a number of seconds: the
    /// emulator's clock plus `retry_after_secs`, rounded up to the next whole second, so a
    /// client that honours it waits at least that long. RFC 9110 allows both forms.
    ///
    /// ```
    /// use svc_emulator::Faults;
    ///
    /// let faults = Faults::new().unavailable(1.0, 3).retry_after_as_http_date(true);
    /// # let _ = faults;
    /// ```
    pub fn retry_after_as_http_date(mut self, on: bool) -> Self {
        self.retry_after_date = on;
        self
    }

    /// Closes the connection of this share of requests without answering and without running
    /// them.
    pub fn drop_before(mut self, share: f64) -> Self {
        self.drop_before_share = clamp_share(share);
        self
    }

    /// Runs this share of requests, then sends the status line, the headers and part of the
    /// body of the answer, and closes the connection. A request whose answer has no body gets
    /// no answer at all (it was still applied).
    pub fn drop_midway(mut self, share: f64) -> Self {
        self.drop_midway_share = clamp_share(share);
        self
    }

    /// Closes HTTP/1.1 keep-alive connections that wait longer than this for their next
    /// request, as servers and load balancers do; a client's pooled connection goes stale.
    pub fn idle_close(mut self, idle: Duration) -> Self {
        self.idle_close = Some(idle);
        self
    }

    /// Seeds the generator that picks the faulty requests, for repeatable runs. Without a seed,
    /// each start picks a different sequence.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Injects faults (latency included) only into requests with one of these methods
    /// (e.g. `["GET"]`); other requests pass untouched.
    pub fn only_methods<M, I>(mut self, methods: I) -> Self
    where
        I: IntoIterator<Item = M>,
        M: AsRef<str>,
    {
        self.methods = Some(
            methods
                .into_iter()
                .map(|m| m.as_ref().to_ascii_uppercase())
                .collect(),
        );
        self
    }

    /// Injects faults (latency included) only into requests whose path contains `fragment`
    /// (e.g. `"/models/"`); other requests pass untouched.
    pub fn only_paths_containing(mut self, fragment: impl Into<String>) -> Self {
        self.path_contains = Some(fragment.into());
        self
    }

    /// Whether any fault is set.
    pub fn is_active(&self) -> bool {
        !self.latency.is_zero()
            || self.unavailable_share > 0.0
            || self.drop_before_share > 0.0
            || self.drop_midway_share > 0.0
            || self.idle_close.is_some()
    }

    /// The idle time after which keep-alive connections are closed, if set.
    #[doc(hidden)]
    pub fn idle_close_after(&self) -> Option<Duration> {
        self.idle_close
    }
}

fn clamp_share(share: f64) -> f64 {
    if share.is_nan() {
        0.0
    } else {
        share.clamp(0.0, 1.0)
    }
}
