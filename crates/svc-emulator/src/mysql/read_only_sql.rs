//! Read-only SQL on a MySQL resource (docs/contract.md 5.2), proved read-only by the server
//! itself, never by a word list:
//!
//! 1. Each `:name` outside strings, quoted names and comments becomes a `?` parameter, one per
//!    occurrence: values are **bound**, never written into the statement's text, so no value
//!    can run as SQL. A string is bound as a string, a whole number as an integer, another
//!    number as a double, a boolean as `1`/`0` (PyMySQL's literals), arrays and objects as
//!    their JSON text.
//! 2. The statement is **prepared**, which MySQL does for exactly one statement: `;` cannot
//!    add a second. It runs as the engine runs it, inside a sub-select (`SELECT * FROM
//!    (<query>) AS __svc_q`), so a statement that is not a query (`DELETE`, `SET`, `COMMIT`,
//!    `CALL`) fails there, and in a `START TRANSACTION READ ONLY` transaction, in which the
//!    server refuses every write to a table.
//! 3. The server enforces the time limit: MariaDB's `SET STATEMENT max_statement_time=... FOR`,
//!    MySQL's `MAX_EXECUTION_TIME` hint. At the deadline, or when the caller goes away (the
//!    future is dropped), the statement is also killed from a second connection
//!    (`KILL QUERY <id>`).
//! 4. Rows are read one at a time, up to [`MAX_SQL_ROWS`] (a `LIMIT` on the sub-select) and the
//!    answer cap; a row is at most the server's `max_allowed_packet`.
//! 5. The transaction is rolled back and the session reset (`COM_RESET_CONNECTION`: user
//!    variables, user locks, temporary tables, prepared statements, settings); a connection
//!    that cannot be reset, or whose statement was left running, is closed.

use std::time::Duration;

use mysql_async::consts::ColumnType;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Pool, Value};
use serde_json::{Map, Value as Json};

use crate::engine::EngineError;
use crate::engine::MAX_SQL_ROWS;
use crate::engine::json_text::write_json_str;
use crate::engine::server::{
    self, AnswerRows, answer_too_large, encoder_offset, encoder_seconds, line_end, query_error,
    starts_name, stopped_after, stopped_at_limit, write_encoder_bytes,
};
use crate::engine::types::{Date, write_float};
use crate::flow::database::Database;
use crate::mysql::schema::quote_ident;
use crate::mysql::types::{Offset, date_text, iso_datetime, value_float, value_text};
use crate::mysql::{MyResource, message, server_code};

/// The name the query's sub-select goes by in the statement that runs it.
const ROW: &str = "__svc_q";

/// MariaDB's and MySQL's codes of a statement stopped at its time limit or killed.
const INTERRUPTED: [u16; 3] = [1969, 3024, 1317];

/// The error code of a write refused in a read-only transaction.
const READ_ONLY_TRANSACTION: u16 = 1792;

/// Kills the running statement when dropped before [`disarm`](Self::disarm): the caller went
/// away, or the deadline passed.
struct KillOnDrop {
    pool: Pool,
    id: Option<u32>,
}

impl KillOnDrop {
    fn disarm(&mut self) {
        self.id = None;
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let pool = self.pool.clone();
            runtime.spawn(async move {
                kill(&pool, id).await;
            });
        }
    }
}

/// `KILL QUERY id` from another connection.
async fn kill(pool: &Pool, id: u32) {
    if let Ok(mut conn) = pool.get_conn().await {
        let _ = conn.query_drop(format!("KILL QUERY {id}")).await;
    }
}

