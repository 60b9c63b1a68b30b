//! PostgreSQL's driver (`flow::driver`): tokio-postgres on pooled connections, each keeping the
//! statements it ran prepared.
//!
//! # Read-only SQL and actions
//!
//! Read-only SQL on a PostgreSQL resource (docs/contract.md 5.2), proved read-only by
//! PostgreSQL itself, never by a word list:
//!
//! 1. The core binds each `:name` where the engine's SQLAlchemy finds one, as psycopg2 writes
//!    its value (`svc_emulator_core::dialect::user_statement`): a parameter (`$1`, `$2`, ...
//!    one per occurrence, so that each is typed by its own context, as the engine's literals
//!    are), a list `ARRAY[$1,$2]`; an object, or a name inside a string, is refused. Values are
//!    **bound**, never written into the statement's text, so no value can run as SQL whatever
//!    the statement or the session's settings. Here each is typed as psycopg2's literal
//!    ([`literal`]): text of unknown type (PostgreSQL types it as it would the engine's
//!    untyped literal), a number as `integer`, `bigint` or `numeric`, a boolean as `boolean`.
//! 2. The connection rolls back anything left over, then begins a `READ ONLY` transaction
//!    with `SET LOCAL statement_timeout`.
//! 3. The query runs as the engine runs it, inside a sub-select (`SELECT * FROM (<query>) AS
//!    ...`), so a statement that is not a query (`DELETE`, `SET`, `COMMIT`, several
//!    statements) fails there, and every write inside a query (`nextval`, `SELECT ... FOR
//!    UPDATE`, data-modifying `WITH`) is refused by the read-only transaction. Its rows are read
//!    through a cursor, and PostgreSQL checks each row's size before it sends it: a row larger
//!    than the answer cap fails in the database and never reaches the emulator's memory. An
//!    array column is read as its `to_json` text: psycopg2 reads it as a list.
//! 4. The transaction is rolled back and the session discarded (`DISCARD ALL`, sent on its
//!    own: settings, the role, advisory locks, `LISTEN`, prepared statements, cursors,
//!    temporary tables); a connection that cannot be discarded is closed. SQL connections have
//!    a pool of their own, whose connections are also cleaned before reuse.
//! 5. At the deadline, or when the caller goes away (the future is dropped), PostgreSQL is
//!    asked to cancel the statement.
//!
//! An action's statements run on the same sessions, in a read-write transaction
//! (`flow::action`).

use crate::schema::PgField;
use crate::types::{
    Offset, PgKind, finite, interval, iso_time, parse_float, python_cannot_hold, timestamp,
    write_value,
};
use crate::{PgResource, message};
use bytes::BytesMut;
use deadpool_postgres::{Object, StatementCache};
use futures_util::TryStreamExt;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use svc_emulator_core::dialect::bind::{Bind, Binds};
use svc_emulator_core::dialect::user_statement::UserStatement;
use svc_emulator_core::flow::driver::Driver;
use svc_emulator_core::flow::read_only_sql::{Access, Cancel, Opened};
use svc_engine::python::Py;
use svc_engine::sql_answer::{AnswerRows, past_the_cap, query_error, stopped_at_limit};
use svc_engine::sql_params::Reading;
use svc_engine::{EngineError, MAX_SQL_ROWS, SqlLimits};
use tokio_postgres::types::{Format, IsNull, ToSql, Type};
use tokio_postgres::{Client, Column, NoTls, Row, SimpleQueryMessage, Statement};

/// The name the query's sub-select goes by in the statement that runs it.
const ROW: &str = "__svc_q";

/// The cursor the rows are read through (closed with the transaction).
const CURSOR: &str = "__svc_rows";

/// The text of the cast that fails for a row over the answer cap: its error names it.
const TOO_LARGE: &str = "svc: a row of the answer is too large, bytes: ";

impl PgResource {
    /// `sql` prepared with the types of `literals`; a refusal is the query's.
    pub(super) async fn prepare_query(
        &self,
        client: &Object,
        sql: &str,
        literals: &[QueryLiteral],
    ) -> Result<Statement, EngineError> {
        let types: Vec<Type> = literals.iter().map(|v| v.ty.clone()).collect();
        let prepared = client.prepare_typed(sql, &types).await;
        prepared.map_err(|e| query_failed(self, e))
    }
}

/// The names of an answer's `columns` (refused when one repeats) and their types' names.
pub(super) fn names_and_types(
    columns: &[Column],
) -> Result<(Vec<String>, Vec<String>), EngineError> {
    let names: Vec<String> = columns.iter().map(|c| c.name().to_owned()).collect();
    refuse_repeated_names(&names)?;
    let types = columns
        .iter()
        .map(|c| c.type_().name().to_owned())
        .collect();
    Ok((names, types))
}

