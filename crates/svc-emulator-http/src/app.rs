//! Extractors of the application host: the path is read and the credentials checked before the
//! handler runs, so that handlers of projects, page settings and the HTTP proxy never see
//! `Path` or `HeaderMap`.
//!
//! Order, as on every route: a path segment that does not percent-decode to UTF-8 -> `404`;
//! then the checks of [`auth`] (`401`, `403`, then an unknown environment -> `404`).

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use serde_json::Value;

use crate::auth::{self, Credential};
use crate::{AppState, HttpError};
use svc_emulator_state::config::registry::ProjectEntry;
use svc_emulator_state::storage::EnvScope;

/// A request on one project (`/projects/{project}/`) with `Bearer <API key>` of that project.
#[derive(Debug)]
pub struct ProjectAccess {
    /// The project.
    pub project: ProjectEntry,
}

impl FromRequestParts<AppState> for ProjectAccess {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let Path(project) = Path::<String>::from_request_parts(parts, state).await?;
        let entry = auth::authorize_project(state.registry(), &parts.headers, &project)?;
        Ok(Self {
            project: entry.clone(),
        })
    }
}

/// A request on one environment of a project (`/projects/{project}/{environment}/...`), checked
/// like [`ProjectAccess`], then the environment must exist (`404`).
#[derive(Debug)]
pub struct EnvironmentAccess {
    /// The project and environment.
    pub scope: EnvScope,
}

impl FromRequestParts<AppState> for EnvironmentAccess {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let Path((project, environment)) =
            Path::<(String, String)>::from_request_parts(parts, state).await?;
        let scope = env_scope(state, parts, &project, &environment)?;
        Ok(Self { scope })
    }
}

/// A request on one page (`/projects/{project}/{environment}/view_settings/{uid}/`), checked like
/// [`EnvironmentAccess`].
#[derive(Debug)]
pub struct PageAccess {
    /// The project and environment.
    pub scope: EnvScope,
    /// The page's uid, as the path carries it.
    pub uid: String,
}

impl FromRequestParts<AppState> for PageAccess {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let Path((project, environment, uid)) =
            Path::<(String, String, String)>::from_request_parts(parts, state).await?;
        let scope = env_scope(state, parts, &project, &environment)?;
        Ok(Self { scope, uid })
    }
}

fn env_scope(
    state: &AppState,
    parts: &Parts,
    project: &str,
    environment: &str,
) -> Result<EnvScope, HttpError> {
    let (project, environment) =
        auth::authorize_environment(state.registry(), &parts.headers, project, environment)?;
    Ok(EnvScope {
        project: project.name.as_str().to_owned(),
        environment: environment.as_str().to_owned(),
    })
}

/// A caller of the HTTP proxy: the project of its `JWT` credential, a valid access or service
/// token, else `401`.
#[derive(Debug)]
pub struct ProxyCaller {
    /// The project's name.
    pub project: String,
}

impl FromRequestParts<AppState> for ProxyCaller {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, HttpError> {
        let Some(Credential::Jwt(token)) = auth::credential(&parts.headers) else {
            return Err(HttpError::not_authenticated());
        };
        // The claim only says which project's check to run; the check verifies the signature.
        let project = claimed_project(token).ok_or_else(HttpError::not_authenticated)?;
        state
            .accounts()
            .verify_access(&project, token)
            .ok_or_else(HttpError::not_authenticated)?;
        Ok(Self { project })
    }
}

fn claimed_project(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = svc_engine::base64::base64url_decode(payload)?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims.get("project")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claimed_project_reads_the_payload() {
        // {"project":"demo"} in base64url.
        let token = format!("e30.{}.sig", "eyJwcm9qZWN0IjoiZGVtbyJ9");
        assert_eq!(claimed_project(&token).as_deref(), Some("demo"));
        assert_eq!(claimed_project("nope"), None);
        assert_eq!(claimed_project("a.!!!.c"), None);
    }
}
