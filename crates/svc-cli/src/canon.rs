//! Records from their JSON text straight to NDJSON lines and CSV cells, without decoding each
//! into a `serde_json::Map` (issue 15).
//!
//! The output is byte for byte what decoding the record into a [`Value`] (with `preserve_order`)
//! and formatting it again gives, which is what `svc records export` wrote before: one pass over
//! the text copies it as it stands wherever that is already the compact form, and only what
//! formatting would change is formatted again: whitespace between tokens is dropped; a string
//! with a `\u` or `\/` escape, and a number that is not a plain integer (a fraction, an
//! exponent, `-0`, more digits than a 64-bit integer holds), go through serde_json on their
//! own. A record that is not an object, or an object with a key that has an escape or that
//! appears twice, takes the old road: decoded into a [`Value`] and formatted again.

use serde_json::Value;

use crate::exit::Failure;
use crate::output::{self, CsvWriter};

/// The fast road cannot keep the output identical: decode the record into a [`Value`].
#[derive(Debug)]
struct Slow;

/// serde_json's own nesting limit: deeper text is refused by the decoder, so it takes the slow
/// road, which says so.
const MAX_DEPTH: usize = 128;

/// One top-level field of the record last read: where its key is in the record's text, and
/// where its value is in the output.
#[derive(Debug, Clone, Copy)]
struct Field {
    key: (usize, usize),
    value: (usize, usize),
}

/// Formats records as NDJSON lines or CSV rows. It keeps what records of one export share:
/// the keys of the first record (in the same order, most records' keys are checked for
/// repeats in one comparison each), and buffers reused from record to record.
#[derive(Debug, Default)]
pub struct Formatter {
    /// The keys of the first record read on the fast road, without repeats, as they stand in
    /// compact JSON (`"name":`).
    keys: Vec<KeyToken>,
    fields: Vec<Field>,
    /// A CSV row's fields, formatted.
    scratch: Vec<u8>,
    csv: Option<CsvWriter>,
}

impl Formatter {
    /// Appends `record` (the JSON text of one record) to `out` as one NDJSON line.
    pub fn ndjson(&mut self, record: &[u8], out: &mut Vec<u8>) -> Result<(), Failure> {
        if self.compact(record) {
            out.extend_from_slice(record);
            out.push(b'\n');
            return Ok(());
        }
        let start = out.len();
        if self.object(record, out).is_err() {
            out.truncate(start);
            let value = decode(record)?;
            serde_json::to_writer(&mut *out, &value)
                .map_err(|e| Failure::Other(format!("cannot format a record: {e}")))?;
        }
        out.push(b'\n');
        Ok(())
    }

    /// Appends `record` to `out` as one CSV row, after the header (the first record's keys)
    /// if this is the first record.
    pub fn csv(&mut self, record: &[u8], out: &mut Vec<u8>) -> Result<(), Failure> {
        if self.compact(record) {
            // The values are already as they would be written: cut the cells from the record.
            return self.csv_fields(record, record, out);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let fast = self.object(record, &mut scratch).is_ok();
        let result = if fast {
            self.csv_fields(record, &scratch, out)
        } else {
            decode(record).and_then(|value| {
                let writer =
                    self.csv_writer(out, || output::columns(std::slice::from_ref(&value)))?;
                writer.row(out, &value)
            })
        };
        self.scratch = scratch;
        result
    }

    /// The CSV writer, made (and its header written) at the first record.
    fn csv_writer(
        &mut self,
        out: &mut Vec<u8>,
        columns: impl FnOnce() -> Vec<String>,
    ) -> Result<&CsvWriter, Failure> {
        let writer = match self.csv.take() {
            Some(writer) => writer,
            None => {
                let writer = CsvWriter::new(columns());
                writer.header(out)?;
                writer
            }
        };
        Ok(self.csv.insert(writer))
    }

    /// A CSV row from the fields of the record read last (on the fast road).
    fn csv_fields(
        &mut self,
        record: &[u8],
        values: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), Failure> {
        let fields = std::mem::take(&mut self.fields);
        let result = (|| {
            let writer = self.csv_writer(out, || {
                fields
                    .iter()
                    .map(|f| String::from_utf8_lossy(&record[f.key.0..f.key.1]).into_owned())
                    .collect()
            })?;
            let columns = writer.columns();
            // Keys in the order of the columns (the usual case): one comparison each.
            let in_order = fields.len() == columns.len()
                && fields
                    .iter()
                    .zip(columns)
                    .all(|(f, c)| &record[f.key.0..f.key.1] == c.as_bytes());
            for (i, column) in columns.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let field = if in_order {
                    Some(&fields[i])
                } else {
                    // As `Value::get` finds it: the last of repeated keys (none here: the fast
                    // road refuses repeats), and nothing when the key is missing.
                    fields
                        .iter()
                        .rev()
                        .find(|f| &record[f.key.0..f.key.1] == column.as_bytes())
                };
                if let Some(field) = field {
                    cell(&values[field.value.0..field.value.1], out)?;
                }
            }
            out.push(b'\n');
            Ok(())
        })();
        self.fields = fields;
        result
    }

