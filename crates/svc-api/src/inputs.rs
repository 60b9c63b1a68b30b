//! The body of an action or a workflow run: the inputs wrapped as `{"data": {...}}`
//! (docs/contract.md 5.6), and the one check both groups make before anything is sent.

use bytes::Bytes;
use serde::Serialize;

use crate::error::{Error, Result};

/// `{"data": <inputs>}`.
#[derive(Serialize)]
struct Body<'a> {
    data: &'a serde_json::Map<String, serde_json::Value>,
}

/// The request body for `inputs`, which must serialize to a JSON object: the contract wraps the
/// inputs under `data` and the service answers anything else with a `400`, so it is refused
/// here, before anything is sent. `what` names the call in the message (`action "shop/refund"`).
pub(crate) fn body(what: &str, inputs: impl Serialize) -> Result<Bytes> {
    let value = serde_json::to_value(inputs).map_err(|e| {
        Error::invalid_because(format!("the inputs of {what} could not be serialized"), e)
    })?;
    let serde_json::Value::Object(data) = value else {
        return Err(Error::invalid(format!(
            "the inputs of {what} must be a JSON object of input names to values, not {}: pass a map or a struct (serde_json::json!({{\"id\": 7}})), or serde_json::json!({{}}) when it takes none",
            kind(&value)
        )));
    };
    let bytes = serde_json::to_vec(&Body { data: &data })
        .map_err(|e| Error::invalid_because("the request body could not be serialized", e))?;
    Ok(Bytes::from(bytes))
}

/// What a JSON value is, for the message: never the value itself, which may be personal data.
fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn objects_are_wrapped_and_anything_else_is_refused() {
        let sent = body("action \"shop/refund\"", json!({"id": 7, "note": "late"})).unwrap();
        assert_eq!(sent.as_ref(), br#"{"data":{"id":7,"note":"late"}}"#);
        assert_eq!(body("x", json!({})).unwrap().as_ref(), br#"{"data":{}}"#);

        #[derive(Serialize)]
        struct Refund<'a> {
            id: i64,
            reason: Option<&'a str>,
        }
        let sent = body(
            "x",
            &Refund {
                id: 7,
                reason: None,
            },
        )
        .unwrap();
        assert_eq!(sent.as_ref(), br#"{"data":{"id":7,"reason":null}}"#);
        let map = std::collections::BTreeMap::from([("b", 2), ("a", 1)]);
        assert_eq!(
            body("x", map).unwrap().as_ref(),
            br#"{"data":{"a":1,"b":2}}"#
        );

        for (refused, named) in [
            (json!(null), "not null"),
            (json!(7), "not a number"),
            (json!("secret-value"), "not a string"),
            (json!([1, 2]), "not an array"),
            (json!(true), "not a boolean"),
        ] {
            let err = body("workflow \"wf\"", &refused).unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains("the inputs of workflow \"wf\" must be a JSON object")
                    && text.contains(named),
                "{text}"
            );
            assert!(!text.contains("secret-value"), "{text}");
            assert_eq!(err.sent(), crate::Sent::No);
        }
        // `()` serializes to null: refused too, with the way to say "no inputs".
        let text = body("x", ()).unwrap_err().to_string();
        assert!(text.contains("json!({})"), "{text}");
    }

    #[test]
    fn inputs_that_cannot_be_serialized_are_refused() {
        // A map with non-string keys cannot be a JSON object.
        let map = std::collections::BTreeMap::from([((1, 2), "x")]);
        let err = body("action \"shop/refund\"", map).unwrap_err();
        assert!(
            err.to_string()
                .contains("the inputs of action \"shop/refund\" could not be serialized"),
            "{err}"
        );
        assert_eq!(err.sent(), crate::Sent::No);
    }
}
