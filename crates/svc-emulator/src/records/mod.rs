//! Records: `/projects/{project}/{environment}/{resource}/models/{model}[/{pk}|/aggregate|/group]`
//! (docs/contract.md 5.1). The extractors check credentials; handlers read the request into the
//! engine's typed requests (`svc_engine::request` for lists and selections, `svc_engine::forms`
//! for aggregates and groups), and hand them to the databases, whose `EngineError`s
//! become HTTP answers in the http layer.

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use axum::routing::head;
use svc_emulator_http::AppState;
use svc_emulator_http::HttpError;
use svc_emulator_http::extract::{
    BodyLimit, MAX_JSON_VALUES, ModelAccess, RecordAccess, json_bytes, json_object, json_value,
    json_values_over, read_body,
};
use svc_emulator_http::list::list_url;
use svc_emulator_http::{route_with_optional_slash, serve};
use svc_engine::body::parse_form;
use svc_engine::body::unknown_fields;
use svc_engine::forms::RequestForm;
use svc_engine::python::json::{PyJson, parse_py_json};
use svc_engine::request::{list_body, list_spec, query_pairs, selection};
use svc_engine::time_zone::{tz_of, tz_on_write};
use svc_engine::{AggregateRequest, EngineError, GroupRequest};
use svc_model::routes;

/// The records routes, on the data host.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    let router = serve(router, &routes::LIST_RECORDS, list);
    let router = serve(router, &routes::CREATE_RECORD, create);
    let router = serve(router, &routes::AGGREGATE_RECORDS_GET, aggregate_get);
    let router = serve(router, &routes::AGGREGATE_RECORDS, aggregate_post);
    let router = serve(router, &routes::GROUP_RECORDS_GET, group_get);
    let router = serve(router, &routes::GROUP_RECORDS, group_post);
    let router = serve(router, &routes::GET_RECORD, retrieve);
    let router = serve(router, &routes::PATCH_RECORD, update);
    let router = serve(router, &routes::PUT_RECORD, update);
    let router = serve(router, &routes::DELETE_RECORD, delete);
    [
        routes::LIST_RECORDS,
        routes::AGGREGATE_RECORDS,
        routes::GROUP_RECORDS,
        routes::GET_RECORD,
    ]
    .iter()
    .fold(router, |router, route| {
        route_with_optional_slash(router, route.path(), head(head_refused))
    })
}

/// `HEAD` on a records route: the data engine's views have no `head` action and fail (500),
/// where a server's default would answer the `GET`'s head (`200`) [decision: stricter]: `405`,
/// marked; lenient mode answers the engine's `500`.
async fn head_refused(State(state): State<AppState>) -> HttpError {
    let message = "HEAD is not answered on records routes: the data engine fails (500) on it. \
                   Send GET.";
    if state.lenient() {
        return EngineError::engine_fails(true, "non_field_errors", message).into();
    }
    HttpError::method_not_allowed()
        .with_field("non_field_errors", message)
        .stricter()
}

/// Reads a create or update body as the data engine reads it: JSON (Python's `json.loads`,
/// so `NaN` and big integers too) when the content type starts with `application/json`, an
/// empty JSON body being `{}`; a form when it is `application/x-www-form-urlencoded`; with any
/// other content type the engine sees no fields at all, and neither does the emulator.
async fn engine_body(headers: &HeaderMap, body: Body) -> Result<PyJson, HttpError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let bytes = read_body(body, BodyLimit::DATA).await?;
    if content_type.starts_with("application/json") {
        if bytes.is_empty() {
            return Ok(PyJson::Dict(Vec::new()));
        }
        // [decision: stricter] A body of more values than any record has is refused before it
        // is parsed (each parsed value costs tens of bytes).
        if json_values_over(&bytes, MAX_JSON_VALUES) {
            return Err(HttpError::invalid(format!(
                "The request body holds more than {MAX_JSON_VALUES} JSON values; a record is \
                 one object of field values."
            )));
        }
        let text = std::str::from_utf8(&bytes).map_err(|_| {
            HttpError::invalid("The request body is not UTF-8 text; send JSON in UTF-8.")
        })?;
        return parse_py_json(text).map_err(|e| {
            HttpError::invalid_field(
                "non_field_errors",
                format!("Incorrect JSON body: {e}. Send a JSON object of field values."),
            )
        });
    }
    if content_type.starts_with("application/x-www-form-urlencoded") {
        return parse_form(&bytes).ok_or_else(|| {
            HttpError::invalid("A form value is not UTF-8 text; send the form in UTF-8.")
        });
    }
    if content_type.starts_with("multipart/form-data") {
        // The engine reads multipart fields too ([decision: stricter]: not read here).
        return Err(HttpError::invalid(
            "Multipart bodies are not supported by the emulator; send the fields as JSON \
             (Content-Type: application/json).",
        ));
    }
    Ok(PyJson::Dict(Vec::new()))
}

