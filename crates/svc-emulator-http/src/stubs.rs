//! Stubs: answers declared for the requests a [`RequestMatcher`] matches, given instead of the
//! data's, in the manner of wiremock's mocks.
//!
//! - **Which.** Each stub belongs to one project and sees that project's requests (the
//!   journal's owner: the project the path names, else the credential's). The page's own
//!   requests never meet a stub: it shows the data as it is.
//! - **Order.** Stubs are tried in order of declaration; the first that matches and is active
//!   answers. A stub counts every request it matches (`matched`); it lets the first `after`
//!   pass (to a later stub or to the data), then answers `times` of them (every one when not
//!   set), then lets the rest pass again.
//! - **Answer.** A status, headers and a body after a delay, or no answer: the connection
//!   dropped (FIN) or reset (RST), which the server does (svc-emulator's `runtime::server`) when the
//!   answer carries [`CutConnection`]. A stubbed request never reaches the data, and the journal
//!   shows it with the stub's number (status 0 when the connection was cut).
//! - **Data, not pages.** A stub answers on the web page's own origin, before any credential,
//!   so its answer never runs there: every one carries [`STUB_POLICY`] (a sandbox without
//!   `allow-scripts` or `allow-same-origin`: no script runs, and the document has an opaque
//!   origin, which neither the page's cookie nor its relay serve) and
//!   `X-Content-Type-Options: nosniff`, whatever the stub's own headers say (a policy of the
//!   stub's is sent beside the sandbox, which a browser enforces too: it can only narrow it).
//!   Nor does it leave anything in the browser or move it on by itself: no `Set-Cookie`,
//!   `Set-Cookie2`, `Refresh`, `Clear-Site-Data` or `Strict-Transport-Security`
//!   (`StubResponse::check`, for every way of declaring one).
//! - **Bounds.** A project holds at most [`StubLimits::count`] stubs of at most
//!   [`StubLimits::bytes`] bytes (as JSON) together, its config's included: past them a
//!   declaration is refused ([`StubError::Limit`]).
//! - **Locks.** Each project keeps its stubs under a lock of its own: one project's
//!   declarations and requests never wait for another's, and a request of a project without
//!   stubs takes no lock at all (its count is an atomic).
//! - **Lifetime.** A reset of the project removes the stubs declared while it ran and puts back
//!   those of the config file, their counts at 0.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Response, StatusCode, header};
use serde::Serialize;

use crate::journal::{RecordedRequest, RequestMatcher, RequestSource};
use svc_emulator_state::config::stubs::{StubConfig, StubRequest, StubResponse};

pub use crate::journal::StubId;

/// The `Content-Security-Policy` of every stub's answer: a sandbox (no script, no form, no
/// plugin, and an opaque origin: the document is not the web page's, so the page's cookie and
/// relay do not serve it) that loads nothing.
pub const STUB_POLICY: &str = "sandbox; default-src 'none'";

/// How many stubs one project may hold at once, and how many bytes of them (each counted as
/// the JSON of its declaration), the config's included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct StubLimits {
    /// The most stubs.
    pub count: usize,
    /// The most bytes, all its stubs together.
    pub bytes: usize,
}

impl StubLimits {
    /// At most `count` stubs of `bytes` bytes together.
    pub fn new(count: usize, bytes: usize) -> Self {
        Self { count, bytes }
    }
}

impl Default for StubLimits {
    /// The defaults of [`Limits`](../svc_emulator/struct.Limits.html): 500 stubs, 4 MiB.
    fn default() -> Self {
        let limits = svc_emulator_state::config::limits::Limits::default();
        Self::new(limits.stub_count_limit(), limits.stub_bytes_limit())
    }
}

