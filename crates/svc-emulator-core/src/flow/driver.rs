//! How a database runs statements ([`Driver`]), and the one shape every flow's transaction
//! takes ([`Session`]).
//!
//! A driver runs one statement that answers no rows (`BEGIN`, `COMMIT`, `SET`, a restore's
//! statements; a text of two statements is refused by the database's own parser, never run),
//! runs a statement with bound values and hands back its rows, and gives
//! up a connection left inside a transaction (or with settings of its own). For a read-only
//! query and an action's statements (`flow::read_only_sql`, `flow::action`) it also opens a
//! session with its cancel, runs a user's statement within the answer cap (one way for both,
//! [`Driver::run_user`]: the statement says what it is), and cleans the session for its next
//! query. It never decides what an error means: a flow knows what its statement was doing
//! ([`Failure`]) and the database reads its driver's error in those terms
//! (`database::Database::fault`).
//!
//! A [`Session`] owns its connection from the moment it may hold state until it is clean again:
//! a write's transaction, a save's snapshot, a restore with its checks turned off. Dropped before
//! (a failed step, a caller that stopped waiting), it gives the connection up
//! ([`Driver::give_up`]) and nothing it began reaches anyone else. It owns the connection, not
//! a borrow of it: a generic flow holding a driver's borrowed transaction across its steps is a
//! future the compiler cannot prove `Send`.

use std::future::Future;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::dialect::Dialect;
use crate::dialect::bind::{Bind, Binds};
use crate::dialect::user_statement::UserStatement;
use crate::flow::read_only_sql::{Access, Opened};
use svc_engine::records::RecordRow;
use svc_engine::sql_answer::AnswerRows;
use svc_engine::{EngineError, SqlLimits};

/// What a failing statement was doing, which says what its error means to the engine.
#[derive(Debug, Clone, Copy)]
pub enum Failure<'m, M> {
    /// A read the engine runs too: where the database fails, the engine fails (`500`); strict
    /// mode answers `400` with the database's message, lenient mode the engine's `500`.
    Read {
        /// The request's mode.
        lenient: bool,
    },
    /// A write to `model`: the database's refusal in the model's terms (`400`).
    Write(&'m M),
    /// A user's statement (a read-only query, an action's): the database's refusal is the
    /// query's (`400` naming it).
    Query,
    /// A statement the engine never runs as such (a transaction's, a catalog's): a failure is
    /// the database's, unexpected.
    Unexpected,
}

/// A database's driver: its connections, its statements and its rows, each handed to the
/// core's sink as it is read. Every future is `Send`.
pub trait Driver: Dialect + Sync {
    /// A connection, from the database's pool (or the one an operation holds).
    type Conn: Send;
    /// A row as the driver hands it to a sink: borrowed where the driver lends its rows
    /// (SQLite's), else its own; its cells are written as the dialect's fields' values
    /// ([`write_value`](Self::write_value)).
    type Row<'r>;
    /// The driver's own error.
    type Fault: Send;

    /// Runs `sql`, exactly one statement without bound values whose rows, if any, are not
    /// read. A text that holds a second statement is refused, not run: each driver sends it
    /// where the database parses one statement only (PostgreSQL's extended protocol, MySQL's
    /// prepared statements, one `sqlite3_prepare`), so that a name that escaped its quoting
    /// could never append a statement of its own. By default as
    /// [`each_row`](Self::each_row) runs a statement, its rows dropped.
    fn execute_one(
        conn: &mut Self::Conn,
        sql: &str,
    ) -> impl Future<Output = Result<(), Self::Fault>> + Send {
        async move { Self::each_row(conn, sql, &Binds::default(), &mut |_| {}).await }
    }

