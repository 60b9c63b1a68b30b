//! The custom transport guide's example, run against the emulator.

#[path = "../../../crates/svc-api/examples/custom_transport.rs"]
mod example;

use svc_tests::{builder, two_projects};
use svc_transport::HyperTransport;
use svc_transport::replay::RecordingTransport;

#[tokio::test]
async fn a_user_transport_adds_a_header_and_counts_requests() {
    let emulator = two_projects(false).await;
    let recording = RecordingTransport::new(HyperTransport::new());
    let (pages, requests) = example::count_pages(builder(&emulator), recording.clone())
        .await
        .unwrap();
    assert_eq!(pages, 0);
    assert_eq!(requests, 1);
    let sent = recording.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].header("x-request-source"), Some("nightly-sync"));
    let exchanges = recording.exchanges();
    assert_eq!(exchanges[0].response.as_ref().unwrap().status, 200);
}
