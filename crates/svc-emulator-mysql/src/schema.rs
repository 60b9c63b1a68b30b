//! What MySQL's catalog says, and what the flows keep in it: the models, the foreign keys
//! and row identities of a write, and the saved copies.
//!
//! # Models
//!
//! Reflection of a MySQL database: the base tables of the connection's database (as the
//! engine's SQLAlchemy reflects them) become models, their columns fields.
//!
//! Everything is read from `information_schema` with bound parameters; identifiers found this
//! way are the only ones ever written into SQL, always through [`quote_ident`].
//!
//! # Foreign keys and identity
//!
//! MySQL's side of a delete's cascade (`svc_emulator_core::flow::delete`, over the core's
//! `Cascade` of a write's transaction): the foreign keys that refer to a table (as SQLAlchemy's
//! MySQL dialect reflects them: the keys of the tables of the same database, `ON DELETE` as the
//! server lists it), and how rows are told apart (the primary key, else the first column, which
//! the engine promotes).
//!
//! # Saved copies
//!
//! MySQL's side of a saved copy (`flow::snapshot`): the copy lives in a database of its own on the
//! same server (the user needs the privilege to create it); the next generated keys are each
//! table's `AUTO_INCREMENT`.
//!
//! A restore turns the foreign keys' checks off for its session (`FOREIGN_KEY_CHECKS = 0`, no
//! privilege needed) and writes keys of 0 as given (`NO_AUTO_VALUE_ON_ZERO`), both set back as
//! they were before the commit; a restore that fails gives its connection back to the pool,
//! which resets it (`svc-emulator-mysql/src/driver.rs`), so neither setting outlives it. The tables are emptied with `DELETE` rather than
//! `TRUNCATE`, which commits: the rows go back in one transaction (of InnoDB tables; a table of
//! another engine, MyISAM, keeps what was done before a failure). MySQL cannot turn a table's
//! triggers off, and `DROP TRIGGER` commits: the saved tables' triggers are dropped before the
//! transaction and made again after it, failed or not (`set_aside`), so that none fires as the
//! rows go back.
//! Setting an `AUTO_INCREMENT` commits too, so the keys are set after the commit, and only
//! where they moved.

use crate::driver::{skip_quoted, text_rows};
use crate::types::{MyKind, cell_number, cell_text, cell_truth};
use crate::{MyResource, message, server_code};
use mysql_async::{Conn, Row};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use svc_emulator_core::dialect::bind::{Bind, Binds};
use svc_emulator_core::flow::driver::{Driver, Session};
use svc_emulator_core::flow::export::{Aside, SavedTable};
use svc_engine::EngineError;
use svc_engine::table::{MappedColumn, MappedTable, Reflected};

/// `name` as a MySQL identifier: in backquotes, a backquote doubled.
pub(crate) fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// A column, and what MySQL keeps beside.
pub(crate) type MyField = MappedColumn<MyKind, MyColumn>;

/// What a MySQL column keeps beside the engine's reading of it.
#[derive(Debug, Clone, PartialEq)]
pub struct MyColumn {
    /// The members of an `ENUM` or `SET`, in definition order.
    pub members: Vec<String>,
    /// `table`.`column`.
    pub qualified: String,
    /// A `TIMESTAMP` (not a `DATETIME`): SQLAlchemy's MySQL `TIMESTAMP` is no `DATETIME`, so the
    /// engine writes an aware value's wall time, not the instant in the engine's zone.
    pub timestamp: bool,
}

/// A table, and its storage engine: InnoDB's changes move its transaction counter (see
/// `walks`).
pub(crate) type MyModel = MappedTable<MyField, InnoDb>;

/// The table is a base table of InnoDB.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InnoDb(pub bool);

/// The columns of every table and view of the current database, in order (the engine's
/// SQLAlchemy reflects views too: jet-bridge asks for them).
const COLUMNS: &str = "\
SELECT c.TABLE_NAME, c.COLUMN_NAME, c.DATA_TYPE, c.COLUMN_TYPE, \
       c.COLUMN_DEFAULT, c.EXTRA, \
       c.IS_NULLABLE = 'NO', t.TABLE_TYPE = 'BASE TABLE' AND t.ENGINE = 'InnoDB', \
       t.TABLE_TYPE = 'BASE TABLE' \
FROM information_schema.COLUMNS c \
JOIN information_schema.TABLES t ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME \
WHERE c.TABLE_SCHEMA = DATABASE() AND t.TABLE_TYPE IN ('BASE TABLE', 'VIEW') \
ORDER BY c.TABLE_NAME, c.ORDINAL_POSITION";

