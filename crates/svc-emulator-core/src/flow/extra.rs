//! The model view's extra actions, as the engine runs them on every database
//! (`jet_bridge_base/views/model.py`; their bodies and answers are `svc_engine::extra_actions`):
//!
//! - [`create_each`]: `bulk_create`, each item created as a create is, in its own
//!   transaction (the engine's serializer commits each), the items before a refused one kept;
//! - [`siblings`]: `get_siblings` (`utils/siblings.py`), the keys before and after a record in
//!   the list's order, by the engine's row number and `LIMIT`/`OFFSET`;
//! - [`reorder`]: `reorder` (`serializers/reorder.py`), two `UPDATE`s of the ordering column
//!   through the request's filters, as the ORM's `Query.update` runs them;
//! - [`reset_order`]: `reset_order` (`serializers/reset_order.py`), the selected records read
//!   in an order and numbered 1, 2, ... in the ordering column, one `UPDATE` each where the
//!   value changes, as the ORM flushes them.
//!
//! Each runs through the request's filters as every other view does (`Served::filters`).

use crate::flow::state::Served;
use serde_json::Value as Json;

use crate::dialect::bind::Binds;
use crate::dialect::clause::Where;
use crate::flow::database::Database;
use crate::flow::driver::DriverRow;
use crate::flow::driver::{Failure, Session};
use crate::flow::records::ModelSql;
use crate::flow::write::{create_in, create_values, insert_statement};
use svc_engine::body::non_field;
use svc_engine::declared::order_values;
use svc_engine::extra_actions::{
    Created, MAX_SIBLINGS_COUNT, Reorder, ResetOrder, siblings_answer,
};
use svc_engine::field_input::{InputField, Internal, to_internal};
use svc_engine::filter::{order_selects_nothing, order_terms};
use svc_engine::plan::Plan;
use svc_engine::python::json::PyJson;
use svc_engine::records::Records;
use svc_engine::relation::Use;
use svc_engine::table::{BodyColumn, Column, Table};
use svc_engine::time_zone::tz_of;
use svc_engine::types::FilterFamily;
use svc_engine::{EngineError, Lookup, Selection};

/// `bulk_create`: each item created as a create's body is, in order, each in a transaction of
/// its own: what one item answers, item by item ([`Created`]).
///
/// Every item is read first (the serializer's fields, and the values bound as the database
/// takes them, which no write changes): an item the emulator refuses by design (a value the
/// engine fails on or may read otherwise: `"error_decision": "stricter"`, in either mode)
/// refuses the whole request before anything is written. The engine's own refusals of an item
/// (its validation, then the database's) answer that item, and the others are created. An
/// item the engine stores but cannot read back (SQLite's `NULL` key) is a success here: the
/// action reads nothing back.
pub async fn create_each<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    items: &[PyJson],
    lenient: bool,
) -> Result<Vec<Created>, EngineError> {
    // The engine finds the model for each item: an empty array answers `[]` whatever the model.
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let model = db.model(model)?;
    let mut conn = db.connect().await?;
    let tz = db.time_zone(&mut conn).await?;
    let mut read = Vec::with_capacity(items.len());
    for (at, item) in items.iter().enumerate() {
        let values = create_values::<D>(&model, item).and_then(|values| {
            // Bound once here for its refusals; the insert binds them again.
            let mut params = Binds::default();
            insert_statement::<D>(&model, &values, tz, &mut params)?;
            Ok(values)
        });
        match values {
            Ok(values) => read.push(Ok(values)),
            Err(e) => match Created::of_error(&e.clone().unless_lenient(lenient)) {
                Some(answer) => read.push(Err(answer)),
                None => return Err(at_item(at, e)),
            },
        }
    }
    let mut out = Vec::with_capacity(items.len());
    let mut session = Session::new(conn);
    for item in read {
        let values = match item {
            Ok(values) => values,
            Err(answer) => {
                out.push(answer);
                continue;
            }
        };
        // `lenient`: the engine commits what it cannot read back, and this action reads
        // nothing back.
        out.push(
            match create_in(db, &mut session, &model, &values, tz, true).await {
                Ok(_) | Err(EngineError::EngineFails { .. }) => Created::Yes,
                Err(e @ (EngineError::Internal(_) | EngineError::ModelNotFound(_))) => {
                    return Err(e);
                }
                // Refused by design once earlier items are written: the item's failure, as the
                // engine answers an exception of its own.
                Err(EngineError::Invalid {
                    stricter: true,
                    message,
                    ..
                }) => Created::Failed(message),
                Err(e) => Created::of_error(&e).unwrap_or_else(|| Created::Failed(e.to_string())),
            },
        );
    }
    Ok(out)
}

