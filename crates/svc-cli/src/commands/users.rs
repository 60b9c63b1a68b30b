//! `svc users`: list, get, create, update-group, delete.

use svc_api::Client;
use svc_api::model::records::ListQuery;
use svc_api::model::users::NewUser;

use crate::args::{Global, UsersCommand};
use crate::commands::records::{list_query, page_at};
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::{input, output};

pub async fn run(global: &Global, cmd: UsersCommand) -> Result<(), Failure> {
    let client = connect::client(global, Access::Tools)?;
    let format = output::resolve(global.output);
    let users = client.users();
    match cmd {
        UsersCommand::List { filters, paging } => {
            let page = users.list(&list_query(&filters, &paging)?).await?;
            output::page(format, &page, page_at(&paging, ("user", "users")))
        }
        UsersCommand::Get { uid } => output::value(format, &users.retrieve(uid).await?),
        UsersCommand::Create {
            email,
            team,
            first_name,
            last_name,
        } => {
            let team = team_uid(&client, &team).await?;
            let mut user = NewUser::new(email, team);
            if let Some(name) = first_name {
                user = user.first_name(name);
            }
            if let Some(name) = last_name {
                user = user.last_name(name);
            }
            output::value(format, &users.create(&user).await?)
        }
        UsersCommand::UpdateGroup { uid, team } => {
            let team = team_uid(&client, &team).await?;
            output::value(format, &users.update_group(uid, team).await?)
        }
        UsersCommand::Delete { uid, yes } => {
            input::confirm_delete(&format!("user {uid}"), yes.yes)?;
            users.delete(&uid).await?;
            eprintln!("deleted user {uid}");
            Ok(())
        }
    }
}

/// A team given by uid or by name, as a uid. Lists the teams (one request), so that a wrong
/// name is reported with the names there are.
pub async fn team_uid(client: &Client, given: &str) -> Result<String, Failure> {
    let teams = client.teams().all(&ListQuery::new()).await?;
    if let Some(team) = teams.iter().find(|t| t.uid == given) {
        return Ok(team.uid.clone());
    }
    let named: Vec<_> = teams.iter().filter(|t| t.name == given).collect();
    match named.as_slice() {
        [team] => Ok(team.uid.clone()),
        [] => {
            let names: Vec<String> = teams
                .iter()
                .map(|t| format!("{} ({})", t.name, t.uid))
                .collect();
            Err(Failure::usage_hint(
                format!("no team with the uid or name {given:?}"),
                format!(
                    "give a team's uid or name: {}",
                    if names.is_empty() {
                        "the project has no teams".to_owned()
                    } else {
                        names.join(", ")
                    }
                ),
            ))
        }
        several => Err(Failure::usage_hint(
            format!("{} teams are named {given:?}", several.len()),
            format!(
                "give the uid of one: {}",
                several
                    .iter()
                    .map(|t| t.uid.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}
