//! SQLite's reflection of a database into the engine's models, as the engine's SQLAlchemy
//! automap reads one, the models it makes (see "Models" below), and the
//! statement cache every SQLite query goes through.
//!
//! # Foreign keys and identity
//!
//! SQLite's side of the flows (`svc_emulator_core::flow`): a connection inside a transaction, its foreign
//! keys as SQLAlchemy's SQLite dialect reflects them (the `ON DELETE` action only from a
//! table-level clause it can parse), and how its rows are told apart (the rowid).
//!
//! # Models
//!
//! A SQLite database's models: tables become models, columns become fields, as the data
//! engine's SQLAlchemy automap maps them (read by the reflection above).
//!
//! Identifiers found by the reflection are the only ones ever written into SQL, always
//! through `dialect::quote_ident`.

use crate::driver::{catalog_rows, rows_as};
use crate::types::engine_error;
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::sync::Arc;
use svc_emulator_core::dialect::quote_ident;
use svc_emulator_core::flow::{self, OnDelete, TableRef};
use svc_engine::EngineError;
use svc_engine::field_input::InputField;
use svc_engine::table::Reflected as ReflectedTable;
use svc_engine::table::{EngineType, MappedColumn, MappedTable};
use svc_engine::types::ColumnType;
use svc_engine::types::{Reflected, Serializer, ValueWriter};

struct PragmaColumn {
    name: String,
    declared: String,
    not_null: bool,
    default: bool,
    pk: i64,
    hidden: i64,
}

/// Reads the whole schema of the `main` database.
pub(crate) fn load_schema(conn: &Connection) -> Result<Schema, EngineError> {
    // Views too: the engine reflects them like tables (SQLAlchemy's inspector lists them), and
    // serves them as models keyed on their first column.
    let listed = catalog_rows(
        conn,
        "SELECT name, type = 'view' FROM pragma_table_list \
         WHERE schema = 'main' AND type IN ('table', 'view') ORDER BY name",
        [],
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? != 0)),
    )
    .map_err(engine_error)?;
    // SQLAlchemy lists `sqlite_master`'s tables, which include SQLite's own `sqlite_sequence`
    // and `sqlite_stat1` (the engine serves them), not the schema table itself.
    let tables = listed.into_iter().filter(|(name, _)| {
        !name.eq_ignore_ascii_case("sqlite_schema") && !name.eq_ignore_ascii_case("sqlite_master")
    });
    let mut models = std::collections::BTreeMap::new();
    for (name, view) in tables {
        if let Some(model) = load_model(conn, &name, view)? {
            models.insert(name, model);
        }
    }
    // The foreign keys of every table, each of whose ends the ORM maps as a relationship.
    let foreign_keys = catalog_rows(
        conn,
        "SELECT m.name, f.\"table\" FROM sqlite_schema AS m \
         JOIN pragma_foreign_key_list(m.name) AS f WHERE m.type = 'table'",
        [],
        |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
    )
    .map_err(engine_error)?;
    for (from, to) in &foreign_keys {
        if models.contains_key(from) && models.contains_key(to) {
            for name in [from, to] {
                if let Some(model) = models.get_mut(name) {
                    model.related = true;
                }
            }
        }
    }
    Ok(Schema {
        models: models.into_iter().map(|(n, m)| (n, Arc::new(m))).collect(),
    })
}

