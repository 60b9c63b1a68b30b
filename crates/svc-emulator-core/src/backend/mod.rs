//! The backend interface: what every database that serves resources implements.
//!
//! A connected resource is one database (a SQLite file, a PostgreSQL database, ...). The HTTP
//! layer and the route slices hold it as an `Arc<dyn Backend>` and never learn which database
//! it is: the engine's rules (the query grammar, the Python readings of values, the serializer
//! forms, aggregate planning, errors) live in [`svc_engine`], each operation's flow in
//! [`operation`], and each database is a folder of its own that says where it runs them (its
//! [`Schedule`], over which [`Backend`] is written once) with its dialect
//! (`svc-emulator-sqlite/`, `svc-emulator-postgres/`). The emulator's catalog is the one place
//! that names them: it opens each resource's database at start.
//!
//! Every operation is a future that owns what it needs (`'static`), so that a backend may run
//! the work where it fits: the SQLite backend moves it to the blocking pool (but for short
//! reads, which it runs on the async worker: `sqlite::backend`), the PostgreSQL one awaits its
//! connection pool. The caller's [`Hold`] (its admission turn) is kept until the work
//! has ended, even when the caller stops waiting; dropping the future stops the work where the
//! database allows (a read-only query is cancelled).

mod awaited;
pub mod operation;
pub mod pooled;
mod schedule;

pub use awaited::Awaited;
pub use schedule::Schedule;

use std::any::Any;
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};

use svc_engine::extra_actions::Created;
use svc_engine::python::json::PyJson;
use svc_engine::sql_request::SqlRequest;
use svc_engine::{
    AggregateRequest, EngineError, GroupRequest, ListSpec, Listing, Selection, SqlLimits,
};

/// The future of a backend operation.
pub type Work<T> = Pin<Box<dyn Future<Output = Result<T, EngineError>> + Send + 'static>>;

/// The future of [`Backend::create_all`]: the number of records created, or the index of the
/// first body refused and why.
pub type Batch =
    Pin<Box<dyn Future<Output = Result<usize, (usize, EngineError)>> + Send + 'static>>;

/// A copy of a resource's data that [`Backend::save`] kept: only the backend that kept it
/// reads it ([`Backend::restore`]).
pub type Saved = crate::flow::export::SavedData;

/// A resource's records as an export writes them ([`Backend::export`]): as of one moment.
#[derive(Debug)]
pub struct Exported {
    /// Each model that holds rows (not views), by name, with its records: a JSON array in
    /// key order, as the engine's serializer writes them (the fixtures format).
    pub models: Vec<(String, Vec<u8>)>,
    /// What numbers the next generated keys, in the database's own terms (sequences,
    /// `AUTO_INCREMENT`s, SQLite's `sqlite_sequence`), read back by [`Backend::import`].
    pub keys: Value,
}

/// Records an import writes ([`Backend::import`]).
#[derive(Debug)]
pub struct Import {
    /// Each model's records, as an export wrote them.
    pub models: Vec<(String, Vec<PyJson>)>,
    /// The models are emptied first.
    pub replace: bool,
    /// What numbers the next generated keys once the records are in (an export's
    /// [`Exported::keys`]); `None` leaves them to the database.
    pub keys: Option<Value>,
}

/// Something the caller needs kept until the work has ended (its admission turn): a backend
/// drops it only when the database is done, not when the caller stops waiting.
pub type Hold = Box<dyn Any + Send>;

/// One resource's database, as the records, SQL and reload routes use it.
///
/// Each operation answers as the platform's data engine answers over that database
/// (docs/contract.md 5.1 and 5.2); errors are [`EngineError`]s, whose status the HTTP layer
/// chooses. A backend is [`Any`]: the built-in tools resource (users and teams) is always
/// SQLite's, whose strict writes its routes reach by downcasting it (`svc-emulator-http`'s
/// `tools`).
pub trait Backend: Any + Send + Sync + Debug {
    /// Whether the resource has a model of that name (as last read: start or reload).
    fn has_model(&self, name: &str) -> bool;

    /// Whether the engine sets a request's `tz` on this database's session
    /// (`svc_engine::time_zone`): it does on the database servers, not on SQLite.
    fn sets_time_zone(&self) -> bool {
        false
    }

    /// The names of the models, sorted (as last read: start or reload). For the `404` of an
    /// unknown model, which lists them.
    fn model_names(&self) -> Vec<String>;

    /// `model` as last read (start or reload): its key and fields; `None` when there is no
    /// such model.
    fn describe(&self, model: &str) -> Option<svc_engine::types::ModelInfo>;

    /// The names of `model`'s fields, in table order; `None` when there is no such model. For
    /// strict mode's refusal of unknown fields on writes.
    fn field_names(&self, model: &str) -> Option<Vec<String>> {
        let fields = self.describe(model)?.fields;
        Some(fields.into_iter().map(|f| f.name).collect())
    }

    /// A page of `model`'s records, or all of them.
    fn list(self: Arc<Self>, model: String, spec: ListSpec, hold: Hold) -> Work<Listing>;

    /// The record with key `pk`, which `selection` must select (else a `404`).
    fn retrieve(
        self: Arc<Self>,
        model: String,
        pk: String,
        selection: Selection,
        hold: Hold,
    ) -> Work<Vec<u8>>;

    /// Creates a record from a body; the created record. `lenient`: where the engine writes
    /// and then fails, do the same (strict mode refuses before writing).
    fn create(
        self: Arc<Self>,
        model: String,
        body: PyJson,
        lenient: bool,
        hold: Hold,
    ) -> Work<Vec<u8>>;

