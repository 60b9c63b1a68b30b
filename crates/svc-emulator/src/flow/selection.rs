//! A selection's `WHERE` clause, as the engine builds it on any database server: the promoted
//! key's `IS NOT NULL`, each filter's condition in the query's order, `_search`, `_relation`,
//! and `tz` read before any of them. What a lookup is in a database's SQL is its own
//! ([`Lookups`]).

use crate::engine::convert::InputDateTime;
use crate::engine::filter::{Arg, Where, key_is_not_null, selection_conditions, where_clause};
use crate::engine::related::{Dialect, Related, relation_condition};
use crate::engine::relation::Use;
use crate::engine::table::{Column, Table};
use crate::engine::{EngineError, Lookup, Selection};

/// One filter, as its condition is built: the query's key (`age__gt`), the column it names, and
/// the request's mode.
pub(crate) struct Filter<'a, F> {
    /// The query's key, which an error names.
    pub(crate) key: &'a str,
    /// The column.
    pub(crate) field: &'a F,
    /// Lenient mode.
    pub(crate) lenient: bool,
}

impl<F: Column> Filter<'_, F> {
    /// The engine's reading of the filter's values, by the column's filter field.
    pub(crate) fn reader(&self) -> crate::engine::filter::ValueReader<'_> {
        crate::engine::filter::ValueReader {
            key: self.key,
            family: self.field.family(),
            lenient: self.lenient,
        }
    }

    /// A boolean value, as the filter field reads it.
    pub(crate) fn boolean(&self, raw: &str) -> Result<bool, EngineError> {
        self.reader().boolean(raw)
    }

    /// A date-time value, as the filter field reads it.
    pub(crate) fn datetime(&self, raw: &str) -> Result<InputDateTime, EngineError> {
        self.reader().datetime(raw)
    }

    /// `isnull` and `isempty` over the column `col` (of a text column, `''` is empty too); `None`
    /// for any other lookup.
    pub(crate) fn emptiness(
        &self,
        col: &str,
        text: bool,
        lookup: Lookup,
        arg: Arg<'_>,
    ) -> Option<Result<String, EngineError>> {
        let (Lookup::IsNull | Lookup::IsEmpty) = lookup else {
            return None;
        };
        Some(
            self.boolean(arg.first())
                .map(|yes| match (lookup, text, yes) {
                    (Lookup::IsEmpty, true, true) => format!("({col} IS NULL OR {col} = '')"),
                    (Lookup::IsEmpty, true, false) => {
                        format!("({col} IS NOT NULL AND {col} != '')")
                    }
                    (_, _, true) => format!("{col} IS NULL"),
                    (_, _, false) => format!("{col} IS NOT NULL"),
                }),
        )
    }

    /// The `400` of a lookup the column's filter has not.
    pub(crate) fn unsupported(&self) -> EngineError {
        EngineError::field(
            self.key,
            format!("Unsupported lookup in filter {:?}.", self.key),
        )
    }
}

/// `col IN (items)`, or the database's always-false `never` when there are none.
pub(crate) fn in_list(col: &str, items: &[String], never: &str) -> String {
    if items.is_empty() {
        never.to_owned()
    } else {
        format!("{col} IN ({})", items.join(", "))
    }
}

/// A database's SQL of a selection's parts.
pub(crate) trait Lookups {
    /// A table.
    type Model: Table<Column = Self::Field>;
    /// A column.
    type Field: Column;
    /// Bound values.
    type Params: Default;

    /// The SQL of the tables and columns a `_relation` path names.
    const RELATED: Dialect<Self::Model>;

    /// The database's always-false condition.
    const NEVER: &'static str;

    /// The column as the selection's conditions write it.
    fn column(field: &Self::Field) -> &str;

    /// `tz`, read before the filters (`engine::time_zone`): `Ok` where the database serves it
    /// for an operation that uses the selection as `use_` says.
    fn time_zone(selection: &Selection, use_: Use) -> Result<(), EngineError>;

    /// One filter's condition (before `exclude__` negation).
    fn condition(
        filter: &Filter<'_, Self::Field>,
        lookup: Lookup,
        arg: Arg<'_>,
        params: &mut Self::Params,
    ) -> Result<String, EngineError>;

    /// The `_search` condition over the model's columns, if any column is searched.
    fn search(model: &Self::Model, text: &str, params: &mut Self::Params) -> Option<String>;

    /// A `_relation` path's value, bound for a comparison with `field`.
    fn relation_value(field: &Self::Field, raw: &str, params: &mut Self::Params) -> String;
}

/// The `WHERE` clause of a selection, as the engine builds it.
pub(crate) fn build_where<L: Lookups + ?Sized>(
    model: &L::Model,
    selection: &Selection,
    related: &Related<'_, L::Model>,
) -> Result<Where<L::Params>, EngineError> {
    L::time_zone(selection, related.use_)?;
    let mut params = L::Params::default();
    let fields = model.filter_fields();
    let conds = selection_conditions(
        model.table_name(),
        &fields,
        selection,
        model
            .promoted_key()
            .then(|| key_is_not_null(L::column(model.pk_field()))),
        &mut params,
        |params, index, key, lookup, arg| {
            let filter = Filter {
                key,
                field: &model.columns()[index],
                lenient: selection.lenient,
            };
            L::condition(&filter, lookup, arg, params)
        },
        |params, text| L::search(model, text, params),
        |params, path| {
            relation_condition(
                model,
                path,
                related,
                selection.lenient,
                &L::RELATED,
                |f, raw| L::relation_value(f, raw, params),
            )
        },
    )?;
    Ok(Where {
        sql: where_clause(&conds),
        params,
    })
}
