//! The projects the emulator serves: the JSON config file format, its parsing and validation.
//!
//! The file is documented in the crate README. Everything is checked at start, so a running
//! emulator never meets a project, key or resource it cannot serve: identifiers must be usable as
//! one path segment, keys and tokens must fit in an `Authorization` header, and no key or token may
//! mean two things.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use svc_emulator_core::location::shown_location;

use serde::{Deserialize, Serialize};
use svc_model::users::TOOLS_RESOURCE;
use svc_model::{EnvironmentName, ProjectName, ResourceName};

use crate::config::actions::{ActionConfig, WorkflowConfig, check_actions, check_workflows};
use crate::config::fixtures::{Fixtures, FixturesOnRows};
use crate::config::stubs::StubConfig;

/// What a config file holds, for the message of one that does not parse.
const CONFIG_SHAPE: &str = r#"the file is {"projects": [{"name": "demo", "environments": ["prod"], "api_keys": ["..."], "resources": [{"name": "shop", "token": "...", "database": "shop.sqlite" or "postgres://..." or "seed_sql": "CREATE TABLE ...", "fixtures": "fixtures/"}], "workflows": [...], "stubs": [...], "max_stubs": 500, "max_stub_bytes": 4194304}]} (the svc-emulator README, "Config file")"#;

/// Every project the emulator serves; the first one is the default project.
///
/// Parse it from the config file's JSON with [`from_json`](Self::from_json) or
/// [`load`](Self::load), or build it in code:
///
/// ```
/// use svc_emulator::{ProjectConfig, ProjectsConfig, ResourceConfig};
///
/// let config = ProjectsConfig::new(vec![
///     ProjectConfig::new("shop")
///         .environments(["prod", "staging"])
///         .api_key("svc_key_0123456789abcdef")
///         .resource(ResourceConfig::new("orders", "tok_orders_1")),
/// ]);
/// config.validate()?;
///
/// let same = ProjectsConfig::from_json(r#"{"projects": [{
///     "name": "shop",
///     "environments": ["prod", "staging"],
///     "api_keys": ["svc_key_0123456789abcdef"],
///     "resources": [{"name": "orders", "token": "tok_orders_1"}]
/// }]}"#)?;
/// assert_eq!(config, same);
/// # Ok::<(), svc_emulator::ConfigError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectsConfig {
    /// The projects, the default one first.
    pub projects: Vec<ProjectConfig>,
}

/// One project: its name, environments, API keys, resources and workflows.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ProjectConfig {
    /// The unique name used in paths.
    pub name: String,
    /// The human-readable name (`name` in the project JSON); defaults to the unique name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The environments, the default one first. Defaults to `["prod"]`.
    #[serde(default = "default_environments")]
    pub environments: Vec<String>,
    /// The API keys accepted for this project. When empty, the emulator generates one and keeps it
    /// in the data path, so it stays the same across restarts.
    #[serde(default)]
    pub api_keys: Vec<String>,
    /// Connected resources (SQLite or PostgreSQL databases), served by the records engine.
    #[serde(default)]
    pub resources: Vec<ResourceConfig>,
    /// The static token of the built-in tools resource `__svc_app__` (users and teams). When
    /// absent, the emulator generates one and keeps it in the data path, so it stays the same
    /// across restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_token: Option<String>,
    /// Workflows (`POST workflows/{uid}/run`): steps that are actions of the project's
    /// resources, run in order (docs/actions.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub workflows: Vec<WorkflowConfig>,
    /// Stubs: answers declared for matching requests of this project, in order of declaration
    /// (docs/testing.md, "Stubs"). A reset keeps them (and their counts start again).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stubs: Vec<StubConfig>,
    /// The most stubs the project may hold at once, its `stubs` included: in place of
    /// [`Limits::max_stubs`](../svc_emulator/struct.Limits.html#method.max_stubs) (500 by default)
    /// for this project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_stubs: Option<usize>,
    /// The most bytes of stubs (each the JSON of its declaration) the project may hold at once,
    /// its `stubs` included: in place of
    /// [`Limits::max_stub_bytes`](../svc_emulator/struct.Limits.html#method.max_stub_bytes) (4 MiB
    /// by default) for this project.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_stub_bytes: Option<usize>,
}

