//! `POST /projects/{project}/{environment}/{resource}/actions/{action}` (docs/contract.md 5.6):
//! one action of a resource, as the config declares it ([`ActionConfig`]): SQL run by the
//! resource's backend ([`Backend::execute`](svc_emulator_core::backend::Backend::execute)) with the
//! request's `data` bound by name, or a fixed answer. The workflows' steps run through
//! [`run`] too ([`super::workflows`]).

use std::collections::BTreeSet;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use svc_emulator_http::extract::{BodyLimit, authorize, json_object, json_value};
use svc_emulator_http::serve;
use svc_emulator_http::{AppState, HttpError};
use svc_emulator_state::config::actions::ActionConfig;
use svc_emulator_state::config::projects::ResourceConfig;
use svc_engine::{EngineError, SqlLimits};
use svc_model::routes;

/// The action route, on the data host.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    serve(router, &routes::RUN_ACTION, execute)
}

/// Runs the action: `200` `{"data": <result>}`.
async fn execute(
    State(state): State<AppState>,
    Path((project, environment, resource, action)): Path<(String, String, String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let access = authorize(&state, &headers, &project, &environment, &resource)?;
    let config = find(access.resource, &action)?;
    let data = request_data(body).await?;
    let result = run(
        &state,
        &project,
        access.resource,
        config,
        data,
        Inputs::Exact,
    )
    .await?;
    let mut answer = Map::new();
    answer.insert("data".to_owned(), result);
    json_value(StatusCode::OK, &Value::Object(answer))
}

/// The action `name` of `resource`, or the `404` that lists its actions.
pub(crate) fn find<'c>(
    resource: &'c ResourceConfig,
    name: &str,
) -> Result<&'c ActionConfig, HttpError> {
    resource
        .actions
        .iter()
        .find(|a| a.name == name)
        .ok_or_else(|| {
            let names: Vec<&str> = resource.actions.iter().map(|a| a.name.as_str()).collect();
            HttpError::not_found(format!(
                "Action {name:?} not found on resource {:?}. {}",
                resource.name,
                listed("Its actions", &names)
            ))
        })
}

/// `"<what>: a, b."`, or that there are none.
pub(crate) fn listed(what: &str, names: &[&str]) -> String {
    if names.is_empty() {
        format!("{what}: none.")
    } else {
        format!("{what}: {}.", names.join(", "))
    }
}

/// The request's inputs: the body must be `{"data": {...}}` (docs/contract.md 5.6, why the
/// inputs are wrapped); other keys are ignored.
pub(crate) async fn request_data(body: Body) -> Result<Map<String, Value>, HttpError> {
    let mut body = json_object(body, BodyLimit::DATA).await?;
    match body.remove("data") {
        Some(Value::Object(data)) => Ok(data),
        None | Some(Value::Null) => Err(HttpError::invalid_field(
            "data",
            "This field is required: send {\"data\": {...}} with the inputs ({\"data\": {}} for none).",
        )),
        Some(_) => Err(HttpError::invalid_field(
            "data",
            "Expected an object of inputs by name.",
        )),
    }
}

/// Whether inputs that no statement names are refused (an action called by itself), or left
/// for other steps (a workflow checks them against all its steps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inputs {
    /// Every key of `data` must be an input of the action.
    Exact,
    /// Keys the action does not take are not given to it.
    Some,
}

/// Runs `action` of `resource` with `data`: its result (a fixed answer, or the last
/// statement's rows as a list of objects).
pub(crate) async fn run(
    state: &AppState,
    project: &str,
    resource: &ResourceConfig,
    action: &ActionConfig,
    data: Map<String, Value>,
    inputs: Inputs,
) -> Result<Value, HttpError> {
    if let Some(answer) = &action.answer {
        return Ok(answer.clone());
    }
    let db = state
        .catalog()
        .get(project, &resource.name)
        .ok_or_else(|| HttpError::not_found("Resource not found."))?;
    let db = state.admit(db).await?;
    let names = db.inputs(&action.sql).map_err(statement_error)?;
    check_inputs(&names, &data, inputs)?;
    let given: Map<String, Value> = data
        .into_iter()
        .filter(|(k, _)| names.contains(k))
        .collect();
    let limits = SqlLimits {
        time: state.limits().sql_time(),
        answer_bytes: state.limits().sql_answer(),
    };
    // When the client goes away, this future is dropped and the backend cancels the
    // statement running: the transaction is rolled back.
    let bytes = db
        .execute(action.sql.clone(), given, limits)
        .await
        .map_err(statement_error)?;
    rows_as_objects(&bytes)
}

