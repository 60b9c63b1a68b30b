//! The data engine's rules, the same on every database: how the platform's data engine
//! (PyPI `jet-bridge` 1.12.13 over SQLAlchemy 1.4) reads a records request and writes its answer.
//!
//! **An implementation crate of [svc-emulator](https://docs.rs/svc-emulator)**, published so that
//! the emulator and the `svc` command share one reading of the engine. Its API follows theirs and
//! may change in any release: depend on `svc-emulator`, not on this crate.
//!
//! No I/O, no SQL, no async runtime and no database driver: Cargo holds that, since this crate
//! depends on none of them. The SQL every database writes alike is the emulator's `dialect`,
//! each database's own is its folder's.
//!
//! By concern:
//! - requests and answers: a request read from the wire (`request`: the query's pairs, a list's
//!   [`ListSpec`], the envelope and its links; `body_filters`: the filters of a `POST`'s body
//!   and `X-HTTP-Method-Override`; `forms`: aggregate and group requests),
//!   [`ListSpec`], [`Selection`], [`Listing`] (`list`),
//!   [`AggregateRequest`], [`GroupRequest`] (`aggregate`), the errors ([`EngineError`]);
//! - Python's semantics (`python`): `json.loads` and `json.dumps`, `int()` and `float()` of
//!   text, `repr()` and `str()`, a float's shortest repr, and the values a database server's
//!   driver hands the engine;
//! - the serializer: its fields reading a value in (`field_input`), the engine's view of a
//!   column type, stored values and how they are written ([`types`]), a write body's reading
//!   (`body`), records written from rows (`records`), binary values in base64 (`base64`);
//! - the filter grammar (`filter`), `_relation` (`relation`), `tz` (`time_zone`), what the rules
//!   ask of a table and a column whatever database holds them (`table`);
//! - the page-walk memo (`walks`), read-only SQL's limits, answer and parameters
//!   (`sql_answer`, `sql_params`).
//!
//! What the rules cannot reach, as Cargo holds it (each block fails to compile, and the doc
//! tests check that it does): the emulator and its layers,
//!
//! ```compile_fail
//! use svc_emulator::Emulator;
//! ```
//!
//! a database driver,
//!
//! ```compile_fail
//! use rusqlite::Connection;
//! ```
//!
//! ```compile_fail
//! use tokio_postgres::Client;
//! ```
//!
//! ```compile_fail
//! use mysql_async::Pool;
//! ```
//!
//! and an async runtime or an HTTP stack.
//!
//! ```compile_fail
//! use tokio::runtime::Runtime;
//! ```
//!
//! ```compile_fail
//! use axum::Router;
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod aggregate;
pub mod base64;
pub mod body;
pub mod body_filters;
pub mod declared;
pub mod error;
pub mod extra_actions;
pub mod field_input;
pub mod filter;
pub mod forms;
pub mod inventory;
pub mod json_text;
pub mod list;
pub mod plan;
pub mod python;
mod query_limits;
pub mod records;
pub mod relation;
pub mod request;
pub mod sql_answer;
pub mod sql_params;
pub mod sql_request;
pub mod table;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod time_zone;
pub mod types;
pub mod walks;

pub use aggregate::{AggregateFunc, AggregateRequest, DateUnit, GroupLookup, GroupRequest};
pub use error::EngineError;
pub use filter::{DEFAULT_PER_PAGE, Lookup, MAX_PER_PAGE};
pub use list::{ListSpec, Listing, RecordsJson, Selection};

pub use query_limits::{MAX_SQL_ANSWER_BYTES, MAX_SQL_ROWS, SQL_TIME_LIMIT};
pub use query_limits::{SqlLimits, write_answer_head};
