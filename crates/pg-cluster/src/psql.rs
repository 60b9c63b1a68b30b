//! Running SQL through `psql`, and the small pieces of SQL and URL syntax a cluster needs.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::Error;
use crate::account::clean_environment;
use crate::binaries::Binaries;
use crate::start::SUPERUSER;

/// The longest name PostgreSQL keeps (NAMEDATALEN - 1 bytes); it cuts longer ones silently.
const MAX_NAME_BYTES: usize = 63;

/// Runs `sql` (one or more statements, or psql commands) through
/// `psql -X -q -v ON_ERROR_STOP=1 -At` against `database`; returns psql's stdout.
///
/// The SQL goes in on stdin, so that each statement runs on its own (as in a script file)
/// and every result is printed; `-q` leaves out the command tags (`CREATE TABLE`, `INSERT 0
/// 1`), so the output is only the rows: one a line, columns separated by `|`.
pub(crate) fn run(
    binaries: &Binaries,
    port: u16,
    database: &str,
    sql: &str,
) -> Result<String, Error> {
    let psql = binaries.program("psql");
    let mut command = Command::new(&psql);
    clean_environment(&mut command);
    // The connection by environment: `-d NAME` would read a name holding `=` as a
    // connection string.
    command
        .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-f", "-"])
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", port.to_string())
        .env("PGUSER", SUPERUSER)
        .env("PGDATABASE", database)
        .env("PGCLIENTENCODING", "UTF8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .map_err(|e| Error::new(format!("cannot run {}: {e}", psql.display())))?;
    let stdin = child.stdin.take();
    // Written from a thread: psql prints while it reads, and a large script with a large
    // output would otherwise fill both pipes and wait forever. A write error means psql
    // stopped reading (it failed, ON_ERROR_STOP): its exit status and stderr tell why.
    let output = std::thread::scope(|scope| {
        scope.spawn(move || {
            if let Some(mut stdin) = stdin {
                let _ = stdin.write_all(sql.as_bytes());
            }
        });
        child.wait_with_output()
    })
    .map_err(|e| Error::new(format!("cannot run {}: {e}", psql.display())))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let stderr = stderr.trim();
        return Err(Error::new(format!(
            "psql on database {database:?} at 127.0.0.1:{port} failed ({}): {}",
            output.status,
            if stderr.is_empty() {
                "(nothing on stderr)"
            } else {
                stderr
            }
        )));
    }
    String::from_utf8(output.stdout).map_err(|e| {
        Error::new(format!(
            "psql on database {database:?} printed bytes that are not UTF-8 ({e}), although it \
             ran with PGCLIENTENCODING=UTF8"
        ))
    })
}

/// `CREATE DATABASE "name" TEMPLATE template0`: template0 is never connected to (no "source
/// database is being accessed by other users") and never changed, so the database is empty.
pub(crate) fn create_database_sql(name: &str) -> Result<String, Error> {
    if name.is_empty() || name.contains('\0') || name.len() > MAX_NAME_BYTES {
        return Err(Error::new(format!(
            "cannot create database {name:?}: a name is 1 to {MAX_NAME_BYTES} bytes without NUL \
             (PostgreSQL would cut a longer one, and the URL would name another database)"
        )));
    }
    Ok(format!(
        "CREATE DATABASE {} TEMPLATE template0",
        quote_identifier(name)
    ))
}

/// `name` as an SQL identifier: in double quotes, with its double quotes doubled.
fn quote_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `name` as one URL path segment: unreserved characters as they are, any other byte as `%XX`.
pub(crate) fn url_segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_are_quoted_and_checked() {
        assert_eq!(
            create_database_sql("shop").expect("valid"),
            "CREATE DATABASE \"shop\" TEMPLATE template0"
        );
        assert_eq!(
            create_database_sql("a \"b\"; DROP").expect("valid"),
            "CREATE DATABASE \"a \"\"b\"\"; DROP\" TEMPLATE template0"
        );
        assert!(create_database_sql(&"x".repeat(63)).is_ok());
        for bad in ["", "a\0b", &"x".repeat(64), &"é".repeat(32)] {
            let err = create_database_sql(bad).expect_err(bad);
            assert!(err.to_string().contains("1 to 63 bytes"), "{err}");
        }
    }

    #[test]
    fn url_segments_encode_all_but_unreserved_characters() {
        assert_eq!(url_segment("shop_1-a.b~c"), "shop_1-a.b~c");
        assert_eq!(url_segment("a b/c?é"), "a%20b%2Fc%3F%C3%A9");
    }
}
