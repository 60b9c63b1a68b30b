//! Aggregate and group on a MySQL resource, as the engine answers them there.
//!
//! The requests are read as on the other databases ([`crate::engine::AggregateRequest`],
//! [`crate::engine::GroupRequest`]); the SQL is MySQL's own `count`, `sum`, `min`, `max` and
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

use crate::engine::aggregate::{
    Quoting, date_unit, fails, group_label, group_name, group_statement, null_is_zero, query_text,
    y_func,
};
use crate::engine::server::float_json;
use crate::engine::table::{GroupColumns, OrderBy};
use crate::engine::types::{decimal_str, py_bytes_repr, py_float_repr};
use crate::engine::{AggregateFunc, EngineError, GroupRequest};
use crate::flow::summary::Summary;
use crate::mysql::MyResource;
use crate::mysql::schema::{MyField, MyModel};
use crate::mysql::types::{
    MyKind, Offset, date_text, datetime_text, double_decimal, iso_datetime, set_str, time_text,
    value_float, value_text,
};

/// How SQLAlchemy 1.4's MySQL dialect writes identifiers: its reserved words, in backquotes.
const MYSQL_QUOTING: Quoting = Quoting {
    quote: '`',
    reserved: include_str!("reserved_words_mysql.txt"),
};

/// The same on MariaDB, whose reserved words SQLAlchemy lists apart.
const MARIADB_QUOTING: Quoting = Quoting {
    quote: '`',
    reserved: include_str!("reserved_words_mariadb.txt"),
};
/// A result value with the Python type PyMySQL (and SQLAlchemy) gives it.
#[derive(Debug, Clone, PartialEq)]
enum PyV {
    None,
    Int(String),
    Decimal(String),
    Float(f64),
    Date(String),
    /// `YYYY-MM-DD HH:MM:SS[.ffffff]`.
    DateTime(String),
    Time(String),
    Str(String),
    /// A `SET` value: Python's `set` of its members (here in definition order; the engine's
    /// order follows Python's string hashes, which vary between processes).
    Set(Vec<String>),
    /// A `BINARY`, `VARBINARY` or blob value: Python's `bytes`.
    Bytes(Vec<u8>),
}

impl PyV {
    /// The value of a result cell, by the type MySQL gives the result column.
    fn read(ty: ColumnType, v: &Value) -> PyV {
        if *v == Value::NULL {
            return PyV::None;
        }
        match ty {
            ColumnType::MYSQL_TYPE_NEWDECIMAL | ColumnType::MYSQL_TYPE_DECIMAL => {
                PyV::Decimal(value_text(v).unwrap_or_default())
            }
            ColumnType::MYSQL_TYPE_TINY
            | ColumnType::MYSQL_TYPE_SHORT
            | ColumnType::MYSQL_TYPE_LONG
            | ColumnType::MYSQL_TYPE_LONGLONG
            | ColumnType::MYSQL_TYPE_INT24
            | ColumnType::MYSQL_TYPE_YEAR => PyV::Int(value_text(v).unwrap_or_default()),
            ColumnType::MYSQL_TYPE_FLOAT | ColumnType::MYSQL_TYPE_DOUBLE => {
                PyV::Float(value_float(v).unwrap_or(f64::NAN))
            }
            ColumnType::MYSQL_TYPE_DATE | ColumnType::MYSQL_TYPE_NEWDATE => {
                PyV::Date(date_text(v).unwrap_or_default())
            }
            ColumnType::MYSQL_TYPE_DATETIME
            | ColumnType::MYSQL_TYPE_DATETIME2
            | ColumnType::MYSQL_TYPE_TIMESTAMP
            | ColumnType::MYSQL_TYPE_TIMESTAMP2 => {
                PyV::DateTime(datetime_text(v).unwrap_or_default())
            }
            ColumnType::MYSQL_TYPE_TIME | ColumnType::MYSQL_TYPE_TIME2 => {
                PyV::Time(time_text(v).unwrap_or_default())
            }
            _ => PyV::Str(value_text(v).unwrap_or_default()),
        }
    }

    /// SQLAlchemy's result processing of a value typed as the column `kind` (`sum`, `min`,
    /// `max` and plain group keys): a `DOUBLE` is a `Decimal` of ten places.
    fn typed(self, kind: MyKind) -> PyV {
        match (kind, self) {
            (MyKind::Double, PyV::Float(f)) => PyV::Decimal(double_decimal(f)),
            (MyKind::Double, PyV::Decimal(d)) => match d.parse::<f64>() {
                Ok(f) => PyV::Decimal(double_decimal(f)),
                Err(_) => PyV::Decimal(d),
            },
            (_, v) => v,
        }
    }

