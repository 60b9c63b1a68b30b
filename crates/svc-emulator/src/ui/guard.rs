//! Who may use the page: the sign-in token of this run, the session cookie it is exchanged for,
//! the host names the page answers under, and the origin a change must come from.
//!
//! - **Sign-in.** The emulator makes a random token at start and prints it in `ui_url`
//!   (`.../_emulator/ui/?token=...`). Any page address with `?token=` of this run answers `303`
//!   to the same address without it, setting a session cookie (`HttpOnly`, `SameSite=Strict`,
//!   `Path=/_emulator/ui`): the token leaves the address bar and the history at once. The path
//!   is exactly what `Front` serves as the page's (its routes and relay), so a browser never
//!   sends the cookie to an API path, where a stub may answer; and a stub sets no cookie at all
//!   (svc-emulator-state refuses a stub's `Set-Cookie`, `Refresh` and `Clear-Site-Data`: a chain
//!   of them could evict this one from the jar), nor runs on the page's origin (its answers are
//!   sandboxed: `svc_emulator_http::stubs::STUB_POLICY`).
//! - **Host.** The page answers only under loopback names (`localhost`, `127.0.0.1`, `[::1]`),
//!   the address it listens on, and the names given with `--ui-host`: a page of another site
//!   whose name was made to point at this machine (DNS rebinding) gets `403`.
//! - **Origin.** A change (any method but `GET` and `HEAD`) must carry an `Origin` equal to the
//!   page's own (`http://HOST`): a form or a script on another origin (even another port of
//!   the same machine, which `SameSite` does not tell apart) gets `403`.

use std::collections::VecDeque;
use std::sync::Mutex;

use axum::body::Body;
use axum::http::header::{CONTENT_TYPE, COOKIE, HOST, LOCATION, ORIGIN, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, Response, StatusCode, Uri};

use super::PREFIX;

/// The session cookie's name, before the port: cookies ignore ports, so two emulators on one
/// machine each keep their own (`svc_emulator_ui_40123`).
const COOKIE_PREFIX: &str = "svc_emulator_ui_";

/// How many sessions are kept: each sign-in makes one, the oldest is forgotten past this.
const SESSIONS: usize = 64;

/// The page's credentials and the names it answers under.
pub(crate) struct Guard {
    token: String,
    cookie: String,
    hosts: Vec<String>,
    secure: bool,
    sessions: Mutex<VecDeque<String>>,
}

impl Guard {
    /// A guard with a new sign-in token, answering under the loopback names, `listen_host` and
    /// `extra_hosts`, for the emulator on `port`; `secure` when it serves TLS (the cookie is then
    /// `Secure`). An extra name that no `Host` could carry (empty, with a port, an IPv6 address
    /// without brackets) is refused, saying why.
    pub(crate) fn new(
        listen_host: &str,
        port: u16,
        extra_hosts: &[String],
        secure: bool,
    ) -> Result<Self, String> {
        let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        hosts.push(listen_host.to_ascii_lowercase());
        for host in extra_hosts {
            check_host_name(host)?;
            hosts.push(host.to_ascii_lowercase());
        }
        Ok(Self {
            token: random_hex(),
            cookie: format!("{COOKIE_PREFIX}{port}"),
            hosts,
            secure,
            sessions: Mutex::new(VecDeque::new()),
        })
    }

