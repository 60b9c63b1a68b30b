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
use crate::mysql::read_only_sql::{BINARY_CHARSET, query_failed};
use crate::mysql::types::{Offset, py_value};

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
        let params = if values.is_empty() {
            mysql_async::Params::Empty
        } else {
            mysql_async::Params::Positional(values.clone())
        };
        let mut result = conn.exec_iter(prepared, params).await.map_err(refused)?;
        let columns = result.columns().map(|c| c.to_vec()).unwrap_or_default();
        let names: Vec<String> = columns.iter().map(|c| c.name_str().into_owned()).collect();
        let mut rows = AnswerRows::new(answer_bytes);
        while let Some(row) = result.next().await.map_err(refused)? {
            // PyMySQL's Python value, through the engine's encoder.
            rows.push(columns.len(), |buf, i| {
                let c = &columns[i];
                let bytes = c.character_set() == BINARY_CHARSET;
                let value = row.as_ref(i).unwrap_or(&Value::NULL);
                py_value(c.column_type(), bytes, c.decimals(), value).write_answer(buf, tz);
            })?;
        }
        Ok((names, rows))
    }
}
