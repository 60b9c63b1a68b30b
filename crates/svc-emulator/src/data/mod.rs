//! The data host: routes at the root of the listener (docs/contract.md section 5). Paths are
//! written without a trailing slash and answered with or without one.

mod records;
mod reload;
mod sql;
pub(crate) mod tools;

use std::sync::Arc;

use axum::Router;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use svc_model::users::{TEAMS_MODEL, TOOLS_RESOURCE, USERS_MODEL};

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
    let router = route_with_optional_slash(
        router,
        &format!("{models}/{{pk}}"),
        get(records::retrieve)
            .patch(records::update)
            .delete(records::delete),
    );
    let resource = "/projects/{project}/{environment}/{resource}";
    let router = route_with_optional_slash(
        router,
        &format!("{resource}/sql_get_query"),
        post(sql::query),
    );
    let router =
        route_with_optional_slash(router, &format!("{resource}/reload"), post(reload::reload));
    // Users and teams: static routes for `__svc_app__`, which win over the records routes
    // above. Teams have no create or delete, so POST and DELETE there are 405.
    let tools_models = format!("/projects/{{project}}/{{environment}}/{TOOLS_RESOURCE}/models");
    let router = route_with_optional_slash(
        router,
        &format!("{tools_models}/{USERS_MODEL}"),
        get(tools::users_list).post(tools::user_create),
    );
    let router = route_with_optional_slash(
        router,
        &format!("{tools_models}/{USERS_MODEL}/{{pk}}"),
        get(tools::user_retrieve)
            .patch(tools::user_update)
            .delete(tools::user_delete),
    );
    let router = route_with_optional_slash(
        router,
        &format!("{tools_models}/{TEAMS_MODEL}"),
        get(tools::teams_list),
    );
    route_with_optional_slash(
        router,
        &format!("{tools_models}/{TEAMS_MODEL}/{{pk}}"),
        get(tools::team_retrieve).patch(tools::team_update),
    )
}

/// A request on one model (`.../{resource}/models/{model}`): the credentials are checked and
/// the resource's database found before the handler runs.
pub(crate) struct ModelAccess {
    pub(crate) db: Arc<Resource>,
    pub(crate) model: String,
}

impl axum::extract::FromRequestParts<AppState> for ModelAccess {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, ApiError> {
        let axum::extract::Path((project, environment, name, model)) =
            axum::extract::Path::<(String, String, String, String)>::from_request_parts(
                parts, state,
            )
            .await?;
        let db = resource(state, &parts.headers, &project, &environment, &name)?;
        Ok(Self { db, model })
    }
}

/// A request on one record (`.../{resource}/models/{model}/{pk}`), checked like [`ModelAccess`].
pub(crate) struct RecordAccess {
    pub(crate) db: Arc<Resource>,
    pub(crate) model: String,
    pub(crate) pk: String,
}

impl axum::extract::FromRequestParts<AppState> for RecordAccess {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, ApiError> {
        let axum::extract::Path((project, environment, name, model, pk)) =
            axum::extract::Path::<(String, String, String, String, String)>::from_request_parts(
                parts, state,
            )
            .await?;
        let db = resource(state, &parts.headers, &project, &environment, &name)?;
        Ok(Self { db, model, pk })
    }
}

/// Checks the credentials for `resource` (docs/contract.md 3) and finds its database.
fn resource(
    state: &AppState,
    headers: &HeaderMap,
    project: &str,
    environment: &str,
    resource: &str,
) -> Result<Arc<Resource>, ApiError> {
    let access = auth::authorize_resource(
        state.registry(),
        headers,
        project,
        environment,
        resource,
        |jwt| {
            state
                .accounts()
                .verify_any(jwt)
                .map(|claims| claims.project)
        },
    )?;
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
