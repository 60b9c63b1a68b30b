//! The `_relation` list parameter, as the engine reads it on every database: a path of joins
//! from the model to another table, then a column of the last table that must hold one of a
//! comma-separated list of texts.
//!
//! `_relation=author_id.authors.id|name.Alice,Bob` lists the books whose `author_id` is the
//! `id` of an author named Alice or Bob. Each step but the last is `column.table.column`: the
//! current table's column, the next table, and its column the first one must equal. The last
//! step is `column.values`.
//!
//! The engine joins the tables (`qs.join(table, a == b)`, then `column IN (values)`, values
//! bound as text). Where each join reaches its table's key, a joined row is one record, and
//! the join is what `a IN (SELECT b FROM table WHERE ...)` selects: the condition the emulator
//! writes. Where a join may reach several rows of a table (a column that is not its key), the
//! engine's list counts every joined row and shows each record once, so its count and pages
//! disagree with its records: the emulator refuses such a list ([decision: stricter]); a
//! retrieve, update or delete only asks whether the record is selected, and is served.
//! Aggregate and group keep the path's condition but drop its joins (a cross product): refused
//! too when the path has joins (a path without joins filters the model's own column and is
//! served). Joining a table the query already has makes the engine fail. A name the schema lacks, a step without its parts, or a repeated
//! `_relation` make the engine fail (500); a value holding a `.` is cut there (`email.a@b.com`
//! looks for `a@b`): both refused in strict mode; lenient mode fails where the engine fails,
//! and refuses the misreadings it does not reproduce.

use crate::EngineError;
use crate::declared::value_of;
use crate::list::Selection;

/// The parameter's name.
pub const RELATION_PARAM: &str = "_relation";

/// One join of a path: the current table's column, the next table, and its column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hop {
    /// The current table's column.
    pub from: String,
    /// The next table.
    pub table: String,
    /// The next table's column.
    pub to: String,
}

/// A `_relation` value as the engine reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelationPath {
    /// The joins, in order.
    pub hops: Vec<Hop>,
    /// The last table's column, which must hold one of `values`.
    pub column: String,
    /// The texts, as given (split on commas; an empty one matches only an empty text).
    pub values: Vec<String>,
}

/// What the operation does with the selection: a list counts and pages what it selects; the
/// others only ask whether the record is selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// A list: its count and pages are the joined rows'.
    List,
    /// A retrieve of one record.
    Record,
    /// An update or a delete of one record.
    Write,
    /// An aggregate or a group.
    Aggregate,
}

/// The engine's failure (`500`) on a `_relation` value; lenient mode answers it as the engine.
pub fn fails(lenient: bool, message: String) -> EngineError {
    EngineError::engine_fails(lenient, RELATION_PARAM, message)
}

/// A `_relation` value the engine misreads, refused by design (`"error_decision": "stricter"`).
pub fn misread(message: String) -> EngineError {
    EngineError::stricter(RELATION_PARAM, message)
}

/// The selection's `_relation`, if it has a non-empty one (`_relation__exact` read first; a
/// repeated one fails on the engine).
pub fn relation_of(selection: &Selection) -> Result<Option<RelationPath>, EngineError> {
    match value_of(selection, RELATION_PARAM)? {
        Some(path) => parse(path, selection.lenient).map(Some),
        None => Ok(None),
    }
}

