//! Printing results: a readable table on a terminal; JSON, NDJSON or CSV for scripts.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};

use serde::Serialize;
use serde_json::Value;
use svc_api::model::ListPage;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::args::Output;
use crate::exit::Failure;

/// The format actually used: the one asked for, else a table on a terminal and JSON otherwise.
pub fn resolve(asked: Option<Output>) -> Output {
    asked.unwrap_or_else(|| {
        if std::io::stdout().is_terminal() {
            Output::Table
        } else {
            Output::Json
        }
    })
}

pub fn io(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::BrokenPipe
    } else {
        Failure::Other(format!("cannot write the output: {e}"))
    }
}

fn to_value<T: Serialize>(value: &T) -> Result<Value, Failure> {
    serde_json::to_value(value).map_err(|e| Failure::Other(format!("cannot print the result: {e}")))
}

/// Prints one value (an object becomes a two-column table, or a one-row CSV).
pub fn value<T: Serialize>(format: Output, value: &T) -> Result<(), Failure> {
    let value = to_value(value)?;
    let mut out = std::io::stdout().lock();
    match format {
        Output::Json => writeln!(out, "{}", pretty(&value)).map_err(io),
        Output::Ndjson => writeln!(out, "{value}").map_err(io),
        Output::Csv => write_csv(&mut out, std::slice::from_ref(&value)),
        Output::Table => match &value {
            Value::Object(map) => {
                let keys: Vec<Cow<'_, str>> = map.keys().map(|k| for_terminal(k)).collect();
                let width = keys.iter().map(|k| k.width()).max().unwrap_or(0);
                for (k, v) in keys.iter().zip(map.values()) {
                    writeln!(out, "{}  {}", padded(k, width), for_terminal(&cell(v)))
                        .map_err(io)?;
                }
                Ok(())
            }
            other => writeln!(out, "{}", for_terminal(&cell(other))).map_err(io),
        },
    }
}

/// Prints a list of values.
pub fn list<T: Serialize>(format: Output, items: &[T]) -> Result<(), Failure> {
    let values: Vec<Value> = items.iter().map(to_value).collect::<Result<_, _>>()?;
    let mut out = std::io::stdout().lock();
    match format {
        Output::Json => writeln!(out, "{}", pretty(&Value::Array(values))).map_err(io),
        Output::Ndjson => values
            .iter()
            .try_for_each(|v| writeln!(out, "{v}").map_err(io)),
        Output::Csv => write_csv(&mut out, &values),
        Output::Table => write_table(&mut out, &values),
    }
}

/// Prints an action's or a workflow's result: a list as a list (one value a line in NDJSON, a
/// row each in a table or CSV), anything else as one value.
pub fn result(format: Output, result: &Value) -> Result<(), Failure> {
    match result {
        Value::Array(items) => list(format, items),
        other => value(format, other),
    }
}

/// Where a page of a list stands among all the pages, for the line under its table.
#[derive(Debug, Clone, Copy)]
pub struct PageAt {
    /// What the list holds, singular and plural: `("record", "records")`.
    pub noun: (&'static str, &'static str),
    /// The page asked for (1 when none was).
    pub page: u32,
    /// The page size asked for, if one was (else the server's).
    pub per_page: Option<u32>,
}

/// Prints one page of a list: JSON keeps the whole envelope (`count`, `next`, `previous`,
/// `results`), NDJSON and CSV the items; a table ends with where the page stands and how to
/// get the next one: `25 of 1234 records, page 1 of 50; next: --page 2`.
pub fn page<T: Serialize>(format: Output, page: &ListPage<T>, at: PageAt) -> Result<(), Failure> {
    if format != Output::Table {
        return match format {
            Output::Json => value(format, page),
            _ => list(format, &page.results),
        };
    }
    let values: Vec<Value> = page
        .results
        .iter()
        .map(to_value)
        .collect::<Result<_, _>>()?;
    let mut out = std::io::stdout().lock();
    write_items(&mut out, &values)?;
    writeln!(
        out,
        "{}",
        page_line(values.len(), page.count, page.has_next(), at)
    )
    .map_err(io)
}