/// A refusal of one item of a `bulk_create`, saying which (from 0).
fn at_item(at: usize, e: EngineError) -> EngineError {
    match e {
        EngineError::Invalid {
            message,
            fields,
            stricter,
        } => EngineError::Invalid {
            message: format!("Item {at} of the array: {message}"),
            fields,
            stricter,
        },
        other => other,
    }
}

/// `get_siblings`: the keys of the records before and after the record `pk` in the list's order
/// (the list's filters and `_order_by`, then the key descending unless named), as
/// `{"prev": {KEY: value} | null, "next": ...}`; `{}` when the selection counts more than
/// 10 000 records. `404` when the filters do not select the record.
pub async fn siblings<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    pk: &str,
    selection: &Selection,
) -> Result<Json, EngineError> {
    let lenient = selection.lenient;
    let model = db.model(model)?;
    let filter = db.filters(&model, selection, Use::List)?;
    let order_by = order_values(selection);
    let terms = model.order_terms(&order_by, lenient)?;
    let order = D::order_sql(&model, &terms);
    let mut at_key = filter.params.clone();
    let key = D::key_condition(&model, pk, &mut at_key)?;
    let (mut conn, tz) = db.reading(tz_of(selection)).await?;
    // The record, as `get_object` finds it.
    let sql = format!(
        "SELECT 1 FROM {}{} LIMIT 1",
        model.table_sql(),
        filter.and(&key)
    );
    let mut found = false;
    db.read_rows(&mut conn, &sql, &at_key, lenient, &mut |_| found = true)
        .await?;
    if !found {
        return Err(EngineError::RecordNotFound);
    }
    let pk_field = model.pk_field();
    let count = db
        .count(&mut conn, &model, &filter, lenient, db.walks())
        .await?;
    if count > MAX_SIBLINGS_COUNT {
        return Ok(siblings_answer(pk_field.name(), None));
    }
    // Its row number among the selected rows in the list's order (`row_number() OVER`).
    let mut params = filter.params.clone();
    let raw = PyJson::Str(pk.to_owned());
    let internal = to_internal(pk_field.input(), &raw).map_err(non_field)?;
    let value = D::bind_key(pk_field, &internal, &mut params)?;
    let (k, n) = (D::quote("svc_sibling_key"), D::quote("svc_sibling_row"));
    let sql = format!(
        "SELECT {n} FROM (SELECT {key} AS {k}, row_number() OVER ({order}) AS {n} FROM \
         {table}{filters}) AS {rows} WHERE {k} = {value} LIMIT 2",
        key = D::column(pk_field),
        order = order.trim_start(),
        table = model.table_sql(),
        filters = filter.sql,
        rows = D::quote("svc_siblings"),
    );
    // Each row's number, as text (at most two rows).
    let mut rows = Vec::new();
    let mut sink = |row: &D::Row<'_>| rows.push(D::text(row, 0));
    db.read_rows(&mut conn, &sql, &params, lenient, &mut sink)
        .await?;
    if rows.len() > 1 {
        // `.scalar()` of several rows: `MultipleResultsFound`.
        return Err(EngineError::engine_fails(
            lenient,
            pk_field.name(),
            format!(
                "More than one row of {} has {} {pk:?}: the data engine fails (500) numbering \
                 the record among its siblings.",
                model.table_name(),
                pk_field.name()
            ),
        ));
    }
    let Some(number) = rows
        .into_iter()
        .next()
        .flatten()
        .and_then(|n| n.parse::<u64>().ok())
        .filter(|&n| n > 0)
    else {
        return Ok(siblings_answer(pk_field.name(), None));
    };
    // The rows around it: from the one before (when there is one), two or three of them.
    let has_prev = number > 1;
    let (offset, limit) = if has_prev {
        (number - 2, 3)
    } else {
        (number - 1, 2)
    };
    let sql = format!(
        "SELECT {} FROM {}{}{order} LIMIT {limit} OFFSET {offset}",
        model.select_list(),
        model.table_sql(),
        filter.sql
    );
    // Every row, as the ORM's `all()` of one entity gives them.
    let mut out = Records::every_row(&*model, tz, false);
    let mut sink = |row: &D::Row<'_>| out.push(&DriverRow::<D>(row));
    db.read_rows(&mut conn, &sql, &filter.params, lenient, &mut sink)
        .await?;
    let records: Vec<Json> = match serde_json::from_slice(&out.into_json().0) {
        Ok(Json::Array(records)) => records,
        _ => Vec::new(),
    };
    let key_of = |i: usize| records.get(i).map(|r| raw_key::<D>(pk_field, r));
    let (prev, next) = if has_prev {
        (key_of(0), key_of(2))
    } else {
        (None, key_of(1))
    };
    Ok(siblings_answer(pk_field.name(), Some((prev, next))))
}

