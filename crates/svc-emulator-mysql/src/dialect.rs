//! MySQL's words (`svc_emulator_core::dialect`): backquotes, `<=>`, `START TRANSACTION`, a JSON value's type,
//! and how its statements' text reads (`#` comments, executable comments, optimizer hints).
//!
//! A list's selection and order as the engine builds them on MySQL.
//!
//! The engine's SQLAlchemy writes the same expressions as on SQLite in MySQL's dialect
//! (`ilike` is `lower(col) LIKE lower(...)`, a cast to text is `CAST(col AS CHAR)`), and
//! PyMySQL writes each value into the statement as a literal: a float as its `repr()`
//! (`34.0`, which MySQL reads as an exact decimal), a bool as `1`/`0`, a date-time as
//! `'YYYY-MM-DD HH:MM:SS[.ffffff]'` (without its offset), a string as a quoted string, which
//! MySQL compares with the column's collation. Here text values are **bound** (`?`) and
//! compare the same way (a parameter is coercible like a literal); integers and booleans, which
//! the filter fields have already read into Python numbers, are bound as integers (compared as
//! PyMySQL's integer literals are, so an index on the column serves them, and one statement
//! serves every value); floats are written as the same decimal literals PyMySQL writes, from the
//! number (never from the request's text).
//!
//! Aggregate and group (`flow::aggregate`): the requests are read as on the other databases
//! ([`svc_engine::AggregateRequest`], [`svc_engine::GroupRequest`]); the SQL is MySQL's own
//! `count`, `sum`, `min`, `max` and `avg` (so `sum` of an `INT` is a `DECIMAL`), and a group's
//! date lookups are the engine's `DATE_FORMAT` buckets (`second`, `minute`, `hour`, `day`,
//! `month`, `year`, `microseconds`; anything else groups by the column itself). Their cells are
//! read as `types` says.

use crate::MyResource;
use crate::driver::skip_quoted;
use crate::schema::quote_ident;
use crate::schema::{MyField, MyModel};
use crate::types::MyKind;
use svc_emulator_core::dialect::Dialect;
use svc_emulator_core::dialect::bind::{Bind, Binds};
use svc_emulator_core::dialect::clause::Where;
use svc_emulator_core::dialect::group::Quoting;
use svc_emulator_core::dialect::lookup::{Filter, lookup_condition};
use svc_emulator_core::dialect::relation::RelationSql;
use svc_emulator_core::dialect::user_statement::EngineDriver;

use svc_engine::aggregate::date_unit;
use svc_engine::field_input::InputDateTime;
use svc_engine::filter::{Arg, PyNumber};
use svc_engine::python::floats::py_float_repr;
use svc_engine::python::text::unhexlify;
use svc_engine::sql_answer::query_error;
use svc_engine::sql_params::{block_comment_end, line_end, starts_name};
use svc_engine::types::FilterFamily;
use svc_engine::{EngineError, Lookup};

/// PyMySQL's literal of a date-time: its `str()` without the offset.
pub(crate) fn datetime_literal(dt: &InputDateTime) -> String {
    let mut s = format!("{} {}", dt.date.iso(), dt.time.iso());
    if let Some(stripped) = s.strip_suffix(".000000") {
        s = stripped.to_owned();
    }
    s
}

/// A float as PyMySQL writes it: `repr()`; NaN and infinities make it fail.
pub(crate) fn float_literal(f: f64) -> Option<String> {
    f.is_finite().then(|| py_float_repr(f))
}

/// One filter on MySQL.
type Ctx<'a> = Filter<'a, MyField>;

/// A number of the filter, as PyMySQL writes it (it cannot write one that is not finite: the
/// statement fails when it runs).
fn number(ctx: &Ctx<'_>, raw: &str) -> Result<String, EngineError> {
    match ctx.reader().number(raw)? {
        PyNumber::Int(i) => Ok(i.to_string()),
        PyNumber::Float(f) => Ok(float_literal(f).unwrap_or_else(|| {
            ctx.fails_when_run(format!(
                "Filter {:?}: {raw:?} is not a finite number, which the data engine \
                 cannot send to MySQL (it fails with a 500).",
                ctx.key
            ))
        })),
    }
}

