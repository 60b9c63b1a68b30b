//! The records operations of an admitted resource, whichever database it is: each hands the
//! work to the resource's [`Backend`](svc_emulator_core::backend::Backend) with this request's turn, which
//! the backend keeps until the work has ended.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::HttpError;
use crate::admission::Admitted;
use svc_emulator_core::backend::{Hold, Update};
use svc_engine::extra_actions::Created;
use svc_engine::python::json::PyJson;
use svc_engine::sql_request::SqlRequest;
use svc_engine::{
    AggregateRequest, EngineError, GroupRequest, ListSpec, Listing, Selection, SqlLimits,
};

impl Admitted {
    /// This request's turn, for the backend to keep while the work runs.
    fn hold(&self) -> Hold {
        Box::new(self.clone())
    }

    /// The HTTP answer of a failed records operation: an unknown model's `404` lists the models
    /// the resource has ([`unknown_model`]), other failures answer as
    /// [`EngineReply`](crate::error::EngineReply) says.
    pub fn reply(&self, error: EngineError) -> HttpError {
        match error {
            EngineError::ModelNotFound(name) => unknown_model(&name, &self.model_names()),
            other => other.into(),
        }
    }

    /// A page of records, or all of them.
    pub async fn list(&self, model: String, spec: ListSpec) -> Result<Listing, HttpError> {
        Arc::clone(&**self)
            .list(model, spec, self.hold())
            .await
            .map_err(|e| self.reply(e))
    }

    /// One record, which `selection` must select.
    pub async fn retrieve(
        &self,
        model: String,
        pk: String,
        selection: Selection,
    ) -> Result<Vec<u8>, HttpError> {
        Arc::clone(&**self)
            .retrieve(model, pk, selection, self.hold())
            .await
            .map_err(|e| self.reply(e))
    }

    /// Checks the filters an update of `model` reads before it looks a record up
    /// ([`Backend::check_filters`](svc_emulator_core::backend::Backend::check_filters)).
    pub async fn check_filters(
        &self,
        model: String,
        selection: Selection,
    ) -> Result<(), HttpError> {
        Arc::clone(&**self)
            .check_filters(model, selection, self.hold())
            .await
            .map_err(|e| self.reply(e))
    }

    /// Creates a record from a body (`lenient`: see [`svc_emulator_core::backend::Backend::create`]).
    pub async fn create(
        &self,
        model: String,
        body: PyJson,
        lenient: bool,
    ) -> Result<Vec<u8>, HttpError> {
        Arc::clone(&**self)
            .create(model, body, lenient, self.hold())
            .await
            .map_err(|e| self.reply(e))
    }

    /// Updates a record from a body: `partial` for `PATCH`, not for `PUT`.
    pub async fn update(
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
        Arc::clone(&**self)
            .update(change, self.hold())
            .await
            .map_err(|e| self.reply(e))
    }

    /// Deletes a record.
    pub async fn delete(
        &self,
        model: String,
        pk: String,
        selection: Selection,
    ) -> Result<(), HttpError> {
        Arc::clone(&**self)
            .delete(model, pk, selection, self.hold())
            .await
            .map_err(|e| self.reply(e))
    }

    /// `{"y_func": ...}`.
    pub async fn aggregate(
        &self,
        model: String,
        request: AggregateRequest,
        selection: Selection,
    ) -> Result<Value, HttpError> {
        Arc::clone(&**self)
            .aggregate(model, request, selection, self.hold())
            .await
            .map_err(|e| self.reply(e))
    }

    /// Group rows.
    pub async fn group(
        &self,
        model: String,
        request: GroupRequest,
        selection: Selection,
    ) -> Result<Value, HttpError> {
        Arc::clone(&**self)
            .group(model, request, selection, self.hold())
            .await
            .map_err(|e| self.reply(e))
    }

    /// `bulk_create`: what became of each item.
    pub async fn bulk_create(
        &self,
        model: String,
        items: Vec<PyJson>,
        lenient: bool,
    ) -> Result<Vec<Created>, HttpError> {
        Arc::clone(&**self)
            .bulk_create(model, items, lenient, self.hold())
            .await
            .map_err(|e| self.reply(e))
    }

