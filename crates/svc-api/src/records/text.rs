//! Records as their JSON text, cut from the page they came in without copying
//! ([`Records::stream_text`](super::Records::stream_text)).
//!
//! A page is read in one pass by a small JSON scanner that checks the whole body's syntax
//! (what serde_json checks when it reads a record into a `RawValue`) and notes where each record
//! of `results` starts and ends; the rest of the page (`count`, `next`, `previous`) is decoded
//! by serde_json with `results` read as empty. Whatever the scanner does not take on (a body
//! that is not UTF-8, a `results` key written with escapes or given twice, nesting deeper than
//! [`MAX_DEPTH`]) is read by serde_json instead, as [`RawRecord`](super::RawRecord)s are, and
//! the records copied: a page that one way accepts, the other accepts too.

use bytes::Bytes;
use http::Response;
use serde::de::IgnoredAny;
use svc_model::ListPage;

use crate::error::{Error, Result};

/// Nesting the scanner follows (the page itself is level 1); deeper pages go to serde_json,
/// whose own limit is 128.
const MAX_DEPTH: usize = 100;

/// A record as the server sent it: its JSON text, a slice of the page's body (no copy), checked
/// to be one valid JSON value in valid UTF-8 but not decoded. Made by
/// [`Records::stream_text`](super::Records::stream_text).
///
/// [`as_bytes`](Self::as_bytes) hands out the text at no cost; [`as_str`](Self::as_str) checks
/// its UTF-8 again (this crate has no `unsafe` code to skip that); [`decode`](Self::decode)
/// reads it into any `T: DeserializeOwned`. Whitespace, escapes and number forms are kept as
/// sent, and keys are not checked for repeats.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RecordText {
    bytes: Bytes,
}

impl RecordText {
    /// The record's JSON text.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The record's JSON text as a `&str` (checked to be UTF-8 on each call: prefer
    /// [`as_bytes`](Self::as_bytes) where bytes do).
    pub fn as_str(&self) -> &str {
        // Never empty in fact: the text was checked to be UTF-8 when the page was read.
        std::str::from_utf8(&self.bytes).unwrap_or_default()
    }

    /// The record's JSON text, as the shared handle on the page's body it is.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    /// Decodes the record into `T`.
    ///
    /// ```
    /// # fn run(record: svc_api::RecordText) -> serde_json::Result<()> {
    /// let record: serde_json::Map<String, serde_json::Value> = record.decode()?;
    /// # let _ = record;
    /// # Ok(()) }
    /// ```
    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_slice(&self.bytes)
    }
}

impl AsRef<[u8]> for RecordText {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl std::fmt::Display for RecordText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for RecordText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RecordText").field(&self.as_str()).finish()
    }
}

/// Reads a page of records as [`RecordText`]s.
pub(super) fn decode_page(response: Response<Bytes>) -> Result<ListPage<RecordText>> {
    let status = response.status();
    let body = response.into_body();
    let Some(page) = split(&body) else {
        // serde_json decides, as for `RawRecord`s: its error, or the records copied.
        let page: ListPage<Box<serde_json::value::RawValue>> =
            serde_json::from_slice(&body).map_err(|e| Error::decode(status, body.clone(), e))?;
        return Ok(ListPage {
            count: page.count,
            next: page.next,
            previous: page.previous,
            results: page
                .results
                .into_iter()
                .map(|raw| RecordText {
                    bytes: Bytes::copy_from_slice(raw.get().as_bytes()),
                })
                .collect(),
        });
    };
    // The rest of the page, with `results` as `[]`; the syntax is already checked, so what
    // serde_json can refuse here is a field (`count` missing or not a number): its error then
    // comes from reading the body as sent, for the right position.
    let (start, end) = page.results;
    let mut envelope = Vec::with_capacity(body.len() - (end - start) + 2);
    envelope.extend_from_slice(&body[..start]);
    envelope.extend_from_slice(b"[]");
    envelope.extend_from_slice(&body[end..]);
    let envelope: ListPage<IgnoredAny> = serde_json::from_slice(&envelope).map_err(|_| {
        match serde_json::from_slice::<ListPage<IgnoredAny>>(&body) {
            Err(e) => Error::decode(status, body.clone(), e),
            // Not reached: the same fields, read from the body as sent.
            Ok(_) => Error::Protocol("the server sent a page that cannot be read".to_owned()),
        }
    })?;
    Ok(ListPage {
        count: envelope.count,
        next: envelope.next,
        previous: envelope.previous,
        results: page
            .records
            .into_iter()
            .map(|(a, b)| RecordText {
                bytes: body.slice(a..b),
            })
            .collect(),
    })
}

