//! A selection's `WHERE` clause, as the engine builds it on any database server: the promoted
//! key's `IS NOT NULL`, each filter's condition in the query's order, `_search`, `_relation`,
//! and `tz` read before any of them. What a lookup is in a database's SQL is its own
//! ([`Lookups`]).

use crate::dialect::Dialect;
use crate::dialect::clause::{Where, key_is_not_null, not, where_clause};
use crate::dialect::relation::{Related, RelationSql, relation_condition};
use crate::engine::field_input::InputDateTime;
use crate::engine::filter::Arg;
use crate::engine::plan::Plan;
use crate::engine::python::json::{PyJson, parse_py_json};
use crate::engine::python::text::py_text;
use crate::engine::relation::Use;
use crate::engine::table::{Column, Table};
use crate::engine::time_zone::{TZ_PARAM, tz_of};
use crate::engine::types::{FilterFamily, Search};
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
    /// The engine fails on this filter (`500`): strict mode refuses it naming the filter
    /// (`[decision: stricter]`), lenient mode answers the engine's `500`.
    pub(crate) fn engine_fails(&self, message: String) -> EngineError {
        EngineError::engine_fails(self.lenient, self.key, message)
    }

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

/// A comparison of a column with a value: `=`, `>`, `>=`, `<`, `<=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Gt,
    Gte,
    Lt,
    Lte,
}

impl Cmp {
    /// The comparison of a lookup that is one.
    fn of(lookup: Lookup) -> Option<Cmp> {
        Some(match lookup {
            Lookup::Exact => Cmp::Eq,
            Lookup::Gt => Cmp::Gt,
            Lookup::Gte => Cmp::Gte,
            Lookup::Lt => Cmp::Lt,
            Lookup::Lte => Cmp::Lte,
            _ => return None,
        })
    }

    /// The operator.
    pub(crate) fn sql(self) -> &'static str {
        match self {
            Cmp::Eq => "=",
            Cmp::Gt => ">",
            Cmp::Gte => ">=",
            Cmp::Lt => "<",
            Cmp::Lte => "<=",
        }
    }
}

/// The lookups every database server writes alike, over its [`Lookups`]: `isnull` and
/// `isempty`, the `LIKE` family (`icontains`, `istartswith`, `iendswith`, and
/// `json_icontains` over the column's text), `in`, and the comparisons. A database's
/// [`Lookups::condition`] answers its own cases first (values its driver cannot send), then
/// hands the rest here.
pub(crate) fn lookup_condition<L: Lookups + ?Sized>(
    filter: &Filter<'_, L::Field>,
    lookup: Lookup,
    arg: Arg<'_>,
    params: &mut L::Params,
) -> Result<String, EngineError> {
    let field = filter.field;
    let col = L::column(field);
    if let Some(condition) = filter.emptiness(col, L::is_text(field), lookup, arg) {
        return condition;
    }
    let json = field.family() == FilterFamily::Json;
    match lookup {
        Lookup::IContains => {
            let text = L::contained(filter, arg.first())?;
            Ok(L::ilike(field, format!("%{text}%"), params))
        }
        Lookup::IStartsWith => Ok(L::ilike(field, format!("{}%", arg.first()), params)),
        Lookup::IEndsWith => Ok(L::ilike(field, format!("%{}", arg.first()), params)),
        Lookup::JsonIContains => Ok(L::text_ilike(field, format!("%{}%", arg.first()), params)),
        Lookup::In if json => {
            let parts = arg
                .items()
                .into_iter()
                .map(|item| L::json_match(filter, item, true, params))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(if parts.is_empty() {
                L::NEVER.to_owned()
            } else {
                format!("({})", parts.join(" OR "))
            })
        }
        Lookup::In => {
            let mut list = Vec::new();
            for item in arg.items() {
                list.push(L::in_item(filter, item, params)?);
            }
            Ok(in_list(col, &list, L::NEVER))
        }
        Lookup::Exact if json => L::json_match(filter, arg.first(), false, params),
        _ => match Cmp::of(lookup) {
            Some(op) => L::compare(filter, op, arg.first(), params),
            None => Err(filter.unsupported()),
        },
    }
}

