//! The SQLite backend: records of connected resources whose database is a SQLite file (or in
//! memory), served the way the platform's data engine serves one over SQLAlchemy's SQLite
//! dialect.
//!
//! # Files
//!
//! The seven roles every database folder has (`svc-emulator-postgres/` and `svc-emulator-mysql/` too): `dialect` (the
//! SQL words and lookups), `driver` (rusqlite: statements, read-only SQL, actions), `types`
//! (the engine's view of a column, and values both ways), `schema` (reflection into models,
//! foreign keys, identity), `records` (reads of records and their pages, and the write and
//! summary flows' SQLite side), `aggregate`, and this file, which also holds the resource: a
//! database, its connections and operations, where its files live, and its saved copies
//! (SQLite's online backup). Beside them, what only an embedded database needs, since no server
//! keeps its connections: `backend` (each operation on the async worker when its cost is known
//! to be small, else on the blocking pool, with the caller's turn; and the built-in users and
//! teams, with the emulator's strict writes).
//!
//! A [`Resource`] is one SQLite database (an existing file, or one created from seed SQL in
//! memory or at a path). Its tables are models, their columns fields, and the primary key
//! addresses records. The operations of docs/contract.md section 5.1 are plain methods returning
//! JSON (bytes for records and lists, [`serde_json::Value`] for aggregate and group) or an
//! [`EngineError`], whose HTTP status is the engine's (`EngineError::status`) and body the
//! emulator's http layer's.
//!
//! # Choices where the contract is silent
//!
//! - **Models**: tables of the `main` schema; `sqlite_*` tables, views and virtual tables are
//!   not models. A table without a single-column primary key uses its `rowid` as key, shown
//!   as a read-only integer field `rowid` (or `_rowid_`/`oid` when a column already has that
//!   name) first in every record. `WITHOUT ROWID` tables with a composite key are skipped.
//! - **Field kinds** (`FieldKind`): from the declared type, see there; they check writes.
//! - **The engine's view of a column** ([`types`](svc_engine::types)): how the platform's data engine (jet-bridge
//!   over SQLAlchemy 1.4) reflects the declared type, reads stored values and writes them in
//!   records. Records are written exactly as the engine writes them: `REAL`, `NUMERIC`,
//!   `DECIMAL(p, s)`, `DATE`, untyped and `BLOB` columns as text (`"57.0"`,
//!   `"88378.0000000000"`), `DATETIME` in ISO form with `T`, integers, `FLOAT` and booleans as
//!   JSON numbers and booleans (docs/contract.md 5.1 has the table).
//! - **Filters, search and order** (`svc_engine`'s `filter`): built as the engine builds them, SQL and bound
//!   values alike: per-type lookup families, the first value of a repeated key (`in`: the
//!   list), an empty value is no filter, `NOT (...)` for `exclude__`, `LIKE` wildcards, Python's
//!   readings of numbers, booleans and dates. What the engine silently ignores (an unknown field
//!   or lookup) is a `400` unless the selection is lenient; where the engine fails (500), strict
//!   mode answers `400` and lenient mode [`EngineError::EngineFails`].
//! - **Ignored parameters**: `page`, `_per_page`, `_no_pagination`, `_order_by`, `_search` and
//!   `draft` are never filters, whatever fields the model has (svc-model's
//!   [`RESERVED_PARAMS`](svc_model::records::RESERVED_PARAMS)); any other parameter starting
//!   with `_` is ignored unless the model has a field of that name. The key grammar is
//!   svc-model's ([`svc_model::records::wire`]).
//! - **Pagination** (read by the http layer, as the data engine reads it): `page` from 1 (below
//!   1, and text that is not an integer, read as 1); a page past the last one lists no records,
//!   with the count of all. The `next`/`previous` links (written by the http layer) repeat the
//!   query in order, with `page` moved to the end and left out for page 1; a full last page also
//!   links to a next page. Any non-empty `_no_pagination` turns paging off; `_per_page` is
//!   clamped to 1..=10000 (text reads as 25).
//! - **Ordering**: `_order_by` fields (names as given, `-` for descending), then the primary key
//!   descending unless named; a one-character value lists nothing. NULLs sort first ascending
//!   (SQLite's rule).
//! - **Search**: number columns by the equality of their text, text columns by substring;
//!   dates, booleans, untyped and binary columns are not searched.
//! - **Record writes** (`Resource::create_body`, `update_body`, `retrieve_selected`,
//!   `delete_selected`, which the records slice calls): as the engine makes them.
//!   Values go through the engine's serializer field of the column (Python's `int()`,
//!   `float()`, boolean words, `str()`), then SQLAlchemy's bind processors: date-times are
//!   stored as `YYYY-MM-DD HH:MM:SS.ffffff`, a non-null `DATE` or `BLOB` value is the engine's
//!   `400`. No column is required (a missing NOT NULL column is SQLite's `400`); `PUT` is
//!   partial like `PATCH`; an update writes the primary key too (the record moves). A key in
//!   the URL is read by its column's field (`abc` on an integer key is a `400`), and the list
//!   filters of the query apply to the one record. Foreign keys are not enforced; a delete sets
//!   nullable references to NULL and deletes rows that refer through NOT NULL columns, as the
//!   engine's ORM does.
//! - **Strict writes** ([`Resource::create`], [`Resource::update`], [`Resource::delete`], in
//!   `tools`): the built-in tools resource (users, teams) keeps strict JSON types and enforced
//!   foreign keys; its errors are field errors.
//! - **Aggregate and group**: as the engine answers them (`aggregate` says how).
//! - **Concurrency**: a database file runs in WAL mode with one writer and four read-only
//!   reader connections, which map the file into memory (a list reads its count and page in
//!   one snapshot); an in-memory database uses a single connection behind a mutex.
//! - **Paging cost** (`walks`, `records`): counts, and the sort key at the end of each page, are
//!   remembered until the database changes (the emulator's writes, or another connection's,
//!   seen through `PRAGMA data_version`), so a walk through the pages seeks past the previous
//!   page instead of stepping over every row before it. The answers are `OFFSET`'s. `PRAGMA foreign_keys` is off, as in the
//!   engine (the strict writes turn it on while they run).
//! - **Seeding**: [`Resource::seeded`] with a path runs the seed only when the database has no
//!   table yet.
//! - **SQL** ([`Backend::sql`]): one statement that SQLite itself reports read-only, run on a
//!   connection that cannot write. At most
//!   [`MAX_SQL_ROWS`](svc_engine::MAX_SQL_ROWS) rows; interrupted after [`SQL_TIME_LIMIT`](svc_engine::SQL_TIME_LIMIT).
//!
//! # The resource: a database, its connections, its operations
//!
//! One connected resource ([`Resource`]): an SQLite database, its connections and its schema,
//! with the list, retrieve, create, update and delete operations. Records come back as JSON
//! bytes, written straight from the rows.
//!
//! ## Where the database lives
//!
//! Where a SQLite resource's database lives, and opening it (`open_file`, `open_tools`):
//!
//! - `database` given: that file (seeded with `seed_sql` when it has no tables yet, else opened
//!   as it is: an existing database's tables become models);
//! - no `database`, emulator data on disk: `<data file>.<project>.<resource>.sqlite`, seeded,
//!   readable by its owner only like the data file (see `svc_emulator_core::private`); a `database` file
//!   the emulator creates is created so too, an existing one is left as it is;
//! - everything in memory: an in-memory database, seeded.
//!
//! The built-in tools resource `__svc_app__` of every project lives beside the data file as
//! `<data file>.<project>.__svc_app__.sqlite`, or in memory, seeded the first time.
//!
//! ## Saved copies
//!
//! A copy of a SQLite resource's database kept in memory, and putting it back: SQLite's online
//! backup, both ways, which copies the database's pages as they are (no SQL runs). The copy
//! holds the whole database: every table, `sqlite_sequence` (the next `AUTOINCREMENT` keys)
//! and the schema. Only the resource that saved a copy puts it back.

