//! Fault injection: added latency, `503` answers with `Retry-After`, connections dropped before
//! or in the middle of a response, and idle keep-alive connections closed early. For testing
//! clients' retries, timeouts and idempotency rules against a server that misbehaves the way
//! real ones do.
//!
//! Faults apply per request, at the connection layer, before the router:
//!
//! | fault | what the client sees | was the request applied? |
//! | --- | --- | --- |
//! | latency | the answer, later | yes |
//! | unavailable | `503` `{"error","error_code":"unavailable"}` with `Retry-After` (seconds, or an HTTP-date with [`retry_after_as_http_date`](Faults::retry_after_as_http_date)) | no |
//! | drop before | the connection closes, no answer | no |
//! | drop midway | the status line, headers and part of the body, then the connection closes | **yes** |
//! | idle close | a kept-alive connection idle for that long is closed by the server | — |
//!
//! The "drop midway" fault is the one that makes a create dangerous to retry: the record was
//! written, but the client never learns its answer.
//!
//! Which fault a request gets is drawn from a small xorshift generator: with a
//! [`seed`](Faults::seed), the same sequence of requests gets the same faults.
//!
//! ```
//! use std::time::Duration;
//! use svc_emulator::{EmulatorConfig, Faults};
//!
//! let faults = Faults::new()
//!     .latency(Duration::from_millis(20))
//!     .unavailable(0.2, 1)
//!     .drop_before(0.1)
//!     .seed(7)
//!     .only_methods(["GET"]);
//! let config = EmulatorConfig::default().faults(faults);
//! assert!(config.fault_settings().is_some());
//! ```

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, Method, Request, Response, StatusCode, header};
use bytes::Bytes;
use hyper::body::{Frame, Incoming, SizeHint};
use svc_model::Timestamp;
use svc_model::error_body::codes;

use crate::ui::Front;

pub use svc_emulator_state::config::faults::Faults;

/// The `Retry-After` of a `503` sent at `now`: seconds, or the date that many seconds on.
fn retry_after_value(faults: &Faults, now: Timestamp) -> HeaderValue {
    if !faults.retry_after_is_http_date() {
        return HeaderValue::from(faults.retry_after_secs());
    }
    let date = now
        .checked_add(Duration::from_secs(faults.retry_after_secs()))
        // Rounded up: the client never retries before the seconds asked for.
        .and_then(|t| match t.subsec_nanos() {
            0 => Some(t),
            _ => Timestamp::from_unix_seconds(t.unix_seconds().checked_add(1)?),
        })
        .unwrap_or(Timestamp::MAX);
    // An IMF-fixdate is plain ASCII.
    HeaderValue::from_str(&date.to_http_date()).unwrap_or(HeaderValue::from_static("0"))
}

/// Whether the faults apply to a request of `method` on `path`.
fn selects(faults: &Faults, method: &Method, path: &str) -> bool {
    faults
        .selected_methods()
        .is_none_or(|m| m.iter().any(|m| m == method.as_str()))
        && faults
            .selected_path_fragment()
            .is_none_or(|f| path.contains(f))
}

/// How many requests met each fault since the emulator started; from
/// [`Emulator::fault_counts`](crate::Emulator::fault_counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FaultCounts {
    /// Connections accepted (a client that reconnects after a drop or an idle close opens a
    /// new one).
    pub connections: u64,
    /// Requests the fault layer saw (selected or not).
    pub requests: u64,
    /// Requests selected for faults (by method and path), hence delayed by the latency.
    pub selected: u64,
    /// Requests answered `503` without running.
    pub unavailable: u64,
    /// Requests whose connection was closed before they ran.
    pub dropped_before: u64,
    /// Requests that ran and whose answer was cut off.
    pub dropped_midway: u64,
}

/// What one request gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Fate {
    Serve,
    Unavailable,
    DropBefore,
    DropMidway,
}

/// The faults of a running server, with their generator and counters.
pub(crate) struct FaultState {
    faults: Faults,
    rng: Mutex<XorShift>,
    connections: AtomicU64,
    requests: AtomicU64,
    selected: AtomicU64,
    unavailable: AtomicU64,
    dropped_before: AtomicU64,
    dropped_midway: AtomicU64,
}

impl fmt::Debug for FaultState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultState")
            .field("faults", &self.faults)
            .field("counts", &self.counts())
            .finish_non_exhaustive()
    }
}

