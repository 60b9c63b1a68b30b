//! The records wire grammar, in one place: what the SDK writes and the emulator reads.
//!
//! - the query parameters of a list that are never filters ([`RESERVED_PARAMS`]) and the rule
//!   for the other ones ([`is_filter_param`]);
//! - the page-size limits ([`DEFAULT_PER_PAGE`], [`MAX_PER_PAGE`]);
//! - the filter-key grammar (`field`, `field__lookup`, `exclude__field`,
//!   `exclude__field__lookup`): the lookups ([`Lookup`]), the encoder ([`FilterKey::encode`])
//!   and the decoder ([`parse_filter_key`]);
//! - the percent-encoding of every path segment and query component ([`encode_component`]).
//!
//! The SDK (`ListQuery`), the emulator (filters, paging, `next`/`previous` links), the CLI
//! (`--filter`) and the `list_query` fuzz target all use this module, so that they cannot drift
//! apart. See section 5.1 of `docs/contract.md` for the rules.
//!
//! ```
//! use svc_model::records::wire::{FilterKey, parse_filter_key};
//! use svc_model::records::Lookup;
//!
//! let fields = ["status", "total"];
//! let has_field = |name: &str| fields.contains(&name);
//! let key = FilterKey::new("total", Lookup::Gte, true);
//! assert_eq!(key.encode(), "exclude__total__gte");
//! assert_eq!(parse_filter_key(&key.encode(), has_field), Ok(key));
//! ```

use std::borrow::Cow;
use std::fmt;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// `page`: the page to read, from 1.
pub const PAGE_PARAM: &str = "page";
/// `_per_page`: records per page, 1 to [`MAX_PER_PAGE`].
pub const PER_PAGE_PARAM: &str = "_per_page";
/// `_no_pagination=1`: every matching record, at most [`MAX_PER_PAGE`], as a bare JSON array.
pub const NO_PAGINATION_PARAM: &str = "_no_pagination";
/// `_order_by=a,-b`: the ordering, `-` for descending.
pub const ORDER_BY_PARAM: &str = "_order_by";
/// `_search=text`: a search over every column.
pub const SEARCH_PARAM: &str = "_search";
/// `draft=1`: the client's draft switch, which the SDK sends on every request when drafts are on.
pub const DRAFT_PARAM: &str = "draft";

/// Query parameters of a records list that are never filters, whatever fields the model has:
/// paging, ordering, search, and `draft`, the client's draft switch (which the SDK sends on every
/// request when drafts are on, see [`ClientBuilder::draft`]).
///
/// A field with one of these names is filtered with an explicit `__exact`
/// (`draft__exact=1`), so it cannot be mistaken for them. The emulator reads the same list.
///
/// [`ClientBuilder::draft`]: https://docs.rs/svc-api/latest/svc_api/struct.ClientBuilder.html#method.draft
pub const RESERVED_PARAMS: [&str; 6] = [
    PAGE_PARAM,
    PER_PAGE_PARAM,
    NO_PAGINATION_PARAM,
    ORDER_BY_PARAM,
    SEARCH_PARAM,
    DRAFT_PARAM,
];

/// The page size when a list does not say (`_per_page` absent).
pub const DEFAULT_PER_PAGE: u32 = 25;

/// The largest page size the service accepts, and the most records `_no_pagination` returns.
pub const MAX_PER_PAGE: u32 = 10_000;

/// What separates a field from its lookup in a filter key: `total__gte`.
pub const LOOKUP_SEPARATOR: &str = "__";

/// What starts the key of a negated filter: `exclude__status`, `exclude__total__gte`.
pub const EXCLUDE_PREFIX: &str = "exclude__";

/// How a filter compares a field with a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Lookup {
    /// Equal (`field=value` or `field__exact=value`).
    Exact,
    /// Greater than.
    Gt,
    /// Greater than or equal.
    Gte,
    /// Less than.
    Lt,
    /// Less than or equal.
    Lte,
    /// Contains the text, ignoring case.
    IContains,
    /// Starts with the text, ignoring case.
    IStartsWith,
    /// Ends with the text, ignoring case.
    IEndsWith,
    /// Equal to one of a comma-separated list.
    In,
    /// Is NULL (`true`) or is not (`false`).
    IsNull,
    /// Is empty: NULL or `""` (`true`), or neither (`false`).
    IsEmpty,
    /// The JSON value's text contains the text, ignoring case (JSON fields only).
    JsonIContains,
}

