//! Aggregate and group requests as the platform's data engine reads them, the same on every
//! database: the request types, the function names it knows, the lookups of a group key, the
//! names of the answer's keys, the text of its query object, and the engine's failures. Each
//! backend plans and runs them in its own SQL (`crate::sqlite`'s `aggregate`, `crate::postgres`'s
//! `aggregate`, which describe the engine's rules in detail).

use serde_json::{Map, Value as Json};

use crate::error::EngineError;
use crate::python::Py;

// The SDK's vocabulary (svc-model): the POST forms read it, and the engine's requests are built
// from it.
pub use svc_model::records::{AggregateFunc, DateUnit, GroupLookup};

/// The function named `name` (the engine compares the lower-cased `_y_func` exactly): `None`
/// for a name the engine does not know (each backend then answers as the engine does), a 400
/// naming `_y_func` for a function of the SDK's vocabulary that the emulator does not compute
/// (`AggregateFunc` is `#[non_exhaustive]`: svc-model may name more functions than the backends
/// here have SQL for).
pub fn known(name: &str) -> Result<Option<AggregateFunc>, EngineError> {
    match AggregateFunc::ALL.into_iter().find(|f| f.as_str() == name) {
        None => Ok(None),
        Some(f) => computed(f).map(Some),
    }
}

/// `func` itself when the emulator computes it, else [`not_computed`].
fn computed(func: AggregateFunc) -> Result<AggregateFunc, EngineError> {
    match func {
        AggregateFunc::Count
        | AggregateFunc::Sum
        | AggregateFunc::Min
        | AggregateFunc::Max
        | AggregateFunc::Avg => Ok(func),
        other => Err(not_computed(other)),
    }
}

/// The 400 for a function the emulator does not compute, naming `_y_func` and the functions it
/// computes. A backend's `match` on a function sends its `_` arm here.
pub fn not_computed(func: AggregateFunc) -> EngineError {
    EngineError::field(
        "_y_func",
        format!(
            "The emulator does not compute the aggregate function {:?}: it computes count, sum, \
             min, max and avg.",
            func.as_str()
        ),
    )
}

/// An aggregate request as the engine reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggregateRequest {
    /// The function's name, lower-cased: `count`, `sum`, `min`, `max`, `avg`, or any other
    /// name, which selects nothing.
    pub func: String,
    /// The column; the primary key when `None`.
    pub column: Option<String>,
    /// Every `_order_by` value given (see the module documentation).
    pub order_by: Vec<String>,
}

impl AggregateRequest {
    /// An aggregate over the primary key.
    pub fn new(func: AggregateFunc) -> Self {
        Self {
            func: func.as_str().to_owned(),
            column: None,
            order_by: Vec::new(),
        }
    }

    /// Aggregates `column` instead of the primary key.
    pub fn column(mut self, column: impl Into<String>) -> Self {
        self.column = Some(column.into());
        self
    }
}

impl From<svc_model::records::AggregateRequest> for AggregateRequest {
    fn from(r: svc_model::records::AggregateRequest) -> Self {
        Self {
            func: r.func.as_str().to_owned(),
            column: r.column,
            order_by: Vec::new(),
        }
    }
}

/// A group request as the engine reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRequest {
    /// The grouping columns, in order (`_x_column`, repeatable; none gives one row).
    pub x_columns: Vec<String>,
    /// The lookup of each grouping column, by position (`_x_lookup`, repeatable, as given).
    pub x_lookups: Vec<String>,
    /// The function's name, lower-cased (as [`AggregateRequest::func`]).
    pub y_func: String,
    /// The aggregated column; the primary key when `None`.
    pub y_column: Option<String>,
    /// The most rows answered.
    pub limit: u64,
    /// Every `_order_by` value given (see the module documentation).
    pub order_by: Vec<String>,
}

impl GroupRequest {
    /// Rows answered when `_per_page` is absent or not an integer (the engine's default).
    pub const DEFAULT_LIMIT: u64 = 10_000;

    /// The most rows answered, whatever `_per_page` says.
    pub const MAX_LIMIT: u64 = 100_000;

    /// Groups by `x_column` and computes `y_func` over the primary key in each group.
    pub fn new(x_column: impl Into<String>, y_func: AggregateFunc) -> Self {
        Self {
            x_columns: vec![x_column.into()],
            x_lookups: Vec::new(),
            y_func: y_func.as_str().to_owned(),
            y_column: None,
            limit: Self::DEFAULT_LIMIT,
            order_by: Vec::new(),
        }
    }
}

impl From<svc_model::records::GroupRequest> for GroupRequest {
    fn from(r: svc_model::records::GroupRequest) -> Self {
        Self {
            x_columns: vec![r.x_column],
            x_lookups: r.x_lookup.map(|l| l.as_str()).into_iter().collect(),
            y_func: r.y_func.as_str().to_owned(),
            y_column: r.y_column,
            limit: Self::DEFAULT_LIMIT,
            order_by: Vec::new(),
        }
    }
}

