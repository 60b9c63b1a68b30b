//! Aggregate and group operations.

use rusqlite::params_from_iter;
use serde_json::{Map, Value as Json};

use crate::engine::convert::value_to_json;
use crate::engine::error::EngineError;
use crate::engine::filter::build_where;
use crate::engine::list::Selection;
use crate::engine::resource::Resource;
use crate::engine::schema::{Field, FieldKind, Model, prepare};

// The requests and their vocabulary are svc-model's, the SDK's own types; the records slice
// reads them from the wire (`crate::records::forms`).
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

fn field_of<'m>(
    model: &'m Model,
    param: &str,
    name: Option<&str>,
) -> Result<&'m Field, EngineError> {
    match name {
        None => Ok(model.pk_field()),
        Some(n) => model
            .field(n)
            .ok_or_else(|| EngineError::field(param, format!("Unknown field {n:?}."))),
    }
}

fn check_func(param: &str, func: AggregateFunc, field: &Field) -> Result<(), EngineError> {
    let numeric = matches!(
        field.kind,
        FieldKind::Integer | FieldKind::Real | FieldKind::Bool | FieldKind::Any
    );
    if matches!(func, AggregateFunc::Sum | AggregateFunc::Avg) && !numeric {
        return Err(EngineError::field(
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
    /// Computes `{"y_func": value}` over the records of `model` in `selection`.
    pub fn aggregate(
        &self,
        model: &str,
        req: &AggregateRequest,
        selection: &Selection,
    ) -> Result<Json, EngineError> {
        let model = self.model_or_404(model)?;
        let field = field_of(&model, "column", req.column.as_deref())?;
        check_func("column", req.func, field)?;
        let filter = build_where(&model, selection)?;
        let sql = format!(
            "SELECT {} FROM {}{}",
            agg_sql(req.func, &field.sql),
            model.table_sql,
            filter.sql
        );
        let kind = agg_result_kind(req.func, field);
        let value = self.with_reader(|conn| -> Result<Json, EngineError> {
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
    /// of `model` in `selection`.
    pub fn group(
        &self,
        model: &str,
        req: &GroupRequest,
        selection: &Selection,
    ) -> Result<Json, EngineError> {
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
                return Err(EngineError::field(
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
        let filter = build_where(&model, selection)?;
        let sql = format!(
            "SELECT {x_sql}, {} FROM {}{} GROUP BY 1 ORDER BY 1",
            agg_sql(req.y_func, &y.sql),
            model.table_sql,
            filter.sql
        );
        let y_kind = agg_result_kind(req.y_func, y);
        self.with_reader(|conn| -> Result<Json, EngineError> {
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
