//! Page settings and projects, end to end, over HTTP and HTTPS.

use serde_json::json;
use svc_api::model::{PageSettings, UpdatePageSettings};
use svc_api::{Client, Error, Sent};
use svc_tests::{builder, client, raw, two_projects};

async fn every_operation(tls: bool) {
    let emulator = two_projects(tls).await;
    if tls {
        assert!(emulator.app_base_url().starts_with("https://"));
    }
    let c = client(&emulator);
    let pages = c.pages();
    assert!(pages.list().await.unwrap().is_empty());

    let page = PageSettings::new()
        .with("unique_name", "orders")
        .with("custom", json!({"kept": [1, 2]}))
        .with_params(&json!({"elements": []}))
        .unwrap();
    let created = pages.create(&page).await.unwrap();
    let uid = created.uid().expect("a server-assigned uid").to_owned();
    assert_eq!(created.unique_name(), Some("orders"));
    assert_eq!(created.get("custom"), Some(&json!({"kept": [1, 2]})));
    assert!(created.date_add().is_some());
    assert_eq!(created.is_draft(), Some(false));

    assert_eq!(pages.get(&uid).await.unwrap().uid(), Some(uid.as_str()));
    assert_eq!(pages.list().await.unwrap().len(), 1);

    let update = UpdatePageSettings::from_structure(&json!({"elements": ["table"]})).unwrap();
    let updated = pages.update(&uid, &update).await.unwrap();
    assert_eq!(
        updated.params::<serde_json::Value>().unwrap(),
        Some(json!({"elements": ["table"]}))
    );
    assert_eq!(updated.get("custom"), Some(&json!({"kept": [1, 2]})));
    // No params: nothing changes.
    let same = pages
        .update(&uid, &UpdatePageSettings::default())
        .await
        .unwrap();
    assert_eq!(same.params_raw(), updated.params_raw());

    pages.delete(&uid).await.unwrap();
    assert!(pages.get(&uid).await.unwrap_err().is_not_found());
    assert!(pages.delete(&uid).await.unwrap_err().is_not_found());
    assert!(pages.list().await.unwrap().is_empty());

    let project = c.projects().current().await.unwrap();
    assert_eq!(project.unique_name(), Some("alpha"));
    let envs: Vec<_> = project
        .environments()
        .into_iter()
        .map(|e| e.unique_name)
        .collect();
    assert_eq!(envs, ["prod", "staging"]);
}

#[tokio::test]
async fn every_operation_over_http() {
    every_operation(false).await;
}

#[tokio::test]
async fn every_operation_over_https_trusting_the_emulator_certificate() {
    every_operation(true).await;
}

#[tokio::test]
async fn https_without_trusting_the_certificate_fails_before_sending() {
    let emulator = two_projects(true).await;
    let c = Client::builder()
        .project("alpha")
        .api_key("key_alpha")
        .app_base_url(emulator.app_base_url())
        .retry(svc_api::RetryPolicy::none())
        .build()
        .unwrap();
    let err = c.pages().list().await.unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    assert_eq!(err.sent(), Sent::No);
}

