//! Client configuration from an explicit map of environment variables.
//!
//! The rules are the JavaScript client's: keys `VITE_SVC_*` win over `SVC_*`; explicit options
//! win over the map, the map over defaults; an empty value counts as unset; draft strings `false`,
//! `0`, `no`, `off`, `null`, `undefined` (any case, surrounding white space ignored) mean false and
//! any other value means true. There is no key for credentials. The process environment is read
//! only when asked with [`EnvConfig::from_process_env`].

use std::collections::HashMap;

/// Default data host, used when neither an option nor the env map sets one.
pub const DEFAULT_API_BASE_URL: &str = "https://api.svc.example";
/// Default application host (it ends in `/api`).
pub const DEFAULT_APP_BASE_URL: &str = "https://app.svc.example/api";
/// Default environment: the published production environment.
pub const DEFAULT_ENVIRONMENT: &str = "prod";

/// Settings read from an env map. Every field is `None` when its keys are absent or empty.
///
/// ```
/// use std::collections::HashMap;
/// use svc_auth::EnvConfig;
///
/// let env = HashMap::from([
///     ("SVC_PROJECT".to_string(), "shop".to_string()),
///     ("VITE_SVC_PROJECT".to_string(), "shop-web".to_string()),
///     ("SVC_DRAFT".to_string(), " Off ".to_string()),
/// ]);
/// let cfg = EnvConfig::from_map(&env);
/// assert_eq!(cfg.project.as_deref(), Some("shop-web")); // VITE_ wins
/// assert_eq!(cfg.draft, Some(false));
/// assert_eq!(cfg.environment, None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnvConfig {
    /// `VITE_SVC_PROJECT` / `SVC_PROJECT`.
    pub project: Option<String>,
    /// `VITE_SVC_ENVIRONMENT` / `SVC_ENVIRONMENT`.
    pub environment: Option<String>,
    /// `VITE_SVC_DRAFT` / `SVC_DRAFT`, parsed by [`parse_draft`].
    pub draft: Option<bool>,
    /// `VITE_SVC_API_BASE_URL` / `SVC_API_BASE_URL`.
    pub api_base_url: Option<String>,
    /// `VITE_SVC_APP_BASE_URL` / `SVC_APP_BASE_URL`.
    pub app_base_url: Option<String>,
}

impl EnvConfig {
    /// Reads the settings from an explicit map (any map of strings).
    pub fn from_map<K, V, S>(env: &HashMap<K, V, S>) -> Self
    where
        K: std::borrow::Borrow<str> + std::hash::Hash + Eq,
        V: AsRef<str>,
        S: std::hash::BuildHasher,
    {
        Self::from_lookup(|key| env.get(key).map(|v| v.as_ref().to_owned()))
    }

    /// Reads the settings from the process environment. Call it only when that is what you mean:
    /// nothing in this SDK reads the process environment on its own.
    pub fn from_process_env() -> Self {
        Self::from_lookup(|key| std::env::var(key).ok())
    }

    /// Reads the settings through any lookup function.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let get = |name: &str| -> Option<String> {
            [format!("VITE_SVC_{name}"), format!("SVC_{name}")]
                .iter()
                .find_map(|key| lookup(key).filter(|v| !v.is_empty()))
        };
        Self {
            project: get("PROJECT"),
            environment: get("ENVIRONMENT"),
            draft: get("DRAFT").and_then(|v| parse_draft(&v)),
            api_base_url: get("API_BASE_URL"),
            app_base_url: get("APP_BASE_URL"),
        }
    }
}

/// Parses a draft string: `None` when empty (unset); `false` for `false`, `0`, `no`, `off`,
/// `null`, `undefined` in any case with surrounding white space ignored; `true` for anything else.
///
/// ```
/// use svc_auth::parse_draft;
/// assert_eq!(parse_draft(""), None);
/// assert_eq!(parse_draft("  NULL "), Some(false));
/// assert_eq!(parse_draft("yes"), Some(true));
/// assert_eq!(parse_draft("2"), Some(true));
/// ```
pub fn parse_draft(value: &str) -> Option<bool> {
    if value.is_empty() {
        return None;
    }
    let folded = value.trim().to_ascii_lowercase();
    Some(!matches!(
        folded.as_str(),
        "false" | "0" | "no" | "off" | "null" | "undefined"
    ))
}

