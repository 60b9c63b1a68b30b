//! `POST /projects/{project}/{environment}/{resource}/sql_get_query` (docs/contract.md 5.2): one
//! read-only query, run by the resource's backend ([`Backend::sql`](svc_emulator_core::backend::Backend::sql)).
//!
//! The body is read as the data engine reads it (`svc_engine::sql_request`): `query`, the
//! format `v` (1 when absent: `%s` and `params`; from 2 on, `:name` and `params_obj`), `limit`
//! and `offset` (at most 100 rows from format 2 on unless `limit` says otherwise).

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use svc_emulator_http::AppState;
use svc_emulator_http::HttpError;
use svc_emulator_http::extract::{BodyLimit, ResourceAccess, json_bytes, json_object};
use svc_emulator_http::serve;
use svc_engine::SqlLimits;
use svc_engine::sql_request::read_sql_request;
use svc_model::routes;

/// The SQL route, on the data host.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    serve(router, &routes::SQL_QUERY, query)
}

/// Runs the query: `200` with `{"columns", "data", "row_count"}`, or `400` naming the field
/// (`query`, `v`, `params`, `params_obj`, `limit`, `offset`, or a key the emulator does not run).
async fn query(
    State(state): State<AppState>,
    ResourceAccess { db }: ResourceAccess,
    body: Body,
) -> Result<Response, HttpError> {
    let body = json_object(body, BodyLimit::DATA).await?;
    let request = read_sql_request(body)?;
    let limits = SqlLimits {
        time: state.limits().sql_time(),
        answer_bytes: state.limits().sql_answer(),
    };
    // When the client goes away, this future is dropped before the query ends, and the
    // backend cancels it: the resource's connection is freed at once.
    let bytes = db.sql(request, limits).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}
