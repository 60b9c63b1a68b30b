//! How long the emulator's session tokens live.

use std::time::Duration;

/// Token lifetimes of the emulator's sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenLifetimes {
    /// Access tokens (default 5 minutes).
    pub access: Duration,
    /// Refresh tokens (default 7 days).
    pub refresh: Duration,
    /// Service tokens minted through the emulator route (default 1 day).
    pub service: Duration,
}

impl Default for TokenLifetimes {
    fn default() -> Self {
        Self {
            access: Duration::from_secs(300),
            refresh: Duration::from_secs(7 * 24 * 3600),
            service: Duration::from_secs(24 * 3600),
        }
    }
}
