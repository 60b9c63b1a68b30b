//! What the catalog opens resources with, and the kind of database each location names.
//!
//! The catalog names no database: it is written over [`Databases`], which svc-emulator's
//! `databases` module implements (the one module that names svc-emulator-sqlite, -postgres and
//! -mysql). So this crate compiles beside the database crates rather than after them.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::projects::{ResourceConfig, is_url_text};
use svc_emulator_core::backend::Backend;

/// Opens the databases of resources: SQLite's files, and the servers' URLs its build serves.
pub trait Databases: Sync {
    /// Opens (or creates and seeds) the database of `resource` of `project`; `data_path` is the
    /// emulator's data file, beside which SQLite keeps the files it owns.
    fn open(
        &self,
        project: &str,
        resource: &ResourceConfig,
        data_path: Option<&Path>,
    ) -> impl Future<Output = Result<Arc<dyn Backend>, String>> + Send;

    /// Opens (or creates and seeds) the built-in tools database of `project`: beside the data
    /// file, or in memory when there is none.
    fn open_tools(
        &self,
        project: &str,
        data_path: Option<&Path>,
    ) -> impl Future<Output = Result<Arc<dyn Backend>, String>> + Send;
}

/// Where a resource's database is, once the config and the environment are read. Which
/// database serves it follows from it ([`Kind::of`]): a URL by its scheme, a file (or none) by
/// SQLite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A database file, or the emulator's own place for one (`None`).
    File(Option<PathBuf>),
    /// A connection URL (`scheme://...`).
    Url(String),
}

/// Where `resource`'s database is: from its `database`, or from the environment variable its
/// `database_env` names.
pub fn location(resource: &ResourceConfig) -> Result<Location, String> {
    let from_env;
    let given = match (&resource.database, &resource.database_env) {
        (Some(_), Some(_)) => {
            return Err("give `database` or `database_env`, not both".to_owned());
        }
        (Some(db), None) => Some(db.as_os_str()),
        (None, Some(name)) => {
            from_env = std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .ok_or_else(|| {
                    format!(
                        "`database_env` names the environment variable {name:?}, which is not \
                         set: set it to a postgres:// or mysql:// URL or a SQLite file"
                    )
                })?;
            Some(from_env.as_os_str())
        }
        (None, None) => None,
    };
    Ok(match given {
        Some(text) => match text.to_str() {
            Some(url) if is_url_text(url) => Location::Url(url.to_owned()),
            _ => Location::File(Some(PathBuf::from(text))),
        },
        None => Location::File(None),
    })
}

/// Whether the emulator keeps `resource`'s database itself (no `database`, no
/// `database_env`): in memory or beside its data file. A reset always puts its data back.
pub fn owned_by_emulator(resource: &ResourceConfig) -> bool {
    resource.database.is_none() && resource.database_env.is_none()
}

/// The database a URL names, by its scheme: the schemes each kind takes.
const URL_KINDS: &[(&[&str], Kind)] = &[
    (&["postgres", "postgresql"], Kind::Postgres),
    (&["mysql", "mariadb"], Kind::Mysql),
];

/// The kinds of database a resource can be on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A SQLite file, or memory: a resource with no `database`, or a path.
    Sqlite,
    /// A `postgres://` or `postgresql://` URL.
    Postgres,
    /// A `mysql://` or `mariadb://` URL (MySQL and MariaDB).
    Mysql,
}

impl Kind {
    /// The kind of database `location` names; `None` for a URL of no scheme the emulator serves.
    pub fn of(location: &Location) -> Option<Kind> {
        match location {
            Location::File(_) => Some(Kind::Sqlite),
            Location::Url(url) => {
                let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
                URL_KINDS
                    .iter()
                    .find(|(schemes, _)| schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme)))
                    .map(|(_, kind)| *kind)
            }
        }
    }

    /// The `type` a project shows for its resources of this kind.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sqlite => "sqlite",
            Kind::Postgres => "postgresql",
            Kind::Mysql => "mysql",
        }
    }
}

/// The `type` a project shows for a resource at `location` (`"sqlite"`, `"postgresql"`,
/// `"mysql"`); SQLite's for a URL of a scheme no database serves (such a resource is refused at
/// start).
pub fn kind_name(location: &Location) -> &'static str {
    Kind::of(location).unwrap_or(Kind::Sqlite).name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_location() {
        let url = |u: &str| Location::Url(u.to_owned());
        assert_eq!(kind_name(&Location::File(None)), "sqlite");
        assert_eq!(kind_name(&url("postgres://u@h/db")), "postgresql");
        assert_eq!(kind_name(&url("PostgreSQL://u@h/db")), "postgresql");
        assert_eq!(kind_name(&url("mariadb://u@h/db")), "mysql");
        assert_eq!(kind_name(&url("mysql://u@h/db")), "mysql");
        assert_eq!(Kind::of(&url("mongodb://u@h/db")), None);
    }
}
