//! A resource's records written out and read back in (`svc emulator export`, `--import`),
//! written once for every database over its [`Database`]; and the parts of a restore that an
//! import shares (`flow::snapshot`, the database servers' saved copies).
//!
//! **An export** reads every model that holds rows (not views) in one transaction that sees
//! the data as of one moment: each model's rows in key order, every row (also rows that share a
//! promoted key, which the engine's ORM shows as one record), as the engine's serializer writes
//! them (the fixtures format); and what numbers the next generated keys.
//!
//! **An import**, in one transaction, as a restore puts a saved copy back: the foreign keys'
//! checks turned off where the database lets the session, else the models written parents
//! first; the models emptied first when the import replaces their rows; each record written
//! with exactly its columns (a `null` is NULL, not the column's default), its values read as a
//! create reads them but for the generated columns, which the database computes again; the next
//! generated keys as exported, when the models held only the imported rows; the commit.

use crate::flow::state::Served;
use std::collections::BTreeMap;
use std::future::Future;

use crate::dialect::bind::Binds;
use crate::flow::database::Database;
use crate::flow::driver::DriverRow;
use crate::flow::driver::{Failure, Session};
use crate::flow::read::readable;
use crate::flow::records::{BaseTable, ModelSql};
use crate::flow::write::{Values, read_values};
use svc_engine::EngineError;
use svc_engine::field_input::Internal;
use svc_engine::python::json::PyJson;
use svc_engine::python::text::py_bytes_literal;
use svc_engine::records::Records;
use svc_engine::table::{BodyColumn, Column, Table};

/// A copy of a resource's data ([`Database::save_copy`]): only the resource that kept it reads
/// it.
pub type SavedData = std::sync::Arc<dyn std::any::Any + Send + Sync>;

/// A table of a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedTable {
    /// The model's name (the table's).
    pub name: String,
    /// The table in SQL, quoted (and qualified where the database qualifies it).
    pub sql: String,
    /// The columns its rows are put back with (all but the generated ones), quoted,
    /// comma-separated.
    pub columns: String,
    /// The store's table that holds its rows, quoted and qualified by the store.
    pub held: String,
}

/// What a restore turned off in its transaction ([`Database::suspend_checks`]), and what it left
/// on.
#[derive(Debug, Default)]
pub struct Suspended {
    /// The foreign keys among the saved tables that are still checked at each statement, as
    /// `(referring table, referred table)` names: the tables go back parents first. None where
    /// the checks are off: the tables go back in any order.
    pub still_checked: Vec<(String, String)>,
    /// The statements that turn back on, before the commit, what was turned off (a failed
    /// restore rolls both back).
    pub undo: Vec<String>,
}

/// What a restore (or an import) set aside before its transaction, because the database can
/// neither turn it off for a session nor change it inside a transaction (MySQL's triggers:
/// `DROP TRIGGER` commits), and the work that puts it back ([`Database::set_aside`]).
///
/// [`put_back`](Self::put_back) is awaited once the transaction has ended, committed or not.
/// Dropped before that (the restore's future dropped half-way), it puts back on the runtime, as
/// [`Store`] drops its copy: best effort, a killed emulator leaves the triggers dropped.
pub struct Aside {
    put_back: Option<PutBack>,
}

impl std::fmt::Debug for Aside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Aside")
            .field("put_back", &self.put_back.is_some())
            .finish()
    }
}

/// The work that puts back what an [`Aside`] holds.
type PutBack = std::pin::Pin<Box<dyn Future<Output = Result<(), EngineError>> + Send>>;

impl Aside {
    /// `put_back` puts back what was set aside, when awaited.
    pub fn put_back_by(
        put_back: impl Future<Output = Result<(), EngineError>> + Send + 'static,
    ) -> Self {
        Aside {
            put_back: Some(Box::pin(put_back)),
        }
    }

