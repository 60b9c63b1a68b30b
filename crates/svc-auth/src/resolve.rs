//! Which credential a request carries, when a client holds several.

use crate::{Credential, Secret};

/// The kind of route a request goes to, which decides the credentials it can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Route {
    /// A data host route of one resource: records, SQL and reload of a resource; users, teams
    /// and reload of the built-in tools resource (`__svc_app__`).
    Resource,
}

/// The credentials a client holds for one request, given to [`select_credential`].
///
/// ```
/// use svc_auth::{CredentialSources, Secret};
/// let key = Secret::new("svc_key_1");
/// let sources = CredentialSources::new().api_key(Some(&key));
/// # let _ = sources;
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct CredentialSources<'a> {
    per_call: Option<&'a Secret>,
    resource_token: Option<&'a Secret>,
    api_key: Option<&'a Secret>,
    session: Option<&'a Secret>,
}

impl<'a> CredentialSources<'a> {
    /// No credentials at all.
    pub fn new() -> Self {
        Self::default()
    }

    /// A resource token given for this one call (sent raw).
    pub fn per_call(mut self, token: Option<&'a Secret>) -> Self {
        self.per_call = token;
        self
    }

    /// The client's static token for the request's resource, or the built-in tools token for
    /// users and teams (sent raw).
    pub fn resource_token(mut self, token: Option<&'a Secret>) -> Self {
        self.resource_token = token;
        self
    }

    /// The client's API key (sent as `Bearer <key>`).
    pub fn api_key(mut self, key: Option<&'a Secret>) -> Self {
        self.api_key = key;
        self
    }

    /// The access token of the user session, or a service token (sent as `JWT <token>`).
    pub fn session(mut self, access_token: Option<&'a Secret>) -> Self {
        self.session = access_token;
        self
    }
}

/// Picks the credential a request to `route` carries; `None` when the client holds none that the
/// route accepts (the caller then fails with a clear error, or sends no credential).
///
/// The order, first match wins:
///
/// | Route | 1 | 2 | 3 | 4 |
/// | --- | --- | --- | --- | --- |
/// | [`Resource`](Route::Resource) | token for this call (raw) | the client's token for the resource (raw) | API key (`Bearer`) | session (`JWT`) |
///
/// An API key always wins over a user session, as in the JavaScript client; logging out does
/// not remove it. Resource tokens serve only their own resource's routes, and a token given for
/// one call wins over the client's own.
///
/// ```
/// use svc_auth::{Credential, CredentialSources, Route, Secret, select_credential};
///
/// let key = Secret::new("svc_key_1");
/// let session = Secret::new("access.jwt");
/// let sources = CredentialSources::new().api_key(Some(&key)).session(Some(&session));
/// assert_eq!(select_credential(Route::Resource, &sources), Some(Credential::api_key("svc_key_1")));
/// let only_session = CredentialSources::new().session(Some(&session));
/// assert_eq!(select_credential(Route::Resource, &only_session), Some(Credential::jwt("access.jwt")));
/// ```
pub fn select_credential(route: Route, sources: &CredentialSources<'_>) -> Option<Credential> {
    let raw = |t: &Secret| Credential::ResourceToken(t.clone());
    let bearer = || sources.api_key.map(|k| Credential::ApiKey(k.clone()));
    let jwt = || sources.session.map(|t| Credential::Jwt(t.clone()));
    match route {
        Route::Resource => sources
            .per_call
            .or(sources.resource_token)
            .map(raw)
            .or_else(bearer)
            .or_else(jwt),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let per_call = Secret::new("per-call");
        let resource = Secret::new("resource");
        let key = Secret::new("key");
        let session = Secret::new("session");
        let s = |p: bool, r: bool, k: bool, j: bool| {
            CredentialSources::new()
                .per_call(p.then_some(&per_call))
                .resource_token(r.then_some(&resource))
                .api_key(k.then_some(&key))
                .session(j.then_some(&session))
        };
        let raw = |t: &str| Some(Credential::resource_token(t));
        let bearer = Some(Credential::api_key("key"));
        let jwt = Some(Credential::jwt("session"));
        use Route::*;
        #[rustfmt::skip]
        let cases = [
            // route, (per_call, resource, api_key, session), expected
            (Resource,    (true,  true,  true,  true ), raw("per-call")),
            (Resource,    (false, true,  true,  true ), raw("resource")),
            (Resource,    (true,  false, false, false), raw("per-call")),
            (Resource,    (false, false, true,  true ), bearer.clone()),
            (Resource,    (false, false, false, true ), jwt.clone()),
            (Resource,    (false, false, false, false), None),
        ];
        for (route, (p, r, k, j), expected) in cases {
            assert_eq!(
                select_credential(route, &s(p, r, k, j)),
                expected,
                "{route:?} per_call={p} resource={r} api_key={k} session={j}"
            );
        }
    }
}
