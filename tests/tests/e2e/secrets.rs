//! Secrets never print: a full session (API key, resource and tools tokens, a password login,
//! refreshes, a password change and reset, a service token, requests that fail with each, and
//! errors of every kind) runs with a `tracing` subscriber capturing every event and span of the
//! test's thread at every level (the SDK's, the transport's, the emulator's), and every value the
//! session touched is formatted with `Debug`, `{:#?}` and, where it has one, `Display`. No token,
//! key, password or one-time code the session used may appear in any of it.

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use svc_api::auth::{MemoryTokenStore, SVC_AUTH_KEY, TokenStore};
use svc_api::model::account::{AuthState, RegisterRequest, Timestamp};
use svc_api::model::records::ListQuery;
use svc_api::model::{PageSettings, UpdatePageSettings};
use svc_api::{Client, ClientBuilder, Error};
use svc_emulator::{Emulator, EmulatorConfig, TokenLifetimes};
use svc_tests::raw;
use svc_transport::TransportError;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

const PASSWORD: &str = "first-password-Xq7Lm2";
const NEW_PASSWORD: &str = "second-password-Rt5Vw8";
const RESET_PASSWORD: &str = "third-password-Kp3Zs9";
const WRONG_PASSWORD: &str = "wrong-password-Hd4Nc6";
const WRONG_KEY: &str = "svc_key_wrong_Jm8Qr2Tx";
const WRONG_TOKEN: &str = "svc_tok_wrong_Bv6Yh1Lp";
const BROKEN_KEY: &str = "svc_key_broken_Wc5\nInjected: Gz7";
const UPSTREAM_SECRET: &str = "upstream-secret-Fy2Dk4";

/// A subscriber that writes every event and span, with all their fields, into a string.
#[derive(Clone, Default)]
struct Capture {
    out: Arc<Mutex<String>>,
    next_span: Arc<AtomicU64>,
}

struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        let _ = write!(self.0, " {}={value}", field.name());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }
}