/// Removes trailing slashes from a base URL, as the JavaScript client does.
///
/// ```
/// assert_eq!(svc_auth::config::trim_base_url("http://h/api//"), "http://h/api");
/// ```
pub fn trim_base_url(url: &str) -> &str {
    url.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_key_with_both_prefixes() {
        let keys = ["PROJECT", "ENVIRONMENT", "API_BASE_URL", "APP_BASE_URL"];
        for key in keys {
            let plain = EnvConfig::from_map(&map(&[(&format!("SVC_{key}"), "plain")]));
            let both = EnvConfig::from_map(&map(&[
                (&format!("SVC_{key}"), "plain"),
                (&format!("VITE_SVC_{key}"), "vite"),
            ]));
            let pick = |c: &EnvConfig| match key {
                "PROJECT" => c.project.clone(),
                "ENVIRONMENT" => c.environment.clone(),
                "API_BASE_URL" => c.api_base_url.clone(),
                _ => c.app_base_url.clone(),
            };
            assert_eq!(pick(&plain).as_deref(), Some("plain"), "{key}");
            assert_eq!(pick(&both).as_deref(), Some("vite"), "{key}");
        }
    }

    #[test]
    fn empty_values_are_unset_and_fall_back() {
        let c = EnvConfig::from_map(&map(&[("VITE_SVC_PROJECT", ""), ("SVC_PROJECT", "p")]));
        assert_eq!(c.project.as_deref(), Some("p"));
        let c = EnvConfig::from_map(&map(&[("SVC_DRAFT", "")]));
        assert_eq!(c.draft, None);
    }

    #[test]
    fn draft_words() {
        for word in ["false", "0", "no", "off", "null", "undefined"] {
            for variant in [
                word.to_string(),
                word.to_uppercase(),
                format!("  {word}\t"),
                format!("\n{}", capitalize(word)),
            ] {
                assert_eq!(parse_draft(&variant), Some(false), "{variant:?}");
            }
        }
        for truthy in ["true", "1", "yes", "on", "nope", " ", "draft", "FALSE!"] {
            assert_eq!(parse_draft(truthy), Some(true), "{truthy:?}");
        }
    }

    /// docs/client-behaviour.md section 1 (environment keys), key by key: both prefixes, `VITE_`
    /// first, empty means unset.
    #[test]
    fn env_table() {
        type Pick = fn(&EnvConfig) -> Option<String>;
        let fields: [(&str, Pick); 5] = [
            ("PROJECT", |c| c.project.clone()),
            ("ENVIRONMENT", |c| c.environment.clone()),
            ("API_BASE_URL", |c| c.api_base_url.clone()),
            ("APP_BASE_URL", |c| c.app_base_url.clone()),
            ("DRAFT", |c| c.draft.map(|d| d.to_string())),
        ];
        // (VITE_SVC_* value, SVC_* value, expected), with "-" for an absent key.
        let cases = [
            ("-", "-", None),
            ("-", "", None),
            ("", "-", None),
            ("", "", None),
            ("vite", "-", Some("vite")),
            ("-", "plain", Some("plain")),
            ("vite", "plain", Some("vite")),
            ("", "plain", Some("plain")),
            ("vite", "", Some("vite")),
        ];
        for (key, pick) in fields {
            for (vite, plain, expected) in cases {
                let mut env = HashMap::new();
                if vite != "-" {
                    env.insert(format!("VITE_SVC_{key}"), vite.to_string());
                }
                if plain != "-" {
                    env.insert(format!("SVC_{key}"), plain.to_string());
                }
                let got = pick(&EnvConfig::from_map(&env));
                // Draft values are parsed: "vite" and "plain" are not false words.
                let expected = match (key, expected) {
                    ("DRAFT", Some(_)) => Some("true".to_string()),
                    (_, e) => e.map(str::to_string),
                };
                assert_eq!(got, expected, "{key}: VITE={vite:?} SVC={plain:?}");
            }
        }
        // The VITE_ draft wins even when it says false.
        let c = EnvConfig::from_map(&map(&[("VITE_SVC_DRAFT", "Off"), ("SVC_DRAFT", "1")]));
        assert_eq!(c.draft, Some(false));
        let c = EnvConfig::from_map(&map(&[("VITE_SVC_DRAFT", "1"), ("SVC_DRAFT", "off")]));
        assert_eq!(c.draft, Some(true));
        // Values other than draft are kept verbatim.
        let c = EnvConfig::from_map(&map(&[("SVC_PROJECT", " shop ")]));
        assert_eq!(c.project.as_deref(), Some(" shop "));
    }

    #[test]
    fn no_key_for_credentials_and_unknown_keys_ignored() {
        let env = map(&[
            ("SVC_API_TOKEN", "t"),
            ("VITE_SVC_API_TOKEN", "t"),
            ("SVC_API_KEY", "k"),
            ("SVC_TOKEN", "t"),
            ("svc_project", "lowercase keys are not read"),
            ("PROJECT", "p"),
        ]);
        assert_eq!(EnvConfig::from_map(&env), EnvConfig::default());
    }

    #[test]
    fn draft_words_in_mixed_case_with_white_space() {
        for word in [
            "fAlSe",
            "FaLsE",
            "No",
            "nO",
            "OfF",
            "oFF",
            "NuLl",
            "nULL",
            "UnDeFiNeD",
            "undeFINED",
        ] {
            for padded in [
                word.to_string(),
                format!(" {word}"),
                format!("{word} "),
                format!("\t {word} \r\n"),
            ] {
                assert_eq!(parse_draft(&padded), Some(false), "{padded:?}");
                let env = map(&[("SVC_DRAFT", padded.as_str())]);
                assert_eq!(EnvConfig::from_map(&env).draft, Some(false), "{padded:?}");
            }
        }
        for truthy in [
            "falsey", "0.0", "00", "-1", "n", "nil", "none", "f", "no!", "not", "of",
        ] {
            assert_eq!(parse_draft(truthy), Some(true), "{truthy:?}");
        }
        // Unicode white space is trimmed too, as JavaScript's `trim` does.
        assert_eq!(parse_draft("\u{a0}0\u{2003}"), Some(false));
    }

    fn capitalize(s: &str) -> String {
        let mut c = s.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    }
}
