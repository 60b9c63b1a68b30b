//! The whole router: both hosts on one listener, and the JSON answers for unknown paths (`404`)
//! and wrong methods (`405`).
//!
//! The application host lives under `/api` (its base URL is `{api_base_url}/api`); the data host's
//! routes sit at the root; each operation group's slice (`crate::pages`, `crate::records`, ...)
//! adds its own routes.

use std::sync::Arc;

use axum::Router;

use crate::openapi;
use crate::proxy::Forwarder;
use crate::ui::{Front, Ui};
use crate::{
    account, actions, fixture, pages, projects, proxy, records, resources, sql, teams, users,
};
use svc_emulator_http::capture::Journaled;
use svc_emulator_http::cors::cors;
use svc_emulator_http::{AppState, HttpError};

/// Builds the router of both hosts, with the request journal around it and the web page
/// (`/_emulator/ui/`) in front.
pub(crate) fn router(state: AppState, proxy: Forwarder, ui: Arc<Ui>) -> Front {
    let router = Router::new()
        .nest("/api", app_router(proxy))
        // The data host's routes sit at the root, before the fallbacks below so that their
        // wrong methods get the JSON 405 too.
        .merge(data_router())
        .merge(account::router())
        .merge(account::emulator_router())
        .merge(fixture::routes(Router::new()))
        .merge(openapi::routes(Router::new()))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        // The API routes of both hosts answer CORS as the data engine does (an `OPTIONS`
        // before any route is matched); the emulator's own routes do not.
        .layer(axum::middleware::from_fn(cors))
        .with_state(state.clone());
    Front::new(Journaled::new(router, state), ui)
}

/// The application host's routes, relative to its base (`/api`): projects, page settings and
/// the HTTP proxy.
fn app_router(forwarder: Forwarder) -> Router<AppState> {
    let router = projects::routes(Router::new());
    let router = pages::routes(router);
    proxy::routes(router, forwarder)
}

/// The data host's routes, at the root of the listener (docs/contract.md section 5). Paths are
/// written without a trailing slash and answered with or without one. The static routes of
/// users and teams (`__svc_app__`) and of workflows win over the records and actions routes.
fn data_router() -> Router<AppState> {
    let router = records::routes(Router::new());
    let router = sql::routes(router);
    let router = resources::routes(router);
    let router = users::routes(router);
    let router = actions::routes(router);
    teams::routes(router)
}

async fn not_found() -> HttpError {
    HttpError::not_found("Not found.")
}

async fn method_not_allowed() -> HttpError {
    HttpError::method_not_allowed()
}