impl MyResource {
    /// Runs one read-only query with `params` (`:name` values) within `time` and
    /// `answer_bytes`; the answer is `{"columns", "data", "row_count"}` as JSON bytes.
    pub async fn sql(
        &self,
        query: &str,
        params: &Map<String, Json>,
        time: Duration,
        answer_bytes: usize,
    ) -> Result<Vec<u8>, EngineError> {
        let (text, values) = bind_names(query, params)?;
        let mut conn = self.sql_conn().await?;
        let tz = self.time_zone(&mut conn).await?;
        conn.query_drop("START TRANSACTION READ ONLY")
            .await
            .map_err(|e| self.unexpected(e))?;
        let mut guard = KillOnDrop {
            pool: self.pool.clone(),
            id: Some(conn.id()),
        };
        let statement = Statement {
            text: &text,
            mariadb: self.mariadb,
            time,
            answer_bytes,
            tz,
        };
        let mut left_running = false;
        let outcome =
            tokio::time::timeout(time, run(&mut conn, statement, values, &mut left_running)).await;
        let still_running = outcome.is_err() || left_running;
        if still_running && let Some(id) = guard.id.take() {
            kill(&self.pool, id).await;
        }
        guard.disarm();
        if still_running {
            // Its rows may still be on the way: the connection is closed, not reused.
            let _ = conn.disconnect().await;
        } else {
            let _ = conn.query_drop("ROLLBACK").await;
            if conn.reset().await.is_err() {
                let _ = conn.disconnect().await;
            }
        }
        match outcome {
            Ok(Ok((names, rows))) => Ok(rows.answer(&names)),
            Ok(Err(e)) => Err(query_failed(self, e)),
            Err(_) => Err(stopped_after(time)),
        }
    }
}

/// What runs a query as the engine runs it: a sub-select, at most [`MAX_SQL_ROWS`] rows,
/// within `time`.
#[derive(Clone, Copy)]
struct Statement<'a> {
    text: &'a str,
    mariadb: bool,
    time: Duration,
    answer_bytes: usize,
    /// The engine's default time zone, which date-times are in.
    tz: Offset,
}

impl Statement<'_> {
    /// The query's column names, and the statement that reads them with one more column that
    /// fails in the server for a row longer than the answer cap: such a row is never sent (as
    /// on PostgreSQL), whatever its size. The measure is the sum of the values' lengths, which
    /// their JSON is never shorter than. The names come from preparing the sub-select alone.
    async fn size_checked(
        &self,
        conn: &mut Conn,
    ) -> Result<(Vec<String>, String), mysql_async::Error> {
        let Statement {
            text,
            mariadb,
            time,
            answer_bytes,
            ..
        } = *self;
        let probe = conn
            .prep(format!("SELECT * FROM ({text}\n) AS {ROW}"))
            .await?;
        let names: Vec<String> = probe
            .columns()
            .iter()
            .map(|c| c.name_str().into_owned())
            .collect();
        conn.close(probe).await?;
        let size = names
            .iter()
            .map(|n| format!("COALESCE(LENGTH({ROW}.{}), 0)", quote_ident(n)))
            .collect::<Vec<_>>()
            .join(" + ");
        // Unsigned overflow is an error in a SELECT too (1690), and its message quotes the
        // expression, which names the sub-select: [`too_large`] tells it from the query's own.
        let columns =
            format!("{ROW}.*, CASE WHEN {size} > {answer_bytes} THEN {OVERFLOW} + ({size}) END");
        let select = if mariadb {
            let seconds = format!("{:.3}", time.as_secs_f64().max(0.001));
            format!(
                "SET STATEMENT max_statement_time={seconds} FOR \
                 SELECT {columns} FROM ({text}\n) AS {ROW} LIMIT {MAX_SQL_ROWS}"
            )
        } else {
            format!(
                "SELECT /*+ MAX_EXECUTION_TIME({}) */ {columns} FROM ({text}\n) AS {ROW} \
                 LIMIT {MAX_SQL_ROWS}",
                time.as_millis().max(1)
            )
        };
        Ok((names, select))
    }
}

/// The largest unsigned integer: adding a row's size to it overflows.
const OVERFLOW: &str = "18446744073709551615";

/// MySQL's code of an integer out of its type's range.
const OUT_OF_RANGE: u16 = 1690;

/// Whether `e` is the size check's overflow: a row longer than the answer cap.
fn too_large(e: &mysql_async::Error) -> bool {
    server_code(e) == Some(OUT_OF_RANGE)
        && message(e).contains(&format!("{OVERFLOW} + "))
        && message(e).contains(ROW)
}

/// Why a query failed: the server's error, or the answer cap.
enum Failure {
    Db(mysql_async::Error),
    TooLarge(usize),
}

type Answer = (Vec<String>, AnswerRows);

