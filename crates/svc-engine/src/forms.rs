//! Aggregate and group requests read from the wire: the POST bodies (the SDK's) and the
//! engine's GET forms.

use serde_json::{Map, Value as Json};

use crate::{AggregateFunc, AggregateRequest, EngineError, GroupLookup, GroupRequest};
use svc_model::records::wire::ORDER_BY_PARAM;

use crate::declared::{ORDER_BY_EXACT, declared_values};
use crate::request::python_int;

/// The GET forms' parameters (the engine's names).
pub const Y_FUNC: &str = "_y_func";
/// The aggregated column.
pub const Y_COLUMN: &str = "_y_column";
/// A grouping column (repeatable).
pub const X_COLUMN: &str = "_x_column";
/// A grouping column's lookup (repeatable, by position).
pub const X_LOOKUP: &str = "_x_lookup";

/// Reading an aggregate or group request (the engine's [`AggregateRequest`] and
/// [`GroupRequest`]) from a POST body or from the query parameters of the engine's GET form.
///
/// The POST bodies are the SDK's (svc-model's requests): a missing, `null` or empty member is
/// absent, anything else that is not a string is a `400`, functions and lookups must be known,
/// and every error names the member. The GET form is read as the data engine reads it: `_y_func`
/// (required) and `_y_column` by their last value, stripped; `_x_column` and `_x_lookup` by
/// every value, as given; `_per_page` as Python's `int()` clamped to 1..=100000, 10000 when
/// absent or not an integer; every `_order_by` (`_order_by__exact`'s when given, as the engine reads it).
pub trait RequestForm: Sized {
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

/// The last value of `key`, stripped as Python's `str.strip()` does (the engine's
/// `get_argument`); an empty value is a value.
fn last<'a>(params: &'a [(String, String)], key: &str) -> Option<&'a str> {
    params
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| py_strip(v))
}

/// Every value of `key`, as given (the engine's `get_arguments`).
fn all(params: &[(String, String)], key: &str) -> Vec<String> {
    params
        .iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
        .collect()
}

/// Python's `str.strip()`: Unicode white space and the separators U+001C..U+001F.
fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

/// `_y_func`, lower-cased: required (the engine's `MissingArgumentError`, a `400`); an unknown
/// name is the engine's business.
fn y_func(params: &[(String, String)]) -> Result<String, EngineError> {
    last(params, Y_FUNC)
        .map(str::to_lowercase)
        .ok_or_else(|| EngineError::field(Y_FUNC, "Missing argument _y_func"))
}

/// `_per_page` of a group: `int()` of the value, clamped to 1..=100000; the default when absent
/// or not an integer.
fn group_limit(params: &[(String, String)]) -> u64 {
    last(params, svc_model::records::wire::PER_PAGE_PARAM)
        .and_then(python_int)
        .map_or(GroupRequest::DEFAULT_LIMIT, |n| {
            n.clamp(1, GroupRequest::MAX_LIMIT as i64).unsigned_abs()
        })
}

impl RequestForm for AggregateRequest {
    /// Reads the POST body `{"func", "column"?}`.
    fn from_json(body: &Json) -> Result<Self, EngineError> {
        let obj = body_object(body)?;
        Ok(Self {
            func: func_of("func", json_str(obj, "func")?)?.as_str().to_owned(),
            column: json_str(obj, "column")?.map(str::to_owned),
            order_by: Vec::new(),
        })
    }

    /// Reads the GET form `_y_func`, `_y_column`, `_order_by` from decoded query pairs.
    fn from_query(params: &[(String, String)]) -> Result<Self, EngineError> {
        Ok(Self {
            func: y_func(params)?,
            column: last(params, Y_COLUMN).map(str::to_owned),
            order_by: declared_values(params, ORDER_BY_PARAM, ORDER_BY_EXACT),
        })
    }
}

impl RequestForm for GroupRequest {
    /// Reads the POST body `{"x_column", "x_lookup"?, "y_func", "y_column"?}`.
    fn from_json(body: &Json) -> Result<Self, EngineError> {
        let obj = body_object(body)?;
        let x_column = json_str(obj, "x_column")?
            .ok_or_else(|| required("x_column"))?
            .to_owned();
        let lookup = lookup_of("x_lookup", json_str(obj, "x_lookup")?)?;
        Ok(Self {
            x_columns: vec![x_column],
            x_lookups: lookup.map(|l| l.as_str()).into_iter().collect(),
            y_func: func_of("y_func", json_str(obj, "y_func")?)?
                .as_str()
                .to_owned(),
            y_column: json_str(obj, "y_column")?.map(str::to_owned),
            limit: Self::DEFAULT_LIMIT,
            order_by: Vec::new(),
        })
    }

    /// Reads the GET form `_x_column`, `_x_lookup`, `_y_func`, `_y_column`, `_per_page`,
    /// `_order_by`.
    fn from_query(params: &[(String, String)]) -> Result<Self, EngineError> {
        Ok(Self {
            x_columns: all(params, X_COLUMN),
            x_lookups: all(params, X_LOOKUP),
            y_func: y_func(params)?,
            y_column: last(params, Y_COLUMN).map(str::to_owned),
            limit: group_limit(params),
            order_by: declared_values(params, ORDER_BY_PARAM, ORDER_BY_EXACT),
        })
    }
}
