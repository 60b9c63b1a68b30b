//! `svc projects`.

use crate::args::{Global, ProjectsCommand};
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::output;

pub async fn run(global: &Global, cmd: ProjectsCommand) -> Result<(), Failure> {
    let needs_project = matches!(cmd, ProjectsCommand::Get { name: None });
    let client = connect::client(global, Access::App { needs_project })?;
    let project = match cmd {
        ProjectsCommand::Get { name: Some(name) } => client.projects().get(name).await?,
        ProjectsCommand::Get { name: None } => client.projects().current().await?,
    };
    output::value(output::resolve(global.output), &project)
}
