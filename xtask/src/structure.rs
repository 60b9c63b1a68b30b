//! `cargo xtask structure`: three structural rules, checked by reading the sources (std only, no
//! build), so they run first in `cargo xtask ci`.
//!
//! - Rule A, the emulator's layering (`crates/svc-emulator/src/`): the modules that know nothing
//!   of HTTP (`storage/`, `config/`, `util/`, the databases) use neither axum nor `crate::http`; a
//!   slice (one per operation group of svc-api) never uses another slice; only `cli/` and
//!   `main.rs` use clap. References are `crate::X` paths (in `use` trees too, grouped or over
//!   several lines), `super::X` paths that climb to the crate root, and `axum`/`clap` paths,
//!   in code only: comments and strings do not count. Test code is left out: `#[cfg(test)] mod`
//!   blocks, files named `tests.rs` and anything under a `tests/` directory. In the same files,
//!   a records flow's statement (`INSERT INTO`, `UPDATE ... SET`, `DELETE FROM`, `FOR UPDATE`,
//!   in a string literal) is written only in its flow's file ([`FLOW_STATEMENTS`]). The
//!   engine's rules (`crates/svc-engine/src/`) write no SQL text at all ([`engine_sql`]) and
//!   none of their files passes [`ENGINE_FILE_LINES`] code lines. That the engine imports no
//!   layer of the emulator, no driver and no HTTP is Cargo's to hold: it is a crate of its own
//!   that depends on none of them.
//! - Ratchets, printed at the end ([`Figures`]): the seam a new database server writes (the
//!   required methods of the emulator's traits that svc-emulator-postgres implements, `structure/seam.rs`)
//!   stays under [`SEAM_CEILING`] in [`SEAM_TRAITS_CEILING`] traits, each database folder's
//!   files under [`FILES_PER_DATABASE_CEILING`] (`structure/files.rs`), and `flow/`'s
//!   `#[allow(dead_code)]` under [`FLOW_DEAD_CODE_CEILING`]. Each may only fall: lower the
//!   constant when it does.
//! - Rule B, references: no file of the repository (`.md`, `.rs`, `.toml`, `.sh`, `.yml`,
//!   `.ci/run`) names a repository path that does not exist: Markdown links, and path-like words
//!   in docs, in comments and in string literals. Moving a file cannot leave a stale mention
//!   behind. The few true exceptions are in [`ALLOWED`].
//! - Rule C, publishing: every crate under `crates/` ships the root's `LICENSE-MIT` and
//!   `LICENSE-APACHE` (byte for byte: the crates declare `MIT OR Apache-2.0`), and its README
//!   links nothing outside the crate by a relative path, which would break on crates.io; every
//!   `cargo install` in the docs says `--locked` (else the lock file is ignored); the Rust
//!   examples of the guides and READMEs name no crate a user of svc-api would have to add
//!   besides tokio and serde ([`NOT_IN_EXAMPLES`]: they come through svc-api's re-exports).
//!
//! Each violation prints as `path:line: what is wrong`.

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

mod files;
mod repeats;
mod seam;

/// Runs the rules from the workspace root; prints every violation, then the ratchets' figures,
/// and returns whether none.
pub fn structure(root: &Path) -> bool {
    let files = match repo_files(root) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("structure: cannot list the repository's files: {e}");
            return false;
        }
    };
    let sources = sources_under(root, &files, EMULATOR_SRC);
    let core = sources_under(root, &files, CORE_SRC);
    let mut databases = Vec::new();
    let mut violations = layering(EMULATOR_SRC, &sources);
    violations.extend(layering(CORE_SRC, &core));
    for (folder, dir) in DATABASE_CRATES {
        for (path, src) in sources_under(root, &files, dir) {
            let named = format!("{folder}/{path}");
            for (line, rule) in flow_statements_outside_flows(&named, &src) {
                violations.push(format!("{dir}{path}:{line}: {rule}"));
            }
            databases.push((named, src));
        }
    }
    let figures = Figures::new(&sources, &core, &databases);
    violations.extend(engine_rules(&sources_under(root, &files, ENGINE_SRC)));
    violations.extend(figures.violations());
    let layering_count = violations.len();
    violations.extend(references(root, &files));
    violations.extend(publishing(root, &files));
    for v in &violations {
        eprintln!("{v}");
    }
    let references_count = violations.len() - layering_count;
    if !violations.is_empty() {
        eprintln!();
    }
    figures.print();
    // (Rule C's violations are few and say what they are; they count with the references.)
    if violations.is_empty() {
        eprintln!(
            "structure: the emulator's layers hold and every path named in the repository \
             exists; {}",
            figures.summary()
        );
        true
    } else {
        eprintln!(
            "structure: {layering_count} layering violation(s) in the emulator, \
             {references_count} reference(s) to missing paths; {}",
            figures.summary()
        );
        false
    }
}

/// Crates that the docs' examples reach through svc-api (`svc_api::http`, `svc_api::model`,
/// `svc_api::prelude`'s stream traits, ...), never by their own name: a user who copies an
/// example has svc-api, tokio and serde, not these.
const NOT_IN_EXAMPLES: &[&str] = &[
    "bytes",
    "futures",
    "futures_core",
    "futures_util",
    "http",
    "serde_json",
    "svc_auth",
    "svc_model",
    "svc_transport",
];

/// The crates an example names by their own path (`name::...`), with the line of each.
fn example_crates(markdown: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let (mut in_block, mut in_rust) = (false, false);
    for (number, line) in markdown.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(fence) = trimmed.strip_prefix("```") {
            in_rust = !in_block && (fence.is_empty() || fence.starts_with("rust"));
            in_block = !in_block;
            continue;
        }
        if !in_rust || trimmed.starts_with("//") {
            continue;
        }
        let bytes = line.as_bytes();
        for (i, _) in line.match_indices("::") {
            let start = line[..i]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |p| p + 1);
            let before = start.checked_sub(1).map(|p| bytes[p]);
            // `a::b::c` counts once, for `a`; `x.y::<T>` and `<T>::f` are not crate paths.
            if matches!(before, Some(b':' | b'.' | b'>')) || start == i {
                continue;
            }
            found.push((number + 1, line[start..i].to_owned()));
        }
    }
    found
}

/// Rule C: licence files and README links of the published crates.
fn publishing(root: &Path, files: &[String]) -> Vec<String> {
    let mut violations = Vec::new();
    let crates: HashSet<&str> = files
        .iter()
        .filter_map(|f| {
            f.strip_prefix("crates/")?
                .split_once("/Cargo.toml")
                .map(|(c, _)| c)
        })
        .filter(|c| !c.contains('/'))
        .collect();
    let mut crates: Vec<&str> = crates.into_iter().collect();
    crates.sort_unstable();
    for name in crates {
        for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
            let ours = std::fs::read(root.join(licence)).unwrap_or_default();
            let path = format!("crates/{name}/{licence}");
            match std::fs::read(root.join(&path)) {
                Ok(theirs) if !ours.is_empty() && theirs == ours => {}
                Ok(_) => violations.push(format!("{path}:1: differs from the root's {licence}")),
                Err(_) => violations.push(format!(
                    "crates/{name}/Cargo.toml:1: the crate ships no {licence} (copy the root's)"
                )),
            }
        }
        let readme = format!("crates/{name}/README.md");
        let text = std::fs::read_to_string(root.join(&readme)).unwrap_or_default();
        for (number, line) in text.lines().enumerate() {
            if line.contains("](../") || line.contains("](/") {
                violations.push(format!(
                    "{readme}:{}: a relative link out of the crate breaks on crates.io; link \
                     the repository's page instead",
                    number + 1
                ));
            }
        }
    }
    for file in files.iter().filter(|f| f.ends_with(".md")) {
        let text = std::fs::read_to_string(root.join(file)).unwrap_or_default();
        // The guides and svc-api's README speak to users of svc-api (the other crates' READMEs
        // to users of those crates, who have their dependencies).
        let guide =
            file.starts_with("docs/") || file == "README.md" || file == "crates/svc-api/README.md";
        if guide {
            for (number, name) in example_crates(&text) {
                if NOT_IN_EXAMPLES.contains(&name.as_str()) {
                    violations.push(format!(
                        "{file}:{number}: the example names `{name}`, which a user of svc-api \
                         does not have: use its re-export (svc_api::...) or svc_api::prelude"
                    ));
                }
            }
        }
        for (number, line) in text.lines().enumerate() {
            if line.contains("cargo install ") && !line.contains("--locked") {
                violations.push(format!(
                    "{file}:{}: `cargo install` without `--locked` ignores Cargo.lock",
                    number + 1
                ));
            }
        }
    }
    violations
}

