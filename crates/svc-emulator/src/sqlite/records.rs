//! SQLite's reads of records (`flow::records::Pages`, run by `flow::read`): each row lent by
//! rusqlite to the records it makes (no row is copied), a list's pages from the memo's anchors
//! (`sqlite::pages`), its count, and the budget of a read run on an async worker
//! (`sqlite::backend`).
//!
//! # Writes, aggregates and groups
//!
//! SQLite's side of the record flows (`flow::write`, `flow::aggregate`): [`Sqlite`], one
//! operation's view of a resource and of the connection it runs on.
//!
//! SQLite's calls block, so an operation takes its connection first (the writer for a write, a
//! reader for a summary: `Resource::with_writer`, `Resource::with_read`) and runs the flow to
//! its end on that thread (`flow::references::run_now`): every step completes when it is
//! called, and the flow's futures are ready when first polled. The steps, and the SQL the
//! databases share, are the flow's; what SQLite binds, reads back and compares is here.

use crate::engine::body::{non_field, query_failed};
use crate::engine::error::EngineError;
use crate::engine::field_input::{Internal, py_equal};
use crate::engine::records::RecordRow;
use crate::engine::records::{Models, record_json};
use crate::engine::types::Reflected;
use crate::engine::types::{PyValue, Stored, read};
use crate::flow::Locator;
use crate::flow::delete::delete_row;
use crate::flow::driver::Failure;
use crate::flow::driver::Session;
use crate::flow::records::{Database, Rows};
use crate::flow::references::run_now;
use crate::flow::write::{Values, Writes, insert_statement, set_list, update_sql};
use crate::sqlite::driver::{SqlCancel, Watchdog};
use crate::sqlite::pages;
use crate::sqlite::pages::Budget;
use crate::sqlite::resource::{Resource, db_error, get_by_identity, lookup_value};
use crate::sqlite::schema::prepare;
use crate::sqlite::schema::{self, SqliteConnection, equal_all};
use crate::sqlite::schema::{Field, Model};
use crate::sqlite::types::bind;
use crate::sqlite::types::write_field_value;
use rusqlite::Connection;
use rusqlite::params_from_iter;
use rusqlite::types::{Value, ValueRef};
use std::sync::Mutex;

/// SQLite's rows: each lent by the driver as it is stepped to.
impl<'c> Rows for Sqlite<'c> {
    type RowRef<'r> = rusqlite::Row<'r>;

    async fn each_row<S: FnMut(&rusqlite::Row<'_>) + Send>(
        &self,
        conn: &mut &'c mut rusqlite::Connection,
        sql: &str,
        params: &Vec<Value>,
        lenient: bool,
        sink: &mut S,
    ) -> Result<(), EngineError> {
        let mut read = || -> rusqlite::Result<()> {
            let mut stmt = prepare(conn, sql)?;
            let mut rows = stmt.query(params_from_iter(params.iter()))?;
            while let Some(row) = rows.next()? {
                sink(row);
            }
            Ok(())
        };
        read().map_err(|e| self.fault(e, Failure::Read { lenient }))
    }
}

/// A record with a value the engine cannot read: it fails (500) on every read of the record
/// ([decision: stricter]: strict mode refuses with a `400` naming the field).
pub(crate) fn unreadable(model: &Model, at: usize, lenient: bool) -> EngineError {
    let f = &model.fields[at];
    EngineError::engine_fails(
        lenient,
        &f.name,
        format!(
            "A record of {} holds a value in field {:?} that does not fit its declared type \
             {:?}: the data engine fails (500) on every read of that record. Correct the \
             stored value, or filter the record out.",
            model.name, f.name, f.declared_type
        ),
    )
}