/// A connected resource: a SQLite or PostgreSQL database whose tables are models.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ResourceConfig {
    /// The API name used in paths.
    pub name: String,
    /// The human-readable name; defaults to the API name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    /// The resource's static API token (sent as the raw `Authorization` value).
    pub token: String,
    /// The database: a SQLite file, or a PostgreSQL URL
    /// (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, also `postgresql://`). Relative
    /// file paths in a config file are relative to that file's directory. When absent (and no
    /// [`database_env`](Self::database_env)), a SQLite database kept with the emulator's data
    /// (or in memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<PathBuf>,
    /// The name of an environment variable that holds the database (a PostgreSQL URL or a
    /// SQLite file), read when the emulator starts: a URL with a password then stays out of
    /// the config file. Not together with [`database`](Self::database).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_env: Option<String>,
    /// SQL run once when the database is created (SQLite), or when the PostgreSQL database's
    /// schema has no table yet: e.g. `CREATE TABLE` and `INSERT` statements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed_sql: Option<String>,
    /// Whether a reset of the project (`POST /_emulator/projects/{project}/reset`, a snapshot's
    /// restore) puts this resource's data back too when the emulator does not own its
    /// database (a `database` file or URL you gave): its tables' rows as they were at start,
    /// copied then. A database the emulator keeps itself (no `database`) is always reset.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reset: bool,
    /// Records loaded into its models at start, from JSON, NDJSON or CSV files: a directory of
    /// `<model>.<format>` files, or a file per model (relative paths in a config file are
    /// relative to its directory). Loaded only when every model they name is empty, before the
    /// state at start is kept, so a reset puts them back (see the emulator guide, "Fixtures").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixtures: Option<Fixtures>,
    /// What a start does when a model the fixtures name already holds records: stop (the
    /// default), skip the fixtures, or add them ([`FixturesOnRows`]).
    #[serde(default, skip_serializing_if = "FixturesOnRows::is_stop")]
    pub fixtures_on_rows: FixturesOnRows,
    /// Actions (`POST {resource}/actions/{name}`): SQL run on this database with the request's
    /// inputs bound by name, or fixed answers (docs/actions.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ActionConfig>,
}

fn default_environments() -> Vec<String> {
    vec!["prod".to_owned()]
}

/// The config could not be read, parsed or accepted. Messages never contain keys or tokens.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The config is not JSON of the expected shape.
    #[error("invalid config{}: {message}", path.as_ref().map(|p| format!(" file {}", p.display())).unwrap_or_default())]
    Parse {
        /// The file, when the config came from one.
        path: Option<PathBuf>,
        /// What is wrong, with quoted values blanked out (they may be secrets).
        message: String,
    },
    /// The config parsed but breaks a rule (a duplicate name, an empty key, ...).
    #[error("invalid config: {0}")]
    Invalid(String),
}

impl ProjectsConfig {
    /// A config of the given projects, the default one first.
    pub fn new(projects: Vec<ProjectConfig>) -> Self {
        Self { projects }
    }

    /// The config used when none is given: a project `demo` ("Demo") with environments `prod` and
    /// `staging` and no fixed API key (so one is generated and kept in the data path), its
    /// resource `shop` with the actions `refund`, `set_status`, `note` and `ping`, and the
    /// workflows `wf-refund` (refund, then note) and `wf-reopen` (note, then set the status).
    pub fn demo() -> Self {
        Self::new(vec![
            ProjectConfig::new("demo")
                .display_name("Demo")
                .environments(["prod", "staging"])
                .resource(
                    ResourceConfig::new(
                        crate::demo::DEMO_RESOURCE,
                        format!("svc_tok_{}", uuid::Uuid::new_v4().simple()),
                    )
                    .seed_sql(crate::demo::demo_seed_sql())
                    .action(ActionConfig::sql(
                        "refund",
                        "UPDATE orders SET status = 'refunded' WHERE id = :id \
                         RETURNING id, status, total",
                    ))
                    .action(ActionConfig::sql(
                        "set_status",
                        "UPDATE orders SET status = :status WHERE id = :id RETURNING id, status",
                    ))
                    .action(ActionConfig::sql(
                        "note",
                        "UPDATE orders SET note = :note WHERE id = :id RETURNING id, status, note",
                    ))
                    .action(ActionConfig::answer(
                        "ping",
                        serde_json::json!({"pong": true}),
                    )),
                )
                .workflow(
                    WorkflowConfig::new("wf-refund")
                        .step(crate::demo::DEMO_RESOURCE, "refund")
                        .step(crate::demo::DEMO_RESOURCE, "note"),
                )
                .workflow(
                    WorkflowConfig::new("wf-reopen")
                        .step(crate::demo::DEMO_RESOURCE, "note")
                        .step(crate::demo::DEMO_RESOURCE, "set_status"),
                ),
        ])
    }

