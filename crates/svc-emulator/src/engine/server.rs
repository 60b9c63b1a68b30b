//! What the backends of database servers (PostgreSQL, MySQL) share, written once: their
//! models as last read ([`Models`]), the engine's reading of a write's body over their columns
//! ([`BodyColumn`]), a float as the engine's encoder writes an aggregate's, and the answer and
//! refusals of a read-only query. SQLite's backend reads bodies and writes answers its own way
//! (in-process, with its own limits).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::Hash;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::{Map, Value as Json};

use crate::engine::EngineError;
use crate::engine::body::{not_a_dict, read_values};
use crate::engine::convert::{InputField, Internal, PyJson, hexlify};
use crate::engine::json_text::{write_i64, write_json_str};
use crate::engine::table::{BodyColumn, Column, Table};
use crate::engine::types::py_float_repr;
use crate::engine::{RecordsJson, write_answer_head};

/// The models of a resource, by table name, as its database's schema was last read. A new
/// reading replaces them whole: a request keeps the models it started with.
#[derive(Debug)]
pub(crate) struct Models<M> {
    current: RwLock<Arc<BTreeMap<String, Arc<M>>>>,
}

impl<M> Default for Models<M> {
    fn default() -> Self {
        Self {
            current: RwLock::new(Arc::new(BTreeMap::new())),
        }
    }
}

impl<M: Table> Models<M> {
    /// Puts a new reading of the schema in place of the last one.
    pub(crate) fn replace(&self, models: BTreeMap<String, Arc<M>>) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(models);
    }

    /// Every model, as last read.
    pub(crate) fn current(&self) -> Arc<BTreeMap<String, Arc<M>>> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// The models' names, sorted.
    pub(crate) fn names(&self) -> Vec<String> {
        self.current().keys().cloned().collect()
    }

    /// Whether there is a model of that name.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.current().contains_key(name)
    }

    /// The names of `model`'s columns, in order; `None` when there is no such model.
    pub(crate) fn field_names(&self, model: &str) -> Option<Vec<String>> {
        let models = self.current();
        let model = models.get(model)?;
        Some(
            model
                .columns()
                .iter()
                .map(|c| c.name().to_owned())
                .collect(),
        )
    }

    /// The model named `name`; the engine's `404` when there is none.
    pub(crate) fn get(&self, name: &str) -> Result<Arc<M>, EngineError> {
        self.current()
            .get(name)
            .cloned()
            .ok_or_else(|| EngineError::ModelNotFound(name.to_owned()))
    }
}

/// A row of a server's answer, read as records: each value written as its column's field
/// writes it, in the database's time zone (`tz`, a UTC offset in seconds, for date-times
/// without one).
pub(crate) trait RecordRow<C> {
    /// What tells two rows' keys apart.
    type Key: Eq + Hash;

    /// Writes the `i`th value, of `column`, as the engine's serializer writes it.
    fn write_value(&self, buf: &mut Vec<u8>, i: usize, column: &C, tz: i32);

    /// The `i`th value, as a key.
    fn key(&self, i: usize) -> Self::Key;

    /// Whether the engine's serializer cannot write the `i`th value, of `column` (it fails,
    /// `500`, on every read of the record).
    fn unreadable(&self, _i: usize, _column: &C) -> bool {
        false
    }
}

