//! What the request journal hides: credentials and secret tokens never appear in it.
//!
//! - Every credential the emulator knows at start (the projects' API keys, the resources' and
//!   tools tokens, the HTTP proxy's secrets), as written and percent-encoded, is replaced by
//!   `***` wherever it appears: in the path, the query, and the captured bodies.
//! - So is any text shaped like a JWT (`eyJ...` `.` `...` `.` `...`): the session, refresh and
//!   service tokens the emulator issues, and anyone else's.
//! - A query parameter, or a JSON key of a captured body, whose name says it holds a secret
//!   ([`is_secret_name`]: password, secret, token, key, auth, ...) has its value replaced by
//!   `***`: a string or a number, and every such value inside an object or array under it (a
//!   boolean, such as `has_password`, tells no secret). In the account routes' bodies, `code` (a reset or email-change code) too.
//! - A body cut at 64 KiB cannot be parsed: its JSON text is scanned for the same secret
//!   keys, and its end is masked when it may begin a secret the cut split (a known secret's
//!   first characters, a JWT begun), so no part of a secret shows either.
//! - Headers are not recorded at all (`Authorization` included).

use std::borrow::Cow;

use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};
use svc_model::records::wire::encode_component;

/// What a secret is replaced by.
pub(crate) const MASK: &str = "***";

/// Replaces the secrets the emulator knows, and JWTs, in journal text.
#[derive(Default)]
pub(crate) struct Redactor {
    /// Each secret as written and percent-encoded, longest first (so that a secret that holds
    /// another is replaced whole).
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field(
                "secrets",
                &format_args!("[{} redacted]", self.secrets.len()),
            )
            .finish()
    }
}

impl Redactor {
    /// A redactor of these secrets (empty ones are ignored).
    pub(crate) fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
        let mut all = Vec::new();
        for secret in secrets.into_iter().filter(|s| !s.is_empty()) {
            let encoded = encode_component(secret);
            if encoded != secret {
                all.push(encoded.into_owned());
            }
            all.push(secret.to_owned());
        }
        all.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        all.dedup();
        Self { secrets: all }
    }

    /// `text` with every known secret and every JWT replaced by [`MASK`].
    pub(crate) fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), MASK));
            }
        }
        match mask_jwts(&out) {
            Cow::Owned(masked) => Cow::Owned(masked),
            Cow::Borrowed(_) => out,
        }
    }

    /// A query string (without `?`): the value of each parameter whose name says it holds a
    /// secret is [`MASK`], then [`text`](Self::text) applies.
    pub(crate) fn query(&self, query: &str) -> String {
        let mut out = String::with_capacity(query.len());
        for (i, pair) in query.split('&').enumerate() {
            if i > 0 {
                out.push('&');
            }
            match pair.split_once('=') {
                Some((name, _)) if is_secret_name(&form_decode(name)) => {
                    out.push_str(name);
                    out.push('=');
                    out.push_str(MASK);
                }
                _ => out.push_str(pair),
            }
        }
        self.text(&out).into_owned()
    }

    /// A captured JSON body, in place: strings and numbers under secret names are [`MASK`]
    /// (also under `also_secret`, names secret in this route only), and [`text`](Self::text)
    /// applies to every other string and to every key.
    pub(crate) fn json(&self, value: &mut Value, also_secret: &[&str]) {
        self.walk(value, false, also_secret);
    }

    fn walk(&self, value: &mut Value, hidden: bool, also_secret: &[&str]) {
        match value {
            Value::Null => {}
            // A flag such as `has_password` tells no secret.
            Value::Bool(_) => {}
            Value::Number(_) if hidden => *value = Value::from(MASK),
            Value::Number(_) => {}
            Value::String(_) if hidden => *value = Value::from(MASK),
            Value::String(s) => {
                if let Cow::Owned(masked) = self.text(s) {
                    *s = masked;
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.walk(item, hidden, also_secret);
                }
            }
            Value::Object(map) => {
                let keys_hold_secrets = map.keys().any(|k| matches!(self.text(k), Cow::Owned(_)));
                if keys_hold_secrets {
                    let old = std::mem::take(map);
                    *map = old
                        .into_iter()
                        .map(|(k, v)| (self.text(&k).into_owned(), v))
                        .collect::<Map<String, Value>>();
                }
                for (key, item) in map.iter_mut() {
                    let secret =
                        hidden || is_secret_name(key) || also_secret.contains(&key.as_str());
                    self.walk(item, secret, also_secret);
                }
            }
        }
    }
}

