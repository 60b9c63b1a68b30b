//! Planning an import: each project's files read and checked, and what its resources and its
//! page settings and accounts hold already, before anything is written: what the import
//! writes, and what it leaves as `--import-on-rows` says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::layout::{
    Manifest, NOT_WRITTEN_BY_AN_EXPORT, ResourceFile, file_name, files_error, name_in,
    project_folder,
};
use super::read::{JSON_LIMIT, RECORDS_LIMIT, Reader, read_export_file, read_json};
use crate::catalog::Catalog;
use crate::catalog::fixtures::{check_fields, has_records};
use crate::config::fixtures::read::parse;
use crate::config::fixtures::{FixtureError, FixtureFile, Format};
use crate::config::import::ImportOnRows;
use crate::snapshot::{SnapshotError, no_hold};
use crate::storage::tools::SEEDED_TEAMS;
use crate::storage::{Store, StoreRows};
use svc_emulator_core::backend::{Backend, Import};
use svc_engine::{ListSpec, Listing, Selection};
use svc_model::users::{TEAMS_MODEL, TOOLS_RESOURCE};

/// What an import writes, read and checked whole before anything is written.
pub(super) enum Write {
    /// A resource's records.
    Resource {
        resource: String,
        db: Arc<dyn Backend>,
        import: Import,
    },
    /// A project's page settings and accounts.
    Store {
        rows: BTreeMap<String, StoreRows>,
        replace: bool,
    },
}

/// One project of an import: what it writes, and what it leaves as `--import-on-rows` says.
pub(super) struct Planned {
    pub(super) project: String,
    pub(super) folder: PathBuf,
    /// Each write, or the line of what was left.
    pub(super) items: Vec<Result<Write, String>>,
}

/// Reads and checks `project`'s files, and what it holds already: what its import writes.
pub(super) fn plan_project(
    dir: &Path,
    manifest: &Manifest,
    project: &str,
    catalog: &Catalog,
    store: &Store,
    on_rows: ImportOnRows,
    reader: &mut Reader,
) -> Result<Planned, SnapshotError> {
    let (folder, file) = project_folder(dir, manifest, project, reader)?;
    reader.note_dir(&folder, false);
    if catalog.tools(project).is_none() {
        return Err(files_error(
            &folder,
            format!(
                "the export holds project {project:?}, which this emulator does not serve: \
                 start it with the config the export was made with"
            ),
        ));
    }
    // Only what an export holds is written: the resources a reset puts back (the emulator's
    // own databases, and those opted in with `reset`). The others are the user's, left as they
    // are whatever the export says (its `project.json` may have been changed by hand, or the
    // config since): decided here, before any database is read or written.
    let reset: Vec<String> = catalog
        .reset_with(project)
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    let project_json = folder.join("project.json");
    for resource in file.resources.keys() {
        if !reset.contains(resource) && catalog.get(project, resource).is_some() {
            return Err(files_error(
                &project_json,
                format!(
                    "resource {resource:?} is kept (a database you gave without reset); an \
                     import leaves it as it is, and this export holds records of it (its \
                     project.json was changed, or the export is of a config where it had \
                     \"reset\": true): take it out of the export, or give it \"reset\": true \
                     in the config to have an import replace its data"
                ),
            ));
        }
    }
    let records = folder.join("records");
    if !file.resources.is_empty() {
        reader.note_dir(&records, false);
    }
    let mut items = Vec::new();
    for (resource, models) in &file.resources {
        let db = catalog.get(project, resource).ok_or_else(|| {
            files_error(
                &project_json,
                format!(
                    "the export holds resource {resource:?} of project {project:?}, which this \
                     emulator does not serve"
                ),
            )
        })?;
        let records_dir = records.join(name_in(resource, "resource", &project_json)?);
        reader.note_dir(&records_dir, false);
        let within = Within {
            resource,
            records_dir: &records_dir,
            project_json: &project_json,
        };
        items.push(plan_resource(db, &within, models, on_rows, reader)?);
    }
    let store_path = folder.join("store.json");
    let rows: BTreeMap<String, StoreRows> = read_json(&store_path, JSON_LIMIT, reader)?;
    store
        .check_import(&rows)
        .map_err(|e| files_error(&store_path, e.to_string()))?;
    items.push(plan_store(store, project, rows, on_rows)?);
    Ok(Planned {
        project: project.to_owned(),
        folder,
        items,
    })
}

/// Where a resource's records are in an export.
struct Within<'a> {
    /// The resource.
    resource: &'a str,
    /// Its folder of records, `records/<resource>`.
    records_dir: &'a Path,
    /// The `project.json` that names its models.
    project_json: &'a Path,
}

