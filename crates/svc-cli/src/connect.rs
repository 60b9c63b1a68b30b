//! Building a client from the global options, the environment, the profile and the saved session.
//!
//! Precedence: a flag wins over the environment, which wins over the profile of the config file,
//! which wins over the defaults (see [`crate::settings`]). The environment is read as
//! docs/client-behaviour.md section 1 says (`VITE_SVC_*` over `SVC_*`, empty means unset, draft
//! words). Credentials have no `VITE_` keys (they must never end up in a front-end bundle):
//! `SVC_API_KEY`, `SVC_TOKEN` and `SVC_TOOLS_TOKEN`.
//!
//! The session of `svc login` lives in a [`FileTokenStore`] at `<config dir>/svc/session.json`,
//! where the config dir is `$SVC_CONFIG_DIR`, else `$XDG_CONFIG_HOME`, else `$HOME/.config`
//! (`%APPDATA%` on Windows when there is no `HOME`).

use std::path::PathBuf;
use std::sync::Arc;

use svc_api::Client;
use svc_api::auth::{FileTokenStore, SVC_AUTH_KEY, TokenStore};
use svc_api::model::users::TOOLS_RESOURCE;

use crate::args::Global;
use crate::exit::{self, Failure};
use crate::output;
use crate::settings::{self, Settings};

/// The credentials a command needs; checked before anything is sent, so that a missing one is a
/// usage error that names the flags.
#[derive(Debug, Clone, Copy)]
pub enum Access<'a> {
    /// Projects and pages on the application host: the API key. `needs_project` is false for
    /// `projects get NAME`.
    App { needs_project: bool },
    /// Records, SQL and reload of one resource: its token, the API key, or the session.
    Resource(&'a str),
    /// Users, teams and the tools reload: the tools token, the API key, or the session.
    Tools,
    /// The project's own data host routes (workflows): the API key or the session; no
    /// resource's token serves them.
    Project,
    /// Account routes (login, register, whoami): the project and the data host only.
    Account,
    /// The HTTP proxy: the saved session.
    Session,
}

/// The directory that holds `svc/session.json`, if one can be found.
pub fn config_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    var("SVC_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| var("XDG_CONFIG_HOME").map(PathBuf::from))
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".config")))
        .or_else(|| var("APPDATA").map(PathBuf::from))
}

/// The session file: `<config dir>/svc/session.json`.
pub fn session_path() -> Option<PathBuf> {
    config_dir().map(|dir| dir.join("svc").join("session.json"))
}

/// The session file, or a usage error saying how to give a config directory.
pub fn require_session_path() -> Result<PathBuf, Failure> {
    session_path().ok_or_else(|| {
        Failure::usage_hint(
            "no directory to keep the session in: none of SVC_CONFIG_DIR, XDG_CONFIG_HOME, HOME is set",
            "set SVC_CONFIG_DIR to a directory (the session goes to $SVC_CONFIG_DIR/svc/session.json)",
        )
    })
}

pub const APP_HINT: &str = "pages and projects take an API key: pass --api-key KEY, set SVC_API_KEY or put api_key in your profile (`svc emulator` prints one as api_key); a session from `svc login` does not serve the application host";
pub const DATA_HINT: &str = "pass the resource's token with --token (SVC_TOKEN, or resource_tokens in your profile) or an API key with --api-key (SVC_API_KEY), or sign in with `svc login`";
pub const TOOLS_HINT: &str = "pass the tools token with --tools-token (SVC_TOOLS_TOKEN, or tools_token in your profile; `svc emulator` prints it as resource_tokens.__svc_app__) or an API key with --api-key (SVC_API_KEY), or sign in with `svc login`";
pub const PROJECT_HINT: &str = "workflows take an API key: pass --api-key KEY (SVC_API_KEY, or api_key in your profile; `svc emulator` prints one as api_key), or sign in with `svc login`";
pub const SESSION_HINT: &str = "the proxy takes the session of `svc login`: sign in (again) with `svc login --email EMAIL --password-stdin`";
const INSECURE_HINT: &str = "use an https:// base URL, or pass --allow-insecure-http (SVC_ALLOW_INSECURE_HTTP=1, or allow_insecure_http in your profile) on a network you trust";