/// A record's key as the engine's JSON encoder writes the value its ORM loaded (not the
/// serializer's form): a number that its `CharField` writes as text (SQLite's `REAL`,
/// PostgreSQL's `numeric`) is a `float`.
fn raw_key<D: Database>(pk: &D::Field, record: &Json) -> Json {
    let value = record.get(pk.name()).cloned().unwrap_or(Json::Null);
    match &value {
        Json::String(text)
            if pk.input() == InputField::Char && pk.family() == FilterFamily::Number =>
        {
            text.parse::<f64>()
                .ok()
                .and_then(|f| serde_json::Number::from_f64(f).map(Json::Number))
                .unwrap_or(value)
        }
        _ => value,
    }
}

/// The column `name` of `model` that an action's `getattr(Model, name)` finds, else the
/// engine's failure (500: an `AttributeError`) on `param`.
fn named_column<'m, D: Database>(
    model: &'m D::Model,
    name: Option<&str>,
    param: &str,
    lenient: bool,
) -> Result<&'m D::Field, EngineError> {
    name.and_then(|n| model.field(n)).ok_or_else(|| {
        EngineError::engine_fails(
            lenient,
            param,
            format!(
                "{param} {} names no field of {}: the data engine fails (500) looking it up. \
                 Name one of its columns.",
                name.map_or_else(|| "null".to_owned(), |n| format!("{n:?}")),
                model.table_name()
            ),
        )
    })
}

/// [decision: stricter] The ordering column of `reorder` and `reset_order` must hold numbers:
/// the engine writes positions (`1`, `2`, ...) and adds or subtracts 1 in SQL, which
/// PostgreSQL refuses for text, dates and booleans (500) and SQLite and MySQL misread (text
/// positions sort `10` before `2`).
fn ordering_column<'m, D: Database>(
    model: &'m D::Model,
    name: Option<&str>,
    lenient: bool,
) -> Result<&'m D::Field, EngineError> {
    let field = named_column::<D>(model, name, "ordering_field", lenient)?;
    if field.family() != FilterFamily::Number || field.input() == InputField::Boolean {
        return Err(EngineError::stricter(
            "ordering_field",
            format!(
                "ordering_field {:?} is not a number column: the data engine writes integer \
                 positions into it and adds or subtracts 1 there, which PostgreSQL refuses \
                 (500) and SQLite and MySQL misread for text, dates and booleans. Order by a \
                 number column.",
                field.name()
            ),
        ));
    }
    Ok(field)
}

/// [decision: stricter] A model whose key rows share (a promoted key): the engine's ORM takes
/// the rows that share one as one record, writing them together, where the emulator writes
/// each row.
fn shared_key<T: Table>(model: &T, action: &str) -> Result<(), EngineError> {
    if model.promoted_key() {
        let key = model.pk_field().name();
        return Err(EngineError::stricter(
            key,
            format!(
                "{} has no primary key (the data engine keys it on its first column, {key:?}, \
                 which rows may share): {action} would write the rows that share it as one \
                 record. Give the table a primary key.",
                model.table_name()
            ),
        ));
    }
    Ok(())
}

/// A database's refusal of an action's statement: the engine does not read it as a
/// validation error (500); strict mode answers `400` with the database's message.
fn refused_statement(e: EngineError, lenient: bool) -> EngineError {
    match e {
        EngineError::Invalid { message, .. } => EngineError::engine_fails(
            lenient,
            "non_field_errors",
            format!("The database refused the data engine's statement (it answers 500): {message}"),
        ),
        other => other,
    }
}

