//! `GET /projects/{project}/`: the project as the API key's owner sees it (docs/contract.md 4.1).

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};
use svc_model::Project;

use axum::Router;
use svc_emulator_http::AppState;
use svc_emulator_http::app::ProjectAccess;
use svc_emulator_http::serve;
use svc_emulator_state::catalog::databases::{kind_name, location};
use svc_emulator_state::config::registry::ProjectEntry;
use svc_model::routes;

/// The project route, on the application host (relative to `/api`).
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    serve(router, &routes::GET_PROJECT, get_one)
}

/// Answers the project of the path, if the API key belongs to it.
async fn get_one(
    State(state): State<AppState>,
    ProjectAccess { project }: ProjectAccess,
) -> Json<Project> {
    Json(project_json(&project, state.app_base_url()))
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
                "type": location(r).map_or("sqlite", |l| kind_name(&l)),
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
