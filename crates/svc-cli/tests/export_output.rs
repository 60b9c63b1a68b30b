//! The exact bytes of `svc records export`, NDJSON and CSV: records of tricky values from the
//! emulator, answers in forms the emulator never writes (whitespace, `\u` escapes, floats, a
//! repeated key) from a scripted server on loopback, and malformed pages, which must stop the
//! export with a clear error and leave no file behind.

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use svc_emulator::{Emulator, EmulatorConfig, ProjectConfig, ProjectsConfig, ResourceConfig};

const KEY: &str = "svc_key_export_0123456789";
const TOKEN: &str = "tok_tricky_0123456789";

/// Values that formatting could change: unicode, quotes and backslashes, line breaks, commas,
/// leading spaces, a control character, JSON held as text, nulls, the 64-bit limits, REAL
/// values (which the emulator sends as numeric strings), booleans and an empty string.
const SEED: &str = r#"
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    name TEXT,
    note TEXT,
    big INTEGER,
    price REAL,
    flag BOOLEAN,
    data TEXT
);
INSERT INTO items VALUES
    (1, 'Zürich ☃ 😀', 'say "hi", \o/', 9223372036854775807, 1.5, 1, '{"a": [1, 2.50, null]}'),
    (2, ' leading space', 'two' || char(10) || 'lines' || char(13), -9223372036854775808, 0.1, 0, '[]'),
    (3, 'tab' || char(9) || 'and' || char(1) || 'ctl', NULL, NULL, NULL, NULL, NULL),
    (4, '', 'comma,only', 0, 100000000000000000000.0, 1, 'plain');
"#;

fn svc(env: &[(&str, &str)], args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_svc"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("svc runs")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

async fn tricky_emulator() -> Emulator {
    let project = ProjectConfig::new("exp")
        .api_key(KEY)
        .resource(ResourceConfig::new("tricky", TOKEN).seed_sql(SEED));
    Emulator::start(EmulatorConfig::default().projects(ProjectsConfig::new(vec![project])))
        .await
        .expect("the emulator starts")
}

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "svc-cli-export-output-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const TRICKY_NDJSON: &str = concat!(
    r#"{"id":1,"name":"Zürich ☃ 😀","note":"say \"hi\", \\o/","big":9223372036854775807,"price":"1.5","flag":true,"data":"{\"a\": [1, 2.50, null]}"}"#,
    "\n",
    r#"{"id":2,"name":" leading space","note":"two\nlines\r","big":-9223372036854775808,"price":"0.1","flag":false,"data":"[]"}"#,
    "\n",
    r#"{"id":3,"name":"tab\tand\u0001ctl","note":null,"big":null,"price":null,"flag":null,"data":null}"#,
    "\n",
    r#"{"id":4,"name":"","note":"comma,only","big":0,"price":"1e+20","flag":true,"data":"plain"}"#,
    "\n",
);

const TRICKY_CSV: &str = concat!(
    "id,name,note,big,price,flag,data\n",
    "1,Zürich ☃ 😀,\"say \"\"hi\"\", \\o/\",9223372036854775807,1.5,true,\"{\"\"a\"\": [1, 2.50, null]}\"\n",
    "2,\" leading space\",\"two\nlines\r\",-9223372036854775808,0.1,false,[]\n",
    "3,tab\tand\u{1}ctl,,,,,\n",
    "4,,\"comma,only\",0,1e+20,true,plain\n",
);

#[tokio::test(flavor = "multi_thread")]
async fn tricky_values_are_exported_byte_for_byte() {
    let emulator = tricky_emulator().await;
    let api = emulator.api_base_url().to_owned();
    let env = [
        ("SVC_PROJECT", "exp"),
        ("SVC_API_BASE_URL", api.as_str()),
        ("SVC_API_KEY", KEY),
    ];
    let export = |extra: &[&str]| {
        let mut args = vec![
            "records",
            "export",
            "tricky",
            "items",
            "--per-page",
            "3",
            "--order-by",
            "id",
        ];
        args.extend_from_slice(extra);
        // The emulator answers on the runtime's other threads meanwhile.
        tokio::task::block_in_place(|| svc(&env, &args))
    };
    assert_eq!(stdout(&export(&[])), TRICKY_NDJSON);
    assert_eq!(stdout(&export(&["--format", "csv"])), TRICKY_CSV);

    // Into a file: the same bytes, and nothing else left beside it.
    let dir = Scratch::new("tricky");
    let file = dir.0.join("items.csv");
    std::fs::write(&file, "old\n").unwrap();
    let out = export(&["--format", "csv", "--out", file.to_str().unwrap()]);
    assert_eq!(stdout(&out), "");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), TRICKY_CSV);
    assert_eq!(dir.entries(), ["items.csv"]);
    drop(emulator);
}

