//! Assertions over the request journal, in the manner of wiremock's expectations: a
//! [`RequestMatcher`] says which requests count, [`Times`] how many must, and an
//! [`UnmetExpectation`] says what was received instead, near misses first.

use std::fmt;
use std::ops::{RangeFrom, RangeInclusive, RangeToInclusive};

use serde_json::Value;
use svc_model::Timestamp;

use super::record::{RecordedRequest, RequestSource, StubId};

/// Which recorded requests count: every condition set must hold (none set: every request).
///
/// Paths are compared as the journal shows them: percent-encoded as sent, with secrets as
/// `***`; a trailing `/` is ignored by [`path`](Self::path). Names (project, resource, ...) are
/// compared decoded.
///
/// ```
/// use svc_emulator::RequestMatcher;
///
/// let created = RequestMatcher::post()
///     .path("/projects/demo/prod/shop/models/orders")
///     .status(201);
/// let any_order_read = RequestMatcher::get().resource("shop").model("orders");
/// let failures = RequestMatcher::any().project("demo").status_range(400..=599);
/// assert_eq!(
///     created.to_string(),
///     "POST /projects/demo/prod/shop/models/orders status 201"
/// );
/// # let _ = (any_order_read, failures);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use]
pub struct RequestMatcher {
    // The crate's stubs read the conditions a stub can hold (`stubs::parts_of`).
    pub(crate) method: Option<String>,
    pub(crate) path: Option<String>,
    pub(crate) path_prefix: Option<String>,
    pub(crate) query: Vec<(String, String)>,
    pub(crate) project: Option<String>,
    pub(crate) environment: Option<String>,
    pub(crate) resource: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) status: Option<RangeInclusive<u16>>,
    pub(crate) since: Option<Timestamp>,
    pub(crate) json_body: Option<Value>,
    /// Which sources count: the clients' requests only, unless told.
    pub(crate) source: Option<RequestSource>,
    any_source: bool,
    /// Answered by this stub (expectations on a stub).
    pub(crate) stub: Option<u64>,
    /// The stub's number alone decides a match (the other conditions rank the near misses):
    /// the stub chose its requests as they came, bodies and secrets included, which the
    /// journal's copy may not show.
    stub_decides: bool,
}

/// One condition of a matcher, for the near misses' report.
#[derive(Clone, Copy)]
enum Condition {
    Method,
    Path,
    PathPrefix,
    Query,
    Project,
    Environment,
    Resource,
    Model,
    Status,
    Body,
    Stub,
}

impl Condition {
    /// How much a condition that holds makes a request look like the one expected.
    fn weight(self) -> u32 {
        match self {
            Self::Path | Self::PathPrefix => 4,
            Self::Model => 3,
            Self::Method | Self::Resource => 2,
            Self::Query
            | Self::Project
            | Self::Environment
            | Self::Status
            | Self::Body
            | Self::Stub => 1,
        }
    }
}

impl RequestMatcher {
    /// Matches every request; narrow it with the other methods.
    pub fn any() -> Self {
        Self::default()
    }

    /// `GET` requests.
    pub fn get() -> Self {
        Self::any().method("GET")
    }

    /// `POST` requests.
    pub fn post() -> Self {
        Self::any().method("POST")
    }

    /// `PUT` requests.
    pub fn put() -> Self {
        Self::any().method("PUT")
    }

    /// `PATCH` requests.
    pub fn patch() -> Self {
        Self::any().method("PATCH")
    }

    /// `DELETE` requests.
    pub fn delete() -> Self {
        Self::any().method("DELETE")
    }

    /// Requests of this method (ASCII case ignored).
    pub fn method(mut self, method: impl Into<String>) -> Self {
        self.method = Some(method.into().to_ascii_uppercase());
        self
    }

    /// Requests to exactly this path (without the query), a trailing `/` ignored on both
    /// sides, e.g. `/projects/demo/prod/shop/models/orders` or `/api/projects/demo/`.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }

