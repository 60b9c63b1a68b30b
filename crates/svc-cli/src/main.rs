//! `svc`: the svc REST API from a shell, the local emulator, and a guided demo.

mod args;
mod canon;
mod commands;
mod complete;
mod connect;
mod exit;
mod export;
mod help;
mod import;
mod import_check;
mod input;
mod output;
mod pagefiles;
mod private_file;
mod profile;
mod progress;
mod settings;
mod signals;
mod url;
mod verbose;
mod verify;

use clap::FromArgMatches;

use crate::args::{Cli, Command};
use crate::connect::{APP_HINT, DATA_HINT, PROJECT_HINT, SESSION_HINT, TOOLS_HINT};
use crate::exit::Failure;

fn main() -> std::process::ExitCode {
    // `COMPLETE=bash svc -- WORDS`: the shell asks for completions (resource and model names
    // among them); answered here, before anything else runs.
    clap_complete::CompleteEnv::with_factory(help::command).complete();
    let matches = help::command()
        .try_get_matches()
        .unwrap_or_else(|e| help::with_synonym(e, std::env::args_os()).exit());
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    verbose::init(cli.global.verbose);
    // The emulator (and the demo, which runs one) serves requests on every core. Any other
    // command is one client's requests, which one thread runs with no wake-ups between threads
    // (an export spends a tenth of its time less).
    let mut runtime = match cli.command {
        Command::Demo(_)
        | Command::Emulator(args::EmulatorCommand {
            action: None | Some(args::EmulatorAction::Exec(_) | args::EmulatorAction::Verify(_)),
            ..
        }) => tokio::runtime::Builder::new_multi_thread(),
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let result = match runtime.enable_all().build() {
        Ok(runtime) => runtime.block_on(run(cli)),
        Err(e) => Err(Failure::Other(format!(
            "cannot start the async runtime: {e}"
        ))),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(failure) => {
            if !failure.is_silent() {
                // Error texts quote the server's messages: shown escaped, never acted on by
                // the terminal.
                eprintln!("error: {}", output::for_terminal(&failure.to_string()));
                if let Some(note) = failure.note() {
                    eprintln!("note: {}", output::for_terminal(note));
                }
                if let Some(hint) = failure.hint() {
                    eprintln!("hint: {}", output::for_terminal(&hint));
                }
            }
            failure.exit_code()
        }
    }
}

async fn run(cli: Cli) -> Result<(), Failure> {
    let global = &cli.global;
    match cli.command {
        Command::Demo(args) => commands::demo::run(args).await,
        Command::Emulator(cmd) => commands::emulator::run(global, cmd).await,
        Command::Login(args) => commands::session::login(global, args).await,
        Command::Logout => commands::session::logout().await,
        Command::Whoami => commands::session::whoami(global).await,
        Command::Register(args) => commands::session::register(global, args).await,
        Command::Projects(cmd) => commands::projects::run(global, cmd)
            .await
            .map_err(|f| f.on_auth(APP_HINT)),
        Command::Pages(cmd) => commands::pages::run(global, cmd)
            .await
            .map_err(|f| f.on_auth(APP_HINT)),
        Command::Records(cmd) => commands::records::run(global, cmd)
            .await
            .map_err(|f| f.on_auth(DATA_HINT)),
        Command::Sql(args) => commands::sql::run(global, args)
            .await
            .map_err(|f| f.on_auth(DATA_HINT)),
        Command::Users(cmd) => commands::users::run(global, cmd)
            .await
            .map_err(|f| f.on_auth(TOOLS_HINT)),
        Command::Teams(cmd) => commands::teams::run(global, cmd)
            .await
            .map_err(|f| f.on_auth(TOOLS_HINT)),
        Command::Resources(cmd) => commands::resources::run(global, cmd)
            .await
            .map_err(|f| f.on_auth(DATA_HINT)),
        Command::Actions(cmd) => commands::actions::run(global, cmd)
            .await
            .map_err(|f| f.on_auth(DATA_HINT)),
        Command::Workflows(cmd) => commands::workflows::run(global, cmd)
            .await
            .map_err(|f| f.on_auth(PROJECT_HINT)),
        Command::Proxy(args) => commands::proxy::run(global, args)
            .await
            .map_err(|f| f.on_auth(SESSION_HINT)),
        Command::Config { action: None } => commands::config::run(global),
        Command::Config {
            action: Some(action),
        } => commands::config::change(global, action),
        Command::Completions { shell } => {
            // Every option of every command, global ones included: what a shell completes.
            // Made in memory, then written: a closed pipe is an exit, not a panic.
            let mut command = <Cli as clap::CommandFactory>::command();
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command, "svc", &mut script);
            print_bytes(&script)
        }
        Command::Man { command } => {
            let mut page = help::command();
            let mut name = "svc".to_owned();
            let mut path = "svc".to_owned();
            for word in &command {
                let Some(sub) = page.find_subcommand(word).cloned() else {
                    let names: Vec<&str> = page
                        .get_subcommands()
                        .map(|c| c.get_name())
                        .filter(|n| *n != "help")
                        .collect();
                    return Err(Failure::usage_hint(
                        format!("`{path}` has no command {word:?}"),
                        format!("its commands: {}", names.join(", ")),
                    ));
                };
                name = format!("{name}-{word}");
                path = format!("{path} {word}");
                page = sub;
            }
            // The page's name is the command's path (`svc-records-export`), as man expects.
            let page = page
                .name(name)
                .bin_name(path)
                .version(env!("CARGO_PKG_VERSION"));
            let mut roff = Vec::new();
            clap_mangen::Man::new(page)
                .render(&mut roff)
                .map_err(|e| Failure::Other(format!("cannot make the man page: {e}")))?;
            print_bytes(&roff)
        }
    }
}

/// Writes `bytes` to stdout (a closed pipe ends the command quietly).
pub fn print_bytes(bytes: &[u8]) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(output::io)
}
