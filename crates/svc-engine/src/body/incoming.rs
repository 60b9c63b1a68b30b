//! A create's or update's body as the engine reads it into `request.data`, whatever its
//! content type: `jet_bridge/handlers/view.py` (`get_request`, `request_headers`),
//! `jet_bridge_base/request.py` (`Request.__init__`) and Tornado 5.1's body parsing
//! (`HTTPServerRequest._parse_body`, `parse_body_arguments`), checked against the running
//! engine on SQLite, PostgreSQL and MariaDB.
//!
//! - The engine's `Request` reads JSON when its `CONTENT_TYPE` starts with `application/json`
//!   (case counts; `application/json-patch+json` and `application/json; charset=latin-1` do
//!   too): the body decoded as UTF-8 with surrogates allowed, then `json.loads`, an empty
//!   body being `{}`.
//! - Otherwise it takes Tornado's `body_arguments`: a form (`application/x-www-form-urlencoded`)
//!   or a multipart body (`multipart/form-data`), read from Tornado's own `Content-Type`, and
//!   not at all when a `Content-Encoding` header is there. A value is text when its bytes are
//!   UTF-8, else bytes; a field given several values is a list. Files are not fields.
//! - With any other content type the engine sees no field.
//!
//! [`read`] makes `request.data`; [`BodyRead::resolve`] then settles, with the model's fields,
//! what the emulator cannot keep as the engine does (bytes, lone surrogates, JSON too deep
//! for the engine's answer).

use crate::body::form::{self, Fields, FormValue, Unread};
use crate::body::multipart::{self, Skipped};
use crate::error::EngineError;
use crate::python::json::{PyJson, PyJsonError, read_py_json, read_py_json_bytes};
use crate::python::numbers::py_strip;
use crate::python::text::py_bytes_repr;
use crate::types::{FieldInfo, FilterFamily};

/// How deep the engine's `json.loads` of a body nests arrays and objects before Python's
/// recursion limit makes it fail (500): measured on the engine, the same for every view and
/// database (the parser runs in `get_request`, before anything else). Now and then 965 passes
/// too (the handler's stack varies by a frame): deeper is refused, as the engine mostly does.
pub const ENGINE_JSON_DEPTH: usize = 964;

/// How deep (in the frames of its encoder's `clean_obj`: one per value, and one more per
/// array or object) a JSON column's value may be for the engine to write the record it
/// created or updated: deeper, it has written it and fails (500) writing the answer. 980 is
/// 490 nested arrays (`[[...[]...]]`), or 489 and a value in the innermost.
pub const ENGINE_ANSWER_DEPTH: usize = 980;

/// The most arrays and objects the engine's `json.dumps` of a JSON column's value nests when
/// it binds it: deeper, the write fails with its `RecursionError` as a `400`.
const ENGINE_DUMPS_DEPTH: usize = 969;

/// The most arrays and objects the engine's `JSONField` reads from a text value: deeper, its
/// `json.loads` fails (500) before any write.
const ENGINE_FIELD_JSON_DEPTH: usize = 981;

/// The headers that decide how the engine reads a body, as it sees them: Tornado reads header
/// values as Latin-1 text and strips them, and joins a repeated header's values with `,`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BodyHeaders {
    /// `CONTENT_TYPE` of the engine's `request_headers()` (each name upper-cased, `-` made
    /// `_`): `Content-Type`, or a `Content_Type` header, whichever name came last.
    pub engine_content_type: String,
    /// `Content-Type`, which Tornado's body parser reads.
    pub tornado_content_type: String,
    /// A `Content-Encoding` header is there (Tornado then parses no form or multipart body).
    pub content_encoding: bool,
}