impl Redactor {
    /// The start of a longer text (a body cut at 64 KiB), redacted: as JSON text when it looks
    /// like JSON (the values of secret keys masked by a lenient scan, since it cannot be
    /// parsed), as a form when it looks like one, else as text; then its end is masked when it
    /// may be the beginning of a secret that the cut split (a known secret's first characters,
    /// a JWT begun).
    pub(crate) fn cut_text(&self, text: &str, also_secret: &[&str]) -> String {
        let trimmed = text.trim_start();
        let shown = if trimmed.starts_with('{') || trimmed.starts_with('[') {
            self.text(&mask_json_text(text, also_secret)).into_owned()
        } else if is_form_like(text) {
            self.query(text)
        } else {
            self.text(text).into_owned()
        };
        let end = self.split_secret_start(&shown);
        if end == shown.len() {
            return shown;
        }
        let mut masked = shown;
        masked.truncate(end);
        masked.push_str(MASK);
        masked
    }

    /// Where the end of `text` may begin a secret that was cut: the earliest start of a suffix
    /// that is a known secret's beginning or a JWT begun (`eyJ` and base64url and dots to the
    /// end); `text.len()` when none.
    fn split_secret_start(&self, text: &str) -> usize {
        let mut cut = text.len();
        for secret in &self.secrets {
            let longest = secret.len().saturating_sub(1).min(text.len());
            let start = (1..=longest)
                .rev()
                .map(|len| text.len() - len)
                .find(|&start| text.is_char_boundary(start) && secret.starts_with(&text[start..]));
            if let Some(start) = start {
                cut = cut.min(start);
            }
        }
        let jwt_begun = text
            .match_indices("eyJ")
            .map(|(start, _)| start)
            .find(|&start| {
                text.as_bytes()[start..]
                    .iter()
                    .all(|b| is_base64url(*b) || *b == b'.')
            });
        cut.min(jwt_begun.unwrap_or(cut))
    }
}

/// Text that looks like `a=1&b=2`: no whitespace, and an `=`.
pub(crate) fn is_form_like(text: &str) -> bool {
    text.contains('=') && !text.chars().any(char::is_whitespace)
}

fn is_base64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// JSON text that may be cut short, with the values of secret keys replaced by [`MASK`]: the
/// strings and numbers under a key that [`is_secret_name`] (or in `also_secret`), and every
/// string and number inside an object or array under one, as [`Redactor::json`] does for
/// parsed JSON. A string cut short is masked too when it is a secret value.
fn mask_json_text(text: &str, also_secret: &[&str]) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    // Whether each open container is under a secret key; and whether the last key was one.
    let mut hidden: Vec<bool> = Vec::new();
    let mut secret_key = false;
    let mut i = 0;
    while i < bytes.len() {
        let inside_hidden = hidden.last().copied().unwrap_or(false);
        match bytes[i] {
            b'"' => {
                let end = string_end(bytes, i + 1);
                let after = skip_whitespace(bytes, end + 1);
                if bytes.get(after) == Some(&b':') {
                    let key = &text[i + 1..end.min(text.len())];
                    secret_key = is_secret_name(key) || also_secret.contains(&key);
                    i = after + 1;
                    continue;
                }
                if secret_key || inside_hidden {
                    out.push_str(&text[copied..=i]);
                    out.push_str(MASK);
                    copied = end.min(text.len());
                }
                secret_key = false;
                i = end + 1;
            }
            b'-' | b'0'..=b'9' => {
                let end = i + bytes[i..]
                    .iter()
                    .take_while(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                    .count();
                if secret_key || inside_hidden {
                    out.push_str(&text[copied..i]);
                    out.push('"');
                    out.push_str(MASK);
                    out.push('"');
                    copied = end;
                }
                secret_key = false;
                i = end;
            }
            b'{' | b'[' => {
                hidden.push(secret_key || inside_hidden);
                secret_key = false;
                i += 1;
            }
            b'}' | b']' => {
                hidden.pop();
                secret_key = false;
                i += 1;
            }
            b't' | b'f' | b'n' => {
                // true, false, null: no secret.
                secret_key = false;
                i += 1;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copied.min(text.len())..]);
    out
}

/// The index of the `"` that ends the string whose content starts at `from` (escapes
/// skipped), or `bytes.len()` when it is cut short.
fn string_end(bytes: &[u8], from: usize) -> usize {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i,
            _ => i += 1,
        }
    }
    bytes.len()
}