/// A `WHERE` clause and its values (`driver.rs` sends them).
pub(crate) type MyWhere = Where<Binds>;

/// MySQL's SQL of a selection's parts (`flow::filter`).
impl Dialect for MyResource {
    type Model = MyModel;
    type Field = MyField;

    const BEGIN: &'static str = "START TRANSACTION";

    const DEFAULTS_ONLY: &'static str = "() VALUES ()";

    const TEXT_TYPE: &'static str = "CHAR";

    /// MySQL's; MariaDB's differ (`Database::query_dialect`).
    const RESERVED_WORDS: &'static str = include_str!("reserved_words_mysql.txt");
    const ENGINE_DRIVER: EngineDriver = EngineDriver::PyMySql;

    const QUERY_NEVER: &'static str = "false = 1";

    fn quote(name: &str) -> String {
        quote_ident(name)
    }

    fn same_value(col: &str, value: &str) -> String {
        format!("{col} <=> {value}")
    }

    fn loads_none(col: &str) -> String {
        format!("({col} IS NULL OR JSON_TYPE({col}) = 'NULL')")
    }

    /// Strings, quoted names, comments and `:=`. An executable comment (`/*! ... */`, MariaDB's `/*M! ... */`) is
    /// SQL that the server runs: its names are bound as anywhere else.
    fn skip(b: &[u8], i: usize) -> Option<Result<usize, EngineError>> {
        Some(Ok(match b[i] {
            q @ (b'\'' | b'"' | b'`') => skip_quoted(b, i, q),
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2)
                    .is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
            {
                line_end(b, i)
            }
            b'#' => line_end(b, i),
            b'/' if b[i..].starts_with(b"/*!") => i + 3,
            b'/' if b[i..].starts_with(b"/*M!") => i + 4,
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = block_comment_end(b, i);
                // The driver reads names inside optimizer hints, which the server does not.
                if b.get(i + 2) == Some(&b'+') && has_name(&b[i..end]) {
                    return Some(Err(query_error(
                        "Parameters (:name) inside optimizer hints (/*+ ... */) are not \
                         supported: move them out of the comment.",
                    )));
                }
                end
            }
            b'?' => {
                return Some(Err(query_error(
                    "Positional parameters (?) are not supported: name them (:name) and give \
                     their values in params_obj.",
                )));
            }
            b':' if b.get(i + 1) == Some(&b'=') => i + 2,
            _ => return None,
        }))
    }

    const RELATED: RelationSql<MyModel> = RelationSql {
        table_sql: |m| m.table_sql.clone(),
        column_sql: |f| f.sql.clone(),
        outer_sql: |f| f.qualified.clone(),
    };

    fn column(field: &MyField) -> &str {
        &field.qualified
    }

    /// The text inside `%...%` of `icontains`: `'%{}%'.format(value)` of the field's value
    /// (a date column's is the text as given, as on SQLite).
    fn contained(ctx: &Ctx<'_>, raw: &str) -> Result<String, EngineError> {
        if ctx.field.kind == MyKind::Bit {
            // Python's text of the field's boolean.
            let b = ctx.boolean(raw)?;
            return Ok(if b { "True" } else { "False" }.to_owned());
        }
        Ok(match ctx.field.kind.family() {
            FilterFamily::Number => number(ctx, raw)?,
            FilterFamily::DateTime => ctx.datetime(raw)?.python_str(),
            FilterFamily::Boolean
            | FilterFamily::Date
            | FilterFamily::Text
            | FilterFamily::Json => raw.to_owned(),
        })
    }

    /// The SQL of a value of `exact`, `gt`, `gte`, `lt`, `lte` and each `in` item, as the
    /// engine's filter field reads it: a literal for numbers, a bound value for the rest.
    fn compared(
        ctx: &Ctx<'_>,
        raw: &str,
        in_list: bool,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        // A `BIT` column's filter values go through its serializer field, a `BooleanField`
        // (`b8=5` is `b8 = 1`), though its lookups are the text ones.
        if ctx.field.kind == MyKind::Bit {
            let b = ctx.boolean(raw)?;
            return Ok(params.bind::<Self>(Bind::Int(i64::from(b))));
        }
        Ok(match ctx.field.kind.family() {
            // An integer is bound as one (MySQL reads `col = ?` of an integer as it reads the
            // literal `5`, and the statement is the same for every value); a float stays the
            // literal PyMySQL writes (`34.0`, an exact decimal: a bound double would compare
            // as a double).
            FilterFamily::Number => match ctx.reader().number(raw)? {
                PyNumber::Int(i) => params.bind::<Self>(Bind::Int(i)),
                PyNumber::Float(_) => number(ctx, raw)?,
            },
            FilterFamily::Boolean => {
                let b = ctx.boolean(raw)?;
                params.bind::<Self>(Bind::Int(i64::from(b)))
            }
            // `in` items of a date column are sent as given (as on SQLite): MySQL reads the
            // date at the text's start (`2001-12-31,x` is 2001-12-31), never fails.
            FilterFamily::Date if in_list => Self::bind_text(raw.to_owned(), params),
            // `safe_date` keeps the date of a date column's value.
            FilterFamily::Date => Self::bind_text(ctx.reader().date_text(raw)?, params),
            FilterFamily::DateTime => {
                let dt = ctx.datetime(raw)?;
                Self::bind_text(datetime_literal(&dt), params)
            }
            FilterFamily::Text | FilterFamily::Json => Self::bind_text(raw.to_owned(), params),
        })
    }

    /// One filter's SQL condition (before `exclude__` negation).
    fn condition(
        ctx: &Ctx<'_>,
        lookup: Lookup,
        arg: Arg<'_>,
        params: &mut Binds,
    ) -> Result<String, EngineError> {
        let field = ctx.field;
        let col = &field.qualified;
        if field.kind == MyKind::Binary && matches!(lookup, Lookup::Exact | Lookup::In) {
            // The engine's `BinaryField` reads the value as hex (`binascii.unhexlify`).
            let items = match lookup {
                Lookup::In => arg.items(),
                _ => vec![arg.first()],
            };
            let mut list = Vec::new();
            for item in items {
                let bytes = unhexlify(item).ok_or_else(|| {
                    ctx.engine_fails(format!(
                        "Filter {:?}: {item:?} is not hex, which the data engine's binary field \
                         cannot read (it fails with a 500); give the bytes in hex (0a1b).",
                        ctx.key
                    ))
                })?;
                list.push(params.bind::<Self>(Bind::Bytes(bytes)));
            }
            return Ok(match lookup {
                Lookup::In => format!("{col} IN ({})", list.join(", ")),
                _ => format!("{col} = {}", list.join("")),
            });
        }
        if field.kind.is_bytes() && !matches!(lookup, Lookup::IsNull | Lookup::IsEmpty) {
            // SQLAlchemy's binary types hand PyMySQL `bytes(value)` of the text, which fails
            // when the statement runs.
            return Ok(ctx.fails_when_run(format!(
                "Filter {:?} compares a binary field with a value, which the data engine cannot \
                 do on MySQL (it fails with a 500); only isnull and isempty work.",
                ctx.key
            )));
        }
        lookup_condition::<Self>(ctx, lookup, arg, params)
    }

    /// Number columns' text equals the search text; text, enum, set and JSON columns' text
    /// contains it.
    fn binary(field: &MyField) -> bool {
        matches!(field.kind, MyKind::Binary | MyKind::Blob)
    }
}