/// The repository's files: tracked ones and new ones not ignored (`git ls-files -co
/// --exclude-standard`), so that a file just created counts before it is added; without the ones
/// deleted from the work tree.
fn repo_files(root: &Path) -> Result<Vec<String>, String> {
    let output = Command::new("git")
        .args(["ls-files", "--cached", "--others", "--exclude-standard"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("git: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
    }
    let mut files: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|f| root.join(f).is_file())
        .map(str::to_owned)
        .collect();
    files.sort();
    files.dedup();
    Ok(files)
}

// ---------------------------------------------------------------------------------------------
// Reading Rust sources

/// The code of a Rust source with its comments (`//`, `///`, `//!`, `/* */`) and the contents of
/// its string and char literals blanked out, newlines kept: what remains is code, on the same
/// lines as in the file, so that a comment or a string that mentions `axum` is no reference.
fn rust_code(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    // Blanks one char: a space, or the newline itself.
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let after_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            // Block comments nest.
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if let Some((hashes, start)) = raw_string_start(&chars, i).filter(|_| !after_ident) {
            // r"...", r#"..."#, br#"..."#: no escapes; ends at `"` and as many `#`. The opening
            // quote is kept, so that the quotes left in the code pair up.
            out.extend(&chars[i..=start]);
            i = start + 1;
            while i < chars.len() {
                let closes =
                    chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#'));
                if closes {
                    out.push('"');
                    out.extend(std::iter::repeat_n('#', hashes));
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '"' {
            out.push('"');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let len = if chars[i] == '\\' { 2 } else { 1 };
                for &c in chars.iter().skip(i).take(len) {
                    blank(&mut out, c);
                }
                i += len;
            }
            out.push('"');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A char literal ('x', '\n', '\u{7f}'); a lifetime ('a) has no closing quote.
            out.push('\'');
            i += 1;
            if chars.get(i) == Some(&'\\') {
                // The backslash and the char it escapes (which may be a quote).
                out.push_str("  ");
                i += 2;
            }
            while i < chars.len() && chars[i] != '\'' {
                blank(&mut out, chars[i]);
                i += 1;
            }
            out.push('\'');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// At `r"`, `r#"`, `br"`, ...: the number of `#` and the index of the opening `"`.
fn raw_string_start(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    (chars.get(j + hashes) == Some(&'"')).then_some((hashes, j + hashes))
}

/// Which lines of `code` (as returned by [`rust_code`]) are test code: a `#[cfg(test)]` line
/// followed (after other attributes) by a `mod` item, through the end of that module's braces,
/// or through its `;` for a module in a file of its own (the file itself is left out when it is
/// `tests.rs` or under `tests/`, see [`is_test_file`]).
fn test_lines(code: &str) -> Vec<bool> {
    let lines: Vec<&str> = code.lines().collect();
    let mut test = vec![false; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[cfg(test)]" {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < lines.len() && (lines[j].trim().is_empty() || lines[j].trim().starts_with("#[")) {
            j += 1;
        }
        let item = lines.get(j).map_or("", |l| l.trim());
        let item = item.strip_prefix("pub").map_or(item, |rest| {
            rest.trim_start_matches(|c: char| c != ' ').trim_start()
        });
        if !item.starts_with("mod ") {
            i += 1;
            continue;
        }
        // From the `mod` line on: its `;`, or the `}` that closes its first `{`.
        let mut depth = 0usize;
        let mut end = lines.len() - 1;
        'module: for (k, line) in lines.iter().enumerate().skip(j) {
            for c in line.chars() {
                match c {
                    ';' if depth == 0 => {
                        end = k;
                        break 'module;
                    }
                    '{' => depth += 1,
                    '}' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = k;
                            break 'module;
                        }
                    }
                    _ => {}
                }
            }
        }
        test[i..=end].iter_mut().for_each(|t| *t = true);
        i = end + 1;
    }
    test
}

/// Test files: `tests.rs`, or anything under a `tests/` directory.
fn is_test_file(path: &str) -> bool {
    path.rsplit('/').next() == Some("tests.rs") || path.split('/').any(|c| c == "tests")
}

// ---------------------------------------------------------------------------------------------
// Rule A: the emulator's layering

/// The emulator's sources.
const EMULATOR_SRC: &str = "crates/svc-emulator/src/";

/// The layers below the databases, a crate of their own (svc-emulator-core): `dialect`, `flow`
/// and `backend`, with the ranks of [`RANKS`]. That they import nothing of the emulator, no
/// driver and no HTTP is Cargo's to hold; the order among them is checked here.
const CORE_SRC: &str = "crates/svc-emulator-core/src/";

/// The databases' crates, each with the folder name the figures give it (the folder it was in
/// [`EMULATOR_SRC`]): what imports what is Cargo's to hold there; their flow statements
/// ([`FLOW_STATEMENTS`]), seam, files and repeats are read here.
const DATABASE_CRATES: &[(&str, &str)] = &[
    ("sqlite", "crates/svc-emulator-sqlite/src/"),
    ("postgres", "crates/svc-emulator-postgres/src/"),
    ("mysql", "crates/svc-emulator-mysql/src/"),
];

/// Top-level modules of the emulator that are layers: shared code any slice may use.
const LAYERS: &[&str] = &[
    "http", "sessions", "snapshot", "catalog", "backend", "flow", "dialect", "sqlite", "postgres",
    "mysql", "storage", "runtime", "config", "demo", "util", "cli", "ui", "private", "location",
];

/// The emulator's layers, lowest first: a module uses modules of its own rank or below, never
/// above ([`rank`]). The slices ([`SLICES`]) sit between `http` and `runtime`.
const RANKS: &[(&str, u8)] = &[
    ("util", 0),
    // svc-emulator-core's helpers below its flows: data files only their owner reads, a
    // database's location without its password.
    ("private", 0),
    ("location", 0),
    // The demo resource's name, rows and SQLite seed, which the settings name.
    ("demo", 0),
    // SQL text, pure: what every database writes the same way, over the engine's rules.
    ("dialect", 2),
    ("config", 3),
    ("storage", 4),
    // Each operation's flow, written once over what every database implements (each flow
    // file is named like the database folders' files that feed it).
    ("flow", 5),
    // The backend interface (`backend/mod.rs`): the trait every database implements.
    ("backend", 6),
    ("sqlite", 7),
    ("postgres", 7),
    ("mysql", 7),
    // The catalog of served resources, and which database opens each (`catalog/open.rs`): the
    // one layer above the databases that names them.
    ("catalog", 8),
    // The user sessions service, which the HTTP layer checks `JWT` credentials with.
    ("sessions", 8),
    // A project's state saved and put back: its resources (through the catalog), its
    // rows of the meta store, its sessions.
    ("snapshot", 8),
    ("http", 9),
    // The web page, in front of the router: it calls the API's routes (the slices) itself.
    ("ui", 10),
    ("runtime", 11),
    ("cli", 12),
];

/// The rank of the slices: above the HTTP layer they use, below the runtime that starts them.
const SLICE_RANK: u8 = 10;

/// The layer above the databases that opens them, the one place that names a concrete
/// database (and the Cargo feature that builds it).
const CATALOG: &str = "catalog";

/// The backends, one folder per database. Nothing names one but itself and the catalog; the
/// Cargo feature that builds one is named only there and in `lib.rs` (which declares it).
const BACKENDS: &[&str] = &["sqlite", "postgres", "mysql"];

/// The rank of a top-level module.
fn rank(top: &str) -> Option<u8> {
    if SLICES.contains(&top) {
        return Some(SLICE_RANK);
    }
    RANKS.iter().find(|(name, _)| *name == top).map(|(_, r)| *r)
}

/// Top-level modules that are slices, one per operation group of svc-api and named like its
/// modules. `tools` is being split into `users` and `teams`: all three are listed, and a slice
/// that does not exist is simply never met.
const SLICES: &[&str] = &[
    "actions",
    "pages",
    "projects",
    "proxy",
    "records",
    "sql",
    "resources",
    "account",
    "fixture",
    "tools",
    "users",
    "teams",
];

/// The database driver crates, each with the folders that may name it: its backend's own, and
/// for SQLite the emulator's own state (pages, accounts, settings), which it keeps in SQLite.
/// (The engine's rules are the same for every database: svc-engine depends on none of them.)
const DRIVERS: &[(&str, &[&str])] = &[
    ("rusqlite", &["sqlite", "storage", "sessions"]),
    ("libsqlite3_sys", &["sqlite"]),
    ("tokio_postgres", &["postgres"]),
    ("deadpool_postgres", &["postgres"]),
    ("postgres_types", &["postgres"]),
    ("mysql_async", &["mysql"]),
    ("mysql_common", &["mysql"]),
    // The databases' crates: the catalog opens them, nothing else names them.
    ("svc_emulator_sqlite", &["catalog"]),
    ("svc_emulator_postgres", &["catalog"]),
    ("svc_emulator_mysql", &["catalog"]),
];

/// The layers that know nothing of HTTP: no axum, no `crate::http`.
const NO_HTTP: &[&str] = &[
    "backend", "sessions", "snapshot", "catalog", "flow", "dialect", "sqlite", "postgres", "mysql",
    "storage", "config", "demo", "util", "private", "location",
];

/// What a line of code refers to.
#[derive(Debug, PartialEq, Eq)]
enum Reference {
    /// A top-level module of the crate: `crate::X`, or `super::X` climbing to the crate root.
    Module(String),
    Axum,
    Clap,
    /// A database driver crate (`rusqlite`, `tokio_postgres`, ...).
    Driver(String),
}

/// One token of Rust code: an identifier (or number), `::`, or one punctuation char.
#[derive(Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// The tokens of `code` (from [`rust_code`]), each with its line number (1-based).
fn tokens(code: &str) -> Vec<(Token, usize)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_alphanumeric() || c == '_' {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push((Token::Ident(chars[start..i].iter().collect()), n + 1));
                continue;
            }
            if c == ':' && chars.get(i + 1) == Some(&':') {
                out.push((Token::PathSep, n + 1));
                i += 2;
                continue;
            }
            if !c.is_whitespace() {
                out.push((Token::Punct(c), n + 1));
            }
            i += 1;
        }
    }
    out
}

