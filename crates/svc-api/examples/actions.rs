//! Runs the demo's actions and workflows, and tells a failed run from a refused request.
//!
//! Run it beside an emulator (its demo project has them: docs/actions.md), which sets
//! `SVC_PROJECT`, `SVC_API_BASE_URL` and `SVC_API_KEY` for it:
//!
//! ```text
//! cargo run -p svc-cli -- emulator exec -- cargo run -p svc-api --example actions
//! ```
//!
//! It refunds order 7 with the action `shop/refund`, runs the workflow `wf-refund` on order 8
//! (refund, then a note), then `wf-reopen` with a `null` status, whose second step the
//! database refuses: a run that failed, printed with the server's reason. Last, a workflow
//! that does not exist: a refused request, told apart. Any other error ends it with exit
//! code 1.

use svc_api::Error;
use svc_api::serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Settings from the process environment, only because this program asks for it.
    let env = svc_api::auth::EnvConfig::from_process_env();
    let key = std::env::var("SVC_API_KEY").map_err(|_| "set SVC_API_KEY")?;
    let client = svc_api::Client::builder()
        .env_config(env)
        .api_key(key)
        .build()?;

    // An action's result is its answer's `data`: here, the rows its statement returned.
    let refunded = client
        .action("shop", "refund")
        .execute(json!({"id": 7}))
        .await?;
    println!("shop/refund: {refunded}");

    let runs = [
        ("wf-refund", json!({"id": 8, "note": "damaged in transit"})),
        (
            "wf-reopen",
            json!({"id": 8, "note": "customer changed their mind", "status": null}),
        ),
        ("wf-nope", json!({})),
    ];
    for (uid, inputs) in runs {
        // A run that failed is `Err(Error::Workflow)`, never an `Ok`; a request the server
        // refused (an unknown workflow, a missing input) is `Err(Error::Api)`.
        match client.workflow(uid).run(&inputs).await {
            Ok(result) => println!("{uid}: {result}"),
            Err(Error::Workflow(failed)) => println!(
                "{uid} ran and failed: {}",
                failed.message().unwrap_or("no reason given")
            ),
            Err(Error::Api(refused)) => println!("{uid} was refused: {refused}"),
            Err(other) => return Err(other.into()),
        }
    }
    Ok(())
}
