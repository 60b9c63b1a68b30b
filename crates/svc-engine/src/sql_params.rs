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
