//! The config file: named profiles of the settings the environment keys give.
//!
//! JSON, because serde_json is already what the CLI reads and writes (a TOML file would need a
//! parser the workspace does not have). The file is `$SVC_CONFIG`, else
//! `<config dir>/svc/config.json` (the config dir of the session file):
//!
//! ```json
//! {
//!   "default_profile": "local",
//!   "profiles": {
//!     "local": {"api_base_url": "http://127.0.0.1:8787", "project": "demo", "api_key": "svc_key_..."}
//!   }
//! }
//! ```
//!
//! Unknown keys are errors, so that a misspelt setting is not silently ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::exit::Failure;

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The profile used when neither `--profile` nor `SVC_PROFILE` names one.
    #[serde(default)]
    pub default_profile: Option<String>,
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

/// One profile: the settings of the flags and environment keys of the same names.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub project: Option<String>,
    pub environment: Option<String>,
    pub api_base_url: Option<String>,
    pub app_base_url: Option<String>,
    pub draft: Option<bool>,
    pub api_key: Option<String>,
    /// A token sent for any resource (as `SVC_TOKEN`) that `resource_tokens` has none for.
    pub token: Option<String>,
    pub tools_token: Option<String>,
    /// Resource name to its static token.
    #[serde(default)]
    pub resource_tokens: BTreeMap<String, String>,
    /// Relative to the file's directory.
    pub ca_cert: Option<PathBuf>,
    pub allow_insecure_http: Option<bool>,
}

impl Profile {
    fn holds_secrets(&self) -> bool {
        self.api_key.is_some()
            || self.token.is_some()
            || self.tools_token.is_some()
            || !self.resource_tokens.is_empty()
    }
}

/// Where the config file is, and whether the user named it (`SVC_CONFIG`).
#[derive(Debug, Clone)]
pub struct Location {
    pub path: PathBuf,
    /// Named by `SVC_CONFIG`: a missing file is then an error.
    pub explicit: bool,
}

/// `$SVC_CONFIG`, else `<config dir>/svc/config.json`.
pub fn location(
    lookup: &dyn Fn(&str) -> Option<String>,
    config_dir: Option<PathBuf>,
) -> Option<Location> {
    match lookup("SVC_CONFIG").filter(|v| !v.is_empty()) {
        Some(path) => Some(Location {
            path: PathBuf::from(path),
            explicit: true,
        }),
        None => config_dir.map(|dir| Location {
            path: dir.join("svc").join("config.json"),
            explicit: false,
        }),
    }
}

/// A file that was read, with what it is worth warning about.
#[derive(Debug)]
pub struct Loaded {
    pub file: ConfigFile,
    pub warnings: Vec<String>,
}

/// Reads and checks the file; `None` when it does not exist and was not named by `SVC_CONFIG`.
pub fn load(location: &Location) -> Result<Option<Loaded>, Failure> {
    let path = &location.path;
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !location.explicit => {
            return Ok(None);
        }
        Err(e) => {
            return Err(Failure::usage_hint(
                format!("cannot read the config file {}: {e}", path.display()),
                if location.explicit {
                    "SVC_CONFIG names the config file: point it at an existing file, or unset it"
                } else {
                    "fix the file's permissions, or remove it"
                },
            ));
        }
    };
    let file: ConfigFile = serde_json::from_str(&text).map_err(|e| {
        Failure::usage_hint(
            format!("the config file {} is not valid: {e}", path.display()),
            "it is JSON: {\"default_profile\": \"NAME\", \"profiles\": {\"NAME\": {\"api_base_url\": \"...\", \"project\": \"...\", ...}}}; `svc config --help` lists the keys",
        )
    })?;
    let mut warnings = Vec::new();
    if let Some(name) = &file.default_profile
        && !file.profiles.contains_key(name)
    {
        return Err(Failure::usage_hint(
            format!(
                "the config file {} names default_profile {name:?}, which it does not define",
                path.display()
            ),
            profiles_hint(&file),
        ));
    }
    let holds_secrets = file.profiles.values().any(Profile::holds_secrets);
    if let Some(warning) = permission_warning(path, holds_secrets) {
        warnings.push(warning);
    }
    Ok(Some(Loaded { file, warnings }))
}