    /// Puts back what was set aside.
    pub async fn put_back(mut self) -> Result<(), EngineError> {
        match self.put_back.take() {
            Some(put_back) => put_back.await,
            None => Ok(()),
        }
    }
}

impl Drop for Aside {
    fn drop(&mut self) {
        if let Some(put_back) = self.put_back.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                if let Err(e) = put_back.await {
                    // Nowhere else to say it: the request that dropped the work is gone.
                    eprintln!("svc-emulator: {e}");
                }
            });
        }
    }
}

/// Where a copy lives (a schema, a database of its own), dropped with the copy: the statement
/// that drops it, made ready when the store was made, runs on the runtime then, as a task that
/// [`stores_dropped`] waits for (what an emulator's stop does, so that the runtime's end never
/// cuts it short). Best effort all the same: without a runtime, or when the database cannot be
/// reached, the store stays; a killed emulator leaves its stores behind.
pub struct Store {
    /// In a mutex only to be shared (the copy is): it is taken once, when the store drops.
    drop: std::sync::Mutex<Option<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

impl Store {
    /// A store that `drop` drops, when awaited.
    pub fn dropped_by(drop: impl Future<Output = ()> + Send + 'static) -> Self {
        Store {
            drop: std::sync::Mutex::new(Some(Box::pin(drop))),
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let drop = self
            .drop
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(drop) = drop
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let (done, dropping) = tokio::sync::watch::channel(());
            {
                let mut pending = DROPPING.lock().unwrap_or_else(|e| e.into_inner());
                pending.retain(|d| d.has_changed().is_ok());
                pending.push(dropping);
            }
            runtime.spawn(async move {
                // Goes with the task, done or cancelled (its runtime shut down).
                let _done = done;
                drop.await;
            });
        }
    }
}

/// The drops of stores under way in this process, one receiver each: its sender is held by the
/// drop's task, and goes with it.
static DROPPING: std::sync::Mutex<Vec<tokio::sync::watch::Receiver<()>>> =
    std::sync::Mutex::new(Vec::new());

/// Waits until every drop of a [`Store`] begun so far in this process has ended (the store
/// dropped, or the database's failure given up on), for at most `within`: what an emulator's
/// stop awaits once it has let go of its copies. Drops on other runtimes are waited for too: a
/// runtime that shuts down ends its own. How many had not ended in time (`0`: all did).
pub async fn stores_dropped(within: std::time::Duration) -> usize {
    let pending = {
        let mut pending = DROPPING.lock().unwrap_or_else(|e| e.into_inner());
        pending.retain(|d| d.has_changed().is_ok());
        pending.clone()
    };
    let deadline = tokio::time::Instant::now() + within;
    let mut left = 0;
    for mut dropping in pending {
        // `Err` once the sender is gone: nothing is ever sent.
        let ended = async { while dropping.changed().await.is_ok() {} };
        if tokio::time::timeout_at(deadline, ended).await.is_err() {
            left += 1;
        }
    }
    left
}

/// The records of every model of `db` that holds rows as of one moment, and what numbers the
/// next generated keys then (JSON, read back by [`import`]).
pub async fn export<D: Database>(
    db: &Served<'_, D>,
) -> Result<(Vec<(String, Vec<u8>)>, serde_json::Value), EngineError> {
    let failed = |e| context("exporting the records", e);
    let mut conn = Session::new(db.connect().await.map_err(failed)?);
    begin(db, &mut conn, D::BEGIN_SNAPSHOT)
        .await
        .map_err(failed)?;
    let records = read_all(db, conn.conn()).await?;
    let tables = saved_tables(db, records.iter().map(|(m, _)| m.as_str()))?;
    let keys = db.read_keys(&mut conn, &tables).await.map_err(failed)?;
    commit(db, &mut conn).await.map_err(failed)?;
    let keys = serde_json::to_value(keys)
        .map_err(|e| EngineError::Internal(format!("exporting the next generated keys: {e}")))?;
    Ok((records, keys))
}

/// Writes `models`' records into `db` in one transaction (see the module's documentation):
/// `replace` empties those models first; `keys` (an export's) numbers the next generated keys
/// once the records are in. The number of records written; `Err` names the model and the
/// record (from 1) that failed, and nothing is written.
pub async fn import<D: Database>(
    db: &Served<'_, D>,
    models: &[(String, Vec<PyJson>)],
    replace: bool,
    keys: Option<&serde_json::Value>,
) -> Result<usize, EngineError> {
    let failed = |e| context("importing the records", e);
    let keys: Option<D::Keys> = keys
        .map(|k| serde_json::from_value(k.clone()))
        .transpose()
        .map_err(|e| {
            EngineError::Internal(format!(
                "the export's next generated keys are not this database's ({e}): was it \
                 exported from another kind of database?"
            ))
        })?;
    let tables = saved_tables(db, models.iter().map(|(m, _)| m.as_str()))?;
    if let Some(keys) = &keys {
        D::check_keys(keys, &tables)?;
    }
    let mut conn = Session::new(db.connect().await.map_err(failed)?);
    let tz = db.time_zone(conn.conn()).await.map_err(failed)?;
    let aside = db.set_aside(&mut conn, &tables).await.map_err(failed)?;
    let written = write_imported(db, &mut conn, models, replace, keys, &tables, tz).await;
    // Given up first: a transaction that failed half-way holds the tables, which putting a
    // trigger back waits for.
    drop(conn);
    let put_back = aside.put_back().await.map_err(failed);
    let written = written?;
    put_back?;
    Ok(written)
}

/// [`import`]'s transaction, on `conn`.
async fn write_imported<D: Database>(
    db: &Served<'_, D>,
    conn: &mut Session<D>,
    models: &[(String, Vec<PyJson>)],
    replace: bool,
    keys: Option<D::Keys>,
    tables: &[SavedTable],
    tz: i32,
) -> Result<usize, EngineError> {
    let failed = |e| context("importing the records", e);
    begin(db, conn, D::BEGIN).await.map_err(failed)?;
    let suspended = db.suspend_checks(conn, tables).await.map_err(failed)?;
    let order = parents_first(tables, &suspended.still_checked).map_err(|cycle| {
        EngineError::Internal(format!(
            "cannot import: the models {} refer to each other through foreign keys that are \
             checked at each statement, so no order of them can be written; {}",
            cycle.join(", "),
            D::CYCLE_HINT
        ))
    })?;
    if replace {
        db.empty(conn, tables).await.map_err(failed)?;
    }
    let mut written = 0;
    for i in order {
        let (name, records) = &models[i];
        let model = db.model(name)?;
        for (n, record) in records.iter().enumerate() {
            let record = without_generated(&*model, record);
            let values =
                imported_values::<D>(&model, &record).map_err(|e| in_record(name, n, e))?;
            let mut params = Binds::default();
            let sql = insert_sql(db, &*model, &values, &record, tz, &mut params)
                .map_err(|e| in_record(name, n, e))?;
            let inserted = conn.write(&sql, &params).await;
            inserted.map_err(|f| in_record(name, n, db.fault(f, Failure::Write(&*model))))?;
            written += 1;
        }
    }
    if let Some(keys) = &keys
        && !D::KEYS_AFTER_COMMIT
    {
        db.put_keys(conn, tables, keys).await.map_err(failed)?;
    }
    for undo in &suspended.undo {
        db.run(conn, undo).await.map_err(failed)?;
    }
    commit(db, conn).await.map_err(failed)?;
    if let Some(keys) = &keys
        && D::KEYS_AFTER_COMMIT
    {
        db.put_keys(conn, tables, keys).await.map_err(failed)?;
    }
    Ok(written)
}

/// The `INSERT` of an imported record: exactly its columns (a NULL is written, not left to
/// the column's default), `D::OVERRIDING` a column `GENERATED ALWAYS AS IDENTITY`, the values
/// bound in `params`; not the create's statement, which reads the row back and, on
/// PostgreSQL, commits on its own.
fn insert_sql<D: Database>(
    db: &Served<'_, D>,
    model: &D::Model,
    values: &Values<'_, D::Field>,
    record: &PyJson,
    tz: i32,
    params: &mut Binds,
) -> Result<String, EngineError> {
    if values.is_empty() {
        return Ok(format!(
            "INSERT INTO {} {}",
            model.table_sql(),
            D::DEFAULTS_ONLY
        ));
    }
    let mut names = Vec::new();
    let mut binds = Vec::new();
    for (field, value) in values {
        names.push(field.sql());
        binds.push(match value {
            Internal::None => "NULL".to_owned(),
            value => {
                let given = record.get(field.name()).unwrap_or(&PyJson::None);
                db.bind_imported(field, value, given, tz, params)?
            }
        });
    }
    Ok(format!(
        "INSERT INTO {} ({}){} VALUES ({})",
        model.table_sql(),
        names.join(", "),
        D::OVERRIDING,
        binds.join(", ")
    ))
}

/// Refuses the first of `named` (the counters, each a `what`, an export's next generated keys
/// name) that is none of the tables' the import writes (`owned`): [`foreign_counter`].
pub fn only_owned_counters<'a>(
    what: &str,
    mut named: impl Iterator<Item = &'a str>,
    owned: impl Fn(&str) -> bool,
) -> Result<(), EngineError> {
    match named.find(|name| !owned(name)) {
        Some(outside) => Err(foreign_counter(what, outside)),
        None => Ok(()),
    }
}

