//! SQL text, pure and synchronous: what every database writes the same way (ANSI SQL), over
//! the engine's rules. A database's own words (its quoting, binds, casts, lookups, date
//! buckets) are its folder's; the flows run the statements.
//!
//! - [`clause`]: a selection's `WHERE` clause and its bound values, an excluded filter's `NOT`,
//!   a promoted key's `IS NOT NULL`, and the always-false clause of an `_order_by` that selects
//!   nothing.
//! - [`seek`]: the condition that seeks past a page's last row, in a database's NULL order.
//! - [`relation`]: a `_relation` path's nested `IN (SELECT ...)`.
//! - [`group`]: the engine's group statement, and SQLAlchemy's text of its query object (for
//!   the engine's message about an unknown aggregate function).
//!
//! [`Dialect`] is what a database says in its own words: each item has the ANSI form by
//! default, and a database overrides only what it writes otherwise.

pub(crate) mod clause;
pub(crate) mod group;
pub(crate) mod relation;
pub(crate) mod seek;

use crate::engine::EngineError;
use crate::engine::sql_params::{block_comment_end, line_end, skip_quoted};

/// A database's words in SQL text, pure and synchronous. Each item is written as ANSI SQL by
/// default (the form at least one served database takes as it is); a database overrides what
/// it writes its own way. The flows write their statements with these and bind nothing here:
/// a value's placeholder is the database's `Lookups::bind_text` or `Database::bind`.
pub(crate) trait Dialect {
    /// The always-false condition, as SQLAlchemy writes `false()` on the database: `0 = 1`
    /// where the database has no boolean literal the engine's SQLAlchemy uses (PostgreSQL
    /// writes `false`).
    const NEVER: &'static str = "0 = 1";

    /// What a `SELECT` adds to lock the rows it reads until the transaction ends (SQLite,
    /// whose writer holds the database, adds nothing).
    const LOCK: &'static str = " FOR UPDATE";

    /// The statement that begins a transaction (MySQL writes `START TRANSACTION`).
    const BEGIN: &'static str = "BEGIN";

    /// What follows `INSERT INTO table` for a row of nothing but its defaults (MySQL writes
    /// `() VALUES ()`).
    const DEFAULTS_ONLY: &'static str = "DEFAULT VALUES";

    /// The type a column is cast to for its text (`col.cast(Unicode)`: MySQL's `CHAR`).
    const TEXT_TYPE: &'static str = "VARCHAR";

    /// Whether `LIMIT 1` over rows that tie may answer any of them, as the planner chooses
    /// from the table's statistics (a database server's): then which row the engine answers
    /// for a key that several rows share cannot be known, and strict mode refuses the
    /// retrieve (`flow::read::retrieve`). SQLite reads them in an order the emulator
    /// reproduces (docs/contract.md 5.1).
    const PLANNER_PICKS_TIES: bool = true;

    /// The words SQLAlchemy 1.4's dialect quotes in a query's text (its `RESERVED_WORDS`),
    /// lower-case, separated by white space: each database keeps its list in a text file
    /// beside its code.
    const RESERVED_WORDS: &'static str;

    /// The always-false condition as SQLAlchemy writes `false()` in a query's text
    /// (`str(query)`, `group::query_text`); by default as the flows write it (MySQL's text
    /// says `false = 1`).
    const QUERY_NEVER: &'static str = Self::NEVER;

    /// An identifier, quoted (MySQL's backticks).
    fn quote(name: &str) -> String {
        quote_ident(name)
    }

    /// `col` holds `value` already, NULL included (MySQL's `<=>`, SQLite's `IS`).
    fn same_value(col: &str, value: &str) -> String {
        format!("{col} IS NOT DISTINCT FROM {value}")
    }

    /// A JSON column `col` holds what the ORM loads as `None`: NULL, or JSON's `null` (the
    /// text `null` where the column holds its text, as SQLite's does).
    fn loads_none(col: &str) -> String {
        format!("({col} IS NULL OR {col} = 'null')")
    }

    /// `text` matches `pattern` whatever the case of either (PostgreSQL's `ILIKE`).
    fn like_any_case(text: &str, pattern: &str) -> String {
        format!("lower({text}) LIKE lower({pattern})")
    }

    /// `col`'s text: `CAST(col AS <TEXT_TYPE>)`.
    fn text_of(col: &str) -> String {
        format!("CAST({col} AS {})", Self::TEXT_TYPE)
    }

    /// Where what starts at byte `i` of a statement and holds no `:name` ends (a string, a
    /// quoted name, a comment), for a statement's `:name`s (`engine::sql_params::bind_names`);
    /// `None` where nothing is skipped at `i`, `Err` for what the database's text allows and
    /// the binding cannot read. ANSI: `'...'` strings, `"..."` names, `--` and `/* */` comments.
    fn skip(b: &[u8], i: usize) -> Option<Result<usize, EngineError>> {
        Some(Ok(match b[i] {
            q @ (b'\'' | b'"') => skip_quoted(b, i, q, false),
            b'-' if b.get(i + 1) == Some(&b'-') => line_end(b, i),
            b'/' if b.get(i + 1) == Some(&b'*') => block_comment_end(b, i),
            _ => return None,
        }))
    }
}

/// Quotes an identifier as ANSI SQL does: `"` + the name with `"` doubled + `"`.
pub(crate) fn quote_ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('"');
    for c in name.chars() {
        if c == '"' {
            s.push('"');
        }
        s.push(c);
    }
    s.push('"');
    s
}
