//! The model view's extra actions beside list, retrieve, create, update, delete, aggregate and
//! group (jet-bridge 1.12.13, `jet_bridge_base/views/model.py`, routed by
//! `jet_bridge/router.py`'s `add_route_extra_actions`): what their bodies are read into and
//! what they answer, the same on every database. The flows that run them are
//! svc-emulator-core's `flow::extra`.
//!
//! - `POST models/{model}/bulk_create/`: an array, each item created as a create's body is;
//!   the answer is one [`Created`] per item.
//! - `POST models/{model}/reorder/` ([`Reorder`], `serializers/reorder.py`) and
//!   `POST models/{model}/reset_order/` ([`ResetOrder`], `serializers/reset_order.py`): a
//!   serializer of plain fields whose validated data is the answer.
//! - `GET models/{model}/{pk}/get_siblings/` (`utils/siblings.py`): the keys before and after a
//!   record in the list's order ([`siblings_answer`]).

use std::collections::BTreeMap;

use serde_json::{Map, Value as Json};

use crate::EngineError;
use crate::field_input::{InputField, Internal, engine_fails, to_internal};
use crate::python::json::PyJson;

/// The engine's answer to a `bulk_create` whose body is not an array (`400`).
pub const NOT_AN_ARRAY: &str = "Request body should be an array";

/// The message of a field the serializer requires and the body lacks.
const REQUIRED: &str = "this field is required";

/// What became of one item of a `bulk_create` (the engine's `{"success": ...}`).
#[derive(Debug, Clone, PartialEq)]
pub enum Created {
    /// Created and committed: `{"success": true}`.
    Yes,
    /// Refused by the serializer or the database, as a create's `400` names it
    /// (`serialize_validation_error`): `{"success": false, "errors": {field: [messages]}}`.
    Refused(BTreeMap<String, Vec<String>>),
    /// Another exception of the engine's (one a create answers with a `500`):
    /// `{"success": false, "errors": {"non_field_errors": "its text"}}`, the text not in a list
    /// (`str(e)`), as the engine writes it. Lenient mode's answer where the engine fails; the
    /// text is the emulator's.
    Failed(String),
}

impl Created {
    /// How a create's error reads in a `bulk_create`'s answer: the engine's validation errors
    /// by field, its failures as text. `None` for what no item answers: an error of the
    /// request itself (an unknown model), of the emulator, or a refusal by design
    /// (`"error_decision": "stricter"`), which refuses the whole request.
    pub fn of_error(error: &EngineError) -> Option<Created> {
        match error {
            EngineError::Invalid {
                stricter: false,
                fields,
                message,
            } => Some(Created::Refused(if fields.is_empty() {
                BTreeMap::from([("non_field_errors".to_owned(), vec![message.clone()])])
            } else {
                fields.clone()
            })),
            EngineError::EngineFails { message, .. } => Some(Created::Failed(message.clone())),
            _ => None,
        }
    }

    /// The item's answer.
    pub fn json(&self) -> Json {
        let mut out = Map::new();
        out.insert("success".to_owned(), Json::Bool(*self == Created::Yes));
        match self {
            Created::Yes => {}
            Created::Refused(fields) => {
                let errors = fields
                    .iter()
                    .map(|(k, v)| (k.clone(), Json::from(v.clone())))
                    .collect();
                out.insert("errors".to_owned(), Json::Object(errors));
            }
            Created::Failed(text) => {
                let errors = Map::from_iter([("non_field_errors".to_owned(), Json::from(&**text))]);
                out.insert("errors".to_owned(), Json::Object(errors));
            }
        }
        Json::Object(out)
    }
}

