//! SQLite's reads of records (`flow::records::Pages`, run by `flow::read`): each row lent by
//! rusqlite to the records it makes (no row is copied), a list's pages from the memo's anchors
//! (`sqlite::walks`), its count, and the budget of a read run on an async worker
//! (`sqlite::handoff`).

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rusqlite::params_from_iter;
use rusqlite::types::{Value, ValueRef};

use crate::dialect::clause::Where;
use crate::engine::error::EngineError;
use crate::engine::records::{RecordRow, Records};
use crate::engine::types::{PyValue, Stored, read};
use crate::flow::driver::Failure;
use crate::flow::records::{Database, Page, Pages, Rows, counted};
use crate::flow::walks::{Walker, from_anchor, keep_anchor, read_page};
use crate::sqlite::flows::Sqlite;
use crate::sqlite::model::{Field, Model};
use crate::sqlite::schema::prepare;
use crate::sqlite::values::write_field_value;
use crate::sqlite::walks::{self, Ticket, seek_terms};

/// What a read may use of the list memo, and how much work it may do: the ticket of its
/// snapshot (`sqlite::walks`), and, run inline, the rows its page may step over; what it
/// stepped over, and whether it gave up (then the pool runs it: `sqlite::handoff`).
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

/// SQLite's rows: each lent by the driver as it is stepped to.
impl<'c> Rows for Sqlite<'c> {
    type RowRef<'r> = rusqlite::Row<'r>;

    async fn each_row<S: FnMut(&rusqlite::Row<'_>) + Send>(
        &self,
        conn: &mut &'c mut rusqlite::Connection,
        sql: &str,
        params: &Vec<Value>,
        lenient: bool,
        sink: &mut S,
    ) -> Result<(), EngineError> {
        let mut read = || -> rusqlite::Result<()> {
            let mut stmt = prepare(conn, sql)?;
            let mut rows = stmt.query(params_from_iter(params.iter()))?;
            while let Some(row) = rows.next()? {
                sink(row);
            }
            Ok(())
        };
        read().map_err(|e| self.fault(e, Failure::Read { lenient }))
    }
}

/// SQLite's pages: from the memo's anchors, within the read's budget.
impl<'c> Pages for Sqlite<'c> {
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
        let key = walks::key(&sql, &filter.params);
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

    fn unreadable(model: &Model, at: usize, lenient: bool) -> EngineError {
        unreadable(model, at, lenient)
    }
}

/// A record with a value the engine cannot read: it fails (500) on every read of the record
/// ([decision: stricter]: strict mode refuses with a `400` naming the field).
pub(crate) fn unreadable(model: &Model, at: usize, lenient: bool) -> EngineError {
    let f = &model.fields[at];
    EngineError::engine_fails(
        lenient,
        &f.name,
        format!(
            "A record of {} holds a value in field {:?} that does not fit its declared type \
             {:?}: the data engine fails (500) on every read of that record. Correct the \
             stored value, or filter the record out.",
            model.name, f.name, f.declared_type
        ),
    )
}

/// A row as SQLite lends it: each value as stored.
impl RecordRow<Field> for rusqlite::Row<'_> {
    #[inline]
    fn write_value(&self, buf: &mut Vec<u8>, i: usize, column: &Field, _tz: i32) -> bool {
        let stored = match self.get_ref(i) {
            Ok(v) => Stored::from(v),
            Err(_) => Stored::Null,
        };
        write_field_value(buf, column, stored)
    }

    fn key(&self, i: usize, column: &Field) -> Option<Vec<u8>> {
        match self.get_ref(i).unwrap_or(ValueRef::Null) {
            ValueRef::Null => None,
            v => Some(identity_key(column, v)),
        }
    }
}

/// A row read whole (a record read back after a write): each value as stored.
impl RecordRow<Field> for [Value] {
    fn write_value(&self, buf: &mut Vec<u8>, i: usize, column: &Field, _tz: i32) -> bool {
        let stored = self
            .get(i)
            .map_or(Stored::from(ValueRef::Null), Stored::from);
        write_field_value(buf, column, stored)
    }
}

/// One part of a record's identity, the value `v` of key column `field`, as Python compares
/// it: numbers by value whatever their storage class (`1 == 1.0 == True`), text and bytes by
/// content (never equal to each other), dates and decimals by their value's text.
fn identity_key(field: &Field, v: ValueRef<'_>) -> Vec<u8> {
    let number = |f: f64| -> Vec<u8> {
        if f.fract() == 0.0 && f.abs() < 9.2e18 {
            let mut k = vec![b'i'];
            k.extend_from_slice(&(f as i64).to_le_bytes());
            k
        } else {
            let mut k = vec![b'f'];
            k.extend_from_slice(&f.to_bits().to_le_bytes());
            k
        }
    };
    match read(field.ty, v.into()) {
        PyValue::None => vec![b'n'],
        PyValue::Bool(b) => number(if b { 1.0 } else { 0.0 }),
        PyValue::Int(i) => {
            let mut k = vec![b'i'];
            k.extend_from_slice(&i.to_le_bytes());
            k
        }
        PyValue::Float(f) | PyValue::Decimal(_, f) => number(f),
        PyValue::Str(t) => [b"s", t].concat(),
        PyValue::Bytes(b) => [b"b", b].concat(),
        PyValue::Date(d) => [b"d", d.iso().as_bytes()].concat(),
        PyValue::DateTime(d, t) => [b"t", d.iso().as_bytes(), t.iso().as_bytes()].concat(),
        PyValue::Time(t) => [b"h", t.iso().as_bytes()].concat(),
        PyValue::Unreadable(raw) => {
            let mut k = vec![b'u'];
            k.extend_from_slice(format!("{raw:?}").as_bytes());
            k
        }
    }
}