impl Lookup {
    /// Every lookup, in the order of the contract.
    pub const ALL: [Lookup; 12] = [
        Lookup::Exact,
        Lookup::Gt,
        Lookup::Gte,
        Lookup::Lt,
        Lookup::Lte,
        Lookup::IContains,
        Lookup::IStartsWith,
        Lookup::IEndsWith,
        Lookup::In,
        Lookup::IsNull,
        Lookup::IsEmpty,
        Lookup::JsonIContains,
    ];

    /// The name used in query parameters, e.g. `icontains`.
    pub fn as_str(self) -> &'static str {
        match self {
            Lookup::Exact => "exact",
            Lookup::Gt => "gt",
            Lookup::Gte => "gte",
            Lookup::Lt => "lt",
            Lookup::Lte => "lte",
            Lookup::IContains => "icontains",
            Lookup::IStartsWith => "istartswith",
            Lookup::IEndsWith => "iendswith",
            Lookup::In => "in",
            Lookup::IsNull => "isnull",
            Lookup::IsEmpty => "isempty",
            Lookup::JsonIContains => "json_icontains",
        }
    }

    /// The lookup with this name.
    pub fn parse(name: &str) -> Option<Lookup> {
        Lookup::ALL.into_iter().find(|l| l.as_str() == name)
    }
}

impl fmt::Display for Lookup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A filter key, decoded: the field, the lookup, and whether the filter is negated.
///
/// [`encode`](Self::encode) writes it as the SDK sends it; [`parse_filter_key`] reads a key back
/// as the service does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FilterKey<'a> {
    /// The filtered field.
    pub field: &'a str,
    /// How the field is compared with the value.
    pub lookup: Lookup,
    /// Whether the filter is negated (`exclude__`).
    pub exclude: bool,
}

impl<'a> FilterKey<'a> {
    /// A filter on `field` by `lookup`, negated when `exclude`.
    pub fn new(field: &'a str, lookup: Lookup, exclude: bool) -> Self {
        Self {
            field,
            lookup,
            exclude,
        }
    }

    /// The query key. The service reads a key that is a field of the model as an exact match
    /// first, so the bare field name is the exact key of every field but the
    /// [reserved parameters](RESERVED_PARAMS) (`page__exact`, `draft__exact`). An `exclude__`
    /// prefix negates.
    ///
    /// The key reads back as this filter ([`parse_filter_key`]) when the field is one that
    /// `ListQuery` accepts (non-empty, no `__`), the model has no field named like the whole key,
    /// and the key starts with `exclude__` only if the filter is negated: a `gt` filter on a
    /// field `exclude` would be `exclude__gt`, an exclusion on `gt`, which
    /// `ListQuery::validate` refuses.
    ///
    /// ```
    /// use svc_model::records::{FilterKey, Lookup};
    ///
    /// assert_eq!(FilterKey::new("status", Lookup::Exact, false).encode(), "status");
    /// assert_eq!(FilterKey::new("total", Lookup::Gte, false).encode(), "total__gte");
    /// assert_eq!(FilterKey::new("status", Lookup::Exact, true).encode(), "exclude__status");
    /// assert_eq!(FilterKey::new("note", Lookup::IsNull, true).encode(), "exclude__note__isnull");
    /// assert_eq!(FilterKey::new("page", Lookup::Exact, false).encode(), "page__exact");
    /// ```
    pub fn encode(&self) -> String {
        self.to_string()
    }

    /// Whether the encoded key reads as an exclusion although the filter is not one (a lookup
    /// other than `exact` on a field named `exclude` or `exclude_`).
    pub fn reads_as_exclude(&self) -> bool {
        !self.exclude && self.encode().starts_with(EXCLUDE_PREFIX)
    }
}

