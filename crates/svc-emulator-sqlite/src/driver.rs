//! SQLite's driver (`flow::driver`): rusqlite on the one connection an operation holds, each
//! step done when it is called (`flow::references::run_now`).
//!
//! # Read-only SQL
//!
//! Read-only SQL on a resource (docs/contract.md 5.2): one statement, proven read-only by SQLite itself
//! (see [`Resource::sql`]). The query runs the shared flow (`flow::read_only_sql`) on the
//! connection the operation holds; SQLite's side of it ([`Driver`]) keeps the deadline
//! itself (a watchdog thread and the progress handler), since its statement has ended when
//! `run_user` returns.
//!
//! # Actions
//!
//! An action's statements on a SQLite resource (docs/contract.md 5.6): run in order on the
//! writer connection in one `BEGIN IMMEDIATE` transaction, each `:name` bound to the
//! request's input of that name, under the read-only queries' deadline (a watchdog that
//! interrupts the connection) and answer cap; the last statement's rows are written as a
//! read-only query's are. A statement that fails rolls back them all.

use crate::Resource;
use crate::records::{Sqlite, identity_key};
use crate::schema::{Field, FieldKind};
use crate::types::{engine_error, stored, write_field_value, write_value};
use rusqlite::hooks::{AuthAction, AuthContext, Authorization};
use rusqlite::limits::Limit;
use rusqlite::types::{Value, ValueRef};
use rusqlite::{Connection, ErrorCode, Statement, params_from_iter};
#[cfg(test)]
use serde_json::{Map, Value as Json};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[cfg(test)]
use svc_emulator_core::backend::operation::Action;
#[cfg(test)]
use svc_emulator_core::backend::operation::Query;
use svc_emulator_core::backend::operation::{Kind, Operation};
use svc_emulator_core::dialect::bind::{Bind, Binds};
use svc_emulator_core::dialect::user_statement::UserStatement;
use svc_emulator_core::flow::database::Database;
use svc_emulator_core::flow::driver::{Driver, Failure};
use svc_emulator_core::flow::read_only_sql::{Access, Cancel, Opened};
use svc_emulator_core::flow::references::run_now;
use svc_engine::sql_answer::{AnswerRows, query_error, write_encoder_bytes};
use svc_engine::sql_params::Reading;
use svc_engine::{EngineError, MAX_SQL_ROWS, SqlLimits};

/// Stops a query from another thread: the HTTP handler cancels when its client goes away
/// (its future is dropped), which interrupts the statement if it runs, or keeps it from
/// starting.
///
/// An interrupt reaches only a statement that is stepping; one that lands while the query is
/// being prepared is lost, so the flag is also read by the progress handler and before the first
/// step.
#[derive(Default)]
pub(crate) struct SqlCancel {
    cancelled: Arc<AtomicBool>,
    state: Mutex<CancelState>,
}

#[derive(Default)]
struct CancelState {
    running: Option<rusqlite::InterruptHandle>,
}

impl SqlCancel {
    /// Stops the query: interrupts it if it runs; a query not started yet will not start.
    pub(crate) fn cancel(&self) {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.cancelled.store(true, Ordering::Relaxed);
        if let Some(handle) = &state.running {
            handle.interrupt();
        }
    }

    /// Registers the running query's connection; `false` when the query was cancelled already.
    pub(super) fn attach(&self, handle: rusqlite::InterruptHandle) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if self.cancelled() {
            return false;
        }
        state.running = Some(handle);
        true
    }

    /// Forgets the connection once its statement is done: an interrupt now could only reach a
    /// later statement of the engine on the same connection.
    pub(super) fn detach(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).running = None;
    }

    /// Detaches the connection, and answers `result`'s failure as `gone()` when the client
    /// went away: whatever step it stopped is the cancel's doing.
    pub(super) fn settle<T>(
        &self,
        result: Result<T, EngineError>,
        gone: fn() -> EngineError,
    ) -> Result<T, EngineError> {
        self.detach();
        result.map_err(|e| if self.cancelled() { gone() } else { e })
    }

    pub(super) fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
}

/// Virtual machine steps between two looks at the clock.
const PROGRESS_STEPS: i32 = 10_000;

const ONLY_READS: &str = "Only a single read-only statement (SELECT, or WITH ... SELECT) can run";

impl Resource {
    /// [`sql_with`](Self::sql_with) within the default limits, never cancelled.
    #[cfg(test)]
    pub(crate) fn sql(
        &self,
        query: &str,
        params: &Map<String, Json>,
    ) -> Result<Vec<u8>, EngineError> {
        self.sql_with(query, params, SqlLimits::default(), &SqlCancel::default())
    }

    #[cfg(test)]
    pub(crate) fn sql_with_limit(
        &self,
        query: &str,
        params: &Map<String, Json>,
        limit: Duration,
    ) -> Result<Vec<u8>, EngineError> {
        let limits = SqlLimits {
            time: limit,
            ..SqlLimits::default()
        };
        self.sql_with(query, params, limits, &SqlCancel::default())
    }

    /// A read-only query (`Backend::sql`), run as [`stoppable`](Self::stoppable) runs it.
    #[cfg(test)]
    pub(crate) fn sql_with(
        &self,
        query: &str,
        params: &Map<String, Json>,
        limits: SqlLimits,
        cancel: &SqlCancel,
    ) -> Result<Vec<u8>, EngineError> {
        let query = Query {
            request: svc_engine::sql_request::SqlRequest::new(query, params.clone()),
            limits,
        };
        self.stoppable(&query, cancel)
    }

    /// Runs a read-only query or an action (`op`) on this thread. A query (of [`Kind::Query`])
    /// has `:name` parameters, valued by its `params` under `name`, and answers `{"columns",
    /// "data", "row_count"}` as JSON bytes.
    ///
    /// Values are bound as the engine's `sqlite3` binds them (`dialect::user_statement`):
    /// `null`, numbers, strings, booleans as `1`/`0`; a list or an object is refused (an
    /// action's input is its JSON text). Parameters the query does not use are ignored. Result
    /// values are written like record fields without a declared type: numbers, strings, `null`,
    /// BLOBs as UTF-8 text, or in hex when they are not UTF-8 (the engine's answer).
    ///
    /// No keyword list is involved: the text is handed to SQLite, and the query runs only when
    /// all of these hold, each reported by the engine:
    ///
    /// 1. **One query.** It runs as the engine runs it, inside a sub-select (`SELECT * FROM
    ///    (<query>) AS __jet_q2`): a second statement, a `;` or a `--` comment at its end, a
    ///    statement that is not a query (`EXPLAIN`, `PRAGMA`, a write) fail to prepare there.
    /// 2. **Nothing but reading.** While the statement is prepared, an authorizer allows only
    ///    `SELECT`, reading columns, calling functions (except `load_extension`) and recursive
    ///    CTEs. Writes, DDL, `PRAGMA` (the table-valued `pragma_*` functions, which SQLite
    ///    offers only for pragmas without side effects, stay readable),
    ///    `ATTACH`/`DETACH`, transactions and savepoints, `ANALYZE` and `REINDEX` are denied,
    ///    wherever they hide (behind comments, in CTEs).
    /// 3. **Read-only.** `sqlite3_stmt_readonly` must be true.
    /// 4. **A connection that cannot write.** It runs on a reader opened read-only (database
    ///    files) or on the one connection with `PRAGMA query_only` on (in memory), with no room
    ///    for attached databases; extension loading is off (SQLite's default).
    ///
    /// At most [`MAX_SQL_ROWS`] rows are returned (`row_count` is the number returned); a query
    /// running longer than its limits allow is interrupted, and `cancel` stops it early. Every refusal and engine error is
    /// a `400` with a `query` field error, or `params_obj` for a parameter without a value.
    ///
    /// An action (`op` of [`Kind::Action`]) runs in one transaction of the writer, its
    /// statements in order; each kind is interrupted at its time limit by a watchdog, and
    /// stopped early by `cancel`.
    pub(crate) fn stoppable<O: Operation>(
        &self,
        op: &O,
        cancel: &SqlCancel,
    ) -> Result<O::Out, EngineError> {
        let time = op.limits().unwrap_or_default().time;
        let run = |conn: &mut Connection| {
            Watchdog::start(conn.get_interrupt_handle(), time, |watchdog| {
                let db = Sqlite::querying(self, conn, cancel, watchdog);
                run_now(op.run(&db.served()))
            })
        };
        match O::KIND {
            Kind::Action => self.with_writer(|conn| cancel.settle(run(conn), gone)),
            _ => self.with_read_only(|conn| cancel.settle(run(conn), cancelled)),
        }
    }
}

