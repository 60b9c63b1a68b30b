//! The seam of a database crate: what a new database writes for the rest of the workspace. Every
//! trait a workspace crate defines (`crates/*/src/`) that the database implements, counted by
//! its required methods (no default body) once per impl: an impl for two types is written twice
//! (a trait for a driver's row and for a slice of values), a generic impl once. Its own traits
//! are its inside, and std's and its driver's (`Drop`, `Deref`, `ToSql`) no seam of this workspace;
//! an impl the core writes for any database (`Awaited<D>`'s `Schedule`) is the core's. Associated types and
//! consts without a default are printed, not counted: each is a line naming a type the database
//! has anyway (its connection, its row) or a word of its dialect, no code path to write or test.

use crate::structure::{Sources, code, ends_ident, line_at};

/// A trait a workspace crate defines: its name, the crate's folder under `crates/`, its file
/// under the crate's `src/`, whether another crate may implement it (`pub`), its required
/// methods, and its associated types and consts without a default.
struct TraitDef {
    name: String,
    krate: String,
    file: String,
    public: bool,
    methods: usize,
    declared: usize,
}

/// A database's seam: each trait it implements and how many impls, most methods first.
type Seam<'d> = Vec<(&'d TraitDef, usize)>;

/// The most required methods and traits of one database's seam, and the traits it implements
/// that two crates define by one name.
type Figures = (usize, usize, Vec<String>);

/// Prints each database's seam (`(name, sources)`, each in the folder `svc-emulator-<name>`)
/// over the traits of the `workspace`'s crates (each path `<crate folder>/src/...`), and
/// returns the most methods and the most traits of one database, and the traits it cannot tell
/// apart.
pub(super) fn figures(workspace: &Sources, databases: &[(&str, Sources)]) -> Figures {
    let defs = trait_defs(workspace);
    let folders = workspace
        .iter()
        .filter_map(|(path, _)| path.split('/').next());
    let mut crates: Vec<&str> = folders.collect();
    crates.sort_unstable();
    crates.dedup();
    let (mut methods, mut traits, mut ambiguous) = (0, 0, Vec::new());
    let how = "xtask/src/structure/figures/seam.rs";
    eprintln!("structure: the seam, the workspace's traits each database implements ({how}):");
    for (name, sources) in databases {
        let krate = format!("svc-emulator-{name}");
        let (seam, unclear) = seam(&defs, &krate, &crates, sources);
        ambiguous.extend(unclear);
        let sum = |count: fn(&TraitDef) -> usize| -> usize {
            seam.iter().map(|(def, impls)| count(def) * impls).sum()
        };
        let (written, declared) = (sum(|d| d.methods), sum(|d| d.declared));
        let (count, types) = (seam.len(), "associated types and consts, not counted");
        eprintln!("  {name:<9} {written:>3} methods in {count} traits (and {declared} {types})");
        for (def, impls) in &seam {
            let (trait_name, required) = (&def.name, def.methods * impls);
            let twice = (*impls > 1).then(|| format!(", {impls} impls"));
            let file = format!("crates/{}/src/{}", def.krate, def.file);
            let file = file + &twice.unwrap_or_default();
            eprintln!("    {trait_name:<13} {required:>2}  ({file})");
        }
        (methods, traits) = (methods.max(written), traits.max(count));
    }
    (methods, traits, ambiguous)
}

/// The traits of the workspace's sources (each path `<crate folder>/src/...`).
fn trait_defs(workspace: &Sources) -> Vec<TraitDef> {
    let mut defs = Vec::new();
    for (path, src) in workspace {
        let Some((krate, file)) = path.split_once("/src/") else {
            continue;
        };
        let code = code(src);
        let traits = code.match_indices("trait ").map(|(at, _)| at);
        for at in traits.filter(|&at| !ends_ident(&code[..at])) {
            let before = code[..at].trim_end();
            let before = before.strip_suffix("unsafe").unwrap_or(before).trim_end();
            let public = before.strip_suffix("pub").is_some_and(|b| !ends_ident(b));
            let rest = code[at + "trait ".len()..].trim_start();
            let end = rest.find(|c: char| !c.is_alphanumeric() && c != '_');
            let name = &rest[..end.unwrap_or(rest.len())];
            // A macro's `trait $name` names none; a trait alias has no body.
            let Some(open) = rest.find('{').filter(|_| !name.is_empty()) else {
                continue;
            };
            let (methods, declared) = required(&rest[open..]);
            let (name, krate, file) = (name.to_owned(), krate.to_owned(), file.to_owned());
            let def = TraitDef {
                name,
                krate,
                file,
                public,
                methods,
                declared,
            };
            defs.push(def);
        }
    }
    defs
}

