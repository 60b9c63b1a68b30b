//! The records operations of an admitted resource, whichever database it is: SQLite work runs
//! on the blocking pool with the resource's turn moved into the job (so the turn is held
//! while the job runs, even when the client has gone away); PostgreSQL work is awaited here.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::engine::convert::PyJson;
use crate::engine::{
    AggregateRequest, EngineError, GroupRequest, ListSpec, Listing, Resource, Selection, SqlCancel,
    SqlLimits,
};
use crate::http::HttpError;
use crate::http::admission::Admitted;
use crate::http::extract::blocking;
use crate::storage::resources::Database;

impl Admitted {
    /// Runs `work` on the SQLite resource on the blocking pool, holding this turn.
    async fn on_sqlite<T: Send + 'static>(
        &self,
        db: &Arc<Resource>,
        work: impl FnOnce(&Resource) -> Result<T, EngineError> + Send + 'static,
    ) -> Result<T, HttpError> {
        let db = Arc::clone(db);
        let turn = self.clone();
        blocking(move || {
            let _turn = turn;
            Ok(work(&db)?)
        })
        .await
    }

    /// A page of records, or all of them.
    pub(crate) async fn list(&self, model: String, spec: ListSpec) -> Result<Listing, HttpError> {
        match &**self {
            Database::Sqlite(db) => self.on_sqlite(db, move |db| db.list(&model, &spec)).await,
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Ok(db.list(&model, &spec).await?),
        }
    }

    /// One record, which `selection` must select.
    pub(crate) async fn retrieve(
        &self,
        model: String,
        pk: String,
        selection: Selection,
    ) -> Result<Vec<u8>, HttpError> {
        match &**self {
            Database::Sqlite(db) => {
                self.on_sqlite(db, move |db| db.retrieve_selected(&model, &pk, &selection))
                    .await
            }
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Ok(db.retrieve_selected(&model, &pk, &selection).await?),
        }
    }

    /// Creates a record from a body.
    pub(crate) async fn create(&self, model: String, body: PyJson) -> Result<Vec<u8>, HttpError> {
        match &**self {
            Database::Sqlite(db) => {
                self.on_sqlite(db, move |db| db.create_body(&model, &body))
                    .await
            }
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Ok(db.create_body(&model, &body).await?),
        }
    }

    /// Updates a record from a body: `partial` for `PATCH`, not for `PUT` (which only a
    /// PostgreSQL resource reads differently: it needs the required columns).
    pub(crate) async fn update(
        &self,
        model: String,
        pk: String,
        body: PyJson,
        selection: Selection,
        partial: bool,
    ) -> Result<Vec<u8>, HttpError> {
        match &**self {
            Database::Sqlite(db) => {
                let _ = partial;
                self.on_sqlite(db, move |db| db.update_body(&model, &pk, &body, &selection))
                    .await
            }
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Ok(db
                .update_body(&model, &pk, &body, &selection, partial)
                .await?),
        }
    }

    /// Deletes a record.
    pub(crate) async fn delete(
        &self,
        model: String,
        pk: String,
        selection: Selection,
    ) -> Result<(), HttpError> {
        match &**self {
            Database::Sqlite(db) => {
                self.on_sqlite(db, move |db| db.delete_selected(&model, &pk, &selection))
                    .await
            }
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Ok(db.delete_selected(&model, &pk, &selection).await?),
        }
    }

    /// `{"y_func": ...}`.
    pub(crate) async fn aggregate(
        &self,
        model: String,
        request: AggregateRequest,
        selection: Selection,
    ) -> Result<Value, HttpError> {
        match &**self {
            Database::Sqlite(db) => {
                self.on_sqlite(db, move |db| db.aggregate(&model, &request, &selection))
                    .await
            }
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Ok(db.aggregate(&model, &request, &selection).await?),
        }
    }

    /// Group rows.
    pub(crate) async fn group(
        &self,
        model: String,
        request: GroupRequest,
        selection: Selection,
    ) -> Result<Value, HttpError> {
        match &**self {
            Database::Sqlite(db) => {
                self.on_sqlite(db, move |db| db.group(&model, &request, &selection))
                    .await
            }
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Ok(db.group(&model, &request, &selection).await?),
        }
    }

    /// Re-reads the schema.
    pub(crate) async fn reload(&self) -> Result<(), HttpError> {
        match &**self {
            Database::Sqlite(db) => self.on_sqlite(db, |db| db.reload()).await,
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => Ok(db.reload().await?),
        }
    }

    /// One read-only query. `cancel` stops a SQLite query from the handler's drop guard; a
    /// PostgreSQL query is cancelled when this future is dropped.
    pub(crate) async fn sql(
        &self,
        query: String,
        params: Map<String, Value>,
        limits: SqlLimits,
        cancel: Arc<SqlCancel>,
    ) -> Result<Vec<u8>, HttpError> {
        match &**self {
            Database::Sqlite(db) => {
                self.on_sqlite(db, move |db| db.sql_with(&query, &params, limits, &cancel))
                    .await
            }
            #[cfg(feature = "postgres")]
            Database::Postgres(db) => {
                let _ = cancel;
                Ok(db
                    .sql(&query, &params, limits.time, limits.answer_bytes)
                    .await?)
            }
        }
    }
}
