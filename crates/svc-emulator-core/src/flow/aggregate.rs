//! An aggregate and a group, as the engine answers them on any database server: the request
//! read in the engine's order (model, filters, `_order_by`, columns, function), one statement,
//! and its values written as the engine writes them. What a database's values are, and how its
//! statement reads them with their types, is its own ([`Database`]'s aggregate words).

use crate::flow::state::Served;
use serde_json::{Map, Value as Json};

use crate::dialect::bind::Binds;
use crate::dialect::clause::{Where, filtered_order_by};
use crate::dialect::group::query_text;
use crate::flow::database::Database;
use svc_engine::aggregate::{fails, group_name, known, y_func};
use svc_engine::relation::Use;
use svc_engine::table::{
    BodyColumn, Column, GroupColumns, OrderBy, Summary, Table, aggregate_column, group_columns,
};
use svc_engine::time_zone::tz_of;
use svc_engine::types::Serializer;
use svc_engine::{AggregateRequest, EngineError, GroupRequest, Selection};

/// `{"y_func": value}` over the records `selection` selects.
pub async fn aggregate<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    req: &AggregateRequest,
    selection: &Selection,
) -> Result<Json, EngineError> {
    aggregate_as_engine(db, model, req, selection)
        .await
        .map_err(|e| e.unless_lenient(selection.lenient))
}

/// The selected records' groups, sorted by their keys.
pub async fn group<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    req: &GroupRequest,
    selection: &Selection,
) -> Result<Json, EngineError> {
    group_as_engine(db, model, req, selection)
        .await
        .map_err(|e| e.unless_lenient(selection.lenient))
}

async fn aggregate_as_engine<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    req: &AggregateRequest,
    selection: &Selection,
) -> Result<Json, EngineError> {
    let model = db.model(model)?;
    let filter = db.filters(&model, selection, Use::Aggregate)?;
    let (filter, order) = filtered_order_by(&*model, filter, &req.order_by, D::NEVER)?;
    let field = aggregate_column(&*model, req)?;
    let Some(func) = known(&req.func)? else {
        return unknown_function(db, &*model, field, &order);
    };
    let summary = Summary::aggregate(field, func);
    let rows = summarize(db, &model, &summary, &filter, selection).await?;
    // An aggregate's statement has one row whatever it selects: SQL's.
    let row = rows.into_iter().next().ok_or_else(|| {
        EngineError::Internal("the aggregate's statement answered no row".to_owned())
    })?;
    Ok(Json::Object(row))
}

/// A row of a summary's statement, its values written as the engine writes them
/// ([`Database::summary_row`]).
#[derive(Debug)]
pub struct SummaryRow {
    /// Each key's value, in the keys' order (none for an aggregate).
    pub keys: Vec<Json>,
    /// The function's value.
    pub value: Json,
}

impl SummaryRow {
    /// The row as the engine answers it: `{"group": key, "group_2": ..., "y_func": value}`.
    fn answer(self) -> Map<String, Json> {
        let keys = self.keys.into_iter().enumerate();
        let mut row: Map<String, Json> = keys.map(|(i, key)| (group_name(i), key)).collect();
        row.insert("y_func".to_owned(), self.value);
        row
    }
}

/// The engine's answer when the function is not one it knows: its (empty) query object written
/// by the column's serializer field (`order`: the request's `_order_by`): `{}` by a value
/// field, a failure of a date-time field, the query's text by a text field.
fn unknown_function<D: Database>(
    db: &Served<'_, D>,
    model: &D::Model,
    field: &D::Field,
    order: &OrderBy<'_, D::Field>,
) -> Result<Json, EngineError> {
    match field.query_object() {
        Serializer::Value => Ok(y_func(Json::Object(Map::new()))),
        Serializer::DateTime => Err(fails(
            "_y_func",
            format!(
                "Unknown function on the date-time field {:?} (the data engine fails).",
                field.name()
            ),
        )),
        Serializer::Text => {
            let columns: Vec<&str> = model.columns().iter().map(Column::name).collect();
            let (quoting, never) = db.query_dialect();
            let order = order.names();
            let text = query_text(
                model.table_name(),
                &columns,
                order.as_deref(),
                never,
                quoting,
            );
            Ok(y_func(Json::String(text)))
        }
    }
}

async fn group_as_engine<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    req: &GroupRequest,
    selection: &Selection,
) -> Result<Json, EngineError> {
    let model = db.model(model)?;
    let filter = db.filters(&model, selection, Use::Aggregate)?;
    let (filter, _) = filtered_order_by(&*model, filter, &req.order_by, D::NEVER)?;
    let Some(columns) = group_columns(&*model, req)? else {
        return Ok(Json::Array(Vec::new()));
    };
    let summary = Summary::group(columns, req);
    let rows = summarize(db, &model, &summary, &filter, selection).await?;
    Ok(Json::Array(rows.into_iter().map(Json::Object).collect()))
}

/// The rows of `summary`'s statement over the records `filter` selects, each written as the
/// summary says, until one fails.
async fn summarize<D: Database>(
    db: &Served<'_, D>,
    model: &D::Model,
    summary: &Summary<'_, D::Field>,
    filter: &Where<Binds>,
    selection: &Selection,
) -> Result<Vec<Map<String, Json>>, EngineError> {
    let sql = D::summary_statement(model, summary, &filter.sql)?;
    // Only a serializer writes in the engine's time zone (an aggregate's value).
    let (mut conn, tz) = db.reading(tz_of(selection)).await?;
    let mut out = Ok(Vec::new());
    let mut sink = |row: &D::Row<'_>| {
        if let Ok(rows) = &mut out {
            match D::summary_row(summary, row, tz) {
                Ok(row) => rows.push(row.answer()),
                Err(e) => out = Err(e),
            }
        }
    };
    let GroupColumns { func, y, .. } = summary.columns;
    db.read_rows(
        &mut conn,
        &sql,
        &filter.params,
        selection.lenient,
        &mut sink,
    )
    .await
    .map_err(|e| D::summary_error(e, func, y))?;
    out
}
