//! Lists on the wire, shared by the records, users and teams slices: the query string read into
//! the engine's typed [`ListSpec`], and a [`Listing`] written as the envelope
//! `{"count","next","previous","results"}` with its links (docs/contract.md section 5.1).

use std::borrow::Cow;
use std::io::Write as _;

use axum::http::Uri;
use svc_model::records::wire::{
    DEFAULT_PER_PAGE, MAX_PER_PAGE, NO_PAGINATION_PARAM, ORDER_BY_PARAM, PAGE_PARAM,
    PER_PAGE_PARAM, RESERVED_PARAMS, SEARCH_PARAM, encode_component,
};

use crate::engine::convert::{parse_bool, write_json_str};
use crate::engine::{EngineError, ListSpec, Listing, PageNumber, Selection};
use crate::http::AppState;

/// The selection of decoded query pairs: `_search` values, and every parameter that is not
/// reserved as a filter candidate, both in the order given.
pub(crate) fn selection(pairs: &[(String, String)]) -> Selection {
    let mut selection = Selection::default();
    for (key, value) in pairs {
        if key == SEARCH_PARAM {
            selection.search.push(value.clone());
        } else if !RESERVED_PARAMS.contains(&key.as_str()) {
            selection.filters.push((key.clone(), value.clone()));
        }
    }
    selection
}

/// The last value of `key`: paging parameters given twice take the last one.
fn last_value<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Reads a list's query: the selection, `_order_by`, `page` (>= 1 or `last`), `_per_page` (1 to
/// [`MAX_PER_PAGE`]) and `_no_pagination` (`1/0/true/false`, empty for false). A malformed
/// paging parameter is an invalid request naming it; `_per_page` is checked even with
/// `_no_pagination`.
pub(crate) fn list_spec(pairs: &[(String, String)]) -> Result<ListSpec, EngineError> {
    let page = match last_value(pairs, PAGE_PARAM) {
        None => PageNumber::Number(1),
        Some("last") => PageNumber::Last,
        Some(raw) => match raw.parse::<u64>() {
            Ok(p) if p >= 1 => PageNumber::Number(p),
            _ => {
                return Err(EngineError::field(
                    PAGE_PARAM,
                    format!("Invalid page {raw:?}: expected an integer >= 1 or \"last\"."),
                ));
            }
        },
    };
    let per_page = match last_value(pairs, PER_PAGE_PARAM) {
        None => u64::from(DEFAULT_PER_PAGE),
        Some(raw) => match raw.parse::<u64>() {
            Ok(n) if (1..=u64::from(MAX_PER_PAGE)).contains(&n) => n,
            _ => {
                return Err(EngineError::field(
                    PER_PAGE_PARAM,
                    format!(
                        "Invalid _per_page {raw:?}: expected an integer from 1 to {MAX_PER_PAGE}."
                    ),
                ));
            }
        },
    };
    let no_pagination = match last_value(pairs, NO_PAGINATION_PARAM) {
        None | Some("") => false,
        Some(raw) => parse_bool(raw).ok_or_else(|| {
            EngineError::field(
                NO_PAGINATION_PARAM,
                format!("Invalid _no_pagination {raw:?}: expected true, false, 1 or 0."),
            )
        })?,
    };
    Ok(ListSpec {
        selection: selection(pairs),
        order_by: last_value(pairs, ORDER_BY_PARAM).map(str::to_owned),
        page,
        per_page,
        no_pagination,
    })
}

/// The absolute URL of a list without its query, for the `next` and `previous` links: the path
/// as the client wrote it, minus a trailing slash.
pub(crate) fn list_url(state: &AppState, uri: &Uri) -> String {
    format!(
        "{}{}",
        state.api_base_url(),
        uri.path().trim_end_matches('/')
    )
}

/// The JSON answer of a list: the envelope of a page, or the bare array of `no_pagination`.
/// The links repeat `pairs` in order, with `page` moved to the end and left out for page 1.
pub(crate) fn list_body(listing: Listing, list_url: &str, pairs: &[(String, String)]) -> Vec<u8> {
    let (count, number, last, records) = match listing {
        Listing::All(records) => return records.0,
        Listing::Page {
            count,
            number,
            last,
            records,
        } => (count, number, last, records),
    };
    let mut buf = Vec::with_capacity(records.0.len() + 256);
    let _ = write!(buf, "{{\"count\":{count},\"next\":");
    if number < last {
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
/// parameter for page 1).
fn write_link(buf: &mut Vec<u8>, base: &str, pairs: &[(String, String)], page: u64) {
    let mut url = String::with_capacity(base.len() + 64);
    url.push_str(base);
    let mut sep = if base.contains('?') { '&' } else { '?' };
    let kept = pairs
        .iter()
        .filter(|(k, _)| k != PAGE_PARAM)
        .map(|(k, v)| (k.as_str(), Cow::Borrowed(v.as_str())));
    let page = (page > 1).then(|| (PAGE_PARAM, Cow::Owned(page.to_string())));
    for (k, v) in kept.chain(page) {
        url.push(sep);
        sep = '&';
        // Keys and values percent-encoded as the SDK encodes them (svc-model's wire module).
        url.push_str(&encode_component(k));
        url.push('=');
        url.push_str(&encode_component(&v));
    }
    write_json_str(buf, &url);
}
