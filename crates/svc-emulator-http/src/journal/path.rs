//! What a request's path names: the project, environment, resource and model, read from the
//! route tables the router serves (svc-model's, [`svc_model::routes`]): each `{project}`,
//! `{environment}`, `{resource}` and `{model}` of the route the path has the shape of, and
//! around a literal `models`, the resource before it and the model after it
//! (`__svc_app__/models/users`).
//!
//! A path of no route (a 404) under `/projects/{project}/{environment}/...` or
//! `/api/projects/{project}[/{environment}/...]` names its project and environment; anything
//! else (`/_emulator/...`, unknown paths) names nothing.

use std::borrow::Cow;

use percent_encoding::percent_decode_str;
use svc_model::routes::{self, Host, Segment};

/// The names in a path, each still percent-encoded as the path carries it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Named<'a> {
    pub(crate) project: Option<&'a str>,
    pub(crate) environment: Option<&'a str>,
    pub(crate) resource: Option<&'a str>,
    pub(crate) model: Option<&'a str>,
}

/// Reads the names of `path` (the path alone, without its query).
pub(crate) fn names(path: &str) -> Named<'_> {
    let (rest, host) = match path.strip_prefix("/api/") {
        Some(_) => (&path[4..], Host::App),
        None => (path, Host::Data),
    };
    let route = routes::ALL
        .iter()
        .filter(|route| route.host() == host)
        .find_map(|route| route.captures(rest));
    let Some(captures) = route else {
        return prefix_names(rest);
    };
    let mut named = Named::default();
    let mut previous = None;
    let mut after_models = false;
    for (template, segment) in captures {
        match template {
            Segment::Param("project") => named.project = Some(segment),
            Segment::Param("environment") => named.environment = Some(segment),
            Segment::Param("resource") => named.resource = Some(segment),
            Segment::Param("model") => named.model = Some(segment),
            Segment::Literal("models") => named.resource = named.resource.or(previous),
            Segment::Literal(_) if after_models => named.model = named.model.or(Some(segment)),
            _ => {}
        }
        after_models = template == Segment::Literal("models");
        previous = Some(segment);
    }
    named
}

/// The project and environment of a path that no route has: `/projects/{project}[/{environment}/...]`.
fn prefix_names(path: &str) -> Named<'_> {
    let Some(rest) = path.strip_prefix("/projects/") else {
        return Named::default();
    };
    let mut segments = rest.split('/');
    let mut next = || segments.next().filter(|s| !s.is_empty());
    match next() {
        Some(project) => Named {
            project: Some(project),
            environment: next(),
            ..Named::default()
        },
        None => Named::default(),
    }
}

/// The project segment of `path` alone, still percent-encoded: [`names`]`(path).project`,
/// found with less work (it runs on every request).
pub(crate) fn project(path: &str) -> Option<&str> {
    let rest = path
        .strip_prefix("/projects/")
        .or_else(|| path.strip_prefix("/api/projects/"))?;
    let end = rest.bytes().position(|b| b == b'/').unwrap_or(rest.len());
    let project = &rest[..end];
    (!project.is_empty()).then_some(project)
}

/// A path segment, percent-decoded (invalid UTF-8 replaced).
pub(crate) fn decode(segment: &str) -> Cow<'_, str> {
    if !segment.as_bytes().contains(&b'%') {
        return Cow::Borrowed(segment);
    }
    percent_decode_str(segment).decode_utf8_lossy()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(path: &str) -> [Option<&str>; 4] {
        let n = names(path);
        [n.project, n.environment, n.resource, n.model]
    }

    #[test]
    fn data_host_shapes() {
        let p = "/projects/demo/prod/shop/models/orders";
        assert_eq!(
            all(p),
            [Some("demo"), Some("prod"), Some("shop"), Some("orders")]
        );
        assert_eq!(all(&format!("{p}/")), all(p));
        assert_eq!(all(&format!("{p}/12")), all(p));
        assert_eq!(all(&format!("{p}/aggregate")), all(p));
        assert_eq!(
            all("/projects/demo/prod/shop/sql_get_query/"),
            [Some("demo"), Some("prod"), Some("shop"), None]
        );
        assert_eq!(
            all("/projects/demo/prod/shop/actions/refund"),
            [Some("demo"), Some("prod"), Some("shop"), None]
        );
        // A workflow's run names the project only: its steps may touch several resources.
        assert_eq!(
            all("/projects/demo/prod/workflows/wf-refund/run"),
            [Some("demo"), Some("prod"), None, None]
        );
        assert_eq!(
            all("/projects/demo/prod/__svc_app__/reload"),
            [Some("demo"), Some("prod"), Some("__svc_app__"), None]
        );
        assert_eq!(
            all("/projects/demo/prod/__svc_app__/models/users/u1"),
            [
                Some("demo"),
                Some("prod"),
                Some("__svc_app__"),
                Some("users")
            ]
        );
        // The account routes name no resource; neither do unknown tails.
        assert_eq!(
            all("/projects/demo/prod/auth/login"),
            [Some("demo"), Some("prod"), None, None]
        );
        assert_eq!(
            all("/projects/demo/prod/shop/tables/x"),
            [Some("demo"), Some("prod"), None, None]
        );
        // A resource named `auth` still names its models.
        assert_eq!(
            all("/projects/demo/prod/auth/models/m"),
            [Some("demo"), Some("prod"), Some("auth"), Some("m")]
        );
        assert_eq!(all("/projects/demo"), [Some("demo"), None, None, None]);
        // No route has an empty model: the path names what its prefix does.
        assert_eq!(
            all("/projects/demo/prod/shop/models/"),
            [Some("demo"), Some("prod"), None, None]
        );
    }

    #[test]
    fn application_host_shapes() {
        assert_eq!(all("/api/projects/demo"), [Some("demo"), None, None, None]);
        assert_eq!(all("/api/projects/demo/"), [Some("demo"), None, None, None]);
        assert_eq!(
            all("/api/projects/demo/prod/view_settings/abc"),
            [Some("demo"), Some("prod"), None, None]
        );
    }

    #[test]
    fn the_project_alone_is_the_same_as_in_all_names() {
        for path in [
            "/projects/demo/prod/shop/models/orders",
            "/projects/demo",
            "/projects/demo/",
            "/projects/",
            "/projects//x",
            "/api/projects/a%20b/prod/view_settings",
            "/api/projects/",
            "/api/proxy_request",
            "/",
        ] {
            assert_eq!(project(path), names(path).project, "{path}");
        }
    }

    #[test]
    fn other_paths_name_nothing() {
        for path in [
            "/",
            "/api/proxy_request",
            "/projects/",
            "/projects//prod/shop/models/orders",
            "/api/projects/",
            "/project/demo/prod/shop/models/orders",
            "/_emulator/projects/demo/requests",
        ] {
            assert_eq!(names(path), Named::default(), "{path}");
        }
    }

    #[test]
    fn segments_stay_encoded_until_decoded() {
        let n = names("/projects/demo/prod/my%20shop/models/a%2Fb");
        assert_eq!(n.resource, Some("my%20shop"));
        assert_eq!(n.model.map(decode).as_deref(), Some("a/b"));
        assert_eq!(decode("%FF"), "\u{FFFD}");
    }
}
