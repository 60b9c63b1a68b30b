//! [`Backend`](super::Backend) for a database whose driver is async already (PostgreSQL,
//! MySQL), written once: each operation is awaited where it is asked for, with the caller's
//! [`Hold`](super::Hold) kept until it ends. Dropping a future drops its query: a read-only SQL
//! query is cancelled in the database.

/// Implements [`Backend`](crate::backend::Backend) for `$resource`, whose inherent methods do
/// the work with the same names and arguments for every such database: `has_model`,
/// `model_names`, `field_names`, and the async
/// `update_body`, `delete_selected`, `aggregate`, `group`, `reload` and `sql`. (Unused when no
/// such backend is built.) Lists and retrieves are the flows of `flow::read`, over the
/// resource's `flow::database::Database`.
#[allow(unused_macros)]
macro_rules! awaited_backend {
    ($resource:ty) => {
        impl $crate::backend::Backend for $resource {
            fn has_model(&self, name: &str) -> bool {
                <$resource>::has_model(self, name)
            }

            fn sets_time_zone(&self) -> bool {
                true
            }

            fn model_names(&self) -> Vec<String> {
                <$resource>::model_names(self)
            }

            fn field_names(&self, model: &str) -> Option<Vec<String>> {
                <$resource>::field_names(self, model)
            }

            fn list(
                self: std::sync::Arc<Self>,
                model: String,
                spec: $crate::engine::ListSpec,
                hold: $crate::backend::Hold,
            ) -> $crate::backend::Work<$crate::engine::Listing> {
                Box::pin(async move {
                    let _hold = hold;
                    $crate::flow::read::list(&*self, &model, &spec).await
                })
            }

            fn retrieve(
                self: std::sync::Arc<Self>,
                model: String,
                pk: String,
                selection: $crate::engine::Selection,
                hold: $crate::backend::Hold,
            ) -> $crate::backend::Work<Vec<u8>> {
                Box::pin(async move {
                    let _hold = hold;
                    $crate::flow::read::retrieve(&*self, &model, &pk, &selection).await
                })
            }

            fn create(
                self: std::sync::Arc<Self>,
                model: String,
                body: $crate::engine::convert::PyJson,
                // A key is never NULL here: nothing is written before a failure.
                _lenient: bool,
                hold: $crate::backend::Hold,
            ) -> $crate::backend::Work<Vec<u8>> {
                Box::pin(async move {
                    let _hold = hold;
                    $crate::flow::write::create(&*self, &model, &body).await
                })
            }

            fn update(
                self: std::sync::Arc<Self>,
                change: $crate::backend::Update,
                hold: $crate::backend::Hold,
            ) -> $crate::backend::Work<Vec<u8>> {
                Box::pin(async move {
                    let _hold = hold;
                    self.update_body(
                        &change.model,
                        &change.pk,
                        &change.body,
                        &change.selection,
                        change.partial,
                    )
                    .await
                })
            }

            fn delete(
                self: std::sync::Arc<Self>,
                model: String,
                pk: String,
                selection: $crate::engine::Selection,
                hold: $crate::backend::Hold,
            ) -> $crate::backend::Work<()> {
                Box::pin(async move {
                    let _hold = hold;
                    self.delete_selected(&model, &pk, &selection).await
                })
            }

            fn aggregate(
                self: std::sync::Arc<Self>,
                model: String,
                request: $crate::engine::AggregateRequest,
                selection: $crate::engine::Selection,
                hold: $crate::backend::Hold,
            ) -> $crate::backend::Work<serde_json::Value> {
                Box::pin(async move {
                    let _hold = hold;
                    $crate::flow::summary::aggregate(&*self, &model, &request, &selection).await
                })
            }

            fn group(
                self: std::sync::Arc<Self>,
                model: String,
                request: $crate::engine::GroupRequest,
                selection: $crate::engine::Selection,
                hold: $crate::backend::Hold,
            ) -> $crate::backend::Work<serde_json::Value> {
                Box::pin(async move {
                    let _hold = hold;
                    $crate::flow::summary::group(&*self, &model, &request, &selection).await
                })
            }

            fn reload(
                self: std::sync::Arc<Self>,
                hold: $crate::backend::Hold,
            ) -> $crate::backend::Work<()> {
                Box::pin(async move {
                    let _hold = hold;
                    <$resource>::reload(&self).await
                })
            }

            fn sql(
                self: std::sync::Arc<Self>,
                query: String,
                params: serde_json::Map<String, serde_json::Value>,
                limits: $crate::engine::SqlLimits,
                hold: $crate::backend::Hold,
            ) -> $crate::backend::Work<Vec<u8>> {
                Box::pin(async move {
                    let _hold = hold;
                    <$resource>::sql(&self, &query, &params, limits.time, limits.answer_bytes).await
                })
            }
        }
    };
}

pub(crate) use awaited_backend;
