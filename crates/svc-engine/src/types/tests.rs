//! The engine's types, readings and writers, checked against what the engine answers.

use super::dates::*;
use super::stored::*;
use super::writers::*;
use super::*;

#[test]
fn iso_forms_are_what_fmt_writes() {
    for (year, month, day) in [
        (1, 1, 1),
        (999, 12, 31),
        (2024, 2, 29),
        (9999, 9, 9),
        (12345, 1, 2),
    ] {
        let d = Date { year, month, day };
        assert_eq!(d.iso(), format!("{year:04}-{month:02}-{day:02}"));
    }
    for (hour, minute, second, micro) in [
        (0, 0, 0, 0),
        (9, 5, 7, 1),
        (23, 59, 59, 999_999),
        (12, 0, 0, 250_000),
    ] {
        let t = Time {
            hour,
            minute,
            second,
            micro,
        };
        let mut want = format!("{hour:02}:{minute:02}:{second:02}");
        if micro != 0 {
            want.push_str(&format!(".{micro:06}"));
        }
        assert_eq!(t.iso(), want);
    }
}

#[test]
fn floats_print_as_python_prints_them() {
    for (f, want) in [
        (57.0, "57.0"),
        (0.1, "0.1"),
        (-0.0, "-0.0"),
        (1e16, "1e+16"),
        (1.5e-5, "1.5e-05"),
        (0.0001, "0.0001"),
        (123456789012345.6, "123456789012345.6"),
        (1234567890123456.7, "1234567890123456.8"),
        (1e22, "1e+22"),
        (2.5e-300, "2.5e-300"),
        (1521.9399999999998, "1521.9399999999998"),
        // The edges of fixed notation, and the extremes (what CPython 3 prints).
        (9999999999999998.0, "9999999999999998.0"),
        (1e15, "1000000000000000.0"),
        (1e-5, "1e-05"),
        (0.00012, "0.00012"),
        (1.5e300, "1.5e+300"),
        (-1.5e300, "-1.5e+300"),
        (5e-324, "5e-324"),
        (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
        (-f64::MAX, "-1.7976931348623157e+308"),
        (1e100, "1e+100"),
        (0.0, "0.0"),
        (-12.5, "-12.5"),
        // Exactly halfway between two shortest texts: Python takes the even last digit
        // (Rust's `{:e}` writes ...562.3, ...796.13 and ...277.313).
        (f64::from_bits(0x4317_9085_685d_83c9), "1658206780088562.2"),
        (f64::from_bits(0x42ea_8090_bb0f_6d84), "233115890514796.12"),
        (f64::from_bits(0xc2b8_66ca_ca40_ad50), "-26829767983277.312"),
        (f64::NAN, "nan"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
    ] {
        assert_eq!(py_float_repr(f), want, "{f:?}");
        // Written into a buffer that already holds text: appended, nothing else touched.
        let mut buf = b"[1,".to_vec();
        write_py_float_repr(&mut buf, f);
        assert_eq!(buf, format!("[1,{want}").into_bytes(), "{f:?}");
    }
}

#[test]
fn json_floats_are_python_floats_and_null_for_nan_and_infinities() {
    let mut buf = Vec::new();
    for f in [
        1e16,
        1e-5,
        0.0001,
        -0.0,
        1.5e300,
        5e-324,
        f64::NAN,
        f64::NEG_INFINITY,
    ] {
        write_float(&mut buf, f);
        buf.push(b' ');
    }
    assert_eq!(
        String::from_utf8(buf).unwrap(),
        "1e+16 1e-05 0.0001 -0.0 1.5e+300 5e-324 null null "
    );
}

#[test]
fn decimals_print_as_python_prints_them() {
    for (fixed, want) in [
        ("0.0000000000", "0E-10"),
        ("-0.0000000000", "-0E-10"),
        ("4.1250000000", "4.1250000000"),
        ("0.0000001234", "1.234E-7"),
        ("0.0000012340", "0.0000012340"),
        ("12", "12"),
        ("0.50", "0.50"),
        // What it writes reads back the same (Python's `str(Decimal(...))` of each).
        ("0E-10", "0E-10"),
        ("-0E-10", "-0E-10"),
        ("1.000E-7", "1.000E-7"),
        ("1E+3", "1E+3"),
        ("12.5E+2", "1.25E+3"),
        ("1.5E+10", "1.5E+10"),
        ("inf", "Infinity"),
        ("x", "NaN"),
    ] {
        assert_eq!(decimal_str(fixed), want, "{fixed}");
        assert_eq!(
            decimal_str(&decimal_str(fixed)),
            decimal_str(fixed),
            "{fixed}"
        );
    }
}

#[test]
fn stored_date_times_parse_like_sqlalchemy() {
    assert!(parse_datetime(b"2024-03-05T10:11:12").is_none());
    assert!(parse_datetime(b"2024-03-05").is_none());
    assert!(parse_datetime(b"2024-03-05 10:11").is_none());
    let (_, t) = parse_datetime(b"2024-03-05 10:11:12.5").unwrap();
    assert_eq!(t.micro, 5);
    assert!(parse_date(b"2024-02-30").is_none());
    assert_eq!(parse_date(b"2024-3-5x").unwrap().iso(), "2024-03-05");
}

/// What SQLAlchemy 1.4's C `str_to_time` and `str_to_date` (`cprocessors`, which the engine
/// runs) answer, read off `sqlalchemy.processors` in the engine's venv: `None` where they raise.
#[test]
fn stored_times_and_dates_parse_like_sqlalchemys_c_processors() {
    let time = |s: &str| parse_time(s.as_bytes()).map(Time::iso);
    assert_eq!(time("10:11:12.5").as_deref(), Some("10:11:12.000005"));
    assert_eq!(time("10:11:12.123").as_deref(), Some("10:11:12.000123"));
    assert_eq!(time("10:11:12.1234567").as_deref(), Some("10:11:12.123456"));
    assert_eq!(time("10:11:12").as_deref(), Some("10:11:12"));
    assert_eq!(time("1:2:3").as_deref(), Some("01:02:03"));
    assert_eq!(time("10:11:12x").as_deref(), Some("10:11:12"));
    assert_eq!(time("10:11:12.").as_deref(), Some("10:11:12"));
    assert_eq!(time(" 10:11:12").as_deref(), Some("10:11:12"));
    assert_eq!(time("10:11"), None);
    assert_eq!(time("100:11:12"), None);
    assert_eq!(time("10:11:12.-5"), None);
    let date = |s: &str| parse_date(s.as_bytes()).map(Date::iso);
    assert_eq!(date("2024-3-5").as_deref(), Some("2024-03-05"));
    assert_eq!(date("2024-03-05 10:00").as_deref(), Some("2024-03-05"));
    assert_eq!(date(" 2024-03-05").as_deref(), Some("2024-03-05"));
    assert_eq!(date("02024-03-05"), None);
    assert_eq!(date("12345-01-01"), None);
    assert_eq!(date("2024-003-05"), None);
}

/// Python's `repr(float)` as it was first written here, from Rust's `{:e}` (also shortest
/// round-trip): the reference the ryu-based writer is held to.
fn repr_from_fmt(f: f64) -> String {
    if !f.is_finite() {
        return py_float_repr(f);
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let body = if (-4..16).contains(&exp) {
        if exp < 0 {
            format!("0.{}{digits}", "0".repeat((-exp - 1) as usize))
        } else {
            let int_len = exp as usize + 1;
            if digits.len() > int_len {
                format!("{}.{}", &digits[..int_len], &digits[int_len..])
            } else {
                format!("{digits}{}.0", "0".repeat(int_len - digits.len()))
            }
        }
    } else {
        let rest = if digits.len() > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        format!(
            "{}{rest}e{}{:02}",
            &digits[..1],
            if exp < 0 { '-' } else { '+' },
            exp.unsigned_abs()
        )
    };
    format!("{sign}{body}")
}

#[test]
fn the_float_writer_agrees_with_fmt_on_every_kind_of_float() {
    // A fixed xorshift walk over bit patterns (every exponent and mantissa shape), plus
    // each power of ten and its neighbours, and short decimals as a database stores them.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut floats = Vec::new();
    for _ in 0..200_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        floats.push(f64::from_bits(x));
    }
    for e in -325..=308 {
        let p: f64 = format!("1e{e}").parse().unwrap();
        floats.extend([
            p,
            f64::from_bits(p.to_bits() + 1),
            f64::from_bits(p.to_bits().saturating_sub(1)),
        ]);
    }
    // Short decimals as a database holds them (the direct path of `short_decimal`), of every
    // length up to 17 digits and 9 places, with the floats either side (which are not).
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = x % 10u64.pow(1 + (x >> 60) as u32 % 17);
        let places = (x >> 40) % 10;
        let f = n as f64 / 10f64.powi(places as i32);
        floats.extend([
            f,
            f64::from_bits(f.to_bits() + 1),
            f64::from_bits(f.to_bits().saturating_sub(1)),
        ]);
    }
    for cents in 0..20_000u32 {
        floats.push(f64::from(cents) / 100.0 + 1.0);
        floats.push(-f64::from(cents) / 1000.0);
    }
    let mut ties = 0;
    for f in floats.into_iter().filter(|f| f.is_finite()) {
        let (ours, fmt) = (py_float_repr(f), repr_from_fmt(f));
        if ours == fmt {
            continue;
        }
        // Where the float lies exactly halfway between two shortest texts, Python (and ryu)
        // take the one whose last digit is even, and `{:e}` may take the other: same
        // length, one unit apart in the last digit, both reading back as the float.
        ties += 1;
        let last = |s: &str| {
            s.trim_end_matches(|c: char| !c.is_ascii_digit())
                .bytes()
                .last()
        };
        assert_eq!(ours.len(), fmt.len(), "{f:?}: {ours} vs {fmt}");
        assert_eq!(ours.parse::<f64>().unwrap(), f, "{ours}");
        assert_eq!(fmt.parse::<f64>().unwrap(), f, "{fmt}");
        let (a, b) = (last(&ours).unwrap(), last(&fmt).unwrap());
        assert!(a % 2 == 0 && a.abs_diff(b) == 1, "{f:?}: {ours} vs {fmt}");
    }
    // Ties are rare: a fraction of a percent of these floats.
    assert!(ties < 1000, "{ties} ties");
}

/// Every reflected type with every serializer (the combinations the engine makes and the
/// ones it does not), so the direct writer is held to the general path everywhere.
fn every_column_type() -> Vec<ColumnType> {
    let reflected = [
        Reflected::Integer,
        Reflected::Float,
        Reflected::Numeric { scale: 2 },
        Reflected::Numeric { scale: 10 },
        Reflected::Boolean,
        Reflected::Date,
        Reflected::DateTime,
        Reflected::Time,
        Reflected::String,
        Reflected::Json,
        Reflected::Blob,
        Reflected::Untyped,
    ];
    let serializers = [Serializer::Value, Serializer::DateTime, Serializer::Text];
    reflected
        .iter()
        .flat_map(|&reflected| {
            serializers.iter().map(move |&serializer| ColumnType {
                reflected,
                serializer,
                filter: FilterFamily::Text,
                search: Search::Skip,
            })
        })
        .collect()
}

#[test]
fn direct_writes_are_the_general_paths_bytes() {
    let texts: Vec<&[u8]> = vec![
        b"",
        b"plain",
        b"Krak\xc3\xb3w",
        b"bad \xff utf-8",
        b"quote \" and \\ and \n",
        b"2024-02-29",
        b"2023-02-29",
        b"0000-01-01",
        b"9999-12-31",
        b"2024-1-05",
        b"2024-01-05 ",
        b"2024-01-01 00:10:31",
        b"2024-01-01T00:10:31",
        b"2024-01-01  00:10:31",
        b"2024-01-01 24:00:00",
        b"2024-01-01 23:59:60",
        b"2024-01-01 23:59:59.000000",
        b"2024-01-01 23:59:59.000250",
        b"2024-01-01 23:59:59.25",
        b"2024-01-01 23:59:59.1234567",
        b"2024-01-01 23:59:59.",
        b"2024-01-01 23:59:59x",
        b"2024-13-01 00:00:00",
        b"12:30:00",
        b"57.5",
    ];
    let mut values: Vec<Stored<'_>> = vec![
        Stored::Null,
        Stored::Integer(0),
        Stored::Integer(-7),
        Stored::Integer(i64::MAX),
        Stored::Integer(i64::MIN),
        Stored::Real(57.0),
        Stored::Real(-0.0),
        Stored::Real(1e16),
        Stored::Real(1.5e-5),
        Stored::Real(88378.12),
        Stored::Real(f64::NAN),
        Stored::Real(f64::INFINITY),
        Stored::Blob(b"\x00\x01bytes"),
    ];
    values.extend(texts.iter().map(|t| Stored::Text(t)));
    values.extend(texts.iter().map(|t| Stored::Blob(t)));
    let mut direct_cases = 0;
    for ty in every_column_type() {
        for &v in &values {
            let mut general = b"[".to_vec();
            let general_ok = write_through_python(&mut general, ty, v);
            let mut direct = b"[".to_vec();
            if write_direct(&mut direct, ty.value_writer(), v) {
                direct_cases += 1;
                assert_eq!(
                    String::from_utf8_lossy(&direct),
                    String::from_utf8_lossy(&general),
                    "{ty:?} {v:?}"
                );
                assert!(general_ok, "{ty:?} {v:?}: the engine cannot read it");
            } else {
                assert_eq!(direct, b"[", "{ty:?} {v:?}: nothing written when left");
            }
            let mut both = b"[".to_vec();
            assert_eq!(write_field(&mut both, ty, v), general_ok, "{ty:?} {v:?}");
            assert_eq!(both, general, "{ty:?} {v:?}");
        }
    }
    // The direct path is taken for the common cases, not left to the general one.
    assert!(direct_cases > 200, "{direct_cases}");
}
