//! One filter's condition, as every database writes the lookups it shares (`isnull`,
//! `isempty`, the `LIKE` family, `in`, the comparisons) over its [`Dialect`].

use std::cell::RefCell;

use crate::dialect::Dialect;
use crate::dialect::bind::Binds;
use svc_engine::field_input::InputDateTime;
use svc_engine::filter::Arg;
use svc_engine::table::Column;
use svc_engine::types::FilterFamily;
use svc_engine::{EngineError, Lookup};

/// One filter, as its condition is built: the query's key (`age__gt`), the column it names, the
/// request's mode, and where a failure of its statement is kept ([`fails_when_run`]).
///
/// [`fails_when_run`]: Filter::fails_when_run
#[derive(Debug)]
pub struct Filter<'a, F> {
    /// The query's key, which an error names.
    pub key: &'a str,
    /// The column.
    pub field: &'a F,
    /// Lenient mode.
    pub lenient: bool,
    /// The first failure of the selection's statement when it runs, if one fails.
    pub fails_when_run: &'a RefCell<Option<EngineError>>,
}

impl<F: Column> Filter<'_, F> {
    /// The engine fails on this filter as it reads it (`500`): strict mode refuses it naming
    /// the filter (`[decision: stricter]`), lenient mode answers the engine's `500`.
    pub fn engine_fails(&self, message: String) -> EngineError {
        EngineError::engine_fails(self.lenient, self.key, message)
    }

    /// The engine fails on this filter only when its statement runs (the database refuses the
    /// condition, or the driver the value): kept until the whole selection is read, since
    /// SQLAlchemy writes a selection that selects nothing (`_order_by` of one character) as
    /// `WHERE false` alone, and the engine then answers. Answers the text that stands in for
    /// the condition, never sent: the failure is answered unless the selection folds.
    pub fn fails_when_run(&self, message: String) -> String {
        let mut failed = self.fails_when_run.borrow_mut();
        if failed.is_none() {
            *failed = Some(self.engine_fails(message));
        }
        "NULL".to_owned()
    }

    /// The engine's reading of the filter's values, by the column's filter field.
    pub fn reader(&self) -> svc_engine::filter::ValueReader<'_> {
        svc_engine::filter::ValueReader {
            key: self.key,
            family: self.field.family(),
            lenient: self.lenient,
        }
    }

    /// A boolean value, as the filter field reads it.
    pub fn boolean(&self, raw: &str) -> Result<bool, EngineError> {
        self.reader().boolean(raw)
    }

    /// A date-time value, as the filter field reads it.
    pub fn datetime(&self, raw: &str) -> Result<InputDateTime, EngineError> {
        self.reader().datetime(raw)
    }

    /// `isnull` and `isempty` over the column `col` (of a text column, `''` is empty too); `None`
    /// for any other lookup.
    pub fn emptiness(
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
    pub fn unsupported(&self) -> EngineError {
        EngineError::field(
            self.key,
            format!("Unsupported lookup in filter {:?}.", self.key),
        )
    }
}

/// `col IN (items)`, or the database's always-false `never` when there are none.
pub fn in_list(col: &str, items: &[String], never: &str) -> String {
    if items.is_empty() {
        never.to_owned()
    } else {
        format!("{col} IN ({})", items.join(", "))
    }
}

/// A comparison of a column with a value: `=`, `>`, `>=`, `<`, `<=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// `=`
    Eq,
    /// `>`
    Gt,
    /// `>=`
    Gte,
    /// `<`
    Lt,
    /// `<=`
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
    pub fn sql(self) -> &'static str {
        match self {
            Cmp::Eq => "=",
            Cmp::Gt => ">",
            Cmp::Gte => ">=",
            Cmp::Lt => "<",
            Cmp::Lte => "<=",
        }
    }
}

/// The lookups every database server writes alike, over its [`Dialect`]: `isnull` and
/// `isempty`, the `LIKE` family (`icontains`, `istartswith`, `iendswith`, and
/// `json_icontains` over the column's text), `in`, and the comparisons. A database's
/// [`Dialect::condition`] answers its own cases first (values its driver cannot send), then
/// hands the rest here.
pub fn lookup_condition<L: Dialect + ?Sized>(
    filter: &Filter<'_, L::Field>,
    lookup: Lookup,
    arg: Arg<'_>,
    params: &mut Binds,
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