/// The refusal of an export's next generated keys (`project.json`) that name `name`, which is
/// none of the counters of the tables the import writes: the file was changed, or comes from
/// another schema. A counter's name is only ever compared with those the database reflects,
/// never written into a statement.
pub fn foreign_counter(what: &str, name: &str) -> EngineError {
    let shown: String = name.chars().take(80).collect();
    EngineError::Internal(format!(
        "the export's next generated keys name the {what} {shown:?}, which is not one of the \
         imported tables' (it was changed by hand, or exported from another schema): export \
         the data again, or remove its \"keys\" from project.json"
    ))
}

/// [`Database::bind_imported`]'s default: a binary column holds the bytes of the `bytes`
/// literal a record shows (Python's `str()` of them), the rest is bound as a create binds it.
pub fn bind_imported<D: Database>(
    field: &D::Field,
    value: &Internal,
    given: &PyJson,
    tz: i32,
    params: &mut Binds,
) -> Result<String, EngineError> {
    match given {
        PyJson::Str(text) if D::binary(field) => {
            let bytes = py_bytes_literal(text).ok_or_else(|| {
                EngineError::field(
                    field.name(),
                    "Expected bytes as a record shows them (b'...').",
                )
            })?;
            Ok(D::bind_bytes(bytes, params))
        }
        _ => D::bind(field, value, tz, params),
    }
}

