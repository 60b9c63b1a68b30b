//! A selection's `WHERE` clause: the conditions the engine's filter grammar reads
//! (`svc_engine::filter`), ANDed, with their bound values in the form the database's driver takes.

use svc_engine::EngineError;
use svc_engine::table::{OrderBy, Table, order_by};

/// The negation of `condition`: an excluded filter (`exclude__...`).
pub fn not(condition: &str) -> String {
    format!("NOT ({condition})")
}

/// `key IS NOT NULL`, the engine's condition on a promoted key (`key`, the column's SQL).
pub fn key_is_not_null(key: &str) -> String {
    format!("{key} IS NOT NULL")
}

/// A `WHERE` clause (empty, or starting with ` WHERE `) and its bound values, in the form
/// its database's driver takes them.
#[derive(Debug, Default, Clone)]
pub struct Where<P> {
    /// The clause's SQL.
    pub sql: String,
    /// Its bound values.
    pub params: P,
}

impl<P: Default> Where<P> {
    /// A clause that selects nothing, with `never`, the database's always-false condition
    /// (the engine's answer to a one-character `_order_by`).
    pub fn nothing(never: &str) -> Self {
        Where {
            sql: format!(" WHERE {never}"),
            params: P::default(),
        }
    }

    /// The clause with `cond` added: ANDed to the filters, or alone when there are none.
    pub fn and(&self, cond: &str) -> String {
        match self.sql.strip_prefix(" WHERE ") {
            Some(filters) => format!(" WHERE ({filters}) AND ({cond})"),
            None => format!(" WHERE {cond}"),
        }
    }
}

/// ` WHERE a AND b ...` of conditions, or nothing.
pub fn where_clause(conds: &[String]) -> String {
    if conds.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conds.join(" AND "))
    }
}

/// An aggregate's or a group's selection: its filters (`filter`, built first: the engine runs
/// column filters before `_order_by`, so their errors come first) and its `_order_by`
/// ([`order_by`]). When `_order_by` empties the selection, the filters give way to `never`, the
/// database's always-false condition (SQLAlchemy folds `filters AND false` into it).
pub fn filtered_order_by<'m, T: Table, P: Default>(
    model: &'m T,
    filter: Where<P>,
    values: &[String],
    never: &str,
) -> Result<(Where<P>, OrderBy<'m, T::Column>), EngineError> {
    let order = order_by(model, values)?;
    let filter = match order {
        OrderBy::Nothing => Where::nothing(never),
        _ => filter,
    };
    Ok((filter, order))
}
