//! A table's rows as records: the models as last read ([`Models`]), a driver's row as the
//! engine reads it ([`RecordRow`]), one row per identity, and the records written as the
//! serializer writes them.

use std::collections::{BTreeMap, HashSet};
use std::hash::Hash;
use std::sync::{Arc, RwLock};

use crate::engine::EngineError;
use crate::engine::RecordsJson;
use crate::engine::json_text::write_json_str;
use crate::engine::table::{Column, Table};

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

#[cfg(test)]
mod tests {
    use crate::engine::table::tests::{Tab, table};

    use super::*;

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
}