/// One field of a serializer, as `Serializer.to_internal_value_item` reads it from the body:
/// `Ok(None)` when the body lacks it (a body that is not an object lacks every field), else
/// its field's `to_internal_value` of the value (`Field.get_value` joins a list's items first,
/// which `to_internal` does). `Err` holds the field's message; a value the field fails on
/// (a JSON object for a `BooleanField`, which `value in TRUE_VALUES` cannot hash) is the
/// engine's failure (500), answered as [`EngineError::engine_fails`] says.
fn field(
    body: &PyJson,
    name: &str,
    input: InputField,
    lenient: bool,
) -> Result<Option<Result<Internal, String>>, EngineError> {
    let Some(value) = body_member(body, name) else {
        return Ok(None);
    };
    if engine_fails(input, value) {
        return Err(EngineError::engine_fails(
            lenient,
            name,
            format!(
                "{name} is read as a boolean, which the data engine cannot do with {} (it fails \
                 with a 500): send true or false.",
                value.kind_name()
            ),
        ));
    }
    Ok(Some(to_internal(input, value)))
}

/// The member `name` of an object body (`None` for another body).
fn body_member<'b>(body: &'b PyJson, name: &str) -> Option<&'b PyJson> {
    match body {
        PyJson::Dict(_) => body.get(name),
        _ => None,
    }
}

/// An `IntegerField`'s value as the statements bind it: `None` for `null`; `Err` (by design,
/// in either mode) past 64 bits, which SQLite's driver cannot bind (the engine fails) and the
/// other databases compare as no key or position they hold.
fn small_int(name: &str, value: Internal) -> Result<Option<i64>, EngineError> {
    match value {
        Internal::Int(text) => text.parse().map(Some).map_err(|_| {
            EngineError::stricter(
                name,
                format!(
                    "{name} is {text}, beyond the 64-bit integers the databases compare keys and \
                     positions with (the data engine fails on SQLite): send a smaller number."
                ),
            )
        }),
        _ => Ok(None),
    }
}

/// The validation errors of a serializer, in its fields' order, as its `400`.
fn invalid(errors: Vec<(&str, String)>) -> EngineError {
    let summary: Vec<String> = errors.iter().map(|(k, m)| format!("{k}: {m}")).collect();
    let fields = errors
        .into_iter()
        .map(|(k, m)| (k.to_owned(), vec![m]))
        .collect();
    EngineError::fields(summary.join("; "), fields)
}

/// The body of a `reorder` (`ReorderSerializer`): an ordering column's values moved within a
/// segment, and one record put at the segment's end.
#[derive(Debug, Clone, PartialEq)]
pub struct Reorder {
    /// `ordering_field` (`CharField`, required): the column moved; `None` when sent `null`
    /// (the engine then fails looking it up).
    pub ordering_field: Option<String>,
    /// `forward` (`BooleanField`, required): the segment's values go down by one (else up).
    pub forward: bool,
    /// `segment_from` (`IntegerField`, required; `null` is a value).
    pub segment_from: Option<i64>,
    /// `segment_to` (`IntegerField`, required).
    pub segment_to: Option<i64>,
    /// `item` (`IntegerField`, required): the key of the record put at `segment_to`.
    pub item: Option<i64>,
    /// `segment_by_ordering_field` (`BooleanField`, default false): the segment's ends are
    /// values of the ordering column, else keys of records whose values they take.
    pub segment_by_ordering_field: bool,
}

impl Reorder {
    /// The serializer's fields, in its order: the body's keys it reads.
    pub const FIELDS: [&'static str; 6] = [
        "ordering_field",
        "forward",
        "segment_from",
        "segment_to",
        "item",
        "segment_by_ordering_field",
    ];

