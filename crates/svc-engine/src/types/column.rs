//! Reflection: the SQLAlchemy type a column reflects as ([`Reflected`]), and what the engine
//! picks from it: its serializer, filter family, search and how its values are written.

/// A column's type as SQLAlchemy 1.4 reflects it. The names below are SQLite's declared types
/// (`svc-emulator-sqlite/src/types.rs` maps them); each other backend maps its own types onto these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reflected {
    /// `INTEGER`, `INT`, `BIGINT`, `SMALLINT`, or any name containing `INT`.
    Integer,
    /// `FLOAT` and `DOUBLE` (SQLAlchemy's `FLOAT`), `REAL`, and names containing `REAL`,
    /// `FLOA` or `DOUB`. Read as Python floats. (A `NUMERIC` whose fourth argument, `asdecimal`,
    /// is 0 is read so too.)
    Float,
    /// `NUMERIC`, `DECIMAL` and any name no other rule takes (`UUID`, `MONEY`, ...): read as a
    /// `Decimal` rounded to `scale` places. So is a float type called with a true `asdecimal`,
    /// its second argument (`FLOAT(5, 2)`, `REAL(5, 2)`), to its third argument's places.
    Numeric {
        /// The declared scale (`NUMERIC(10, 2)`), 10 when none is declared.
        scale: u8,
    },
    /// `BOOL` and `BOOLEAN`.
    Boolean,
    /// `DATE`: stored as `YYYY-MM-DD` text.
    Date,
    /// `DATETIME` and `TIMESTAMP`: stored as `YYYY-MM-DD HH:MM:SS[.ffffff]` text.
    DateTime,
    /// `TIME`.
    Time,
    /// `VARCHAR`, `CHAR`, `NCHAR`, `NVARCHAR`, `TEXT` and names containing `CHAR`, `CLOB` or
    /// `TEXT`.
    String,
    /// `JSON`.
    Json,
    /// `BLOB`.
    Blob,
    /// No declared type, or a name containing `BLOB` other than `BLOB` itself.
    Untyped,
}

/// How the engine's serializer writes a column's values in records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Serializer {
    /// Integer, float and boolean fields: the Python value as the JSON encoder writes it.
    Value,
    /// Date-time fields: `isoformat()`.
    DateTime,
    /// Every other column: `str()` of the Python value, as a JSON string.
    Text,
}

/// The engine's filter family of a column: which lookups it has and how values are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FilterFamily {
    /// Integer and numeric columns: `exact gt gte lt lte icontains in isnull isempty`, values
    /// read as Python floats.
    Number,
    /// `DATE` columns: the date-time lookups, values compared as `YYYY-MM-DD` text.
    Date,
    /// `DATETIME`/`TIMESTAMP` columns: the date-time lookups, values bound in the stored form.
    DateTime,
    /// Booleans: `exact in isnull isempty`.
    Boolean,
    /// Everything else: `exact icontains in istartswith iendswith isnull isempty`, as text.
    Text,
    /// JSON columns (and arrays on PostgreSQL): `exact in json_icontains isnull isempty`.
    /// PostgreSQL matches `exact` and `in` by containment; SQLite matches all three as a
    /// case-insensitive substring of the stored text.
    Json,
}

/// How `_search` looks at a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Search {
    /// Integer and numeric columns: their text equals the search text.
    Equal,
    /// Text columns: their text contains the search text (SQLite: `LIKE`, ASCII case folding;
    /// PostgreSQL: `ILIKE` on text, enum and JSON columns, folding as the database's locale does).
    Contains,
    /// Not searched (dates, booleans, untyped and binary columns).
    Skip,
}

impl Search {
    /// How `_search` looks at a column of `family` that SQLAlchemy types as a `String` or as
    /// JSON (`text_like`), or neither: a number column's text equals the text, a text-like
    /// column's holds it, the others are skipped.
    pub fn of(family: FilterFamily, text_like: bool) -> Self {
        match family {
            FilterFamily::Number => Search::Equal,
            _ if text_like => Search::Contains,
            _ => Search::Skip,
        }
    }
}

/// Everything the engine derives from a column's declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ColumnType {
    /// The reflected type.
    pub reflected: Reflected,
    /// How records write its values.
    pub serializer: Serializer,
    /// Its filter family.
    pub filter: FilterFamily,
    /// How `_search` treats it.
    pub search: Search,
}

/// How records write a column's values: the engine's reading and serializer of its type,
/// decided once per column so that a page's values are not sorted out again one by one. Each
/// writer writes the common stored forms directly and leaves the rest to the general path
/// through the engine's Python value (the same bytes: the tests compare the two).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueWriter {
    /// Read as stored (`sqlite3`'s own values), written as the JSON encoder writes them.
    Plain,
    /// Read as stored, written as `str()` of the value.
    PlainText,
    /// A boolean written as the JSON encoder writes it.
    Bool,
    /// A date, written in ISO form.
    Date,
    /// A date-time: `isoformat()` (with `T`) or, as text, `str()` (with a space).
    DateTime {
        /// `isoformat()`, not `str()`.
        iso: bool,
    },
    /// Every value through the engine's Python value.
    Python,
}

impl ColumnType {
    /// How records write this type's values.
    pub fn value_writer(self) -> ValueWriter {
        let text = self.serializer == Serializer::Text;
        match self.reflected {
            Reflected::Integer
            | Reflected::Float
            | Reflected::String
            | Reflected::Json
            | Reflected::Untyped => {
                if text {
                    ValueWriter::PlainText
                } else {
                    ValueWriter::Plain
                }
            }
            Reflected::Boolean if !text => ValueWriter::Bool,
            Reflected::Date => ValueWriter::Date,
            Reflected::DateTime => ValueWriter::DateTime { iso: !text },
            _ => ValueWriter::Python,
        }
    }

    /// Whether the column is a SQLAlchemy `String` (`isempty` also matches `''` there).
    pub fn is_string(self) -> bool {
        self.reflected == Reflected::String
    }

    /// Whether values are read back as Python floats (`REAL`, `FLOAT`, ...).
    pub fn is_float(self) -> bool {
        self.reflected == Reflected::Float
    }
}
