//! What `svc records import` settles before it sends a row: which columns of the file go out
//! (`--columns`, `--skip-columns`, with `--key` among them), and whether the model takes them.
//!
//! Why before: a column the database refuses fails every row that has a value in it, and the
//! user learns it once per row, after the rows that had no value in it were written (the demo's
//! `customers` exported and imported back: 800 of 1,000 rows failed, each with "SQLite Date
//! type only accepts Python date objects as input"). That is foreseeable, so it is refused
//! before anything is written, with the column named and the flag that leaves it out.
//!
//! What the API tells: records carry no types, and no route describes a model or names the
//! resource's database. The resource's read-only SQL does, and every credential that may write
//! records may run it (docs/contract.md, 3): `pragma_table_xinfo(model)` answers on SQLite only
//! (its table-valued pragma functions), with each column's declared type, which the data engine
//! reads the way SQLAlchemy reflects it (`ColumnType::from_declared`, the emulator's copy of
//! that rule); a database that refuses it and answers `version()` (PostgreSQL, MySQL, which
//! have no such refusal) is not SQLite. When neither can be learnt (the SQL route refused, an
//! unknown database), the import does not guess: it stops, says why, and `--no-check` sends the
//! rows unchecked, each then succeeding or failing on its own.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use svc_api::model::records::ListQuery;
use svc_api::{Records, Sql};
use svc_engine::types::{ColumnType, Reflected};

use crate::exit::Failure;

/// The model an import writes to, and the SQL of its resource, which tells its columns.
pub struct ModelRef<'a> {
    pub resource: &'a str,
    pub model: &'a str,
    pub sql: Sql<'a>,
}

impl ModelRef<'_> {
    pub fn name(&self) -> String {
        format!("{}/{}", self.resource, self.model)
    }
}

/// What the import learnt of the model before sending.
#[derive(Debug, PartialEq)]
pub enum Learnt {
    /// A SQLite resource: every column, with what the database makes of a value for it.
    Sqlite(Vec<Field>),
    /// Another database (PostgreSQL, MySQL), which takes text for every type; the fields are
    /// the keys of one of its records, `None` when it has none.
    Other(Option<Vec<String>>),
}

/// A column of a SQLite model.
#[derive(Debug, PartialEq)]
pub struct Field {
    pub name: String,
    /// Why the engine refuses any non-null value for it (`None`: it takes values).
    pub refuses: Option<String>,
}

/// The columns of the file that go out, in the file's order: the header's (or the NDJSON
/// keys'), narrowed by `--columns` or `--skip-columns`. A name of either flag that the file
/// lacks, an empty name, and a `--key` that does not go out are usage errors: nothing is sent.
pub fn chosen(
    header: &[String],
    columns: Option<&[String]>,
    skip: &[String],
    key: Option<&str>,
    file: &str,
) -> Result<Vec<String>, Failure> {
    let listed = || header.join(", ");
    let names = |flag: &str, given: &[String]| -> Result<BTreeSet<String>, Failure> {
        let mut out = BTreeSet::new();
        let mut unknown = Vec::new();
        for name in given.iter().map(|n| n.trim()) {
            if name.is_empty() {
                return Err(Failure::usage_hint(
                    format!("{flag} has an empty column name"),
                    format!("give names separated by commas, e.g. {flag} email,city"),
                ));
            }
            if !header.iter().any(|h| h == name) && !unknown.contains(&name) {
                unknown.push(name);
            }
            out.insert(name.to_owned());
        }
        if !unknown.is_empty() {
            return Err(Failure::usage_hint(
                format!(
                    "{flag} names {} that {file} does not have",
                    quoted_list(&unknown, "a column", "columns")
                ),
                format!("the columns of {file}: {}", listed()),
            ));
        }
        Ok(out)
    };
    let chosen: Vec<String> = match columns {
        Some(given) => {
            let keep = names("--columns", given)?;
            header
                .iter()
                .filter(|h| keep.contains(h.as_str()))
                .cloned()
                .collect()
        }
        None => {
            let leave = names("--skip-columns", skip)?;
            header
                .iter()
                .filter(|h| !leave.contains(h.as_str()))
                .cloned()
                .collect()
        }
    };
    if header.is_empty() {
        // No record at all: nothing is sent, so there is nothing to narrow.
        return Ok(chosen);
    }
    if chosen.is_empty() {
        return Err(Failure::usage_hint(
            "--skip-columns leaves no column of the file to import",
            format!("the columns of {file}: {}", listed()),
        ));
    }
    if let Some(key) = key
        && !chosen.iter().any(|c| c == key)
    {
        let (message, hint) = if !header.iter().any(|h| h == key) {
            (
                format!("--key {key:?} is not a column of {file}"),
                format!(
                    "each row finds its record by the --key column; the columns of {file}: {}",
                    listed()
                ),
            )
        } else if columns.is_some() {
            (
                format!("--key {key:?} is not among the --columns to import"),
                format!("add it (each row finds its record by it): --columns {key},..."),
            )
        } else {
            (
                format!("--key {key:?} is left out by --skip-columns"),
                "each row finds its record by the --key column: keep it in the import".to_owned(),
            )
        };
        return Err(Failure::usage_hint(message, hint));
    }
    Ok(chosen)
}