    /// Parses and validates the config file format.
    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        Self::parse(text, None)
    }

    /// Reads, parses and validates a config file. Relative `database` and `fixtures` paths are
    /// made relative to the file's directory.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        let mut config = Self::parse(&text, Some(path))?;
        let base = path.parent().unwrap_or_else(|| Path::new(""));
        for resource in config.projects.iter_mut().flat_map(|p| &mut p.resources) {
            if let Some(db) = &mut resource.database
                && db.is_relative()
                && !is_url(db)
            {
                *db = base.join(&*db);
            }
            if let Some(fixtures) = &mut resource.fixtures {
                fixtures.rebased(base);
            }
        }
        Ok(config)
    }

    fn parse(text: &str, path: Option<&Path>) -> Result<Self, ConfigError> {
        let config: Self = serde_json::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.map(Path::to_owned),
            message: format!("{}; {CONFIG_SHAPE}", blank_quoted(&e.to_string())),
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Checks every rule: at least one project; project, environment and resource names usable as
    /// one path segment and unique in their scope; at least one environment per project; keys and
    /// tokens non-empty, printable ASCII without spaces, and each used only once in the whole
    /// config (so a credential always names one project or resource).
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.projects.is_empty() {
            return Err(invalid("at least one project is required"));
        }
        let mut project_names = HashSet::new();
        let mut secrets = HashSet::new();
        for project in &self.projects {
            ProjectName::new(project.name.as_str()).map_err(|e| invalid(e.to_string()))?;
            if !project_names.insert(project.name.as_str()) {
                return Err(invalid(format!(
                    "project {:?} is listed twice",
                    project.name
                )));
            }
            project.validate(&mut secrets)?;
        }
        Ok(())
    }

    /// The default project: the first one.
    pub fn default_project(&self) -> Option<&ProjectConfig> {
        self.projects.first()
    }
}

