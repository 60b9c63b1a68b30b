//! User sessions and account methods (feature `account`): login, the authentication check,
//! logout, registration, password and email changes, and the authorization headers.
//!
//! The session lives in the client (each client has its own, in memory, unless it was built
//! with a shared [`TokenStore`](svc_auth::TokenStore)); its access token goes out as
//! `Authorization: JWT <token>` on data host requests that no API key or resource token serves,
//! and is refreshed, once however many requests wait, when an expiry is less than 30 s away.

use http::{HeaderMap, HeaderValue};
use serde::Serialize;
use serde::de::DeserializeOwned;
use svc_model::account::{
    ChangeEmailCompleteRequest, ChangeEmailCompleteResponse, ChangeEmailRequest,
    ChangeEmailResponse, ChangePasswordRequest, ChangePasswordResponse, LoginRequest,
    LoginResponse, RegisterRequest, RegisterResponse, ResetPasswordCompleteRequest,
    ResetPasswordCompleteResponse, ResetPasswordRequest, ResetPasswordResponse, UserInfo,
};
use svc_model::routes;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::request::{Call, CallAuth, Operation};

// The account routes, under `/projects/{project}/{environment}/auth/`.
const LOGIN: Operation = Operation::new("account.login", &routes::LOGIN);
const USER: Operation = Operation::new("account.user", &routes::CURRENT_USER);
const REGISTER: Operation = Operation::new("account.register", &routes::REGISTER);
const CHANGE_PASSWORD: Operation =
    Operation::new("account.change_password", &routes::CHANGE_PASSWORD);
const RESET_PASSWORD: Operation = Operation::new("account.reset_password", &routes::RESET_PASSWORD);
const RESET_PASSWORD_COMPLETE: Operation = Operation::new(
    "account.reset_password_complete",
    &routes::RESET_PASSWORD_COMPLETE,
);
const CHANGE_EMAIL: Operation = Operation::new("account.change_email", &routes::CHANGE_EMAIL);
const CHANGE_EMAIL_COMPLETE: Operation = Operation::new(
    "account.change_email_complete",
    &routes::CHANGE_EMAIL_COMPLETE,
);

impl Client {
    /// The account methods of the client's session.
    ///
    /// ```no_run
    /// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
    /// let signed_in = client.account().login("ana@example.com", "correct horse").await?;
    /// println!("hello {}", signed_in.user.email.as_deref().unwrap_or("?"));
    /// // Data host calls now carry `JWT <access token>`, refreshed when due.
    /// let status = client.account().is_authenticated().await?;
    /// assert!(status.authenticated);
    /// client.account().logout()?;
    /// # Ok(()) }
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "account")))]
    pub fn account(&self) -> Account<'_> {
        Account {
            client: self,
            options: None,
        }
    }
}

/// The answer of [`Account::is_authenticated`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AuthStatus {
    /// Whether the session's tokens were accepted.
    pub authenticated: bool,
    /// The signed-in user, when authenticated.
    pub user: Option<UserInfo>,
}

/// Account methods; see [`Client::account`].
///
/// ```no_run
/// # async fn run(client: svc_api::Client) -> Result<(), svc_api::Error> {
/// let signed_in = client.account().login("ada@example.com", "correct horse").await?;
/// println!("signed in as {:?}", signed_in.user.email);
/// // Later calls carry the session, refreshed 30 seconds before it expires.
/// let status = client.account().is_authenticated().await?;
/// assert!(status.authenticated);
/// client.account().logout()?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Account<'c> {
    client: &'c Client,
    options: crate::options::HandleOptions,
}

