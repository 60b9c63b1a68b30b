//! User sessions over real HTTP: a password change or reset ends every earlier session, access
//! tokens included, also after a restart on the same data path.

mod common;

use common::{Call, Reply, TempDir, send};
use http::Method;
use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig};

const EMAIL: &str = "ada@example.com";
const RECORDS: &str = "/projects/demo/prod/shop/models/customers";

fn auth_path(name: &str) -> String {
    format!("/projects/demo/prod/auth/{name}")
}

async fn post(emu: &Emulator, name: &str, jwt: Option<&str>, body: Value) -> Reply {
    let mut call = Call::new(Method::POST, auth_path(name)).json(&body);
    if let Some(token) = jwt {
        call = call.auth(format!("JWT {token}"));
    }
    send(emu, call).await
}

/// The status of `GET auth/user` and of a records list with `JWT token`.
async fn statuses(emu: &Emulator, token: &str) -> (u16, u16) {
    let user = send(
        emu,
        Call::get(auth_path("user")).auth(format!("JWT {token}")),
    )
    .await;
    let records = send(emu, Call::get(RECORDS).auth(format!("JWT {token}"))).await;
    (user.status.as_u16(), records.status.as_u16())
}

/// Access and refresh token of an AuthState.
fn tokens(state: &Value) -> (String, String) {
    (
        state["access_token"].as_str().unwrap().to_owned(),
        state["refresh_token"].as_str().unwrap().to_owned(),
    )
}

async fn login(emu: &Emulator, password: &str) -> (String, String) {
    let r = post(
        emu,
        "login",
        None,
        json!({"email": EMAIL, "password": password}),
    )
    .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    tokens(&r.json()["token"])
}

async fn start(data: &std::path::Path) -> Emulator {
    Emulator::start(EmulatorConfig::default().data_path(data))
        .await
        .unwrap()
}

/// Regression: access tokens stayed valid after a password change, until they expired.
#[tokio::test]
async fn a_password_change_or_reset_ends_every_earlier_session() {
    let dir = TempDir::new();
    let data = dir.join("emu.sqlite");
    let emu = start(&data).await;
    let r = post(
        &emu,
        "register",
        None,
        json!({"email": EMAIL, "password": "first password"}),
    )
    .await;
    assert_eq!(r.json()["result"], true);
    // Two sessions, as on two devices.
    let (phone, phone_refresh) = login(&emu, "first password").await;
    let (laptop, laptop_refresh) = login(&emu, "first password").await;
    assert_eq!(statuses(&emu, &phone).await, (200, 200));
    assert_eq!(statuses(&emu, &laptop).await, (200, 200));

    let r = post(
        &emu,
        "change_password",
        Some(&phone),
        json!({"new_password": "second password", "current_password": "first password"}),
    )
    .await;
    let answer = r.json();
    assert_eq!(answer["result"], true, "{answer}");
    let (access, refresh) = tokens(&answer["new_state"]);

    // Every earlier token is refused, on every route; the new session works.
    assert_eq!(statuses(&emu, &phone).await, (401, 401));
    assert_eq!(statuses(&emu, &laptop).await, (401, 401));
    assert_eq!(statuses(&emu, &access).await, (200, 200));
    for old in [&phone_refresh, &laptop_refresh] {
        let r = post(&emu, "refresh", None, json!({"refresh_token": old})).await;
        assert_eq!(r.status, 401);
    }
    let r = post(&emu, "refresh", None, json!({"refresh_token": refresh})).await;
    assert_eq!(r.status, 200);
    let (refreshed, _) = tokens(&r.json());
    assert_eq!(statuses(&emu, &refreshed).await, (200, 200));
    let old_login = post(
        &emu,
        "login",
        None,
        json!({"email": EMAIL, "password": "first password"}),
    )
    .await;
    assert_eq!(old_login.status, 401);

    // The end of those sessions survives a restart on the same data path.
    emu.shutdown().await;
    let emu = start(&data).await;
    assert_eq!(statuses(&emu, &laptop).await, (401, 401));
    assert_eq!(statuses(&emu, &refreshed).await, (200, 200));

    // A reset through a code ends the sessions too.
    let r = post(&emu, "reset_password", None, json!({"email": EMAIL})).await;
    assert_eq!(r.json()["result"], true);
    let outbox = send(
        &emu,
        Call::get("/_emulator/projects/demo/outbox").bearer(emu.api_key()),
    )
    .await
    .json();
    let code = outbox.as_array().unwrap().last().unwrap()["code"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = post(
        &emu,
        "reset_password_complete",
        None,
        json!({"code": code, "new_password": "third password"}),
    )
    .await;
    let answer = r.json();
    assert_eq!(answer["result"], true, "{answer}");
    let (after_reset, _) = tokens(&answer["new_state"]);
    assert_eq!(statuses(&emu, &refreshed).await, (401, 401));
    assert_eq!(statuses(&emu, &after_reset).await, (200, 200));
    let (fresh, _) = login(&emu, "third password").await;
    assert_eq!(statuses(&emu, &fresh).await, (200, 200));
    emu.shutdown().await;
}
