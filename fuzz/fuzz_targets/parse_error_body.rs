//! Error bodies of any shape: parsing never fails, the raw bytes are kept exactly, and the
//! summary is one short line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use svc_model::ErrorBody;

fuzz_target!(|data: &[u8]| {
    let body = ErrorBody::parse(data.to_vec());
    assert_eq!(body.raw().as_ref(), data);
    assert_eq!(body.text().is_some(), std::str::from_utf8(data).is_ok());
    if body.error().is_some() || body.error_code().is_some() {
        assert!(body.json().is_some_and(|v| v.is_object()));
    }
    let fields = body.field_errors();
    for key in fields.keys() {
        assert!(!["error", "error_code", "detail", "non_field_errors"].contains(key));
    }
    let _ = body.non_field_errors();
    let summary = body.summary();
    assert!(
        summary.chars().count() <= 201,
        "summary too long: {}",
        summary.len()
    );
    assert!(!summary.contains('\n') && !summary.contains('\r'));
    assert_eq!(body.to_string(), summary);
    let debug = format!("{body:?}");
    assert!(debug.contains(&format!("len: {}", data.len())));
});
