//! Stubs as declared: which requests ([`StubRequest`]), what answer ([`StubResponse`]) and
//! when (`after`, `times`). The same JSON in a project's `"stubs"` of the config file, in the
//! body of `POST /_emulator/projects/{project}/stubs` and in `svc emulator stub`. The HTTP layer
//! answers with them (`svc_emulator_http::stubs`).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a stub's JSON holds, for the messages about one that is not a stub (the route's, the
/// command line's).
pub const STUB_SHAPE: &str = r#"a stub is {"request": {"method", "path", "path_prefix", "query", "environment", "resource", "model", "body_includes"}, "response": {"status", "headers", "json" or "body", "delay_ms"} or {"connection": "drop" or "reset"}, "after", "times"}"#;

/// The longest delay a stub may hold its answer back: ten minutes.
pub const MAX_STUB_DELAY: Duration = Duration::from_secs(600);

/// One stub: requests that match `request` get `response`, but the first `after` of them, and
/// only `times` of them when set (else every one after those).
///
/// ```
/// use svc_emulator::StubConfig;
///
/// let stub: StubConfig = serde_json::from_str(r#"{
///     "request": {"method": "GET", "model": "orders"},
///     "response": {"status": 503, "headers": {"Retry-After": "2"}, "json": {"error": "busy"}},
///     "after": 2,
///     "times": 1
/// }"#)?;
/// assert_eq!(stub.check(), Ok(()));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct StubConfig {
    /// Which requests: every condition set must hold.
    #[serde(default)]
    pub request: StubRequest,
    /// The answer they get.
    pub response: StubResponse,
    /// How many matching requests pass untouched first (to a later stub, or to the data).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub after: u64,
    /// How many matching requests it answers (after `after`); `None`: every one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u64>,
}

/// Which requests a stub answers: the conditions of the journal's
/// [`RequestMatcher`](../svc_emulator/struct.RequestMatcher.html) that hold before there is an answer (so no
/// `status` and no `since`). None set: every request of the project.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct StubRequest {
    /// The method, e.g. `GET` (ASCII case ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The exact path, as sent (percent-encoded), a trailing `/` ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The start of the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_prefix: Option<String>,
    /// Query parameters the request must carry, with these values (decoded).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub query: BTreeMap<String, String>,
    /// The environment the path names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
    /// The resource the path names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The model the path names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A JSON body that includes these values (objects key by key, recursively).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_includes: Option<Value>,
}

/// What a stub answers: a status, headers and a body, after a delay; or no answer at all, the
/// connection dropped or reset. Built in code like wiremock's `ResponseTemplate`, or read from
/// JSON (`{"status", "headers", "json" | "body", "delay_ms", "connection": "drop" | "reset"}`).
///
/// ```
/// use std::time::Duration;
/// use serde_json::json;
/// use svc_emulator::StubResponse;
///
/// let busy = StubResponse::new(429)
///     .header("Retry-After", "2")
///     .json(json!({"error": "Too many requests."}));
/// let slow = StubResponse::new(200).text("late").delay(Duration::from_secs(2));
/// let gone = StubResponse::reset_connection();
/// assert_eq!(busy.status_code(), Some(429));
/// assert_eq!(gone.status_code(), None);
/// # let _ = slow;
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StubResponse {
    #[serde(default = "ok", skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    headers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    json: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    body: Option<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    delay_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    connection: Option<Cut>,
}

/// How a stub ends a connection instead of answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Cut {
    /// Closed without an answer (a FIN): the client reads an early end of the stream.
    Drop,
    /// Reset (an RST): the client reads "connection reset by peer".
    Reset,
}