    /// This run's sign-in token.
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// Refuses a request whose `Host` is not one the page answers under.
    pub(crate) fn host(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Refusal> {
        let host = host_of(headers, uri).unwrap_or_default();
        let name = host_name(&host).to_ascii_lowercase();
        if self.hosts.contains(&name) {
            return Ok(());
        }
        Err(Refusal::text(
            StatusCode::FORBIDDEN,
            format!(
                "The emulator's page answers only under the names it serves ({}), not {:?}: \
                 open it by one of them, or start the emulator with --ui-host {} to add this one.",
                self.hosts.join(", "),
                name,
                if name.is_empty() { "NAME" } else { &name }
            ),
        ))
    }

    /// The answer to a sign-in (an address with `?token=` and 64 hex digits): `303` to the
    /// address without it, with a new session, or `401` for a token that is not this run's.
    /// `None` without one: a `token` of another shape is a query of the page's (a filter on a
    /// field named `token`).
    pub(crate) fn sign_in(&self, uri: &Uri) -> Option<Response<Body>> {
        let query = uri.query()?;
        let mut token = None;
        let mut others = Vec::new();
        for pair in query.split('&') {
            match pair.strip_prefix("token=") {
                Some(value) if is_token_shaped(value) => token = Some(value),
                _ if !pair.is_empty() => others.push(pair),
                _ => {}
            }
        }
        let token = token?;
        if !same(token.as_bytes(), self.token.as_bytes()) {
            return Some(text_error(
                StatusCode::UNAUTHORIZED,
                "This sign-in token is not this run's: open the ui_url the emulator printed \
                 when it started (each start makes a new one).",
            ));
        }
        let session = random_hex();
        {
            let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            if sessions.len() == SESSIONS {
                sessions.pop_front();
            }
            sessions.push_back(session.clone());
        }
        let mut location = uri.path().to_owned();
        if !others.is_empty() {
            location.push('?');
            location.push_str(&others.join("&"));
        }
        let secure = if self.secure { "; Secure" } else { "" };
        let cookie = format!(
            "{}={session}; Path={PREFIX}; HttpOnly; SameSite=Strict{secure}",
            self.cookie
        );
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::SEE_OTHER;
        let headers = response.headers_mut();
        // Both are ASCII: a path as received and hex digits.
        if let (Ok(location), Ok(cookie)) = (
            HeaderValue::from_str(&location),
            HeaderValue::from_str(&cookie),
        ) {
            headers.insert(LOCATION, location);
            headers.insert(SET_COOKIE, cookie);
        }
        Some(response)
    }

    /// Refuses a request without a session of this run: a JSON `401` for the page's API, a
    /// page that says how to sign in for the others.
    pub(crate) fn session(&self, headers: &HeaderMap, api: bool) -> Result<(), Refusal> {
        let presented = headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|c| c.trim().strip_prefix(&self.cookie)?.strip_prefix('='));
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let known = presented
            .into_iter()
            .any(|c| sessions.iter().any(|s| same(s.as_bytes(), c.as_bytes())));
        drop(sessions);
        if known {
            return Ok(());
        }
        let message = "Not signed in: open the ui_url the emulator printed when it started \
                       (svc emulator, svc demo --keep-running and svc emulator exec print it).";
        Err(if api {
            Refusal::json(StatusCode::UNAUTHORIZED, message)
        } else {
            Refusal::text(StatusCode::UNAUTHORIZED, message)
        })
    }

    /// Refuses a change whose `Origin` is not the page's own.
    pub(crate) fn origin(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Refusal> {
        let origin = headers.get(ORIGIN).and_then(|v| v.to_str().ok());
        let host = host_of(headers, uri).unwrap_or_default();
        let scheme = if self.secure { "https" } else { "http" };
        let own = format!("{scheme}://{host}");
        match origin {
            Some(origin) if origin.eq_ignore_ascii_case(&own) => Ok(()),
            Some(origin) => Err(Refusal::json(
                StatusCode::FORBIDDEN,
                format!(
                    "Refused: a change from another origin ({origin}); the page's changes come \
                     from {own} only."
                ),
            )),
            None => Err(Refusal::json(
                StatusCode::FORBIDDEN,
                format!(
                    "Refused: a change without an Origin header; the page's changes come from \
                     {own} only."
                ),
            )),
        }
    }
}

/// The `Host` of a request (HTTP/1.1's header, or HTTP/2's `:authority`).
fn host_of(headers: &HeaderMap, uri: &Uri) -> Option<String> {
    headers
        .get(HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| uri.authority().map(|a| a.as_str().to_owned()))
}

/// A host without its port: `127.0.0.1:8080` is `127.0.0.1`, `[::1]:80` is `[::1]`.
fn host_name(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_inclusive(']').next().unwrap_or(host);
    }
    host.split(':').next().unwrap_or(host)
}

