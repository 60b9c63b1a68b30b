//! What every request would otherwise recompute from the client's fixed settings, made once
//! when the client is built: the project's URL prefixes, the parsed scheme and authority of the
//! two hosts, and the `Authorization` values of the API key and the resource tokens.
//!
//! Each shortcut gives exactly what the slow path gives, and falls back to it whenever it does
//! not apply (an unset or invalid project, a URL on another host, a credential given per call):
//! errors are still made, with the same text, where they were.

use std::collections::HashMap;

use http::HeaderValue;
use http::uri::{Authority, PathAndQuery, Scheme, Uri};
use svc_auth::{Credential, Secret};
use svc_model::{EnvironmentName, ProjectName};

use crate::url::Url;

/// The client's settings, prepared for sending.
#[derive(Debug, Default)]
pub(crate) struct Prepared {
    /// `{api_base_url}/projects/{project}/{environment}`, when both are valid.
    data_prefix: Option<String>,
    /// `{app_base_url}/projects/{project}`, when the project is valid.
    app_prefix: Option<String>,
    /// The scheme and authority of the two base URLs.
    origins: Vec<Origin>,
    /// The API key and its header value.
    api_key: Option<(Secret, HeaderValue)>,
    /// Header values of the resource tokens, by the address of the token's text: a credential
    /// holding one of these very secrets (a clone of it) gets its value without formatting.
    tokens: HashMap<usize, (Secret, HeaderValue)>,
}

/// `scheme://authority` of a base URL, as text and parsed.
#[derive(Debug)]
struct Origin {
    text: String,
    scheme: Scheme,
    authority: Authority,
    /// The `Host` header of a plain `http` origin (see [`host_header`]).
    host: Option<HeaderValue>,
}

impl Origin {
    fn of(base: &str) -> Option<Self> {
        let uri: Uri = base.parse().ok()?;
        let (scheme, authority) = (uri.scheme()?.clone(), uri.authority()?.clone());
        let text = format!("{scheme}://{authority}");
        let host = (scheme == Scheme::HTTP)
            .then(|| host_header(&authority, 80))
            .flatten();
        // Only when the base URL spells them exactly so (e.g. not `HTTP://`): the URL's text
        // is then this prefix followed by the path.
        base.starts_with(&text).then_some(Self {
            text,
            scheme,
            authority,
            host,
        })
    }
}

/// The `Host` header of requests to `authority`: its host, and its port unless it is the
/// scheme's `default_port`, as hyper-util writes it when a request has none.
///
/// Sent on plain `http` requests only, which are HTTP/1.1: hyper-util would otherwise format
/// the same value for every request (about a thousand instructions: a fifth of the SDK's own
/// work on a small answer). Over `https` the connection may be HTTP/2, where the authority
/// travels as `:authority` and no `Host` is added, so none is set there.
fn host_header(authority: &Authority, default_port: u16) -> Option<HeaderValue> {
    let host = authority.host();
    let value = match authority.port_u16() {
        Some(port) if port != default_port => format!("{host}:{port}"),
        _ => host.to_owned(),
    };
    HeaderValue::from_str(&value).ok()
}

/// The settings [`Prepared::new`] reads.
pub(crate) struct Settings<'a> {
    pub(crate) api_base_url: &'a str,
    pub(crate) app_base_url: &'a str,
    pub(crate) project: Option<&'a str>,
    pub(crate) environment: &'a str,
    pub(crate) api_key: Option<&'a Secret>,
    pub(crate) resource_tokens: &'a HashMap<String, Secret>,
}

impl Prepared {
    pub(crate) fn new(settings: &Settings<'_>) -> Self {
        let project = settings.project.filter(|p| ProjectName::check(p).is_ok());
        let environment = Some(settings.environment).filter(|e| EnvironmentName::check(e).is_ok());
        let project_url =
            |base: &str| project.map(|project| Url::new(base).segment("projects").segment(project));
        let data_prefix = project_url(settings.api_base_url)
            .zip(environment)
            .map(|(url, environment)| url.segment(environment).build());
        let app_prefix = project_url(settings.app_base_url).map(Url::build);
        let origins = [settings.api_base_url, settings.app_base_url]
            .into_iter()
            .filter_map(Origin::of)
            .collect();
        let header = |credential: Credential| credential.header_value().ok();
        let api_key = settings.api_key.and_then(|key| {
            header(Credential::ApiKey(key.clone())).map(|value| (key.clone(), value))
        });
        let tokens = settings
            .resource_tokens
            .values()
            .filter_map(|token| {
                let value = header(Credential::ResourceToken(token.clone()))?;
                Some((address(token), (token.clone(), value)))
            })
            .collect();
        Self {
            data_prefix,
            app_prefix,
            origins,
            api_key,
            tokens,
        }
    }

    /// `{api_base_url}/projects/{project}/{environment}`, when both are valid.
    pub(crate) fn data_prefix(&self) -> Option<&str> {
        self.data_prefix.as_deref()
    }

    /// `{app_base_url}/projects/{project}`, when the project is valid.
    pub(crate) fn app_prefix(&self) -> Option<&str> {
        self.app_prefix.as_deref()
    }

    /// `url` as a URI, from the parsed scheme and authority of the base URL it starts with:
    /// only its path and query are parsed. `None` when it is on neither host or its path does
    /// not parse (the caller then parses the whole URL, and reports the error).
    ///
    /// With it, the origin's `Host` header when one is made for it (plain `http`).
    pub(crate) fn uri(&self, url: &str) -> Option<(Uri, Option<HeaderValue>)> {
        let origin = self.origins.iter().find(|o| url.starts_with(&o.text))?;
        let rest = &url[origin.text.len()..];
        if !rest.starts_with('/') {
            return None;
        }
        let mut parts = http::uri::Parts::default();
        parts.scheme = Some(origin.scheme.clone());
        parts.authority = Some(origin.authority.clone());
        parts.path_and_query = Some(PathAndQuery::try_from(rest).ok()?);
        Some((Uri::from_parts(parts).ok()?, origin.host.clone()))
    }

