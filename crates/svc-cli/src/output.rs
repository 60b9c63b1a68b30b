//! Printing results: a readable table on a terminal; JSON, NDJSON or CSV for scripts.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write};

use serde::Serialize;
use serde_json::Value;

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
                let width = keys.iter().map(|k| text_width(k)).max().unwrap_or(0);
                for (k, v) in keys.iter().zip(map.values()) {
                    writeln!(out, "{}  {}", pad(k, width), for_terminal(&cell(v))).map_err(io)?;
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
            write_grid(&mut out, columns, cells)
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

fn write_table(out: &mut impl Write, values: &[Value]) -> Result<(), Failure> {
    let columns = columns(values);
    if columns.is_empty() {
        for v in values {
            writeln!(out, "{}", for_terminal(&cell(v))).map_err(io)?;
        }
        if values.is_empty() {
            writeln!(out, "(none)").map_err(io)?;
        }
        return Ok(());
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
    write_grid(out, &columns, rows)
}

/// An aligned table: a header line, one line per row (cells on one line, clipped), a count.
fn write_grid(
    out: &mut impl Write,
    columns: &[String],
    rows: Vec<Vec<String>>,
) -> Result<(), Failure> {
    const MAX: usize = 40;
    let clip = |s: &str| -> String {
        let one_line = s.replace(['\n', '\r', '\t'], " ");
        let one_line = for_terminal(&one_line).into_owned();
        if text_width(&one_line) > MAX {
            // Clipped by the columns it takes on screen (CJK and emoji take two), not chars.
            let mut clipped = String::new();
            let mut used = 0;
            for c in one_line.chars() {
                let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
                if used + w > MAX - 1 {
                    break;
                }
                used += w;
                clipped.push(c);
            }
            clipped.push('…');
            clipped
        } else {
            one_line
        }
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
                .map(|r| r.get(i).map_or(0, |c| text_width(c)))
                .chain([text_width(c)])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| -> String {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| pad(c, *w))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    writeln!(out, "{}", line(&columns)).map_err(io)?;
    for row in &rows {
        writeln!(out, "{}", line(row)).map_err(io)?;
    }
    match rows.len() {
        1 => writeln!(out, "(1 row)").map_err(io),
        n => writeln!(out, "({n} rows)").map_err(io),
    }
}

/// The columns `text` takes on a terminal: two for wide characters (CJK, most emoji).
fn text_width(text: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(text)
}

/// `text` followed by spaces up to `width` columns on screen.
fn pad(text: &str, width: usize) -> String {
    let mut padded = text.to_owned();
    padded.extend(std::iter::repeat_n(
        ' ',
        width.saturating_sub(text_width(text)),
    ));
    padded
}

/// After a table of one page of a list: how many there are in all, and how to get the next page
/// (`page` and `per_page` are the page asked for; the list's own defaults when not given).
pub fn page_footer(
    format: Output,
    what: &str,
    page: Option<u32>,
    per_page: Option<u32>,
    shown: usize,
    count: u64,
) -> Result<(), Failure> {
    if format != Output::Table {
        return Ok(());
    }
    let page = u64::from(page.unwrap_or(1));
    let per_page = u64::from(per_page.unwrap_or(25)).max(1);
    let pages = count.div_ceil(per_page).max(1);
    let mut line = format!("{shown} of {count} {what}, page {page} of {pages}");
    // By the count: the engine also links a next page after a full last page, which is empty.
    if page < pages {
        line.push_str(&format!("; next: --page {}", page + 1));
    }
    writeln!(std::io::stdout().lock(), "{line}").map_err(io)
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
    fn wide_text_keeps_the_columns_aligned_and_is_clipped_by_width() {
        let mut out = Vec::new();
        let rows = vec![
            vec!["東京".to_owned(), "a".to_owned()],
            vec!["Paris".to_owned(), "b".to_owned()],
            vec!["日".repeat(30), "c".to_owned()],
        ];
        write_grid(&mut out, &["city".to_owned(), "x".to_owned()], rows).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // The second column starts at the same screen column on every line.
        let starts: Vec<usize> = lines[..4]
            .iter()
            .map(|l| text_width(&l[..l.rfind(' ').unwrap() + 1]))
            .collect();
        assert!(starts.iter().all(|s| *s == starts[0]), "{text}");
        // 30 wide characters take 60 columns: clipped to at most 40 with the ellipsis.
        let clipped = text_width(lines[3].split("  ").next().unwrap());
        assert!((39..=40).contains(&clipped), "{text}");
        assert!(lines[3].contains('…'));
        assert_eq!(lines[4], "(3 rows)");

        let mut one = Vec::new();
        write_grid(&mut one, &["id".to_owned()], vec![vec!["1".to_owned()]]).unwrap();
        assert!(String::from_utf8(one).unwrap().ends_with("(1 row)\n"));
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
}
