//! The list query builder.

use super::wire::{FilterKey, LOOKUP_SEPARATOR, Lookup, MAX_PER_PAGE};
use super::wire::{ORDER_BY_PARAM, PAGE_PARAM, PER_PAGE_PARAM, SEARCH_PARAM};

/// A value a filter compares with, written as the text the service parses.
pub trait FilterValue {
    /// The value as query text.
    fn to_query_text(&self) -> String;
}

impl FilterValue for str {
    fn to_query_text(&self) -> String {
        self.to_owned()
    }
}
impl FilterValue for String {
    fn to_query_text(&self) -> String {
        self.clone()
    }
}
impl FilterValue for bool {
    fn to_query_text(&self) -> String {
        if *self { "true" } else { "false" }.to_owned()
    }
}
impl<T: FilterValue + ?Sized> FilterValue for &T {
    fn to_query_text(&self) -> String {
        (**self).to_query_text()
    }
}
macro_rules! display_value {
    ($($t:ty),*) => {$(
        impl FilterValue for $t {
            fn to_query_text(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
display_value!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64, char
);

impl FilterValue for crate::Decimal {
    /// The exact text (`4.50`, `1e-05`): number filters read it as Python's `float()` does.
    fn to_query_text(&self) -> String {
        self.as_str().to_owned()
    }
}

impl FilterValue for crate::Timestamp {
    /// `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` ([`Timestamp::to_record_text`](crate::Timestamp::to_record_text)):
    /// the instant in UTC, the time zone the service stores date-times without an offset in.
    fn to_query_text(&self) -> String {
        self.to_record_text()
    }
}

/// A list query was refused before anything was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// `_per_page` outside `1..=10000`.
    #[error("per_page must be between 1 and {MAX_PER_PAGE}, got {0}")]
    PerPage(u32),
    /// Page 0; pages count from 1.
    #[error("page numbers start at 1, got 0")]
    PageZero,
    /// A field name that cannot be a filter or ordering key.
    #[error("invalid field name {0:?}: it must be non-empty and must not contain `__` or `,`")]
    Field(String),
    /// A value of an `in` filter that holds a comma, which the list syntax cannot carry.
    #[error(
        "a value of the `in` filter on {field:?} contains a comma, which `in` lists cannot carry: {value:?}"
    )]
    CommaInList {
        /// The filtered field.
        field: String,
        /// The refused value.
        value: String,
    },
    /// An `in` filter with no values, which would match nothing by accident.
    #[error("the `in` filter on {0:?} has no values")]
    EmptyList(String),
    /// A filter whose key would read as an exclusion: `exclude__gt` is `exclude` on field `gt`
    /// to the service, not `gt` on field `exclude`. Fields named `exclude` and `exclude_` can be
    /// matched exactly or excluded, but not filtered with another lookup.
    #[error(
        "a `{lookup}` filter on field {field:?} would be sent as {key:?}, which the service reads as an exclusion; fields named `exclude` or `exclude_` can only be matched exactly or excluded"
    )]
    ReadsAsExclude {
        /// The filtered field.
        field: String,
        /// The lookup.
        lookup: Lookup,
        /// The key it would be sent as.
        key: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
struct Filter {
    field: String,
    lookup: Lookup,
    value: String,
    /// The separate values of an `in` filter built with [`ListQuery::is_in`], kept so that
    /// `validate` can refuse values the comma-separated syntax cannot carry.
    list: Option<Vec<String>>,
    exclude: bool,
}

impl Filter {
    fn filter_key(&self) -> FilterKey<'_> {
        FilterKey::new(&self.field, self.lookup, self.exclude)
    }

    /// The query key, written by [`FilterKey::encode`].
    fn key(&self) -> String {
        self.filter_key().encode()
    }
}

