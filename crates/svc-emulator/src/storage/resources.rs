//! Opening the connected resources of every project: one SQLite database each, or a
//! PostgreSQL database.
//!
//! Where a resource's database lives:
//! - `database` (or the environment variable `database_env` names) a `postgres://` or
//!   `postgresql://` URL: that PostgreSQL database (feature `postgres`), seeded with `seed_sql`
//!   when its schema has no table yet;
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

use crate::config::projects::{Location, ProjectsConfig, ResourceConfig};
use crate::engine::{EngineError, Resource};
use crate::storage::{private, tools};

/// A resource's database: SQLite (the records engine, [`Resource`]) or PostgreSQL.
#[derive(Debug, Clone)]
pub(crate) enum Database {
    /// A SQLite database: the engine runs on the blocking pool.
    Sqlite(Arc<Resource>),
    /// A PostgreSQL database (async, pooled).
    #[cfg(feature = "postgres")]
    Postgres(Arc<crate::postgres::PgResource>),
}

impl Database {
    /// The address of the database handle: the same for every request on one resource.
    pub(crate) fn key(&self) -> usize {
        match self {
            Database::Sqlite(db) => Arc::as_ptr(db) as usize,
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Arc::as_ptr(db) as usize,
        }
    }

    /// Whether the resource has a model of that name.
    pub(crate) fn has_model(&self, name: &str) -> bool {
        match self {
            Database::Sqlite(db) => db.model(name).is_some(),
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => db.has_model(name),
        }
    }

    /// The SQLite database, for the built-in tools resource (always SQLite).
    pub(crate) fn sqlite(&self) -> Option<&Arc<Resource>> {
        match self {
            Database::Sqlite(db) => Some(db),
            #[cfg(feature = "postgres")]
            Database::Postgres(_) => None,
        }
    }
}

/// Every served resource, by project and resource name. Built once at start.
#[derive(Debug, Default)]
pub(crate) struct Resources {
    by_project: HashMap<String, HashMap<String, Database>>,
}

impl Resources {
    /// Opens (or creates and seeds) the database of every resource in `config`.
    pub(crate) async fn open(
        config: &ProjectsConfig,
        data_path: Option<&Path>,
    ) -> Result<Self, String> {
        let mut by_project: HashMap<String, HashMap<String, Database>> = HashMap::new();
        for project in &config.projects {
            for resource in &project.resources {
                let context = |e: String| {
                    format!(
                        "resource {:?} of project {:?}: {e}",
                        resource.name, project.name
                    )
                };
                let opened = match resource.location().map_err(context)? {
                    Location::Postgres(url) => open_postgres(&url, resource.seed_sql.as_deref())
                        .await
                        .map_err(context)?,
                    Location::Sqlite(path) => {
                        let project = project.name.clone();
                        let resource = resource.clone();
                        let data_path = data_path.map(Path::to_owned);
                        tokio::task::spawn_blocking(move || {
                            open_one(&project, &resource, path.as_deref(), data_path.as_deref())
                        })
                        .await
                        .map_err(|e| context(e.to_string()))?
                        .map(|db| Database::Sqlite(Arc::new(db)))
                        .map_err(|e| context(e.to_string()))?
                    }
                };
                by_project
                    .entry(project.name.clone())
                    .or_default()
                    .insert(resource.name.clone(), opened);
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
                .insert(TOOLS_RESOURCE.to_owned(), Database::Sqlite(Arc::new(tools)));
        }
        Ok(Self { by_project })
    }

    /// The resource `name` of `project`.
    pub(crate) fn get(&self, project: &str, name: &str) -> Option<Database> {
        self.by_project.get(project)?.get(name).cloned()
    }
}

#[cfg(feature = "postgres")]
async fn open_postgres(url: &str, seed_sql: Option<&str>) -> Result<Database, String> {
    crate::postgres::PgResource::open(url, seed_sql)
        .await
        .map(|db| Database::Postgres(Arc::new(db)))
        .map_err(|e| e.to_string())
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(url: &str, _seed_sql: Option<&str>) -> Result<Database, String> {
    let _ = url;
    Err(
        "its database is a PostgreSQL URL, but this emulator was built without PostgreSQL \
         support: enable svc-emulator's `postgres` feature (the `svc` command and the \
         svc-emulator binary have it)"
            .to_owned(),
    )
}

fn open_one(
    project: &str,
    resource: &ResourceConfig,
    database: Option<&Path>,
    data_path: Option<&Path>,
) -> Result<Resource, EngineError> {
    let seed = resource.seed_sql.as_deref();
    match (database, data_path) {
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
