//! A list's selection (filters and search) and order as the data engine reads them, whatever
//! the database: which keys are filters, which lookups each field has, how each value is read
//! (Python's readings), the `_search` text and the `_order_by` terms. The flow writes the
//! conditions (`flow/filter.rs`, each database's `Dialect`) from what [`walk_filters`] hands
//! it; values are always bound, never spliced.
//!
//! How the engine reads a request (jet-bridge's `FilterClass.filter_queryset`):
//!
//! - Every field has the lookups of its family ([`FilterFamily`]), each also as
//!   `exclude__{field}__{lookup}`. `{field}__exact` wins over the bare `{field}`.
//! - A key given once is one value, a repeated key a list. A single empty value means no
//!   filter. A lookup other than `in` takes a list's first value; `in` takes a list as it is and
//!   splits a single value on commas.
//! - A key naming no field, or a lookup the field's family lacks, is silently ignored by the
//!   engine. The emulator refuses it with a `400` naming the filter `[decision: stricter]`,
//!   unless the selection is lenient.

use std::borrow::Cow;

use crate::body_filters::BodyRead;
use crate::error::EngineError;
use crate::field_input::{
    FALSE_WORDS, InputDateTime, Internal, TRUE_WORDS, float_field, parse_input_datetime,
};
use crate::list::Selection;
use crate::python::floats::py_float_repr;
use crate::python::json::parse_py_json;
use crate::python::numbers::py_strip;

use crate::time_zone::TZ_PARAM;
use crate::types::FilterFamily;

// The records wire grammar (reserved parameters, page sizes, filter keys, lookups) is
// svc-model's, so the SDK and the emulator read it alike.
pub use svc_model::records::wire::{DEFAULT_PER_PAGE, Lookup, MAX_PER_PAGE};
use svc_model::records::wire::{
    EXCLUDE_PREFIX, FilterKeyError, NO_PAGINATION_PARAM, ORDER_BY_PARAM, PAGE_PARAM,
    PER_PAGE_PARAM, SEARCH_PARAM, is_filter_param, parse_filter_key,
};

/// The lookups of a filter family, in the engine's order.
pub fn family_lookups(family: FilterFamily) -> &'static [Lookup] {
    use Lookup::*;
    match family {
        FilterFamily::Number | FilterFamily::Date | FilterFamily::DateTime => {
            &[Exact, Gt, Gte, Lt, Lte, IContains, In, IsNull, IsEmpty]
        }
        FilterFamily::Text => &[
            Exact,
            IContains,
            In,
            IStartsWith,
            IEndsWith,
            IsNull,
            IsEmpty,
        ],
        FilterFamily::Boolean => &[Exact, In, IsNull, IsEmpty],
        FilterFamily::Json => &[Exact, In, JsonIContains, IsNull, IsEmpty],
    }
}

/// A family as messages name it: `number`, `date`, `text`, ...
pub fn family_name(family: FilterFamily) -> &'static str {
    match family {
        FilterFamily::Number => "number",
        FilterFamily::Date => "date",
        FilterFamily::DateTime => "date-time",
        FilterFamily::Boolean => "boolean",
        FilterFamily::Text => "text",
        FilterFamily::Json => "JSON",
    }
}

/// A filter's value as the engine's `get_argument_safe` reads it (or its `request.data.get`,
/// as text: `crate::body_filters`).
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    /// The key was given once.
    One(&'a str),
    /// The key was repeated (or the body gave a list, or a value that is not text): every
    /// value, in order.
    Many(&'a [Cow<'a, str>]),
}

impl<'a> Arg<'a> {
    /// `safe_not_array`: a list's first value.
    pub fn first(self) -> &'a str {
        match self {
            Arg::One(v) => v,
            Arg::Many(vs) => vs.first().map_or("", |v| v.as_ref()),
        }
    }

    /// `safe_array`: a list as it is, a single value split on commas.
    pub fn items(self) -> Vec<&'a str> {
        match self {
            Arg::One(v) => v.split(',').collect(),
            Arg::Many(vs) => vs.iter().map(|v| v.as_ref()).collect(),
        }
    }
}