/// A query error from PostgreSQL (syntax, unknown table, a write refused in the read-only
/// transaction, the statement timeout): `400` naming `query`.
pub(super) fn query_failed(resource: &PgResource, e: tokio_postgres::Error) -> EngineError {
    match e.as_db_error() {
        Some(db) if db.code() == &tokio_postgres::error::SqlState::READ_ONLY_SQL_TRANSACTION => {
            query_error(format!(
                "Queries are read-only: {} (PostgreSQL refused it in a read-only transaction).",
                db.message()
            ))
        }
        // The size check of a row over the answer cap (the cap is in the message's text).
        Some(db) if db.message().contains(TOO_LARGE) => query_error(
            "The answer is larger than the SQL answer limit: a row alone is larger; select \
             fewer columns or smaller values."
                .to_owned(),
        ),
        Some(db) if db.code() == &tokio_postgres::error::SqlState::QUERY_CANCELED => {
            stopped_at_limit()
        }
        Some(_) => query_error(message(&e).trim_end().to_owned()),
        None => resource.unexpected(e),
    }
}

/// One value of PostgreSQL text of type `ty` as the engine's SQL answer writes it: psycopg2's
/// Python value through the engine's JSON encoder. Integers, floats and booleans as such (NaN
/// and the infinities `null`); `numeric` as `float(value)` (`1.0`); JSON as JSON; a date-time
/// with its offset, a `timestamp` with the database's (`tz`), `Z` for UTC; an `interval` (a
/// `timedelta`) as the text of its total seconds; everything else as PostgreSQL's text.
pub(super) fn write_cell(buf: &mut Vec<u8>, ty: &str, text: Option<&str>, tz: Offset) {
    let Some(text) = text else {
        return Py::None.write_answer(buf, tz);
    };
    if let Some(kind) = array_kind(ty) {
        // Read as `to_json` writes it (`answer_select`): psycopg2's list.
        return crate::types::write_value(buf, kind, Some(text), tz);
    }
    let value = match ty {
        "int2" | "int4" | "int8" | "oid" => Py::Int(text.to_owned()),
        "float4" | "float8" | "numeric" => Py::Float(parse_float(text)),
        "bool" => Py::Bool(text == "t"),
        "json" | "jsonb" => Py::Json(text.to_owned()),
        // psycopg2 reads `infinity` and `-infinity` as Python's largest and smallest date-times.
        "date" => Py::Str(finite(PgKind::Date, text).to_owned()),
        "timestamp" => timestamp(finite(PgKind::Timestamp, text)),
        "timestamptz" => timestamp(finite(PgKind::TimestampTz, text)),
        "time" => Py::Time(iso_time(text), None),
        "interval" => interval(text),
        _ => Py::Str(text.to_owned()),
    };
    value.write_answer(buf, tz);
}

/// The kind of an array type, by its name (`_int4`); `None` for any other type.
fn array_kind(ty: &str) -> Option<PgKind> {
    ty.strip_prefix('_').map(|item| PgKind::of(ty, 'A', item))
}

/// [decision: stricter] Columns that share a name: the engine reads each row by name, so
/// every such column shows the last one's value (`select 1 as a, 2 as a` is `[[2, 2]]`), and
/// three columns fail (`Ambiguous column name`): refused, naming the column.
pub(super) fn refuse_repeated_names(names: &[String]) -> Result<(), EngineError> {
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            return Err(EngineError::stricter(
                "query",
                format!(
                    "The answer has more than one column named {name:?}: the data engine shows \
                 the last one's value in each of them. Name each column (AS)."
                ),
            ));
        }
    }
    Ok(())
}

/// The values of a user's statement, each sent as its literal's text ([`Sent::Literal`]).
fn sent_literals(literals: &[QueryLiteral]) -> impl ExactSizeIterator<Item = Sent<'_>> {
    literals.iter().map(Sent::Literal)
}

/// A value of a user's statement (read-only SQL, an action's) with the type
/// the engine's literal would have ([`literal`]), sent as PostgreSQL's text of that type: the
/// server reads it as it reads the literal. The crate's own statements bind
/// [`Binds`] instead, whose values the statements cast themselves.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct QueryLiteral {
    /// The type the placeholder is prepared with.
    ty: Type,
    /// The literal's text; `None` for NULL.
    text: Option<String>,
}

