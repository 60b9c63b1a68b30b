//! The projects config in force and the API keys generated for projects that list none.
//!
//! Both are read and written once, at start, on a blocking thread.

use rusqlite::OptionalExtension;

use super::{Store, StoreError};
use crate::config::projects::ProjectsConfig;

const PROJECTS_KEY: &str = "projects_config";

impl Store {
    /// The projects config saved by the last start, if any.
    pub fn saved_projects(&self) -> Result<Option<ProjectsConfig>, StoreError> {
        let text: Option<String> = self.run_blocking(|conn, _| {
            Ok(conn
                .query_row(
                    "SELECT value FROM settings WHERE key = ?1",
                    [PROJECTS_KEY],
                    |row| row.get(0),
                )
                .optional()?)
        })?;
        text.map(|t| {
            serde_json::from_str(&t)
                .map_err(|e| StoreError::Corrupt(format!("saved projects config: {e}")))
        })
        .transpose()
    }

    /// Saves the projects config in force, so that a restart without a config serves the same
    /// projects.
    pub fn save_projects(&self, config: &ProjectsConfig) -> Result<(), StoreError> {
        let text = serde_json::to_string(config)
            .map_err(|e| StoreError::Corrupt(format!("projects config: {e}")))?;
        self.run_blocking(|conn, _| {
            conn.execute(
                "INSERT INTO settings (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [PROJECTS_KEY, text.as_str()],
            )?;
            Ok(())
        })
    }

    /// The generated API key of `project`, made (`svc_key_` + 32 hex digits) and saved the first
    /// time it is asked for.
    pub fn generated_key(&self, project: &str) -> Result<String, StoreError> {
        self.run_blocking(|conn, _| {
            let tx = conn.transaction()?;
            let existing: Option<String> = tx
                .query_row(
                    "SELECT api_key FROM generated_keys WHERE project = ?1",
                    [project],
                    |row| row.get(0),
                )
                .optional()?;
            let key = match existing {
                Some(key) => key,
                None => {
                    let key = format!("svc_key_{}", uuid::Uuid::new_v4().simple());
                    tx.execute(
                        "INSERT INTO generated_keys (project, api_key) VALUES (?1, ?2)",
                        [project, key.as_str()],
                    )?;
                    key
                }
            };
            tx.commit()?;
            Ok(key)
        })
    }
}

impl Store {
    /// The generated built-in tools token of `project` (`svc_tools_` + 32 hex digits), made and
    /// saved the first time it is asked for, so that it stays the same across restarts on the
    /// same data path whatever the config source.
    pub fn generated_tools_token(&self, project: &str) -> Result<String, StoreError> {
        let key = format!("{TOOLS_TOKEN_PREFIX}{project}");
        self.run_blocking(|conn, _| {
            let tx = conn.transaction()?;
            let existing: Option<String> = tx
                .query_row("SELECT value FROM settings WHERE key = ?1", [&key], |row| {
                    row.get(0)
                })
                .optional()?;
            let token = match existing {
                Some(token) => token,
                None => {
                    let token = format!("svc_tools_{}", uuid::Uuid::new_v4().simple());
                    tx.execute(
                        "INSERT INTO settings (key, value) VALUES (?1, ?2)",
                        [key.as_str(), token.as_str()],
                    )?;
                    token
                }
            };
            tx.commit()?;
            Ok(token)
        })
    }
}

/// Settings key prefix of the generated tools tokens, followed by the project name.
const TOOLS_TOKEN_PREFIX: &str = "tools_token:";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_stable_and_configs_round_trip() {
        let store = Store::open(None).unwrap();
        assert!(store.saved_projects().unwrap().is_none());
        let key = store.generated_key("demo").unwrap();
        assert!(key.starts_with("svc_key_") && key.len() == 8 + 32, "{key}");
        assert_eq!(store.generated_key("demo").unwrap(), key);
        assert_ne!(store.generated_key("other").unwrap(), key);
        let tools = store.generated_tools_token("demo").unwrap();
        assert!(
            tools.starts_with("svc_tools_") && tools.len() == 10 + 32,
            "{tools}"
        );
        assert_eq!(store.generated_tools_token("demo").unwrap(), tools);
        assert_ne!(store.generated_tools_token("other").unwrap(), tools);
        // The demo config holds a random resource token: what is saved must come back as is.
        let demo = ProjectsConfig::demo();
        store.save_projects(&demo).unwrap();
        assert_eq!(store.saved_projects().unwrap(), Some(demo));
    }
}