/// Prepares and runs the statement, reading its rows as JSON (the query's columns, without the
/// size check after them).
async fn run(
    conn: &mut Conn,
    statement: Statement<'_>,
    values: Vec<Value>,
    left_running: &mut bool,
) -> Result<Answer, Failure> {
    let answer_bytes = statement.answer_bytes;
    let (names, select) = statement.size_checked(conn).await.map_err(Failure::Db)?;
    let prepared = conn.prep(select).await.map_err(Failure::Db)?;
    let params = if values.is_empty() {
        mysql_async::Params::Empty
    } else {
        mysql_async::Params::Positional(values)
    };
    let failed = |e: mysql_async::Error| {
        if too_large(&e) {
            Failure::TooLarge(answer_bytes)
        } else {
            Failure::Db(e)
        }
    };
    let mut result = conn.exec_iter(prepared, params).await.map_err(failed)?;
    let columns = result.columns().map(|c| c.to_vec()).unwrap_or_default();
    let types: Vec<Cell> = columns
        .iter()
        .take(names.len())
        .map(|c| Cell {
            ty: c.column_type(),
            bytes: c.character_set() == BINARY_CHARSET,
            decimals: c.decimals(),
        })
        .collect();
    let mut rows = AnswerRows::new(answer_bytes);
    while let Some(row) = result.next().await.map_err(failed)? {
        let written = rows.push(types.len(), |buf, i| {
            let value = row.as_ref(i).unwrap_or(&Value::NULL);
            write_cell(buf, &types[i], value, statement.tz);
        });
        if written.is_err() {
            *left_running = true;
            return Err(Failure::TooLarge(answer_bytes));
        }
    }
    Ok((names, rows))
}

/// A query error from the server (syntax, unknown table, a write refused in the read-only
/// transaction, the time limit): `400` naming `query`.
fn query_failed(resource: &MyResource, failure: Failure) -> EngineError {
    let e = match failure {
        Failure::TooLarge(bytes) => return answer_too_large(bytes),
        Failure::Db(e) => e,
    };
    match server_code(&e) {
        Some(READ_ONLY_TRANSACTION) => query_error(format!(
            "Queries are read-only: {} (MySQL refused it in a read-only transaction).",
            message(&e)
        )),
        Some(code) if INTERRUPTED.contains(&code) => stopped_at_limit(),
        Some(_) => query_error(message(&e)),
        // The driver refused the statement or its values before the server saw them.
        None if matches!(e, mysql_async::Error::Driver(_)) => query_error(format!(
            "The query cannot be sent to MySQL as it is: {}.",
            message(&e)
        )),
        // A row larger than the server's `max_allowed_packet`, which the driver will not read
        // (the connection is closed afterwards).
        None if message(&e).contains("larger than max_allowed_packet") => query_error(
            "A row of the answer is larger than the server's max_allowed_packet: select \
             smaller values (LEFT(col, n)), or fewer columns."
                .to_owned(),
        ),
        None => resource.unexpected(e),
    }
}

/// MySQL's number of the `binary` character set: the column's values are bytes to PyMySQL.
const BINARY_CHARSET: u16 = 63;

/// What a result column's values are, as PyMySQL reads them.
struct Cell {
    ty: ColumnType,
    /// Bytes (`BINARY`, `VARBINARY`, blobs, `BIT`), not text.
    bytes: bool,
    /// The fractional digits of a date-time.
    decimals: u8,
}

