//! How SQLAlchemy 1.4's SQLite dialect reflects a column's declared type into the engine's view
//! of it ([`ColumnType`]): SQLite's declared type, upper-cased, is split into a name (`[\w ]+`)
//! and arguments; a known name (`INTEGER`, `REAL`, `DATE`, ...) gives its type, otherwise
//! SQLite's affinity rules do (`INT` -> integer, `CHAR`/`CLOB`/`TEXT` -> text, `BLOB` or nothing
//! -> untyped, `REAL`/`FLOA`/`DOUB` -> real, anything else -> `NUMERIC`). The serializer, filter
//! family and search that follow from the reflected type are the engine's
//! (`column.rs`). No database is read here: the declared text comes from the caller (the
//! emulator's SQLite reflection, `svc records import`'s check).

//!

use crate::types::{ColumnType, FilterFamily, Reflected, Search, Serializer};

impl ColumnType {
    /// The engine's view of a column declared as `declared` (SQLite's declared type text).
    pub fn from_declared(declared: &str) -> ColumnType {
        let upper = declared.to_ascii_uppercase();
        let (name, args) = split_declared(&upper);
        let numbers: Vec<u32> = args
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .filter_map(|s| s.parse().ok())
            .collect();
        let reflected = match name {
            "BIGINT" | "INT" | "INTEGER" | "SMALLINT" => Reflected::Integer,
            "BLOB" => Reflected::Blob,
            "BOOL" | "BOOLEAN" => Reflected::Boolean,
            "CHAR" | "NCHAR" | "NVARCHAR" | "TEXT" | "VARCHAR" => Reflected::String,
            "DATE" | "DATE_CHAR" => Reflected::Date,
            "DATETIME" | "DATETIME_CHAR" | "TIMESTAMP" => Reflected::DateTime,
            "DOUBLE" | "FLOAT" | "REAL" => Reflected::Float,
            "DECIMAL" | "NUMERIC" => Reflected::Numeric {
                scale: numbers.get(1).map_or(10, |&s| s.min(255) as u8),
            },
            "JSON" => Reflected::Json,
            "TIME" | "TIME_CHAR" => Reflected::Time,
            n if n.contains("INT") => Reflected::Integer,
            n if n.contains("CHAR") || n.contains("CLOB") || n.contains("TEXT") => {
                Reflected::String
            }
            n if n.contains("BLOB") || n.is_empty() => Reflected::Untyped,
            n if n.contains("REAL") || n.contains("FLOA") || n.contains("DOUB") => Reflected::Float,
            // Arguments of an unknown name go to NUMERIC(precision, scale) too.
            _ => Reflected::Numeric {
                scale: numbers.get(1).map_or(10, |&s| s.min(255) as u8),
            },
        };
        // The engine matches `str(type)`: the SQLAlchemy type's name, with its arguments.
        let text_name = type_text(name, reflected, &numbers);
        let serializer = match text_name.as_str() {
            "INTEGER" | "SMALLINT" | "BIGINT" | "BOOLEAN" | "FLOAT" | "DECIMAL" => {
                Serializer::Value
            }
            t if t.starts_with("TIMESTAMP") || t.starts_with("DATETIME") => Serializer::DateTime,
            _ => Serializer::Text,
        };
        let filter = match reflected {
            Reflected::Integer | Reflected::Numeric { .. } | Reflected::Float => {
                FilterFamily::Number
            }
            Reflected::Boolean => FilterFamily::Boolean,
            Reflected::Date => FilterFamily::Date,
            Reflected::DateTime => FilterFamily::DateTime,
            Reflected::String => FilterFamily::Text,
            // SQLAlchemy's `JSON`: the engine's JSON lookups, which on SQLite match the text.
            Reflected::Json => FilterFamily::Json,
            Reflected::Time | Reflected::Blob | Reflected::Untyped => FilterFamily::Text,
        };
        let search = Search::of(
            filter,
            matches!(reflected, Reflected::String | Reflected::Json),
        );
        ColumnType {
            reflected,
            serializer,
            filter,
            search,
        }
    }
}

/// SQLAlchemy's `re.match(r"([\w ]+)(\(.*?\))?", type_)`: the name, then the first
/// parenthesised part (empty when there is none).
fn split_declared(upper: &str) -> (&str, &str) {
    let end = upper
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_' || c == ' '))
        .map_or(upper.len(), |(i, _)| i);
    let name = &upper[..end];
    let rest = &upper[end..];
    let args = if rest.starts_with('(') {
        rest.find(')').map_or("", |close| &rest[..=close])
    } else {
        ""
    };
    (name, args)
}