/// A database's SQL of a selection's parts.
pub(crate) trait Lookups: Dialect {
    /// A table.
    type Model: Table<Column = Self::Field>;
    /// A column.
    type Field: Column;
    /// Bound values.
    type Params: Default;

    /// The SQL of the tables and columns a `_relation` path names.
    const RELATED: RelationSql<Self::Model>;

    /// The column as the selection's conditions write it: by default its quoted name (MySQL
    /// qualifies it with its table).
    fn column(field: &Self::Field) -> &str {
        field.sql()
    }

    /// The engine's `key IS NOT NULL` on a promoted key.
    fn key_present(key: &Self::Field) -> String {
        key_is_not_null(Self::column(key))
    }

    /// `tz`, read before the filters (`engine::time_zone`): `Ok` where the database serves it
    /// for an operation that uses the selection as `use_` says. By default it is refused
    /// ([decision: stricter], docs/contract.md): the engine sets it as its session's time zone,
    /// which stays on its pooled connection for later requests (MySQL's case).
    fn time_zone(selection: &Selection, _use: Use) -> Result<(), EngineError> {
        match tz_of(selection) {
            Some(_) => Err(EngineError::stricter(
                TZ_PARAM,
                "tz on this database: the data engine sets it as the session's time zone, which \
                 stays on its pooled connection (later requests answer in that zone). Convert \
                 date-times in your code instead.",
            )),
            None => Ok(()),
        }
    }

    /// The column is SQLAlchemy's `String` (its `Enum` too): `isempty` matches `''` as well as
    /// NULL. These are the columns `_search` matches by their text ([`search_kind`]
    /// (Self::search_kind)) but JSON's, which SQLAlchemy does not type as a `String`.
    fn is_text(field: &Self::Field) -> bool {
        Self::search_kind(field) == Search::Contains && field.family() != FilterFamily::Json
    }

    /// `text` bound as a string, and its placeholder.
    fn bind_text(text: String, params: &mut Self::Params) -> String;

    /// The column is matched by its text where the engine's `ILIKE` reaches it (a type the
    /// database's `LIKE` does not take); by default, as it is.
    fn likes_as_text(_field: &Self::Field) -> bool {
        false
    }

    /// `col ILIKE pattern`, as the engine's SQLAlchemy writes it on the database.
    fn ilike(field: &Self::Field, pattern: String, params: &mut Self::Params) -> String {
        if Self::likes_as_text(field) {
            return Self::text_ilike(field, pattern, params);
        }
        let pattern = Self::bind_text(pattern, params);
        Self::like_any_case(Self::column(field), &pattern)
    }

    /// The column's text `ILIKE pattern` (`col.cast(Unicode).ilike(...)`).
    fn text_ilike(field: &Self::Field, pattern: String, params: &mut Self::Params) -> String {
        let pattern = Self::bind_text(pattern, params);
        Self::like_any_case(&Self::text_of(Self::column(field)), &pattern)
    }