/// A stub as declared, with what it has met: from [`Emulator::stubs`](../svc_emulator/struct.Emulator.html#method.stubs)
/// and `GET /_emulator/projects/{project}/stubs` (its serialized form).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct StubInfo {
    /// Its number.
    pub id: StubId,
    /// The project whose requests it answers.
    pub project: String,
    /// Which requests, as the config file writes it.
    pub request: StubRequest,
    /// Its answer.
    pub response: StubResponse,
    /// How many matching requests it lets pass first.
    pub after: u64,
    /// How many it answers (`None`: every one after `after`).
    pub times: Option<u64>,
    /// Whether the config file declared it (a reset keeps it).
    pub from_config: bool,
    /// How many requests it matched, answered or not.
    pub matched: u64,
    /// How many it answered.
    pub answered: u64,
}

/// Why a stub was refused; nothing was added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StubError {
    /// The matcher asks what a request has only once answered.
    #[error(
        "a stub answers before there is {0}: leave .{0}() out of the stub's RequestMatcher (it serves expectations on the journal)"
    )]
    NotBeforeAnswer(&'static str),
    /// The matcher names a project the emulator does not serve.
    #[error("no project {0:?} is served: a stub belongs to one of the emulator's projects")]
    NoProject(String),
    /// The stub breaks a rule (the message says which, and what to do).
    #[error("invalid stub: {0}")]
    Invalid(String),
    /// The project holds as many stubs, or as many bytes of stubs, as its limit allows.
    #[error("{}", limit_message(project, limit, *max, *held, *adding))]
    Limit {
        /// The project.
        project: String,
        /// The limit's name: `max_stubs` or `max_stub_bytes`.
        limit: &'static str,
        /// Its value.
        max: usize,
        /// What the project holds: stubs, or bytes of them.
        held: usize,
        /// What the refused stub adds: 1, or its bytes.
        adding: usize,
    },
}

/// What a [`StubError::Limit`] says: the limit, what the project holds, and how to make room
/// or raise it.
fn limit_message(project: &str, limit: &str, max: usize, held: usize, adding: usize) -> String {
    let holds = match limit {
        MAX_STUBS => format!("project {project:?} holds {held} stubs, as many as its limit allows"),
        _ => format!(
            "project {project:?}'s stubs hold {held} bytes and this one {adding} more, past its limit of {max} bytes"
        ),
    };
    format!(
        "{holds} ({limit} {max}): remove some (DELETE /_emulator/projects/{project}/stubs, or one by its number; Emulator::remove_stub in Rust), or raise the limit (the project's \"{limit}\" in the config file, Limits::{limit} in Rust)"
    )
}

/// The name of the limit on a project's number of stubs (the config file's key and the
/// `Limits` method).
const MAX_STUBS: &str = "max_stubs";

/// The name of the limit on a project's bytes of stubs.
const MAX_STUB_BYTES: &str = "max_stub_bytes";

/// How the server ends a stubbed request's connection: carried by the answer it returns in
/// place of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutConnection {
    /// A reset (RST) rather than a close (FIN).
    pub reset: bool,
}

/// One declared stub and its counts.
#[derive(Debug)]
pub struct Active {
    id: u64,
    project: usize,
    /// Its size against [`StubLimits::bytes`]: the JSON of its declaration.
    size: usize,
    matcher: RequestMatcher,
    request: StubRequest,
    response: StubResponse,
    after: u64,
    times: Option<u64>,
    from_config: bool,
    matched: AtomicU64,
    answered: AtomicU64,
}

impl Active {
    fn new(
        id: u64,
        project: usize,
        matcher: RequestMatcher,
        stub: StubConfig,
        from_config: bool,
    ) -> Self {
        Self {
            id,
            project,
            size: size_of_stub(&stub),
            matcher,
            request: stub.request,
            response: stub.response,
            after: stub.after,
            times: stub.times,
            from_config,
            matched: AtomicU64::new(0),
            answered: AtomicU64::new(0),
        }
    }

    /// Its number.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The matcher of the requests it answered, its own conditions ranking the near misses:
    /// for expectations on it.
    fn answered_matcher(&self) -> RequestMatcher {
        self.matcher.clone().decided_by_stub(self.id)
    }

