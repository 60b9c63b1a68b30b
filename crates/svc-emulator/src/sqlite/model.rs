//! A SQLite database's models: tables become models, columns become fields, as the data
//! engine's SQLAlchemy automap maps them (read by `sqlite/schema.rs`).
//!
//! Identifiers found by the reflection are the only ones ever written into SQL, always
//! through `dialect::quote_ident`.

use std::collections::BTreeMap;
use std::sync::Arc;

#[cfg(doc)]
use crate::dialect::quote_ident;
use crate::engine::field_input::InputField;
use crate::engine::records::RecordKeys;
use crate::engine::table::{BodyColumn, Column, table_of_fields};
use crate::engine::types::{ColumnType, FilterFamily, Reflected, ValueWriter};
use crate::flow::records::ModelSql;

/// What kind of value a field holds, from its declared SQL type.
///
/// The declared type is matched by name first (`BOOL*`, `DATETIME`/`TIMESTAMP`, `DATE`), then
/// by SQLite's column affinity rules: contains `INT` -> [`Integer`](Self::Integer); `CHAR`, `CLOB`,
/// `TEXT` -> [`Text`](Self::Text); `BLOB` -> [`Blob`](Self::Blob); no declared type ->
/// [`Any`](Self::Any); `REAL`, `FLOA`, `DOUB`, `NUMERIC`, `DECIMAL`, `NUMBER` -> [`Real`](Self::Real);
/// any other name (`UUID`, `JSON`, `TIME`, ...) -> [`Text`](Self::Text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldKind {
    /// Whole numbers.
    Integer,
    /// Floating point and decimal numbers.
    Real,
    /// Text.
    Text,
    /// Booleans, stored as `1`/`0`, written as `true`/`false`.
    Bool,
    /// Dates stored as `YYYY-MM-DD` text.
    Date,
    /// Date-times stored as ISO 8601 text.
    DateTime,
    /// Binary data, written as base64 text.
    Blob,
    /// No declared type: any value.
    Any,
}

impl FieldKind {
    /// The kind of a declared SQL type (see the type's documentation for the rules).
    pub fn from_declared(declared: &str) -> Self {
        let t = declared.to_ascii_uppercase();
        let t = t.trim();
        if t.is_empty() {
            Self::Any
        } else if t.starts_with("BOOL") {
            Self::Bool
        } else if t.starts_with("DATETIME") || t.starts_with("TIMESTAMP") {
            Self::DateTime
        } else if t.starts_with("DATE") {
            Self::Date
        } else if t.contains("INT") {
            Self::Integer
        } else if t.contains("CHAR") || t.contains("CLOB") || t.contains("TEXT") {
            Self::Text
        } else if t.contains("BLOB") {
            Self::Blob
        } else if ["REAL", "FLOA", "DOUB", "NUMERIC", "DECIMAL", "NUMBER"]
            .iter()
            .any(|k| t.contains(k))
        {
            Self::Real
        } else {
            Self::Text
        }
    }
}

/// One field of a model: a column of its table or view.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The column name, which is the record's JSON key.
    pub name: String,
    /// The declared SQL type, as written in the schema (may be empty).
    pub declared_type: String,
    /// The kind derived from the declared type.
    pub kind: FieldKind,
    /// How the data engine types the column (its filters, search and value forms).
    pub ty: ColumnType,
    /// Declared `NOT NULL`.
    pub not_null: bool,
    /// Has a `DEFAULT`.
    pub has_default: bool,
    /// This field is the record's primary key.
    pub primary_key: bool,
    /// The database assigns this field when a create omits it (an `INTEGER PRIMARY KEY`).
    pub auto: bool,
    /// A generated column: read-only.
    pub generated: bool,
    /// SQL expression of the field: the quoted column name.
    pub(crate) sql: String,
    /// How records write its values (from [`ty`](Self::ty), decided once).
    pub(crate) writer: ValueWriter,
}

impl Field {
    /// Whether create and update may set this field.
    pub fn writable(&self) -> bool {
        !self.generated
    }

    /// Whether a create must give a value for this field.
    pub fn required(&self) -> bool {
        self.writable() && !self.auto && !self.has_default && (self.not_null || self.primary_key)
    }
}