fn load_model(conn: &Connection, table: &str, view: bool) -> Result<Option<Model>, EngineError> {
    let columns = catalog_rows(
        conn,
        "SELECT name, type, \"notnull\", dflt_value IS NOT NULL, pk, hidden \
         FROM pragma_table_xinfo(?1) ORDER BY cid",
        [table],
        |r| {
            Ok(PragmaColumn {
                name: r.get(0)?,
                declared: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                not_null: r.get::<_, i64>(2)? != 0,
                default: r.get::<_, i64>(3)? != 0,
                pk: r.get(4)?,
                hidden: r.get(5)?,
            })
        },
    )
    .map_err(engine_error)?;
    // hidden = 1: hidden column of a virtual table; 2, 3: generated columns.
    let columns: Vec<PragmaColumn> = columns.into_iter().filter(|c| c.hidden != 1).collect();
    if columns.is_empty() {
        return Ok(None);
    }
    // The mapper's primary key: the declared key's columns in key order (SQLAlchemy's SQLite
    // dialect sorts them by `pk`), else the first column, promoted (jet-bridge's reflection
    // marks it `primary_key` when the table has none; views never have one).
    let mut declared: Vec<usize> = (0..columns.len()).filter(|&i| columns[i].pk > 0).collect();
    declared.sort_by_key(|&i| columns[i].pk);
    let key: Vec<String> = declared.iter().map(|&i| columns[i].name.clone()).collect();
    let pk = declared.first().copied().unwrap_or(0);
    let single_key = declared.len() == 1;
    let without_rowid = !view
        && catalog_rows(
            conn,
            "SELECT coalesce(max(wr), 0) FROM pragma_table_list WHERE schema = 'main' AND name = ?1",
            [table],
            |r| r.get::<_, i64>(0),
        )
        .map_err(engine_error)?
        .first()
        .is_some_and(|&wr| wr != 0);
    let mut fields = Vec::with_capacity(columns.len());
    for (i, c) in columns.into_iter().enumerate() {
        // Only a single declared INTEGER key of a rowid table is SQLite's rowid alias.
        let rowid_alias = i == pk
            && single_key
            && !without_rowid
            && c.declared.trim().eq_ignore_ascii_case("INTEGER");
        let kind = SqliteType::from_declared(&c.declared);
        fields.push(Field {
            kind,
            engine: kind.engine_type(),
            sql: quote_ident(&c.name),
            not_null: c.not_null || rowid_alias,
            has_default: c.default,
            // Made the key's alone by `MappedTable::new`.
            primary_key: false,
            // SQLAlchemy reflects every SQLite column with autoincrement `auto`: the key keeps
            // it (`BodyColumn::autoincrement`).
            autoincrement: true,
            generated: c.hidden == 2 || c.hidden == 3,
            extra: SqliteColumn {
                value_kind: FieldKind::from_declared(&c.declared),
                declared_type: c.declared,
                auto: rowid_alias,
            },
            name: c.name,
        });
    }

    let all = catalog_rows(
        conn,
        "SELECT id, \"from\", \"table\", \"to\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq",
        [table],
        |r| {
            let key = ForeignKey {
                column: r.get(1)?,
                parent_table: r.get(2)?,
                parent_column: r.get(3)?,
            };
            Ok((r.get::<_, i64>(0)?, key))
        },
    )
    .map_err(engine_error)?;
    // Keys of one column only.
    let foreign_keys: Vec<ForeignKey> = all
        .iter()
        .filter(|(id, _)| all.iter().filter(|(other, _)| other == id).count() == 1)
        .map(|(_, fk)| fk.clone())
        .collect();

    let reflected = ReflectedTable {
        sql: quote_ident(table),
        // A view holds no rows of its own, nor do SQLite's own tables hold records.
        holds_rows: !view && !table.starts_with("sqlite_"),
        // Set once every model is read (`load_schema`).
        related: false,
        extra: SqliteTable { view, foreign_keys },
    };
    let select = |f: &Field| f.sql.clone();
    let Some(mut model) = Model::new(table.to_owned(), fields, &key, reflected, select) else {
        return Ok(None);
    };
    // Whether every row has its own identity for the engine's ORM: a single declared key that
    // cannot be NULL. Otherwise rows may share an identity (a promoted key that repeats, a
    // composite key with NULLs, which SQLite's uniqueness lets repeat) or have none (a key
    // that is NULL), and a list shows one record per identity.
    let identity_unique = model.unique_key() && model.fields[model.pk].not_null;
    model.set_identity_unique(identity_unique);
    Ok(Some(model))
}