//!
//! **An implementation crate of [svc-emulator](https://docs.rs/svc-emulator)**: its catalog
//! opens a [`Resource`] for each resource on SQLite, and nothing else names this crate. Its API
//! follows the emulator's and may change in any release. It reaches no HTTP layer: Cargo holds
//! that, since it depends on none.
//!
//! ```compile_fail
//! use axum::Router;
//! ```
//!
//! ```compile_fail
//! use svc_emulator::Emulator;
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub(crate) mod aggregate;
mod backend;
pub use backend::TOOLS_SEED_SQL;
pub(crate) mod dialect;
pub(crate) mod driver;
mod records;
pub(crate) mod schema;
mod types;

#[cfg(test)]
mod tests;

use crate::backend::{Attempt, ListRun, Mode, Route, RunMemory, route_retrieve};
use crate::driver::{copy, first_row, script, sent, value_ref};
use crate::records::{Budget, ListMemo, Sqlite, unreadable};
use crate::schema::load_schema;
use crate::types::{bind, engine_error, stored, write_field_value};
use rusqlite::config::DbConfig;
use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Duration;
use svc_emulator_core::backend::Backend;
use svc_emulator_core::backend::operation::{Delete, List, Operation, Reload, Retrieve};

#[cfg(test)]
use svc_emulator_core::backend::{
    Update,
    operation::{Change, Create},
};
use svc_emulator_core::blocking::on_blocking_pool;
use svc_emulator_core::dialect::bind::{Bind, Binds};
use svc_emulator_core::flow;
use svc_emulator_core::flow::driver::DriverRow;
use svc_emulator_core::flow::export::SavedData;
use svc_emulator_core::flow::references::run_now;
use svc_emulator_core::flow::state::State;
use svc_emulator_core::flow::write::read_back_sql;
use svc_emulator_core::private;
use svc_engine::body::non_field;
use svc_engine::error::EngineError;
use svc_engine::field_input::{InputField, Internal, to_internal};
use svc_engine::list::{ListSpec, Listing, Selection};
use svc_engine::python::json::PyJson;
use svc_engine::records::Origin;
use svc_engine::records::record_json;
use svc_engine::table::Table;
use svc_engine::types::Reflected;
use svc_model::users::TOOLS_RESOURCE;
use tokio::sync::Notify;

#[cfg(test)]
pub(crate) use schema::FieldKind;
pub(crate) use schema::{Model, Schema};

/// Reader connections opened next to the writer for a database file in WAL mode.
const READERS: usize = 4;
/// How long a connection waits for a lock held by another one.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// Bytes of a database file a reader maps into memory instead of reading it page by page
/// through its own cache: counts and deep pages of a large table walk the file through the
/// operating system's shared page cache, not 4 KiB `pread`s into a 2 MB cache per reader.
const READER_MMAP_BYTES: i64 = 1 << 30;
/// Prepared statements each connection keeps (lists, counts, seeks, writes).
const STATEMENT_CACHE: usize = 64;

/// A connection, and the `PRAGMA data_version` it saw at its last list (see [`ListMemo`]).
struct Conn {
    conn: Connection,
    seen_version: Option<i64>,
}

impl Conn {
    fn new(conn: Connection) -> Mutex<Self> {
        Mutex::new(Conn {
            conn,
            seen_version: None,
        })
    }
}

/// A connection inside one read snapshot, on a database file with readers (`BEGIN`: a list's
/// count and page see the same rows), rolled back when it ends, however it ends.
struct Snapshot<'c>(&'c mut Connection);

impl<'c> Snapshot<'c> {
    /// A snapshot on `conn` when `begin` (a reader of a database file), else the connection as
    /// it is (the single connection of an in-memory database, which nothing else writes
    /// meanwhile).
    fn begin(conn: &'c mut Connection, begin: bool) -> rusqlite::Result<Self> {
        if begin {
            script(conn, "BEGIN")?;
        }
        Ok(Snapshot(conn))
    }
}

impl std::ops::Deref for Snapshot<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.0
    }
}

impl std::ops::DerefMut for Snapshot<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.0
    }
}

impl Drop for Snapshot<'_> {
    fn drop(&mut self) {
        if !self.0.is_autocommit() {
            // A read has nothing to keep; a connection that cannot roll back fails its next
            // statement.
            let _ = script(self.0, "ROLLBACK");
        }
    }
}