/// Reads the model's columns through the resource's SQL (see the module's documentation), and,
/// off SQLite, its fields from one record. A model the resource lacks is the list's `404`.
pub async fn learn(model: &ModelRef<'_>, records: &Records<'_>) -> Result<Learnt, Failure> {
    // `hidden`: 0 a column, 1 a virtual table's hidden column (no field), 2 and 3 a generated
    // column (a field, which the database refuses values for).
    let columns = model
        .sql
        .query("SELECT name, type, hidden FROM pragma_table_xinfo(:model)")
        .bind("model", model.model)
        .rows::<(String, Option<String>, i64)>()
        .await;
    match columns {
        Ok(columns) if !columns.is_empty() => Ok(Learnt::Sqlite(
            columns
                .into_iter()
                .filter(|(_, _, hidden)| *hidden != 1)
                .map(|(name, declared, hidden)| {
                    let declared = declared.unwrap_or_default();
                    Field {
                        refuses: refusal(&declared, hidden),
                        name,
                    }
                })
                .collect(),
        )),
        Ok(_) => {
            // SQLite, but no table or view of that name: the list says the model is unknown.
            sample(records).await?;
            Err(cannot_check(
                model,
                format!(
                    "the resource's SQL shows no table named {:?} to read its column types from",
                    model.model
                ),
                None,
            ))
        }
        Err(e) if e.status().is_some_and(|s| s.as_u16() == 400) => {
            match model
                .sql
                .query("SELECT version() AS v")
                .rows::<Value>()
                .await
            {
                Ok(_) => Ok(Learnt::Other(sample(records).await?)),
                Err(_) => Err(cannot_check(
                    model,
                    format!("its database is neither SQLite nor one that answers version(): {e}"),
                    None,
                )),
            }
        }
        Err(e) => {
            let message = format!("its SQL answered: {e}");
            Err(cannot_check(model, message, Some(e)))
        }
    }
}

/// Why the engine refuses any value for a column declared `declared` on SQLite.
fn refusal(declared: &str, hidden: i64) -> Option<String> {
    if hidden >= 2 {
        return Some("a generated column".to_owned());
    }
    // SQLAlchemy's SQLite `Date`, `Time` and `BLOB` bind processors take Python objects only,
    // and the engine hands them text (docs/contract.md, 5.1 "Writes").
    match ColumnType::from_declared(declared).reflected {
        Reflected::Date | Reflected::Time | Reflected::Blob => {
            Some(format!("a {} column", declared.trim()))
        }
        _ => None,
    }
}

/// The keys of one record of the model (`None` when it has none); its `404` when the resource
/// has no such model.
async fn sample(records: &Records<'_>) -> Result<Option<Vec<String>>, Failure> {
    let page = records.list(&ListQuery::new().per_page(1)).await?;
    Ok(page.results.first().map(|r| r.keys().cloned().collect()))
}

fn cannot_check(model: &ModelRef<'_>, why: String, cause: Option<svc_api::Error>) -> Failure {
    let message = format!(
        "cannot check the columns of {} before importing: {why}",
        model.name()
    );
    let hint = "the check reads the model's column types through the resource's SQL (a SQLite resource refuses every value for a DATE, TIME or BLOB column); --no-check sends the rows without it, each then written or refused on its own";
    Failure::Stopped {
        cause: Box::new(match cause {
            Some(e) => Failure::Api(e),
            None => Failure::Other(message.clone()),
        }),
        message,
        note: "nothing was imported".to_owned(),
    }
    .with_hint(hint)
}

/// Refuses, before anything is sent, columns going out that the model lacks, and on SQLite
/// columns it refuses every value for, when a row has a value there (an empty CSV cell or an
/// NDJSON `null` is no value: such a column does no harm).
pub fn check(
    learnt: &Learnt,
    model: &str,
    chosen: &[String],
    rows: &[(usize, &Map<String, Value>)],
    file: &str,
) -> Result<(), Failure> {
    let fields: Option<Vec<&str>> = match learnt {
        Learnt::Sqlite(fields) => Some(fields.iter().map(|f| f.name.as_str()).collect()),
        Learnt::Other(fields) => fields
            .as_ref()
            .map(|f| f.iter().map(String::as_str).collect()),
    };
    if let Some(fields) = &fields {
        let lacking: Vec<&str> = chosen
            .iter()
            .map(String::as_str)
            .filter(|c| !fields.contains(c))
            .collect();
        if !lacking.is_empty() {
            return Err(Failure::usage_hint(
                format!(
                    "{model} has no field {}, which {file} has: nothing was sent (the emulator refuses every row that names one; the platform's data engine drops the value without a word)",
                    quoted_list(&lacking, "", "")
                ),
                format!(
                    "leave {} out with --skip-columns {}, or name the columns to import with --columns; the model's fields: {}",
                    if lacking.len() == 1 { "it" } else { "them" },
                    lacking.join(","),
                    fields.join(", ")
                ),
            ));
        }
    }
    let Learnt::Sqlite(fields) = learnt else {
        return Ok(());
    };
    let mut refused = Vec::new();
    let mut names = Vec::new();
    for field in fields {
        let Some(why) = &field.refuses else { continue };
        if !chosen.contains(&field.name) {
            continue;
        }
        let with_value: Vec<usize> = rows
            .iter()
            .filter(|(_, r)| r.get(&field.name).is_some_and(|v| !v.is_null()))
            .map(|(line, _)| *line)
            .collect();
        if let Some(first) = with_value.first() {
            refused.push(format!(
                "{:?}, {why}, has one in {} of {} rows (the first on line {first})",
                field.name,
                with_value.len(),
                rows.len()
            ));
            names.push(field.name.as_str());
        }
    }
    if refused.is_empty() {
        return Ok(());
    }
    Err(Failure::usage_hint(
        format!(
            "{model} is on SQLite, where the data engine refuses every value for {}: {}; nothing was sent",
            if names.len() == 1 {
                "this column"
            } else {
                "these columns"
            },
            refused.join("; ")
        ),
        format!(
            "leave {} out with --skip-columns {} (an updated record keeps its value, a created one gets the column's default), or name the columns to import with --columns",
            if names.len() == 1 { "it" } else { "them" },
            names.join(",")
        ),
    ))
}

