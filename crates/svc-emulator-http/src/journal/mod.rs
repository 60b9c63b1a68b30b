//! The request journal: what the emulator received and answered, kept in memory for tests to
//! read (`GET /_emulator/projects/{project}/requests`, `Emulator::requests`).
//!
//! - **What.** Every request the router answers, but the emulator-only routes (`/_emulator/...`,
//!   so that reading the journal does not fill it): its arrival time, method, path and query as
//!   received, what its path names (project, environment, resource, model; `path.rs`), the
//!   answer's status and the time to it. Fault mode's refusals never reach the router and are
//!   not recorded (`Emulator::fault_counts` counts them).
//! - **How much.** A ring of the newest `EmulatorConfig::journal_capacity` requests (10,000
//!   by default; 0 turns the journal off); the older ones are dropped and counted, per project.
//!   Also at most `BUDGET` bytes of paths, queries and bodies: past it, the oldest entries
//!   are dropped too (a path and query past `TARGET_CAP` is redacted and cut when recorded).
//!   So hostile requests (long URLs, large bodies) cannot make the journal hold more.
//! - **Bodies** only when `EmulatorConfig::journal_bodies` is on: the first `BODY_CAP` bytes
//!   of each request and response body, copied as they pass (the crate's `capture.rs`). Off, a request costs
//!   the journal two clock readings, a few clones of reference-counted values and one lock.
//! - **Secrets** never appear (`redact.rs`); the journal keeps what it received and redacts each
//!   entry when it is read.
//! - **Whose.** A request belongs to the project its path names, if served; else to the project
//!   of its credential (an API key, a resource token, a valid session or service token), if any.
//!   A project's route lists its own requests; a request that belongs to no project (no served
//!   project in its path, no valid credential) is listed only by `Emulator::requests`.
//!

mod matcher;
pub(crate) mod path;
mod record;
mod redact;

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::http::Method;
use bytes::Bytes;
use serde_json::Value;
use svc_model::Timestamp;

pub use matcher::verify;
pub use matcher::{RequestMatcher, Times, UnmetExpectation};
pub use record::Listed;
pub use record::{BodyContent, CapturedBody, RecordedRequest, RequestSource, StubId};
pub use redact::Redactor;

/// How much of each body the journal keeps: 64 KiB.
pub(crate) const BODY_CAP: usize = 64 * 1024;

/// How much of a path and query the journal keeps: 8 KiB. A longer one is redacted, cut there
/// and ends in `…`.
pub(crate) const TARGET_CAP: usize = 8 * 1024;

/// How many bytes of paths, queries and bodies the journal keeps in all: 64 MiB. Past it, the
/// oldest entries are dropped (each keeps at most two [`BODY_CAP`]s and a [`TARGET_CAP`], so
/// at least 240 entries fit).
pub(crate) const BUDGET: usize = 64 * 1024 * 1024;

/// The journal of one emulator.
pub struct Journal {
    capacity: usize,
    bodies: bool,
    next_id: AtomicU64,
    ring: Mutex<Ring>,
    redactor: Redactor,
    /// The served projects' names, by index (the registry's order).
    projects: Vec<String>,
    by_name: HashMap<String, usize>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("capacity", &self.capacity)
            .field("bodies", &self.bodies)
            .finish_non_exhaustive()
    }
}

/// The entries, oldest first (by completion), and what was dropped.
#[derive(Default)]
struct Ring {
    entries: VecDeque<Entry>,
    /// The bytes of the entries' paths, queries and bodies.
    bytes: usize,
    /// Entries dropped since the last clear: all of them, and each project's.
    dropped: u64,
    dropped_by_project: Vec<u64>,
}

