//! The records operations of [`Backend`](super::Backend), each the flow it runs over any
//! database ([`Operation::run`]), written once: a database says only where it runs one
//! ([`Schedule::run`](super::Schedule::run)), by what the operation does to the data
//! ([`Kind`]).

use crate::flow::state::Served;
use std::future::Future;

use serde_json::{Map, Value};

use crate::flow;
use crate::flow::database::Database;
use svc_engine::extra_actions::Created;
use svc_engine::python::json::PyJson;
use svc_engine::relation::Use;
use svc_engine::sql_request::SqlRequest;
use svc_engine::{
    AggregateRequest, EngineError, GroupRequest, ListSpec, Listing, Selection, SqlLimits,
};

use super::{Exported, Import, Update};
use crate::flow::export::SavedData;

/// What an operation does to the data, which says where a database may run it: SQLite runs a
/// list or a retrieve on the async worker when it is known to be short, and the rest on the
/// blocking pool, on a reader or on the writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A page of records ([`List`]).
    List,
    /// One record ([`Retrieve`]).
    Retrieve,
    /// Other reads of records ([`Siblings`]), a copy of them ([`SaveCopy`], [`Export`]).
    Read,
    /// An aggregate or a group, which reads every selected row ([`Aggregate`], [`Group`]).
    Summary,
    /// A write ([`Create`], [`Change`], [`Delete`], [`BulkCreate`], [`Reorder`]), data or a
    /// schema put back ([`RestoreCopy`], [`ImportRecords`], [`Reload`]).
    Write,
    /// A user's read-only query ([`Query`]): stopped at its time limit, or when its caller
    /// goes away.
    Query,
    /// An action's statements in a read-write transaction ([`Action`]): stopped as a query
    /// is.
    Action,
}

/// A records operation: its request, and the flow that answers it over a database.
pub trait Operation: Send + Sync + 'static {
    /// The answer.
    type Out: Send + 'static;

    /// What it does to the data.
    const KIND: Kind;

    /// Runs the operation's flow over `db`.
    fn run<'a, D: Database>(
        &'a self,
        db: &'a Served<'a, D>,
    ) -> impl Future<Output = Result<Self::Out, EngineError>> + Send + 'a;

    /// The model and the request of a list, what a database may remember its runs by.
    fn listed(&self) -> Option<(&str, &ListSpec)> {
        None
    }

    /// The model of a retrieve.
    fn retrieved(&self) -> Option<&str> {
        None
    }

    /// The limits of a query or an action, what a database that stops its statement itself
    /// stops it by.
    fn limits(&self) -> Option<SqlLimits> {
        None
    }
}

/// One page of records of `model`, or all of them (`no_pagination`), as the engine lists them.
#[derive(Debug)]
pub struct List {
    /// The model.
    pub model: String,
    /// The request's selection, order and page.
    pub spec: ListSpec,
}

impl Operation for List {
    type Out = Listing;
    const KIND: Kind = Kind::List;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<Listing, EngineError> {
        flow::read::list(db, &self.model, &self.spec).await
    }

    fn listed(&self) -> Option<(&str, &ListSpec)> {
        Some((&self.model, &self.spec))
    }
}

/// The record of `model` whose key is `pk` and that `selection` selects, as JSON bytes.
#[derive(Debug)]
pub struct Retrieve {
    /// The model.
    pub model: String,
    /// The key, as the URL gives it.
    pub pk: String,
    /// The list filters of the query string, which the engine applies to one record too.
    pub selection: Selection,
}

impl Operation for Retrieve {
    type Out = Vec<u8>;
    const KIND: Kind = Kind::Retrieve;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<Vec<u8>, EngineError> {
        flow::read::retrieve(db, &self.model, &self.pk, &self.selection).await
    }

    fn retrieved(&self) -> Option<&str> {
        Some(&self.model)
    }
}

/// The filters of `selection` on `model`, as an update of one record reads them before it looks
/// the record up (the engine's `get_object`); nothing is read.
#[derive(Debug)]
pub struct Filters {
    /// The model.
    pub model: String,
    /// The list filters of the query string.
    pub selection: Selection,
}

