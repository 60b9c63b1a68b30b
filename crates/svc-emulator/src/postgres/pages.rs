//! Pages that never step over the rows before them, with the answers of `LIMIT n OFFSET m`:
//! PostgreSQL's side of the engine layer's walks (`engine/walks.rs`, the memo and the seek
//! condition both backends share), with the statement's snapshot as the token.
//!
//! The engine pages with `OFFSET`: PostgreSQL reads, and converts to text, every row before
//! the page, so a walk through a table page by page costs the square of its size. Two things
//! change that here, both only where the order is total (it reaches the model's primary key,
//! a single column: unique and never NULL), so that the rows of a page are exactly the ones
//! `OFFSET` gives:
//!
//! - **Keys first.** A page at `OFFSET m` finds the keys of its rows with `OFFSET` over the
//!   keys alone (`WHERE key = ANY(ARRAY(SELECT key ... LIMIT n OFFSET m))`), then reads and
//!   converts only those rows: no value of a skipped row is converted.
//! - **Counts.** A filtered count is kept with the snapshot it was made in; the count
//!   statement answers it again when its own snapshot is the same, and counts otherwise
//!   (`CASE WHEN snapshot = kept THEN kept_count ELSE (SELECT count(*) ...) END`: PostgreSQL
//!   runs the subquery only when it is needed).
//! - **Anchors.** After each page the sort key of its last row is remembered (its *anchor*),
//!   with the snapshot of the statement that read it (`txid_current_snapshot()`). A later page
//!   of the same selection and order starts from the nearest anchor at or before it, with a
//!   `WHERE` that seeks past that sort key in PostgreSQL's own order (NULLs last ascending,
//!   first descending; the column's collation on both sides), and steps over only the rows
//!   between.
//!
//! # Validity
//!
//! An anchor says where row `at` of the selection was in one snapshot of the database (and a
//! count how many rows it had). Two
//! snapshots with the same text (`xmin:xmax:running transactions`) see the same committed
//! data: no transaction that writes can commit, abort or even begin its writes without moving
//! `xmax` or the list of running transactions. A page that starts from an anchor reads the
//! snapshot of its own statement beside its rows; a different snapshot, or no row to show it,
//! and the page is read again from the keys, as above. So a write anywhere (any database of
//! the server) costs the next page a second statement, never a different answer.

use crate::backend::pooled::ESTIMATE_FROM;
use crate::dialect::seek::Nulls;
use crate::engine::EngineError;
use crate::engine::records::Records;
use crate::engine::table::Table;
use crate::engine::walks as shared;
use crate::flow::records::{Page, Pages};
use crate::flow::walks::{from_anchor, keep_anchor, page_select, sort_key_of};
use crate::postgres::PgResource;
use crate::postgres::dialect::{Params, PgWhere};
use crate::postgres::schema::{PgField, PgModel};
use crate::postgres::types::PgKind;
use deadpool_postgres::Object;
use std::collections::HashMap;
use tokio_postgres::Row;

/// The expression that reads the snapshot of the statement it is in, once per statement.
pub(crate) const SNAPSHOT: &str = "(SELECT txid_current_snapshot()::text)";

/// Sort keys of pages (each term's value as text), per walk, with the snapshot text as the
/// token: the engine layer's memo ([`crate::engine::walks`]).
pub(crate) type Walks = shared::Walks<String>;

/// A walk key: the SQL text that identifies a selection and its order, then its values.
pub(crate) fn key(sql: &str, params: &Params) -> Vec<u8> {
    shared::key(
        sql,
        params.0.iter().map(|p| p.as_deref().map(str::as_bytes)),
    )
}

/// Whether a value of the kind reads back exactly from its text (`CAST(text AS type)` is the
/// value again, and compares as the value does), so that it can be a sort key to seek past.
fn round_trips(kind: PgKind) -> bool {
    matches!(
        kind,
        PgKind::Integer
            | PgKind::Real
            | PgKind::Double
            | PgKind::Numeric
            | PgKind::Boolean
            | PgKind::Date
            | PgKind::Timestamp
            | PgKind::TimestampTz
            | PgKind::String
            | PgKind::Char
            | PgKind::Enum
            | PgKind::Time
            | PgKind::TimeTz
            | PgKind::Interval
            | PgKind::Inet
    )
}

