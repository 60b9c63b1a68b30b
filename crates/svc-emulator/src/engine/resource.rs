//! One connected resource: an SQLite database, its connections and its schema, with the list,
//! retrieve, create, update and delete operations. Records come back as JSON bytes, written
//! straight from the rows.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, TryLockError};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::types::Value;
use rusqlite::{Connection, ErrorCode, OpenFlags, params_from_iter};
use serde_json::Value as Json;

use crate::engine::convert::{json_to_sql, text_to_sql, write_row};
use crate::engine::error::EngineError;
use crate::engine::filter::{MAX_PER_PAGE, build_where, order_by, order_selects_nothing};
use crate::engine::list::{ListSpec, Listing, RecordsJson};
use crate::engine::schema::{Field, Model, Schema, load_schema, prepare, quote_ident};

/// Reader connections opened next to the writer for a database file in WAL mode.
const READERS: usize = 4;
/// How long a connection waits for a lock held by another one.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// One connected resource: an SQLite database whose tables are models.
///
/// Safe to share between threads (`Arc<Resource>`). A database file runs in WAL mode with one
/// writer connection and a few read-only reader connections; an in-memory database (or a file
/// where WAL cannot be enabled) uses a single connection. `PRAGMA foreign_keys` is on.
pub struct Resource {
    path: Option<PathBuf>,
    writer: Mutex<Connection>,
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
    schema: RwLock<Arc<Schema>>,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("path", &self.path)
            .field("readers", &self.readers.len())
            .field("models", &self.model_names())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn open_error(path: &Path, e: rusqlite::Error) -> EngineError {
    EngineError::Internal(format!("cannot open database {}: {e}", path.display()))
}

fn configure(conn: &Connection) -> Result<(), EngineError> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.execute_batch("PRAGMA foreign_keys = ON;")?;
    // The query planner stability guarantee: a statement keeps the plan it was prepared with,
    // whatever values are bound. Without it, SQLite marks a bound `LIMIT ?`/`OFFSET ?` as
    // "re-prepare when this binding changes", and the statement cache clears every binding
    // when a statement goes back to it, so every list re-parsed and re-planned its SELECT.
    // Plans, hence results, do not depend on bound values anyway: only speed could.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(())
}

