//! `svc projects`.

use crate::args::{Global, ProjectsCommand};
use crate::exit::Failure;
use crate::{connect, output};

pub async fn run(global: &Global, cmd: ProjectsCommand) -> Result<(), Failure> {
    let client = connect::client(global)?;
    let project = match cmd {
        ProjectsCommand::Get { name: Some(name) } => client.projects().get(name).await?,
        ProjectsCommand::Get { name: None } => client.projects().current().await?,
    };
    output::value(output::resolve(global.output), &project)
}
