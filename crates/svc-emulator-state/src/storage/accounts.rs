//! Account tables in the meta store: the project's users with password hashes, issued refresh
//! tokens (for rotation), one-time codes, and the outbox where codes are "delivered".

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};

use crate::storage::StoreError;

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS account_users (
    project TEXT NOT NULL,
    uid TEXT NOT NULL,
    email TEXT NOT NULL COLLATE NOCASE,
    password_hash TEXT,
    first_name TEXT,
    last_name TEXT,
    language TEXT,
    timezone TEXT,
    date_add TEXT NOT NULL,
    token_generation INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (project, uid),
    UNIQUE (project, email)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS account_refresh_tokens (
    jti TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    user_uid TEXT NOT NULL,
    expires INTEGER NOT NULL,
    used INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS account_codes (
    code TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    user_uid TEXT NOT NULL,
    kind TEXT NOT NULL,
    new_email TEXT,
    expires INTEGER NOT NULL,
    used INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS account_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project TEXT NOT NULL,
    to_email TEXT NOT NULL,
    kind TEXT NOT NULL,
    code TEXT NOT NULL,
    date_add TEXT NOT NULL
);
";

/// Brings the account tables of a store written by an earlier version up to date: the
/// `token_generation` column came later (every existing account starts at 0, the generation of
/// tokens without one).
pub(crate) fn migrate(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(SCHEMA)?;
    let has_generation: bool = conn.query_row(
        "SELECT count(*) > 0 FROM pragma_table_info('account_users') WHERE name = 'token_generation'",
        [],
        |row| row.get(0),
    )?;
    if !has_generation {
        conn.execute_batch(
            "ALTER TABLE account_users ADD COLUMN token_generation INTEGER NOT NULL DEFAULT 0",
        )?;
    }
    Ok(())
}

/// A stored account.
#[derive(Debug, Clone)]
pub(crate) struct Account {
    pub(crate) uid: String,
    pub(crate) email: String,
    pub(crate) password_hash: Option<String>,
    pub(crate) first_name: Option<String>,
    pub(crate) last_name: Option<String>,
    pub(crate) language: Option<String>,
    pub(crate) timezone: Option<String>,
    pub(crate) date_add: String,
    /// Raised by every password change or reset: tokens signed with an earlier generation are
    /// no longer accepted.
    pub(crate) token_generation: i64,
}

impl Account {
    /// The `UserInfo` object of docs/contract.md 5.5.
    pub(crate) fn info(&self) -> Value {
        json!({
            "uid": self.uid,
            "username": self.email,
            "has_password": self.password_hash.is_some(),
            "email": self.email,
            "first_name": self.first_name,
            "last_name": self.last_name,
            "language": self.language,
            "timezone": self.timezone,
            "date_add": self.date_add,
        })
    }
}

const COLUMNS: &str = "uid, email, password_hash, first_name, last_name, language, timezone, \
                       date_add, token_generation";

fn row_to_account(row: &rusqlite::Row<'_>) -> rusqlite::Result<Account> {
    Ok(Account {
        uid: row.get(0)?,
        email: row.get(1)?,
        password_hash: row.get(2)?,
        first_name: row.get(3)?,
        last_name: row.get(4)?,
        language: row.get(5)?,
        timezone: row.get(6)?,
        date_add: row.get(7)?,
        token_generation: row.get(8)?,
    })
}

pub(crate) fn by_email(
    conn: &Connection,
    project: &str,
    email: &str,
) -> Result<Option<Account>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM account_users WHERE project = ?1 AND email = ?2");
    Ok(conn
        .query_row(&sql, params![project, email], row_to_account)
        .optional()?)
}

pub fn by_uid(conn: &Connection, project: &str, uid: &str) -> Result<Option<Account>, StoreError> {
    let sql = format!("SELECT {COLUMNS} FROM account_users WHERE project = ?1 AND uid = ?2");
    Ok(conn
        .query_row(&sql, params![project, uid], row_to_account)
        .optional()?)
}

pub(crate) fn insert(conn: &Connection, project: &str, a: &Account) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO account_users (project, uid, email, password_hash, first_name, last_name, language, timezone, date_add)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![project, a.uid, a.email, a.password_hash, a.first_name, a.last_name, a.language, a.timezone, a.date_add],
    )?;
    Ok(())
}

pub(crate) fn set_password(
    conn: &Connection,
    project: &str,
    uid: &str,
    hash: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE account_users SET password_hash = ?3 WHERE project = ?1 AND uid = ?2",
        params![project, uid, hash],
    )?;
    Ok(())
}

/// Raises the user's token generation, ending every token issued before; the new generation.
pub(crate) fn next_token_generation(
    conn: &Connection,
    project: &str,
    uid: &str,
) -> Result<i64, StoreError> {
    Ok(conn.query_row(
        "UPDATE account_users SET token_generation = token_generation + 1
         WHERE project = ?1 AND uid = ?2 RETURNING token_generation",
        params![project, uid],
        |row| row.get(0),
    )?)
}