/// The terms of `terms` (field index, descending) up to the first that is the model's key,
/// when the order is total there (the key is one column that is its primary key: unique and
/// never NULL) and every one can be sought past; `None` otherwise.
pub(crate) fn seek_terms(model: &PgModel, terms: &[(usize, bool)]) -> Option<Vec<(usize, bool)>> {
    shared::seek_terms(model.unique_key(), model.pk, terms, |i| {
        model.fields.get(i).is_some_and(|f| round_trips(f.kind))
    })
}

/// PostgreSQL's side of a page walk (`flow::walks`): its keys found by `= ANY(ARRAY(...))`, its
/// anchors as text, the snapshot as the token (read beside the page's rows, `postgres/records.rs`).
impl Pages for PgResource {
    type Key = String;

    /// A page reads and converts only its own rows (see `postgres/pages.rs`). The count, when
    /// it is sure to be needed (any page but the first) or cheap (the catalog's estimate, or a
    /// count of a table too small to have one), goes with the page: both statements are sent
    /// before either answer is awaited.
    async fn page(
        &self,
        reader: &mut Object,
        page: &Page<'_, Self>,
        out: &mut Records<'_, PgModel>,
    ) -> Result<Option<u64>, EngineError> {
        let client = &*reader;
        let (rows, count) = if page.number > 1 || page.filter.sql.is_empty() {
            let (rows, count) = futures_util::future::try_join(
                self.page_rows(client, page),
                self.count_rows(client, page.model, page.filter, page.lenient),
            )
            .await?;
            (rows, Some(count))
        } else {
            (self.page_rows(client, page).await?, None)
        };
        rows.iter().for_each(|row| out.push(row));
        Ok(count)
    }

    async fn count(
        &self,
        reader: &mut Object,
        model: &PgModel,
        filter: &PgWhere,
        lenient: bool,
    ) -> Result<u64, EngineError> {
        self.count_rows(reader, model, filter, lenient).await
    }

    fn walks(&self) -> &Walks {
        &self.walks
    }

    fn sort_key(row: &Row, i: usize) -> Option<String> {
        row.get(i)
    }

    /// Each term's column as text.
    fn sort_key_columns(model: &PgModel, terms: &[(usize, bool)]) -> String {
        terms
            .iter()
            .map(|&(i, _)| format!(", ({})::text", model.fields[i].sql))
            .collect()
    }

    /// Each value bound once, cast to its column's type. PostgreSQL orders NULLs after every
    /// other value, so they come last ascending and first descending.
    fn seek_condition(
        model: &PgModel,
        terms: &[(usize, bool)],
        key: &[Option<String>],
        params: &mut Params,
    ) -> String {
        let fields: Vec<&PgField> = terms.iter().map(|&(i, _)| &model.fields[i]).collect();
        let columns: Vec<(&str, bool)> = fields
            .iter()
            .zip(terms)
            .map(|(f, &(_, desc))| (f.sql.as_str(), desc))
            .collect();
        let mut bound: HashMap<usize, String> = HashMap::new();
        let mut bind = |i: usize| {
            bound
                .entry(i)
                .or_insert_with(|| params.cast(key[i].clone(), &fields[i].cast))
                .clone()
        };
        crate::dialect::seek::seek_condition(&columns, key, Nulls::Largest, &mut bind)
    }

