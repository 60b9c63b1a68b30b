//! SQLite's side of a page walk (`flow::walks`): what lists remember between requests, so that a
//! page costs what its records cost, not what the table holds, and the token that proves it
//! still holds.
//!
//! Two things are remembered, both for one state of the database only:
//!
//! - **Counts.** Every paged list answers the number of matching records, which SQLite can
//!   only find by visiting every one of them: at a million rows that is most of a page's cost,
//!   on every page. The memo keeps the count of each selection (the `WHERE` clause and its
//!   bound values).
//! - **Anchors.** A page at `OFFSET n` makes SQLite step over `n` rows first, so walking a
//!   whole table page by page costs the square of its size. After each page the memo keeps the
//!   sort key of the page's last record (its *anchor*); a later page of the same selection and
//!   order starts from the nearest anchor at or before it, with a `WHERE` that seeks past that
//!   key, and steps over only the rows between. The rows are the ones `OFFSET` gives, in the
//!   same order: the order is total (it always ends with the primary key), and the seek
//!   compares with SQLite's own `ORDER BY` rules (NULLs first ascending, last descending; the
//!   column's collation and affinity on both sides).
//!
//! # Validity
//!
//! Both are answers about one snapshot of the database, kept where every database keeps its
//! own (`engine::walks`) under a token: the generation that names the state they were computed
//! in. Nothing is used across a change:
//!
//! - writes through the resource's writer bump the generation ([`ListMemo::bump`]);
//! - every list first reads `PRAGMA data_version` on its connection, inside its read
//!   transaction: a value that moved since the connection last looked means some other
//!   connection committed (the emulator's writer, or another process writing the file), so
//!   the list bumps the generation and neither reads nor keeps anything.
//!
//! A list reads the generation *before* its snapshot begins, tags what it keeps with that
//! value and uses only what carries it. A snapshot that saw a commit either noticed it itself
//! (and kept nothing), or its connection noticed it earlier and bumped the generation before
//! this list read it; either way nothing computed before the commit can carry the generation
//! this list reads.

use crate::dialect::clause::Where;
use crate::dialect::seek::{self, Nulls};
use crate::engine::error::EngineError;
use crate::engine::records::Records;
use crate::engine::walks::{Anchor, Walks};
use crate::flow::records::{Page, Pages, counted};
use crate::flow::walks::{from_anchor, keep_anchor, read_page};
use crate::sqlite::records::Sqlite;
use crate::sqlite::schema::Model;

use rusqlite::types::{Value, ValueRef};
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Counts and anchors of one resource's lists, valid for one database state: they are kept
/// where every database keeps its own ([`Walks`]), each under the generation it was made in
/// (its token), and served only to a list of the same generation.
#[derive(Debug, Default)]
pub(crate) struct ListMemo {
    generation: AtomicU64,
    walks: Walks<Value>,
    /// Counts answered from the memo, and pages started from an anchor (for tests).
    count_hits: AtomicU64,
    anchor_hits: AtomicU64,
}

/// The generation a list read before its snapshot began, and whether the memo may serve it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    generation: u64,
    usable: bool,
}

impl Ticket {
    /// Whether the memo may serve this list: no other connection committed since its
    /// connection last looked.
    pub(crate) fn usable(&self) -> bool {
        self.usable
    }

    /// A ticket that neither reads nor keeps anything.
    pub(crate) fn unusable() -> Self {
        Ticket {
            generation: 0,
            usable: false,
        }
    }

    /// The token what the list keeps is kept under, when it may keep anything.
    pub(crate) fn token(&self) -> Option<String> {
        self.usable.then(|| self.generation.to_string())
    }
}

