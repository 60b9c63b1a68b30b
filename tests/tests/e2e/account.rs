//! User sessions end to end: every account method, refresh (single-flight, counted at the
//! server), token stores shared between clients, the API key's priority, service requests.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::Value;
use svc_api::auth::{FileTokenStore, MemoryTokenStore, TokenStore};
use svc_api::model::account::{AuthState, RegisterRequest, Timestamp};
use svc_api::model::records::ListQuery;
use svc_api::{Client, ClientBuilder, Error};
use svc_emulator::{Emulator, EmulatorConfig, TokenLifetimes};
use svc_tests::{TempDir, raw};
use svc_transport::HyperTransport;
use svc_transport::replay::RecordingTransport;

/// A client with URLs and project only: no API key, no resource tokens.
fn anonymous(emulator: &Emulator) -> ClientBuilder {
    Client::builder()
        .project(emulator.project().as_str())
        .api_base_url(emulator.api_base_url())
        .app_base_url(emulator.app_base_url())
}

async fn registered(emulator: &Emulator, email: &str) -> Client {
    let c = anonymous(emulator).build().unwrap();
    let r = c
        .account()
        .register(&RegisterRequest::new(email, "correct horse").first_name("Ana"))
        .await
        .unwrap();
    assert!(r.result, "{r:?}");
    c
}

async fn outbox(emulator: &Emulator) -> Vec<Value> {
    let url = format!("{}/_emulator/projects/demo/outbox", emulator.api_base_url());
    let (status, body) = raw(
        emulator,
        "GET",
        &url,
        Some(&format!("Bearer {}", emulator.api_key())),
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body.as_array().unwrap().clone()
}

async fn refresh_calls(emulator: &Emulator) -> u64 {
    let url = format!("{}/_emulator/projects/demo/stats", emulator.api_base_url());
    let (_, body) = raw(
        emulator,
        "GET",
        &url,
        Some(&format!("Bearer {}", emulator.api_key())),
        "",
    )
    .await;
    body["refresh_calls"].as_u64().unwrap()
}

#[tokio::test]
async fn every_account_method() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let c = registered(&emulator, "ana@example.com").await;

    // Register does not sign in; a taken email and a short password are refused.
    assert!(!c.account().is_authenticated().await.unwrap().authenticated);
    let again = c
        .account()
        .register(&RegisterRequest::new("ANA@example.com", "another one"))
        .await
        .unwrap();
    assert!(!again.result);
    let short = c
        .account()
        .register(&RegisterRequest::new("bo@example.com", "short"))
        .await
        .unwrap();
    assert!(!short.result);

    // Login: wrong password 401, right one signs in.
    let err = c
        .account()
        .login("ana@example.com", "wrong horse")
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(401));
    let signed = c
        .account()
        .login("ana@example.com", "correct horse")
        .await
        .unwrap();
    assert_eq!(signed.user.email.as_deref(), Some("ana@example.com"));
    assert!(signed.user.has_password);
    assert_eq!(
        signed.token.access_token.split('.').count(),
        3,
        "a real JWT"
    );
    let status = c.account().is_authenticated().await.unwrap();
    assert!(status.authenticated);
    assert_eq!(status.user.unwrap().first_name.as_deref(), Some("Ana"));
    let headers = c.account().get_headers().await.unwrap().unwrap();
    assert!(
        headers["authorization"]
            .to_str()
            .unwrap()
            .starts_with("JWT ")
    );

    // The session serves records too (no API key, no resource token).
    let page = c
        .records("shop", "orders")
        .list(&ListQuery::new().per_page(1))
        .await
        .unwrap();
    assert_eq!(page.count, 12_000);

    // Change password: a wrong current password is refused; the right one saves new tokens.
    let refused = c
        .account()
        .change_password("new horse battery", Some("nope".into()))
        .await
        .unwrap();
    assert!(!refused.result);
    assert!(
        refused.errors.unwrap().get("current_password").is_some(),
        "the reason is kept"
    );
    let before = signed.token.refresh_token.clone();
    let changed = c
        .account()
        .change_password("new horse battery", Some("correct horse".into()))
        .await
        .unwrap();
    assert!(changed.result);
    let new_state = changed.new_state.unwrap();
    assert_ne!(new_state.refresh_token, before);
    assert!(
        c.account().is_authenticated().await.unwrap().authenticated,
        "the new tokens were saved"
    );
    let other = anonymous(&emulator).build().unwrap();
    assert_eq!(
        other
            .account()
            .login("ana@example.com", "correct horse")
            .await
            .unwrap_err()
            .status()
            .map(|s| s.as_u16()),
        Some(401)
    );
    other
        .account()
        .login("ana@example.com", "new horse battery")
        .await
        .unwrap();

    // Reset password: the code arrives in the outbox, works once.
    assert!(
        other
            .account()
            .reset_password("ana@example.com")
            .await
            .unwrap()
            .result
    );
    assert!(
        other
            .account()
            .reset_password("nobody@example.com")
            .await
            .unwrap()
            .result,
        "no leak"
    );
    let mail = outbox(&emulator).await;
    let reset = mail
        .iter()
        .rev()
        .find(|m| m["kind"] == "reset_password")
        .unwrap();
    assert_eq!(reset["to"], "ana@example.com");
    let code = reset["code"].as_str().unwrap().to_owned();
    let done = other
        .account()
        .reset_password_complete(code.clone(), "reset horse 42")
        .await
        .unwrap();
    assert!(done.result && done.new_state.is_some());
    let used = other
        .account()
        .reset_password_complete(code, "another horse")
        .await
        .unwrap();
    assert!(!used.result, "a used code is refused");
    assert!(used.errors.unwrap().get("code").is_some());
    anonymous(&emulator)
        .build()
        .unwrap()
        .account()
        .login("ana@example.com", "reset horse 42")
        .await
        .unwrap();

    // Change email: confirmation code to the new address, works once.
    let asked = other
        .account()
        .change_email("ana.new@example.com", Some("reset horse 42".into()))
        .await
        .unwrap();
    assert!(asked.result);
    assert_eq!(
        asked.sent_confirmation_to.as_deref(),
        Some("ana.new@example.com")
    );
    let mail = outbox(&emulator).await;
    let confirm = mail
        .iter()
        .rev()
        .find(|m| m["kind"] == "change_email")
        .unwrap();
    assert_eq!(confirm["to"], "ana.new@example.com");
    let code = confirm["code"].as_str().unwrap().to_owned();
    let done = other
        .account()
        .change_email_complete(code.clone())
        .await
        .unwrap();
    assert!(done.result);
    assert_eq!(done.old_email.as_deref(), Some("ana@example.com"));
    assert_eq!(done.new_email.as_deref(), Some("ana.new@example.com"));
    assert!(
        !other
            .account()
            .change_email_complete(code)
            .await
            .unwrap()
            .result
    );

    // Logout: no tokens, no call, and requests that need the session say so.
    other.account().logout().unwrap();
    assert!(
        !other
            .account()
            .is_authenticated()
            .await
            .unwrap()
            .authenticated
    );
    let err = other
        .records("shop", "orders")
        .list(&ListQuery::new())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
    assert!(other.account().get_headers().await.unwrap().is_none());
}

