//! The project's workflows (feature `workflows`): run one with its inputs; a run that failed is
//! an error.

use std::marker::PhantomData;

use bytes::Bytes;
use http::Response;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use svc_model::ModelName;
use svc_model::routes;

use crate::client::Client;
use crate::error::{Error, Result, WorkflowError};
use crate::request::{Call, CallAuth, Operation, decode};

const RUN: Operation = Operation::new("workflows.run", &routes::RUN_WORKFLOW);

impl Client {
    /// The project's workflow `uid`: steps the service runs in order ([`Workflow::run`]).
    ///
    /// `POST workflows/{uid}/run` with the inputs as `{"data": {...}}`. The service answers
    /// `200` whether the run succeeded or not, with `{"success": true, "result": ...}` or
    /// `{"success": false, "error": "..."}` (docs/contract.md 5.6); [`run`](Workflow::run)
    /// turns a failed run into [`Error::Workflow`], so it cannot pass for a success.
    ///
    /// Calls carry the API key, else the user session or service token (a resource's token
    /// does not serve workflows). With the client in draft mode they carry `draft=1`, as every
    /// call does. A run may change data, so it is **never retried once it may have been
    /// sent**: only a failure before the request left (a refused connection) is tried again.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// use svc_api::serde_json::json;
    ///
    /// match client.workflow("wf-refund").run(json!({"id": 7})).await {
    ///     Ok(result) => println!("done: {result}"),
    ///     // The run failed: the server's reason, e.g. "step 2 (shop.notify): ...".
    ///     Err(svc_api::Error::Workflow(failed)) => eprintln!("{:?}", failed.message()),
    ///     Err(other) => return Err(other),
    /// }
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "workflows")))]
    pub fn workflow(&self, uid: impl Into<String>) -> Workflow<'_> {
        Workflow {
            client: self,
            uid: uid.into(),
            options: None,
            _result: PhantomData,
        }
    }
}

/// One workflow of the project; see [`Client::workflow`]. `T` is the type of a successful
/// run's result, a JSON value unless [`typed`](Self::typed) says otherwise.
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// use svc_api::serde_json::json;
///
/// #[derive(serde::Deserialize)]
/// struct Order {
///     id: i64,
///     status: String,
/// }
/// // Any error, a failed run included, ends here with `?`.
/// let orders: Vec<Order> = client.workflow("wf-refund").typed().run(json!({"id": 7})).await?;
/// # let _ = orders;
/// # Ok(()) }
/// ```
#[must_use]
pub struct Workflow<'c, T = serde_json::Value> {
    client: &'c Client,
    uid: String,
    options: crate::options::HandleOptions,
    _result: PhantomData<fn() -> T>,
}

impl<T> Clone for Workflow<'_, T> {
    fn clone(&self) -> Self {
        Self {
            client: self.client,
            uid: self.uid.clone(),
            options: self.options.clone(),
            _result: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Workflow<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workflow")
            .field("uid", &self.uid)
            .field("options", &self.options)
            .field("result_type", &std::any::type_name::<T>())
            .finish()
    }
}

/// A workflow's answer, as it came: `{"success": true, "result": ...}` or `{"success": false,
/// "error": "..."}`; from [`Workflow::run_response`], for callers that handle a failed run as
/// data (to record it, say) rather than as an error.
///
/// It must be looked at: [`into_result`](Self::into_result) turns it into what
/// [`Workflow::run`] returns.
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// use svc_api::serde_json::json;
///
/// let answer = client.workflow("wf-refund").run_response(json!({"id": 7})).await?;
/// if let Some(reason) = answer.error() {
///     eprintln!("the refund failed: {reason}");
/// }
/// let result = answer.into_result()?; // Err(Error::Workflow) for a failed run
/// # let _ = result;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use = "a workflow's answer may be a failure: check it, or call into_result"]
pub struct WorkflowResponse<T = serde_json::Value> {
    uid: String,
    /// The result, or the server's `error` (`None` when it gave none).
    outcome: std::result::Result<T, Option<String>>,
}

impl<T> WorkflowResponse<T> {
    /// Whether the run succeeded (`"success": true`).
    pub fn is_success(&self) -> bool {
        self.outcome.is_ok()
    }

    /// A successful run's result.
    pub fn result(&self) -> Option<&T> {
        self.outcome.as_ref().ok()
    }

    /// A failed run's `error`, the server's text (`None` for a success, and for a failure
    /// that came without one: see [`is_success`](Self::is_success)).
    pub fn error(&self) -> Option<&str> {
        self.outcome.as_ref().err().and_then(Option::as_deref)
    }

    /// The result of a successful run, or [`Error::Workflow`] with the server's `error`.
    pub fn into_result(self) -> Result<T> {
        self.outcome
            .map_err(|message| Error::Workflow(Box::new(WorkflowError::new(self.uid, message))))
    }
}

/// The answer on the wire. `result` is kept as its JSON text and decoded as `T` only for a
/// success (a failed run has none, and `T` need not accept its absence); `error` is any JSON,
/// kept as text when it is not a string, so that the server's account is never lost to a type.
#[derive(Deserialize)]
struct Answer {
    success: bool,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

impl<'c, T> Workflow<'c, T> {
    /// Decodes a successful run's result as `U` (any `serde::de::DeserializeOwned`: your
    /// struct, a `Vec` of rows, `serde_json::Value`).
    pub fn typed<U>(self) -> Workflow<'c, U> {
        Workflow {
            client: self.client,
            uid: self.uid,
            options: self.options,
            _result: PhantomData,
        }
    }