impl Capture {
    fn line(&self, kind: &str, meta: &Metadata<'_>, fields: impl FnOnce(&mut Fields<'_>)) {
        let mut line = format!("{kind} {} {}:", meta.level(), meta.target());
        fields(&mut Fields(&mut line));
        let mut out = self.out.lock().unwrap();
        out.push_str(&line);
        out.push('\n');
    }

    fn text(&self) -> String {
        self.out.lock().unwrap().clone()
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::TRACE)
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        self.line("span", span.metadata(), |f| span.record(f));
        Id::from_u64(self.next_span.fetch_add(1, Ordering::Relaxed) + 1)
    }

    fn record(&self, _: &Id, values: &Record<'_>) {
        let mut line = "record:".to_owned();
        values.record(&mut Fields(&mut line));
        let mut out = self.out.lock().unwrap();
        out.push_str(&line);
        out.push('\n');
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        self.line("event", event.metadata(), |f| event.record(f));
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// Every text the session printed, and every secret it used.
#[derive(Default)]
struct Ledger {
    printed: Vec<(String, String)>,
    secrets: Vec<(String, String)>,
}

impl Ledger {
    fn secret(&mut self, what: &str, value: impl Into<String>) {
        let value = value.into();
        assert!(value.len() >= 8, "{what} is too short to search for");
        self.secrets.push((what.to_owned(), value));
    }

    /// `Debug`, plain and pretty.
    fn debug(&mut self, what: &str, value: &(impl fmt::Debug + ?Sized)) {
        self.printed.push((what.to_owned(), format!("{value:?}")));
        self.printed.push((what.to_owned(), format!("{value:#?}")));
    }

    /// `Debug` and `Display`, and the same for each source of an error.
    fn error(&mut self, what: &str, err: &Error) {
        self.debug(what, err);
        self.printed.push((what.to_owned(), err.to_string()));
        let mut source = std::error::Error::source(err);
        while let Some(s) = source {
            self.printed
                .push((format!("{what} (source)"), s.to_string()));
            self.printed
                .push((format!("{what} (source)"), format!("{s:?}")));
            source = s.source();
        }
    }

    /// The tokens of a saved session: the session store's entry.
    fn session_in(&mut self, what: &str, store: &MemoryTokenStore) {
        if let Some(text) = store.get(SVC_AUTH_KEY).unwrap() {
            let state: AuthState = serde_json::from_str(&text).unwrap();
            self.secret(&format!("{what} access token"), state.access_token);
            self.secret(&format!("{what} refresh token"), state.refresh_token);
        }
    }
}

fn anonymous(emulator: &Emulator) -> ClientBuilder {
    let mut b = Client::builder()
        .project(emulator.project().as_str())
        .api_base_url(emulator.api_base_url())
        .app_base_url(emulator.app_base_url());
    if let Some(pem) = emulator.tls_ca_pem() {
        b = b.add_root_certificate_pem(pem.to_vec());
    }
    b
}

/// A token with one character of its signature changed.
fn tampered(token: &str) -> String {
    let (signed, signature) = token.rsplit_once('.').unwrap();
    let mut chars: Vec<char> = signature.chars().collect();
    let at = chars.len() / 2;
    chars[at] = if chars[at] == 'A' { 'B' } else { 'A' };
    format!("{signed}.{}", chars.into_iter().collect::<String>())
}

async fn outbox_code(emulator: &Emulator, kind: &str) -> String {
    let url = format!(
        "{}/_emulator/projects/{}/outbox",
        emulator.api_base_url(),
        emulator.project()
    );
    let auth = format!("Bearer {}", emulator.api_key());
    let (status, body) = raw(emulator, "GET", &url, Some(&auth), "").await;
    assert_eq!(status, 200, "{body}");
    let mail = body.as_array().unwrap();
    let m = mail.iter().rev().find(|m| m["kind"] == kind).unwrap();
    m["code"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn secrets_never_reach_debug_display_or_logs() {
    // A second live dispatcher first: with only one registered, `tracing` computes a callsite's
    // interest from the default dispatcher of whichever thread hits it first, and a test running
    // on another thread (no subscriber) would switch the SDK's events off for this one too.
    // With two, it asks both: every callsite stays on, and each thread sends its events to its
    // own default (here, the capture; elsewhere, none).
    let _second = tracing::Dispatch::new(Capture::default());
    let capture = Capture::default();
    let _logging = tracing::subscriber::set_default(capture.clone());
    let mut l = Ledger::default();

    // TLS, so the transport's HTTP/2 and TLS layers log too. Access tokens live 20 s, under
    // the 30 s refresh threshold: every session request refreshes first.
    let emulator = Emulator::start(EmulatorConfig::default().tls(true).token_lifetimes(
        TokenLifetimes {
            access: Duration::from_secs(20),
            ..TokenLifetimes::default()
        },
    ))
    .await
    .unwrap();
    l.secret("API key", emulator.api_key());
    for (resource, token) in emulator.resource_tokens() {
        l.secret(&format!("token of {resource}"), token.as_str());
    }
    l.secret("tools token", emulator.tools_token());
    for (what, value) in [
        ("password", PASSWORD),
        ("new password", NEW_PASSWORD),
        ("reset password", RESET_PASSWORD),
        ("wrong password", WRONG_PASSWORD),
        ("wrong key", WRONG_KEY),
        ("wrong token", WRONG_TOKEN),
        ("broken key", BROKEN_KEY),
        ("broken key's second line", "Injected: Gz7"),
        ("upstream secret", UPSTREAM_SECRET),
    ] {
        l.secret(what, value);
    }
    let shop_token = emulator.resource_tokens()["shop"].clone();

    // 1. API key and resource tokens: pages, records, SQL, users, teams, reload.
    let builder = svc_tests::builder(&emulator).tools_token(emulator.tools_token());
    l.debug("builder with key and tokens", &builder);
    let c = builder.build().unwrap();
    l.debug("client with key and tokens", &c);
    let page = c
        .pages()
        .create(
            &PageSettings::new()
                .with("uid", "secret-test")
                .with("params", "{}"),
        )
        .await
        .unwrap();
    l.debug("created page", &page);
    l.debug("pages handle", &c.pages());
    l.debug("pages", &c.pages().list().await.unwrap());
    let update = UpdatePageSettings::from_params_json(r#"{"elements": []}"#).unwrap();
    l.debug(
        "updated page",
        &c.pages().update("secret-test", &update).await.unwrap(),
    );
    let orders = c.records("shop", "orders").token(shop_token.as_str());
    l.debug("records handle with a token", &orders);
    let listed = orders.list(&ListQuery::new().per_page(2)).await.unwrap();
    l.debug("records page", &listed);
    let query = c
        .sql("shop")
        .token(shop_token.as_str())
        .query("select count(*) as n from orders where id > :min")
        .bind("min", 3);
    l.debug("SQL query with a token", &query);
    l.debug("SQL answer", &query.send().await.unwrap());
    l.debug("users", &c.users().all(&ListQuery::new()).await.unwrap());
    l.debug("teams", &c.teams().all(&ListQuery::new()).await.unwrap());
    let resources = c.resources().token(shop_token.as_str());
    l.debug("resources handle with a token", &resources);
    resources.reload("shop").await.unwrap();
    c.resources().reload_tools().await.unwrap();
    let mut stream = c
        .records("shop", "orders")
        .stream(ListQuery::new().per_page(500))
        .unwrap();
    l.debug("record stream", &stream);
    {
        use futures_util::StreamExt;
        let first = stream.next().await.unwrap().unwrap();
        l.debug("streamed record", &first);
    }

    // 2. A user session: register, log in with the password, records through the session
    //    (each refreshes), a password change, a reset with a one-time code.
    let store = MemoryTokenStore::new();
    let builder = anonymous(&emulator).token_store(store.clone());
    l.debug("builder with a token store", &builder);
    let u = builder.build().unwrap();
    let register = RegisterRequest::new("ana@example.com", PASSWORD).first_name("Ana");
    l.debug("register request", &register);
    l.debug(
        "registered",
        &u.account().register(&register).await.unwrap(),
    );
    let login = u
        .account()
        .login("ana@example.com", PASSWORD)
        .await
        .unwrap();
    l.secret("login access token", login.token.access_token.clone());
    l.secret("login refresh token", login.token.refresh_token.clone());
    l.debug("login answer", &login);
    l.debug("login tokens", &login.token);
    l.debug("client with a session", &u);
    l.debug("token store", &store);
    for round in 0..3 {
        let page = u
            .records("shop", "orders")
            .list(&ListQuery::new().per_page(1))
            .await
            .unwrap();
        l.debug("records through the session", &page);
        l.session_in(&format!("refresh {round}"), &store);
    }
    let status = u.account().is_authenticated().await.unwrap();
    l.debug("authentication status", &status);
    l.session_in("after the check", &store);
    let headers = u.account().get_headers().await.unwrap().unwrap();
    l.debug("authorization headers", &headers);
    l.session_in("after the headers", &store);
    let changed = u
        .account()
        .change_password(NEW_PASSWORD, Some(PASSWORD.to_owned()))
        .await
        .unwrap();
    l.debug("password change", &changed);
    l.session_in("after the password change", &store);
    assert!(
        u.account()
            .reset_password("ana@example.com")
            .await
            .unwrap()
            .result
    );
    let code = outbox_code(&emulator, "reset_password").await;
    l.secret("reset code", code.clone());
    let reset = u
        .account()
        .reset_password_complete(code.clone(), RESET_PASSWORD)
        .await
        .unwrap();
    l.debug("reset", &reset);
    l.session_in("after the reset", &store);
    let used_code = u
        .account()
        .reset_password_complete(code, "fourth-password-Pe9Ub2")
        .await
        .unwrap();
    l.secret("unused password", "fourth-password-Pe9Ub2");
    l.debug("reset with a used code", &used_code);
    let used_refresh = login.token.refresh_token.clone();

    // 3. A service token.
    let url = format!(
        "{}/_emulator/projects/{}/service_token",
        emulator.api_base_url(),
        emulator.project()
    );
    let auth = format!("Bearer {}", emulator.api_key());
    let (_, minted) = raw(&emulator, "POST", &url, Some(&auth), "").await;
    let service_token = minted["token"].as_str().unwrap().to_owned();
    l.secret("service token", service_token.clone());
    let builder = anonymous(&emulator).service_token(service_token.as_str());
    l.debug("builder with a service token", &builder);
    let s = builder.build().unwrap();
    l.debug("client with a service token", &s);
    let page = s
        .records("shop", "orders")
        .list(&ListQuery::new().per_page(1))
        .await
        .unwrap();
    l.debug("records through the service token", &page);
    l.debug(
        "service principal",
        &s.account().is_authenticated().await.unwrap(),
    );
    l.debug("service headers", &s.account().get_headers().await.unwrap());

    // 4. Failures with each credential.
    let bad_key = anonymous(&emulator).api_key(WRONG_KEY).build().unwrap();
    l.debug("client with a wrong key", &bad_key);
    let err = bad_key.pages().list().await.unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(401));
    l.error("wrong API key", &err);
    let err = c
        .records("shop", "orders")
        .token(WRONG_TOKEN)
        .list(&ListQuery::new())
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(401));
    l.error("wrong resource token", &err);
    let err = c
        .records("shop", "orders")
        .token(emulator.tools_token())
        .list(&ListQuery::new())
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(403));
    l.error("tools token on a resource", &err);
    let err = c
        .sql("shop")
        .token(WRONG_TOKEN)
        .query("select 1")
        .send()
        .await
        .unwrap_err();
    l.error("SQL with a wrong token", &err);
    let err = u
        .account()
        .login("ana@example.com", WRONG_PASSWORD)
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(401));
    l.error("wrong password", &err);
    let err = anonymous(&emulator)
        .api_key(BROKEN_KEY)
        .build()
        .unwrap()
        .pages()
        .list()
        .await
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err:?}");
    l.error("a key that cannot be a header", &err);
    // A session whose access token was tampered with (and does not need a refresh yet).
    let far = Timestamp::now()
        .checked_add(Duration::from_secs(3600))
        .unwrap();
    let tampered_access = tampered(&login.token.access_token);
    l.secret("tampered access token", tampered_access.clone());
    let bad_store = MemoryTokenStore::new();
    let state = AuthState::new(tampered_access.as_str(), used_refresh.as_str())
        .with_access_token_expires(far)
        .with_refresh_token_expires(far);
    bad_store
        .set(SVC_AUTH_KEY, &serde_json::to_string(&state).unwrap())
        .unwrap();
    let t = anonymous(&emulator)
        .token_store(bad_store.clone())
        .build()
        .unwrap();
    let err = t
        .records("shop", "orders")
        .list(&ListQuery::new())
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(401));
    l.error("tampered access token", &err);
    l.debug("token store holding a tampered session", &bad_store);
    // A session due for a refresh whose refresh token was already used: the refresh is refused
    // and the session cleared.
    let soon = Timestamp::now()
        .checked_add(Duration::from_secs(5))
        .unwrap();
    let state = AuthState::new(tampered_access.as_str(), used_refresh.as_str())
        .with_access_token_expires(soon);
    bad_store
        .set(SVC_AUTH_KEY, &serde_json::to_string(&state).unwrap())
        .unwrap();
    let t = anonymous(&emulator)
        .token_store(bad_store.clone())
        .build()
        .unwrap();
    let err = t
        .records("shop", "orders")
        .list(&ListQuery::new())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Auth(_)), "{err:?}");
    l.error("used refresh token", &err);
    let tampered_service = tampered(&service_token);
    l.secret("tampered service token", tampered_service.clone());
    let err = anonymous(&emulator)
        .service_token(tampered_service)
        .build()
        .unwrap()
        .records("shop", "orders")
        .list(&ListQuery::new())
        .await
        .unwrap_err();
    assert_eq!(err.status().map(|s| s.as_u16()), Some(401));
    l.error("tampered service token", &err);
    // The proxy, with a secret header for an upstream that is not there.
    let proxied = u
        .proxy()
        .get("http://127.0.0.1:9/")
        .header("Authorization", format!("Bearer {UPSTREAM_SECRET}"))
        .query("api_key", UPSTREAM_SECRET);
    l.debug("proxy request with a secret header", &proxied);
    match proxied.send().await {
        Ok(answer) => l.debug("proxy answer", &answer),
        Err(err) => l.error("proxy failure", &err),
    }

    // 5. Answers of the wrong shape carrying tokens: a login and a refresh answered by a
    //    server that puts the tokens where they do not belong.
    let access = login.token.access_token.clone();
    let odd = Client::builder()
        .project("demo")
        .api_base_url("http://127.0.0.1:1")
        .transport(move |req: http::Request<Bytes>| {
            let access = access.clone();
            async move {
                let body = if req.uri().path().ends_with("/auth/login") {
                    json!({"token": access, "user": {"uid": "u"}})
                } else {
                    json!({"access_token": access, "refresh_token": [access]})
                };
                Ok::<_, TransportError>(
                    http::Response::builder()
                        .status(200)
                        .body(Bytes::from(serde_json::to_vec(&body).unwrap()))
                        .unwrap(),
                )
            }
        })
        .build()
        .unwrap();
    let err = odd
        .account()
        .login("ana@example.com", PASSWORD)
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Decode(_)), "{err:?}");
    l.error("login answer of the wrong shape", &err);
    let store = MemoryTokenStore::new();
    let soon = Timestamp::now()
        .checked_add(Duration::from_secs(5))
        .unwrap();
    let state = AuthState::new(login.token.access_token.as_str(), used_refresh.as_str())
        .with_access_token_expires(soon);
    store
        .set(SVC_AUTH_KEY, &serde_json::to_string(&state).unwrap())
        .unwrap();
    let odd_refresh = Client::builder()
        .project("demo")
        .api_base_url("http://127.0.0.1:1")
        .token_store(store)
        .transport({
            let access = login.token.access_token.clone();
            move |_req: http::Request<Bytes>| {
                let body = json!({"access_token": access.clone(), "refresh_token": 7});
                async move {
                    Ok::<_, TransportError>(
                        http::Response::builder()
                            .status(200)
                            .body(Bytes::from(serde_json::to_vec(&body).unwrap()))
                            .unwrap(),
                    )
                }
            }
        })
        .build()
        .unwrap();
    let err = odd_refresh
        .records("shop", "orders")
        .list(&ListQuery::new())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Auth(_)), "{err:?}");
    l.error("refresh answer of the wrong shape", &err);

    // Nothing printed holds a secret.
    let logs = capture.text();
    drop(emulator);
    assert!(
        logs.contains("svc-api: answered") && logs.contains("status=401"),
        "the SDK's events were captured:\n{logs}"
    );
    assert!(logs.contains("path=/projects/demo/prod/shop/models/orders"));
    let mut leaks = Vec::new();
    for (what, secret) in &l.secrets {
        for (place, text) in &l.printed {
            if text.contains(secret.as_str()) {
                leaks.push(format!("the {what} appears in {place}: {text}"));
            }
        }
        if let Some(line) = logs.lines().find(|line| line.contains(secret.as_str())) {
            leaks.push(format!("the {what} appears in the logs: {line}"));
        }
    }
    assert!(leaks.is_empty(), "{}", leaks.join("\n"));
    assert!(l.secrets.len() >= 20, "{} secrets", l.secrets.len());
    assert!(l.printed.len() >= 100, "{} texts", l.printed.len());
}