    /// Creates a record from each body in turn, strictly, as [`create`](Self::create) creates
    /// one: a resource's fixtures at start. A database that can runs them all in one
    /// transaction (SQLite: nothing is created when one is refused); by default each is a
    /// create of its own, and those before a refused one stay.
    fn create_all(self: Arc<Self>, model: String, bodies: Vec<PyJson>, hold: Hold) -> Batch {
        Box::pin(async move {
            let _hold = hold;
            let mut created = 0;
            for (i, body) in bodies.into_iter().enumerate() {
                Arc::clone(&self)
                    .create(model.clone(), body, false, Box::new(()))
                    .await
                    .map_err(|e| (i, e))?;
                created += 1;
            }
            Ok(created)
        })
    }

    /// Updates the record with key `pk` (which `selection` must select) from a body: `partial`
    /// for `PATCH`, not for `PUT`. The updated record.
    fn update(self: Arc<Self>, change: Update, hold: Hold) -> Work<Vec<u8>>;

    /// Deletes the record with key `pk`, which `selection` must select.
    fn delete(
        self: Arc<Self>,
        model: String,
        pk: String,
        selection: Selection,
        hold: Hold,
    ) -> Work<()>;

    /// Checks the filters of `selection` on `model` as the engine's update reads them before
    /// it looks the record up (its `get_object`: the list's filters, first): `Ok` where they
    /// hold; a filter the engine refuses is its answer (a `PUT` or `PATCH` on a path without a
    /// record key fails after them).
    fn check_filters(self: Arc<Self>, model: String, selection: Selection, hold: Hold) -> Work<()>;

    /// `{"y_func": ...}` over the selected records.
    fn aggregate(
        self: Arc<Self>,
        model: String,
        request: AggregateRequest,
        selection: Selection,
        hold: Hold,
    ) -> Work<Value>;

    /// The selected records' groups: `[{"group": ..., "y_func": ...}, ...]`.
    fn group(
        self: Arc<Self>,
        model: String,
        request: GroupRequest,
        selection: Selection,
        hold: Hold,
    ) -> Work<Value>;

    /// `bulk_create`: a record created from each item in turn, each as
    /// [`create`](Self::create) creates one and committed on its own, the engine's refusal of
    /// one answering that item (`flow::extra::create_each`).
    fn bulk_create(
        self: Arc<Self>,
        model: String,
        items: Vec<PyJson>,
        lenient: bool,
        hold: Hold,
    ) -> Work<Vec<Created>>;

    /// `get_siblings`: `{"prev": {KEY: value} | null, "next": ...}` around the record with key
    /// `pk` (which `selection` must select) in the list's order, or `{}`
    /// (`flow::extra::siblings`).
    fn siblings(
        self: Arc<Self>,
        model: String,
        pk: String,
        selection: Selection,
        hold: Hold,
    ) -> Work<Value>;

    /// `reorder` (`reset`: `reset_order`) of the records `selection` selects, from its body;
    /// the validated body (`flow::extra::reorder`, `flow::extra::reset_order`).
    fn reorder(
        self: Arc<Self>,
        model: String,
        body: PyJson,
        selection: Selection,
        reset: bool,
        hold: Hold,
    ) -> Work<Value>;

    /// Re-reads the schema: models and fields as they are now.
    fn reload(self: Arc<Self>, hold: Hold) -> Work<()>;

    /// Keeps a copy of the resource's data as it is now (every table's rows, and what numbers
    /// the next generated keys), for [`restore`](Self::restore): a snapshot or the state at
    /// start of the emulator's resets.
    fn save(self: Arc<Self>, hold: Hold) -> Work<Saved>;

    /// Puts back the data that [`save`](Self::save) kept: the rows of every table saved,
    /// written since or not, and the next generated keys; then re-reads the schema.
    fn restore(self: Arc<Self>, saved: Saved, hold: Hold) -> Work<()>;

    /// Every record of every model that holds rows, as of one moment, and what numbers the
    /// next generated keys: an export (`svc emulator export`).
    fn export(self: Arc<Self>, hold: Hold) -> Work<Exported>;

    /// Writes an export's records in one transaction (nothing when one is refused), as
    /// creates read their values but for generated columns; the next generated keys as
    /// exported when given. The number of records written.
    fn import(self: Arc<Self>, import: Import, hold: Hold) -> Work<usize>;

    /// One read-only query with named parameters, paged as its request says:
    /// `{"columns", "data", "row_count"}` as JSON. Dropping the future cancels the query.
    fn sql(self: Arc<Self>, request: SqlRequest, limits: SqlLimits, hold: Hold) -> Work<Vec<u8>>;

    /// The names of the `:name` inputs of an action's statements (docs/contract.md 5.6), read
    /// as this database reads its SQL text: a name inside a string, a quoted name or a comment
    /// is none.
    fn inputs(&self, statements: &[String]) -> Result<BTreeSet<String>, EngineError>;

    /// Runs an action's statements in order, in one read-write transaction, each `:name`
    /// bound to `inputs[name]`: the last statement's rows as `{"columns", "data",
    /// "row_count"}` JSON. A statement that fails rolls back all of them (`400`, the
    /// database's message naming `query`). Dropping the future cancels the statement running.
    fn execute(
        self: Arc<Self>,
        statements: Vec<String>,
        inputs: Map<String, Value>,
        limits: SqlLimits,
        hold: Hold,
    ) -> Work<Vec<u8>>;
}

/// An update of one record (`PUT` or `PATCH`).
#[derive(Debug, Clone)]
pub struct Update {
    /// The model.
    pub model: String,
    /// The record's key, as the URL gives it.
    pub pk: String,
    /// The body's values.
    pub body: PyJson,
    /// The list filters of the query, which must select the record.
    pub selection: Selection,
    /// `PATCH` (only the given fields) rather than `PUT`.
    pub partial: bool,
}
