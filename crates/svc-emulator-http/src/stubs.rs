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
//! - **Lifetime.** A reset of the project removes the stubs declared while it ran and puts back
//!   those of the config file, their counts at 0.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Response, StatusCode, header};
use serde::Serialize;

use super::journal::RequestMatcher;
use svc_emulator_state::config::stubs::{Cut, StubConfig, StubRequest, StubResponse};

/// A stub's number, from 1 in the order stubs were declared since the emulator started; from
/// [`StubBuilder::respond`](../svc_emulator/struct.StubBuilder.html#method.respond), and shown in the journal
/// ([`RecordedRequest::stub`](../svc_emulator/struct.RecordedRequest.html#method.stub)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct StubId(pub u64);

impl std::fmt::Display for StubId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stub {}", self.0)
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
}

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
    pub fn answered_matcher(&self) -> RequestMatcher {
        self.matcher.clone().decided_by_stub(self.id)
    }

    /// Whether it closes the connection (a FIN) instead of answering.
    pub(crate) fn drops(&self) -> bool {
        self.response.connection == Some(Cut::Drop)
    }

    /// How long its answer is held back.
    pub(crate) fn delay(&self) -> std::time::Duration {
        self.response.delay_duration()
    }

    /// Its answer: status, headers and body, or an empty answer that carries the cut.
    pub(crate) fn answer(&self) -> (Response<Body>, Option<bytes::Bytes>) {
        let r = &self.response;
        if let Some(cut) = r.connection {
            let mut response = Response::new(Body::empty());
            response.extensions_mut().insert(CutConnection {
                reset: cut == Cut::Reset,
            });
            return (response, None);
        }
        let (bytes, kind) = match (&r.json, &r.body) {
            (Some(json), _) => (
                bytes::Bytes::from(json.to_string()),
                Some("application/json"),
            ),
            (None, Some(text)) => (
                bytes::Bytes::from(text.clone()),
                Some("text/plain; charset=utf-8"),
            ),
            (None, None) => (bytes::Bytes::new(), None),
        };
        let mut response = Response::new(Body::from(bytes.clone()));
        // Checked when declared: 200 to 599, and headers an HTTP answer can carry.
        *response.status_mut() =
            StatusCode::from_u16(r.status.unwrap_or(200)).unwrap_or(StatusCode::OK);
        let headers = response.headers_mut();
        if let Some(kind) = kind {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
        }
        for (name, value) in &r.headers {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                headers.insert(name, value);
            }
        }
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

/// The stubs of an emulator, every project's, in order of declaration.
#[derive(Debug)]
pub struct Stubs {
    active: RwLock<Vec<Arc<Active>>>,
    /// How many stubs `active` holds, kept by every change of it: every request reads it, and
    /// a load costs no write to a shared lock as a read lock would.
    count: AtomicUsize,
    next_id: AtomicU64,
    /// The config file's stubs, by project index, with the numbers they keep: what a reset
    /// puts back.
    declared: Vec<Vec<(u64, StubConfig)>>,
    /// The served projects' names, by index (the registry's order, as the journal's).
    projects: Vec<String>,
}