    /// Whether the record is a flat object already in the form it would be written in (no
    /// whitespace, no `\u` or `\/` escape, integers only, no nested object or array, no
    /// repeated key), noting its top-level fields (values as ranges of `src`): the common
    /// case, checked in one quick pass. Anything else goes through [`object`](Self::object).
    fn compact(&mut self, src: &[u8]) -> bool {
        self.fields.clear();
        let n = src.len();
        if n < 2 || src[0] != b'{' {
            return false;
        }
        if src == b"{}" {
            return self.check_keys(src).is_ok();
        }
        let mut i = 1;
        // Whether every key so far is the first record's key at the same place.
        let mut as_first = true;
        loop {
            // A key without escapes, and its colon: most often the first record's key at the
            // same place, compared as it stands.
            let key = match self.keys.get(self.fields.len()) {
                Some(token) if as_first && token.starts(&src[i..]) => {
                    i += token.len();
                    (i - token.len() + 1, i - 2)
                }
                _ => {
                    as_first = false;
                    if src.get(i) != Some(&b'"') {
                        return false;
                    }
                    let key_start = i + 1;
                    let Some(at) = src.get(key_start..).and_then(find_quote_or_backslash) else {
                        return false;
                    };
                    let j = key_start + at;
                    if src.get(j) != Some(&b'"') || src.get(j + 1) != Some(&b':') {
                        return false;
                    }
                    i = j + 2;
                    (key_start, j)
                }
            };
            // The value.
            let value_start = i;
            match src.get(i) {
                Some(b'"') => {
                    i += 1;
                    loop {
                        let Some(at) = find_quote_or_backslash(&src[i..]) else {
                            return false;
                        };
                        i += at;
                        if src[i] == b'"' {
                            break;
                        }
                        match src.get(i + 1) {
                            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                            _ => return false,
                        }
                    }
                    i += 1;
                }
                Some(b'-' | b'0'..=b'9') => {
                    let len = number_len(&src[i..]);
                    if !canonical_number(&src[i..i + len]) {
                        return false;
                    }
                    i += len;
                }
                Some(b't') if src[i..].starts_with(b"true") => i += 4,
                Some(b'f') if src[i..].starts_with(b"false") => i += 5,
                Some(b'n') if src[i..].starts_with(b"null") => i += 4,
                _ => return false,
            }
            self.fields.push(Field {
                key,
                value: (value_start, i),
            });
            match src.get(i) {
                Some(b',') => i += 1,
                Some(b'}') if i + 1 == n => break,
                _ => return false,
            }
        }
        // The first record's keys, all of them in order: no repeats.
        (as_first && self.fields.len() == self.keys.len()) || self.check_keys(src).is_ok()
    }

