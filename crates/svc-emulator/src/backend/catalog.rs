//! The catalog of served resources: the connected resources of every project, each opened by the [`registry`](super::registry)
//! at start and held as a [`Backend`] trait object.
//!
//! Every project also has the built-in tools resource `__svc_app__` (users and teams), which is
//! a [`ToolsBackend`]: the records routes see it as any other resource, the users and teams
//! routes use its strict writes.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use svc_model::users::TOOLS_RESOURCE;

use crate::backend::registry;
use crate::backend::{Backend, ToolsBackend};
use crate::config::projects::ProjectsConfig;

/// Every served resource, by project and resource name. Built once at start.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    by_project: HashMap<String, HashMap<String, Arc<dyn Backend>>>,
    tools: HashMap<String, Arc<dyn ToolsBackend>>,
}

impl Catalog {
    /// Opens (or creates and seeds) the database of every resource in `config`, and every
    /// project's tools resource.
    pub(crate) async fn open(
        config: &ProjectsConfig,
        data_path: Option<&Path>,
    ) -> Result<Self, String> {
        let mut resources = Self::default();
        for project in &config.projects {
            let served = resources
                .by_project
                .entry(project.name.clone())
                .or_default();
            for resource in &project.resources {
                let opened = registry::open(&project.name, resource, data_path)
                    .await
                    .map_err(|e| {
                        format!(
                            "resource {:?} of project {:?}: {e}",
                            resource.name, project.name
                        )
                    })?;
                served.insert(resource.name.clone(), opened);
            }
            let tools = registry::open_tools(&project.name, data_path)
                .await
                .map_err(|e| {
                    format!(
                        "the built-in tools resource of project {:?}: {e}",
                        project.name
                    )
                })?;
            let as_resource: Arc<dyn Backend> = Arc::clone(&tools) as Arc<dyn Backend>;
            served.insert(TOOLS_RESOURCE.to_owned(), as_resource);
            resources.tools.insert(project.name.clone(), tools);
        }
        Ok(resources)
    }

    /// The resource `name` of `project`.
    pub(crate) fn get(&self, project: &str, name: &str) -> Option<Arc<dyn Backend>> {
        self.by_project.get(project)?.get(name).cloned()
    }

    /// The built-in tools resource of `project`.
    pub(crate) fn tools(&self, project: &str) -> Option<Arc<dyn ToolsBackend>> {
        self.tools.get(project).cloned()
    }
}
