//! What the request journal hides: credentials and secret tokens never appear in it.
//!
//! - Every credential the emulator knows at start (the projects' API keys, the resources' and
//!   tools tokens, the HTTP proxy's secrets) is replaced by `***` wherever it appears: in the
//!   path, the query, and the captured bodies; as written, and as a server reads it after
//!   decoding `%XX` escapes in any case (`svc%5Fkey%5F…`, `%5f`) or JSON's `\u00XX`.
//! - So is any text shaped like a JWT (`eyJ...` `.` `...` `.` `...`, its dots written or
//!   escaped as `%2E`): the session, refresh and service tokens the emulator issues, and
//!   anyone else's.
//! - A query parameter, or a JSON key of a captured body, whose name says it holds a secret
//!   ([`is_secret_name`]: password, secret, token, key, auth, ...) has its value replaced by
//!   `***`: a string or a number, and every such value inside an object or array under it (a
//!   boolean, such as `has_password`, tells no secret). In the account routes' bodies, `code` (a reset or email-change code) too.
//! - A body that is not valid JSON (cut at 64 KiB, or sent wrong: no closing brace, a trailing
//!   comma, single quotes, unquoted names; a form; `name: value` lines) is masked by the same
//!   names and token shapes, read leniently as text; a cut one also has its end masked when it
//!   may begin a secret the cut split (a known secret's first characters, a JWT begun), so no
//!   part of a secret shows either.
//! - Headers are not recorded at all (`Authorization` included).

use std::borrow::Cow;

use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};
use svc_model::records::wire::encode_component;

/// What a secret is replaced by.
pub(crate) const MASK: &str = "***";

/// Replaces the secrets the emulator knows, and JWTs, in journal text.
#[derive(Default, Clone)]
pub struct Redactor {
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
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Self {
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

    /// This redactor, with the values one request sent under secret names as secrets too
    /// ([`sent_secrets`]): an answer that repeats one (an error quoting a value) hides it as
    /// the request does.
    pub(crate) fn with_sent(&self, sent: Vec<String>) -> Cow<'_, Redactor> {
        if sent.is_empty() {
            return Cow::Borrowed(self);
        }
        let mut all = Redactor::new(sent.iter().map(String::as_str)).secrets;
        all.extend(self.secrets.iter().cloned());
        all.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        all.dedup();
        Cow::Owned(Redactor { secrets: all })
    }

