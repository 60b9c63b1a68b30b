//! What PostgreSQL's catalog says, and what the flows keep in it: the models, the foreign keys
//! and row identities of a write, and the saved copies.
//!
//! # Models
//!
//! Reflection of a PostgreSQL database: the tables, views, materialized views and foreign
//! tables of its current schema (usually `public`; the engine's SQLAlchemy reflects them all:
//! jet-bridge asks for views and foreign tables too) become models, their columns fields.
//!
//! Everything is read from the catalog with bound parameters; identifiers found this way are
//! the only ones ever written into SQL, always through [`quote_ident`].
//!
//! # Foreign keys and identity
//!
//! PostgreSQL's side of a delete's cascade (`flow::delete`, run over the core's
//! `flow::references::Cascade`): the foreign keys that refer to a table (as SQLAlchemy's
//! PostgreSQL dialect reflects them: every key of the tables in the same schema, `ON DELETE`
//! from the catalog), read in the write's transaction, and how the ORM tells rows apart (the
//! primary key, else the first column, read as text and bound as text cast to the column's
//! type: `Dialect::identity_sql`).
//!
//! # Saved copies
//!
//! PostgreSQL's side of a saved copy (`flow::snapshot`): the copy lives in a schema of its own of
//! the same database (the role needs `CREATE` on the database); the next generated keys are the
//! sequences the saved tables' columns own (`serial`, identity) or take their defaults from,
//! each with `last_value` and `is_called`.
//!
//! A restore runs in one transaction. It asks for `session_replication_role = replica` (a
//! superuser may, or a role granted `SET` on it): then neither the foreign keys' checks nor the
//! triggers fire. Where that is refused, the deferrable foreign keys are deferred and the
//! tables go back parents first (a cycle of keys checked at each statement is refused before
//! anything changes, saying what to do). Either way, the triggers of the saved tables that
//! would still fire (every enabled one; under `replica`, those made `ENABLE ALWAYS` or
//! `ENABLE REPLICA`) are disabled by name for the transaction where the role owns their table,
//! and enabled as they were before the commit; a trigger of a table it does not own fires. The
//! tables are emptied by one `TRUNCATE` (which needs that privilege): measured, 12 ms against
//! 21 ms for `DELETE` with a 10k-row table, and it leaves no dead rows behind. It also drops
//! the tables' row estimates (`pg_class.reltuples`) until the next `ANALYZE` (autovacuum's,
//! within a minute): an unfiltered list of a table of 10 000 rows or more, which shows the
//! estimate, counts exactly until then (the same number where the estimate was exact). The
//! sequences are set last inside the transaction, while its locks keep every insert waiting,
//! and after the deferred checks are made (`setval` is not rolled back: only a commit that
//! cannot be written leaves them as saved without the rows).

use crate::PgResource;
use crate::driver;
use crate::types::PgKind;
use deadpool_postgres::Object;
use std::collections::BTreeMap;
use std::sync::Arc;
use svc_emulator_core::dialect::bind::{Bind, Binds};
use svc_emulator_core::dialect::quote_ident;
use svc_emulator_core::flow::driver::Session;
use svc_emulator_core::flow::export::SavedTable;
use svc_emulator_core::flow::{Locator, TableRef};
use svc_engine::EngineError;
use svc_engine::table::{MappedColumn, MappedTable, Reflected};

/// A column, and the type a value for it is cast to where the engine would bind it as a text
/// literal (an unknown-typed literal takes the column's type): the base type,
/// schema-qualified.
pub(crate) type PgField = MappedColumn<PgKind, PgCast>;

/// The type a value for a column is cast to.
#[derive(Debug, Clone, PartialEq)]
pub struct PgCast {
    /// The type, schema-qualified (`"pg_catalog"."int4"`, `integer[]`).
    pub cast: String,
}

/// A table.
pub(crate) type PgModel = MappedTable<PgField>;

