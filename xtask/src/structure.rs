//! `cargo xtask structure`: what Cargo cannot check, read from the sources (std only, no build,
//! so it runs first in `cargo xtask ci`): the order of the modules inside a crate ([`LAYERS`],
//! [`ONLY_IN`]), no flow's statement in a database crate and no SQL in the engine, the figures
//! of a new database server (`structure/figures.rs`), every path a file names, and what is
//! published (`structure/references.rs`). Rust is read as its [`code`]; each violation prints
//! as `path:line: what is wrong: what to do`.

use std::path::Path;
use std::process::Command;

mod figures;
mod references;

/// The crates read: svc-emulator, its state below HTTP, the core of its databases, the engine.
const EMULATOR_SRC: &str = "crates/svc-emulator/src/";
const STATE_SRC: &str = "crates/svc-emulator-state/src/";
const CORE_SRC: &str = "crates/svc-emulator-core/src/";
const ENGINE_SRC: &str = "crates/svc-engine/src/";

/// A crate's sources: each path under its `src/`, and its text; test files left out.
type Sources = Vec<(String, String)>;

/// Each crate's top-level modules in groups, lowest first: a module names (`crate::m`, `super::m`
/// up to the root) only those of a lower group: the slices never name each other.
const LAYERS: [&str; 4] = [
    "crates/svc-emulator-core/src/: location private blocking < dialect < flow < backend",
    "crates/svc-emulator-state/src/: util demo < config < storage < catalog < sessions < snapshot",
    "crates/svc-emulator-http/src/: admission auth cors error list routes < journal < stubs \
     < backend extract state < app capture tools",
    "crates/svc-emulator/src/: databases < account actions fixture openapi pages projects proxy records \
     resources sql teams users < ui < runtime < cli",
];

/// Words of code only some top-level modules of a crate write, besides its root: clap is the
/// command line's (library users get none); `databases` opens the catalog's resources, nothing
/// else names a database crate or its feature; the meta store and the sessions' are SQLite files.
const ONLY_IN: [(&str, &str, &[&str]); 7] = [
    (EMULATOR_SRC, "clap", &["cli"]),
    (EMULATOR_SRC, "svc_emulator_sqlite", &["databases"]),
    (EMULATOR_SRC, "svc_emulator_postgres", &["databases"]),
    (EMULATOR_SRC, "svc_emulator_mysql", &["databases"]),
    (EMULATOR_SRC, "feature = \"postgres\"", &["databases"]),
    (EMULATOR_SRC, "feature = \"mysql\"", &["databases"]),
    (STATE_SRC, "rusqlite", &["storage", "sessions"]),
];

/// Runs the rules from the workspace root, prints the figures and then every violation (last,
/// where they are seen), and returns whether none.
pub fn structure(root: &Path) -> bool {
    let Some(files) = repo_files(root) else {
        eprintln!("structure: `git ls-files` failed: run it in a clone of the repository");
        return false;
    };
    let read = |dir: &str| sources_under(root, &files, dir);
    let crate_dir = |name| format!("crates/svc-emulator-{name}/src/");
    let databases = ["sqlite", "postgres", "mysql"].map(|name| (name, read(&crate_dir(name))));
    let (core, engine) = (read(CORE_SRC), read(ENGINE_SRC));
    let mut violations = figures::figures(&read("crates/"), &databases);
    for (dir, order) in LAYERS.iter().filter_map(|layers| layers.split_once(": ")) {
        violations.extend(layering(dir, order, &read(dir)));
    }
    violations.extend(flow_rules(&core, &databases));
    violations.extend(engine_rules(&engine));
    violations.extend(references::references(root, &files));
    violations.extend(references::publishing(root, &files));
    violations.iter().for_each(|v| eprintln!("{v}"));
    eprintln!("structure: {} violation(s)", violations.len());
    violations.is_empty()
}