    /// Requests whose path starts with `prefix`, e.g. `/projects/demo/prod/shop/`.
    pub fn path_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.path_prefix = Some(prefix.into());
        self
    }

    /// Requests whose query has the parameter `name` with the value `value` (both compared
    /// decoded; a secret parameter's value is `***`). Repeat for more parameters.
    pub fn query_param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((name.into(), value.into()));
        self
    }

    /// Requests that belong to this project (as [`RecordedRequest::project`] names it).
    pub fn project(mut self, project: impl Into<String>) -> Self {
        self.project = Some(project.into());
        self
    }

    /// Requests whose path names this environment.
    pub fn environment(mut self, environment: impl Into<String>) -> Self {
        self.environment = Some(environment.into());
        self
    }

    /// Requests whose path names this resource.
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// Requests whose path names this model.
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Requests answered with this status code.
    pub fn status(mut self, status: u16) -> Self {
        self.status = Some(status..=status);
        self
    }

    /// Requests answered with a status code in `range`, e.g. `400..=499`.
    pub fn status_range(mut self, range: RangeInclusive<u16>) -> Self {
        self.status = Some(range);
        self
    }

    /// Only requests that arrived at `since` or later count (the others are neither matches
    /// nor near misses).
    pub fn since(mut self, since: Timestamp) -> Self {
        self.since = Some(since);
        self
    }

    /// Requests whose JSON body includes `expected`: an object's keys with values that
    /// include the expected ones (recursively; other keys may be there too), any other value
    /// equal. Needs the journal's bodies
    /// ([`EmulatorConfig::journal_bodies`](../svc_emulator/struct.EmulatorConfig.html#method.journal_bodies)); without
    /// them no request matches, and a failed assertion says so.
    pub fn json_body_includes(mut self, expected: Value) -> Self {
        self.json_body = Some(expected);
        self
    }

    /// Requests of this source only: [`RequestSource::Ui`] for the web page's own requests,
    /// which a matcher leaves out unless told (so browsing a shared emulator never changes
    /// what a test's expectations count).
    pub fn source(mut self, source: RequestSource) -> Self {
        self.source = Some(source);
        self.any_source = false;
        self
    }

    /// Requests of every source: the clients' and the web page's.
    pub fn any_source(mut self) -> Self {
        self.source = None;
        self.any_source = true;
        self
    }

    /// Requests answered by stub `id` (as [`RecordedRequest::stub`] shows it), beside the
    /// other conditions: the `stub` filter of `GET /_emulator/projects/{project}/requests`.
    /// Not a condition of a stub's own matcher, which answers before there is an answer
    /// ([`StubError::NotBeforeAnswer`](../svc_emulator/enum.StubError.html#variant.NotBeforeAnswer)).
    ///
    /// ```
    /// use svc_emulator::{RequestMatcher, StubId};
    ///
    /// let answered = RequestMatcher::get().answered_by(StubId(2));
    /// assert_eq!(answered.to_string(), "GET answered by stub 2");
    /// ```
    pub fn answered_by(mut self, id: StubId) -> Self {
        self.stub = Some(id.0);
        self
    }

    /// The requests stub `id` answered, whatever the other conditions say of the journal's
    /// copy of them; the other conditions rank the near misses (the expectations on a stub).
    pub(crate) fn decided_by_stub(mut self, id: u64) -> Self {
        self.stub = Some(id);
        self.stub_decides = true;
        self
    }

    /// Whether `request` matches every condition.
    pub fn matches(&self, request: &RecordedRequest) -> bool {
        if !self.in_window(request) {
            return false;
        }
        match self.stub {
            Some(id) if self.stub_decides => request.stub == Some(StubId(id)),
            _ => self.conditions(request).all(|(_, held)| held),
        }
    }

    /// Whether the matcher asks about bodies.
    pub(crate) fn reads_bodies(&self) -> bool {
        // A stub's number decides without the journal's bodies.
        self.json_body.is_some() && !self.stub_decides
    }

    /// The start of the matcher's time window, if any: what the journal need not read before
    /// ([`Journal::records_for`](super::Journal::records_for)).
    pub(crate) fn arrived_from(&self) -> Option<std::time::SystemTime> {
        self.since.and_then(Timestamp::to_system_time)
    }

    /// Whether `request` is inside the matcher's time window, and of a source it counts.
    fn in_window(&self, request: &RecordedRequest) -> bool {
        let source = match self.source {
            Some(source) => request.source == source,
            None => self.any_source || request.source == RequestSource::Client,
        };
        source && self.since.is_none_or(|since| request.time >= since)
    }

    /// Each condition set, and whether it holds for `request`.
    fn conditions<'a>(
        &'a self,
        r: &'a RecordedRequest,
    ) -> impl Iterator<Item = (Condition, bool)> + 'a {
        let same = |want: &Option<String>, got: &Option<String>| {
            want.as_ref().map(|w| Some(w) == got.as_ref())
        };
        [
            (
                Condition::Method,
                self.method
                    .as_ref()
                    .map(|m| r.method.eq_ignore_ascii_case(m)),
            ),
            (
                Condition::Path,
                self.path
                    .as_ref()
                    .map(|p| trim_slash(p) == trim_slash(&r.path)),
            ),
            (
                Condition::PathPrefix,
                self.path_prefix
                    .as_ref()
                    .map(|p| r.path.starts_with(p.as_str())),
            ),
            (
                Condition::Query,
                (!self.query.is_empty()).then(|| {
                    let pairs = svc_engine::request::query_pairs(r.query.as_deref());
                    self.query.iter().all(|want| pairs.contains(want))
                }),
            ),
            (Condition::Project, same(&self.project, &r.project)),
            (
                Condition::Environment,
                same(&self.environment, &r.environment),
            ),
            (Condition::Resource, same(&self.resource, &r.resource)),
            (Condition::Model, same(&self.model, &r.model)),
            (
                Condition::Status,
                self.status.as_ref().map(|s| s.contains(&r.status)),
            ),
            (
                Condition::Body,
                self.json_body.as_ref().map(|want| {
                    r.request_body
                        .as_ref()
                        .and_then(|b| b.json())
                        .is_some_and(|got| includes(got, want))
                }),
            ),
            (
                Condition::Stub,
                self.stub.map(|id| r.stub == Some(StubId(id))),
            ),
        ]
        .into_iter()
        .filter_map(|(condition, held)| held.map(|held| (condition, held)))
    }

    /// How much `request` looks like a match, if it is a near miss: it fails a condition and
    /// holds another.
    fn near_miss_score(&self, request: &RecordedRequest) -> Option<u32> {
        if !self.in_window(request) {
            return None;
        }
        let (mut held, mut failed) = (0, false);
        for (condition, holds) in self.conditions(request) {
            if holds {
                held += condition.weight();
            } else {
                failed = true;
            }
        }
        (failed && held > 0).then_some(held)
    }

    /// What `request` differs in, e.g. `method GET, not POST; status 200, not 201`.
    fn differences(&self, r: &RecordedRequest) -> String {
        let shown = |v: &Option<String>| v.clone().unwrap_or_else(|| "none".to_owned());
        self.conditions(r)
            .filter(|(_, held)| !held)
            .map(|(condition, _)| match condition {
                Condition::Method => {
                    format!("method {}, not {}", r.method, shown(&self.method))
                }
                Condition::Path => format!("path {}, not {}", r.path, shown(&self.path)),
                Condition::PathPrefix => {
                    format!("path {}, not under {}", r.path, shown(&self.path_prefix))
                }
                Condition::Query => format!(
                    "query {}, without {}",
                    r.query.as_deref().unwrap_or("(none)"),
                    self.query_text()
                ),
                Condition::Project => {
                    format!(
                        "project {}, not {}",
                        shown(&r.project),
                        shown(&self.project)
                    )
                }
                Condition::Environment => format!(
                    "environment {}, not {}",
                    shown(&r.environment),
                    shown(&self.environment)
                ),
                Condition::Resource => format!(
                    "resource {}, not {}",
                    shown(&r.resource),
                    shown(&self.resource)
                ),
                Condition::Model => {
                    format!("model {}, not {}", shown(&r.model), shown(&self.model))
                }
                Condition::Status => {
                    format!("status {}, not {}", r.status, self.status_text())
                }
                Condition::Body => match r.request_body.as_ref() {
                    Some(body) if body.json().is_some() => {
                        "a JSON body without those values".to_owned()
                    }
                    Some(_) => "a body that is not JSON".to_owned(),
                    None => "no body recorded".to_owned(),
                },
                Condition::Stub => match r.stub {
                    Some(other) => format!("answered by {other}, not {}", self.stub_text()),
                    None => format!("not answered by {} (it passed)", self.stub_text()),
                },
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn query_text(&self) -> String {
        self.query
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect::<Vec<_>>()
            .join("&")
    }

    fn stub_text(&self) -> String {
        self.stub
            .map(|id| StubId(id).to_string())
            .unwrap_or_default()
    }

    fn status_text(&self) -> String {
        match &self.status {
            Some(range) if range.start() == range.end() => range.start().to_string(),
            Some(range) => format!("{}..={}", range.start(), range.end()),
            None => String::new(),
        }
    }
}

/// `path` without one trailing `/` (but `/` stays).
fn trim_slash(path: &str) -> &str {
    match path.strip_suffix('/') {
        Some(trimmed) if !trimmed.is_empty() => trimmed,
        _ => path,
    }
}

/// Whether `got` includes `want`: objects key by key, recursively; anything else equal.
fn includes(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Object(got), Value::Object(want)) => want
            .iter()
            .all(|(key, w)| got.get(key).is_some_and(|g| includes(g, w))),
        _ => got == want,
    }
}

