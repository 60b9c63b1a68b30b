//! A table's rows as records: the models as last read ([`Models`]), a driver's row as the
//! engine reads it ([`RecordRow`]), one row per identity, and the records written as the
//! serializer writes them.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use crate::EngineError;
use crate::RecordsJson;
use crate::json_text::write_json_str;
use crate::table::{Column, Table};

/// The mark of one resource, unique in the process: a copy of its data (`flow::snapshot`,
/// `svc-emulator-sqlite/src/lib.rs`) is put back only by the resource that saved it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin(u64);

impl Origin {
    /// A mark no other resource of the process has (each call a new one, so no `Default`).
    pub fn unique() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Origin(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// Models by name, as a reflection reads them ([`Models::replace`]).
pub type ModelMap<M> = BTreeMap<String, Arc<M>>;

/// The models of a resource, by table name, as its database's schema was last read. A new
/// reading replaces them whole: a request keeps the models it started with.
#[derive(Debug)]
pub struct Models<M> {
    current: RwLock<Arc<BTreeMap<String, Arc<M>>>>,
    /// The resource's mark, whatever its schema's readings.
    origin: Origin,
}

impl<M> Default for Models<M> {
    fn default() -> Self {
        Self {
            current: RwLock::new(Arc::new(BTreeMap::new())),
            origin: Origin::unique(),
        }
    }
}

impl<M> Models<M> {
    /// The mark of the resource these are the models of.
    pub fn origin(&self) -> Origin {
        self.origin
    }
}

impl<M: Table> Models<M> {
    /// Puts a new reading of the schema in place of the last one.
    pub fn replace(&self, models: ModelMap<M>) {
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(models);
    }

    /// Every model, as last read.
    pub fn current(&self) -> Arc<BTreeMap<String, Arc<M>>> {
        Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// The models' names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.current().keys().cloned().collect()
    }

    /// Whether there is a model of that name.
    pub fn contains(&self, name: &str) -> bool {
        self.current().contains_key(name)
    }

    /// The model named `name`; the engine's `404` when there is none.
    pub fn get(&self, name: &str) -> Result<Arc<M>, EngineError> {
        self.current()
            .get(name)
            .cloned()
            .ok_or_else(|| EngineError::ModelNotFound(name.to_owned()))
    }
}

/// A row of a database's answer, read as records: each value written as its column's field
/// writes it, in the database's time zone (`tz`, a UTC offset in seconds, for date-times
/// without one). A row may be borrowed from the driver (SQLite's): nothing is copied out of it
/// but what a record shows.
pub trait RecordRow<C> {
    /// Writes the `i`th value, of `column`, as the engine's serializer writes it; `false` when
    /// the serializer cannot write it (the engine fails, `500`, on every read of the record),
    /// and what is written then is the stored value.
    fn write_value(&self, buf: &mut Vec<u8>, i: usize, column: &C, tz: i32) -> bool;

    /// The `i`th value, of `column`, as the ORM's identity map compares it (`None` for
    /// `None`): two values are the same identity when their bytes are equal. By default, the
    /// value as the serializer writes it, which tells Python's values apart as `==` does for
    /// the values one column holds.
    fn key(&self, i: usize, column: &C) -> Option<Vec<u8>> {
        let mut written = Vec::new();
        self.write_value(&mut written, i, column, 0);
        (written != b"null").then_some(written)
    }

    /// Writes the record `{"col": value, ...}`, each key as `keys` writes it; the index of the
    /// first column whose value the serializer cannot write, if any.
    #[inline]
    fn write_record(
        &self,
        buf: &mut Vec<u8>,
        keys: &RecordKeys,
        columns: &[C],
        tz: i32,
    ) -> Option<usize> {
        let start = buf.len();
        // The first unreadable column, `usize::MAX` for none: one register in the loop where an
        // `Option` takes two (the loop runs once per value: 300 times a page of 25 records).
        let mut unreadable = usize::MAX;
        for (i, (key, column)) in keys.0.iter().zip(columns).enumerate() {
            key.write(buf);
            if !self.write_value(buf, i, column, tz) {
                unreadable = unreadable.min(i);
            }
        }
        // Each key came after a `,`: the first one's is the object's `{`.
        match buf.get_mut(start) {
            Some(first) => *first = b'{',
            None => buf.push(b'{'),
        }
        buf.push(b'}');
        (unreadable != usize::MAX).then_some(unreadable)
    }
}

/// A column's part of a record before its value: `,`, the name as a JSON string, then `:` (the
/// record's first `,` becomes its `{`). Written once per value of every record (300 times a page
/// of 25 records of 12 fields): a key of up to 16 bytes is also kept zero-padded to 16, and
/// written as one 16-byte copy cut back to its length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordKey {
    bytes: Box<[u8]>,
    /// The bytes, zero-padded (all zeros when there are more than 16).
    padded: [u8; 16],
}

impl RecordKey {
    /// The key of the column `name`.
    pub fn of(name: &str) -> Self {
        let mut bytes = vec![b','];
        write_json_str(&mut bytes, name);
        bytes.push(b':');
        let mut padded = [0; 16];
        if let Some(head) = padded.get_mut(..bytes.len()) {
            head.copy_from_slice(&bytes);
        }
        RecordKey {
            bytes: bytes.into_boxed_slice(),
            padded,
        }
    }

