//! `svc records import`: rows of a CSV (with a header) or NDJSON file, created (or, with
//! `--key`, created and updated) through the SDK's bulk helper, a few requests at once.
//!
//! CSV cells are sent as the text they are: the data engine reads each value through its
//! column's field (`"12"` into an integer, `"true"` into a boolean, `"2026-05-01"` into a date),
//! exactly as it reads typed JSON, so the model's own fields type the values. An empty cell is
//! left out of the record (the column's default applies on a create; an update leaves it).
//!
//! Before the first row goes out, the columns to send are settled and checked against the
//! model (`import_check`): a column the database would refuse in every row is named then,
//! not once per failed row.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use svc_api::{Bulk, Existing, Record, Records, Written};
use svc_model::records::csv::{CsvError, CsvRecords};

use crate::args::{ExportFormat, Output};
use crate::exit::Failure;
use crate::import_check::{self, ModelRef};
use crate::{output, progress};

/// What `svc records import` was asked to do.
pub struct Import {
    pub file: String,
    pub format: Option<ExportFormat>,
    pub key: Option<String>,
    pub skip_existing: bool,
    pub pk: String,
    pub concurrency: usize,
    pub errors: Option<PathBuf>,
    /// `--columns`: import only these columns of the file.
    pub columns: Option<Vec<String>>,
    /// `--skip-columns`: leave these columns out.
    pub skip_columns: Vec<String>,
    /// Read the model's columns before sending (not `--no-check`).
    pub check: bool,
}

/// One row of the input: where it starts (line number, from 1) and the record, or why it
/// cannot be one.
struct Row {
    line: usize,
    record: Result<Record, String>,
}

/// The counts of the summary.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
struct Counts {
    created: u64,
    updated: u64,
    skipped: u64,
    failed: u64,
}

pub async fn run(
    records: Records<'_>,
    model: ModelRef<'_>,
    import: Import,
    format: Output,
) -> Result<(), Failure> {
    let kind = file_format(&import.file, import.format)?;
    let text = read(&import.file)?;
    let (header, mut rows) = match kind {
        ExportFormat::Csv => csv_rows(&text)?,
        ExportFormat::Ndjson => {
            let rows = ndjson_rows(&text);
            (ndjson_keys(&rows), rows)
        }
    };
    let file = if import.file == "-" {
        "stdin"
    } else {
        import.file.as_str()
    };
    let chosen = import_check::chosen(
        &header,
        import.columns.as_deref(),
        &import.skip_columns,
        import.key.as_deref(),
        file,
    )?;
    let records_read: Vec<(usize, &Record)> = rows
        .iter()
        .filter_map(|r| r.record.as_ref().ok().map(|record| (r.line, record)))
        .collect();
    if import.check && !records_read.is_empty() {
        let learnt = import_check::learn(&model, &records).await?;
        import_check::check(&learnt, &model.name(), &chosen, &records_read, file)?;
    }
    drop(records_read);
    if chosen.len() < header.len() {
        let keep: std::collections::HashSet<&str> = chosen.iter().map(String::as_str).collect();
        for row in &mut rows {
            if let Ok(record) = &mut row.record {
                record.retain(|name, _| keep.contains(name.as_str()));
            }
        }
    }
    // Created only now: an import refused before sending leaves an earlier report as it was.
    let mut errors: Report = match &import.errors {
        Some(path) => Some(std::io::BufWriter::new(
            std::fs::File::create(path)
                .map_err(|e| Failure::Usage(format!("cannot create {}: {e}", path.display())))?,
        )),
        None => None,
    };

    let total = rows.len() as u64;
    let mut counts = Counts::default();
    let mut lines = Vec::new();
    let mut good = Vec::new();
    let mut first_error: Option<String> = None;
    for row in rows {
        match row.record {
            Ok(record) => {
                lines.push(row.line);
                good.push(record);
            }
            Err(e) => {
                counts.failed += 1;
                let message = format!("line {}: {e}", row.line);
                first_error.get_or_insert(message);
                report(&mut errors, row.line, &e, Value::Null)?;
            }
        }
    }
    let bulk = match &import.key {
        Some(key) => {
            Bulk::keyed(key.as_str())
                .pk(import.pk.as_str())
                .existing(if import.skip_existing {
                    Existing::Skip
                } else {
                    Existing::Update
                })
        }
        None => Bulk::new(),
    }
    .concurrency(import.concurrency);
    // Kept to write a failed row into the report.
    let sent: Vec<Record> = if errors.is_some() {
        good.clone()
    } else {
        Vec::new()
    };
    let mut progress = Progress::new(total);
    let mut stopped = None;
    {
        let mut outcomes = records.upsert_many(futures_util::stream::iter(good), &bulk);
        while let Some(outcome) = outcomes.next().await {
            match outcome.result {
                Ok(Written::Created(_)) => counts.created += 1,
                Ok(Written::Updated(_)) => counts.updated += 1,
                Ok(_) => counts.skipped += 1,
                Err(e) => {
                    let line = lines[outcome.index];
                    // No answer (after the SDK's retries): the service is away; the rows not
                    // yet sent are not tried one by one against it.
                    if e.status().is_none() && !matches!(e, svc_api::Error::InvalidInput(_)) {
                        stopped = Some((line, e));
                        break;
                    }
                    counts.failed += 1;
                    let message = e.to_string();
                    first_error.get_or_insert(format!("line {line}: {message}"));
                    let row = sent
                        .get(outcome.index)
                        .map_or(Value::Null, |r| Value::Object(r.clone()));
                    report(&mut errors, line, &message, row)?;
                }
            }
            progress.tick(counts);
        }
    }
    if let Some(out) = errors.as_mut() {
        out.flush()
            .map_err(|e| Failure::Other(format!("cannot write the error report: {e}")))?;
    }
    progress.done(counts, &import.file);
    if let Some((line, e)) = stopped {
        let done = counts.created + counts.updated + counts.skipped;
        return Err(Failure::Stopped {
            message: format!("the import stopped at line {line}: {e}"),
            note: format!(
                "{done} of {total} rows were written before it stopped; {}",
                if import.key.is_some() {
                    "run the same command again to finish (--key makes it safe)"
                } else {
                    "with --key FIELD a second run updates the rows already written instead of creating them again"
                }
            ),
            cause: Box::new(Failure::Api(e)),
        });
    }
    output::value(format, &counts)?;
    if counts.failed > 0 {
        let first = first_error.unwrap_or_default();
        let hint = match &import.errors {
            Some(path) => format!("each failed row and its error are in {}", path.display()),
            None => "--errors FILE writes each failed row with its error (NDJSON)".to_owned(),
        };
        return Err(Failure::Other(format!(
            "{} of {total} rows failed; the first: {first}",
            counts.failed
        ))
        .with_hint(hint));
    }
    Ok(())
}

