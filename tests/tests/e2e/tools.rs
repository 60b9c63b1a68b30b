//! Users and teams end to end: the built-in tools resource `__svc_app__` with its own token.

use std::collections::HashSet;

use futures_util::TryStreamExt;
use serde_json::json;
use svc_api::model::records::ListQuery;
use svc_api::model::users::NewUser;
use svc_api::{Client, Error, Sent};
use svc_emulator::SEEDED_TEAMS;
use svc_tests::{builder, client, demo, raw};

fn status(e: &Error) -> Option<u16> {
    e.status().map(|s| s.as_u16())
}

fn field_error(e: &Error, field: &str) -> bool {
    e.body()
        .is_some_and(|b| b.field_errors().contains_key(field))
}

/// A client that has only the tools token (no API key, no resource token).
fn tools_only(emulator: &svc_emulator::Emulator) -> Client {
    Client::builder()
        .project(emulator.project().as_str())
        .api_base_url(emulator.api_base_url())
        .tools_token(emulator.tools_token())
        .build()
        .unwrap()
}

#[tokio::test]
async fn teams_are_seeded_listed_retrieved_and_renamed() {
    let emulator = demo().await;
    let c = tools_only(&emulator);
    let teams = c.teams().all(&ListQuery::new()).await.unwrap();
    let got: Vec<(&str, &str)> = teams
        .iter()
        .map(|t| (t.uid.as_str(), t.name.as_str()))
        .collect();
    assert_eq!(got, SEEDED_TEAMS.to_vec(), "seeded, in name order");
    let page = c.teams().list(&ListQuery::new().per_page(2)).await.unwrap();
    assert_eq!(page.count, 3);
    assert_eq!(page.results.len(), 2);
    assert!(page.next.is_some());

    let (editors, _) = SEEDED_TEAMS[1];
    assert_eq!(c.teams().retrieve(editors).await.unwrap().name, "Editors");
    let renamed = c.teams().rename(editors, "Rédacteurs").await.unwrap();
    assert_eq!(renamed.name, "Rédacteurs");
    assert_eq!(renamed.uid, editors);
    assert_eq!(
        c.teams().retrieve(editors).await.unwrap().name,
        "Rédacteurs"
    );
    // Filters work as for records.
    let found = c
        .teams()
        .all(&ListQuery::new().eq("name", "Rédacteurs"))
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
}