/// One answered request, as received (unredacted: redaction happens when it is read).
#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) id: u64,
    pub(crate) time: SystemTime,
    pub(crate) method: Method,
    /// The path and query as received. A copy: the request's `Uri` shares the allocation of
    /// the connection's read buffer, which an entry kept for long would pin (and make hyper
    /// allocate a new buffer for the next request).
    pub(crate) target: Box<str>,
    /// The answer's status; 0 when a stub cut the connection instead.
    pub(crate) status: u16,
    pub(crate) duration: Duration,
    /// The index of the served project it belongs to.
    pub(crate) owner: Option<usize>,
    pub(crate) bodies: Option<Arc<Bodies>>,
    /// Who sent it.
    pub(crate) source: RequestSource,
    /// The stub that answered it, if one did.
    pub(crate) stub: Option<u64>,
}

impl Entry {
    /// What the entry holds beyond its fixed size, for the budget.
    fn bytes(&self) -> usize {
        self.target.len() + self.bodies.as_deref().map_or(0, Bodies::bytes)
    }
}

/// The captured bodies of an entry.
#[derive(Default)]
pub(crate) struct Bodies {
    pub(crate) request: Option<Captured>,
    pub(crate) response: Option<Captured>,
}

impl Bodies {
    fn bytes(&self) -> usize {
        let len = |c: &Option<Captured>| c.as_ref().map_or(0, |c| c.kept.len());
        len(&self.request) + len(&self.response)
    }
}

/// What passed of one body: its first [`BODY_CAP`] bytes, how many passed in all, and whether
/// it passed whole.
#[derive(Clone)]
pub(crate) struct Captured {
    pub(crate) kept: Bytes,
    pub(crate) seen: u64,
    pub(crate) complete: bool,
}

/// Whose entries: everyone's, or one served project's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every project's entries.
    All,
    /// The entries of the served project at this index.
    Project(usize),
}

impl Journal {
    /// A journal of at most `capacity` entries (0: off), keeping bodies or not, hiding the
    /// `redactor`'s secrets, for the served `projects` (by index, in the registry's order).
    pub fn new(capacity: usize, bodies: bool, redactor: Redactor, projects: Vec<String>) -> Self {
        let by_name = projects
            .iter()
            .enumerate()
            .map(|(i, name)| (name.clone(), i))
            .collect();
        let ring = Ring {
            dropped_by_project: vec![0; projects.len()],
            ..Ring::default()
        };
        Self {
            capacity,
            bodies,
            next_id: AtomicU64::new(1),
            ring: Mutex::new(ring),
            redactor,
            projects,
            by_name,
        }
    }

    /// What hides the emulator's secrets (keys, tokens) in what it shows.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Whether the journal records requests (a capacity above 0).
    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// Whether bodies are captured.
    pub fn keeps_bodies(&self) -> bool {
        self.bodies
    }

    /// The number of the request that just arrived.
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The name of the served project numbered `index`.
    pub(crate) fn project_name(&self, index: usize) -> Option<&str> {
        self.projects.get(index).map(String::as_str)
    }

    /// The index of the served project `name`.
    pub fn project_index(&self, name: &str) -> Option<usize> {
        // It runs on every request: a few names are compared faster than one is hashed.
        if self.projects.len() <= 8 {
            return self.projects.iter().position(|p| p == name);
        }
        self.by_name.get(name).copied()
    }

    /// What an entry keeps of a request's path and query: all of it, or past [`TARGET_CAP`]
    /// its redacted form, cut there and ending in `…` (so that the cut leaves no part of a
    /// secret the redaction on reading could no longer find).
    pub(crate) fn target(&self, target: &str) -> Box<str> {
        if target.len() <= TARGET_CAP {
            return target.into();
        }
        let redacted = match target.split_once('?') {
            Some((path, query)) => {
                format!(
                    "{}?{}",
                    self.redactor.text(path),
                    self.redactor.query(query)
                )
            }
            None => self.redactor.text(target).into_owned(),
        };
        let mut end = TARGET_CAP.min(redacted.len());
        while !redacted.is_char_boundary(end) {
            end -= 1;
        }
        let mut kept = String::with_capacity(end + '…'.len_utf8());
        kept.push_str(&redacted[..end]);
        if end < redacted.len() {
            kept.push('…');
        }
        kept.into_boxed_str()
    }

