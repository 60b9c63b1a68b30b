//! Filters read from a request's body, as the engine reads them on every database.
//!
//! The engine's filter machinery (jet-bridge 1.12.13, `FilterClass.filter_queryset`) reads each
//! filter's name with `get_filter_value`: when the method its view sees is exactly `POST` (the
//! request's own, or the value of `X-HTTP-Method-Override`), from the body first
//! (`request.data.get(name)`: a JSON object's member of any JSON type, or a form's value; a
//! `null` member is no value), and from the query only when the body has none. That is
//! `POST .../get_records` (a list), and any view given `X-HTTP-Method-Override: POST`. Only
//! filters are read there: `page`, `_per_page`, `_no_pagination`, `tz` and the aggregate's
//! parameters are read from the query alone (`request.get_argument`).
//!
//! A body value need not be text. Each filter then reads it as its field does
//! (`jet_bridge_base/filters/filter.py`):
//!
//! - `[]`, `{}` and `""` are no filter (`EMPTY_VALUES`); `0` and `false` are values.
//! - A list is the engine's list (as a repeated query key): `in` takes its items as they are
//!   (never split on commas), every other lookup its first item. Any other value that is not
//!   text is a list of one for `in` (`safe_array`).
//! - Most fields read Python's `str()` of the value: `5` is `"5"`, `1.5` is `"1.5"`, `true` is
//!   `"True"` (a number field reads it as 1), a list or an object their `repr`. The emulator
//!   hands that text to the filter, which reads it as it reads a query's.
//! - A boolean field (a boolean column's `exact` and `in`, every column's `isnull` and
//!   `isempty`) tests set membership: `true`, `1` and `1.0` are true, `false`, `0` and `0.0`
//!   false, other numbers true by Python's truth value (NaN too, which strict mode refuses as
//!   a misreading); a list or an object inside fails (500: unhashable).
//! - A JSON column's `exact` and `in` keep a value that is not text as it is: the emulator
//!   hands its JSON text, which the JSON field reads back to the same value.
//! - A date column's `exact`, `gt`, `gte`, `lt` and `lte` read text with dateparser, and pass
//!   anything else on unread, as Python's `str()`, to the database, which compares it its own
//!   way (SQLite as text, PostgreSQL as a date or not at all): refused as a misreading.
//! - A binary column's `exact` and `in` unhexlify the value, which fails (500) on anything
//!   but text.
//! - `null` inside a list (`[null]`) skips the field: `exact` compares with `None`, which
//!   SQLAlchemy writes `IS NULL` (served so; a JSON column's `exact` looks for the text
//!   `None`, as `null` as text does), `gt`, `gte`, `lt` and `lte` fail (500), `isnull` and
//!   `isempty` read it as false, a boolean's `in` as false, a JSON column's `in` as JSON's
//!   `null`; `icontains` and its kin look for the text `None`, and any other `in` compares
//!   with NULL, which matches no row (and its negation none either): both refused as
//!   misreadings [decision: stricter], which lenient mode reads as the engine where the
//!   emulator can write it (the list without its nulls, the text `None` of a text or JSON
//!   column).

use std::borrow::Cow;

use crate::EngineError;
use crate::Lookup;
use crate::python::json::{PyJson, py_json_dumps};
use crate::python::text::py_text;
use crate::types::FilterFamily;

/// The header whose value replaces a request's method in the engine's views
/// (`BaseAPIView.before_dispatch`), after the route chose the view: any text, as it is.
pub const METHOD_OVERRIDE_HEADER: &str = "x-http-method-override";

/// The same header as Tornado also reads it, its `-` written `_` (its names are upper-cased
/// and `-` replaced by `_` before they are looked up).
pub const METHOD_OVERRIDE_HEADER_UNDERSCORED: &str = "x_http_method_override";

/// The method the engine's views see: `method_override` (the override header's value, any
/// text: `post` and `FOO` are methods too, of no effect) when the request has one, else the
/// request's own method.
pub fn method_seen<'a>(method: &'a str, method_override: Option<&'a str>) -> &'a str {
    method_override.unwrap_or(method)
}

/// Whether the engine reads the request's filters from its body: when the method its views
/// see is exactly `POST` (`filter_class.py`'s `request.method == 'POST'`).
pub fn reads_body_filters(method_seen: &str) -> bool {
    method_seen == "POST"
}

