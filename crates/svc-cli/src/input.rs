//! Reading input given on the command line: inline, `@file`, or `-` for stdin; passwords.

use std::io::{BufRead, IsTerminal, Read};

use crate::args::Password;
use crate::exit::Failure;

/// Text given inline, as `@file`, or as `-` (stdin), with where it came from.
fn text(arg: &str, inline_name: &str) -> Result<(String, String), Failure> {
    if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| Failure::Usage(format!("cannot read stdin: {e}")))?;
        Ok((s, "stdin".to_owned()))
    } else if let Some(path) = arg.strip_prefix('@') {
        let s = std::fs::read_to_string(path).map_err(|e| {
            Failure::usage_hint(
                format!("cannot read {path}: {e}"),
                "`@path` reads a file: check the path (without @, the argument is used as it is)",
            )
        })?;
        Ok((s, path.to_owned()))
    } else {
        Ok((arg.to_owned(), inline_name.to_owned()))
    }
}

/// JSON given inline, as `@file`, or as `-` (stdin).
pub fn json(arg: &str) -> Result<serde_json::Value, Failure> {
    let (text, from) = text(arg, "--data")?;
    serde_json::from_str(&text).map_err(|e| {
        Failure::usage_hint(
            format!("{from} is not valid JSON: {e}"),
            r#"give a JSON object, e.g. --data '{"name": "x"}', or --data @file.json, or --data - to read stdin"#,
        )
    })
}

/// Text given inline, as `@file`, or as `-` (stdin).
pub fn raw(arg: &str) -> Result<String, Failure> {
    Ok(text(arg, "--raw")?.0)
}

/// A query given inline, as `@file.sql`, or as `-` (stdin).
pub fn query(arg: &str) -> Result<String, Failure> {
    Ok(text(arg, "the query")?.0)
}

/// The password: one line of stdin with `--password-stdin`, else `SVC_PASSWORD`.
pub fn password(how: &Password) -> Result<String, Failure> {
    let password = if how.password_stdin {
        let stdin = std::io::stdin();
        if stdin.is_terminal() {
            eprint!("password (shown as you type): ");
        }
        let mut line = String::new();
        stdin
            .lock()
            .read_line(&mut line)
            .map_err(|e| Failure::Usage(format!("cannot read the password from stdin: {e}")))?;
        let line = line.strip_suffix('\n').unwrap_or(&line);
        line.strip_suffix('\r').unwrap_or(line).to_owned()
    } else {
        match std::env::var("SVC_PASSWORD") {
            Ok(p) => p,
            Err(_) => {
                return Err(Failure::usage_hint(
                    "no password given",
                    "pipe it in with --password-stdin (e.g. `pass show svc | svc login --email E --password-stdin`), or set SVC_PASSWORD",
                ));
            }
        }
    };
    if password.is_empty() {
        return Err(Failure::usage_hint(
            "the password is empty",
            "with --password-stdin, the first line of stdin is the password; otherwise set SVC_PASSWORD",
        ));
    }
    Ok(password)
}