/// A row as SQLite lends it: each value as stored.
impl RecordRow<Field> for rusqlite::Row<'_> {
    #[inline]
    fn write_value(&self, buf: &mut Vec<u8>, i: usize, column: &Field, _tz: i32) -> bool {
        let stored = match self.get_ref(i) {
            Ok(v) => Stored::from(v),
            Err(_) => Stored::Null,
        };
        write_field_value(buf, column, stored)
    }

    fn key(&self, i: usize, column: &Field) -> Option<Vec<u8>> {
        match self.get_ref(i).unwrap_or(ValueRef::Null) {
            ValueRef::Null => None,
            v => Some(identity_key(column, v)),
        }
    }
}

/// A row read whole (a record read back after a write): each value as stored.
impl RecordRow<Field> for [Value] {
    fn write_value(&self, buf: &mut Vec<u8>, i: usize, column: &Field, _tz: i32) -> bool {
        let stored = self
            .get(i)
            .map_or(Stored::from(ValueRef::Null), Stored::from);
        write_field_value(buf, column, stored)
    }
}

/// One part of a record's identity, the value `v` of key column `field`, as Python compares
/// it: numbers by value whatever their storage class (`1 == 1.0 == True`), text and bytes by
/// content (never equal to each other), dates and decimals by their value's text.
fn identity_key(field: &Field, v: ValueRef<'_>) -> Vec<u8> {
    let number = |f: f64| -> Vec<u8> {
        if f.fract() == 0.0 && f.abs() < 9.2e18 {
            let mut k = vec![b'i'];
            k.extend_from_slice(&(f as i64).to_le_bytes());
            k
        } else {
            let mut k = vec![b'f'];
            k.extend_from_slice(&f.to_bits().to_le_bytes());
            k
        }
    };
    match read(field.ty, v.into()) {
        PyValue::None => vec![b'n'],
        PyValue::Bool(b) => number(if b { 1.0 } else { 0.0 }),
        PyValue::Int(i) => {
            let mut k = vec![b'i'];
            k.extend_from_slice(&i.to_le_bytes());
            k
        }
        PyValue::Float(f) | PyValue::Decimal(_, f) => number(f),
        PyValue::Str(t) => [b"s", t].concat(),
        PyValue::Bytes(b) => [b"b", b].concat(),
        PyValue::Date(d) => [b"d", d.iso().as_bytes()].concat(),
        PyValue::DateTime(d, t) => [b"t", d.iso().as_bytes(), t.iso().as_bytes()].concat(),
        PyValue::Time(t) => [b"h", t.iso().as_bytes()].concat(),
        PyValue::Unreadable(raw) => {
            let mut k = vec![b'u'];
            k.extend_from_slice(format!("{raw:?}").as_bytes());
            k
        }
    }
}

/// A resource as the record flows see it, with the one connection an operation runs on.
pub(crate) struct Sqlite<'c> {
    resource: &'c Resource,
    /// The connection, until the flow takes it ([`Database::connect`], once per operation). A
    /// `Mutex` only so that the flow may share the view between its steps (`Sync`); nothing
    /// else ever waits on it.
    conn: Mutex<Option<&'c mut Connection>>,
    /// What a read may use of the memo and how much work it may do (`sqlite::records`).
    pub(super) budget: Budget,
    /// What stops a read-only query or an action from another thread, and at its deadline
    /// (`sqlite::driver`).
    pub(super) stop: Option<(&'c SqlCancel, &'c Watchdog)>,
}

impl<'c> Sqlite<'c> {
    /// `resource`, whose operation runs on `conn`, using nothing of the list memo.
    pub(crate) fn new(resource: &'c Resource, conn: &'c mut Connection) -> Self {
        Self::reading(resource, conn, Budget::default())
    }

    /// `resource`, whose read runs on `conn` within `budget`.
    pub(crate) fn reading(
        resource: &'c Resource,
        conn: &'c mut Connection,
        budget: Budget,
    ) -> Self {
        Sqlite {
            resource,
            conn: Mutex::new(Some(conn)),
            budget,
            stop: None,
        }
    }

