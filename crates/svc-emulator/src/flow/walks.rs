//! A page walk by anchors (`engine::walks` keeps them), as a database server reads it: a page
//! past the first of an order that reaches the unique key starts from the nearest anchor of the
//! same walk, seeking past its sort key, else steps over the rows before it by their keys
//! alone; the end of a full page is kept as the next anchor. What proves that the data is still
//! that of an anchor is each database's own token: PostgreSQL reads its snapshot beside the
//! page's rows; a database whose token is a counter that every write moves reads it before and
//! after the page's statements ([`TokenWalks`], [`walk_between_tokens`]).

use std::future::Future;

use crate::engine::EngineError;
use crate::engine::table::Table;
use crate::engine::walks::{Anchor, Walks};
use crate::flow::records::{Database, ModelSql, Page, Pages};

/// A database server's side of a page walk.
pub(crate) trait Walker: Database {
    /// A sort key's value as the driver reads it (and binds it again).
    type Key: Clone + Send + Sync;

    /// Where the walks of the resource's pages ended, and their filtered counts.
    fn walks(&self) -> &Walks<Self::Key>;

    /// The `i`th cell of a row as a sort key's value (`None`: NULL).
    fn sort_key(row: &Self::Row, i: usize) -> Option<Self::Key>;

    /// The select expressions that read a row's sort key after its columns (each with a
    /// leading `, `).
    fn sort_key_columns(model: &Self::Model, terms: &[(usize, bool)]) -> String;

    /// The condition that selects the rows after a row whose sort key is `key`, in the order of
    /// `terms` (the last one unique), with its values bound in `params`.
    fn seek_condition(
        model: &Self::Model,
        terms: &[(usize, bool)],
        key: &[Option<Self::Key>],
        params: &mut Self::Params,
    ) -> String;

    /// The page's rows where `where_sql` holds, after the first `skip` of them (at least one),
    /// each with `extra` read beside its columns ([`page_select`]); the rows skipped are skipped
    /// by their keys alone. By default the keys are a derived table the page's rows are joined
    /// to (MySQL takes no `LIMIT` in an `IN` subquery; the key is unique: the walk seeks only
    /// then).
    fn keyed_select(page: &Page<'_, Self>, extra: &str, where_sql: &str, skip: u64) -> String {
        let model = page.model;
        let key = Self::column(model.pk_field());
        // The derived table's name, never the table's own.
        let keys = if model.table_name().eq_ignore_ascii_case("svc_page_keys") {
            Self::quote("svc_page_keys_")
        } else {
            Self::quote("svc_page_keys")
        };
        let k = Self::quote("k");
        format!(
            "SELECT {list}{extra} FROM {table} JOIN (SELECT {key} AS {k} FROM {table}{where_sql}\
             {order} LIMIT {per_page} OFFSET {skip}) AS {keys} ON {key} = {keys}.{k}{order}",
            list = model.select_list(),
            table = model.table_sql(),
            order = page.order,
            per_page = page.per_page,
        )
    }
}

/// The page's rows where `where_sql` holds, after the first `skip` of them, each with `extra`
/// read beside its columns: the page's own statement, or the database's keyed one
/// ([`Walker::keyed_select`]) past the first row.
pub(crate) fn page_select<D: Walker>(
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
pub(crate) fn from_anchor<D: Walker>(
    page: &Page<'_, D>,
    seek: &[(usize, bool)],
    extra: &str,
    (at, anchor): &(u64, Anchor<D::Key>),
) -> (String, D::Params) {
    let mut params = page.filter.params.clone();
    let seek_sql = D::seek_condition(page.model, seek, &anchor.sort_key, &mut params);
    let where_sql = page.filter.and(&seek_sql);
    let sql = page_select(page, extra, &where_sql, page.offset - at);
    (sql, params)
}

/// Keeps the end of a full page as an anchor of its walk, under `token`: its sort key is read
/// in the `terms` cells from the `at`th.
pub(crate) fn keep_anchor<D: Walker>(
    db: &D,
    walk_key: &[u8],
    page: &Page<'_, D>,
    rows: &[D::Row],
    (at, terms): (usize, usize),
    token: String,
) {
    let Some(last) = page.end(rows) else {
        return;
    };
    let sort_key = (at..at + terms).map(|c| D::sort_key(last, c)).collect();
    let end = page.offset + page.per_page;
    db.walks().keep(walk_key, end, token, sort_key);
}

/// A database whose walks are proved by a token read before and after a page's statements: a
/// counter that a writing transaction moves when it starts its writes and when it commits, and
/// reads never move.
pub(crate) trait TokenWalks: Walker + Pages {
    /// The token now; `None` where the database does not tell it, or where writes to the model
    /// may not move it (then no anchor is kept or used).
    fn token(
        &self,
        conn: &mut Self::Conn,
        model: &Self::Model,
    ) -> impl Future<Output = Option<String>> + Send;
}

/// A page past the first of an order that reaches the unique key (`seek`), and its count: from
/// the nearest anchor of the same walk when the data is still that of the anchor, else with
/// `OFFSET` over the keys alone; the end of a full page is kept as an anchor, a filtered count
/// with it. Both are read between two readings of the token: when they differ, what the memo
/// gave is read again.
pub(crate) async fn walk_between_tokens<D: TokenWalks>(
    db: &D,
    conn: &mut D::Conn,
    page: &Page<'_, D>,
    seek: &[(usize, bool)],
) -> Result<(Vec<D::Row>, u64), EngineError> {
    let (model, filter, offset, lenient) = (page.model, page.filter, page.offset, page.lenient);
    let before = db.token(conn, model).await;
    let walk_key = page.walk_key();
    let count_sql = format!("COUNT {}{}", model.table_sql(), filter.sql);
    let count_key = D::memo_key(&count_sql, &filter.params);
    let anchor = before.as_ref().and_then(|token| {
        db.walks()
            .anchor(&walk_key, offset)
            .filter(|(_, a)| &a.token == token)
    });
    let kept_count = before.as_ref().and_then(|token| {
        db.walks()
            .count(&count_key)
            .filter(|(t, _)| t == token && !filter.sql.is_empty())
            .map(|(_, n)| n)
    });
    let remembered = anchor.is_some() || kept_count.is_some();
    let extra = D::sort_key_columns(model, seek);
    let from_offset = page_select(page, &extra, &filter.sql, offset);
    let mut rows = match &anchor {
        Some(anchor) => {
            let (sql, params) = from_anchor(page, seek, &extra, anchor);
            db.read(conn, &sql, &params, lenient).await?
        }
        None => db.read(conn, &from_offset, &filter.params, lenient).await?,
    };
    let mut count = match kept_count {
        Some(n) => n,
        None => db.count(conn, model, filter, lenient).await?,
    };
    let after = match before {
        Some(_) => db.token(conn, model).await,
        None => None,
    };
    match (before, after) {
        (Some(before), Some(after)) if before == after => {
            let cells = (model.columns().len(), seek.len());
            keep_anchor(db, &walk_key, page, &rows, cells, before.clone());
            if !filter.sql.is_empty() {
                db.walks().keep_count(count_key, before, count);
            }
        }
        _ if remembered => {
            // A write committed while the page was read: what the memo gave may be stale, so
            // the page and its count are read afresh, as the engine reads them.
            rows = db.read(conn, &from_offset, &filter.params, lenient).await?;
            count = db.count(conn, model, filter, lenient).await?;
        }
        _ => {}
    }
    Ok((rows, count))
}
