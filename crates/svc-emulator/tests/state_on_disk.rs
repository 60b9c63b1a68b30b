//! State on disk: an export written by `Emulator::export` (and `GET
//! /_emulator/projects/{project}/export`, which `svc emulator export` writes) and read back at
//! start by `EmulatorConfig::import`: records, page settings (draft and published), users,
//! teams and accounts come back; what holds rows is refused unless told; files are private.
//! The round trip on every database is the conformance rule
//! `an_export_imported_by_another_emulator_answers_as_it_did`.

mod common;

use common::{Call, Reply, TempDir, send};
use http::Method;
use serde_json::{Value, json};
use svc_emulator::{
    Emulator, EmulatorConfig, ImportOnRows, ProjectConfig, ProjectsConfig, ResourceConfig,
};

const CUSTOMERS: &str = "/projects/demo/prod/shop/models/customers";
const ORDERS: &str = "/projects/demo/prod/shop/models/orders";
const PAGES: &str = "/api/projects/demo/prod/view_settings/";
const USERS: &str = "/projects/demo/prod/__svc_app__/models/users";

async fn call(emu: &Emulator, method: Method, path: &str, body: Option<Value>) -> Reply {
    let mut c = Call::new(method, path).bearer(emu.api_key());
    if let Some(body) = body {
        c = c.json(&body);
    }
    send(emu, c).await
}

async fn ok(emu: &Emulator, path: &str) -> Value {
    let r = call(emu, Method::GET, path, None).await;
    assert_eq!(
        r.status,
        200,
        "{path}: {:?}",
        String::from_utf8_lossy(&r.body)
    );
    r.json()
}

/// What a test would see of the demo: records (their count, first page and one date filter),
/// both sets of page settings, the users and teams; not the links, which name the port.
async fn seen(emu: &Emulator) -> Vec<Value> {
    let mut seen = Vec::new();
    for path in [
        format!("{CUSTOMERS}?_per_page=50"),
        format!("{ORDERS}?_per_page=50&_order_by=-ordered_on"),
        format!("{ORDERS}?ordered_on__gte=2025-06-01&_per_page=5"),
        format!("{USERS}?_per_page=50"),
        "/projects/demo/prod/__svc_app__/models/groups?_per_page=50".to_owned(),
    ] {
        let page = ok(emu, &path).await;
        seen.push(json!({"path": path, "count": page["count"], "results": page["results"]}));
    }
    seen.push(ok(emu, &format!("{PAGES}?draft=0")).await);
    seen.push(ok(emu, &format!("{PAGES}?draft=1")).await);
    seen
}

/// `now` is `was`, or the first answer and record that differ.
fn same(now: &[Value], was: &[Value]) {
    assert_eq!(now.len(), was.len());
    for (n, w) in now.iter().zip(was) {
        let (rn, rw) = (n["results"].as_array(), w["results"].as_array());
        if let (Some(rn), Some(rw)) = (rn, rw) {
            for (a, b) in rn.iter().zip(rw) {
                assert_eq!(a, b, "{}", w["path"]);
            }
        }
        assert_eq!(n, w);
    }
}

async fn login(emu: &Emulator) -> u16 {
    let user = json!({"email": "grace@example.com", "password": "a long password"});
    let login = Call::new(Method::POST, "/projects/demo/prod/auth/login").json(&user);
    send(emu, login).await.status.as_u16()
}

