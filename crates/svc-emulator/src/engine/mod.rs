//! The data engine's rules, the same on every database: how the platform's data engine
//! (PyPI `jet-bridge` 1.12.13 over SQLAlchemy 1.4) reads a records request and writes its answer.
//!
//! - the typed requests and answers ([`ListSpec`], [`Selection`], [`Listing`],
//!   [`AggregateRequest`], [`GroupRequest`]) and the errors ([`EngineError`]), which the HTTP
//!   layer reads from the query and turns into statuses;
//! - the filter grammar and its Python readings of values (`filter`, `convert`), the engine's
//!   view of a column type and its serializer forms ([`types`]), a write body's reading
//!   (`body`), aggregate and group requests (`aggregate`), the limits of read-only SQL, the
//!   Python values a database server's driver gives and how the engine writes them (`python`);
//! - what the rules ask of a table and a column whatever database holds them (`table`); a
//!   database server's table and column as the ORM maps them. SQLite's models are its own
//!   ([`crate::sqlite::Model`]).
//!
//! Each database implements them in its own folder, behind the backend interface
//! (`crate::backend`): [`crate::sqlite`], `crate::postgres` and `crate::mysql`, each writing
//! its own SQL from the steps here (the filter walk and its `WHERE` assembly, the order terms,
//! aggregate planning). The demo resource's seed ([`demo_seed_sql`]) is here too, because the
//! settings name it.

pub(crate) mod aggregate;
pub(crate) mod body;
pub(crate) mod error;
pub(crate) mod field_input;
pub(crate) mod filter;
pub(crate) mod json_text;
pub(crate) mod list;
// Read by the database servers' backends, each an optional feature (as `walks`).
#[allow(dead_code)]
pub(crate) mod python;
mod query_limits;
pub(crate) mod relation;
// Only the database servers' backends use it, and each is an optional feature (as `walks`).
#[allow(dead_code)]
pub(crate) mod records;

// Its caps and refusals are the database servers' (SQLite's read-only SQL keeps its own).
#[allow(dead_code)]
pub(crate) mod sql_answer;
// `bind_names` is the database servers' (SQLite binds names itself).
#[allow(dead_code)]
pub(crate) mod sql_params;
pub(crate) mod table;
// Read by the database servers' backends (SQLite ignores `tz`), each an optional feature.
#[allow(dead_code)]
pub(crate) mod time_zone;
pub mod types;
// Only the database servers' backends walk pages by anchors, and each is an optional
// feature: without them nothing here is used (its own tests run either way).
#[allow(dead_code)]
pub(crate) mod walks;

pub use aggregate::{AggregateFunc, AggregateRequest, DateUnit, GroupLookup, GroupRequest};
pub use error::EngineError;
pub use filter::{DEFAULT_PER_PAGE, Lookup, MAX_PER_PAGE};
pub use list::{ListSpec, Listing, RecordsJson, Selection};

pub use crate::demo::{DEMO_RESOURCE, DEMO_ROWS, demo_seed_sql};
pub use query_limits::{MAX_SQL_ANSWER_BYTES, MAX_SQL_ROWS, SQL_TIME_LIMIT};
pub(crate) use query_limits::{SqlLimits, write_answer_head};
