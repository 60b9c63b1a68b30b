//! A read-only query, as every database server runs it (docs/contract.md 5.2): its `:name`s
//! bound, a session inside a read-only transaction, the statement run under a deadline, its
//! rows written within the answer cap, and the session given back clean, or closed when its
//! statement may still run. At the deadline, at the answer cap, or when the caller goes away
//! (the future is dropped), the statement is cancelled from outside its session: a cancel
//! travels on a connection of its own and may land after the statement ended, so a session it
//! was sent for never serves another query. How a database proves a query read-only, runs it,
//! cancels it and reads its cells is its own ([`Driver`]).

use crate::flow::database::Database;
use crate::flow::state::Served;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::dialect::group::Quoting;
use crate::dialect::user_statement::{EngineDriver, bind_user_statement, engine_query};
use crate::flow::driver::Driver;
use svc_engine::sql_answer::{AnswerRows, stopped_after};
use svc_engine::sql_params::{self, Reading};
use svc_engine::sql_request::SqlRequest;
use svc_engine::{EngineError, SqlLimits};

/// A statement's cancel, sent when awaited ([`Opened::cancel`]).
pub type Cancel = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A session opened for a read-only query or an action ([`Driver::open`]).
pub struct Opened<C> {
    /// The session: one of the driver's connections, inside its transaction.
    pub conn: C,
    /// What cancels the session's statement from outside it, when awaited.
    pub cancel: Cancel,
}

impl<C> std::fmt::Debug for Opened<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened").finish_non_exhaustive()
    }
}

/// What a session's transaction may do: a read-only query only reads; an action's statements
/// (`flow::action`) read and write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `READ ONLY`: the database refuses every write.
    ReadOnly,
    /// `READ WRITE`.
    ReadWrite,
}

/// A session running a query. Dropped while it still holds the session (the caller went away
/// while the statement ran, or while its cancel was being sent), it gives the session up,
/// never to serve another query (its statement may still run, a cancel may still land on it),
/// and sends the cancel it still holds.
pub(super) struct Running<D: Driver> {
    pub(super) cancel: Option<Cancel>,
    pub(super) conn: Option<D::Conn>,
}

impl<D: Driver> Drop for Running<D> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            D::close(conn);
        }
        if let Some(cancel) = self.cancel.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(cancel);
        }
    }
}

/// Runs one read-only query (`:name` values, order and paging: `request`, its order's names
/// written as `quoting` writes them) within `time` and `answer_bytes`; the answer is `{"columns", "data", "row_count"}` as JSON bytes.
pub async fn read_only<D: Database>(
    db: &Served<'_, D>,
    request: &SqlRequest,
    quoting: Quoting,
    time: Duration,
    answer_bytes: usize,
) -> Result<Vec<u8>, EngineError> {
    read_only_in(db.db(), request, (quoting, db), time, answer_bytes).await
}

/// The engine's default time zone, being read on a session.
type ZoneRead<'c> = Pin<Box<dyn Future<Output = Result<i32, EngineError>> + Send + 'c>>;

/// What reads the engine's default time zone on a query's session, as its values are read.
trait ReadsZone<C>: Sync {
    /// The zone, read on `conn`.
    fn zone<'c>(&'c self, conn: &'c mut C) -> ZoneRead<'c>;
}

impl<D: Database> ReadsZone<D::Conn> for Served<'_, D> {
    fn zone<'c>(&'c self, conn: &'c mut D::Conn) -> ZoneRead<'c> {
        Box::pin(self.time_zone(conn))
    }
}