    /// Copies the record's object to `out` in compact form, noting its top-level fields.
    fn object(&mut self, src: &[u8], out: &mut Vec<u8>) -> Result<(), Slow> {
        self.fields.clear();
        let mut i = skip_ws(src, 0);
        if src.get(i) != Some(&b'{') {
            return Err(Slow);
        }
        i += 1;
        out.push(b'{');
        let fields = &mut self.fields;
        members(src, &mut i, out, b'}', |i, out| {
            let key = key(src, i, out)?;
            let start = out.len();
            value(src, i, out, 1)?;
            fields.push(Field {
                key,
                value: (start, out.len()),
            });
            Ok(())
        })?;
        if skip_ws(src, i) != src.len() {
            return Err(Slow);
        }
        self.check_keys(src)
    }

    /// Refuses repeated keys: the first record's keys become the reference, and a record
    /// with the same keys in the same order has no repeats.
    fn check_keys(&mut self, src: &[u8]) -> Result<(), Slow> {
        let same = self.fields.len() == self.keys.len()
            && self
                .fields
                .iter()
                .zip(&self.keys)
                .all(|(f, k)| src[f.key.0..f.key.1] == *k.name());
        if same {
            return Ok(());
        }
        let keys: Vec<(usize, usize)> = self.fields.iter().map(|f| f.key).collect();
        if repeats(src, &keys) {
            return Err(Slow);
        }
        if self.keys.is_empty() {
            self.keys = keys
                .iter()
                .map(|&(a, b)| KeyToken::new(&[&b"\""[..], &src[a..b], b"\":"].concat()))
                .collect();
        }
        Ok(())
    }
}

/// A key as it stands in compact JSON (`"name":`), with two overlapping words of it (its
/// first and last eight bytes, or four for tokens of 4 to 7 bytes): keys are compared with a
/// record's bytes in two loads, not a `memcmp` call.
#[derive(Debug)]
struct KeyToken {
    /// The token's length (`token.len()`, kept beside the words the compare reads).
    len: usize,
    /// Its two words, for tokens of 4 to 16 bytes (`in_words`); others are compared in full.
    words: (u64, u64),
    in_words: bool,
    token: Box<[u8]>,
}

