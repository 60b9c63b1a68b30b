//! Records written as CSV: the one grammar `svc records import` and the emulator's fixture
//! files read.
//!
//! RFC 4180: a header row naming the fields, then a record a row; quoted cells, `""` inside
//! quotes, line breaks inside quotes, CRLF or LF; a blank line is no record. A cell is the text
//! it is (the model's field reads `"12"` as it reads a JSON string), and an empty cell is left
//! out of its record, so the column's default applies. What cannot be read as meant is refused,
//! never read on: a quote left open, a header column without a name or named twice, and a row
//! of another number of cells than the header (refused row by row, so that a reader may go on
//! with the others).
//!
//! ```
//! use svc_model::records::csv::CsvRecords;
//!
//! let csv = CsvRecords::read("sku,name,note\nA-1,\"Big, red\",\n")?;
//! assert_eq!(csv.header, ["sku", "name", "note"]);
//! let row = &csv.rows[0];
//! assert_eq!(row.line, 2);
//! assert_eq!(row.fields(&csv.header)?, [("sku", "A-1"), ("name", "Big, red")]);
//! # Ok::<(), svc_model::records::csv::CsvError>(())
//! ```

/// A CSV text read whole: its header and its rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvRecords {
    /// The fields the first line names, in order, each once.
    pub header: Vec<String>,
    /// The rows after it, blank lines left out.
    pub rows: Vec<CsvRow>,
}

/// One row of a CSV text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvRow {
    /// The line it starts on, from 1 (a quoted line break makes a row span lines).
    pub line: usize,
    /// Its cells, as written (quotes taken off, `""` read as `"`).
    pub cells: Vec<String>,
}

/// What makes a CSV text unreadable as records, with the line to look at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CsvError {
    /// The text has no line at all.
    #[error("the file is empty")]
    Empty,
    /// A quoted cell is still open at the end of the text.
    #[error("a quoted cell opened on line {line} is not closed by the end of the file")]
    QuoteLeftOpen {
        /// The line the quote opened on.
        line: usize,
    },
    /// A header column with no name (or only spaces).
    #[error("the header's column {column} has no name")]
    UnnamedColumn {
        /// The column, from 1.
        column: usize,
    },
    /// A name the header gives twice.
    #[error("the header names {name:?} twice (columns {first} and {second})")]
    RepeatedColumn {
        /// The name.
        name: String,
        /// Its first column, from 1.
        first: usize,
        /// The column that repeats it.
        second: usize,
    },
    /// A row of another number of cells than the header names fields.
    #[error("{cells} cells where the header names {fields} fields")]
    WrongCells {
        /// The line the row starts on.
        line: usize,
        /// Its cells.
        cells: usize,
        /// The header's fields.
        fields: usize,
    },
}

impl CsvError {
    /// The line at fault (the header's, 1, for an empty file or a header's fault).
    pub fn line(&self) -> usize {
        match self {
            Self::QuoteLeftOpen { line } | Self::WrongCells { line, .. } => *line,
            Self::Empty | Self::UnnamedColumn { .. } | Self::RepeatedColumn { .. } => 1,
        }
    }

    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            Self::Empty => "its first line names the fields, e.g. name,email,city",
            Self::QuoteLeftOpen { .. } => {
                "close it with a quote (\"), and double a quote inside a cell (\"\")"
            }
            Self::UnnamedColumn { .. } | Self::RepeatedColumn { .. } => {
                "the first line names each column's field once"
            }
            Self::WrongCells { .. } => {
                "quote a cell that holds a comma, a quote or a line break (\"a, b\"), and double \
                 a quote inside one (\"say \"\"hi\"\"\")"
            }
        }
    }
}

impl CsvRecords {
    /// Reads `text`: its header (checked) and its rows (each checked by [`CsvRow::fields`]).
    pub fn read(text: &str) -> Result<CsvRecords, CsvError> {
        let mut rows = rows(text)?.into_iter();
        let header = rows.next().ok_or(CsvError::Empty)?.cells;
        for (i, name) in header.iter().enumerate() {
            if name.trim().is_empty() {
                return Err(CsvError::UnnamedColumn { column: i + 1 });
            }
            if let Some(first) = header[..i].iter().position(|h| h == name) {
                return Err(CsvError::RepeatedColumn {
                    name: name.clone(),
                    first: first + 1,
                    second: i + 1,
                });
            }
        }
        let rows = rows
            .filter(|row| !(row.cells.len() == 1 && row.cells[0].is_empty()))
            .collect();
        Ok(CsvRecords { header, rows })
    }
}