/// The foreign keys between tables of the current database, as `(referring, referred)` names
/// (one row per column of each key).
const FOREIGN_KEYS: &str = "SELECT TABLE_NAME, REFERENCED_TABLE_NAME \
     FROM information_schema.KEY_COLUMN_USAGE \
     WHERE TABLE_SCHEMA = DATABASE() AND REFERENCED_TABLE_SCHEMA = DATABASE()";

/// The columns of each primary key of the current database, in key order.
const PRIMARY_KEYS: &str = "\
SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE \
WHERE TABLE_SCHEMA = DATABASE() AND CONSTRAINT_NAME = 'PRIMARY' \
ORDER BY TABLE_NAME, ORDINAL_POSITION";

/// A row of [`COLUMNS`].
struct ColumnRow {
    table: String,
    name: String,
    data_type: String,
    column_type: String,
    default: Option<String>,
    extra: String,
    not_null: bool,
    of_innodb: bool,
    base: bool,
}

impl ColumnRow {
    fn read(row: &Row) -> ColumnRow {
        let text = |i| cell_text(row, i).unwrap_or_default();
        ColumnRow {
            table: text(0),
            name: text(1),
            data_type: text(2),
            column_type: text(3),
            default: cell_text(row, 4),
            extra: text(5),
            not_null: cell_truth(row, 6),
            of_innodb: cell_truth(row, 7),
            base: cell_truth(row, 8),
        }
    }
}

/// The first two cells of a row, as text: the catalog's names (a table and a column, a table
/// and the one it refers to, a trigger and its table).
fn two_texts(row: &Row) -> (String, String) {
    let text = |i| cell_text(row, i).unwrap_or_default();
    (text(0), text(1))
}

/// Reads the schema.
pub(crate) async fn load_schema(
    conn: &mut Conn,
) -> Result<BTreeMap<String, Arc<MyModel>>, EngineError> {
    let rows = text_rows(conn, COLUMNS).await.map_err(internal)?;
    let rows: Vec<ColumnRow> = rows.iter().map(ColumnRow::read).collect();
    let mut keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in text_rows(conn, PRIMARY_KEYS).await.map_err(internal)? {
        let (table, column) = two_texts(&row);
        keys.entry(table).or_default().push(column);
    }
    let mut tables: BTreeMap<String, (Vec<MyField>, Reflected<InnoDb>)> = BTreeMap::new();
    // The defaults SQLAlchemy reads from `SHOW CREATE TABLE`, asked only of the base tables
    // where a default's text alone does not say (MariaDB writes a default there as
    // `COLUMN_DEFAULT` holds it; MySQL quotes literals there and wraps expressions); a view's
    // come from `DESCRIBE`, quoted: every one counts.
    let unsure: BTreeSet<&str> = rows
        .iter()
        .filter(|r| {
            r.base
                && r.default
                    .as_deref()
                    .is_some_and(|d| d != "NULL" && !read_default(d))
        })
        .map(|r| r.table.as_str())
        .collect();
    let mut read_defaults: BTreeMap<String, BTreeMap<String, bool>> = BTreeMap::new();
    for table in unsure {
        let show = format!("SHOW CREATE TABLE {}", quote_ident(table));
        let shown = text_rows(conn, &show).await.map_err(internal)?;
        // The table's name, then its statement.
        let create = shown.first().and_then(|row| cell_text(row, 1));
        let create = create.unwrap_or_default();
        read_defaults.insert(table.to_owned(), reflected_defaults(&create));
    }
    for row in rows {
        let ColumnRow {
            table,
            name,
            data_type,
            column_type,
            default,
            extra,
            not_null,
            of_innodb,
            base,
        } = row;
        let has_default = default.is_some_and(|d| d != "NULL")
            && read_defaults
                .get(&table)
                .is_none_or(|d| d.get(&name).copied().unwrap_or(false));
        let kind = MyKind::of(&data_type, &column_type);
        let extra = extra.to_ascii_lowercase();
        let autoincrement = extra.contains("auto_increment");
        // Not MySQL's `DEFAULT_GENERATED`, an expression default.
        let generated = extra.contains("virtual")
            || extra.contains("stored generated")
            || extra.contains("persistent");
        let members = if matches!(kind, MyKind::Enum | MyKind::Set) {
            members(&column_type)
        } else {
            Vec::new()
        };
        let qualified = format!("{}.{}", quote_ident(&table), quote_ident(&name));
        let (fields, _) = tables.entry(table).or_insert_with_key(|t| {
            let table = Reflected {
                sql: quote_ident(t),
                holds_rows: base,
                related: false,
                extra: InnoDb(of_innodb),
            };
            (Vec::new(), table)
        });
        fields.push(MyField {
            sql: quote_ident(&name),
            name,
            kind,
            extra: MyColumn {
                members,
                qualified,
                timestamp: data_type.eq_ignore_ascii_case("timestamp"),
            },
            engine: kind.engine_type(),
            has_default: has_default || autoincrement || generated,
            not_null,
            primary_key: false,
            autoincrement,
            generated,
        });
    }
    let select = |f: &MyField| f.kind.select(&f.qualified);
    let foreign_keys = text_rows(conn, FOREIGN_KEYS).await.map_err(internal)?;
    let foreign_keys: Vec<(String, String)> = foreign_keys.iter().map(two_texts).collect();
    Ok(MyModel::models(tables, &keys, &foreign_keys, select))
}

