//! `svc-emulator`: a local, stateful emulator of the svc REST API.
//!
//! Prints one JSON line with its URLs and credentials when ready, serves until Ctrl-C or SIGTERM.
//! Flags and environment variables: `svc-emulator --help`.

use std::process::ExitCode;

use clap::Parser;
use svc_emulator::cli::{EmulatorArgs, run};

/// A local, stateful emulator of the svc REST API (both hosts) over SQLite.
#[derive(Debug, Parser)]
#[command(name = "svc-emulator", version, about)]
struct Cli {
    #[command(flatten)]
    emulator: EmulatorArgs,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.emulator).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("svc-emulator: {e}");
            ExitCode::FAILURE
        }
    }
}