    /// As the engine's JSON encoder writes it.
    fn encoded(&self) -> Json {
        match self {
            PyV::None => Json::Null,
            PyV::Int(i) => serde_json::from_str(i).unwrap_or(Json::Null),
            PyV::Decimal(d) => float_json(d.parse().unwrap_or(f64::NAN)),
            PyV::Float(f) => float_json(*f),
            PyV::Date(d) | PyV::Time(d) | PyV::Str(d) => Json::String(d.clone()),
            // PyMySQL keeps MySQL's text of a date Python has none for (`0000-00-00 ...`).
            PyV::DateTime(t) if !python_date(t) => Json::String(t.clone()),
            PyV::DateTime(t) => Json::String(t.replacen(' ', "T", 1)),
            // The engine's encoder writes a set as a list, bytes decoded as UTF-8 ([`encodable`]).
            PyV::Set(members) => Json::Array(members.iter().cloned().map(Json::String).collect()),
            PyV::Bytes(b) => Json::String(String::from_utf8_lossy(b).into_owned()),
        }
    }

    /// `str()` of the value.
    fn text(&self) -> Option<String> {
        Some(match self {
            PyV::None => return None,
            PyV::Int(i) => i.clone(),
            PyV::Decimal(d) => decimal_str(d),
            PyV::Float(f) => py_float_repr(*f),
            PyV::Date(d) | PyV::Time(d) | PyV::Str(d) | PyV::DateTime(d) => d.clone(),
            PyV::Set(members) => set_str(&members.join(","), members),
            PyV::Bytes(b) => py_bytes_repr(b),
        })
    }
}

/// A `sum`, `min`, `max` or plain group key of the column `field`, read through SQLAlchemy's
/// result processing of the column's type: a `BIT` folds the bytes PyMySQL gives (the column's
/// own bytes, or the digits of the text MySQL gives `max`) into an int, a `SET` splits its
/// text into a set, bytes stay bytes.
fn typed_cell(row: &Row, i: usize, field: &MyField) -> PyV {
    let raw = row.as_ref(i).unwrap_or(&Value::NULL);
    if *raw == Value::NULL {
        return PyV::None;
    }
    let bytes = || match raw {
        Value::Bytes(b) => b.clone(),
        other => value_text(other).unwrap_or_default().into_bytes(),
    };
    match field.kind {
        MyKind::Bit => PyV::Int(
            bytes()
                .iter()
                .fold(0u128, |n, b| (n << 8) | u128::from(*b))
                .to_string(),
        ),
        MyKind::Set => {
            let text = value_text(raw).unwrap_or_default();
            let mut items: Vec<String> = text
                .split(',')
                .filter(|m| !m.is_empty())
                .map(str::to_owned)
                .collect();
            items.sort_by_key(|item| {
                field
                    .members
                    .iter()
                    .position(|m| m == item)
                    .unwrap_or(usize::MAX)
            });
            PyV::Set(items)
        }
        MyKind::Binary | MyKind::Blob => PyV::Bytes(bytes()),
        kind => read_cell(row, i).typed(kind),
    }
}