/// Whether SQLAlchemy's MySQL reflection reads a default for each column of a table's
/// `SHOW CREATE TABLE` text. Its pattern takes `DEFAULT` and then `NULL`, a quoted literal, or a
/// run of word characters, `-`, `.`, `(` and `)` that ends the line or is followed by a space;
/// anything else is no default (`DEFAULT lcase('ABC')`, `DEFAULT concat('a','b')`), and the
/// ORM then sends NULL for the column when it is not given (`DEFAULT (1 + 2)` reads as `(1`,
/// a default, which the server applies).
fn reflected_defaults(create: &str) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    for line in create.lines() {
        let Some(rest) = line.strip_prefix("  `") else {
            continue;
        };
        let b = rest.as_bytes();
        // The name, a doubled backquote inside.
        let mut i = 0;
        while i < b.len() && !(b[i] == b'`' && b.get(i + 1) != Some(&b'`')) {
            i += if b[i] == b'`' { 2 } else { 1 };
        }
        let name = rest[..i.min(rest.len())].replace("``", "`");
        let after = &rest[(i + 1).min(rest.len())..];
        out.insert(name, default_clause(after).is_some_and(read_default));
    }
    out
}

/// The text after the first ` DEFAULT ` outside quotes, if any.
fn default_clause(text: &str) -> Option<&str> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\'' => i = skip_quoted(b, i, b'\''),
            b' ' if b[i..].starts_with(b" DEFAULT ") => return Some(&text[i + 9..]),
            _ => i += 1,
        }
    }
    None
}

/// Whether SQLAlchemy's pattern reads a default (not `NULL`) at the start of `text`.
fn read_default(text: &str) -> bool {
    let ends = |rest: &str| rest.is_empty() || rest.starts_with([' ', ',']);
    if let Some(rest) = text.strip_prefix("NULL")
        && ends(rest)
    {
        return false;
    }
    if text.starts_with('\'') {
        return true;
    }
    let run = text
        .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '(' | ')')))
        .unwrap_or(text.len());
    run > 0 && ends(&text[run..])
}

/// The members of `enum('a','b')` or `set('x','y')`: each quoted string, a doubled quote or a
/// backslash escaping the next character inside.
fn members(column_type: &str) -> Vec<String> {
    let b = column_type.as_bytes();
    let mut out = Vec::new();
    let mut i = column_type.find('(').unwrap_or(b.len());
    while i < b.len() {
        if b[i] != b'\'' {
            i += 1;
            continue;
        }
        let end = skip_quoted(b, i, b'\'');
        let inner = &b[i + 1..end.saturating_sub(1).max(i + 1)];
        let mut item = Vec::with_capacity(inner.len());
        let mut j = 0;
        while j < inner.len() {
            let escaped =
                inner[j] == b'\\' || (inner[j] == b'\'' && inner.get(j + 1) == Some(&b'\''));
            j += usize::from(escaped && j + 1 < inner.len());
            item.push(inner[j]);
            j += 1;
        }
        out.push(String::from_utf8_lossy(&item).into_owned());
        i = end;
    }
    out
}