    /// The body read as the serializer reads it: `400` naming each field at fault (`this field
    /// is required`, `not a valid integer`).
    pub fn read(body: &PyJson, lenient: bool) -> Result<Reorder, EngineError> {
        let mut errors = Vec::new();
        let mut take = |name: &'static str, input: InputField| -> Result<_, EngineError> {
            Ok(match field(body, name, input, lenient)? {
                None => {
                    errors.push((name, REQUIRED.to_owned()));
                    None
                }
                Some(Err(message)) => {
                    errors.push((name, message));
                    None
                }
                Some(Ok(value)) => Some(value),
            })
        };
        let ordering_field = take("ordering_field", InputField::Char)?;
        let forward = take("forward", InputField::Boolean)?;
        let segment_from = take("segment_from", InputField::Integer)?;
        let segment_to = take("segment_to", InputField::Integer)?;
        let item = take("item", InputField::Integer)?;
        // A default of false: never required.
        let by_ordering = match field(
            body,
            "segment_by_ordering_field",
            InputField::Boolean,
            lenient,
        )? {
            Some(Ok(Internal::Bool(b))) => b,
            _ => false,
        };
        if !errors.is_empty() {
            return Err(invalid(errors));
        }
        let int = |name: &str, v: Option<Internal>| small_int(name, v.unwrap_or(Internal::None));
        Ok(Reorder {
            ordering_field: match ordering_field {
                Some(Internal::Str(s)) => Some(s),
                _ => None,
            },
            forward: matches!(forward, Some(Internal::Bool(true))),
            segment_from: int("segment_from", segment_from)?,
            segment_to: int("segment_to", segment_to)?,
            item: int("item", item)?,
            segment_by_ordering_field: by_ordering,
        })
    }

    /// The answer: the validated data, each field as it writes it (`representation_data`).
    pub fn answer(&self) -> Json {
        let int = |v: Option<i64>| v.map_or(Json::Null, Json::from);
        let mut out = Map::new();
        out.insert(
            "ordering_field".to_owned(),
            self.ordering_field.clone().map_or(Json::Null, Json::String),
        );
        out.insert("forward".to_owned(), Json::Bool(self.forward));
        out.insert("segment_from".to_owned(), int(self.segment_from));
        out.insert("segment_to".to_owned(), int(self.segment_to));
        out.insert("item".to_owned(), int(self.item));
        out.insert(
            "segment_by_ordering_field".to_owned(),
            Json::Bool(self.segment_by_ordering_field),
        );
        Json::Object(out)
    }
}

/// The body of a `reset_order` (`ResetOrderSerializer`): the selected records numbered 1, 2,
/// ... in an order, in their ordering column.
#[derive(Debug, Clone, PartialEq)]
pub struct ResetOrder {
    /// `ordering_field` (`CharField`, required); `None` when sent `null`.
    pub ordering_field: Option<String>,
    /// `ordering` (`CharField`, optional, nullable): `None` when not sent, `Some(None)` for
    /// `null`.
    pub ordering: Option<Option<String>>,
    /// `value_ordering` (`CharField`, optional, nullable): `FIELD-v1,v2,...`.
    pub value_ordering: Option<Option<String>>,
}

/// `value_ordering` read as the engine's `save` reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueOrdering {
    /// The column compared.
    pub field: String,
    /// The values, in order: a record holding the `i`th sorts `i`th, the others after them.
    pub values: Vec<String>,
}