type Report = Option<std::io::BufWriter<std::fs::File>>;

/// One line of the error report: `{"line": 7, "error": "...", "row": {...}}`.
fn report(errors: &mut Report, line: usize, error: &str, row: Value) -> Result<(), Failure> {
    if let Some(out) = errors.as_mut() {
        let entry = json!({"line": line, "error": error, "row": row});
        writeln!(out, "{entry}")
            .map_err(|e| Failure::Other(format!("cannot write the error report: {e}")))?;
    }
    Ok(())
}

/// The format: `--format`, else the file's extension.
fn file_format(file: &str, asked: Option<ExportFormat>) -> Result<ExportFormat, Failure> {
    if let Some(f) = asked {
        return Ok(f);
    }
    let ext = Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match ext.as_deref() {
        Some("csv") => Ok(ExportFormat::Csv),
        Some("ndjson" | "jsonl") => Ok(ExportFormat::Ndjson),
        _ => Err(Failure::usage_hint(
            format!("cannot tell the format of {file:?} from its name"),
            "name it .csv, .ndjson or .jsonl, or give --format csv or --format ndjson",
        )),
    }
}

fn read(file: &str) -> Result<String, Failure> {
    let mut text = String::new();
    if file == "-" {
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Failure::Usage(format!("cannot read stdin: {e}")))?;
    } else {
        text = std::fs::read_to_string(file)
            .map_err(|e| Failure::Usage(format!("cannot read {file}: {e}")))?;
    }
    Ok(text.strip_prefix('\u{feff}').unwrap_or(&text).to_owned())
}

/// One JSON object per line; blank lines are skipped.
fn ndjson_rows(text: &str) -> Vec<Row> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| Row {
            line: i + 1,
            record: match serde_json::from_str::<Value>(l) {
                Ok(Value::Object(map)) => Ok(map),
                Ok(_) => Err("not a JSON object: each line must be one record".to_owned()),
                Err(e) => Err(format!("not JSON: {e}")),
            },
        })
        .collect()
}

/// The keys of the NDJSON records, in the order they first appear: the file's columns.
fn ndjson_keys(rows: &[Row]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    rows.iter()
        .filter_map(|r| r.record.as_ref().ok())
        .flat_map(|r| r.keys())
        .filter(|k| seen.insert(k.as_str()))
        .cloned()
        .collect()
}

/// A CSV file with a header row naming the fields (svc-model's reader, the one the emulator's
/// fixtures use): the header and the rows, each row's record or why it has none.
fn csv_rows(text: &str) -> Result<(Vec<String>, Vec<Row>), Failure> {
    let csv = CsvRecords::read(text).map_err(|e| {
        let message = match e {
            CsvError::Empty => "the CSV file is empty".to_owned(),
            _ => format!("the CSV file, line {}: {e}", e.line()),
        };
        Failure::usage_hint(message, e.hint())
    })?;
    let rows = csv
        .rows
        .iter()
        .map(|row| Row {
            line: row.line,
            record: row
                .fields(&csv.header)
                .map(|fields| {
                    fields
                        .into_iter()
                        .map(|(name, cell)| (name.to_owned(), Value::String(cell.to_owned())))
                        .collect::<Map<String, Value>>()
                })
                .map_err(|e| e.to_string()),
        })
        .collect();
    Ok((csv.header, rows))
}

