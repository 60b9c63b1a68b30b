//! Page settings as files: `svc pages pull`, `diff`, `push` and `publish`, and pages named by
//! `unique_name` wherever a uid is taken.
//!
//! A page's file is `DIR/<unique_name>.json` (`<uid>.json` when it has no unique name that can be
//! a file name, or when two pages share one): the page's object, pretty JSON, with `params`
//! parsed (the structure as JSON, not JSON text in a string) and without the fields the server
//! keeps itself (`date_add`, `draft`, `deleted`). `diff` and `push` compare files and pages in
//! that form, read and written again, so spacing and key order in a file do not count.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use svc_api::Pages;
use svc_api::model::{PageSettings, UpdatePageSettings};

use crate::exit::Failure;
use crate::input;

/// Fields the server sets: not in the files.
const SERVER_FIELDS: [&str; 3] = ["date_add", "draft", "deleted"];

/// The page named `given`, by uid or else by unique name, in the set `pages` reads. An unknown
/// name is a usage error that lists the pages there are.
pub async fn find(pages: &Pages<'_>, given: &str) -> Result<PageSettings, Failure> {
    match pages.get(given).await {
        Ok(page) => return Ok(page),
        Err(e) if e.is_not_found() || matches!(e, svc_api::Error::InvalidInput(_)) => {}
        Err(e) => return Err(e.into()),
    }
    let all = pages.list().await?;
    if let Some(page) = all.iter().find(|p| p.uid() == Some(given)) {
        return Ok(page.clone());
    }
    let named: Vec<&PageSettings> = all
        .iter()
        .filter(|p| p.unique_name() == Some(given))
        .collect();
    match named.as_slice() {
        [page] => Ok((*page).clone()),
        [] => {
            let names: Vec<String> = all
                .iter()
                .map(|p| match (p.unique_name(), p.uid()) {
                    (Some(n), Some(u)) if !n.is_empty() => format!("{n} ({u})"),
                    (_, Some(u)) => u.to_owned(),
                    _ => "?".to_owned(),
                })
                .collect();
            Err(
                Failure::Refused(format!("no page with the uid or unique_name {given:?}"))
                    .with_hint(if names.is_empty() {
                        "there are no pages in this set (--draft reads the draft set)".to_owned()
                    } else {
                        format!("give a page's uid or unique_name: {}", names.join(", "))
                    }),
            )
        }
        several => Err(Failure::usage_hint(
            format!("{} pages have the unique_name {given:?}", several.len()),
            format!(
                "give the uid of one: {}",
                several
                    .iter()
                    .filter_map(|p| p.uid())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// The uid of the page named `given` (a uid or a unique name).
pub async fn uid_of(pages: &Pages<'_>, given: &str) -> Result<String, Failure> {
    let page = find(pages, given).await?;
    page.uid()
        .map(str::to_owned)
        .ok_or_else(|| Failure::Other(format!("the page {given:?} has no uid")))
}

/// Refuses a create whose `unique_name` a page of the set already has.
pub async fn check_new_name(pages: &Pages<'_>, page: &PageSettings) -> Result<(), Failure> {
    let Some(name) = page.unique_name().filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    let all = pages.list().await?;
    if let Some(existing) = all.iter().find(|p| p.unique_name() == Some(name)) {
        return Err(Failure::usage_hint(
            format!(
                "a page with the unique_name {name:?} exists already (uid {})",
                existing.uid().unwrap_or("?")
            ),
            "change that page with `svc pages update NAME --data ...`, or give the new page another unique_name",
        ));
    }
    Ok(())
}

/// A page as its file holds it: an object without the server's own fields, `params` parsed.
fn file_form(page: &PageSettings) -> Value {
    let mut map = page.clone().into_map();
    for field in SERVER_FIELDS {
        map.remove(field);
    }
    if let Some(params) = map.get_mut("params")
        && let Value::String(text) = params
        && let Ok(parsed) = serde_json::from_str::<Value>(text)
    {
        *params = parsed;
    }
    Value::Object(map)
}

/// The server's page in the form of `local`, its file: without `uid` when the file has none
/// (a page created from it, matched by unique name).
fn compared(page: &PageSettings, local: &Map<String, Value>) -> Value {
    let mut form = file_form(page);
    if !local.contains_key("uid")
        && let Value::Object(map) = &mut form
    {
        map.remove("uid");
    }
    form
}

/// The text of a file: pretty JSON and a final line break.
fn text(value: &Value) -> String {
    let mut s = serde_json::to_string_pretty(value).unwrap_or_default();
    s.push('\n');
    s
}

/// Whether `name` can be a file name as it is.
fn safe_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name.len() <= 200
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The file name of each page (in list order): its unique name, else its uid.
fn file_names(pages: &[PageSettings]) -> Result<Vec<String>, Failure> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for p in pages {
        if let Some(n) = p.unique_name() {
            *count.entry(n).or_default() += 1;
        }
    }
    pages
        .iter()
        .map(|p| {
            let by_name = p
                .unique_name()
                .filter(|n| safe_name(n) && count.get(n) == Some(&1));
            match (by_name, p.uid()) {
                (Some(n), _) => Ok(format!("{n}.json")),
                (None, Some(u)) if safe_name(u) => Ok(format!("{u}.json")),
                (_, uid) => Err(Failure::Other(format!(
                    "the page {:?} has no unique_name or uid that can be a file name",
                    uid.unwrap_or("?")
                ))),
            }
        })
        .collect()
}

/// `svc pages pull DIR`: one file per page of the set; prints what was written.
pub async fn pull(pages: &Pages<'_>, dir: &Path) -> Result<(), Failure> {
    let all = pages.list().await?;
    let names = file_names(&all)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::Other(format!("cannot create {}: {e}", dir.display())))?;
    for (page, name) in all.iter().zip(&names) {
        let path = dir.join(name);
        std::fs::write(&path, text(&file_form(page)))
            .map_err(|e| Failure::Other(format!("cannot write {}: {e}", path.display())))?;
    }
    let others = local_files(dir)?
        .into_iter()
        .filter(|(name, _)| !names.contains(name))
        .count();
    eprintln!(
        "{} page{} pulled into {}{}",
        all.len(),
        if all.len() == 1 { "" } else { "s" },
        dir.display(),
        if others > 0 {
            format!("; {others} other .json file(s) there name no page and were left as they are")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// The `.json` files of `dir`, by name, parsed (sorted by name).
fn local_files(dir: &Path) -> Result<Vec<(String, PathBuf)>, Failure> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Failure::usage_hint(
            format!("cannot read the directory {}: {e}", dir.display()),
            "`svc pages pull DIR` makes it",
        )
    })?;
    let mut files = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| Failure::Other(format!("cannot read {}: {e}", dir.display())))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") && !name.starts_with('.') && entry.path().is_file() {
            files.push((name, entry.path()));
        }
    }
    files.sort();
    Ok(files)
}