impl ResetOrder {
    /// The serializer's fields, in its order: the body's keys it reads.
    pub const FIELDS: [&'static str; 3] = ["ordering_field", "ordering", "value_ordering"];

    /// The body read as the serializer reads it (`400` for a missing `ordering_field`).
    pub fn read(body: &PyJson, lenient: bool) -> Result<ResetOrder, EngineError> {
        let text = |v: Internal| match v {
            Internal::Str(s) => Some(s),
            _ => None,
        };
        let Some(ordering_field) = field(body, "ordering_field", InputField::Char, lenient)? else {
            return Err(invalid(vec![("ordering_field", REQUIRED.to_owned())]));
        };
        // A `CharField` refuses nothing: every value has a `str()`.
        let optional = |name: &str| -> Result<Option<Option<String>>, EngineError> {
            Ok(field(body, name, InputField::Char, lenient)?.map(|v| v.ok().and_then(text)))
        };
        Ok(ResetOrder {
            ordering_field: ordering_field.ok().and_then(text),
            ordering: optional("ordering")?,
            value_ordering: optional("value_ordering")?,
        })
    }

    /// The answer: the validated data (the optional fields only when sent).
    pub fn answer(&self) -> Json {
        let text = |v: &Option<String>| v.clone().map_or(Json::Null, Json::String);
        let mut out = Map::new();
        out.insert("ordering_field".to_owned(), text(&self.ordering_field));
        if let Some(ordering) = &self.ordering {
            out.insert("ordering".to_owned(), text(ordering));
        }
        if let Some(value_ordering) = &self.value_ordering {
            out.insert("value_ordering".to_owned(), text(value_ordering));
        }
        Json::Object(out)
    }

    /// `value_ordering` as `save` reads it when it is not empty: `field, values_str =
    /// value_ordering.split('-', 2)`, then the values split on `,`. Anything but exactly one
    /// `-` makes the engine fail (500: too many or not enough values to unpack).
    pub fn value_ordering(&self, lenient: bool) -> Result<Option<ValueOrdering>, EngineError> {
        let Some(Some(text)) = &self.value_ordering else {
            return Ok(None);
        };
        if text.is_empty() {
            return Ok(None);
        }
        let parts: Vec<&str> = text.splitn(3, '-').collect();
        let [field, values] = parts.as_slice() else {
            return Err(EngineError::engine_fails(
                lenient,
                "value_ordering",
                format!(
                    "value_ordering {text:?} is not FIELD-VALUE,VALUE,... with exactly one `-`: \
                     the data engine fails (500) splitting it. A value holding `-` cannot be \
                     sent."
                ),
            ));
        };
        Ok(Some(ValueOrdering {
            field: (*field).to_owned(),
            values: values.split(',').map(str::to_owned).collect(),
        }))
    }

    /// `ordering` as `save` reads it when it is not empty: names separated by `,`, each
    /// descending after a `-`.
    pub fn ordering_names(&self) -> Vec<(String, bool)> {
        let Some(Some(text)) = &self.ordering else {
            return Vec::new();
        };
        if text.is_empty() {
            return Vec::new();
        }
        text.split(',')
            .map(|name| match name.strip_prefix('-') {
                Some(name) => (name.to_owned(), true),
                None => (name.to_owned(), false),
            })
            .collect()
    }
}

/// The answer of `get_siblings`: `{}` when the engine gives up (more than 10 000 records
/// selected, or no row number), else `{"prev": {KEY: value} | null, "next": ...}`.
pub fn siblings_answer(key: &str, siblings: Option<(Option<Json>, Option<Json>)>) -> Json {
    let Some((prev, next)) = siblings else {
        return Json::Object(Map::new());
    };
    let one = |v: Option<Json>| match v {
        Some(v) => Json::Object(Map::from_iter([(key.to_owned(), v)])),
        None => Json::Null,
    };
    Json::Object(Map::from_iter([
        ("prev".to_owned(), one(prev)),
        ("next".to_owned(), one(next)),
    ]))
}

/// The most records `get_siblings` numbers: beyond, it answers `{}`.
pub const MAX_SIBLINGS_COUNT: u64 = 10_000;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::json::parse_py_json;
    use serde_json::json;

    fn body(text: &str) -> PyJson {
        parse_py_json(text).unwrap()
    }

    fn fields(e: EngineError) -> BTreeMap<String, Vec<String>> {
        match e {
            EngineError::Invalid { fields, .. } => fields,
            other => panic!("{other:?}"),
        }
    }

