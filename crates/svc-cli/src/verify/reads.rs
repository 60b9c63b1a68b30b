//! Whether a case only reads: what verify may send to a reference without `--writes`.
//!
//! A reference may be production, and verify promises to send it nothing but reads unless told
//! otherwise. A create, update or delete is a write. SQL is sent to the reference's SQL route,
//! which on the data engine runs whatever it is given, so a SQL case is a read only when its
//! text is one plain `SELECT` that this module can read whole: words, numbers, `'...'`
//! literals, operators and `:name` parameters (a value the reference binds); no comment, no `;`, no quoted name, no word that writes or locks
//! (`insert`, `into`, `for`, `set`, ...), and no function but the few that only compute
//! (`count`, `min`, `lower`, ...): `pg_sleep`, `setval` and `get_lock` act. The generator's own
//! SQL is of that shape; anything else needs `--writes`.

use super::case::{Case, Op};

/// Words that write, lock, or reach outside the query, in any position.
const WRITING_WORDS: &[&str] = &[
    "alter",
    "analyze",
    "attach",
    "begin",
    "call",
    "cluster",
    "comment",
    "commit",
    "copy",
    "create",
    "deallocate",
    "delete",
    "detach",
    "do",
    "drop",
    "dumpfile",
    "exec",
    "execute",
    "for",
    "grant",
    "handler",
    "insert",
    "into",
    "listen",
    "load",
    "lock",
    "merge",
    "notify",
    "outfile",
    "pragma",
    "prepare",
    "refresh",
    "reindex",
    "release",
    "rename",
    "replace",
    "reset",
    "revoke",
    "rollback",
    "savepoint",
    "set",
    "start",
    "truncate",
    "unlisten",
    "update",
    "upsert",
    "vacuum",
];

/// Functions that only compute from their arguments.
const PURE_FUNCTIONS: &[&str] = &[
    "abs", "avg", "cast", "ceil", "coalesce", "count", "floor", "length", "lower", "max", "min",
    "nullif", "round", "sum", "trim", "upper",
];

/// Why sending `case` could change the reference's data; `None` when it only reads.
pub fn write_reason(case: &Case) -> Option<String> {
    match case.op {
        Op::Create | Op::Update | Op::Delete => Some(format!("{} changes data", case.op.name())),
        Op::Sql => {
            let text = case.body.as_ref().and_then(|b| b["query"].as_str());
            match text {
                None => Some("SQL without a query text".to_owned()),
                Some(text) => plain_select(text).err(),
            }
        }
        Op::List | Op::Retrieve | Op::Aggregate | Op::Group => None,
    }
}

/// `Ok` when `sql` is one plain `SELECT` (see the module's comment), else why it is not.
pub fn plain_select(sql: &str) -> Result<(), String> {
    let tokens = tokens(sql)?;
    match tokens.first() {
        Some(Token::Word(w)) if w == "select" => {}
        _ => return Err("SQL that is not a plain SELECT".to_owned()),
    }
    for (i, token) in tokens.iter().enumerate() {
        let Token::Word(word) = token else { continue };
        if WRITING_WORDS.contains(&word.as_str()) {
            return Err(format!("SQL with the word {word:?}"));
        }
        let called = tokens.get(i + 1) == Some(&Token::Open);
        if called && !PURE_FUNCTIONS.contains(&word.as_str()) {
            return Err(format!("SQL that calls {word}()"));
        }
    }
    Ok(())
}

#[derive(Debug, PartialEq)]
enum Token {
    /// A name or keyword, lowercase.
    Word(String),
    Open,
    Other,
}