/// One value of a result column as the engine's SQL answer writes it: PyMySQL's Python value
/// through the engine's JSON encoder. Integers and floats as numbers; a `DECIMAL` as
/// `float(value)`; a date-time in the database's time zone (`tz`), `Z` for UTC; a `TIME`
/// (a `timedelta`) as the text of its total seconds (`"36672.0"`); bytes decoded as UTF-8, or
/// in hex when they are not; a date MySQL holds that Python cannot (`0000-00-00`) as MySQL's
/// text; everything else as its text.
fn write_cell(buf: &mut Vec<u8>, cell: &Cell, v: &Value, tz: Offset) {
    if *v == Value::NULL {
        buf.extend_from_slice(b"null");
        return;
    }
    match cell.ty {
        ColumnType::MYSQL_TYPE_TINY
        | ColumnType::MYSQL_TYPE_SHORT
        | ColumnType::MYSQL_TYPE_LONG
        | ColumnType::MYSQL_TYPE_LONGLONG
        | ColumnType::MYSQL_TYPE_INT24
        | ColumnType::MYSQL_TYPE_YEAR => {
            let text = value_text(v).unwrap_or_default();
            if text.bytes().all(|b| b.is_ascii_digit() || b == b'-') && !text.is_empty() {
                buf.extend_from_slice(text.as_bytes());
            } else {
                write_json_str(buf, &text);
            }
        }
        ColumnType::MYSQL_TYPE_FLOAT | ColumnType::MYSQL_TYPE_DOUBLE => {
            write_float(buf, value_float(v).unwrap_or(f64::NAN));
        }
        ColumnType::MYSQL_TYPE_NEWDECIMAL | ColumnType::MYSQL_TYPE_DECIMAL => {
            let text = value_text(v).unwrap_or_default();
            match text.trim().parse::<f64>() {
                Ok(f) => write_float(buf, f),
                Err(_) => write_json_str(buf, &text),
            }
        }
        ColumnType::MYSQL_TYPE_DATE | ColumnType::MYSQL_TYPE_NEWDATE => match v {
            Value::Date(y, mo, d, ..) if !is_python_date(*y, *mo, *d) => {
                write_json_str(buf, &format!("{y:04}-{mo:02}-{d:02}"));
            }
            _ => write_json_str(buf, &date_text(v).unwrap_or_default()),
        },
        ColumnType::MYSQL_TYPE_DATETIME
        | ColumnType::MYSQL_TYPE_DATETIME2
        | ColumnType::MYSQL_TYPE_TIMESTAMP
        | ColumnType::MYSQL_TYPE_TIMESTAMP2 => match v {
            Value::Date(y, mo, d, h, mi, s, us) if !is_python_date(*y, *mo, *d) => {
                let mut text = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
                if cell.decimals > 0 && cell.decimals <= 6 {
                    let digits = format!("{us:06}");
                    text.push('.');
                    text.push_str(&digits[..usize::from(cell.decimals)]);
                }
                write_json_str(buf, &text);
            }
            _ => {
                let mut iso = iso_datetime(v, None).unwrap_or_default();
                iso.push_str(&encoder_offset(tz));
                write_json_str(buf, &iso);
            }
        },
        ColumnType::MYSQL_TYPE_TIME | ColumnType::MYSQL_TYPE_TIME2 => match time_micros(v) {
            Some(micros) => write_json_str(buf, &encoder_seconds(micros)),
            None => write_json_str(buf, &value_text(v).unwrap_or_default()),
        },
        ColumnType::MYSQL_TYPE_JSON => {
            let text = value_text(v).unwrap_or_default();
            match serde_json::from_str::<Json>(&text) {
                Ok(j) => {
                    let _ = serde_json::to_writer(&mut *buf, &j);
                }
                Err(_) => write_json_str(buf, &text),
            }
        }
        _ => match v {
            Value::Bytes(b) if cell.bytes => write_encoder_bytes(buf, b),
            _ => write_json_str(buf, &value_text(v).unwrap_or_default()),
        },
    }
}

/// Whether Python has a date of that year, month and day (PyMySQL keeps MySQL's text of any
/// other, `0000-00-00` among them).
fn is_python_date(year: u16, month: u8, day: u8) -> bool {
    Date {
        year: u32::from(year),
        month: u32::from(month),
        day: u32::from(day),
    }
    .valid()
}

/// The microseconds of a `TIME` value, signed (`-01:00:00` is `-3600000000`).
fn time_micros(v: &Value) -> Option<i64> {
    match v {
        Value::Time(negative, days, h, m, s, us) => {
            let total =
                ((i64::from(*days) * 24 + i64::from(*h)) * 60 + i64::from(*m)) * 60 + i64::from(*s);
            let micros = total * 1_000_000 + i64::from(*us);
            Some(if *negative { -micros } else { micros })
        }
        _ => None,
    }
}

/// A parameter value as PyMySQL would write its literal.
fn param_value(value: &Json) -> Value {
    match value {
        Json::Null => Value::NULL,
        Json::Bool(b) => Value::Int(i64::from(*b)),
        Json::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => Value::Int(i),
            (_, Some(u), _) => Value::UInt(u),
            (_, _, Some(f)) => Value::Double(f),
            _ => Value::Bytes(n.to_string().into_bytes()),
        },
        Json::String(s) => Value::Bytes(s.clone().into_bytes()),
        other => Value::Bytes(other.to_string().into_bytes()),
    }
}