fn internal(e: mysql_async::Error) -> EngineError {
    EngineError::Internal(format!(
        "reading the database's schema: {}",
        crate::message(&e)
    ))
}

/// The foreign keys of the database's tables that refer to the table `?`, one row per column
/// in each key's order, as `flow::catalog_references` reads them.
pub(crate) const REFERENCES: &str = "\
SELECT k.TABLE_NAME, CONCAT('`', REPLACE(k.TABLE_NAME, '`', '``'), '`'), k.CONSTRAINT_NAME,
       k.COLUMN_NAME, k.REFERENCED_COLUMN_NAME, r.DELETE_RULE,
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
pub(crate) const IDENTITY: &str = "\
SELECT COLUMN_NAME, '' FROM information_schema.KEY_COLUMN_USAGE
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND CONSTRAINT_NAME = 'PRIMARY'
ORDER BY ORDINAL_POSITION";

pub(crate) const FIRST_COLUMN: &str = "\
SELECT COLUMN_NAME, '' FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION LIMIT 1";

/// Each saved table with an `AUTO_INCREMENT` column (by its SQL name), and its next value.
pub(crate) type MyKeys = Vec<(String, u64)>;

/// The next `AUTO_INCREMENT` value of each table of the database that has one.
const AUTO_INCREMENTS: &str = "SELECT TABLE_NAME, AUTO_INCREMENT FROM information_schema.TABLES \
     WHERE TABLE_SCHEMA = DATABASE() AND AUTO_INCREMENT IS NOT NULL";

/// The server's errors of a privilege refused: to a database, to an action, to a table.
pub(crate) const ACCESS_DENIED: [u16; 3] = [1044, 1227, 1142];

/// The triggers of the current database, each with its table, in the order they act on it.
const TRIGGERS: &str = "SELECT TRIGGER_NAME, EVENT_OBJECT_TABLE FROM information_schema.TRIGGERS \
     WHERE TRIGGER_SCHEMA = DATABASE() \
     ORDER BY EVENT_OBJECT_TABLE, EVENT_MANIPULATION, ACTION_TIMING, ACTION_ORDER";

/// A trigger dropped for a restore or an import, and how to make it again.
struct DroppedTrigger {
    name: String,
    /// The `sql_mode` it was made in (its body is read in it).
    sql_mode: String,
    /// The statement that made it, as `SHOW CREATE TRIGGER` gives it.
    create: String,
}

/// `create` (a `CREATE TRIGGER` as `SHOW CREATE TRIGGER` gives it) without its `FOLLOWS` or
/// `PRECEDES` clause: the triggers are made again in the order they act, each after those that
/// act before it, which keeps their order, and a trigger it `PRECEDES` is not made yet.
/// MariaDB keeps the statement without the clause already; this is for a server that keeps it.
fn without_order_clause(create: &str) -> String {
    let b = create.as_bytes();
    // The header's words and names, up to the clause after `FOR EACH ROW` (the body may hold
    // anything, but the clause comes before it).
    let mut words: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'`' | b'\'' | b'"') => {
                let end = skip_quoted(b, i, q);
                words.push((i, end));
                i = end;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$')
                {
                    i += 1;
                }
                words.push((start, i));
            }
            _ => i += 1,
        }
        let word = |n: usize| words.get(n).map(|&(s, e)| &create[s..e]);
        let n = words.len();
        let is = |w: Option<&str>, k: &str| w.is_some_and(|w| w.eq_ignore_ascii_case(k));
        if n >= 5
            && is(word(n - 5), "FOR")
            && is(word(n - 4), "EACH")
            && is(word(n - 3), "ROW")
            && (is(word(n - 2), "FOLLOWS") || is(word(n - 2), "PRECEDES"))
        {
            let (clause, named) = (words[n - 2].0, words[n - 1].1);
            let rest = create[named..].trim_start();
            return format!("{}{rest}", &create[..clause]);
        }
        if n >= 4
            && is(word(n - 4), "FOR")
            && is(word(n - 3), "EACH")
            && is(word(n - 2), "ROW")
            && !(is(word(n - 1), "FOLLOWS") || is(word(n - 1), "PRECEDES"))
        {
            // `FOR EACH ROW` and then no order clause.
            break;
        }
    }
    create.to_owned()
}

