//! The data engine's rules, the same on every database: how the platform's data engine
//! (PyPI `jet-bridge` 1.12.13 over SQLAlchemy 1.4) reads a records request and writes its answer.
//! No SQL and no database here (`cargo xtask structure` checks it): the SQL text every database
//! writes alike is `crate::dialect`'s, each database's own is its folder's.
//!
//! By concern:
//! - requests and answers: [`ListSpec`], [`Selection`], [`Listing`] (`list`),
//!   [`AggregateRequest`], [`GroupRequest`] (`aggregate`), the errors ([`EngineError`]);
//! - Python's semantics (`python`): `json.loads` and `json.dumps`, `int()` and `float()` of
//!   text, `repr()` and `str()`, a float's shortest repr, and the values a database server's
//!   driver hands the engine;
//! - the serializer: its fields reading a value in (`field_input`), the engine's view of a
//!   column type, stored values and how they are written ([`types`]), a write body's reading
//!   (`body`), records written from rows (`records`);
//! - the filter grammar (`filter`), `_relation` (`relation`), `tz` (`time_zone`), what the rules
//!   ask of a table and a column whatever database holds them (`table`);
//! - the page-walk memo (`walks`), read-only SQL's limits, answer and parameters
//!   (`sql_answer`, `sql_params`).
//!
//! The demo resource's seed ([`demo_seed_sql`]) is re-exported here from `crate::demo`, its
//! published path.

pub(crate) mod aggregate;
pub(crate) mod body;
pub(crate) mod declared;
pub(crate) mod error;
pub(crate) mod field_input;
pub(crate) mod filter;
pub(crate) mod json_text;
pub(crate) mod list;
pub(crate) mod plan;
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
pub mod inventory;
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