impl BodyHeaders {
    /// From a request's headers, in the order they came (names in lowercase, as the HTTP
    /// layer gives them; the values of one name together).
    pub fn read<'h>(headers: impl IntoIterator<Item = (&'h str, &'h [u8])>) -> BodyHeaders {
        // Tornado's names in the order first seen, each with its joined value.
        let mut seen: Vec<(&str, String)> = Vec::new();
        let mut content_encoding = false;
        for (name, value) in headers {
            content_encoding |= name.eq_ignore_ascii_case("content-encoding");
            let is_type = name.eq_ignore_ascii_case("content-type")
                || name.eq_ignore_ascii_case("content_type");
            if !is_type {
                continue;
            }
            let latin1: String = value.iter().map(|&b| char::from(b)).collect();
            let value = py_strip(&latin1);
            let key = if name.contains('-') {
                "content-type"
            } else {
                "content_type"
            };
            match seen.iter_mut().find(|(k, _)| *k == key) {
                Some((_, joined)) => {
                    joined.push(',');
                    joined.push_str(value);
                }
                None => seen.push((key, value.to_owned())),
            }
        }
        BodyHeaders {
            engine_content_type: seen.last().map(|(_, v)| v.clone()).unwrap_or_default(),
            tornado_content_type: seen
                .iter()
                .find(|(k, _)| *k == "content-type")
                .map(|(_, v)| v.clone())
                .unwrap_or_default(),
            content_encoding,
        }
    }

    /// The engine reads the body as JSON (`content_type.startswith('application/json')`).
    pub fn is_json(&self) -> bool {
        self.engine_content_type.starts_with("application/json")
    }
}

/// What the emulator cannot keep of a field's value as the engine reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flaw {
    /// A form or multipart value whose bytes are not UTF-8: the engine keeps the bytes, and
    /// its serializer fails (500) decoding them for a column.
    NotUtf8,
    /// One of a field's several values is such bytes: the serializer joins the values with
    /// Python's `str()` of the bytes (`b'\xff'`), or a JSON column fails to encode them.
    NotUtf8InList,
    /// A JSON key or value holding a lone surrogate, which no Rust string holds.
    LoneSurrogate,
}

/// A body as the engine's `Request` reads it (`request.data`), before the model's fields are
/// known.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyRead {
    /// `request.data`; a value the emulator cannot hold is a stand-in (see `flaws`).
    data: PyJson,
    /// The keys whose values the emulator cannot keep as the engine reads them.
    flaws: Vec<(String, Flaw)>,
    /// Fields sent that the engine drops unseen: strict mode refuses the body, saying so.
    dropped: Option<String>,
    /// A field the emulator cannot read as the engine does, in either mode.
    unreadable: Option<String>,
}

/// A body read with its model's fields: what to write, and the engine's failure after the
/// write, if it fails there (lenient mode answers it once the write is done).
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The body, to be written.
    pub body: PyJson,
    /// The engine writes the record and then fails with this.
    pub fails_after_write: Option<EngineError>,
}

