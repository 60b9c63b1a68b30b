//! A record's create, and the steps every update and delete share, as the engine takes them on
//! any database server: the body read by the serializer's fields, the record a request names.
//! How a database writes the values and reads them back is its own ([`Writes`]); an update's and
//! a delete's transaction stays in its backend: its driver's transaction borrows the
//! connection, and a generic flow that holds one across its steps is a future the compiler
//! cannot prove `Send` ("lifetime bound not satisfied").

use std::future::Future;
use std::sync::Arc;

use crate::engine::convert::{Internal, PyJson};
use crate::engine::filter::Where;
use crate::engine::relation::Use;
use crate::engine::server::{BodyColumn, body_values, validate};
use crate::engine::table::Table;
use crate::engine::{EngineError, Selection};
use crate::flow::database::Database;

/// A body's values: each given field, as its serializer field made it.
pub(crate) type Values<'m, F> = Vec<(&'m F, Internal)>;

/// A database server's side of the writes. Every future is `Send`.
pub(crate) trait Writes: Database {
    /// Values the engine cannot write on this database, refused before anything is sent.
    fn writable(values: &Values<'_, Self::Field>) -> Result<(), EngineError>;

    /// Inserts the record and reads it back as stored.
    fn insert(
        &self,
        conn: &mut Self::Reader,
        model: &Self::Model,
        values: &Values<'_, Self::Field>,
        tz: i32,
    ) -> impl Future<Output = Result<Vec<u8>, EngineError>> + Send;
}

/// Creates a record from a body as the engine does, and returns it as stored (`201`).
pub(crate) async fn create<D: Writes>(
    db: &D,
    model: &str,
    body: &PyJson,
) -> Result<Vec<u8>, EngineError> {
    let model = db.model(model)?;
    let given = body_values(&*model, body, false)?;
    let mut values = validate(&*model, &given, true)?;
    D::writable(&values)?;
    // An autoincrement key sent as 0, "" or null counts as not sent.
    if model.pk_field().autoincrement()
        && let Some(at) = values.iter().position(|(f, _)| f.primary_key())
        && !values[at].1.truthy()
    {
        values.remove(at);
    }
    let mut conn = db.reader(None).await?;
    let tz = db.time_zone(&mut conn).await?;
    db.insert(&mut conn, &model, &values, tz).await
}

/// The record a request names: its model, the selection's clause, and the key's condition
/// (`404` for an unknown model; the filters and the key read as the engine reads them).
pub(crate) struct Selected<D: Database> {
    /// The model.
    pub(crate) model: Arc<D::Model>,
    /// The selection's clause, with the key's value bound after the filters'.
    pub(crate) filter: Where<D::Params>,
    /// `key = value`.
    pub(crate) key: String,
}

/// The record `pk` of `model` that `selection` must select, for a write.
pub(crate) fn selected<D: Database>(
    db: &D,
    model: &str,
    pk: &str,
    selection: &Selection,
) -> Result<Selected<D>, EngineError> {
    let model = db.model(model)?;
    let mut filter = db.filters(&model, selection, Use::Write)?;
    let key = D::key_condition(&model, pk, &mut filter.params)?;
    Ok(Selected { model, filter, key })
}

/// An update's values, read by the serializer's fields after the record was found: a `PUT`
/// (`partial` false) needs every column a create needs; fields not sent are left as they are.
pub(crate) fn changes<'m, D: Writes>(
    model: &'m D::Model,
    body: &'m PyJson,
    partial: bool,
) -> Result<Values<'m, D::Field>, EngineError> {
    let given = body_values(model, body, true)?;
    let values = validate(model, &given, !partial)?;
    D::writable(&values)?;
    Ok(values)
}