/// `25 of 1234 records, page 1 of 50; next: --page 2`.
///
/// The pages are counted from `count` and the page size, not from `next`: the data engine links
/// a `next` page from every full page, the last one included (docs/contract.md).
fn page_line(shown: usize, count: u64, has_next: bool, at: PageAt) -> String {
    let (one, many) = at.noun;
    let noun = if count == 1 { one } else { many };
    // The page size: the one asked for, else a full page's (a page followed by another is full).
    let size = at
        .per_page
        .map(u64::from)
        .or_else(|| has_next.then_some(shown as u64))
        .filter(|&n| n > 0);
    // Without a size this is the last page: no `next`, so not a full one.
    let pages = size.map_or(u64::from(at.page), |size| count.div_ceil(size));
    let page = u64::from(at.page);
    if shown == 0 && count > 0 {
        // An empty page of a list that has items: asked past the end.
        let last = size.map(|_| format!(", {pages}")).unwrap_or_default();
        return format!("0 of {count} {noun}: page {page} is past the last page{last}");
    }
    if pages <= 1 && page == 1 {
        return format!("{shown} of {count} {noun}");
    }
    let mut line = format!("{shown} of {count} {noun}, page {page} of {pages}");
    if page < pages {
        line.push_str(&format!("; next: --page {}", page + 1));
    }
    line
}

/// `1 row`, `2 rows`.
fn rows_noun(n: usize) -> String {
    if n == 1 {
        "1 row".to_owned()
    } else {
        format!("{n} rows")
    }
}

/// `text` and spaces after it to fill `width` terminal columns.
fn padded(text: &str, width: usize) -> String {
    let mut padded = text.to_owned();
    padded.extend(std::iter::repeat_n(' ', width.saturating_sub(text.width())));
    padded
}

/// `text` cut to at most `max` terminal columns, with `…` where it was cut. Wide characters (CJK,
/// most emoji) take two columns, combining marks none.
fn clipped(text: &str, max: usize) -> Cow<'_, str> {
    if text.width() <= max {
        return Cow::Borrowed(text);
    }
    let mut kept = String::new();
    let mut width = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if width + w > max - 1 {
            break;
        }
        width += w;
        kept.push(c);
    }
    kept.push('…');
    Cow::Owned(kept)
}