/// A request the data engine fails on (500): strict mode turns it into a `400` naming `param`
/// at the public entry points, lenient mode answers `500` as the engine does.
pub fn fails(param: &str, message: impl Into<String>) -> EngineError {
    EngineError::EngineFails {
        param: param.to_owned(),
        message: message.into(),
    }
}

/// A database's refusal of a read the engine runs: it re-raises it (`500`), with the database's
/// message (`database` names it).
pub fn read_refused(database: &str, message: &str) -> EngineError {
    fails(
        "non_field_errors",
        format!(
            "{database} refused the query the data engine would run (it answers 500): {message}"
        ),
    )
}

/// Whether the engine answers `0` for a NULL result of `func` (an aggregate over no row, or a
/// group whose values are all NULL): `count`, `sum` and `avg`; `min` and `max` stay `null`.
pub fn null_is_zero(func: AggregateFunc) -> bool {
    matches!(
        func,
        AggregateFunc::Count | AggregateFunc::Sum | AggregateFunc::Avg
    )
}

/// A result of `func` as the engine answers it: `0` for a NULL where [`null_is_zero`].
pub fn zero_if_null(func: AggregateFunc, value: Py) -> Py {
    match value {
        Py::None if null_is_zero(func) => Py::Int("0".to_owned()),
        v => v,
    }
}

/// The aggregate's answer, `{"y_func": value}`.
pub fn y_func(value: Json) -> Json {
    let mut object = Map::new();
    object.insert("y_func".to_owned(), value);
    Json::Object(object)
}

// ---------------------------------------------------------------------------------------------
// SQLAlchemy's text of the engine's query object (an unknown aggregate function)

/// A group lookup (`_x_lookup`) as the engine reads it, whatever the database: split on `_`
/// into a kind and a parameter; `date` (on a column that is not a date: a `400`) with its unit
/// (`day` when absent or empty), `auto` on a date column as `date_day`; `None` (the column
/// itself) for anything else. The database says which units it knows.
pub fn date_unit<'r>(
    column: &str,
    is_date: bool,
    raw: Option<&'r str>,
) -> Result<Option<&'r str>, EngineError> {
    let mut parts = raw.filter(|r| !r.is_empty()).map(|r| r.split('_'));
    let kind = parts.as_mut().and_then(Iterator::next);
    let param = parts.as_mut().and_then(Iterator::next);
    match kind {
        Some("date") if !is_date => Err(EngineError::field(
            "non_field_errors",
            format!("Can't apply date functions to non-date field: {column}"),
        )),
        Some("date") => Ok(Some(param.filter(|p| !p.is_empty()).unwrap_or("day"))),
        Some("auto") if is_date => Ok(Some("day")),
        _ => Ok(None),
    }
}

/// The refusal of a group whose key or value is infinite or NaN ([decision: stricter]): the
/// engine's encoder (Python's `json.dumps`) writes it as `Infinity` or `NaN`, which is not
/// JSON; only Python's reader takes that answer.
pub fn not_json_refused(param: &str, field: &str) -> EngineError {
    EngineError::stricter(
        param,
        format!(
            "Field {field:?} gives this group an infinite or NaN value, which the data engine \
             writes as Infinity or NaN: that answer is not JSON (only Python's reader takes \
             it). Filter those rows out."
        ),
    )
}

/// The name of the `i`th key: `group`, `group_2`, `group_3`, ...
pub fn group_name(i: usize) -> String {
    if i == 0 {
        "group".to_owned()
    } else {
        format!("group_{}", i + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_count_sum_and_avg_make_null_zero() {
        let zero: Vec<AggregateFunc> = AggregateFunc::ALL
            .into_iter()
            .filter(|f| null_is_zero(*f))
            .collect();
        assert_eq!(
            zero,
            [AggregateFunc::Count, AggregateFunc::Sum, AggregateFunc::Avg]
        );
    }

    #[test]
    fn every_function_of_the_sdk_is_computed() {
        for func in AggregateFunc::ALL {
            assert_eq!(known(func.as_str()).ok().flatten(), Some(func), "{func}");
        }
    }

    /// A name the engine does not know is no function (each backend answers as the engine
    /// does); names are compared exactly, lower case.
    #[test]
    fn unknown_names_are_no_function() {
        assert!(matches!(known("median"), Ok(None)));
        assert!(matches!(known("SUM"), Ok(None)));
        assert!(matches!(known(""), Ok(None)));
    }

    /// The refusal of a function the emulator does not compute is a 400 naming `_y_func`, the
    /// function and the ones it does compute.
    #[test]
    fn a_function_not_computed_is_a_400_naming_y_func() {
        match not_computed(AggregateFunc::Avg) {
            EngineError::Invalid {
                message, fields, ..
            } => {
                assert!(message.contains("\"avg\""), "{message}");
                assert!(
                    message.contains("count, sum, min, max and avg"),
                    "{message}"
                );
                assert_eq!(fields.keys().collect::<Vec<_>>(), ["_y_func"]);
            }
            other => panic!("not a 400: {other:?}"),
        }
    }
}
