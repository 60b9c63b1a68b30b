//! The values a statement carries to its placeholders ([`Binds`]), one type for every
//! database: the flows and each database's words bind them, and only a database's
//! `driver.rs` turns each [`Bind`] into what its client sends.

use crate::dialect::Dialect;

/// One value bound to a placeholder.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    /// NULL.
    Null,
    /// A truth, where a database has a boolean type the value is sent as (PostgreSQL's; a user's
    /// statement on the others binds `1` or `0`, as their engine's drivers write it).
    Bool(bool),
    /// A signed integer.
    Int(i64),
    /// An unsigned integer past `i64` (MySQL's `BIGINT UNSIGNED`).
    UInt(u64),
    /// A floating-point number.
    Float(f64),
    /// Text.
    Text(String),
    /// Bytes (a binary column's, or text MySQL's driver sends as bytes).
    Bytes(Vec<u8>),
    /// A date and time as MySQL's binary protocol reads one, in its order (year, month, day,
    /// hour, minute, second, microsecond; a `DATE` has no time), bound again as it was read: a
    /// walk's anchor.
    DateTime(u16, u8, u8, u8, u8, u8, u32),
    /// A duration or a time of day as MySQL's binary protocol reads one (`TIME`), in its order
    /// (negative, days, hours, minutes, seconds, microseconds).
    Time(bool, u32, u8, u8, u8, u32),
    /// Texts (PostgreSQL's `$n::text[]` of a catalog statement).
    Texts(Vec<String>),
    /// Integers (PostgreSQL's `$n::int8[]`).
    Ints(Vec<i64>),
    /// Truths (PostgreSQL's `$n::bool[]`).
    Bools(Vec<bool>),
}

/// A statement's bound values, in the order of its placeholders.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Binds(pub Vec<Bind>);

impl Binds {
    /// Binds `value`: the placeholder's number, from 1.
    pub fn push(&mut self, value: Bind) -> usize {
        self.0.push(value);
        self.0.len()
    }

    /// Binds `value`: its placeholder, as the database `D` writes it.
    pub fn bind<D: Dialect + ?Sized>(&mut self, value: Bind) -> String {
        let placeholder = D::placeholder(self.0.len() + 1, &value);
        self.0.push(value);
        placeholder
    }

    /// The values, in order.
    pub fn values(&self) -> &[Bind] {
        &self.0
    }

    /// No value is bound.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The key a statement and these values are remembered by (a walk's anchors, a count):
    /// `sql`, then each value tagged with its kind, so that `1`, `1.0` and `'1'` stay apart.
    /// Built by hand: once per page (docs/performance.md, section 6).
    pub fn memo_key(&self, sql: &str) -> Vec<u8> {
        let mut k = Vec::with_capacity(sql.len() + 1 + self.0.len() * 9);
        k.extend_from_slice(sql.as_bytes());
        k.push(0);
        for value in &self.0 {
            value.write_key(&mut k);
        }
        k
    }
}

/// Text bound as it is (a sort key PostgreSQL reads as text).
impl From<String> for Bind {
    fn from(text: String) -> Self {
        Bind::Text(text)
    }
}

impl Bind {
    /// The value as SQL reads its text, for a driver that sends it so: a number past `i64`, a
    /// date-time (`YYYY-MM-DD HH:MM:SS.ffffff`), a duration (`[-]H:MM:SS.ffffff`, its days
    /// counted as hours, which PostgreSQL's `interval` and MySQL's `TIME` both read). `None`
    /// for the other values, which each driver sends in its own form.
    pub fn sql_text(&self) -> Option<String> {
        Some(match *self {
            Bind::UInt(u) => u.to_string(),
            Bind::DateTime(year, month, day, hour, minute, second, micro) => format!(
                "{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}.{micro:06}"
            ),
            Bind::Time(negative, days, hours, minutes, seconds, micros) => {
                let sign = if negative { "-" } else { "" };
                let hours = u64::from(days) * 24 + u64::from(hours);
                format!("{sign}{hours}:{minutes:02}:{seconds:02}.{micros:06}")
            }
            _ => return None,
        })
    }

    /// Writes the value's kind and its bytes to a memo key ([`Binds::memo_key`]).
    fn write_key(&self, k: &mut Vec<u8>) {
        let sized = |k: &mut Vec<u8>, tag: u8, bytes: &[u8]| {
            k.push(tag);
            k.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            k.extend_from_slice(bytes);
        };
        match self {
            Bind::Null => k.push(b'n'),
            Bind::Bool(b) => {
                k.push(b'o');
                k.push(u8::from(*b));
            }
            Bind::Int(i) => {
                k.push(b'i');
                k.extend_from_slice(&i.to_le_bytes());
            }
            Bind::UInt(u) => {
                k.push(b'u');
                k.extend_from_slice(&u.to_le_bytes());
            }
            Bind::Float(f) => {
                k.push(b'r');
                k.extend_from_slice(&f.to_bits().to_le_bytes());
            }
            Bind::Text(t) => sized(k, b't', t.as_bytes()),
            Bind::Bytes(b) => sized(k, b'b', b),
            Bind::DateTime(..) | Bind::Time(..) => {
                sized(k, b'd', format!("{self:?}").as_bytes());
            }
            Bind::Texts(items) => sized(k, b'T', format!("{items:?}").as_bytes()),
            Bind::Ints(items) => sized(k, b'I', format!("{items:?}").as_bytes()),
            Bind::Bools(items) => sized(k, b'B', format!("{items:?}").as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_sent_as_text_read_as_sql_reads_them() {
        let at = Bind::DateTime(2024, 2, 29, 23, 5, 6, 7);
        assert_eq!(at.sql_text().as_deref(), Some("2024-02-29 23:05:06.000007"));
        let back = Bind::Time(true, 1, 2, 3, 4, 5);
        assert_eq!(back.sql_text().as_deref(), Some("-26:03:04.000005"));
        assert_eq!(
            Bind::UInt(u64::MAX).sql_text().as_deref(),
            Some("18446744073709551615")
        );
        assert_eq!(Bind::Int(1).sql_text(), None);
    }

    /// Two statements share a key only when their text and every value (with its kind) are
    /// the same.
    #[test]
    fn memo_keys_tell_values_and_their_kinds_apart() {
        let key = |values: Vec<Bind>| Binds(values).memo_key("SELECT ?");
        let one = [
            Bind::Int(1),
            Bind::UInt(1),
            Bind::Float(1.0),
            Bind::Text("1".to_owned()),
            Bind::Bytes(b"1".to_vec()),
            Bind::Texts(vec!["1".to_owned()]),
            Bind::Null,
        ];
        for (i, a) in one.iter().enumerate() {
            for (j, b) in one.iter().enumerate() {
                assert_eq!(
                    i == j,
                    key(vec![a.clone()]) == key(vec![b.clone()]),
                    "{a:?} {b:?}"
                );
            }
        }
        // A text's length is part of it: ("ab", "c") is not ("a", "bc").
        let text = |t: &str| Bind::Text(t.to_owned());
        assert_ne!(
            key(vec![text("ab"), text("c")]),
            key(vec![text("a"), text("bc")])
        );
        assert_ne!(
            Binds(vec![Bind::Null]).memo_key("SELECT ?"),
            Binds(vec![Bind::Null]).memo_key("SELECT ? ")
        );
    }
}