    /// Whether it closes the connection (a FIN) instead of answering.
    pub(crate) fn drops(&self) -> bool {
        self.response.drops_connection()
    }

    /// How long its answer is held back.
    pub(crate) fn delay(&self) -> std::time::Duration {
        self.response.delay_duration()
    }

    /// Its answer: status, headers and body, or an empty answer that carries the cut.
    pub(crate) fn answer(&self) -> (Response<Body>, Option<bytes::Bytes>) {
        let r = &self.response;
        if r.drops_connection() || r.resets_connection() {
            let mut response = Response::new(Body::empty());
            response.extensions_mut().insert(CutConnection {
                reset: r.resets_connection(),
            });
            return (response, None);
        }
        let (bytes, kind) = match (r.json_body(), r.text_body()) {
            (Some(json), _) => (
                bytes::Bytes::from(json.to_string()),
                Some("application/json"),
            ),
            (None, Some(text)) => (
                bytes::Bytes::from(text.to_owned()),
                Some("text/plain; charset=utf-8"),
            ),
            (None, None) => (bytes::Bytes::new(), None),
        };
        let mut response = Response::new(Body::from(bytes.clone()));
        // Checked when declared: 200 to 599, and headers an HTTP answer can carry.
        *response.status_mut() =
            StatusCode::from_u16(r.status_code().unwrap_or(200)).unwrap_or(StatusCode::OK);
        let headers = response.headers_mut();
        if let Some(kind) = kind {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
        }
        for (name, value) in r.headers() {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                headers.insert(name, value);
            }
        }
        // Data, not a page of the emulator's origin: the sandbox first, the stub's own policy
        // (if any) after it, where it can only narrow it; never sniffed into another type.
        let theirs = headers.remove(header::CONTENT_SECURITY_POLICY);
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(STUB_POLICY),
        );
        if let Some(theirs) = theirs {
            headers.append(header::CONTENT_SECURITY_POLICY, theirs);
        }
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        (response, Some(bytes))
    }

    fn info(&self, project: &str) -> StubInfo {
        StubInfo {
            id: StubId(self.id),
            project: project.to_owned(),
            request: self.request.clone(),
            response: self.response.clone(),
            after: self.after,
            times: self.times,
            from_config: self.from_config,
            matched: self.matched.load(Ordering::Relaxed),
            answered: self.answered.load(Ordering::Relaxed),
        }
    }
}

/// The size of a stub against [`StubLimits::bytes`]: the JSON of its declaration.
fn size_of_stub(stub: &StubConfig) -> usize {
    serde_json::to_vec(stub).map_or(0, |json| json.len())
}

/// The stubs of an emulator: each project's, in order of declaration, under a lock of its own.
#[derive(Debug)]
pub struct Stubs {
    /// The served projects' stubs, by index (the registry's order, as the journal's).
    projects: Vec<Project>,
    /// How many stubs every project holds together, kept by every change: every request reads
    /// it, and a load costs no write to a shared lock as a read lock would.
    total: AtomicUsize,
    next_id: AtomicU64,
}

/// One project's stubs.
#[derive(Debug)]
struct Project {
    name: String,
    active: RwLock<Vec<Arc<Active>>>,
    /// How many stubs `active` holds, kept by every change of it: a request of a project
    /// without stubs reads it and takes no lock.
    count: AtomicUsize,
    /// The config file's stubs, with the numbers they keep: what a reset puts back.
    declared: Vec<(u64, StubConfig)>,
    limits: StubLimits,
}

