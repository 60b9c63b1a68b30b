//! SQLite's reads of records (`flow::database::Database`, run by `flow::read`): each row lent by
//! rusqlite to the records it makes (no row is copied), a list's pages from the memo's anchors
//! ("Page walks" below), its count, and the budget of a read run on an async worker
//! (`sqlite::backend`).
//!
//! # Writes, aggregates and groups
//!
//! SQLite's side of the record flows (`flow::write`, `flow::aggregate`): [`Sqlite`], one
//! operation's view of a resource and of the connection it runs on.
//!
//! SQLite's calls block, so an operation takes its connection first (the writer for a write, a
//! reader for a summary: `Resource::with_writer`, `Resource::with_read`) and runs the flow to
//! its end on that thread (`flow::references::run_now`): every step completes when it is
//! called, and the flow's futures are ready when first polled. The steps, and the SQL the
//! databases share, are the flow's; what SQLite binds, reads back and compares is here.
//!
//! # Page walks
//!
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
//! ## Validity
//!
//! Both are answers about one snapshot of the database, kept where every database keeps its
//! own (`svc_engine::walks`) under a token: the generation that names the state they were computed
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

use crate::aggregate::{
    GroupKey, OVERFLOW, agg_sql, cannot_write, encoded, group_keys, json_result, not_json,
    result_value, y_value,
};
use crate::driver::{SqlCancel, Watchdog, bind_of, changed, sent, stored_rows, value_ref};
use crate::schema::{Field, Model};
use crate::types::{
    bind, engine_error, json_column_value, json_to_sql, never_written, rebound, stored,
};
use crate::{Resource, db_error, get_by_identity, lookup_value, schema};
use rusqlite::Connection;
use rusqlite::types::{Value, ValueRef};
use std::any::Any;
use std::borrow::Cow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use svc_emulator_core::dialect::bind::{Bind, Binds};
use svc_emulator_core::dialect::clause::Where;
use svc_emulator_core::dialect::group::{group_label, group_statement};
use svc_emulator_core::dialect::quote_ident;
use svc_emulator_core::flow::aggregate::SummaryRow;
use svc_emulator_core::flow::database::Database;
use svc_emulator_core::flow::driver::{Failure, Session};
use svc_emulator_core::flow::export::{
    SavedData, SavedTable, Suspended, bind_imported, only_owned_counters,
};
use svc_emulator_core::flow::records::{Page, counted};
use svc_emulator_core::flow::state::Served;
use svc_emulator_core::flow::walks::{from_anchor, keep_anchor, read_page};
use svc_emulator_core::flow::write::{ReadBack, Values, insert_statement};
use svc_emulator_core::flow::{Reference, TableRef};
use svc_engine::aggregate::{AggregateFunc, fails, not_json_refused};
use svc_engine::body::non_field;
use svc_engine::error::EngineError;
use svc_engine::field_input::{Internal, py_equal};
use svc_engine::python::json::{PyJson, py_json_to_json};
use svc_engine::records::{ModelMap, Records};
use svc_engine::table::{GroupColumns, Summary, Table};
use svc_engine::types::{PyValue, Reflected, plain, read};
use svc_engine::walks::{Anchor, Walks};

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

