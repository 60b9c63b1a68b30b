//! `svc workflows run UID [--data JSON]`: a run that failed exits with its own code
//! ([`crate::exit::WORKFLOW_FAILED`]), apart from an API or a network error.

use crate::args::{Global, WorkflowsCommand};
use crate::commands::actions::inputs;
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::output;

pub async fn run(global: &Global, cmd: WorkflowsCommand) -> Result<(), Failure> {
    let WorkflowsCommand::Run { uid, data } = cmd;
    let inputs = inputs(&data)?;
    let client = connect::client(global, Access::Project)?;
    // `run` makes a failed run `Error::Workflow`: exit code 6, the server's reason on stderr.
    let result = client.workflow(&uid).run(&inputs).await?;
    output::result(output::resolve(global.output), &result)
}
