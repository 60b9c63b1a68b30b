//! The `:name` parameters of a query's text: found, and bound as the database's placeholders,
//! outside what the database's own scanner skips (strings, quoted names, comments).

use std::collections::BTreeSet;

use serde_json::{Map, Value as Json};

use crate::EngineError;

/// Replaces each `:name` of a read-only query by a parameter bound to `params[name]`: `bind`
/// makes the value, `placeholder` the text of the `n`th parameter (from 1). `skip` knows the
/// database's text: given a position, the end of what starts there and holds no parameter (a
/// string, a quoted name, a comment, an operator with a `:` in it), `Err` for what the emulator
/// refuses (a positional parameter), `None` elsewhere. A scanner that misjudged where a string
/// ends could only put a placeholder inside a string (text, not a parameter) or leave a `:name`
/// as it is: the statement then fails in the database, and no value is ever part of its text.
pub fn bind_names<V>(
    query: &str,
    params: &Map<String, Json>,
    skip: impl Fn(&[u8], usize) -> Option<Result<usize, EngineError>>,
    mut bind: impl FnMut(&Json) -> V,
    placeholder: impl Fn(usize) -> String,
) -> Result<(String, Vec<V>), EngineError> {
    let mut out = String::with_capacity(query.len() + 16);
    let mut bound = Vec::new();
    let mut copied = 0;
    scan_names(query, skip, |at, end, name| {
        let value = params.get(name).ok_or_else(|| {
            EngineError::field(
                "params_obj",
                format!("No value for the parameter :{name}: add it to params_obj."),
            )
        })?;
        bound.push(bind(value));
        out.push_str(&query[copied..at]);
        out.push_str(&placeholder(bound.len()));
        copied = end;
        Ok(())
    })?;
    out.push_str(&query[copied..]);
    Ok((out, bound))
}

/// The names of the `:name` parameters of `statements`, each once, read as [`bind_names`]
/// reads them (`skip` knows the database's text): the inputs an action takes.
pub fn parameter_names(
    statements: &[String],
    skip: impl Fn(&[u8], usize) -> Option<Result<usize, EngineError>> + Copy,
) -> Result<BTreeSet<String>, EngineError> {
    let mut names = BTreeSet::new();
    for statement in statements {
        scan_names(statement, skip, |_, _, name| {
            names.insert(name.to_owned());
            Ok(())
        })?;
    }
    Ok(names)
}

/// Calls `found(at, end, name)` for each `:name` of `query` outside what `skip` skips, `at`
/// being the position of its `:` and `end` the one after its name.
fn scan_names(
    query: &str,
    skip: impl Fn(&[u8], usize) -> Option<Result<usize, EngineError>>,
    mut found: impl FnMut(usize, usize, &str) -> Result<(), EngineError>,
) -> Result<(), EngineError> {
    let b = query.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = skip(b, i) {
            i = end?;
            continue;
        }
        if b[i] != b':' || !b.get(i + 1).is_some_and(|c| starts_name(*c)) {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
            end += 1;
        }
        found(i, end, &query[start..end])?;
        i = end;
    }
    Ok(())
}

/// A query's text as SQLAlchemy's `text()` compiles it for a driver of positional parameters
/// (pysqlite's `?`), and the parameters' names in their order: each `:name` (its name of word
/// characters and `$`, not after a `:`, a word character, a `$` or a backslash, not before a
/// `:`) becomes `?`, wherever it stands, in a string, a quoted name or a comment too (SQLAlchemy
/// does not read SQL); then `\:` loses its backslash (`BIND_PARAMS` and `BIND_PARAMS_ESC` of
/// SQLAlchemy 1.4's compiler). A `?` left in a string is its text: the driver then counts
/// fewer parameters than values, and fails, as the engine fails.
pub fn sqlalchemy_positional(query: &str) -> (String, Vec<String>) {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let chars: Vec<(usize, char)> = query.char_indices().collect();
    let (mut out, mut names) = (String::with_capacity(query.len()), Vec::new());
    let mut k = 0;
    while k < chars.len() {
        let (at, c) = chars[k];
        let before = k.checked_sub(1).map(|p| chars[p].1);
        let free = !before.is_some_and(|b| b == ':' || b == '\\' || word(b));
        if c == ':' && free {
            let mut end = k + 1;
            while end < chars.len() && word(chars[end].1) {
                end += 1;
            }
            let after = chars.get(end).map(|&(_, c)| c);
            if end > k + 1 && after != Some(':') {
                let stop = chars.get(end).map_or(query.len(), |&(i, _)| i);
                names.push(query[at + 1..stop].to_owned());
                out.push('?');
                k = end;
                continue;
            }
        }
        // `\:name` (or a `\:` alone) is the name's text, unescaped.
        if c == '\\' && chars.get(k + 1).is_some_and(|&(_, n)| n == ':') {
            let mut end = k + 2;
            while end < chars.len() && word(chars[end].1) {
                end += 1;
            }
            if chars.get(end).map(|&(_, c)| c) != Some(':') {
                k += 1;
                continue;
            }
        }
        out.push(c);
        k += 1;
    }
    (out, names)
}

