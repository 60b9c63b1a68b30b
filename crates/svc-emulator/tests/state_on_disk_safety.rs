//! State on disk against what can go wrong with its files (issue 83): an import reads regular
//! files of a bounded size only (a FIFO, a device or a file too large stops the start, exit 1,
//! naming it); an export killed at any step reads as the whole earlier export or the whole new
//! one; an import is all or nothing across projects; an export directory other users can write
//! is warned of at start, as `--data`'s directory is.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{Call, TempDir, send};
use http::Method;
use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig, ProjectExport};

/// Two projects, each with a resource of notes whose bodies are unique.
const CONFIG: &str = r#"{"projects": [
    {"name": "p", "api_keys": ["key_p"], "resources": [{"name": "own", "token": "tok_p",
        "seed_sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT UNIQUE);"}]},
    {"name": "q", "api_keys": ["key_q"], "resources": [{"name": "own", "token": "tok_q",
        "seed_sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT UNIQUE);"}]}
]}"#;

/// [`CONFIG`] written to `dir/config.json`.
fn config_file(dir: &TempDir) -> PathBuf {
    let path = dir.join("config.json");
    std::fs::write(&path, CONFIG).unwrap();
    path
}

/// Creates a note `body` in `project`'s resource.
async fn note(emu: &Emulator, project: &str, body: &str) {
    let call = Call::new(
        Method::POST,
        format!("/projects/{project}/prod/own/models/notes"),
    )
    .auth(format!("tok_{project}"))
    .json(&json!({ "body": body }));
    let made = send(emu, call).await;
    assert_eq!(made.status, 201, "{:?}", made.body);
}

/// The number of notes of `project`.
async fn notes(emu: &Emulator, project: &str) -> u64 {
    let call = Call::get(format!("/projects/{project}/prod/own/models/notes"))
        .auth(format!("tok_{project}"));
    let page = send(emu, call).await.json();
    page["count"].as_u64().unwrap_or_else(|| panic!("{page}"))
}

/// `project`'s published page settings.
async fn pages(emu: &Emulator, project: &str) -> Value {
    let call = Call::get(format!(
        "/api/projects/{project}/prod/view_settings/?draft=0"
    ))
    .bearer(&format!("key_{project}"));
    let reply = send(emu, call).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    reply.json()
}

/// `project`'s state as the export route answers it.
async fn export_of(emu: &Emulator, project: &str) -> ProjectExport {
    let call = Call::get(format!("/_emulator/projects/{project}/export"))
        .bearer(&format!("key_{project}"));
    let reply = send(emu, call).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    serde_json::from_slice(&reply.body).unwrap()
}

/// Copies the directory `from` to `to` (new), files and folders.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Runs the binary with `args` and no `SVC_EMULATOR_*` variable, to its end.
fn binary(args: &[&Path]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_svc-emulator"));
    for (name, _) in std::env::vars() {
        if name.starts_with("SVC_EMULATOR_") {
            cmd.env_remove(name);
        }
    }
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// A FIFO at `path`, with a writer waiting on it: an emulator that opened it to read would get
/// an empty file at once rather than wait forever, so that a test sees what it did with it.
#[cfg(target_os = "linux")]
struct Fifo {
    path: PathBuf,
    writer: Option<std::thread::JoinHandle<()>>,
}

#[cfg(target_os = "linux")]
impl Fifo {
    fn new(path: &Path) -> Self {
        let made = Command::new("mkfifo").arg(path).status().unwrap();
        assert!(made.success());
        let at = path.to_owned();
        let writer = std::thread::spawn(move || {
            // Opening to write waits for a reader; the FIFO is closed at once, empty.
            let _ = std::fs::OpenOptions::new().write(true).open(&at);
        });
        Self {
            path: path.to_owned(),
            writer: Some(writer),
        }
    }

    /// Ends the writer. On Linux, opening a FIFO to read and write never waits and counts as a
    /// reader: the writer opens, if it still waits, and ends; the handle is kept until it has.
    fn release(mut self) {
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&self.path)
            .unwrap();
        if let Some(writer) = self.writer.take() {
            writer.join().unwrap();
        }
        drop(reader);
    }
}

