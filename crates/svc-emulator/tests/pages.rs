//! Page settings over real HTTP: every operation, every draft rule, every error status.

mod common;

use common::{Call, Reply, demo, send};
use http::Method;
use serde_json::{Value, json};
use svc_emulator::Emulator;

fn base(emu: &Emulator) -> String {
    format!(
        "/api/projects/{}/{}/view_settings/",
        emu.project(),
        emu.environment()
    )
}

fn item(emu: &Emulator, encoded_uid: &str) -> String {
    format!("{}{encoded_uid}/", base(emu))
}

async fn call(emu: &Emulator, method: Method, path: String, body: Option<Value>) -> Reply {
    let mut c = Call::new(method, path).bearer(emu.api_key());
    if let Some(body) = body {
        c = c.json(&body);
    }
    send(emu, c).await
}

async fn create(emu: &Emulator, draft: &str, body: Value) -> Value {
    let r = call(
        emu,
        Method::POST,
        format!("{}?draft={draft}", base(emu)),
        Some(body),
    )
    .await;
    assert_eq!(r.status, 201, "{:?}", r.json());
    r.json()
}

async fn get(emu: &Emulator, uid: &str, draft: &str) -> Reply {
    call(
        emu,
        Method::GET,
        format!("{}?draft={draft}", item(emu, uid)),
        None,
    )
    .await
}

async fn list_uids(emu: &Emulator, draft: &str) -> Vec<String> {
    let r = call(
        emu,
        Method::GET,
        format!("{}?draft={draft}", base(emu)),
        None,
    )
    .await;
    assert_eq!(r.status, 200);
    r.json()
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["uid"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn crud_round_trip() {
    let emu = demo().await;
    let r = call(&emu, Method::GET, base(&emu), None).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json(), json!([]));

    let params = r#"{"elements":[{"type":"table"}]}"#;
    let created = create(
        &emu,
        "0",
        json!({"unique_name": "orders", "name": "Orders", "params": params, "theme": {"dark": true},
               "draft": true, "deleted": true, "date_add": "1999-01-01T00:00:00Z"}),
    )
    .await;
    let uid = created["uid"].as_str().unwrap().to_owned();
    assert_eq!(uid.len(), 36, "a UUID: {uid}");
    assert_eq!(uid.matches('-').count(), 4);
    assert_eq!(created["unique_name"], "orders");
    assert_eq!(created["params"], params);
    assert_eq!(created["theme"], json!({"dark": true}));
    assert_eq!(created["draft"], false);
    assert_eq!(created["deleted"], false);
    let date_add = created["date_add"].as_str().unwrap();
    assert!(date_add.ends_with('Z') && date_add.len() == 24 && !date_add.starts_with("1999"));

    let got = get(&emu, &uid, "0").await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json(), created);

    let listed = call(&emu, Method::GET, base(&emu), None).await.json();
    assert_eq!(listed, json!([created.clone()]));

    let updated = call(
        &emu,
        Method::PATCH,
        item(&emu, &uid),
        Some(json!({"params": "{\"elements\":[]}"})),
    )
    .await;
    assert_eq!(updated.status, 200);
    let updated = updated.json();
    assert_eq!(updated["params"], "{\"elements\":[]}");
    assert_eq!(updated["name"], "Orders");
    assert_eq!(updated["date_add"], created["date_add"]);

    // No `params`: nothing changes.
    let same = call(&emu, Method::PATCH, item(&emu, &uid), Some(json!({}))).await;
    assert_eq!(same.status, 200);
    assert_eq!(same.json(), updated);

    let deleted = call(&emu, Method::DELETE, item(&emu, &uid), None).await;
    assert_eq!(deleted.status, 204);
    assert!(deleted.body.is_empty());
    get(&emu, &uid, "0").await.assert_error(404, "not_found");
    call(&emu, Method::DELETE, item(&emu, &uid), None)
        .await
        .assert_error(404, "not_found");
    call(
        &emu,
        Method::PATCH,
        item(&emu, &uid),
        Some(json!({"params": "{}"})),
    )
    .await
    .assert_error(404, "not_found");
    emu.shutdown().await;
}

#[tokio::test]
async fn given_uids_and_listing_order() {
    let emu = demo().await;
    for uid in ["c", "a", "b"] {
        create(&emu, "0", json!({"uid": uid})).await;
    }
    // date_add strictly increases, so creation order wins over uid order.
    assert_eq!(list_uids(&emu, "0").await, ["c", "a", "b"]);
    assert_eq!(list_uids(&emu, "1").await, ["c", "a", "b"]);
    emu.shutdown().await;
}