/// The repository's files: tracked and new ones (not ignored), none deleted from the work tree.
fn repo_files(root: &Path) -> Option<Vec<String>> {
    let args = ["ls-files", "--cached", "--others", "--exclude-standard"];
    let output = Command::new("git").args(args).current_dir(root).output();
    let output = output.ok().filter(|o| o.status.success())?;
    let listed = String::from_utf8_lossy(&output.stdout);
    let files = listed.lines().filter(|f| root.join(f).is_file());
    Some(files.map(str::to_owned).collect())
}

/// The Rust sources under `dir` but test files (`tests.rs`, anything under `tests/`).
fn sources_under(root: &Path, files: &[String], dir: &str) -> Sources {
    let test = |p: &str| p.split('/').any(|c| c == "tests" || c == "tests.rs");
    let rust = files.iter().filter_map(|f| Some((f, f.strip_prefix(dir)?)));
    let rust = rust.filter(|(_, p)| p.ends_with(".rs") && !test(p));
    let read = |f: &String| std::fs::read_to_string(root.join(f)).ok();
    let sources = rust.filter_map(|(f, p)| Some((p.into(), read(f)?)));
    sources.collect()
}

/// A Rust source's code, byte for byte (lines and columns stay): comments and literals' contents
/// blanked with spaces (quotes stay, to pair up), test code with tabs (its comments told apart):
/// an item under `#[cfg(test)]` to its `;` or closing `}`, a file under `#![cfg(test)]`.
fn code(src: &str) -> String {
    let mut out = src.as_bytes().to_vec();
    let mut i = 0;
    while i < src.len() {
        let rest = &src[i..];
        // `r"`, `r#"`, `br#"`: a raw string, no escapes; `'x'`, `'\''`: a char literal (a
        // lifetime has no closing quote; `'\u{7f}'` holds no quote and stays code).
        let after_r = rest.trim_start_matches('b').strip_prefix('r');
        let after_r = after_r.unwrap_or_default();
        let hashes = after_r.len() - after_r.trim_start_matches('#').len();
        let raw = !ends_ident(&src[..i]) && after_r[hashes..].starts_with('"');
        let body = rest.strip_prefix('\'').unwrap_or_default();
        let len = body.chars().next().map_or(0, char::len_utf8);
        let len = len + usize::from(body.starts_with('\\'));
        let char_literal = len > 0 && body.get(len..).is_some_and(|b| b.starts_with('\''));
        let comment = match rest.get(..2) {
            Some("//") => Some(rest.find('\n').unwrap_or(rest.len())),
            Some("/*") => Some(rest.find("*/").map_or(rest.len(), |n| n + 2)),
            _ => None,
        };
        // What to blank from `i` on, and where the code goes on.
        let (blank, next) = if let Some(end) = comment {
            (0..end, end)
        } else if raw {
            let close = "\"".to_owned() + &"#".repeat(hashes);
            let open = rest.len() - after_r.len() + hashes + 1;
            let end = rest[open..].find(&close).map_or(rest.len(), |n| open + n);
            (open..end, end + close.len())
        } else if rest.starts_with('"') {
            let mut end = 1;
            while end < rest.len() && rest.as_bytes()[end] != b'"' {
                end += 1 + usize::from(rest.as_bytes()[end] == b'\\');
            }
            (1..end.min(rest.len()), end + 1)
        } else if char_literal {
            (1..len + 1, len + 2)
        } else {
            (0..0, rest.chars().next().map_or(1, char::len_utf8))
        };
        for b in out[i + blank.start..src.len().min(i + blank.end)].iter_mut() {
            *b = if *b == b'\n' { b'\n' } else { b' ' };
        }
        i += next;
    }
    let code = String::from_utf8_lossy(&out).into_owned();
    let whole = code.contains("#![cfg(test)]").then_some((0, code.len()));
    let items = code.match_indices("#[cfg(test)]").map(|(at, _)| {
        let mut depth = 0;
        let end = code[at..].bytes().position(|c| {
            depth += i32::from(c == b'{') - i32::from(c == b'}');
            depth <= 0 && (c == b';' || c == b'}')
        });
        (at, end.map_or(code.len(), |n| at + n + 1))
    });
    for (start, end) in whole.into_iter().chain(items) {
        out[start..end]
            .iter_mut()
            .for_each(|b| *b = if *b == b'\n' { b'\n' } else { b'\t' });
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The line (1-based) of byte `at` of a text.
fn line_at(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// Whether `text` ends with a char of an identifier.
fn ends_ident(text: &str) -> bool {
    text.ends_with(|c: char| c.is_alphanumeric() || c == '_')
}

/// The top-level modules `code` names, with their lines: `crate::m`, each of a group
/// (`crate::{a, b::c}`), and `super::m` when its `super`s climb to the root from `depth`.
fn named_modules(code: &str, depth: usize) -> Vec<(usize, &str)> {
    let (supers, mut out) = ("super::".repeat(depth), Vec::new());
    for prefix in ["crate::", supers.as_str()] {
        let paths = code.match_indices(prefix).map(|(at, _)| at);
        for at in paths.filter(|&at| !ends_ident(&code[..at]) && !code[..at].ends_with(':')) {
            let start = at + prefix.len();
            let (mut items, mut nesting) = (vec![start], 0);
            for (i, c) in code[start..].char_indices() {
                nesting += i32::from(c == '{') - i32::from(c == '}');
                match nesting {
                    ..=0 => break,
                    1 if c == '{' || c == ',' => items.push(start + i + 1),
                    _ => {}
                }
            }
            for name in items.into_iter().map(|item| code[item..].trim_start()) {
                let len = name.find(|c: char| !c.is_alphanumeric() && c != '_');
                let at = line_at(code, code.len() - name.len());
                out.extend(len.filter(|&n| n > 0).map(|n| (at, &name[..n])));
            }
        }
    }
    out
}

/// The lines where `word` stands alone in the code of `src` (`code`: its [`code`]).
fn written(src: &str, code: &str, word: &str) -> Vec<usize> {
    let stands = |&at: &usize| {
        let after = src[at + word.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_');
        code.as_bytes()[at] == src.as_bytes()[at] && !ends_ident(&src[..at]) && !after
    };
    let found = src.match_indices(word).map(|(at, _)| at).filter(stands);
    found.map(|at| line_at(src, at)).collect()
}

/// [`LAYERS`] and [`ONLY_IN`] over a crate's sources (`dir`: its `src/`).
fn layering(dir: &str, order: &str, sources: &Sources) -> Vec<String> {
    let rank = |m: &str| order.split('<').position(|g| g.split(' ').any(|n| n == m));
    let (roots, mut out) = (["lib.rs", "main.rs"], Vec::new());
    for (path, src) in sources.iter().filter(|(p, _)| !roots.contains(&p.as_str())) {
        let top = path.split(['/', '.']).next().unwrap_or_default();
        let Some(own) = rank(top) else {
            let fix = "add it to LAYERS in xtask/src/structure.rs";
            out.push(format!("{dir}{path}:1: `{top}` is in no layer: {fix}"));
            continue;
        };
        let code = code(src);
        let depth = path.matches('/').count() + usize::from(!path.ends_with("/mod.rs"));
        for (line, m) in named_modules(&code, depth) {
            if m != top && rank(m).is_some_and(|r| r >= own) {
                let fix = format!("which is not below it ({order}): move what both need lower");
                out.push(format!("{dir}{path}:{line}: `{top}` names `{m}`, {fix}"));
            }
        }
        for (_, word, homes) in ONLY_IN.iter().filter(|o| o.0 == dir && !o.2.contains(&top)) {
            let fix = format!("only in the root and [{}]: move it there", homes.join(", "));
            for line in written(src, &code, word) {
                out.push(format!("{dir}{path}:{line}: `{word}` is written {fix}"));
            }
        }
    }
    out
}

/// The string literals of a source's code: the line each starts on, and its value with escapes
/// read (loosely: raw strings too) and each run of whitespace (`\n`, `\` at an end) one space.
fn literals(src: &str) -> Vec<(usize, String)> {
    let code = code(src);
    let quotes: Vec<usize> = code.match_indices('"').map(|(at, _)| at).collect();
    let mut out = Vec::new();
    for pair in quotes.chunks_exact(2) {
        let (mut value, mut chars) = (String::new(), src[pair[0] + 1..pair[1]].chars());
        while let Some(c) = chars.next() {
            let escaped = (c == '\\').then(|| chars.next()).flatten();
            value.push(escaped.map_or(c, |e| if "ntr".contains(e) { ' ' } else { e }));
        }
        let words: Vec<&str> = value.split_whitespace().collect();
        out.push((line_at(&code, pair[0]), words.join(" ")));
    }
    out
}

/// The statements of the records' flows: svc-emulator-core's `flow/` writes each once for every
/// database, which gives its dialect (quoting, binds, the lock clause of `Dialect::LOCK`).
const FLOW_STATEMENTS: [&str; 4] = ["INSERT INTO", "UPDATE … SET", "DELETE FROM", "FOR UPDATE"];

/// Whether `sql` holds `statement` (`UPDATE … SET`: its words in that order).
fn holds(sql: &str, statement: &str) -> bool {
    let Some((a, b)) = statement.split_once(" … ") else {
        return sql.contains(statement);
    };
    let at = sql.find(&format!("{a} "));
    at.is_some_and(|at| sql[at..].contains(&format!(" {b} ")))
}

/// The calls of the servers' drivers (tokio-postgres, mysql_async) that send a statement: only
/// a server's `driver.rs` writes them, so every statement it runs has one runner and one bind
/// type (issue 85).
const DRIVER_CALLS: [&str; 12] = [
    ".query(",
    ".query_one(",
    ".query_opt(",
    ".query_raw(",
    ".batch_execute(",
    ".simple_query(",
    ".prepare(",
    ".prepare_typed(",
    ".exec(",
    ".exec_drop(",
    ".exec_first(",
    ".query_iter(",
];

/// The calls of SQLite's driver (rusqlite) that prepare or run a statement: only its
/// `driver.rs` writes them, as a server's.
const SQLITE_DRIVER_CALLS: [&str; 10] = [
    ".prepare(",
    ".prepare_cached(",
    ".execute(",
    ".execute_batch(",
    ".query(",
    ".query_row(",
    ".query_map(",
    ".raw_query(",
    ".savepoint(",
    "Backup::new(",
];

/// [`FLOW_STATEMENTS`] in the database crates (SQLite's own are exempt: the built-in tools'
/// schema and writes in `backend.rs`, docs/contract.md 5.3, and `sqlite_sequence`, its next
/// keys); [`DRIVER_CALLS`] outside a server's `driver.rs` ([`SQLITE_DRIVER_CALLS`] outside
/// SQLite's); and dead code allowed in the flows,
/// which serve every database, SQLite included.
fn flow_rules(core: &Sources, databases: &[(&str, Sources)]) -> Vec<String> {
    let mut out = Vec::new();
    for (name, sources) in databases {
        for (path, src) in sources {
            for (line, sql) in literals(src) {
                let own = *name == "sqlite" && (path == "backend.rs" || sql.contains("sqlite_seq"));
                for statement in FLOW_STATEMENTS.iter().filter(|s| holds(&sql, s) && !own) {
                    let at = format!("crates/svc-emulator-{name}/src/{path}:{line}");
                    let fix = "a flow's: only svc-emulator-core's flow/ writes it";
                    out.push(format!("{at}: writes `{statement}`, {fix}"));
                }
            }
        }
    }
    for (name, sources) in databases {
        let calls: &[&str] = match *name {
            "sqlite" => &SQLITE_DRIVER_CALLS,
            _ => &DRIVER_CALLS,
        };
        for (path, src) in sources.iter().filter(|(path, _)| path != "driver.rs") {
            let code = code(src);
            for call in calls {
                for line in code.match_indices(call).map(|(at, _)| line_at(&code, at)) {
                    let at = format!("crates/svc-emulator-{name}/src/{path}:{line}");
                    let fix = "run it through the crate's driver.rs, bound with its Params";
                    out.push(format!("{at}: calls the driver (`{call}`): {fix}"));
                }
            }
        }
    }
    for (path, src) in core.iter().filter(|(p, _)| p.starts_with("flow/")) {
        let code = code(src);
        let lints = ["dead_code", "unused"].map(|lint| written(src, &code, lint));
        for line in lints.concat() {
            let fix = "a flow serves every database: use it or delete it";
            out.push(format!("{CORE_SRC}{path}:{line}: allows dead code: {fix}"));
        }
    }
    out
}

/// SQL's words in capitals, as the emulator writes them (prose writes "select" in lower case).
const SQL_WORDS: &str = "SELECT | FROM | WHERE | AS | AND | OR | NOT (| IN (| LIKE | ILIKE |\
    INSERT INTO|DELETE FROM|CREATE TABLE|ORDER BY|GROUP BY|CAST(|COALESCE(|COUNT(|LIMIT |\
    CASE WHEN| IS NULL| IS NOT NULL| DISTINCT |PRAGMA |UPDATE … SET";

/// SQL's comparisons, which prose writes too (`must be >= 1`): SQL in a literal with no
/// lower-case letter outside its `{...}` placeholders (`{} = {}`).
const SQL_OPERATORS: [&str; 7] = [" = ", " <> ", " != ", " >= ", " <= ", " > ", " < "];

/// What makes a literal's value SQL, if anything: an identifier quoted as SQL does (`""`,
/// `"{}"`, `"name"."{}"`, MySQL's backticks), [`SQL_WORDS`], [`SQL_OPERATORS`] outside prose.
fn sql_text(value: &str) -> Option<&str> {
    let quoted = |p: &str| {
        let quotes = ['"', '`'];
        let name = p.strip_prefix(quotes).and_then(|q| q.strip_suffix(quotes));
        let name = name.map(|n| n.trim_start_matches('{').trim_end_matches('}'));
        name.is_some_and(|n| !n.contains(|c: char| !c.is_alphanumeric() && c != '_'))
    };
    if matches!(value, "\"" | "`") || value.split('.').all(quoted) {
        return Some("\"");
    }
    let padded = format!(" {value} ");
    let mut outside = value.split('{').map(|s| s.rsplit('}').next().unwrap_or(s));
    let prose = outside.any(|s| s.contains(char::is_lowercase));
    let operator = SQL_OPERATORS.into_iter().find(|o| padded.contains(o));
    let word = SQL_WORDS.split('|').find(|w| holds(&padded, w));
    word.or(operator.filter(|_| !prose))
}

/// The code lines of an engine file: past them it mixes concerns a new database reads through.
const ENGINE_FILE_LINES: usize = 800;

/// The engine's rules are the same for every database: the SQL that carries them out is a
/// dialect's or a flow's, where a new database finds it all; and its files stay short.
fn engine_rules(sources: &Sources) -> Vec<String> {
    let mut out = Vec::new();
    let fix = "it belongs in svc-emulator-core's dialect/ or flow/, or a database's crate";
    for (path, src) in sources {
        for (line, value) in literals(src) {
            if let Some(what) = sql_text(&value).map(str::trim) {
                let what = format!("the engine writes SQL (`{what}` in \"{value:.60}\"): {fix}");
                out.push(format!("{ENGINE_SRC}{path}:{line}: {what}"));
            }
        }
        let lines = code(src).lines().filter(|l| !l.trim().is_empty()).count();
        if lines > ENGINE_FILE_LINES {
            let fix = format!("over {ENGINE_FILE_LINES}: cut it by concern");
            out.push(format!("{ENGINE_SRC}{path}:1: {lines} code lines, {fix}"));
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Sources from `(path, text)` pairs (also for the figures' tests).
    pub(crate) fn sources(files: &[(&str, &str)]) -> Sources {
        let owned = |(p, s): &(&str, &str)| (p.to_string(), s.to_string());
        files.iter().map(owned).collect()
    }

    /// Where each violation is, under its crate's `src/`.
    fn places(out: &[String]) -> String {
        let places = out.iter().map(|v| v.split(": ").next().unwrap_or(v));
        let places = places.map(|p| p.rsplit("src/").next().unwrap_or(p));
        places.collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn code_blanks_comments_literals_and_tests() {
        let src = "let a = r#\"x \"y\"\"#; // c\nlet c = '\"'; let l: &'a str = \"é\\\"\";\n\
                   /* d */ f();\n#[cfg(test)]\nmod t {\n    x();\n}\ng();\n";
        let blank = "let a = r#\"     \"#;     \nlet c = ' '; let l: &'a str = \"    \";\n\
                     \x20       f();\n";
        let tests = [12, 7, 8, 1].map(|n| "\t".repeat(n) + "\n").concat();
        assert_eq!(code(src), format!("{blank}{tests}g();\n"));
        assert!(code("#![cfg(test)]\nfn f() {}\n").trim().is_empty());
    }

    #[test]
    fn a_module_names_only_the_layers_below_it() {
        let storage = "use crate::{\n    config::X,\n    catalog,\n};\n// crate::snapshot\n";
        let sessions = "use super::super::snapshot::Z;\nuse rusqlite::Connection;\n";
        let snapshot = "use crate::sessions::A;\nfn f(c: rusqlite::Connection) {}\n";
        let files = [("storage/mod.rs", storage), ("sessions/a.rs", sessions)];
        let files = [&files[..], &[("snapshot/mod.rs", snapshot), ("web.rs", "")]].concat();
        let (dir, order) = LAYERS[1].split_once(": ").unwrap();
        let out = layering(dir, order, &sources(&files));
        let expected = "storage/mod.rs:3 sessions/a.rs:1 snapshot/mod.rs:2 web.rs:1";
        assert_eq!(places(&out), expected, "{out:#?}");
    }

    #[test]
    fn flow_statements_dead_code_and_sql_in_literals() {
        let src = "f(\"UPDATE {t} \\\n     SET a = 1\");\nf(\"update it, set it\");\n";
        assert_eq!(literals(src)[0], (1, "UPDATE {t} SET a = 1".to_owned()));
        let flow = "#[allow(\n    unused,\n)]\nfn f() {}\n// #[allow(dead_code)]\n";
        let core = sources(&[("flow/write.rs", src), ("flow/x.rs", flow)]);
        let (my, lite) = (sources(&[("db.rs", src)]), sources(&[("backend.rs", src)]));
        let out = flow_rules(&core, &[("mysql", my), ("sqlite", lite)]);
        assert_eq!(places(&out), "db.rs:1 flow/x.rs:2");
        // A statement runs in its database's driver.rs only; a comment that names a call is none.
        let call = "// client.query(sql)\nlet r = client\n    .query_one(sql, &[]);\n";
        let my = sources(&[("driver.rs", call), ("schema.rs", call)]);
        // SQLite's are rusqlite's, in its driver.rs only too.
        let lite_call = "conn.execute_batch(\"BEGIN\")?;\n";
        let lite = [
            ("lib.rs", call),
            ("records.rs", lite_call),
            ("driver.rs", lite_call),
        ];
        let out = flow_rules(&Vec::new(), &[("mysql", my), ("sqlite", sources(&lite))]);
        assert_eq!(places(&out), "schema.rs:3 records.rs:1");
        let sql = "SELECT a FROM t|{} = {}|\"{t}\".\"{}\"|\"\"|UPDATE t SET a|`";
        assert!(sql.split('|').all(|sql| sql_text(sql).is_some()));
        let prose = "the value must be >= 1|SELECTED|said \"hi\" to|\\\"";
        assert!(prose.split('|').all(|prose| sql_text(prose).is_none()));
    }
}
