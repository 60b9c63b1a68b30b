//! MySQL's words (`crate::dialect`): backquotes, `<=>`, `START TRANSACTION`, a JSON value's type,
//! and how its statements' text reads (`#` comments, executable comments, optimizer hints).

use crate::dialect::Dialect;
use crate::engine::EngineError;
use crate::engine::sql_answer::query_error;
use crate::engine::sql_params::{block_comment_end, line_end, starts_name};
use crate::mysql::MyResource;
use crate::mysql::read_only_sql::skip_quoted;
use crate::mysql::schema::quote_ident;

/// MySQL's words.
impl Dialect for MyResource {
    const BEGIN: &'static str = "START TRANSACTION";

    const DEFAULTS_ONLY: &'static str = "() VALUES ()";

    const TEXT_TYPE: &'static str = "CHAR";

    /// MySQL's; MariaDB's differ (`Summary::query_dialect`).
    const RESERVED_WORDS: &'static str = include_str!("reserved_words_mysql.txt");

    const QUERY_NEVER: &'static str = "false = 1";

    fn quote(name: &str) -> String {
        quote_ident(name)
    }

    fn same_value(col: &str, value: &str) -> String {
        format!("{col} <=> {value}")
    }

    fn loads_none(col: &str) -> String {
        format!("({col} IS NULL OR JSON_TYPE({col}) = 'NULL')")
    }

    /// Strings, quoted names, comments and `:=`. An executable comment (`/*! ... */`, MariaDB's `/*M! ... */`) is
    /// SQL that the server runs: its names are bound as anywhere else.
    fn skip(b: &[u8], i: usize) -> Option<Result<usize, EngineError>> {
        Some(Ok(match b[i] {
            q @ (b'\'' | b'"' | b'`') => skip_quoted(b, i, q),
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2)
                    .is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
            {
                line_end(b, i)
            }
            b'#' => line_end(b, i),
            b'/' if b[i..].starts_with(b"/*!") => i + 3,
            b'/' if b[i..].starts_with(b"/*M!") => i + 4,
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = block_comment_end(b, i);
                // The driver reads names inside optimizer hints, which the server does not.
                if b.get(i + 2) == Some(&b'+') && has_name(&b[i..end]) {
                    return Some(Err(query_error(
                        "Parameters (:name) inside optimizer hints (/*+ ... */) are not \
                         supported: move them out of the comment.",
                    )));
                }
                end
            }
            b'?' => {
                return Some(Err(query_error(
                    "Positional parameters (?) are not supported: name them (:name) and give \
                     their values in params_obj.",
                )));
            }
            b':' if b.get(i + 1) == Some(&b'=') => i + 2,
            _ => return None,
        }))
    }
}

/// Whether `b` holds a `:name`.
fn has_name(b: &[u8]) -> bool {
    b.windows(2).any(|w| w[0] == b':' && starts_name(w[1]))
}
