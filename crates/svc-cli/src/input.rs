//! Reading JSON given on the command line: inline, `@file`, or `-` for stdin.

use std::io::Read;

use crate::exit::Failure;

pub fn json(arg: &str) -> Result<serde_json::Value, Failure> {
    let (text, from) = if arg == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| Failure::Usage(format!("cannot read stdin: {e}")))?;
        (s, "stdin".to_owned())
    } else if let Some(path) = arg.strip_prefix('@') {
        let s = std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("cannot read {path}: {e}")))?;
        (s, path.to_owned())
    } else {
        (arg.to_owned(), "--data".to_owned())
    };
    serde_json::from_str(&text)
        .map_err(|e| Failure::Usage(format!("{from} is not valid JSON: {e}")))
}
