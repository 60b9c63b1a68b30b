//! Small shared utilities with no HTTP and no storage: timestamps (base64 is svc-engine's).

pub mod timestamp;
