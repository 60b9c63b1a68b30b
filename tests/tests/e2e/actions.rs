//! Actions and workflows (docs/contract.md 5.6): the SDK against the emulator, with actions and
//! workflows declared in its config on a SQLite resource; each test checks the data changed
//! (or did not) with a read of its own.

use serde_json::{Value, json};
use svc_api::{Client, Error};
use svc_emulator::{
    ActionConfig, Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig,
    WorkflowConfig,
};

const KEY: &str = "svc_key_actions_e2e";
const TOKEN: &str = "tok_shop_actions_e2e";

/// A project `acts` whose resource `shop` holds three orders, with actions to refund one
/// (SQL), to answer a fixed value, and one whose statement the database refuses; and workflows
/// that refund (one step) and that refund then fail (two steps).
async fn emulator() -> Emulator {
    let shop = ResourceConfig::new("shop", TOKEN)
        .seed_sql(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL); \
             INSERT INTO orders (id, status) VALUES (7, 'paid'), (8, 'paid'), (9, 'paid'), (10, 'paid');",
        )
        .action(ActionConfig::sql(
            "refund",
            "UPDATE orders SET status = 'refunded' WHERE id = :id RETURNING id, status",
        ))
        .action(ActionConfig::answer("ping", json!({"pong": true})))
        .action(ActionConfig::statements(
            "refund_and_break",
            [
                "UPDATE orders SET status = 'refunded' WHERE id = :id",
                "UPDATE orders SET no_such_column = 1 WHERE id = :id",
            ],
        ));
    let project = ProjectConfig::new("acts")
        .api_key(KEY)
        .resource(shop)
        .workflow(WorkflowConfig::new("wf-refund").step("shop", "refund"))
        .workflow(
            WorkflowConfig::new("wf-refund-then-break")
                .step("shop", "refund")
                .step("shop", "refund_and_break"),
        );
    Emulator::start(EmulatorConfig::default().projects(ProjectsConfig::new(vec![project])))
        .await
        .expect("the emulator starts")
}

fn builder(emulator: &Emulator) -> svc_api::ClientBuilder {
    Client::builder()
        .project("acts")
        .api_base_url(emulator.api_base_url())
        .app_base_url(emulator.app_base_url())
}

/// The API key only: actions and workflows both take it.
fn with_key(emulator: &Emulator) -> Client {
    builder(emulator).api_key(KEY).build().expect("a client")
}

/// An order's status, read with SQL.
async fn status(client: &Client, id: i64) -> String {
    client
        .sql("shop")
        .token(TOKEN)
        .query("select status from orders where id = :id")
        .bind("id", id)
        .rows::<String>()
        .await
        .expect("the order is read")
        .remove(0)
}

#[tokio::test]
async fn an_action_changes_data_and_answers_its_rows() {
    let emulator = emulator().await;
    let client = with_key(&emulator);

    let result = client
        .action("shop", "refund")
        .execute(json!({"id": 7}))
        .await
        .unwrap();
    assert_eq!(result, json!([{"id": 7, "status": "refunded"}]));
    assert_eq!(status(&client, 7).await, "refunded");
    assert_eq!(status(&client, 8).await, "paid");

    // Typed, with the resource's token alone.
    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Order {
        id: i64,
        status: String,
    }
    let token_only = builder(&emulator)
        .resource_token("shop", TOKEN)
        .build()
        .unwrap();
    let orders: Vec<Order> = token_only
        .action("shop", "refund")
        .typed()
        .execute(json!({"id": 8}))
        .await
        .unwrap();
    assert_eq!(
        orders,
        [Order {
            id: 8,
            status: "refunded".into()
        }]
    );
    assert_eq!(status(&client, 8).await, "refunded");

    // No row matched: an empty list, nothing changed.
    let none = client
        .action("shop", "refund")
        .execute(json!({"id": 404}))
        .await
        .unwrap();
    assert_eq!(none, json!([]));

    // A fixed answer, whatever the inputs.
    let pong = client
        .action("shop", "ping")
        .execute(json!({}))
        .await
        .unwrap();
    assert_eq!(pong, json!({"pong": true}));
}

