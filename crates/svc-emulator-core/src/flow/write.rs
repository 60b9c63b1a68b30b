//! A record's create, update and delete, as the engine writes them on every database: the
//! body read by the serializer's fields, the record selected and locked first (a `404` before
//! the body is looked at), one transaction, and the record as stored. How a database names the
//! locked row, writes the values and reads them back is its own (the writes of its [`Database`]).
//!
//! The transaction is a [`Session`] of the database's driver: begun with the dialect's
//! `BEGIN`, rolled back when dropped before its commit.

use crate::flow::state::Served;
use std::sync::Arc;

use crate::dialect::bind::{Bind, Binds};
use crate::dialect::clause::Where;
use crate::flow::database::Database;
use crate::flow::driver::DriverRow;
use crate::flow::driver::{Failure, Session};
use crate::flow::records::{ModelSql, catalog_text};
use svc_engine::body::{
    body_values, keep_changed, loads_none, query_failed, unchanged_candidates, validate,
};
use svc_engine::field_input::Internal;
use svc_engine::python::json::PyJson;
use svc_engine::records::record_json;
use svc_engine::relation::Use;
use svc_engine::table::{BodyColumn, Column, Table};
use svc_engine::{EngineError, Selection};

/// The statement of a create: `INSERT INTO` the model's table the `columns` with their
/// `values` (placeholders, or SQL such as `NULL`), in order; a row of defaults when none is
/// given. A database that reads the row back in the same statement adds its `RETURNING`.
pub fn insert_sql<D: Database>(model: &D::Model, columns: &[&str], values: &[String]) -> String {
    if columns.is_empty() {
        format!("INSERT INTO {} {}", model.table_sql(), D::DEFAULTS_ONLY)
    } else {
        format!(
            "INSERT INTO {} ({}) VALUES ({})",
            model.table_sql(),
            columns.join(", "),
            values.join(", ")
        )
    }
}

/// The `INSERT` of a create of `values`, and the values it writes ([`insert_values`]), each
/// bound for its column in `params`, in order (`tz`: as [`Database::bind`] takes it).
pub fn insert_statement<'m, D: Database>(
    model: &'m D::Model,
    values: &Values<'m, D::Field>,
    tz: i32,
    params: &mut Binds,
) -> Result<(String, Values<'m, D::Field>), EngineError> {
    let written = insert_values(model.columns(), values);
    let mut names = Vec::new();
    let mut binds = Vec::new();
    for (f, v) in &written {
        names.push(f.sql());
        binds.push(D::bind(f, v, tz, params)?);
    }
    Ok((insert_sql::<D>(model, &names, &binds), written))
}

/// The statement of an update: `sets` (`a = $1, b = $2`, as [`set_list`] writes them) on the
/// rows `at` selects. A database that reads the row back in the same statement adds its
/// `RETURNING`.
pub fn update_sql<D: Database>(model: &D::Model, sets: &str, at: &str) -> String {
    format!("UPDATE {} SET {sets} WHERE {at}", model.table_sql())
}

/// The statement that reads a written record back as stored where the database's `INSERT` and
/// `UPDATE` give nothing back (MySQL, SQLite): the model's select list, at `at` (its identity,
/// as the write left it).
pub fn read_back_sql(model: &impl ModelSql, at: &str) -> String {
    format!(
        "SELECT {} FROM {} WHERE {at} LIMIT 1",
        model.select_list(),
        model.table_sql()
    )
}

