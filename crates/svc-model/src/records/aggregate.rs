//! Aggregate and group requests and results.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An aggregate function.
///
/// More functions may come (the enum is `#[non_exhaustive]`): a `match` needs a `_` arm. Build
/// one by its variant or by its wire name with [`AggregateFunc::parse`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AggregateFunc {
    /// Number of records (`0` over no records).
    Count,
    /// Sum (`0` over no records).
    Sum,
    /// Smallest value (`null` over no records).
    Min,
    /// Largest value (`null` over no records).
    Max,
    /// Mean (`0` over no records).
    Avg,
}

impl AggregateFunc {
    /// Every function.
    pub const ALL: [AggregateFunc; 5] = [Self::Count, Self::Sum, Self::Min, Self::Max, Self::Avg];

    /// The wire name, e.g. `count`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Count => "count",
            Self::Sum => "sum",
            Self::Min => "min",
            Self::Max => "max",
            Self::Avg => "avg",
        }
    }

    /// Parses a wire name, ignoring case.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|f| f.as_str().eq_ignore_ascii_case(name))
    }
}

impl fmt::Display for AggregateFunc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for AggregateFunc {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for AggregateFunc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(d)?;
        Self::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown aggregate function {name:?}")))
    }
}

/// The body of an aggregate request: `{"func", "column"?}`. `column` defaults to the primary key.
///
/// ```
/// use svc_model::records::{AggregateFunc, AggregateRequest};
/// let r = AggregateRequest::new(AggregateFunc::Sum).column("total");
/// assert_eq!(serde_json::to_string(&r).unwrap(), r#"{"func":"sum","column":"total"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AggregateRequest {
    /// The function.
    pub func: AggregateFunc,
    /// The column; the primary key when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
}

impl AggregateRequest {
    /// An aggregate over the primary key.
    pub fn new(func: AggregateFunc) -> Self {
        Self { func, column: None }
    }

    /// Aggregates `column` instead of the primary key.
    pub fn column(mut self, column: impl Into<String>) -> Self {
        self.column = Some(column.into());
        self
    }
}

/// The answer of an aggregate: `{"y_func": value}`. `T` is the value's type, e.g. `f64`,
/// `Option<f64>` for `min`/`max` (null over no records), or `serde_json::Value`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AggregateResult<T = serde_json::Value> {
    /// The aggregated value.
    pub y_func: T,
}

/// A unit of time for date grouping (`x_lookup` `date_{unit}`).
///
/// What a group key looks like depends on the resource's database. On a SQLite resource the
/// service's data engine answers (docs/contract.md 5.1): `Year`, `Month`, `Day` and `Hour` give
/// the text of SQLite's `strftime` (`"2024-03-01"`, `"2024-03-05 10:00:00"`); `Minute` and
/// `Second` give `null` keys; `Week` and `Quarter` group by the value itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DateUnit {
    /// `date_second`.
    Second,
    /// `date_minute`.
    Minute,
    /// `date_hour`.
    Hour,
    /// `date_day`.
    Day,
    /// `date_week`.
    Week,
    /// `date_month`.
    Month,
    /// `date_quarter`.
    Quarter,
    /// `date_year`.
    Year,
}

impl DateUnit {
    /// Every unit.
    pub const ALL: [DateUnit; 8] = [
        Self::Second,
        Self::Minute,
        Self::Hour,
        Self::Day,
        Self::Week,
        Self::Month,
        Self::Quarter,
        Self::Year,
    ];

    /// The unit's name, e.g. `month`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Second => "second",
            Self::Minute => "minute",
            Self::Hour => "hour",
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Quarter => "quarter",
            Self::Year => "year",
        }
    }
}

/// How group keys are formed from `x_column`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum GroupLookup {
    /// The value itself.
    #[default]
    Plain,
    /// Chosen by the server from the column's type.
    Auto,
    /// The date truncated to a unit (`date_month`, ...). Only for date columns.
    Date(DateUnit),
}

impl GroupLookup {
    /// The wire name: `plain`, `auto` or `date_{unit}`.
    pub fn as_str(self) -> String {
        match self {
            Self::Plain => "plain".to_owned(),
            Self::Auto => "auto".to_owned(),
            Self::Date(unit) => format!("date_{}", unit.as_str()),
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "plain" => Some(Self::Plain),
            "auto" => Some(Self::Auto),
            _ => {
                let unit = name.strip_prefix("date_")?;
                DateUnit::ALL
                    .into_iter()
                    .find(|u| u.as_str() == unit)
                    .map(Self::Date)
            }
        }
    }
}

impl Serialize for GroupLookup {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.as_str())
    }
}

impl<'de> Deserialize<'de> for GroupLookup {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(d)?;
        Self::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown group lookup {name:?}")))
    }
}

/// The body of a group request: `{"x_column", "x_lookup"?, "y_func", "y_column"?}`.
///
/// ```
/// use svc_model::records::{AggregateFunc, DateUnit, GroupLookup, GroupRequest};
/// let r = GroupRequest::new("ordered_on", AggregateFunc::Sum)
///     .x_lookup(GroupLookup::Date(DateUnit::Month))
///     .y_column("total");
/// assert_eq!(
///     serde_json::to_string(&r).unwrap(),
///     r#"{"x_column":"ordered_on","x_lookup":"date_month","y_func":"sum","y_column":"total"}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupRequest {
    /// The column whose values form the groups.
    pub x_column: String,
    /// How group keys are formed; `plain` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_lookup: Option<GroupLookup>,
    /// The aggregate computed per group.
    pub y_func: AggregateFunc,
    /// The aggregated column; the primary key when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y_column: Option<String>,
}

impl GroupRequest {
    /// Groups by `x_column` and computes `y_func` over the primary key in each group.
    pub fn new(x_column: impl Into<String>, y_func: AggregateFunc) -> Self {
        Self {
            x_column: x_column.into(),
            x_lookup: None,
            y_func,
            y_column: None,
        }
    }

    /// Sets how group keys are formed.
    pub fn x_lookup(mut self, lookup: GroupLookup) -> Self {
        self.x_lookup = Some(lookup);
        self
    }

    /// Aggregates `column` instead of the primary key.
    pub fn y_column(mut self, column: impl Into<String>) -> Self {
        self.y_column = Some(column.into());
        self
    }
}

/// One row of a group answer: `{"group": key, "y_func": value}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GroupRow<K = serde_json::Value, V = serde_json::Value> {
    /// The group key.
    pub group: K,
    /// The aggregate over the group.
    pub y_func: V,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for f in AggregateFunc::ALL {
            assert_eq!(AggregateFunc::parse(&f.as_str().to_uppercase()), Some(f));
        }
        for u in DateUnit::ALL {
            let l = GroupLookup::Date(u);
            assert_eq!(GroupLookup::parse(&l.as_str()), Some(l));
        }
        assert_eq!(GroupLookup::parse("date_fortnight"), None);
        assert_eq!(GroupLookup::parse("auto"), Some(GroupLookup::Auto));
    }

    #[test]
    fn results_decode() {
        let r: AggregateResult<Option<f64>> = serde_json::from_str(r#"{"y_func": null}"#).unwrap();
        assert_eq!(r.y_func, None);
        let rows: Vec<GroupRow<String, i64>> =
            serde_json::from_str(r#"[{"group": "paid", "y_func": 3}]"#).unwrap();
        assert_eq!(rows[0].group, "paid");
    }
}
