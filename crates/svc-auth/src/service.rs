//! Client settings from the headers of an incoming service request.
//!
//! A service (a server function called by the svc platform) receives requests that say which
//! project and environment they are for, and carry a service token. [`ServiceRequest`] reads
//! those headers; a client built from it acts for that request with the service token, sent as
//! `Authorization: JWT <service_token>`.

use http::HeaderMap;

use crate::{Credential, Secret};

/// `X-Svc-Project`: the project (required).
pub const HEADER_PROJECT: &str = "x-svc-project";
/// `X-Svc-Environment`: the environment (required).
pub const HEADER_ENVIRONMENT: &str = "x-svc-environment";
/// `X-Svc-Service-Token`: the service token (required), sent as `JWT <token>`.
pub const HEADER_SERVICE_TOKEN: &str = "x-svc-service-token";
/// `X-Svc-API-Base-Url`: the data host base URL (optional).
pub const HEADER_API_BASE_URL: &str = "x-svc-api-base-url";
/// `X-Svc-Draft`: turns draft mode on when present with any non-empty value (optional; see
/// [`ServiceRequest::draft`]).
pub const HEADER_DRAFT: &str = "x-svc-draft";

/// Client settings read from the headers of an incoming service request.
///
/// | Header | Field | Required |
/// | --- | --- | --- |
/// | `X-Svc-Project` | [`project`](Self::project) | yes |
/// | `X-Svc-Environment` | [`environment`](Self::environment) | yes |
/// | `X-Svc-Service-Token` | [`service_token`](Self::service_token) | yes |
/// | `X-Svc-API-Base-Url` | [`api_base_url`](Self::api_base_url) | no |
/// | `X-Svc-Draft` | [`draft`](Self::draft) | no |
///
/// Header names are case-insensitive. A required header that is missing or empty is an error
/// that names it. Values are not validated here (the client checks the project and environment
/// when an operation uses them).
///
/// # `X-Svc-Draft` is not a boolean
///
/// **Any non-empty `X-Svc-Draft` value turns draft mode on, including `false`, `0` and `no`.**
/// This is what the JavaScript client does (it passes the header's string on, and any
/// non-empty string is true), and this SDK keeps it so that a service behaves the same in both.
/// Only an absent or empty header means no draft. Unlike the env map's `SVC_DRAFT`, the words
/// `false`, `0`, `no`, `off`, `null` and `undefined` are **not** read as false here.
///
/// ```
/// use http::HeaderMap;
/// use svc_auth::ServiceRequest;
///
/// let mut headers = HeaderMap::new();
/// headers.insert("X-Svc-Project", "shop".parse()?);
/// headers.insert("x-svc-environment", "staging".parse()?);
/// headers.insert("X-SVC-SERVICE-TOKEN", "svc.jwt.token".parse()?);
/// headers.insert("X-Svc-Draft", "false".parse()?); // present: draft is ON
///
/// let req = ServiceRequest::from_headers(&headers)?;
/// assert_eq!(req.project, "shop");
/// assert_eq!(req.environment, "staging");
/// assert_eq!(req.api_base_url, None);
/// assert!(req.draft);
/// assert_eq!(req.credential().header_value()?.to_str()?, "JWT svc.jwt.token");
/// assert!(!format!("{req:?}").contains("svc.jwt.token"));
///
/// headers.remove("x-svc-project");
/// let err = ServiceRequest::from_headers(&headers).unwrap_err();
/// assert!(err.to_string().contains("X-Svc-Project"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServiceRequest {
    /// `X-Svc-Project`.
    pub project: String,
    /// `X-Svc-Environment`.
    pub environment: String,
    /// `X-Svc-API-Base-Url`, when present and not empty.
    pub api_base_url: Option<String>,
    /// Whether `X-Svc-Draft` is present with a non-empty value, **whatever the value** (even
    /// `false`): see the type's documentation.
    pub draft: bool,
    /// `X-Svc-Service-Token`, sent as `JWT <token>`.
    pub service_token: Secret,
}

/// A service request's headers cannot configure a client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ServiceRequestError {
    /// A required header is missing or empty.
    #[error(
        "the service request has no `{header}` header (X-Svc-Project, X-Svc-Environment and X-Svc-Service-Token are required)"
    )]
    MissingHeader {
        /// The header, e.g. `"X-Svc-Project"`.
        header: &'static str,
    },
    /// A header's value is not UTF-8 text.
    #[error("the service request's `{header}` header is not UTF-8 text")]
    InvalidHeader {
        /// The header, e.g. `"X-Svc-Environment"`.
        header: &'static str,
    },
}

impl ServiceRequestError {
    /// The header at fault, in its usual spelling (e.g. `"X-Svc-Project"`).
    pub fn header(&self) -> &'static str {
        match self {
            Self::MissingHeader { header } | Self::InvalidHeader { header } => header,
        }
    }
}

