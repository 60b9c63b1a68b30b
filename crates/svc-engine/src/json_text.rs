//! JSON text written fast: strings escaped (eight bytes at a time), integers, zero-padded
//! digits. What every answer's writer (records, aggregates, read-only SQL) builds on.

/// The value of ASCII digits (`None` when empty or when one is not a digit).
pub fn digits(s: &[u8]) -> Option<u32> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(s.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0')))
}

/// Whether `bytes` hold a byte that a JSON string must escape: `"`, `\` or a control byte
/// (below 0x20). Eight bytes at a time, with the usual word tests ("has a byte less than n",
/// "has a zero byte" of the word XOR a repeated byte), which are exact for "is there any".
fn needs_escape(bytes: &[u8]) -> bool {
    has_special_byte(bytes, false)
}

/// Whether `bytes` are ASCII that a JSON string holds as it is: no byte to escape and none
/// above 0x7f, so they are UTF-8 without a check of their own (one pass instead of two).
#[inline(always)]
fn plain_json_ascii(bytes: &[u8]) -> bool {
    !has_special_byte(bytes, true)
}

/// [`needs_escape`], and with `non_ascii` also any byte above 0x7f.
#[inline(always)]
fn has_special_byte(bytes: &[u8], non_ascii: bool) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let has_byte = |word: u64, byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x & HIGHS != 0
    };
    let special = |word: u64| {
        let control = word.wrapping_sub(ONES * 0x20) & !word & HIGHS != 0;
        control || (non_ascii && word & HIGHS != 0) || has_byte(word, b'"') || has_byte(word, b'\\')
    };
    let word = |eight: &[u8; 8]| u64::from_ne_bytes(*eight);
    // The tests say whether any byte matches, so a byte may be tested twice: the last bytes
    // are tested as the last whole word, and 4 to 7 bytes as their first and last four.
    if let Some(last) = bytes.last_chunk::<8>() {
        let mut words = bytes.chunks_exact(8);
        for chunk in &mut words {
            if chunk.first_chunk::<8>().is_some_and(|w| special(word(w))) {
                return true;
            }
        }
        return !words.remainder().is_empty() && special(word(last));
    }
    if let (Some(head), Some(tail)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        let mut eight = [0; 8];
        eight[..4].copy_from_slice(head);
        eight[4..].copy_from_slice(tail);
        return special(word(&eight));
    }
    bytes
        .iter()
        .any(|&b| b < 0x20 || b == b'"' || b == b'\\' || (non_ascii && b > 0x7f))
}

/// Writes text as the engine writes a `str` value: as it is when it is UTF-8 (the common
/// case: ASCII with nothing to escape is copied after one pass), else with each bad sequence
/// replaced, as Python's decoding does.
#[inline(always)]
pub fn write_json_text(buf: &mut Vec<u8>, t: &[u8]) {
    if plain_json_ascii(t) {
        buf.push(b'"');
        put(buf, t);
        buf.push(b'"');
    } else if std::str::from_utf8(t).is_ok() {
        write_json_utf8(buf, t);
    } else {
        write_json_str(buf, &String::from_utf8_lossy(t));
    }
}

/// Writes `s` as a JSON string.
pub fn write_json_str(buf: &mut Vec<u8>, s: &str) {
    write_json_utf8(buf, s.as_bytes());
}

/// Writes UTF-8 `bytes` as a JSON string. Escapes are all ASCII, and no byte of a multi-byte
/// UTF-8 sequence is ASCII, so the bytes can be scanned one by one.
fn write_json_utf8(buf: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.push(b'"');
    if !needs_escape(bytes) {
        // The common case: copied as it is.
        buf.extend_from_slice(bytes);
        buf.push(b'"');
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => {
                buf.extend_from_slice(&bytes[start..i]);
                buf.extend_from_slice(b"\\u00");
                buf.push(HEX[usize::from(b >> 4)]);
                buf.push(HEX[usize::from(b & 15)]);
                start = i + 1;
                continue;
            }
            _ => continue,
        };
        buf.extend_from_slice(&bytes[start..i]);
        buf.extend_from_slice(esc);
        start = i + 1;
    }
    buf.extend_from_slice(&bytes[start..]);
    buf.push(b'"');
}

