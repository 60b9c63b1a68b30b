//! Printing results: a readable table on a terminal; JSON, NDJSON or CSV for scripts.

use std::collections::BTreeSet;
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

fn io(e: std::io::Error) -> Failure {
    Failure::Other(format!("cannot write the output: {e}"))
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
                let width = map.keys().map(|k| k.chars().count()).max().unwrap_or(0);
                for (k, v) in map {
                    writeln!(out, "{k:<width$}  {}", cell(v)).map_err(io)?;
                }
                Ok(())
            }
            other => writeln!(out, "{}", cell(other)).map_err(io),
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

/// A value as table or CSV text: strings bare, null empty, the rest as JSON.
pub fn cell(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn write_table(out: &mut impl Write, values: &[Value]) -> Result<(), Failure> {
    const MAX: usize = 40;
    let columns = columns(values);
    if columns.is_empty() {
        for v in values {
            writeln!(out, "{}", cell(v)).map_err(io)?;
        }
        if values.is_empty() {
            writeln!(out, "(none)").map_err(io)?;
        }
        return Ok(());
    }
    let clip = |s: String| -> String {
        let one_line = s.replace(['\n', '\r', '\t'], " ");
        if one_line.chars().count() > MAX {
            format!("{}…", one_line.chars().take(MAX - 1).collect::<String>())
        } else {
            one_line
        }
    };
    let rows: Vec<Vec<String>> = values
        .iter()
        .map(|v| {
            columns
                .iter()
                .map(|c| clip(cell(v.get(c).unwrap_or(&Value::Null))))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([c.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &[String]| -> String {
        cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}", w = *w))
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_owned()
    };
    writeln!(out, "{}", line(&columns)).map_err(io)?;
    for row in &rows {
        writeln!(out, "{}", line(row)).map_err(io)?;
    }
    writeln!(out, "({} rows)", rows.len()).map_err(io)
}

fn write_csv(out: &mut impl Write, values: &[Value]) -> Result<(), Failure> {
    let columns = columns(values);
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
    if field.contains([',', '"', '\n', '\r']) || field.starts_with(' ') || field.ends_with(' ') {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
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
