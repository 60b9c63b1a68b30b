//! Page settings (docs/contract.md 4.2):
//! `/projects/{project}/{environment}/view_settings/[{uid}/]`.
//!
//! Every handler checks, in order: the credentials and environment (401/403/404, through the
//! extractors [`EnvironmentAccess`] and [`PageAccess`]), the `draft` query (400), then the body
//! (400), and only then touches the store. The draft rules themselves
//! live in the store, inside one transaction per operation.

use axum::Json;
use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::IgnoredAny;
use serde_json::Value;
use svc_model::PageUid;

use axum::Router;
use svc_emulator_http::AppState;
use svc_emulator_http::HttpError;
use svc_emulator_http::app::{EnvironmentAccess, PageAccess};
use svc_emulator_http::extract::{BodyLimit, json_object, query_values};
use svc_emulator_http::serve;
use svc_emulator_state::storage::{Created, PageSet, StoredPage};
use svc_model::routes;

/// The longest page uid a create accepts, in bytes of UTF-8. Real uids are UUIDs (36 bytes);
/// a much longer one could be stored but, percent-encoded in the path, would make every later
/// request for it too long for the server (`414`): it could never be read or deleted and would
/// stay in every list. 1024 bytes are at most 3 KiB in a path.
pub(crate) const MAX_UID_BYTES: usize = 1024;

/// The page settings routes, on the application host (relative to `/api`).
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    let router = serve(router, &routes::LIST_PAGES, list);
    let router = serve(router, &routes::CREATE_PAGE, create);
    let router = serve(router, &routes::GET_PAGE, get_one);
    let router = serve(router, &routes::UPDATE_PAGE, update);
    serve(router, &routes::DELETE_PAGE, delete)
}

/// `GET .../view_settings/`: every page of the set, by `date_add` then `uid`.
async fn list(
    State(state): State<AppState>,
    EnvironmentAccess { scope }: EnvironmentAccess,
    RawQuery(query): RawQuery,
) -> Result<Response, HttpError> {
    let set = page_set(query.as_deref())?;
    let pages = state.store().list_pages(scope, set).await?;
    let pages: Vec<Value> = pages.into_iter().map(StoredPage::into_json).collect();
    Ok(Json(pages).into_response())
}

/// `POST .../view_settings/`: `201` with the stored page.
async fn create(
    State(state): State<AppState>,
    EnvironmentAccess { scope }: EnvironmentAccess,
    RawQuery(query): RawQuery,
    body: Body,
) -> Result<Response, HttpError> {
    let set = page_set(query.as_deref())?;
    let fields = json_object(body, BodyLimit::PAGES).await?;
    let uid = match fields.get("uid") {
        None => None,
        Some(Value::String(uid)) if uid.len() > MAX_UID_BYTES => {
            return Err(HttpError::invalid_field(
                "uid",
                format!(
                    "Must be at most {MAX_UID_BYTES} bytes long (in UTF-8); page uids are \
                     usually UUIDs (36 characters)."
                ),
            ));
        }
        Some(Value::String(uid)) if PageUid::new(uid.as_str()).is_ok() => Some(uid.clone()),
        Some(_) => {
            return Err(HttpError::invalid_field(
                "uid",
                "Must be a non-empty string other than `.` and `..`.",
            ));
        }
    };
    if let Some(params) = fields.get("params") {
        check_params(params)?;
    }
    match state.store().create_page(scope, set, uid, fields).await? {
        Created::Page(page) => Ok((StatusCode::CREATED, Json(page.into_json())).into_response()),
        Created::UidTaken => Err(HttpError::invalid_field(
            "uid",
            "A page with this uid already exists.",
        )),
    }
}

/// `GET .../view_settings/{uid}/`.
async fn get_one(
    State(state): State<AppState>,
    PageAccess { scope, uid }: PageAccess,
    RawQuery(query): RawQuery,
) -> Result<Response, HttpError> {
    let set = page_set(query.as_deref())?;
    let page = state.store().get_page(scope, set, uid).await?;
    let page = page.ok_or_else(page_not_found)?;
    Ok(Json(page.into_json()).into_response())
}

/// `PATCH .../view_settings/{uid}/`: only `params` may be sent; `200` with the whole page.
async fn update(
    State(state): State<AppState>,
    PageAccess { scope, uid }: PageAccess,
    RawQuery(query): RawQuery,
    body: Body,
) -> Result<Response, HttpError> {
    let set = page_set(query.as_deref())?;
    let mut fields = json_object(body, BodyLimit::PAGES).await?;
    let params = fields.remove("params");
    if !fields.is_empty() {
        let names: Vec<&str> = fields.keys().map(String::as_str).collect();
        let mut error = HttpError::invalid(format!(
            "Only `params` can be updated; unknown fields: {}.",
            names.join(", ")
        ));
        for name in names {
            error = error.with_field(name, "This field cannot be updated.");
        }
        return Err(error);
    }
    let params = params.as_ref().map(check_params).transpose()?;
    let page = state
        .store()
        .update_page_params(scope, set, uid, params)
        .await?;
    let page = page.ok_or_else(page_not_found)?;
    Ok(Json(page.into_json()).into_response())
}

/// `DELETE .../view_settings/{uid}/`: `204` with an empty body.
async fn delete(
    State(state): State<AppState>,
    PageAccess { scope, uid }: PageAccess,
    RawQuery(query): RawQuery,
) -> Result<Response, HttpError> {
    let set = page_set(query.as_deref())?;
    if state.store().delete_page(scope, set, uid).await? {
        Ok(StatusCode::NO_CONTENT.into_response())
    } else {
        Err(page_not_found())
    }
}

/// Query `draft`: `0` (default) or `1`; any other value, the empty one included, is a `400`.
/// When repeated, every value must be valid and the last one counts.
fn page_set(query: Option<&str>) -> Result<PageSet, HttpError> {
    let mut set = PageSet::Published;
    for value in query_values(query, "draft") {
        set = match value.as_str() {
            "0" => PageSet::Published,
            "1" => PageSet::Draft,
            _ => return Err(HttpError::invalid_field("draft", "Must be `0` or `1`.")),
        };
    }
    Ok(set)
}

/// `params` must be a string holding valid JSON.
fn check_params(params: &Value) -> Result<String, HttpError> {
    match params {
        Value::String(text) if serde_json::from_str::<IgnoredAny>(text).is_ok() => Ok(text.clone()),
        Value::String(_) => Err(HttpError::invalid_field(
            "params",
            "Must be a string holding valid JSON.",
        )),
        _ => Err(HttpError::invalid_field(
            "params",
            "Must be a string (of JSON text), not a JSON value.",
        )),
    }
}

fn page_not_found() -> HttpError {
    HttpError::not_found("Page not found.")
}
