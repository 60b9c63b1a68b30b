//! Unpaginated lists: a bare JSON array or an envelope with `results`, decoded straight into
//! `Vec<T>`. Whatever parses agrees with a plain `serde_json::Value` reading of the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use svc_model::list::ArrayOrPage;

fuzz_target!(|data: &[u8]| {
    let items = serde_json::from_slice::<ArrayOrPage<Value>>(data);
    let value = serde_json::from_slice::<Value>(data);
    match (&items, &value) {
        (Ok(ArrayOrPage(items)), Ok(Value::Array(array))) => assert_eq!(items, array),
        (Ok(ArrayOrPage(items)), Ok(Value::Object(object))) => {
            // `Value` keeps the last of duplicate keys; the envelope refuses a duplicate
            // `results`, so there is exactly one and both readings agree.
            assert_eq!(Some(&Value::Array(items.clone())), object.get("results"));
        }
        (Ok(_), other) => panic!("parsed as a list, but as a value it is {other:?}"),
        (Err(_), Ok(Value::Array(_))) => panic!("a JSON array must parse as a list"),
        (Err(_), _) => {}
    }
    // Typed items: errors, never panics.
    let _ = serde_json::from_slice::<ArrayOrPage<u32>>(data);
    let _ = serde_json::from_slice::<ArrayOrPage<String>>(data);
});