/// A table of the database, by its name.
pub(crate) fn table(name: &str) -> TableRef {
    TableRef {
        name: name.to_owned(),
        sql: quote_ident(name),
    }
}

/// Every foreign key of every table that refers to `parent`, as SQLAlchemy pairs its columns
/// up (`Database::references_to`).
pub(crate) fn references(
    conn: &Connection,
    parent: &TableRef,
) -> Result<Vec<flow::Reference>, EngineError> {
    Ok(references_to(conn, &parent.name)?
        .into_iter()
        // A key whose two sides differ in length is one SQLAlchemy cannot pair up.
        .filter(|r| !r.to.is_empty() && r.to.len() == r.from.len())
        .map(|r| flow::Reference {
            child: table(&r.child),
            from: r.from.iter().map(|c| quote_ident(c)).collect(),
            to: r.to.iter().map(|c| quote_ident(c)).collect(),
            on_delete: OnDelete::named(r.on_delete.as_deref().unwrap_or_default()),
            nullable: r.nullable,
            in_child_key: r.in_child_key,
        })
        .collect())
}

/// A foreign key of another table (`child`) that refers to a table, as SQLite lists it.
struct RawReference {
    child: String,
    from: Vec<String>,
    to: Vec<String>,
    /// `ON DELETE` as SQLAlchemy reads it (only from table-level `FOREIGN KEY` clauses).
    on_delete: Option<String>,
    /// Every referring column is nullable (SQLAlchemy's test for "delete-orphan" cascade).
    nullable: bool,
    /// A referring column is part of the child's primary key, or is the first column of a
    /// child without one (the engine's promoted key).
    in_child_key: bool,
}

/// Every foreign key of every table that refers to `?1`, one row per pair of columns: the
/// referring table's name and SQL, the key's id, the referring column, the referred one (NULL:
/// the parent's key's, in order), whether the referring column is `NOT NULL`, and whether it is
/// part of the child's key (or the first column of a child without one). SQLite lists no
/// `ON DELETE` as SQLAlchemy reads it: that is parsed from the child's SQL.
pub(crate) const REFERENCES: &str = "\
SELECT m.name, coalesce(m.sql, ''), f.id, f.\"from\", f.\"to\", coalesce(c.\"notnull\", 0),
       coalesce(c.pk, 0) > 0 OR (coalesce(c.cid, -1) = 0 AND NOT EXISTS
         (SELECT 1 FROM pragma_table_info(m.name) WHERE pk > 0))
FROM sqlite_schema AS m
JOIN pragma_foreign_key_list(m.name) AS f
LEFT JOIN pragma_table_info(m.name) AS c ON c.name = f.\"from\"
WHERE m.type = 'table' AND f.\"table\" = ?1
ORDER BY m.name, f.id, f.seq";

/// Every foreign key of every table that refers to `parent`.
fn references_to(conn: &Connection, parent: &str) -> Result<Vec<RawReference>, EngineError> {
    let rows = rows_as(conn, REFERENCES, [parent], |row| {
        Ok((
            row.get::<_, String>(0)?,
            row.get::<_, String>(1)?,
            row.get::<_, i64>(2)?,
            row.get::<_, String>(3)?,
            row.get::<_, Option<String>>(4)?,
            row.get::<_, i64>(5)? != 0,
            row.get::<_, i64>(6)? != 0,
        ))
    })
    .map_err(engine_error)?;
    let mut refs: Vec<(i64, String, RawReference)> = Vec::new();
    for (child, sql, id, from, to, not_null, in_key) in rows {
        match refs.last_mut() {
            Some((i, _, r)) if r.child == child && *i == id => {
                r.from.push(from);
                r.to.extend(to);
                r.nullable &= !not_null;
                r.in_child_key |= in_key;
            }
            _ => refs.push((
                id,
                sql,
                RawReference {
                    child,
                    from: vec![from],
                    to: to.into_iter().collect(),
                    on_delete: None,
                    nullable: !not_null,
                    in_child_key: in_key,
                },
            )),
        }
    }
    let parent_key = key_columns(conn, parent)?;
    let mut out = Vec::with_capacity(refs.len());
    for (_, sql, mut r) in refs {
        if r.to.is_empty() {
            r.to = parent_key.clone();
        }
        // The action counts only where the parsed clause has the same signature as SQLite's
        // own list of the key.
        r.on_delete = parsed_foreign_keys(&sql)
            .into_iter()
            .find(|p| p.from == r.from && p.table == parent && p.to == r.to)
            .and_then(|p| p.on_delete);
        out.push(r);
    }
    Ok(out)
}

