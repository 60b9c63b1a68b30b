//! Client configuration from an env map: for any map, each setting is the non-empty
//! `VITE_SVC_*` value, else the non-empty `SVC_*` value, else unset; draft strings parse by the
//! JavaScript client's words.
#![no_main]

use std::collections::HashMap;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use svc_auth::config::trim_base_url;
use svc_auth::{EnvConfig, parse_draft};

const NAMES: [&str; 5] = [
    "PROJECT",
    "ENVIRONMENT",
    "DRAFT",
    "API_BASE_URL",
    "APP_BASE_URL",
];

#[derive(Debug, Arbitrary)]
enum Key {
    /// `VITE_SVC_{NAMES[i]}` when `vite`, else `SVC_{NAMES[i]}`.
    Known { name: u8, vite: bool },
    /// Anything else (lowercase spellings, other prefixes, garbage).
    Other(String),
}

#[derive(Debug, Arbitrary)]
struct Input {
    entries: Vec<(Key, String)>,
    draft_word: String,
}

fuzz_target!(|input: Input| {
    let mut env: HashMap<String, String> = HashMap::new();
    for (key, value) in input.entries {
        let key = match key {
            Key::Known { name, vite } => {
                let name = NAMES[usize::from(name) % NAMES.len()];
                if vite {
                    format!("VITE_SVC_{name}")
                } else {
                    format!("SVC_{name}")
                }
            }
            Key::Other(key) => key,
        };
        env.insert(key, value);
    }
    let config = EnvConfig::from_map(&env);
    let expected = |name: &str| {
        [format!("VITE_SVC_{name}"), format!("SVC_{name}")]
            .iter()
            .find_map(|k| env.get(k).filter(|v| !v.is_empty()).cloned())
    };
    assert_eq!(config.project, expected("PROJECT"));
    assert_eq!(config.environment, expected("ENVIRONMENT"));
    assert_eq!(config.api_base_url, expected("API_BASE_URL"));
    assert_eq!(config.app_base_url, expected("APP_BASE_URL"));
    assert_eq!(
        config.draft,
        expected("DRAFT").and_then(|v| parse_draft(&v))
    );
    // The same through the lookup function and a map of borrowed strings.
    let borrowed: HashMap<&str, &str> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert_eq!(EnvConfig::from_map(&borrowed), config);

    let word = input.draft_word.as_str();
    match parse_draft(word) {
        None => assert!(word.is_empty()),
        Some(false) => {
            let folded = word.trim().to_ascii_lowercase();
            assert!(["false", "0", "no", "off", "null", "undefined"].contains(&folded.as_str()));
        }
        Some(true) => assert!(!word.is_empty()),
    }
    let trimmed = trim_base_url(word);
    assert!(!trimmed.ends_with('/'));
    assert_eq!(trim_base_url(trimmed), trimmed);
    assert!(word.starts_with(trimmed));
});
