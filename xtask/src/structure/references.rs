//! Every repository path a file names exists, so that moving a file leaves no stale mention;
//! what is published holds on its own: licences, READMEs, `cargo install` lines, examples.

use std::collections::HashSet;
use std::path::Path;

use super::code;

/// The repository's top-level directories: a word starting with one is a path.
const TOP_DIRS: &str = "crates/ docs/ tests/ xtask/ fuzz/ bench/ .ci/";

/// The files read (and `.ci/run`); a word ending with one of these is a file's name.
const EXTENSIONS: [&str; 5] = [".md", ".rs", ".toml", ".sh", ".yml"];

/// The true exceptions (one ending with `/` allows what is under it): what Cargo, the reports,
/// cargo-fuzz and `cargo xtask contract` write once they run, the documentation site, and the
/// specification's files, in `../shared/spec/` outside the repository.
const ALLOWED: &str = "target/ report.md fuzz/artifacts/ fuzz/corpus/ fuzz/coverage/ \
    fuzz/target/ docs.rs schemathesis.toml API.md CLIENT.md ARCHITECTURE.md ENGINE.md seed.md";

/// Crates the guides' examples reach through svc-api's re-exports (`svc_api::http`,
/// `svc_api::prelude`, ...), never by name: who copies an example has svc-api, tokio and serde.
const NOT_IN_EXAMPLES: &str = "bytes futures futures_core futures_util http serde_json svc_auth \
                               svc_model svc_transport";

/// The paths named in the docs, configuration, scripts and Rust comments and strings (tests
/// left out) that do not exist; in Markdown, a `cargo install` without `--locked`; in the
/// guides, which speak to users of svc-api, examples naming a crate of [`NOT_IN_EXAMPLES`].
pub(super) fn references(root: &Path, files: &[String]) -> Vec<String> {
    let mut paths: HashSet<&str> = files.iter().map(String::as_str).collect();
    for file in files {
        paths.extend(file.match_indices('/').map(|(i, _)| &file[..i]));
    }
    // A word may also be relative to any directory: a text on the emulator says `ui/mod.rs`.
    let mut tails = HashSet::new();
    for path in &paths {
        tails.extend(path.match_indices('/').map(|(i, _)| &path[i + 1..]));
    }
    let exists = |dir: &str, (relative, path): &(bool, String)| {
        let path = path.trim_start_matches("./").trim_end_matches('/');
        let allowed = |a: &str| path == a.trim_end_matches('/') || path.starts_with(a);
        let found = match relative {
            true => root.join(dir).join(path).exists(),
            false => paths.contains(path) || tails.contains(path),
        };
        found || path.contains("shared/spec") || ALLOWED.split_whitespace().any(allowed)
    };
    let mut out = Vec::new();
    let read = |f: &&String| EXTENSIONS.iter().any(|e| f.ends_with(e)) || *f == ".ci/run";
    let read = |f: &&String| read(f) && !f.ends_with("/tests.rs");
    for file in files.iter().filter(read) {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        let rust = file.ends_with(".rs").then(|| code(&text));
        let code: Vec<&str> = rust.iter().flat_map(|code| code.lines()).collect();
        let dir = file.rsplit_once('/').map_or("", |(dir, _)| dir);
        let guide = ["README.md", "crates/svc-api/README.md"].contains(&file.as_str());
        let guide = guide || file.starts_with("docs/");
        let (mut fenced, mut example) = (false, false);
        for (n, line) in text.lines().enumerate() {
            let at = format!("{file}:{}", n + 1);
            let unlocked = line.contains("cargo install ") && !line.contains("--locked");
            if unlocked && file.ends_with(".md") {
                let fix = "add --locked, or Cargo.lock is ignored";
                out.push(format!("{at}: `cargo install` {fix}"));
            }
            if let Some(fence) = line.trim_start().strip_prefix("```") {
                example = !fenced && (fence.is_empty() || fence.starts_with("rust"));
                fenced = !fenced;
            } else if example && guide {
                for name in example_crates(line) {
                    let fix = "not svc-api: use its re-export (svc_api::...) or the prelude";
                    out.push(format!("{at}: the example names `{name}`, {fix}"));
                }
            }
            // In Rust, what [`code`] blanks with spaces: comments and strings, not tests' tabs.
            let bytes = code.get(n).map_or(&b""[..], |code| code.as_bytes());
            let blank = |i| bytes.get(i).is_some_and(|b| *b != b' ');
            let chars = line.char_indices();
            let line: String = chars.map(|(i, c)| if blank(i) { ' ' } else { c }).collect();
            for (_, path) in named_paths(&line).iter().filter(|p| !exists(dir, p)) {
                let fix = "not in the repository: say where it is now";
                out.push(format!("{at}: names `{path}`, {fix}"));
            }
        }
    }
    out
}

/// The crates of [`NOT_IN_EXAMPLES`] a line of Rust names by their own path: `a::b::c` names
/// `a`; `x.y::<T>` and `<T>::f` name none.
fn example_crates(line: &str) -> impl Iterator<Item = &str> {
    let code = !line.trim_start().starts_with("//");
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let paths = line.match_indices("::").filter(move |_| code);
    paths.filter_map(move |(i, _)| {
        let name = line[..i].rsplit(|c| !word(c)).next().unwrap_or_default();
        let before = line[..i - name.len()].chars().next_back();
        let path = !matches!(before, Some(':' | '.' | '>'));
        (path && NOT_IN_EXAMPLES.split(' ').any(|c| c == name)).then_some(name)
    })
}