/// A table-level foreign key clause as SQLAlchemy 1.4's SQLite dialect reads it from the
/// table's SQL, to find its `ON DELETE` action.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ParsedForeignKey {
    from: Vec<String>,
    table: String,
    to: Vec<String>,
    on_delete: Option<String>,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `[a-z0-9_]` with `re.I`.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The position after `word` (ASCII case-insensitive) at `at`.
fn literal(s: &[char], at: usize, word: &str) -> Option<usize> {
    let mut p = at;
    for w in word.chars() {
        if !s.get(p).is_some_and(|c| c.eq_ignore_ascii_case(&w)) {
            return None;
        }
        p += 1;
    }
    Some(p)
}

fn skip_spaces(s: &[char], mut at: usize) -> usize {
    while s.get(at) == Some(&' ') {
        at += 1;
    }
    at
}

fn some_spaces(s: &[char], at: usize) -> Option<usize> {
    let end = skip_spaces(s, at);
    (end > at).then_some(end)
}

/// `_find_cols_in_sig`: the names in `"..."` or `[a-z0-9_]+` runs of a column list.
fn columns_in(sig: &[char]) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < sig.len() {
        if sig[at] == '"'
            && let Some(close) = (at + 2..sig.len()).find(|&i| sig[i] == '"')
            && !sig[at + 1..close].contains(&'\n')
        {
            out.push(sig[at + 1..close].iter().collect());
            at = close + 1;
            continue;
        }
        if is_name_char(sig[at]) {
            let start = at;
            while at < sig.len() && is_name_char(sig[at]) {
                at += 1;
            }
            out.push(sig[start..at].iter().collect());
            continue;
        }
        at += 1;
    }
    out
}

/// After `REFERENCES <table> *(`: `(.+?)\)`, then the `ON DELETE`/`ON UPDATE` clauses.
fn fk_rest(s: &[char], at: usize) -> Option<(usize, Vec<String>, Option<String>)> {
    if s.get(at).is_none_or(|&c| c == '\n') {
        return None;
    }
    let close = (at + 1..s.len()).find(|&i| s[i] == ')' || s[i] == '\n')?;
    if s[close] == '\n' {
        return None;
    }
    let to = columns_in(&s[at..close]);
    let mut p = skip_spaces(s, close + 1);
    let mut on_delete = None;
    while let Some(q) = literal(s, p, "ON ") {
        let (q, deleting) = match (literal(s, q, "DELETE "), literal(s, q, "UPDATE ")) {
            (Some(q), _) => (q, true),
            (None, Some(q)) => (q, false),
            (None, None) => break,
        };
        let Some((q, action)) = [
            "SET NULL",
            "SET DEFAULT",
            "CASCADE",
            "RESTRICT",
            "NO ACTION",
        ]
        .iter()
        .find_map(|a| literal(s, q, a).map(|end| (end, a.to_owned()))) else {
            break;
        };
        // SQLAlchemy keeps the last action other than NO ACTION.
        if deleting && action != "NO ACTION" {
            on_delete = Some(action.to_owned());
        }
        p = skip_spaces(s, q);
    }
    Some((p, to, on_delete))
}

