//! Resources (feature `resources`): reloading a resource's structure.

use serde::Deserialize;
use svc_auth::Secret;
use svc_model::ResourceName;
use svc_model::routes;
use svc_model::users::TOOLS_RESOURCE;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::request::{Call, CallAuth, Operation};

const RELOAD: Operation = Operation::new("resources.reload", &routes::RELOAD_RESOURCE);

impl Client {
    /// Resource maintenance: reload a resource's structure after its database changed (new
    /// tables become models, new columns fields), or the built-in tools resource's.
    ///
    /// A reload carries the resource's static token (the built-in tools token for
    /// [`reload_tools`](Resources::reload_tools)), else the API key; [`Resources::token`] gives
    /// one for these calls. It only re-reads, so it is retried like a read.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// client.resources().reload("shop").await?;
    /// client.resources().reload_tools().await?;
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "resources")))]
    pub fn resources(&self) -> Resources<'_> {
        Resources {
            client: self,
            token: None,
            options: None,
        }
    }
}

/// Resource operations; see [`Client::resources`].
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// // After a migration added tables or columns: re-read the structure.
/// client.resources().reload("shop").await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Resources<'c> {
    client: &'c Client,
    token: Option<Secret>,
    options: crate::options::HandleOptions,
}

/// `{"success": true}`.
#[derive(Deserialize)]
struct Reloaded {
    success: bool,
}

impl Resources<'_> {
    /// Uses this static token for these calls, instead of the client's.
    pub fn token(mut self, token: impl Into<Secret>) -> Self {
        self.token = Some(token.into());
        self
    }

    crate::options::options_method!();

    /// Reloads the structure of `resource` (`POST /{resource}/reload`). An answer other than
    /// `{"success": true}` is an error.
    pub async fn reload(&self, resource: impl AsRef<str>) -> Result<()> {
        let name = ResourceName::new(resource.as_ref())?;
        let url = self
            .client
            .data_route(RELOAD.route, |_| name.as_str())?
            .build();
        let call = Call::new(RELOAD, url)
            .options(&self.options)
            .resource(name.as_str())
            .auth(CallAuth::data(name.as_str(), self.token.as_ref()))
            .idempotent();
        let response = self.client.send(&call).await?;
        let status = response.status();
        let body = response.into_body();
        match serde_json::from_slice::<Reloaded>(&body) {
            Ok(Reloaded { success: true }) => Ok(()),
            Ok(Reloaded { success: false }) => Err(Error::decode(
                status,
                body,
                serde::de::Error::custom("the server answered {\"success\": false}"),
            )),
            Err(e) => Err(Error::decode(status, body, e)),
        }
    }

    /// Reloads the built-in tools resource `__svc_app__` (users and teams), with the built-in
    /// tools token.
    pub async fn reload_tools(&self) -> Result<()> {
        self.reload(TOOLS_RESOURCE).await
    }
}