/// Progress on a terminal (stderr): `120 of 5000 rows (2%): 100 created, ...`; off a terminal
/// only the summary line.
struct Progress {
    live: bool,
    total: u64,
    started: Instant,
    drawn: Option<Instant>,
}

impl Progress {
    fn new(total: u64) -> Self {
        Self {
            live: std::io::stderr().is_terminal(),
            total,
            started: Instant::now(),
            drawn: None,
        }
    }

    fn tick(&mut self, counts: Counts) {
        if !self.live {
            return;
        }
        let now = Instant::now();
        if self
            .drawn
            .is_some_and(|at| now.duration_since(at) < progress::REDRAW)
        {
            return;
        }
        self.drawn = Some(now);
        let done = counts.created + counts.updated + counts.skipped + counts.failed;
        let percent = done.saturating_mul(100) / self.total.max(1);
        progress::draw(
            &format!(
                "{done} of {} rows ({percent}%): {}",
                self.total,
                described(counts)
            ),
            false,
        );
    }

    fn done(&mut self, counts: Counts, file: &str) {
        let elapsed = self.started.elapsed();
        let rows = counts.created + counts.updated + counts.skipped + counts.failed;
        let seconds = elapsed.as_secs_f64();
        let rate = if seconds > 0.0 {
            format!(" ({} rows/s)", (rows as f64 / seconds).round() as u64)
        } else {
            String::new()
        };
        let from = if file == "-" { "stdin" } else { file };
        let tenths = elapsed.as_millis().div_ceil(100);
        let text = format!(
            "{rows} rows from {from} in {}.{} s{rate}: {}",
            tenths / 10,
            tenths % 10,
            described(counts)
        );
        if self.live {
            progress::draw(&text, true);
        } else {
            let _ = writeln!(std::io::stderr(), "{text}");
        }
    }
}

fn described(c: Counts) -> String {
    format!(
        "{} created, {} updated, {} skipped, {} failed",
        c.created, c.updated, c.skipped, c.failed
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_quotes_and_line_breaks() {
        let text =
            "sku,name,note\r\nA-1,\"Big, red\",\"say \"\"hi\"\"\"\nA-2,\"two\nlines\",\n\nA-3,x";
        let (header, rows) = csv_rows(text).unwrap();
        assert_eq!(header, ["sku", "name", "note"]);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].line, 2);
        let r0 = rows[0].record.as_ref().unwrap();
        assert_eq!(r0["name"], "Big, red");
        assert_eq!(r0["note"], "say \"hi\"");
        let r1 = rows[1].record.as_ref().unwrap();
        assert_eq!(r1["name"], "two\nlines");
        // An empty cell is left out.
        assert!(!r1.contains_key("note"));
        assert_eq!(rows[2].line, 6);
        assert!(rows[2].record.as_ref().unwrap_err().contains("2 cells"));
        assert!(csv_rows("").is_err());
        assert!(csv_rows("a,,b\n1,2,3").is_err());
        // What the emulator's fixtures refuse, the import refuses before sending anything.
        assert!(csv_rows("a,b,a\n1,2,3").is_err());
        assert!(csv_rows("a,b\n1,\"2\n").is_err());
    }

    #[test]
    fn ndjson_lines_are_objects() {
        let rows = ndjson_rows("{\"a\": 1}\n\n[1]\n{oops\n");
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].record.as_ref().unwrap()["a"], 1);
        assert_eq!(rows[1].line, 3);
        assert!(
            rows[1]
                .record
                .as_ref()
                .unwrap_err()
                .contains("not a JSON object")
        );
        assert!(rows[2].record.as_ref().unwrap_err().contains("not JSON"));
        let rows = ndjson_rows("{\"b\": 1, \"a\": 2}\n{\"c\": 3, \"a\": 4}\n");
        assert_eq!(ndjson_keys(&rows), ["b", "a", "c"]);
    }

    #[test]
    fn the_format_comes_from_the_flag_or_the_name() {
        assert_eq!(file_format("x.CSV", None).unwrap(), ExportFormat::Csv);
        assert_eq!(file_format("x.jsonl", None).unwrap(), ExportFormat::Ndjson);
        assert_eq!(
            file_format("-", Some(ExportFormat::Csv)).unwrap(),
            ExportFormat::Csv
        );
        assert!(file_format("-", None).is_err());
        assert!(file_format("rows.txt", None).is_err());
    }
}
