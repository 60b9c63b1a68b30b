//! [`Backend`] written once, over what a database says of where it runs its work
//! ([`Schedule`]): each records operation is an [`Operation`](super::operation::Operation),
//! the flow it answers by is the core's, and the database only runs it (awaited where it is
//! asked for on a database server, [`Awaited`](super::Awaited); on the async worker or the blocking
//! pool on SQLite, `svc-emulator-sqlite/src/backend.rs`). Its reload, saved copies, exports and
//! imports are operations too ([`Reload`], [`SaveCopy`], [`RestoreCopy`], [`Export`],
//! [`ImportRecords`]).

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::operation::{
    Action, Aggregate, BulkCreate, Change, Create, Delete, Export, Filters, Group, ImportRecords,
    List, Operation, Query, Reload, Reorder, RestoreCopy, Retrieve, SaveCopy, Siblings,
};
use super::{Backend, Batch, Exported, Hold, Import, Saved, Update, Work};
use crate::dialect::Skip;
use svc_engine::extra_actions::Created;
use svc_engine::python::json::PyJson;
use svc_engine::records::Models;
use svc_engine::sql_params;
use svc_engine::sql_request::SqlRequest;
use svc_engine::table::{Table, describe};
use svc_engine::types::ModelInfo;
use svc_engine::{
    AggregateRequest, EngineError, GroupRequest, ListSpec, Listing, Selection, SqlLimits,
};

/// Where a database runs each operation of [`Backend`], which the core writes over it: each
/// through [`run`](Self::run). Every future owns what it needs and keeps the caller's [`Hold`] until the work has
/// ended.
pub trait Schedule: Send + Sync + Debug + 'static {
    /// A model.
    type Model: Table;

    /// How the database reads a statement's text: where a string, a quoted name or a comment
    /// starts at a byte, the byte after it ([`Dialect::skip`](crate::dialect::Dialect::skip)).
    const SKIP: Skip;

    /// The models, as last read (start or reload).
    fn models(&self) -> &Models<Self::Model>;

    /// Whether the engine sets a request's `tz` on this database's session: it does on the
    /// database servers, not on SQLite ([`Backend::sets_time_zone`]).
    fn sets_time_zone(&self) -> bool {
        false
    }

    /// Runs `op`'s flow over the database where it runs work of `op`'s
    /// [`Kind`](super::operation::Kind).
    fn run<O: Operation>(self: Arc<Self>, op: O, hold: Hold) -> Work<O::Out>;

    /// Creates each body in turn ([`Backend::create_all`]); by default each create is a
    /// transaction of its own.
    fn create_all(self: Arc<Self>, model: String, bodies: Vec<PyJson>, hold: Hold) -> Batch {
        Box::pin(async move {
            let _hold = hold;
            let mut created = 0;
            for (i, body) in bodies.into_iter().enumerate() {
                let create = Create {
                    model: model.clone(),
                    body,
                    lenient: false,
                };
                let done = Arc::clone(&self).run(create, Box::new(())).await;
                done.map_err(|e| (i, e))?;
                created += 1;
            }
            Ok(created)
        })
    }

    /// The `:name` inputs of an action's statements, as the database reads its text
    /// ([`Backend::inputs`]): outside its strings, quoted names and comments
    /// ([`Dialect::skip`](crate::dialect::Dialect::skip)).
    fn inputs(&self, statements: &[String]) -> Result<BTreeSet<String>, EngineError> {
        sql_params::parameter_names(statements, Self::SKIP)
    }
}

impl<S: Schedule> Backend for S {
    fn has_model(&self, name: &str) -> bool {
        self.models().contains(name)
    }

    fn sets_time_zone(&self) -> bool {
        Schedule::sets_time_zone(self)
    }

    fn model_names(&self) -> Vec<String> {
        self.models().names()
    }

    fn describe(&self, model: &str) -> Option<ModelInfo> {
        Some(describe(&*self.models().get(model).ok()?))
    }

    fn list(self: Arc<Self>, model: String, spec: ListSpec, hold: Hold) -> Work<Listing> {
        self.run(List { model, spec }, hold)
    }

    fn retrieve(
        self: Arc<Self>,
        model: String,
        pk: String,
        selection: Selection,
        hold: Hold,
    ) -> Work<Vec<u8>> {
        let op = Retrieve {
            model,
            pk,
            selection,
        };
        self.run(op, hold)
    }