fn ok() -> Option<u16> {
    Some(200)
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl StubResponse {
    /// An answer with this status code and no body.
    pub fn new(status: u16) -> Self {
        Self {
            status: Some(status),
            headers: BTreeMap::new(),
            json: None,
            body: None,
            delay_ms: 0,
            connection: None,
        }
    }

    /// No answer: the connection is closed once the request has arrived.
    pub fn drop_connection() -> Self {
        Self::cut(Cut::Drop)
    }

    /// No answer: the connection is reset (TCP RST), as a crashed server's or a proxy's.
    pub fn reset_connection() -> Self {
        Self::cut(Cut::Reset)
    }

    fn cut(cut: Cut) -> Self {
        Self {
            status: None,
            connection: Some(cut),
            ..Self::new(200)
        }
    }

    /// Adds a header (a name given twice keeps the last value). Not a framing header, nor one
    /// that leaves something in a browser or moves it on by itself (`Set-Cookie`,
    /// `Set-Cookie2`, `Refresh`, `Clear-Site-Data`, `Strict-Transport-Security`): the stub is
    /// refused (a 3xx's `Location` is fine). The answer carries a sandboxing
    /// `Content-Security-Policy` and `X-Content-Type-Options: nosniff` whatever its headers say
    /// (a policy given here is sent beside the sandbox, never in its place).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// A JSON body (`Content-Type: application/json` unless a header says otherwise).
    pub fn json(mut self, body: Value) -> Self {
        self.json = Some(body);
        self.body = None;
        self
    }

    /// A text body (`Content-Type: text/plain; charset=utf-8` unless a header says otherwise).
    pub fn text(mut self, body: impl Into<String>) -> Self {
        self.body = Some(body.into());
        self.json = None;
        self
    }

    /// Holds the answer (or the cut) back this long, to the millisecond.
    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// The status code sent; `None` when the connection is dropped or reset instead.
    pub fn status_code(&self) -> Option<u16> {
        match self.connection {
            Some(_) => None,
            None => self.status,
        }
    }

    /// How long the answer is held back.
    pub fn delay_duration(&self) -> Duration {
        Duration::from_millis(self.delay_ms)
    }

    /// The headers of [`header`](Self::header), by name as given.
    pub fn headers(&self) -> &BTreeMap<String, String> {
        &self.headers
    }

    /// The JSON body of [`json`](Self::json), if any.
    pub fn json_body(&self) -> Option<&Value> {
        self.json.as_ref()
    }

    /// The text body of [`text`](Self::text), if any.
    pub fn text_body(&self) -> Option<&str> {
        self.body.as_deref()
    }

    /// Whether the connection is closed instead of answered
    /// ([`drop_connection`](Self::drop_connection)).
    pub fn drops_connection(&self) -> bool {
        self.connection == Some(Cut::Drop)
    }

    /// Whether the connection is reset instead of answered
    /// ([`reset_connection`](Self::reset_connection)).
    pub fn resets_connection(&self) -> bool {
        self.connection == Some(Cut::Reset)
    }

    /// What is wrong with the answer, if anything, as a sentence that says what to do
    /// ([`StubConfig::check`] checks it with the rest of the stub).
    fn check(&self) -> Result<(), String> {
        if self.delay_duration() > MAX_STUB_DELAY {
            return Err(format!(
                "a stub's delay is at most {} seconds (delay_ms {} or less)",
                MAX_STUB_DELAY.as_secs(),
                MAX_STUB_DELAY.as_millis()
            ));
        }
        if self.json.is_some() && self.body.is_some() {
            return Err("give the answer's body as `json` or as `body` (text), not both".into());
        }
        if let Some(cut) = self.connection {
            let name = match cut {
                Cut::Drop => "drop",
                Cut::Reset => "reset",
            };
            if self.status != Some(200) && self.status.is_some()
                || !self.headers.is_empty()
                || self.json.is_some()
                || self.body.is_some()
            {
                return Err(format!(
                    "a stub with \"connection\": \"{name}\" sends no answer: leave out its status, headers and body"
                ));
            }
            return Ok(());
        }
        match self.status {
            Some(204 | 304) if self.json.is_some() || self.body.is_some() => {
                return Err(format!(
                    "a {} answer has no body: leave out its `json` and `body`",
                    self.status.unwrap_or(204)
                ));
            }
            Some(200..=599) => {}
            Some(other) => {
                return Err(format!(
                    "a stub's status is a final status code from 200 to 599, not {other}"
                ));
            }
            None => return Err("a stub's answer needs a status, e.g. 500".into()),
        }
        for (name, value) in &self.headers {
            check_header(name, value)?;
        }
        Ok(())
    }
}

/// Header names hyper writes itself, which a stub may not set.
const FRAMING_HEADERS: [&str; 4] = [
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
];

/// The start of the names of the emulator's own cookies (the web page's session cookie is
/// `svc_emulator_ui_{port}`). A stub sets no cookie at all, these included.
pub const EMULATOR_COOKIE_PREFIX: &str = "svc_emulator_";

/// A header name is an RFC 9110 token; a value is visible ASCII, spaces and tabs.
///
/// A stub answers on the web page's origin, and a browser may open its answer, so the answer
/// leaves nothing in the browser and never moves it on by itself:
///
/// - no `Set-Cookie` nor `Set-Cookie2`, whatever the cookie's name: the API sets none, and a
///   browser keeps a stub's cookie in the jar of the emulator's host, which every port shares
///   with the page's session cookie (a chain of stubs could fill it, evicting the session, or
///   make every page request too big to answer);
/// - no `Refresh`: a browser follows it even in the sandboxed document a stub's answer is, so
///   stubs could drive it from one to the next with no click (a `<meta http-equiv="refresh">`
///   in the body is not followed there, and a `Location` only moves a 3xx's request along);
/// - no `Clear-Site-Data`, which would clear the page's cookie;
/// - no `Strict-Transport-Security`, which a browser keeps for the host name, every port
///   included, over TLS.
fn check_header(name: &str, value: &str) -> Result<(), String> {
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        return Err(format!(
            "{name:?} is not a header name: letters, digits and !#$%&'*+-.^_`|~ only"
        ));
    }
    let lower = name.to_ascii_lowercase();
    if FRAMING_HEADERS.contains(&lower.as_str()) {
        return Err(format!(
            "a stub cannot set {name}: the server writes the framing headers itself"
        ));
    }
    if !value
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
    {
        return Err(format!(
            "the value of header {name} holds a character a header cannot carry (a line break, a control character or non-ASCII text)"
        ));
    }
    match lower.as_str() {
        "set-cookie" | "set-cookie2" => Err(format!(
            "a stub sets no cookie, so it cannot send {name}: the API sets none, and a stub's cookie would land in the browser's jar of the emulator's host, beside the web page's (for every port); test your client's cookie handling against a server of your own"
        )),
        "refresh" => Err(format!(
            "a stub never makes a browser navigate by itself, so it cannot send {name}: a browser follows it from a stub's answer to the next; to test a redirect, answer a 3xx with a Location header"
        )),
        "clear-site-data" => Err(format!(
            "a stub cannot send {name}: it would clear the emulator's own cookies, and sign its web page out"
        )),
        "strict-transport-security" => Err(format!(
            "a stub cannot send {name}: a browser would keep it for the emulator's host name, every port included, and stop reaching the emulators served there over plain HTTP; the API sends none"
        )),
        _ => Ok(()),
    }
}

