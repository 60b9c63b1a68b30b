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
    latency: Duration,
    unavailable_share: f64,
    retry_after: u64,
    retry_after_date: bool,
    drop_before_share: f64,
    drop_midway_share: f64,
    idle_close: Option<Duration>,
    seed: Option<u64>,
    /// Upper-case method names.
    methods: Option<Vec<String>>,
    path_contains: Option<String>,
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

    /// The latency of [`latency`](Self::latency): how long each selected request waits.
    pub fn latency_per_request(&self) -> Duration {
        self.latency
    }

    /// The share of requests answered `503` ([`unavailable`](Self::unavailable)), in `0..=1`.
    pub fn unavailable_share(&self) -> f64 {
        self.unavailable_share
    }

    /// The seconds of the `Retry-After` of a `503` ([`unavailable`](Self::unavailable)).
    pub fn retry_after_secs(&self) -> u64 {
        self.retry_after
    }

    /// Whether that `Retry-After` is written as an HTTP-date
    /// ([`retry_after_as_http_date`](Self::retry_after_as_http_date)).
    pub fn retry_after_is_http_date(&self) -> bool {
        self.retry_after_date
    }

    /// The share of requests whose connection is closed before they run
    /// ([`drop_before`](Self::drop_before)), in `0..=1`.
    pub fn drop_before_share(&self) -> f64 {
        self.drop_before_share
    }

    /// The share of requests whose answer is cut off ([`drop_midway`](Self::drop_midway)), in
    /// `0..=1`.
    pub fn drop_midway_share(&self) -> f64 {
        self.drop_midway_share
    }

    /// The idle time after which keep-alive connections are closed
    /// ([`idle_close`](Self::idle_close)), if set.
    pub fn idle_close_after(&self) -> Option<Duration> {
        self.idle_close
    }

    /// The seed of [`seed`](Self::seed), if one was given.
    pub fn fixed_seed(&self) -> Option<u64> {
        self.seed
    }

    /// The methods of [`only_methods`](Self::only_methods) (upper case), if the faults are
    /// limited to some.
    pub fn selected_methods(&self) -> Option<&[String]> {
        self.methods.as_deref()
    }

    /// The fragment of [`only_paths_containing`](Self::only_paths_containing), if the faults
    /// are limited to the paths that contain it.
    pub fn selected_path_fragment(&self) -> Option<&str> {
        self.path_contains.as_deref()
    }
}

fn clamp_share(share: f64) -> f64 {
    if share.is_nan() {
        0.0
    } else {
        share.clamp(0.0, 1.0)
    }
}