/// A create as the engine's ORM writes it where the `INSERT` answers nothing
/// ([`Database::insert`], MySQL's): the `INSERT`, then the row read back by its whole identity,
/// each key column's value as given (bound as the `INSERT` binds it), else the key the database
/// made for its auto-increment column
/// ([`Driver::last_insert_id`](crate::flow::driver::Driver::last_insert_id)). Where none of them is known,
/// the ORM's flush fails and the engine rolls back: `400 Query failed`.
pub async fn insert_by_identity<D: Database>(
    db: &D,
    tx: &mut Session<D>,
    model: &D::Model,
    values: &Values<'_, D::Field>,
    tz: i32,
) -> Result<ReadBack, EngineError> {
    let mut params = Binds::default();
    let (sql, _) = insert_statement::<D>(model, values, tz, &mut params)?;
    let done = tx.write(&sql, &params).await;
    done.map_err(|f| db.fault(f, Failure::Write(model)))?;
    let made = D::last_insert_id(tx.conn());
    let columns = model.columns();
    let mut identity = Vec::with_capacity(model.identity().len());
    for &i in model.identity() {
        let column = &columns[i];
        identity.push(
            match values.iter().find(|(f, _)| f.name() == column.name()) {
                Some((f, v)) => bound::<D>(f, v, tz)?,
                None if column.autoincrement() => made.clone().unwrap_or(Bind::Null),
                None => Bind::Null,
            },
        );
    }
    if identity.iter().all(|v| *v == Bind::Null) {
        return Err(query_failed());
    }
    read_back(db, tx, model, &identity, tz).await
}

/// An update as the engine's ORM writes it by the locked row's identity
/// ([`Database::update_locked`], MySQL's and SQLite's): a value its column refuses is the field's `400`
/// first; where the identity names another number of rows than one, the flush fails and the
/// engine answers `400 Query failed` (nothing written); the record is read back by its identity
/// after the write (the key columns set take their new values).
pub async fn update_by_identity<D: Database>(
    db: &D,
    tx: &mut Session<D>,
    model: &D::Model,
    values: &Values<'_, D::Field>,
    locked: Vec<Bind>,
    tz: i32,
) -> Result<ReadBack, EngineError> {
    if values.is_empty() {
        // Nothing is written: the record is read back by its identity as loaded (a NULL part
        // with `IS NULL`), which the ORM does not need to name a row by.
        let identity = D::identity_cells(model, &locked);
        return read_back(db, tx, model, &identity, tz).await;
    }
    let mut params = Binds::default();
    let sets = set_list::<D>(values, tz, &mut params)?;
    let mut identity = D::identity_of(model, &locked)?;
    // The flush expects its UPDATE to match one row: a promoted key may name several, and an
    // identity the ORM binds otherwise than it is stored none (SQLite's `NUMERIC(10, 2)` key
    // stored with three decimals). Either is the engine's `400 Query failed`, nothing written.
    if rows_with(db, tx, model, &identity).await? != 1 {
        return Err(query_failed());
    }
    let at = D::at_locked(model, &locked, &mut params);
    let done = tx.write(&update_sql::<D>(model, &sets, &at), &params).await;
    done.map_err(|f| db.fault(f, Failure::Write(model)))?;
    let columns = model.columns();
    for (n, &i) in model.identity().iter().enumerate() {
        let set = values.iter().find(|(f, _)| f.name() == columns[i].name());
        if let Some((f, v)) = set {
            identity[n] = bound::<D>(f, v, tz)?;
        }
    }
    if identity.iter().all(|v| *v == Bind::Null) {
        // The key set to NULL: the ORM cannot name the record after its flush, and the
        // engine rolls back (`400 Query failed`).
        return Err(query_failed());
    }
    read_back(db, tx, model, &identity, tz).await
}

/// The value `v` of the column `f` as a statement binds it ([`Database::bind`]): the first
/// value the binding pushes (`NULL` where it pushes none).
fn bound<D: Database>(f: &D::Field, v: &Internal, tz: i32) -> Result<Bind, EngineError> {
    let mut params = Binds::default();
    D::bind(f, v, tz, &mut params)?;
    Ok(params.0.into_iter().next().unwrap_or(Bind::Null))
}