/// Reads a body as the engine does ([module docs](self)). `Err` is what the engine fails on
/// before reading any field (a JSON body that is not UTF-8 or nests too deeply: a 500,
/// [`EngineError::engine_fails`]) or refuses (a JSON body that is not JSON: its `400`).
pub fn read(headers: &BodyHeaders, body: &[u8], lenient: bool) -> Result<BodyRead, EngineError> {
    if headers.is_json() {
        return read_json(headers, body, lenient);
    }
    let mut dropped = None;
    let content_type = headers.tornado_content_type.as_str();
    let is_form = content_type.starts_with("application/x-www-form-urlencoded");
    let is_multipart = !is_form && content_type.starts_with("multipart/form-data");
    let mut unreadable = None;
    let fields: Fields = if headers.content_encoding {
        if (is_form || is_multipart) && !body.is_empty() {
            dropped = Some(
                "The data engine reads no field of a form or multipart body sent with a \
                 Content-Encoding header (Tornado does not decode it): the write would set \
                 nothing. Send the body without Content-Encoding."
                    .to_owned(),
            );
        }
        Vec::new()
    } else if is_form {
        match form::read(body) {
            Ok(fields) => {
                if form::raw_non_ascii_values(body) {
                    dropped = Some(
                        "A form value holds raw non-ASCII text: the data engine reads each such \
                         character as its Latin-1 byte, not as the character sent (é is the \
                         byte E9, which is not UTF-8). Percent-encode each value's UTF-8 bytes \
                         (é is %C3%A9)."
                            .to_owned(),
                    );
                }
                fields
            }
            Err(unread) => {
                dropped = Some(match unread {
                    Unread::NotUtf8 => "The form body is not UTF-8 text: the data engine reads \
                                        none of its fields (the write would set nothing). \
                                        Percent-encode each value's UTF-8 bytes (é is %C3%A9)."
                        .to_owned(),
                    Unread::BeyondLatin1 => "A form value holds, as raw text, a character \
                                             beyond Latin-1: the data engine then reads none of \
                                             the form's fields (the write would set nothing). \
                                             Percent-encode each value's UTF-8 bytes (€ is \
                                             %E2%82%AC)."
                        .to_owned(),
                });
                Vec::new()
            }
        }
    } else if is_multipart {
        match multipart::boundary(content_type) {
            None => {
                if !body.is_empty() {
                    dropped = Some(
                        "The multipart content type has no boundary parameter the data engine \
                         reads (`boundary=`, in lowercase): it reads no field. Send Content-Type: \
                         multipart/form-data; boundary=..."
                            .to_owned(),
                    );
                }
                Vec::new()
            }
            Some(boundary) => {
                let parts = multipart::read(&boundary, body);
                for skipped in &parts.skipped {
                    match skipped {
                        Skipped::Charset(n, charset) => {
                            unreadable.get_or_insert_with(|| {
                                format!(
                                    "Part {n} of the multipart body names its field in RFC 2231 \
                                     form in charset {charset:?}, which the emulator does not \
                                     decode (it knows UTF-8, ASCII and Latin-1). Send \
                                     name=\"FIELD\" in UTF-8."
                                )
                            });
                        }
                        other => {
                            dropped.get_or_insert_with(|| skipped_message(other));
                        }
                    }
                }
                parts.fields
            }
        }
    } else {
        Vec::new()
    };
    let mut flaws = Vec::new();
    let items = fields
        .into_iter()
        .map(|(name, values)| {
            let mut values: Vec<FormValue> = values.into_iter().map(FormValue::of).collect();
            let text = |v: FormValue| match v {
                FormValue::Text(t) => PyJson::Str(t),
                // What the serializer's `str()` makes of the bytes, in a list.
                FormValue::Bytes(b) => PyJson::Str(py_bytes_repr(&b)),
            };
            let bytes = values.iter().any(|v| matches!(v, FormValue::Bytes(_)));
            let value = if values.len() == 1 {
                if bytes {
                    flaws.push((name.clone(), Flaw::NotUtf8));
                }
                text(values.remove(0))
            } else {
                if bytes {
                    flaws.push((name.clone(), Flaw::NotUtf8InList));
                }
                PyJson::List(values.into_iter().map(text).collect())
            };
            (name, value)
        })
        .collect();
    Ok(BodyRead {
        data: PyJson::Dict(items),
        flaws,
        dropped,
        unreadable,
    })
}

/// Strict mode's message for a multipart part the engine passes over.
fn skipped_message(skipped: &Skipped) -> String {
    match skipped {
        Skipped::NoFinalBoundary => "The multipart body has no closing --BOUNDARY-- line: the \
                                     data engine reads none of its fields. End the body with \
                                     --BOUNDARY--."
            .to_owned(),
        Skipped::NoHeaders(n) => format!(
            "Part {n} of the multipart body has no blank line after its headers: the data \
             engine skips it. Send each part as headers, a blank line (CRLF CRLF), the value."
        ),
        Skipped::Stopped(n) => format!(
            "The headers of part {n} of the multipart body are not UTF-8 `Name: value` lines \
             the data engine reads: it stops there, and drops the fields from there on. Send \
             each part's headers as `Name: value` lines in UTF-8."
        ),
        Skipped::NotFormData(n) => format!(
            "Part {n} of the multipart body is not `Content-Disposition: form-data` (in \
             lowercase) ending in a line break (CRLF) before the next boundary: the data engine \
             skips it."
        ),
        Skipped::NoName(n) => format!(
            "Part {n} of the multipart body has no name: the data engine skips it. Send \
             Content-Disposition: form-data; name=\"FIELD\"."
        ),
        Skipped::File(name) => format!(
            "Part {name:?} of the multipart body is a file (it has a filename): the data \
             engine's record writes read no files, so it would set nothing. Send the value as \
             a field (no filename)."
        ),
        Skipped::Charset(n, charset) => format!("Part {n}: charset {charset:?} is not decoded."),
    }
}

