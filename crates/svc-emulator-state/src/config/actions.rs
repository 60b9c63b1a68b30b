//! Actions of a resource and workflows of a project, as the config declares them
//! (docs/contract.md 5.6, docs/actions.md).
//!
//! The service runs actions and workflows with its own engine; the emulator needs them
//! declared: an action is SQL run on its resource's database, or a fixed answer, and a
//! workflow is a list of actions run in order.

use std::collections::HashSet;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::config::projects::{ConfigError, ResourceConfig};

/// One action of a resource: `POST {resource}/actions/{name}` with `{"data": {...}}`.
///
/// ```
/// use svc_emulator::{ActionConfig, ResourceConfig};
///
/// let shop = ResourceConfig::new("shop", "tok_shop")
///     .action(ActionConfig::sql(
///         "refund",
///         "UPDATE orders SET status = 'refunded' WHERE id = :id RETURNING *",
///     ))
///     .action(ActionConfig::answer("ping", serde_json::json!({"pong": true})));
/// assert_eq!(shop.actions.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ActionConfig {
    /// The name used in the path; unique in its resource.
    pub name: String,
    /// The statements run, in order, in one read-write transaction on the resource's
    /// database, each `:name` bound to `data["name"]`: the answer is the last one's rows. In
    /// the config file a string (one statement) or an array of strings.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub sql: Vec<String>,
    /// A fixed answer instead of SQL: `{"data": <answer>}`, whatever the inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Value>,
}

impl ActionConfig {
    /// An action that runs one statement.
    pub fn sql(name: impl Into<String>, statement: impl Into<String>) -> Self {
        Self::statements(name, [statement])
    }

    /// An action that runs several statements in order, in one transaction, answering the
    /// last one's rows (e.g. an `UPDATE` then a `SELECT` on a database without
    /// `UPDATE ... RETURNING`).
    pub fn statements<I, S>(name: impl Into<String>, statements: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            name: name.into(),
            sql: statements.into_iter().map(Into::into).collect(),
            answer: None,
        }
    }

    /// An action that answers `{"data": answer}` and touches no database.
    pub fn answer(name: impl Into<String>, answer: Value) -> Self {
        Self {
            name: name.into(),
            sql: Vec::new(),
            answer: Some(answer),
        }
    }
}

/// One workflow of a project: `POST workflows/{uid}/run` with `{"data": {...}}` runs its
/// steps in order.
///
/// ```
/// use svc_emulator::{ProjectConfig, WorkflowConfig};
///
/// let project = ProjectConfig::new("shop")
///     .workflow(WorkflowConfig::new("wf-refund").step("shop", "refund").step("shop", "notify"));
/// assert_eq!(project.workflows[0].steps.len(), 2);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WorkflowConfig {
    /// The identifier used in the path; unique in its project.
    pub uid: String,
    /// The steps, run in order; the first that fails ends the run.
    pub steps: Vec<WorkflowStep>,
}

impl WorkflowConfig {
    /// A workflow without steps yet (a config needs at least one).
    pub fn new(uid: impl Into<String>) -> Self {
        Self {
            uid: uid.into(),
            steps: Vec::new(),
        }
    }

    /// Adds a step: the action `action` of the project's resource `resource`.
    pub fn step(mut self, resource: impl Into<String>, action: impl Into<String>) -> Self {
        self.steps.push(WorkflowStep {
            resource: resource.into(),
            action: action.into(),
        });
        self
    }
}

/// One step of a workflow: an action of one of the project's resources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WorkflowStep {
    /// The resource, by its API name.
    pub resource: String,
    /// The action, by its name.
    pub action: String,
}

/// A string or an array of strings, as a list.
fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

/// Whether `name` can be one path segment as it is: letters, digits, `-`, `_` and `.`, not
/// only dots (the names the SDK sends without encoding).
fn path_safe(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !name.bytes().all(|b| b == b'.')
}

/// Checks a resource's actions: names usable in a path and unique, each either SQL (no
/// empty statement) or a fixed answer.
pub(crate) fn check_actions(resource: &ResourceConfig) -> Result<(), ConfigError> {
    let mut names = HashSet::new();
    for action in &resource.actions {
        let at = format!("resource {:?}, action {:?}", resource.name, action.name);
        if !path_safe(&action.name) {
            return Err(invalid(format!(
                "{at}: an action's name must be letters, digits, '-', '_' or '.'"
            )));
        }
        if !names.insert(action.name.as_str()) {
            return Err(invalid(format!("{at} is listed twice")));
        }
        match (action.sql.is_empty(), action.answer.is_some()) {
            (true, false) => {
                return Err(invalid(format!(
                    "{at}: give \"sql\" (a statement or a list) or \"answer\" (a fixed JSON answer)"
                )));
            }
            (false, true) => {
                return Err(invalid(format!(
                    "{at}: \"sql\" and \"answer\" exclude each other"
                )));
            }
            _ => {}
        }
        if action.sql.iter().any(|s| s.trim().is_empty()) {
            return Err(invalid(format!("{at}: a statement is empty")));
        }
    }
    Ok(())
}

