//! Aggregate and group on a PostgreSQL resource, as the engine answers them there.
//!
//! The requests are read as on SQLite ([`svc_engine::AggregateRequest`],
//! [`svc_engine::GroupRequest`]); the SQL is PostgreSQL's own `count`, `sum`, `min`,
//! `max` and `avg` (so `sum` of a `bigint` is a `numeric`, `avg` of integers a `numeric`), and
//! a group's date lookups are `date_trunc` with the engine's units (`date_second` truncates
//! to the minute, as the engine's table says; `week` and `quarter` work). Each value is read
//! with its PostgreSQL type (as a [`Py`]) and written as the engine writes it: an aggregate by
//! the y column's serializer field, group rows by the engine's JSON encoder (a `Decimal` as a
//! float, an aware date-time in UTC ending in `Z`).

use serde_json::{Map, Value as Json};
use tokio_postgres::Row;

use crate::PgResource;
use crate::schema::{PgField, PgModel};
use crate::types::{
    Offset, PgKind, date_kind, finite, float_items, hex_bytes, interval, iso_time, parse_float,
    python_cannot_hold, timestamp, timetz,
};
use svc_emulator_core::dialect::group::{group_label, group_statement};
use svc_emulator_core::flow::aggregate::Aggregates;
use svc_engine::aggregate::{
    date_unit, fails, group_name, not_json_refused, read_refused, y_func, zero_if_null,
};
use svc_engine::python::Py;
use svc_engine::table::GroupColumns;
use svc_engine::types::Serializer;
use svc_engine::{AggregateFunc, EngineError, GroupRequest};

/// [`read`], or the engine's failure (`500`) where psycopg2 cannot read the value: a date or
/// date-time whose year Python cannot hold (`param` and `field` name where it came from).
fn read_held(
    ty: &str,
    text: Option<String>,
    param: &str,
    field: &PgField,
) -> Result<Py, EngineError> {
    if !(date_kind(ty).is_some() && text.as_deref().is_some_and(python_cannot_hold)) {
        return Ok(read(ty, text));
    }
    let why = format!(
        "A value of {:?} here is a date whose year Python cannot hold (before 1, or past 9999): \
         psycopg2 fails reading it, and the data engine with a 500. Filter such rows out.",
        field.name
    );
    Err(fails(param, why))
}

/// The value of PostgreSQL text `text` of type `ty` (`pg_typeof`) as psycopg2 gives it.
fn read(ty: &str, text: Option<String>) -> Py {
    let Some(text) = text else {
        return Py::None;
    };
    match ty {
        // psycopg2 reads an `oid` as a Python int.
        "smallint" | "integer" | "bigint" | "oid" => Py::Int(text),
        "numeric" => Py::Decimal(text),
        "real" | "double precision" => Py::Float(parse_float(&text)),
        "boolean" => Py::Bool(matches!(text.as_str(), "t" | "true")),
        "date" => Py::Date(finite(PgKind::Date, &text).to_owned()),
        "timestamp without time zone" => timestamp(finite(PgKind::Timestamp, &text)),
        "timestamp with time zone" => timestamp(finite(PgKind::TimestampTz, &text)),
        "json" | "jsonb" => Py::Json(text),
        // `bytea`, from its hex text: bytes, which the engine's encoder decodes as UTF-8.
        "bytea" => Py::Bytes(hex_bytes(&text)),
        "interval" => interval(&text),
        "time without time zone" => Py::Time(iso_time(&text), None),
        "time with time zone" => timetz(&text),
        // An array, from `to_json`: its `Decimal`s and floats as floats.
        array if array.ends_with("[]") => Py::List(
            if array.starts_with("numeric")
                || array.starts_with("real")
                || array.starts_with("double precision")
            {
                float_items(&text)
            } else {
                serde_json::from_str(&text).unwrap_or(Json::Null)
            },
        ),
        _ => Py::Str(text),
    }
}

/// The aggregate's value written by the y column's serializer field (an integer field for
/// `count`).
fn serialized(func: AggregateFunc, field: &PgField, v: &Py, tz: Offset) -> Json {
    if func == AggregateFunc::Count {
        return v.encoded();
    }
    v.serialized(field.kind.serializer(), tz)
}

