//! Python's rules for numbers and truth in text: `int()` and `float()` of a string (Unicode
//! digits, underscores, surrounding white space), and `str.strip()`'s white space.

/// Parses `true`/`false`/`1`/`0` (ASCII case-insensitive).
pub fn parse_bool(raw: &str) -> Option<bool> {
    if raw.eq_ignore_ascii_case("true") || raw == "1" {
        Some(true)
    } else if raw.eq_ignore_ascii_case("false") || raw == "0" {
        Some(false)
    } else {
        None
    }
}

/// Python's `str.isspace()` (Python 3.11): what `strip()`, `int()` and `float()` skip.
pub fn py_is_space(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | '\u{1c}'..=' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python's `str.strip()`.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(py_is_space)
}

/// The zero of every run of Unicode decimal digits (category Nd, Unicode 14 as in Python
/// 3.11); each run holds the digits 0 to 9 in order.
const DECIMAL_ZEROS: [u32; 66] = [
    0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66,
    0xde6, 0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90,
    0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10,
    0x104a0, 0x10d30, 0x11066, 0x110f0, 0x11136, 0x111d0, 0x112f0, 0x11450, 0x114d0, 0x11650,
    0x116c0, 0x11730, 0x118e0, 0x11950, 0x11c50, 0x11d50, 0x11da0, 0x16a60, 0x16ac0, 0x16b50,
    0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6, 0x1e140, 0x1e2f0, 0x1e950, 0x1fbf0,
];

/// The value of a Unicode decimal digit.
fn decimal_digit(c: char) -> Option<u8> {
    let cp = u32::from(c);
    let i = DECIMAL_ZEROS.partition_point(|&z| z <= cp);
    let zero = *DECIMAL_ZEROS.get(i.checked_sub(1)?)?;
    u8::try_from(cp - zero).ok().filter(|d| *d < 10)
}

/// What CPython does before reading a number from text: white space becomes ` `, decimal digits
/// of any script become ASCII digits, and any other non-ASCII character ends the text (as an
/// invalid `?`). Then the ASCII white space around it is dropped.
fn py_number_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() && c != '\u{7f}' {
            out.push(c);
        } else if py_is_space(c) {
            out.push(' ');
        } else if let Some(d) = decimal_digit(c) {
            out.push(char::from(b'0' + d));
        } else {
            out.push('?');
            break;
        }
    }
    out.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r'))
        .to_owned()
}

/// Removes the underscores of Python's number text, which may only stand between two digits.
fn without_underscores(text: &str) -> Option<String> {
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let before = i.checked_sub(1).and_then(|j| b.get(j));
            if !before.is_some_and(u8::is_ascii_digit)
                || !b.get(i + 1).is_some_and(u8::is_ascii_digit)
            {
                return None;
            }
        }
    }
    Some(text.replace('_', ""))
}

/// Python's `int(text)` in base 10: white space around, an optional sign, digits of any script
/// with single underscores between them. The value as canonical decimal text (any size).
pub fn py_int(text: &str) -> Option<String> {
    let t = without_underscores(&py_number_text(text))?;
    let digits = t.strip_prefix(['-', '+']).unwrap_or(&t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(canonical_int(&t))
}

/// Python's `float(text)`: white space around, digits of any script with underscores between
/// digits, an optional fraction and exponent, or `inf`, `infinity` and `nan` in any case.
pub fn py_float(text: &str) -> Option<f64> {
    let t = py_number_text(text);
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, &t[..]),
    };
    let special = match body.to_ascii_lowercase().as_str() {
        "inf" | "infinity" => Some(f64::INFINITY),
        "nan" => Some(f64::NAN),
        _ => None,
    };
    if let Some(f) = special {
        return Some(if negative { -f } else { f });
    }
    let plain = without_underscores(body)?;
    // digits [. digits] | . digits, then [e [sign] digits].
    let b = plain.as_bytes();
    let mut at = 0;
    let int_digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    at += int_digits;
    let mut frac_digits = 0;
    if b.get(at) == Some(&b'.') {
        at += 1;
        frac_digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        at += frac_digits;
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    if matches!(b.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(b.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let exp_digits = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        if exp_digits == 0 {
            return None;
        }
        at += exp_digits;
    }
    if at != b.len() {
        return None;
    }
    let f: f64 = plain.parse().ok()?;
    Some(if negative { -f } else { f })
}
/// Python's `int(text, 16)`: like [`py_int`], with hex digits (ASCII letters only) and an
/// optional `0x` prefix, which an underscore may follow. `None` when Python raises, or when
/// the value needs more than 128 bits (the caller's limit, not Python's); the sign apart.
pub fn py_int_hex(text: &str) -> Option<(bool, u128)> {
    let t = py_number_text(text);
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, &t[..]),
    };
    let digits = match body.get(..2) {
        Some("0x" | "0X") => body[2..].strip_prefix('_').unwrap_or(&body[2..]),
        _ => body,
    };
    let plain = without_underscores(digits)?;
    if plain.is_empty() || !plain.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let value = u128::from_str_radix(plain.trim_start_matches('0'), 16)
        .ok()
        .or_else(|| plain.bytes().all(|b| b == b'0').then_some(0))?;
    Some((negative, value))
}

/// `-007` -> `-7`, `-0` -> `0`: digits (ASCII, no underscores) with an optional sign.
pub fn canonical_int(text: &str) -> String {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let digits = digits.trim_start_matches('0');
    match (digits.is_empty(), negative) {
        (true, _) => "0".to_owned(),
        (false, true) => format!("-{digits}"),
        (false, false) => digits.to_owned(),
    }
}