/// A filter the engine would misread (ignore it, or read any text as true): strict mode's
/// refusal by design, naming the filter (`"error_decision": "stricter"`).
fn misread(key: &str, message: String) -> EngineError {
    EngineError::stricter(key, message)
}

/// A value the engine's filter field refuses too: `400` with the message under
/// `non_field_errors`, where the engine's serializer puts it (`{"non_field_errors": ["not a
/// valid float"]}`).
fn refused_as_the_engine_refuses(message: String) -> EngineError {
    crate::body::non_field(message)
}

/// A number as the engine's `FloatField` reads it: trimmed, `true`/`false` in any case as 1
/// and 0, else Python's `float()` (decimal notation, `_` between digits, `inf`, `nan`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PyNumber {
    /// `true`/`false` read as 1/0 (Python ints).
    Int(i64),
    /// A Python float.
    Float(f64),
}

impl PyNumber {
    /// `'{}'.format(value)`.
    pub fn text(self) -> String {
        match self {
            PyNumber::Int(i) => i.to_string(),
            PyNumber::Float(f) => py_float_repr(f),
        }
    }
}

/// The engine's `FloatField.to_internal_value` (shared with writes, [`float_field`]).
pub fn py_number(raw: &str) -> Option<PyNumber> {
    match float_field(raw)? {
        Internal::Int(i) => i.parse().ok().map(PyNumber::Int),
        Internal::Float(f) => Some(PyNumber::Float(f)),
        _ => None,
    }
}

/// The engine's `BooleanField`: its word sets, else Python's truthiness of the text.
/// `Err` carries the truthiness when the text is in neither set (the engine's silent reading).
pub fn py_bool(raw: &str) -> Result<bool, bool> {
    if TRUE_WORDS.contains(&raw) {
        Ok(true)
    } else if FALSE_WORDS.contains(&raw) {
        Ok(false)
    } else {
        Err(!raw.is_empty())
    }
}

/// The engine's `dateparser` reads `YYYY-MM` as that month on today's day of the month (the
/// last day when the month is shorter). Only lenient mode follows it: the answer changes
/// with the date `[decision: stricter]`.
pub fn month_of_this_day(raw: &str) -> Option<InputDateTime> {
    let b = raw.trim().as_bytes();
    if b.len() != 7 || b[4] != b'-' || !b[..4].iter().chain(&b[5..]).all(u8::is_ascii_digit) {
        return None;
    }
    let year: u32 = std::str::from_utf8(&b[..4]).ok()?.parse().ok()?;
    let month: u32 = std::str::from_utf8(&b[5..]).ok()?.parse().ok()?;
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs();
    let today = crate::types::Date::from_days((secs / 86_400) as i64).day;
    let day = (1..=today).rev().find(|&d| {
        crate::types::parse_date(format!("{year:04}-{month:02}-{d:02}").as_bytes()).is_some()
    })?;
    parse_input_datetime(&format!("{year:04}-{month:02}-{day:02}"))
}

/// How the engine's filter fields read a filter's value, whatever the database: the
/// reading, or the `400` (or, where the engine fails, the `500` of lenient mode) naming the
/// filter's key.
#[derive(Debug)]
pub struct ValueReader<'a> {
    /// The filter's key, as the request gave it (the messages name it).
    pub key: &'a str,
    /// The family of the column it filters.
    pub family: FilterFamily,
    /// Lenient mode: the engine's own `500` where the emulator would refuse by design.
    pub lenient: bool,
}