/// `POST /projects/demo/prod/shop/models/orders status 201`: the conditions, in order.
impl fmt::Display for RequestMatcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        parts.extend(self.method.clone());
        parts.extend(self.path.clone());
        if let Some(prefix) = &self.path_prefix {
            parts.push(format!("{prefix}*"));
        }
        if !self.query.is_empty() {
            parts.push(format!("?{}", self.query_text()));
        }
        let named = [
            ("project", &self.project),
            ("environment", &self.environment),
            ("resource", &self.resource),
            ("model", &self.model),
        ];
        for (name, value) in named {
            if let Some(value) = value {
                parts.push(format!("{name} {value}"));
            }
        }
        if self.status.is_some() {
            parts.push(format!("status {}", self.status_text()));
        }
        if let Some(since) = self.since {
            parts.push(format!("since {since}"));
        }
        if let Some(body) = &self.json_body {
            parts.push(format!("body including {body}"));
        }
        match (self.source, self.any_source) {
            (Some(RequestSource::Ui), _) => parts.push("from the page".to_owned()),
            (None, true) => parts.push("from any source".to_owned()),
            _ => {}
        }
        if let Some(id) = self.stub {
            parts.push(format!("answered by {}", StubId(id)));
        }
        if parts.is_empty() {
            return f.write_str("any request");
        }
        f.write_str(&parts.join(" "))
    }
}