/// psycopg2 writes a value as a literal (`dialect::user_statement`, whose items of a list are
/// values of their own): a string as an untyped literal, a number as a number literal
/// (`integer` when it fits, then `bigint`, else `numeric`), a boolean as `true`/`false`.
fn literal(value: &Bind) -> QueryLiteral {
    let (ty, text) = match value {
        Bind::Null => (Type::UNKNOWN, None),
        Bind::Bool(b) => (Type::BOOL, Some(b.to_string())),
        Bind::Int(i) if i32::try_from(*i).is_ok() => (Type::INT4, Some(i.to_string())),
        Bind::Int(i) => (Type::INT8, Some(i.to_string())),
        Bind::UInt(u) => (Type::NUMERIC, Some(u.to_string())),
        // As JSON writes the number (`1.0` stays `1.0`), which `numeric` keeps.
        Bind::Float(f) => {
            let text =
                serde_json::Number::from_f64(*f).map_or_else(|| f.to_string(), |n| n.to_string());
            (Type::NUMERIC, Some(text))
        }
        Bind::Text(text) => (Type::UNKNOWN, Some(text.clone())),
        other => (Type::UNKNOWN, other.sql_text()),
    };
    QueryLiteral { ty, text }
}

/// Each value of a user's statement as its literal.
pub(super) fn literals(statement: &UserStatement) -> Vec<QueryLiteral> {
    statement.binds.values().iter().map(literal).collect()
}

/// A value as tokio-postgres sends it: one of the crate's own statements ([`Bind`], as the
/// type its placeholder names, [`sent_as`](crate::dialect::sent_as)), or a literal of a user's
/// statement ([`QueryLiteral`]).
///
/// Text (NULL too), bytes, integers, floats and the arrays go in PostgreSQL's binary format,
/// checked against the placeholder's type. A literal, a number past `bigint`, a date-time and
/// a duration go as PostgreSQL's text, which the server reads as the placeholder's type
/// (tokio-postgres has no binary form of its own for the last three, which the crate's
/// statements never bind: they are sent so that every value the core may bind has a meaning).
#[derive(Debug)]
enum Sent<'a> {
    /// A value of the crate's own statements.
    Bound(&'a Bind),
    /// A literal of a user's statement.
    Literal(&'a QueryLiteral),
}

impl Sent<'_> {
    /// The value's text, when it is sent as text (`None` inside: NULL).
    fn text(&self) -> Option<Option<String>> {
        match self {
            Sent::Literal(literal) => Some(literal.text.clone()),
            Sent::Bound(value) => value.sql_text().map(Some),
        }
    }
}

impl ToSql for Sent<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        if let Some(text) = self.text() {
            return Ok(match text {
                Some(text) => {
                    out.extend_from_slice(text.as_bytes());
                    IsNull::No
                }
                None => IsNull::Yes,
            });
        }
        match self {
            Sent::Bound(Bind::Text(text)) => text.to_sql(ty, out),
            Sent::Bound(Bind::Bytes(bytes)) => bytes.to_sql(ty, out),
            Sent::Bound(Bind::Int(i)) => i.to_sql(ty, out),
            Sent::Bound(Bind::Bool(b)) => b.to_sql(ty, out),
            Sent::Bound(Bind::Float(f)) => f.to_sql(ty, out),
            Sent::Bound(Bind::Texts(items)) => items.to_sql(ty, out),
            Sent::Bound(Bind::Ints(items)) => items.to_sql(ty, out),
            Sent::Bound(Bind::Bools(items)) => items.to_sql(ty, out),
            _ => None::<String>.to_sql(ty, out),
        }
    }

    /// Every type: each kind checks its own in [`ToSql::to_sql_checked`].
    fn accepts(_ty: &Type) -> bool {
        true
    }

    fn to_sql_checked(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Sent::Bound(Bind::Null) => None::<String>.to_sql_checked(ty, out),
            Sent::Bound(Bind::Text(text)) => text.to_sql_checked(ty, out),
            Sent::Bound(Bind::Bytes(bytes)) => bytes.to_sql_checked(ty, out),
            Sent::Bound(Bind::Int(i)) => i.to_sql_checked(ty, out),
            Sent::Bound(Bind::Bool(b)) => b.to_sql_checked(ty, out),
            Sent::Bound(Bind::Float(f)) => f.to_sql_checked(ty, out),
            Sent::Bound(Bind::Texts(items)) => items.to_sql_checked(ty, out),
            Sent::Bound(Bind::Ints(items)) => items.to_sql_checked(ty, out),
            Sent::Bound(Bind::Bools(items)) => items.to_sql_checked(ty, out),
            // Any type: PostgreSQL reads the text.
            _ => self.to_sql(ty, out),
        }
    }

    fn encode_format(&self, _ty: &Type) -> Format {
        match self.text() {
            Some(_) => Format::Text,
            None => Format::Binary,
        }
    }
}

