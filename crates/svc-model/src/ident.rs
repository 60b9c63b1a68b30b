//! Identifiers that go into URL paths.
//!
//! Every identifier the API puts into a path (project, environment, resource, model, page uid,
//! record primary key) is exactly **one** path segment. These types guarantee it: they refuse the
//! values that cannot be one segment (empty, `.` and `..`) when they are built, and
//! [`encoded`](ProjectName::encoded) percent-encodes everything but RFC 3986's unreserved
//! characters, so `/`, `?`, `#`, `%`, spaces and non-ASCII text reach the server intact instead of
//! changing the path.

use std::borrow::Borrow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::records::wire::encode_component;

/// Percent-encodes `raw` so that it stays one path segment: everything but RFC 3986's
/// unreserved characters is encoded, `/` and `%` included ([`encode_component`]).
///
/// ```
/// assert_eq!(svc_model::ident::encode_segment("a/b c?"), "a%2Fb%20c%3F");
/// ```
pub fn encode_segment(raw: &str) -> String {
    encode_component(raw).into_owned()
}

/// An identifier was refused before anything was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} {value:?}: {reason}")]
pub struct InvalidIdentifier {
    /// What the identifier names, e.g. `"project name"`.
    pub kind: &'static str,
    /// The refused value.
    pub value: String,
    /// Why it was refused.
    pub reason: &'static str,
}

fn check(kind: &'static str, value: &str) -> Result<(), InvalidIdentifier> {
    let reason = match value {
        "" => "it is empty",
        "." | ".." => "`.` and `..` cannot be a path segment",
        _ => return Ok(()),
    };
    Err(InvalidIdentifier {
        kind,
        value: value.to_owned(),
        reason,
    })
}

macro_rules! identifier {
    ($(#[$doc:meta])* $name:ident, $kind:literal) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(String);

        impl $name {
            /// Checks `value` and wraps it. Empty, `.` and `..` are refused.
            pub fn new(value: impl Into<String>) -> Result<Self, InvalidIdentifier> {
                let value = value.into();
                check($kind, &value)?;
                Ok(Self(value))
            }

            /// Checks `value` as [`new`](Self::new) does, without copying it: for callers that
            /// only need to know it would be accepted.
            pub fn check(value: &str) -> Result<(), InvalidIdentifier> {
                check($kind, value)
            }

            /// The identifier as given.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The identifier percent-encoded into exactly one path segment.
            pub fn encoded(&self) -> String {
                encode_segment(&self.0)
            }

            /// Unwraps the identifier.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.0, f)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = InvalidIdentifier;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Self::new(s)
            }
        }

        impl TryFrom<&str> for $name {
            type Error = InvalidIdentifier;
            fn try_from(s: &str) -> Result<Self, Self::Error> {
                Self::new(s)
            }
        }

        impl TryFrom<String> for $name {
            type Error = InvalidIdentifier;
            fn try_from(s: String) -> Result<Self, Self::Error> {
                Self::new(s)
            }
        }

        impl TryFrom<&String> for $name {
            type Error = InvalidIdentifier;
            fn try_from(s: &String) -> Result<Self, Self::Error> {
                Self::new(s.as_str())
            }
        }

        impl TryFrom<&$name> for $name {
            type Error = InvalidIdentifier;
            fn try_from(s: &$name) -> Result<Self, Self::Error> {
                Ok(s.clone())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(deserializer)?;
                Self::new(raw).map_err(serde::de::Error::custom)
            }
        }
    };
}

identifier!(
    /// A project's unique name, e.g. `acme-admin`.
    ProjectName,
    "project name"
);
identifier!(
    /// An environment's unique name; the published production environment is `prod`.
    EnvironmentName,
    "environment name"
);
identifier!(
    /// The API name of a connected resource (a database), e.g. `crm` or `__svc_app__`.
    ResourceName,
    "resource name"
);
identifier!(
    /// The identifier of a model (a table or collection) inside a resource.
    ModelName,
    "model name"
);
identifier!(
    /// The unique id of a page's settings.
    PageUid,
    "page uid"
);
identifier!(
    /// A record's primary key, as text. Integer keys convert with `From<i64>`.
    RecordPk,
    "record pk"
);