impl KeyToken {
    fn new(token: &[u8]) -> Self {
        Self {
            len: token.len(),
            words: words(token).unwrap_or_default(),
            in_words: (4..=16).contains(&token.len()),
            token: token.into(),
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    /// The key without its quotes and colon.
    fn name(&self) -> &[u8] {
        self.token.get(1..self.len() - 2).unwrap_or_default()
    }

    /// Whether `src` starts with this key.
    fn starts(&self, src: &[u8]) -> bool {
        let Some(head) = src.get(..self.len()) else {
            return false;
        };
        if self.in_words {
            words(head) == Some(self.words)
        } else {
            *head == *self.token
        }
    }
}

/// The first and last eight bytes of `b` (4 for 4 to 7 bytes), overlapping.
fn words(b: &[u8]) -> Option<(u64, u64)> {
    let n = b.len();
    if n >= 8 {
        let word = |at: usize| b[at..].first_chunk::<8>().map(|c| u64::from_le_bytes(*c));
        Some((word(0)?, word(n - 8)?))
    } else {
        let half = |at: usize| {
            b.get(at..)?
                .first_chunk::<4>()
                .map(|c| u32::from_le_bytes(*c))
        };
        Some((u64::from(half(0)?), u64::from(half(n.checked_sub(4)?)?)))
    }
}

/// Decodes a record the old way, as an object. A record that is not one is the server's
/// error, as a page that cannot be decoded is (exit code 3).
fn decode(record: &[u8]) -> Result<Value, Failure> {
    let refused = |why: String| Failure::Api(svc_api::Error::Protocol(why));
    match serde_json::from_slice::<Value>(record) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(refused(
            "the server sent a record that is not a JSON object".to_owned(),
        )),
        // serde_json's reason and position, never the record's values.
        Err(e) => Err(refused(format!(
            "the server sent a record that cannot be read: {e}"
        ))),
    }
}

/// A CSV cell from a value in compact JSON: a string bare, null empty, the rest as JSON,
/// quoted where needed (what [`output::cell`] and the CSV writer make of a [`Value`]).
fn cell(value: &[u8], out: &mut Vec<u8>) -> Result<(), Failure> {
    match value {
        b"null" => Ok(()),
        [b'"', inner @ .., b'"'] if !inner.contains(&b'\\') => {
            output::quote_into(inner, out);
            Ok(())
        }
        [b'"', ..] => {
            let text: String = serde_json::from_slice(value)
                .map_err(|e| Failure::Other(format!("cannot format a record: {e}")))?;
            output::quote_into(text.as_bytes(), out);
            Ok(())
        }
        other => {
            output::quote_into(other, out);
            Ok(())
        }
    }
}

/// Whether any two of `keys` (ranges of `src`) are the same.
fn repeats(src: &[u8], keys: &[(usize, usize)]) -> bool {
    keys.iter()
        .enumerate()
        .any(|(n, &(a, b))| keys[n + 1..].iter().any(|&(c, d)| src[a..b] == src[c..d]))
}

fn skip_ws(src: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = src.get(i) {
        i += 1;
    }
    i
}

/// An object key and its colon, copied to `out`; its range in `src` (without the quotes).
/// Keys with escapes take the slow road.
fn key(src: &[u8], i: &mut usize, out: &mut Vec<u8>) -> Result<(usize, usize), Slow> {
    let start = skip_ws(src, *i);
    if src.get(start) != Some(&b'"') {
        return Err(Slow);
    }
    let end = start + 1 + find_quote_or_backslash(&src[start + 1..]).ok_or(Slow)?;
    if src[end] != b'"' {
        return Err(Slow);
    }
    out.extend_from_slice(&src[start..=end]);
    let colon = skip_ws(src, end + 1);
    if src.get(colon) != Some(&b':') {
        return Err(Slow);
    }
    out.push(b':');
    *i = colon + 1;
    Ok((start + 1, end))
}

/// One JSON value at `src[*i..]`, in compact form, to `out`.
fn value(src: &[u8], i: &mut usize, out: &mut Vec<u8>, depth: usize) -> Result<(), Slow> {
    let start = skip_ws(src, *i);
    *i = start;
    match src.get(start) {
        Some(b'"') => string(src, i, out),
        Some(b'{') if depth < MAX_DEPTH => {
            *i += 1;
            out.push(b'{');
            let mut keys = Vec::new();
            members(src, i, out, b'}', |i, out| {
                keys.push(key(src, i, out)?);
                value(src, i, out, depth + 1)
            })?;
            if repeats(src, &keys) {
                return Err(Slow);
            }
            Ok(())
        }
        Some(b'[') if depth < MAX_DEPTH => {
            *i += 1;
            out.push(b'[');
            members(src, i, out, b']', |i, out| value(src, i, out, depth + 1))
        }
        Some(b't') => literal(src, i, out, b"true"),
        Some(b'f') => literal(src, i, out, b"false"),
        Some(b'n') => literal(src, i, out, b"null"),
        Some(b'-' | b'0'..=b'9') => number(src, i, out),
        _ => Err(Slow),
    }
}

/// The members of an object or the elements of an array, from after its opening bracket to
/// its closing one (`close`, copied too); `member` reads and copies one.
fn members(
    src: &[u8],
    i: &mut usize,
    out: &mut Vec<u8>,
    close: u8,
    mut member: impl FnMut(&mut usize, &mut Vec<u8>) -> Result<(), Slow>,
) -> Result<(), Slow> {
    *i = skip_ws(src, *i);
    if src.get(*i) != Some(&close) {
        loop {
            member(i, out)?;
            *i = skip_ws(src, *i);
            match src.get(*i) {
                Some(b',') => out.push(b','),
                Some(&c) if c == close => break,
                _ => return Err(Slow),
            }
            *i += 1;
        }
    }
    *i += 1;
    out.push(close);
    Ok(())
}

fn literal(src: &[u8], i: &mut usize, out: &mut Vec<u8>, word: &[u8]) -> Result<(), Slow> {
    if src[*i..].starts_with(word) {
        out.extend_from_slice(word);
        *i += word.len();
        Ok(())
    } else {
        Err(Slow)
    }
}

/// A number: a plain integer that fits 64 bits is copied; anything else is formatted as
/// serde_json formats the number it reads (`1.50` → `1.5`, `1E2` → `100.0`, `-0` → `-0.0`).
fn number(src: &[u8], i: &mut usize, out: &mut Vec<u8>) -> Result<(), Slow> {
    let start = *i;
    let token = &src[start..start + number_len(&src[start..])];
    *i = start + token.len();
    if canonical_number(token) {
        out.extend_from_slice(token);
        return Ok(());
    }
    let value: Value = serde_json::from_slice(token).map_err(|_| Slow)?;
    serde_json::to_writer(&mut *out, &value).map_err(|_| Slow)
}

/// The length of the number token at the start of `src` (its characters, not yet checked).
fn number_len(src: &[u8]) -> usize {
    src.iter()
        .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
        .unwrap_or(src.len())
}

/// Whether serde_json writes the number `token` back as it stands:
/// - a plain integer that fits 64 bits (`-0` reads as a float);
/// - a decimal without exponent, of at most 15 significant digits, whose fraction is `0` or
///   does not end in `0`, and that ryu writes without exponent (at most 16 digits before the
///   point, at most 4 zeros after `0.`). Such a decimal is the shortest text of the double
///   nearest to it (two decimals of 15 digits are further apart than a double's precision), and
///   serde_json reads it exactly (its significand and power of ten are both exact doubles), so
///   reading and writing it again gives the same text: `83.89`, `-0.5`, `100.0`, `0.0001`.
///
/// Python's `repr` writes every float of the engine's answers this way unless it needs more
/// digits or an exponent: those go through serde_json.
fn canonical_number(token: &[u8]) -> bool {
    let (negative, rest) = match token {
        [b'-', rest @ ..] => (true, rest),
        rest => (false, rest),
    };
    let int_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let (int, tail) = rest.split_at(int_len);
    if int.is_empty() || (int[0] == b'0' && int.len() > 1) {
        return false;
    }
    let frac = match tail {
        [] => {
            // i64: 18 digits always fit; u64: 19 digits always fit.
            return if negative {
                int.len() <= 18 && int != b"0"
            } else {
                int.len() <= 19
            };
        }
        [b'.', frac @ ..] => frac,
        _ => return false,
    };
    if frac.is_empty() || !frac.iter().all(u8::is_ascii_digit) {
        return false;
    }
    if frac == b"0" {
        return int.len() <= 15;
    }
    if frac.last() == Some(&b'0') {
        return false;
    }
    if int == b"0" {
        let zeros = frac.iter().take_while(|&&b| b == b'0').count();
        zeros <= 4 && frac.len() - zeros <= 15
    } else {
        int.len() + frac.len() <= 15
    }
}

/// A string, as serde_json writes the text it reads: copied as it stands between escapes; the
/// escapes serde_json writes the same (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`) copied
/// too; `\/` and `\u` escapes written as serde_json writes their character (see
/// [`escaped_char`]). A lone surrogate, which serde_json refuses, takes the slow road.
fn string(src: &[u8], i: &mut usize, out: &mut Vec<u8>) -> Result<(), Slow> {
    let mut from = *i;
    let mut j = from + 1;
    loop {
        j += find_quote_or_backslash(&src[j..]).ok_or(Slow)?;
        if src[j] == b'"' {
            break;
        }
        match src.get(j + 1) {
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => j += 2,
            Some(b'/') => {
                out.extend_from_slice(&src[from..j]);
                out.push(b'/');
                j += 2;
                from = j;
            }
            Some(b'u') => {
                out.extend_from_slice(&src[from..j]);
                let (c, len) = unicode_escape(&src[j..]).ok_or(Slow)?;
                escaped_char(c, out);
                j += len;
                from = j;
            }
            _ => return Err(Slow),
        }
    }
    out.extend_from_slice(&src[from..=j]);
    *i = j + 1;
    Ok(())
}

/// The character of the `\uXXXX` escape (or surrogate pair of two) at the start of `src`, and
/// the escape's length; `None` for a malformed escape or a lone surrogate.
fn unicode_escape(src: &[u8]) -> Option<(char, usize)> {
    let hex = |at: usize| -> Option<u32> {
        let digits = src.get(at..at + 4)?;
        digits
            .iter()
            .try_fold(0, |n, &d| Some(n * 16 + char::from(d).to_digit(16)?))
    };
    let first = hex(2)?;
    match first {
        0xD800..=0xDBFF => {
            if src.get(6..8)? != b"\\u" {
                return None;
            }
            let second = hex(8)?;
            if !(0xDC00..=0xDFFF).contains(&second) {
                return None;
            }
            let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
            Some((char::from_u32(code)?, 12))
        }
        0xDC00..=0xDFFF => None,
        code => Some((char::from_u32(code)?, 6)),
    }
}

/// One character inside a string, as serde_json writes it: `"` and `\` escaped, the control
/// characters below U+0020 as their short escape or `\u00xx`, everything else as UTF-8.
fn escaped_char(c: char, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match c {
        '"' => out.extend_from_slice(b"\\\""),
        '\\' => out.extend_from_slice(b"\\\\"),
        '\u{8}' => out.extend_from_slice(b"\\b"),
        '\u{c}' => out.extend_from_slice(b"\\f"),
        '\n' => out.extend_from_slice(b"\\n"),
        '\r' => out.extend_from_slice(b"\\r"),
        '\t' => out.extend_from_slice(b"\\t"),
        c if (c as u32) < 0x20 => {
            let b = c as u8;
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xF)]);
        }
        c => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
    }
}