/// One connected resource: an SQLite database whose tables are models.
///
/// Safe to share between threads (`Arc<Resource>`). A database file runs in WAL mode with one
/// writer connection and a few read-only reader connections; an in-memory database (or a file
/// where WAL cannot be enabled) uses a single connection. `PRAGMA foreign_keys` is off, as on the data engine.
pub struct Resource {
    path: Option<PathBuf>,
    writer: Mutex<Conn>,
    readers: Vec<Mutex<Conn>>,
    next_reader: AtomicUsize,
    /// Its models and walks, as the core keeps them.
    state: State<Model, Bind>,
    memo: ListMemo,
    /// How long recent list requests took, for where the next one runs (`sqlite::backend`).
    runs: RunMemory,
    /// Woken whenever a connection is let go: async requests that found none free wait here
    /// instead of going to the blocking pool (`sqlite::backend`).
    freed: Notify,
    /// Write values the data engine cannot read as they are stored, instead of failing where
    /// the engine fails: the built-in tools resource, whose contract is the emulator's own
    /// (it stores RFC 3339 date-times).
    shows_stored_values: bool,
    /// The mark of the copies of its database it saves (`sqlite`).
    pub(crate) origin: Origin,
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resource")
            .field("path", &self.path)
            .field("readers", &self.readers.len())
            .field("models", &self.model_names())
            .finish()
    }
}

/// A held connection. Letting it go wakes the requests waiting for one ([`Resource::freed`]):
/// the fields drop in order, so the lock is released before the wake-up.
struct ConnGuard<'a> {
    guard: MutexGuard<'a, Conn>,
    _wake: WakeOnDrop<'a>,
}

struct WakeOnDrop<'a>(&'a Notify);

impl Drop for WakeOnDrop<'_> {
    fn drop(&mut self) {
        self.0.notify_waiters();
    }
}

impl std::ops::Deref for ConnGuard<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.guard
    }
}

impl std::ops::DerefMut for ConnGuard<'_> {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.guard
    }
}

impl Resource {
    /// Waits for the lock of connection `m` (a poisoned lock is taken: the connection itself is
    /// still sound, and one panicked request must not stop the resource).
    fn lock<'a>(&'a self, m: &'a Mutex<Conn>) -> ConnGuard<'a> {
        ConnGuard {
            guard: m.lock().unwrap_or_else(|e| e.into_inner()),
            _wake: WakeOnDrop(&self.freed),
        }
    }

    /// The lock of connection `m` if it is free now (a poisoned lock is free: see
    /// [`lock`](Self::lock)).
    fn try_lock<'a>(&'a self, m: &'a Mutex<Conn>) -> Option<ConnGuard<'a>> {
        let guard = match m.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        Some(ConnGuard {
            guard,
            _wake: WakeOnDrop(&self.freed),
        })
    }

    /// Woken whenever a connection is let go: a request that found none free
    /// ([`Attempt::Busy`]) takes `freed().notified()` before its attempt and awaits it after.
    pub(crate) fn freed(&self) -> &Notify {
        &self.freed
    }
}

/// The models of a schema just read.
fn state_of(schema: Schema) -> State<Model, Bind> {
    let state = State::default();
    state.models().replace(schema.models);
    state
}

fn open_error(path: &Path, e: rusqlite::Error) -> EngineError {
    EngineError::Internal(format!("cannot open database {}: {e}", path.display()))
}

fn configure(conn: &Connection) -> Result<(), EngineError> {
    conn.busy_timeout(BUSY_TIMEOUT).map_err(engine_error)?;
    // The data engine's SQLite connections never turn foreign keys on: a delete of a
    // referenced row and a dangling reference are both accepted (its ORM handles references,
    // see `Resource::delete_selected`). Off explicitly, whatever SQLite was built with.
    script(conn, "PRAGMA foreign_keys = OFF;").map_err(engine_error)?;
    // The query planner stability guarantee: a statement keeps the plan it was prepared with,
    // whatever values are bound. Without it, SQLite marks a bound `LIMIT ?`/`OFFSET ?` as
    // "re-prepare when this binding changes", and the statement cache clears every binding
    // when a statement goes back to it, so every list re-parsed and re-planned its SELECT.
    // Plans, hence results, do not depend on bound values anyway: only speed could.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map_err(engine_error)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    crate::aggregate::register_sqlite340(conn).map_err(engine_error)?;
    Ok(())
}