/// Whether `value` has the shape of a sign-in token: 64 hex digits.
fn is_token_shaped(value: &str) -> bool {
    value.len() == 64 && value.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Refuses a `--ui-host` name that no `Host` header could carry.
fn check_host_name(name: &str) -> Result<(), String> {
    let ipv6 = name.len() > 2
        && name.starts_with('[')
        && name.ends_with(']')
        && name[1..name.len() - 1]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_');
    if ipv6 || plain {
        return Ok(());
    }
    Err(format!(
        "--ui-host {name:?} is not a host name: give a name or an address without a port \
         (emulator.internal, 192.168.1.20, or an IPv6 address in brackets: [fd00::1])"
    ))
}

/// Compares two secrets in time that depends only on their lengths.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// 64 random hex digits.
fn random_hex() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// A request the guard refuses: its status and words, as JSON for the page's API or as text for
/// an address opened in the browser.
#[derive(Debug)]
pub(crate) struct Refusal {
    status: StatusCode,
    message: String,
    json: bool,
}

impl Refusal {
    fn json(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            json: true,
        }
    }

    fn text(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            json: false,
        }
    }

    /// The answer.
    pub(crate) fn into_response(self) -> Response<Body> {
        match self.json {
            true => json_error(self.status, &self.message),
            false => text_error(self.status, &self.message),
        }
    }
}

/// A refusal in the API's JSON error form.
pub(crate) fn json_error(status: StatusCode, message: &str) -> Response<Body> {
    let code = match status {
        StatusCode::UNAUTHORIZED => "not_authenticated",
        StatusCode::FORBIDDEN => "permission_denied",
        StatusCode::NOT_FOUND => "not_found",
        _ => "invalid",
    };
    let body = serde_json::json!({ "error": message, "error_code": code });
    answer(status, "application/json", body.to_string())
}

/// A refusal as plain text, for an address opened in the browser.
fn text_error(status: StatusCode, message: &str) -> Response<Body> {
    answer(status, "text/plain; charset=utf-8", format!("{message}\n"))
}

