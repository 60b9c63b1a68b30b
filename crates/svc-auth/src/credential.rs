//! The credentials a request can carry, and how each is written in `Authorization`.

use std::fmt;

use http::HeaderValue;

use crate::Secret;

/// One credential, ready to be written into the `Authorization` header.
///
/// | Variant | Header value | Serves |
/// | --- | --- | --- |
/// | [`ApiKey`](Self::ApiKey) | `Bearer <key>` | the application host, and every data host route of the project |
/// | [`ResourceToken`](Self::ResourceToken) | `<token>` (raw) | one resource's records, SQL and reload; the built-in tools resource's users and teams |
/// | [`Jwt`](Self::Jwt) | `JWT <token>` | user sessions and service tokens: data host and HTTP proxy |
///
/// ```
/// use svc_auth::Credential;
/// let c = Credential::resource_token("tok_1");
/// assert_eq!(c.header_value().unwrap().to_str().unwrap(), "tok_1");
/// assert!(c.header_value().unwrap().is_sensitive());
/// assert_eq!(format!("{c:?}"), "ResourceToken(***)");
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Credential {
    /// An API key from the user's profile, sent as `Bearer <key>`.
    ApiKey(Secret),
    /// A resource's static token (or the built-in tools token), sent raw.
    ResourceToken(Secret),
    /// A user session's access token or a service token, sent as `JWT <token>`.
    Jwt(Secret),
}

/// A credential cannot be written into a header (it holds a line break or another byte that
/// HTTP headers do not allow).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the {kind} contains characters that cannot go into an HTTP header (line breaks or control characters); check how it was copied"
)]
pub struct InvalidCredential {
    /// Which credential, e.g. `"API key"`.
    pub kind: &'static str,
}

impl Credential {
    /// An API key, sent as `Bearer <key>`.
    pub fn api_key(key: impl Into<Secret>) -> Self {
        Self::ApiKey(key.into())
    }

    /// A resource's static token, sent raw.
    pub fn resource_token(token: impl Into<Secret>) -> Self {
        Self::ResourceToken(token.into())
    }

    /// A session access token or service token, sent as `JWT <token>`.
    pub fn jwt(token: impl Into<Secret>) -> Self {
        Self::Jwt(token.into())
    }

    /// What the credential is called in messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::ApiKey(_) => "API key",
            Self::ResourceToken(_) => "resource token",
            Self::Jwt(_) => "JWT",
        }
    }

    /// The `Authorization` header value, marked sensitive so HTTP/2 never indexes it and `Debug`
    /// of the header map does not show it.
    pub fn header_value(&self) -> Result<HeaderValue, InvalidCredential> {
        let text = match self {
            Self::ApiKey(s) => format!("Bearer {}", s.expose()),
            Self::ResourceToken(s) => s.expose().to_owned(),
            Self::Jwt(s) => format!("JWT {}", s.expose()),
        };
        let mut value =
            HeaderValue::from_str(&text).map_err(|_| InvalidCredential { kind: self.kind() })?;
        value.set_sensitive(true);
        Ok(value)
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Self::ApiKey(_) => "ApiKey",
            Self::ResourceToken(_) => "ResourceToken",
            Self::Jwt(_) => "Jwt",
        };
        write!(f, "{name}(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes() {
        let v = |c: Credential| c.header_value().unwrap().to_str().unwrap().to_owned();
        assert_eq!(v(Credential::api_key("k")), "Bearer k");
        assert_eq!(v(Credential::resource_token("t")), "t");
        assert_eq!(v(Credential::jwt("j")), "JWT j");
    }

    #[test]
    fn refuses_header_injection() {
        let err = Credential::api_key("k\r\nX-Evil: 1")
            .header_value()
            .unwrap_err();
        assert_eq!(err.kind, "API key");
        assert!(!err.to_string().contains("Evil"));
    }
}
