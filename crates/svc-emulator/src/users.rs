//! Users (docs/contract.md 5.3): the model `users` of the built-in tools resource `__svc_app__`,
//! one SQLite database per project.
//!
//! The handlers check what docs/contract.md 5.3 says a client may send, then hand the rest to the records
//! engine, which gives lists (paging, filters, ordering, `_no_pagination`), uniqueness and
//! foreign key errors exactly as for records.
//!
//! Choices where the contract is silent:
//! - Create takes `email`, `group`, `first_name`, `last_name`; other keys are ignored (as record
//!   creates ignore unknown keys). The server sets `uid` (a UUID v4) and `date_add` (RFC 3339
//!   UTC, strictly increasing within one emulator).
//! - `email` must look like an address (one `@`, a dotted domain, no spaces, at most 254
//!   characters) and is unique ignoring ASCII case.
//! - Update (`PATCH`) may hold `group` only; any other key is a `400` naming it, and an empty
//!   object changes nothing.
//! - Lists are ordered newest user first (`-date_add`) unless `_order_by` says otherwise.
//! - No users are seeded.

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};
use svc_model::users::USERS_MODEL;

use crate::databases::ToolsStore;
use svc_emulator_http::AppState;
use svc_emulator_http::HttpError;
use svc_emulator_http::extract::{BodyLimit, blocking, json_bytes, json_object};
use svc_emulator_http::serve;
use svc_emulator_http::tools::{self, ToolsAccess, ToolsRecordAccess};
use svc_model::routes;

/// Users: static routes for `__svc_app__`, which win over the records routes.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    let router = serve(router, &routes::LIST_USERS, list);
    let router = serve(router, &routes::CREATE_USER, create);
    let router = serve(router, &routes::GET_USER, retrieve);
    let router = serve(router, &routes::UPDATE_USER, update);
    serve(router, &routes::DELETE_USER, delete)
}

/// Whether `email` looks like an address: one `@`, a non-empty local part, a domain of
/// non-empty dot-separated labels with at least one dot, no whitespace or control characters.
fn valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    email.chars().count() <= 254
        && !local.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && domain.split('.').all(|label| !label.is_empty())
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// `GET .../__svc_app__/models/users`.
async fn list(
    State(state): State<AppState>,
    ToolsAccess { db }: ToolsAccess,
    uri: Uri,
) -> Result<Response, HttpError> {
    tools::list(&state, db, &uri, USERS_MODEL, "-date_add").await
}

/// `POST .../__svc_app__/models/users`: `201` with the user.
async fn create(
    State(state): State<AppState>,
    ToolsAccess { db }: ToolsAccess,
    body: Body,
) -> Result<Response, HttpError> {
    let body = json_object(body, BodyLimit::DATA).await?;
    let mut user = Map::new();
    for key in ["email", "group", "first_name", "last_name"] {
        if let Some(value) = body.get(key) {
            user.insert(key.to_owned(), value.clone());
        }
    }
    if let Some(Value::String(email)) = user.get("email")
        && !valid_email(email)
    {
        return Err(HttpError::invalid_field(
            "email",
            "Enter a valid email address.",
        ));
    }
    let store = state.store().clone();
    let db = ToolsStore::of(db)?;
    let bytes = blocking(move || {
        let date_add = store.run_blocking(|_, clock| Ok(clock.next()))?;
        user.insert(
            "uid".to_owned(),
            Value::String(uuid::Uuid::new_v4().to_string()),
        );
        user.insert("date_add".to_owned(), Value::String(date_add));
        Ok(db.create(USERS_MODEL, &Value::Object(user))?)
    })
    .await?;
    Ok(json_bytes(StatusCode::CREATED, bytes))
}

/// `GET .../__svc_app__/models/users/{uid}`.
async fn retrieve(
    ToolsRecordAccess { db, pk: uid }: ToolsRecordAccess,
) -> Result<Response, HttpError> {
    tools::retrieve(db, uid, USERS_MODEL).await
}

/// `PATCH .../__svc_app__/models/users/{uid}`: only `group`.
async fn update(
    ToolsRecordAccess { db, pk: uid }: ToolsRecordAccess,
    body: Body,
) -> Result<Response, HttpError> {
    let body = json_object(body, BodyLimit::DATA).await?;
    tools::only(&body, "group")?;
    let db = ToolsStore::of(db)?;
    let bytes = blocking(move || Ok(db.update(USERS_MODEL, &uid, &Value::Object(body))?)).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// `DELETE .../__svc_app__/models/users/{uid}`: `204`.
async fn delete(
    ToolsRecordAccess { db, pk: uid }: ToolsRecordAccess,
) -> Result<Response, HttpError> {
    let db = ToolsStore::of(db)?;
    blocking(move || Ok(db.delete(USERS_MODEL, &uid)?)).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emails() {
        for ok in [
            "a@b.co",
            "Zoë.O'Brien+x@exämple.org",
            "x@sub.domain.example",
        ] {
            assert!(valid_email(ok), "{ok}");
        }
        for bad in [
            "", "a", "@b.co", "a@", "a@b", "a@@b.co", "a@b..co", "a b@c.de", "a@b.co ", "a@.co",
        ] {
            assert!(!valid_email(bad), "{bad}");
        }
    }
}