/// The references of one emulator source, with their lines, test code left out. `depth` is how
/// deep the file's module sits below the crate root (`pages.rs`, `records/mod.rs`: 1;
/// `http/extract.rs`: 2), to tell which `super::` paths reach the root; a module declared inline
/// inside a file is not counted.
fn module_references(src: &str, depth: usize) -> Vec<(usize, Reference)> {
    let code = rust_code(src);
    let test = test_lines(&code);
    let tokens = tokens(&code);
    let ident = |i: usize| match tokens.get(i) {
        Some((Token::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let is = |i: usize, t: &Token| tokens.get(i).is_some_and(|(x, _)| x == t);
    let mut out = Vec::new();
    for (i, (token, line)) in tokens.iter().enumerate() {
        let Token::Ident(name) = token else { continue };
        // A path starts here unless it continues one (`a::name`) or is a field (`a.name`).
        let starts_path = i == 0 || !(is(i - 1, &Token::PathSep) || is(i - 1, &Token::Punct('.')));
        if !starts_path {
            continue;
        }
        match name.as_str() {
            "crate" if is(i + 1, &Token::PathSep) => {
                out.extend(
                    crate_children(&tokens, i + 2)
                        .into_iter()
                        .map(|(m, l)| (l, m)),
                );
            }
            "super" => {
                // `super::super::X`: X is a top-level module when the supers reach the root.
                let mut j = i;
                let mut supers = 0;
                while ident(j) == Some("super") && is(j + 1, &Token::PathSep) {
                    supers += 1;
                    j += 2;
                }
                if supers > 0
                    && supers == depth
                    && let Some(child) = ident(j)
                {
                    out.push((tokens[j].1, Reference::Module(child.to_owned())));
                }
            }
            driver if DRIVERS.iter().any(|(d, _)| *d == driver) => {
                let used = is(i + 1, &Token::PathSep)
                    || (i > 0 && matches!(ident(i - 1), Some("use" | "crate")));
                if used {
                    out.push((*line, Reference::Driver(name.clone())));
                }
            }
            "axum" | "clap" => {
                let used = is(i + 1, &Token::PathSep)
                    || (i > 0 && matches!(ident(i - 1), Some("use" | "crate")));
                if used {
                    let r = if name == "axum" {
                        Reference::Axum
                    } else {
                        Reference::Clap
                    };
                    out.push((*line, r));
                }
            }
            _ => {}
        }
    }
    out.retain(|(line, _)| !test.get(line - 1).copied().unwrap_or(false));
    out
}

/// After `crate::` at token `i`: the top-level modules named, with their lines. One for a path
/// (`crate::http::extract`), one per item of a group (`crate::{http, pages::Page}`); `self`,
/// `*` and the crate-root items (`crate::Emulator`) come out too and are ignored by the rules.
fn crate_children(tokens: &[(Token, usize)], i: usize) -> Vec<(Reference, usize)> {
    match tokens.get(i) {
        Some((Token::Ident(name), line)) => vec![(Reference::Module(name.clone()), *line)],
        Some((Token::Punct('{'), _)) => {
            let mut out = Vec::new();
            let mut depth = 0;
            let mut item_start = true;
            for (token, line) in &tokens[i..] {
                match token {
                    Token::Punct('{') => {
                        depth += 1;
                        item_start = depth == 1;
                    }
                    Token::Punct('}') => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    Token::Punct(',') if depth == 1 => item_start = true,
                    Token::Ident(name) if depth == 1 && item_start => {
                        out.push((Reference::Module(name.clone()), *line));
                        item_start = false;
                    }
                    _ => item_start = false,
                }
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The violations of one emulator source, `path` relative to `crates/svc-emulator/src/`.
fn layering_violations(path: &str, src: &str) -> Vec<(usize, String)> {
    let mut parts: Vec<&str> = path.split('/').collect();
    let file = parts.pop().unwrap_or_default();
    if file != "mod.rs" {
        parts.push(file.trim_end_matches(".rs"));
    }
    if matches!(path, "lib.rs" | "main.rs") {
        // The crate root: declares the modules, re-exports, starts the binary.
        return Vec::new();
    }
    let top = parts.first().copied().unwrap_or("");
    let mut out = Vec::new();
    if !LAYERS.contains(&top) && !SLICES.contains(&top) {
        out.push((
            1,
            format!(
                "`{top}` is neither a layer nor a slice of the emulator \
                 (add it to LAYERS or SLICES in xtask/src/structure.rs)"
            ),
        ));
    }
    for (line, reference) in module_references(src, parts.len()) {
        let rule = match &reference {
            Reference::Axum if NO_HTTP.contains(&top) => Some(format!(
                "`{top}/` uses axum (the layers below http/ know nothing of HTTP)"
            )),
            Reference::Module(m) if m == "http" && NO_HTTP.contains(&top) => Some(format!(
                "`{top}/` uses crate::http (the layers below http/ know nothing of HTTP)"
            )),
            Reference::Module(m)
                if m != top && SLICES.contains(&top) && SLICES.contains(&m.as_str()) =>
            {
                Some(format!(
                    "slice `{top}` uses slice `{m}` (slices never use each other: move the \
                     shared piece to a layer)"
                ))
            }
            Reference::Driver(d)
                if !DRIVERS
                    .iter()
                    .any(|(name, folders)| name == d && folders.contains(&top)) =>
            {
                let who = if d.starts_with("svc_emulator_") {
                    "a database server's crate: only the catalog opens one"
                } else {
                    "a database driver: named only in its backend's folder"
                };
                Some(format!(
                    "`{path}` uses `{d}`, {who} (the engine's rules are the same for every \
                     database)"
                ))
            }
            Reference::Clap if top != "cli" => {
                Some(format!("`{path}` uses clap (only cli/ and main.rs do)"))
            }
            Reference::Module(m)
                if BACKENDS.contains(&m.as_str()) && m != top && top != CATALOG =>
            {
                Some(format!(
                    "`{path}` names the {m} backend: only the backend itself and the catalog \
                     (catalog/open.rs) name a concrete database; use the `Backend` trait"
                ))
            }
            Reference::Module(m) => match (rank(top), rank(m)) {
                (Some(from), Some(to)) if to > from => Some(format!(
                    "`{path}` uses `{m}`, a layer above it (the emulator's layers import \
                         only downward: util and demo, engine, dialect, config, storage, flow, \
                         backend, the backends, \
                         the catalog and sessions, http, the slices, runtime, cli)"
                )),
                _ => None,
            },
            _ => None,
        };
        out.extend(rule.map(|r| (line, r)));
    }
    out.extend(backend_features(path, src));
    out
}

/// The lines of `src` that gate code on a backend's Cargo feature (`feature = "postgres"`),
/// unless `path` is the crate root, the catalog or that backend's own folder: a backend is
/// switched on where it is registered, nowhere above it.
fn backend_features(path: &str, src: &str) -> Vec<(usize, String)> {
    let top = path.split('/').next().unwrap_or_default();
    let mut out = Vec::new();
    for (number, line) in src.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        for backend in BACKENDS {
            let gated = code.contains(&format!("feature = \"{backend}\""));
            if gated
                && top.trim_end_matches(".rs") != *backend
                && top != CATALOG
                && path != "lib.rs"
            {
                out.push((
                    number + 1,
                    format!(
                        "`{path}` is gated on the `{backend}` feature: only lib.rs, the catalog \
                         (catalog/open.rs) and the backend's own folder name it"
                    ),
                ));
            }
        }
    }
    out
}

/// The statements of the records' write flows, each with the only files that may write it: a
/// create, an update and a delete are written once (`flow/write.rs`), and what the ORM does to
/// the rows that refer to a deleted one once too (`flow/delete.rs`). A saved copy of a
/// database's data (`flow/snapshot.rs`) copies every row into its store and empties the tables
/// and puts the rows back at a restore: those `INSERT INTO ... SELECT` and `DELETE FROM`
/// statements are written once there, for every database server, and no backend writes them
/// either. A database gives its dialect (quoting, binds, `RETURNING` or a read-back), never
/// these statements; the emulator's own state (`storage/`, `sessions/`: pages, settings,
/// accounts) is no records flow and is not checked.
const FLOW_STATEMENTS: &[(&str, &[&str])] = &[
    (
        "INSERT INTO",
        &["flow/write.rs", "flow/snapshot.rs", "flow/export.rs"],
    ),
    ("UPDATE … SET", &["flow/write.rs", "flow/delete.rs"]),
    (
        "DELETE FROM",
        &[
            "flow/write.rs",
            "flow/delete.rs",
            "flow/snapshot.rs",
            "flow/export.rs",
        ],
    ),
    // The lock clause is a word of the dialect (`Dialect::LOCK`), which the write flow adds.
    ("FOR UPDATE", &["dialect/mod.rs"]),
];

/// The folders whose string literals are read for [`FLOW_STATEMENTS`]: the flows and the
/// backends (the engine writes no SQL at all, [`engine_sql`]).
const FLOW_CHECKED: &[&str] = &["flow", "dialect", "sqlite", "postgres", "mysql", "backend"];

/// Files of those folders whose writes are the emulator's own contract, not the engine's, as
/// (folder, file): the built-in tools resource's schema, seed and strict writes of users and
/// teams (docs/contract.md 5.3), in svc-emulator-sqlite's `src/backend.rs` (its folder named as
/// in [`DATABASE_CRATES`]).
const OWN_CONTRACT_WRITES: &[(&str, &str)] = &[("sqlite", "backend.rs")];

/// The string literals of non-test code, each with the line it starts on and its text with
/// every run of whitespace (a `\` line continuation included) made one space.
fn string_literals(src: &str) -> Vec<(usize, String)> {
    literals(src)
        .into_iter()
        .map(|lit| {
            let text = lit.text.replace('\\', " ");
            (
                lit.line,
                text.split_whitespace().collect::<Vec<_>>().join(" "),
            )
        })
        .collect()
}

/// A string literal of non-test code, as written.
#[derive(Debug)]
struct Literal {
    /// The line it starts on (1-based).
    line: usize,
    /// Its text between the quotes, escapes as written.
    text: String,
    /// A raw string (`r"..."`, `r#"..."#`): no escapes.
    raw: bool,
}

/// The string literals of non-test code (byte strings too), in order.
fn literals(src: &str) -> Vec<Literal> {
    let code: Vec<char> = rust_code(src).chars().collect();
    let test = test_lines(&code.iter().collect::<String>());
    let mut out = Vec::new();
    let mut open: Option<Literal> = None;
    let mut line = 0;
    for (i, (&c, s)) in code.iter().zip(src.chars()).enumerate() {
        if c == '"' {
            open = match open.take() {
                Some(lit) => {
                    if !test.get(lit.line - 1).copied().unwrap_or(false) {
                        out.push(lit);
                    }
                    None
                }
                None => {
                    let before = code[..i].iter().rev().find(|&&c| c != '#');
                    Some(Literal {
                        line: line + 1,
                        text: String::new(),
                        raw: before == Some(&'r'),
                    })
                }
            };
        } else if let Some(lit) = open.as_mut() {
            lit.text.push(s);
        }
        if c == '\n' {
            line += 1;
        }
    }
    out
}

/// The value a literal stands for: its escapes read (`\n`, `\"`, `\\`, `\u{..}`; a `\` at
/// the end of a line skips the newline and the next line's indent, as Rust does).
fn literal_value(lit: &Literal) -> String {
    if lit.raw {
        return lit.text.clone();
    }
    let mut out = String::with_capacity(lit.text.len());
    let mut chars = lit.text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\n') => while chars.next_if(|c| c.is_whitespace()).is_some() {},
            Some('u') => {
                let hex: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let code = u32::from_str_radix(hex.trim_start_matches('{'), 16).ok();
                out.extend(code.and_then(char::from_u32));
            }
            Some('x') => {
                let hex: String = chars.by_ref().take(2).collect();
                out.extend(u8::from_str_radix(&hex, 16).ok().map(char::from));
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// The statement of [`FLOW_STATEMENTS`] that `sql` begins or holds, if any.
fn flow_statement(sql: &str) -> Option<&'static str> {
    // Upper case only: the emulator writes SQL's words in capitals, and a message that says
    // "update" in prose is no statement.
    let update_set = sql
        .find("UPDATE ")
        .is_some_and(|at| sql[at..].contains(" SET "));
    FLOW_STATEMENTS
        .iter()
        .map(|(name, _)| *name)
        .find(|name| match *name {
            "UPDATE … SET" => update_set,
            other => sql.contains(other),
        })
}

/// The string literals of an emulator source (`path` relative to `crates/svc-emulator/src/`)
/// that write a flow's statement outside the flow's own file.
fn flow_statements_outside_flows(path: &str, src: &str) -> Vec<(usize, String)> {
    let top = path.split('/').next().unwrap_or_default();
    let own_contract = OWN_CONTRACT_WRITES.iter().any(|(folder, file)| {
        path.strip_prefix(folder).and_then(|p| p.strip_prefix('/')) == Some(file)
    });
    if !FLOW_CHECKED.contains(&top) || own_contract {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (line, text) in string_literals(src) {
        let Some(statement) = flow_statement(&text) else {
            continue;
        };
        // SQLite's own record of its `AUTOINCREMENT` keys is no model: setting it is a
        // database's side of the generated keys (`Exports::put_keys`), as PostgreSQL's
        // `setval` and MySQL's `ALTER TABLE` are.
        if path.starts_with("sqlite/") && text.contains("sqlite_sequence") {
            continue;
        }
        let homes = FLOW_STATEMENTS
            .iter()
            .find(|(name, _)| *name == statement)
            .map_or(&[][..], |(_, homes)| *homes);
        if !homes.contains(&path) {
            out.push((
                line,
                format!(
                    "`{path}` writes `{statement}`, a statement of a records flow: it belongs in \
                     {} (a database gives its dialect, the flow writes the statement)",
                    homes.join(" or ")
                ),
            ));
        }
    }
    out
}

/// SQL's words as the emulator writes them, in capitals: a literal holding one is SQL text
/// (prose says "select" and "order by" in lower case). Each is matched where no letter or digit
/// runs into it, in the literal's value with its whitespace made single spaces and a space
/// added at each end (`"FROM t"` is ` FROM t `).
const SQL_WORDS: &[&str] = &[
    "SELECT ",
    " FROM ",
    " WHERE ",
    "INSERT INTO",
    "DELETE FROM",
    "CREATE TABLE",
    "ORDER BY",
    "GROUP BY",
    " AS ",
    "CAST(",
    "COALESCE(",
    "COUNT(",
    "LIMIT ",
    " IS NULL",
    " IS NOT NULL",
    "CASE WHEN",
    "DISTINCT",
    "PRAGMA",
    " AND ",
    " OR ",
    " NOT (",
    " IN (",
    " LIKE ",
    " ILIKE ",
];

/// SQL's comparisons, which prose writes too (`must be >= 1`): SQL text only in a literal
/// that is no prose ([`is_prose`]), such as `{} = {}` or ` >= `.
const SQL_OPERATORS: &[&str] = &[" = ", " <> ", " != ", " >= ", " <= ", " > ", " < "];

/// Whether a literal's value reads as prose: two words of lower-case letters outside its
/// `{...}` placeholders (`{} = {}` and `id = ?` are not).
fn is_prose(value: &str) -> bool {
    let mut outside = String::new();
    let mut depth = 0usize;
    for c in value.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            c if depth == 0 => outside.push(c),
            _ => outside.push(' '),
        }
    }
    outside
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() > 1 && w.chars().all(char::is_lowercase))
        .count()
        >= 2
}

/// Whether `value` quotes identifiers as SQL does, with `"` (or MySQL's backtick): a quote
/// alone, a quote doubled (`name.replace('"', "\"\"")`), or quoted names and nothing else
/// (`"{}"`, `"{}"."{}"`, `"group"`). A message that quotes a value says more around it.
fn quotes_identifiers(value: &str) -> bool {
    if matches!(value, "\"" | "\"\"" | "`" | "``") {
        return true;
    }
    let quoted = |part: &str| {
        let mut chars = part.chars();
        let (Some(first), Some(last)) = (chars.next(), chars.next_back()) else {
            return false;
        };
        let inner = chars.as_str();
        let placeholder = inner.starts_with('{')
            && inner.ends_with('}')
            && !inner[1..inner.len() - 1].contains(['{', '}', '"', '`']);
        let name = inner
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && inner.chars().all(|c| c.is_alphanumeric() || c == '_');
        matches!(first, '"' | '`') && first == last && (placeholder || name)
    };
    value.split('.').all(quoted)
}

/// What makes a literal's value SQL text, if anything: the first of [`SQL_WORDS`], of
/// [`SQL_OPERATORS`] outside prose, or identifier quoting ([`quotes_identifiers`]).
fn sql_text(value: &str) -> Option<String> {
    if quotes_identifiers(value) {
        return Some("quotes an identifier".to_owned());
    }
    let padded = format!(
        " {} ",
        value.split_whitespace().collect::<Vec<_>>().join(" ")
    );
    let word_char = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    // Where `pattern` first stands alone in the text.
    let found = |pattern: &str| {
        padded.match_indices(pattern).map(|(at, _)| at).find(|&at| {
            let before = padded[..at].chars().next_back();
            let after = padded[at + pattern.len()..].chars().next();
            let runs_in = |edge: Option<char>, neighbour: Option<char>| {
                edge.is_some_and(char::is_alphanumeric) && word_char(neighbour)
            };
            !runs_in(pattern.chars().next(), before) && !runs_in(pattern.chars().next_back(), after)
        })
    };
    // The word that comes first in the text, to name it.
    let first = |patterns: &[&'static str]| {
        patterns
            .iter()
            .filter_map(|&p| Some((found(p)?, p)))
            .min()
            .map(|(_, p)| p)
    };
    let operator = || first(SQL_OPERATORS).filter(|_| !is_prose(value));
    first(SQL_WORDS)
        .or_else(operator)
        .map(|w| format!("`{}`", w.trim()))
        .or_else(|| {
            let update_set = padded
                .find("UPDATE ")
                .is_some_and(|at| padded[at..].contains(" SET "));
            update_set.then(|| "`UPDATE ... SET`".to_owned())
        })
}

/// At most `max` chars of `text` on one line (each run of whitespace one space, at the ends
/// too), `...` when cut.
fn excerpt(text: &str, max: usize) -> String {
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let space = |yes: bool| if yes { " " } else { "" };
    let one_line = format!(
        "{}{words}{}",
        space(text.starts_with(char::is_whitespace)),
        space(text.ends_with(char::is_whitespace) && !words.is_empty())
    );
    match one_line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}...", &one_line[..cut]),
        None => one_line,
    }
}

/// The emulator's engine, the crate of its rules.
const ENGINE_SRC: &str = "crates/svc-engine/src/";

/// The SQL text a source of the engine's rules writes ([`ENGINE_SRC`]):
/// its non-test string literals that are SQL ([`sql_text`]), and the code that doubles a `"`
/// char to quote an identifier (`if c == '"' { s.push('"') }`). The engine's rules are the
/// same for every database; the SQL that carries them out is a database's dialect, or a flow's
/// statement (`flow/`), and a new database then finds it all in one place.
fn engine_sql(src: &str) -> Vec<(usize, String)> {
    let rule = |what: String| {
        format!(
            "the engine writes SQL text ({what}): SQL belongs in the emulator's dialect/ (what every database writes alike), a database's folder or flow/"
        )
    };
    let mut out: Vec<(usize, String)> = literals(src)
        .iter()
        .filter_map(|lit| {
            let what = sql_text(&literal_value(lit))?;
            Some((
                lit.line,
                rule(format!("{what} in \"{}\"", excerpt(&lit.text, 60))),
            ))
        })
        .collect();
    let code = rust_code(src);
    let test = test_lines(&code);
    let lines: Vec<&str> = src.lines().collect();
    for (n, (line, code)) in lines.iter().zip(code.lines()).enumerate() {
        let tests_quote = line.contains("== '\"'") || line.contains("'\"' =>");
        let doubles = || {
            lines[n..lines.len().min(n + 3)]
                .iter()
                .any(|l| l.contains("push('\"')") || l.contains("push(b'\"')"))
        };
        if tests_quote && !code.trim().is_empty() && !test[n] && doubles() {
            let what = format!("`{}` doubles `\"` to quote an identifier", line.trim());
            out.push((n + 1, rule(what)));
        }
    }
    out.sort_by_key(|(line, _)| *line);
    out
}

/// The lines of a Rust source that are code: neither blank nor comment-only, outside its test
/// modules (a line inside a multi-line string literal is code).
fn code_lines(src: &str) -> usize {
    let code = rust_code(src);
    let test = test_lines(&code);
    let mut in_string = false;
    let mut count = 0;
    for ((n, code), line) in code.lines().enumerate().zip(src.lines()) {
        let is_code = !code.trim().is_empty() || (in_string && !line.trim().is_empty());
        if is_code && !test[n] {
            count += 1;
        }
        // rust_code blanks what is inside a literal: the quotes left open or close one.
        if code.matches('"').count() % 2 == 1 {
            in_string = !in_string;
        }
    }
    count
}

/// The code lines a file of the engine may have: past them it mixes concerns (reading values,
/// writing them, a database's types) that a new database then has to read through.
const ENGINE_FILE_LINES: usize = 800;

/// The violation of an engine source (`path` relative to [`ENGINE_SRC`]) over
/// [`ENGINE_FILE_LINES`] code lines, if it is.
fn engine_file_size(path: &str, src: &str) -> Option<String> {
    let lines = code_lines(src);
    (lines > ENGINE_FILE_LINES).then(|| {
        format!(
            "{ENGINE_SRC}{path}: {lines} code lines, over the engine's {ENGINE_FILE_LINES}: \
             cut it by concern"
        )
    })
}

/// The `allow(dead_code)` attributes of a source's non-test code, `cfg_attr(..., allow(...))`
/// included.
fn dead_code_allowances(src: &str) -> usize {
    let code = rust_code(src);
    let test = test_lines(&code);
    // The non-test code as one text, so that an attribute rustfmt splits over lines
    // (`#[allow(\n    dead_code,\n    reason = ...\n)]`) is read whole.
    let code: String = code
        .lines()
        .enumerate()
        .map(|(n, line)| if test[n] { "" } else { line })
        .collect::<Vec<_>>()
        .join("\n");
    let mut count = 0;
    for lint in ["allow(", "expect("] {
        for (at, _) in code.match_indices(lint) {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let args = code[at + lint.len()..]
                .split(')')
                .next()
                .unwrap_or_default();
            if args
                .split(',')
                .any(|a| matches!(a.trim(), "dead_code" | "unused"))
            {
                count += 1;
            }
        }
    }
    count
}

/// The non-test sources under `dir` (a crate's `src/`): each path relative to it, and its text.
fn sources_under(root: &Path, files: &[String], dir: &str) -> Vec<(String, String)> {
    files
        .iter()
        .filter_map(|file| {
            let path = file.strip_prefix(dir)?;
            if !path.ends_with(".rs") || is_test_file(path) {
                return None;
            }
            let src = std::fs::read_to_string(root.join(file)).ok()?;
            Some((path.to_owned(), src))
        })
        .collect()
}

/// Rule A over every non-test source under `dir` (the emulator's [`EMULATOR_SRC`], or the
/// layers below it in [`CORE_SRC`]: the same module names, the same ranks).
fn layering(dir: &str, sources: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, src) in sources {
        let mut rules = layering_violations(path, src);
        rules.extend(flow_statements_outside_flows(path, src));
        for (line, rule) in rules {
            out.push(format!("{dir}{path}:{line}: {rule}"));
        }
    }
    out
}

/// The engine's own rules over its non-test sources: no SQL text, files by concern.
fn engine_rules(sources: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, src) in sources {
        for (line, rule) in engine_sql(src) {
            out.push(format!("{ENGINE_SRC}{path}:{line}: {rule}"));
        }
        out.extend(engine_file_size(path, src));
    }
    out
}

/// The required methods a new database server writes today: the seam of svc-emulator-postgres
/// ([`seam::seam`]). A ratchet: it may only fall, towards [`SEAM_TARGET`].
const SEAM_CEILING: usize = 44;

/// Where the seam is headed: a new database server writes its dialect, its driver, its type
/// readings and its reflection, and the flows do the rest (issue 64: at most 20 required
/// methods in at most 4 traits).
const SEAM_TARGET: usize = 20;

/// The emulator's traits a database server implements today, the most of svc-emulator-postgres's and
/// svc-emulator-mysql's: each is one more interface to learn and to keep in step. A ratchet: it may only
/// fall, towards [`SEAM_TRAITS_TARGET`].
const SEAM_TRAITS_CEILING: usize = 9;

/// Where the seam's traits are headed (issue 64): a handful a new database server reads.
const SEAM_TRAITS_TARGET: usize = 4;

/// The Rust files of the largest database crate today (svc-emulator-sqlite, -postgres, -mysql),
/// test code left out ([`files`]): a new database server's crate is as many files to write and
/// to read. A ratchet: it may only fall, towards [`FILES_PER_DATABASE_TARGET`].
const FILES_PER_DATABASE_CEILING: usize = 8;

/// Where each database folder is headed (issue 64): what every database writes the same lives
/// in the flows, a folder keeps its driver, dialect, types and reflection.
const FILES_PER_DATABASE_TARGET: usize = 8;

/// The share of svc-emulator-postgres's and svc-emulator-mysql's code lines that repeat ([`repeats`]), in tenths
/// of a percent. A ratchet: it may only fall, towards [`REPEATS_TARGET`]. Raised once, from
/// 7.8% to 7.9%, when each database's impl of a trait came into one file (the files by role of
/// issue 64): trait methods' signatures and match arms that both servers write alike became
/// runs of three lines, no logic was written again; a smaller seam is what lowers it.
const REPEATS_CEILING: usize = 79;

/// Where the repeats are headed: under 8%, what the two servers share said once.
const REPEATS_TARGET: usize = 80;

/// The `#[allow(dead_code)]` of `flow/` today. A ratchet: the goal is none, every flow used by
/// every database, SQLite included.
const FLOW_DEAD_CODE_CEILING: usize = 0;

/// The figures the ratchets hold down, as the sources give them today.
#[derive(Debug)]
struct Figures {
    /// What PostgreSQL implements, the model of a new database server.
    postgres: seam::Seam,
    /// What MariaDB/MySQL implements, to compare.
    mysql: seam::Seam,
    /// The `allow(dead_code)` of `flow/`'s non-test code.
    flow_dead_code: usize,
    /// What svc-emulator-postgres and svc-emulator-mysql write twice.
    repeats: repeats::Repeats,
    /// Each database folder with its files that are not test code.
    files: Vec<(&'static str, Vec<String>)>,
}

impl Figures {
    /// The figures of the emulator's `sources` and its `databases`' crates (each path under its
    /// folder's name: svc-emulator-postgres's `src/records.rs` is postgres' `records.rs`), over
    /// the traits of `core` (its databases' interface, svc-emulator-core's sources) and its own.
    fn new(
        sources: &[(String, String)],
        core: &[(String, String)],
        databases: &[(String, String)],
    ) -> Figures {
        let both: Vec<(String, String)> = core
            .iter()
            .chain(sources)
            .chain(databases)
            .cloned()
            .collect();
        Figures {
            postgres: seam::seam(&both, "postgres"),
            mysql: seam::seam(&both, "mysql"),
            flow_dead_code: core
                .iter()
                .filter(|(path, _)| path.starts_with("flow/"))
                .map(|(_, src)| dead_code_allowances(src))
                .sum(),
            repeats: repeats::repeats(&both, &["postgres", "mysql"]),
            files: files::files_per_database(&both),
        }
    }

    /// The most traits in a seam, of svc-emulator-postgres's and svc-emulator-mysql's.
    fn seam_traits(&self) -> usize {
        self.postgres.traits.len().max(self.mysql.traits.len())
    }

    /// The most files in a database folder.
    fn most_files(&self) -> usize {
        self.files.iter().map(|(_, f)| f.len()).max().unwrap_or(0)
    }

    /// The ratchets that no longer hold.
    fn violations(&self) -> Vec<String> {
        let mut out = Vec::new();
        let methods = self.postgres.methods();
        if methods > SEAM_CEILING {
            out.push(format!(
                "{EMULATOR_SRC}postgres/: a new database server implements {methods} required \
                 methods, more than SEAM_CEILING ({SEAM_CEILING}, xtask/src/structure.rs): a new \
                 database server then writes its dialect, its driver, its type readings and its \
                 reflection, at most {SEAM_TARGET} required methods; give the new methods a \
                 default body or move them into a flow"
            ));
        }
        for (folder, seam) in [("postgres", &self.postgres), ("mysql", &self.mysql)] {
            let traits = seam.traits.len();
            if traits > SEAM_TRAITS_CEILING {
                out.push(format!(
                    "{EMULATOR_SRC}{folder}/: a new database server implements {traits} traits of \
                     the emulator, more than SEAM_TRAITS_CEILING ({SEAM_TRAITS_CEILING}, \
                     xtask/src/structure.rs): the seam is headed for at most \
                     {SEAM_TRAITS_TARGET} traits; put the new methods in a trait it implements \
                     already, or give the new trait a blanket impl"
                ));
            }
        }
        for (folder, files) in &self.files {
            if files.len() > FILES_PER_DATABASE_CEILING {
                out.push(format!(
                    "{EMULATOR_SRC}{folder}/: {} files that are not test code, more than \
                     FILES_PER_DATABASE_CEILING ({FILES_PER_DATABASE_CEILING}, \
                     xtask/src/structure.rs): a database folder is headed for at most \
                     {FILES_PER_DATABASE_TARGET} files; fold the new code into a file of its \
                     concern, or move what every database writes the same into a flow",
                    files.len()
                ));
            }
        }
        let repeats = self.repeats.per_mille();
        if repeats > REPEATS_CEILING {
            out.push(format!(
                "{EMULATOR_SRC}postgres/ and mysql/ repeat {} of their {} code lines ({}), more \
                 than REPEATS_CEILING ({}, xtask/src/structure.rs): say it once, in a flow or in \
                 the dialect (`duplicates --repo {EMULATOR_SRC}` shows where)",
                self.repeats.repeated,
                self.repeats.lines,
                percent(repeats),
                percent(REPEATS_CEILING)
            ));
        }
        if self.flow_dead_code > FLOW_DEAD_CODE_CEILING {
            out.push(format!(
                "{EMULATOR_SRC}flow/: {} #[allow(dead_code)], more than FLOW_DEAD_CODE_CEILING \
                 ({FLOW_DEAD_CODE_CEILING}, xtask/src/structure.rs): the goal is none, every flow \
                 used by every database, SQLite included",
                self.flow_dead_code
            ));
        }
        out
    }

    /// The seam's table, the comparison with MySQL, the database folders' files, the repeats
    /// and the count of `allow(dead_code)`.
    fn print(&self) {
        let seam = &self.postgres;
        eprintln!(
            "structure: a new database server implements {} required methods in {} traits \
             (ceiling {SEAM_CEILING} in {SEAM_TRAITS_CEILING}, target {SEAM_TARGET} in \
             {SEAM_TRAITS_TARGET}):",
            seam.methods(),
            seam.traits.len()
        );
        for t in &seam.traits {
            eprintln!("  {:<12} {:>2}  ({})", t.name, t.required, t.path);
        }
        eprintln!(
            "  (beside them, {} constants and types without a default: SQL text, a driver's \
             types)",
            seam.items()
        );
        if !seam.own.is_empty() {
            let own: Vec<String> = seam
                .own
                .iter()
                .map(|t| format!("{} {} ({})", t.name, t.required, t.path))
                .collect();
            eprintln!(
                "  (not counted, defined by postgres/ itself: {})",
                own.join(", ")
            );
        }
        eprint_hint("SEAM_CEILING", seam.methods(), SEAM_CEILING);
        if !seam.elsewhere.is_empty() {
            eprintln!(
                "  (not counted: supertraits postgres/ does not implement itself: {})",
                seam.elsewhere.join(", ")
            );
        }
        let (pg, my) = (seam.names(), self.mysql.names());
        let only = |a: &[&str], b: &[&str]| {
            a.iter()
                .filter(|n| !b.contains(n))
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (only_pg, only_my) = (only(&pg, &my), only(&my, &pg));
        eprintln!(
            "structure: mysql/ implements {} required methods in {} traits{}",
            self.mysql.methods(),
            self.mysql.traits.len(),
            if only_pg.is_empty() && only_my.is_empty() {
                ", the same traits as postgres/".to_owned()
            } else {
                format!(
                    "; the sets differ: only postgres/ implements [{only_pg}], only mysql/ \
                     [{only_my}]"
                )
            }
        );
        eprint_hint(
            "SEAM_TRAITS_CEILING",
            self.seam_traits(),
            SEAM_TRAITS_CEILING,
        );
        self.print_files();
        let repeats = self.repeats.per_mille();
        eprintln!(
            "structure: postgres/ and mysql/ repeat {} of their {} code lines in runs of {} or \
             more: {} (ceiling {}, target under {})",
            self.repeats.repeated,
            self.repeats.lines,
            repeats::RUN,
            percent(repeats),
            percent(REPEATS_CEILING),
            percent(REPEATS_TARGET)
        );
        eprint_hint("REPEATS_CEILING", repeats, REPEATS_CEILING);
        eprintln!(
            "structure: flow/ has {} #[allow(dead_code)] (ceiling {FLOW_DEAD_CODE_CEILING}, goal 0)",
            self.flow_dead_code
        );
        eprint_hint(
            "FLOW_DEAD_CODE_CEILING",
            self.flow_dead_code,
            FLOW_DEAD_CODE_CEILING,
        );
    }

    /// The files of each database folder, one line each.
    fn print_files(&self) {
        eprintln!(
            "structure: the database folders' files, test code left out (ceiling \
             {FILES_PER_DATABASE_CEILING}, target {FILES_PER_DATABASE_TARGET}):"
        );
        for (folder, files) in &self.files {
            eprintln!(
                "  {:<9} {:>2}  {}",
                format!("{folder}/"),
                files.len(),
                files.join(", ")
            );
        }
        eprint_hint(
            "FILES_PER_DATABASE_CEILING",
            self.most_files(),
            FILES_PER_DATABASE_CEILING,
        );
    }

    /// The figures in a few words, for the last line.
    fn summary(&self) -> String {
        format!(
            "seam {} methods in {} traits (ceiling {SEAM_CEILING} in {SEAM_TRAITS_CEILING}, \
             target {SEAM_TARGET} in {SEAM_TRAITS_TARGET}), files per database {} (ceiling \
             {FILES_PER_DATABASE_CEILING}, target {FILES_PER_DATABASE_TARGET}), \
             postgres/+mysql/ repeats {} (ceiling {}), flow/ dead_code {} (ceiling \
             {FLOW_DEAD_CODE_CEILING})",
            self.postgres.methods(),
            self.postgres.traits.len(),
            self.most_files(),
            percent(self.repeats.per_mille()),
            percent(REPEATS_CEILING),
            self.flow_dead_code
        )
    }
}

/// The hint of a ratchet whose figure fell under its ceiling: lower the constant, so that it
/// holds the gain.
fn ceiling_hint(constant: &str, figure: usize, ceiling: usize) -> Option<String> {
    (figure < ceiling).then(|| {
        format!("  (under the ceiling: lower {constant} to {figure} in xtask/src/structure.rs)")
    })
}

/// Prints [`ceiling_hint`]'s hint, if any.
fn eprint_hint(constant: &str, figure: usize, ceiling: usize) {
    if let Some(hint) = ceiling_hint(constant, figure, ceiling) {
        eprintln!("{hint}");
    }
}

/// Tenths of a percent as a percentage (`148` is `14.8%`).
fn percent(per_mille: usize) -> String {
    format!("{}.{}%", per_mille / 10, per_mille % 10)
}

// ---------------------------------------------------------------------------------------------
// Rule B: every path named exists

/// The files read for references.
fn is_scanned(path: &str) -> bool {
    EXTENSIONS.iter().any(|ext| path.ends_with(ext)) || path == ".ci/run"
}

/// The repository's top-level directories: a word starting with one of these is a path.
const TOP_DIRS: &[&str] = &[
    "crates/", "docs/", "tests/", "xtask/", "fuzz/", "bench/", ".ci/", ".cargo/",
];

/// A word ending with one of these is a file name.
const EXTENSIONS: &[&str] = &[".md", ".rs", ".toml", ".sh", ".yml"];

/// The specification's files (`.md`), which live outside this repository, in `../shared/spec/`:
/// a line naming one must say so.
const SPEC_FILES: &[&str] = &["API", "CLIENT", "ARCHITECTURE", "ENGINE", "seed"];

/// The true exceptions: paths that exist only once something has run, and names that are not
/// paths. An entry ending with `/` allows everything under it.
const ALLOWED: &[&str] = &[
    // Cargo's output: target/bench/report.md, target/stress/, target/package-verify/, ...
    "target/",
    // The reports `cargo xtask bench` and `stress` write under target/.
    "report.md",
    // cargo-fuzz's working directories (ignored by fuzz/.gitignore).
    "fuzz/artifacts/",
    "fuzz/corpus/",
    "fuzz/coverage/",
    "fuzz/target/",
    // The documentation site, not a file.
    "docs.rs",
    // The config `cargo xtask contract` writes under target/contract/run/.
    "schemathesis.toml",
];

/// A path named by a line: a Markdown link's target (relative to the file's directory) or a
/// word that looks like a path.
#[derive(Debug, PartialEq, Eq)]
enum Named {
    Link(String),
    Word(String),
}

/// The paths a line names. Markdown links `[x](target)` to anything but a URL, an anchor or a
/// Rust item; then words made of path characters that start with a top-level directory or `../`,
/// end with a file extension, or are a directory in backticks. Trailing dots, `:line` and
/// `#anchor` are cut; words with a placeholder (see [`is_placeholder`]) are skipped.
fn named_paths(line: &str) -> Vec<Named> {
    let mut out = Vec::new();
    let mut rest = line.to_owned();
    // Links first, blanked out of the line so that their targets are not read again as words.
    let mut from = 0;
    while let Some(at) = rest[from..].find("](").map(|at| from + at + 2) {
        let len = rest[at..]
            .find(|c: char| c == ')' || c.is_whitespace())
            .unwrap_or(rest.len() - at);
        let target = rest[at..at + len].trim_matches(|c| c == '<' || c == '>');
        let target = target.split('#').next().unwrap_or_default();
        let external = target.contains(':'); // https:, mailto:, and Rust paths (`crate::X`)
        let is_path = target.contains('/') || EXTENSIONS.iter().any(|e| target.ends_with(e));
        if !target.is_empty() && !external && is_path && !is_placeholder(target) {
            out.push(Named::Link(target.to_owned()));
        }
        rest.replace_range(at..at + len, &" ".repeat(len));
        from = at + len;
    }
    let path_char = |c: char| c.is_alphanumeric() || "_./-*{}<>$~".contains(c);
    // The words: the runs of path characters, as byte ranges of `rest`.
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in rest.char_indices().chain([(rest.len(), ' ')]) {
        match (path_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push(s..i);
                start = None;
            }
            _ => {}
        }
    }
    for span in spans {
        let word = &rest[span.clone()];
        if is_placeholder(word) {
            continue;
        }
        let backticked = rest[..span.start].ends_with('`') && rest[span.end..].starts_with('`');
        let word = word.trim_end_matches(['.', '-']);
        if word.starts_with('/') {
            continue; // an absolute path, or a URL (`https://...` leaves `//...`)
        }
        let file_name = word.rsplit('/').next().unwrap_or_default();
        let has_extension = EXTENSIONS.iter().any(|e| {
            // `pages.rs`, but not a host name with more dots (`package.metadata.docs.rs`).
            file_name
                .strip_suffix(e)
                .is_some_and(|stem| !stem.is_empty() && !stem.trim_start_matches('.').contains('.'))
        });
        let is_path = TOP_DIRS.iter().any(|d| word.starts_with(d))
            || word.starts_with("../")
            || has_extension
            // A directory in backticks: `records/`, `src/http/`.
            || (backticked && word.ends_with('/') && word.len() > 1);
        if is_path {
            out.push(Named::Word(word.to_owned()));
        }
    }
    out
}

/// A path with a placeholder in it: a glob, a format argument, `...`, a segment in capitals
/// (`fuzz/artifacts/TARGET/`) or a file named with one letter (`src/x.rs:1:2`).
fn is_placeholder(path: &str) -> bool {
    path.contains(['*', '{', '}', '<', '>', '$', '~'])
        || path.contains("...")
        || path.split('/').any(|segment| {
            let stem = segment.split('.').next().unwrap_or_default();
            (segment.len() > 1 && segment.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
                || (stem.len() == 1 && segment.len() > 1)
        })
}

/// `a/b/../c` as `a/c`; `None` when it climbs out of the repository.
fn normalize(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// The repository's paths, to look up the paths named.
#[derive(Debug)]
struct Tree {
    /// The files and every directory above them, from the root.
    paths: HashSet<String>,
    /// Every path's tails at a `/` (`crates/svc-emulator/src/http/mod.rs` gives
    /// `svc-emulator/src/http/mod.rs`, ..., `http/mod.rs` and `mod.rs`).
    tails: HashSet<String>,
}

impl Tree {
    fn new(files: &[String]) -> Tree {
        let mut paths = HashSet::new();
        for file in files {
            let mut path = file.as_str();
            paths.insert(path.to_owned());
            while let Some((dir, _)) = path.rsplit_once('/') {
                paths.insert(dir.to_owned());
                path = dir;
            }
        }
        let tails = paths
            .iter()
            .flat_map(|p| p.match_indices('/').map(|(i, _)| p[i + 1..].to_owned()))
            .collect();
        Tree { paths, tails }
    }

    /// Whether `dir/path` exists.
    fn has(&self, dir: &str, path: &str) -> bool {
        normalize(&format!("{dir}/{path}")).is_some_and(|p| self.paths.contains(&p))
    }

    /// Whether a path named in a file of directory `dir` exists. A link is relative to the file;
    /// so is a word starting with `../`; any other word may be relative to the root or to any
    /// directory: docs and comments say `http/auth.rs` in a text about the emulator, cargo says
    /// `tests/load.rs` of the package svc-tests. A move still shows: no directory holds the old
    /// path any more.
    fn resolves(&self, dir: &str, named: &Named) -> bool {
        match named {
            Named::Link(path) => self.has(dir, path),
            Named::Word(path) if path.starts_with("../") => self.has(dir, path),
            Named::Word(path) => {
                let path = path.trim_start_matches("./").trim_end_matches('/');
                self.paths.contains(path) || self.tails.contains(path)
            }
        }
    }
}

/// The comments and the string literals of a line of Rust (`code` is the same line from
/// [`rust_code`]): Rust code itself names no file (`x.rs` there is a field).
fn comments_and_strings(line: &str, code: &str) -> String {
    line.chars()
        .zip(code.chars().chain(std::iter::repeat(' ')))
        .map(|(l, c)| if l == c { ' ' } else { l })
        .collect()
}

/// Rule B over every scanned file; in Rust sources, only comments and strings are read, and
/// test code (with its fixtures) is left out.
fn references(root: &Path, files: &[String]) -> Vec<String> {
    let tree = Tree::new(files);
    let mut out = Vec::new();
    for file in files.iter().filter(|f| is_scanned(f)) {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        let rust = file.ends_with(".rs");
        if rust && file.rsplit('/').next() == Some("tests.rs") {
            continue;
        }
        let code = if rust {
            rust_code(&text)
        } else {
            String::new()
        };
        let code_lines: Vec<&str> = code.lines().collect();
        let test = test_lines(&code);
        let dir = file.rsplit_once('/').map_or("", |(dir, _)| dir);
        for (n, line) in text.lines().enumerate() {
            if test.get(n).copied().unwrap_or(false) {
                continue;
            }
            let line = if rust {
                comments_and_strings(line, code_lines.get(n).copied().unwrap_or(""))
            } else {
                line.to_owned()
            };
            for named in named_paths(&line) {
                let (Named::Link(path) | Named::Word(path)) = &named;
                let spec = path.contains("shared/spec/")
                    || (SPEC_FILES
                        .iter()
                        .any(|s| path.ends_with(&format!("{s}.md")))
                        && line.contains("shared/spec"));
                let allowed = ALLOWED
                    .iter()
                    .any(|a| path == a || (a.ends_with('/') && path.starts_with(a)));
                if !spec && !allowed && !tree.resolves(dir, &named) {
                    let what = match named {
                        Named::Link(_) => "links to",
                        Named::Word(_) => "names",
                    };
                    out.push(format!(
                        "{file}:{}: {what} `{path}`, which is not in the repository",
                        n + 1
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raw_string_keeps_its_quotes_and_is_read_whole() {
        let src = "let a = r#\"x \"y\" crate::z\"#;\nlet b = r\"SELECT 1\";\n";
        let code = rust_code(src);
        assert_eq!(code.lines().next(), Some("let a = r#\"              \"#;"));
        assert_eq!(code.lines().nth(1), Some("let b = r\"        \";"));
        let values: Vec<String> = literals(src).iter().map(literal_value).collect();
        assert_eq!(values, ["x \"y\" crate::z", "SELECT 1"]);
    }

    #[test]
    fn literal_values_read_escapes() {
        let lit = |text: &str| Literal {
            line: 1,
            text: text.to_owned(),
            raw: false,
        };
        assert_eq!(literal_value(&lit(r#"\"{}\""#)), "\"{}\"");
        assert_eq!(literal_value(&lit("a \\\n        b\\n\\u{e9}")), "a b\né");
    }

    /// The traits of `src`, as `(name, required, supertraits)`.
    fn defs(src: &str) -> Vec<(String, usize, Vec<String>)> {
        seam::trait_defs("flow/x.rs", src)
            .into_iter()
            .map(|d| (d.name, d.required, d.supertraits))
            .collect()
    }

    #[test]
    fn a_trait_counts_its_methods_without_a_default_body() {
        let src = "pub(crate) trait Lookups: flow::Base<Model: X + Y> + Sync + ?Sized + 'static {\n\
                   \x20   type Model;\n\
                   \x20   const NEVER: &'static str;\n\
                   \x20   /// A doc: fn in_doc(x: u8);\n\
                   \x20   fn column(field: &Self::Field) -> &str;\n\
                   \x20   fn key_present(key: &Self::Field) -> String {\n\
                   \x20       let f: fn(u8) -> u8 = |x| x;\n\
                   \x20       format!(\"fn nope();\")\n\
                   \x20   }\n\
                   \x20   fn compare(\n\
                   \x20       filter: &Filter<'_, Self::Field>,\n\
                   \x20       bytes: [u8; 4],\n\
                   \x20   ) -> Result<String, EngineError>;\n\
                   \x20   fn read<T>(&self, t: T) -> impl Future<Output = u8> + Send\n\
                   \x20   where\n\
                   \x20       T: Fn() -> u8;\n\
                   \x20   fn walk<T>(&self) -> u8\n\
                   \x20   where\n\
                   \x20       T: Send,\n\
                   \x20   {\n\
                   \x20       0\n\
                   \x20   }\n\
                   }\n\
                   trait Empty {}\n\
                   #[cfg(test)]\n\
                   mod tests {\n\
                   \x20   trait InTests { fn f(); }\n\
                   }\n";
        assert_eq!(
            defs(src),
            [
                (
                    "Lookups".to_owned(),
                    3,
                    vec!["Base".to_owned(), "Sync".to_owned()]
                ),
                ("Empty".to_owned(), 0, vec![])
            ]
        );
    }

    #[test]
    fn a_trait_counts_its_constants_and_types_without_a_default() {
        let src = "trait Dialect {\n\
                   \x20   type Row: Send;\n\
                   \x20   type Model: Table<Column = Self::Field>;\n\
                   \x20   type Kept = u8;\n\
                   \x20   const RESERVED_WORDS: &'static str;\n\
                   \x20   const NEVER: &'static str = \"0 = 1\";\n\
                   \x20   const SIZES: [u8; 2] = [1, 2];\n\
                   \x20   fn f() { const INNER: u8; }\n\
                   }\n";
        let items: Vec<usize> = seam::trait_defs("dialect/x.rs", src)
            .iter()
            .map(|d| d.items)
            .collect();
        assert_eq!(items, [3]);
    }

    #[test]
    fn impls_name_their_trait_by_its_last_segment() {
        let src = "impl<D: X> Trait for Y<D> {}\n\
                   impl<F: Fn() -> u8> RecordRow<PgField> for Row {}\n\
                   impl flow::Connection for PgConnection<'_> {}\n\
                   unsafe impl Send for T {}\n\
                   impl PgResource { fn f() -> impl Future<Output = u8> + Send { for x in y {} } }\n\
                   fn g(x: impl for<'a> Fn(&'a u8)) {}\n\
                   crate::backend::awaited_backend!(PgResource);\n\
                   #[cfg(test)]\n\
                   mod tests {\n    impl Fake for Y {}\n}\n";
        assert_eq!(
            seam::implemented_traits(src),
            ["Trait", "RecordRow", "Connection", "Send"]
        );
    }

    #[test]
    fn the_seam_counts_the_crate_traits_a_backend_implements() {
        let sources = [
            (
                "flow/a.rs",
                "pub trait Lookups { fn a(); fn b(); fn c() {} }\n\
                 pub trait Writes: Lookups + Debug { fn w(); }\n\
                 pub trait Unused { fn u(); }\n\
                 pub trait Base { fn x(); }\n\
                 pub trait Walks: Base { fn y(); }",
            ),
            ("backend/mod.rs", "pub trait Backend { fn open(); }"),
            (
                "postgres/dialect.rs",
                "trait Literals { fn l(); }\nimpl Literals for Ctx {}\n\
                 impl Lookups for Pg {}\nimpl Writes for Pg {}\nimpl Walks for Pg {}\n\
                 impl std::fmt::Debug for Pg {}\ncrate::backend::awaited_backend!(Pg);",
            ),
            (
                "mysql/dialect.rs",
                "impl Lookups for My {}\nimpl Unused for My {}",
            ),
        ]
        .map(|(p, s)| (p.to_owned(), s.to_owned()));
        let pg = seam::seam(&sources, "postgres");
        let table: Vec<(&str, usize, &str)> = pg
            .traits
            .iter()
            .map(|t| (t.name.as_str(), t.required, t.path.as_str()))
            .collect();
        assert_eq!(
            table,
            [
                ("Lookups", 2, "flow/a.rs"),
                ("Walks", 1, "flow/a.rs"),
                ("Writes", 1, "flow/a.rs")
            ]
        );
        assert_eq!(pg.methods(), 4);
        let own: Vec<&str> = pg.own.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(own, ["Literals"]);
        // `Base` comes with `Walks` (a blanket impl, say): postgres/ writes none of it.
        assert_eq!(pg.elsewhere, ["Base"]);
        assert_eq!(seam::seam(&sources, "mysql").names(), ["Lookups", "Unused"]);
    }

    #[test]
    fn the_ratchets_fail_past_their_ceilings() {
        // `methods` required methods, all in the first of `traits` traits.
        let seam = |methods: usize, traits: usize| seam::Seam {
            traits: (0..traits)
                .map(|i| seam::TraitDef {
                    name: format!("Trait{i}"),
                    path: "flow/filter.rs".to_owned(),
                    required: if i == 0 { methods } else { 0 },
                    items: 0,
                    supertraits: Vec::new(),
                })
                .collect(),
            ..seam::Seam::default()
        };
        let files = |n: usize| (0..n).map(|i| format!("f{i}.rs")).collect::<Vec<_>>();
        let figures = |methods, traits, most_files, repeated, flow_dead_code| Figures {
            postgres: seam(methods, traits),
            mysql: seam(methods, traits),
            flow_dead_code,
            repeats: repeats::Repeats {
                repeated,
                lines: 1000,
            },
            files: vec![("sqlite", files(most_files)), ("postgres", files(1))],
        };
        let at = figures(
            SEAM_CEILING,
            SEAM_TRAITS_CEILING,
            FILES_PER_DATABASE_CEILING,
            REPEATS_CEILING,
            FLOW_DEAD_CODE_CEILING,
        );
        assert!(at.violations().is_empty());
        assert_eq!(at.most_files(), FILES_PER_DATABASE_CEILING);
        let v = figures(
            SEAM_CEILING + 1,
            SEAM_TRAITS_CEILING + 1,
            FILES_PER_DATABASE_CEILING + 1,
            REPEATS_CEILING + 1,
            FLOW_DEAD_CODE_CEILING + 1,
        )
        .violations();
        assert_eq!(v.len(), 6, "{v:?}");
        assert!(v[0].contains(&format!("at most {SEAM_TARGET} required methods")));
        // The traits: each server's seam, named with its folder.
        for (i, folder) in [(1, "postgres/"), (2, "mysql/")] {
            assert!(v[i].contains(&format!("{folder}: a new database server implements")));
            assert!(v[i].contains(&format!(
                "more than SEAM_TRAITS_CEILING ({SEAM_TRAITS_CEILING}"
            )));
            assert!(v[i].contains(&format!("at most {SEAM_TRAITS_TARGET} traits")));
        }
        // The files: only the folder past the ceiling.
        let files_over = format!(
            "sqlite/: {} files that are not test code, more than FILES_PER_DATABASE_CEILING",
            FILES_PER_DATABASE_CEILING + 1
        );
        assert!(v[3].contains(&files_over), "{v:?}");
        assert!(v[3].contains(&format!("at most {FILES_PER_DATABASE_TARGET} files")));
        assert!(v[4].contains("say it once"));
        assert!(v[5].contains("the goal is none"));
        assert_eq!(percent(148), "14.8%");
        // The summary tells both ceilings and targets of the seam, and the files'.
        let summary = at.summary();
        assert!(
            summary.contains(&format!(
                "(ceiling {SEAM_CEILING} in {SEAM_TRAITS_CEILING}, target {SEAM_TARGET} in \
                 {SEAM_TRAITS_TARGET})"
            )),
            "{summary}"
        );
        assert!(summary.contains(&format!(
            "files per database {FILES_PER_DATABASE_CEILING} (ceiling \
             {FILES_PER_DATABASE_CEILING}, target {FILES_PER_DATABASE_TARGET})"
        )));
    }

    #[test]
    fn a_ratchet_under_its_ceiling_says_to_lower_it() {
        assert_eq!(
            ceiling_hint("FILES_PER_DATABASE_CEILING", 13, 21).as_deref(),
            Some(
                "  (under the ceiling: lower FILES_PER_DATABASE_CEILING to 13 in xtask/src/structure.rs)"
            )
        );
        assert!(ceiling_hint("SEAM_TRAITS_CEILING", 15, 15).is_none());
        assert!(ceiling_hint("SEAM_TRAITS_CEILING", 16, 15).is_none());
    }

    fn sql(src: &str) -> Vec<(usize, String)> {
        engine_sql(src)
    }

    #[test]
    fn engine_sql_is_found_in_literals_not_in_prose() {
        let src = "fn f() {\n\
                   \x20   let s = format!(\"SELECT {} \\\n         FROM {t}\", cols);\n\
                   \x20   let w = format!(\" WHERE ({filters}) AND ({cond})\");\n\
                   \x20   let e = format!(\"{} = {}\", a, b);\n\
                   \x20   let q = format!(\"\\\"{}\\\"\", name.replace('\"', \"\\\"\\\"\"));\n\
                   \x20   let lower = \"select fewer rows or columns (LIMIT), or filter them\";\n\
                   \x20   let m = format!(\"Ensure this value is >= {limit} and not NULL.\");\n\
                   \x20   let d = \"Unknown field {name:?} in _order_by {value:?}.\";\n\
                   \x20   // SELECT x FROM t\n\
                   \x20   let j = b\"{\\\"columns\\\":[\";\n\
                   }\n\
                   /// ` ORDER BY ` in a doc.\n\
                   #[cfg(test)]\n\
                   mod tests {\n    const S: &str = \"SELECT 1 FROM t\";\n}\n";
        let v = sql(src);
        let lines: Vec<usize> = v.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [2, 4, 5, 6, 6], "{v:?}");
        assert!(
            v[0].1.contains("(`SELECT` in \"SELECT {} \\ FROM {t}\")"),
            "{v:?}"
        );
        assert!(
            v[1].1
                .contains("`WHERE` in \" WHERE ({filters}) AND ({cond})\""),
            "{v:?}"
        );
        assert!(v[2].1.contains("`=`"), "{v:?}");
        assert!(v[3].1.contains("quotes an identifier"), "{v:?}");
        assert!(
            v[4].1
                .ends_with("SQL belongs in the emulator's dialect/ (what every database writes alike), a database's folder or flow/")
        );
    }

    #[test]
    fn engine_sql_finds_quoting_by_chars_and_quoted_names() {
        let src = "fn quote(name: &str) -> String {\n\
                   \x20   let mut s = String::new();\n\
                   \x20   for c in name.chars() {\n\
                   \x20       if c == '\"' {\n\
                   \x20           s.push('\"');\n\
                   \x20       }\n\
                   \x20   }\n\
                   \x20   s\n\
                   }\n\
                   fn json(c: char, out: &mut String) {\n\
                   \x20   match c {\n\
                   \x20       '\"' => out.push_str(\"\\\\\\\"\"),\n\
                   \x20       _ => out.push(c),\n\
                   \x20   }\n\
                   }\n";
        let v = sql(src);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].0, 4);
        assert!(quotes_identifiers("\"group\""));
        assert!(quotes_identifiers("\"{}\".\"{}\""));
        assert!(quotes_identifiers("`{}`"));
        assert!(!quotes_identifiers("\"{}\" is not a valid choice."));
        assert!(!quotes_identifiers("\"a b\""));
    }

    #[test]
    fn code_lines_leave_out_blanks_comments_and_tests() {
        let src = "//! A module.\n\
                   \n\
                   /// A doc.\n\
                   fn f() {\n\
                   \x20   /* a block\n\
                   \x20      comment */\n\
                   \x20   let s = \"two\n\
                   \n\
                   lines\"; // and a comment\n\
                   }\n\
                   #[cfg(test)]\n\
                   mod tests {\n\
                   \x20   fn t() {}\n\
                   }\n";
        // fn f, let s, `lines";` and the `}`; the blank line inside the literal is blank.
        assert_eq!(code_lines(src), 4);
        assert!(engine_file_size("x.rs", src).is_none());
        let long = "fn f() {}\n".repeat(ENGINE_FILE_LINES + 1);
        let v = engine_file_size("x.rs", &long).unwrap_or_default();
        assert_eq!(
            v,
            "crates/svc-engine/src/x.rs: 801 code lines, over the engine's 800: cut it by concern"
        );
    }

    #[test]
    fn dead_code_allowances_are_counted_in_code() {
        let src = "#[allow(dead_code)]\nfn a() {}\n#[allow(unused, dead_code)]\nfn b() {}\n\
                   #[cfg_attr(not(test), allow(dead_code))]\nfn c() {}\n\
                   // #[allow(dead_code)]\n#[allow(dead_code_x)]\nconst S: &str = \"allow(dead_code)\";\n\
                   #[allow(\n    dead_code,\n    reason = \"x\"\n)]\nfn e() {}\n\
                   #[expect(unused)]\nfn f() {}\n\
                   #[cfg(test)]\nmod tests {\n    #[allow(dead_code)]\n    fn d() {}\n}\n";
        assert_eq!(dead_code_allowances(src), 5);
    }

    fn modules(src: &str, depth: usize) -> Vec<(usize, Reference)> {
        module_references(src, depth)
    }

    fn module(name: &str) -> Reference {
        Reference::Module(name.to_owned())
    }

    #[test]
    fn a_grouped_use_names_each_module() {
        let src = "use std::fmt;\nuse crate::{http, engine::Engine, self};\n";
        assert_eq!(
            modules(src, 1),
            [
                (2, module("http")),
                (2, module("engine")),
                (2, module("self"))
            ]
        );
    }

    #[test]
    fn a_use_over_several_lines_gives_each_module_its_line() {
        let src = "use crate::{\n    http::extract::{blocking, json_bytes},\n    pages,\n};\n";
        assert_eq!(modules(src, 1), [(2, module("http")), (3, module("pages"))]);
    }

    #[test]
    fn paths_in_code_and_super_to_the_root_count() {
        let src = "fn f() {\n    crate::records::list();\n    super::pages::x();\n}";
        assert_eq!(
            modules(src, 1),
            [(2, module("records")), (3, module("pages"))]
        );
        // Two levels down, one `super` stays inside the parent module; two reach the root.
        assert_eq!(modules(src, 2), [(2, module("records"))]);
        assert_eq!(modules("use super::super::sql;", 2), [(1, module("sql"))]);
    }

    #[test]
    fn escaped_quotes_do_not_open_a_literal() {
        let src = "let q = '\\'';\nlet s = \"a \\\" crate::pages\";\nuse crate::sql;\n";
        assert_eq!(modules(src, 1), [(3, module("sql"))]);
    }

    #[test]
    fn comments_and_strings_are_no_references() {
        let src = "//! Knows nothing of axum or crate::http.\n\
                   /// Unlike `axum::Router`, /* nested /* crate::http */ */\n\
                   const S: &str = \"axum::Json crate::pages\";\n\
                   const R: &str = r#\"clap::Parser \"quoted\" crate::pages\"#;\n\
                   fn f<'a>(c: char) -> bool { c == '\"' || c == '{' }\n\
                   use axum::Router;\n";
        assert_eq!(modules(src, 1), [(6, Reference::Axum)]);
    }

    #[test]
    fn axum_and_clap_paths_count_fields_do_not() {
        let src = "use clap::Parser;\n#[derive(clap::Args)]\nstruct A;\nfn f(x: X) { x.axum; }\n";
        assert_eq!(
            modules(src, 1),
            [(1, Reference::Clap), (2, Reference::Clap)]
        );
    }

    #[test]
    fn test_modules_are_left_out() {
        let src = "use crate::http;\n#[cfg(test)]\nmod tests {\n    use crate::pages;\n    \
                   fn f() { if true { } }\n}\nuse crate::sql;\n#[cfg(test)]\nmod more;\n";
        assert_eq!(modules(src, 1), [(1, module("http")), (7, module("sql"))]);
    }

    #[test]
    fn a_slice_importing_a_slice_is_a_violation() {
        let src = "use crate::{http, records, resources::Thing};\nuse crate::Emulator;\n";
        let violations = layering_violations("resources.rs", src);
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].0, 1);
        assert!(
            violations[0]
                .1
                .contains("slice `resources` uses slice `records`")
        );
        // A slice in a folder; a layer may use slices.
        assert_eq!(
            layering_violations("records/mod.rs", "use crate::pages;").len(),
            1
        );
        assert!(
            layering_violations("runtime/router.rs", "use crate::{pages, records};").is_empty()
        );
    }

    #[test]
    fn a_database_driver_is_named_only_in_its_backend() {
        let src = "use rusqlite::types::ValueRef;\nfn f(e: tokio_postgres::Error) {}\n";
        let violations = layering_violations("dialect/types.rs", src);
        assert_eq!(violations.len(), 2, "{violations:?}");
        assert!(violations[0].1.contains("`rusqlite`, a database driver"));
        assert_eq!(violations[1].0, 2);
        assert!(layering_violations("sqlite/types.rs", "use rusqlite::Row;").is_empty());
        assert!(layering_violations("storage/pages.rs", "use rusqlite::Row;").is_empty());
        assert_eq!(
            layering_violations("postgres/mod.rs", "use rusqlite::Row;").len(),
            1
        );
        assert_eq!(
            layering_violations("http/list.rs", "use mysql_async::Pool;").len(),
            1
        );
        // A database server's crate is named by the catalog alone.
        let open = "let r = svc_emulator_postgres::PgResource::open(url, seed);";
        assert!(layering_violations("catalog/open.rs", open).is_empty());
        let v = layering_violations("http/backend.rs", open);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].1.contains("`svc_emulator_postgres`"), "{v:?}");
        // A field or method of that name is no use of the crate.
        assert!(layering_violations("flow/list.rs", "fn f(x: X) { x.rusqlite; }").is_empty());
    }

    #[test]
    fn layers_import_only_downward() {
        // Settings and the meta store borrow nothing from above.
        let v = layering_violations("config/mod.rs", "x: crate::account::TokenLifetimes,");
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].1.contains("a layer above it"), "{v:?}");
        assert_eq!(
            layering_violations("storage/mod.rs", "use crate::sessions::X;").len(),
            1
        );
        // The HTTP layer assembles no slices: the runtime does.
        assert_eq!(
            layering_violations("http/state.rs", "use crate::proxy::Forwarder;").len(),
            1
        );
        // Downward is fine: a backend uses the interface, the dialect and storage.
        let src =
            "use crate::backend::Backend;\nuse crate::dialect::X;\nuse crate::storage::private;";
        assert!(layering_violations("sqlite/mod.rs", src).is_empty());
        assert!(layering_violations("config/limits.rs", "crate::util::timestamp::X").is_empty());
    }

    #[test]
    fn a_flow_statement_is_written_only_in_its_flow() {
        let insert = "fn f(t: &str) -> String {\n    format!(\"INSERT INTO {t} (a) \\\n         VALUES (?)\")\n}\n";
        let v = flow_statements_outside_flows("mysql/records.rs", insert);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].0, 2);
        assert!(
            v[0].1.contains("`INSERT INTO`") && v[0].1.contains("flow/write.rs"),
            "{v:?}"
        );
        assert!(flow_statements_outside_flows("flow/write.rs", insert).is_empty());
        // An update over several lines, a delete, a lock: each found where it does not belong.
        let update = "const U: &str = \"UPDATE t\n    SET a = 1\";";
        assert_eq!(
            flow_statements_outside_flows("dialect/x.rs", update).len(),
            1
        );
        assert!(flow_statements_outside_flows("flow/delete.rs", update).is_empty());
        let lock = "let s = \"SELECT a FROM t LIMIT 1 FOR UPDATE\";";
        assert_eq!(flow_statements_outside_flows("sqlite/x.rs", lock).len(), 1);
        assert_eq!(
            flow_statements_outside_flows("flow/delete.rs", lock).len(),
            1
        );
        // Not statements: comments, prose in lower case, test code, the emulator's own state.
        let not = "// INSERT INTO t\nconst M: &str = \"update the row, then set it\";\n\
                   #[cfg(test)]\nmod tests {\n    const S: &str = \"DELETE FROM t\";\n}\n";
        assert!(flow_statements_outside_flows("postgres/x.rs", not).is_empty());
        let state = "const S: &str = \"DELETE FROM pages WHERE uid = ?1\";";
        assert!(flow_statements_outside_flows("storage/pages.rs", state).is_empty());
        assert!(flow_statements_outside_flows("sqlite/backend.rs", state).is_empty());
        assert_eq!(
            flow_statements_outside_flows("sqlite/mod.rs", state).len(),
            1
        );
    }

    #[test]
    fn only_the_catalog_names_a_concrete_database() {
        for path in [
            "http/backend.rs",
            "records/mod.rs",
            "flow/filter.rs",
            "runtime/mod.rs",
        ] {
            let v = layering_violations(path, "use crate::postgres::PgResource;");
            assert_eq!(v.len(), 1, "{path}: {v:?}");
            assert!(v[0].1.contains("names the postgres backend"), "{v:?}");
        }
        // A backend never names another one.
        assert_eq!(
            layering_violations("sqlite/mod.rs", "use crate::postgres::X;").len(),
            1
        );
        // The catalog and the backend itself may.
        assert!(
            layering_violations("catalog/open.rs", "crate::postgres::PgResource::open").is_empty()
        );
        assert!(
            layering_violations("postgres/records.rs", "use crate::postgres::types;").is_empty()
        );
        // The feature that builds a backend is named where it is registered, nowhere above.
        let gated = "#[cfg(feature = \"postgres\")]\nfn f() {}\n";
        let v = layering_violations("http/extract.rs", gated);
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].0, 1);
        for allowed in ["lib.rs", "catalog/open.rs", "postgres/mod.rs"] {
            assert!(layering_violations(allowed, gated).is_empty(), "{allowed}");
        }
        // A comment that mentions it is not code.
        assert!(layering_violations("http/extract.rs", "// feature = \"postgres\"").is_empty());
    }

    #[test]
    fn http_free_layers_and_clap() {
        let v = layering_violations("flow/sql.rs", "use crate::http::X;\nuse axum::Json;\n");
        assert_eq!(v.len(), 2, "{v:?}");
        let v = layering_violations(
            "storage/mod.rs",
            "// built for axum\nuse http::StatusCode;\n",
        );
        assert!(v.is_empty(), "{v:?}");
        assert_eq!(
            layering_violations("runtime/mod.rs", "use clap::Parser;").len(),
            1
        );
        assert!(layering_violations("cli/mod.rs", "use clap::Parser;").is_empty());
        assert!(layering_violations("main.rs", "use clap::Parser;").is_empty());
        assert_eq!(layering_violations("widgets.rs", "").len(), 1);
    }

    fn words(line: &str) -> Vec<String> {
        named_paths(line)
            .into_iter()
            .map(|n| match n {
                Named::Link(p) => format!("link {p}"),
                Named::Word(p) => p,
            })
            .collect::<Vec<_>>()
    }

    #[test]
    fn markdown_links() {
        assert_eq!(
            words("See [the contract](../docs/contract.md#errors) and [x](https://a.b/c.md)."),
            ["link ../docs/contract.md"]
        );
        assert_eq!(
            words("[up](#top), [mail](mailto:a@b.c), [T](crate::Thing)"),
            [] as [&str; 0]
        );
        assert_eq!(
            words("[`svc-api`](crates/svc-api) |"),
            ["link crates/svc-api"]
        );
    }

    #[test]
    fn words_that_are_paths() {
        assert_eq!(
            words("/// see `crates/svc-emulator/src/http/mod.rs:42`, docs/sql.md."),
            ["crates/svc-emulator/src/http/mod.rs", "docs/sql.md"]
        );
        assert_eq!(
            words("(`pages.rs`, `records/`, ...) README.md"),
            ["pages.rs", "records/", "README.md"]
        );
        assert_eq!(
            words("run .ci/run; cat ../README.md"),
            [".ci/run", "../README.md"]
        );
        assert_eq!(
            words("// engine/resource.rs holds it"),
            ["engine/resource.rs"]
        );
        assert_eq!(words("é `…` → `src/engine/` …"), ["src/engine/"]);
    }

    #[test]
    fn words_that_are_not_paths() {
        let none: [&str; 0] = [];
        assert_eq!(
            words("application/json and/or x.y, https://docs.rs/crate/x.rs"),
            none
        );
        assert_eq!(
            words("crates/svc-api/src/{pages,projects}.rs fuzz/artifacts/TARGET/"),
            none
        );
        assert_eq!(
            words("tests/*.rs $DIR/x.md <dir>/y.md package.metadata.docs.rs"),
            none
        );
        assert_eq!(words("/w/crates/svc-auth/src/lib.rs"), none);
        // A directory outside backticks is too often something else (`"svc-rs/"`, a URL).
        assert_eq!(words("concat!(\"svc-rs/\", v) ./ 127.0.0.1/"), none);
    }

    #[test]
    fn resolving() {
        let files = [
            "README.md",
            "docs/contract.md",
            "crates/a/src/lib.rs",
            "crates/a/src/http/mod.rs",
            "tests/tests/load.rs",
        ]
        .map(str::to_owned);
        let tree = Tree::new(&files);
        let word = |p: &str| Named::Word(p.to_owned());
        let link = |p: &str| Named::Link(p.to_owned());
        assert!(tree.resolves("docs", &link("../README.md")));
        assert!(tree.resolves("", &link("crates/a")));
        assert!(!tree.resolves("docs", &link("README.md")));
        assert!(tree.resolves("crates/a/src/http", &word("docs/contract.md")));
        assert!(tree.resolves("docs", &word("http/mod.rs")));
        assert!(tree.resolves("docs", &word("crates/a/src/")));
        assert!(tree.resolves("xtask/src", &word("tests/load.rs")));
        assert!(tree.resolves("xtask/src", &word("lib.rs")));
        assert!(!tree.resolves("crates/a/src", &word("engine/mod.rs")));
        assert!(!tree.resolves("", &word("docs/gone.md")));
        assert!(!tree.resolves("", &word("../../outside.md")));
    }

    #[test]
    fn only_comments_and_strings_of_rust_name_paths() {
        let line = r#"    self.sh.run("docs/ab.md"); // see bc.md"#;
        let text = comments_and_strings(line, &rust_code(line));
        assert_eq!(words(&text), ["docs/ab.md", "bc.md"]);
    }
}
