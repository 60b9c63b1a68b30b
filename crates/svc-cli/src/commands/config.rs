//! `svc config`: the settings in use and where each came from; secrets never shown.

use std::io::Write;

use serde::Serialize;
use svc_api::auth::{FileTokenStore, SVC_AUTH_KEY, TokenStore};

use serde_json::{Value, json};

use crate::args::{ConfigAction, Global, Output};
use crate::connect;
use crate::exit::Failure;
use crate::settings::{Setting, Settings, Source};
use crate::{output, profile};

/// One line of the answer; `value` and `source` are null when the setting is not set.
#[derive(Debug, Serialize)]
struct Row {
    setting: String,
    value: Option<String>,
    source: Option<String>,
}

pub fn run(global: &Global) -> Result<(), Failure> {
    let settings = connect::settings(global)?;
    let rows = rows(&settings);
    let format = output::resolve(global.output);
    match format {
        Output::Table => table(&rows)?,
        _ => output::list(format, &rows)?,
    }
    let unset: Vec<&str> = [
        ("project", settings.project.is_none()),
        ("api_base_url", settings.api_base_url.is_none()),
        ("app_base_url", settings.app_base_url.is_none()),
    ]
    .into_iter()
    .filter_map(|(name, unset)| unset.then_some(name))
    .collect();
    if !unset.is_empty() {
        let file = settings.config_file.as_ref().map_or_else(
            || "a file named by SVC_CONFIG".to_owned(),
            |l| l.path.display().to_string(),
        );
        eprintln!(
            "note: {} not set: there is no default service, so the commands that need {} stop before sending anything. Give them with the flags (--project, --api-base-url, --app-base-url), the environment (SVC_PROJECT, SVC_API_BASE_URL, SVC_APP_BASE_URL) or a profile in {} (`svc config --help` shows the format).",
            unset.join(", "),
            if unset.len() == 1 { "it" } else { "them" },
            output::for_terminal(&file)
        );
    }
    Ok(())
}

fn rows(s: &Settings) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut push = |setting: &str, value: Option<String>, source: Option<String>| {
        rows.push(Row {
            setting: setting.to_owned(),
            value,
            source,
        });
    };
    match &s.config_file {
        Some(location) => {
            let found = if s.config_file_found {
                ""
            } else {
                " (not found)"
            };
            let source = if location.explicit {
                Source::Env("SVC_CONFIG")
            } else {
                Source::Default
            };
            push(
                "config_file",
                Some(format!("{}{found}", location.path.display())),
                Some(source.to_string()),
            );
        }
        None => push("config_file", None, None),
    }
    let shown = |setting: &Option<Setting<String>>| match setting {
        Some(s) => (Some(s.value.clone()), Some(s.source.to_string())),
        None => (None, None),
    };
    let secret = |setting: &Option<Setting<String>>| match setting {
        Some(s) => (Some(hidden(&s.value)), Some(s.source.to_string())),
        None => (None, None),
    };
    let (v, src) = shown(&s.profile);
    push("profile", v, src);
    let (v, src) = shown(&s.project);
    push("project", v, src);
    push(
        "environment",
        Some(s.environment.value.clone()),
        Some(s.environment.source.to_string()),
    );
    let url = |setting: &Option<Setting<String>>| match setting {
        Some(s) => (Some(without_password(&s.value)), Some(s.source.to_string())),
        None => (None, None),
    };
    let (v, src) = url(&s.api_base_url);
    push("api_base_url", v, src);
    let (v, src) = url(&s.app_base_url);
    push("app_base_url", v, src);
    push(
        "draft",
        Some(s.draft.value.to_string()),
        Some(s.draft.source.to_string()),
    );
    let (v, src) = secret(&s.api_key);
    push("api_key", v, src);
    let (v, src) = secret(&s.token);
    push("token", v, src);
    let (v, src) = secret(&s.tools_token);
    push("tools_token", v, src);
    for (resource, token) in &s.resource_tokens {
        push(
            &format!("resource_tokens.{resource}"),
            Some(hidden(&token.value)),
            Some(token.source.to_string()),
        );
    }
    push(
        "ca_cert",
        s.ca_cert.as_ref().map(|ca| ca.value.display().to_string()),
        s.ca_cert.as_ref().map(|ca| ca.source.to_string()),
    );
    push(
        "allow_insecure_http",
        Some(s.allow_insecure_http.value.to_string()),
        Some(s.allow_insecure_http.source.to_string()),
    );
    push("session", session(), None);
    rows
}

/// The session file and whether it holds a session; `None` without a config dir.
fn session() -> Option<String> {
    let path = connect::session_path()?;
    let state = match FileTokenStore::new(&path).get(SVC_AUTH_KEY) {
        Ok(Some(_)) => "signed in".to_owned(),
        Ok(None) => "none".to_owned(),
        Err(e) => format!("unreadable: {e}"),
    };
    Some(format!("{} ({state})", path.display()))
}