impl ProjectConfig {
    /// A project with the given unique name, environment `prod`, no fixed key and no resources.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            display_name: None,
            environments: default_environments(),
            api_keys: Vec::new(),
            resources: Vec::new(),
            tools_token: None,
            workflows: Vec::new(),
            stubs: Vec::new(),
            max_stubs: None,
            max_stub_bytes: None,
        }
    }

    /// Sets the human-readable name.
    pub fn display_name(mut self, name: impl Into<String>) -> Self {
        self.display_name = Some(name.into());
        self
    }

    /// Replaces the environments, the default one first.
    pub fn environments<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.environments = names.into_iter().map(Into::into).collect();
        self
    }

    /// Adds an accepted API key.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_keys.push(key.into());
        self
    }

    /// Adds a resource.
    pub fn resource(mut self, resource: ResourceConfig) -> Self {
        self.resources.push(resource);
        self
    }

    /// Sets the static token of the built-in tools resource `__svc_app__`.
    pub fn tools_token(mut self, token: impl Into<String>) -> Self {
        self.tools_token = Some(token.into());
        self
    }

    /// Adds a workflow; its steps must name actions of the project's resources.
    pub fn workflow(mut self, workflow: WorkflowConfig) -> Self {
        self.workflows.push(workflow);
        self
    }

    /// Adds a stub, answering before any stub added later.
    pub fn stub(mut self, stub: StubConfig) -> Self {
        self.stubs.push(stub);
        self
    }

    /// Lets the project hold at most `stubs` stubs, in place of the emulator's
    /// [`Limits::max_stubs`](../svc_emulator/struct.Limits.html#method.max_stubs).
    pub fn max_stubs(mut self, stubs: usize) -> Self {
        self.max_stubs = Some(stubs);
        self
    }

    /// Lets the project hold at most `bytes` bytes of stubs, in place of the emulator's
    /// [`Limits::max_stub_bytes`](../svc_emulator/struct.Limits.html#method.max_stub_bytes).
    pub fn max_stub_bytes(mut self, bytes: usize) -> Self {
        self.max_stub_bytes = Some(bytes);
        self
    }

    fn validate<'a>(&'a self, secrets: &mut HashSet<&'a str>) -> Result<(), ConfigError> {
        let project = &self.name;
        if self.environments.is_empty() {
            return Err(invalid(format!(
                "project {project:?} needs at least one environment"
            )));
        }
        let mut envs = HashSet::new();
        for env in &self.environments {
            EnvironmentName::new(env.as_str()).map_err(|e| invalid(e.to_string()))?;
            if !envs.insert(env.as_str()) {
                return Err(invalid(format!(
                    "project {project:?} lists environment {env:?} twice"
                )));
            }
        }
        for key in &self.api_keys {
            check_secret(key, secrets, &format!("an API key of project {project:?}"))?;
        }
        if let Some(token) = &self.tools_token {
            check_secret(
                token,
                secrets,
                &format!("the tools token of project {project:?}"),
            )?;
        }
        let mut resources = HashSet::new();
        for resource in &self.resources {
            let name = &resource.name;
            ResourceName::new(name.as_str()).map_err(|e| invalid(e.to_string()))?;
            if name == TOOLS_RESOURCE {
                return Err(invalid(format!(
                    "project {project:?}: the resource name {TOOLS_RESOURCE:?} is reserved for the built-in tools resource (users and teams)"
                )));
            }
            if !resources.insert(name.as_str()) {
                return Err(invalid(format!(
                    "project {project:?} lists resource {name:?} twice"
                )));
            }
            if resource.database.is_some() && resource.database_env.is_some() {
                return Err(invalid(format!(
                    "resource {name:?} in project {project:?}: give `database` or `database_env`, not both"
                )));
            }
            if let Some(fixtures) = &resource.fixtures {
                fixtures.validate().map_err(|e| {
                    invalid(format!("resource {name:?} in project {project:?}: {e}"))
                })?;
            }
            check_secret(
                &resource.token,
                secrets,
                &format!("the token of resource {name:?} in project {project:?}"),
            )?;
            check_actions(resource)
                .map_err(|e| invalid(format!("project {project:?}: {}", bare(e))))?;
        }
        check_workflows(&self.workflows, &self.resources)
            .map_err(|e| invalid(format!("project {project:?}: {}", bare(e))))?;
        for (i, stub) in self.stubs.iter().enumerate() {
            stub.check()
                .map_err(|e| invalid(format!("project {project:?}, stub {}: {e}", i + 1)))?;
        }
        Ok(())
    }
}

/// The message of an `Invalid` error without its "invalid config: " prefix, to put in context.
fn bare(e: ConfigError) -> String {
    match e {
        ConfigError::Invalid(message) => message,
        other => other.to_string(),
    }
}