/// Whether `c` may start a parameter's name (after its `:`).
pub fn starts_name(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// The end of a quoted string or name starting at `at`: a doubled quote stays inside, and
/// (`backslashes`) a backslash escapes the next character.
pub fn skip_quoted(b: &[u8], at: usize, quote: u8, backslashes: bool) -> usize {
    let mut i = at + 1;
    while i < b.len() {
        if backslashes && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == quote {
            if b.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// The end of the block comment (`/* ... */`, not nested) starting at `at`, past its `*/`, or
/// of the text.
pub fn block_comment_end(b: &[u8], at: usize) -> usize {
    b[at + 2..]
        .windows(2)
        .position(|w| w == b"*/")
        .map_or(b.len(), |p| at + 2 + p + 2)
}

/// The end of the line `at` is on (past its newline), or of the text.
pub fn line_end(b: &[u8], at: usize) -> usize {
    b[at..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| at + p + 1)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn sqlalchemys_text_binds_every_name_wherever_it_stands() {
        let compiled = |q: &str| sqlalchemy_positional(q);
        assert_eq!(
            compiled("SELECT :a, ':a', \"x:b\" -- :c"),
            (
                "SELECT ?, '?', \"x:b\" -- ?".to_owned(),
                vec!["a".into(), "a".into(), "c".into()]
            )
        );
        // Not after a word character, a `:` or a `$`; not before a `:`.
        assert_eq!(
            compiled("a:b ::c :d: $:e"),
            ("a:b ::c :d: $:e".to_owned(), vec![])
        );
        // A name of word characters and `$`, Unicode letters too.
        assert_eq!(
            compiled("SELECT :é1, :a$b"),
            ("SELECT ?, ?".to_owned(), vec!["é1".into(), "a$b".into()])
        );
        // `\:name` is its text without the backslash; `@a` and `$a` stay.
        assert_eq!(
            compiled("SELECT '\\:a', @a, $a, :"),
            ("SELECT ':a', @a, $a, :".to_owned(), vec![])
        );
    }

    #[test]
    fn names_become_placeholders_outside_what_the_database_skips() {
        let params = serde_json::json!({"a": 1, "b_2": "x"});
        let params = params.as_object().unwrap();
        // A toy dialect: '...' strings, `::` casts, and `$` refused.
        let skip = |b: &[u8], i: usize| match b[i] {
            b'\'' => Some(Ok(skip_quoted(b, i, b'\'', false))),
            b':' if b.get(i + 1) == Some(&b':') => Some(Ok(i + 2)),
            b'$' => Some(Err(EngineError::field("query", "no $"))),
            _ => None,
        };
        let bound = |q: &str| bind_names(q, params, skip, Json::clone, |n| format!("?{n}"));
        let (text, values) =
            bound("SELECT :a, ':a', :b_2, :a::int, a:b_2, :1, 'it''s :a'").unwrap();
        assert_eq!(text, "SELECT ?1, ':a', ?2, ?3::int, a?4, :1, 'it''s :a'");
        assert_eq!(values, [json!(1), json!("x"), json!(1), json!("x")]);
        let missing = bound("SELECT :c").unwrap_err().to_string();
        assert!(
            missing.contains("No value for the parameter :c"),
            "{missing}"
        );
        assert!(bound("SELECT $1").is_err());
        // An unterminated string runs to the end: nothing after it is bound.
        assert_eq!(bound("x ':a").unwrap(), ("x ':a".to_owned(), Vec::new()));
    }
}
