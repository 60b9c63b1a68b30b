//! The connection settings in use, each with where it came from.
//!
//! Precedence, per setting: a flag, else an environment key (`VITE_SVC_*` over `SVC_*` for the
//! keys the SDK's env map has, read by its rules: an empty value is unset, draft words), else the
//! selected profile of the config file, else the default. There is no default service: the base
//! URLs have no default that could work, so a command that needs one stops and says how to give
//! it.

use std::fmt;
use std::path::PathBuf;

use svc_api::auth::parse_draft;

use crate::args::Global;
use crate::exit::Failure;
use crate::profile::{self, Location, Profile};

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A command-line flag, such as `--project`.
    Flag(&'static str),
    /// An environment key, such as `SVC_PROJECT`.
    Env(&'static str),
    /// A profile of the config file.
    Profile { name: String, file: PathBuf },
    /// The config file's `default_profile` (for the profile's own name).
    DefaultProfile(PathBuf),
    /// The built-in default.
    Default,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag(flag) => write!(f, "flag {flag}"),
            Source::Env(key) => write!(f, "env {key}"),
            Source::Profile { name, file } => write!(f, "profile {name} in {}", file.display()),
            Source::DefaultProfile(file) => write!(f, "default_profile in {}", file.display()),
            Source::Default => f.write_str("default"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    pub value: T,
    pub source: Source,
}

/// Every connection setting, resolved.
#[derive(Debug)]
pub struct Settings {
    /// Where the config file is looked for (whether or not it exists).
    pub config_file: Option<Location>,
    /// Whether that file exists and was read.
    pub config_file_found: bool,
    /// The selected profile's name.
    pub profile: Option<Setting<String>>,
    pub project: Option<Setting<String>>,
    pub environment: Setting<String>,
    pub api_base_url: Option<Setting<String>>,
    pub app_base_url: Option<Setting<String>>,
    pub draft: Setting<bool>,
    pub api_key: Option<Setting<String>>,
    pub token: Option<Setting<String>>,
    pub tools_token: Option<Setting<String>>,
    /// From the profile only: resource name to token.
    pub resource_tokens: Vec<(String, Setting<String>)>,
    pub ca_cert: Option<Setting<PathBuf>>,
    pub allow_insecure_http: Setting<bool>,
    /// To print on stderr (e.g. a config file others can read).
    pub warnings: Vec<String>,
}

/// Looks up an environment key.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment, as [`Lookup`].
pub fn process_env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

impl Settings {
    /// Resolves every setting from the flags, the environment (through `env`) and the profile
    /// of the config file in `config_dir` (or `$SVC_CONFIG`).
    pub fn resolve(
        global: &Global,
        env: Lookup<'_>,
        config_dir: Option<PathBuf>,
    ) -> Result<Settings, Failure> {
        let location = profile::location(env, config_dir);
        let loaded = match &location {
            Some(location) => profile::load(location)?,
            None => None,
        };
        let config_file_found = loaded.is_some();
        let mut warnings = Vec::new();

        let asked = flag("--profile", &global.profile).or_else(|| from_env(env, &["SVC_PROFILE"]));
        let (profile_name, chosen) = match (&loaded, &location) {
            (Some(loaded), Some(location)) => {
                warnings.extend(loaded.warnings.iter().cloned());
                let name = asked.clone().or_else(|| {
                    loaded.file.default_profile.clone().map(|name| Setting {
                        value: name,
                        source: Source::DefaultProfile(location.path.clone()),
                    })
                });
                match name {
                    Some(name) => match loaded.file.profiles.get(&name.value) {
                        Some(profile) => (Some(name), Some(profile.clone())),
                        None => {
                            return Err(Failure::usage_hint(
                                format!(
                                    "no profile {:?} in the config file {} (asked by {})",
                                    name.value,
                                    location.path.display(),
                                    name.source
                                ),
                                profile::profiles_hint(&loaded.file),
                            ));
                        }
                    },
                    None => (None, None),
                }
            }
            _ => {
                if let Some(name) = &asked {
                    let place = match &location {
                        Some(location) => format!("there is no config file at {}", location.path.display()),
                        None => "there is no config file: none of SVC_CONFIG, SVC_CONFIG_DIR, XDG_CONFIG_HOME, HOME is set".to_owned(),
                    };
                    return Err(Failure::usage_hint(
                        format!(
                            "profile {:?} asked by {}, but {place}",
                            name.value, name.source
                        ),
                        "create the file with the profile (`svc config --help` shows the format), or set SVC_CONFIG to the file",
                    ));
                }
                (None, None)
            }
        };

        let file = location
            .as_ref()
            .map(|l| l.path.clone())
            .unwrap_or_default();
        let from_profile = |field: fn(&Profile) -> Option<&String>| -> Option<Setting<String>> {
            let (name, profile) = (profile_name.as_ref()?, chosen.as_ref()?);
            field(profile)
                .filter(|v| !v.is_empty())
                .map(|value| Setting {
                    value: value.clone(),
                    source: Source::Profile {
                        name: name.value.clone(),
                        file: file.clone(),
                    },
                })
        };
        let profile_source = || Source::Profile {
            name: profile_name
                .as_ref()
                .map(|n| n.value.clone())
                .unwrap_or_default(),
            file: file.clone(),
        };
        let pick = |flag_value: Option<Setting<String>>,
                    keys: &[&'static str],
                    field: fn(&Profile) -> Option<&String>| {
            flag_value
                .or_else(|| from_env(env, keys))
                .or_else(|| from_profile(field))
        };

        let project = pick(
            flag("--project", &global.project),
            &["VITE_SVC_PROJECT", "SVC_PROJECT"],
            |p| p.project.as_ref(),
        );
        let environment = pick(
            flag("--environment", &global.environment),
            &["VITE_SVC_ENVIRONMENT", "SVC_ENVIRONMENT"],
            |p| p.environment.as_ref(),
        )
        .unwrap_or_else(|| Setting {
            value: svc_api::auth::config::DEFAULT_ENVIRONMENT.to_owned(),
            source: Source::Default,
        });
        let api_base_url = pick(
            flag("--api-base-url", &global.api_base_url),
            &["VITE_SVC_API_BASE_URL", "SVC_API_BASE_URL"],
            |p| p.api_base_url.as_ref(),
        );
        let app_base_url = pick(
            flag("--app-base-url", &global.app_base_url),
            &["VITE_SVC_APP_BASE_URL", "SVC_APP_BASE_URL"],
            |p| p.app_base_url.as_ref(),
        );
        let api_key = pick(flag("--api-key", &global.api_key), &["SVC_API_KEY"], |p| {
            p.api_key.as_ref()
        });
        let token = pick(flag("--token", &global.token), &["SVC_TOKEN"], |p| {
            p.token.as_ref()
        });
        let tools_token = pick(
            flag("--tools-token", &global.tools_token),
            &["SVC_TOOLS_TOKEN"],
            |p| p.tools_token.as_ref(),
        );

        let draft = if global.draft {
            Setting {
                value: true,
                source: Source::Flag("--draft"),
            }
        } else if let Some(Setting { value, source }) =
            from_env(env, &["VITE_SVC_DRAFT", "SVC_DRAFT"])
        {
            Setting {
                // A non-empty value always parses.
                value: parse_draft(&value).unwrap_or(true),
                source,
            }
        } else if let Some(draft) = chosen.as_ref().and_then(|p| p.draft) {
            Setting {
                value: draft,
                source: profile_source(),
            }
        } else {
            Setting {
                value: false,
                source: Source::Default,
            }
        };

        let allow_insecure_http = if global.allow_insecure_http {
            Setting {
                value: true,
                source: Source::Flag("--allow-insecure-http"),
            }
        } else if let Some(Setting { value, source }) = from_env(env, &["SVC_ALLOW_INSECURE_HTTP"])
        {
            Setting {
                value: boolish("SVC_ALLOW_INSECURE_HTTP", &value)?,
                source,
            }
        } else if let Some(allow) = chosen.as_ref().and_then(|p| p.allow_insecure_http) {
            Setting {
                value: allow,
                source: profile_source(),
            }
        } else {
            Setting {
                value: false,
                source: Source::Default,
            }
        };

        let ca_cert = match &global.ca_cert {
            Some(path) if !path.as_os_str().is_empty() => Some(Setting {
                value: path.clone(),
                source: Source::Flag("--ca-cert"),
            }),
            _ => from_env(env, &["SVC_CA_CERT"])
                .map(|s| Setting {
                    value: PathBuf::from(s.value),
                    source: s.source,
                })
                .or_else(|| {
                    let path = chosen.as_ref()?.ca_cert.as_ref()?;
                    (!path.as_os_str().is_empty()).then(|| Setting {
                        value: profile::resolve_path(&file, path),
                        source: profile_source(),
                    })
                }),
        };

        let resource_tokens = chosen
            .as_ref()
            .map(|p| {
                p.resource_tokens
                    .iter()
                    .filter(|(_, token)| !token.is_empty())
                    .map(|(resource, token)| {
                        (
                            resource.clone(),
                            Setting {
                                value: token.clone(),
                                source: profile_source(),
                            },
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();

        Ok(Settings {
            config_file: location,
            config_file_found,
            profile: profile_name,
            project,
            environment,
            api_base_url,
            app_base_url,
            draft,
            api_key,
            token,
            tools_token,
            resource_tokens,
            ca_cert,
            allow_insecure_http,
            warnings,
        })
    }

    /// The profile's token for `resource`: its entry in `resource_tokens`, else its `token`.
    /// `None` when a flag or environment key gives the token (it is sent for the call and wins).
    pub fn profile_token_for(&self, resource: &str) -> Option<&Setting<String>> {
        let from_profile = |s: &&Setting<String>| matches!(s.source, Source::Profile { .. });
        if self.token.as_ref().is_some_and(|t| !from_profile(&t)) {
            return None;
        }
        self.resource_tokens
            .iter()
            .find(|(name, _)| name == resource)
            .map(|(_, token)| token)
            .or(self.token.as_ref())
    }
}

/// A flag's value, an empty one counted as unset (as for the environment keys).
fn flag(name: &'static str, value: &Option<String>) -> Option<Setting<String>> {
    value.as_deref().filter(|v| !v.is_empty()).map(|v| Setting {
        value: v.to_owned(),
        source: Source::Flag(name),
    })
}

/// The first of `keys` with a non-empty value.
fn from_env(env: Lookup<'_>, keys: &[&'static str]) -> Option<Setting<String>> {
    keys.iter().find_map(|key| {
        env(key).filter(|v| !v.is_empty()).map(|value| Setting {
            value,
            source: Source::Env(key),
        })
    })
}

/// A yes/no environment value, read as clap reads boolean values.
fn boolish(key: &str, value: &str) -> Result<bool, Failure> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "y" | "t" | "on" => Ok(true),
        "0" | "false" | "no" | "n" | "f" | "off" => Ok(false),
        _ => Err(Failure::usage_hint(
            format!("{key}={value:?} is neither yes nor no"),
            format!("set {key} to 1, true, yes or on (or 0, false, no, off), or unset it"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use clap::Parser;
    use svc_api::auth::EnvConfig;

    use super::*;
    use crate::args::Cli;

    fn global(args: &[&str]) -> Global {
        let mut argv = vec!["svc"];
        argv.extend_from_slice(args);
        argv.push("whoami");
        Cli::parse_from(argv).global
    }

    fn resolve(args: &[&str], env: &[(&str, &str)], dir: Option<&Path>) -> Settings {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::resolve(
            &global(args),
            &|key| env.get(key).cloned(),
            dir.map(Path::to_owned),
        )
        .unwrap()
    }

    use std::path::Path;

    #[test]
    fn the_environment_is_read_as_the_sdk_reads_it() {
        let pairs = [
            ("SVC_PROJECT", "plain"),
            ("VITE_SVC_PROJECT", "vite"),
            ("VITE_SVC_ENVIRONMENT", ""),
            ("SVC_ENVIRONMENT", "staging"),
            ("SVC_DRAFT", " Off "),
            ("VITE_SVC_API_BASE_URL", "http://127.0.0.1:1"),
            ("SVC_APP_BASE_URL", "http://127.0.0.1:2/api"),
        ];
        let sdk = EnvConfig::from_map(
            &pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<HashMap<_, _>>(),
        );
        let ours = resolve(&[], &pairs, None);
        assert_eq!(ours.project.map(|s| s.value), sdk.project);
        assert_eq!(Some(ours.environment.value), sdk.environment);
        assert_eq!(Some(ours.draft.value), sdk.draft);
        assert_eq!(ours.api_base_url.map(|s| s.value), sdk.api_base_url);
        assert_eq!(ours.app_base_url.map(|s| s.value), sdk.app_base_url);
    }

    #[test]
    fn flags_win_over_the_environment_which_wins_over_the_profile() {
        let dir = std::env::temp_dir().join(format!("svc-settings-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("svc")).unwrap();
        std::fs::write(
            dir.join("svc").join("config.json"),
            r#"{"default_profile": "a", "profiles": {
                "a": {"project": "from-a", "environment": "env-a", "api_key": "key-a", "draft": true,
                      "token": "tok-a", "resource_tokens": {"shop": "shop-a"}, "ca_cert": "ca.pem"},
                "b": {"project": "from-b"}}}"#,
        )
        .unwrap();
        let s = resolve(
            &["--project", "flag"],
            &[("SVC_PROJECT", "env"), ("SVC_ENVIRONMENT", "env-env")],
            Some(&dir),
        );
        assert_eq!(
            s.project.as_ref().unwrap().source,
            Source::Flag("--project")
        );
        let environment = &s.environment;
        assert_eq!(environment.value, "env-env");
        assert_eq!(environment.source, Source::Env("SVC_ENVIRONMENT"));
        let key = s.api_key.as_ref().unwrap();
        assert_eq!(key.value, "key-a");
        assert!(
            key.source.to_string().starts_with("profile a in "),
            "{}",
            key.source
        );
        assert!(s.draft.value);
        assert_eq!(
            s.ca_cert.as_ref().unwrap().value,
            dir.join("svc").join("ca.pem")
        );
        assert_eq!(
            s.profile.as_ref().unwrap().source,
            Source::DefaultProfile(dir.join("svc").join("config.json"))
        );
        // The profile's token for a resource: its own entry, else `token`; none once the
        // environment gives one.
        assert_eq!(s.profile_token_for("shop").unwrap().value, "shop-a");
        assert_eq!(s.profile_token_for("other").unwrap().value, "tok-a");
        let s = resolve(&[], &[("SVC_TOKEN", "env-token")], Some(&dir));
        assert!(s.profile_token_for("shop").is_none());
        assert_eq!(s.token.unwrap().source, Source::Env("SVC_TOKEN"));
        // SVC_PROFILE picks another one, --profile wins over it.
        let s = resolve(&[], &[("SVC_PROFILE", "b")], Some(&dir));
        assert_eq!(s.project.unwrap().value, "from-b");
        assert!(s.api_key.is_none());
        let s = resolve(&["--profile", "a"], &[("SVC_PROFILE", "b")], Some(&dir));
        assert_eq!(s.project.unwrap().value, "from-a");
        // A missing profile names the ones there are.
        let err = Settings::resolve(&global(&["--profile", "c"]), &|_| None, Some(dir.clone()))
            .unwrap_err();
        assert!(err.to_string().contains("\"c\""), "{err}");
        assert!(
            err.hint().unwrap().contains("\"a\", \"b\""),
            "{:?}",
            err.hint()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn insecure_http_from_the_environment_is_a_yes_or_a_no() {
        assert!(boolish("K", " Yes ").unwrap());
        assert!(!boolish("K", "0").unwrap());
        let err = boolish("K", "maybe").unwrap_err();
        assert_eq!(err.code(), crate::exit::USAGE);
    }
}
