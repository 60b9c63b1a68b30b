//! The strict writes of the built-in tools resource (users and teams, docs/contract.md 5.3):
//! the emulator's own contract, not the data engine's, so they are no records flow of
//! `flow/write.rs` (`cargo xtask structure` lets this file, and only it in the backends, write
//! its `INSERT`, `UPDATE` and `DELETE`): strict JSON types, required NOT NULL fields, foreign
//! keys enforced (a user's team must exist), errors as field errors.

use std::collections::BTreeMap;

use rusqlite::types::Value;
use rusqlite::{Connection, ErrorCode, params_from_iter};
use serde_json::Value as Json;

use crate::dialect::quote_ident;
use crate::engine::body::{non_field, summary};
use crate::engine::error::EngineError;
use crate::engine::records::record_json;
use crate::sqlite::resource::Resource;
use crate::sqlite::schema::prepare;
use crate::sqlite::schema::{Field, Model};
use crate::sqlite::types::{json_to_sql, text_to_sql};

/// Strict writes, for the built-in tools resource (users and teams, docs/contract.md 5.3),
/// whose contract is the emulator's own: strict JSON types, required NOT NULL fields, and
/// foreign keys enforced (a user's team must exist). Records use the data engine's writes
/// (`Resource::create_body`, `update_body`, `delete_selected`).
impl Resource {
    /// Creates a record from a JSON object and returns the stored record as JSON bytes (`201`),
    /// strictly (see above).
    ///
    /// Unknown keys and generated columns are ignored. Values must have the
    /// field's JSON type. A missing required field, a NULL in a NOT NULL field, a unique or
    /// foreign key violation are `400` field errors.
    pub fn create(&self, model: &str, body: &Json) -> Result<Vec<u8>, EngineError> {
        let model = self.model_or_404(model)?;
        let obj = as_object(body)?;
        let mut errors = BTreeMap::new();
        let mut values: Vec<(&Field, Value)> = Vec::new();
        for f in model.fields.iter().filter(|f| f.writable()) {
            match obj.get(&f.name) {
                None => {
                    if f.required() {
                        add(&mut errors, &f.name, "This field is required.");
                    }
                }
                Some(v) => match json_to_sql(f.kind, v) {
                    Ok(Value::Null) if f.auto => {}
                    Ok(Value::Null) if f.not_null || f.primary_key => {
                        add(&mut errors, &f.name, "This field may not be null.");
                    }
                    Ok(val) => values.push((f, val)),
                    Err(m) => add(&mut errors, &f.name, m),
                },
            }
        }
        check(errors)?;
        let sql = if values.is_empty() {
            format!(
                "INSERT INTO {} DEFAULT VALUES RETURNING {}",
                model.table_sql, model.select_list
            )
        } else {
            let cols: Vec<&str> = values.iter().map(|(f, _)| f.sql.as_str()).collect();
            let marks = vec!["?"; values.len()].join(", ");
            format!(
                "INSERT INTO {} ({}) VALUES ({marks}) RETURNING {}",
                model.table_sql,
                cols.join(", "),
                model.select_list
            )
        };
        self.with_writer(|conn| {
            let run = || -> rusqlite::Result<Vec<u8>> {
                let mut stmt = prepare(conn, &sql)?;
                let mut rows = stmt.query(params_from_iter(values.iter().map(|(_, v)| v)))?;
                let buf = match rows.next()? {
                    Some(row) => record_json(&*model, row, 0),
                    None => Vec::new(),
                };
                // Run the statement to its end: in autocommit mode that is when SQLite commits,
                // and a commit that fails (a deferred foreign key, an I/O error) must fail the
                // create, not be lost in the statement's reset after a `201`.
                finish(&mut rows)?;
                Ok(buf)
            };
            with_foreign_keys(conn, || {
                run().map_err(|e| self.write_error(conn, &model, e, &values, false))
            })
        })
    }

    /// Updates the fields given in a partial JSON object and returns the whole record as JSON
    /// bytes. Unknown keys, the primary key and generated columns are
    /// ignored; an object with nothing to change returns the record as it is. `404` when the
    /// record does not exist.
    pub fn update(&self, model: &str, pk: &str, body: &Json) -> Result<Vec<u8>, EngineError> {
        let model = self.model_or_404(model)?;
        let pk = pk_value(&model, pk)?;
        let obj = as_object(body)?;
        let mut errors = BTreeMap::new();
        let mut values: Vec<(&Field, Value)> = Vec::new();
        for (key, v) in obj {
            let Some(f) = model.field(key) else { continue };
            if !f.writable() || f.primary_key {
                continue;
            }
            match json_to_sql(f.kind, v) {
                Ok(Value::Null) if f.not_null => {
                    add(&mut errors, &f.name, "This field may not be null.");
                }
                Ok(val) => values.push((f, val)),
                Err(m) => add(&mut errors, &f.name, m),
            }
        }
        check(errors)?;
        if values.is_empty() {
            return self.with_writer(|conn| fetch_one(conn, &model, &pk));
        }
        let sets: Vec<String> = values
            .iter()
            .map(|(f, _)| format!("{} = ?", f.sql))
            .collect();
        let sql = format!(
            "UPDATE {} SET {} WHERE {} = ? RETURNING {}",
            model.table_sql,
            sets.join(", "),
            model.pk_field().sql,
            model.select_list
        );
        self.with_writer(|conn| {
            let run = || -> rusqlite::Result<Option<Vec<u8>>> {
                let mut stmt = prepare(conn, &sql)?;
                let binds = values.iter().map(|(_, v)| v).chain(std::iter::once(&pk));
                let mut rows = stmt.query(params_from_iter(binds))?;
                let buf = rows.next()?.map(|row| record_json(&*model, row, 0));
                // As in `create`: the commit happens (and can fail) at the end of the statement.
                finish(&mut rows)?;
                Ok(buf)
            };
            with_foreign_keys(conn, || match run() {
                Ok(Some(buf)) => Ok(buf),
                Ok(None) => Err(EngineError::RecordNotFound),
                Err(e) => Err(self.write_error(conn, &model, e, &values, false)),
            })
        })
    }