#[tokio::test]
async fn draft_rules() {
    let emu = demo().await;

    // Created published: exists in both sets, flagged by set.
    let p = create(&emu, "0", json!({"uid": "pub", "params": "{}"})).await;
    assert_eq!(p["draft"], false);
    let d = get(&emu, "pub", "1").await.json();
    assert_eq!(d["draft"], true);
    assert_eq!(d["params"], "{}");
    assert_eq!(d["date_add"], p["date_add"]);

    // Created as draft: absent from the published set.
    let draft_only = create(&emu, "1", json!({"uid": "drf", "params": "[1]"})).await;
    assert_eq!(draft_only["draft"], true);
    get(&emu, "drf", "0").await.assert_error(404, "not_found");
    assert_eq!(list_uids(&emu, "0").await, ["pub"]);
    assert_eq!(list_uids(&emu, "1").await, ["pub", "drf"]);

    // Draft update leaves the published page alone.
    let r = call(
        &emu,
        Method::PATCH,
        format!("{}?draft=1", item(&emu, "pub")),
        Some(json!({"params": "[\"draft\"]"})),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["draft"], true);
    assert_eq!(get(&emu, "pub", "0").await.json()["params"], "{}");
    assert_eq!(get(&emu, "pub", "1").await.json()["params"], "[\"draft\"]");

    // Published update overwrites the draft copy.
    let r = call(
        &emu,
        Method::PATCH,
        item(&emu, "pub"),
        Some(json!({"params": "[\"pub\"]"})),
    )
    .await;
    assert_eq!(r.json()["draft"], false);
    assert_eq!(get(&emu, "pub", "1").await.json()["params"], "[\"pub\"]");

    // ... and recreates it when it was deleted from the draft set.
    let r = call(
        &emu,
        Method::DELETE,
        format!("{}?draft=1", item(&emu, "pub")),
        None,
    )
    .await;
    assert_eq!(r.status, 204);
    get(&emu, "pub", "1").await.assert_error(404, "not_found");
    assert_eq!(get(&emu, "pub", "0").await.status, 200);
    call(
        &emu,
        Method::PATCH,
        item(&emu, "pub"),
        Some(json!({"params": "2"})),
    )
    .await;
    let d = get(&emu, "pub", "1").await.json();
    assert_eq!(
        (d["params"].as_str(), d["draft"].as_bool()),
        (Some("2"), Some(true))
    );

    // A published update of a draft-only page is a 404, and so is a published delete.
    call(
        &emu,
        Method::PATCH,
        item(&emu, "drf"),
        Some(json!({"params": "{}"})),
    )
    .await
    .assert_error(404, "not_found");
    call(&emu, Method::DELETE, item(&emu, "drf"), None)
        .await
        .assert_error(404, "not_found");
    assert_eq!(get(&emu, "drf", "1").await.json()["params"], "[1]");

    // A published delete removes both copies.
    assert_eq!(
        call(&emu, Method::DELETE, item(&emu, "pub"), None)
            .await
            .status,
        204
    );
    get(&emu, "pub", "1").await.assert_error(404, "not_found");
    assert_eq!(list_uids(&emu, "1").await, ["drf"]);

    // Creating published over an existing draft of the same uid replaces the draft.
    create(&emu, "0", json!({"uid": "drf", "params": "\"published\""})).await;
    assert_eq!(
        get(&emu, "drf", "1").await.json()["params"],
        "\"published\""
    );
    // A draft create of a uid the draft set has is refused.
    let r = call(
        &emu,
        Method::POST,
        format!("{}?draft=1", base(&emu)),
        Some(json!({"uid": "drf"})),
    )
    .await;
    let e = r.assert_error(400, "invalid");
    assert!(e["uid"].is_array(), "{e}");
    emu.shutdown().await;
}