/// The aggregate's value written by the y column's serializer field (an integer field for
/// `count`).
fn serialized(func: AggregateFunc, field: &MyField, v: &PyV, tz: Offset) -> Json {
    if *v == PyV::None {
        return Json::Null;
    }
    if func == AggregateFunc::Count || field.kind.writes_value() {
        return v.encoded();
    }
    match (field.kind, v) {
        (MyKind::DateTime, PyV::DateTime(text)) => Json::String(
            iso_datetime(&Value::Bytes(text.clone().into_bytes()), Some(tz)).unwrap_or_default(),
        ),
        // `BINARY`/`VARBINARY` are written as hex, blobs as `repr(bytes)` (as in a record).
        (MyKind::Binary, PyV::Bytes(b)) => {
            Json::String(b.iter().map(|b| format!("{b:02x}")).collect())
        }
        _ => v.text().map_or(Json::Null, Json::String),
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

/// A group value the engine's JSON encoder writes: bytes are decoded as UTF-8, and bytes that
/// are not UTF-8 make it fail (`500`). (It writes a set as a list.)
fn encodable(v: PyV, param: &str, field: &MyField) -> Result<PyV, EngineError> {
    match v {
        PyV::Bytes(b) if std::str::from_utf8(&b).is_err() => Err(fails(
            param,
            format!(
                "Cannot group by or show the field {:?}: a value's bytes are not UTF-8, which \
                 the data engine's JSON encoder fails on (500).",
                field.name
            ),
        )),
        v => Ok(v),
    }
}

/// Whether MySQL's text of a date or date-time (`YYYY-MM-DD...`) is a date Python has.
fn python_date(text: &str) -> bool {
    let mut parts = text.get(..10).unwrap_or_default().split('-');
    let mut next = || parts.next().and_then(|p| p.parse::<u32>().ok());
    match (next(), next(), next()) {
        (Some(year), Some(month), Some(day)) => {
            crate::engine::types::Date { year, month, day }.valid()
        }
        _ => false,
    }
}

/// `sum` of a `SET`, `BIT`, `BINARY`/`VARBINARY`, blob or `TIME`: MySQL sums numbers, which
/// SQLAlchemy's result processing of the column's type cannot read (a set is split from text,
/// a bit folded from bytes, a time read as a `timedelta`; the engine fails, `500`).
fn unsummable(field: &MyField, func: AggregateFunc) -> Result<(), EngineError> {
    if func == AggregateFunc::Sum
        && matches!(
            field.kind,
            MyKind::Set | MyKind::Bit | MyKind::Binary | MyKind::Blob | MyKind::Time
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

fn read_cell(row: &Row, i: usize) -> PyV {
    let ty = row
        .columns_ref()
        .get(i)
        .map_or(ColumnType::MYSQL_TYPE_VAR_STRING, |c| c.column_type());
    PyV::read(ty, row.as_ref(i).unwrap_or(&Value::NULL))
}

/// MySQL's side of an aggregate and a group (`flow::summary`).
impl Summary for MyResource {
    fn unknown_function(
        &self,
        model: &MyModel,
        field: &MyField,
        order: &OrderBy<'_, MyField>,
    ) -> Result<Json, EngineError> {
        match field.kind {
            k if k.writes_value() => Ok(y_func(Json::Object(Map::new()))),
            MyKind::DateTime => Err(fails(
                "_y_func",
                format!(
                    "Unknown function on the date-time field {:?} (the data engine fails).",
                    field.name
                ),
            )),
            _ => {
                let columns: Vec<&str> = model.fields.iter().map(|f| f.name.as_str()).collect();
                let quoting = if self.mariadb {
                    MARIADB_QUOTING
                } else {
                    MYSQL_QUOTING
                };
                let order = order.names();
                let text = query_text(
                    &model.name,
                    &columns,
                    order.as_deref(),
                    "false = 1",
                    quoting,
                );
                Ok(y_func(Json::String(text)))
            }
        }
    }

    fn aggregate_select(field: &MyField, func: AggregateFunc) -> Result<String, EngineError> {
        if matches!(func, AggregateFunc::Sum | AggregateFunc::Avg)
            && matches!(field.kind, MyKind::DateTime)
        {
            return Err(fails(
                "_y_func",
                format!(
                    "{} of the date-time field {:?} is a number, which the data engine's \
                     date-time field cannot write (it fails with a 500).",
                    func.as_str(),
                    field.name
                ),
            ));
        }
        unsummable(field, func)?;
        Ok(format!("{}({})", func.as_str(), field.qualified))
    }

    fn aggregate_answer(
        func: AggregateFunc,
        field: &MyField,
        row: Option<&Row>,
        tz: Offset,
    ) -> Result<Json, EngineError> {
        let value = match (func, row) {
            (_, None) => PyV::None,
            (AggregateFunc::Sum | AggregateFunc::Min | AggregateFunc::Max, Some(row)) => {
                typed_cell(row, 0, field)
            }
            (_, Some(row)) => read_cell(row, 0),
        };
        let value = match value {
            PyV::None if null_is_zero(func) => PyV::Int("0".to_owned()),
            v => v,
        };
        if let PyV::DateTime(text) = &value
            && field.kind == MyKind::DateTime
            && !python_date(text)
        {
            return Err(fails(
                "_y_column",
                format!(
                    "{} of the date-time field {:?} is {text:?}, a date the data engine's \
                     date-time field cannot write (it fails with a 500).",
                    func.as_str(),
                    field.name
                ),
            ));
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
        unsummable(y, *func)?;
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
                encodable(typed_cell(row, i, x), "_x_column", x)?
            } else {
                read_cell(row, i)
            };
            object.insert(group_name(i), v.encoded());
        }
        let v = match func {
            AggregateFunc::Sum | AggregateFunc::Min | AggregateFunc::Max => {
                encodable(typed_cell(row, xs.len(), y), "_y_column", y)?
            }
            _ => read_cell(row, xs.len()),
        };
        let v = match v {
            PyV::None if null_is_zero(*func) => PyV::Int("0".to_owned()),
            v => v,
        };
        object.insert("y_func".to_owned(), v.encoded());
        Ok(object)
    }
}

impl MyResource {
    /// A database error of a read: the engine re-raises it (`500`).
    pub(crate) fn read_failure(&self, e: mysql_async::Error) -> EngineError {
        if crate::mysql::server_code(&e).is_some() {
            fails(
                "non_field_errors",
                format!(
                    "MySQL refused the query the data engine would run (it answers 500): {}",
                    crate::mysql::message(&e)
                ),
            )
        } else {
            self.unexpected(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let v = PyV::read(
            ColumnType::MYSQL_TYPE_NEWDECIMAL,
            &Value::Bytes(b"20.500000".to_vec()),
        );
        assert_eq!(v.encoded(), serde_json::json!(20.5));
        assert_eq!(v.text().as_deref(), Some("20.500000"));
        let v = PyV::read(ColumnType::MYSQL_TYPE_DOUBLE, &Value::Double(0.1 + 0.2))
            .typed(MyKind::Double);
        assert_eq!(v.text().as_deref(), Some("0.3000000000"));
        let v = PyV::read(
            ColumnType::MYSQL_TYPE_DATETIME,
            &Value::Date(2024, 3, 4, 5, 6, 7, 120_000),
        );
        assert_eq!(v.encoded(), serde_json::json!("2024-03-04T05:06:07.120000"));
        assert_eq!(date_format("week"), None);
        assert_eq!(date_format("month"), Some("%Y-%m-01"));
    }
}
