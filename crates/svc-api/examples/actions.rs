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
//! JSON. A workflow that ran and failed (try `'{"id": "x"}'` against a statement the database
//! refuses, or a workflow whose step is missing an input) prints the server's reason and exits
//! with 2; any other error exits with 1.

use svc_api::Error;
use svc_api::serde_json::{self, Value};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(Failed::Workflow(reason)) => {
            eprintln!("the workflow ran and failed: {reason}");
            std::process::ExitCode::from(2)
        }
        Err(Failed::Other(e)) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

enum Failed {
    /// The workflow ran, and one of its steps failed.
    Workflow(String),
    /// Anything else: bad arguments, an error status, no answer.
    Other(Box<dyn std::error::Error>),
}

impl From<Error> for Failed {
    fn from(e: Error) -> Self {
        match e {
            Error::Workflow(failed) => Failed::Workflow(failed.to_string()),
            other => Failed::Other(other.into()),
        }
    }
}

async fn run() -> Result<(), Failed> {
    let mut args = std::env::args().skip(1);
    let (Some(resource), Some(action), Some(workflow)) = (args.next(), args.next(), args.next())
    else {
        return Err(Failed::Other(
            "usage: actions RESOURCE ACTION WORKFLOW_UID [INPUTS_JSON]".into(),
        ));
    };
    let inputs: Value = match args.next() {
        Some(text) => serde_json::from_str(&text).map_err(|e| Failed::Other(e.into()))?,
        None => serde_json::json!({}),
    };
    // Settings from the process environment, only because this program asks for it.
    let env = svc_api::auth::EnvConfig::from_process_env();
    let key = std::env::var("SVC_API_KEY").map_err(|_| Failed::Other("set SVC_API_KEY".into()))?;
    let client = svc_api::Client::builder()
        .env_config(env)
        .api_key(key)
        .build()?;

    // An action's result is its answer's `data`: here, the rows the statement returned.
    let result = client.action(&resource, &action).execute(&inputs).await?;
    println!("action {resource}/{action}: {result}");

    // A failed run is `Err(Error::Workflow)`, never an `Ok`.
    let result = client.workflow(&workflow).run(&inputs).await?;
    println!("workflow {workflow}: {result}");
    Ok(())
}
