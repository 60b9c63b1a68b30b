//! `GET /_emulator/ui/api/overview`: what the page shows around the records: every project with
//! its environments, resources, models (fields, their filter families and lookups), actions,
//! workflows, and the fixtures loaded at start. No credential is in it.

use axum::body::Body;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, Response};
use serde_json::{Value, json};

use svc_emulator_http::AppState;
use svc_emulator_state::catalog::databases::owned_by_emulator;
use svc_emulator_state::config::actions::ActionConfig;
use svc_emulator_state::config::fixtures::Fixtures;
use svc_engine::filter::{family_lookups, family_name};
use svc_engine::types::ModelInfo;

/// What a start's load of a resource's fixtures did, for the page.
#[derive(Debug, Clone)]
pub(crate) struct FixturesLoaded {
    /// The project and the resource.
    pub(crate) project: String,
    pub(crate) resource: String,
    /// What the config names: the directory or the files, as the page shows them.
    pub(crate) source: String,
    /// `loaded 12 records into 2 models`, or what was skipped.
    pub(crate) outcome: String,
}

impl FixturesLoaded {
    /// The page's lines of one load.
    pub(crate) fn new(
        project: &str,
        resource: &str,
        fixtures: &Fixtures,
        outcome: impl Into<String>,
    ) -> Self {
        let source = fixtures.to_string();
        Self {
            project: project.to_owned(),
            resource: resource.to_owned(),
            source,
            outcome: outcome.into(),
        }
    }
}

/// The overview's JSON answer.
pub(super) fn answer(state: &AppState, fixtures: &[FixturesLoaded]) -> Response<Body> {
    let projects: Vec<Value> = state
        .registry()
        .projects()
        .iter()
        .map(|project| {
            let name = project.name.as_str();
            let resources: Vec<Value> = project
                .resources
                .iter()
                .map(|resource| {
                    let db = state.catalog().get(name, &resource.name);
                    let models: Vec<Value> = db
                        .as_ref()
                        .map(|db| {
                            db.model_names()
                                .iter()
                                .filter_map(|m| db.describe(m))
                                .map(|m| model(&m))
                                .collect()
                        })
                        .unwrap_or_default();
                    let actions: Vec<Value> = resource
                        .actions
                        .iter()
                        .map(|a| action(a, db.as_deref()))
                        .collect();
                    let loaded: Vec<Value> = fixtures
                        .iter()
                        .filter(|f| f.project == name && f.resource == resource.name)
                        .map(|f| json!({ "source": f.source, "outcome": f.outcome }))
                        .collect();
                    json!({
                        "name": resource.name,
                        "display_name": resource.display_name.as_deref().unwrap_or(&resource.name),
                        "models": models,
                        "actions": actions,
                        "fixtures": loaded,
                        "reset": resource.reset || owned_by_emulator(resource),
                    })
                })
                .collect();
            let workflows: Vec<Value> = project
                .workflows
                .iter()
                .map(|w| {
                    let steps: Vec<Value> = w
                        .steps
                        .iter()
                        .map(|s| json!({ "resource": s.resource, "action": s.action }))
                        .collect();
                    json!({ "uid": w.uid, "steps": steps })
                })
                .collect();
            json!({
                "name": name,
                "display_name": project.display_name,
                "environments": project.environments.iter().map(|e| e.as_str()).collect::<Vec<_>>(),
                "resources": resources,
                "workflows": workflows,
            })
        })
        .collect();
    let body = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "api_base_url": state.api_base_url(),
        "journal_bodies": state.journal().keeps_bodies(),
        "journal_enabled": state.journal().enabled(),
        "projects": projects,
    });
    let mut response = Response::new(Body::from(body.to_string()));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn model(m: &ModelInfo) -> Value {
    let fields: Vec<Value> = m
        .fields
        .iter()
        .map(|f| {
            let lookups: Vec<&str> = family_lookups(f.family)
                .iter()
                .map(|l| l.as_str())
                .collect();
            json!({ "name": f.name, "family": family_name(f.family), "lookups": lookups })
        })
        .collect();
    json!({ "name": m.name, "key": m.key, "promoted_key": m.promoted_key, "fields": fields })
}

fn action(a: &ActionConfig, db: Option<&dyn svc_emulator_core::backend::Backend>) -> Value {
    let inputs: Vec<String> = match (a.answer.is_some(), db) {
        (false, Some(db)) => db
            .inputs(&a.sql)
            .map(|names| names.into_iter().collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    json!({
        "name": a.name,
        "sql": a.sql,
        "answer": a.answer.is_some(),
        "inputs": inputs,
    })
}
