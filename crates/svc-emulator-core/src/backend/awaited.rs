//! [`Schedule`](super::Schedule) for a database whose driver is async already (PostgreSQL,
//! MySQL), written once: each operation is awaited where it is asked for, with the caller's
//! [`Hold`](super::Hold) kept until it ends. Dropping a future drops its query: a read-only SQL
//! query is cancelled in the database.

/// Implements [`Schedule`](crate::backend::Schedule) (and so [`Backend`](crate::backend::Backend)) for `$resource`. The records operations, read-only SQL, saved copies and reload are
/// the flows of `flow::read`, `flow::write`, `flow::aggregate`, `flow::read_only_sql`, `flow::action`, `flow::snapshot` and `flow::export`,
/// over the resource's side of them (`flow::database::Database`,
/// `flow::driver::Driver`); the macro also gives the resource the public methods that run
/// them (`list`, `retrieve_selected`, `delete_selected`, `aggregate`, `group`, `sql`).
#[macro_export]
macro_rules! awaited_backend {
    ($resource:ty) => {
        // The records operations of the public API, each the flow over this resource.
        impl $resource {
            /// The names of the models, sorted.
            pub fn model_names(&self) -> Vec<String> {
                $crate::flow::database::Database::models(self).names()
            }

            /// Whether the resource has a model of that name.
            pub fn has_model(&self, name: &str) -> bool {
                $crate::flow::database::Database::models(self).contains(name)
            }

            /// `model` as last read: its key and fields; `None` when there is no such model.
            pub fn describe(&self, model: &str) -> Option<::svc_engine::types::ModelInfo> {
                let model = $crate::flow::database::Database::models(self)
                    .get(model)
                    .ok()?;
                Some(::svc_engine::table::describe(&*model))
            }

            /// One page of records of `model`, or all of them (`no_pagination`), as the engine
            /// lists them.
            pub async fn list(
                &self,
                model: &str,
                spec: &::svc_engine::ListSpec,
            ) -> Result<::svc_engine::Listing, ::svc_engine::EngineError> {
                $crate::flow::read::list(self, model, spec).await
            }

            /// The record of `model` whose key is `pk` and that `selection` selects, as JSON
            /// bytes.
            pub async fn retrieve_selected(
                &self,
                model: &str,
                pk: &str,
                selection: &::svc_engine::Selection,
            ) -> Result<Vec<u8>, ::svc_engine::EngineError> {
                $crate::flow::read::retrieve(self, model, pk, selection).await
            }

            /// Deletes the record `pk` (which `selection` must select), after what the
            /// engine's ORM does to the rows that refer to it.
            pub async fn delete_selected(
                &self,
                model: &str,
                pk: &str,
                selection: &::svc_engine::Selection,
            ) -> Result<(), ::svc_engine::EngineError> {
                $crate::flow::write::delete(self, model, pk, selection).await
            }

            /// `{"y_func": value}` over the records `selection` selects.
            pub async fn aggregate(
                &self,
                model: &str,
                req: &::svc_engine::AggregateRequest,
                selection: &::svc_engine::Selection,
            ) -> Result<serde_json::Value, ::svc_engine::EngineError> {
                $crate::flow::aggregate::aggregate(self, model, req, selection).await
            }

            /// Group rows `{"group": key, "group_2": ..., "y_func": value}`, sorted by the
            /// keys.
            pub async fn group(
                &self,
                model: &str,
                req: &::svc_engine::GroupRequest,
                selection: &::svc_engine::Selection,
            ) -> Result<serde_json::Value, ::svc_engine::EngineError> {
                $crate::flow::aggregate::group(self, model, req, selection).await
            }

            /// Runs one read-only query (its `:name` values, its paging) within `time` and
            /// `answer_bytes`; the answer is `{"columns", "data", "row_count"}` as JSON bytes.
            pub async fn sql(
                &self,
                request: &::svc_engine::sql_request::SqlRequest,
                time: std::time::Duration,
                answer_bytes: usize,
            ) -> Result<Vec<u8>, ::svc_engine::EngineError> {
                let (quoting, _) = $crate::flow::database::Database::query_dialect(self);
                $crate::flow::read_only_sql::read_only(self, request, quoting, time, answer_bytes)
                    .await
            }
        }

        impl $crate::backend::Schedule for $resource {
            type Model = <$resource as $crate::dialect::Dialect>::Model;

            const SKIP: $crate::dialect::Skip = <$resource as $crate::dialect::Dialect>::skip;

            fn models(&self) -> &::svc_engine::records::Models<Self::Model> {
                $crate::flow::database::Database::models(self)
            }

            fn sets_time_zone(&self) -> bool {
                true
            }

            fn run<O: $crate::backend::operation::Operation>(
                self: std::sync::Arc<Self>,
                op: O,
                hold: $crate::backend::Hold,
            ) -> $crate::backend::Work<O::Out> {
                Box::pin(async move {
                    let _hold = hold;
                    op.run(&*self).await
                })
            }
        }
    };
}
