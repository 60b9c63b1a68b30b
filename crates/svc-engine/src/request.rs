//! A records request read from the wire as the data engine reads it, whatever the database: the
//! query string's pairs, a list's [`ListSpec`] (its selection, order and page), Python's `int()`
//! of a paging number, and a [`Listing`] written as the envelope
//! `{"count","next","previous","results"}` with its links (docs/contract.md section 5.1).
//! Read once here, so that every view and every database reads a request alike.

use std::borrow::Cow;
use std::io::Write as _;

use percent_encoding::percent_decode_str;
use svc_model::records::wire::{
    DEFAULT_PER_PAGE, MAX_PER_PAGE, NO_PAGINATION_PARAM, ORDER_BY_PARAM, PAGE_PARAM,
    PER_PAGE_PARAM, RESERVED_PARAMS, SEARCH_PARAM,
};

use crate::declared::{
    M2M_PARAM, SEARCH_EXACT, SEGMENT_PARAM, SEMANTIC_SEARCH_PARAM, declared_values, order_values,
};
use crate::json_text::write_json_str;
use crate::python::json::{PyJson, parse_py_json};
use crate::python::numbers::{py_int, py_strip};
use crate::relation::RELATION_PARAM;
use crate::{ListSpec, Listing, Selection};

/// Every `key=value` pair of a raw query, decoded (`+` is a space, as in HTML forms).
pub fn query_pairs(query: Option<&str>) -> Vec<(String, String)> {
    let Some(query) = query else {
        return Vec::new();
    };
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode_component(key), decode_component(value))
        })
        .collect()
}

/// A query's key or value decoded: `+` is a space, then percent-decoding (invalid UTF-8 as
/// U+FFFD).
pub fn decode_component(raw: &str) -> String {
    let spaced = raw.replace('+', " ");
    percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
}

/// The selection of decoded query pairs: the `_search` values (`declared_values`), and every
/// parameter that is not reserved as a filter candidate, both in the order given. `_order_by`
/// is among the filters too: the engine reads it in every view, so a retrieve, update or
/// delete with a one-character `_order_by` finds nothing, as a list does.
pub fn selection(pairs: &[(String, String)], lenient: bool) -> Selection {
    Selection {
        lenient,
        search: declared_values(pairs, SEARCH_PARAM, SEARCH_EXACT),
        filters: pairs
            .iter()
            .filter(|(key, _)| {
                (key == ORDER_BY_PARAM || !RESERVED_PARAMS.contains(&key.as_str()))
                    && key != SEARCH_EXACT
            })
            .cloned()
            .collect(),
        body: Vec::new(),
    }
}

/// The declared filters, each read as `NAME__exact` first, then `NAME`.
const DECLARED: [&str; 6] = [
    M2M_PARAM,
    ORDER_BY_PARAM,
    RELATION_PARAM,
    SEARCH_PARAM,
    SEGMENT_PARAM,
    SEMANTIC_SEARCH_PARAM,
];

