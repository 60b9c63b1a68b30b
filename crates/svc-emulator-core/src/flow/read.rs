//! A list and a record's retrieve, as the engine reads them on any database server: the
//! selection's clause, the order's terms, one statement, one row per identity, and the records
//! as its serializer writes them.

use crate::dialect::clause::Where;
use crate::flow::database::Database;
use crate::flow::driver::DriverRow;
use crate::flow::records::{ModelSql, Page};
use crate::flow::state::Served;
use svc_engine::filter::order_selects_nothing;
use svc_engine::records::Records;
use svc_engine::relation::Use;
use svc_engine::table::{Column, Table};
use svc_engine::time_zone::tz_of;
use svc_engine::{EngineError, ListSpec, Listing, MAX_PER_PAGE, Selection};

/// One page of records of `model`, or all of them (`no_pagination`), as the engine lists them.
pub async fn list<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    spec: &ListSpec,
) -> Result<Listing, EngineError> {
    let model = db.model(model)?;
    let lenient = spec.selection.lenient;
    let mut filter = db.filters(&model, &spec.selection, Use::List)?;
    let terms = model.order_terms(&spec.order_by, lenient)?;
    let order = D::order_sql(&model, &terms);
    if order_selects_nothing(&spec.order_by) {
        filter = Where::nothing(D::NEVER);
    }
    let (mut conn, tz) = db.reading(tz_of(&spec.selection)).await?;
    let mut out = Records::new(&*model, tz, db.checks_readable());
    if spec.no_pagination {
        let sql = format!(
            "SELECT {} FROM {}{}{order} LIMIT {MAX_PER_PAGE}",
            model.select_list(),
            model.table_sql(),
            filter.sql
        );
        let mut sink = |row: &D::Row<'_>| out.push(&DriverRow::<D>(row));
        db.read_rows(&mut conn, &sql, &filter.params, lenient, &mut sink)
            .await?;
        readable::<D>(&model, &out, lenient)?;
        one_row_each::<D>(&*model, &out, lenient)?;
        return Ok(Listing::All(out.into_json()));
    }
    let per_page = spec.per_page.max(1);
    let number = spec.page.max(1);
    let Some(offset) = (number - 1)
        .checked_mul(per_page)
        .filter(|&o| o <= D::MAX_OFFSET)
    else {
        return Err(EngineError::engine_fails(
            lenient,
            "page",
            format!(
                "This page is beyond the data engine's reach: its offset, (page - 1) times \
                 _per_page, passes {}, the greatest this database takes, and the engine fails \
                 (500). Ask for a smaller page.",
                D::MAX_OFFSET
            ),
        ));
    };
    let page = Page::<D> {
        model: &model,
        filter: &filter,
        terms: &terms,
        order: &order,
        number,
        per_page,
        offset,
        lenient,
        walks: db.walks(),
    };
    let counted = db.page(&mut conn, &page, &mut out).await?;
    let len = out.len();
    // The engine's paginator counts a short first page by its records, else runs a COUNT:
    // they differ only where rows share a promoted key (one record, several rows).
    let count = match counted {
        _ if page.number == 1 && len < per_page => len,
        Some(count) => count,
        None => {
            db.count(&mut conn, &model, &filter, lenient, db.walks())
                .await?
        }
    };
    readable::<D>(&model, &out, lenient)?;
    one_row_each::<D>(&*model, &out, lenient)?;
    Ok(Listing::Page {
        count,
        number,
        per_page,
        len,
        records: out.into_json(),
    })
}

/// `Ok` unless a record read holds a value the engine's serializer cannot write: the engine
/// fails then (`500`), after its count.
pub fn readable<D: Database>(
    model: &D::Model,
    out: &Records<'_, D::Model>,
    lenient: bool,
) -> Result<(), EngineError> {
    match out
        .unreadable()
        .and_then(|at| D::unreadable(model, at, lenient))
    {
        Some(failure) => Err(failure),
        None => Ok(()),
    }
}

/// The record of `model` whose key is `pk` and that `selection` selects, as JSON bytes.
pub async fn retrieve<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    pk: &str,
    selection: &Selection,
) -> Result<Vec<u8>, EngineError> {
    let model = db.model(model)?;
    let mut filter = db.filters(&model, selection, Use::Record)?;
    let key = D::key_condition(&model, pk, &mut filter.params)?;
    let (mut conn, tz) = db.reading(tz_of(selection)).await?;
    // Where rows may share the key and the database's planner picks among them, a second row
    // says the engine's answer is whichever it reads first: refused in strict mode.
    let shared = model.promoted_key() || !model.key_is_whole();
    let refuse_ties = shared && D::PLANNER_PICKS_TIES && !selection.lenient;
    let sql = format!(
        "SELECT {} FROM {}{} LIMIT {}",
        model.select_list(),
        model.table_sql(),
        filter.and(&key),
        if refuse_ties { 2 } else { 1 }
    );
    let mut out = Records::new(&*model, tz, db.checks_readable());
    let mut sink = |row: &D::Row<'_>| out.push(&DriverRow::<D>(row));
    db.read_rows(
        &mut conn,
        &sql,
        &filter.params,
        selection.lenient,
        &mut sink,
    )
    .await?;
    readable::<D>(&model, &out, selection.lenient)?;
    // Two records (a key column of several), or two rows of one record with other values.
    if refuse_ties && (out.len() > 1 || out.ambiguous()) {
        return Err(ties(&*model, pk));
    }
    out.into_record()
}

/// [decision: stricter] `Ok` unless, where the database's planner picks among rows that tie, a
/// dropped row of a record shown (a promoted key that repeats) had other values: the engine
/// shows whichever it reads first, which changes with the table's statistics.
fn one_row_each<D: Database>(
    model: &D::Model,
    out: &Records<'_, D::Model>,
    lenient: bool,
) -> Result<(), EngineError> {
    if !(D::PLANNER_PICKS_TIES && !lenient && out.ambiguous()) {
        return Ok(());
    }
    let key = model.pk_field().name();
    Err(EngineError::stricter(
        key,
        format!(
            "Rows of {} share a value of {key} with other values in their other columns (the \
             data engine keys it on its first column, which does not tell rows apart): it shows \
             one of them per value, whichever the database reads first, which changes with the \
             table's statistics. Filter the rows so that no two of them share {key}.",
            model.table_name()
        ),
    ))
}

/// [decision: stricter] A retrieve of a key that several rows share, where the database's
/// planner picks which one `LIMIT 1` reads: the engine answers that row, which changes with the
/// table's statistics (and so may differ between two copies of the same data).
fn ties<T: Table>(model: &T, pk: &str) -> EngineError {
    let key = model.pk_field().name();
    let why = if model.promoted_key() {
        "the data engine keys it on its first column, which does not tell rows apart"
    } else {
        "its key is one column of its primary key"
    };
    EngineError::stricter(
        key,
        format!(
            "More than one row of {} has {key} {pk:?} ({why}): the data engine answers whichever \
             of them the database reads first, which changes with the table's statistics. List \
             them with a filter instead ({key}={pk}).",
            model.table_name()
        ),
    )
}
