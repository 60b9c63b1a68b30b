//! Aggregate and group on a MySQL resource, as the engine answers them there.
//!
//! The requests are read as on the other databases ([`svc_engine::AggregateRequest`],
//! [`svc_engine::GroupRequest`]); the SQL is MySQL's own `count`, `sum`, `min`, `max` and
//! `avg` (so `sum` of an `INT` is a `DECIMAL`), and a group's date lookups are the engine's
//! `DATE_FORMAT` buckets (`second`, `minute`, `hour`, `day`, `month`, `year`, `microseconds`;
//! anything else groups by the column itself). Each value is read with the Python type PyMySQL
//! gives it, through SQLAlchemy's result processing of the column's type for `sum`, `min` and
//! `max` (a `DOUBLE` becomes a `Decimal` of ten places; `avg` has no type), and written as the
//! engine writes it: an aggregate by the y column's serializer field, group rows by the
//! engine's JSON encoder (a `Decimal` as a float, date-times naive).

use mysql_async::consts::ColumnType;
use mysql_async::{Row, Value};
use serde_json::{Map, Value as Json};

use crate::MyResource;
use crate::schema::{MyField, MyModel};
use crate::types::{
    MyKind, Offset, bit_value, double_decimal, py_value, set_members, value_bytes, value_text,
};
use svc_emulator_core::dialect::Dialect;
use svc_emulator_core::dialect::group::{Quoting, group_label, group_statement};
use svc_emulator_core::flow::aggregate::Aggregates;
use svc_engine::aggregate::{date_unit, fails, group_name, read_refused, y_func, zero_if_null};
use svc_engine::python::text::hexlify;
use svc_engine::python::{Py, time_of_day};
use svc_engine::table::GroupColumns;
use svc_engine::types::Serializer;
use svc_engine::{AggregateFunc, EngineError, GroupRequest};

/// How SQLAlchemy 1.4's MySQL dialect writes identifiers: its reserved words, in backquotes.
const MYSQL_QUOTING: Quoting = Quoting {
    quote: '`',
    reserved: <MyResource as Dialect>::RESERVED_WORDS,
};

/// The same on MariaDB, whose reserved words SQLAlchemy lists apart.
const MARIADB_QUOTING: Quoting = Quoting {
    quote: '`',
    reserved: include_str!("reserved_words_mariadb.txt"),
};
/// SQLAlchemy's result processing of a value typed as the column `kind` (`sum`, `min`,
/// `max` and plain group keys): a `DOUBLE` is a `Decimal` of ten places.
fn typed(v: Py, kind: MyKind) -> Py {
    match (kind, v) {
        (MyKind::Double, Py::Float(f)) => Py::Decimal(double_decimal(f)),
        (MyKind::Double, Py::Decimal(d)) => match d.parse::<f64>() {
            Ok(f) => Py::Decimal(double_decimal(f)),
            Err(_) => Py::Decimal(d),
        },
        (_, v) => v,
    }
}

/// A `sum`, `min`, `max` or plain group key of the column `field`, read through SQLAlchemy's
/// result processing of the column's type: a `BIT` folds the bytes PyMySQL gives (the column's
/// own bytes, or the digits of the text MySQL gives `max`) into an int, a `SET` splits its
/// text into a set, bytes stay bytes.
/// A set's members are in the order of this start's Python set (`types::set_members`).
fn typed_cell(row: &Row, i: usize, field: &MyField) -> Py {
    let raw = row.as_ref(i).unwrap_or(&Value::NULL);
    if *raw == Value::NULL {
        return Py::None;
    }
    match field.kind {
        MyKind::Bit => Py::Int(bit_value(raw).to_string()),
        MyKind::Set => Py::Set(set_members(&value_text(raw).unwrap_or_default())),
        MyKind::Binary | MyKind::Blob => Py::Bytes(value_bytes(raw)),
        kind => typed(read_cell(row, i), kind),
    }
}

