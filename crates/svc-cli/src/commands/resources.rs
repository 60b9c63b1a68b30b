//! `svc resources reload RESOURCE | --tools`.

use crate::args::{Global, ResourcesCommand};
use crate::connect::{self, Access, TOOLS_HINT};
use crate::exit::Failure;
use svc_api::model::users::TOOLS_RESOURCE;

async fn reload_tools(global: &Global) -> Result<(), Failure> {
    let client = connect::client(global, Access::Tools)?;
    client
        .resources()
        .reload_tools()
        .await
        .map_err(|e| Failure::from(e).on_auth(TOOLS_HINT))?;
    eprintln!("reloaded the built-in tools resource (users and teams)");
    Ok(())
}

pub async fn run(global: &Global, cmd: ResourcesCommand) -> Result<(), Failure> {
    match cmd {
        ResourcesCommand::Reload { tools: true, .. } => reload_tools(global).await,
        ResourcesCommand::Reload {
            resource: Some(resource),
            ..
        } if resource == TOOLS_RESOURCE => reload_tools(global).await,
        ResourcesCommand::Reload {
            resource: Some(resource),
            tools: false,
        } => {
            let client = connect::client(global, Access::Resource(&resource))?;
            let mut resources = client.resources();
            if let Some(token) = connect::token(global) {
                resources = resources.token(token);
            }
            resources.reload(&resource).await?;
            eprintln!("reloaded resource {resource}");
            Ok(())
        }
        ResourcesCommand::Reload {
            resource: None,
            tools: false,
        } => Err(Failure::usage_hint(
            "which resource?",
            "give a resource name (`svc resources reload shop`) or --tools",
        )),
    }
}
