//! How SQLAlchemy 1.4's SQLite dialect reflects a column's declared type into the engine's view
//! of it ([`ColumnType`]): SQLite's declared type, upper-cased, is split into a name (`[\w ]+`)
//! and arguments; a known name (`INTEGER`, `REAL`, `DATE`, ...) gives its type, otherwise
//! SQLite's affinity rules do (`INT` -> integer, `CHAR`/`CLOB`/`TEXT` -> text, `BLOB` or nothing
//! -> untyped, `REAL`/`FLOA`/`DOUB` -> real, anything else -> `NUMERIC`). The serializer, filter
//! family and search that follow from the reflected type are the engine's
//! (`column.rs`). No database is read here: the declared text comes from the caller (the
//! emulator's SQLite reflection, `svc records import`'s check).

//!

use crate::field_input::InputField;
use crate::types::{ColumnType, FilterFamily, Reflected, Search, Serializer};

/// The SQLAlchemy type class SQLite's dialect picks for a declared name (`ischema_names`, then
/// the affinity rules), before its arguments are applied.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Integer,
    BigInt,
    SmallInt,
    Boolean,
    /// `FLOAT` (also `DOUBLE`, which SQLAlchemy 1.4's SQLite dialect reflects as `FLOAT`).
    Float,
    /// `REAL`, and the affinity's real names (`DOUBLE PRECISION`, `FLOAT8`, ...).
    Real,
    Numeric,
    Decimal,
    Date,
    DateTime,
    Timestamp,
    Time,
    /// A string type, printed with its name: `CHAR`, `NCHAR`, `NVARCHAR`, `VARCHAR`, and
    /// `TEXT` (also by affinity: `CLOB`, `NATIVE CHARACTER`, ...).
    String(&'static str),
    Json,
    Blob,
    Null,
}

