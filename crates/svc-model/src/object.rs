//! The open JSON object behind [`PageSettings`](crate::PageSettings) and
//! [`Project`](crate::Project): every field is kept, known ones get typed accessors.

use serde_json::{Map, Value};

/// Shared accessors of an open JSON object.
pub(crate) fn str_field<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key)?.as_str()
}

pub(crate) fn bool_field(map: &Map<String, Value>, key: &str) -> Option<bool> {
    map.get(key)?.as_bool()
}

/// Implements the map-like plumbing shared by open objects.
macro_rules! open_object {
    ($name:ident) => {
        impl $name {
            /// Any field, known or not.
            pub fn get(&self, key: &str) -> Option<&serde_json::Value> {
                self.0.get(key)
            }

            /// Sets any field, known or not, and returns the object (builder style).
            pub fn with(
                mut self,
                key: impl Into<String>,
                value: impl Into<serde_json::Value>,
            ) -> Self {
                self.0.insert(key.into(), value.into());
                self
            }

            /// Sets any field, known or not.
            pub fn insert(&mut self, key: impl Into<String>, value: impl Into<serde_json::Value>) {
                self.0.insert(key.into(), value.into());
            }

            /// Every field, as received.
            pub fn fields(&self) -> &serde_json::Map<String, serde_json::Value> {
                &self.0
            }

            /// Unwraps the JSON object.
            pub fn into_map(self) -> serde_json::Map<String, serde_json::Value> {
                self.0
            }
        }

        impl From<serde_json::Map<String, serde_json::Value>> for $name {
            fn from(map: serde_json::Map<String, serde_json::Value>) -> Self {
                Self(map)
            }
        }

        impl TryFrom<serde_json::Value> for $name {
            type Error = serde_json::Value;
            /// Accepts a JSON object; gives any other value back.
            fn try_from(value: serde_json::Value) -> Result<Self, Self::Error> {
                match value {
                    serde_json::Value::Object(map) => Ok(Self(map)),
                    other => Err(other),
                }
            }
        }

        impl From<$name> for serde_json::Value {
            fn from(obj: $name) -> Self {
                serde_json::Value::Object(obj.0)
            }
        }
    };
}
pub(crate) use open_object;
