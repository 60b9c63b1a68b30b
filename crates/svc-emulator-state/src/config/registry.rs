//! The projects being served, looked up by name, API key or resource token.
//!
//! Built once at start from a validated [`ProjectsConfig`] and never changed while the emulator
//! runs (no route creates projects), so requests read it without locks or database work.

use std::collections::HashMap;
use std::fmt;

use svc_model::users::TOOLS_RESOURCE;
use svc_model::{EnvironmentName, InvalidIdentifier, ProjectName};

use crate::config::actions::WorkflowConfig;
use crate::config::projects::{ConfigError, ProjectsConfig, ResourceConfig};

/// Every served project with its credentials.
pub struct Registry {
    projects: Vec<ProjectEntry>,
    by_api_key: HashMap<String, usize>,
    /// Resource token -> (project index, which resource).
    by_token: HashMap<String, (usize, Slot)>,
}

/// Which resource of a project a token opens.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// A connected resource, by index in the project's resources.
    Resource(usize),
    /// The built-in tools resource `__svc_app__`.
    Tools,
}

/// One served project.
#[derive(Clone)]
pub struct ProjectEntry {
    /// The project's name, as paths carry it.
    pub name: ProjectName,
    /// The name the project list shows.
    pub display_name: String,
    /// The environments, the default one first (never empty).
    pub environments: Vec<EnvironmentName>,
    /// The connected resources, as configured.
    pub resources: Vec<ResourceConfig>,
    /// The built-in tools resource `__svc_app__` (users and teams) with the project's tools
    /// token. Not listed in `resources`, which are the connected ones the project shows.
    pub(crate) tools: ResourceConfig,
    /// The workflows (docs/contract.md 5.6), checked against the resources' actions.
    pub workflows: Vec<WorkflowConfig>,
    /// The accepted API keys (never empty).
    api_keys: Vec<String>,
}

impl Registry {
    /// Builds the registry from a config, which is validated first; `generated_key` gives the key
    /// of a project that lists none.
    pub fn new<E: From<ConfigError>>(
        config: &ProjectsConfig,
        mut generated_key: impl FnMut(&str) -> Result<String, E>,
    ) -> Result<Self, E> {
        config.validate()?;
        let invalid = |e: InvalidIdentifier| ConfigError::Invalid(e.to_string());
        let mut projects = Vec::with_capacity(config.projects.len());
        let mut by_api_key = HashMap::new();
        let mut by_token = HashMap::new();
        for (index, project) in config.projects.iter().enumerate() {
            let api_keys = if project.api_keys.is_empty() {
                vec![generated_key(&project.name)?]
            } else {
                project.api_keys.clone()
            };
            for key in &api_keys {
                by_api_key.insert(key.clone(), index);
            }
            for (r, resource) in project.resources.iter().enumerate() {
                by_token.insert(resource.token.clone(), (index, Slot::Resource(r)));
            }
            // The emulator fills in a generated token before it gets here; a registry built
            // straight from a config without one gets a random token.
            let tools_token = project
                .tools_token
                .clone()
                .unwrap_or_else(|| format!("svc_tools_{}", uuid::Uuid::new_v4().simple()));
            by_token.insert(tools_token.clone(), (index, Slot::Tools));
            projects.push(ProjectEntry {
                name: ProjectName::new(project.name.as_str()).map_err(invalid)?,
                display_name: project
                    .display_name
                    .clone()
                    .unwrap_or_else(|| project.name.clone()),
                environments: project
                    .environments
                    .iter()
                    .map(|e| EnvironmentName::new(e.as_str()).map_err(invalid))
                    .collect::<Result<_, _>>()?,
                resources: project.resources.clone(),
                tools: ResourceConfig::new(TOOLS_RESOURCE, tools_token),
                workflows: project.workflows.clone(),
                api_keys,
            });
        }
        Ok(Self {
            projects,
            by_api_key,
            by_token,
        })
    }

    /// The default project: the first one.
    pub fn default_project(&self) -> Option<&ProjectEntry> {
        self.projects.first()
    }

    /// Every project's unique name, in config order (the default one first).
    pub fn project_names(&self) -> Vec<String> {
        self.projects
            .iter()
            .map(|p| p.name.as_str().to_owned())
            .collect()
    }

    /// A project by its unique name.
    pub fn project(&self, name: &str) -> Option<&ProjectEntry> {
        self.projects.iter().find(|p| p.name.as_str() == name)
    }

    /// Every served project, the default one first.
    pub fn projects(&self) -> &[ProjectEntry] {
        &self.projects
    }

    /// Every credential the config holds or generated: the API keys, the resources' tokens and
    /// the tools tokens (what the request journal never shows).
    pub fn secrets(&self) -> impl Iterator<Item = &str> {
        self.by_api_key
            .keys()
            .chain(self.by_token.keys())
            .map(String::as_str)
    }

    /// The project an API key belongs to.
    pub fn project_for_api_key(&self, key: &str) -> Option<&ProjectEntry> {
        self.by_api_key.get(key).and_then(|&i| self.projects.get(i))
    }

    /// The project and resource a resource token belongs to.
    pub fn resource_for_token(&self, token: &str) -> Option<(&ProjectEntry, &ResourceConfig)> {
        let &(p, slot) = self.by_token.get(token)?;
        let project = self.projects.get(p)?;
        let resource = match slot {
            Slot::Resource(r) => project.resources.get(r)?,
            Slot::Tools => &project.tools,
        };
        Some((project, resource))
    }
}

impl ProjectEntry {
    /// The default environment: the first one.
    pub fn default_environment(&self) -> Option<&EnvironmentName> {
        self.environments.first()
    }

    /// An environment by name.
    pub fn environment(&self, name: &str) -> Option<&EnvironmentName> {
        self.environments.iter().find(|e| e.as_str() == name)
    }

    /// A resource by its API name, the built-in tools resource `__svc_app__` included.
    pub fn resource(&self, name: &str) -> Option<&ResourceConfig> {
        if name == TOOLS_RESOURCE {
            return Some(&self.tools);
        }
        self.resources.iter().find(|r| r.name == name)
    }

    /// Every resource with its token: the connected ones, then `__svc_app__`.
    pub fn all_resources(&self) -> impl Iterator<Item = &ResourceConfig> {
        self.resources.iter().chain(std::iter::once(&self.tools))
    }

    /// The first accepted API key, the one reported at start.
    pub fn primary_api_key(&self) -> &str {
        self.api_keys
            .first()
            .map(String::as_str)
            .unwrap_or_default()
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("projects", &self.projects)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for ProjectEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProjectEntry")
            .field("name", &self.name)
            .field("environments", &self.environments)
            .field("resources", &self.resources)
            .field(
                "api_keys",
                &format_args!("[{} redacted]", self.api_keys.len()),
            )
            .finish()
    }
}
