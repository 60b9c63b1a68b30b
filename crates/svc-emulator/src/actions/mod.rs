//! Actions and workflows (docs/contract.md 5.6), one slice: a resource's actions
//! ([`execute`]: `POST .../{resource}/actions/{action}`) and a project's workflows, whose steps
//! are actions ([`workflows`]: `POST .../workflows/{uid}/run`). How one action runs is written
//! once, in [`execute::run`], for both.

mod execute;
mod workflows;

use axum::Router;

use svc_emulator_http::AppState;

/// The routes of actions and workflows, on the data host. The workflow route's static
/// `workflows` segment wins over a resource of that name's routes.
pub(crate) fn routes(router: Router<AppState>) -> Router<AppState> {
    workflows::routes(execute::routes(router))
}
