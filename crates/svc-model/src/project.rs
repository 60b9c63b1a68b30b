//! Projects.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::object::{open_object, str_field};

/// A project: an open JSON object that keeps every field, with typed accessors for the known
/// ones.
///
/// ```
/// use svc_model::Project;
/// let p: Project = serde_json::from_str(r#"{
///     "unique_name": "demo", "name": "Demo",
///     "environments": [{"unique_name": "prod", "name": "Production"}],
///     "resources": [{"unique_name": "shop", "name": "Shop", "type": "sqlite"}],
///     "owner": "kept too"
/// }"#).unwrap();
/// assert_eq!(p.unique_name(), Some("demo"));
/// assert_eq!(p.environments()[0].unique_name, "prod");
/// assert_eq!(p.resources()[0].kind.as_deref(), Some("sqlite"));
/// assert_eq!(p.get("owner").unwrap(), "kept too");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Project(Map<String, Value>);

open_object!(Project);

/// An environment as listed in a project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProjectEnvironment {
    /// The name used in paths, e.g. `prod`.
    pub unique_name: String,
    /// The human-readable name.
    #[serde(default)]
    pub name: Option<String>,
}

/// A resource as listed in a project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProjectResource {
    /// The name used in paths.
    pub unique_name: String,
    /// The human-readable name.
    #[serde(default)]
    pub name: Option<String>,
    /// The resource type, e.g. `sqlite`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
}

impl ProjectEnvironment {
    /// An environment named `unique_name` (the name used in paths), with no display name.
    pub fn new(unique_name: impl Into<String>) -> Self {
        Self {
            unique_name: unique_name.into(),
            name: None,
        }
    }

    /// With a human-readable name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

impl ProjectResource {
    /// A resource named `unique_name` (the name used in paths), with no display name or type.
    pub fn new(unique_name: impl Into<String>) -> Self {
        Self {
            unique_name: unique_name.into(),
            name: None,
            kind: None,
        }
    }

    /// With a human-readable name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// With a resource type, e.g. `sqlite`.
    pub fn with_kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self
    }
}

impl Project {
    /// `unique_name`, the name used in paths.
    pub fn unique_name(&self) -> Option<&str> {
        str_field(&self.0, "unique_name")
    }

    /// `name`, the human-readable name.
    pub fn name(&self) -> Option<&str> {
        str_field(&self.0, "name")
    }

    /// `url`.
    pub fn url(&self) -> Option<&str> {
        str_field(&self.0, "url")
    }

    /// `default_environment`.
    pub fn default_environment(&self) -> Option<&str> {
        str_field(&self.0, "default_environment")
    }

    /// `params`, free-form project settings.
    pub fn params(&self) -> Option<&Value> {
        self.0.get("params")
    }

    /// The environments; entries of an unexpected shape are skipped.
    pub fn environments(&self) -> Vec<ProjectEnvironment> {
        list_of(self.0.get("environments"))
    }

    /// The resources; entries of an unexpected shape are skipped.
    pub fn resources(&self) -> Vec<ProjectResource> {
        list_of(self.0.get("resources"))
    }
}

fn list_of<T: serde::de::DeserializeOwned>(value: Option<&Value>) -> Vec<T> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(|v| T::deserialize(v).ok())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_items_are_built_with_constructors() {
        let env = ProjectEnvironment::new("prod").with_name("Production");
        assert_eq!(
            serde_json::to_value(&env).unwrap(),
            serde_json::json!({"unique_name": "prod", "name": "Production"})
        );
        let resource = ProjectResource::new("shop").with_kind("sqlite");
        assert_eq!(resource.unique_name, "shop");
        assert_eq!(resource.name, None);
        assert_eq!(
            serde_json::to_value(&resource).unwrap(),
            serde_json::json!({"unique_name": "shop", "name": null, "type": "sqlite"})
        );
    }

    #[test]
    fn odd_shapes_do_not_panic() {
        let p: Project = serde_json::from_str(
            r#"{"environments": "nope", "resources": [1, {"unique_name": "r"}]}"#,
        )
        .unwrap();
        assert!(p.environments().is_empty());
        assert_eq!(p.resources().len(), 1);
        assert!(p.unique_name().is_none());
    }
}
