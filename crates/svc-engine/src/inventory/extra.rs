//! The inventory's entries of the model view's extra actions (`bulk_create`, `reorder`,
//! `reset_order`, `get_siblings`: `crate::extra_actions`), listed in [`INVENTORY`](super::INVENTORY)
//! where they belong.

use super::{Decision, Entry, Place, View};

/// The views of `reorder` and `reset_order`.
const MOVES: &[View] = &[View::Reorder, View::ResetOrder];

/// `get_siblings`.
pub(super) const SIBLINGS: Entry = Entry {
    place: Place::Route,
    name: "GET {pk}/get_siblings",
    views: &[View::Siblings],
    reading: "`{\"prev\": {KEY: value} | null, \"next\": ...}`: the records around the record's row number in the list's order (the filters, `_order_by`, then the key descending), the key as the ORM loaded it (a `numeric` key a float); `{}` when the selection counts more than 10 000 (the list's count); `404` where the filters do not select the record",
    decision: Decision::Served,
    example: Some(("GET", "{pk}/get_siblings", "_order_by={text}")),
};

/// `get_siblings` of a key rows share.
pub(super) const SIBLINGS_SHARED_KEY: Entry = Entry {
    place: Place::Route,
    name: "GET {pk}/get_siblings of a key several rows share",
    views: &[View::Siblings],
    reading: "its row number is read with `.scalar()`: fails (500)",
    decision: Decision::Stricter("the engine fails (lenient: `500`)"),
    example: None,
};

/// `bulk_create`.
pub(super) const BULK_CREATE: Entry = Entry {
    place: Place::Route,
    name: "POST bulk_create, get_records/bulk_create",
    views: &[View::BulkCreate],
    reading: "a JSON array (anything else: `400` `Request body should be an array`; `[]` is `[]` whatever the model); each item created as a create's body is and committed on its own; `200`, per item `{\"success\": true}` or `{\"success\": false, \"errors\": ...}` (its validation's or the database's errors as a create's `400` names them; another exception's text, not in a list), the items before and after a refused one created",
    decision: Decision::Served,
    example: Some(("POST", "bulk_create", r#"[{"{number}": "old"}]"#)),
};

/// `bulk_create` with an item a create refuses by design.
pub(super) const BULK_CREATE_REFUSED: Entry = Entry {
    place: Place::Route,
    name: "bulk_create with an item a create refuses by design (a key the model lacks, a date-time read otherwise, a value the engine fails on) or holding a lone surrogate",
    views: &[View::BulkCreate],
    reading: "the item is created, or answered with the text of the engine's exception",
    decision: Decision::Stricter(
        "the whole request is refused, before anything is written, naming the item",
    ),
    example: Some(("POST", "bulk_create", r#"[{"no_such_field": 1}]"#)),
};

/// `reorder`.
pub(super) const REORDER: Entry = Entry {
    place: Place::Route,
    name: "POST reorder, get_records/reorder",
    views: &[View::Reorder],
    reading: "`ReorderSerializer` (ordering_field, forward, segment_from, segment_to, item, segment_by_ordering_field=false; missing: `400`), then through the filters (the body's other members first, as a POST's): the ordering column's values from segment_from to segment_to (values, or the values of the records with those keys) minus 1 (forward) or plus 1, then item's set to segment_to's, one transaction; `200` with the validated body",
    decision: Decision::Served,
    example: Some((
        "POST",
        "reorder",
        r#"{"ordering_field": "{number}", "forward": true, "segment_from": 100, "segment_to": 200, "item": 0, "segment_by_ordering_field": true}"#,
    )),
};

/// `reset_order`.
pub(super) const RESET_ORDER: Entry = Entry {
    place: Place::Route,
    name: "POST reset_order, get_records/reset_order",
    views: &[View::ResetOrder],
    reading: "`ResetOrderSerializer` (ordering_field; ordering, value_ordering `FIELD-v1,v2`, optional), then through the filters: the selected records read in the order of `_order_by`, then value_ordering's values (compared as text), then ordering, else as the database reads them, numbered 1, 2, ... where their value differs, one transaction; `200` with the validated body",
    decision: Decision::Served,
    example: Some((
        "POST",
        "reset_order",
        r#"{"ordering_field": "{number}", "{text}": "zzz-no-such-text"}"#,
    )),
};

/// What `reorder` and `reset_order` fail on.
pub(super) const MOVES_FAIL: Entry = Entry {
    place: Place::Body,
    name: "reorder, reset_order: ordering_field, ordering, value_ordering naming no column, value_ordering without exactly one `-`, a null segment end or one whose record is not selected",
    views: MOVES,
    reading: "`getattr`, `split`, a comparison with `None` or an attribute of `None`: fails (500)",
    decision: Decision::Stricter("the engine fails (lenient: `500`)"),
    example: Some((
        "POST",
        "reset_order",
        r#"{"ordering_field": "no_such_field"}"#,
    )),
};

/// Positions in what is no number.
pub(super) const MOVES_NOT_NUMBERS: Entry = Entry {
    place: Place::Body,
    name: "reorder, reset_order with an ordering_field that is no number column, reorder of a model whose key is no integer",
    views: MOVES,
    reading: "positions written and moved by SQL arithmetic, the key compared with integers: PostgreSQL fails (500), SQLite and MySQL compare and store the numbers as text",
    decision: Decision::Stricter("the engine fails or misreads"),
    example: Some((
        "POST",
        "reorder",
        r#"{"ordering_field": "{text}", "forward": true, "segment_from": 1, "segment_to": 2, "item": 0, "segment_by_ordering_field": true}"#,
    )),
};

/// Filters `reorder`'s ORM cannot evaluate.
pub(super) const REORDER_UNEVALUABLE: Entry = Entry {
    place: Place::Query,
    name: "reorder with _order_by, _search, _relation, or a lookup its ORM cannot evaluate (icontains, istartswith, iendswith, json_icontains, a JSON column's exact and in)",
    views: &[View::Reorder],
    reading: "`Query.update` evaluates the filters in Python: fails (500)",
    decision: Decision::Stricter("the engine fails (lenient: `500`)"),
    example: Some((
        "POST",
        "reorder",
        r#"{"ordering_field": "{number}", "forward": true, "segment_from": 1, "segment_to": 2, "item": 0, "segment_by_ordering_field": true, "{text}__icontains": "a"}"#,
    )),
};

/// Filters evaluated on the loaded segment.
pub(super) const REORDER_LOADED: Entry = Entry {
    place: Place::Query,
    name: "reorder finding its segment by keys, with a date's gt gte lt lte, or of a model whose key is promoted or one column of several",
    views: &[View::Reorder],
    reading: "the filters are evaluated on the loaded records (a date against text: fails); `.first()` takes any row of a shared key",
    decision: Decision::Stricter("the engine fails, or its answer depends on the row read first"),
    example: None,
};

/// A member that is the serializer's and a filter.
pub(super) const MOVES_BOTH: Entry = Entry {
    place: Place::Body,
    name: "reorder, reset_order: a body member that is both the serializer's field and a column",
    views: MOVES,
    reading: "read by the serializer and as a filter",
    decision: Decision::Stricter("the engine misreads a parameter of the action as a filter"),
    example: None,
};

/// `reset_order` without a primary key.
pub(super) const RESET_ORDER_NO_KEY: Entry = Entry {
    place: Place::Route,
    name: "reset_order on a model without a primary key",
    views: &[View::ResetOrder],
    reading: "rows sharing the promoted key are one record: each gets the last number given to any",
    decision: Decision::Stricter("the engine misreads rows as one record"),
    example: None,
};