/// Group values the engine's JSON encoder cannot write whatever they are (it fails, `500`):
/// aware times (`JSON can't represent timezone-aware times`) and ranges (`Object of type
/// NumericRange is not JSON serializable`); the `min` or `max` of a `bytea`. `bytea` keys are
/// written when they are UTF-8 ([`Py::encodable`]).
fn unencodable(xs: &[&PgField], y: &PgField, func: AggregateFunc) -> Result<(), EngineError> {
    let y_kept = matches!(func, AggregateFunc::Min | AggregateFunc::Max).then_some(y);
    for (param, field) in xs
        .iter()
        .map(|x| ("_x_column", *x))
        .chain(y_kept.map(|y| ("_y_column", y)))
    {
        let what = match field.kind {
            PgKind::Bytea if param == "_y_column" => "bytea",
            PgKind::TimeTz => "time with time zone",
            PgKind::Range => "range",
            _ => continue,
        };
        return Err(fails(
            param,
            format!(
                "Cannot group by or show the {what} field {:?}: the data engine's JSON encoder \
                 fails on its values (500).",
                field.name
            ),
        ));
    }
    Ok(())
}

/// `date_trunc`'s unit for the engine's `date_<unit>` lookups.
fn trunc_unit(param: &str) -> Option<&'static str> {
    Some(match param {
        "microsecond" => "microseconds",
        "millisecond" => "milliseconds",
        "second" | "minute" => "minute",
        "hour" => "hour",
        "day" => "day",
        "week" => "week",
        "month" => "month",
        "quarter" => "quarter",
        "year" => "year",
        _ => return None,
    })
}

fn is_date_column(field: &PgField) -> bool {
    field.kind.holds_dates()
}

/// The SQL of a group key: `date_trunc('unit', col)` or the column.
fn group_key(field: &PgField, raw: Option<&str>) -> Result<String, EngineError> {
    Ok(
        match date_unit(&field.name, is_date_column(field), raw)?.and_then(trunc_unit) {
            Some(unit) => format!("date_trunc('{unit}', {})", field.sql),
            None => field.sql.clone(),
        },
    )
}

/// PostgreSQL's side of an aggregate and a group (`flow::aggregate`).
impl Aggregates for PgResource {
    /// The column's serializer field, but an array's, which writes the query's text.
    fn query_object(field: &PgField) -> Serializer {
        match field.kind {
            PgKind::Array | PgKind::NumericArray => Serializer::Text,
            kind => kind.serializer(),
        }
    }

    /// The value as text, and its type. `min` and `max` keep the column's type, read as its
    /// kind reads it (`char(n)` with its padding, arrays as JSON); other results are numbers or
    /// intervals.
    fn aggregate_select(field: &PgField, func: AggregateFunc) -> Result<String, EngineError> {
        let agg = format!("{}({})", func.as_str(), field.sql);
        let text = match func {
            AggregateFunc::Min | AggregateFunc::Max => field.kind.text_of(&agg),
            _ => format!("({agg})::text"),
        };
        Ok(format!("{text}, {}", type_of(&agg)))
    }

    fn aggregate_answer(
        func: AggregateFunc,
        field: &PgField,
        row: Option<&Row>,
        tz: Offset,
    ) -> Result<Json, EngineError> {
        let value = match row {
            Some(row) => read_held(&row.get::<_, String>(1), row.get(0), "_y_column", field)?,
            None => Py::None,
        };
        let value = zero_if_null(func, value);
        Ok(y_func(serialized(func, field, &value, tz)))
    }

