//! A copy of a database server's data, and putting it back (`Backend::save` and
//! `Backend::restore` of the servers' backends; SQLite copies its whole database with its own
//! backup instead, `sqlite/mod.rs`), written once over a database's [`Saves`].
//!
//! **Where the copy lives**: in the database itself, in a store of its own (a schema, or a
//! database) named `svc_emulator_saved_` and 32 random hex digits, so that two emulators on the
//! same database never meet; reflection reads only the models' own schema or database and never
//! sees it. Rows are copied there and back by the server (`INSERT ... SELECT`): none crosses the
//! network, none is held in the emulator's memory, whatever the data's size. Measured on a
//! 10k-row table (release, on a 2-core machine), the rows go back from the store in 12 to 15 ms
//! on PostgreSQL and 30 ms on MariaDB, where binding them back from the emulator's memory takes
//! 84 and 34 ms (PostgreSQL's `COPY` of text held in memory ties, 15 ms; MySQL has no such
//! statement). The store is dropped with the last handle on the copy ([`SavedCopy`]'s store
//! is the database's own type, whose `Drop` hands the statement to the runtime: best effort, a
//! killed emulator leaves it behind).
//!
//! **What is saved**: every base table among the models as last read (not views, which hold no
//! data; not foreign tables; not partitions, whose rows are their parent table's: as the
//! reflection marks them, [`BaseTable`]), all its rows, every column but the
//! generated ones (the database computes them again), and what numbers the next generated key
//! of each (sequences, `AUTO_INCREMENT`: the database's [`Saves::Keys`]). The schema is not:
//! a table dropped since fails the restore, one added since is left as it is.
//!
//! **A restore**, in one transaction: the foreign keys' checks (and the triggers, where the
//! database lets the session) turned off for it; every saved table emptied; the saved rows put
//! back, parents before children where the checks stayed on; the generated keys as saved (after
//! the commit where the database's statement that sets them commits); what was turned off
//! turned back on; the commit. The caller reads the schema again after it.

use std::any::Any;
use std::collections::BTreeMap;
use std::future::Future;

use crate::engine::EngineError;
use crate::engine::records::Origin;
use crate::engine::table::{BodyColumn, Column, MappedTable, Table};
use crate::flow::driver::{Failure, Session};
use crate::flow::records::{Database, ModelSql};

/// The start of every store's name; the rest is random.
pub(crate) const STORE_PREFIX: &str = "svc_emulator_saved_";

/// A table of a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SavedTable {
    /// The model's name (the table's).
    pub(crate) name: String,
    /// The table in SQL, quoted (and qualified where the database qualifies it).
    pub(crate) sql: String,
    /// The columns its rows are put back with (all but the generated ones), quoted,
    /// comma-separated.
    pub(crate) columns: String,
    /// The store's table that holds its rows, quoted and qualified by the store.
    pub(crate) held: String,
}

/// What a restore turned off in its transaction ([`Saves::suspend_checks`]), and what it left
/// on.
#[derive(Debug, Default)]
pub(crate) struct Suspended {
    /// The foreign keys among the saved tables that are still checked at each statement, as
    /// `(referring table, referred table)` names: the tables go back parents first. None where
    /// the checks are off: the tables go back in any order.
    pub(crate) still_checked: Vec<(String, String)>,
    /// The statements that turn back on, before the commit, what was turned off (a failed
    /// restore rolls both back).
    pub(crate) undo: Vec<String>,
}

/// Where a copy lives (a schema, a database of its own), dropped with the copy: the statement
/// that drops it, made ready when the store was made, runs on the runtime then (best effort:
/// without a runtime, or when the database cannot be reached, the store stays).
pub(crate) struct Store {
    /// In a mutex only to be shared (the copy is): it is taken once, when the store drops.
    drop: std::sync::Mutex<Option<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>>>,
}

impl Store {
    /// A store that `drop` drops, when awaited.
    pub(crate) fn dropped_by(drop: impl Future<Output = ()> + Send + 'static) -> Self {
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
            runtime.spawn(drop);
        }
    }
}

/// A copy of a resource's data, in its database's store.
pub(crate) struct SavedCopy<D: Saves> {
    origin: Origin,
    tables: Vec<SavedTable>,
    keys: D::Keys,
    /// Held for its drop: the store goes with the copy.
    _store: Store,
    /// The store's name, unquoted.
    store_name: String,
}

impl<D: Saves> SavedCopy<D> {
    /// The name of the store the copy lives in (a schema, a database), unquoted: what a test
    /// looks for in the catalog.
    #[cfg(test)]
    pub(crate) fn store_name(&self) -> &str {
        &self.store_name
    }
}

impl<D: Saves> std::fmt::Debug for SavedCopy<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SavedCopy")
            .field("store", &self.store_name)
            .field("tables", &self.tables.len())
            .finish_non_exhaustive()
    }
}

/// A model as a copy sees it: a base table holds rows of its own (not a view, a foreign table
/// or a partition, whose rows are its parent table's), as the reflection marks it.
pub(crate) trait BaseTable {
    /// The table holds rows of its own: a copy holds them.
    fn holds_rows(&self) -> bool;
}

