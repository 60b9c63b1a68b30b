//! The condition a `_relation` path puts on a model's rows ([`svc_engine::relation`] reads
//! the parameter), written once over [`Table`] for every database: the first step's column
//! `IN` a sub-select of the next table's key, and so on, down to the last column `IN` the
//! values. Each database gives only its SQL of a table, a column and a bound text.

use std::sync::Arc;

use svc_engine::EngineError;
use svc_engine::relation::{RelationPath, Use, fails, misread};
use svc_engine::table::Table;

/// Finds a model of the resource by name.
pub type FindModel<'a, T> = Box<dyn Fn(&str) -> Option<Arc<T>> + Send + Sync + 'a>;

/// What an operation's selection may join to, and what it does with what it selects.
pub struct Related<'a, T> {
    /// The model named `name`, if the resource has one.
    pub find: FindModel<'a, T>,
    /// The operation's use of the selection.
    pub use_: Use,
}

impl<T> std::fmt::Debug for Related<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Related")
            .field("use_", &self.use_)
            .finish_non_exhaustive()
    }
}

/// Each database's SQL of a table, of a column inside its table's own `SELECT`, and of the
/// model's column in the request's filters (qualified where the database's list queries join).
#[derive(Debug)]
pub struct RelationSql<T: Table> {
    /// A table's name.
    pub table_sql: fn(&T) -> String,
    /// A column inside its table's own `SELECT`.
    pub column_sql: fn(&T::Column) -> String,
    /// The model's column in the request's filters.
    pub outer_sql: fn(&T::Column) -> String,
}

/// The condition of `path` on the rows of `model`, each value written by `bind` (a text
/// compared with its column, as the engine's driver binds it; `Err` where the engine cannot
/// bind it).
pub fn relation_condition<T: Table>(
    model: &T,
    path: &RelationPath,
    related: &Related<'_, T>,
    lenient: bool,
    dialect: &RelationSql<T>,
    mut bind: impl FnMut(&T::Column, &str) -> Result<String, EngineError>,
) -> Result<String, EngineError> {
    let use_ = related.use_;
    // A path without joins filters the model's own column, in an aggregate as in a list.
    if use_ == Use::Aggregate && !path.hops.is_empty() {
        return Err(misread(
            "_relation with joins in an aggregate or a group: the data engine keeps the path's \
             condition but not its joins (every row counts once per row of the joined tables). \
             Filter the model's own columns instead."
                .to_owned(),
        ));
    }
    let unknown_column = |table: &str, column: &str| {
        fails(
            lenient,
            format!(
                "_relation names column {column:?} of {table:?}, which has no such column: the \
                 data engine fails (500)."
            ),
        )
    };
    let first_name = path.hops.first().map_or(&path.column, |h| &h.from);
    let first = model
        .field(first_name)
        .ok_or_else(|| unknown_column(model.table_name(), first_name))?;
    let mut sql = format!("{} IN (", (dialect.outer_sql)(first));
    // Each joined table, kept for the last one's column.
    let mut tables: Vec<Arc<T>> = Vec::with_capacity(path.hops.len());
    // SQLAlchemy refuses to join a table the query already has (the engine fails).
    let mut joined = vec![model.table_name().to_owned()];
    for (i, hop) in path.hops.iter().enumerate() {
        if joined.contains(&hop.table) {
            return Err(fails(
                lenient,
                format!(
                    "_relation joins {:?} a second time, which the data engine fails on (500).",
                    hop.table
                ),
            ));
        }
        joined.push(hop.table.clone());
        let table = (related.find)(&hop.table).ok_or_else(|| {
            fails(
                lenient,
                format!(
                    "_relation names table {:?}, which the resource has no model of: the data \
                     engine fails (500).",
                    hop.table
                ),
            )
        })?;
        let to = table
            .field(&hop.to)
            .ok_or_else(|| unknown_column(&hop.table, &hop.to))?;
        let reaches_one_row = table.field_index(&hop.to) == Some(table.key_index())
            && !table.promoted_key()
            && table.key_is_whole();
        if use_ == Use::List && !reaches_one_row {
            return Err(misread(format!(
                "_relation joins {:?} on {:?}, which is not its key: the data engine counts \
                 each joined row and lists each record once, so its count and pages disagree \
                 with its records. Join on a key.",
                hop.table, hop.to
            )));
        }
        let next_name = path.hops.get(i + 1).map_or(&path.column, |h| &h.from);
        let next = table
            .field(next_name)
            .ok_or_else(|| unknown_column(&hop.table, next_name))?;
        sql.push_str(&format!(
            "SELECT {} FROM {} WHERE {} IN (",
            (dialect.column_sql)(to),
            (dialect.table_sql)(&table),
            (dialect.column_sql)(next)
        ));
        tables.push(table);
    }
    // The values are compared with the last table's column, or the model's own.
    let compared = match tables.last() {
        Some(table) => table.field(&path.column),
        None => Some(first),
    };
    let values: Vec<String> = match compared {
        Some(column) => path
            .values
            .iter()
            .map(|v| bind(column, v))
            .collect::<Result<_, _>>()?,
        None => Vec::new(),
    };
    sql.push_str(&values.join(", "));
    sql.push_str(&")".repeat(path.hops.len() + 1));
    Ok(sql)
}
