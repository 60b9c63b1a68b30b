//! `svc teams`: list, get, rename.

use crate::args::{Global, Output, TeamsCommand};
use crate::commands::records::list_query;
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::output;

pub async fn run(global: &Global, cmd: TeamsCommand) -> Result<(), Failure> {
    let client = connect::client(global, Access::Tools)?;
    let format = output::resolve(global.output);
    let teams = client.teams();
    match cmd {
        TeamsCommand::List { filters, paging } => {
            let query = list_query(&filters, &paging)?;
            let page = teams.list(&query).await?;
            match format {
                Output::Json => output::value(format, &page),
                _ => {
                    output::list(format, &page.results)?;
                    output::page_footer(
                        format,
                        "teams",
                        query.page_number(),
                        query.page_size(),
                        page.results.len(),
                        page.count,
                    )
                }
            }
        }
        TeamsCommand::Get { uid } => output::value(format, &teams.retrieve(uid).await?),
        TeamsCommand::Rename { uid, name } => {
            output::value(format, &teams.rename(uid, name).await?)
        }
    }
}