impl fmt::Display for FilterKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.exclude {
            f.write_str(EXCLUDE_PREFIX)?;
        }
        f.write_str(self.field)?;
        let bare = !self.exclude && RESERVED_PARAMS.contains(&self.field);
        if self.lookup != Lookup::Exact || bare {
            f.write_str(LOOKUP_SEPARATOR)?;
            f.write_str(self.lookup.as_str())?;
        }
        Ok(())
    }
}

/// A filter key the service cannot read: `400`, naming the parameter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilterKeyError {
    /// `{field}__{lookup}` on a field of the model, with a lookup that is not one of
    /// [`Lookup::ALL`].
    #[error("unknown lookup {lookup:?} in filter {key:?}")]
    UnknownLookup {
        /// The whole key.
        key: String,
        /// The field, which the model has.
        field: String,
        /// The lookup that is not one.
        lookup: String,
    },
    /// A key that names no field of the model, with or without a lookup.
    #[error("unknown field {field:?} in filter {key:?}")]
    UnknownField {
        /// The whole key.
        key: String,
        /// What the key would filter on: the part before a known lookup, or the whole key
        /// (without `exclude__`).
        field: String,
    },
}

/// Whether a query parameter of a records list is a filter, for a model that has the fields
/// for which `has_field` is true.
///
/// A [reserved parameter](RESERVED_PARAMS) never is, even when the model has a field of that
/// name (it is filtered as `draft__exact`). Another parameter that starts with `_` is one only
/// when it reads as a filter on a field of the model (`_secret`, `_secret__gt`,
/// `_search__exact` for a field named `_search`); such parameters are otherwise ignored. Every
/// other parameter is a filter, to be read with [`parse_filter_key`].
///
/// ```
/// use svc_model::records::is_filter_param;
///
/// let has_field = |name: &str| ["draft", "_secret", "status"].contains(&name);
/// assert!(is_filter_param("status__in", has_field));
/// assert!(is_filter_param("nope", has_field)); // a filter, on a field the model lacks: 400
/// assert!(is_filter_param("_secret", has_field));
/// assert!(is_filter_param("_secret__gt", has_field));
/// assert!(!is_filter_param("_whatever", has_field));
/// assert!(!is_filter_param("_whatever__gt", has_field));
/// assert!(!is_filter_param("draft", has_field));
/// assert!(is_filter_param("draft__exact", has_field));
/// ```
pub fn is_filter_param(key: &str, has_field: impl Fn(&str) -> bool) -> bool {
    if RESERVED_PARAMS.contains(&key) {
        return false;
    }
    !key.starts_with('_') || parse_filter_key(key, &has_field).is_ok()
}

