//! `application/x-www-form-urlencoded` bodies as the engine reads them: Tornado 5.1's
//! `parse_body_arguments` (`parse_qs_bytes` of the body decoded as UTF-8, keys read as Latin-1
//! text and values as Latin-1 bytes), then the engine's `Request` (`request.py`), which keeps
//! a value as text when its bytes are UTF-8 and as the bytes otherwise.

use std::collections::HashMap;

/// A form value as the engine's `Request` keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormValue {
    /// Its bytes were UTF-8: the text.
    Text(String),
    /// They were not (`body_argument_value` keeps the bytes).
    Bytes(Vec<u8>),
}

impl FormValue {
    /// `body_argument_value`: the bytes decoded as UTF-8 where they are.
    pub fn of(bytes: Vec<u8>) -> FormValue {
        match String::from_utf8(bytes) {
            Ok(text) => FormValue::Text(text),
            Err(e) => FormValue::Bytes(e.into_bytes()),
        }
    }
}

/// Why Tornado reads no field at all from a form body (it logs a warning and goes on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unread {
    /// The body is not UTF-8 (`native_str(body)` fails).
    NotUtf8,
    /// A value holds, as raw text, a character beyond Latin-1 (`encode('latin1')` fails).
    BeyondLatin1,
}

/// A form's fields as Tornado's `body_arguments` holds them: each name (first seen first)
/// with its values, as bytes.
pub type Fields = Vec<(String, Vec<Vec<u8>>)>;

/// Tornado's reading of a form body (`parse_qs_bytes(native_str(body), keep_blank_values=True)`,
/// Python 3.11's `parse_qs`): pairs split at `&` (empty ones skipped), a pair without `=` a
/// blank value, `+` a space, `%XX` a byte (a malformed escape stays as written). A key is the
/// text with each escape as the Latin-1 character of its byte (so `%C3%A9` is `Ã©`, a raw `é`
/// stays `é`); a value is that text's Latin-1 bytes (so a raw `é` is the byte `E9`).
pub fn read(body: &[u8]) -> Result<Fields, Unread> {
    let text = std::str::from_utf8(body).map_err(|_| Unread::NotUtf8)?;
    let mut fields: Fields = Vec::new();
    // Where each name stands (a form of many names is read in linear time).
    let mut index: HashMap<String, usize> = HashMap::new();
    for pair in text.split('&') {
        if pair.is_empty() {
            continue;
        }
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = unquote(key, true);
        let value = latin1_bytes(&unquote(value, true)).ok_or(Unread::BeyondLatin1)?;
        push(&mut fields, &mut index, key, value);
    }
    Ok(fields)
}

/// Adds a value to its name's values (a new name last), `index` saying where each name stands.
pub fn push(fields: &mut Fields, index: &mut HashMap<String, usize>, name: String, value: Vec<u8>) {
    match index.get(&name) {
        Some(&at) => fields[at].1.push(value),
        None => {
            index.insert(name.clone(), fields.len());
            fields.push((name, vec![value]));
        }
    }
}

/// Whether a raw value (before its escapes are read) holds a character that is not ASCII:
/// the engine reads it as its Latin-1 byte, which is not the character sent.
pub fn raw_non_ascii_values(body: &[u8]) -> bool {
    body.split(|&b| b == b'&').any(|pair| {
        let value = pair
            .iter()
            .position(|&b| b == b'=')
            .map_or(&pair[pair.len()..], |i| &pair[i + 1..]);
        !value.is_ascii()
    })
}

/// Python's `urllib.parse.unquote(s, encoding='latin1')`: each `%XX` (hex) the Latin-1
/// character of its byte, everything else as it is.
pub fn unquote_latin1(s: &str) -> String {
    unquote(s, false)
}

/// [`unquote_latin1`], `+` first read as a space (`parse_qsl`'s `replace('+', ' ')`).
fn unquote(s: &str, plus: bool) -> String {
    let b = s.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16);
    let mut out = String::with_capacity(s.len());
    let mut at = 0;
    while at < b.len() {
        if plus && b[at] == b'+' {
            out.push(' ');
            at += 1;
            continue;
        }
        if b[at] == b'%'
            && let (Some(&h), Some(&l)) = (b.get(at + 1), b.get(at + 2))
            && let (Some(h), Some(l)) = (hex(h), hex(l))
        {
            out.push(char::from_u32(h * 16 + l).unwrap_or('\u{fffd}'));
            at += 3;
            continue;
        }
        // A whole character (the text is UTF-8; `%` and `+` are ASCII).
        let len = s[at..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&s[at..at + len]);
        at += len;
    }
    out
}

/// `s.encode('latin1')`: `None` when a character is beyond `U+00FF`.
fn latin1_bytes(s: &str) -> Option<Vec<u8>> {
    s.chars().map(|c| u8::try_from(u32::from(c)).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(fields: &Fields) -> Vec<(String, Vec<FormValue>)> {
        fields
            .iter()
            .map(|(k, vs)| (k.clone(), vs.iter().cloned().map(FormValue::of).collect()))
            .collect()
    }

    fn t(s: &str) -> FormValue {
        FormValue::Text(s.to_owned())
    }

    /// Checked against Tornado 5.1 and the engine's `Request` (Python 3.11).
    #[test]
    fn a_form_is_read_as_tornado_and_the_engine_read_it() {
        let fields = read(b"city=a&city=b&email=x%40y+z&zz&=v&&k=%zz%4").unwrap();
        assert_eq!(
            text(&fields),
            vec![
                ("city".to_owned(), vec![t("a"), t("b")]),
                ("email".to_owned(), vec![t("x@y z")]),
                ("zz".to_owned(), vec![t("")]),
                (String::new(), vec![t("v")]),
                ("k".to_owned(), vec![t("%zz%4")]),
            ]
        );
        // `{'a': b'\xe9', 'Ã©': 'x', 'b': b'\xff', 'c': '', 'é': 'é'}`
        let fields = read("a=é&%C3%A9=x&b=%FF&c&é=%C3%A9".as_bytes()).unwrap();
        assert_eq!(
            text(&fields),
            vec![
                ("a".to_owned(), vec![FormValue::Bytes(vec![0xe9])]),
                ("Ã©".to_owned(), vec![t("x")]),
                ("b".to_owned(), vec![FormValue::Bytes(vec![0xff])]),
                ("c".to_owned(), vec![t("")]),
                ("é".to_owned(), vec![t("é")]),
            ]
        );
        // `+` is a space before escapes are read: `%2B` is a plus.
        let fields = read(b"a=1+%2B+2").unwrap();
        assert_eq!(text(&fields), vec![("a".to_owned(), vec![t("1 + 2")])]);
        // A raw character beyond Latin-1 in a value, or a body that is not UTF-8: no field.
        assert_eq!(read("a=1&b=€".as_bytes()), Err(Unread::BeyondLatin1));
        assert_eq!(read("€=1".as_bytes()).map(|f| f.len()), Ok(1));
        assert_eq!(read(b"a=\xe9"), Err(Unread::NotUtf8));
        assert!(raw_non_ascii_values("a=é".as_bytes()));
        assert!(!raw_non_ascii_values("é=a&b=%C3%A9".as_bytes()));
    }
}
