//! What verify keeps out of everything it writes and prints: the reference's credential (its
//! `--reference-token`, the password of a `--reference` URL's userinfo) and the emulator's
//! resource token, wherever a reference echoes them (a body that repeats the
//! `Authorization` header, an error that quotes the URL). Each secret is found as written,
//! percent-encoded (either hex case) and JSON-escaped, and replaced by `***` before an outcome
//! is kept, so no report, cases file or summary can hold it.

use std::borrow::Cow;

use serde_json::Value;

use super::case::Case;
use super::compare::{Answer, Verdict};
use super::report::Outcome;

/// What a secret is replaced by.
pub const MASK: &str = "***";

/// The secrets of a run, in every form they are looked for, longest first.
#[derive(Default)]
pub struct Masks {
    forms: Vec<Vec<u8>>,
}

impl std::fmt::Debug for Masks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Masks([{} redacted])", self.forms.len())
    }
}

impl Masks {
    /// Masks of `secrets` (empty ones are ignored).
    pub fn new<'a>(secrets: impl IntoIterator<Item = &'a str>) -> Masks {
        let mut forms: Vec<Vec<u8>> = Vec::new();
        for secret in secrets.into_iter().filter(|s| !s.is_empty()) {
            let encoded = crate::url::encode(secret);
            let json = serde_json::to_string(secret).unwrap_or_default();
            let json = json.trim_matches('"').to_owned();
            for form in [
                secret.to_owned(),
                encoded.to_ascii_lowercase(),
                encoded,
                json.replace('/', "\\/"),
                json,
            ] {
                forms.push(form.into_bytes());
            }
        }
        forms.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        forms.dedup();
        Masks { forms }
    }

    /// `bytes` with every secret replaced by [`MASK`].
    pub fn bytes<'b>(&self, bytes: &'b [u8]) -> Cow<'b, [u8]> {
        let mut out = Cow::Borrowed(bytes);
        for form in &self.forms {
            if let Some(replaced) = replace(&out, form) {
                out = Cow::Owned(replaced);
            }
        }
        out
    }

    /// `text` with every secret replaced by [`MASK`].
    pub fn text(&self, text: &str) -> String {
        match self.bytes(text.as_bytes()) {
            Cow::Borrowed(_) => text.to_owned(),
            // Whole secrets of valid UTF-8 replaced by ASCII leave valid UTF-8.
            Cow::Owned(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// The outcome with every secret masked: both answers, the verdict's words and the case.
    pub fn outcome(&self, mut outcome: Outcome) -> Outcome {
        outcome.reference = self.answer(outcome.reference);
        outcome.emulator = self.answer(outcome.emulator);
        outcome.verdict = match outcome.verdict {
            Verdict::Agrees => Verdict::Agrees,
            Verdict::Decision { what, section } => Verdict::Decision {
                what: self.text(&what),
                section,
            },
            Verdict::Difference { class, detail } => Verdict::Difference {
                class: self.text(&class),
                detail: self.text(&detail),
            },
            Verdict::NotCompared { why } => Verdict::NotCompared {
                why: self.text(&why),
            },
        };
        outcome.case = self.case(outcome.case);
        outcome
    }

    /// The answer with every secret masked.
    pub fn answer(&self, answer: Answer) -> Answer {
        match answer {
            Answer::Http { status, body } => Answer::Http {
                status,
                body: self.bytes(&body).into_owned(),
            },
            Answer::Failed(why) => Answer::Failed(self.text(&why)),
        }
    }

    fn case(&self, mut case: Case) -> Case {
        if self.forms.is_empty() {
            return case;
        }
        for (name, value) in &mut case.query {
            *name = self.text(name);
            *value = self.text(value);
        }
        case.key = case.key.map(|k| self.text(&k));
        if let Some(body) = &mut case.body {
            self.value(body);
        }
        case
    }

    fn value(&self, value: &mut Value) {
        match value {
            Value::String(s) => *s = self.text(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.value(v)),
            Value::Object(map) => {
                let old = std::mem::take(map);
                for (key, mut item) in old {
                    self.value(&mut item);
                    map.insert(self.text(&key), item);
                }
            }
            _ => {}
        }
    }
}

/// `haystack` with every `needle` replaced by [`MASK`]; `None` when there is none.
fn replace(haystack: &[u8], needle: &[u8]) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut at = 0;
    while at + needle.len() <= haystack.len() {
        if haystack[at..].starts_with(needle) {
            let out = out.get_or_insert_with(|| Vec::with_capacity(haystack.len()));
            out.extend_from_slice(&haystack[copied..at]);
            out.extend_from_slice(MASK.as_bytes());
            at += needle.len();
            copied = at;
        } else {
            at += 1;
        }
    }
    let mut out = out?;
    out.extend_from_slice(&haystack[copied..]);
    Some(out)
}

/// A URL as reports show it: its userinfo (`user:password@`), if any, as [`MASK`]; and the
/// password and whole userinfo, as written and decoded, to mask wherever else they appear.
pub fn without_userinfo(url: &str) -> (String, Vec<String>) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_owned(), Vec::new());
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return (url.to_owned(), Vec::new());
    };
    let mut secrets = vec![userinfo.to_owned()];
    if let Some((_, password)) = userinfo.split_once(':') {
        secrets.push(password.to_owned());
        secrets.push(crate::url::decode(password));
    }
    secrets.retain(|s| !s.is_empty());
    (format!("{scheme}://{MASK}@{host}{tail}"), secrets)
}

/// Text from a reference, for a terminal: every control character (line breaks included, so
/// that a value cannot forge a line of the summary) and every bidirectional override is
/// written as an escape such as `\u{1b}`, so that it can neither move the cursor, recolour,
/// retitle, ring nor reorder what is shown.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    let acts = |c: char| {
        c.is_control()
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match acts(c) {
            true => shown.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            false => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_form_of_a_secret_is_masked() {
        let masks = Masks::new(["tok/en+1", ""]);
        assert_eq!(masks.text("Bearer tok/en+1!"), "Bearer ***!");
        assert_eq!(masks.text("a=tok%2Fen%2B1&b=tok%2fen%2b1"), "a=***&b=***");
        assert_eq!(
            masks.text(r#"{"h":"Bearer tok\/en+1"}"#),
            r#"{"h":"Bearer ***"}"#
        );
        assert_eq!(masks.text("nothing"), "nothing");
        let case = Case {
            body: Some(json!({"tok/en+1": ["x tok/en+1"]})),
            ..Case::read(
                super::super::case::Op::List,
                "m",
                vec![("q".into(), "tok/en+1".into())],
            )
        };
        let case = masks.case(case);
        assert_eq!(case.query[0].1, "***");
        assert_eq!(case.body, Some(json!({"***": ["x ***"]})));
    }

    #[test]
    fn a_urls_userinfo_is_hidden_and_its_password_masked() {
        let (shown, secrets) = without_userinfo("http://user:p%40ss@host:8/api?x=1");
        assert_eq!(shown, "http://***@host:8/api?x=1");
        assert_eq!(secrets, ["user:p%40ss", "p%40ss", "p@ss"]);
        assert_eq!(without_userinfo("http://host/a@b").0, "http://host/a@b");
        assert!(without_userinfo("http://host").1.is_empty());
    }

    #[test]
    fn terminal_text_cannot_act() {
        assert_eq!(
            for_terminal("a\u{1b}[31mb\nc\u{202e}"),
            "a\\u{1b}[31mb\\u{a}c\\u{202e}"
        );
        assert!(matches!(for_terminal("plain é"), Cow::Borrowed(_)));
    }
}
