//! Building request URLs from svc-model's route table: every value is one percent-encoded
//! path segment, every query value is encoded, so no user text can change the path or add
//! parameters.

use svc_model::records::wire::encode_component;
use svc_model::routes::{Host, Route, Segment};

use crate::client::Client;
use crate::error::Result;

/// An absolute URL under construction.
#[derive(Debug, Clone)]
pub(crate) struct Url {
    buf: String,
    has_query: bool,
}

impl Url {
    pub(crate) fn new(base: &str) -> Self {
        // Room for the path and a short query, so that building it seldom reallocates.
        let mut buf = String::with_capacity(base.len() + 128);
        buf.push_str(base);
        Self {
            buf,
            has_query: false,
        }
    }

    /// Appends `/` and a literal segment, encoding it.
    #[inline]
    pub(crate) fn segment(mut self, segment: &str) -> Self {
        debug_assert!(!self.has_query);
        self.buf.push('/');
        push_encoded(&mut self.buf, segment);
        self
    }

    /// Appends `route`'s template after its first `skip` segments (those of a prepared
    /// prefix): each literal as it is (the table's literals are unreserved), each `{name}` as
    /// `value(name)`, encoded; then the template's trailing `/`, if it has one.
    #[inline]
    pub(crate) fn route<'v>(
        mut self,
        route: &Route,
        skip: usize,
        value: impl Fn(&'static str) -> &'v str,
    ) -> Self {
        debug_assert!(!self.has_query);
        for segment in route.segments().get(skip..).unwrap_or_default() {
            self.buf.push('/');
            match *segment {
                Segment::Literal(text) => self.buf.push_str(text),
                Segment::Param(name) => push_encoded(&mut self.buf, value(name)),
            }
        }
        if route.trailing_slash() {
            self.buf.push('/');
        }
        self
    }

    /// Adds `key=value` to the query, encoding both.
    pub(crate) fn query(mut self, key: &str, value: &str) -> Self {
        self.buf.push(if self.has_query { '&' } else { '?' });
        self.has_query = true;
        push_encoded(&mut self.buf, key);
        self.buf.push('=');
        push_encoded(&mut self.buf, value);
        self
    }

    pub(crate) fn build(self) -> String {
        self.buf
    }
}

/// Appends `text` percent-encoded as `encode_segment` does (svc-model's [`encode_component`]:
/// everything but RFC 3986's unreserved characters). Text made only of unreserved characters,
/// as most names, keys and values are, is appended as it is, without building an encoded copy
/// first.
fn push_encoded(buf: &mut String, text: &str) {
    if text.bytes().all(|b| UNRESERVED[usize::from(b)]) {
        buf.push_str(text);
    } else {
        buf.push_str(&encode_component(text));
    }
}

/// RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`), by byte: one load per byte where
/// the tests they stand for take several (this runs on every segment of every URL).
const UNRESERVED: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~');
        b += 1;
    }
    table
};

/// How many segments of a data host route the prepared prefix holds:
/// `projects/{project}/{environment}`.
const DATA_PREFIX: usize = 3;
/// How many segments of an application host route the prepared prefix holds:
/// `projects/{project}`.
const APP_PREFIX: usize = 2;

impl Client {
    /// `route`'s URL on the data host, in the client's project and environment, each other
    /// value of its template given by `value` (by name).
    pub(crate) fn data_route<'v>(
        &self,
        route: &Route,
        value: impl Fn(&'static str) -> &'v str,
    ) -> Result<Url> {
        debug_assert_eq!(route.host(), Host::Data);
        Ok(self.data_url()?.route(route, DATA_PREFIX, value))
    }

    /// `route`'s URL on the application host, in the client's project, each other value of
    /// its template given by `value` (by name).
    #[cfg(feature = "pages")]
    pub(crate) fn app_project_route<'v>(
        &self,
        route: &Route,
        value: impl Fn(&'static str) -> &'v str,
    ) -> Result<Url> {
        debug_assert_eq!(route.host(), Host::App);
        Ok(self.app_project_url()?.route(route, APP_PREFIX, value))
    }

