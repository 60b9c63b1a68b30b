//! The records routes of the data engine's extra actions (`@action`s of its model view set,
//! which its router registers as `models/{model}/{action}/` and, for a record's,
//! `models/{model}/{pk}/{action}/`; docs/contract.md 5.1): `bulk_create`, `reorder`,
//! `reset_order` (also below `get_records`, as the engine's router adds them to every route
//! that is not a record's) and `get_siblings`. The bodies and answers are
//! `svc_engine::extra_actions`; the databases run them in `flow::extra`.
//!
//! The other methods on these paths are answered with every other unrouted method
//! (`super::unrouted`), but `HEAD`, refused here as on every records route.

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use axum::routing::{head, post};
use serde_json::Value;

use svc_emulator_http::extract::{
    BodyLimit, MAX_JSON_VALUES, ModelAccess, RecordAccess, json_value, json_values_over, read_body,
};
use svc_emulator_http::{AppState, HttpError, route_with_optional_slash, serve};
use svc_engine::EngineError;
use svc_engine::body::incoming::{self, BodyHeaders, ENGINE_JSON_DEPTH};
use svc_engine::body::unknown_fields;
use svc_engine::body_filters::{body_filters, method_seen, reads_body_filters};
use svc_engine::extra_actions::{Created, NOT_AN_ARRAY, Reorder, ResetOrder};
use svc_engine::python::json::{PyJson, read_py_json_bytes};
use svc_engine::request::{query_pairs, selection, selection_with_body};
use svc_engine::time_zone::{tz_of, tz_on_write};
use svc_model::routes;

use super::{head_refused, method_override, read_engine_body, request_selection};

/// The extra actions' routes, added to the records routes (behind their refusal of
/// `X-HTTP-Method-Override: OPTIONS`), each with its refusal of `HEAD`; the other methods on
/// their paths are `super::unrouted`'s.
pub(super) fn routes(records: Router<AppState>) -> Router<AppState> {
    let records = serve(records, &routes::BULK_CREATE_RECORDS, bulk_create);
    let records = serve(records, &routes::REORDER_RECORDS, reorder);
    let records = serve(records, &routes::RESET_RECORDS_ORDER, reset_order);
    let records = serve(records, &routes::GET_RECORD_SIBLINGS, siblings);
    let under_get_records = |action: &str| format!("{}/{action}", routes::LIST_RECORDS_POST.path());
    let records = route_with_optional_slash(
        records,
        &under_get_records("bulk_create"),
        post(bulk_create).head(head_refused),
    );
    let records = route_with_optional_slash(
        records,
        &under_get_records("reorder"),
        post(reorder).head(head_refused),
    );
    let records = route_with_optional_slash(
        records,
        &under_get_records("reset_order"),
        post(reset_order).head(head_refused),
    );
    [
        &routes::BULK_CREATE_RECORDS,
        &routes::REORDER_RECORDS,
        &routes::RESET_RECORDS_ORDER,
        &routes::GET_RECORD_SIBLINGS,
    ]
    .into_iter()
    .fold(records, |records, route| {
        route_with_optional_slash(records, route.path(), head(head_refused))
    })
}

/// `POST .../bulk_create` with an array: `200` with what became of each item, in order
/// (`{"success": true}`, or `{"success": false, "errors": ...}` as a create's `400` names the
/// fields); each item is created as a create's body is, and committed on its own. A body that is
/// not an array is the engine's `400`; an empty array answers `[]` whatever the model.
async fn bulk_create(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let lenient = state.lenient();
    let read_as = BodyHeaders::read(
        headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_bytes())),
    );
    let bytes = read_body(body, BodyLimit::DATA).await?;
    // [decision: stricter] As a create's: a body of more values than the emulator parses.
    if read_as.is_json() && json_values_over(&bytes, MAX_JSON_VALUES) {
        return Err(HttpError::invalid(format!(
            "The request body holds more than {MAX_JSON_VALUES} JSON values: send the records \
             in several bulk_create requests."
        ))
        .stricter());
    }
    let data = incoming::read(&read_as, &bytes, lenient)?.into_data(lenient)?;
    let PyJson::List(items) = data else {
        return Err(HttpError::invalid(NOT_AN_ARRAY));
    };
    // [decision: stricter] A lone surrogate inside an item, which no Rust string holds: the
    // engine keeps it (and fails on it in a text column).
    if read_as.is_json()
        && read_py_json_bytes(&bytes, ENGINE_JSON_DEPTH).is_ok_and(|r| r.surrogates)
    {
        return Err(EngineError::stricter(
            "non_field_errors",
            "An item holds a lone UTF-16 surrogate (\\ud800 without its pair), which the \
             emulator cannot hold as text (the data engine fails on one in a text column). Send \
             whole characters.",
        )
        .into());
    }
    if db.sets_time_zone() && tz_of(&selection(&query_pairs(uri.query()), lenient)).is_some() {
        return Err(db.reply(tz_on_write()));
    }
    if items.is_empty() {
        return json_value(StatusCode::OK, &Value::Array(Vec::new()));
    }
    if !db.has_model(&model) {
        return Err(db.reply(EngineError::ModelNotFound(model)));
    }
    // Strict mode: an item's key that names no field is refused, as a create's is.
    if !lenient && let Some(names) = db.field_names(&model) {
        for (at, item) in items.iter().enumerate() {
            unknown_fields(&model, item, &names).map_err(|e| match e {
                EngineError::Invalid {
                    message, fields, ..
                } => EngineError::Invalid {
                    message: format!("Item {at} of the array: {message}"),
                    fields,
                    stricter: true,
                },
                other => other,
            })?;
        }
    }
    let created = db.bulk_create(model, items, lenient).await?;
    let answer: Vec<Value> = created.iter().map(Created::json).collect();
    json_value(StatusCode::OK, &Value::Array(answer))
}