/// The items of a trait's `body` (from its `{`) an impl must write: its methods ending with `;`
/// (not a body), and its associated types (a default type is unstable Rust) and consts with no
/// `= value`.
fn required(body: &str) -> (usize, usize) {
    let (mut depth, mut start, mut counts) = (0, 1, (0, 0));
    for (i, c) in body.char_indices() {
        match c {
            '{' | '(' | '[' => depth += 1,
            '}' | ')' | ']' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
                // A body closed: the item before it has a default.
                start = if depth == 1 && c == '}' { i + 1 } else { start };
            }
            ';' if depth == 1 => {
                let item = &body[start..i];
                let mut words = item.split(|c: char| !c.is_alphanumeric() && c != '_');
                match words.find(|w| ["fn", "type", "const"].contains(w)) {
                    Some("fn") => counts.0 += 1,
                    Some("type") => counts.1 += 1,
                    Some(_) if !outside_angles(item).contains('=') => counts.1 += 1,
                    _ => {}
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    counts
}

/// Each char of `text` with its depth in `<...>`, its brackets inside (the `>` of `->` closes
/// none).
fn angle_depths(text: &str) -> impl Iterator<Item = (usize, char, i32)> + '_ {
    text.char_indices()
        .scan((0, ' '), |(depth, previous), (i, c)| {
            *depth += i32::from(c == '<');
            let inside = *depth;
            *depth -= i32::from(c == '>' && *previous != '-');
            *previous = c;
            Some((i, c, inside))
        })
}

/// `text` but what its `<...>` hold (`Iterator<Item = u8>`).
fn outside_angles(text: &str) -> String {
    let outside = angle_depths(text).filter(|&(_, _, depth)| depth == 0);
    outside.map(|(_, c, _)| c).collect()
}

/// The seam of the database crate in the folder `krate`, from its sources, over `defs` and the
/// workspace's crate folders; and where it implements a trait two crates define by one name.
fn seam<'d>(
    defs: &'d [TraitDef],
    krate: &str,
    crates: &[&str],
    sources: &Sources,
) -> (Seam<'d>, Vec<String>) {
    let (mut seam, mut ambiguous): (Seam<'d>, _) = (Vec::new(), Vec::new());
    for (path, src) in sources {
        let code = code(src);
        let imports = imports(&code);
        for (at, trait_path) in impls(&code) {
            match resolve(defs, krate, crates, &imports, trait_path) {
                Ok(Some(def)) => match seam.iter_mut().find(|(d, _)| std::ptr::eq(*d, def)) {
                    Some((_, impls)) => *impls += 1,
                    None => seam.push((def, 1)),
                },
                Ok(None) => {}
                Err(defined_in) => {
                    let at = format!("crates/{krate}/src/{path}:{}", line_at(&code, at));
                    let fix = "import it by its crate's path (`use svc_engine::table::Column`)";
                    let what = format!("`{trait_path}` is defined in {defined_in}");
                    ambiguous.push(format!("{at}: {what}: {fix}"));
                }
            }
        }
    }
    seam.sort_by_key(|(d, impls)| (std::cmp::Reverse(d.methods * impls), d.name.clone()));
    (seam, ambiguous)
}

/// The trait `path` names in the crate `krate` (through `imports`): a workspace crate's, or
/// none (its own, std's, a driver's); the crates that define its name when they are several.
fn resolve<'d>(
    defs: &'d [TraitDef],
    krate: &str,
    crates: &[&str],
    imports: &[(String, String)],
    path: &str,
) -> Result<Option<&'d TraitDef>, String> {
    let path = path.trim_start_matches("::");
    let (first, rest) = path.split_once("::").map_or((path, ""), |(f, r)| (f, r));
    let imported = imports.iter().find(|(alias, _)| alias == first);
    let full = match imported {
        Some((_, full)) if rest.is_empty() => full.clone(),
        Some((_, full)) => format!("{full}::{rest}"),
        None => path.to_owned(),
    };
    let name = full.rsplit("::").next().unwrap_or_default();
    let ident = |folder: &str| folder.replace('-', "_");
    let root = full.split_once("::").map(|(root, _)| root);
    let workspace = root.and_then(|r| crates.iter().copied().find(|c| ident(c) == r));
    let own = root.is_none_or(|r| ["crate", "self", "super"].contains(&r) || r == ident(krate));
    if own && defs.iter().any(|d| d.name == name && d.krate == krate) {
        return Ok(None);
    }
    if !own && workspace.is_none() {
        return Ok(None);
    }
    let named = |d: &&TraitDef| d.name == name && d.public && d.krate != krate;
    let candidates: Vec<&TraitDef> = defs.iter().filter(named).collect();
    // `svc_emulator_core::X` is the core's X, unless the core re-exports another crate's.
    let mut in_root = candidates.clone();
    in_root.retain(|d| workspace == Some(d.krate.as_str()));
    let found = if in_root.len() == 1 {
        in_root
    } else {
        candidates
    };
    match &found[..] {
        [] => Ok(None),
        [def] => Ok(Some(def)),
        several => {
            let crates: Vec<&str> = several.iter().map(|d| d.krate.as_str()).collect();
            Err(crates.join(" and "))
        }
    }
}

