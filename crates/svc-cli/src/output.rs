//! Printing results.

use std::io::Write;

use serde::Serialize;

use crate::args::Output;
use crate::exit::Failure;

/// Prints one value.
pub fn value<T: Serialize>(format: Output, value: &T) -> Result<(), Failure> {
    let text = match format {
        Output::Json => serde_json::to_string_pretty(value),
        Output::Ndjson => serde_json::to_string(value),
    }
    .map_err(|e| Failure::Other(format!("cannot print the result: {e}")))?;
    writeln!(std::io::stdout(), "{text}").map_err(|e| Failure::Other(e.to_string()))
}

/// Prints a list: a JSON array, or one line per item.
pub fn list<T: Serialize>(format: Output, items: &[T]) -> Result<(), Failure> {
    match format {
        Output::Json => value(format, &items),
        Output::Ndjson => items.iter().try_for_each(|i| value(format, i)),
    }
}