/// How many rows hold `identity` (a promoted key may name several).
async fn rows_with<D: Database>(
    db: &D,
    tx: &mut Session<D>,
    model: &D::Model,
    identity: &[Bind],
) -> Result<u64, EngineError> {
    let mut params = Binds::default();
    let at = at_identity::<D>(model, identity, &mut params);
    let sql = format!("SELECT COUNT(*) FROM {} WHERE {at}", model.table_sql());
    let rows = tx.cell_rows(&sql, &params).await;
    let rows = rows.map_err(|f| db.fault(f, Failure::Unexpected))?;
    let count = rows
        .into_iter()
        .next()
        .and_then(|row| row.into_iter().next());
    Ok(count.map_or(0, |n| catalog_text(n).parse().unwrap_or(0)))
}

/// A written record read back as the engine's ORM reads it after its write: the first row
/// whose identity columns hold `identity` ([`ReadBack::Lost`] where none does).
async fn read_back<D: Database>(
    db: &D,
    tx: &mut Session<D>,
    model: &D::Model,
    identity: &[Bind],
    tz: i32,
) -> Result<ReadBack, EngineError> {
    let mut params = Binds::default();
    let at = at_identity::<D>(model, identity, &mut params);
    let mut record = None;
    let mut sink = |row: &D::Row<'_>| {
        if record.is_none() {
            record = Some(record_json(model, &DriverRow::<D>(row), tz));
        }
    };
    let sql = read_back_sql(model, &at);
    db.read_rows(tx.conn(), &sql, &params, false, &mut sink)
        .await?;
    Ok(ReadBack::of(model, record))
}

/// The condition that an identity's columns hold `identity`, each bound in `params`; a NULL
/// part compared with `IS NULL`, as SQLAlchemy loads an instance by an identity that has one.
fn at_identity<D: Database>(model: &D::Model, identity: &[Bind], params: &mut Binds) -> String {
    let columns = model.columns();
    let conditions: Vec<String> = model
        .identity()
        .iter()
        .zip(identity)
        .map(|(&i, value)| {
            let column = D::column(&columns[i]);
            match value {
                Bind::Null => format!("{column} IS NULL"),
                value => format!("{column} = {}", params.bind::<D>(value.clone())),
            }
        })
        .collect();
    conditions.join(" AND ")
}

/// A body's values: each given field, as its serializer field made it.
pub type Values<'m, F> = Vec<(&'m F, Internal)>;

/// The columns a create's `INSERT` writes and their values, in table order, as SQLAlchemy
/// 1.4's ORM chooses them (`persistence._collect_insert_commands`): each value given, but a
/// `None` the column's type does not evaluate ([`BodyColumn::evaluates_none`]), which it leaves
/// out; then an explicit NULL (`Internal::None`) for each column of
/// `mapper._insert_cols_as_none` without a value: not the key, no default the reflection read,
/// not generated, not JSON. Where the reflection reads every default the database has, that
/// NULL is what leaving the column out stores; where it misses one (MySQL's expression
/// defaults), the NULL overrides it, as the engine's does. (SQLite's model names only the first
/// column of a composite key its `primary_key`: another key column not given, without a
/// default, is sent as NULL where the ORM leaves it out, which stores the same row, or is
/// refused with the same NOT NULL message in a `WITHOUT ROWID` table.)
pub fn insert_values<'m, F: BodyColumn>(columns: &'m [F], values: &Values<'m, F>) -> Values<'m, F> {
    let mut written = Vec::new();
    for f in columns {
        match values.iter().find(|(g, _)| g.name() == f.name()) {
            Some((_, v)) if *v != Internal::None || f.evaluates_none() => {
                written.push((f, v.clone()));
            }
            _ if !f.primary_key() && !f.has_default() && !f.generated() && !f.evaluates_none() => {
                written.push((f, Internal::None));
            }
            _ => {}
        }
    }
    written
}

/// Creates a record from a body as the engine does, and returns it as stored (`201`).
pub async fn create<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    body: &PyJson,
    lenient: bool,
) -> Result<Vec<u8>, EngineError> {
    let model = db.model(model)?;
    let values = create_values::<D>(&model, body)?;
    let mut conn = db.connect().await?;
    let tz = db.time_zone(&mut conn).await?;
    let mut session = Session::new(conn);
    create_in(db, &mut session, &model, &values, tz, lenient).await
}

