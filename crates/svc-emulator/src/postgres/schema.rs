//! Reflection of a PostgreSQL database: the tables, views, materialized views and foreign
//! tables of its current schema (usually `public`; the engine's SQLAlchemy reflects them all:
//! jet-bridge asks for views and foreign tables too) become models, their columns fields.
//!
//! Everything is read from the catalog with bound parameters; identifiers found this way are
//! the only ones ever written into SQL, always through [`quote_ident`].

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio_postgres::Client;

use crate::dialect::quote_ident;
use crate::engine::EngineError;
use crate::engine::table::{MappedColumn, MappedTable, Reflected};
use crate::postgres::types::PgKind;

/// A column, and the type a value for it is cast to where the engine would bind it as a text
/// literal (an unknown-typed literal takes the column's type): the base type,
/// schema-qualified.
pub(crate) type PgField = MappedColumn<PgKind, PgCast>;

/// The type a value for a column is cast to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PgCast {
    /// The type, schema-qualified (`"pg_catalog"."int4"`, `integer[]`).
    pub cast: String,
}

/// A table.
pub(crate) type PgModel = MappedTable<PgField>;

impl PgField {
    /// The type an untyped literal compared with the column (`col = 'x'`, `col > 'x'`)
    /// becomes: the column's own, but `inet` for a `cidr`, which PostgreSQL compares through
    /// `inet = inet` (so `'1'`, a valid `cidr`, is an invalid `inet` there). In an `IN` list
    /// the literals take the column's type.
    pub(crate) fn compared_as(&self) -> &str {
        if self.kind == PgKind::Inet {
            "pg_catalog.inet"
        } else {
            &self.cast
        }
    }
}

/// The columns of every table (ordinary, partitioned, foreign), view and materialized view of
/// the current schema, in order. A domain's column is its base type's, as SQLAlchemy reflects
/// it, and the domain's default is the column's when it has none of its own.
const COLUMNS: &str = "\
SELECT c.relname, a.attname, bt.typname, bt.typcategory, \
       quote_ident(bn.nspname) || '.' || quote_ident(bt.typname), \
       a.attnotnull, a.atthasdef OR a.attidentity <> '' OR t.typdefault IS NOT NULL, \
       a.attidentity <> '' OR coalesce(pg_get_expr(d.adbin, d.adrelid), '') LIKE 'nextval(%', \
       a.attgenerated <> '', n.nspname, coalesce(et.typname, ''), \
       format_type(a.atttypid, a.atttypmod), \
       c.relkind IN ('r', 'p') AND NOT c.relispartition \
FROM pg_class c \
JOIN pg_namespace n ON n.oid = c.relnamespace \
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped \
JOIN pg_type t ON t.oid = a.atttypid \
JOIN pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END \
JOIN pg_namespace bn ON bn.oid = bt.typnamespace \
LEFT JOIN pg_type et ON et.oid = bt.typelem AND bt.typcategory = 'A' \
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum \
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'f', 'v', 'm') \
ORDER BY c.relname, a.attnum";

/// The columns of each primary key of the current schema, in key order.
const PRIMARY_KEYS: &str = "\
SELECT c.relname, a.attname \
FROM pg_constraint k \
JOIN pg_class c ON c.oid = k.conrelid \
JOIN pg_namespace n ON n.oid = c.relnamespace \
CROSS JOIN LATERAL unnest(k.conkey) WITH ORDINALITY AS key(attnum, at) \
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = key.attnum \
WHERE k.contype = 'p' AND n.nspname = current_schema() \
ORDER BY c.relname, key.at";

/// The foreign keys between tables of the current schema, as `(referring, referred)` names.
const FOREIGN_KEYS: &str = "\
SELECT c.relname, p.relname FROM pg_constraint k \
JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
JOIN pg_class p ON p.oid = k.confrelid JOIN pg_namespace pn ON pn.oid = p.relnamespace \
WHERE k.contype = 'f' AND n.nspname = current_schema() AND pn.nspname = current_schema()";

/// Reads the schema.
pub(crate) async fn load_schema(
    client: &Client,
) -> Result<BTreeMap<String, Arc<PgModel>>, EngineError> {
    let rows = client.query(COLUMNS, &[]).await.map_err(internal)?;
    let mut keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in client.query(PRIMARY_KEYS, &[]).await.map_err(internal)? {
        keys.entry(row.get(0)).or_default().push(row.get(1));
    }
    let mut tables: BTreeMap<String, (Vec<PgField>, Reflected<()>)> = BTreeMap::new();
    for row in &rows {
        let table: String = row.get(0);
        let name: String = row.get(1);
        let type_name: String = row.get(2);
        let category: i8 = row.get(3);
        let base: String = row.get(4);
        let element: String = row.get(10);
        let kind = PgKind::of(&type_name, category as u8 as char, &element);
        let namespace: String = row.get(9);
        let (fields, _) = tables.entry(table).or_insert_with_key(|t| {
            let table = Reflected {
                sql: format!("{}.{}", quote_ident(&namespace), quote_ident(t)),
                holds_rows: row.get(12),
                related: false,
                extra: (),
            };
            (Vec::new(), table)
        });
        fields.push(PgField {
            sql: quote_ident(&name),
            name,
            kind,
            // An array is cast as SQLAlchemy casts an array value: to the column's declared
            // type with its modifiers (`integer[]`, `numeric(10,2)[]`).
            extra: PgCast {
                cast: if kind.is_array() { row.get(11) } else { base },
            },
            not_null: row.get(5),
            has_default: row.get(6),
            primary_key: false,
            // `serial` is autoincrement only on an integer key (never an array).
            autoincrement: row.get::<_, bool>(7) && kind == PgKind::Integer,
            generated: row.get(8),
        });
    }
    let select = |f: &PgField| f.kind.select(&f.sql);
    let foreign_keys: Vec<(String, String)> = client
        .query(FOREIGN_KEYS, &[])
        .await
        .map_err(internal)?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    Ok(PgModel::models(tables, &keys, &foreign_keys, select))
}

fn internal(e: tokio_postgres::Error) -> EngineError {
    EngineError::Internal(format!("reading the database's schema: {e}"))
}