    /// `route`'s URL on the application host, every value of its template given by `value`.
    #[cfg(any(feature = "projects", feature = "proxy"))]
    pub(crate) fn app_route<'v>(
        &self,
        route: &Route,
        value: impl Fn(&'static str) -> &'v str,
    ) -> Url {
        debug_assert_eq!(route.host(), Host::App);
        Url::new(self.app_base_url()).route(route, 0, value)
    }

    /// `{app_base_url}/projects/{project}`.
    fn app_project_url(&self) -> Result<Url> {
        if let Some(prefix) = self.inner.sender.prepared.app_prefix() {
            return Ok(Url::new(prefix));
        }
        let project = self.project()?;
        Ok(Url::new(self.app_base_url())
            .segment("projects")
            .segment(project.as_str()))
    }

    /// `{api_base_url}/projects/{project}/{environment}`.
    fn data_url(&self) -> Result<Url> {
        if let Some(prefix) = self.inner.sender.prepared.data_prefix() {
            return Ok(Url::new(prefix));
        }
        let project = self.project()?;
        let environment = self.environment()?;
        Ok(Url::new(self.api_base_url())
            .segment("projects")
            .segment(project.as_str())
            .segment(environment.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_model::ident::encode_segment;
    use svc_model::routes;

    #[test]
    fn values_and_query_are_encoded() {
        let url = Url::new("http://h/api")
            .route(&routes::GET_PAGE, 0, |name| match name {
                "uid" => "a/b",
                _ => name,
            })
            .query("f__in", "x,y&z=1")
            .query("q", "é")
            .build();
        assert_eq!(
            url,
            "http://h/api/projects/project/environment/view_settings/a%2Fb/?f__in=x%2Cy%26z%3D1&q=%C3%A9"
        );
    }

    #[test]
    fn every_route_is_built_as_its_template_reads() {
        for route in routes::ALL {
            let url = Url::new("").route(route, 0, |name| name).build();
            assert_eq!(url, route.path().replace(['{', '}'], ""), "{route:?}");
        }
    }

    #[test]
    fn the_prepared_prefixes_are_the_first_segments_of_their_routes() {
        use svc_model::routes::Segment::{Literal, Param};
        for route in routes::ALL {
            let first: Vec<_> = route.segments().iter().take(DATA_PREFIX).copied().collect();
            match route.host() {
                Host::Data => assert_eq!(
                    first,
                    [Literal("projects"), Param("project"), Param("environment")],
                    "{route:?}"
                ),
                // The project's own route and the proxy are built from the base URL alone.
                Host::App if [routes::GET_PROJECT, routes::PROXY_REQUEST].contains(route) => {}
                Host::App => assert_eq!(
                    first[..APP_PREFIX],
                    [Literal("projects"), Param("project")],
                    "{route:?}"
                ),
            }
        }
    }

    #[test]
    fn the_unreserved_shortcut_encodes_as_encode_segment_does() {
        let samples = [
            "",
            "projects",
            "view_settings",
            "A-z_0.9~",
            "_per_page",
            "-total,id",
            "a b",
            "100%",
            "é",
            "a/b",
            "..",
        ];
        let all_ascii: String = (0u8..128).map(char::from).collect();
        // Each character alone too, so that the table is checked entry by entry.
        let singles: Vec<String> = (0u8..128)
            .map(char::from)
            .chain(['é', 'ÿ', '€'])
            .map(String::from)
            .collect();
        let singles = singles.iter().map(String::as_str);
        for text in samples
            .iter()
            .copied()
            .chain([all_ascii.as_str()])
            .chain(singles)
        {
            let mut buf = String::new();
            push_encoded(&mut buf, text);
            assert_eq!(buf, encode_segment(text), "{text:?}");
        }
    }
}