impl Project {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<Active>>> {
        // A plain list: consistent whatever panicked while holding it.
        self.active.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether it holds no stub, without its lock.
    fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    /// Refuses `stub` when it does not fit beside `active` in the limits.
    fn room_for(&self, active: &[Arc<Active>], stub: &Active) -> Result<(), StubError> {
        let limit = |limit, max, held, adding| StubError::Limit {
            project: self.name.clone(),
            limit,
            max,
            held,
            adding,
        };
        if active.len() >= self.limits.count {
            return Err(limit(MAX_STUBS, self.limits.count, active.len(), 1));
        }
        let held: usize = active.iter().map(|s| s.size).sum();
        if held.saturating_add(stub.size) > self.limits.bytes {
            return Err(limit(MAX_STUB_BYTES, self.limits.bytes, held, stub.size));
        }
        Ok(())
    }

    /// Puts its stubs of the config file back in `active`, after the others.
    fn put_back_declared(&self, active: &mut Writing<'_>, project: usize) {
        for (id, stub) in &self.declared {
            let matcher = matcher_of(&stub.request);
            active.push(Arc::new(Active::new(
                *id,
                project,
                matcher,
                stub.clone(),
                true,
            )));
        }
    }
}

impl Stubs {
    /// The stubs of the config file: `declared[i]` are project `projects[i]`'s. Checked when
    /// the config was; the default [`StubLimits`] bound later declarations, and the config's
    /// stubs are kept even past them (see [`with_limits`](Self::with_limits)).
    pub fn new(projects: Vec<String>, declared: Vec<Vec<StubConfig>>) -> Self {
        Self::build(projects, declared, Vec::new())
    }

    /// The stubs of the config file, as [`new`](Self::new), each project `projects[i]` bound
    /// by `limits[i]` (the default [`StubLimits`] when missing): refused when the config's
    /// stubs of a project are past its limits already.
    pub fn with_limits(
        projects: Vec<String>,
        declared: Vec<Vec<StubConfig>>,
        limits: Vec<StubLimits>,
    ) -> Result<Self, StubError> {
        let stubs = Self::build(projects, declared, limits);
        for project in &stubs.projects {
            let mut fitted: Vec<Arc<Active>> = Vec::new();
            for stub in project.read().iter() {
                project.room_for(&fitted, stub)?;
                fitted.push(Arc::clone(stub));
            }
        }
        Ok(stubs)
    }

    fn build(
        projects: Vec<String>,
        declared: Vec<Vec<StubConfig>>,
        limits: Vec<StubLimits>,
    ) -> Self {
        let mut next = 1;
        let mut declared = declared.into_iter();
        let mut limits = limits.into_iter();
        let projects: Vec<Project> = projects
            .into_iter()
            .map(|name| Project {
                name,
                active: RwLock::new(Vec::new()),
                count: AtomicUsize::new(0),
                declared: declared
                    .next()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|stub| {
                        next += 1;
                        (next - 1, stub)
                    })
                    .collect(),
                limits: limits.next().unwrap_or_default(),
            })
            .collect();
        let stubs = Self {
            projects,
            total: AtomicUsize::new(0),
            next_id: AtomicU64::new(next),
        };
        for (index, project) in stubs.projects.iter().enumerate() {
            let mut active = stubs.write(project);
            project.put_back_declared(&mut active, index);
        }
        stubs
    }

    fn write<'a>(&'a self, project: &'a Project) -> Writing<'a> {
        Writing {
            active: project.active.write().unwrap_or_else(|e| e.into_inner()),
            count: &project.count,
            total: &self.total,
        }
    }

    /// The index of the served project `name`.
    pub fn project_index(&self, name: &str) -> Option<usize> {
        self.projects.iter().position(|p| p.name == name)
    }

    /// Whether no stub is declared: the request path skips the rest.
    pub(crate) fn is_empty(&self) -> bool {
        self.total.load(Ordering::Acquire) == 0
    }

    /// Whether `project` holds a stub (no lock taken).
    pub(crate) fn any_of(&self, project: usize) -> bool {
        self.projects.get(project).is_some_and(|p| !p.is_empty())
    }

