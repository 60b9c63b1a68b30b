//! Credentials: reading the `Authorization` header and the checks of docs/contract.md section 3.
//!
//! Order of the checks, the same on every route: no credentials or unknown ones -> `401`;
//! credentials of another project or resource -> `403` (also when the named project does not
//! exist, so that a key never learns which projects exist); then an unknown environment or
//! resource of the authorized project -> `404`.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use svc_model::EnvironmentName;

use crate::HttpError;
use svc_emulator_state::config::projects::ResourceConfig;
use svc_emulator_state::config::registry::{ProjectEntry, Registry};

/// The credential a request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Credential<'a> {
    /// `Bearer <token>`: an API key, or (on the data host) a resource token.
    Bearer(&'a str),
    /// `JWT <token>`: a user session or service token.
    Jwt(&'a str),
    /// A value with no known scheme: a resource token sent raw.
    Raw(&'a str),
}

/// Reads the first `Authorization` header. The scheme is case-insensitive; a header that is
/// empty or not visible ASCII counts as no credential.
pub fn credential(headers: &HeaderMap) -> Option<Credential<'_>> {
    let value = headers.get(AUTHORIZATION)?.to_str().ok()?.trim();
    if value.is_empty() {
        return None;
    }
    Some(match value.split_once(' ') {
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => {
            Credential::Bearer(token.trim())
        }
        Some((scheme, token)) if scheme.eq_ignore_ascii_case("jwt") => {
            Credential::Jwt(token.trim())
        }
        _ => Credential::Raw(value),
    })
}

/// Application host: the request must carry `Bearer <API key>` of `project`.
pub fn authorize_project<'r>(
    registry: &'r Registry,
    headers: &HeaderMap,
    project: &str,
) -> Result<&'r ProjectEntry, HttpError> {
    let Some(Credential::Bearer(key)) = credential(headers) else {
        return Err(HttpError::not_authenticated());
    };
    let owner = registry
        .project_for_api_key(key)
        .ok_or_else(HttpError::not_authenticated)?;
    if owner.name.as_str() != project {
        return Err(HttpError::permission_denied());
    }
    Ok(owner)
}

/// Application host: [`authorize_project`], then the environment must exist (`404`).
pub(crate) fn authorize_environment<'r>(
    registry: &'r Registry,
    headers: &HeaderMap,
    project: &str,
    environment: &str,
) -> Result<(&'r ProjectEntry, &'r EnvironmentName), HttpError> {
    let project = authorize_project(registry, headers, project)?;
    let environment = environment_of(project, environment)?;
    Ok((project, environment))
}

fn environment_of<'r>(
    project: &'r ProjectEntry,
    environment: &str,
) -> Result<&'r EnvironmentName, HttpError> {
    project
        .environment(environment)
        .ok_or_else(|| HttpError::not_found("Environment not found."))
}

/// What a data host request on one resource may touch.
#[derive(Debug, Clone, Copy)]
pub struct ResourceAccess<'r> {
    pub(crate) project: &'r ProjectEntry,
    /// The resource, as configured.
    pub resource: &'r ResourceConfig,
}

/// Data host: the request must carry the resource's token (raw or `Bearer`) or an API key of the
/// project (`Bearer` or raw). A token of another resource, or a key of another project, is `403`.
pub(crate) fn authorize_resource<'r>(
    registry: &'r Registry,
    headers: &HeaderMap,
    project: &str,
    environment: &str,
    resource: &str,
    jwt_project: impl FnOnce(&str) -> Option<String>,
) -> Result<ResourceAccess<'r>, HttpError> {
    let token = match credential(headers) {
        Some(Credential::Bearer(t) | Credential::Raw(t)) => t,
        // A user session or service token of this project serves every resource of it.
        Some(Credential::Jwt(t)) => {
            // Invalid, expired or tampered: 401. Valid, but another project's: 403.
            let Some(owner_project) = jwt_project(t) else {
                return Err(HttpError::not_authenticated());
            };
            if owner_project != project {
                return Err(HttpError::permission_denied());
            }
            let owner = registry
                .project(project)
                .ok_or_else(HttpError::permission_denied)?;
            environment_of(owner, environment)?;
            let resource = owner
                .resource(resource)
                .ok_or_else(|| HttpError::unknown_resource(owner, resource))?;
            return Ok(ResourceAccess {
                project: owner,
                resource,
            });
        }
        None => return Err(HttpError::not_authenticated()),
    };
    if let Some(owner) = registry.project_for_api_key(token) {
        if owner.name.as_str() != project {
            return Err(HttpError::permission_denied());
        }
        environment_of(owner, environment)?;
        let resource = owner
            .resource(resource)
            .ok_or_else(|| HttpError::unknown_resource(owner, resource))?;
        return Ok(ResourceAccess {
            project: owner,
            resource,
        });
    }
    let (owner, granted) = registry
        .resource_for_token(token)
        .ok_or_else(HttpError::not_authenticated)?;
    if owner.name.as_str() != project || granted.name != resource {
        return Err(HttpError::permission_denied());
    }
    environment_of(owner, environment)?;
    Ok(ResourceAccess {
        project: owner,
        resource: granted,
    })
}