fn cancelled() -> EngineError {
    query_error("The query was cancelled: its client went away.")
}

/// A view built without its stop (`Sqlite::new`) asked to run a query or an action.
pub(super) fn unstoppable() -> EngineError {
    EngineError::Internal(
        "a SQLite query or action runs on a view with its cancel and watchdog (Sqlite::querying)"
            .to_owned(),
    )
}

fn refused(reason: &str) -> EngineError {
    query_error(format!("{ONLY_READS}: {reason}."))
}

/// Interrupts a connection's statement at a deadline, from a thread of its own: a statement
/// that never reaches the progress handler (one huge function call) is stopped too.
pub(crate) struct Watchdog {
    fired: Arc<AtomicBool>,
    deadline: Instant,
    limit: Duration,
}

impl Watchdog {
    /// Runs `work` with a watchdog that interrupts `handle`'s connection at `limit`. The thread
    /// is gone when this returns, so no interrupt can reach a later statement.
    pub(super) fn start<T>(
        handle: rusqlite::InterruptHandle,
        limit: Duration,
        work: impl FnOnce(&Watchdog) -> T,
    ) -> T {
        let watchdog = Watchdog {
            fired: Arc::new(AtomicBool::new(false)),
            deadline: Instant::now() + limit,
            limit,
        };
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let fired = Arc::clone(&watchdog.fired);
        let thread = std::thread::Builder::new()
            .name("sql-deadline".to_owned())
            .spawn(move || {
                if wait.recv_timeout(limit) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                    fired.store(true, Ordering::Relaxed);
                    handle.interrupt();
                }
            });
        let out = work(&watchdog);
        drop(done);
        if let Ok(thread) = thread {
            let _ = thread.join();
        }
        out
    }

    /// The time the work was given.
    pub(super) fn limit(&self) -> Duration {
        self.limit
    }

    /// Whether the deadline has passed (checked while the answer is written).
    fn passed(&self) -> bool {
        self.fired.load(Ordering::Relaxed) || Instant::now() > self.deadline
    }
}

/// The connection with the authorizer, the time limit and the attached-database limit in
/// place; all three are removed when it is dropped, so the records engine's own statements on
/// the same connection are never affected.
struct ReadOnlyGuard<'c> {
    conn: &'c mut Connection,
    attached: Option<i32>,
    /// SQLite's length limit before the query's own.
    length: Option<i32>,
    denied: Arc<Mutex<Option<String>>>,
    /// Set once the query's own statement is prepared and checked: what the authorizer sees
    /// after that is prepared by the engine itself (the table-valued `pragma_*` functions run
    /// their pragma inside), never text from the request.
    running: Arc<AtomicBool>,
}