/// SQLAlchemy's `FK_PATTERN` at `start`: `[CONSTRAINT name ]FOREIGN KEY (cols) REFERENCES
/// table (cols) [ON DELETE ...]`, case-insensitive, on one line.
fn fk_at(s: &[char], start: usize) -> Option<(usize, ParsedForeignKey)> {
    let mut starts = Vec::new();
    if let Some(p) = literal(s, start, "CONSTRAINT ") {
        let mut q = p;
        while s.get(q).is_some_and(|&c| is_word(c)) {
            q += 1;
        }
        if q > p
            && let Some(r) = some_spaces(s, q)
        {
            starts.push(r);
        }
    }
    starts.push(start);
    for p in starts {
        let Some(p) = literal(s, p, "FOREIGN KEY") else {
            continue;
        };
        let p = skip_spaces(s, p);
        if s.get(p) != Some(&'(') {
            continue;
        }
        let open = p + 1;
        let spaced = skip_spaces(s, open);
        // ` *(.+?) *\)`: the greedy spaces first, then the shortest column list.
        for from_start in (open..=spaced).rev() {
            for from_end in from_start + 1..=s.len() {
                if s[from_end - 1] == '\n' {
                    break;
                }
                let q = skip_spaces(s, from_end);
                if s.get(q) != Some(&')') {
                    continue;
                }
                let Some(q) = some_spaces(s, q + 1)
                    .and_then(|q| literal(s, q, "REFERENCES"))
                    .and_then(|q| some_spaces(s, q))
                else {
                    continue;
                };
                let from = columns_in(&s[from_start..from_end]);
                // `"(.+?)"` first, then `[a-z0-9_]+`.
                if s.get(q) == Some(&'"') {
                    for close in q + 2..s.len() {
                        if s[close] == '\n' {
                            break;
                        }
                        if s[close] != '"' {
                            continue;
                        }
                        let r = skip_spaces(s, close + 1);
                        if s.get(r) == Some(&'(')
                            && let Some((end, to, on_delete)) = fk_rest(s, r + 1)
                        {
                            let table = s[q + 1..close].iter().collect();
                            return Some((
                                end,
                                ParsedForeignKey {
                                    from,
                                    table,
                                    to,
                                    on_delete,
                                },
                            ));
                        }
                    }
                }
                let mut r = q;
                while s.get(r).is_some_and(|&c| is_name_char(c)) {
                    r += 1;
                }
                if r > q {
                    let t = skip_spaces(s, r);
                    if s.get(t) == Some(&'(')
                        && let Some((end, to, on_delete)) = fk_rest(s, t + 1)
                    {
                        let table = s[q..r].iter().collect();
                        return Some((
                            end,
                            ParsedForeignKey {
                                from,
                                table,
                                to,
                                on_delete,
                            },
                        ));
                    }
                }
            }
        }
    }
    None
}

/// Every foreign key clause SQLAlchemy's pattern finds in a table's SQL (`re.finditer`).
fn parsed_foreign_keys(sql: &str) -> Vec<ParsedForeignKey> {
    let s: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    while at < s.len() {
        match fk_at(&s, at) {
            Some((end, fk)) => {
                out.push(fk);
                at = end.max(at + 1);
            }
            None => at += 1,
        }
    }
    out
}

/// The primary key columns of `table`, in key order.
fn key_columns(conn: &Connection, table: &str) -> Result<Vec<String>, EngineError> {
    rows_as(
        conn,
        "SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk",
        [table],
        |r| r.get::<_, String>(0),
    )
    .map_err(engine_error)
}

#[cfg(test)]
mod schema_tests {
    use super::*;
    use svc_engine::table::Table;

    /// A table has relationships where a foreign key joins it to a model, either way: the
    /// engine's `_m2m` fails there (engine/declared.rs).
    #[test]
    fn the_tables_a_foreign_key_joins_have_relationships() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE parents (id INTEGER PRIMARY KEY);
             CREATE TABLE kids (id INTEGER PRIMARY KEY, p INTEGER REFERENCES parents (id));
             CREATE TABLE alone (id INTEGER PRIMARY KEY);
             CREATE TABLE tree (id INTEGER PRIMARY KEY, up INTEGER REFERENCES tree (id));
             CREATE TABLE dangling (id INTEGER PRIMARY KEY, x INTEGER REFERENCES nosuch (id));",
        )
        .unwrap();
        let schema = load_schema(&conn).unwrap();
        let related = |name: &str| schema.models[name].has_relationships();
        assert!(related("parents") && related("kids") && related("tree"));
        assert!(!related("alone") && !related("dangling"));
    }
}

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