    /// Appends the key to `buf`.
    #[inline(always)]
    pub fn write(&self, buf: &mut Vec<u8>) {
        let n = self.bytes.len();
        if n <= self.padded.len() {
            let at = buf.len();
            buf.extend_from_slice(&self.padded);
            buf.truncate(at + n);
        } else {
            buf.extend_from_slice(&self.bytes);
        }
    }
}

/// The keys of a model's records, in column order: made once, when the model is read
/// ([`Table::record_keys`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordKeys(Vec<RecordKey>);

impl RecordKeys {
    /// The keys of columns named `names`, in that order.
    pub fn of<'n>(names: impl IntoIterator<Item = &'n str>) -> Self {
        RecordKeys(names.into_iter().map(RecordKey::of).collect())
    }

    /// The keys, in column order.
    pub fn keys(&self) -> &[RecordKey] {
        &self.0
    }
}

/// One record of `model` as JSON bytes (a value the serializer cannot write is written as
/// stored: see [`Records`] for a read that fails on it).
pub fn record_json<T, R>(model: &T, row: &R, tz: i32) -> Vec<u8>
where
    T: Table,
    R: RecordRow<T::Column> + ?Sized,
{
    let mut buf = Vec::with_capacity(64 * model.columns().len());
    row.write_record(&mut buf, model.record_keys(), model.columns(), tz);
    buf
}

/// The first of the rows that read a written record back, as JSON bytes; `404` when the write
/// left no row to read (the row went away, or its key is no longer what was read back by).
pub fn first_record<T, R>(model: &T, rows: &[R], tz: i32) -> Result<Vec<u8>, EngineError>
where
    T: Table,
    R: RecordRow<T::Column>,
{
    let row = rows.first().ok_or(EngineError::RecordNotFound)?;
    Ok(record_json(model, row, tz))
}

/// A row's identity: its key columns' values as the driver reads them (`None` for NULL).
type Identity = Vec<Option<Vec<u8>>>;

/// The records of a read, written as its rows arrive (a page, a whole list, a retrieve), as
/// the engine's ORM makes records of rows and its serializer writes them:
///
/// - **One record per identity.** Where rows may share an identity (a promoted key that
///   repeats; on SQLite a composite key with NULLs), the first row read of each is the record
///   (SQLAlchemy's identity map) and the others are dropped; a row whose identity is all NULL
///   is no instance to the ORM (`None`), which the serializer writes as `{}`.
/// - **Unreadable values.** A value the serializer cannot write fails the whole read (`500`):
///   the first such column is kept ([`unreadable`](Self::unreadable)), and the caller answers it.
#[derive(Debug)]
pub struct Records<'m, T: Table> {
    model: &'m T,
    tz: i32,
    buf: Vec<u8>,
    /// Records written.
    len: u64,
    /// Rows read (records, and rows that were the same record).
    rows: u64,
    /// The identities seen, where rows may share one, each with where its record is in `buf`.
    seen: Option<HashMap<Identity, (usize, usize)>>,
    /// A dropped row of a record shown had other values than the record: which of them the
    /// engine shows is the first the database reads.
    ambiguous: bool,
    /// Whether a value the serializer cannot write fails the read (else it is shown as stored).
    checks: bool,
    /// The first column the serializer could not write, of the first row that had one.
    unreadable: Option<usize>,
}

impl<'m, T: Table> Records<'m, T> {
    /// No records yet, of `model`, written in the time zone `tz`; `checks`: a value the
    /// serializer cannot write fails the read.
    pub fn new(model: &'m T, tz: i32, checks: bool) -> Self {
        let mut buf = Vec::with_capacity(4096);
        buf.push(b'[');
        Records {
            model,
            tz,
            buf,
            len: 0,
            rows: 0,
            seen: (!model.identity_unique()).then(HashMap::new),
            ambiguous: false,
            checks,
            unreadable: None,
        }
    }

    /// No records yet, as [`new`](Self::new), but every row is written, also a row that the
    /// engine's ORM would show as the record of an earlier row with its identity (a key the
    /// rows share): what an export writes, so that an import gives back every row.
    pub fn every_row(model: &'m T, tz: i32, checks: bool) -> Self {
        Self {
            seen: None,
            ..Self::new(model, tz, checks)
        }
    }

