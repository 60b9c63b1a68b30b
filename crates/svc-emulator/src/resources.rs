//! `POST /projects/{project}/{environment}/{resource}/reload` (docs/contract.md 5.4): re-reads the
//! resource's schema, so tables and columns added to its database since become models and
//! fields. Data is not touched. Works for `__svc_app__` with the built-in tools token too.

use axum::{Json, Router};
use serde_json::{Value, json};

use svc_emulator_http::AppState;
use svc_emulator_http::extract::ResourceAccess;
use svc_emulator_http::{HttpError, serve};
use svc_model::routes;

/// The reload route, on the data host.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    serve(router, &routes::RELOAD_RESOURCE, reload)
}

/// `200` `{"success": true}` once the new schema is in force.
async fn reload(ResourceAccess { db }: ResourceAccess) -> Result<Json<Value>, HttpError> {
    db.reload().await?;
    Ok(Json(json!({"success": true})))
}
