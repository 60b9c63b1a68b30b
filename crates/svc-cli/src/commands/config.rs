//! `svc config`: the settings in use and where each came from; secrets never shown.

use std::io::Write;

use serde::Serialize;
use svc_api::auth::{FileTokenStore, SVC_AUTH_KEY, TokenStore};

use crate::args::{Global, Output};
use crate::connect;
use crate::exit::Failure;
use crate::output;
use crate::settings::{Setting, Settings, Source};

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
