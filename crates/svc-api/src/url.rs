//! Building request URLs: every identifier is one percent-encoded path segment, every query
//! value is encoded, so no user text can change the path or add parameters.

use svc_model::records::wire::encode_component;

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

    /// Appends `/` and an already encoded segment (from an identifier's `encoded()`).
    #[inline]
    pub(crate) fn encoded_segment(mut self, segment: &str) -> Self {
        debug_assert!(!self.has_query);
        self.buf.push('/');
        self.buf.push_str(segment);
        self
    }

    /// Appends `/` and a literal segment, encoding it.
    #[inline]
    pub(crate) fn segment(mut self, segment: &str) -> Self {
        debug_assert!(!self.has_query);
        self.buf.push('/');
        push_encoded(&mut self.buf, segment);
        self
    }

    /// Ends the path with `/` (the application host's paths do).
    pub(crate) fn slash(mut self) -> Self {
        self.buf.push('/');
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

impl Client {
    /// `{app_base_url}/projects/{project}`.
    pub(crate) fn app_project_url(&self) -> Result<Url> {
        if let Some(prefix) = self.inner.sender.prepared.app_prefix() {
            return Ok(Url::new(prefix));
        }
        let project = self.project()?;
        Ok(Url::new(self.app_base_url())
            .segment("projects")
            .segment(project.as_str()))
    }

    /// `{api_base_url}/projects/{project}/{environment}`.
    pub(crate) fn data_url(&self) -> Result<Url> {
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

    #[test]
    fn segments_and_query_are_encoded() {
        let url = Url::new("http://h/api")
            .segment("a/b")
            .slash()
            .query("f__in", "x,y&z=1")
            .query("q", "é")
            .build();
        assert_eq!(url, "http://h/api/a%2Fb/?f__in=x%2Cy%26z%3D1&q=%C3%A9");
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
