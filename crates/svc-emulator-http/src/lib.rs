//! The HTTP layer of [svc-emulator](https://docs.rs/svc-emulator)'s slices: app state, errors,
//! extractors, credential checks, admission, list paging, the request journal, stubs and the
//! route helper ([`serve`]). svc-emulator's runtime assembles the slices' routes into one router.
//!
//! **An implementation crate of svc-emulator**, published so that Cargo holds its layers: its
//! API follows the emulator's and may change in any release. Depend on `svc-emulator`, not on
//! this crate. The journal's and the stubs' types that svc-emulator re-exports
//! (`RequestMatcher`, `RecordedRequest`, `StubBuilder`, ...) are svc-emulator's API, which its
//! semver check holds; the rest of this crate is not.
//!
//! Below it, the emulator's state (`svc_emulator_state`); above it, the slices and the runtime,
//! which it cannot name: svc-emulator is not among its dependencies (only among its
//! dev-dependencies, for the doc examples of the journal's types).
//!
//! Its modules, lowest first, each naming only those below it (`cargo xtask structure`): the
//! leaves (`admission`, `auth`, `cors`, `error`, `list`, `routes`); `journal`, what was
//! recorded and how to ask about it; `stubs`, answers for what a journal's matcher matches;
//! `state`, `backend` and `extract`; then `app`, `tools` and `capture`, which runs each
//! request through a stub or the router and records it in the journal.
//!
//! Matching works on the raw, still percent-encoded path, one segment per parameter, and axum
//! decodes each parameter afterwards: a `%2F` inside an identifier never splits it.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodFilter, MethodRouter, on};
use svc_model::routes::{Method, Route};

pub(crate) mod admission;
pub mod app;
pub mod auth;
pub(crate) mod backend;
pub mod capture;
pub mod cors;
pub(crate) mod error;
pub mod extract;
pub mod journal;
pub mod list;
pub mod routes;
pub mod state;
pub mod stubs;
pub mod tools;

pub use error::HttpError;
pub use state::AppState;

/// Serves `route` (of svc-model's table, or of the emulator's own, [`routes`]) with `handler`,
/// for the route's method, with and without a trailing slash.
pub fn serve<H, T>(router: Router<AppState>, route: &Route, handler: H) -> Router<AppState>
where
    H: Handler<T, AppState>,
    T: 'static,
{
    let method = match route.method() {
        Method::Get => MethodFilter::GET,
        Method::Post => MethodFilter::POST,
        Method::Put => MethodFilter::PUT,
        Method::Patch => MethodFilter::PATCH,
        Method::Delete => MethodFilter::DELETE,
    };
    route_with_optional_slash(router, route.path(), on(method, handler))
}

/// Routes `path` both with and without its trailing slash: the application host's paths end
/// in `/`, but clients differ and nothing is gained by a 404. Routes of the table go through
/// [`serve`]; this adds what no table lists (a refusal of `HEAD`).
pub fn route_with_optional_slash(
    router: Router<AppState>,
    path: &str,
    method_router: MethodRouter<AppState>,
) -> Router<AppState> {
    let bare = path.trim_end_matches('/');
    router
        .route(&format!("{bare}/"), method_router.clone())
        .route(bare, method_router)
}