/// The tokens of `sql`, or why it is not plain enough to read.
fn tokens(sql: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut word = String::from(c.to_ascii_lowercase());
                while let Some(&n) = chars.peek() {
                    if !(n.is_ascii_alphanumeric() || n == '_') {
                        break;
                    }
                    word.push(n.to_ascii_lowercase());
                    chars.next();
                }
                out.push(Token::Word(word));
            }
            c if c.is_ascii_digit() => {
                while chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_alphanumeric() || *n == '.')
                {
                    chars.next();
                }
                out.push(Token::Other);
            }
            '\'' => {
                // A literal; `''` is a quote inside it. A backslash is refused: MySQL reads it
                // as an escape, the others do not, so the literal's end is not known.
                loop {
                    match chars.next() {
                        None => return Err("SQL with an unclosed string".to_owned()),
                        Some('\\') => return Err("SQL with a backslash in a string".to_owned()),
                        Some('\'') if chars.peek() == Some(&'\'') => {
                            chars.next();
                        }
                        Some('\'') => break,
                        Some(_) => {}
                    }
                }
                out.push(Token::Other);
            }
            // A parameter: the reference binds a value in its place. Not `::` (a cast) nor
            // `:=` (MySQL's assignment, which writes a session variable).
            ':' if chars
                .peek()
                .is_some_and(|n| n.is_ascii_alphabetic() || *n == '_') =>
            {
                while chars
                    .peek()
                    .is_some_and(|n| n.is_ascii_alphanumeric() || *n == '_')
                {
                    chars.next();
                }
                out.push(Token::Other);
            }
            '(' => out.push(Token::Open),
            '-' if chars.peek() == Some(&'-') => return Err("SQL with a comment".to_owned()),
            '/' if chars.peek() == Some(&'*') => return Err("SQL with a comment".to_owned()),
            ')' | ',' | '*' | '.' | '=' | '<' | '>' | '!' | '+' | '-' | '/' | '%' => {
                out.push(Token::Other);
            }
            other => return Err(format!("SQL with {other:?} outside a string")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plain_selects_read() {
        for sql in [
            "select count(*) as n from books",
            "SELECT id, title FROM books ORDER BY id LIMIT 10",
            "select title, count(*) as n from books group by title order by count(*) desc, title limit 10",
            "select min(price) as lo, max(price) as hi from books",
            "select id from books where title = 'it''s' and price >= 1.5",
            "select id from books where id in :ids and title <> ':x'",
        ] {
            assert_eq!(plain_select(sql), Ok(()), "{sql}");
        }
    }

    #[test]
    fn anything_that_may_act_is_a_write() {
        for (sql, why) in [
            ("delete from books", "not a plain SELECT"),
            ("select 1; delete from books", "';'"),
            ("select * into backup from books", "\"into\""),
            ("select * from books for update", "\"for\""),
            ("select pg_sleep(10)", "calls pg_sleep()"),
            ("select setval('s', 1)", "calls setval()"),
            ("select get_lock ('x', 1)", "calls get_lock()"),
            ("select 1 -- x", "comment"),
            ("select @a := 1", "'@'"),
            ("select 1 :: text", "':'"),
            ("select /* x */ 1", "comment"),
            ("select \"a\" from b", "'\"'"),
            ("select `a` from b", "'`'"),
            ("select 'a\\' from b", "backslash"),
            ("select 'open", "unclosed"),
            (
                "with x as (delete from b returning *) select * from x",
                "not a plain SELECT",
            ),
            ("", "not a plain SELECT"),
        ] {
            let err = plain_select(sql).expect_err(sql);
            assert!(err.contains(why), "{sql}: {err}");
        }
    }

    #[test]
    fn writes_are_named_and_reads_are_not() {
        let mut case = Case::read(Op::List, "books", vec![]);
        assert_eq!(write_reason(&case), None);
        case.op = Op::Delete;
        assert_eq!(write_reason(&case).as_deref(), Some("delete changes data"));
        let mut sql = Case::sql("select count(*) from books");
        assert_eq!(write_reason(&sql), None);
        sql.body = Some(json!({"query": "drop table books"}));
        assert!(write_reason(&sql).is_some());
        sql.body = None;
        assert!(write_reason(&sql).is_some());
    }
}