/// One field of a model: a column of its table or view, mapped as svc-engine maps a column of
/// any database, with what SQLite keeps beside ([`SqliteColumn`], reached through the field).
pub type Field = MappedColumn<SqliteType, SqliteColumn>;

/// What the engine makes of a SQLite column's declared type: how it types the column (its
/// filters, search and value forms), and how records write its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqliteType {
    /// How the data engine types the column.
    pub ty: ColumnType,
    /// How records write its values (from [`ty`](Self::ty), decided once).
    pub(crate) writer: ValueWriter,
}

impl SqliteType {
    /// The type SQLAlchemy's SQLite dialect reflects from the declared type `declared`.
    fn from_declared(declared: &str) -> Self {
        let ty = ColumnType::from_declared(declared);
        SqliteType {
            ty,
            writer: ty.value_writer(),
        }
    }
}

impl SqliteType {
    /// What the engine makes of the type ([`EngineType`]). SQLAlchemy reflects every SQLite
    /// column with autoincrement `auto` (each is made with `autoincrement` set, which only the
    /// key keeps), so its serializer requires none, and a key sent as 0, `""` or `null` counts
    /// as not sent, whatever its type. SQLAlchemy's SQLite `JSON` evaluates `None`.
    pub fn engine_type(self) -> EngineType {
        let json = self.ty.reflected == Reflected::Json;
        let query_object = if json {
            Serializer::Value
        } else {
            self.ty.serializer
        };
        EngineType {
            may_be_required: false,
            evaluates_none: json,
            ..EngineType::new(
                self.ty.filter,
                InputField::of(self.ty),
                query_object,
                self.ty.search,
            )
        }
    }
}

/// What SQLite keeps of a column beside svc-engine's mapping of it.
#[derive(Debug, Clone, PartialEq)]
pub struct SqliteColumn {
    /// The declared SQL type, as written in the schema (may be empty).
    pub declared_type: String,
    /// The kind derived from the declared type, which checks the tools' strict writes.
    pub value_kind: FieldKind,
    /// The database assigns this field when a create omits it (an `INTEGER PRIMARY KEY`).
    pub auto: bool,
}

/// Whether the tools' strict create (`backend.rs`) must give a value for `field`: a writable
/// one (not generated) that the database does not fill in, and that cannot be NULL or is the
/// key.
pub(crate) fn strictly_required(field: &Field) -> bool {
    !field.generated && !field.auto && !field.has_default && (field.not_null || field.primary_key)
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

/// What SQLite keeps of a table or view beside svc-engine's mapping of it.
#[derive(Debug, Clone, PartialEq)]
pub struct SqliteTable {
    /// A view: read like a table; SQLite refuses writes to it.
    pub view: bool,
    /// Single-column foreign keys.
    pub foreign_keys: Vec<ForeignKey>,
}

/// A model: one table or view of the resource, mapped as the data engine's SQLAlchemy automap
/// maps it, as svc-engine maps a table of any database. A table without a declared key
/// (every view is such a table) has its first column promoted to the key: rows where that
/// column is NULL are invisible to every operation, and rows that share a value are one record
/// to the ORM (a list shows the first one read; a write reaches all of them). A view holds no
/// rows of its own, and SQLite's own tables (`sqlite_sequence`, the statistics) hold the
/// database's bookkeeping, not records: an export leaves them out (`sqlite_sequence` is the
/// next keys it keeps).
pub type Model = MappedTable<Field, SqliteTable>;

/// Every model of a resource, by table name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Schema {
    /// Models by table name.
    pub models: BTreeMap<String, Arc<Model>>,
}