/// Finding 4: every file an import reads (the manifest, `project.json`, `store.json`, each
/// model's records) must be a regular file, and no larger than its limit (16 MiB for the JSON
/// files, 1 GiB for a model's records): a FIFO, a device (through a link), or a file too large
/// stops the start with exit 1 and a message naming the file and why, without waiting and
/// without reading it. A link to a regular file is read as that file.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread")]
async fn an_import_reads_regular_files_only_and_within_their_limits() {
    let dir = TempDir::new();
    let config = config_file(&dir);
    let emu = Emulator::start(EmulatorConfig::default().config_file(&config))
        .await
        .unwrap();
    note(&emu, "p", "a").await;
    let export = dir.join("export");
    emu.export(&export).await.unwrap();
    emu.shutdown().await;

    enum Bad {
        Fifo,
        LinkTo(&'static str),
        Sized(u64),
    }
    let manifest = "svc-emulator-export.json";
    let records = "p/records/own/notes.json";
    let cases = [
        (manifest, Bad::Fifo, "a FIFO, not a regular file"),
        (records, Bad::Fifo, "a FIFO, not a regular file"),
        (
            "p/project.json",
            Bad::LinkTo("/dev/null"),
            "a character device, not a regular file",
        ),
        (
            "q/store.json",
            Bad::LinkTo("/dev/zero"),
            "a character device, not a regular file",
        ),
        (
            manifest,
            Bad::LinkTo("/dev/zero"),
            "a character device, not a regular file",
        ),
        (
            "p/store.json",
            Bad::Sized((16 << 20) + 1),
            "larger than 16 MiB",
        ),
        (records, Bad::Sized((1 << 30) + 1), "larger than 1 GiB"),
    ];
    for (i, (file, bad, why)) in cases.into_iter().enumerate() {
        let copy = dir.join(&format!("case-{i}"));
        copy_dir(&export, &copy);
        let path = copy.join(file);
        std::fs::remove_file(&path).unwrap();
        let mut fifo = None;
        match bad {
            Bad::Fifo => fifo = Some(Fifo::new(&path)),
            Bad::LinkTo(target) => std::os::unix::fs::symlink(target, &path).unwrap(),
            // Sparse: no disk is used.
            Bad::Sized(len) => std::fs::File::create(&path).unwrap().set_len(len).unwrap(),
        }
        let out = binary(&[Path::new("--config"), &config, Path::new("--import"), &copy]);
        if let Some(fifo) = fifo {
            fifo.release();
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {stderr}");
        assert!(out.stdout.is_empty(), "{file}: no start line");
        assert!(
            stderr.contains(&path.display().to_string()) && stderr.contains(why),
            "{file}: {why:?} expected: {stderr}"
        );
    }

    // A link to a regular file (a copy kept elsewhere) is read as that file.
    let copy = dir.join("linked");
    copy_dir(&export, &copy);
    let elsewhere = dir.join("notes.json");
    std::fs::rename(copy.join(records), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, copy.join(records)).unwrap();
    let emu = Emulator::start(EmulatorConfig::default().config_file(&config).import(&copy))
        .await
        .unwrap();
    assert_eq!(notes(&emu, "p").await, 1);
    emu.shutdown().await;
}

/// The notes of `p` and `q` an emulator started from the export in `dir` serves, or why it did
/// not start.
async fn imported(config: &Path, dir: &Path) -> Result<(u64, u64), String> {
    let emu = Emulator::start(EmulatorConfig::default().config_file(config).import(dir))
        .await
        .map_err(|e| e.to_string())?;
    let counts = (notes(&emu, "p").await, notes(&emu, "q").await);
    emu.shutdown().await;
    Ok(counts)
}

/// Finding 5: an export killed after any of its steps (nothing after them runs, as after a
/// SIGKILL) leaves a directory that an import reads as the whole earlier export or the whole
/// new one, both projects from the same export, never a half or a mix. Into a new directory,
/// an import of what a killed export left is refused with a message (there was no export),
/// and the next export there is written as into an empty one.
#[tokio::test(flavor = "multi_thread")]
async fn an_export_killed_at_any_step_reads_as_the_whole_old_or_the_whole_new() {
    let dir = TempDir::new();
    let config = config_file(&dir);
    let emu = Emulator::start(EmulatorConfig::default().config_file(&config))
        .await
        .unwrap();
    note(&emu, "p", "a").await;
    note(&emu, "q", "x").await;
    let old = dir.join("old");
    emu.export(&old).await.unwrap();
    note(&emu, "p", "b").await;
    note(&emu, "q", "y").await;
    let new = [export_of(&emu, "p").await, export_of(&emu, "q").await];
    emu.shutdown().await;

    let mut steps = 0;
    loop {
        let over = dir.join(&format!("over-{steps}"));
        copy_dir(&old, &over);
        let done =
            svc_emulator_state::snapshot::files::write_export_until(&over, &new, steps).unwrap();
        let seen = imported(&config, &over).await;
        if done {
            assert_eq!(seen, Ok((2, 2)), "the whole new export");
            let left: Vec<_> = std::fs::read_dir(&over)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with('.'))
                .collect();
            assert!(left.is_empty(), "nothing aside is left: {left:?}");
            break;
        }
        assert!(
            seen == Ok((1, 1)) || seen == Ok((2, 2)),
            "killed after {steps} step(s): {seen:?}"
        );
        steps += 1;
    }
    assert!(steps >= 4, "{steps} steps");

    let mut steps = 0;
    loop {
        let fresh = dir.join(&format!("fresh-{steps}"));
        let done =
            svc_emulator_state::snapshot::files::write_export_until(&fresh, &new, steps).unwrap();
        match imported(&config, &fresh).await {
            Ok(counts) => assert_eq!(counts, (2, 2), "killed after {steps} step(s)"),
            Err(e) => {
                assert!(!done, "{e}");
                assert!(
                    e.contains("cannot read it") || e.contains("holds no project"),
                    "killed after {steps} step(s): {e}"
                );
            }
        }
        // What a killed export left is no stranger's directory: the next export writes there.
        svc_emulator::write_export(&fresh, &new).unwrap();
        assert_eq!(imported(&config, &fresh).await, Ok((2, 2)));
        if done {
            break;
        }
        steps += 1;
    }
}

/// Finding 6: an import that fails in its second project leaves nothing of the first in the
/// `--data` file: the start fails (exit 1), the next start without `--import` serves what was
/// there before it, and the import retried with a mended export writes both projects.
#[tokio::test(flavor = "multi_thread")]
async fn an_import_that_fails_in_its_second_project_writes_nothing() {
    let dir = TempDir::new();
    let config = config_file(&dir);
    let source = Emulator::start(EmulatorConfig::default().config_file(&config))
        .await
        .unwrap();
    for body in ["a", "b"] {
        note(&source, "p", body).await;
    }
    for body in ["x", "y"] {
        note(&source, "q", body).await;
    }
    let page = json!({"name": "Notes", "params": "{\"columns\": [\"id\"]}"});
    let made = send(
        &source,
        Call::new(Method::POST, "/api/projects/p/prod/view_settings/?draft=0")
            .bearer("key_p")
            .json(&page),
    )
    .await;
    assert_eq!(made.status, 201, "{:?}", made.body);
    let export = dir.join("export");
    source.export(&export).await.unwrap();
    source.shutdown().await;

    // Project q's second note takes the first's body: its write breaks the unique body.
    let q_notes = export.join("q/records/own/notes.json");
    let mended = std::fs::read_to_string(&q_notes).unwrap();
    let broken = mended.replace("\"y\"", "\"x\"");
    assert_ne!(broken, mended);
    std::fs::write(&q_notes, broken).unwrap();

    let data = dir.join("data.sqlite");
    let started = || {
        EmulatorConfig::default()
            .config_file(&config)
            .data_path(&data)
    };
    let before = Emulator::start(started()).await.unwrap();
    let was = (pages(&before, "p").await, notes(&before, "p").await);
    assert_eq!(was.1, 0);
    before.shutdown().await;

    let out = binary(&[
        Path::new("--config"),
        &config,
        Path::new("--data"),
        &data,
        Path::new("--import"),
        &export,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("UNIQUE"), "{stderr}");

    let after = Emulator::start(started()).await.unwrap();
    assert_eq!(notes(&after, "p").await, 0, "no note of p was kept");
    assert_eq!(pages(&after, "p").await, was.0, "nor its page settings");
    assert_eq!(notes(&after, "q").await, 0);
    after.shutdown().await;

    std::fs::write(&q_notes, mended).unwrap();
    let retried = Emulator::start(started().import(&export)).await.unwrap();
    assert_eq!(notes(&retried, "p").await, 2);
    assert_eq!(notes(&retried, "q").await, 2);
    assert_eq!(pages(&retried, "p").await.as_array().map(Vec::len), Some(1));
    retried.shutdown().await;
}

/// Finding 7: `--export-on-exit DIR` where other users can write (DIR, or the directory it
/// will be made in) is warned of at start, as `--data`'s directory is; a private one is not.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn an_export_directory_others_can_write_is_warned_of_at_start() {
    use std::os::unix::fs::PermissionsExt;

    let mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let dir = TempDir::new();
    let shared = dir.join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::write(shared.join("notes.txt"), "someone else's").unwrap();
    mode(&shared, 0o777);
    let state = shared.join("state");
    let warned = |emu: &Emulator, about: &Path| {
        let warnings = emu.warnings().join("\n");
        assert!(
            warnings.contains(&about.display().to_string())
                && warnings.contains("can be written by other users"),
            "{warnings}"
        );
    };

    // Not there yet: the directory it will be made in.
    let emu = Emulator::start(EmulatorConfig::default().export_on_exit(&state))
        .await
        .unwrap();
    warned(&emu, &shared);
    assert!(!state.exists(), "nothing is exported at start");
    emu.stop().await.unwrap();

    // An earlier export in a directory others can write.
    mode(&shared, 0o755);
    mode(&state, 0o777);
    let emu = Emulator::start(EmulatorConfig::default().export_on_exit(&state))
        .await
        .unwrap();
    warned(&emu, &state);
    emu.stop().await.unwrap();

    mode(&state, 0o700);
    let emu = Emulator::start(EmulatorConfig::default().export_on_exit(&state))
        .await
        .unwrap();
    assert!(emu.warnings().is_empty(), "{:?}", emu.warnings());
    emu.stop().await.unwrap();
}
