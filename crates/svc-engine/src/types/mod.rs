//! How the data engine types a column, and how it writes the values it reads.
//!
//! The platform's data engine (PyPI `jet-bridge`) reflects a table with SQLAlchemy 1.4 and
//! then picks, from the reflected type, a serializer field (how a record's value is written), a
//! filter family (which lookups exist and how their values are read) and whether `_search`
//! looks at the column. The emulator answers like the engine, so it reproduces those steps
//! exactly:
//!
//! 1. **Reflection** ([`Reflected`]): the SQLAlchemy type a column reflects as. How a
//!    database's declared types map onto it is that database's dialect (SQLite's:
//!    [`ColumnType::from_declared`], in `declared.rs`).
//! 2. **Reading** ([`PyValue`]): SQLAlchemy's result processors turn the stored value into a
//!    Python value: `NUMERIC`/`DECIMAL` into a `Decimal` with the column's scale (10 when it has
//!    none), `DATE` and `DATETIME` text into dates and date-times, booleans by truthiness.
//! 3. **Writing** ([`Serializer`]): the engine matches `str(type)` against its own table. Only
//!    `INTEGER`/`SMALLINT`/`BIGINT`, `BOOLEAN`, `FLOAT` and a bare `DECIMAL` are written as
//!    JSON numbers and booleans; `DATETIME` and `TIMESTAMP` as ISO 8601 (`T`, microseconds
//!    only when not zero); **everything else as text**: `str()` of the Python value. So a
//!    `REAL` column answers `"57.0"` and a `NUMERIC` one `"88378.0000000000"`.
//!
//! Group rows skip step 3: they go straight to the engine's JSON encoder
//! ([`write_encoded`]), which writes `Decimal` as a float and dates in ISO form.

mod column;
mod dates;
mod declared;
mod model;
mod stored;
#[cfg(test)]
mod tests;
mod writers;

pub use crate::python::floats::{py_float_repr, write_py_float_repr};
pub use crate::python::text::{py_bytes_repr, py_str};
pub use column::{ColumnType, FilterFamily, Reflected, Search, Serializer, ValueWriter};
pub use dates::{Date, Time, parse_date, parse_datetime, parse_time};
pub use model::{FieldInfo, ModelInfo};
pub use stored::{PyValue, Stored, decimal_str, plain, read};
pub use writers::write_with;
pub use writers::{write_encoded, write_field, write_float};