impl ValueReader<'_> {
    /// A number (`FloatField`).
    pub fn number(&self, raw: &str) -> Result<PyNumber, EngineError> {
        py_number(raw).ok_or_else(|| {
            refused_as_the_engine_refuses(format!(
                "Invalid value {raw:?} for filter {:?}: not a valid float (number fields take \
                 numbers such as 3, -2.5 or 1e3).",
                self.key
            ))
        })
    }

    /// A boolean (`BooleanField`); text outside its word sets is refused in strict mode.
    pub fn boolean(&self, raw: &str) -> Result<bool, EngineError> {
        match py_bool(raw) {
            Ok(b) => Ok(b),
            // Empty text is false to Python too: only other text is a misreading.
            Err(truthy) if self.lenient || !truthy => Ok(truthy),
            Err(_) => Err(misread(
                self.key,
                format!(
                    "Invalid value {raw:?} for filter {:?}: expected a boolean word (true/false, \
                     1/0, yes/no, on/off, t/f, y/n); the data engine would read any other text \
                     as true.",
                    self.key
                ),
            )),
        }
    }

    /// The text a date column is compared with (`exact`, `gt`, `gte`, `lt`, `lte`): the
    /// engine's `safe_date` reads the value with dateparser and writes it back with
    /// `strftime('%Y-%m-%d')`, whose year is not padded (`0099-12-31` becomes `99-12-31`), and
    /// the date field then passes that text on as text. Each database reads the text its own
    /// way: SQLite compares it as text, PostgreSQL and MySQL read it as a date (`99-12-31` is
    /// 1999-12-31 to MySQL, out of range to PostgreSQL, which fails).
    pub fn date_text(&self, raw: &str) -> Result<String, EngineError> {
        Ok(self.datetime(raw)?.date.strftime_ymd())
    }

    /// A date-time (`DateTimeField`, dateparser's common forms).
    pub fn datetime(&self, raw: &str) -> Result<InputDateTime, EngineError> {
        if self.lenient
            && let Some(month) = month_of_this_day(raw)
        {
            return Ok(month);
        }
        parse_input_datetime(py_strip(raw)).ok_or_else(|| {
            let message = format!(
                "Invalid value {raw:?} for filter {:?}: expected a date YYYY-MM-DD or a date-time \
                 YYYY-MM-DD[THH:MM[:SS[.ffffff]]][Z|±HH:MM].",
                self.key
            );
            match self.family {
                // The engine's date filter calls `.strftime` on dateparser's `None`: a 500.
                FilterFamily::Date => EngineError::engine_fails(self.lenient, self.key, message),
                // dateparser reads more forms than these (`5 March 2024 10:11`, `yesterday`):
                // a refusal by design, since the engine may answer 200 (it refuses, 400, what
                // dateparser cannot read either).
                _ => refused_as_the_engine_refuses(format!(
                    "{message} The data engine's date parser also reads other forms (5 March \
                     2024 10:11); the emulator takes these only."
                ))
                .by_design(),
            }
        })
    }
}

/// The values given for `key`, in order.
fn values_of<'a>(filters: &'a [(String, String)], key: &str) -> Vec<&'a str> {
    filters
        .iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .collect()
}

