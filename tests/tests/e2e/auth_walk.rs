//! Emulator authentication, route by route: every route of both hosts (and the emulator-only
//! ones) refuses a missing credential, an unknown one, an API key or a session of another
//! project, a resource token of another resource, an expired, tampered or unsigned JWT; and
//! `auth/refresh` refuses a used refresh token. The statuses are the contract's (section 3):
//! no credential, or one the route does not know, `401`; a valid credential for another project
//! or resource, `403`. Nothing changes on the way.

use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};
use svc_api::Client;
use svc_api::model::PageSettings;
use svc_api::model::account::RegisterRequest;
use svc_api::model::records::ListQuery;
use svc_api::model::users::{NewUser, TEAMS_MODEL, TOOLS_RESOURCE, USERS_MODEL};
use svc_emulator::{
    Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig, SEEDED_TEAMS,
    TokenLifetimes,
};
use svc_transport::{HyperTransport, Transport};

const PASSWORD: &str = "walk the routes 42";
/// Access and service tokens live this long, so that the walk can hold expired ones.
const SHORT: Duration = Duration::from_secs(4);

/// Which credentials a route takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Records, SQL and reload of the resource `shop`: its token, the API key, a session.
    Resource,
    /// `__svc_app__` (users, teams, its SQL and reload): the tools token, the API key, a session.
    Tools,
    /// `auth/user`: a session, or a service token (which it answers for).
    User,
    /// Account routes that change a signed-in user: a session only.
    Session,
    /// The application host (projects, page settings): the API key only.
    App,
    /// The HTTP proxy: a session or service token only; the body names the project.
    Proxy,
    /// Emulator-only routes: the API key only.
    Emulator,
}

/// A credential to try, and the status the contract gives it on each kind of route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Try {
    Missing,
    Empty,
    UnknownBearer,
    UnknownRaw,
    /// `Bearer key_beta` on alpha.
    ApiKeyOfOtherProject,
    /// `tok_crm` (alpha's other resource), raw.
    TokenOfOtherResource,
    /// `Bearer tok_crm`: real clients send resource tokens this way too.
    BearerTokenOfOtherResource,
    /// `tok_beta_shop`: beta's resource of the same name.
    TokenOfOtherProject,
    /// alpha's tools token on another resource than `__svc_app__`.
    ToolsToken,
    /// beta's tools token.
    ToolsTokenOfOtherProject,
    /// alpha's access token, expired.
    ExpiredAccess,
    /// alpha's service token, expired.
    ExpiredService,
    /// A fresh alpha access token with one character of its signature changed.
    TamperedSignature,
    /// The same, with the signature's last character changed: only its low bits, which base64
    /// leaves unused, so a lenient decoder reads the same signature bytes.
    TamperedSignatureLastChar,
    /// A fresh alpha access token whose payload says another user.
    TamperedPayload,
    /// `alg: none`, no signature.
    Unsigned,
    /// alpha's refresh token sent as an access token.
    RefreshAsAccess,
    /// A fresh, valid access token of a beta user.
    SessionOfOtherProject,
    /// A fresh, valid service token of beta.
    ServiceOfOtherProject,
}

const TRIES: [Try; 19] = [
    Try::Missing,
    Try::Empty,
    Try::UnknownBearer,
    Try::UnknownRaw,
    Try::ApiKeyOfOtherProject,
    Try::TokenOfOtherResource,
    Try::BearerTokenOfOtherResource,
    Try::TokenOfOtherProject,
    Try::ToolsToken,
    Try::ToolsTokenOfOtherProject,
    Try::ExpiredAccess,
    Try::ExpiredService,
    Try::TamperedSignature,
    Try::TamperedSignatureLastChar,
    Try::TamperedPayload,
    Try::Unsigned,
    Try::RefreshAsAccess,
    Try::SessionOfOtherProject,
    Try::ServiceOfOtherProject,
];