/// The JSON branch of [`read`].
fn read_json(headers: &BodyHeaders, body: &[u8], lenient: bool) -> Result<BodyRead, EngineError> {
    // `json.loads(data) if data else {}`.
    if body.is_empty() {
        return Ok(BodyRead {
            data: PyJson::Dict(Vec::new()),
            flaws: Vec::new(),
            dropped: None,
            unreadable: None,
        });
    }
    match read_py_json_bytes(body, ENGINE_JSON_DEPTH) {
        Ok(read) => {
            let flaws = read
                .surrogate_keys
                .into_iter()
                .map(|k| (k, Flaw::LoneSurrogate))
                .collect();
            Ok(BodyRead {
                data: read.value,
                flaws,
                dropped: None,
                unreadable: None,
            })
        }
        // `decode('utf-8', 'surrogatepass')` runs outside the engine's `try`: its
        // `UnicodeDecodeError` is a 500 (with an empty body).
        Err(PyJsonError::NotUtf8(at)) => {
            let encoded = if headers.content_encoding {
                " It has a Content-Encoding header, which the data engine does not decode: send \
                 the body uncompressed."
            } else {
                ""
            };
            Err(EngineError::engine_fails(
                lenient,
                "non_field_errors",
                format!(
                    "The JSON body is not UTF-8 text (byte {at}): the data engine fails (500) \
                     decoding it. Send JSON in UTF-8.{encoded}"
                ),
            ))
        }
        Err(PyJsonError::TooDeep) => Err(EngineError::engine_fails(
            lenient,
            "non_field_errors",
            format!(
                "The JSON body nests more than {ENGINE_JSON_DEPTH} arrays and objects: the data \
                 engine's parser exceeds Python's recursion limit and fails (500). Send a \
                 flatter body."
            ),
        )),
        Err(PyJsonError::Invalid(message)) => {
            let engine = format!("Incorrect JSON body: {message}");
            Err(EngineError::field("non_field_errors", engine.clone())
                .explained(format!("{engine}. Send a JSON object of field values.")))
        }
    }
}

impl BodyRead {
    /// `request.data` for a reading of the body without a model (a list's or a selection's
    /// filters in the body): strict mode refuses what [`resolve`](Self::resolve) refuses of a
    /// body (`[decision: stricter]`: fields dropped unseen, values not UTF-8 or holding lone
    /// surrogates); lenient mode takes the body as read, a value the emulator cannot hold as
    /// its stand-in (Python's `str()` of bytes, `U+FFFD` for a lone surrogate).
    pub fn into_data(self, lenient: bool) -> Result<PyJson, EngineError> {
        if let Some(message) = self.unreadable {
            return Err(EngineError::stricter("non_field_errors", message));
        }
        if !lenient {
            if let Some(message) = self.dropped {
                return Err(EngineError::stricter("non_field_errors", message));
            }
            if let Some((key, flaw)) = self.flaws.first() {
                return Err(EngineError::stricter(key.clone(), flaw_message(key, *flaw)));
            }
        }
        Ok(self.data)
    }