fn skip_whitespace(bytes: &[u8], from: usize) -> usize {
    from + bytes
        .get(from..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| b.is_ascii_whitespace())
        .count()
}

/// Whether a parameter or JSON key named `name` holds a secret: its name (before a filter's
/// `__lookup`) contains `password`, `passwd`, `secret`, `credential` or `apikey`/`api_key`/
/// `api-key`, or its last word (words split at `_`, `-`, `.` and camelCase) ends in `token`
/// or `tokens`, or is `key`, `keys`, `auth`, `authorization`, `jwt`, `signature`, `cookie` or
/// `sessionid`. So `password`, `new_password`, `access_token`, `refresh_token`, `apiKey`,
/// `X-Api-Key`, `client_secret` and `token` are secret; `token_type`, `author` and
/// `access_token_expires` are not.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let name = name.split("__").next().unwrap_or(name);
    let lower = name.to_ascii_lowercase();
    const ANYWHERE: [&str; 7] = [
        "password",
        "passwd",
        "secret",
        "credential",
        "apikey",
        "api_key",
        "api-key",
    ];
    if ANYWHERE.iter().any(|w| lower.contains(w)) {
        return true;
    }
    let Some(last) = last_word(name) else {
        return false;
    };
    const LAST: [&str; 8] = [
        "key",
        "keys",
        "auth",
        "authorization",
        "jwt",
        "signature",
        "cookie",
        "sessionid",
    ];
    last.ends_with("token") || last.ends_with("tokens") || LAST.contains(&last.as_str())
}