fn read_file(path: &Path) -> Result<Map<String, Value>, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("cannot read {}: {e}", path.display())))?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(Failure::Usage(format!(
            "{} is not a page: a page file holds one JSON object",
            path.display()
        ))),
        Err(e) => Err(Failure::Usage(format!(
            "{} is not JSON: {e}",
            path.display()
        ))),
    }
}

/// What a directory and the server hold, matched: each file with its page (by uid, else by
/// unique name), and the pages that no file matches.
struct Matched {
    /// (file name, file contents, the server's page if any).
    files: Vec<(String, Map<String, Value>, Option<PageSettings>)>,
    /// Pages of the set with no file.
    unmatched: Vec<PageSettings>,
}

async fn matched(pages: &Pages<'_>, dir: &Path) -> Result<Matched, Failure> {
    let files = local_files(dir)?;
    let mut server = pages.list().await?;
    let mut out = Vec::new();
    for (name, path) in files {
        let local = read_file(&path)?;
        let uid = local.get("uid").and_then(Value::as_str);
        let unique = local.get("unique_name").and_then(Value::as_str);
        let at = match uid {
            Some(uid) => server.iter().position(|p| p.uid() == Some(uid)),
            None => unique.and_then(|n| server.iter().position(|p| p.unique_name() == Some(n))),
        };
        let page = at.map(|i| server.remove(i));
        out.push((name, local, page));
    }
    Ok(Matched {
        files: out,
        unmatched: server,
    })
}

/// `svc pages diff DIR`: a unified diff from the server's pages to the files; `Ok(true)` when
/// they differ.
pub async fn diff(pages: &Pages<'_>, dir: &Path) -> Result<bool, Failure> {
    let m = matched(pages, dir).await?;
    let mut differ = false;
    let mut out = String::new();
    for (name, local, page) in &m.files {
        let local_text = text(&Value::Object(local.clone()));
        let server_text = page.as_ref().map(|p| text(&compared(p, local)));
        let (from, old) = match &server_text {
            Some(t) => (format!("a/{name}"), t.as_str()),
            None => ("/dev/null".to_owned(), ""),
        };
        if old != local_text {
            differ = true;
            out.push_str(&unified(&from, &format!("b/{name}"), old, &local_text));
        }
    }
    let names = file_names(&m.unmatched)?;
    for (page, name) in m.unmatched.iter().zip(names) {
        differ = true;
        out.push_str(&unified(
            &format!("a/{name}"),
            "/dev/null",
            &text(&file_form(page)),
            "",
        ));
    }
    crate::print_bytes(out.as_bytes())?;
    Ok(differ)
}