    /// The rows skipped are skipped by their keys alone, which the page's rows are then read
    /// by: `key = ANY(ARRAY(SELECT key ... LIMIT n OFFSET skip))` (the key is unique:
    /// [`seek_terms`]).
    fn keyed_select(page: &Page<'_, Self>, extra: &str, where_sql: &str, skip: u64) -> String {
        let model = page.model;
        let key = &model.pk_field().sql;
        format!(
            "SELECT {list}{extra} FROM {table} WHERE {key} = ANY(ARRAY(SELECT {key} FROM \
             {table}{where_sql}{order} LIMIT {per_page} OFFSET {skip})){order}",
            list = model.select_list,
            table = model.table_sql,
            order = page.order,
            per_page = page.per_page,
        )
    }
}

/// A page's statements.
impl PgResource {
    /// The rows of one page: those of `LIMIT per_page OFFSET offset`, read from the nearest
    /// anchor of the same walk when one is valid, else with `OFFSET` over the keys alone; the
    /// end of a full page is kept as an anchor. Without a total order that can be sought
    /// (see [`walks::seek_terms`]), the engine's statement as it is.
    async fn page_rows(
        &self,
        client: &deadpool_postgres::ClientWrapper,
        page: &Page<'_, Self>,
    ) -> Result<Vec<Row>, EngineError> {
        let (model, filter, offset, lenient) = (page.model, page.filter, page.offset, page.lenient);
        let Some(seek) = seek_terms(model, page.terms) else {
            let sql = page.offset_select();
            return self.read_rows(client, &sql, &filter.params, lenient).await;
        };
        let walk_key = page.walk_key();
        let extra = format!(", {}{}", SNAPSHOT, Self::sort_key_columns(model, &seek));
        let snapshot_at = model.fields.len();
        if offset > 0
            && let Some(anchor) = self.walks.anchor(&walk_key, offset)
        {
            let (sql, params) = from_anchor(page, &seek, &extra, &anchor);
            let rows = self.read_rows(client, &sql, &params, lenient).await?;
            let same = rows.first().is_some_and(|r| {
                r.get::<_, Option<&str>>(snapshot_at) == Some(anchor.1.token.as_str())
            });
            if same {
                self.keep_anchor(&walk_key, &rows, page, seek.len());
                return Ok(rows);
            }
        }
        let sql = page_select(page, &extra, &filter.sql, offset);
        let rows = self
            .read_rows(client, &sql, &filter.params, lenient)
            .await?;
        self.keep_anchor(&walk_key, &rows, page, seek.len());
        Ok(rows)
    }

    /// Keeps the end of a full page as an anchor of its walk, under the snapshot read beside
    /// its last row (its sort key follows).
    fn keep_anchor(&self, walk_key: &[u8], rows: &[Row], page: &Page<'_, Self>, terms: usize) {
        let at = page.model.fields.len();
        let Some(last) = rows.last().filter(|_| rows.len() as u64 == page.per_page) else {
            return;
        };
        if let Some(snapshot) = last.get::<_, Option<String>>(at) {
            let cells: Vec<usize> = (at + 1..at + 1 + terms).collect();
            let sort_key = sort_key_of::<Self>(last, &cells);
            keep_anchor(self, walk_key, page, sort_key, snapshot);
        }
    }