impl Resource {
    /// Opens an existing database file; its tables become models. The file must exist. The
    /// database is switched to WAL mode (a persistent setting of the file).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, EngineError> {
        let path = path.as_ref();
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e))?;
        Self::from_file_connection(path, conn)
    }

    /// Creates a database from seed SQL: in memory when `path` is `None`, else at `path`
    /// (created if missing). The seed runs only when the database has no table yet, so a file
    /// seeded once keeps its data when opened again this way.
    pub fn seeded(path: Option<&Path>, seed_sql: &str) -> Result<Self, EngineError> {
        match path {
            None => {
                let conn = Connection::open_in_memory()?;
                configure(&conn)?;
                conn.execute_batch(seed_sql)?;
                let schema = load_schema(&conn)?;
                Ok(Self {
                    path: None,
                    writer: Mutex::new(conn),
                    readers: Vec::new(),
                    next_reader: AtomicUsize::new(0),
                    schema: RwLock::new(Arc::new(schema)),
                })
            }
            Some(path) => {
                let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let conn =
                    Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e))?;
                configure(&conn)?;
                let tables: i64 = conn.query_row(
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
                    [],
                    |r| r.get(0),
                )?;
                if tables == 0 {
                    conn.execute_batch(seed_sql)?;
                }
                Self::from_file_connection(path, conn)
            }
        }
    }

    /// An in-memory database created from seed SQL.
    pub fn in_memory(seed_sql: &str) -> Result<Self, EngineError> {
        Self::seeded(None, seed_sql)
    }

    fn from_file_connection(path: &Path, conn: Connection) -> Result<Self, EngineError> {
        configure(&conn)?;
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| open_error(path, e))?;
        conn.execute_batch("PRAGMA synchronous = NORMAL;")?;
        let schema = load_schema(&conn).map_err(|e| match e {
            EngineError::Internal(m) => {
                EngineError::Internal(format!("cannot read database {}: {m}", path.display()))
            }
            other => other,
        })?;
        let mut readers = Vec::new();
        if mode.eq_ignore_ascii_case("wal") {
            for _ in 0..READERS {
                let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                match Connection::open_with_flags(path, flags) {
                    Ok(r) => {
                        configure(&r)?;
                        readers.push(Mutex::new(r));
                    }
                    Err(_) => break,
                }
            }
        }
        Ok(Self {
            path: Some(path.to_owned()),
            writer: Mutex::new(conn),
            readers,
            next_reader: AtomicUsize::new(0),
            schema: RwLock::new(Arc::new(schema)),
        })
    }

    /// The database file, `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Re-reads the schema: tables and columns added since become models and fields, dropped
    /// ones disappear. Data is not touched.
    pub fn reload(&self) -> Result<(), EngineError> {
        let schema = {
            let conn = lock(&self.writer);
            load_schema(&conn)?
        };
        *self.schema.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(schema);
        Ok(())
    }

    /// The schema as last read.
    pub fn schema(&self) -> Arc<Schema> {
        self.schema
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The names of every model, sorted.
    pub fn model_names(&self) -> Vec<String> {
        self.schema().models.keys().cloned().collect()
    }

    /// The model named `name`, if the schema has it.
    pub fn model(&self, name: &str) -> Option<Arc<Model>> {
        self.schema().models.get(name).cloned()
    }

    pub(crate) fn model_or_404(&self, name: &str) -> Result<Arc<Model>, EngineError> {
        self.model(name)
            .ok_or_else(|| EngineError::ModelNotFound(name.to_owned()))
    }

    /// Runs `f` on a reader connection: one of the read-only readers of a database file, or the
    /// single (writable) connection of an in-memory database. See
    /// [`with_read_only`](Self::with_read_only) for a guarantee.
    pub fn with_reader<R>(&self, f: impl FnOnce(&mut Connection) -> R) -> R {
        if self.readers.is_empty() {
            return f(&mut lock(&self.writer));
        }
        let n = self.readers.len();
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed) % n;
        for i in 0..n {
            match self.readers[(start + i) % n].try_lock() {
                Ok(mut g) => return f(&mut g),
                Err(TryLockError::Poisoned(p)) => return f(&mut p.into_inner()),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        f(&mut lock(&self.readers[start]))
    }

    /// Runs `f` on a connection that cannot change the database: a reader opened read-only for
    /// database files; for an in-memory database its single connection with
    /// `PRAGMA query_only` set for the duration of `f`. For the SQL endpoint (which should also
    /// check `Statement::readonly`).
    pub fn with_read_only<R>(&self, f: impl FnOnce(&mut Connection) -> R) -> R {
        if !self.readers.is_empty() {
            return self.with_reader(f);
        }
        let mut conn = lock(&self.writer);
        let on = conn.execute_batch("PRAGMA query_only = 1;");
        let out = f(&mut conn);
        if on.is_ok() {
            let _ = conn.execute_batch("PRAGMA query_only = 0;");
        }
        out
    }

    /// Runs `f` on the writer connection. Callers that change the schema must
    /// [`reload`](Self::reload) afterwards.
    pub fn with_writer<R>(&self, f: impl FnOnce(&mut Connection) -> R) -> R {
        f(&mut lock(&self.writer))
    }

    /// Lists the records of `model` that `spec` selects, in its order: one page with the count
    /// of all matching records, or with `no_pagination` every matching record (at most
    /// [`MAX_PER_PAGE`]). A page past the last one lists no records, with the count of all.
    pub fn list(&self, model: &str, spec: &ListSpec) -> Result<Listing, EngineError> {
        let model = self.model_or_404(model)?;
        let mut filter = build_where(&model, &spec.selection)?;
        let order_sql = order_by(&model, &spec.order_by, spec.selection.lenient)?;
        if order_selects_nothing(&spec.order_by) {
            filter.match_nothing();
        }
        let snapshot = !self.readers.is_empty();
        self.with_reader(|conn| {
            // One read snapshot for the count and the page (dropped, i.e. rolled back, at the end).
            let _snapshot = if snapshot {
                Some(conn.unchecked_transaction()?)
            } else {
                None
            };
            let conn: &Connection = conn;
            let select = format!(
                "SELECT {} FROM {}{}{order_sql} LIMIT ? OFFSET ?",
                model.select_list, model.table_sql, filter.sql
            );
            if spec.no_pagination {
                let (records, _) = write_records(
                    conn,
                    &model,
                    &select,
                    &filter.params,
                    u64::from(MAX_PER_PAGE),
                    0,
                )?;
                return Ok(Listing::All(records));
            }
            let count: u64 = {
                let sql = format!("SELECT count(*) FROM {}{}", model.table_sql, filter.sql);
                let mut stmt = prepare(conn, &sql)?;
                let n: i64 =
                    stmt.query_row(params_from_iter(filter.params.iter()), |r| r.get(0))?;
                n.max(0) as u64
            };
            let per_page = spec.per_page.max(1);
            let number = spec.page.max(1);
            let offset = (number - 1).saturating_mul(per_page);
            let (records, len) =
                write_records(conn, &model, &select, &filter.params, per_page, offset)?;
            Ok(Listing::Page {
                count,
                number,
                per_page,
                len,
                records,
            })
        })
    }

    /// The record of `model` whose primary key is `pk` (text, parsed by the key's kind), as JSON
    /// bytes. `404` when there is none, including a key that cannot be of the key's kind.
    pub fn retrieve(&self, model: &str, pk: &str) -> Result<Vec<u8>, EngineError> {
        let model = self.model_or_404(model)?;
        let pk = pk_value(&model, pk)?;
        self.with_reader(|conn| fetch_one(conn, &model, &pk))
    }

    /// Creates a record from a JSON object and returns the stored record as JSON bytes (`201`).
    ///
    /// Unknown keys, the implicit rowid and generated columns are ignored. Values must have the
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
                let mut buf = Vec::with_capacity(256);
                if let Some(row) = rows.next()? {
                    write_row(&mut buf, &model, row)?;
                }
                // Run the statement to its end: in autocommit mode that is when SQLite commits,
                // and a commit that fails (a deferred foreign key, an I/O error) must fail the
                // create, not be lost in the statement's reset after a `201`.
                finish(&mut rows)?;
                Ok(buf)
            };
            run().map_err(|e| self.write_error(conn, &model, e, &values, false))
        })
    }

    /// Updates the fields given in a partial JSON object and returns the whole record as JSON
    /// bytes. Unknown keys, the primary key, the implicit rowid and generated columns are
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
                let buf = match rows.next()? {
                    Some(row) => {
                        let mut buf = Vec::with_capacity(256);
                        write_row(&mut buf, &model, row)?;
                        Some(buf)
                    }
                    None => None,
                };
                // As in `create`: the commit happens (and can fail) at the end of the statement.
                finish(&mut rows)?;
                Ok(buf)
            };
            match run() {
                Ok(Some(buf)) => Ok(buf),
                Ok(None) => Err(EngineError::RecordNotFound),
                Err(e) => Err(self.write_error(conn, &model, e, &values, false)),
            }
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
            match run() {
                Ok(0) => Err(EngineError::RecordNotFound),
                Ok(_) => Ok(()),
                Err(e) => Err(self.write_error(conn, &model, e, &[], true)),
            }
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