/// How many matching requests an expectation wants: [`exactly`](Self::exactly),
/// [`at_least`](Self::at_least), [`at_most`](Self::at_most) or [`between`](Self::between).
/// A number, `n..`, `..=n` or `a..=b` converts into one.
///
/// ```
/// use svc_emulator::Times;
///
/// assert!(Times::exactly(2).allows(2));
/// assert!(!Times::at_least(1).allows(0));
/// assert_eq!(Times::from(1..=3), Times::between(1, 3));
/// assert_eq!(Times::from(0), Times::exactly(0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Times {
    min: usize,
    max: Option<usize>,
}

impl Times {
    /// Exactly `n` requests.
    pub fn exactly(n: usize) -> Self {
        Self {
            min: n,
            max: Some(n),
        }
    }

    /// `n` requests or more.
    pub fn at_least(n: usize) -> Self {
        Self { min: n, max: None }
    }

    /// `n` requests or fewer (none included).
    pub fn at_most(n: usize) -> Self {
        Self {
            min: 0,
            max: Some(n),
        }
    }

    /// From `min` to `max` requests, both included.
    pub fn between(min: usize, max: usize) -> Self {
        Self {
            min,
            max: Some(max),
        }
    }

    /// Whether `count` requests satisfy it.
    pub fn allows(&self, count: usize) -> bool {
        count >= self.min && self.max.is_none_or(|max| count <= max)
    }
}

