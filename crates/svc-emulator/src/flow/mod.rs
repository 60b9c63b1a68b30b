//! Each operation's flow, written once over a database's [`Connection`]: the steps the data
//! engine's ORM takes, in the order it takes them, whatever database holds the rows.
//!
//! A backend folder (`sqlite/`, `postgres/`, `mysql/`) says only what is its database's own: how
//! it reflects a foreign key, how it tells one row from another, its driver's values and its
//! errors. The flow never names a database, and a database never repeats a flow.
//!
//! - [`read`]: a list (its page, count and walks, through the database's [`database::Database`])
//!   and a record's retrieve.
//! - [`summary`]: an aggregate and a group.
//! - [`delete`]: what SQLAlchemy's automap relationships do to the rows that refer to a row
//!   being deleted (set to NULL, deleted in turn, or left to the database).

pub(crate) mod connection;
pub(crate) mod database;
pub(crate) mod delete;
pub(crate) mod read;
pub(crate) mod summary;

pub(crate) use connection::{Connection, Locator, OnDelete, Reference, TableRef};
