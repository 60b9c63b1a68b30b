//! The application host: projects and page settings, served under the `/api` prefix.

mod pages;
mod projects;

use axum::Router;
use axum::routing::get;

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
    route_with_optional_slash(
        router,
        "/projects/{project}/{environment}/view_settings/{uid}/",
        get(pages::get).patch(pages::update).delete(pages::delete),
    )
}