impl<'c> ReadOnlyGuard<'c> {
    fn install(
        conn: &'c mut Connection,
        limits: SqlLimits,
        cancelled: Arc<AtomicBool>,
    ) -> Result<Self, EngineError> {
        let limit = limits.time;
        let denied = Arc::new(Mutex::new(None));
        let record = denied.clone();
        // Built first, so that whatever is installed below is removed again if a later step
        // fails.
        let mut guard = Self {
            conn,
            attached: None,
            length: None,
            denied,
            running: Arc::new(AtomicBool::new(false)),
        };
        let running = guard.running.clone();
        guard
            .conn
            .authorizer(Some(move |ctx: AuthContext<'_>| {
                match allowed(&ctx.action, running.load(Ordering::Relaxed)) {
                    Ok(()) => Authorization::Allow,
                    Err(what) => {
                        // Keep the first denial, but prefer what the user wrote ("it creates a
                        // schema object") to the bookkeeping SQLite does for it ("it inserts into
                        // sqlite_master"), which the authorizer often sees first.
                        let mut first = record.lock().unwrap_or_else(|e| e.into_inner());
                        let bookkeeping = |w: &str| w.contains("\"sqlite_");
                        match first.as_deref() {
                            Some(seen) if !bookkeeping(seen) || bookkeeping(&what) => {}
                            _ => *first = Some(what),
                        }
                        Authorization::Deny
                    }
                }
            }))
            .map_err(engine_error)?;
        guard.attached = Some(
            guard
                .conn
                .set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)
                .map_err(engine_error)?,
        );
        let value_bytes = i32::try_from(limits.answer_bytes / 2).unwrap_or(i32::MAX);
        guard.length = Some(
            guard
                .conn
                .set_limit(Limit::SQLITE_LIMIT_LENGTH, value_bytes)
                .map_err(engine_error)?,
        );
        let deadline = Instant::now() + limit;
        guard
            .conn
            .progress_handler(
                PROGRESS_STEPS,
                Some(move || Instant::now() > deadline || cancelled.load(Ordering::Relaxed)),
            )
            .map_err(engine_error)?;
        Ok(guard)
    }

    fn denied(&self) -> Option<String> {
        self.denied
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl std::ops::Deref for ReadOnlyGuard<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for ReadOnlyGuard<'_> {
    fn drop(&mut self) {
        let _ = self
            .conn
            .authorizer(None::<fn(AuthContext<'_>) -> Authorization>);
        let _ = self.conn.progress_handler(0, None::<fn() -> bool>);
        if let Some(n) = self.attached {
            let _ = self.conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, n);
        }
        if let Some(n) = self.length {
            let _ = self.conn.set_limit(Limit::SQLITE_LIMIT_LENGTH, n);
        }
    }
}

/// The authorizer's rule: reading is allowed, everything else is named and denied. While the
/// query runs (`running`), the engine's own statements may also read pragmas: SQLite offers
/// table-valued pragma functions only for pragmas that return results and have no side effects.
fn allowed(action: &AuthAction<'_>, running: bool) -> Result<(), String> {
    Err(match *action {
        AuthAction::Select | AuthAction::Read { .. } | AuthAction::Recursive => return Ok(()),
        AuthAction::Pragma { .. } if running => return Ok(()),
        AuthAction::Function { function_name } => {
            if function_name.eq_ignore_ascii_case("load_extension") {
                "it loads an extension".to_owned()
            } else {
                return Ok(());
            }
        }
        AuthAction::Insert { table_name } => format!("it inserts into {table_name:?}"),
        AuthAction::Update { table_name, .. } => format!("it updates {table_name:?}"),
        AuthAction::Delete { table_name } => format!("it deletes from {table_name:?}"),
        AuthAction::Pragma { pragma_name, .. } => format!(
            "it runs PRAGMA {pragma_name} (pragmas that only read can be queried as tables: SELECT * FROM pragma_{pragma_name}(...))"
        ),
        AuthAction::Attach { .. } => "it attaches a database".to_owned(),
        AuthAction::Detach { .. } => "it detaches a database".to_owned(),
        AuthAction::Transaction { .. } => "it controls a transaction".to_owned(),
        AuthAction::Savepoint { .. } => "it uses a savepoint".to_owned(),
        AuthAction::AlterTable { .. } => "it alters a table".to_owned(),
        AuthAction::Reindex { .. } => "it rebuilds an index".to_owned(),
        AuthAction::Analyze { .. } => "it analyzes tables".to_owned(),
        AuthAction::CreateIndex { .. }
        | AuthAction::CreateTable { .. }
        | AuthAction::CreateTempIndex { .. }
        | AuthAction::CreateTempTable { .. }
        | AuthAction::CreateTempTrigger { .. }
        | AuthAction::CreateTempView { .. }
        | AuthAction::CreateTrigger { .. }
        | AuthAction::CreateView { .. }
        | AuthAction::CreateVtable { .. } => "it creates a schema object".to_owned(),
        AuthAction::DropIndex { .. }
        | AuthAction::DropTable { .. }
        | AuthAction::DropTempIndex { .. }
        | AuthAction::DropTempTable { .. }
        | AuthAction::DropTempTrigger { .. }
        | AuthAction::DropTempView { .. }
        | AuthAction::DropTrigger { .. }
        | AuthAction::DropView { .. }
        | AuthAction::DropVtable { .. } => "it drops a schema object".to_owned(),
        _ => "it does something other than reading".to_owned(),
    })
}

fn run(
    conn: &ReadOnlyGuard<'_>,
    UserStatement { text, binds, .. }: &UserStatement,
    limits: SqlLimits,
    watchdog: &Watchdog,
    cancel: &SqlCancel,
) -> Result<(Vec<String>, AnswerRows), EngineError> {
    if text.trim().is_empty() {
        return Err(query_error("The query is empty."));
    }
    // As the engine runs it: the text as SQLAlchemy's `text()` compiles it for pysqlite (each
    // `:name` a `?`, wherever it stands: `dialect::user_statement`), inside its sub-select,
    // each value bound by position.
    let mut stmt = match conn.prepare(&format!("SELECT * \nFROM ({text}) AS __jet_q2")) {
        Ok(stmt) => stmt,
        Err(e) => {
            return Err(match conn.denied() {
                Some(what) => refused(&what),
                None => query_error(format!("The database refused the query: {e}.")),
            });
        }
    };
    if let Some(what) = conn.denied() {
        return Err(refused(&what));
    }
    if !stmt.readonly() {
        return Err(refused("it would change the database"));
    }
    bind_positions(&mut stmt, binds)?;
    // A cancel that came while the query was prepared found no statement to interrupt.
    if cancel.cancelled() {
        return Err(cancelled());
    }
    conn.running.store(true, Ordering::Relaxed);
    let columns = subquery_names(stmt.column_names());
    let too_long = || {
        query_error(format!(
            "The query ran longer than {} s and was stopped.",
            limits.time.as_secs_f64()
        ))
    };
    let mut rows = AnswerRows::new(limits.answer_bytes);
    write_rows(&mut stmt, columns.len(), &mut rows, watchdog).map_err(|e| match e {
        Stop::Deadline => too_long(),
        Stop::TooLarge => query_error(format!(
            "The answer is larger than {} MiB and was not sent; ask for fewer rows (LIMIT) or \
             fewer or shorter columns.",
            limits.answer_bytes / (1024 * 1024)
        )),
        Stop::Sqlite(rusqlite::Error::SqliteFailure(f, _))
            if f.code == ErrorCode::OperationInterrupted =>
        {
            too_long()
        }
        Stop::Sqlite(rusqlite::Error::SqliteFailure(f, _)) if f.code == ErrorCode::TooBig => {
            query_error(format!(
                "A value of the answer is larger than {} MiB; ask for a shorter one (substr, \
                 length).",
                limits.answer_bytes / 2 / (1024 * 1024)
            ))
        }
        Stop::Sqlite(e) => query_error(format!("The query failed: {e}.")),
    })?;
    Ok((columns, rows))
}

/// The column names as the engine's answer has them: it runs the query inside a sub-select
/// (`SELECT * FROM (<query>) AS __jet_q2`), whose columns SQLite makes unique as
/// `sqlite3ColumnsFromExprList` does: a name that repeats one before it (ASCII case folded)
/// loses a `:digits` ending and takes `:1`, `:2`, ... until it is new (`a, A, a` is
/// `a, A:1, a:2`).
fn subquery_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for name in names {
        let mut candidate = name.to_owned();
        let mut count = 0u32;
        while !seen.insert(candidate.to_ascii_lowercase()) {
            // SQLite's scan: back over trailing digits (never past the first byte), then a
            // `:` there ends the stem.
            let bytes = candidate.as_bytes();
            let mut j = bytes.len().saturating_sub(1);
            while j > 0 && bytes[j].is_ascii_digit() {
                j -= 1;
            }
            let stem = if bytes.get(j) == Some(&b':') {
                &candidate[..j]
            } else {
                &candidate[..]
            };
            count += 1;
            candidate = format!("{stem}:{count}");
        }
        out.push(candidate);
    }
    out
}

/// Why writing the answer stopped.
pub(super) enum Stop {
    Deadline,
    TooLarge,
    Sqlite(rusqlite::Error),
}

impl From<rusqlite::Error> for Stop {
    fn from(e: rusqlite::Error) -> Self {
        Self::Sqlite(e)
    }
}

/// Binds `values` by position, as Python's `sqlite3` binds a sequence: the statement's
/// parameters must be as many (a `?` SQLAlchemy put in a string, or a `@name` or `$name` of
/// SQLite's own, makes them fewer or more: the engine's `400`).
fn bind_positions(stmt: &mut Statement<'_>, values: &Binds) -> Result<(), EngineError> {
    let supplied = values.values().len();
    let miscounted = |stmt: &Statement<'_>| {
        query_error(format!(
            "Incorrect number of bindings supplied: the statement uses {}, and there are \
             {supplied} supplied. The data engine binds each :name wherever it stands (in a \
             string or a comment too) and no @name, $name or ?: write each parameter as :name, \
             outside strings and comments.",
            stmt.parameter_count()
        ))
    };
    bind_by_position(stmt, values, miscounted, engine_error)
}