    /// `text` with every known secret and every JWT replaced by `MASK`: as written, and as
    /// a server would read it after decoding `%XX` escapes (`svc%5Fkey%5F…`, a JWT whose dots
    /// are `%2E`) or JSON's `\u00XX` and `\/` (a body that is not valid JSON keeps them).
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.masked(text, false)
    }

    /// [`text`](Self::text), reading `+` as a space too, as a form or query value does.
    fn form_text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.masked(text, true)
    }

    fn masked<'t>(&self, text: &'t str, plus_is_space: bool) -> Cow<'t, str> {
        let view = Decoded::new(text, plus_is_space);
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for secret in &self.secrets {
            let needle = secret.as_bytes();
            let mut from = 0;
            while let Some(at) = find(&view.bytes[from..], needle) {
                spans.push((from + at, from + at + needle.len()));
                from += at + needle.len();
            }
        }
        jwt_spans(&view.bytes, &mut spans);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        spans.sort_unstable();
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        let mut spans = spans.into_iter().peekable();
        while let Some((start, mut end)) = spans.next() {
            // Overlapping or touching matches are masked as one.
            while let Some(&(next_start, next_end)) = spans.peek() {
                if next_start > end {
                    break;
                }
                end = end.max(next_end);
                spans.next();
            }
            let (raw_start, raw_end) = view.raw_span(text, start, end);
            if raw_start < copied {
                continue;
            }
            out.push_str(&text[copied..raw_start]);
            out.push_str(MASK);
            copied = raw_end;
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
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
        self.form_text(&out).into_owned()
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
    /// A body that is not JSON as the journal shows it, redacted by the same rules as parsed
    /// JSON, read leniently: a form's secret parameters ([`query`](Self::query)); then the
    /// values under secret names in any of the shapes a client may send by mistake (JSON that
    /// is cut at 64 KiB, lacks its closing brace, has a trailing comma or single quotes,
    /// unquoted names, `name=value` and `name: value` lines); then known secrets and JWTs. When
    /// `cut` (only the body's start was kept), its end is masked too when it may be the
    /// beginning of a secret the cut split (a known secret's first characters, a JWT begun).
    pub(crate) fn loose_text(&self, text: &str, also_secret: &[&str], cut: bool) -> String {
        let trimmed = text.trim_start();
        let form = is_form_like(text) && !trimmed.starts_with(['{', '[']);
        let text: Cow<'_, str> = match form {
            true => Cow::Owned(self.query(text)),
            false => Cow::Borrowed(text),
        };
        let text = mask_multipart(&text, also_secret);
        let shown = self.text(&mask_loose(&text, also_secret)).into_owned();
        if !cut {
            return shown;
        }
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

/// Values shorter than this, sent under a secret name, are not looked for elsewhere: masking
/// every `1` of an answer would hide what the journal is for.
const MIN_SENT: usize = 4;

/// The values a request sent under secret names ([`is_secret_name`], or `also_secret`): its
/// query's, and its body's (a JSON object's strings and numbers under such a name, at any
/// depth, or a form's), decoded as the emulator read them.
pub fn sent_secrets(query: Option<&str>, body: Option<&[u8]>, also_secret: &[&str]) -> Vec<String> {
    let secret = |name: &str| is_secret_name(name) || also_secret.contains(&name);
    let mut sent = Vec::new();
    let mut form = |text: &str| {
        for pair in text.split('&') {
            if let Some((name, value)) = pair.split_once('=')
                && secret(&form_decode(name))
            {
                sent.push(form_decode(value));
            }
        }
    };
    if let Some(query) = query {
        form(query);
    }
    match body.map(serde_json::from_slice::<Value>) {
        Some(Ok(value)) => collect_hidden(&value, false, &secret, &mut sent),
        Some(Err(_)) => {
            if let Some(text) = body.and_then(|b| std::str::from_utf8(b).ok())
                && is_form_like(text)
            {
                form(text);
            }
        }
        None => {}
    }
    sent.retain(|s| s.chars().count() >= MIN_SENT);
    sent
}

/// The strings and numbers of `value` under a secret name (`hidden` once under one).
fn collect_hidden(
    value: &Value,
    hidden: bool,
    secret: &dyn Fn(&str) -> bool,
    out: &mut Vec<String>,
) {
    match value {
        Value::String(s) if hidden => out.push(s.clone()),
        Value::Number(n) if hidden => out.push(n.to_string()),
        Value::Array(items) => items
            .iter()
            .for_each(|item| collect_hidden(item, hidden, secret, out)),
        Value::Object(map) => {
            for (key, item) in map {
                collect_hidden(item, hidden || secret(key), secret, out);
            }
        }
        _ => {}
    }
}

/// Text that looks like `a=1&b=2`: no whitespace, and an `=`.
pub(crate) fn is_form_like(text: &str) -> bool {
    text.contains('=') && !text.chars().any(char::is_whitespace)
}

fn is_base64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// Text that may hold names and values (JSON, valid or not; `name: value` or `name=value`
/// lines), with the values under secret names replaced by [`MASK`], as [`Redactor::json`]
/// does for parsed JSON: a name is a quoted string (`"` or `'`) or a bare word followed by `:`
/// or `=`; under one that [`is_secret_name`] (or in `also_secret`), the value is masked: a
/// quoted string's content (to the end of the text when it is cut short), a number (as `"***"`,
/// so that JSON stays JSON), or a bare value up to the next `,`, `;`, `&`, closing bracket or
/// line end; and every value inside an object or array under one. `true`, `false` and `null`
/// tell no secret.
fn mask_loose(text: &str, also_secret: &[&str]) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    // Whether each open container is under a secret name; and whether the last name was one.
    let mut hidden: Vec<bool> = Vec::new();
    let mut secret_key = false;
    let mut i = 0;
    // A name is read as a server would: `pass\u0077ord` and `pass%77ord` are `password`.
    let is_secret = |name: &str| {
        let name = unescape_name(name);
        is_secret_name(&name) || also_secret.contains(&name.as_ref())
    };
    while i < bytes.len() {
        let inside_hidden = hidden.last().copied().unwrap_or(false);
        match bytes[i] {
            quote @ (b'"' | b'\'') => {
                let end = string_end(bytes, i + 1, quote);
                let after = skip_whitespace(bytes, end + 1);
                if matches!(bytes.get(after), Some(b':' | b'=')) {
                    secret_key = is_secret(&text[i + 1..end.min(text.len())]);
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
            b'{' | b'[' | b'(' => {
                hidden.push(secret_key || inside_hidden);
                secret_key = false;
                i += 1;
            }
            b'}' | b']' | b')' => {
                hidden.pop();
                secret_key = false;
                i += 1;
            }
            b',' | b';' | b'&' | b'\n' | b'\r' => {
                secret_key = false;
                i += 1;
            }
            b':' | b'=' => i += 1,
            b if b.is_ascii_whitespace() => i += 1,
            _ => {
                let word_end = i + bytes[i..].iter().take_while(|&&b| is_word(b)).count();
                let word_end = word_end.max(i + 1);
                let after = skip_whitespace(bytes, word_end);
                if matches!(bytes.get(after), Some(b':' | b'=')) && !secret_key {
                    let name = text.get(i..word_end).unwrap_or_default();
                    secret_key = is_secret(name);
                    i = after + 1;
                    continue;
                }
                // A value: under a secret name, up to the end of the line or entry (spaces
                // included: `password: correct horse`); inside a hidden container, the word.
                let end = match secret_key {
                    true => {
                        let run = bytes[i..].iter().take_while(|&&b| !ends_value(b)).count();
                        i + text[i..i + run].trim_end().len()
                    }
                    false => word_end,
                };
                let word = text.get(i..end).unwrap_or_default();
                let tells_nothing =
                    matches!(word, "true" | "false" | "null" | "True" | "False" | "None");
                if (secret_key || inside_hidden) && !tells_nothing && !word.is_empty() {
                    out.push_str(&text[copied..i]);
                    let number = matches!(bytes[i], b'-' | b'0'..=b'9');
                    match number {
                        true => {
                            out.push('"');
                            out.push_str(MASK);
                            out.push('"');
                        }
                        false => out.push_str(MASK),
                    }
                    copied = end;
                }
                secret_key = false;
                i = end.max(i + 1);
            }
        }
    }
    out.push_str(&text[copied.min(text.len())..]);
    out
}

/// A `multipart/form-data` body with the content of each part named as a secret
/// (`Content-Disposition: form-data; name="password"`) replaced by [`MASK`], up to the next
/// boundary line (`--...`) or the end of a body cut short.
fn mask_multipart<'t>(text: &'t str, also_secret: &[&str]) -> Cow<'t, str> {
    if !text.to_ascii_lowercase().contains("content-disposition:") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    // In a part's headers: whether its name is secret; in its content: masking it.
    let (mut secret_part, mut in_content, mut masked) = (false, false, false);
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\r', '\n']);
        if bare.starts_with("--") {
            (secret_part, in_content, masked) = (false, false, false);
        } else if in_content && secret_part {
            if !masked {
                out.push_str(MASK);
                masked = true;
            }
            if line.ends_with('\n') {
                out.push('\n');
            }
            continue;
        } else if !in_content && bare.is_empty() {
            in_content = true;
        } else if !in_content
            && bare
                .to_ascii_lowercase()
                .starts_with("content-disposition:")
        {
            let name = bare
                .split(';')
                .filter_map(|p| p.trim().strip_prefix("name="))
                .next()
                .map(|n| n.trim_matches('"'));
            secret_part = name.is_some_and(|n| {
                let n = unescape_name(n);
                is_secret_name(&n) || also_secret.contains(&n.as_ref())
            });
        }
        out.push_str(line);
    }
    Cow::Owned(out)
}

