//! The figures of a new database server, read from svc-emulator-core and the database crates:
//! ratchets ([`RATCHETS`]) whose ceilings may only fall, towards their targets (issue 64's).

use std::collections::HashMap;

use super::{Sources, code, ends_ident};

/// Each ratchet: its name, ceiling and target. `SEAM_CEILING`: the required methods of the
/// core's traits a new database server implements, as svc-emulator-postgres does (the flows do
/// the rest); `SEAM_TRAITS_CEILING`: those traits, the most of postgres's and mysql's;
/// `FILES_PER_DATABASE_CEILING`: the files of the largest database crate, tests left out;
/// `REPEATS_CEILING`: postgres's and mysql's code lines in a run of [`RUN`] found again, in ‰.
const RATCHETS: [(&str, usize, usize); 4] = [
    ("SEAM_CEILING", 41, 20),
    ("SEAM_TRAITS_CEILING", 7, 4),
    ("FILES_PER_DATABASE_CEILING", 8, 8),
    ("REPEATS_CEILING", 76, 80),
];

/// What to do past each ceiling of [`RATCHETS`].
const FIXES: [&str; 4] = [
    "give the new methods a default body, or move them to a flow",
    "put the new methods in a trait it implements already",
    "fold the new code into the file of its concern",
    "say it once, in a flow or in the dialect",
];

/// The code lines of a run, trimmed and compared to the letter (string literals included).
const RUN: usize = 3;

/// A trait of svc-emulator-core: its name, its file, its methods without a default body.
type TraitDef = (String, String, usize);

/// Prints the figures of the database crates (`(name, sources)`) over the traits of `core`, and
/// returns the ratchets past their ceilings.
pub(super) fn figures(core: &Sources, databases: &[(&str, Sources)]) -> Vec<String> {
    let defs: Vec<TraitDef> = core.iter().flat_map(|(p, s)| trait_defs(p, s)).collect();
    let of = |name| databases.iter().find(|d| d.0 == name).map(|d| &d.1[..]);
    let (postgres, mysql) = (of("postgres").unwrap_or(&[]), of("mysql").unwrap_or(&[]));
    let seam = seam(&defs, postgres);
    let methods = seam.iter().map(|t| t.2).sum();
    eprintln!("structure: a new database server implements {methods} methods in these traits:");
    for (name, path, required) in &seam {
        eprintln!("  {name:<12} {required:>2}  ({path})");
    }
    eprintln!("structure: the database crates' files, test code left out:");
    let mut files = 0;
    for (name, sources) in databases {
        let code = sources.iter().filter(|(_, s)| !code(s).trim().is_empty());
        let code: Vec<&str> = code.map(|(path, _)| path.as_str()).collect();
        eprintln!("  {name:<9} {:>2}  {}", code.len(), code.join(", "));
        files = files.max(code.len());
    }
    let (repeated, lines) = repeats(&[postgres, mysql].concat());
    eprintln!("structure: postgres and mysql repeat {repeated} of their {lines} code lines");
    let here = "xtask/src/structure/figures.rs";
    eprintln!("structure: the ratchets of {here}, which may only fall:");
    let traits = seam.len().max(self::seam(&defs, mysql).len());
    let repeats = (repeated * 1000).checked_div(lines).unwrap_or(0);
    let figures = [methods, traits, files, repeats];
    let ratchets = RATCHETS.iter().zip(FIXES).zip(figures);
    let mut over = Vec::new();
    for (((name, ceiling, target), fix), figure) in ratchets {
        let lower = (figure < *ceiling).then(|| format!("; lower it to {figure}"));
        let lower = lower.unwrap_or_default();
        eprintln!("  {name:<27} {figure:>3}  (ceiling {ceiling}, target {target}{lower})");
        if figure > *ceiling {
            over.push(format!(
                "{here}:1: {figure} is over {name} ({ceiling}): {fix}"
            ));
        }
    }
    over
}

/// The traits `src` defines, each with its methods whose signature ends with `;`, not a body.
fn trait_defs(path: &str, src: &str) -> Vec<TraitDef> {
    let code = code(src);
    let mut out = Vec::new();
    let traits = code.match_indices("trait ").map(|(at, _)| at);
    for at in traits.filter(|&at| !ends_ident(&code[..at])) {
        let rest = code[at + "trait ".len()..].trim_start();
        let mut name = rest.split(|c: char| !c.is_alphanumeric() && c != '_');
        let body = rest.find('{').map_or("", |open| &rest[open..]);
        let (mut depth, mut signature, mut required) = (0, false, 0);
        for (i, c) in body.char_indices() {
            match c {
                '{' => (depth, signature) = (depth + 1, false),
                '}' if depth == 1 => break,
                '}' => depth -= 1,
                ';' if depth == 1 => {
                    required += usize::from(signature);
                    signature = false;
                }
                'f' if depth == 1 && body[i..].starts_with("fn ") => {
                    signature |= !ends_ident(&body[..i]);
                }
                _ => {}
            }
        }
        let name = name.next().unwrap_or_default().to_owned();
        out.push((name, path.to_owned(), required));
    }
    out
}