impl ListMemo {
    /// The current generation: read before the list's snapshot begins.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Marks every count and anchor stale: the database changed, or may have.
    pub(crate) fn bump(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The ticket of a list that read `generation` before its snapshot and then checked its
    /// connection's data version: `seen` is the version the connection saw last time (updated
    /// here), `now` the one inside the snapshot.
    pub(crate) fn ticket(&self, generation: u64, seen: &mut Option<i64>, now: i64) -> Ticket {
        if *seen == Some(now) {
            return Ticket {
                generation,
                usable: true,
            };
        }
        *seen = Some(now);
        self.bump();
        Ticket::unusable()
    }

    /// The count kept for `key` in the ticket's generation, if any.
    pub(crate) fn count(&self, ticket: Ticket, key: &[u8]) -> Option<u64> {
        let token = ticket.token()?;
        let (kept, n) = self.walks.count(key)?;
        (kept == token).then(|| {
            self.count_hits.fetch_add(1, Ordering::Relaxed);
            n
        })
    }

    /// How many counts the memo answered and how many pages started from an anchor.
    #[cfg(test)]
    pub(crate) fn hits(&self) -> (u64, u64) {
        (
            self.count_hits.load(Ordering::Relaxed),
            self.anchor_hits.load(Ordering::Relaxed),
        )
    }

    /// Keeps the count of `key`.
    pub(crate) fn keep_count(&self, ticket: Ticket, key: Vec<u8>, count: u64) {
        if let Some(token) = ticket.token() {
            self.walks.keep_count(key, token, count);
        }
    }

    /// The anchor of walk `key` nearest at or before `offset`, kept in the ticket's
    /// generation: the offset of the row after it, and the anchor.
    pub(crate) fn anchor(
        &self,
        ticket: Ticket,
        key: &[u8],
        offset: u64,
    ) -> Option<(u64, Anchor<Value>)> {
        let token = ticket.token()?;
        let (at, anchor) = self.walks.anchor(key, offset)?;
        (anchor.token == token).then(|| {
            self.anchor_hits.fetch_add(1, Ordering::Relaxed);
            (at, anchor)
        })
    }

    /// Where the walks ended, and the counts, whatever their generation.
    pub(crate) fn walks(&self) -> &Walks<Value> {
        &self.walks
    }
}

/// A memo key: the SQL text that identifies a selection (and order), then its bound values,
/// each tagged with its type so that `1`, `1.0` and `'1'` stay apart.
pub(crate) fn key(sql: &str, params: &[Value]) -> Vec<u8> {
    let mut k = Vec::with_capacity(sql.len() + 1 + params.len() * 9);
    k.extend_from_slice(sql.as_bytes());
    k.push(0);
    for p in params {
        match p {
            Value::Null => k.push(b'n'),
            Value::Integer(i) => {
                k.push(b'i');
                k.extend_from_slice(&i.to_le_bytes());
            }
            Value::Real(f) => {
                k.push(b'r');
                k.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            Value::Text(t) => {
                k.push(b't');
                k.extend_from_slice(&(t.len() as u64).to_le_bytes());
                k.extend_from_slice(t.as_bytes());
            }
            Value::Blob(b) => {
                k.push(b'b');
                k.extend_from_slice(&(b.len() as u64).to_le_bytes());
                k.extend_from_slice(b);
            }
        }
    }
    k
}

/// The terms of `terms` a seek compares, up to and with the primary key (which makes the order
/// total: nothing after it can matter), or `None` when the key may be NULL (a non-integer
/// primary key without `NOT NULL`, which SQLite lets repeat as NULL) or may repeat (a promoted
/// or composite key), and only `OFFSET` pages.
pub(crate) fn seek_terms<'t>(
    model: &Model,
    terms: &'t [(usize, bool)],
) -> Option<&'t [(usize, bool)]> {
    let pk = model.pk_field();
    if !(pk.auto || pk.not_null) || model.key_may_repeat() {
        return None;
    }
    let end = terms.iter().position(|&(i, _)| i == model.pk)?;
    Some(&terms[..=end])
}

/// SQLite's side of a page walk: a sort key is read from the row's own columns, each value as
/// SQLite stored it, and bound again as it is.
impl<'c> Pages for Sqlite<'c> {
    type Key = Value;

    /// From the nearest anchor of the same walk kept in this snapshot's generation, else with
    /// `OFFSET`; the end of a full page is kept as an anchor. Inline, a page that would step
    /// over more rows than its budget gives up.
    async fn page(
        &self,
        conn: &mut &'c mut rusqlite::Connection,
        page: &Page<'_, Self>,
        out: &mut Records<'_, Model>,
    ) -> Result<Option<u64>, EngineError> {
        let (budget, memo) = (&self.budget, self.resource().memo());
        let seek = seek_terms(page.model, page.terms);
        let walk_key = page.walk_key();
        let anchor = match seek {
            Some(_) if page.offset > 0 => memo.anchor(budget.ticket, &walk_key, page.offset),
            _ => None,
        };
        let filter = page.filter;
        let (sql, params, skip) = match (&anchor, seek) {
            (Some(anchor), Some(seek)) => {
                let extra = Self::sort_key_columns(page.model, seek);
                let (sql, params) = from_anchor(page, seek, &extra, anchor);
                (sql, Cow::Owned(params), page.offset - anchor.0)
            }
            _ => (
                page.offset_select(),
                Cow::Borrowed(&filter.params),
                page.offset,
            ),
        };
        if budget.max_skip.is_some_and(|max| skip > max) {
            return Err(budget.give_up());
        }
        budget.skipped.store(skip, Ordering::Relaxed);
        // The sort key is read from the row's own columns.
        let cells: Vec<usize> = seek.map_or_else(Vec::new, |t| t.iter().map(|&(i, _)| i).collect());
        let end = read_page(self, conn, (&sql, &params), page, out, &cells).await?;
        if let Some(token) = budget.ticket.token() {
            keep_anchor(self, &walk_key, page, end, token);
        }
        Ok(None)
    }

    /// Remembered in this snapshot's generation, else counted (`SELECT count(*)`, every
    /// selected row visited) and remembered. Inline, only a remembered count.
    async fn count(
        &self,
        conn: &mut &'c mut rusqlite::Connection,
        model: &Model,
        filter: &Where<Vec<Value>>,
        lenient: bool,
    ) -> Result<u64, EngineError> {
        let (budget, memo) = (&self.budget, self.resource().memo());
        let sql = ["SELECT count(*) FROM ", &model.table_sql, &filter.sql].concat();
        let key = key(&sql, &filter.params);
        if let Some(n) = memo.count(budget.ticket, &key) {
            return Ok(n);
        }
        if budget.max_skip.is_some() {
            return Err(budget.give_up());
        }
        let n = counted(self, conn, model, filter, lenient).await?;
        memo.keep_count(budget.ticket, key, n);
        Ok(n)
    }

