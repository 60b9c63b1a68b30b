//! Where a client reaches a deployment of the API, and with which credentials, as one value.
//!
//! An emulator knows all of it once it has started (its port, its project, the keys and tokens
//! it made); the SDK needs all of it to build a client. Neither crate depends on the other:
//! both depend on this one, so the emulator hands a [`ConnectionInfo`] over and the SDK takes
//! it whole (`svc_api::Client::builder_for(&emulator)`).

use std::collections::BTreeMap;
use std::fmt;

/// Both base URLs, the project and environment, and the credentials a client of one deployment
/// uses: an API key, the static tokens of resources, and the PEM of a CA to trust (an
/// emulator serving TLS with its own certificate).
///
/// `Debug` never shows a credential: the key and tokens are written as `<redacted>`.
///
/// ```
/// use svc_model::ConnectionInfo;
///
/// let info = ConnectionInfo::new("http://127.0.0.1:8787", "demo")
///     .api_key("svc_key_1")
///     .resource_token("shop", "svc_tok_1");
/// assert_eq!(info.app_base_url, "http://127.0.0.1:8787/api");
/// assert_eq!(info.environment, "prod");
/// assert!(!format!("{info:?}").contains("svc_key_1"));
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConnectionInfo {
    /// The data host's base URL (records, SQL, users, teams, sessions), without a trailing
    /// slash.
    pub api_base_url: String,
    /// The application host's base URL (projects, page settings, proxy), ending in `/api`.
    pub app_base_url: String,
    /// The project's unique name.
    pub project: String,
    /// The environment.
    pub environment: String,
    /// An API key of the project, without the `Bearer` prefix.
    pub api_key: Option<String>,
    /// Resource name -> static token (the built-in tools resource is `__svc_app__`).
    pub resource_tokens: BTreeMap<String, String>,
    /// The PEM of a CA certificate the client trusts besides the usual ones.
    pub tls_ca_pem: Option<Vec<u8>>,
}

impl ConnectionInfo {
    /// `project` on the deployment whose data host is `api_base_url` (a trailing slash is
    /// removed), whose application host is the same under `/api` (change
    /// [`app_base_url`](Self::app_base_url) when it is not), in the environment `prod`, with no
    /// credentials yet.
    pub fn new(api_base_url: impl Into<String>, project: impl Into<String>) -> Self {
        let api_base_url = api_base_url.into().trim_end_matches('/').to_owned();
        ConnectionInfo {
            app_base_url: format!("{api_base_url}/api"),
            api_base_url,
            project: project.into(),
            environment: "prod".to_owned(),
            api_key: None,
            resource_tokens: BTreeMap::new(),
            tls_ca_pem: None,
        }
    }

    /// The application host's base URL (a trailing slash is removed).
    pub fn app_base_url(mut self, url: impl Into<String>) -> Self {
        self.app_base_url = url.into().trim_end_matches('/').to_owned();
        self
    }

    /// The environment.
    pub fn environment(mut self, environment: impl Into<String>) -> Self {
        self.environment = environment.into();
        self
    }

    /// An API key of the project.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The static token of `resource`.
    pub fn resource_token(mut self, resource: impl Into<String>, token: impl Into<String>) -> Self {
        self.resource_tokens.insert(resource.into(), token.into());
        self
    }

    /// The PEM of a CA certificate to trust.
    pub fn tls_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls_ca_pem = Some(pem.into());
        self
    }
}

impl fmt::Debug for ConnectionInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let redacted: BTreeMap<&str, &str> = self
            .resource_tokens
            .keys()
            .map(|name| (name.as_str(), "<redacted>"))
            .collect();
        f.debug_struct("ConnectionInfo")
            .field("api_base_url", &self.api_base_url)
            .field("app_base_url", &self.app_base_url)
            .field("project", &self.project)
            .field("environment", &self.environment)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("resource_tokens", &redacted)
            .field("tls_ca_pem", &self.tls_ca_pem.as_ref().map(Vec::len))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_names_the_resources_but_no_credential() {
        let info = ConnectionInfo::new("http://h:1/", "p")
            .api_key("key-secret")
            .resource_token("shop", "token-secret")
            .tls_ca_pem("pem");
        assert_eq!(info.api_base_url, "http://h:1");
        let shown = format!("{info:?}");
        assert!(
            shown.contains("shop") && shown.contains("<redacted>"),
            "{shown}"
        );
        assert!(!shown.contains("secret"), "{shown}");
    }
}
