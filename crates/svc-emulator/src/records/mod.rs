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

use axum::extract::Request;
use axum::middleware::Next;
use axum::routing::get;
use svc_emulator_http::AppState;
use svc_emulator_http::HttpError;
use svc_emulator_http::extract::{
    BodyLimit, MAX_JSON_VALUES, ModelAccess, RecordAccess, json_bytes, json_object, json_value,
    json_values_over, read_body,
};
use svc_emulator_http::list::list_url;
use svc_emulator_http::{route_with_optional_slash, serve};
use svc_engine::Selection;
use svc_engine::body::incoming::{self, BodyHeaders, BodyRead, Resolved};
use svc_engine::body::unknown_fields;
use svc_engine::body_filters::{
    METHOD_OVERRIDE_HEADER, METHOD_OVERRIDE_HEADER_UNDERSCORED, body_filters, method_seen,
    reads_body_filters, skips_credentials,
};
use svc_engine::declared::order_values;
use svc_engine::forms::RequestForm;
use svc_engine::python::json::PyJson;
use svc_engine::request::{
    list_body, list_spec, list_spec_with_body, query_pairs, selection, selection_with_body,
};
use svc_engine::time_zone::{tz_of, tz_on_write};
use svc_engine::types::ModelInfo;
use svc_engine::{AggregateRequest, EngineError, GroupRequest};
use svc_model::routes;

mod extra;
mod unrouted;

/// The records routes, on the data host, with the refusal of `X-HTTP-Method-Override:
/// OPTIONS` in front of them ([`refuse_options_override`]).
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    let records = Router::new();
    let records = serve(records, &routes::LIST_RECORDS, list);
    let records = serve(records, &routes::CREATE_RECORD, create);
    let records = serve(records, &routes::LIST_RECORDS_POST, list);
    // The engine registers its view set's extra actions under `get_records` too (its router
    // adds them to every route that is not a record's): the GET forms of aggregate and group.
    let records = route_with_optional_slash(
        records,
        &format!("{}/aggregate", routes::LIST_RECORDS_POST.path()),
        get(aggregate_get),
    );
    let records = route_with_optional_slash(
        records,
        &format!("{}/group", routes::LIST_RECORDS_POST.path()),
        get(group_get),
    );
    let records = serve(records, &routes::AGGREGATE_RECORDS_GET, aggregate_get);
    let records = serve(records, &routes::AGGREGATE_RECORDS, aggregate_post);
    let records = serve(records, &routes::GROUP_RECORDS_GET, group_get);
    let records = serve(records, &routes::GROUP_RECORDS, group_post);
    let records = serve(records, &routes::GET_RECORD, retrieve);
    let records = serve(records, &routes::PATCH_RECORD, update);
    let records = serve(records, &routes::PUT_RECORD, update);
    let records = serve(records, &routes::DELETE_RECORD, delete);
    // The view set's extra actions (bulk_create, reorder, reset_order, get_siblings).
    let records = extra::routes(records);
    // Every other method on the engine's paths, `HEAD` among them, as the engine answers it
    // (`unrouted`).
    let records = unrouted::routes(records);
    router.merge(records.route_layer(axum::middleware::from_fn(refuse_options_override)))
}

/// `X-HTTP-Method-Override: OPTIONS` on a records route: the engine's views take the override
/// as their method, and skip their credential check for `OPTIONS` (`before_dispatch`), so
/// that anyone could read, write and delete records with it. [decision: stricter] Refused
/// (`400`, marked) before credentials are read, in lenient mode too: the emulator does not
/// serve a request without its credentials, and an authenticated caller gains nothing by the
/// override (the engine's views do as without it).
async fn refuse_options_override(request: Request, next: Next) -> Response {
    let seen = method_override(request.headers());
    if seen.as_deref().is_some_and(skips_credentials) {
        return HttpError::invalid_field(
            "X-HTTP-Method-Override",
            "OPTIONS as the method override makes the data engine skip its credential check \
             (anyone could read and write records with it): the emulator refuses it. Leave \
             the header out.",
        )
        .stricter()
        .into_response();
    }
    next.run(request).await
}