/// What `push` does to one page.
enum Step {
    Create(String, PageSettings),
    Update(String, String, UpdatePageSettings),
    Delete(String, String),
}

/// `svc pages push DIR`: creates the pages that have a file and no page, updates the structure
/// of those whose file's differs, and with `prune` deletes the pages that have no file (asking
/// first, as every delete does). `dry_run` prints the steps and changes nothing.
pub async fn push(
    pages: &Pages<'_>,
    dir: &Path,
    dry_run: bool,
    prune: bool,
    yes: bool,
) -> Result<(), Failure> {
    let m = matched(pages, dir).await?;
    let mut steps = Vec::new();
    let mut unchanged = 0;
    for (name, local, page) in m.files {
        match page {
            None => {
                let created = crate::commands::pages::page_to_create(Value::Object(local))?;
                steps.push(Step::Create(name, created));
            }
            Some(page) => {
                let server = compared(&page, &local);
                let uid = page.uid().unwrap_or_default().to_owned();
                let params = local.get("params").cloned().unwrap_or(Value::Null);
                if server.get("params").unwrap_or(&Value::Null) != &params {
                    let update = match params {
                        Value::String(t) => {
                            UpdatePageSettings::from_params_json(t).map_err(|e| {
                                Failure::Usage(format!(
                                    "{name}: params is a string, but not JSON text: {e}"
                                ))
                            })?
                        }
                        Value::Null => {
                            return Err(Failure::Usage(format!(
                                "{name}: the page has params on the server and none in the file; the service cannot remove them"
                            )));
                        }
                        structure => UpdatePageSettings::from_structure(&structure)
                            .map_err(|e| Failure::Usage(e.to_string()))?,
                    };
                    steps.push(Step::Update(name.clone(), uid, update));
                } else {
                    unchanged += 1;
                }
                let Value::Object(server) = server else {
                    continue;
                };
                let others: Vec<&str> = local
                    .iter()
                    .filter(|(k, v)| *k != "params" && server.get(*k) != Some(*v))
                    .map(|(k, _)| k.as_str())
                    .collect();
                if !others.is_empty() {
                    eprintln!(
                        "note: {name}: {} differ from the server's, which the service cannot change (only params)",
                        others.join(", ")
                    );
                }
            }
        }
    }
    if prune {
        let names = file_names(&m.unmatched)?;
        for (page, name) in m.unmatched.iter().zip(names) {
            steps.push(Step::Delete(
                name,
                page.uid().unwrap_or_default().to_owned(),
            ));
        }
    }
    let verb = if dry_run { "would " } else { "" };
    if dry_run {
        for step in &steps {
            match step {
                Step::Create(name, _) => println!("{verb}create {name}"),
                Step::Update(name, uid, _) => println!("{verb}update {name} (uid {uid})"),
                Step::Delete(name, uid) => println!("{verb}delete {name} (uid {uid})"),
            }
        }
        eprintln!(
            "dry run: {} change(s), {unchanged} unchanged; nothing was sent",
            steps.len()
        );
        return Ok(());
    }
    let deletes: Vec<&str> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Delete(name, _) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    if !deletes.is_empty() {
        input::confirm_delete(
            &format!(
                "{} page(s) that have no file in {} ({})",
                deletes.len(),
                dir.display(),
                deletes.join(", ")
            ),
            yes,
        )?;
    }
    let total = steps.len();
    for step in steps {
        match step {
            Step::Create(name, page) => {
                let created = pages.create(&page).await?;
                println!("created {name} (uid {})", created.uid().unwrap_or("?"));
            }
            Step::Update(name, uid, update) => {
                pages.update(&uid, &update).await?;
                println!("updated {name} (uid {uid})");
            }
            Step::Delete(name, uid) => {
                pages.delete(&uid).await?;
                println!("deleted {name} (uid {uid})");
            }
        }
    }
    eprintln!("{total} change(s), {unchanged} unchanged");
    Ok(())
}

