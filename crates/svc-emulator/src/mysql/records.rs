//! Records of a MySQL resource: list, retrieve, create, update, delete, as the engine answers
//! them on MySQL (see [`super`]).

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Row, Value};

use crate::engine::EngineError;
use crate::engine::body::{non_field, query_failed};
use crate::engine::field_input::Internal;
use crate::engine::python::json::py_json_dumps;
use crate::engine::python::text::unhexlify;
use crate::engine::records::{Models, RecordRow, first_record};
use crate::engine::table::Table;
use crate::flow::Locator;
use crate::flow::delete::delete_row;
use crate::flow::driver::{Failure, Session};
use crate::flow::records::{Database, OwnedRows};
use crate::flow::write::{Values, Writes, insert_statement, read_back_sql, set_list, update_sql};
use crate::mysql::dialect::{Params, datetime_literal};
use crate::mysql::pages::{self};
use crate::mysql::schema::{MyConnection, table};
use crate::mysql::schema::{MyField, MyModel};
use crate::mysql::types::{MyKind, Offset, python_date, set_is_unordered, write_value};
use crate::mysql::{MyResource, driver, message, server_code};

/// MySQL's error code of a duplicate key.
const DUPLICATE_ENTRY: u16 = 1062;

/// MySQL's side of the record flows (`flow::read`).
impl Database for MyResource {
    fn models(&self) -> &Models<MyModel> {
        &self.schema
    }

    fn bind(
        field: &MyField,
        value: &Internal,
        tz: Offset,
        params: &mut Params,
    ) -> Result<String, EngineError> {
        Ok(params.bind(bind_param(field, value, tz)).to_owned())
    }

    fn memo_key(sql: &str, params: &Params) -> Vec<u8> {
        pages::key(sql, params)
    }

    /// A pooled connection: `tz` is refused by the filters on MySQL.
    async fn connect(&self, _tz: Option<&str>) -> Result<Conn, EngineError> {
        self.conn().await
    }

    /// The engine's default time zone: `TIMEDIFF(NOW(), UTC_TIMESTAMP)` on the database.
    async fn time_zone(&self, conn: &mut Conn) -> Result<Offset, EngineError> {
        // Built only when polled: the offset is kept for a minute, and most reads find it.
        let read = async {
            let seconds: Option<i64> = conn
                .query_first("SELECT TIME_TO_SEC(TIMEDIFF(NOW(), UTC_TIMESTAMP()))")
                .await?;
            Ok(Offset::try_from(seconds.unwrap_or(0)).unwrap_or(0))
        };
        let failed = |e| self.unexpected(e);
        self.timezone.get_or_read(read, failed).await
    }

    /// A read's error is where the engine fails (`500`): strict mode answers `400` with
    /// MySQL's message.
    fn fault(&self, e: mysql_async::Error, failure: Failure<'_, MyModel>) -> EngineError {
        match failure {
            Failure::Read { lenient } => self.read_failure(e).unless_lenient(lenient),
            Failure::Write(model) => self.write_error(model, e),
            Failure::Query => driver::query_failed(self, e),
            Failure::Unexpected => self.unexpected(e),
        }
    }
}

/// MySQL's driver reads a statement's rows whole.
impl OwnedRows for MyResource {}

/// MySQL's side of the writes (`flow::write`).
impl Writes for MyResource {
    /// The row's identity (see [`MyModel::identity`]).
    type Locked = Vec<Value>;

    fn lock_select(model: &MyModel) -> String {
        locator(model).select
    }

    fn locked(row: &Row) -> Vec<Value> {
        (0..row.len())
            .map(|i| row.as_ref(i).cloned().unwrap_or(Value::NULL))
            .collect()
    }

    fn writable(values: &Values<'_, MyField>) -> Result<(), EngineError> {
        not_writable(values)
    }

    async fn insert(
        &self,
        conn: &mut Conn,
        model: &MyModel,
        values: &Values<'_, MyField>,
        tz: i32,
        // A key is never NULL here: nothing is written before a failure.
        _lenient: bool,
    ) -> Result<Vec<u8>, EngineError> {
        let pk = model.pk_field();
        let mut params = Params::default();
        let (sql, _) = insert_statement::<Self>(model, values, tz, &mut params)?;
        self.write(conn, model, &sql, &params).await?;
        let key = match values.iter().find(|(f, _)| f.primary_key) {
            Some((f, v)) => bind_param(f, v, tz),
            None => match conn.last_insert_id() {
                Some(id) if pk.autoincrement => Value::UInt(id),
                _ => Value::NULL,
            },
        };
        let select = read_back_sql(model, &format!("{} = ?", pk.qualified));
        let rows: Vec<Row> = conn
            .exec(&select, vec![key])
            .await
            .map_err(|e| self.unexpected(e))?;
        first_record(model, &rows, tz)
    }

