//! Account (user session) wire types: tokens, users, and the bodies of the `auth/*` routes.
//!
//! Paths are relative to `{api_base_url}/projects/{project}/{environment}/`:
//!
//! | Route | Request | Response |
//! | --- | --- | --- |
//! | `POST auth/login` | [`LoginRequest`] | [`LoginResponse`] |
//! | `POST auth/refresh` | [`RefreshRequest`] | [`AuthState`] |
//! | `GET auth/user` | | [`UserInfo`] |
//! | `POST auth/register` | [`RegisterRequest`] | [`RegisterResponse`] |
//! | `POST auth/change_password` | [`ChangePasswordRequest`] | [`ChangePasswordResponse`] |
//! | `POST auth/reset_password` | [`ResetPasswordRequest`] | [`ResetPasswordResponse`] |
//! | `POST auth/reset_password_complete` | [`ResetPasswordCompleteRequest`] | [`ResetPasswordCompleteResponse`] |
//! | `POST auth/change_email` | [`ChangeEmailRequest`] | [`ChangeEmailResponse`] |
//! | `POST auth/change_email_complete` | [`ChangeEmailCompleteRequest`] | [`ChangeEmailCompleteResponse`] |
//!
//! Secrets (tokens, passwords, one-time codes) are plain `String`s here, because this crate has
//! no secret type, but every type that holds one writes `***` in its `Debug` output instead.
//!
//! Decoding is lenient where the contract allows it: a missing or `null` optional field is `None`
//! (or `false` for flags), unknown fields of [`UserInfo`] are kept, and nothing panics on odd
//! input; a body of the wrong shape is a `serde_json` error.
//!
//! Expiry times are [`Timestamp`]s: RFC 3339 strings on the wire, parsed into a UTC instant.
//!
//! ```
//! use svc_model::account::{AuthState, LoginResponse};
//!
//! let body = r#"{
//!     "token": {"access_token": "a.b.c", "refresh_token": "r.s.t",
//!               "access_token_expires": "2026-05-01T12:00:00+02:00",
//!               "refresh_token_expires": null},
//!     "user": {"uid": "7f3c", "username": "ann@example.com", "has_password": true,
//!              "email": "ann@example.com", "first_name": "Ann", "last_name": null,
//!              "language": "en"}
//! }"#;
//! let login: LoginResponse = serde_json::from_str(body)?;
//! let expires = login.token.access_token_expires.unwrap();
//! assert_eq!(expires.to_rfc3339(), "2026-05-01T10:00:00Z");
//! assert_eq!(login.token.refresh_token_expires, None);
//! assert_eq!(login.user.first_name.as_deref(), Some("Ann"));
//! assert_eq!(login.user.other["language"], "en"); // unknown fields are kept
//! assert!(!format!("{login:?}").contains("a.b.c")); // tokens never print
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

pub use crate::timestamp::{InvalidTimestamp, Timestamp};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Reads `null` as the default value (`false`, `""`, ...), like a missing field.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// `Some("***")` or `None`, for `Debug` output of optional secrets.
fn redact_opt(value: &Option<String>) -> Option<&'static str> {
    value.as_ref().map(|_| "***")
}

// ---------------------------------------------------------------------------------------------
// Tokens and users
// ---------------------------------------------------------------------------------------------

/// A user session's tokens: `{access_token, refresh_token, access_token_expires,
/// refresh_token_expires}`, the expiries RFC 3339 or `null`.
///
/// The access token is sent as `Authorization: JWT <access_token>`; the refresh token buys a new
/// `AuthState` from `POST auth/refresh`, and stops working once used (rotation). `Debug` writes
/// `***` for both tokens.
///
/// ```
/// use svc_model::{AuthState, Timestamp};
///
/// let state = AuthState::new("access.jwt", "refresh.jwt")
///     .with_access_token_expires(Timestamp::from_unix_seconds(1_800_000_000).unwrap());
/// let json = serde_json::to_string(&state)?;
/// assert_eq!(json, r#"{"access_token":"access.jwt","refresh_token":"refresh.jwt","access_token_expires":"2027-01-15T08:00:00Z","refresh_token_expires":null}"#);
/// assert_eq!(serde_json::from_str::<AuthState>(&json)?, state);
/// assert_eq!(
///     format!("{state:?}"),
///     r#"AuthState { access_token: "***", refresh_token: "***", access_token_expires: Some(2027-01-15T08:00:00Z), refresh_token_expires: None }"#
/// );
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthState {
    /// The access token (a JWT), sent as `JWT <access_token>`.
    pub access_token: String,
    /// The refresh token (a JWT), good for one `auth/refresh`.
    pub refresh_token: String,
    /// When the access token expires; `None` when the server did not say.
    #[serde(default)]
    pub access_token_expires: Option<Timestamp>,
    /// When the refresh token expires; `None` when the server did not say.
    #[serde(default)]
    pub refresh_token_expires: Option<Timestamp>,
}

