//! Read-only SQL queries (docs/contract.md 5.2): the request, the response, and rows decoded by
//! column name.
//!
//! The service answers a query with the column names once and each row as an array of values in
//! column order: `{"columns": ["id", "name"], "data": [[1, "Anna"]], "row_count": 1}`.
//! [`SqlResponse`] keeps that shape with JSON values, and [`SqlResponse::rows`] and
//! [`SqlResponse::maps`] read it as your own types or as JSON objects. [`SqlRows`] decodes the
//! same body straight into your type, row by row, with no intermediate JSON values (when the
//! body lists `columns` before `data`, as the service and the emulator do; otherwise it falls
//! back to buffering the rows).
//!
//! How a row becomes a `T`:
//!
//! | `T` asks for | It gets |
//! | --- | --- |
//! | a struct or a map (e.g. `serde_json::Value`, `HashMap`) | an object keyed by column name |
//! | a tuple, tuple struct or sequence (e.g. `Vec<Value>`) | the values in column order |
//! | a single value (`i64`, `String`, `Option<f64>`, an enum, ...) | the value of the only column (a row of several columns is an error) |
//!
//! ```
//! use svc_model::sql::SqlResponse;
//!
//! #[derive(serde::Deserialize, Debug, PartialEq)]
//! struct Customer { id: i64, name: String }
//!
//! let response: SqlResponse = serde_json::from_str(
//!     r#"{"columns": ["id", "name"], "data": [[1, "Anna"], [2, "Zoë"]], "row_count": 2}"#,
//! )?;
//! let customers: Vec<Customer> = response.rows()?;
//! assert_eq!(customers[1], Customer { id: 2, name: "Zoë".into() });
//! let pairs: Vec<(i64, String)> = response.rows()?;
//! assert_eq!(pairs[0], (1, "Anna".to_owned()));
//! assert_eq!(response.maps()[0]["name"], "Anna");
//! # Ok::<(), serde_json::Error>(())
//! ```

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{SeqDeserializer, StrDeserializer};
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess,
    Visitor,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The most rows the emulator reads of one query, where its request asks for every row (a
/// `limit` of 0); otherwise the data engine answers at most 100 rows of a query in format 2, or
/// its request's `limit` (1000 at most).
pub const MAX_SQL_ROWS: usize = 10_000;

/// The most rows the data engine answers of one query given a `limit` (a greater one is read
/// as this); without one it answers at most 100 of a query in format 2.
pub const MAX_SQL_LIMIT: u64 = 1000;

/// The request format version the SDK sends (`v`): rows as arrays, columns once.
pub const SQL_FORMAT_VERSION: u32 = 2;

/// The body of `POST /{resource}/sql_get_query`: `{"query", "v"?, "params_obj"?}`.
///
/// ```
/// use svc_model::sql::SqlRequest;
/// let mut request = SqlRequest::new("select * from orders where id = :id");
/// request.params_obj.insert("id".into(), 7.into());
/// assert_eq!(
///     serde_json::to_string(&request).unwrap(),
///     r#"{"query":"select * from orders where id = :id","v":2,"params_obj":{"id":7}}"#,
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SqlRequest {
    /// One read-only statement; named parameters are written `:name`.
    pub query: String,
    /// The response format version; the SDK sends [`SQL_FORMAT_VERSION`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v: Option<u32>,
    /// Parameter values by name (without the `:`).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params_obj: Map<String, Value>,
}

impl SqlRequest {
    /// A request for `query`, format version 2, no parameters.
    pub fn new(query: impl Into<String>) -> Self {
        Self {
            query: query.into(),
            v: Some(SQL_FORMAT_VERSION),
            params_obj: Map::new(),
        }
    }
}

/// Whether `name` can be a named parameter (`:name`): ASCII letters, digits and `_`, not
/// starting with a digit. Checked by the SDK before sending, so that a typo never turns into a
/// parameter the query cannot name.
///
/// ```
/// use svc_model::sql::is_param_name;
/// assert!(is_param_name("customer_id") && is_param_name("_x1"));
/// assert!(!is_param_name("") && !is_param_name("1x") && !is_param_name("a b") && !is_param_name("a;"));
/// ```
pub fn is_param_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The answer to a query, as sent: column names and rows of JSON values in column order.
///
/// Values are JSON numbers (integers and reals), strings and `null`; bytes are their UTF-8
/// text, or lowercase hex when they are not UTF-8. See the [module documentation](self) for how
/// rows decode into your types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "RawResponse")]
pub struct SqlResponse {
    /// The column names, in order. Two columns may have the same name.
    pub columns: Vec<String>,
    /// The rows: one value per column, in column order.
    pub data: Vec<Vec<Value>>,
    /// The number of rows in [`data`](Self::data).
    pub row_count: u64,
}

#[derive(Deserialize)]
struct RawResponse {
    columns: Vec<String>,
    data: Vec<Vec<Value>>,
    #[serde(default)]
    row_count: Option<u64>,
}

impl From<RawResponse> for SqlResponse {
    fn from(raw: RawResponse) -> Self {
        let row_count = raw.row_count.unwrap_or(raw.data.len() as u64);
        Self {
            columns: raw.columns,
            data: raw.data,
            row_count,
        }
    }
}

impl SqlResponse {
    /// The number of rows.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The position of the first column named `name`.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// Every row decoded as `T` (by column name for structs and maps, by position for tuples,
    /// the only value for single values). Fails on the first row that does not fit.
    pub fn rows<T: DeserializeOwned>(&self) -> Result<Vec<T>, serde_json::Error> {
        self.data
            .iter()
            .map(|row| decode_value_row(&self.columns, row))
            .collect()
    }

    /// Every row as a JSON object keyed by column name. When two columns share a name, the
    /// later one wins.
    pub fn maps(&self) -> Vec<Map<String, Value>> {
        self.data
            .iter()
            .map(|row| {
                self.columns
                    .iter()
                    .cloned()
                    .zip(row.iter().cloned())
                    .collect()
            })
            .collect()
    }
}

fn decode_value_row<T: DeserializeOwned>(
    columns: &[String],
    row: &[Value],
) -> Result<T, serde_json::Error> {
    T::deserialize(RowDeserializer {
        columns,
        values: SeqDeserializer::<_, serde_json::Error>::new(row.iter()),
    })
}

/// The answer to a query with every row decoded as `T` straight from the response body (see
/// the [module documentation](self) for how rows map to `T`).
#[derive(Debug, Clone, PartialEq)]
pub struct SqlRows<T> {
    /// The column names, in order.
    pub columns: Vec<String>,
    /// The decoded rows.
    pub rows: Vec<T>,
    /// The number of rows the server reported (the number of rows when it did not say).
    pub row_count: u64,
}

impl<T> IntoIterator for SqlRows<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.rows.into_iter()
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for SqlRows<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(RowsVisitor(PhantomData))
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum Key {
    Columns,
    Data,
    RowCount,
    #[serde(other)]
    Other,
}

struct RowsVisitor<T>(PhantomData<fn() -> T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for RowsVisitor<T> {
    type Value = SqlRows<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an SQL answer {\"columns\": [...], \"data\": [[...], ...]}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut columns: Option<Vec<String>> = None;
        let mut rows: Option<Vec<T>> = None;
        let mut buffered: Option<Vec<Vec<Value>>> = None;
        let mut row_count: Option<u64> = None;
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                Key::Columns => columns = Some(map.next_value()?),
                Key::Data => match &columns {
                    // The usual order: decode each row as it is read.
                    Some(columns) => {
                        rows = Some(map.next_value_seed(DataSeed {
                            columns,
                            _row: PhantomData,
                        })?);
                    }
                    // Rows before column names: keep them until the names arrive.
                    None => buffered = Some(map.next_value()?),
                },
                Key::RowCount => row_count = map.next_value()?,
                Key::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let columns = columns.ok_or_else(|| de::Error::missing_field("columns"))?;
        let rows = match (rows, buffered) {
            (Some(rows), _) => rows,
            (None, Some(values)) => values
                .iter()
                .map(|row| decode_value_row(&columns, row))
                .collect::<Result<_, _>>()
                .map_err(de::Error::custom)?,
            (None, None) => return Err(de::Error::missing_field("data")),
        };
        Ok(SqlRows {
            row_count: row_count.unwrap_or(rows.len() as u64),
            columns,
            rows,
        })
    }
}

struct DataSeed<'a, T> {
    columns: &'a [String],
    _row: PhantomData<fn() -> T>,
}

impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for DataSeed<'_, T> {
    type Value = Vec<T>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<T>, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for DataSeed<'_, T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of rows")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut rows = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(MAX_SQL_ROWS));
        while let Some(row) = seq.next_element_seed(RowSeed::<T> {
            columns: self.columns,
            _row: PhantomData,
        })? {
            rows.push(row);
        }
        Ok(rows)
    }
}

