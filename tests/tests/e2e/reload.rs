//! Resource reload end to end: a table added to a resource's database file behind the
//! emulator's back becomes a model only after a reload.

use serde_json::json;
use svc_api::model::records::ListQuery;
use svc_api::{Client, Sent};
use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};
use svc_tests::{TempDir, raw};

#[tokio::test]
async fn a_new_table_becomes_a_model_only_after_reload() {
    let dir = TempDir::new("reload");
    let db = dir.join("files.sqlite");
    let config = ProjectsConfig::new(vec![
        ProjectConfig::new("p")
            .api_key("key_p")
            .tools_token("tools_p")
            .resource(
                ResourceConfig::new("files", "tok_files")
                    .database(&db)
                    .seed_sql("CREATE TABLE a (id INTEGER PRIMARY KEY, x TEXT); INSERT INTO a (x) VALUES ('one');"),
            ),
    ]);
    let emulator = Emulator::start(EmulatorConfig::default().projects(config))
        .await
        .unwrap();
    let c = Client::builder()
        .project("p")
        .api_base_url(emulator.api_base_url())
        .resource_token("files", "tok_files")
        .tools_token("tools_p")
        .build()
        .unwrap();
    assert!(
        c.records("files", "b")
            .list(&ListQuery::new())
            .await
            .unwrap_err()
            .is_not_found()
    );

    // Change the file with a connection of our own: a new table, a new column.
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .unwrap();
        conn.execute_batch(
            "CREATE TABLE b (id INTEGER PRIMARY KEY, y TEXT NOT NULL);
             INSERT INTO b (y) VALUES ('new');
             ALTER TABLE a ADD COLUMN z INTEGER;",
        )
        .unwrap();
    }

    // Not a model yet, and `a` has no field `z` yet.
    assert!(
        c.records("files", "b")
            .list(&ListQuery::new())
            .await
            .unwrap_err()
            .is_not_found()
    );
    let a = c.records("files", "a").retrieve(1).await.unwrap();
    assert_eq!(json!(a), json!({"id": 1, "x": "one"}));

    c.resources().reload("files").await.unwrap();

    let b = c
        .records("files", "b")
        .all(&ListQuery::new())
        .await
        .unwrap();
    assert_eq!(json!(b), json!([{"id": 1, "y": "new"}]));
    let created = c
        .records("files", "b")
        .create(&json!({"y": "via the API"}))
        .await
        .unwrap();
    assert_eq!(created["y"], "via the API");
    // The data of `a` is untouched; its new column is a field now.
    let a = c.records("files", "a").retrieve(1).await.unwrap();
    assert_eq!(json!(a), json!({"id": 1, "x": "one", "z": null}));
    // Reloading again is harmless.
    c.resources().reload("files").await.unwrap();
    assert_eq!(
        c.records("files", "b")
            .list(&ListQuery::new())
            .await
            .unwrap()
            .count,
        2
    );

    // The built-in tools resource reloads with its own token.
    c.resources().reload_tools().await.unwrap();
    assert_eq!(c.teams().all(&ListQuery::new()).await.unwrap().len(), 3);
    emulator.shutdown().await;
}

#[tokio::test]
async fn reload_bad_input_and_tokens() {
    let dir = TempDir::new("reload-auth");
    let config = ProjectsConfig::new(vec![
        ProjectConfig::new("p")
            .api_key("key_p")
            .tools_token("tools_p")
            .resource(
                ResourceConfig::new("files", "tok_files")
                    .database(dir.join("files.sqlite"))
                    .seed_sql("CREATE TABLE a (id INTEGER PRIMARY KEY);"),
            ),
    ]);
    let emulator = Emulator::start(EmulatorConfig::default().projects(config))
        .await
        .unwrap();
    let plain = Client::builder()
        .project("p")
        .api_base_url(emulator.api_base_url())
        .build()
        .unwrap();
    let status = |r: Result<(), svc_api::Error>| r.unwrap_err().status().map(|s| s.as_u16());

    // The tools token does not reload a resource, a resource token does not reload the tools.
    assert_eq!(
        status(plain.resources().token("tools_p").reload("files").await),
        Some(403)
    );
    assert_eq!(
        status(plain.resources().token("tok_files").reload_tools().await),
        Some(403)
    );
    assert_eq!(
        status(plain.resources().token("wrong").reload("files").await),
        Some(401)
    );
    // The API key reloads both; an unknown resource is a 404.
    let key = plain.resources().token("key_p");
    key.reload("files").await.unwrap();
    key.reload_tools().await.unwrap();
    let key_client = Client::builder()
        .project("p")
        .api_key("key_p")
        .api_base_url(emulator.api_base_url())
        .build()
        .unwrap();
    assert!(
        key_client
            .resources()
            .reload("nope")
            .await
            .unwrap_err()
            .is_not_found()
    );
    // Refused before sending: no credential, a name that cannot be a path segment.
    for err in [
        plain.resources().reload("files").await.unwrap_err(),
        key_client.resources().reload("").await.unwrap_err(),
        key_client.resources().reload("..").await.unwrap_err(),
    ] {
        assert_eq!(err.sent(), Sent::No, "{err}");
    }

    // The wire: POST only, `{"success": true}`, with or without a trailing slash.
    let url = format!("{}/projects/p/prod/files/reload", emulator.api_base_url());
    for u in [url.clone(), format!("{url}/")] {
        let (s, body) = raw(&emulator, "POST", &u, Some("tok_files"), "").await;
        assert_eq!((s, body), (200, json!({"success": true})));
    }
    let (s, _) = raw(&emulator, "GET", &url, Some("tok_files"), "").await;
    assert_eq!(s, 405);
    let (s, body) = raw(
        &emulator,
        "POST",
        &format!(
            "{}/projects/p/prod/__svc_app__/reload",
            emulator.api_base_url()
        ),
        Some("tools_p"),
        "",
    )
    .await;
    assert_eq!((s, body), (200, json!({"success": true})));
    emulator.shutdown().await;
}