    /// Runs `sql` with `binds` bound, each row handed to `sink` as it is read.
    fn each_row<S>(
        conn: &mut Self::Conn,
        sql: &str,
        binds: &Binds,
        sink: &mut S,
    ) -> impl Future<Output = Result<(), Self::Fault>> + Send
    where
        S: FnMut(&Self::Row<'_>) + Send;

    /// What `read` makes of the first row of `sql` with `binds` bound (`None`: it has none); the
    /// other rows are read and dropped.
    fn first_row<T: Send>(
        conn: &mut Self::Conn,
        sql: &str,
        binds: &Binds,
        read: impl FnOnce(&Self::Row<'_>) -> T + Send,
    ) -> impl Future<Output = Result<Option<T>, Self::Fault>> + Send {
        async move {
            let (mut read, mut first) = (Some(read), None);
            let mut sink = |row: &Self::Row<'_>| {
                if let Some(read) = read.take() {
                    first = Some(read(row));
                }
            };
            Self::each_row(conn, sql, binds, &mut sink).await?;
            Ok(first)
        }
    }

    /// The cells of every row of `sql` with `binds` bound ([`each_row`](Self::each_row),
    /// [`cells`](Self::cells)): one of the flows' own statements.
    fn cell_rows(
        conn: &mut Self::Conn,
        sql: &str,
        binds: &Binds,
    ) -> impl Future<Output = Result<Vec<Vec<Bind>>, Self::Fault>> + Send {
        async move {
            let mut rows = Vec::new();
            Self::each_row(conn, sql, binds, &mut |row| rows.push(Self::cells(row))).await?;
            Ok(rows)
        }
    }

    /// Writes `row`'s `i`th cell, of `field`, as the engine's serializer writes it, in the time
    /// zone `tz` (the UTC offset in seconds of a date-time stored without one); `false` when the
    /// serializer cannot write it (the engine fails on every read of the record), and what is
    /// written then is the stored value ([`RecordRow::write_value`]).
    fn write_value(
        row: &Self::Row<'_>,
        buf: &mut Vec<u8>,
        i: usize,
        field: &Self::Field,
        tz: i32,
    ) -> bool;

    /// `row`'s `i`th cell, of `field`, as the ORM's identity map compares it (`None` for NULL;
    /// [`RecordRow::key`]): by default the value as the serializer writes it; a database whose
    /// written values do not tell Python's values apart as `==` does (SQLite's, whose columns
    /// hold any storage class) compares its own way.
    fn identity_key(row: &Self::Row<'_>, i: usize, field: &Self::Field) -> Option<Vec<u8>> {
        let mut written = Vec::new();
        Self::write_value(row, &mut written, i, field, 0);
        (written != b"null").then_some(written)
    }

    /// The cells of a row of one of the flows' own statements, each as the value it is bound
    /// again as (a locked row's identity, the rows a delete's cascade reads, a count).
    fn cells(row: &Self::Row<'_>) -> Vec<Bind>;

    /// The `i`th cell of a row of one of the flows' own statements, as [`cells`](Self::cells)
    /// reads it (NULL past the row's end): by default read out of the whole row; a driver that
    /// reads a cell alone does so.
    fn cell(row: &Self::Row<'_>, i: usize) -> Bind {
        Self::cells(row).into_iter().nth(i).unwrap_or(Bind::Null)
    }

    /// The `i`th cell of a row of one of the flows' own statements (a count, a truth written
    /// `1` or `0`) as text: an integer as its digits, text as it is; `None` for NULL, or a cell
    /// of another type.
    fn text(row: &Self::Row<'_>, i: usize) -> Option<String> {
        match Self::cell(row, i) {
            Bind::Int(n) => Some(n.to_string()),
            Bind::UInt(n) => Some(n.to_string()),
            Bind::Text(text) => Some(text),
            _ => None,
        }
    }

    /// The key the database made for the last row `conn` inserted into a table with an
    /// auto-increment column (MySQL's `LAST_INSERT_ID()`, as the client's answer to the
    /// `INSERT` carries it): the ORM's `lastrowid`. By default none (a database whose `INSERT`
    /// reads the row back itself).
    fn last_insert_id(_conn: &mut Self::Conn) -> Option<Bind> {
        None
    }

    /// Ends a connection at once, never to serve anyone again: a statement may still run on
    /// it, or a cancel still land on it (a read-only query stopped or left behind). What it had
    /// not committed is undone by its end. Called where nothing can be awaited (a drop).
    fn close(conn: Self::Conn);

    /// Gives up a connection left inside a transaction, or with session settings of its own:
    /// whatever it began is undone before it serves anyone else. Called where nothing can be
    /// awaited (a drop). By default it is [closed](Self::close); a driver whose pool can undo
    /// the transaction first keeps the connection.
    fn give_up(conn: Self::Conn) {
        Self::close(conn);
    }

    // A read-only query's session, and an action's (`flow::read_only_sql`, `flow::action`).

    /// Whether the flow keeps the deadline with a timer: a driver whose statements wait on a
    /// socket. A blocking driver's `run_user` has ended when it returns, so a timer would never
    /// fire: it stops its statement at the deadline itself (`false`).
    const TIMED_BY_FLOW: bool = true;

    /// A session inside a transaction of `access` (a statement stopped by the database after
    /// `time`, where it sets the limit there), and what
    /// cancels the session's statement from outside it (made as the session opens: it needs
    /// the session's id; it does nothing until awaited).
    fn open(
        &self,
        time: Duration,
        access: Access,
    ) -> impl Future<Output = Result<Opened<Self::Conn>, EngineError>> + Send;

    /// Runs a user's `statement` as its [`reading`](UserStatement::reading) says (a read-only
    /// query inside the engine's sub-select, stopped at `limits.time` where the driver keeps
    /// its own deadline; an action's statement as it is), its values bound as the engine's
    /// driver writes them (`dialect::user_statement`), its rows written within
    /// `limits.answer_bytes` in the time zone `tz`: the column names (none for a statement
    /// that returns no rows) and the rows. `left_running` is set when reading stopped before
    /// the statement's end (the answer cap): the flow then cancels it and closes the session.
    fn run_user(
        &self,
        conn: &mut Self::Conn,
        statement: &UserStatement,
        limits: SqlLimits,
        tz: i32,
        left_running: &AtomicBool,
    ) -> impl Future<Output = Result<(Vec<String>, AnswerRows), EngineError>> + Send;

    /// Ends the transaction and cleans the session for its next query (closes it when it
    /// cannot be cleaned). By default the session is [closed](Driver::close): a driver whose
    /// sessions can be cleaned keeps them.
    fn clean(conn: Self::Conn) -> impl Future<Output = ()> + Send {
        Self::close(conn);
        std::future::ready(())
    }

    /// Commits the transaction: a refusal (a deferred constraint) is the action's.
    fn commit_action(
        &self,
        conn: &mut Self::Conn,
    ) -> impl Future<Output = Result<(), EngineError>> + Send
    where
        Self: crate::flow::database::Database,
    {
        async move {
            Self::execute_one(conn, "COMMIT")
                .await
                .map_err(|e| self.fault(e, Failure::Query))
        }
    }
}

/// A driver's row as the engine's records read it ([`Driver::write_value`]).
pub struct DriverRow<'a, 'r, D: Driver>(pub &'a D::Row<'r>);

impl<D: Driver> std::fmt::Debug for DriverRow<'_, '_, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DriverRow").finish_non_exhaustive()
    }
}