/// Changes of every kind the export holds, on the demo.
async fn change(emu: &Emulator) -> Value {
    let ada =
        json!({"name": "Ada", "email": "ada@example.com", "created_at": "2026-01-02T03:04:05"});
    let created = call(emu, Method::POST, CUSTOMERS, Some(ada)).await;
    assert_eq!(created.status, 201, "{:?}", created.body);
    let gone = call(emu, Method::DELETE, &format!("{ORDERS}/2"), None).await;
    assert_eq!(gone.status, 204);
    let moved = json!({"ordered_on": "2025-07-04", "note": "  spaces kept  "});
    let patched = call(emu, Method::PATCH, &format!("{ORDERS}/3"), Some(moved)).await;
    // The demo's `ordered_on` is a SQLite DATE, which the engine cannot write: refused, as the
    // service refuses it; the note alone then.
    assert_eq!(patched.status, 400, "{:?}", patched.body);
    let note = json!({"note": "  spaces kept  ", "shipped_at": null});
    let patched = call(emu, Method::PATCH, &format!("{ORDERS}/3"), Some(note)).await;
    assert_eq!(patched.status, 200, "{:?}", patched.body);
    for draft in ["0", "1"] {
        let page =
            json!({"name": format!("Orders ({draft})"), "params": "{\"columns\": [\"id\"]}"});
        let r = call(
            emu,
            Method::POST,
            &format!("{PAGES}?draft={draft}"),
            Some(page),
        )
        .await;
        assert_eq!(r.status, 201, "{:?}", r.body);
    }
    let tools = emu.startup_info().resource_tokens["__svc_app__"].clone();
    let team = svc_emulator::SEEDED_TEAMS[1].0;
    let user = json!({"email": "linus@example.com", "first_name": "Linus", "group": team});
    let made = send(emu, Call::new(Method::POST, USERS).auth(tools).json(&user)).await;
    assert_eq!(
        made.status,
        201,
        "{:?}",
        String::from_utf8_lossy(&made.body)
    );
    let account = json!({"email": "grace@example.com", "password": "a long password"});
    let register = Call::new(Method::POST, "/projects/demo/prod/auth/register").json(&account);
    assert_eq!(send(emu, register).await.json()["result"], true);
    assert_eq!(login(emu).await, 200);
    created.json()
}

#[tokio::test]
async fn an_export_of_the_demo_is_where_the_next_start_begins() {
    let dir = TempDir::new();
    let export = dir.join("state");
    let first = common::demo().await;
    let ada = change(&first).await;
    let before = seen(&first).await;
    first.export(&export).await.unwrap();
    first.shutdown().await;

    // The demo seeds its rows at start: an import over them needs to be told.
    let refused = Emulator::start(EmulatorConfig::default().import(&export))
        .await
        .expect_err("the demo's rows stop the import");
    let message = refused.to_string();
    assert!(message.contains("--import-on-rows"), "{message}");
    assert!(message.contains("replace"), "{message}");

    let config = EmulatorConfig::default()
        .import(&export)
        .import_on_rows(ImportOnRows::Replace);
    let second = Emulator::start(config).await.unwrap();
    let imported = second.imported().join("\n");
    assert!(imported.starts_with("project \"demo\": "), "{imported}");
    // The seeded teams and the user made, and every record of the shop.
    assert!(
        imported.contains("__svc_app__: 4 record(s); shop: "),
        "{imported}"
    );
    same(&seen(&second).await, &before);
    assert_eq!(login(&second).await, 200, "the account came back");
    // The next key is the one the exported emulator would have given.
    let bob =
        json!({"name": "Bob", "email": "bob@example.com", "created_at": "2026-01-02T03:04:05"});
    let next = call(&second, Method::POST, CUSTOMERS, Some(bob)).await;
    assert_eq!(next.json()["id"], ada["id"].as_i64().unwrap() + 1);
    // A reset puts the imported state back, not the demo's seed.
    let reset = call(
        &second,
        Method::POST,
        "/_emulator/projects/demo/reset",
        None,
    )
    .await;
    assert_eq!(reset.status, 200);
    same(&seen(&second).await, &before);
    second.shutdown().await;
}

