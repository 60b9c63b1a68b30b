//! The engine's reading of a write's body, the same on every database: a body that is not a
//! JSON object, and each value through its column's serializer field, with every field error at
//! once.

use std::collections::BTreeMap;

use crate::engine::convert::{InputField, Internal, PyJson, to_internal};
use crate::engine::error::EngineError;

/// An error of the whole body (`non_field_errors`).
pub(crate) fn non_field(message: String) -> EngineError {
    EngineError::field("non_field_errors", message)
}

/// The engine's answer when its ORM's flush fails without a database message: a NULL in a
/// row's identity, or a write by identity that reached another number of rows than one (a
/// promoted key that repeats). The transaction is rolled back; nothing is written.
pub(crate) fn query_failed() -> EngineError {
    non_field("Query failed".to_owned())
}

/// The message of a `400` that lists its field errors.
pub(crate) fn summary(errors: &BTreeMap<String, Vec<String>>) -> String {
    let parts: Vec<String> = errors
        .iter()
        .map(|(f, m)| format!("{f}: {}", m.join(" ")))
        .collect();
    format!("Invalid data: {}", parts.join("; "))
}

/// Python attribute names of the JSON types other than dict (`dir()` without dunders): a
/// serializer reading a non-dict body takes `getattr(body, column)`.
const LIST_ATTRS: [&str; 11] = [
    "append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove", "reverse",
    "sort",
];
const STR_ATTRS: [&str; 47] = [
    "capitalize",
    "casefold",
    "center",
    "count",
    "encode",
    "endswith",
    "expandtabs",
    "find",
    "format",
    "format_map",
    "index",
    "isalnum",
    "isalpha",
    "isascii",
    "isdecimal",
    "isdigit",
    "isidentifier",
    "islower",
    "isnumeric",
    "isprintable",
    "isspace",
    "istitle",
    "isupper",
    "join",
    "ljust",
    "lower",
    "lstrip",
    "maketrans",
    "partition",
    "removeprefix",
    "removesuffix",
    "replace",
    "rfind",
    "rindex",
    "rjust",
    "rpartition",
    "rsplit",
    "rstrip",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "swapcase",
    "title",
    "translate",
    "upper",
    "zfill",
];
const NUMBER_ATTRS: [&str; 12] = [
    "as_integer_ratio",
    "bit_count",
    "bit_length",
    "conjugate",
    "denominator",
    "from_bytes",
    "imag",
    "numerator",
    "real",
    "to_bytes",
    "fromhex",
    "hex",
];

/// A body that is not a JSON object, for a model with columns `names`: fine for a create (no
/// column is set), unless a column is named like an attribute of the value; refused for an
/// update (its body is refused: the engine reads each column as an attribute of the value).
pub(crate) fn not_a_dict(body: &PyJson, names: &[&str], updating: bool) -> Result<(), EngineError> {
    let attrs: &[&str] = match body {
        PyJson::List(_) => &LIST_ATTRS,
        PyJson::Str(_) => &STR_ATTRS,
        PyJson::Int(_) | PyJson::Float(_) | PyJson::Bool(_) => &NUMBER_ATTRS,
        _ => &[],
    };
    let clash = names
        .iter()
        .any(|name| attrs.contains(name) || name.starts_with("__"));
    if updating || clash {
        let got = match body {
            PyJson::None => "null",
            PyJson::Bool(_) => "a boolean",
            PyJson::Int(_) | PyJson::Float(_) => "a number",
            PyJson::Str(_) => "a string",
            PyJson::List(_) => "an array",
            PyJson::Dict(_) => "an object",
        };
        return Err(non_field(format!(
            "Invalid data. Expected a JSON object of field values, but got {got}."
        )));
    }
    Ok(())
}

/// Each given value through its column's serializer field (`field` says the column's name
/// and field), whatever the database; these errors and `errors` (found before, such as
/// missing columns), all at once, as a `400`.
pub(crate) fn read_values<'m, F>(
    given: &[(&'m F, &PyJson)],
    field: impl Fn(&F) -> (&str, InputField),
    mut errors: BTreeMap<String, Vec<String>>,
) -> Result<Vec<(&'m F, Internal)>, EngineError> {
    let mut values = Vec::with_capacity(given.len());
    for (f, v) in given {
        let (name, input) = field(f);
        match to_internal(input, v) {
            Ok(internal) => values.push((*f, internal)),
            Err(m) => errors.entry(name.to_owned()).or_default().push(m),
        }
    }
    if errors.is_empty() {
        Ok(values)
    } else {
        Err(EngineError::fields(summary(&errors), errors))
    }
}

/// Strict mode's reading of a write's body: keys that name no field of the model are refused
/// with a `400` that names them and lists the fields ([decision: stricter]: the data engine
/// ignores them and answers `200`/`201`, so a misspelt field changes nothing without a word).
/// Lenient mode does not call this. A body that is not an object is left to the engine's
/// reading ([`not_a_dict`]).
pub(crate) fn unknown_fields(
    model: &str,
    body: &PyJson,
    names: &[String],
) -> Result<(), EngineError> {
    let PyJson::Dict(pairs) = body else {
        return Ok(());
    };
    let mut unknown: Vec<&str> = Vec::new();
    for (key, _) in pairs {
        if !names.iter().any(|n| n == key) && !unknown.contains(&key.as_str()) {
            unknown.push(key);
        }
    }
    if unknown.is_empty() {
        return Ok(());
    }
    let fields = names.join(", ");
    let mut errors = BTreeMap::new();
    for key in &unknown {
        errors.insert(
            (*key).to_owned(),
            vec![format!(
                "Unknown field of model {model:?} (the data engine would ignore it)."
            )],
        );
    }
    let quoted: Vec<String> = unknown.iter().map(|k| format!("{k:?}")).collect();
    Err(EngineError::fields(
        format!(
            "Unknown field{} {} (the data engine would ignore {}); model {model:?} has: {fields}.",
            if unknown.len() == 1 { "" } else { "s" },
            quoted.join(", "),
            if unknown.len() == 1 { "it" } else { "them" },
        ),
        errors,
    ))
}