#[tokio::test]
async fn draft_rules() {
    let emulator = two_projects(false).await;
    let c = client(&emulator);
    let published = c.pages();
    let drafts = c.pages().draft(true);

    // A page created with draft=1 exists only in the draft set.
    let sketch = drafts
        .create(&PageSettings::new().with("uid", "sketch"))
        .await
        .unwrap();
    assert_eq!(sketch.is_draft(), Some(true));
    assert!(published.get("sketch").await.unwrap_err().is_not_found());
    assert_eq!(drafts.list().await.unwrap().len(), 1);
    assert!(published.list().await.unwrap().is_empty());

    // A page created with draft=0 exists in both sets.
    published
        .create(
            &PageSettings::new()
                .with("uid", "home")
                .with("params", "{\"v\":1}"),
        )
        .await
        .unwrap();
    assert_eq!(drafts.get("home").await.unwrap().is_draft(), Some(true));
    assert_eq!(published.get("home").await.unwrap().is_draft(), Some(false));

    // A draft update leaves the published page alone.
    drafts
        .update(
            "home",
            &UpdatePageSettings::from_params_json("{\"v\":2}").unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        published.get("home").await.unwrap().params_raw(),
        Some("{\"v\":1}")
    );
    assert_eq!(
        drafts.get("home").await.unwrap().params_raw(),
        Some("{\"v\":2}")
    );

    // A published update changes the published page and its draft copy.
    published
        .update(
            "home",
            &UpdatePageSettings::from_params_json("{\"v\":3}").unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(
        published.get("home").await.unwrap().params_raw(),
        Some("{\"v\":3}")
    );
    assert_eq!(
        drafts.get("home").await.unwrap().params_raw(),
        Some("{\"v\":3}")
    );

    // A draft delete leaves the published page; a published delete removes both.
    drafts.delete("home").await.unwrap();
    assert!(published.get("home").await.is_ok());
    assert!(drafts.get("home").await.unwrap_err().is_not_found());
    published.delete("home").await.unwrap();
    assert!(published.get("home").await.unwrap_err().is_not_found());

    // The client-wide draft switch works like the per-call one.
    let draft_client = builder(&emulator).draft(true).build().unwrap();
    assert_eq!(draft_client.pages().list().await.unwrap().len(), 1);

    // Environments are separate.
    assert!(
        c.pages()
            .environment("staging")
            .draft(true)
            .list()
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn identifiers_reach_the_server_intact() {
    let emulator = two_projects(false).await;
    let c = client(&emulator);
    for uid in [
        "a/b",
        "what?x=1",
        "frag#ment",
        "100%",
        "two words",
        "héllo wörld 日本",
        "a/../b",
        "...",
    ] {
        let created = c
            .pages()
            .create(&PageSettings::new().with("uid", uid))
            .await
            .unwrap();
        assert_eq!(created.uid(), Some(uid));
        let got = c.pages().get(uid).await.unwrap();
        assert_eq!(got.uid(), Some(uid), "get {uid:?}");
        c.pages().delete(uid).await.unwrap();
    }
    assert!(c.pages().list().await.unwrap().is_empty());
}

#[tokio::test]
async fn each_error_status() {
    let emulator = two_projects(false).await;
    let c = client(&emulator);

    // 400: params that are not JSON text, named in a field error.
    let err = c
        .pages()
        .create(&PageSettings::new().with("params", 3))
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(400));
    assert!(
        err.body().unwrap().field_errors().contains_key("params"),
        "{err}"
    );
    c.pages()
        .create(&PageSettings::new().with("uid", "dup"))
        .await
        .unwrap();
    let err = c
        .pages()
        .create(&PageSettings::new().with("uid", "dup"))
        .await
        .unwrap_err();
    assert!(
        err.body().unwrap().field_errors().contains_key("uid"),
        "{err}"
    );

    // 400 for what the SDK never sends: extra update fields, a bad draft value.
    let url = format!(
        "{}/projects/alpha/prod/view_settings/dup/",
        emulator.app_base_url()
    );
    let (status, body) = raw(
        &emulator,
        "PATCH",
        &url,
        Some("Bearer key_alpha"),
        r#"{"params":"{}","name":"x"}"#,
    )
    .await;
    assert_eq!(status, 400);
    assert!(body.get("name").is_some(), "{body}");
    let (status, body) = raw(
        &emulator,
        "GET",
        &format!("{url}?draft=yes"),
        Some("Bearer key_alpha"),
        "",
    )
    .await;
    assert_eq!(status, 400);
    assert!(body.get("draft").is_some(), "{body}");

    // 401: a wrong key, no key.
    let wrong = builder(&emulator).api_key("svc_key_wrong").build().unwrap();
    let err = wrong.pages().list().await.unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(401));
    assert_eq!(err.body().unwrap().error_code(), Some("not_authenticated"));
    assert!(!err.to_string().contains("svc_key_wrong"));
    let (status, _) = raw(&emulator, "GET", &url, None, "").await;
    assert_eq!(status, 401);

    // 403: a valid key of another project.
    let other = builder(&emulator).api_key("key_beta").build().unwrap();
    let err = other.pages().list().await.unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(403));
    assert_eq!(err.body().unwrap().error_code(), Some("permission_denied"));
    let err = other.projects().get("alpha").await.unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(403));

    // 404: a missing page, an unknown environment.
    assert!(c.pages().get("nope").await.unwrap_err().is_not_found());
    assert!(
        c.pages()
            .environment("qa")
            .list()
            .await
            .unwrap_err()
            .is_not_found()
    );

    // 405: a method the path does not have.
    let (status, body) = raw(&emulator, "PUT", &url, Some("Bearer key_alpha"), "{}").await;
    assert_eq!(status, 405);
    assert_eq!(body["error_code"], "method_not_allowed");
}

#[tokio::test]
async fn an_unreachable_host_is_a_transport_error_that_sent_nothing() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let c = Client::builder()
        .project("p")
        .api_key("k")
        .app_base_url(format!("http://{addr}/api"))
        .retry(svc_api::RetryPolicy::none())
        .build()
        .unwrap();
    let err = c.pages().list().await.unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    assert_eq!(err.sent(), Sent::No);
    assert!(err.to_string().contains(&addr.to_string()), "{err}");
}

#[tokio::test]
async fn a_response_that_is_not_json_is_a_decode_error() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 4096];
        let _ = socket.read(&mut buf).await;
        let body = "<html><body>Maintenance</body></html>";
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        socket.write_all(answer.as_bytes()).await.unwrap();
    });
    let c = Client::builder()
        .project("p")
        .api_key("k")
        .app_base_url(format!("http://{addr}/api"))
        .build()
        .unwrap();
    let err = c.pages().list().await.unwrap_err();
    let Error::Decode(decode) = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        decode.body.as_ref(),
        b"<html><body>Maintenance</body></html>"
    );
    assert_eq!(err.sent(), Sent::Yes);
    server.await.unwrap();
}