impl Operation for Filters {
    type Out = ();
    const KIND: Kind = Kind::Read;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<(), EngineError> {
        let model = db.model(&self.model)?;
        db.filters(&model, &self.selection, Use::Write).map(drop)
    }
}

/// A record created from a body, read back as stored (JSON bytes).
#[derive(Debug)]
pub struct Create {
    /// The model.
    pub model: String,
    /// The body.
    pub body: PyJson,
    /// The request's mode.
    pub lenient: bool,
}

impl Operation for Create {
    type Out = Vec<u8>;
    const KIND: Kind = Kind::Write;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<Vec<u8>, EngineError> {
        flow::write::create(db, &self.model, &self.body, self.lenient).await
    }
}

/// An update of a record (`PUT` or `PATCH`), read back as stored.
#[derive(Debug)]
pub struct Change(pub Update);

impl Operation for Change {
    type Out = Vec<u8>;
    const KIND: Kind = Kind::Write;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<Vec<u8>, EngineError> {
        let Update {
            model,
            pk,
            body,
            selection,
            partial,
        } = &self.0;
        // A `PUT` is partial where the engine's serializer requires no column.
        let partial = *partial || D::REQUIRES_NO_COLUMN;
        flow::write::update(db, model, pk, body, selection, partial).await
    }
}

/// The record `pk` (which `selection` must select) deleted, after what the engine's ORM does to
/// the rows that refer to it.
#[derive(Debug)]
pub struct Delete {
    /// The model.
    pub model: String,
    /// The key, as the URL gives it.
    pub pk: String,
    /// The list filters of the query string.
    pub selection: Selection,
}

impl Operation for Delete {
    type Out = ();
    const KIND: Kind = Kind::Write;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<(), EngineError> {
        flow::write::delete(db, &self.model, &self.pk, &self.selection).await
    }
}

/// `{"y_func": value}` over the records `selection` selects.
#[derive(Debug)]
pub struct Aggregate {
    /// The model.
    pub model: String,
    /// The function and its column.
    pub request: AggregateRequest,
    /// The records.
    pub selection: Selection,
}

impl Operation for Aggregate {
    type Out = Value;
    const KIND: Kind = Kind::Summary;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<Value, EngineError> {
        flow::aggregate::aggregate(db, &self.model, &self.request, &self.selection).await
    }
}

/// Group rows `{"group": key, "group_2": ..., "y_func": value}`, sorted by the keys.
#[derive(Debug)]
pub struct Group {
    /// The model.
    pub model: String,
    /// The groups' columns and function.
    pub request: GroupRequest,
    /// The records.
    pub selection: Selection,
}

impl Operation for Group {
    type Out = Value;
    const KIND: Kind = Kind::Summary;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<Value, EngineError> {
        flow::aggregate::group(db, &self.model, &self.request, &self.selection).await
    }
}

/// The engine's `bulk_create` action: each item created in a transaction of its own.
#[derive(Debug)]
pub struct BulkCreate {
    /// The model.
    pub model: String,
    /// The items.
    pub items: Vec<PyJson>,
    /// The request's mode.
    pub lenient: bool,
}

impl Operation for BulkCreate {
    type Out = Vec<Created>;
    const KIND: Kind = Kind::Write;

    async fn run<'a, D: Database>(
        &'a self,
        db: &'a Served<'a, D>,
    ) -> Result<Vec<Created>, EngineError> {
        flow::extra::create_each(db, &self.model, &self.items, self.lenient).await
    }
}

/// The engine's `get_siblings` action: the records before and after `pk` in the list's order.
#[derive(Debug)]
pub struct Siblings {
    /// The model.
    pub model: String,
    /// The key, as the URL gives it.
    pub pk: String,
    /// The list's selection and order.
    pub selection: Selection,
}

impl Operation for Siblings {
    type Out = Value;
    const KIND: Kind = Kind::Read;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<Value, EngineError> {
        flow::extra::siblings(db, &self.model, &self.pk, &self.selection).await
    }
}

/// The engine's `reorder` action (`reset`: its `reset_order`).
#[derive(Debug)]
pub struct Reorder {
    /// The model.
    pub model: String,
    /// The body.
    pub body: PyJson,
    /// The records.
    pub selection: Selection,
    /// `reset_order` rather than `reorder`.
    pub reset: bool,
}

