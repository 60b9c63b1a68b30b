//! Records of connected resources: list queries, aggregate and group requests.
//!
//! [`ListQuery`] builds the query string of a records list (filters, exclusions, ordering,
//! search, page and page size) and checks it before anything is sent. [`wire`] owns the records
//! wire grammar that the SDK and the emulator share: reserved parameters, page-size limits, the
//! filter-key encoder and decoder, and the percent-encoding of URL components. [`csv`] reads
//! records written as CSV, as `svc records import` and the emulator's fixtures do.

mod aggregate;
pub mod csv;
mod query;
pub mod wire;

pub use aggregate::{
    AggregateFunc, AggregateRequest, AggregateResult, DateUnit, GroupLookup, GroupRequest, GroupRow,
};
pub use query::{FilterValue, ListQuery, QueryError};
pub use wire::{
    DEFAULT_PER_PAGE, FilterKey, FilterKeyError, Lookup, MAX_PER_PAGE, RESERVED_PARAMS,
    is_filter_param, parse_filter_key,
};