/// The aggregate's value written by the y column's serializer field (an integer field for
/// `count`).
fn serialized(func: AggregateFunc, field: &MyField, v: &Py, tz: Offset) -> Json {
    match (field.kind, v) {
        _ if func == AggregateFunc::Count => v.encoded(),
        // `BINARY`/`VARBINARY` are written as hex, blobs as `repr(bytes)` (as in a record);
        // the engine's `BinaryField` writes anything but bytes (an `avg`) as `None`.
        (MyKind::Binary, Py::Bytes(b)) => Json::String(hexlify(b)),
        (MyKind::Binary, _) => Json::Null,
        (kind, v) => v.serialized(kind.serializer(), tz),
    }
}

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
fn group_key(field: &MyField, raw: Option<&str>) -> Result<(String, bool), EngineError> {
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

/// A group value as the engine's JSON encoder writes it: bytes are decoded as UTF-8, and bytes
/// that are not UTF-8 make it fail (`500`). (It writes a set as a list.)
fn encodable(v: &Py, param: &str, field: &MyField) -> Result<Json, EngineError> {
    v.encodable().ok_or_else(|| {
        fails(
            param,
            format!(
                "Cannot group by or show the field {:?}: a value's bytes are not UTF-8, which \
                 the data engine's JSON encoder fails on (500).",
                field.name
            ),
        )
    })
}

/// `sum` of an `ENUM`, `SET`, `BIT`, `BINARY`/`VARBINARY`, blob or `TIME` that MySQL made a
/// number of: SQLAlchemy's result processing of the column's type cannot read it (an enum's
/// member is looked up, a set split from text, a bit folded from bytes, a time read as a
/// `timedelta`; the engine fails, `500`). A sum over no row is NULL, which every processor
/// passes: the engine answers its `0`.
fn unreadable_sum(field: &MyField, func: AggregateFunc, value: &Py) -> Result<(), EngineError> {
    if func == AggregateFunc::Sum
        && *value != Py::None
        && matches!(
            field.kind,
            MyKind::Enum | MyKind::Set | MyKind::Bit | MyKind::Binary | MyKind::Blob | MyKind::Time
        )
    {
        return Err(fails(
            "_y_func",
            format!(
                "sum of the field {:?} is a number, which the data engine's type for the column \
                 cannot read back (it fails with a 500).",
                field.name
            ),
        ));
    }
    Ok(())
}

/// `func` of the date-time `field` is `what` the engine's date-time field cannot write (it
/// fails, `500`): a number, or a date Python has none for.
fn unwritable_date_time(
    param: &str,
    func: AggregateFunc,
    field: &MyField,
    what: &str,
) -> EngineError {
    fails(
        param,
        format!(
            "{} of the date-time field {:?} is {what} the data engine's date-time field cannot \
             write (it fails with a 500).",
            func.as_str(),
            field.name
        ),
    )
}

/// A result cell as PyMySQL gives it, and SQLAlchemy's `TIME` a time of day of its
/// `timedelta` (a JSON value stays its text).
fn read_cell(row: &Row, i: usize) -> Py {
    let ty = row
        .columns_ref()
        .get(i)
        .map_or(ColumnType::MYSQL_TYPE_VAR_STRING, |c| c.column_type());
    match py_value(ty, false, 0, row.as_ref(i).unwrap_or(&Value::NULL)) {
        Py::Timedelta(micros) => Py::Time(time_of_day(micros), None),
        Py::Json(text) => Py::Str(text),
        v => v,
    }
}

/// MySQL's side of an aggregate and a group (`flow::aggregate`).
impl Aggregates for MyResource {
    fn query_object(field: &MyField) -> Serializer {
        field.kind.serializer()
    }

    /// MariaDB's reserved words are SQLAlchemy's MariaDB dialect's.
    fn query_dialect(&self) -> (Quoting, &'static str) {
        let quoting = if self.mariadb {
            MARIADB_QUOTING
        } else {
            MYSQL_QUOTING
        };
        (quoting, Self::QUERY_NEVER)
    }

    fn aggregate_select(field: &MyField, func: AggregateFunc) -> Result<String, EngineError> {
        if matches!(func, AggregateFunc::Sum | AggregateFunc::Avg)
            && matches!(field.kind, MyKind::DateTime)
        {
            return Err(unwritable_date_time(
                "_y_func",
                func,
                field,
                "a number, which",
            ));
        }
        Ok(format!("{}({})", func.as_str(), field.qualified))
    }

    fn aggregate_answer(
        func: AggregateFunc,
        field: &MyField,
        row: Option<&Row>,
        tz: Offset,
    ) -> Result<Json, EngineError> {
        let value = match (func, row) {
            (_, None) => Py::None,
            (AggregateFunc::Sum | AggregateFunc::Min | AggregateFunc::Max, Some(row)) => {
                typed_cell(row, 0, field)
            }
            (_, Some(row)) => read_cell(row, 0),
        };
        unreadable_sum(field, func, &value)?;
        let value = zero_if_null(func, value);
        // A date-time Python has no date for is PyMySQL's text.
        if let Py::Str(text) = &value
            && field.kind == MyKind::DateTime
        {
            let what = format!("{text:?}, a date");
            return Err(unwritable_date_time("_y_column", func, field, &what));
        }
        Ok(y_func(serialized(func, field, &value, tz)))
    }

    fn group_statement(
        model: &MyModel,
        columns: &GroupColumns<'_, MyField>,
        req: &GroupRequest,
        where_sql: &str,
    ) -> Result<String, EngineError> {
        let GroupColumns { xs, y, func } = columns;
        let mut select = Vec::new();
        for (i, x) in xs.iter().enumerate() {
            let (key, _) = group_key(x, req.x_lookups.get(i).map(String::as_str))?;
            select.push(format!("{key} AS {}", group_label(i).replace('"', "`")));
        }
        select.push(format!("{}({}) AS y_func", func.as_str(), y.qualified));
        let labels: Vec<String> = (0..xs.len())
            .map(|i| group_label(i).replace('"', "`"))
            .collect();
        Ok(group_statement(
            &select,
            &labels,
            &model.table_sql,
            where_sql,
            req,
        ))
    }

    fn group_row(
        columns: &GroupColumns<'_, MyField>,
        req: &GroupRequest,
        row: &Row,
    ) -> Result<Map<String, Json>, EngineError> {
        let GroupColumns { xs, y, func } = columns;
        let mut object = Map::new();
        for (i, x) in xs.iter().enumerate() {
            let (_, plain) = group_key(x, req.x_lookups.get(i).map(String::as_str))?;
            let v = if plain {
                encodable(&typed_cell(row, i, x), "_x_column", x)?
            } else {
                read_cell(row, i).encoded()
            };
            object.insert(group_name(i), v);
        }
        let typed = matches!(
            func,
            AggregateFunc::Sum | AggregateFunc::Min | AggregateFunc::Max
        );
        let v = if typed {
            typed_cell(row, xs.len(), y)
        } else {
            read_cell(row, xs.len())
        };
        unreadable_sum(y, *func, &v)?;
        let v = zero_if_null(*func, v);
        let v = if typed {
            encodable(&v, "_y_column", y)?
        } else {
            v.encoded()
        };
        object.insert("y_func".to_owned(), v);
        Ok(object)
    }
}

impl MyResource {
    /// A database error of a read: the engine re-raises it (`500`).
    pub(crate) fn read_failure(&self, e: mysql_async::Error) -> EngineError {
        match crate::server_code(&e) {
            Some(_) => read_refused("MySQL", &crate::message(&e)),
            None => self.unexpected(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use svc_emulator_core::dialect::group::query_text;

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
    }

    #[test]
    fn values_are_encoded_as_the_engine_encodes_them() {
        let v = py_value(
            ColumnType::MYSQL_TYPE_NEWDECIMAL,
            false,
            0,
            &Value::Bytes(b"20.500000".to_vec()),
        );
        assert_eq!(v.encoded(), serde_json::json!(20.5));
        assert_eq!(v.text().as_deref(), Some("20.500000"));
        let v = typed(
            py_value(
                ColumnType::MYSQL_TYPE_DOUBLE,
                false,
                0,
                &Value::Double(0.1 + 0.2),
            ),
            MyKind::Double,
        );
        assert_eq!(v.text().as_deref(), Some("0.3000000000"));
        let v = py_value(
            ColumnType::MYSQL_TYPE_DATETIME,
            false,
            0,
            &Value::Date(2024, 3, 4, 5, 6, 7, 120_000),
        );
        assert_eq!(v.encoded(), serde_json::json!("2024-03-04T05:06:07.120000"));
        assert_eq!(date_format("week"), None);
        assert_eq!(date_format("month"), Some("%Y-%m-01"));
    }
}