/// The name of the `WITH` an action's statement runs in.
const ROWS: &str = "__svc_action";

/// Statements a pooled connection keeps prepared; past this it starts afresh. Each list shape
/// (filters, order, paging) is a statement of its own.
const STATEMENTS_PER_CONNECTION: usize = 256;

/// The rows of one of the crate's own statements, prepared once per connection.
pub(crate) async fn rows(
    conn: &Object,
    sql: &str,
    binds: &Binds,
) -> Result<Vec<Row>, tokio_postgres::Error> {
    run(conn, Some(&conn.statement_cache), sql, binds).await
}

impl Driver for PgResource {
    type Conn = Object;
    type Row<'r> = Row;
    type Fault = tokio_postgres::Error;

    /// `false` for a date or date-time psycopg2 cannot read (a year before 1 or past 9999).
    fn write_value(row: &Row, buf: &mut Vec<u8>, i: usize, column: &PgField, tz: Offset) -> bool {
        let text: Option<&str> = row.get(i);
        write_value(buf, column.kind, text, tz);
        !(column.kind.holds_dates() && text.is_some_and(python_cannot_hold))
    }

    /// The extended protocol with an unnamed statement, in one round trip: nothing is kept
    /// prepared, no statement cache fills, and the server refuses a second statement
    /// ("cannot insert multiple commands into a prepared statement") where the simple
    /// protocol would run it.
    async fn execute_one(conn: &mut Object, sql: &str) -> Result<(), tokio_postgres::Error> {
        run_one(conn, sql).await
    }

    /// Prepared once per connection; each row handed on as it arrives.
    async fn each_row<S: FnMut(&Row) + Send>(
        conn: &mut Object,
        sql: &str,
        binds: &Binds,
        sink: &mut S,
    ) -> Result<(), tokio_postgres::Error> {
        let statement = prepared(conn, &conn.statement_cache, sql).await?;
        let values = binds.values().iter().map(Sent::Bound);
        let rows = conn.query_raw(&statement, values).await?;
        futures_util::pin_mut!(rows);
        while let Some(row) = rows.try_next().await? {
            sink(&row);
        }
        Ok(())
    }

    /// Each cell as the value it is bound again as: an integer of any width (a count, a
    /// truth written `1` or `0`, the time zone's `::int4`) as [`Bind::Int`], text (and `name`:
    /// a locked row's `ctid::text`, an identity read as text) as [`Bind::Text`], NULL as
    /// [`Bind::Null`]. The flows' statements read no other type; a cell of one is read as text
    /// where tokio-postgres reads that type as text, else as NULL (what the flows make of a
    /// cell they cannot read).
    fn cells(row: &Row) -> Vec<Bind> {
        let types = row.columns().iter().map(Column::type_);
        types.enumerate().map(|(i, ty)| cell(row, i, ty)).collect()
    }

    /// The one cell (a sort key's), as [`cells`](Self::cells) reads it.
    fn cell(row: &Row, i: usize) -> Bind {
        let ty = row.columns().get(i).map(Column::type_);
        ty.map_or(Bind::Null, |ty| cell(row, i, ty))
    }

    /// Out of the pool, and closed.
    fn close(conn: Object) {
        drop(Object::take(conn));
    }

    fn give_up(conn: Object) {
        roll_back(conn);
    }

    // PostgreSQL's side of a read-only query (`flow::read_only_sql`): a connection of the SQL pool, a
    // `READ ONLY` transaction with its `statement_timeout`, the statement cancelled by PostgreSQL.
    async fn open(&self, time: Duration, access: Access) -> Result<Opened<Object>, EngineError> {
        let client = self.sql_client().await?;
        let millis = time.as_millis().max(1);
        let access = match access {
            Access::ReadOnly => "READ ONLY",
            Access::ReadWrite => "READ WRITE",
        };
        client
            .batch_execute(&format!(
                "ROLLBACK; BEGIN TRANSACTION {access}; SET LOCAL statement_timeout = {millis}"
            ))
            .await
            .map_err(|e| self.unexpected(e))?;
        let token = client.cancel_token();
        let cancel: Cancel = Box::pin(async move {
            let _ = token.cancel_query(NoTls).await;
        });
        Ok(Opened {
            conn: client,
            cancel,
        })
    }

