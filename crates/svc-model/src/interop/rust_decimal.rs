//! [rust_decimal](https://docs.rs/rust_decimal)'s `Decimal` (feature `rust_decimal`):
//! conversions with this crate's [`Decimal`], filter values, and `serde` helpers that read the
//! service's numeric strings (`"88378.0000000000"`) and numbers, and write the exact text.
//!
//! ```
//! use std::str::FromStr;
//!
//! let total = rust_decimal::Decimal::from_str("4.50")?;
//! let wire = svc_model::Decimal::from(total);
//! assert_eq!(wire, "4.50"); // the scale is kept
//! assert_eq!(rust_decimal::Decimal::try_from(&wire)?, total);
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Order {
//!     #[serde(with = "svc_model::interop::rust_decimal::decimal")]
//!     total: rust_decimal::Decimal,
//! }
//! let order: Order = serde_json::from_str(r#"{"total": "88378.0000000000"}"#)?;
//! assert_eq!(order.total, rust_decimal::Decimal::from(88378));
//! assert_eq!(serde_json::to_string(&order)?, r#"{"total":"88378.0000000000"}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::Decimal;
use crate::records::FilterValue;

impl From<::rust_decimal::Decimal> for Decimal {
    /// The value's exact text, its scale kept (`4.50`).
    fn from(value: ::rust_decimal::Decimal) -> Self {
        Decimal::from_exact_text(value.to_string())
    }
}

impl TryFrom<&Decimal> for ::rust_decimal::Decimal {
    type Error = ::rust_decimal::Error;

    /// The same value, its scale kept; an error when it does not fit (28 significant digits,
    /// a magnitude below 2^96) rather than a rounded value.
    fn try_from(value: &Decimal) -> Result<Self, Self::Error> {
        let text = value.as_str();
        if text.contains(['e', 'E']) {
            ::rust_decimal::Decimal::from_scientific(text)
        } else {
            // A leading `+` or a bare `.5`/`5.` is decimal text too.
            let text = text.strip_prefix('+').unwrap_or(text);
            ::rust_decimal::Decimal::from_str_exact(text)
        }
    }
}

impl TryFrom<Decimal> for ::rust_decimal::Decimal {
    type Error = ::rust_decimal::Error;

    /// As `TryFrom<&Decimal>`.
    fn try_from(value: Decimal) -> Result<Self, Self::Error> {
        Self::try_from(&value)
    }
}

impl FilterValue for ::rust_decimal::Decimal {
    /// The exact text: number filters read it as Python's `float()` does.
    fn to_query_text(&self) -> String {
        self.to_string()
    }
}

/// `#[serde(with = "svc_model::interop::rust_decimal::decimal")]` on a `rust_decimal::Decimal`
/// field: reads a numeric string or a JSON number, writes a string of the exact text.
pub mod decimal {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes a JSON string of the exact text (`"4.50"`).
    pub fn serialize<S: Serializer>(
        value: &::rust_decimal::Decimal,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    /// Reads a numeric string (`"88378.0000000000"`, `"1e-05"`) or a JSON number; a value
    /// that does not fit is an error, never rounded.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<::rust_decimal::Decimal, D::Error> {
        let text = crate::Decimal::deserialize(deserializer)?;
        ::rust_decimal::Decimal::try_from(&text).map_err(|e| {
            serde::de::Error::custom(format_args!("{:?} as a rust_decimal: {e}", text.as_str()))
        })
    }
}

/// [`decimal`] for a nullable column: `null` is `None`.
pub mod option_decimal {
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the value as [`decimal`](super::decimal) does, `None` as `null`.
    pub fn serialize<S: Serializer>(
        value: &Option<::rust_decimal::Decimal>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => super::decimal::serialize(value, serializer),
            None => serializer.serialize_none(),
        }
    }

    /// Reads `null` or a number.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<::rust_decimal::Decimal>, D::Error> {
        match Option::<crate::Decimal>::deserialize(deserializer)? {
            Some(text) => ::rust_decimal::Decimal::try_from(&text)
                .map(Some)
                .map_err(|e| {
                    serde::de::Error::custom(format_args!(
                        "{:?} as a rust_decimal: {e}",
                        text.as_str()
                    ))
                }),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn the_services_texts_convert_exactly_or_not_at_all() {
        for (text, expected) in [
            ("88378.0000000000", "88378.0000000000"),
            ("0E-10", "0.0000000000"),
            ("1e-05", "0.00001"),
            ("-3.0", "-3.0"),
            ("+.5", "0.5"),
        ] {
            let d: Decimal = text.parse().unwrap();
            let r = ::rust_decimal::Decimal::try_from(&d).unwrap();
            assert_eq!(r.to_string(), expected, "{text}");
        }
        let huge: Decimal = "123456789012345678901234567890.5".parse().unwrap();
        assert!(::rust_decimal::Decimal::try_from(&huge).is_err());
        let r = ::rust_decimal::Decimal::from_str("-0.0010").unwrap();
        assert_eq!(Decimal::from(r), "-0.0010");
        assert_eq!(r.to_query_text(), "-0.0010");
    }
}