/// Creates a record of `values` in a transaction of its own on `session` (which holds none),
/// as [`create`] does: `lenient` as the request's mode. A refusal rolls it back.
pub async fn create_in<D: Database>(
    db: &Served<'_, D>,
    session: &mut Session<D>,
    model: &D::Model,
    values: &Values<'_, D::Field>,
    tz: i32,
    lenient: bool,
) -> Result<Vec<u8>, EngineError> {
    let begun = session.start(D::BEGIN).await;
    begun.map_err(|f| db.fault(f, Failure::Unexpected))?;
    match db.insert(session, model, values, tz).await {
        Ok(read) => settle(db, session, model, read, lenient).await,
        Err(e) => {
            // Where the rollback fails too, the session gives its connection up when dropped.
            let _undone = session.rollback().await;
            Err(e)
        }
    }
}

/// Creates a record from each body in turn, strictly, in one transaction: the number created,
/// or the index of the first body refused and why, with nothing created.
pub async fn create_all<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    bodies: &[PyJson],
) -> Result<usize, (usize, EngineError)> {
    let model = db.model(model).map_err(|e| (0, e))?;
    let mut conn = db.connect().await.map_err(|e| (0, e))?;
    let tz = db.time_zone(&mut conn).await.map_err(|e| (0, e))?;
    let mut tx = begin(db, conn).await.map_err(|e| (0, e))?;
    for (i, body) in bodies.iter().enumerate() {
        // Refused: the transaction is rolled back when dropped.
        let values = create_values::<D>(&model, body).map_err(|e| (i, e))?;
        let read = db.insert(&mut tx, &model, &values, tz).await;
        if let ReadBack::Lost { field, why } = read.map_err(|e| (i, e))? {
            return Err((i, EngineError::engine_fails(false, &field, why)));
        }
    }
    commit(db, &mut tx, &model)
        .await
        .map_err(|e| (bodies.len(), e))?;
    Ok(bodies.len())
}

/// A written record, as the engine's ORM reads it back after its write: by the identity it
/// was given (the key values sent, or those the database made), not by where the row is.
#[derive(Debug)]
pub enum ReadBack {
    /// The record as stored, written as JSON.
    Record(Vec<u8>),
    /// No row has that identity: the column stores a key value differently from the value
    /// given (rounded, truncated, padded), or the database made none. The engine commits,
    /// then fails (`500`) reading the record back: `field` and `why` say which and why.
    Lost {
        /// The field to name.
        field: String,
        /// Why, and what to send instead.
        why: String,
    },
}

impl ReadBack {
    /// The record read back, or [`Lost`](Self::Lost) naming `model`'s key where there is
    /// none.
    pub fn of<T: Table>(model: &T, record: Option<Vec<u8>>) -> Self {
        match record {
            Some(record) => ReadBack::Record(record),
            None => ReadBack::Lost {
                field: model.pk_field().name().to_owned(),
                why: format!(
                    "The record of {} was written, but no record has the key it was given: the \
                     key's column stores the value sent as another value (rounded, truncated \
                     or padded to its type). The data engine reads the record back by the \
                     value sent, and fails (500) after storing it. Send the key as the column \
                     stores it.",
                    model.table_name()
                ),
            },
        }
    }
}

/// Ends a write's transaction as the engine ends it: committed with the record read back;
/// where it was [lost](ReadBack::Lost), committed and failed (`500`) in lenient mode, as the
/// engine does, rolled back and refused (`400`, `[decision: stricter]`: nothing stored) in
/// strict mode.
async fn settle<D: Database>(
    db: &Served<'_, D>,
    tx: &mut Session<D>,
    model: &D::Model,
    read: ReadBack,
    lenient: bool,
) -> Result<Vec<u8>, EngineError> {
    match read {
        ReadBack::Record(record) => {
            commit(db, tx, model).await?;
            Ok(record)
        }
        ReadBack::Lost { field, why } => {
            if lenient {
                commit(db, tx, model).await?;
            } else {
                let undone = tx.rollback().await;
                undone.map_err(|f| db.fault(f, Failure::Unexpected))?;
            }
            Err(EngineError::engine_fails(lenient, &field, why))
        }
    }
}