/// Steps a statement to its end, so that an autocommit's error (raised when the statement
/// completes) is returned instead of being dropped by the statement's reset.
fn finish(rows: &mut rusqlite::Rows<'_>) -> rusqlite::Result<()> {
    while rows.next()?.is_some() {}
    Ok(())
}

fn non_field(message: String) -> EngineError {
    EngineError::field("non_field_errors", message)
}

fn add(errors: &mut BTreeMap<String, Vec<String>>, field: &str, message: &str) {
    errors
        .entry(field.to_owned())
        .or_default()
        .push(message.to_owned());
}

fn summary(errors: &BTreeMap<String, Vec<String>>) -> String {
    let parts: Vec<String> = errors
        .iter()
        .map(|(f, m)| format!("{f}: {}", m.join(" ")))
        .collect();
    format!("Invalid data: {}", parts.join("; "))
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
        Some(row) => {
            let mut buf = Vec::with_capacity(256);
            write_row(&mut buf, model, row)?;
            Ok(buf)
        }
        None => Err(EngineError::RecordNotFound),
    }
}

/// The records of `select` (which ends with `LIMIT ? OFFSET ?`) as a JSON array, and how many.
fn write_records(
    conn: &Connection,
    model: &Model,
    select: &str,
    params: &[Value],
    limit: u64,
    offset: u64,
) -> Result<(RecordsJson, u64), EngineError> {
    let mut stmt = prepare(conn, select)?;
    let limit = Value::Integer(i64::try_from(limit).unwrap_or(i64::MAX));
    let offset = Value::Integer(i64::try_from(offset).unwrap_or(i64::MAX));
    let binds = params.iter().chain([&limit, &offset]);
    let mut rows = stmt.query(params_from_iter(binds))?;
    let mut buf = Vec::with_capacity(4096);
    buf.push(b'[');
    let mut len: u64 = 0;
    while let Some(row) = rows.next()? {
        if len > 0 {
            buf.push(b',');
        }
        len += 1;
        write_row(&mut buf, model, row)?;
    }
    buf.push(b']');
    Ok((RecordsJson(buf), len))
}

#[cfg(test)]
mod commit_tests {
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
