//! Aggregate and group operations, and the parsing of their POST bodies and GET query forms.

use rusqlite::params_from_iter;
use serde_json::{Map, Value as Json};

use crate::engine::convert::value_to_json;
use crate::engine::error::RecordsError;
use crate::engine::filter::build_where;
use crate::engine::resource::Resource;
use crate::engine::schema::{Field, FieldKind, Model, prepare};

// The requests and their vocabulary are svc-model's, the SDK's own types: the emulator reads
// the same wire data into them, with its own field errors ([`RequestForm`]).
pub use svc_model::records::{
    AggregateFunc, AggregateRequest, DateUnit, GroupLookup, GroupRequest,
};

/// The SQL of an aggregate over `col`. Over no rows `sum` and `avg` give 0 (the contract), and
/// `count` 0 by nature; `min` and `max` give NULL.
fn agg_sql(func: AggregateFunc, col: &str) -> String {
    match func {
        AggregateFunc::Count => format!("count({col})"),
        AggregateFunc::Sum => format!("coalesce(sum({col}), 0)"),
        AggregateFunc::Min => format!("min({col})"),
        AggregateFunc::Max => format!("max({col})"),
        AggregateFunc::Avg => format!("coalesce(avg({col}), 0)"),
    }
}

/// The kind of an aggregate's result: `min` and `max` keep the field's kind.
fn agg_result_kind(func: AggregateFunc, field: &Field) -> FieldKind {
    match func {
        AggregateFunc::Min | AggregateFunc::Max => field.kind,
        _ => FieldKind::Real,
    }
}

/// The SQL truncating a date or date-time column to a unit, as ISO text (a week is its Monday).
fn date_sql(unit: DateUnit, col: &str) -> String {
    match unit {
        DateUnit::Second => format!("strftime('%Y-%m-%dT%H:%M:%S', {col})"),
        DateUnit::Minute => format!("strftime('%Y-%m-%dT%H:%M:00', {col})"),
        DateUnit::Hour => format!("strftime('%Y-%m-%dT%H:00:00', {col})"),
        DateUnit::Day => format!("date({col})"),
        DateUnit::Week => format!("date({col}, 'weekday 0', '-6 days')"),
        DateUnit::Month => format!("strftime('%Y-%m-01', {col})"),
        DateUnit::Quarter => format!(
            "printf('%s-%02d-01', strftime('%Y', {col}), \
             ((CAST(strftime('%m', {col}) AS INTEGER) - 1) / 3) * 3 + 1)"
        ),
        DateUnit::Year => format!("strftime('%Y-01-01', {col})"),
    }
}

/// Reading an aggregate or group request (svc-model's [`AggregateRequest`] and
/// [`GroupRequest`]) from a POST body or from the query parameters of the engine's GET form, as
/// the service does: a missing, `null` or empty member is absent, anything else that is not a
/// string is a `400`, and every error names the member or parameter.
pub trait RequestForm: Sized {
    /// Reads the POST body.
    fn from_json(body: &Json) -> Result<Self, RecordsError>;

    /// Reads the GET form from decoded query pairs.
    fn from_query(params: &[(String, String)]) -> Result<Self, RecordsError>;
}

fn required(field: &str) -> RecordsError {
    RecordsError::field(field, "This field is required.")
}

fn func_of(field: &str, raw: Option<&str>) -> Result<AggregateFunc, RecordsError> {
    let raw = raw
        .filter(|s| !s.is_empty())
        .ok_or_else(|| required(field))?;
    AggregateFunc::parse(raw).ok_or_else(|| {
        RecordsError::field(
            field,
            format!("Unknown function {raw:?}: expected count, sum, min, max or avg."),
        )
    })
}

/// The group lookup, `None` when absent (`plain`, see [`Resource::group`]).
fn lookup_of(field: &str, raw: Option<&str>) -> Result<Option<GroupLookup>, RecordsError> {
    match raw.filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(raw) => GroupLookup::parse(raw).map(Some).ok_or_else(|| {
            RecordsError::field(
                field,
                format!(
                    "Unknown lookup {raw:?}: expected plain, auto or date_{{second|minute|hour|day|week|month|quarter|year}}."
                ),
            )
        }),
    }
}

/// A string member of a JSON body: absent, `null` and `""` are `None`; other types are a `400`.
fn json_str<'a>(obj: &'a Map<String, Json>, key: &str) -> Result<Option<&'a str>, RecordsError> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) if s.is_empty() => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(_) => Err(RecordsError::field(key, "Not a valid string.")),
    }
}