/// What a create of `body` writes to `model`, as the engine reads the body: a create's and an
/// import's (`flow::imported`).
pub fn create_values<'m, D: Database>(
    model: &'m D::Model,
    body: &'m PyJson,
) -> Result<Values<'m, D::Field>, EngineError> {
    let values = read_values::<D>(model, body)?;
    D::writable(&values)?;
    Ok(values)
}

/// A create's body read as the engine reads it, before the database's refusals of what the
/// engine cannot write ([`Database::writable`]), which an import writes in its own way.
pub fn read_values<'m, D: Database>(
    model: &'m D::Model,
    body: &'m PyJson,
) -> Result<Values<'m, D::Field>, EngineError> {
    let given = body_values(model, body, false)?;
    let mut values = validate(model, &given, true)?;
    // An autoincrement key sent as 0, "" or null counts as not sent.
    if model.pk_field().autoincrement()
        && let Some(at) = values.iter().position(|(f, _)| f.primary_key())
        && !values[at].1.truthy()
    {
        values.remove(at);
    }
    Ok(values)
}

/// Updates the record `pk` (which `selection` must select) from a body, and returns it as
/// stored. The key may change. A `PUT` (`partial` false) needs every column a create needs;
/// fields not sent are left as they are either way.
pub async fn update<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    pk: &str,
    body: &PyJson,
    selection: &Selection,
    partial: bool,
) -> Result<Vec<u8>, EngineError> {
    let Selected { model, filter, key } = selected(db, model, pk, selection)?;
    let mut conn = db.connect().await?;
    let tz = db.time_zone(&mut conn).await?;
    let mut tx = begin(db, conn).await?;
    // The record first (404 before the body is looked at), locked for the update.
    let locked = lock(db, &mut tx, &model, &filter, &key, selection.lenient).await?;
    let mut values = changes::<D>(&model, body, partial, selection.lenient)?;
    // The ORM writes only the attributes that changed.
    let (candidates, unchanged) = match D::held(&model, &locked, &values) {
        Some(held) => ((0..values.len()).collect(), held),
        None => asked_unchanged(db, &mut tx, &model, &locked, &values, tz).await?,
    };
    keep_changed(&mut values, &candidates, &unchanged);
    let read = db.update_locked(&mut tx, &model, &values, locked, tz);
    let read = read.await?;
    settle(db, &mut tx, &model, read, selection.lenient).await
}

/// Deletes the record `pk` (which `selection` must select), after what the engine's ORM does to
/// the rows that refer to it.
pub async fn delete<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    pk: &str,
    selection: &Selection,
) -> Result<(), EngineError> {
    let Selected { model, filter, key } = selected(db, model, pk, selection)?;
    let conn = db.connect().await?;
    let mut tx = begin(db, conn).await?;
    let locked = lock(db, &mut tx, &model, &filter, &key, selection.lenient).await?;
    db.delete_locked(&mut tx, &model, locked).await?;
    commit(db, &mut tx, &model).await
}

/// A write's transaction on `conn`.
async fn begin<D: Database>(db: &Served<'_, D>, conn: D::Conn) -> Result<Session<D>, EngineError> {
    let tx = Session::begin(conn, D::BEGIN).await;
    tx.map_err(|f| db.fault(f, Failure::Unexpected))
}

/// Commits a write's transaction (a failure is the write's, in `model`'s terms).
async fn commit<D: Database>(
    db: &Served<'_, D>,
    tx: &mut Session<D>,
    model: &D::Model,
) -> Result<(), EngineError> {
    let done = tx.commit().await;
    done.map_err(|f| db.fault(f, Failure::Write(model)))
}