/// One part of a record's identity, the value `v` of key column `field`, as Python compares
/// it: numbers by value whatever their storage class (`1 == 1.0 == True`), text and bytes by
/// content (never equal to each other), dates and decimals by their value's text.
pub(crate) fn identity_key(field: &Field, v: ValueRef<'_>) -> Vec<u8> {
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
    match read(field.kind.ty, stored(v)) {
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

/// A resource as the record flows see it, with the one connection an operation runs on.
pub(crate) struct Sqlite<'c> {
    resource: &'c Resource,
    /// The connection, until the flow takes it ([`Database::connect`], once per operation). A
    /// `Mutex` only so that the flow may share the view between its steps (`Sync`); nothing
    /// else ever waits on it.
    conn: Mutex<Option<&'c mut Connection>>,
    /// What a read may use of the memo and how much work it may do (`sqlite::records`).
    pub(super) budget: Budget,
    /// What stops a read-only query or an action from another thread, and at its deadline
    /// (`sqlite::driver`).
    pub(super) stop: Option<(&'c SqlCancel, &'c Watchdog)>,
}

impl<'c> Sqlite<'c> {
    /// The view with what the core keeps of its resource, as a flow serves it.
    pub(crate) fn served(&self) -> Served<'_, Self> {
        Served::new(self, self.resource.state())
    }

    /// `resource`, whose operation runs on `conn`, using nothing of the list memo.
    pub(crate) fn new(resource: &'c Resource, conn: &'c mut Connection) -> Self {
        Self::reading(resource, conn, Budget::default())
    }

    /// `resource`, whose read runs on `conn` within `budget`.
    pub(crate) fn reading(
        resource: &'c Resource,
        conn: &'c mut Connection,
        budget: Budget,
    ) -> Self {
        Sqlite {
            resource,
            conn: Mutex::new(Some(conn)),
            budget,
            stop: None,
        }
    }

    /// `resource`, whose read-only query or action runs on `conn`, stopped early by `cancel`
    /// and at `watchdog`'s deadline.
    pub(crate) fn querying(
        resource: &'c Resource,
        conn: &'c mut Connection,
        cancel: &'c SqlCancel,
        watchdog: &'c Watchdog,
    ) -> Self {
        Sqlite {
            stop: Some((cancel, watchdog)),
            ..Self::new(resource, conn)
        }
    }

    /// The resource.
    pub(crate) fn resource(&self) -> &'c Resource {
        self.resource
    }
}

/// Every trigger: its name, its table and the statement that makes it.
const TRIGGERS: &str =
    "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND sql IS NOT NULL";

/// Whether the database has `sqlite_sequence` (made with its first `AUTOINCREMENT` table).
const SEQUENCES_KEPT: &str =
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'";

/// Every `AUTOINCREMENT` table's last key.
const SEQUENCES: &str = "SELECT name, seq FROM sqlite_sequence ORDER BY name";

/// A table's row of `sqlite_sequence` forgotten (`?1`: the table)...
const SEQUENCE_FORGET: &str = "DELETE FROM sqlite_sequence WHERE name = ?1";

/// ...then set (`?2`: its last key).
const SEQUENCE_SET: &str = "INSERT INTO sqlite_sequence (name, seq) VALUES (?1, ?2)";

/// SQLite's side of the record flows' reads and binds.
impl<'c> Database for Sqlite<'c> {
    /// SQLAlchemy reflects every SQLite column as autoincrement "auto": the engine's serializer
    /// requires none, and a `PUT` is partial like a `PATCH`.
    const REQUIRES_NO_COLUMN: bool = true;

    // The time zone: none (`TIME_ZONE` as the core has it). SQLite stores date-times as the
    // engine wrote them, and reads them back as they are.

    /// What SQLite is given for the value (SQLAlchemy's bind processor of the column's type,
    /// then Python's `sqlite3`); a value the type refuses is the engine's `400`. SQLite keeps
    /// no time zone: `tz` is not needed.
    fn bind(
        field: &Field,
        value: &Internal,
        _tz: i32,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        let value = bind(field.kind.ty.reflected, value).map_err(|m| {
            // An integer past 64 bits: Python's `sqlite3` overflows, the engine fails (500).
            match value {
                Internal::Int(i) if i.parse::<i64>().is_err() => non_field(m).by_design(),
                _ => match never_written(field.kind.ty.reflected, &field.name) {
                    Some(why) => non_field(m).explained(why),
                    None => non_field(m),
                },
            }
        })?;
        Ok(params.bind::<Self>(bind_of(value)))
    }

