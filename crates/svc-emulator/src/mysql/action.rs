//! An action's statements on a MySQL or MariaDB resource (docs/contract.md 5.6,
//! `flow::action`): a connection of the SQL pool in a read-write transaction, each `:name`
//! bound as a `?` parameter of a prepared statement (one statement each, as the server
//! prepares it), the rows read as a read-only query reads them. MariaDB stops a statement at
//! the deadline itself (`SET STATEMENT max_statement_time=... FOR`); on MySQL, which limits
//! only `SELECT`s, the deadline kills it from another connection (`KILL QUERY`).

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Value};

use crate::engine::EngineError;
use crate::engine::sql_answer::AnswerRows;
use crate::flow::action::ActionSql;
use crate::mysql::MyResource;
use crate::mysql::read_only_sql::{positional, push_row, query_failed};
use crate::mysql::types::Offset;

impl ActionSql for MyResource {
    async fn execute(
        &self,
        conn: &mut Conn,
        (text, values): &(String, Vec<Value>),
        answer_bytes: usize,
        tz: Offset,
    ) -> Result<(Vec<String>, AnswerRows), EngineError> {
        let refused = |e| query_failed(self, e);
        let prepared = conn.prep(text.as_str()).await.map_err(refused)?;
        let mut result = conn
            .exec_iter(prepared, positional(values))
            .await
            .map_err(refused)?;
        let columns = result.columns().map(|c| c.to_vec()).unwrap_or_default();
        let names: Vec<String> = columns.iter().map(|c| c.name_str().into_owned()).collect();
        let mut rows = AnswerRows::new(answer_bytes);
        while let Some(row) = result.next().await.map_err(refused)? {
            push_row(&mut rows, &columns, &row, tz)?;
        }
        Ok((names, rows))
    }
}
