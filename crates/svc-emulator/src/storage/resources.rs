//! Opening the connected resources of every project: one SQLite database each.
//!
//! Where a resource's database lives:
//! - `database` given: that file (seeded with `seed_sql` when it has no tables yet, else opened
//!   as it is: an existing database's tables become models);
//! - no `database`, emulator data on disk: `<data file>.<project>.<resource>.sqlite`, seeded,
//!   readable by its owner only like the data file (see [`private`]); a `database` file the
//!   emulator creates is created so too, an existing one is left as it is;
//! - everything in memory: an in-memory database, seeded.
//!
//! Every project also has the built-in tools resource `__svc_app__` (users and teams), opened by
//! [`tools::open`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use svc_model::users::TOOLS_RESOURCE;

use crate::config::projects::{ProjectsConfig, ResourceConfig};
use crate::engine::{EngineError, Resource};
use crate::storage::{private, tools};

/// Every served resource, by project and resource name. Built once at start.
#[derive(Debug, Default)]
pub(crate) struct Resources {
    by_project: HashMap<String, HashMap<String, Arc<Resource>>>,
}

impl Resources {
    /// Opens (or creates and seeds) the database of every resource in `config`.
    pub(crate) fn open(config: &ProjectsConfig, data_path: Option<&Path>) -> Result<Self, String> {
        let mut by_project: HashMap<String, HashMap<String, Arc<Resource>>> = HashMap::new();
        for project in &config.projects {
            for resource in &project.resources {
                let opened = open_one(&project.name, resource, data_path).map_err(|e| {
                    format!(
                        "resource {:?} of project {:?}: {e}",
                        resource.name, project.name
                    )
                })?;
                by_project
                    .entry(project.name.clone())
                    .or_default()
                    .insert(resource.name.clone(), Arc::new(opened));
            }
            let tools = tools::open(&project.name, data_path).map_err(|e| {
                format!(
                    "the built-in tools resource of project {:?}: {e}",
                    project.name
                )
            })?;
            by_project
                .entry(project.name.clone())
                .or_default()
                .insert(TOOLS_RESOURCE.to_owned(), Arc::new(tools));
        }
        Ok(Self { by_project })
    }

    /// The resource `name` of `project`.
    pub(crate) fn get(&self, project: &str, name: &str) -> Option<Arc<Resource>> {
        self.by_project.get(project)?.get(name).cloned()
    }
}

fn open_one(
    project: &str,
    resource: &ResourceConfig,
    data_path: Option<&Path>,
) -> Result<Resource, EngineError> {
    let seed = resource.seed_sql.as_deref();
    match (&resource.database, data_path) {
        (Some(path), _) => match seed {
            Some(sql) => {
                private::create_database_if_missing(path).map_err(|e| {
                    EngineError::Internal(format!("cannot create {}: {e}", path.display()))
                })?;
                Resource::seeded(Some(path), sql)
            }
            None => Resource::open(path),
        },
        (None, Some(data)) => {
            seeded_beside(&beside(data, project, &resource.name), seed.unwrap_or(""))
        }
        (None, None) => Resource::in_memory(seed.unwrap_or("")),
    }
}

/// A database of the data path, beside its data file: private like the data file.
pub(super) fn seeded_beside(path: &Path, seed_sql: &str) -> Result<Resource, EngineError> {
    private::private_database(path).map_err(|e| EngineError::Internal(e.to_string()))?;
    Resource::seeded(Some(path), seed_sql)
}

/// `<data file>.<project>.<resource>.sqlite`, with the names reduced to file-safe characters.
pub(super) fn beside(data: &Path, project: &str, resource: &str) -> PathBuf {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut name = data.as_os_str().to_owned();
    name.push(format!(".{}.{}.sqlite", safe(project), safe(resource)));
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_beside_the_data_file_are_file_safe() {
        let p = beside(Path::new("/tmp/emu.sqlite"), "my proj", "shop/../x");
        assert_eq!(p, PathBuf::from("/tmp/emu.sqlite.my_proj.shop____x.sqlite"));
    }
}