/// The selection of a request whose filters the engine reads from its body too (the method
/// its views see is `POST`: [`crate::body_filters`]): `body` is [`body_filters`]' reading of
/// the body. The engine's `get_filter_value` reads each name from the body first (a member
/// that is not `null`), then from the query; for a declared filter, `NAME__exact` first, then
/// `NAME`, so `body[NAME__exact]`, `query[NAME__exact]`, `body[NAME]`, `query[NAME]` in that
/// order. That is decided here, once: a declared filter's text from the body takes the
/// query's place in [`Selection::filters`] or [`Selection::search`] (`[]`, `{}` and `""`
/// filter nothing), and one that is not text stays in [`Selection::body`] under the bare name
/// for the plan to refuse (`crate::body_filters::declared_not_text`). The columns' filters
/// are read from [`Selection::body`] by `crate::filter::walk_filters`.
///
/// [`body_filters`]: crate::body_filters::body_filters
pub fn selection_with_body(
    pairs: &[(String, String)],
    body: Vec<(String, String)>,
    lenient: bool,
) -> Selection {
    let mut selection = selection(pairs, lenient);
    selection.body = body;
    for name in DECLARED {
        let exact = format!("{name}__exact");
        let in_body = |key: &str| {
            selection
                .body
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        let in_query = pairs.iter().any(|(k, _)| *k == exact);
        let from_body = match in_body(&exact) {
            Some(v) => Some(v),
            None if in_query => None,
            None => in_body(name),
        };
        selection.body.retain(|(k, _)| *k != exact && k != name);
        let Some(json) = from_body else {
            continue;
        };
        // The body's value wins: the query's values of both names no longer count.
        if name == SEARCH_PARAM {
            selection.search.clear();
        } else {
            selection.filters.retain(|(k, _)| *k != exact && k != name);
        }
        match parse_py_json(&json) {
            Ok(PyJson::Str(text)) if name == SEARCH_PARAM => selection.search.push(text),
            Ok(PyJson::Str(text)) => selection.filters.push((name.to_owned(), text)),
            Ok(PyJson::List(items)) if items.is_empty() => {}
            Ok(PyJson::Dict(items)) if items.is_empty() => {}
            _ => selection.body.push((name.to_owned(), json)),
        }
    }
    selection
}

/// The last value of `key`: the engine reads a repeated list parameter's last value.
fn last_value<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// An integer as Python's `int()` reads text: white space around (Python's, Unicode's
/// included), an optional sign, then decimal digits of any script (`٣`, `３`) with single `_`
/// between digits. Values beyond `i64` saturate.
pub fn python_int(text: &str) -> Option<i64> {
    python_int_wide(text).map(|v| v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
}

/// [`python_int`] over 128 bits (saturating there): a page number may pass `i64::MAX`.
pub(crate) fn python_int_wide(text: &str) -> Option<i128> {
    let canonical = py_int(text)?;
    Some(canonical.parse().unwrap_or(if canonical.starts_with('-') {
        i128::MIN
    } else {
        i128::MAX
    }))
}

/// A paging number as the engine reads it: Python's `int()` of the last value, and the
/// default for anything else (`page=last`, `_per_page=`).
fn paging_number(pairs: &[(String, String)], param: &str, fallback: i64) -> i64 {
    last_value(pairs, param)
        .and_then(python_int)
        .unwrap_or(fallback)
}

/// Reads a list's query as the data engine does: the selection, `_order_by`, `page` (from 1;
/// smaller numbers read as 1), `_per_page` (default 25, clamped to 1..=[`MAX_PER_PAGE`]) and
/// `_no_pagination` (any non-empty value turns paging off, `0` and `false` included). A
/// repeated paging parameter counts with its last value; one that is not an integer reads as
/// the default, as in the engine.
pub fn list_spec(pairs: &[(String, String)], lenient: bool) -> ListSpec {
    list_spec_of(pairs, selection(pairs, lenient))
}

/// [`list_spec`] of a request whose filters are read from its body too
/// ([`selection_with_body`]): paging is read from the query alone (the engine's paginator
/// reads `request.get_argument`), the order from the selection (`_order_by` is a filter of
/// the engine's, read from the body first).
pub fn list_spec_with_body(
    pairs: &[(String, String)],
    body: Vec<(String, String)>,
    lenient: bool,
) -> ListSpec {
    list_spec_of(pairs, selection_with_body(pairs, body, lenient))
}

/// The list of `selection`, paged as the query says.
fn list_spec_of(pairs: &[(String, String)], selection: Selection) -> ListSpec {
    // The page keeps its size up to `u64::MAX` (beyond, the engine fails anyway: its offset
    // passes SQLite's 64 bits), so that the links of a page past `i64::MAX` name it exactly.
    let page = last_value(pairs, PAGE_PARAM)
        .and_then(python_int_wide)
        .unwrap_or(1)
        .clamp(1, i128::from(u64::MAX)) as u64;
    let per_page = paging_number(pairs, PER_PAGE_PARAM, i64::from(DEFAULT_PER_PAGE))
        .clamp(1, i64::from(MAX_PER_PAGE));
    // `get_argument` strips the value (Python's `str.strip()`): a value of white space alone
    // is empty, and pages.
    let no_pagination =
        last_value(pairs, NO_PAGINATION_PARAM).is_some_and(|v| !py_strip(v).is_empty());
    ListSpec {
        order_by: order_values(&selection),
        selection,
        page,
        per_page: per_page.unsigned_abs(),
        no_pagination,
    }
}

/// The JSON answer of a list: the envelope of a page, or the bare array of `no_pagination`.
/// The links repeat `pairs` in order, with `page` moved to the end and left out for page 1; a
/// page past the end links back to the page before it.
pub fn list_body(listing: Listing, list_url: &str, pairs: &[(String, String)]) -> Vec<u8> {
    let (count, number, per_page, len, records) = match listing {
        Listing::All(records) => return records.0,
        Listing::Page {
            count,
            number,
            per_page,
            len,
            records,
        } => (count, number, per_page, len, records),
    };
    let mut buf = Vec::with_capacity(records.0.len() + 256);
    let _ = write!(buf, "{{\"count\":{count},\"next\":");
    // As the engine: a next page when this one is not the last, and also after a full last page
    // (the engine's "count may be inaccurate"), which then lists nothing.
    let pages = count.div_ceil(per_page.max(1));
    if number < pages || len == per_page {
        write_link(&mut buf, list_url, pairs, number + 1);
    } else {
        buf.extend_from_slice(b"null");
    }
    buf.extend_from_slice(b",\"previous\":");
    if number > 1 {
        write_link(&mut buf, list_url, pairs, number - 1);
    } else {
        buf.extend_from_slice(b"null");
    }
    buf.extend_from_slice(b",\"results\":");
    buf.extend_from_slice(&records.0);
    buf.push(b'}');
    buf
}

/// Writes the JSON string of the list URL with the same query and page `page` (no `page`
/// parameter for page 1), as the engine's `replace_query_param` and `remove_query_param`
/// write it: the pairs sorted by key (a stable sort, so a repeated key keeps its values in
/// order) and encoded by Python's `urlencode` (`quote_plus`: a space is `+`).
fn write_link(buf: &mut Vec<u8>, base: &str, pairs: &[(String, String)], page: u64) {
    let mut query: Vec<(&str, Cow<'_, str>)> = pairs
        .iter()
        .filter(|(k, _)| k != PAGE_PARAM)
        .map(|(k, v)| (k.as_str(), Cow::Borrowed(v.as_str())))
        .collect();
    if page > 1 {
        query.push((PAGE_PARAM, Cow::Owned(page.to_string())));
    }
    // Python compares strings by code point, which is the order of their UTF-8 bytes.
    query.sort_by(|a, b| a.0.cmp(b.0));
    let mut url = String::with_capacity(base.len() + 64);
    url.push_str(base);
    let mut sep = if base.contains('?') { '&' } else { '?' };
    for (k, v) in &query {
        url.push(sep);
        sep = '&';
        quote_plus(&mut url, k);
        url.push('=');
        quote_plus(&mut url, v);
    }
    write_json_str(buf, &url);
}

/// Python's `urllib.parse.quote_plus` with no safe characters: letters, digits and `_.-~`
/// as they are, a space as `+`, every other byte of the UTF-8 text as `%XX`.
fn quote_plus(out: &mut String, text: &str) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in text.as_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' | b'~' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => {
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 15)]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn link(list: &[(&str, &str)], page: u64) -> String {
        let mut buf = Vec::new();
        write_link(&mut buf, "http://h/m", &pairs(list), page);
        serde_json::from_slice(&buf).unwrap()
    }

    /// Links as the running engine (jet-bridge 1.12.13, Python 3.11) wrote them.
    #[test]
    fn links_sort_their_keys_and_encode_as_python() {
        assert_eq!(
            link(
                &[
                    ("_per_page", "1"),
                    ("zeta", "1"),
                    ("b__isnull", "0"),
                    ("alpha", "x y"),
                    ("alpha", "a"),
                    ("page", "2"),
                ],
                3
            ),
            "http://h/m?_per_page=1&alpha=x+y&alpha=a&b__isnull=0&page=3&zeta=1"
        );
        assert_eq!(
            link(
                &[
                    ("_per_page", "1"),
                    ("q", "€ +&=/?#~-._*!()':@$,;"),
                    ("page", "2")
                ],
                1
            ),
            "http://h/m?_per_page=1&q=%E2%82%AC+%2B%26%3D%2F%3F%23~-._%2A%21%28%29%27%3A%40%24%2C%3B"
        );
        assert_eq!(
            link(
                &[
                    ("_per_page", "1"),
                    ("Z", "1"),
                    ("a", "2"),
                    ("_a", "3"),
                    ("A", "4"),
                    ("é", "5")
                ],
                3
            ),
            "http://h/m?A=4&Z=1&_a=3&_per_page=1&a=2&page=3&%C3%A9=5"
        );
        assert_eq!(
            link(&[("_per_page", "1"), ("x", ""), ("y", "1")], 3),
            "http://h/m?_per_page=1&page=3&x=&y=1"
        );
        // Every `page` is replaced; a repeated `_per_page` keeps both values; text the query
        // decoded (`%ZZ` as it is, a bad UTF-8 byte as U+FFFD) is encoded again.
        assert_eq!(
            link(
                &[
                    ("_per_page", "2"),
                    ("page", "2"),
                    ("page", "3"),
                    ("_per_page", "1")
                ],
                4
            ),
            "http://h/m?_per_page=2&_per_page=1&page=4"
        );
        assert_eq!(
            link(&[("_X Y", "1"), ("_x", "%ZZ"), ("_y", "\u{fffd};a=b")], 1),
            "http://h/m?_X+Y=1&_x=%25ZZ&_y=%EF%BF%BD%3Ba%3Db"
        );
    }

    /// `int()` of the paging values, as the running engine read them.
    #[test]
    fn paging_numbers_are_read_by_python_int() {
        for (text, per_page) in [
            ("٣", 3),
            ("３", 3),
            (" 1 ", 1),
            ("+1", 1),
            ("1_0", 10),
            ("\u{2007}2", 2),
            ("\t2\n", 2),
            ("\u{a0}2", 2),
            ("\u{3000}2", 2),
            ("𝟐2", 22),
            ("᠐᠑2", 12),
            ("-1", 1),
            ("1__0", 25),
            ("_1", 25),
            ("0x2", 25),
            ("2\0", 25),
            ("²", 25),
            ("①", 25),
        ] {
            let spec = list_spec(&pairs(&[("_per_page", text)]), false);
            assert_eq!(spec.per_page, per_page, "_per_page={text:?}");
        }
        assert_eq!(list_spec(&pairs(&[("page", "٢")]), false).page, 2);
    }
}