/// Makes `triggers` again, in their order, each in its own `sql_mode`, on a connection of
/// `pool`: the session that dropped them may be in a failed transaction.
async fn make_triggers(
    pool: mysql_async::Pool,
    triggers: Vec<DroppedTrigger>,
) -> Result<(), EngineError> {
    let lost = |why: String| {
        let statements: Vec<&str> = triggers.iter().map(|t| t.create.as_str()).collect();
        EngineError::Internal(format!(
            "the tables' triggers were dropped while the rows went back (MySQL cannot turn a \
             trigger off) and could not be made again ({why}); make them again with: {}",
            statements.join("; ")
        ))
    };
    let mut conn = match pool.get_conn().await {
        Ok(conn) => conn,
        Err(e) => return Err(lost(message(&e))),
    };
    let mut failed = Vec::new();
    for trigger in &triggers {
        let made = async {
            let mode = Binds(vec![Bind::Text(trigger.sql_mode.clone())]);
            MyResource::each_row(&mut conn, "SET SESSION sql_mode = ?", &mode, &mut |_| {}).await?;
            text_rows(&mut conn, &without_order_clause(&trigger.create)).await
        };
        if let Err(e) = made.await {
            failed.push(format!("{}: {}", trigger.name, message(&e)));
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(lost(failed.join(", ")))
    }
}

impl MyResource {
    /// The next `AUTO_INCREMENT` of each of `tables` that has one, as the server has it now.
    pub(crate) async fn auto_increments(
        &self,
        conn: &mut Conn,
        tables: &[SavedTable],
    ) -> Result<MyKeys, EngineError> {
        if !self.mariadb {
            // MySQL 8 shows the catalog's statistics as cached for a day by default.
            text_rows(conn, "SET SESSION information_schema_stats_expiry = 0")
                .await
                .map_err(|e| self.unexpected(e))?;
        }
        let rows = text_rows(conn, AUTO_INCREMENTS)
            .await
            .map_err(|e| self.unexpected(e))?;
        let rows: Vec<(String, u64)> = rows
            .iter()
            .filter_map(|row| Some((cell_text(row, 0)?, cell_number(row, 1)?)))
            .collect();
        Ok(tables
            .iter()
            .filter_map(|t| {
                let (_, next) = rows.iter().find(|(name, _)| *name == t.name)?;
                Some((t.sql.clone(), *next))
            })
            .collect())
    }
}

/// MySQL cannot turn a trigger off, and `DROP TRIGGER` commits: the saved tables' triggers
/// are dropped before the transaction and made again after it, from `SHOW CREATE TRIGGER`,
/// each in the `sql_mode` it was made in and in the order they act, so that a row put back
/// is written once, not again by a trigger. Meanwhile other sessions' writes to those tables
/// fire none.
pub(crate) async fn set_aside_triggers(
    db: &MyResource,
    conn: &mut Session<MyResource>,
    tables: &[SavedTable],
) -> Result<Aside, EngineError> {
    let conn = conn.conn();
    let all = text_rows(conn, TRIGGERS)
        .await
        .map_err(|e| db.unexpected(e))?;
    let mut triggers = Vec::new();
    for (name, table) in all.iter().map(two_texts) {
        if !tables.iter().any(|t| t.name == table) {
            continue;
        }
        let show = format!("SHOW CREATE TRIGGER {}", quote_ident(&name));
        let shown = text_rows(conn, &show).await.map_err(|e| {
            if !server_code(&e).is_some_and(|code| ACCESS_DENIED.contains(&code)) {
                return db.unexpected(e);
            }
            EngineError::Internal(format!(
                "the table {table} has the trigger {name}, which must be set aside while \
                 the rows go back (MySQL cannot turn a trigger off, so it is dropped and \
                 made again), and this user may not: grant it the privilege \
                 (GRANT TRIGGER ON the database's tables) ({})",
                message(&e)
            ))
        })?;
        // The trigger's name, the `sql_mode` it was made in, the statement that made it.
        let Some((Some(sql_mode), Some(create))) = shown
            .first()
            .map(|row| (cell_text(row, 1), cell_text(row, 2)))
        else {
            return Err(EngineError::Internal(format!(
                "MySQL did not show how the trigger {name} of the table {table} was made \
                 (SHOW CREATE TRIGGER): it cannot be set aside while the rows go back"
            )));
        };
        triggers.push(DroppedTrigger {
            name,
            sql_mode,
            create,
        });
    }
    let mut dropped = Vec::new();
    for trigger in triggers {
        let drop = format!("DROP TRIGGER {}", quote_ident(&trigger.name));
        if let Err(e) = text_rows(conn, &drop).await {
            let why = message(&e);
            make_triggers(db.pool.clone(), dropped).await?;
            return Err(EngineError::Internal(format!(
                "cannot drop the trigger {} while the rows go back (MySQL cannot turn a \
                 trigger off; it is made again after): {why}; grant the TRIGGER privilege \
                 on the tables",
                trigger.name
            )));
        }
        dropped.push(trigger);
    }
    if dropped.is_empty() {
        // No connection taken to make nothing again.
        return Ok(Aside::put_back_by(std::future::ready(Ok(()))));
    }
    Ok(Aside::put_back_by(make_triggers(db.pool.clone(), dropped)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_triggers_order_clause_is_left_out_and_nothing_else() {
        let cases = [
            (
                "CREATE DEFINER=`root`@`localhost` TRIGGER first AFTER INSERT ON ordered FOR EACH \
                 ROW PRECEDES second INSERT INTO log (what) VALUES ('first')",
                "CREATE DEFINER=`root`@`localhost` TRIGGER first AFTER INSERT ON ordered FOR EACH \
                 ROW INSERT INTO log (what) VALUES ('first')",
            ),
            (
                "create trigger `a b` before update on `for each row` for each row follows \
                 `x``y` set NEW.n = 1",
                "create trigger `a b` before update on `for each row` for each row set NEW.n = 1",
            ),
            (
                "CREATE TRIGGER t AFTER DELETE ON s FOR EACH ROW INSERT INTO l VALUES ('PRECEDES x')",
                "CREATE TRIGGER t AFTER DELETE ON s FOR EACH ROW INSERT INTO l VALUES ('PRECEDES x')",
            ),
            (
                "CREATE TRIGGER t AFTER DELETE ON s FOR EACH ROW\nFOLLOWS u\nBEGIN END",
                "CREATE TRIGGER t AFTER DELETE ON s FOR EACH ROW\nBEGIN END",
            ),
        ];
        for (create, made) in cases {
            assert_eq!(without_order_clause(create), made);
        }
    }

    #[test]
    fn defaults_are_read_as_sqlalchemys_pattern_reads_them() {
        let create = "CREATE TABLE `d` (\n  `id` int(11) NOT NULL AUTO_INCREMENT,\n  \
                      `name` varchar(20) DEFAULT NULL,\n  `e` int(11) DEFAULT (1 + 2),\n  \
                      `f` varchar(10) DEFAULT lcase('ABC'),\n  \
                      `g` datetime DEFAULT '2020-01-01 00:00:00',\n  `h` int(11) DEFAULT 5,\n  \
                      `a``b` varchar(10) DEFAULT 'x' COMMENT 'no DEFAULT here',\n  \
                      `u` varchar(40) DEFAULT concat('a','b'),\n  \
                      `t` timestamp NOT NULL DEFAULT current_timestamp() ON UPDATE \
                      current_timestamp(),\n  `m` enum(' DEFAULT ','b') NOT NULL,\n  \
                      PRIMARY KEY (`id`)\n) ENGINE=InnoDB";
        let read = reflected_defaults(create);
        let has = |name: &str| read[name];
        assert!(!has("id") && !has("name") && !has("f") && !has("u") && !has("m"));
        assert!(has("e") && has("g") && has("h") && has("a`b") && has("t"));
    }

    #[test]
    fn members_are_read_from_the_column_type() {
        assert_eq!(members("enum('a','b c','it''s')"), ["a", "b c", "it's"]);
        assert_eq!(members("set('x','y')"), ["x", "y"]);
        assert_eq!(quote_ident("we`ird"), "`we``ird`");
    }
}