    /// As the running engine answered (SQLite): the validated data, the default included.
    #[test]
    fn a_reorder_body_is_read_as_its_serializer_reads_it() {
        let r = Reorder::read(
            &body(
                r#"{"ordering_field": 5, "forward": "no", "segment_from": " 2 ", "segment_to": true, "item": null}"#,
            ),
            false,
        )
        .unwrap();
        assert_eq!(
            r.answer(),
            json!({"ordering_field": "5", "forward": false, "segment_from": 2, "segment_to": 1,
                   "item": null, "segment_by_ordering_field": false})
        );
        // `maybe` is a true string; a list is joined.
        let r = Reorder::read(
            &body(
                r#"{"ordering_field": "pos", "forward": "maybe", "segment_from": [3], "segment_to": 4, "item": 1, "segment_by_ordering_field": "yes"}"#,
            ),
            false,
        )
        .unwrap();
        assert!(r.forward && r.segment_by_ordering_field);
        assert_eq!(r.segment_from, Some(3));
        let missing = fields(Reorder::read(&body("{}"), false).unwrap_err());
        assert_eq!(missing.len(), 5);
        assert_eq!(missing["item"], ["this field is required"]);
        let wrong = fields(
            Reorder::read(
                &body(
                    r#"{"ordering_field": "pos", "forward": 1, "segment_from": 1.5, "segment_to": "x", "item": 1}"#,
                ),
                false,
            )
            .unwrap_err(),
        );
        assert_eq!(
            wrong.keys().collect::<Vec<_>>(),
            ["segment_from", "segment_to"]
        );
        assert_eq!(wrong["segment_to"], ["not a valid integer"]);
        // A body that is not an object has none of the fields.
        assert_eq!(
            fields(Reorder::read(&body("[1]"), false).unwrap_err()).len(),
            5
        );
        // An object for a boolean: the engine fails.
        let fails = Reorder::read(
            &body(
                r#"{"ordering_field": "pos", "forward": {}, "segment_from": 1, "segment_to": 1, "item": 1}"#,
            ),
            true,
        );
        assert!(matches!(fails, Err(EngineError::EngineFails { .. })));
    }

    #[test]
    fn a_reset_order_body_keeps_what_was_sent() {
        let r = ResetOrder::read(
            &body(r#"{"ordering_field": "pos", "ordering": null}"#),
            false,
        )
        .unwrap();
        assert_eq!(
            r.answer(),
            json!({"ordering_field": "pos", "ordering": null})
        );
        assert!(r.ordering_names().is_empty());
        let r = ResetOrder::read(
            &body(r#"{"ordering_field": "pos", "ordering": "-name,id", "value_ordering": "name-c,a"}"#),
            false,
        )
        .unwrap();
        assert_eq!(
            r.ordering_names(),
            [("name".to_owned(), true), ("id".to_owned(), false)]
        );
        assert_eq!(
            r.value_ordering(false).unwrap(),
            Some(ValueOrdering {
                field: "name".to_owned(),
                values: vec!["c".to_owned(), "a".to_owned()],
            })
        );
        for bad in ["name", "day-2024-01-02"] {
            let r = ResetOrder {
                value_ordering: Some(Some(bad.to_owned())),
                ..r.clone()
            };
            assert!(r.value_ordering(false).is_err(), "{bad}");
        }
        let missing = fields(ResetOrder::read(&body(r#"{"ordering": "a"}"#), false).unwrap_err());
        assert_eq!(missing["ordering_field"], ["this field is required"]);
    }

    #[test]
    fn bulk_outcomes_are_written_as_the_engine_writes_them() {
        assert_eq!(Created::Yes.json(), json!({"success": true}));
        let refused = Created::of_error(&EngineError::field("pos", "not a valid integer"));
        assert_eq!(
            refused.map(|c| c.json()),
            Some(json!({"success": false, "errors": {"pos": ["not a valid integer"]}}))
        );
        let failed = Created::of_error(&EngineError::engine_fails(true, "body", "boom"));
        assert_eq!(
            failed.map(|c| c.json()),
            Some(json!({"success": false, "errors": {"non_field_errors": "boom"}}))
        );
        assert_eq!(
            Created::of_error(&EngineError::stricter("body", "no")),
            None
        );
    }

    #[test]
    fn siblings_are_keyed_by_the_key_column() {
        assert_eq!(siblings_answer("id", None), json!({}));
        assert_eq!(
            siblings_answer("id", Some((None, Some(json!(4))))),
            json!({"prev": null, "next": {"id": 4}})
        );
    }
}