impl CsvRow {
    /// The record of the row: each non-empty cell with its field's name from `header`, in
    /// order; [`CsvError::WrongCells`] when the row does not have a cell per field.
    pub fn fields<'a>(&'a self, header: &'a [String]) -> Result<Vec<(&'a str, &'a str)>, CsvError> {
        if self.cells.len() != header.len() {
            return Err(CsvError::WrongCells {
                line: self.line,
                cells: self.cells.len(),
                fields: header.len(),
            });
        }
        Ok(header
            .iter()
            .zip(&self.cells)
            .filter(|(_, cell)| !cell.is_empty())
            .map(|(name, cell)| (name.as_str(), cell.as_str()))
            .collect())
    }
}

/// The rows of a CSV text, blank ones included, each with the line it starts on.
fn rows(text: &str) -> Result<Vec<CsvRow>, CsvError> {
    let mut out = Vec::new();
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut opened = 1;
    let mut line = 1;
    let mut start = 1;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    cell.push('"');
                }
                '"' => quoted = false,
                '\n' => {
                    line += 1;
                    cell.push(c);
                }
                _ => cell.push(c),
            }
            continue;
        }
        match c {
            '"' if cell.is_empty() => {
                quoted = true;
                opened = line;
            }
            ',' => cells.push(std::mem::take(&mut cell)),
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                cells.push(std::mem::take(&mut cell));
                out.push(CsvRow {
                    line: start,
                    cells: std::mem::take(&mut cells),
                });
                line += 1;
                start = line;
                any = false;
            }
            _ => cell.push(c),
        }
    }
    if quoted {
        return Err(CsvError::QuoteLeftOpen { line: opened });
    }
    if any {
        cells.push(cell);
        out.push(CsvRow { line: start, cells });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_quotes_and_line_breaks() {
        let text =
            "sku,name,note\r\nA-1,\"Big, red\",\"say \"\"hi\"\"\"\nA-2,\"two\nlines\",\n\nA-3,x";
        let csv = CsvRecords::read(text).unwrap();
        assert_eq!(csv.header, ["sku", "name", "note"]);
        let lines: Vec<usize> = csv.rows.iter().map(|r| r.line).collect();
        assert_eq!(lines, [2, 3, 6]);
        assert_eq!(
            csv.rows[0].fields(&csv.header).unwrap(),
            [("sku", "A-1"), ("name", "Big, red"), ("note", "say \"hi\"")]
        );
        // An empty cell is left out; a cell is text, whatever it looks like.
        assert_eq!(
            csv.rows[1].fields(&csv.header).unwrap(),
            [("sku", "A-2"), ("name", "two\nlines")]
        );
        let wrong = csv.rows[2].fields(&csv.header).unwrap_err();
        assert_eq!(
            wrong,
            CsvError::WrongCells {
                line: 6,
                cells: 2,
                fields: 3
            }
        );
        assert_eq!(wrong.line(), 6);
        assert!(
            wrong
                .to_string()
                .contains("2 cells where the header names 3")
        );
        // A header alone: no records.
        assert!(CsvRecords::read("a,b\n").unwrap().rows.is_empty());
    }

    #[test]
    fn what_cannot_be_read_as_meant_is_refused() {
        assert_eq!(CsvRecords::read(""), Err(CsvError::Empty));
        assert_eq!(
            CsvRecords::read("a,,b\n1,2,3"),
            Err(CsvError::UnnamedColumn { column: 2 })
        );
        let twice = CsvRecords::read("a,b,a\n1,2,3").unwrap_err();
        assert_eq!(
            twice.to_string(),
            "the header names \"a\" twice (columns 1 and 3)"
        );
        assert_eq!(twice.line(), 1);
        let open = CsvRecords::read("a,b\n1,2\n3,\"four\n5,6\n").unwrap_err();
        assert_eq!(open, CsvError::QuoteLeftOpen { line: 3 });
        assert!(open.hint().contains("close it with a quote"));
    }
}
