//! The typed list specification the engine takes, and the listing it gives back.
//!
//! The http layer reads these from the query string (`crate::http::list`); the engine never sees
//! a URL or a query string.

/// Which records: the filters and searches of a list, an aggregate or a group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Filter candidates, `(key, value)` in the order given: every parameter that is not one of
    /// svc-model's reserved list parameters. The engine decides which are filters: a key
    /// starting with `_` is one only when the model has a field of that name.
    pub filters: Vec<(String, String)>,
    /// `_search` texts, in the order given (the engine reads one; an empty text matches all).
    pub search: Vec<String>,
    /// The filter values of the request's body, read when the method the engine's views see
    /// is `POST` (`POST .../get_records`, or `X-HTTP-Method-Override: POST`): each member whose
    /// value is not `null`, with Python's JSON text of that value, in the body's order
    /// (`crate::body_filters`). The engine reads a filter's name there first, and in the query
    /// only when the body has none. The declared filters' (`_order_by`, `_search`, ...) are
    /// already resolved into [`filters`](Self::filters) and [`search`](Self::search) where
    /// they are text (`crate::request::selection_with_body`): only one that is not text stays
    /// here, under the bare name.
    pub body: Vec<(String, String)>,
    /// Read the selection as the engine does even where it silently ignores or misreads a
    /// caller's mistake (an unknown field or lookup, a boolean word outside its sets), and fail
    /// where it fails; otherwise such requests are refused with a `400`
    /// (`EmulatorConfig::lenient`).
    pub lenient: bool,
}

/// Everything that shapes a list: the selection, the order and the paging.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListSpec {
    /// Which records.
    pub selection: Selection,
    /// Every `_order_by` value as given (`a,-b`), none for the default order (primary key
    /// descending). The engine fails on more than one.
    pub order_by: Vec<String>,
    /// The page, from 1. A page past the end lists no records.
    pub page: u64,
    /// Records per page, from 1 to [`MAX_PER_PAGE`](super::MAX_PER_PAGE).
    pub per_page: u64,
    /// Every matching record (at most [`MAX_PER_PAGE`](super::MAX_PER_PAGE)) instead of a page.
    pub no_pagination: bool,
}

/// The records of a list, encoded once as a JSON array (`[{...},{...}]`): records go from the
/// database to the wire without an intermediate tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordsJson(pub Vec<u8>);

/// What a list found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    /// One page of a paged list.
    Page {
        /// Records matching the selection, on all pages.
        count: u64,
        /// The page's number, from 1.
        number: u64,
        /// Records per page.
        per_page: u64,
        /// Records on this page.
        len: u64,
        /// The page's records.
        records: RecordsJson,
    },
    /// Every matching record (`no_pagination`).
    All(RecordsJson),
}
