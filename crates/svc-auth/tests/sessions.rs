//! Sessions: single-flight refresh, rotation, failures, and token stores shared between sessions.
//!
//! Time is passed in, so nothing sleeps; concurrency comes from many tasks on a multi-thread
//! runtime released together by a barrier.

use std::collections::HashSet;
use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use svc_auth::{
    FAILED_REFRESH_HOLD, FileTokenStore, MemoryTokenStore, REFRESH_THRESHOLD, RefreshError,
    SVC_AUTH_KEY, Secret, Session, SessionError, TokenStore, TokenStoreError,
};
use svc_model::{AuthState, Timestamp};
use tokio::sync::Barrier;

fn t0() -> Timestamp {
    Timestamp::from_unix_seconds(1_800_000_000).unwrap()
}

fn after(base: Timestamp, secs: u64) -> Timestamp {
    base.checked_add(Duration::from_secs(secs)).unwrap()
}

/// Tokens whose access token expires `access_in` seconds after `now` and whose refresh token
/// expires in a week.
fn state(n: u64, now: Timestamp, access_in: u64) -> AuthState {
    AuthState::new(format!("access-{n}"), format!("refresh-{n}"))
        .with_access_token_expires(after(now, access_in))
        .with_refresh_token_expires(after(now, 7 * 24 * 3600))
}

fn saved(store: &dyn TokenStore) -> Option<AuthState> {
    store
        .get(SVC_AUTH_KEY)
        .unwrap()
        .map(|text| serde_json::from_str(&text).unwrap())
}

fn session_with(initial: AuthState) -> (Arc<Session>, Arc<MemoryTokenStore>) {
    let store = Arc::new(MemoryTokenStore::new());
    let session = Session::restore(store.clone()).unwrap();
    session.set(initial).unwrap();
    (Arc::new(session), store)
}

/// The `now` given to `valid_state`, counting the callers that have entered it: the conversion
/// to a `Timestamp` is the first thing `valid_state` does, and in the same poll it reaches the
/// refresh gate (it holds it, or waits in its queue).
struct CountingNow {
    now: Timestamp,
    entered: Arc<AtomicUsize>,
}

impl From<CountingNow> for Timestamp {
    fn from(c: CountingNow) -> Timestamp {
        c.entered.fetch_add(1, Ordering::SeqCst);
        c.now
    }
}

/// Runs `valid_state` from `n` tasks released together. Every refresh call bumps `calls`, then
/// waits until all `n` callers are inside `valid_state` (so they are all queued behind it),
/// and returns `outcome`.
async fn stampede(
    session: &Arc<Session>,
    n: usize,
    now: Timestamp,
    calls: &Arc<AtomicUsize>,
    outcome: Result<AuthState, RefreshError>,
) -> Vec<Result<Option<AuthState>, SessionError>> {
    let barrier = Arc::new(Barrier::new(n));
    let entered = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let session = Arc::clone(session);
            let calls = Arc::clone(calls);
            let barrier = Arc::clone(&barrier);
            let entered = Arc::clone(&entered);
            let outcome = outcome.clone();
            tokio::spawn(async move {
                barrier.wait().await;
                let now = CountingNow {
                    now,
                    entered: Arc::clone(&entered),
                };
                session
                    .valid_state(now, move |_refresh_token: Secret| async move {
                        calls.fetch_add(1, Ordering::SeqCst);
                        while entered.load(Ordering::SeqCst) < n {
                            tokio::task::yield_now().await;
                        }
                        outcome
                    })
                    .await
            })
        })
        .collect();
    let mut results = Vec::with_capacity(n);
    for task in tasks {
        results.push(task.await.unwrap());
    }
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_thousand_concurrent_callers_share_one_refresh() {
    let now = t0();
    let (session, store) = session_with(state(1, now, 20));
    let calls = Arc::new(AtomicUsize::new(0));
    let fresh = state(2, now, 3600);

    let results = stampede(&session, 1000, now, &calls, Ok(fresh.clone())).await;

    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(results.len(), 1000);
    for r in results {
        assert_eq!(r.unwrap(), Some(fresh.clone()));
    }
    assert_eq!(session.state(), Some(fresh.clone()));
    assert_eq!(saved(&*store), Some(fresh));
}

