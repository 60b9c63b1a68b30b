//! The narrow interface a flow runs over: one database connection inside a transaction, the
//! statements it runs, and what it reflects of the schema at the moment it runs.

use std::fmt::Debug;
use std::future::Future;

use crate::dialect::bind::{Bind, Binds};
use crate::flow::database::Database;
use crate::flow::driver::{Failure, Session};
use crate::flow::records::catalog_text;
use svc_engine::EngineError;

/// A table, as the flow names it to the connection and writes it in SQL.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TableRef {
    /// How the connection's reflection finds the table again (its name, or a qualified one).
    pub name: String,
    /// The table in SQL, quoted (and qualified where the database qualifies it).
    pub sql: String,
}

/// Which of a table's columns [`Cascades::columns`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columns {
    /// The primary key's, in key order.
    PrimaryKey,
    /// The first column, in table order.
    First,
}

/// How the engine's ORM tells rows of one table apart (its identity): the expressions a
/// `SELECT` reads for a row, and the condition that finds the rows with those values again,
/// bound in order from the first placeholder (`"id"` and `"id" = ?`; on PostgreSQL
/// `"id"::text` and `"id" = $1::text::integer`). The identity is the primary key, or the first
/// column of a table without one, which the engine promotes to its key: then it may repeat, and
/// a statement by identity reaches every row that shares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locator {
    /// The expressions, comma-separated.
    pub select: String,
    /// The condition, with one placeholder per expression, numbered from the first.
    pub condition: String,
    /// The identity is a promoted first column, which rows may share.
    pub may_repeat: bool,
}

/// A foreign key of a table (`child`) that refers to another table, or to itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The referring table.
    pub child: TableRef,
    /// The referring columns, quoted, in the key's order.
    pub from: Vec<String>,
    /// The referred columns of the parent, quoted, in the same order.
    pub to: Vec<String>,
    /// The key's `ON DELETE` action, as SQLAlchemy reflects it.
    pub on_delete: OnDelete,
    /// Every referring column is nullable (automap's test: a key with a NOT NULL column makes
    /// the parent's collection `delete-orphan`).
    pub nullable: bool,
    /// A referring column is part of the child's primary key, or is the first column of a
    /// child without one (the engine's promoted key).
    pub in_child_key: bool,
}

/// A foreign key's `ON DELETE` action, as far as the ORM reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDelete {
    /// `ON DELETE CASCADE`.
    Cascade,
    /// `ON DELETE SET NULL`.
    SetNull,
    /// Anything else, or none.
    Other,
}

impl OnDelete {
    /// The action as SQL names it (`CASCADE`, `SET NULL`), as MySQL's catalog and SQLite's
    /// table text write it.
    pub fn named(rule: &str) -> Self {
        match rule {
            "CASCADE" => OnDelete::Cascade,
            "SET NULL" => OnDelete::SetNull,
            _ => OnDelete::Other,
        }
    }
}

/// What a delete's cascade (and a write's reading of a row's identity) runs over: one connection
/// inside a transaction. Every statement's placeholders are bound from
/// `params` in order; the placeholders are the ones the connection wrote in a [`Locator`].
///
/// The futures need not be `Send`: a flow over a blocking driver is run to its end on the
/// thread that holds the connection ([`run_now`]); over an async driver it is awaited, and is
/// `Send` when that driver's futures are.
pub trait Cascades {
    /// A value as the driver reads and binds it; the flow only carries it back.
    type Value: Clone + Debug;

    /// The rows of a query, each as the values of its columns.
    fn query(
        &mut self,
        sql: &str,
        params: &[Self::Value],
    ) -> impl Future<Output = Result<Vec<Vec<Self::Value>>, EngineError>>;

    /// Runs a statement whose rows, if any, are not read (an `UPDATE`, a `DELETE`): by default
    /// as a query.
    fn execute(
        &mut self,
        sql: &str,
        params: &[Self::Value],
    ) -> impl Future<Output = Result<(), EngineError>> {
        async move { self.query(sql, params).await.map(drop) }
    }

    /// Every foreign key, of every table the engine maps, that refers to `parent`.
    fn references_to(
        &mut self,
        parent: &TableRef,
    ) -> impl Future<Output = Result<Vec<Reference>, EngineError>>;

    /// The columns of `table` that `which` names, quoted, each with the type it is bound as
    /// (what [`Self::identity_sql`] reads): none where it has none.
    fn columns(
        &mut self,
        table: &TableRef,
        which: Columns,
    ) -> impl Future<Output = Result<Vec<(String, String)>, EngineError>>;

    /// How a row's identity reads the column `col` (bound as `ty`), and the condition that
    /// finds it again as the `n`th value (from 1): by default as it is, bound at a `?`.
    fn identity_sql(col: &str, _ty: &str, _n: usize) -> (String, String) {
        (col.to_owned(), format!("{col} = ?"))
    }

