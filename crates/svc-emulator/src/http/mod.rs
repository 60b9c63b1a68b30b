//! The HTTP layer the slices build on: app state, errors, extractors, credential checks,
//! admission, list paging, the request journal and the route helper. The runtime assembles the slices' routes into
//! one router (`crate::runtime::router`).
//!
//! Matching works on the raw, still percent-encoded path, one segment per parameter, and axum
//! decodes each parameter afterwards: a `%2F` inside an identifier never splits it.

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodFilter, MethodRouter, on};
use svc_model::routes::{Method, Route};

pub(crate) mod admission;
pub(crate) mod app;
pub(crate) mod auth;
pub(crate) mod backend;
pub(crate) mod cors;
pub(crate) mod error;
pub(crate) mod extract;
pub(crate) mod journal;
pub(crate) mod list;
pub(crate) mod openapi;
pub(crate) mod routes;
pub(crate) mod state;
pub(crate) mod stubs;
pub(crate) mod tools;

pub(crate) use error::HttpError;
pub(crate) use state::AppState;

/// Serves `route` (of svc-model's table, or of the emulator's own, [`routes`]) with `handler`,
/// for the route's method, with and without a trailing slash; the route is recorded as served.
pub(crate) fn serve<H, T>(router: Router<AppState>, route: &Route, handler: H) -> Router<AppState>
where
    H: Handler<T, AppState>,
    T: 'static,
{
    // Only the tests read what was served: a running emulator keeps no such list.
    #[cfg(test)]
    SERVED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(route.id());
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
pub(crate) fn route_with_optional_slash(
    router: Router<AppState>,
    path: &str,
    method_router: MethodRouter<AppState>,
) -> Router<AppState> {
    let bare = path.trim_end_matches('/');
    router
        .route(&format!("{bare}/"), method_router.clone())
        .route(bare, method_router)
}

/// The id of every route a router was built with: what the OpenAPI description and the
/// tables must list. Filled as routers are built (always with the same routes), read by the
/// test that compares them.
#[cfg(test)]
static SERVED: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The route ids recorded in [`SERVED`].
#[cfg(test)]
pub(crate) fn served() -> std::collections::BTreeSet<&'static str> {
    SERVED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn every_route_of_both_tables_is_served() {
        let emulator = crate::Emulator::start(crate::EmulatorConfig::default())
            .await
            .unwrap();
        let served = super::served();
        let tables: std::collections::BTreeSet<&str> = svc_model::routes::ALL
            .iter()
            .chain(super::routes::ALL)
            .map(|route| route.id())
            .collect();
        assert_eq!(served, tables);
        drop(emulator);
    }
}
