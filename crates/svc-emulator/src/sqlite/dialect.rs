//! SQLite's words (`crate::dialect`): `IS` for an equality that matches NULLs, no lock clause,
//! and how its statements' text reads (quoted names in `"`, `` ` `` or `[...]`).

use crate::dialect::Dialect;
use crate::engine::error::EngineError;
use crate::engine::sql_params::{block_comment_end, line_end, skip_quoted};
use crate::sqlite::flows::Sqlite;

/// SQLite's words: `IS`, and no lock.
impl Dialect for Sqlite<'_> {
    const RESERVED_WORDS: &'static str = include_str!("reserved_words.txt");

    /// The resource's one writer connection is held for the whole flow (`with_writer`), so no
    /// other write can come between the read of the row and its write: a `SELECT` needs no
    /// lock of its own (SQLite has no `FOR UPDATE`).
    const LOCK: &'static str = "";

    /// Rows that share a key are read in the order the emulator reproduces (the index, or
    /// the table's), as the engine's SQLite reads them.
    const PLANNER_PICKS_TIES: bool = false;

    fn same_value(col: &str, value: &str) -> String {
        format!("{col} IS {value}")
    }

    /// Strings, quoted names (in `"`, `` ` `` or `[...]`) and comments.
    fn skip(b: &[u8], i: usize) -> Option<Result<usize, EngineError>> {
        Some(Ok(match b[i] {
            q @ (b'\'' | b'"' | b'`') => skip_quoted(b, i, q, false),
            b'[' => b[i..]
                .iter()
                .position(|c| *c == b']')
                .map_or(b.len(), |n| i + n + 1),
            b'-' if b.get(i + 1) == Some(&b'-') => line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => block_comment_end(b, i),
            _ => return None,
        }))
    }
}