impl ColumnType {
    /// The engine's view of a column declared as `declared` (SQLite's declared type text).
    pub fn from_declared(declared: &str) -> ColumnType {
        let (class, args) = class_of(declared);
        let arg =
            |i: usize| -> Option<u64> { args.get(i).map(|a| a.parse::<u64>().unwrap_or(u64::MAX)) };
        let scale = |i: usize| arg(i).map_or(10, |s| s.min(255) as u8);
        let reflected = match class {
            Class::Integer | Class::BigInt | Class::SmallInt => Reflected::Integer,
            Class::Boolean => Reflected::Boolean,
            // `FLOAT(precision, asdecimal, decimal_return_scale)`: a true `asdecimal` reads
            // `Decimal`s of the third argument's places, 10 when it has none.
            Class::Float | Class::Real if arg(1).is_some_and(|a| a != 0) => {
                Reflected::Numeric { scale: scale(2) }
            }
            Class::Float | Class::Real => Reflected::Float,
            // `NUMERIC(precision, scale, decimal_return_scale, asdecimal)`: a false `asdecimal`
            // reads floats; otherwise `Decimal`s of the scale's places (SQLAlchemy's numeric
            // reading on SQLite takes the scale, not `decimal_return_scale`).
            Class::Numeric | Class::Decimal if arg(3) == Some(0) => Reflected::Float,
            Class::Numeric | Class::Decimal => Reflected::Numeric { scale: scale(1) },
            Class::Date => Reflected::Date,
            Class::DateTime | Class::Timestamp => Reflected::DateTime,
            Class::Time => Reflected::Time,
            Class::String(_) => Reflected::String,
            Class::Json => Reflected::Json,
            Class::Blob => Reflected::Blob,
            Class::Null => Reflected::Untyped,
        };
        // The engine picks the field by `str(type)`, and the field writes the values.
        let serializer = match InputField::of_type_text(&type_text(class, &args)) {
            Some(InputField::Integer | InputField::Float | InputField::Boolean) => {
                Serializer::Value
            }
            Some(InputField::DateTime) => Serializer::DateTime,
            // JSON columns are written by the SQLite backend's own JSON path; the rest is text.
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

    /// `str(column.type).upper()` of a SQLite column declared as `declared`: the text the
    /// engine picks the column's serializer field by (`get_column_data_type`).
    pub fn type_text_of_declared(declared: &str) -> String {
        let (class, args) = class_of(declared);
        type_text(class, &args)
    }
}

/// SQLAlchemy's SQLite `_resolve_type_affinity` of a declared type: the type class and the
/// arguments it is called with (`re.findall(r"(\d+)", args)`, as `int()` reads them, so
/// without leading zeros).
fn class_of(declared: &str) -> (Class, Vec<String>) {
    let upper = declared.to_ascii_uppercase();
    let (name, args) = split_declared(&upper);
    let numbers: Vec<String> = args
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| match s.trim_start_matches('0') {
            "" => "0".to_owned(),
            digits => digits.to_owned(),
        })
        .collect();
    let class = match name {
        "BIGINT" => Class::BigInt,
        "SMALLINT" => Class::SmallInt,
        "INT" | "INTEGER" => Class::Integer,
        "BLOB" => Class::Blob,
        "BOOL" | "BOOLEAN" => Class::Boolean,
        "CHAR" => Class::String("CHAR"),
        "NCHAR" => Class::String("NCHAR"),
        "NVARCHAR" => Class::String("NVARCHAR"),
        "TEXT" => Class::String("TEXT"),
        "VARCHAR" => Class::String("VARCHAR"),
        "DATE" | "DATE_CHAR" => Class::Date,
        "DATETIME" | "DATETIME_CHAR" => Class::DateTime,
        "TIMESTAMP" => Class::Timestamp,
        "DOUBLE" | "FLOAT" => Class::Float,
        "REAL" => Class::Real,
        "DECIMAL" => Class::Decimal,
        "NUMERIC" => Class::Numeric,
        "JSON" => Class::Json,
        "TIME" | "TIME_CHAR" => Class::Time,
        n if n.contains("INT") => Class::Integer,
        n if n.contains("CHAR") || n.contains("CLOB") || n.contains("TEXT") => {
            Class::String("TEXT")
        }
        n if n.contains("BLOB") || n.is_empty() => Class::Null,
        n if n.contains("REAL") || n.contains("FLOA") || n.contains("DOUB") => Class::Real,
        _ => Class::Numeric,
    };
    // A type called with more arguments than it takes is made without any (SQLAlchemy warns).
    let takes = match class {
        Class::Float | Class::Real => 3,
        Class::Numeric | Class::Decimal => 4,
        Class::String(_) => 2,
        _ => usize::MAX,
    };
    let numbers = if numbers.len() > takes {
        Vec::new()
    } else {
        numbers
    };
    (class, numbers)
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

/// `str(type).upper()` of the reflected SQLAlchemy type (its generic compiler's text): the
/// number types with their precision and scale, the string types with their length, the rest
/// by name alone (`FLOAT` and `REAL` never print theirs). A type whose arguments it does not
/// take is made without them (`INTEGER(5)` is `INTEGER`).
fn type_text(class: Class, args: &[String]) -> String {
    let shown = |n: usize| -> String {
        let taken: Vec<&str> = args.iter().take(n).map(String::as_str).collect();
        if taken.is_empty() {
            String::new()
        } else {
            format!("({})", taken.join(", "))
        }
    };
    match class {
        Class::Integer => "INTEGER".to_owned(),
        Class::BigInt => "BIGINT".to_owned(),
        Class::SmallInt => "SMALLINT".to_owned(),
        Class::Boolean => "BOOLEAN".to_owned(),
        Class::Float => "FLOAT".to_owned(),
        Class::Real => "REAL".to_owned(),
        Class::Numeric => format!("NUMERIC{}", shown(2)),
        Class::Decimal => format!("DECIMAL{}", shown(2)),
        Class::Date => "DATE".to_owned(),
        Class::DateTime => "DATETIME".to_owned(),
        Class::Timestamp => "TIMESTAMP".to_owned(),
        Class::Time => "TIME".to_owned(),
        // `VARCHAR(10, 2)` is `VARCHAR(10) COLLATE "2"`: a string's second argument is its
        // collation.
        Class::String(name) => match args {
            [length, collation, ..] => format!("{name}({length}) COLLATE \"{collation}\""),
            _ => format!("{name}{}", shown(1)),
        },
        Class::Json => "JSON".to_owned(),
        Class::Blob => "BLOB".to_owned(),
        Class::Null => "NULL".to_owned(),
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
            // `FLOAT` never prints its precision: `FLOAT(53)` is a `FloatField` too.
            ("FLOAT(53)", Serializer::Value),
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

    /// SQLAlchemy 1.4.54's SQLite reflection of declared types, as the running engine's venv
    /// printed it: the declared type, `str(column.type).upper()`, the engine's field
    /// (`get_column_data_type`) and whether values are read as `Decimal`s although the type is
    /// a `Float` (its `asdecimal` argument).
    #[rustfmt::skip]
    const SQLALCHEMY: &[(&str, &str, Option<InputField>, bool)] = &[
    ("INTEGER", "INTEGER", Some(InputField::Integer), false),
    ("int", "INTEGER", Some(InputField::Integer), false),
    ("BIGINT", "BIGINT", Some(InputField::Integer), false),
    ("BIGINT(20)", "BIGINT", Some(InputField::Integer), false),
    ("SMALLINT(3)", "SMALLINT", Some(InputField::Integer), false),
    ("INTEGER(5)", "INTEGER", Some(InputField::Integer), false),
    ("UNSIGNED BIG INT", "INTEGER", Some(InputField::Integer), false),
    ("TINYINT", "INTEGER", Some(InputField::Integer), false),
    ("TINYINT(1)", "INTEGER", Some(InputField::Integer), false),
    ("MEDIUMINT", "INTEGER", Some(InputField::Integer), false),
    ("INT8", "INTEGER", Some(InputField::Integer), false),
    ("BIGINT UNSIGNED", "INTEGER", Some(InputField::Integer), false),
    ("REAL", "REAL", Some(InputField::Char), false),
    ("REAL(5)", "REAL", Some(InputField::Char), false),
    ("REAL(5,2)", "REAL", Some(InputField::Char), true),
    ("DOUBLE", "FLOAT", Some(InputField::Float), false),
    ("DOUBLE(10)", "FLOAT", Some(InputField::Float), false),
    ("DOUBLE(5,2)", "FLOAT", Some(InputField::Float), true),
    ("DOUBLE PRECISION", "REAL", Some(InputField::Char), false),
    ("DOUBLE  PRECISION", "REAL", Some(InputField::Char), false),
    ("DOUBLEPRECISION", "REAL", Some(InputField::Char), false),
    ("DOUBLE_PRECISION", "REAL", Some(InputField::Char), false),
    ("FLOAT", "FLOAT", Some(InputField::Float), false),
    ("FLOAT(10)", "FLOAT", Some(InputField::Float), false),
    ("FLOAT(53)", "FLOAT", Some(InputField::Float), false),
    ("FLOAT(5,2)", "FLOAT", Some(InputField::Float), true),
    ("FLOAT(5,0)", "FLOAT", Some(InputField::Float), false),
    ("FLOAT(5,2,3)", "FLOAT", Some(InputField::Float), true),
    ("FLOAT4", "REAL", Some(InputField::Char), false),
    ("FLOAT8", "REAL", Some(InputField::Char), false),
    ("FLOA", "REAL", Some(InputField::Char), false),
    ("NUMERIC", "NUMERIC", Some(InputField::Char), false),
    ("NUMERIC(10)", "NUMERIC(10)", Some(InputField::Char), false),
    ("NUMERIC(10,2)", "NUMERIC(10, 2)", Some(InputField::Char), false),
    ("NUMERIC ( 10 , 2 )", "NUMERIC(10, 2)", Some(InputField::Char), false),
    ("NUMERIC(10.5)", "NUMERIC(10, 5)", Some(InputField::Char), false),
    ("NUMERIC(0)", "NUMERIC(0)", Some(InputField::Char), false),
    ("NUMERIC(010,02)", "NUMERIC(10, 2)", Some(InputField::Char), false),
    ("DECIMAL", "DECIMAL", Some(InputField::Float), false),
    ("decimal", "DECIMAL", Some(InputField::Float), false),
    ("DECIMAL(10)", "DECIMAL(10)", Some(InputField::Char), false),
    ("DECIMAL(10,0)", "DECIMAL(10, 0)", Some(InputField::Char), false),
    ("DECIMAL(10,2)", "DECIMAL(10, 2)", Some(InputField::Char), false),
    ("DECIMAL (10,2)", "NUMERIC(10, 2)", Some(InputField::Char), false),
    ("DECIMAL(10,2,3)", "DECIMAL(10, 2)", Some(InputField::Char), false),
    ("DECIMAL(a)", "DECIMAL", Some(InputField::Float), false),
    ("DECIMAL(99999999999)", "DECIMAL(99999999999)", Some(InputField::Char), false),
    ("DECIMAL(10, 20)", "DECIMAL(10, 20)", Some(InputField::Char), false),
    ("DEC", "NUMERIC", Some(InputField::Char), false),
    ("MONEY", "NUMERIC", Some(InputField::Char), false),
    ("SMALLMONEY", "NUMERIC", Some(InputField::Char), false),
    ("NUMBER", "NUMERIC", Some(InputField::Char), false),
    ("UUID", "NUMERIC", Some(InputField::Char), false),
    ("BOOL", "BOOLEAN", Some(InputField::Boolean), false),
    ("BOOLEAN", "BOOLEAN", Some(InputField::Boolean), false),
    ("BOOLEAN(1)", "BOOLEAN", Some(InputField::Boolean), false),
    ("BIT", "NUMERIC", Some(InputField::Char), false),
    ("DATE", "DATE", Some(InputField::Char), false),
    ("DATE(1)", "DATE", Some(InputField::Char), false),
    ("DATE_CHAR", "DATE", Some(InputField::Char), false),
    ("DATETIME", "DATETIME", Some(InputField::DateTime), false),
    ("DATETIME(6)", "DATETIME", Some(InputField::DateTime), false),
    ("DATETIME_CHAR", "DATETIME", Some(InputField::DateTime), false),
    ("DATETIME2", "NUMERIC", Some(InputField::Char), false),
    ("TIMESTAMP", "TIMESTAMP", Some(InputField::DateTime), false),
    ("TIMESTAMP(6)", "TIMESTAMP", Some(InputField::DateTime), false),
    ("TIMESTAMP WITHOUT TIME ZONE", "NUMERIC", Some(InputField::Char), false),
    ("TIMESTAMPTZ", "NUMERIC", Some(InputField::Char), false),
    ("TIME", "TIME", Some(InputField::Char), false),
    ("TIME(6)", "TIME", Some(InputField::Char), false),
    ("TIME_CHAR", "TIME", Some(InputField::Char), false),
    ("TEXT", "TEXT", Some(InputField::Char), false),
    ("TEXT(5)", "TEXT(5)", Some(InputField::Char), false),
    ("CLOB", "TEXT", Some(InputField::Char), false),
    ("VARCHAR", "VARCHAR", Some(InputField::Char), false),
    ("VARCHAR(10)", "VARCHAR(10)", Some(InputField::Char), false),
    ("VARCHAR(10,2)", "VARCHAR(10) COLLATE \"2\"", Some(InputField::Char), false),
    ("CHAR", "CHAR", Some(InputField::Char), false),
    ("CHAR(3)", "CHAR(3)", Some(InputField::Char), false),
    ("NCHAR(3)", "NCHAR(3)", Some(InputField::Char), false),
    ("NVARCHAR(3)", "NVARCHAR(3)", Some(InputField::Char), false),
    ("NATIVE CHARACTER(70)", "TEXT(70)", Some(InputField::Char), false),
    ("VARYING CHARACTER(255)", "TEXT(255)", Some(InputField::Char), false),
    ("STRING", "NUMERIC", Some(InputField::Char), false),
    ("JSONTEXT", "TEXT", Some(InputField::Char), false),
    ("JSON", "JSON", Some(InputField::Json), false),
    ("JSON(1)", "JSON", Some(InputField::Json), false),
    ("JSONB", "NUMERIC", Some(InputField::Char), false),
    ("BLOB", "BLOB", Some(InputField::Char), false),
    ("BLOB(5)", "BLOB", Some(InputField::Char), false),
    ("MYBLOB", "NULL", Some(InputField::Char), false),
    ("", "NULL", Some(InputField::Char), false),
    ("BINARY", "NUMERIC", Some(InputField::Char), false),
    ("VARBINARY(3)", "NUMERIC(3)", Some(InputField::Char), false),
    ("BYTEA", "NUMERIC", Some(InputField::Char), false),
    ("YEAR", "NUMERIC", Some(InputField::Char), false),
    ("ENUM", "NUMERIC", Some(InputField::Char), false),
    ("SET", "NUMERIC", Some(InputField::Char), false),
    ("GEOMETRY", "NUMERIC", Some(InputField::Char), false),
    ("ARRAY", "NUMERIC", Some(InputField::Char), false),
    ("INTEGER[]", "INTEGER", Some(InputField::Integer), false),
    ("TEXT[]", "TEXT", Some(InputField::Char), false),
    ("DATETIMEINT", "INTEGER", Some(InputField::Integer), false),
    ("TIMESTAMPTEXT", "TEXT", Some(InputField::Char), false),
    ("BINARYTEXT", "TEXT", Some(InputField::Char), false),
    ];

    #[test]
    fn the_field_follows_the_text_sqlalchemy_prints() {
        for (decl, text, field, decimal_float) in SQLALCHEMY {
            assert_eq!(ColumnType::type_text_of_declared(decl), *text, "{decl:?}");
            assert_eq!(InputField::of_type_text(text), *field, "{decl:?}");
            assert_eq!(Some(InputField::of(ty(decl))), *field, "{decl:?}");
            if *decimal_float {
                assert!(
                    matches!(ty(decl).reflected, Reflected::Numeric { .. }),
                    "{decl:?}"
                );
            }
        }
        assert_eq!(
            ty("FLOAT(5,2,3)").reflected,
            Reflected::Numeric { scale: 3 }
        );
        assert_eq!(
            ty("DECIMAL(10,2,3)").reflected,
            Reflected::Numeric { scale: 2 }
        );
        assert_eq!(ty("DECIMAL(10,2,3,0)").reflected, Reflected::Float);
        assert_eq!(
            ty("DECIMAL(1,2,3,4,5)").reflected,
            Reflected::Numeric { scale: 10 }
        );
    }
}