/// The names a source's `use` items bring in, each with the path it stands for (`use a::{b::{self,
/// c as d}}`: `b` for `a::b`, `d` for `a::b::c`); globs bring in no name.
fn imports(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let uses = code.match_indices("use ").map(|(at, _)| at);
    for at in uses.filter(|&at| !ends_ident(&code[..at])) {
        let end = code[at..].find(';').map_or(code.len(), |n| at + n);
        let tree = &code[at + "use ".len()..end];
        let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
        expand("", tree.trim_start_matches("::"), &mut out);
    }
    out
}

/// Adds the names of the use tree `tree` under `prefix` (`a::b::`) to `out`.
fn expand(prefix: &str, tree: &str, out: &mut Vec<(String, String)>) {
    let Some(open) = tree.find('{') else {
        let (path, alias) = tree.split_once(" as ").unwrap_or((tree, ""));
        let path = format!("{prefix}{}", path.trim());
        let path = path.strip_suffix("::self").unwrap_or(&path);
        let alias = Some(alias.trim()).filter(|a| !a.is_empty());
        let alias = alias.or(path.rsplit("::").next());
        if let Some(alias) = alias.filter(|a| !["*", "_"].contains(a)) {
            out.push((alias.to_owned(), path.to_owned()));
        }
        return;
    };
    let prefix = format!("{prefix}{}", tree[..open].trim());
    let inner = &tree[open + 1..];
    let inner = inner.strip_suffix('}').unwrap_or(inner);
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices().chain([(inner.len(), ',')]) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                let item = inner[start..i].trim();
                if !item.is_empty() {
                    expand(&prefix, item, out);
                }
                start = i + 1;
            }
            _ => {}
        }
    }
}