impl Account<'_> {
    crate::options::options_method!();

    /// Operation `op`'s `POST`, with `body`.
    async fn post<B: Serialize, T: DeserializeOwned>(
        &self,
        op: Operation,
        body: &B,
        auth: CallAuth,
    ) -> Result<T> {
        let url = self.client.data_route(op.route, |_| "")?.build();
        let call = Call::new(op, url)
            .options(&self.options)
            .auth(auth)
            .json(body)?;
        self.client.send_json(&call).await
    }

    /// Signs in with email and password; the tokens are saved in the session (and its token
    /// store). Wrong credentials are an [`Error::Api`] with status `401`.
    pub async fn login(
        &self,
        email: impl Into<String>,
        password: impl Into<String>,
    ) -> Result<LoginResponse> {
        let response: LoginResponse = self
            .post(LOGIN, &LoginRequest::new(email, password), CallAuth::None)
            .await?;
        self.client
            .session()
            .set(response.token.clone())
            .map_err(Error::Auth)?;
        Ok(response)
    }

    /// Whether the session is signed in: `{authenticated: false}` at once, without a request,
    /// when there are no tokens; otherwise asks the server for the user (refreshing first if
    /// due). A failed request is an error.
    pub async fn is_authenticated(&self) -> Result<AuthStatus> {
        if !self.client.has_session_credential() {
            return Ok(AuthStatus {
                authenticated: false,
                user: None,
            });
        }
        let url = self.client.data_route(USER.route, |_| "")?.build();
        let call = Call::new(USER, url)
            .options(&self.options)
            .auth(CallAuth::Session);
        let user: UserInfo = self.client.send_json(&call).await?;
        Ok(AuthStatus {
            authenticated: true,
            user: Some(user),
        })
    }

    /// Forgets the session: this client's tokens and the token store's `svc_auth` entry. The
    /// tokens are not revoked on the server, other clients keep their own state, and an API key
    /// given to the builder stays.
    pub fn logout(&self) -> Result<()> {
        self.client.clear_service_token();
        self.client.session().clear().map_err(Error::Auth)
    }

    /// Registers a user. Does not sign in: `{result: true, user}` or `{result: false, errors}`.
    pub async fn register(&self, request: &RegisterRequest) -> Result<RegisterResponse> {
        self.post(REGISTER, request, CallAuth::None).await
    }

    /// Changes the signed-in user's password; the new tokens the server returns are saved.
    /// `current_password` is needed when the user has one.
    pub async fn change_password(
        &self,
        new_password: impl Into<String>,
        current_password: Option<String>,
    ) -> Result<ChangePasswordResponse> {
        let request = ChangePasswordRequest::new(new_password, current_password);
        let response: ChangePasswordResponse = self
            .post(CHANGE_PASSWORD, &request, CallAuth::Session)
            .await?;
        if let Some(state) = &response.new_state {
            self.client
                .session()
                .set(state.clone())
                .map_err(Error::Auth)?;
        }
        Ok(response)
    }

    /// Asks for a password reset code to be sent to `email`.
    pub async fn reset_password(&self, email: impl Into<String>) -> Result<ResetPasswordResponse> {
        self.post(
            RESET_PASSWORD,
            &ResetPasswordRequest::new(email),
            CallAuth::None,
        )
        .await
    }

    /// Sets a new password with a reset code; the new tokens the server returns are saved.
    pub async fn reset_password_complete(
        &self,
        code: impl Into<String>,
        new_password: impl Into<String>,
    ) -> Result<ResetPasswordCompleteResponse> {
        let request = ResetPasswordCompleteRequest::new(code, new_password);
        let response: ResetPasswordCompleteResponse = self
            .post(RESET_PASSWORD_COMPLETE, &request, CallAuth::None)
            .await?;
        if let Some(state) = &response.new_state {
            self.client
                .session()
                .set(state.clone())
                .map_err(Error::Auth)?;
        }
        Ok(response)
    }

    /// Asks to change the signed-in user's email; a confirmation code goes to the new address.
    pub async fn change_email(
        &self,
        new_email: impl Into<String>,
        current_password: Option<String>,
    ) -> Result<ChangeEmailResponse> {
        let request = ChangeEmailRequest::new(new_email, current_password);
        self.post(CHANGE_EMAIL, &request, CallAuth::Session).await
    }

    /// Confirms an email change with its code.
    pub async fn change_email_complete(
        &self,
        code: impl Into<String>,
    ) -> Result<ChangeEmailCompleteResponse> {
        self.post(
            CHANGE_EMAIL_COMPLETE,
            &ChangeEmailCompleteRequest::new(code),
            CallAuth::None,
        )
        .await
    }

    /// The authorization headers the next data host request would carry (after a refresh, if
    /// one is due), or `None` when the client has no credentials for it.
    pub async fn get_headers(&self) -> Result<Option<HeaderMap>> {
        let Some(credential) = self
            .client
            .resolve(&CallAuth::Data {
                resource: None,
                per_call: None,
            })
            .await
            .or_else(|e| match e {
                Error::InvalidInput(_) => Ok(None),
                other => Err(other),
            })?
        else {
            return Ok(None);
        };
        let value: HeaderValue = credential
            .header_value()
            .map_err(|e| Error::invalid_because(e.to_string(), e))?;
        let mut headers = HeaderMap::new();
        headers.insert(http::header::AUTHORIZATION, value);
        Ok(Some(headers))
    }
}
