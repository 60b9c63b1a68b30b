//! The SQLite backend: records of connected resources whose database is a SQLite file (or in
//! memory), served the way the platform's data engine serves one over SQLAlchemy's SQLite
//! dialect.
//!
//! # Files
//!
//! The eight roles every database folder has (`postgres/` and `mysql/` too): `dialect` (the
//! SQL words and lookups), `driver` (rusqlite: statements, read-only SQL, actions), `types`
//! (the engine's view of a column, and values both ways), `schema` (reflection into models,
//! foreign keys, identity), `records` (reads of records, and the write and summary flows'
//! SQLite side), `pages`, `aggregate`, and this file. Beside them, what only an embedded
//! database needs, since no server keeps its connections: `resource` (a database, its
//! connections and its operations), `backend` (each operation on the async worker when its cost
//! is known to be small, else on the blocking pool, with the caller's turn), `open` (where its
//! files live), `saved` (copies through SQLite's online backup), and `tools` (the built-in
//! users and teams, with the emulator's strict writes).
//!
//! A [`Resource`] is one SQLite database (an existing file, or one created from seed SQL in
//! memory or at a path). Its tables are models, their columns fields, and the primary key
//! addresses records. The operations of docs/contract.md section 5.1 are plain methods returning
//! JSON (bytes for records and lists, [`serde_json::Value`] for aggregate and group) or an
//! [`EngineError`](crate::engine::EngineError), whose HTTP status and body the http layer chooses.
//! [`demo_resource`] builds the demo `shop`.
//!
//! # Choices where the contract is silent
//!
//! - **Models**: tables of the `main` schema; `sqlite_*` tables, views and virtual tables are
//!   not models. A table without a single-column primary key uses its `rowid` as key, shown
//!   as a read-only integer field `rowid` (or `_rowid_`/`oid` when a column already has that
//!   name) first in every record. `WITHOUT ROWID` tables with a composite key are skipped.
//! - **Field kinds** ([`FieldKind`]): from the declared type, see there; they check writes.
//! - **The engine's view of a column** ([`types`](crate::engine::types)): how the platform's data engine (jet-bridge
//!   over SQLAlchemy 1.4) reflects the declared type, reads stored values and writes them in
//!   records. Records are written exactly as the engine writes them: `REAL`, `NUMERIC`,
//!   `DECIMAL(p, s)`, `DATE`, untyped and `BLOB` columns as text (`"57.0"`,
//!   `"88378.0000000000"`), `DATETIME` in ISO form with `T`, integers, `FLOAT` and booleans as
//!   JSON numbers and booleans (docs/contract.md 5.1 has the table).
//! - **Filters, search and order** (`crate::engine`'s `filter`): built as the engine builds them, SQL and bound
//!   values alike: per-type lookup families, the first value of a repeated key (`in`: the
//!   list), an empty value is no filter, `NOT (...)` for `exclude__`, `LIKE` wildcards, Python's
//!   readings of numbers, booleans and dates. What the engine silently ignores (an unknown field
//!   or lookup) is a `400` unless the selection is lenient; where the engine fails (500), strict
//!   mode answers `400` and lenient mode [`EngineError::EngineFails`](crate::engine::EngineError::EngineFails).
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
//! - **SQL** ([`Resource::sql`]): one statement that SQLite itself reports read-only, run on a
//!   connection that cannot write. At most
//!   [`MAX_SQL_ROWS`](crate::engine::MAX_SQL_ROWS) rows; interrupted after [`SQL_TIME_LIMIT`](crate::engine::SQL_TIME_LIMIT).

pub(crate) mod aggregate;
mod backend;
pub(crate) mod dialect;
pub(crate) mod driver;
mod open;
pub(crate) mod pages;
mod records;
pub(crate) mod resource;
mod saved;
pub(crate) mod schema;
mod tools;
mod types;

#[cfg(test)]
mod tests;

pub use resource::{Resource, demo_resource};
pub use schema::{Field, FieldKind, ForeignKey, Model, Schema};

pub(crate) use open::{open_file, open_tools};