/// Data host, a route of the whole project (workflows): an API key of the project (`Bearer` or
/// raw), or a user session or service token of it. A resource token opens one resource only:
/// `403`.
pub fn authorize_project_data<'r>(
    registry: &'r Registry,
    headers: &HeaderMap,
    project: &str,
    environment: &str,
    jwt_project: impl FnOnce(&str) -> Option<String>,
) -> Result<&'r ProjectEntry, HttpError> {
    let owner = match credential(headers) {
        Some(Credential::Jwt(t)) => {
            let Some(owner_project) = jwt_project(t) else {
                return Err(HttpError::not_authenticated());
            };
            if owner_project != project {
                return Err(HttpError::permission_denied());
            }
            registry
                .project(project)
                .ok_or_else(HttpError::permission_denied)?
        }
        Some(Credential::Bearer(t) | Credential::Raw(t)) => match registry.project_for_api_key(t) {
            Some(owner) if owner.name.as_str() == project => owner,
            Some(_) => return Err(HttpError::permission_denied()),
            None if registry.resource_for_token(t).is_some() => {
                return Err(HttpError::permission_denied());
            }
            None => return Err(HttpError::not_authenticated()),
        },
        None => return Err(HttpError::not_authenticated()),
    };
    environment_of(owner, environment)?;
    Ok(owner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderValue, StatusCode};
    use svc_emulator_state::config::projects::{ProjectConfig, ProjectsConfig};

    fn registry() -> Registry {
        let config = ProjectsConfig::new(vec![
            ProjectConfig::new("a")
                .environments(["prod", "dev"])
                .api_key("key-a")
                .tools_token("tools-a")
                .resource(ResourceConfig::new("shop", "tok-shop"))
                .resource(ResourceConfig::new("crm", "tok-crm")),
            ProjectConfig::new("b").api_key("key-b"),
        ]);
        Registry::new(&config, |_| {
            Ok::<_, svc_emulator_state::config::projects::ConfigError>(String::new())
        })
        .unwrap()
    }

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        h
    }

    fn status<T>(r: Result<T, HttpError>) -> StatusCode {
        match r {
            Ok(_) => StatusCode::OK,
            Err(e) => e.status(),
        }
    }

    #[test]
    fn parses_schemes() {
        assert!(credential(&HeaderMap::new()).is_none());
        assert!(credential(&headers("  ")).is_none());
        assert!(matches!(
            credential(&headers("bearer k")),
            Some(Credential::Bearer("k"))
        ));
        assert!(matches!(
            credential(&headers("JWT t")),
            Some(Credential::Jwt("t"))
        ));
        assert!(matches!(
            credential(&headers("tok")),
            Some(Credential::Raw("tok"))
        ));
    }

    #[test]
    fn application_host_rules() {
        let r = registry();
        let check = |h: &HeaderMap, p, e| status(authorize_environment(&r, h, p, e));
        assert_eq!(
            check(&HeaderMap::new(), "a", "prod"),
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            check(&headers("Bearer nope"), "a", "prod"),
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            check(&headers("key-a"), "a", "prod"),
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            check(&headers("Bearer key-b"), "a", "prod"),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            check(&headers("Bearer key-a"), "ghost", "prod"),
            StatusCode::FORBIDDEN
        );
        assert_eq!(
            check(&headers("Bearer key-a"), "a", "qa"),
            StatusCode::NOT_FOUND
        );
        assert_eq!(check(&headers("Bearer key-a"), "a", "dev"), StatusCode::OK);
    }

    #[test]
    fn data_host_rules() {
        let r = registry();
        let check = |h: &str, p, res| {
            status(authorize_resource(
                &r,
                &headers(h),
                p,
                "prod",
                res,
                |t| match t {
                    "good.jwt" => Some("a".to_owned()),
                    "other.jwt" => Some("b".to_owned()),
                    _ => None,
                },
            ))
        };
        assert_eq!(check("tok-shop", "a", "shop"), StatusCode::OK);
        assert_eq!(check("JWT good.jwt", "a", "shop"), StatusCode::OK);
        assert_eq!(check("JWT good.jwt", "a", "ghost"), StatusCode::NOT_FOUND);
        assert_eq!(check("JWT bad.jwt", "a", "shop"), StatusCode::UNAUTHORIZED);
        assert_eq!(check("JWT other.jwt", "a", "shop"), StatusCode::FORBIDDEN);
        assert_eq!(check("Bearer tok-shop", "a", "shop"), StatusCode::OK);
        assert_eq!(check("Bearer key-a", "a", "crm"), StatusCode::OK);
        assert_eq!(check("key-a", "a", "crm"), StatusCode::OK);
        assert_eq!(check("tok-shop", "a", "crm"), StatusCode::FORBIDDEN);
        assert_eq!(check("tok-shop", "b", "shop"), StatusCode::FORBIDDEN);
        assert_eq!(check("Bearer key-b", "a", "shop"), StatusCode::FORBIDDEN);
        assert_eq!(check("Bearer key-a", "a", "ghost"), StatusCode::NOT_FOUND);
        assert_eq!(check("JWT tok-shop", "a", "shop"), StatusCode::UNAUTHORIZED);
        assert_eq!(check("nope", "a", "shop"), StatusCode::UNAUTHORIZED);
        // The built-in tools token opens `__svc_app__` only; resource tokens never open it.
        assert_eq!(check("tools-a", "a", "__svc_app__"), StatusCode::OK);
        assert_eq!(check("Bearer key-a", "a", "__svc_app__"), StatusCode::OK);
        assert_eq!(check("tools-a", "a", "shop"), StatusCode::FORBIDDEN);
        assert_eq!(check("tok-shop", "a", "__svc_app__"), StatusCode::FORBIDDEN);
        assert_eq!(check("tools-a", "b", "__svc_app__"), StatusCode::FORBIDDEN);
        let access =
            authorize_resource(&r, &headers("tok-crm"), "a", "prod", "crm", |_| None).unwrap();
        assert_eq!(access.resource.name, "crm");
        assert_eq!(
            status(authorize_resource(
                &r,
                &headers("tok-crm"),
                "a",
                "qa",
                "crm",
                |_| None
            )),
            StatusCode::NOT_FOUND
        );
    }
}
