//! The `_m2m` list parameter, as the engine reads it on every database (jet-bridge 1.12's
//! `ModelM2MFilter`), which meant to keep the records that reach a row of `relation_table`
//! whose key is `value` through two of the ORM's relationships.
//!
//! The engine reads the value with Python's `split(',', 2)`:
//! - an empty value filters nothing;
//! - a value without a comma selects no record (`false()`);
//! - a value with two commas or more fails (500: three parts do not unpack into two);
//! - `relation_table,value` fails (500) on a model that has a relationship (a foreign key to
//!   or from another model, or itself): the filter asks each related relationship for its
//!   `.table`, which SQLAlchemy 1.4's relationships do not have; on a model without one it
//!   selects no record. [decision: stricter] The emulator refuses it on every model, `400` in
//!   strict mode and `500` in lenient mode: it could only ever select nothing.
//!
//! A repeated `_m2m` fails on the engine (500). `_m2m__exact` is read before `_m2m`, as for every
//! filter the engine declares.

use crate::engine::EngineError;
use crate::engine::list::Selection;

/// The parameter's name.
pub(crate) const M2M_PARAM: &str = "_m2m";

/// The same with its one lookup, which the engine reads before it.
const M2M_EXACT_PARAM: &str = "_m2m__exact";

/// Whether the selection's `_m2m` selects no record (`Ok(true)`) or filters nothing
/// (`Ok(false)`); `Err` where the engine fails on it.
pub(crate) fn m2m_selects_nothing(selection: &Selection) -> Result<bool, EngineError> {
    let values_of = |key: &str| -> Vec<&str> {
        selection
            .filters
            .iter()
            .filter(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    let exact = values_of(M2M_EXACT_PARAM);
    let given = if exact.is_empty() {
        values_of(M2M_PARAM)
    } else {
        exact
    };
    let fails = |message: String| EngineError::engine_fails(selection.lenient, M2M_PARAM, message);
    let value = match given.as_slice() {
        [] | [""] => return Ok(false),
        [one] => *one,
        _ => {
            return Err(fails(
                "_m2m is given more than once, which the data engine fails on (500): give it \
                 once."
                    .to_owned(),
            ));
        }
    };
    // Python's `value.split(',', 2)`: at most three parts.
    match value.splitn(3, ',').count() {
        1 => Ok(true),
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
        m2m_selects_nothing(&selection)
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
    fn the_exact_lookup_is_read_first() {
        let pairs = [("_m2m__exact", "tags"), ("_m2m", "tags,1")];
        assert_eq!(read(&pairs, false).ok(), Some(true));
    }
}
