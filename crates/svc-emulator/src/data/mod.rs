//! The data host: routes at the root of the listener (API.md section 4). Paths are written
//! without a trailing slash and answered with or without one.

mod records;

use std::sync::Arc;

use axum::Router;
use axum::http::HeaderMap;
use axum::routing::get;

use crate::auth;
use crate::error::ApiError;
use crate::records::Resource;
use crate::routes::route_with_optional_slash;
use crate::state::AppState;

pub(crate) fn router() -> Router<AppState> {
    let models = "/projects/{project}/{environment}/{resource}/models/{model}";
    let router = Router::new();
    let router =
        route_with_optional_slash(router, models, get(records::list).post(records::create));
    let router = route_with_optional_slash(
        router,
        &format!("{models}/aggregate"),
        get(records::aggregate_get).post(records::aggregate_post),
    );
    let router = route_with_optional_slash(
        router,
        &format!("{models}/group"),
        get(records::group_get).post(records::group_post),
    );
    route_with_optional_slash(
        router,
        &format!("{models}/{{pk}}"),
        get(records::retrieve)
            .patch(records::update)
            .delete(records::delete),
    )
}

/// Checks the credentials for `resource` (API.md 2) and finds its database.
fn resource(
    state: &AppState,
    headers: &HeaderMap,
    project: &str,
    environment: &str,
    resource: &str,
) -> Result<Arc<Resource>, ApiError> {
    let access =
        auth::authorize_resource(state.registry(), headers, project, environment, resource)?;
    state
        .resources()
        .get(access.project.name.as_str(), &access.resource.name)
        .ok_or_else(|| ApiError::not_found("Resource not found."))
}

/// Runs blocking database work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(format!("database task failed: {e}")))?
}
