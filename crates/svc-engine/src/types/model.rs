//! A model as the emulator serves it, for tools that generate requests from a schema
//! (`Emulator::models`; `svc emulator verify` reads it).

use crate::types::FilterFamily;

/// A model of a resource: its name, its key and its fields, as last read (start or reload).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelInfo {
    /// The model's name (its table's), as record URLs write it.
    pub name: String,
    /// The field a record URL's key is read by: the primary key's column, or the first column
    /// where the table declares none (which the engine promotes).
    pub key: String,
    /// The table declares no primary key (a view, a table without one): the engine promoted
    /// the first column, and rows that share its value are one record.
    pub promoted_key: bool,
    /// The fields, in table order.
    pub fields: Vec<FieldInfo>,
}

/// A field of a [`ModelInfo`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FieldInfo {
    /// The field's name, the record's JSON key.
    pub name: String,
    /// Which lookups its filters take, and how their values are read.
    pub family: FilterFamily,
}

impl ModelInfo {
    /// A model named `name` keyed by its field `key`, without fields yet (for a tool's tests).
    ///
    /// ```
    /// use svc_engine::types::{FieldInfo, FilterFamily, ModelInfo};
    ///
    /// let mut books = ModelInfo::new("books", "id");
    /// books.fields.push(FieldInfo::new("id", FilterFamily::Number));
    /// books.fields.push(FieldInfo::new("title", FilterFamily::Text));
    /// assert!(!books.promoted_key);
    /// ```
    pub fn new(name: impl Into<String>, key: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            key: key.into(),
            promoted_key: false,
            fields: Vec::new(),
        }
    }
}

impl FieldInfo {
    /// A field named `name` of the filter family `family`.
    pub fn new(name: impl Into<String>, family: FilterFamily) -> Self {
        Self {
            name: name.into(),
            family,
        }
    }
}
