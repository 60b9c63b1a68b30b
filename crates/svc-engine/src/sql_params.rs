//! The `:name` parameters of a statement's text, found and replaced by the text a binder gives
//! (the database's placeholders): an action's outside what the database's own scanner skips
//! (strings, quoted names, comments, [`Reading::Action`]); a read-only query's where the
//! engine's SQLAlchemy `text()` finds them ([`Reading::Engine`]; [`bind_everywhere`] for a
//! driver that binds by position).

use std::collections::BTreeSet;

use serde_json::{Map, Value as Json};

use crate::EngineError;

/// How a statement's `:name`s are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// A read-only query's, as the data engine's SQLAlchemy `text()` reads them: every
    /// `:name`, in strings and comments too.
    Engine,
    /// An action's statement's: outside the database's strings, quoted names and comments.
    Action,
}

/// Replaces each `:name` of a statement, read as `reading` says, by what `bind` makes of
/// `params[name]`: it pushes the values it binds (one for a plain value, one per item of a list
/// a driver writes out) and answers the text that takes the name's place (its placeholders), or
/// refuses the value, given its name; `skip` knows the database's text (what holds no parameter: a string, a quoted name, a
/// comment, an operator with a `:` in it; `Err` for what the emulator refuses). No value is
/// ever part of the statement's text.
pub fn bind_names<V>(
    query: &str,
    params: &Map<String, Json>,
    reading: Reading,
    skip: impl Fn(&[u8], usize) -> Option<Result<usize, EngineError>>,
    bind: impl FnMut(&str, &Json, &mut Vec<V>) -> Result<String, EngineError>,
) -> Result<(String, Vec<V>), EngineError> {
    match reading {
        Reading::Engine => bind_as_engine(query, params, skip, bind),
        Reading::Action => bind_outside(query, params, skip, bind),
    }
}

/// [`bind_names`] of an action's statement: each `:name` outside what `skip` skips. A scanner
/// that misjudged where a string ends could only put a placeholder inside a string (text, not a
/// parameter) or leave a `:name` as it is: the statement then fails in the database, and no
/// value is ever part of its text.
fn bind_outside<V>(
    query: &str,
    params: &Map<String, Json>,
    skip: impl Fn(&[u8], usize) -> Option<Result<usize, EngineError>>,
    mut bind: impl FnMut(&str, &Json, &mut Vec<V>) -> Result<String, EngineError>,
) -> Result<(String, Vec<V>), EngineError> {
    let mut out = String::with_capacity(query.len() + 16);
    let mut bound = Vec::new();
    let mut copied = 0;
    scan_names(query, skip, |at, end, name| {
        let value = params.get(name).ok_or_else(|| missing_input(name))?;
        let text = bind(name, value, &mut bound)?;
        out.push_str(&query[copied..at]);
        out.push_str(&text);
        copied = end;
        Ok(())
    })?;
    out.push_str(&query[copied..]);
    Ok((out, bound))
}

/// [`bind_names`] of a read-only query: each `:name` where the engine's SQLAlchemy `text()`
/// finds one ([`bind_everywhere`]'s rule: a name followed by a `:` is none, so `:a::int`
/// is no parameter); `\:name` loses its backslash, as the engine sends it. A `:name` that the
/// database reads inside a comment (`skip`) needs its value and stays text; inside a string or
/// a quoted name (or in a comment its value would end) it is refused by design: the engine's
/// driver writes its value there, into the text (or fails).
fn bind_as_engine<V>(
    query: &str,
    params: &Map<String, Json>,
    skip: impl Fn(&[u8], usize) -> Option<Result<usize, EngineError>>,
    mut bind: impl FnMut(&str, &Json, &mut Vec<V>) -> Result<String, EngineError>,
) -> Result<(String, Vec<V>), EngineError> {
    let (marks, escapes) = sqlalchemy_marks(query);
    let b = query.as_bytes();
    // Each replacement: the bytes it takes the place of, and its text.
    let mut replaced: Vec<(usize, usize, String)> = Vec::new();
    let mut bound = Vec::new();
    let mut next = marks.iter().peekable();
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = skip(b, i) {
            let end = end?;
            let comment = b[i..].starts_with(b"--") || b[i..].starts_with(b"/*") || b[i] == b'#';
            while let Some((_, _, name)) = next.next_if(|(at, _, _)| *at < end) {
                // SQLAlchemy reads no SQL: the engine's driver writes the value into the text
                // where the name stands. In a comment that changes nothing, unless the value
                // ends the comment; in a string or a quoted name it changes the text.
                let value = value_of(params, name)?;
                let ends_comment = value
                    .as_str()
                    .is_some_and(|text| text.contains('\n') || text.contains("*/"));
                if !comment || ends_comment {
                    let (where_, what) = match comment {
                        true => ("a comment", "ends the comment with its value"),
                        false => ("a string or a quoted name", "writes its value there"),
                    };
                    return Err(EngineError::stricter(
                        "query",
                        format!(
                            "The query holds :{name} inside {where_}: the data engine \
                             (SQLAlchemy, which reads no SQL) takes it for a parameter and \
                             {what}, or fails. Write the parameter outside it, or \\:{name} \
                             for the text."
                        ),
                    ));
                }
            }
            i = end;
            continue;
        }
        match next.peek() {
            Some(&&(at, end, ref name)) if at == i => {
                let text = bind(name, value_of(params, name)?, &mut bound)?;
                replaced.push((at, end, text));
                next.next();
                i = end;
            }
            _ => i += 1,
        }
    }
    replaced.extend(escapes.into_iter().map(|at| (at, at + 1, String::new())));
    Ok((replace(query, replaced), bound))
}