/// A secret as it may be shown: its kind prefix (such as `svc_key_`) and its last four
/// characters when it is long enough for that to give nothing useful away, else nothing.
/// `url` with the password of its `user:password@` part shown as `***`: a base URL may carry
/// credentials for a proxy or a gateway in front of the service.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

fn hidden(secret: &str) -> String {
    const SHOWN_TAIL: usize = 4;
    // With at least this many other characters, the tail tells keys apart and leaves enough
    // unknown.
    const LONG_ENOUGH: usize = 20;
    let prefix_len = secret
        .char_indices()
        .take_while(|(_, c)| c.is_ascii_lowercase() || *c == '_')
        .map(|(i, c)| i + c.len_utf8())
        .filter(|&end| end <= 12 && secret[..end].ends_with('_'))
        .last()
        .unwrap_or(0);
    let (prefix, rest) = secret.split_at(prefix_len);
    let count = rest.chars().count();
    if count < LONG_ENOUGH {
        return "(set, hidden)".to_owned();
    }
    let tail: String = rest.chars().skip(count - SHOWN_TAIL).collect();
    format!("{prefix}…{tail}")
}

/// Three aligned columns, nothing clipped: paths are the point of this table.
fn table(rows: &[Row]) -> Result<(), Failure> {
    let cells: Vec<[String; 3]> = rows
        .iter()
        .map(|r| {
            [
                r.setting.clone(),
                r.value.as_deref().unwrap_or("(not set)").to_owned(),
                r.source.clone().unwrap_or_default(),
            ]
            .map(|cell| output::for_terminal(&cell).into_owned())
        })
        .collect();
    let width = |i: usize| {
        cells
            .iter()
            .map(|c| c[i].chars().count())
            .max()
            .unwrap_or(0)
    };
    let (setting_width, value_width) = (width(0), width(1));
    let mut out = std::io::stdout().lock();
    for [setting, value, source] in &cells {
        let line = format!("{setting:<setting_width$}  {value:<value_width$}  {source}");
        writeln!(out, "{}", line.trim_end()).map_err(output::io)?;
    }
    Ok(())
}

/// The keys `svc config set` and `unset` know: a profile's settings.
const KEYS: [&str; 10] = [
    "project",
    "environment",
    "api_base_url",
    "app_base_url",
    "draft",
    "api_key",
    "token",
    "tools_token",
    "ca_cert",
    "allow_insecure_http",
];