/// A records list query: filters, exclusions, ordering, search, page and page size.
///
/// Values of any text reach the server unchanged (quotes, `&`, `=`, `%`, non-ASCII): the query
/// string is percent-encoded by the client. Invalid queries are refused by
/// [`validate`](Self::validate), which the client calls before sending.
///
/// ```
/// use svc_model::records::{ListQuery, Lookup};
///
/// let q = ListQuery::new()
///     .filter("status", Lookup::In, "paid,shipped")
///     .filter("total", Lookup::Gte, 100.5)
///     .exclude("note", Lookup::IsNull, true)
///     .order_by("-ordered_on")
///     .order_by("id")
///     .search("smith")
///     .per_page(50)
///     .page(2);
/// assert!(q.validate().is_ok());
/// assert_eq!(
///     q.to_pairs(),
///     vec![
///         ("status__in".to_string(), "paid,shipped".to_string()),
///         ("total__gte".to_string(), "100.5".to_string()),
///         ("exclude__note__isnull".to_string(), "true".to_string()),
///         ("_order_by".to_string(), "-ordered_on,id".to_string()),
///         ("_search".to_string(), "smith".to_string()),
///         ("page".to_string(), "2".to_string()),
///         ("_per_page".to_string(), "50".to_string()),
///     ]
/// );
/// assert!(ListQuery::new().per_page(0).validate().is_err());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[must_use]
pub struct ListQuery {
    filters: Vec<Filter>,
    order_by: Vec<String>,
    search: Option<String>,
    page: Option<u32>,
    per_page: Option<u32>,
}

impl ListQuery {
    /// An empty query: first page, 25 records, newest primary key first.
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps records whose `field` matches `value` by `lookup`. Several filters all apply (AND).
    pub fn filter(
        mut self,
        field: impl Into<String>,
        lookup: Lookup,
        value: impl FilterValue,
    ) -> Self {
        self.filters.push(Filter {
            field: field.into(),
            lookup,
            value: value.to_query_text(),
            list: None,
            exclude: false,
        });
        self
    }

    /// Keeps records whose `field` equals `value`.
    pub fn eq(self, field: impl Into<String>, value: impl FilterValue) -> Self {
        self.filter(field, Lookup::Exact, value)
    }

    /// Keeps records whose `field` equals one of `values`.
    pub fn is_in<V: FilterValue>(
        self,
        field: impl Into<String>,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        let values: Vec<String> = values.into_iter().map(|v| v.to_query_text()).collect();
        let mut q = self.filter(field, Lookup::In, values.join(","));
        if let Some(last) = q.filters.last_mut() {
            last.list = Some(values);
        }
        q
    }

    /// Drops records whose `field` matches `value` by `lookup` (`exclude__field__lookup`).
    /// Records whose field is NULL are kept, as the service does.
    pub fn exclude(
        mut self,
        field: impl Into<String>,
        lookup: Lookup,
        value: impl FilterValue,
    ) -> Self {
        self.filters.push(Filter {
            field: field.into(),
            lookup,
            value: value.to_query_text(),
            list: None,
            exclude: true,
        });
        self
    }

    /// Orders by `field`, ascending; `-field` orders descending. Several calls give tie-breakers
    /// in order; the primary key, descending, is always the last one.
    pub fn order_by(mut self, field: impl Into<String>) -> Self {
        self.order_by.push(field.into());
        self
    }

    /// Orders by `field`, descending.
    pub fn order_by_desc(self, field: impl AsRef<str>) -> Self {
        let field = format!("-{}", field.as_ref());
        self.order_by(field)
    }

    /// Keeps records with `text` in a text column (ignoring case) or equal to a numeric column.
    pub fn search(mut self, text: impl Into<String>) -> Self {
        self.search = Some(text.into());
        self
    }

    /// The page to read, from 1.
    pub fn page(mut self, page: u32) -> Self {
        self.page = Some(page);
        self
    }

    /// Records per page, 1 to 10000 (default 25).
    pub fn per_page(mut self, per_page: u32) -> Self {
        self.per_page = Some(per_page);
        self
    }

    /// The page set with [`page`](Self::page), if any.
    pub fn page_number(&self) -> Option<u32> {
        self.page
    }

