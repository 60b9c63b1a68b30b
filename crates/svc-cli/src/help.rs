//! The command as it is parsed and shown: the global options are listed once, in `svc --help`,
//! instead of on every subcommand's help, which points there.

use clap::CommandFactory;

use crate::args::Cli;

/// What subcommands say instead of repeating the global options.
const SEE_MAIN_HELP: &str = "Global options (--profile, --project, the base URLs, credentials, -o/--output, -v/--verbose, ...): see `svc --help`.";

/// Subcommands that take none of the global options, so that the note would only mislead.
const WITHOUT_GLOBALS: &[&str] = &["emulator", "demo", "help", "logout"];

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
