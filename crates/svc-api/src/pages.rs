//! Page settings (feature `pages`): list, create, get, update and delete, on the published set
//! or the draft set.

use svc_auth::Credential;
use svc_model::routes;
use svc_model::{EnvironmentName, PageSettings, PageUid, UpdatePageSettings};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::request::{Call, Operation};

const LIST: Operation = Operation::new("pages.list", &routes::LIST_PAGES);
const CREATE: Operation = Operation::new("pages.create", &routes::CREATE_PAGE);
const GET: Operation = Operation::new("pages.get", &routes::GET_PAGE);
const UPDATE: Operation = Operation::new("pages.update", &routes::UPDATE_PAGE);
const DELETE: Operation = Operation::new("pages.delete", &routes::DELETE_PAGE);

impl Client {
    /// Page settings of the client's project and environment.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use svc_api::model::{PageSettings, UpdatePageSettings};
    /// use serde_json::json;
    ///
    /// let drafts = client.pages().draft(true);
    /// let page = drafts
    ///     .create(&PageSettings::new().with("unique_name", "orders").with_params(&json!({"elements": []}))?)
    ///     .await?;
    /// let uid = page.uid().unwrap_or_default();
    /// drafts.update(uid, &UpdatePageSettings::from_structure(&json!({"elements": ["table"]}))?).await?;
    /// assert!(client.pages().get(uid).await.unwrap_err().is_not_found()); // not published
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "pages")))]
    pub fn pages(&self) -> Pages<'_> {
        Pages {
            client: self,
            draft: None,
            environment: None,
            options: None,
        }
    }
}

/// Page settings operations; see [`Client::pages`].
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// // The published pages, then one page's draft copy.
/// for page in client.pages().list().await? {
///     println!("{:?} {:?}", page.uid(), page.name());
/// }
/// let draft = client.pages().draft(true).get("orders").await?;
/// println!("draft: {:?}", draft.is_draft());
/// # Ok(()) }
/// ```
///
/// Each environment holds a published set and a draft set of pages. With draft off (the
/// default) reads see the published set, and writes change the published page and its draft
/// copy. With draft on (`draft=1`) reads and writes touch the draft set only.
#[derive(Debug, Clone)]
#[must_use]
pub struct Pages<'c> {
    client: &'c Client,
    draft: Option<bool>,
    environment: Option<String>,
    options: crate::options::HandleOptions,
}

impl Pages<'_> {
    /// Works on the draft set (`true`) or the published set (`false`), whatever the client's
    /// own draft setting.
    pub fn draft(mut self, draft: bool) -> Self {
        self.draft = Some(draft);
        self
    }

    /// Works in another environment than the client's.
    pub fn environment(mut self, environment: impl Into<String>) -> Self {
        self.environment = Some(environment.into());
        self
    }

    crate::options::options_method!();

    /// `op`'s call, for the page `uid` where its route has one. The environment is checked as
    /// `EnvironmentName` checks it, and encoded as its `encoded()` does, without copying it.
    fn call(&self, op: Operation, uid: &str) -> Result<Call> {
        let environment = self
            .environment
            .as_deref()
            .unwrap_or(&self.client.inner.environment);
        EnvironmentName::check(environment)?;
        let url = self
            .client
            .app_project_route(op.route, |name| match name {
                "environment" => environment,
                _ => uid,
            })?
            .build();
        let key = self.client.api_key().ok_or_else(|| {
            Error::invalid("page settings need an API key: call ClientBuilder::api_key")
        })?;
        let call = Call::new(op, url)
            .options(&self.options)
            .credential(Credential::ApiKey(key.clone()));
        // This handle's draft switch, else the client's (added by the request pipeline).
        Ok(match self.draft {
            Some(draft) => call.draft(draft),
            None => call,
        })
    }

    fn item(&self, op: Operation, uid: &str) -> Result<Call> {
        PageUid::check(uid)?;
        self.call(op, uid)
    }

    /// All pages of the set.
    pub async fn list(&self) -> Result<Vec<PageSettings>> {
        let call = self.call(LIST, "")?;
        self.client.send_json(&call).await
    }

    /// Creates a page. The server assigns `uid` when the page has none, and `date_add`.
    pub async fn create(&self, page: &PageSettings) -> Result<PageSettings> {
        let call = self.call(CREATE, "")?.json(page)?;
        self.client.send_json(&call).await
    }

    /// One page by uid.
    pub async fn get(&self, uid: impl AsRef<str>) -> Result<PageSettings> {
        let call = self.item(GET, uid.as_ref())?;
        self.client.send_json(&call).await
    }

    /// Replaces a page's `params`; returns the whole page. An update without `params` changes
    /// nothing.
    pub async fn update(
        &self,
        uid: impl AsRef<str>,
        update: &UpdatePageSettings,
    ) -> Result<PageSettings> {
        let call = self.item(UPDATE, uid.as_ref())?.json(update)?;
        self.client.send_json(&call).await
    }

    /// Deletes a page.
    pub async fn delete(&self, uid: impl AsRef<str>) -> Result<()> {
        let call = self.item(DELETE, uid.as_ref())?;
        self.client.send(&call).await.map(drop)
    }
}