impl StubConfig {
    /// A stub answering every request `request` matches with `response`.
    pub fn new(request: StubRequest, response: StubResponse) -> Self {
        Self {
            request,
            response,
            after: 0,
            times: None,
        }
    }

    /// What is wrong with the stub, if anything, as a sentence that says what to do.
    pub fn check(&self) -> Result<(), String> {
        if self.times == Some(0) {
            return Err(
                "a stub's `times` is at least 1 (leave it out to answer every match)".into(),
            );
        }
        if let Some(method) = &self.request.method
            && (method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()))
        {
            return Err(format!(
                "{method:?} is not a method: letters only, e.g. POST"
            ));
        }
        for (name, path) in [
            ("path", &self.request.path),
            ("path_prefix", &self.request.path_prefix),
        ] {
            if let Some(path) = path
                && !path.starts_with('/')
            {
                return Err(format!(
                    "a stub's {name} starts with `/`, e.g. /projects/demo/prod/shop/models/orders"
                ));
            }
        }
        self.response.check()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_answer_reads_back_as_built_and_as_read_from_json() {
        let busy = StubResponse::new(429)
            .header("Retry-After", "2")
            .json(json!({"error": "busy"}))
            .delay(Duration::from_millis(20));
        assert_eq!(busy.status_code(), Some(429));
        assert_eq!(busy.headers()["Retry-After"], "2");
        assert_eq!(busy.json_body(), Some(&json!({"error": "busy"})));
        assert_eq!(busy.text_body(), None);
        assert_eq!(busy.delay_duration(), Duration::from_millis(20));
        assert!(!busy.drops_connection() && !busy.resets_connection());
        let text = StubResponse::new(200).json(json!(1)).text("late");
        assert_eq!((text.json_body(), text.text_body()), (None, Some("late")));
        let dropped: StubResponse = serde_json::from_str(r#"{"connection": "drop"}"#).unwrap();
        assert!(dropped.drops_connection() && !dropped.resets_connection());
        assert_eq!(dropped.status_code(), None);
        assert!(StubResponse::drop_connection().drops_connection());
        assert!(StubResponse::reset_connection().resets_connection());
        assert_eq!(StubResponse::reset_connection().status_code(), None);
    }
}