impl AuthState {
    /// Tokens with no expiry times.
    pub fn new(access_token: impl Into<String>, refresh_token: impl Into<String>) -> Self {
        Self {
            access_token: access_token.into(),
            refresh_token: refresh_token.into(),
            access_token_expires: None,
            refresh_token_expires: None,
        }
    }

    /// Sets when the access token expires.
    pub fn with_access_token_expires(mut self, at: Timestamp) -> Self {
        self.access_token_expires = Some(at);
        self
    }

    /// Sets when the refresh token expires.
    pub fn with_refresh_token_expires(mut self, at: Timestamp) -> Self {
        self.refresh_token_expires = Some(at);
        self
    }

    /// The earlier of the two expiry times, if any is known.
    pub fn earliest_expiry(&self) -> Option<Timestamp> {
        match (self.access_token_expires, self.refresh_token_expires) {
            (Some(a), Some(r)) => Some(a.min(r)),
            (a, r) => a.or(r),
        }
    }
}

impl fmt::Debug for AuthState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthState")
            .field("access_token", &"***")
            .field("refresh_token", &"***")
            .field("access_token_expires", &self.access_token_expires)
            .field("refresh_token_expires", &self.refresh_token_expires)
            .finish()
    }
}

/// The signed-in user: `{uid, username, has_password, email, first_name, last_name, ...}`.
///
/// Every field but `uid` may be missing or `null`; any other field is kept in
/// [`other`](Self::other) and written back when serialized.
///
/// ```
/// use svc_model::UserInfo;
/// let user: UserInfo = serde_json::from_str(r#"{"uid": "u1", "has_password": null, "photo": "p.png"}"#)?;
/// assert_eq!(user.uid, "u1");
/// assert!(!user.has_password);
/// assert_eq!(user.email, None);
/// assert_eq!(user.other["photo"], "p.png");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UserInfo {
    /// The user's unique id.
    pub uid: String,
    /// The user name (often the email address).
    #[serde(default)]
    pub username: Option<String>,
    /// Whether the user has a password (a user created through a social login may not);
    /// `false` when missing or `null`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub has_password: bool,
    /// The email address.
    #[serde(default)]
    pub email: Option<String>,
    /// The first name.
    #[serde(default)]
    pub first_name: Option<String>,
    /// The last name.
    #[serde(default)]
    pub last_name: Option<String>,
    /// Every other field, as received.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl UserInfo {
    /// A user with only a `uid`.
    pub fn new(uid: impl Into<String>) -> Self {
        Self {
            uid: uid.into(),
            ..Self::default()
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Requests and responses
// ---------------------------------------------------------------------------------------------

/// `POST auth/login` body: `{email, password}`. `Debug` hides the password.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginRequest {
    /// The email address.
    pub email: String,
    /// The password.
    pub password: String,
}

impl LoginRequest {
    /// A login with email and password.
    pub fn new(email: impl Into<String>, password: impl Into<String>) -> Self {
        Self {
            email: email.into(),
            password: password.into(),
        }
    }
}

impl fmt::Debug for LoginRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoginRequest")
            .field("email", &self.email)
            .field("password", &"***")
            .finish()
    }
}

/// `POST auth/login` answer: `{token, user}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoginResponse {
    /// The new session's tokens.
    pub token: AuthState,
    /// The signed-in user.
    pub user: UserInfo,
}

/// `POST auth/refresh` body: `{refresh_token}`; the answer is an [`AuthState`]. `Debug` hides
/// the token.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefreshRequest {
    /// The refresh token to trade (it stops working once used).
    pub refresh_token: String,
}

