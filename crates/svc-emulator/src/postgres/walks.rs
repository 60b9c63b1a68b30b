//! Pages that never step over the rows before them, with the answers of `LIMIT n OFFSET m`.
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

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use crate::postgres::filter::Params;
use crate::postgres::schema::{PgField, PgModel};
use crate::postgres::types::PgKind;

/// Selections whose count is kept; past this the memo starts afresh.
const MAX_COUNTS: usize = 256;
/// Selections and orders whose anchors are kept; past this the memo starts afresh.
const MAX_WALKS: usize = 64;
/// Anchors kept per walk; past this the one least recently kept or used goes.
const MAX_ANCHORS: usize = 32;

/// The expression that reads the snapshot of the statement it is in, once per statement.
pub(crate) const SNAPSHOT: &str = "(SELECT txid_current_snapshot()::text)";

/// Sort keys of pages, per walk (a selection and its order).
#[derive(Debug, Default)]
pub(crate) struct Walks {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Walk key → (offset of the row after the anchor → the anchor).
    walks: HashMap<Vec<u8>, BTreeMap<u64, Anchor>>,
    /// Count key → the snapshot it was counted in, and the count.
    counts: HashMap<Vec<u8>, (String, u64)>,
    /// Ticks on every anchor kept or used: the recency of each.
    clock: u64,
}

/// Where a page ended: the sort key of its last row (each term's value as text, `None` for
/// NULL), in the snapshot that read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Anchor {
    pub snapshot: String,
    pub sort_key: Vec<Option<String>>,
    used: u64,
}

impl Walks {
    /// The anchor of walk `key` nearest at or before `offset`: the offset of the row after it,
    /// and the anchor.
    pub(crate) fn anchor(&self, key: &[u8], offset: u64) -> Option<(u64, Anchor)> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut *state;
        s.clock += 1;
        let walk = s.walks.get_mut(key)?;
        let (&at, anchor) = walk.range_mut(..=offset).next_back()?;
        anchor.used = s.clock;
        Some((at, anchor.clone()))
    }

    /// Keeps an anchor of walk `key`: the row before `offset` has sort key `sort_key` in
    /// `snapshot`. Anchors of other snapshots are dropped: they can no longer be used.
    pub(crate) fn keep(
        &self,
        key: &[u8],
        offset: u64,
        snapshot: String,
        sort_key: Vec<Option<String>>,
    ) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut *state;
        if !s.walks.contains_key(key) && s.walks.len() >= MAX_WALKS {
            s.walks.clear();
        }
        s.clock += 1;
        let used = s.clock;
        let walk = s.walks.entry(key.to_vec()).or_default();
        walk.retain(|_, a| a.snapshot == snapshot);
        walk.insert(
            offset,
            Anchor {
                snapshot,
                sort_key,
                used,
            },
        );
        if walk.len() > MAX_ANCHORS {
            // Walks go forwards: what a walk left behind is what it will not ask again.
            let oldest = walk.iter().min_by_key(|(_, a)| a.used).map(|(&at, _)| at);
            if let Some(at) = oldest {
                walk.remove(&at);
            }
        }
    }

    /// The count of selection `key` and the snapshot it was made in, if kept.
    pub(crate) fn count(&self, key: &[u8]) -> Option<(String, u64)> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.counts.get(key).cloned()
    }

    /// Keeps the count of selection `key`, made in `snapshot`.
    pub(crate) fn keep_count(&self, key: Vec<u8>, snapshot: String, count: u64) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.counts.len() >= MAX_COUNTS && !state.counts.contains_key(&key) {
            state.counts.clear();
        }
        state.counts.insert(key, (snapshot, count));
    }

    /// Forgets every anchor and count (the schema was read again).
    pub(crate) fn clear(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.walks.clear();
        state.counts.clear();
    }
}

/// A walk key: the SQL text that identifies a selection and its order, then its values.
pub(crate) fn key(sql: &str, params: &Params) -> Vec<u8> {
    let mut k = Vec::with_capacity(sql.len() + 1 + params.0.len() * 16);
    k.extend_from_slice(sql.as_bytes());
    k.push(0);
    for p in &params.0 {
        match p {
            None => k.push(b'n'),
            Some(t) => {
                k.push(b't');
                k.extend_from_slice(&(t.len() as u64).to_le_bytes());
                k.extend_from_slice(t.as_bytes());
            }
        }
    }
    k
}