    /// `get_siblings` of the record `pk`, which `selection` must select.
    pub async fn siblings(
        &self,
        model: String,
        pk: String,
        selection: Selection,
    ) -> Result<Value, HttpError> {
        Arc::clone(&**self)
            .siblings(model, pk, selection, self.hold())
            .await
            .map_err(|e| self.reply(e))
    }

    /// `reorder`, or `reset_order` (`reset`), of the records `selection` selects.
    pub async fn reorder(
        &self,
        model: String,
        body: PyJson,
        selection: Selection,
        reset: bool,
    ) -> Result<Value, HttpError> {
        Arc::clone(&**self)
            .reorder(model, body, selection, reset, self.hold())
            .await
            .map_err(|e| self.reply(e))
    }

    /// Re-reads the schema.
    pub async fn reload(&self) -> Result<(), HttpError> {
        Ok(Arc::clone(&**self).reload(self.hold()).await?)
    }

    /// One read-only query; dropping this future cancels it.
    pub async fn sql(&self, request: SqlRequest, limits: SqlLimits) -> Result<Vec<u8>, HttpError> {
        Ok(Arc::clone(&**self)
            .sql(request, limits, self.hold())
            .await?)
    }

    /// An action's statements in one transaction; dropping this future cancels the one
    /// running (and rolls back).
    pub async fn execute(
        &self,
        statements: Vec<String>,
        inputs: Map<String, Value>,
        limits: SqlLimits,
    ) -> Result<Vec<u8>, EngineError> {
        Arc::clone(&**self)
            .execute(statements, inputs, limits, self.hold())
            .await
    }
}

/// At most this many model names in an unknown model's `404`.
const MODELS_LISTED: usize = 40;

/// The `404` of an unknown model (status and body as docs/contract.md says: `not_found`), its
/// message naming the models there are, as an unknown field's `400` names the fields.
pub fn unknown_model(name: &str, models: &[String]) -> HttpError {
    let listed = match models.len() {
        0 => "The resource has no models.".to_owned(),
        n if n <= MODELS_LISTED => format!("The resource's models: {}.", models.join(", ")),
        n => format!(
            "The resource's models: {}, and {} more.",
            models[..MODELS_LISTED].join(", "),
            n - MODELS_LISTED
        ),
    };
    HttpError::not_found(format!("Model {name:?} not found. {listed}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::EngineReply;
    use axum::http::StatusCode;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("m{i:02}")).collect()
    }

    /// The status and the error code are the engine's unknown model's (docs/contract.md):
    /// only the message says more.
    #[test]
    fn an_unknown_model_is_the_engines_404_with_the_models_named() {
        let plain = EngineError::ModelNotFound("ordrs".to_owned());
        let e = unknown_model("ordrs", &["customers".to_owned(), "orders".to_owned()]);
        assert_eq!(e.status(), StatusCode::NOT_FOUND);
        assert_eq!(e.status().as_u16(), plain.status());
        let body = serde_json::to_value(e.body()).unwrap();
        let engine = serde_json::to_value(plain.body()).unwrap();
        assert_eq!(body["error_code"], engine["error_code"]);
        assert_eq!(
            body["error"],
            "Model \"ordrs\" not found. The resource's models: customers, orders."
        );
    }

    #[test]
    fn no_models_and_many_models_are_said_so() {
        let none = unknown_model("x", &[]);
        assert_eq!(
            none.body().error,
            "Model \"x\" not found. The resource has no models."
        );
        let many = unknown_model("x", &names(MODELS_LISTED + 3));
        let message = many.body().error.clone();
        assert!(message.contains("m00, m01"), "{message}");
        assert!(
            message.contains(&format!("m{:02}", MODELS_LISTED - 1)),
            "{message}"
        );
        assert!(
            !message.contains(&format!("m{:02}", MODELS_LISTED)),
            "{message}"
        );
        assert!(message.ends_with(", and 3 more."), "{message}");
    }
}