/// `Ok` when the engine can write every value of `rows`, else its failure on the first one it
/// cannot ([`EngineError::engine_fails`]: strict mode's `400` names the field).
pub(crate) fn check_readable<T, R>(model: &T, rows: &[R], lenient: bool) -> Result<(), EngineError>
where
    T: Table,
    R: RecordRow<T::Column>,
{
    for row in rows {
        for (i, column) in model.columns().iter().enumerate() {
            if row.unreadable(i, column) {
                return Err(EngineError::engine_fails(
                    lenient,
                    column.name(),
                    format!(
                        "A record of {} holds a value in field {:?} that the data engine cannot \
                         read (a date Python has no date for, such as 0000-00-00): it fails \
                         (500) on every read of that record. Correct the stored value, or \
                         filter the record out.",
                        model.table_name(),
                        column.name()
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Writes one record of `model`, `{"col": value, ...}` in column order.
pub(crate) fn write_record<T, R>(buf: &mut Vec<u8>, model: &T, row: &R, tz: i32)
where
    T: Table,
    R: RecordRow<T::Column>,
{
    buf.push(b'{');
    for (i, c) in model.columns().iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        write_json_str(buf, c.name());
        buf.push(b':');
        row.write_value(buf, i, c, tz);
    }
    buf.push(b'}');
}

/// One record of `model` as JSON bytes.
pub(crate) fn record_json<T, R>(model: &T, row: &R, tz: i32) -> Vec<u8>
where
    T: Table,
    R: RecordRow<T::Column>,
{
    let mut buf = Vec::with_capacity(64 * model.columns().len());
    write_record(&mut buf, model, row, tz);
    buf
}

/// The first of the rows that read a written record back, as JSON bytes; `404` when the write
/// left no row to read (the row went away, or its key is no longer what was read back by).
pub(crate) fn first_record<T, R>(model: &T, rows: &[R], tz: i32) -> Result<Vec<u8>, EngineError>
where
    T: Table,
    R: RecordRow<T::Column>,
{
    let row = rows.first().ok_or(EngineError::RecordNotFound)?;
    Ok(record_json(model, row, tz))
}

/// Rows as a JSON array of records of `model`.
pub(crate) fn records_json<T, R>(model: &T, rows: &[R], tz: i32) -> RecordsJson
where
    T: Table,
    R: RecordRow<T::Column>,
{
    let mut buf = Vec::with_capacity(2 + rows.len() * 64 * model.columns().len());
    buf.push(b'[');
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        write_record(&mut buf, model, row, tz);
    }
    buf.push(b']');
    RecordsJson(buf)
}

/// The rows the engine's ORM makes records of: where the key was promoted (it may repeat), the
/// first row of each key value; rows of a declared key are each a record.
pub(crate) fn one_row_per_identity<T, R>(model: &T, rows: Vec<R>) -> Vec<R>
where
    T: Table,
    R: RecordRow<T::Column>,
{
    if !model.promoted_key() {
        return rows;
    }
    let key = model.key_index();
    let mut seen = HashSet::new();
    rows.into_iter()
        .filter(|row| seen.insert(row.key(key)))
        .collect()
}

/// The body values of the model's columns: a dict's keys that name columns. A body that is not a dict is the `400` of the
/// required columns when there are any (as in the engine), else [`not_a_dict`]'s reading.
pub(crate) fn body_values<'m, T>(
    model: &'m T,
    body: &'m PyJson,
    updating: bool,
) -> Result<Vec<(&'m T::Column, &'m PyJson)>, EngineError>
where
    T: Table,
    T::Column: BodyColumn,
{
    let columns = model.columns();
    if let PyJson::Dict(_) = body {
        return Ok(columns
            .iter()
            .filter_map(|c| body.get(c.name()).map(|v| (c, v)))
            .collect());
    }
    if !columns.iter().any(BodyColumn::required) {
        let names: Vec<&str> = columns.iter().map(Column::name).collect();
        not_a_dict(body, &names, updating)?;
    }
    Ok(Vec::new())
}

/// The positions among an update's values of those the ORM may find unchanged where the
/// database's answer to a plain write would differ: generated columns (which the database
/// refuses to write) and JSON columns given `None` (which SQLAlchemy writes as JSON `null`, and
/// loads, like SQL NULL, as `None`: [`loads_none`]). The ORM writes only the attributes that
/// changed: the database says which of these hold the value given, and [`keep_changed`] leaves
/// those out; any other is written (and a generated one refused as the engine's is).
pub(crate) fn unchanged_candidates<C: BodyColumn>(values: &[(&C, Internal)]) -> Vec<usize> {
    (0..values.len())
        .filter(|&i| values[i].0.generated() || loads_none(values[i].0, &values[i].1))
        .collect()
}

/// A JSON column given `None` (`null`, or the text `"null"` its field parses): unchanged where
/// the stored value loads as `None` (SQL NULL or JSON `null`); the running engine kept a NULL
/// there on SQLite and PostgreSQL.
pub(crate) fn loads_none<C: BodyColumn>(column: &C, value: &Internal) -> bool {
    column.input() == InputField::Json
        && matches!(value, Internal::None | Internal::Json(PyJson::None))
}

/// `values` without those at `candidates` whose `unchanged` answer is true.
pub(crate) fn keep_changed<C>(
    values: &mut Vec<(&C, Internal)>,
    candidates: &[usize],
    unchanged: &[bool],
) {
    let mut at = 0;
    values.retain(|_| {
        let drop = candidates
            .iter()
            .position(|&g| g == at)
            .is_some_and(|k| unchanged.get(k) == Some(&true));
        at += 1;
        !drop
    });
}

/// Each given value through its column's serializer field, and (`complete`) every required
/// column given; every field error at once.
pub(crate) fn validate<'m, T>(
    model: &'m T,
    given: &[(&'m T::Column, &PyJson)],
    complete: bool,
) -> Result<Vec<(&'m T::Column, Internal)>, EngineError>
where
    T: Table,
    T::Column: BodyColumn,
{
    let mut missing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if complete {
        for c in model.columns().iter().filter(|c| c.required()) {
            if !given.iter().any(|(g, _)| g.name() == c.name()) {
                missing
                    .entry(c.name().to_owned())
                    .or_default()
                    .push("this field is required".to_owned());
            }
        }
    }
    read_values(given, |c| (c.name(), c.input()), missing)
}

/// A float as the engine's JSON encoder writes it: in Python's form, NaN and the infinities as
/// `null`.
pub(crate) fn float_json(f: f64) -> Json {
    if f.is_finite() {
        serde_json::from_str(&py_float_repr(f)).unwrap_or(Json::Null)
    } else {
        Json::Null
    }
}

/// A refusal of a query: `400` naming `query`.
pub(crate) fn query_error(message: impl Into<String>) -> EngineError {
    EngineError::field("query", message)
}

/// The refusal of an answer larger than `answer_bytes` of JSON.
pub(crate) fn answer_too_large(answer_bytes: usize) -> EngineError {
    query_error(format!(
        "The answer is larger than {} MiB of JSON: select fewer rows or columns (LIMIT), or \
         smaller values.",
        answer_bytes / (1024 * 1024)
    ))
}

/// The refusal of a query that ran past `time`, stopped from outside the statement.
pub(crate) fn stopped_after(time: Duration) -> EngineError {
    query_error(format!(
        "The query was stopped after {} s; make it select less.",
        time.as_secs()
    ))
}

/// The refusal of a query the server stopped at its own statement time limit.
pub(crate) fn stopped_at_limit() -> EngineError {
    query_error("The query was stopped at its time limit; make it select less.")
}

/// The rows of a query's answer, written as they are read, within the answer cap (a row is
/// never kept once the answer is over it).
pub(crate) struct AnswerRows {
    data: Vec<u8>,
    rows: usize,
    cap: usize,
}

impl AnswerRows {
    /// No rows yet, and the cap in bytes of JSON.
    pub(crate) fn new(cap: usize) -> Self {
        AnswerRows {
            data: Vec::with_capacity(1024),
            rows: 0,
            cap,
        }
    }

    /// Writes one row of `cells` values, the `i`th by `write(buf, i)`; the refusal of an answer
    /// over the cap, once it is.
    pub(crate) fn push(
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
    pub(crate) fn answer(mut self, names: &[String]) -> Vec<u8> {
        if self.rows == 0 {
            self.data.push(b'[');
        }
        self.data.push(b']');
        sql_answer(names, &self.data, self.rows)
    }
}

/// The answer of a query, `{"columns": [...], "data": [...], "row_count": n}`, from its column
/// names and its rows already written as a JSON array.
pub(crate) fn sql_answer(names: &[String], data: &[u8], rows: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 64);
    write_answer_head(&mut out, names);
    out.extend_from_slice(data);
    out.extend_from_slice(b",\"row_count\":");
    write_i64(&mut out, i64::try_from(rows).unwrap_or(i64::MAX));
    out.push(b'}');
    out
}

/// Replaces each `:name` of a read-only query by a parameter bound to `params[name]`: `bind`
/// makes the value, `placeholder` the text of the `n`th parameter (from 1). `skip` knows the
/// database's text: given a position, the end of what starts there and holds no parameter (a
/// string, a quoted name, a comment, an operator with a `:` in it), `Err` for what the emulator
/// refuses (a positional parameter), `None` elsewhere. A scanner that misjudged where a string
/// ends could only put a placeholder inside a string (text, not a parameter) or leave a `:name`
/// as it is: the statement then fails in the database, and no value is ever part of its text.
pub(crate) fn bind_names<V>(
    query: &str,
    params: &Map<String, Json>,
    skip: impl Fn(&[u8], usize) -> Option<Result<usize, EngineError>>,
    mut bind: impl FnMut(&Json) -> V,
    placeholder: impl Fn(usize) -> String,
) -> Result<(String, Vec<V>), EngineError> {
    let mut out = String::with_capacity(query.len() + 16);
    let mut bound = Vec::new();
    let mut copied = 0;
    scan_names(query, skip, |at, end, name| {
        let value = params.get(name).ok_or_else(|| {
            EngineError::field(
                "params_obj",
                format!("No value for the parameter :{name}: add it to params_obj."),
            )
        })?;
        bound.push(bind(value));
        out.push_str(&query[copied..at]);
        out.push_str(&placeholder(bound.len()));
        copied = end;
        Ok(())
    })?;
    out.push_str(&query[copied..]);
    Ok((out, bound))
}

/// The names of the `:name` parameters of `statements`, each once, read as [`bind_names`]
/// reads them (`skip` knows the database's text): the inputs an action takes.
pub(crate) fn parameter_names(
    statements: &[String],
    skip: impl Fn(&[u8], usize) -> Option<Result<usize, EngineError>> + Copy,
) -> Result<BTreeSet<String>, EngineError> {
    let mut names = BTreeSet::new();
    for statement in statements {
        scan_names(statement, skip, |_, _, name| {
            names.insert(name.to_owned());
            Ok(())
        })?;
    }
    Ok(names)
}

/// Calls `found(at, end, name)` for each `:name` of `query` outside what `skip` skips, `at`
/// being the position of its `:` and `end` the one after its name.
fn scan_names(
    query: &str,
    skip: impl Fn(&[u8], usize) -> Option<Result<usize, EngineError>>,
    mut found: impl FnMut(usize, usize, &str) -> Result<(), EngineError>,
) -> Result<(), EngineError> {
    let b = query.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if let Some(end) = skip(b, i) {
            i = end?;
            continue;
        }
        if b[i] != b':' || !b.get(i + 1).is_some_and(|c| starts_name(*c)) {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < b.len() && (b[end].is_ascii_alphanumeric() || b[end] == b'_') {
            end += 1;
        }
        found(i, end, &query[start..end])?;
        i = end;
    }
    Ok(())
}

/// Whether `c` may start a parameter's name (after its `:`).
pub(crate) fn starts_name(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

/// The end of a quoted string or name starting at `at`: a doubled quote stays inside, and
/// (`backslashes`) a backslash escapes the next character.
pub(crate) fn skip_quoted(b: &[u8], at: usize, quote: u8, backslashes: bool) -> usize {
    let mut i = at + 1;
    while i < b.len() {
        if backslashes && b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == quote {
            if b.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// The end of the block comment (`/* ... */`, not nested) starting at `at`, past its `*/`, or
/// of the text.
pub(crate) fn block_comment_end(b: &[u8], at: usize) -> usize {
    b[at + 2..]
        .windows(2)
        .position(|w| w == b"*/")
        .map_or(b.len(), |p| at + 2 + p + 2)
}

/// The end of the line `at` is on (past its newline), or of the text.
pub(crate) fn line_end(b: &[u8], at: usize) -> usize {
    b[at..]
        .iter()
        .position(|&c| c == b'\n')
        .map_or(b.len(), |p| at + p + 1)
}

/// Bytes as the engine's read-only query answer writes them: decoded as UTF-8, or in
/// lowercase hex (`bytes.hex()`) when they are not UTF-8.
pub(crate) fn write_encoder_bytes(buf: &mut Vec<u8>, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => write_json_str(buf, text),
        Err(_) => write_json_str(buf, &hexlify(bytes)),
    }
}

/// Python's `isoformat()` of a UTC offset: `+HH:MM`, with `:SS` when there are seconds.
pub(crate) fn offset_text(seconds: i32) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let s = seconds.unsigned_abs();
    let (h, m, sec) = (s / 3600, s / 60 % 60, s % 60);
    if sec == 0 {
        format!("{sign}{h:02}:{m:02}")
    } else {
        format!("{sign}{h:02}:{m:02}:{sec:02}")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::engine::table::tests::{Tab, table};

    #[test]
    fn names_become_placeholders_outside_what_the_database_skips() {
        let params = serde_json::json!({"a": 1, "b_2": "x"});
        let params = params.as_object().unwrap();
        // A toy dialect: '...' strings, `::` casts, and `$` refused.
        let skip = |b: &[u8], i: usize| match b[i] {
            b'\'' => Some(Ok(skip_quoted(b, i, b'\'', false))),
            b':' if b.get(i + 1) == Some(&b':') => Some(Ok(i + 2)),
            b'$' => Some(Err(EngineError::field("query", "no $"))),
            _ => None,
        };
        let bound = |q: &str| bind_names(q, params, skip, Json::clone, |n| format!("?{n}"));
        let (text, values) =
            bound("SELECT :a, ':a', :b_2, :a::int, a:b_2, :1, 'it''s :a'").unwrap();
        assert_eq!(text, "SELECT ?1, ':a', ?2, ?3::int, a?4, :1, 'it''s :a'");
        assert_eq!(values, [json!(1), json!("x"), json!(1), json!("x")]);
        let missing = bound("SELECT :c").unwrap_err().to_string();
        assert!(
            missing.contains("No value for the parameter :c"),
            "{missing}"
        );
        assert!(bound("SELECT $1").is_err());
        // An unterminated string runs to the end: nothing after it is bound.
        assert_eq!(bound("x ':a").unwrap(), ("x ':a".to_owned(), Vec::new()));
    }

    #[test]
    fn offsets_are_written_as_python_writes_them() {
        assert_eq!(offset_text(0), "+00:00");
        assert_eq!(offset_text(-10_800), "-03:00");
        assert_eq!(offset_text(3208), "+00:53:28");
    }

    #[test]
    fn models_are_replaced_whole_and_a_missing_one_is_a_404() {
        let models = Models::<Tab>::default();
        assert!(models.names().is_empty());
        assert!(matches!(models.get("t"), Err(EngineError::ModelNotFound(n)) if n == "t"));
        let held = {
            models.replace(BTreeMap::from([("t".to_owned(), Arc::new(table()))]));
            models.get("t").unwrap()
        };
        assert_eq!(models.names(), ["t"]);
        assert!(models.contains("t") && !models.contains("u"));
        assert_eq!(models.field_names("t").unwrap(), ["a", "id", "b"]);
        assert_eq!(models.field_names("u"), None);
        models.replace(BTreeMap::new());
        assert!(!models.contains("t"));
        // A request that got the model before keeps it.
        assert_eq!(held.columns().len(), 3);
    }

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