impl EnvironmentName {
    /// The published production environment, `prod`.
    pub fn prod() -> Self {
        Self("prod".to_owned())
    }
}

impl From<i64> for RecordPk {
    fn from(pk: i64) -> Self {
        Self(pk.to_string())
    }
}

impl From<u64> for RecordPk {
    fn from(pk: u64) -> Self {
        Self(pk.to_string())
    }
}

impl From<i32> for RecordPk {
    fn from(pk: i32) -> Self {
        Self(pk.to_string())
    }
}

impl From<u32> for RecordPk {
    fn from(pk: u32) -> Self {
        Self(pk.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_values_that_cannot_be_one_segment() {
        for bad in ["", ".", ".."] {
            let err = PageUid::new(bad).unwrap_err();
            assert_eq!(err.kind, "page uid");
            assert_eq!(err.value, bad);
        }
        assert!(PageUid::new("...").is_ok());
        assert!(PageUid::new(" ").is_ok());
    }

    #[test]
    fn encodes_into_exactly_one_segment() {
        let cases = [
            ("plain-name_1.v~2", "plain-name_1.v~2"),
            ("a/b", "a%2Fb"),
            ("what?x=1", "what%3Fx%3D1"),
            ("frag#ment", "frag%23ment"),
            ("100%", "100%25"),
            ("two words", "two%20words"),
            ("héllo", "h%C3%A9llo"),
            ("日本", "%E6%97%A5%E6%9C%AC"),
            ("..", ""),
        ];
        for (raw, want) in cases {
            if raw == ".." {
                continue;
            }
            let id = ModelName::new(raw).unwrap();
            let enc = id.encoded();
            assert_eq!(enc, want, "encoding {raw:?}");
            assert!(!enc.contains('/') && !enc.contains('?') && !enc.contains('#'));
            let back = percent_encoding::percent_decode_str(&enc)
                .decode_utf8()
                .unwrap();
            assert_eq!(back, raw);
        }
    }

    #[test]
    fn serde_validates() {
        let ok: ProjectName = serde_json::from_str("\"acme\"").unwrap();
        assert_eq!(ok.as_str(), "acme");
        assert!(serde_json::from_str::<ProjectName>("\"\"").is_err());
        assert_eq!(serde_json::to_string(&ok).unwrap(), "\"acme\"");
    }

    #[test]
    fn integer_pks() {
        assert_eq!(RecordPk::from(42_i64).as_str(), "42");
        assert_eq!(RecordPk::from(-1_i32).encoded(), "-1");
    }
}

/// Anything that names a record: integers, strings, or a [`RecordPk`].
///
/// ```
/// use svc_model::ident::IntoRecordPk;
/// assert_eq!(42.into_record_pk().unwrap().as_str(), "42");
/// assert_eq!("a/b".into_record_pk().unwrap().encoded(), "a%2Fb");
/// assert!("".into_record_pk().is_err());
/// ```
pub trait IntoRecordPk {
    /// Converts into a checked primary key.
    fn into_record_pk(self) -> Result<RecordPk, InvalidIdentifier>;

    /// Calls `f` with the key's text, checked as [`into_record_pk`](Self::into_record_pk)
    /// checks it, without making a [`RecordPk`] when none is needed: text is checked where it
    /// is, an integer is written out on the stack.
    ///
    /// ```
    /// use svc_model::ident::IntoRecordPk;
    /// assert_eq!(42.with_pk_str(str::len).unwrap(), 2);
    /// assert_eq!((-7_i64).with_pk_str(|pk| pk.to_owned()).unwrap(), "-7");
    /// assert!("..".with_pk_str(|_| ()).is_err());
    /// ```
    fn with_pk_str<R>(self, f: impl FnOnce(&str) -> R) -> Result<R, InvalidIdentifier>
    where
        Self: Sized,
    {
        Ok(f(self.into_record_pk()?.as_str()))
    }
}

impl IntoRecordPk for RecordPk {
    fn into_record_pk(self) -> Result<RecordPk, InvalidIdentifier> {
        Ok(self)
    }
    fn with_pk_str<R>(self, f: impl FnOnce(&str) -> R) -> Result<R, InvalidIdentifier> {
        Ok(f(self.as_str()))
    }
}
impl IntoRecordPk for &RecordPk {
    fn into_record_pk(self) -> Result<RecordPk, InvalidIdentifier> {
        Ok(self.clone())
    }
    fn with_pk_str<R>(self, f: impl FnOnce(&str) -> R) -> Result<R, InvalidIdentifier> {
        Ok(f(self.as_str()))
    }
}
impl IntoRecordPk for &str {
    fn into_record_pk(self) -> Result<RecordPk, InvalidIdentifier> {
        RecordPk::new(self)
    }
    fn with_pk_str<R>(self, f: impl FnOnce(&str) -> R) -> Result<R, InvalidIdentifier> {
        RecordPk::check(self)?;
        Ok(f(self))
    }
}
impl IntoRecordPk for String {
    fn into_record_pk(self) -> Result<RecordPk, InvalidIdentifier> {
        RecordPk::new(self)
    }
    fn with_pk_str<R>(self, f: impl FnOnce(&str) -> R) -> Result<R, InvalidIdentifier> {
        self.as_str().with_pk_str(f)
    }
}
impl IntoRecordPk for &String {
    fn into_record_pk(self) -> Result<RecordPk, InvalidIdentifier> {
        RecordPk::new(self.as_str())
    }
    fn with_pk_str<R>(self, f: impl FnOnce(&str) -> R) -> Result<R, InvalidIdentifier> {
        self.as_str().with_pk_str(f)
    }
}

macro_rules! int_pk {
    ($($t:ty),*) => {$(
        impl IntoRecordPk for $t {
            fn into_record_pk(self) -> Result<RecordPk, InvalidIdentifier> {
                Ok(RecordPk(self.to_string()))
            }
            fn with_pk_str<R>(self, f: impl FnOnce(&str) -> R) -> Result<R, InvalidIdentifier> {
                Ok(f(itoa::Buffer::new().format(self)))
            }
        }
    )*};
}
int_pk!(i32, i64, u32, u64, usize);

#[cfg(test)]
mod pk_tests {
    use super::*;

    #[test]
    fn with_pk_str_gives_the_text_of_into_record_pk() {
        fn same(pk: impl IntoRecordPk + Clone + std::fmt::Debug) {
            let text = pk.clone().with_pk_str(str::to_owned).unwrap();
            assert_eq!(
                text,
                pk.clone().into_record_pk().unwrap().as_str(),
                "{pk:?}"
            );
        }
        for n in [0_i64, 1, -1, 9, 10, 42, -42, 1234, i64::MAX, i64::MIN] {
            same(n);
        }
        for n in [0_i32, 7, -7, i32::MAX, i32::MIN] {
            same(n);
        }
        for n in [0_u64, 10, 99, 100, u64::MAX] {
            same(n);
        }
        for n in [0_u32, u32::MAX] {
            same(n);
        }
        for n in [0_usize, 5, usize::MAX] {
            same(n);
        }
        for text in ["a", "a/b", "42", " "] {
            let owned = text.to_owned();
            same(text);
            same(&owned);
            same(owned);
            same(RecordPk::new(text).unwrap());
        }
        for bad in ["", ".", ".."] {
            let want = bad.into_record_pk().unwrap_err();
            assert_eq!(bad.with_pk_str(|_| ()).unwrap_err(), want);
            assert_eq!(bad.to_owned().with_pk_str(|_| ()).unwrap_err(), want);
        }
    }
}