    /// Not for the built-in tools resource, which shows what it stores (see
    /// `Resource::showing_stored_values`).
    fn checks_readable(&self) -> bool {
        !self.resource().shows_stored_values()
    }

    fn unreadable(model: &Model, at: usize, lenient: bool) -> Option<EngineError> {
        Some(crate::sqlite::records::unreadable(model, at, lenient))
    }

    fn walks(&self) -> &Walks<Value> {
        self.resource().memo().walks()
    }

    fn sort_key(row: &rusqlite::Row<'_>, i: usize) -> Option<Value> {
        match row.get_ref(i).unwrap_or(ValueRef::Null) {
            ValueRef::Null => None,
            ValueRef::Integer(i) => Some(Value::Integer(i)),
            ValueRef::Real(f) => Some(Value::Real(f)),
            ValueRef::Text(t) => Some(Value::Text(String::from_utf8_lossy(t).into_owned())),
            ValueRef::Blob(b) => Some(Value::Blob(b.to_vec())),
        }
    }

    /// Not a text that is not UTF-8: bound again as text it would not be the same value.
    fn seekable(row: &rusqlite::Row<'_>, i: usize) -> bool {
        match row.get_ref(i) {
            Ok(ValueRef::Text(t)) => std::str::from_utf8(t).is_ok(),
            Ok(_) => true,
            Err(_) => false,
        }
    }

    /// None: the sort key's cells are the row's own columns.
    fn sort_key_columns(_model: &Model, _terms: &[(usize, bool)]) -> String {
        String::new()
    }

    /// Each value bound as stored, in SQLite's NULL order (NULL before every other value:
    /// first ascending, last descending).
    fn seek_condition(
        model: &Model,
        terms: &[(usize, bool)],
        key: &[Option<Value>],
        params: &mut Vec<Value>,
    ) -> String {
        let columns: Vec<(&str, bool)> = terms
            .iter()
            .map(|&(i, desc)| (model.fields[i].sql.as_str(), desc))
            .collect();
        seek_condition(&columns, key, params)
    }

    /// The engine's own statement: SQLite steps over the rows before the page in the b-tree
    /// it reads them from, converting nothing, so keys first would only add a second read.
    fn keyed_select(page: &Page<'_, Self>, extra: &str, where_sql: &str, skip: u64) -> String {
        format!("{} OFFSET {skip}", page.select(extra, where_sql))
    }
}

/// The condition that selects the rows after a row whose sort key is `key`, in the order of
/// `terms` (`(column SQL, descending)`; the last term is unique and never NULL), with its
/// bound values appended to `params`: the seek every database writes (`dialect::seek`), in
/// SQLite's NULL order (NULL before every other value: first ascending, last descending).
pub(crate) fn seek_condition(
    terms: &[(&str, bool)],
    key: &[Option<Value>],
    params: &mut Vec<Value>,
) -> String {
    let mut bind = |i: usize| {
        params.push(key[i].clone().unwrap_or(Value::Null));
        "?".to_owned()
    };
    seek::seek_condition(terms, key, Nulls::Smallest, &mut bind)
}

/// What a read may use of the list memo, and how much work it may do: the ticket of its
/// snapshot (`sqlite::pages`), and, run inline, the rows its page may step over; what it
/// stepped over, and whether it gave up (then the pool runs it: `sqlite::backend`).
#[derive(Debug)]
pub(crate) struct Budget {
    ticket: Ticket,
    /// `None`: on the pool, any work; `Some`: inline, at most this many rows stepped over, and
    /// no count that is not remembered.
    max_skip: Option<u64>,
    skipped: AtomicU64,
    gave_up: AtomicBool,
}

impl Default for Budget {
    /// Nothing of the memo, any work: a read that is no list's.
    fn default() -> Self {
        Budget::new(Ticket::unusable(), None)
    }
}

impl Budget {
    /// A read in the snapshot of `ticket`, stepping over at most `max_skip` rows.
    pub(crate) fn new(ticket: Ticket, max_skip: Option<u64>) -> Self {
        Budget {
            ticket,
            max_skip,
            skipped: AtomicU64::new(0),
            gave_up: AtomicBool::new(false),
        }
    }

    /// The rows the page stepped over before its first record.
    pub(crate) fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }

    /// Whether the read stopped short of work its budget does not allow (its error then says
    /// only that).
    pub(crate) fn gave_up(&self) -> bool {
        self.gave_up.load(Ordering::Relaxed)
    }

    /// Stops the read: the pool's work.
    fn give_up(&self) -> EngineError {
        self.gave_up.store(true, Ordering::Relaxed);
        EngineError::Internal("an inline read gave up: the pool runs it".to_owned())
    }
}
