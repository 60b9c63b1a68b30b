//! The whole router: both hosts on one listener, and the JSON answers for unknown paths (`404`)
//! and wrong methods (`405`).
//!
//! The application host lives under `/api` (its base URL is `{api_base_url}/api`); the data host's
//! routes sit at the root. Matching works on the raw, still percent-encoded path, one segment per
//! parameter, and axum decodes each parameter afterwards: a `%2F` inside an identifier never
//! splits it.

use axum::Router;
use axum::routing::MethodRouter;

use crate::error::ApiError;
use crate::state::AppState;
use crate::{account, app, data};

/// Builds the router of both hosts.
pub(crate) fn router(state: AppState) -> Router {
    Router::new()
        .nest("/api", app::router())
        // The data host's routes sit at the root, before the fallbacks below so that their
        // wrong methods get the JSON 405 too.
        .merge(data::router())
        .merge(account::router())
        .merge(account::emulator_router())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

/// Routes `path` (written with a trailing slash) both with and without the trailing slash: the
/// application host's paths end in `/`, but clients differ and nothing is gained by a 404.
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

async fn not_found() -> ApiError {
    ApiError::not_found("Not found.")
}

async fn method_not_allowed() -> ApiError {
    ApiError::method_not_allowed()
}