/// [`read_only`] on a session of `db`, its values written in the time zone `zone` reads on it.
async fn read_only_in<D: Driver>(
    db: &D,
    request: &SqlRequest,
    (quoting, zone): (Quoting, &impl ReadsZone<D::Conn>),
    time: Duration,
    answer_bytes: usize,
) -> Result<Vec<u8>, EngineError> {
    let SqlRequest {
        query,
        params,
        paging,
        ..
    } = request;
    // The engine's SQLAlchemy names the paging's values itself: a parameter of the query that
    // takes one of those names fails there.
    // (A name without a value fails anyway: the query is read only where one has a value.)
    let sqlite = D::ENGINE_DRIVER == EngineDriver::Sqlite3;
    let taken = |name: &&&str| {
        params.contains_key(**name) && sql_params::engine_names(query).iter().any(|n| n == **name)
    };
    if let Some(taken) = paging.engine_binds(sqlite).iter().find(taken) {
        return Err(EngineError::field(
            "query",
            format!(
                "The parameter :{taken} has the name the data engine gives the value of the \
                 answer's limit or offset: it fails (\"conflicts with unique bind parameter\"). \
                 Rename it."
            ),
        ));
    }
    // Ordered by the answer's column names, as the database's SQLAlchemy dialect writes them.
    let text = engine_query(request, quoting);
    let statement = bind_user_statement::<D>(&text, params, Reading::Engine)?;
    let Opened { conn, cancel } = db.open(time, Access::ReadOnly).await?;
    let mut guard = Running::<D> {
        cancel: Some(cancel),
        conn: Some(conn),
    };
    let left_running = AtomicBool::new(false);
    let conn = guard.conn.as_mut().ok_or_else(conn_gone)?;
    let tz = zone.zone(conn).await?;
    let limits = SqlLimits { time, answer_bytes };
    let run = db.run_user(conn, &statement, limits, tz, &left_running);
    let outcome = within::<D, _>(time, run).await;
    // Left behind at the answer cap, the statement may still be running too.
    let still_running = outcome.is_none() || left_running.load(Ordering::Relaxed);
    give_back(guard, still_running).await?;
    answered(outcome, time)
}

/// The statements' outcome; `None`: stopped at the deadline by the flow's timer, unless the
/// driver keeps its deadline itself ([`Driver::TIMED_BY_FLOW`]).
pub(super) async fn within<D: Driver, T>(
    time: Duration,
    run: impl Future<Output = T>,
) -> Option<T> {
    if D::TIMED_BY_FLOW {
        tokio::time::timeout(time, run).await.ok()
    } else {
        Some(run.await)
    }
}

/// Gives the guard's session back once its statements are done: a statement that may still
/// run is cancelled first (cleaning the session would wait for it), and the session closed,
/// which rolls back what it had not committed; otherwise the session is cleaned (which rolls
/// back what a failed statement left) for the next query.
pub(super) async fn give_back<D: Driver>(
    mut guard: Running<D>,
    still_running: bool,
) -> Result<(), EngineError> {
    let cancel = guard.cancel.take();
    if still_running && let Some(cancel) = cancel {
        cancel.await;
    }
    let conn = guard.conn.take().ok_or_else(conn_gone)?;
    if still_running {
        D::close(conn);
    } else {
        D::clean(conn).await;
    }
    Ok(())
}

/// The answer of an outcome from [`within`] `time`: the last statement's rows, its refusal, or
/// the refusal of a statement stopped at the deadline.
pub(super) fn answered(
    outcome: Option<Result<(Vec<String>, AnswerRows), EngineError>>,
    time: Duration,
) -> Result<Vec<u8>, EngineError> {
    match outcome {
        Some(Ok((names, rows))) => Ok(rows.answer(&names)),
        Some(Err(e)) => Err(e),
        None => Err(stopped_after(time)),
    }
}

