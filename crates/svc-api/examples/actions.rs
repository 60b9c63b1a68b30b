//! Runs a resource's action, then a workflow, and tells a failed run from a failed request.
//!
//! Start an emulator whose config declares them, e.g. this `actions.json`:
//!
//! ```json
//! {
//!   "projects": [{
//!     "name": "demo",
//!     "api_keys": ["svc_key_actions_0123456789"],
//!     "resources": [{
//!       "name": "shop",
//!       "token": "tok_shop_actions_0123456789",
//!       "seed_sql": "CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL); INSERT INTO orders (id, status) VALUES (7, 'paid'), (8, 'paid');",
//!       "actions": [
//!         {"name": "refund", "sql": "UPDATE orders SET status = 'refunded' WHERE id = :id RETURNING id, status"}
//!       ]
//!     }],
//!     "workflows": [
//!       {"uid": "wf-refund", "steps": [{"resource": "shop", "action": "refund"}]}
//!     ]
//!   }]
//! }
//! ```
//!
//! ```text
//! cargo run -p svc-cli -- emulator --config actions.json    # prints its api_base_url
//! SVC_PROJECT=demo SVC_API_BASE_URL=http://127.0.0.1:PORT SVC_API_KEY=svc_key_actions_0123456789 \
//!     cargo run -p svc-api --example actions -- shop refund wf-refund '{"id": 7}'
//! ```
//!
//! The action's result (the rows its statement returned) and the workflow's are printed as
//! JSON. The workflow then runs once more without inputs, to show a run that fails (its step
//! misses `id`): the server's reason is printed, and the program goes on. Any other error ends
//! it with exit code 1.

use svc_api::Error;
use svc_api::serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(resource), Some(action), Some(workflow)) = (args.next(), args.next(), args.next())
    else {
        return Err("usage: actions RESOURCE ACTION WORKFLOW_UID [INPUTS_JSON]".into());
    };
    let inputs: Value = match args.next() {
        Some(text) => svc_api::serde_json::from_str(&text)?,
        None => json!({}),
    };
    // Settings from the process environment, only because this program asks for it.
    let env = svc_api::auth::EnvConfig::from_process_env();
    let key = std::env::var("SVC_API_KEY").map_err(|_| "set SVC_API_KEY")?;
    let client = svc_api::Client::builder()
        .env_config(env)
        .api_key(key)
        .build()?;

    // An action's result is its answer's `data`: here, the rows the statement returned.
    let result = client.action(&resource, &action).execute(&inputs).await?;
    println!("action {resource}/{action}: {result}");

    // A run that failed is `Err(Error::Workflow)`, never an `Ok`: told apart from the other
    // errors (an unknown workflow, no answer), which end the program.
    for inputs in [inputs, json!({})] {
        match client.workflow(&workflow).run(&inputs).await {
            Ok(result) => println!("workflow {workflow} with {inputs}: {result}"),
            Err(Error::Workflow(failed)) => println!(
                "workflow {workflow} with {inputs} ran and failed: {}",
                failed.message().unwrap_or("no reason given")
            ),
            Err(other) => return Err(other.into()),
        }
    }
    Ok(())
}
