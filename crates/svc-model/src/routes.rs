//! Every operation of the svc REST API, written once: its method, its host and its path
//! template.
//!
//! The SDK builds its URLs from these templates, the emulator routes and journals requests by
//! them, and a test of the emulator checks them against its `openapi.json` both ways. Adding an
//! endpoint starts here.
//!
//! A template is the path relative to its host's base URL, as the SDK sends it, with each value
//! the caller chooses written `{name}`: `{project}`, `{environment}`, `{resource}`, `{model}`,
//! `{pk}`, `{uid}`, `{action}`. The application host's paths end in `/`.
//!
//! ```
//! use svc_model::routes::{self, Method, Segment};
//!
//! let route = routes::GET_RECORD;
//! assert_eq!(route.method(), Method::Get);
//! assert_eq!(route.path(), "/projects/{project}/{environment}/{resource}/models/{model}/{pk}");
//! let params: Vec<&str> = route.params().collect();
//! assert_eq!(params, ["project", "environment", "resource", "model", "pk"]);
//!
//! let found = routes::ALL.iter().find(|r| r.captures("/projects/demo/prod/shop/models/orders/7").is_some());
//! assert_eq!(found.map(|r| r.id()), Some("getRecord"));
//! assert_eq!(routes::GET_RECORD.segments()[4], Segment::Literal("models"));
//! ```

use std::fmt;

/// The host a route is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Host {
    /// The application host: projects, page settings, the proxy. Its base URL ends in `/api`.
    App,
    /// The data host: records, SQL, users, teams, resources, sessions, actions, workflows.
    Data,
}

/// The HTTP method of a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
    /// `PUT`.
    Put,
    /// `PATCH`.
    Patch,
    /// `DELETE`.
    Delete,
}

impl Method {
    /// The method's name, upper case (`"GET"`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One segment of a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment<'a> {
    /// Text sent as it is (`models`).
    Literal(&'a str),
    /// A value the caller chooses, by its name (`model` for `{model}`).
    Param(&'a str),
}

/// The most segments a template has.
const MAX_SEGMENTS: usize = 10;

/// One operation: its OpenAPI `operationId`, method, host and path template, with the
/// template's segments read once, when the constant is made (the SDK walks them for every
/// URL it builds).
#[derive(Clone, Copy)]
pub struct Route {
    id: &'static str,
    method: Method,
    host: Host,
    path: &'static str,
    segments: [Segment<'static>; MAX_SEGMENTS],
    len: usize,
}

/// `text[start..end]`, in a constant.
const fn slice(text: &'static str, start: usize, end: usize) -> &'static str {
    let (_, rest) = text.split_at(start);
    rest.split_at(end - start).0
}

impl Route {
    /// A route. `path` starts with `/`, has at most ten segments, and each segment is a
    /// literal of RFC 3986's unreserved characters or a `{name}`; anything else fails to
    /// compile where the constant is made.
    pub const fn new(id: &'static str, method: Method, host: Host, path: &'static str) -> Self {
        let bytes = path.as_bytes();
        assert!(
            !bytes.is_empty() && bytes[0] == b'/',
            "a path template starts with /"
        );
        let mut segments = [Segment::Literal(""); MAX_SEGMENTS];
        let mut len = 0;
        let mut start = 1;
        while start < bytes.len() {
            let mut end = start;
            let mut braces = 0;
            while end < bytes.len() && bytes[end] != b'/' {
                let b = bytes[end];
                assert!(
                    b.is_ascii_alphanumeric()
                        || matches!(b, b'-' | b'.' | b'_' | b'~' | b'{' | b'}'),
                    "a template's literal segments are unreserved characters"
                );
                if b == b'{' || b == b'}' {
                    braces += 1;
                }
                end += 1;
            }
            assert!(end > start, "a template has no empty segment");
            assert!(len < MAX_SEGMENTS, "a template has at most ten segments");
            segments[len] = if braces == 0 {
                Segment::Literal(slice(path, start, end))
            } else {
                assert!(
                    braces == 2
                        && bytes[start] == b'{'
                        && bytes[end - 1] == b'}'
                        && end - start > 2,
                    "a value is one whole segment, braces around its name"
                );
                Segment::Param(slice(path, start + 1, end - 1))
            };
            len += 1;
            start = end + 1;
        }
        Self {
            id,
            method,
            host,
            path,
            segments,
            len,
        }
    }

    /// The OpenAPI `operationId` (`getRecord`).
    pub const fn id(&self) -> &'static str {
        self.id
    }

    /// The method.
    pub const fn method(&self) -> Method {
        self.method
    }

    /// The host.
    pub const fn host(&self) -> Host {
        self.host
    }

    /// The template, relative to the host's base URL, as the SDK sends it.
    pub const fn path(&self) -> &'static str {
        self.path
    }

    /// Whether the path ends in `/` (the application host's do).
    pub const fn trailing_slash(&self) -> bool {
        let bytes = self.path.as_bytes();
        bytes.len() > 1 && bytes[bytes.len() - 1] == b'/'
    }

    /// The template's segments, in order.
    pub fn segments(&self) -> &[Segment<'static>] {
        &self.segments[..self.len]
    }

    /// The names of the template's values, in order.
    pub fn params(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.segments().iter().filter_map(|s| match *s {
            Segment::Param(name) => Some(name),
            Segment::Literal(_) => None,
        })
    }

    /// When `path` (relative to the host's base URL, without query; one trailing `/` or none)
    /// has this template's shape, each template segment with the path's segment in its place,
    /// still percent-encoded. A value is any non-empty segment; a literal must be equal.
    pub fn captures<'p>(
        &self,
        path: &'p str,
    ) -> Option<impl Iterator<Item = (Segment<'static>, &'p str)> + use<'_, 'p>> {
        let rest = path.strip_prefix('/')?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let matches = rest.split('/').count() == self.len
            && self.segments().iter().zip(rest.split('/')).all(
                |(template, segment)| match *template {
                    Segment::Literal(text) => text == segment,
                    Segment::Param(_) => !segment.is_empty(),
                },
            );
        matches.then(|| self.segments().iter().copied().zip(rest.split('/')))
    }
}

impl fmt::Debug for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Route")
            .field("id", &self.id)
            .field("method", &self.method)
            .field("host", &self.host)
            .field("path", &self.path)
            .finish()
    }
}