    /// The engine's count: the catalog estimate of an unfiltered table when it is at least
    /// 10 000 (`SELECT reltuples FROM pg_class WHERE relname = ...`, the first such table of
    /// any schema), else `COUNT(*)`. Unfiltered, one statement does both: `COALESCE` runs the
    /// count only when the estimate is not taken (never remembered: `VACUUM` may change the
    /// estimate without a transaction). Filtered, the count is remembered per snapshot.
    async fn count_rows(
        &self,
        client: &deadpool_postgres::ClientWrapper,
        model: &PgModel,
        filter: &PgWhere,
        lenient: bool,
    ) -> Result<u64, EngineError> {
        let rows = if filter.sql.is_empty() {
            let sql = format!(
                "SELECT COALESCE((SELECT e FROM (SELECT trunc(reltuples)::int8 AS e FROM pg_class \
                 WHERE relname = $1::text LIMIT 1) s WHERE e >= {ESTIMATE_FROM}), \
                 (SELECT count(*) FROM {}))",
                model.table_sql
            );
            let params = Params(vec![Some(model.name.clone())]);
            self.read_rows(client, &sql, &params, lenient).await?
        } else {
            // A filtered count is remembered with the snapshot it was made in, and the
            // statement counts again only when its own snapshot differs (see `walks`).
            let count = format!("(SELECT count(*) FROM {}{})", model.table_sql, filter.sql);
            let key = key(&count, &filter.params);
            let kept = self.walks.count(&key);
            let mut params = filter.params.clone();
            let (snapshot, n) = kept.map_or((None, None), |(s, n)| (Some(s), Some(n.to_string())));
            let kept_snapshot = params.cast(snapshot, "text");
            let kept_count = params.cast(n, "bigint");
            let sql = format!(
                "SELECT CASE WHEN now.snapshot = {kept_snapshot} THEN {kept_count} ELSE {count} \
                 END, now.snapshot FROM (SELECT txid_current_snapshot()::text AS snapshot) now"
            );
            let rows = self.read_rows(client, &sql, &params, lenient).await?;
            if let Some(row) = rows.first()
                && let (Some(n), Some(snapshot)) = (
                    row.get::<_, Option<i64>>(0),
                    row.get::<_, Option<String>>(1),
                )
            {
                self.walks.keep_count(key, snapshot, n.max(0) as u64);
            }
            rows
        };
        Ok(rows.first().map_or(0, |r| r.get::<_, i64>(0)) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::table::Reflected;

    fn field(name: &str, kind: PgKind, cast: &str) -> PgField {
        PgField {
            name: name.to_owned(),
            kind,
            extra: crate::postgres::schema::PgCast {
                cast: cast.to_owned(),
            },
            not_null: false,
            has_default: false,
            primary_key: false,
            autoincrement: false,
            generated: false,
            sql: format!("\"{name}\""),
        }
    }

    #[test]
    fn seeks_follow_postgresqls_null_order() {
        let age = field("age", PgKind::Integer, "integer");
        let id = field("id", PgKind::Integer, "integer");
        let select = |f: &PgField| f.sql.clone();
        let model = PgModel::new(
            "t".to_owned(),
            vec![age, id],
            &[],
            Reflected {
                sql: "t".to_owned(),
                holds_rows: true,
                related: false,
                extra: (),
            },
            select,
        );
        let model = model.unwrap();
        let seek = |terms: &[(usize, bool)], key: &[Option<&str>]| {
            let key: Vec<Option<String>> = key.iter().map(|k| k.map(str::to_owned)).collect();
            let mut params = Params::default();
            let sql = <PgResource as Pages>::seek_condition(&model, terms, &key, &mut params);
            (sql, params.0)
        };
        let (sql, params) = seek(&[(0, false), (1, true)], &[Some("30"), Some("7")]);
        assert_eq!(
            sql,
            "(\"age\" > CAST($1::text AS integer) OR \"age\" IS NULL OR (\"age\" = \
             CAST($1::text AS integer) AND ((\"id\" < CAST($2::text AS integer)))))"
        );
        assert_eq!(params, [Some("30".to_owned()), Some("7".to_owned())]);
        let (sql, _) = seek(&[(0, false), (1, true)], &[None, Some("7")]);
        assert_eq!(
            sql,
            "(\"age\" IS NULL AND ((\"id\" < CAST($1::text AS integer))))"
        );
        let (sql, _) = seek(&[(0, true), (1, true)], &[None, Some("7")]);
        assert_eq!(
            sql,
            "((\"age\" IS NULL AND ((\"id\" < CAST($1::text AS integer)))) OR \"age\" IS NOT NULL)"
        );
        let (sql, _) = seek(&[(0, true), (1, false)], &[Some("30"), Some("7")]);
        assert_eq!(
            sql,
            "(\"age\" < CAST($1::text AS integer) OR (\"age\" = CAST($1::text AS integer) AND \
             ((\"id\" > CAST($2::text AS integer)))))"
        );
    }
}
