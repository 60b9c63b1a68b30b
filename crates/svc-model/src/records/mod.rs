//! Records of connected resources: list queries, aggregate and group requests.
//!
//! [`ListQuery`] builds the query string of a records list (filters, exclusions, ordering,
//! search, page and page size) and checks it before anything is sent.

mod aggregate;
mod query;

pub use aggregate::{
    AggregateFunc, AggregateRequest, AggregateResult, DateUnit, GroupLookup, GroupRequest, GroupRow,
};
pub use query::{FilterValue, ListQuery, Lookup, MAX_PER_PAGE, QueryError, RESERVED_PARAMS};