/// The positions among `values` of those whose plain write would differ from the ORM's
/// (`unchanged_candidates`), and whether the locked row holds each already, as the ORM
/// compares (a JSON `None` with what loads as `None`): those it holds are left out, as the
/// ORM leaves out an unchanged attribute.
async fn asked_unchanged<D: Database>(
    db: &Served<'_, D>,
    tx: &mut Session<D>,
    model: &D::Model,
    locked: &[Bind],
    values: &Values<'_, D::Field>,
    tz: i32,
) -> Result<(Vec<usize>, Vec<bool>), EngineError> {
    let candidates = unchanged_candidates(values);
    if candidates.is_empty() {
        return Ok((candidates, Vec::new()));
    }
    let mut params = Binds::default();
    let mut same = Vec::with_capacity(candidates.len());
    for &i in &candidates {
        let (f, v) = &values[i];
        let holds = if loads_none(*f, v) {
            D::loads_none(D::column(f))
        } else {
            D::same_value(D::column(f), &D::bind(f, v, tz, &mut params)?)
        };
        // A truth as `1` or `0` (NULL is not the same): an integer on every database.
        same.push(format!("CASE WHEN {holds} THEN 1 ELSE 0 END"));
    }
    let at = D::at_locked(model, locked, &mut params);
    let sql = format!(
        "SELECT {} FROM {} WHERE {at} LIMIT 1",
        same.join(", "),
        model.table_sql()
    );
    let texts = |row: &D::Row<'_>| (0..candidates.len()).map(|i| D::text(row, i)).collect();
    let first: Option<Vec<_>> = D::first_row(tx.conn(), &sql, &params, texts)
        .await
        .map_err(|f| db.fault(f, Failure::Write(model)))?;
    let first = first.unwrap_or_default();
    let unchanged = (0..candidates.len())
        .map(|i| first.get(i).cloned().flatten().as_deref() == Some("1"))
        .collect();
    Ok((candidates, unchanged))
}

/// The record `filter` and `key` select, locked until the transaction ends; `404` when there
/// is none. A database error is a read's (the engine fails there: strict mode answers `400`).
async fn lock<D: Database>(
    db: &Served<'_, D>,
    tx: &mut Session<D>,
    model: &D::Model,
    filter: &Where<Binds>,
    key: &str,
    lenient: bool,
) -> Result<Vec<Bind>, EngineError> {
    let sql = format!(
        "SELECT {} FROM {}{} LIMIT 1{}",
        D::lock_select(model),
        model.table_sql(),
        filter.and(key),
        D::LOCK
    );
    let locked = D::first_row(tx.conn(), &sql, &filter.params, D::cells).await;
    let locked = locked.map_err(|f| db.fault(f, Failure::Read { lenient }))?;
    let locked = locked.ok_or(EngineError::RecordNotFound)?;
    db.loaded(model, &locked, lenient)?;
    Ok(locked)
}

/// `col = value, ...` of an `UPDATE` of `values` (not empty), each bound in `params`.
pub fn set_list<D: Database>(
    values: &Values<'_, D::Field>,
    tz: i32,
    params: &mut Binds,
) -> Result<String, EngineError> {
    let sets = values
        .iter()
        .map(|(f, v)| Ok(format!("{} = {}", D::column(f), D::bind(f, v, tz, params)?)))
        .collect::<Result<Vec<String>, EngineError>>()?;
    Ok(sets.join(", "))
}

/// The record a request names: its model, the selection's clause, and the key's condition
/// (`404` for an unknown model; the filters and the key read as the engine reads them).
struct Selected<D: Database> {
    /// The model.
    model: Arc<D::Model>,
    /// The selection's clause, with the key's value bound after the filters'.
    filter: Where<Binds>,
    /// `key = value`.
    key: String,
}