impl RefreshRequest {
    /// A refresh with this refresh token.
    pub fn new(refresh_token: impl Into<String>) -> Self {
        Self {
            refresh_token: refresh_token.into(),
        }
    }
}

impl fmt::Debug for RefreshRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RefreshRequest")
            .field("refresh_token", &"***")
            .finish()
    }
}

/// `POST auth/register` body: `{email, password, first_name?, last_name?, language?,
/// timezone?}`; absent options are not written. `Debug` hides the password.
///
/// ```
/// use svc_model::account::RegisterRequest;
/// let req = RegisterRequest::new("ann@example.com", "hunter22").first_name("Ann");
/// assert_eq!(
///     serde_json::to_string(&req).unwrap(),
///     r#"{"email":"ann@example.com","password":"hunter22","first_name":"Ann"}"#
/// );
/// assert!(!format!("{req:?}").contains("hunter22"));
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegisterRequest {
    /// The email address (required).
    pub email: String,
    /// The password (required).
    pub password: String,
    /// The first name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    /// The last name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    /// The preferred language, e.g. `en`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// The time zone, e.g. `Europe/Paris`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
}

impl RegisterRequest {
    /// A registration with the two required fields.
    pub fn new(email: impl Into<String>, password: impl Into<String>) -> Self {
        Self {
            email: email.into(),
            password: password.into(),
            first_name: None,
            last_name: None,
            language: None,
            timezone: None,
        }
    }

    /// Sets the first name.
    pub fn first_name(mut self, value: impl Into<String>) -> Self {
        self.first_name = Some(value.into());
        self
    }

    /// Sets the last name.
    pub fn last_name(mut self, value: impl Into<String>) -> Self {
        self.last_name = Some(value.into());
        self
    }

    /// Sets the language.
    pub fn language(mut self, value: impl Into<String>) -> Self {
        self.language = Some(value.into());
        self
    }

    /// Sets the time zone.
    pub fn timezone(mut self, value: impl Into<String>) -> Self {
        self.timezone = Some(value.into());
        self
    }
}

impl fmt::Debug for RegisterRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisterRequest")
            .field("email", &self.email)
            .field("password", &"***")
            .field("first_name", &self.first_name)
            .field("last_name", &self.last_name)
            .field("language", &self.language)
            .field("timezone", &self.timezone)
            .finish()
    }
}

/// `POST auth/register` answer: `{result: true, user}` or `{result: false, errors}`.
/// Registering does not sign in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RegisterResponse {
    /// Whether the user was created; `false` when missing or `null`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub result: bool,
    /// The new user, when created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<UserInfo>,
    /// Why not, when not: usually field errors `{"email": ["..."]}`, kept as received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Value>,
}

/// `POST auth/change_password` body: `{new_password, current_password?}`. `Debug` hides both.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangePasswordRequest {
    /// The new password.
    pub new_password: String,
    /// The current password, when the user has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_password: Option<String>,
}

impl ChangePasswordRequest {
    /// A password change; `current_password` is needed when the user has a password.
    pub fn new(new_password: impl Into<String>, current_password: Option<String>) -> Self {
        Self {
            new_password: new_password.into(),
            current_password,
        }
    }
}

impl fmt::Debug for ChangePasswordRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChangePasswordRequest")
            .field("new_password", &"***")
            .field("current_password", &redact_opt(&self.current_password))
            .finish()
    }
}

/// `POST auth/change_password` answer: `{result, new_state}`; the new tokens replace the
/// session's (the old ones may stop working).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChangePasswordResponse {
    /// Whether the password was changed; `false` when missing or `null`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub result: bool,
    /// The session's new tokens, when the server issued some.
    #[serde(default)]
    pub new_state: Option<AuthState>,
    /// Why the server refused, when `result` is false: field errors such as
    /// `{"current_password": ["..."]}` (kept as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Value>,
}

/// `POST auth/reset_password` body: `{email}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResetPasswordRequest {
    /// Where to send the reset code.
    pub email: String,
}

impl ResetPasswordRequest {
    /// A reset for this email address.
    pub fn new(email: impl Into<String>) -> Self {
        Self {
            email: email.into(),
        }
    }
}