impl ResourceConfig {
    /// A resource with an API name and its static token, stored with the emulator's data.
    pub fn new(name: impl Into<String>, token: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            display_name: None,
            token: token.into(),
            database: None,
            database_env: None,
            seed_sql: None,
            reset: false,
            fixtures: None,
            fixtures_on_rows: FixturesOnRows::Stop,
            actions: Vec::new(),
        }
    }

    /// Sets the database: a SQLite file, or a PostgreSQL URL (`postgres://...`).
    ///
    /// ```
    /// use svc_emulator::ResourceConfig;
    ///
    /// let shop = ResourceConfig::new("shop", "shop-token")
    ///     .database("postgres://app@127.0.0.1:5432/shop_test");
    /// let files = ResourceConfig::new("files", "files-token").database("files.sqlite");
    /// # let _ = (shop, files);
    /// ```
    pub fn database(mut self, path: impl Into<PathBuf>) -> Self {
        self.database = Some(path.into());
        self
    }

    /// Takes the database (a PostgreSQL URL or a SQLite file) from the environment variable
    /// `name` when the emulator starts.
    pub fn database_env(mut self, name: impl Into<String>) -> Self {
        self.database_env = Some(name.into());
        self
    }

    /// Sets the SQL run when the database is created.
    pub fn seed_sql(mut self, sql: impl Into<String>) -> Self {
        self.seed_sql = Some(sql.into());
        self
    }

    /// Resets this resource's data with its project although the emulator does not own its
    /// database (see the field [`reset`](Self::reset)): the rows of its tables at start are
    /// copied then, and put back by every reset. For a test database of your own, never a
    /// shared one.
    pub fn reset(mut self, yes: bool) -> Self {
        self.reset = yes;
        self
    }

    /// Loads these records into the resource's models at start (see the field
    /// [`fixtures`](Self::fixtures)).
    ///
    /// ```
    /// use svc_emulator::{Fixtures, ResourceConfig};
    ///
    /// let shop = ResourceConfig::new("shop", "shop-token")
    ///     .seed_sql("CREATE TABLE orders (id INTEGER PRIMARY KEY, total REAL);")
    ///     .fixtures(Fixtures::files([("orders", "fixtures/orders.csv")]));
    /// # let _ = shop;
    /// ```
    pub fn fixtures(mut self, fixtures: Fixtures) -> Self {
        self.fixtures = Some(fixtures);
        self
    }

    /// What a start does when a model its fixtures name already holds records
    /// ([`FixturesOnRows`]; by default it stops, naming the models).
    ///
    /// ```
    /// use svc_emulator::{Fixtures, FixturesOnRows, ResourceConfig};
    ///
    /// // Kept in a --data file across starts: the rows of the first start stay.
    /// let shop = ResourceConfig::new("shop", "shop-token")
    ///     .fixtures(Fixtures::dir("fixtures/shop"))
    ///     .fixtures_on_rows(FixturesOnRows::Skip);
    /// assert_eq!(shop.fixtures_on_rows, FixturesOnRows::Skip);
    /// ```
    pub fn fixtures_on_rows(mut self, on_rows: FixturesOnRows) -> Self {
        self.fixtures_on_rows = on_rows;
        self
    }

    /// Adds an action (docs/actions.md).
    pub fn action(mut self, action: ActionConfig) -> Self {
        self.actions.push(action);
        self
    }
}

/// Whether `location` is a connection URL (`scheme://...`, the scheme made of letters, digits,
/// `+`, `-` and `.`, starting with a letter, as RFC 3986 has it) rather than a file.
pub(crate) fn is_url_text(location: &str) -> bool {
    location.split_once("://").is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

fn is_url(path: &Path) -> bool {
    path.to_str().is_some_and(is_url_text)
}

fn invalid(message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid(message.into())
}

/// A key or token must be sendable in a header as one word, and mean one thing only.
fn check_secret<'a>(
    secret: &'a str,
    seen: &mut HashSet<&'a str>,
    what: &str,
) -> Result<(), ConfigError> {
    if secret.is_empty() || !secret.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(invalid(format!(
            "{what} must be non-empty printable ASCII without spaces"
        )));
    }
    if !seen.insert(secret) {
        return Err(invalid(format!(
            "{what} is already used by another key or token"
        )));
    }
    Ok(())
}

/// Blanks out the contents of double-quoted strings in a parser message: serde quotes the values
/// it rejects, and a misplaced key or token must not end up on a terminal or in a CI log.
fn blank_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut inside = false;
    for c in message.chars() {
        if c == '"' {
            if inside {
                out.push('…');
            }
            inside = !inside;
            out.push(c);
        } else if !inside {
            out.push(c);
        }
    }
    out
}

impl fmt::Debug for ProjectsConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProjectsConfig")
            .field("projects", &self.projects)
            .finish()
    }
}

impl fmt::Debug for ProjectConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProjectConfig")
            .field("name", &self.name)
            .field("display_name", &self.display_name)
            .field("environments", &self.environments)
            .field(
                "api_keys",
                &format_args!("[{} redacted]", self.api_keys.len()),
            )
            .field("resources", &self.resources)
            .field(
                "tools_token",
                &self.tools_token.as_ref().map(|_| "<redacted>"),
            )
            .field("workflows", &self.workflows)
            .field("stubs", &self.stubs)
            .field("max_stubs", &self.max_stubs)
            .field("max_stub_bytes", &self.max_stub_bytes)
            .finish()
    }
}

