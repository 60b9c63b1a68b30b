//! A record's delete, as the engine's ORM makes it: SQLAlchemy's automap gives every table a
//! collection of the rows that refer to it through each foreign key, and deleting a row
//! flushes what those collections say:
//!
//! - through a key whose columns are all nullable, the referring rows get NULL there (unless
//!   the key says `ON DELETE SET NULL`: automap then sets `passive_deletes` and leaves them to
//!   the database);
//! - through a key with a NOT NULL column, the collection is `delete-orphan`: the referring
//!   rows are deleted first, and what refers to them in turn (unless the key says
//!   `ON DELETE CASCADE`: passive again, the database's work);
//! - a referring column that is part of the referring row's primary key (or is the first
//!   column of a table without one, which the engine promotes to its key) cannot be blanked
//!   out: SQLAlchemy fails (`500`), the emulator refuses with a `400` that says what to delete
//!   first ([decision: stricter]);
//! - the ORM reaches rows by identity: where a promoted key repeats, setting NULL fails
//!   (`400 Query failed`, nothing changed) and a delete takes every row that shares the key.
//!
//! What is left to the database is done by it where it enforces foreign keys (PostgreSQL,
//! MySQL) and not at all where it does not (the engine runs SQLite without them).

use std::collections::HashSet;

use crate::dialect::bind::Bind;
use crate::flow::database::Database;
use crate::flow::driver::Session;
use crate::flow::references::{Cascade, Cascades, Locator, OnDelete, Reference, TableRef};
use svc_engine::EngineError;
use svc_engine::body::{non_field, query_failed};

/// Deletes one row of `table` as the ORM does, by `where_sql` (bound from `row`, which `at`
/// found it by): first what it does to the rows that refer to it ([`follow_references`]).
pub async fn delete_row<C: Cascades>(
    conn: &mut C,
    table: &TableRef,
    at: &Locator,
    row: Vec<C::Value>,
    where_sql: &str,
) -> Result<(), EngineError> {
    follow_references(conn, table, at, row.clone()).await?;
    let sql = format!("DELETE FROM {} WHERE {where_sql}", table.sql);
    conn.execute(&sql, &row).await?;
    Ok(())
}

/// Deletes the row a write's transaction `tx` locked, as [`delete_row`] does, over the
/// database's catalog and the transaction ([`Cascade`]; a refusal is the write's, in `model`'s
/// terms).
pub async fn delete_locked<D: Database>(
    db: &D,
    tx: &mut Session<D>,
    model: &D::Model,
    table: &TableRef,
    at: &Locator,
    row: Vec<Bind>,
    where_sql: &str,
) -> Result<(), EngineError> {
    let mut cascade = Cascade { db, tx, model };
    delete_row(&mut cascade, table, at, row, where_sql).await
}

/// Does to the rows that refer to one row of `table` (the row `at` finds from `row`) what the
/// ORM does before it deletes that row: sets references to NULL, and deletes the rows it must,
/// each after what refers to it in turn. The row itself is left for the caller to delete.
pub async fn follow_references<C: Cascades>(
    conn: &mut C,
    table: &TableRef,
    at: &Locator,
    row: Vec<C::Value>,
) -> Result<(), EngineError> {
    let mut seen = HashSet::from([seen_key(table, &row)]);
    let mut to_visit = vec![(table.clone(), at.clone(), row)];
    // The rows the ORM deletes, in the order they were found: deleted last found first, so
    // that a row goes before the row it refers to.
    let mut doomed: Vec<(TableRef, Locator, Vec<C::Value>)> = Vec::new();
    while let Some((parent, at, row)) = to_visit.pop() {
        for reference in conn.references_to(&parent).await? {
            if left_to_the_database(&reference) {
                continue;
            }
            let referring = referring(&reference, &parent, &at);
            let child = &reference.child;
            let child_at = conn.locator(child).await?;
            if !reference.nullable {
                let sql = format!(
                    "SELECT {} FROM {} WHERE {referring}",
                    child_at.select, child.sql
                );
                for found in conn.query(&sql, &row).await? {
                    if seen.insert(seen_key(child, &found)) {
                        to_visit.push((child.clone(), child_at.clone(), found.clone()));
                        doomed.push((child.clone(), child_at.clone(), found));
                    }
                }
                continue;
            }
            if reference.in_child_key {
                let sql = format!(
                    "SELECT {} FROM {} WHERE {referring} LIMIT 1",
                    child_at.select, child.sql
                );
                if !conn.query(&sql, &row).await?.is_empty() {
                    return Err(refers_through_its_key(child));
                }
                continue;
            }
            if child_at.may_repeat {
                // The ORM sets NULL row by identity and expects one row each: where a promoted
                // key repeats, its flush fails (`400 Query failed`) and the transaction rolls
                // back.
                let sql = format!(
                    "SELECT {key} FROM {table} WHERE {key} IN (SELECT {key} FROM {table} \
                     WHERE {referring}) GROUP BY {key} HAVING count(*) > 1 LIMIT 1",
                    key = child_at.select,
                    table = child.sql
                );
                if !conn.query(&sql, &row).await?.is_empty() {
                    return Err(query_failed());
                }
            }
            let nulls: Vec<String> = reference
                .from
                .iter()
                .map(|c| format!("{c} = NULL"))
                .collect();
            let sql = format!(
                "UPDATE {} SET {} WHERE {referring}",
                child.sql,
                nulls.join(", ")
            );
            conn.execute(&sql, &row).await?;
        }
    }
    for (table, at, row) in doomed.into_iter().rev() {
        let sql = format!("DELETE FROM {} WHERE {}", table.sql, at.condition);
        conn.execute(&sql, &row).await?;
    }
    Ok(())
}