    /// The header value of `credential`, when it is the client's API key or one of its resource
    /// tokens (the same secret, not merely an equal one).
    pub(crate) fn authorization(&self, credential: &Credential) -> Option<HeaderValue> {
        let same = |a: &Secret, b: &Secret| {
            address(a) == address(b) && a.expose().len() == b.expose().len()
        };
        match credential {
            Credential::ApiKey(key) => self
                .api_key
                .as_ref()
                .filter(|(ours, _)| same(ours, key))
                .map(|(_, value)| value.clone()),
            Credential::ResourceToken(token) => self
                .tokens
                .get(&address(token))
                .filter(|(ours, _)| same(ours, token))
                .map(|(_, value)| value.clone()),
            _ => None,
        }
    }
}

/// Where a secret's text is: clones of one secret share it, and while the client holds its
/// secrets no other secret can be at the same address.
fn address(secret: &Secret) -> usize {
    secret.expose().as_ptr() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prepared(project: Option<&str>, environment: &str) -> Prepared {
        let tokens = HashMap::from([("shop".to_owned(), Secret::new("tok_shop"))]);
        let key = Secret::new("svc_key");
        Prepared::new(&Settings {
            api_base_url: "https://api.example.test:8443/v1",
            app_base_url: "http://127.0.0.1:9/api",
            project,
            environment,
            api_key: Some(&key),
            resource_tokens: &tokens,
        })
    }

    #[test]
    fn prefixes_only_for_valid_names() {
        let p = prepared(Some("a b"), "prod");
        assert_eq!(
            p.data_prefix(),
            Some("https://api.example.test:8443/v1/projects/a%20b/prod")
        );
        assert_eq!(
            p.app_prefix(),
            Some("http://127.0.0.1:9/api/projects/a%20b")
        );
        assert_eq!(prepared(Some(".."), "prod").data_prefix(), None);
        assert_eq!(prepared(Some(".."), "prod").app_prefix(), None);
        assert_eq!(prepared(None, "prod").data_prefix(), None);
        assert_eq!(prepared(Some("p"), "").data_prefix(), None);
        assert!(prepared(Some("p"), "").app_prefix().is_some());
    }

    #[test]
    fn uris_are_the_parsed_urls() {
        let p = prepared(Some("p"), "prod");
        for url in [
            "https://api.example.test:8443/v1/projects/p/prod/shop/models/orders/1",
            "https://api.example.test:8443/v1/x?a=1&b=%20&draft=1",
            "http://127.0.0.1:9/api/projects/p/view_settings/",
            "http://127.0.0.1:9/",
        ] {
            let (fast, _) = p.uri(url).expect("a URL on a known host");
            assert_eq!(fast, url.parse::<Uri>().unwrap(), "{url}");
            assert_eq!(fast.to_string(), url);
        }
        // Elsewhere, or not a path: the caller parses it whole.
        for url in [
            "https://other.test/v1/x",
            "http://127.0.0.1:9",
            "http://127.0.0.1:90/api",
            "http://127.0.0.1:9/a b",
        ] {
            assert!(p.uri(url).is_none(), "{url}");
        }
    }

    #[test]
    fn host_headers_as_hyper_util_writes_them_for_plain_http_only() {
        let host = |base: &str| {
            let p = Prepared::new(&Settings {
                api_base_url: base,
                app_base_url: "https://app.example.test",
                project: Some("p"),
                environment: "prod",
                api_key: None,
                resource_tokens: &HashMap::new(),
            });
            let url = format!("{base}/x");
            let (_, host) = p.uri(&url).expect("a URL on a known host");
            host.map(|h| h.to_str().unwrap().to_owned())
        };
        assert_eq!(host("http://127.0.0.1:9").as_deref(), Some("127.0.0.1:9"));
        assert_eq!(host("http://h.test:80").as_deref(), Some("h.test"));
        assert_eq!(host("http://h.test").as_deref(), Some("h.test"));
        assert_eq!(
            host("http://u:pw@h.test:8080").as_deref(),
            Some("h.test:8080")
        );
        assert_eq!(host("http://[::1]:8080").as_deref(), Some("[::1]:8080"));
        assert_eq!(host("https://h.test:8443"), None);
    }

    #[test]
    fn header_values_of_the_clients_own_secrets_only() {
        let tokens = HashMap::from([("shop".to_owned(), Secret::new("tok_shop"))]);
        let key = Secret::new("svc_key");
        let p = Prepared::new(&Settings {
            api_base_url: "https://api.example.test",
            app_base_url: "https://app.example.test",
            project: Some("p"),
            environment: "prod",
            api_key: Some(&key),
            resource_tokens: &tokens,
        });
        let value = |c: &Credential| p.authorization(c).map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(
            value(&Credential::ApiKey(key.clone())).as_deref(),
            Some("Bearer svc_key")
        );
        assert!(
            p.authorization(&Credential::ApiKey(key.clone()))
                .unwrap()
                .is_sensitive()
        );
        assert_eq!(
            value(&Credential::ResourceToken(tokens["shop"].clone())).as_deref(),
            Some("tok_shop")
        );
        // Equal text in another secret, or the same secret as another kind: formatted as usual.
        assert_eq!(value(&Credential::api_key("svc_key")), None);
        assert_eq!(value(&Credential::resource_token("tok_shop")), None);
        assert_eq!(value(&Credential::Jwt(key.clone())), None);
        assert_eq!(value(&Credential::ResourceToken(key.clone())), None);
    }
}