#[tokio::test]
async fn the_refresh_gets_the_current_refresh_token() {
    let now = t0();
    let (session, _store) = session_with(state(1, now, 5));
    let got = session
        .valid_state(now, |token: Secret| async move {
            assert_eq!(token.expose(), "refresh-1");
            Ok(state(2, now, 3600))
        })
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.access_token, "access-2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_refresh_with_30_seconds_or_more_left_or_without_expiries() {
    let now = t0();
    let calls = Arc::new(AtomicUsize::new(0));
    let threshold = REFRESH_THRESHOLD.as_secs();
    let cases = [
        state(1, now, 3600),
        state(1, now, threshold + 1),
        state(1, now, threshold), // exactly 30 s away: not "less than"
        AuthState::new("a", "r"), // no expiry at all: never refreshed
        AuthState::new("a", "r").with_refresh_token_expires(after(now, threshold)),
    ];
    for initial in cases {
        let (session, _) = session_with(initial.clone());
        let results = stampede(&session, 50, now, &calls, Ok(state(9, now, 3600))).await;
        for r in results {
            assert_eq!(r.unwrap(), Some(initial.clone()));
        }
        assert!(!session.refresh_due(now));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    // No session: nothing to refresh, no call.
    let empty = Arc::new(Session::new());
    let results = stampede(&empty, 10, now, &calls, Ok(state(9, now, 3600))).await;
    assert!(results.into_iter().all(|r| r.unwrap().is_none()));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_near_refresh_expiry_triggers_even_with_a_far_access_expiry() {
    let now = t0();
    let initial = AuthState::new("access-1", "refresh-1")
        .with_access_token_expires(after(now, 3600))
        .with_refresh_token_expires(after(now, 10));
    let (session, store) = session_with(initial);
    assert!(session.refresh_due(now));
    let calls = Arc::new(AtomicUsize::new(0));
    let fresh = state(2, now, 3600);
    let results = stampede(&session, 100, now, &calls, Ok(fresh.clone())).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(
        results
            .into_iter()
            .all(|r| r.unwrap() == Some(fresh.clone()))
    );
    assert_eq!(saved(&*store), Some(fresh));

    // Already expired tokens are refreshed too (the server decides whether they still work).
    let (session, _) = session_with(state(3, after(now, 0), 0));
    let later = after(now, 600);
    let results = stampede(&session, 10, later, &calls, Ok(state(4, later, 3600))).await;
    assert!(
        results
            .into_iter()
            .all(|r| r.unwrap().unwrap().access_token == "access-4")
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_401_clears_the_session_and_the_store_and_fails_every_waiter() {
    let now = t0();
    let (session, store) = session_with(state(1, now, 20));
    let calls = Arc::new(AtomicUsize::new(0));
    let rejected = RefreshError::rejected(401, "refresh token expired");

    let results = stampede(&session, 200, now, &calls, Err(rejected)).await;

    assert_eq!(calls.load(Ordering::SeqCst), 1);
    for r in results {
        let err = r.unwrap_err();
        assert!(matches!(err, SessionError::RefreshRejected(_)), "{err:?}");
        assert!(err.is_auth() && err.session_cleared());
        assert_eq!(err.refresh_error().unwrap().status(), Some(401));
    }
    assert_eq!(session.state(), None);
    assert!(session.access_header().is_none());
    assert_eq!(store.get(SVC_AUTH_KEY).unwrap(), None);

    // Once the failure's hold is over there is simply no session, and nothing to refresh.
    let later = after(now, FAILED_REFRESH_HOLD.as_secs() + 1);
    let after_clear = session
        .valid_state(later, |_| async { panic!("no refresh without a session") })
        .await;
    assert!(after_clear.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_failed_refresh_keeps_the_session_and_fails_every_waiter() {
    let start = t0();
    let initial = state(1, start, 20);
    let (session, store) = session_with(initial.clone());
    let calls = Arc::new(AtomicUsize::new(0));
    let hold = FAILED_REFRESH_HOLD.as_secs() + 1;
    for (round, failure) in [
        RefreshError::failed("connection refused")
            .with_source(std::io::Error::other("connection refused")),
        RefreshError::rejected(503, "service unavailable"),
        RefreshError::rejected(403, "forbidden"),
    ]
    .into_iter()
    .enumerate()
    {
        // Each round starts after the previous failure's hold, so it refreshes again.
        let now = after(start, round as u64 * hold);
        let before = calls.load(Ordering::SeqCst);
        let results = stampede(&session, 200, now, &calls, Err(failure.clone())).await;
        assert_eq!(calls.load(Ordering::SeqCst), before + 1, "{failure}");
        for r in results {
            let err = r.unwrap_err();
            assert!(matches!(err, SessionError::RefreshFailed(_)), "{err:?}");
            assert!(err.is_auth() && !err.session_cleared());
            assert_eq!(err.refresh_error().unwrap().status(), failure.status());
        }
        assert_eq!(session.state(), Some(initial.clone()));
        assert_eq!(saved(&*store), Some(initial.clone()));
    }

    // After the hold, the next call tries again, and can succeed.
    let later = after(start, 3 * hold);
    let fresh = state(2, later, 3600);
    let results = stampede(&session, 50, later, &calls, Ok(fresh.clone())).await;
    assert_eq!(calls.load(Ordering::SeqCst), 4);
    assert!(
        results
            .into_iter()
            .all(|r| r.unwrap() == Some(fresh.clone()))
    );
}

/// Callers that arrive after a refresh failed, with a clock read no later than
/// `FAILED_REFRESH_HOLD` after it, get its error without a call; later ones try again. Nothing
/// here depends on scheduling: the callers run one after another.
#[tokio::test]
async fn callers_just_after_a_failed_refresh_share_it_and_later_ones_retry() {
    let now = t0();
    let initial = state(1, now, 20);
    let (session, _store) = session_with(initial.clone());
    let failing = |calls: &Arc<AtomicUsize>| {
        let calls = Arc::clone(calls);
        move |_: Secret| async move {
            calls.fetch_add(1, Ordering::SeqCst);
            Err::<AuthState, _>(RefreshError::failed("connection refused"))
        }
    };
    let calls = Arc::new(AtomicUsize::new(0));
    let err = session.valid_state(now, failing(&calls)).await.unwrap_err();
    assert!(matches!(err, SessionError::RefreshFailed(_)), "{err:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // A caller whose clock was read before the failure ended (an earlier `now`), at the same
    // moment, or up to the hold after it: the same error, no call.
    let hold_end = now.checked_add(FAILED_REFRESH_HOLD).unwrap();
    for at in [
        now.checked_sub(Duration::from_secs(5)).unwrap(),
        now,
        after(now, 0)
            .checked_add(Duration::from_millis(999))
            .unwrap(),
        hold_end,
    ] {
        let err = session.valid_state(at, failing(&calls)).await.unwrap_err();
        assert!(matches!(err, SessionError::RefreshFailed(_)), "{err:?}");
        assert_eq!(calls.load(Ordering::SeqCst), 1, "no call at {at}");
    }
    assert_eq!(session.state(), Some(initial.clone()));

    // Just after the hold: a new refresh, which may succeed.
    let next = hold_end.checked_add(Duration::from_nanos(1)).unwrap();
    let fresh = state(2, next, 3600);
    let f = fresh.clone();
    let got = session
        .valid_state(next, move |_| async move { Ok(f) })
        .await
        .unwrap();
    assert_eq!(got, Some(fresh));

    // `set` (a new login) ends the hold at once.
    let (session, _store) = session_with(state(3, now, 20));
    session.valid_state(now, failing(&calls)).await.unwrap_err();
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    session.set(state(4, now, 20)).unwrap();
    let err = session.valid_state(now, failing(&calls)).await.unwrap_err();
    assert!(matches!(err, SessionError::RefreshFailed(_)));
    assert_eq!(calls.load(Ordering::SeqCst), 3, "a new session refreshes");

    // A 401 is held the same way: callers just after it learn why the session is gone.
    let (session, _store) = session_with(state(5, now, 20));
    let rejected = session
        .valid_state(now, |_| async {
            Err::<AuthState, _>(RefreshError::rejected(401, "expired"))
        })
        .await
        .unwrap_err();
    assert!(rejected.session_cleared());
    let again = session
        .valid_state(hold_end, |_| async { panic!("no session, no refresh") })
        .await
        .unwrap_err();
    assert!(again.session_cleared(), "{again:?}");
    let later = session
        .valid_state(next, |_| async { panic!("no session, no refresh") })
        .await
        .unwrap();
    assert_eq!(later, None);
}

/// A fake `auth/refresh` endpoint with rotation: each refresh token works once.
#[derive(Default)]
struct RotatingServer {
    inner: Mutex<RotatingInner>,
    violation: AtomicBool,
}

#[derive(Default)]
struct RotatingInner {
    current: String,
    used: HashSet<String>,
    issued: u64,
}

impl RotatingServer {
    fn refresh(&self, token: &str, now: Timestamp) -> Result<AuthState, RefreshError> {
        // The new tokens are themselves close to expiry, so later callers refresh again.
        self.refresh_for(token, now, 20)
    }

    /// Rotates, issuing an access token that expires `access_in` seconds after `now`.
    fn refresh_for(
        &self,
        token: &str,
        now: Timestamp,
        access_in: u64,
    ) -> Result<AuthState, RefreshError> {
        let mut inner = self.inner.lock().unwrap();
        if inner.used.contains(token) || token != inner.current {
            self.violation.store(true, Ordering::SeqCst);
            return Err(RefreshError::rejected(401, "refresh token already used"));
        }
        inner.used.insert(token.to_owned());
        inner.issued += 1;
        let next = state(100 + inner.issued, now, access_in);
        inner.current = next.refresh_token.clone();
        Ok(next)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn rotation_under_concurrency_never_reuses_a_refresh_token() {
    let start = t0();
    let initial = state(1, start, 20);
    let (session, store) = session_with(initial.clone());
    let server = Arc::new(RotatingServer::default());
    server.inner.lock().unwrap().current = initial.refresh_token.clone();

    for round in 0..30u64 {
        let now = after(start, round * 60);
        let barrier = Arc::new(Barrier::new(100));
        let tasks: Vec<_> = (0..100)
            .map(|_| {
                let (session, server, barrier) = (
                    Arc::clone(&session),
                    Arc::clone(&server),
                    Arc::clone(&barrier),
                );
                tokio::spawn(async move {
                    barrier.wait().await;
                    session
                        .valid_state(now, |token: Secret| async move {
                            tokio::task::yield_now().await;
                            server.refresh(token.expose(), now)
                        })
                        .await
                })
            })
            .collect();
        for task in tasks {
            let state = task.await.unwrap().unwrap();
            assert!(state.is_some(), "the session was never rejected");
        }
    }

    assert!(!server.violation.load(Ordering::SeqCst));
    let inner = server.inner.lock().unwrap();
    assert!(inner.issued >= 30, "at least one refresh per round");
    let newest = session.state().unwrap();
    assert_eq!(newest.refresh_token, inner.current);
    assert_eq!(saved(&*store).unwrap().refresh_token, inner.current);
}

#[tokio::test]
async fn set_or_clear_during_a_refresh_wins() {
    let now = t0();
    let (session, store) = session_with(state(1, now, 20));
    let login = state(5, now, 3600);
    let s = Arc::clone(&session);
    let l = login.clone();
    let got = session
        .valid_state(now, move |_| async move {
            s.set(l).unwrap(); // a new login while the refresh is in flight
            Ok(state(2, now, 3600))
        })
        .await
        .unwrap();
    assert_eq!(got, Some(login.clone()));
    assert_eq!(session.state(), Some(login.clone()));
    assert_eq!(saved(&*store), Some(login));

    let (session, store) = session_with(state(1, now, 20));
    let s = Arc::clone(&session);
    let got = session
        .valid_state(now, move |_| async move {
            s.clear().unwrap(); // logout while the refresh is in flight
            Ok(state(2, now, 3600))
        })
        .await
        .unwrap();
    assert_eq!(got, None);
    assert_eq!(session.state(), None);
    assert_eq!(store.get(SVC_AUTH_KEY).unwrap(), None);
}

/// A store whose writes fail.
struct ReadOnlyStore;

impl TokenStore for ReadOnlyStore {
    fn get(&self, _: &str) -> Result<Option<String>, TokenStoreError> {
        Ok(None)
    }
    fn set(&self, _: &str, _: &str) -> Result<(), TokenStoreError> {
        Err(TokenStoreError::other("read-only store"))
    }
    fn remove(&self, _: &str) -> Result<(), TokenStoreError> {
        Err(TokenStoreError::other("read-only store"))
    }
}

#[tokio::test]
async fn store_failures_are_reported_but_memory_moves_on() {
    let now = t0();
    let session = Session::restore(Arc::new(ReadOnlyStore)).unwrap();
    let err = session.set(state(1, now, 20)).unwrap_err();
    assert!(matches!(err, SessionError::Store(_)), "{err:?}");
    assert_eq!(session.state().unwrap().access_token, "access-1");

    // A refresh whose tokens cannot be saved: reported, but the rotated tokens are kept in
    // memory (the old refresh token is dead) and used by the next call without a refresh.
    let err = session
        .valid_state(now, |_| async move { Ok(state(2, now, 3600)) })
        .await
        .unwrap_err();
    assert!(matches!(err, SessionError::Store(_)) && !err.is_auth());
    let next = session
        .valid_state(now, |_| async { panic!("no second refresh") })
        .await
        .unwrap();
    assert_eq!(next.unwrap().access_token, "access-2");

    let err = session.clear().unwrap_err();
    assert!(err.to_string().contains("read-only store"));
    assert_eq!(session.state(), None);
}

#[test]
fn sessions_without_a_store_live_in_memory() {
    let session = Session::new();
    assert!(session.token_store().is_none());
    assert!(!session.has_tokens());
    session.set(AuthState::new("a", "r")).unwrap();
    assert!(session.has_tokens());
    assert_eq!(
        session
            .access_header()
            .unwrap()
            .header_value()
            .unwrap()
            .to_str()
            .unwrap(),
        "JWT a"
    );
    session.clear().unwrap();
    assert!(session.access_header().is_none());
}

#[test]
fn nothing_prints_a_token() {
    let now = t0();
    let session = Session::new();
    session
        .set(AuthState::new("SECRET-ACCESS", "SECRET-REFRESH").with_access_token_expires(now))
        .unwrap();
    let printed = format!("{session:?}");
    assert!(!printed.contains("SECRET"), "{printed}");
    assert!(printed.contains("has_tokens: true"), "{printed}");
    assert!(!format!("{:?}", session.access_header()).contains("SECRET"));
    assert!(!format!("{:?}", session.state()).contains("SECRET"));
    for err in [
        SessionError::RefreshFailed(RefreshError::failed("timed out")),
        SessionError::RefreshRejected(RefreshError::rejected(401, "expired")),
        SessionError::Store(TokenStoreError::other("disk full")),
    ] {
        assert!(!format!("{err} {err:?}").contains("SECRET"));
    }
}

#[test]
fn session_types_are_send_and_sync() {
    fn check<T: Send + Sync + 'static>() {}
    check::<Session>();
    check::<SessionError>();
    check::<RefreshError>();
    check::<MemoryTokenStore>();
    check::<FileTokenStore>();
    check::<Arc<dyn TokenStore>>();
}

// --- Sessions sharing a file store ------------------------------------------------------------

/// A directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        static N: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "svc-auth-it-{label}-{}-{}-{}",
            std::process::id(),
            Timestamp::now().unix_seconds(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn two_sessions_sharing_a_file_store() {
    let dir = TempDir::new("shared");
    let path = dir.0.join("tokens.json");
    let store: Arc<dyn TokenStore> = Arc::new(FileTokenStore::new(&path));
    let now = t0();

    // Restore on build: nothing yet.
    let a = Session::restore(Arc::clone(&store)).unwrap();
    assert!(!a.has_tokens());
    a.set(state(1, now, 3600)).unwrap();

    // A session built afterwards restores A's tokens; another entry in the file is kept.
    store.set("other_app", "untouched").unwrap();
    let b = Session::restore(Arc::new(FileTokenStore::new(&path))).unwrap();
    assert_eq!(b.state(), a.state());

    // B refreshes: the rotated tokens reach the file. A keeps its own in-memory tokens.
    let later = after(now, 3590);
    b.valid_state(later, |_| async move { Ok(state(2, later, 3600)) })
        .await
        .unwrap();
    assert_eq!(saved(&*store).unwrap().access_token, "access-2");
    assert_eq!(a.state().unwrap().access_token, "access-1");

    // Logout of A clears the entry; B keeps its in-memory session.
    a.clear().unwrap();
    assert_eq!(store.get(SVC_AUTH_KEY).unwrap(), None);
    assert_eq!(
        store.get("other_app").unwrap().as_deref(),
        Some("untouched")
    );
    assert!(a.access_header().is_none());
    assert_eq!(b.state().unwrap().access_token, "access-2");
    assert!(
        Session::restore(Arc::clone(&store))
            .unwrap()
            .state()
            .is_none()
    );

    // Atomic writes leave no temporary files behind; B's refresh left the lock file, which
    // stays (removing it could let two processes hold the lock at once).
    assert_eq!(
        dir.entries(),
        vec!["tokens.json".to_owned(), "tokens.json.lock".to_owned()]
    );

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
}

#[test]
fn a_corrupt_file_or_entry_is_an_error_without_secrets() {
    let dir = TempDir::new("corrupt");
    let path = dir.0.join("tokens.json");

    fs::write(
        &path,
        r#"{"svc_auth": "{\"access_token\": \"SECRET-ACCESS\"""#,
    )
    .unwrap();
    let err = Session::restore(Arc::new(FileTokenStore::new(&path))).unwrap_err();
    assert!(
        matches!(err, SessionError::Store(TokenStoreError::Corrupt { .. })),
        "{err:?}"
    );
    assert!(!format!("{err} {err:?}").contains("SECRET"));

    // The file is fine but the entry is not an AuthState.
    let store = MemoryTokenStore::new();
    for entry in [
        r#"{"access_token": "SECRET-ACCESS"}"#,
        "SECRET-ACCESS",
        r#"{"access_token": "SECRET-ACCESS", "refresh_token": "SECRET-REFRESH", "access_token_expires": "SECRET"}"#,
    ] {
        store.set(SVC_AUTH_KEY, entry).unwrap();
        let err = Session::restore(Arc::new(store.clone())).unwrap_err();
        assert!(
            matches!(err, SessionError::InvalidSavedState { .. }),
            "{err:?}"
        );
        let printed = format!("{err} {err:?}");
        assert!(!printed.contains("SECRET"), "{printed}");
        assert!(printed.contains("svc_auth"), "{printed}");
    }
}

// --- Separate sessions sharing one store: one refresh per rotation ---------------------------

/// `n` separate sessions (separate clients, not clones), each restored from its own handle on
/// the same store, all find the refresh due at once and call a rotating server: one refresh
/// between them, every caller gets the rotated tokens, no refresh token is presented twice.
async fn separate_sessions_refresh_once(stores: Vec<Arc<dyn TokenStore>>) {
    let now = t0();
    let initial = state(1, now, 20);
    stores[0]
        .set(SVC_AUTH_KEY, &serde_json::to_string(&initial).unwrap())
        .unwrap();
    let server = Arc::new(RotatingServer::default());
    server.inner.lock().unwrap().current = initial.refresh_token.clone();
    let sessions: Vec<Arc<Session>> = stores
        .iter()
        .map(|store| Arc::new(Session::restore(Arc::clone(store)).unwrap()))
        .collect();
    let n = sessions.len() * 25;
    let barrier = Arc::new(Barrier::new(n));
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let session = Arc::clone(&sessions[i % sessions.len()]);
            let (server, barrier) = (Arc::clone(&server), Arc::clone(&barrier));
            tokio::spawn(async move {
                barrier.wait().await;
                session
                    .valid_state(now, move |token: Secret| async move {
                        server.refresh_for(token.expose(), now, 3600)
                    })
                    .await
            })
        })
        .collect();
    let mut got = HashSet::new();
    for task in tasks {
        let state = task.await.unwrap().unwrap().expect("signed in");
        got.insert(state.refresh_token);
    }
    assert!(
        !server.violation.load(Ordering::SeqCst),
        "a refresh token was reused"
    );
    let inner = server.inner.lock().unwrap();
    assert_eq!(
        inner.issued, 1,
        "one refresh for every session of the store"
    );
    assert_eq!(got, HashSet::from([inner.current.clone()]));
    for session in &sessions {
        assert_eq!(session.state().unwrap().refresh_token, inner.current);
    }
    assert_eq!(saved(&*stores[0]).unwrap().refresh_token, inner.current);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn separate_sessions_on_clones_of_a_memory_store_refresh_once() {
    let store = MemoryTokenStore::new();
    let stores: Vec<Arc<dyn TokenStore>> = (0..8)
        .map(|_| Arc::new(store.clone()) as Arc<dyn TokenStore>)
        .collect();
    separate_sessions_refresh_once(stores).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn separate_sessions_on_one_file_refresh_once() {
    let dir = TempDir::new("separate");
    let path = dir.0.join("session.json");
    // Separate handles, as separate processes would have: only the file and its lock are shared.
    let stores: Vec<Arc<dyn TokenStore>> = (0..8)
        .map(|_| Arc::new(FileTokenStore::new(&path)) as Arc<dyn TokenStore>)
        .collect();
    separate_sessions_refresh_once(stores).await;
    assert_eq!(
        dir.entries(),
        vec!["session.json".to_owned(), "session.json.lock".to_owned()]
    );
}

/// A session whose tokens another client already rotated uses the saved tokens without a call,
/// even long after (its own tokens are still the old ones in memory).
#[tokio::test]
async fn tokens_rotated_elsewhere_are_taken_without_a_call() {
    let now = t0();
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::new());
    let a = Session::restore(Arc::clone(&store)).unwrap();
    a.set(state(1, now, 20)).unwrap();
    let b = Session::restore(Arc::clone(&store)).unwrap();
    a.valid_state(now, |_| async move { Ok(state(2, now, 3600)) })
        .await
        .unwrap();
    let got = b
        .valid_state(now, |_| async { panic!("b must not refresh") })
        .await
        .unwrap();
    assert_eq!(got.unwrap().refresh_token, "refresh-2");
    assert_eq!(b.state().unwrap().refresh_token, "refresh-2");

    // Saved tokens that are due themselves are refreshed with the saved refresh token, not
    // with the session's own.
    let c = Session::restore(Arc::clone(&store)).unwrap();
    c.set(state(5, now, 20)).unwrap();
    store
        .set(
            SVC_AUTH_KEY,
            &serde_json::to_string(&state(3, now, 10)).unwrap(),
        )
        .unwrap();
    let got = c
        .valid_state(now, |token: Secret| async move {
            assert_eq!(token.expose(), "refresh-3");
            Ok(state(4, now, 3600))
        })
        .await
        .unwrap();
    assert_eq!(got.unwrap().refresh_token, "refresh-4");
    assert_eq!(saved(&*store).unwrap().refresh_token, "refresh-4");
}

/// After a `401`, the store entry is removed only while it still holds the rejected tokens; an
/// entry with other tokens (a login elsewhere meanwhile) is kept, and the session takes it.
#[tokio::test]
async fn a_401_clears_the_entry_only_if_it_holds_the_rejected_tokens() {
    let now = t0();
    let later = after(now, FAILED_REFRESH_HOLD.as_secs() + 1);

    // The entry still holds the rejected tokens: removed, with other keys left alone.
    let store: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::new());
    store.set("other", "kept").unwrap();
    let session = Session::restore(Arc::clone(&store)).unwrap();
    session.set(state(1, now, 20)).unwrap();
    let err = session
        .valid_state(now, |_| async {
            Err::<AuthState, _>(RefreshError::rejected(401, "refresh token expired"))
        })
        .await
        .unwrap_err();
    assert!(err.session_cleared());
    assert_eq!(saved(&*store), None);
    assert_eq!(store.get("other").unwrap().as_deref(), Some("kept"));

    // Someone signs in elsewhere while the refresh is rejected: their tokens stay saved, and
    // this session uses them instead of ending.
    let session = Session::restore(Arc::clone(&store)).unwrap();
    session.set(state(2, now, 20)).unwrap();
    let elsewhere = state(3, now, 3600);
    let (s, e) = (Arc::clone(&store), elsewhere.clone());
    let got = session
        .valid_state(later, move |_| async move {
            s.set(SVC_AUTH_KEY, &serde_json::to_string(&e).unwrap())
                .unwrap();
            Err(RefreshError::rejected(401, "refresh token already used"))
        })
        .await
        .unwrap();
    assert_eq!(got, Some(elsewhere.clone()));
    assert_eq!(saved(&*store), Some(elsewhere.clone()));
    assert_eq!(session.state(), Some(elsewhere));

    // The entry is gone already (a logout elsewhere): nothing to remove, the session ends.
    let session = Session::restore(Arc::clone(&store)).unwrap();
    session.set(state(4, now, 20)).unwrap();
    store.remove(SVC_AUTH_KEY).unwrap();
    let err = session
        .valid_state(later, |_| async {
            Err::<AuthState, _>(RefreshError::rejected(401, "expired"))
        })
        .await
        .unwrap_err();
    assert!(err.session_cleared());
    assert_eq!(saved(&*store), None);
    assert!(!session.has_tokens());
}

/// The refresh lock excludes holders across separate handles of one file (as it does across
/// processes): at most one holder at any time, and every caller gets it in the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_file_refresh_lock_has_one_holder_at_a_time() {
    let dir = TempDir::new("lock");
    let path = dir.0.join("session.json");
    let holders = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let store = FileTokenStore::new(&path);
            let (holders, most) = (Arc::clone(&holders), Arc::clone(&most));
            tokio::spawn(async move {
                for _ in 0..5 {
                    let lock = store.lock_for_refresh().await.unwrap();
                    let now_held = holders.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now_held, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                    holders.fetch_sub(1, Ordering::SeqCst);
                    drop(lock);
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(most.load(Ordering::SeqCst), 1);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let lock_path = FileTokenStore::new(&path).lock_path();
        assert_eq!(lock_path, dir.0.join("session.json.lock"));
        let mode = fs::metadata(&lock_path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
    }
}