/// The session a query runs on, missing: it is kept until the query's guard gives it up, so
/// this never happens.
pub(super) fn conn_gone() -> EngineError {
    EngineError::Internal("the read-only query's connection was given up early".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialect::Dialect;
    use crate::dialect::bind::Binds;
    use crate::dialect::lookup::Filter;
    use crate::dialect::relation::RelationSql;
    use crate::dialect::user_statement::{EngineDriver, UserStatement};
    use std::sync::{Arc, Mutex};
    use svc_engine::filter::Arg;
    use svc_engine::table::{MappedColumn, MappedTable};
    use svc_engine::{EngineError, Lookup};

    /// What the guard did to its session and its cancel.
    type Log = Arc<Mutex<Vec<&'static str>>>;

    /// `select 1` on `db`, within 5 s.
    async fn select_one(db: &Logged) -> Result<Vec<u8>, EngineError> {
        let request = SqlRequest::new("select 1", Default::default());
        read_only_in(db, &request, (QUOTING, &Utc), Duration::from_secs(5), 0).await
    }

    /// The double's time zone: UTC.
    struct Utc;

    impl ReadsZone<Log> for Utc {
        fn zone<'c>(&'c self, _: &'c mut Log) -> ZoneRead<'c> {
            Box::pin(std::future::ready(Ok(0)))
        }
    }

    /// Names in `"`, none reserved.
    const QUOTING: Quoting = Quoting {
        quote: '"',
        reserved: "",
    };

    /// A database that only logs what is done to its one session; its statements never end
    /// when `.1` is set.
    #[derive(Default)]
    struct Logged(Log, bool);

    /// The kind of the double's columns: it has none, and no flow here writes a row.
    impl Dialect for Logged {
        type Model = MappedTable<MappedColumn<()>>;
        type Field = MappedColumn<()>;
        const RESERVED_WORDS: &'static str = "";
        const ENGINE_DRIVER: EngineDriver = EngineDriver::PyMySql;
        const RELATED: RelationSql<Self::Model> = RelationSql {
            table_sql: |_| String::new(),
            column_sql: |_| String::new(),
            outer_sql: |_| String::new(),
        };

        fn contained(_: &Filter<'_, Self::Field>, _: &str) -> Result<String, EngineError> {
            Err(no_filters())
        }
        fn compared(
            _: &Filter<'_, Self::Field>,
            _: &str,
            _: bool,
            _: &mut Binds,
        ) -> Result<String, EngineError> {
            Err(no_filters())
        }
        fn condition(
            _: &Filter<'_, Self::Field>,
            _: Lookup,
            _: Arg<'_>,
            _: &mut Binds,
        ) -> Result<String, EngineError> {
            Err(no_filters())
        }
    }

    fn no_filters() -> EngineError {
        EngineError::Internal("the read-only query's double builds no filter".to_owned())
    }

    /// A driver whose one session is the log; no flow here runs its statements.
    impl Driver for Logged {
        type Conn = Log;
        type Row<'r> = ();
        type Fault = ();

        fn write_value(_: &(), _: &mut Vec<u8>, _: usize, _: &MappedColumn<()>, _: i32) -> bool {
            false
        }

        async fn execute_one(_: &mut Log, _: &str) -> Result<(), ()> {
            Err(())
        }
        async fn each_row<S: FnMut(&()) + Send>(
            _: &mut Log,
            _: &str,
            _: &Binds,
            _: &mut S,
        ) -> Result<(), ()> {
            Err(())
        }
        fn cells(_: &()) -> Vec<crate::dialect::bind::Bind> {
            Vec::new()
        }
        fn close(conn: Log) {
            conn.lock().unwrap().push("close");
        }

        async fn open(&self, _: Duration, _: Access) -> Result<Opened<Log>, EngineError> {
            Ok(Opened {
                conn: self.0.clone(),
                cancel: logs_cancel(self.0.clone()),
            })
        }
        async fn run_user(
            &self,
            _: &mut Log,
            statement: &UserStatement,
            _: SqlLimits,
            _: i32,
            _: &AtomicBool,
        ) -> Result<(Vec<String>, AnswerRows), EngineError> {
            if self.1 && statement.reading == Reading::Engine {
                std::future::pending::<()>().await;
            }
            Ok((Vec::new(), AnswerRows::new(0)))
        }
        async fn clean(conn: Log) {
            conn.lock().unwrap().push("clean");
        }
    }

    /// A cancel that logs itself when awaited.
    fn logs_cancel(log: Log) -> Cancel {
        Box::pin(async move { log.lock().unwrap().push("cancel") })
    }

    #[tokio::test]
    async fn a_connection_still_held_when_the_caller_goes_is_given_up() {
        // The caller went away while the statement ran: the session is given up, the
        // statement cancelled.
        let log = Log::default();
        drop(Running::<Logged> {
            cancel: Some(logs_cancel(log.clone())),
            conn: Some(log.clone()),
        });
        tokio::task::yield_now().await;
        assert_eq!(*log.lock().unwrap(), ["close", "cancel"]);
        // The caller went away while the cancel was being sent (the guard no longer holds
        // it): the session, on which the cancel may still land, is given up all the same.
        let log = Log::default();
        drop(Running::<Logged> {
            cancel: None,
            conn: Some(log.clone()),
        });
        assert_eq!(*log.lock().unwrap(), ["close"]);
        // A query that ended: its session is cleaned for the next one, never given up.
        let db = Logged::default();
        let answer = select_one(&db).await;
        assert!(answer.is_ok(), "{answer:?}");
        assert_eq!(*db.0.lock().unwrap(), ["clean"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_statement_past_its_deadline_is_cancelled_and_its_session_closed() {
        let db = Logged(Log::default(), true);
        let answer = select_one(&db).await;
        let Err(e) = answer else {
            panic!("a statement that never ends answered {answer:?}");
        };
        assert_eq!(e, stopped_after(Duration::from_secs(5)));
        // Cancelled first (cleaning would wait for the statement), then closed: the default
        // `close` gives the session up, never back to the pool.
        assert_eq!(*db.0.lock().unwrap(), ["cancel", "close"]);
    }
}
