//! User sessions: the tokens of a signed-in user, saved in a token store, refreshed before they
//! expire by exactly one refresh call however many requests wait for it.
//!
//! [`Session`] knows nothing about HTTP: the caller passes the current time and a closure that
//! performs the refresh call (`POST auth/refresh`), so the logic is tested without a network,
//! a runtime timer or a clock.

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use svc_model::{AuthState, Timestamp};

use crate::store::{SVC_AUTH_KEY, TokenStore, TokenStoreError, json_problem};
use crate::{Credential, Secret};

/// A refresh is due when either expiry (access or refresh token) is less than this far away.
pub const REFRESH_THRESHOLD: Duration = Duration::from_secs(30);

/// How long a failed refresh stays the answer for callers that arrive after it ended.
///
/// A caller whose `now` (the time it passes to [`Session::valid_state`]) is at most this long
/// after the `now` of the refresh that failed gets that refresh's error without another refresh
/// call; a later caller tries again. So a burst of requests that read the clock together shares
/// one failed refresh, however the scheduler orders them, and a server that cannot refresh is not
/// asked again by every request of the burst in turn.
pub const FAILED_REFRESH_HOLD: Duration = Duration::from_secs(1);

/// Whether `state` must be refreshed at `now`: its access token or its refresh token expires in
/// less than [`REFRESH_THRESHOLD`] (or has expired). A token without an expiry time never makes a
/// refresh due.
///
/// ```
/// use std::time::Duration;
/// use svc_auth::session::needs_refresh;
/// use svc_model::{AuthState, Timestamp};
///
/// let now = Timestamp::from_unix_seconds(1_000_000).unwrap();
/// let at = |secs| now.checked_add(Duration::from_secs(secs)).unwrap();
/// assert!(!needs_refresh(&AuthState::new("a", "r"), now)); // no expiry: never
/// assert!(!needs_refresh(&AuthState::new("a", "r").with_access_token_expires(at(30)), now));
/// assert!(needs_refresh(&AuthState::new("a", "r").with_access_token_expires(at(29)), now));
/// assert!(needs_refresh(&AuthState::new("a", "r").with_refresh_token_expires(at(5)), now));
/// ```
pub fn needs_refresh(state: &AuthState, now: impl Into<Timestamp>) -> bool {
    let limit = now
        .into()
        .checked_add(REFRESH_THRESHOLD)
        .unwrap_or(Timestamp::MAX);
    [state.access_token_expires, state.refresh_token_expires]
        .into_iter()
        .flatten()
        .any(|expires| expires < limit)
}

/// Why a refresh call failed, as reported by the refresh closure given to
/// [`Session::valid_state`].
///
/// Build it with [`rejected`](Self::rejected) when the server answered with an error status, and
/// with [`failed`](Self::failed) when there was no usable answer (network error, timeout, a body
/// that is not an `AuthState`). A rejection with status `401` clears the session; anything else
/// keeps it.
///
/// The message is shown in `Display` and `Debug`: never put a token in it.
///
/// ```
/// use svc_auth::RefreshError;
/// let e = RefreshError::rejected(401, "token is expired");
/// assert!(e.is_unauthorized());
/// assert_eq!(e.to_string(), "the refresh call was rejected with status 401: token is expired");
/// let e = RefreshError::failed("connection refused").with_source(std::io::Error::other("refused"));
/// assert_eq!(e.status(), None);
/// assert!(std::error::Error::source(&e).is_some());
/// ```
#[derive(Clone)]
pub struct RefreshError {
    status: Option<u16>,
    message: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl RefreshError {
    /// The server answered the refresh call with an error `status`; `401` means the refresh token
    /// is no longer valid, and clears the session.
    pub fn rejected(status: u16, message: impl Into<String>) -> Self {
        Self {
            status: Some(status),
            message: message.into(),
            source: None,
        }
    }

    /// The refresh call got no usable answer (connection error, timeout, unreadable body).
    pub fn failed(message: impl Into<String>) -> Self {
        Self {
            status: None,
            message: message.into(),
            source: None,
        }
    }

    /// Attaches the underlying error, returned by [`source`](std::error::Error::source).
    pub fn with_source(
        mut self,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        self.source = Some(Arc::from(source.into()));
        self
    }

    /// The HTTP status of the rejection, if the server answered.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// Whether the server rejected the refresh token as unauthorized (`401`).
    pub fn is_unauthorized(&self) -> bool {
        self.status == Some(401)
    }

    /// The message given when the error was built.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for RefreshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(
                f,
                "the refresh call was rejected with status {status}: {}",
                self.message
            ),
            None => write!(f, "the refresh call failed: {}", self.message),
        }
    }
}

