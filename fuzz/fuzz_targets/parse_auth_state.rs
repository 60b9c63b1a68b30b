//! Session tokens (`AuthState`) and their RFC 3339 expiry times: whatever parses round-trips,
//! and `Debug` never depends on the tokens.
#![no_main]

use libfuzzer_sys::fuzz_target;
use svc_model::Timestamp;
use svc_model::account::{AuthState, LoginResponse};

fuzz_target!(|data: &[u8]| {
    if let Ok(state) = serde_json::from_slice::<AuthState>(data) {
        let text = serde_json::to_string(&state).expect("a parsed state serializes");
        let again: AuthState = serde_json::from_str(&text).expect("and parses back");
        assert_eq!(again, state);
        let blank = AuthState {
            access_token: String::new(),
            refresh_token: String::new(),
            ..state.clone()
        };
        assert_eq!(
            format!("{state:?}"),
            format!("{blank:?}"),
            "Debug shows a token"
        );
        if let Some(earliest) = state.earliest_expiry() {
            for t in [state.access_token_expires, state.refresh_token_expires]
                .into_iter()
                .flatten()
            {
                assert!(earliest <= t);
            }
        }
    }
    let _ = serde_json::from_slice::<LoginResponse>(data);

    // Timestamps on their own: parse, format, parse again.
    if let Ok(text) = std::str::from_utf8(data)
        && let Ok(t) = Timestamp::parse_rfc3339(text)
    {
        let formatted = t.to_rfc3339();
        assert_eq!(Timestamp::parse_rfc3339(&formatted), Ok(t), "{formatted}");
        assert!((Timestamp::MIN..=Timestamp::MAX).contains(&t));
        if let Some(st) = t.to_system_time() {
            assert_eq!(Timestamp::from_system_time(st), t);
        }
    }
    if let Ok(t) = serde_json::from_slice::<Timestamp>(data) {
        let json = serde_json::to_string(&t).expect("serializes");
        assert_eq!(serde_json::from_str::<Timestamp>(&json).ok(), Some(t));
    }
});
