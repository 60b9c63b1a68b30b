//! The HTTP layer the slices build on: app state, errors, extractors, credential checks,
//! admission, list paging, the request journal and the route helper. The runtime assembles the slices' routes into
//! one router (`crate::runtime::router`).
//!
//! Matching works on the raw, still percent-encoded path, one segment per parameter, and axum
//! decodes each parameter afterwards: a `%2F` inside an identifier never splits it.

use axum::Router;
use axum::routing::MethodRouter;

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
pub(crate) mod state;
pub(crate) mod stubs;
pub(crate) mod tools;

pub(crate) use error::HttpError;
pub(crate) use state::AppState;

/// Routes `path` (written with a trailing slash) both with and without the trailing slash: the
/// application host's paths end in `/`, but clients differ and nothing is gained by a 404.
pub(crate) fn route_with_optional_slash(
    router: Router<AppState>,
    path: &str,
    method_router: MethodRouter<AppState>,
) -> Router<AppState> {
    let bare = path.trim_end_matches('/');
    ROUTES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(bare.to_owned());
    router
        .route(&format!("{bare}/"), method_router.clone())
        .route(bare, method_router)
}

/// Every path template a router was built with (without its trailing slash; app host paths
/// without their `/api` prefix): what the OpenAPI description must list. Filled as routers are
/// built (always with the same paths), read by the test that compares the two.
static ROUTES: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The path templates recorded in [`ROUTES`].
#[cfg(test)]
pub(crate) fn route_templates() -> std::collections::BTreeSet<String> {
    ROUTES.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn every_route_is_recorded_once_the_router_is_built() {
        let emulator = crate::Emulator::start(crate::EmulatorConfig::default())
            .await
            .unwrap();
        let routes = super::route_templates();
        for path in [
            "/projects/{project}/{environment}/{resource}/models/{model}/{pk}",
            "/projects/{project}/{environment}/{resource}/sql_get_query",
            "/projects/{project}/{environment}/auth/login",
            "/_emulator/projects/{project}/service_token",
        ] {
            assert!(routes.contains(path), "{path} in {routes:?}");
        }
        assert!(
            routes.iter().all(|r| !r.ends_with('/')),
            "recorded without the trailing slash"
        );
        drop(emulator);
    }
}
