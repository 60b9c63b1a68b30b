//! Python's `repr()` of a float (the shortest text that reads back to it) and of a decimal
//! number's text.

use crate::json_text::write_digits;

/// Python's `repr(float)`: the shortest text that reads back as the same float, in fixed
/// notation for exponents -4 to 15 (`57.0`, `0.0001`) and scientific otherwise (`1e+16`,
/// `1.5e-05`).
pub fn py_float_repr(f: f64) -> String {
    let mut out = Vec::with_capacity(24);
    write_py_float_repr(&mut out, f);
    // Only ASCII is ever written.
    String::from_utf8(out).unwrap_or_default()
}

/// Writes Python's `repr(float)` (see [`py_float_repr`]) into `buf`, with no allocation but
/// `buf`'s own growth. Both Python and [`ryu`] give the shortest digits that read back as the
/// same float (the nearest such when there are several), so only the layout differs: ryu's
/// text is read back as significant digits and an exponent, then laid out as Python lays them
/// out. A page of records writes one per float value, so this is on the list path.
pub fn write_py_float_repr(buf: &mut Vec<u8>, f: f64) {
    if f.is_nan() {
        buf.extend_from_slice(b"nan");
        return;
    }
    if f.is_infinite() {
        let text: &[u8] = if f > 0.0 { b"inf" } else { b"-inf" };
        buf.extend_from_slice(text);
        return;
    }
    if f.is_sign_negative() {
        buf.push(b'-');
    }
    let f = f.abs();
    if let Some((n, places)) = short_decimal(f) {
        write_short_decimal(buf, n, places);
        return;
    }
    let mut shortest = ryu::Buffer::new();
    let text = shortest.format_finite(f).as_bytes();
    let (digits, exp) = match ShortestDigits::read(text) {
        Some(read) => read,
        None => {
            // Zero (ryu writes `0.0`; the sign is written above).
            buf.extend_from_slice(b"0.0");
            return;
        }
    };
    let digits = digits.as_slice();
    if (-4..16).contains(&exp) {
        if exp < 0 {
            buf.extend_from_slice(b"0.");
            buf.resize(buf.len() + (-exp - 1) as usize, b'0');
            buf.extend_from_slice(digits);
        } else {
            let int_len = exp as usize + 1;
            match (digits.get(..int_len), digits.get(int_len..)) {
                (Some(int), Some(frac)) if !frac.is_empty() => {
                    buf.extend_from_slice(int);
                    buf.push(b'.');
                    buf.extend_from_slice(frac);
                }
                _ => {
                    buf.extend_from_slice(digits);
                    buf.resize(buf.len() + int_len.saturating_sub(digits.len()), b'0');
                    buf.extend_from_slice(b".0");
                }
            }
        }
    } else {
        let (first, rest) = digits.split_at(digits.len().min(1));
        buf.extend_from_slice(first);
        if !rest.is_empty() {
            buf.push(b'.');
            buf.extend_from_slice(rest);
        }
        buf.push(b'e');
        buf.push(if exp < 0 { b'-' } else { b'+' });
        // Python writes at least two exponent digits: `1e-05`, `1e+16`, `1e+100`.
        write_digits(buf, u64::from(exp.unsigned_abs()), 2);
    }
}

/// Powers of ten that are exact floats, for [`short_decimal`].
const POWERS_OF_TEN: [f64; 7] = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6];

/// `(n, places)` when `f` (finite, not negative) is the float nearest to `n / 10^places` for
/// an `n` below 10^15 and at most six places, the fewest places that do: the values a database
/// mostly holds (`57.0`, `88378.12`). Every decimal of at most 15 significant digits reads as
/// a float of its own (`DBL_DIG`), so no shorter text reads as `f`: this is the shortest text
/// Python's `repr` writes, found without the general algorithm. `n / 10^places` is exact
/// division of two exact floats, rounded as reading the decimal text rounds it.
#[inline]
fn short_decimal(f: f64) -> Option<(u64, usize)> {
    if !(1e-4..1e15).contains(&f) {
        // Outside, Python writes an exponent, or the digits may pass 15.
        return None;
    }
    for (places, &scale) in POWERS_OF_TEN.iter().enumerate() {
        let scaled = f * scale;
        if scaled >= 1e15 {
            return None;
        }
        // A candidate only (the test below is exact): `as` truncates, so add a half.
        let n = (scaled + 0.5) as u64;
        if n as f64 / scale == f {
            return Some((n, places));
        }
    }
    None
}

/// Writes `n / 10^places` in fixed notation, as Python's `repr` lays out a float below 10^16:
/// `57.0`, `0.05`, `88378.12`.
fn write_short_decimal(buf: &mut Vec<u8>, n: u64, places: usize) {
    let mut text = itoa::Buffer::new();
    let digits = text.format(n).as_bytes();
    match digits.len().checked_sub(places) {
        _ if places == 0 => {
            buf.extend_from_slice(digits);
            buf.extend_from_slice(b".0");
        }
        Some(int_len) if int_len > 0 => {
            let (int, frac) = digits.split_at(int_len);
            buf.extend_from_slice(int);
            buf.push(b'.');
            buf.extend_from_slice(frac);
        }
        _ => {
            buf.extend_from_slice(b"0.");
            buf.resize(buf.len() + places - digits.len(), b'0');
            buf.extend_from_slice(digits);
        }
    }
}

/// The significant digits of a float's shortest text (at most 17, no leading or trailing
/// zeros), read from ryu's `123.45`, `0.00012`, `1.5e-7` or `1e16` forms.
struct ShortestDigits {
    digits: [u8; 24],
    len: usize,
}

impl ShortestDigits {
    /// The digits and the decimal exponent of the first one (`123.45`: `12345` and 2); `None`
    /// for zero.
    fn read(text: &[u8]) -> Option<(Self, i32)> {
        let e_at = text.iter().position(|&c| c == b'e').unwrap_or(text.len());
        let (mantissa, exp_text) = text.split_at(e_at);
        let exp_text = exp_text.get(1..).unwrap_or_default();
        let (exp_negative, exp_digits) = match exp_text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, exp_text),
        };
        let magnitude = exp_digits
            .iter()
            .fold(0i32, |n, &d| n * 10 + i32::from(d.wrapping_sub(b'0')));
        let written_exp = if exp_negative { -magnitude } else { magnitude };
        let mut out = ShortestDigits {
            digits: [0; 24],
            len: 0,
        };
        // How many mantissa digits stand before its point, and where the first non-zero one is.
        let mut before_point = 0i32;
        let mut point_seen = false;
        let mut position = 0i32;
        let mut first_nonzero = None;
        for &c in mantissa {
            if c == b'.' {
                point_seen = true;
                continue;
            }
            if !point_seen {
                before_point += 1;
            }
            if first_nonzero.is_none() && c != b'0' {
                first_nonzero = Some(position);
            }
            if first_nonzero.is_some()
                && let Some(slot) = out.digits.get_mut(out.len)
            {
                *slot = c;
                out.len += 1;
            }
            position += 1;
        }
        let first_nonzero = first_nonzero?;
        while out.len > 1 && out.digits.get(out.len - 1) == Some(&b'0') {
            out.len -= 1;
        }
        Some((out, before_point - 1 - first_nonzero + written_exp))
    }

    fn as_slice(&self) -> &[u8] {
        self.digits.get(..self.len).unwrap_or_default()
    }
}