/// The tables of the models `names` as a restore names them (no store: nothing is held).
fn saved_tables<'n, D: Database>(
    db: &Served<'_, D>,
    names: impl Iterator<Item = &'n str>,
) -> Result<Vec<SavedTable>, EngineError> {
    names
        .map(|name| {
            let model = db.model(name)?;
            Ok(SavedTable {
                name: model.table_name().to_owned(),
                sql: model.table_sql().to_owned(),
                columns: String::new(),
                held: String::new(),
            })
        })
        .collect()
}

/// Every record of each model of `db` that holds rows (not views), by model name (each model's
/// records a JSON array in key order, ascending), read on `conn`: the caller's transaction
/// makes them one moment's. A record the engine's serializer
/// cannot write fails the export, as it fails the engine's list.
async fn read_all<D: Database>(
    db: &Served<'_, D>,
    conn: &mut D::Conn,
) -> Result<Vec<(String, Vec<u8>)>, EngineError> {
    let models = db.models().current();
    let tz = db.time_zone(conn).await?;
    let mut all = Vec::new();
    for model in models.values().filter(|m| m.holds_rows()) {
        let key = model.pk_field().name().to_owned();
        let terms = model.order_terms(&[key], false)?;
        let sql = format!(
            "SELECT {} FROM {}{}",
            model.select_list(),
            model.table_sql(),
            D::order_sql(model, &terms)
        );
        let mut out = Records::every_row(&**model, tz, db.checks_readable());
        let mut sink = |row: &D::Row<'_>| out.push(&DriverRow::<D>(row));
        db.read_rows(conn, &sql, &Binds::default(), false, &mut sink)
            .await?;
        readable::<D>(model, &out, false)?;
        all.push((model.table_name().to_owned(), out.into_json().0));
    }
    Ok(all)
}