/// The last word of a name, lowercase: words end at a character that is not a letter or digit,
/// and before an upper-case letter that follows a lower-case one.
fn last_word(name: &str) -> Option<String> {
    let name = name.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    let mut start = 0;
    let mut previous_lower = false;
    for (i, c) in name.char_indices() {
        if !c.is_ascii_alphanumeric() {
            start = i + c.len_utf8();
            previous_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && previous_lower {
            start = i;
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
    }
    let word = &name[start..];
    (!word.is_empty()).then(|| word.to_ascii_lowercase())
}

/// A query component as a form decodes it: `+` is a space, then percent-decoding.
fn form_decode(text: &str) -> String {
    let spaced = text.replace('+', " ");
    percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
}

/// `text` with every JWT-shaped run (`eyJ` and base64url, `.`, base64url, `.`, base64url)
/// replaced by [`MASK`].
fn mask_jwts(text: &str) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = text[from..].find("eyJ") {
        let start = from + found;
        match jwt_len(&text.as_bytes()[start..]) {
            Some(len) => {
                let masked = out.get_or_insert_with(|| String::with_capacity(text.len()));
                masked.push_str(&text[copied..start]);
                masked.push_str(MASK);
                copied = start + len;
                from = copied;
            }
            None => from = start + 3,
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut masked) => {
            masked.push_str(&text[copied..]);
            Cow::Owned(masked)
        }
    }
}

/// The length of the JWT at the start of `bytes`, if one is there.
fn jwt_len(bytes: &[u8]) -> Option<usize> {
    let run = |from: usize| {
        bytes
            .get(from..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| is_base64url(**b))
            .count()
    };
    let header = run(0);
    if bytes.get(header) != Some(&b'.') {
        return None;
    }
    let payload = run(header + 1);
    let second_dot = header + 1 + payload;
    if payload == 0 || bytes.get(second_dot) != Some(&b'.') {
        return None;
    }
    Some(second_dot + 1 + run(second_dot + 1))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const JWT: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJl-_x";

    #[test]
    fn secret_names() {
        for name in [
            "password",
            "new_password",
            "current_password",
            "token",
            "access_token",
            "refresh_token",
            "accessToken",
            "authtoken",
            "api_key",
            "apiKey",
            "X-Api-Key",
            "key",
            "secret",
            "client_secret",
            "secret_tokens",
            "auth",
            "authorization",
            "jwt",
            "token__in",
            "password__icontains",
            "SESSIONID",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "name",
            "author",
            "token_type",
            "access_token_expires",
            "monkey",
            "keyboard",
            "total__gte",
            "_page",
            "email",
            "",
            "__",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn known_secrets_and_jwts_are_masked_in_text() {
        let r = Redactor::new(["svc_key_abc", "tok/with space", "", "svc_key_abcdef"]);
        assert_eq!(r.text("a svc_key_abcdef b svc_key_abc"), "a *** b ***");
        assert_eq!(r.text("/x/tok%2Fwith%20space/y"), "/x/***/y");
        assert_eq!(r.text("tok/with space"), "***");
        assert!(matches!(r.text("nothing here"), Cow::Borrowed(_)));
        assert_eq!(r.text(&format!("JWT {JWT} and more")), "JWT *** and more");
        assert_eq!(r.text(&format!("{JWT},{JWT}")), "***,***");
        // Not a JWT: no second dot, or no payload.
        assert_eq!(r.text("eyJabc.def"), "eyJabc.def");
        assert_eq!(r.text("eyJabc..x"), "eyJabc..x");
        assert_eq!(r.text("café eyJ"), "café eyJ");
        assert_eq!(r.text("eyJa.b."), "***");
    }

    #[test]
    fn cut_json_text_hides_what_parsed_json_would() {
        let r = Redactor::new(["svc_key_abcdef"]);
        let whole = json!({
            "name": "a\\\"b",
            "password": "p\"w",
            "pin": -12.5e3,
            "token": {"access_token": "x", "n": 1, "ok": true, "list": ["y", null]},
            "api_keys": ["k1", {"k": "k2"}],
            "flag": false,
            "items": [{"secret": "s", "other": "o"}]
        })
        .to_string();
        let mut parsed: Value = serde_json::from_str(&whole).unwrap();
        r.json(&mut parsed, &[]);
        let scanned: Value = serde_json::from_str(&r.cut_text(&whole, &[])).unwrap();
        assert_eq!(scanned, parsed);
        // Cut inside a secret value, a secret key's name, or a known secret.
        assert_eq!(
            r.cut_text(r#"{"a": 1, "password": "hunt"#, &[]),
            r#"{"a": 1, "password": "***"#
        );
        assert_eq!(
            r.cut_text(r#"[{"code": "12"#, &["code"]),
            r#"[{"code": "***"#
        );
        assert_eq!(
            r.cut_text(r#"{"note": "svc_key_ab"#, &[]),
            r#"{"note": "***"#
        );
        assert_eq!(r.cut_text("plain svc_k", &[]), "plain ***");
        assert_eq!(r.cut_text("see eyJhbGc.eyJzdWIi", &[]), "see ***");
        assert_eq!(r.cut_text("nothing to hide", &[]), "nothing to hide");
        assert_eq!(
            r.cut_text("user=a&password=b&x=svc_key", &[]),
            "user=a&password=***&x=***"
        );
    }

    #[test]
    fn queries_hide_secret_parameters() {
        let r = Redactor::new(["svc_key_abc"]);
        assert_eq!(
            r.query("name=ada&api_key=x&access_token=y&token_type=Bearer&q=svc_key_abc"),
            "name=ada&api_key=***&access_token=***&token_type=Bearer&q=***"
        );
        assert_eq!(
            r.query("pass%77ord=x&flag&key="),
            "pass%77ord=***&flag&key=***"
        );
        assert_eq!(r.query(&format!("t={JWT}")), "t=***");
        assert_eq!(r.query(""), "");
    }

    #[test]
    fn json_bodies_hide_secret_values_recursively() {
        let r = Redactor::new(["svc_tok_shop"]);
        let mut body = json!({
            "email": "ada@example.com",
            "password": "hunter2",
            "token": {
                "access_token": JWT,
                "refresh_token": "opaque",
                "access_token_expires": "2026-01-01T00:00:00Z",
                "token_type": "Bearer"
            },
            "pin": 1234,
            "api_keys": ["a", "b", {"nested": "c"}],
            "password_set": true,
            "note": format!("uses svc_tok_shop and {JWT}"),
            "svc_tok_shop": "the key is a secret",
            "list": [{"secret": null}, {"client_secret": 7}],
            "code": "123456"
        });
        r.json(&mut body, &[]);
        assert_eq!(
            body,
            json!({
                "email": "ada@example.com",
                "password": "***",
                "token": {
                    "access_token": "***",
                    "refresh_token": "***",
                    "access_token_expires": "***",
                    "token_type": "***"
                },
                "pin": 1234,
                "api_keys": ["***", "***", {"nested": "***"}],
                "password_set": true,
                "note": "uses *** and ***",
                "***": "the key is a secret",
                "list": [{"secret": null}, {"client_secret": "***"}],
                "code": "123456"
            })
        );
        let mut account = json!({"code": "123456", "new_password": "x"});
        r.json(&mut account, &["code"]);
        assert_eq!(account, json!({"code": "***", "new_password": "***"}));
    }
}