impl From<usize> for Times {
    fn from(n: usize) -> Self {
        Self::exactly(n)
    }
}

impl From<RangeInclusive<usize>> for Times {
    fn from(range: RangeInclusive<usize>) -> Self {
        Self::between(*range.start(), *range.end())
    }
}

impl From<RangeFrom<usize>> for Times {
    fn from(range: RangeFrom<usize>) -> Self {
        Self::at_least(range.start)
    }
}

impl From<RangeToInclusive<usize>> for Times {
    fn from(range: RangeToInclusive<usize>) -> Self {
        Self::at_most(range.end)
    }
}

impl fmt::Display for Times {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.min, self.max) {
            (0, Some(0)) => f.write_str("no"),
            (min, Some(max)) if min == max => write!(f, "exactly {min}"),
            (0, Some(max)) => write!(f, "at most {max}"),
            (min, None) => write!(f, "at least {min}"),
            (min, Some(max)) => write!(f, "between {min} and {max}"),
        }
    }
}

/// How many near misses and unexpected matches a failure lists.
const LISTED: usize = 10;

/// An expectation the journal did not meet: how many requests matched, which, and the near
/// misses (requests that hold some of the matcher's conditions but not all), best first. Its
/// `Display` is the report the `assert_*` methods of [`Emulator`](../svc_emulator/struct.Emulator.html) panic with.
#[derive(Debug, Clone)]
pub struct UnmetExpectation {
    matcher: Box<RequestMatcher>,
    times: Times,
    matched: Vec<RecordedRequest>,
    near_misses: Vec<RecordedRequest>,
    recorded: usize,
    dropped: u64,
    bodies_kept: bool,
}

impl UnmetExpectation {
    /// The requests that matched (too few, or too many).
    pub fn matched(&self) -> &[RecordedRequest] {
        &self.matched
    }

    /// The near misses, best first: the requests that hold the most of the matcher's
    /// conditions (a path counts most, then the model, the method and resource, then the
    /// rest), the latest first among equals.
    pub fn near_misses(&self) -> &[RecordedRequest] {
        &self.near_misses
    }
}

/// Checks `times` matches of `matcher` among `recorded` (oldest first).
pub fn verify(
    matcher: &RequestMatcher,
    times: Times,
    recorded: Vec<RecordedRequest>,
    dropped: u64,
    bodies_kept: bool,
) -> Result<Vec<RecordedRequest>, UnmetExpectation> {
    // What the matcher's window and sources hold: the page's requests are not counted, in the
    // report either, unless the matcher asks for them.
    let recorded: Vec<_> = recorded
        .into_iter()
        .filter(|r| matcher.in_window(r))
        .collect();
    let total = recorded.len();
    let (matched, others): (Vec<_>, Vec<_>) =
        recorded.into_iter().partition(|r| matcher.matches(r));
    if times.allows(matched.len()) {
        return Ok(matched);
    }
    let mut scored: Vec<(u32, RecordedRequest)> = others
        .into_iter()
        .filter_map(|r| matcher.near_miss_score(&r).map(|score| (score, r)))
        .collect();
    scored.sort_by(|(a, ra), (b, rb)| b.cmp(a).then(rb.id.cmp(&ra.id)));
    Err(UnmetExpectation {
        matcher: Box::new(matcher.clone()),
        times,
        matched,
        near_misses: scored.into_iter().map(|(_, r)| r).collect(),
        recorded: total,
        dropped,
        bodies_kept,
    })
}