/// Reads and checks one resource's records from its folder: what its import writes, or the
/// line saying it is left as it is.
fn plan_resource(
    db: Arc<dyn Backend>,
    within: &Within<'_>,
    file: &ResourceFile,
    on_rows: ImportOnRows,
    reader: &mut Reader,
) -> Result<Result<Write, String>, SnapshotError> {
    let Within {
        resource,
        records_dir,
        project_json,
    } = *within;
    let runtime = tokio::runtime::Handle::current();
    let in_resource = |e: FixtureError| SnapshotError::Files {
        path: records_dir.to_owned(),
        message: e.in_resource(resource).to_string(),
    };
    let mut models = Vec::new();
    let mut held = Vec::new();
    for model in &file.models {
        let name = file_name(model, "model").map_err(|why| {
            files_error(
                project_json,
                format!("resource {resource:?}: {why}: {NOT_WRITTEN_BY_AN_EXPORT}"),
            )
        })?;
        let path = records_dir.join(format!("{name}.json"));
        let fixture = FixtureFile {
            model: model.clone(),
            path: path.clone(),
            format: Format::Json,
        };
        if !db.has_model(model) {
            return Err(in_resource(
                FixtureError::new(&path, format!("the resource has no model {model:?}")).hint(
                    format!(
                        "its models: {}; import into the schema the export was made from",
                        db.model_names().join(", ")
                    ),
                ),
            ));
        }
        let bytes = read_export_file(&path, RECORDS_LIMIT, reader)
            .map_err(|e| in_resource(FixtureError::new(&path, e.to_string()).for_model(model)))?;
        let records = parse(&fixture, bytes).map_err(in_resource)?;
        check_fields(db.as_ref(), &fixture, &records).map_err(in_resource)?;
        let rows =
            runtime
                .block_on(has_records(&db, model))
                .map_err(|error| SnapshotError::Resource {
                    resource: resource.to_owned(),
                    error,
                })?;
        if rows && !(resource == TOOLS_RESOURCE && only_seeded_teams(&db, model)?) {
            held.push(model.clone());
        }
        models.push((
            model.clone(),
            records.records.into_iter().map(|r| r.body).collect(),
        ));
    }
    // The built-in teams every start seeds are the emulator's, and the export's too: written
    // over, not counted as rows there.
    let seeded = resource == TOOLS_RESOURCE;
    let replace = match (held.is_empty(), on_rows) {
        (true, _) => seeded,
        (false, ImportOnRows::Stop) => {
            return Err(SnapshotError::Files {
                path: records_dir.to_owned(),
                message: format!(
                    "resource {resource:?}: {} already {} records (rows of seed_sql or \
                     fixtures, or a database kept from an earlier start), and an import \
                     writes into empty models only; say what to do with --import-on-rows: \
                     replace (the export's state), add, or skip",
                    held.join(", "),
                    if held.len() == 1 { "holds" } else { "hold" }
                ),
            });
        }
        (false, ImportOnRows::Skip) => {
            return Ok(Err(format!(
                "{resource}: skipped, as --import-on-rows says ({} held records)",
                held.join(", ")
            )));
        }
        (false, ImportOnRows::Replace) => true,
        (false, _) => false,
    };
    // The export's next keys are right when the models hold its rows only.
    let keys = (held.is_empty() || replace).then(|| file.keys.clone());
    Ok(Ok(Write::Resource {
        resource: resource.to_owned(),
        db,
        import: Import {
            models,
            replace,
            keys,
        },
    }))
}

/// Whether `model` of the built-in tools resource is its teams, holding only the teams every
/// start seeds ([`SEEDED_TEAMS`]).
fn only_seeded_teams(db: &Arc<dyn Backend>, model: &str) -> Result<bool, SnapshotError> {
    if model != TEAMS_MODEL {
        return Ok(false);
    }
    let spec = ListSpec {
        selection: Selection::default(),
        order_by: Vec::new(),
        page: 1,
        per_page: SEEDED_TEAMS.len() as u64 + 1,
        no_pagination: false,
    };
    let listing = tokio::runtime::Handle::current()
        .block_on(Arc::clone(db).list(model.to_owned(), spec, no_hold()))
        .map_err(|error| SnapshotError::Resource {
            resource: TOOLS_RESOURCE.to_owned(),
            error,
        })?;
    let Listing::Page { records, .. } = listing else {
        return Ok(false);
    };
    let teams: Vec<Value> = serde_json::from_slice(&records.0).unwrap_or_default();
    let mut uids: Vec<&str> = teams.iter().filter_map(|t| t["uid"].as_str()).collect();
    uids.sort_unstable();
    let mut seeded: Vec<&str> = SEEDED_TEAMS.iter().map(|(uid, _)| *uid).collect();
    seeded.sort_unstable();
    Ok(uids == seeded && teams.len() == SEEDED_TEAMS.len())
}

/// What an import does with a project's page settings and accounts, `rows`: the write, or the
/// line saying they are left as they are.
fn plan_store(
    store: &Store,
    project: &str,
    rows: BTreeMap<String, StoreRows>,
    on_rows: ImportOnRows,
) -> Result<Result<Write, String>, SnapshotError> {
    let held = store
        .project_tables_with_rows(project)
        .map_err(SnapshotError::store)?;
    let replace = match (held.is_empty(), on_rows) {
        (true, _) => false,
        (false, ImportOnRows::Stop) => {
            return Err(SnapshotError::Store(format!(
                "project {project:?} already has {} in the emulator's store (a data path kept \
                 from an earlier start), and an import writes into an empty project only; say \
                 what to do with --import-on-rows: replace (the export's state), add, or skip",
                held.join(", ")
            )));
        }
        (false, ImportOnRows::Skip) => {
            return Ok(Err(
                "page settings and accounts: skipped, as --import-on-rows says".to_owned(),
            ));
        }
        (false, ImportOnRows::Replace) => true,
        (false, _) => false,
    };
    Ok(Ok(Write::Store { rows, replace }))
}