/// Reads a filter key as the service does, for a model that has the fields for which
/// `has_field` is true.
///
/// In order:
///
/// 1. A key that is a field of the model is an exact match on it (`exclude`, `a__b`,
///    `exclude__x` when the model has fields of those names).
/// 2. Otherwise an `exclude__` prefix negates, and the rest is read: a field of the model is an
///    exact match on it (`exclude__status`);
/// 3. otherwise the rest is split at its last `__` into a field and a lookup
///    (`total__gte`, `exclude__total__gte`, `a__b__gt` for a field `a__b`). The field must be
///    one of the model's, and the lookup one of [`Lookup::ALL`].
///
/// Call [`is_filter_param`] first: this function reads `page` as an exact match on a field
/// `page`, which the service never does.
///
/// ```
/// use svc_model::records::{FilterKey, FilterKeyError, Lookup, parse_filter_key};
///
/// let fields = ["status", "total", "exclude", "a__b"];
/// let has_field = |name: &str| fields.contains(&name);
/// let read = |key| parse_filter_key(key, has_field);
///
/// assert_eq!(read("status"), Ok(FilterKey::new("status", Lookup::Exact, false)));
/// assert_eq!(read("total__gte"), Ok(FilterKey::new("total", Lookup::Gte, false)));
/// assert_eq!(read("exclude__status__in"), Ok(FilterKey::new("status", Lookup::In, true)));
/// // A field name is an exact match first, even when it looks like the grammar.
/// assert_eq!(read("exclude"), Ok(FilterKey::new("exclude", Lookup::Exact, false)));
/// assert_eq!(read("a__b"), Ok(FilterKey::new("a__b", Lookup::Exact, false)));
/// assert_eq!(read("a__b__lt"), Ok(FilterKey::new("a__b", Lookup::Lt, false)));
///
/// assert!(matches!(read("total__regex"), Err(FilterKeyError::UnknownLookup { .. })));
/// assert!(matches!(read("price__gt"), Err(FilterKeyError::UnknownField { field, .. }) if field == "price"));
/// ```
pub fn parse_filter_key(
    key: &str,
    has_field: impl Fn(&str) -> bool,
) -> Result<FilterKey<'_>, FilterKeyError> {
    if has_field(key) {
        return Ok(FilterKey::new(key, Lookup::Exact, false));
    }
    let (exclude, rest) = match key.strip_prefix(EXCLUDE_PREFIX) {
        Some(rest) => (true, rest),
        None => (false, key),
    };
    if has_field(rest) {
        return Ok(FilterKey::new(rest, Lookup::Exact, exclude));
    }
    if let Some((field, lookup)) = rest.rsplit_once(LOOKUP_SEPARATOR) {
        if has_field(field) {
            return match Lookup::parse(lookup) {
                Some(lookup) => Ok(FilterKey::new(field, lookup, exclude)),
                None => Err(FilterKeyError::UnknownLookup {
                    key: key.to_owned(),
                    field: field.to_owned(),
                    lookup: lookup.to_owned(),
                }),
            };
        }
        if Lookup::parse(lookup).is_some() {
            return Err(FilterKeyError::UnknownField {
                key: key.to_owned(),
                field: field.to_owned(),
            });
        }
    }
    Err(FilterKeyError::UnknownField {
        key: key.to_owned(),
        field: rest.to_owned(),
    })
}

