//! The built-in tools resource `__svc_app__` over HTTP, shared by the users and teams slices:
//! its extractors, lists and reads of one of its models, and the check of an update's keys.

use std::sync::Arc;

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use serde_json::{Map, Value};
use svc_model::records::wire::ORDER_BY_PARAM;
use svc_model::users::TOOLS_RESOURCE;

use crate::extract::{authorize, json_bytes};
use crate::list::list_url;
use crate::{AppState, HttpError};
use svc_emulator_core::backend::Backend;
use svc_engine::Selection;
use svc_engine::request::{list_body, list_spec, query_pairs};

/// A request on a model of the built-in tools resource (`.../__svc_app__/models/users`,
/// `.../groups`): its database, checked like [`ModelAccess`](crate::extract::ModelAccess).
#[derive(Debug)]
pub struct ToolsAccess {
    /// The tools resource's database.
    pub db: Arc<dyn Backend>,
}

impl FromRequestParts<AppState> for ToolsAccess {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let Path((project, environment)) =
            Path::<(String, String)>::from_request_parts(parts, state).await?;
        let db = tools_database(state, &parts.headers, &project, &environment)?;
        Ok(Self { db })
    }
}

/// A request on one user or team (`.../__svc_app__/models/{model}/{pk}`), checked like
/// [`ToolsAccess`].
#[derive(Debug)]
pub struct ToolsRecordAccess {
    /// The tools resource's database.
    pub db: Arc<dyn Backend>,
    /// The user's or team's primary key, as the path carries it.
    pub pk: String,
}

impl FromRequestParts<AppState> for ToolsRecordAccess {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let Path((project, environment, pk)) =
            Path::<(String, String, String)>::from_request_parts(parts, state).await?;
        let db = tools_database(state, &parts.headers, &project, &environment)?;
        Ok(Self { db, pk })
    }
}

/// The built-in tools resource's database, once the credentials are checked.
fn tools_database(
    state: &AppState,
    headers: &axum::http::HeaderMap,
    project: &str,
    environment: &str,
) -> Result<Arc<dyn Backend>, HttpError> {
    let access = authorize(state, headers, project, environment, TOOLS_RESOURCE)?;
    state
        .catalog()
        .tools(access.project.name.as_str())
        .ok_or_else(|| HttpError::not_found("Resource not found."))
}

/// A list of `model`, ordered by `default_order` unless the query orders it.
pub async fn list(
    state: &AppState,
    db: Arc<dyn Backend>,
    uri: &Uri,
    model: &'static str,
    default_order: &'static str,
) -> Result<Response, HttpError> {
    let mut pairs = query_pairs(uri.query());
    if !pairs.iter().any(|(k, _)| k == ORDER_BY_PARAM) {
        pairs.push((ORDER_BY_PARAM.to_owned(), default_order.to_owned()));
    }
    let spec = list_spec(&pairs, state.lenient());
    let url = list_url(state, uri);
    // No admission turn (an empty hold): the tools resource is the emulator's own.
    let listing = db.list(model.to_owned(), spec, Box::new(())).await?;
    Ok(json_bytes(StatusCode::OK, list_body(listing, &url, &pairs)))
}

/// One record of `model`.
pub async fn retrieve(
    db: Arc<dyn Backend>,
    uid: String,
    model: &'static str,
) -> Result<Response, HttpError> {
    let selection = Selection::default();
    let bytes = db
        .retrieve(model.to_owned(), uid, selection, Box::new(()))
        .await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// A `400` naming every key of `body` other than `allowed`.
pub fn only(body: &Map<String, Value>, allowed: &str) -> Result<(), HttpError> {
    let mut others = body.keys().filter(|k| *k != allowed).peekable();
    if others.peek().is_none() {
        return Ok(());
    }
    let mut error = HttpError::invalid(format!("Only `{allowed}` can be changed."));
    for key in others {
        error = error.with_field(
            key,
            format!("This field cannot be changed: only `{allowed}` can."),
        );
    }
    Err(error)
}