impl<F, E> BaseTable for MappedTable<F, E> {
    fn holds_rows(&self) -> bool {
        self.holds_rows
    }
}

/// One database server's side of a saved copy. Its statements take no bound values: every name
/// in them comes from the database's own catalog, quoted. Every future is `Send`.
pub(crate) trait Saves: Database<Model: BaseTable> + Sized + 'static {
    /// What numbers the next generated keys of the saved tables, as saved.
    type Keys: Send + Sync + 'static;

    /// The statement that begins a transaction whose reads all see the data as of one moment
    /// (MySQL: `START TRANSACTION WITH CONSISTENT SNAPSHOT`).
    const BEGIN_SNAPSHOT: &'static str = "BEGIN ISOLATION LEVEL REPEATABLE READ";

    /// What follows the column list of the statements that put saved rows back: PostgreSQL's
    /// `OVERRIDING SYSTEM VALUE`, which writes a column `GENERATED ALWAYS AS IDENTITY`.
    const OVERRIDING: &'static str = "";

    /// The generated keys are put back after the commit: the database's statement that sets
    /// them commits (MySQL's `ALTER TABLE`).
    const KEYS_AFTER_COMMIT: bool = false;

    /// What to do when the saved tables refer to each other in a cycle of foreign keys that the
    /// restore cannot order (the keys [`suspend_checks`](Self::suspend_checks) left checked),
    /// ending the refusal's message.
    const CYCLE_HINT: &'static str = "make one of those foreign keys deferrable, or connect as \
        a user that may turn the foreign keys' checks off";

    /// Runs statements without rows (a failure is unexpected).
    fn run(
        &self,
        conn: &mut Session<Self>,
        sql: &str,
    ) -> impl Future<Output = Result<(), EngineError>> + Send {
        async move {
            let done = conn.batch(sql).await;
            done.map_err(|f| self.fault(f, Failure::Unexpected))
        }
    }

    /// Makes the store `name` (unquoted), or says which privilege the connection lacks for it.
    fn make_store(
        &self,
        conn: &mut Session<Self>,
        name: &str,
    ) -> impl Future<Output = Result<Store, EngineError>> + Send;

    /// What numbers the next generated keys of `tables` now.
    fn read_keys(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> impl Future<Output = Result<Self::Keys, EngineError>> + Send;

    /// Makes `keys` number the next generated keys of `tables` again: inside the restore's
    /// transaction, once every row is back and before the `undo` statements run (after the
    /// commit where [`KEYS_AFTER_COMMIT`](Self::KEYS_AFTER_COMMIT)).
    fn put_keys(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
        keys: &Self::Keys,
    ) -> impl Future<Output = Result<(), EngineError>> + Send;

    /// Turns off, for the restore's transaction, what the database lets the session turn off
    /// of the foreign keys' checks and of the triggers of `tables`; says which foreign keys
    /// among them stay checked at each statement (not deferrable).
    fn suspend_checks(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> impl Future<Output = Result<Suspended, EngineError>> + Send;

    /// Removes every row of `tables`, inside the restore's transaction. By default each
    /// table's `DELETE`.
    fn empty(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> impl Future<Output = Result<(), EngineError>> + Send {
        async move {
            for table in tables {
                self.run(conn, &format!("DELETE FROM {}", table.sql))
                    .await?;
            }
            Ok(())
        }
    }
}

/// A copy of the data of `db` as it is now, in a store of its own (see the module's
/// documentation).
pub(crate) async fn save<D: Saves>(db: &D) -> Result<SavedCopy<D>, EngineError> {
    let failed = |e| context("saving a copy of the data", e);
    let models = db.models().current();
    let mut conn = Session::new(db.connect(None).await.map_err(failed)?);
    let store_name = format!("{STORE_PREFIX}{}", uuid::Uuid::new_v4().simple());
    let store = db
        .make_store(&mut conn, &store_name)
        .await
        .map_err(failed)?;
    let store_sql = D::quote(&store_name);
    let tables: Vec<SavedTable> = models
        .values()
        .filter(|model| model.holds_rows())
        .enumerate()
        .map(|(i, model)| SavedTable {
            name: model.table_name().to_owned(),
            sql: model.table_sql().to_owned(),
            columns: model
                .columns()
                .iter()
                .filter(|f| !f.generated())
                .map(Column::sql)
                .collect::<Vec<_>>()
                .join(", "),
            held: format!("{store_sql}.{}", D::quote(&format!("t{i}"))),
        })
        .collect();
    // The store's tables are made first: a database whose statements that make tables commit
    // (MySQL) would end the snapshot the rows are read in.
    for table in &tables {
        let make = format!(
            "CREATE TABLE {} AS SELECT {} FROM {} WHERE 1 = 0",
            table.held, table.columns, table.sql
        );
        db.run(&mut conn, &make).await.map_err(failed)?;
    }
    begin(db, &mut conn, D::BEGIN_SNAPSHOT)
        .await
        .map_err(failed)?;
    for table in &tables {
        db.run(
            &mut conn,
            &copy_sql(&table.held, &table.sql, &table.columns, ""),
        )
        .await
        .map_err(failed)?;
    }
    let keys = db.read_keys(&mut conn, &tables).await.map_err(failed)?;
    commit(db, &mut conn).await.map_err(failed)?;
    Ok(SavedCopy {
        origin: db.models().origin(),
        tables,
        keys,
        _store: store,
        store_name,
    })
}

/// Puts back the copy `saved` (made by [`save`] of this resource): the saved tables hold exactly
/// their saved rows again, and the generated keys are as saved. The caller reads the schema
/// again after it.
pub(crate) async fn restore<D: Saves>(
    db: &D,
    saved: &(dyn Any + Send + Sync),
) -> Result<(), EngineError> {
    let failed = |e| context("putting back the saved copy of the data", e);
    let copy = saved.downcast_ref::<SavedCopy<D>>().ok_or_else(|| {
        EngineError::Internal(
            "this copy of the data was saved from a resource of another kind of database: \
             restore it on the resource that saved it"
                .to_owned(),
        )
    })?;
    if copy.origin != db.models().origin() {
        return Err(EngineError::Internal(
            "this copy of the data was saved from another resource: restore it on the resource \
             that saved it"
                .to_owned(),
        ));
    }
    let mut conn = Session::new(db.connect(None).await.map_err(failed)?);
    begin(db, &mut conn, D::BEGIN).await.map_err(failed)?;
    let suspended = db
        .suspend_checks(&mut conn, &copy.tables)
        .await
        .map_err(failed)?;
    let order = parents_first(&copy.tables, &suspended.still_checked).map_err(|cycle| {
        EngineError::Internal(format!(
            "cannot put back the saved copy of the data: the tables {} refer to each other \
             through foreign keys that are checked at each statement, so no order of them can \
             be put back; {}",
            cycle.join(", "),
            D::CYCLE_HINT
        ))
    })?;
    db.empty(&mut conn, &copy.tables).await.map_err(failed)?;
    for i in order {
        let table = &copy.tables[i];
        let put_back = copy_sql(&table.sql, &table.held, &table.columns, D::OVERRIDING);
        db.run(&mut conn, &put_back).await.map_err(failed)?;
    }
    if !D::KEYS_AFTER_COMMIT {
        db.put_keys(&mut conn, &copy.tables, &copy.keys)
            .await
            .map_err(failed)?;
    }
    for undo in &suspended.undo {
        db.run(&mut conn, undo).await.map_err(failed)?;
    }
    commit(db, &mut conn).await.map_err(failed)?;
    if D::KEYS_AFTER_COMMIT {
        db.put_keys(&mut conn, &copy.tables, &copy.keys)
            .await
            .map_err(failed)?;
    }
    Ok(())
}

/// Begins the transaction `begin` on `conn`.
async fn begin<D: Saves>(db: &D, conn: &mut Session<D>, begin: &str) -> Result<(), EngineError> {
    let begun = conn.start(begin).await;
    begun.map_err(|f| db.fault(f, Failure::Unexpected))
}

/// Commits the transaction on `conn`.
async fn commit<D: Saves>(db: &D, conn: &mut Session<D>) -> Result<(), EngineError> {
    let done = conn.commit().await;
    done.map_err(|f| db.fault(f, Failure::Unexpected))
}

/// The statement that copies the rows of `from` into `to`, `columns` both sides: into the store
/// at a save, back from it at a restore (then with the database's `overriding`).
fn copy_sql(to: &str, from: &str, columns: &str, overriding: &str) -> String {
    format!("INSERT INTO {to} ({columns}){overriding} SELECT {columns} FROM {from}")
}

/// `what` failed: the error, said so.
fn context(what: &str, e: EngineError) -> EngineError {
    match e {
        EngineError::Internal(message) => EngineError::Internal(format!("{what}: {message}")),
        other => EngineError::Internal(format!("{what}: {other}")),
    }
}

/// The tables' indices, each table after every table it refers to (`references`: `(referring,
/// referred)` names; a table's references to itself and to tables not saved are checked at the
/// end of the one statement that puts its rows back, and do not count), else in saved order.
/// `Err`: the names of tables that refer to each other in a cycle.
fn parents_first(
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

    #[test]
    fn rows_are_copied_by_the_server_column_for_column() {
        assert_eq!(
            copy_sql("\"s\".\"t0\"", "\"public\".\"p\"", "\"id\", \"n\"", ""),
            "INSERT INTO \"s\".\"t0\" (\"id\", \"n\") SELECT \"id\", \"n\" FROM \"public\".\"p\""
        );
        assert_eq!(
            copy_sql("p", "h", "a", " OVERRIDING SYSTEM VALUE"),
            "INSERT INTO p (a) OVERRIDING SYSTEM VALUE SELECT a FROM h"
        );
    }
}