    /// The key bound as SQLAlchemy binds a value compared with the column: by the value's own
    /// type (`sqlite::lookup_value`).
    fn key_condition(model: &Model, raw: &str, params: &mut Binds) -> Result<String, EngineError> {
        let key = params.bind::<Self>(bind_of(lookup_value(model, raw)?));
        Ok(format!("{} = {key}", model.pk_field().sql))
    }

    /// The operation's connection (`tz` changes nothing on SQLite, where the engine sets no
    /// time zone).
    async fn connect(&self, _tz: Option<&str>) -> Result<&'c mut Connection, EngineError> {
        self.conn
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| {
                EngineError::Internal("an operation asked for its connection twice".to_owned())
            })
    }

    /// Read on the operation's connection (the writer: a reload sees every table made).
    async fn reflect(&self, conn: &mut &'c mut Connection) -> Result<ModelMap<Model>, EngineError> {
        Ok(schema::load_schema(conn)?.models)
    }

    /// A read's failure is the database's (`500`), as the engine's: SQLite refuses nothing a
    /// selection writes.
    fn fault(&self, e: rusqlite::Error, failure: Failure<'_, Model>) -> EngineError {
        match failure {
            Failure::Write(model) => db_error(model, e),
            Failure::Read { lenient } => engine_error(e).unless_lenient(lenient),
            Failure::Query | Failure::Unexpected => engine_error(e),
        }
    }

    // SQLite's side of the writes (`flow::write`). The locked row is read whole: the engine's
    // ORM loads the record before it writes, fails on a value it cannot read, and compares each
    // given value with the loaded one in Python.

    fn lock_select(model: &Model) -> String {
        model.select_list.clone()
    }

    fn loaded(&self, model: &Model, locked: &[Bind], lenient: bool) -> Result<(), EngineError> {
        self.resource.readable(model, locked, lenient)
    }

    fn held(model: &Model, locked: &[Bind], values: &Values<'_, Field>) -> Option<Vec<bool>> {
        Some(
            values
                .iter()
                .map(|(f, v)| {
                    let cell = value_ref(&locked[model_index(model, f)]);
                    let loaded = read(f.kind.ty, stored(cell));
                    py_equal(v, &loaded, f.kind.ty.reflected)
                })
                .collect(),
        )
    }

    /// The mapper's identity, picked from the whole row the lock read, as the ORM binds it
    /// again once loaded (`types::rebound`: a `NUMERIC(10, 2)` key stored with three decimals
    /// is looked for rounded, and found by nothing).
    fn identity_cells(model: &Model, locked: &[Bind]) -> Vec<Bind> {
        let identity = model.identity.iter();
        identity
            .map(|&i| rebound(model.fields[i].kind.ty, &locked[i]))
            .collect()
    }

    /// By the mapper's identity: every row that shares a promoted key goes (SQLAlchemy only
    /// warns that it matched more than one); a NULL in a composite key is a flush error,
    /// `400 Query failed`.
    const REFERENCES: &'static str = schema::REFERENCES;

    async fn references_to(
        &self,
        conn: &mut &'c mut Connection,
        parent: &TableRef,
    ) -> Result<Vec<Reference>, EngineError> {
        schema::references(conn, parent)
    }

    const KEY_COLUMNS: &'static str =
        "SELECT name, '' FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk";
    const FIRST_COLUMN: &'static str = "SELECT name, '' FROM pragma_table_info(?1) WHERE cid = 0";

    /// The row inserted, then read back by its identity as the engine refreshes it (the key
    /// given, else SQLite's last rowid, SQLAlchemy's `lastrowid`, which is the key only for an
    /// `INTEGER PRIMARY KEY`: for another integer or numeric key it names whichever record has
    /// that key, or none).
    async fn insert(
        &self,
        tx: &mut Session<Self>,
        model: &Model,
        values: &Values<'_, Field>,
        _tz: i32,
    ) -> Result<ReadBack, EngineError> {
        let conn = &**tx.conn();
        let pk_field = model.pk_field();
        // The new record's identity (the mapper's key columns) comes from the body; a
        // composite key may leave some of them NULL, not all.
        let pk_given = values
            .iter()
            .any(|(f, v)| model.identity.contains(&model_index(model, f)) && *v != Internal::None);
        let no_key = || {
            format!(
                "A value is required for the primary key {:?}: the database does not assign \
                 it. Send one in the body.",
                pk_field.name
            )
        };
        if !pk_given && !autoincrement_key(model) {
            // SQLAlchemy has no way to learn the new record's key: the engine inserts, then
            // answers `400 Query failed` (a NULL identity) and rolls back.
            return Err(EngineError::field(pk_field.name.clone(), no_key()));
        }
        // One value per written column, in order: SQLite binds each at a `?`.
        let mut params = Binds::default();
        let (sql, written) = insert_statement::<Self>(model, values, 0, &mut params)?;
        changed(conn, &sql, sent(&params)).map_err(|e| db_error(model, e))?;
        let identity: Vec<Bind> = model
            .identity
            .iter()
            .map(|&i| {
                match written
                    .iter()
                    .position(|(f, _)| std::ptr::eq(*f, &model.fields[i]))
                {
                    Some(at) => params.values()[at].clone(),
                    None if autoincrement_key(model) => Bind::Int(conn.last_insert_rowid()),
                    None => Bind::Null,
                }
            })
            .collect();
        let record = get_by_identity(conn, model, &identity)?;
        Ok(match record {
            // The engine stores the row with a NULL key, then fails (500) reading it back.
            None if !pk_given || identity.contains(&Bind::Null) => ReadBack::Lost {
                field: pk_field.name.clone(),
                why: no_key(),
            },
            record => ReadBack::of(model, record),
        })
    }

    // A list's pages and its count.
    // SQLite's side of a page walk: a sort key is read from the row's own columns, each value as
    // SQLite stored it, and bound again as it is.

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
            Some(_) if page.offset > 0 => {
                memo.anchor(page.walks, budget.ticket, &walk_key, page.offset)
            }
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
            keep_anchor(&walk_key, page, end, token);
        }
        Ok(None)
    }

    /// Remembered in this snapshot's generation, else counted (`SELECT count(*)`, every
    /// selected row visited) and remembered. Inline, only a remembered count.
    async fn count(
        &self,
        conn: &mut &'c mut rusqlite::Connection,
        model: &Model,
        filter: &Where<Binds>,
        lenient: bool,
        walks: &Walks<Bind>,
    ) -> Result<u64, EngineError> {
        let (budget, memo) = (&self.budget, self.resource().memo());
        let sql = ["SELECT count(*) FROM ", &model.table_sql, &filter.sql].concat();
        let key = filter.params.memo_key(&sql);
        if let Some(n) = memo.count(walks, budget.ticket, &key) {
            return Ok(n);
        }
        if budget.max_skip.is_some() {
            return Err(budget.give_up());
        }
        let n = counted(self, conn, model, filter, lenient).await?;
        memo.keep_count(walks, budget.ticket, key, n);
        Ok(n)
    }

    /// Not for the built-in tools resource, which shows what it stores (see
    /// `Resource::showing_stored_values`).
    fn checks_readable(&self) -> bool {
        !self.resource().shows_stored_values()
    }

    fn unreadable(model: &Model, at: usize, lenient: bool) -> Option<EngineError> {
        Some(crate::records::unreadable(model, at, lenient))
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

    /// The engine's own statement: SQLite steps over the rows before the page in the b-tree
    /// it reads them from, converting nothing, so keys first would only add a second read.
    fn keyed_select(page: &Page<'_, Self>, extra: &str, where_sql: &str, skip: u64) -> String {
        format!("{} OFFSET {skip}", page.select(extra, where_sql))
    }

    // An export, an import and a saved copy.
    // SQLite's side of an export and an import (`flow::export`); its saved copies are its online
    // backup's (`Resource::save_from`), not `flow::snapshot`'s.

    /// `sqlite_sequence`'s rows: what numbers the next key of each `AUTOINCREMENT` table (the
    /// others number theirs past the largest key, which the rows give back).
    type Keys = Vec<(String, i64)>;

    /// SQLite's `BEGIN` reads as of its first read, to its end (an in-memory database's one
    /// connection is the emulator's alone meanwhile).
    const BEGIN_SNAPSHOT: &'static str = "BEGIN";

    /// The whole database copied into memory by SQLite's online backup, which copies its
    /// pages: 117 us for 10k rows where `flow::snapshot` would put them back in 2.58 ms
    /// (`cargo xtask bench --only fixture`, docs/performance.md section 12).
    async fn save_copy(db: &Served<'_, Self>) -> Result<SavedData, EngineError> {
        let conn = db.connect().await?;
        db.resource.save_from(conn)
    }

    /// The whole database put back from its copy, on the writer.
    async fn restore_copy(
        db: &Served<'_, Self>,
        saved: &(dyn Any + Send + Sync),
    ) -> Result<(), EngineError> {
        let conn = db.connect().await?;
        db.resource.restore_into(saved, conn)
    }

    async fn read_keys(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> Result<Self::Keys, EngineError> {
        let unexpected = |e| self.fault(e, Failure::Unexpected);
        let kept = stored_rows(conn.conn(), SEQUENCES_KEPT, &Binds::default());
        if kept.map_err(unexpected)?.is_empty() {
            return Ok(Vec::new());
        }
        let rows = stored_rows(conn.conn(), SEQUENCES, &Binds::default());
        Ok(rows
            .map_err(unexpected)?
            .into_iter()
            .filter_map(|row| match (row.first(), row.get(1)) {
                (Some(Value::Text(name)), Some(Value::Integer(seq))) => Some((name.clone(), *seq)),
                _ => None,
            })
            .filter(|(name, _)| tables.iter().any(|t| t.name == *name))
            .collect())
    }

    /// The counters of the tables written only, as on every database: a name in an export's
    /// file that is none of them is refused (it is a bound value here, never written into a
    /// statement, but it would move another table's counter).
    fn check_keys(keys: &Self::Keys, tables: &[SavedTable]) -> Result<(), EngineError> {
        let named = keys.iter().map(|(name, _)| name.as_str());
        only_owned_counters("table", named, |n| tables.iter().any(|t| t.name == n))
    }

    async fn put_keys(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
        keys: &Self::Keys,
    ) -> Result<(), EngineError> {
        Self::check_keys(keys, tables)?;
        for (name, seq) in keys {
            // `sqlite_sequence` has no key: a table's row is replaced by hand.
            let forget = Binds(vec![Bind::Text(name.clone())]);
            let set = Binds(vec![Bind::Text(name.clone()), Bind::Int(*seq)]);
            for (sql, binds) in [(SEQUENCE_FORGET, forget), (SEQUENCE_SET, set)] {
                let done = conn.write(sql, &binds).await;
                done.map_err(|e| self.fault(e, Failure::Unexpected))?;
            }
        }
        Ok(())
    }

    /// The engine runs SQLite without the foreign keys' checks; a database file whose
    /// connections turn them on has them checked at the commit, so the models go in in any
    /// order. SQLite cannot turn a trigger off: the tables' triggers are dropped inside the
    /// transaction and made again before its commit (SQLite's schema changes are transactional),
    /// so that an imported row is written once, not again by a trigger.
    async fn suspend_checks(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> Result<Suspended, EngineError> {
        self.run(conn, "PRAGMA defer_foreign_keys = ON").await?;
        let unexpected = |e| self.fault(e, Failure::Unexpected);
        let triggers = stored_rows(conn.conn(), TRIGGERS, &Binds::default()).map_err(unexpected)?;
        let mut undo = Vec::new();
        for row in triggers {
            let (Some(Value::Text(name)), Some(Value::Text(table)), Some(Value::Text(sql))) =
                (row.first(), row.get(1), row.get(2))
            else {
                continue;
            };
            if tables.iter().any(|t| t.name == *table) {
                self.run(conn, &format!("DROP TRIGGER {}", quote_ident(name)))
                    .await?;
                undo.push(sql.clone());
            }
        }
        Ok(Suspended {
            still_checked: Vec::new(),
            undo,
        })
    }

    /// `DATE` and `TIME`, which the engine cannot write on SQLite (`types::never_written`),
    /// hold the text an export wrote (a `BLOB` its bytes, as on every database). A resource
    /// whose records show its values as stored (the built-in users and teams, whose contract
    /// is the emulator's own) stores every value as its strict writes do.
    fn bind_imported(
        &self,
        field: &Field,
        value: &Internal,
        given: &PyJson,
        tz: i32,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        let stored_as_shown = self.resource.shows_stored_values();
        let written_as_text = matches!(field.kind.ty.reflected, Reflected::Date | Reflected::Time);
        if !stored_as_shown && !written_as_text {
            return bind_imported::<Self>(field, value, given, tz, params);
        }
        let given = match given {
            PyJson::Str(_) | PyJson::None => py_json_to_json(given),
            _ if stored_as_shown => py_json_to_json(given),
            _ => {
                return Err(EngineError::field(
                    &field.name,
                    "Expected text, as an export writes it.",
                ));
            }
        };
        let value = json_to_sql(field.value_kind, &given);
        let value = value.map_err(|m| EngineError::field(&field.name, m))?;
        Ok(params.bind::<Self>(bind_of(value)))
    }

    // An aggregate and a group.
    // SQLite's side of an aggregate and a group (`flow::aggregate`).

    /// The engine's statement; a date lookup's `strftime` format is one of the engine's own
    /// constants, written as a literal.
    fn summary_statement(
        model: &Model,
        summary: &Summary<'_, Field>,
        where_sql: &str,
    ) -> Result<String, EngineError> {
        let keys = group_keys(summary)?;
        let mut select = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            let expr = match key {
                GroupKey::Strftime(format, field) => format!("strftime('{format}', {})", field.sql),
                GroupKey::Column(field) => field.sql.clone(),
            };
            select.push(format!("{expr} AS {}", group_label(i)));
        }
        let GroupColumns { y, func, .. } = summary.columns;
        select.push(format!("{} AS y_func", agg_sql(func, &y.sql)?));
        let labels: Vec<String> = (0..keys.len()).map(group_label).collect();
        let table = &model.table_sql;
        Ok(group_statement(
            &select,
            &labels,
            table,
            where_sql,
            summary.limit,
        ))
    }

    /// SQLite keeps no time zone: its values are written as stored.
    fn summary_row(
        summary: &Summary<'_, Field>,
        row: &rusqlite::Row<'_>,
        _tz: i32,
    ) -> Result<SummaryRow, EngineError> {
        let GroupColumns { y, func, .. } = summary.columns;
        let groups = group_keys(summary)?;
        let mut keys = Vec::with_capacity(summary.columns.xs.len());
        for (i, key) in groups.iter().enumerate() {
            let raw = row.get_ref(i).unwrap_or(ValueRef::Null);
            let (value, field) = match key {
                GroupKey::Strftime(_, field) => (plain(stored(raw)), field),
                GroupKey::Column(field) => (read(field.kind.ty, stored(raw)), field),
            };
            if not_json(&value) {
                return Err(not_json_refused("_x_column", &field.name));
            }
            let json = match key {
                // The key keeps the column's type: a JSON column's keys are read as JSON.
                GroupKey::Column(f) if f.kind.ty.reflected == Reflected::Json => {
                    json_column_value(stored(raw)).map(|v| py_json_to_json(&v))
                }
                _ => encoded(&value),
            };
            let json = json.ok_or_else(|| {
                fails(
                    "_x_column",
                    format!(
                        "Cannot group by field {:?}: the data engine fails on a stored value.",
                        field.name
                    ),
                )
            })?;
            keys.push(json);
        }
        let raw = row.get_ref(groups.len()).unwrap_or(ValueRef::Null);
        // A JSON column's `sum`, `min` and `max` are JSON, whoever writes them.
        let json = match json_result(func, y, raw) {
            Some(json) => json,
            None => y_value(summary, result_value(func, y, raw))?,
        };
        let value = json.ok_or_else(|| cannot_write(func, y))?;
        Ok(SummaryRow { keys, value })
    }

    /// The overflow of an integer `sum` is the request's fault.
    fn summary_error(error: EngineError, func: AggregateFunc, field: &Field) -> EngineError {
        match &error {
            EngineError::Internal(message) if message.contains(OVERFLOW) => fails(
                "_y_column",
                format!(
                    "Cannot compute {func} of field {:?}: integer overflow.",
                    field.name
                ),
            ),
            _ => error,
        }
    }
}

/// The index of a field in its model.
fn model_index(model: &Model, f: &Field) -> usize {
    model
        .fields
        .iter()
        .position(|g| std::ptr::eq(g, f))
        .unwrap_or(model.pk)
}

/// Whether SQLAlchemy takes the primary key for an autoincrement column, whose value after an
/// INSERT is the cursor's `lastrowid`: a single integer or numeric key (`INTEGER`, `INT`,
/// `BIGINT`, `REAL`, `NUMERIC`...) without a foreign key or a default, the promoted first
/// column of a table without a key included. A composite key never is (SQLAlchemy has no
/// autoincrement column for it).
fn autoincrement_key(model: &Model) -> bool {
    let pk = model.pk_field();
    model.identity.len() == 1
        && matches!(
            pk.kind.ty.reflected,
            Reflected::Integer | Reflected::Float | Reflected::Numeric { .. }
        )
        && !pk.has_default
        && !model
            .extra
            .foreign_keys
            .iter()
            .any(|fk| fk.column == pk.name)
}

/// Counts and anchors of one resource's lists, valid for one database state: they are kept
/// where every database keeps its own (the core's [`Walks`], passed in), each under the
/// generation it was made in (its token), and served only to a list of the same generation.
#[derive(Debug, Default)]
pub(crate) struct ListMemo {
    generation: AtomicU64,
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
    pub(crate) fn count(&self, walks: &Walks<Bind>, ticket: Ticket, key: &[u8]) -> Option<u64> {
        let token = ticket.token()?;
        let (kept, n) = walks.count(key)?;
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
    pub(crate) fn keep_count(&self, walks: &Walks<Bind>, ticket: Ticket, key: Vec<u8>, n: u64) {
        if let Some(token) = ticket.token() {
            walks.keep_count(key, token, n);
        }
    }

    /// The anchor of walk `key` nearest at or before `offset`, kept in the ticket's
    /// generation: the offset of the row after it, and the anchor.
    pub(crate) fn anchor(
        &self,
        walks: &Walks<Bind>,
        ticket: Ticket,
        key: &[u8],
        offset: u64,
    ) -> Option<(u64, Anchor<Bind>)> {
        let token = ticket.token()?;
        let (at, anchor) = walks.anchor(key, offset)?;
        (anchor.token == token).then(|| {
            self.anchor_hits.fetch_add(1, Ordering::Relaxed);
            (at, anchor)
        })
    }
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
    if !(pk.auto || pk.not_null) || !model.unique_key() {
        return None;
    }
    let end = terms.iter().position(|&(i, _)| i == model.pk)?;
    Some(&terms[..=end])
}

/// What a read may use of the list memo, and how much work it may do: the ticket of its
/// snapshot (`sqlite::records`), and, run inline, the rows its page may step over; what it
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