    /// `resource`, whose read-only query or action runs on `conn`, stopped early by `cancel`
    /// and at `watchdog`'s deadline.
    pub(crate) fn querying(
        resource: &'c Resource,
        conn: &'c mut Connection,
        cancel: &'c SqlCancel,
        watchdog: &'c Watchdog,
    ) -> Self {
        Sqlite {
            stop: Some((cancel, watchdog)),
            ..Self::new(resource, conn)
        }
    }

    /// The resource.
    pub(crate) fn resource(&self) -> &'c Resource {
        self.resource
    }
}

/// SQLite's side of the record flows' reads and binds.
impl<'c> Database for Sqlite<'c> {
    fn models(&self) -> &Models<Model> {
        self.resource.models()
    }

    /// What SQLite is given for the value (SQLAlchemy's bind processor of the column's type,
    /// then Python's `sqlite3`); a value the type refuses is the engine's `400`. SQLite keeps
    /// no time zone: `tz` is not needed.
    fn bind(
        field: &Field,
        value: &Internal,
        _tz: i32,
        params: &mut Vec<Value>,
    ) -> Result<String, EngineError> {
        params.push(bind(field.ty.reflected, value).map_err(|m| {
            // An integer past 64 bits: Python's `sqlite3` overflows, the engine fails (500).
            match value {
                Internal::Int(i) if i.parse::<i64>().is_err() => non_field(m).by_design(),
                _ => non_field(m),
            }
        })?);
        Ok("?".to_owned())
    }

    fn memo_key(sql: &str, params: &Vec<Value>) -> Vec<u8> {
        pages::key(sql, params)
    }

    /// The key bound as SQLAlchemy binds a value compared with the column: by the value's own
    /// type (`sqlite::resource::lookup_value`).
    fn key_condition(
        model: &Model,
        raw: &str,
        params: &mut Vec<Value>,
    ) -> Result<String, EngineError> {
        params.push(lookup_value(model, raw)?);
        Ok(format!("{} = ?", model.pk_field().sql))
    }

    /// The operation's connection (`tz` changes nothing on SQLite, where the engine sets no
    /// time zone).
    async fn connect(&self, _tz: Option<&str>) -> Result<&'c mut Connection, EngineError> {
        self.conn
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| {
                EngineError::Internal("an operation asked for its connection twice".to_owned())
            })
    }

    /// SQLite stores date-times as the engine wrote them, and reads them back as they are.
    async fn time_zone(&self, _conn: &mut &'c mut Connection) -> Result<i32, EngineError> {
        Ok(0)
    }

    /// A read's failure is the database's (`500`), as the engine's: SQLite refuses nothing a
    /// selection writes.
    fn fault(&self, e: rusqlite::Error, failure: Failure<'_, Model>) -> EngineError {
        match failure {
            Failure::Write(model) => db_error(model, e),
            Failure::Read { lenient } => EngineError::from(e).unless_lenient(lenient),
            Failure::Query | Failure::Unexpected => EngineError::from(e),
        }
    }
}

/// The identity values of a row as stored, which SQLAlchemy names the row by in its writes;
/// `Err` where one is NULL (the ORM's flush fails: `400 Query failed`).
fn identity_of(model: &Model, row: &[Value]) -> Result<Vec<Value>, EngineError> {
    let key: Vec<Value> = model.identity.iter().map(|&i| row[i].clone()).collect();
    if key.contains(&Value::Null) {
        return Err(query_failed());
    }
    Ok(key)
}

/// `"c1" = ? AND ...` over the model's identity columns.
fn at_identity(model: &Model) -> String {
    equal_all(&identity_columns(model))
}

/// The model's identity columns, quoted.
fn identity_columns(model: &Model) -> Vec<String> {
    model
        .identity
        .iter()
        .map(|&i| model.fields[i].sql.clone())
        .collect()
}

