//! An action's statements, as every database runs them (docs/contract.md 5.6): each
//! `:name` bound, one session of the SQL pool inside one read-write transaction, the statements
//! run in order under one deadline, each one's rows written within the answer cap (the last
//! one's are the answer), then the transaction committed, or rolled back when a statement
//! fails. The session is given back
//! clean, or closed when a statement may still run (the deadline, or the caller went away:
//! cancelled from outside, as a read-only query is, [`super::read_only_sql`]).

use crate::flow::state::Served;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Map, Value as Json};

use crate::dialect::user_statement::bind_user_statement;
use crate::flow::database::Database;
use crate::flow::read_only_sql::{Access, Opened, Running, answered, conn_gone, give_back, within};
use svc_engine::sql_answer::AnswerRows;
use svc_engine::sql_params::Reading;
use svc_engine::{EngineError, SqlLimits};

/// Runs `statements` in order with `inputs` (`:name` values) in one transaction within `time`:
/// the last statement's answer, `{"columns", "data", "row_count"}` as JSON bytes. Every
/// statement is bound before the first runs, so an input missing from any of them runs none.
pub async fn run_action<D: Database>(
    db: &Served<'_, D>,
    statements: &[String],
    inputs: &Map<String, Json>,
    time: Duration,
    answer_bytes: usize,
) -> Result<Vec<u8>, EngineError> {
    let bound = statements
        .iter()
        .map(|s| bind_user_statement::<D>(s, inputs, Reading::Action))
        .collect::<Result<Vec<_>, _>>()?;
    let Opened { conn, cancel } = db.open(time, Access::ReadWrite).await?;
    let mut guard = Running::<D> {
        cancel: Some(cancel),
        conn: Some(conn),
    };
    let conn = guard.conn.as_mut().ok_or_else(conn_gone)?;
    // Read on the session, as its statements' values are.
    let tz = db.time_zone(conn).await?;
    let (limits, left_running) = (SqlLimits { time, answer_bytes }, AtomicBool::new(false));
    let run = async {
        let mut last = (Vec::new(), AnswerRows::new(answer_bytes));
        for statement in &bound {
            last = db
                .run_user(conn, statement, limits, tz, &left_running)
                .await?;
        }
        db.commit_action(conn).await?;
        Ok::<_, EngineError>(last)
    };
    let outcome = within::<D, _>(time, run).await;
    // Stopped at the deadline, or left behind at the answer cap, a statement may still run;
    // committed or failed otherwise, none does.
    let still_running = outcome.is_none() || left_running.load(Ordering::Relaxed);
    give_back(guard, still_running).await?;
    answered(outcome, time)
}