impl Try {
    /// The contract's status for this credential on a route of `kind`.
    fn expected(self, kind: Kind) -> u16 {
        use Kind::*;
        match self {
            // No credential, an unknown one, or one no longer (or never) valid: 401.
            Try::Missing
            | Try::Empty
            | Try::UnknownBearer
            | Try::UnknownRaw
            | Try::ExpiredAccess
            | Try::ExpiredService
            | Try::TamperedSignature
            | Try::TamperedSignatureLastChar
            | Try::TamperedPayload
            | Try::Unsigned
            | Try::RefreshAsAccess => 401,
            // Valid API key of another project: 403 where API keys are credentials.
            Try::ApiKeyOfOtherProject => match kind {
                Resource | Tools | App | Emulator => 403,
                User | Session | Proxy => 401,
            },
            // Valid resource tokens for another resource or project: 403 on the data host's
            // resource routes; elsewhere a resource token is no credential at all.
            Try::TokenOfOtherResource
            | Try::BearerTokenOfOtherResource
            | Try::TokenOfOtherProject
            | Try::ToolsToken
            | Try::ToolsTokenOfOtherProject => match kind {
                Resource | Tools => 403,
                User | Session | App | Proxy | Emulator => 401,
            },
            // Valid sessions of another project: 403 wherever sessions are credentials.
            Try::SessionOfOtherProject => match kind {
                Resource | Tools | User | Session | Proxy => 403,
                App | Emulator => 401,
            },
            // A service token serves what a session serves, but does not change a user.
            Try::ServiceOfOtherProject => match kind {
                Resource | Tools | User | Proxy => 403,
                Session | App | Emulator => 401,
            },
        }
    }
}

struct Route {
    kind: Kind,
    method: &'static str,
    url: String,
    body: Value,
    /// A read: the walk also checks that a valid credential gets `200` there, so that the
    /// refusals are the credential's doing.
    read: bool,
}

/// Raw requests on one pooled transport, with any `Authorization` value.
struct Raw(HyperTransport);

impl Raw {
    async fn send(
        &self,
        method: &str,
        url: &str,
        authorization: Option<&str>,
        body: &Value,
    ) -> (u16, Value) {
        let mut request = http::Request::builder().method(method).uri(url);
        if let Some(auth) = authorization {
            request = request.header("authorization", auth);
        }
        let body = if body.is_null() {
            Bytes::new()
        } else {
            request = request.header("content-type", "application/json");
            Bytes::from(serde_json::to_vec(body).unwrap())
        };
        let response = self
            .0
            .send(request.body(body).unwrap())
            .await
            .expect("an answer");
        let status = response.status().as_u16();
        let json = serde_json::from_slice(response.body()).unwrap_or(Value::Null);
        (status, json)
    }
}

fn config() -> ProjectsConfig {
    let items = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL); \
                 INSERT INTO items (name) VALUES ('apple'), ('pear');";
    ProjectsConfig::new(vec![
        ProjectConfig::new("alpha")
            .environments(["prod", "staging"])
            .api_key("key_alpha_0123456789")
            .tools_token("tools_alpha_0123456789")
            .resource(ResourceConfig::new("shop", "tok_alpha_shop_0123").seed_sql(items))
            .resource(ResourceConfig::new("crm", "tok_alpha_crm_0123").seed_sql(items)),
        ProjectConfig::new("beta")
            .api_key("key_beta_0123456789")
            .tools_token("tools_beta_0123456789")
            .resource(ResourceConfig::new("shop", "tok_beta_shop_0123").seed_sql(items)),
    ])
}

fn client(emulator: &Emulator, project: &str) -> svc_api::ClientBuilder {
    Client::builder()
        .project(project)
        .api_base_url(emulator.api_base_url())
        .app_base_url(emulator.app_base_url())
}

/// A fresh session of `email` in `project`: (access token, refresh token).
async fn login(emulator: &Emulator, project: &str, email: &str) -> (String, String) {
    let c = client(emulator, project).build().unwrap();
    let signed = c.account().login(email, PASSWORD).await.unwrap();
    (signed.token.access_token, signed.token.refresh_token)
}

async fn service_token(raw: &Raw, emulator: &Emulator, project: &str, key: &str) -> String {
    let url = format!(
        "{}/_emulator/projects/{project}/service_token",
        emulator.api_base_url()
    );
    let (status, body) = raw
        .send("POST", &url, Some(&format!("Bearer {key}")), &Value::Null)
        .await;
    assert_eq!(status, 200, "{body}");
    body["token"].as_str().unwrap().to_owned()
}