/// "profiles in the file: a, b", or how to add one.
pub fn profiles_hint(file: &ConfigFile) -> String {
    if file.profiles.is_empty() {
        "the file defines no profile: add one under \"profiles\" (see `svc config --help`)".into()
    } else {
        let names: Vec<String> = file.profiles.keys().map(|n| format!("{n:?}")).collect();
        format!(
            "the profiles in the file are {}; pick one with --profile NAME or SVC_PROFILE",
            names.join(", ")
        )
    }
}

/// A path in a profile, relative to the file's directory unless absolute.
pub fn resolve_path(config_file: &Path, path: &Path) -> PathBuf {
    match config_file.parent() {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_owned(),
    }
}

/// On Unix: a warning when other users can read a file that holds secrets, or change a file
/// that says where credentials are sent.
#[cfg(unix)]
fn permission_warning(path: &Path, holds_secrets: bool) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
    let fix = format!("run `chmod 600 {}`", path.display());
    if mode & 0o022 != 0 {
        Some(format!(
            "the config file {} can be changed by other users (mode {mode:04o}): they could send your credentials to another server; {fix}",
            path.display()
        ))
    } else if holds_secrets && mode & 0o044 != 0 {
        Some(format!(
            "the config file {} holds secrets and can be read by other users (mode {mode:04o}); {fix}",
            path.display()
        ))
    } else {
        None
    }
}

#[cfg(not(unix))]
fn permission_warning(_path: &Path, _holds_secrets: bool) -> Option<String> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_reads_every_setting_and_refuses_unknown_keys() {
        let file: ConfigFile = serde_json::from_str(
            r#"{"default_profile": "a", "profiles": {"a": {
                "project": "demo", "environment": "staging", "api_base_url": "http://127.0.0.1:1",
                "app_base_url": "http://127.0.0.1:1/api", "draft": true, "api_key": "k",
                "token": "t", "tools_token": "tt", "resource_tokens": {"shop": "s"},
                "ca_cert": "ca.pem", "allow_insecure_http": false}}}"#,
        )
        .unwrap();
        let a = &file.profiles["a"];
        assert_eq!(a.project.as_deref(), Some("demo"));
        assert_eq!(a.resource_tokens["shop"], "s");
        assert!(a.holds_secrets());
        let typo = serde_json::from_str::<ConfigFile>(r#"{"profiles": {"a": {"api_url": "x"}}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            typo.contains("api_url") && typo.contains("api_base_url"),
            "{typo}"
        );
    }

    #[test]
    fn the_location_follows_svc_config_then_the_config_dir() {
        let none = |_: &str| None;
        let at = location(&none, Some(PathBuf::from("/cfg"))).unwrap();
        assert_eq!(at.path, PathBuf::from("/cfg/svc/config.json"));
        assert!(!at.explicit);
        let named = |k: &str| (k == "SVC_CONFIG").then(|| "/etc/svc.json".to_owned());
        let at = location(&named, Some(PathBuf::from("/cfg"))).unwrap();
        assert_eq!(at.path, PathBuf::from("/etc/svc.json"));
        assert!(at.explicit);
        assert!(location(&none, None).is_none());
        assert_eq!(
            resolve_path(Path::new("/cfg/svc/config.json"), Path::new("ca.pem")),
            PathBuf::from("/cfg/svc/ca.pem")
        );
        assert_eq!(
            resolve_path(Path::new("/cfg/svc/config.json"), Path::new("/x/ca.pem")),
            PathBuf::from("/x/ca.pem")
        );
    }
}