/// The header's usual spelling, for messages.
fn display_name(name: &'static str) -> &'static str {
    match name {
        HEADER_PROJECT => "X-Svc-Project",
        HEADER_ENVIRONMENT => "X-Svc-Environment",
        HEADER_SERVICE_TOKEN => "X-Svc-Service-Token",
        HEADER_API_BASE_URL => "X-Svc-API-Base-Url",
        _ => "X-Svc-Draft",
    }
}

/// The header's text; `None` when absent or empty.
fn optional(
    headers: &HeaderMap,
    name: &'static str,
) -> Result<Option<String>, ServiceRequestError> {
    match headers.get(name) {
        None => Ok(None),
        Some(value) if value.is_empty() => Ok(None),
        Some(value) => std::str::from_utf8(value.as_bytes())
            .map(|text| Some(text.to_owned()))
            .map_err(|_| ServiceRequestError::InvalidHeader {
                header: display_name(name),
            }),
    }
}

fn required(headers: &HeaderMap, name: &'static str) -> Result<String, ServiceRequestError> {
    optional(headers, name)?.ok_or(ServiceRequestError::MissingHeader {
        header: display_name(name),
    })
}

impl ServiceRequest {
    /// Reads the settings from an incoming request's headers (names are case-insensitive).
    pub fn from_headers(headers: &HeaderMap) -> Result<Self, ServiceRequestError> {
        Ok(Self {
            project: required(headers, HEADER_PROJECT)?,
            environment: required(headers, HEADER_ENVIRONMENT)?,
            service_token: Secret::from(required(headers, HEADER_SERVICE_TOKEN)?),
            api_base_url: optional(headers, HEADER_API_BASE_URL)?,
            // Deliberately not parsed: any non-empty value means draft (JavaScript client).
            draft: headers.get(HEADER_DRAFT).is_some_and(|v| !v.is_empty()),
        })
    }

    /// The service token as the credential to send: `Authorization: JWT <service_token>`.
    pub fn credential(&self) -> Credential {
        Credential::Jwt(self.service_token.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn full() -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("X-Svc-Project", HeaderValue::from_static("shop"));
        h.insert("X-Svc-Environment", HeaderValue::from_static("prod"));
        h.insert(
            "X-Svc-Service-Token",
            HeaderValue::from_static("SECRET-SVC"),
        );
        h
    }

    #[test]
    fn each_required_header_missing_or_empty_is_named() {
        for (name, shown) in [
            (HEADER_PROJECT, "X-Svc-Project"),
            (HEADER_ENVIRONMENT, "X-Svc-Environment"),
            (HEADER_SERVICE_TOKEN, "X-Svc-Service-Token"),
        ] {
            let mut h = full();
            h.remove(name);
            let err = ServiceRequest::from_headers(&h).unwrap_err();
            assert_eq!(err, ServiceRequestError::MissingHeader { header: shown });
            assert_eq!(err.header(), shown);
            assert!(err.to_string().contains(&format!("`{shown}`")), "{err}");

            h.insert(name, HeaderValue::from_static(""));
            let err = ServiceRequest::from_headers(&h).unwrap_err();
            assert_eq!(err, ServiceRequestError::MissingHeader { header: shown });
        }
    }

    #[test]
    fn all_present_and_optional_absent() {
        let r = ServiceRequest::from_headers(&full()).unwrap();
        assert_eq!(r.project, "shop");
        assert_eq!(r.environment, "prod");
        assert_eq!(r.service_token.expose(), "SECRET-SVC");
        assert_eq!(r.api_base_url, None);
        assert!(!r.draft, "absent X-Svc-Draft means no draft");
        assert_eq!(format!("{:?}", r.credential()), "Jwt(***)");
        assert!(!format!("{r:?}").contains("SECRET"));
    }

    #[test]
    fn draft_header_is_not_parsed_as_a_boolean() {
        for value in [
            "false",
            "FALSE",
            "0",
            "no",
            "off",
            "null",
            "undefined",
            "true",
            "1",
            " ",
        ] {
            let mut h = full();
            h.insert("X-SVC-DRAFT", HeaderValue::from_str(value).unwrap());
            assert!(ServiceRequest::from_headers(&h).unwrap().draft, "{value:?}");
        }
        let mut h = full();
        h.insert("x-svc-draft", HeaderValue::from_static(""));
        assert!(!ServiceRequest::from_headers(&h).unwrap().draft, "empty");
    }

    #[test]
    fn names_are_case_insensitive_and_base_url_is_passed_on() {
        let mut h = HeaderMap::new();
        h.insert("x-svc-project", HeaderValue::from_static("p"));
        h.insert("X-SVC-ENVIRONMENT", HeaderValue::from_static("e"));
        h.insert("x-Svc-Service-TOKEN", HeaderValue::from_static("t"));
        h.insert(
            "X-Svc-Api-Base-Url",
            HeaderValue::from_static("http://127.0.0.1:8080"),
        );
        let r = ServiceRequest::from_headers(&h).unwrap();
        assert_eq!(r.api_base_url.as_deref(), Some("http://127.0.0.1:8080"));
        assert_eq!((r.project.as_str(), r.environment.as_str()), ("p", "e"));
    }

    #[test]
    fn non_utf8_values_are_errors() {
        let mut h = full();
        h.insert(
            HEADER_ENVIRONMENT,
            HeaderValue::from_bytes(b"\xff\xfe").unwrap(),
        );
        let err = ServiceRequest::from_headers(&h).unwrap_err();
        assert_eq!(
            err,
            ServiceRequestError::InvalidHeader {
                header: "X-Svc-Environment"
            }
        );
        // UTF-8 beyond ASCII is fine.
        let mut h = full();
        h.insert(
            HEADER_PROJECT,
            HeaderValue::from_bytes("café".as_bytes()).unwrap(),
        );
        assert_eq!(ServiceRequest::from_headers(&h).unwrap().project, "café");
    }
}
