//! Records of connected resources: SQLite databases whose tables are models.
//!
//! A [`Resource`] is one SQLite database (an existing file, or one created from seed SQL in
//! memory or at a path). Its tables are models, their columns fields, and the primary key
//! addresses records. The operations of docs/contract.md section 5.1 are plain methods returning
//! JSON (bytes for records and lists, [`serde_json::Value`] for aggregate and group) or a
//! [`EngineError`] that carries its HTTP status and error body (still: typed errors, with the
//! statuses chosen in the `records` slice, are the goal of docs/architecture.md).
//! [`demo_resource`] builds the demo `shop`.
//!
//! # Choices where the contract is silent
//!
//! - **Models**: tables of the `main` schema; `sqlite_*` tables, views and virtual tables are
//!   not models. A table without a single-column primary key uses its `rowid` as key, shown
//!   as a read-only integer field `rowid` (or `_rowid_`/`oid` when a column already has that
//!   name) first in every record. `WITHOUT ROWID` tables with a composite key are skipped.
//! - **Field kinds** ([`FieldKind`]): from the declared type, see there.
//! - **Record JSON**: integers and reals as numbers, text as strings, booleans as
//!   `true`/`false`, dates and date-times as the stored text, BLOBs as standard base64, NULL as
//!   `null`; keys in table order.
//! - **Filters**: several filters (even on the same field) are AND-ed. Values are parsed by
//!   the field's kind (`true/false/1/0` for booleans, `YYYY-MM-DD` for dates, ISO 8601 for
//!   date-times, where a bare date is accepted); a malformed value is a `400` naming the
//!   parameter. Dates compare as dates (`date(col)`), date-times as instants
//!   (`julianday(col)`), so `T` or space separators and offsets compare correctly. An empty
//!   value is the empty string for text fields and a `400` for other kinds. `in` splits on
//!   every comma. `isempty=true` is NULL or zero length. `icontains`, `istartswith`,
//!   `iendswith` and `_search` use `LIKE` with escaped `%`/`_`: case folding is **ASCII
//!   only** (SQLite without ICU; a Unicode-aware fold needs rusqlite's `functions` feature).
//!   Binary fields only accept `isnull` and `isempty`.
//! - **Ignored parameters**: `page`, `_per_page`, `_no_pagination`, `_order_by`, `_search` and
//!   `draft` are never filters, whatever fields the model has (svc-model's
//!   [`RESERVED_PARAMS`](svc_model::records::RESERVED_PARAMS)); any other parameter starting
//!   with `_` is ignored unless the model has a field of that name. Every other parameter must
//!   name a field (`400` otherwise). The key grammar is svc-model's
//!   ([`svc_model::records::wire`]).
//! - **Pagination** (read by the http layer, as the data engine reads it): `page` from 1 (below
//!   1 reads as 1); a page past the last one lists no records, with the count of all. The
//!   `next`/`previous` links (written by the http layer) repeat the query in order, with `page`
//!   moved to the end and left out for page 1; a full last page also links to a next page.
//!   Any non-empty `_no_pagination` turns paging off; `_per_page` is clamped to 1..=10000.
//! - **Ordering**: `_order_by` fields, then the primary key descending. NULLs sort first in
//!   ascending order (SQLite's rule).
//! - **Search**: text, date, date-time and untyped fields by substring; integer and real fields
//!   by equality when the text is a number; booleans and BLOBs are not searched.
//! - **Writes**: strict JSON types: numbers for integer and real fields (an integer field
//!   takes `3.0` but not `"3"`), strings for text, date (`YYYY-MM-DD`) and date-time fields,
//!   `true/false/0/1` for booleans, base64 strings for BLOBs; nested objects and arrays are
//!   refused. Date-times are stored as given. Create accepts an explicit value for an
//!   auto-assigned primary key. Update ignores the primary key, the implicit rowid and
//!   generated columns. Errors are field errors (`{"email": ["customers with this email
//!   already exists."]}`), foreign key errors are reported on the referencing field
//!   (`Invalid pk "9" - object does not exist.`), and a delete blocked by a foreign key is a
//!   `400` in `non_field_errors`.
//! - **Keys**: a primary key that cannot be of the key's kind (text for an integer key) is a
//!   `404`.
//! - **Aggregate and group**: `sum` and `avg` need a numeric (or boolean, or untyped) field;
//!   `min`/`max` of a boolean field give booleans. `x_lookup=auto` is `date_day` on date and
//!   date-time fields and `plain` otherwise. Date lookups give ISO text: `YYYY-MM-DD` for day
//!   and coarser (week = its Monday, quarter = its first day), `YYYY-MM-DDTHH:MM:SS` for hour
//!   and finer; date-times with an offset are converted to UTC first. NULL groups come first.
//! - **Concurrency**: a database file runs in WAL mode with one writer and four read-only
//!   reader connections (a list reads its count and page in one snapshot); an in-memory
//!   database uses a single connection behind a mutex. `PRAGMA foreign_keys` is on.
//! - **Seeding**: [`Resource::seeded`] with a path runs the seed only when the database has no
//!   table yet.
//! - **SQL** ([`Resource::sql`]): one statement that SQLite itself reports read-only, run on a
//!   connection that cannot write. At most
//!   [`MAX_SQL_ROWS`] rows; interrupted after [`SQL_TIME_LIMIT`].

mod aggregate;
pub(crate) mod convert;
mod error;
mod filter;
mod list;
mod resource;
mod schema;
mod seed;
mod sql;
pub mod types;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_writes;

pub use aggregate::{AggregateFunc, AggregateRequest, DateUnit, GroupLookup, GroupRequest};
pub use error::EngineError;
pub use filter::{DEFAULT_PER_PAGE, Lookup, MAX_PER_PAGE};
pub use list::{ListSpec, Listing, RecordsJson, Selection};

pub use resource::Resource;
pub use schema::{Field, FieldKind, ForeignKey, Model, Schema};
pub use seed::{DEMO_RESOURCE, DEMO_ROWS, demo_resource, demo_seed_sql};
pub use sql::{MAX_SQL_ROWS, SQL_TIME_LIMIT};
