//! Secrets that never print.

use std::fmt;
use std::sync::Arc;

/// A secret string (API key, token, password). `Debug` and `Display` print `***`; the value is
/// reached only through [`expose`](Self::expose), so it cannot leak into logs by accident.
///
/// ```
/// use svc_auth::Secret;
/// let key = Secret::new("svc_key_123");
/// assert_eq!(format!("{key:?}"), "Secret(***)");
/// assert_eq!(key.expose(), "svc_key_123");
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Secret(Arc<str>);

impl Secret {
    /// Wraps a secret.
    pub fn new(value: impl AsRef<str>) -> Self {
        Self(Arc::from(value.as_ref()))
    }

    /// The secret itself. Call it only where the value is needed on the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the secret is the empty string.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Self(Arc::from(s))
    }
}

impl From<&String> for Secret {
    fn from(s: &String) -> Self {
        Self::new(s)
    }
}