struct RowSeed<'a, T> {
    columns: &'a [String],
    _row: PhantomData<fn() -> T>,
}

impl<'de, T: DeserializeOwned> DeserializeSeed<'de> for RowSeed<'_, T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: DeserializeOwned> Visitor<'de> for RowSeed<'_, T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a row: an array of values in column order")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        T::deserialize(RowDeserializer {
            columns: self.columns,
            values: seq,
        })
    }
}

/// One row (the values, in column order) seen as a map keyed by column name, a sequence, or
/// the single value of a one-column row, whichever the target type asks for.
struct RowDeserializer<'a, S> {
    columns: &'a [String],
    values: S,
}

const ONE_PER_COLUMN: &str = "one value per column";

/// After the last column: the row must have no more values.
fn ensure_end<'de, S: SeqAccess<'de>>(values: &mut S, read: usize) -> Result<(), S::Error> {
    if values.next_element::<IgnoredAny>()?.is_some() {
        return Err(de::Error::custom(format!(
            "a row has more values than its {read} column(s)"
        )));
    }
    Ok(())
}

impl<'de, S: SeqAccess<'de>> RowDeserializer<'_, S> {
    fn single<V: Visitor<'de>>(self, hint: Hint, visitor: V) -> Result<V::Value, S::Error> {
        if self.columns.len() != 1 {
            return Err(de::Error::custom(format!(
                "a row of {} columns cannot be read as one value; read it as a struct, a tuple or a map",
                self.columns.len()
            )));
        }
        let mut values = self.values;
        let value = values
            .next_element_seed(HintSeed { hint, visitor })?
            .ok_or_else(|| de::Error::invalid_length(0, &ONE_PER_COLUMN))?;
        ensure_end(&mut values, 1)?;
        Ok(value)
    }
}