impl Operation for Reorder {
    type Out = Value;
    const KIND: Kind = Kind::Write;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<Value, EngineError> {
        if self.reset {
            flow::extra::reset_order(db, &self.model, &self.body, &self.selection).await
        } else {
            flow::extra::reorder(db, &self.model, &self.body, &self.selection).await
        }
    }
}

/// One read-only query with its `:name` values, answered `{"columns", "data", "row_count"}` as
/// JSON bytes.
#[derive(Debug)]
pub struct Query {
    /// The statement, its values by name and its paging.
    pub request: SqlRequest,
    /// Its time limit and answer cap.
    pub limits: SqlLimits,
}

impl Operation for Query {
    type Out = Vec<u8>;
    const KIND: Kind = Kind::Query;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<Vec<u8>, EngineError> {
        let SqlLimits { time, answer_bytes } = self.limits;
        let (quoting, _) = db.query_dialect();
        flow::read_only_sql::read_only(db, &self.request, quoting, time, answer_bytes).await
    }

    fn limits(&self) -> Option<SqlLimits> {
        Some(self.limits)
    }
}

/// An action's statements, run in order in one read-write transaction with its inputs bound:
/// the last statement's answer, or the first failure with everything rolled back.
#[derive(Debug)]
pub struct Action {
    /// The statements.
    pub statements: Vec<String>,
    /// The inputs, by name.
    pub inputs: Map<String, Value>,
    /// The time limit and answer cap.
    pub limits: SqlLimits,
}

impl Operation for Action {
    type Out = Vec<u8>;
    const KIND: Kind = Kind::Action;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<Vec<u8>, EngineError> {
        let SqlLimits { time, answer_bytes } = self.limits;
        flow::action::run_action(db, &self.statements, &self.inputs, time, answer_bytes).await
    }

    fn limits(&self) -> Option<SqlLimits> {
        Some(self.limits)
    }
}

/// The schema read again: the models as they are now ([`flow::state::reload`]).
#[derive(Debug)]
pub struct Reload;

impl Operation for Reload {
    type Out = ();
    const KIND: Kind = Kind::Write;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<(), EngineError> {
        flow::state::reload(db).await
    }
}

/// A copy of the data as it is now ([`Database::save_copy`]).
#[derive(Debug)]
pub struct SaveCopy;

impl Operation for SaveCopy {
    type Out = SavedData;
    const KIND: Kind = Kind::Read;

    async fn run<'a, D: Database>(
        &'a self,
        db: &'a Served<'a, D>,
    ) -> Result<SavedData, EngineError> {
        D::save_copy(db).await
    }
}

/// A saved copy put back ([`Database::restore_copy`]); the schema is read again after it
/// ([`Reload`]).
#[derive(Debug)]
pub struct RestoreCopy(pub SavedData);

impl Operation for RestoreCopy {
    type Out = ();
    const KIND: Kind = Kind::Write;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<(), EngineError> {
        D::restore_copy(db, &*self.0).await
    }
}

/// The records of every model as of one moment ([`flow::export::export`]).
#[derive(Debug)]
pub struct Export;

impl Operation for Export {
    type Out = Exported;
    const KIND: Kind = Kind::Read;

    async fn run<'a, D: Database>(
        &'a self,
        db: &'a Served<'a, D>,
    ) -> Result<Exported, EngineError> {
        let (models, keys) = flow::export::export(db).await?;
        Ok(Exported { models, keys })
    }
}

/// An export's records written ([`flow::export::import`]); the schema is read again after it
/// ([`Reload`]: what the models know of their rows, a key the rows share).
#[derive(Debug)]
pub struct ImportRecords(pub Import);

impl Operation for ImportRecords {
    type Out = usize;
    const KIND: Kind = Kind::Write;

    async fn run<'a, D: Database>(&'a self, db: &'a Served<'a, D>) -> Result<usize, EngineError> {
        let Import {
            models,
            replace,
            keys,
        } = &self.0;
        flow::export::import(db, models, *replace, keys.as_ref()).await
    }
}