    /// The engine's statement, with each value also read as text with its type.
    fn group_statement(
        model: &PgModel,
        columns: &GroupColumns<'_, PgField>,
        req: &GroupRequest,
        where_sql: &str,
    ) -> Result<String, EngineError> {
        let GroupColumns { xs, y, func } = columns;
        unencodable(xs, y, *func)?;
        let keys = xs
            .iter()
            .enumerate()
            .map(|(i, x)| group_key(x, req.x_lookups.get(i).map(String::as_str)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut inner = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            inner.push(format!("{key} AS {}", group_label(i)));
        }
        inner.push(format!("{}({}) AS y_func", func.as_str(), y.sql));
        let labels: Vec<String> = (0..keys.len()).map(group_label).collect();
        let mut outer = Vec::new();
        for (i, label) in labels.iter().enumerate() {
            // A date bucket is a date-time, read as text; a plain key as its column's kind.
            let text = if keys[i] == xs[i].sql {
                xs[i].kind.text_of(&format!("q.{label}"))
            } else {
                format!("q.{label}::text")
            };
            outer.push(format!("{text}, {}", type_of(&format!("q.{label}"))));
        }
        let y_text = match func {
            AggregateFunc::Min | AggregateFunc::Max => y.kind.text_of("q.y_func"),
            _ => "q.y_func::text".to_owned(),
        };
        outer.push(format!("{y_text}, {}", type_of("q.y_func")));
        Ok(format!(
            "SELECT {} FROM ({}) AS q",
            outer.join(", "),
            group_statement(&inner, &labels, &model.table_sql, where_sql, req)
        ))
    }

    fn group_row(
        columns: &GroupColumns<'_, PgField>,
        _req: &GroupRequest,
        row: &Row,
    ) -> Result<Map<String, Json>, EngineError> {
        let mut object = Map::new();
        for (i, x) in columns.xs.iter().enumerate() {
            let v = read_held(
                &row.get::<_, String>(2 * i + 1),
                row.get(2 * i),
                "_x_column",
                x,
            )?;
            if v.is_not_json() {
                return Err(not_json_refused("_x_column", &x.name));
            }
            let Some(json) = v.encodable() else {
                return Err(fails(
                    "_x_column",
                    format!(
                        "Cannot group by the bytea field {:?}: a value is not UTF-8 text, which \
                         the data engine's JSON encoder fails on (500).",
                        x.name
                    ),
                ));
            };
            object.insert(group_name(i), json);
        }
        let at = 2 * columns.xs.len();
        let v = zero_if_null(
            columns.func,
            read_held(
                &row.get::<_, String>(at + 1),
                row.get(at),
                "_y_column",
                columns.y,
            )?,
        );
        if v.is_not_json() {
            return Err(not_json_refused("_y_column", &columns.y.name));
        }
        object.insert("y_func".to_owned(), v.encoded());
        Ok(object)
    }
}

impl PgResource {
    /// A database error of a read: the engine re-raises it (`500`).
    pub(crate) fn read_failure(&self, e: tokio_postgres::Error) -> EngineError {
        match e.as_db_error() {
            Some(_) => read_refused("PostgreSQL", crate::message(&e).trim_end()),
            None => self.unexpected(e),
        }
    }
}

/// The name of the type of `expr` as psycopg2 reads it (`pg_typeof`'s text): a domain's base
/// type, since PostgreSQL describes a domain's values by their base type.
fn type_of(expr: &str) -> String {
    format!(
        "(SELECT (CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END)::regtype::text \
         FROM pg_catalog.pg_type t WHERE t.oid = pg_typeof({expr}))"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_emulator_core::dialect::Dialect;
    use svc_emulator_core::dialect::group::{Quoting, query_text};

    /// As the engine answered an unknown function on PostgreSQL: `user`, `analyse` and
    /// `verbose` are reserved there (not on SQLite), `abort` is not.
    #[test]
    fn the_query_text_quotes_postgresqls_reserved_words() {
        let columns = ["id", "order", "user", "Mixed", "analyse", "abort"];
        let quoting = Quoting {
            quote: '"',
            reserved: <PgResource as Dialect>::RESERVED_WORDS,
        };
        let never = <PgResource as Dialect>::QUERY_NEVER;
        let text = query_text("t2", &columns, None, never, quoting);
        assert_eq!(
            text,
            "SELECT t2.id AS t2_id, t2.\"order\" AS t2_order, t2.\"user\" AS t2_user, \
             t2.\"Mixed\" AS \"t2_Mixed\", t2.\"analyse\" AS t2_analyse, t2.abort AS t2_abort \
             \nFROM t2 \nWHERE false"
        );
    }

    #[test]
    fn values_are_encoded_as_the_engine_encodes_them() {
        let v = read("numeric", Some("151.48".to_owned()));
        assert_eq!(v.encoded(), serde_json::json!(151.48));
        assert_eq!(v.text().as_deref(), Some("151.48"));
        let v = read("bigint", Some("12".to_owned()));
        assert_eq!(v.encoded(), serde_json::json!(12));
        let v = read(
            "timestamp with time zone",
            Some("2024-01-01 00:00:00+00".to_owned()),
        );
        assert_eq!(v.encoded(), serde_json::json!("2024-01-01T00:00:00Z"));
        let v = read(
            "timestamp without time zone",
            Some("2024-01-01 10:00:00".to_owned()),
        );
        assert_eq!(v.encoded(), serde_json::json!("2024-01-01T10:00:00"));
        assert_eq!(v.text().as_deref(), Some("2024-01-01 10:00:00"));
        assert_eq!(
            read("double precision", Some("NaN".to_owned())).encoded(),
            Json::Null
        );
        assert_eq!(
            Py::Decimal("2.50".to_owned()).text().as_deref(),
            Some("2.50")
        );
    }

    /// `sum` of a `bigint` column is a `numeric`, which the engine writes as a float: the
    /// running engine answered `9007199254740991.0` for the one value 9007199254740991.
    #[test]
    fn big_sums_keep_every_digit() {
        let v = read("numeric", Some("9007199254740991".to_owned())).encoded();
        assert_eq!(v.to_string(), "9007199254740991.0");
        let v = read("numeric", Some("9007199254740993".to_owned())).encoded();
        assert_eq!(v.to_string(), "9007199254740992.0");
    }

    #[test]
    fn date_units_follow_the_engine() {
        assert_eq!(trunc_unit("second"), Some("minute"));
        assert_eq!(trunc_unit("quarter"), Some("quarter"));
        assert_eq!(trunc_unit("microseconds"), None);
    }
}
