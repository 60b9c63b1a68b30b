//! The engine's reading of a write's body, the same on every database: a body that is not a
//! JSON object, and each value through its column's serializer field, with every field error at
//! once.

pub mod form;
pub mod incoming;
pub mod multipart;

use std::collections::BTreeMap;

use crate::error::EngineError;
use crate::field_input::{InputField, Internal, engine_fails, to_internal};
use crate::python::json::PyJson;
use crate::table::BodyColumn;
use crate::table::Column;
use crate::table::Table;

/// An error of the whole body (`non_field_errors`).
pub fn non_field(message: String) -> EngineError {
    EngineError::field("non_field_errors", message)
}

/// The engine's answer when its ORM's flush fails without a database message: a NULL in a
/// row's identity, or a write by identity that reached another number of rows than one (a
/// promoted key that repeats). The transaction is rolled back; nothing is written.
pub fn query_failed() -> EngineError {
    non_field("Query failed".to_owned())
}

/// The message of a `400` that lists its field errors.
pub fn summary(errors: &BTreeMap<String, Vec<String>>) -> String {
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
pub fn not_a_dict(body: &PyJson, names: &[&str], updating: bool) -> Result<(), EngineError> {
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
        return Err(non_field(format!(
            "Invalid data. Expected a JSON object of field values, but got {}.",
            body.kind_name()
        )));
    }
    Ok(())
}

/// Each given value through its column's serializer field (`field` says the column's name
/// and field), whatever the database; these errors and `errors` (found before, such as
/// missing columns), all at once, as a `400`.
pub fn read_values<'m, F>(
    given: &[(&'m F, &PyJson)],
    field: impl Fn(&F) -> (&str, InputField),
    mut errors: BTreeMap<String, Vec<String>>,
) -> Result<Vec<(&'m F, Internal)>, EngineError> {
    let mut values = Vec::with_capacity(given.len());
    // dateparser reads more forms than the emulator (`now`, `5 March 2024`): a date-time the
    // emulator cannot read may be one the engine writes, so its refusal is by design.
    let mut by_design = false;
    for (f, v) in given {
        let (name, input) = field(f);
        match to_internal(input, v) {
            Ok(internal) => values.push((*f, internal)),
            Err(m) => {
                // Values the engine's field fails on (500): refused by design.
                by_design |= input == InputField::DateTime || engine_fails(input, v);
                errors.entry(name.to_owned()).or_default().push(m);
            }
        }
    }
    if errors.is_empty() {
        Ok(values)
    } else if by_design {
        Err(EngineError::fields(summary(&errors), errors).by_design())
    } else {
        Err(EngineError::fields(summary(&errors), errors))
    }
}

/// Strict mode's reading of a write's body: keys that name no field of the model are refused
/// with a `400` that names them and lists the fields ([decision: stricter]: the data engine
/// ignores them and answers `200`/`201`, so a misspelt field changes nothing without a word).
/// Lenient mode does not call this. A body that is not an object is left to the engine's
/// reading ([`not_a_dict`]).
pub fn unknown_fields(model: &str, body: &PyJson, names: &[String]) -> Result<(), EngineError> {
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
    )
    .by_design())
}
/// The body values of the model's columns: a dict's keys that name columns. A body that is not a dict is the `400` of the
/// required columns when there are any (as in the engine), else [`not_a_dict`]'s reading.
pub fn body_values<'m, T>(
    model: &'m T,
    body: &'m PyJson,
    updating: bool,
) -> Result<Vec<(&'m T::Column, &'m PyJson)>, EngineError>
where
    T: Table,
    T::Column: BodyColumn,
{
    let columns = model.columns();
    if let PyJson::Dict(_) = body {
        return Ok(columns
            .iter()
            .filter_map(|c| body.get(c.name()).map(|v| (c, v)))
            .collect());
    }
    if !columns.iter().any(BodyColumn::required) {
        let names: Vec<&str> = columns.iter().map(Column::name).collect();
        not_a_dict(body, &names, updating)?;
    }
    Ok(Vec::new())
}

/// The positions among an update's values of those the ORM may find unchanged where the
/// database's answer to a plain write would differ: generated columns (which the database
/// refuses to write) and JSON columns given `None` (which SQLAlchemy writes as JSON `null`, and
/// loads, like SQL NULL, as `None`: [`loads_none`]). The ORM writes only the attributes that
/// changed: the database says which of these hold the value given, and [`keep_changed`] leaves
/// those out; any other is written (and a generated one refused as the engine's is).
pub fn unchanged_candidates<C: BodyColumn>(values: &[(&C, Internal)]) -> Vec<usize> {
    (0..values.len())
        .filter(|&i| values[i].0.generated() || loads_none(values[i].0, &values[i].1))
        .collect()
}

/// A JSON column given `None` (`null`, or the text `"null"` its field parses): unchanged where
/// the stored value loads as `None` (SQL NULL or JSON `null`); the running engine kept a NULL
/// there on SQLite and PostgreSQL.
pub fn loads_none<C: BodyColumn>(column: &C, value: &Internal) -> bool {
    column.input() == InputField::Json
        && matches!(value, Internal::None | Internal::Json(PyJson::None))
}

/// `values` without those at `candidates` whose `unchanged` answer is true.
pub fn keep_changed<C>(values: &mut Vec<(&C, Internal)>, candidates: &[usize], unchanged: &[bool]) {
    let mut at = 0;
    values.retain(|_| {
        let drop = candidates
            .iter()
            .position(|&g| g == at)
            .is_some_and(|k| unchanged.get(k) == Some(&true));
        at += 1;
        !drop
    });
}

/// Each given value through its column's serializer field, and (`complete`) every required
/// column given; every field error at once.
pub fn validate<'m, T>(
    model: &'m T,
    given: &[(&'m T::Column, &PyJson)],
    complete: bool,
) -> Result<Vec<(&'m T::Column, Internal)>, EngineError>
where
    T: Table,
    T::Column: BodyColumn,
{
    let mut missing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if complete {
        for c in model.columns().iter().filter(|c| c.required()) {
            if !given.iter().any(|(g, _)| g.name() == c.name()) {
                missing
                    .entry(c.name().to_owned())
                    .or_default()
                    .push("this field is required".to_owned());
            }
        }
    }
    read_values(given, |c| (c.name(), c.input()), missing)
}
/// Parses an `application/x-www-form-urlencoded` body as the engine reads a form, when every
/// value is UTF-8 text (a one-value key is a string, a repeated key a list of strings; see
/// [`form::read`] for the rest): `None` when the engine reads a value as bytes, or no field
/// at all. Writes read their bodies through [`incoming`], which says what the engine then does.
pub fn parse_form(body: &[u8]) -> Option<PyJson> {
    let fields = form::read(body).ok()?;
    let mut items = Vec::with_capacity(fields.len());
    for (key, values) in fields {
        let mut texts = values
            .into_iter()
            .map(String::from_utf8)
            .collect::<Result<Vec<String>, _>>()
            .ok()?;
        let value = if texts.len() == 1 {
            PyJson::Str(texts.remove(0))
        } else {
            PyJson::List(texts.into_iter().map(PyJson::Str).collect())
        };
        items.push((key, value));
    }
    Some(PyJson::Dict(items))
}