    /// Whether a stub of `project` asks about request bodies.
    pub(crate) fn read_bodies(&self, project: usize) -> bool {
        let Some(project) = self.projects.get(project).filter(|p| !p.is_empty()) else {
            return false;
        };
        project.read().iter().any(|s| s.matcher.reads_bodies())
    }

    /// Adds a stub of the config's form to `project`, answering after every earlier one.
    pub fn add(&self, project: usize, stub: StubConfig) -> Result<StubInfo, StubError> {
        stub.check().map_err(StubError::Invalid)?;
        let matcher = matcher_of(&stub.request);
        self.push(project, matcher, stub)
    }

    /// Adds a stub declared in code, for the project `matcher` names (else `default_project`).
    pub(crate) fn add_matcher(
        &self,
        default_project: usize,
        matcher: RequestMatcher,
        response: StubResponse,
        after: u64,
        times: Option<u64>,
    ) -> Result<StubInfo, StubError> {
        let parts = parts_of(&matcher)?;
        let project = match &parts.project {
            Some(name) => self
                .project_index(name)
                .ok_or_else(|| StubError::NoProject(name.clone()))?,
            None => default_project,
        };
        let mut stub = StubConfig::new(parts.request, response);
        stub.after = after;
        stub.times = times;
        stub.check().map_err(StubError::Invalid)?;
        self.push(project, matcher, stub)
    }

    /// Declares a stub after every other of its project, under a new number, if it fits in
    /// the project's limits.
    fn push(
        &self,
        project: usize,
        matcher: RequestMatcher,
        stub: StubConfig,
    ) -> Result<StubInfo, StubError> {
        let Some(entry) = self.projects.get(project) else {
            return Err(StubError::NoProject(format!("#{project}")));
        };
        // Measured before the lock; numbered once it fits, so that numbers follow the order
        // of declaration.
        let mut declared = Active::new(0, project, matcher, stub, false);
        let mut active = self.write(entry);
        entry.room_for(&active, &declared)?;
        declared.id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let declared = Arc::new(declared);
        let info = declared.info(&entry.name);
        active.push(declared);
        Ok(info)
    }

    fn name(&self, project: usize) -> &str {
        self.projects.get(project).map_or("", |p| p.name.as_str())
    }

    /// The projects `project` names: that one, or every one with `None`.
    fn chosen(&self, project: Option<usize>) -> impl Iterator<Item = &Project> {
        self.projects
            .iter()
            .enumerate()
            .filter(move |(i, _)| project.is_none_or(|p| p == *i))
            .map(|(_, p)| p)
    }

    /// The stubs of `project` (every project's with `None`), in order of declaration.
    pub fn list(&self, project: Option<usize>) -> Vec<StubInfo> {
        let mut all: Vec<Arc<Active>> = self
            .chosen(project)
            .filter(|p| !p.is_empty())
            .flat_map(|p| p.read().clone())
            .collect();
        all.sort_by_key(|s| s.id);
        all.iter().map(|s| s.info(self.name(s.project))).collect()
    }

