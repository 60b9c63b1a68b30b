//! The engine's declared list filters beside `_search`, `_order_by` and `_relation`
//! (jet-bridge 1.12.13's `ModelFilterClass`), as it reads them on every database. Each reads
//! `NAME__exact` before `NAME`, and fails (500) when given more than once.
//!
//! `_m2m=relation_table,value` meant to keep the records that reach a row of `relation_table`
//! through two of the ORM's relationships. The engine reads the value with Python's
//! `split(',', 2)`:
//! - an empty value filters nothing;
//! - a value without a comma selects no record (`false()`);
//! - a value with two commas or more fails (500: three parts do not unpack into two);
//! - `relation_table,value` fails (500) on a model that has a relationship (a foreign key to
//!   or from another model, or itself): the filter asks each related relationship for its
//!   `.table`, which SQLAlchemy 1.4's relationships do not have; on a model without one it
//!   selects no record. [decision: stricter] Strict mode refuses it on every model (`400`):
//!   it could only ever select nothing; lenient mode answers as the engine.
//!
//! `_segment=name` reads the request's body for saved SQL segments: on a records request the
//! engine's view has no body, and any non-empty value fails (500).
//!
//! `_semantic_search={"field": ..., "embedding": [...]}` orders by pgvector's cosine distance:
//! a value that is not JSON filters nothing; a JSON value fails (500) without a `field` naming a
//! pgvector column, and [decision: stricter] the emulator, which serves no pgvector column,
//! refuses every JSON value (`400`; lenient mode `500`).

use svc_model::records::wire::ORDER_BY_PARAM;

use crate::EngineError;
use crate::body_filters::declared_not_text;
use crate::list::Selection;
use crate::python::json::parse_py_json;

/// The `_m2m` parameter's name.
pub const M2M_PARAM: &str = "_m2m";

/// The `_segment` parameter's name.
pub const SEGMENT_PARAM: &str = "_segment";

/// The `_semantic_search` parameter's name.
pub const SEMANTIC_SEARCH_PARAM: &str = "_semantic_search";

/// The one value of the declared filter `name` (`name__exact` read first), if any (an empty
/// one is none); `Err` where it is given more than once, which the engine fails on.
pub fn value_of<'s>(selection: &'s Selection, name: &str) -> Result<Option<&'s str>, EngineError> {
    // A body's value that is not text (its text took the query's place in `filters`).
    if let Some(json) = body_value(selection, name) {
        return Err(declared_not_text(name, json, selection.lenient));
    }
    // Most requests have no such key: nothing is allocated then.
    let values = |suffix: &str| -> Vec<&'s str> {
        selection
            .filters
            .iter()
            .filter(|(k, _)| k.strip_prefix(name) == Some(suffix))
            .map(|(_, v)| v.as_str())
            .collect()
    };
    let exact = values("__exact");
    let given = if exact.is_empty() { values("") } else { exact };
    match given.as_slice() {
        [] | [""] => Ok(None),
        [one] => Ok(Some(one)),
        _ => Err(EngineError::engine_fails(
            selection.lenient,
            name,
            format!(
                "{name} is given more than once, which the data engine fails on (500): give it \
                 once."
            ),
        )),
    }
}

/// The value the body gives the declared filter `name` where it is not text (Python's JSON
/// text of it): [`crate::request::selection_with_body`] leaves only those in
/// [`Selection::body`].
pub fn body_value<'s>(selection: &'s Selection, name: &str) -> Option<&'s str> {
    selection
        .body
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// `_search__exact`: how the engine's filter machinery first spells `_search`.
pub const SEARCH_EXACT: &str = "_search__exact";

/// `_order_by__exact`: how the engine's filter machinery first spells `_order_by`.
pub const ORDER_BY_EXACT: &str = "_order_by__exact";

/// The values of a declared filter in `pairs`, in order, as the engine's filter machinery reads
/// them for every view: those of its `exact` spelling (`NAME__exact`) when that is given (an
/// empty one too, which then filters nothing), else those of `name`.
pub fn declared_values(pairs: &[(String, String)], name: &str, exact: &str) -> Vec<String> {
    let values = |key: &str| -> Vec<String> {
        pairs
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .collect()
    };
    let given = values(exact);
    if given.is_empty() {
        values(name)
    } else {
        given
    }
}

/// The selection's `_order_by` values as the engine reads them in every view.
pub fn order_values(selection: &Selection) -> Vec<String> {
    declared_values(&selection.filters, ORDER_BY_PARAM, ORDER_BY_EXACT)
}