impl fmt::Debug for RefreshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RefreshError")
            .field("status", &self.status)
            .field("message", &self.message)
            .field("source", &self.source)
            .finish()
    }
}

impl std::error::Error for RefreshError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// A session operation failed. It never contains a token.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// A due refresh failed without a `401` (network error, timeout, server error). The session
    /// was kept as it was; the request should not be sent. Every caller that waited for the same
    /// refresh gets this error.
    #[error(
        "the session could not be refreshed, so the request was not sent (the session was kept; try again): {0}"
    )]
    RefreshFailed(#[source] RefreshError),
    /// The server rejected the refresh token (`401`). The session was cleared, in memory and in
    /// the token store: the user must sign in again.
    #[error("the session has expired and was cleared; sign in again ({0})")]
    RefreshRejected(#[source] RefreshError),
    /// The token store failed. After [`Session::set`] or a refresh, the new tokens are in memory
    /// (the session works) but may not be saved.
    #[error("the session's token store failed: {0}")]
    Store(#[from] TokenStoreError),
    /// The token store holds something under `svc_auth` that is not an `AuthState` JSON text.
    /// It is left as it is: log out (which removes it) or remove it from the store.
    #[error(
        "the session saved under `svc_auth` in the token store is not valid ({problem} at line {line}, column {column}); log out or remove the entry"
    )]
    InvalidSavedState {
        /// What kind of problem (`"syntax error"`, `"wrong type"`, `"unexpected end"`).
        problem: &'static str,
        /// Where, 1-based.
        line: usize,
        /// Where, 1-based.
        column: usize,
    },
}

impl SessionError {
    /// Whether this is an authentication error: a refresh that failed or was rejected. A request
    /// that needed the session could not be authenticated.
    pub fn is_auth(&self) -> bool {
        matches!(self, Self::RefreshFailed(_) | Self::RefreshRejected(_))
    }

    /// Whether the session was cleared (the refresh token was rejected with `401`).
    pub fn session_cleared(&self) -> bool {
        matches!(self, Self::RefreshRejected(_))
    }

    /// The refresh error, for [`RefreshFailed`](Self::RefreshFailed) and
    /// [`RefreshRejected`](Self::RefreshRejected).
    pub fn refresh_error(&self) -> Option<&RefreshError> {
        match self {
            Self::RefreshFailed(e) | Self::RefreshRejected(e) => Some(e),
            _ => None,
        }
    }
}

/// The in-memory part of a session, behind a short-lived lock.
struct Shared {
    state: Option<AuthState>,
    /// Bumped by every change: set, clear, and the end of every refresh (success or failure).
    generation: u64,
    /// The error of the last refresh. Waiters that saw the generation before it, and callers
    /// within [`FAILED_REFRESH_HOLD`] of it, get this error instead of refreshing again.
    last_failure: Option<Failure>,
}

/// A refresh that failed.
struct Failure {
    /// The generation the failure produced; any later change makes it stale.
    generation: u64,
    /// The `now` of the caller that ran the refresh.
    at: Timestamp,
    error: SessionError,
}

impl Shared {
    /// The failure that a caller at `now` shares: the last refresh failed, nothing changed since,
    /// and `now` is within [`FAILED_REFRESH_HOLD`] of that refresh.
    fn held_failure(&self, now: Timestamp) -> Option<SessionError> {
        let failure = self.last_failure.as_ref()?;
        let until = failure
            .at
            .checked_add(FAILED_REFRESH_HOLD)
            .unwrap_or(Timestamp::MAX);
        (failure.generation == self.generation && now <= until).then(|| failure.error.clone())
    }

    /// The outcome for a caller that saw generation `seen`, if something happened since: the
    /// error of a refresh that failed, else the current tokens.
    fn outcome_since(&self, seen: u64) -> Option<Result<Option<AuthState>, SessionError>> {
        if self.generation == seen {
            return None;
        }
        if let Some(failure) = &self.last_failure
            && failure.generation == self.generation
        {
            return Some(Err(failure.error.clone()));
        }
        Some(Ok(self.state.clone()))
    }
}

/// How a refresh ended, before it is published to the session.
enum RefreshEnd {
    /// Another client sharing the store had already rotated the tokens: use its tokens (they are
    /// saved already).
    Adopted(AuthState),
    /// The refresh call returned new tokens: save and use them.
    Refreshed(AuthState),
    /// The server rejected the refresh token (`401`): the session is cleared.
    Rejected(SessionError),
    /// No refresh (the call failed, or the store's lock could not be taken): the session is
    /// kept.
    Failed(SessionError),
}