/// What the engine's `get_filter_value` reads for `key`: the body's value (its JSON text)
/// when the body has one, else the query's values (none when absent).
enum Given<'a> {
    Body(&'a str),
    Query(Vec<&'a str>),
}

impl<'a> Given<'a> {
    fn of(selection: &'a Selection, key: &str) -> Given<'a> {
        match selection.body.iter().find(|(k, _)| k == key) {
            Some((_, json)) => Given::Body(json),
            None => Given::Query(values_of(&selection.filters, key)),
        }
    }

    /// Nothing given (`None` to the engine, which then reads the bare name for `exact`).
    fn absent(&self) -> bool {
        matches!(self, Given::Query(values) if values.is_empty())
    }
}

/// Why a filter key the engine would ignore is refused (strict mode).
fn ignored_filter(model: &str, fields: &[FilterField<'_>], key: &str) -> EngineError {
    let field = |name: &str| fields.iter().find(|f| f.name == name);
    let family = |name: &str| field(name).map_or(FilterFamily::Text, |f| f.family);
    // `the number field "total"`, and every lookup its family takes.
    let field_and_family = |name: &str| format!("{} field {name:?}", family_name(family(name)));
    let lookups_of = |name: &str| {
        let names: Vec<&str> = family_lookups(family(name))
            .iter()
            .map(|l| l.as_str())
            .collect();
        names.join(", ")
    };
    let message = match parse_filter_key(key, |name| field(name).is_some()) {
        Ok(parsed) => format!(
            "Lookup {:?} is not available for the {} (the data engine would ignore filter \
             {key:?}); use one of: {}.",
            parsed.lookup.as_str(),
            field_and_family(parsed.field),
            lookups_of(parsed.field)
        ),
        Err(FilterKeyError::UnknownLookup {
            lookup, field: f, ..
        }) => format!(
            "Unknown lookup {lookup:?} in filter {key:?}; the {} takes: {}.",
            field_and_family(&f),
            lookups_of(&f)
        ),
        Err(FilterKeyError::UnknownField { field, .. }) => format!(
            "Unknown field {field:?} in filter {key:?} (the data engine would ignore it); \
             model {:?} has: {}.",
            model,
            fields.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
        ),
        Err(other) => format!("Invalid filter {key:?}: {other}."),
    };
    misread(key, message)
}

/// Whether filter key `key` may name field `name`: `name`, `name__...`, `exclude__name` or
/// `exclude__name__...` (a superset of the keys [`walk_filters`] looks up for the field).
fn names_field(key: &str, name: &str) -> bool {
    let direct = |k: &str| {
        k.strip_prefix(name)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with("__"))
    };
    direct(key) || key.strip_prefix(EXCLUDE_PREFIX).is_some_and(direct)
}

/// A field as the filter grammar sees it: its name and its filter family.
#[derive(Debug, Clone, Copy)]
pub struct FilterField<'a> {
    /// The field's name.
    pub name: &'a str,
    /// Its filter family.
    pub family: FilterFamily,
    /// A binary column (SQLAlchemy's `LargeBinary` and its kin), whose filter field takes text
    /// only (`crate::body_filters`); each database's dialect knows which columns are.
    pub binary: bool,
}

/// One filter of a request, as the engine reads it: a field's lookup, its values as given (one
/// value, or a repeated key's every value), plain or negated (`exclude__`). How its values are
/// read and written as SQL is the database's (`flow/filter.rs`, over each one's `Dialect`).
#[derive(Debug, Clone)]
pub struct Condition<'a> {
    /// The field's index in the model's filter fields.
    pub field: usize,
    /// The query key it was read from (an error names it).
    pub key: String,
    /// The lookup.
    pub lookup: Lookup,
    /// Its values, in order (at least one): the query's, or the texts the body's value reads
    /// as (`crate::body_filters`).
    pub values: Vec<Cow<'a, str>>,
    /// The values are a list even when there is one: a body's list or value that is not
    /// text, which `in` takes as it is (no comma splitting).
    pub list: bool,
    /// An `exclude__` filter: the condition is negated.
    pub exclude: bool,
}

impl Condition<'_> {
    /// The values as the engine's `get_argument_safe` gives them: one, or the list.
    pub fn arg(&self) -> Arg<'_> {
        match (self.values.as_slice(), self.list) {
            ([one], false) => Arg::One(one),
            (many, _) => Arg::Many(many),
        }
    }
}