    /// Deletes a record (`204`). `404` when it does not exist; `400` when other records still
    /// reference it through a foreign key.
    pub fn delete(&self, model: &str, pk: &str) -> Result<(), EngineError> {
        let model = self.model_or_404(model)?;
        let pk = pk_value(&model, pk)?;
        let sql = format!(
            "DELETE FROM {} WHERE {} = ?",
            model.table_sql,
            model.pk_field().sql
        );
        self.with_writer(|conn| {
            let run = || -> rusqlite::Result<usize> { prepare(conn, &sql)?.execute([&pk]) };
            with_foreign_keys(conn, || match run() {
                Ok(0) => Err(EngineError::RecordNotFound),
                Ok(_) => Ok(()),
                Err(e) => Err(self.write_error(conn, &model, e, &[], true)),
            })
        })
    }

    /// Maps a failed write to a `400` with field errors when the database refused the data.
    fn write_error(
        &self,
        conn: &Connection,
        model: &Model,
        e: rusqlite::Error,
        values: &[(&Field, Value)],
        deleting: bool,
    ) -> EngineError {
        let rusqlite::Error::SqliteFailure(err, msg) = &e else {
            return e.into();
        };
        let msg = msg.clone().unwrap_or_else(|| err.to_string());
        let columns = || -> Vec<String> {
            let list = msg.split_once(": ").map(|(_, l)| l).unwrap_or("");
            list.split(", ")
                .filter(|s| !s.is_empty())
                .map(|c| {
                    c.strip_prefix(&format!("{}.", model.name))
                        .unwrap_or(c)
                        .to_owned()
                })
                .collect()
        };
        match err.code {
            ErrorCode::ConstraintViolation => {}
            ErrorCode::TypeMismatch => {
                return non_field(format!("Invalid data: {msg}."));
            }
            _ => return e.into(),
        }
        match err.extended_code {
            rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
            | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                let cols = columns();
                match cols.as_slice() {
                    [one] => EngineError::field(
                        one.clone(),
                        format!("{} with this {one} already exists.", model.name),
                    ),
                    _ => non_field(format!(
                        "The fields {} must make a unique set.",
                        cols.join(", ")
                    )),
                }
            }
            rusqlite::ffi::SQLITE_CONSTRAINT_NOTNULL => match columns().as_slice() {
                [one] => EngineError::field(one.clone(), "This field may not be null."),
                _ => non_field(msg),
            },
            rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY if deleting => non_field(
                "This record is referenced by other records and cannot be deleted.".to_owned(),
            ),
            rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => {
                let mut errors = BTreeMap::new();
                for fk in &model.foreign_keys {
                    let Some((_, v)) = values.iter().find(|(f, _)| f.name == fk.column) else {
                        continue;
                    };
                    if matches!(v, Value::Null) {
                        continue;
                    }
                    let parent_col = match &fk.parent_column {
                        Some(c) => quote_ident(c),
                        None => self
                            .model(&fk.parent_table)
                            .map(|m| m.pk_field().sql.clone())
                            .unwrap_or_else(|| "rowid".to_owned()),
                    };
                    let sql = format!(
                        "SELECT 1 FROM {} WHERE {parent_col} = ? LIMIT 1",
                        quote_ident(&fk.parent_table)
                    );
                    let exists = prepare(conn, &sql)
                        .and_then(|mut s| s.exists([v]))
                        .unwrap_or(true);
                    if !exists {
                        let shown = match v {
                            Value::Integer(i) => i.to_string(),
                            Value::Real(f) => f.to_string(),
                            Value::Text(t) => t.clone(),
                            _ => String::new(),
                        };
                        add(
                            &mut errors,
                            &fk.column,
                            &format!("Invalid pk \"{shown}\" - object does not exist."),
                        );
                    }
                }
                if errors.is_empty() {
                    non_field("FOREIGN KEY constraint failed.".to_owned())
                } else {
                    EngineError::fields(summary(&errors), errors)
                }
            }
            rusqlite::ffi::SQLITE_CONSTRAINT_DATATYPE => {
                // "cannot store TEXT value in INTEGER column t.c"
                let col = msg
                    .rsplit_once(' ')
                    .map(|(_, c)| c.strip_prefix(&format!("{}.", model.name)).unwrap_or(c))
                    .unwrap_or("");
                if model.field(col).is_some() {
                    EngineError::field(col.to_owned(), format!("Invalid value: {msg}."))
                } else {
                    non_field(msg)
                }
            }
            _ => non_field(msg),
        }
    }
}

