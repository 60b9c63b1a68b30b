//! Schema introspection: tables become models, columns become fields.
//!
//! Everything is read through the engine (`pragma_table_list`, `pragma_table_xinfo`,
//! `pragma_foreign_key_list` as table-valued functions with bound arguments). Identifiers found
//! this way are the only ones ever written into SQL, always through [`quote_ident`].

use std::collections::BTreeMap;
use std::sync::Arc;

use rusqlite::Connection;

use crate::engine::error::EngineError;
use crate::engine::types::ColumnType;

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

/// One field of a model: a column, or the table's `rowid` when it has no single-column primary
/// key.
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
    /// The database assigns this field when a create omits it (an `INTEGER PRIMARY KEY` or the
    /// implicit `rowid`).
    pub auto: bool,
    /// The field is not a real column but the table's implicit `rowid` (tables without a
    /// single-column primary key). Read-only.
    pub implicit_rowid: bool,
    /// A generated column: read-only.
    pub generated: bool,
    /// SQL expression of the field: the quoted column name, or a bare rowid alias.
    pub(crate) sql: String,
    /// The pre-escaped JSON key followed by `:`.
    pub(crate) json_key: String,
}

impl Field {
    /// Whether create and update may set this field.
    pub fn writable(&self) -> bool {
        !self.implicit_rowid && !self.generated
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

/// A model: one table of the resource.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// The table name.
    pub name: String,
    /// The fields, in table order; the implicit rowid, when used, comes first.
    pub fields: Vec<Field>,
    /// Index in [`fields`](Self::fields) of the primary key.
    pub pk: usize,
    /// Single-column foreign keys.
    pub foreign_keys: Vec<ForeignKey>,
    /// `"table"`, quoted.
    pub(crate) table_sql: String,
    /// The select list of every field, comma separated.
    pub(crate) select_list: String,
    index: BTreeMap<String, usize>,
}

impl Model {
    /// The field named `name`, if the model has it.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.index.get(name).map(|&i| &self.fields[i])
    }

    /// The index in [`fields`](Self::fields) of the field named `name`.
    pub(crate) fn field_index(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// The primary key field.
    pub fn pk_field(&self) -> &Field {
        &self.fields[self.pk]
    }
}

/// Every model of a resource, by table name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    /// Models by table name.
    pub models: BTreeMap<String, Arc<Model>>,
}

/// Prepares `sql` on `conn` through the connection's statement cache (rusqlite's `cache`
/// feature): the statements of lists, counts and writes are parsed and planned once.
pub(crate) fn prepare<'c>(
    conn: &'c Connection,
    sql: &str,
) -> rusqlite::Result<rusqlite::CachedStatement<'c>> {
    conn.prepare_cached(sql)
}

/// Quotes an identifier that comes from the schema: `"` + name with `"` doubled + `"`.
pub(crate) fn quote_ident(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('"');
    for c in name.chars() {
        if c == '"' {
            s.push('"');
        }
        s.push(c);
    }
    s.push('"');
    s
}

fn json_key(name: &str) -> String {
    let mut k = serde_json::to_string(name).unwrap_or_else(|_| "\"\"".to_owned());
    k.push(':');
    k
}

struct Column {
    name: String,
    declared: String,
    not_null: bool,
    default: bool,
    pk: i64,
    hidden: i64,
}

/// Reads the whole schema of the `main` database.
pub(crate) fn load_schema(conn: &Connection) -> Result<Schema, EngineError> {
    let mut tables: Vec<(String, bool)> = Vec::new();
    {
        let mut stmt = conn.prepare(
            "SELECT name, wr FROM pragma_table_list WHERE schema = 'main' AND type = 'table' \
             ORDER BY name",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? != 0))
        })?;
        for row in rows {
            let (name, without_rowid) = row?;
            if name.to_ascii_lowercase().starts_with("sqlite_") {
                continue;
            }
            tables.push((name, without_rowid));
        }
    }
    let mut schema = Schema::default();
    for (name, without_rowid) in tables {
        if let Some(model) = load_model(conn, &name, without_rowid)? {
            schema.models.insert(name, Arc::new(model));
        }
    }
    Ok(schema)
}