/// Whether the engine skips its credential check (`before_dispatch_permissions_check`): when
/// the method its views see is exactly `OPTIONS`.
pub fn skips_credentials(method_seen: &str) -> bool {
    method_seen == "OPTIONS"
}

/// The filter values of a request's body: each member whose value is not `null`, with
/// Python's JSON text of its value, in the body's order. A body that is not an object (a JSON
/// array, text, `null`) makes the engine fail (500): its `request.data.get` is a dict's.
pub fn body_filters(body: &PyJson, lenient: bool) -> Result<Vec<(String, String)>, EngineError> {
    match body {
        PyJson::Dict(items) => Ok(items
            .iter()
            .filter(|(_, v)| *v != PyJson::None)
            .map(|(k, v)| (k.clone(), py_json_dumps(v)))
            .collect()),
        other => Err(EngineError::engine_fails(
            lenient,
            "non_field_errors",
            format!(
                "The filters of a POST are read from its body, which must be a JSON object (or \
                 a form) of filter values; the data engine fails (500) on {}.",
                other.kind_name()
            ),
        )),
    }
}

/// How a body value reads for one filter.
#[derive(Debug, PartialEq)]
pub enum BodyRead {
    /// No filter (`[]`, `{}`, `""`).
    Empty,
    /// The texts the filter reads, as a query's values would be; `list` when they are a list
    /// (never split on commas, and one empty text is a value).
    Values {
        /// The texts.
        texts: Vec<Cow<'static, str>>,
        /// They came as a list.
        list: bool,
    },
    /// `exact` with `null` first: the column `IS NULL`.
    IsNull,
}

/// The column a body value filters, as its reading needs it.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The filter's key (the messages name it).
    pub key: &'a str,
    /// The column's family.
    pub family: FilterFamily,
    /// A binary column.
    pub binary: bool,
    /// The lookup.
    pub lookup: Lookup,
    /// An `exclude__` filter.
    pub exclude: bool,
    /// Lenient mode: the engine's own `500` where strict mode refuses by design, and its
    /// reading of a misread value where the emulator can give it.
    pub lenient: bool,
}

/// How a field reads a value that is not text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Python's `str()` of it (`CharField`, `FloatField`, `DateTimeField`).
    Text,
    /// `BooleanField`: set membership, else Python's truth value.
    Boolean,
    /// `JSONField`: the value as it is.
    Json,
    /// A date's comparison: passed on unread.
    DateCompare,
    /// `BinaryField`: `unhexlify`, which takes text only.
    Binary,
}

