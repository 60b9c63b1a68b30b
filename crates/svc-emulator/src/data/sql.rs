//! `POST /projects/{project}/{environment}/{resource}/sql_get_query` (docs/contract.md 5.2): one
//! read-only query, run by the records engine ([`Resource::sql`](crate::records::Resource::sql)).
//!
//! The body is `{"query", "v"?, "params_obj"?}`: `query` a non-blank string, `v` absent,
//! `null` or `2` (the only format there is), `params_obj` absent, `null` or an object. Other
//! keys are ignored.

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Map, Value};

use super::records::json_bytes;
use super::{blocking, resource};
use crate::error::ApiError;
use crate::extract::json_object;
use crate::state::AppState;

type ResourcePath = Result<Path<(String, String, String)>, PathRejection>;

/// Runs the query: `200` with `{"columns", "data", "row_count"}`, or `400` naming `query`,
/// `v` or `params_obj`.
pub(super) async fn query(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: ResourcePath,
    body: Body,
) -> Result<Response, ApiError> {
    let Path((project, environment, name)) = path?;
    let db = resource(&state, &headers, &project, &environment, &name)?;
    let mut body = json_object(body).await?;
    let query = match body.remove("query") {
        Some(Value::String(q)) if !q.trim().is_empty() => q,
        Some(Value::String(_)) => {
            return Err(ApiError::invalid_field(
                "query",
                "This field may not be blank.",
            ));
        }
        None | Some(Value::Null) => {
            return Err(ApiError::invalid_field("query", "This field is required."));
        }
        Some(_) => return Err(ApiError::invalid_field("query", "Not a valid string.")),
    };
    match body.get("v") {
        None | Some(Value::Null) => {}
        Some(v) if v.as_u64() == Some(2) => {}
        Some(_) => {
            return Err(ApiError::invalid_field(
                "v",
                "Only version 2 (columns once, rows as arrays) is supported.",
            ));
        }
    }
    let params = match body.remove("params_obj") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => {
            return Err(ApiError::invalid_field(
                "params_obj",
                "Expected an object of parameter values by name.",
            ));
        }
    };
    let bytes = blocking(move || Ok(db.sql(&query, &params)?)).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}