/// Whether a connection of the client may use TLS: a base URL that is `https://`, or a proxy
/// (`ALL_PROXY`, `HTTP_PROXY`, `HTTPS_PROXY`, as the transport reads them from `env`) reached
/// over `https://`. A host without a base URL is never sent to: a command that needs it stops
/// before (`check_setup`).
fn may_use_tls(
    api_base_url: Option<&str>,
    app_base_url: Option<&str>,
    env: impl Fn(&str) -> Option<String>,
) -> bool {
    let https = |url: &str| {
        url.trim_start()
            .get(..8)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"))
    };
    let base = [api_base_url, app_base_url].into_iter().flatten();
    let proxies = [
        "ALL_PROXY",
        "all_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
    ];
    base.into_iter().any(https)
        || proxies
            .into_iter()
            .any(|name| env(name).is_some_and(|v| https(&v)))
}

/// The settings of this command: flags, the process environment, the profile. Warnings about
/// the config file go to stderr.
pub fn settings(global: &Global) -> Result<Settings, Failure> {
    let settings = Settings::resolve(global, &settings::process_env, config_dir())?;
    for warning in &settings.warnings {
        eprintln!("warning: {}", output::for_terminal(warning));
    }
    Ok(settings)
}

/// A client for a command that needs `access`, with the saved session (when there is a config
/// directory) in a file token store.
pub fn client(global: &Global, access: Access<'_>) -> Result<Client, Failure> {
    let settings = settings(global)?;
    check_setup(&settings, access)?;
    remember_secrets(&settings);

    let api_key = settings.api_key.as_ref().map(|k| k.value.as_str());
    let store = match access {
        Access::App { .. } => None,
        _ => session_path().map(|path| Arc::new(FileTokenStore::new(path))),
    };
    if let Some(Ok(Some(stored))) = store.as_ref().map(|s| s.get(SVC_AUTH_KEY)) {
        crate::verbose::session_secrets(&stored);
    }
    let signed_in = || -> Result<bool, Failure> {
        match &store {
            Some(store) => Ok(store
                .get(SVC_AUTH_KEY)
                .map_err(Failure::session_store)?
                .is_some()),
            None => Ok(false),
        }
    };
    // Users and teams take the tools token, or the profile's token for that resource (a
    // profile's `token`, like SVC_TOKEN, is for records, SQL and reload only).
    let tools_token = settings.tools_token.as_ref().or_else(|| {
        settings
            .resource_tokens
            .iter()
            .find(|(resource, _)| resource == TOOLS_RESOURCE)
            .map(|(_, token)| token)
    });
    match access {
        Access::App { .. } if api_key.is_none() => {
            return Err(Failure::usage_hint(
                "no credential for the application host: pages and projects need an API key, and none was given",
                APP_HINT,
            ));
        }
        Access::Resource(resource)
            if settings.token.is_none()
                && settings.profile_token_for(resource).is_none()
                && api_key.is_none()
                && !signed_in()? =>
        {
            return Err(Failure::usage_hint(
                format!(
                    "no credential for resource {resource:?}: no token, no API key and no session, so nothing was sent"
                ),
                DATA_HINT,
            ));
        }
        Access::Tools if tools_token.is_none() && api_key.is_none() && !signed_in()? => {
            return Err(Failure::usage_hint(
                "no credential for users and teams: no tools token, no API key and no session, so nothing was sent",
                TOOLS_HINT,
            ));
        }
        Access::Project if api_key.is_none() && !signed_in()? => {
            return Err(Failure::usage_hint(
                "no credential for the project's workflows: no API key and no session, so nothing was sent (a resource's token does not serve them)",
                PROJECT_HINT,
            ));
        }
        Access::Session if !signed_in()? => {
            return Err(Failure::usage_hint(
                "not signed in: the proxy sends requests for a signed-in user, and there is no session",
                "sign in first with `svc login --email EMAIL --password-stdin` (an API key or token does not serve the proxy)",
            ));
        }
        _ => {}
    }

    // Every setting is resolved here, so the SDK's own env map and defaults are not used.
    let mut builder = Client::builder()
        .environment(settings.environment.value.as_str())
        .draft(settings.draft.value)
        .allow_insecure_http(settings.allow_insecure_http.value)
        // The machine's own root certificates too, as curl trusts them: behind a proxy that
        // inspects TLS with a company CA installed on the machine, svc connects like a browser.
        // Read only when a connection may use TLS: reading them is three quarters of the work
        // of a command sent to `svc emulator` over http:// (18M of 25M instructions).
        .tls_native_roots(may_use_tls(
            settings.api_base_url.as_ref().map(|u| u.value.as_str()),
            settings.app_base_url.as_ref().map(|u| u.value.as_str()),
            |name| std::env::var(name).ok(),
        ));
    if let Some(p) = &settings.project {
        builder = builder.project(p.value.as_str());
    }
    if let Some(u) = &settings.api_base_url {
        builder = builder.api_base_url(u.value.as_str());
    }
    if let Some(u) = &settings.app_base_url {
        builder = builder.app_base_url(u.value.as_str());
    }
    if let Some(k) = api_key {
        builder = builder.api_key(k);
    }
    for (resource, token) in &settings.resource_tokens {
        builder = builder.resource_token(resource.as_str(), token.value.as_str());
    }
    if let Access::Resource(resource) = access
        && let Some(token) = settings.profile_token_for(resource)
    {
        builder = builder.resource_token(resource, token.value.as_str());
    }
    if let Some(t) = tools_token {
        builder = builder.tools_token(t.value.as_str());
    }
    if let Some(store) = store {
        builder = builder.shared_token_store(store);
    }
    if let Some(ca) = &settings.ca_cert {
        let pem = std::fs::read(&ca.value).map_err(|e| {
            Failure::usage_hint(
                format!(
                    "cannot read the CA certificate {} (from {}): {e}",
                    ca.value.display(),
                    ca.source
                ),
                "--ca-cert FILE (SVC_CA_CERT, ca_cert in a profile) takes a PEM file, such as the one `svc emulator --tls` prints as tls_ca_pem",
            )
        })?;
        builder = builder.add_root_certificate_pem(pem);
    }
    builder.build().map_err(|e| build_failure(e, &settings))
}