    fn ring(&self) -> std::sync::MutexGuard<'_, Ring> {
        // The ring stays consistent whatever panicked while holding it.
        self.ring.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records an answered request, dropping the oldest entries past the capacity or the body
    /// budget.
    pub(crate) fn push(&self, entry: Entry) {
        if !self.enabled() {
            return;
        }
        let mut guard = self.ring();
        let ring = &mut *guard;
        ring.bytes += entry.bytes();
        ring.entries.push_back(entry);
        while ring.entries.len() > self.capacity || (ring.bytes > BUDGET && ring.entries.len() > 1)
        {
            let Some(old) = ring.entries.pop_front() else {
                break;
            };
            ring.bytes -= old.bytes();
            ring.dropped += 1;
            if let Some(count) = old.owner.and_then(|i| ring.dropped_by_project.get_mut(i)) {
                *count += 1;
            }
        }
    }

    /// The entries of `scope`, oldest first (by arrival), redacted; with their bodies or not.
    pub fn records(&self, scope: Scope, bodies: bool) -> Vec<RecordedRequest> {
        self.records_since(scope, bodies, None)
    }

    /// [`records`](Self::records) that arrived in `matcher`'s time window (its
    /// [`since`](RequestMatcher::since)), which the matcher may then count: what need not be
    /// read is not.
    pub fn records_for(
        &self,
        scope: Scope,
        bodies: bool,
        matcher: &RequestMatcher,
    ) -> Vec<RecordedRequest> {
        self.records_since(scope, bodies, matcher.arrived_from())
    }

    /// [`records`](Self::records) that arrived at `since` or later (to the millisecond, as the
    /// journal shows times): a reader that polls for what is new reads only that.
    fn records_since(
        &self,
        scope: Scope,
        bodies: bool,
        since: Option<SystemTime>,
    ) -> Vec<RecordedRequest> {
        // A time read back from the journal is cut to the millisecond, so it is never later
        // than its entry's own: that entry stays.
        let mut entries: Vec<Entry> = {
            let ring = self.ring();
            ring.entries
                .iter()
                .filter(|e| scope == Scope::All || e.owner.map(Scope::Project) == Some(scope))
                .filter(|e| since.is_none_or(|since| e.time >= since))
                .cloned()
                .collect()
        };
        entries.sort_by_key(|e| e.id);
        entries.iter().map(|e| self.record(e, bodies)).collect()
    }

    /// How many entries of `scope` were dropped since the last clear.
    pub fn dropped(&self, scope: Scope) -> u64 {
        let ring = self.ring();
        match scope {
            Scope::All => ring.dropped,
            Scope::Project(i) => ring.dropped_by_project.get(i).copied().unwrap_or(0),
        }
    }

    /// Forgets the entries of `scope` and their dropped count.
    pub fn clear(&self, scope: Scope) {
        let mut guard = self.ring();
        let ring = &mut *guard;
        match scope {
            Scope::All => {
                ring.entries.clear();
                ring.bytes = 0;
                ring.dropped = 0;
                ring.dropped_by_project.iter_mut().for_each(|c| *c = 0);
            }
            Scope::Project(i) => {
                let mut freed = 0;
                ring.entries.retain(|e| {
                    let theirs = e.owner == Some(i);
                    if theirs {
                        freed += e.bytes();
                    }
                    !theirs
                });
                ring.bytes -= freed;
                if let Some(count) = ring.dropped_by_project.get_mut(i) {
                    ring.dropped -= (*count).min(ring.dropped);
                    *count = 0;
                }
            }
        }
    }