/// Binds `values` to `stmt`'s parameters, in order; `miscounted` when they are not as many as
/// its parameters (one of SQLite's own: `?`, `@name`, `$name`), and a value SQLite refuses
/// (one past its length limit) as `refused` says.
fn bind_by_position(
    stmt: &mut Statement<'_>,
    values: &Binds,
    miscounted: impl FnOnce(&Statement<'_>) -> EngineError,
    refused: fn(rusqlite::Error) -> EngineError,
) -> Result<(), EngineError> {
    if stmt.parameter_count() != values.values().len() {
        return Err(miscounted(stmt));
    }
    for (i, value) in values.values().iter().enumerate() {
        stmt.raw_bind_parameter(i + 1, Sent(value))
            .map_err(refused)?;
    }
    Ok(())
}

/// The rows of `stmt`, `width` values each, into `rows`: at most [`MAX_SQL_ROWS`], stopped at
/// the answer cap and at the deadline (the writing counts too).
pub(super) fn write_rows(
    stmt: &mut Statement<'_>,
    width: usize,
    rows: &mut AnswerRows,
    watchdog: &Watchdog,
) -> Result<(), Stop> {
    let mut read = stmt.raw_query();
    let mut count = 0usize;
    while count < MAX_SQL_ROWS {
        let Some(row) = read.next()? else { break };
        let mut failed = None;
        let pushed = rows.push(width, |buf, i| match row.get_ref(i) {
            // The engine's answer writes bytes as UTF-8, or in hex.
            Ok(ValueRef::Blob(b)) => write_encoder_bytes(buf, b),
            Ok(other) => write_value(buf, FieldKind::Any, stored(other)),
            Err(e) => {
                failed.get_or_insert(e);
            }
        });
        if let Some(e) = failed {
            return Err(Stop::Sqlite(e));
        }
        count += 1;
        // Never more than the cap and one row in memory.
        if pushed.is_err() {
            return Err(Stop::TooLarge);
        }
        if watchdog.passed() {
            return Err(Stop::Deadline);
        }
    }
    Ok(())
}

/// A row read whole, each value as stored: the driver's rows. A type of this crate, so that
/// the flows' reading of owned rows as records (the servers') is told apart from SQLite's
/// lent rows (`sqlite::records`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredRow(pub(crate) Vec<Value>);

impl std::ops::Deref for StoredRow {
    type Target = Vec<Value>;

    fn deref(&self) -> &Vec<Value> {
        &self.0
    }
}

/// A bound value as rusqlite sends it, borrowed (no copy of a text or a blob): the one place
/// a [`Bind`] becomes SQLite's.
struct Sent<'a>(&'a Bind);

impl rusqlite::ToSql for Sent<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::ToSqlOutput::{Borrowed, Owned};
        Ok(match self.0 {
            Bind::Null => Borrowed(ValueRef::Null),
            Bind::Bool(b) => Borrowed(ValueRef::Integer(i64::from(*b))),
            Bind::Int(i) => Borrowed(ValueRef::Integer(*i)),
            // SQLite's integers are signed: one past them is its text, as Python's `sqlite3`
            // would fail to bind it (the flows refuse such a value before it is bound).
            Bind::UInt(u) => match i64::try_from(*u) {
                Ok(i) => Borrowed(ValueRef::Integer(i)),
                Err(_) => Owned(Value::Text(u.to_string())),
            },
            Bind::Float(f) => Borrowed(ValueRef::Real(*f)),
            Bind::Text(t) => Borrowed(ValueRef::Text(t.as_bytes())),
            Bind::Bytes(b) => Borrowed(ValueRef::Blob(b)),
            other => Owned(Value::Text(format!("{other:?}"))),
        })
    }
}

/// `binds` as rusqlite's parameters, in order.
pub(crate) fn sent(binds: &Binds) -> impl rusqlite::Params + '_ {
    params_from_iter(binds.values().iter().map(Sent))
}

/// A bound value as SQLite's cell it was read from ([`bind_of`]'s way back), borrowed: a
/// locked row's values, read as the engine's ORM loads them. No SQLite cell reads as an
/// unsigned integer past `i64`, a MySQL date-time or duration or a list: those are NULL here.
pub(crate) fn value_ref(value: &Bind) -> ValueRef<'_> {
    match value {
        Bind::Int(i) => ValueRef::Integer(*i),
        Bind::Float(f) => ValueRef::Real(*f),
        Bind::Text(t) => ValueRef::Text(t.as_bytes()),
        Bind::Bytes(b) => ValueRef::Blob(b),
        _ => ValueRef::Null,
    }
}

/// A value as SQLite stored it (a cell read back), bound again as it is.
pub(crate) fn bind_of(value: Value) -> Bind {
    match value {
        Value::Null => Bind::Null,
        Value::Integer(i) => Bind::Int(i),
        Value::Real(f) => Bind::Float(f),
        Value::Text(t) => Bind::Text(t),
        Value::Blob(b) => Bind::Bytes(b),
    }
}

// Every statement the crate runs, through one of these (`cargo xtask structure` holds SQLite
// to it as it holds the servers): a statement's rows, each handed on as SQLite reads it; the
// rows it changed; statements without values; the database copied whole.

/// Prepares `sql` on `conn` through the connection's statement cache (rusqlite's `cache`
/// feature): the statements of lists, counts and writes are parsed and planned once.
fn prepare<'c>(conn: &'c Connection, sql: &str) -> rusqlite::Result<rusqlite::CachedStatement<'c>> {
    conn.prepare_cached(sql)
}