impl FaultState {
    pub(crate) fn new(faults: Faults) -> Self {
        let seed = faults.fixed_seed().unwrap_or_else(random_seed);
        Self {
            faults,
            rng: Mutex::new(XorShift::new(seed)),
            connections: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            selected: AtomicU64::new(0),
            unavailable: AtomicU64::new(0),
            dropped_before: AtomicU64::new(0),
            dropped_midway: AtomicU64::new(0),
        }
    }

    pub(crate) fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Counts a connection accepted.
    pub(crate) fn connection_opened(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn counts(&self) -> FaultCounts {
        FaultCounts {
            connections: self.connections.load(Ordering::Relaxed),
            requests: self.requests.load(Ordering::Relaxed),
            selected: self.selected.load(Ordering::Relaxed),
            unavailable: self.unavailable.load(Ordering::Relaxed),
            dropped_before: self.dropped_before.load(Ordering::Relaxed),
            dropped_midway: self.dropped_midway.load(Ordering::Relaxed),
        }
    }

    fn draw(&self) -> Fate {
        let f = &self.faults;
        let (unavailable, drop_before, drop_midway) = (
            f.unavailable_share(),
            f.drop_before_share(),
            f.drop_midway_share(),
        );
        if unavailable + drop_before + drop_midway <= 0.0 {
            return Fate::Serve;
        }
        let r = self.rng.lock().unwrap_or_else(|e| e.into_inner()).unit();
        let mut bound = unavailable;
        if r < bound {
            return Fate::Unavailable;
        }
        bound += drop_before;
        if r < bound {
            return Fate::DropBefore;
        }
        bound += drop_midway;
        if r < bound {
            return Fate::DropMidway;
        }
        Fate::Serve
    }

    /// Serves one request through `router`, with the faults it draws. An `Err` makes hyper
    /// close the connection (HTTP/1.1) or reset the stream (HTTP/2) without an answer.
    pub(crate) async fn serve(
        self: Arc<Self>,
        router: Front,
        request: Request<Incoming>,
    ) -> Result<Response<Body>, Dropped> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        if !selects(&self.faults, request.method(), request.uri().path()) {
            return Ok(run(router, request).await);
        }
        self.selected.fetch_add(1, Ordering::Relaxed);
        let latency = self.faults.latency_per_request();
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        match self.draw() {
            Fate::Serve => Ok(run(router, request).await),
            Fate::Unavailable => {
                self.unavailable.fetch_add(1, Ordering::Relaxed);
                Ok(unavailable(retry_after_value(
                    &self.faults,
                    Timestamp::now(),
                )))
            }
            Fate::DropBefore => {
                self.dropped_before.fetch_add(1, Ordering::Relaxed);
                Err(Dropped("before the request ran"))
            }
            Fate::DropMidway => {
                self.dropped_midway.fetch_add(1, Ordering::Relaxed);
                let response = run(router, request).await;
                cut_off(response).await
            }
        }
    }
}

/// Runs `request` through the router (and the request journal), untouched.
pub(crate) async fn run(router: Front, request: Request<Incoming>) -> Response<Body> {
    router.serve(request).await
}

/// The `503` answer: the emulator's usual JSON error body.
fn unavailable(retry_after: HeaderValue) -> Response<Body> {
    let body = svc_model::ErrorResponse::new(
        codes::UNAVAILABLE,
        "The service is unavailable (emulator fault mode); try again later.",
    );
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::RETRY_AFTER, retry_after);
    response
}

/// The answer of a request that ran, cut off after the headers and half of its body; an answer
/// without a body is not sent at all.
async fn cut_off(response: Response<Body>) -> Result<Response<Body>, Dropped> {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return Err(Dropped("midway (the answer could not be read)"));
    };
    if bytes.len() < 2 {
        return Err(Dropped("after the request ran (an answer without a body)"));
    }
    parts
        .headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    let sent = bytes.slice(..bytes.len() / 2);
    Ok(Response::from_parts(
        parts,
        Body::new(CutBody {
            state: Cut::Part(sent),
        }),
    ))
}

/// Why the fault layer dropped a connection; hyper only logs it (nowhere, here).
#[derive(Debug)]
pub(crate) struct Dropped(pub(crate) &'static str);

impl fmt::Display for Dropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "fault mode: connection dropped {}", self.0)
    }
}

impl std::error::Error for Dropped {}

/// A body that yields its first part, pauses so that hyper flushes it, then fails, which makes
/// hyper abort the connection.
struct CutBody {
    state: Cut,
}

enum Cut {
    Part(Bytes),
    Pause(Pin<Box<tokio::time::Sleep>>),
    Done,
}

/// How long the cut body waits between its part and its failure: long enough for hyper to
/// write the part out.
const CUT_PAUSE: Duration = Duration::from_millis(20);