/// Prints rows given by position under `columns` (SQL answers): tables and CSV keep every
/// column, in order, even with no rows or two columns of one name; JSON is an array of objects
/// keyed by column name (NDJSON one per line), where a later column of the same name wins.
pub fn rows(format: Output, columns: &[String], data: &[Vec<Value>]) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    let object = |row: &Vec<Value>| -> Value {
        Value::Object(columns.iter().cloned().zip(row.iter().cloned()).collect())
    };
    match format {
        Output::Json => {
            let all: Vec<Value> = data.iter().map(object).collect();
            writeln!(out, "{}", pretty(&Value::Array(all))).map_err(io)
        }
        Output::Ndjson => data
            .iter()
            .try_for_each(|row| writeln!(out, "{}", object(row)).map_err(io)),
        Output::Csv => {
            let line = |cells: Vec<String>| -> String {
                cells.iter().map(|c| quote(c)).collect::<Vec<_>>().join(",")
            };
            writeln!(out, "{}", line(columns.to_vec())).map_err(io)?;
            for row in data {
                writeln!(out, "{}", line(row.iter().map(cell).collect())).map_err(io)?;
            }
            Ok(())
        }
        Output::Table => {
            let cells: Vec<Vec<String>> = data
                .iter()
                .map(|row| {
                    (0..columns.len())
                        .map(|i| cell(row.get(i).unwrap_or(&Value::Null)))
                        .collect()
                })
                .collect();
            write_grid(&mut out, columns, cells)?;
            writeln!(out, "({})", rows_noun(data.len())).map_err(io)
        }
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Column names: the keys of the objects, in first-seen order.
pub fn columns(values: &[Value]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut columns = Vec::new();
    for v in values {
        if let Value::Object(map) = v {
            for k in map.keys() {
                if seen.insert(k.clone()) {
                    columns.push(k.clone());
                }
            }
        }
    }
    columns
}

/// `text` as it may be shown on a terminal: every control character (ESC, BEL, CR, DEL, the C1
/// controls; line feeds and tabs excepted) is written as a Rust escape such as `\u{1b}`, so that
/// text from a server can neither move the cursor, recolour or clear the screen, set the
/// window title nor ring the bell. For tables and messages; JSON, NDJSON and CSV stay exact.
pub fn for_terminal(text: &str) -> Cow<'_, str> {
    let acts = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts(c) {
            // Writing to a String cannot fail.
            let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

/// A value as table or CSV text: strings bare, null empty, the rest as JSON.
pub fn cell(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A table of `values` and its count, `(2 rows)`; `(none)` for no values.
fn write_table(out: &mut impl Write, values: &[Value]) -> Result<(), Failure> {
    if values.is_empty() {
        return writeln!(out, "(none)").map_err(io);
    }
    if write_items(out, values)? {
        writeln!(out, "({})", rows_noun(values.len())).map_err(io)?;
    }
    Ok(())
}

/// A table of `values` (objects), or one value a line when they are not objects (then false:
/// no count is needed under them).
fn write_items(out: &mut impl Write, values: &[Value]) -> Result<bool, Failure> {
    let columns = columns(values);
    if columns.is_empty() {
        for v in values {
            writeln!(out, "{}", for_terminal(&cell(v))).map_err(io)?;
        }
        return Ok(false);
    }
    let rows: Vec<Vec<String>> = values
        .iter()
        .map(|v| {
            columns
                .iter()
                .map(|c| cell(v.get(c).unwrap_or(&Value::Null)))
                .collect()
        })
        .collect();
    write_grid(out, &columns, rows)?;
    Ok(true)
}

/// An aligned table: a header line and one line per row (cells on one line, clipped to 40
/// terminal columns). Columns line up on a terminal: widths are counted in columns, so CJK text
/// and emoji, two columns a character, do not push the next column out.
fn write_grid(
    out: &mut impl Write,
    columns: &[String],
    rows: Vec<Vec<String>>,
) -> Result<(), Failure> {
    const MAX: usize = 40;
    let clip = |s: &str| -> String {
        let one_line = s.replace(['\n', '\r', '\t'], " ");
        let one_line = for_terminal(&one_line);
        clipped(&one_line, MAX).into_owned()
    };
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| clip(c)).collect())
        .collect();
    let columns: Vec<String> = columns
        .iter()
        .map(|c| for_terminal(c).into_owned())
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.width()))
                .chain([c.width()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| -> String {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| padded(c, *w))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    writeln!(out, "{}", line(&columns)).map_err(io)?;
    for row in &rows {
        writeln!(out, "{}", line(row)).map_err(io)?;
    }
    Ok(())
}

fn write_csv(out: &mut impl Write, values: &[Value]) -> Result<(), Failure> {
    let columns = columns(values);
    if columns.is_empty() && values.is_empty() {
        // No items and so no known columns: no header either.
        return Ok(());
    }
    let csv = CsvWriter::new(columns);
    csv.header(out)?;
    for v in values {
        csv.row(out, v)?;
    }
    Ok(())
}

/// RFC 4180 CSV, one row at a time (for streaming exports).
#[derive(Debug)]
pub struct CsvWriter {
    columns: Vec<String>,
}

impl CsvWriter {
    pub fn new(columns: Vec<String>) -> Self {
        Self { columns }
    }

    /// The columns, in order.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    pub fn header(&self, out: &mut impl Write) -> Result<(), Failure> {
        let fields: Vec<String> = self.columns.iter().map(|c| quote(c)).collect();
        writeln!(out, "{}", fields.join(",")).map_err(io)
    }

    pub fn row(&self, out: &mut impl Write, value: &Value) -> Result<(), Failure> {
        let fields: Vec<String> = self
            .columns
            .iter()
            .map(|c| quote(&cell(value.get(c).unwrap_or(&Value::Null))))
            .collect();
        writeln!(out, "{}", fields.join(",")).map_err(io)
    }
}

