//! The files of each database folder: what a new database server's folder holds, and what a
//! reader of one goes through. Test code is left out, since tests do not make a folder harder
//! to write: files named `tests.rs` and anything under `tests/` ([`super::is_test_file`]), and
//! a file that is test code whole ([`is_test_only`]).

use super::{BACKENDS, code_lines, is_test_file, rust_code, test_lines};

/// Each database folder (in [`BACKENDS`]'s order) with its files that are not test code, paths
/// relative to the folder, sorted.
pub(super) fn files_per_database(sources: &[(String, String)]) -> Vec<(&'static str, Vec<String>)> {
    BACKENDS
        .iter()
        .map(|&folder| (folder, folder_files(sources, folder)))
        .collect()
}

/// The files of `folder` (`sqlite`, `postgres`, ...) among the non-test sources
/// (`(path relative to src/, text)`), test-only files left out.
fn folder_files(sources: &[(String, String)], folder: &str) -> Vec<String> {
    let mut files: Vec<String> = sources
        .iter()
        .filter_map(|(path, src)| Some((path.strip_prefix(folder)?.strip_prefix('/')?, path, src)))
        .filter(|(_, path, src)| !is_test_file(path) && !is_test_only(path, src, sources))
        .map(|(file, _, _)| file.to_owned())
        .collect();
    files.sort();
    files
}

/// Whether a source is test code whole: no code line outside its test modules (see
/// [`super::code_lines`]), gated whole by `#![cfg(test)]`, or declared by its parent module
/// under `#[cfg(test)]` (`#[cfg(test)] mod fixtures;`).
fn is_test_only(path: &str, src: &str, sources: &[(String, String)]) -> bool {
    let gated = rust_code(src).lines().any(|l| l.trim() == "#![cfg(test)]");
    code_lines(src) == 0 || gated || declared_for_tests(path, sources)
}

/// Whether the parent module of `path` declares it in its test code (`{dir}/{name}.rs` and
/// `{dir}/{name}/mod.rs` are declared in `{dir}/mod.rs` or `{dir}.rs`).
fn declared_for_tests(path: &str, sources: &[(String, String)]) -> bool {
    let module = path.strip_suffix("/mod.rs").unwrap_or(path);
    let module = module.strip_suffix(".rs").unwrap_or(module);
    let Some((dir, name)) = module.rsplit_once('/') else {
        return false;
    };
    let parents = [format!("{dir}/mod.rs"), format!("{dir}.rs")];
    let declaration = format!("mod {name};");
    sources
        .iter()
        .filter(|(p, _)| parents.contains(p))
        .any(|(_, parent)| {
            let code = rust_code(parent);
            let test = test_lines(&code);
            code.lines().zip(test).any(|(line, test)| {
                let line = line.trim();
                test && line.ends_with(&declaration)
                    && (line == declaration || line.starts_with("pub"))
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(files: &[(&str, &str)]) -> Vec<(String, String)> {
        files
            .iter()
            .map(|(p, s)| ((*p).to_owned(), (*s).to_owned()))
            .collect()
    }

    #[test]
    fn a_folder_counts_its_files_but_test_code() {
        let sources = sources(&[
            (
                "sqlite/mod.rs",
                "mod open;\nmod deep;\n#[cfg(test)]\nmod fixtures;\n\
                 #[cfg(test)]\npub(crate) mod seeds;\n",
            ),
            ("sqlite/open.rs", "//! Opens.\nfn open() {}\n"),
            ("sqlite/deep/mod.rs", "mod walk;\n"),
            (
                "sqlite/deep/walk.rs",
                "fn walk() {}\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n",
            ),
            // Test code whole: a test module alone, a gated file, files declared for tests.
            (
                "sqlite/only_tests.rs",
                "//! Tests.\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n",
            ),
            ("sqlite/gated.rs", "#![cfg(test)]\nfn helper() {}\n"),
            ("sqlite/fixtures.rs", "pub fn fixture() {}\n"),
            ("sqlite/seeds.rs", "pub fn seed() {}\n"),
            ("sqlite/tests.rs", "fn t() {}\n"),
            ("sqlite/tests/writes.rs", "fn t() {}\n"),
            ("postgres/mod.rs", "mod fixtures;\n"),
            ("postgres/fixtures.rs", "pub fn fixture() {}\n"),
            ("sqlite_other.rs", "fn f() {}\n"),
        ]);
        assert_eq!(
            folder_files(&sources, "sqlite"),
            ["deep/mod.rs", "deep/walk.rs", "mod.rs", "open.rs"]
        );
        // Declared for tests by sqlite/, not by postgres/: postgres/'s counts.
        assert_eq!(
            folder_files(&sources, "postgres"),
            ["fixtures.rs", "mod.rs"]
        );
        let all = files_per_database(&sources);
        let counts: Vec<(&str, usize)> = all.iter().map(|(f, files)| (*f, files.len())).collect();
        assert_eq!(counts, [("sqlite", 4), ("postgres", 2), ("mysql", 0)]);
    }
}