/// Logs in and returns the tokens, with the access expiry moved to `access_in` from now (the
/// token itself stays valid on the server: only the client's view of it changes).
async fn tokens(emulator: &Emulator, email: &str, access_in: Duration) -> AuthState {
    let c = registered(emulator, email).await;
    let signed = c.account().login(email, "correct horse").await.unwrap();
    signed
        .token
        .with_access_token_expires(Timestamp::now().checked_add(access_in).unwrap())
}

fn store_with(state: &AuthState) -> MemoryTokenStore {
    let store = MemoryTokenStore::new();
    store
        .set("svc_auth", &serde_json::to_string(state).unwrap())
        .unwrap();
    store
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_thousand_requests_near_expiry_cause_exactly_one_refresh() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let state = tokens(&emulator, "many@example.com", Duration::from_secs(20)).await;
    let store = Arc::new(store_with(&state));
    let c = anonymous(&emulator)
        .shared_token_store(store.clone())
        .build()
        .unwrap();
    assert_eq!(refresh_calls(&emulator).await, 0);
    let calls = (0..1000).map(|_| {
        let c = c.clone();
        async move { c.records("shop", "products").retrieve(1).await.map(drop) }
    });
    for result in join_all(calls).await {
        result.unwrap();
    }
    assert_eq!(
        refresh_calls(&emulator).await,
        1,
        "exactly one refresh for 1000 requests"
    );

    // The session saved the rotated tokens, and its refresh token is the unused, newest one:
    // the server accepts it (a used one would be refused with 401).
    let saved: AuthState = serde_json::from_str(&store.get("svc_auth").unwrap().unwrap()).unwrap();
    assert_ne!(saved.refresh_token, state.refresh_token);
    let url = format!(
        "{}/projects/demo/prod/auth/refresh",
        emulator.api_base_url()
    );
    let body = serde_json::json!({ "refresh_token": saved.refresh_token }).to_string();
    let (status, _) = raw(&emulator, "POST", &url, None, &body).await;
    assert_eq!(status, 200);
    let old = serde_json::json!({ "refresh_token": state.refresh_token }).to_string();
    let (status, body) = raw(&emulator, "POST", &url, None, &old).await;
    assert_eq!(status, 401, "a used refresh token is refused: {body}");
}