fn answer(status: StatusCode, content_type: &'static str, body: String) -> Response<Body> {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard::new("127.0.0.1", 8080, &["dev.example".to_owned()], false).unwrap()
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn uri(s: &str) -> Uri {
        s.parse().unwrap()
    }

    #[test]
    fn the_session_cookie_is_one_a_stub_may_not_set() {
        // svc-emulator-state refuses a stub's Set-Cookie of a name with this prefix.
        assert!(
            COOKIE_PREFIX.starts_with(svc_emulator_state::config::stubs::EMULATOR_COOKIE_PREFIX)
        );
    }

    #[test]
    fn the_page_answers_only_under_its_own_names() {
        let g = guard();
        let u = uri("/_emulator/ui/");
        for ok in [
            "127.0.0.1:8080",
            "localhost:1",
            "LOCALHOST",
            "[::1]:9",
            "dev.example:3000",
        ] {
            assert!(g.host(&headers(&[("host", ok)]), &u).is_ok(), "{ok}");
        }
        for no in [
            "attacker.example:8080",
            "127.0.0.2",
            "",
            "localhost.attacker.example",
        ] {
            let refused = g.host(&headers(&[("host", no)]), &u).unwrap_err();
            assert_eq!(refused.status, StatusCode::FORBIDDEN, "{no}");
        }
        assert!(
            g.host(&HeaderMap::new(), &uri("http://localhost:1/x"))
                .is_ok()
        );
    }

    #[test]
    fn a_sign_in_sets_a_session_and_drops_the_token_from_the_address() {
        let g = guard();
        let answer = g
            .sign_in(&uri(&format!(
                "/_emulator/ui/projects/demo?token={}&a=1",
                g.token()
            )))
            .unwrap();
        assert_eq!(answer.status(), StatusCode::SEE_OTHER);
        assert_eq!(
            answer.headers()[LOCATION],
            "/_emulator/ui/projects/demo?a=1"
        );
        let cookie = answer.headers()[SET_COOKIE].to_str().unwrap().to_owned();
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
        assert!(!cookie.contains(g.token()));
        let pair = cookie.split(';').next().unwrap().to_owned();
        assert!(g.session(&headers(&[("cookie", &pair)]), true).is_ok());
        assert!(
            g.session(&headers(&[("cookie", &format!("x=1; {pair}"))]), true)
                .is_ok()
        );
        // Another value, none, or the token itself: not a session.
        for other in [
            "svc_emulator_ui=00",
            "",
            &format!("svc_emulator_ui={}", g.token()),
        ] {
            let refused = g.session(&headers(&[("cookie", other)]), true).unwrap_err();
            assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
        }
        assert!(g.sign_in(&uri("/_emulator/ui/?a=1")).is_none());
        // A token of another shape is the page's query (a filter on a field named token).
        assert!(g.sign_in(&uri("/_emulator/ui/?token=abc")).is_none());
        let wrong = g
            .sign_in(&uri(&format!("/_emulator/ui/?token={}", "0".repeat(64))))
            .unwrap();
        assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    }

    #[test]
    fn sessions_past_the_cap_forget_the_oldest() {
        let g = guard();
        let sign_in = || {
            let answer = g
                .sign_in(&uri(&format!("/_emulator/ui/?token={}", g.token())))
                .unwrap();
            let cookie = answer.headers()[SET_COOKIE].to_str().unwrap().to_owned();
            cookie.split(';').next().unwrap().to_owned()
        };
        let first = sign_in();
        for _ in 0..SESSIONS {
            sign_in();
        }
        assert!(g.session(&headers(&[("cookie", &first)]), false).is_err());
        assert!(
            g.session(&headers(&[("cookie", &sign_in())]), false)
                .is_ok()
        );
    }

    #[test]
    fn a_change_must_come_from_the_page_s_own_origin() {
        let g = guard();
        let u = uri("/_emulator/ui/api/relay/demo/x");
        let own = headers(&[
            ("host", "127.0.0.1:8080"),
            ("origin", "http://127.0.0.1:8080"),
        ]);
        assert!(g.origin(&own, &u).is_ok());
        // Another port, another name of the same machine, another scheme, an opaque origin.
        for origin in [
            "http://127.0.0.1:9999",
            "http://localhost:8080",
            "https://127.0.0.1:8080",
            "null",
        ] {
            let h = headers(&[("host", "127.0.0.1:8080"), ("origin", origin)]);
            let refused = g.origin(&h, &u).unwrap_err();
            assert_eq!(refused.status, StatusCode::FORBIDDEN, "{origin}");
        }
        let none = headers(&[("host", "127.0.0.1:8080")]);
        assert_eq!(
            g.origin(&none, &u).unwrap_err().status,
            StatusCode::FORBIDDEN
        );
    }

    #[test]
    fn extra_host_names_are_checked() {
        for ok in ["emulator.internal", "192.168.1.20", "[fd00::1]", "my_box"] {
            assert!(check_host_name(ok).is_ok(), "{ok}");
        }
        for no in ["", "a:8080", "fd00::1", "a/b", "[]", "a b"] {
            let message = check_host_name(no).unwrap_err();
            assert!(message.contains("not a host name"), "{no}: {message}");
        }
        assert!(Guard::new("127.0.0.1", 1, &[String::new()], false).is_err());
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
        assert_eq!(random_hex().len(), 64);
        assert_ne!(random_hex(), random_hex());
    }
}