    /// Settles, with the model's `fields` (`None`: no such model, whose write answers `404`),
    /// what the emulator cannot keep as the engine reads it:
    ///
    /// - strict mode refuses (`[decision: stricter]`) fields the engine drops unseen, values
    ///   that are not UTF-8 or hold lone surrogates, and a JSON column's value too deep for the
    ///   engine's answer;
    /// - lenient mode answers as the engine: such a value under a key that names no field is
    ///   ignored; one that is not UTF-8 fails (500), joined with others it is written as the
    ///   engine writes it; a lone surrogate fails in a text column (500), is read as any
    ///   other character by a boolean field, and is refused elsewhere (the engine keeps it in
    ///   a JSON column, which the emulator cannot; its date parser reads around it); a JSON
    ///   column's value too deep is written, then the answer fails (500).
    pub fn resolve(
        self,
        fields: Option<&[FieldInfo]>,
        lenient: bool,
    ) -> Result<Resolved, EngineError> {
        let BodyRead {
            mut data,
            flaws,
            dropped,
            unreadable,
        } = self;
        let Some(fields) = fields else {
            // No such model: its write answers 404 whatever the body holds.
            if let PyJson::Dict(items) = &mut data {
                items.retain(|(k, _)| !flaws.iter().any(|(f, _)| f == k));
            }
            return Ok(Resolved {
                body: data,
                fails_after_write: None,
            });
        };
        if let Some(message) = unreadable {
            return Err(EngineError::stricter("non_field_errors", message));
        }
        if let (Some(message), false) = (dropped, lenient) {
            return Err(EngineError::stricter("non_field_errors", message));
        }
        let family = |key: &str| fields.iter().find(|f| f.name == key).map(|f| f.family);
        let mut ignored: Vec<String> = Vec::new();
        for (key, flaw) in flaws {
            let column = family(&key);
            let refusal = || EngineError::stricter(key.clone(), flaw_message(&key, flaw));
            match (column, flaw) {
                // The key names no field: the engine ignores it (strict mode's check of the
                // keys refuses it as it refuses any key the model lacks).
                (None, _) => {
                    if lenient {
                        ignored.push(key);
                    }
                }
                _ if !lenient => return Err(refusal()),
                (Some(_), Flaw::NotUtf8) => {
                    return Err(EngineError::engine_fails(
                        true,
                        &key,
                        flaw_message(&key, flaw),
                    ));
                }
                // `json.dumps` of a list holding bytes: the engine's own 400.
                (Some(FilterFamily::Json), Flaw::NotUtf8InList) => {
                    return Err(EngineError::field(
                        "non_field_errors",
                        "Object of type bytes is not JSON serializable",
                    ));
                }
                (Some(_), Flaw::NotUtf8InList) => {}
                (Some(FilterFamily::Text | FilterFamily::Date), Flaw::LoneSurrogate) => {
                    return Err(EngineError::engine_fails(
                        true,
                        &key,
                        flaw_message(&key, flaw),
                    ));
                }
                // A boolean field reads the text's truth, which `U+FFFD` keeps.
                (Some(FilterFamily::Boolean), Flaw::LoneSurrogate) => {}
                _ => return Err(refusal()),
            }
        }
        if let PyJson::Dict(items) = &mut data {
            items.retain(|(k, _)| !ignored.contains(k));
        }
        let mut fails_after_write = None;
        if let PyJson::Dict(items) = &data {
            for (key, value) in items {
                if family(key) != Some(FilterFamily::Json) {
                    continue;
                }
                if let Some(after) = json_column_depth(key, value, lenient)? {
                    fails_after_write.get_or_insert(after);
                }
            }
        }
        Ok(Resolved {
            body: data,
            fails_after_write,
        })
    }
}

/// Strict mode's message for a flawed value (and lenient mode's, where the engine fails).
fn flaw_message(key: &str, flaw: Flaw) -> String {
    match flaw {
        Flaw::NotUtf8 => format!(
            "The value of field {key:?} is not UTF-8 text as the data engine reads it, and its \
             serializer fails (500) on it. In a form, percent-encode the value's UTF-8 bytes (é \
             is %C3%A9); in a multipart part, send the value in UTF-8."
        ),
        Flaw::NotUtf8InList => format!(
            "Field {key:?} is given several values, one of which is not UTF-8 text: the data \
             engine joins them into text with Python's form of bytes (b'\\xff'), or fails in a \
             JSON column. Send each value in UTF-8 (percent-encoded in a form)."
        ),
        Flaw::LoneSurrogate => format!(
            "The value of field {key:?} holds a lone UTF-16 surrogate (\\ud800 without its \
             pair, or its UTF-8 bytes), which the emulator cannot hold as text (the data engine \
             fails (500) on one in a text column). Send whole characters (a surrogate pair such \
             as \\ud83d\\ude00, or the character itself)."
        ),
    }
}