impl fmt::Debug for ResourceConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceConfig")
            .field("name", &self.name)
            .field("display_name", &self.display_name)
            .field("token", &"<redacted>")
            .field("database", &self.database.as_deref().map(shown_location))
            .field("database_env", &self.database_env)
            .field("seed_sql", &self.seed_sql.as_ref().map(String::len))
            .field("reset", &self.reset)
            .field("fixtures", &self.fixtures)
            .field("actions", &self.actions)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(project: ProjectConfig) -> ProjectsConfig {
        ProjectsConfig::new(vec![project])
    }

    #[test]
    fn demo_is_valid_and_defaults_apply() {
        ProjectsConfig::demo().validate().unwrap();
        let parsed = ProjectsConfig::from_json(r#"{"projects":[{"name":"p"}]}"#).unwrap();
        assert_eq!(parsed.projects[0].environments, vec!["prod"]);
        assert!(parsed.projects[0].api_keys.is_empty());
    }

    #[test]
    fn rules_are_enforced() {
        let bad = [
            ProjectsConfig::new(vec![]),
            one(ProjectConfig::new("")),
            one(ProjectConfig::new("..")),
            one(ProjectConfig::new("p").environments(Vec::<String>::new())),
            one(ProjectConfig::new("p").environments(["prod", "prod"])),
            one(ProjectConfig::new("p").api_key("")),
            one(ProjectConfig::new("p").api_key("has space")),
            one(ProjectConfig::new("p").api_key("k").api_key("k")),
            one(ProjectConfig::new("p")
                .api_key("k")
                .resource(ResourceConfig::new("r", "k"))),
            one(ProjectConfig::new("p")
                .resource(ResourceConfig::new("r", "t1"))
                .resource(ResourceConfig::new("r", "t2"))),
            one(ProjectConfig::new("p").resource(ResourceConfig::new("", "t"))),
            one(ProjectConfig::new("p").resource(ResourceConfig::new("__svc_app__", "t"))),
            one(ProjectConfig::new("p").tools_token("")),
            one(ProjectConfig::new("p")
                .tools_token("t")
                .resource(ResourceConfig::new("r", "t"))),
            ProjectsConfig::new(vec![ProjectConfig::new("p"), ProjectConfig::new("p")]),
        ];
        for config in bad {
            assert!(
                matches!(config.validate(), Err(ConfigError::Invalid(_))),
                "{config:?}"
            );
        }
    }

    #[test]
    fn parse_errors_hide_values_and_unknown_fields_are_refused() {
        let err = ProjectsConfig::from_json(r#"{"projects":[{"name":"p","api_keys":"sekrit"}]}"#)
            .unwrap_err();
        assert!(!err.to_string().contains("sekrit"), "{err}");
        let err =
            ProjectsConfig::from_json(r#"{"projects":[{"name":"p","apikeys":[]}]}"#).unwrap_err();
        assert!(err.to_string().contains("apikeys"), "{err}");
    }

    #[test]
    fn debug_redacts_secrets() {
        let config = one(ProjectConfig::new("p")
            .api_key("key-123")
            .tools_token("tools-789")
            .resource(ResourceConfig::new("r", "tok-456")));
        let text = format!("{config:?}");
        assert!(
            !text.contains("key-123") && !text.contains("tok-456") && !text.contains("tools-789"),
            "{text}"
        );
    }

    #[test]
    fn load_rebases_relative_databases() {
        let dir = std::env::temp_dir().join(format!("svc-emu-cfg-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("config.json");
        std::fs::write(
            &file,
            r#"{"projects":[{"name":"p","resources":[
                {"name":"a","token":"t1","database":"a.sqlite"},
                {"name":"b","token":"t2","database":"/abs/b.sqlite"}]}]}"#,
        )
        .unwrap();
        let config = ProjectsConfig::load(&file).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let resources = &config.projects[0].resources;
        assert_eq!(
            resources[0].database.as_deref(),
            Some(&*dir.join("a.sqlite"))
        );
        assert_eq!(
            resources[1].database.as_deref(),
            Some(Path::new("/abs/b.sqlite"))
        );
        assert!(matches!(
            ProjectsConfig::load(&dir.join("missing.json")),
            Err(ConfigError::Read { .. })
        ));
    }
}