/// A single-column foreign key of a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKey {
    /// The referencing column of this model.
    pub column: String,
    /// The referenced table.
    pub parent_table: String,
    /// The referenced column, `None` for the parent's primary key.
    pub parent_column: Option<String>,
}

/// A model: one table or view of the resource, mapped as the data engine's SQLAlchemy automap
/// maps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The table name.
    pub name: String,
    /// The fields, in table order.
    pub fields: Vec<Field>,
    /// Index in [`fields`](Self::fields) of the primary key: the engine's lookup field, the
    /// first column of its mapper's primary key. Records are retrieved, updated and deleted
    /// by it, and lists end with it descending.
    pub pk: usize,
    /// Indexes in [`fields`](Self::fields) of the mapper's whole primary key, in key order
    /// (`pk` first): what the engine's ORM tells records apart by (its identity map), and
    /// what its `UPDATE`s and `DELETE`s name a row by. A composite key has several columns.
    pub identity: Vec<usize>,
    /// The table declares no primary key (every view is such a table): the engine promotes
    /// its first column to the key. Rows where that column is NULL are invisible to every
    /// operation, and rows that share a value are one record to the ORM (a list shows the
    /// first one read; a write reaches all of them).
    pub promoted_key: bool,
    /// A view: read like a table; SQLite refuses writes to it.
    pub view: bool,
    /// Single-column foreign keys.
    pub foreign_keys: Vec<ForeignKey>,
    /// `"table"`, quoted.
    pub(crate) table_sql: String,
    /// The select list of every field, comma separated.
    pub(crate) select_list: String,
    /// Each field's position, by name.
    pub(crate) index: BTreeMap<String, usize>,
    /// Each field's key in a record, in field order.
    pub(crate) record_keys: RecordKeys,
    /// A foreign key joins it to a model, either way ([`Table::has_relationships`]).
    pub(crate) related: bool,
}

impl Model {
    /// The field named `name`, if the model has it.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.index.get(name).map(|&i| &self.fields[i])
    }

    /// The primary key field.
    pub fn pk_field(&self) -> &Field {
        &self.fields[self.pk]
    }

    /// Whether two rows may share a value of [`pk`](Self::pk): a promoted key repeats, and so
    /// does the first column of a composite key. Only a key that does not repeat can end a
    /// total order or name a single row.
    pub fn key_may_repeat(&self) -> bool {
        self.promoted_key || self.identity.len() > 1
    }

    /// Whether every row has its own identity for the engine's ORM: a single declared key
    /// that cannot be NULL. Otherwise rows may share an identity (a promoted key that repeats,
    /// a composite key with NULLs, which SQLite's uniqueness lets repeat) or have none (a key
    /// that is NULL), and a list shows one record per identity.
    pub fn identity_unique(&self) -> bool {
        let pk = self.pk_field();
        !self.key_may_repeat() && (pk.auto || pk.not_null)
    }
}

impl Column for Field {
    fn name(&self) -> &str {
        &self.name
    }

    fn sql(&self) -> &str {
        &self.sql
    }

    fn family(&self) -> FilterFamily {
        self.ty.filter
    }
}

table_of_fields!(
    Model,
    Field,
    |m| m.identity.len() == 1,
    Model::identity_unique
);

impl ModelSql for Model {
    fn table_sql(&self) -> &str {
        &self.table_sql
    }

    fn select_list(&self) -> &str {
        &self.select_list
    }
}

/// The engine's reading of a write's body over SQLite's columns: SQLAlchemy reflects every
/// SQLite column with autoincrement `auto`, so its serializer requires none, and a key sent as
/// 0, `""` or `null` counts as not sent, whatever its type.
impl BodyColumn for Field {
    fn input(&self) -> InputField {
        InputField::of(self.ty)
    }

    fn required(&self) -> bool {
        false
    }

    fn generated(&self) -> bool {
        self.generated
    }

    fn primary_key(&self) -> bool {
        self.primary_key
    }

    fn autoincrement(&self) -> bool {
        self.primary_key
    }

    fn has_default(&self) -> bool {
        self.has_default
    }

    /// SQLAlchemy's SQLite `JSON`.
    fn evaluates_none(&self) -> bool {
        self.ty.reflected == Reflected::Json
    }
}

/// Every model of a resource, by table name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    /// Models by table name.
    pub models: BTreeMap<String, Arc<Model>>,
}
