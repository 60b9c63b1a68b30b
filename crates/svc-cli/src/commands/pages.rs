//! `svc pages`.

use svc_api::model::{PageSettings, UpdatePageSettings};

use crate::args::{Global, PagesCommand};
use crate::connect::{self, Access};
use crate::exit::Failure;
use crate::{input, output};

pub async fn run(global: &Global, cmd: PagesCommand) -> Result<(), Failure> {
    let client = connect::client(
        global,
        Access::App {
            needs_project: true,
        },
    )?;
    let format = output::resolve(global.output);
    let pages = client.pages();
    match cmd {
        PagesCommand::List => output::list(format, &pages.list().await?),
        PagesCommand::Get { uid } => output::value(format, &pages.get(uid).await?),
        PagesCommand::Create { data } => {
            let page = PageSettings::try_from(input::json(&data)?)
                .map_err(|_| Failure::Usage("--data must be a JSON object".into()))?;
            output::value(format, &pages.create(&page).await?)
        }
        PagesCommand::Update { uid, data } => {
            let update = UpdatePageSettings::from_structure(&input::json(&data)?)
                .map_err(|e| Failure::Usage(e.to_string()))?;
            output::value(format, &pages.update(uid, &update).await?)
        }
        PagesCommand::Delete { uid } => {
            pages.delete(&uid).await?;
            eprintln!("deleted page {uid}");
            Ok(())
        }
    }
}
