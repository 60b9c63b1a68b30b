//! MySQL's side of the flows (`crate::flow`): a write's transaction as `flow::delete` uses it,
//! the foreign keys that refer to a table (as SQLAlchemy's MySQL dialect reflects them: the keys of
//! the tables of the same database, `ON DELETE` as the server lists it), and how rows are told
//! apart (the primary key, else the first column, which the engine promotes).

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Row, Value};

use crate::engine::EngineError;
use crate::flow::{self, Columns, OnDelete, TableRef};
use crate::mysql::MyResource;
use crate::mysql::schema::{MyModel, quote_ident};

/// A connection inside a write's transaction, as the flows use it.
pub(crate) struct MyConnection<'a> {
    pub(crate) tx: &'a mut Conn,
    pub(crate) resource: &'a MyResource,
    /// The model the request names, whose messages a database error takes.
    pub(crate) model: &'a MyModel,
}

/// A table of the database, by its name.
pub(crate) fn table(name: &str) -> TableRef {
    TableRef {
        name: name.to_owned(),
        sql: quote_ident(name),
    }
}

/// The foreign keys of the database's tables that refer to the table `?`, one row per column
/// in each key's order.
const REFERENCES: &str = "\
SELECT k.TABLE_NAME, k.CONSTRAINT_NAME, k.COLUMN_NAME, k.REFERENCED_COLUMN_NAME, r.DELETE_RULE,
       c.IS_NULLABLE = 'YES',
       c.COLUMN_KEY = 'PRI' OR (c.ORDINAL_POSITION = 1 AND NOT EXISTS
         (SELECT 1 FROM information_schema.TABLE_CONSTRAINTS t
          WHERE t.TABLE_SCHEMA = k.TABLE_SCHEMA AND t.TABLE_NAME = k.TABLE_NAME
            AND t.CONSTRAINT_TYPE = 'PRIMARY KEY'))
FROM information_schema.KEY_COLUMN_USAGE k
JOIN information_schema.REFERENTIAL_CONSTRAINTS r
  ON r.CONSTRAINT_SCHEMA = k.CONSTRAINT_SCHEMA AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME
 AND r.TABLE_NAME = k.TABLE_NAME
JOIN information_schema.COLUMNS c
  ON c.TABLE_SCHEMA = k.TABLE_SCHEMA AND c.TABLE_NAME = k.TABLE_NAME
 AND c.COLUMN_NAME = k.COLUMN_NAME
WHERE k.REFERENCED_TABLE_SCHEMA = DATABASE() AND k.TABLE_SCHEMA = DATABASE()
  AND k.REFERENCED_TABLE_NAME = ?
ORDER BY k.TABLE_NAME, k.CONSTRAINT_NAME, k.ORDINAL_POSITION";

/// A table's primary key columns in key order, else its first column.
const IDENTITY: &str = "\
SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY'
ORDER BY ORDINAL_POSITION";

const FIRST_COLUMN: &str = "\
SELECT COLUMN_NAME FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION LIMIT 1";

impl MyConnection<'_> {
    fn error(&self, e: mysql_async::Error) -> EngineError {
        self.resource.write_error(self.model, e)
    }
}

impl flow::Connection for MyConnection<'_> {
    type Value = Value;

    async fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, EngineError> {
        let rows: Vec<Row> = self
            .tx
            .exec(sql, params.to_vec())
            .await
            .map_err(|e| self.error(e))?;
        Ok(rows.into_iter().map(Row::unwrap).collect())
    }

    async fn references_to(
        &mut self,
        parent: &TableRef,
    ) -> Result<Vec<flow::Reference>, EngineError> {
        type KeyColumn = (String, String, String, String, String, bool, bool);
        let rows: Vec<KeyColumn> = self
            .tx
            .exec(REFERENCES, (parent.name.clone(),))
            .await
            .map_err(|e| self.resource.unexpected(e))?;
        let mut keys: Vec<(String, flow::Reference)> = Vec::new();
        for (child, name, from, to, rule, nullable, in_key) in rows {
            match keys.last_mut() {
                Some((last, r)) if *last == name && r.child.name == child => {
                    r.from.push(quote_ident(&from));
                    r.to.push(quote_ident(&to));
                    r.nullable &= nullable;
                    r.in_child_key |= in_key;
                }
                _ => keys.push((
                    name,
                    flow::Reference {
                        child: table(&child),
                        from: vec![quote_ident(&from)],
                        to: vec![quote_ident(&to)],
                        on_delete: OnDelete::named(&rule),
                        nullable,
                        in_child_key: in_key,
                    },
                )),
            }
        }
        Ok(keys.into_iter().map(|(_, r)| r).collect())
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
        let names: Result<Vec<String>, _> = self.tx.exec(sql, (table.name.clone(),)).await;
        let names = names.map_err(|e| self.resource.unexpected(e))?;
        Ok(names
            .iter()
            .map(|c| (quote_ident(c), String::new()))
            .collect())
    }
}