/// One line of a report: `#12 POST /projects/...?... -> 400`.
fn line(r: &RecordedRequest) -> String {
    let query = r
        .query
        .as_deref()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    format!(
        "#{} {} {}{} -> {} at {}",
        r.id,
        r.method,
        r.path,
        query,
        r.status,
        r.time_rfc3339()
    )
}

impl fmt::Display for UnmetExpectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.matched.len();
        let noun = |n: usize| if n == 1 { "request" } else { "requests" };
        let wanted = self.times.max.unwrap_or(self.times.min);
        write!(
            f,
            "expected {} {} matching {}; received {count} (of {} recorded",
            self.times,
            noun(wanted),
            self.matcher,
            self.recorded
        )?;
        if self.dropped > 0 {
            write!(
                f,
                ", and {} older ones dropped from the journal",
                self.dropped
            )?;
        }
        f.write_str(")")?;
        if self.matcher.reads_bodies() && !self.bodies_kept {
            f.write_str(
                "\nnote: the journal keeps no bodies, so no body matches: start the emulator \
                 with EmulatorConfig::journal_bodies(true) (--journal-bodies)",
            )?;
        }
        if self.times.max.is_some_and(|max| count > max) {
            f.write_str("\nmatching requests:")?;
            for r in self.matched.iter().take(LISTED) {
                write!(f, "\n  {}", line(r))?;
            }
            if count > LISTED {
                write!(f, "\n  ... and {} more", count - LISTED)?;
            }
            return Ok(());
        }
        if self.near_misses.is_empty() {
            return f.write_str("\nno near misses: no request holds any of the conditions");
        }
        f.write_str("\nnear misses, best first:")?;
        for r in self.near_misses.iter().take(LISTED) {
            write!(f, "\n  {}: {}", line(r), self.matcher.differences(r))?;
        }
        if self.near_misses.len() > LISTED {
            write!(f, "\n  ... and {} more", self.near_misses.len() - LISTED)?;
        }
        Ok(())
    }
}

impl std::error::Error for UnmetExpectation {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::journal::record::{BodyContent, CapturedBody};

    fn request(id: u64, method: &str, path: &str, status: u16) -> RecordedRequest {
        let named = crate::journal::path::names(path);
        let owned = |s: Option<&str>| s.map(str::to_owned);
        RecordedRequest {
            id,
            time: Timestamp::from_unix_seconds(1_700_000_000 + id as i64).unwrap(),
            method: method.to_owned(),
            path: path.to_owned(),
            query: None,
            project: owned(named.project),
            environment: owned(named.environment),
            resource: owned(named.resource),
            model: owned(named.model),
            status,
            duration_ms: 1.0,
            request_body: None,
            response_body: None,
            source: RequestSource::Client,
            stub: None,
        }
    }

    const ORDERS: &str = "/projects/demo/prod/shop/models/orders";

    fn journal() -> Vec<RecordedRequest> {
        vec![
            request(1, "GET", ORDERS, 200),
            request(2, "POST", ORDERS, 400),
            request(3, "POST", "/projects/demo/prod/shop/models/customers", 201),
            request(4, "GET", "/api/projects/demo", 200),
        ]
    }

    #[test]
    fn conditions_match() {
        let r = request(1, "POST", &format!("{ORDERS}/"), 201);
        assert!(RequestMatcher::any().matches(&r));
        assert!(RequestMatcher::post().path(ORDERS).status(201).matches(&r));
        assert!(RequestMatcher::any().method("post").matches(&r));
        assert!(
            RequestMatcher::any()
                .path_prefix("/projects/demo/")
                .matches(&r)
        );
        assert!(
            RequestMatcher::any()
                .project("demo")
                .environment("prod")
                .resource("shop")
                .model("orders")
                .status_range(200..=299)
                .matches(&r)
        );
        assert!(!RequestMatcher::get().matches(&r));
        assert!(!RequestMatcher::any().model("customers").matches(&r));
        assert!(!RequestMatcher::any().path("/projects/demo").matches(&r));
        let mut q = r.clone();
        q.query = Some("name__icontains=a%20b&_page=2".to_owned());
        assert!(
            RequestMatcher::any()
                .query_param("name__icontains", "a b")
                .matches(&q)
        );
        assert!(!RequestMatcher::any().query_param("_page", "3").matches(&q));
        let since = Timestamp::from_unix_seconds(1_700_000_002).unwrap();
        assert!(!RequestMatcher::any().since(since).matches(&r));
    }