/// A user session: the [`AuthState`] of one client, in memory, optionally saved in a
/// [`TokenStore`] under [`SVC_AUTH_KEY`].
///
/// - [`restore`](Self::restore) builds a session from a store (the JavaScript client does this
///   when it is constructed); [`new`](Self::new) builds an empty one that lives in memory only.
/// - [`set`](Self::set) (login, password change) saves new tokens in memory and in the store.
/// - [`clear`](Self::clear) (logout) forgets them, in memory and in the store. It does not revoke
///   anything on the server, and other sessions restored from the same store keep their own
///   in-memory tokens.
/// - [`valid_state`](Self::valid_state) returns the tokens a request should carry, refreshing
///   them first when an expiry is less than [`REFRESH_THRESHOLD`] away. **Single flight:**
///   however many callers find a refresh due at once, exactly one refresh call runs; the others
///   wait for it and use its result. Refresh tokens rotate (the server accepts each one once), so
///   parallel refreshes would invalidate each other. Sessions of other clients and processes
///   that share the token store are included: see [`TokenStore::lock_for_refresh`].
///
/// The session is `Send + Sync`; share it with an `Arc` (a client holds one). It never prints a
/// token: `Debug` shows only whether there are tokens and when they expire.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use svc_auth::{MemoryTokenStore, RefreshError, Session, TokenStore};
/// use svc_model::{AuthState, Timestamp};
///
/// # let rt = tokio::runtime::Builder::new_current_thread().build()?;
/// # rt.block_on(async {
/// let store: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::new());
/// let now = Timestamp::from_unix_seconds(1_800_000_000).unwrap();
/// let soon = now.checked_add(Duration::from_secs(10)).unwrap();
///
/// let session = Session::restore(Arc::clone(&store))?; // nothing saved yet
/// session.set(AuthState::new("access-1", "refresh-1").with_access_token_expires(soon))?;
///
/// // The access token expires in 10 s: the refresh closure runs (here without a network).
/// let state = session
///     .valid_state(now, |refresh_token| async move {
///         assert_eq!(refresh_token.expose(), "refresh-1");
///         Ok::<_, RefreshError>(AuthState::new("access-2", "refresh-2"))
///     })
///     .await?
///     .expect("signed in");
/// assert_eq!(state.access_token, "access-2");
///
/// // The rotated tokens were saved: a new session restored from the store has them.
/// let restored = Session::restore(Arc::clone(&store))?;
/// assert_eq!(restored.state().unwrap().refresh_token, "refresh-2");
///
/// session.clear()?; // logout: this session and the store entry are cleared...
/// assert!(session.access_header().is_none());
/// assert!(restored.access_header().is_some()); // ...other sessions keep their own state
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Session {
    shared: Mutex<Shared>,
    /// Held for the whole refresh call: the single-flight gate.
    refresh_gate: tokio::sync::Mutex<()>,
    store: Option<Arc<dyn TokenStore>>,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    /// An empty session that lives in memory only.
    pub fn new() -> Self {
        Self::build(None, None)
    }

    /// A session saved in `store`, starting from the tokens it holds under `svc_auth` (if any).
    ///
    /// Fails when the store fails, or when its `svc_auth` entry is not an `AuthState` (the entry
    /// is left untouched).
    pub fn restore(store: Arc<dyn TokenStore>) -> Result<Self, SessionError> {
        let state = match store.get(SVC_AUTH_KEY)? {
            None => None,
            Some(text) => Some(serde_json::from_str::<AuthState>(&text).map_err(|e| {
                // serde_json's messages can quote the input, which holds tokens.
                SessionError::InvalidSavedState {
                    problem: json_problem(&e),
                    line: e.line(),
                    column: e.column(),
                }
            })?),
        };
        Ok(Self::build(state, Some(store)))
    }

    fn build(state: Option<AuthState>, store: Option<Arc<dyn TokenStore>>) -> Self {
        Self {
            shared: Mutex::new(Shared {
                state,
                generation: 0,
                last_failure: None,
            }),
            refresh_gate: tokio::sync::Mutex::new(()),
            store,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        // Nothing panics while the lock is held with the state half-changed; carry on.
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The token store the session is saved in, if any.
    pub fn token_store(&self) -> Option<&Arc<dyn TokenStore>> {
        self.store.as_ref()
    }

    /// The current tokens, as they are (no refresh).
    pub fn state(&self) -> Option<AuthState> {
        self.lock().state.clone()
    }

    /// Whether the session holds tokens.
    pub fn has_tokens(&self) -> bool {
        self.lock().state.is_some()
    }

    /// The current access token as a [`Credential::Jwt`] (sent as `JWT <access_token>`), as it is:
    /// call [`valid_state`](Self::valid_state) first to refresh a token that is due.
    pub fn access_header(&self) -> Option<Credential> {
        self.lock()
            .state
            .as_ref()
            .map(|s| Credential::jwt(s.access_token.as_str()))
    }

    /// Whether the current tokens need a refresh at `now` (see [`needs_refresh`]).
    pub fn refresh_due(&self, now: impl Into<Timestamp>) -> bool {
        self.lock()
            .state
            .as_ref()
            .is_some_and(|s| needs_refresh(s, now))
    }

    /// Replaces the tokens (after a login, a password change or a reset), in memory and in the
    /// store.
    ///
    /// The in-memory tokens are replaced even when saving them fails
    /// ([`SessionError::Store`]): the session works, but another client would not find them.
    pub fn set(&self, state: AuthState) -> Result<(), SessionError> {
        let mut shared = self.lock();
        let saved = self.save(&state);
        shared.state = Some(state);
        shared.generation += 1;
        shared.last_failure = None;
        saved
    }

    /// Forgets the tokens (logout), in memory and in the store. Other sessions restored from the
    /// same store keep their in-memory tokens; nothing is revoked on the server.
    ///
    /// The in-memory tokens are forgotten even when removing the store entry fails
    /// ([`SessionError::Store`]).
    pub fn clear(&self) -> Result<(), SessionError> {
        let mut shared = self.lock();
        shared.state = None;
        shared.generation += 1;
        shared.last_failure = None;
        self.unsave()
    }

    fn save(&self, state: &AuthState) -> Result<(), SessionError> {
        let Some(store) = &self.store else {
            return Ok(());
        };
        let text = serde_json::to_string(state).map_err(|e| {
            SessionError::Store(TokenStoreError::other(format!(
                "could not encode the session: {e}"
            )))
        })?;
        Ok(store.set(SVC_AUTH_KEY, &text)?)
    }

    fn unsave(&self) -> Result<(), SessionError> {
        match &self.store {
            Some(store) => Ok(store.remove(SVC_AUTH_KEY)?),
            None => Ok(()),
        }
    }

    /// The tokens a request should carry at `now`, refreshed first if an expiry is less than
    /// [`REFRESH_THRESHOLD`] away. `Ok(None)` when there is no session.
    ///
    /// `refresh` performs the refresh call (`POST auth/refresh` with the given refresh token) and
    /// returns the new tokens. It runs at most once per due refresh, however many callers wait:
    ///
    /// - The first caller that finds a refresh due runs it; callers that arrive meanwhile wait,
    ///   then use its outcome without calling their own closure.
    /// - With a token store, the refresh runs under the store's refresh lock
    ///   ([`TokenStore::lock_for_refresh`]). Once it has the lock, the session reads the saved
    ///   entry again: if another client or process sharing the store has rotated the tokens
    ///   meanwhile, the session takes those tokens and makes no call (or, if they are due too,
    ///   refreshes with them).
    /// - Success: the rotated tokens replace the old ones in memory and in the store (a used
    ///   refresh token is never kept), and every waiter gets them.
    /// - [`RefreshError`] with status `401`: the session is cleared in memory, and the store
    ///   entry is removed if it still holds the rejected tokens (an entry with other tokens, from
    ///   a new login elsewhere, is kept and taken over instead). Every waiter gets
    ///   [`SessionError::RefreshRejected`].
    /// - Any other [`RefreshError`]: the session stays as it was, and every waiter gets
    ///   [`SessionError::RefreshFailed`].
    /// - **After a failure** (either kind), a caller whose `now` is at most
    ///   [`FAILED_REFRESH_HOLD`] after the failed refresh's `now` gets the same error without a
    ///   call; a later caller tries again. Which callers share a failure depends only on the
    ///   times they pass, not on how they are scheduled.
    /// - If [`set`](Self::set) or [`clear`](Self::clear) runs while a refresh is in flight, they
    ///   win and the refresh result is dropped.
    ///
    /// The refresh runs inside this future: if the future is dropped (cancelled) while the
    /// refresh call is in flight, its result is lost, and the next caller refreshes with the
    /// same refresh token, which the server may already have retired (it then answers `401`).
    /// Do not put a timeout around this call that is shorter than the refresh call's own.
    ///
    /// When a refresh is not due, this returns at once without touching the gate.
    pub async fn valid_state<F, Fut>(
        &self,
        now: impl Into<Timestamp>,
        refresh: F,
    ) -> Result<Option<AuthState>, SessionError>
    where
        F: FnOnce(Secret) -> Fut,
        Fut: Future<Output = Result<AuthState, RefreshError>>,
    {
        let now = now.into();
        let seen = {
            let shared = self.lock();
            if let Some(error) = shared.held_failure(now) {
                return Err(error);
            }
            match &shared.state {
                None => return Ok(None),
                Some(state) if !needs_refresh(state, now) => return Ok(Some(state.clone())),
                Some(_) => shared.generation,
            }
        };

        let _gate = self.refresh_gate.lock().await;
        if let Some(outcome) = self.lock().outcome_since(seen) {
            // Someone else refreshed (or set or cleared the session) while this caller waited.
            return outcome;
        }

        // Other clients and processes that share the store: one refresh at a time among them.
        let _store_lock = match &self.store {
            Some(store) => match store.lock_for_refresh().await {
                Ok(held) => Some(held),
                Err(e) => {
                    return self.finish(seen, now, RefreshEnd::Failed(SessionError::Store(e)));
                }
            },
            None => None,
        };
        let mut current = {
            let shared = self.lock();
            if let Some(outcome) = shared.outcome_since(seen) {
                return outcome;
            }
            match &shared.state {
                Some(state) => state.clone(),
                None => return Ok(None),
            }
        };

        // Did another client or process rotate the tokens while this one was not looking? An
        // entry that cannot be read is no answer: refresh with this session's own tokens.
        if let Some(saved) = self.saved_state()
            && saved.refresh_token != current.refresh_token
        {
            if !needs_refresh(&saved, now) {
                return self.finish(seen, now, RefreshEnd::Adopted(saved));
            }
            current = saved;
        }

        let end = match refresh(Secret::new(&current.refresh_token)).await {
            Ok(state) => RefreshEnd::Refreshed(state),
            Err(error) if error.is_unauthorized() => match self.saved_state() {
                // A new login elsewhere (or a store without a lock) left other tokens: keep them.
                Some(saved) if saved.refresh_token != current.refresh_token => {
                    RefreshEnd::Adopted(saved)
                }
                saved => {
                    if saved.is_some() {
                        // Best effort: the rejection is the error to report, and the saved
                        // tokens are dead anyway.
                        let _ = self.unsave();
                    }
                    RefreshEnd::Rejected(SessionError::RefreshRejected(error))
                }
            },
            Err(error) => RefreshEnd::Failed(SessionError::RefreshFailed(error)),
        };
        self.finish(seen, now, end)
    }

    /// The tokens saved in the store, if there is a store and its entry can be read.
    fn saved_state(&self) -> Option<AuthState> {
        let text = self.store.as_ref()?.get(SVC_AUTH_KEY).ok()??;
        serde_json::from_str(&text).ok()
    }

    /// Publishes how the refresh that started at generation `seen` and time `now` ended.
    fn finish(
        &self,
        seen: u64,
        now: Timestamp,
        end: RefreshEnd,
    ) -> Result<Option<AuthState>, SessionError> {
        let mut shared = self.lock();
        if shared.generation != seen {
            // `set` or `clear` ran during the refresh: they win.
            return Ok(shared.state.clone());
        }
        shared.generation += 1;
        shared.last_failure = None;
        let error = match end {
            RefreshEnd::Adopted(state) => {
                shared.state = Some(state.clone());
                return Ok(Some(state));
            }
            RefreshEnd::Refreshed(state) => {
                let saved = self.save(&state);
                shared.state = Some(state.clone());
                return saved.map(|()| Some(state));
            }
            RefreshEnd::Rejected(error) => {
                shared.state = None;
                error
            }
            RefreshEnd::Failed(error) => error,
        };
        shared.last_failure = Some(Failure {
            generation: shared.generation,
            at: now,
            error: error.clone(),
        });
        Err(error)
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shared = self.lock();
        let state = shared.state.as_ref();
        f.debug_struct("Session")
            .field("has_tokens", &state.is_some())
            .field(
                "access_token_expires",
                &state.and_then(|s| s.access_token_expires),
            )
            .field(
                "refresh_token_expires",
                &state.and_then(|s| s.refresh_token_expires),
            )
            .field("token_store", &self.store.is_some())
            .finish()
    }
}