fn quote(field: &str) -> String {
    let mut out = Vec::with_capacity(field.len());
    quote_into(field.as_bytes(), &mut out);
    // Quoting adds ASCII quotes only: UTF-8 stays UTF-8.
    String::from_utf8_lossy(&out).into_owned()
}

/// Appends `field` to `out` as one CSV field: in quotes, with quotes doubled, when it holds a
/// comma, a quote or a line break, or starts or ends with a space.
pub fn quote_into(field: &[u8], out: &mut Vec<u8>) {
    let needed = field
        .iter()
        .any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'))
        || field.first() == Some(&b' ')
        || field.last() == Some(&b' ');
    if !needed {
        out.extend_from_slice(field);
        return;
    }
    out.push(b'"');
    for part in field.split_inclusive(|&b| b == b'"') {
        out.extend_from_slice(part);
        if part.last() == Some(&b'"') {
            out.push(b'"');
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_quotes_what_needs_it() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quote("two\nlines"), "\"two\nlines\"");
        let mut out = Vec::new();
        write_csv(
            &mut out,
            &[
                json!({"id": 1, "note": null, "tags": [1, 2]}),
                json!({"id": 2, "extra": "x"}),
            ],
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "id,note,tags,extra\n1,,\"[1,2]\",\n2,,,x\n"
        );
    }

    #[test]
    fn control_characters_are_shown_escaped_on_a_terminal() {
        assert!(matches!(for_terminal("plain, é 日本"), Cow::Borrowed(_)));
        assert_eq!(
            for_terminal("two\nlines\tand a tab"),
            "two\nlines\tand a tab"
        );
        assert_eq!(
            for_terminal("\u{1b}[2J\u{1b}]0;title\u{7}\r\u{7f}\u{9b}x"),
            "\\u{1b}[2J\\u{1b}]0;title\\u{7}\\u{d}\\u{7f}\\u{9b}x"
        );

        let mut out = Vec::new();
        write_table(&mut out, &[json!({"name\u{1b}[31m": "bell\u{7}", "id": 1})]).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains(['\u{1b}', '\u{7}']), "{text:?}");
        assert!(text.contains("name\\u{1b}[31m"), "{text}");
        assert!(text.contains("bell\\u{7}"), "{text}");
        // CSV stays exact: it is data for a program.
        let mut out = Vec::new();
        write_csv(&mut out, &[json!({"a": "x\u{1b}y"})]).unwrap();
        assert_eq!(out, b"a\nx\x1by\n");
    }

    #[test]
    fn tables_align_and_clip() {
        let mut out = Vec::new();
        write_table(
            &mut out,
            &[
                json!({"id": 1, "name": "x".repeat(60)}),
                json!({"id": 22, "name": "b\nc"}),
            ],
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("id  name"));
        assert!(lines[1].ends_with('…'));
        assert_eq!(lines[2], "22  b c");
        assert_eq!(lines[3], "(2 rows)");
    }

    fn table(values: &[Value]) -> String {
        let mut out = Vec::new();
        write_table(&mut out, values).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The terminal column where the last `needle` starts in `line`.
    fn column_of(line: &str, needle: &str) -> usize {
        line[..line.rfind(needle).unwrap()].width()
    }

    #[test]
    fn wide_text_keeps_columns_aligned() {
        let text = table(&[
            json!({"name": "日本語テキスト", "n": 1}),
            json!({"name": "abc", "n": 2}),
            json!({"name": "😀 emoji", "n": 3}),
            json!({"name": "e\u{301}galite\u{301}", "n": 4}),
            json!({"name": "한국어", "n": 5}),
        ]);
        let lines: Vec<&str> = text.lines().collect();
        // Every value of the second column starts in the column of its header.
        let at = column_of(lines[0], "n");
        assert_eq!(at, "日本語テキスト".width() + 2, "{text}");
        for (line, n) in lines[1..6].iter().zip(["1", "2", "3", "4", "5"]) {
            assert_eq!(column_of(line, n), at, "{line:?} in\n{text}");
        }
        assert_eq!(lines[6], "(5 rows)");
    }

    #[test]
    fn long_wide_text_is_clipped_to_forty_columns() {
        let long = "長".repeat(30);
        assert_eq!(clipped(&long, 40), format!("{}…", "長".repeat(19)));
        assert_eq!(clipped(&long, 40).width(), 39);
        // A wide character that would cross the limit is left out whole.
        let mixed = format!("a{}", "長".repeat(30));
        assert_eq!(clipped(&mixed, 40), format!("a{}…", "長".repeat(19)));
        assert_eq!(clipped(&mixed, 40).width(), 40);
        assert_eq!(clipped("short", 40), "short");
        let exact = "x".repeat(40);
        assert_eq!(clipped(&exact, 40), exact);
        let text = table(&[json!({"name": long, "n": 1}), json!({"name": "a", "n": 2})]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(column_of(lines[1], "1"), column_of(lines[2], "2"), "{text}");
        assert!(lines[1].contains('…'));
    }

    #[test]
    fn one_row_is_a_row() {
        assert!(table(&[json!({"id": 1})]).ends_with("\n(1 row)\n"));
        assert!(table(&[json!({"id": 1}), json!({"id": 2})]).ends_with("\n(2 rows)\n"));
        assert_eq!(table(&[]), "(none)\n");
    }

    #[test]
    fn a_page_says_where_it_stands_and_how_to_get_the_next() {
        let records = |page, per_page| PageAt {
            noun: ("record", "records"),
            page,
            per_page,
        };
        assert_eq!(
            page_line(25, 1234, true, records(1, None)),
            "25 of 1234 records, page 1 of 50; next: --page 2"
        );
        assert_eq!(
            page_line(10, 1234, true, records(3, Some(10))),
            "10 of 1234 records, page 3 of 124; next: --page 4"
        );
        // The last page: the engine links a `next` from a full last page; the count says no.
        assert_eq!(
            page_line(4, 1234, true, records(124, Some(10))),
            "4 of 1234 records, page 124 of 124"
        );
        assert_eq!(
            page_line(3, 12, true, records(4, Some(3))),
            "3 of 12 records, page 4 of 4"
        );
        assert_eq!(
            page_line(9, 1234, false, records(50, None)),
            "9 of 1234 records, page 50 of 50"
        );
        // Everything on one page, full or not.
        assert_eq!(
            page_line(25, 25, true, records(1, None)),
            "25 of 25 records"
        );
        assert_eq!(page_line(3, 3, false, records(1, None)), "3 of 3 records");
        assert_eq!(
            page_line(1, 1, false, records(1, Some(10))),
            "1 of 1 record"
        );
        assert_eq!(page_line(0, 0, false, records(1, None)), "0 of 0 records");
        // Past the end.
        assert_eq!(
            page_line(0, 1234, false, records(200, Some(10))),
            "0 of 1234 records: page 200 is past the last page, 124"
        );
        assert_eq!(
            page_line(0, 1234, false, records(200, None)),
            "0 of 1234 records: page 200 is past the last page"
        );
        let teams = PageAt {
            noun: ("team", "teams"),
            page: 1,
            per_page: Some(2),
        };
        assert_eq!(
            page_line(2, 3, true, teams),
            "2 of 3 teams, page 1 of 2; next: --page 2"
        );
    }
}