/// How SQLAlchemy 1.4's MySQL dialect writes identifiers: its reserved words, in backquotes.
pub(crate) const MYSQL_QUOTING: Quoting = Quoting {
    quote: '`',
    reserved: <MyResource as Dialect>::RESERVED_WORDS,
};

/// The same on MariaDB, whose reserved words SQLAlchemy lists apart.
pub(crate) const MARIADB_QUOTING: Quoting = Quoting {
    quote: '`',
    reserved: include_str!("reserved_words_mariadb.txt"),
};

/// The engine's `DATE_FORMAT` format of a date lookup parameter on MySQL, `None` when it has
/// none (the column itself).
fn date_format(param: &str) -> Option<&'static str> {
    Some(match param {
        "microseconds" => "%Y-%m-%d %H:%i:%s.%f",
        "second" => "%Y-%m-%d %H:%i:%s",
        "minute" => "%Y-%m-%d %H:%i:00",
        "hour" => "%Y-%m-%d %H:00:00",
        "day" => "%Y-%m-%d",
        "month" => "%Y-%m-01",
        "year" => "%Y-01-01",
        _ => return None,
    })
}

fn is_date_column(field: &MyField) -> bool {
    matches!(field.kind, MyKind::Date | MyKind::DateTime)
}

/// The SQL of a group key: `DATE_FORMAT(col, '...')` (a string) or the column; and whether
/// it is the column.
pub(crate) fn group_key(field: &MyField, raw: Option<&str>) -> Result<(String, bool), EngineError> {
    Ok(
        match date_unit(&field.name, is_date_column(field), raw)?.and_then(date_format) {
            Some(format) => (
                format!("DATE_FORMAT({}, '{format}')", field.qualified),
                false,
            ),
            None => (field.qualified.clone(), true),
        },
    )
}