/// Runs `sql` with `params` to its end, each row handed to `row` as SQLite reads it (nothing
/// collected: a list's records are written from it). In autocommit mode a write commits at
/// its statement's end, so a commit that fails fails here.
pub(crate) fn each_row<P, E>(
    conn: &Connection,
    sql: &str,
    params: P,
    mut row: impl FnMut(&rusqlite::Row<'_>) -> Result<(), E>,
) -> Result<(), E>
where
    P: rusqlite::Params,
    E: From<rusqlite::Error>,
{
    let mut stmt = prepare(conn, sql)?;
    let mut rows = stmt.query(params)?;
    while let Some(r) = rows.next()? {
        row(r)?;
    }
    Ok(())
}

/// The rows of `sql` with `params`, each as `read` reads it.
pub(crate) fn rows_as<T, P: rusqlite::Params>(
    conn: &Connection,
    sql: &str,
    params: P,
    mut read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    let mut all = Vec::new();
    each_row(conn, sql, params, |r| {
        all.push(read(r)?);
        Ok::<(), rusqlite::Error>(())
    })?;
    Ok(all)
}

/// The first row of `sql` with `params`, as `read` reads it; `None` when it has none.
pub(crate) fn first_row<T, P: rusqlite::Params>(
    conn: &Connection,
    sql: &str,
    params: P,
    read: impl FnOnce(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<Option<T>> {
    let mut stmt = prepare(conn, sql)?;
    let mut rows = stmt.query(params)?;
    rows.next()?.map(read).transpose()
}

/// The rows of a statement of the catalog (a reflection's `pragma_*`), as `read` reads each:
/// prepared apart from the statement cache, which they would fill with statements run once.
pub(crate) fn catalog_rows<T, P: rusqlite::Params>(
    conn: &Connection,
    sql: &str,
    params: P,
    read: impl FnMut(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<Vec<T>> {
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map(params, read)?;
    rows.collect()
}

/// Runs `sql` with `params`: how many rows it changed.
pub(crate) fn changed<P: rusqlite::Params>(
    conn: &Connection,
    sql: &str,
    params: P,
) -> rusqlite::Result<usize> {
    prepare(conn, sql)?.execute(params)
}

/// Runs `sql`, statements without values, one after the other (a seed, a pragma, a
/// transaction's `BEGIN` or `COMMIT`).
pub(crate) fn script(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.execute_batch(sql)
}

/// Whether SQLite prepares `sql`: it knows its functions and reads its syntax.
pub(crate) fn prepares(conn: &Connection, sql: &str) -> bool {
    prepare(conn, sql).is_ok()
}

/// How long a copy waits for a lock another connection holds (as the resource's connections'
/// busy timeout does).
const COPY_WAIT: Duration = Duration::from_secs(5);

/// Copies the whole of `from` into `to`, all pages in one step (SQLite's online backup): the
/// copy is taken (or put back) as one consistent state. A step that finds a database locked
/// is tried again.
pub(crate) fn copy(from: &Connection, to: &mut Connection) -> Result<(), EngineError> {
    use rusqlite::backup::{Backup, StepResult};
    let backup = Backup::new(from, to).map_err(engine_error)?;
    let start = Instant::now();
    loop {
        match backup.step(-1).map_err(engine_error)? {
            StepResult::Done => return Ok(()),
            StepResult::Busy | StepResult::Locked if start.elapsed() < COPY_WAIT => {
                std::thread::sleep(Duration::from_millis(1));
            }
            StepResult::More => {}
            _ => {
                return Err(EngineError::Internal(format!(
                    "the database stayed locked for {}s while copying it",
                    COPY_WAIT.as_secs()
                )));
            }
        }
    }
}

/// SQLite's driver: rusqlite on the connection the operation holds, each step done when
/// called.
/// The rows of one of the crate's own statements, each value as stored (`rows_as`).
pub(crate) fn stored_rows(
    conn: &Connection,
    sql: &str,
    binds: &Binds,
) -> rusqlite::Result<Vec<StoredRow>> {
    let mut stmt = prepare(conn, sql)?;
    let width = stmt.column_count();
    let mut rows = stmt.query(sent(binds))?;
    let mut all = Vec::new();
    while let Some(row) = rows.next()? {
        all.push(StoredRow(
            (0..width).map(|i| row.get(i)).collect::<Result<_, _>>()?,
        ));
    }
    Ok(all)
}

/// The `i`th value of a row, as stored (NULL past the row's end).
#[inline]
fn cell<'r>(row: &'r rusqlite::Row<'_>, i: usize) -> ValueRef<'r> {
    row.get_ref(i).unwrap_or(ValueRef::Null)
}

impl<'c> Driver for Sqlite<'c> {
    type Conn = &'c mut Connection;
    type Row<'r> = rusqlite::Row<'r>;
    type Fault = rusqlite::Error;

    /// Each value as stored, written as the engine writes it.
    #[inline]
    fn write_value(
        row: &rusqlite::Row<'_>,
        buf: &mut Vec<u8>,
        i: usize,
        field: &Field,
        _: i32,
    ) -> bool {
        write_field_value(buf, field, stored(cell(row, i)))
    }

    /// A key part compared as Python compares it ([`identity_key`]).
    fn identity_key(row: &rusqlite::Row<'_>, i: usize, field: &Field) -> Option<Vec<u8>> {
        match cell(row, i) {
            ValueRef::Null => None,
            v => Some(identity_key(field, v)),
        }
    }

    /// Each row lent as it is stepped to. One `sqlite3_prepare` (through the statement cache):
    /// rusqlite refuses a text with a second statement (`MultipleStatement`) before any of it
    /// runs, which is what `Driver::execute_one` needs of it too.
    async fn each_row<S: FnMut(&rusqlite::Row<'_>) + Send>(
        conn: &mut &'c mut Connection,
        sql: &str,
        binds: &Binds,
        sink: &mut S,
    ) -> rusqlite::Result<()> {
        each_row(conn, sql, sent(binds), |row| {
            sink(row);
            Ok::<(), rusqlite::Error>(())
        })
    }

    /// Each value as stored.
    fn cells(row: &rusqlite::Row<'_>) -> Vec<Bind> {
        let width = row.as_ref().column_count();
        (0..width).map(|i| Self::cell(row, i)).collect()
    }

    fn cell(row: &rusqlite::Row<'_>, i: usize) -> Bind {
        bind_of(row.get(i).unwrap_or(Value::Null))
    }

    /// Rolled back at once: the connection is the operation's, and stays open for it.
    fn close(conn: &'c mut Connection) {
        if !conn.is_autocommit() {
            // Nothing to answer: a connection that cannot roll back fails its next statement.
            let _ = conn.execute_batch("ROLLBACK");
        }
    }

    // SQLite's side of a read-only query (and of an action's session): a reader opened read-only
    // (or the one connection with `query_only` on), the statement proven read-only as it is
    // prepared, stopped at the deadline by the operation's [`Watchdog`], and by [`SqlCancel`]
    // when the client goes away.
    const TIMED_BY_FLOW: bool = false;

    /// The operation's connection: a query's is read-only already
    /// (`Resource::with_read_only`), an action's is the writer, in `BEGIN IMMEDIATE`.
    async fn open(
        &self,
        _time: Duration,
        access: Access,
    ) -> Result<Opened<&'c mut Connection>, EngineError> {
        let conn = self.connect(None).await?;
        let (cancel, _) = self.stop.ok_or_else(unstoppable)?;
        if !cancel.attach(conn.get_interrupt_handle()) {
            // Answered as the caller's going away (`SqlCancel::settle`).
            return Err(cancelled());
        }
        if access == Access::ReadWrite {
            conn.execute_batch("BEGIN IMMEDIATE")
                .map_err(|e| self.fault(e, Failure::Unexpected))?;
        }
        let handle = conn.get_interrupt_handle();
        let cancel: Cancel = Box::pin(async move { handle.interrupt() });
        Ok(Opened { conn, cancel })
    }

    /// A read-only query runs behind its [`ReadOnlyGuard`] (nothing but reading, within
    /// `limits`); an action's statement as it is, on the writer, in the action's transaction.
    /// Either has ended when this returns (SQLite runs it on this thread to its end or its
    /// interrupt); the session is cleaned by closing it (`Driver::close`: an action's open
    /// transaction is rolled back, and the connection goes back when the operation ends).
    async fn run_user(
        &self,
        conn: &mut &'c mut Connection,
        user: &UserStatement,
        limits: SqlLimits,
        _tz: i32,
        _left_running: &AtomicBool,
    ) -> Result<(Vec<String>, AnswerRows), EngineError> {
        let (cancel, watchdog) = self.stop.ok_or_else(unstoppable)?;
        match user.reading {
            Reading::Engine => {
                let guard = ReadOnlyGuard::install(conn, limits, Arc::clone(&cancel.cancelled))?;
                let result = run(&guard, user, limits, watchdog, cancel);
                // The statement is finished (dropped in `run`); then the guard's settings go.
                drop(guard);
                result
            }
            Reading::Action => run_action_statement(conn, user, limits.answer_bytes, watchdog),
        }
    }
}

/// An action's statement, its rows written within `answer_bytes` ([`Driver::run_user`]).
fn run_action_statement(
    conn: &Connection,
    user: &UserStatement,
    answer_bytes: usize,
    watchdog: &Watchdog,
) -> Result<(Vec<String>, AnswerRows), EngineError> {
    let mut stmt = match conn.prepare(&user.text) {
        Ok(stmt) => stmt,
        Err(rusqlite::Error::MultipleStatement) => {
            return Err(query_error(
                "An action's statement holds more than one statement: give them as a list \
                 (\"sql\": [\"...\", \"...\"]).",
            ));
        }
        Err(e) => return Err(failed(e)),
    };
    bind_inputs(&mut stmt, &user.binds)?;
    let columns: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let mut rows = AnswerRows::new(answer_bytes);
    write_rows(&mut stmt, columns.len(), &mut rows, watchdog).map_err(|e| match e {
        Stop::Deadline => too_long(watchdog.limit()),
        Stop::TooLarge => query_error(format!(
            "The answer is larger than {} MiB; return fewer rows or columns.",
            answer_bytes / (1024 * 1024)
        )),
        Stop::Sqlite(e) => failed(e),
    })?;
    Ok((columns, rows))
}

#[cfg(test)]
mod driver_tests {
    use serde_json::json;

    use super::*;
    use svc_engine::{MAX_SQL_ANSWER_BYTES, SQL_TIME_LIMIT};

    fn db() -> Resource {
        Resource::in_memory(
            "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, data BLOB);
             INSERT INTO t VALUES (1, 'a', x'00ff'), (2, 'b', NULL);",
        )
        .unwrap()
    }

    fn params(v: Json) -> Map<String, Json> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn ok(db: &Resource, q: &str, p: Json) -> Json {
        serde_json::from_slice(&db.sql(q, &params(p)).unwrap()).unwrap()
    }

    fn refused_field(db: &Resource, q: &str) -> (String, String) {
        let err = db.sql(q, &Map::new()).unwrap_err();
        let EngineError::Invalid { fields, .. } = &err else {
            panic!("{q}: {err:?}")
        };
        let (field, messages) = fields.iter().next().unwrap();
        (field.clone(), messages[0].clone())
    }

    #[test]
    fn repeated_names_are_made_unique_as_in_the_engines_sub_select() {
        let names = |n: &[&str]| subquery_names(n.iter().copied());
        assert_eq!(names(&["a", "a", "a"]), ["a", "a:1", "a:2"]);
        assert_eq!(names(&["a", "A"]), ["a", "A:1"]);
        assert_eq!(names(&["a", "a:1", "a"]), ["a", "a:1", "a:2"]);
        assert_eq!(names(&["x", "1", "1"]), ["x", "1", "1:1"]);
        assert_eq!(names(&["a:", "a:"]), ["a:", "a:1"]);
        let db = db();
        let out = ok(&db, "select 1 as a, 2 as a", json!({}));
        assert_eq!(out["columns"], json!(["a", "a:1"]));
    }

    #[test]
    fn values_and_parameters() {
        let db = db();
        let out = ok(
            &db,
            "select id, name, data, 1.5 as r, :flag as f, :min as m from t where id >= :min order by id",
            json!({"min": 1, "flag": true, "unused": 0}),
        );
        assert_eq!(out["columns"], json!(["id", "name", "data", "r", "f", "m"]));
        assert_eq!(out["data"][0], json!([1, "a", "00ff", 1.5, 1, 1]));
        assert_eq!(out["data"][1][2], Json::Null);
        assert_eq!(out["row_count"], 2);
        // As the engine's SQLite answered each (jet-bridge 1.12.13: SQLAlchemy's `text()`, then
        // Python's `sqlite3`): a `400` naming `query`.
        let refused = |q: &str, p: Json| {
            let err = db.sql(q, &params(p)).unwrap_err();
            let EngineError::Invalid { fields, .. } = &err else {
                panic!("{q}: {err:?}")
            };
            assert!(fields.contains_key("query"), "{q}: {err:?}");
            fields["query"][0].clone()
        };
        let list = refused("select :o as o", json!({"o": [1]}));
        assert!(list.contains(":o is a list"), "{list}");
        refused("select :o as o", json!({"o": {"k": 1}}));
        refused(
            "select :n as n",
            json!({"n": 9_223_372_036_854_775_808_u64}),
        );
        // SQLite's own parameters are none of the engine's; a `:name` in a string or a comment
        // is one (SQLAlchemy reads no SQL), which SQLite does not count.
        let count = refused("select @a || $b as s", json!({"a": "x", "b": "y"}));
        assert!(
            count.contains("uses 2, and there are 0 supplied"),
            "{count}"
        );
        refused("select ':a' as s", json!({"a": 1}));
        refused("select 1 as x -- :a", json!({"a": 1}));
        // The query runs inside the engine's sub-select: a `;` or a line comment at its end
        // breaks it, a block comment does not.
        refused("select 1 as x;", json!({}));
        refused("select 1 as x -- the end", json!({}));
        let out = ok(&db, "select 1 as x /* the end */", json!({}));
        assert_eq!(out["data"], json!([[1]]));
        // `\\:a` is the text `:a`.
        let out = ok(&db, "select '\\:a' as s, :a as a", json!({"a": 2}));
        assert_eq!(out["data"], json!([[":a", 2]]));
        // Bytes that are UTF-8 are their text, as the engine decodes them.
        let out = ok(&db, "select x'6869' as b", json!({}));
        assert_eq!(out["data"], json!([["hi"]]));
    }

    /// `sum`, `avg` and `total` add as the data engine's SQLite (3.40.1) does, one float at a
    /// time, as aggregates and over windows; the figures are the engine's answers to the
    /// same queries (jet-bridge 1.12.13 over Debian's SQLite 3.40.1).
    #[test]
    fn sums_add_as_the_engines_sqlite_does() {
        let db = Resource::in_memory(
            "CREATE TABLE x (id INTEGER PRIMARY KEY, v REAL, g INTEGER);
             INSERT INTO x (v, g) VALUES (0.1, 0), (0.1, 0), (0.1, 0), (0.1, 0), (0.1, 0),
               (0.1, 0), (0.1, 0), (0.1, 0), (0.1, 0), (0.1, 0), (1e16, 1), (1.0, 1), (-1e16, 1);",
        )
        .unwrap();
        let one = |q: &str| ok(&db, q, json!({}))["data"].clone();
        assert_eq!(
            one("select sum(v) as s from x where g = 0"),
            json!([[0.9999999999999999]])
        );
        assert_eq!(
            one("select total(v) as s from x where g = 0"),
            json!([[0.9999999999999999]])
        );
        assert_eq!(
            one("select avg(v) as s from x where g = 0"),
            json!([[0.09999999999999999]])
        );
        assert_eq!(one("select SUM(v) as s from x where g = 1"), json!([[0.0]]));
        assert_eq!(
            one(
                "select avg(n) as a from (select 9007199254740993 as n union all select 1 \
                 union all select 2)"
            ),
            json!([[3002399751580331.5]])
        );
        assert_eq!(
            one(
                "select id, sum(v) over (order by id rows between 2 preceding and current row) \
                 as w from x where id > 8"
            ),
            json!([[9, 0.1], [10, 0.2], [11, 1e16], [12, 1e16], [13, 0.0]])
        );
        assert_eq!(
            one(
                "select sum(distinct v) as d, total(null) as t, sum(null) as s, avg(null) as a \
                 from x where g = 1"
            ),
            json!([[0.0, 0.0, null, null]])
        );
        assert_eq!(one("select sum(id) as s from x"), json!([[91]]));
        let overflow = db
            .sql(
                "select sum(n) as s from (select 9223372036854775807 as n union all select 1)",
                &Map::new(),
            )
            .unwrap_err();
        assert!(
            overflow.to_string().contains("integer overflow"),
            "{overflow}"
        );
    }

    #[test]
    fn refusals_name_the_field() {
        let db = db();
        for q in [
            "delete from t",
            "select 1; delete from t",
            "pragma query_only = 0",
            "pragma table_info(t)",
            "attach ':memory:' as x",
            "begin",
            "explain select 1",
            "-- nothing",
            "select * from nope",
            "select load_extension('x')",
        ] {
            let (field, message) = refused_field(&db, q);
            assert_eq!(field, "query", "{q}: {message}");
        }
        let (field, message) = refused_field(&db, "select :missing");
        assert_eq!(field, "params_obj");
        assert!(message.contains(":missing"), "{message}");
        assert_eq!(refused_field(&db, "select ?").0, "query");
        // The engine's own statements still work afterwards: nothing stayed installed.
        db.create("t", &json!({"name": "c"})).unwrap();
        assert_eq!(
            ok(&db, "select count(*) from t", json!({}))["data"],
            json!([[3]])
        );
    }

    #[test]
    fn rows_are_capped_and_long_queries_stop() {
        let db = db();
        let out = ok(
            &db,
            "with recursive c(x) as (select 1 union all select x + 1 from c) select x from c",
            json!({}),
        );
        assert_eq!(out["row_count"], MAX_SQL_ROWS);
        assert_eq!(out["data"].as_array().unwrap().len(), MAX_SQL_ROWS);
        let err = db
            .sql_with_limit(
                "with recursive c(x) as (select 1 union all select x + 1 from c) select count(*) from c",
                &Map::new(),
                Duration::from_millis(50),
            )
            .unwrap_err();
        assert!(err.to_string().contains("stopped"), "{err}");
    }

    fn limited(time: Duration, answer_bytes: usize) -> SqlLimits {
        SqlLimits { time, answer_bytes }
    }

    #[test]
    fn a_statement_without_loops_is_stopped_at_the_deadline() {
        let db = db();
        // Five long single function calls: the progress handler, which counts virtual machine
        // steps, is hardly reached; the watchdog's interrupt stops the statement between calls.
        let call = "length(replace(hex(zeroblob(4000000)), '0', 'ab'))";
        let query = format!("select {}", [call; 5].join(", "));
        let err = db
            .sql_with(
                &query,
                &Map::new(),
                limited(Duration::from_millis(1), MAX_SQL_ANSWER_BYTES),
                &SqlCancel::default(),
            )
            .unwrap_err();
        assert!(err.to_string().contains("ran longer than"), "{err}");
        // Nothing is left behind: the next statements of the connection run.
        assert_eq!(ok(&db, "select 1", json!({}))["data"], json!([[1]]));
        db.create("t", &json!({"name": "c"})).unwrap();
    }

    #[test]
    fn answers_and_values_over_the_caps_are_refused() {
        let db = db();
        let rows = "with recursive c(x) as (select 1 union all select x + 1 from c limit 5000) \
                    select x, hex(zeroblob(1000)) from c";
        let err = db
            .sql_with(
                rows,
                &Map::new(),
                limited(SQL_TIME_LIMIT, 1 << 20),
                &SqlCancel::default(),
            )
            .unwrap_err();
        assert!(err.to_string().contains("larger than 1 MiB"), "{err}");
        // A value over half the cap fails inside SQLite, before it is made.
        let err = db
            .sql_with(
                "select length(randomblob(999999999))",
                &Map::new(),
                limited(SQL_TIME_LIMIT, 1 << 20),
                &SqlCancel::default(),
            )
            .unwrap_err();
        assert!(
            err.to_string().contains("A value of the answer is larger"),
            "{err}"
        );
        // Under the caps, the same shapes are answered.
        let out: Json = serde_json::from_slice(
            &db.sql_with(
                "select length(randomblob(1000)), hex(zeroblob(10))",
                &Map::new(),
                limited(SQL_TIME_LIMIT, 1 << 20),
                &SqlCancel::default(),
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(out["data"], json!([[1000, "00000000000000000000"]]));
    }

    #[test]
    fn a_cancelled_query_stops_or_never_starts() {
        let db = Arc::new(db());
        let cancel = Arc::new(SqlCancel::default());
        let running = {
            let (db, cancel) = (Arc::clone(&db), Arc::clone(&cancel));
            std::thread::spawn(move || {
                db.sql_with(
                    "with recursive c(x) as (select 1 union all select x + 1 from c) \
                     select count(*) from c",
                    &Map::new(),
                    limited(Duration::from_secs(60), MAX_SQL_ANSWER_BYTES),
                    &cancel,
                )
            })
        };
        // Cancel once the query runs (a gate, not a guess at its timing).
        while cancel.state.lock().unwrap().running.is_none() {
            assert!(!running.is_finished(), "{:?}", running.join());
            std::thread::yield_now();
        }
        cancel.cancel();
        let err = running.join().unwrap().unwrap_err();
        assert!(err.to_string().contains("cancelled"), "{err}");
        // Cancelled before it starts: it never runs.
        let err = db
            .sql_with("select 1", &Map::new(), SqlLimits::default(), &cancel)
            .unwrap_err();
        assert!(err.to_string().contains("cancelled"), "{err}");
        assert_eq!(ok(&db, "select 2", json!({}))["data"], json!([[2]]));
    }
}

impl Resource {
    /// Runs `statements` in order in one transaction of the writer connection with `inputs`
    /// bound, within `limits`, stopped early by `cancel` (`Backend::execute`): the last
    /// statement's answer (`{"columns", "data", "row_count"}`), or the first failure with
    /// everything rolled back.
    #[cfg(test)]
    pub(crate) fn execute_action(
        &self,
        statements: &[String],
        inputs: &Map<String, Json>,
        limits: SqlLimits,
        cancel: &SqlCancel,
    ) -> Result<Vec<u8>, EngineError> {
        let action = Action {
            statements: statements.to_vec(),
            inputs: inputs.clone(),
            limits,
        };
        self.stoppable(&action, cancel)
    }
}

fn gone() -> EngineError {
    query_error("The action was cancelled: its client went away.")
}

pub(super) fn too_long(time: Duration) -> EngineError {
    query_error(format!(
        "The action ran longer than {} s and was stopped.",
        time.as_secs_f64()
    ))
}

/// The database's refusal of a statement, as its message says it.
pub(super) fn failed(e: rusqlite::Error) -> EngineError {
    match e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == ErrorCode::OperationInterrupted => {
            query_error(
                "The action was stopped: it ran past its time limit, or its client went away.",
            )
        }
        e => query_error(format!("The database refused the statement: {e}.")),
    }
}

/// Binds an action's inputs, each `:name` a `?` already (`dialect::user_statement`): a
/// parameter of another form (`?`, `@name`, `$name`) is refused, as it would be bound to nothing.
fn bind_inputs(stmt: &mut Statement<'_>, inputs: &Binds) -> Result<(), EngineError> {
    let not_an_input = |stmt: &Statement<'_>| {
        // SQLite names each parameter but a bare `?`; the inputs' are bare.
        let count = stmt.parameter_count();
        let other = (1..=count).find_map(|i| stmt.parameter_name(i));
        query_error(format!(
            "The parameter {} is not an input: write inputs as :name.",
            other.unwrap_or("?")
        ))
    };
    bind_by_position(stmt, inputs, not_an_input, failed)
}

#[cfg(test)]
mod action_tests {
    use super::*;
    use svc_emulator_core::dialect::Dialect;
    use svc_engine::sql_params::parameter_names;

    /// The `:name` inputs as SQLite reads its text (`Backend::inputs`): names inside strings,
    /// quoted names (`"..."`, `` `...` ``, `[...]`) and comments are none.
    fn names(s: &str) -> Vec<String> {
        parameter_names(&[s.to_owned()], <Sqlite<'_> as Dialect>::skip)
            .unwrap()
            .into_iter()
            .collect()
    }

    #[test]
    fn inputs_outside_strings_names_and_comments() {
        assert_eq!(
            names("UPDATE t SET a = :a, b = ':no' WHERE id = :id -- :no\n AND c = :a /* :no */"),
            ["a", "id"]
        );
        assert_eq!(
            names(r#"SELECT "x:no", [y:no], `z:no` FROM t"#),
            Vec::<String>::new()
        );
    }

    fn db() -> Resource {
        Resource::in_memory("CREATE TABLE t (id INTEGER PRIMARY KEY, status TEXT); INSERT INTO t VALUES (1, 'new'), (2, 'new');")
            .unwrap()
    }

    fn run(db: &Resource, sql: &[&str], inputs: Json) -> Result<Json, EngineError> {
        let sql: Vec<String> = sql.iter().map(|s| (*s).to_owned()).collect();
        let inputs = inputs.as_object().cloned().unwrap_or_default();
        db.execute_action(&sql, &inputs, SqlLimits::default(), &SqlCancel::default())
            .map(|b| serde_json::from_slice(&b).unwrap())
    }

    fn status_of(db: &Resource, id: i64) -> Json {
        run(
            db,
            &["SELECT status FROM t WHERE id = :id"],
            serde_json::json!({"id": id}),
        )
        .unwrap()["data"][0][0]
            .clone()
    }

    /// The failure of an action that writes row 1, then runs `statement` and one more, within
    /// `limits`; row 1 is checked to be as it was (rolled back).
    fn fails_after_a_write(db: &Resource, statement: &str, limits: SqlLimits) -> String {
        let statements = [
            "UPDATE t SET status = 'gone' WHERE id = 1",
            statement,
            "SELECT 1",
        ]
        .map(str::to_owned);
        let e = db
            .execute_action(&statements, &Map::new(), limits, &SqlCancel::default())
            .unwrap_err();
        assert_eq!(status_of(db, 1), "new", "rolled back");
        e.to_string()
    }

    /// Past the deadline the statement is stopped and everything rolled back. The statement
    /// never ends on its own, so the outcome does not depend on the machine's speed.
    #[test]
    fn an_action_past_its_deadline_is_stopped_and_rolled_back() {
        let db = db();
        let forever = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) \
                       SELECT count(*) FROM n";
        let limits = SqlLimits {
            time: std::time::Duration::from_millis(50),
            ..SqlLimits::default()
        };
        let e = fails_after_a_write(&db, forever, limits);
        assert!(e.contains("stopped"), "{e}");
    }

    /// A client gone before the action started: nothing runs, and the answer says why.
    #[test]
    fn an_action_whose_client_went_away_runs_nothing() {
        let db = db();
        let cancel = SqlCancel::default();
        cancel.cancel();
        let statements = ["UPDATE t SET status = 'gone' WHERE id = 1".to_owned()];
        let e = db
            .execute_action(&statements, &Map::new(), SqlLimits::default(), &cancel)
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "The action was cancelled: its client went away."
        );
        assert_eq!(status_of(&db, 1), "new");
    }

    /// The answer cap holds for the rows of every statement, not only the last one's.
    #[test]
    fn every_statements_rows_count_toward_the_answer_cap() {
        let db = db();
        let many = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n LIMIT 100000) \
                    SELECT i, 'padding padding padding' FROM n";
        let limits = SqlLimits {
            answer_bytes: 64 * 1024,
            ..SqlLimits::default()
        };
        let e = fails_after_a_write(&db, many, limits);
        assert!(e.contains("larger than"), "{e}");
    }

    #[test]
    fn runs_in_one_transaction_and_answers_the_last_rows() {
        let db = db();
        let answer = run(
            &db,
            &[
                "UPDATE t SET status = :s WHERE id = :id",
                "SELECT id, status FROM t WHERE id = :id",
            ],
            serde_json::json!({"id": 1, "s": "refunded"}),
        )
        .unwrap();
        assert_eq!(answer["columns"], serde_json::json!(["id", "status"]));
        assert_eq!(answer["data"], serde_json::json!([[1, "refunded"]]));
        // The second statement fails: the first one's change is rolled back.
        let e = run(
            &db,
            &[
                "UPDATE t SET status = 'gone' WHERE id = 2",
                "INSERT INTO t (id) VALUES (1)",
            ],
            serde_json::json!({}),
        )
        .unwrap_err();
        assert!(e.to_string().contains("UNIQUE"), "{e}");
        let after = run(
            &db,
            &["SELECT status FROM t WHERE id = 2"],
            serde_json::json!({}),
        )
        .unwrap();
        assert_eq!(after["data"], serde_json::json!([["new"]]));
        // A missing input names it, and nothing runs.
        let e = run(&db, &["UPDATE t SET status = :s"], serde_json::json!({})).unwrap_err();
        assert_eq!(e.to_string(), "Missing input: s.");
        // RETURNING rows.
        let answer = run(
            &db,
            &["UPDATE t SET status = 'x' WHERE id = :id RETURNING id, status"],
            serde_json::json!({"id": 2}),
        )
        .unwrap();
        assert_eq!(answer["data"], serde_json::json!([[2, "x"]]));
    }
}
