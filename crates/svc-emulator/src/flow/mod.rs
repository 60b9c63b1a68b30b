//! Each operation's flow, written once over a database's [`Connection`]: the steps the data
//! engine's ORM takes, in the order it takes them, whatever database holds the rows.
//!
//! A backend folder (`sqlite/`, `postgres/`, `mysql/`) says only what is its database's own: how
//! it reflects a foreign key, how it tells one row from another, its driver's values and its
//! errors. The flow never names a database, and a database never repeats a flow.
//!
//! Over a database's side (`database::Database`; SQLite's blocking connection joins through
//! `sqlite::flows`, its flows run to their end on the thread that holds the connection):
//! - `selection`: a selection's `WHERE` clause (every database).
//! - `read`: a list (its page, count and walks: `database::Pages`) and a record's retrieve
//!   (PostgreSQL and MySQL; SQLite's are its own, in `sqlite/resource.rs`).
//! - `walk`: a page read from the anchor where the page before it ended (PostgreSQL and MySQL).
//! - `summary`: an aggregate and a group (every database).
//! - `sql`: a read-only query, its deadline, its cancel and its session's cleaning (PostgreSQL
//!   and MySQL; SQLite proves a query read-only in `sqlite/read_only_sql.rs`).
//! - `write`: a record's create, and the steps every update and delete share (every
//!   database).
//! - `saved`: a copy of the data kept in the database and put back (`Backend::save` and
//!   `restore`: PostgreSQL and MySQL; SQLite copies its whole file, `sqlite/saved.rs`).
//!
//! Over any database's [`Connection`]:
//! - [`delete`]: what SQLAlchemy's automap relationships do to the rows that refer to a row
//!   being deleted (set to NULL, deleted in turn, or left to the database).

#[allow(dead_code)]
pub(crate) mod action;
pub(crate) mod delete;
pub(crate) mod references;
// The flows over a database's side; parts of them only the server backends use, each an
// optional feature.
#[allow(dead_code)]
pub(crate) mod aggregate;
#[allow(dead_code)]
pub(crate) mod filter;
#[allow(dead_code)]
pub(crate) mod read;
#[allow(dead_code)]
pub(crate) mod read_only_sql;
#[allow(dead_code)]
pub(crate) mod records;
#[allow(dead_code)]
pub(crate) mod saved;
#[allow(dead_code)]
pub(crate) mod walks;
#[allow(dead_code)]
pub(crate) mod write;

pub(crate) use references::{Connection, Locator, OnDelete, Reference, TableRef};