impl<D: Driver> RecordRow<D::Field> for DriverRow<'_, '_, D> {
    #[inline]
    fn write_value(&self, buf: &mut Vec<u8>, i: usize, field: &D::Field, tz: i32) -> bool {
        D::write_value(self.0, buf, i, field, tz)
    }

    #[inline]
    fn key(&self, i: usize, field: &D::Field) -> Option<Vec<u8>> {
        D::identity_key(self.0, i, field)
    }
}

/// A connection whose session may hold state (a transaction, settings): given up when dropped
/// while it does. Every flow's transaction runs on one.
pub struct Session<D: Driver + ?Sized> {
    /// Taken only when the session is dropped.
    conn: Option<D::Conn>,
    /// Whether the session may hold state: inside a transaction (or not known to be out).
    in_transaction: bool,
}

impl<D: Driver + ?Sized> std::fmt::Debug for Session<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("in_transaction", &self.in_transaction)
            .finish_non_exhaustive()
    }
}

impl<D: Driver + ?Sized> Session<D> {
    /// A session on `conn`, holding no state yet.
    pub fn new(conn: D::Conn) -> Self {
        Session {
            conn: Some(conn),
            in_transaction: false,
        }
    }

    /// A transaction begun on `conn` by `begin`: given up when dropped before its commit.
    pub async fn begin(conn: D::Conn, begin: &str) -> Result<Self, D::Fault> {
        let mut session = Session::new(conn);
        session.start(begin).await?;
        Ok(session)
    }

    /// Begins a transaction with `begin`.
    pub async fn start(&mut self, begin: &str) -> Result<(), D::Fault> {
        // Marked first: a `BEGIN` whose answer is lost may have begun.
        self.in_transaction = true;
        self.execute_one(begin).await
    }

    /// Commits the transaction; the session then holds nothing: what a statement inside the
    /// transaction set for the session (a restore's checks) was set back before.
    pub async fn commit(&mut self) -> Result<(), D::Fault> {
        self.execute_one("COMMIT").await?;
        self.in_transaction = false;
        Ok(())
    }

    /// Rolls the transaction back; the session then holds nothing and may begin another.
    pub async fn rollback(&mut self) -> Result<(), D::Fault> {
        self.execute_one("ROLLBACK").await?;
        self.in_transaction = false;
        Ok(())
    }

    /// The connection.
    pub fn conn(&mut self) -> &mut D::Conn {
        // `conn` is taken only by `drop`.
        self.conn
            .as_mut()
            .unwrap_or_else(|| unreachable!("a session's connection is taken only when dropped"))
    }

    /// Runs `sql`, one statement without rows ([`Driver::execute_one`]).
    pub async fn execute_one(&mut self, sql: &str) -> Result<(), D::Fault> {
        D::execute_one(self.conn(), sql).await
    }

    /// Runs `sql` with `binds`, a write: its rows (if any) dropped.
    pub async fn write(&mut self, sql: &str, binds: &Binds) -> Result<(), D::Fault> {
        D::each_row(self.conn(), sql, binds, &mut |_| {}).await
    }

    /// The cells of every row of `sql` with `binds` ([`Driver::cell_rows`]).
    pub async fn cell_rows(
        &mut self,
        sql: &str,
        binds: &Binds,
    ) -> Result<Vec<Vec<Bind>>, D::Fault> {
        D::cell_rows(self.conn(), sql, binds).await
    }
}

impl<D: Driver + ?Sized> Drop for Session<D> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take()
            && self.in_transaction
        {
            D::give_up(conn);
        }
    }
}
