//! PostgreSQL's side of the flows (`crate::flow`): a write's transaction as `flow::delete` uses
//! it, the foreign keys that refer to a table (as SQLAlchemy's PostgreSQL dialect reflects them:
//! every key of the tables in the same schema, `ON DELETE` from the catalog), and how the ORM
//! tells rows apart (the primary key, else the first column, read as text and bound as text cast
//! to the column's type).

use tokio_postgres::types::ToSql;

use crate::engine::EngineError;
use crate::flow::{self, Columns, Locator, OnDelete, TableRef};
use crate::postgres::PgResource;
use crate::postgres::schema::PgModel;

/// A connection inside a write's transaction, as the flows use it. Its values are text (or
/// NULL): the flows only carry back what they read, and every expression they read is cast to
/// text.
pub(crate) struct PgConnection<'a> {
    pub(crate) tx: &'a tokio_postgres::Client,
    pub(crate) resource: &'a PgResource,
    /// The model the request names, whose messages a database error takes.
    pub(crate) model: &'a PgModel,
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
const IDENTITY: &str = "\
SELECT quote_ident(a.attname), format_type(a.atttypid, a.atttypmod)
FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
WHERE i.indrelid = $1::text::regclass AND i.indisprimary
ORDER BY array_position(i.indkey::int2[], a.attnum)";

const FIRST_COLUMN: &str = "\
SELECT quote_ident(attname), format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = $1::text::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum LIMIT 1";

/// A model's table.
pub(crate) fn table(model: &PgModel) -> TableRef {
    TableRef {
        name: model.table_sql.clone(),
        sql: model.table_sql.clone(),
    }
}

/// The foreign keys that refer to the table `$1` (its `"schema"."table"`), from tables of the
/// same schema (the ones the engine maps), each with its columns in the key's order; the
/// constraints a partition inherits are its parent's, listed once.
const REFERENCES: &str = "\
SELECT quote_ident(cn.nspname) || '.' || quote_ident(c.relname),
       ARRAY(SELECT quote_ident(a.attname) FROM unnest(k.conkey) WITH ORDINALITY AS u(n, i)
             JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n ORDER BY u.i),
       ARRAY(SELECT quote_ident(a.attname) FROM unnest(k.confkey) WITH ORDINALITY AS u(n, i)
             JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.n ORDER BY u.i),
       k.confdeltype::text,
       NOT EXISTS (SELECT 1 FROM unnest(k.conkey) AS u(n)
                   JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n
                   WHERE a.attnotnull),
       EXISTS (SELECT 1 FROM pg_constraint p
               WHERE p.conrelid = k.conrelid AND p.contype = 'p' AND p.conkey && k.conkey)
       OR (NOT EXISTS (SELECT 1 FROM pg_constraint p
                       WHERE p.conrelid = k.conrelid AND p.contype = 'p')
           AND (SELECT min(attnum) FROM pg_attribute
                WHERE attrelid = k.conrelid AND attnum > 0 AND NOT attisdropped) = ANY(k.conkey))
FROM pg_constraint k
JOIN pg_class c ON c.oid = k.conrelid
JOIN pg_namespace cn ON cn.oid = c.relnamespace
WHERE k.contype = 'f' AND k.conparentid = 0 AND k.confrelid = $1::text::regclass
  AND c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = $1::text::regclass)
ORDER BY 1, k.conname";

impl PgConnection<'_> {
    fn error(&self, e: tokio_postgres::Error) -> EngineError {
        self.resource.write_error(self.model, e)
    }
}

fn binds(params: &[Option<String>]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl flow::Connection for PgConnection<'_> {
    type Value = Option<String>;

    async fn query(
        &mut self,
        sql: &str,
        params: &[Option<String>],
    ) -> Result<Vec<Vec<Option<String>>>, EngineError> {
        let rows = self
            .tx
            .query(sql, &binds(params))
            .await
            .map_err(|e| self.error(e))?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| {
                        row.try_get::<_, Option<String>>(i)
                            .map_err(|e| self.error(e))
                    })
                    .collect()
            })
            .collect()
    }

    async fn references_to(
        &mut self,
        parent: &TableRef,
    ) -> Result<Vec<flow::Reference>, EngineError> {
        let rows = self
            .tx
            .query(REFERENCES, &[&parent.name])
            .await
            .map_err(|e| self.resource.unexpected(e))?;
        Ok(rows
            .iter()
            .map(|r| {
                let child: String = r.get(0);
                flow::Reference {
                    child: TableRef {
                        name: child.clone(),
                        sql: child,
                    },
                    from: r.get(1),
                    to: r.get(2),
                    on_delete: match r.get::<_, String>(3).as_str() {
                        "c" => OnDelete::Cascade,
                        "n" => OnDelete::SetNull,
                        _ => OnDelete::Other,
                    },
                    nullable: r.get(4),
                    in_child_key: r.get(5),
                }
            })
            .collect())
    }

    async fn columns(
        &mut self,
        table: &TableRef,
        which: Columns,
    ) -> Result<Vec<(String, String)>, EngineError> {
        let sql = match which {
            Columns::PrimaryKey => IDENTITY,
            Columns::First => FIRST_COLUMN,
        };
        let rows = self.tx.query(sql, &[&table.name]).await;
        let rows = rows.map_err(|e| self.resource.unexpected(e))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// Read as text, found again by the text cast to the column's type.
    fn identity_sql(col: &str, ty: &str, n: usize) -> (String, String) {
        (format!("{col}::text"), format!("{col} = ${n}::text::{ty}"))
    }
}
