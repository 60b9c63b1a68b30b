//! `-v` / `-vv`: the SDK's events on stderr, against the emulator on loopback; never a
//! credential, a password or a session token.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use svc_emulator::{Emulator, EmulatorConfig};

fn svc(env: &[(&str, String)], args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_svc"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "svc {args:?}: {:?}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn hosts(emulator: &Emulator) -> Vec<(&'static str, String)> {
    vec![
        ("SVC_PROJECT", emulator.project().to_string()),
        ("SVC_API_BASE_URL", emulator.api_base_url().to_owned()),
        ("SVC_APP_BASE_URL", emulator.app_base_url().to_owned()),
    ]
}

/// The command's stderr, checked to hold none of `secrets`.
fn stderr_without(out: &Output, secrets: &[&str]) -> String {
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    for secret in secrets {
        assert!(!secret.is_empty());
        assert!(!err.contains(secret), "{secret:?} printed:\n{err}");
    }
    // Stdout is no terminal here, and stderr neither: no colours.
    assert!(!err.contains('\u{1b}'), "{err:?}");
    err
}

#[tokio::test(flavor = "multi_thread")]
async fn verbose_shows_each_request_and_never_a_credential() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let key = emulator.api_key().to_owned();
    let tools = emulator.tools_token().to_owned();
    let token = emulator.resource_tokens()["shop"].clone();
    let secrets = [key.as_str(), tools.as_str(), token.as_str()];
    let mut env = hosts(&emulator);
    env.push(("SVC_API_KEY", key.clone()));
    env.push(("SVC_TOOLS_TOKEN", tools.clone()));

    let out = svc(
        &env,
        &[
            "-vv",
            "records",
            "list",
            "shop",
            "orders",
            "--per-page",
            "2",
        ],
        None,
    );
    let err = stderr_without(&out, &secrets);
    let path = "path=/projects/demo/prod/shop/models/orders";
    assert!(
        err.contains("TRACE svc-api: sending method=GET") && err.contains(path),
        "{err}"
    );
    assert!(
        err.contains("DEBUG svc-api: answered method=GET")
            && err.contains("status=200 attempt=1 elapsed_ms="),
        "{err}"
    );
    // The query (filters, page) is not in the events either.
    assert!(!err.contains("per_page"), "{err}");
    // Stdout is the command's answer, as without -v.
    let page: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(page["results"].as_array().unwrap().len(), 2);

    // A token given by flag, the tools token, the API key on the application host.
    for args in [
        &[
            "-vv",
            "--token",
            token.as_str(),
            "sql",
            "shop",
            "select 1 as n",
        ][..],
        &["-vv", "teams", "list"],
        &["-vv", "pages", "list"],
        &["-vv", "projects", "get"],
    ] {
        let err = stderr_without(&svc(&env, args, None), &secrets);
        assert!(err.contains("svc-api: answered"), "{args:?}: {err}");
    }

    // -v: the answers only; no -v: nothing.
    let err = stderr_without(&svc(&env, &["-v", "teams", "list"], None), &secrets);
    assert!(err.contains("DEBUG svc-api: answered"), "{err}");
    assert!(!err.contains("TRACE"), "{err}");
    let err = stderr_without(&svc(&env, &["teams", "list"], None), &secrets);
    assert!(err.is_empty(), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn verbose_never_shows_a_password_or_a_session_token() {
    let emulator = Emulator::start(EmulatorConfig::default()).await.unwrap();
    let config = std::env::temp_dir().join(format!("svc-cli-verbose-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&config);
    std::fs::create_dir_all(&config).unwrap();
    let mut env = hosts(&emulator);
    env.push(("SVC_CONFIG_DIR", config.to_str().unwrap().to_owned()));
    const PASSWORD: &str = "correct horse battery";
    let password = format!("{PASSWORD}\n");

    let args = ["--email", "ana@example.com", "--password-stdin"];
    let register = [&["-vv", "register"][..], &args].concat();
    let err = stderr_without(&svc(&env, &register, Some(&password)), &[PASSWORD]);
    assert!(err.contains("svc-api: answered method=POST"), "{err}");
    let login = [&["-vv", "login"][..], &args].concat();
    let err = stderr_without(&svc(&env, &login, Some(&password)), &[PASSWORD]);
    assert!(err.contains("svc-api: answered method=POST"), "{err}");

    // Every string the saved session holds that is long enough to be a token.
    let stored = std::fs::read_to_string(config.join("svc").join("session.json")).unwrap();
    let mut tokens = Vec::new();
    collect_strings(&serde_json::from_str(&stored).unwrap(), &mut tokens);
    tokens.retain(|t| t.len() >= 20);
    assert!(tokens.len() >= 2, "an access and a refresh token: {stored}");
    let mut secrets: Vec<&str> = tokens.iter().map(String::as_str).collect();
    secrets.push(PASSWORD);

    for args in [
        &["-vv", "whoami"][..],
        &[
            "-vv",
            "records",
            "list",
            "shop",
            "orders",
            "--per-page",
            "1",
        ],
        &["-vv", "teams", "list"],
    ] {
        let err = stderr_without(&svc(&env, args, None), &secrets);
        assert!(err.contains("status=200"), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&config);
}

fn collect_strings(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            into.push(s.clone());
            // A store may keep the session as JSON text inside its JSON.
            if let Ok(inner) = serde_json::from_str::<Value>(s) {
                collect_strings(&inner, into);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, into)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, into)),
        _ => {}
    }
}