/// `POST auth/reset_password` answer: `{result}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResetPasswordResponse {
    /// Whether a reset was started; `false` when missing or `null`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub result: bool,
    /// Why the server refused, when `result` is false: field errors such as
    /// `{"current_password": ["..."]}` (kept as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Value>,
}

/// `POST auth/reset_password_complete` body: `{code, new_password}`. `Debug` hides both (the
/// code is as good as a password until it is used).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResetPasswordCompleteRequest {
    /// The reset code that was sent by email.
    pub code: String,
    /// The new password.
    pub new_password: String,
}

impl ResetPasswordCompleteRequest {
    /// Completes a reset.
    pub fn new(code: impl Into<String>, new_password: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            new_password: new_password.into(),
        }
    }
}

impl fmt::Debug for ResetPasswordCompleteRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResetPasswordCompleteRequest")
            .field("code", &"***")
            .field("new_password", &"***")
            .finish()
    }
}

/// `POST auth/reset_password_complete` answer: `{result, new_state}`; the new tokens sign the
/// user in.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResetPasswordCompleteResponse {
    /// Whether the password was reset; `false` when missing or `null`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub result: bool,
    /// The new session's tokens, when the server issued some.
    #[serde(default)]
    pub new_state: Option<AuthState>,
    /// Why the server refused, when `result` is false: field errors such as
    /// `{"current_password": ["..."]}` (kept as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Value>,
}

/// `POST auth/change_email` body: `{new_email, current_password?}`. `Debug` hides the password.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeEmailRequest {
    /// The new email address; a confirmation code is sent there.
    pub new_email: String,
    /// The current password, when the user has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_password: Option<String>,
}

impl ChangeEmailRequest {
    /// An email change; `current_password` is needed when the user has a password.
    pub fn new(new_email: impl Into<String>, current_password: Option<String>) -> Self {
        Self {
            new_email: new_email.into(),
            current_password,
        }
    }
}

impl fmt::Debug for ChangeEmailRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChangeEmailRequest")
            .field("new_email", &self.new_email)
            .field("current_password", &redact_opt(&self.current_password))
            .finish()
    }
}

/// `POST auth/change_email` answer: `{result, sent_confirmation_to}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeEmailResponse {
    /// Whether a confirmation was sent; `false` when missing or `null`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub result: bool,
    /// Where the confirmation code was sent.
    #[serde(default)]
    pub sent_confirmation_to: Option<String>,
    /// Why the server refused, when `result` is false: field errors such as
    /// `{"current_password": ["..."]}` (kept as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Value>,
}

/// `POST auth/change_email_complete` body: `{code}`. `Debug` hides the code.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeEmailCompleteRequest {
    /// The confirmation code that was sent to the new address.
    pub code: String,
}

impl ChangeEmailCompleteRequest {
    /// Completes an email change.
    pub fn new(code: impl Into<String>) -> Self {
        Self { code: code.into() }
    }
}

impl fmt::Debug for ChangeEmailCompleteRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChangeEmailCompleteRequest")
            .field("code", &"***")
            .finish()
    }
}