/// The override of the request's method, as the engine reads `X-HTTP-Method-Override`: its
/// values joined by `,` (Tornado's joining of a repeated header), the name also spelt with
/// `_` for `-` (Tornado's names are looked up so); of both spellings, the one that comes last.
pub(super) fn method_override(headers: &HeaderMap) -> Option<String> {
    let mut found: Option<(&str, Vec<&str>)> = None;
    for (name, value) in headers {
        let name = name.as_str();
        if name != METHOD_OVERRIDE_HEADER && name != METHOD_OVERRIDE_HEADER_UNDERSCORED {
            continue;
        }
        // A value that is not text reads as nothing the engine compares with.
        let value = value.to_str().unwrap_or("");
        match &mut found {
            Some((seen, values)) if *seen == name => values.push(value),
            _ => found = Some((name, vec![value])),
        }
    }
    found.map(|(_, values)| values.join(","))
}

/// The filters of a request's body, when the engine reads them: the method its views see
/// (the request's, or its override's) is `POST`. Then the body is read as a write's is (JSON,
/// a form, or nothing for another content type), and must be an object. Otherwise `None`, and
/// a JSON body is still parsed, as the engine parses every request's: one that is not JSON is
/// its `400`. `known`: the model exists; the engine looks it up before it reads a filter, so
/// for an unknown model a body that is not an object is left to the view's `404`.
async fn filter_body(
    state: &AppState,
    known: bool,
    method: &Method,
    headers: &HeaderMap,
    body: Body,
) -> Result<Option<Vec<(String, String)>>, HttpError> {
    let override_value = method_override(headers);
    if reads_body_filters(method_seen(method.as_str(), override_value.as_deref())) {
        let fields = engine_body(state, headers, body).await?;
        if !known {
            return Ok(Some(Vec::new()));
        }
        return Ok(Some(body_filters(&fields, state.lenient())?));
    }
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    if json {
        // Parsed only: what the engine fails on or refuses before reading any field.
        read_engine_body(state, headers, body).await?;
    }
    Ok(None)
}

/// The selection of a records request: its query's filters, and its body's where the engine
/// reads them ([`filter_body`]).
pub(super) async fn request_selection(
    state: &AppState,
    known: bool,
    method: &Method,
    headers: &HeaderMap,
    pairs: &[(String, String)],
    body: Body,
) -> Result<Selection, HttpError> {
    Ok(
        match filter_body(state, known, method, headers, body).await? {
            Some(filters) => selection_with_body(pairs, filters, state.lenient()),
            None => selection(pairs, state.lenient()),
        },
    )
}

/// `HEAD` on an extra action's route that takes `GET` (axum would answer it with the `GET`'s
/// head): the data engine fails (500) whatever the credentials ([`unrouted::server_fails`]).
pub(super) async fn head_refused(State(state): State<AppState>) -> HttpError {
    unrouted::server_fails(&state, &Method::HEAD)
}

/// The headers that decide how the engine reads a body ([`BodyHeaders`]), in the order they
/// came.
fn body_headers(headers: &HeaderMap) -> BodyHeaders {
    BodyHeaders::read(
        headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_bytes())),
    )
}