#[tokio::test]
async fn tokens_with_time_left_are_not_refreshed() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let state = tokens(&emulator, "calm@example.com", Duration::from_secs(120)).await;
    let c = anonymous(&emulator)
        .token_store(store_with(&state))
        .build()
        .unwrap();
    for _ in 0..50 {
        c.records("shop", "products").retrieve(2).await.unwrap();
    }
    assert_eq!(refresh_calls(&emulator).await, 0);
}

#[tokio::test]
async fn rotation_leaves_the_session_with_a_working_refresh_token() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let state = tokens(&emulator, "rot@example.com", Duration::from_secs(5)).await;
    let store = Arc::new(store_with(&state));
    let c = anonymous(&emulator)
        .shared_token_store(store.clone())
        .build()
        .unwrap();
    for round in 1..=5u64 {
        // Make the current access token look nearly expired, in a fresh client on the same store.
        let saved: AuthState =
            serde_json::from_str(&store.get("svc_auth").unwrap().unwrap()).unwrap();
        let near = saved.with_access_token_expires(
            Timestamp::now()
                .checked_add(Duration::from_secs(5))
                .unwrap(),
        );
        store
            .set("svc_auth", &serde_json::to_string(&near).unwrap())
            .unwrap();
        let c = anonymous(&emulator)
            .shared_token_store(store.clone())
            .build()
            .unwrap();
        let calls = (0..50).map(|_| {
            let c = c.clone();
            async move { c.records("shop", "products").retrieve(3).await.map(drop) }
        });
        for r in join_all(calls).await {
            r.unwrap();
        }
        assert_eq!(refresh_calls(&emulator).await, round);
    }
    drop(c);
}

#[tokio::test]
async fn an_expired_refresh_token_fails_cleanly_and_clears_the_session() {
    let lifetimes = TokenLifetimes {
        refresh: Duration::from_secs(1),
        ..TokenLifetimes::default()
    };
    let emulator = Emulator::start(EmulatorConfig::default().token_lifetimes(lifetimes))
        .await
        .unwrap();
    let state = tokens(&emulator, "late@example.com", Duration::from_secs(5)).await;
    tokio::time::sleep(Duration::from_millis(2100)).await; // let the 1 s refresh token expire
    let store = Arc::new(store_with(&state));
    let c = anonymous(&emulator)
        .shared_token_store(store.clone())
        .build()
        .unwrap();
    let err = c.records("shop", "products").retrieve(1).await.unwrap_err();
    assert!(matches!(err, Error::Auth(_)), "{err:?}");
    assert!(err.is_auth());
    assert!(!err.to_string().contains(&state.refresh_token));
    assert!(
        store.get("svc_auth").unwrap().is_none(),
        "a rejected refresh clears the store entry"
    );
    assert!(!c.account().is_authenticated().await.unwrap().authenticated);
}

