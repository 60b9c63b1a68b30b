//! Aggregate and group requests read from the wire: the POST bodies and the engine's GET forms.

use serde_json::{Map, Value as Json};

use crate::engine::{AggregateFunc, AggregateRequest, EngineError, GroupLookup, GroupRequest};

/// Reading an aggregate or group request (svc-model's [`AggregateRequest`] and
/// [`GroupRequest`]) from a POST body or from the query parameters of the engine's GET form, as
/// the service does: a missing, `null` or empty member is absent, anything else that is not a
/// string is a `400`, and every error names the member or parameter.
pub(crate) trait RequestForm: Sized {
    /// Reads the POST body.
    fn from_json(body: &Json) -> Result<Self, EngineError>;

    /// Reads the GET form from decoded query pairs.
    fn from_query(params: &[(String, String)]) -> Result<Self, EngineError>;
}

fn required(field: &str) -> EngineError {
    EngineError::field(field, "This field is required.")
}

fn func_of(field: &str, raw: Option<&str>) -> Result<AggregateFunc, EngineError> {
    let raw = raw
        .filter(|s| !s.is_empty())
        .ok_or_else(|| required(field))?;
    AggregateFunc::parse(raw).ok_or_else(|| {
        EngineError::field(
            field,
            format!("Unknown function {raw:?}: expected count, sum, min, max or avg."),
        )
    })
}

/// The group lookup, `None` when absent (`plain`, see `Resource::group`).
fn lookup_of(field: &str, raw: Option<&str>) -> Result<Option<GroupLookup>, EngineError> {
    match raw.filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(raw) => GroupLookup::parse(raw).map(Some).ok_or_else(|| {
            EngineError::field(
                field,
                format!(
                    "Unknown lookup {raw:?}: expected plain, auto or date_{{second|minute|hour|day|week|month|quarter|year}}."
                ),
            )
        }),
    }
}

/// A string member of a JSON body: absent, `null` and `""` are `None`; other types are a `400`.
fn json_str<'a>(obj: &'a Map<String, Json>, key: &str) -> Result<Option<&'a str>, EngineError> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) if s.is_empty() => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(_) => Err(EngineError::field(key, "Not a valid string.")),
    }
}

fn body_object(body: &Json) -> Result<&Map<String, Json>, EngineError> {
    body.as_object().ok_or_else(|| {
        EngineError::field("non_field_errors", "Invalid data. Expected a dictionary.")
    })
}

fn query<'a>(params: &'a [(String, String)], key: &str) -> Option<&'a str> {
    params
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

impl RequestForm for AggregateRequest {
    /// Reads the POST body `{"func", "column"?}`.
    fn from_json(body: &Json) -> Result<Self, EngineError> {
        let obj = body_object(body)?;
        Ok(Self {
            func: func_of("func", json_str(obj, "func")?)?,
            column: json_str(obj, "column")?.map(str::to_owned),
        })
    }

    /// Reads the GET form `_y_func`, `_y_column` from decoded query pairs.
    fn from_query(params: &[(String, String)]) -> Result<Self, EngineError> {
        Ok(Self {
            func: func_of("_y_func", query(params, "_y_func"))?,
            column: query(params, "_y_column").map(str::to_owned),
        })
    }
}

impl RequestForm for GroupRequest {
    /// Reads the POST body `{"x_column", "x_lookup"?, "y_func", "y_column"?}`.
    fn from_json(body: &Json) -> Result<Self, EngineError> {
        let obj = body_object(body)?;
        Ok(Self {
            x_column: json_str(obj, "x_column")?
                .ok_or_else(|| required("x_column"))?
                .to_owned(),
            x_lookup: lookup_of("x_lookup", json_str(obj, "x_lookup")?)?,
            y_func: func_of("y_func", json_str(obj, "y_func")?)?,
            y_column: json_str(obj, "y_column")?.map(str::to_owned),
        })
    }

    /// Reads the GET form `_x_column`, `_x_lookup`, `_y_func`, `_y_column`.
    fn from_query(params: &[(String, String)]) -> Result<Self, EngineError> {
        Ok(Self {
            x_column: query(params, "_x_column")
                .ok_or_else(|| required("_x_column"))?
                .to_owned(),
            x_lookup: lookup_of("_x_lookup", query(params, "_x_lookup"))?,
            y_func: func_of("_y_func", query(params, "_y_func"))?,
            y_column: query(params, "_y_column").map(str::to_owned),
        })
    }
}