/// Reads a body as the data engine's `Request` reads it (`svc_engine::body::incoming`): JSON
/// (Python's `json.loads`, so `NaN` and big integers too) when its content type starts with
/// `application/json`, an empty JSON body being `{}`; a form or a multipart body as Tornado
/// reads them (their fields; files are not fields); with any other content type no field at
/// all. A JSON body the engine fails on (not UTF-8, nested too deeply) is its `500` in lenient
/// mode and a marked `400` in strict mode; one that is not JSON is its `400`.
pub(super) async fn read_engine_body(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<BodyRead, HttpError> {
    let headers = body_headers(headers);
    let bytes = read_body(body, BodyLimit::DATA).await?;
    // [decision: stricter] A body of more values than any record has is refused before it is
    // parsed (each parsed value costs tens of bytes).
    if headers.is_json() && json_values_over(&bytes, MAX_JSON_VALUES) {
        return Err(HttpError::invalid(format!(
            "The request body holds more than {MAX_JSON_VALUES} JSON values; a record is one \
             object of field values."
        ))
        .stricter());
    }
    Ok(incoming::read(&headers, &bytes, state.lenient())?)
}

/// `request.data` of a request whose body is read without a model (filters in a body): see
/// [`BodyRead::into_data`].
async fn engine_body(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<PyJson, HttpError> {
    let read = read_engine_body(state, headers, body).await?;
    Ok(read.into_data(state.lenient())?)
}

/// A create's or update's body, read as the engine reads it ([`read_engine_body`]), settled
/// with the model's fields (`described`: `None` when there is no such model;
/// [`BodyRead::resolve`]), then strict mode's check of its keys ([`strict_fields`]).
fn write_body(
    state: &AppState,
    model: &str,
    described: Option<ModelInfo>,
    read: BodyRead,
) -> Result<Resolved, HttpError> {
    let fields = described.map(|m| m.fields);
    let resolved = read.resolve(fields.as_deref(), state.lenient())?;
    let names = || Some(fields?.into_iter().map(|f| f.name).collect());
    strict_fields(state, names, model, &resolved.body)?;
    Ok(resolved)
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

/// `GET`: one page (the envelope), or every record with `_no_pagination`; `POST
/// .../get_records` (or a `GET` whose `X-HTTP-Method-Override` is `POST`): the same list, its
/// filters read from the body first. The links repeat the request's URL and query.
async fn list(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let pairs = query_pairs(uri.query());
    let filters = filter_body(&state, db.has_model(&model), &method, &headers, body).await?;
    // An unknown model is a 404 whatever the query says.
    if !db.has_model(&model) {
        return Err(db.reply(EngineError::ModelNotFound(model)));
    }
    let spec = match filters {
        Some(filters) => list_spec_with_body(&pairs, filters, state.lenient()),
        None => list_spec(&pairs, state.lenient()),
    };
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
    let read = read_engine_body(&state, &headers, body).await?;
    let written = write_body(&state, &model, db.describe(&model), read)?;
    let bytes = db.create(model, written.body, state.lenient()).await?;
    // Lenient mode: where the engine writes and then fails, so does the emulator.
    if let Some(failure) = written.fails_after_write {
        return Err(failure.into());
    }
    Ok(json_bytes(StatusCode::CREATED, bytes))
}

/// `GET .../{pk}`; the list filters of the query apply, as on the engine (and the body's, with
/// `X-HTTP-Method-Override: POST`).
async fn retrieve(
    State(state): State<AppState>,
    RecordAccess { db, model, pk }: RecordAccess,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let pairs = query_pairs(uri.query());
    let selection = request_selection(
        &state,
        db.has_model(&model),
        &method,
        &headers,
        &pairs,
        body,
    )
    .await?;
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
    let override_value = method_override(&headers);
    let filters_in_body =
        reads_body_filters(method_seen(method.as_str(), override_value.as_deref()));
    // [decision: stricter] With `X-HTTP-Method-Override: POST` the engine reads the body's
    // fields as filters too: the record is found only where it already holds the new values.
    if filters_in_body && !state.lenient() {
        return Err(HttpError::invalid_field(
            "X-HTTP-Method-Override",
            "POST as the method override of an update makes the data engine read the body's \
             fields as filters too (the record is updated only where it already holds the new \
             values): the emulator refuses it. Leave the header out.",
        )
        .stricter());
    }
    // The engine parses the body with the request, before its view runs.
    let read = read_engine_body(&state, &headers, body).await?;
    let pairs = query_pairs(uri.query());
    let written = match write_body(&state, &model, db.describe(&model), read) {
        Ok(written) => written,
        // Its update looks the record up (`get_object`, the request's filters read as a list
        // reads them) before its serializer reads a field: where no record is selected, its
        // `404` (or a filter's refusal) is the answer, not what the emulator refuses of the
        // body. The body's filters (`X-HTTP-Method-Override: POST`, lenient mode) are in the
        // body refused.
        Err(refused) => {
            if !filters_in_body {
                db.retrieve(model, pk, selection(&pairs, state.lenient()))
                    .await?;
            }
            return Err(refused);
        }
    };
    let fields = written.body;
    let selection = if filters_in_body {
        selection_with_body(&pairs, body_filters(&fields, true)?, true)
    } else {
        selection(&pairs, state.lenient())
    };
    let partial = method != Method::PUT;
    let bytes = db.update(model, pk, fields, selection, partial).await?;
    if let Some(failure) = written.fails_after_write {
        return Err(failure.into());
    }
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// `DELETE .../{pk}`: `204`, no body.
async fn delete(
    State(state): State<AppState>,
    RecordAccess { db, model, pk }: RecordAccess,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let pairs = query_pairs(uri.query());
    let selection = request_selection(
        &state,
        db.has_model(&model),
        &method,
        &headers,
        &pairs,
        body,
    )
    .await?;
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

/// `GET .../aggregate?_y_func=&_y_column=&{filters}`: the engine's GET form (also under
/// `get_records`, as the engine routes it).
async fn aggregate_get(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let pairs = query_pairs(uri.query());
    let mut request = AggregateRequest::from_query(&pairs)?;
    let selection = request_selection(
        &state,
        db.has_model(&model),
        &method,
        &headers,
        &pairs,
        body,
    )
    .await?;
    request.order_by = order_values(&selection);
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

/// `GET .../group?_x_column=&_x_lookup=&_y_func=&_y_column=&{filters}` (also under
/// `get_records`).
async fn group_get(
    State(state): State<AppState>,
    ModelAccess { db, model }: ModelAccess,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, HttpError> {
    let pairs = query_pairs(uri.query());
    let mut request = GroupRequest::from_query(&pairs)?;
    let selection = request_selection(
        &state,
        db.has_model(&model),
        &method,
        &headers,
        &pairs,
        body,
    )
    .await?;
    request.order_by = order_values(&selection);
    let value = db.group(model, request, selection).await?;
    json_value(StatusCode::OK, &value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn override_of(headers: &[(&'static str, &'static str)]) -> Option<String> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(*name, HeaderValue::from_static(value));
        }
        method_override(&map)
    }

    /// As Tornado hands the engine its headers (checked on the running engine): a repeated
    /// header's values joined by `,`, the `_` spelling read too, the later spelling winning.
    #[test]
    fn the_override_is_read_as_tornado_reads_its_headers() {
        assert_eq!(override_of(&[]), None);
        assert_eq!(
            override_of(&[("x-http-method-override", "POST")]).as_deref(),
            Some("POST")
        );
        assert_eq!(
            override_of(&[
                ("x-http-method-override", "POST"),
                ("x-http-method-override", "POST")
            ])
            .as_deref(),
            Some("POST,POST")
        );
        assert_eq!(
            override_of(&[("x_http_method_override", "POST")]).as_deref(),
            Some("POST")
        );
        assert_eq!(
            override_of(&[
                ("x-http-method-override", "POST"),
                ("x_http_method_override", "GET")
            ])
            .as_deref(),
            Some("GET")
        );
        assert_eq!(
            override_of(&[
                ("x_http_method_override", "GET"),
                ("x-http-method-override", "POST")
            ])
            .as_deref(),
            Some("POST")
        );
    }
}
