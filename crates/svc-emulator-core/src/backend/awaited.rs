//! A database server's resource as the core serves it ([`Awaited`]): the database's side of the
//! flows, beside the state the core keeps of it; [`Schedule`] for any database whose driver is
//! async already (PostgreSQL, MySQL), written once: each operation is awaited where it is asked
//! for, with the caller's [`Hold`] kept until it ends. Dropping a future drops its query: a
//! read-only SQL query is cancelled in the database.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::operation::Operation;
use super::{Hold, Schedule, Work};
use crate::dialect::bind::Bind;
use crate::dialect::{Dialect, Skip};
use crate::flow::database::Database;
use crate::flow::state::{Served, State, reload};
use crate::flow::{aggregate, read, read_only_sql, write};
use svc_engine::records::Models;
use svc_engine::sql_request::SqlRequest;
use svc_engine::table::describe;
use svc_engine::types::ModelInfo;
use svc_engine::{AggregateRequest, EngineError, GroupRequest, ListSpec, Listing, Selection};

/// A resource on a database server: `D`'s side of the flows and what the core keeps of it
/// between requests (its models, walks and time zone). It is a [`Backend`](super::Backend)
/// ([`Schedule`]); its methods run the records operations of the public API.
pub struct Awaited<D: Database> {
    db: D,
    state: State<D::Model, Bind>,
}

impl<D: Database + Debug> Debug for Awaited<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.db.fmt(f)
    }
}

impl<D: Database> Awaited<D> {
    /// `db`, its schema read.
    pub async fn new(db: D) -> Result<Self, EngineError> {
        let awaited = Awaited {
            db,
            state: State::default(),
        };
        reload(&awaited.served()).await?;
        Ok(awaited)
    }

    /// The database.
    pub fn db(&self) -> &D {
        &self.db
    }

    /// The database with the core's state of it, as a flow serves it.
    pub fn served(&self) -> Served<'_, D> {
        Served::new(&self.db, &self.state)
    }

    /// The names of the models, sorted.
    pub fn model_names(&self) -> Vec<String> {
        self.state.models().names()
    }

    /// Whether the resource has a model of that name.
    pub fn has_model(&self, name: &str) -> bool {
        self.state.models().contains(name)
    }

    /// `model` as last read: its key and fields; `None` when there is no such model.
    pub fn describe(&self, model: &str) -> Option<ModelInfo> {
        Some(describe(&*self.state.models().get(model).ok()?))
    }

    /// One page of records of `model`, or all of them (`no_pagination`), as the engine lists
    /// them.
    pub async fn list(&self, model: &str, spec: &ListSpec) -> Result<Listing, EngineError> {
        read::list(&self.served(), model, spec).await
    }

    /// The record of `model` whose key is `pk` and that `selection` selects, as JSON bytes.
    pub async fn retrieve_selected(
        &self,
        model: &str,
        pk: &str,
        selection: &Selection,
    ) -> Result<Vec<u8>, EngineError> {
        read::retrieve(&self.served(), model, pk, selection).await
    }

    /// Deletes the record `pk` (which `selection` must select), after what the engine's ORM
    /// does to the rows that refer to it.
    pub async fn delete_selected(
        &self,
        model: &str,
        pk: &str,
        selection: &Selection,
    ) -> Result<(), EngineError> {
        write::delete(&self.served(), model, pk, selection).await
    }

    /// `{"y_func": value}` over the records `selection` selects.
    pub async fn aggregate(
        &self,
        model: &str,
        req: &AggregateRequest,
        selection: &Selection,
    ) -> Result<Value, EngineError> {
        aggregate::aggregate(&self.served(), model, req, selection).await
    }

    /// Group rows `{"group": key, "group_2": ..., "y_func": value}`, sorted by the keys.
    pub async fn group(
        &self,
        model: &str,
        req: &GroupRequest,
        selection: &Selection,
    ) -> Result<Value, EngineError> {
        aggregate::group(&self.served(), model, req, selection).await
    }

    /// Runs one read-only query (its `:name` values, its paging) within `time` and
    /// `answer_bytes`; the answer is `{"columns", "data", "row_count"}` as JSON bytes.
    pub async fn sql(
        &self,
        request: &SqlRequest,
        time: Duration,
        answer_bytes: usize,
    ) -> Result<Vec<u8>, EngineError> {
        let (quoting, _) = self.db.query_dialect();
        read_only_sql::read_only(&self.served(), request, quoting, time, answer_bytes).await
    }
}

impl<D: Database + Debug + Send + Sync + 'static> Schedule for Awaited<D> {
    type Model = D::Model;

    const SKIP: Skip = <D as Dialect>::skip;

    fn models(&self) -> &Models<D::Model> {
        self.state.models()
    }

    fn sets_time_zone(&self) -> bool {
        true
    }

    fn run<O: Operation>(self: Arc<Self>, op: O, hold: Hold) -> Work<O::Out> {
        Box::pin(async move {
            let _hold = hold;
            op.run(&self.served()).await
        })
    }
}
