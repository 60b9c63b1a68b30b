//! The databases this build serves resources on, and opening each: the catalog's
//! [`Databases`], and the one module of the emulator that names the database crates. A new
//! database is a crate of its own, a [`Kind`] in svc-emulator-state and a line here.
//!
//! - a file, or no `database` at all: SQLite (svc-emulator-sqlite), the default;
//! - `postgres://` and `postgresql://` URLs: PostgreSQL (svc-emulator-postgres, feature
//!   `postgres`);
//! - `mysql://` and `mariadb://` URLs: MySQL and MariaDB (svc-emulator-mysql, feature `mysql`).

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use svc_emulator_core::backend::Backend;
use svc_emulator_core::location::shown_location;
use svc_emulator_state::catalog::Databases;
use svc_emulator_state::catalog::databases::{Kind, Location, location};
use svc_emulator_state::config::projects::ResourceConfig;
use svc_engine::EngineError;

/// The databases of this build: SQLite always, PostgreSQL and MySQL behind their features.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Built;

impl Databases for Built {
    async fn open(
        &self,
        project: &str,
        resource: &ResourceConfig,
        data_path: Option<&Path>,
    ) -> Result<Arc<dyn Backend>, String> {
        let seed_sql = resource.seed_sql.as_deref();
        let location = location(resource)?;
        match (Kind::of(&location), location) {
            (_, Location::File(path)) => {
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
            (Some(Kind::Postgres), Location::Url(url)) => open_postgres(&url, seed_sql).await,
            (Some(Kind::Mysql), Location::Url(url)) => open_mysql(&url, seed_sql).await,
            (_, Location::Url(url)) => Err(format!(
                "no database of the emulator serves {}: its `database` must be a SQLite file, \
                 a postgres:// URL or a mysql:// (mariadb://) URL",
                shown_location(Path::new(&url))
            )),
        }
    }

    async fn open_tools(
        &self,
        project: &str,
        data_path: Option<&Path>,
    ) -> Result<Arc<dyn Backend>, String> {
        svc_emulator_sqlite::open_tools(project, data_path).await
    }
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

/// The built-in tools resource of a project, as the SQLite resource it always is
/// (`open_tools`): its strict writes, for the users and teams routes (docs/contract.md 5.3).
/// They run on the caller's thread: call them from the blocking pool.
pub(crate) struct ToolsStore(Arc<svc_emulator_sqlite::Resource>);

impl ToolsStore {
    /// The tools resource `db`, as the catalog holds it.
    pub(crate) fn of(db: Arc<dyn Backend>) -> Result<Self, svc_emulator_http::HttpError> {
        let db: Arc<dyn std::any::Any + Send + Sync> = db;
        db.downcast().map(Self).map_err(|_| {
            svc_emulator_http::HttpError::internal("the built-in tools resource is not SQLite's")
        })
    }

    /// Creates a record of `model`, strictly; the record as JSON bytes.
    pub(crate) fn create(&self, model: &str, body: &Value) -> Result<Vec<u8>, EngineError> {
        svc_emulator_sqlite::Resource::create(&self.0, model, body)
    }

    /// Updates the record `pk` of `model` from a partial body, strictly; the record.
    pub(crate) fn update(
        &self,
        model: &str,
        pk: &str,
        body: &Value,
    ) -> Result<Vec<u8>, EngineError> {
        svc_emulator_sqlite::Resource::update(&self.0, model, pk, body)
    }

    /// Deletes the record `pk` of `model`.
    pub(crate) fn delete(&self, model: &str, pk: &str) -> Result<(), EngineError> {
        svc_emulator_sqlite::Resource::delete(&self.0, model, pk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    mod save_restore;

    async fn open(resource: &ResourceConfig) -> Result<Arc<dyn Backend>, String> {
        Built.open("p", resource, None).await
    }

    #[test]
    fn the_tools_seed_holds_the_seeded_teams() {
        let db =
            svc_emulator_sqlite::Resource::in_memory(svc_emulator_sqlite::TOOLS_SEED_SQL).unwrap();
        for (uid, name) in svc_emulator_state::storage::tools::SEEDED_TEAMS {
            let team: serde_json::Value =
                serde_json::from_slice(&db.retrieve(svc_model::users::TEAMS_MODEL, uid).unwrap())
                    .unwrap();
            assert_eq!(team["name"], name);
        }
    }

    #[tokio::test]
    async fn a_mysql_url_that_cannot_be_reached_hides_its_password() {
        let resource =
            ResourceConfig::new("shop", "t").database("mysql://u:Secret4pw@127.0.0.1:1/db");
        let err = open(&resource).await.unwrap_err();
        assert!(!err.contains("Secret4pw"), "{err}");
        assert!(
            err.contains("mysql://u:***@127.0.0.1:1/db") || err.contains("MySQL"),
            "{err}"
        );
    }

    #[tokio::test]
    async fn an_unknown_scheme_is_refused_with_its_password_hidden() {
        let resource = ResourceConfig::new("shop", "t").database("mongodb://u:Secret4pw@h/db");
        let err = open(&resource).await.unwrap_err();
        assert!(err.contains("no database of the emulator serves"), "{err}");
        assert!(err.contains("mongodb://u:***@h/db"), "{err}");
        assert!(!err.contains("Secret4pw"), "{err}");
    }
}
