//! Reading input given on the command line: inline, `@file`, or `-` for stdin; passwords, also
//! typed at a prompt.

use std::io::{BufRead, IsTerminal, Read, Write};

use crate::args::Password;
use crate::exit::Failure;
use crate::signals::{self, Interrupted, Signal};

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

/// Asks before deleting `what` (e.g. `page 3f2a...`): nothing to ask with `--yes`; on a
/// terminal, a `[y/N]` question on stderr, answered on stdin; off a terminal, a usage error
/// that names `--yes`, and nothing is deleted.
pub fn confirm_delete(what: &str, yes: bool) -> Result<(), Failure> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(Failure::usage_hint(
            format!("not deleting {what}: there is no terminal to ask on, and --yes was not given"),
            "add --yes to delete without being asked (e.g. in scripts and CI)",
        ));
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "delete {what}? [y/N] ");
    let _ = err.flush();
    drop(err);
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| Failure::Usage(format!("cannot read the answer: {e}")))?;
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => Err(Failure::usage_hint(
            format!("not deleting {what}: the answer was not yes"),
            "answer y to delete, or give --yes to skip the question",
        )),
    }
}

/// A password, and the Ctrl-C watcher when it was typed at a prompt.
pub struct Given {
    pub password: String,
    /// Installed for the prompt: from then on Ctrl-C no longer stops the process by itself, so
    /// the rest of the command must watch this (see [`signals::unless_stopped`]).
    pub stop: Option<Interrupted>,
}

/// The password: with `--password-stdin`, one line of stdin; else `SVC_PASSWORD`; else, when
/// stdin is a terminal, typed at `prompt`. Typed on a terminal (with `--password-stdin` too), it
/// is not shown; `confirm` asks for it twice (a new password).
pub fn password(how: &Password, prompt: &str, confirm: bool) -> Result<Given, Failure> {
    let on_terminal = std::io::stdin().is_terminal();
    let given = if how.password_stdin && !on_terminal {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| Failure::Usage(format!("cannot read the password from stdin: {e}")))?;
        let line = line.strip_suffix('\n').unwrap_or(&line);
        Given {
            password: line.strip_suffix('\r').unwrap_or(line).to_owned(),
            stop: None,
        }
    } else if let (false, Ok(password)) = (how.password_stdin, std::env::var("SVC_PASSWORD")) {
        Given {
            password,
            stop: None,
        }
    } else if on_terminal {
        typed(prompt, confirm)?
    } else {
        return Err(Failure::usage_hint(
            "no password given",
            "pipe it in with --password-stdin (e.g. `pass show svc | svc login --email E --password-stdin`), set SVC_PASSWORD, or run the command on a terminal to be asked for it",
        ));
    };
    crate::verbose::secret(&given.password);
    if given.password.is_empty() {
        return Err(Failure::usage_hint(
            "the password is empty",
            "type it at the prompt; with --password-stdin, the first line of stdin is the password; otherwise set SVC_PASSWORD",
        ));
    }
    Ok(given)
}

/// Reads the password from the terminal without showing it.
fn typed(prompt: &str, confirm: bool) -> Result<Given, Failure> {
    // The terminal is put in raw mode, where Ctrl-C is a key: the reader then raises SIGINT
    // itself. With a handler installed, that ends the read (and the terminal gets its echo
    // back) instead of killing the process with echo still off.
    let stop = signals::interrupt();
    let password = hidden(prompt)?;
    if confirm && !password.is_empty() && hidden("the same password again: ")? != password {
        return Err(Failure::usage_hint(
            "the two passwords typed differ",
            "run the command again and type the same password twice",
        ));
    }
    Ok(Given {
        password,
        stop: Some(stop),
    })
}

fn hidden(prompt: &str) -> Result<String, Failure> {
    // The prompt goes where the command's other messages go; the answer is read from stdin
    // itself (a terminal, checked by the caller), not from whatever /dev/tty is.
    let config = rpassword::ConfigBuilder::new().output_writer(std::io::stderr());
    #[cfg(unix)]
    let config = config.input_file_path("/dev/stdin");
    rpassword::prompt_password_with_config(prompt, config.build()).map_err(|e| match e.kind() {
        std::io::ErrorKind::Interrupted => Failure::Interrupted(Signal::Interrupt),
        std::io::ErrorKind::UnexpectedEof => Failure::usage_hint(
            "no password typed (the input ended)",
            "type the password and press Enter",
        ),
        _ => Failure::Usage(format!("cannot read the password from the terminal: {e}")),
    })
}
