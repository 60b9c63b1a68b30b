//! Identifiers in URL paths: any text is refused (only empty, `.` and `..`) or encodes into
//! exactly one path segment that percent-decodes back to the text.
#![no_main]

use libfuzzer_sys::fuzz_target;
use percent_encoding::percent_decode_str;
use svc_model::ident::{IntoRecordPk, encode_segment};
use svc_model::{
    EnvironmentName, InvalidIdentifier, ModelName, PageUid, ProjectName, RecordPk, ResourceName,
};

fn check_encoded(raw: &str, encoded: &str) {
    assert!(!encoded.contains(['/', '?', '#']), "{encoded:?}");
    assert!(encoded != "." && encoded != "..", "{encoded:?}");
    let bytes = encoded.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => i += 1,
            b'%' => {
                let hex = &bytes[i + 1..i + 3];
                assert!(
                    hex.iter()
                        .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(b)),
                    "{encoded:?}"
                );
                i += 3;
            }
            other => panic!("byte {other:#x} left unencoded in {encoded:?}"),
        }
    }
    let decoded = percent_decode_str(encoded).decode_utf8().expect("UTF-8");
    assert_eq!(decoded, raw);
}

fn check<T>(
    raw: &str,
    new: fn(String) -> Result<T, InvalidIdentifier>,
    encoded: fn(&T) -> String,
    as_str: fn(&T) -> &str,
) {
    let refused = matches!(raw, "" | "." | "..");
    match new(raw.to_owned()) {
        Ok(id) => {
            assert!(!refused, "{raw:?} accepted");
            assert_eq!(as_str(&id), raw);
            check_encoded(raw, &encoded(&id));
        }
        Err(e) => {
            assert!(refused, "{raw:?} refused: {e}");
            assert_eq!(e.value, raw);
        }
    }
}

macro_rules! check_all {
    ($raw:expr, $($t:ty),*) => {$(
        check::<$t>($raw, |s| <$t>::new(s), |id| id.encoded(), |id| id.as_str());
    )*};
}

fuzz_target!(|data: &[u8]| {
    let raw = String::from_utf8_lossy(data);
    let raw = raw.as_ref();
    check_all!(
        raw,
        ProjectName,
        EnvironmentName,
        ResourceName,
        ModelName,
        PageUid,
        RecordPk
    );
    if !matches!(raw, "" | "." | "..") {
        check_encoded(raw, &encode_segment(raw));
    }
    // Through serde: the same rule.
    let json = serde_json::to_string(raw).expect("a string serializes");
    assert_eq!(
        serde_json::from_str::<PageUid>(&json).is_ok(),
        !matches!(raw, "" | "." | "..")
    );
    assert_eq!(
        raw.into_record_pk().is_ok(),
        !matches!(raw, "" | "." | "..")
    );
    // Integer keys are their decimal text.
    if data.len() >= 8 {
        let n = i64::from_le_bytes(data[..8].try_into().expect("8 bytes"));
        let pk = RecordPk::from(n);
        assert_eq!(pk.as_str(), n.to_string());
        assert_eq!(pk.encoded(), n.to_string());
    }
});
