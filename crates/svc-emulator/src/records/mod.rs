//! Records: `/projects/{project}/{environment}/{resource}/models/{model}[/{pk}|/aggregate|/group]`
//! (docs/contract.md 5.1). The extractors check credentials; handlers read the request into the
//! engine's typed requests (lists through `crate::http::list`, aggregate and group through
//! [`forms`]), and hand them to the records engine (`crate::engine`), whose `EngineError`s
//! become HTTP answers in the http layer.

pub(crate) mod forms;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;

use crate::engine::{AggregateRequest, EngineError, GroupRequest};
use crate::http::AppState;
use crate::http::HttpError;
use crate::http::extract::{
    ModelAccess, RecordAccess, blocking, json_bytes, json_object, json_value, query_pairs,
};
use crate::http::list::{list_body, list_spec, list_url, selection};
use crate::http::route_with_optional_slash;
use forms::RequestForm;

/// The records routes, on the data host.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    let models = "/projects/{project}/{environment}/{resource}/models/{model}";
    let router = route_with_optional_slash(router, models, get(list).post(create));
    let router = route_with_optional_slash(
        router,
        &format!("{models}/aggregate"),
        get(aggregate_get).post(aggregate_post),
    );
    let router = route_with_optional_slash(
        router,
        &format!("{models}/group"),
        get(group_get).post(group_post),
    );
    route_with_optional_slash(
        router,
        &format!("{models}/{{pk}}"),
        get(retrieve).patch(update).delete(delete),
    )
}

/// `GET`: one page (the envelope), or every record with `_no_pagination`.
async fn list(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
) -> Result<Response, HttpError> {
    // An unknown model is a 404 whatever the query says.
    if db.model(&model).is_none() {
        return Err(EngineError::ModelNotFound(model).into());
    }
    let pairs = query_pairs(uri.query());
    let spec = list_spec(&pairs, state.lenient());
    let url = list_url(&state, &uri);
    let listing = blocking(move || Ok(db.list(&model, &spec)?)).await?;
    Ok(json_bytes(StatusCode::OK, list_body(listing, &url, &pairs)))
}

/// `POST`: `201` with the stored record.
async fn create(ModelAccess { db, model }: ModelAccess, body: Body) -> Result<Response, HttpError> {
    let fields = Value::Object(json_object(body).await?);
    let bytes = blocking(move || Ok(db.create(&model, &fields)?)).await?;
    Ok(json_bytes(StatusCode::CREATED, bytes))
}

/// `GET .../{pk}`.
async fn retrieve(RecordAccess { db, model, pk }: RecordAccess) -> Result<Response, HttpError> {
    let bytes = blocking(move || Ok(db.retrieve(&model, &pk)?)).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// `PATCH .../{pk}`: `200` with the whole updated record.
async fn update(
    RecordAccess { db, model, pk }: RecordAccess,
    body: Body,
) -> Result<Response, HttpError> {
    let fields = Value::Object(json_object(body).await?);
    let bytes = blocking(move || Ok(db.update(&model, &pk, &fields)?)).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// `DELETE .../{pk}`: `204`, no body.
async fn delete(RecordAccess { db, model, pk }: RecordAccess) -> Result<Response, HttpError> {
    blocking(move || Ok(db.delete(&model, &pk)?)).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST .../aggregate` with `{"func", "column"?}`; list filters come from the query.
async fn aggregate_post(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
    body: Body,
) -> Result<Response, HttpError> {
    let request = AggregateRequest::from_json(&Value::Object(json_object(body).await?))?;
    let selection = selection(&query_pairs(uri.query()), state.lenient());
    let value = blocking(move || Ok(db.aggregate(&model, &request, &selection)?)).await?;
    json_value(StatusCode::OK, &value)
}

/// `GET .../aggregate?_y_func=&_y_column=&{filters}`: the engine's GET form.
async fn aggregate_get(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
) -> Result<Response, HttpError> {
    let pairs = query_pairs(uri.query());
    let request = AggregateRequest::from_query(&pairs)?;
    let selection = selection(&pairs, state.lenient());
    let value = blocking(move || Ok(db.aggregate(&model, &request, &selection)?)).await?;
    json_value(StatusCode::OK, &value)
}

/// `POST .../group` with `{"x_column", "x_lookup"?, "y_func", "y_column"?}`.
async fn group_post(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
    body: Body,
) -> Result<Response, HttpError> {
    let request = GroupRequest::from_json(&Value::Object(json_object(body).await?))?;
    let selection = selection(&query_pairs(uri.query()), state.lenient());
    let value = blocking(move || Ok(db.group(&model, &request, &selection)?)).await?;
    json_value(StatusCode::OK, &value)
}

/// `GET .../group?_x_column=&_x_lookup=&_y_func=&_y_column=&{filters}`.
async fn group_get(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
) -> Result<Response, HttpError> {
    let pairs = query_pairs(uri.query());
    let request = GroupRequest::from_query(&pairs)?;
    let selection = selection(&pairs, state.lenient());
    let value = blocking(move || Ok(db.group(&model, &request, &selection)?)).await?;
    json_value(StatusCode::OK, &value)
}