/// A JSON column's value as the engine's `JSONField` reads it (a text is `json.loads`ed
/// where it parses), checked against the depths the engine handles: `Ok(Some(e))` when the
/// engine writes it and then fails with `e` (lenient mode), `Err` where it is refused.
fn json_column_depth(
    key: &str,
    value: &PyJson,
    lenient: bool,
) -> Result<Option<EngineError>, EngineError> {
    let parsed;
    let (value, from_text) = match value {
        PyJson::Str(text) => match read_py_json(text, ENGINE_FIELD_JSON_DEPTH) {
            Ok(read) if read.surrogates => {
                return Err(EngineError::stricter(
                    key,
                    flaw_message(key, Flaw::LoneSurrogate),
                ));
            }
            Ok(read) => {
                parsed = read.value;
                (&parsed, true)
            }
            Err(PyJsonError::TooDeep) => {
                let message = too_deep_message(key);
                return Err(EngineError::engine_fails(lenient, key, message));
            }
            // `JSONField` keeps a text that is not JSON as the text.
            Err(_) => return Ok(None),
        },
        other => (other, false),
    };
    if answer_depth(value) <= ENGINE_ANSWER_DEPTH {
        return Ok(None);
    }
    let message = too_deep_message(key);
    if !lenient {
        return Err(EngineError::stricter(key, message));
    }
    if from_text && nesting(value) > ENGINE_DUMPS_DEPTH {
        // Binding the value, `json.dumps` exceeds the recursion limit: the engine's 400.
        return Err(EngineError::field(
            "non_field_errors",
            "maximum recursion depth exceeded while encoding a JSON object",
        ));
    }
    Ok(Some(EngineError::engine_fails(true, key, message)))
}

fn too_deep_message(key: &str) -> String {
    format!(
        "The value of JSON field {key:?} nests too deeply for the data engine: it writes the \
         record and then fails (500) writing its answer (Python's recursion limit; at most 489 \
         arrays and objects inside one another are safe). Send a flatter value, or the deep \
         part as a JSON string."
    )
}

/// The frames the engine's encoder (`clean_obj`) takes for a value: one per value, one more
/// (its comprehension) per array or object.
fn answer_depth(v: &PyJson) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            PyJson::List(items) if !items.is_empty() => {
                stack.extend(items.iter().map(|i| (i, depth + 2)));
            }
            PyJson::Dict(items) if !items.is_empty() => {
                stack.extend(items.iter().map(|(_, i)| (i, depth + 2)));
            }
            PyJson::List(_) | PyJson::Dict(_) => deepest = deepest.max(depth + 1),
            _ => deepest = deepest.max(depth),
        }
    }
    deepest
}