/// `reorder`: the ordering column's values from `segment_from` to `segment_to` (themselves, or
/// the values of the records with those keys) go down by one (`forward`) or up by one, and the
/// record `item` takes `segment_to`'s, in one transaction. The answer is the validated body.
///
/// The engine runs both `UPDATE`s through its ORM's `Query.update`, which evaluates the
/// filters in Python for the records it has loaded: a filter it cannot evaluate (`ILIKE`, a
/// cast, a subquery) or an `_order_by` makes it fail (500), which lenient mode answers.
pub async fn reorder<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    body: &PyJson,
    selection: &Selection,
) -> Result<Json, EngineError> {
    let lenient = selection.lenient;
    let model = db.model(model)?;
    let filter = db.filters(&model, selection, Use::Write)?;
    let request = Reorder::read(body, lenient)?;
    let ordering = ordering_column::<D>(&model, request.ordering_field.as_deref(), lenient)?;
    evaluable(&model, selection, !request.segment_by_ordering_field)?;
    let pk = model.pk_field();
    // [decision: stricter] The engine compares the key with an integer: PostgreSQL fails on a
    // text key, MySQL compares text with numbers (`'abc' = 0` holds).
    if pk.input() != InputField::Integer {
        return Err(EngineError::stricter(
            "item",
            format!(
                "reorder compares the key {:?} of {} with integers (item, and segment_from and \
                 segment_to without segment_by_ordering_field), which the databases read \
                 otherwise for a key that is not an integer (PostgreSQL fails, MySQL compares \
                 'abc' with 0 as equal).",
                pk.name(),
                model.table_name()
            ),
        ));
    }
    if !request.segment_by_ordering_field && (model.promoted_key() || !model.key_is_whole()) {
        shared_key(&model, "reorder")?;
        // One column of a composite key: `.first()` picks any row of those that share it.
        return Err(EngineError::stricter(
            pk.name(),
            format!(
                "The key {:?} of {} is one column of its primary key: reorder finds the \
                 segment's ends by it, and the data engine takes whichever row sharing it the \
                 database reads first. Send segment_by_ordering_field with values of the \
                 ordering column.",
                pk.name(),
                model.table_name()
            ),
        ));
    }
    let mut conn = db.connect().await?;
    let tz = db.time_zone(&mut conn).await?;
    let column = D::column(ordering);
    // The segment's ends: values as given, or the values of the records with those keys, as
    // loaded (`queryset.filter(pk == key).first()`).
    let mut ends = Vec::with_capacity(2);
    for (param, end) in [
        ("segment_from", request.segment_from),
        ("segment_to", request.segment_to),
    ] {
        if request.segment_by_ordering_field {
            ends.push(End::Given(end));
            continue;
        }
        let value = end_value(db, &mut conn, &model, &filter, ordering, end, tz, lenient)
            .await?
            .ok_or_else(|| {
                EngineError::engine_fails(
                    lenient,
                    param,
                    format!(
                        "{param} {} is the key of no record the request selects: the data \
                         engine fails (500) reading its {} value.",
                        end.map_or_else(|| "null".to_owned(), |k| k.to_string()),
                        ordering.name()
                    ),
                )
            })?;
        ends.push(End::Loaded(value));
    }
    // `ordering >= None`: SQLAlchemy takes `None` with `=` and `!=` only (`ArgumentError`).
    if let Some(at) = ends.iter().position(End::is_null) {
        let param = ["segment_from", "segment_to"][at];
        return Err(EngineError::engine_fails(
            lenient,
            param,
            format!(
                "The segment's {param} end is null (given, or the {} value of its record): the \
                 data engine fails (500) comparing the ordering column with it.",
                ordering.name()
            ),
        ));
    }
    let mut tx = Session::<D>::begin(conn, D::BEGIN)
        .await
        .map_err(|f| db.fault(f, Failure::Unexpected))?;
    // The ends are numbers written as literals: no placeholder, so that the statements' values
    // are the filters' alone, in their order.
    let (from, to) = (ends[0].sql(), ends[1].sql());
    let step = if request.forward { "-" } else { "+" };
    let shift = format!(
        "UPDATE {} SET {column} = {column} {step} 1{}",
        model.table_sql(),
        filter.and(&format!("{column} >= {from} AND {column} <= {to}"))
    );
    run(db, &mut tx, &model, &shift, &filter.params, lenient).await?;
    let item = match request.item {
        Some(item) => format!("{} = {item}", D::column(pk)),
        // `pk == None`: `IS NULL`.
        None => format!("{} IS NULL", D::column(pk)),
    };
    let put = format!(
        "UPDATE {} SET {column} = {to}{}",
        model.table_sql(),
        filter.and(&item)
    );
    run(db, &mut tx, &model, &put, &filter.params, lenient).await?;
    let done = tx.commit().await;
    done.map_err(|f| refused_statement(db.fault(f, Failure::Write(&model)), lenient))?;
    Ok(request.answer())
}

