//! List envelopes of the data host.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// One page of a list on the data host: `{count, next, previous, results}`.
///
/// `next` and `previous` are absolute URLs of the neighbouring pages, or `None` at either end.
///
/// ```
/// use svc_model::ListPage;
/// let page: ListPage<serde_json::Value> = serde_json::from_str(
///     r#"{"count": 3, "next": "http://h/p?page=2", "previous": null, "results": [1, 2]}"#,
/// ).unwrap();
/// assert_eq!(page.count, 3);
/// assert!(page.has_next());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
pub struct ListPage<T> {
    /// Total number of items matching the query, on all pages.
    pub count: u64,
    /// Absolute URL of the next page, if there is one.
    #[serde(default)]
    pub next: Option<String>,
    /// Absolute URL of the previous page, if there is one.
    #[serde(default)]
    pub previous: Option<String>,
    /// The items of this page.
    pub results: Vec<T>,
}

impl<T> ListPage<T> {
    /// Whether the server says there is a page after this one.
    pub fn has_next(&self) -> bool {
        self.next.is_some()
    }

    /// Maps every item, keeping the envelope.
    pub fn map<U>(self, f: impl FnMut(T) -> U) -> ListPage<U> {
        ListPage {
            count: self.count,
            next: self.next,
            previous: self.previous,
            results: self.results.into_iter().map(f).collect(),
        }
    }
}

impl<T> IntoIterator for ListPage<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.results.into_iter()
    }
}

/// The items of an unpaginated list (`_no_pagination=1`), which servers answer either with a bare
/// JSON array or with a list envelope. Decodes both straight into `Vec<T>`, with no intermediate
/// `serde_json::Value`.
///
/// ```
/// use svc_model::list::ArrayOrPage;
/// let bare: ArrayOrPage<u32> = serde_json::from_str("[1, 2]").unwrap();
/// let env: ArrayOrPage<u32> = serde_json::from_str(r#"{"count":2,"results":[1,2],"next":null}"#).unwrap();
/// assert_eq!(bare.0, env.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayOrPage<T>(pub Vec<T>);

impl<'de, T: DeserializeOwned> Deserialize<'de> for ArrayOrPage<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: DeserializeOwned> Visitor<'de> for V<T> {
            type Value = ArrayOrPage<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON array of items or a list envelope with `results`")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(10_000));
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(ArrayOrPage(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut results = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "results" {
                        if results.is_some() {
                            return Err(de::Error::duplicate_field("results"));
                        }
                        results = Some(map.next_value::<Vec<T>>()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                results
                    .map(ArrayOrPage)
                    .ok_or_else(|| de::Error::missing_field("results"))
            }
        }
        deserializer.deserialize_any(V(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_tolerates_missing_links() {
        let p: ListPage<i32> = serde_json::from_str(r#"{"count":0,"results":[]}"#).unwrap();
        assert!(!p.has_next());
        assert!(p.previous.is_none());
    }

    #[test]
    fn array_or_page_refuses_other_shapes() {
        assert!(serde_json::from_str::<ArrayOrPage<i32>>(r#"{"count":1}"#).is_err());
        assert!(serde_json::from_str::<ArrayOrPage<i32>>("3").is_err());
        assert!(serde_json::from_str::<ArrayOrPage<i32>>(r#"["x"]"#).is_err());
    }
}