    /// Writes `row`'s record, unless an earlier row was the same record.
    #[inline]
    pub fn push<R: RecordRow<T::Column> + ?Sized>(&mut self, row: &R) {
        self.rows += 1;
        let columns = self.model.columns();
        // The identity of a record first seen here, kept with where it is written.
        let mut first = None;
        if let Some(seen) = &mut self.seen {
            let identity: Identity = self
                .model
                .identity()
                .iter()
                .map(|&i| row.key(i, &columns[i]))
                .collect();
            let none = identity.iter().all(Option::is_none);
            if let Some(&(start, end)) = seen.get(&identity) {
                // The record is shown already: this row is dropped. Another row's values make
                // the engine's choice the database's reading order.
                if !self.ambiguous && !none {
                    let mut other = Vec::with_capacity(end - start);
                    row.write_record(&mut other, self.model.record_keys(), columns, self.tz);
                    self.ambiguous = other != self.buf[start..end];
                }
                return;
            }
            if none {
                seen.insert(identity, (0, 0));
                self.separate();
                self.buf.extend_from_slice(b"{}");
                return;
            }
            first = Some(identity);
        }
        self.separate();
        let start = self.buf.len();
        let unreadable =
            row.write_record(&mut self.buf, self.model.record_keys(), columns, self.tz);
        if self.checks && self.unreadable.is_none() {
            self.unreadable = unreadable;
        }
        if let (Some(identity), Some(seen)) = (first, &mut self.seen) {
            seen.insert(identity, (start, self.buf.len()));
        }
    }

    /// Whether a row dropped for sharing a record's identity had other values than the record
    /// shown: the engine shows whichever of them the database reads first.
    pub fn ambiguous(&self) -> bool {
        self.ambiguous
    }

    /// A `,` before every record but the first.
    fn separate(&mut self) {
        if self.len > 0 {
            self.buf.push(b',');
        }
        self.len += 1;
    }

    /// The records written.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no record was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rows read.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Forgets every row read: the read starts again.
    pub fn clear(&mut self) {
        self.buf.truncate(1);
        self.len = 0;
        self.rows = 0;
        if let Some(seen) = &mut self.seen {
            seen.clear();
        }
        self.ambiguous = false;
        self.unreadable = None;
    }

    /// The first column (of the first row) whose value the serializer could not write.
    pub fn unreadable(&self) -> Option<usize> {
        self.unreadable
    }

    /// The records as a JSON array.
    pub fn into_json(mut self) -> RecordsJson {
        self.buf.push(b']');
        RecordsJson(self.buf)
    }

    /// The one record read (a retrieve), as JSON bytes; `404` when none was.
    pub fn into_record(self) -> Result<Vec<u8>, EngineError> {
        if self.len == 0 {
            return Err(EngineError::RecordNotFound);
        }
        let mut buf = self.buf;
        buf.remove(0);
        Ok(buf)
    }
}

/// The failure of a read whose record holds a value, of column `at`, that the engine's
/// serializer cannot write (a date Python has no date for, such as 0000-00-00): it fails
/// (`500`) on every read of that record ([`EngineError::engine_fails`]: strict mode's `400`
/// names the field).
pub fn unreadable<T: Table>(model: &T, at: usize, lenient: bool) -> EngineError {
    let column = &model.columns()[at];
    EngineError::engine_fails(
        lenient,
        column.name(),
        format!(
            "A record of {} holds a value in field {:?} that the data engine cannot read (a \
             date Python has no date for, such as 0000-00-00): it fails (500) on every read of \
             that record. Correct the stored value, or filter the record out.",
            model.table_name(),
            column.name()
        ),
    )
}

#[cfg(test)]
mod tests {
    use crate::testing::{Tab, table};

    use super::*;

    #[test]
    fn record_keys_write_comma_name_colon_at_every_length() {
        for name in (0..40)
            .map(|n| "k".repeat(n))
            .chain(["é", "a\"b", "tab\there", "名前", "\u{1}", "a/b", "\u{7f}"].map(str::to_owned))
        {
            let mut want = b"[1,2]".to_vec();
            want.push(b',');
            want.extend_from_slice(serde_json::to_string(&name).unwrap().as_bytes());
            want.push(b':');
            let mut buf = b"[1,2]".to_vec();
            RecordKey::of(&name).write(&mut buf);
            assert_eq!(buf, want, "{name:?}");
        }
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
        let described = crate::table::describe(&*models.get("t").unwrap());
        let names: Vec<&str> = described.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            (names, described.key.as_str()),
            (vec!["a", "id", "b"], "id")
        );
        models.replace(BTreeMap::new());
        assert!(!models.contains("t"));
        // A request that got the model before keeps it.
        assert_eq!(held.columns().len(), 3);
    }
}