/// `a column "x"` / `columns "x", "y"` (`one`, `many`: the noun, may be empty).
fn quoted_list(names: &[&str], one: &str, many: &str) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    let noun = if names.len() == 1 { one } else { many };
    if noun.is_empty() {
        quoted.join(", ")
    } else {
        format!("{noun} {}", quoted.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(names: &str) -> Vec<String> {
        names.split(',').map(str::to_owned).collect()
    }

    fn list(names: &str) -> Vec<String> {
        header(names)
    }

    fn usage(f: Failure) -> (String, String) {
        assert_eq!(f.code(), crate::exit::USAGE, "{f}");
        (f.to_string(), f.hint().unwrap_or_default())
    }

    #[test]
    fn columns_and_skip_columns_narrow_the_header() {
        let h = header("id,name,email,birth_date");
        assert_eq!(chosen(&h, None, &[], None, "f.csv").unwrap(), h);
        assert_eq!(
            chosen(&h, None, &list("birth_date"), Some("email"), "f.csv").unwrap(),
            header("id,name,email")
        );
        // File order, whatever the order given; spaces around names are ignored.
        assert_eq!(
            chosen(&h, Some(&list("email, id")), &[], Some("email"), "f.csv").unwrap(),
            header("id,email")
        );
    }

    #[test]
    fn unknown_names_empty_names_and_the_key_are_usage_errors() {
        let h = header("id,name,email");
        let (m, hint) =
            usage(chosen(&h, Some(&list("email,mail")), &[], None, "f.csv").unwrap_err());
        assert!(
            m.contains("--columns names a column \"mail\" that f.csv does not have"),
            "{m}"
        );
        assert!(hint.contains("id, name, email"), "{hint}");
        let (m, _) = usage(chosen(&h, None, &list("x,y,x"), None, "f.csv").unwrap_err());
        assert!(
            m.contains("--skip-columns names columns \"x\", \"y\" that"),
            "{m}"
        );
        let (m, _) = usage(chosen(&h, Some(&list("id,")), &[], None, "f.csv").unwrap_err());
        assert!(m.contains("empty column name"), "{m}");
        let (m, _) = usage(chosen(&h, None, &list("id,name,email"), None, "f.csv").unwrap_err());
        assert!(m.contains("leaves no column"), "{m}");
        let (m, _) = usage(chosen(&h, None, &list("email"), Some("email"), "f.csv").unwrap_err());
        assert!(
            m.contains("--key \"email\" is left out by --skip-columns"),
            "{m}"
        );
        let (m, hint) =
            usage(chosen(&h, Some(&list("name")), &[], Some("email"), "f.csv").unwrap_err());
        assert!(m.contains("not among the --columns"), "{m}");
        assert!(hint.contains("--columns email,"), "{hint}");
        let (m, _) = usage(chosen(&h, None, &[], Some("sku"), "f.csv").unwrap_err());
        assert!(m.contains("--key \"sku\" is not a column of f.csv"), "{m}");
        // An empty file: nothing to narrow, nothing sent.
        assert!(
            chosen(&[], None, &[], Some("id"), "f.csv")
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn sqlite_refuses_dates_times_blobs_and_generated_columns() {
        for (declared, hidden, refused) in [
            ("DATE", 0, true),
            ("date", 0, true),
            ("TIME", 0, true),
            ("BLOB", 0, true),
            ("DATETIME", 0, false),
            ("TIMESTAMP", 0, false),
            ("TEXT", 0, false),
            ("", 0, false),
            ("MEDIUMBLOB", 0, false),
            ("INTEGER", 2, true),
            ("TEXT", 3, true),
        ] {
            assert_eq!(
                refusal(declared, hidden).is_some(),
                refused,
                "{declared} {hidden}"
            );
        }
    }
}
