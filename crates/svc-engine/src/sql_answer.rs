//! The answer of a read-only query and of an action (`{"columns", "data", "row_count"}`),
//! written as the engine writes it, and its refusals: a query's error, an answer too large, a
//! query stopped.

use std::time::Duration;

use crate::EngineError;
use crate::json_text::{write_i64, write_json_str};
use crate::python::text::hexlify;
use crate::write_answer_head;

/// A refusal of a query: `400` naming `query`.
pub fn query_error(message: impl Into<String>) -> EngineError {
    EngineError::field("query", message)
}

/// The refusal of an answer larger than `answer_bytes` of JSON.
pub fn answer_too_large(answer_bytes: usize) -> EngineError {
    query_error(format!(
        "The answer is larger than {} MiB of JSON: select fewer rows or columns (LIMIT), or \
         smaller values.",
        answer_bytes / (1024 * 1024)
    ))
}

/// The refusal of an answer past its cap (`too_large`), the statement left running
/// (`left_running` set): its session is closed, never cleaned (`flow::read_only_sql`).
pub fn past_the_cap(
    left_running: &std::sync::atomic::AtomicBool,
    too_large: EngineError,
) -> EngineError {
    left_running.store(true, std::sync::atomic::Ordering::Relaxed);
    too_large
}

/// The refusal of a query that ran past `time`, stopped from outside the statement.
pub fn stopped_after(time: Duration) -> EngineError {
    query_error(format!(
        "The query was stopped after {} s; make it select less.",
        time.as_secs()
    ))
}

/// The refusal of a query the server stopped at its own statement time limit.
pub fn stopped_at_limit() -> EngineError {
    query_error("The query was stopped at its time limit; make it select less.")
}

/// The rows of a query's answer, written as they are read, within the answer cap (a row is
/// never kept once the answer is over it).
#[derive(Debug)]
pub struct AnswerRows {
    data: Vec<u8>,
    rows: usize,
    cap: usize,
}

impl AnswerRows {
    /// No rows yet, and the cap in bytes of JSON.
    pub fn new(cap: usize) -> Self {
        AnswerRows {
            data: Vec::with_capacity(1024),
            rows: 0,
            cap,
        }
    }

    /// Writes one row of `cells` values, the `i`th by `write(buf, i)`; the refusal of an answer
    /// over the cap, once it is.
    pub fn push(
        &mut self,
        cells: usize,
        mut write: impl FnMut(&mut Vec<u8>, usize),
    ) -> Result<(), EngineError> {
        self.data.push(if self.rows == 0 { b'[' } else { b',' });
        self.data.push(b'[');
        for i in 0..cells {
            if i > 0 {
                self.data.push(b',');
            }
            write(&mut self.data, i);
        }
        self.data.push(b']');
        self.rows += 1;
        if self.data.len() > self.cap {
            return Err(answer_too_large(self.cap));
        }
        Ok(())
    }

    /// The answer, with the columns `names`.
    pub fn answer(mut self, names: &[String]) -> Vec<u8> {
        if self.rows == 0 {
            self.data.push(b'[');
        }
        self.data.push(b']');
        sql_answer(names, &self.data, self.rows)
    }
}

/// The answer of a query, `{"columns": [...], "data": [...], "row_count": n}`, from its column
/// names and its rows already written as a JSON array.
pub fn sql_answer(names: &[String], data: &[u8], rows: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 64);
    write_answer_head(&mut out, names);
    out.extend_from_slice(data);
    out.extend_from_slice(b",\"row_count\":");
    write_i64(&mut out, i64::try_from(rows).unwrap_or(i64::MAX));
    out.push(b'}');
    out
}

/// Bytes as the engine's read-only query answer writes them: decoded as UTF-8, or in
/// lowercase hex (`bytes.hex()`) when they are not UTF-8.
pub fn write_encoder_bytes(buf: &mut Vec<u8>, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => write_json_str(buf, text),
        Err(_) => write_json_str(buf, &hexlify(bytes)),
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn the_answer_names_its_columns_and_counts_its_rows() {
        let names = ["a".to_owned(), "b \"c\"".to_owned()];
        let out = sql_answer(&names, b"[[1,null],[2,\"x\"]]", 2);
        let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"columns": ["a", "b \"c\""], "data": [[1, null], [2, "x"]], "row_count": 2})
        );
        let empty: serde_json::Value = serde_json::from_slice(&sql_answer(&[], b"[]", 0)).unwrap();
        assert_eq!(
            empty,
            serde_json::json!({"columns": [], "data": [], "row_count": 0})
        );
    }
}