/// Runs a strict write with foreign keys enforced, then turns them off again (the data
/// engine's records never enforce them). Statements run in autocommit mode, where the pragma
/// takes effect.
fn with_foreign_keys<R>(
    conn: &Connection,
    f: impl FnOnce() -> Result<R, EngineError>,
) -> Result<R, EngineError> {
    conn.execute_batch("PRAGMA foreign_keys = ON;")?;
    let out = f();
    let off = conn.execute_batch("PRAGMA foreign_keys = OFF;");
    let out = out?;
    off?;
    Ok(out)
}

/// Steps a statement to its end, so that an autocommit's error (raised when the statement
/// completes) is returned instead of being dropped by the statement's reset.
fn finish(rows: &mut rusqlite::Rows<'_>) -> rusqlite::Result<()> {
    while rows.next()?.is_some() {}
    Ok(())
}

fn add(errors: &mut BTreeMap<String, Vec<String>>, field: &str, message: &str) {
    errors
        .entry(field.to_owned())
        .or_default()
        .push(message.to_owned());
}

fn check(errors: BTreeMap<String, Vec<String>>) -> Result<(), EngineError> {
    if errors.is_empty() {
        Ok(())
    } else {
        Err(EngineError::fields(summary(&errors), errors))
    }
}

fn as_object(body: &Json) -> Result<&serde_json::Map<String, Json>, EngineError> {
    body.as_object().ok_or_else(|| {
        let got = match body {
            Json::Null => "null",
            Json::Bool(_) => "bool",
            Json::Number(_) => "number",
            Json::String(_) => "str",
            Json::Array(_) => "list",
            Json::Object(_) => "dict",
        };
        non_field(format!(
            "Invalid data. Expected a dictionary, but got {got}."
        ))
    })
}

/// The primary key given as text, parsed by the key's kind; `404` when it cannot be one.
fn pk_value(model: &Model, raw: &str) -> Result<Value, EngineError> {
    text_to_sql(model.pk_field().kind, raw).ok_or(EngineError::RecordNotFound)
}

fn fetch_one(conn: &Connection, model: &Model, pk: &Value) -> Result<Vec<u8>, EngineError> {
    let sql = format!(
        "SELECT {} FROM {} WHERE {} = ?",
        model.select_list,
        model.table_sql,
        model.pk_field().sql
    );
    let mut stmt = prepare(conn, &sql)?;
    let mut rows = stmt.query([pk])?;
    match rows.next()? {
        Some(row) => Ok(record_json(model, row, 0)),
        None => Err(EngineError::RecordNotFound),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::error::EngineReply;
    use serde_json::json;

    /// A foreign key checked at commit: the `RETURNING` row is produced, then the commit fails.
    const DEFERRED: &str = "
        CREATE TABLE parent (id INTEGER PRIMARY KEY);
        CREATE TABLE child (
            id INTEGER PRIMARY KEY,
            parent_id INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED
        );
        INSERT INTO parent (id) VALUES (1);
        INSERT INTO child (id, parent_id) VALUES (1, 1);
    ";

    fn count(db: &Resource) -> i64 {
        db.with_reader(|c| c.query_row("SELECT count(*) FROM child", [], |r| r.get(0)))
            .unwrap()
    }

    #[test]
    fn a_write_whose_commit_fails_is_an_error_not_a_lost_success() {
        for file in [false, true] {
            let dir = std::env::temp_dir().join(format!(
                "svc-emulator-commit-{}-{}",
                std::process::id(),
                uuid::Uuid::new_v4().simple()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("deferred.sqlite");
            let db = Resource::seeded(file.then_some(path.as_path()), DEFERRED).unwrap();

            let err = db
                .create("child", &json!({"parent_id": 9}))
                .expect_err("the commit fails on the deferred foreign key");
            assert_eq!(err.status(), 400, "{err:?}");
            assert_eq!(count(&db), 1, "nothing was stored");

            let err = db
                .update("child", "1", &json!({"parent_id": 9}))
                .expect_err("the commit fails on the deferred foreign key");
            assert_eq!(err.status(), 400, "{err:?}");
            let kept: Json = serde_json::from_slice(&db.retrieve("child", "1").unwrap()).unwrap();
            assert_eq!(kept["parent_id"], 1, "the update was rolled back");

            // A good write still works, and the writer is usable after the failures.
            let ok: Json =
                serde_json::from_slice(&db.create("child", &json!({"parent_id": 1})).unwrap())
                    .unwrap();
            assert_eq!(ok["parent_id"], 1);
            assert_eq!(count(&db), 2);
            drop(db);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