impl Stubs {
    /// The stubs of the config file: `declared[i]` are project `projects[i]`'s. Checked when
    /// the config was.
    pub fn new(projects: Vec<String>, declared: Vec<Vec<StubConfig>>) -> Self {
        let mut next = 1;
        let declared: Vec<Vec<(u64, StubConfig)>> = declared
            .into_iter()
            .map(|stubs| {
                stubs
                    .into_iter()
                    .map(|stub| {
                        next += 1;
                        (next - 1, stub)
                    })
                    .collect()
            })
            .collect();
        let stubs = Self {
            active: RwLock::new(Vec::new()),
            count: AtomicUsize::new(0),
            next_id: AtomicU64::new(next),
            declared,
            projects,
        };
        {
            let mut active = stubs.write();
            for project in 0..stubs.projects.len() {
                stubs.put_back_declared(&mut active, project);
            }
        }
        stubs
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<Active>>> {
        // A plain list: consistent whatever panicked while holding it.
        self.active.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> Writing<'_> {
        Writing {
            active: self.active.write().unwrap_or_else(|e| e.into_inner()),
            count: &self.count,
        }
    }

    /// The index of the served project `name`.
    pub fn project_index(&self, name: &str) -> Option<usize> {
        self.projects.iter().position(|p| p == name)
    }

    /// Whether no stub is declared: the request path skips the rest.
    pub(crate) fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    /// Whether a stub of `project` asks about request bodies.
    pub(crate) fn read_bodies(&self, project: usize) -> bool {
        self.read()
            .iter()
            .any(|s| s.project == project && s.matcher.reads_bodies())
    }

    /// Adds a stub of the config's form to `project`, answering after every earlier one.
    pub fn add(&self, project: usize, stub: StubConfig) -> Result<StubInfo, StubError> {
        stub.check().map_err(StubError::Invalid)?;
        let matcher = matcher_of(&stub.request);
        Ok(self.push(project, matcher, stub))
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
        let parts = matcher.stub_parts()?;
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
        Ok(self.push(project, matcher, stub))
    }

    /// Declares a stub after every other, under a new number.
    fn push(&self, project: usize, matcher: RequestMatcher, stub: StubConfig) -> StubInfo {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let active = Arc::new(Active::new(id, project, matcher, stub, false));
        let info = active.info(self.name(project));
        self.write().push(active);
        info
    }

    fn name(&self, project: usize) -> &str {
        self.projects.get(project).map_or("", String::as_str)
    }

    /// The stubs of `project` (every project's with `None`), in order of declaration.
    pub fn list(&self, project: Option<usize>) -> Vec<StubInfo> {
        self.read()
            .iter()
            .filter(|s| project.is_none_or(|p| s.project == p))
            .map(|s| s.info(self.name(s.project)))
            .collect()
    }

    /// The stub numbered `id`, if it is still declared (and of `project`, when given).
    pub fn get(&self, id: u64, project: Option<usize>) -> Option<Arc<Active>> {
        self.read()
            .iter()
            .find(|s| s.id == id && project.is_none_or(|p| s.project == p))
            .cloned()
    }

    /// Removes the stub numbered `id` (of `project`, when given); whether there was one.
    pub fn remove(&self, id: u64, project: Option<usize>) -> bool {
        let mut active = self.write();
        let before = active.len();
        active.retain(|s| !(s.id == id && project.is_none_or(|p| s.project == p)));
        active.len() != before
    }

    /// Removes every stub of `project`, the config file's included (a reset puts those back).
    pub fn clear(&self, project: usize) -> usize {
        let mut active = self.write();
        let before = active.len();
        active.retain(|s| s.project != project);
        before - active.len()
    }

    /// What a reset of `project` does, at once for every request: its stubs are the config
    /// file's again, under their numbers, their counts at 0.
    pub(crate) fn reset(&self, project: usize) {
        let mut active = self.write();
        active.retain(|s| s.project != project);
        self.put_back_declared(&mut active, project);
    }

    /// Puts `project`'s stubs of the config file back in `active`, after the others.
    fn put_back_declared(&self, active: &mut Writing<'_>, project: usize) {
        for (id, stub) in self.declared.get(project).into_iter().flatten() {
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

    /// The stub that answers `request` of `project`, if any: each one that matches counts it,
    /// in order, until one is active for it.
    pub fn pick(
        &self,
        project: usize,
        request: &crate::journal::RecordedRequest,
    ) -> Option<Arc<Active>> {
        let active = self.read();
        for stub in active.iter().filter(|s| s.project == project) {
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

/// The stubs, held for a change: the count follows when the change is done, before the lock
/// goes.
struct Writing<'a> {
    active: std::sync::RwLockWriteGuard<'a, Vec<Arc<Active>>>,
    count: &'a AtomicUsize,
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
        self.count.store(self.active.len(), Ordering::Release);
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
pub(crate) struct StubParts {
    pub(crate) project: Option<String>,
    pub request: StubRequest,
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

impl<'a> StubBuilder<'a> {
    /// A builder over the emulator's stubs (users get one from `Emulator::stub`).
    #[doc(hidden)]
    pub fn new(stubs: &'a Stubs, default_project: usize, matcher: RequestMatcher) -> Self {
        Self {
            stubs,
            default_project,
            matcher,
            after: 0,
            times: None,
        }
    }

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