impl Target<'_> {
    fn reading(&self) -> Reading {
        use Lookup::*;
        match (self.lookup, self.family) {
            (IsNull | IsEmpty, _) => Reading::Boolean,
            (Exact | In, _) if self.binary => Reading::Binary,
            (Exact | In, FilterFamily::Boolean) => Reading::Boolean,
            (Exact | In, FilterFamily::Json) => Reading::Json,
            (Exact | Gt | Gte | Lt | Lte, FilterFamily::Date) => Reading::DateCompare,
            _ => Reading::Text,
        }
    }

    fn fails(&self, message: String) -> EngineError {
        EngineError::engine_fails(self.lenient, self.key, message)
    }

    fn misread(&self, message: String) -> EngineError {
        EngineError::stricter(self.key, message)
    }

    /// The text the field reads for `value` (an item of a list, or the value itself).
    fn text(&self, value: &PyJson) -> Result<Cow<'static, str>, EngineError> {
        let key = self.key;
        if let PyJson::Str(s) = value {
            return Ok(Cow::Owned(s.clone()));
        }
        let kind = value.kind_name();
        match self.reading() {
            Reading::Text => Ok(Cow::Owned(py_text(value))),
            Reading::Json => Ok(Cow::Owned(py_json_dumps(value))),
            Reading::Boolean => match value {
                PyJson::Bool(b) => Ok(Cow::Borrowed(if *b { "true" } else { "false" })),
                PyJson::Int(i) => Ok(Cow::Borrowed(if i == "0" { "0" } else { "1" })),
                PyJson::Float(f) if *f == 0.0 => Ok(Cow::Borrowed("0")),
                PyJson::Float(f) if f.is_nan() && !self.lenient => Err(self.misread(format!(
                    "Invalid value NaN for filter {key:?}: the data engine reads it as true \
                     (Python's truth value); give true or false."
                ))),
                PyJson::Float(_) => Ok(Cow::Borrowed("1")),
                // `None` is handled by the callers; lists and objects are unhashable.
                _ => Err(self.fails(format!(
                    "Invalid value for filter {key:?}: {kind} where a boolean is read, which the \
                     data engine fails on (500); give true or false."
                ))),
            },
            Reading::DateCompare => Err(self.misread(format!(
                "Invalid value for filter {key:?}: {kind} for a date, which the data engine \
                 passes to the database unread (SQLite compares it as text, PostgreSQL reads \
                 it as a date or fails); give the date as text, YYYY-MM-DD."
            ))),
            Reading::Binary => Err(self.fails(format!(
                "Invalid value for filter {key:?}: {kind} for a binary field, which the data \
                 engine fails on (500: it unhexlifies text only)."
            ))),
        }
    }

    /// How the filter reads `value` (a body member's value, not `null`).
    pub fn read(&self, value: &PyJson) -> Result<BodyRead, EngineError> {
        let key = self.key;
        let empty = match value {
            PyJson::Str(s) => s.is_empty(),
            PyJson::List(items) => items.is_empty(),
            PyJson::Dict(items) => items.is_empty(),
            _ => false,
        };
        if empty {
            return Ok(BodyRead::Empty);
        }
        if self.lookup == Lookup::In {
            let items: &[PyJson] = match value {
                PyJson::Str(s) => {
                    // One text: split on commas, as a query's single value.
                    return Ok(BodyRead::Values {
                        texts: vec![Cow::Owned(s.clone())],
                        list: false,
                    });
                }
                PyJson::List(items) => items,
                other => std::slice::from_ref(other),
            };
            let mut texts = Vec::with_capacity(items.len());
            for item in items {
                texts.push(match (item, self.reading()) {
                    (PyJson::None, Reading::Boolean) => Cow::Borrowed("false"),
                    (PyJson::None, Reading::Json) => Cow::Borrowed("null"),
                    // Lenient mode: `col IN (NULL, ...)` selects what the list without NULL
                    // selects (and none of it selects nothing); its negation selects nothing,
                    // which the emulator does not write.
                    (PyJson::None, _) if self.lenient && !self.exclude => continue,
                    (PyJson::None, _) => {
                        return Err(self.misread(format!(
                            "Invalid value for filter {key:?}: null in the list, which the data \
                             engine compares with SQL's NULL: it matches no row (and its \
                             negation none either). Filter nulls with {}__isnull.",
                            key.trim_end_matches("__in")
                        )));
                    }
                    (item, _) => self.text(item)?,
                });
            }
            return Ok(BodyRead::Values { texts, list: true });
        }
        let (first, list) = match value {
            PyJson::List(items) => (items.first().unwrap_or(&PyJson::None), true),
            PyJson::Str(s) => {
                return Ok(BodyRead::Values {
                    texts: vec![Cow::Owned(s.clone())],
                    list: false,
                });
            }
            other => (other, true),
        };
        if *first != PyJson::None {
            return Ok(BodyRead::Values {
                texts: vec![self.text(first)?],
                list,
            });
        }
        // `[null, ...]`: the field is skipped, and the lookup gets `None`.
        use Lookup::*;
        match self.lookup {
            Exact if self.family == FilterFamily::Json => Ok(BodyRead::Values {
                texts: vec![Cow::Borrowed("null")],
                list: true,
            }),
            Exact => Ok(BodyRead::IsNull),
            IsNull | IsEmpty => Ok(BodyRead::Values {
                texts: vec![Cow::Borrowed("")],
                list: true,
            }),
            Gt | Gte | Lt | Lte => Err(self.fails(format!(
                "Invalid value for filter {key:?}: a list whose first item is null, which the \
                 data engine fails on (500)."
            ))),
            // Lenient mode: the text `None`, where a text's pattern is one (a number's and a
            // date's are read as numbers and dates by the emulator).
            _ if self.lenient && matches!(self.family, FilterFamily::Text | FilterFamily::Json) => {
                Ok(BodyRead::Values {
                    texts: vec![Cow::Borrowed("None")],
                    list: true,
                })
            }
            _ => Err(self.misread(format!(
                "Invalid value for filter {key:?}: a list whose first item is null, which the \
                 data engine reads as the text None."
            ))),
        }
    }
}

