//! Credentials and configuration of the svc SDK.
//!
//! - [`Secret`]: a string that never prints.
//! - [`Credential`]: API keys (`Bearer`), resource tokens (raw) and session tokens (`JWT`), and
//!   how each is written into the `Authorization` header; [`select_credential`] picks the one a
//!   request carries when a client holds several.
//! - [`EnvConfig`]: client settings from an explicit map of environment variables, with the
//!   JavaScript client's keys, precedence and draft parsing.
//! - [`ServiceRequest`]: client settings from the headers of an incoming service request.
//! - [`Session`], [`TokenStore`]: user sessions, saved in a token store and refreshed with a
//!   single refresh call however many requests need it.
//!
//! ```
//! use svc_auth::{Credential, EnvConfig};
//! let cfg = EnvConfig::from_map(&std::collections::HashMap::from([("SVC_DRAFT", "yes")]));
//! assert_eq!(cfg.draft, Some(true));
//! let header = Credential::api_key("svc_key_1").header_value()?;
//! assert_eq!(header.to_str()?, "Bearer svc_key_1");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Sessions
//!
//! A [`Session`] holds a signed-in user's [`AuthState`](svc_model::AuthState) (access token,
//! refresh token, expiry times). It is transport-agnostic: the client that owns it performs the
//! HTTP calls and hands the session the results.
//!
//! - **Token stores.** A session may be saved in a [`TokenStore`] under [`SVC_AUTH_KEY`]
//!   (`svc_auth`), as the JSON text of the `AuthState`, and restored from it with
//!   [`Session::restore`]. [`MemoryTokenStore`] keeps entries in memory (clones share them);
//!   [`FileTokenStore`] keeps them in one JSON file, replaced atomically, mode `0600` on Unix.
//!   Sessions that share a store share its entry, like browser tabs of one origin; each keeps its
//!   own in-memory tokens, and logging out of one ([`Session::clear`]) removes the entry without
//!   touching the others.
//! - **Refresh.** [`Session::valid_state`] returns the tokens to send, refreshed first when the
//!   access or the refresh token expires in less than [`REFRESH_THRESHOLD`] (30 s). Refresh
//!   tokens rotate, so the refresh is single-flight: one call however many requests wait; they
//!   all use its result. A refresh that fails keeps the session and fails every waiting request
//!   with an auth error (and callers within [`FAILED_REFRESH_HOLD`] of it); one rejected with
//!   `401` clears the session.
//! - **Many clients, many processes.** Sessions that share a store refresh under its refresh lock
//!   ([`TokenStore::lock_for_refresh`]; a lock file beside a [`FileTokenStore`]) and read the
//!   entry again first, so that eight `svc` commands started together in the last seconds of a
//!   token make one refresh call between them, and the other seven use its tokens.
//! - **Precedence.** An API key always wins over a session; see [`select_credential`].
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::time::Duration;
//! use svc_auth::{MemoryTokenStore, RefreshError, Session};
//! use svc_model::{AuthState, Timestamp};
//!
//! # let rt = tokio::runtime::Builder::new_multi_thread().build()?;
//! # rt.block_on(async {
//! let now = Timestamp::from_unix_seconds(1_800_000_000).unwrap();
//! let in_20s = now.checked_add(Duration::from_secs(20)).unwrap();
//! let session = Arc::new(Session::restore(Arc::new(MemoryTokenStore::new()))?);
//! session.set(AuthState::new("access-1", "refresh-1").with_access_token_expires(in_20s))?;
//!
//! // Ten requests find the refresh due at once: one refresh call serves them all.
//! let calls = Arc::new(AtomicUsize::new(0));
//! let mut tasks = Vec::new();
//! for _ in 0..10 {
//!     let (session, calls) = (Arc::clone(&session), Arc::clone(&calls));
//!     tasks.push(tokio::spawn(async move {
//!         session
//!             .valid_state(now, |_refresh_token| async move {
//!                 calls.fetch_add(1, Ordering::SeqCst);
//!                 // Here the client would POST auth/refresh.
//!                 Ok::<_, RefreshError>(AuthState::new("access-2", "refresh-2"))
//!             })
//!             .await
//!     }));
//! }
//! for task in tasks {
//!     let state = task.await??.expect("signed in");
//!     assert_eq!(state.access_token, "access-2");
//! }
//! assert_eq!(calls.load(Ordering::SeqCst), 1);
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod config;
mod credential;
mod resolve;
mod secret;
pub mod service;
pub mod session;
pub mod store;

pub use config::{EnvConfig, parse_draft};
pub use credential::{Credential, InvalidCredential};
pub use resolve::{CredentialSources, Route, select_credential};
pub use secret::Secret;
pub use service::{ServiceRequest, ServiceRequestError};
pub use session::{
    FAILED_REFRESH_HOLD, REFRESH_THRESHOLD, RefreshError, Session, SessionError, needs_refresh,
};
pub use store::{
    FileTokenStore, LockFuture, MemoryTokenStore, SVC_AUTH_KEY, StoreLock, TokenStore,
    TokenStoreError,
};

// Compile the README's examples as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
