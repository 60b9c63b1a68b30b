//! Routes of the account methods: `/projects/{project}/{environment}/auth/...` on the data
//! host, and the emulator-only `/_emulator/projects/{project}/{outbox,service_token,stats}`
//! the request journal's `/_emulator/projects/{project}/requests` (`requests.rs`) and the
//! stubs' `/_emulator/projects/{project}/stubs` (`stubs.rs`).

mod requests;
mod stubs;

use axum::body::Body;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use svc_emulator_http::AppState;
use svc_emulator_http::HttpError;
use svc_emulator_http::auth::{self, Credential};
use svc_emulator_http::extract::{BodyLimit, json_object};
use svc_emulator_http::routes as control;
use svc_emulator_http::serve;
use svc_emulator_state::sessions::{Claims, Refusal, Register, TokenType};
use svc_model::routes;

type ProjectPath = Result<Path<String>, PathRejection>;

pub(crate) fn router() -> Router<AppState> {
    let router = Router::new();
    let router = serve(router, &routes::LOGIN, login);
    let router = serve(router, &routes::REFRESH, refresh);
    let router = serve(router, &routes::CURRENT_USER, user);
    let router = serve(router, &routes::REGISTER, register);
    let router = serve(router, &routes::CHANGE_PASSWORD, change_password);
    let router = serve(router, &routes::RESET_PASSWORD, reset_password);
    let router = serve(
        router,
        &routes::RESET_PASSWORD_COMPLETE,
        reset_password_complete,
    );
    let router = serve(router, &routes::CHANGE_EMAIL, change_email);
    serve(
        router,
        &routes::CHANGE_EMAIL_COMPLETE,
        change_email_complete,
    )
}

/// Emulator-only routes, authorized by the project's API key.
pub(crate) fn emulator_router() -> Router<AppState> {
    let router = Router::new();
    let router = serve(router, &control::OUTBOX, outbox);
    let router = serve(router, &control::SERVICE_TOKEN, service_token);
    let router = serve(router, &control::STATS, stats);
    let router = requests::routes(router);
    stubs::routes(router)
}

/// The path must name a served project and one of its environments (no credentials needed
/// for the unauthenticated methods).
fn project_of(state: &AppState, project: &str, environment: &str) -> Result<String, HttpError> {
    let entry = state
        .registry()
        .project(project)
        .ok_or_else(|| HttpError::not_found("Project not found."))?;
    entry
        .environment(environment)
        .ok_or_else(|| HttpError::not_found("Environment not found."))?;
    Ok(entry.name.as_str().to_owned())
}

/// The user behind `Authorization: JWT <access token>`.
fn session(state: &AppState, headers: &HeaderMap, project: &str) -> Result<Claims, HttpError> {
    jwt_claims(state, headers, project, &[TokenType::Access])
}

/// The claims of the request's `JWT`, a token of one of `types`: `401` without one, or when it is
/// invalid, expired or of another type; `403` when it is a valid token of another project
/// (docs/contract.md section 3: valid credentials for another project).
fn jwt_claims(
    state: &AppState,
    headers: &HeaderMap,
    project: &str,
    types: &[TokenType],
) -> Result<Claims, HttpError> {
    let Some(Credential::Jwt(token)) = auth::credential(headers) else {
        return Err(HttpError::not_authenticated());
    };
    let claims = state
        .accounts()
        .verify_any(token)
        .filter(|c| types.contains(&c.typ))
        .ok_or_else(HttpError::not_authenticated)?;
    if claims.project != project {
        return Err(HttpError::permission_denied());
    }
    Ok(claims)
}

/// The project of an account route (`/projects/{project}/{environment}/auth/...`), checked to
/// exist with that environment.
struct AccountProject(String);

impl axum::extract::FromRequestParts<AppState> for AccountProject {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, HttpError> {
        let Path((project, environment)) =
            Path::<(String, String)>::from_request_parts(parts, state).await?;
        project_of(state, &project, &environment).map(Self)
    }
}

/// An account route called with a valid access token: the project and the user's claims.
struct SignedIn {
    project: String,
    claims: Claims,
}

impl axum::extract::FromRequestParts<AppState> for SignedIn {
    type Rejection = HttpError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, HttpError> {
        let AccountProject(project) = AccountProject::from_request_parts(parts, state).await?;
        let claims = session(state, &parts.headers, &project)?;
        Ok(Self { project, claims })
    }
}

async fn body<T: DeserializeOwned>(body: Body) -> Result<T, HttpError> {
    let map = json_object(body, BodyLimit::ACCOUNT).await?;
    serde_json::from_value(Value::Object(map))
        .map_err(|e| HttpError::invalid(format!("Invalid request body: {e}.")))
}

fn answer(result: Result<Value, Refusal>) -> Response {
    match result {
        Ok(value) => Json(value).into_response(),
        Err(Refusal(errors)) => Json(json!({ "result": false, "errors": errors })).into_response(),
    }
}

#[derive(serde::Deserialize)]
struct Login {
    email: String,
    password: String,
}

async fn login(
    State(state): State<AppState>,
    AccountProject(project): AccountProject,
    raw: Body,
) -> Result<Response, HttpError> {
    let Login { email, password } = body(raw).await?;
    match state.accounts().login(project, email, password).await? {
        Some(value) => Ok(Json(value).into_response()),
        None => Err(HttpError::new(
            axum::http::StatusCode::UNAUTHORIZED,
            svc_model::error_body::codes::NOT_AUTHENTICATED,
            "Unable to log in with the provided credentials.",
        )),
    }
}