/// Keeps every credential of `settings` out of the `-v` output.
fn remember_secrets(settings: &Settings) {
    let secrets = [&settings.api_key, &settings.token, &settings.tools_token]
        .into_iter()
        .flatten()
        .chain(settings.resource_tokens.iter().map(|(_, token)| token));
    for secret in secrets {
        crate::verbose::secret(&secret.value);
    }
}

/// The token given by `--token` or `SVC_TOKEN`, sent with each call of records, SQL and reload
/// (a profile's tokens are the client's, see [`client`]).
pub fn token(global: &Global) -> Option<String> {
    let from_env = || settings::process_env("SVC_TOKEN").filter(|t| !t.is_empty());
    match global.token.as_deref().filter(|t| !t.is_empty()) {
        Some(token) => Some(token.to_owned()),
        None => from_env(),
    }
}

/// Stops before anything is sent when the command lacks the project or a base URL, and says
/// every way to give them. The base URLs have no usable default: the service is wherever the
/// user says.
fn check_setup(settings: &Settings, access: Access<'_>) -> Result<(), Failure> {
    let needs_project = !matches!(
        access,
        Access::App {
            needs_project: false
        }
    );
    let (needs_data_host, needs_app_host) = match access {
        Access::App { .. } => (false, true),
        Access::Resource(_) | Access::Tools | Access::Project | Access::Account => (true, false),
        // The proxy is on the application host; a session refresh goes to the data host.
        Access::Session => (true, true),
    };
    struct Missing {
        what: &'static str,
        flag: &'static str,
        env: &'static str,
        key: &'static str,
    }
    let mut missing = Vec::new();
    if needs_project && settings.project.is_none() {
        missing.push(Missing {
            what: "no project",
            flag: "--project NAME",
            env: "SVC_PROJECT",
            key: "project",
        });
    }
    if needs_data_host && settings.api_base_url.is_none() {
        missing.push(Missing {
            what: "no URL for the data host",
            flag: "--api-base-url URL",
            env: "SVC_API_BASE_URL",
            key: "api_base_url",
        });
    }
    if needs_app_host && settings.app_base_url.is_none() {
        missing.push(Missing {
            what: "no URL for the application host",
            flag: "--app-base-url URL",
            env: "SVC_APP_BASE_URL",
            key: "app_base_url",
        });
    }
    if missing.is_empty() {
        return Ok(());
    }
    let list = |part: fn(&Missing) -> &'static str, separator: &str| -> String {
        missing.iter().map(part).collect::<Vec<_>>().join(separator)
    };
    let message = format!(
        "not configured: {} (none from a flag, the environment or a profile), so nothing was sent",
        list(|m| m.what, " and ")
    );
    let file = settings.config_file.as_ref().map_or_else(
        || "a config file named by SVC_CONFIG".to_owned(),
        |l| l.path.display().to_string(),
    );
    let profile = match &settings.profile {
        Some(p) => format!("to the profile {:?} in {file}", p.value),
        None => format!("to a profile in {file} (chosen with --profile NAME, or default_profile)"),
    };
    let emulator = if needs_data_host || needs_app_host {
        "; `svc emulator` starts a local service and prints these values"
    } else {
        ""
    };
    let hint = format!(
        "pass {}, or set {}, or add {} {profile}; `svc config` shows every setting and where it comes from{emulator}",
        list(|m| m.flag, " "),
        list(|m| m.env, " and "),
        list(|m| m.key, " and "),
    );
    Err(Failure::usage_hint(message, hint))
}