/// Every input the statements name must be given; with [`Inputs::Exact`], nothing else.
fn check_inputs(
    names: &BTreeSet<String>,
    data: &Map<String, Value>,
    inputs: Inputs,
) -> Result<(), HttpError> {
    check_names(
        names,
        data,
        (inputs == Inputs::Exact).then_some("The action takes"),
    )
}

/// Every name in `names` must be a key of `data`, and with `takers` (who takes them, for the
/// message), every key of `data` must be in `names`: else a `400` on `data` naming them.
pub(crate) fn check_names(
    names: &BTreeSet<String>,
    data: &Map<String, Value>,
    takers: Option<&str>,
) -> Result<(), HttpError> {
    let missing: Vec<&str> = names
        .iter()
        .filter(|n| !data.contains_key(*n))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(HttpError::invalid_field(
            "data",
            format!("Missing input: {}.", missing.join(", ")),
        ));
    }
    let Some(takers) = takers else {
        return Ok(());
    };
    let unknown: Vec<&str> = data
        .keys()
        .filter(|k| !names.contains(*k))
        .map(String::as_str)
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let takes: Vec<&str> = names.iter().map(String::as_str).collect();
    Err(HttpError::invalid_field(
        "data",
        format!(
            "Unknown input: {}. {}",
            unknown.join(", "),
            listed(takers, &takes)
        ),
    ))
}

/// A statement's failure: the database's message as a `400` of its own (`invalid`), not
/// as a field of a request that has no `query`.
fn statement_error(e: EngineError) -> HttpError {
    match e {
        EngineError::Invalid {
            message, fields, ..
        } if fields.contains_key("query") => HttpError::invalid(message),
        other => other.into(),
    }
}

/// The backend's answer `{"columns", "data": [[...]], ...}` as `[{column: value}, ...]`, each
/// value copied as the backend wrote it.
fn rows_as_objects(bytes: &[u8]) -> Result<Value, HttpError> {
    #[derive(Deserialize)]
    struct Answer<'a> {
        columns: Vec<String>,
        #[serde(borrow)]
        data: Vec<Vec<&'a RawValue>>,
    }
    let answer: Answer<'_> =
        serde_json::from_slice(bytes).map_err(|e| HttpError::internal(e.to_string()))?;
    let rows = answer
        .data
        .into_iter()
        .map(|row| {
            let object = answer
                .columns
                .iter()
                .zip(row)
                .map(|(column, raw)| {
                    serde_json::from_str(raw.get()).map(|value| (column.clone(), value))
                })
                .collect::<Result<Map<String, Value>, _>>()?;
            Ok(Value::Object(object))
        })
        .collect::<Result<Vec<Value>, serde_json::Error>>()
        .map_err(|e| HttpError::internal(e.to_string()))?;
    Ok(Value::Array(rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_objects_in_column_order() {
        let v = rows_as_objects(
            br#"{"columns":["id","name"],"data":[[1,"a"],[2,null]],"row_count":2}"#,
        )
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!([{"id": 1, "name": "a"}, {"id": 2, "name": null}])
        );
        let none = rows_as_objects(br#"{"columns":[],"data":[],"row_count":0}"#).unwrap();
        assert_eq!(none, serde_json::json!([]));
    }

    #[test]
    fn inputs_missing_or_unknown_are_named() {
        let names: BTreeSet<String> = ["id".to_owned()].into();
        let data = |v: Value| v.as_object().cloned().unwrap();
        let e = check_inputs(&names, &data(serde_json::json!({})), Inputs::Exact).unwrap_err();
        assert_eq!(e.body().fields["data"], ["Missing input: id."]);
        let e = check_inputs(
            &names,
            &data(serde_json::json!({"id": 1, "x": 2})),
            Inputs::Exact,
        )
        .unwrap_err();
        assert_eq!(
            e.body().fields["data"],
            ["Unknown input: x. The action takes: id."]
        );
        assert!(
            check_inputs(
                &names,
                &data(serde_json::json!({"id": 1, "x": 2})),
                Inputs::Some
            )
            .is_ok()
        );
    }
}