/// How many arrays and objects nest in a value.
fn nesting(v: &PyJson) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            PyJson::List(items) => {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            PyJson::Dict(items) => {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|(_, i)| (i, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> BodyHeaders {
        BodyHeaders::read(pairs.iter().map(|(n, v)| (*n, v.as_bytes())))
    }

    fn json() -> BodyHeaders {
        headers(&[("content-type", "application/json")])
    }

    fn form() -> BodyHeaders {
        headers(&[("content-type", "application/x-www-form-urlencoded")])
    }

    fn fields() -> Vec<FieldInfo> {
        [
            ("id", FilterFamily::Number),
            ("name", FilterFamily::Text),
            ("ok", FilterFamily::Boolean),
            ("at", FilterFamily::DateTime),
            ("doc", FilterFamily::Json),
        ]
        .into_iter()
        .map(|(n, f)| FieldInfo::new(n, f))
        .collect()
    }

    fn s(v: &str) -> PyJson {
        PyJson::Str(v.to_owned())
    }

    /// Reads and resolves `body` against [`fields`].
    fn resolved(h: &BodyHeaders, body: &[u8], lenient: bool) -> Result<Resolved, EngineError> {
        read(h, body, lenient)?.resolve(Some(&fields()), lenient)
    }

    fn stricter(e: &EngineError) -> bool {
        matches!(e, EngineError::Invalid { stricter: true, .. })
    }

    /// `request_headers()` makes `Content_Type` a `CONTENT_TYPE` too (the name that came
    /// last wins); Tornado's parser reads only `Content-Type`; values are Latin-1, stripped,
    /// joined with `,`.
    #[test]
    fn the_content_type_is_read_as_the_engine_and_tornado_read_it() {
        let h = headers(&[
            ("content-type", "text/plain"),
            ("content_type", "application/json"),
        ]);
        assert!(h.is_json());
        assert_eq!(h.tornado_content_type, "text/plain");
        let h = headers(&[
            ("content_type", "application/json"),
            ("content-type", "text/plain"),
        ]);
        assert!(!h.is_json());
        let h = headers(&[
            ("content-type", "application/json"),
            ("content-type", "text/plain"),
        ]);
        assert_eq!(h.engine_content_type, "application/json,text/plain");
        assert!(h.is_json());
        for spelling in [
            "application/json-patch+json",
            "application/json; charset=latin-1",
        ] {
            assert!(
                headers(&[("content-type", spelling)]).is_json(),
                "{spelling}"
            );
        }
        assert!(!headers(&[("content-type", "Application/JSON")]).is_json());
        let h = BodyHeaders::read([("content-type", &b"multipart/form-data; boundary=\xe9"[..])]);
        assert_eq!(
            h.tornado_content_type,
            "multipart/form-data; boundary=\u{e9}"
        );
        assert!(headers(&[("content-encoding", "")]).content_encoding);
        assert!(!headers(&[("content_encoding", "gzip")]).content_encoding);
    }

    /// JSON: empty is `{}`; what the engine fails on is its 500 (lenient) or a marked 400;
    /// what is not JSON is its 400.
    #[test]
    fn a_json_body_is_read_as_json_loads_reads_it() {
        assert_eq!(
            read(&json(), b"", false).map(|r| r.data),
            Ok(PyJson::Dict(vec![]))
        );
        let bad = read(&json(), b"[\xff]", true).unwrap_err();
        assert_eq!(bad.status(), 500);
        assert!(stricter(&read(&json(), b"[\xff]", false).unwrap_err()));
        let deep = |n| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(read(&json(), deep(964).as_bytes(), false).is_ok());
        assert_eq!(
            read(&json(), deep(965).as_bytes(), true)
                .unwrap_err()
                .status(),
            500
        );
        let EngineError::Invalid {
            fields, stricter, ..
        } = read(&json(), b"\xef\xbb\xbf{}", false).unwrap_err()
        else {
            panic!("not a 400")
        };
        assert!(!stricter);
        assert_eq!(
            fields["non_field_errors"],
            [
                "Incorrect JSON body: Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 \
              (char 0)"
            ]
        );
        // Another content type: no field at all, whatever the body.
        let none = read(
            &headers(&[("content-type", "text/plain")]),
            b"{\"name\": 1}",
            false,
        );
        assert_eq!(none.map(|r| r.data), Ok(PyJson::Dict(vec![])));
    }

    /// A form's values that are not UTF-8: a 500 for a column (lenient), ignored under a key
    /// the model lacks, joined as Python's bytes in a list; strict mode refuses them.
    #[test]
    fn form_values_that_are_not_utf8_are_read_as_the_engine_reads_them() {
        let lenient = |body: &[u8]| resolved(&form(), body, true);
        assert_eq!(lenient(b"name=%FF").unwrap_err().status(), 500);
        assert_eq!(
            lenient(b"zz=%FF&name=x").map(|r| r.body),
            Ok(PyJson::Dict(vec![("name".to_owned(), s("x"))]))
        );
        assert_eq!(
            lenient(b"name=a&name=%FF").map(|r| r.body),
            Ok(PyJson::Dict(vec![(
                "name".to_owned(),
                PyJson::List(vec![s("a"), s("b'\\xff'")])
            )]))
        );
        let json_column = lenient(b"doc=a&doc=%FF").unwrap_err();
        assert_eq!(json_column.status(), 400);
        assert!(!stricter(&json_column));
        for body in [&b"name=%FF"[..], b"name=a&name=%FF", "name=é".as_bytes()] {
            assert!(stricter(&resolved(&form(), body, false).unwrap_err()));
        }
        // Under a key the model lacks, strict mode leaves it to the refusal of unknown keys.
        assert!(resolved(&form(), b"zz=%FF", false).is_ok());
        // Fields the engine drops unseen: served in lenient mode, refused in strict mode.
        for body in ["name=€".as_bytes(), b"name=\xe9"] {
            assert_eq!(
                lenient(body).map(|r| r.body),
                Ok(PyJson::Dict(vec![])),
                "{body:?}"
            );
            assert!(stricter(&resolved(&form(), body, false).unwrap_err()));
        }
        let encoded = headers(&[
            ("content-type", "application/x-www-form-urlencoded"),
            ("content-encoding", "identity"),
        ]);
        assert_eq!(
            resolved(&encoded, b"name=x", true).map(|r| r.body),
            Ok(PyJson::Dict(vec![]))
        );
        assert!(stricter(&resolved(&encoded, b"name=x", false).unwrap_err()));
    }

    /// Multipart: fields as Tornado reads them; a file is no field (strict mode says so).
    #[test]
    fn a_multipart_body_is_read_as_tornado_reads_it() {
        let h = headers(&[("content-type", "multipart/form-data; boundary=B")]);
        let body = b"--B\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n--B\r\n\
                     Content-Disposition: form-data; name=\"id\"; filename=\"f\"\r\n\r\n1\r\n--B--";
        assert_eq!(
            resolved(&h, body, true).map(|r| r.body),
            Ok(PyJson::Dict(vec![("name".to_owned(), s("x"))]))
        );
        assert!(stricter(&resolved(&h, body, false).unwrap_err()));
        let no_boundary = headers(&[("content-type", "multipart/form-data; Boundary=B")]);
        assert!(stricter(&resolved(&no_boundary, body, false).unwrap_err()));
        assert!(resolved(&no_boundary, b"", false).is_ok());
    }

    /// Lone surrogates: ignored under a key the model lacks (lenient), a 500 in a text column,
    /// read by a boolean field, refused elsewhere (both modes).
    #[test]
    fn lone_surrogates_are_settled_by_the_field_that_reads_them() {
        let lenient = |body: &str| resolved(&json(), body.as_bytes(), true);
        assert_eq!(
            lenient(r#"{"\ud800": 1, "zz": "\udfff", "name": "x"}"#).map(|r| r.body),
            Ok(PyJson::Dict(vec![("name".to_owned(), s("x"))]))
        );
        assert_eq!(lenient(r#"{"name": "\ud800"}"#).unwrap_err().status(), 500);
        assert_eq!(
            lenient(r#"{"ok": "\ud800"}"#).map(|r| r.body),
            Ok(PyJson::Dict(vec![("ok".to_owned(), s("\u{fffd}"))]))
        );
        for body in [
            r#"{"doc": "\ud800"}"#,
            r#"{"at": "2024-01-01\ud800"}"#,
            r#"{"id": "\ud800"}"#,
        ] {
            assert!(stricter(&lenient(body).unwrap_err()), "{body}");
        }
        // A JSON column's text holding one, once its field reads the JSON.
        assert!(stricter(&lenient(r#"{"doc": "\"\\ud800\""}"#).unwrap_err()));
        assert!(stricter(
            &resolved(&json(), br#"{"ok": "\ud800"}"#, false).unwrap_err()
        ));
        // A create's body that is not an object is not read.
        assert!(resolved(&json(), br#"["\ud800"]"#, false).is_ok());
    }

    /// A JSON column's value deeper than the engine's answer can be written: refused (strict),
    /// written then a 500 (lenient), or the engine's own failures of a deeper text.
    #[test]
    fn a_json_columns_value_is_as_deep_as_the_engines_answer_allows() {
        let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let body = |v: String| format!("{{\"doc\": {v}}}");
        let ok = resolved(&json(), body(nest(490)).as_bytes(), false).unwrap();
        assert_eq!(ok.fails_after_write, None);
        let deep = body(nest(491));
        assert!(stricter(
            &resolved(&json(), deep.as_bytes(), false).unwrap_err()
        ));
        let after = resolved(&json(), deep.as_bytes(), true).unwrap();
        assert_eq!(after.fails_after_write.map(|e| e.status()), Some(500));
        // `[[...[1]...]]` of 490: one frame more than the answer takes.
        let scalar = body(format!("{}1{}", "[".repeat(490), "]".repeat(490)));
        assert!(
            resolved(&json(), scalar.as_bytes(), true)
                .unwrap()
                .fails_after_write
                .is_some()
        );
        // As text (the field's `json.loads`): 975 fails binding (400), 2000 reading (500).
        let text = |n| body(format!("\"{}\"", nest(n)));
        let e = resolved(&json(), text(975).as_bytes(), true).unwrap_err();
        assert_eq!((e.status(), stricter(&e)), (400, false));
        assert_eq!(
            resolved(&json(), text(2000).as_bytes(), true)
                .unwrap_err()
                .status(),
            500
        );
        assert!(stricter(
            &resolved(&json(), text(975).as_bytes(), false).unwrap_err()
        ));
        // A text column takes any depth the parser takes.
        let name = format!("{{\"name\": {}}}", nest(963));
        assert!(resolved(&json(), name.as_bytes(), false).is_ok());
    }
}