/// `str(type).upper()` of the reflected SQLAlchemy type, as far as the engine's table looks.
fn type_text(name: &str, reflected: Reflected, numbers: &[u32]) -> String {
    let args = |n: usize| -> String {
        let shown: Vec<String> = numbers.iter().take(n).map(u32::to_string).collect();
        if shown.is_empty() {
            String::new()
        } else {
            format!("({})", shown.join(", "))
        }
    };
    match reflected {
        Reflected::Integer => match name {
            "BIGINT" => "BIGINT".to_owned(),
            "SMALLINT" => "SMALLINT".to_owned(),
            _ => "INTEGER".to_owned(),
        },
        Reflected::Boolean => "BOOLEAN".to_owned(),
        Reflected::Float => match name {
            "FLOAT" | "DOUBLE" => format!("FLOAT{}", args(1)),
            _ => format!("REAL{}", args(1)),
        },
        Reflected::Numeric { .. } => match name {
            "DECIMAL" => format!("DECIMAL{}", args(2)),
            _ => format!("NUMERIC{}", args(2)),
        },
        Reflected::DateTime if name == "TIMESTAMP" => "TIMESTAMP".to_owned(),
        Reflected::DateTime => "DATETIME".to_owned(),
        Reflected::Date => "DATE".to_owned(),
        Reflected::Time => "TIME".to_owned(),
        Reflected::String => name.to_owned(),
        Reflected::Json => "JSON".to_owned(),
        Reflected::Blob => "BLOB".to_owned(),
        Reflected::Untyped => "NULLTYPE".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Stored, write_field};

    fn ty(decl: &str) -> ColumnType {
        ColumnType::from_declared(decl)
    }

    #[test]
    fn the_engine_writes_most_types_as_text() {
        for (decl, want) in [
            ("INTEGER", Serializer::Value),
            ("BIGINT", Serializer::Value),
            ("BOOLEAN", Serializer::Value),
            ("FLOAT", Serializer::Value),
            ("DOUBLE", Serializer::Value),
            ("DECIMAL", Serializer::Value),
            ("DATETIME", Serializer::DateTime),
            ("TIMESTAMP", Serializer::DateTime),
            ("REAL", Serializer::Text),
            ("FLOAT(53)", Serializer::Text),
            ("NUMERIC", Serializer::Text),
            ("DECIMAL(10, 2)", Serializer::Text),
            ("DATE", Serializer::Text),
            ("TEXT", Serializer::Text),
            ("", Serializer::Text),
        ] {
            assert_eq!(ty(decl).serializer, want, "{decl:?}");
        }
    }

    fn field(decl: &str, v: Stored<'_>) -> String {
        let mut buf = Vec::new();
        write_field(&mut buf, ty(decl), v);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn record_values_are_written_like_the_engine() {
        assert_eq!(field("REAL", Stored::Real(57.0)), r#""57.0""#);
        assert_eq!(field("REAL", Stored::Real(0.1)), r#""0.1""#);
        assert_eq!(field("FLOAT", Stored::Real(57.0)), "57.0");
        assert_eq!(
            field("NUMERIC", Stored::Integer(88378)),
            r#""88378.0000000000""#
        );
        assert_eq!(field("NUMERIC", Stored::Integer(0)), r#""0E-10""#);
        assert_eq!(field("DECIMAL(10, 2)", Stored::Real(4.5)), r#""4.50""#);
        assert_eq!(field("DECIMAL", Stored::Real(4.5)), "4.5");
        assert_eq!(
            field("DATE", Stored::Text(b"2024-03-05")),
            r#""2024-03-05""#
        );
        assert_eq!(
            field("DATETIME", Stored::Text(b"2024-03-05 10:11:12")),
            r#""2024-03-05T10:11:12""#
        );
        assert_eq!(
            field("DATETIME", Stored::Text(b"2024-03-05 10:11:12.250")),
            r#""2024-03-05T10:11:12.000250""#
        );
        assert_eq!(field("BOOLEAN", Stored::Integer(2)), "true");
        assert_eq!(field("", Stored::Integer(5)), r#""5""#);
        assert_eq!(field("", Stored::Blob(b"a'\x00")), r#""b\"a'\\x00\"""#);
        assert_eq!(field("INTEGER", Stored::Integer(-7)), "-7");
        assert_eq!(field("TEXT", Stored::Null), "null");
    }

    #[test]
    fn declared_types_reflect_as_sqlalchemy_does() {
        use Reflected::*;
        let cases = [
            ("INTEGER", Integer),
            ("int", Integer),
            ("UNSIGNED BIG INT", Integer),
            ("TINYINT(1)", Integer),
            ("REAL", Float),
            ("DOUBLE PRECISION", Float),
            ("FLOAT(53)", Float),
            ("NUMERIC", Numeric { scale: 10 }),
            ("DECIMAL(10, 2)", Numeric { scale: 2 }),
            ("NUMERIC(8)", Numeric { scale: 10 }),
            ("UUID", Numeric { scale: 10 }),
            ("BOOLEAN", Boolean),
            ("DATE", Date),
            ("DATETIME", DateTime),
            ("TIMESTAMP", DateTime),
            ("DATETIME2", Numeric { scale: 10 }),
            ("VARCHAR(80)", String),
            ("NATIVE CHARACTER(70)", String),
            ("CLOB", String),
            ("BLOB", Blob),
            ("", Untyped),
            ("MYBLOB", Untyped),
            ("JSON", Json),
            ("TIME", Time),
        ];
        for (decl, want) in cases {
            assert_eq!(ty(decl).reflected, want, "{decl:?}");
        }
    }
}