/// The type an untyped literal compared with `column` (`col = 'x'`, `col > 'x'`) becomes: the
/// column's own, but `inet` for a `cidr`, which PostgreSQL compares through `inet = inet` (so
/// `'1'`, a valid `cidr`, is an invalid `inet` there). In an `IN` list the literals take the
/// column's type.
pub(crate) fn compared_as(column: &PgField) -> &str {
    if column.kind == PgKind::Inet {
        "pg_catalog.inet"
    } else {
        &column.cast
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
    conn: &mut Object,
) -> Result<BTreeMap<String, Arc<PgModel>>, EngineError> {
    let none = Binds::default();
    let rows = driver::rows(conn, COLUMNS, &none).await;
    let rows = rows.map_err(internal)?;
    let mut keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in driver::rows(conn, PRIMARY_KEYS, &none)
        .await
        .map_err(internal)?
    {
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
            engine: kind.engine_type(),
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
    let foreign_keys: Vec<(String, String)> = driver::rows(conn, FOREIGN_KEYS, &none)
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

/// The row a write locked, by its `ctid`, which names it for as long as the transaction lasts.
pub(crate) fn by_ctid() -> Locator {
    Locator {
        select: "ctid::text".to_owned(),
        condition: "ctid = $1::text::tid".to_owned(),
        may_repeat: false,
    }
}

/// A table's primary key columns in key order, else its first column, each with its type.
pub(crate) const IDENTITY: &str = "\
SELECT a.attname, format_type(a.atttypid, a.atttypmod)
FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
WHERE i.indrelid = $1::text::regclass AND i.indisprimary
ORDER BY array_position(i.indkey::int2[], a.attnum)";

pub(crate) const FIRST_COLUMN: &str = "\
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = $1::text::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum LIMIT 1";

/// A model's table.
pub(crate) fn table(model: &PgModel) -> TableRef {
    TableRef {
        name: model.table_sql.clone(),
        sql: model.table_sql.clone(),
    }
}

/// The foreign keys that refer to the table `$1` (its `"schema"."table"`), from tables of the
/// same schema (the ones the engine maps), one row per column in each key's order, as
/// `flow::catalog_references` reads them; the constraints a partition inherits are its
/// parent's, listed once.
pub(crate) const REFERENCES: &str = "\
SELECT quote_ident(cn.nspname) || '.' || quote_ident(c.relname),
       quote_ident(cn.nspname) || '.' || quote_ident(c.relname),
       k.conname, a.attname, p.attname,
       CASE k.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE '' END,
       (NOT a.attnotnull)::int4,
       (EXISTS (SELECT 1 FROM pg_constraint pk
                WHERE pk.conrelid = k.conrelid AND pk.contype = 'p' AND u.f = ANY(pk.conkey))
        OR (NOT EXISTS (SELECT 1 FROM pg_constraint pk
                        WHERE pk.conrelid = k.conrelid AND pk.contype = 'p')
            AND u.f = (SELECT min(attnum) FROM pg_attribute
                       WHERE attrelid = k.conrelid AND attnum > 0 AND NOT attisdropped)))::int4
FROM pg_constraint k
JOIN pg_class c ON c.oid = k.conrelid
JOIN pg_namespace cn ON cn.oid = c.relnamespace
CROSS JOIN LATERAL unnest(k.conkey, k.confkey) WITH ORDINALITY AS u(f, t, i)
JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.f
JOIN pg_attribute p ON p.attrelid = k.confrelid AND p.attnum = u.t
WHERE k.contype = 'f' AND k.conparentid = 0 AND k.confrelid = $1::text::regclass
  AND c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = $1::text::regclass)
ORDER BY 1, k.conname, u.i";

/// A sequence, quoted and qualified, with its `last_value` and `is_called`.
pub(crate) type PgKeys = Vec<(String, i64, bool)>;

/// The sequences of the tables `$1` (their SQL names): owned by one of their columns (`serial`,
/// identity), or named by one of their columns' defaults (`nextval('...')`).
const SEQUENCES: &str = "\
SELECT DISTINCT quote_ident(n.nspname) || '.' || quote_ident(s.relname)
FROM pg_depend d
LEFT JOIN pg_attrdef a ON d.classid = 'pg_attrdef'::regclass AND a.oid = d.objid
JOIN pg_class s ON s.relkind = 'S'
 AND s.oid = CASE WHEN d.classid = 'pg_class'::regclass THEN d.objid ELSE d.refobjid END
JOIN pg_namespace n ON n.oid = s.relnamespace
WHERE d.refclassid = 'pg_class'::regclass
  AND ((d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
        AND d.refobjid IN (SELECT t::regclass FROM unnest($1::text[]) AS t))
    OR (d.classid = 'pg_attrdef'::regclass
        AND a.adrelid IN (SELECT t::regclass FROM unnest($1::text[]) AS t)))
ORDER BY 1";

/// Sets each sequence `$1` to its `last_value` `$2` and `is_called` `$3`.
pub(crate) const SET_SEQUENCES: &str = "\
SELECT pg_catalog.setval(s::regclass, v, c)
FROM unnest($1::text[], $2::int8[], $3::bool[]) AS u(s, v, c)";

/// The foreign keys among the tables `$1` checked at each statement (not deferrable), by the
/// names of the referring and the referred table; a partition's, inherited, counts once.
pub(crate) const CHECKED_REFERENCES: &str = "\
SELECT c.relname, p.relname FROM pg_constraint k
JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
WHERE k.contype = 'f' AND NOT k.condeferrable AND k.conparentid = 0
  AND k.conrelid IN (SELECT t::regclass FROM unnest($1::text[]) AS t)
  AND k.confrelid IN (SELECT t::regclass FROM unnest($1::text[]) AS t)";

/// The user's triggers of the tables `$1` that fire in the session's role (their `tgenabled`
/// among `$2`) and that the current role may disable (it owns their table): the table, the
/// trigger, how it is enabled.
pub(crate) const TRIGGERS: &str = "\
SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), quote_ident(t.tgname),
       t.tgenabled::text
FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE NOT t.tgisinternal AND t.tgenabled::text = ANY($2::text[])
  AND c.oid IN (SELECT x::regclass FROM unnest($1::text[]) AS x)
  AND pg_has_role(c.relowner, 'MEMBER')
ORDER BY 1, 2";

/// The SQL names of `tables`, for the statements that take them as an array.
pub(crate) fn names(tables: &[SavedTable]) -> Bind {
    Bind::Texts(tables.iter().map(|t| t.sql.clone()).collect())
}

impl PgResource {
    /// The sequences of `tables` (quoted and qualified, as the catalog names them).
    pub(crate) async fn sequences(
        &self,
        conn: &mut Session<Self>,
        tables: &[SavedTable],
    ) -> Result<Vec<String>, EngineError> {
        let rows = driver::rows(conn.conn(), SEQUENCES, &Binds(vec![names(tables)])).await;
        Ok(rows
            .map_err(|e| self.unexpected(e))?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }
}

/// A nullable plain column `name` of `kind`, cast as `cast` (tests).
#[cfg(test)]
pub(crate) fn test_field(name: &str, kind: PgKind, cast: &str) -> PgField {
    PgField {
        name: name.to_owned(),
        kind,
        engine: kind.engine_type(),
        extra: PgCast {
            cast: cast.to_owned(),
        },
        not_null: false,
        has_default: false,
        primary_key: false,
        autoincrement: false,
        generated: false,
        sql: format!("\"{name}\""),
    }
}
