//! The application host: projects, page settings and the HTTP proxy, served under the `/api`
//! prefix.

mod pages;
mod projects;
pub(crate) mod proxy;

use axum::Router;
use axum::routing::{get, post};

use crate::routes::route_with_optional_slash;
use crate::state::AppState;

/// The application host's routes, relative to its base (`/api`).
pub(crate) fn router() -> Router<AppState> {
    let router = Router::new();
    let router = route_with_optional_slash(router, "/projects/{project}/", get(projects::get));
    let router = route_with_optional_slash(
        router,
        "/projects/{project}/{environment}/view_settings/",
        get(pages::list).post(pages::create),
    );
    let router = route_with_optional_slash(
        router,
        "/projects/{project}/{environment}/view_settings/{uid}/",
        get(pages::get).patch(pages::update).delete(pages::delete),
    );
    route_with_optional_slash(router, "/proxy_request/", post(proxy::proxy_request))
}
