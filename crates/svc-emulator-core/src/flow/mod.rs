//! Each operation's flow, written once: the steps the data engine's ORM takes, in the order it
//! takes them, whatever database holds the rows. A flow never names a database, and a database
//! never repeats a flow.
//!
//! A database folder says only what is its own: its binds, casts and orders, its driver's
//! values and errors, how it reflects a foreign key and tells one row from another. SQLite's
//! blocking connection joins through `sqlite::records`, its flows run to their end on the thread
//! that holds the connection.
//!
//! What a database gives, by the trait it implements and the file of its folder that does:
//! - `Dialect` (`crate::dialect`; its `dialect.rs`): its words, its lookups' SQL, search and
//!   `tz`: a selection's `WHERE` clause ([`filter`]).
//! - `Database` ([`database`]; its `records.rs`): its models as SQL names them, binds, reads
//!   and writes (its locks, inserts, updates and read-backs), each row of a read handed to the
//!   flow's sink as the driver reads it (`Database::read_rows` over `Driver::each_row`); a page
//!   and a count, its sort keys and seek, and the token that proves an anchor still holds
//!   ([`walks`]); its transactions, generated keys and foreign keys' checks for an export, an
//!   import and a server's saved copy ([`export`], `snapshot`); its aggregate functions and
//!   date buckets ([`aggregate`]).
//! - `Driver` (`driver`; its `driver.rs`): how it runs statements: one without rows, a statement
//!   with each row handed to the core's sink (borrowed where the driver lends its rows, as
//!   SQLite's does), a connection given up; a read-only query's proof of read-only, cancel and cleaning
//!   ([`read_only_sql`]), and an action's statements in a read-write transaction ([`action`]).
//! - `Cascades` (`references`): what a delete's cascade runs over; the core's `Cascade` is one
//!   for every database, over the write's transaction and its `Database::references_to` and
//!   `columns`.
//! - [`state`]: what the core keeps of a resource, and its reload over the database's
//!   `Database::reflect`.
//!
//! The flows over them: `read` (a list and a retrieve), `write` (a create, an update, a
//! delete), [`delete`] (what SQLAlchemy's automap relationships do to the rows that refer to a
//! row being deleted), `aggregate`, `read_only_sql`, `action`, `snapshot` and [`export`].
//!
//! SQLite keeps its own saved copies (its `Database::save_copy` and `restore_copy`, over its
//! online backup, which copies the database's pages). Through `snapshot`, SQLite would drop the tables' triggers (it cannot turn
//! one off) and make them again in the restore's transaction, and put 10k rows back in 2.58 ms
//! where the page copy takes 117 us (`cargo xtask bench --only fixture`, section 12): a reset
//! would cost more than the start it replaces. So only the database servers run `snapshot`.

// Every database runs these.
pub mod action;
pub mod aggregate;
pub mod database;
pub mod delete;
pub mod driver;
pub mod export;
pub mod extra;
pub mod filter;
pub mod read_only_sql;
pub mod references;
pub mod state;
pub mod write;

// Only the database servers (PostgreSQL, MySQL) run these whole; SQLite implements parts of
// them (`records::Database`).
pub mod read;
pub mod records;
pub mod snapshot;
pub mod walks;

pub use references::{Cascades, Columns, Locator, OnDelete, Reference, TableRef};
