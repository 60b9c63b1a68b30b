//! An action's statements on a SQLite resource (docs/contract.md 5.6): run in order on the
//! writer connection in one `BEGIN IMMEDIATE` transaction, each `:name` bound to the
//! request's input of that name, under the read-only queries' deadline (a watchdog that
//! interrupts the connection) and answer cap; the last statement's rows are written as a
//! read-only query's are. A statement that fails rolls back them all.

use std::collections::BTreeSet;
use std::time::Duration;

use rusqlite::{ErrorCode, Statement};
use serde_json::{Map, Value as Json};

use crate::engine::sql_answer::query_error;
use crate::engine::{EngineError, SqlLimits};
use crate::flow::action::{inputs, run_action};
use crate::flow::references::run_now;
use crate::sqlite::driver::{SqlCancel, Watchdog, json_param};
use crate::sqlite::flows::Sqlite;
use crate::sqlite::resource::Resource;

impl Resource {
    /// The `:name` inputs of `statements`, as SQLite reads its text: names inside strings,
    /// quoted names (`"..."`, `` `...` ``, `[...]`) and comments are none.
    pub(crate) fn action_inputs(statements: &[String]) -> Result<BTreeSet<String>, EngineError> {
        inputs::<Sqlite<'_>>(statements)
    }

    /// Runs `statements` in order in one transaction of the writer connection with `inputs`
    /// bound, within `limits`, stopped early by `cancel`: the last statement's answer
    /// (`{"columns", "data", "row_count"}`), or the first failure with everything rolled back.
    pub(crate) fn execute_action(
        &self,
        statements: &[String],
        inputs: &Map<String, Json>,
        limits: SqlLimits,
        cancel: &SqlCancel,
    ) -> Result<Vec<u8>, EngineError> {
        self.with_writer(|conn| {
            let result = Watchdog::start(conn.get_interrupt_handle(), limits.time, |watchdog| {
                let db = Sqlite::querying(self, conn, cancel, watchdog);
                run_now(run_action(
                    &db,
                    statements,
                    inputs,
                    limits.time,
                    limits.answer_bytes,
                ))
            });
            cancel.settle(result, gone)
        })
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

/// Binds each `:name` to `inputs[name]` as a read-only query binds its parameters.
pub(super) fn bind_inputs(
    stmt: &mut Statement<'_>,
    inputs: &Map<String, Json>,
) -> Result<(), EngineError> {
    for index in 1..=stmt.parameter_count() {
        let name = stmt.parameter_name(index).map(str::to_owned);
        let Some(key) = name.as_deref().and_then(|n| n.strip_prefix(':')) else {
            return Err(query_error(format!(
                "The parameter {} is not an input: write inputs as :name.",
                name.as_deref().unwrap_or("?")
            )));
        };
        let value = inputs
            .get(key)
            .ok_or_else(|| EngineError::field("data", format!("Missing input: {key}.")))?;
        stmt.raw_bind_parameter(index, json_param(value))
            .map_err(failed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(s: &str) -> Vec<String> {
        Resource::action_inputs(&[s.to_owned()])
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