fn load_model(
    conn: &Connection,
    table: &str,
    without_rowid: bool,
) -> Result<Option<Model>, EngineError> {
    let mut columns = Vec::new();
    {
        let mut stmt = conn.prepare(
            "SELECT name, type, \"notnull\", dflt_value IS NOT NULL, pk, hidden \
             FROM pragma_table_xinfo(?1) ORDER BY cid",
        )?;
        let rows = stmt.query_map([table], |r| {
            Ok(Column {
                name: r.get(0)?,
                declared: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                not_null: r.get::<_, i64>(2)? != 0,
                default: r.get::<_, i64>(3)? != 0,
                pk: r.get(4)?,
                hidden: r.get(5)?,
            })
        })?;
        for c in rows {
            let c = c?;
            // hidden = 1: hidden column of a virtual table; 2, 3: generated columns.
            if c.hidden == 1 {
                continue;
            }
            columns.push(c);
        }
    }
    let pk_count = columns.iter().filter(|c| c.pk > 0).count();
    let mut fields = Vec::with_capacity(columns.len() + 1);
    let pk = if pk_count == 1 {
        columns.iter().position(|c| c.pk > 0).unwrap_or(0)
    } else {
        if without_rowid {
            // A WITHOUT ROWID table with a composite primary key: no single key to address
            // records by. Not a model.
            return Ok(None);
        }
        let Some(alias) = ["rowid", "_rowid_", "oid"]
            .into_iter()
            .find(|a| !columns.iter().any(|c| c.name.eq_ignore_ascii_case(a)))
        else {
            return Ok(None);
        };
        fields.push(Field {
            name: alias.to_owned(),
            declared_type: "INTEGER".to_owned(),
            kind: FieldKind::Integer,
            ty: ColumnType::from_declared("INTEGER"),
            not_null: true,
            has_default: false,
            primary_key: true,
            auto: true,
            implicit_rowid: true,
            generated: false,
            sql: alias.to_owned(),
            json_key: json_key(alias),
        });
        0
    };
    for c in columns {
        let is_pk = pk_count == 1 && c.pk > 0;
        let rowid_alias =
            is_pk && !without_rowid && c.declared.trim().eq_ignore_ascii_case("INTEGER");
        fields.push(Field {
            kind: FieldKind::from_declared(&c.declared),
            ty: ColumnType::from_declared(&c.declared),
            sql: quote_ident(&c.name),
            json_key: json_key(&c.name),
            declared_type: c.declared,
            not_null: c.not_null || rowid_alias,
            has_default: c.default,
            primary_key: is_pk,
            auto: rowid_alias,
            implicit_rowid: false,
            generated: c.hidden == 2 || c.hidden == 3,
            name: c.name,
        });
    }

    let mut foreign_keys = Vec::new();
    {
        let mut stmt = conn.prepare(
            "SELECT id, \"from\", \"table\", \"to\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
        )?;
        let rows = stmt.query_map([table], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })?;
        let mut all: Vec<(i64, ForeignKey)> = Vec::new();
        for row in rows {
            let (id, column, parent_table, parent_column) = row?;
            all.push((
                id,
                ForeignKey {
                    column,
                    parent_table,
                    parent_column,
                },
            ));
        }
        for (id, fk) in &all {
            if all.iter().filter(|(other, _)| other == id).count() == 1 {
                foreign_keys.push(fk.clone());
            }
        }
    }

    let select_list = fields
        .iter()
        .map(|f| f.sql.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let index = fields
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.clone(), i))
        .collect();
    Ok(Some(Model {
        name: table.to_owned(),
        table_sql: quote_ident(table),
        select_list,
        fields,
        pk,
        foreign_keys,
        index,
    }))
}