/// `POST auth/change_email_complete` answer: `{result, old_email, new_email}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeEmailCompleteResponse {
    /// Whether the email address was changed; `false` when missing or `null`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub result: bool,
    /// The previous address.
    #[serde(default)]
    pub old_email: Option<String>,
    /// The new address.
    #[serde(default)]
    pub new_email: Option<String>,
    /// Why the server refused, when `result` is false: field errors such as
    /// `{"current_password": ["..."]}` (kept as sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    #[test]
    fn auth_state_decoding_is_lenient_and_never_panics() {
        let full: AuthState = serde_json::from_value(json!({
            "access_token": "a", "refresh_token": "r",
            "access_token_expires": "2026-05-01T10:00:00Z",
            "refresh_token_expires": "2026-05-08T10:00:00Z",
        }))
        .unwrap();
        assert_eq!(full.earliest_expiry(), Some(ts("2026-05-01T10:00:00Z")));
        let bare: AuthState =
            serde_json::from_value(json!({"access_token": "a", "refresh_token": "r"})).unwrap();
        assert_eq!(bare, AuthState::new("a", "r"));
        assert_eq!(bare.earliest_expiry(), None);
        let nulls: AuthState = serde_json::from_value(json!({
            "access_token": "a", "refresh_token": "r",
            "access_token_expires": null, "refresh_token_expires": null, "extra": 1,
        }))
        .unwrap();
        assert_eq!(nulls, bare);
        for bad in [
            json!(null),
            json!("a"),
            json!({}),
            json!({"access_token": "a"}),
            json!({"access_token": null, "refresh_token": "r"}),
            json!({"access_token": "a", "refresh_token": "r", "access_token_expires": "x"}),
            json!({"access_token": "a", "refresh_token": "r", "refresh_token_expires": {}}),
        ] {
            assert!(
                serde_json::from_value::<AuthState>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn secrets_never_print() {
        let state = AuthState::new("ACCESS-SECRET", "REFRESH-SECRET");
        let mut change = ChangePasswordRequest::new("NEW-PW", Some("OLD-PW".into()));
        let login = LoginResponse {
            token: state.clone(),
            user: UserInfo::new("u"),
        };
        let printed = [
            format!("{state:?}"),
            format!("{login:?}"),
            format!("{:?}", LoginRequest::new("a@b.c", "PW-SECRET")),
            format!("{:?}", RefreshRequest::new("REFRESH-SECRET")),
            format!(
                "{:?}",
                RegisterRequest::new("a@b.c", "PW-SECRET").last_name("L")
            ),
            format!("{change:?}"),
            format!(
                "{:?}",
                ChangePasswordResponse {
                    result: true,
                    new_state: Some(state.clone()),
                    errors: None,
                }
            ),
            format!(
                "{:?}",
                ResetPasswordCompleteRequest::new("CODE-SECRET", "NEW-PW")
            ),
            format!(
                "{:?}",
                ResetPasswordCompleteResponse {
                    result: true,
                    new_state: Some(state.clone()),
                    errors: None,
                }
            ),
            format!(
                "{:?}",
                ChangeEmailRequest::new("n@b.c", Some("OLD-PW".into()))
            ),
            format!("{:?}", ChangeEmailCompleteRequest::new("CODE-SECRET")),
        ];
        for text in &printed {
            for secret in ["SECRET", "NEW-PW", "OLD-PW"] {
                assert!(!text.contains(secret), "{text}");
            }
        }
        assert!(printed[2].contains("a@b.c"));
        change.current_password = None;
        assert_eq!(
            format!("{change:?}"),
            r#"ChangePasswordRequest { new_password: "***", current_password: None }"#
        );
    }

    #[test]
    fn user_info_keeps_other_fields_and_tolerates_nulls() {
        let raw = json!({
            "uid": "u1", "username": null, "has_password": true, "email": "a@b.c",
            "first_name": null, "photo": null, "properties": {"plan": "pro"}
        });
        let user: UserInfo = serde_json::from_value(raw).unwrap();
        assert!(user.has_password);
        assert_eq!(user.username, None);
        assert_eq!(user.last_name, None);
        assert_eq!(user.other.len(), 2);
        assert_eq!(user.other["properties"]["plan"], "pro");
        let back = serde_json::to_value(&user).unwrap();
        assert_eq!(back["properties"], json!({"plan": "pro"}));
        assert_eq!(back["uid"], "u1");
        assert_eq!(serde_json::from_value::<UserInfo>(back).unwrap(), user);
        for bad in [json!({}), json!({"uid": null}), json!([]), json!("u1")] {
            assert!(
                serde_json::from_value::<UserInfo>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn requests_serialize_to_the_contract() {
        let v = |x: &dyn erased::ToJson| x.to_json();
        assert_eq!(
            v(&LoginRequest::new("a@b.c", "pw")),
            json!({"email": "a@b.c", "password": "pw"})
        );
        assert_eq!(v(&RefreshRequest::new("r")), json!({"refresh_token": "r"}));
        assert_eq!(
            v(&RegisterRequest::new("a@b.c", "pw")
                .first_name("F")
                .last_name("L")
                .language("en")
                .timezone("UTC")),
            json!({"email": "a@b.c", "password": "pw", "first_name": "F", "last_name": "L",
                   "language": "en", "timezone": "UTC"})
        );
        assert_eq!(
            v(&ChangePasswordRequest::new("n", None)),
            json!({"new_password": "n"})
        );
        assert_eq!(
            v(&ChangePasswordRequest::new("n", Some("c".into()))),
            json!({"new_password": "n", "current_password": "c"})
        );
        assert_eq!(
            v(&ResetPasswordRequest::new("a@b.c")),
            json!({"email": "a@b.c"})
        );
        assert_eq!(
            v(&ResetPasswordCompleteRequest::new("123", "n")),
            json!({"code": "123", "new_password": "n"})
        );
        assert_eq!(
            v(&ChangeEmailRequest::new("n@b.c", None)),
            json!({"new_email": "n@b.c"})
        );
        assert_eq!(
            v(&ChangeEmailCompleteRequest::new("c")),
            json!({"code": "c"})
        );
    }

    /// Lets the test above put different request types in one table.
    mod erased {
        pub trait ToJson {
            fn to_json(&self) -> serde_json::Value;
        }
        impl<T: serde::Serialize> ToJson for T {
            fn to_json(&self) -> serde_json::Value {
                serde_json::to_value(self).unwrap()
            }
        }
    }

    #[test]
    fn responses_decode_missing_and_null_fields() {
        let r: RegisterResponse = serde_json::from_value(json!({})).unwrap();
        assert_eq!(r, RegisterResponse::default());
        let r: RegisterResponse = serde_json::from_value(
            json!({"result": false, "user": null, "errors": {"email": ["Taken."]}}),
        )
        .unwrap();
        assert!(!r.result && r.user.is_none());
        assert_eq!(r.errors.unwrap()["email"][0], "Taken.");
        let r: RegisterResponse =
            serde_json::from_value(json!({"result": true, "user": {"uid": "u"}})).unwrap();
        assert_eq!(r.user.unwrap().uid, "u");

        let c: ChangePasswordResponse =
            serde_json::from_value(json!({"result": null, "new_state": null})).unwrap();
        assert_eq!(c, ChangePasswordResponse::default());
        let c: ChangePasswordResponse = serde_json::from_value(json!({
            "result": true,
            "new_state": {"access_token": "a", "refresh_token": "r"}
        }))
        .unwrap();
        assert_eq!(c.new_state, Some(AuthState::new("a", "r")));

        let r: ResetPasswordResponse = serde_json::from_value(json!({"result": true})).unwrap();
        assert!(r.result);
        let r: ResetPasswordCompleteResponse = serde_json::from_value(json!({})).unwrap();
        assert_eq!(r, ResetPasswordCompleteResponse::default());
        let e: ChangeEmailResponse =
            serde_json::from_value(json!({"result": true, "sent_confirmation_to": "n@b.c"}))
                .unwrap();
        assert_eq!(e.sent_confirmation_to.as_deref(), Some("n@b.c"));
        let e: ChangeEmailCompleteResponse = serde_json::from_value(
            json!({"result": true, "old_email": "o@b.c", "new_email": null}),
        )
        .unwrap();
        assert_eq!(e.old_email.as_deref(), Some("o@b.c"));
        assert_eq!(e.new_email, None);

        // Wrong shapes are errors, not panics.
        assert!(serde_json::from_value::<LoginResponse>(json!({"token": null})).is_err());
        assert!(serde_json::from_value::<ChangeEmailResponse>(json!({"result": "yes"})).is_err());
        assert!(serde_json::from_value::<RegisterResponse>(json!("ok")).is_err());
    }

    #[test]
    fn login_response_round_trips() {
        let login = LoginResponse {
            token: AuthState::new("a", "r")
                .with_access_token_expires(ts("2026-05-01T10:00:00Z"))
                .with_refresh_token_expires(ts("2026-05-08T10:00:00Z")),
            user: UserInfo {
                email: Some("a@b.c".into()),
                ..UserInfo::new("u1")
            },
        };
        let text = serde_json::to_string(&login).unwrap();
        assert_eq!(serde_json::from_str::<LoginResponse>(&text).unwrap(), login);
        assert!(text.contains(r#""access_token_expires":"2026-05-01T10:00:00Z""#));
    }
}
