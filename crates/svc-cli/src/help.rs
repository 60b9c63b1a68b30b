//! The command as it is parsed and shown: the global options are listed once, in `svc --help`,
//! instead of on every subcommand's help, which points there.

use clap::CommandFactory;

use crate::args::Cli;

/// What subcommands say instead of repeating the global options.
const SEE_MAIN_HELP: &str = "Global options (--profile, --project, the base URLs, credentials, -o/--output, -v/--verbose, ...): see `svc --help`.";

/// Subcommands that take none of the global options, so that the note would only mislead.
const WITHOUT_GLOBALS: &[&str] = &["emulator", "demo", "help", "logout"];

/// Flags that other tools (curl, SQL clients, other SDKs' CLIs) name what svc names otherwise.
const SYNONYMS: [(&str, &str); 9] = [
    ("--limit", "--per-page"),
    ("--page-size", "--per-page"),
    ("--size", "--per-page"),
    ("--offset", "--page"),
    ("--bind", "--param"),
    ("--arg", "--param"),
    ("--where", "--filter"),
    ("--sort", "--order-by"),
    ("--order", "--order-by"),
];

/// `error`, for an unknown flag that is another tool's name of one the subcommand of `argv`
/// has, with that flag as its tip ("a similar argument exists: '--per-page'").
pub fn with_synonym(
    mut error: clap::Error,
    argv: impl IntoIterator<Item = std::ffi::OsString>,
) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::UnknownArgument {
        return error;
    }
    let Some(ContextValue::String(given)) = error.get(ContextKind::InvalidArg) else {
        return error;
    };
    let flag = given.split('=').next().unwrap_or_default();
    let Some((_, ours)) = SYNONYMS.iter().find(|(other, _)| *other == flag) else {
        return error;
    };
    // The subcommand the words name, as far as they name one.
    let mut command = command();
    for word in argv.into_iter().skip(1) {
        let word = word.to_string_lossy().into_owned();
        match command.find_subcommand(&word) {
            Some(sub) => command = sub.clone(),
            None if word.starts_with('-') => continue,
            None => break,
        }
    }
    let has = command.get_arguments().any(|a| {
        a.get_long()
            .is_some_and(|long| format!("--{long}") == *ours)
    });
    if has {
        error.insert(
            ContextKind::SuggestedArg,
            ContextValue::String((*ours).to_owned()),
        );
        // Not a value meant for a positional argument (clap's other tip): the flag is the fix.
        error.insert(ContextKind::Suggested, ContextValue::StyledStrs(Vec::new()));
    }
    error
}

/// The `svc` command with its help shaped for reading.
pub fn command() -> clap::Command {
    let mut command = Cli::command();
    // Global options are copied into every subcommand when the command is built, so they can
    // be hidden there only afterwards; they are still accepted in every position.
    command.build();
    for sub in command.get_subcommands_mut() {
        hide_global_options(sub);
    }
    command
}

fn hide_global_options(command: &mut clap::Command) {
    let mut shaped = std::mem::take(command).mut_args(|arg| {
        if arg.is_global_set() {
            arg.hide(true)
        } else {
            arg
        }
    });
    if !WITHOUT_GLOBALS.contains(&shaped.get_name()) {
        let note = match shaped.get_after_help() {
            Some(text) => format!("{text}\n\n{SEE_MAIN_HELP}"),
            None => SEE_MAIN_HELP.to_owned(),
        };
        shaped = shaped.after_help(note);
    }
    *command = shaped;
    for sub in command.get_subcommands_mut() {
        hide_global_options(sub);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn help(path: &[&str]) -> String {
        let mut command = command();
        let mut current = &mut command;
        for name in path {
            current = current.find_subcommand_mut(name).expect("subcommand");
        }
        current.render_long_help().to_string()
    }

    #[test]
    fn global_options_are_listed_once() {
        let main = help(&[]);
        assert!(
            main.contains("--api-base-url") && main.contains("--profile"),
            "{main}"
        );
        for path in [&["records", "list"][..], &["pages"], &["sql"], &["config"]] {
            let text = help(path);
            assert!(!text.contains("--api-base-url"), "{path:?}: {text}");
            assert!(text.contains("see `svc --help`"), "{path:?}: {text}");
        }
        assert!(!help(&["emulator"]).contains("see `svc --help`"));
    }
}