/// A name with its `%XX` and JSON `\u00XX` escapes decoded (those that spell ASCII).
fn unescape_name(name: &str) -> Cow<'_, str> {
    let view = Decoded::new(name, true);
    match view.starts.is_empty() {
        true => Cow::Borrowed(name),
        false => Cow::Owned(String::from_utf8_lossy(&view.bytes).into_owned()),
    }
}

/// A byte of a bare word: not a quote, bracket, separator or space.
fn is_word(b: u8) -> bool {
    !(b.is_ascii_whitespace()
        || matches!(
            b,
            b'"' | b'\''
                | b'{'
                | b'}'
                | b'['
                | b']'
                | b'('
                | b')'
                | b','
                | b';'
                | b'&'
                | b':'
                | b'='
        ))
}

/// A byte that ends a bare value.
fn ends_value(b: u8) -> bool {
    matches!(b, b',' | b';' | b'&' | b'}' | b']' | b')' | b'\n' | b'\r')
}

/// The index of the `quote` that ends the string whose content starts at `from` (escapes
/// skipped), or `bytes.len()` when it is cut short.
fn string_end(bytes: &[u8], from: usize, quote: u8) -> usize {
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b if b == quote => return i,
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

/// Adds the spans of every JWT-shaped run of `bytes` (`eyJ` and base64url, `.`, base64url,
/// `.`, base64url) to `spans`.
fn jwt_spans(bytes: &[u8], spans: &mut Vec<(usize, usize)>) {
    let mut from = 0;
    while let Some(found) = find(&bytes[from..], b"eyJ") {
        let start = from + found;
        match jwt_len(&bytes[start..]) {
            Some(len) => {
                spans.push((start, start + len));
                from = start + len;
            }
            None => from = start + 3,
        }
    }
}

/// Where `needle` first is in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    let first = needle[0];
    let last_start = haystack.len() - needle.len();
    let mut at = 0;
    while at <= last_start {
        let skip = haystack[at..=last_start].iter().position(|&b| b == first)?;
        at += skip;
        if haystack[at..].starts_with(needle) {
            return Some(at);
        }
        at += 1;
    }
    None
}