    fn create(
        self: Arc<Self>,
        model: String,
        body: PyJson,
        lenient: bool,
        hold: Hold,
    ) -> Work<Vec<u8>> {
        let op = Create {
            model,
            body,
            lenient,
        };
        self.run(op, hold)
    }

    fn create_all(self: Arc<Self>, model: String, bodies: Vec<PyJson>, hold: Hold) -> Batch {
        Schedule::create_all(self, model, bodies, hold)
    }

    fn update(self: Arc<Self>, change: Update, hold: Hold) -> Work<Vec<u8>> {
        self.run(Change(change), hold)
    }

    fn delete(
        self: Arc<Self>,
        model: String,
        pk: String,
        selection: Selection,
        hold: Hold,
    ) -> Work<()> {
        let op = Delete {
            model,
            pk,
            selection,
        };
        self.run(op, hold)
    }

    fn check_filters(self: Arc<Self>, model: String, selection: Selection, hold: Hold) -> Work<()> {
        self.run(Filters { model, selection }, hold)
    }

    fn aggregate(
        self: Arc<Self>,
        model: String,
        request: AggregateRequest,
        selection: Selection,
        hold: Hold,
    ) -> Work<Value> {
        let op = Aggregate {
            model,
            request,
            selection,
        };
        self.run(op, hold)
    }

    fn group(
        self: Arc<Self>,
        model: String,
        request: GroupRequest,
        selection: Selection,
        hold: Hold,
    ) -> Work<Value> {
        let op = Group {
            model,
            request,
            selection,
        };
        self.run(op, hold)
    }

    fn bulk_create(
        self: Arc<Self>,
        model: String,
        items: Vec<PyJson>,
        lenient: bool,
        hold: Hold,
    ) -> Work<Vec<Created>> {
        let op = BulkCreate {
            model,
            items,
            lenient,
        };
        self.run(op, hold)
    }

    fn siblings(
        self: Arc<Self>,
        model: String,
        pk: String,
        selection: Selection,
        hold: Hold,
    ) -> Work<Value> {
        let op = Siblings {
            model,
            pk,
            selection,
        };
        self.run(op, hold)
    }

    fn reorder(
        self: Arc<Self>,
        model: String,
        body: PyJson,
        selection: Selection,
        reset: bool,
        hold: Hold,
    ) -> Work<Value> {
        let op = Reorder {
            model,
            body,
            selection,
            reset,
        };
        self.run(op, hold)
    }

    fn reload(self: Arc<Self>, hold: Hold) -> Work<()> {
        self.run(Reload, hold)
    }

    fn save(self: Arc<Self>, hold: Hold) -> Work<Saved> {
        self.run(SaveCopy, hold)
    }

    /// The copy put back, then the schema read again: the tables may have changed since the
    /// copy was saved.
    fn restore(self: Arc<Self>, saved: Saved, hold: Hold) -> Work<()> {
        Box::pin(async move {
            Arc::clone(&self)
                .run(RestoreCopy(saved), Box::new(()))
                .await?;
            self.run(Reload, hold).await
        })
    }

    fn export(self: Arc<Self>, hold: Hold) -> Work<Exported> {
        self.run(Export, hold)
    }

    /// The records written, then the schema read again: what the models know of their rows
    /// (a key the rows share).
    fn import(self: Arc<Self>, import: Import, hold: Hold) -> Work<usize> {
        Box::pin(async move {
            let written = Arc::clone(&self)
                .run(ImportRecords(import), Box::new(()))
                .await?;
            self.run(Reload, hold).await?;
            Ok(written)
        })
    }

    fn sql(self: Arc<Self>, request: SqlRequest, limits: SqlLimits, hold: Hold) -> Work<Vec<u8>> {
        self.run(Query { request, limits }, hold)
    }

    fn inputs(&self, statements: &[String]) -> Result<BTreeSet<String>, EngineError> {
        Schedule::inputs(self, statements)
    }

    fn execute(
        self: Arc<Self>,
        statements: Vec<String>,
        inputs: Map<String, Value>,
        limits: SqlLimits,
        hold: Hold,
    ) -> Work<Vec<u8>> {
        let op = Action {
            statements,
            inputs,
            limits,
        };
        self.run(op, hold)
    }
}
