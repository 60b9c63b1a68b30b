//! How much of the database servers' folders is written twice: the share of their code lines
//! that stand in a run of [`RUN`] lines found again elsewhere in them (in the other folder, or
//! in the same one), the same text to the letter once each line is trimmed. What repeats across
//! svc-emulator-postgres and svc-emulator-mysql is what a flow or the dialect should say once.
//!
//! A code line is a line of non-test code (see [`super::test_lines`]) that holds code once its
//! comments are blanked ([`super::rust_code`]); it is compared as written, string literals
//! included, so two statements that differ only in their SQL are not the same line. A run
//! counts only when at least two of its lines hold a letter or a digit: three closing braces
//! repeat everywhere and say nothing. Declarations that only name what a file uses or holds
//! (`use` items, whole, and `mod` lines) are not code lines: each database folder mirrors
//! `flow/`'s files and imports the same engine types, which no flow could say once.

use std::collections::HashMap;

use super::{rust_code, test_lines};

/// The lines of a run.
pub(super) const RUN: usize = 3;

/// The code lines of some folders and how many of them repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Repeats {
    /// Code lines in a run found again elsewhere.
    pub(super) repeated: usize,
    /// Code lines in all.
    pub(super) lines: usize,
}

impl Repeats {
    /// The repeated share in tenths of a percent (148 is 14.8%).
    pub(super) fn per_mille(&self) -> usize {
        (self.repeated * 1000).checked_div(self.lines).unwrap_or(0)
    }
}

/// The repeats of the non-test sources (`(path relative to src/, text)`) in `folders`.
pub(super) fn repeats(sources: &[(String, String)], folders: &[&str]) -> Repeats {
    let files: Vec<Vec<&str>> = sources
        .iter()
        .filter(|(path, _)| folders.iter().any(|f| path.starts_with(&format!("{f}/"))))
        .map(|(_, src)| code_lines(src))
        .collect();
    let mut seen: HashMap<&[&str], usize> = HashMap::new();
    for lines in &files {
        for run in lines.windows(RUN).filter(|run| says_something(run)) {
            *seen.entry(run).or_default() += 1;
        }
    }
    let mut repeated = 0;
    for lines in &files {
        let mut marked = vec![false; lines.len()];
        for (i, run) in lines.windows(RUN).enumerate() {
            if seen.get(run).is_some_and(|&n| n > 1) {
                marked[i..i + RUN].iter_mut().for_each(|m| *m = true);
            }
        }
        repeated += marked.iter().filter(|&&m| m).count();
    }
    Repeats {
        repeated,
        lines: files.iter().map(Vec::len).sum(),
    }
}

/// The trimmed code lines of a source, test code and declarations (`use`, `mod`) left out.
fn code_lines(src: &str) -> Vec<&str> {
    let code = rust_code(src);
    let test = test_lines(&code);
    let mut in_use = false;
    src.lines()
        .zip(code.lines())
        .enumerate()
        .filter(|&(i, (_, code))| {
            let code = code.trim();
            let declaration = in_use || is_declaration(code);
            // A `use` item goes on until its `;`.
            in_use = declaration && !code.ends_with(';') && !code.starts_with("mod ");
            !declaration && !test.get(i).copied().unwrap_or(false) && !code.is_empty()
        })
        .map(|(_, (line, _))| line.trim())
        .collect()
}

/// Whether a code line starts a `use` item or declares a module.
fn is_declaration(code: &str) -> bool {
    let item = code
        .strip_prefix("pub(crate) ")
        .or_else(|| code.strip_prefix("pub(super) "))
        .or_else(|| code.strip_prefix("pub "))
        .unwrap_or(code);
    item.starts_with("use ") || (item.starts_with("mod ") && item.ends_with(';'))
}

/// At least two lines of the run hold a letter or a digit.
fn says_something(run: &[&str]) -> bool {
    run.iter()
        .filter(|l| l.chars().any(char::is_alphanumeric))
        .count()
        >= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|(p, s)| (p.to_string(), s.to_string()))
            .collect()
    }

    #[test]
    fn a_run_written_in_both_folders_counts_in_each() {
        let twice = "let a = one();\nlet b = two(a);\nsend(b);\n";
        let src = sources(&[
            ("postgres/x.rs", &format!("fn f() {{\n{twice}}}\n")),
            ("mysql/y.rs", &format!("fn g() {{\n{twice}other();\n}}\n")),
            ("sqlite/z.rs", twice),
        ]);
        let r = repeats(&src, &["postgres", "mysql"]);
        assert_eq!(
            r,
            Repeats {
                repeated: 6,
                lines: 11
            }
        );
        assert_eq!(r.per_mille(), 545);
    }

    #[test]
    fn imports_and_module_lines_are_not_code_lines() {
        let names = "mod action;\nmod records;\npub(crate) mod walks;\nuse a::b;\nuse c::{\n    d,\n    e,\n};\n";
        let src = sources(&[
            ("postgres/mod.rs", &format!("{names}fn f() {{}}\n")),
            ("mysql/mod.rs", &format!("{names}fn g() {{}}\n")),
        ]);
        let r = repeats(&src, &["postgres", "mysql"]);
        assert_eq!(
            r,
            Repeats {
                repeated: 0,
                lines: 2
            }
        );
    }

    #[test]
    fn comments_tests_braces_and_other_strings_do_not_repeat() {
        let src = sources(&[
            (
                "postgres/x.rs",
                "// said once\nrun(\"SELECT 1\");\nnext();\nlast();\n}\n}\n}\n\
                 #[cfg(test)]\nmod tests {\n    run(\"SELECT 2\");\n    next();\n    other();\n}\n",
            ),
            (
                "mysql/x.rs",
                "/// said twice\nrun(\"SELECT 2\");\nnext();\nother();\n}\n}\n}\n",
            ),
        ]);
        let r = repeats(&src, &["postgres", "mysql"]);
        assert_eq!(
            r,
            Repeats {
                repeated: 0,
                lines: 12
            }
        );
    }
}
