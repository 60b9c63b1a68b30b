//! A page walk by anchors (`svc_engine::walks` keeps them), as a database server reads it: a page
//! past the first of an order that reaches the unique key starts from the nearest anchor of the
//! same walk, seeking past its sort key, else steps over the rows before it by their keys
//! alone; the end of a full page is kept as the next anchor. What proves that the data is still
//! that of an anchor is each database's own token: PostgreSQL reads its snapshot beside the
//! page's rows, MySQL its transaction counter before and after the page's statements, SQLite
//! its write generation and data version as its snapshot begins.

use crate::dialect::bind::{Bind, Binds};
use crate::flow::database::Database;
use crate::flow::driver::DriverRow;
use crate::flow::records::Page;
use svc_engine::EngineError;
use svc_engine::records::Records;
use svc_engine::walks::Anchor;

/// The page's rows where `where_sql` holds, after the first `skip` of them, each with `extra`
/// read beside its columns: the page's own statement, or the database's keyed one
/// ([`Database::keyed_select`]) past the first row.
pub fn page_select<D: Database>(
    page: &Page<'_, D>,
    extra: &str,
    where_sql: &str,
    skip: u64,
) -> String {
    if skip == 0 {
        page.select(extra, where_sql)
    } else {
        D::keyed_select(page, extra, where_sql, skip)
    }
}

/// The statement, and its values, of a page read from `anchor` (at row `at` of the same
/// selection): past the anchor's sort key, then over the rows between.
pub fn from_anchor<D: Database>(
    page: &Page<'_, D>,
    seek: &[(usize, bool)],
    extra: &str,
    (at, anchor): &(u64, Anchor<Bind>),
) -> (String, Binds) {
    let mut params = page.filter.params.clone();
    let seek_sql = D::seek_condition(page.model, seek, &anchor.sort_key, &mut params);
    let where_sql = page.filter.and(&seek_sql);
    let sql = page_select(page, extra, &where_sql, page.offset - at);
    (sql, params)
}

/// The sort key of `row` read in its `cells`; `None` where one cannot be bound again
/// ([`Database::seekable`]).
pub fn sort_key_of<D: Database>(row: &D::Row<'_>, cells: &[usize]) -> Option<Vec<Option<Bind>>> {
    if !cells.iter().all(|&c| D::seekable(row, c)) {
        return None;
    }
    Some(cells.iter().map(|&c| D::sort_key(row, c)).collect())
}

/// Reads a page's rows (`sql` with `params`) into `out`; the sort key of its last row, read in
/// its `cells`, when the rows fill the page (its end is then an anchor of the walk).
pub async fn read_page<D: Database>(
    db: &D,
    conn: &mut D::Conn,
    (sql, params): (&str, &Binds),
    page: &Page<'_, D>,
    out: &mut Records<'_, D::Model>,
    cells: &[usize],
) -> Result<Option<Vec<Option<Bind>>>, EngineError> {
    let mut end = None;
    let full = out.rows() + page.per_page;
    let mut sink = |row: &D::Row<'_>| {
        out.push(&DriverRow::<D>(row));
        if out.rows() == full && !cells.is_empty() {
            end = sort_key_of::<D>(row, cells);
        }
    };
    db.read_rows(conn, sql, params, page.lenient, &mut sink)
        .await?;
    Ok(end)
}

/// Keeps the end of a full page, whose last row's sort key is `sort_key`, as an anchor of its
/// walk, under `token`.
pub fn keep_anchor<D: Database>(
    walk_key: &[u8],
    page: &Page<'_, D>,
    sort_key: Option<Vec<Option<Bind>>>,
    token: String,
) {
    if let Some(sort_key) = sort_key {
        let end = page.offset + page.per_page;
        page.walks.keep(walk_key, end, token, sort_key);
    }
}