/// The paths a line names, each with whether it is relative to its file: Markdown links'
/// targets that are no URL, anchor or Rust item; then words of path characters that start with
/// a top-level directory or `../`, end with a file extension, or are a directory in backticks.
fn named_paths(line: &str) -> Vec<(bool, String)> {
    let mut out = Vec::new();
    let mut rest = line.to_owned();
    // Links first, blanked out of the line so that their targets are not read again as words.
    while let Some(at) = rest.find("](").map(|at| at + 2) {
        let len = rest[at..].find([')', ' ', '\t']).unwrap_or(rest.len() - at);
        let target = &rest[at..at + len];
        let target = target.trim_matches(['<', '>']).split('#').next();
        let target = target.unwrap_or_default();
        // A rustdoc page (a crate's docs link the emulator's) is `cargo doc`'s output.
        let page = target.ends_with(".html");
        let is_path = target.contains('/') || EXTENSIONS.iter().any(|e| target.ends_with(e));
        if is_path && !page && !target.contains(':') && !is_placeholder(target) {
            out.push((true, target.to_owned()));
        }
        rest.replace_range(at - 2..at + len, &" ".repeat(len + 2));
    }
    let path_char = |c: char| c.is_alphanumeric() || "_./-*{}<>$~".contains(c);
    let mut start = None;
    for (i, c) in rest.char_indices().chain([(rest.len(), ' ')]) {
        let Some(s) = start.filter(|_| !path_char(c)) else {
            start = start.or(path_char(c).then_some(i));
            continue;
        };
        start = None;
        // `records/` in backticks is a directory; trailing dots and dashes end a sentence.
        let backticked = rest[..s].ends_with('`') && rest[i..].starts_with('`');
        let word = rest[s..i].trim_end_matches(['.', '-']);
        let file = word.rsplit('/').next().unwrap_or_default();
        let stem = EXTENSIONS.iter().find_map(|e| file.strip_suffix(e));
        // `pages.rs`, not a host (`package.metadata.docs.rs`); `/x` and `//x` are none.
        let named = TOP_DIRS.split(' ').any(|d| word.starts_with(d))
            || word.starts_with("../")
            || stem.is_some_and(|s| !s.is_empty() && !s.trim_start_matches('.').contains('.'))
            || (backticked && word.ends_with('/'));
        if named && !word.starts_with('/') && !is_placeholder(&rest[s..i]) {
            out.push((word.starts_with("../"), word.to_owned()));
        }
    }
    out
}

/// A path with a placeholder in it: a glob, a format argument, `...`, a segment in capitals
/// (`fuzz/artifacts/TARGET/`) or a file named with one letter (`src/x.rs:1:2`).
fn is_placeholder(path: &str) -> bool {
    let placeholder = |s: &str| {
        let capitals = s.chars().all(|c| c.is_ascii_uppercase() || c == '_');
        s.len() > 1 && (capitals || s.split('.').next().is_some_and(|stem| stem.len() == 1))
    };
    let marks = path.contains(['*', '{', '}', '<', '>', '$', '~']) || path.contains("...");
    marks || path.split('/').any(placeholder)
}

/// Every crate under `crates/` ships the root's licence files as they are (it declares `MIT OR
/// Apache-2.0`), and its README links nothing out of it by a relative path (broken on crates.io).
pub(super) fn publishing(root: &Path, files: &[String]) -> Vec<String> {
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap_or_default();
    let mut out = Vec::new();
    let crates = files.iter().filter_map(|f| f.strip_prefix("crates/"));
    let crates = crates.filter_map(|f| f.strip_suffix("/Cargo.toml"));
    for name in crates.filter(|c| !c.contains('/')) {
        for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
            let path = format!("crates/{name}/{licence}");
            if read(licence).is_empty() || read(&path) != read(licence) {
                out.push(format!("{path}:1: not the root's {licence}: copy it"));
            }
        }
        let readme = format!("crates/{name}/README.md");
        for (n, line) in read(&readme).lines().enumerate() {
            if line.contains("](../") || line.contains("](/") {
                let fix = "a relative link out of the crate breaks on crates.io: link the repo";
                out.push(format!("{readme}:{}: {fix}", n + 1));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_named_in_a_line_and_crates_in_an_example() {
        let line = "See [guide](../docs/guide.md#x), ../ab/cd `records/`, crates/x/lib.rs:12, \
                    pages.rs. [api](https://e.com/a.md) crate::x::Y package.metadata.docs.rs \
                    src/*.rs fuzz/artifacts/TARGET/ src/x.rs /usr/lib.rs `ab` https://a.b/c.rs";
        let named = named_paths(line);
        let named: Vec<(bool, &str)> = named.iter().map(|(r, p)| (*r, p.as_str())).collect();
        let links = [(true, "../docs/guide.md"), (true, "../ab/cd")];
        let words = ["records/", "crates/x/lib.rs", "pages.rs"].map(|w| (false, w));
        assert_eq!(named, [&links[..], &words].concat());
        let example = "http::get(); let b: bytes::B = svc_api::http::f(y.http::<u8>());";
        let names: Vec<&str> = example_crates(example).collect();
        assert_eq!(names, ["http", "bytes"]);
    }
}