/// Separate clients (built one by one, not clones) that share a token store, all in the
/// refresh window at once: one refresh between them, every call succeeds, and the session
/// survives in the store. With a file store this is what separate processes do.
async fn separate_clients_share_one_refresh(
    emulator: &Emulator,
    email: &str,
    stores: Vec<Arc<dyn TokenStore>>,
) {
    let state = tokens(emulator, email, Duration::from_secs(20)).await;
    stores[0]
        .set("svc_auth", &serde_json::to_string(&state).unwrap())
        .unwrap();
    let before = refresh_calls(emulator).await;
    let clients: Vec<Client> = stores
        .iter()
        .map(|store| {
            anonymous(emulator)
                .shared_token_store(Arc::clone(store))
                .build()
                .unwrap()
        })
        .collect();
    let calls = clients.iter().flat_map(|c| {
        (1..=5).map(move |id| {
            let c = c.clone();
            async move { c.records("shop", "products").retrieve(id).await.map(drop) }
        })
    });
    for result in join_all(calls).await {
        result.unwrap();
    }
    assert_eq!(
        refresh_calls(emulator).await,
        before + 1,
        "one refresh for {} clients",
        clients.len()
    );
    let saved: AuthState =
        serde_json::from_str(&stores[0].get("svc_auth").unwrap().unwrap()).unwrap();
    assert_ne!(saved.refresh_token, state.refresh_token);
    for c in &clients {
        assert!(c.account().is_authenticated().await.unwrap().authenticated);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn separate_clients_on_one_file_refresh_once() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let dir = TempDir::new("separate-file");
    let path = dir.join("session.json");
    let stores = (0..8)
        .map(|_| Arc::new(FileTokenStore::new(&path)) as Arc<dyn TokenStore>)
        .collect();
    separate_clients_share_one_refresh(&emulator, "files@example.com", stores).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn separate_clients_on_one_memory_store_refresh_once() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let store = MemoryTokenStore::new();
    let stores = (0..8)
        .map(|_| Arc::new(store.clone()) as Arc<dyn TokenStore>)
        .collect();
    separate_clients_share_one_refresh(&emulator, "memory@example.com", stores).await;
}

#[tokio::test]
async fn clients_sharing_a_file_store() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    registered(&emulator, "shared@example.com").await;
    let dir = TempDir::new("store");
    let path = dir.join("session.json");
    let first = anonymous(&emulator)
        .token_store(FileTokenStore::new(&path))
        .build()
        .unwrap();
    first
        .account()
        .login("shared@example.com", "correct horse")
        .await
        .unwrap();
    // Restore on build.
    let second = anonymous(&emulator)
        .token_store(FileTokenStore::new(&path))
        .build()
        .unwrap();
    assert!(
        second
            .account()
            .is_authenticated()
            .await
            .unwrap()
            .authenticated
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    // Logout of one clears the entry; the other keeps its in-memory session.
    first.account().logout().unwrap();
    assert!(
        FileTokenStore::new(&path)
            .get("svc_auth")
            .unwrap()
            .is_none()
    );
    assert!(
        second
            .account()
            .is_authenticated()
            .await
            .unwrap()
            .authenticated
    );
    let third = anonymous(&emulator)
        .token_store(FileTokenStore::new(&path))
        .build()
        .unwrap();
    assert!(
        !third
            .account()
            .is_authenticated()
            .await
            .unwrap()
            .authenticated
    );
}

#[tokio::test]
async fn the_api_key_wins_over_a_session_and_survives_logout() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    registered(&emulator, "keyed@example.com").await;
    let recording = RecordingTransport::new(HyperTransport::new());
    let c = anonymous(&emulator)
        .api_key(emulator.api_key())
        .transport(recording.clone())
        .build()
        .unwrap();
    c.account()
        .login("keyed@example.com", "correct horse")
        .await
        .unwrap();
    c.records("shop", "products").retrieve(1).await.unwrap();
    c.account().logout().unwrap();
    c.records("shop", "products").retrieve(1).await.unwrap();
    let auth: Vec<String> = recording
        .requests()
        .iter()
        .filter(|r| r.uri.path().contains("/models/"))
        .map(|r| {
            r.header("authorization")
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(auth, ["Bearer", "Bearer"]);
}

#[tokio::test]
async fn service_requests() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let url = format!(
        "{}/_emulator/projects/demo/service_token",
        emulator.api_base_url()
    );
    let (status, minted) = raw(
        &emulator,
        "POST",
        &url,
        Some(&format!("Bearer {}", emulator.api_key())),
        "",
    )
    .await;
    assert_eq!(status, 200);
    let token = minted["token"].as_str().unwrap().to_owned();

    let mut headers = http::HeaderMap::new();
    headers.insert("X-Svc-Project", "demo".parse().unwrap());
    headers.insert("x-svc-environment", "prod".parse().unwrap());
    headers.insert("X-SVC-SERVICE-TOKEN", token.parse().unwrap());
    headers.insert(
        "x-svc-api-base-url",
        emulator.api_base_url().parse().unwrap(),
    );
    // Each required header, missing, is named.
    for name in ["x-svc-project", "x-svc-environment", "x-svc-service-token"] {
        let mut partial = headers.clone();
        partial.remove(name);
        let err = ClientBuilder::from_service_request(&partial).unwrap_err();
        assert!(err.to_string().to_lowercase().contains(name), "{err}");
        assert!(!err.to_string().contains(&token));
    }
    let builder = ClientBuilder::from_service_request(&headers).unwrap();
    let recording = RecordingTransport::new(HyperTransport::new());
    let c = builder.transport(recording.clone()).build().unwrap();
    assert!(!c.draft(), "no X-Svc-Draft: no draft");
    assert_eq!(
        c.records("shop", "orders")
            .list(&ListQuery::new().per_page(1))
            .await
            .unwrap()
            .count,
        12_000
    );
    assert_eq!(
        recording.requests()[0].header("authorization"),
        Some(format!("JWT {token}").as_str())
    );

    // X-Svc-Draft is not parsed as a boolean: "false" turns draft on.
    headers.insert("x-svc-draft", "false".parse().unwrap());
    assert!(
        ClientBuilder::from_service_request(&headers)
            .unwrap()
            .build()
            .unwrap()
            .draft()
    );

    // Loading a service token into an existing client.
    let plain = anonymous(&emulator).build().unwrap();
    assert!(plain.records("shop", "orders").retrieve(1).await.is_err());
    plain.load_service_token(token.as_str());
    plain.records("shop", "orders").retrieve(1).await.unwrap();

    // The authentication check answers for a service token with the service principal.
    let status = plain.account().is_authenticated().await.unwrap();
    assert!(status.authenticated);
    assert_eq!(status.user.unwrap().uid, "service");

    // A tampered token is refused.
    let tampered = anonymous(&emulator)
        .service_token(format!("{token}x"))
        .build()
        .unwrap();
    let err = tampered
        .records("shop", "orders")
        .retrieve(1)
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(401));
}