    /// A stub of the project `matcher` names (else of `default_project`) being declared:
    /// [`StubBuilder::respond`] declares it.
    pub fn declare(&self, default_project: usize, matcher: RequestMatcher) -> StubBuilder<'_> {
        StubBuilder {
            stubs: self,
            default_project,
            matcher,
            after: 0,
            times: None,
        }
    }

    /// The matcher of the requests stub `id` answered (of `project`, when given), for
    /// expectations on it: its own conditions rank the near misses while it is declared;
    /// once removed, its number alone decides.
    pub fn answered_matcher(&self, id: u64, project: Option<usize>) -> RequestMatcher {
        match self.get(id, project) {
            Some(stub) => stub.answered_matcher(),
            None => RequestMatcher::any().decided_by_stub(id),
        }
    }

    /// The stub numbered `id`, if it is still declared (and of `project`, when given).
    pub fn get(&self, id: u64, project: Option<usize>) -> Option<Arc<Active>> {
        self.chosen(project)
            .filter(|p| !p.is_empty())
            .find_map(|p| p.read().iter().find(|s| s.id == id).cloned())
    }

    /// Removes the stub numbered `id` (of `project`, when given); whether there was one.
    pub fn remove(&self, id: u64, project: Option<usize>) -> bool {
        self.chosen(project).filter(|p| !p.is_empty()).any(|p| {
            let mut active = self.write(p);
            let before = active.len();
            active.retain(|s| s.id != id);
            active.len() != before
        })
    }

    /// Removes every stub of `project`, the config file's included (a reset puts those back).
    pub fn clear(&self, project: usize) -> usize {
        let Some(project) = self.projects.get(project) else {
            return 0;
        };
        let mut active = self.write(project);
        let removed = active.len();
        active.clear();
        removed
    }

    /// What a reset of `project` does, at once for every request: its stubs are the config
    /// file's again, under their numbers, their counts at 0.
    pub(crate) fn reset(&self, project: usize) {
        let Some(entry) = self.projects.get(project) else {
            return;
        };
        let mut active = self.write(entry);
        active.clear();
        entry.put_back_declared(&mut active, project);
    }

    /// The stub that answers `request` of `project`, if any: each one that matches counts it,
    /// in order, until one is active for it. A project without stubs takes no lock.
    pub fn pick(&self, project: usize, request: &RecordedRequest) -> Option<Arc<Active>> {
        let entry = self.projects.get(project).filter(|p| !p.is_empty())?;
        let active = entry.read();
        for stub in active.iter() {
            if !stub.matcher.matches(request) {
                continue;
            }
            let k = stub.matched.fetch_add(1, Ordering::Relaxed);
            let Some(past) = k.checked_sub(stub.after) else {
                continue;
            };
            if stub.times.is_some_and(|times| past >= times) {
                continue;
            }
            stub.answered.fetch_add(1, Ordering::Relaxed);
            return Some(Arc::clone(stub));
        }
        None
    }
}

/// One project's stubs, held for a change: its count and the total follow when the change is
/// done, before the lock goes.
struct Writing<'a> {
    active: std::sync::RwLockWriteGuard<'a, Vec<Arc<Active>>>,
    count: &'a AtomicUsize,
    total: &'a AtomicUsize,
}

impl std::ops::Deref for Writing<'_> {
    type Target = Vec<Arc<Active>>;

    fn deref(&self) -> &Self::Target {
        &self.active
    }
}

impl std::ops::DerefMut for Writing<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.active
    }
}

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        let now = self.active.len();
        let before = self.count.swap(now, Ordering::AcqRel);
        if now > before {
            self.total.fetch_add(now - before, Ordering::AcqRel);
        } else {
            self.total.fetch_sub(before - now, Ordering::AcqRel);
        }
    }
}

/// The journal's matcher of a stub's request conditions.
fn matcher_of(request: &StubRequest) -> RequestMatcher {
    let mut m = RequestMatcher::any();
    if let Some(method) = &request.method {
        m = m.method(method.clone());
    }
    if let Some(path) = &request.path {
        m = m.path(path.clone());
    }
    if let Some(prefix) = &request.path_prefix {
        m = m.path_prefix(prefix.clone());
    }
    for (name, value) in &request.query {
        m = m.query_param(name.clone(), value.clone());
    }
    if let Some(environment) = &request.environment {
        m = m.environment(environment.clone());
    }
    if let Some(resource) = &request.resource {
        m = m.resource(resource.clone());
    }
    if let Some(model) = &request.model {
        m = m.model(model.clone());
    }
    if let Some(body) = &request.body_includes {
        m = m.json_body_includes(body.clone());
    }
    m
}

/// What a matcher declared in code says of a stub: its project, and the rest in the config's
/// form.
struct StubParts {
    project: Option<String>,
    request: StubRequest,
}