    fn at_locked(model: &MyModel, identity: &Vec<Value>, params: &mut Params) -> String {
        params.0.extend(identity.iter().cloned());
        at_identity(model)
    }

    /// An `UPDATE` by identity, then the row read again by its new identity (the key may
    /// change).
    async fn update_locked(
        &self,
        tx: &mut Session<Self>,
        model: &MyModel,
        values: &Values<'_, MyField>,
        old_identity: Vec<Value>,
        tz: i32,
    ) -> Result<Vec<u8>, EngineError> {
        let conn = tx.conn();
        let mut new_identity = old_identity.clone();
        if !values.is_empty() {
            if model.promoted_key && self.rows_of(conn, model, &old_identity).await? > 1 {
                // Rows that share a promoted key: the ORM's flush expected to update one row
                // and matched several, which the engine answers `400 Query failed` (nothing
                // written: the transaction rolls back when dropped).
                return Err(query_failed());
            }
            for (f, v) in values {
                let at = model
                    .identity
                    .iter()
                    .position(|&i| model.fields[i].name == f.name);
                if let Some(at) = at {
                    new_identity[at] = bind_param(f, v, tz);
                }
            }
            let mut params = Params::default();
            let sets = set_list::<Self>(values, tz, &mut params)?;
            let at = Self::at_locked(model, &old_identity, &mut params);
            let sql = update_sql::<Self>(model, &sets, &at);
            self.write(conn, model, &sql, &params).await?;
        }
        let select = read_back_sql(model, &at_identity(model));
        let rows: Vec<Row> = conn
            .exec(&select, new_identity)
            .await
            .map_err(|e| self.write_error(model, e))?;
        first_record(model, &rows, tz)
    }

    async fn delete_locked(
        &self,
        tx: &mut Session<Self>,
        model: &MyModel,
        identity: Vec<Value>,
    ) -> Result<(), EngineError> {
        let mut conn = MyConnection {
            tx: tx.conn(),
            resource: self,
            model,
        };
        let at = locator(model);
        // The ORM deletes by identity: the one row of a declared key (every column of it), every
        // row that shares a promoted one.
        delete_row(&mut conn, &table(&model.name), &at, identity, &at.condition).await
    }
}

impl MyResource {
    /// How many rows hold `identity`.
    async fn rows_of(
        &self,
        tx: &mut Conn,
        model: &MyModel,
        identity: &[Value],
    ) -> Result<u64, EngineError> {
        let sql = format!(
            "SELECT COUNT(*) FROM {} WHERE {}",
            model.table_sql,
            at_identity(model)
        );
        let count: Option<u64> = tx
            .exec_first(&sql, identity.to_vec())
            .await
            .map_err(|e| self.unexpected(e))?;
        Ok(count.unwrap_or(0))
    }

    /// Runs a write's statement on `conn`; its error as [`Self::write_error`] says.
    async fn write(
        &self,
        conn: &mut Conn,
        model: &MyModel,
        sql: &str,
        params: &Params,
    ) -> Result<(), EngineError> {
        let done = conn.exec_drop(sql, params.values()).await;
        done.map_err(|e| self.write_error(model, e))
    }

    /// A database error of a write: a `400` with MySQL's message; a duplicate key names its
    /// column when the key is named after one, as the engine's pattern (`Duplicate entry '...'
    /// for key '...'`) does.
    pub(crate) fn write_error(&self, model: &MyModel, e: mysql_async::Error) -> EngineError {
        let Some(code) = server_code(&e) else {
            return self.unexpected(e);
        };
        let text = message(&e);
        if code == DUPLICATE_ENTRY
            && let Some(key) = text
                .rsplit_once("for key '")
                .map(|(_, rest)| rest.trim_end_matches('\''))
            && model.field(key).is_some()
        {
            return EngineError::duplicate_value(&text, key);
        }
        non_field(text)
    }
}