    /// The page size set with [`per_page`](Self::per_page), if any.
    pub fn page_size(&self) -> Option<u32> {
        self.per_page
    }

    /// Checks the query: page from 1, page size 1 to 10000, field names that can be keys,
    /// `in` values without commas.
    pub fn validate(&self) -> Result<(), QueryError> {
        if let Some(n) = self.per_page
            && !(1..=MAX_PER_PAGE).contains(&n)
        {
            return Err(QueryError::PerPage(n));
        }
        if self.page == Some(0) {
            return Err(QueryError::PageZero);
        }
        for f in &self.filters {
            check_field(&f.field)?;
            if f.filter_key().reads_as_exclude() {
                return Err(QueryError::ReadsAsExclude {
                    field: f.field.clone(),
                    lookup: f.lookup,
                    key: f.key(),
                });
            }
            if let Some(values) = &f.list {
                if values.is_empty() {
                    return Err(QueryError::EmptyList(f.field.clone()));
                }
                if let Some(value) = values.iter().find(|v| v.contains(',')) {
                    return Err(QueryError::CommaInList {
                        field: f.field.clone(),
                        value: value.clone(),
                    });
                }
            }
        }
        for o in &self.order_by {
            check_field(o.strip_prefix('-').unwrap_or(o))?;
        }
        Ok(())
    }

    /// The query as decoded `(key, value)` pairs, in a stable order: filters as added,
    /// `_order_by`, `_search`, `page`, `_per_page`.
    pub fn to_pairs(&self) -> Vec<(String, String)> {
        let mut pairs = Vec::with_capacity(self.filters.len() + 4);
        for f in &self.filters {
            pairs.push((f.key(), f.value.clone()));
        }
        if !self.order_by.is_empty() {
            pairs.push((ORDER_BY_PARAM.to_owned(), self.order_by.join(",")));
        }
        if let Some(s) = &self.search {
            pairs.push((SEARCH_PARAM.to_owned(), s.clone()));
        }
        if let Some(p) = self.page {
            pairs.push((PAGE_PARAM.to_owned(), p.to_string()));
        }
        if let Some(n) = self.per_page {
            pairs.push((PER_PAGE_PARAM.to_owned(), n.to_string()));
        }
        pairs
    }

    /// The filter and search pairs only: what aggregate and group apply.
    pub fn filter_pairs(&self) -> Vec<(String, String)> {
        let only_filters = ListQuery {
            filters: self.filters.clone(),
            search: self.search.clone(),
            ..ListQuery::default()
        };
        only_filters.to_pairs()
    }
}

