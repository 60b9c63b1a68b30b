//! From an emulator to its client in one line: `Client::builder_for(&emulator)` carries both
//! base URLs, the project and environment, every credential and the CA to trust.

use svc_api::Client;
use svc_api::model::records::ListQuery;
use svc_emulator::{Emulator, EmulatorConfig};

#[tokio::test]
async fn one_line_from_an_emulator_to_a_client_of_both_hosts_over_tls() {
    let emulator = Emulator::start(EmulatorConfig::default().tls(true))
        .await
        .expect("the emulator starts");
    assert!(emulator.api_base_url().starts_with("https://"));
    let client = Client::builder_for(&emulator).build().expect("a client");
    // The data host, with the resource's records.
    let page = client
        .records("shop", "orders")
        .list(&ListQuery::new().per_page(1))
        .await
        .expect("records");
    assert!(page.count > 0);
    // The tools resource (users), and the application host (page settings).
    client.users().list(&ListQuery::new()).await.expect("users");
    client.pages().list().await.expect("page settings");
    // The client's settings are the emulator's own.
    assert_eq!(
        client.project().unwrap().as_str(),
        emulator.project().as_str()
    );
    assert_eq!(
        client.environment().unwrap().as_str(),
        emulator.environment().as_str()
    );
    // Each request carried a credential of the project: none was refused.
    assert!(
        emulator.requests().iter().all(|r| r.status < 400),
        "{:?}",
        emulator.requests()
    );
    emulator.shutdown().await;
}