fn body_object(body: &Json) -> Result<&Map<String, Json>, RecordsError> {
    body.as_object().ok_or_else(|| {
        RecordsError::field("non_field_errors", "Invalid data. Expected a dictionary.")
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
    fn from_json(body: &Json) -> Result<Self, RecordsError> {
        let obj = body_object(body)?;
        Ok(Self {
            func: func_of("func", json_str(obj, "func")?)?,
            column: json_str(obj, "column")?.map(str::to_owned),
        })
    }

    /// Reads the GET form `_y_func`, `_y_column` from decoded query pairs.
    fn from_query(params: &[(String, String)]) -> Result<Self, RecordsError> {
        Ok(Self {
            func: func_of("_y_func", query(params, "_y_func"))?,
            column: query(params, "_y_column").map(str::to_owned),
        })
    }
}

impl RequestForm for GroupRequest {
    /// Reads the POST body `{"x_column", "x_lookup"?, "y_func", "y_column"?}`.
    fn from_json(body: &Json) -> Result<Self, RecordsError> {
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
    fn from_query(params: &[(String, String)]) -> Result<Self, RecordsError> {
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

fn field_of<'m>(
    model: &'m Model,
    param: &str,
    name: Option<&str>,
) -> Result<&'m Field, RecordsError> {
    match name {
        None => Ok(model.pk_field()),
        Some(n) => model
            .field(n)
            .ok_or_else(|| RecordsError::field(param, format!("Unknown field {n:?}."))),
    }
}

fn check_func(param: &str, func: AggregateFunc, field: &Field) -> Result<(), RecordsError> {
    let numeric = matches!(
        field.kind,
        FieldKind::Integer | FieldKind::Real | FieldKind::Bool | FieldKind::Any
    );
    if matches!(func, AggregateFunc::Sum | AggregateFunc::Avg) && !numeric {
        return Err(RecordsError::field(
            param,
            format!(
                "Cannot compute sum or avg of non-numeric field {:?}.",
                field.name
            ),
        ));
    }
    Ok(())
}

impl Resource {
    /// Computes `{"y_func": value}` over the records of `model` matching the list filters in
    /// `params` (`_search` included; pagination parameters are ignored).
    pub fn aggregate(
        &self,
        model: &str,
        req: &AggregateRequest,
        params: &[(String, String)],
    ) -> Result<Json, RecordsError> {
        let model = self.model_or_404(model)?;
        let field = field_of(&model, "column", req.column.as_deref())?;
        check_func("column", req.func, field)?;
        let filter = build_where(&model, params)?;
        let sql = format!(
            "SELECT {} FROM {}{}",
            agg_sql(req.func, &field.sql),
            model.table_sql,
            filter.sql
        );
        let kind = agg_result_kind(req.func, field);
        let value = self.with_reader(|conn| -> Result<Json, RecordsError> {
            let mut stmt = prepare(conn, &sql)?;
            let mut rows = stmt.query(params_from_iter(filter.params.iter()))?;
            Ok(match rows.next()? {
                Some(row) => value_to_json(kind, row.get_ref(0)?),
                None => Json::Null,
            })
        })?;
        let mut out = Map::new();
        out.insert("y_func".to_owned(), value);
        Ok(Json::Object(out))
    }

    /// Computes `[{"group": x, "y_func": value}, ...]` ordered by group key, over the records
    /// of `model` matching the list filters in `params`.
    pub fn group(
        &self,
        model: &str,
        req: &GroupRequest,
        params: &[(String, String)],
    ) -> Result<Json, RecordsError> {
        let model = self.model_or_404(model)?;
        let x = field_of(&model, "x_column", Some(&req.x_column))?;
        let y = field_of(&model, "y_column", req.y_column.as_deref())?;
        check_func("y_column", req.y_func, y)?;
        let is_date = matches!(x.kind, FieldKind::Date | FieldKind::DateTime);
        // An absent `x_lookup` is `plain` (the contract).
        let unit = match req.x_lookup.unwrap_or_default() {
            GroupLookup::Plain => None,
            GroupLookup::Auto => is_date.then_some(DateUnit::Day),
            GroupLookup::Date(unit) if is_date => Some(unit),
            GroupLookup::Date(_) => {
                return Err(RecordsError::field(
                    "x_lookup",
                    format!(
                        "A date lookup needs a date or date-time field; {:?} is not one.",
                        x.name
                    ),
                ));
            }
        };
        let (x_sql, x_kind) = match unit {
            None => (x.sql.clone(), x.kind),
            Some(u) => (date_sql(u, &x.sql), FieldKind::Text),
        };
        let filter = build_where(&model, params)?;
        let sql = format!(
            "SELECT {x_sql}, {} FROM {}{} GROUP BY 1 ORDER BY 1",
            agg_sql(req.y_func, &y.sql),
            model.table_sql,
            filter.sql
        );
        let y_kind = agg_result_kind(req.y_func, y);
        self.with_reader(|conn| -> Result<Json, RecordsError> {
            let mut stmt = prepare(conn, &sql)?;
            let mut rows = stmt.query(params_from_iter(filter.params.iter()))?;
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                let mut item = Map::new();
                item.insert("group".to_owned(), value_to_json(x_kind, row.get_ref(0)?));
                item.insert("y_func".to_owned(), value_to_json(y_kind, row.get_ref(1)?));
                out.push(Json::Object(item));
            }
            Ok(Json::Array(out))
        })
    }
}
