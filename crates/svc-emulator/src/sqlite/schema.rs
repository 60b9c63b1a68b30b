//! SQLite's reflection of a database into the engine's models, as the engine's SQLAlchemy
//! automap reads one (the models themselves are in `sqlite/model.rs`), and the
//! statement cache every SQLite query goes through.

use std::sync::Arc;

use rusqlite::Connection;

use crate::dialect::quote_ident;
use crate::engine::error::EngineError;
use crate::engine::records::RecordKeys;
use crate::engine::table::index_by_name;
use crate::engine::types::ColumnType;
use crate::sqlite::model::{Field, FieldKind, ForeignKey, Model, Schema};

/// Prepares `sql` on `conn` through the connection's statement cache (rusqlite's `cache`
/// feature): the statements of lists, counts and writes are parsed and planned once.
pub(crate) fn prepare<'c>(
    conn: &'c Connection,
    sql: &str,
) -> rusqlite::Result<rusqlite::CachedStatement<'c>> {
    conn.prepare_cached(sql)
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
    // Views too: the engine reflects them like tables (SQLAlchemy's inspector lists them), and
    // serves them as models keyed on their first column.
    let mut tables: Vec<(String, bool)> = Vec::new();
    {
        let mut stmt = conn.prepare(
            "SELECT name, type = 'view' FROM pragma_table_list \
             WHERE schema = 'main' AND type IN ('table', 'view') ORDER BY name",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? != 0))
        })?;
        for row in rows {
            let (name, view) = row?;
            // SQLAlchemy lists `sqlite_master`'s tables, which include SQLite's own
            // `sqlite_sequence` and `sqlite_stat1` (the engine serves them), not the schema
            // table itself.
            if name.eq_ignore_ascii_case("sqlite_schema")
                || name.eq_ignore_ascii_case("sqlite_master")
            {
                continue;
            }
            tables.push((name, view));
        }
    }
    let mut models = std::collections::BTreeMap::new();
    for (name, view) in tables {
        if let Some(model) = load_model(conn, &name, view)? {
            models.insert(name, model);
        }
    }
    // The foreign keys of every table, each of whose ends the ORM maps as a relationship.
    let mut stmt = conn.prepare(
        "SELECT m.name, f.\"table\" FROM sqlite_schema AS m \
         JOIN pragma_foreign_key_list(m.name) AS f WHERE m.type = 'table'",
    )?;
    let foreign_keys = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
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
    if columns.is_empty() {
        return Ok(None);
    }
    // The mapper's primary key: the declared key's columns in key order (SQLAlchemy's SQLite
    // dialect sorts them by `pk`), else the first column, promoted (jet-bridge's reflection
    // marks it `primary_key` when the table has none; views never have one).
    let mut identity: Vec<usize> = (0..columns.len()).filter(|&i| columns[i].pk > 0).collect();
    identity.sort_by_key(|&i| columns[i].pk);
    let promoted_key = identity.is_empty();
    if promoted_key {
        identity.push(0);
    }
    let pk = identity[0];
    let single_key = identity.len() == 1 && !promoted_key;
    let without_rowid = !view
        && conn
            .prepare("SELECT coalesce(max(wr), 0) FROM pragma_table_list WHERE schema = 'main' AND name = ?1")?
            .query_row([table], |r| r.get::<_, i64>(0))?
            != 0;
    let mut fields = Vec::with_capacity(columns.len());
    for (i, c) in columns.into_iter().enumerate() {
        let is_pk = i == pk;
        // Only a single declared INTEGER key of a rowid table is SQLite's rowid alias.
        let rowid_alias = is_pk
            && single_key
            && !without_rowid
            && c.declared.trim().eq_ignore_ascii_case("INTEGER");
        let ty = ColumnType::from_declared(&c.declared);
        fields.push(Field {
            kind: FieldKind::from_declared(&c.declared),
            ty,
            writer: ty.value_writer(),
            sql: quote_ident(&c.name),
            declared_type: c.declared,
            not_null: c.not_null || rowid_alias,
            has_default: c.default,
            primary_key: is_pk,
            auto: rowid_alias,
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
    let index = index_by_name(&fields);
    Ok(Some(Model {
        record_keys: RecordKeys::of(fields.iter().map(|f| f.name.as_str())),
        name: table.to_owned(),
        table_sql: quote_ident(table),
        select_list,
        fields,
        pk,
        identity,
        promoted_key,
        view,
        foreign_keys,
        index,
        related: false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::table::Table;

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