/// Reads a selection's filters as the engine does, whatever the database: for every field in
/// order, every lookup of its family, plain then `exclude__`. Beside them, `Err` where strict
/// mode refuses a filter the engine would ignore: the engine reads its columns' filters
/// first, so the caller reports it only once their values have been read.
pub fn walk_filters<'a>(
    model: &str,
    fields: &[FilterField<'_>],
    selection: &'a Selection,
) -> (Vec<Condition<'a>>, Result<(), EngineError>) {
    let filters = &selection.filters;
    let body = &selection.body;
    let mut conds = Vec::new();
    let mut used = vec![false; filters.len()];
    let mut body_used = vec![false; body.len()];
    let mut mark = |key: &str| {
        for (i, (k, _)) in filters.iter().enumerate() {
            if k == key {
                used[i] = true;
            }
        }
        for (i, (k, _)) in body.iter().enumerate() {
            if k == key {
                body_used[i] = true;
            }
        }
    };
    // The first body value the engine fails on or misreads (the engine reads the columns'
    // filters first, so this shows after their values' own errors).
    let mut refused = None;
    for (index, field) in fields.iter().enumerate() {
        // A field no filter key can name has no values to look up: skipping it changes
        // nothing but the cost (every key of every lookup would be formatted and searched).
        if !filters
            .iter()
            .chain(body)
            .any(|(k, _)| names_field(k, field.name))
        {
            continue;
        }
        for &lookup in family_lookups(field.family) {
            for exclude in [false, true] {
                let prefix = if exclude { EXCLUDE_PREFIX } else { "" };
                let mut key = format!("{prefix}{}__{}", field.name, lookup.as_str());
                let mut given = Given::of(selection, &key);
                mark(&key);
                if lookup == Lookup::Exact {
                    let bare = format!("{prefix}{}", field.name);
                    if given.absent() {
                        given = Given::of(selection, &bare);
                        key = bare.clone();
                    }
                    mark(&bare);
                }
                let (values, list, lookup) = match given {
                    Given::Query(values) => {
                        if matches!(values.as_slice(), [] | [""]) {
                            continue;
                        }
                        let list = values.len() > 1;
                        (
                            values.into_iter().map(Cow::Borrowed).collect(),
                            list,
                            lookup,
                        )
                    }
                    Given::Body(json) => {
                        let target = crate::body_filters::Target {
                            key: &key,
                            family: field.family,
                            binary: field.binary,
                            lookup,
                            exclude,
                            lenient: selection.lenient,
                        };
                        let read = parse_py_json(json)
                            .map_err(EngineError::invalid)
                            .and_then(|value| target.read(&value));
                        match read {
                            Ok(BodyRead::Empty) => continue,
                            Ok(BodyRead::Values { texts, list }) => (texts, list, lookup),
                            // `exact` of `[null]`: the column `IS NULL`, as `isnull=true`.
                            Ok(BodyRead::IsNull) => {
                                (vec![Cow::Borrowed("true")], true, Lookup::IsNull)
                            }
                            Err(e) => {
                                refused.get_or_insert(e);
                                continue;
                            }
                        }
                    }
                };
                conds.push(Condition {
                    field: index,
                    key,
                    lookup,
                    values,
                    list,
                    exclude,
                });
            }
        }
    }
    if let Some(e) = refused {
        return (conds, Err(e));
    }
    let mut ignored = Ok(());
    if !selection.lenient {
        let has = |name: &str| fields.iter().any(|f| f.name == name);
        let unused = filters
            .iter()
            .zip(&used)
            // `tz` is read by each backend (svc-engine/src/time_zone.rs), and `_relation` by the
            // selection's conditions.
            .find(|((key, _), used)| !**used && key != TZ_PARAM && is_filter_param(key, has))
            .map(|((key, _), _)| key);
        if let Some(key) = unused {
            ignored = Err(ignored_filter(model, fields, key));
        } else if let Some(((key, _), _)) = body
            .iter()
            .zip(&body_used)
            .find(|((key, _), used)| !**used && unread_in_body(key, has))
        {
            ignored = Err(if is_filter_param(key, has) {
                ignored_filter(model, fields, key)
            } else {
                misread(
                    key,
                    format!(
                        "{key} in the body: the data engine reads page, _per_page and \
                         _no_pagination from the query string only, and would ignore it; send \
                         it as a query parameter."
                    ),
                )
            });
        }
    }
    (conds, ignored)
}

