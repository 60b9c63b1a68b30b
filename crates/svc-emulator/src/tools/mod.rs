//! Users and teams (docs/contract.md 5.3): the models `users` and `groups` of the built-in tools
//! resource `__svc_app__`, one SQLite database per project.
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
//! - Update (`PATCH`) may hold `group` (users) or `name` (teams) only; any other key is a `400`
//!   naming it, and an empty object changes nothing. A team name must be a non-blank string.
//! - Lists are ordered newest user first (`-date_add`) and teams by `name` unless `_order_by`
//!   says otherwise.
//! - Teams are seeded once per project: Admins, Editors and Viewers, with the fixed uids of
//!   [`SEEDED_TEAMS`](crate::SEEDED_TEAMS). No users are seeded.

use axum::body::Body;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value};
use svc_model::records::wire::ORDER_BY_PARAM;
use svc_model::users::{TEAMS_MODEL, TOOLS_RESOURCE, USERS_MODEL};

use crate::engine::Resource;
use crate::http::AppState;
use crate::http::HttpError;
use crate::http::extract::{
    ToolsAccess, ToolsRecordAccess, blocking, json_bytes, json_object, query_pairs,
};
use crate::http::list::{list_body, list_spec, list_url};
use crate::http::route_with_optional_slash;

/// Users and teams: static routes for `__svc_app__`, which win over the records routes. Teams
/// have no create or delete, so POST and DELETE there are 405.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    let tools_models = format!("/projects/{{project}}/{{environment}}/{TOOLS_RESOURCE}/models");
    let router = route_with_optional_slash(
        router,
        &format!("{tools_models}/{USERS_MODEL}"),
        get(users_list).post(user_create),
    );
    let router = route_with_optional_slash(
        router,
        &format!("{tools_models}/{USERS_MODEL}/{{pk}}"),
        get(user_retrieve).patch(user_update).delete(user_delete),
    );
    let router = route_with_optional_slash(
        router,
        &format!("{tools_models}/{TEAMS_MODEL}"),
        get(teams_list),
    );
    route_with_optional_slash(
        router,
        &format!("{tools_models}/{TEAMS_MODEL}/{{pk}}"),
        get(team_retrieve).patch(team_update),
    )
}

/// A list of `model`, ordered by `default_order` unless the query orders it.
async fn list(
    state: &AppState,
    db: Arc<Resource>,
    uri: &Uri,
    model: &'static str,
    default_order: &'static str,
) -> Result<Response, HttpError> {
    let mut pairs = query_pairs(uri.query());
    if !pairs.iter().any(|(k, _)| k == ORDER_BY_PARAM) {
        pairs.push((ORDER_BY_PARAM.to_owned(), default_order.to_owned()));
    }
    let spec = list_spec(&pairs)?;
    let url = list_url(state, uri);
    let listing = blocking(move || Ok(db.list(model, &spec)?)).await?;
    Ok(json_bytes(StatusCode::OK, list_body(listing, &url, &pairs)))
}

async fn retrieve(
    db: Arc<Resource>,
    uid: String,
    model: &'static str,
) -> Result<Response, HttpError> {
    let bytes = blocking(move || Ok(db.retrieve(model, &uid)?)).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// A `400` naming every key of `body` other than `allowed`.
fn only(body: &Map<String, Value>, allowed: &str) -> Result<(), HttpError> {
    let mut others = body.keys().filter(|k| *k != allowed).peekable();
    if others.peek().is_none() {
        return Ok(());
    }
    let mut error = HttpError::invalid(format!("Only `{allowed}` can be changed."));
    for key in others {
        error = error.with_field(
            key,
            format!("This field cannot be changed: only `{allowed}` can."),
        );
    }
    Err(error)
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
async fn users_list(
    State(state): State<AppState>,
    ToolsAccess { db }: ToolsAccess,
    uri: Uri,
) -> Result<Response, HttpError> {
    list(&state, db, &uri, USERS_MODEL, "-date_add").await
}

/// `POST .../__svc_app__/models/users`: `201` with the user.
async fn user_create(
    State(state): State<AppState>,
    ToolsAccess { db }: ToolsAccess,
    body: Body,
) -> Result<Response, HttpError> {
    let body = json_object(body).await?;
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
async fn user_retrieve(
    ToolsRecordAccess { db, pk: uid }: ToolsRecordAccess,
) -> Result<Response, HttpError> {
    retrieve(db, uid, USERS_MODEL).await
}

/// `PATCH .../__svc_app__/models/users/{uid}`: only `group`.
async fn user_update(
    ToolsRecordAccess { db, pk: uid }: ToolsRecordAccess,
    body: Body,
) -> Result<Response, HttpError> {
    let body = json_object(body).await?;
    only(&body, "group")?;
    let bytes = blocking(move || Ok(db.update(USERS_MODEL, &uid, &Value::Object(body))?)).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
}

/// `DELETE .../__svc_app__/models/users/{uid}`: `204`.
async fn user_delete(
    ToolsRecordAccess { db, pk: uid }: ToolsRecordAccess,
) -> Result<Response, HttpError> {
    blocking(move || Ok(db.delete(USERS_MODEL, &uid)?)).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET .../__svc_app__/models/groups`.
async fn teams_list(
    State(state): State<AppState>,
    ToolsAccess { db }: ToolsAccess,
    uri: Uri,
) -> Result<Response, HttpError> {
    list(&state, db, &uri, TEAMS_MODEL, "name").await
}

/// `GET .../__svc_app__/models/groups/{uid}`.
async fn team_retrieve(
    ToolsRecordAccess { db, pk: uid }: ToolsRecordAccess,
) -> Result<Response, HttpError> {
    retrieve(db, uid, TEAMS_MODEL).await
}

/// `PATCH .../__svc_app__/models/groups/{uid}`: only `name`, not blank.
async fn team_update(
    ToolsRecordAccess { db, pk: uid }: ToolsRecordAccess,
    body: Body,
) -> Result<Response, HttpError> {
    let body = json_object(body).await?;
    only(&body, "name")?;
    match body.get("name") {
        None => {}
        Some(Value::String(name)) if !name.trim().is_empty() => {}
        Some(Value::String(_)) => {
            return Err(HttpError::invalid_field(
                "name",
                "This field may not be blank.",
            ));
        }
        Some(Value::Null) => {
            return Err(HttpError::invalid_field(
                "name",
                "This field may not be null.",
            ));
        }
        Some(_) => return Err(HttpError::invalid_field("name", "Not a valid string.")),
    }
    let bytes = blocking(move || Ok(db.update(TEAMS_MODEL, &uid, &Value::Object(body))?)).await?;
    Ok(json_bytes(StatusCode::OK, bytes))
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

    #[test]
    fn seed_matches_the_seeded_teams() {
        let db = Resource::in_memory(crate::storage::resources::TOOLS_SEED_SQL).unwrap();
        for (uid, name) in crate::SEEDED_TEAMS {
            let team: Value =
                serde_json::from_slice(&db.retrieve(TEAMS_MODEL, uid).unwrap()).unwrap();
            assert_eq!(team["name"], name);
        }
    }
}
