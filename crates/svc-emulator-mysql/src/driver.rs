//! MySQL's driver (`flow::driver`): mysql_async on pooled connections, which the pool resets
//! (`COM_RESET_CONNECTION`) before another request takes them.
//!
//! # Read-only SQL and actions
//!
//! Read-only SQL on a MySQL resource (docs/contract.md 5.2), proved read-only by the server
//! itself, never by a word list:
//!
//! 1. The core binds each `:name` where the engine's SQLAlchemy finds one, as PyMySQL writes
//!    its value (`svc_emulator_core::dialect::user_statement`): a `?` parameter, one per
//!    occurrence, a list `(?, ?)`; an object, or a name inside a string, is refused. Values are
//!    **bound**, never written into the statement's text, so no value can run as SQL. A string
//!    is bound as a string, a whole number as an integer, another number as a double, a
//!    boolean as `1`/`0` (PyMySQL's literals).
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
//!
//! An action's statements run on the same sessions, in a read-write transaction
//! (`flow::action`).
//!
//! # Statements
//!
//! Every statement of the crate runs here, in one of two ways: [`Driver::each_row`] prepares it
//! (the binary protocol) with its values bound to its `?`s from the core's one bind type,
//! [`Binds`] (a read, a write, a catalog's question about a table; [`Driver::execute_one`]
//! with none), and [`text_rows`] sends a statement without values as text (the text protocol),
//! as it always went: the catalog's reads, `SHOW`, `EXPLAIN`, a session's settings, a copy's
//! `CREATE DATABASE` and triggers, a seed. Both hand back the rows, whose cells
//! `types::cell` reads.
//!
//! Only this file turns a [`Bind`] into the value mysql_async sends ([`sent`]), and a cell
//! read from a row into a [`Bind`] where it is bound again ([`read_bind`], [`row_binds`]: a
//! walk's anchor, a locked row's identity, the rows a delete follows).

use crate::schema::{MyField, quote_ident};
use crate::types::{MyKind, Offset, cell, py_value, python_date, write_value};
use crate::{MyResource, message, server_code};
use mysql_async::prelude::Queryable;
use mysql_async::{Column, Conn, Row, Value};
use serde_json::Value as Json;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use svc_emulator_core::dialect::bind::{Bind, Binds};
use svc_emulator_core::dialect::user_statement::UserStatement;
use svc_emulator_core::flow::driver::Driver;
use svc_emulator_core::flow::read_only_sql::{Access, Cancel, Opened};
use svc_engine::sql_answer::{
    AnswerRows, answer_too_large, past_the_cap, query_error, stopped_at_limit,
};
use svc_engine::sql_params::Reading;
use svc_engine::{EngineError, MAX_SQL_ROWS, SqlLimits, sql_params};

/// The name the query's sub-select goes by in the statement that runs it.
const ROW: &str = "__svc_q";

/// MariaDB's and MySQL's codes of a statement stopped at its time limit or killed.
const INTERRUPTED: [u16; 3] = [1969, 3024, 1317];

/// The error code of a write refused in a read-only transaction.
const READ_ONLY_TRANSACTION: u16 = 1792;

/// One row of an answer, each cell as PyMySQL's Python value written by the engine's encoder;
/// `Err` when it would pass the answer cap.
pub(super) fn push_row(
    rows: &mut AnswerRows,
    columns: &[Column],
    row: &Row,
    tz: Offset,
) -> Result<(), EngineError> {
    rows.push(columns.len(), |buf, i| {
        let c = &columns[i];
        let bytes = c.character_set() == BINARY_CHARSET;
        py_value(c.column_type(), bytes, c.decimals(), cell(row, i)).write_answer(buf, tz);
    })
}

/// What runs a query as the engine runs it: a sub-select, at most [`MAX_SQL_ROWS`] rows,
/// within `time`.
#[derive(Clone, Copy)]
struct Statement<'a> {
    text: &'a str,
    mariadb: bool,
    time: Duration,
    answer_bytes: usize,
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

/// MySQL's code of a statement the prepared statements' protocol does not take.
const UNSUPPORTED_PS: u16 = 1295;

/// Whether `e` is the size check's overflow: a row longer than the answer cap.
pub(super) fn too_large(e: &mysql_async::Error) -> bool {
    server_code(e) == Some(OUT_OF_RANGE)
        && message(e).contains(&format!("{OVERFLOW} + "))
        && message(e).contains(ROW)
}