fn check_field(field: &str) -> Result<(), QueryError> {
    if field.is_empty()
        || field.contains(LOOKUP_SEPARATOR)
        || field.contains(',')
        || field.starts_with('-')
    {
        return Err(QueryError::Field(field.to_owned()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_size_bounds() {
        for ok in [1, 25, MAX_PER_PAGE] {
            assert!(ListQuery::new().per_page(ok).validate().is_ok());
        }
        assert_eq!(
            ListQuery::new().per_page(0).validate(),
            Err(QueryError::PerPage(0))
        );
        assert_eq!(
            ListQuery::new().per_page(MAX_PER_PAGE + 1).validate(),
            Err(QueryError::PerPage(MAX_PER_PAGE + 1))
        );
        assert_eq!(
            ListQuery::new().page(0).validate(),
            Err(QueryError::PageZero)
        );
    }

    #[test]
    fn every_lookup_has_a_key() {
        for lookup in Lookup::ALL {
            let pairs = ListQuery::new().filter("f", lookup, "v").to_pairs();
            let want = if lookup == Lookup::Exact {
                "f".to_owned()
            } else {
                format!("f__{lookup}")
            };
            assert_eq!(pairs[0].0, want);
            assert_eq!(Lookup::parse(lookup.as_str()), Some(lookup));
            let pairs = ListQuery::new().exclude("f", lookup, "v").to_pairs();
            let want = if lookup == Lookup::Exact {
                "exclude__f".to_owned()
            } else {
                format!("exclude__f__{lookup}")
            };
            assert_eq!(pairs[0].0, want);
        }
    }

    #[test]
    fn reserved_field_names_use_explicit_exact() {
        let pairs = ListQuery::new()
            .eq("page", 3)
            .eq("_search", 1)
            .eq("exclude_me", 1)
            .eq("draft", true)
            .to_pairs();
        assert_eq!(pairs[0].0, "page__exact");
        assert_eq!(pairs[1].0, "_search__exact");
        // Not a paging parameter, and the service reads a field name as an exact match first.
        assert_eq!(pairs[2].0, "exclude_me");
        // `draft` is the client's draft switch, never a filter.
        assert_eq!(pairs[3], ("draft__exact".to_owned(), "true".to_owned()));
    }

    /// Found by the `list_query` fuzz target: a field named `exclude` or `exclude_` was sent as
    /// `exclude__exact` / `exclude___lt`, which the service reads as an exclusion on another
    /// field (`exact`, `_lt`).
    #[test]
    fn fields_named_exclude_never_read_as_an_exclusion() {
        for field in ["exclude", "exclude_"] {
            let q = ListQuery::new().eq(field, 1).exclude(field, Lookup::Gt, 2);
            assert!(q.validate().is_ok());
            let pairs = q.to_pairs();
            assert_eq!(pairs[0].0, field);
            assert_eq!(pairs[1].0, format!("exclude__{field}__gt"));
            for lookup in Lookup::ALL.into_iter().filter(|l| *l != Lookup::Exact) {
                let err = ListQuery::new()
                    .filter(field, lookup, "x")
                    .validate()
                    .unwrap_err();
                assert!(
                    matches!(&err, QueryError::ReadsAsExclude { field: f, .. } if f == field),
                    "{err}"
                );
            }
        }
        // Any other field with a prefix like it is fine.
        for field in ["exclude_me", "excluded", "_exclude"] {
            assert!(
                ListQuery::new()
                    .filter(field, Lookup::Lt, 1)
                    .validate()
                    .is_ok()
            );
        }
    }

    #[test]
    fn values_are_kept_verbatim() {
        let nasty = "O'Brien, \"Jr\" & co = 100% é ' OR 1=1 --";
        let pairs = ListQuery::new()
            .eq("name", nasty)
            .filter("name", Lookup::IContains, nasty)
            .to_pairs();
        assert_eq!(pairs[0].1, nasty);
        assert_eq!(pairs[1].1, nasty);
    }

    #[test]
    fn in_lists() {
        let q = ListQuery::new().is_in("id", [1, 2, 3]);
        assert_eq!(q.to_pairs()[0], ("id__in".to_owned(), "1,2,3".to_owned()));
        assert!(q.validate().is_ok());
        let bad = ListQuery::new().is_in("city", ["Paris", "Rome, Italy"]);
        assert!(matches!(
            bad.validate(),
            Err(QueryError::CommaInList { .. })
        ));
        let empty = ListQuery::new().is_in("id", Vec::<i64>::new());
        assert_eq!(empty.validate(), Err(QueryError::EmptyList("id".into())));
    }

    #[test]
    fn bad_field_names() {
        for bad in ["", "a__b", "a,b"] {
            assert!(ListQuery::new().eq(bad, 1).validate().is_err(), "{bad:?}");
            assert!(ListQuery::new().order_by(bad).validate().is_err() || bad.is_empty());
        }
        assert!(ListQuery::new().order_by("-").validate().is_err());
        assert!(ListQuery::new().order_by("--x").validate().is_err());
    }

    #[test]
    fn filter_pairs_leave_out_paging_and_order() {
        let q = ListQuery::new()
            .eq("a", 1)
            .order_by("a")
            .page(2)
            .per_page(5)
            .search("x");
        assert_eq!(
            q.filter_pairs(),
            vec![
                ("a".to_owned(), "1".to_owned()),
                ("_search".to_owned(), "x".to_owned())
            ]
        );
    }
}