/// A server on loopback that answers every request for `/…/models/{model}?page=N…` with
/// `pages(model, N)` (status 200, JSON).
fn scripted() -> SocketAddr {
    common::serve(|request| {
        // An export only reads.
        if request.method != "GET" || !request.body.is_empty() {
            return ("405 Method Not Allowed", "{}".to_owned());
        }
        let (path, query) = request
            .target
            .split_once('?')
            .unwrap_or((request.target.as_str(), ""));
        let model = path.rsplit('/').next().unwrap_or_default();
        let page = query
            .split('&')
            .find_map(|kv| kv.strip_prefix("page="))
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        ("200 OK", answers(model, page))
    })
}

/// Two records per page, two pages, unless the model says otherwise.
fn answers(model: &str, page: u32) -> String {
    let next = |more: bool| {
        if more {
            r#""http://next.invalid/?page=2""#
        } else {
            "null"
        }
    };
    match (model, page) {
        // Forms the emulator never writes: the export writes what decoding and formatting
        // each record gives, as it always did.
        ("forms", _) => concat!(
            r#"{"count": 2, "next": null, "previous": null, "results": [ "#,
            r#"{ "id" : 1, "s": "caf\u00e9 \/ \"q\"", "n": 1.50, "e": 1E2, "z": -0, "big": 123456789012345678901234 }, "#,
            r#"{"id":2,"a":1,"b":[ 1 , {"c" : null} ],"a":3}"#,
            "]}"
        )
        .to_owned(),
        (_, 1) => format!(
            r#"{{"count":4,"next":{},"previous":null,"results":[{{"id":1,"v":"a"}},{{"id":2,"v":"b"}}]}}"#,
            next(true)
        ),
        ("not_array", _) => r#"{"count":4,"next":null,"previous":null,"results":{"id":3}}"#.to_owned(),
        ("truncated", _) => r#"{"count":4,"next":null,"previous":null,"results":[{"id":3,"v":"#.to_owned(),
        ("not_object", _) => r#"{"count":4,"next":null,"previous":null,"results":[7,8]}"#.to_owned(),
        _ => format!(
            r#"{{"count":4,"next":{},"previous":null,"results":[{{"id":3,"v":"c"}},{{"id":4,"v":"d"}}]}}"#,
            next(false)
        ),
    }
}

fn scripted_env(addr: SocketAddr) -> Vec<(&'static str, String)> {
    vec![
        ("SVC_PROJECT", "exp".to_owned()),
        ("SVC_API_BASE_URL", format!("http://{addr}")),
        ("SVC_TOKEN", TOKEN.to_owned()),
    ]
}

fn export(addr: SocketAddr, model: &str, extra: &[&str]) -> Output {
    let env = scripted_env(addr);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut args = vec!["records", "export", "res", model, "--per-page", "2"];
    args.extend_from_slice(extra);
    svc(&env, &args)
}

/// `123456789012345678901234` is read as the nearest float, `1.2345678901234569e+23` (as Python
/// reads it; serde_json's `float_roundtrip`, which the emulator turns on for the whole build).
#[test]
fn other_forms_are_written_as_decoding_and_formatting_wrote_them() {
    let addr = scripted();
    assert_eq!(
        stdout(&export(addr, "forms", &[])),
        concat!(
            r#"{"id":1,"s":"café / \"q\"","n":1.5,"e":100.0,"z":-0.0,"big":1.2345678901234569e+23}"#,
            "\n",
            r#"{"id":2,"a":3,"b":[1,{"c":null}]}"#,
            "\n",
        )
    );
    assert_eq!(
        stdout(&export(addr, "forms", &["--format", "csv"])),
        "id,s,n,e,z,big\n1,\"café / \"\"q\"\"\",1.5,100.0,-0.0,1.2345678901234569e+23\n2,,,,,\n"
    );
    assert_eq!(
        stdout(&export(addr, "good", &[])),
        "{\"id\":1,\"v\":\"a\"}\n{\"id\":2,\"v\":\"b\"}\n{\"id\":3,\"v\":\"c\"}\n{\"id\":4,\"v\":\"d\"}\n"
    );
}

/// A malformed second page stops the export: exit code 3 (the server's answer), a message
/// that says what was wrong and how many records were written, and no file at PATH.
#[test]
fn a_malformed_page_is_a_clear_error_and_leaves_no_file() {
    let addr = scripted();
    for (model, reason) in [
        ("not_array", "expected a sequence"),
        ("truncated", "EOF"),
        ("not_object", "not a JSON object"),
    ] {
        for format in ["ndjson", "csv"] {
            let dir = Scratch::new(&format!("{model}-{format}"));
            let file = dir.0.join("out");
            let out = export(
                addr,
                model,
                &["--format", format, "--out", file.to_str().unwrap()],
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{model} {format}: {stderr}");
            assert!(
                stderr.contains("export failed: 2 records written before this error"),
                "{model} {format}: {stderr}"
            );
            assert!(stderr.contains(reason), "{model} {format}: {stderr}");
            assert!(
                stderr.contains("out was not created"),
                "{model} {format}: {stderr}"
            );
            assert!(out.stdout.is_empty());
            assert!(
                dir.entries().is_empty(),
                "{model} {format}: {:?}",
                dir.entries()
            );
            assert!(!Path::new(&file).exists());
        }
    }
}
