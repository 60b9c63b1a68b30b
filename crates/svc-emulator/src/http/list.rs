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

use crate::engine::convert::write_json_str;
use crate::engine::{ListSpec, Listing, Selection};
use crate::http::AppState;

/// The selection of decoded query pairs: `_search` values, and every parameter that is not
/// reserved as a filter candidate, both in the order given.
pub(crate) fn selection(pairs: &[(String, String)], lenient: bool) -> Selection {
    let mut selection = Selection {
        lenient,
        ..Selection::default()
    };
    for (key, value) in pairs {
        if key == SEARCH_PARAM {
            selection.search.push(value.clone());
        } else if !RESERVED_PARAMS.contains(&key.as_str()) {
            selection.filters.push((key.clone(), value.clone()));
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

/// An integer as Python's `int()` reads text: an optional sign, then digits, with single `_`
/// between digits. Values beyond `i64` saturate.
pub(crate) fn python_int(text: &str) -> Option<i64> {
    python_int_wide(text).map(|v| v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
}

/// [`python_int`] over 128 bits (saturating there): a page number may pass `i64::MAX`.
fn python_int_wide(text: &str) -> Option<i128> {
    let text = text.trim();
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let bytes = digits.as_bytes();
    if bytes.is_empty() || bytes[0] == b'_' || bytes[bytes.len() - 1] == b'_' {
        return None;
    }
    let mut value: i128 = 0;
    let mut previous_underscore = false;
    for &b in bytes {
        match b {
            b'_' if previous_underscore => return None,
            b'_' => previous_underscore = true,
            b'0'..=b'9' => {
                previous_underscore = false;
                let digit = i128::from(b - b'0');
                value = value.saturating_mul(10).saturating_add(digit);
            }
            _ => return None,
        }
    }
    Some(if negative { -value } else { value })
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
pub(crate) fn list_spec(pairs: &[(String, String)], lenient: bool) -> ListSpec {
    // The page keeps its size up to `u64::MAX` (beyond, the engine fails anyway: its offset
    // passes SQLite's 64 bits), so that the links of a page past `i64::MAX` name it exactly.
    let page = last_value(pairs, PAGE_PARAM)
        .and_then(python_int_wide)
        .unwrap_or(1)
        .clamp(1, i128::from(u64::MAX)) as u64;
    let per_page = paging_number(pairs, PER_PAGE_PARAM, i64::from(DEFAULT_PER_PAGE))
        .clamp(1, i64::from(MAX_PER_PAGE));
    let no_pagination =
        last_value(pairs, NO_PAGINATION_PARAM).is_some_and(|v| !v.trim().is_empty());
    ListSpec {
        selection: selection(pairs, lenient),
        order_by: pairs
            .iter()
            .filter(|(k, _)| k == ORDER_BY_PARAM)
            .map(|(_, v)| v.clone())
            .collect(),
        page,
        per_page: per_page.unsigned_abs(),
        no_pagination,
    }
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
/// The links repeat `pairs` in order, with `page` moved to the end and left out for page 1; a
/// page past the end links back to the page before it.
pub(crate) fn list_body(listing: Listing, list_url: &str, pairs: &[(String, String)]) -> Vec<u8> {
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