/// Text as a server reads it after decoding, for finding secrets in it: `%XX` escapes (and `+`
/// when it is a form's), JSON's `\u00XX` (an ASCII character) and `\/`; beside each decoded
/// byte, where it starts in the text, so that a match is masked where it was written.
struct Decoded<'t> {
    bytes: Cow<'t, [u8]>,
    /// `starts[i]`: where decoded byte `i` starts in the text; empty when nothing was decoded.
    starts: Vec<usize>,
}

impl<'t> Decoded<'t> {
    fn new(text: &'t str, plus_is_space: bool) -> Self {
        let raw = text.as_bytes();
        let escapes = |b: &u8| *b == b'%' || *b == b'\\' || (plus_is_space && *b == b'+');
        if !raw.iter().any(escapes) {
            return Self {
                bytes: Cow::Borrowed(raw),
                starts: Vec::new(),
            };
        }
        let mut bytes = Vec::with_capacity(raw.len());
        let mut starts = Vec::with_capacity(raw.len());
        let mut i = 0;
        while i < raw.len() {
            let (byte, len) = match raw[i] {
                b'%' => match (raw.get(i + 1).and_then(hex), raw.get(i + 2).and_then(hex)) {
                    (Some(h), Some(l)) => (h << 4 | l, 3),
                    _ => (b'%', 1),
                },
                b'+' if plus_is_space => (b' ', 1),
                b'\\' => match raw.get(i + 1) {
                    Some(b'/') => (b'/', 2),
                    Some(b'u') => match raw.get(i + 2..i + 6).and_then(ascii_escape) {
                        Some(c) => (c, 6),
                        None => (b'\\', 1),
                    },
                    _ => (b'\\', 1),
                },
                b => (b, 1),
            };
            bytes.push(byte);
            starts.push(i);
            i += len;
        }
        Self {
            bytes: Cow::Owned(bytes),
            starts,
        }
    }

    /// The text's span of the decoded span `start..end`, widened to whole characters.
    fn raw_span(&self, text: &str, start: usize, end: usize) -> (usize, usize) {
        let at = |i: usize| match self.starts.is_empty() {
            true => i,
            false => self.starts.get(i).copied().unwrap_or(text.len()),
        };
        let (mut raw_start, mut raw_end) = (at(start), at(end));
        while !text.is_char_boundary(raw_start) {
            raw_start -= 1;
        }
        while !text.is_char_boundary(raw_end) {
            raw_end += 1;
        }
        (raw_start, raw_end)
    }
}

fn hex(b: &u8) -> Option<u8> {
    (*b as char).to_digit(16).and_then(|d| u8::try_from(d).ok())
}

