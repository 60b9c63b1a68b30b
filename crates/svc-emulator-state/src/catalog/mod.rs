//! The catalog of served resources: the connected resources of every project, each opened at
//! start through [`Databases`] and held as a [`Backend`] trait object.
//!
//! Every project also has the built-in tools resource `__svc_app__` (users and teams), which is
//! always SQLite's: the records routes see it as any other resource, the users and teams
//! routes use its strict writes (svc-emulator-http's `tools`).

pub mod databases;
pub mod fixtures;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use svc_model::users::TOOLS_RESOURCE;

use crate::config::projects::ProjectsConfig;
use svc_emulator_core::backend::Backend;

pub use databases::Databases;
use databases::owned_by_emulator;

/// Every served resource, by project and resource name. Built once at start.
#[derive(Debug, Default)]
pub struct Catalog {
    by_project: HashMap<String, HashMap<String, Arc<dyn Backend>>>,
    /// The resources of each project that its resets put back, by name, sorted: the tools
    /// resource, every resource whose database the emulator keeps, and those opted in
    /// (`ResourceConfig::reset`). The others a reset leaves as they are.
    reset: HashMap<String, Vec<String>>,
}

impl Catalog {
    /// Opens (or creates and seeds) the database of every resource in `config`, and every
    /// project's tools resource, with `databases`.
    pub async fn open(
        config: &ProjectsConfig,
        data_path: Option<&Path>,
        databases: &impl Databases,
    ) -> Result<Self, String> {
        let mut resources = Self::default();
        for project in &config.projects {
            let served = resources
                .by_project
                .entry(project.name.clone())
                .or_default();
            for resource in &project.resources {
                let opened = databases
                    .open(&project.name, resource, data_path)
                    .await
                    .map_err(|e| {
                        format!(
                            "resource {:?} of project {:?}: {e}",
                            resource.name, project.name
                        )
                    })?;
                served.insert(resource.name.clone(), opened);
                if resource.reset || owned_by_emulator(resource) {
                    resources
                        .reset
                        .entry(project.name.clone())
                        .or_default()
                        .push(resource.name.clone());
                }
            }
            let tools = databases
                .open_tools(&project.name, data_path)
                .await
                .map_err(|e| {
                    format!(
                        "the built-in tools resource of project {:?}: {e}",
                        project.name
                    )
                })?;
            served.insert(TOOLS_RESOURCE.to_owned(), tools);
            let reset = resources.reset.entry(project.name.clone()).or_default();
            reset.push(TOOLS_RESOURCE.to_owned());
            reset.sort();
        }
        Ok(resources)
    }

    /// The resource `name` of `project`.
    pub fn get(&self, project: &str, name: &str) -> Option<Arc<dyn Backend>> {
        self.by_project.get(project)?.get(name).cloned()
    }

    /// The resources of `project` that its resets put back, by name, sorted: the tools
    /// resource, every resource whose database the emulator keeps, and those opted in.
    pub(crate) fn reset_with(&self, project: &str) -> Vec<(String, Arc<dyn Backend>)> {
        let names = self
            .reset
            .get(project)
            .map(Vec::as_slice)
            .unwrap_or_default();
        names
            .iter()
            .filter_map(|name| Some((name.clone(), self.get(project, name)?)))
            .collect()
    }

    /// The resources of `project` that its resets leave as they are, by name, sorted.
    pub(crate) fn kept_by_reset(&self, project: &str) -> Vec<String> {
        let reset = self
            .reset
            .get(project)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut kept: Vec<String> = self
            .by_project
            .get(project)
            .into_iter()
            .flat_map(HashMap::keys)
            .filter(|name| !reset.contains(name))
            .cloned()
            .collect();
        kept.sort();
        kept
    }

    /// The built-in tools resource of `project`.
    pub fn tools(&self, project: &str) -> Option<Arc<dyn Backend>> {
        self.get(project, TOOLS_RESOURCE)
    }
}
