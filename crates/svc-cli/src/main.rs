//! `svc`: the svc REST API from a shell, the local emulator, and a guided demo.

mod args;
mod commands;
mod connect;
mod exit;
mod input;
mod output;

use clap::Parser;

use crate::args::{Cli, Command};
use crate::exit::Failure;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = run(cli).await;
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {failure}");
            if let Some(hint) = failure.hint() {
                eprintln!("hint: {hint}");
            }
            failure.exit_code()
        }
    }
}

async fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Demo(args) => commands::demo::run(args).await,
        Command::Emulator(args) => commands::emulator::run(args).await,
        Command::Projects(cmd) => commands::projects::run(&cli.global, cmd).await,
        Command::Pages(cmd) => commands::pages::run(&cli.global, cmd).await,
        Command::Records(cmd) => commands::records::run(&cli.global, cmd).await,
    }
}