    #[test]
    fn json_bodies_match_by_inclusion() {
        let mut r = request(1, "POST", ORDERS, 201);
        let matcher = RequestMatcher::post().json_body_includes(json!({"a": {"b": 1}}));
        assert!(!matcher.matches(&r), "no body recorded");
        r.request_body = Some(CapturedBody {
            content: BodyContent::Json(json!({"a": {"b": 1, "c": 2}, "d": [1]})),
            bytes: 10,
            truncated: false,
        });
        assert!(matcher.matches(&r));
        assert!(
            !RequestMatcher::any()
                .json_body_includes(json!({"d": []}))
                .matches(&r)
        );
    }

    #[test]
    fn times() {
        assert!(Times::exactly(1).allows(1) && !Times::exactly(1).allows(2));
        assert!(Times::at_most(1).allows(0) && !Times::at_most(1).allows(2));
        assert!(Times::between(1, 2).allows(2) && !Times::between(1, 2).allows(0));
        assert_eq!(Times::from(2..), Times::at_least(2));
        assert_eq!(Times::from(..=2), Times::at_most(2));
        assert_eq!(Times::exactly(0).to_string(), "no");
        assert_eq!(Times::between(1, 2).to_string(), "between 1 and 2");
    }

    #[test]
    fn a_missing_request_lists_the_near_misses_best_first() {
        let matcher = RequestMatcher::post().path(ORDERS).status(201);
        let err = verify(&matcher, Times::exactly(1), journal(), 0, false).unwrap_err();
        let ids: Vec<u64> = err.near_misses().iter().map(|r| r.id).collect();
        // Same path and method (#2), same path (#1), same method and status (#3); #4 holds
        // nothing but... nothing.
        assert_eq!(ids, [2, 1, 3]);
        let text = err.to_string();
        assert!(
            text.starts_with(
                "expected exactly 1 request matching POST /projects/demo/prod/shop/models/orders \
                 status 201; received 0 (of 4 recorded)\nnear misses, best first:\n  #2 POST "
            ),
            "{text}"
        );
        assert!(text.contains(": status 400, not 201\n"), "{text}");
        assert!(
            text.contains(": method GET, not POST; status 200, not 201\n"),
            "{text}"
        );
        assert!(
            text.contains("path /projects/demo/prod/shop/models/customers, not /projects/demo/prod/shop/models/orders"),
            "{text}"
        );
    }

    #[test]
    fn too_many_matches_are_listed() {
        let err = verify(
            &RequestMatcher::post(),
            Times::exactly(0),
            journal(),
            3,
            false,
        )
        .unwrap_err();
        assert_eq!(err.matched().len(), 2);
        let text = err.to_string();
        assert!(
            text.starts_with(
                "expected no requests matching POST; received 2 (of 4 recorded, and 3 older \
                 ones dropped from the journal)\nmatching requests:\n  #2 POST"
            ),
            "{text}"
        );
    }

    #[test]
    fn met_expectations_return_the_matches() {
        let matched = verify(
            &RequestMatcher::get(),
            Times::at_least(1),
            journal(),
            0,
            true,
        );
        assert_eq!(matched.unwrap().len(), 2);
        let none = verify(&RequestMatcher::delete(), 0.into(), journal(), 0, true);
        assert!(none.unwrap().is_empty());
    }

    #[test]
    fn a_body_matcher_without_bodies_says_why() {
        let matcher = RequestMatcher::post().json_body_includes(json!({"a": 1}));
        let text = verify(&matcher, 1.into(), journal(), 0, false)
            .unwrap_err()
            .to_string();
        assert!(
            text.contains("EmulatorConfig::journal_bodies(true)"),
            "{text}"
        );
        assert!(text.contains(": no body recorded"), "{text}");
    }
}
