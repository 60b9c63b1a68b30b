//! Application users (feature `users`): the model `users` of the built-in tools resource.

use serde_json::json;
use svc_auth::Secret;
use svc_model::ListPage;
use svc_model::RecordPk;
use svc_model::records::ListQuery;
use svc_model::routes;
use svc_model::users::{NewUser, TOOLS_RESOURCE, USERS_MODEL, User};

use crate::client::Client;
use crate::error::{Error, Result};
use crate::records::{RecordOps, RecordStream, Records};
use crate::request::Operation;

static USERS: RecordOps = RecordOps {
    list: Operation::new("users.list", &routes::LIST_USERS),
    all: Operation::new("users.all", &routes::LIST_USERS),
    stream: Operation::new("users.stream", &routes::LIST_USERS),
    get: Operation::new("users.get", &routes::GET_USER),
    create: Some(Operation::new("users.create", &routes::CREATE_USER)),
    update: Operation::new("users.update", &routes::UPDATE_USER),
    delete: Some(Operation::new("users.delete", &routes::DELETE_USER)),
};

impl Client {
    /// The project's application users.
    ///
    /// Users are records of the model `users` of the built-in tools resource `__svc_app__`, so
    /// lists page, filter and stream like records lists. Calls carry the built-in
    /// tools token (set it with [`ClientBuilder::tools_token`](crate::ClientBuilder::tools_token),
    /// or with [`Users::token`] for these calls), else the API key.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// use svc_api::model::records::ListQuery;
    /// use svc_api::model::users::NewUser;
    ///
    /// let editors = client.teams().all(&ListQuery::new().eq("name", "Editors")).await?;
    /// let team = &editors[0].uid;
    /// let ana = client.users().create(&NewUser::new("ana@example.com", team).first_name("Ana")).await?;
    /// let members = client.users().all(&ListQuery::new().eq("group", team)).await?;
    /// assert!(members.iter().any(|u| u.uid == ana.uid));
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "users")))]
    pub fn users(&self) -> Users<'_> {
        Users {
            records: Records::new(self, &USERS, TOOLS_RESOURCE, USERS_MODEL),
        }
    }
}

/// User operations; see [`Client::users`].
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// use svc_api::model::records::ListQuery;
///
/// let page = client.users().list(&ListQuery::new()).await?;
/// println!("{} users", page.count);
/// if let Some(first) = page.results.first() {
///     let user = client.users().get(&first.uid).await?;
///     println!("{} is in team {}", user.email, user.group);
/// }
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Users<'c> {
    records: Records<'c, User>,
}

fn uid_of(uid: &str) -> Result<RecordPk> {
    Ok(RecordPk::new(uid)?)
}

impl Users<'_> {
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

    /// How many pages [`stream`](Self::stream) fetches ahead of the caller (default 3).
    pub fn prefetch(self, pages: usize) -> Self {
        Self {
            records: self.records.prefetch(pages),
        }
    }

    /// One page of users matching `query` (filters such as `eq("group", team_uid)`, ordering,
    /// page and page size, as for records).
    pub async fn list(&self, query: &ListQuery) -> Result<ListPage<User>> {
        self.records.list(query).await
    }

    /// Every user matching `query` in one response (at most 10000).
    pub async fn all(&self, query: &ListQuery) -> Result<Vec<User>> {
        self.records.all(query).await
    }

    /// Every user matching `query`, across pages, as a stream that fetches the next pages
    /// while the caller works and stops after the last one (as the records stream does).
    pub fn stream(&self, query: ListQuery) -> Result<RecordStream<User>> {
        self.records.stream(query)
    }

    /// One user by uid (`404` when there is none).
    pub async fn get(&self, uid: impl AsRef<str>) -> Result<User> {
        self.records.get(uid_of(uid.as_ref())?).await
    }

    /// The same as [`get`](Self::get), under the name the service's documentation uses.
    pub async fn retrieve(&self, uid: impl AsRef<str>) -> Result<User> {
        self.get(uid).await
    }

    /// Adds a user to a team. `email` and `group` must not be empty (checked before sending);
    /// the server refuses an e-mail address that is taken or malformed, and an unknown team.
    /// Never retried once it may have been sent.
    pub async fn create(&self, user: &NewUser) -> Result<User> {
        if user.email.trim().is_empty() {
            return Err(Error::invalid("a user needs an e-mail address"));
        }
        if user.group.trim().is_empty() {
            return Err(Error::invalid(
                "a user needs a team: give the team's uid as `group`",
            ));
        }
        self.records.create(user).await
    }

    /// Moves a user to another team, the only change the service allows; returns the user.
    pub async fn update_group(
        &self,
        uid: impl AsRef<str>,
        group_uid: impl AsRef<str>,
    ) -> Result<User> {
        let group = group_uid.as_ref();
        if group.trim().is_empty() {
            return Err(Error::invalid("the team uid is empty"));
        }
        self.records
            .update(uid_of(uid.as_ref())?, &json!({ "group": group }))
            .await
    }

    /// Deletes a user.
    pub async fn delete(&self, uid: impl AsRef<str>) -> Result<()> {
        self.records.delete(uid_of(uid.as_ref())?).await
    }
}