#[tokio::test]
async fn teams_bad_input() {
    let emulator = demo().await;
    let c = tools_only(&emulator);
    let (admins, _) = SEEDED_TEAMS[0];
    let token = emulator.tools_token();
    let base = format!(
        "{}/projects/demo/prod/__svc_app__/models/groups",
        emulator.api_base_url()
    );

    // Refused before sending.
    for err in [
        c.teams().rename(admins, "  ").await.unwrap_err(),
        c.teams().rename("", "x").await.unwrap_err(),
        c.teams().retrieve("..").await.unwrap_err(),
    ] {
        assert_eq!(err.sent(), Sent::No, "{err}");
    }
    assert!(
        c.teams()
            .retrieve("no-such-team")
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(
        c.teams()
            .rename("no-such-team", "x")
            .await
            .unwrap_err()
            .is_not_found()
    );

    // No create, no delete.
    let (s, body) = raw(&emulator, "POST", &base, Some(token), r#"{"name": "New"}"#).await;
    assert_eq!(s, 405, "{body}");
    let (s, _) = raw(
        &emulator,
        "DELETE",
        &format!("{base}/{admins}"),
        Some(token),
        "",
    )
    .await;
    assert_eq!(s, 405);
    // Only `name` may change, and not to a blank or a non-string.
    for (patch, field) in [
        (json!({"uid": "other"}), "uid"),
        (json!({"name": "X", "color": "red"}), "color"),
        (json!({"name": ""}), "name"),
        (json!({"name": " "}), "name"),
        (json!({"name": null}), "name"),
        (json!({"name": 3}), "name"),
    ] {
        let (s, body) = raw(
            &emulator,
            "PATCH",
            &format!("{base}/{admins}"),
            Some(token),
            &patch.to_string(),
        )
        .await;
        assert_eq!(s, 400, "{patch}: {body}");
        assert!(body[field].is_array(), "{patch}: {body}");
    }
    let (s, _) = raw(
        &emulator,
        "PATCH",
        &format!("{base}/{admins}"),
        Some(token),
        "[]",
    )
    .await;
    assert_eq!(s, 400);
    // An empty patch changes nothing.
    let (s, body) = raw(
        &emulator,
        "PATCH",
        &format!("{base}/{admins}"),
        Some(token),
        "{}",
    )
    .await;
    assert_eq!((s, body), (200, json!({"uid": admins, "name": "Admins"})));
}

#[tokio::test]
async fn users_create_retrieve_move_and_delete() {
    let emulator = demo().await;
    let c = tools_only(&emulator);
    let (admins, _) = SEEDED_TEAMS[0];
    let (viewers, _) = SEEDED_TEAMS[2];

    let ana = c
        .users()
        .create(
            &NewUser::new("ana.o'brien@example.com", admins)
                .first_name("Ana María")
                .last_name("O'Brien"),
        )
        .await
        .unwrap();
    assert_eq!(ana.uid.len(), 36, "a UUID: {}", ana.uid);
    assert_eq!(ana.email, "ana.o'brien@example.com");
    assert_eq!(ana.group, admins);
    assert_eq!(ana.first_name.as_deref(), Some("Ana María"));
    assert_eq!(ana.last_name.as_deref(), Some("O'Brien"));
    assert!(ana.date_add.as_deref().is_some_and(|d| d.ends_with('Z')));

    let bo = c
        .users()
        .create(&NewUser::new("bo@example.com", viewers))
        .await
        .unwrap();
    assert_eq!(bo.first_name, None);
    assert_ne!(bo.uid, ana.uid);

    assert_eq!(c.users().retrieve(&ana.uid).await.unwrap(), ana);
    let moved = c.users().update_group(&ana.uid, viewers).await.unwrap();
    assert_eq!(moved.group, viewers);
    assert_eq!(moved.email, ana.email);
    assert_eq!(moved.date_add, ana.date_add);

    // The users of a team.
    let in_viewers = c
        .users()
        .all(&ListQuery::new().eq("group", viewers))
        .await
        .unwrap();
    let mut emails: Vec<&str> = in_viewers.iter().map(|u| u.email.as_str()).collect();
    emails.sort_unstable();
    assert_eq!(emails, ["ana.o'brien@example.com", "bo@example.com"]);
    assert!(
        c.users()
            .all(&ListQuery::new().eq("group", admins))
            .await
            .unwrap()
            .is_empty()
    );
    // Newest first by default.
    let all = c.users().all(&ListQuery::new()).await.unwrap();
    assert_eq!(all[0].uid, bo.uid);

    c.users().delete(&bo.uid).await.unwrap();
    assert!(
        c.users()
            .retrieve(&bo.uid)
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(c.users().delete(&bo.uid).await.unwrap_err().is_not_found());
    // The address is free again.
    c.users()
        .create(&NewUser::new("bo@example.com", admins))
        .await
        .unwrap();
}

#[tokio::test]
async fn users_bad_input() {
    let emulator = demo().await;
    let c = tools_only(&emulator);
    let (admins, _) = SEEDED_TEAMS[0];
    let token = emulator.tools_token();
    let base = format!(
        "{}/projects/demo/prod/__svc_app__/models/users",
        emulator.api_base_url()
    );
    let ana = c
        .users()
        .create(&NewUser::new("ana@example.com", admins))
        .await
        .unwrap();

    // Refused before sending.
    for err in [
        c.users()
            .create(&NewUser::new("", admins))
            .await
            .unwrap_err(),
        c.users()
            .create(&NewUser::new("x@example.com", " "))
            .await
            .unwrap_err(),
        c.users().update_group(&ana.uid, "").await.unwrap_err(),
        c.users().retrieve("").await.unwrap_err(),
        c.users().delete(".").await.unwrap_err(),
        c.users()
            .list(&ListQuery::new().per_page(0))
            .await
            .unwrap_err(),
    ] {
        assert_eq!(err.sent(), Sent::No, "{err}");
    }

    // Duplicate e-mail (ignoring case), unknown team, malformed e-mail: 400 naming the field.
    let err = c
        .users()
        .create(&NewUser::new("ANA@example.com", admins))
        .await
        .unwrap_err();
    assert_eq!(status(&err), Some(400));
    assert!(field_error(&err, "email"), "{err}");
    let err = c
        .users()
        .create(&NewUser::new("new@example.com", "no-such-team"))
        .await
        .unwrap_err();
    assert!(field_error(&err, "group"), "{err}");
    for bad in [
        "no-at-sign",
        "a@b",
        "two@@example.com",
        "sp ace@example.com",
    ] {
        let err = c
            .users()
            .create(&NewUser::new(bad, admins))
            .await
            .unwrap_err();
        assert!(field_error(&err, "email"), "{bad}: {err}");
    }
    let err = c
        .users()
        .update_group(&ana.uid, "no-such-team")
        .await
        .unwrap_err();
    assert_eq!(status(&err), Some(400));
    assert!(field_error(&err, "group"), "{err}");
    assert!(
        c.users()
            .update_group("no-such-user", admins)
            .await
            .unwrap_err()
            .is_not_found()
    );

    // Raw bodies: required fields, types, and updates of anything but `group`.
    for (body, field) in [
        (json!({"group": admins}), "email"),
        (json!({"email": "x@example.com"}), "group"),
        (json!({"email": null, "group": admins}), "email"),
        (json!({"email": 7, "group": admins}), "email"),
        (
            json!({"email": "y@example.com", "group": admins, "first_name": 1}),
            "first_name",
        ),
    ] {
        let (s, reply) = raw(&emulator, "POST", &base, Some(token), &body.to_string()).await;
        assert_eq!(s, 400, "{body}: {reply}");
        assert!(reply[field].is_array(), "{body}: {reply}");
    }
    // Unknown keys on create are ignored; the server owns uid and date_add.
    let (s, reply) = raw(
        &emulator,
        "POST",
        &base,
        Some(token),
        &json!({"email": "z@example.com", "group": admins, "uid": "mine", "date_add": "2000-01-01", "role": "x"})
            .to_string(),
    )
    .await;
    assert_eq!(s, 201, "{reply}");
    assert_ne!(reply["uid"], "mine");
    assert_ne!(reply["date_add"], "2000-01-01");
    assert!(reply.get("role").is_none());
    for (patch, field) in [
        (json!({"email": "new@example.com"}), "email"),
        (json!({"group": admins, "first_name": "A"}), "first_name"),
        (json!({"uid": "x"}), "uid"),
        (json!({"group": null}), "group"),
    ] {
        let (s, reply) = raw(
            &emulator,
            "PATCH",
            &format!("{base}/{}", ana.uid),
            Some(token),
            &patch.to_string(),
        )
        .await;
        assert_eq!(s, 400, "{patch}: {reply}");
        assert!(reply[field].is_array(), "{patch}: {reply}");
    }
    assert_eq!(c.users().retrieve(&ana.uid).await.unwrap(), ana);
    let (s, _) = raw(
        &emulator,
        "PUT",
        &format!("{base}/{}", ana.uid),
        Some(token),
        "{}",
    )
    .await;
    assert_eq!(s, 405);
}

#[tokio::test]
async fn users_pages_and_stream() {
    let emulator = demo().await;
    let c = tools_only(&emulator);
    let (editors, _) = SEEDED_TEAMS[1];
    let mut created = Vec::new();
    for i in 0..23 {
        let user = c
            .users()
            .create(&NewUser::new(format!("user{i:02}@example.com"), editors))
            .await
            .unwrap();
        created.push(user.uid);
    }
    let page = c
        .users()
        .list(&ListQuery::new().per_page(10))
        .await
        .unwrap();
    assert_eq!(page.count, 23);
    assert_eq!(page.results.len(), 10);
    assert!(page.next.is_some() && page.previous.is_none());
    // Newest first.
    assert_eq!(page.results[0].email, "user22@example.com");
    let last = c
        .users()
        .list(&ListQuery::new().per_page(10).page(3))
        .await
        .unwrap();
    assert_eq!(last.results.len(), 3);
    assert!(last.next.is_none());
    assert_eq!(last.results[2].email, "user00@example.com");
    // Past the end: no users, the real count (the data engine's answer).
    let past = c
        .users()
        .list(&ListQuery::new().per_page(10).page(4))
        .await
        .unwrap();
    assert_eq!((past.count, past.results.len()), (23, 0));
    assert!(past.next.is_none() && past.previous.is_some());

    let streamed: Vec<String> = c
        .users()
        .prefetch(2)
        .stream(ListQuery::new().per_page(4).order_by("email"))
        .unwrap()
        .map_ok(|u| u.email)
        .try_collect()
        .await
        .unwrap();
    let want: Vec<String> = (0..23).map(|i| format!("user{i:02}@example.com")).collect();
    assert_eq!(streamed, want);
    let uids: HashSet<String> = c
        .users()
        .all(&ListQuery::new())
        .await
        .unwrap()
        .into_iter()
        .map(|u| u.uid)
        .collect();
    assert_eq!(uids, created.into_iter().collect());
}

#[tokio::test]
async fn tokens_open_only_their_own_resource() {
    let emulator = demo().await;
    let shop_token = emulator.resource_tokens()["shop"].clone();
    let tools_token = emulator.tools_token().to_owned();
    assert!(tools_token.starts_with("svc_tools_"));
    let plain = Client::builder()
        .project("demo")
        .api_base_url(emulator.api_base_url())
        .build()
        .unwrap();

    // A resource token on users and teams: 403.
    let err = plain
        .users()
        .token(shop_token.as_str())
        .all(&ListQuery::new())
        .await
        .unwrap_err();
    assert_eq!(status(&err), Some(403), "{err}");
    let err = plain
        .teams()
        .token(shop_token.as_str())
        .all(&ListQuery::new())
        .await
        .unwrap_err();
    assert_eq!(status(&err), Some(403), "{err}");
    // The tools token on an ordinary resource: 403.
    let err = plain
        .records("shop", "orders")
        .token(tools_token.as_str())
        .list(&ListQuery::new())
        .await
        .unwrap_err();
    assert_eq!(status(&err), Some(403), "{err}");
    // No credential at all: refused before sending; a wrong one: 401.
    assert_eq!(
        plain
            .users()
            .all(&ListQuery::new())
            .await
            .unwrap_err()
            .sent(),
        Sent::No
    );
    let err = plain
        .users()
        .token("svc_tools_wrong")
        .all(&ListQuery::new())
        .await
        .unwrap_err();
    assert_eq!(status(&err), Some(401));
    // The per-call token wins over the client's.
    let err = client(&emulator)
        .users()
        .token(shop_token.as_str())
        .all(&ListQuery::new())
        .await
        .unwrap_err();
    assert_eq!(status(&err), Some(403));
    // The API key (Bearer) serves users and teams too.
    let key_only = Client::builder()
        .project("demo")
        .api_key(emulator.api_key())
        .api_base_url(emulator.api_base_url())
        .build()
        .unwrap();
    assert_eq!(
        key_only.teams().all(&ListQuery::new()).await.unwrap().len(),
        3
    );
    // The tools token works raw and as Bearer.
    let url = format!(
        "{}/projects/demo/prod/__svc_app__/models/groups",
        emulator.api_base_url()
    );
    for auth in [tools_token.clone(), format!("Bearer {tools_token}")] {
        let (s, body) = raw(&emulator, "GET", &url, Some(&auth), "").await;
        assert_eq!(s, 200, "{body}");
        assert_eq!(body["count"], 3);
    }
    // The tools token of the default project comes with the builder helper.
    let c = builder(&emulator).build().unwrap();
    assert_eq!(c.teams().all(&ListQuery::new()).await.unwrap().len(), 3);
}