/// The conditions of `matcher` as a stub's, which answers before there is a status (or a
/// stub that answered): its project, and the rest in the config file's form.
fn parts_of(matcher: &RequestMatcher) -> Result<StubParts, StubError> {
    if matcher.status.is_some() {
        return Err(StubError::NotBeforeAnswer("status"));
    }
    if matcher.since.is_some() {
        return Err(StubError::NotBeforeAnswer("since"));
    }
    if matcher.stub.is_some() {
        return Err(StubError::NotBeforeAnswer("answered_by"));
    }
    if matcher.source == Some(RequestSource::Ui) {
        return Err(StubError::Invalid(
            "stubs answer clients, never the web page: leave .source() out".into(),
        ));
    }
    // `StubRequest` is the settings' (non-exhaustive): filled field by field.
    let mut request = StubRequest::default();
    request.method = matcher.method.clone();
    request.path = matcher.path.clone();
    request.path_prefix = matcher.path_prefix.clone();
    request.query = matcher.query.iter().cloned().collect();
    request.environment = matcher.environment.clone();
    request.resource = matcher.resource.clone();
    request.model = matcher.model.clone();
    request.body_includes = matcher.json_body.clone();
    Ok(StubParts {
        project: matcher.project.clone(),
        request,
    })
}

/// A stub being declared in code: [`Emulator::stub`](../svc_emulator/struct.Emulator.html#method.stub), then when it
/// answers ([`after`](Self::after), [`times`](Self::times)), then [`respond`](Self::respond).
#[derive(Debug)]
#[must_use = "a stub is declared by `respond`"]
pub struct StubBuilder<'a> {
    stubs: &'a Stubs,
    default_project: usize,
    matcher: RequestMatcher,
    after: u64,
    times: Option<u64>,
}