/// `svc config set|unset|use`: changes the config file, keeping what it holds otherwise.
pub fn change(global: &Global, action: ConfigAction) -> Result<(), Failure> {
    let location = profile::location(&crate::settings::process_env, connect::config_dir())
        .ok_or_else(|| {
            Failure::usage_hint(
                "there is no config file: no SVC_CONFIG, and no config directory",
                "set SVC_CONFIG to the file to write, or SVC_CONFIG_DIR / XDG_CONFIG_HOME / HOME",
            )
        })?;
    let path = &location.path;
    let mut file = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str::<Value>(&text).map_err(|e| {
            Failure::usage_hint(
                format!("the config file {} is not JSON: {e}", path.display()),
                "fix it by hand first (`svc config --help` shows the format)",
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({"profiles": {}}),
        Err(e) => {
            return Err(Failure::Usage(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let Value::Object(root) = &mut file else {
        return Err(Failure::Usage(format!(
            "the config file {} is not a JSON object",
            path.display()
        )));
    };
    let said = match action {
        ConfigAction::Use { profile } => {
            let known = root
                .get("profiles")
                .and_then(Value::as_object)
                .is_some_and(|p| p.contains_key(&profile));
            if !known {
                return Err(Failure::usage_hint(
                    format!("the config file has no profile {profile:?}"),
                    format!("make it with `svc --profile {profile} config set KEY VALUE`"),
                ));
            }
            root.insert("default_profile".into(), Value::String(profile.clone()));
            format!("default profile: {profile}")
        }
        ConfigAction::Set { key, value } => {
            let name = profile_name(global, root)?;
            let value = if value == "-" {
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .map_err(|e| Failure::Usage(format!("cannot read stdin: {e}")))?;
                line.trim_end_matches(['\n', '\r']).to_owned()
            } else {
                value
            };
            let typed = typed(&key, value)?;
            let profiles = root
                .entry("profiles")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .ok_or_else(|| {
                    Failure::Usage("\"profiles\" in the config file is not an object".into())
                })?;
            let profile = profiles
                .entry(name.clone())
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .ok_or_else(|| Failure::Usage(format!("profile {name:?} is not an object")))?;
            match key.strip_prefix("resource_tokens.") {
                Some(resource) => {
                    let tokens = profile
                        .entry("resource_tokens")
                        .or_insert_with(|| json!({}))
                        .as_object_mut()
                        .ok_or_else(|| Failure::Usage("resource_tokens is not an object".into()))?;
                    tokens.insert(resource.to_owned(), typed);
                }
                None => {
                    profile.insert(key.clone(), typed);
                }
            }
            if !root.contains_key("default_profile") {
                root.insert("default_profile".into(), Value::String(name.clone()));
            }
            format!("{key} set in profile {name}")
        }
        ConfigAction::Unset { key } => {
            check_key(&key)?;
            let name = profile_name(global, root)?;
            let profile = root
                .get_mut("profiles")
                .and_then(|p| p.get_mut(&name))
                .and_then(Value::as_object_mut)
                .ok_or_else(|| {
                    Failure::Usage(format!("the config file has no profile {name:?}"))
                })?;
            let removed = match key.strip_prefix("resource_tokens.") {
                Some(resource) => profile
                    .get_mut("resource_tokens")
                    .and_then(Value::as_object_mut)
                    .and_then(|t| t.shift_remove(resource))
                    .is_some(),
                None => profile.shift_remove(&key).is_some(),
            };
            if removed {
                format!("{key} removed from profile {name}")
            } else {
                format!("{key} was not set in profile {name}")
            }
        }
    };
    // What is written must read back as a config file.
    let text = serde_json::to_string_pretty(&file).unwrap_or_default() + "\n";
    serde_json::from_str::<profile::ConfigFile>(&text)
        .map_err(|e| Failure::Usage(format!("the config file would not be valid: {e}")))?;
    write_private(path, &text)?;
    eprintln!(
        "{said} ({})",
        output::for_terminal(&path.display().to_string())
    );
    Ok(())
}

/// The profile to change: --profile, else SVC_PROFILE, else the file's default profile, else
/// its only profile, else `default`.
fn profile_name(global: &Global, root: &serde_json::Map<String, Value>) -> Result<String, Failure> {
    if let Some(name) = global.profile.clone().filter(|n| !n.is_empty()) {
        return Ok(name);
    }
    if let Ok(name) = std::env::var("SVC_PROFILE")
        && !name.is_empty()
    {
        return Ok(name);
    }
    if let Some(name) = root.get("default_profile").and_then(Value::as_str) {
        return Ok(name.to_owned());
    }
    let names: Vec<&String> = root
        .get("profiles")
        .and_then(Value::as_object)
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    match names.as_slice() {
        [] => Ok("default".to_owned()),
        [one] => Ok((*one).clone()),
        several => Err(Failure::usage_hint(
            "which profile? the file has several and no default_profile",
            format!(
                "name one with --profile NAME: {}",
                several
                    .iter()
                    .map(|n| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

fn check_key(key: &str) -> Result<(), Failure> {
    let resource = key
        .strip_prefix("resource_tokens.")
        .is_some_and(|r| !r.is_empty());
    if KEYS.contains(&key) || resource {
        Ok(())
    } else {
        Err(Failure::usage_hint(
            format!("unknown setting {key:?}"),
            format!(
                "the settings: {}, resource_tokens.RESOURCE",
                KEYS.join(", ")
            ),
        ))
    }
}

/// The JSON value of `key` set to `value`: booleans for draft and allow_insecure_http.
fn typed(key: &str, value: String) -> Result<Value, Failure> {
    check_key(key)?;
    if key == "draft" || key == "allow_insecure_http" {
        return match value.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Ok(Value::Bool(true)),
            "false" | "0" | "no" | "off" => Ok(Value::Bool(false)),
            _ => Err(Failure::Usage(format!(
                "{key} is true or false, not {value:?}"
            ))),
        };
    }
    Ok(Value::String(value))
}

/// Writes the config file (it may hold secrets) as a private file, creating its folder.
fn write_private(path: &std::path::Path, text: &str) -> Result<(), Failure> {
    let fail = |e: std::io::Error| Failure::Other(format!("cannot write {}: {e}", path.display()));
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    crate::private_file::replace(path, text.as_bytes()).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_urls_password_is_not_shown() {
        assert_eq!(
            without_password("https://gw:Secret4pw@example.com/data?x=1"),
            "https://gw:***@example.com/data?x=1"
        );
        assert_eq!(
            without_password("https://a:b@c@example.com"),
            "https://a:***@example.com"
        );
        for unchanged in ["https://gw@example.com/data", "http://127.0.0.1:8080", "x"] {
            assert_eq!(without_password(unchanged), unchanged);
        }
    }

    #[test]
    fn secrets_show_their_kind_and_tail_only() {
        let key = "svc_key_0123456789abcdef0123456789abcdef";
        assert_eq!(hidden(key), "svc_key_…cdef");
        assert_eq!(
            hidden("svc_tools_0123456789abcdef0123456789abcdef"),
            "svc_tools_…cdef"
        );
        assert_eq!(hidden("k"), "(set, hidden)");
        assert_eq!(hidden("svc_key_short"), "(set, hidden)");
        // A random token that happens to start with letters and `_` shows no more than its
        // tail: the prefix must be a short kind marker.
        assert_eq!(hidden("abcdefghijklmnop_qrstuvwxyz0123456789"), "…6789");
        assert!(!hidden(key).contains("0123"));
    }
}