/// Where a page's `results` array and each of its records are in the body.
#[derive(Debug, PartialEq)]
struct Split {
    /// The array, brackets included.
    results: (usize, usize),
    records: Vec<(usize, usize)>,
}

/// Checks the syntax of the whole page and finds its records; `None` for anything serde_json
/// should read instead (see the module's documentation), including every syntax error.
fn split(body: &[u8]) -> Option<Split> {
    std::str::from_utf8(body).ok()?;
    let mut scan = Scan { s: body, i: 0 };
    let mut found = None;
    scan.ws();
    scan.at(b'{')?;
    scan.members(b'}', |scan| {
        let key = scan.key()?;
        if key == b"\"results\"" && found.is_none() {
            found = Some(scan.records()?);
            Some(())
        } else if key.contains(&b'\\') || key == b"\"results\"" {
            // `results` again, or possibly written with an escape.
            None
        } else {
            scan.value(2)
        }
    })?;
    scan.ws();
    (scan.i == body.len()).then_some(())?;
    found
}

/// The keys of the record read last, each with its quotes and colon (`"name":`): checked
/// bytes that the next record's keys are compared with.
#[derive(Default)]
struct Keys(Vec<Box<[u8]>>);

/// A position in a body being checked.
struct Scan<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.i += 1;
        Some(b)
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        (self.next()? == b).then_some(())
    }

    /// Skips JSON's whitespace.
    fn ws(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    /// The `results` array: each element checked and noted.
    fn records(&mut self) -> Option<Split> {
        let start = self.i;
        self.at(b'[')?;
        let mut records = Vec::new();
        let mut keys = Keys::default();
        self.members(b']', |scan| {
            let from = scan.i;
            if scan.flat_object(&mut keys).is_none() {
                // Anything else, in full.
                scan.i = from;
                scan.value(3)?;
            }
            records.push((from, scan.i));
            Some(())
        })?;
        Some(Split {
            results: (start, self.i),
            records,
        })
    }

    /// The usual record, quickly: an object without whitespace whose values are strings,
    /// numbers and literals. A key written as in the record before (`"name":`, the same bytes
    /// at the same place) is known to be valid without reading it again. `None` (the position
    /// then anywhere in the record) for anything else: the caller reads the record in full.
    fn flat_object(&mut self, keys: &mut Keys) -> Option<()> {
        self.expect(b'{')?;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        let mut n = 0;
        loop {
            match keys.0.get(n) {
                Some(key) if starts_with(&self.s[self.i..], key) => self.i += key.len(),
                _ => {
                    let from = self.i;
                    self.string()?;
                    self.expect(b':')?;
                    keys.0.truncate(n);
                    keys.0.push(self.s[from..self.i].into());
                }
            }
            n += 1;
            match self.peek()? {
                b'"' => self.string().map(drop)?,
                b'-' | b'0'..=b'9' => self.number()?,
                b't' => self.word(b"true")?,
                b'f' => self.word(b"false")?,
                b'n' => self.word(b"null")?,
                _ => return None,
            }
            match self.next()? {
                b',' => {}
                b'}' => return Some(()),
                _ => return None,
            }
        }
    }

    /// One value, at nesting level `depth`.
    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' if depth < MAX_DEPTH => self.members(b'}', |scan| {
                scan.key()?;
                scan.value(depth + 1)
            }),
            b'[' if depth < MAX_DEPTH => self.members(b']', |scan| scan.value(depth + 1)),
            b't' => self.word(b"true"),
            b'f' => self.word(b"false"),
            b'n' => self.word(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// Whether the scan is at `b` (without moving past it: [`members`](Self::members) does).
    fn at(&mut self, b: u8) -> Option<()> {
        (self.peek()? == b).then_some(())
    }

    /// The members of an object or the elements of an array, the scan at its opening
    /// bracket: `member` reads one (the scan at its first byte), `close` ends them.
    #[inline(always)]
    fn members(
        &mut self,
        close: u8,
        mut member: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.i += 1;
        self.ws();
        if self.peek()? == close {
            self.i += 1;
            return Some(());
        }
        loop {
            member(self)?;
            self.ws();
            match self.next()? {
                b',' => self.ws(),
                c if c == close => return Some(()),
                _ => return None,
            }
        }
    }

    /// An object's key and its colon, and the whitespace after: the key as written, quotes
    /// included.
    fn key(&mut self) -> Option<&'a [u8]> {
        let key = self.string()?;
        self.ws();
        self.expect(b':')?;
        self.ws();
        Some(key)
    }

    fn word(&mut self, word: &[u8]) -> Option<()> {
        self.s[self.i..].starts_with(word).then_some(())?;
        self.i += word.len();
        Some(())
    }

    /// A number: `-`, then `0` or digits not starting with `0`, then an optional fraction
    /// and exponent, each with at least one digit.
    fn number(&mut self) -> Option<()> {
        if self.peek()? == b'-' {
            self.i += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            self.some_digits()?;
        }
        Some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn some_digits(&mut self) -> Option<()> {
        let from = self.i;
        self.digits();
        (self.i > from).then_some(())
    }

    /// A string, quotes included (the scan is at its opening quote): no control character,
    /// only JSON's escapes. Gives its text as written, quotes included.
    #[inline(always)]
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        self.expect(b'"')?;
        loop {
            self.i += find_special(&self.s[self.i..])?;
            match self.s[self.i] {
                b'"' => {
                    self.i += 1;
                    return Some(&self.s[start..self.i]);
                }
                b'\\' => match self.s.get(self.i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => self.i += 2,
                    b'u' => {
                        let hex = self.s.get(self.i + 2..self.i + 6)?;
                        hex.iter().all(u8::is_ascii_hexdigit).then_some(())?;
                        self.i += 6;
                    }
                    _ => return None,
                },
                // A control character, which JSON strings may not hold as it is.
                _ => return None,
            }
        }
    }
}