    /// An entry as the journal shows it.
    fn record(&self, entry: &Entry, bodies: bool) -> RecordedRequest {
        let (raw_path, query) = match entry.target.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (&*entry.target, None),
        };
        let named = path::names(raw_path);
        // Decoded, a secret in a segment is written as configured: hide it again.
        let decoded = |segment: Option<&str>| {
            segment.map(|s| self.redactor.text(&path::decode(s)).into_owned())
        };
        let project = decoded(named.project)
            .or_else(|| entry.owner.and_then(|i| self.projects.get(i)).cloned());
        // The account routes (`/projects/{p}/{e}/auth/...`) take one-time codes in `code`.
        let account = named.resource.is_none() && raw_path.split('/').nth(4) == Some("auth");
        let secret_keys: &[&str] = if account { &["code"] } else { &[] };
        // What the request sent under secret names is hidden wherever the entry shows it.
        let sent_body = entry
            .bodies
            .as_deref()
            .and_then(|b| b.request.as_ref())
            .filter(|c| c.complete && c.seen == c.kept.len() as u64)
            .map(|c| &c.kept[..]);
        let redactor = self
            .redactor
            .with_sent(redact::sent_secrets(query, sent_body, secret_keys));
        let redactor = redactor.as_ref();
        let body = |captured: Option<&Captured>| {
            captured.and_then(|c| Self::captured(redactor, c, secret_keys))
        };
        let (request_body, response_body) = match entry.bodies.as_deref() {
            Some(b) if bodies => (body(b.request.as_ref()), body(b.response.as_ref())),
            _ => (None, None),
        };
        RecordedRequest {
            id: entry.id,
            time: to_millis(Timestamp::from_system_time(entry.time)),
            method: entry.method.as_str().to_owned(),
            path: redactor.text(raw_path).into_owned(),
            query: query.map(|q| redactor.query(q)),
            project,
            environment: decoded(named.environment),
            resource: decoded(named.resource),
            model: decoded(named.model),
            status: entry.status,
            // Whole microseconds: `0.745`, not `0.7447760000000001`.
            duration_ms: entry.duration.as_micros() as f64 / 1000.0,
            request_body,
            response_body,
            source: entry.source,
            stub: entry.stub.map(StubId),
        }
    }

    /// A captured body as the journal shows it, redacted by `redactor`: `None` when nothing
    /// passed.
    fn captured(redactor: &Redactor, c: &Captured, secret_keys: &[&str]) -> Option<CapturedBody> {
        if c.seen == 0 {
            return None;
        }
        let truncated = !c.complete || c.seen > c.kept.len() as u64;
        let json = if truncated {
            None
        } else {
            serde_json::from_slice::<Value>(&c.kept).ok()
        };
        let content = match json {
            Some(mut value) => {
                redactor.json(&mut value, secret_keys);
                BodyContent::Json(value)
            }
            // Cut short, not JSON, or JSON a client got wrong: masked by the same names and
            // token shapes, read as text.
            None => match text(&c.kept, truncated) {
                Some(text) => BodyContent::Text(redactor.loose_text(text, secret_keys, truncated)),
                None => BodyContent::Binary,
            },
        };
        Some(CapturedBody {
            content,
            bytes: c.seen,
            truncated,
        })
    }
}

/// The bytes as UTF-8 text; a body cut short may end inside a character, which is left out.
fn text(bytes: &[u8], truncated: bool) -> Option<&str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Some(text),
        Err(e) if truncated && e.error_len().is_none() => {
            std::str::from_utf8(bytes.get(..e.valid_up_to())?).ok()
        }
        Err(_) => None,
    }
}

