//! `svc teams`: list, get, rename.

use crate::args::{Global, TeamsCommand};
use crate::commands::records::{list_query, page_at};
use crate::commands::users::team_uid;
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::output;

pub async fn run(global: &Global, cmd: TeamsCommand) -> Result<(), Failure> {
    let client = connect::client(global, Access::Tools)?;
    let format = output::resolve(global.output);
    let teams = client.teams();
    match cmd {
        TeamsCommand::List { filters, paging } => {
            let page = teams.list(&list_query(&filters, &paging)?).await?;
            output::page(format, &page, page_at(&paging, ("team", "teams")))
        }
        TeamsCommand::Get { team } => {
            let uid = team_uid(&client, &team).await?;
            output::value(format, &teams.retrieve(uid).await?)
        }
        TeamsCommand::Rename { team, name } => {
            let uid = team_uid(&client, &team).await?;
            output::value(format, &teams.rename(uid, name).await?)
        }
    }
}