/// Whether the model's key is one column that is its primary key: unique and never NULL, so
/// that an order that reaches it is total.
pub(crate) fn key_is_unique(model: &PgModel) -> bool {
    model.unique_key
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
/// when the order is total there and every one can be sought past; `None` otherwise.
pub(crate) fn seek_terms(model: &PgModel, terms: &[(usize, bool)]) -> Option<Vec<(usize, bool)>> {
    if !key_is_unique(model) {
        return None;
    }
    let end = terms.iter().position(|&(i, _)| i == model.pk)?;
    let terms = terms.get(..=end)?;
    terms
        .iter()
        .all(|&(i, _)| model.fields.get(i).is_some_and(|f| round_trips(f.kind)))
        .then(|| terms.to_vec())
}

/// The select expressions that read a row's sort key: each term's column as text.
pub(crate) fn sort_key_columns(model: &PgModel, terms: &[(usize, bool)]) -> String {
    terms
        .iter()
        .map(|&(i, _)| format!(", ({})::text", model.fields[i].sql))
        .collect()
}

/// The condition that selects the rows after a row whose sort key is `key`, in the order of
/// `terms` (the last one unique), with its values bound in `params`. PostgreSQL orders NULLs
/// after every other value, so they come last ascending and first descending.
pub(crate) fn seek_condition(
    fields: &[&PgField],
    terms: &[(usize, bool)],
    key: &[Option<String>],
    params: &mut Params,
) -> String {
    let (Some((&(_, desc), rest)), Some((value, rest_key)), Some((field, rest_fields))) =
        (terms.split_first(), key.split_first(), fields.split_first())
    else {
        return "false".to_owned();
    };
    let column = &field.sql;
    let Some(value) = value else {
        // After a NULL.
        if rest.is_empty() {
            return "false".to_owned();
        }
        let tail = seek_condition(rest_fields, rest, rest_key, params);
        return if desc {
            // Descending: the other NULLs by the next terms, then every non-NULL.
            format!("(({column} IS NULL AND ({tail})) OR {column} IS NOT NULL)")
        } else {
            // Ascending: only the other NULLs, by the next terms.
            format!("({column} IS NULL AND ({tail}))")
        };
    };
    let bound = params.cast(Some(value.clone()), &field.cast);
    let beyond = if desc { "<" } else { ">" };
    if rest.is_empty() {
        // The key: never NULL, and an index condition as it stands.
        return format!("({column} {beyond} {bound})");
    }
    let with_nulls = if desc {
        String::new()
    } else {
        format!(" OR {column} IS NULL")
    };
    let tail = seek_condition(rest_fields, rest, rest_key, params);
    format!("({column} {beyond} {bound}{with_nulls} OR ({column} = {bound} AND ({tail})))")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, kind: PgKind, cast: &str) -> PgField {
        PgField {
            name: name.to_owned(),
            kind,
            cast: cast.to_owned(),
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
        let fields = [&age, &id];
        let seek = |terms: &[(usize, bool)], key: &[Option<&str>]| {
            let key: Vec<Option<String>> = key.iter().map(|k| k.map(str::to_owned)).collect();
            let mut params = Params::default();
            let sql = seek_condition(&fields, terms, &key, &mut params);
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

    #[test]
    fn anchors_of_another_snapshot_are_dropped() {
        let walks = Walks::default();
        walks.keep(b"w", 25, "1:2:".to_owned(), vec![Some("a".to_owned())]);
        walks.keep(b"w", 50, "1:2:".to_owned(), vec![Some("b".to_owned())]);
        assert_eq!(walks.anchor(b"w", 49).map(|(at, _)| at), Some(25));
        assert_eq!(walks.anchor(b"w", 80).map(|(at, _)| at), Some(50));
        assert!(walks.anchor(b"w", 10).is_none());
        assert!(walks.anchor(b"other", 80).is_none());
        walks.keep(b"w", 75, "1:3:".to_owned(), vec![Some("c".to_owned())]);
        assert_eq!(walks.anchor(b"w", 60).map(|(at, _)| at), None);
        let (at, anchor) = walks.anchor(b"w", 80).unwrap();
        assert_eq!((at, anchor.snapshot.as_str()), (75, "1:3:"));
    }
}