macro_rules! single_value {
    ($($method:ident => $hint:ident),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            self.single(Hint::$hint, visitor)
        }
    )*};
}

impl<'de, S: SeqAccess<'de>> Deserializer<'de> for RowDeserializer<'_, S> {
    type Error = S::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, S::Error> {
        let mut values = self.values;
        let value = visitor.visit_map(RowMap {
            columns: self.columns,
            values: &mut values,
            next: 0,
        })?;
        Ok(value)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, S::Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, S::Error> {
        self.deserialize_any(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, S::Error> {
        let mut values = self.values;
        let value = visitor.visit_seq(&mut values)?;
        ensure_end(&mut values, self.columns.len())?;
        Ok(value)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, S::Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, S::Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, S::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, S::Error> {
        self.single(Hint::UnitStruct(name), visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, S::Error> {
        self.single(Hint::Enum(name, variants), visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, S::Error> {
        let mut values = self.values;
        while values.next_element::<IgnoredAny>()?.is_some() {}
        visitor.visit_unit()
    }

    single_value! {
        deserialize_bool => Bool,
        deserialize_i8 => I8,
        deserialize_i16 => I16,
        deserialize_i32 => I32,
        deserialize_i64 => I64,
        deserialize_i128 => I128,
        deserialize_u8 => U8,
        deserialize_u16 => U16,
        deserialize_u32 => U32,
        deserialize_u64 => U64,
        deserialize_u128 => U128,
        deserialize_f32 => F32,
        deserialize_f64 => F64,
        deserialize_char => Char,
        deserialize_str => Str,
        deserialize_string => String,
        deserialize_bytes => Bytes,
        deserialize_byte_buf => ByteBuf,
        deserialize_option => Option,
        deserialize_unit => Unit,
        deserialize_identifier => Identifier,
    }
}

/// The columns of a row as keys, its values as values.
struct RowMap<'a, 'v, S> {
    columns: &'a [String],
    values: &'v mut S,
    next: usize,
}

impl<'de, S: SeqAccess<'de>> MapAccess<'de> for RowMap<'_, '_, S> {
    type Error = S::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, S::Error> {
        match self.columns.get(self.next) {
            Some(name) => seed
                .deserialize(StrDeserializer::<S::Error>::new(name))
                .map(Some),
            None => {
                ensure_end(self.values, self.columns.len())?;
                Ok(None)
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, S::Error> {
        let index = self.next;
        self.next += 1;
        self.values
            .next_element_seed(seed)?
            .ok_or_else(|| de::Error::invalid_length(index, &ONE_PER_COLUMN))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.columns.len().saturating_sub(self.next))
    }
}

/// Which `deserialize_*` the target type called, to repeat it on the single value of a
/// one-column row.
#[derive(Clone, Copy)]
enum Hint {
    Bool,
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    U128,
    F32,
    F64,
    Char,
    Str,
    String,
    Bytes,
    ByteBuf,
    Option,
    Unit,
    Identifier,
    UnitStruct(&'static str),
    Enum(&'static str, &'static [&'static str]),
}

struct HintSeed<V> {
    hint: Hint,
    visitor: V,
}

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for HintSeed<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        let v = self.visitor;
        match self.hint {
            Hint::Bool => d.deserialize_bool(v),
            Hint::I8 => d.deserialize_i8(v),
            Hint::I16 => d.deserialize_i16(v),
            Hint::I32 => d.deserialize_i32(v),
            Hint::I64 => d.deserialize_i64(v),
            Hint::I128 => d.deserialize_i128(v),
            Hint::U8 => d.deserialize_u8(v),
            Hint::U16 => d.deserialize_u16(v),
            Hint::U32 => d.deserialize_u32(v),
            Hint::U64 => d.deserialize_u64(v),
            Hint::U128 => d.deserialize_u128(v),
            Hint::F32 => d.deserialize_f32(v),
            Hint::F64 => d.deserialize_f64(v),
            Hint::Char => d.deserialize_char(v),
            Hint::Str => d.deserialize_str(v),
            Hint::String => d.deserialize_string(v),
            Hint::Bytes => d.deserialize_bytes(v),
            Hint::ByteBuf => d.deserialize_byte_buf(v),
            Hint::Option => d.deserialize_option(v),
            Hint::Unit => d.deserialize_unit(v),
            Hint::Identifier => d.deserialize_identifier(v),
            Hint::UnitStruct(name) => d.deserialize_unit_struct(name, v),
            Hint::Enum(name, variants) => d.deserialize_enum(name, variants, v),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Row {
        id: i64,
        name: Option<String>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Status {
        Paid,
        New,
    }

    const BODY: &str = r#"{"columns":["id","name"],"data":[[1,"Anna"],[2,null]],"row_count":2}"#;

    fn typed<T: DeserializeOwned>(body: &str) -> Result<SqlRows<T>, serde_json::Error> {
        serde_json::from_str(body)
    }

    #[test]
    fn structs_by_name_tuples_by_position_both_paths() {
        let want = vec![
            Row {
                id: 1,
                name: Some("Anna".into()),
            },
            Row { id: 2, name: None },
        ];
        assert_eq!(typed::<Row>(BODY).unwrap().rows, want);
        let response: SqlResponse = serde_json::from_str(BODY).unwrap();
        assert_eq!(response.rows::<Row>().unwrap(), want);
        let tuples: Vec<(i64, Option<String>)> = response.rows().unwrap();
        assert_eq!(tuples[1], (2, None));
        assert_eq!(typed::<(i64, Option<String>)>(BODY).unwrap().rows, tuples);
        let vecs: Vec<Vec<Value>> = response.rows().unwrap();
        assert_eq!(vecs, response.data);
        // Rows before columns: buffered, same result.
        let reordered = r#"{"row_count":2,"data":[[1,"Anna"],[2,null]],"columns":["id","name"]}"#;
        assert_eq!(typed::<Row>(reordered).unwrap().rows, want);
    }

    #[test]
    fn maps_and_values() {
        let response: SqlResponse = serde_json::from_str(BODY).unwrap();
        assert_eq!(
            response.maps()[0],
            json!({"id": 1, "name": "Anna"})
                .as_object()
                .cloned()
                .unwrap()
        );
        let values: Vec<Value> = response.rows().unwrap();
        assert_eq!(values[1], json!({"id": 2, "name": null}));
        let hash: Vec<HashMap<String, Value>> = typed(BODY).unwrap().rows;
        assert_eq!(hash[0]["name"], "Anna");
        let btree: Vec<BTreeMap<String, Value>> = response.rows().unwrap();
        assert_eq!(btree[1]["id"], 2);
        assert_eq!(response.column_index("name"), Some(1));
        assert_eq!(response.len(), 2);
    }

    #[test]
    fn single_column_rows_are_single_values() {
        let body = r#"{"columns":["n"],"data":[[3],[null]]}"#;
        let rows: SqlRows<Option<i64>> = typed(body).unwrap();
        assert_eq!(rows.rows, vec![Some(3), None]);
        assert_eq!(rows.row_count, 2);
        let statuses: SqlRows<Status> =
            typed(r#"{"columns":["s"],"data":[["paid"],["new"]]}"#).unwrap();
        assert_eq!(statuses.rows, vec![Status::Paid, Status::New]);
        let names: Vec<String> =
            serde_json::from_str::<SqlResponse>(r#"{"columns":["s"],"data":[["é"]]}"#)
                .unwrap()
                .rows()
                .unwrap();
        assert_eq!(names, vec!["é"]);
        // Several columns cannot be one value.
        let err = typed::<i64>(BODY).unwrap_err();
        assert!(
            err.to_string().contains("cannot be read as one value"),
            "{err}"
        );
    }

    #[test]
    fn rows_that_do_not_match_the_columns_are_errors() {
        let short = r#"{"columns":["id","name"],"data":[[1]]}"#;
        let long = r#"{"columns":["id","name"],"data":[[1,"a",3]]}"#;
        for body in [short, long] {
            assert!(typed::<Row>(body).is_err(), "{body}");
            assert!(typed::<Value>(body).is_err(), "{body}");
            let response: SqlResponse = serde_json::from_str(body).unwrap();
            assert!(response.rows::<Row>().is_err(), "{body}");
        }
        assert!(typed::<(i64, String)>(long).is_err());
        assert!(typed::<Row>(r#"{"data":[]}"#).is_err());
        assert!(typed::<Row>(r#"{"columns":[]}"#).is_err());
        // A missing row_count is the number of rows.
        let response: SqlResponse =
            serde_json::from_str(r#"{"columns":["a"],"data":[[1]]}"#).unwrap();
        assert_eq!(response.row_count, 1);
    }

    #[test]
    fn request_shape() {
        let r = SqlRequest::new("select 1");
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"query": "select 1", "v": 2})
        );
        let back: SqlRequest = serde_json::from_str(r#"{"query":"q"}"#).unwrap();
        assert_eq!(back.v, None);
        assert!(back.params_obj.is_empty());
    }
}
