//! Small shared utilities with no HTTP and no storage: base64 and timestamps.

pub(crate) mod base64;
pub(crate) mod timestamp;