/// Checks a project's workflows: uids usable in a path and unique, at least one step each,
/// every step an action of one of the project's resources.
pub(crate) fn check_workflows(
    workflows: &[WorkflowConfig],
    resources: &[ResourceConfig],
) -> Result<(), ConfigError> {
    let mut uids = HashSet::new();
    for workflow in workflows {
        let at = format!("workflow {:?}", workflow.uid);
        if !path_safe(&workflow.uid) {
            return Err(invalid(format!(
                "{at}: a workflow's uid must be letters, digits, '-', '_' or '.'"
            )));
        }
        if !uids.insert(workflow.uid.as_str()) {
            return Err(invalid(format!("{at} is listed twice")));
        }
        if workflow.steps.is_empty() {
            return Err(invalid(format!("{at} has no steps")));
        }
        for (i, step) in workflow.steps.iter().enumerate() {
            let Some(resource) = resources.iter().find(|r| r.name == step.resource) else {
                return Err(invalid(format!(
                    "{at}, step {}: the project has no resource {:?}",
                    i + 1,
                    step.resource
                )));
            };
            if !resource.actions.iter().any(|a| a.name == step.action) {
                return Err(invalid(format!(
                    "{at}, step {}: resource {:?} has no action {:?}",
                    i + 1,
                    step.resource,
                    step.action
                )));
            }
        }
    }
    Ok(())
}

fn invalid(message: String) -> ConfigError {
    ConfigError::Invalid(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::projects::ProjectsConfig;

    fn config(text: &str) -> Result<ProjectsConfig, ConfigError> {
        ProjectsConfig::from_json(text)
    }

    #[test]
    fn sql_is_a_statement_or_a_list() {
        let c = config(
            r#"{"projects": [{"name": "p", "resources": [{"name": "r", "token": "t",
                "actions": [{"name": "one", "sql": "SELECT 1"},
                            {"name": "two", "sql": ["UPDATE x SET a = 1", "SELECT 2"]},
                            {"name": "fixed", "answer": {"ok": true}}]}],
                "workflows": [{"uid": "wf", "steps": [{"resource": "r", "action": "two"}]}]}]}"#,
        )
        .unwrap();
        let actions = &c.projects[0].resources[0].actions;
        assert_eq!(actions[0], ActionConfig::sql("one", "SELECT 1"));
        assert_eq!(actions[1].sql.len(), 2);
        assert_eq!(actions[2].answer, Some(serde_json::json!({"ok": true})));
        assert_eq!(c.projects[0].workflows[0].steps[0].action, "two");
    }

    #[test]
    fn mistakes_are_named() {
        let cases = [
            (r#"{"name": "a b", "sql": "SELECT 1"}"#, "letters, digits"),
            (r#"{"name": "a"}"#, "give \"sql\""),
            (
                r#"{"name": "a", "sql": "S", "answer": 1}"#,
                "exclude each other",
            ),
            (
                r#"{"name": "a", "sql": ["SELECT 1", " "]}"#,
                "a statement is empty",
            ),
        ];
        for (action, expected) in cases {
            let text = format!(
                r#"{{"projects": [{{"name": "p", "resources": [{{"name": "r", "token": "t", "actions": [{action}]}}]}}]}}"#
            );
            let e = config(&text).unwrap_err().to_string();
            assert!(e.contains(expected), "{action}: {e}");
        }
        let twice = r#"{"projects": [{"name": "p", "resources": [{"name": "r", "token": "t",
            "actions": [{"name": "a", "answer": 1}, {"name": "a", "answer": 2}]}]}]}"#;
        assert!(
            config(twice)
                .unwrap_err()
                .to_string()
                .contains("listed twice")
        );
        let base = |workflows: &str| {
            format!(
                r#"{{"projects": [{{"name": "p", "resources": [{{"name": "r", "token": "t",
                "actions": [{{"name": "a", "answer": 1}}]}}], "workflows": {workflows}}}]}}"#
            )
        };
        for (workflows, expected) in [
            (r#"[{"uid": "w", "steps": []}]"#, "has no steps"),
            (
                r#"[{"uid": "w", "steps": [{"resource": "x", "action": "a"}]}]"#,
                "no resource \"x\"",
            ),
            (
                r#"[{"uid": "w", "steps": [{"resource": "r", "action": "b"}]}]"#,
                "step 1: resource \"r\" has no action \"b\"",
            ),
            (
                r#"[{"uid": "w", "steps": [{"resource": "r", "action": "a"}]},
                   {"uid": "w", "steps": [{"resource": "r", "action": "a"}]}]"#,
                "listed twice",
            ),
        ] {
            let e = config(&base(workflows)).unwrap_err().to_string();
            assert!(e.contains(expected), "{workflows}: {e}");
        }
        assert!(
            config(&base(
                r#"[{"uid": "w", "steps": [{"resource": "r", "action": "a"}]}]"#
            ))
            .is_ok()
        );
    }
}