#[cfg(unix)]
#[tokio::test]
async fn an_export_is_private_and_written_only_where_it_may_be() {
    use std::os::unix::fs::PermissionsExt;

    let dir = TempDir::new();
    let emu = common::demo().await;
    // A folder of other files is not an export's: refused, nothing written.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let err = emu.export(&other).await.unwrap_err().to_string();
    assert!(err.contains("not an export"), "{err}");
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1);

    let export = dir.join("state");
    emu.export(&export).await.unwrap();
    let mut seen = 0;
    let mut stack = vec![export.clone()];
    while let Some(path) = stack.pop() {
        let meta = std::fs::metadata(&path).unwrap();
        let mode = meta.permissions().mode() & 0o777;
        if meta.is_dir() {
            assert_eq!(mode, 0o700, "{}", path.display());
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            assert_eq!(mode, 0o600, "{}", path.display());
        }
        seen += 1;
    }
    assert!(seen > 8, "{seen} files and folders");
    // The records are the fixtures format: a JSON array of the records, as the list shows them.
    let orders: Value = serde_json::from_slice(
        &std::fs::read(export.join("demo/records/shop/orders.json")).unwrap(),
    )
    .unwrap();
    let first = ok(&emu, &format!("{ORDERS}/1")).await;
    assert_eq!(orders[0], first);

    // Again over the earlier export: its project's folder is replaced, nothing else is kept.
    std::fs::write(export.join("demo/stray.txt"), "old").unwrap();
    emu.export(&export).await.unwrap();
    assert!(!export.join("demo/stray.txt").exists());
    emu.shutdown().await;
}

#[tokio::test]
async fn the_export_route_answers_the_projects_state_to_its_key_only() {
    let emu = common::demo().await;
    let anonymous = send(&emu, Call::get("/_emulator/projects/demo/export")).await;
    assert_eq!(anonymous.status, 401);
    let r = call(&emu, Method::GET, "/_emulator/projects/demo/export", None).await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let export = r.json();
    assert_eq!(export["format"], 1);
    assert_eq!(export["project"], "demo");
    assert_eq!(export["kept"], json!([]));
    let customers = &export["resources"]["shop"]["models"]["customers"];
    assert_eq!(
        customers.as_array().unwrap().len() as u64,
        ok(&emu, CUSTOMERS).await["count"].as_u64().unwrap()
    );
    assert!(export["store"]["pages"]["columns"].is_array(), "{export}");
    emu.shutdown().await;
}

/// A resource on a database the emulator does not own (a file of your own), not opted in with
/// `reset`: left out of the export, and named as kept.
#[tokio::test]
async fn what_the_emulator_does_not_own_is_left_out_and_imports_are_told_what_to_do() {
    let dir = TempDir::new();
    let file = dir.join("own.sqlite");
    // A DATE and a BLOB, which the engine cannot write on SQLite: set with SQL, exported as
    // the list shows them, imported as they were.
    let seed = "CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT, day DATE, \
                raw BLOB); INSERT INTO notes (body, day, raw) VALUES ('seeded', '2024-02-29', \
                x'00ff10');";
    let projects = |reset: bool| {
        ProjectsConfig::new(vec![
            ProjectConfig::new("p")
                .api_key("key_p")
                .resource(
                    ResourceConfig::new("own", "tok_own")
                        .database(&file)
                        .seed_sql(seed)
                        .reset(reset),
                )
                .resource(
                    ResourceConfig::new("kept", "tok_kept")
                        .database(dir.join("kept.sqlite"))
                        .seed_sql("CREATE TABLE t (id INTEGER PRIMARY KEY);"),
                ),
        ])
    };
    let config = |reset| EmulatorConfig::default().projects(projects(reset));
    let emu = Emulator::start(config(true)).await.unwrap();
    let note = |body: &str| {
        Call::new(Method::POST, "/projects/p/prod/own/models/notes")
            .auth("tok_own")
            .json(&json!({"body": body}))
    };
    for body in ["a", "b", "c"] {
        assert_eq!(send(&emu, note(body)).await.status, 201);
    }
    let seeded = Call::get("/projects/p/prod/own/models/notes/1").auth("tok_own");
    let seeded = send(&emu, seeded).await.json();
    assert_eq!(seeded["raw"], "b'\\x00\\xff\\x10'", "{seeded}");
    let delete = Call::new(Method::DELETE, "/projects/p/prod/own/models/notes/4").auth("tok_own");
    assert_eq!(send(&emu, delete).await.status, 204);
    let export = dir.join("state");
    emu.export(&export).await.unwrap();
    let project: Value =
        serde_json::from_slice(&std::fs::read(export.join("p/project.json")).unwrap()).unwrap();
    assert_eq!(project["kept"], json!(["kept"]));
    assert_eq!(project["resources"]["own"]["keys"], json!([["notes", 4]]));
    emu.shutdown().await;

    // The rows are still in the file: stop, skip, add and replace.
    let stop = Emulator::start(config(true).import(&export))
        .await
        .unwrap_err();
    assert!(
        stop.to_string().contains("notes already holds records"),
        "{stop}"
    );
    let skip = Emulator::start(
        config(true)
            .import(&export)
            .import_on_rows(ImportOnRows::Skip),
    )
    .await
    .unwrap();
    skip.shutdown().await;
    // Added beside rows with the same keys: the key taken fails the start, nothing written.
    let add = Emulator::start(
        config(true)
            .import(&export)
            .import_on_rows(ImportOnRows::Add),
    )
    .await
    .unwrap_err();
    assert!(
        add.to_string().contains("model \"notes\", record 1"),
        "{add}"
    );
    let replace = config(true)
        .import(&export)
        .import_on_rows(ImportOnRows::Replace);
    let emu = Emulator::start(replace).await.unwrap();
    let list = Call::get("/projects/p/prod/own/models/notes").auth("tok_own");
    let page = send(&emu, list).await.json();
    assert_eq!(page["count"], 3, "{page}");
    let again = Call::get("/projects/p/prod/own/models/notes/1").auth("tok_own");
    assert_eq!(send(&emu, again).await.json(), seeded);
    // AUTOINCREMENT does not hand a deleted key out again: the next is 5, as it was.
    let made = send(&emu, note("d")).await.json();
    assert_eq!(made["id"], 5, "{made}");
    emu.shutdown().await;
}

