//! A resource's fixtures loaded at start: each record created through [`Backend::create`],
//! the path of a records `POST`, so that every database reads and writes a fixture's values
//! exactly as it does a create's body. Strict whatever the emulator's mode: a field the model
//! lacks is refused, as the emulator refuses it on a `POST` (the data engine would ignore it).
//!
//! When a model the fixtures name already holds records (a database kept across starts, a
//! `--data` file or a database of your own, holds them, or what became of them, from the start
//! before; `seed_sql` may insert rows), the resource's `fixtures_on_rows` decides: the start
//! stops naming the models (the default: never skipped silently), skips the fixtures, or adds
//! them. Every file is read and checked before the first record is written.

use std::sync::Arc;

use crate::config::fixtures::read::{Records, read};
use crate::config::fixtures::{FixtureError, FixtureFile, Fixtures, FixturesOnRows};
use svc_emulator_core::backend::{Backend, Hold};
use svc_engine::python::json::PyJson;
use svc_engine::{EngineError, ListSpec, Listing, Selection};

/// What a load did.
#[derive(Debug, PartialEq, Eq)]
pub enum Loaded {
    /// This many records were created, over that many models.
    Created {
        /// Records.
        records: usize,
        /// Models.
        models: usize,
    },
    /// Nothing, as the config asked: these models already had records.
    Skipped(Vec<String>),
}

/// The emulator's own work: no admission turn.
fn no_hold() -> Hold {
    Box::new(())
}

/// Loads `fixtures` into `db`, the resource `resource`; `on_rows` says what to do when a model
/// they name already holds records.
pub async fn load(
    db: &Arc<dyn Backend>,
    resource: &str,
    fixtures: &Fixtures,
    on_rows: FixturesOnRows,
) -> Result<Loaded, FixtureError> {
    let files = fixtures.resolve().map_err(|e| e.in_resource(resource))?;
    for file in &files {
        if !db.has_model(&file.model) {
            return Err(FixtureError::new(
                &file.path,
                format!("the resource has no model {:?}", file.model),
            )
            .in_resource(resource)
            .hint(format!(
                "name the file after one of its models ({}), or create the table first \
                 (seed_sql)",
                db.model_names().join(", ")
            )));
        }
    }
    let mut held = Vec::new();
    for file in &files {
        if on_rows != FixturesOnRows::Add
            && has_records(db, &file.model).await.map_err(|e| {
                FixtureError::new(&file.path, format!("cannot count its model's records: {e}"))
                    .in_resource(resource)
                    .for_model(&file.model)
            })?
        {
            held.push(file);
        }
    }
    match (held.first(), on_rows) {
        (None, _) | (_, FixturesOnRows::Add) => {}
        (Some(_), FixturesOnRows::Skip) => {
            return Ok(Loaded::Skipped(
                held.iter().map(|f| f.model.clone()).collect(),
            ));
        }
        (Some(first), _) => return Err(holds_records(resource, first, &held)),
    }
    let mut all = Vec::with_capacity(files.len());
    for file in &files {
        let records = read(file).map_err(|e| e.in_resource(resource))?;
        check_fields(db.as_ref(), file, &records).map_err(|e| e.in_resource(resource))?;
        all.push(records);
    }
    let mut created = 0;
    for (file, records) in files.iter().zip(all) {
        let (places, bodies): (Vec<_>, Vec<_>) = records
            .records
            .into_iter()
            .map(|r| ((r.line, r.element), r.body))
            .unzip();
        created += Arc::clone(db)
            .create_all(file.model.clone(), bodies, no_hold())
            .await
            .map_err(|(i, e)| {
                let (line, element) = places.get(i).copied().unwrap_or((0, None));
                // The failure's path only: the file is read again for the refused record.
                let body = read(file).ok().and_then(|r| r.records.into_iter().nth(i));
                let names = db.field_names(&file.model).unwrap_or_default();
                let within = Within {
                    file,
                    names: &names,
                    body: body.as_ref().map(|r| &r.body),
                };
                refused(&within, line, element, e).in_resource(resource)
            })?;
    }
    Ok(Loaded::Created {
        records: created,
        models: files.len(),
    })
}

/// The start's stop when models the fixtures name already hold records (`held`, `first` the
/// first of them): it names them, says where such rows come from, and the two ways on.
fn holds_records(resource: &str, first: &FixtureFile, held: &[&FixtureFile]) -> FixtureError {
    let models: Vec<&str> = held.iter().map(|f| f.model.as_str()).collect();
    let what = match models.as_slice() {
        [one] => format!("model {one:?} already holds records"),
        many => format!("models {} already hold records", many.join(", ")),
    };
    FixtureError::new(
        &first.path,
        format!(
            "{what} (rows of seed_sql, or a database kept from an earlier start: a --data \
             file, a database of your own), and fixtures are loaded into empty models only"
        ),
    )
    .in_resource(resource)
    .for_model(&first.model)
    .hint(
        "empty those tables, or say what to do in the resource's config: \
         \"fixtures_on_rows\": \"skip\" keeps the rows and loads nothing (a --data file kept \
         from the start that loaded them), \"add\" loads the fixtures beside them \
         (--fixtures-on-rows skip|add on the command line)",
    )
}

