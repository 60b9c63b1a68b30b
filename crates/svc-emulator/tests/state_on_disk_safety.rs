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

/// Writes an export of an emulator started from `config` (its seeded state) to `export`.
async fn export_seeded(config: &Path, export: &Path) {
    let source = Emulator::start(EmulatorConfig::default().config_file(config))
        .await
        .unwrap();
    source.export(export).await.unwrap();
    source.shutdown().await;
}

/// Runs the binary with `args` and no `SVC_EMULATOR_*` variable, to its end: with
/// `--exit-with-stdin` among them, it starts (or fails to), and stops once its start line is
/// read, when its stdin, a pipe held until then, ends (a stdin that ends during the start would
/// end the start there).
fn binary(args: &[&Path]) -> Output {
    use std::io::BufRead;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_svc-emulator"));
    for (name, _) in std::env::vars() {
        if name.starts_with("SVC_EMULATOR_") {
            cmd.env_remove(name);
        }
    }
    let mut child = cmd
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take();
    // The start line, or the end of stdout (a start that failed): the gate.
    let mut line = Vec::new();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    stdout.read_until(b'\n', &mut line).unwrap();
    drop(stdin);
    let mut out = child.wait_with_output().unwrap();
    std::io::Read::read_to_end(&mut stdout, &mut line).unwrap();
    out.stdout = line;
    out
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
        // Finding F6: a file of /proc says it is regular and empty, and may never end
        // (/proc/kmsg): no file under /proc, /sys or /dev is read.
        (
            "q/project.json",
            Bad::LinkTo("/proc/self/status"),
            "under /proc: an import reads only the files an export writes",
        ),
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

/// Runs the binary with `args` and `--exit-with-stdin` (an emulator that starts stops once its
/// start line is read): its exit code and stderr.
fn binary_started(args: &[&Path]) -> (Option<i32>, String) {
    let mut all = args.to_vec();
    all.push(Path::new("--exit-with-stdin"));
    let out = binary(&all);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A config whose project `p1` has `mine`, a SQLite file of the user's given without
/// `"reset": true` (its data is the user's: an export leaves it out, under `kept`), and `own`,
/// a database the emulator keeps.
fn kept_config(dir: &TempDir) -> PathBuf {
    let path = dir.join("kept.json");
    let config = json!({"projects": [{"name": "p1", "api_keys": ["key_p1"], "resources": [
        {"name": "mine", "token": "tok_mine", "database": "mine.sqlite",
         "seed_sql": "CREATE TABLE precious (id INTEGER PRIMARY KEY, v TEXT); \
                      INSERT INTO precious VALUES (1, 'MINE'), (2, 'MINE TOO');"},
        {"name": "own", "token": "tok_own",
         "seed_sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"}
    ]}]});
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// Finding F1: an import never writes into a database that an export leaves out (one given
/// without `"reset": true`, listed under `kept`), even when the export was changed to hold
/// records of it: the start stops (exit 1) naming the resource, before anything is written.
#[tokio::test(flavor = "multi_thread")]
async fn an_import_never_writes_a_database_given_without_reset() {
    let dir = TempDir::new();
    let config = kept_config(&dir);
    let export = dir.join("exp");
    let emu = Emulator::start(
        EmulatorConfig::default()
            .config_file(&config)
            .export_on_exit(&export),
    )
    .await
    .unwrap();
    emu.stop().await.unwrap();
    let project_json = export.join("p1/project.json");
    let mut project: Value =
        serde_json::from_slice(&std::fs::read(&project_json).unwrap()).unwrap();
    assert_eq!(project["kept"], json!(["mine"]));
    assert!(project["resources"].get("mine").is_none());

    // The export, changed: it now says it holds `mine`'s records.
    project["resources"]["mine"] = json!({"models": ["precious"], "keys": []});
    std::fs::write(&project_json, project.to_string()).unwrap();
    let records = export.join("p1/records/mine");
    std::fs::create_dir_all(&records).unwrap();
    std::fs::write(
        records.join("precious.json"),
        r#"[{"id": 1, "v": "ATTACKER"}]"#,
    )
    .unwrap();

    let (code, stderr) = binary_started(&[
        Path::new("--config"),
        &config,
        Path::new("--import"),
        &export,
        Path::new("--import-on-rows"),
        Path::new("replace"),
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "resource \"mine\" is kept (a database you gave without reset); an import leaves \
             it as it is"
        ) && stderr.contains(&project_json.display().to_string()),
        "{stderr}"
    );

    let emu = Emulator::start(EmulatorConfig::default().config_file(&config))
        .await
        .unwrap();
    let call = Call::get("/projects/p1/prod/mine/models/precious").auth("tok_mine");
    let page = send(&emu, call).await.json();
    let mut values: Vec<&str> = page["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{page}"))
        .iter()
        .map(|r| r["v"].as_str().unwrap())
        .collect();
    values.sort_unstable();
    assert_eq!(values, ["MINE", "MINE TOO"], "{page}");
    emu.shutdown().await;
}

/// Finding F5: an export that other users can change is warned of when it is imported, as
/// `--data`'s directory is (`Emulator::warnings`, stderr): the directory it is in, when others
/// can write there and move it aside, or a folder or file of it; and an existing export
/// directory given to `--export-on-exit` is warned of when others can replace it (they can
/// write in the directory it is in), as a missing one is.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn an_export_others_can_change_is_warned_of_at_import_and_export() {
    use std::os::unix::fs::PermissionsExt;

    let mode = |path: &Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let dir = TempDir::new();
    let config = config_file(&dir);
    let ww = dir.join("ww");
    std::fs::create_dir(&ww).unwrap();
    // Shared: not the export's alone (which the start would make private).
    std::fs::write(ww.join("notes.txt"), "someone else's").unwrap();
    let state = ww.join("state");
    let source = Emulator::start(EmulatorConfig::default().config_file(&config))
        .await
        .unwrap();
    note(&source, "p", "a").await;
    source.export(&state).await.unwrap();
    source.shutdown().await;
    mode(&ww, 0o777);
    mode(&state, 0o700);
    let started = || {
        EmulatorConfig::default()
            .config_file(&config)
            .import(&state)
            .export_on_exit(&state)
    };

    let emu = Emulator::start(started()).await.unwrap();
    let warnings = emu.warnings().join("\n");
    assert!(
        warnings.contains(&format!(
            "the export {} can be changed by other users: {} (mode 0777",
            state.display(),
            ww.display()
        )),
        "the import: {warnings}"
    );
    assert!(
        warnings.contains(&format!("the directory {} that", ww.display()))
            && warnings.contains("can be written by other users"),
        "the export on exit: {warnings}"
    );
    emu.shutdown().await;

    // A file of it.
    mode(&ww, 0o755);
    let records = state.join("p/records/own/notes.json");
    mode(&records, 0o666);
    let emu = Emulator::start(started()).await.unwrap();
    let warnings = emu.warnings().join("\n");
    assert!(
        warnings.contains(&format!("{} (mode 0666", records.display())),
        "{warnings}"
    );
    emu.shutdown().await;

    mode(&records, 0o600);
    let emu = Emulator::start(started()).await.unwrap();
    assert!(emu.warnings().is_empty(), "{:?}", emu.warnings());
    emu.shutdown().await;
}

/// Minor (a): `--export-on-exit DIR` into a directory of other files is refused at start
/// (exit 1, before the start line), not at the exit, which would lose the session's state.
#[tokio::test(flavor = "multi_thread")]
async fn an_export_on_exit_where_no_export_may_go_is_refused_at_start() {
    let dir = TempDir::new();
    let others = dir.join("others");
    std::fs::create_dir(&others).unwrap();
    std::fs::write(others.join("notes.txt"), "someone's notes").unwrap();
    let refused = Emulator::start(EmulatorConfig::default().export_on_exit(&others))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("--export-on-exit") && refused.contains("is not an export"),
        "{refused}"
    );
    let out = binary(&[
        Path::new("--export-on-exit"),
        &others,
        Path::new("--exit-with-stdin"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "no start line");
    assert_eq!(
        std::fs::read_dir(&others).unwrap().count(),
        1,
        "nothing written"
    );
}

/// Minor (b): the binary says once, on stderr, what the import wrote of each project.
#[tokio::test(flavor = "multi_thread")]
async fn what_an_import_wrote_is_said_once() {
    let dir = TempDir::new();
    let config = config_file(&dir);
    let export = dir.join("export");
    export_seeded(&config, &export).await;
    let (code, stderr) = binary_started(&[
        Path::new("--config"),
        &config,
        Path::new("--import"),
        &export,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    for project in ["p", "q"] {
        let line = format!("imported project \"{project}\"");
        assert_eq!(stderr.matches(&line).count(), 1, "{stderr}");
    }
}

/// Minor (c): a name in an export that cannot be a file's is reported as the export's: the
/// message names the export's file that holds it, not the emulator's store.
#[tokio::test(flavor = "multi_thread")]
async fn a_bad_name_in_an_export_names_the_export_s_file() {
    let dir = TempDir::new();
    let config = config_file(&dir);
    let export = dir.join("export");
    export_seeded(&config, &export).await;
    let project_json = export.join("p/project.json");
    let mut project: Value =
        serde_json::from_slice(&std::fs::read(&project_json).unwrap()).unwrap();
    // A name that climbs out of the export's folder.
    let climbing = ["..", "..", "..", "elsewhere"].join("/");
    project["resources"]["own"]["models"] = json!([climbing]);
    std::fs::write(&project_json, project.to_string()).unwrap();
    let refused = Emulator::start(
        EmulatorConfig::default()
            .config_file(&config)
            .import(&export),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        refused.contains(&format!(
            "{}: resource \"own\": the model name \"{climbing}\" cannot be a file's name",
            project_json.display()
        )) && !refused.contains("the emulator's own store"),
        "{refused}"
    );
}