/// `POST .../reorder`: the validated body (`200`), once the ordering column's values are moved.
async fn reorder(
    State(state): State<AppState>,
    access: ModelAccess,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let fields = &Reorder::FIELDS;
    move_records(&state, access, &method, &uri, &headers, body, fields, false).await
}

/// `POST .../reset_order`: the validated body (`200`), once the selected records are numbered.
async fn reset_order(
    State(state): State<AppState>,
    access: ModelAccess,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let fields = &ResetOrder::FIELDS;
    move_records(&state, access, &method, &uri, &headers, body, fields, true).await
}

/// `reorder` and `reset_order`: the body is the serializer's, and where the method the engine's
/// views see is `POST` (theirs, unless overridden) its filters too, read first and the query's
/// after, as every view reads them. The serializer's own keys (`fields`) are no filter unless
/// they name a column, where the engine reads them as both: refused in strict mode
/// ([decision: stricter]).
#[allow(clippy::too_many_arguments)]
async fn move_records(
    state: &AppState,
    ModelAccess { db, model }: ModelAccess,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: Body,
    fields: &[&str],
    reset: bool,
) -> Result<Response, HttpError> {
    let lenient = state.lenient();
    let data = read_engine_body(state, headers, body)
        .await?
        .into_data(lenient)?;
    if !db.has_model(&model) {
        return Err(db.reply(EngineError::ModelNotFound(model)));
    }
    let pairs = query_pairs(uri.query());
    let override_value = method_override(headers);
    let selection = if reads_body_filters(method_seen(method.as_str(), override_value.as_deref())) {
        let names = db.field_names(&model).unwrap_or_default();
        let filters = match &data {
            PyJson::Dict(items) => {
                let mut kept = Vec::with_capacity(items.len());
                for (key, value) in items {
                    let serializer = fields.contains(&key.as_str());
                    let column = names.iter().any(|n| n == key);
                    if serializer && column && !lenient && *value != PyJson::None {
                        return Err(EngineError::stricter(
                            key.clone(),
                            format!(
                                "{key} is a field of the action's body and a column of {model}: \
                                 the data engine reads it as a filter too (the records are \
                                 selected where {key} holds that value). Send the filter \
                                 {key}__exact in the query if that is meant, and rename the \
                                 column otherwise."
                            ),
                        )
                        .into());
                    }
                    if !serializer || column {
                        kept.push((key.clone(), value.clone()));
                    }
                }
                PyJson::Dict(kept)
            }
            other => other.clone(),
        };
        selection_with_body(&pairs, body_filters(&filters, lenient)?, lenient)
    } else {
        selection(&pairs, lenient)
    };
    let answer = db.reorder(model, data, selection, reset).await?;
    json_value(StatusCode::OK, &answer)
}

/// `GET .../{pk}/get_siblings`: `{"prev": {KEY: value} | null, "next": ...}`, the keys of the
/// records before and after it in the list's order (the list's filters and `_order_by`), or
/// `{}` past 10 000 records; `404` when the filters do not select the record.
async fn siblings(
    State(state): State<AppState>,
    RecordAccess { db, model, pk }: RecordAccess,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let pairs = query_pairs(uri.query());
    let known = db.has_model(&model);
    let selection = request_selection(&state, known, &method, &headers, &pairs, body).await?;
    let answer = db.siblings(model, pk, selection).await?;
    json_value(StatusCode::OK, &answer)
}