/// Replaces each `:name` outside strings, quoted names and comments by a `?` bound to
/// `params[name]`; `?` placeholders of the query itself are refused (there is nothing to bind
/// them to).
fn bind_names(
    query: &str,
    params: &Map<String, Json>,
) -> Result<(String, Vec<Value>), EngineError> {
    server::bind_names(query, params, skip, param_value, |_| "?".to_owned())
}

/// Where what starts at `i` and holds no parameter ends, in MySQL's text: strings, quoted
/// names, comments and `:=`. An executable comment (`/*! ... */`, MariaDB's `/*M! ... */`) is
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
            let end = b[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len(), |p| i + 2 + p + 2);
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

/// Whether `b` holds a `:name`.
fn has_name(b: &[u8]) -> bool {
    b.windows(2).any(|w| w[0] == b':' && starts_name(w[1]))
}

/// The end of a quoted string or name starting at `at`: a doubled quote stays inside, and in
/// strings (not in backquoted names) a backslash escapes the next character.
pub(crate) fn skip_quoted(b: &[u8], at: usize, quote: u8) -> usize {
    server::skip_quoted(b, at, quote, quote != b'`')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bound(query: &str, params: Json) -> Result<(String, Vec<Value>), EngineError> {
        bind_names(query, params.as_object().unwrap())
    }

    #[test]
    fn names_in_executable_comments_are_bound_and_in_hints_refused() {
        let (text, values) = bound(
            "select 1 /*! , :a */ /*M! , :a */ /* :a */",
            json!({"a": 5}),
        )
        .unwrap();
        assert_eq!(text, "select 1 /*! , ? */ /*M! , ? */ /* :a */");
        assert_eq!(values.len(), 2);
        let hinted = bound("select /*+ :a */ 1", json!({"a": 5}));
        assert!(hinted.is_err(), "{hinted:?}");
        assert!(bound("select /*+ NO_ICP(t) */ 1", json!({})).is_ok());
    }

    #[test]
    fn names_become_parameters_outside_quotes_and_comments() {
        let (text, values) = bound(
            "select :a, ':b', \":c\", `:d`, 'it\\':e' -- :f\n # :g\n /* :h */ :i, :a, @x := 1",
            json!({"a": "it's", "i": -1}),
        )
        .unwrap();
        assert_eq!(
            text,
            "select ?, ':b', \":c\", `:d`, 'it\\':e' -- :f\n # :g\n /* :h */ ?, ?, @x := 1"
        );
        assert_eq!(
            values,
            [
                Value::Bytes(b"it's".to_vec()),
                Value::Int(-1),
                Value::Bytes(b"it's".to_vec())
            ]
        );
        let (_, values) = bound(
            "select :n, :huge, :f, :t, :z, :v",
            json!({"n": 7, "huge": 18_446_744_073_709_551_615_u64, "f": 1.5, "t": true,
                   "z": null, "v": [1, "x"]}),
        )
        .unwrap();
        assert_eq!(
            values,
            [
                Value::Int(7),
                Value::UInt(u64::MAX),
                Value::Double(1.5),
                Value::Int(1),
                Value::NULL,
                Value::Bytes(b"[1,\"x\"]".to_vec()),
            ]
        );
    }

    #[test]
    fn a_value_never_enters_the_statement_text() {
        let hostile = "' OR 1=1; DROP TABLE t; -- \\";
        for query in [
            "select ':p'",
            "select \":p\\\"\" , :p",
            "select :p",
            "select `a:p`",
        ] {
            if let Ok((text, values)) = bound(query, json!({ "p": hostile })) {
                assert!(!text.contains("DROP"), "{query}: {text}");
                assert!(
                    values
                        .iter()
                        .all(|v| *v == Value::Bytes(hostile.as_bytes().to_vec()))
                );
            }
        }
    }

    #[test]
    fn missing_and_positional_parameters_are_refused() {
        let e = bound("select :nope", json!({})).unwrap_err();
        assert!(e.to_string().contains(":nope"), "{e}");
        let e = bound("select ?", json!({})).unwrap_err();
        assert!(e.to_string().contains("Positional"), "{e}");
        assert!(bound("select '?'", json!({})).is_ok());
    }
}