    crate::options::options_method!();
}

impl<T: DeserializeOwned> Workflow<'_, T> {
    /// Runs the workflow with `inputs` and returns the result of the run, or
    /// [`Error::Workflow`] when the run failed (the server's `error` in
    /// [`WorkflowError::message`]).
    ///
    /// `inputs` is anything serializable to a JSON object (a `serde_json::json!({...})`, a map,
    /// your struct); pass `serde_json::json!({})` when the workflow takes none. Anything else,
    /// an empty or `.`/`..` uid, and a missing credential fail with
    /// [`Error::InvalidInput`](crate::Error::InvalidInput) before anything is sent. An unknown
    /// workflow is a `404` ([`Error::is_not_found`](crate::Error::is_not_found)); a missing or
    /// unknown input, a `400` (the service checks them before any step runs).
    pub async fn run(&self, inputs: impl Serialize) -> Result<T> {
        // Read inside the operation, so that its span records a failed run as a failure.
        let call = self.call(inputs)?;
        self.client
            .operation(&call, |response| self.response(response)?.into_result())
            .await
    }

    /// Like [`run`](Self::run), but a failed run is an `Ok` [`WorkflowResponse`] (that must be
    /// looked at) rather than an error. Errors are still errors: an error status, no answer,
    /// inputs refused before sending.
    pub async fn run_response(&self, inputs: impl Serialize) -> Result<WorkflowResponse<T>> {
        let call = self.call(inputs)?;
        self.client
            .operation(&call, |response| self.response(response))
            .await
    }

    /// `POST workflows/{uid}/run` with `{"data": inputs}`, checked before anything is sent.
    fn call(&self, inputs: impl Serialize) -> Result<Call> {
        // A uid follows a model's rules (one path segment): checked as one, and named as what
        // it is in the message.
        ModelName::check(&self.uid).map_err(|mut e| {
            e.kind = "workflow uid";
            e
        })?;
        let url = self.client.data_route(RUN.route, |_| &self.uid)?.build();
        let body = crate::inputs::body(&format!("workflow {:?}", self.uid), inputs)?;
        // The project's own route: no resource, so the API key, else the session or service
        // token (request.rs, `CallAuth::Data`).
        let mut call = Call::new(RUN, url)
            .options(&self.options)
            .caller_may_repeat()
            .auth(CallAuth::Data {
                resource: None,
                per_call: None,
            });
        // A POST: `Call::new` leaves it non-idempotent, so it is retried only when it
        // certainly was not sent, unless the caller declares it idempotent.
        call.body = Some(body);
        Ok(call)
    }

    fn response(&self, response: Response<Bytes>) -> Result<WorkflowResponse<T>> {
        let status = response.status();
        let body = response.body().clone();
        let answer: Answer = decode(response)?;
        let outcome = if answer.success {
            let text = answer.result.as_deref().map_or("null", RawValue::get);
            // A successful run whose `result` is not a `T`.
            Ok(serde_json::from_str(text).map_err(|e| Error::decode(status, body, e))?)
        } else {
            Err(answer.error.and_then(|error| match error {
                serde_json::Value::Null => None,
                serde_json::Value::String(text) => Some(text),
                other => Some(other.to_string()),
            }))
        };
        Ok(WorkflowResponse {
            uid: self.uid.clone(),
            outcome,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    #[test]
    fn debug_shows_the_uid_and_type() {
        let never = |_: http::Request<Bytes>| async {
            Err::<Response<Bytes>, _>(svc_transport::TransportError::message(
                svc_transport::TransportErrorKind::Other,
                "no calls expected",
            ))
        };
        let client = Client::builder()
            .project("p")
            .transport(never)
            .build()
            .unwrap();
        let text = format!("{:?}", client.workflow("wf-refund").typed::<Vec<i64>>());
        assert!(
            text.contains("\"wf-refund\"") && text.contains("Vec<i64>"),
            "{text}"
        );
    }

    #[test]
    fn a_failed_run_is_an_error_with_the_servers_text() {
        let failed = WorkflowResponse::<serde_json::Value> {
            uid: "wf".to_owned(),
            outcome: Err(Some("step 1 (shop.refund): Missing input: id.".to_owned())),
        };
        assert!(!failed.is_success());
        assert_eq!(
            failed.error(),
            Some("step 1 (shop.refund): Missing input: id.")
        );
        assert!(failed.result().is_none());
        let err = failed.into_result().unwrap_err();
        assert_eq!(
            err.to_string(),
            "workflow \"wf\" failed: step 1 (shop.refund): Missing input: id."
        );
        assert_eq!(err.sent(), crate::Sent::Yes);
        assert_eq!(err.status(), Some(StatusCode::OK));
        assert!(!err.is_retryable() && !err.is_not_found());
        let details = err.workflow().unwrap();
        assert_eq!(details.uid(), "wf");
        assert_eq!(
            details.message(),
            Some("step 1 (shop.refund): Missing input: id.")
        );

        let silent = WorkflowResponse::<()> {
            uid: "wf".to_owned(),
            outcome: Err(None),
        };
        assert!(!silent.is_success() && silent.error().is_none());
        let err = silent.into_result().unwrap_err();
        assert_eq!(
            err.to_string(),
            "workflow \"wf\" failed: the server gave no reason"
        );
    }
}
