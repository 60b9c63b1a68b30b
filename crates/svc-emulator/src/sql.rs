//! `POST /projects/{project}/{environment}/{resource}/sql_get_query` (docs/contract.md 5.2): one
//! read-only query, run by the resource's backend ([`Backend::sql`](svc_emulator_core::backend::Backend::sql)).
//!
//! The body is `{"query", "v"?, "params_obj"?}`: `query` a non-blank string, `v` absent,
//! `null` or `2` (the only format there is), `params_obj` absent, `null` or an object. Other
//! keys are ignored.

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Map, Value};

use svc_emulator_http::AppState;
use svc_emulator_http::HttpError;
use svc_emulator_http::extract::{BodyLimit, ResourceAccess, json_bytes, json_object};
use svc_emulator_http::serve;
use svc_engine::SqlLimits;
use svc_model::routes;

/// The SQL route, on the data host.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    serve(router, &routes::SQL_QUERY, query)
}

/// Runs the query: `200` with `{"columns", "data", "row_count"}`, or `400` naming `query`,
/// `v` or `params_obj`.
async fn query(
    State(state): State<AppState>,
    ResourceAccess { db }: ResourceAccess,
    body: Body,
) -> Result<Response, HttpError> {
    let mut body = json_object(body, BodyLimit::DATA).await?;
    let query = match body.remove("query") {
        Some(Value::String(q)) if !q.trim().is_empty() => q,
        Some(Value::String(_)) => {
            return Err(HttpError::invalid_field(
                "query",
                "This field may not be blank.",
            ));
        }
        None | Some(Value::Null) => {
            return Err(HttpError::invalid_field("query", "This field is required."));
        }
        Some(_) => return Err(HttpError::invalid_field("query", "Not a valid string.")),
    };
    match body.get("v") {
        None | Some(Value::Null) => {}
        Some(v) if v.as_u64() == Some(2) => {}
        Some(_) => {
            return Err(HttpError::invalid_field(
                "v",
                "Only version 2 (columns once, rows as arrays) is supported.",
            ));
        }
    }
    let params = match body.remove("params_obj") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => {
            return Err(HttpError::invalid_field(
                "params_obj",
                "Expected an object of parameter values by name.",
            ));
        }
    };
    let limits = SqlLimits {
        time: state.limits().sql_time(),
        answer_bytes: state.limits().sql_answer(),
    };
    // When the client goes away, this future is dropped before the query ends, and the
    // backend cancels it: the resource's connection is freed at once.
    let bytes = db.sql(query, params, limits).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}
