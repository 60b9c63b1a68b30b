//! What the flows share of a database's models and reads: a model as SQL names it
//! ([`ModelSql`]) and as a copy sees it ([`BaseTable`]), one page's request ([`Page`]) and its
//! statements, the count every database but the servers' estimates takes ([`counted`]). What
//! a database gives of its own is its [`Database`].

use crate::dialect::bind::{Bind, Binds};
use crate::dialect::clause::Where;
use crate::flow::database::Database;
use crate::flow::driver::Failure;
use svc_engine::EngineError;
use svc_engine::table::{Column, MappedTable, Table};
use svc_engine::walks::Walks;

/// A model as its database writes it in SQL.
pub trait ModelSql: Table {
    /// The table, quoted (and qualified where the database qualifies it).
    fn table_sql(&self) -> &str;
    /// Every column as a record's read takes it, in table order, comma-separated.
    fn select_list(&self) -> &str;
}

impl<F: Column, E> ModelSql for MappedTable<F, E> {
    fn table_sql(&self) -> &str {
        &self.table_sql
    }

    fn select_list(&self) -> &str {
        &self.select_list
    }
}

/// A model as a copy or an export sees it: a base table holds rows of its own (not a view, a
/// foreign table or a partition, whose rows are its parent table's), as the reflection marks
/// it.
pub trait BaseTable {
    /// The table holds rows of its own: a copy or an export holds them.
    fn holds_rows(&self) -> bool;
}

impl<F, E> BaseTable for MappedTable<F, E> {
    fn holds_rows(&self) -> bool {
        self.holds_rows
    }
}

/// A catalog's cell as text (a name, a type's, a truth): text as it is, bytes as UTF-8
/// (MySQL's driver reads `information_schema`'s text so), an integer as its digits; `''` for
/// anything else.
pub(crate) fn catalog_text(cell: Bind) -> String {
    match cell {
        Bind::Text(text) => text,
        Bind::Bytes(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Bind::Int(n) => n.to_string(),
        Bind::UInt(n) => n.to_string(),
        _ => String::new(),
    }
}

/// The model's identity columns (`Table::identity`), as the conditions write them.
pub(crate) fn identity_columns<D: Database>(model: &D::Model) -> Vec<String> {
    let columns = model.columns();
    let identity = model.identity().iter();
    identity
        .map(|&i| D::column(&columns[i]).to_owned())
        .collect()
}

/// The rows `filter` selects of `model`, counted by the database (`SELECT count(*)`).
pub async fn counted<D: Database>(
    db: &D,
    conn: &mut D::Conn,
    model: &D::Model,
    filter: &Where<Binds>,
    lenient: bool,
) -> Result<u64, EngineError> {
    let sql = ["SELECT count(*) FROM ", model.table_sql(), &filter.sql].concat();
    let count = D::first_row(conn, &sql, &filter.params, |row| D::text(row, 0)).await;
    let count = count.map_err(|f| db.fault(f, Failure::Read { lenient }))?;
    count.flatten().and_then(|n| n.parse().ok()).ok_or_else(|| {
        EngineError::Internal(format!("the count of {} is no number", model.table_name()))
    })
}

/// One page's request.
pub struct Page<'a, D: Database> {
    /// The model listed.
    pub model: &'a D::Model,
    /// The selection's clause.
    pub filter: &'a Where<Binds>,
    /// The order's terms, `(column index, descending)`.
    pub terms: &'a [(usize, bool)],
    /// The order's SQL.
    pub order: &'a str,
    /// The page's number, from 1.
    pub number: u64,
    /// Records per page, at least 1.
    pub per_page: u64,
    /// The rows before the page.
    pub offset: u64,
    /// Lenient mode.
    pub lenient: bool,
    /// Where the resource's walks ended, and their counts: what a page may start from.
    pub walks: &'a Walks<Bind>,
}

impl<D: Database> std::fmt::Debug for Page<'_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page")
            .field("terms", &self.terms)
            .field("order", &self.order)
            .field("number", &self.number)
            .field("per_page", &self.per_page)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl<D: Database> Page<'_, D> {
    /// `SELECT <every column><extra> FROM <table><where_sql><order> LIMIT <per_page>`.
    pub fn select(&self, extra: &str, where_sql: &str) -> String {
        self.select_with(extra, where_sql, None)
    }

    /// [`select`](Self::select), then ` OFFSET <offset>` when there is one. Built by hand, not
    /// with `format!`, which costs a page of 25 records about 3k instructions more (once per
    /// page: docs/performance.md, section 6).
    fn select_with(&self, extra: &str, where_sql: &str, offset: Option<u64>) -> String {
        let (columns, table) = (self.model.select_list(), self.model.table_sql());
        let mut sql = String::with_capacity(
            48 + columns.len() + extra.len() + table.len() + where_sql.len() + self.order.len(),
        );
        let mut numbers = itoa::Buffer::new();
        for part in [
            "SELECT ", columns, extra, " FROM ", table, where_sql, self.order,
        ] {
            sql.push_str(part);
        }
        sql.push_str(" LIMIT ");
        sql.push_str(numbers.format(self.per_page));
        if let Some(offset) = offset {
            sql.push_str(" OFFSET ");
            sql.push_str(numbers.format(offset));
        }
        sql
    }

    /// The key of the page's walk: its table, filters (and their values) and order.
    pub fn walk_key(&self) -> Vec<u8> {
        let statement = [self.model.table_sql(), &self.filter.sql, self.order].concat();
        self.filter.params.memo_key(&statement)
    }

    /// The engine's own statement of the page: every column, `LIMIT per_page OFFSET offset`.
    pub fn offset_select(&self) -> String {
        self.select_with("", &self.filter.sql, Some(self.offset))
    }
}