    /// How the ORM tells rows of `table` apart: by its primary key, else by its first column,
    /// which the engine promotes to its key (then rows may share it).
    fn locator(&mut self, table: &TableRef) -> impl Future<Output = Result<Locator, EngineError>> {
        async move {
            let mut columns = self.columns(table, Columns::PrimaryKey).await?;
            let may_repeat = columns.is_empty();
            if may_repeat {
                columns = self.columns(table, Columns::First).await?;
            }
            let (select, condition): (Vec<String>, Vec<String>) = columns
                .iter()
                .enumerate()
                .map(|(i, (col, ty))| Self::identity_sql(col, ty, i + 1))
                .unzip();
            Ok(Locator {
                select: select.join(", "),
                condition: condition.join(" AND "),
                may_repeat,
            })
        }
    }
}

/// The foreign keys that refer to `parent`, as the catalog statement `sql` reads them on
/// `conn` given the parent's name ([`TableRef::name`]) as its one value: a database's
/// [`Database::references_to`]. One row per pair of columns, in each key's order, the rows of
/// one key together: the referring table's name and SQL (a [`TableRef`]), the key's name, the
/// referring and the referred column's names (quoted here, as the dialect quotes), the key's
/// `ON DELETE` rule as SQL writes it (`CASCADE`, `SET NULL`), and whether the referring column
/// is nullable and whether it is part of the child's key (or the first column of a child
/// without one), each `1` or `0`. A failure is unexpected.
pub async fn catalog_references<D: Database>(
    db: &D,
    conn: &mut D::Conn,
    sql: &str,
    parent: &TableRef,
) -> Result<Vec<Reference>, EngineError> {
    let name = Binds(vec![Bind::Text(parent.name.clone())]);
    let rows = D::cell_rows(conn, sql, &name).await;
    let rows = rows.map_err(|f| db.fault(f, Failure::Unexpected))?;
    let mut keys: Vec<(String, Reference)> = Vec::new();
    for row in rows {
        let mut cells = row.into_iter();
        let mut text = || cells.next().map(catalog_text).unwrap_or_default();
        let (child, child_sql, key, from, to) = (text(), text(), text(), text(), text());
        let on_delete = OnDelete::named(&text());
        let (nullable, in_key) = (text() == "1", text() == "1");
        let (from, to) = (D::quote(&from), D::quote(&to));
        match keys.last_mut() {
            Some((last, r)) if *last == key && r.child.name == child => {
                r.from.push(from);
                r.to.push(to);
                r.nullable &= nullable;
                r.in_child_key |= in_key;
            }
            _ => keys.push((
                key,
                Reference {
                    child: TableRef {
                        name: child,
                        sql: child_sql,
                    },
                    from: vec![from],
                    to: vec![to],
                    on_delete,
                    nullable,
                    in_child_key: in_key,
                },
            )),
        }
    }
    Ok(keys.into_iter().map(|(_, r)| r).collect())
}

/// A write's transaction as a delete's cascade runs over it, on any database: its statements
/// run in the transaction (a refusal is the write's, in `model`'s terms), its rows read as the
/// values they are bound again as ([`Driver::cells`](crate::flow::driver::Driver::cells)), and
/// its catalog read by the database ([`Database::references_to`], [`Database::columns`]).
pub struct Cascade<'a, D: Database> {
    /// The database.
    pub db: &'a D,
    /// The write's transaction.
    pub tx: &'a mut Session<D>,
    /// The model the request names, whose messages a refusal takes.
    pub model: &'a D::Model,
}

impl<D: Database> std::fmt::Debug for Cascade<'_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cascade").finish_non_exhaustive()
    }
}

impl<D: Database> Cascades for Cascade<'_, D> {
    type Value = Bind;

    async fn query(&mut self, sql: &str, params: &[Bind]) -> Result<Vec<Vec<Bind>>, EngineError> {
        let rows = self.tx.cell_rows(sql, &Binds(params.to_vec())).await;
        rows.map_err(|f| self.db.fault(f, Failure::Write(self.model)))
    }

    async fn references_to(&mut self, parent: &TableRef) -> Result<Vec<Reference>, EngineError> {
        self.db.references_to(self.tx.conn(), parent).await
    }

    async fn columns(
        &mut self,
        table: &TableRef,
        which: Columns,
    ) -> Result<Vec<(String, String)>, EngineError> {
        self.db.columns(self.tx.conn(), table, which).await
    }

    fn identity_sql(col: &str, ty: &str, n: usize) -> (String, String) {
        D::identity_sql(col, ty, n)
    }
}

/// Runs the future of a flow over a blocking connection, whose every step completes when it is
/// polled: SQLite's, called on the thread that holds the connection.
pub fn run_now<T>(work: impl Future<Output = Result<T, EngineError>>) -> Result<T, EngineError> {
    let mut work = std::pin::pin!(work);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match work.as_mut().poll(&mut context) {
        std::task::Poll::Ready(out) => out,
        // A blocking connection never waits: every step ran when it was called.
        std::task::Poll::Pending => Err(EngineError::Internal(
            "a step over a blocking connection did not complete when called".to_owned(),
        )),
    }
}
