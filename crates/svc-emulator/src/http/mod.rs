//! The whole router: both hosts on one listener, and the JSON answers for unknown paths (`404`)
//! and wrong methods (`405`).
//!
//! The application host lives under `/api` (its base URL is `{api_base_url}/api`); the data host's
//! routes sit at the root; each operation group's slice (`crate::pages`, `crate::records`, ...)
//! adds its own routes. Matching works on the raw, still percent-encoded path, one segment per
//! parameter, and axum decodes each parameter afterwards: a `%2F` inside an identifier never
//! splits it.

use axum::Router;
use axum::routing::MethodRouter;

pub(crate) mod admission;
pub(crate) mod app;
pub(crate) mod auth;
pub(crate) mod backend;
pub(crate) mod error;
pub(crate) mod extract;
pub(crate) mod list;
pub(crate) mod openapi;
pub(crate) mod state;
pub(crate) mod tools;

pub(crate) use error::HttpError;
pub(crate) use state::AppState;

use crate::{account, pages, projects, proxy, records, resources, sql, teams, users};

/// Builds the router of both hosts.
pub(crate) fn router(state: AppState) -> Router {
    Router::new()
        .nest("/api", app_router())
        // The data host's routes sit at the root, before the fallbacks below so that their
        // wrong methods get the JSON 405 too.
        .merge(data_router())
        .merge(account::router())
        .merge(account::emulator_router())
        .merge(openapi::routes(Router::new()))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

/// The application host's routes, relative to its base (`/api`): projects, page settings and
/// the HTTP proxy.
fn app_router() -> Router<AppState> {
    let router = projects::routes(Router::new());
    let router = pages::routes(router);
    proxy::routes(router)
}

/// The data host's routes, at the root of the listener (docs/contract.md section 5). Paths are
/// written without a trailing slash and answered with or without one. The static routes of
/// users and teams (`__svc_app__`) win over the records routes.
fn data_router() -> Router<AppState> {
    let router = records::routes(Router::new());
    let router = sql::routes(router);
    let router = resources::routes(router);
    let router = users::routes(router);
    teams::routes(router)
}

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

async fn not_found() -> HttpError {
    HttpError::not_found("Not found.")
}

async fn method_not_allowed() -> HttpError {
    HttpError::method_not_allowed()
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