impl hyper::body::Body for CutBody {
    type Data = Bytes;
    type Error = Dropped;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Dropped>>> {
        loop {
            match &mut self.state {
                Cut::Part(part) => {
                    let part = std::mem::take(part);
                    self.state = Cut::Pause(Box::pin(tokio::time::sleep(CUT_PAUSE)));
                    return Poll::Ready(Some(Ok(Frame::data(part))));
                }
                Cut::Pause(sleep) => {
                    std::task::ready!(sleep.as_mut().poll(cx));
                    self.state = Cut::Done;
                }
                Cut::Done => return Poll::Ready(Some(Err(Dropped("midway through the answer")))),
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        false
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}

/// xorshift64*: tiny, fast, and good enough to pick faulty requests.
#[derive(Debug)]
struct XorShift(u64);

impl XorShift {
    fn new(seed: u64) -> Self {
        // Zero is the one state xorshift never leaves; mix the seed so that small seeds differ.
        let mixed = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
        Self(if mixed == 0 { 1 } else { mixed })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A uniform number in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn random_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    // RandomState is seeded per process from the OS.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x5EED);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_deterministic_and_uniform_enough() {
        let mut a = XorShift::new(42);
        let mut b = XorShift::new(42);
        let xs: Vec<f64> = (0..1000).map(|_| a.unit()).collect();
        let ys: Vec<f64> = (0..1000).map(|_| b.unit()).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().all(|x| (0.0..1.0).contains(x)));
        let below_half = xs.iter().filter(|&&x| x < 0.5).count();
        assert!((400..600).contains(&below_half), "{below_half}");
        assert_ne!(XorShift::new(0).next(), 0);
    }

    #[test]
    fn shares_are_drawn_in_order_and_counted_once() {
        let state = FaultState::new(
            Faults::new()
                .unavailable(0.25, 3)
                .drop_before(0.25)
                .drop_midway(0.25)
                .seed(1),
        );
        let mut seen = std::collections::HashMap::new();
        for _ in 0..4000 {
            *seen.entry(state.draw()).or_insert(0) += 1;
        }
        for fate in [
            Fate::Serve,
            Fate::Unavailable,
            Fate::DropBefore,
            Fate::DropMidway,
        ] {
            let n = seen.get(&fate).copied().unwrap_or(0);
            assert!((800..1200).contains(&n), "{fate:?}: {n}");
        }
        let none = FaultState::new(Faults::new().latency(Duration::from_millis(1)));
        assert!((0..100).all(|_| none.draw() == Fate::Serve));
    }

    #[test]
    fn selection_by_method_and_path() {
        let f = Faults::new()
            .only_methods(["get", "DELETE"])
            .only_paths_containing("/models/");
        assert!(selects(&f, &Method::GET, "/projects/p/e/r/models/m"));
        assert!(selects(&f, &Method::DELETE, "/projects/p/e/r/models/m/1"));
        assert!(!selects(&f, &Method::POST, "/projects/p/e/r/models/m"));
        assert!(!selects(&f, &Method::GET, "/api/projects/p/"));
        assert!(selects(&Faults::new(), &Method::PATCH, "/"));
    }

    #[test]
    fn retry_after_is_seconds_or_an_http_date_at_least_that_far() {
        let now = Timestamp::parse_rfc3339("2026-05-01T10:00:00.25Z").unwrap();
        let seconds = Faults::new().unavailable(1.0, 3);
        assert_eq!(retry_after_value(&seconds, now), "3");
        let dated = seconds.clone().retry_after_as_http_date(true);
        // 10:00:03.25, rounded up.
        assert_eq!(
            retry_after_value(&dated, now),
            "Fri, 01 May 2026 10:00:04 GMT"
        );
        let whole = Timestamp::parse_rfc3339("2026-05-01T10:00:00Z").unwrap();
        assert_eq!(
            retry_after_value(&dated, whole),
            "Fri, 01 May 2026 10:00:03 GMT"
        );
        // Past the last representable instant: the last whole second, not a panic.
        let forever = Faults::new()
            .unavailable(1.0, u64::MAX)
            .retry_after_as_http_date(true);
        assert_eq!(
            retry_after_value(&forever, now),
            "Fri, 31 Dec 9999 23:59:59 GMT"
        );
        let response = unavailable(retry_after_value(&dated, now));
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        let sent = response.headers()[header::RETRY_AFTER].to_str().unwrap();
        let date = Timestamp::parse_http_date(sent).unwrap();
        assert_eq!(date.unix_seconds() - now.unix_seconds(), 4);
    }
}