/// Bytes percent-encoded in a path segment or a query component: everything but RFC 3986's
/// unreserved characters (`A-Z a-z 0-9 - . _ ~`).
const ENCODE_SET: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes everything in `text` but RFC 3986's unreserved characters
/// (`A-Z a-z 0-9 - . _ ~`): `/`, `?`, `#`, `&`, `=`, `%`, `+`, space and non-ASCII text
/// included, so that the text stays one path segment or one query key or value. Borrows `text`
/// when nothing needs encoding.
///
/// Every crate that writes a URL uses it: identifiers ([`encode_segment`]), the SDK's query
/// strings, the emulator's `next`/`previous` links and its proxy.
///
/// ```
/// use svc_model::records::wire::encode_component;
///
/// assert_eq!(encode_component("a/b c?&=é~"), "a%2Fb%20c%3F%26%3D%C3%A9~");
/// assert!(matches!(encode_component("total__gte"), std::borrow::Cow::Borrowed(_)));
/// ```
///
/// [`encode_segment`]: crate::ident::encode_segment
pub fn encode_component(text: &str) -> Cow<'_, str> {
    utf8_percent_encode(text, ENCODE_SET).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{ListQuery, QueryError};

    /// A model with these fields.
    fn model<'a>(fields: &'a [&'a str]) -> impl Fn(&str) -> bool + Copy + 'a {
        move |name: &str| fields.contains(&name)
    }

    fn ok(field: &str, lookup: Lookup, exclude: bool) -> Result<FilterKey<'_>, FilterKeyError> {
        Ok(FilterKey::new(field, lookup, exclude))
    }

    fn unknown_field(key: &str, field: &str) -> Result<FilterKey<'static>, FilterKeyError> {
        Err(FilterKeyError::UnknownField {
            key: key.to_owned(),
            field: field.to_owned(),
        })
    }

    #[test]
    fn every_lookup_decodes_plain_and_excluded() {
        let has = model(&["qty"]);
        for lookup in Lookup::ALL {
            assert_eq!(
                parse_filter_key(&format!("qty__{lookup}"), has),
                ok("qty", lookup, false)
            );
            assert_eq!(
                parse_filter_key(&format!("exclude__qty__{lookup}"), has),
                ok("qty", lookup, true)
            );
        }
        assert_eq!(
            parse_filter_key("qty", has),
            ok("qty", Lookup::Exact, false)
        );
        assert_eq!(
            parse_filter_key("exclude__qty", has),
            ok("qty", Lookup::Exact, true)
        );
    }

    #[test]
    fn unknown_lookups_and_fields() {
        let has = model(&["qty"]);
        assert_eq!(
            parse_filter_key("qty__regex", has),
            Err(FilterKeyError::UnknownLookup {
                key: "qty__regex".into(),
                field: "qty".into(),
                lookup: "regex".into(),
            })
        );
        assert_eq!(
            parse_filter_key("exclude__qty__regex", has),
            Err(FilterKeyError::UnknownLookup {
                key: "exclude__qty__regex".into(),
                field: "qty".into(),
                lookup: "regex".into(),
            })
        );
        // Lookup names are case-sensitive.
        assert!(matches!(
            parse_filter_key("qty__GT", has),
            Err(FilterKeyError::UnknownLookup { .. })
        ));
        // A known lookup names the field before it; otherwise the whole rest is the field.
        assert_eq!(
            parse_filter_key("foo__gt", has),
            unknown_field("foo__gt", "foo")
        );
        assert_eq!(parse_filter_key("foo", has), unknown_field("foo", "foo"));
        assert_eq!(
            parse_filter_key("exclude__foo", has),
            unknown_field("exclude__foo", "foo")
        );
        assert_eq!(
            parse_filter_key("exclude__foo__in", has),
            unknown_field("exclude__foo__in", "foo")
        );
        assert_eq!(
            parse_filter_key("foo__bar", has),
            unknown_field("foo__bar", "foo__bar")
        );
        // Only the last `__` separates a lookup.
        assert_eq!(
            parse_filter_key("qty__gt__lt", has),
            unknown_field("qty__gt__lt", "qty__gt")
        );
        let e = parse_filter_key("qty__regex", has).unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"unknown lookup "regex" in filter "qty__regex""#
        );
    }

    #[test]
    fn the_empty_key_and_bare_separators() {
        let has = model(&["qty"]);
        assert_eq!(parse_filter_key("", has), unknown_field("", ""));
        assert_eq!(parse_filter_key("__", has), unknown_field("__", "__"));
        assert_eq!(parse_filter_key("__gt", has), unknown_field("__gt", ""));
        assert_eq!(
            parse_filter_key("exclude__", has),
            unknown_field("exclude__", "")
        );
        assert_eq!(
            parse_filter_key("qty__", has),
            Err(FilterKeyError::UnknownLookup {
                key: "qty__".into(),
                field: "qty".into(),
                lookup: "".into(),
            })
        );
        // A model with a field named "" (SQLite allows it) reads these as that field.
        let has = model(&[""]);
        assert_eq!(parse_filter_key("", has), ok("", Lookup::Exact, false));
        assert_eq!(
            parse_filter_key("exclude__", has),
            ok("", Lookup::Exact, true)
        );
        assert_eq!(parse_filter_key("__gt", has), ok("", Lookup::Gt, false));
    }

    #[test]
    fn fields_containing_the_separator() {
        let has = model(&["a__b", "a", "x__in"]);
        assert_eq!(
            parse_filter_key("a__b", has),
            ok("a__b", Lookup::Exact, false)
        );
        assert_eq!(
            parse_filter_key("a__b__gt", has),
            ok("a__b", Lookup::Gt, false)
        );
        assert_eq!(
            parse_filter_key("exclude__a__b", has),
            ok("a__b", Lookup::Exact, true)
        );
        assert_eq!(
            parse_filter_key("exclude__a__b__in", has),
            ok("a__b", Lookup::In, true)
        );
        // A field named like another field's key wins: `x__in` is the field, not `x` by `in`.
        assert_eq!(
            parse_filter_key("x__in", has),
            ok("x__in", Lookup::Exact, false)
        );
        assert_eq!(parse_filter_key("a__gt", has), ok("a", Lookup::Gt, false));
    }

    #[test]
    fn fields_named_like_lookups() {
        let has = model(&["gt", "exact", "in"]);
        assert_eq!(parse_filter_key("gt", has), ok("gt", Lookup::Exact, false));
        assert_eq!(parse_filter_key("gt__gt", has), ok("gt", Lookup::Gt, false));
        assert_eq!(
            parse_filter_key("exact__exact", has),
            ok("exact", Lookup::Exact, false)
        );
        assert_eq!(
            parse_filter_key("exclude__in", has),
            ok("in", Lookup::Exact, true)
        );
        assert_eq!(
            parse_filter_key("exclude__in__in", has),
            ok("in", Lookup::In, true)
        );
        // Without a field of that name, `__gt` is a lookup on an empty field name.
        assert_eq!(parse_filter_key("__gt", has), unknown_field("__gt", ""));
    }

    #[test]
    fn fields_starting_with_exclude() {
        let has = model(&["exclude", "exclude_", "exclude_me", "gt", "exact", "_lt"]);
        assert_eq!(
            parse_filter_key("exclude", has),
            ok("exclude", Lookup::Exact, false)
        );
        assert_eq!(
            parse_filter_key("exclude_", has),
            ok("exclude_", Lookup::Exact, false)
        );
        assert_eq!(
            parse_filter_key("exclude_me", has),
            ok("exclude_me", Lookup::Exact, false)
        );
        assert_eq!(
            parse_filter_key("exclude_me__gt", has),
            ok("exclude_me", Lookup::Gt, false)
        );
        // The fuzz finding: `exclude__exact` and `exclude___lt` are exclusions on `exact` and `_lt`.
        assert_eq!(
            parse_filter_key("exclude__exact", has),
            ok("exact", Lookup::Exact, true)
        );
        assert_eq!(
            parse_filter_key("exclude___lt", has),
            ok("_lt", Lookup::Exact, true)
        );
        assert_eq!(
            parse_filter_key("exclude__gt", has),
            ok("gt", Lookup::Exact, true)
        );
        assert_eq!(
            parse_filter_key("exclude__exclude", has),
            ok("exclude", Lookup::Exact, true)
        );
        assert_eq!(
            parse_filter_key("exclude__exclude__gt", has),
            ok("exclude", Lookup::Gt, true)
        );
        assert_eq!(
            parse_filter_key("exclude__exclude___gt", has),
            ok("exclude_", Lookup::Gt, true)
        );
        // Without a field `gt`, `exclude__gt` is an exclusion on an unknown field.
        let has = model(&["exclude"]);
        assert_eq!(
            parse_filter_key("exclude__gt", has),
            unknown_field("exclude__gt", "gt")
        );
        // A field named like a whole exclusion key is read as that field first.
        let has = model(&["exclude__x", "x"]);
        assert_eq!(
            parse_filter_key("exclude__x", has),
            ok("exclude__x", Lookup::Exact, false)
        );
    }

    #[test]
    fn reserved_params_are_never_filters() {
        let every = model(&[
            "page",
            "_per_page",
            "_no_pagination",
            "_order_by",
            "_search",
            "draft",
            "_secret",
        ]);
        let none = model(&[]);
        for reserved in RESERVED_PARAMS {
            assert!(!is_filter_param(reserved, every), "{reserved}");
            assert!(!is_filter_param(reserved, none), "{reserved}");
            // Their fields are filtered with an explicit lookup.
            let key = FilterKey::new(reserved, Lookup::Exact, false);
            assert_eq!(key.encode(), format!("{reserved}__exact"));
            assert_eq!(parse_filter_key(&key.encode(), every), Ok(key));
            let key = FilterKey::new(reserved, Lookup::Exact, true);
            assert_eq!(key.encode(), format!("exclude__{reserved}"));
            assert_eq!(parse_filter_key(&key.encode(), every), Ok(key));
        }
        // Other `_` parameters are filters only when they name a field exactly.
        assert!(is_filter_param("_secret", every));
        assert!(!is_filter_param("_secret", none));
        assert!(!is_filter_param("_whatever", every));
        assert!(is_filter_param("whatever", none));
        assert!(is_filter_param("", none));
        assert!(is_filter_param("page__gte", none));
        assert!(is_filter_param("draft__exact", none));
        assert!(is_filter_param("exclude__page", none));
    }

    #[test]
    fn page_sizes() {
        assert!((1..=MAX_PER_PAGE).contains(&DEFAULT_PER_PAGE));
        assert_eq!(MAX_PER_PAGE, 10_000);
    }

    #[test]
    fn components_keep_only_unreserved_characters() {
        let all_ascii: String = (0u8..128).map(char::from).collect();
        let encoded = encode_component(&all_ascii);
        let kept: String = encoded
            .split('%')
            .enumerate()
            .map(|(i, part)| if i == 0 { part } else { &part[2..] })
            .collect();
        assert_eq!(
            kept,
            "-.0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"
        );
        assert_eq!(encode_component("é %"), "%C3%A9%20%25");
        assert!(matches!(encode_component("A-z_0.9~"), Cow::Borrowed(_)));
        assert!(matches!(encode_component(""), Cow::Borrowed("")));
    }

    /// A deterministic splitmix64 generator.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        /// A field name from an alphabet of the grammar's characters, or a tricky one.
        fn field(&mut self) -> String {
            const TRICKY: [&str; 16] = [
                "exclude",
                "exclude_",
                "exclude_me",
                "excluded",
                "_exclude",
                "page",
                "draft",
                "_search",
                "_per_page",
                "gt",
                "exact",
                "in",
                "_",
                "a_",
                "_a",
                "isnull",
            ];
            const ALPHABET: &[u8] = b"exclud_gtinaEX-0~ ";
            if self.below(3) == 0 {
                return TRICKY[self.below(TRICKY.len())].to_owned();
            }
            let len = 1 + self.below(10);
            (0..len)
                .map(|_| char::from(ALPHABET[self.below(ALPHABET.len())]))
                .collect()
        }
    }

    /// Whether `ListQuery` accepts `field` as a filter field.
    fn sendable(field: &str) -> bool {
        ListQuery::new().eq(field, 1).validate().is_ok()
    }

    /// Every filter `ListQuery` accepts encodes to a key that decodes back to the same field,
    /// lookup and negation, for any model that has the field (and other fields `ListQuery`
    /// accepts), and that key is a filter parameter.
    #[test]
    fn encoding_then_decoding_gives_back_the_filter() {
        let mut g = Gen(0x5eed_f11e_7e57_0001);
        let mut checked = 0;
        for _ in 0..4000 {
            let field = g.field();
            let lookup = Lookup::ALL[g.below(Lookup::ALL.len())];
            let exclude = g.below(2) == 0;
            let q = if exclude {
                ListQuery::new().exclude(field.clone(), lookup, "v")
            } else {
                ListQuery::new().filter(field.clone(), lookup, "v")
            };
            let key = FilterKey::new(&field, lookup, exclude);
            let pairs = q.to_pairs();
            assert_eq!(pairs[0].0, key.encode(), "{key:?}");
            match q.validate() {
                Ok(()) => {}
                Err(QueryError::Field(_)) => {
                    assert!(!sendable(&field));
                    continue;
                }
                Err(QueryError::ReadsAsExclude { .. }) => {
                    assert!(key.reads_as_exclude(), "{key:?}");
                    assert!(["exclude", "exclude_"].contains(&field.as_str()));
                    continue;
                }
                Err(e) => panic!("{key:?}: {e}"),
            }
            assert!(!key.reads_as_exclude(), "{key:?}");
            let mut fields = vec![field.clone()];
            for _ in 0..g.below(6) {
                let other = g.field();
                if sendable(&other) {
                    fields.push(other);
                }
            }
            let has_field = |name: &str| fields.iter().any(|f| f == name);
            let encoded = key.encode();
            assert!(
                !RESERVED_PARAMS.contains(&encoded.as_str()),
                "{key:?} is sent as a reserved parameter"
            );
            // Keys that start with `_` included: `_a__gt` and `_search__exact` read as filters
            // on the model's fields `_a` and `_search`.
            assert!(is_filter_param(&encoded, has_field), "{key:?} {fields:?}");
            assert_eq!(
                parse_filter_key(&encoded, has_field),
                Ok(key),
                "{encoded:?} with fields {fields:?}"
            );
            checked += 1;
        }
        assert!(checked > 1000, "only {checked} sendable filters");
    }
}