    /// A read-only query is read through a cursor, each row's size checked by PostgreSQL
    /// before it is sent; an action's statement runs as it is.
    async fn run_user(
        &self,
        client: &mut Object,
        user: &UserStatement,
        limits: SqlLimits,
        tz: Offset,
        left_running: &AtomicBool,
    ) -> Result<(Vec<String>, AnswerRows), EngineError> {
        let literals = literals(user);
        let run = Run {
            user,
            literals: &literals,
            answer_bytes: limits.answer_bytes,
            tz,
            left_running,
        };
        match user.reading {
            Reading::Engine => self.query_rows(client, run).await,
            Reading::Action => self.statement_rows(client, run).await,
        }
    }

    /// The connection goes back as it was found: no transaction, no settings, no advisory
    /// locks, no prepared statements, no temporary tables. Two messages: a batch of both is
    /// one implicit transaction, inside which PostgreSQL refuses `DISCARD ALL`.
    async fn clean(client: Object) {
        let _ = client.batch_execute("ROLLBACK").await;
        if client.batch_execute("DISCARD ALL").await.is_err() {
            // A session that cannot be cleaned must not serve another query: out of the pool,
            // and closed.
            drop(Object::take(client));
        } else {
            // `DISCARD ALL` dropped the statements a read in a `tz` had prepared on this
            // session (it shares the SQL pool): the cache forgets them, so they are prepared
            // again rather than named and not found.
            client.statement_cache.clear();
        }
    }
}

/// A user's statement to run: its values as sent, what its answer may take, and how its cells
/// are written.
#[derive(Clone, Copy)]
struct Run<'a> {
    /// The statement.
    user: &'a UserStatement,
    /// Its values, as sent.
    literals: &'a [QueryLiteral],
    /// The answer cap.
    answer_bytes: usize,
    /// The engine's default time zone.
    tz: Offset,
    /// Set when reading stopped before the statement's end.
    left_running: &'a AtomicBool,
}

// A user's statement's two ways ([`Driver::run_user`]).
impl PgResource {
    /// A read-only query's rows ([`Driver::run_user`]).
    async fn query_rows(
        &self,
        client: &mut Object,
        run: Run<'_>,
    ) -> Result<(Vec<String>, AnswerRows), EngineError> {
        let select = answer_select(&run.user.text, run.answer_bytes, None);
        let statement = self.prepare_query(client, &select, run.literals).await?;
        // The user's columns: all but the size check.
        let columns = &statement.columns()[..statement.columns().len().saturating_sub(1)];
        let (names, types) = names_and_types(columns)?;
        // An array is read as JSON: psycopg2 makes a list of it.
        let select = match types.iter().any(|ty| array_kind(ty).is_some()) {
            true => answer_select(&run.user.text, run.answer_bytes, Some(&types)),
            false => select,
        };
        let declare = format!("DECLARE {CURSOR} NO SCROLL CURSOR FOR {select}");
        let declare = self.prepare_query(client, &declare, run.literals).await?;
        client
            .execute_raw(&declare, sent_literals(run.literals))
            .await
            .map_err(|e| query_failed(self, e))?;
        // Rows come back as PostgreSQL's text, one at a time.
        let stream = client
            .simple_query_raw(&format!("FETCH FORWARD {MAX_SQL_ROWS} FROM {CURSOR}"))
            .await
            .map_err(|e| query_failed(self, e))?;
        futures_util::pin_mut!(stream);
        let mut rows = AnswerRows::new(run.answer_bytes);
        while let Some(message) = stream.try_next().await.map_err(|e| query_failed(self, e))? {
            let SimpleQueryMessage::Row(row) = message else {
                continue;
            };
            let written = rows.push(types.len(), |buf, i| {
                write_cell(buf, &types[i], row.get(i), run.tz);
            });
            written.map_err(|too_large| past_the_cap(run.left_running, too_large))?;
        }
        Ok((names, rows))
    }