/// The traits of `defs` a crate's sources implement themselves (`impl<...> path::Trait<...>
/// for`, by the path's last segment), most required methods first.
fn seam(defs: &[TraitDef], sources: &[(String, String)]) -> Vec<TraitDef> {
    let mut implemented = Vec::new();
    for code in sources.iter().map(|(_, src)| code(src)) {
        let impls = code.match_indices("impl").map(|(at, _)| at);
        let impls = impls.filter(|&at| code[at + 4..].starts_with([' ', '<']));
        for at in impls.filter(|&at| !ends_ident(&code[..at])) {
            let header = code[at + 4..].split(['{', ';']).next().unwrap_or_default();
            let words: Vec<&str> = header.split_whitespace().collect();
            let Some(before_for) = words.iter().position(|w| *w == "for") else {
                continue;
            };
            // `impl<T: A<B>> !path::Trait<T> for`: the generics after `impl` skipped.
            let (head, mut depth) = (words[..before_for].join(" "), 0);
            let path = head.trim_start_matches(|c| {
                depth += i32::from(c == '<') - i32::from(c == '>');
                depth > 0 || c == '>'
            });
            let path = path.trim_start_matches([' ', '!']).split('<').next();
            let name = path.and_then(|p| p.rsplit("::").next());
            implemented.extend(name.map(str::to_owned));
        }
    }
    let mut seam: Vec<TraitDef> = defs.to_vec();
    seam.retain(|d| implemented.contains(&d.0));
    seam.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    seam
}

/// The code lines in a run of [`RUN`] found again, and in all. A run counts when two of its lines
/// hold a letter or a digit (closing braces repeat everywhere); `use` items and `mod` lines are
/// no code lines: each crate names what it uses, alike.
fn repeats(sources: &[(String, String)]) -> (usize, usize) {
    let code_lines = |src: &String| -> Vec<String> {
        let (code, mut in_use) = (code(src), false);
        let lines = src.lines().zip(code.lines()).filter(|(_, code)| {
            let code = code.trim();
            let pubs = ["pub(crate) ", "pub(super) ", "pub "];
            let item = pubs.iter().find_map(|p| code.strip_prefix(p));
            let item = item.unwrap_or(code);
            let mod_line = item.starts_with("mod ") && item.ends_with(';');
            let declaration = in_use || item.starts_with("use ") || mod_line;
            in_use = declaration && !code.ends_with(';');
            !declaration && !code.is_empty()
        });
        lines.map(|(line, _)| line.trim().to_owned()).collect()
    };
    let files: Vec<Vec<String>> = sources.iter().map(|(_, s)| code_lines(s)).collect();
    let mut seen: HashMap<&[String], usize> = HashMap::new();
    for run in files.iter().flat_map(|f| f.windows(RUN)) {
        *seen.entry(run).or_default() += 1;
    }
    let says = |line: &&String| line.contains(char::is_alphanumeric);
    let mut repeated = 0;
    for lines in &files {
        let mut marked = vec![false; lines.len()];
        for (i, run) in lines.windows(RUN).enumerate() {
            if seen.get(run) > Some(&1) && run.iter().filter(says).count() > 1 {
                marked[i..i + RUN].fill(true);
            }
        }
        repeated += marked.iter().filter(|&&m| m).count();
    }
    (repeated, files.iter().map(Vec::len).sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seam_and_the_repeats() {
        let core = "pub trait Rows: Base<X = u8> {\n    /// fn doc();\n    fn a(x: [u8; 4]);\n    \
                    fn b<T>(\n        t: T,\n    ) -> T\n    where\n        T: Copy;\n    \
                    fn c() { f(); }\n    const K: fn(u8);\n}\npub trait Unused { fn u(); }\n\
                    trait Walks<T: A> { fn w(); }\n";
        let defs = trait_defs("flow/rows.rs", core);
        let counts: Vec<(&str, usize)> = defs.iter().map(|(n, _, r)| (n.as_str(), *r)).collect();
        assert_eq!(counts, [("Rows", 2), ("Unused", 1), ("Walks", 1)]);
        let db = "impl flow::Rows for Pg {}\nimpl<T: Into<String>> Walks<T> for Pg {}\n\
                  impl Pg { fn f() -> impl Iterator<Item = u8> { for x in y {} } }\n";
        let seam = seam(&defs, &[("lib.rs".to_owned(), db.to_owned())]);
        let names: Vec<&str> = seam.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(names, ["Rows", "Walks"]);
        // Written twice: a run; imports, closing braces and tests are none.
        let twice = "let a = one();\nlet b = two(a);\nsend(b);\n";
        let pg = format!("use a::{{\n    b,\n}};\nmod m;\nfn f() {{\n{twice}}}\n}}\n}}\n");
        let pg = pg + "#[cfg(test)]\nmod t {\n" + twice + "}\n";
        let my = format!("fn g() {{\n{twice}other();\n}}\n}}\n}}\n");
        let sources = [pg, my].map(|src| ("x.rs".to_owned(), src));
        assert_eq!(repeats(&sources), (6, 15));
    }
}