impl StubBuilder<'_> {
    /// Lets the first `n` matching requests pass untouched (to a later stub, or to the data):
    /// the stub answers the request after them on, e.g. the third page of a walk.
    pub fn after(mut self, n: u64) -> Self {
        self.after = n;
        self
    }

    /// Answers `n` matching requests (after those of [`after`](Self::after)), then lets the
    /// rest pass; without it, every one. `n` is at least 1.
    pub fn times(mut self, n: u64) -> Self {
        self.times = Some(n);
        self
    }

    /// Answers the next request only: `times(1)`.
    pub fn once(self) -> Self {
        self.times(1)
    }

    /// Declares the stub, answering with `response` after every stub declared before it. It
    /// belongs to the project the matcher names, else the emulator's default project, and
    /// lasts until removed or until that project's reset.
    pub fn respond(self, response: StubResponse) -> Result<StubId, StubError> {
        let info = self.stubs.add_matcher(
            self.default_project,
            self.matcher,
            response,
            self.after,
            self.times,
        )?;
        Ok(info.id)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    fn get(project: &str) -> RecordedRequest {
        RecordedRequest {
            id: 1,
            time: svc_model::Timestamp::now(),
            method: "GET".to_owned(),
            path: format!("/projects/{project}/prod/shop/models/orders"),
            query: None,
            project: Some(project.to_owned()),
            environment: Some("prod".to_owned()),
            resource: Some("shop".to_owned()),
            model: Some("orders".to_owned()),
            status: 0,
            duration_ms: 0.0,
            request_body: None,
            response_body: None,
            source: RequestSource::Client,
            stub: None,
        }
    }

    fn teapot() -> StubConfig {
        StubConfig::new(StubRequest::default(), StubResponse::new(418))
    }

    /// What `f` returns, run on another thread, or `None` when it has not returned in 5 s
    /// (it waits for a lock).
    fn soon<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (sent, received) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = sent.send(f());
        });
        received.recv_timeout(Duration::from_secs(5)).ok()
    }

    #[test]
    fn one_project_s_change_never_holds_up_another_project_s_requests_or_declarations() {
        let names = ["busy", "other", "none"].map(str::to_owned).to_vec();
        let stubs = Arc::new(Stubs::new(names, vec![vec![teapot()], vec![teapot()]]));
        // `busy`'s stubs, held for a change (a declaration, a reset) that does not end.
        let held = stubs.write(&stubs.projects[0]);
        let other = Arc::clone(&stubs);
        let done = soon(move || {
            let picked = other.pick(1, &get("other")).map(|s| s.id());
            let none = other.pick(2, &get("none")).is_none() && !other.read_bodies(2);
            let added = other.add(1, teapot()).is_ok();
            (picked, none, added, other.list(Some(1)).len())
        });
        drop(held);
        assert_eq!(
            done,
            Some((Some(2), true, true, 2)),
            "another project's requests and declarations waited for busy's lock"
        );
        assert!(stubs.any_of(0) && stubs.any_of(1) && !stubs.any_of(2));
        assert_eq!(stubs.total.load(Ordering::Acquire), 3);
        assert!(stubs.remove(2, None));
        assert_eq!(stubs.clear(1), 1);
        assert_eq!(stubs.total.load(Ordering::Acquire), 1);
    }

    #[test]
    fn the_config_s_stubs_past_a_project_s_limits_are_refused_and_numbers_skip_no_refusal() {
        let names = vec!["p".to_owned()];
        let refused = Stubs::with_limits(
            names.clone(),
            vec![vec![teapot(), teapot()]],
            vec![StubLimits::new(1, 1 << 20)],
        )
        .unwrap_err();
        assert!(matches!(
            refused,
            StubError::Limit {
                limit: MAX_STUBS,
                max: 1,
                held: 1,
                ..
            }
        ));
        let stubs = Stubs::with_limits(
            names,
            vec![vec![teapot()]],
            vec![StubLimits::new(2, 1 << 20)],
        )
        .unwrap();
        assert_eq!(stubs.add(0, teapot()).unwrap().id, StubId(2));
        assert!(stubs.add(0, teapot()).is_err());
        stubs.reset(0);
        assert_eq!(
            stubs.add(0, teapot()).unwrap().id,
            StubId(3),
            "no number was spent"
        );
    }

    #[test]
    fn a_stub_s_matcher_asks_nothing_an_answer_tells() {
        let stubs = Stubs::new(vec!["p".to_owned()], Vec::new());
        let declare = |matcher: RequestMatcher| {
            stubs
                .declare(0, matcher)
                .respond(StubResponse::new(418))
                .unwrap_err()
        };
        let answered = declare(RequestMatcher::get().answered_by(StubId(1)));
        assert_eq!(answered, StubError::NotBeforeAnswer("answered_by"));
        let status = declare(RequestMatcher::get().status(200));
        assert_eq!(status, StubError::NotBeforeAnswer("status"));
        assert!(stubs.list(None).is_empty());
        let id = stubs.declare(0, RequestMatcher::get()).once();
        assert_eq!(id.respond(StubResponse::new(418)), Ok(StubId(1)));
    }

    #[test]
    fn a_stub_s_answered_matcher_is_its_own_then_its_number_once_removed() {
        let stubs = Stubs::new(vec!["p".to_owned()], Vec::new());
        let id = stubs
            .declare(0, RequestMatcher::get().model("orders"))
            .respond(StubResponse::new(418))
            .unwrap();
        let mut answered = get("p");
        answered.stub = Some(id);
        let mut passed = get("p");
        passed.model = Some("other".to_owned());
        passed.stub = Some(id);
        let declared = stubs.answered_matcher(id.0, Some(0));
        // Its number decides; its own conditions only rank the near misses.
        assert!(declared.matches(&answered) && declared.matches(&passed));
        assert!(!declared.matches(&get("p")));
        assert_eq!(declared.to_string(), "GET model orders answered by stub 1");
        assert!(stubs.remove(id.0, None));
        let removed = stubs.answered_matcher(id.0, None);
        assert!(removed.matches(&answered) && !removed.matches(&get("p")));
        assert_eq!(removed.to_string(), "answered by stub 1");
    }
}
