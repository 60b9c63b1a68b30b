//! The limits of a read-only SQL query, the same on every backend (docs/contract.md 5.2).

use std::time::Duration;

use crate::json_text::write_json_str;

/// The most rows a query returns; reading stops there.
pub const MAX_SQL_ROWS: usize = 10_000;

/// How long a query may run before it is interrupted.
pub const SQL_TIME_LIMIT: Duration = Duration::from_secs(10);

/// The largest answer, in bytes of JSON: far above [`MAX_SQL_ROWS`] rows of any real width.
pub const MAX_SQL_ANSWER_BYTES: usize = 32 * 1024 * 1024;

/// What one query may take: time (from outside the statement: an interrupt at the deadline,
/// the encoding of the answer included) and the size of its answer. Any single value is limited
/// to half the answer (SQLite's `SQLITE_LIMIT_LENGTH` while the query runs), so that a query
/// like `randomblob(999999999)` fails inside SQLite before it allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqlLimits {
    /// The time a query may run, its answer's encoding included.
    pub time: Duration,
    /// The most bytes of JSON its answer may take.
    pub answer_bytes: usize,
}

impl Default for SqlLimits {
    fn default() -> Self {
        Self {
            time: SQL_TIME_LIMIT,
            answer_bytes: MAX_SQL_ANSWER_BYTES,
        }
    }
}

/// Writes the head of a query's answer, `{"columns":[...],"data":`, from its column names; the
/// rows follow as a JSON array, then `"row_count"`.
pub fn write_answer_head(buf: &mut Vec<u8>, names: &[String]) {
    buf.extend_from_slice(b"{\"columns\":[");
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        write_json_str(buf, name);
    }
    buf.extend_from_slice(b"],\"data\":");
}
