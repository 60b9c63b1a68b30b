#![cfg(test)]
//! The spellings each serializer field of the engine reads, with the engine's own answer:
//! every row was produced by calling jet-bridge 1.12.13's field classes
//! (`jet_bridge_base/fields/*.py`) in its venv on the JSON value of the first column
//! (`field.run_validation(field.get_value({"x": value}))`), and is checked here against
//! [`to_internal`]. `fails` is an exception other than the field's validation error: the
//! engine answers 500 there, and the emulator refuses by design ([`engine_fails`]).

use super::*;
use crate::python::floats::py_float_repr;
use crate::python::json::py_json_dumps;

/// The columns: `IntegerField`, `FloatField`, `BooleanField`, `CharField`, `JSONField`,
/// `BinaryField`.
const FIELDS: [InputField; 6] = [
    InputField::Integer,
    InputField::Float,
    InputField::Boolean,
    InputField::Char,
    InputField::Json,
    InputField::Binary,
];

/// (JSON body value, the engine's answer for each of [`FIELDS`]).
#[rustfmt::skip]
const SPELLINGS: &[(&str, [&str; 6])] = &[
    ("\" 3 \"", ["int 3", "float 3.0", "bool true", "str \" 3 \"", "int 3", "fails Error"]),
    ("\"3\"", ["int 3", "float 3.0", "bool true", "str \"3\"", "int 3", "fails Error"]),
    ("\"+3\"", ["int 3", "float 3.0", "bool true", "str \"+3\"", "str \"+3\"", "fails Error"]),
    ("\"-0\"", ["int 0", "float -0.0", "bool true", "str \"-0\"", "int 0", "fails Error"]),
    ("\"007\"", ["int 7", "float 7.0", "bool true", "str \"007\"", "str \"007\"", "fails Error"]),
    ("\"1_000\"", ["int 1000", "float 1000.0", "bool true", "str \"1_000\"", "str \"1_000\"", "fails Error"]),
    ("\"1__0\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"1__0\"", "str \"1__0\"", "fails Error"]),
    ("\"_1\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"_1\"", "str \"_1\"", "fails Error"]),
    ("\"٣\"", ["int 3", "float 3.0", "bool true", "str \"\\u0663\"", "str \"\\u0663\"", "fails ValueError"]),
    ("\"１２\"", ["int 12", "float 12.0", "bool true", "str \"\\uff11\\uff12\"", "str \"\\uff11\\uff12\"", "fails ValueError"]),
    ("\"\\u00a03\\u00a0\"", ["int 3", "float 3.0", "bool true", "str \"\\u00a03\\u00a0\"", "str \"\\u00a03\\u00a0\"", "fails ValueError"]),
    ("\"3.0\"", ["error not a valid integer", "float 3.0", "bool true", "str \"3.0\"", "float 3.0", "fails Error"]),
    ("3.0", ["error not a valid integer", "float 3.0", "bool true", "str \"3.0\"", "float 3.0", "fails TypeError"]),
    ("3", ["int 3", "float 3.0", "bool true", "str \"3\"", "int 3", "fails TypeError"]),
    ("-3", ["int -3", "float -3.0", "bool true", "str \"-3\"", "int -3", "fails TypeError"]),
    ("12345678901234567890", ["int 12345678901234567890", "float 1.2345678901234567e+19", "bool true", "str \"12345678901234567890\"", "int 12345678901234567890", "fails TypeError"]),
    ("1e308", ["error not a valid integer", "float 1e+308", "bool true", "str \"1e+308\"", "float 1e+308", "fails TypeError"]),
    ("true", ["int 1", "int 1", "bool true", "str \"True\"", "bool true", "fails TypeError"]),
    ("false", ["int 0", "int 0", "bool false", "str \"False\"", "bool false", "fails TypeError"]),
    ("null", ["none", "none", "bool false", "none", "none", "fails TypeError"]),
    ("\"true\"", ["error not a valid integer", "int 1", "bool true", "str \"true\"", "bool true", "fails Error"]),
    ("\"TRUE\"", ["error not a valid integer", "int 1", "bool true", "str \"TRUE\"", "str \"TRUE\"", "fails Error"]),
    ("\"True\"", ["error not a valid integer", "int 1", "bool true", "str \"True\"", "str \"True\"", "fails Error"]),
    ("\"tRuE\"", ["error not a valid integer", "int 1", "bool true", "str \"tRuE\"", "str \"tRuE\"", "fails Error"]),
    ("\"false\"", ["error not a valid integer", "int 0", "bool false", "str \"false\"", "bool false", "fails Error"]),
    ("\"FaLsE\"", ["error not a valid integer", "int 0", "bool true", "str \"FaLsE\"", "str \"FaLsE\"", "fails Error"]),
    ("\"1\"", ["int 1", "float 1.0", "bool true", "str \"1\"", "int 1", "fails Error"]),
    ("\"0\"", ["int 0", "float 0.0", "bool false", "str \"0\"", "int 0", "fails Error"]),
    ("\"0.0\"", ["error not a valid integer", "float 0.0", "bool true", "str \"0.0\"", "float 0.0", "fails Error"]),
    ("\"yes\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"yes\"", "str \"yes\"", "fails Error"]),
    ("\"YES\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"YES\"", "str \"YES\"", "fails Error"]),
    ("\"Yes\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"Yes\"", "str \"Yes\"", "fails Error"]),
    ("\"no\"", ["error not a valid integer", "error not a valid float", "bool false", "str \"no\"", "str \"no\"", "fails Error"]),
    ("\"on\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"on\"", "str \"on\"", "fails Error"]),
    ("\"On\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"On\"", "str \"On\"", "fails Error"]),
    ("\"oN\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"oN\"", "str \"oN\"", "fails Error"]),
    ("\"off\"", ["error not a valid integer", "error not a valid float", "bool false", "str \"off\"", "str \"off\"", "fails Error"]),
    ("\"t\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"t\"", "str \"t\"", "fails Error"]),
    ("\"T\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"T\"", "str \"T\"", "fails Error"]),
    ("\"f\"", ["error not a valid integer", "error not a valid float", "bool false", "str \"f\"", "str \"f\"", "fails Error"]),
    ("\"y\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"y\"", "str \"y\"", "fails Error"]),
    ("\"n\"", ["error not a valid integer", "error not a valid float", "bool false", "str \"n\"", "str \"n\"", "fails Error"]),
    ("\"nan\"", ["error not a valid integer", "float nan", "bool true", "str \"nan\"", "str \"nan\"", "fails Error"]),
    ("\"NaN\"", ["error not a valid integer", "float nan", "bool true", "str \"NaN\"", "float nan", "fails Error"]),
    ("\"-nan\"", ["error not a valid integer", "float nan", "bool true", "str \"-nan\"", "str \"-nan\"", "fails Error"]),
    ("\"inf\"", ["error not a valid integer", "float inf", "bool true", "str \"inf\"", "str \"inf\"", "fails Error"]),
    ("\"-Infinity\"", ["error not a valid integer", "float -inf", "bool true", "str \"-Infinity\"", "float -inf", "fails Error"]),
    ("\"infinity\"", ["error not a valid integer", "float inf", "bool true", "str \"infinity\"", "str \"infinity\"", "fails Error"]),
    ("\"1e3\"", ["error not a valid integer", "float 1000.0", "bool true", "str \"1e3\"", "float 1000.0", "fails Error"]),
    ("\"1E-2\"", ["error not a valid integer", "float 0.01", "bool true", "str \"1E-2\"", "float 0.01", "fails Error"]),
    ("\" 2 \"", ["int 2", "float 2.0", "bool true", "str \" 2 \"", "int 2", "fails Error"]),
    ("\"2.\"", ["error not a valid integer", "float 2.0", "bool true", "str \"2.\"", "str \"2.\"", "fails Error"]),
    ("\".5\"", ["error not a valid integer", "float 0.5", "bool true", "str \".5\"", "str \".5\"", "fails Error"]),
    ("\".\"", ["error not a valid integer", "error not a valid float", "bool true", "str \".\"", "str \".\"", "fails Error"]),
    ("\"0x10\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"0x10\"", "str \"0x10\"", "fails Error"]),
    ("\"1,5\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"1,5\"", "str \"1,5\"", "fails Error"]),
    ("\"\"", ["error not a valid integer", "error not a valid float", "bool false", "str \"\"", "str \"\"", "bytes "]),
    ("\" \"", ["error not a valid integer", "error not a valid float", "bool true", "str \" \"", "str \" \"", "fails Error"]),
    ("\"abc\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"abc\"", "str \"abc\"", "fails Error"]),
    ("[1, 2]", ["error not a valid integer", "error not a valid float", "bool true", "str \"1,2\"", "json [1, 2]", "fails Error"]),
    ("[null]", ["error not a valid integer", "error not a valid float", "bool false", "str \"\"", "json [null]", "bytes "]),
    ("[\"a\", null, \"b\"]", ["error not a valid integer", "error not a valid float", "bool true", "str \"a,b\"", "json [\"a\", null, \"b\"]", "fails Error"]),
    ("[]", ["error not a valid integer", "error not a valid float", "bool false", "str \"\"", "json []", "bytes "]),
    ("[true, 1.5]", ["error not a valid integer", "error not a valid float", "bool true", "str \"True,1.5\"", "json [true, 1.5]", "fails Error"]),
    ("{}", ["error not a valid integer", "error not a valid float", "fails TypeError", "str \"{}\"", "json {}", "fails TypeError"]),
    ("{\"a\": 1}", ["error not a valid integer", "error not a valid float", "fails TypeError", "str \"{'a': 1}\"", "json {\"a\": 1}", "fails TypeError"]),
    ("\"1e400\"", ["error not a valid integer", "float inf", "bool true", "str \"1e400\"", "float inf", "fails Error"]),
    ("\"\\t4\\n\"", ["int 4", "float 4.0", "bool true", "str \"\\t4\\n\"", "int 4", "fails Error"]),
    ("\"0b101\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"0b101\"", "str \"0b101\"", "fails Error"]),
    ("\"1.5e\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"1.5e\"", "str \"1.5e\"", "fails Error"]),
    ("\"１.５\"", ["error not a valid integer", "float 1.5", "bool true", "str \"\\uff11.\\uff15\"", "str \"\\uff11.\\uff15\"", "fails ValueError"]),
    ("\"4_2.5_0\"", ["error not a valid integer", "float 42.5", "bool true", "str \"4_2.5_0\"", "str \"4_2.5_0\"", "fails Error"]),
    ("1.5", ["error not a valid integer", "float 1.5", "bool true", "str \"1.5\"", "float 1.5", "fails TypeError"]),
    ("0.0", ["error not a valid integer", "float 0.0", "bool false", "str \"0.0\"", "float 0.0", "fails TypeError"]),
    ("0", ["int 0", "float 0.0", "bool false", "str \"0\"", "int 0", "fails TypeError"]),
    ("1", ["int 1", "float 1.0", "bool true", "str \"1\"", "int 1", "fails TypeError"]),
    ("2", ["int 2", "float 2.0", "bool true", "str \"2\"", "int 2", "fails TypeError"]),
    ("-1", ["int -1", "float -1.0", "bool true", "str \"-1\"", "int -1", "fails TypeError"]),
    ("\"[1, 2]\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"[1, 2]\"", "json [1, 2]", "fails Error"]),
    ("\"{\\\"a\\\": 1}\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"{\\\"a\\\": 1}\"", "json {\"a\": 1}", "fails Error"]),
    ("\"\\\"s\\\"\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"\\\"s\\\"\"", "str \"s\"", "fails Error"]),
    ("\"null\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"null\"", "none", "fails Error"]),
    ("\"0102\"", ["int 102", "float 102.0", "bool true", "str \"0102\"", "str \"0102\"", "bytes 0102"]),
    ("\"0g\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"0g\"", "str \"0g\"", "fails Error"]),
    ("\"012\"", ["int 12", "float 12.0", "bool true", "str \"012\"", "str \"012\"", "fails Error"]),
    ("\"AbCd\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"AbCd\"", "str \"AbCd\"", "bytes abcd"]),
    ("\"é\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"\\u00e9\"", "str \"\\u00e9\"", "fails ValueError"]),
    ("\"1e-400\"", ["error not a valid integer", "float 0.0", "bool true", "str \"1e-400\"", "float 0.0", "fails Error"]),
    ("\"-\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"-\"", "str \"-\"", "fails Error"]),
    ("\"+\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"+\"", "str \"+\"", "fails Error"]),
    ("\"++1\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"++1\"", "str \"++1\"", "fails Error"]),
    ("\"1_\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"1_\"", "str \"1_\"", "fails Error"]),
    ("\"inF\"", ["error not a valid integer", "float inf", "bool true", "str \"inF\"", "str \"inF\"", "fails Error"]),
    ("\"+nan\"", ["error not a valid integer", "float nan", "bool true", "str \"+nan\"", "str \"+nan\"", "fails Error"]),
    ("\"  \"", ["error not a valid integer", "error not a valid float", "bool true", "str \"  \"", "str \"  \"", "fails Error"]),
    ("\"\\u20033\\u2003\"", ["int 3", "float 3.0", "bool true", "str \"\\u20033\\u2003\"", "str \"\\u20033\\u2003\"", "fails ValueError"]),
    ("\"1\\u00a0000\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"1\\u00a0000\"", "str \"1\\u00a0000\"", "fails ValueError"]),
    ("\"0_0\"", ["int 0", "float 0.0", "bool true", "str \"0_0\"", "str \"0_0\"", "fails Error"]),
    ("\"00\"", ["int 0", "float 0.0", "bool true", "str \"00\"", "str \"00\"", "bytes 00"]),
    ("\"-0.0\"", ["error not a valid integer", "float -0.0", "bool true", "str \"-0.0\"", "float -0.0", "fails Error"]),
    ("\" -3 \"", ["int -3", "float -3.0", "bool true", "str \" -3 \"", "int -3", "fails Error"]),
    ("\"3 4\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"3 4\"", "str \"3 4\"", "fails Error"]),
    ("\"٣.٣\"", ["error not a valid integer", "float 3.3", "bool true", "str \"\\u0663.\\u0663\"", "str \"\\u0663.\\u0663\"", "fails ValueError"]),
    ("\"−3\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"\\u22123\"", "str \"\\u22123\"", "fails ValueError"]),
    ("\"\\u0000\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"\\u0000\"", "str \"\\u0000\"", "fails Error"]),
    ("\"１e３\"", ["error not a valid integer", "float 1000.0", "bool true", "str \"\\uff11e\\uff13\"", "str \"\\uff11e\\uff13\"", "fails ValueError"]),
    ("\"99999999999999999999999\"", ["int 99999999999999999999999", "float 1e+23", "bool true", "str \"99999999999999999999999\"", "int 99999999999999999999999", "fails Error"]),
    ("\"1.0\"", ["error not a valid integer", "float 1.0", "bool true", "str \"1.0\"", "float 1.0", "fails Error"]),
    ("1.0", ["error not a valid integer", "float 1.0", "bool true", "str \"1.0\"", "float 1.0", "fails TypeError"]),
    ("-0.0", ["error not a valid integer", "float -0.0", "bool false", "str \"-0.0\"", "float -0.0", "fails TypeError"]),
    ("\" true\"", ["error not a valid integer", "int 1", "bool true", "str \" true\"", "bool true", "fails Error"]),
    ("\"false \"", ["error not a valid integer", "int 0", "bool true", "str \"false \"", "bool false", "fails Error"]),
    ("\" FALSE \"", ["error not a valid integer", "int 0", "bool true", "str \" FALSE \"", "str \" FALSE \"", "fails Error"]),
    ("\"NO\"", ["error not a valid integer", "error not a valid float", "bool false", "str \"NO\"", "str \"NO\"", "fails Error"]),
    ("\"No\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"No\"", "str \"No\"", "fails Error"]),
    ("\"OFF\"", ["error not a valid integer", "error not a valid float", "bool false", "str \"OFF\"", "str \"OFF\"", "fails Error"]),
    ("\"Off\"", ["error not a valid integer", "error not a valid float", "bool false", "str \"Off\"", "str \"Off\"", "fails Error"]),
    ("\"F\"", ["error not a valid integer", "error not a valid float", "bool false", "str \"F\"", "str \"F\"", "fails Error"]),
    ("\"N\"", ["error not a valid integer", "error not a valid float", "bool false", "str \"N\"", "str \"N\"", "fails Error"]),
    ("\"Y\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"Y\"", "str \"Y\"", "fails Error"]),
    ("\"tr ue\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"tr ue\"", "str \"tr ue\"", "fails Error"]),
    ("\"0.5e-3\"", ["error not a valid integer", "float 0.0005", "bool true", "str \"0.5e-3\"", "float 0.0005", "fails Error"]),
    ("\"1e+3\"", ["error not a valid integer", "float 1000.0", "bool true", "str \"1e+3\"", "float 1000.0", "fails Error"]),
    ("\"1E3\"", ["error not a valid integer", "float 1000.0", "bool true", "str \"1E3\"", "float 1000.0", "fails Error"]),
    ("\"Infinity\"", ["error not a valid integer", "float inf", "bool true", "str \"Infinity\"", "float inf", "fails Error"]),
    ("\"-inf\"", ["error not a valid integer", "float -inf", "bool true", "str \"-inf\"", "str \"-inf\"", "fails Error"]),
    ("\"iNfInItY\"", ["error not a valid integer", "float inf", "bool true", "str \"iNfInItY\"", "str \"iNfInItY\"", "fails Error"]),
    ("\"nan(1)\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"nan(1)\"", "str \"nan(1)\"", "fails Error"]),
    ("\"0x1p3\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"0x1p3\"", "str \"0x1p3\"", "fails Error"]),
    ("\"1.2.3\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"1.2.3\"", "str \"1.2.3\"", "fails Error"]),
    ("\"1e3.5\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"1e3.5\"", "str \"1e3.5\"", "fails Error"]),
    ("\"١٢٣\"", ["int 123", "float 123.0", "bool true", "str \"\\u0661\\u0662\\u0663\"", "str \"\\u0661\\u0662\\u0663\"", "fails ValueError"]),
    ("\"𝟙𝟚\"", ["int 12", "float 12.0", "bool true", "str \"\\ud835\\udfd9\\ud835\\udfda\"", "str \"\\ud835\\udfd9\\ud835\\udfda\"", "fails ValueError"]),
    ("\"3\\n\"", ["int 3", "float 3.0", "bool true", "str \"3\\n\"", "int 3", "fails Error"]),
    ("\"\\r\\n7\"", ["int 7", "float 7.0", "bool true", "str \"\\r\\n7\"", "int 7", "fails Error"]),
    ("[\" 3 \"]", ["int 3", "float 3.0", "bool true", "str \" 3 \"", "json [\" 3 \"]", "fails Error"]),
    ("[1]", ["int 1", "float 1.0", "bool true", "str \"1\"", "json [1]", "fails Error"]),
    ("[1, null]", ["int 1", "float 1.0", "bool true", "str \"1\"", "json [1, null]", "fails Error"]),
    ("[true]", ["error not a valid integer", "int 1", "bool true", "str \"True\"", "json [true]", "fails Error"]),
    ("[false]", ["error not a valid integer", "int 0", "bool false", "str \"False\"", "json [false]", "fails Error"]),
    ("[[1]]", ["error not a valid integer", "error not a valid float", "bool true", "str \"[1]\"", "json [[1]]", "fails Error"]),
    ("[{\"a\": 1}]", ["error not a valid integer", "error not a valid float", "bool true", "str \"{'a': 1}\"", "json [{\"a\": 1}]", "fails Error"]),
    ("\"DEADbeef\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"DEADbeef\"", "str \"DEADbeef\"", "bytes deadbeef"]),
    ("\"0 1\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"0 1\"", "str \"0 1\"", "fails Error"]),
    ("\" 01 \"", ["int 1", "float 1.0", "bool true", "str \" 01 \"", "str \" 01 \"", "fails Error"]),
    ("\"01\\n\"", ["int 1", "float 1.0", "bool true", "str \"01\\n\"", "str \"01\\n\"", "fails Error"]),
    ("\"ab\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"ab\"", "str \"ab\"", "bytes ab"]),
    ("\"abc\"", ["error not a valid integer", "error not a valid float", "bool true", "str \"abc\"", "str \"abc\"", "fails Error"]),
];

