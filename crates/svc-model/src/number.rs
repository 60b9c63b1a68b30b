//! Numbers that arrive as JSON strings: [`Decimal`], and serde helpers for `f64` fields.
//!
//! The service's data engine sends the values of `REAL` and `NUMERIC`/`DECIMAL` columns as JSON
//! **strings**, not numbers, and the emulator does the same:
//!
//! | Column | On the wire |
//! | --- | --- |
//! | `REAL` | Python's float text: `"price": "83.89"`, `"3.0"`, `"1e-05"`, `"1e+16"` |
//! | `NUMERIC`, `DECIMAL` | decimal text with the column's scale: `"4.1250000000"`, `"0E-10"` |
//! | an `avg` (aggregate, group) | `"y_func": "50.40517690875234"` |
//! | `INTEGER` | a JSON number, `42` |
//!
//! So a record struct with a plain `f64` field fails to decode (`invalid type: string "83.89",
//! expected f64`). Use one of these instead; each accepts a JSON number as well as a numeric
//! string, so the same struct reads either:
//!
//! - [`Decimal`]: keeps the exact text it was given (`"4.1250000000"` stays that), converts with
//!   [`Decimal::to_f64`], and serializes back as the same string, so a record read and written
//!   back to the service is unchanged. Also the value type of an aggregate or group
//!   (`AggregateResult<Decimal>`, `GroupRow<String, Decimal>`).
//! - [`f64_or_string`] for an `f64` field and [`option_f64_or_string`] for an `Option<f64>` field
//!   (JSON `null` is `None`), used as `#[serde(with = "...")]`. They serialize a JSON number.
//!
//! Both check the text: an optional sign, digits with an optional fraction, and an optional
//! exponent (`e` or `E`). Anything else, such as `""`, `"abc"`, `"NaN"` or `"inf"`, is a serde
//! error that names the value, e.g. `invalid value: string "abc", expected a number or a numeric
//! string such as "4.125" or "1e-05"`.
//!
//! ```
//! use serde::Deserialize;
//! use svc_model::number::Decimal;
//!
//! #[derive(Debug, Deserialize)]
//! struct Product {
//!     id: i64, // INTEGER: a JSON number
//!     #[serde(with = "svc_model::number::f64_or_string")]
//!     price: f64, // REAL
//!     #[serde(default, with = "svc_model::number::option_f64_or_string")]
//!     discount: Option<f64>, // nullable REAL (`default`: may also be absent)
//!     weight: Decimal, // NUMERIC(20, 10): exact text
//! }
//!
//! let p: Product = serde_json::from_str(
//!     r#"{"id": 7, "price": "83.89", "discount": null, "weight": "4.1250000000"}"#,
//! )?;
//! assert_eq!(p.price, 83.89);
//! assert_eq!(p.discount, None);
//! assert_eq!(p.weight, "4.1250000000");
//! assert_eq!(p.weight.to_f64(), 4.125);
//!
//! // The same struct reads JSON numbers, and refuses text that is not a number.
//! let p: Product = serde_json::from_str(r#"{"id": 8, "price": 3, "weight": 0.5}"#)?;
//! assert_eq!((p.price, p.weight.as_str()), (3.0, "0.5"));
//! let err = serde_json::from_str::<Product>(r#"{"id": 9, "price": "abc", "weight": 1}"#);
//! assert!(err.unwrap_err().to_string().contains(r#"string "abc""#));
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::{self, Deserializer, MapAccess, Unexpected, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// What the deserializers of this module expect, for serde's error messages.
const EXPECTED: &str = r#"a number or a numeric string such as "4.125" or "1e-05""#;

/// The key under which serde_json, with its `arbitrary_precision` feature, hands a number over
/// as a one-entry map.
const SERDE_JSON_NUMBER_TOKEN: &str = "$serde_json::private::Number";

/// A number that keeps its exact decimal text, as the service sent it.
///
/// The data engine sends `REAL` and `NUMERIC` values as JSON strings (see the
/// [module docs](self)). A `Decimal` reads a JSON number or a numeric JSON string, keeps the
/// text unchanged (`"4.1250000000"`, `"0E-10"`, `"1e-05"`), and serializes it back as the same
/// JSON string, so nothing is rounded on the way through. For arithmetic, convert it with
/// [`to_f64`](Self::to_f64); this crate does no decimal arithmetic.
///
/// - `==` compares the text: `"1.0"` and `"1.00"` are different `Decimal`s. To compare values,
///   use [`cmp_numeric`](Self::cmp_numeric) or [`eq_numeric`](Self::eq_numeric), which are
///   exact (no conversion to `f64`).
/// - `Display` writes the text; with a precision (`{:.2}`) it writes the value as an `f64`
///   rounded to that many places instead, as `f64` does. Width and alignment apply in both
///   cases.
/// - A JSON number becomes the text serde_json would write for it: `42`, `83.89`, `3.0`,
///   `1e+16`.
///
/// ```
/// use std::cmp::Ordering;
/// use svc_model::number::Decimal;
///
/// let d: Decimal = serde_json::from_str(r#""4.1250000000""#)?;
/// assert_eq!(d.as_str(), "4.1250000000");
/// assert_eq!(d.to_f64(), 4.125);
/// assert_eq!(format!("{d} {d:.1} [{d:>14}]"), "4.1250000000 4.1 [  4.1250000000]");
/// assert_eq!(serde_json::to_string(&d)?, r#""4.1250000000""#); // the same text back
///
/// let n: Decimal = serde_json::from_str("42")?; // a JSON number also reads
/// assert_eq!(n, Decimal::from(42));
///
/// let tiny: Decimal = "1e-05".parse()?;
/// assert_eq!(tiny.cmp_numeric(&"0.00001".parse()?), Ordering::Equal);
/// assert!("0E-10".parse::<Decimal>()?.eq_numeric(&Decimal::from(0)));
/// assert!("NaN".parse::<Decimal>().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Decimal(String);

/// Text that is not a finite decimal number, or a non-finite `f64`; from [`Decimal`]'s
/// [`FromStr`] and `TryFrom` conversions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid number {text:?}: expected decimal text such as 4.125, -3.0 or 1e-05")]
pub struct InvalidNumber {
    text: String,
}

impl InvalidNumber {
    /// The text that was refused (`"NaN"` or `"inf"` for a non-finite `f64`).
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl Decimal {
    /// `text`, which the caller knows is decimal text (another library's formatting).
    #[cfg(feature = "rust_decimal")]
    pub(crate) fn from_exact_text(text: String) -> Self {
        debug_assert!(is_decimal_text(&text), "{text:?}");
        Self(text)
    }

    /// The exact text, e.g. `"4.1250000000"`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The nearest `f64`. The text always parses; a value beyond the range of `f64` (such as
    /// `1e400`) gives an infinity, and one too small to represent (`1e-400`) gives zero.
    pub fn to_f64(&self) -> f64 {
        // The text was checked when the `Decimal` was made, and Rust's float grammar is a
        // superset of it.
        self.0.parse().unwrap_or(f64::NAN)
    }

    /// Compares the values exactly, whatever their text: `1.0` equals `1.00` and `1e0`, `-0`
    /// equals `0`, and `0.1` is less than `0.10000000000000001` (which are the same `f64`).
    pub fn cmp_numeric(&self, other: &Self) -> Ordering {
        let (a, b) = (Normal::of(&self.0), Normal::of(&other.0));
        let magnitude = || {
            a.exponent
                .cmp(&b.exponent)
                .then_with(|| a.digits.cmp(&b.digits))
        };
        match (a.sign, b.sign) {
            (Sign::Zero, Sign::Zero) => Ordering::Equal,
            (Sign::Positive, Sign::Positive) => magnitude(),
            (Sign::Negative, Sign::Negative) => magnitude().reverse(),
            (x, y) => x.cmp(&y),
        }
    }

    /// Whether the values are equal, whatever their text; see [`cmp_numeric`](Self::cmp_numeric).
    pub fn eq_numeric(&self, other: &Self) -> bool {
        self.cmp_numeric(other) == Ordering::Equal
    }
}

impl FromStr for Decimal {
    type Err = InvalidNumber;

    /// Accepts an optional sign, digits with an optional fraction (`4`, `4.125`, `.5`, `5.`), and
    /// an optional exponent (`1e-05`, `0E-10`, `1e+16`); no spaces, no `NaN` or `inf`.
    fn from_str(s: &str) -> Result<Self, InvalidNumber> {
        Self::try_from(s.to_owned())
    }
}

impl TryFrom<String> for Decimal {
    type Error = InvalidNumber;

    /// As [`FromStr`], keeping the string.
    fn try_from(text: String) -> Result<Self, InvalidNumber> {
        if is_decimal_text(&text) {
            Ok(Self(text))
        } else {
            Err(InvalidNumber { text })
        }
    }
}

impl TryFrom<f64> for Decimal {
    type Error = InvalidNumber;

    /// The shortest text that reads back as the same `f64`, as serde_json writes it (`83.89`,
    /// `3.0`, `1e+16`). `NaN` and the infinities are refused.
    fn try_from(value: f64) -> Result<Self, InvalidNumber> {
        match serde_json::Number::from_f64(value) {
            Some(n) => Ok(Self(n.to_string())),
            None => Err(InvalidNumber {
                text: value.to_string(),
            }),
        }
    }
}

macro_rules! from_integers {
    ($($t:ty),*) => {$(
        impl From<$t> for Decimal {
            fn from(value: $t) -> Self {
                Self(value.to_string())
            }
        }
    )*};
}
from_integers!(
    i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize
);

impl Default for Decimal {
    /// `0`.
    fn default() -> Self {
        Self::from(0)
    }
}

impl From<Decimal> for String {
    fn from(value: Decimal) -> Self {
        value.0
    }
}

impl PartialEq<str> for Decimal {
    /// Compares the text.
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Decimal {
    /// Compares the text.
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Debug for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Decimal").field(&self.0).finish()
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.precision().is_some() {
            // `pad` would cut the text to that many characters: round the value instead.
            fmt::Display::fmt(&self.to_f64(), f)
        } else {
            f.pad(&self.0)
        }
    }
}

impl Serialize for Decimal {
    /// A JSON string of the exact text.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Decimal {
    /// A JSON number, or a string of decimal text.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_number(deserializer)
    }
}

/// `#[serde(with = "svc_model::number::f64_or_string")]` on an `f64` field: reads a JSON number
/// or a numeric string (`"83.89"`, `"1e-05"`), writes a JSON number.
///
/// Text that is not a number, and a number beyond the range of `f64` (`"1e400"`), are errors.
/// For a nullable column, use [`option_f64_or_string`].
///
/// ```
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Order {
///     id: i64,
///     #[serde(with = "svc_model::number::f64_or_string")]
///     total: f64,
/// }
///
/// let order: Order = serde_json::from_str(r#"{"id": 1, "total": "83.89"}"#)?;
/// assert_eq!(order.total, 83.89);
/// assert_eq!(serde_json::to_string(&order)?, r#"{"id":1,"total":83.89}"#);
/// # Ok::<(), serde_json::Error>(())
/// ```
pub mod f64_or_string {
    use serde::{Deserializer, Serializer};

    /// Writes a JSON number.
    pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(*value)
    }

    /// Reads a JSON number or a numeric string.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
        super::deserialize_number(deserializer)
    }
}

