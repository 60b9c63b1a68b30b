//! Each operation's flow, written once over a database's [`Connection`]: the steps the data
//! engine's ORM takes, in the order it takes them, whatever database holds the rows.
//!
//! A backend folder (`sqlite/`, `postgres/`, `mysql/`) says only what is its database's own: how
//! it reflects a foreign key, how it tells one row from another, its driver's values and its
//! errors. The flow never names a database, and a database never repeats a flow.
//!
//! Over a database server's side (`database::Database`, for the backends of PostgreSQL and MySQL;
//! SQLite's own flows are in `sqlite/resource.rs`):
//! - `selection`: a selection's `WHERE` clause.
//! - `read`: a list (its page, count and walks) and a record's retrieve.
//! - `walk`: a page read from the anchor where the page before it ended.
//! - `summary`: an aggregate and a group.
//! - `sql`: a read-only query, its deadline, its cancel and its session's cleaning.
//! - `write`: a record's create, and the steps every update and delete share.
//!
//! Over any database's [`Connection`]:
//! - [`delete`]: what SQLAlchemy's automap relationships do to the rows that refer to a row
//!   being deleted (set to NULL, deleted in turn, or left to the database).

pub(crate) mod connection;
pub(crate) mod delete;
// The flows over a database server's side, used by those backends, each an optional feature.
#[allow(dead_code)]
pub(crate) mod database;
#[allow(dead_code)]
pub(crate) mod read;
#[allow(dead_code)]
pub(crate) mod selection;
#[allow(dead_code)]
pub(crate) mod sql;
#[allow(dead_code)]
pub(crate) mod summary;
#[allow(dead_code)]
pub(crate) mod walk;
#[allow(dead_code)]
pub(crate) mod write;

pub(crate) use connection::{Connection, Locator, OnDelete, Reference, TableRef};