/// The engine's answer in the table's words.
fn canon(field: InputField, value: &PyJson) -> String {
    let json = |j: &PyJson| match j {
        PyJson::None => "none".to_owned(),
        PyJson::Bool(b) => format!("bool {b}"),
        PyJson::Int(i) => format!("int {i}"),
        PyJson::Float(f) => format!("float {}", py_float_repr(*f)),
        PyJson::Str(s) => format!("str {}", py_json_dumps(&PyJson::Str(s.clone()))),
        other => format!("json {}", py_json_dumps(other)),
    };
    match to_internal(field, value) {
        Ok(Internal::Str(hex)) if field == InputField::Binary => {
            format!("bytes {}", hex.to_ascii_lowercase())
        }
        Ok(Internal::None) => "none".to_owned(),
        Ok(Internal::Bool(b)) => format!("bool {b}"),
        Ok(Internal::Int(i)) => format!("int {i}"),
        Ok(Internal::Float(f)) => format!("float {}", py_float_repr(f)),
        Ok(Internal::Str(s)) => json(&PyJson::Str(s)),
        Ok(Internal::DateTime(dt)) => format!("datetime {}", dt.python_str()),
        Ok(Internal::Json(j)) => json(&j),
        Err(_) if engine_fails(field, value) => "fails".to_owned(),
        Err(m) => format!("error {m}"),
    }
}

