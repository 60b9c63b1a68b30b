//! Resource and model names completed as you type, at the shell's request: `source <(COMPLETE=bash
//! svc)` (or zsh, fish, elvish, powershell) registers svc itself as the completer, which clap
//! runs with the words typed so far (`clap_complete`'s runtime completion).
//!
//! The names come from the project svc is set up for, by the environment and the profile as for
//! any command (a flag typed on the line is not read yet): a resource's from the project
//! (`projects current`), a model's from the resource's tables, read with one read-only query over
//! its catalog (the service has no route that lists models; the query that the resource's
//! database answers is used). A completion that cannot reach them, or takes more than
//! [`DEADLINE`], offers none: it never prints an error into the shell.

use std::ffi::OsStr;
use std::future::Future;
use std::time::Duration;

use clap::FromArgMatches;
use clap_complete::engine::CompletionCandidate;

use crate::args::{Cli, Global};
use crate::connect::{self, Access};

/// How long a completion waits for the names: a shell waits for it.
const DEADLINE: Duration = Duration::from_secs(2);

/// The catalog queries a model's names are read with, tried in turn: the first the resource's
/// database answers gives them (PostgreSQL's and MySQL's `information_schema`, SQLite's
/// `sqlite_master`).
const CATALOG_QUERIES: [&str; 3] = [
    "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') \
     AND name NOT LIKE 'sqlite_%' ORDER BY name",
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() \
     ORDER BY table_name",
    "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() \
     ORDER BY table_name",
];

/// The project's resources whose names start with `current`.
pub fn resources(current: &OsStr) -> Vec<CompletionCandidate> {
    let names = ask(|global| async move {
        let client = connect::client(
            &global,
            Access::App {
                needs_project: true,
            },
        )
        .ok()?;
        let project = client.projects().current().await.ok()?;
        Some(
            project
                .resources()
                .into_iter()
                .map(|r| r.unique_name)
                .collect(),
        )
    });
    candidates(names, current)
}

/// The models of the resource typed before them whose names start with `current`.
pub fn models(current: &OsStr) -> Vec<CompletionCandidate> {
    let Some(resource) = resource_typed(&std::env::args().collect::<Vec<_>>()) else {
        return Vec::new();
    };
    let names = ask(|global| async move {
        let client = connect::client(&global, Access::Resource(&resource)).ok()?;
        for query in CATALOG_QUERIES {
            let mut sql = client.sql(&resource);
            if let Some(token) = connect::token(&global) {
                sql = sql.token(token);
            }
            if let Ok(answer) = sql.query(query).send().await {
                return Some(
                    answer
                        .data
                        .iter()
                        .filter_map(|row| row.first()?.as_str().map(str::to_owned))
                        .collect(),
                );
            }
        }
        None
    });
    candidates(names, current)
}

/// The names `ask` finds, within [`DEADLINE`], on a runtime of its own (completion runs before
/// svc's own runtime starts); none when anything fails.
fn ask<F, Fut>(ask: F) -> Vec<String>
where
    F: FnOnce(Global) -> Fut,
    Fut: Future<Output = Option<Vec<String>>>,
{
    let Some(global) = global() else {
        return Vec::new();
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    runtime
        .block_on(async { tokio::time::timeout(DEADLINE, ask(global)).await })
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// The settings any command reads from the environment and the profile.
fn global() -> Option<Global> {
    let matches = crate::help::command()
        .try_get_matches_from(["svc", "projects", "get"])
        .ok()?;
    Cli::from_arg_matches(&matches).ok().map(|cli| cli.global)
}

/// `names` that start with `current`, sorted, as candidates.
fn candidates(mut names: Vec<String>, current: &OsStr) -> Vec<CompletionCandidate> {
    let current = current.to_string_lossy();
    names.retain(|n| n.starts_with(current.as_ref()));
    names.sort();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// The resource of the line being completed: the word before the model's, the last word (the
/// shell passes `svc -- svc records list RESOURCE MODEL`), skipping options.
fn resource_typed(args: &[String]) -> Option<String> {
    let words = &args[args.iter().position(|a| a == "--")? + 1..];
    let index = std::env::var("_CLAP_COMPLETE_INDEX")
        .ok()
        .and_then(|i| i.parse::<usize>().ok())
        .unwrap_or(words.len().saturating_sub(1));
    words
        .get(..index.min(words.len()))?
        .iter()
        .rev()
        .find(|w| !w.starts_with('-'))
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn the_resource_is_the_word_before_the_model() {
        let line = args(&["svc", "--", "svc", "records", "list", "shop", "cu"]);
        // Without the shell's index, the last word is the one completed.
        assert_eq!(resource_typed(&line).as_deref(), Some("shop"));
        let options = args(&["svc", "--", "svc", "records", "get", "shop", "--yes", ""]);
        assert_eq!(resource_typed(&options).as_deref(), Some("shop"));
        assert_eq!(resource_typed(&args(&["svc", "records"])), None);
    }

    #[test]
    fn candidates_are_the_names_that_start_with_the_word() {
        let names = vec![
            "orders".to_owned(),
            "customers".to_owned(),
            "cu2".to_owned(),
        ];
        let got: Vec<String> = candidates(names, OsStr::new("cu"))
            .iter()
            .map(|c| c.get_value().to_string_lossy().into_owned())
            .collect();
        assert_eq!(got, ["cu2", "customers"]);
    }
}
