//! The signed-in user: known fields typed, every other field kept; whatever parses serializes
//! and parses back to the same user.
#![no_main]

use libfuzzer_sys::fuzz_target;
use svc_model::UserInfo;

fuzz_target!(|data: &[u8]| {
    if let Ok(user) = serde_json::from_slice::<UserInfo>(data) {
        for known in [
            "uid",
            "username",
            "has_password",
            "email",
            "first_name",
            "last_name",
        ] {
            assert!(!user.other.contains_key(known), "{known} kept twice");
        }
        let text = serde_json::to_vec(&user).expect("a parsed user serializes");
        let again: UserInfo = serde_json::from_slice(&text).expect("and parses back");
        assert_eq!(again, user);
    }
});