    /// An action's statement's rows, none where it returns none ([`Driver::run_user`]).
    async fn statement_rows(
        &self,
        client: &mut Object,
        run: Run<'_>,
    ) -> Result<(Vec<String>, AnswerRows), EngineError> {
        // Prepared, not run: its columns say how to read its rows.
        let statement = self
            .prepare_query(client, &run.user.text, run.literals)
            .await?;
        let mut rows = AnswerRows::new(run.answer_bytes);
        if statement.columns().is_empty() {
            client
                .execute_raw(&statement, sent_literals(run.literals))
                .await
                .map_err(|e| query_failed(self, e))?;
            return Ok((Vec::new(), rows));
        }
        let (names, column_types) = names_and_types(statement.columns())?;
        let aliases: Vec<String> = (1..=names.len()).map(|i| format!("c{i}")).collect();
        // Each cell as PostgreSQL's output function writes it, as a read-only query reads it:
        // a cast to text is that, but for `boolean`, whose cast says `true` where its output
        // says `t`.
        let texts: Vec<String> = aliases
            .iter()
            .zip(&column_types)
            .map(|(a, ty)| match ty.as_str() {
                "bool" => format!("CASE WHEN {a} THEN 't' WHEN NOT {a} THEN 'f' END"),
                // As a read-only query reads an array (`answer_select`).
                ty => match array_kind(ty) {
                    Some(kind) => kind.text_of(a),
                    None => format!("{a}::text"),
                },
            })
            .collect();
        let select = format!(
            "WITH {ROWS}({}) AS ({}) SELECT {} FROM {ROWS}",
            aliases.join(", "),
            run.user.text,
            texts.join(", ")
        );
        let statement = self.prepare_query(client, &select, run.literals).await?;
        let stream = client
            .query_raw(&statement, sent_literals(run.literals))
            .await;
        let stream = stream.map_err(|e| query_failed(self, e))?;
        futures_util::pin_mut!(stream);
        while let Some(row) = stream.try_next().await.map_err(|e| query_failed(self, e))? {
            let written = rows.push(column_types.len(), |buf, i| {
                write_cell(buf, &column_types[i], row.get::<_, Option<&str>>(i), run.tz);
            });
            // Left behind at the cap, the statement may still run: the flow closes its session.
            written.map_err(|too_large| past_the_cap(run.left_running, too_large))?;
        }
        Ok((names, rows))
    }
}

/// A read-only query as the engine runs it: a sub-select, here with one more column that fails
/// in PostgreSQL when a row is larger than the answer cap (its text is the measure; the
/// failing cast takes the row's size, so the planner cannot fold it). Given the columns'
/// `types`, each array column is read as its `to_json` text (the others as they are).
fn answer_select(text: &str, answer_bytes: usize, types: Option<&[String]>) -> String {
    let (columns, aliases) = match types {
        None => (format!("{ROW}.*"), String::new()),
        Some(types) => {
            let read = |(i, ty): (usize, &String)| {
                let column = format!("{ROW}.c{i}");
                match array_kind(ty) {
                    Some(kind) => kind.text_of(&column),
                    None => column,
                }
            };
            let columns: Vec<String> = types.iter().enumerate().map(read).collect();
            let aliases: Vec<String> = (0..types.len()).map(|i| format!("c{i}")).collect();
            (columns.join(", "), format!("({})", aliases.join(", ")))
        }
    };
    format!(
        "SELECT {columns}, CASE WHEN octet_length({ROW}::text) > {answer_bytes} \
         THEN ('{TOO_LARGE}' || octet_length({ROW}::text))::int END \
         FROM ({text}) AS {ROW}{aliases}"
    )
}

/// The `i`th cell of a row of the crate's own statements, of type `ty` ([`Driver::cells`]).
fn cell(row: &Row, i: usize, ty: &Type) -> Bind {
    let int = match *ty {
        Type::INT2 => row.try_get::<_, Option<i16>>(i).map(|n| n.map(i64::from)),
        Type::INT4 => row.try_get::<_, Option<i32>>(i).map(|n| n.map(i64::from)),
        Type::INT8 => row.try_get::<_, Option<i64>>(i),
        _ => {
            let text = row.try_get::<_, Option<String>>(i);
            return text.ok().flatten().map_or(Bind::Null, Bind::Text);
        }
    };
    int.ok().flatten().map_or(Bind::Null, Bind::Int)
}

// Every statement of the crate runs here: [`run`] those with values (and rows), [`run_one`]
// one without, on a connection ([`Driver`]'s, or one that others read from at the same time);
// a resource's seed is a script ([`run_script`]).

/// The rows of `sql` with `params` bound, on `client`: prepared once per connection where
/// `kept` is the connection's statement cache (up to [`STATEMENTS_PER_CONNECTION`] of them),
/// else prepared for this run alone (on a connection of either pool: the SQL pool's sessions
/// end with `DISCARD ALL`, which drops the statements a connection kept prepared).
pub(crate) async fn run(
    client: &Client,
    kept: Option<&StatementCache>,
    sql: &str,
    params: &Binds,
) -> Result<Vec<Row>, tokio_postgres::Error> {
    let sent: Vec<Sent<'_>> = params.values().iter().map(Sent::Bound).collect();
    let binds: Vec<&(dyn ToSql + Sync)> = sent.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
    let Some(cache) = kept else {
        return client.query(sql, &binds).await;
    };
    client
        .query(&prepared(client, cache, sql).await?, &binds)
        .await
}

/// `sql` prepared on `client` once, kept in its statement `cache` (which starts afresh past
/// [`STATEMENTS_PER_CONNECTION`]).
async fn prepared(
    client: &Client,
    cache: &StatementCache,
    sql: &str,
) -> Result<Statement, tokio_postgres::Error> {
    if cache.size() >= STATEMENTS_PER_CONNECTION {
        cache.clear();
    }
    cache.prepare(client, sql).await
}