/// The refusal of an action's statement whose `:name` has no input: the action's `data` lacks
/// it.
fn missing_input(name: &str) -> EngineError {
    EngineError::field("data", format!("Missing input: {name}."))
}

/// `params[name]`, else the engine's refusal of a parameter without a value, naming it.
fn value_of<'p>(params: &'p Map<String, Json>, name: &str) -> Result<&'p Json, EngineError> {
    params.get(name).ok_or_else(|| {
        EngineError::field(
            "params_obj",
            format!(
                "No value for the parameter :{name}: add it to params_obj, with \"v\": 2 (without \
                 v the data engine reads the first format, whose values are params, and ignores \
                 params_obj)."
            ),
        )
    })
}

/// `query` with each byte range given replaced by its text (the ranges in any order, apart).
fn replace<T: AsRef<str>>(query: &str, mut replaced: Vec<(usize, usize, T)>) -> String {
    replaced.sort_unstable_by_key(|r| r.0);
    let mut out = String::with_capacity(query.len() + 16);
    let mut copied = 0;
    for (at, end, text) in replaced {
        out.push_str(&query[copied..at]);
        out.push_str(text.as_ref());
        copied = end;
    }
    out.push_str(&query[copied..]);
    out
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

/// A read-only query as SQLAlchemy's `text()` compiles it for a driver of positional
/// parameters (pysqlite's `?`), each `:name` replaced by what `bind` makes of `params[name]`
/// (as [`bind_names`]' binder): each `:name` (its name of word characters and `$`, not after a
/// `:`, a word character, a `$` or a backslash, not before a `:`) wherever it stands, in a
/// string, a quoted name or a comment too (SQLAlchemy does not read SQL); then `\:` loses its
/// backslash (`BIND_PARAMS` and `BIND_PARAMS_ESC` of SQLAlchemy 1.4's compiler). A `?` left in
/// a string is its text: the driver then counts fewer parameters than values, and fails, as
/// the engine fails.
pub fn bind_everywhere<V>(
    query: &str,
    params: &Map<String, Json>,
    mut bind: impl FnMut(&str, &Json, &mut Vec<V>) -> Result<String, EngineError>,
) -> Result<(String, Vec<V>), EngineError> {
    let (marks, escapes) = sqlalchemy_marks(query);
    let mut bound = Vec::with_capacity(marks.len());
    let mut replaced = Vec::with_capacity(marks.len() + escapes.len());
    for (at, end, name) in marks {
        let text = bind(&name, value_of(params, &name)?, &mut bound)?;
        replaced.push((at, end, text));
    }
    replaced.extend(escapes.into_iter().map(|at| (at, at + 1, String::new())));
    Ok((replace(query, replaced), bound))
}

/// The names of the `:name`s SQLAlchemy's `text()` finds in `query`, wherever they stand
/// ([`bind_everywhere`] says the rule), in order.
pub fn engine_names(query: &str) -> Vec<String> {
    sqlalchemy_marks(query).0.into_iter().map(|m| m.2).collect()
}

/// Where SQLAlchemy's `text()` finds each `:name` of `query` (the byte range of the `:` and
/// the name, and the name), and each backslash it drops (`\:`), in byte order
/// ([`bind_everywhere`] says the rule).
fn sqlalchemy_marks(query: &str) -> (Vec<(usize, usize, String)>, Vec<usize>) {
    let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let char_at = |i: usize| query[i..].chars().next();
    // The end of the run of word characters from byte `i`.
    let run_end = |mut i: usize| {
        while let Some(c) = char_at(i).filter(|&c| word(c)) {
            i += c.len_utf8();
        }
        i
    };
    let (mut marks, mut escapes) = (Vec::new(), Vec::new());
    let (mut i, mut before) = (0, None::<char>);
    while let Some(c) = char_at(i) {
        if c == ':' && !before.is_some_and(|b| b == ':' || b == '\\' || word(b)) {
            let end = run_end(i + 1);
            if end > i + 1 && char_at(end) != Some(':') {
                marks.push((i, end, query[i + 1..end].to_owned()));
                before = query[..end].chars().next_back();
                i = end;
                continue;
            }
        }
        // `\\:name` (or a `\\:` alone) is the name's text, unescaped.
        if c == '\\' && char_at(i + 1) == Some(':') && char_at(run_end(i + 2)) != Some(':') {
            escapes.push(i);
        }
        before = Some(c);
        i += c.len_utf8();
    }
    (marks, escapes)
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
        // Each name's `?`, and the names in their order.
        let compiled = |q: &str| {
            let (marks, _) = sqlalchemy_marks(q);
            let params: Map<String, Json> = marks.into_iter().map(|m| (m.2, Json::Null)).collect();
            let name = |name: &str, _: &Json, names: &mut Vec<String>| {
                names.push(name.to_owned());
                Ok("?".to_owned())
            };
            bind_everywhere(q, &params, name).unwrap()
        };
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

    /// A toy binder: each value as it is, its placeholder `?n`.
    fn numbered(_: &str, value: &Json, bound: &mut Vec<Json>) -> Result<String, EngineError> {
        bound.push(value.clone());
        Ok(format!("?{}", bound.len()))
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
        let bound = |q: &str| bind_outside(q, params, skip, numbered);
        let (text, values) =
            bound("SELECT :a, ':a', :b_2, :a::int, a:b_2, :1, 'it''s :a'").unwrap();
        assert_eq!(text, "SELECT ?1, ':a', ?2, ?3::int, a?4, :1, 'it''s :a'");
        assert_eq!(values, [json!(1), json!("x"), json!(1), json!("x")]);
        let missing = bound("SELECT :c").unwrap_err().to_string();
        assert_eq!(missing, "Missing input: c.");
        assert!(bound("SELECT $1").is_err());
        // An unterminated string runs to the end: nothing after it is bound.
        assert_eq!(bound("x ':a").unwrap(), ("x ':a".to_owned(), Vec::new()));
    }

    #[test]
    fn names_are_bound_where_sqlalchemy_finds_them() {
        let params = serde_json::json!({"a": 1, "b_2": "x"});
        let params = params.as_object().unwrap();
        // A toy dialect: '...' strings, `::` casts, and `$` refused.
        let skip = |b: &[u8], i: usize| match b[i] {
            b'\'' => Some(Ok(skip_quoted(b, i, b'\'', false))),
            b'-' if b.get(i + 1) == Some(&b'-') => Some(Ok(line_end(b, i))),
            b':' if b.get(i + 1) == Some(&b':') => Some(Ok(i + 2)),
            b'$' => Some(Err(EngineError::field("query", "no $"))),
            _ => None,
        };
        let bound = |q: &str| bind_as_engine(q, params, skip, numbered);
        // As SQLAlchemy's `text()` finds them: not before a `:` (`:a::int` is none), not after
        // a word character; `\\:a` is the text `:a`.
        let (text, values) = bound("SELECT :a, :b_2, :a::int, a:b_2, \\:a, :a").unwrap();
        assert_eq!(text, "SELECT ?1, ?2, :a::int, a:b_2, :a, ?3");
        assert_eq!(values, [json!(1), json!("x"), json!(1)]);
        let missing = bound("SELECT :c").unwrap_err().to_string();
        assert!(
            missing.contains("No value for the parameter :c"),
            "{missing}"
        );
        // A name of digits is one too (the engine asks for its value).
        assert!(bound("SELECT :1").is_err());
        assert!(bound("SELECT $1").is_err());
        // A `:name` the database reads as text (a string, an unterminated one too) is refused
        // by design: the engine's driver would write its value there; `'\\:a'` is `':a'`.
        // In a comment it needs its value, and stays text, unless its value ends the comment.
        assert_eq!(
            bound("SELECT 1 -- :a").unwrap(),
            ("SELECT 1 -- :a".to_owned(), vec![])
        );
        assert!(bound("SELECT 1 -- :c").is_err());
        assert!(
            bind_as_engine(
                "-- :a",
                &json!({"a": "x\ny"}).as_object().unwrap().clone(),
                skip,
                numbered
            )
            .is_err()
        );
        for q in ["SELECT ':a'", "SELECT 'it''s :a'", "x ':a"] {
            let refused = bound(q).unwrap_err();
            assert!(
                refused.to_string().contains("inside a string"),
                "{q}: {refused}"
            );
        }
        assert_eq!(bound("SELECT '\\:a'").unwrap().0, "SELECT ':a'");
    }
}