impl Resource {
    /// Opens an existing database file; its tables become models. The file must exist. The
    /// database is switched to WAL mode (a persistent setting of the file).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, EngineError> {
        let path = path.as_ref();
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e))?;
        Self::from_file_connection(path, conn)
    }

    /// Creates a database from seed SQL: in memory when `path` is `None`, else at `path`
    /// (created if missing). The seed runs only when the database has no table yet, so a file
    /// seeded once keeps its data when opened again this way.
    pub fn seeded(path: Option<&Path>, seed_sql: &str) -> Result<Self, EngineError> {
        match path {
            None => {
                let mut conn = Connection::open_in_memory().map_err(engine_error)?;
                configure(&conn)?;
                crate::seed_in_memory(&mut conn, seed_sql)?;
                let schema = load_schema(&conn)?;
                Ok(Self::of(None, conn, Vec::new(), schema))
            }
            Some(path) => {
                let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let conn =
                    Connection::open_with_flags(path, flags).map_err(|e| open_error(path, e))?;
                configure(&conn)?;
                let tables = first_row(
                    &conn,
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'table'",
                    [],
                    |r| r.get::<_, i64>(0),
                );
                if tables.map_err(engine_error)? == Some(0) {
                    script(&conn, seed_sql).map_err(engine_error)?;
                }
                Self::from_file_connection(path, conn)
            }
        }
    }

    /// An in-memory database created from seed SQL.
    pub fn in_memory(seed_sql: &str) -> Result<Self, EngineError> {
        Self::seeded(None, seed_sql)
    }

    fn from_file_connection(path: &Path, conn: Connection) -> Result<Self, EngineError> {
        configure(&conn)?;
        let mode = first_row(&conn, "PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| open_error(path, e))?
            .unwrap_or_else(String::new);
        script(&conn, "PRAGMA synchronous = NORMAL;").map_err(engine_error)?;
        let schema = load_schema(&conn).map_err(|e| match e {
            EngineError::Internal(m) => {
                EngineError::Internal(format!("cannot read database {}: {m}", path.display()))
            }
            other => other,
        })?;
        let mut readers = Vec::new();
        if mode.eq_ignore_ascii_case("wal") {
            for _ in 0..READERS {
                let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                match Connection::open_with_flags(path, flags) {
                    Ok(r) => {
                        configure(&r)?;
                        // A mapping is only a speed-up: SQLite reads through the cache when
                        // it cannot map.
                        let mmap = format!("PRAGMA mmap_size = {READER_MMAP_BYTES}");
                        let _ = first_row(&r, &mmap, [], |row| row.get::<_, i64>(0));
                        readers.push(Conn::new(r));
                    }
                    Err(_) => break,
                }
            }
        }
        Ok(Self::of(Some(path.to_owned()), conn, readers, schema))
    }

    /// A resource over its writer `conn` and `readers`, with nothing remembered yet.
    fn of(
        path: Option<PathBuf>,
        conn: Connection,
        readers: Vec<Mutex<Conn>>,
        schema: Schema,
    ) -> Self {
        Self {
            path,
            writer: Conn::new(conn),
            readers,
            next_reader: AtomicUsize::new(0),
            state: state_of(schema),
            memo: ListMemo::default(),
            runs: RunMemory::default(),
            freed: Notify::new(),
            shows_stored_values: false,
            origin: Origin::unique(),
        }
    }

    /// This resource writes every stored value, as stored where the data engine could not read
    /// it, instead of failing on the record as the engine does (for the built-in tools
    /// resource, whose contract is the emulator's own).
    pub(crate) fn showing_stored_values(mut self) -> Self {
        self.shows_stored_values = true;
        self
    }

    /// The database file, `None` in memory.
    #[cfg(test)]
    pub(crate) fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Re-reads the schema: tables and columns added since become models and fields, dropped
    /// ones disappear. Data is not touched.
    pub fn reload(&self) -> Result<(), EngineError> {
        self.run_here(&Reload)
    }

    /// The models (as last read: start or reload) and walks, as the core keeps them.
    pub(crate) fn state(&self) -> &State<Model, Bind> {
        &self.state
    }

    /// The names of every model, sorted.
    pub fn model_names(&self) -> Vec<String> {
        self.state.models().names()
    }

    /// The model named `name`, if the schema has it.
    pub fn model(&self, name: &str) -> Option<Arc<Model>> {
        self.state.models().get(name).ok()
    }

    /// The model named `name`; the engine's `404` when there is none.
    pub(crate) fn model_or_404(&self, name: &str) -> Result<Arc<Model>, EngineError> {
        self.model(name)
            .ok_or_else(|| EngineError::ModelNotFound(name.to_owned()))
    }

    /// Runs `f` on a reader connection: one of the read-only readers of a database file, or the
    /// single (writable) connection of an in-memory database. See
    /// [`with_read_only`](Self::with_read_only) for a guarantee.
    #[cfg(test)]
    pub(crate) fn with_reader<R>(&self, f: impl FnOnce(&mut Connection) -> R) -> R {
        let out = self.read(|c| f(&mut c.conn));
        if self.readers.is_empty() {
            // The single connection can write: what `f` did may have changed the data.
            self.memo.bump();
        }
        out
    }

    /// Runs `f` on a reader (see [`with_reader`](Self::with_reader)), for reads only.
    fn read<R>(&self, f: impl FnOnce(&mut Conn) -> R) -> R {
        if self.readers.is_empty() {
            return f(&mut self.lock(&self.writer));
        }
        let n = self.readers.len();
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed) % n;
        match self.free_reader(start) {
            Some(mut g) => f(&mut g),
            None => f(&mut self.lock(&self.readers[start])),
        }
    }

    /// Runs `f` on a reader as [`read`](Self::read) does, but only if one is free now: `None`
    /// (and `f` not run) when every reader (or the single connection) is busy. For work on an
    /// async worker, which must not wait.
    fn try_read<R>(&self, f: impl FnOnce(&mut Conn) -> R) -> Option<R> {
        let mut g = if self.readers.is_empty() {
            self.try_lock(&self.writer)?
        } else {
            let n = self.readers.len();
            self.free_reader(self.next_reader.fetch_add(1, Ordering::Relaxed) % n)?
        };
        Some(f(&mut g))
    }

    /// The first reader free now, from `start` on.
    fn free_reader(&self, start: usize) -> Option<ConnGuard<'_>> {
        let n = self.readers.len();
        (0..n).find_map(|i| self.try_lock(&self.readers[(start + i) % n]))
    }

    /// Runs `f` on a reader: waiting for one on the pool, only if one is free inline.
    fn read_as<R>(&self, mode: Mode, f: impl FnOnce(&mut Conn) -> R) -> Option<R> {
        match mode {
            Mode::Pool => Some(self.read(f)),
            Mode::Inline { .. } => self.try_read(f),
        }
    }

    /// Runs `f` on a reader connection for reads only: aggregates and groups.
    pub(crate) fn with_read<R>(&self, f: impl FnOnce(&mut Connection) -> R) -> R {
        self.read(|c| f(&mut c.conn))
    }

    /// Runs `f` on a connection that cannot change the database: a reader opened read-only for
    /// database files; for an in-memory database its single connection with
    /// `PRAGMA query_only` set for the duration of `f`. For the SQL endpoint (which should also
    /// check `Statement::readonly`).
    pub fn with_read_only<R>(&self, f: impl FnOnce(&mut Connection) -> R) -> R {
        if !self.readers.is_empty() {
            return self.with_read(f);
        }
        let mut w = self.lock(&self.writer);
        let conn = &mut w.conn;
        let on = script(conn, "PRAGMA query_only = 1;");
        let out = f(conn);
        if on.is_ok() {
            let _ = script(conn, "PRAGMA query_only = 0;");
        }
        out
    }

    /// Runs `f` on the writer connection. Callers that change the schema must
    /// [`reload`](Self::reload) afterwards.
    pub fn with_writer<R>(&self, f: impl FnOnce(&mut Connection) -> R) -> R {
        let mut w = self.lock(&self.writer);
        let out = f(&mut w.conn);
        // Before the lock goes: a list on the single connection of an in-memory database
        // (which takes the same lock) sees the new generation.
        self.memo.bump();
        out
    }

    /// Lists the records of `model` that `spec` selects, in its order: one page with the count
    /// of all matching records, or with `no_pagination` every matching record (at most
    /// [`MAX_PER_PAGE`](svc_engine::MAX_PER_PAGE)). A page past the last one lists no
    /// records, with the count of all.
    ///
    /// Paging costs what the page costs, not what the table holds: the count of a selection
    /// and the sort key at the end of each page are remembered for as long as the database
    /// does not change (see `sqlite::records`), so a walk through the pages in order seeks past
    /// the previous page instead of stepping over every row before it. The answers are those
    /// of `LIMIT ? OFFSET ?` on the same snapshot.
    pub fn list(&self, model: &str, spec: &ListSpec) -> Result<Listing, EngineError> {
        match self.list_as(model, spec, Mode::Pool)? {
            Some(run) => Ok(run.listing),
            // A list that may wait always runs.
            None => Err(EngineError::Internal(
                "a list on the blocking pool gave up".to_owned(),
            )),
        }
    }

    /// [`list`](Self::list), run as `mode` says: inline, `None` when it gave up (a busy
    /// connection, or more work than its timed run did; see `sqlite::backend`), with the rows
    /// its page stepped over.
    pub(crate) fn list_as(
        &self,
        model: &str,
        spec: &ListSpec,
        mode: Mode,
    ) -> Result<Option<ListRun<Listing>>, EngineError> {
        let list = List {
            model: model.to_owned(),
            spec: spec.clone(),
        };
        self.list_attempt(&list, mode).map(Attempt::done)
    }

    /// A list operation (`op`: the core's [`List`]) run as `mode` says, saying why an inline
    /// run did not happen: no connection was free ([`Attempt::Busy`]), or it would have done
    /// more than its timed run ([`Attempt::GaveUp`]).
    pub(crate) fn list_attempt<O: Operation>(
        &self,
        op: &O,
        mode: Mode,
    ) -> Result<Attempt<ListRun<O::Out>>, EngineError> {
        let max_skip = match mode {
            Mode::Inline { max_skip } => Some(max_skip),
            Mode::Pool => None,
        };
        let ran = self.read_as(
            mode,
            |reader| -> Result<Option<ListRun<O::Out>>, EngineError> {
                // Read before the snapshot begins: see `sqlite::records` on validity.
                let generation = self.memo.generation();
                let Conn { conn, seen_version } = reader;
                let mut snapshot =
                    Snapshot::begin(conn, !self.readers.is_empty()).map_err(engine_error)?;
                // The first statement of the snapshot: it begins the read and says whether any
                // other connection committed since this one last looked.
                let version = first_row(&snapshot, "PRAGMA data_version", [], |r| r.get(0));
                let version: i64 = version.map_err(engine_error)?.unwrap_or_default();
                let ticket = self.memo.ticket(generation, seen_version, version);
                if max_skip.is_some() && !ticket.usable() {
                    // Another connection committed since this one last looked: the data is not
                    // what the run this one was chosen by saw.
                    return Ok(None);
                }
                let db = Sqlite::reading(self, &mut snapshot, Budget::new(ticket, max_skip));
                match run_now(op.run(&db.served())) {
                    Ok(listing) => Ok(Some(ListRun {
                        skipped: db.budget.skipped(),
                        listing,
                    })),
                    Err(_) if db.budget.gave_up() => Ok(None),
                    Err(e) => Err(e),
                }
            },
        );
        Ok(match ran.transpose()? {
            None => Attempt::Busy,
            Some(None) => Attempt::GaveUp,
            Some(Some(run)) => Attempt::Done(run),
        })
    }

    /// What lists remember between requests (`sqlite::records`).
    pub(crate) fn memo(&self) -> &ListMemo {
        &self.memo
    }

    /// Whether records show values the engine cannot read as they are stored (see
    /// [`showing_stored_values`](Self::showing_stored_values)).
    pub(crate) fn shows_stored_values(&self) -> bool {
        self.shows_stored_values
    }

    /// How many counts the list memo answered and how many pages began at an anchor.
    #[cfg(test)]
    pub(crate) fn memo_hits(&self) -> (u64, u64) {
        self.memo.hits()
    }

    /// The record of `model` whose primary key is `pk`, as JSON bytes (see
    /// [`retrieve_selected`](Self::retrieve_selected); no list filters).
    pub fn retrieve(&self, model: &str, pk: &str) -> Result<Vec<u8>, EngineError> {
        self.retrieve_selected(model, pk, &Selection::default())
    }

    /// The record of `model` whose primary key is `pk` and that `selection` (the list filters of
    /// the query string, which the data engine applies to one record too) selects, as JSON
    /// bytes.
    ///
    /// The key text is read by the key column's serializer field, as the engine reads it: an
    /// integer key that is not an integer is a `400` (`not a valid integer`), an unknown
    /// record a `404`.
    pub fn retrieve_selected(
        &self,
        model: &str,
        pk: &str,
        selection: &Selection,
    ) -> Result<Vec<u8>, EngineError> {
        match self.retrieve_as(model, pk, selection, Mode::Pool)? {
            Some(bytes) => Ok(bytes),
            // A retrieve that may wait always runs.
            None => Err(EngineError::Internal(
                "a retrieve on the blocking pool gave up".to_owned(),
            )),
        }
    }

    /// [`retrieve_selected`](Self::retrieve_selected), run as `mode` says: inline, `None` when
    /// no connection is free or the key is not one SQLite finds in one lookup (see
    /// `sqlite::backend`).
    pub(crate) fn retrieve_as(
        &self,
        model: &str,
        pk: &str,
        selection: &Selection,
        mode: Mode,
    ) -> Result<Option<Vec<u8>>, EngineError> {
        let retrieve = Retrieve {
            model: model.to_owned(),
            pk: pk.to_owned(),
            selection: selection.clone(),
        };
        self.retrieve_attempt(&retrieve, mode).map(Attempt::done)
    }

    /// A retrieve operation (`op`: the core's [`Retrieve`]) run as `mode` says, saying why an
    /// inline run did not happen: no connection was free ([`Attempt::Busy`]), or the key is
    /// not one SQLite finds in one lookup ([`Attempt::GaveUp`]).
    pub(crate) fn retrieve_attempt<O: Operation>(
        &self,
        op: &O,
        mode: Mode,
    ) -> Result<Attempt<O::Out>, EngineError> {
        if mode != Mode::Pool {
            let model = self.model_or_404(op.retrieved().unwrap_or_default())?;
            if route_retrieve(&model) == Route::Pool {
                return Ok(Attempt::GaveUp);
            }
        }
        let ran = self.read_as(mode, |reader| -> Result<O::Out, EngineError> {
            let db = Sqlite::new(self, &mut reader.conn);
            run_now(op.run(&db.served()))
        });
        Ok(match ran.transpose()? {
            None => Attempt::Busy,
            Some(bytes) => Attempt::Done(bytes),
        })
    }

    /// The generation of the database's data (see `sqlite::records`): read before a list is
    /// routed, to tag its run.
    pub(crate) fn generation(&self) -> u64 {
        self.memo.generation()
    }

    /// How long recent list requests took (see `sqlite::backend`).
    pub(crate) fn runs(&self) -> &RunMemory {
        &self.runs
    }

    /// Creates a record from a body as the data engine does, and returns the stored record as
    /// JSON bytes (`201`).
    ///
    /// Every column is optional (SQLAlchemy reflects every column as "autoincrement: auto", so
    /// the engine's serializer requires none); unknown keys are ignored; each value is read by
    /// its column's serializer field and written through SQLAlchemy's type (see
    /// [`to_internal`] and [`bind`]): `"3"` is 3 for an integer, `"no"` false for a boolean,
    /// `null` false for a boolean, a date-time is stored as `YYYY-MM-DD HH:MM:SS.ffffff`, and
    /// any value for a `DATE` column is a `400`. A `null` for a column with a default leaves
    /// the default. A primary key that is false in Python (`0`, `""`, `null`) counts as not
    /// given; only an `INTEGER PRIMARY KEY` is assigned by the database. Database errors are
    /// `400`s (a unique violation names its column).
    #[cfg(test)]
    pub(crate) fn create_body(
        &self,
        model: &str,
        body: &PyJson,
        lenient: bool,
    ) -> Result<Vec<u8>, EngineError> {
        let create = Create {
            model: model.to_owned(),
            body: body.clone(),
            lenient,
        };
        self.run_here(&create)
    }

    /// Creates a record from each body in turn, strictly, each as
    /// [`create_body`](Self::create_body) creates it, all in one transaction of the writer
    /// connection (`flow::write::create_all`): the number created, or the index of the first
    /// body refused and why, with nothing created.
    pub(crate) fn create_bodies(
        &self,
        model: &str,
        bodies: &[PyJson],
    ) -> Result<usize, (usize, EngineError)> {
        self.with_writer(|conn| {
            let db = Sqlite::new(self, conn);
            let created =
                run_now(async { Ok(flow::write::create_all(&db.served(), model, bodies).await) });
            created.unwrap_or_else(|e| Err((0, e)))
        })
    }

    /// Updates the record `pk` (which `selection` must select) from a body, as the data
    /// engine's `PATCH` and `PUT` both do (no column is required, so `PUT` is partial too), and
    /// returns the whole record as stored.
    ///
    /// `404` when there is no such record, checked before the body. Values are read as in
    /// [`create_body`](Self::create_body); only the columns whose value changes (Python's
    /// `==` against the stored value) are written, the primary key included (the record then
    /// moves to the new key), generated columns included (a changed value is SQLite's `400`).
    #[cfg(test)]
    pub(crate) fn update_body(
        &self,
        model: &str,
        pk: &str,
        body: &PyJson,
        selection: &Selection,
    ) -> Result<Vec<u8>, EngineError> {
        // Partial or not: no SQLite column is required (`REQUIRES_NO_COLUMN`).
        let change = Change(Update {
            model: model.to_owned(),
            pk: pk.to_owned(),
            body: body.clone(),
            selection: selection.clone(),
            partial: false,
        });
        self.run_here(&change)
    }

    /// Deletes the record `pk` (which `selection` must select), as the data engine's ORM does.
    ///
    /// The engine's SQLite runs without foreign key enforcement, so nothing blocks a delete;
    /// its ORM (SQLAlchemy automap) follows every foreign key that refers to the table: rows
    /// referring through nullable columns get NULL there (unless the key says `ON DELETE SET
    /// NULL`), rows referring through a NOT NULL column are deleted too, recursively (unless
    /// the key says `ON DELETE CASCADE`). `404` when there is no such record.
    pub fn delete_selected(
        &self,
        model: &str,
        pk: &str,
        selection: &Selection,
    ) -> Result<(), EngineError> {
        let delete = Delete {
            model: model.to_owned(),
            pk: pk.to_owned(),
            selection: selection.clone(),
        };
        self.run_here(&delete)
    }
}