#[derive(serde::Deserialize)]
struct Refresh {
    refresh_token: String,
}

async fn refresh(
    State(state): State<AppState>,
    AccountProject(project): AccountProject,
    raw: Body,
) -> Result<Response, HttpError> {
    let Refresh { refresh_token } = body(raw).await?;
    match state.accounts().refresh(project, refresh_token).await? {
        Some(value) => Ok(Json(value).into_response()),
        None => Err(HttpError::new(
            axum::http::StatusCode::UNAUTHORIZED,
            "token_not_valid",
            "The refresh token is not valid, has expired, or has already been used.",
        )),
    }
}

async fn user(
    State(state): State<AppState>,
    headers: HeaderMap,
    AccountProject(project): AccountProject,
) -> Result<Response, HttpError> {
    let claims = jwt_claims(
        &state,
        &headers,
        &project,
        &[TokenType::Access, TokenType::Service],
    )?;
    if claims.typ == TokenType::Service {
        // A service token stands for the service, not a user: answer with that principal.
        return Ok(Json(json!({
            "uid": "service",
            "username": "service",
            "has_password": false,
            "email": null,
            "first_name": null,
            "last_name": null,
        }))
        .into_response());
    }
    match state.accounts().user(project, claims.sub).await? {
        Some(info) => Ok(Json(info).into_response()),
        None => Err(HttpError::not_authenticated()),
    }
}

async fn register(
    State(state): State<AppState>,
    AccountProject(project): AccountProject,
    raw: Body,
) -> Result<Response, HttpError> {
    let request: Register = body(raw).await?;
    let result = state.accounts().register(project, request).await?;
    Ok(answer(
        result.map(|user| json!({ "result": true, "user": user })),
    ))
}

#[derive(serde::Deserialize)]
struct ChangePassword {
    new_password: String,
    #[serde(default)]
    current_password: Option<String>,
}

async fn change_password(
    State(state): State<AppState>,
    SignedIn { project, claims }: SignedIn,
    raw: Body,
) -> Result<Response, HttpError> {
    let ChangePassword {
        new_password,
        current_password,
    } = body(raw).await?;
    let result = state
        .accounts()
        .change_password(project, claims.sub, new_password, current_password)
        .await?;
    Ok(answer(result.map(
        |state| json!({ "result": true, "new_state": state }),
    )))
}

#[derive(serde::Deserialize)]
struct ResetPassword {
    email: String,
}

async fn reset_password(
    State(state): State<AppState>,
    AccountProject(project): AccountProject,
    raw: Body,
) -> Result<Response, HttpError> {
    let ResetPassword { email } = body(raw).await?;
    state.accounts().reset_password(project, email).await?;
    Ok(Json(json!({ "result": true })).into_response())
}

#[derive(serde::Deserialize)]
struct ResetComplete {
    code: String,
    new_password: String,
}

async fn reset_password_complete(
    State(state): State<AppState>,
    AccountProject(project): AccountProject,
    raw: Body,
) -> Result<Response, HttpError> {
    let ResetComplete { code, new_password } = body(raw).await?;
    let result = state
        .accounts()
        .reset_password_complete(project, code, new_password)
        .await?;
    Ok(answer(result.map(
        |state| json!({ "result": true, "new_state": state }),
    )))
}

#[derive(serde::Deserialize)]
struct ChangeEmail {
    new_email: String,
    #[serde(default)]
    current_password: Option<String>,
}

async fn change_email(
    State(state): State<AppState>,
    SignedIn { project, claims }: SignedIn,
    raw: Body,
) -> Result<Response, HttpError> {
    let ChangeEmail {
        new_email,
        current_password,
    } = body(raw).await?;
    let result = state
        .accounts()
        .change_email(project, claims.sub, new_email, current_password)
        .await?;
    Ok(answer(result.map(
        |to| json!({ "result": true, "sent_confirmation_to": to }),
    )))
}

#[derive(serde::Deserialize)]
struct Code {
    code: String,
}

async fn change_email_complete(
    State(state): State<AppState>,
    AccountProject(project): AccountProject,
    raw: Body,
) -> Result<Response, HttpError> {
    let Code { code } = body(raw).await?;
    let result = state
        .accounts()
        .change_email_complete(project, code)
        .await?;
    Ok(answer(result.map(
        |(old, new)| json!({ "result": true, "old_email": old, "new_email": new }),
    )))
}

async fn outbox(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: ProjectPath,
) -> Result<Response, HttpError> {
    let Path(project) = path?;
    let entry = auth::authorize_project(state.registry(), &headers, &project)?;
    let messages = state
        .accounts()
        .outbox(entry.name.as_str().to_owned())
        .await?;
    Ok(Json(messages).into_response())
}

async fn service_token(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: ProjectPath,
) -> Result<Response, HttpError> {
    let Path(project) = path?;
    let entry = auth::authorize_project(state.registry(), &headers, &project)?;
    let (token, expires) = state.accounts().mint_service_token(entry.name.as_str());
    Ok(Json(json!({ "token": token, "expires": expires })).into_response())
}

async fn stats(
    State(state): State<AppState>,
    headers: HeaderMap,
    path: ProjectPath,
) -> Result<Response, HttpError> {
    let Path(project) = path?;
    let entry = auth::authorize_project(state.registry(), &headers, &project)?;
    let refresh_calls = state.accounts().refresh_calls(entry.name.as_str());
    Ok(Json(json!({ "refresh_calls": refresh_calls })).into_response())
}
