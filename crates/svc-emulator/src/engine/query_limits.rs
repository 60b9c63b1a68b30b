//! The limits of a read-only SQL query, the same on every backend (docs/contract.md 5.2).

use std::time::Duration;

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
pub(crate) struct SqlLimits {
    pub(crate) time: Duration,
    pub(crate) answer_bytes: usize,
}

impl Default for SqlLimits {
    fn default() -> Self {
        Self {
            time: SQL_TIME_LIMIT,
            answer_bytes: MAX_SQL_ANSWER_BYTES,
        }
    }
}
