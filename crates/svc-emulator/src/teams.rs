//! Teams (docs/contract.md 5.3): the model `groups` of the built-in tools resource `__svc_app__`,
//! one SQLite database per project.
//!
//! The handlers check what docs/contract.md 5.3 says a client may send, then hand the rest to the records
//! engine, which gives lists (paging, filters, ordering, `_no_pagination`) and errors exactly as
//! for records.
//!
//! Choices where the contract is silent:
//! - Update (`PATCH`) may hold `name` only; any other key is a `400` naming it, and an empty
//!   object changes nothing. A team name must be a non-blank string.
//! - Lists are ordered by `name` unless `_order_by` says otherwise.
//! - Teams are seeded once per project: Admins, Editors and Viewers, with the fixed uids of
//!   [`SEEDED_TEAMS`](crate::SEEDED_TEAMS).

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use serde_json::Value;
use svc_model::users::TEAMS_MODEL;

use crate::databases::ToolsStore;
use svc_emulator_http::AppState;
use svc_emulator_http::HttpError;
use svc_emulator_http::extract::{BodyLimit, blocking, json_bytes, json_object};
use svc_emulator_http::serve;
use svc_emulator_http::tools::{self, ToolsAccess, ToolsRecordAccess};
use svc_model::routes;

/// Teams: static routes for `__svc_app__`, which win over the records routes. Teams have no
/// create or delete, so POST and DELETE there are 405.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    let router = serve(router, &routes::LIST_TEAMS, list);
    let router = serve(router, &routes::GET_TEAM, retrieve);
    serve(router, &routes::UPDATE_TEAM, update)
}

/// `GET .../__svc_app__/models/groups`.
async fn list(
    State(state): State<AppState>,
    ToolsAccess { db }: ToolsAccess,
    uri: Uri,
) -> Result<Response, HttpError> {
    tools::list(&state, db, &uri, TEAMS_MODEL, "name").await
}

/// `GET .../__svc_app__/models/groups/{uid}`.
async fn retrieve(
    ToolsRecordAccess { db, pk: uid }: ToolsRecordAccess,
) -> Result<Response, HttpError> {
    tools::retrieve(db, uid, TEAMS_MODEL).await
}

/// `PATCH .../__svc_app__/models/groups/{uid}`: only `name`, not blank.
async fn update(
    ToolsRecordAccess { db, pk: uid }: ToolsRecordAccess,
    body: Body,
) -> Result<Response, HttpError> {
    let body = json_object(body, BodyLimit::DATA).await?;
    tools::only(&body, "name")?;
    match body.get("name") {
        None => {}
        Some(Value::String(name)) if !name.trim().is_empty() => {}
        Some(Value::String(_)) => {
            return Err(HttpError::invalid_field(
                "name",
                "This field may not be blank.",
            ));
        }
        Some(Value::Null) => {
            return Err(HttpError::invalid_field(
                "name",
                "This field may not be null.",
            ));
        }
        Some(_) => return Err(HttpError::invalid_field("name", "Not a valid string.")),
    }
    let db = ToolsStore::of(db)?;
    let bytes = blocking(move || Ok(db.update(TEAMS_MODEL, &uid, &Value::Object(body))?)).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}
