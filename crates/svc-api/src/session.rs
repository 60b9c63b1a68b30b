//! Which credential a call carries, and the user session behind `JWT` credentials: the session
//! is refreshed (once, however many calls wait) when an expiry is less than 30 s away.

use svc_auth::{Credential, RefreshError, Secret};
use svc_model::account::{AuthState, RefreshRequest, Timestamp};
use svc_model::routes;
use tracing::Instrument;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::request::{Call, Operation, decode};

const REFRESH: Operation = Operation::new("account.refresh", &routes::REFRESH);

impl Client {
    #[cfg(feature = "account")]
    pub(crate) fn session(&self) -> &svc_auth::Session {
        &self.inner.session
    }

    /// Whether a `JWT` credential is available: a service token or session tokens.
    #[cfg(any(feature = "records", feature = "users", feature = "account"))]
    pub(crate) fn has_session_credential(&self) -> bool {
        self.service_token().is_some() || self.inner.session.has_tokens()
    }

    fn service_token(&self) -> Option<Secret> {
        self.inner
            .service_token
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    #[cfg(feature = "account")]
    pub(crate) fn clear_service_token(&self) {
        *self
            .inner
            .service_token
            .write()
            .unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Fails (nothing sent) when no credential could serve a data host call on `resource`.
    #[cfg(any(feature = "records", feature = "users"))]
    pub(crate) fn check_data_credential(
        &self,
        resource: &str,
        per_call: Option<&Secret>,
    ) -> Result<()> {
        use svc_auth::{CredentialSources, Route, select_credential};
        let sources = CredentialSources::new()
            .per_call(per_call)
            .resource_token(self.inner.resource_tokens.get(resource))
            .api_key(self.inner.api_key.as_ref());
        if select_credential(Route::Resource, &sources).is_some() || self.has_session_credential() {
            Ok(())
        } else {
            Err(no_credential(Some(resource)))
        }
    }

    /// How a data host call on `resource` is authorized: when the credential is a token for this
    /// call, the client's token for `resource` or the API key (none of which changes once the
    /// client is built), that credential, chosen now, so that the call needs no copy of the
    /// resource's name; else the session's or the service token, chosen when the call is sent
    /// ([`CallAuth::data`]), as [`data_credential`](Self::data_credential) would.
    #[cfg(any(feature = "records", feature = "users", feature = "teams"))]
    pub(crate) fn data_auth(
        &self,
        resource: &str,
        per_call: Option<&Secret>,
    ) -> crate::request::CallAuth {
        use crate::request::CallAuth;
        use svc_auth::{CredentialSources, Route, select_credential};
        let sources = CredentialSources::new()
            .per_call(per_call)
            .resource_token(self.inner.resource_tokens.get(resource))
            .api_key(self.inner.api_key.as_ref());
        match select_credential(Route::Resource, &sources) {
            Some(credential) => CallAuth::Fixed(credential),
            None => CallAuth::data(resource, per_call),
        }
    }

    /// The credential of a data host call: a token for this call, else the client's token for
    /// `resource`, else the API key, else the service token or the session (refreshed first when
    /// due). `resource` is `None` for the project's own routes.
    #[cfg(feature = "_data")]
    pub(crate) async fn data_credential(
        &self,
        resource: Option<&str>,
        per_call: Option<&Secret>,
    ) -> Result<Credential> {
        use svc_auth::{CredentialSources, Route, select_credential};
        let sources = CredentialSources::new()
            .per_call(per_call)
            .resource_token(resource.and_then(|r| self.inner.resource_tokens.get(r)))
            .api_key(self.inner.api_key.as_ref());
        if let Some(credential) = select_credential(Route::Resource, &sources) {
            return Ok(credential);
        }
        match self.session_credential().await? {
            Some(credential) => Ok(credential),
            None => Err(no_credential(resource)),
        }
    }

    /// The service token, else the session's access token (refreshed first when due), for the
    /// calls only a signed-in user or a service can make.
    #[cfg(any(feature = "proxy", feature = "account"))]
    pub(crate) async fn signed_in_credential(&self) -> Result<Credential> {
        match self.session_credential().await? {
            Some(credential) => Ok(credential),
            None => Err(Error::invalid(
                "not signed in: call client.account().login(..), build the client with a token store that holds a session, or load a service token",
            )),
        }
    }

    /// The service token, else the session's access token (refreshed when due), as `JWT`.
    async fn session_credential(&self) -> Result<Option<Credential>> {
        if let Some(token) = self.service_token() {
            return Ok(Some(Credential::Jwt(token)));
        }
        let now = Timestamp::now();
        let state = if self.inner.session.refresh_due(now) {
            self.refreshed_state(now).await
        } else {
            self.session_state(now).await
        }?;
        Ok(state.map(|s| Credential::jwt(s.access_token)))
    }

    /// The session's tokens at `now`, refreshed first when due (single-flight).
    async fn session_state(&self, now: Timestamp) -> Result<Option<AuthState>> {
        self.inner
            .session
            // Boxed: the refresh is a whole call (retries, decoding) of a kilobyte or more of
            // state, which would otherwise sit in the future of every call that may carry the
            // session (every record call), refresh or not; it is made at most once per
            // access token, so the allocation is not paid per call.
            .valid_state(now, |refresh_token| Box::pin(self.refresh(refresh_token)))
            .await
            .map_err(Error::Auth)
    }

    /// A due refresh, run in a task of its own when there is a tokio runtime: it must finish
    /// even if the call that needed it is dropped or times out, or the rotated tokens would be
    /// lost and the session left with a refresh token the server has already retired.
    #[cfg(feature = "default-transport")]
    async fn refreshed_state(&self, now: Timestamp) -> Result<Option<AuthState>> {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return self.session_state(now).await;
        };
        let client = self.clone();
        runtime
            // In the caller's span: the refresh shows inside the operation that needed it.
            .spawn(async move { client.session_state(now).await }.in_current_span())
            .await
            .unwrap_or_else(|e| {
                Err(Error::Auth(svc_auth::SessionError::RefreshFailed(
                    RefreshError::failed(format!("the refresh task stopped: {e}")),
                )))
            })
    }

    /// Without the default transport there may be no tokio runtime: refresh in the caller.
    #[cfg(not(feature = "default-transport"))]
    async fn refreshed_state(&self, now: Timestamp) -> Result<Option<AuthState>> {
        self.session_state(now).await
    }

    /// `POST auth/refresh`; a `401` answer means the refresh token is no good any more.
    async fn refresh(&self, refresh_token: Secret) -> Result<AuthState, RefreshError> {
        let url = self
            .data_route(REFRESH.route, |_| "")
            .map_err(|e| RefreshError::failed(e.to_string()))?
            .build();
        let call = Call::new(REFRESH, url)
            .json(&RefreshRequest::new(refresh_token.expose()))
            .map_err(|e| RefreshError::failed(e.to_string()))?;
        // An operation of its own, inside the one that found the session due.
        let span = self.operation_span(&call);
        let answer = async {
            let response = self.send_with_retries(&call, None, &span).await?;
            decode::<AuthState>(response)
        }
        .instrument(span.clone())
        .await;
        crate::spans::finish(&span, &answer);
        answer.map_err(|e| match e.status() {
            Some(status) if status.is_client_error() => {
                RefreshError::rejected(status.as_u16(), e.to_string())
            }
            _ => RefreshError::failed(e.to_string()),
        })
    }
}

#[cfg(feature = "_data")]
fn no_credential(resource: Option<&str>) -> Error {
    let what = resource.map_or("this call".to_owned(), |r| format!("resource {r:?}"));
    Error::invalid(format!(
        "no credential for {what}: give ClientBuilder::resource_token (or a token for this call), an API key, or sign in"
    ))
}