#[test]
fn each_field_reads_the_spellings_the_engine_reads() {
    let mut wrong = Vec::new();
    for (raw, answers) in SPELLINGS {
        let value = parse_py_json(raw).expect(raw);
        for (field, want) in FIELDS.iter().zip(answers) {
            let got = canon(*field, &value);
            let want = if want.starts_with("fails") {
                "fails"
            } else {
                want
            };
            if got != want {
                wrong.push(format!(
                    "{raw} as {field:?}: engine {want:?}, emulator {got:?}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `DateTimeField` (dateparser 1.5, the engine's process in UTC): the JSON body value and the
/// engine's answer. The emulator reads the same date-times, and refuses by design what
/// dateparser reads by the clock (`now`, a bare year or month takes today's day, a number is
/// seconds since the epoch in the engine's own time zone) or by guessing the order of a
/// date's parts (`02.01.2024`, `2024-13-01` read as the 13th of January): [`DATETIME_REFUSED`].
#[rustfmt::skip]
const DATETIME_SPELLINGS: &[(&str, &str)] = &[
    ("\"2024-01-02\"", "datetime 2024-01-02T00:00:00"),
    ("\" 2024-01-02 \"", "datetime 2024-01-02T00:00:00"),
    ("\"2024-01-02T03:04:05\"", "datetime 2024-01-02T03:04:05"),
    ("\"2024-01-02 03:04:05\"", "datetime 2024-01-02T03:04:05"),
    ("\"2024-01-02T03:04:05Z\"", "datetime 2024-01-02T03:04:05+00:00"),
    ("\"2024-01-02T03:04:05z\"", "datetime 2024-01-02T03:04:05+00:00"),
    ("\"2024-01-02 03:04:05+05:30\"", "datetime 2024-01-02T03:04:05+05:30"),
    ("\"2024-01-02 03:04:05+0530\"", "datetime 2024-01-02T03:04:05+05:30"),
    ("\"2024-01-02T03:04:05-03:00\"", "datetime 2024-01-02T03:04:05-03:00"),
    ("\"2024-01-02T03:04:05-00:00\"", "datetime 2024-01-02T03:04:05+00:00"),
    ("\"2024-01-02T03:04:05+14:00\"", "datetime 2024-01-02T03:04:05+14:00"),
    ("\"2024-01-02T03:04:05+01:15\"", "error date has wrong format"),
    ("\"2024-01-02T03:04:05+05\"", "error date has wrong format"),
    ("\"2024-01-02T03:04:05 UTC\"", "datetime 2024-01-02T03:04:05+00:00"),
    ("\"2024-01-02T03:04:05 GMT\"", "datetime 2024-01-02T03:04:05+00:00"),
    ("\"2024-01-02 03:04:05 +0000\"", "datetime 2024-01-02T03:04:05+00:00"),
    ("\"2024-01-02T03:04:05.5\"", "datetime 2024-01-02T03:04:05.500000"),
    ("\"2024-01-02T03:04:05.5Z\"", "datetime 2024-01-02T03:04:05.500000+00:00"),
    ("\"2024-01-02T03:04:05.123456\"", "datetime 2024-01-02T03:04:05.123456"),
    ("\"2024-01-02T03:04:05.123456789\"", "datetime 2024-01-02T03:04:05.123456"),
    ("\"2024-01-02T03:04\"", "datetime 2024-01-02T03:04:00"),
    ("\"2024-01-02t03:04\"", "datetime 2024-01-02T03:04:00"),
    ("\"2024-01-02  03:04\"", "datetime 2024-01-02T03:04:00"),
    ("\"2024-1-2 3:4\"", "datetime 2024-01-02T03:04:00"),
    ("\"2024-1-2\"", "datetime 2024-01-02T00:00:00"),
    ("\"2024-01-02T03\"", "error date has wrong format"),
    ("\"2024-01-02T24:00:00\"", "error date has wrong format"),
    ("\"2024-01-02T23:59:60\"", "error date has wrong format"),
    ("\"2024-02-29\"", "datetime 2024-02-29T00:00:00"),
    ("\"2023-02-29\"", "error date has wrong format"),
    ("\"2024-02-30\"", "error date has wrong format"),
    ("\"2024-13-01\"", "datetime 2024-01-13T00:00:00"),
    ("\"0001-01-01\"", "datetime 0001-01-01T00:00:00"),
    ("\"9999-12-31T23:59:59.999999\"", "datetime 9999-12-31T23:59:59.999999"),
    ("\"20240102\"", "error date has wrong format"),
    ("\"20240102T030405\"", "error date has wrong format"),
    ("\"1704153600\"", "datetime 2024-01-02T00:00:00"),
    ("\"1704153600.5\"", "datetime 2024-01-02T00:00:00"),
    ("1704153600", "datetime 2024-01-02T00:00:00"),
    ("\"2024/01/02\"", "datetime 2024-01-02T00:00:00"),
    ("\"02.01.2024\"", "datetime 2024-02-01T00:00:00"),
    ("\"01/02/2024\"", "datetime 2024-01-02T00:00:00"),
    ("\"2024-01\"", "datetime 2024-01-28T00:00:00 (today's day)"),
    ("\"2024\"", "datetime 2024-11-28T00:00:00 (today's month and day)"),
    ("\"Jan 2 2024\"", "datetime 2024-01-02T00:00:00"),
    ("\"2 January 2024\"", "datetime 2024-01-02T00:00:00"),
    ("\"now\"", "datetime (the engine's clock)"),
    ("\"yesterday\"", "datetime (the engine's clock, less a day)"),
    ("\"\"", "error date has wrong format"),
    ("\" \"", "error date has wrong format"),
    ("null", "none"),
    ("true", "error date has wrong format"),
    ("false", "error date has wrong format"),
    ("3", "datetime 2026-03-28T00:00:00 (this year, today's day)"),
    ("3.5", "datetime 2026-03-05T00:00:00 (this year)"),
    ("[2024, 1]", "datetime 2024-01-28T00:00:00"),
    ("[\"2024-01-02\"]", "datetime 2024-01-02T00:00:00"),
    ("{\"a\": 1}", "error date has wrong format"),
    ("\"2024-01-02T03:04:05+05:30 \"", "datetime 2024-01-02T03:04:05+05:30"),
    ("\"2024-01-02 03:04:05.000\"", "datetime 2024-01-02T03:04:05"),
    ("\"2024-01-02T03:04:05,5\"", "error date has wrong format"),
];

/// The spellings of [`DATETIME_SPELLINGS`] the engine reads and the emulator refuses.
const DATETIME_REFUSED: &[&str] = &[
    // dateparser's guesses: which part is the month, and today's parts for those not given.
    "\"2024-13-01\"",
    "\"2024/01/02\"",
    "\"02.01.2024\"",
    "\"01/02/2024\"",
    "\"2024-01\"",
    "\"2024\"",
    "\"Jan 2 2024\"",
    "\"2 January 2024\"",
    "3",
    "3.5",
    "[2024, 1]",
    // The clock.
    "\"now\"",
    "\"yesterday\"",
    // Seconds since the epoch, as a date-time of the engine's own time zone.
    "\"1704153600\"",
    "\"1704153600.5\"",
    "1704153600",
];

#[test]
fn date_times_read_as_the_engine_reads_them() {
    let mut wrong = Vec::new();
    for (raw, want) in DATETIME_SPELLINGS {
        let value = parse_py_json(raw).expect(raw);
        let got = match to_internal(InputField::DateTime, &value) {
            Ok(Internal::DateTime(dt)) => {
                format!("datetime {}", dt.python_str().replacen(' ', "T", 1))
            }
            Ok(Internal::None) => "none".to_owned(),
            Ok(other) => format!("{other:?}"),
            Err(_) if DATETIME_REFUSED.contains(raw) => "refused".to_owned(),
            Err(m) => format!("error {m}"),
        };
        let want = if DATETIME_REFUSED.contains(raw) {
            "refused"
        } else {
            want
        };
        if got != want {
            wrong.push(format!("{raw}: engine {want:?}, emulator {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `uuid.UUID(text)` (Python 3.11), which SQLAlchemy's PostgreSQL `UUID` type applies to the
/// `CharField`'s text of a `uuid` column: the text and Python's answer.
#[test]
fn uuids_read_as_python_reads_them() {
    #[rustfmt::skip]
    let cases: &[(&str, &str)] = &[
        ("12345678-1234-5678-1234-567812345678", "ok 12345678-1234-5678-1234-567812345678"),
        ("urn:uuid:12345678-1234-5678-1234-567812345678", "ok 12345678-1234-5678-1234-567812345678"),
        ("{12345678-1234-5678-1234-567812345678}", "ok 12345678-1234-5678-1234-567812345678"),
        ("12345678123456781234567812345678", "ok 12345678-1234-5678-1234-567812345678"),
        ("ABCDEF12-1234-5678-1234-567812345678", "ok abcdef12-1234-5678-1234-567812345678"),
        ("{{12345678-1234-5678-1234-567812345678}}", "ok 12345678-1234-5678-1234-567812345678"),
        ("1234-5678-1234-5678-1234-5678-1234-5678", "ok 12345678-1234-5678-1234-567812345678"),
        ("uuid:urn:12345678123456781234567812345678", "ok 12345678-1234-5678-1234-567812345678"),
        ("x", "error badly formed hexadecimal UUID string"),
        ("", "error badly formed hexadecimal UUID string"),
        ("0x345678123456781234567812345678", "ok 00345678-1234-5678-1234-567812345678"),
        ("-0000000000000000000000000000000", "error badly formed hexadecimal UUID string"),
        ("-0000000000000000000000000000001", "error badly formed hexadecimal UUID string"),
        ("+2345678123456781234567812345678", "ok 02345678-1234-5678-1234-567812345678"),
        (" 2345678123456781234567812345678", "ok 02345678-1234-5678-1234-567812345678"),
        ("1_345678123456781234567812345678", "ok 01345678-1234-5678-1234-567812345678"),
        ("1__45678123456781234567812345678", "error invalid literal for int() with base 16: '1__45678123456781234567812345678'"),
        ("_2345678123456781234567812345678", "error invalid literal for int() with base 16: '_2345678123456781234567812345678'"),
        ("0x_45678123456781234567812345678", "ok 00045678-1234-5678-1234-567812345678"),
        ("١2345678123456781234567812345678", "ok 12345678-1234-5678-1234-567812345678"),
        ("Ａ2345678123456781234567812345678", "error invalid literal for int() with base 16: 'Ａ2345678123456781234567812345678'"),
        ("g2345678123456781234567812345678", "error invalid literal for int() with base 16: 'g2345678123456781234567812345678'"),
        ("12345678-1234-5678-1234-56781234567", "error badly formed hexadecimal UUID string"),
        ("12345678-1234-5678-1234-5678123456789", "error badly formed hexadecimal UUID string"),
        ("urn:urn:12345678123456781234567812345678", "ok 12345678-1234-5678-1234-567812345678"),
        ("{12345678123456781234567812345678", "ok 12345678-1234-5678-1234-567812345678"),
        ("12345678123456781234567812345678}}}", "ok 12345678-1234-5678-1234-567812345678"),
        ("u-r-n:12345678123456781234567812345678", "error badly formed hexadecimal UUID string"),
    ];
    for (text, want) in cases {
        let got = match crate::python::text::py_uuid(text) {
            Ok(u) => format!("ok {u}"),
            Err(m) => format!("error {m}"),
        };
        assert_eq!(got, *want, "{text:?}");
    }
}
