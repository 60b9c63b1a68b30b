//! The `svc` binary's connection settings: profiles in the config file, their precedence,
//! `svc config`, what it says without any configuration, and hints in the command's terms
//! (untrusted certificates, plain http, a bad --ca-cert).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use svc_emulator::{Emulator, EmulatorConfig};

/// A directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "svc-profiles-{label}-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `svc` with only `env` (and PATH): no HOME, so no config file but the one given.
async fn svc(env: &[(&str, String)], args: &[&str]) -> Output {
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_svc"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env)
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .expect("svc runs")
    })
    .await
    .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts the exit code; returns stderr.
fn code(out: &Output, expected: i32) -> String {
    let err = stderr(out);
    assert_eq!(
        out.status.code(),
        Some(expected),
        "stdout: {}\nstderr: {err}",
        stdout(out)
    );
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn json_out(out: &Output) -> Value {
    code(out, 0);
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// Writes `config` as `<dir>/svc/config.json`, readable by its owner only.
fn write_config(dir: &Path, config: &Value) -> PathBuf {
    std::fs::create_dir_all(dir.join("svc")).unwrap();
    let path = dir.join("svc").join("config.json");
    std::fs::write(&path, serde_json::to_vec_pretty(config).unwrap()).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path
}

fn config_dir(dir: &TempDir) -> (&'static str, String) {
    ("SVC_CONFIG_DIR", dir.0.to_str().unwrap().to_owned())
}

/// A profile with everything the emulator printed.
fn emulator_profile(emulator: &Emulator) -> Value {
    json!({
        "api_base_url": emulator.api_base_url(),
        "app_base_url": emulator.app_base_url(),
        "project": emulator.project().to_string(),
        "api_key": emulator.api_key(),
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_profile_serves_commands_and_flags_and_environment_keys_win_over_it() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let dir = TempDir::new("precedence");
    let tokens_only = json!({
        "api_base_url": emulator.api_base_url(),
        "app_base_url": emulator.app_base_url(),
        "project": emulator.project().to_string(),
        "resource_tokens": {
            "shop": emulator.resource_tokens()["shop"],
            "__svc_app__": emulator.tools_token(),
        },
    });
    write_config(
        &dir.0,
        &json!({
            "default_profile": "emu",
            "profiles": {"emu": emulator_profile(&emulator), "tokens": tokens_only},
        }),
    );
    let env = vec![config_dir(&dir)];

    // The default profile, and one picked by --profile or SVC_PROFILE.
    let project = json_out(&svc(&env, &["projects", "get"]).await);
    assert_eq!(project["unique_name"], "demo");
    json_out(
        &svc(
            &env,
            &[
                "--profile",
                "tokens",
                "records",
                "get",
                "shop",
                "orders",
                "1",
            ],
        )
        .await,
    );
    let mut with_profile = env.clone();
    with_profile.push(("SVC_PROFILE", "tokens".to_owned()));
    let teams = json_out(&svc(&with_profile, &["teams", "list"]).await);
    assert!(!teams["results"].as_array().unwrap().is_empty(), "{teams}");
    // The tokens profile has no API key: pages need one, and the message says so.
    let err = code(&svc(&with_profile, &["pages", "list"]).await, 2);
    assert!(err.contains("api_key in your profile"), "{err}");

    // An environment key wins over the profile, a flag over the environment.
    let mut wrong_project = env.clone();
    wrong_project.push(("SVC_PROJECT", "nope".to_owned()));
    code(&svc(&wrong_project, &["projects", "get"]).await, 3);
    let project = json_out(&svc(&wrong_project, &["--project", "demo", "projects", "get"]).await);
    assert_eq!(project["unique_name"], "demo");
    let mut wrong_key = env.clone();
    wrong_key.push(("SVC_API_KEY", "svc_key_wrong".to_owned()));
    code(&svc(&wrong_key, &["pages", "list"]).await, 3);

    // SVC_CONFIG names the file directly.
    let elsewhere = TempDir::new("named");
    let named = write_config(
        &elsewhere.0,
        &json!({"profiles": {"x": emulator_profile(&emulator)}}),
    );
    let env = vec![("SVC_CONFIG", named.to_str().unwrap().to_owned())];
    json_out(&svc(&env, &["--profile", "x", "pages", "list"]).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn svc_config_shows_where_each_setting_comes_from_and_never_a_secret() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let dir = TempDir::new("show");
    let mut profile = emulator_profile(&emulator);
    profile["resource_tokens"] = json!({"shop": emulator.resource_tokens()["shop"]});
    profile["ca_cert"] = json!("ca.pem");
    let file = write_config(&dir.0, &json!({"profiles": {"emu": profile}}));
    let tools = emulator.tools_token().to_owned();
    let env = vec![config_dir(&dir), ("SVC_TOOLS_TOKEN", tools.clone())];
    let out = svc(
        &env,
        &[
            "--profile",
            "emu",
            "--environment",
            "prod",
            "config",
            "-o",
            "json",
        ],
    )
    .await;
    let rows = json_out(&out);
    let row = |name: &str| -> Value {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["setting"] == name)
            .unwrap_or_else(|| panic!("no row {name}: {rows}"))
            .clone()
    };
    let in_profile = format!("profile emu in {}", file.display());
    assert_eq!(row("config_file")["value"], file.display().to_string());
    assert_eq!(row("profile")["value"], "emu");
    assert_eq!(row("profile")["source"], "flag --profile");
    assert_eq!(row("project")["source"], in_profile);
    assert_eq!(row("environment")["source"], "flag --environment");
    assert_eq!(row("api_base_url")["value"], emulator.api_base_url());
    assert_eq!(row("tools_token")["source"], "env SVC_TOOLS_TOKEN");
    assert_eq!(row("token")["value"], Value::Null);
    assert_eq!(row("draft")["source"], "default");
    assert_eq!(
        row("ca_cert")["value"],
        dir.0.join("svc").join("ca.pem").display().to_string()
    );
    let key = emulator.api_key();
    assert_eq!(
        row("api_key")["value"],
        format!("svc_key_…{}", &key[key.len() - 4..])
    );
    assert_eq!(row("resource_tokens.shop")["source"], in_profile);

    // No secret in any format, on stdout or stderr.
    for format in ["json", "table", "csv", "ndjson"] {
        let out = svc(&env, &["--profile", "emu", "config", "-o", format]).await;
        code(&out, 0);
        let all = format!("{}{}", stdout(&out), stderr(&out));
        for secret in [
            key,
            tools.as_str(),
            emulator.resource_tokens()["shop"].as_str(),
        ] {
            assert!(!all.contains(secret), "{format}: {all}");
        }
    }
    let table = stdout(&svc(&env, &["--profile", "emu", "config", "-o", "table"]).await);
    let project_line = table.lines().find(|l| l.starts_with("project ")).unwrap();
    assert!(
        project_line.contains("demo") && project_line.ends_with(&in_profile),
        "{table}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn svc_config_never_shows_a_base_urls_password() {
    let home = TempDir::new("home-url");
    let env = vec![
        ("HOME", home.0.to_str().unwrap().to_owned()),
        (
            "SVC_API_BASE_URL",
            "https://gw:Secret4pw@data.example.com/v1".to_owned(),
        ),
        (
            "SVC_APP_BASE_URL",
            "https://gw:Secret4pw@app.example.com/api".to_owned(),
        ),
    ];
    for format in ["json", "table", "csv", "ndjson"] {
        let out = svc(&env, &["config", "-o", format]).await;
        code(&out, 0);
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(!all.contains("Secret4pw"), "{format}: {all}");
        assert!(
            all.contains("https://gw:***@data.example.com/v1"),
            "{format}: {all}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_configuration_the_cli_says_how_to_point_it_at_the_service() {
    let home = TempDir::new("home");
    let env = vec![("HOME", home.0.to_str().unwrap().to_owned())];
    let standard = home.0.join(".config").join("svc").join("config.json");

    let err = code(&svc(&env, &["records", "list", "shop", "orders"]).await, 2);
    for needed in [
        "--api-base-url",
        "SVC_API_BASE_URL",
        "api_base_url",
        "--project",
        "SVC_PROJECT",
        "svc config",
        "svc emulator",
    ] {
        assert!(err.contains(needed), "{needed}: {err}");
    }
    assert!(err.contains(&standard.display().to_string()), "{err}");
    // Only what is missing is named.
    let env_with_project = vec![env[0].clone(), ("SVC_PROJECT", "demo".to_owned())];
    let err = code(&svc(&env_with_project, &["pages", "list"]).await, 2);
    assert!(
        err.contains("--app-base-url") && !err.contains("--project"),
        "{err}"
    );

    // `svc config` says what is missing, and succeeds.
    let out = svc(&env, &["config", "-o", "table"]).await;
    let note = code(&out, 0);
    assert!(
        note.contains("project, api_base_url, app_base_url not set"),
        "{note}"
    );
    assert!(stdout(&out).contains("(not found)"), "{}", stdout(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_config_file_or_an_unknown_profile_stops_with_what_to_fix() {
    let dir = TempDir::new("broken");
    let env = vec![config_dir(&dir)];
    write_config(
        &dir.0,
        &json!({"profiles": {"a": {"project": "demo"}, "b": {"project": "demo"}}}),
    );
    let err = code(&svc(&env, &["--profile", "c", "config"]).await, 2);
    assert!(
        err.contains("no profile \"c\"") && err.contains("\"a\", \"b\""),
        "{err}"
    );
    write_config(&dir.0, &json!({"profiles": {"a": {"api_url": "http://x"}}}));
    let err = code(&svc(&env, &["config"]).await, 2);
    assert!(
        err.contains("unknown field `api_url`") && err.contains("api_base_url"),
        "{err}"
    );
    let missing = vec![("SVC_CONFIG", "/nonexistent/svc.json".to_owned())];
    let err = code(&svc(&missing, &["config"]).await, 2);
    assert!(
        err.contains("/nonexistent/svc.json") && err.contains("SVC_CONFIG"),
        "{err}"
    );
    // A profile asked for with no file at all.
    let empty = TempDir::new("empty");
    let err = code(
        &svc(&[config_dir(&empty)], &["--profile", "x", "config"]).await,
        2,
    );
    assert!(err.contains("no config file at"), "{err}");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_config_file_other_users_can_read_gets_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new("mode");
    let env = vec![config_dir(&dir)];
    let secret = "svc_key_0123456789abcdef0123456789abcdef";
    let path = write_config(
        &dir.0,
        &json!({"profiles": {"a": {"project": "demo", "api_key": secret}}}),
    );
    let quiet = code(&svc(&env, &["--profile", "a", "config"]).await, 0);
    assert!(!quiet.contains("warning"), "{quiet}");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let warned = code(&svc(&env, &["--profile", "a", "config"]).await, 0);
    assert!(
        warned.contains("warning:")
            && warned.contains("can be read by other users (mode 0644)")
            && warned.contains(&format!("chmod 600 {}", path.display())),
        "{warned}"
    );
    assert!(!warned.contains(secret), "{warned}");
    // Without secrets, a readable file is fine; one others can change never is.
    write_config(&dir.0, &json!({"profiles": {"a": {"project": "demo"}}}));
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let quiet = code(&svc(&env, &["--profile", "a", "config"]).await, 0);
    assert!(!quiet.contains("warning"), "{quiet}");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let warned = code(&svc(&env, &["--profile", "a", "config"]).await, 0);
    assert!(warned.contains("can be changed by other users"), "{warned}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_untrusted_certificate_says_to_pass_ca_cert() {
    let emulator = Emulator::start(EmulatorConfig::default().tls(true))
        .await
        .unwrap();
    let ca = emulator.tls_ca_pem_path().unwrap().to_owned();
    let mut env = vec![
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
        ("SVC_API_KEY", emulator.api_key().to_owned()),
    ];
    assert!(emulator.api_base_url().starts_with("https://"));
    let err = code(
        &svc(&env, &["records", "get", "shop", "orders", "1"]).await,
        4,
    );
    let hint = err
        .lines()
        .find(|l| l.starts_with("hint:"))
        .unwrap_or_default();
    assert!(
        hint.contains("--ca-cert FILE") && hint.contains("SVC_CA_CERT"),
        "{err}"
    );
    assert!(err.contains("UnknownIssuer"), "{err}");
    assert!(!err.contains("add_root_certificate_pem"), "{err}");

    // The flag, the environment key, and a profile's path relative to the file all serve.
    json_out(
        &svc(
            &env,
            &[
                "--ca-cert",
                ca.to_str().unwrap(),
                "records",
                "get",
                "shop",
                "orders",
                "1",
            ],
        )
        .await,
    );
    let dir = TempDir::new("tls");
    std::fs::create_dir_all(dir.0.join("svc")).unwrap();
    std::fs::copy(&ca, dir.0.join("svc").join("emulator-ca.pem")).unwrap();
    write_config(
        &dir.0,
        &json!({"default_profile": "tls", "profiles": {"tls": {"ca_cert": "emulator-ca.pem"}}}),
    );
    env.push(config_dir(&dir));
    json_out(&svc(&env, &["pages", "list"]).await);

    // A file that is not a certificate: named, with what it should hold.
    let bad = dir.0.join("not-a-cert.pem");
    std::fs::write(&bad, "hello").unwrap();
    env.push(("SVC_CA_CERT", bad.to_str().unwrap().to_owned()));
    let err = code(&svc(&env, &["pages", "list"]).await, 2);
    assert!(
        err.contains(&bad.display().to_string())
            && err.contains("env SVC_CA_CERT")
            && err.contains("BEGIN CERTIFICATE"),
        "{err}"
    );
    assert!(!err.contains("add_root_certificate_pem"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_http_to_another_host_names_the_setting_and_the_flag() {
    // Refused before anything is sent: nothing listens there, and nothing needs to.
    let env = vec![
        ("SVC_PROJECT", "demo".to_owned()),
        ("SVC_API_BASE_URL", "http://10.0.0.5:8787".to_owned()),
        ("SVC_TOKEN", "t".to_owned()),
    ];
    let err = code(
        &svc(&env, &["records", "get", "shop", "orders", "1"]).await,
        2,
    );
    assert!(
        err.contains("env SVC_API_BASE_URL") && err.contains("--allow-insecure-http"),
        "{err}"
    );
    assert!(!err.contains("ClientBuilder"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn config_set_unset_and_use_write_the_file() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let dir = TempDir::new("config-set");
    let env = vec![("SVC_CONFIG_DIR", dir.0.to_str().unwrap().to_owned())];
    let file = dir.0.join("svc").join("config.json");
    let set = |key: &'static str, value: String| {
        let env = env.clone();
        async move { svc(&env, &["--profile", "local", "config", "set", key, &value]).await }
    };
    code(
        &set("api_base_url", emulator.api_base_url().to_owned()).await,
        0,
    );
    code(
        &set("app_base_url", emulator.app_base_url().to_owned()).await,
        0,
    );
    code(&set("project", emulator.project().to_string()).await, 0);
    code(&set("api_key", emulator.api_key().to_owned()).await, 0);
    code(&set("draft", "off".to_owned()).await, 0);
    // Unknown keys and values that are not of the key's type: refused, the file unchanged.
    let before = std::fs::read_to_string(&file).unwrap();
    let err = code(&set("colour", "red".to_owned()).await, 2);
    assert!(
        err.contains("unknown setting \"colour\"") && err.contains("api_key"),
        "{err}"
    );
    code(&set("draft", "maybe".to_owned()).await, 2);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    let written: Value = serde_json::from_str(&before).unwrap();
    assert_eq!(written["default_profile"], "local");
    assert_eq!(written["profiles"]["local"]["draft"], false);
    assert_eq!(written["profiles"]["local"]["project"], "demo");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // The profile works: the first (and default) profile serves a command.
    let out = svc(&env, &["records", "get", "shop", "orders", "1"]).await;
    code(&out, 0);
    // Another profile, made the default, then unset again.
    code(
        &svc(
            &env,
            &["--profile", "other", "config", "set", "project", "nowhere"],
        )
        .await,
        0,
    );
    code(&svc(&env, &["config", "use", "other"]).await, 0);
    let err = code(&svc(&env, &["config", "use", "nope"]).await, 2);
    assert!(err.contains("no profile \"nope\""), "{err}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["default_profile"], "other");
    code(&svc(&env, &["config", "unset", "project"]).await, 0);
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(written["profiles"]["other"], json!({}));
    assert_eq!(written["profiles"]["local"]["api_key"], emulator.api_key());
}