/// Runs `sql`, one statement without values whose rows are not read ([`Driver::execute_one`]).
async fn run_one(client: &Client, sql: &str) -> Result<(), tokio_postgres::Error> {
    client.execute_typed(sql, &[]).await.map(drop)
}

/// Runs `script`, any number of statements, in PostgreSQL's simple protocol: a resource's seed.
pub(crate) async fn run_script(client: &Client, script: &str) -> Result<(), tokio_postgres::Error> {
    client.batch_execute(script).await
}

/// Gives back a pooled connection left inside a transaction: the rollback runs before the pool
/// hands the connection out again; where it cannot run, the connection is closed instead (the
/// server rolls back).
pub(crate) fn roll_back(client: Object) {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async move {
                if client.batch_execute("ROLLBACK").await.is_err() {
                    drop(Object::take(client));
                }
            });
        }
        Err(_) => drop(Object::take(client)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value as Json, json};
    use svc_emulator_core::dialect::user_statement::bind_user_statement;
    use svc_engine::sql_params::Reading;

    /// A read-only query's text and its values as PostgreSQL receives them.
    #[derive(Debug)]
    struct Bound {
        text: String,
        params: Vec<QueryLiteral>,
    }

    fn bound(query: &str, params: Json) -> Result<Bound, EngineError> {
        let params = params.as_object().unwrap();
        let user = bind_user_statement::<PgResource>(query, params, Reading::Engine)?;
        Ok(Bound {
            params: literals(&user),
            text: user.text,
        })
    }

    fn param(ty: Type, text: Option<&str>) -> QueryLiteral {
        QueryLiteral {
            ty,
            text: text.map(str::to_owned),
        }
    }

    #[test]
    fn names_become_parameters_outside_quotes_and_comments() {
        // As the engine's SQLAlchemy finds them; in a comment a name needs its value and stays
        // text (the engine writes the value into the comment); `:x::int` is no parameter.
        let q = bound(
            "select :a, x::int, :y::int -- :f\n /* :g /* :h */ */ :i, :a",
            json!({"a": "it's", "i": -1, "f": 1, "g": 2, "h": 3}),
        )
        .unwrap();
        assert_eq!(
            q.text,
            "select $1, x::int, :y::int -- :f\n /* :g /* :h */ */ $2, $3"
        );
        // One parameter per occurrence, each typed as the engine's literal would be.
        assert_eq!(
            q.params,
            [
                param(Type::UNKNOWN, Some("it's")),
                param(Type::INT4, Some("-1")),
                param(Type::UNKNOWN, Some("it's")),
            ]
        );
        // In a string, a quoted name or a dollar quote, refused by design: the engine writes
        // the value there. An escaped quote does not end an E string.
        let all = json!({"b": 1, "c": 1, "d": 1, "e": 1, "x": 1});
        for q in [
            "select ':b'",
            "select \":c\"",
            "select $$ :d $$",
            "select $t$ :e $t$",
            "select E'\\' :x'",
        ] {
            let refused = bound(q, all.clone()).unwrap_err();
            assert!(
                refused.to_string().contains("inside a string"),
                "{q}: {refused}"
            );
        }
        let q = bound(
            "select :n, :big, :huge, :f, :t, :z, :v",
            json!({"n": 7, "big": 3_000_000_000_i64, "huge": 18_446_744_073_709_551_615_u64,
                   "f": 1.5, "t": true, "z": null, "v": [1, "x"]}),
        )
        .unwrap();
        assert_eq!(
            q.params,
            [
                param(Type::INT4, Some("7")),
                param(Type::INT8, Some("3000000000")),
                param(Type::NUMERIC, Some("18446744073709551615")),
                param(Type::NUMERIC, Some("1.5")),
                param(Type::BOOL, Some("true")),
                param(Type::UNKNOWN, None),
                param(Type::INT4, Some("1")),
                param(Type::UNKNOWN, Some("x")),
            ]
        );
        // A list is psycopg2's `ARRAY[...]`, each item typed as its literal.
        assert!(q.text.ends_with("$6, ARRAY[$7,$8]"), "{}", q.text);
    }

    /// Statements that the scanner reads wrong (a word ending in `e` before a quote, a
    /// non-ASCII dollar-quote tag): whatever it makes of them, the value stays out of the text.
    #[test]
    fn a_value_never_enters_the_statement_text() {
        let hostile = "\" || current_user || \"$é$ || current_user || $é$'; drop table t; --";
        for query in [
            "select name'\\', ' :p ' as b",
            "select else'\\', ' :p ' as b",
            "select $é$ :p $é$",
            "select 'it\\'s :p'",
            "select :p",
        ] {
            if let Ok(q) = bound(query, json!({ "p": hostile })) {
                assert!(!q.text.contains("current_user"), "{query}: {}", q.text);
                let hostile = param(Type::UNKNOWN, Some(hostile));
                assert!(q.params.iter().all(|p| *p == hostile));
            }
        }
    }

    #[test]
    fn missing_and_positional_parameters_are_refused() {
        let e = bound("select :nope", json!({})).unwrap_err();
        assert!(e.to_string().contains(":nope"), "{e}");
        let e = bound("select $1", json!({})).unwrap_err();
        assert!(e.to_string().contains("Positional"), "{e}");
    }

    /// What a bound value puts on the wire, and whether in PostgreSQL's text format.
    fn sent(value: &Bind, ty: &Type) -> (Option<Vec<u8>>, bool) {
        let mut out = BytesMut::new();
        let sent = Sent::Bound(value);
        let null = sent.to_sql_checked(ty, &mut out).unwrap();
        let bytes = matches!(null, IsNull::No).then(|| out.to_vec());
        (bytes, matches!(sent.encode_format(ty), Format::Text))
    }

    #[test]
    fn binds_are_sent_as_their_placeholders_type() {
        let text = Bind::Text("it's".to_owned());
        assert_eq!(sent(&text, &Type::TEXT), (Some(b"it's".to_vec()), false));
        assert_eq!(sent(&Bind::Null, &Type::TEXT), (None, false));
        // Text is checked against its placeholder's type, as it always was.
        assert!(
            Sent::Bound(&text)
                .to_sql_checked(&Type::INT8, &mut BytesMut::new())
                .is_err()
        );
        let bytes = Bind::Bytes(vec![0, 255]);
        assert_eq!(sent(&bytes, &Type::BYTEA), (Some(vec![0, 255]), false));
        let duration = Bind::Time(true, 1, 2, 3, 4, 5);
        assert_eq!(
            sent(&duration, &Type::INTERVAL),
            (Some(b"-26:03:04.000005".to_vec()), true)
        );
        let at = Bind::DateTime(2024, 1, 5, 10, 0, 0, 0);
        assert_eq!(
            sent(&at, &Type::TIMESTAMP),
            (Some(b"2024-01-05 10:00:00.000000".to_vec()), true)
        );
        assert_eq!(
            sent(&Bind::UInt(u64::MAX), &Type::NUMERIC),
            (Some(b"18446744073709551615".to_vec()), true)
        );
    }

    #[test]
    fn cells_are_typed() {
        let cell = |ty: &str, text: Option<&str>| {
            let mut buf = Vec::new();
            write_cell(&mut buf, ty, text, 0);
            String::from_utf8(buf).unwrap()
        };
        assert_eq!(cell("int8", Some("12")), "12");
        assert_eq!(cell("numeric", Some("20.50")), "20.5");
        assert_eq!(cell("numeric", Some("1.00")), "1.0");
        assert_eq!(
            cell("numeric", Some("12345678901234567890")),
            "1.2345678901234567e+19"
        );
        assert_eq!(cell("numeric", Some("NaN")), "null");
        assert_eq!(cell("float8", Some("1e+20")), "1e+20");
        assert_eq!(cell("bool", Some("f")), "false");
        assert_eq!(cell("jsonb", Some("{\"a\": 1}")), "{\"a\":1}");
        assert_eq!(
            cell("timestamptz", Some("2024-01-05 10:00:00+00")),
            "\"2024-01-05T10:00:00Z\""
        );
        assert_eq!(
            cell("timestamptz", Some("2024-01-05 10:00:00.5+02")),
            "\"2024-01-05T10:00:00.500000+02:00\""
        );
        assert_eq!(
            cell("timestamp", Some("2024-01-05 10:00:00")),
            "\"2024-01-05T10:00:00Z\""
        );
        // As the engine answered on PostgreSQL 15: a year is 365 days, a month 30.
        assert_eq!(cell("interval", Some("-1 days +02:00:00")), "\"-79200.0\"");
        assert_eq!(
            cell("interval", Some("1 year 2 mons 3 days 04:05:06.5")),
            "\"36993906.5\""
        );
        assert_eq!(cell("interval", Some("-00:00:01")), "\"-1.0\"");
        assert_eq!(
            cell("timestamp", Some("infinity")),
            "\"9999-12-31T23:59:59.999999Z\""
        );
        assert_eq!(cell("text", None), "null");
    }
}