/// Appends `s` to `buf`. A record is mostly short pieces (keys, words, dates): those of 4 to
/// 16 bytes are copied as two overlapping fixed-size words, which the compiler writes as a few
/// moves, where a copy of unknown length is a call to `memcpy`.
#[inline(always)]
pub fn put(buf: &mut Vec<u8>, s: &[u8]) {
    match s.len() {
        8..=16 => put_overlapping::<8, 16>(buf, s),
        4..=7 => put_overlapping::<4, 8>(buf, s),
        _ => buf.extend_from_slice(s),
    }
}

/// [`put`] of `s` of `W` to `TWICE` (= 2 x `W`) bytes: its first and its last `W` bytes.
#[inline(always)]
fn put_overlapping<const W: usize, const TWICE: usize>(buf: &mut Vec<u8>, s: &[u8]) {
    let (n, at) = (s.len(), buf.len());
    buf.extend_from_slice(&[0; TWICE]);
    if let (Some(dst), Some(head), Some(tail)) = (
        buf.get_mut(at..at + TWICE),
        s.first_chunk::<W>(),
        s.last_chunk::<W>(),
    ) {
        dst[..W].copy_from_slice(head);
        dst[n - W..n].copy_from_slice(tail);
    }
    buf.truncate(at + n);
}

/// Writes an integer in decimal, without going through `fmt`.
#[inline]
pub fn write_i64(buf: &mut Vec<u8>, i: i64) {
    put(buf, itoa::Buffer::new().format(i).as_bytes());
}

/// Writes `n` in decimal with zeros in front up to `width` digits, as `{:0width$}` does (a
/// wider number is written whole), without going through `fmt`.
pub fn write_digits(buf: &mut Vec<u8>, n: u64, width: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let len = digits.len() - at;
    buf.extend(std::iter::repeat_n(b'0', width.saturating_sub(len)));
    buf.extend_from_slice(&digits[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_str(s: &str) -> String {
        let mut buf = Vec::new();
        write_json_str(&mut buf, s);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn short_pieces_are_appended_whole() {
        let piece: Vec<u8> = (b'a'..=b'z').chain(b'A'..=b'Z').collect();
        for len in 0..piece.len() {
            for before in [0, 1, 7, 100] {
                let mut buf = vec![b'#'; before];
                put(&mut buf, &piece[..len]);
                let mut want = vec![b'#'; before];
                want.extend_from_slice(&piece[..len]);
                assert_eq!(buf, want, "{len} after {before}");
            }
        }
    }

    #[test]
    fn escape_detection_matches_a_byte_by_byte_check() {
        let slow = |b: &[u8]| b.iter().any(|&c| c < 0x20 || c == b'"' || c == b'\\');
        let plain = |b: &[u8]| b.is_ascii() && !slow(b);
        // Every byte value at every position of words and remainders.
        for len in 1..=20 {
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = byte;
                    assert_eq!(needs_escape(&bytes), slow(&bytes), "{bytes:?}");
                    assert_eq!(plain_json_ascii(&bytes), plain(&bytes), "{bytes:?}");
                    bytes[0] = 0xc3;
                    assert_eq!(needs_escape(&bytes), slow(&bytes), "{bytes:?}");
                    assert_eq!(plain_json_ascii(&bytes), plain(&bytes), "{bytes:?}");
                }
            }
        }
    }

    #[test]
    fn strings_are_json_strings() {
        for s in [
            "",
            "plain ascii text",
            "Kraków, São Paulo, 李",
            "quote \" backslash \\ newline \n tab \t cr \r bell \u{7} end",
            "Gift wrap: \"yes\", 100% please",
            "\u{1f}\u{0}",
        ] {
            let written = json_str(s);
            assert_eq!(written, serde_json::to_string(s).unwrap(), "{s:?}");
            assert_eq!(serde_json::from_str::<String>(&written).unwrap(), s);
        }
    }
}