/// `#[serde(with = "svc_model::number::option_f64_or_string")]` on an `Option<f64>` field:
/// `null` is `None`, otherwise as [`f64_or_string`].
///
/// As with any `with` on an `Option` field, add `#[serde(default)]` if the field may also be
/// absent.
///
/// ```
/// #[derive(Debug, PartialEq, serde::Deserialize)]
/// struct Product {
///     #[serde(default, with = "svc_model::number::option_f64_or_string")]
///     discount: Option<f64>,
/// }
///
/// let read = |json| serde_json::from_str::<Product>(json).map(|p| p.discount);
/// assert_eq!(read(r#"{"discount": "0.15"}"#)?, Some(0.15));
/// assert_eq!(read(r#"{"discount": 2}"#)?, Some(2.0));
/// assert_eq!(read(r#"{"discount": null}"#)?, None);
/// assert_eq!(read("{}")?, None);
/// assert!(read(r#"{"discount": ""}"#).is_err());
/// # Ok::<(), serde_json::Error>(())
/// ```
pub mod option_f64_or_string {
    use std::fmt;

    use serde::de::{self, Deserializer, Visitor};
    use serde::{Serialize, Serializer};

    /// Writes a JSON number, or `null` for `None`.
    pub fn serialize<S: Serializer>(value: &Option<f64>, serializer: S) -> Result<S::Ok, S::Error> {
        value.serialize(serializer)
    }