    /// The text inside `%...%` of `icontains`: `'%{}%'.format(value)` of the filter field's
    /// value.
    fn contained(filter: &Filter<'_, Self::Field>, raw: &str) -> Result<String, EngineError>;

    /// The filter's value `raw` read as the column's (an `in` item where `in_list`: the engine
    /// reads some whole), bound: its placeholder.
    fn compared(
        filter: &Filter<'_, Self::Field>,
        raw: &str,
        in_list: bool,
        params: &mut Self::Params,
    ) -> Result<String, EngineError>;

    /// An `in` item, bound for the column's list.
    fn in_item(
        filter: &Filter<'_, Self::Field>,
        raw: &str,
        params: &mut Self::Params,
    ) -> Result<String, EngineError> {
        Self::compared(filter, raw, true, params)
    }

    /// `col op value` of `exact`, `gt`, `gte`, `lt` and `lte`.
    fn compare(
        filter: &Filter<'_, Self::Field>,
        op: Cmp,
        raw: &str,
        params: &mut Self::Params,
    ) -> Result<String, EngineError> {
        let value = Self::compared(filter, raw, false, params)?;
        Ok(format!(
            "{} {} {value}",
            Self::column(filter.field),
            op.sql()
        ))
    }

    /// A JSON column's `exact`, or one of its `in` items: by default, its text contains the
    /// value's as the engine writes it, `'%{}%'.format(value)` of what its `JSONField` read
    /// (`json.loads` where the text is JSON): `{"a": 1}` looks for `{'a': 1}`, `null` for
    /// `None`, `[1,2]` for `[1, 2]`; other text as it is.
    fn json_match(
        filter: &Filter<'_, Self::Field>,
        raw: &str,
        _in_list: bool,
        params: &mut Self::Params,
    ) -> Result<String, EngineError> {
        let value = parse_py_json(raw).unwrap_or_else(|_| PyJson::Str(raw.to_owned()));
        let text = py_text(&value);
        Ok(Self::text_ilike(filter.field, format!("%{text}%"), params))
    }

    /// One filter's condition (before `exclude__` negation): the database's own cases, then
    /// [`lookup_condition`].
    fn condition(
        filter: &Filter<'_, Self::Field>,
        lookup: Lookup,
        arg: Arg<'_>,
        params: &mut Self::Params,
    ) -> Result<String, EngineError>;

    /// How `_search` reaches the column.
    fn search_kind(field: &Self::Field) -> Search;

    /// The column's text equals `text` (`_search` of a number column).
    fn text_equals(field: &Self::Field, text: &str, params: &mut Self::Params) -> String {
        let text = Self::bind_text(text.to_owned(), params);
        format!("{} = {text}", Self::text_of(Self::column(field)))
    }

    /// The `_search` condition over the model's columns, OR-ed in column order, if any column
    /// is searched.
    fn search(model: &Self::Model, text: &str, params: &mut Self::Params) -> Option<String> {
        let mut parts = Vec::new();
        for f in model.columns() {
            match Self::search_kind(f) {
                Search::Equal => parts.push(Self::text_equals(f, text, params)),
                Search::Contains => parts.push(Self::text_ilike(f, format!("%{text}%"), params)),
                Search::Skip => {}
            }
        }
        (!parts.is_empty()).then(|| format!("({})", parts.join(" OR ")))
    }

    /// A `_relation` path's value, bound for a comparison with `field` (by default, as text).
    fn relation_value(_field: &Self::Field, raw: &str, params: &mut Self::Params) -> String {
        Self::bind_text(raw.to_owned(), params)
    }

    /// A binary column (SQLAlchemy's `LargeBinary` and its `BINARY`/`VARBINARY`): its bind
    /// processor takes bytes only, so a value given as text fails in the engine (500). By
    /// default none.
    fn binary(_field: &Self::Field) -> bool {
        false
    }
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
    let plan = Plan::of(
        model.table_name(),
        &fields,
        selection,
        model.has_relationships(),
    );
    // A promoted key leaves out rows without one, in every view (the engine's queryset of such
    // a model is `filter(pk.isnot(None))`).
    let mut conds: Vec<String> = model
        .promoted_key()
        .then(|| L::key_present(model.pk_field()))
        .into_iter()
        .collect();
    for c in &plan.conditions {
        let filter = Filter {
            key: &c.key,
            field: &model.columns()[c.field],
            lenient: selection.lenient,
        };
        let condition = L::condition(&filter, c.lookup, c.arg(), &mut params)?;
        conds.push(if c.exclude {
            not(&condition)
        } else {
            condition
        });
    }
    let declared = plan.declared?;
    if declared.nothing {
        conds.push(L::NEVER.to_owned());
    }
    if let Some(text) = declared.search {
        conds.extend(L::search(model, text, &mut params));
    }
    if let Some(path) = &declared.relation {
        let condition = relation_condition(
            model,
            path,
            related,
            selection.lenient,
            &L::RELATED,
            |f, raw| {
                if L::binary(f) {
                    return Err(EngineError::engine_fails(
                        selection.lenient,
                        "_relation",
                        format!(
                            "_relation compares the binary field {:?} with a text, which the \
                             data engine cannot send to the database (it fails with a 500).",
                            f.name()
                        ),
                    ));
                }
                Ok(L::relation_value(f, raw, &mut params))
            },
        )?;
        conds.push(condition);
    }
    Ok(Where {
        sql: where_clause(&conds),
        params,
    })
}