/// The ASCII character of JSON's `\u00XX` (its four hex digits).
fn ascii_escape(digits: &[u8]) -> Option<u8> {
    let mut value: u32 = 0;
    for b in digits {
        value = value * 16 + u32::from(hex(b)?);
    }
    u8::try_from(value).ok().filter(u8::is_ascii)
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
        let scanned: Value = serde_json::from_str(&r.loose_text(&whole, &[], true)).unwrap();
        assert_eq!(scanned, parsed);
        // Cut inside a secret value, a secret key's name, or a known secret.
        assert_eq!(
            r.loose_text(r#"{"a": 1, "password": "hunt"#, &[], true),
            r#"{"a": 1, "password": "***"#
        );
        assert_eq!(
            r.loose_text(r#"[{"code": "12"#, &["code"], true),
            r#"[{"code": "***"#
        );
        assert_eq!(
            r.loose_text(r#"{"note": "svc_key_ab"#, &[], true),
            r#"{"note": "***"#
        );
        assert_eq!(r.loose_text("plain svc_k", &[], true), "plain ***");
        assert_eq!(r.loose_text("see eyJhbGc.eyJzdWIi", &[], true), "see ***");
        assert_eq!(
            r.loose_text("nothing to hide", &[], true),
            "nothing to hide"
        );
        assert_eq!(
            r.loose_text("user=a&password=b&x=svc_key", &[], true),
            "user=a&password=***&x=***"
        );
    }

    #[test]
    fn malformed_json_and_other_text_hide_what_parsed_json_would() {
        let r = Redactor::new(["svc_key_abcdef"]);
        for (body, hidden) in [
            // No closing brace, a trailing comma, single quotes, unquoted names.
            (
                r#"{"email":"a@b.c","password":"hunter4secretpw""#,
                "hunter4secretpw",
            ),
            (
                r#"{"email":"a@b.c","password":"hunter4secretpw",}"#,
                "hunter4secretpw",
            ),
            (
                "{'email':'a@b.c','password':'hunter4secretpw'}",
                "hunter4secretpw",
            ),
            (
                "{email: 'a@b.c', password: hunter4secretpw}",
                "hunter4secretpw",
            ),
            (r#"{"name": "x", "api_key": "k3y-v4lue" "#, "k3y-v4lue"),
            (r#"{"token": {"access": "deep-secret"}, "#, "deep-secret"),
            (
                "password: correct horse battery\nemail: a@b.c",
                "correct horse",
            ),
            ("Authorization: Bearer abc.def\r\n", "abc.def"),
            (r#"{"secret": 12345,"#, "12345"),
            ("password=hunter4secretpw&x=1 y", "hunter4secretpw"),
            ("note svc%5Fkey%5Fabcdef here", "svc%5Fkey"),
            (r#"{"pass\u0077ord": "hunter4secretpw""#, "hunter4secretpw"),
            ("{pass%77ord: hunter4secretpw", "hunter4secretpw"),
            (
                "--b\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\na@b.c\r\n--b\r\n\
                 content-disposition: form-data; name=\"password\"\r\n\r\nhunter4 secretpw\r\n--b--\r\n",
                "secretpw",
            ),
        ] {
            let shown = r.loose_text(body, &[], false);
            assert!(!shown.contains(hidden), "{body} -> {shown}");
            assert!(shown.contains(MASK), "{body} -> {shown}");
        }
        // Names and flags stay.
        assert_eq!(
            r.loose_text(r#"{"email":"a@b.c","password":"pw","ok":true,"#, &[], false),
            r#"{"email":"a@b.c","password":"***","ok":true,"#
        );
        assert_eq!(
            r.loose_text("{'has_password': True, 'name': 'x'", &[], false),
            "{'has_password': True, 'name': 'x'"
        );
    }

    #[test]
    fn percent_encoded_and_escaped_secrets_are_found() {
        let r = Redactor::new(["svc_key_abcdef"]);
        assert_eq!(r.text("/x/svc%5Fkey%5Fabcdef/y"), "/x/***/y");
        assert_eq!(r.text("q=svc%5fkey%5fabcdef&z=1"), "q=***&z=1");
        assert_eq!(r.text("%73%76%63_key_abcdef!"), "***!");
        assert_eq!(r.text(r"svc\u005fkey\u005Fabcdef"), "***");
        assert_eq!(r.query("q=svc_key+abcdef"), "q=svc_key+abcdef");
        let dotted = JWT.replace('.', "%2E");
        assert_eq!(r.text(&format!("t={dotted}&n=1")), "t=***&n=1");
        assert_eq!(r.query(&format!("q=a+{dotted}")), "q=a+***");
        // Not a whole escape: left as written.
        assert_eq!(r.text("100% sure %zz %4"), "100% sure %zz %4");
        assert_eq!(r.text("caf%C3%A9 svc_key_abcdef"), "caf%C3%A9 ***");
    }

    #[test]
    fn what_a_request_sent_as_a_secret_is_a_secret_of_its_answer() {
        let mut sent = sent_secrets(
            Some("api_key=k3y%2Dvalue&x=1&token=ab"),
            Some(br#"{"name": "n", "password": "hunter4secretpw", "deep": {"secret": [12345, "s3cr3t"]}}"#),
            &[],
        );
        sent.sort();
        assert_eq!(sent, ["12345", "hunter4secretpw", "k3y-value", "s3cr3t"]);
        assert_eq!(
            sent_secrets(None, Some(b"user=a&password=pa55word"), &[]),
            ["pa55word"]
        );
        assert_eq!(
            sent_secrets(None, Some(br#"{"code": "778899"}"#), &["code"]),
            ["778899"]
        );
        let r = Redactor::new(["svc_key_abcdef"]);
        let local = r.with_sent(sent);
        assert_eq!(
            local.text(
                r#"Invalid value "hunter4secretpw" for "api_key": k3y-value, svc_key_abcdef"#
            ),
            r#"Invalid value "***" for "api_key": ***, ***"#
        );
        assert!(matches!(r.with_sent(Vec::new()), Cow::Borrowed(_)));
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