/// Every account whose token generation is not 0: (project, uid, generation).
pub fn token_generations(conn: &Connection) -> Result<Vec<(String, String, i64)>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT project, uid, token_generation FROM account_users WHERE token_generation != 0",
    )?;
    let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub(crate) fn set_email(
    conn: &Connection,
    project: &str,
    uid: &str,
    email: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE account_users SET email = ?3 WHERE project = ?1 AND uid = ?2",
        params![project, uid, email],
    )?;
    Ok(())
}

pub(crate) fn remember_refresh(
    conn: &Connection,
    project: &str,
    uid: &str,
    jti: &str,
    expires: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO account_refresh_tokens (jti, project, user_uid, expires) VALUES (?1, ?2, ?3, ?4)",
        params![jti, project, uid, expires],
    )?;
    Ok(())
}

/// Marks a refresh token used; `false` when it was unknown or already used (rotation: a
/// refresh token works once).
pub(crate) fn use_refresh(conn: &Connection, project: &str, jti: &str) -> Result<bool, StoreError> {
    let changed = conn.execute(
        "UPDATE account_refresh_tokens SET used = 1 WHERE jti = ?1 AND project = ?2 AND used = 0",
        params![jti, project],
    )?;
    Ok(changed == 1)
}

/// Ends every session of a user (after a password change or reset).
pub(crate) fn revoke_refresh_tokens(
    conn: &Connection,
    project: &str,
    uid: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE account_refresh_tokens SET used = 1 WHERE project = ?1 AND user_uid = ?2",
        params![project, uid],
    )?;
    Ok(())
}

/// A one-time code to issue: who it is for, what it does, where it is delivered.
#[derive(Debug)]
pub(crate) struct NewCode<'a> {
    pub(crate) user_uid: &'a str,
    pub(crate) kind: &'a str,
    pub(crate) new_email: Option<&'a str>,
    pub(crate) to: &'a str,
    pub(crate) code: &'a str,
    pub(crate) expires: i64,
    pub(crate) date_add: &'a str,
}

/// Stores a one-time code and puts it in the outbox for `code.to`.
pub fn issue_code(conn: &Connection, project: &str, code: &NewCode<'_>) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO account_codes (code, project, user_uid, kind, new_email, expires) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![code.code, project, code.user_uid, code.kind, code.new_email, code.expires],
    )?;
    conn.execute(
        "INSERT INTO account_outbox (project, to_email, kind, code, date_add) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![project, code.to, code.kind, code.code, code.date_add],
    )?;
    Ok(())
}

/// Uses a one-time code of `kind`: the user's uid and the code's new email, or `None` when the
/// code is unknown, used, expired or of another kind.
pub(crate) fn use_code(
    conn: &Connection,
    project: &str,
    kind: &str,
    code: &str,
    now: i64,
) -> Result<Option<(String, Option<String>)>, StoreError> {
    let found = conn
        .query_row(
            "UPDATE account_codes SET used = 1
             WHERE code = ?1 AND project = ?2 AND kind = ?3 AND used = 0 AND expires > ?4
             RETURNING user_uid, new_email",
            params![code, project, kind, now],
            |row| Ok((row.get::<_, String>(0)?, row.get::<_, Option<String>>(1)?)),
        )
        .optional()?;
    Ok(found)
}

/// The outbox of a project, oldest first.
pub(crate) fn outbox(conn: &Connection, project: &str) -> Result<Vec<Value>, StoreError> {
    let mut stmt = conn.prepare(
        "SELECT to_email, kind, code, date_add FROM account_outbox WHERE project = ?1 ORDER BY id",
    )?;
    let rows = stmt.query_map(params![project], |row| {
        Ok(json!({
            "to": row.get::<_, String>(0)?,
            "kind": row.get::<_, String>(1)?,
            "code": row.get::<_, String>(2)?,
            "date_add": row.get::<_, String>(3)?,
        }))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store written before token generations existed gains the column; its accounts start
    /// at generation 0, the generation of the tokens they were given.
    #[test]
    fn an_earlier_store_gains_token_generations() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE account_users (
                project TEXT NOT NULL, uid TEXT NOT NULL, email TEXT NOT NULL COLLATE NOCASE,
                password_hash TEXT, first_name TEXT, last_name TEXT, language TEXT,
                timezone TEXT, date_add TEXT NOT NULL,
                PRIMARY KEY (project, uid), UNIQUE (project, email)
            ) WITHOUT ROWID;
            INSERT INTO account_users (project, uid, email, date_add)
                VALUES ('demo', 'u1', 'a@b.co', '2024-01-01T00:00:00.000Z');",
        )
        .unwrap();
        migrate(&conn).unwrap();
        migrate(&conn).unwrap();
        assert_eq!(
            by_uid(&conn, "demo", "u1")
                .unwrap()
                .unwrap()
                .token_generation,
            0
        );
        assert!(token_generations(&conn).unwrap().is_empty());
        assert_eq!(next_token_generation(&conn, "demo", "u1").unwrap(), 1);
        assert_eq!(next_token_generation(&conn, "demo", "u1").unwrap(), 2);
        assert_eq!(
            token_generations(&conn).unwrap(),
            [("demo".to_owned(), "u1".to_owned(), 2)]
        );
    }
}
