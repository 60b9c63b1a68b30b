//! Building a client from the global options, the environment and the saved session.
//!
//! Precedence: a flag wins over the environment, which wins over the defaults. The environment is
//! read as docs/client-behaviour.md section 1 says (`VITE_SVC_*` over `SVC_*`, empty means unset,
//! draft words) through [`EnvConfig::from_process_env`]. Credentials have no `VITE_` keys (they
//! must never end up in a front-end bundle): `SVC_API_KEY`, `SVC_TOKEN` and `SVC_TOOLS_TOKEN`, read
//! by clap.
//!
//! The session of `svc login` lives in a [`FileTokenStore`] at `<config dir>/svc/session.json`,
//! where the config dir is `$SVC_CONFIG_DIR`, else `$XDG_CONFIG_HOME`, else `$HOME/.config`
//! (`%APPDATA%` on Windows when there is no `HOME`).

use std::path::PathBuf;
use std::sync::Arc;

use svc_api::Client;
use svc_api::auth::{EnvConfig, FileTokenStore, SVC_AUTH_KEY, TokenStore};

use crate::args::Global;
use crate::exit::Failure;

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

/// A flag's value, with an empty value counted as unset (as for the env keys).
fn given(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

pub const APP_HINT: &str = "pages and projects take an API key: pass --api-key KEY or set SVC_API_KEY (`svc emulator` prints one as api_key); a session from `svc login` does not serve the application host";
pub const DATA_HINT: &str = "pass the resource's token with --token (SVC_TOKEN) or an API key with --api-key (SVC_API_KEY), or sign in with `svc login`";
pub const TOOLS_HINT: &str = "pass the tools token with --tools-token (SVC_TOOLS_TOKEN; `svc emulator` prints it as resource_tokens.__svc_app__) or an API key with --api-key (SVC_API_KEY), or sign in with `svc login`";
pub const SESSION_HINT: &str = "the proxy takes the session of `svc login`: sign in (again) with `svc login --email EMAIL --password-stdin`";
const PROJECT_HINT: &str =
    "pass --project NAME or set SVC_PROJECT (`svc emulator` prints the project as project)";

/// A client for a command that needs `access`, with the saved session (when there is a config
/// directory) in a file token store.
pub fn client(global: &Global, access: Access<'_>) -> Result<Client, Failure> {
    let env = EnvConfig::from_process_env();
    let needs_project = !matches!(
        access,
        Access::App {
            needs_project: false
        }
    );
    if needs_project && given(&global.project).is_none() && env.project.is_none() {
        return Err(Failure::usage_hint(
            "no project: this command works on a project, and none was given",
            PROJECT_HINT,
        ));
    }

    let api_key = given(&global.api_key);
    let store = match access {
        Access::App { .. } => None,
        _ => session_path().map(|path| Arc::new(FileTokenStore::new(path))),
    };
    let signed_in = || -> Result<bool, Failure> {
        match &store {
            Some(store) => Ok(store
                .get(SVC_AUTH_KEY)
                .map_err(Failure::session_store)?
                .is_some()),
            None => Ok(false),
        }
    };
    match access {
        Access::App { .. } if api_key.is_none() => {
            return Err(Failure::usage_hint(
                "no credential for the application host: pages and projects need an API key, and none was given",
                APP_HINT,
            ));
        }
        Access::Resource(resource)
            if given(&global.token).is_none() && api_key.is_none() && !signed_in()? =>
        {
            return Err(Failure::usage_hint(
                format!(
                    "no credential for resource {resource:?}: no token, no API key and no session, so nothing was sent"
                ),
                DATA_HINT,
            ));
        }
        Access::Tools
            if given(&global.tools_token).is_none() && api_key.is_none() && !signed_in()? =>
        {
            return Err(Failure::usage_hint(
                "no credential for users and teams: no tools token, no API key and no session, so nothing was sent",
                TOOLS_HINT,
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

    let mut builder = Client::builder()
        .env_config(env)
        .allow_insecure_http(global.allow_insecure_http);
    if global.draft {
        builder = builder.draft(true);
    }
    if let Some(p) = given(&global.project) {
        builder = builder.project(p);
    }
    if let Some(e) = given(&global.environment) {
        builder = builder.environment(e);
    }
    if let Some(u) = given(&global.api_base_url) {
        builder = builder.api_base_url(u);
    }
    if let Some(u) = given(&global.app_base_url) {
        builder = builder.app_base_url(u);
    }
    if let Some(k) = api_key {
        builder = builder.api_key(k);
    }
    if let Some(t) = given(&global.tools_token) {
        builder = builder.tools_token(t);
    }
    if let Some(store) = store {
        builder = builder.shared_token_store(store);
    }
    if let Some(path) = &global.ca_cert {
        let pem = std::fs::read(path).map_err(|e| {
            Failure::Usage(format!("cannot read --ca-cert {}: {e}", path.display()))
        })?;
        builder = builder.add_root_certificate_pem(pem);
    }
    Ok(builder.build()?)
}

/// The `--token` flag, for the per-call token of records, SQL and reload.
pub fn token(global: &Global) -> Option<&str> {
    given(&global.token)
}