/// `t` cut to whole milliseconds.
fn to_millis(t: Timestamp) -> Timestamp {
    let nanos = t.subsec_nanos() / 1_000_000 * 1_000_000;
    Timestamp::from_unix(t.unix_seconds(), nanos).unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal(capacity: usize) -> Journal {
        Journal::new(
            capacity,
            true,
            Redactor::new(["svc_key_x"]),
            vec!["demo".to_owned(), "other".to_owned()],
        )
    }

    fn entry(j: &Journal, path: &str, owner: Option<usize>) -> Entry {
        Entry {
            id: j.next_id(),
            time: SystemTime::UNIX_EPOCH + Duration::from_micros(1_500_250),
            method: Method::GET,
            target: path.into(),
            status: 200,
            duration: Duration::from_micros(1500),
            owner,
            bodies: None,
            source: RequestSource::Client,
            stub: None,
        }
    }

    #[test]
    fn records_since_keep_what_arrived_in_that_millisecond_or_later() {
        let j = journal(10);
        let at = |micros: u64| SystemTime::UNIX_EPOCH + Duration::from_micros(micros);
        for (micros, path) in [
            (1_000_900, "/a"),
            (1_001_100, "/b"),
            (1_001_900, "/c"),
            (1_002_000, "/d"),
        ] {
            let mut e = entry(&j, path, Some(0));
            e.time = at(micros);
            j.push(e);
        }
        let paths = |since: Option<SystemTime>| -> Vec<String> {
            j.records_since(Scope::Project(0), false, since)
                .into_iter()
                .map(|r| r.path)
                .collect()
        };
        assert_eq!(paths(None), ["/a", "/b", "/c", "/d"]);
        // `since` as the journal shows /b's time (...01.001Z): /b and /c, of that
        // millisecond, stay.
        assert_eq!(paths(Some(at(1_001_000))), ["/b", "/c", "/d"]);
        assert_eq!(paths(Some(at(1_003_000))), Vec::<String>::new());
    }

    #[test]
    fn the_ring_drops_the_oldest_and_counts_them_per_project() {
        let j = journal(3);
        for i in 0..5 {
            let owner = if i % 2 == 0 { Some(0) } else { Some(1) };
            j.push(entry(&j, &format!("/x/{i}"), owner));
        }
        let paths: Vec<String> = j
            .records(Scope::All, false)
            .into_iter()
            .map(|r| r.path)
            .collect();
        assert_eq!(paths, ["/x/2", "/x/3", "/x/4"]);
        assert_eq!(j.dropped(Scope::All), 2);
        // /x/0 (demo) and /x/1 (other) were dropped.
        assert_eq!(j.dropped(Scope::Project(0)), 1);
        assert_eq!(j.dropped(Scope::Project(1)), 1);
        assert_eq!(j.records(Scope::Project(0), false).len(), 2);
        j.clear(Scope::Project(0));
        assert_eq!(j.records(Scope::All, false).len(), 1);
        assert_eq!(j.dropped(Scope::Project(0)), 0);
        assert_eq!(j.dropped(Scope::All), 1);
        j.clear(Scope::All);
        assert!(j.records(Scope::All, false).is_empty());
        assert_eq!(j.dropped(Scope::All), 0);
    }

    #[test]
    fn projects_are_found_by_name_few_or_many() {
        for count in [2, 8, 9, 50] {
            let names: Vec<String> = (0..count).map(|i| format!("p{i}")).collect();
            let j = Journal::new(1, false, Redactor::default(), names);
            assert_eq!(j.project_index("p1"), Some(1), "{count}");
            assert_eq!(j.project_index(&format!("p{}", count - 1)), Some(count - 1));
            assert_eq!(j.project_index("nope"), None);
        }
    }

    #[test]
    fn long_targets_are_redacted_then_cut() {
        let j = journal(10);
        let long = format!("/x/svc_key_x?q={}", "a".repeat(TARGET_CAP));
        let target = j.target(&long);
        assert!(target.len() <= TARGET_CAP + '…'.len_utf8());
        assert!(
            target.starts_with("/x/***?q=aaa") && target.ends_with("a…"),
            "{target}"
        );
        // The cut never leaves part of a secret.
        let edge = format!("/{}svc_key_x", "b".repeat(TARGET_CAP - 5));
        assert!(!j.target(&edge).contains("svc_"), "{}", j.target(&edge));
        assert_eq!(&*j.target("/short?x=1"), "/short?x=1");
        // Cut inside a character.
        let wide = format!("/{}", "é".repeat(TARGET_CAP));
        assert!(j.target(&wide).ends_with("é…"));
    }

    #[test]
    fn a_journal_of_capacity_zero_records_nothing() {
        let j = journal(0);
        assert!(!j.enabled());
        j.push(entry(&j, "/x", None));
        assert!(j.records(Scope::All, false).is_empty());
    }

    #[test]
    fn entries_are_listed_by_arrival() {
        let j = journal(10);
        let first = entry(&j, "/first", None);
        let second = entry(&j, "/second", None);
        j.push(second);
        j.push(first);
        let ids: Vec<u64> = j.records(Scope::All, false).iter().map(|r| r.id).collect();
        assert_eq!(ids, [1, 2]);
    }

    #[test]
    fn records_name_what_their_path_names_and_hide_secrets() {
        let j = journal(10);
        j.push(entry(
            &j,
            "/projects/demo/prod/my%20shop/models/orders/svc_key_x?api_key=1&q=svc_key_x",
            Some(0),
        ));
        j.push(entry(&j, "/api/proxy_request", Some(1)));
        let records = j.records(Scope::All, false);
        let r = &records[0];
        assert_eq!(r.path, "/projects/demo/prod/my%20shop/models/orders/***");
        assert_eq!(r.query.as_deref(), Some("api_key=***&q=***"));
        assert_eq!(r.project.as_deref(), Some("demo"));
        assert_eq!(r.environment.as_deref(), Some("prod"));
        assert_eq!(r.resource.as_deref(), Some("my shop"));
        assert_eq!(r.model.as_deref(), Some("orders"));
        assert_eq!(r.status, 200);
        assert_eq!(r.time_rfc3339(), "1970-01-01T00:00:01.500Z");
        assert!((r.duration_ms - 1.5).abs() < 1e-9);
        // The proxy names no project: its credential's project is shown.
        assert_eq!(records[1].project.as_deref(), Some("other"));
        assert_eq!(records[1].resource, None);
    }

    fn captured(kept: &[u8], seen: u64, complete: bool) -> Captured {
        Captured {
            kept: Bytes::copy_from_slice(kept),
            seen,
            complete,
        }
    }

    #[test]
    fn bodies_are_json_text_or_binary_and_redacted() {
        let j = journal(10);
        let json = Journal::captured(
            j.redactor(),
            &captured(br#"{"password":"p","n":1}"#, 22, true),
            &[],
        )
        .unwrap();
        assert_eq!(
            json.json(),
            Some(&serde_json::json!({"password": "***", "n": 1}))
        );
        assert!(!json.truncated);
        let cut = Journal::captured(
            j.redactor(),
            &captured(br#"{"n":"svc_key_x"#, 99, true),
            &[],
        )
        .unwrap();
        assert_eq!(cut.text(), Some(r#"{"n":"***"#));
        assert!(cut.truncated);
        assert_eq!(cut.bytes, 99);
        let form = Journal::captured(j.redactor(), &captured(b"user=a&password=b", 17, true), &[])
            .unwrap();
        assert_eq!(form.text(), Some("user=a&password=***"));
        let binary =
            Journal::captured(j.redactor(), &captured(&[0xff, 0xfe, 0], 3, true), &[]).unwrap();
        assert_eq!(binary.content, BodyContent::Binary);
        // Cut inside a character: the character is left out.
        let cut_char = Journal::captured(
            j.redactor(),
            &captured("é".as_bytes()[..1].as_ref(), 2, false),
            &[],
        );
        assert_eq!(cut_char.unwrap().text(), Some(""));
        assert!(Journal::captured(j.redactor(), &captured(b"", 0, false), &[]).is_none());
        let code = Journal::captured(
            j.redactor(),
            &captured(br#"{"code":"123"}"#, 14, true),
            &["code"],
        );
        assert_eq!(
            code.unwrap().json(),
            Some(&serde_json::json!({"code": "***"}))
        );
    }

    #[test]
    fn bodies_past_the_budget_drop_the_oldest_entries() {
        let j = journal(10_000);
        let big = Captured {
            kept: Bytes::from(vec![b'x'; BODY_CAP]),
            seen: BODY_CAP as u64,
            complete: true,
        };
        let fit = BUDGET / (2 * BODY_CAP + 2);
        for _ in 0..fit + 3 {
            let mut e = entry(&j, "/x", None);
            e.bodies = Some(Arc::new(Bodies {
                request: Some(big.clone()),
                response: Some(big.clone()),
            }));
            j.push(e);
        }
        assert_eq!(j.records(Scope::All, false).len(), fit);
        assert_eq!(j.dropped(Scope::All), 3);
    }
}