/// The index of a field in its model.
fn model_index(model: &Model, f: &Field) -> usize {
    model
        .fields
        .iter()
        .position(|g| std::ptr::eq(g, f))
        .unwrap_or(model.pk)
}

/// Whether SQLAlchemy takes the primary key for an autoincrement column, whose value after an
/// INSERT is the cursor's `lastrowid`: a single integer or numeric key (`INTEGER`, `INT`,
/// `BIGINT`, `REAL`, `NUMERIC`...) without a foreign key or a default, the promoted first
/// column of a table without a key included. A composite key never is (SQLAlchemy has no
/// autoincrement column for it).
fn autoincrement_key(model: &Model) -> bool {
    let pk = model.pk_field();
    model.identity.len() == 1
        && matches!(
            pk.ty.reflected,
            Reflected::Integer | Reflected::Float | Reflected::Numeric { .. }
        )
        && !pk.has_default
        && !model.foreign_keys.iter().any(|fk| fk.column == pk.name)
}

/// SQLite's side of the writes (`flow::write`). The locked row is read whole: the engine's
/// ORM loads the record before it writes, fails on a value it cannot read, and compares each
/// given value with the loaded one in Python.
impl<'c> Writes for Sqlite<'c> {
    type Locked = Vec<Value>;

    fn lock_select(model: &Model) -> String {
        model.select_list.clone()
    }

    fn locked(row: &Vec<Value>) -> Vec<Value> {
        row.clone()
    }

    fn loaded(&self, model: &Model, locked: &Vec<Value>, lenient: bool) -> Result<(), EngineError> {
        self.resource.readable(model, locked, lenient)
    }

    fn held(model: &Model, locked: &Vec<Value>, values: &Values<'_, Field>) -> Option<Vec<bool>> {
        Some(
            values
                .iter()
                .map(|(f, v)| {
                    let loaded = read(f.ty, Stored::from(&locked[model_index(model, f)]));
                    py_equal(v, &loaded, f.ty.reflected)
                })
                .collect(),
        )
    }

    fn at_locked(model: &Model, locked: &Vec<Value>, params: &mut Vec<Value>) -> String {
        params.extend(model.identity.iter().map(|&i| locked[i].clone()));
        at_identity(model)
    }

    /// By the mapper's identity, as SQLAlchemy names the row: a NULL in it is a flush error,
    /// and a statement that reaches another number of rows than one (a promoted key that
    /// repeats) a stale-data error; the engine rolls back and answers `400 Query failed` to
    /// both. The record is read back by its identity, the key columns set included.
    async fn update_locked(
        &self,
        tx: &mut Session<Self>,
        model: &Model,
        values: &Values<'_, Field>,
        locked: Vec<Value>,
        tz: i32,
    ) -> Result<Vec<u8>, EngineError> {
        let mut identity: Vec<Value> = model.identity.iter().map(|&i| locked[i].clone()).collect();
        if !values.is_empty() {
            // One bound value per value, in order: `bound[j]` is `values[j]`'s. A value its
            // column refuses is the field's 400, before the locked row's identity is read.
            let mut bound = Vec::with_capacity(values.len());
            let sets = set_list::<Self>(values, tz, &mut bound)?;
            let old_identity = identity_of(model, &locked)?;
            let sql = update_sql::<Self>(model, &sets, &at_identity(model));
            let binds = bound.iter().chain(old_identity.iter());
            let changed = prepare(tx.conn(), &sql)
                .and_then(|mut s| s.execute(params_from_iter(binds)))
                .map_err(|e| db_error(model, e))?;
            if changed != 1 {
                return Err(query_failed());
            }
            for (at, &i) in identity.iter_mut().zip(&model.identity) {
                let set = values
                    .iter()
                    .position(|(f, _)| std::ptr::eq(*f, &model.fields[i]));
                if let Some(j) = set {
                    *at = bound[j].clone();
                }
            }
        }
        let row = get_by_identity(tx.conn(), model, &identity)?.ok_or_else(|| {
            // The engine fails (500) when the written record cannot be read back by its key.
            EngineError::Internal(format!(
                "the record of {} was written but cannot be read back by its key",
                model.name
            ))
        })?;
        Ok(record_json(model, row.as_slice(), 0))
    }

