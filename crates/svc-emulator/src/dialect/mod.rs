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

pub(crate) mod clause;
pub(crate) mod group;
pub(crate) mod relation;
pub(crate) mod seek;

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