/// A value the serializer made, as PyMySQL sends it (`tz`: the engine's default time zone, to
/// which an aware date-time is moved).
fn bind_param(field: &MyField, v: &Internal, tz: Offset) -> Value {
    match v {
        // The engine's `BinaryField` reads hex (checked by [`not_writable`]).
        Internal::Str(s) if field.kind == MyKind::Binary => {
            Value::Bytes(unhexlify(s).unwrap_or_default())
        }
        Internal::None => Value::NULL,
        Internal::Bool(b) => Value::Int(i64::from(*b)),
        Internal::Int(i) => match (i.parse::<i64>(), i.parse::<u64>()) {
            (Ok(n), _) => Value::Int(n),
            (_, Ok(n)) => Value::UInt(n),
            _ => Value::Bytes(i.clone().into_bytes()),
        },
        Internal::Float(f) => Value::Double(*f),
        Internal::Str(s) => Value::Bytes(s.clone().into_bytes()),
        // PyMySQL writes an aware value's wall time: the engine moves it to its zone first
        // only for a `DATETIME` (`prepare_datetime_timezone_naive`).
        Internal::DateTime(dt) if field.timestamp => {
            Value::Bytes(datetime_literal(dt).into_bytes())
        }
        Internal::DateTime(dt) => Value::Bytes(datetime_literal(&dt.in_zone(tz)).into_bytes()),
        Internal::Json(j) => Value::Bytes(py_json_dumps(j).into_bytes()),
    }
}

/// Values the engine cannot write. Text for a blob: SQLAlchemy's `LargeBinary` cannot bind a
/// `str` (the engine's `400`, Python's message). For `BINARY`/`VARBINARY` the engine's
/// `BinaryField` reads hex; other text, and NaN or infinities (PyMySQL refuses them), make it
/// fail (`500`): `[decision: stricter]`, a `400` naming the field.
fn not_writable(values: &[(&MyField, Internal)]) -> Result<(), EngineError> {
    for (f, v) in values {
        if f.kind == MyKind::Blob && *v != Internal::None {
            return Err(non_field("string argument without an encoding".to_owned()));
        }
        if f.kind == MyKind::Binary
            && let Internal::Str(s) = v
            && unhexlify(s).is_none()
        {
            let why = format!(
                "Field {:?} takes bytes as hex (0a1b); the data engine fails (500) on {s:?}.",
                f.name
            );
            return Err(EngineError::stricter(&f.name, why));
        }
        if let Internal::Float(x) = v
            && !x.is_finite()
        {
            let why = format!(
                "The data engine cannot send {x} to MySQL for field {:?} (it fails with a 500).",
                f.name
            );
            return Err(EngineError::stricter(&f.name, why));
        }
    }
    Ok(())
}

/// MySQL's rows, in the types the driver reads (`MyKind::select`).
impl RecordRow<MyField> for Row {
    /// `false` for a `DATETIME` or `TIMESTAMP` that is no Python date-time
    /// (`0000-00-00 00:00:00`): PyMySQL keeps its text, which the engine's date-time field
    /// cannot write.
    /// `false` too for a `SET` of two members or more, which the engine writes in an order of
    /// its own (`mysql::types::unordered_set`).
    fn write_value(&self, buf: &mut Vec<u8>, i: usize, column: &MyField, tz: Offset) -> bool {
        let value = self.as_ref(i).unwrap_or(&Value::NULL);
        write_value(buf, column.kind, &column.members, value, tz);
        match column.kind {
            MyKind::DateTime => !matches!(value, v @ Value::Date(..) if !python_date(v)),
            MyKind::Set => !set_is_unordered(value),
            _ => true,
        }
    }
}

/// How the ORM finds a row of the model again: by its identity columns, qualified.
fn locator(model: &MyModel) -> Locator {
    let columns: Vec<&str> = model
        .identity
        .iter()
        .map(|&i| model.fields[i].qualified.as_str())
        .collect();
    Locator {
        select: columns.join(", "),
        condition: at_identity(model),
        may_repeat: model.promoted_key,
    }
}

/// `a = ? AND b = ?` over the model's identity columns.
fn at_identity(model: &MyModel) -> String {
    model
        .identity
        .iter()
        .map(|&i| format!("{} = ?", model.fields[i].qualified))
        .collect::<Vec<_>>()
        .join(" AND ")
}