/// The trait impls of a source's code (`impl<...> path::Trait<...> for`): where each starts, and
/// the trait's path without its generics. `impl Type` has no trait, and `-> impl Trait` or
/// `x: impl Trait` is no item.
fn impls(code: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let impls = code.match_indices("impl").map(|(at, _)| at);
    let impls = impls.filter(|&at| code[at + 4..].starts_with([' ', '<', '\n']));
    for at in impls.filter(|&at| !ends_ident(&code[..at])) {
        let before = code[..at].trim_end();
        let before = before.strip_suffix("unsafe").unwrap_or(before).trim_end();
        if !(before.is_empty() || before.ends_with([';', '{', '}', ']'])) {
            continue;
        }
        let header = code[at + 4..].split(['{', ';']).next().unwrap_or_default();
        // `impl<F: Fn() -> u8>`: its generics skipped; the trait's path runs to `for`.
        let mut depths = angle_depths(header.trim_start());
        let start = depths.find(|&(_, _, depth)| depth == 0);
        let header = start.map_or("", |(i, _, _)| &header.trim_start()[i..]);
        let word = |i: usize| !ends_ident(&header[..i]) && header[i..].starts_with("for");
        let word = |i: usize| word(i) && header[i + 3..].starts_with(char::is_whitespace);
        let mut depths = angle_depths(header);
        let Some((end, _, _)) = depths.find(|&(i, _, depth)| depth == 0 && word(i)) else {
            continue;
        };
        let path = header[..end].trim().trim_start_matches('!');
        let path = path.split('<').next().unwrap_or_default();
        out.push((at, path.trim()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structure::tests::sources;

    #[test]
    fn required_items_of_a_trait() {
        let core = "pub trait Rows: Base<X = u8> {\n    /// fn doc();\n    fn a(x: [u8; 4]);\n    \
                    async fn b<T>(\n        t: T,\n    ) -> T\n    where\n        T: Copy;\n    \
                    fn c() { f(); }\n    const K: fn(u8);\n    const D: [u8; 2] = [0; 2];\n    \
                    type Row<'r>: Iterator<Item = u8>;\n}\npub(crate) trait Unused { fn u(); }\n\
                    trait Walks<T: A> { fn w(); }\nmacro_rules! m { () => { trait $t {} } }\n\
                    #[cfg(test)]\npub trait Fake { fn f(); }\n";
        let defs = trait_defs(&sources(&[("svc-core/src/flow/rows.rs", core)]));
        let count = |d: &TraitDef| (d.name.clone(), d.public, d.methods, d.declared);
        let counts: Vec<_> = defs.iter().map(count).collect();
        let expected = [
            ("Rows", true, 2, 2),
            ("Unused", false, 1, 0),
            ("Walks", false, 1, 0),
        ];
        assert_eq!(counts, expected.map(|(n, p, m, d)| (n.to_owned(), p, m, d)));
        assert_eq!(
            [&defs[0].krate, &defs[0].file],
            ["svc-core", "flow/rows.rs"]
        );
    }

    #[test]
    fn the_seam_counts_each_impl_of_a_workspace_trait() {
        let core = "pub trait Driver { fn run(); fn close(); fn name() -> u8 { 0 } }\n\
                    pub trait Cascades { type Value; fn cascade(); }\n\
                    pub trait Column { fn shadowed(); }\n";
        let engine = "pub trait Column { fn name(); fn kind(); }\n\
                      pub trait RecordRow<C> { fn cell(); }\ntrait Private { fn p(); }\n";
        let other = "pub trait RecordRow { fn other(); }\n";
        let own = "trait Literals { fn quote(); }\n";
        let db = "use svc_core::{flow::{self, Driver as Runs}, Column as CoreColumn};\n\
                  use svc_engine::records::RecordRow;\nuse tokio_postgres::types::ToSql;\n\
                  impl<'c, F: Fn() -> u8> Runs for Db<'c, F> where F: Send {}\n\
                  impl flow::Cascades for Conn<'_> { type Value = u8; fn cascade() {} }\n\
                  impl RecordRow<Field> for Row<'_> {}\nimpl RecordRow<Field> for [Value] {}\n\
                  impl svc_engine::Column for Field {}\nimpl Literals for Ctx {}\n\
                  impl ToSql for Text {}\nimpl Drop for Guard {}\nimpl Private for Db {}\n\
                  impl Db { fn rows(&self) -> impl Iterator<Item = u8> { for x in y {} } }\n\
                  fn f(x: impl CoreColumn) {}\n#[cfg(test)]\nimpl svc_engine::Column for T {}\n";
        let workspace = [
            ("svc-core/src/flow/mod.rs", core),
            ("svc-engine/src/table.rs", engine),
            ("svc-other/src/lib.rs", other),
            ("svc-db/src/dialect.rs", own),
        ];
        let defs = trait_defs(&sources(&workspace));
        let crates = ["svc-core", "svc-engine", "svc-other", "svc-db"];
        let (seam, ambiguous) = seam(&defs, "svc-db", &crates, &sources(&[("lib.rs", db)]));
        let count = |(d, impls): &(&TraitDef, usize)| (d.name.clone(), d.krate.clone(), *impls);
        let counts: Vec<_> = seam.iter().map(count).collect();
        let expected = [
            ("Column", "svc-engine", 1),
            ("Driver", "svc-core", 1),
            ("RecordRow", "svc-engine", 2),
            ("Cascades", "svc-core", 1),
        ];
        let expected = expected.map(|(n, k, i)| (n.to_owned(), k.to_owned(), i));
        assert_eq!(counts, expected);
        assert!(ambiguous.is_empty(), "{ambiguous:?}");
        // A bare name two crates define and no import tells apart.
        let bare = "use svc_core::flow;\nimpl RecordRow for R {}\n";
        let bare = sources(&[("records.rs", bare)]);
        let (seam, ambiguous) = super::seam(&defs, "svc-db", &crates, &bare);
        assert!(seam.is_empty());
        let expected = "crates/svc-db/src/records.rs:2: `RecordRow` is defined in svc-engine and \
                        svc-other";
        assert!(ambiguous[0].starts_with(expected), "{ambiguous:?}");
    }
}
