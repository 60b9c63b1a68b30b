//! `POST /projects/{project}/{environment}/workflows/{uid}/run` (docs/contract.md 5.6): a
//! project's workflow, its steps run in order, each an action of one of its resources
//! ([`actions::run`](super::execute::run)), each in a transaction of its own. The first step that fails ends the
//! run with `200` `{"success": false, "error"}`: a failed run is an answer, not a status.

use std::collections::{BTreeMap, BTreeSet};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::execute::{self as actions, Inputs};
use svc_emulator_http::auth::authorize_project_data;
use svc_emulator_http::extract::json_value;
use svc_emulator_http::serve;
use svc_emulator_http::{AppState, HttpError};
use svc_emulator_state::config::actions::WorkflowConfig;
use svc_emulator_state::config::registry::ProjectEntry;
use svc_model::routes;

/// The workflow route, on the data host. Its static `workflows` segment wins over a resource
/// of that name's routes.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    serve(router, &routes::RUN_WORKFLOW, run)
}

/// Runs the workflow: `200` with `{"success": true, "result"}` or `{"success": false,
/// "error"}`.
async fn run(
    State(state): State<AppState>,
    Path((project, environment, uid)): Path<(String, String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let entry =
        authorize_project_data(state.registry(), &headers, &project, &environment, |jwt| {
            state
                .accounts()
                .verify_any(jwt)
                .map(|claims| claims.project)
        })?;
    let workflow = find(entry, &uid)?;
    let data = actions::request_data(body).await?;
    check_inputs(&state, entry, workflow, &data)?;
    let mut result = Value::Null;
    for (i, step) in workflow.steps.iter().enumerate() {
        let outcome = match entry.resources.iter().find(|r| r.name == step.resource) {
            Some(resource) => match actions::find(resource, &step.action) {
                Ok(action) => {
                    actions::run(
                        &state,
                        entry.name.as_str(),
                        resource,
                        action,
                        data.clone(),
                        Inputs::Some,
                    )
                    .await
                }
                Err(e) => Err(e),
            },
            None => Err(HttpError::unknown_resource(entry, &step.resource)),
        };
        match outcome {
            Ok(value) => result = value,
            Err(e) => {
                let error = format!(
                    "step {} ({}.{}): {}",
                    i + 1,
                    step.resource,
                    step.action,
                    message(&e)
                );
                return json_value(StatusCode::OK, &json!({"success": false, "error": error}));
            }
        }
    }
    json_value(StatusCode::OK, &json!({"success": true, "result": result}))
}

/// The workflow `uid` of the project, or the `404` that lists its workflows.
fn find<'p>(entry: &'p ProjectEntry, uid: &str) -> Result<&'p WorkflowConfig, HttpError> {
    entry
        .workflows
        .iter()
        .find(|w| w.uid == uid)
        .ok_or_else(|| {
            let uids: Vec<&str> = entry.workflows.iter().map(|w| w.uid.as_str()).collect();
            HttpError::not_found(format!(
                "Workflow {uid:?} not found. {}",
                actions::listed("The project's workflows", &uids)
            ))
        })
}

/// Inputs are checked before any step runs, so that a run never stops half-way for what the
/// request could have said: an input a step's statements name missing from `data` is
/// refused, and so is a key that no step can take (every step is SQL, a fixed answer taking
/// any input, and none names it).
fn check_inputs(
    state: &AppState,
    entry: &ProjectEntry,
    workflow: &WorkflowConfig,
    data: &Map<String, Value>,
) -> Result<(), HttpError> {
    // Each input with the first step that takes it, for the message of a missing one.
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let mut takes_any = false;
    for (i, step) in workflow.steps.iter().enumerate() {
        let Some(resource) = entry.resources.iter().find(|r| r.name == step.resource) else {
            continue;
        };
        let Ok(action) = actions::find(resource, &step.action) else {
            continue;
        };
        if action.answer.is_some() {
            takes_any = true;
            continue;
        }
        let Some(db) = state.catalog().get(entry.name.as_str(), &resource.name) else {
            continue;
        };
        // A statement whose inputs cannot be read fails its step when it runs.
        if let Ok(inputs) = db.inputs(&action.sql) {
            for input in inputs {
                names.entry(input).or_insert_with(|| {
                    format!("step {}, {}.{}", i + 1, step.resource, step.action)
                });
            }
        }
    }
    let missing: Vec<String> = names
        .iter()
        .filter(|(name, _)| !data.contains_key(*name))
        .map(|(name, step)| format!("{name} ({step})"))
        .collect();
    if !missing.is_empty() {
        return Err(HttpError::invalid_field(
            "data",
            format!("Missing input: {}.", missing.join(", ")),
        ));
    }
    let names: BTreeSet<String> = names.into_keys().collect();
    actions::check_names(
        &names,
        data,
        (!takes_any).then_some("The workflow's steps take"),
    )
}

/// The message of a step's failure: its field errors when it has some (a missing input), else
/// its error.
fn message(e: &HttpError) -> String {
    let body = e.body();
    let fields: Vec<String> = body.fields.values().flatten().cloned().collect();
    if fields.is_empty() {
        body.error.clone()
    } else {
        fields.join(" ")
    }
}