/// `record` without the values of `model`'s generated columns, which the database computes.
fn without_generated<T: Table<Column: BodyColumn>>(model: &T, record: &PyJson) -> PyJson {
    match record {
        PyJson::Dict(pairs) => PyJson::Dict(
            pairs
                .iter()
                .filter(|(k, _)| model.field(k).is_none_or(|f| !f.generated()))
                .cloned()
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `e`, said of record `n` (from 0) of `model`.
fn in_record(model: &str, n: usize, e: EngineError) -> EngineError {
    let why = match &e {
        EngineError::Invalid {
            message, fields, ..
        } if !fields.is_empty() => {
            let fields: Vec<String> = fields
                .iter()
                .map(|(field, messages)| format!("{field}: {}", messages.join(" ")))
                .collect();
            format!("{message} ({})", fields.join("; "))
        }
        other => other.to_string(),
    };
    EngineError::Internal(format!("model {model:?}, record {}: {why}", n + 1))
}

/// What an import writes of `record` to `model`: its values as a create reads them (without
/// the database's refusals of what the engine cannot write: [`Database::bind_imported`] writes
/// those as an export wrote them), but a
/// `null` is SQL's NULL whatever the column (a create reads it as its field does: a boolean's
/// `false`), since an export writes a stored NULL as `null`.
fn imported_values<'m, D: Database>(
    model: &'m D::Model,
    record: &'m PyJson,
) -> Result<Values<'m, D::Field>, EngineError> {
    let mut values = read_values::<D>(model, record)?;
    for (field, value) in &mut values {
        if let Some(PyJson::None) = record.get(field.name()) {
            *value = Internal::None;
        }
    }
    Ok(values)
}

/// Begins the transaction `begin` on `conn`.
pub async fn begin<D: Database>(
    db: &Served<'_, D>,
    conn: &mut Session<D>,
    begin: &str,
) -> Result<(), EngineError> {
    let begun = conn.start(begin).await;
    begun.map_err(|f| db.fault(f, Failure::Unexpected))
}

/// Commits the transaction on `conn`.
pub async fn commit<D: Database>(
    db: &Served<'_, D>,
    conn: &mut Session<D>,
) -> Result<(), EngineError> {
    let done = conn.commit().await;
    done.map_err(|f| db.fault(f, Failure::Unexpected))
}

/// `what` failed: the error, said so.
pub fn context(what: &str, e: EngineError) -> EngineError {
    match e {
        EngineError::Internal(message) => EngineError::Internal(format!("{what}: {message}")),
        other => EngineError::Internal(format!("{what}: {other}")),
    }
}

/// The tables' indices, each table after every table it refers to (`references`: `(referring,
/// referred)` names; a table's references to itself and to tables not saved are checked at the
/// end of the one statement that puts its rows back, and do not count), else in saved order.
/// `Err`: the names of tables that refer to each other in a cycle.
pub fn parents_first(
    tables: &[SavedTable],
    references: &[(String, String)],
) -> Result<Vec<usize>, Vec<String>> {
    let index: BTreeMap<&str, usize> = tables
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    // For each table, the tables it refers to that are not put back yet.
    let mut waits_for: Vec<Vec<usize>> = vec![Vec::new(); tables.len()];
    for (child, parent) in references {
        if let (Some(&c), Some(&p)) = (index.get(child.as_str()), index.get(parent.as_str()))
            && c != p
        {
            waits_for[c].push(p);
        }
    }
    let mut done = vec![false; tables.len()];
    let mut order = Vec::with_capacity(tables.len());
    while order.len() < tables.len() {
        // The first table (in saved order) whose parents are all back.
        let next = (0..tables.len()).find(|&i| !done[i] && waits_for[i].iter().all(|&p| done[p]));
        match next {
            Some(i) => {
                done[i] = true;
                order.push(i);
            }
            None => {
                let mut cycle: Vec<String> = (0..tables.len())
                    .filter(|&i| !done[i] && in_cycle(i, &waits_for, &done))
                    .map(|i| tables[i].name.clone())
                    .collect();
                cycle.sort();
                return Err(cycle);
            }
        }
    }
    Ok(order)
}

/// Whether table `start` (not put back yet) reaches itself through the tables it waits for.
fn in_cycle(start: usize, waits_for: &[Vec<usize>], done: &[bool]) -> bool {
    let mut seen = vec![false; waits_for.len()];
    let mut stack: Vec<usize> = waits_for[start].clone();
    while let Some(i) = stack.pop() {
        if i == start {
            return true;
        }
        if done[i] || seen[i] {
            continue;
        }
        seen[i] = true;
        stack.extend(waits_for[i].iter().copied());
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_stores_drop_is_waited_for_and_given_up_on_after_the_bound() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let (go, wait) = tokio::sync::oneshot::channel::<()>();
        let dropped = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&dropped);
        drop(Store::dropped_by(async move {
            let _ = wait.await;
            flag.store(true, Ordering::SeqCst);
        }));
        // Still under way at the bound (the paused clock runs to it at once).
        assert!(stores_dropped(std::time::Duration::from_secs(10)).await >= 1);
        assert!(!dropped.load(Ordering::SeqCst));
        go.send(()).unwrap();
        assert_eq!(stores_dropped(std::time::Duration::from_secs(10)).await, 0);
        assert!(dropped.load(Ordering::SeqCst), "waited for to its end");
    }

    fn tables(names: &[&str]) -> Vec<SavedTable> {
        names
            .iter()
            .map(|n| SavedTable {
                name: (*n).to_owned(),
                sql: format!("\"{n}\""),
                columns: "a".to_owned(),
                held: format!("s.\"{n}\""),
            })
            .collect()
    }

    fn refs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(c, p)| ((*c).to_owned(), (*p).to_owned()))
            .collect()
    }

    #[test]
    fn parents_go_back_before_their_children() {
        let t = tables(&["child", "grandchild", "other", "parent"]);
        let r = refs(&[
            ("child", "parent"),
            ("grandchild", "child"),
            ("grandchild", "parent"),
        ]);
        assert_eq!(parents_first(&t, &r), Ok(vec![2, 3, 0, 1]));
    }

    #[test]
    fn self_references_and_unsaved_tables_do_not_order() {
        let t = tables(&["a", "tree"]);
        let r = refs(&[("tree", "tree"), ("a", "elsewhere"), ("elsewhere", "a")]);
        assert_eq!(parents_first(&t, &r), Ok(vec![0, 1]));
    }

    #[test]
    fn a_cycle_is_named_without_the_tables_that_only_hang_from_it() {
        let t = tables(&["a", "b", "c", "d", "e"]);
        let r = refs(&[("a", "b"), ("b", "c"), ("c", "a"), ("d", "a"), ("d", "e")]);
        assert_eq!(
            parents_first(&t, &r),
            Err(vec!["a".to_owned(), "b".to_owned(), "c".to_owned()])
        );
    }
}