/// A database error of a write, as the engine answers it: every SQLAlchemy error is a `400`
/// with SQLite's message; a unique violation names its column (the engine's pattern takes
/// the text after the last `.`).
pub(crate) fn db_error(model: &Model, e: rusqlite::Error) -> EngineError {
    let rusqlite::Error::SqliteFailure(err, msg) = &e else {
        return engine_error(e);
    };
    let msg = msg.clone().unwrap_or_else(|| err.to_string());
    if let Some(at) = msg.to_ascii_lowercase().find("unique constraint failed: ") {
        let list = &msg[at + "unique constraint failed: ".len()..];
        if let Some((_, column)) = list.rsplit_once('.')
            && model.field(column).is_some()
        {
            return EngineError::duplicate_value(&msg, column);
        }
    }
    non_field(msg)
}

/// The key text of a record URL as the engine reads it: through the key column's serializer
/// field (`IntegerField` for an integer key: `abc` is `400 not a valid integer`), then bound
/// as SQLAlchemy binds a value compared with the column: by the value's own type (so text
/// compared with a `REAL` or `DATE` key is text, which SQLite's affinity may convert).
pub(crate) fn lookup_value(model: &Model, raw: &str) -> Result<Value, EngineError> {
    let pk = model.pk_field();
    let internal =
        to_internal(InputField::of(pk.kind.ty), &PyJson::Str(raw.to_owned())).map_err(non_field)?;
    let by_type = match &internal {
        Internal::DateTime(_) => Reflected::DateTime,
        Internal::Bool(_) => Reflected::Boolean,
        Internal::Json(PyJson::List(_) | PyJson::Dict(_)) => {
            // The engine fails binding it (500) ([decision: stricter]).
            return Err(non_field(format!(
                "{raw:?} cannot be a key of {}: a JSON key is looked up by a number or a \
                 string, not an array or an object",
                model.name
            ))
            .by_design());
        }
        _ => Reflected::Untyped,
    };
    let internal = match internal {
        Internal::Json(PyJson::Int(i)) => Internal::Int(i),
        Internal::Json(PyJson::Float(f)) => Internal::Float(f),
        Internal::Json(PyJson::Bool(b)) => Internal::Bool(b),
        Internal::Json(PyJson::Str(s)) => Internal::Str(s),
        Internal::Json(PyJson::None) => Internal::None,
        other => other,
    };
    // An integer beyond 64 bits: Python's sqlite3 overflows (the engine answers 500)
    // ([decision: stricter]).
    bind(by_type, &internal).map_err(|m| {
        non_field(format!("{raw:?} cannot be a key of {}: {m}", model.name)).by_design()
    })
}