/// A query error from the server (syntax, unknown table, a write refused in the read-only
/// transaction, the time limit): `400` naming `query`.
pub(super) fn query_failed(resource: &MyResource, e: mysql_async::Error) -> EngineError {
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
pub(super) const BINARY_CHARSET: u16 = 63;

/// A bound value as mysql_async sends it (the binary protocol): text as bytes, which the
/// server reads in the connection's character set, as PyMySQL's quoted literal is read; a
/// number as the number; a date-time or a time read from a row as it was read.
fn sent(bind: &Bind) -> Value {
    match bind {
        Bind::Null => Value::NULL,
        Bind::Bool(b) => Value::Int(i64::from(*b)),
        Bind::Int(i) => Value::Int(*i),
        Bind::UInt(u) => Value::UInt(*u),
        Bind::Float(f) => Value::Double(*f),
        Bind::Text(text) => Value::Bytes(text.clone().into_bytes()),
        Bind::Bytes(bytes) => Value::Bytes(bytes.clone()),
        &Bind::DateTime(y, mo, d, h, mi, s, us) => Value::Date(y, mo, d, h, mi, s, us),
        &Bind::Time(neg, d, h, mi, s, us) => Value::Time(neg, d, h, mi, s, us),
        // No statement of this crate binds a list (PostgreSQL's catalog does; a user's list is
        // written out, one `?` per item): one would go as its JSON text.
        Bind::Texts(items) => Value::Bytes(Json::from(items.clone()).to_string().into_bytes()),
        Bind::Ints(items) => Value::Bytes(Json::from(items.clone()).to_string().into_bytes()),
        Bind::Bools(items) => Value::Bytes(Json::from(items.clone()).to_string().into_bytes()),
    }
}

/// A statement's values as mysql_async's parameters: none for a statement without values.
fn sent_params(binds: &Binds) -> mysql_async::Params {
    if binds.is_empty() {
        mysql_async::Params::Empty
    } else {
        mysql_async::Params::Positional(binds.values().iter().map(sent).collect())
    }
}

/// A cell as the binary protocol read it, as a [`Bind`] that [`sent`] sends as the same
/// value: a row's identity or a sort key, bound again to find the row (a `FLOAT`'s `f32` is
/// sent as the same number in an `f64`, which the server reads a `FLOAT` parameter as).
pub(crate) fn read_bind(value: &Value) -> Bind {
    match value {
        Value::NULL => Bind::Null,
        Value::Bytes(bytes) => Bind::Bytes(bytes.clone()),
        Value::Int(i) => Bind::Int(*i),
        Value::UInt(u) => Bind::UInt(*u),
        Value::Float(f) => Bind::Float(f64::from(*f)),
        Value::Double(f) => Bind::Float(*f),
        &Value::Date(y, mo, d, h, mi, s, us) => Bind::DateTime(y, mo, d, h, mi, s, us),
        &Value::Time(neg, d, h, mi, s, us) => Bind::Time(neg, d, h, mi, s, us),
    }
}

/// The cells of a row, in order, each as [`read_bind`] binds it again.
pub(crate) fn row_binds(row: &Row) -> Vec<Bind> {
    (0..row.len()).map(|i| read_bind(cell(row, i))).collect()
}

/// The rows of `sql`, a statement without values sent as text (the text protocol, which runs
/// every statement of a text: its callers send one, written by the crate or read from a seed
/// split into statements).
pub(crate) async fn text_rows(conn: &mut Conn, sql: &str) -> Result<Vec<Row>, mysql_async::Error> {
    conn.query(sql).await
}

/// The end of a quoted string or name starting at `at`: a doubled quote stays inside, and in
/// strings (not in backquoted names) a backslash escapes the next character.
pub(crate) fn skip_quoted(b: &[u8], at: usize, quote: u8) -> usize {
    sql_params::skip_quoted(b, at, quote, quote != b'`')
}

impl Driver for MyResource {
    type Conn = Conn;
    type Row<'r> = Row;
    type Fault = mysql_async::Error;

    /// `false` for a `DATETIME` or `TIMESTAMP` that is no Python date-time
    /// (`0000-00-00 00:00:00`): PyMySQL keeps its text, which the engine's date-time field
    /// cannot write.
    fn write_value(row: &Row, buf: &mut Vec<u8>, i: usize, column: &MyField, tz: Offset) -> bool {
        let value = cell(row, i);
        write_value(buf, column.kind, value, tz);
        match column.kind {
            MyKind::DateTime => !matches!(value, v @ Value::Date(..) if !python_date(v)),
            _ => true,
        }
    }

    /// A prepared statement (the binary protocol), which the server parses as one statement:
    /// the text protocol runs every statement of a text, since mysql_async always asks for
    /// `CLIENT_MULTI_STATEMENTS`. A server that cannot prepare the statement
    /// (`ER_UNSUPPORTED_PS`) has it sent as text only where it holds no `;` at all.
    async fn execute_one(conn: &mut Conn, sql: &str) -> Result<(), mysql_async::Error> {
        match conn.exec_drop(sql, mysql_async::Params::Empty).await {
            Err(e) if server_code(&e) == Some(UNSUPPORTED_PS) && !sql.contains(';') => {
                text_rows(conn, sql).await.map(drop)
            }
            done => done,
        }
    }

    /// Prepares `sql` and runs it with `binds` (the binary protocol): every statement of the
    /// crate with values, and those without that [`Driver::execute_one`] runs. The rows are
    /// handed on once the statement has them all.
    async fn each_row<S: FnMut(&Row) + Send>(
        conn: &mut Conn,
        sql: &str,
        binds: &Binds,
        sink: &mut S,
    ) -> Result<(), mysql_async::Error> {
        let rows: Vec<Row> = conn.exec(sql, sent_params(binds)).await?;
        rows.iter().for_each(sink);
        Ok(())
    }

    /// Each cell as `read_bind` binds it again (`row_binds`). The core reads a count, a
    /// truth (`CASE WHEN ... THEN 1 ELSE 0 END`), a sibling's number and the time zone's
    /// `CAST(... AS SIGNED)` as text from these: every row here comes from [`Driver::each_row`],
    /// the binary protocol, where a column of an integer type is read as `Int` or `UInt` (never
    /// as bytes), so its digits are those `types::cell_text` gave.
    fn cells(row: &Row) -> Vec<Bind> {
        row_binds(row)
    }

    fn cell(row: &Row, i: usize) -> Bind {
        read_bind(cell(row, i))
    }

    /// As the server's answer to the `INSERT` carried it.
    fn last_insert_id(conn: &mut Conn) -> Option<Bind> {
        conn.last_insert_id().map(Bind::UInt)
    }

    /// Dropped, a pooled connection would go back to the pool, where a `KILL QUERY` still on
    /// its way could stop another caller's statement: it is disconnected instead.
    fn close(conn: Conn) {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = conn.disconnect().await;
            });
        }
    }

    /// Given back to the pool, which resets it before anyone else takes it: the transaction
    /// rolled back, the session's variables (a restore's `foreign_key_checks`) as the server
    /// sets them (the pool is made `with_reset_connection`).
    fn give_up(conn: Conn) {
        drop(conn);
    }

    // MySQL's side of a read-only query (`flow::read_only_sql`): a connection of the SQL pool, a
    // `START TRANSACTION READ ONLY`, the statement killed from another connection.
    /// The time limit is the statement's own (see `Statement::size_checked`).
    /// A read-only query's statement is stopped at `time` by its own hint (`run_user`); an
    /// action's statements, on MariaDB, by the session's `max_statement_time`.
    async fn open(&self, time: Duration, access: Access) -> Result<Opened<Conn>, EngineError> {
        let mut conn = self.sql_conn().await?;
        if access == Access::ReadWrite && self.mariadb {
            // The session's setting goes with the connection's reset (`clean`).
            let seconds = format!("{:.3}", time.as_secs_f64().max(0.001));
            let limit = format!("SET SESSION max_statement_time = {seconds}");
            text_rows(&mut conn, &limit)
                .await
                .map_err(|e| self.unexpected(e))?;
        }
        let begin = match access {
            Access::ReadOnly => "START TRANSACTION READ ONLY",
            Access::ReadWrite => "START TRANSACTION READ WRITE",
        };
        text_rows(&mut conn, begin)
            .await
            .map_err(|e| self.unexpected(e))?;
        // `KILL QUERY id` from another connection.
        let (pool, id) = (self.pool.clone(), conn.id());
        let cancel: Cancel = Box::pin(async move {
            if let Ok(mut conn) = pool.get_conn().await {
                let _ = text_rows(&mut conn, &format!("KILL QUERY {id}")).await;
            }
        });
        Ok(Opened { conn, cancel })
    }

    /// Prepares and runs the statement, reading its rows as JSON (the query's columns, without
    /// the size check after them).
    /// A read-only query runs inside the engine's sub-select, each row's size checked by
    /// MySQL (`Statement::size_checked`); an action's statement as it is.
    async fn run_user(
        &self,
        conn: &mut Conn,
        UserStatement {
            text,
            binds,
            reading,
        }: &UserStatement,
        SqlLimits { time, answer_bytes }: SqlLimits,
        tz: Offset,
        left_running: &AtomicBool,
    ) -> Result<(Vec<String>, AnswerRows), EngineError> {
        let refused = |e| query_failed(self, e);
        let (names, prepared) = match reading {
            Reading::Engine => {
                let statement = Statement {
                    text,
                    mariadb: self.mariadb,
                    time,
                    answer_bytes,
                };
                let (names, select) = statement.size_checked(conn).await.map_err(refused)?;
                (Some(names), conn.prep(select).await.map_err(refused)?)
            }
            Reading::Action => (None, conn.prep(text.as_str()).await.map_err(refused)?),
        };
        // Only a query's size check raises the cap's error (an action's statement runs as it is).
        let failed = |e: mysql_async::Error| {
            if *reading == Reading::Engine && too_large(&e) {
                answer_too_large(answer_bytes)
            } else {
                query_failed(self, e)
            }
        };
        let mut result = conn
            .exec_iter(prepared, sent_params(binds))
            .await
            .map_err(failed)?;
        let columns = result.columns().map(|c| c.to_vec()).unwrap_or_default();
        // A query's columns but the size check's; an action's, as it names them.
        let names = names.unwrap_or_else(|| {
            let names = columns.iter().map(|c| c.name_str().into_owned());
            names.collect()
        });
        let columns = &columns[..names.len().min(columns.len())];
        let mut rows = AnswerRows::new(answer_bytes);
        while let Some(row) = result.next().await.map_err(failed)? {
            push_row(&mut rows, columns, &row, tz)
                .map_err(|too_large| past_the_cap(left_running, too_large))?;
        }
        Ok((names, rows))
    }

    async fn clean(mut conn: Conn) {
        let _ = text_rows(&mut conn, "ROLLBACK").await;
        if conn.reset().await.is_err() {
            let _ = conn.disconnect().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use svc_emulator_core::dialect::user_statement::bind_user_statement;
    use svc_engine::sql_params::Reading;

    /// The statement and the values sent on the wire.
    fn bound(query: &str, params: Json) -> Result<(String, Vec<Value>), EngineError> {
        let params = params.as_object().unwrap();
        let user = bind_user_statement::<MyResource>(query, params, Reading::Engine)?;
        Ok((user.text, user.binds.values().iter().map(sent).collect()))
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
        // As the engine's SQLAlchemy finds them; in a comment a name needs its value and stays
        // text (the engine writes the value into the comment).
        let (text, values) = bound(
            "select :a -- :f\n # :g\n /* :h */, :i, :a, @x := 1",
            json!({"a": "it's", "i": -1, "f": "F", "g": "G", "h": "H"}),
        )
        .unwrap();
        assert_eq!(text, "select ? -- :f\n # :g\n /* :h */, ?, ?, @x := 1");
        assert_eq!(
            values,
            [
                Value::Bytes(b"it's".to_vec()),
                Value::Int(-1),
                Value::Bytes(b"it's".to_vec())
            ]
        );
        assert!(bound("select 1 -- :f", json!({})).is_err());
        let (text, values) = bound(
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
                Value::Int(1),
                Value::Bytes(b"x".to_vec()),
            ]
        );
        // A list is PyMySQL's `(1, 'x')`, which `IN :v` takes.
        assert!(text.ends_with("?, (?, ?)"), "{text}");
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

    /// A cell read from a row is sent again as the value it was read as (a `FLOAT`'s `f32` as
    /// the same number in an `f64`); text goes as its bytes.
    #[test]
    fn read_cells_are_sent_again_as_they_were_read() {
        let same = [
            Value::NULL,
            Value::Bytes(b"x\0y".to_vec()),
            Value::Int(-3),
            Value::UInt(u64::MAX),
            Value::Double(0.1),
            Value::Date(2024, 1, 5, 10, 0, 0, 500_000),
            Value::Time(true, 1, 2, 3, 4, 5),
        ];
        for value in same {
            assert_eq!(sent(&read_bind(&value)), value);
        }
        assert_eq!(
            sent(&read_bind(&Value::Float(0.1))),
            Value::Double(f64::from(0.1_f32))
        );
        assert_eq!(
            sent(&Bind::Text("it's".to_owned())),
            Value::Bytes(b"it's".to_vec())
        );
        assert_eq!(sent(&Bind::Float(1.5)), Value::Double(1.5));
        assert!(matches!(
            sent_params(&Binds::default()),
            mysql_async::Params::Empty
        ));
    }

    /// What the core reads as text of a row (a count, a truth, the time zone's offset) is an
    /// integer column's cell, or NULL: as [`read_bind`] reads it (`Driver::cells`), the core's
    /// `Driver::text` (an `Int` or `UInt` as its digits) gives what `types::value_text` gave.
    #[test]
    fn integer_cells_read_as_the_same_text() {
        let values = [
            Value::NULL,
            Value::Int(0),
            Value::Int(1),
            Value::Int(-3600),
            Value::UInt(u64::MAX),
        ];
        for value in values {
            let digits = match read_bind(&value) {
                Bind::Int(n) => Some(n.to_string()),
                Bind::UInt(n) => Some(n.to_string()),
                _ => None,
            };
            assert_eq!(digits, crate::types::value_text(&value));
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