    /// Reads `null` as `None`, and a JSON number or a numeric string as `Some`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<f64>, D::Error> {
        struct OptionVisitor;

        impl<'de> Visitor<'de> for OptionVisitor {
            type Value = Option<f64>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "null or {}", super::EXPECTED)
            }

            fn visit_none<E: de::Error>(self) -> Result<Option<f64>, E> {
                Ok(None)
            }

            fn visit_unit<E: de::Error>(self) -> Result<Option<f64>, E> {
                Ok(None)
            }

            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Option<f64>, D::Error> {
                super::deserialize_number(d).map(Some)
            }
        }

        deserializer.deserialize_option(OptionVisitor)
    }
}

/// A type read by [`NumberVisitor`]: [`Decimal`] or `f64`.
trait Number: Sized {
    fn from_i128(value: i128) -> Self;
    fn from_u128(value: u128) -> Self;
    /// `None` for NaN and the infinities.
    fn from_f64(value: f64) -> Option<Self>;
    /// Of text that [`is_decimal_text`]; the text back when out of range.
    fn from_decimal_text(text: Cow<'_, str>) -> Result<Self, Cow<'_, str>>;
}

impl Number for Decimal {
    fn from_i128(value: i128) -> Self {
        Self::from(value)
    }

    fn from_u128(value: u128) -> Self {
        Self::from(value)
    }