/// Whether the engine ignores the body's member `key` where strict mode refuses it: a filter
/// on a field or lookup the model lacks (as in the query; `tz` too, which the engine reads
/// from the query only), or a paging parameter, which the engine reads from the query only.
fn unread_in_body(key: &str, has: impl Fn(&str) -> bool) -> bool {
    [PAGE_PARAM, PER_PAGE_PARAM, NO_PAGINATION_PARAM].contains(&key) || is_filter_param(key, has)
}

/// The one `_search` text of a selection: `None` when there is none or it is empty; a repeated
/// `_search` is where the engine fails.
pub fn search_text(selection: &Selection) -> Result<Option<&str>, EngineError> {
    // A body's `_search` that is not text: the engine binds it as it is (PostgreSQL fails, a
    // list fails everywhere, SQLite compares a number's text).
    if let Some(json) = crate::declared::body_value(selection, SEARCH_PARAM) {
        return Err(crate::body_filters::declared_not_text(
            SEARCH_PARAM,
            json,
            selection.lenient,
        ));
    }
    match selection.search.as_slice() {
        [] => Ok(None),
        [text] if text.is_empty() => Ok(None),
        [text] => Ok(Some(text)),
        _ => Err(EngineError::engine_fails(
            selection.lenient,
            SEARCH_PARAM,
            "Give _search once: the data engine fails (500) on a repeated _search.".to_owned(),
        )),
    }
}

/// Whether `_order_by` makes the engine list nothing: a value shorter than two characters.
pub fn order_selects_nothing(raw: &[String]) -> bool {
    matches!(raw, [one] if !one.is_empty() && one.chars().count() < 2)
}