/// Whether `b` holds a `:name`.
fn has_name(b: &[u8]) -> bool {
    b.windows(2).any(|w| w[0] == b':' && starts_name(w[1]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_emulator_core::dialect::group::query_text;
    use svc_engine::field_input::parse_input_datetime;

    /// As the engine answered an unknown function on MariaDB: backquotes, and MySQL's or
    /// MariaDB's own reserved words (`user` is neither's).
    #[test]
    fn the_query_text_quotes_in_backquotes() {
        let columns = ["id", "order", "user", "Mixed"];
        let text = query_text("t2", &columns, None, "false = 1", MARIADB_QUOTING);
        assert_eq!(
            text,
            "SELECT t2.id AS t2_id, t2.`order` AS t2_order, t2.user AS t2_user, \
             t2.`Mixed` AS `t2_Mixed` \nFROM t2 \nWHERE false = 1"
        );
        assert_eq!(MARIADB_QUOTING.ident("offset"), "`offset`");
        assert_eq!(MYSQL_QUOTING.ident("offset"), "offset");
        assert_eq!(MYSQL_QUOTING.ident("rank"), "`rank`");
        assert_eq!(MYSQL_QUOTING.ident("a`b"), "`a``b`");
        assert_eq!(date_format("week"), None);
        assert_eq!(date_format("month"), Some("%Y-%m-01"));
    }

    #[test]
    fn values_are_written_as_pymysql_writes_them() {
        let dt = parse_input_datetime("2024-01-05T10:00:00+02:00").unwrap();
        assert_eq!(datetime_literal(&dt), "2024-01-05 10:00:00");
        let dt = parse_input_datetime("2024-01-05 10:00:00.5").unwrap();
        assert_eq!(datetime_literal(&dt), "2024-01-05 10:00:00.500000");
        assert_eq!(float_literal(34.0).as_deref(), Some("34.0"));
        assert_eq!(float_literal(1e20).as_deref(), Some("1e+20"));
        assert_eq!(float_literal(f64::NAN), None);
        // The engine stored 07:08:09+02:00 as 05:08:09 on a UTC database.
        let dt = parse_input_datetime("2024-05-06T07:08:09+02:00").unwrap();
        assert_eq!(datetime_literal(&dt.in_zone(0)), "2024-05-06 05:08:09");
        let dt = parse_input_datetime("2024-01-01T00:30:00+01:00").unwrap();
        assert_eq!(datetime_literal(&dt.in_zone(0)), "2023-12-31 23:30:00");
        assert_eq!(datetime_literal(&dt.in_zone(3600)), "2024-01-01 00:30:00");
        assert_eq!(unhexlify("0aFF"), Some(vec![10, 255]));
        assert_eq!(unhexlify("0"), None);
    }
}