/// The first record whose identity columns hold `identity`, as SQLAlchemy loads an instance
/// by its identity (a NULL part compared with `IS NULL`), written as the engine writes it.
pub(crate) fn get_by_identity(
    conn: &Connection,
    model: &Model,
    identity: &[Bind],
) -> Result<Option<Vec<u8>>, EngineError> {
    let mut conds = Vec::with_capacity(identity.len());
    let mut binds = Binds::default();
    for (&i, v) in model.identity.iter().zip(identity) {
        if *v == Bind::Null {
            conds.push(format!("{} IS NULL", model.fields[i].sql));
        } else {
            conds.push(format!("{} = ?", model.fields[i].sql));
            binds.push(v.clone());
        }
    }
    let sql = read_back_sql(model, &conds.join(" AND "));
    let record = first_row(conn, &sql, sent(&binds), |row| {
        Ok(record_json(model, &DriverRow::<Sqlite<'_>>(row), 0))
    });
    record.map_err(engine_error)
}

impl Resource {
    /// `Ok` when the engine can read every value of a loaded record (or this resource shows
    /// stored values), else [`unreadable`].
    pub(crate) fn readable(
        &self,
        model: &Model,
        row: &[Bind],
        lenient: bool,
    ) -> Result<(), EngineError> {
        if self.shows_stored_values {
            return Ok(());
        }
        check_readable(model, row, lenient)
    }
}

/// `Ok` when the engine can read every value of a loaded record, else [`unreadable`].
fn check_readable(model: &Model, row: &[Bind], lenient: bool) -> Result<(), EngineError> {
    let mut scratch = Vec::new();
    for (i, (f, v)) in model.fields.iter().zip(row).enumerate() {
        scratch.clear();
        if !write_field_value(&mut scratch, f, stored(value_ref(v))) {
            return Err(unreadable(model, i, lenient));
        }
    }
    Ok(())
}

/// The emulator's demo resource `shop`, in memory: its seed is svc-emulator's (`demo/shop.sql`),
/// a fixture of these tests.
#[cfg(test)]
pub(crate) fn demo_resource() -> Result<Resource, EngineError> {
    Resource::in_memory(DEMO_SEED_SQL)
}

/// The emulator's demo seed, read by the tests.
#[cfg(test)]
pub(crate) const DEMO_SEED_SQL: &str = include_str!("../../svc-emulator-state/src/demo/shop.sql");

/// Opens the SQLite database of resource `resource` of `project` (off the async threads).
pub async fn open_file(
    project: &str,
    resource: &str,
    seed_sql: Option<&str>,
    database: Option<&Path>,
    data_path: Option<&Path>,
) -> Result<Arc<dyn Backend>, String> {
    let (project, resource) = (project.to_owned(), resource.to_owned());
    let seed_sql = seed_sql.map(str::to_owned);
    let database = database.map(Path::to_owned);
    let data_path = data_path.map(Path::to_owned);
    let opened = on_blocking_pool(move || {
        open_one(
            &project,
            &resource,
            seed_sql.as_deref(),
            database.as_deref(),
            data_path.as_deref(),
        )
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(opened))
}

/// Opens (or creates and seeds) the tools database of `project`.
pub async fn open_tools(
    project: &str,
    data_path: Option<&Path>,
) -> Result<Arc<dyn Backend>, String> {
    let project = project.to_owned();
    let data_path = data_path.map(Path::to_owned);
    let opened = on_blocking_pool(move || {
        match data_path {
            Some(data) => seeded_beside(&beside(&data, &project, TOOLS_RESOURCE), TOOLS_SEED_SQL),
            None => Resource::in_memory(TOOLS_SEED_SQL),
        }
        // Its date-times are RFC 3339 text, which the data engine's reading would refuse.
        .map(Resource::showing_stored_values)
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    Ok(Arc::new(opened))
}

fn open_one(
    project: &str,
    resource: &str,
    seed: Option<&str>,
    database: Option<&Path>,
    data_path: Option<&Path>,
) -> Result<Resource, EngineError> {
    match (database, data_path) {
        (Some(path), _) => match seed {
            Some(sql) => {
                private::create_database_if_missing(path).map_err(|e| {
                    EngineError::Internal(format!("cannot create {}: {e}", path.display()))
                })?;
                Resource::seeded(Some(path), sql)
            }
            None if !path.exists() => Err(missing_database(path)),
            None => Resource::open(path),
        },
        (None, Some(data)) => seeded_beside(&beside(data, project, resource), seed.unwrap_or("")),
        (None, None) => Resource::in_memory(seed.unwrap_or("")),
    }
}

/// A `database` file that is not there, and no `seed_sql` to create it: where it was looked
/// for, and the ways out.
fn missing_database(path: &Path) -> EngineError {
    let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    EngineError::Internal(format!(
        "its database file {} does not exist: a `database` file without `seed_sql` must exist \
         (a relative path is read from the config file's directory, or from the current \
         directory when given on the command line). Create it, give `seed_sql` to create it, \
         or leave `database` out for one the emulator keeps itself",
        shown.display()
    ))
}

/// A database of the data path, beside its data file: private like the data file.
fn seeded_beside(path: &Path, seed_sql: &str) -> Result<Resource, EngineError> {
    private::private_database(path).map_err(|e| EngineError::Internal(e.to_string()))?;
    Resource::seeded(Some(path), seed_sql)
}

/// `<data file>.<project>.<resource>.sqlite`, with the names reduced to file-safe characters.
fn beside(data: &Path, project: &str, resource: &str) -> PathBuf {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let mut name = data.as_os_str().to_owned();
    name.push(format!(".{}.{}.sqlite", safe(project), safe(resource)));
    PathBuf::from(name)
}

#[cfg(test)]
mod open_tests {
    use super::*;

    #[test]
    fn files_beside_the_data_file_are_file_safe() {
        let p = beside(Path::new("/tmp/emu.sqlite"), "my proj", "shop/../x");
        assert_eq!(p, PathBuf::from("/tmp/emu.sqlite.my_proj.shop____x.sqlite"));
    }
}

/// A SQLite database copied into memory by [`Resource::save`], and the mark of the resource
/// that saved it.
#[derive(Debug)]
pub(crate) struct SavedDatabase(Mutex<Connection>, Origin);

impl Resource {
    /// A copy of the database as it is now, in memory, read on `conn` (a reader: the copy is
    /// one consistent state of it).
    pub(crate) fn save_from(&self, conn: &Connection) -> Result<SavedData, EngineError> {
        let mut copied = Connection::open_in_memory().map_err(engine_error)?;
        copy(conn, &mut copied)?;
        Ok(Arc::new(SavedDatabase(Mutex::new(copied), self.origin)))
    }

    /// Puts `saved` back through `conn` (the writer): the database is again what it was when
    /// saved, for every connection. The caller reads the schema again (a saved database may
    /// have other tables).
    pub(crate) fn restore_into(
        &self,
        saved: &(dyn std::any::Any + Send + Sync),
        conn: &mut Connection,
    ) -> Result<(), EngineError> {
        let Some(saved) = saved.downcast_ref::<SavedDatabase>() else {
            return Err(EngineError::Internal(
                "this copy of the data was saved from a resource of another kind of database: \
                 restore it on the resource that saved it"
                    .to_owned(),
            ));
        };
        if saved.1 != self.origin {
            return Err(EngineError::Internal(
                "this copy of the data was saved from another resource: restore it on the \
                 resource that saved it"
                    .to_owned(),
            ));
        }
        // The copy is only read; a panic elsewhere while it was held left it whole.
        let from = saved.0.lock().unwrap_or_else(|e| e.into_inner());
        copy(&from, conn)
    }
}

/// In-memory databases seeded in this process, by their seed, the most recent last: a test
/// suite that starts an emulator per test runs each seed once, and every later start copies
/// the database the first one made (a 10k-row seed: the copy instead of the seed's 20 ms; see
/// docs/performance.md, section 12).
static SEEDED: Mutex<Vec<(String, Arc<Mutex<Connection>>)>> = Mutex::new(Vec::new());

/// How many seeds [`SEEDED`] keeps.
const SEEDS_KEPT: usize = 8;

/// Words of a seed that a copy would not repeat: a result that may differ from one run to the
/// next (`random()`, `datetime('now')`, `CURRENT_TIMESTAMP`, ...), or a setting of the
/// connection rather than the database (`PRAGMA`, `ATTACH`). Such a seed runs at every start.
const UNREPEATABLE: &[&str] = &[
    "random",
    "now",
    "current_",
    "changes",
    "last_insert_rowid",
    "pragma",
    "attach",
];

/// Runs `seed_sql` on the new in-memory database `conn`, or copies the database an earlier
/// run of the same seed made in this process.
pub(crate) fn seed_in_memory(conn: &mut Connection, seed_sql: &str) -> Result<(), EngineError> {
    let lower = seed_sql.to_ascii_lowercase();
    if seed_sql.trim().is_empty() || UNREPEATABLE.iter().any(|w| lower.contains(w)) {
        script(conn, seed_sql).map_err(engine_error)?;
        return Ok(());
    }
    let kept = {
        let seeded = SEEDED.lock().unwrap_or_else(|e| e.into_inner());
        seeded
            .iter()
            .find(|(seed, _)| seed == seed_sql)
            .map(|(_, db)| Arc::clone(db))
    };
    if let Some(db) = kept {
        let from = db.lock().unwrap_or_else(|e| e.into_inner());
        return copy(&from, conn);
    }
    script(conn, seed_sql).map_err(engine_error)?;
    let mut copied = Connection::open_in_memory().map_err(engine_error)?;
    copy(conn, &mut copied)?;
    let mut seeded = SEEDED.lock().unwrap_or_else(|e| e.into_inner());
    if !seeded.iter().any(|(seed, _)| seed == seed_sql) {
        if seeded.len() == SEEDS_KEPT {
            seeded.remove(0);
        }
        let db = Arc::new(Mutex::new(copied));
        seeded.push((seed_sql.to_owned(), db));
    }
    Ok(())
}

#[cfg(test)]
mod saved_tests {
    use super::*;

    fn count(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    /// A seed run again copies the first run's database: same rows, and each copy its own.
    #[test]
    fn a_seed_run_again_is_a_copy_of_its_first_run_of_its_own() {
        let seed = "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT);\
                    INSERT INTO t (v) VALUES ('a'), ('b'); -- seed_in_memory test";
        let mut first = Connection::open_in_memory().unwrap();
        seed_in_memory(&mut first, seed).unwrap();
        first.execute("INSERT INTO t (v) VALUES ('c')", []).unwrap();
        let mut second = Connection::open_in_memory().unwrap();
        seed_in_memory(&mut second, seed).unwrap();
        assert_eq!((count(&first), count(&second)), (3, 2));
        let kept = SEEDED.lock().unwrap();
        assert!(kept.iter().any(|(s, _)| s == seed));
    }

    /// A seed whose result may change from run to run runs every time, and is not kept.
    #[test]
    fn a_seed_with_random_or_now_runs_every_time() {
        let seed = "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER);\
                    INSERT INTO t (v) VALUES (random());";
        let mut conn = Connection::open_in_memory().unwrap();
        seed_in_memory(&mut conn, seed).unwrap();
        assert_eq!(count(&conn), 1);
        let kept = SEEDED.lock().unwrap();
        assert!(!kept.iter().any(|(s, _)| s == seed));
    }
}