/// The terms of `_order_by` as the engine reads them, whatever the database: `(field index,
/// descending)` of each named field, then the key (`pk`) descending unless named. `index_of`
/// finds a field by name.
pub fn order_terms(
    raw: &[String],
    lenient: bool,
    pk: usize,
    index_of: impl Fn(&str) -> Option<usize>,
) -> Result<Vec<(usize, bool)>, EngineError> {
    let mut terms = Vec::new();
    let value = match raw {
        [] => "",
        [one] => one.as_str(),
        _ => {
            return Err(EngineError::engine_fails(
                lenient,
                ORDER_BY_PARAM,
                "Give _order_by once, as a comma-separated list (a,-b): the data engine fails \
                 (500) on a repeated _order_by."
                    .to_owned(),
            ));
        }
    };
    if !value.is_empty() && value.chars().count() >= 2 {
        for part in value.split(',') {
            let (desc, name) = match part.strip_prefix('-') {
                Some(n) => (true, n),
                None => (false, part),
            };
            let index = index_of(name).ok_or_else(|| {
                EngineError::engine_fails(
                    lenient,
                    ORDER_BY_PARAM,
                    format!(
                        "Unknown field {name:?} in _order_by {value:?} (the data engine fails \
                         with a 500); use field names, comma-separated, with - for descending."
                    ),
                )
            })?;
            terms.push((index, desc));
        }
    }
    if !terms.iter().any(|&(i, _)| i == pk) {
        terms.push((pk, true));
    }
    Ok(terms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_python_floats() {
        assert_eq!(py_number(" 3 "), Some(PyNumber::Float(3.0)));
        assert_eq!(py_number("TRUE"), Some(PyNumber::Int(1)));
        assert_eq!(py_number("false"), Some(PyNumber::Int(0)));
        assert_eq!(py_number("1e2"), Some(PyNumber::Float(100.0)));
        assert_eq!(py_number("-0"), Some(PyNumber::Float(-0.0)));
        assert_eq!(py_number("1_000.5"), Some(PyNumber::Float(1000.5)));
        assert_eq!(py_number(".5"), Some(PyNumber::Float(0.5)));
        assert_eq!(py_number("5."), Some(PyNumber::Float(5.0)));
        assert_eq!(
            py_number("-Infinity"),
            Some(PyNumber::Float(f64::NEG_INFINITY))
        );
        for bad in [
            "abc", "", "1__0", "_1", "1_", "--1", "1,5", "0x10", "e5", ".",
        ] {
            assert_eq!(py_number(bad), None, "{bad:?}");
        }
        assert_eq!(PyNumber::Float(57.0).text(), "57.0");
        assert_eq!(PyNumber::Int(1).text(), "1");
    }

    /// A lookup the engine would ignore is refused in one sentence that lists every lookup
    /// the field takes, whether the lookup is none at all or not one of its field's.
    #[test]
    fn an_ignored_lookup_lists_every_lookup_of_its_field() {
        let fields = [
            FilterField {
                name: "total",
                family: FilterFamily::Number,
                binary: false,
            },
            FilterField {
                name: "name",
                family: FilterFamily::Text,
                binary: false,
            },
        ];
        let message = |key: &str| ignored_filter("orders", &fields, key).to_string();
        assert_eq!(
            message("total__foo"),
            "Unknown lookup \"foo\" in filter \"total__foo\"; the number field \"total\" \
             takes: exact, gt, gte, lt, lte, icontains, in, isnull, isempty."
        );
        assert_eq!(
            message("name__gt"),
            "Lookup \"gt\" is not available for the text field \"name\" (the data engine \
             would ignore filter \"name__gt\"); use one of: exact, icontains, in, istartswith, \
             iendswith, isnull, isempty."
        );
    }

    #[test]
    fn a_filter_key_names_its_field_and_the_fields_it_could_be() {
        for (key, name, yes) in [
            ("total", "total", true),
            ("total__gte", "total", true),
            ("exclude__total", "total", true),
            ("exclude__total__in", "total", true),
            ("totals", "total", false),
            ("total_gte", "total", false),
            ("exclude__totals", "total", false),
            ("name__exact", "total", false),
            // Names with `__` in them, and a field whose name starts with `exclude__`.
            ("a__b__exact", "a__b", true),
            ("a__b__exact", "a", true),
            ("exclude__x", "exclude__x", true),
            ("exclude__x__isnull", "exclude__x", true),
            ("exclude__exclude__x", "exclude__x", true),
        ] {
            assert_eq!(names_field(key, name), yes, "{key:?} names {name:?}");
        }
    }

    #[test]
    fn booleans_read_as_the_engine_reads_them() {
        assert_eq!(py_bool("yes"), Ok(true));
        assert_eq!(py_bool("OFF"), Ok(false));
        assert_eq!(py_bool("0"), Ok(false));
        // Outside the word sets: Python's truthiness, which strict mode refuses.
        assert_eq!(py_bool("No"), Err(true));
        assert_eq!(py_bool(""), Err(false));
    }

    #[test]
    fn days_map_to_civil_dates() {
        let civil = |days| {
            let d = crate::types::Date::from_days(days);
            (i64::from(d.year), d.month, d.day)
        };
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(19_783), (2024, 3, 1));
        assert_eq!(civil(-1), (1969, 12, 31));
        let d = month_of_this_day("2024-02").unwrap();
        assert!(d.date.iso().starts_with("2024-02-"));
        assert!(month_of_this_day("2024-13").is_none());
    }

    #[test]
    fn filter_date_times_read_the_iso_forms() {
        let d = parse_input_datetime("2024-03-15").unwrap();
        assert_eq!(d.naive_text(), "2024-03-15 00:00:00.000000");
        let d = parse_input_datetime("2024-03-15T10:00:00.25Z").unwrap();
        assert_eq!(d.naive_text(), "2024-03-15 10:00:00.250000");
        assert_eq!(d.python_str(), "2024-03-15 10:00:00.250000+00:00");
        let d = parse_input_datetime("2024-03-15 10:00").unwrap();
        assert_eq!(d.python_str(), "2024-03-15 10:00:00");
        for bad in [
            "notadate",
            "2024-03",
            "2024-02-30",
            "2024-03-15T25:00",
            "2024-03-15x",
        ] {
            assert!(parse_input_datetime(bad).is_none(), "{bad:?}");
        }
    }
}