#[tokio::test]
async fn a_session_of_another_project_is_forbidden() {
    use svc_emulator::{ProjectConfig, ProjectsConfig, ResourceConfig};
    let config = ProjectsConfig::new(vec![
        ProjectConfig::new("alpha").api_key("key_alpha").resource(
            ResourceConfig::new("shop", "tok_alpha_shop")
                .seed_sql("CREATE TABLE t (id INTEGER PRIMARY KEY);"),
        ),
        ProjectConfig::new("beta").api_key("key_beta"),
    ]);
    let emulator = Emulator::start(EmulatorConfig::default().projects(config))
        .await
        .unwrap();
    let beta = Client::builder()
        .project("beta")
        .api_base_url(emulator.api_base_url())
        .build()
        .unwrap();
    assert!(
        beta.account()
            .register(&RegisterRequest::new("b@example.com", "correct horse"))
            .await
            .unwrap()
            .result
    );
    let signed = beta
        .account()
        .login("b@example.com", "correct horse")
        .await
        .unwrap();
    let alpha = Client::builder()
        .project("alpha")
        .api_base_url(emulator.api_base_url())
        .service_token(signed.token.access_token.as_str())
        .build()
        .unwrap();
    let err = alpha
        .records("shop", "t")
        .list(&ListQuery::new())
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(403), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_dropped_mid_refresh_does_not_lose_the_session() {
    use svc_transport::Transport;
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let state = tokens(&emulator, "impatient@example.com", Duration::from_secs(20)).await;
    let store = Arc::new(store_with(&state));
    // The server rotates the tokens at once, but its answer to the refresh reaches the client
    // 300 ms later; the first caller gives up after 50 ms, in between.
    let inner = HyperTransport::new();
    let late_refresh_answers = move |request: http::Request<bytes::Bytes>| {
        let inner = inner.clone();
        async move {
            let is_refresh = request.uri().path().ends_with("/auth/refresh");
            let answer = inner.send(request).await;
            if is_refresh {
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
            answer
        }
    };
    let c = anonymous(&emulator)
        .shared_token_store(store.clone())
        .transport(late_refresh_answers)
        .build()
        .unwrap();
    let gave_up = tokio::time::timeout(
        Duration::from_millis(50),
        c.records("shop", "products").retrieve(1),
    )
    .await;
    assert!(
        gave_up.is_err(),
        "the first call timed out while the refresh answer was on its way"
    );
    // The refresh went on without it: later calls use the rotated tokens. (Had it been dropped
    // with its caller, the next refresh would present the retired token, get 401, and clear
    // the session.)
    for _ in 0..3 {
        c.records("shop", "products").retrieve(1).await.unwrap();
    }
    assert_eq!(refresh_calls(&emulator).await, 1);
    let saved: AuthState = serde_json::from_str(&store.get("svc_auth").unwrap().unwrap()).unwrap();
    assert_ne!(
        saved.refresh_token, state.refresh_token,
        "the rotated tokens were saved"
    );
}