/// One end of a `reorder`'s segment, as a SQL literal.
enum End {
    /// `segment_by_ordering_field`: the value given (`null` is SQL's `NULL`).
    Given(Option<i64>),
    /// The value of the ordering column of the record with the key given, as loaded: a
    /// number's text (`None`: NULL).
    Loaded(Option<String>),
}

impl End {
    /// The end is `None`.
    fn is_null(&self) -> bool {
        matches!(self, End::Given(None) | End::Loaded(None))
    }

    /// The end in SQL: a number, or `NULL`.
    fn sql(&self) -> String {
        match self {
            End::Given(Some(n)) => n.to_string(),
            End::Loaded(Some(text)) => text.clone(),
            End::Given(None) | End::Loaded(None) => "NULL".to_owned(),
        }
    }
}

/// A number's text as SQL writes it: an optional `-`, digits, an optional fraction and
/// exponent (the engine's loaded `int`, `float` or `Decimal`, which its driver writes so).
fn number_literal(text: &str) -> bool {
    let b = text.as_bytes();
    let mut at = usize::from(b.first() == Some(&b'-'));
    let digits = |at: &mut usize| {
        let start = *at;
        while *at < b.len() && b[*at].is_ascii_digit() {
            *at += 1;
        }
        *at > start
    };
    if !digits(&mut at) {
        return false;
    }
    if b.get(at) == Some(&b'.') {
        at += 1;
        if !digits(&mut at) {
            return false;
        }
    }
    if matches!(b.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(b.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        if !digits(&mut at) {
            return false;
        }
    }
    at == b.len()
}

/// The value of `ordering` in the record whose key is `key` among those `filter` selects, as the
/// ORM loads it, written as a SQL number (`Some(None)`: NULL); `None` when there is no such
/// record.
#[allow(clippy::too_many_arguments)]
async fn end_value<D: Database>(
    db: &Served<'_, D>,
    conn: &mut D::Conn,
    model: &D::Model,
    filter: &Where<Binds>,
    ordering: &D::Field,
    key: Option<i64>,
    tz: i32,
    lenient: bool,
) -> Result<Option<Option<String>>, EngineError> {
    let Some(key) = key else {
        return Ok(None);
    };
    let key = format!("{} = {key}", D::column(model.pk_field()));
    let sql = format!(
        "SELECT {} FROM {}{} LIMIT 1",
        model.select_list(),
        model.table_sql(),
        filter.and(&key)
    );
    let mut out = Records::every_row(model, tz, false);
    let mut sink = |row: &D::Row<'_>| out.push(&DriverRow::<D>(row));
    db.read_rows(conn, &sql, &filter.params, lenient, &mut sink)
        .await?;
    let record = match serde_json::from_slice(&out.into_json().0) {
        Ok(Json::Array(mut records)) if !records.is_empty() => records.swap_remove(0),
        _ => return Ok(None),
    };
    let value = record.get(ordering.name()).cloned().unwrap_or(Json::Null);
    // The record's value read back by the column's own field: the value as the ORM holds it.
    let text = match to_internal(ordering.input(), &PyJson::from(&value)).map_err(non_field)? {
        Internal::None => return Ok(Some(None)),
        Internal::Int(digits) => digits,
        Internal::Float(f) => svc_engine::python::floats::py_float_repr(f),
        Internal::Str(text) => text,
        other => format!("{other:?}"),
    };
    if !number_literal(&text) {
        // Not a number SQL writes (NaN, an infinity): the emulator cannot write it back.
        return Err(EngineError::stricter(
            ordering.name(),
            format!(
                "The {} value {text:?} of the segment's record is no finite number: the \
                 emulator does not move positions around it.",
                ordering.name()
            ),
        ));
    }
    Ok(Some(Some(text)))
}

/// Runs one of an action's statements in its transaction.
async fn run<D: Database>(
    db: &Served<'_, D>,
    tx: &mut Session<D>,
    model: &D::Model,
    sql: &str,
    params: &Binds,
    lenient: bool,
) -> Result<(), EngineError> {
    let done = tx.write(sql, params).await;
    done.map_err(|f| refused_statement(db.fault(f, Failure::Write(model)), lenient))
}

/// Whether the ORM's `Query.update` can run with the request's filters (its `evaluate`
/// synchronization compiles them to Python): not with `_order_by` (`Can't call
/// Query.update() when order_by() has been called`), `ILIKE` (`icontains`, `istartswith`,
/// `iendswith`, `json_icontains`, a JSON column's `exact` and `in`), casts (`_search`) or
/// subqueries (`_relation`): the engine fails (500), which lenient mode answers. Where the
/// segment's records are loaded (`loaded`), the filters are also evaluated on them: a date's
/// `gt`, `gte`, `lt` or `lte` compares a date with text there, or an aware date-time with a
/// naive one, and fails as the values may have it ([decision: stricter], both modes).
fn evaluable<T: Table>(model: &T, selection: &Selection, loaded: bool) -> Result<(), EngineError>
where
    T::Column: Column,
{
    let lenient = selection.lenient;
    let fails = |what: String| {
        Err(EngineError::engine_fails(
            lenient,
            "non_field_errors",
            format!(
                "{what}: the data engine's reorder runs its UPDATE through its ORM, which cannot \
                 evaluate that filter in Python and fails (500). Select the records with \
                 exact, gt, gte, lt, lte, in, isnull or isempty filters."
            ),
        ))
    };
    let order = order_values(selection);
    if !order.iter().all(String::is_empty) && !order_selects_nothing(&order) {
        return Err(EngineError::engine_fails(
            lenient,
            "_order_by",
            "reorder with an _order_by: the data engine's ORM cannot run its UPDATE on an \
             ordered query and fails (500). Leave _order_by out.",
        ));
    }
    let fields = model.filter_fields();
    let plan = Plan::of(
        model.table_name(),
        &fields,
        selection,
        model.has_relationships(),
    );
    for c in &plan.conditions {
        let family = fields[c.field].family;
        let unevaluable = match c.lookup {
            Lookup::Exact | Lookup::In => family == FilterFamily::Json,
            Lookup::Gt | Lookup::Gte | Lookup::Lt | Lookup::Lte => false,
            Lookup::IsNull | Lookup::IsEmpty => false,
            _ => true,
        };
        if unevaluable {
            return fails(format!("The filter {}", c.key));
        }
        let dated = matches!(family, FilterFamily::Date | FilterFamily::DateTime);
        let ordered = matches!(
            c.lookup,
            Lookup::Gt | Lookup::Gte | Lookup::Lt | Lookup::Lte
        );
        if loaded && dated && ordered {
            return Err(EngineError::stricter(
                c.key.clone(),
                format!(
                    "The filter {}: the data engine's reorder evaluates its filters in Python on \
                     the segment's records, where comparing a date with the filter's text (or \
                     an aware date-time with a naive one) fails (500). Send \
                     segment_by_ordering_field, or select the records otherwise.",
                    c.key
                ),
            ));
        }
    }
    let declared = plan.declared?;
    if declared.search.is_some_and(|s| !s.is_empty()) {
        return fails("_search".to_owned());
    }
    if declared.relation.is_some() {
        return fails("_relation".to_owned());
    }
    Ok(())
}

/// `reset_order`: the records the request selects, read in the order the body names (the
/// request's `_order_by`, then `value_ordering`'s values first, then `ordering`; else as the
/// database reads them), numbered 1, 2, ... in the ordering column, in one transaction; a row
/// that holds its number already is not written (the ORM writes changed attributes only).
/// The answer is the validated body.
pub async fn reset_order<D: Database>(
    db: &Served<'_, D>,
    model: &str,
    body: &PyJson,
    selection: &Selection,
) -> Result<Json, EngineError> {
    let lenient = selection.lenient;
    let model = db.model(model)?;
    let filter = db.filters(&model, selection, Use::Write)?;
    let request = ResetOrder::read(body, lenient)?;
    let mut params = filter.params.clone();
    let mut order = Vec::new();
    // The queryset's own order (`_order_by`, without the list's key), then the body's.
    let raw = order_values(selection);
    if !order_selects_nothing(&raw) {
        let terms = order_terms(&raw, lenient, usize::MAX, |name| model.field_index(name))?;
        for (i, desc) in terms.into_iter().filter(|&(i, _)| i != usize::MAX) {
            order.push(sorted::<D>(&model, &model.columns()[i], desc));
        }
    }
    if let Some(by_values) = request.value_ordering(lenient)? {
        let field = named_column::<D>(&model, Some(&by_values.field), "value_ordering", lenient)?;
        let mut case = String::from("CASE");
        if D::binary(field) {
            return Err(EngineError::engine_fails(
                lenient,
                "value_ordering",
                format!(
                    "value_ordering compares the binary field {:?} with text, which the data \
                     engine cannot send to the database (it fails with a 500).",
                    field.name()
                ),
            ));
        }
        for (i, value) in by_values.values.iter().enumerate() {
            // `column == text`: SQLAlchemy binds the text as a string (a comparison with a
            // text takes the text's type, not the column's), which the database compares.
            let bound = D::relation_value(field, value, &mut params);
            case.push_str(&format!(
                " WHEN {} = {bound} THEN {i}",
                D::sort_column(&model, field)
            ));
        }
        case.push_str(&format!(" ELSE {} END", by_values.values.len()));
        order.push(case);
    }
    for (name, desc) in request.ordering_names() {
        let field = named_column::<D>(&model, Some(&name), "ordering", lenient)?;
        order.push(sorted::<D>(&model, field, desc));
    }
    let ordering = ordering_column::<D>(&model, request.ordering_field.as_deref(), lenient)?;
    shared_key(&model, "reset_order")?;
    let order = if order.is_empty() {
        String::new()
    } else {
        format!(" ORDER BY {}", order.join(", "))
    };
    // The locks' columns, then the ordering column, as the ORM's `load_only` reads it: without
    // an order the rows come as the database reads that select list (a covering index of
    // the key alone would read them in its own order). Each database's lock is read from the
    // first columns of the row (`Database::at_locked`).
    let sql = format!(
        "SELECT {}, {} FROM {}{}{order}{}",
        D::lock_select(&model),
        D::column(ordering),
        model.table_sql(),
        filter.sql,
        D::LOCK
    );
    let conn = db.connect().await?;
    let mut tx = Session::<D>::begin(conn, D::BEGIN)
        .await
        .map_err(|f| db.fault(f, Failure::Unexpected))?;
    let rows = tx.cell_rows(&sql, &params).await;
    let rows = rows.map_err(|f| db.fault(f, Failure::Read { lenient }))?;
    let column = D::column(ordering);
    for (i, row) in rows.iter().enumerate() {
        let n = i + 1;
        let mut params = Binds::default();
        let at = D::at_locked(&model, row, &mut params);
        let sql = format!(
            "UPDATE {} SET {column} = {n} WHERE ({at}) AND ({column} IS NULL OR {column} <> {n})",
            model.table_sql()
        );
        run(db, &mut tx, &model, &sql, &params, lenient).await?;
    }
    let done = tx.commit().await;
    done.map_err(|f| refused_statement(db.fault(f, Failure::Write(&model)), lenient))?;
    Ok(request.answer())
}

/// A term of an `ORDER BY`: the column as a list sorts by it, descending or not.
fn sorted<D: Database>(model: &D::Model, field: &D::Field, desc: bool) -> String {
    let column = D::sort_column(model, field);
    if desc {
        format!("{column} DESC")
    } else {
        column
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers a segment's end is written back as: the texts of Python's `int`, `float`
    /// and `Decimal`, nothing else.
    #[test]
    fn only_numbers_are_written_as_literals() {
        for ok in ["0", "-3", "3.50", "1e+16", "1E-05", "12345678901234567890"] {
            assert!(number_literal(ok), "{ok}");
        }
        for bad in [
            "", "-", "1.", ".5", "1e", "inf", "NaN", "1 OR 1=1", "0x10", "+1",
        ] {
            assert!(!number_literal(bad), "{bad}");
        }
    }
}
