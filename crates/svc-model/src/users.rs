//! Application users and teams (docs/contract.md 5.3): the models `users` and `groups` of the
//! built-in tools resource [`TOOLS_RESOURCE`].
//!
//! ```
//! use svc_model::users::{NewUser, User};
//!
//! let user: User = serde_json::from_str(
//!     r#"{"uid": "6f1c…", "email": "ana@example.com", "group": "team-1", "date_add": "2026-01-02T03:04:05.000Z",
//!         "first_name": "Ana", "last_name": null, "avatar": "a.png"}"#,
//! )?;
//! assert_eq!(user.group, "team-1");
//! assert_eq!(user.other["avatar"], "a.png"); // fields this version does not know are kept
//!
//! let new = NewUser::new("bo@example.com", "team-1").first_name("Bo");
//! assert_eq!(
//!     serde_json::to_string(&new)?,
//!     r#"{"email":"bo@example.com","group":"team-1","first_name":"Bo"}"#,
//! );
//! # Ok::<(), serde_json::Error>(())
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The fixed name of the built-in tools resource, which holds users and teams.
pub const TOOLS_RESOURCE: &str = "__svc_app__";
/// The model of users in [`TOOLS_RESOURCE`].
pub const USERS_MODEL: &str = "users";
/// The model of teams in [`TOOLS_RESOURCE`] (teams are called groups on the wire).
pub const TEAMS_MODEL: &str = "groups";

/// An application user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct User {
    /// The user's unique id (a UUID), assigned by the server.
    pub uid: String,
    /// The e-mail address, unique among the project's users.
    pub email: String,
    /// The uid of the user's team.
    pub group: String,
    /// When the user was added (RFC 3339).
    #[serde(default)]
    pub date_add: Option<String>,
    /// The first name.
    #[serde(default)]
    pub first_name: Option<String>,
    /// The last name.
    #[serde(default)]
    pub last_name: Option<String>,
    /// Fields this version of the SDK does not know, kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A team (a `groups` record).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Team {
    /// The team's unique id.
    pub uid: String,
    /// The team's name.
    pub name: String,
    /// Fields this version of the SDK does not know, kept as sent.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The body of a user create: `email` and `group` are required, the names optional.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NewUser {
    /// The e-mail address.
    pub email: String,
    /// The uid of the user's team.
    pub group: String,
    /// The first name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    /// The last name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
}

impl NewUser {
    /// A user with an e-mail address and a team uid.
    pub fn new(email: impl Into<String>, group: impl Into<String>) -> Self {
        Self {
            email: email.into(),
            group: group.into(),
            first_name: None,
            last_name: None,
        }
    }

    /// Sets the first name.
    pub fn first_name(mut self, name: impl Into<String>) -> Self {
        self.first_name = Some(name.into());
        self
    }

    /// Sets the last name.
    pub fn last_name(mut self, name: impl Into<String>) -> Self {
        self.last_name = Some(name.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn team_keeps_unknown_fields_and_round_trips() {
        let json = r#"{"uid":"t1","name":"Admins","color":"red"}"#;
        let team: Team = serde_json::from_str(json).unwrap();
        assert_eq!(team.name, "Admins");
        assert_eq!(team.other["color"], "red");
        let back: Team = serde_json::from_str(&serde_json::to_string(&team).unwrap()).unwrap();
        assert_eq!(back, team);
    }

    #[test]
    fn user_needs_uid_email_and_group() {
        assert!(serde_json::from_str::<User>(r#"{"uid":"u","email":"e"}"#).is_err());
        let u: User = serde_json::from_str(r#"{"uid":"u","email":"e","group":"g"}"#).unwrap();
        assert_eq!(u.first_name, None);
    }
}