    fn from_f64(value: f64) -> Option<Self> {
        Self::try_from(value).ok()
    }

    fn from_decimal_text(text: Cow<'_, str>) -> Result<Self, Cow<'_, str>> {
        Ok(Self(text.into_owned()))
    }
}

impl Number for f64 {
    fn from_i128(value: i128) -> Self {
        value as f64
    }

    fn from_u128(value: u128) -> Self {
        value as f64
    }

    fn from_f64(value: f64) -> Option<Self> {
        value.is_finite().then_some(value)
    }

    fn from_decimal_text(text: Cow<'_, str>) -> Result<Self, Cow<'_, str>> {
        match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(text),
        }
    }
}

/// Reads a [`Number`] from a JSON number or a numeric string; `null` is an error.
///
/// Through `deserialize_option` rather than `deserialize_any`: a self-describing format hands a
/// present value to [`Visitor::visit_some`], which reads it with `deserialize_any`. This matters
/// for a deserializer that gives a single value to `deserialize_option` but a whole map to
/// `deserialize_any`, as a one-column row of [`crate::sql::SqlRows`] does: `rows::<Decimal>()`
/// then reads the column's value.
fn deserialize_number<'de, D: Deserializer<'de>, T: Number>(d: D) -> Result<T, D::Error> {
    d.deserialize_option(NumberVisitor(PhantomData))
}

struct NumberVisitor<T>(PhantomData<T>);

impl<T: Number> NumberVisitor<T> {
    fn text<E: de::Error>(self, text: Cow<'_, str>) -> Result<T, E> {
        if !is_decimal_text(&text) {
            return Err(E::invalid_value(Unexpected::Str(&text), &self));
        }
        T::from_decimal_text(text)
            .map_err(|text| E::custom(format_args!("number {text:?} is out of range for f64")))
    }
}

impl<'de, T: Number> Visitor<'de> for NumberVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECTED)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Err(E::invalid_type(Unexpected::Unit, &self))
    }

    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Err(E::invalid_type(Unexpected::Unit, &self))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Ok(T::from_i128(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Ok(T::from_u128(v.into()))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<T, E> {
        Ok(T::from_i128(v))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<T, E> {
        Ok(T::from_u128(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        T::from_f64(v).ok_or_else(|| E::invalid_value(Unexpected::Float(v), &self))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        self.text(Cow::Borrowed(v))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<T, E> {
        self.text(Cow::Owned(v))
    }

    /// serde_json with `arbitrary_precision` (a feature any crate in the build can turn on)
    /// gives every number as `{"$serde_json::private::Number": "<text>"}`.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        match map.next_key::<Cow<'de, str>>()? {
            Some(key) if key == SERDE_JSON_NUMBER_TOKEN => {
                let text = map.next_value::<Cow<'de, str>>()?;
                self.text(text)
            }
            _ => Err(de::Error::invalid_type(Unexpected::Map, &self)),
        }
    }
}

/// Whether `s` is decimal text: an optional sign, digits with an optional fraction (at least
/// one digit in all), then an optional exponent (`e` or `E`, an optional sign, digits).
fn is_decimal_text(s: &str) -> bool {
    let b = s.as_bytes();
    let digits_from = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let int_end = digits_from(i);
    let mut digits = int_end - i;
    i = int_end;
    if b.get(i) == Some(&b'.') {
        let frac_end = digits_from(i + 1);
        digits += frac_end - (i + 1);
        i = frac_end;
    }
    if digits == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_end = digits_from(i);
        if exp_end == i {
            return false;
        }
        i = exp_end;
    }
    i == b.len()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Sign {
    Negative,
    Zero,
    Positive,
}

/// A value as `sign × 0.digits × 10^exponent`, with no leading or trailing zero in `digits`.
#[derive(Debug, PartialEq)]
struct Normal {
    sign: Sign,
    digits: String,
    exponent: i64,
}

impl Normal {
    /// Of text that [`is_decimal_text`].
    fn of(text: &str) -> Self {
        let (negative, rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let (mantissa, exp) = match rest.find(['e', 'E']) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, ""),
        };
        let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let all = || int.bytes().chain(frac.bytes());
        let leading_zeros = all().take_while(|&c| c == b'0').count();
        let mut digits: String = all().skip(leading_zeros).map(char::from).collect();
        digits.truncate(digits.trim_end_matches('0').len());
        if digits.is_empty() {
            return Self {
                sign: Sign::Zero,
                digits,
                exponent: 0,
            };
        }
        // Exponents saturate at ±2^60: such text is not a number anyone sends.
        let (exp_negative, exp_digits) = match exp.as_bytes().first() {
            Some(b'-') => (true, &exp[1..]),
            Some(b'+') => (false, &exp[1..]),
            _ => (false, exp),
        };
        let magnitude = exp_digits.bytes().fold(0_i64, |n, c| {
            n.saturating_mul(10)
                .saturating_add(i64::from(c - b'0'))
                .min(1 << 60)
        });
        let exp = if exp_negative { -magnitude } else { magnitude };
        let shift = i64::try_from(int.len()).unwrap_or(i64::MAX)
            - i64::try_from(leading_zeros).unwrap_or(i64::MAX);
        Self {
            sign: if negative {
                Sign::Negative
            } else {
                Sign::Positive
            },
            digits,
            exponent: exp.saturating_add(shift),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every form the data engine sends, with its `f64` value.
    const ENGINE_FORMS: &[(&str, f64)] = &[
        ("83.89", 83.89),
        ("3.0", 3.0),
        ("-2.5", -2.5),
        ("1e-05", 1e-5),
        ("1e+16", 1e16),
        ("1.5e+300", 1.5e300),
        ("4.1250000000", 4.125),
        ("0E-10", 0.0),
        ("-0.0", 0.0),
        ("50.40517690875234", 50.405_176_908_752_34),
        ("42", 42.0),
        ("0", 0.0),
        ("+7", 7.0),
        (".5", 0.5),
        ("5.", 5.0),
        ("1E5", 1e5),
        ("007.50", 7.5),
    ];

    const NOT_NUMBERS: &[&str] = &[
        "", " ", "abc", "NaN", "nan", "inf", "-inf", "Infinity", "-", "+", ".", "e5", "1e", "1e+",
        "1.2.3", "1,5", " 1", "1 ", "0x10", "1_000", "--1", "1e5.0", "½", "١",
    ];

    #[test]
    fn grammar() {
        for (text, _) in ENGINE_FORMS {
            assert!(is_decimal_text(text), "{text:?}");
        }
        for text in NOT_NUMBERS {
            assert!(!is_decimal_text(text), "{text:?}");
            assert_eq!(text.parse::<Decimal>().unwrap_err().text(), *text);
        }
    }

    #[test]
    fn decimal_from_engine_strings_keeps_the_text() {
        for &(text, value) in ENGINE_FORMS {
            let d: Decimal = serde_json::from_value(json!(text)).unwrap();
            assert_eq!(d, text);
            assert_eq!(d.to_string(), text);
            assert_eq!(d.to_f64(), value, "{text:?}");
            assert_eq!(serde_json::to_value(&d).unwrap(), json!(text));
            assert_eq!(text.parse::<Decimal>().unwrap(), d);
            // From bytes too (borrowed strings).
            let d: Decimal = serde_json::from_str(&format!("{text:?}")).unwrap();
            assert_eq!(d, text);
        }
    }

    #[test]
    fn decimal_from_json_numbers() {
        for (json, text) in [
            ("42", "42"),
            ("-7", "-7"),
            ("18446744073709551615", "18446744073709551615"),
            ("83.89", "83.89"),
            ("3.0", "3.0"),
            ("1e16", "1e+16"),
            ("1e-5", "0.00001"),
            ("1e-7", "1e-7"),
            ("-0.0", "-0.0"),
        ] {
            let d: Decimal = serde_json::from_str(json).unwrap();
            assert_eq!(d, text, "{json}");
            assert!(is_decimal_text(d.as_str()));
        }
        assert_eq!(Decimal::from(-3_i32), "-3");
        assert_eq!(Decimal::from(u128::MAX).to_f64(), u128::MAX as f64);
        assert_eq!(Decimal::try_from(0.1).unwrap(), "0.1");
        assert_eq!(Decimal::try_from(f64::NAN).unwrap_err().text(), "NaN");
        assert!(Decimal::try_from(f64::NEG_INFINITY).is_err());
    }

    #[test]
    fn rejects_name_the_value() {
        for text in NOT_NUMBERS {
            let err = serde_json::from_value::<Decimal>(json!(text)).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("invalid value: string {text:?}, expected {EXPECTED}")
            );
            let err = f64_or_string::deserialize(json!(text)).unwrap_err();
            assert!(err.to_string().contains(&format!("{text:?}")), "{err}");
        }
        for value in [json!(null), json!(true), json!([1]), json!({"a": 1})] {
            let err = serde_json::from_value::<Decimal>(value.clone()).unwrap_err();
            assert!(err.to_string().starts_with("invalid type"), "{err}");
            assert!(f64_or_string::deserialize(value).is_err());
        }
        let err = serde_json::from_str::<Decimal>("null").unwrap_err();
        assert!(err.to_string().starts_with("invalid type: null"), "{err}");
    }

    #[test]
    fn f64_helper() {
        for &(text, value) in ENGINE_FORMS {
            assert_eq!(f64_or_string::deserialize(json!(text)).unwrap(), value);
        }
        assert_eq!(f64_or_string::deserialize(json!(3)).unwrap(), 3.0);
        assert_eq!(f64_or_string::deserialize(json!(-2.5)).unwrap(), -2.5);
        assert_eq!(
            f64_or_string::deserialize(json!(u64::MAX)).unwrap(),
            1.8446744073709552e19
        );
        let err = f64_or_string::deserialize(json!("1e400")).unwrap_err();
        assert_eq!(err.to_string(), r#"number "1e400" is out of range for f64"#);
        // Too small to represent is zero, as for JSON numbers.
        assert_eq!(f64_or_string::deserialize(json!("1e-400")).unwrap(), 0.0);
        let written = f64_or_string::serialize(&83.89, serde_json::value::Serializer).unwrap();
        assert_eq!(written, json!(83.89));
    }

    #[test]
    fn option_helper() {
        let read = |v| option_f64_or_string::deserialize(v);
        assert_eq!(read(json!(null)).unwrap(), None);
        assert_eq!(read(json!("1e-05")).unwrap(), Some(1e-5));
        assert_eq!(read(json!(2)).unwrap(), Some(2.0));
        let err = read(json!("inf")).unwrap_err();
        assert!(err.to_string().contains(r#"string "inf""#), "{err}");
        let write = |v| option_f64_or_string::serialize(&v, serde_json::value::Serializer);
        assert_eq!(write(None).unwrap(), json!(null));
        assert_eq!(write(Some(0.5)).unwrap(), json!(0.5));
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Product {
        id: i64,
        #[serde(with = "f64_or_string")]
        price: f64,
        #[serde(default, with = "option_f64_or_string")]
        discount: Option<f64>,
        weight: Decimal,
        rating: Option<Decimal>,
    }

    #[test]
    fn inside_a_derived_struct() {
        let engine = r#"{"id": 1, "price": "83.89", "discount": "0.1", "weight": "4.1250000000", "rating": null}"#;
        let p: Product = serde_json::from_str(engine).unwrap();
        assert_eq!(
            p,
            Product {
                id: 1,
                price: 83.89,
                discount: Some(0.1),
                weight: "4.1250000000".parse().unwrap(),
                rating: None,
            }
        );
        // Written back: the helpers write numbers, Decimal its text.
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"id": 1, "price": 83.89, "discount": 0.1, "weight": "4.1250000000", "rating": null})
        );
        // Round trip.
        let again: Product = serde_json::from_value(serde_json::to_value(&p).unwrap()).unwrap();
        assert_eq!(again, p);

        // Plain JSON numbers, and a missing optional field.
        let numbers = r#"{"id": 2, "price": 3, "weight": 0.5, "rating": "4.5"}"#;
        let p: Product = serde_json::from_str(numbers).unwrap();
        assert_eq!((p.price, p.discount), (3.0, None));
        assert_eq!(
            (p.weight.as_str(), p.rating.unwrap().as_str()),
            ("0.5", "4.5")
        );

        // The error names the field's value and its place.
        let err = serde_json::from_str::<Product>(
            r#"{"id": 3, "price": "abc", "weight": "1", "rating": null}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains(r#"string "abc""#), "{err}");
        assert!(err.to_string().contains("column"), "{err}");
        // `null` for a non-optional number.
        assert!(
            serde_json::from_str::<Product>(r#"{"id": 3, "price": null, "weight": "1"}"#).is_err()
        );
    }

    #[test]
    fn through_untagged_enums_and_flatten() {
        // Serde's buffered content (untagged enums, `flatten`) reaches the visitors too.
        #[derive(Debug, Deserialize)]
        #[serde(untagged)]
        enum Either {
            Number(Decimal),
        }
        let Either::Number(d) = serde_json::from_str::<Either>(r#""1e-05""#).unwrap();
        assert_eq!(d, "1e-05");

        #[derive(Debug, Deserialize)]
        struct Outer {
            #[serde(flatten)]
            inner: Product,
        }
        let o: Outer = serde_json::from_str(
            r#"{"id": 1, "price": "2.5", "discount": null, "weight": 7, "rating": "3"}"#,
        )
        .unwrap();
        assert_eq!((o.inner.price, o.inner.discount), (2.5, None));
        assert_eq!(o.inner.weight, "7");
    }

    #[test]
    fn aggregate_and_group_values() {
        use crate::records::{AggregateResult, GroupRow};
        let avg: AggregateResult<Decimal> =
            serde_json::from_str(r#"{"y_func": "50.40517690875234"}"#).unwrap();
        assert_eq!(avg.y_func.to_f64(), 50.405_176_908_752_34);
        let none: AggregateResult<Option<Decimal>> =
            serde_json::from_str(r#"{"y_func": null}"#).unwrap();
        assert_eq!(none.y_func, None);
        let rows: Vec<GroupRow<String, Decimal>> = serde_json::from_str(
            r#"[{"group": "paid", "y_func": "3.0"}, {"group": "new", "y_func": 0}]"#,
        )
        .unwrap();
        assert_eq!(
            (rows[0].y_func.as_str(), rows[1].y_func.as_str()),
            ("3.0", "0")
        );
    }

    #[test]
    fn sql_rows() {
        use crate::sql::SqlRows;
        let body = r#"{"columns":["total"],"data":[["83.89"],[2],[null]],"row_count":3}"#;
        // A one-column row gives its value, not a map.
        let rows: SqlRows<Option<Decimal>> = serde_json::from_str(body).unwrap();
        let texts: Vec<_> = rows
            .rows
            .iter()
            .map(|d| d.as_ref().map(Decimal::as_str))
            .collect();
        assert_eq!(texts, [Some("83.89"), Some("2"), None]);
        let body = r#"{"columns":["total"],"data":[["83.89"],[2]],"row_count":2}"#;
        let rows: SqlRows<Decimal> = serde_json::from_str(body).unwrap();
        assert_eq!(rows.rows, ["83.89", "2"]);

        #[derive(Debug, Deserialize)]
        struct Spender {
            name: String,
            #[serde(with = "f64_or_string")]
            spent: f64,
        }
        let body =
            r#"{"columns":["name","spent"],"data":[["Anna","120.5"],["Bo",7]],"row_count":2}"#;
        let rows: SqlRows<Spender> = serde_json::from_str(body).unwrap();
        assert_eq!(rows.rows[0].name, "Anna");
        assert_eq!((rows.rows[0].spent, rows.rows[1].spent), (120.5, 7.0));
    }

    #[test]
    fn arbitrary_precision_numbers() {
        // What serde_json hands over for a number when its `arbitrary_precision` feature is on.
        let wrapped = json!({ SERDE_JSON_NUMBER_TOKEN: "12345678901234567890.123456789" });
        let d: Decimal = serde_json::from_value(wrapped.clone()).unwrap();
        assert_eq!(d, "12345678901234567890.123456789");
        assert_eq!(
            f64_or_string::deserialize(wrapped).unwrap(),
            1.2345678901234567e19
        );
        let bad = json!({ SERDE_JSON_NUMBER_TOKEN: "x" });
        assert!(serde_json::from_value::<Decimal>(bad).is_err());
    }

    #[test]
    fn display_and_debug() {
        let d: Decimal = "4.1250000000".parse().unwrap();
        assert_eq!(format!("{d}"), "4.1250000000");
        assert_eq!(format!("{d:.2}"), "4.12"); // as `f64` rounds 4.125: ties to even
        assert_eq!(format!("{d:>8.1}"), "     4.1");
        assert_eq!(format!("{d:<14}|"), "4.1250000000  |");
        assert_eq!(format!("{d:?}"), r#"Decimal("4.1250000000")"#);
        assert_eq!(String::from(d), "4.1250000000");
        assert_eq!(format!("{:.2}", Decimal::default()), "0.00");
    }

    #[test]
    fn numeric_comparison_is_exact() {
        let d = |s: &str| s.parse::<Decimal>().unwrap();
        let equal = [
            ("1.0", "1.00"),
            ("1", "1e0"),
            ("1e-05", "0.00001"),
            ("1e+16", "10000000000000000"),
            ("0E-10", "0"),
            ("-0.0", "+0"),
            ("007.50", "7.5"),
            (".5", "5e-1"),
            ("4.1250000000", "4.125"),
        ];
        for (a, b) in equal {
            assert_eq!(d(a).cmp_numeric(&d(b)), Ordering::Equal, "{a} {b}");
            assert!(d(a).eq_numeric(&d(b)));
            assert_ne!(d(a), d(b), "text differs");
        }
        let ascending = [
            "-1e16",
            "-100",
            "-2.5",
            "-2.25",
            "-1e-05",
            "0",
            "1e-400",
            "0.1",
            "0.10000000000000001",
            "0.5",
            "0.51",
            "0.6",
            "1",
            "9.99",
            "10",
            "83.89",
            "1e16",
            "1e400",
        ];
        for (i, a) in ascending.iter().enumerate() {
            for (j, b) in ascending.iter().enumerate() {
                assert_eq!(d(a).cmp_numeric(&d(b)), i.cmp(&j), "{a} vs {b}");
            }
        }
        // Absurd exponents saturate instead of overflowing.
        let huge = d("1e99999999999999999999999");
        assert_eq!(huge.cmp_numeric(&d("1e400")), Ordering::Greater);
        assert_eq!(
            d("-1e-99999999999999999999999").cmp_numeric(&d("0")),
            Ordering::Less
        );
        assert_eq!(huge.to_f64(), f64::INFINITY);
    }
}