#[tokio::test]
async fn draft_query_is_validated_on_every_operation() {
    let emu = demo().await;
    create(&emu, "0", json!({"uid": "p"})).await;
    for value in ["2", "", "true", "01", "%20"] {
        let q = format!("?draft={value}");
        let calls = [
            (Method::GET, format!("{}{q}", base(&emu)), None),
            (Method::POST, format!("{}{q}", base(&emu)), Some(json!({}))),
            (Method::GET, format!("{}{q}", item(&emu, "p")), None),
            (
                Method::PATCH,
                format!("{}{q}", item(&emu, "p")),
                Some(json!({})),
            ),
            (Method::DELETE, format!("{}{q}", item(&emu, "p")), None),
        ];
        for (method, path, body) in calls {
            let e = call(&emu, method.clone(), path.clone(), body)
                .await
                .assert_error(400, "invalid");
            assert!(e["draft"].is_array(), "{method} {path}: {e}");
        }
    }
    // Bare `draft` (no `=`) is the empty value too.
    call(&emu, Method::GET, format!("{}?draft", base(&emu)), None)
        .await
        .assert_error(400, "invalid");
    // Other parameters are ignored; the page survived all of the above.
    let r = call(
        &emu,
        Method::GET,
        format!("{}?x=1&draft=0", item(&emu, "p")),
        None,
    )
    .await;
    assert_eq!(r.status, 200);
    emu.shutdown().await;
}