    /// By the mapper's identity: every row that shares a promoted key goes (SQLAlchemy only
    /// warns that it matched more than one); a NULL in a composite key is a flush error,
    /// `400 Query failed`.
    async fn delete_locked(
        &self,
        tx: &mut Session<Self>,
        model: &Model,
        locked: Vec<Value>,
    ) -> Result<(), EngineError> {
        let key = identity_of(model, &locked)?;
        let key_cols = identity_columns(model);
        let at = Locator {
            select: key_cols.join(", "),
            condition: equal_all(&key_cols),
            may_repeat: model.promoted_key,
        };
        let table = schema::table(&model.name);
        let mut flow_conn = SqliteConnection {
            conn: tx.conn(),
            model,
        };
        // Run here, not awaited: the connection is not `Send`, and every step is done when
        // called.
        run_now(delete_row(&mut flow_conn, &table, &at, key, &at.condition))
    }

    /// In one transaction: the row inserted, then read back by its identity as the engine
    /// refreshes it (the key given, else SQLite's last rowid, SQLAlchemy's `lastrowid`, which
    /// is the key only for an `INTEGER PRIMARY KEY`: for another integer or numeric key it
    /// names whichever record has that key, or none).
    async fn insert(
        &self,
        conn: &mut &'c mut Connection,
        model: &Model,
        values: &Values<'_, Field>,
        _tz: i32,
        lenient: bool,
    ) -> Result<Vec<u8>, EngineError> {
        let pk_field = model.pk_field();
        // The new record's identity (the mapper's key columns) comes from the body; a
        // composite key may leave some of them NULL, not all.
        let pk_given = values
            .iter()
            .any(|(f, v)| model.identity.contains(&model_index(model, f)) && *v != Internal::None);
        let no_key = || {
            format!(
                "A value is required for the primary key {:?}: the database does not assign \
                 it. Send one in the body.",
                pk_field.name
            )
        };
        if !pk_given && !autoincrement_key(model) {
            // SQLAlchemy has no way to learn the new record's key: the engine inserts, then
            // answers `400 Query failed` (a NULL identity) and rolls back.
            return Err(EngineError::field(pk_field.name.clone(), no_key()));
        }
        // One value per written column, in order: SQLite binds each at a `?`.
        let mut params = Vec::new();
        let (sql, written) = insert_statement::<Self>(model, values, 0, &mut params)?;
        // A savepoint: a transaction of its own, or one step of `Resource::create_bodies`'s.
        let tx = conn.savepoint()?;
        prepare(&tx, &sql)
            .and_then(|mut s| s.execute(params_from_iter(params.iter())))
            .map_err(|e| db_error(model, e))?;
        let identity: Vec<Value> = model
            .identity
            .iter()
            .map(|&i| {
                match written
                    .iter()
                    .position(|(f, _)| std::ptr::eq(*f, &model.fields[i]))
                {
                    Some(at) => params[at].clone(),
                    None if autoincrement_key(model) => Value::Integer(tx.last_insert_rowid()),
                    None => Value::Null,
                }
            })
            .collect();
        let Some(row) = get_by_identity(&tx, model, &identity)? else {
            // The engine commits the row with a NULL key, then fails (500) reading it back.
            // Strict mode stores nothing ([decision: stricter]); lenient mode does what the
            // engine does.
            if lenient {
                tx.commit().map_err(|e| db_error(model, e))?;
            }
            return Err(EngineError::engine_fails(lenient, &pk_field.name, no_key()));
        };
        tx.commit().map_err(|e| db_error(model, e))?;
        Ok(record_json(model, row.as_slice(), 0))
    }
}