/// The engine's failure (500) on a declared filter's value (`_order_by`, `_search`, `_m2m`,
/// ...) that the body gives and is not text (for `_order_by`, see [`order_of_one`] first).
/// The message names the parameter.
pub fn declared_not_text(name: &str, json: &str, lenient: bool) -> EngineError {
    let kind = crate::python::json::parse_py_json(json)
        .map(|v| v.kind_name())
        .unwrap_or("a value");
    if name == "_search" {
        // The search formats the value into its text patterns and binds it unread against
        // each number column's text: SQLite reads the bound number as text, MySQL compares
        // numerically, PostgreSQL fails (`character varying = integer`). An answer that
        // depends on the database is a misreading: refused in both modes, marked.
        return EngineError::stricter(
            name,
            format!(
                "{name} in the body is {kind}: the data engine compares it with number columns \
                 unread, which SQLite and MySQL answer differently and PostgreSQL fails on \
                 (500); give it as text."
            ),
        );
    }
    EngineError::engine_fails(
        lenient,
        name,
        format!(
            "{name} in the body is {kind}: the data engine reads it as text and fails (500) on \
             anything else; give it as text."
        ),
    )
}

/// Whether a body's non-text `_order_by` selects nothing (a list or an object of one member,
/// which the engine's `len(value) < 2` reads as a one-character order) rather than failing.
pub fn order_of_one(json: &str) -> bool {
    matches!(
        crate::python::json::parse_py_json(json),
        Ok(PyJson::List(ref items)) if items.len() == 1
    ) || matches!(
        crate::python::json::parse_py_json(json),
        Ok(PyJson::Dict(ref items)) if items.len() == 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::python::json::parse_py_json;

    fn read(family: FilterFamily, lookup: Lookup, json: &str) -> Result<BodyRead, EngineError> {
        Target {
            key: "k",
            family,
            binary: false,
            lookup,
            exclude: false,
            lenient: false,
        }
        .read(&parse_py_json(json).unwrap())
    }

    fn texts(r: Result<BodyRead, EngineError>) -> (Vec<String>, bool) {
        match r {
            Ok(BodyRead::Values { texts, list }) => {
                (texts.into_iter().map(Cow::into_owned).collect(), list)
            }
            other => panic!("{other:?}"),
        }
    }

    /// As the running engine read them (jet-bridge 1.12.13 on SQLite and PostgreSQL).
    #[test]
    fn values_read_as_the_engines_fields_read_them() {
        use FilterFamily::*;
        use Lookup::*;
        assert_eq!(texts(read(Number, Exact, "30")), (vec!["30".into()], true));
        assert_eq!(
            texts(read(Number, Exact, "true")),
            (vec!["True".into()], true)
        );
        assert_eq!(
            texts(read(Number, Exact, "[18, 30]")),
            (vec!["18".into()], true)
        );
        assert_eq!(
            texts(read(Number, Exact, "[[30]]")),
            (vec!["[30]".into()], true)
        );
        assert_eq!(
            texts(read(Number, Exact, "[\"\"]")),
            (vec!["".into()], true)
        );
        assert_eq!(
            texts(read(Number, Exact, "1e400")),
            (vec!["inf".into()], true)
        );
        assert_eq!(texts(read(Text, Exact, "1.5")), (vec!["1.5".into()], true));
        assert_eq!(
            texts(read(Text, Exact, r#"{"a": 1}"#)),
            (vec!["{'a': 1}".into()], true)
        );
        assert_eq!(
            texts(read(Text, In, r#"{"a": 1, "b": 2}"#)),
            (vec!["{'a': 1, 'b': 2}".into()], true)
        );
        assert_eq!(
            texts(read(Text, In, r#"["a,b", 2]"#)),
            (vec!["a,b".into(), "2".into()], true)
        );
        assert_eq!(
            texts(read(Text, In, r#""a,b""#)),
            (vec!["a,b".into()], false)
        );
        assert_eq!(texts(read(Boolean, Exact, "0.0")), (vec!["0".into()], true));
        assert_eq!(texts(read(Boolean, Exact, "2")), (vec!["1".into()], true));
        assert_eq!(
            texts(read(Boolean, In, "[null]")),
            (vec!["false".into()], true)
        );
        assert_eq!(
            texts(read(Number, IsNull, "[null]")),
            (vec!["".into()], true)
        );
        assert_eq!(
            texts(read(Json, Exact, r#"{"a": 1}"#)),
            (vec![r#"{"a": 1}"#.into()], true)
        );
        assert_eq!(
            texts(read(Json, Exact, "[null]")),
            (vec!["null".into()], true)
        );
        assert_eq!(
            texts(read(Json, JsonIContains, r#"{"a": 1}"#)),
            (vec!["{'a': 1}".into()], true)
        );
        assert_eq!(
            texts(read(Date, IContains, "2024")),
            (vec!["2024".into()], true)
        );
        for empty in ["[]", "{}", "\"\""] {
            assert_eq!(read(Number, Exact, empty).ok(), Some(BodyRead::Empty));
        }
        assert_eq!(read(Number, Exact, "[null]").ok(), Some(BodyRead::IsNull));
        assert_eq!(read(Boolean, Exact, "[null]").ok(), Some(BodyRead::IsNull));
    }

    #[test]
    fn what_the_engine_fails_on_or_misreads_is_refused() {
        use FilterFamily::*;
        use Lookup::*;
        for (family, lookup, json) in [
            (Number, Gt, "[null]"),
            (Number, IsNull, r#"{"a": 1}"#),
            (Number, IsNull, "[[1]]"),
            (Boolean, Exact, r#"{"a": 1}"#),
            (Boolean, In, "[[1]]"),
            (Boolean, Exact, "NaN"),
            (Date, Exact, "20240305"),
            (Date, Gt, "true"),
            (Number, In, "[null, 30]"),
            (Text, IContains, "[null]"),
        ] {
            let refused = read(family, lookup, json).unwrap_err();
            assert_eq!(refused.status(), 400, "{family:?} {lookup:?} {json}");
        }
        let binary = Target {
            key: "b",
            family: Text,
            binary: true,
            lookup: Exact,
            exclude: false,
            lenient: true,
        };
        assert_eq!(
            binary.read(&PyJson::Int("5".into())).unwrap_err().status(),
            500
        );
    }

    /// Lenient mode reads the misreadings it can write as the engine does.
    #[test]
    fn lenient_mode_reads_a_null_as_the_engine_where_it_can() {
        use FilterFamily::*;
        use Lookup::*;
        let read = |family, lookup, exclude, json: &str| {
            Target {
                key: "k",
                family,
                binary: false,
                lookup,
                exclude,
                lenient: true,
            }
            .read(&parse_py_json(json).unwrap())
        };
        assert_eq!(
            texts(read(Number, In, false, "[null, 30]")),
            (vec!["30".into()], true)
        );
        assert_eq!(texts(read(Text, In, false, "[null]")), (vec![], true));
        assert_eq!(
            texts(read(Text, IContains, false, "[null]")),
            (vec!["None".into()], true)
        );
        assert_eq!(
            read(Number, In, true, "[null, 30]").unwrap_err().status(),
            400
        );
        assert_eq!(
            read(Number, IContains, false, "[null]")
                .unwrap_err()
                .status(),
            400
        );
        assert_eq!(
            read(Date, Exact, false, "20240305").unwrap_err().status(),
            400
        );
    }

    #[test]
    fn a_body_that_is_not_an_object_fails() {
        let body = parse_py_json(r#"{"a": 1, "b": null, "c": "x"}"#).unwrap();
        assert_eq!(
            body_filters(&body, false).unwrap(),
            [
                ("a".to_owned(), "1".to_owned()),
                ("c".to_owned(), "\"x\"".to_owned())
            ]
        );
        for json in ["[1]", "null", "\"x\""] {
            let strict = body_filters(&parse_py_json(json).unwrap(), false).unwrap_err();
            assert_eq!(strict.status(), 400);
            let lenient = body_filters(&parse_py_json(json).unwrap(), true).unwrap_err();
            assert_eq!(lenient.status(), 500);
        }
    }

    #[test]
    fn the_override_is_read_as_the_engine_compares_it() {
        assert!(reads_body_filters(method_seen("GET", Some("POST"))));
        assert!(!reads_body_filters(method_seen("POST", Some("post"))));
        assert!(!reads_body_filters(method_seen("POST", Some("GET"))));
        assert!(!reads_body_filters(method_seen("POST", Some("POST,POST"))));
        assert!(reads_body_filters(method_seen("POST", None)));
        assert!(skips_credentials(method_seen("GET", Some("OPTIONS"))));
        assert!(!skips_credentials(method_seen("GET", Some("options"))));
    }

    #[test]
    fn an_order_of_one_member_selects_nothing() {
        assert!(order_of_one(r#"["-age"]"#));
        assert!(order_of_one(r#"{"a": 1}"#));
        assert!(!order_of_one(r#"["a", "b"]"#));
        assert!(!order_of_one("5"));
    }
}
