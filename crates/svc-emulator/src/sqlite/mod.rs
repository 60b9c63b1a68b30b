//! The SQLite backend: a resource whose database is a SQLite file (or in memory), served the way
//! the platform's data engine serves one over SQLAlchemy's SQLite dialect.
//!
//! The records engine over SQLite is [`crate::engine::Resource`]; this folder makes it a
//! [`Backend`](crate::backend::Backend) (`backend`: every operation moved to the blocking pool
//! with the caller's turn) and opens its databases (`open`: where a resource's file lives, how it
//! is seeded, the built-in tools resource).

mod backend;
mod open;
mod read_only_sql;

pub(crate) use open::{open_file, open_tools};
