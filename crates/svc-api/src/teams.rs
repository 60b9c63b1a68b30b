//! Teams (feature `teams`): the model `groups` of the built-in tools resource.

use serde_json::json;
use svc_auth::Secret;
use svc_model::ListPage;
use svc_model::RecordPk;
use svc_model::records::ListQuery;
use svc_model::routes;
use svc_model::users::{TEAMS_MODEL, TOOLS_RESOURCE, Team};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::records::{RecordOps, Records};
use crate::request::Operation;

static TEAMS: RecordOps = RecordOps {
    list: Operation::new("teams.list", &routes::LIST_TEAMS),
    all: Operation::new("teams.all", &routes::LIST_TEAMS),
    stream: Operation::new("teams.stream", &routes::LIST_TEAMS),
    get: Operation::new("teams.get", &routes::GET_TEAM),
    create: None,
    update: Operation::new("teams.update", &routes::UPDATE_TEAM),
    delete: None,
};

impl Client {
    /// The project's teams (a user belongs to one). Teams can be listed, read and renamed; the
    /// service has no team create or delete.
    ///
    /// Teams are records of the model `groups` of the built-in tools resource `__svc_app__`.
    /// Calls carry the built-in tools token (set it with
    /// [`ClientBuilder::tools_token`](crate::ClientBuilder::tools_token), or with
    /// [`Teams::token`] for these calls), else the API key.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// use svc_api::model::records::ListQuery;
    ///
    /// for team in client.teams().all(&ListQuery::new()).await? {
    ///     println!("{} {}", team.uid, team.name);
    /// }
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "teams")))]
    pub fn teams(&self) -> Teams<'_> {
        Teams {
            records: Records::new(self, &TEAMS, TOOLS_RESOURCE, TEAMS_MODEL),
        }
    }
}

/// Team operations; see [`Client::teams`].
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// use svc_api::model::records::ListQuery;
///
/// for team in client.teams().all(&ListQuery::new()).await? {
///     println!("{} {}", team.uid, team.name);
/// }
/// let renamed = client.teams().rename("00000000-0000-4000-8000-000000000002", "Writers").await?;
/// println!("now {}", renamed.name);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Teams<'c> {
    records: Records<'c, Team>,
}

impl Teams<'_> {
    /// Uses this built-in tools token for these calls, instead of the client's.
    pub fn token(self, token: impl Into<Secret>) -> Self {
        Self {
            records: self.records.token(token),
        }
    }

    /// Uses these [`CallOptions`](crate::CallOptions) for this handle's calls, over the
    /// client's settings (timeout, retries, idempotency, extra headers).
    pub fn options(self, options: crate::CallOptions) -> Self {
        Self {
            records: self.records.options(options),
        }
    }

    /// One page of teams matching `query`.
    pub async fn list(&self, query: &ListQuery) -> Result<ListPage<Team>> {
        self.records.list(query).await
    }

    /// Every team matching `query` in one response (at most 10000).
    pub async fn all(&self, query: &ListQuery) -> Result<Vec<Team>> {
        self.records.all(query).await
    }

    /// One team by uid (`404` when there is none).
    pub async fn get(&self, uid: impl AsRef<str>) -> Result<Team> {
        self.records.get(RecordPk::new(uid.as_ref())?).await
    }

    /// The same as [`get`](Self::get), under the name the service's documentation uses.
    pub async fn retrieve(&self, uid: impl AsRef<str>) -> Result<Team> {
        self.get(uid).await
    }

    /// Renames a team, the only change the service allows; returns the team. A blank name is
    /// refused before sending.
    pub async fn rename(&self, uid: impl AsRef<str>, name: impl AsRef<str>) -> Result<Team> {
        let name = name.as_ref();
        if name.trim().is_empty() {
            return Err(Error::invalid("a team name cannot be blank"));
        }
        self.records
            .update(RecordPk::new(uid.as_ref())?, &json!({ "name": name }))
            .await
    }
}
