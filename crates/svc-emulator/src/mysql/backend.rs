//! [`MyResource`] as a [`Backend`]: the operations are async already, so each is awaited where
//! it is asked for, with the caller's [`Hold`] kept until it ends. Dropping a future drops its
//! query: a read-only SQL query is killed in MySQL (`sql`).

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::backend::{Backend, Hold, Update, Work};
use crate::engine::convert::PyJson;
use crate::engine::{AggregateRequest, GroupRequest, ListSpec, Listing, Selection, SqlLimits};
use crate::mysql::MyResource;

impl Backend for MyResource {
    fn has_model(&self, name: &str) -> bool {
        MyResource::has_model(self, name)
    }

    fn model_names(&self) -> Vec<String> {
        MyResource::model_names(self)
    }

    fn field_names(&self, model: &str) -> Option<Vec<String>> {
        MyResource::field_names(self, model)
    }

    fn list(self: Arc<Self>, model: String, spec: ListSpec, hold: Hold) -> Work<Listing> {
        Box::pin(async move {
            let _hold = hold;
            MyResource::list(&self, &model, &spec).await
        })
    }

    fn retrieve(
        self: Arc<Self>,
        model: String,
        pk: String,
        selection: Selection,
        hold: Hold,
    ) -> Work<Vec<u8>> {
        Box::pin(async move {
            let _hold = hold;
            self.retrieve_selected(&model, &pk, &selection).await
        })
    }

    fn create(
        self: Arc<Self>,
        model: String,
        body: PyJson,
        // A key is never NULL here: nothing is written before a failure.
        _lenient: bool,
        hold: Hold,
    ) -> Work<Vec<u8>> {
        Box::pin(async move {
            let _hold = hold;
            self.create_body(&model, &body).await
        })
    }

    fn update(self: Arc<Self>, change: Update, hold: Hold) -> Work<Vec<u8>> {
        Box::pin(async move {
            let _hold = hold;
            let Update {
                model,
                pk,
                body,
                selection,
                partial,
            } = change;
            self.update_body(&model, &pk, &body, &selection, partial)
                .await
        })
    }

    fn delete(
        self: Arc<Self>,
        model: String,
        pk: String,
        selection: Selection,
        hold: Hold,
    ) -> Work<()> {
        Box::pin(async move {
            let _hold = hold;
            self.delete_selected(&model, &pk, &selection).await
        })
    }

    fn aggregate(
        self: Arc<Self>,
        model: String,
        request: AggregateRequest,
        selection: Selection,
        hold: Hold,
    ) -> Work<Value> {
        Box::pin(async move {
            let _hold = hold;
            MyResource::aggregate(&self, &model, &request, &selection).await
        })
    }

    fn group(
        self: Arc<Self>,
        model: String,
        request: GroupRequest,
        selection: Selection,
        hold: Hold,
    ) -> Work<Value> {
        Box::pin(async move {
            let _hold = hold;
            MyResource::group(&self, &model, &request, &selection).await
        })
    }

    fn reload(self: Arc<Self>, hold: Hold) -> Work<()> {
        Box::pin(async move {
            let _hold = hold;
            MyResource::reload(&self).await
        })
    }

    fn sql(
        self: Arc<Self>,
        query: String,
        params: Map<String, Value>,
        limits: SqlLimits,
        hold: Hold,
    ) -> Work<Vec<u8>> {
        Box::pin(async move {
            let _hold = hold;
            MyResource::sql(&self, &query, &params, limits.time, limits.answer_bytes).await
        })
    }
}
