//! Transport security: credentials are refused over plain `http://` to a host that is not
//! loopback unless the user opts in, and TLS certificates are verified by default.

use svc_api::{Client, Error, RetryPolicy, Sent};
use svc_tests::{builder, client, two_projects};

#[tokio::test]
async fn plain_http_is_refused_off_loopback_unless_opted_in() {
    // Loopback over plain HTTP is fine: the emulator, by address or as `localhost`.
    let emulator = two_projects(false).await;
    assert!(emulator.app_base_url().starts_with("http://127.0.0.1:"));
    assert!(client(&emulator).pages().list().await.unwrap().is_empty());
    let by_name = builder(&emulator)
        .app_base_url(emulator.app_base_url().replace("127.0.0.1", "localhost"))
        .build()
        .unwrap();
    assert!(by_name.pages().list().await.unwrap().is_empty());

    // Any other host: refused when the client is built, before anything is sent.
    for url in [
        "http://192.0.2.10:8787/api",
        "http://svc.example.com/api",
        "http://[2001:db8::5]/api",
    ] {
        let err = Client::builder()
            .project("alpha")
            .api_key("key_alpha")
            .app_base_url(url)
            .build()
            .unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
        assert_eq!(err.sent(), Sent::No);
        let text = err.to_string();
        assert!(
            text.contains(url) && text.contains("allow_insecure_http(true)"),
            "{text}"
        );
        assert!(!text.contains("key_alpha"), "{text}");
        // The same over HTTPS, or with the opt-in, builds.
        Client::builder()
            .api_key("key_alpha")
            .app_base_url(url.replace("http://", "https://"))
            .build()
            .unwrap();
        Client::builder()
            .api_key("key_alpha")
            .app_base_url(url)
            .allow_insecure_http(true)
            .build()
            .unwrap();
    }
}

#[tokio::test]
async fn certificates_are_verified_by_default() {
    let emulator = two_projects(true).await;
    let other = two_projects(true).await;
    assert!(emulator.api_base_url().starts_with("https://"));

    // Trusting the emulator's CA: works, on both hosts.
    let trusted = client(&emulator);
    assert!(trusted.pages().list().await.unwrap().is_empty());

    // The default roots only, or another CA: the handshake is refused, nothing is sent.
    let untrusted = |extra_root: Option<&[u8]>| {
        let mut b = Client::builder()
            .project("alpha")
            .api_key("key_alpha")
            .api_base_url(emulator.api_base_url())
            .app_base_url(emulator.app_base_url())
            .retry(RetryPolicy::none());
        if let Some(pem) = extra_root {
            b = b.add_root_certificate_pem(pem.to_vec());
        }
        b.build().unwrap()
    };
    for c in [untrusted(None), untrusted(other.tls_ca_pem())] {
        let err = c.pages().list().await.unwrap_err();
        let Error::Transport(transport) = &err else {
            panic!("{err:?}")
        };
        assert!(transport.is_connect(), "{err}");
        assert_eq!(err.sent(), Sent::No);
        let text = err.to_string();
        assert!(
            text.contains("certificate") && text.contains("add_root_certificate_pem"),
            "{text}"
        );
        let err = c.records("shop", "products").retrieve(1).await.unwrap_err();
        assert_eq!(err.sent(), Sent::No, "{err}");
    }
}
