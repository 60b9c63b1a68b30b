//! An action's statements on a PostgreSQL resource (docs/contract.md 5.6, `flow::action`): a
//! connection of the SQL pool in a read-write transaction with `SET LOCAL statement_timeout`,
//! each `:name` bound as a read-only query binds it, never written into the text.
//!
//! A statement that returns rows (`UPDATE ... RETURNING`, `SELECT`) runs inside a
//! `WITH` whose outer select reads each column as text (`WITH q(c1, ...) AS (<statement>)
//! SELECT c1::text, ...`): PostgreSQL allows a data-modifying statement there, and the text of
//! each cell is its output function's, which the read-only answer writes (`write_cell`), so
//! both answer alike (the conformance suite compares them).

use deadpool_postgres::Object;
use futures_util::TryStreamExt;

use crate::engine::EngineError;
use crate::engine::sql_answer::AnswerRows;
use crate::flow::action::ActionSql;
use crate::postgres::PgResource;
use crate::postgres::read_only_sql::{Bound, names_and_types, query_failed, write_cell};
use crate::postgres::types::Offset;

/// The name of the `WITH` the statement runs in.
const ROWS: &str = "__svc_action";

impl ActionSql for PgResource {
    async fn execute(
        &self,
        client: &mut Object,
        bound: &Bound,
        answer_bytes: usize,
        tz: Offset,
    ) -> Result<(Vec<String>, AnswerRows), EngineError> {
        // Prepared, not run: its columns say how to read its rows.
        let statement = self.prepare_query(client, &bound.text, bound).await?;
        let mut rows = AnswerRows::new(answer_bytes);
        if statement.columns().is_empty() {
            client
                .execute_raw(&statement, bound.values())
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
                _ => format!("{a}::text"),
            })
            .collect();
        let select = format!(
            "WITH {ROWS}({}) AS ({}) SELECT {} FROM {ROWS}",
            aliases.join(", "),
            bound.text,
            texts.join(", ")
        );
        let statement = self.prepare_query(client, &select, bound).await?;
        let stream = client.query_raw(&statement, bound.values()).await;
        let stream = stream.map_err(|e| query_failed(self, e))?;
        futures_util::pin_mut!(stream);
        while let Some(row) = stream.try_next().await.map_err(|e| query_failed(self, e))? {
            rows.push(column_types.len(), |buf, i| {
                write_cell(buf, &column_types[i], row.get::<_, Option<&str>>(i), tz);
            })?;
        }
        Ok((names, rows))
    }
}