/// The position of the first `"` or `\` in `s`, eight bytes at a time.
fn find_quote_or_backslash(s: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES * 0x80;
    const QUOTES: u64 = ONES * b'"' as u64;
    const BACKSLASHES: u64 = ONES * b'\\' as u64;
    let mut at = 0;
    while let Some(&chunk) = s.get(at..).and_then(|rest| rest.first_chunk::<8>()) {
        let x = u64::from_le_bytes(chunk);
        let (q, b) = (x ^ QUOTES, x ^ BACKSLASHES);
        // A byte of `q` or `b` is zero where `x` has a quote or a backslash; the lowest flag
        // is exact (borrows only reach the bytes above a zero byte).
        let found = (q.wrapping_sub(ONES) & !q | b.wrapping_sub(ONES) & !b) & HIGH;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    s[at..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\')
        .map(|p| at + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the export wrote before: the record decoded into a `Value` and formatted again.
    fn old_ndjson(record: &str) -> String {
        let value: Value = serde_json::from_str(record).unwrap();
        format!("{value}\n")
    }

    fn ndjson(record: &str) -> String {
        let mut out = Vec::new();
        Formatter::default()
            .ndjson(record.as_bytes(), &mut out)
            .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ndjson_is_what_decoding_and_formatting_gave() {
        for record in [
            r#"{"id":1,"name":"Zürich","note":null,"vip":true,"off":false}"#,
            r#"{"q":"say \"hi\"\n\\ \t\r\b\f","i":1234567890123456789,"j":-123456789012345678}"#,
            r#"{"k":12345678901234567890,"l":-1234567890123456789,"z":-0,"e":0,"m":-1}"#,
            r#"{"total":"1.0","x":"é"}"#,
            r#"{ "id" : 1 , "tags" : [ 1 , 2 , { "a" : [ ] , "b" : { } } ] }"#,
            r#"{"s":"caf\u00e9 \/ \"q\" \\ \n\t\r\b\f \u0001 \ud83d\ude00"}"#,
            r#"{"n":[0,-1,1.5,1.50,1E2,1e-7,-0,-0.0,18446744073709551615,18446744073709551616,-9223372036854775808,-9223372036854775809,123456789012345678901234567890]}"#,
            r#"{"total":"83.89","big":"12345678901234567890","json":"{\"a\": 1}"}"#,
            r#"{"nested":{"b":1,"a":2},"arr":[[],[[]],{}]}"#,
            "{}",
            " {\"a\":1} ",
            // Repeated keys: the first position, the last value, as a map keeps them.
            r#"{"a":1,"b":2,"a":3}"#,
            r#"{"o":{"x":1,"x":2}}"#,
            r#"{"k\u00e9y":1}"#,
        ] {
            assert_eq!(ndjson(record), old_ndjson(record), "{record}");
        }
    }

    #[test]
    fn records_share_the_first_records_keys() {
        let mut f = Formatter::default();
        let mut out = Vec::new();
        for record in [
            r#"{"a":1,"b":2}"#,
            r#"{"a":3,"b":4}"#,
            r#"{"b":5,"a":6}"#,
            r#"{"a":7,"a":8}"#,
            r#"{"c":9}"#,
        ] {
            f.ndjson(record.as_bytes(), &mut out).unwrap();
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"a\":1,\"b\":2}\n{\"a\":3,\"b\":4}\n{\"b\":5,\"a\":6}\n{\"a\":8}\n{\"c\":9}\n"
        );
    }

    #[test]
    fn non_objects_are_errors() {
        for record in ["5", "[1]", "\"x\"", "null"] {
            let e = Formatter::default()
                .ndjson(record.as_bytes(), &mut Vec::new())
                .unwrap_err();
            assert!(e.to_string().contains("not a JSON object"), "{e}");
            let e = Formatter::default()
                .csv(record.as_bytes(), &mut Vec::new())
                .unwrap_err();
            assert!(e.to_string().contains("not a JSON object"), "{e}");
        }
    }

    fn old_csv(records: &[&str]) -> String {
        let values: Vec<Value> = records
            .iter()
            .map(|r| serde_json::from_str(r).unwrap())
            .collect();
        let writer = CsvWriter::new(output::columns(&values[..1]));
        let mut out = Vec::new();
        writer.header(&mut out).unwrap();
        for v in &values {
            writer.row(&mut out, v).unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn csv_is_what_decoding_and_formatting_gave() {
        let records = [
            r#"{"id":1,"name":"a,b","note":null,"tags":[1,2],"q":"say \"hi\"","t":" x","u":"caf\u00e9","n":1.50,"o":{"k":"v"}}"#,
            r#"{"name":"two\nlines","id":2,"extra":"dropped"}"#,
            r#"{"id":3}"#,
            r#"{"id":4,"id":5,"name":"\/"}"#,
            r#"{ "id" : 6 , "name" : "x\r" , "note" : "" , "tags" : true , "q" : false , "t" : -0 , "u" : 1e400 , "n" : null , "o" : [ ] }"#,
        ];
        let mut f = Formatter::default();
        let mut out = Vec::new();
        for r in &records[..4] {
            f.csv(r.as_bytes(), &mut out).unwrap();
        }
        assert_eq!(
            String::from_utf8(out.clone()).unwrap(),
            old_csv(&records[..4])
        );
        // A number serde_json refuses (out of range) is an error, as it was.
        assert!(f.csv(records[4].as_bytes(), &mut out).is_err());
    }

    /// A small xorshift: the same cases on every run, no dependency.
    struct Cases(u64);

    impl Cases {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn numbers_are_what_decoding_and_formatting_gave() {
        let mut cases = Cases(0x9e37_79b9_7f4a_7c15);
        let mut texts: Vec<String> = [
            "0.0",
            "-0.0",
            "0.5",
            "100.0",
            "83.89",
            "1.50",
            "0.0001",
            "0.00001",
            "0.00012",
            "1e-05",
            "1e+16",
            "1.5e16",
            "123456789012345.0",
            "1234567890123456.0",
            "12345678901234567.0",
            "0.123456789012345",
            "0.1234567890123456",
            "1.10",
            "01.5",
            "1.",
            "-.5",
            "9007199254740993.0",
            "100000000000000000.0",
            "0.30000000000000004",
        ]
        .map(str::to_owned)
        .to_vec();
        for _ in 0..4000 {
            let f = f64::from_bits(cases.next());
            if f.is_finite() {
                texts.push(format!("{f}"));
                texts.push(format!("{f:e}"));
                texts.push(format!("{:.*}", cases.below(18) as usize, f));
            }
            // Short decimals, as Python writes most database floats, some with trailing zeros.
            let digits = 1 + cases.below(18) as usize;
            let mantissa: String = (0..digits)
                .map(|_| char::from(b'0' + cases.below(10) as u8))
                .collect();
            let point = cases.below(digits as u64 + 1) as usize;
            let (int, frac) = mantissa.split_at(point);
            let int = int.trim_start_matches('0');
            let int = if int.is_empty() { "0" } else { int };
            let sign = if cases.below(4) == 0 { "-" } else { "" };
            texts.push(format!(
                "{sign}{int}.{}",
                if frac.is_empty() { "0" } else { frac }
            ));
        }
        for text in texts {
            let record = format!(r#"{{"n":{text},"m":[{text}]}}"#);
            if serde_json::from_str::<Value>(&record).is_ok() {
                assert_eq!(ndjson(&record), old_ndjson(&record), "{record}");
            }
        }
    }

    #[test]
    fn escaped_strings_are_what_decoding_and_formatting_gave() {
        let chars = [
            'a',
            'Z',
            ' ',
            '/',
            '"',
            '\\',
            '\u{0}',
            '\u{8}',
            '\u{c}',
            '\n',
            '\r',
            '\t',
            '\u{1f}',
            '\u{7f}',
            'é',
            'ó',
            '€',
            '\u{ffff}',
            '😀',
            '\u{10ffff}',
        ];
        let mut cases = Cases(0x2545_f491_4f6c_dd1d);
        for _ in 0..3000 {
            let mut text = String::from("\"");
            for _ in 0..cases.below(12) {
                let c = chars[cases.below(chars.len() as u64) as usize];
                let short = match c {
                    '"' => Some("\\\""),
                    '\\' => Some("\\\\"),
                    '/' => Some("\\/"),
                    '\u{8}' => Some("\\b"),
                    '\u{c}' => Some("\\f"),
                    '\n' => Some("\\n"),
                    '\r' => Some("\\r"),
                    '\t' => Some("\\t"),
                    _ => None,
                };
                let must_escape = c < ' ' || c == '"' || c == '\\';
                match cases.below(3) {
                    0 if !must_escape => text.push(c),
                    1 if short.is_some() => text.push_str(short.unwrap_or_default()),
                    _ => {
                        for unit in c.encode_utf16(&mut [0; 2]) {
                            if cases.below(2) == 0 {
                                text.push_str(&format!("\\u{unit:04x}"));
                            } else {
                                text.push_str(&format!("\\u{unit:04X}"));
                            }
                        }
                    }
                }
            }
            text.push('"');
            let record = format!(r#"{{"s":{text},"t":[{text}],"{{":1}}"#);
            assert_eq!(ndjson(&record), old_ndjson(&record), "{record}");
        }
        // Lone surrogates: refused, as serde_json refuses them.
        for record in [
            r#"{"s":"\ud83d"}"#,
            r#"{"s":"\ude00x"}"#,
            r#"{"s":"\ud83d\u0041"}"#,
        ] {
            let e = Formatter::default()
                .ndjson(record.as_bytes(), &mut Vec::new())
                .unwrap_err();
            assert!(e.to_string().contains("cannot be read"), "{e}");
        }
    }

    #[test]
    fn key_tokens_compare_every_byte() {
        let text = b"\"abcdefghijklmnopqrstu\":1";
        for n in 1..=text.len() {
            assert!(KeyToken::new(&text[..n]).starts(text), "{n}");
            for flip in 0..n {
                let mut other = text[..n].to_vec();
                other[flip] ^= 1;
                assert!(!KeyToken::new(&other).starts(text), "{n} {flip}");
            }
        }
        assert!(!KeyToken::new(b"\"ab\":").starts(b"\"ab\""));
    }

    #[test]
    fn finds_quotes_and_backslashes() {
        for s in [
            "",
            "\"",
            "abcdefgh\"",
            "abcdefghijklmnop\\x",
            "abcdefghijklmnopq",
            "é\"",
            "abc\\defg\"hij",
            "abcdefg\"\\",
            "abcdefgh\\\"",
            "aaaaaaaaaaaaaaa\"",
            "aaaaaaa\"aaaaaaa\\",
        ] {
            assert_eq!(
                find_quote_or_backslash(s.as_bytes()),
                s.bytes().position(|b| b == b'"' || b == b'\\'),
                "{s}"
            );
        }
    }
}
