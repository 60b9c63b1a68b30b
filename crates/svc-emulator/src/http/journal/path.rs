//! What a request's path names: the project, environment, resource and model, read from the
//! path shapes of both hosts (the router's templates):
//!
//! | Path | Names |
//! | --- | --- |
//! | `/projects/{project}/{environment}/{resource}/models/{model}[/...]` | all four |
//! | `/projects/{project}/{environment}/{resource}/sql_get_query`, `.../reload`, `.../actions/{action}` | project, environment, resource |
//! | `/projects/{project}/{environment}/...` (`auth/...`, anything else) | project, environment |
//! | `/api/projects/{project}[/{environment}/...]` | project (and environment) |
//!
//! Anything else (`/api/proxy_request`, unknown paths) names nothing.

use std::borrow::Cow;

use percent_encoding::percent_decode_str;

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
    let (rest, app_host) = if let Some(rest) = path.strip_prefix("/projects/") {
        (rest, false)
    } else if let Some(rest) = path.strip_prefix("/api/projects/") {
        (rest, true)
    } else {
        return Named::default();
    };
    let mut segments = rest.split('/');
    let mut next = || segments.next().filter(|s| !s.is_empty());
    let Some(project) = next() else {
        return Named::default();
    };
    let environment = next();
    if app_host || environment.is_none() {
        return Named {
            project: Some(project),
            environment,
            ..Named::default()
        };
    }
    let resource = next();
    let (resource, model) = match next() {
        Some("models") => (resource, next()),
        Some("sql_get_query" | "reload" | "actions") => (resource, None),
        _ => (None, None),
    };
    Named {
        project: Some(project),
        environment,
        resource,
        model,
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
        assert_eq!(
            all("/projects/demo/prod/shop/models/"),
            [Some("demo"), Some("prod"), Some("shop"), None]
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