/// Whether automap sets `passive_deletes` on the key's collection, leaving the referring rows
/// to the database.
fn left_to_the_database(reference: &Reference) -> bool {
    match reference.on_delete {
        OnDelete::SetNull => reference.nullable,
        OnDelete::Cascade => !reference.nullable,
        OnDelete::Other => false,
    }
}

/// The condition on the child's rows that refer to the parent's row that `at` finds: the
/// parent's referred values read in a derived table, which MySQL needs to change a table
/// (a self-reference) while it reads it.
fn referring(reference: &Reference, parent: &TableRef, at: &Locator) -> String {
    let from = match reference.from.as_slice() {
        [one] => one.clone(),
        many => format!("({})", many.join(", ")),
    };
    format!(
        "{from} IN (SELECT * FROM (SELECT {} FROM {} WHERE {}) AS referred)",
        reference.to.join(", "),
        parent.sql,
        at.condition
    )
}

fn seen_key<V: std::fmt::Debug>(table: &TableRef, row: &[V]) -> String {
    format!("{}\u{0}{row:?}", table.name)
}

fn refers_through_its_key(child: &TableRef) -> EngineError {
    non_field(format!(
        "Cannot delete this record: records of {} refer to it through their primary key. \
         Delete them first.",
        child.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::references::{Columns, run_now};

    /// A connection that answers from a script and records every statement: the flow's
    /// order and its SQL, without a database (the databases run it in the conformance suite).
    struct Scripted {
        references: Vec<(String, Reference)>,
        /// The rows each `SELECT` of a child table's locator finds, by child table.
        children: Vec<(String, Vec<Vec<i64>>)>,
        log: Vec<String>,
    }

    fn table(name: &str) -> TableRef {
        TableRef {
            name: name.to_owned(),
            sql: format!("\"{name}\""),
        }
    }

    fn key(child: &str, nullable: bool, on_delete: OnDelete) -> Reference {
        Reference {
            child: table(child),
            from: vec!["\"p_id\"".to_owned()],
            to: vec!["\"id\"".to_owned()],
            on_delete,
            nullable,
            in_child_key: false,
        }
    }

    impl Cascades for Scripted {
        type Value = i64;

        async fn query(&mut self, sql: &str, params: &[i64]) -> Result<Vec<Vec<i64>>, EngineError> {
            self.log.push(format!("{sql} {params:?}"));
            let from = sql.split(" FROM ").nth(1).unwrap_or_default();
            Ok(self
                .children
                .iter()
                .find(|(t, _)| from.starts_with(&format!("\"{t}\"")))
                .map(|(_, rows)| rows.clone())
                .unwrap_or_default())
        }

        async fn references_to(
            &mut self,
            parent: &TableRef,
        ) -> Result<Vec<Reference>, EngineError> {
            Ok(self
                .references
                .iter()
                .filter(|(p, _)| *p == parent.name)
                .map(|(_, r)| r.clone())
                .collect())
        }

        async fn columns(
            &mut self,
            _: &TableRef,
            _: Columns,
        ) -> Result<Vec<(String, String)>, EngineError> {
            Ok(vec![("\"id\"".to_owned(), String::new())])
        }

        fn identity_sql(col: &str, _ty: &str, _n: usize) -> (String, String) {
            (col.to_owned(), format!("{col} = ?"))
        }
    }

    fn run(conn: &mut Scripted) -> Result<(), EngineError> {
        let at = Locator {
            select: "\"id\"".to_owned(),
            condition: "\"id\" = ?".to_owned(),
            may_repeat: false,
        };
        run_now(follow_references(conn, &table("p"), &at, vec![1]))
    }

    #[test]
    fn nullable_references_are_set_to_null_and_not_null_ones_deleted_deepest_first() {
        let mut conn = Scripted {
            references: vec![
                ("p".to_owned(), key("loose", true, OnDelete::Other)),
                ("p".to_owned(), key("owned", false, OnDelete::Other)),
                ("owned".to_owned(), key("deep", false, OnDelete::Other)),
            ],
            children: vec![
                ("owned".to_owned(), vec![vec![7]]),
                ("deep".to_owned(), vec![vec![9]]),
            ],
            log: Vec::new(),
        };
        run(&mut conn).unwrap();
        let referred = "IN (SELECT * FROM (SELECT \"id\" FROM \"p\" WHERE \"id\" = ?) AS referred)";
        assert_eq!(
            conn.log,
            [
                format!("UPDATE \"loose\" SET \"p_id\" = NULL WHERE \"p_id\" {referred} [1]"),
                format!("SELECT \"id\" FROM \"owned\" WHERE \"p_id\" {referred} [1]"),
                "SELECT \"id\" FROM \"deep\" WHERE \"p_id\" IN (SELECT * FROM (SELECT \"id\" \
                 FROM \"owned\" WHERE \"id\" = ?) AS referred) [7]"
                    .to_owned(),
                "DELETE FROM \"deep\" WHERE \"id\" = ? [9]".to_owned(),
                "DELETE FROM \"owned\" WHERE \"id\" = ? [7]".to_owned(),
            ]
        );
    }

    #[test]
    fn the_database_actions_automap_leaves_alone_are_skipped() {
        let mut conn = Scripted {
            references: vec![
                ("p".to_owned(), key("nulled_by_db", true, OnDelete::SetNull)),
                (
                    "p".to_owned(),
                    key("cascaded_by_db", false, OnDelete::Cascade),
                ),
                // The other way round is the ORM's: a nullable CASCADE key is set to NULL, a
                // NOT NULL SET NULL key deletes.
                (
                    "p".to_owned(),
                    key("nullable_cascade", true, OnDelete::Cascade),
                ),
                (
                    "p".to_owned(),
                    key("strict_set_null", false, OnDelete::SetNull),
                ),
            ],
            children: vec![("strict_set_null".to_owned(), vec![vec![3]])],
            log: Vec::new(),
        };
        run(&mut conn).unwrap();
        let tables: Vec<&str> = conn
            .log
            .iter()
            .map(|s| s.split('"').nth(1).unwrap_or_default())
            .collect();
        assert_eq!(tables, ["nullable_cascade", "id", "strict_set_null"]);
        assert!(conn.log[0].starts_with("UPDATE \"nullable_cascade\""));
        assert!(conn.log[2].starts_with("DELETE FROM \"strict_set_null\""));
    }

    #[test]
    fn a_cycle_of_not_null_references_deletes_each_row_once() {
        let mut conn = Scripted {
            references: vec![("p".to_owned(), key("p", false, OnDelete::Other))],
            // Every lookup finds row 1 (the row itself) and row 2.
            children: vec![("p".to_owned(), vec![vec![1], vec![2]])],
            log: Vec::new(),
        };
        run(&mut conn).unwrap();
        let deletes: Vec<&String> = conn
            .log
            .iter()
            .filter(|s| s.starts_with("DELETE"))
            .collect();
        assert_eq!(deletes, ["DELETE FROM \"p\" WHERE \"id\" = ? [2]"]);
    }

    #[test]
    fn a_nullable_reference_inside_the_childs_key_is_refused() {
        let mut child_key = key("pairs", true, OnDelete::Other);
        child_key.in_child_key = true;
        let mut conn = Scripted {
            references: vec![("p".to_owned(), child_key.clone())],
            children: vec![("pairs".to_owned(), vec![vec![4]])],
            log: Vec::new(),
        };
        let e = run(&mut conn).unwrap_err();
        assert!(
            format!("{e:?}").contains("records of pairs refer to it"),
            "{e:?}"
        );
        // Nothing refers to it: nothing to refuse, nothing changed.
        let mut conn = Scripted {
            references: vec![("p".to_owned(), child_key)],
            children: Vec::new(),
            log: Vec::new(),
        };
        run(&mut conn).unwrap();
        assert_eq!(conn.log.len(), 1);
    }
}
