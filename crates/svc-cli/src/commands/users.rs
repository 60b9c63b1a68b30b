//! `svc users`: list, get, create, update-group, delete.

use serde_json::Value;
use svc_api::Client;
use svc_api::model::records::ListQuery;
use svc_api::model::users::NewUser;

use crate::args::{Global, Output, UsersCommand};
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
            let at = page_at(&paging, ("user", "users"));
            if format != Output::Table {
                return output::page(format, &page, at);
            }
            // A table is read by people: the team's name beside its uid.
            let teams = client.teams().all(&ListQuery::new()).await?;
            let named = |group: &str| {
                teams
                    .iter()
                    .find(|t| t.uid == group)
                    .map(|t| t.name.clone())
            };
            let rows: Vec<Value> = page
                .results
                .iter()
                .map(|user| with_team_name(user, named(&user.group)))
                .collect::<Result<_, _>>()?;
            let shown = svc_api::model::ListPage {
                count: page.count,
                next: page.next.clone(),
                previous: page.previous.clone(),
                results: rows,
            };
            output::page(format, &shown, at)
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

/// A user as a table row: `team` (the team's name) right after `group` (its uid).
fn with_team_name(user: &impl serde::Serialize, team: Option<String>) -> Result<Value, Failure> {
    let Value::Object(fields) = serde_json::to_value(user)
        .map_err(|e| Failure::Other(format!("cannot print the users: {e}")))?
    else {
        return Err(Failure::Other("a user is not an object".into()));
    };
    let mut row = serde_json::Map::new();
    for (key, value) in fields {
        let is_group = key == "group";
        row.insert(key, value);
        if is_group {
            row.insert(
                "team".into(),
                team.clone().map_or(Value::Null, Value::String),
            );
        }
    }
    Ok(Value::Object(row))
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
