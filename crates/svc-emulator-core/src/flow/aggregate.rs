//! An aggregate and a group, as the engine answers them on any database server: the request
//! read in the engine's order (model, filters, `_order_by`, columns, function), one statement,
//! and its values written as the engine writes them. What a database's values are, and how its
//! statement reads them with their types, is its own ([`Database`]'s aggregate words).

use serde_json::{Map, Value as Json};

use crate::dialect::clause::filtered_order_by;
use crate::dialect::group::query_text;
use crate::flow::database::Database;
use crate::flow::driver::Failure;
use crate::flow::records::ModelSql;
use svc_engine::aggregate::{fails, known, y_func};
use svc_engine::relation::Use;
use svc_engine::table::{BodyColumn, Column, OrderBy, Table, aggregate_column, group_columns};
use svc_engine::time_zone::tz_of;
use svc_engine::types::Serializer;
use svc_engine::{AggregateRequest, EngineError, GroupRequest, Selection};

/// `{"y_func": value}` over the records `selection` selects.
pub async fn aggregate<D: Database>(
    db: &D,
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
    db: &D,
    model: &str,
    req: &GroupRequest,
    selection: &Selection,
) -> Result<Json, EngineError> {
    group_as_engine(db, model, req, selection)
        .await
        .map_err(|e| e.unless_lenient(selection.lenient))
}

async fn aggregate_as_engine<D: Database>(
    db: &D,
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
    let sql = format!(
        "SELECT {} FROM {}{}",
        D::aggregate_select(field, func)?,
        model.table_sql(),
        filter.sql
    );
    let mut conn = db.connect(tz_of(selection)).await?;
    let tz = db.time_zone(&mut conn).await?;
    // The answer is the first row's (an aggregate has one).
    let read = |row: &D::Row<'_>| D::aggregate_answer(func, field, Some(row), tz);
    let answer = D::first_row(&mut conn, &sql, &filter.params, read).await;
    let lenient = selection.lenient;
    let answer = answer
        .map_err(|f| D::summary_error(db.fault(f, Failure::Read { lenient }), func, field))?;
    answer.unwrap_or_else(|| D::aggregate_answer(func, field, None, tz))
}

/// The engine's answer when the function is not one it knows: its (empty) query object written
/// by the column's serializer field (`order`: the request's `_order_by`): `{}` by a value
/// field, a failure of a date-time field, the query's text by a text field.
fn unknown_function<D: Database>(
    db: &D,
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
    db: &D,
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
    let sql = D::group_statement(&model, &columns, req, &filter.sql)?;
    let mut conn = db.connect(tz_of(selection)).await?;
    // Each row written as it is read, until one fails.
    let mut out = Ok(Vec::new());
    let mut sink = |row: &D::Row<'_>| {
        if let Ok(groups) = &mut out {
            match D::group_row(&columns, req, row) {
                Ok(group) => groups.push(Json::Object(group)),
                Err(e) => out = Err(e),
            }
        }
    };
    db.read_rows(
        &mut conn,
        &sql,
        &filter.params,
        selection.lenient,
        &mut sink,
    )
    .await
    .map_err(|e| D::summary_error(e, columns.func, columns.y))?;
    out.map(Json::Array)
}
