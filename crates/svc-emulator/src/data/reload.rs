//! `POST /projects/{project}/{environment}/{resource}/reload` (docs/contract.md 5.4): re-reads the
//! resource's schema, so tables and columns added to its database since become models and
//! fields. Data is not touched. Works for `__svc_app__` with the built-in tools token too.

use axum::Json;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::{blocking, resource};
use crate::error::ApiError;
use crate::state::AppState;

/// `200` `{"success": true}` once the new schema is in force.
pub(super) async fn reload(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: Result<Path<(String, String, String)>, PathRejection>,
) -> Result<Json<Value>, ApiError> {
    let Path((project, environment, name)) = path?;
    let db = resource(&state, &headers, &project, &environment, &name)?;
    blocking(move || Ok(db.reload()?)).await?;
    Ok(Json(json!({"success": true})))
}
