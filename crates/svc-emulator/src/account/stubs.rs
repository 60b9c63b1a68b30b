//! The emulator-only stub routes, authorized by the project's API key (the stubs themselves
//! are `svc_emulator_http::stubs`):
//!
//! - `GET /_emulator/projects/{project}/stubs`: the project's stubs, in order, with their counts;
//! - `POST` with a stub (`{"request", "response", "after", "times"}`, as the config file's
//!   `"stubs"`): declares it, after the others (`201`); `413` when the project holds as many
//!   stubs, or bytes of them, as its limits allow (`max_stubs`, `max_stub_bytes`);
//! - `DELETE`: removes every stub of the project (a reset puts the config file's back);
//! - `DELETE /_emulator/projects/{project}/stubs/{id}`: removes one (`204`);
//! - `GET /_emulator/projects/{project}/stubs/{id}/expect`: checks how many requests it
//!   answered (`exactly`, `at_least` or `at_most`), as `requests/expect` does.

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde_json::json;

use super::requests::{TIMES, checked, times};
use svc_emulator_http::extract::{BodyLimit, read_body};
use svc_emulator_http::stubs::StubError;
use svc_emulator_http::{AppState, HttpError, auth, routes, serve};
use svc_emulator_state::config::stubs::{STUB_SHAPE, StubConfig};
use svc_engine::request::query_pairs;
use svc_model::error_body::codes;

/// The routes.
pub(super) fn routes(router: Router<AppState>) -> Router<AppState> {
    let router = serve(router, &routes::LIST_STUBS, list);
    let router = serve(router, &routes::CREATE_STUB, add);
    let router = serve(router, &routes::CLEAR_STUBS, clear);
    let router = serve(router, &routes::DELETE_STUB, remove);
    serve(router, &routes::CHECK_STUB, expect)
}

/// The project named in the path, once its API key is checked: its name and its index.
fn project(
    state: &AppState,
    headers: &HeaderMap,
    project: &str,
) -> Result<(String, usize), HttpError> {
    let entry = auth::authorize_project(state.registry(), headers, project)?;
    let name = entry.name.as_str().to_owned();
    let index = state
        .stubs()
        .project_index(&name)
        .ok_or_else(|| HttpError::not_found("Project not found."))?;
    Ok((name, index))
}

/// The index of the project a `.../stubs` path names, once its API key is checked.
fn named(
    state: &AppState,
    headers: &HeaderMap,
    path: Result<Path<String>, PathRejection>,
) -> Result<usize, HttpError> {
    let Path(project) = path?;
    Ok(self::project(state, headers, &project)?.1)
}

/// A stub's number from the path.
fn stub_id(id: &str) -> Result<u64, HttpError> {
    id.parse().map_err(|_| {
        HttpError::not_found(format!(
            "No stub {id:?}: a stub's number, as GET /_emulator/projects/{{project}}/stubs lists them."
        ))
    })
}

async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, HttpError> {
    let index = named(&state, &headers, path)?;
    Ok(Json(json!({ "stubs": state.stubs().list(Some(index)) })).into_response())
}

async fn add(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<Path<String>, PathRejection>,
    body: Body,
) -> Result<Response, HttpError> {
    let index = named(&state, &headers, path)?;
    let bytes = read_body(body, BodyLimit::ACCOUNT).await?;
    let stub: StubConfig = serde_json::from_slice(&bytes)
        .map_err(|e| HttpError::invalid(format!("Not a stub ({e}): {STUB_SHAPE}.")))?;
    let info = state.stubs().add(index, stub).map_err(|e| match e {
        StubError::Invalid(message) => HttpError::invalid(format!("{message}.")),
        // The project's stubs are as many, or as large, as it may hold: too large a request
        // for it now, as a body past a route's limit is.
        limit @ StubError::Limit { .. } => HttpError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            codes::INVALID,
            format!("{limit}."),
        ),
        other => HttpError::invalid(other.to_string()),
    })?;
    Ok((StatusCode::CREATED, Json(info)).into_response())
}

async fn clear(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, HttpError> {
    let index = named(&state, &headers, path)?;
    let removed = state.stubs().clear(index);
    Ok(Json(json!({ "removed": removed })).into_response())
}

async fn remove(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, HttpError> {
    let Path((project, id)) = path?;
    let (_, index) = self::project(&state, &headers, &project)?;
    match state.stubs().remove(stub_id(&id)?, Some(index)) {
        true => Ok(StatusCode::NO_CONTENT.into_response()),
        false => Err(HttpError::not_found(format!(
            "No stub {id} in this project."
        ))),
    }
}

async fn expect(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<Path<(String, String)>, PathRejection>,
    RawQuery(query): RawQuery,
) -> Result<Response, HttpError> {
    let Path((project, id)) = path?;
    let (name, index) = self::project(&state, &headers, &project)?;
    let id = stub_id(&id)?;
    let pairs = query_pairs(query.as_deref());
    if let Some((other, _)) = pairs.iter().find(|(k, _)| !TIMES.contains(&k.as_str())) {
        return Err(HttpError::invalid(format!(
            "Unknown query parameter {other:?}; a stub's expectation reads {}.",
            TIMES.join(", ")
        )));
    }
    let times = times(&pairs)?;
    let matcher = state.stubs().answered_matcher(id, Some(index));
    checked(&state, &name, &matcher, times, false)
}