/// The record `pk` of `model` that `selection` must select, for a write.
fn selected<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    pk: &str,
    selection: &Selection,
) -> Result<Selected<D>, EngineError> {
    let model = db.model(model)?;
    let mut filter = db.filters(&model, selection, Use::Write)?;
    let key = D::key_condition(&model, pk, &mut filter.params)?;
    Ok(Selected { model, filter, key })
}

/// An update's values, read by the serializer's fields after the record was found: a `PUT`
/// (`partial` false) needs every column a create needs; fields not sent are left as they are.
/// A `PATCH` whose body is not an object makes the engine fail (500) on every model (its
/// partial serializer reads the body as a dict), where a model with required columns would
/// otherwise find nothing to change: refused (`[decision: stricter]`, lenient mode's `500`).
fn changes<'m, D: Database>(
    model: &'m D::Model,
    body: &'m PyJson,
    partial: bool,
    lenient: bool,
) -> Result<Values<'m, D::Field>, EngineError> {
    if partial && !matches!(body, PyJson::Dict(_)) {
        return Err(EngineError::engine_fails(
            lenient,
            "non_field_errors",
            format!(
                "Invalid data. Expected a JSON object of field values, but got {}: the data \
                 engine fails (500) on a PATCH whose body is not an object.",
                body.kind_name()
            ),
        ));
    }
    let given = body_values(model, body, true)?;
    let values = validate(model, &given, !partial)?;
    D::writable(&values)?;
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_engine::field_input::InputField;
    use svc_engine::table::Column;
    use svc_engine::types::{FilterFamily, Search, Serializer};

    /// A column with the facts `insert_values` reads.
    struct Col {
        name: &'static str,
        key: bool,
        default: bool,
        generated: bool,
        json: bool,
    }

    impl Column for Col {
        fn name(&self) -> &str {
            self.name
        }
        fn sql(&self) -> &str {
            self.name
        }
        fn family(&self) -> FilterFamily {
            FilterFamily::Text
        }
        fn search(&self) -> Search {
            Search::Contains
        }
    }

    impl BodyColumn for Col {
        fn input(&self) -> InputField {
            InputField::Char
        }
        fn required(&self) -> bool {
            false
        }
        fn generated(&self) -> bool {
            self.generated
        }
        fn primary_key(&self) -> bool {
            self.key
        }
        fn autoincrement(&self) -> bool {
            self.key
        }
        fn has_default(&self) -> bool {
            self.default
        }
        fn evaluates_none(&self) -> bool {
            self.json
        }
        fn query_object(&self) -> Serializer {
            Serializer::Text
        }
    }

    const fn col(name: &'static str) -> Col {
        Col {
            name,
            key: false,
            default: false,
            generated: false,
            json: false,
        }
    }

    /// SQLAlchemy 1.4's `_collect_insert_commands`: a `None` given is left out unless the
    /// type evaluates it; then NULL for each column not given that is no key, has no default,
    /// is not generated and does not evaluate `None` (`_insert_cols_as_none`).
    #[test]
    fn a_creates_columns_are_those_the_orm_sends() {
        let columns = [
            Col {
                key: true,
                ..col("id")
            },
            col("given"),
            col("given_none"),
            col("not_given"),
            Col {
                default: true,
                ..col("defaulted")
            },
            Col {
                generated: true,
                ..col("computed")
            },
            Col {
                json: true,
                ..col("doc_none")
            },
            Col {
                json: true,
                ..col("doc_not_given")
            },
        ];
        let given = Internal::Str("x".to_owned());
        let values: Values<'_, Col> = vec![
            (&columns[1], given.clone()),
            (&columns[2], Internal::None),
            (&columns[6], Internal::None),
        ];
        let written = insert_values(&columns, &values);
        let sent: Vec<(&str, &Internal)> = written.iter().map(|(f, v)| (f.name, v)).collect();
        assert_eq!(
            sent,
            [
                ("given", &given),
                ("given_none", &Internal::None),
                ("not_given", &Internal::None),
                ("doc_none", &Internal::None),
            ]
        );
    }
}