impl PartialEq for Route {
    fn eq(&self, other: &Self) -> bool {
        (self.id, self.method, self.host, self.path)
            == (other.id, other.method, other.host, other.path)
    }
}

impl Eq for Route {}

macro_rules! routes {
    ($($(#[$doc:meta])* $name:ident = $id:literal, $method:ident $host:ident $path:literal;)*) => {
        $(
            $(#[$doc])*
            pub const $name: Route = Route::new($id, Method::$method, Host::$host, $path);
        )*
        /// Every route of the API, in the order of the constants above.
        pub const ALL: &[Route] = &[$($name),*];
    };
}

routes! {
    /// A project's description.
    GET_PROJECT = "getProject", Get App "/projects/{project}/";
    /// The page settings of an environment.
    LIST_PAGES = "listPages", Get App "/projects/{project}/{environment}/view_settings/";
    /// A new page's settings.
    CREATE_PAGE = "createPage", Post App "/projects/{project}/{environment}/view_settings/";
    /// One page's settings.
    GET_PAGE = "getPage", Get App "/projects/{project}/{environment}/view_settings/{uid}/";
    /// A change to one page's settings.
    UPDATE_PAGE = "updatePage", Patch App "/projects/{project}/{environment}/view_settings/{uid}/";
    /// A page's settings, deleted.
    DELETE_PAGE = "deletePage", Delete App "/projects/{project}/{environment}/view_settings/{uid}/";
    /// A request sent on through the application host.
    PROXY_REQUEST = "proxyRequest", Post App "/proxy_request/";
    /// A page of a model's records.
    LIST_RECORDS = "listRecords", Get Data "/projects/{project}/{environment}/{resource}/models/{model}";
    /// A new record.
    CREATE_RECORD = "createRecord", Post Data "/projects/{project}/{environment}/{resource}/models/{model}";
    /// A page of a model's records, its filters in the JSON body (the data engine's
    /// `get_records`: a list whose filters are read from the body first, then the query).
    LIST_RECORDS_POST = "listRecordsPost", Post Data "/projects/{project}/{environment}/{resource}/models/{model}/get_records";
    /// The aggregate's GET form (query parameters).
    AGGREGATE_RECORDS_GET = "aggregateRecordsGet", Get Data "/projects/{project}/{environment}/{resource}/models/{model}/aggregate";
    /// An aggregate of a model's records.
    AGGREGATE_RECORDS = "aggregateRecords", Post Data "/projects/{project}/{environment}/{resource}/models/{model}/aggregate";
    /// The grouping's GET form (query parameters).
    GROUP_RECORDS_GET = "groupRecordsGet", Get Data "/projects/{project}/{environment}/{resource}/models/{model}/group";
    /// A model's records, grouped.
    GROUP_RECORDS = "groupRecords", Post Data "/projects/{project}/{environment}/{resource}/models/{model}/group";
    /// Records created from an array, each as a create (the data engine's `bulk_create`): what
    /// became of each item.
    BULK_CREATE_RECORDS = "bulkCreateRecords", Post Data "/projects/{project}/{environment}/{resource}/models/{model}/bulk_create";
    /// An ordering column's values moved within a segment, one record put at its end (the
    /// data engine's `reorder`).
    REORDER_RECORDS = "reorderRecords", Post Data "/projects/{project}/{environment}/{resource}/models/{model}/reorder";
    /// The selected records numbered 1, 2, ... in an ordering column (the data engine's
    /// `reset_order`).
    RESET_RECORDS_ORDER = "resetRecordsOrder", Post Data "/projects/{project}/{environment}/{resource}/models/{model}/reset_order";
    /// One record.
    GET_RECORD = "getRecord", Get Data "/projects/{project}/{environment}/{resource}/models/{model}/{pk}";
    /// The keys of the records before and after one in the list's order (the data engine's
    /// `get_siblings`).
    GET_RECORD_SIBLINGS = "getRecordSiblings", Get Data "/projects/{project}/{environment}/{resource}/models/{model}/{pk}/get_siblings";
    /// A change to one record.
    PATCH_RECORD = "patchRecord", Patch Data "/projects/{project}/{environment}/{resource}/models/{model}/{pk}";
    /// A record's fields, all sent.
    PUT_RECORD = "putRecord", Put Data "/projects/{project}/{environment}/{resource}/models/{model}/{pk}";
    /// A record, deleted.
    DELETE_RECORD = "deleteRecord", Delete Data "/projects/{project}/{environment}/{resource}/models/{model}/{pk}";
    /// A read-only SQL query.
    SQL_QUERY = "sqlQuery", Post Data "/projects/{project}/{environment}/{resource}/sql_get_query";
    /// A resource's schema, read again.
    RELOAD_RESOURCE = "reloadResource", Post Data "/projects/{project}/{environment}/{resource}/reload";
    /// A page of the application's users.
    LIST_USERS = "listUsers", Get Data "/projects/{project}/{environment}/__svc_app__/models/users";
    /// A new user.
    CREATE_USER = "createUser", Post Data "/projects/{project}/{environment}/__svc_app__/models/users";
    /// One user.
    GET_USER = "getUser", Get Data "/projects/{project}/{environment}/__svc_app__/models/users/{pk}";
    /// A change to one user.
    UPDATE_USER = "updateUser", Patch Data "/projects/{project}/{environment}/__svc_app__/models/users/{pk}";
    /// A user, deleted.
    DELETE_USER = "deleteUser", Delete Data "/projects/{project}/{environment}/__svc_app__/models/users/{pk}";
    /// A page of the application's teams.
    LIST_TEAMS = "listTeams", Get Data "/projects/{project}/{environment}/__svc_app__/models/groups";
    /// One team.
    GET_TEAM = "getTeam", Get Data "/projects/{project}/{environment}/__svc_app__/models/groups/{pk}";
    /// A change to one team.
    UPDATE_TEAM = "updateTeam", Patch Data "/projects/{project}/{environment}/__svc_app__/models/groups/{pk}";
    /// A session, for an email and a password.
    LOGIN = "login", Post Data "/projects/{project}/{environment}/auth/login";
    /// A session's new access token.
    REFRESH = "refresh", Post Data "/projects/{project}/{environment}/auth/refresh";
    /// The session's user.
    CURRENT_USER = "currentUser", Get Data "/projects/{project}/{environment}/auth/user";
    /// A new account.
    REGISTER = "register", Post Data "/projects/{project}/{environment}/auth/register";
    /// A new password, for the old one.
    CHANGE_PASSWORD = "changePassword", Post Data "/projects/{project}/{environment}/auth/change_password";
    /// A password reset's start (a code by email).
    RESET_PASSWORD = "resetPassword", Post Data "/projects/{project}/{environment}/auth/reset_password";
    /// A password reset's end, with its code.
    RESET_PASSWORD_COMPLETE = "resetPasswordComplete", Post Data "/projects/{project}/{environment}/auth/reset_password_complete";
    /// An email change's start (a code by email).
    CHANGE_EMAIL = "changeEmail", Post Data "/projects/{project}/{environment}/auth/change_email";
    /// An email change's end, with its code.
    CHANGE_EMAIL_COMPLETE = "changeEmailComplete", Post Data "/projects/{project}/{environment}/auth/change_email_complete";
    /// A resource's action, run.
    RUN_ACTION = "runAction", Post Data "/projects/{project}/{environment}/{resource}/actions/{action}";
    /// A workflow, run.
    RUN_WORKFLOW = "runWorkflow", Post Data "/projects/{project}/{environment}/workflows/{uid}/run";
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn ids_are_unique_and_method_and_path_name_one_route() {
        let ids: BTreeSet<&str> = ALL.iter().map(Route::id).collect();
        assert_eq!(ids.len(), ALL.len());
        let pairs: BTreeSet<(&str, &str)> = ALL
            .iter()
            .map(|r| (r.method().as_str(), r.path()))
            .collect();
        assert_eq!(pairs.len(), ALL.len());
    }

    #[test]
    fn segments_read_the_template() {
        assert_eq!(
            GET_PAGE.segments(),
            [
                Segment::Literal("projects"),
                Segment::Param("project"),
                Segment::Param("environment"),
                Segment::Literal("view_settings"),
                Segment::Param("uid"),
            ]
        );
        assert!(GET_PAGE.trailing_slash());
        assert!(!GET_RECORD.trailing_slash());
        let rebuilt: String = GET_RECORD
            .segments()
            .iter()
            .map(|s| match s {
                Segment::Literal(t) => format!("/{t}"),
                Segment::Param(n) => format!("/{{{n}}}"),
            })
            .collect();
        assert_eq!(rebuilt, GET_RECORD.path());
    }

    #[test]
    fn the_app_hosts_paths_end_in_a_slash_and_the_data_hosts_do_not() {
        for route in ALL {
            assert_eq!(
                route.trailing_slash(),
                route.host() == Host::App,
                "{route:?}"
            );
        }
    }

    #[test]
    fn captures_take_a_shape_not_a_prefix() {
        let pairs: Vec<_> = GET_RECORD
            .captures("/projects/demo/prod/my%20shop/models/orders/7/")
            .unwrap()
            .filter_map(|(t, v)| matches!(t, Segment::Param(_)).then_some(v))
            .collect();
        assert_eq!(pairs, ["demo", "prod", "my%20shop", "orders", "7"]);
        assert!(
            GET_RECORD
                .captures("/projects/demo/prod/shop/models/orders")
                .is_none()
        );
        assert!(
            GET_RECORD
                .captures("/projects/demo/prod/shop/models/orders/7/x")
                .is_none()
        );
        assert!(
            GET_RECORD
                .captures("/projects/demo/prod/shop/tables/orders/7")
                .is_none()
        );
        assert!(
            GET_RECORD
                .captures("/projects/demo//shop/models/orders/7")
                .is_none()
        );
        assert!(
            GET_RECORD
                .captures("projects/demo/prod/shop/models/orders/7")
                .is_none()
        );
        assert!(
            GET_USER
                .captures("/projects/d/p/__svc_app__/models/users/u1")
                .is_some()
        );
        assert!(
            GET_USER
                .captures("/projects/d/p/shop/models/users/u1")
                .is_none()
        );
    }

    #[test]
    fn the_tools_routes_name_the_tools_resource_and_its_models() {
        use crate::users::{TEAMS_MODEL, TOOLS_RESOURCE, USERS_MODEL};
        let models = format!("/projects/{{project}}/{{environment}}/{TOOLS_RESOURCE}/models");
        assert_eq!(LIST_USERS.path(), format!("{models}/{USERS_MODEL}"));
        assert_eq!(GET_USER.path(), format!("{models}/{USERS_MODEL}/{{pk}}"));
        assert_eq!(LIST_TEAMS.path(), format!("{models}/{TEAMS_MODEL}"));
        assert_eq!(GET_TEAM.path(), format!("{models}/{TEAMS_MODEL}/{{pk}}"));
    }

    #[test]
    fn methods_are_named_upper_case() {
        assert_eq!(Method::Patch.to_string(), "PATCH");
        assert_eq!(Method::Delete.as_str(), "DELETE");
    }
}
