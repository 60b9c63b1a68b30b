//! PostgreSQL's words (`crate::dialect`): `false`, `ILIKE`, a JSON value's text, and how its
//! statements' text reads (dollar quotes, `E'...'` strings, nested comments, `::` casts).

use crate::dialect::Dialect;
use crate::engine::EngineError;
use crate::engine::sql_answer::query_error;
use crate::engine::sql_params::{line_end, skip_quoted};
use crate::postgres::PgResource;
use crate::postgres::filter::NEVER;

/// PostgreSQL's words.
impl Dialect for PgResource {
    const NEVER: &'static str = NEVER;

    const RESERVED_WORDS: &'static str = include_str!("reserved_words.txt");

    fn like_any_case(text: &str, pattern: &str) -> String {
        format!("{text} ILIKE {pattern}")
    }

    /// The column read as text: `col::text` (PostgreSQL compares a JSON column with nothing).
    fn loads_none(col: &str) -> String {
        format!("({col} IS NULL OR {col}::text = 'null')")
    }

    /// Strings (backslash escapes in `E'...'`), quoted names, comments, dollar quotes and `::`
    /// casts.
    fn skip(b: &[u8], i: usize) -> Option<Result<usize, EngineError>> {
        Some(Ok(match b[i] {
            b'\'' => skip_quoted(
                b,
                i,
                b'\'',
                b[..i].last().is_some_and(|c| *c == b'E' || *c == b'e'),
            ),
            b'"' => skip_quoted(b, i, b'"', false),
            b'-' if b.get(i + 1) == Some(&b'-') => line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => skip_block_comment(b, i),
            b'$' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                return Some(Err(query_error(
                    "Positional parameters ($1) are not supported: name them (:name) and give \
                     their values in params_obj.",
                )));
            }
            b'$' => skip_dollar_quote(b, i),
            b':' if b.get(i + 1) == Some(&b':') => i + 2,
            _ => return None,
        }))
    }
}

/// The end of a (nested) block comment starting at `at`.
fn skip_block_comment(b: &[u8], at: usize) -> usize {
    let mut depth = 0;
    let mut i = at;
    while i + 1 < b.len() {
        if b[i] == b'/' && b[i + 1] == b'*' {
            depth += 1;
            i += 2;
        } else if b[i] == b'*' && b[i + 1] == b'/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    b.len()
}

/// The end of a dollar-quoted string `$tag$...$tag$` starting at `at`, or `at + 1` when the
/// `$` starts none.
fn skip_dollar_quote(b: &[u8], at: usize) -> usize {
    let mut end = at + 1;
    while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
        end += 1;
    }
    if b.get(end) != Some(&b'$') {
        return at + 1;
    }
    let tag = &b[at..=end];
    let body = end + 1;
    b[body..]
        .windows(tag.len())
        .position(|w| w == tag)
        .map_or(b.len(), |p| body + p + tag.len())
}
