//! The records operations of an admitted resource, whichever database it is: each hands the
//! work to the resource's [`Backend`](crate::backend::Backend) with this request's turn, which
//! the backend keeps until the work has ended.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::backend::{Hold, Update};
use crate::engine::convert::PyJson;
use crate::engine::{AggregateRequest, GroupRequest, ListSpec, Listing, Selection, SqlLimits};
use crate::http::HttpError;
use crate::http::admission::Admitted;

impl Admitted {
    /// This request's turn, for the backend to keep while the work runs.
    fn hold(&self) -> Hold {
        Box::new(self.clone())
    }

    /// A page of records, or all of them.
    pub(crate) async fn list(&self, model: String, spec: ListSpec) -> Result<Listing, HttpError> {
        Ok(Arc::clone(&**self).list(model, spec, self.hold()).await?)
    }

    /// One record, which `selection` must select.
    pub(crate) async fn retrieve(
        &self,
        model: String,
        pk: String,
        selection: Selection,
    ) -> Result<Vec<u8>, HttpError> {
        Ok(Arc::clone(&**self)
            .retrieve(model, pk, selection, self.hold())
            .await?)
    }

    /// Creates a record from a body (`lenient`: see [`crate::backend::Backend::create`]).
    pub(crate) async fn create(
        &self,
        model: String,
        body: PyJson,
        lenient: bool,
    ) -> Result<Vec<u8>, HttpError> {
        Ok(Arc::clone(&**self)
            .create(model, body, lenient, self.hold())
            .await?)
    }

    /// Updates a record from a body: `partial` for `PATCH`, not for `PUT`.
    pub(crate) async fn update(
        &self,
        model: String,
        pk: String,
        body: PyJson,
        selection: Selection,
        partial: bool,
    ) -> Result<Vec<u8>, HttpError> {
        let change = Update {
            model,
            pk,
            body,
            selection,
            partial,
        };
        Ok(Arc::clone(&**self).update(change, self.hold()).await?)
    }

    /// Deletes a record.
    pub(crate) async fn delete(
        &self,
        model: String,
        pk: String,
        selection: Selection,
    ) -> Result<(), HttpError> {
        Ok(Arc::clone(&**self)
            .delete(model, pk, selection, self.hold())
            .await?)
    }

    /// `{"y_func": ...}`.
    pub(crate) async fn aggregate(
        &self,
        model: String,
        request: AggregateRequest,
        selection: Selection,
    ) -> Result<Value, HttpError> {
        Ok(Arc::clone(&**self)
            .aggregate(model, request, selection, self.hold())
            .await?)
    }

    /// Group rows.
    pub(crate) async fn group(
        &self,
        model: String,
        request: GroupRequest,
        selection: Selection,
    ) -> Result<Value, HttpError> {
        Ok(Arc::clone(&**self)
            .group(model, request, selection, self.hold())
            .await?)
    }

    /// Re-reads the schema.
    pub(crate) async fn reload(&self) -> Result<(), HttpError> {
        Ok(Arc::clone(&**self).reload(self.hold()).await?)
    }

    /// One read-only query; dropping this future cancels it.
    pub(crate) async fn sql(
        &self,
        query: String,
        params: Map<String, Value>,
        limits: SqlLimits,
    ) -> Result<Vec<u8>, HttpError> {
        Ok(Arc::clone(&**self)
            .sql(query, params, limits, self.hold())
            .await?)
    }
}
