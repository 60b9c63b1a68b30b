//! Where a SQLite resource's database lives, and opening it:
//!
//! - `database` given: that file (seeded with `seed_sql` when it has no tables yet, else opened
//!   as it is: an existing database's tables become models);
//! - no `database`, emulator data on disk: `<data file>.<project>.<resource>.sqlite`, seeded,
//!   readable by its owner only like the data file (see [`private`]); a `database` file the
//!   emulator creates is created so too, an existing one is left as it is;
//! - everything in memory: an in-memory database, seeded.
//!
//! The built-in tools resource `__svc_app__` of every project lives beside the data file as
//! `<data file>.<project>.__svc_app__.sqlite`, or in memory, seeded the first time.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use svc_model::users::TOOLS_RESOURCE;

use crate::backend::{Backend, ToolsBackend};
use crate::engine::EngineError;
use crate::sqlite::Resource;
use crate::storage::private;
use crate::storage::tools::TOOLS_SEED_SQL;

/// Opens the SQLite database of resource `resource` of `project` (off the async threads).
pub(crate) async fn open_file(
    project: &str,
    resource: &str,
    seed_sql: Option<&str>,
    database: Option<&Path>,
    data_path: Option<&Path>,
) -> Result<Arc<dyn Backend>, String> {
    let (project, resource) = (project.to_owned(), resource.to_owned());
    let seed_sql = seed_sql.map(str::to_owned);
    let database = database.map(Path::to_owned);
    let data_path = data_path.map(Path::to_owned);
    let opened = tokio::task::spawn_blocking(move || {
        open_one(
            &project,
            &resource,
            seed_sql.as_deref(),
            database.as_deref(),
            data_path.as_deref(),
        )
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(opened))
}

/// Opens (or creates and seeds) the tools database of `project`.
pub(crate) async fn open_tools(
    project: &str,
    data_path: Option<&Path>,
) -> Result<Arc<dyn ToolsBackend>, String> {
    let project = project.to_owned();
    let data_path = data_path.map(Path::to_owned);
    let opened = tokio::task::spawn_blocking(move || {
        match data_path {
            Some(data) => seeded_beside(&beside(&data, &project, TOOLS_RESOURCE), TOOLS_SEED_SQL),
            None => Resource::in_memory(TOOLS_SEED_SQL),
        }
        // Its date-times are RFC 3339 text, which the data engine's reading would refuse.
        .map(Resource::showing_stored_values)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(opened))
}

fn open_one(
    project: &str,
    resource: &str,
    seed: Option<&str>,
    database: Option<&Path>,
    data_path: Option<&Path>,
) -> Result<Resource, EngineError> {
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
        (None, Some(data)) => seeded_beside(&beside(data, project, resource), seed.unwrap_or("")),
        (None, None) => Resource::in_memory(seed.unwrap_or("")),
    }
}

/// A database of the data path, beside its data file: private like the data file.
fn seeded_beside(path: &Path, seed_sql: &str) -> Result<Resource, EngineError> {
    private::private_database(path).map_err(|e| EngineError::Internal(e.to_string()))?;
    Resource::seeded(Some(path), seed_sql)
}

/// `<data file>.<project>.<resource>.sqlite`, with the names reduced to file-safe characters.
fn beside(data: &Path, project: &str, resource: &str) -> PathBuf {
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