/// Strict mode: a write's keys that name no field of the model are refused (see
/// [`unknown_fields`]); lenient mode ignores them, as the data engine does. An unknown model is
/// left to the write's own `404`.
fn strict_fields(
    state: &AppState,
    names: impl FnOnce() -> Option<Vec<String>>,
    model: &str,
    body: &PyJson,
) -> Result<(), HttpError> {
    if state.lenient() {
        return Ok(());
    }
    match names() {
        Some(names) => Ok(unknown_fields(model, body, &names)?),
        None => Ok(()),
    }
}

/// `GET`: one page (the envelope), or every record with `_no_pagination`.
async fn list(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
) -> Result<Response, HttpError> {
    // An unknown model is a 404 whatever the query says.
    if !db.has_model(&model) {
        return Err(db.reply(EngineError::ModelNotFound(model)));
    }
    let pairs = query_pairs(uri.query());
    let spec = list_spec(&pairs, state.lenient());
    let url = list_url(&state, &uri);
    let listing = db.list(model, spec).await?;
    Ok(json_bytes(StatusCode::OK, list_body(listing, &url, &pairs)))
}

/// `POST`: `201` with the stored record. Of the query, only `tz` counts (refused where the
/// engine would set it: `svc_engine::time_zone`).
async fn create(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    if db.sets_time_zone()
        && tz_of(&selection(&query_pairs(uri.query()), state.lenient())).is_some()
    {
        return Err(db.reply(tz_on_write()));
    }
    let fields = engine_body(&headers, body).await?;
    strict_fields(&state, || db.field_names(&model), &model, &fields)?;
    let bytes = db.create(model, fields, state.lenient()).await?;
    Ok(json_bytes(StatusCode::CREATED, bytes))
}

/// `GET .../{pk}`; the list filters of the query apply, as on the engine.
async fn retrieve(
    State(state): State<AppState>,
    RecordAccess { db, model, pk }: RecordAccess,
    uri: Uri,
) -> Result<Response, HttpError> {
    let selection = selection(&query_pairs(uri.query()), state.lenient());
    let bytes = db.retrieve(model, pk, selection).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// `PATCH` and `PUT .../{pk}`: `200` with the whole updated record. On SQLite the engine's
/// `PUT` is partial too; on PostgreSQL it needs the required columns.
async fn update(
    State(state): State<AppState>,
    RecordAccess { db, model, pk }: RecordAccess,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let fields = engine_body(&headers, body).await?;
    strict_fields(&state, || db.field_names(&model), &model, &fields)?;
    let selection = selection(&query_pairs(uri.query()), state.lenient());
    let partial = method != Method::PUT;
    let bytes = db.update(model, pk, fields, selection, partial).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// `DELETE .../{pk}`: `204`, no body.
async fn delete(
    State(state): State<AppState>,
    RecordAccess { db, model, pk }: RecordAccess,
    uri: Uri,
) -> Result<Response, HttpError> {
    let selection = selection(&query_pairs(uri.query()), state.lenient());
    db.delete(model, pk, selection).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST .../aggregate` with `{"func", "column"?}`; list filters come from the query.
async fn aggregate_post(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
    body: Body,
) -> Result<Response, HttpError> {
    let request =
        AggregateRequest::from_json(&Value::Object(json_object(body, BodyLimit::DATA).await?))?;
    let selection = selection(&query_pairs(uri.query()), state.lenient());
    let value = db.aggregate(model, request, selection).await?;
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
    let value = db.aggregate(model, request, selection).await?;
    json_value(StatusCode::OK, &value)
}

/// `POST .../group` with `{"x_column", "x_lookup"?, "y_func", "y_column"?}`.
async fn group_post(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
    body: Body,
) -> Result<Response, HttpError> {
    let request =
        GroupRequest::from_json(&Value::Object(json_object(body, BodyLimit::DATA).await?))?;
    let selection = selection(&query_pairs(uri.query()), state.lenient());
    let value = db.group(model, request, selection).await?;
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
    let value = db.group(model, request, selection).await?;
    json_value(StatusCode::OK, &value)
}
