//! A request's meaning, decided once for every view, as the engine's one filter pipeline
//! reads it (its `filter_queryset`, which its list, retrieve, update, delete, aggregate and
//! group all run): the columns' filters, then its declared filters (`_m2m`, `_order_by`,
//! `_relation`, `_search`, ... read as `NAME__exact` first). A plan is a plain value, the same
//! on every database; `flow/filter.rs` writes it as one `WHERE` through the database's
//! `Dialect`, and the inventory (`svc-engine/src/inventory.rs`) lists what it reads.

use crate::EngineError;
use crate::body_filters::{declared_not_text, order_of_one};
use crate::declared::{body_value, declared_select_nothing, order_values};
use crate::filter::{
    Condition, FilterField, order_selects_nothing, order_terms, search_text, walk_filters,
};
use crate::list::Selection;
use crate::relation::{RelationPath, relation_of};
use svc_model::records::wire::ORDER_BY_PARAM;

/// What a request selects.
#[derive(Debug)]
pub struct Plan<'a> {
    /// The columns' filters, in the engine's order (fields in order, each lookup plain then
    /// `exclude__`).
    pub conditions: Vec<Condition<'a>>,
    /// The declared filters, or why strict mode refuses the request there (a filter the engine
    /// ignores) or the engine fails: read after the columns' filters, as the engine reads
    /// them, so an error in a column's value shows first.
    pub declared: Result<Declared<'a>, EngineError>,
}

/// The engine's declared filters of a request.
#[derive(Debug)]
pub struct Declared<'a> {
    /// `_m2m` without a comma, or a one-character `_order_by`: no row.
    pub nothing: bool,
    /// The `_search` text.
    pub search: Option<&'a str>,
    /// The `_relation` path.
    pub relation: Option<RelationPath>,
}

impl<'a> Plan<'a> {
    /// The plan of `selection` on the model `model` (whose filter fields are `fields`; it has
    /// relationships when `related`).
    pub fn of(
        model: &str,
        fields: &[FilterField<'_>],
        selection: &'a Selection,
        related: bool,
    ) -> Plan<'a> {
        let (conditions, ignored) = walk_filters(model, fields, selection);
        let declared = ignored.and_then(|()| declared(fields, selection, related));
        Plan {
            conditions,
            declared,
        }
    }
}

/// The declared filters, in the engine's order (by name: `_m2m`, `_order_by`, `_relation`,
/// `_search`); the first that fails decides the error.
fn declared<'a>(
    fields: &[FilterField<'_>],
    selection: &'a Selection,
    related: bool,
) -> Result<Declared<'a>, EngineError> {
    let mut nothing = declared_select_nothing(selection, related)?;
    // `_order_by` selects nothing when one character long and fails on an unknown name, in
    // every view (a retrieve's too). From a body, a list or an object of one member selects
    // nothing too (the engine measures its length), and any other value that is not text
    // fails.
    if let Some(json) = body_value(selection, ORDER_BY_PARAM) {
        if !order_of_one(json) {
            return Err(declared_not_text(ORDER_BY_PARAM, json, selection.lenient));
        }
        nothing = true;
    }
    let order = order_values(selection);
    if order_selects_nothing(&order) {
        nothing = true;
    } else if !order.is_empty() {
        order_terms(&order, selection.lenient, 0, |name| {
            fields.iter().position(|f| f.name == name)
        })?;
    }
    let search = search_text(selection)?;
    let relation = relation_of(selection)?;
    Ok(Declared {
        nothing,
        search,
        relation,
    })
}
