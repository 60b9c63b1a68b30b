//! Which database serves a resource, chosen from its location at start, and opening it. With
//! the catalog around it (`catalog/mod.rs`), this is the one place above the databases that
//! names them; a new database is a folder of its own plus a line here.
//!
//! - a file, or no `database` at all: SQLite (svc-emulator-sqlite), the default;
//! - `postgres://` and `postgresql://` URLs: PostgreSQL (`crate::postgres`, feature `postgres`);
//! - `mysql://` and `mariadb://` URLs: MySQL and MariaDB (`crate::mysql`, feature `mysql`).

use std::path::Path;
use std::sync::Arc;

use crate::config::projects::{Location, ResourceConfig};
use svc_emulator_core::backend::{Backend, ToolsBackend};
use svc_emulator_core::location::shown_location;

/// The databases that serve URLs: the schemes each takes, and the `type` a project shows for
/// its resources. Files are SQLite's ([`FILE_KIND`]).
const URL_KINDS: &[(&[&str], &str)] = &[
    (&["postgres", "postgresql"], "postgresql"),
    (&["mysql", "mariadb"], "mysql"),
];

/// The `type` of a resource whose database is a file.
const FILE_KIND: &str = "sqlite";

/// The `type` a project shows for a resource at `location` (`"sqlite"`, `"postgresql"`,
/// `"mysql"`).
pub fn kind_name(location: &Location) -> &'static str {
    match location {
        Location::File(_) => FILE_KIND,
        Location::Url(url) => url_kind(url).unwrap_or(FILE_KIND),
    }
}

fn url_kind(url: &str) -> Option<&'static str> {
    let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
    URL_KINDS
        .iter()
        .find(|(schemes, _)| schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme)))
        .map(|(_, kind)| *kind)
}

/// Opens (or creates and seeds) the database of `resource` of `project`.
pub(crate) async fn open(
    project: &str,
    resource: &ResourceConfig,
    data_path: Option<&Path>,
) -> Result<Arc<dyn Backend>, String> {
    let seed_sql = resource.seed_sql.as_deref();
    match resource.location()? {
        Location::File(path) => {
            let opened = svc_emulator_sqlite::open_file(
                project,
                &resource.name,
                seed_sql,
                path.as_deref(),
                data_path,
            )
            .await?;
            Ok(opened)
        }
        Location::Url(url) => match url_kind(&url) {
            Some("postgresql") => open_postgres(&url, seed_sql).await,
            Some("mysql") => open_mysql(&url, seed_sql).await,
            _ => Err(format!(
                "no database of the emulator serves {}: its `database` must be a SQLite file, \
                 a postgres:// URL or a mysql:// (mariadb://) URL",
                shown_location(Path::new(&url))
            )),
        },
    }
}

/// Opens (or creates and seeds) the built-in tools database of `project`: beside the data file,
/// or in memory when there is none.
pub(crate) async fn open_tools(
    project: &str,
    data_path: Option<&Path>,
) -> Result<Arc<dyn ToolsBackend>, String> {
    svc_emulator_sqlite::open_tools(project, data_path).await
}

#[cfg(feature = "postgres")]
async fn open_postgres(url: &str, seed_sql: Option<&str>) -> Result<Arc<dyn Backend>, String> {
    let opened = svc_emulator_postgres::PgResource::open(url, seed_sql)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(opened))
}

#[cfg(not(feature = "postgres"))]
async fn open_postgres(_url: &str, _seed_sql: Option<&str>) -> Result<Arc<dyn Backend>, String> {
    Err(
        "its database is a PostgreSQL URL, but this emulator was built without PostgreSQL \
         support: enable svc-emulator's `postgres` feature (the `svc` command and the \
         svc-emulator binary have it)"
            .to_owned(),
    )
}

#[cfg(feature = "mysql")]
async fn open_mysql(url: &str, seed_sql: Option<&str>) -> Result<Arc<dyn Backend>, String> {
    let opened = svc_emulator_mysql::MyResource::open(url, seed_sql)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Arc::new(opened))
}

#[cfg(not(feature = "mysql"))]
async fn open_mysql(_url: &str, _seed_sql: Option<&str>) -> Result<Arc<dyn Backend>, String> {
    Err(
        "its database is a MySQL URL, but this emulator was built without MySQL support: \
         enable svc-emulator's `mysql` feature (the `svc` command and the svc-emulator binary \
         have it)"
            .to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_location() {
        assert_eq!(kind_name(&Location::File(None)), "sqlite");
        assert_eq!(
            kind_name(&Location::Url("postgres://u@h/db".to_owned())),
            "postgresql"
        );
        assert_eq!(
            kind_name(&Location::Url("PostgreSQL://u@h/db".to_owned())),
            "postgresql"
        );
        assert_eq!(
            kind_name(&Location::Url("mariadb://u@h/db".to_owned())),
            "mysql"
        );
        assert_eq!(
            kind_name(&Location::Url("mysql://u@h/db".to_owned())),
            "mysql"
        );
    }

    #[tokio::test]
    async fn a_mysql_url_that_cannot_be_reached_hides_its_password() {
        let resource =
            ResourceConfig::new("shop", "t").database("mysql://u:Secret4pw@127.0.0.1:1/db");
        let err = open("p", &resource, None).await.unwrap_err();
        assert!(!err.contains("Secret4pw"), "{err}");
        assert!(
            err.contains("mysql://u:***@127.0.0.1:1/db") || err.contains("MySQL"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn an_unknown_scheme_is_refused_with_its_password_hidden() {
        let resource = ResourceConfig::new("shop", "t").database("mongodb://u:Secret4pw@h/db");
        let err = open("p", &resource, None).await.unwrap_err();
        assert!(err.contains("no database of the emulator serves"), "{err}");
        assert!(err.contains("mongodb://u:***@h/db"), "{err}");
        assert!(!err.contains("Secret4pw"), "{err}");
    }
}