/// Whether `s` starts with `key`: for keys of 4 to 16 bytes, two overlapping loads of each
/// instead of a call to `memcmp`.
#[inline(always)]
fn starts_with(s: &[u8], key: &[u8]) -> bool {
    let n = key.len();
    let Some(head) = s.get(..n) else {
        return false;
    };
    let word = |b: &[u8], at: usize| b[at..].first_chunk::<8>().map(|c| u64::from_le_bytes(*c));
    let half = |b: &[u8], at: usize| b[at..].first_chunk::<4>().map(|c| u32::from_le_bytes(*c));
    match n {
        8..=16 => word(head, 0) == word(key, 0) && word(head, n - 8) == word(key, n - 8),
        4..=7 => half(head, 0) == half(key, 0) && half(head, n - 4) == half(key, n - 4),
        _ => head == key,
    }
}

/// The position of the first `"`, `\` or control character (below U+0020) in `s`, eight bytes
/// at a time.
#[inline(always)]
fn find_special(s: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::MAX / 255;
    const HIGH: u64 = ONES * 0x80;
    const QUOTES: u64 = ONES * b'"' as u64;
    const BACKSLASHES: u64 = ONES * b'\\' as u64;
    const SPACES: u64 = ONES * b' ' as u64;
    let mut at = 0;
    while let Some(&chunk) = s.get(at..).and_then(|rest| rest.first_chunk::<8>()) {
        let x = u64::from_le_bytes(chunk);
        let (q, b) = (x ^ QUOTES, x ^ BACKSLASHES);
        // A byte of `q` or `b` is zero where `x` has a quote or a backslash, and a byte of `x`
        // below 0x20 borrows in `x - SPACES`. Each test's lowest flag is exact (borrows only
        // reach the bytes above a flagged byte), so the lowest flag of the three is too.
        let found =
            (q.wrapping_sub(ONES) & !q | b.wrapping_sub(ONES) & !b | x.wrapping_sub(SPACES) & !x)
                & HIGH;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    s[at..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < b' ')
        .map(|p| at + p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    fn page(body: &str) -> Result<ListPage<RecordText>> {
        let response = Response::builder()
            .status(StatusCode::OK)
            .body(Bytes::from(body.to_owned()))
            .unwrap();
        decode_page(response)
    }

    /// What `RawRecord`s give for the same body: the reference.
    fn raw(body: &str) -> serde_json::Result<ListPage<Box<serde_json::value::RawValue>>> {
        serde_json::from_str(body)
    }

    fn same_as_raw(body: &str) {
        match (page(body), raw(body)) {
            (Ok(text), Ok(raw)) => {
                assert_eq!(text.count, raw.count, "{body}");
                assert_eq!(text.next, raw.next, "{body}");
                assert_eq!(text.previous, raw.previous, "{body}");
                let texts: Vec<&str> = text.results.iter().map(RecordText::as_str).collect();
                let raws: Vec<&str> = raw.results.iter().map(|r| r.get()).collect();
                assert_eq!(texts, raws, "{body}");
            }
            (Err(Error::Decode(e)), Err(raw)) => {
                assert_eq!(e.source.to_string(), raw.to_string(), "{body}");
            }
            (text, raw) => panic!("{body}: text {text:?}, raw {raw:?}"),
        }
    }

    #[test]
    fn pages_read_as_raw_records_do() {
        for body in [
            r#"{"count":2,"next":null,"previous":null,"results":[{"id":1,"name":"a"},{"id":2}]}"#,
            r#" { "results" : [ { "id" : 1 } , 5 , "x" , [ ] , null , true , -1.5e+3 ] , "count" : 7 , "next" : "http://h/p?page=2" } "#,
            r#"{"count":0,"results":[]}"#,
            r#"{"count":1,"results":[{"s":"q\"\\\/\b\f\n\r\t\u00e9\uD83D\ude00 é 😀","n":[0,-0,0.5,1e5,1E-5,-12.5e+10],"o":{"a":{"b":[[]]}}}],"extra":{"k":[1,{"x":null}]}}"#,
            // Escaped `results`, twice, missing: serde_json decides.
            r#"{"count":1,"res\u0075lts":[{"id":1}]}"#,
            r#"{"count":1,"results":[{"id":1}],"results":[]}"#,
            r#"{"count":1}"#,
            r#"{}"#,
            // Syntax errors: serde_json's error, with its position.
            r#"{"count":1,"results":[{"id":01}]}"#,
            r#"{"count":1,"results":[{"id":1.}]}"#,
            r#"{"count":1,"results":[{"id":-}]}"#,
            r#"{"count":1,"results":[{"id":1e}]}"#,
            r#"{"count":1,"results":[{"id":1,}]}"#,
            r#"{"count":1,"results":[{"id":1}],}"#,
            r#"{"count":1,"results":[{"id":1},]}"#,
            r#"{"count":1,"results":[{"id":tru}]}"#,
            "{\"count\":1,\"results\":[{\"s\":\"a\tb\"}]}",
            r#"{"count":1,"results":[{"s":"\x"}]}"#,
            r#"{"count":1,"results":[{"s":"\u12g4"}]}"#,
            r#"{"count":1,"results":[{"s":"abc}]}"#,
            r#"{"count":1,"results":[{"id":1}]} x"#,
            r#"{"count":1,"results":[{"id":1}]"#,
            r#"{"count":"1","results":[{"id":1}]}"#,
            r#"{"count":-1,"results":[{"id":1}]}"#,
            r#"{"count":1,"next":5,"results":[{"id":1}]}"#,
            r#"[{"id":1}]"#,
            "",
        ] {
            same_as_raw(body);
        }
        let deep = format!(
            r#"{{"count":1,"results":[{}1{}]}}"#,
            "[".repeat(150),
            "]".repeat(150)
        );
        same_as_raw(&deep);
        let deep_ok = format!(
            r#"{{"count":1,"results":[{}1{}]}}"#,
            "[".repeat(120),
            "]".repeat(120)
        );
        same_as_raw(&deep_ok);
    }

    /// Every page one byte away from valid ones (replaced, dropped or added): the scanner
    /// never takes what serde_json refuses, and takes the same records from what it accepts.
    #[test]
    fn mutated_pages_read_as_raw_records_do() {
        let seeds = [
            r#"{"count":2,"next":"http://h/?page=2","previous":null,"results":[{"id":1,"s":"a\"b\u00e9","n":-1.5e+3,"t":true,"f":false,"z":null},{"id":2,"o":{"a":[1,{"b":"c"}]},"e":[]}]}"#,
            r#" { "results" : [ { "id" : 10 , "x" : 0.25 } , [ 1 , 2 ] ] , "count" : 2 } "#,
        ];
        let alphabet = b" \t\n\"\\/{}[]:,-+.eE0159tfnulrsabx";
        let mut state: u64 = 0x853c_49e6_748f_ea9b;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..20_000 {
            let mut body = seeds[next(seeds.len())].as_bytes().to_vec();
            for _ in 0..1 + next(2) {
                let at = next(body.len());
                let byte = alphabet[next(alphabet.len())];
                match next(3) {
                    0 => body[at] = byte,
                    1 => {
                        body.remove(at);
                    }
                    _ => body.insert(at, byte),
                }
            }
            if let Ok(body) = std::str::from_utf8(&body) {
                same_as_raw(body);
            }
        }
    }

    #[test]
    fn records_share_the_pages_body() {
        let body = Bytes::from_static(br#"{"count":1,"results":[{"id":1}]}"#);
        let response = Response::new(body.clone());
        let page = decode_page(response).unwrap();
        let record = &page.results[0];
        assert_eq!(record.as_bytes(), br#"{"id":1}"#);
        assert_eq!(record.as_bytes().as_ptr(), body[22..].as_ptr());
        let map: serde_json::Map<String, serde_json::Value> = record.decode().unwrap();
        assert_eq!(map["id"], 1);
        assert_eq!(record.to_string(), r#"{"id":1}"#);
    }

    #[test]
    fn starts_with_compares_every_byte() {
        let text = b"\"abcdefghijklmnopqrstu\":1";
        for n in 0..=text.len() {
            let key = &text[..n];
            assert!(starts_with(text, key), "{n}");
            for flip in 0..n {
                let mut other = key.to_vec();
                other[flip] ^= 1;
                assert!(!starts_with(text, &other), "{n} {flip}");
            }
        }
        assert!(!starts_with(b"\"ab\"", b"\"ab\":"));
    }

    #[test]
    fn finds_quotes_backslashes_and_control_characters() {
        // Each special byte at every place of a text longer than two words, after plain ASCII
        // or after UTF-8 text (whose bytes are all above 0x7f).
        for special in [b'"', b'\\', 0, 0x1f, b'\n'] {
            for prefix in ["", "é"] {
                for at in 0..20 {
                    let mut text = prefix.as_bytes().to_vec();
                    text.extend(std::iter::repeat_n(b'a', at));
                    let want = text.len();
                    text.push(special);
                    text.extend_from_slice("ÿ aaaaaaaa \"".as_bytes());
                    assert_eq!(find_special(&text), Some(want), "{text:?}");
                }
            }
        }
        for clean in ["", "a", "abcdefghijklmnopq", "\u{7f}\u{80}ÿ é 😀 abcdefgh"] {
            assert_eq!(find_special(clean.as_bytes()), None, "{clean:?}");
        }
    }
}
