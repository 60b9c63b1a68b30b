//! The data host's list envelope `{count, next, previous, results}`: any bytes either fail to
//! parse or give a page that serializes and parses back to the same page.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use svc_model::{ListPage, UserInfo};

fuzz_target!(|data: &[u8]| {
    if let Ok(page) = serde_json::from_slice::<ListPage<Value>>(data) {
        assert_eq!(page.has_next(), page.next.is_some());
        let text = serde_json::to_vec(&page).expect("a parsed page serializes");
        let again: ListPage<Value> = serde_json::from_slice(&text).expect("and parses back");
        assert_eq!(again, page);
        let count = page.results.len();
        assert_eq!(page.map(|v| v.is_null()).results.len(), count);
    }
    // Typed items: errors, never panics.
    let _ = serde_json::from_slice::<ListPage<u64>>(data);
    let _ = serde_json::from_slice::<ListPage<String>>(data);
    let _ = serde_json::from_slice::<ListPage<UserInfo>>(data);
});
