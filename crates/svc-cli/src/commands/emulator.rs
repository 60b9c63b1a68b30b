//! `svc emulator`: the local emulator in the foreground.

use crate::exit::Failure;

pub async fn run(args: svc_emulator::cli::EmulatorArgs) -> Result<(), Failure> {
    svc_emulator::cli::run(args)
        .await
        .map_err(|e| Failure::Other(format!("the emulator stopped: {e}")))
}
