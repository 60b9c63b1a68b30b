//! `GET /projects/{project}/`: the project as the API key's owner sees it (docs/contract.md 4.1).

use axum::Json;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde_json::{Value, json};
use svc_model::Project;

use crate::auth;
use crate::error::ApiError;
use crate::registry::ProjectEntry;
use crate::state::AppState;

/// Answers the project of the path, if the API key belongs to it.
pub(super) async fn get(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Project>, ApiError> {
    let Path(project) = path?;
    let entry = auth::authorize_project(state.registry(), &headers, &project)?;
    Ok(Json(project_json(entry, state.app_base_url())))
}

fn project_json(entry: &ProjectEntry, app_base_url: &str) -> Project {
    let environments: Vec<Value> = entry
        .environments
        .iter()
        .map(|env| json!({"unique_name": env, "name": env}))
        .collect();
    let resources: Vec<Value> = entry
        .resources
        .iter()
        .map(|r| {
            json!({
                "unique_name": r.name,
                "name": r.display_name.as_deref().unwrap_or(&r.name),
                "type": "sqlite",
            })
        })
        .collect();
    Project::default()
        .with("unique_name", entry.name.as_str())
        .with("name", entry.display_name.as_str())
        .with(
            "url",
            format!("{app_base_url}/projects/{}/", entry.name.encoded()),
        )
        .with("environments", environments)
        .with(
            "default_environment",
            entry.default_environment().map(|e| e.as_str()),
        )
        .with("resources", resources)
        .with("params", json!({}))
}