/// Reads `author_id.authors.id|name.Alice,Bob`.
fn parse(raw: &str, lenient: bool) -> Result<RelationPath, EngineError> {
    let steps: Vec<Vec<&str>> = raw.split('|').map(|s| s.split('.').collect()).collect();
    let (last, joins) = steps.split_last().unwrap_or((&steps[0], &[]));
    let mut hops = Vec::with_capacity(joins.len());
    for step in joins {
        match step.as_slice() {
            [from, table, to] => hops.push(Hop {
                from: (*from).to_owned(),
                table: (*table).to_owned(),
                to: (*to).to_owned(),
            }),
            [_, _, _, ..] => {
                return Err(misread(format!(
                    "_relation step {:?} has more than three parts: the data engine reads only \
                     the first three (column.table.column).",
                    step.join(".")
                )));
            }
            _ => {
                return Err(fails(
                    lenient,
                    format!(
                        "_relation step {:?} is not column.table.column, which the data engine \
                         fails on (500).",
                        step.join(".")
                    ),
                ));
            }
        }
    }
    match last.as_slice() {
        [column, values] => Ok(RelationPath {
            hops,
            column: (*column).to_owned(),
            values: values.split(',').map(str::to_owned).collect(),
        }),
        [_, _, _, ..] => Err(misread(format!(
            "_relation's last step {:?} holds a '.' in its values: the data engine reads them \
             only up to it. Filter on such values another way.",
            last.join(".")
        ))),
        _ => Err(fails(
            lenient,
            format!(
                "_relation's last step {:?} is not column.value1,value2, which the data engine \
                 fails on (500).",
                last.join(".")
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn selection(values: &[&str], lenient: bool) -> Selection {
        Selection {
            filters: values
                .iter()
                .map(|v| (RELATION_PARAM.to_owned(), (*v).to_owned()))
                .collect(),
            search: Vec::new(),
            lenient,
            body: Vec::new(),
        }
    }

    /// The status the HTTP layer gives the error: 400 for a refusal, 500 for the engine's failure.
    fn status(e: EngineError) -> u16 {
        match e {
            EngineError::Invalid { fields, .. } => {
                assert!(fields.contains_key(RELATION_PARAM), "{fields:?}");
                400
            }
            EngineError::EngineFails { .. } => 500,
            other => panic!("{other:?}"),
        }
    }

    fn read(value: &str) -> Result<Option<RelationPath>, EngineError> {
        relation_of(&selection(&[value], false))
    }

    #[test]
    fn a_path_is_read_as_the_engine_splits_it() {
        let path = read("author_id.authors.id|name.Alice,Bob")
            .unwrap()
            .unwrap();
        assert_eq!(
            path.hops,
            [Hop {
                from: "author_id".to_owned(),
                table: "authors".to_owned(),
                to: "id".to_owned(),
            }]
        );
        assert_eq!(path.column, "name");
        assert_eq!(path.values, ["Alice", "Bob"]);
        let own = read("title.a1").unwrap().unwrap();
        assert!(own.hops.is_empty());
        assert_eq!(read("title.").unwrap().unwrap().values, [""]);
        // No parameter, or an empty one, is no condition.
        assert_eq!(read("").unwrap(), None);
        assert_eq!(relation_of(&selection(&[], false)).unwrap(), None);
    }

    #[test]
    fn what_the_engine_fails_on_or_misreads_is_refused() {
        for failing in ["name", "author_id.authors|name.A", "a.b|c"] {
            assert_eq!(status(read(failing).unwrap_err()), 400, "{failing}");
            let lenient = relation_of(&selection(&[failing], true)).unwrap_err();
            assert_eq!(status(lenient), 500, "{failing}");
        }
        let twice = relation_of(&selection(&["a.1", "b.2"], true)).unwrap_err();
        assert_eq!(status(twice), 500);
        // `_relation__exact` is read first.
        let both = Selection {
            filters: vec![
                (RELATION_PARAM.to_owned(), "a.1".to_owned()),
                ("_relation__exact".to_owned(), "b.2".to_owned()),
            ],
            search: Vec::new(),
            lenient: false,
            body: Vec::new(),
        };
        assert_eq!(relation_of(&both).unwrap().unwrap().column, "b");
        // Misreadings: refused in both modes.
        for misread in ["email.a@b.com", "a.b.c", "a.b.c.d|name.x"] {
            assert_eq!(status(read(misread).unwrap_err()), 400, "{misread}");
            let lenient = relation_of(&selection(&[misread], true)).unwrap_err();
            assert_eq!(status(lenient), 400, "{misread}");
        }
    }
}