/// The count of `model`'s records of resource `own`.
async fn count(emu: &Emulator, model: &str) -> Value {
    let list = Call::get(format!("/projects/p/prod/own/models/{model}")).auth("tok_own");
    send(emu, list).await.json()["count"].clone()
}

/// A trigger does not write again what an import writes: SQLite's are dropped for the import's
/// transaction and made again before its commit, and fire afterwards as before.
#[tokio::test]
async fn an_import_writes_each_row_once_whatever_the_triggers() {
    let dir = TempDir::new();
    let seed = "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); \
                CREATE TABLE log (id INTEGER PRIMARY KEY, note_id INTEGER, what TEXT); \
                CREATE TRIGGER logged AFTER INSERT ON notes \
                BEGIN INSERT INTO log (note_id, what) VALUES (NEW.id, 'created'); END;";
    let config = || {
        EmulatorConfig::default().projects(ProjectsConfig::new(vec![
            ProjectConfig::new("p").api_key("key_p").resource(
                ResourceConfig::new("own", "tok_own")
                    .database(dir.join("own.sqlite"))
                    .seed_sql(seed)
                    .reset(true),
            ),
        ]))
    };
    let note = |body: &str| {
        Call::new(Method::POST, "/projects/p/prod/own/models/notes")
            .auth("tok_own")
            .json(&json!({"body": body}))
    };
    let emu = Emulator::start(config()).await.unwrap();
    for body in ["a", "b"] {
        assert_eq!(send(&emu, note(body)).await.status, 201);
    }
    assert_eq!(count(&emu, "log").await, 2);
    let export = dir.join("state");
    emu.export(&export).await.unwrap();
    emu.shutdown().await;

    let replace = config()
        .import(&export)
        .import_on_rows(ImportOnRows::Replace);
    let emu = Emulator::start(replace).await.unwrap();
    assert_eq!(count(&emu, "notes").await, 2);
    assert_eq!(count(&emu, "log").await, 2, "each logged row once");
    assert_eq!(send(&emu, note("c")).await.status, 201);
    assert_eq!(count(&emu, "log").await, 3, "the trigger is back");
    emu.shutdown().await;
}