#[tokio::test]
async fn create_validation() {
    let emu = demo().await;
    let post = |body: Vec<u8>| {
        let c = Call::new(Method::POST, base(&emu))
            .bearer(emu.api_key())
            .raw_body(body);
        send(&emu, c)
    };
    for bad in [&b""[..], b"{", b"[]", b"null", b"\"page\"", b"{\"a\":1}x"] {
        post(bad.to_vec()).await.assert_error(400, "invalid");
    }
    let field_cases = [
        (json!({"uid": 3}), "uid"),
        (json!({"uid": ""}), "uid"),
        (json!({"uid": ".."}), "uid"),
        (json!({"uid": null}), "uid"),
        (json!({"params": {"elements": []}}), "params"),
        (json!({"params": "{not json"}), "params"),
        (json!({"params": null}), "params"),
        (json!({"params": ""}), "params"),
    ];
    for (body, field) in field_cases {
        let e = post(serde_json::to_vec(&body).unwrap())
            .await
            .assert_error(400, "invalid");
        assert!(e[field].is_array(), "{body}: {e}");
    }
    create(&emu, "0", json!({"uid": "dup"})).await;
    let e = post(br#"{"uid":"dup"}"#.to_vec())
        .await
        .assert_error(400, "invalid");
    assert!(e["uid"].is_array());
    // Nothing but the one page was stored.
    assert_eq!(list_uids(&emu, "0").await, ["dup"]);
    emu.shutdown().await;
}

#[tokio::test]
async fn update_validation() {
    let emu = demo().await;
    create(&emu, "0", json!({"uid": "p", "params": "{}"})).await;
    let patch = |body: Vec<u8>| {
        let c = Call::new(Method::PATCH, item(&emu, "p"))
            .bearer(emu.api_key())
            .raw_body(body);
        send(&emu, c)
    };
    for bad in [&b""[..], b"[1]", b"{", b"7"] {
        patch(bad.to_vec()).await.assert_error(400, "invalid");
    }
    let e = patch(br#"{"params":"[]","name":"x","error":"y"}"#.to_vec())
        .await
        .assert_error(400, "invalid");
    assert!(e["name"].is_array(), "{e}");
    assert!(
        e["error"].is_string(),
        "the envelope keeps its own `error`: {e}"
    );
    assert!(e["non_field_errors"].is_array(), "{e}");
    for body in [
        json!({"params": null}),
        json!({"params": 1}),
        json!({"params": "{x"}),
    ] {
        let e = patch(serde_json::to_vec(&body).unwrap())
            .await
            .assert_error(400, "invalid");
        assert!(e["params"].is_array(), "{e}");
    }
    assert_eq!(get(&emu, "p", "0").await.json()["params"], "{}");
    emu.shutdown().await;
}

/// Regression: a uid of 100 000 characters could be created but never fetched or deleted (its
/// path was too long for the server: `414`), and it stayed in every list. A create caps the uid
/// at 1024 bytes of UTF-8 with a `400` naming the field; a uid at the cap works end to end.
#[tokio::test]
async fn uids_longer_than_1024_bytes_are_refused_at_create() {
    let emu = demo().await;
    for too_long in ["x".repeat(1025), "é".repeat(513), "x".repeat(100_000)] {
        let r = call(
            &emu,
            Method::POST,
            base(&emu),
            Some(json!({"uid": too_long})),
        )
        .await;
        let e = r.assert_error(400, "invalid");
        let message = e["uid"][0].as_str().unwrap_or_default();
        assert!(message.contains("1024 bytes"), "{e}");
    }
    assert!(list_uids(&emu, "0").await.is_empty(), "nothing was stored");

    for longest in ["x".repeat(1024), "é".repeat(512)] {
        let created = create(&emu, "0", json!({"uid": longest})).await;
        assert_eq!(created["uid"], longest.as_str());
        let encoded = svc_model::ident::encode_segment(&longest);
        assert_eq!(get(&emu, &encoded, "0").await.status, 200);
        let deleted = call(&emu, Method::DELETE, item(&emu, &encoded), None).await;
        assert_eq!(deleted.status, 204);
    }
    assert!(list_uids(&emu, "0").await.is_empty());
    emu.shutdown().await;
}

#[tokio::test]
async fn awkward_uids_round_trip() {
    let emu = demo().await;
    let uids = [
        "a/b",
        "what?x=1",
        "frag#ment",
        "100%",
        "two words",
        "héllo",
        "日本",
        "a%2Fb",
        "...",
        "+plus+",
    ];
    for uid in uids {
        let encoded = svc_model::ident::encode_segment(uid);
        let created = create(&emu, "0", json!({"uid": uid})).await;
        assert_eq!(created["uid"], uid);
        let got = get(&emu, &encoded, "0").await;
        assert_eq!(got.status, 200, "{uid:?} as {encoded}");
        assert_eq!(got.json()["uid"], uid);
        let patched = call(
            &emu,
            Method::PATCH,
            item(&emu, &encoded),
            Some(json!({"params": "1"})),
        )
        .await;
        assert_eq!(patched.status, 200, "{uid:?}");
        assert_eq!(patched.json()["uid"], uid);
        let deleted = call(&emu, Method::DELETE, item(&emu, &encoded), None).await;
        assert_eq!(deleted.status, 204, "{uid:?}");
    }
    assert!(list_uids(&emu, "0").await.is_empty());
    emu.shutdown().await;
}

#[tokio::test]
async fn trailing_slash_is_optional() {
    let emu = demo().await;
    let bare = base(&emu).trim_end_matches('/').to_owned();
    let r = call(&emu, Method::POST, bare.clone(), Some(json!({"uid": "x"}))).await;
    assert_eq!(r.status, 201);
    let r = call(&emu, Method::GET, format!("{bare}/x"), None).await;
    assert_eq!(r.status, 200);
    let r = call(&emu, Method::GET, format!("{bare}?draft=1"), None).await;
    assert_eq!(r.json().as_array().map(Vec::len), Some(1));
    emu.shutdown().await;
}

#[tokio::test]
async fn auth_and_unknown_environment() {
    let emu = demo().await;
    let path = base(&emu);
    send(&emu, Call::get(&path))
        .await
        .assert_error(401, "not_authenticated");
    let r = send(&emu, Call::get(&path).bearer("svc_key_nope")).await;
    r.assert_error(401, "not_authenticated");
    assert!(r.headers.contains_key(http::header::WWW_AUTHENTICATE));
    // The key without its scheme is not a bearer credential.
    send(&emu, Call::get(&path).auth(emu.api_key()))
        .await
        .assert_error(401, "not_authenticated");
    // Unauthenticated requests learn nothing, not even about a bad body or query.
    send(
        &emu,
        Call::new(Method::POST, format!("{path}?draft=9")).raw_body("{"),
    )
    .await
    .assert_error(401, "not_authenticated");
    // A project the key does not belong to, existing or not.
    send(
        &emu,
        Call::get("/api/projects/other/prod/view_settings/").bearer(emu.api_key()),
    )
    .await
    .assert_error(403, "permission_denied");
    // An environment the project does not have.
    send(
        &emu,
        Call::get("/api/projects/demo/qa/view_settings/").bearer(emu.api_key()),
    )
    .await
    .assert_error(404, "not_found");
    // `staging` exists and is separate from `prod`.
    let r = send(
        &emu,
        Call::get("/api/projects/demo/staging/view_settings/").bearer(emu.api_key()),
    )
    .await;
    assert_eq!(r.status, 200);
    // The scheme is case-insensitive.
    let r = send(
        &emu,
        Call::get(&path).auth(format!("bearer {}", emu.api_key())),
    )
    .await;
    assert_eq!(r.status, 200);
    emu.shutdown().await;
}

#[tokio::test]
async fn environments_are_separate() {
    let emu = demo().await;
    create(&emu, "0", json!({"uid": "p"})).await;
    let r = send(
        &emu,
        Call::get("/api/projects/demo/staging/view_settings/p/").bearer(emu.api_key()),
    )
    .await;
    r.assert_error(404, "not_found");
    emu.shutdown().await;
}