/// `token` with the base64url character at `index` of its signature replaced.
fn tamper_signature(token: &str, index: impl Fn(usize) -> usize) -> String {
    let (signed, signature) = token.rsplit_once('.').unwrap();
    let mut chars: Vec<char> = signature.chars().collect();
    let at = index(chars.len());
    // Flip the lowest bit of the character's 6-bit value: the smallest change there is.
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let value = B64
        .iter()
        .position(|&b| char::from(b) == chars[at])
        .unwrap();
    chars[at] = char::from(B64[value ^ 1]);
    let tampered = format!("{signed}.{}", chars.into_iter().collect::<String>());
    assert_ne!(tampered, token);
    tampered
}

fn b64url(data: &[u8]) -> String {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let keep = chunk.len() + 1;
        for i in 0..keep {
            out.push(char::from(B64[(n >> (18 - 6 * i)) as usize & 63]));
        }
    }
    out
}

fn b64url_decode(text: &str) -> Vec<u8> {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes() {
        let v = B64.iter().position(|&b| b == c).unwrap() as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// `token` with another user in its payload, the signature kept.
fn tamper_payload(token: &str) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    let mut claims: Value = serde_json::from_slice(&b64url_decode(parts[1])).unwrap();
    claims["sub"] = json!("00000000-0000-4000-8000-000000000000");
    let payload = b64url(&serde_json::to_vec(&claims).unwrap());
    format!("{}.{payload}.{}", parts[0], parts[2])
}

/// `token`'s payload under an `alg: none` header, without a signature.
fn unsigned(token: &str) -> String {
    let payload = token.split('.').nth(1).unwrap();
    format!("{}.{payload}.", b64url(br#"{"alg":"none","typ":"JWT"}"#))
}

/// Everything a refused request could have changed, read with valid credentials.
async fn snapshot(emulator: &Emulator, raw: &Raw) -> Value {
    let alpha = client(emulator, "alpha")
        .api_key("key_alpha_0123456789")
        .build()
        .unwrap();
    let items = alpha
        .records("shop", "items")
        .all(&ListQuery::new())
        .await
        .unwrap();
    let users = alpha.users().all(&ListQuery::new()).await.unwrap();
    let teams = alpha.teams().all(&ListQuery::new()).await.unwrap();
    let pages = alpha.pages().list().await.unwrap();
    let session = client(emulator, "alpha").build().unwrap();
    let me = session
        .account()
        .login("ana@alpha.test", PASSWORD)
        .await
        .expect("the password is unchanged")
        .user;
    let outbox_url = format!(
        "{}/_emulator/projects/alpha/outbox",
        emulator.api_base_url()
    );
    let (_, outbox) = raw
        .send(
            "GET",
            &outbox_url,
            Some("Bearer key_alpha_0123456789"),
            &Value::Null,
        )
        .await;
    json!({
        "items": items,
        "users": users.iter().map(|u| json!([u.uid, u.email, u.group])).collect::<Vec<_>>(),
        "teams": teams.iter().map(|t| json!([t.uid, t.name])).collect::<Vec<_>>(),
        "pages": pages.iter().map(|p| json!([p.uid(), p.params_raw()])).collect::<Vec<_>>(),
        "me": [me.uid, me.email],
        "outbox": outbox,
    })
}

#[tokio::test]
async fn every_route_refuses_every_bad_credential() {
    let emulator = Emulator::start(
        EmulatorConfig::default()
            .projects(config())
            .token_lifetimes(TokenLifetimes {
                access: SHORT,
                service: SHORT,
                ..TokenLifetimes::default()
            }),
    )
    .await
    .unwrap();
    let raw = Raw(HyperTransport::builder().build().unwrap());
    let api = emulator.api_base_url().to_owned();
    let app = emulator.app_base_url().to_owned();

    // Fixtures: a user in each project, a page, a tools user; alpha's expiring tokens.
    for (project, email) in [("alpha", "ana@alpha.test"), ("beta", "bo@beta.test")] {
        let r = client(&emulator, project)
            .build()
            .unwrap()
            .account()
            .register(&RegisterRequest::new(email, PASSWORD))
            .await
            .unwrap();
        assert!(r.result, "{r:?}");
    }
    let issued = Instant::now();
    let (expired_access, used_refresh) = login(&emulator, "alpha", "ana@alpha.test").await;
    let expired_service = service_token(&raw, &emulator, "alpha", "key_alpha_0123456789").await;
    // Use the refresh token once: from now on it is a used one.
    let refresh_url = format!("{api}/projects/alpha/prod/auth/refresh");
    let (status, _) = raw
        .send(
            "POST",
            &refresh_url,
            None,
            &json!({ "refresh_token": used_refresh }),
        )
        .await;
    assert_eq!(status, 200);
    let alpha = client(&emulator, "alpha")
        .api_key("key_alpha_0123456789")
        .tools_token("tools_alpha_0123456789")
        .build()
        .unwrap();
    alpha
        .pages()
        .create(&PageSettings::new().with("uid", "p1").with("params", "{}"))
        .await
        .unwrap();
    let (admins, _) = SEEDED_TEAMS[0];
    let (editors, _) = SEEDED_TEAMS[1];
    let user = alpha
        .users()
        .create(&NewUser::new("walker@alpha.test", admins))
        .await
        .unwrap();
    let before = snapshot(&emulator, &raw).await;

    // Every route, with a body that would succeed, were the credential good.
    let data = format!("{api}/projects/alpha/prod");
    let items = format!("{data}/shop/models/items");
    let tools = format!("{data}/{TOOLS_RESOURCE}/models");
    let pages = format!("{app}/projects/alpha/prod/view_settings");
    let emu = format!("{api}/_emulator/projects/alpha");
    let no_body = Value::Null;
    let route = |kind, method, url: String, body: Value, read| Route {
        kind,
        method,
        url,
        body,
        read,
    };
    let routes = vec![
        route(Kind::Resource, "GET", items.clone(), no_body.clone(), true),
        route(
            Kind::Resource,
            "POST",
            items.clone(),
            json!({"name": "x"}),
            false,
        ),
        route(
            Kind::Resource,
            "GET",
            format!("{items}/1"),
            no_body.clone(),
            true,
        ),
        route(
            Kind::Resource,
            "PATCH",
            format!("{items}/1"),
            json!({"name": "y"}),
            false,
        ),
        route(
            Kind::Resource,
            "DELETE",
            format!("{items}/1"),
            no_body.clone(),
            false,
        ),
        route(
            Kind::Resource,
            "GET",
            format!("{items}/aggregate?_y_func=count"),
            no_body.clone(),
            true,
        ),
        route(
            Kind::Resource,
            "POST",
            format!("{items}/aggregate"),
            json!({"func": "count"}),
            true,
        ),
        route(
            Kind::Resource,
            "GET",
            format!("{items}/group?_x_column=name&_y_func=count"),
            no_body.clone(),
            true,
        ),
        route(
            Kind::Resource,
            "POST",
            format!("{items}/group"),
            json!({"x_column": "name", "y_func": "count"}),
            true,
        ),
        route(
            Kind::Resource,
            "POST",
            format!("{data}/shop/sql_get_query"),
            json!({"query": "select count(*) from items"}),
            true,
        ),
        route(
            Kind::Resource,
            "POST",
            format!("{data}/shop/reload"),
            no_body.clone(),
            false,
        ),
        route(
            Kind::Tools,
            "POST",
            format!("{data}/{TOOLS_RESOURCE}/reload"),
            no_body.clone(),
            false,
        ),
        route(
            Kind::Tools,
            "POST",
            format!("{data}/{TOOLS_RESOURCE}/sql_get_query"),
            json!({"query": "select 1"}),
            true,
        ),
        route(
            Kind::Tools,
            "GET",
            format!("{tools}/{USERS_MODEL}"),
            no_body.clone(),
            true,
        ),
        route(
            Kind::Tools,
            "POST",
            format!("{tools}/{USERS_MODEL}"),
            json!({"email": "intruder@alpha.test", "group": admins}),
            false,
        ),
        route(
            Kind::Tools,
            "GET",
            format!("{tools}/{USERS_MODEL}/{}", user.uid),
            no_body.clone(),
            true,
        ),
        route(
            Kind::Tools,
            "PATCH",
            format!("{tools}/{USERS_MODEL}/{}", user.uid),
            json!({"group": editors}),
            false,
        ),
        route(
            Kind::Tools,
            "DELETE",
            format!("{tools}/{USERS_MODEL}/{}", user.uid),
            no_body.clone(),
            false,
        ),
        route(
            Kind::Tools,
            "GET",
            format!("{tools}/{TEAMS_MODEL}"),
            no_body.clone(),
            true,
        ),
        route(
            Kind::Tools,
            "GET",
            format!("{tools}/{TEAMS_MODEL}/{admins}"),
            no_body.clone(),
            true,
        ),
        route(
            Kind::Tools,
            "PATCH",
            format!("{tools}/{TEAMS_MODEL}/{admins}"),
            json!({"name": "Owned"}),
            false,
        ),
        route(
            Kind::User,
            "GET",
            format!("{data}/auth/user"),
            no_body.clone(),
            true,
        ),
        route(
            Kind::Session,
            "POST",
            format!("{data}/auth/change_password"),
            json!({"new_password": "owned owned owned", "current_password": PASSWORD}),
            false,
        ),
        route(
            Kind::Session,
            "POST",
            format!("{data}/auth/change_email"),
            json!({"new_email": "owned@evil.test", "current_password": PASSWORD}),
            false,
        ),
        route(
            Kind::App,
            "GET",
            format!("{app}/projects/alpha/"),
            no_body.clone(),
            true,
        ),
        route(Kind::App, "GET", format!("{pages}/"), no_body.clone(), true),
        route(
            Kind::App,
            "POST",
            format!("{pages}/"),
            json!({"uid": "intruder", "params": "{}"}),
            false,
        ),
        route(
            Kind::App,
            "GET",
            format!("{pages}/p1/"),
            no_body.clone(),
            true,
        ),
        route(
            Kind::App,
            "PATCH",
            format!("{pages}/p1/"),
            json!({"params": "{\"owned\": true}"}),
            false,
        ),
        route(
            Kind::App,
            "DELETE",
            format!("{pages}/p1/"),
            no_body.clone(),
            false,
        ),
        route(
            Kind::Proxy,
            "POST",
            format!("{app}/proxy_request/"),
            json!({"url": "http://127.0.0.1:9/", "project": "alpha", "environment": "prod"}),
            false,
        ),
        route(
            Kind::Emulator,
            "GET",
            format!("{emu}/outbox"),
            no_body.clone(),
            true,
        ),
        route(
            Kind::Emulator,
            "POST",
            format!("{emu}/service_token"),
            no_body.clone(),
            true,
        ),
        route(
            Kind::Emulator,
            "GET",
            format!("{emu}/stats"),
            no_body.clone(),
            true,
        ),
    ];

    // The expiring tokens must be expired before the walk starts.
    let wait = (SHORT + Duration::from_millis(1100)).saturating_sub(issued.elapsed());
    tokio::time::sleep(wait).await;

    let mut checked = 0;
    for r in &routes {
        // Fresh tokens, valid for a few seconds: those of alpha to tamper with, beta's whole.
        let (alpha_access, alpha_refresh) = login(&emulator, "alpha", "ana@alpha.test").await;
        let (beta_access, _) = login(&emulator, "beta", "bo@beta.test").await;
        let beta_service = service_token(&raw, &emulator, "beta", "key_beta_0123456789").await;
        for t in TRIES {
            let auth: Option<String> = match t {
                Try::Missing => None,
                Try::Empty => Some(String::new()),
                Try::UnknownBearer => Some("Bearer svc_key_nobody_knows".into()),
                Try::UnknownRaw => Some("svc_tok_nobody_knows".into()),
                Try::ApiKeyOfOtherProject => Some("Bearer key_beta_0123456789".into()),
                Try::TokenOfOtherResource => Some("tok_alpha_crm_0123".into()),
                Try::BearerTokenOfOtherResource => Some("Bearer tok_alpha_crm_0123".into()),
                Try::TokenOfOtherProject => Some("tok_beta_shop_0123".into()),
                // On `__svc_app__` alpha's tools token is good: try beta's there instead.
                Try::ToolsToken if r.kind == Kind::Tools => Some("tools_beta_0123456789".into()),
                Try::ToolsToken => Some("tools_alpha_0123456789".into()),
                Try::ToolsTokenOfOtherProject => Some("tools_beta_0123456789".into()),
                Try::ExpiredAccess => Some(format!("JWT {expired_access}")),
                Try::ExpiredService => Some(format!("JWT {expired_service}")),
                Try::TamperedSignature => Some(format!(
                    "JWT {}",
                    tamper_signature(&alpha_access, |n| n / 2)
                )),
                Try::TamperedSignatureLastChar => Some(format!(
                    "JWT {}",
                    tamper_signature(&alpha_access, |n| n - 1)
                )),
                Try::TamperedPayload => Some(format!("JWT {}", tamper_payload(&alpha_access))),
                Try::Unsigned => Some(format!("JWT {}", unsigned(&alpha_access))),
                Try::RefreshAsAccess => Some(format!("JWT {alpha_refresh}")),
                Try::SessionOfOtherProject => Some(format!("JWT {beta_access}")),
                Try::ServiceOfOtherProject => Some(format!("JWT {beta_service}")),
            };
            let (status, body) = raw.send(r.method, &r.url, auth.as_deref(), &r.body).await;
            let want = t.expected(r.kind);
            assert_eq!(status, want, "{} {} with {t:?}: {body}", r.method, r.url);
            let code = if want == 401 {
                "not_authenticated"
            } else {
                "permission_denied"
            };
            assert_eq!(
                body["error_code"], code,
                "{} {} with {t:?}",
                r.method, r.url
            );
            checked += 1;
        }
        if r.read {
            // The control: the same route with a good credential answers.
            let good = match r.kind {
                Kind::Resource | Kind::Tools | Kind::User | Kind::Session => {
                    format!("JWT {alpha_access}")
                }
                Kind::App | Kind::Emulator => "Bearer key_alpha_0123456789".to_owned(),
                Kind::Proxy => unreachable!("the proxy route is not a read"),
            };
            let (status, body) = raw.send(r.method, &r.url, Some(&good), &r.body).await;
            assert_eq!(
                status, 200,
                "{} {} with a good credential: {body}",
                r.method, r.url
            );
        }
    }
    assert_eq!(checked, routes.len() * TRIES.len());

    // auth/refresh takes its credential in the body: a used, tampered or foreign refresh token,
    // or an access token, is refused; nothing is issued.
    let (fresh_access, fresh_refresh) = login(&emulator, "alpha", "ana@alpha.test").await;
    let (_, beta_refresh) = login(&emulator, "beta", "bo@beta.test").await;
    for (what, token) in [
        ("a used refresh token", used_refresh.clone()),
        ("an expired access token", expired_access.clone()),
        ("an access token", fresh_access.clone()),
        (
            "a tampered refresh token",
            tamper_signature(&fresh_refresh, |n| n / 2),
        ),
        ("a refresh token of another project", beta_refresh.clone()),
        ("no token", String::new()),
    ] {
        let (status, body) = raw
            .send(
                "POST",
                &refresh_url,
                None,
                &json!({ "refresh_token": token }),
            )
            .await;
        assert_eq!(status, 401, "{what}: {body}");
        assert_eq!(body["error_code"], "token_not_valid", "{what}: {body}");
        assert!(body.get("access_token").is_none());
    }
    // The fresh one still works once, then it is a used one too.
    for want in [200, 401] {
        let (status, _) = raw
            .send(
                "POST",
                &refresh_url,
                None,
                &json!({ "refresh_token": fresh_refresh }),
            )
            .await;
        assert_eq!(status, want);
    }

    let after = snapshot(&emulator, &raw).await;
    assert_eq!(after, before, "a refused request changed something");
}
