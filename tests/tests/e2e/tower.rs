//! The tower example (crates/svc-api/examples/tower_layers.rs) against the emulator: its rate
//! limit holds requests back and its own layer's header reaches the server. No clock is read:
//! the limit allows two requests an hour, so the third can only wait.

#[path = "../../../crates/svc-api/examples/tower_layers.rs"]
mod example;

use std::time::Duration;

use svc_api::transport::HyperTransport;
use svc_api::transport::replay::RecordingTransport;
use svc_api::transport::tower::TransportService;
use svc_api::{CallOptions, Error};
use svc_tests::{builder, demo};

#[tokio::test]
async fn layers_around_the_default_transport_limit_and_tag_requests() {
    let emulator = demo().await;
    let recording = RecordingTransport::new(HyperTransport::new());
    let inner = TransportService::new(recording.clone());
    let client = example::client(builder(&emulator), inner, 2, Duration::from_secs(3600)).unwrap();

    client.pages().list().await.unwrap();
    client
        .records("shop", "products")
        .retrieve(1)
        .await
        .unwrap();
    // The third request of the hour waits for the limit; its own timeout ends the wait.
    let err = client
        .pages()
        .options(CallOptions::new().timeout(Duration::from_millis(200)))
        .list()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Timeout(_)), "{err:?}");

    let sent = recording.requests();
    assert_eq!(sent.len(), 2, "the third never left");
    for request in &sent {
        assert_eq!(request.header("x-request-source"), Some("nightly-sync"));
    }
    assert_eq!(emulator.requests().len(), 2);
}

#[tokio::test]
async fn the_default_transport_is_a_service_for_layers() {
    let emulator = demo().await;
    // The default transport itself, wrapped: a limit that never holds anything back here.
    let client = example::client(
        builder(&emulator),
        HyperTransport::new(),
        1000,
        Duration::from_secs(1),
    )
    .unwrap();
    let product = client
        .records("shop", "products")
        .retrieve(3)
        .await
        .unwrap();
    assert_eq!(product["id"], 3);
    let journal = emulator.requests();
    assert_eq!(journal.len(), 1);
    assert_eq!(journal[0].status, 200);
}
