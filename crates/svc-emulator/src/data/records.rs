//! Records: `/projects/{project}/{environment}/{resource}/models/{model}[/{pk}|/aggregate|/group]`
//! (docs/contract.md 5.1). Handlers check credentials, decode the request, and hand it to the
//! records engine (`crate::records`), which answers with JSON bytes or a `RecordsError`.

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::{ModelAccess, RecordAccess, blocking};
use crate::error::ApiError;
use crate::extract::{json_object, query_pairs};
use crate::records::{AggregateRequest, GroupRequest, RequestForm};
use crate::state::AppState;

/// A `Response` of JSON bytes written by the records engine.
pub(super) fn json_bytes(status: StatusCode, bytes: Vec<u8>) -> Response {
    let mut response = (status, bytes).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn json_value(status: StatusCode, value: &Value) -> Result<Response, ApiError> {
    let bytes = serde_json::to_vec(value).map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(json_bytes(status, bytes))
}

/// `GET`: one page (the envelope), or every record with `_no_pagination`.
pub(super) async fn list(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
) -> Result<Response, ApiError> {
    let pairs = query_pairs(uri.query());
    // Links keep the path as the client wrote it, minus a trailing slash.
    let base = format!(
        "{}{}",
        state.api_base_url(),
        uri.path().trim_end_matches('/')
    );
    let bytes = blocking(move || Ok(db.list(&model, &pairs, &base)?)).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// `POST`: `201` with the stored record.
pub(super) async fn create(
    ModelAccess { db, model }: ModelAccess,
    body: Body,
) -> Result<Response, ApiError> {
    let fields = Value::Object(json_object(body).await?);
    let bytes = blocking(move || Ok(db.create(&model, &fields)?)).await?;
    Ok(json_bytes(StatusCode::CREATED, bytes))
}

/// `GET .../{pk}`.
pub(super) async fn retrieve(
    RecordAccess { db, model, pk }: RecordAccess,
) -> Result<Response, ApiError> {
    let bytes = blocking(move || Ok(db.retrieve(&model, &pk)?)).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// `PATCH .../{pk}`: `200` with the whole updated record.
pub(super) async fn update(
    RecordAccess { db, model, pk }: RecordAccess,
    body: Body,
) -> Result<Response, ApiError> {
    let fields = Value::Object(json_object(body).await?);
    let bytes = blocking(move || Ok(db.update(&model, &pk, &fields)?)).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// `DELETE .../{pk}`: `204`, no body.
pub(super) async fn delete(
    RecordAccess { db, model, pk }: RecordAccess,
) -> Result<Response, ApiError> {
    blocking(move || Ok(db.delete(&model, &pk)?)).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST .../aggregate` with `{"func", "column"?}`; list filters come from the query.
pub(super) async fn aggregate_post(
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
    body: Body,
) -> Result<Response, ApiError> {
    let request = AggregateRequest::from_json(&Value::Object(json_object(body).await?))?;
    let pairs = query_pairs(uri.query());
    let value = blocking(move || Ok(db.aggregate(&model, &request, &pairs)?)).await?;
    json_value(StatusCode::OK, &value)
}

/// `GET .../aggregate?_y_func=&_y_column=&{filters}`: the engine's GET form.
pub(super) async fn aggregate_get(
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
) -> Result<Response, ApiError> {
    let pairs = query_pairs(uri.query());
    let request = AggregateRequest::from_query(&pairs)?;
    let value = blocking(move || Ok(db.aggregate(&model, &request, &pairs)?)).await?;
    json_value(StatusCode::OK, &value)
}

/// `POST .../group` with `{"x_column", "x_lookup"?, "y_func", "y_column"?}`.
pub(super) async fn group_post(
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
    body: Body,
) -> Result<Response, ApiError> {
    let request = GroupRequest::from_json(&Value::Object(json_object(body).await?))?;
    let pairs = query_pairs(uri.query());
    let value = blocking(move || Ok(db.group(&model, &request, &pairs)?)).await?;
    json_value(StatusCode::OK, &value)
}

/// `GET .../group?_x_column=&_x_lookup=&_y_func=&_y_column=&{filters}`.
pub(super) async fn group_get(
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
) -> Result<Response, ApiError> {
    let pairs = query_pairs(uri.query());
    let request = GroupRequest::from_query(&pairs)?;
    let value = blocking(move || Ok(db.group(&model, &request, &pairs)?)).await?;
    json_value(StatusCode::OK, &value)
}