#[tokio::test]
async fn an_action_refuses_bad_inputs_and_rolls_back_a_failing_statement() {
    let emulator = emulator().await;
    let client = with_key(&emulator);

    let err = client
        .action("shop", "refund")
        .execute(json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::BAD_REQUEST), "{err}");
    assert_eq!(
        err.body().unwrap().field_errors().get("data"),
        Some(&vec!["Missing input: id."])
    );
    let err = client
        .action("shop", "refund")
        .execute(json!({"id": 7, "reason": "late"}))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::BAD_REQUEST), "{err}");
    let unknown = err.body().unwrap().field_errors()["data"].join(" ");
    assert!(unknown.contains("reason"), "{unknown}");
    assert_eq!(status(&client, 7).await, "paid", "nothing ran");

    // The second statement fails: the first one's update is rolled back with it.
    let err = client
        .action("shop", "refund_and_break")
        .execute(json!({"id": 7}))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(http::StatusCode::BAD_REQUEST), "{err}");
    assert_eq!(err.body().unwrap().error_code(), Some("invalid"), "{err}");
    assert!(err.to_string().contains("no_such_column"), "{err}");
    assert_eq!(status(&client, 7).await, "paid", "rolled back");

    // Unknown action, unknown resource.
    let err = client
        .action("shop", "nosuch")
        .execute(json!({}))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let err = client
        .action("nosuch", "refund")
        .execute(json!({"id": 7}))
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");

    // Inputs that are not an object never leave the client.
    let err = client
        .action("shop", "refund")
        .execute(json!([7]))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
}

#[tokio::test]
async fn a_workflow_runs_its_steps_and_a_failed_run_is_an_error() {
    let emulator = emulator().await;
    let client = with_key(&emulator);

    let result = client
        .workflow("wf-refund")
        .run(json!({"id": 7}))
        .await
        .unwrap();
    assert_eq!(result, json!([{"id": 7, "status": "refunded"}]));
    assert_eq!(status(&client, 7).await, "refunded");

    // Step 1 refunds order 8 and keeps its write; step 2 fails (its own update is rolled back).
    let err = client
        .workflow("wf-refund-then-break")
        .run(json!({"id": 8}))
        .await
        .unwrap_err();
    let Error::Workflow(failed) = &err else {
        panic!("not a failed run: {err:?}");
    };
    assert_eq!(failed.uid(), "wf-refund-then-break");
    let message = failed.message().expect("the server's reason");
    assert!(
        message.starts_with("step 2 (shop.refund_and_break): ")
            && message.contains("no_such_column"),
        "{message}"
    );
    assert_eq!(err.status(), Some(http::StatusCode::OK));
    assert_eq!(status(&client, 8).await, "refunded", "step 1's write stays");

    // The same failure as an answer.
    let answer = client
        .workflow("wf-refund-then-break")
        .run_response(json!({"id": 9}))
        .await
        .unwrap();
    assert!(!answer.is_success());
    assert!(
        answer.error().is_some_and(|e| e.starts_with("step 2 ")),
        "{answer:?}"
    );
    assert!(answer.into_result().is_err());
    assert_eq!(status(&client, 9).await, "refunded");

    // Inputs are checked against every step before the first runs: a missing or unknown one
    // is a refused request (400), not a failed run, and nothing changed.
    for inputs in [json!({}), json!({"id": 10, "reason": "late"})] {
        let err = client.workflow("wf-refund").run(&inputs).await.unwrap_err();
        assert_eq!(err.status(), Some(http::StatusCode::BAD_REQUEST), "{err}");
        assert!(err.workflow().is_none(), "{err}");
        assert!(
            err.body().unwrap().field_errors().contains_key("data"),
            "{err}"
        );
    }
    assert_eq!(status(&client, 10).await, "paid");

    // An unknown workflow is an error status, not a failed run.
    let err = client
        .workflow("wf-nosuch")
        .run(json!({}))
        .await
        .unwrap_err();
    assert!(err.is_not_found() && err.workflow().is_none(), "{err}");
}

#[tokio::test]
async fn a_workflow_never_takes_a_resource_token_and_a_wrong_key_is_refused() {
    let emulator = emulator().await;
    let token_only = builder(&emulator)
        .resource_token("shop", TOKEN)
        .build()
        .unwrap();
    let err = token_only
        .workflow("wf-refund")
        .run(json!({"id": 7}))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");

    // A wrong key: the server refuses it.
    let wrong = builder(&emulator).api_key("svc_key_wrong").build().unwrap();
    let err = wrong
        .workflow("wf-refund")
        .run(json!({"id": 7}))
        .await
        .unwrap_err();
    assert!(err.is_auth(), "{err}");
    let err = wrong
        .action("shop", "refund")
        .execute(json!({"id": 7}))
        .await
        .unwrap_err();
    assert!(err.is_auth(), "{err}");
    assert_eq!(status(&with_key(&emulator), 7).await, "paid");
}

/// Results decode into the type asked for: rows as maps, a run that matched no row as an
/// empty list.
#[tokio::test]
async fn results_decode_into_json_values_and_options() {
    let emulator = emulator().await;
    let client = with_key(&emulator);
    let rows: Vec<serde_json::Map<String, Value>> = client
        .action("shop", "refund")
        .typed()
        .execute(json!({"id": 9}))
        .await
        .unwrap();
    assert_eq!(rows[0]["status"], "refunded");
    let first: Option<Value> = client
        .workflow("wf-refund")
        .typed::<Vec<Value>>()
        .run(json!({"id": 404}))
        .await
        .unwrap()
        .into_iter()
        .next();
    assert_eq!(first, None);
}
