//! A resource's actions (feature `actions`): run one with its inputs and read its result.

use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use svc_auth::Secret;
use svc_model::routes;
use svc_model::{ModelName, ResourceName};

use crate::client::Client;
use crate::error::Result;
use crate::request::{Call, CallAuth, Operation, decode};

const EXECUTE: Operation = Operation::new("actions.execute", &routes::RUN_ACTION);

impl Client {
    /// The action `name` of `resource`: a statement or some code the service runs on the
    /// resource's data, with inputs ([`Action::execute`]).
    ///
    /// `POST {resource}/actions/{name}` with the inputs as `{"data": {...}}`; the answer's
    /// `data` is the result (docs/contract.md 5.6). Calls carry the credentials of records: a
    /// token given for these calls ([`Action::token`]), else the resource's static token
    /// ([`ClientBuilder::resource_token`](crate::ClientBuilder::resource_token)), else the API
    /// key, else the user session or service token. With the client in draft mode they carry
    /// `draft=1`, as every call does.
    ///
    /// An action may change data, so it is **never retried once it may have been sent**: only
    /// a failure before the request left (a refused connection) is tried again, never a lost
    /// connection, a timeout or a `503` answer.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// use svc_api::serde_json::json;
    ///
    /// // The result as JSON...
    /// let result = client.action("shop", "refund").execute(json!({"id": 7})).await?;
    /// println!("{result}");
    ///
    /// // ...or as your own type.
    /// #[derive(serde::Deserialize)]
    /// struct Order {
    ///     id: i64,
    ///     status: String,
    /// }
    /// let orders: Vec<Order> = client
    ///     .action("shop", "refund")
    ///     .typed()
    ///     .execute(json!({"id": 7}))
    ///     .await?;
    /// for order in orders {
    ///     println!("{} {}", order.id, order.status);
    /// }
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "actions")))]
    pub fn action(&self, resource: impl Into<String>, name: impl Into<String>) -> Action<'_> {
        Action {
            client: self,
            resource: resource.into(),
            name: name.into(),
            token: None,
            options: None,
            _result: PhantomData,
        }
    }
}

/// One action of one resource; see [`Client::action`]. `T` is the result's type, a JSON value
/// unless [`typed`](Self::typed) says otherwise.
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// use svc_api::serde_json::json;
///
/// let refund = client.action("shop", "refund").token("shop_token_...");
/// for id in [7, 8] {
///     refund.execute(json!({"id": id})).await?;
/// }
/// # Ok(()) }
/// ```
#[must_use]
pub struct Action<'c, T = serde_json::Value> {
    client: &'c Client,
    resource: String,
    name: String,
    token: Option<Secret>,
    options: crate::options::HandleOptions,
    _result: PhantomData<fn() -> T>,
}

impl<T> Clone for Action<'_, T> {
    fn clone(&self) -> Self {
        Self {
            client: self.client,
            resource: self.resource.clone(),
            name: self.name.clone(),
            token: self.token.clone(),
            options: self.options.clone(),
            _result: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for Action<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Action")
            .field("resource", &self.resource)
            .field("name", &self.name)
            .field("token", &self.token)
            .field("options", &self.options)
            .field("result_type", &std::any::type_name::<T>())
            .finish()
    }
}

/// `{"data": <result>}`.
#[derive(Deserialize)]
struct Answer<T> {
    data: T,
}

impl<'c, T> Action<'c, T> {
    /// Uses this static token for these calls, instead of the client's.
    pub fn token(mut self, token: impl Into<Secret>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// Decodes the result as `U` (any `serde::de::DeserializeOwned`: your struct, a `Vec` of
    /// rows, `serde_json::Value`), straight from the response bytes.
    pub fn typed<U>(self) -> Action<'c, U> {
        Action {
            client: self.client,
            resource: self.resource,
            name: self.name,
            token: self.token,
            options: self.options,
            _result: PhantomData,
        }
    }

    crate::options::options_method!();

    /// `{data}/{resource}/actions/{name}`, each name checked and encoded as one path segment.
    fn url(&self) -> Result<String> {
        ResourceName::check(&self.resource)?;
        // An action's name follows a model's rules (one path segment): checked as one, and
        // named as what it is in the message.
        ModelName::check(&self.name).map_err(|mut e| {
            e.kind = "action name";
            e
        })?;
        Ok(self
            .client
            .data_route(EXECUTE.route, |name| match name {
                "resource" => &self.resource,
                _ => &self.name,
            })?
            .build())
    }
}

impl<T: DeserializeOwned> Action<'_, T> {
    /// Runs the action with `inputs` and returns its result (the answer's `data`).
    ///
    /// `inputs` is anything serializable to a JSON object (a `serde_json::json!({...})`, a map,
    /// your struct); pass `serde_json::json!({})` when the action takes none. Anything else
    /// (a number, a list, `null`), an empty or `.`/`..` resource or action name, and a missing
    /// credential fail with [`Error::InvalidInput`](crate::Error::InvalidInput) before anything
    /// is sent. An unknown resource or action is a `404` ([`Error::is_not_found`](crate::Error::is_not_found)); a
    /// missing or unknown input, or a statement the database refuses, a `400` whose body says
    /// which ([`Error::body`](crate::Error::body)).
    pub async fn execute(&self, inputs: impl Serialize) -> Result<T> {
        let url = self.url()?;
        let what = format!("action {:?} of resource {:?}", self.name, self.resource);
        let body = crate::inputs::body(&what, inputs)?;
        let mut call = Call::new(EXECUTE, url)
            .options(&self.options)
            .caller_may_repeat()
            .resource(&self.resource)
            .auth(CallAuth::Data {
                resource: Some(self.resource.clone()),
                per_call: self.token.clone(),
            });
        // A POST: `Call::new` leaves it non-idempotent, so it is retried only when it
        // certainly was not sent (request.rs), unless the caller declares it idempotent.
        call.body = Some(body);
        let answer: Answer<T> = self.client.operation(&call, decode).await?;
        Ok(answer.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_names_not_the_token() {
        let never = |_: http::Request<bytes::Bytes>| async {
            Err::<http::Response<bytes::Bytes>, _>(svc_transport::TransportError::message(
                svc_transport::TransportErrorKind::Other,
                "no calls expected",
            ))
        };
        let client = Client::builder()
            .project("p")
            .transport(never)
            .build()
            .unwrap();
        let action = client
            .action("shop", "refund")
            .token("tok_supersecret")
            .typed::<Vec<i64>>();
        let text = format!("{action:?}");
        assert!(
            text.contains("\"refund\"") && text.contains("Vec<i64>"),
            "{text}"
        );
        assert!(!text.contains("supersecret"), "{text}");
    }
}
