//! Projects (feature `projects`).

use svc_auth::Credential;
use svc_model::routes;
use svc_model::{Project, ProjectName};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::request::{Call, Operation};

const GET: Operation = Operation::new("projects.get", &routes::GET_PROJECT);

impl Client {
    /// Projects on the application host.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// let project = client.projects().current().await?;
    /// for env in project.environments() {
    ///     println!("{}", env.unique_name);
    /// }
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "projects")))]
    pub fn projects(&self) -> Projects<'_> {
        Projects {
            client: self,
            options: None,
        }
    }
}

/// Project operations; see [`Client::projects`].
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// let project = client.projects().current().await?;
/// println!("{project:?}");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Projects<'c> {
    client: &'c Client,
    options: crate::options::HandleOptions,
}

impl Projects<'_> {
    crate::options::options_method!();

    /// The client's own project.
    pub async fn current(&self) -> Result<Project> {
        let name = self.client.project()?;
        self.fetch(&name).await
    }

    /// A project by unique name.
    pub async fn get(&self, name: impl AsRef<str>) -> Result<Project> {
        let name = ProjectName::new(name.as_ref())?;
        self.fetch(&name).await
    }

    async fn fetch(&self, name: &ProjectName) -> Result<Project> {
        let key = self.client.api_key().ok_or_else(|| {
            Error::invalid("projects need an API key: call ClientBuilder::api_key")
        })?;
        let url = self.client.app_route(GET.route, |_| name.as_str()).build();
        let call = Call::new(GET, url)
            .options(&self.options)
            .project(name.as_str())
            .credential(Credential::ApiKey(key.clone()));
        self.client.send_json(&call).await
    }
}