/// Whether the selection's declared filters select no record (`Ok(true)`) or filter nothing
/// (`Ok(false)`) on a model that has relationships (`related`) or not; `Err` where the engine
/// fails on them, in its order (`_m2m` first).
pub fn declared_select_nothing(selection: &Selection, related: bool) -> Result<bool, EngineError> {
    let nothing = m2m_selects_nothing(selection, related)?;
    if let Some(value) = value_of(selection, SEGMENT_PARAM)? {
        return Err(EngineError::engine_fails(
            selection.lenient,
            SEGMENT_PARAM,
            format!(
                "_segment={value:?}: the data engine fails (500) on any segment of a records \
                 request (it reads segments from a body the request has not); filter the \
                 records instead."
            ),
        ));
    }
    if let Some(value) = value_of(selection, SEMANTIC_SEARCH_PARAM)?
        && parse_py_json(value).is_ok()
    {
        return Err(EngineError::engine_fails(
            selection.lenient,
            SEMANTIC_SEARCH_PARAM,
            format!(
                "_semantic_search={value:?}: the data engine orders by pgvector's cosine \
                 distance of the field the JSON names, and fails (500) on anything else; the \
                 emulator serves no pgvector column."
            ),
        ));
    }
    Ok(nothing)
}

/// Whether the selection's `_m2m` selects no record (`Ok(true)`) or filters nothing
/// (`Ok(false)`) on a model that has relationships (`related`) or not; `Err` where the engine
/// fails on it, and in strict mode where it misreads it.
fn m2m_selects_nothing(selection: &Selection, related: bool) -> Result<bool, EngineError> {
    let fails = |message: String| EngineError::engine_fails(selection.lenient, M2M_PARAM, message);
    let Some(value) = value_of(selection, M2M_PARAM)? else {
        return Ok(false);
    };
    // Python's `value.split(',', 2)`: at most three parts.
    match value.splitn(3, ',').count() {
        1 => Ok(true),
        2 if selection.lenient && !related => Ok(true),
        2 => Err(fails(format!(
            "_m2m={value:?}: the data engine fails (500) on relation_table,value for a model \
             with foreign keys to or from it, and selects no record for one without: filter \
             the related model with _relation, or use a read-only SQL query."
        ))),
        _ => Err(fails(format!(
            "_m2m={value:?} has more than one comma, which the data engine fails on (500)."
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)], lenient: bool) -> Result<bool, EngineError> {
        let selection = Selection {
            filters: pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            lenient,
            ..Selection::default()
        };
        declared_select_nothing(&selection, true)
    }

    #[test]
    fn the_value_is_read_as_the_engine_splits_it() {
        assert_eq!(read(&[], false).ok(), Some(false));
        assert_eq!(read(&[("_m2m", "")], false).ok(), Some(false));
        assert_eq!(read(&[("_m2m", "tags")], false).ok(), Some(true));
    }

    #[test]
    fn what_the_engine_fails_on_is_refused_or_failed_as_the_mode_says() {
        for pairs in [
            &[("_m2m", "tags,1")][..],
            &[("_m2m", ",1")][..],
            &[("_m2m", "tags,1,2")][..],
            &[("_m2m", "a"), ("_m2m", "b")][..],
        ] {
            let strict = read(pairs, false).unwrap_err();
            assert!(matches!(strict, EngineError::Invalid { .. }), "{strict:?}");
            let lenient = read(pairs, true).unwrap_err();
            assert!(
                matches!(lenient, EngineError::EngineFails { .. }),
                "{lenient:?}"
            );
        }
    }

    #[test]
    fn a_segment_and_a_json_semantic_search_fail_as_on_the_engine() {
        assert_eq!(read(&[("_segment", "")], false).ok(), Some(false));
        assert_eq!(
            read(&[("_semantic_search", "abc")], false).ok(),
            Some(false)
        );
        for pairs in [
            &[("_segment", "x")][..],
            &[("_segment__exact", "x")][..],
            &[("_semantic_search", "1")][..],
            &[("_semantic_search", "{}")][..],
            &[("_semantic_search", "NaN")][..],
            &[("_semantic_search", "a"), ("_semantic_search", "b")][..],
        ] {
            let strict = read(pairs, false).unwrap_err();
            assert!(
                matches!(strict, EngineError::Invalid { .. }),
                "{pairs:?}: {strict:?}"
            );
            let lenient = read(pairs, true).unwrap_err();
            assert!(
                matches!(lenient, EngineError::EngineFails { .. }),
                "{lenient:?}"
            );
        }
    }

    /// On a model without relationships the engine selects nothing: lenient mode answers so,
    /// strict mode refuses the misreading.
    #[test]
    fn a_relation_of_a_model_without_relationships_selects_nothing_in_lenient_mode() {
        let selection = |lenient| Selection {
            filters: vec![("_m2m".to_owned(), "tags,1".to_owned())],
            lenient,
            ..Selection::default()
        };
        assert_eq!(
            declared_select_nothing(&selection(true), false).ok(),
            Some(true)
        );
        assert!(declared_select_nothing(&selection(false), false).is_err());
        assert!(declared_select_nothing(&selection(true), true).is_err());
    }

    #[test]
    fn the_exact_lookup_is_read_first() {
        let pairs = [("_m2m__exact", "tags"), ("_m2m", "tags,1")];
        assert_eq!(read(&pairs, false).ok(), Some(true));
    }
}
