//! The resources of the emulator by name, each with its static token.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, RwLock};

use crate::records::error::RecordsError;
use crate::records::resource::Resource;
use crate::records::seed::{DEMO_RESOURCE, demo_resource};

/// A resource registered under a name, with its static API token.
pub struct RegisteredResource {
    name: String,
    token: String,
    resource: Resource,
}

impl fmt::Debug for RegisteredResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredResource")
            .field("name", &self.name)
            .field("token", &"<redacted>")
            .field("resource", &self.resource)
            .finish()
    }
}

impl RegisteredResource {
    /// The resource's API name (the path segment).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The static API token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The database.
    pub fn resource(&self) -> &Resource {
        &self.resource
    }

    /// Whether `candidate` is this resource's token, compared in constant time for tokens of
    /// the same length.
    pub fn token_matches(&self, candidate: &str) -> bool {
        let (a, b) = (self.token.as_bytes(), candidate.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

/// The resources of the emulator, by name. Shared between threads; resources can be added
/// and removed at any time.
#[derive(Debug, Default)]
pub struct Registry {
    entries: RwLock<BTreeMap<String, Arc<RegisteredResource>>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry holding the demo resource [`DEMO_RESOURCE`] (`shop`, in memory) with `token`.
    pub fn with_demo(token: impl Into<String>) -> Result<Self, RecordsError> {
        let registry = Self::new();
        registry.insert(DEMO_RESOURCE, token, demo_resource()?);
        Ok(registry)
    }

    /// Registers `resource` under `name`, replacing any resource of that name.
    pub fn insert(
        &self,
        name: impl Into<String>,
        token: impl Into<String>,
        resource: Resource,
    ) -> Arc<RegisteredResource> {
        let entry = Arc::new(RegisteredResource {
            name: name.into(),
            token: token.into(),
            resource,
        });
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(entry.name.clone(), entry.clone());
        entry
    }

    /// Removes and returns the resource named `name`.
    pub fn remove(&self, name: &str) -> Option<Arc<RegisteredResource>> {
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name)
    }

    /// The resource named `name`.
    pub fn get(&self, name: &str) -> Option<Arc<RegisteredResource>> {
        self.entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    /// The resource whose token is `token`, if any (to tell unknown credentials, `401`, from
    /// a valid token of another resource, `403`).
    pub fn find_by_token(&self, token: &str) -> Option<Arc<RegisteredResource>> {
        self.entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .find(|e| e.token_matches(token))
            .cloned()
    }

    /// The names of every resource, sorted.
    pub fn names(&self) -> Vec<String> {
        self.entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect()
    }
}