/// Whether `model` has a record.
pub(crate) async fn has_records(db: &Arc<dyn Backend>, model: &str) -> Result<bool, EngineError> {
    let spec = ListSpec {
        selection: Selection::default(),
        order_by: Vec::new(),
        page: 1,
        per_page: 1,
        no_pagination: false,
    };
    let listing = Arc::clone(db)
        .list(model.to_owned(), spec, no_hold())
        .await?;
    Ok(match listing {
        Listing::Page { len, .. } => len > 0,
        Listing::All(records) => records.0 != b"[]",
    })
}

/// Strict mode's refusal of fields the model lacks: a CSV header's column on line 1, a JSON
/// record's key on its line.
pub(crate) fn check_fields(
    db: &dyn Backend,
    file: &FixtureFile,
    records: &Records,
) -> Result<(), FixtureError> {
    let names = db.field_names(&file.model).unwrap_or_default();
    let unknown = |field: &str, line: usize| {
        FixtureError::new(&file.path, "the model has no such field")
            .for_model(&file.model)
            .at_line(line)
            .at_field(field)
            .hint(format!(
                "its fields: {}; fixtures refuse unknown fields, even with --lenient",
                names.join(", ")
            ))
    };
    if let Some(columns) = &records.columns {
        if let Some(column) = columns.iter().find(|c| !names.contains(c)) {
            return Err(unknown(column, 1));
        }
        return Ok(());
    }
    for record in &records.records {
        if let PyJson::Dict(pairs) = &record.body
            && let Some((key, _)) = pairs.iter().find(|(k, _)| !names.contains(k))
        {
            return Err(unknown(key, record.line).at_element(record.element));
        }
    }
    Ok(())
}

/// What a refused record's error may name: its file, its model's fields and its values.
struct Within<'a> {
    file: &'a FixtureFile,
    names: &'a [String],
    body: Option<&'a PyJson>,
}

/// A create's refusal of the record on `line` (a JSON array's `element`), naming its field:
/// the one the answer names, else the one the database's message is about
/// ([`named_in`]).
fn refused(
    within: &Within<'_>,
    line: usize,
    element: Option<usize>,
    error: EngineError,
) -> FixtureError {
    let (field, message) = match error {
        EngineError::Invalid {
            message, fields, ..
        } => {
            match fields
                .into_iter()
                .find(|(name, _)| name != "non_field_errors")
            {
                Some((name, messages)) => (Some(name), messages.join(" ")),
                None => (None, message),
            }
        }
        other => (None, other.to_string()),
    };
    // A database server's message may end with a line break (libpq's lines).
    let message = message.trim_end();
    let field = field.or_else(|| named_in(message, within));
    let at = FixtureError::new(
        &within.file.path,
        format!("the record was refused: {message}"),
    )
    .for_model(&within.file.model)
    .at_line(line)
    .at_element(element)
    .hint(
        "fix the record in the file (its values are read by the model's fields, as the \
             records route reads a create's JSON body)",
    );
    match &field {
        Some(name) => at.at_field(name),
        None => at,
    }
}

/// The field a database's message is about when its answer names none: the one field whose
/// name it quotes or writes after the model's (`null value in column "name"`, `NOT NULL
/// constraint failed: orders.name`), else the one field of the record whose text value it
/// quotes (`could not convert string to float: 'abc'`); `None` when no one field fits.
fn named_in(message: &str, within: &Within<'_>) -> Option<String> {
    let quoted = |text: &str| {
        message.contains(&format!("\"{text}\"")) || message.contains(&format!("'{text}'"))
    };
    let model = &within.file.model;
    let by_name: Vec<&String> = within
        .names
        .iter()
        .filter(|n| {
            quoted(n)
                || message
                    .match_indices(&format!("{model}.{n}"))
                    .any(|(at, text)| {
                        let after = message[at + text.len()..].chars().next();
                        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    })
        })
        .collect();
    if let [one] = by_name[..] {
        return Some(one.clone());
    }
    let Some(PyJson::Dict(pairs)) = within.body else {
        return None;
    };
    let by_value: Vec<&String> = pairs
        .iter()
        .filter(|(_, v)| matches!(v, PyJson::Str(s) if !s.is_empty() && quoted(s)))
        .map(|(k, _)| k)
        .collect();
    match by_value[..] {
        [one] => Some(one.clone()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::config::fixtures::Format;

    #[test]
    fn a_message_names_its_field_by_name_or_by_value() {
        let file = FixtureFile {
            model: "orders".to_owned(),
            path: PathBuf::from("orders.csv"),
            format: Format::Csv,
        };
        let names: Vec<String> = ["id", "name", "total", "note"].map(str::to_owned).to_vec();
        let body = PyJson::Dict(vec![
            ("name".to_owned(), PyJson::Str("abc".to_owned())),
            ("total".to_owned(), PyJson::Str("many".to_owned())),
            ("note".to_owned(), PyJson::Str("many".to_owned())),
        ]);
        let within = Within {
            file: &file,
            names: &names,
            body: Some(&body),
        };
        let named = |message: &str| named_in(message, &within);
        assert_eq!(
            named("NOT NULL constraint failed: orders.name").as_deref(),
            Some("name")
        );
        assert_eq!(named("NOT NULL constraint failed: orders.named"), None);
        assert_eq!(
            named("null value in column \"total\" of relation \"orders\"").as_deref(),
            Some("total")
        );
        assert_eq!(
            named("could not convert string to float: 'abc'").as_deref(),
            Some("name")
        );
        // Two values alike: no one field.
        assert_eq!(
            named("invalid input syntax for type numeric: \"many\""),
            None
        );
        assert_eq!(named("disk I/O error"), None);
    }
}