/// `svc pages publish`: each draft page named (or every one with `all`) becomes the published
/// page: its structure replaces the published page's (which, by the draft rules, writes the
/// draft set too), or, when the page exists only as a draft, it is created in the published set
/// with the draft's fields. Pages already published as they are stay as they are.
pub async fn publish(
    published: &Pages<'_>,
    drafts: &Pages<'_>,
    page: Option<&str>,
) -> Result<(), Failure> {
    let chosen = match page {
        Some(given) => vec![find(drafts, given).await?],
        None => drafts.list().await?,
    };
    let live = published.list().await?;
    let mut changed = 0;
    for draft in &chosen {
        let uid = draft.uid().unwrap_or_default();
        let label = draft
            .unique_name()
            .filter(|n| !n.is_empty())
            .map_or_else(|| uid.to_owned(), |n| format!("{n} ({uid})"));
        match live.iter().find(|p| p.uid() == Some(uid)) {
            Some(current) if current.params_raw() == draft.params_raw() => {
                println!("unchanged {label}");
            }
            Some(_) => {
                let update = UpdatePageSettings {
                    params: draft.params_raw().map(str::to_owned),
                };
                published.update(uid, &update).await?;
                println!("published {label}");
                changed += 1;
            }
            None => {
                let mut map = draft.clone().into_map();
                for field in SERVER_FIELDS {
                    map.remove(field);
                }
                let page = PageSettings::try_from(Value::Object(map))
                    .map_err(|_| Failure::Other("a draft page is not an object".to_owned()))?;
                published.create(&page).await?;
                println!("published {label} (new)");
                changed += 1;
            }
        }
    }
    eprintln!("{changed} of {} page(s) published", chosen.len());
    Ok(())
}

/// A unified diff of `old` to `new` (whole lines, 3 lines of context), or nothing when equal.
pub fn unified(from: &str, to: &str, old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    if a == b {
        return String::new();
    }
    // Longest common subsequence, by dynamic programming from the ends.
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    // The edit script: (' ' | '-' | '+', old index, new index).
    let mut ops: Vec<(char, usize, usize)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', i, j));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', i, j));
            i += 1;
        } else {
            ops.push(('+', i, j));
            j += 1;
        }
    }
    const CONTEXT: usize = 3;
    let mut out = format!("--- {from}\n+++ {to}\n");
    let changes: Vec<usize> = (0..ops.len()).filter(|&k| ops[k].0 != ' ').collect();
    let mut k = 0;
    while k < changes.len() {
        let start = changes[k].saturating_sub(CONTEXT);
        let mut end = (changes[k] + CONTEXT + 1).min(ops.len());
        while k + 1 < changes.len() && changes[k + 1] <= end + CONTEXT {
            k += 1;
            end = (changes[k] + CONTEXT + 1).min(ops.len());
        }
        let hunk = &ops[start..end];
        let old_count = hunk.iter().filter(|o| o.0 != '+').count();
        let new_count = hunk.iter().filter(|o| o.0 != '-').count();
        let old_start = hunk[0].1 + usize::from(old_count > 0);
        let new_start = hunk[0].2 + usize::from(new_count > 0);
        out.push_str(&format!(
            "@@ -{old_start},{old_count} +{new_start},{new_count} @@\n"
        ));
        for &(op, i, j) in hunk {
            let line = if op == '+' { b[j] } else { a[i] };
            out.push(op);
            out.push_str(line);
            out.push('\n');
        }
        k += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unified_diffs_have_hunks_with_context() {
        assert_eq!(unified("a", "b", "x\ny\n", "x\ny\n"), "");
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n10\n11\n";
        assert_eq!(
            unified("a/p.json", "b/p.json", old, new),
            "--- a/p.json\n+++ b/p.json\n@@ -2,9 +2,10 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n+11\n"
        );
        // Changes far apart: two hunks.
        let old: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let new = old.replacen("1\n", "one\n", 1).replace("20\n", "twenty\n");
        assert_eq!(
            unified("a", "b", &old, &new),
            "--- a\n+++ b\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -17,4 +17,4 @@\n 17\n 18\n 19\n-20\n+twenty\n"
        );
        // A new file: everything added, from line 0 of nothing.
        assert_eq!(
            unified("/dev/null", "b/n.json", "", "{\n}\n"),
            "--- /dev/null\n+++ b/n.json\n@@ -0,0 +1,2 @@\n+{\n+}\n"
        );
    }

    #[test]
    fn files_are_named_by_unique_name_else_uid() {
        let page = |v: Value| PageSettings::try_from(v).unwrap();
        let pages = vec![
            page(serde_json::json!({"uid": "u1", "unique_name": "orders"})),
            page(serde_json::json!({"uid": "u2", "unique_name": "a/b"})),
            page(serde_json::json!({"uid": "u3"})),
            page(serde_json::json!({"uid": "u4", "unique_name": "twin"})),
            page(serde_json::json!({"uid": "u5", "unique_name": "twin"})),
        ];
        assert_eq!(
            file_names(&pages).unwrap(),
            ["orders.json", "u2.json", "u3.json", "u4.json", "u5.json"]
        );
    }

    #[test]
    fn the_file_form_parses_params_and_drops_server_fields() {
        let page = PageSettings::try_from(serde_json::json!({
            "uid": "u1", "params": "{\"elements\":[1]}", "date_add": "x", "draft": true, "deleted": false, "name": "N"
        }))
        .unwrap();
        assert_eq!(
            file_form(&page),
            serde_json::json!({"uid": "u1", "params": {"elements": [1]}, "name": "N"})
        );
    }
}
