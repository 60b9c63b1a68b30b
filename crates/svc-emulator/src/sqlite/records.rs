//! SQLite's reads of records (`flow::records::Pages`, run by `flow::read`): each row lent by
//! rusqlite to the records it makes (no row is copied), a list's pages from the memo's anchors
//! (`sqlite::pages`), its count, and the budget of a read run on an async worker
//! (`sqlite::handoff`).

use rusqlite::params_from_iter;
use rusqlite::types::{Value, ValueRef};

use crate::engine::error::EngineError;
use crate::engine::records::RecordRow;
use crate::engine::types::{PyValue, Stored, read};
use crate::flow::driver::Failure;
use crate::flow::records::{Database, Rows};
use crate::sqlite::flows::Sqlite;
use crate::sqlite::model::{Field, Model};
use crate::sqlite::schema::prepare;
use crate::sqlite::values::write_field_value;

/// SQLite's rows: each lent by the driver as it is stepped to.
impl<'c> Rows for Sqlite<'c> {
    type RowRef<'r> = rusqlite::Row<'r>;

    async fn each_row<S: FnMut(&rusqlite::Row<'_>) + Send>(
        &self,
        conn: &mut &'c mut rusqlite::Connection,
        sql: &str,
        params: &Vec<Value>,
        lenient: bool,
        sink: &mut S,
    ) -> Result<(), EngineError> {
        let mut read = || -> rusqlite::Result<()> {
            let mut stmt = prepare(conn, sql)?;
            let mut rows = stmt.query(params_from_iter(params.iter()))?;
            while let Some(row) = rows.next()? {
                sink(row);
            }
            Ok(())
        };
        read().map_err(|e| self.fault(e, Failure::Read { lenient }))
    }
}

/// A record with a value the engine cannot read: it fails (500) on every read of the record
/// ([decision: stricter]: strict mode refuses with a `400` naming the field).
pub(crate) fn unreadable(model: &Model, at: usize, lenient: bool) -> EngineError {
    let f = &model.fields[at];
    EngineError::engine_fails(
        lenient,
        &f.name,
        format!(
            "A record of {} holds a value in field {:?} that does not fit its declared type \
             {:?}: the data engine fails (500) on every read of that record. Correct the \
             stored value, or filter the record out.",
            model.name, f.name, f.declared_type
        ),
    )
}

/// A row as SQLite lends it: each value as stored.
impl RecordRow<Field> for rusqlite::Row<'_> {
    #[inline]
    fn write_value(&self, buf: &mut Vec<u8>, i: usize, column: &Field, _tz: i32) -> bool {
        let stored = match self.get_ref(i) {
            Ok(v) => Stored::from(v),
            Err(_) => Stored::Null,
        };
        write_field_value(buf, column, stored)
    }

    fn key(&self, i: usize, column: &Field) -> Option<Vec<u8>> {
        match self.get_ref(i).unwrap_or(ValueRef::Null) {
            ValueRef::Null => None,
            v => Some(identity_key(column, v)),
        }
    }
}

/// A row read whole (a record read back after a write): each value as stored.
impl RecordRow<Field> for [Value] {
    fn write_value(&self, buf: &mut Vec<u8>, i: usize, column: &Field, _tz: i32) -> bool {
        let stored = self
            .get(i)
            .map_or(Stored::from(ValueRef::Null), Stored::from);
        write_field_value(buf, column, stored)
    }
}

/// One part of a record's identity, the value `v` of key column `field`, as Python compares
/// it: numbers by value whatever their storage class (`1 == 1.0 == True`), text and bytes by
/// content (never equal to each other), dates and decimals by their value's text.
fn identity_key(field: &Field, v: ValueRef<'_>) -> Vec<u8> {
    let number = |f: f64| -> Vec<u8> {
        if f.fract() == 0.0 && f.abs() < 9.2e18 {
            let mut k = vec![b'i'];
            k.extend_from_slice(&(f as i64).to_le_bytes());
            k
        } else {
            let mut k = vec![b'f'];
            k.extend_from_slice(&f.to_bits().to_le_bytes());
            k
        }
    };
    match read(field.ty, v.into()) {
        PyValue::None => vec![b'n'],
        PyValue::Bool(b) => number(if b { 1.0 } else { 0.0 }),
        PyValue::Int(i) => {
            let mut k = vec![b'i'];
            k.extend_from_slice(&i.to_le_bytes());
            k
        }
        PyValue::Float(f) | PyValue::Decimal(_, f) => number(f),
        PyValue::Str(t) => [b"s", t].concat(),
        PyValue::Bytes(b) => [b"b", b].concat(),
        PyValue::Date(d) => [b"d", d.iso().as_bytes()].concat(),
        PyValue::DateTime(d, t) => [b"t", d.iso().as_bytes(), t.iso().as_bytes()].concat(),
        PyValue::Time(t) => [b"h", t.iso().as_bytes()].concat(),
        PyValue::Unreadable(raw) => {
            let mut k = vec![b'u'];
            k.extend_from_slice(format!("{raw:?}").as_bytes());
            k
        }
    }
}