/// A client that cannot be built, said with the CLI's names: which setting, from where, and the
/// flag that changes it (the SDK's own text names its builder methods).
fn build_failure(e: svc_api::Error, settings: &Settings) -> Failure {
    let svc_api::Error::InvalidInput(invalid) = &e else {
        return e.into();
    };
    let message = invalid.message();
    let urls = [
        ("api_base_url ", &settings.api_base_url),
        ("app_base_url ", &settings.app_base_url),
    ];
    for (name, setting) in urls {
        if let (Some(rest), Some(setting)) = (message.strip_prefix(name), setting) {
            let text = exit::without_sdk_advice(rest);
            let name = name.trim_end();
            return if message.contains("allow_insecure_http") {
                Failure::usage_hint(
                    format!("{name} {text} (from {})", setting.source),
                    INSECURE_HINT,
                )
            } else {
                Failure::usage_hint(
                    format!("{name} {text} (from {})", setting.source),
                    "give a URL such as https://api.example.com (`svc config` shows every setting and where it comes from)",
                )
            };
        }
    }
    if let Some(ca) = &settings.ca_cert
        && (message.contains("certificate") || message.contains("PEM"))
    {
        return Failure::usage_hint(
            format!(
                "cannot use the CA certificate {} (from {}): {}",
                ca.value.display(),
                ca.source,
                exit::without_sdk_advice(message)
            ),
            "--ca-cert FILE takes a PEM file holding the root certificate (-----BEGIN CERTIFICATE-----), such as the one `svc emulator --tls` prints as tls_ca_pem",
        );
    }
    e.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_roots_are_read_only_where_tls_may_be_used() {
        let no_env = |_: &str| None;
        let local = Some("http://127.0.0.1:8080");
        assert!(!may_use_tls(local, local, no_env));
        // A host without a base URL is not sent to.
        assert!(!may_use_tls(None, local, no_env));
        assert!(!may_use_tls(local, None, no_env));
        assert!(may_use_tls(Some("https://api.example"), None, no_env));
        assert!(may_use_tls(local, Some("HTTPS://app.example"), no_env));
        assert!(may_use_tls(Some(" https://api.example"), local, no_env));
        // A proxy reached over TLS needs them too; one over plain HTTP does not.
        let proxy =
            |url: &'static str| move |name: &str| (name == "http_proxy").then(|| url.to_owned());
        assert!(may_use_tls(
            local,
            local,
            proxy("https://proxy.example:3128")
        ));
        assert!(!may_use_tls(
            local,
            local,
            proxy("http://proxy.example:3128")
        ));
    }
}
